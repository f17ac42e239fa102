static const char help[] = "Compares the Patchwork tensor-product MATSHELL (MatCreatePatchworkTensor) with an\n"
                           "independently assembled AIJ matrix of the same continuous Q_k discretization:\n"
                           "dim 2 and 3, degrees 1..8, Gauss and Gauss-Lobatto quadrature, Dirichlet and natural\n"
                           "boundary conditions, Helmholtz / pure mass / pure stiffness coefficients.\n"
                           "Options:\n"
                           "  -kmin <1>, -kmax <8>   range of degrees\n"
                           "  -dims <2,3>            dimensions to run\n"
                           "  -tol <1e-12>           relative tolerance\n"
                           "  -selftest_only         check the independent assembly only (no Patchwork operator)\n\n";

/* The reference matrix is assembled here from scratch, on purpose without any tensor-product
   (Kronecker / sum-factorization) structure:
     - 1D nodes: Gauss-Lobatto-Legendre points from PetscDTGaussLobattoLegendreQuadrature (Newton),
       mapped to each cell [a, a+h] as a + h (xi+1)/2;
     - 1D quadrature: PetscDTGaussQuadrature (k+1 Gauss points) or the same GLL rule (collocated);
     - element matrices: one loop over all (k+1)^d quadrature points of the cell; the basis is the
       product of 1D Lagrange polynomials (evaluated by their product formula here), gradients by the
       chain rule with the cell sizes h_d, weight = prod w * prod h_d/2;
     - assembly: DMCreateMatrix on the DMDA (box stencil of width k) and MatSetValuesStencil with
       ADD_VALUES over the cells owned by this rank (the rank that owns the cell's first node);
     - Dirichlet: MatZeroRowsColumnsStencil with diagonal 1 on the boundary nodes.
   The element matrices are checked against hard-coded Q1 values and against products of 1D
   matrices, and the assembled matrices against 1^T M 1 = |box|, K 1 = 0, u^T K u = |box| for u = x_0. */

#include <patchwork.h>
#include "compare.h" /* ErrMax(), PatchworkTestErrMaxAllreduce() */

#define MAXD 3

typedef struct {
  PetscInt  dim, k;
  PetscInt  cells[MAXD];
  PetscReal lower[MAXD], upper[MAXD];
  PetscBool unitbox; /* pass NULL lower/upper to PatchworkDMDACreateQk */
} Mesh;

/* ------------------------------------------------------------------------------------------ */
/* 1D Lagrange basis through nodes[0..n-1], value and derivative at t, by the product formula   */
static void LagrangeEval1D(PetscInt n, const PetscReal nodes[], PetscReal t, PetscReal phi[], PetscReal dphi[])
{
  for (PetscInt i = 0; i < n; i++) {
    PetscReal p = 1.0, dp = 0.0;
    for (PetscInt j = 0; j < n; j++) {
      if (j == i) continue;
      p *= (t - nodes[j]) / (nodes[i] - nodes[j]);
    }
    for (PetscInt m = 0; m < n; m++) {
      PetscReal term;
      if (m == i) continue;
      term = 1.0 / (nodes[i] - nodes[m]);
      for (PetscInt j = 0; j < n; j++) {
        if (j == i || j == m) continue;
        term *= (t - nodes[j]) / (nodes[i] - nodes[j]);
      }
      dp += term;
    }
    phi[i]  = p;
    dphi[i] = dp;
  }
}

/* GLL nodes on [-1,1] */
static PetscErrorCode GLLNodes(PetscInt n, PetscReal x[], PetscReal w[])
{
  PetscFunctionBeginUser;
  PetscCall(PetscDTGaussLobattoLegendreQuadrature(n, PETSCGAUSSLOBATTOLEGENDRE_VIA_NEWTON, x, w));
  PetscFunctionReturn(0);
}

/* n-point quadrature on [-1,1] */
static PetscErrorCode Quadrature1D(PatchworkTensorQuadrature quad, PetscInt n, PetscReal x[], PetscReal w[])
{
  PetscFunctionBeginUser;
  if (quad == PATCHWORK_QUADRATURE_GAUSS) PetscCall(PetscDTGaussQuadrature(n, -1.0, 1.0, x, w));
  else PetscCall(GLLNodes(n, x, w));
  PetscFunctionReturn(0);
}

/* Element mass and stiffness matrices (nb x nb, nb = (k+1)^dim, lexicographic with x fastest) of a
   cell with sizes h[], by a plain loop over all (k+1)^dim quadrature points. */
