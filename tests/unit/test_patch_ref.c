/* Unit test of the vertex-patch smoother's CPU reference (src/core/fdm.c, src/core/patch_ref.c):
   (a) the generalized eigensolver and the 1D patch data,
   (b) the fast-diagonalization inverse against the dense patch matrix A_I,
   (c) the fused smoother and the solve against a brute force (dense element matrices over the whole
       grid for the residual, a dense inverse of A_I, patches visited one by one),
   (d) one patch covering all unknowns solves A x = b in one step,
   (e) the float smoother against the double one,
   (f) a multiplicative sweep over all colors reduces the energy norm of the error,
   (g) the residual (first half of the "separate" smoother) against the global residual from the
       tensor apply, and only patch interiors written,
   (h) residual + solve reproduces the fused smoother,
   (i) the float residual, solve and smoother against the double ones, node by node within derived
       rounding bounds (the worst err/bound ratios are printed at the end).
   PETSc-free. Prints one line per check and returns 1 if any check failed; --quick runs fewer
   degrees (for valgrind). */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <patchwork/basis1d.h>
#include <patchwork/patch_kernel.h>
#include "unittest.h"

#define NI_MAX PW_PATCH_MAX_NI

static int IPow(int b, int e)
{
  int p = 1;

  while (e-- > 0) p *= b;
  return p;
}

/* ---------------------------------------------------------------------------------------------
   Dense helpers, written without the kernels' index helpers */

/* C = A (x) B, A na x na, B nb x nb: C[ia nb + ib][ja nb + jb] = A[ia][ja] B[ib][jb] */
static void Kron(int na, const double *A, int nb, const double *B, double *C)
{
  const int nc = na * nb;

  for (int ia = 0; ia < na; ia++)
    for (int ib = 0; ib < nb; ib++)
      for (int ja = 0; ja < na; ja++)
        for (int jb = 0; jb < nb; jb++) C[(ia * nb + ib) * nc + ja * nb + jb] = A[ia * na + ja] * B[ib * nb + jb];
}

/* E = cm M(x)..(x)M + sum_d cs[d] (K in slot d, slot 0 = x fastest), the n^d x n^d Kronecker sum;
   with absval every entry and coefficient is replaced by its absolute value (rounding scales). */
static void KronSum(int dim, int n, const double *M, const double *K, double cm, const double *cs, int absval, double *E)
{
  const long nt = dim == 2 ? n * n : n * n * n;
  double    *t1 = Malloc(sizeof(double) * nt * nt), *t2 = Malloc(sizeof(double) * nt * nt);
  double    *Ma = Malloc(sizeof(double) * n * n), *Ka = Malloc(sizeof(double) * n * n);

  for (int q = 0; q < n * n; q++) {
    Ma[q] = absval ? fabs(M[q]) : M[q];
    Ka[q] = absval ? fabs(K[q]) : K[q];
  }
  memset(E, 0, sizeof(double) * nt * nt);
  for (int term = -1; term < dim; term++) {
    const double *F[3] = {Ma, Ma, Ma};
    const double  c    = term < 0 ? cm : cs[term];
    double       *P    = t1;

    if (term >= 0) F[term] = Ka;
    Kron(n, F[1], n, F[0], t1);
    if (dim == 3) {
      Kron(n, F[2], n * n, t1, t2);
      P = t2;
    }
    for (long q = 0; q < nt * nt; q++) E[q] += (absval ? fabs(c) : c) * P[q];
  }
  free(t1);
  free(t2);
  free(Ma);
  free(Ka);
}

/* Cholesky factor A = C C^T (C lower, row major); nonzero if A is not SPD */
static int CholeskyFactor(long n, const double *A, double *C)
{
  for (long j = 0; j < n; j++) {
    double s = A[j * n + j];

    for (long p = 0; p < j; p++) s -= C[j * n + p] * C[j * n + p];
    if (!(s > 0)) return 1;
    C[j * n + j] = sqrt(s);
    for (long i = j + 1; i < n; i++) {
      double t = A[i * n + j];

      for (long p = 0; p < j; p++) t -= C[i * n + p] * C[j * n + p];
      C[i * n + j] = t / C[j * n + j];
    }
  }
  return 0;
}

/* x = A^{-1} b from the factor (forward and back substitution: backward stable, unlike a product
   with an explicit inverse, so that the brute force's residual is as small as a solver's can be) */
static void CholeskySolve(long n, const double *C, const double *b, double *x)
{
  for (long i = 0; i < n; i++) {
    double s = b[i];

    for (long p = 0; p < i; p++) s -= C[i * n + p] * x[p];
    x[i] = s / C[i * n + i];
  }
  for (long i = n - 1; i >= 0; i--) {
    double s = x[i];

    for (long p = i + 1; p < n; p++) s -= C[p * n + i] * x[p];
    x[i] = s / C[i * n + i];
  }
}

static double NormInf(long m, long n, const double *A)
{
  double r = 0.0;

  for (long i = 0; i < m; i++) {
    double s = 0.0;

    for (long j = 0; j < n; j++) s += fabs(A[i * n + j]);
    r = ErrMax(r, s);
  }
  return r;
}

/* The two-cell patch matrices from the cell matrices, written as "entry (a,b) sums the cells
   containing both nodes": Pfull (2k+1)^2, its interior block (2k-1)^2 */
static void PatchMatrices(int k, const double *cell, double *Pfull, double *PI)
{
  const int n = k + 1, np = 2 * k + 1, ni = 2 * k - 1;

  for (int a = 0; a < np; a++)
    for (int b = 0; b < np; b++) {
      double s = 0.0;

      for (int c = 0; c < 2; c++)
        if (a >= c * k && a <= c * k + k && b >= c * k && b <= c * k + k) s += cell[(a - c * k) * n + b - c * k];
      Pfull[a * np + b] = s;
    }
  for (int a = 0; a < ni; a++)
    for (int b = 0; b < ni; b++) PI[a * ni + b] = Pfull[(a + 1) * np + b + 1];
}

/* ---------------------------------------------------------------------------------------------
   (a) The generalized eigensolver */

/*
  With M = L L^T (Cholesky, backward error (n+1) eps |L||L^T|), S = L^{-T} Q and Q from Jacobi
  (orthogonal to ~ sweeps n eps):
    |S^T M S - I| <~ (n+1) eps |S|^T |L||L^T| |S| <= (n+1) eps trace(M) ||S||_F^2   (>= n, so the
    Jacobi term is covered too), and column j of K S - M S Lam is bounded by
    (n+1) eps (||K||_F + |lam_j| ||M||_F) ||s_j||_2, which also covers the Jacobi residual mapped back
    by L (||L|| lam_max <= lam_max ||M|| ||s_max|| since s^T M s = 1). Factor 8 for the sweeps.
*/
static void CheckEigenPairs(int *fails, int n, const double *K, const double *M, const double *S, const double *lam, const char *what)
{
  double eo = 0.0, er = 0.0, tr = 0.0, sf = 0.0, nk = 0.0, nm = 0.0, rs = 0.0;
  int    order = 0;

  for (int i = 0; i < n; i++) tr += M[i * n + i];
  for (int q = 0; q < n * n; q++) {
    sf += S[q] * S[q];
    nk += K[q] * K[q];
    nm += M[q] * M[q];
  }
  nk = sqrt(nk);
  nm = sqrt(nm);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double o = 0.0;

      for (int p = 0; p < n; p++)
        for (int q = 0; q < n; q++) o += S[p * n + i] * M[p * n + q] * S[q * n + j];
      eo = ErrMax(eo, fabs(o - (i == j)));
    }
  for (int j = 0; j < n; j++) {
    double cn = 0.0;

    for (int i = 0; i < n; i++) {
      double r = 0.0;

      for (int p = 0; p < n; p++) r += (K[i * n + p] - lam[j] * M[i * n + p]) * S[p * n + j];
      er = ErrMax(er, fabs(r));
      cn += S[i * n + j] * S[i * n + j];
    }
    rs = ErrMax(rs, (nk + fabs(lam[j]) * nm) * sqrt(cn));
    if (j > 0 && !(lam[j] >= lam[j - 1])) order++;
  }
  Check(fails, eo, 8.0 * (n + 1) * DBL_EPSILON * tr * sf, "eigen %-28s n=%2d S^T M S = I", what, n);
  Check(fails, er, 8.0 * (n + 1) * DBL_EPSILON * rs, "eigen %-28s n=%2d K S = M S Lam", what, n);
  Check(fails, order, 0, "eigen %-28s n=%2d eigenvalues ascending", what, n);
}

