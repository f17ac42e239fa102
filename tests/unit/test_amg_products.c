/* Unit test of the CPU references of PCPATCHAMG's setup products (src/core/amg_prolong_ref.c,
   src/core/amg_galerkin_ref.c; contract include/patchwork/amg_kernel.h), against dense brute force
   written here: P = (I - diag(s) A) P~ with P~ from the aggregates and z, and Ac = P^T A P as dense
   triple sums in long double. Patterns: row i of P must hold exactly {agg(i)} U {agg(k): a_ik
   stored}, row I of Ac exactly the structural pattern (some k, l with P_kI, a_kl, P_lJ stored), both
   ascending; values within (terms) eps M of the dense value, M the same sum over absolute values.
   Cases: random sparse matrices (entries stored in random order, duplicates, empty rows) with random
   aggregates, one aggregate, as many aggregates as rows, z = NULL and random z (one aggregate where z
   vanishes); the next level's near-null vector ||z on J||_2 within (size_J + 2) eps; bad
   arguments return 1.
   The two halves of SAProlong (PatchworkSATentativeRef, PatchworkSASmoothRef):
   - Tentative then Smooth equals SAProlong bit for bit (sizes, ptr, col, val and zc), on the cases
     above and on 0 rows (0 and 3 aggregates); t within its rounding bound of the long double
     t_i = z_i / ||z on agg(i)||_2 (derived at SplitCase).
   - Smooth on an "extended" problem: n owned rows whose columns reach n + ng rows (the ghosts'
     rows empty, their aggregates and t given, as padist.c passes them), t from Tentative on the
     n + ng rows or drawn at random (signs, zeros, 16 binary orders of magnitude), against the
     formula P_iJ = t_i [agg(i) = J] - s_i sum_{k: a_ik stored, agg(k) = J} a_ik t_k evaluated
     entry by entry in long double: the pattern exactly, ghost rows exactly t_i, values within
     (gamma(L + 2) + gamma_ld(L + 2)) M_iJ (derived at ExtendedCase).
   - Bad arguments return 1 and leave P empty.
   PETSc-free; --quick runs fewer cases (for valgrind). */
#include <float.h>
#include <string.h>
#include <patchwork/amg_kernel.h>
#include "unittest.h"
#include "../roundoff.h"

typedef struct {
  int     n, *ptr, *col;
  double *val;
} Sparse;

/* a random sparse n x n matrix: per row the diagonal and up to deg random columns, some duplicated */
static Sparse RandomSparse(int n, int deg, uint64_t *rs)
{
  Sparse A;
  int    nnz = 0;

  A.n   = n;
  A.ptr = (int *)Malloc(sizeof(int) * (n + 1));
  A.col = (int *)Malloc(sizeof(int) * (size_t)n * (deg + 2));
  A.val = (double *)Malloc(sizeof(double) * (size_t)n * (deg + 2));
  for (int i = 0; i < n; i++) {
    const int m = (int)(Rand(rs) * (deg + 1));

    A.ptr[i] = nnz;
    if (Rand(rs) < 0.95) { /* a few rows hold nothing */
      A.col[nnz]   = i;
      A.val[nnz++] = 4 + Rand(rs);
    }
    for (int e = 0; e < m; e++) {
      A.col[nnz]   = e > 0 && Rand(rs) < 0.1 ? A.col[nnz - 1] : (int)(Rand(rs) * n);
      A.val[nnz++] = Rand(rs) - 0.5;
    }
  }
  A.ptr[n] = nnz;
  return A;
}

static void FreeSparse(Sparse *A)
{
  free(A->ptr);
  free(A->col);
  free(A->val);
}

/* rows of M must be ascending and equal the set given by mark[] over [0, ncol) */
static int RowMatches(const PatchworkCSRMatrix *M, int i, const char *mark)
{
  int m = 0;

  for (int c = 0; c < M->ncol; c++) m += mark[c] != 0;
  if (M->ptr[i + 1] - M->ptr[i] != m) return 0;
  for (int p = M->ptr[i]; p < M->ptr[i + 1]; p++)
    if (!mark[M->col[p]] || (p > M->ptr[i] && M->col[p] <= M->col[p - 1])) return 0;
  return 1;
}

