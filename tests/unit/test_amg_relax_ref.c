/* Unit test of the patch block-Jacobi relaxation's CPU reference on the patchSPM layout
   (src/core/amg_relax_ref.c, contract include/patchwork/amg_kernel.h), against a naive computation
   on the dense matrix written here without the reference's data structures:
   (a) Mult = A x,
   (b) BoundaryResidual = z - (A - blockdiag_p A_pp) x, also with y aliasing z,
   (c) PatchRelax per patch with the dense block A_pp: zero guess (x filled with NaN, so that reading
       it shows) and not, inner = 1, 2, 3, 5 sweeps, with the residual r; then r = NULL and r aliasing
       b must reproduce x and r bit for bit, and b must be left alone,
   (d) one patch holding every row and many sweeps solves A x = b (the relaxation is a solver there),
   (e) the row map: the layout with a random permutation `row` (AB columns renumbered to level rows)
       on permuted vectors must give the identity layout's results, permuted, bit for bit (Mult,
       BoundaryResidual, PatchRelax with and without r, r aliasing b),
   each in double and in single values, on symmetric diagonally dominant matrices: 3D 7- and
   27-point stencils with random weights, random local graphs with a few long edges, a nearly dense
   one, and patches of one row. Patches are contiguous ranges of random sizes; the entries of each
   row are stored in random order.

   Tolerances. Both sides compute in double from the same values (with single values, the dense
   matrix holds the float-rounded values), so they differ by rounding only. Each stage (t, every
   sweep, the update of x, r) evaluates row sums of at most L = (entries per row) + 5 operations, and
   the errors of earlier stages propagate through the same linear maps with coefficients no larger
   in magnitude, so with the majorant M (the same recursion on |A|, |b|, |x| with every minus
   turned into a plus) each side is within (stages) L u M of the exact value, u = eps/2. The check
   is |ref - naive| <= (stages) L eps M entry by entry; err is printed as max |ref - naive| / (eps M),
   the tolerance as (stages) L.

   PatchworkSPMBuildRef (src/core/amg_spm_ref.c) is checked apart: on small random CSR matrices with
   duplicated entries, missing or repeated diagonals, random patches (some empty) and random or
   identity positions, against a brute-force split written here (the patch of a position by a linear
   scan; every entry classified on its own): each position's AI and AB entries in storage order,
   values rounded once, the diagonal summed in storage order, the copied arrays and the scalars; with
   dyadic values also the dense sums of AI, AB and the diagonal; Mult of the built layout against the
   dense product; and bad arguments (columns out of range, patch_ptr not covering n or decreasing, a
   row map that is not pos's inverse) must return 1 and leave d empty.

   PETSc-free. Prints one line per check and returns 1 if any failed; --quick runs fewer cases
   (for valgrind). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <patchwork/amg_kernel.h>
#include "unittest.h"

typedef enum { GRID7, GRID27, LOCAL, DENSE, POINT } Kind;

/* A test problem: the dense matrix and its patchSPM split */
typedef struct {
  const char *name;
  int         n, npatch, maxp, maxlen; /* maxlen: most stored entries of a row, diagonal included */
  double     *A;                       /* n x n, row major; float-rounded when single */
  int        *patch_ptr, *part;        /* part[i]: the patch of row i */
  int        *ai_ptr, *ai_col, *ab_ptr, *ab_col;
  double     *ai_d, *ab_d, *dg_d;
  float      *ai_f, *ab_f, *dg_f;
  PatchworkSPMDesc desc;
} Problem;

static int RandInt(uint64_t *s, int lo, int hi) /* uniform in [lo, hi] */
{
  return lo + (int)(Rand(s) * (hi - lo + 1));
}

static void AddEdge(double *A, int n, int i, int j, double w)
{
  if (i == j) return;
  A[(size_t)i * n + j] = w;
  A[(size_t)j * n + i] = w;
}

/* Symmetric off-diagonal entries of the given kind, then a dominant diagonal */
static void BuildMatrix(Kind kind, int n, const int grid[3], uint64_t *s, double *A)
{
  memset(A, 0, sizeof(double) * n * n);
  if (kind == GRID7 || kind == GRID27) {
    const int nx = grid[0], ny = grid[1], nz = grid[2];

    for (int z = 0; z < nz; z++)
      for (int y = 0; y < ny; y++)
        for (int x = 0; x < nx; x++)
          for (int dz = -1; dz <= 1; dz++)
            for (int dy = -1; dy <= 1; dy++)
              for (int dx = -1; dx <= 1; dx++) {
                const int i = (z * ny + y) * nx + x, j = ((z + dz) * ny + y + dy) * nx + x + dx;

                if (x + dx < 0 || x + dx >= nx || y + dy < 0 || y + dy >= ny || z + dz < 0 || z + dz >= nz) continue;
                if (kind == GRID7 && abs(dx) + abs(dy) + abs(dz) != 1) continue;
                if (j > i) AddEdge(A, n, i, j, -(0.5 + Rand(s)));
              }
  } else if (kind == LOCAL || kind == DENSE) {
    const int deg = kind == LOCAL ? 4 : 30, width = kind == LOCAL ? 12 : 40;

    for (int i = 0; i < n; i++)
      for (int q = 0; q < deg; q++) {
        /* mostly near the diagonal (inside patches), sometimes anywhere; signs mixed */
        const int j = Rand(s) < 0.1 ? RandInt(s, 0, n - 1) : i + RandInt(s, -width, width);

        if (j >= 0 && j < n) AddEdge(A, n, i, j, 2.0 * Rand(s) - 1.0);
      }
  } else
    for (int q = 0; q < n; q++) AddEdge(A, n, RandInt(s, 0, n - 1), RandInt(s, 0, n - 1), 2.0 * Rand(s) - 1.0);
  for (int i = 0; i < n; i++) {
    double sum = 0.0;

    for (int j = 0; j < n; j++) sum += fabs(A[(size_t)i * n + j]);
    A[(size_t)i * n + i] = sum + 0.05 + 0.5 * Rand(s);
  }
}