static void CheckEigen(int *fails, int n, const double *K, const double *M, const char *what)
{
  double S[NI_MAX * NI_MAX], lam[NI_MAX];
  int    rc = PatchworkGeneralizedEigen(n, K, M, S, lam);

  Check(fails, rc, 0, "eigen %-28s n=%2d returns 0", what, n);
  if (!rc) CheckEigenPairs(fails, n, K, M, S, lam, what);
}

static void TestEigen(int *fails, int kmax, uint64_t *seed)
{
  double K[NI_MAX * NI_MAX], M[NI_MAX * NI_MAX], G[NI_MAX * NI_MAX], H[NI_MAX * NI_MAX], S[NI_MAX * NI_MAX], lam[NI_MAX];

  /* random pairs: M = G G^T + n/10 I (SPD, condition ~ 10^2), K = H H^T/n + diag spread over 4 decades */
  for (int n = 1; n <= NI_MAX; n++) {
    for (int q = 0; q < n * n; q++) {
      G[q] = 2 * Rand(seed) - 1;
      H[q] = 2 * Rand(seed) - 1;
    }
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        double m = 0.0, k = 0.0;

        for (int p = 0; p < n; p++) {
          m += G[i * n + p] * G[j * n + p];
          k += H[i * n + p] * H[j * n + p];
        }
        M[i * n + j] = m + (i == j ? 0.1 * n : 0.0);
        K[i * n + j] = k / n + (i == j ? pow(10.0, 4.0 * i / n) : 0.0);
      }
    CheckEigen(fails, n, K, M, "random SPD pair");
  }
  /* the 1D patch matrices, and PatchworkPatchSetUp1D against an independent assembly */
  for (int k = 1; k <= kmax; k++)
    for (int quad = 0; quad < 2; quad++) {
      const int          ni = 2 * k - 1, np = 2 * k + 1;
      PatchworkPatchDesc d;
      double             Pm[PW_PATCH_MAX_N * PW_PATCH_MAX_N], Ps[PW_PATCH_MAX_N * PW_PATCH_MAX_N], MI[NI_MAX * NI_MAX], KI[NI_MAX * NI_MAX], e = 0.0;
      char               what[64];
      int                rc;

      memset(&d, 0, sizeof(d));
      d.op.degree = k;
      PatchworkTensor1DMatrices(k, (PatchworkQuadrature)quad, d.op.mass1d, d.op.stiff1d);
      PatchMatrices(k, d.op.mass1d, Pm, MI);
      PatchMatrices(k, d.op.stiff1d, Ps, KI);
      snprintf(what, sizeof(what), "patch k=%d %s", k, quad ? "gll" : "gauss");
      CheckEigen(fails, ni, KI, MI, what);
      rc = PatchworkPatchSetUp1D(&d);
      for (int i = 0; i < ni; i++)
        for (int j = 0; j < np; j++) e = ErrMax(e, ErrMax(fabs(d.patch_mass[i * np + j] - Pm[(i + 1) * np + j]), fabs(d.patch_stiff[i * np + j] - Ps[(i + 1) * np + j])));
      /* sums of at most two terms: exact in any order */
      Check(fails, e + rc, 0, "setup %-28s patch_mass/patch_stiff = interior rows of the assembled patch", what);
      /* setup solves the centrosymmetric parts of K_I, M_I on the even and odd subspaces: the same
         bounds against the assembled matrices, and every column exactly symmetric or antisymmetric
         (k symmetric, k-1 antisymmetric: the CUDA kernels' even-odd split relies on it) */
      snprintf(what, sizeof(what), "setup k=%d %s", k, quad ? "gll" : "gauss");
      CheckEigenPairs(fails, ni, KI, MI, d.eigvec, d.eigval, what);
      {
        int nsym = 0, nanti = 0, nbad = 0;

        for (int m = 0; m < ni; m++) {
          int sym = 1, anti = 1;

          for (int i = 0; i < ni; i++) {
            sym &= d.eigvec[i * ni + m] == d.eigvec[(ni - 1 - i) * ni + m];
            anti &= d.eigvec[i * ni + m] == -d.eigvec[(ni - 1 - i) * ni + m];
          }
          nsym += sym;
          nanti += anti && !sym;
          nbad += !sym && !anti;
        }
        Check(fails, nbad + abs(nsym - k) + abs(nanti - (k - 1)), 0, "eigen %-28s S: %d symmetric, %d antisymmetric columns, exactly", what, nsym, nanti);
      }
    }
  /* an indefinite M is refused, as is a bad degree */
  M[0] = 1.0, M[1] = 2.0, M[2] = 2.0, M[3] = 1.0;
  K[0] = 1.0, K[1] = 0.0, K[2] = 0.0, K[3] = 1.0;
  {
    PatchworkPatchDesc d;

    memset(&d, 0, sizeof(d));
    d.op.degree = PW_MAX_DEGREE + 1;
    Check(fails, !PatchworkGeneralizedEigen(2, K, M, S, lam) + !PatchworkPatchSetUp1D(&d), 0, "eigen refuses an indefinite M, setup a bad degree");
  }
}

/* ---------------------------------------------------------------------------------------------
   A level: grid, descriptor and the brute-force operator */

typedef struct {
  int     dim, k, n, ni, nd, nid; /* n = k+1, ni = 2k-1, nd = n^dim, nid = ni^dim */
  int     ncell[3], nodes[3], dirichlet;
  long    nn;                     /* global node count */
  double *E, *Ea;                 /* dense element matrix and its |.| version, nd x nd */
  double *AI, *AIchol;            /* dense patch interior matrix and its Cholesky factor, nid x nid */
  double  nAI, nA;                /* infinity norms of A_I and of the global operator */
} Level;

/* chol: also the Cholesky factor of A_I (the brute force of (c)-(e)) */
static void LevelCreate(int dim, int k, int quad, const int ncell[3], int dirichlet, int chol, uint64_t *seed, Level *L, PatchworkPatchDesc *d)
{
  double Pf[PW_PATCH_MAX_N * PW_PATCH_MAX_N], MI[NI_MAX * NI_MAX], KI[NI_MAX * NI_MAX];

  memset(L, 0, sizeof(*L));
  memset(d, 0, sizeof(*d));
  L->dim = d->op.dim = dim;
  L->k = d->op.degree = k;
  L->n                = k + 1;
  L->ni               = 2 * k - 1;
  L->nd               = IPow(L->n, dim);
  L->nid              = IPow(L->ni, dim);
  L->dirichlet = d->op.dirichlet = dirichlet;
  L->nn                          = 1;
  for (int dir = 0; dir < 3; dir++) {
    L->ncell[dir] = dir < dim ? ncell[dir] : 1;
    L->nodes[dir] = d->op.nodes[dir] = dir < dim ? k * ncell[dir] + 1 : 1;
    d->op.cell_end[dir]                = L->ncell[dir];
    d->op.in_size[dir] = d->op.out_size[dir] = L->nodes[dir];
    d->vertex_start[dir]                     = dir < dim ? 1 : 0;
    d->vertex_end[dir]                       = dir < dim ? ncell[dir] : 1;
    L->nn *= L->nodes[dir];
  }
  PatchworkTensor1DMatrices(k, (PatchworkQuadrature)quad, d->op.mass1d, d->op.stiff1d);
  /* cell aspect ratios up to 10: stiffness coefficients spread over two decades */
  d->op.coef_mass = 0.5 + Rand(seed);
  for (int dir = 0; dir < 3; dir++) d->op.coef_stiff[dir] = dir < dim ? (0.5 + Rand(seed)) * pow(10.0, 2 * Rand(seed) - 1) : 0.0;
  d->omega = 1.0;
  if (PatchworkPatchSetUp1D(d)) {
    fprintf(stderr, "FAIL PatchworkPatchSetUp1D\n");
    exit(1);
  }
  L->E  = Malloc(sizeof(double) * L->nd * L->nd);
  L->Ea = Malloc(sizeof(double) * L->nd * L->nd);
  KronSum(dim, L->n, d->op.mass1d, d->op.stiff1d, d->op.coef_mass, d->op.coef_stiff, 0, L->E);
  KronSum(dim, L->n, d->op.mass1d, d->op.stiff1d, d->op.coef_mass, d->op.coef_stiff, 1, L->Ea);
  PatchMatrices(k, d->op.mass1d, Pf, MI);
  PatchMatrices(k, d->op.stiff1d, Pf, KI);
  L->AI = Malloc(sizeof(double) * L->nid * L->nid);
  KronSum(dim, L->ni, MI, KI, d->op.coef_mass, d->op.coef_stiff, 0, L->AI);
  L->nAI = NormInf(L->nid, L->nid, L->AI);
  if (chol) {
    L->AIchol = Malloc(sizeof(double) * L->nid * L->nid);
    if (CholeskyFactor(L->nid, L->AI, L->AIchol)) {
      fprintf(stderr, "FAIL A_I is not SPD\n");
      exit(1);
    }
  }
  /* ||A||_inf of the global operator: the row sums of |E| summed over the <= 2^d cells of a node */
  L->nA = (1 << dim) * NormInf(L->nd, L->nd, L->Ea);
}