static void Case(int *fails, int n, int deg, int naggs, int withz, uint64_t *rs)
{
  Sparse             A = RandomSparse(n, deg, rs);
  PatchworkCSR       a = {A.n, A.ptr, A.col, A.val};
  PatchworkCSRMatrix P, Ac;
  int               *agg = (int *)Malloc(sizeof(int) * n);
  double            *z = (double *)Malloc(sizeof(double) * n), *s = (double *)Malloc(sizeof(double) * n);
  long double       *Pd = (long double *)Malloc(sizeof(long double) * n * naggs), *Pm = (long double *)Malloc(sizeof(long double) * n * naggs);
  long double       *norm2 = (long double *)Malloc(sizeof(long double) * naggs);
  double            *zc = (double *)Malloc(sizeof(double) * naggs);
  int               *size = (int *)Malloc(sizeof(int) * naggs);
  char              *mark = (char *)Malloc(naggs), *pat = (char *)Malloc((size_t)n * naggs);
  double             errP = 0, errA = 0, errZ = 0;
  int                patP = 1, patA = 1, maxrow = 1;

  for (int i = 0; i < n; i++) {
    agg[i] = (int)(Rand(rs) * naggs);
    z[i]   = agg[i] == 0 && naggs > 1 ? 0.0 : 0.5 + Rand(rs); /* z vanishes on aggregate 0 */
    s[i]   = 0.1 + Rand(rs);
    maxrow = A.ptr[i + 1] - A.ptr[i] + 1 > maxrow ? A.ptr[i + 1] - A.ptr[i] + 1 : maxrow;
  }
  /* dense P and |P|-majorant, and P's pattern */
  for (int i = 0; i < n; i++) {
    norm2[agg[i]] += withz ? (long double)z[i] * z[i] : 1.0L;
    size[agg[i]]++;
  }
  for (int i = 0; i < n; i++) {
    const long double ti = norm2[agg[i]] > 0 ? (withz ? z[i] : 1.0L) / sqrtl(norm2[agg[i]]) : 0;

    Pd[(size_t)i * naggs + agg[i]] += ti;
    Pm[(size_t)i * naggs + agg[i]] += fabsl(ti);
    pat[(size_t)i * naggs + agg[i]] = 1;
    for (int k = A.ptr[i]; k < A.ptr[i + 1]; k++) {
      const int         j  = A.col[k];
      const long double tj = norm2[agg[j]] > 0 ? (withz ? z[j] : 1.0L) / sqrtl(norm2[agg[j]]) : 0;

      Pd[(size_t)i * naggs + agg[j]] -= s[i] * A.val[k] * tj;
      Pm[(size_t)i * naggs + agg[j]] += fabsl(s[i] * A.val[k] * tj);
      pat[(size_t)i * naggs + agg[j]] = 1;
    }
  }
  if (PatchworkSAProlongRef(&a, agg, naggs, withz ? z : NULL, s, &P, zc)) {
    Check(fails, 1, 0, "prolongator n=%d naggs=%d: the reference failed", n, naggs);
    goto done;
  }
  /* the next level's near-null-space vector ||z on J||_2: a sum of size_J squares and a root */
  for (int J = 0; J < naggs; J++) errZ = ErrMax(errZ, (double)(fabsl(zc[J] - sqrtl(norm2[J])) / (sqrtl(norm2[J]) * DBL_EPSILON * (size[J] + 2) + 1e-300)));
  Check(fails, errZ, 1, "prolongator n=%d naggs=%d%s: next level's near-null vector, in (size + 2) eps", n, naggs, withz ? " z" : "");
  for (int i = 0; i < n; i++) {
    patP = patP && RowMatches(&P, i, pat + (size_t)i * naggs);
    for (int p = P.ptr[i]; patP && p < P.ptr[i + 1]; p++) {
      const size_t e = (size_t)i * naggs + P.col[p];

      errP = ErrMax(errP, (double)(fabsl(P.val[p] - Pd[e]) / (Pm[e] * DBL_EPSILON + 1e-300)));
    }
  }
  Check(fails, patP ? 0 : 1, 0, "prolongator n=%d deg<=%d naggs=%d%s: pattern", n, deg, naggs, withz ? " z" : "");
  Check(fails, errP, maxrow + 2, "prolongator n=%d deg<=%d naggs=%d%s: values, in eps |P|", n, deg, naggs, withz ? " z" : "");

  /* Ac = P^T A P densely from the reference's P (so only the product is under test) */
  if (PatchworkGalerkinRef(&a, &P, &Ac)) {
    Check(fails, 1, 0, "Galerkin n=%d naggs=%d: the reference failed", n, naggs);
    PatchworkCSRMatrixFree(&P);
    goto done;
  }
  {
    long double *row = (long double *)Malloc(sizeof(long double) * naggs), *rowm = (long double *)Malloc(sizeof(long double) * naggs);
    long        terms = 0;

    for (int I = 0; I < naggs && patA; I++) {
      memset(row, 0, sizeof(long double) * naggs);
      memset(rowm, 0, sizeof(long double) * naggs);
      memset(mark, 0, naggs);
      terms = 0;
      for (int k = 0; k < n; k++)
        for (int q = P.ptr[k]; q < P.ptr[k + 1]; q++) {
          if (P.col[q] != I) continue;
          for (int e = A.ptr[k]; e < A.ptr[k + 1]; e++) {
            const int l = A.col[e];

            for (int r = P.ptr[l]; r < P.ptr[l + 1]; r++) {
              row[P.col[r]] += (long double)P.val[q] * A.val[e] * P.val[r];
              rowm[P.col[r]] += fabsl((long double)P.val[q] * A.val[e] * P.val[r]);
              mark[P.col[r]] = 1;
              terms++;
            }
          }
        }
      patA = patA && RowMatches(&Ac, I, mark);
      for (int p = Ac.ptr[I]; patA && p < Ac.ptr[I + 1]; p++) errA = ErrMax(errA, (double)(fabsl(Ac.val[p] - row[Ac.col[p]]) / (rowm[Ac.col[p]] * DBL_EPSILON * (terms + 3) + 1e-300)));
    }
    free(row);
    free(rowm);
  }
  Check(fails, patA && Ac.nrow == naggs && Ac.ncol == naggs ? 0 : 1, 0, "Galerkin n=%d deg<=%d naggs=%d%s: pattern", n, deg, naggs, withz ? " z" : "");
  Check(fails, errA, 1, "Galerkin n=%d deg<=%d naggs=%d%s: values, in (terms + 3) eps |P^T||A||P|", n, deg, naggs, withz ? " z" : "");
  PatchworkCSRMatrixFree(&P);
  PatchworkCSRMatrixFree(&Ac);
done:
  FreeSparse(&A);
  free(agg);
  free(z);
  free(s);
  free(Pd);
  free(Pm);
  free(norm2);
  free(zc);
  free(size);
  free(mark);
  free(pat);
}