static void Shuffle(int *col, double *val, int cnt, uint64_t *s)
{
  for (int k = cnt - 1; k > 0; k--) {
    const int    q = RandInt(s, 0, k), c = col[k];
    const double v = val[k];

    col[k] = col[q];
    val[k] = val[q];
    col[q] = c;
    val[q] = v;
  }
}

static Problem MakeProblem(const char *name, Kind kind, int n, const int grid[3], int maxp, int single, uint64_t *s)
{
  Problem P;
  int     nai = 0, nab = 0;

  memset(&P, 0, sizeof(P));
  P.name = name;
  P.n    = n;
  P.A    = Malloc(sizeof(double) * n * n);
  BuildMatrix(kind, n, grid, s, P.A);
  if (single)
    for (size_t q = 0; q < (size_t)n * n; q++) P.A[q] = (double)(float)P.A[q];
  /* contiguous patches of random sizes 1..maxp; maxp = 0: one patch */
  P.patch_ptr = Malloc(sizeof(int) * (n + 1));
  P.part      = Malloc(sizeof(int) * n);
  P.npatch    = 0;
  P.maxp      = 0;
  for (int start = 0; start < n;) {
    int m = maxp ? RandInt(s, 1, maxp) : n;

    if (m > n - start) m = n - start;
    if (m > P.maxp) P.maxp = m;
    for (int i = start; i < start + m; i++) P.part[i] = P.npatch;
    P.patch_ptr[P.npatch++] = start;
    start += m;
  }
  P.patch_ptr[P.npatch] = n;
  for (size_t q = 0; q < (size_t)n * n; q++)
    if (P.A[q] != 0.0 && q / n != q % n) {
      if (P.part[q / n] == P.part[q % n]) nai++;
      else nab++;
    }
  P.ai_ptr = Malloc(sizeof(int) * (n + 1));
  P.ab_ptr = Malloc(sizeof(int) * (n + 1));
  P.ai_col = Malloc(sizeof(int) * nai);
  P.ab_col = Malloc(sizeof(int) * nab);
  P.ai_d   = Malloc(sizeof(double) * nai);
  P.ab_d   = Malloc(sizeof(double) * nab);
  P.dg_d   = Malloc(sizeof(double) * n);
  P.ai_f   = Malloc(sizeof(float) * nai);
  P.ab_f   = Malloc(sizeof(float) * nab);
  P.dg_f   = Malloc(sizeof(float) * n);
  nai = nab = 0;
  P.maxlen  = 0;
  for (int i = 0; i < n; i++) {
    const int ps = P.patch_ptr[P.part[i]];

    P.ai_ptr[i] = nai;
    P.ab_ptr[i] = nab;
    for (int j = 0; j < n; j++) {
      const double a = P.A[(size_t)i * n + j];

      if (a == 0.0 || j == i) continue;
      if (P.part[j] == P.part[i]) {
        P.ai_col[nai] = j - ps;
        P.ai_d[nai++] = a;
      } else {
        P.ab_col[nab] = j;
        P.ab_d[nab++] = a;
      }
    }
    Shuffle(P.ai_col + P.ai_ptr[i], P.ai_d + P.ai_ptr[i], nai - P.ai_ptr[i], s);
    Shuffle(P.ab_col + P.ab_ptr[i], P.ab_d + P.ab_ptr[i], nab - P.ab_ptr[i], s);
    P.dg_d[i] = P.A[(size_t)i * n + i];
    if (nai - P.ai_ptr[i] + nab - P.ab_ptr[i] + 1 > P.maxlen) P.maxlen = nai - P.ai_ptr[i] + nab - P.ab_ptr[i] + 1;
  }
  P.ai_ptr[n] = nai;
  P.ab_ptr[n] = nab;
  for (int q = 0; q < nai; q++) P.ai_f[q] = (float)P.ai_d[q];
  for (int q = 0; q < nab; q++) P.ab_f[q] = (float)P.ab_d[q];
  for (int i = 0; i < n; i++) P.dg_f[i] = (float)P.dg_d[i];

  P.desc.n         = n;
  P.desc.npatch    = P.npatch;
  P.desc.max_patch = P.maxp;
  P.desc.patch_ptr = P.patch_ptr;
  P.desc.ai_ptr    = P.ai_ptr;
  P.desc.ai_col    = P.ai_col;
  P.desc.ab_ptr    = P.ab_ptr;
  P.desc.ab_col    = P.ab_col;
  P.desc.single    = single;
  P.desc.ai_val    = single ? (const void *)P.ai_f : (const void *)P.ai_d;
  P.desc.ab_val    = single ? (const void *)P.ab_f : (const void *)P.ab_d;
  P.desc.diag      = single ? (const void *)P.dg_f : (const void *)P.dg_d;
  return P;
}

