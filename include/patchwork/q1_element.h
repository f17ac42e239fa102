/* The matrix of one Q1 element, alpha*M + beta*K, through its multilinear map from [0,1]^dim, with
   2 points per direction: Gauss (exact for mass and stiffness when the element is a box) or
   Gauss-Lobatto, i.e. the vertices (lumped mass; on a box the stiffness couples only neighbours
   along an axis: the finite-difference stencil, whose LOR preconditioner is the better one). Used by the
   CPU reference and the CUDA kernels of the LOR assembly alike, hence header-only and host/device.
   Vertices and rows are lexicographic, x fastest: vertex a = (az*2 + ay)*2 + ax. */
#ifndef PATCHWORK_Q1_ELEMENT_H
#define PATCHWORK_Q1_ELEMENT_H

#include <math.h>

#include <patchwork/host_device.h>

/* The vertex rule in closed form. At vertex q, phi_a(q) = delta_aq and only phi_q and the dim
   neighbours one edge away (q ^ 2^j) have a nonzero reference gradient there: s_j e_j and -s_j e_j,
   s_j = +1 when bit j of q is 1, else -1. So J's column j is s_j (x_q - x_{q^2^j}), and with
   u_j = s_j (row j of J^{-1}) the physical gradients are -u_j for the neighbours and sum_j u_j for
   phi_q: the point adds w (beta M_jl) among the neighbours, -w beta sum_j M_jl between q and
   neighbour l, and w (beta sum_jl M_jl + alpha) to (q,q), M_jl = u_j . u_l, w = |det J| / 2^dim.
   The values of the loop over the points below (up to rounding), with about a tenth of its operations
   and one division per point instead of dim^2. */
PW_HOST_DEVICE void PatchworkQ1ElementMatrixVertex(int dim, const double *xv, double alpha, double beta, const double *r, const double *c, double *Ke)
{
  const int    nv = 1 << dim;
  const double wq = dim == 3 ? 0.125 : 0.25;

  PW_UNROLL
  for (int i = 0; i < nv * nv; i++) Ke[i] = 0;
  PW_UNROLL
  for (int q = 0; q < nv; q++) {
    double J[3][3], u[3][3], M[3][3], rs[3], tot = 0, det, inv;
    int    nb[3];

    PW_UNROLL
    for (int j = 0; j < dim; j++) {
      const double s = (q >> j) & 1 ? 1.0 : -1.0;
      nb[j]          = q ^ (1 << j);
      PW_UNROLL
      for (int i = 0; i < dim; i++) J[i][j] = s * (xv[q * dim + i] - xv[nb[j] * dim + i]);
    }
    if (dim == 2) {
      det = J[0][0] * J[1][1] - J[0][1] * J[1][0];
      inv = 1.0 / det;
      /* row j of J^{-1} times s_j */
      u[0][0] = J[1][1] * inv;
      u[0][1] = -J[0][1] * inv;
      u[1][0] = -J[1][0] * inv;
      u[1][1] = J[0][0] * inv;
    } else {
      det = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) - J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) + J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
      inv = 1.0 / det;
      PW_UNROLL
      for (int j = 0; j < 3; j++)
        PW_UNROLL
        for (int i = 0; i < 3; i++) {
          /* (J^{-1})[j][i] = cofactor of J[i][j] / det */
          const int r0 = (i + 1) % 3, r1 = (i + 2) % 3, c0 = (j + 1) % 3, c1 = (j + 2) % 3;
          u[j][i] = (J[r0][c0] * J[r1][c1] - J[r0][c1] * J[r1][c0]) * inv;
        }
    }
    PW_UNROLL
    for (int j = 0; j < dim; j++) {
      const double s = (q >> j) & 1 ? 1.0 : -1.0;
      PW_UNROLL
      for (int i = 0; i < dim; i++) u[j][i] *= s;
    }
    const double w = wq * fabs(det), bq = w * beta * (c ? c[q] : 1.0), aq = w * alpha * (r ? r[q] : 1.0);
    PW_UNROLL
    for (int j = 0; j < dim; j++) {
      rs[j] = 0;
      PW_UNROLL
      for (int l = 0; l < dim; l++) {
        M[j][l] = 0;
        PW_UNROLL
        for (int i = 0; i < dim; i++) M[j][l] += u[j][i] * u[l][i];
        M[j][l] *= bq;
        rs[j] += M[j][l];
      }
      tot += rs[j];
    }
    PW_UNROLL
    for (int j = 0; j < dim; j++) {
      PW_UNROLL
      for (int l = 0; l < dim; l++) Ke[nb[j] * nv + nb[l]] += M[j][l];
      Ke[q * nv + nb[j]] -= rs[j];
      Ke[nb[j] * nv + q] -= rs[j];
    }
    Ke[q * nv + q] += tot + aq;
  }
}