static void BadArguments(int *fails)
{
  uint64_t           rs  = 99;
  Sparse             A   = RandomSparse(20, 3, &rs);
  PatchworkCSR       a   = {A.n, A.ptr, A.col, A.val};
  int                agg[20] = {0};
  double             s[20];
  PatchworkCSRMatrix P, Ac;

  for (int i = 0; i < 20; i++) s[i] = 1;
  agg[7] = 5;
  Check(fails, PatchworkSAProlongRef(&a, agg, 5, NULL, s, &P, NULL) == 1 ? 0 : 1, 0, "prolongator: an aggregate out of range is refused");
  agg[7] = 0;
  Check(fails, PatchworkSAProlongRef(&a, agg, 5, NULL, NULL, &P, NULL) == 1 ? 0 : 1, 0, "prolongator: no scaling is refused");
  A.col[3] = 20;
  Check(fails, PatchworkSAProlongRef(&a, agg, 5, NULL, s, &P, NULL) == 1 ? 0 : 1, 0, "prolongator: a column out of range is refused");
  A.col[3] = 0;
  if (!PatchworkSAProlongRef(&a, agg, 5, NULL, s, &P, NULL)) {
    PatchworkCSR short_a = a;

    short_a.n = 19;
    Check(fails, PatchworkGalerkinRef(&short_a, &P, &Ac) == 1 ? 0 : 1, 0, "Galerkin: P with the wrong number of rows is refused");
    Check(fails, PatchworkGalerkinRef(&a, NULL, &Ac) == 1 ? 0 : 1, 0, "Galerkin: no P is refused");
    PatchworkCSRMatrixFree(&P);
  }
  FreeSparse(&A);
}

/* ---------------------------------------------------------------------------------------------
   The two halves of SAProlong: PatchworkSATentativeRef and PatchworkSASmoothRef */

/* sizes, ptr, col and val bit for bit */
static int SameCSR(const PatchworkCSRMatrix *A, const PatchworkCSRMatrix *B)
{
  if (A->nrow != B->nrow || A->ncol != B->ncol || A->nnz != B->nnz || !A->ptr || !B->ptr) return 0;
  if (memcmp(A->ptr, B->ptr, sizeof(int) * ((size_t)A->nrow + 1))) return 0;
  if (A->nnz && (memcmp(A->col, B->col, sizeof(int) * (size_t)A->nnz) || memcmp(A->val, B->val, sizeof(double) * (size_t)A->nnz))) return 0;
  return 1;
}