static void FreeProblem(Problem *P)
{
  free(P->A);
  free(P->patch_ptr);
  free(P->part);
  free(P->ai_ptr);
  free(P->ai_col);
  free(P->ab_ptr);
  free(P->ab_col);
  free(P->ai_d);
  free(P->ab_d);
  free(P->dg_d);
  free(P->ai_f);
  free(P->ab_f);
  free(P->dg_f);
}

static void RandVec(int n, double *v, uint64_t *s)
{
  for (int i = 0; i < n; i++) v[i] = 2.0 * Rand(s) - 1.0;
}

/* max_i |a_i - b_i| / (eps M_i); an entry with M_i = 0 must match exactly */
static double ErrRatio(int n, const double *a, const double *b, const double *M)
{
  double e = 0.0;

  for (int i = 0; i < n; i++) {
    const double d = fabs(a[i] - b[i]);

    if (d == 0.0) continue;
    if (!(d == d) || M[i] == 0.0) return INFINITY;
    e = ErrMax(e, d / (DBL_EPSILON * M[i]));
  }
  return e;
}

static int SameBits(int n, const double *a, const double *b)
{
  return !memcmp(a, b, sizeof(double) * n);
}

/* (a) and (b): y = A x and y = z - (off-patch part of A) x, with their majorants */
static void TestMultBoundary(int *fails, Problem *P, uint64_t *s)
{
  const int n   = P->n;
  const char *pr = P->desc.single ? "single" : "double";
  double   *x   = Malloc(sizeof(double) * n), *z = Malloc(sizeof(double) * n), *y = Malloc(sizeof(double) * n);
  double   *yn  = Malloc(sizeof(double) * n), *M = Malloc(sizeof(double) * n), *y2 = Malloc(sizeof(double) * n);

  RandVec(n, x, s);
  RandVec(n, z, s);
  for (int i = 0; i < n; i++) {
    yn[i] = 0.0;
    M[i]  = 0.0;
    for (int j = 0; j < n; j++) {
      yn[i] += P->A[(size_t)i * n + j] * x[j];
      M[i] += fabs(P->A[(size_t)i * n + j] * x[j]);
    }
  }
  PatchworkSPMMultRef(&P->desc, x, y);
  Check(fails, ErrRatio(n, y, yn, M), 2.0 * (P->maxlen + 5), "%-7s %s mult", P->name, pr);

  for (int i = 0; i < n; i++) {
    yn[i] = z[i];
    M[i]  = fabs(z[i]);
    for (int j = 0; j < n; j++)
      if (P->part[j] != P->part[i]) {
        yn[i] -= P->A[(size_t)i * n + j] * x[j];
        M[i] += fabs(P->A[(size_t)i * n + j] * x[j]);
      }
  }
  PatchworkSPMBoundaryResidualRef(&P->desc, x, z, y);
  memcpy(y2, z, sizeof(double) * n);
  PatchworkSPMBoundaryResidualRef(&P->desc, x, y2, y2);
  Check(fails, SameBits(n, y, y2) ? ErrRatio(n, y, yn, M) : INFINITY, 2.0 * (P->maxlen + 5), "%-7s %s boundary residual (y aliasing z gives the same bits)", P->name, pr);
  free(x);
  free(z);
  free(y);
  free(yn);
  free(M);
  free(y2);
}

/* The naive patch relaxation on the dense blocks, and its majorant (absolute values, minus -> plus) */
static void NaiveRelax(const Problem *P, int inner, double iw, double w, int zero_guess, int absval, const double *b, double *x, double *r)
{
  const int n  = P->n;
  double   *t  = Malloc(sizeof(double) * n), *g = Malloc(sizeof(double) * n), *gn = Malloc(sizeof(double) * n);
  const double sg = absval ? -1.0 : 1.0; /* b - A v turns into |b| + |A| |v| */

#define AV(i, j) (absval ? fabs(P->A[(size_t)(i) * n + (j)]) : P->A[(size_t)(i) * n + (j)])
  for (int p = 0; p < P->npatch; p++) {
    const int s = P->patch_ptr[p], e = P->patch_ptr[p + 1];

    for (int i = s; i < e; i++) {
      t[i] = absval ? fabs(b[i]) : b[i];
      if (!zero_guess)
        for (int j = s; j < e; j++) t[i] -= sg * AV(i, j) * (absval ? fabs(x[j]) : x[j]);
      g[i] = 0.0;
    }
    for (int k = 0; k < inner; k++) {
      for (int i = s; i < e; i++) {
        double res = t[i];

        for (int j = s; j < e; j++) res -= sg * AV(i, j) * g[j];
        gn[i] = g[i] + (absval ? fabs(iw) : iw) * res / AV(i, i);
      }
      for (int i = s; i < e; i++) g[i] = gn[i];
    }
    for (int i = s; i < e; i++) {
      const double wa = absval ? fabs(w) : w;

      x[i] = zero_guess ? wa * g[i] : (absval ? fabs(x[i]) : x[i]) + wa * g[i];
    }
    for (int i = s; i < e; i++) {
      r[i] = absval ? fabs(b[i]) : b[i];
      for (int j = s; j < e; j++) r[i] -= sg * AV(i, j) * x[j];
    }
  }
#undef AV
  free(t);
  free(g);
  free(gn);
}