static void LevelDestroy(Level *L)
{
  free(L->E);
  free(L->Ea);
  free(L->AI);
  free(L->AIchol);
}

static long GIndex(const Level *L, int gx, int gy, int gz)
{
  return ((long)gz * L->nodes[1] + gy) * L->nodes[0] + gx;
}

static int IsBoundary(const Level *L, int gx, int gy, int gz)
{
  const int c[3] = {gx, gy, gz};

  for (int d = 0; d < L->dim; d++)
    if (c[d] == 0 || c[d] == L->nodes[d] - 1) return 1;
  return 0;
}

/* y += A x over all cells from the dense element matrix; Dirichlet nodes read as 0, rows not written */
static void BruteApply(const Level *L, const double *E, const double *x, double *y)
{
  const int n = L->n, nz = L->dim == 3 ? n : 1, nt = L->nd;
  long      idx[PW_MAX_N * PW_MAX_N * PW_MAX_N];
  double    u[PW_MAX_N * PW_MAX_N * PW_MAX_N];

  for (int ez = 0; ez < L->ncell[2]; ez++)
    for (int ey = 0; ey < L->ncell[1]; ey++)
      for (int ex = 0; ex < L->ncell[0]; ex++) {
        for (int l = 0; l < nz; l++)
          for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
              const int gx = L->k * ex + i, gy = L->k * ey + j, gz = L->k * ez + l, q = (l * n + j) * n + i;

              idx[q] = L->dirichlet && IsBoundary(L, gx, gy, gz) ? -1 : GIndex(L, gx, gy, gz);
              u[q]   = idx[q] < 0 ? 0.0 : x[idx[q]];
            }
        for (int r = 0; r < nt; r++) {
          double s = 0.0;

          if (idx[r] < 0) continue;
          for (int c = 0; c < nt; c++) s += E[r * nt + c] * u[c];
          y[idx[r]] += s;
        }
      }
}

/* Global indices of the interior nodes of the patch of vertex v, x fastest (the order of A_I) */
static void PatchInterior(const Level *L, const int v[3], long *idx)
{
  const int m = L->ni, mz = L->dim == 3 ? m : 1;
  int       q = 0;

  for (int l = 0; l < mz; l++)
    for (int j = 0; j < m; j++)
      for (int i = 0; i < m; i++)
        idx[q++] = GIndex(L, L->k * (v[0] - 1) + 1 + i, L->k * (v[1] - 1) + 1 + j, L->dim == 3 ? L->k * (v[2] - 1) + 1 + l : 0);
}

/*
  Brute-force smoother on global arrays: for every vertex of the color in [vs, ve), one at a time,
  r = (b - A src) at the patch interior (solve: r = b there), y(interior) += omega A_I^{-1} r (dense
  Cholesky), with
  src = y itself (in place: the residual is recomputed after every patch, a true multiplicative
  sweep) or the fixed x. Returns max |r| over the patches.
*/
static double BruteSmooth(const Level *L, int solve, int color, const int vs[3], const int ve[3], double omega, const double *x, const double *b, double *y, int inplace)
{
  long   *idx = Malloc(sizeof(long) * L->nid);
  double *ag = Malloc(sizeof(double) * L->nn), *r = Malloc(sizeof(double) * L->nid), *t = Malloc(sizeof(double) * L->nid), rmax = 0.0;
  int     v[3], have = 0;

  for (v[2] = vs[2]; v[2] < ve[2]; v[2]++)
    for (v[1] = vs[1]; v[1] < ve[1]; v[1]++)
      for (v[0] = vs[0]; v[0] < ve[0]; v[0]++) {
        int skip = 0;

        for (int dir = 0; dir < L->dim; dir++)
          if (v[dir] % 2 != ((color >> dir) & 1)) skip = 1;
        if (skip) continue;
        PatchInterior(L, v, idx);
        if (!solve && (inplace || !have)) {
          memset(ag, 0, sizeof(double) * L->nn);
          BruteApply(L, L->E, inplace ? y : x, ag);
          have = 1;
        }
        for (int q = 0; q < L->nid; q++) {
          r[q] = solve ? b[idx[q]] : b[idx[q]] - ag[idx[q]];
          rmax = ErrMax(rmax, fabs(r[q]));
        }
        CholeskySolve(L->nid, L->AIchol, r, t);
        for (int q = 0; q < L->nid; q++) y[idx[q]] += omega * t[q];
      }
  free(idx);
  free(ag);
  free(r);
  free(t);
  return rmax;
}

static void BoxFromGlobal(const Level *L, const int start[3], const int size[3], const double *g, double *b)
{
  long q = 0;

  for (int z = 0; z < size[2]; z++)
    for (int y = 0; y < size[1]; y++)
      for (int x = 0; x < size[0]; x++) b[q++] = g[GIndex(L, start[0] + x, start[1] + y, start[2] + z)];
}

static long BoxCount(const int size[3])
{
  return (long)size[0] * size[1] * size[2];
}

/*
  Tolerances. A patch correction t solves A_I t = r with r = b - A x; A_I is well conditioned only
  for low degrees, so t is compared in the residual space, where the bounds carry no condition
  number: a backward-stable solve leaves ||A_I t - r|| <= C m eps (||A_I|| ||t|| + ||r||) with
  m = ni^d (LAPACK's solver tests accept C = 30 on this ratio, and so do we), and forming r costs
  mr eps (|b| + |A||x|), mr = 2^d n^d + 2 (2^d cells of n^d products, dense or factored). The fast
  diagonalization is checked against that bound (it is not backward stable in theory; in practice
  it is well inside). Two corrections computed from the same data differ, mapped by A_I, by at most
  the sum of their two bounds.
*/
#define PW_LAPACK_C 30.0

static double SolveTol(const Level *L, double eps, double tmax, double rmax)
{
  return PW_LAPACK_C * L->nid * eps * (L->nAI * tmax + rmax);
}

static double ResidualTol(const Level *L, double eps, double bmax, double xmax)
{
  return ((1 << L->dim) * L->nd + 2) * eps * (bmax + L->nA * xmax);
}

/* ---------------------------------------------------------------------------------------------
   (b) FD inverse = A_I^{-1}; (d) one step solves the one-patch problem */

