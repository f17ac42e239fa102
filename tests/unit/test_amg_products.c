/* Unit test of the CPU references of PCPATCHAMG's setup products (src/core/amg_prolong_ref.c,
   src/core/amg_galerkin_ref.c; contract include/patchwork/amg_kernel.h), against dense brute force
   written here: P = (I - diag(s) A) P~ with P~ from the aggregates and z, and Ac = P^T A P as dense
   triple sums in long double. Patterns: row i of P must hold exactly {agg(i)} U {agg(k): a_ik
   stored}, row I of Ac exactly the structural pattern (some k, l with P_kI, a_kl, P_lJ stored), both
   ascending; values within (terms) eps M of the dense value, M the same sum over absolute values.
   Cases: random sparse matrices (entries stored in random order, duplicates, empty rows) with random
   aggregates, one aggregate, as many aggregates as rows, z = NULL and random z (one aggregate where z
   vanishes); the next level's near-null vector ||z on J||_2 within (size_J + 2) eps; bad
   arguments return 1. PETSc-free; --quick runs fewer cases (for valgrind). */
#include <float.h>
#include <string.h>
#include <patchwork/amg_kernel.h>
#include "unittest.h"

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
  printf("%s\n", fails ? "FAIL" : "all ok");
  return fails != 0;
}