/* (c) */
static void TestRelax(int *fails, Problem *P, int zero_guess, int inner, uint64_t *s)
{
  const int    n = P->n;
  const char  *pr = P->desc.single ? "single" : "double";
  const double iw = 0.5 + 0.5 * Rand(s), w = 0.6 + 0.6 * Rand(s);
  const double tol = (double)(inner + 3) * (P->maxlen + 5);
  double      *b = Malloc(sizeof(double) * n), *x0 = Malloc(sizeof(double) * n), *x = Malloc(sizeof(double) * n), *r = Malloc(sizeof(double) * n);
  double      *xn = Malloc(sizeof(double) * n), *rn = Malloc(sizeof(double) * n), *xm = Malloc(sizeof(double) * n), *rm = Malloc(sizeof(double) * n);
  double      *b0 = Malloc(sizeof(double) * n), *x2 = Malloc(sizeof(double) * n), *r2 = Malloc(sizeof(double) * n);
  int          same;

  P->desc.inner       = inner;
  P->desc.inner_omega = iw;
  P->desc.omega       = w;
  RandVec(n, b, s);
  memcpy(b0, b, sizeof(double) * n);
  RandVec(n, x0, s);
  if (zero_guess)
    for (int i = 0; i < n; i++) x0[i] = NAN; /* must not be read */
  memcpy(xn, x0, sizeof(double) * n);
  memcpy(xm, x0, sizeof(double) * n);
  NaiveRelax(P, inner, iw, w, zero_guess, 0, b, xn, rn);
  NaiveRelax(P, inner, iw, w, zero_guess, 1, b, xm, rm);

  memcpy(x, x0, sizeof(double) * n);
  for (int i = 0; i < n; i++) r[i] = NAN; /* must be written everywhere */
  PatchworkSPMPatchRelaxRef(&P->desc, b, x, r, zero_guess);
  Check(fails, ErrMax(ErrRatio(n, x, xn, xm), ErrRatio(n, r, rn, rm)), tol, "%-7s %s relax %s inner %d: x and r", P->name, pr, zero_guess ? "zero guess" : "from x    ", inner);

  /* r = NULL: the same x; r aliasing b: the same x and r; b untouched otherwise */
  memcpy(x2, x0, sizeof(double) * n);
  PatchworkSPMPatchRelaxRef(&P->desc, b, x2, NULL, zero_guess);
  same = SameBits(n, x, x2) && SameBits(n, b, b0);
  memcpy(x2, x0, sizeof(double) * n);
  memcpy(r2, b, sizeof(double) * n);
  PatchworkSPMPatchRelaxRef(&P->desc, r2, x2, r2, zero_guess);
  same = same && SameBits(n, x, x2) && SameBits(n, r, r2);
  Check(fails, same ? 0.0 : 1.0, 0.0, "%-7s %s relax %s inner %d: r = NULL and r = b reproduce the bits", P->name, pr, zero_guess ? "zero guess" : "from x    ", inner);
  free(b);
  free(x0);
  free(x);
  free(r);
  free(xn);
  free(rn);
  free(xm);
  free(rm);
  free(b0);
  free(x2);
  free(r2);
}

/* (d) one patch holding every row: undamped Jacobi sweeps converge on a strictly diagonally
   dominant matrix (here the diagonal is twice the sum of the row's other entries), so the relaxation from a zero guess solves A x = b, and r is the residual */
static void TestSolve(int *fails, int single, uint64_t *s)
{
  const int grid[3] = {6, 5, 4}, n = 120;
  Problem   P       = MakeProblem("solve", GRID7, n, grid, 0, single, s);
  double   *b = Malloc(sizeof(double) * n), *x = Malloc(sizeof(double) * n), *r = Malloc(sizeof(double) * n);
  double    res = 0.0, rdiff = 0.0;

  /* double the diagonal (exact, also in float): the sweeps then contract by 1/2 at least */
  for (int i = 0; i < n; i++) {
    P.A[(size_t)i * n + i] *= 2.0;
    P.dg_d[i] *= 2.0;
    P.dg_f[i] *= 2.0f;
  }
  P.desc.inner       = 300;
  P.desc.inner_omega = 1.0;
  P.desc.omega       = 1.0;
  RandVec(n, b, s);
  PatchworkSPMPatchRelaxRef(&P.desc, b, x, r, 1);
  for (int i = 0; i < n; i++) {
    double ri = b[i];

    for (int j = 0; j < n; j++) ri -= P.A[(size_t)i * n + j] * x[j];
    res   = ErrMax(res, fabs(ri));
    rdiff = ErrMax(rdiff, fabs(ri - r[i]));
  }
  Check(fails, res / MaxAbs(n, b), 1e-12, "solve   %s one patch, 300 sweeps: |b - A x| / |b|", single ? "single" : "double");
  Check(fails, rdiff / MaxAbs(n, b), 1e-14, "solve   %s one patch: r = b - A x", single ? "single" : "double");
  FreeProblem(&P);
  free(b);
  free(x);
  free(r);
}


/* Fisher-Yates: a random permutation of 0..n-1 */
static void RandPerm(int n, int *perm, uint64_t *s)
{
  for (int i = 0; i < n; i++) perm[i] = i;
  for (int k = n - 1; k > 0; k--) {
    const int q = RandInt(s, 0, k), t = perm[k];

    perm[k] = perm[q];
    perm[q] = t;
  }
}