static PetscErrorCode ElementMatrices(PetscInt dim, PetscInt k, const PetscReal h[], PatchworkTensorQuadrature quad, PetscReal *Me, PetscReal *Ke)
{
  const PetscInt n = k + 1;
  PetscInt       nb = 1, nq = 1;
  PetscReal     *xn, *wn, *xq, *wq, *phi, *dphi, *B, *G, jac = 1.0;

  PetscFunctionBeginUser;
  for (PetscInt d = 0; d < dim; d++) {
    nb *= n;
    nq *= n;
    jac *= 0.5 * h[d];
  }
  PetscCall(PetscMalloc6(n, &xn, n, &wn, n, &xq, n, &wq, n * n, &phi, n * n, &dphi));
  PetscCall(PetscMalloc2(nb, &B, dim * nb, &G));
  PetscCall(GLLNodes(n, xn, wn));
  PetscCall(Quadrature1D(quad, n, xq, wq));
  for (PetscInt q = 0; q < n; q++) LagrangeEval1D(n, xn, xq[q], &phi[q * n], &dphi[q * n]);
  PetscCall(PetscArrayzero(Me, nb * nb));
  PetscCall(PetscArrayzero(Ke, nb * nb));
  for (PetscInt q = 0; q < nq; q++) {
    PetscInt  qi[MAXD] = {0, 0, 0}, r = q;
    PetscReal w = jac;

    for (PetscInt d = 0; d < dim; d++) {
      qi[d] = r % n;
      r /= n;
      w *= wq[qi[d]];
    }
    /* basis values and physical gradients at this quadrature point */
    for (PetscInt a = 0; a < nb; a++) {
      PetscInt ai[MAXD] = {0, 0, 0}, s = a;
      PetscReal v = 1.0;

      for (PetscInt d = 0; d < dim; d++) {
        ai[d] = s % n;
        s /= n;
        v *= phi[qi[d] * n + ai[d]];
      }
      B[a] = v;
      for (PetscInt d = 0; d < dim; d++) {
        PetscReal g = 2.0 / h[d];
        for (PetscInt e = 0; e < dim; e++) g *= (e == d) ? dphi[qi[e] * n + ai[e]] : phi[qi[e] * n + ai[e]];
        G[d * nb + a] = g;
      }
    }
    for (PetscInt a = 0; a < nb; a++) {
      const PetscReal wa = w * B[a];
      PetscReal       ga[MAXD] = {0, 0, 0};
      PetscReal      *mrow = &Me[a * nb], *krow = &Ke[a * nb];

      for (PetscInt d = 0; d < dim; d++) ga[d] = w * G[d * nb + a];
      for (PetscInt b = a; b < nb; b++) mrow[b] += wa * B[b];
      for (PetscInt d = 0; d < dim; d++) {
        const PetscReal *Gd = &G[d * nb];
        for (PetscInt b = a; b < nb; b++) krow[b] += ga[d] * Gd[b];
      }
    }
  }
  for (PetscInt a = 0; a < nb; a++)
    for (PetscInt b = 0; b < a; b++) {
      Me[a * nb + b] = Me[b * nb + a];
      Ke[a * nb + b] = Ke[b * nb + a];
    }
  PetscCall(PetscFree2(B, G));
  PetscCall(PetscFree6(xn, wn, xq, wq, phi, dphi));
  PetscFunctionReturn(0);
}

/* Test of the test: the element matrices must equal sums of products of 1D matrices (computed by
   a separate 1D quadrature loop). Returns the max relative deviation. */
static PetscErrorCode ElementCheckKronecker(PetscInt dim, PetscInt k, const PetscReal h[], PatchworkTensorQuadrature quad, const PetscReal *Me, const PetscReal *Ke, PetscReal *err)
{
  const PetscInt n = k + 1;
  PetscInt       nb = 1;
  PetscReal     *xn, *wn, *xq, *wq, *phi, *dphi, *M1, *K1, mmax = 0, kmax = 0, em = 0, ek = 0;

  PetscFunctionBeginUser;
  for (PetscInt d = 0; d < dim; d++) nb *= n;
  PetscCall(PetscMalloc6(n, &xn, n, &wn, n, &xq, n, &wq, n, &phi, n, &dphi));
  PetscCall(PetscCalloc2(MAXD * n * n, &M1, MAXD * n * n, &K1));
  PetscCall(GLLNodes(n, xn, wn));
  PetscCall(Quadrature1D(quad, n, xq, wq));
  for (PetscInt q = 0; q < n; q++) {
    LagrangeEval1D(n, xn, xq[q], phi, dphi);
    for (PetscInt d = 0; d < dim; d++)
      for (PetscInt i = 0; i < n; i++)
        for (PetscInt j = 0; j < n; j++) {
          M1[(d * n + i) * n + j] += wq[q] * 0.5 * h[d] * phi[i] * phi[j];
          K1[(d * n + i) * n + j] += wq[q] * (2.0 / h[d]) * dphi[i] * dphi[j];
        }
  }
  for (PetscInt a = 0; a < nb; a++)
    for (PetscInt b = 0; b < nb; b++) {
      PetscInt  ai[MAXD], bi[MAXD], s = a, t = b;
      PetscReal m = 1.0, kk = 0.0;
      for (PetscInt d = 0; d < dim; d++) {
        ai[d] = s % n;
        s /= n;
        bi[d] = t % n;
        t /= n;
        m *= M1[(d * n + ai[d]) * n + bi[d]];
      }
      for (PetscInt d = 0; d < dim; d++) {
        PetscReal p = 1.0;
        for (PetscInt e = 0; e < dim; e++) p *= (e == d) ? K1[(e * n + ai[e]) * n + bi[e]] : M1[(e * n + ai[e]) * n + bi[e]];
        kk += p;
      }
      mmax = ErrMax(mmax, PetscAbsReal(m));
      kmax = ErrMax(kmax, PetscAbsReal(kk));
      em   = ErrMax(em, PetscAbsReal(m - Me[a * nb + b]));
      ek   = ErrMax(ek, PetscAbsReal(kk - Ke[a * nb + b]));
    }
  *err = ErrMax(em / mmax, ek / kmax);
  PetscCall(PetscFree2(M1, K1));
  PetscCall(PetscFree6(xn, wn, xq, wq, phi, dphi));
  PetscFunctionReturn(0);
}