static int IsEmpty(const PatchworkCSRMatrix *M)
{
  return M->nrow == 0 && M->ncol == 0 && M->nnz == 0 && !M->ptr && !M->col && !M->val;
}

/* The bound on |t - T| / |T| of t = fl(z_i / fl(sqrt(fl(sum_J z_j^2)))), T = z_i / ||z on J||_2 exact,
   m = |J|, unit roundoff u. The sum of m squares (positive terms, any order) is within gamma(m) =: g
   relative of the exact S (Higham, the dot product bound); sqrt(S (1 + e)) = sqrt(S) (1 + r) with
   |r| = |e| / (1 + sqrt(1 + e)) <= g / (2 - g) (sqrt(1 - g) >= 1 - g); the root and the division
   round once each: t / T = (1 + d2) / ((1 + r)(1 + d1)), so
     |t / T - 1| <= (1 + u) / ((1 - r)(1 - u)) - 1 = (2u + r (1 - u)) / ((1 - r)(1 - u)),
   evaluated in the second form: in the first, 1 + u rounds to 1. */
static double TentativeBound(int m, double u)
{
  const double g = Gamma(m, u), r = g / (2 - g);

  return (2 * u + r * (1 - u)) / ((1 - r) * (1 - u));
}

/* (a) SAProlong against Tentative then Smooth, bit for bit: P (sizes, ptr, col, val) and zc; t
   against the long double value: the double t within h T and the long double one within h_ld T
   (TentativeBound with the measured long double roundoff, which is double's under valgrind), so
   |t - T_ld| <= (h + h_ld) |T| <= (h + h_ld) / (1 - h_ld) |T_ld|. Tentative without zc gives the
   same t. */
static void SplitCase(int *fails, int n, int deg, int naggs, int withz, uint64_t *rs)
{
  Sparse             A = RandomSparse(n, deg, rs);
  PatchworkCSR       a = {A.n, A.ptr, A.col, A.val};
  PatchworkCSRMatrix P1, P2;
  const double       u = DBL_EPSILON / 2, uld = LongDoubleRoundoff();
  int               *agg = (int *)Malloc(sizeof(int) * n), *size = (int *)Malloc(sizeof(int) * naggs);
  double            *z = (double *)Malloc(sizeof(double) * n), *s = (double *)Malloc(sizeof(double) * n);
  double            *t = (double *)Malloc(sizeof(double) * n), *t2 = (double *)Malloc(sizeof(double) * n);
  double            *zc1 = (double *)Malloc(sizeof(double) * naggs), *zc2 = (double *)Malloc(sizeof(double) * naggs);
  long double       *norm2 = (long double *)Malloc(sizeof(long double) * naggs);
  double             worst = 0;
  int                r1, r2, r3, r4, same;

  for (int i = 0; i < n; i++) {
    agg[i] = (int)(Rand(rs) * naggs);
    z[i]   = agg[i] == 0 && naggs > 1 ? 0.0 : ldexp(Rand(rs) - 0.5, (int)(Rand(rs) * 17) - 8); /* signs, 2^[-9, 8]; z vanishes on aggregate 0 */
    s[i]   = 0.1 + Rand(rs);
    size[agg[i]]++;
    norm2[agg[i]] += withz ? (long double)z[i] * z[i] : 1.0L;
  }
  for (int J = 0; J < naggs; J++) zc1[J] = zc2[J] = 1e300; /* stale values must not survive */
  r1 = PatchworkSAProlongRef(&a, agg, naggs, withz ? z : NULL, s, &P1, zc1);
  r2 = PatchworkSATentativeRef(n, agg, naggs, withz ? z : NULL, t, zc2);
  r3 = r2 ? 1 : PatchworkSASmoothRef(&a, agg, naggs, t, s, &P2);
  r4 = PatchworkSATentativeRef(n, agg, naggs, withz ? z : NULL, t2, NULL);
  if (r1 || r2 || r3 || r4) {
    Check(fails, 1, 0, "tentative then smooth n=%d naggs=%d: returned %d %d %d %d", n, naggs, r1, r2, r3, r4);
    if (!r1) PatchworkCSRMatrixFree(&P1);
    if (!r3) PatchworkCSRMatrixFree(&P2);
    goto done;
  }
  same = SameCSR(&P1, &P2) && P2.nrow == n && P2.ncol == naggs && (naggs == 0 || !memcmp(zc1, zc2, sizeof(double) * naggs));
  Check(fails, !same, 0, "tentative then smooth n=%d deg<=%d naggs=%d%s: P (%d entries) and zc equal SAProlong's bit for bit", n, deg, naggs, withz ? " z" : "", P1.nnz);
  Check(fails, n > 0 && memcmp(t, t2, sizeof(double) * n), 0, "tentative n=%d naggs=%d%s: t without zc is the same", n, naggs, withz ? " z" : "");
  for (int i = 0; i < n; i++) {
    const long double T  = norm2[agg[i]] > 0 ? (withz ? z[i] : 1.0L) / sqrtl(norm2[agg[i]]) : 0.0L;
    const double      h  = TentativeBound(size[agg[i]], u), hl = TentativeBound(size[agg[i]], uld);
    const double      tol = (h + hl) / (1 - hl) * (double)fabsl(T), err = (double)fabsl(t[i] - T);

    worst = ErrMax(worst, tol > 0 ? err / tol : (err == 0 ? 0 : INFINITY));
  }
  Check(fails, worst, 1, "tentative n=%d naggs=%d%s: t against long double, worst err / bound", n, naggs, withz ? " z" : "");
  PatchworkCSRMatrixFree(&P1);
  PatchworkCSRMatrixFree(&P2);
done:
  FreeSparse(&A);
  free(agg);
  free(size);
  free(z);
  free(s);
  free(t);
  free(t2);
  free(zc1);
  free(zc2);
  free(norm2);
}