/* v in position order -> vl in level order: vl[row[i]] = v[i] */
static void ToLevel(int n, const int *row, const double *v, double *vl)
{
  for (int i = 0; i < n; i++) vl[row[i]] = v[i];
}

/* every entry of vl at row[i] has the bits of v[i] */
static int SameBitsMapped(int n, const int *row, const double *v, const double *vl)
{
  for (int i = 0; i < n; i++)
    if (memcmp(&v[i], &vl[row[i]], sizeof(double))) return 0;
  return 1;
}

/* (e) the row map */
static void TestRowMap(int *fails, Problem *P, uint64_t *s)
{
  const int        n = P->n, nab = P->ab_ptr[n];
  const char      *pr = P->desc.single ? "single" : "double";
  int             *row = Malloc(sizeof(int) * n), *abc = Malloc(sizeof(int) * (nab ? nab : 1));
  double          *x = Malloc(sizeof(double) * n), *z = Malloc(sizeof(double) * n), *y = Malloc(sizeof(double) * n), *r = Malloc(sizeof(double) * n);
  double          *xl = Malloc(sizeof(double) * n), *zl = Malloc(sizeof(double) * n), *yl = Malloc(sizeof(double) * n), *rl = Malloc(sizeof(double) * n);
  PatchworkSPMDesc dm = P->desc;
  int              same;

  RandPerm(n, row, s);
  for (int k = 0; k < nab; k++) abc[k] = row[P->ab_col[k]]; /* AB columns are level rows */
  dm.row    = row;
  dm.ab_col = abc;
  RandVec(n, x, s);
  RandVec(n, z, s);
  ToLevel(n, row, x, xl);
  ToLevel(n, row, z, zl);
  PatchworkSPMMultRef(&P->desc, x, y);
  PatchworkSPMMultRef(&dm, xl, yl);
  same = SameBitsMapped(n, row, y, yl);
  PatchworkSPMBoundaryResidualRef(&P->desc, x, z, y);
  PatchworkSPMBoundaryResidualRef(&dm, xl, zl, yl);
  same = same && SameBitsMapped(n, row, y, yl);
  PatchworkSPMBoundaryResidualRef(&dm, xl, zl, zl); /* y aliasing z */
  same = same && SameBitsMapped(n, row, y, zl);
  Check(fails, same ? 0.0 : 1.0, 0.0, "%-7s %s row map: mult and boundary residual equal the identity layout's, permuted", P->name, pr);

  same = 1;
  for (int zg = 0; zg <= 1; zg++)
    for (int inner = 1; inner <= 3; inner += 2) {
      P->desc.inner = dm.inner = inner;
      P->desc.inner_omega = dm.inner_omega = 0.5 + 0.5 * Rand(s);
      P->desc.omega = dm.omega = 0.6 + 0.6 * Rand(s);
      RandVec(n, x, s);
      RandVec(n, z, s); /* b */
      ToLevel(n, row, x, xl);
      ToLevel(n, row, z, zl);
      PatchworkSPMPatchRelaxRef(&P->desc, z, x, r, zg);
      PatchworkSPMPatchRelaxRef(&dm, zl, xl, rl, zg);
      same = same && SameBitsMapped(n, row, x, xl) && SameBitsMapped(n, row, r, rl);
      /* r = NULL, then r aliasing b, from the same x */
      RandVec(n, x, s);
      ToLevel(n, row, x, xl);
      memcpy(y, x, sizeof(double) * n);
      PatchworkSPMPatchRelaxRef(&P->desc, z, x, NULL, zg);
      PatchworkSPMPatchRelaxRef(&dm, zl, xl, NULL, zg);
      same = same && SameBitsMapped(n, row, x, xl);
      ToLevel(n, row, y, xl);
      PatchworkSPMPatchRelaxRef(&P->desc, z, y, z, zg);
      PatchworkSPMPatchRelaxRef(&dm, zl, xl, zl, zg);
      same = same && SameBitsMapped(n, row, y, xl) && SameBitsMapped(n, row, z, zl);
    }
  Check(fails, same ? 0.0 : 1.0, 0.0, "%-7s %s row map: relax (zero guess and not, inner 1 and 3, r separate, NULL, = b) equals the identity layout's", P->name, pr);
  free(row);
  free(abc);
  free(x);
  free(z);
  free(y);
  free(r);
  free(xl);
  free(zl);
  free(yl);
  free(rl);
}

/* A random CSR in level rows for the build tests: entries near each row's position (so that many
   fall into its patch) and anywhere, some repeated, the diagonal absent, once or repeated; dyadic
   values (k/8) when `dyadic`, so that every sum of them is exact in float */
typedef struct {
  int     n, npatch;
  int    *ptr, *col, *patch_ptr, *row, *pos; /* row and pos NULL: identity positions */
  double *val;
} BuildCase;