/* The loop over the 2^dim points of either rule (the Gauss rule's implementation; for the vertex rule
   the closed form above, which test_q1_element compares with it).
   xv: 2^dim vertices, dim coordinates each (interleaved); vertex: nonzero for the Gauss-Lobatto rule;
   r, c: NULL, or the reaction and diffusion coefficients at the 2^dim vertices, which multiply alpha
   and beta and are interpolated multilinearly to the quadrature points (a variable coefficient's
   LOR matrix); Ke: 2^dim x 2^dim, row major, assigned */
PW_HOST_DEVICE void PatchworkQ1ElementMatrixPoints(int dim, const double *xv, double alpha, double beta, const double *r, const double *c, int vertex, double *Ke)
{
  const int    nv = 1 << dim;
  const double g0 = vertex ? 0.0 : 0.5 - 0.5 / sqrt(3.0), gp[2] = {g0, 1.0 - g0};
  const double wq = dim == 3 ? 0.125 : 0.25; /* product of the 1D weights 1/2 */

  for (int i = 0; i < nv * nv; i++) Ke[i] = 0;
  for (int q = 0; q < nv; q++) {
    double xi[3], phi[8], dphi[8][3], J[3][3] = {{0}}, G[3][3], det;
    for (int d = 0; d < dim; d++) xi[d] = gp[(q >> d) & 1];
    for (int a = 0; a < nv; a++) {
      phi[a] = 1;
      for (int d = 0; d < dim; d++) phi[a] *= (a >> d) & 1 ? xi[d] : 1 - xi[d];
      for (int d = 0; d < dim; d++) {
        double v = (a >> d) & 1 ? 1.0 : -1.0;
        for (int e = 0; e < dim; e++)
          if (e != d) v *= (a >> e) & 1 ? xi[e] : 1 - xi[e];
        dphi[a][d] = v;
      }
      for (int i = 0; i < dim; i++)
        for (int j = 0; j < dim; j++) J[i][j] += xv[a * dim + i] * dphi[a][j];
    }
    /* G = J^{-1}: the reference gradient of phi maps to the physical one as G^T dphi */
    if (dim == 2) {
      det     = J[0][0] * J[1][1] - J[0][1] * J[1][0];
      G[0][0] = J[1][1] / det;
      G[0][1] = -J[0][1] / det;
      G[1][0] = -J[1][0] / det;
      G[1][1] = J[0][0] / det;
    } else {
      det = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) - J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) + J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
          /* cofactor of J[j][i], divided by det */
          const int r0 = (j + 1) % 3, r1 = (j + 2) % 3, c0 = (i + 1) % 3, c1 = (i + 2) % 3;
          G[i][j] = (J[r0][c0] * J[r1][c1] - J[r0][c1] * J[r1][c0]) / det;
        }
    }
    const double wdet = wq * fabs(det);
    double       grad[8][3];
    for (int a = 0; a < nv; a++)
      for (int i = 0; i < dim; i++) {
        grad[a][i] = 0;
        for (int j = 0; j < dim; j++) grad[a][i] += G[j][i] * dphi[a][j];
      }
    double aq = alpha, bq = beta;
    if (r) {
      double v = 0;
      for (int a = 0; a < nv; a++) v += phi[a] * r[a];
      aq *= v;
    }
    if (c) {
      double v = 0;
      for (int a = 0; a < nv; a++) v += phi[a] * c[a];
      bq *= v;
    }
    for (int a = 0; a < nv; a++)
      for (int b = 0; b < nv; b++) {
        double gg = 0;
        for (int i = 0; i < dim; i++) gg += grad[a][i] * grad[b][i];
        Ke[a * nv + b] += wdet * (aq * phi[a] * phi[b] + bq * gg);
      }
  }
}

/* The element matrix (arguments as above): the closed form for the vertex rule, the loop for Gauss */
PW_HOST_DEVICE void PatchworkQ1ElementMatrixCoef(int dim, const double *xv, double alpha, double beta, const double *r, const double *c, int vertex, double *Ke)
{
  if (vertex) PatchworkQ1ElementMatrixVertex(dim, xv, alpha, beta, r, c, Ke);
  else PatchworkQ1ElementMatrixPoints(dim, xv, alpha, beta, r, c, 0, Ke);
}

/* Constant coefficients */
PW_HOST_DEVICE void PatchworkQ1ElementMatrixRule(int dim, const double *xv, double alpha, double beta, int vertex, double *Ke)
{
  PatchworkQ1ElementMatrixCoef(dim, xv, alpha, beta, (const double *)0, (const double *)0, vertex, Ke);
}

/* Gauss points */
PW_HOST_DEVICE void PatchworkQ1ElementMatrix(int dim, const double *xv, double alpha, double beta, double *Ke)
{
  PatchworkQ1ElementMatrixRule(dim, xv, alpha, beta, 0, Ke);
}

#endif