/* One patch on a 2x2(x2)-cell Dirichlet grid: its interior is every unknown */
static void TestOnePatch(int *fails, int dim, int k, int quad, uint64_t *seed)
{
  const int          nc[3] = {2, 2, 2}, v[3] = {1, 1, dim == 3 ? 1 : 0};
  const char        *qn    = quad ? "gll" : "gauss";
  PatchworkPatchDesc d;
  Level              L;
  long               idx[NI_MAX * NI_MAX * NI_MAX], nbad = 0;
  double            *r, *y, *x, *b, *ax, *ay, err = 0.0, tol, tmax = 0.0, rmax = 0.0, bmax = 0.0, xmax = 0.0, ymax = 0.0;

  LevelCreate(dim, k, quad, nc, 1, 0, seed, &L, &d);
  d.color = (1 << dim) - 1;
  r       = Malloc(sizeof(double) * L.nn);
  y       = Malloc(sizeof(double) * L.nn);
  x       = Malloc(sizeof(double) * L.nn);
  b       = Malloc(sizeof(double) * L.nn);
  ax      = Malloc(sizeof(double) * L.nn);
  ay      = Malloc(sizeof(double) * L.nn);

  /* (b) t = PatchworkPatchSolveRef(r); A_I t = r with the dense Kronecker sum A_I */
  for (long i = 0; i < L.nn; i++) r[i] = 2 * Rand(seed) - 1;
  PatchworkPatchSolveRef(&d, r, y);
  PatchInterior(&L, v, idx);
  for (int q = 0; q < L.nid; q++) {
    double s = 0.0;

    for (int p = 0; p < L.nid; p++) s += L.AI[(long)q * L.nid + p] * y[idx[p]];
    err  = ErrMax(err, fabs(s - r[idx[q]]));
    tmax = ErrMax(tmax, fabs(y[idx[q]]));
    rmax = ErrMax(rmax, fabs(r[idx[q]]));
  }
  Check(fails, err, SolveTol(&L, DBL_EPSILON, tmax, rmax), "patch %dD k=%2d %-5s solve: A_I (FD inverse r) = r", dim, k, qn);

  /* (d) y = smooth(x, b), x and b random (boundary entries too: they must be ignored): b - A y = 0
     at every unknown, within the solve's bound plus the rounding of the residuals b - A x (in the
     kernel) and b - A y (here) */
  for (long i = 0; i < L.nn; i++) {
    x[i] = 2 * Rand(seed) - 1;
    b[i] = 2 * Rand(seed) - 1;
  }
  memcpy(y, x, sizeof(double) * L.nn);
  PatchworkPatchSmoothRef(&d, x, b, y);
  BruteApply(&L, L.E, x, ax);
  BruteApply(&L, L.E, y, ay);
  err  = 0.0;
  tmax = rmax = 0.0;
  for (long i = 0; i < L.nn; i++) {
    int gx = i % L.nodes[0], gy = (i / L.nodes[0]) % L.nodes[1], gz = i / ((long)L.nodes[0] * L.nodes[1]);

    if (IsBoundary(&L, gx, gy, gz)) {
      nbad += y[i] != x[i]; /* global-boundary entries must stay untouched */
      continue;
    }
    err  = ErrMax(err, fabs(b[i] - ay[i]));
    rmax = ErrMax(rmax, fabs(b[i] - ax[i]));
    tmax = ErrMax(tmax, fabs(y[i] - x[i]));
    bmax = ErrMax(bmax, fabs(b[i]));
    xmax = ErrMax(xmax, fabs(x[i]));
    ymax = ErrMax(ymax, fabs(y[i]));
  }
  tol = SolveTol(&L, DBL_EPSILON, tmax, rmax) + ResidualTol(&L, DBL_EPSILON, bmax, xmax) + ResidualTol(&L, DBL_EPSILON, bmax, ymax);
  Check(fails, err, tol, "patch %dD k=%2d %-5s one patch, dirichlet: one smoothing step solves A x = b", dim, k, qn);
  Check(fails, nbad, 0, "patch %dD k=%2d %-5s one patch, dirichlet: global-boundary entries of y untouched", dim, k, qn);
  free(r);
  free(y);
  free(x);
  free(b);
  free(ax);
  free(ay);
  LevelDestroy(&L);
}

/* ---------------------------------------------------------------------------------------------
   (c) smoother and solve against the brute force; (e) float against double */

typedef struct {
  const char *name;
  int         ncell[3];
  int         vs[3], ve[3];   /* vertex range */
  int         in_lo[3], in_hi[3], out_lo[3], out_hi[3]; /* extra nodes around the patches' closure / interior (clipped) */
} Case;

/* Boxes for the case: the in box holds the closures of all patches in the vertex range, the out box
   their interiors, each widened by the case's margins and clipped to the grid */
static void SetBoxes(const Level *L, const Case *c, PatchworkPatchDesc *d)
{
  for (int dir = 0; dir < 3; dir++) {
    if (dir < L->dim) {
      int lo = L->k * (c->vs[dir] - 1), hi = L->k * c->ve[dir];
      int a = lo - c->in_lo[dir], bb = hi + c->in_hi[dir], o1 = lo + 1 - c->out_lo[dir], o2 = hi - 1 + c->out_hi[dir];

      a  = a < 0 ? 0 : a;
      o1 = o1 < 0 ? 0 : o1;
      bb = bb > L->nodes[dir] - 1 ? L->nodes[dir] - 1 : bb;
      o2 = o2 > L->nodes[dir] - 1 ? L->nodes[dir] - 1 : o2;
      d->vertex_start[dir] = c->vs[dir];
      d->vertex_end[dir]   = c->ve[dir];
      d->op.in_start[dir]  = a;
      d->op.in_size[dir]   = bb - a + 1;
      d->op.out_start[dir] = o1;
      d->op.out_size[dir]  = o2 - o1 + 1;
    } else {
      d->vertex_start[dir] = 0;
      d->vertex_end[dir]   = 1;
      d->op.in_start[dir] = d->op.out_start[dir] = 0;
      d->op.in_size[dir] = d->op.out_size[dir] = 1;
    }
  }
}

/* g (global) = before everywhere, then the box array b over its box (a kernel's output) */
static void GlobalFromBox(const Level *L, const int start[3], const int size[3], const double *before, const double *b, double *g)
{
  long q = 0;

  memcpy(g, before, sizeof(double) * L->nn);
  for (int z = 0; z < size[2]; z++)
    for (int y = 0; y < size[1]; y++)
      for (int x = 0; x < size[0]; x++) g[GIndex(L, start[0] + x, start[1] + y, start[2] + z)] = b[q++];
}

/* Compare two results ya, yb that both started from 'before': max over the patches of the color of
   ||A_I (ya - yb)/omega|| on the patch interior; max |yb - before|/omega there (tmax); and the
   number of nodes outside every patch interior where ya differs from 'before' at all (nbad) */
static double CompareCorrections(const Level *L, int color, const int vs[3], const int ve[3], double omega, const double *before, const double *ya, const double *yb, double *tmax, long *nbad)
{
  long   *idx = Malloc(sizeof(long) * L->nid);
  char   *in  = Malloc(L->nn);
  double *dd = Malloc(sizeof(double) * L->nid), err = 0.0;
  int     v[3];

  *tmax = 0.0;
  *nbad = 0;
  for (v[2] = vs[2]; v[2] < ve[2]; v[2]++)
    for (v[1] = vs[1]; v[1] < ve[1]; v[1]++)
      for (v[0] = vs[0]; v[0] < ve[0]; v[0]++) {
        int skip = 0;

        for (int dir = 0; dir < L->dim; dir++)
          if (v[dir] % 2 != ((color >> dir) & 1)) skip = 1;
        if (skip) continue;
        PatchInterior(L, v, idx);
        for (int q = 0; q < L->nid; q++) {
          dd[q]       = (ya[idx[q]] - yb[idx[q]]) / omega;
          *tmax       = ErrMax(*tmax, fabs(yb[idx[q]] - before[idx[q]]) / omega);
          in[idx[q]] = 1;
        }
        for (int q = 0; q < L->nid; q++) {
          double s = 0.0;

          for (int p = 0; p < L->nid; p++) s += L->AI[(long)q * L->nid + p] * dd[p];
          err = ErrMax(err, fabs(s));
        }
      }
  for (long i = 0; i < L->nn; i++) *nbad += !in[i] && ya[i] != before[i];
  free(idx);
  free(in);
  free(dd);
  return err;
}