/* Hard-coded Q1 element matrices (unit square, Gauss quadrature), lexicographic (0,0),(1,0),(0,1),(1,1) */
static PetscErrorCode SelfTestQ1(PetscReal *err)
{
  const PetscReal Kref[16] = {4, -1, -1, -2, -1, 4, -2, -1, -1, -2, 4, -1, -2, -1, -1, 4}; /* /6 */
  const PetscReal Mref[16] = {4, 2, 2, 1, 2, 4, 1, 2, 2, 1, 4, 2, 1, 2, 2, 4};         /* /36 */
  const PetscReal h[3] = {1, 1, 1};
  PetscReal       Me[64], Ke[64], e = 0;

  PetscFunctionBeginUser;
  PetscCall(ElementMatrices(2, 1, h, PATCHWORK_QUADRATURE_GAUSS, Me, Ke));
  for (PetscInt i = 0; i < 16; i++) {
    e = ErrMax(e, PetscAbsReal(Ke[i] - Kref[i] / 6.0));
    e = ErrMax(e, PetscAbsReal(Me[i] - Mref[i] / 36.0));
  }
  /* GLL quadrature on Q1: lumped mass 1/4 on the diagonal; stiffness 1/2 on the diagonal */
  PetscCall(ElementMatrices(2, 1, h, PATCHWORK_QUADRATURE_GAUSSLOBATTO, Me, Ke));
  for (PetscInt i = 0; i < 4; i++)
    for (PetscInt j = 0; j < 4; j++) e = ErrMax(e, PetscAbsReal(Me[i * 4 + j] - (i == j ? 0.25 : 0.0)));
  for (PetscInt i = 0; i < 4; i++) e = ErrMax(e, PetscAbsReal(Ke[i * 4 + i] - 1.0));
  /* 3D Q1 on the unit cube: K_ii = 1/3, M_ii = 1/27, K_0,7 = -1/12, M_0,7 = 1/216 */
  PetscCall(ElementMatrices(3, 1, h, PATCHWORK_QUADRATURE_GAUSS, Me, Ke));
  for (PetscInt i = 0; i < 8; i++) {
    e = ErrMax(e, PetscAbsReal(Ke[i * 8 + i] - 1.0 / 3.0));
    e = ErrMax(e, PetscAbsReal(Me[i * 8 + i] - 1.0 / 27.0));
  }
  e    = ErrMax(e, PetscAbsReal(Ke[7] + 1.0 / 12.0));
  e    = ErrMax(e, PetscAbsReal(Me[7] - 1.0 / 216.0));
  *err = e;
  PetscFunctionReturn(0);
}

/* ------------------------------------------------------------------------------------------ */
static PetscReal MeshH(const Mesh *m, PetscInt d)
{
  return (m->upper[d] - m->lower[d]) / m->cells[d];
}

/* expected coordinate of node g in direction d */
static PetscReal NodeCoord(const Mesh *m, const PetscReal xi[], PetscInt d, PetscInt g)
{
  PetscInt c = g / m->k, l = g % m->k;
  if (c == m->cells[d]) {
    c -= 1;
    l = m->k;
  }
  return m->lower[d] + c * MeshH(m, d) + 0.5 * (xi[l] + 1.0) * MeshH(m, d);
}