static BuildCase MakeBuildCase(int n, int perm, int dyadic, uint64_t *s)
{
  BuildCase B;
  int       cap = 16 * n + 1, nz = 0;

  memset(&B, 0, sizeof(B));
  B.n         = n;
  B.ptr       = Malloc(sizeof(int) * (n + 1));
  B.col       = Malloc(sizeof(int) * cap);
  B.val       = Malloc(sizeof(double) * cap);
  B.patch_ptr = Malloc(sizeof(int) * (2 * n + 2)); /* at most n empty patches */
  if (perm) {
    B.row = Malloc(sizeof(int) * n);
    B.pos = Malloc(sizeof(int) * n);
    RandPerm(n, B.row, s);
    for (int i = 0; i < n; i++) B.pos[B.row[i]] = i;
  }
  /* patches of 0..8 positions, the empty ones rare */
  B.patch_ptr[0] = 0;
  for (int start = 0; start < n;) {
    int m = Rand(s) < 0.1 && B.npatch < n ? 0 : RandInt(s, 1, 8);

    if (m > n - start) m = n - start;
    start += m;
    B.patch_ptr[++B.npatch] = start;
  }
  for (int r = 0; r < n; r++) {
    const int i = perm ? B.pos[r] : r, cnt = RandInt(s, 0, 12), ndiag = RandInt(s, 0, 2);

    B.ptr[r] = nz;
    for (int k = 0; k < cnt + ndiag; k++) {
      int q = k < cnt ? (Rand(s) < 0.75 ? i + RandInt(s, -6, 6) : RandInt(s, 0, n - 1)) : i; /* a position */

      if (q < 0 || q >= n) q = RandInt(s, 0, n - 1);
      B.col[nz] = perm ? B.row[q] : q;
      B.val[nz] = dyadic ? RandInt(s, -64, 64) / 8.0 : 2.0 * Rand(s) - 1.0;
      nz++;
    }
    /* the diagonal entries mixed in at random places */
    for (int k = nz - 1; k > B.ptr[r]; k--) {
      const int    q = RandInt(s, B.ptr[r], k), c = B.col[k];
      const double v = B.val[k];

      B.col[k] = B.col[q];
      B.val[k] = B.val[q];
      B.col[q] = c;
      B.val[q] = v;
    }
  }
  B.ptr[n] = nz;
  return B;
}

static void FreeBuildCase(BuildCase *B)
{
  free(B->ptr);
  free(B->col);
  free(B->val);
  free(B->patch_ptr);
  free(B->row);
  free(B->pos);
}

static double Val(const void *v, int single, int k)
{
  return single ? (double)((const float *)v)[k] : ((const double *)v)[k];
}

/* The value of the layout's type nearest to v, widened back */
static double Round(double v, int single)
{
  return single ? (double)(float)v : v;
}

/* PatchworkSPMBuildRef against the brute-force split; returns the number of mismatches */
static int CheckBuild(const BuildCase *B, int single, const PatchworkSPMDesc *d, int nai, int nab, int dyadic)
{
  const int n = B->n;
  int       bad = 0, tai = 0, tab = 0, maxp = 0;
  int      *part = Malloc(sizeof(int) * (n ? n : 1));
  double   *dai = NULL, *dab = NULL, *eai = NULL, *eab = NULL;

  for (int p = 0; p < B->npatch; p++) maxp = B->patch_ptr[p + 1] - B->patch_ptr[p] > maxp ? B->patch_ptr[p + 1] - B->patch_ptr[p] : maxp;
  for (int i = 0; i < n; i++) /* the patch of a position, by a scan over all patches */
    for (int p = 0; p < B->npatch; p++)
      if (B->patch_ptr[p] <= i && i < B->patch_ptr[p + 1]) part[i] = p;
  bad += d->n != n || d->npatch != B->npatch || d->max_patch != maxp || d->single != (single != 0) || d->inner != 1 || d->inner_omega != 1.0 || d->omega != 1.0;
  bad += memcmp(d->patch_ptr, B->patch_ptr, sizeof(int) * (B->npatch + 1)) != 0;
  bad += B->row ? !d->row || memcmp(d->row, B->row, sizeof(int) * n) != 0 : d->row != NULL;
  bad += d->ai_ptr[0] != 0 || d->ab_ptr[0] != 0 || d->ai_ptr[n] != nai || d->ab_ptr[n] != nab;
  if (dyadic) {
    dai = Malloc(sizeof(double) * n * n); /* [position][position]: the brute force */
    dab = Malloc(sizeof(double) * n * n); /* [position][level row] */
    eai = Malloc(sizeof(double) * n * n); /* the same from the layout */
    eab = Malloc(sizeof(double) * n * n);
  }
  for (int i = 0; i < n; i++) {
    const int r = B->row ? B->row[i] : i, ps = B->patch_ptr[part[i]];
    int       ka = d->ai_ptr[i], kb = d->ab_ptr[i];
    double    diag = 0.0;

    if (d->ai_ptr[i + 1] < ka || d->ab_ptr[i + 1] < kb) {
      bad++;
      continue;
    }
    /* each entry of the row, classified on its own, must be the next AI or AB entry */
    for (int j = B->ptr[r]; j < B->ptr[r + 1]; j++) {
      const int c = B->col[j], q = B->pos ? B->pos[c] : c;

      if (c == r) {
        diag += B->val[j];
        continue;
      }
      if (part[q] == part[i]) {
        if (ka >= d->ai_ptr[i + 1] || d->ai_col[ka] != q - ps || Val(d->ai_val, single, ka) != Round(B->val[j], single)) bad++;
        if (dyadic) dai[(size_t)i * n + q] += B->val[j];
        ka++;
        tai++;
      } else {
        if (kb >= d->ab_ptr[i + 1] || d->ab_col[kb] != c || Val(d->ab_val, single, kb) != Round(B->val[j], single)) bad++;
        if (dyadic) dab[(size_t)i * n + c] += B->val[j];
        kb++;
        tab++;
      }
    }
    bad += ka != d->ai_ptr[i + 1] || kb != d->ab_ptr[i + 1];
    bad += Val(d->diag, single, i) != Round(diag, single);
    if (dyadic) {
      for (int k = d->ai_ptr[i]; k < d->ai_ptr[i + 1]; k++) eai[(size_t)i * n + ps + d->ai_col[k]] += Val(d->ai_val, single, k);
      for (int k = d->ab_ptr[i]; k < d->ab_ptr[i + 1]; k++) eab[(size_t)i * n + d->ab_col[k]] += Val(d->ab_val, single, k);
    }
  }
  bad += tai != nai || tab != nab;
  if (dyadic) {
    bad += memcmp(dai, eai, sizeof(double) * n * n) != 0;
    bad += memcmp(dab, eab, sizeof(double) * n * n) != 0;
  }
  free(part);
  free(dai);
  free(dab);
  free(eai);
  free(eab);
  return bad;
}