/* variant: 0 smooth out of place (omega 0.8), 1 smooth in place, 2 solve (out of place) */
static void TestBrute(int *fails, int dim, int k, int quad, const Case *c, int dirichlet, uint64_t *seed)
{
  static const char *vname[] = {"smooth", "smooth in-place", "solve"};
  const char        *qn      = quad ? "gll" : "gauss";
  PatchworkPatchDesc d;
  Level              L;
  long               nin, nout, nmax;
  double            *xg, *bg, *y0, *yb, *yk, *yfg, *xin, *bin, *yout, *ybox;
  float             *xf, *bf, *yf;

  LevelCreate(dim, k, quad, c->ncell, dirichlet, 1, seed, &L, &d);
  SetBoxes(&L, c, &d);
  nin  = BoxCount(d.op.in_size);
  nout = BoxCount(d.op.out_size);
  nmax = nin > nout ? nin : nout;
  xg   = Malloc(sizeof(double) * L.nn);
  bg   = Malloc(sizeof(double) * L.nn);
  y0   = Malloc(sizeof(double) * L.nn);
  yb   = Malloc(sizeof(double) * L.nn);
  yk   = Malloc(sizeof(double) * L.nn);
  yfg  = Malloc(sizeof(double) * L.nn);
  xin  = Malloc(sizeof(double) * nin);
  bin  = Malloc(sizeof(double) * nin);
  yout = Malloc(sizeof(double) * nmax);
  ybox = Malloc(sizeof(double) * nmax);
  xf   = Malloc(sizeof(float) * nin);
  bf   = Malloc(sizeof(float) * nin);
  yf   = Malloc(sizeof(float) * nmax);
  for (int variant = 0; variant < 3; variant++) {
    for (int color = 0; color < (1 << dim); color++) {
      const int     inplace = variant == 1, solve = variant == 2;
      const double *before  = inplace ? xg : y0;
      double        err, rmax, xmax, bmax, ymax, tmax, tol;
      long          nbox, nbad;

      /* inputs rounded to float so that (e) sees the same data */
      for (long i = 0; i < L.nn; i++) {
        xg[i] = (float)(2 * Rand(seed) - 1);
        bg[i] = (float)(2 * Rand(seed) - 1);
        y0[i] = (float)(2 * Rand(seed) - 1);
      }
      d.color = color;
      d.omega = variant == 0 ? 0.8 : 1.0;
      SetBoxes(&L, c, &d);
      if (inplace) /* one array: the out box is the in box */
        for (int dir = 0; dir < 3; dir++) {
          d.op.out_start[dir] = d.op.in_start[dir];
          d.op.out_size[dir]  = d.op.in_size[dir];
        }
      nbox = BoxCount(d.op.out_size);
      BoxFromGlobal(&L, d.op.in_start, d.op.in_size, xg, xin);
      BoxFromGlobal(&L, d.op.in_start, d.op.in_size, bg, bin);
      BoxFromGlobal(&L, d.op.out_start, d.op.out_size, before, ybox);

      /* brute force on the global arrays */
      memcpy(yb, before, sizeof(double) * L.nn);
      rmax = BruteSmooth(&L, solve, color, c->vs, c->ve, d.omega, inplace ? yb : xg, bg, yb, inplace);

      /* kernel on the boxes */
      memcpy(yout, ybox, sizeof(double) * nbox);
      if (solve) PatchworkPatchSolveRef(&d, bin, yout);
      else if (inplace) PatchworkPatchSmoothRef(&d, yout, bin, yout);
      else PatchworkPatchSmoothRef(&d, xin, bin, yout);
      GlobalFromBox(&L, d.op.out_start, d.op.out_size, before, yout, yk);

      err  = CompareCorrections(&L, color, c->vs, c->ve, d.omega, before, yk, yb, &tmax, &nbad);
      xmax = solve ? 0.0 : ErrMax(MaxAbs(L.nn, xg), MaxAbs(L.nn, yb));
      bmax = MaxAbs(L.nn, bg);
      ymax = ErrMax(MaxAbs(L.nn, before), MaxAbs(L.nn, yb));
      /* both solves, both residuals, and the rounding of y - before (eps |y| each, mapped by A_I) */
      tol = 2.0 * (SolveTol(&L, DBL_EPSILON, tmax, rmax) + ResidualTol(&L, DBL_EPSILON, bmax, xmax)) + 4.0 * DBL_EPSILON * L.nAI * ymax / d.omega;
      Check(fails, err, tol, "patch %dD k=%2d %-5s %-6s dirichlet=%d color=%d %-15s vs brute force, A_I-weighted", dim, k, qn, c->name, dirichlet, color, vname[variant]);
      Check(fails, nbad, 0, "patch %dD k=%2d %-5s %-6s dirichlet=%d color=%d %-15s only patch interiors written", dim, k, qn, c->name, dirichlet, color, vname[variant]);
      if (solve) continue;

      /* (e) the same inputs in float against the double kernel: the same bounds in float eps (the
         float rounding of the 1D data and coefficients is a relative perturbation of A of the
         same order, covered by the residual term) */
      for (long i = 0; i < nin; i++) {
        xf[i] = (float)xin[i];
        bf[i] = (float)bin[i];
      }
      for (long i = 0; i < nbox; i++) yf[i] = (float)ybox[i];
      if (inplace) PatchworkPatchSmoothRefFloat(&d, yf, bf, yf);
      else PatchworkPatchSmoothRefFloat(&d, xf, bf, yf);
      for (long i = 0; i < nbox; i++) yout[i] = yf[i];
      GlobalFromBox(&L, d.op.out_start, d.op.out_size, before, yout, yfg);
      err = CompareCorrections(&L, color, c->vs, c->ve, d.omega, before, yfg, yk, &tmax, &nbad);
      tol = SolveTol(&L, FLT_EPSILON, tmax, rmax) + ResidualTol(&L, FLT_EPSILON, bmax, xmax) + 4.0 * FLT_EPSILON * L.nAI * ymax / d.omega;
      Check(fails, err, tol, "patch %dD k=%2d %-5s %-6s dirichlet=%d color=%d %-15s float vs double, A_I-weighted", dim, k, qn, c->name, dirichlet, color, vname[variant]);
      Check(fails, nbad, 0, "patch %dD k=%2d %-5s %-6s dirichlet=%d color=%d %-15s float: only patch interiors written", dim, k, qn, c->name, dirichlet, color, vname[variant]);
    }
  }
  free(xg);
  free(bg);
  free(y0);
  free(yb);
  free(yk);
  free(yfg);
  free(xin);
  free(bin);
  free(yout);
  free(ybox);
  free(xf);
  free(bf);
  free(yf);
  LevelDestroy(&L);
}

/* ---------------------------------------------------------------------------------------------
   (f) A multiplicative sweep over all colors reduces ||e||_A: every patch correction is the
   A-orthogonal projection of the error onto the patch's subspace, so ||e||_A never grows, and it
   shrinks for a random error. Checked: ratio after/before <= 0.99 (measured well below). */

static double EnergyNorm(const Level *L, const double *e)
{
  double *ae = Malloc(sizeof(double) * L->nn), s = 0.0;

  memset(ae, 0, sizeof(double) * L->nn);
  BruteApply(L, L->E, e, ae);
  for (long i = 0; i < L->nn; i++) s += e[i] * ae[i];
  free(ae);
  return sqrt(ErrMax(s, 0.0));
}

static void TestSweep(int *fails, int dim, int k, int dirichlet, uint64_t *seed)
{
  const int          nc[3] = {4, 4, 4};
  PatchworkPatchDesc d;
  Level              L;
  double            *xs, *b, *x, *e, before, after;

  LevelCreate(dim, k, PW_QUAD_GAUSS, nc, dirichlet, 0, seed, &L, &d);
  xs = Malloc(sizeof(double) * L.nn);
  b  = Malloc(sizeof(double) * L.nn);
  x  = Malloc(sizeof(double) * L.nn);
  e  = Malloc(sizeof(double) * L.nn);
  for (long i = 0; i < L.nn; i++) xs[i] = 2 * Rand(seed) - 1;
  for (long i = 0; i < L.nn; i++) {
    int gx = i % L.nodes[0], gy = (i / L.nodes[0]) % L.nodes[1], gz = i / ((long)L.nodes[0] * L.nodes[1]);

    if (dirichlet && IsBoundary(&L, gx, gy, gz)) xs[i] = 0.0;
  }
  memset(b, 0, sizeof(double) * L.nn);
  BruteApply(&L, L.E, xs, b);
  /* start from the exact solution plus noise on the patch-covered nodes: with dirichlet=0 the
     boundary nodes are not smoothed, so the error lives where the smoother acts */
  for (long i = 0; i < L.nn; i++) {
    int gx = i % L.nodes[0], gy = (i / L.nodes[0]) % L.nodes[1], gz = i / ((long)L.nodes[0] * L.nodes[1]);

    x[i] = xs[i] + (IsBoundary(&L, gx, gy, gz) ? 0.0 : 2 * Rand(seed) - 1);
    e[i] = x[i] - xs[i];
  }
  before = EnergyNorm(&L, e);
  for (int color = 0; color < (1 << dim); color++) {
    d.color = color;
    PatchworkPatchSmoothRef(&d, x, b, x);
  }
  for (long i = 0; i < L.nn; i++) e[i] = x[i] - xs[i];
  after = EnergyNorm(&L, e);
  Check(fails, after / before, 0.99, "patch %dD k=%2d dirichlet=%d multiplicative sweep: ||e||_A after/before", dim, k, dirichlet);
  free(xs);
  free(b);
  free(x);
  free(e);
  LevelDestroy(&L);
}

/* ---------------------------------------------------------------------------------------------
   (g) the residual against the global residual b - A x; (h) residual + solve = fused smoother;
   (i) float residual, solve and smoother against double, node by node */