static PetscErrorCode AssembleAIJ(DM dm, const Mesh *m, const PetscReal *Ee, Mat *A)
{
  const PetscInt k = m->k, n = k + 1;
  PetscInt       nb = 1, s[MAXD] = {0, 0, 0}, w[MAXD] = {1, 1, 1}, c0[MAXD] = {0, 0, 0}, c1[MAXD] = {1, 1, 1};
  MatStencil    *st;

  PetscFunctionBeginUser;
  for (PetscInt d = 0; d < m->dim; d++) nb *= n;
  PetscCall(DMCreateMatrix(dm, A));
  PetscCall(MatSetOption(*A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  PetscCall(DMDAGetCorners(dm, &s[0], &s[1], &s[2], &w[0], &w[1], &w[2]));
  /* a cell belongs to the rank owning its first node k*c */
  for (PetscInt d = 0; d < m->dim; d++) {
    c0[d] = (s[d] + k - 1) / k;
    c1[d] = PetscMin((s[d] + w[d] + k - 1) / k, m->cells[d]);
  }
  PetscCall(PetscMalloc1(nb, &st));
  for (PetscInt cz = c0[2]; cz < c1[2]; cz++)
    for (PetscInt cy = c0[1]; cy < c1[1]; cy++)
      for (PetscInt cx = c0[0]; cx < c1[0]; cx++) {
        for (PetscInt a = 0; a < nb; a++) {
          PetscInt ai = a % n, aj = (a / n) % n, ak = a / (n * n);
          st[a].i = cx * k + ai;
          st[a].j = cy * k + aj;
          st[a].k = (m->dim == 3) ? cz * k + ak : 0;
          st[a].c = 0;
        }
        PetscCall(MatSetValuesStencil(*A, nb, st, nb, st, Ee, ADD_VALUES));
      }
  PetscCall(PetscFree(st));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* the owned nodes on the boundary of the box */
static PetscErrorCode BoundaryStencils(DM dm, const Mesh *m, PetscInt *nbnd, MatStencil **bnd)
{
  PetscInt s[MAXD] = {0, 0, 0}, w[MAXD] = {1, 1, 1}, N[MAXD] = {1, 1, 1}, cnt = 0;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetCorners(dm, &s[0], &s[1], &s[2], &w[0], &w[1], &w[2]));
  for (PetscInt d = 0; d < m->dim; d++) N[d] = m->k * m->cells[d] + 1;
  PetscCall(PetscMalloc1(w[0] * w[1] * w[2], bnd));
  for (PetscInt kk = s[2]; kk < s[2] + w[2]; kk++)
    for (PetscInt j = s[1]; j < s[1] + w[1]; j++)
      for (PetscInt i = s[0]; i < s[0] + w[0]; i++) {
        PetscBool onb = (PetscBool)(i == 0 || i == N[0] - 1 || j == 0 || j == N[1] - 1);
        if (m->dim == 3) onb = (PetscBool)(onb || kk == 0 || kk == N[2] - 1);
        if (!onb) continue;
        (*bnd)[cnt].i   = i;
        (*bnd)[cnt].j   = j;
        (*bnd)[cnt].k   = kk;
        (*bnd)[cnt++].c = 0;
      }
  *nbnd = cnt;
  PetscFunctionReturn(0);
}

/* max |coordinate - expected| over the owned nodes (global max) */
static PetscErrorCode CheckCoordinates(DM dm, const Mesh *m, const PetscReal xi[], PetscReal *err)
{
  Vec                coords;
  DM                 cdm;
  PetscInt           s[MAXD] = {0, 0, 0}, w[MAXD] = {1, 1, 1};
  PetscReal          e = 0;
  const PetscScalar *arr;
  PetscInt           cnt = 0;

  PetscFunctionBeginUser;
  PetscCall(DMGetCoordinates(dm, &coords));
  if (!coords) {
    *err = PETSC_MAX_REAL;
    PetscFunctionReturn(0);
  }
  PetscCall(DMGetCoordinateDM(dm, &cdm));
  PetscCall(DMDAGetCorners(dm, &s[0], &s[1], &s[2], &w[0], &w[1], &w[2]));
  PetscCall(VecGetArrayRead(coords, &arr));
  /* owned nodes, x fastest, dof (= dim) interleaved */
  for (PetscInt kk = s[2]; kk < s[2] + w[2]; kk++)
    for (PetscInt j = s[1]; j < s[1] + w[1]; j++)
      for (PetscInt i = s[0]; i < s[0] + w[0]; i++) {
        const PetscInt g[MAXD] = {i, j, kk};
        for (PetscInt d = 0; d < m->dim; d++) e = ErrMax(e, PetscAbsReal(PetscRealPart(arr[cnt * m->dim + d]) - NodeCoord(m, xi, d, g[d])));
        cnt++;
      }
  PetscCall(VecRestoreArrayRead(coords, &arr));
  PetscCall(PatchworkTestErrMaxAllreduce(PetscObjectComm((PetscObject)dm), 1, &e));
  *err = e;
  PetscFunctionReturn(0);
}

/* Checks of the assembled natural-BC matrices: |1^T M 1 - V|/V, ||K 1||_inf / ||K||, |u^T K u - V|/V with u = x_0 */
static PetscErrorCode CheckAssembled(DM dm, const Mesh *m, const PetscReal xi[], Mat M, Mat K, PetscReal *err)
{
  Vec          one, u, y;
  PetscReal    vol = 1.0, e = 0, nrm, knrm;
  PetscScalar  val;
  PetscInt     s[MAXD] = {0, 0, 0}, w[MAXD] = {1, 1, 1}, cnt = 0;
  PetscScalar *arr;

  PetscFunctionBeginUser;
  for (PetscInt d = 0; d < m->dim; d++) vol *= m->upper[d] - m->lower[d];
  PetscCall(DMCreateGlobalVector(dm, &one));
  PetscCall(VecDuplicate(one, &u));
  PetscCall(VecDuplicate(one, &y));
  PetscCall(VecSet(one, 1.0));
  PetscCall(MatMult(M, one, y));
  PetscCall(VecDot(y, one, &val));
  e = ErrMax(e, PetscAbsReal(PetscRealPart(val) - vol) / vol);
  PetscCall(MatMult(K, one, y));
  PetscCall(VecNorm(y, NORM_INFINITY, &nrm));
  PetscCall(MatNorm(K, NORM_INFINITY, &knrm));
  e = ErrMax(e, nrm / knrm);
  PetscCall(DMDAGetCorners(dm, &s[0], &s[1], &s[2], &w[0], &w[1], &w[2]));
  PetscCall(VecGetArray(u, &arr));
  for (PetscInt kk = s[2]; kk < s[2] + w[2]; kk++)
    for (PetscInt j = s[1]; j < s[1] + w[1]; j++)
      for (PetscInt i = s[0]; i < s[0] + w[0]; i++) arr[cnt++] = NodeCoord(m, xi, 0, i);
  PetscCall(VecRestoreArray(u, &arr));
  PetscCall(MatMult(K, u, y));
  PetscCall(VecDot(y, u, &val));
  e = ErrMax(e, PetscAbsReal(PetscRealPart(val) - vol) / vol);
  PetscCall(VecDestroy(&one));
  PetscCall(VecDestroy(&u));
  PetscCall(VecDestroy(&y));
  *err = e;
  PetscFunctionReturn(0);
}

/* ||a - b||_inf / ||b||_inf */
static PetscErrorCode RelDiff(Vec a, Vec b, Vec work, PetscReal *r)
{
  PetscReal num, den;

  PetscFunctionBeginUser;
  PetscCall(VecWAXPY(work, -1.0, b, a));
  PetscCall(VecNorm(work, NORM_INFINITY, &num));
  PetscCall(VecNorm(b, NORM_INFINITY, &den));
  *r = den > 0 ? num / den : num;
  PetscFunctionReturn(0);
}

/* Compare the shell with the reference matrix; returns the max of all relative errors */
static PetscErrorCode CompareOperators(Mat S, Mat A, DM dm, PetscRandom rnd, PetscReal *errout, PetscReal errs[5])
{
  Vec       x, y, z, w, ys, ya, t, z0;
  PetscReal e;

  PetscFunctionBeginUser;
  for (PetscInt i = 0; i < 5; i++) errs[i] = 0;
  PetscCall(DMCreateGlobalVector(dm, &x));
  PetscCall(VecDuplicate(x, &y));
  PetscCall(VecDuplicate(x, &z));
  PetscCall(VecDuplicate(x, &w));
  PetscCall(VecDuplicate(x, &ys));
  PetscCall(VecDuplicate(x, &ya));
  PetscCall(VecDuplicate(x, &t));
  PetscCall(VecDuplicate(x, &z0));
  for (PetscInt r = 0; r < 3; r++) {
    PetscScalar d1, d2;
    PetscReal   nx, nay;

    PetscCall(VecSetRandom(x, rnd));
    PetscCall(VecSetRandom(y, rnd));
    PetscCall(VecSetRandom(z, rnd));
    /* [0] MatMult */
    PetscCall(MatMult(S, x, ys));
    PetscCall(MatMult(A, x, ya));
    PetscCall(RelDiff(ys, ya, t, &e));
    errs[0] = ErrMax(errs[0], e);
    /* [2] symmetry: |y^T S x - x^T S y| / (||x|| ||S y||) */
    PetscCall(VecDot(y, ys, &d1));
    PetscCall(MatMult(S, y, w));
    PetscCall(VecDot(x, w, &d2));
    PetscCall(VecNorm(x, NORM_2, &nx));
    PetscCall(VecNorm(w, NORM_2, &nay));
    errs[2] = ErrMax(errs[2], PetscAbsScalar(d1 - d2) / (nx * nay));
    /* [3] MatMultTranspose == MatMult */
    PetscCall(MatMultTranspose(S, x, w));
    PetscCall(RelDiff(w, ys, t, &e));
    errs[3] = ErrMax(errs[3], e);
    /* [4] MatMultAdd(S,x,z,w) == z + S x, then in place (w == z); same for MatMultTransposeAdd */
    PetscCall(VecWAXPY(ya, 1.0, z, ys)); /* ya = z + S x */
    PetscCall(VecSet(w, -7.0));
    PetscCall(MatMultAdd(S, x, z, w));
    PetscCall(RelDiff(w, ya, t, &e));
    errs[4] = ErrMax(errs[4], e);
    PetscCall(VecCopy(z, z0));
    PetscCall(MatMultAdd(S, x, z, z));
    PetscCall(RelDiff(z, ya, t, &e));
    errs[4] = ErrMax(errs[4], e);
    PetscCall(VecCopy(z0, z));
    /* MatMultTransposeAdd, out of place and in place */
    PetscCall(VecSet(w, -7.0));
    PetscCall(MatMultTransposeAdd(S, x, z, w));
    PetscCall(RelDiff(w, ya, t, &e));
    errs[4] = ErrMax(errs[4], e);
    PetscCall(MatMultTransposeAdd(S, x, z, z));
    PetscCall(RelDiff(z, ya, t, &e));
    errs[4] = ErrMax(errs[4], e);
    PetscCall(VecCopy(z0, z));
  }
  /* [1] diagonal: max_i |dS_i - dA_i| / |dA_i| */
  PetscCall(MatGetDiagonal(S, ys));
  PetscCall(MatGetDiagonal(A, ya));
  {
    const PetscScalar *a, *b;
    PetscInt           nloc;
    PetscReal          dmax = 0, e1 = 0;

    PetscCall(VecNorm(ya, NORM_INFINITY, &dmax));
    PetscCall(VecGetLocalSize(ys, &nloc));
    PetscCall(VecGetArrayRead(ys, &a));
    PetscCall(VecGetArrayRead(ya, &b));
    for (PetscInt i = 0; i < nloc; i++) e1 = ErrMax(e1, PetscAbsScalar(a[i] - b[i]) / ErrMax(PetscAbsScalar(b[i]), 1e-300 + 1e-14 * dmax));
    PetscCall(VecRestoreArrayRead(ys, &a));
    PetscCall(VecRestoreArrayRead(ya, &b));
    PetscCall(PatchworkTestErrMaxAllreduce(PetscObjectComm((PetscObject)dm), 1, &e1));
    errs[1] = e1;
  }
  *errout = 0;
  for (PetscInt i = 0; i < 5; i++) *errout = ErrMax(*errout, errs[i]);
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&w));
  PetscCall(VecDestroy(&ys));
  PetscCall(VecDestroy(&ya));
  PetscCall(VecDestroy(&t));
  PetscCall(VecDestroy(&z0));
  PetscFunctionReturn(0);
}