/* Mult of a built layout (level-ordered vectors) against the dense product of the CSR */
static double BuildMultErr(const BuildCase *B, const PatchworkSPMDesc *d, int single, uint64_t *s, double *tol)
{
  const int n = B->n;
  double   *x = Malloc(sizeof(double) * n), *y = Malloc(sizeof(double) * n), *yn = Malloc(sizeof(double) * n), *M = Malloc(sizeof(double) * n), err;
  int       maxlen = 0;

  RandVec(n, x, s);
  for (int r = 0; r < n; r++) {
    double diag = 0.0;

    yn[r] = M[r] = 0.0;
    for (int j = B->ptr[r]; j < B->ptr[r + 1]; j++)
      if (B->col[j] == r) diag += B->val[j];
      else {
        yn[r] += Round(B->val[j], single) * x[B->col[j]];
        M[r] += fabs(Round(B->val[j], single) * x[B->col[j]]);
      }
    yn[r] += Round(diag, single) * x[r];
    M[r] += fabs(Round(diag, single) * x[r]);
    maxlen = B->ptr[r + 1] - B->ptr[r] > maxlen ? B->ptr[r + 1] - B->ptr[r] : maxlen;
  }
  PatchworkSPMMultRef(d, x, y);
  err  = ErrRatio(n, y, yn, M);
  *tol = 2.0 * (maxlen + 5);
  free(x);
  free(y);
  free(yn);
  free(M);
  return err;
}

static void TestBuild(int *fails, int quick, uint64_t *s)
{
  const int sizes[] = {1, 2, 7, 40, 97, 300};
  const int nsize   = quick ? 5 : 6;

  for (int single = 0; single <= 1; single++)
    for (int perm = 0; perm <= 1; perm++)
      for (int dyadic = 0; dyadic <= 1; dyadic++) {
        int    bad = 0, total_ai = 0, total_ab = 0;
        double worst = 0.0; /* the largest err/tol of the products */

        for (int c = 0; c < nsize; c++)
          for (int rep = 0; rep < (quick ? 2 : 5); rep++) {
            BuildCase        B = MakeBuildCase(sizes[c], perm, dyadic, s);
            PatchworkCSR     A = {B.n, B.ptr, B.col, B.val};
            PatchworkSPMDesc d;
            int              nai = -1, nab = -1;
            double           tol;

            memset(&d, 0, sizeof(d));
            if (PatchworkSPMBuildRef(&A, B.npatch, B.patch_ptr, B.row, B.pos, single, &d, &nai, &nab)) bad++;
            else {
              bad += CheckBuild(&B, single, &d, nai, nab, dyadic);
              worst = ErrMax(worst, BuildMultErr(&B, &d, single, s, &tol) / tol);
              total_ai += nai;
              total_ab += nab;
              PatchworkSPMFreeRef(&d);
            }
            FreeBuildCase(&B);
          }
        Check(fails, (double)bad, 0.0, "build   %s %s positions, %s values: AI, AB, diagonal against the brute force (%d AI, %d AB entries)", single ? "single" : "double", perm ? "random  " : "identity",
              dyadic ? "dyadic" : "random", total_ai, total_ab);
        Check(fails, worst, 1.0, "build   %s %s positions, %s values: mult of the built layout against the dense product (err/tol)", single ? "single" : "double", perm ? "random  " : "identity", dyadic ? "dyadic" : "random");
      }
}