/* Largest err/bound seen by the checks of (g) and (i), printed at the end: how far inside its
   derived bound each kernel stays */
typedef struct {
  double res, res_node, res_float, solve_float, smooth_float;
} Worst;

/* running max of err/bound that keeps a NaN; a zero bound admits only a zero error */
static double RatioMax(double m, double err, double bound)
{
  const double r = err == 0 ? 0.0 : err / bound;

  return ErrMax(m, r);
}

/* mark[i] = 1 at the interior nodes of the patches of d's color in its vertex range, else 0 */
static void MarkInteriors(const Level *L, const PatchworkPatchDesc *d, char *mark)
{
  long *idx = Malloc(sizeof(long) * L->nid);
  int   v[3];

  memset(mark, 0, L->nn);
  for (v[2] = d->vertex_start[2]; v[2] < d->vertex_end[2]; v[2]++)
    for (v[1] = d->vertex_start[1]; v[1] < d->vertex_end[1]; v[1]++)
      for (v[0] = d->vertex_start[0]; v[0] < d->vertex_end[0]; v[0]++) {
        int skip = 0;

        for (int dir = 0; dir < L->dim; dir++)
          if (v[dir] % 2 != ((d->color >> dir) & 1)) skip = 1;
        if (skip) continue;
        PatchInterior(L, v, idx);
        for (int q = 0; q < L->nid; q++) mark[idx[q]] = 1;
      }
  free(idx);
}

/* d's operator on the whole grid (every cell, both boxes the grid). absval: |1D matrices| and
   |coefficients|: applied to |x| it gives the sum of the absolute values of all the terms of A x
   node by node, the scale of the rounding error of any evaluation order. */
static void WholeGridOp(const Level *L, const PatchworkPatchDesc *d, int absval, PatchworkTensorDesc *g)
{
  *g = d->op;
  for (int dir = 0; dir < 3; dir++) {
    g->cell_start[dir] = 0;
    g->cell_end[dir]   = L->ncell[dir];
    g->in_start[dir] = g->out_start[dir] = 0;
    g->in_size[dir] = g->out_size[dir] = L->nodes[dir];
  }
  if (!absval) return;
  for (int q = 0; q < L->n * L->n; q++) {
    g->mass1d[q]  = fabs(g->mass1d[q]);
    g->stiff1d[q] = fabs(g->stiff1d[q]);
  }
  g->coef_mass = fabs(g->coef_mass);
  for (int dir = 0; dir < 3; dir++) g->coef_stiff[dir] = fabs(g->coef_stiff[dir]);
}

/* w = |A| u (|A^T| u with transpose) along the direction of stride s of the ni^d tensor u (nt entries) */
static void AbsApply1D(int ni, int nt, int s, const double *A, int transpose, const double *u, double *w)
{
  for (int q = 0; q < nt; q++) {
    const int i = (q / s) % ni, base = q - i * s;
    double    sum = 0.0;

    for (int p = 0; p < ni; p++) sum += fabs(transpose ? A[p * ni + i] : A[i * ni + p]) * u[base + p * s];
    w[q] = sum;
  }
}

/* B = |S|^(x)d diag(1/(cm + cs.lam)) |S^T|^(x)d |v| at every patch interior of the color: the node-
   wise scale of the rounding error of the fast-diagonalization solve of v (every step is a sum of
   products, and the denominators are sums of positive terms, so their errors are relative) */
static void AbsSolveBound(const Level *L, const PatchworkPatchDesc *d, const double *v, double *B)
{
  const int     ni = L->ni, nt = L->nid;
  const double *lam = d->eigval, cm = d->op.coef_mass, *cs = d->op.coef_stiff;
  long         *idx = Malloc(sizeof(long) * nt);
  double       *u0 = Malloc(sizeof(double) * nt), *w0 = Malloc(sizeof(double) * nt);
  int           vv[3];

  for (vv[2] = d->vertex_start[2]; vv[2] < d->vertex_end[2]; vv[2]++)
    for (vv[1] = d->vertex_start[1]; vv[1] < d->vertex_end[1]; vv[1]++)
      for (vv[0] = d->vertex_start[0]; vv[0] < d->vertex_end[0]; vv[0]++) {
        double *u = u0, *w = w0, *t;
        int     skip = 0;

        for (int dir = 0; dir < L->dim; dir++)
          if (vv[dir] % 2 != ((d->color >> dir) & 1)) skip = 1;
        if (skip) continue;
        PatchInterior(L, vv, idx);
        for (int q = 0; q < nt; q++) u[q] = fabs(v[idx[q]]);
        for (int dir = 0, s = 1; dir < L->dim; dir++, s *= ni) {
          AbsApply1D(ni, nt, s, d->eigvec, 1, u, w); /* |S^T| */
          t = u, u = w, w = t;
        }
        for (int q = 0; q < nt; q++) {
          const int i = q % ni, j = (q / ni) % ni, l = q / (ni * ni);

          u[q] /= cm + cs[0] * lam[i] + cs[1] * lam[j] + (L->dim == 3 ? cs[2] * lam[l] : 0.0);
        }
        for (int dir = 0, s = 1; dir < L->dim; dir++, s *= ni) {
          AbsApply1D(ni, nt, s, d->eigvec, 0, u, w); /* |S| */
          t = u, u = w, w = t;
        }
        for (int q = 0; q < nt; q++) B[idx[q]] = u[q];
      }
  free(idx);
  free(u0);
  free(w0);
}

/* Arrays of one level: global ones (g), and box ones (b; any box fits in nn entries) */
typedef struct {
  double *xg, *bg, *y0g, *xz, *ag, *sg, *bnd, *g1, *g2, *g3;
  char   *mark;
  double *xb, *bb, *rb, *y1, *y2, *xx;
  float  *xf, *bf, *rf, *yf;
} Work;

static void WorkCreate(long nn, Work *W)
{
  double **dp[] = {&W->xg, &W->bg, &W->y0g, &W->xz, &W->ag, &W->sg, &W->bnd, &W->g1, &W->g2, &W->g3, &W->xb, &W->bb, &W->rb, &W->y1, &W->y2, &W->xx};
  float  **fp[] = {&W->xf, &W->bf, &W->rf, &W->yf};

  for (size_t i = 0; i < sizeof(dp) / sizeof(dp[0]); i++) *dp[i] = Malloc(sizeof(double) * nn);
  for (size_t i = 0; i < sizeof(fp) / sizeof(fp[0]); i++) *fp[i] = Malloc(sizeof(float) * nn);
  W->mark = Malloc(nn);
}

static void WorkDestroy(Work *W)
{
  double *dp[] = {W->xg, W->bg, W->y0g, W->xz, W->ag, W->sg, W->bnd, W->g1, W->g2, W->g3, W->xb, W->bb, W->rb, W->y1, W->y2, W->xx};
  float  *fp[] = {W->xf, W->bf, W->rf, W->yf};

  for (size_t i = 0; i < sizeof(dp) / sizeof(dp[0]); i++) free(dp[i]);
  for (size_t i = 0; i < sizeof(fp) / sizeof(fp[0]); i++) free(fp[i]);
  free(W->mark);
}

/* Global index of entry q of a box array */
static long BoxToGlobal(const Level *L, const int start[3], const int size[3], long q)
{
  const int x = (int)(q % size[0]), y = (int)((q / size[0]) % size[1]), z = (int)(q / ((long)size[0] * size[1]));

  return GIndex(L, start[0] + x, start[1] + y, start[2] + z);
}

/* Rounding chains (roundings in sequence that a term goes through; u = unit roundoff, a result
   is then within gamma_L = L u/(1 - L u) times the sum of the |terms| of the exact one):
   - patch residual b - Abar x: d contractions over the np = 2k+1 closure nodes (np roundings each:
     np-1 additions and the product), the combination with the coefficients and the two updates of
     r (4), and, in float, the rounding of the d 1D factors and the coefficient (d+1);
   - tensor apply, then b - A x: d contractions over n = k+1 cell nodes, the coefficient products
     and sums of CellApply (4), up to 2^d cell contributions added into a node, the subtraction (1). */
static double ResidualChain(const Level *L)
{
  return L->dim * (2 * L->k + 2) + 5;
}

static double ApplyChain(const Level *L)
{
  return L->dim * L->n + 5 + (1 << L->dim);
}