/* Predict whether DMDA's default (PETSC_DECIDE) process grid gives every rank >= s nodes per split
   direction; mirrors the partition rule of DMSetUp_DA_2D/3D. */
static PetscBool SplitOK(PetscInt dim, const PetscInt N[], PetscMPIInt size, PetscInt s)
{
  PetscInt p[MAXD] = {1, 1, 1};

  if (dim == 2) {
    PetscInt m = (PetscInt)(0.5 + PetscSqrtReal(((PetscReal)N[0]) * size / N[1])), n = 1;
    if (!m) m = 1;
    while (m > 0) {
      n = size / m;
      if (m * n == size) break;
      m--;
    }
    if (N[0] > N[1] && m < n) {
      PetscInt t = m;
      m          = n;
      n          = t;
    }
    p[0] = m;
    p[1] = n;
  } else {
    PetscInt m, n, q = 1, pm;
    n = (PetscInt)(0.5 + PetscPowReal(((PetscReal)N[1] * N[1]) * size / ((PetscReal)N[2] * N[0]), 1. / 3.));
    if (!n) n = 1;
    while (n > 0) {
      pm = size / n;
      if (n * pm == size) break;
      n--;
    }
    if (!n) n = 1;
    m = (PetscInt)(0.5 + PetscSqrtReal(((PetscReal)N[0]) * size / ((PetscReal)N[2] * n)));
    if (!m) m = 1;
    while (m > 0) {
      q = size / (m * n);
      if (m * n * q == size) break;
      m--;
    }
    if (N[0] > N[2] && m < q) {
      PetscInt t = m;
      m          = q;
      q          = t;
    }
    p[0] = m;
    p[1] = n;
    p[2] = q;
  }
  for (PetscInt d = 0; d < dim; d++)
    if (p[d] > 1 && N[d] / p[d] < s) return PETSC_FALSE;
  return PETSC_TRUE;
}

