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

/* xv: 2^dim vertices, dim coordinates each (interleaved); vertex: nonzero for the Gauss-Lobatto rule;
   r, c: NULL, or the reaction and diffusion coefficients at the 2^dim vertices, which multiply alpha
   and beta and are interpolated multilinearly to the quadrature points (a variable coefficient's
   LOR matrix); Ke: 2^dim x 2^dim, row major, assigned */
PW_HOST_DEVICE void PatchworkQ1ElementMatrixCoef(int dim, const double *xv, double alpha, double beta, const double *r, const double *c, int vertex, double *Ke)
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