/*
  (g) y = Residual(x, b) (out box prefilled with a sentinel) against b - A x from
  PatchworkTensorApplyRef on the whole grid, at every interior node of every patch of the color; the
  sentinel must survive everywhere else. Both evaluate the same sums in different orders:
  - normwise, each is within ResidualTol (gamma of the dense term count 2^d n^d + 2 times
    ||b|| + ||A|| ||x||) of the exact value, so they differ by at most twice that;
  - node by node, by at most (ResidualChain + ApplyChain) u (1 + O(u)) times the scale
    |b| + |A||x| (WholeGridOp absval; it bounds the patch's |Abar||x| at an interior node, all of
    whose cells are in the patch): DBL_EPSILON = 2u covers the O(u).
  Leaves the kernel's residual in W->rb and the scale |b| + |A||x| in W->sg.
*/
static void CheckResidual(int *fails, const Level *L, const PatchworkPatchDesc *d, const char *what, Work *W, Worst *worst)
{
  const double        sentinel = -7.0e77;
  const long          nout     = BoxCount(d->op.out_size);
  PatchworkTensorDesc g, ga;
  double              err = 0.0, rnode = 0.0, tol;
  long                nbad = 0;

  BoxFromGlobal(L, d->op.in_start, d->op.in_size, W->xg, W->xb);
  BoxFromGlobal(L, d->op.in_start, d->op.in_size, W->bg, W->bb);
  for (long q = 0; q < nout; q++) W->rb[q] = sentinel;
  PatchworkPatchResidualRef(d, W->xb, W->bb, W->rb);

  WholeGridOp(L, d, 0, &g);
  memset(W->ag, 0, sizeof(double) * L->nn);
  PatchworkTensorApplyRef(&g, W->xz, W->ag);
  for (long i = 0; i < L->nn; i++) W->g1[i] = fabs(W->xz[i]);
  WholeGridOp(L, d, 1, &ga);
  memset(W->sg, 0, sizeof(double) * L->nn);
  PatchworkTensorApplyRef(&ga, W->g1, W->sg);
  for (long i = 0; i < L->nn; i++) W->sg[i] += fabs(W->bg[i]);
  MarkInteriors(L, d, W->mark);
  for (long q = 0; q < nout; q++) {
    const long i = BoxToGlobal(L, d->op.out_start, d->op.out_size, q);

    if (W->mark[i]) {
      const double e = fabs(W->rb[q] - (W->bg[i] - W->ag[i]));

      err   = RatioMax(err, e, 1.0);
      rnode = RatioMax(rnode, e, (ResidualChain(L) + ApplyChain(L)) * DBL_EPSILON * W->sg[i]);
    } else nbad += W->rb[q] != sentinel;
  }
  tol             = 2.0 * ResidualTol(L, DBL_EPSILON, MaxAbs(L->nn, W->bg), MaxAbs(L->nn, W->xz));
  worst->res      = RatioMax(worst->res, err, tol);
  worst->res_node = RatioMax(worst->res_node, rnode, 1.0);
  Check(fails, err, tol, "%s residual vs b - A x (tensor apply, whole grid), normwise", what);
  Check(fails, rnode, 1.0, "%s residual vs b - A x (tensor apply, whole grid), node by node: max err/bound", what);
  Check(fails, nbad, 0, "%s residual: only patch interiors written", what);
}

/*
  (h) The fused smoother is the residual followed by the solve: y = x; r = Residual(x, b);
  y += Solve(r) against y = Smooth(x, b) out of place (y starting as x) and in place. The CPU
  reference does the same operations in the same order on the same values either way (the residual
  is stored and read back exactly), so the results agree bit for bit, the tightest "to rounding".
  Needs W->rb from CheckResidual.
*/
static void CheckSeparate(int *fails, const Level *L, const PatchworkPatchDesc *d, const char *what, Work *W)
{
  PatchworkPatchDesc ds = *d, di = *d;
  long               ndiff = 0;

  for (int dir = 0; dir < 3; dir++) {
    ds.op.in_start[dir]  = d->op.out_start[dir]; /* the solve reads r where the residual wrote it */
    ds.op.in_size[dir]   = d->op.out_size[dir];
    di.op.out_start[dir] = d->op.in_start[dir]; /* in place: one array, one box */
    di.op.out_size[dir]  = d->op.in_size[dir];
  }
  BoxFromGlobal(L, d->op.out_start, d->op.out_size, W->xg, W->y1);
  BoxFromGlobal(L, d->op.out_start, d->op.out_size, W->xg, W->y2);
  memcpy(W->xx, W->xb, sizeof(double) * BoxCount(d->op.in_size));
  PatchworkPatchSolveRef(&ds, W->rb, W->y1);
  PatchworkPatchSmoothRef(d, W->xb, W->bb, W->y2);
  PatchworkPatchSmoothRef(&di, W->xx, W->bb, W->xx);
  GlobalFromBox(L, d->op.out_start, d->op.out_size, W->xg, W->y1, W->g1);
  GlobalFromBox(L, d->op.out_start, d->op.out_size, W->xg, W->y2, W->g2);
  GlobalFromBox(L, d->op.in_start, d->op.in_size, W->xg, W->xx, W->g3);
  for (long i = 0; i < L->nn; i++) ndiff += W->g1[i] != W->g2[i] || W->g1[i] != W->g3[i];
  Check(fails, ndiff, 0, "%s residual + solve = smooth (out of place, in place): nodes not bit for bit equal", what);
}

/*
  (i) Float kernels against the double ones on the same (float-representable) inputs, node by node
  at the patch interiors of the color, as err/bound <= 1. Bounds (u = FLT_EPSILON/2 is the unit
  roundoff; a result computed through L roundings in sequence is exact for data perturbed by
  gamma_L = L u/(1 - L u) relatively, term by term):
  - residual b - Abar x: L_res = ResidualChain, against the scale |b| + |A||x| of (g).
  - solve: 2d contractions over ni = 2k-1 nodes, 2d rounded entries of S, the denominator (d+1
    rounded coefficients, the rounded lam, d+1 products, d sums, all positive) and the division:
    L_sol = 2 d ni + 3 d + 4, against B(|r|) = |S|^(x)d |Lam|^-1 |S^T|^(x)d |r| (AbsSolveBound);
    then omega t (rounded omega, product: +2) and the update y + omega t (u |y|).
  - smoother: the solve of the float residual: (L_sol + L_res + 2) against B(|b| + |A||x|) (the
    residual's error mapped by the solve), plus u |y|.
  The double kernel's own error is smaller by 2^-29 and the 1/(1 - L u) factor is below 1.01:
  taking FLT_EPSILON = 2u instead of u covers both (that factor 2 is the only slack). These are
  worst-case bounds: the products |S| |S^T| do not see the cancellation in the oscillating
  eigenvectors, so for random data the solve's and the smoother's ratios fall with the degree
  (measured 0.4 at k=1 down to 5e-4 at 3D k=8), while the residual's stays near 0.05.
*/
static void CheckFloat(int *fails, const Level *L, const PatchworkPatchDesc *d, const char *what, Work *W, Worst *worst)
{
  const float         sentinel = -7.0e37f;
  const long          nin = BoxCount(d->op.in_size), nout = BoxCount(d->op.out_size);
  const int           dim = L->dim, ni = L->ni;
  const double        lres = ResidualChain(L), lsol = 2 * dim * ni + 3 * dim + 4, eps = FLT_EPSILON, om = d->omega;
  double              rres = 0.0, rsol = 0.0, rsmo = 0.0;
  long                nbad = 0;

  for (long q = 0; q < nin; q++) {
    W->xf[q] = (float)W->xb[q];
    W->bf[q] = (float)W->bb[q];
  }

  /* residual (the double one is in W->rb) */
  for (long q = 0; q < nout; q++) W->rf[q] = sentinel;
  PatchworkPatchResidualRefFloat(d, W->xf, W->bf, W->rf);
  for (long q = 0; q < nout; q++) {
    const long i = BoxToGlobal(L, d->op.out_start, d->op.out_size, q);

    if (W->mark[i]) rres = RatioMax(rres, fabs(W->rf[q] - W->rb[q]), lres * eps * W->sg[i]);
    else nbad += W->rf[q] != sentinel;
  }
  Check(fails, rres, 1.0, "%s float residual vs double: max err/bound", what);
  Check(fails, nbad, 0, "%s float residual: only patch interiors written", what);

  /* solve of r = b onto y0 */
  AbsSolveBound(L, d, W->bg, W->bnd);
  BoxFromGlobal(L, d->op.out_start, d->op.out_size, W->y0g, W->y1);
  for (long q = 0; q < nout; q++) W->yf[q] = (float)W->y1[q];
  PatchworkPatchSolveRef(d, W->bb, W->y1);
  PatchworkPatchSolveRefFloat(d, W->bf, W->yf);
  for (long q = 0; q < nout; q++) {
    const long i = BoxToGlobal(L, d->op.out_start, d->op.out_size, q);

    if (W->mark[i]) rsol = RatioMax(rsol, fabs(W->yf[q] - W->y1[q]), (lsol + 2) * eps * om * W->bnd[i] + eps * fabs(W->y1[q]));
    else nbad += W->yf[q] != (float)W->y0g[i];
  }
  Check(fails, rsol, 1.0, "%s float solve vs double: max err/bound", what);

  /* smoother onto y0, out of place */
  AbsSolveBound(L, d, W->sg, W->bnd);
  BoxFromGlobal(L, d->op.out_start, d->op.out_size, W->y0g, W->y1);
  for (long q = 0; q < nout; q++) W->yf[q] = (float)W->y1[q];
  PatchworkPatchSmoothRef(d, W->xb, W->bb, W->y1);
  PatchworkPatchSmoothRefFloat(d, W->xf, W->bf, W->yf);
  for (long q = 0; q < nout; q++) {
    const long i = BoxToGlobal(L, d->op.out_start, d->op.out_size, q);

    if (W->mark[i]) rsmo = RatioMax(rsmo, fabs(W->yf[q] - W->y1[q]), (lsol + lres + 2) * eps * om * W->bnd[i] + eps * fabs(W->y1[q]));
    else nbad += W->yf[q] != (float)W->y0g[i];
  }
  Check(fails, rsmo, 1.0, "%s float smooth vs double: max err/bound", what);
  Check(fails, nbad, 0, "%s float solve, smooth: only patch interiors written", what);
  worst->res_float    = RatioMax(worst->res_float, rres, 1.0);
  worst->solve_float  = RatioMax(worst->solve_float, rsol, 1.0);
  worst->smooth_float = RatioMax(worst->smooth_float, rsmo, 1.0);
}