/* (b) Smooth on an extended problem: N = n + ng rows, rows n..N-1 (the ghosts) empty, the owned rows'
   columns anywhere in [0, N) (random order, some repeated), aggregates of all N rows in [0, naggs),
   t from Tentative on the N rows (tsrc 0, z with signs and zeros) or drawn (tsrc 1: signs, a tenth
   zero, 2^[-8, 8]), a_ik in 2^[-8, 8] with signs (entries cancel).
   Bound. The reference forms v = sum of the m_J <= L products a_ik t_k of the row's entries with
   agg(k) = J (each rounded, any order: within gamma(m_J) sum |a_ik t_k|), then fl(-s_i v) (one
   rounding) and fl(. + t_i) (one): |P_iJ - exact| <= gamma(L + 2) M_iJ with
   M_iJ = |t_i| [agg(i) = J] + |s_i| sum_{k: agg(k) = J} |a_ik t_k|, L the row's stored entries.
   The long double evaluation sums L + 1 terms of two products each: within gamma_ld(L + 2) M_iJ
   (gamma_ld with the measured long double roundoff; double's under valgrind), and its M_iJ, a sum
   of the same non-negative terms, is at least (1 - gamma_ld(L + 2)) M_iJ. Hence
     tol_iJ = (gamma(L + 2) + gamma_ld(L + 2)) M_ld / (1 - gamma_ld(L + 2)),
   at most (L + 2) ulps of the row's largest |s_i a_ik t_k| times L + 1. Ghost rows: exactly t_i in
   column agg(i) (an empty sum: -s_i 0 + t_i = t_i). */