/* Bad arguments: 1, and d left empty (valgrind sees leaks) */
static void TestBuildErrors(int *fails, uint64_t *s)
{
  BuildCase        B = MakeBuildCase(40, 1, 0, s);
  PatchworkCSR     A = {B.n, B.ptr, B.col, B.val};
  PatchworkSPMDesc d;
  int              nai, nab, bad = 0, t;

#define PW_EXPECT_BAD(call) \
  do { \
    memset(&d, 0xff, sizeof(d)); \
    bad += (call) != 1 || d.ai_ptr != NULL || d.patch_ptr != NULL; \
  } while (0)
  PW_EXPECT_BAD(PatchworkSPMBuildRef(NULL, B.npatch, B.patch_ptr, B.row, B.pos, 0, &d, &nai, &nab));
  PW_EXPECT_BAD(PatchworkSPMBuildRef(&A, B.npatch, B.patch_ptr, B.row, NULL, 0, &d, &nai, &nab)); /* row without pos */
  t = B.col[B.ptr[B.n] / 2];
  B.col[B.ptr[B.n] / 2] = B.n; /* a column out of range */
  PW_EXPECT_BAD(PatchworkSPMBuildRef(&A, B.npatch, B.patch_ptr, B.row, B.pos, 1, &d, &nai, &nab));
  B.col[B.ptr[B.n] / 2] = -1;
  PW_EXPECT_BAD(PatchworkSPMBuildRef(&A, B.npatch, B.patch_ptr, NULL, NULL, 0, &d, &nai, &nab));
  B.col[B.ptr[B.n] / 2] = t;
  B.patch_ptr[B.npatch]--; /* patches do not cover n */
  PW_EXPECT_BAD(PatchworkSPMBuildRef(&A, B.npatch, B.patch_ptr, B.row, B.pos, 0, &d, &nai, &nab));
  B.patch_ptr[B.npatch]++;
  PW_EXPECT_BAD(PatchworkSPMBuildRef(&A, B.npatch - 1, B.patch_ptr, B.row, B.pos, 0, &d, &nai, &nab));
  t = B.patch_ptr[1];
  B.patch_ptr[1] = B.patch_ptr[2] + 1; /* decreasing */
  PW_EXPECT_BAD(PatchworkSPMBuildRef(&A, B.npatch, B.patch_ptr, B.row, B.pos, 0, &d, &nai, &nab));
  B.patch_ptr[1] = t;
  t = B.pos[B.row[3]];
  B.pos[B.row[3]] = 4; /* pos is not row's inverse */
  PW_EXPECT_BAD(PatchworkSPMBuildRef(&A, B.npatch, B.patch_ptr, B.row, B.pos, 0, &d, &nai, &nab));
  B.pos[B.row[3]] = t;
  t = B.row[5];
  B.row[5] = B.n; /* out of range */
  PW_EXPECT_BAD(PatchworkSPMBuildRef(&A, B.npatch, B.patch_ptr, B.row, B.pos, 1, &d, &nai, &nab));
  B.row[5] = t;
#undef PW_EXPECT_BAD
  /* and the repaired arguments build */
  bad += PatchworkSPMBuildRef(&A, B.npatch, B.patch_ptr, B.row, B.pos, 1, &d, &nai, &nab) != 0;
  PatchworkSPMFreeRef(&d);
  bad += d.ai_ptr != NULL;
  {
    PatchworkCSR E = {0, NULL, NULL, NULL};
    int          pp0 = 0;

    /* the empty matrix, one empty patch */
    bad += PatchworkSPMBuildRef(&E, 1, (int[]){0, 0}, NULL, NULL, 0, &d, &nai, &nab) != 0 || d.n != 0 || d.max_patch != 0 || nai != 0 || nab != 0;
    PatchworkSPMFreeRef(&d);
    bad += PatchworkSPMBuildRef(&E, 0, &pp0, NULL, NULL, 0, &d, &nai, &nab) != 0;
    PatchworkSPMFreeRef(&d);
  }
  Check(fails, (double)bad, 0.0, "build   bad arguments return 1 and leave d empty (NULL, row without pos, columns n and -1, patch_ptr short, decreasing, row/pos mismatch and out of range); empty matrix");
  FreeBuildCase(&B);
}

int main(int argc, char **argv)
{
  typedef struct {
    const char *name;
    Kind        kind;
    int         grid[3], n, maxp;
  } Case;
  const Case cases[] = {
    {"grid7", GRID7, {7, 6, 5}, 210, 23},
    {"grid27", GRID27, {5, 5, 4}, 100, 31},
    {"local", LOCAL, {0, 0, 0}, 300, 40},
    {"dense", DENSE, {0, 0, 0}, 160, 64},
    {"point", POINT, {0, 0, 0}, 60, 1},
  };
  const int ncase = (int)(sizeof(cases) / sizeof(cases[0]));
  const int inners[] = {1, 2, 3, 5};
  int       fails = 0, quick = argc > 1 && !strcmp(argv[1], "--quick");
  uint64_t  seed = 0x9E3779B97F4A7C15ULL;

  for (int single = 0; single <= 1; single++)
    for (int c = 0; c < ncase; c++) {
      Problem P;

      if (quick && c == 3) continue;
      P = MakeProblem(cases[c].name, cases[c].kind, cases[c].n, cases[c].grid, cases[c].maxp, single, &seed);
      printf("# %s %s: n %d, %d patches of at most %d rows, %d AI and %d AB entries, at most %d entries a row\n", P.name, single ? "single" : "double", P.n, P.npatch, P.maxp,
             P.ai_ptr[P.n], P.ab_ptr[P.n], P.maxlen);
      TestMultBoundary(&fails, &P, &seed);
      TestRowMap(&fails, &P, &seed);
      for (int zg = 0; zg <= 1; zg++)
        for (int q = 0; q < 4; q++) {
          if (quick && q == 2) continue;
          TestRelax(&fails, &P, zg, inners[q], &seed);
        }
      FreeProblem(&P);
    }
  TestSolve(&fails, 0, &seed);
  TestSolve(&fails, 1, &seed);
  TestBuild(&fails, quick, &seed);
  TestBuildErrors(&fails, &seed);
  printf("%s: %d check(s) failed\n", fails ? "FAIL" : "ok  ", fails);
  return fails ? 1 : 0;
}