/* (g)-(i) on one level and case, for both boundary conditions and every color */
static void TestSeparate(int *fails, int dim, int k, int quad, const Case *c, uint64_t *seed, Worst *worst)
{
  PatchworkPatchDesc d;
  Level              L;
  Work               W;
  char               what[96];

  LevelCreate(dim, k, quad, c->ncell, 0, 0, seed, &L, &d);
  WorkCreate(L.nn, &W);
  for (int dirichlet = 0; dirichlet <= 1; dirichlet++)
    for (int color = 0; color < (1 << dim); color++) {
      L.dirichlet = d.op.dirichlet = dirichlet;
      d.color                      = color;
      d.omega                      = 0.8;
      SetBoxes(&L, c, &d);
      /* float-representable inputs, so that (i) sees the same data; xz: x with the eliminated
         nodes zeroed, what the kernels read */
      for (long i = 0; i < L.nn; i++) {
        int gx = i % L.nodes[0], gy = (i / L.nodes[0]) % L.nodes[1], gz = i / ((long)L.nodes[0] * L.nodes[1]);

        W.xg[i]  = (float)(2 * Rand(seed) - 1);
        W.bg[i]  = (float)(2 * Rand(seed) - 1);
        W.y0g[i] = (float)(2 * Rand(seed) - 1);
        W.xz[i]  = dirichlet && IsBoundary(&L, gx, gy, gz) ? 0.0 : W.xg[i];
      }
      snprintf(what, sizeof(what), "patch %dD k=%2d %-5s %-6s dirichlet=%d color=%d", dim, k, quad ? "gll" : "gauss", c->name, dirichlet, color);
      CheckResidual(fails, &L, &d, what, &W, worst);
      CheckSeparate(fails, &L, &d, what, &W);
      CheckFloat(fails, &L, &d, what, &W, worst);
    }
  WorkDestroy(&W);
  LevelDestroy(&L);
}

/* A color with no vertex in the range leaves y untouched (and reads nothing) */
static void TestEmpty(int *fails, uint64_t *seed)
{
  const int          nc[3] = {4, 4, 4};
  PatchworkPatchDesc d;
  Level              L;
  double             y[4] = {1, 2, 3, 4}, x[4] = {0, 0, 0, 0}, err = 0.0;
  float              yf[4] = {1, 2, 3, 4}, xf[4] = {0, 0, 0, 0};

  LevelCreate(3, 2, PW_QUAD_GAUSS, nc, 1, 0, seed, &L, &d);
  d.vertex_start[0] = 2;
  d.vertex_end[0]   = 3; /* only v_x = 2: no patch of odd x parity */
  d.color           = 1;
  PatchworkPatchSmoothRef(&d, x, x, y);
  PatchworkPatchSolveRef(&d, x, y);
  PatchworkPatchResidualRef(&d, x, x, y);
  PatchworkPatchSmoothRefFloat(&d, xf, xf, yf);
  PatchworkPatchSolveRefFloat(&d, xf, yf);
  PatchworkPatchResidualRefFloat(&d, xf, xf, yf);
  for (int i = 0; i < 4; i++) err = ErrMax(err, ErrMax(fabs(y[i] - (i + 1)), fabs(yf[i] - (i + 1))));
  Check(fails, err, 0, "patch 3D empty color in the vertex range: smooth, solve, residual (double, float) write nothing");
  LevelDestroy(&L);
}

int main(int argc, char **argv)
{
  /* "full": 5 cells per direction, interior vertices 1..4, so every color has 2^d patches, whole
     grid in one array. "offset": an MPI-rank-like sub-range of vertices of a bigger grid, touching
     the global boundary on some sides only, the in box a ghosted box around the patches' closure,
     the out box a different box around their interiors. */
  const Case cases[2][2] = {
    {{"full", {5, 5, 1}, {1, 1, 0}, {5, 5, 1}, {0}, {0}, {0}, {0}},
     {"offset", {7, 6, 1}, {2, 1, 0}, {6, 4, 1}, {2, 0, 0}, {1, 3, 0}, {0, 2, 0}, {3, 1, 0}}},
    {{"full", {5, 5, 5}, {1, 1, 1}, {5, 5, 5}, {0}, {0}, {0}, {0}},
     {"offset", {7, 6, 6}, {2, 1, 2}, {6, 4, 5}, {2, 0, 1}, {1, 3, 0}, {0, 2, 1}, {3, 1, 0}}}
  };
  int      fails = 0, quick = argc > 1 && !strcmp(argv[1], "--quick");
  uint64_t seed  = 0x2545F4914F6CDD1DULL;
  Worst    worst = {0, 0, 0, 0, 0};

  TestEigen(&fails, quick ? 4 : PW_MAX_DEGREE, &seed);
  for (int dim = 2; dim <= 3; dim++) {
    const int kmax = quick ? 3 : dim == 2 ? PW_MAX_DEGREE : 8, kbrute = quick ? 2 : dim == 2 ? PW_MAX_DEGREE : 4;

    for (int k = 1; k <= kmax; k++)
      for (int quad = 0; quad < 2; quad++) TestOnePatch(&fails, dim, k, quad, &seed);
    for (int k = 1; k <= kbrute; k++)
      for (int c = 0; c < 2; c++)
        for (int dirichlet = 0; dirichlet <= 1; dirichlet++) TestBrute(&fails, dim, k, (k + c) % 2, &cases[dim - 2][c], dirichlet, &seed);
    for (int k = 1; k <= kmax; k++)
      for (int dirichlet = 0; dirichlet <= 1; dirichlet++) TestSweep(&fails, dim, k, dirichlet, &seed);
  }
  for (int dim = 2; dim <= 3; dim++) {
    const int kmax = quick ? 3 : dim == 2 ? PW_MAX_DEGREE : 8;

    for (int k = 1; k <= kmax; k++)
      for (int c = 0; c < 2; c++) TestSeparate(&fails, dim, k, (k + c) % 2, &cases[dim - 2][c], &seed, &worst);
  }
  TestEmpty(&fails, &seed);
  printf("worst err/bound: residual (double) normwise %.3g, node by node %.3g; float residual %.3g, float solve %.3g, float smooth %.3g\n", worst.res, worst.res_node, worst.res_float,
         worst.solve_float, worst.smooth_float);
  printf("%s: %d check(s) failed\n", fails ? "FAIL" : "ok  ", fails);
  return fails ? 1 : 0;
}