static void ExtendedCase(int *fails, int n, int ng, int deg, int naggs, int tsrc, uint64_t *rs)
{
  const int          N = n + ng;
  const double       u = DBL_EPSILON / 2, uld = LongDoubleRoundoff();
  int               *ptr = (int *)Malloc(sizeof(int) * (N + 1)), *col = (int *)Malloc(sizeof(int) * (size_t)n * (deg + 2));
  double            *val = (double *)Malloc(sizeof(double) * (size_t)n * (deg + 2));
  int               *agg = (int *)Malloc(sizeof(int) * N), *touched = (int *)Malloc(sizeof(int) * naggs);
  double            *t = (double *)Malloc(sizeof(double) * N), *z = (double *)Malloc(sizeof(double) * N), *s = (double *)Malloc(sizeof(double) * N);
  long double       *Pd = (long double *)Malloc(sizeof(long double) * naggs), *Pm = (long double *)Malloc(sizeof(long double) * naggs);
  char              *mark = (char *)Malloc(naggs);
  PatchworkCSR       a;
  PatchworkCSRMatrix P;
  int                nnz = 0, ret, pattern = 1, ghosts = 1, structure, maxrow = 0;
  double             worst = 0, werr = 0, wtol = 0;

  ptr[0] = 0;
  for (int i = 0; i < N; i++) {
    if (i < n) {
      const int m = (int)(Rand(rs) * (deg + 1));

      if (Rand(rs) < 0.95) { /* a few owned rows hold nothing */
        col[nnz]   = i;
        val[nnz++] = ldexp(1 + Rand(rs), (int)(Rand(rs) * 17) - 8);
      }
      for (int e = 0; e < m; e++) {
        col[nnz]   = e > 0 && Rand(rs) < 0.1 ? col[nnz - 1] : (int)(Rand(rs) * N);
        val[nnz++] = ldexp(Rand(rs) - 0.5, (int)(Rand(rs) * 17) - 8);
      }
    }
    ptr[i + 1] = nnz;
    maxrow     = ptr[i + 1] - ptr[i] > maxrow ? ptr[i + 1] - ptr[i] : maxrow;
    agg[i]     = (int)(Rand(rs) * naggs);
    s[i]       = 0.1 + Rand(rs);
    z[i]       = Rand(rs) < 0.1 ? 0.0 : ldexp(Rand(rs) - 0.5, (int)(Rand(rs) * 17) - 8);
    t[i]       = z[i];
  }
  a.n   = N;
  a.ptr = ptr;
  a.col = col;
  a.val = val;
  if (tsrc == 0 && PatchworkSATentativeRef(N, agg, naggs, z, t, NULL)) {
    Check(fails, 1, 0, "smooth, extended n=%d ghosts=%d naggs=%d: Tentative failed", n, ng, naggs);
    goto done;
  }
  memset(&P, 0xA5, sizeof(P)); /* junk that must be replaced */
  ret = PatchworkSASmoothRef(&a, agg, naggs, t, s, &P);
  if (ret) {
    Check(fails, ret, 0, "smooth, extended n=%d ghosts=%d naggs=%d: returned nonzero", n, ng, naggs);
    goto done;
  }
  structure = P.nrow == N && P.ncol == naggs && P.ptr && P.ptr[0] == 0 && P.ptr[N] == P.nnz;
  for (int i = 0; structure && i < N; i++) structure = P.ptr[i + 1] >= P.ptr[i];
  for (int i = 0; structure && i < N; i++) {
    const int L = ptr[i + 1] - ptr[i];
    int       nt = 0;

    /* the dense row: P_iJ and M_iJ at the touched aggregates */
    mark[agg[i]]    = 1;
    touched[nt++]   = agg[i];
    Pd[agg[i]]      = t[i];
    Pm[agg[i]]      = fabsl((long double)t[i]);
    for (int k = ptr[i]; k < ptr[i + 1]; k++) {
      const int         J = agg[col[k]];
      const long double p = (long double)s[i] * val[k] * t[col[k]];

      if (!mark[J]) {
        mark[J]       = 1;
        touched[nt++] = J;
        Pd[J] = Pm[J] = 0;
      }
      Pd[J] -= p;
      Pm[J] += fabsl(p);
    }
    pattern = pattern && P.ptr[i + 1] - P.ptr[i] == nt;
    for (int p = P.ptr[i]; pattern && p < P.ptr[i + 1]; p++) {
      const int    J   = P.col[p];
      const double gl  = Gamma(L + 2, uld);
      double       tol, err, r;

      pattern = J >= 0 && J < naggs && mark[J] && (p == P.ptr[i] || J > P.col[p - 1]);
      if (!pattern) break;
      tol = (Gamma(L + 2, u) + gl) * (double)Pm[J] / (1 - gl);
      err = (double)fabsl(P.val[p] - Pd[J]);
      r   = tol > 0 ? err / tol : (err == 0 ? 0 : INFINITY);
      if (ErrMaxTakes(worst, r)) {
        werr = err;
        wtol = tol;
      }
      worst = ErrMax(worst, r);
      if (i >= n) ghosts = ghosts && P.val[p] == t[i] && J == agg[i];
    }
    for (int q = 0; q < nt; q++) mark[touched[q]] = 0;
  }
  Check(fails, !structure, 0, "smooth, extended n=%d ghosts=%d deg<=%d naggs=%d%s: %d x %d, ptr from 0, monotone, to nnz %d", n, ng, deg, naggs, tsrc ? " t drawn" : "", P.nrow, P.ncol, P.nnz);
  Check(fails, !(structure && pattern), 0, "smooth, extended n=%d ghosts=%d deg<=%d naggs=%d%s: pattern {agg(i)} U {agg(k): a_ik stored}, ascending", n, ng, deg, naggs, tsrc ? " t drawn" : "");
  Check(fails, structure && pattern && ghosts ? 0 : 1, 0, "smooth, extended n=%d ghosts=%d naggs=%d%s: ghost rows hold exactly t_i in column agg(i)", n, ng, naggs, tsrc ? " t drawn" : "");
  Check(fails, structure && pattern ? worst : INFINITY, 1, "smooth, extended n=%d ghosts=%d deg<=%d naggs=%d%s: values vs long double, worst err / bound (rows <= %d; there %.2e / %.2e)", n, ng, deg, naggs, tsrc ? " t drawn" : "", maxrow, werr, wtol);
  PatchworkCSRMatrixFree(&P);
done:
  free(ptr);
  free(col);
  free(val);
  free(agg);
  free(touched);
  free(t);
  free(z);
  free(s);
  free(Pd);
  free(Pm);
  free(mark);
}