typedef struct {
  PetscInt ncases, nfail, nskip;
} Tally;

static PetscErrorCode RunMesh(const Mesh *m, PetscRandom rnd, PetscReal tol, PetscBool selftest_only, Tally *tally)
{
  const MPI_Comm                  comm = PETSC_COMM_WORLD;
  const PatchworkTensorQuadrature quads[2] = {PATCHWORK_QUADRATURE_GAUSS, PATCHWORK_QUADRATURE_GAUSSLOBATTO};
  const char                     *qname[2] = {"gauss", "gausslobatto"};
  const PatchworkTensorBC         bcs[2]   = {PATCHWORK_BC_DIRICHLET, PATCHWORK_BC_NATURAL};
  const char                     *bname[2] = {"dirichlet", "natural"};
  const PetscReal                 coef[3][2] = {
    {0.7, 1.3},
    {1.0, 0.0},
    {0.0, 1.0}
  };
  const PetscInt k = m->k, n = k + 1;
  PetscInt       nb = 1, N[MAXD] = {1, 1, 1}, nbnd = 0;
  PetscReal      h[MAXD] = {1, 1, 1}, *Me, *Ke, *xi, *wi, cerr = 0;
  PetscMPIInt    size;
  char           desc[256];
  DM             dm;
  MatStencil    *bnd;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  for (PetscInt d = 0; d < m->dim; d++) {
    nb *= n;
    N[d] = k * m->cells[d] + 1;
    h[d] = MeshH(m, d);
  }
  if (m->dim == 2)
    PetscCall(PetscSNPrintf(desc, sizeof(desc), "dim=2 k=%" PetscInt_FMT " cells=%" PetscInt_FMT "x%" PetscInt_FMT " box=[%g,%g]x[%g,%g]", k, m->cells[0], m->cells[1], (double)m->lower[0], (double)m->upper[0], (double)m->lower[1], (double)m->upper[1]));
  else
    PetscCall(PetscSNPrintf(desc, sizeof(desc), "dim=3 k=%" PetscInt_FMT " cells=%" PetscInt_FMT "x%" PetscInt_FMT "x%" PetscInt_FMT " box=[%g,%g]x[%g,%g]x[%g,%g]", k, m->cells[0], m->cells[1], m->cells[2], (double)m->lower[0], (double)m->upper[0], (double)m->lower[1], (double)m->upper[1], (double)m->lower[2],
                            (double)m->upper[2]));
  if (!SplitOK(m->dim, N, size, k)) {
    PetscCall(PetscPrintf(comm, "skip %s: the default DMDA split over %d ranks leaves fewer than k nodes on a rank\n", desc, size));
    tally->nskip += 2 * 2 * 3;
    PetscFunctionReturn(0);
  }
  PetscCall(PetscMalloc2(n, &xi, n, &wi));
  PetscCall(GLLNodes(n, xi, wi));
  if (selftest_only) {
    PetscCall(DMDACreate3d(comm, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, N[0], N[1], N[2], PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, 1, k, NULL, NULL, NULL, &dm));
    if (m->dim == 2) {
      PetscCall(DMDestroy(&dm));
      PetscCall(DMDACreate2d(comm, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, N[0], N[1], PETSC_DECIDE, PETSC_DECIDE, 1, k, NULL, NULL, &dm));
    }
    PetscCall(DMSetUp(dm));
  } else {
    PetscCall(PatchworkDMDACreateQk(comm, m->dim, k, m->cells, m->unitbox ? NULL : m->lower, m->unitbox ? NULL : m->upper, &dm));
    PetscCall(CheckCoordinates(dm, m, xi, &cerr));
  }
  PetscCall(BoundaryStencils(dm, m, &nbnd, &bnd));
  PetscCall(PetscMalloc2(nb * nb, &Me, nb * nb, &Ke));
  for (PetscInt iq = 0; iq < 2; iq++) {
    Mat       Ma, Ka;
    PetscReal kerr = 0, aerr = 0;

    PetscCall(ElementMatrices(m->dim, k, h, quads[iq], Me, Ke));
    PetscCall(ElementCheckKronecker(m->dim, k, h, quads[iq], Me, Ke, &kerr));
    PetscCall(AssembleAIJ(dm, m, Me, &Ma));
    PetscCall(AssembleAIJ(dm, m, Ke, &Ka));
    PetscCall(CheckAssembled(dm, m, xi, Ma, Ka, &aerr));
    if (selftest_only || !(kerr <= 1e-12 && aerr <= 1e-11 && cerr <= 1e-13)) { /* a NaN is bad */
      PetscBool bad = (PetscBool)!(kerr <= 1e-12 && aerr <= 1e-11 && cerr <= 1e-13);
      PetscCall(PetscPrintf(comm, "%s %s quad=%s reference: kron=%.1e assembled=%.1e coords=%.1e\n", bad ? "FAIL" : "ok", desc, qname[iq], (double)kerr, (double)aerr, (double)cerr));
      tally->ncases++;
      if (bad) tally->nfail++;
      if (bad || selftest_only) {
        PetscCall(MatDestroy(&Ma));
        PetscCall(MatDestroy(&Ka));
        continue;
      }
    }
    for (PetscInt ib = 0; ib < 2; ib++)
      for (PetscInt ic = 0; ic < 3; ic++) {
        const PetscReal alpha = coef[ic][0], beta = coef[ic][1];
        Mat             A, S;
        PetscReal       err = 0, errs[5];
        PetscBool       ok;

        PetscCall(MatDuplicate(Ka, MAT_COPY_VALUES, &A));
        PetscCall(MatScale(A, beta));
        PetscCall(MatAXPY(A, alpha, Ma, SAME_NONZERO_PATTERN));
        if (bcs[ib] == PATCHWORK_BC_DIRICHLET) PetscCall(MatZeroRowsColumnsStencil(A, nbnd, bnd, 1.0, NULL, NULL));

        PetscCall(MatCreatePatchworkTensor(dm, k, &S));
        PetscCall(MatPatchworkTensorSetCoefficients(S, alpha, beta));
        PetscCall(MatPatchworkTensorSetQuadrature(S, quads[iq]));
        PetscCall(MatPatchworkTensorSetBC(S, bcs[ib]));
        PetscCall(CompareOperators(S, A, dm, rnd, &err, errs));
        ok = (PetscBool)(err <= tol);
        tally->ncases++;
        if (!ok) tally->nfail++;
        PetscCall(PetscPrintf(comm, "%s %s quad=%s bc=%s alpha=%g beta=%g err=%.1e", ok ? "ok" : "FAIL", desc, qname[iq], bname[ib], (double)alpha, (double)beta, (double)err));
        if (!ok) PetscCall(PetscPrintf(comm, " (mult=%.1e diag=%.1e sym=%.1e multT=%.1e multadd=%.1e)", (double)errs[0], (double)errs[1], (double)errs[2], (double)errs[3], (double)errs[4]));
        PetscCall(PetscPrintf(comm, "\n"));
        PetscCall(MatDestroy(&S));
        PetscCall(MatDestroy(&A));
      }
    PetscCall(MatDestroy(&Ma));
    PetscCall(MatDestroy(&Ka));
  }
  PetscCall(PetscFree2(Me, Ke));
  PetscCall(PetscFree(bnd));
  PetscCall(PetscFree2(xi, wi));
  PetscCall(DMDestroy(&dm));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscInt    kmin = 1, kmax = 8, dims[2] = {2, 3}, ndims = 2;
  PetscReal   tol = 1e-12, q1err = 0;
  PetscBool   selftest_only = PETSC_FALSE;
  PetscRandom rnd;
  Tally       tally = {0, 0, 0};

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-kmin", &kmin, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-kmax", &kmax, NULL));
  {
    PetscInt  got[2], nget = 2;
    PetscBool set;
    PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-dims", got, &nget, &set));
    if (set) {
      ndims = nget;
      for (PetscInt i = 0; i < nget; i++) dims[i] = got[i];
    }
  }
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol", &tol, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-selftest_only", &selftest_only, NULL));
  if (!selftest_only) PetscCall(PatchworkInitializePackage());

  PetscCall(SelfTestQ1(&q1err));
  tally.ncases++;
  if (!(q1err <= 1e-14)) tally.nfail++;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s reference Q1 element matrices err=%.1e\n", q1err <= 1e-14 ? "ok" : "FAIL", (double)q1err));

  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetType(rnd, PETSCRAND48));
  PetscCall(PetscRandomSetInterval(rnd, -1.0, 1.0));
  PetscCall(PetscRandomSetSeed(rnd, 20240611));
  PetscCall(PetscRandomSeed(rnd));

  for (PetscInt id = 0; id < ndims; id++) {
    const PetscInt dim = dims[id];
    /* unit box with equal cells, then a box with different cell counts and lengths per direction;
       the cell counts let the default DMDA split over 1, 2 and 4 ranks give each rank >= k nodes */
    Mesh meshes[2];
    PetscCheck(dim == 2 || dim == 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-dims takes 2 and/or 3, not %" PetscInt_FMT, dim);
    if (dim == 2) {
      meshes[0] = (Mesh){2, 0, {4, 4, 1}, {0, 0, 0}, {1, 1, 1}, PETSC_TRUE};
      meshes[1] = (Mesh){2, 0, {3, 5, 1}, {-0.5, 0, 0}, {1, 2, 1}, PETSC_FALSE};
    } else {
      meshes[0] = (Mesh){3, 0, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}, PETSC_TRUE};
      meshes[1] = (Mesh){3, 0, {2, 3, 2}, {0, 0, -1}, {1, 2, 0.5}, PETSC_FALSE};
    }
    for (PetscInt im = 0; im < 2; im++)
      for (PetscInt k = kmin; k <= kmax; k++) {
        Mesh m = meshes[im];
        m.k    = k;
        PetscCall(RunMesh(&m, rnd, tol, selftest_only, &tally));
      }
  }
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "test_tensor_aij: %" PetscInt_FMT " cases, %" PetscInt_FMT " failed", tally.ncases, tally.nfail));
  if (tally.nskip) PetscCall(PetscPrintf(PETSC_COMM_WORLD, ", %" PetscInt_FMT " skipped", tally.nskip));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n"));
  PetscCall(PetscFinalize());
  return tally.nfail ? 1 : 0;
}