/* (d) Tentative and Smooth refuse bad arguments with 1; Smooth leaves P empty */
static void SplitBadArguments(int *fails)
{
  uint64_t           rs = 77;
  Sparse             A  = RandomSparse(20, 3, &rs);
  PatchworkCSR       a  = {A.n, A.ptr, A.col, A.val}, b;
  int                agg[20];
  double             s[20], t[20], zc[5];
  PatchworkCSRMatrix P;

  for (int i = 0; i < 20; i++) {
    agg[i] = i % 5;
    s[i]   = 1;
    t[i]   = 0.5;
  }
  /* Tentative */
  Check(fails, PatchworkSATentativeRef(-1, agg, 5, NULL, t, zc) != 1, 0, "tentative: n < 0 is refused");
  Check(fails, PatchworkSATentativeRef(20, agg, -1, NULL, t, zc) != 1, 0, "tentative: naggs < 0 is refused");
  Check(fails, PatchworkSATentativeRef(20, NULL, 5, NULL, t, zc) != 1, 0, "tentative: NULL agg is refused");
  Check(fails, PatchworkSATentativeRef(20, agg, 5, NULL, NULL, zc) != 1, 0, "tentative: NULL t is refused");
  Check(fails, PatchworkSATentativeRef(20, agg, 0, NULL, t, NULL) != 1, 0, "tentative: rows without aggregates are refused");
  agg[13] = 5;
  Check(fails, PatchworkSATentativeRef(20, agg, 5, NULL, t, zc) != 1, 0, "tentative: an aggregate = naggs is refused");
  agg[13] = -1;
  Check(fails, PatchworkSATentativeRef(20, agg, 5, NULL, t, zc) != 1, 0, "tentative: an aggregate < 0 is refused");
  agg[13] = 3;
  Check(fails, PatchworkSATentativeRef(0, NULL, 0, NULL, NULL, NULL) != 0, 0, "tentative: no rows, NULL arrays, accepted");
  for (int J = 0; J < 5; J++) zc[J] = 1e300;
  Check(fails, PatchworkSATentativeRef(0, NULL, 5, NULL, NULL, zc) != 0 || zc[0] != 0 || zc[4] != 0, 0, "tentative: no rows, 5 aggregates: zc = 0");
  Check(fails, PatchworkSATentativeRef(20, agg, 5, NULL, t, zc) != 0, 0, "tentative: the unspoilt arguments are accepted");

  /* Smooth: P is set to junk before each call and must come back empty */
#define SMOOTH_REFUSES(A_, agg_, naggs_, t_, s_, what) \
  do { \
    int r_; \
    memset(&P, 0xA5, sizeof(P)); \
    r_ = PatchworkSASmoothRef(A_, agg_, naggs_, t_, s_, &P); \
    Check(fails, r_ != 1 || !IsEmpty(&P), 0, "smooth: %s is refused, P empty", what); \
    if (r_ == 0) PatchworkCSRMatrixFree(&P); \
  } while (0)
  SMOOTH_REFUSES(NULL, agg, 5, t, s, "NULL A");
  Check(fails, PatchworkSASmoothRef(&a, agg, 5, t, s, NULL) != 1, 0, "smooth: NULL P is refused");
  b   = a;
  b.n = -1;
  SMOOTH_REFUSES(&b, agg, 5, t, s, "n < 0");
  SMOOTH_REFUSES(&a, agg, -1, t, s, "naggs < 0");
  SMOOTH_REFUSES(&a, agg, 0, t, s, "rows without aggregates");
  b     = a;
  b.ptr = NULL;
  SMOOTH_REFUSES(&b, agg, 5, t, s, "NULL ptr");
  b     = a;
  b.col = NULL;
  SMOOTH_REFUSES(&b, agg, 5, t, s, "NULL col");
  b     = a;
  b.val = NULL;
  SMOOTH_REFUSES(&b, agg, 5, t, s, "NULL val");
  SMOOTH_REFUSES(&a, NULL, 5, t, s, "NULL agg");
  SMOOTH_REFUSES(&a, agg, 5, NULL, s, "NULL t");
  SMOOTH_REFUSES(&a, agg, 5, t, NULL, "NULL s");
  agg[13] = 5;
  SMOOTH_REFUSES(&a, agg, 5, t, s, "an aggregate = naggs");
  agg[13] = -1;
  SMOOTH_REFUSES(&a, agg, 5, t, s, "an aggregate < 0");
  agg[13] = 3;
  {
    const int save = A.col[A.ptr[5]];

    A.col[A.ptr[5]] = 20;
    SMOOTH_REFUSES(&a, agg, 5, t, s, "a column = n");
    A.col[A.ptr[5]] = -1;
    SMOOTH_REFUSES(&a, agg, 5, t, s, "a column < 0");
    A.col[A.ptr[5]] = save;
  }
  {
    int *ptr = (int *)Malloc(sizeof(int) * 21);

    memcpy(ptr, A.ptr, sizeof(int) * 21);
    ptr[6] = ptr[7] + 1; /* row 6 ends before it starts */
    b      = a;
    b.ptr  = ptr;
    SMOOTH_REFUSES(&b, agg, 5, t, s, "decreasing row pointers");
    free(ptr);
  }
#undef SMOOTH_REFUSES
  b     = a;
  b.n   = 0;
  b.ptr = NULL;
  b.col = NULL;
  b.val = NULL;
  {
    const int r = PatchworkSASmoothRef(&b, NULL, 0, NULL, NULL, &P);

    Check(fails, r != 0 || P.nrow != 0 || P.ncol != 0 || P.nnz != 0 || !P.ptr || P.ptr[0] != 0, 0, "smooth: no rows, NULL arrays: an empty 0 x 0 P");
    if (!r) PatchworkCSRMatrixFree(&P);
  }
  {
    const int r = PatchworkSASmoothRef(&a, agg, 5, t, s, &P);

    Check(fails, r != 0, 0, "smooth: the unspoilt arguments are accepted");
    if (!r) PatchworkCSRMatrixFree(&P);
  }
  FreeSparse(&A);
}

int main(int argc, char **argv)
{
  int      fails = 0, quick = argc > 1 && !strcmp(argv[1], "--quick");
  uint64_t rs    = 12345;

  {
    const int ns[] = {1, 7, 60, 300}, degs[] = {0, 3, 12};

    for (int a = 0; a < (quick ? 3 : 4); a++)
      for (int d = 0; d < 3; d++) {
        const int n = ns[a], naggs[] = {1, n > 3 ? n / 4 : 1, n};

        for (int g = 0; g < 3; g++)
          for (int withz = 0; withz < 2; withz++) Case(&fails, n, degs[d], naggs[g], withz, &rs);
      }
  }
  BadArguments(&fails);
  { /* the two halves: Tentative then Smooth against SAProlong */
    const int ns[] = {0, 1, 7, 60, 300}, degs[] = {0, 3, 12};

    for (int a = 0; a < (quick ? 4 : 5); a++)
      for (int d = 0; d < 3; d++) {
        const int n = ns[a], naggs[] = {n ? 1 : 0, n > 3 ? n / 4 : 3, n};

        for (int g = 0; g < 3; g++)
          for (int withz = 0; withz < 2; withz++) SplitCase(&fails, n, degs[d], naggs[g], withz, &rs);
      }
  }
  { /* Smooth on the extended problem: owned rows n, ghosts ng */
    const int sizes[][2] = {{0, 0}, {0, 5}, {1, 0}, {1, 3}, {7, 4}, {60, 30}, {300, 150}, {1000, 700}}, degs[] = {0, 3, 12};

    for (int c = 0; c < (quick ? 7 : 8); c++)
      for (int d = 0; d < 3; d++) {
        const int n = sizes[c][0], ng = sizes[c][1], N = n + ng, naggs[] = {N ? 1 : 0, N > 3 ? N / 4 : 2, N};

        for (int g = 0; g < 3; g++)
          for (int tsrc = 0; tsrc < 2; tsrc++) ExtendedCase(&fails, n, ng, degs[d], naggs[g], tsrc, &rs);
      }
  }
  SplitBadArguments(&fails);
  printf("%s\n", fails ? "FAIL" : "all ok");
  return fails != 0;
}
