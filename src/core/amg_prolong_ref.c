/* The smoothed-aggregation prolongator of one rank's level matrix on the host (contract:
   include/patchwork/amg_kernel.h; the GPU version: cuda/amg_prolong.cu).

   Row i of P = (I - diag(s) A) P~ touches the aggregates of i and of its neighbours. Each row is
   built on its own: its distinct aggregates are collected with a marker array, sorted, then every
   stored a_ik adds a_ik t_k to the entry of agg(k), in storage order; the GPU sums in the same
   order, one thread a row. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <patchwork/amg_kernel.h>
#include "amg_csr_impl.h"

void PatchworkCSRMatrixFree(PatchworkCSRMatrix *M)
{
  if (!M) return;
  free(M->ptr);
  free(M->col);
  free(M->val);
  memset(M, 0, sizeof(*M));
}

/* t_i = z_i / ||z on agg(i)||_2 (z = NULL: 1 / sqrt(|agg(i)|)), 0 where z vanishes on the aggregate;
   zc_J = ||z on aggregate J||_2 when zc is given */
static int TentativeValues(int n, const int *agg, int naggs, const double *z, double *t, double *zc)
{
  double *norm2 = (double *)calloc(naggs ? naggs : 1, sizeof(double));

  if (!norm2) return 1;
  for (int i = 0; i < n; i++) norm2[agg[i]] += z ? z[i] * z[i] : 1.0;
  for (int i = 0; i < n; i++) t[i] = norm2[agg[i]] > 0 ? (z ? z[i] : 1.0) / sqrt(norm2[agg[i]]) : 0.0;
  for (int a = 0; zc && a < naggs; a++) zc[a] = sqrt(norm2[a]);
  free(norm2);
  return 0;
}

static int CheckArguments(const PatchworkCSR *A, const int *agg, int naggs, const double *s, const PatchworkCSRMatrix *P)
{
  if (!A || !P || A->n < 0 || naggs < 0) return 1;
  if (A->n > 0 && (!A->ptr || !A->col || !A->val || !agg || !s)) return 1;
  if (A->n > 0 && A->ptr[0] != 0) return 1;
  for (int i = 0; i < A->n; i++) {
    if (A->ptr[i + 1] < A->ptr[i] || agg[i] < 0 || agg[i] >= naggs) return 1;
    for (int k = A->ptr[i]; k < A->ptr[i + 1]; k++)
      if (A->col[k] < 0 || A->col[k] >= A->n) return 1;
  }
  return 0;
}

int PatchworkSATentativeRef(int n, const int *agg, int naggs, const double *z, double *t, double *zc)
{
  if (n < 0 || naggs < 0 || (n > 0 && (!agg || !t || naggs == 0))) return 1;
  for (int i = 0; i < n; i++)
    if (agg[i] < 0 || agg[i] >= naggs) return 1;
  return TentativeValues(n, agg, naggs, z, t, zc);
}

int PatchworkSASmoothRef(const PatchworkCSR *A, const int *agg, int naggs, const double *t, const double *s, PatchworkCSRMatrix *P)
{
  int     n, *mark = NULL, *slot = NULL, *ptr = NULL, *col = NULL;
  double *val = NULL;

  if (P) memset(P, 0, sizeof(*P));
  if (CheckArguments(A, agg, naggs, s, P) || (A->n > 0 && !t)) return 1;
  n    = A->n;
  mark = (int *)CSRAlloc((size_t)naggs * sizeof(int));
  slot = (int *)CSRAlloc((size_t)naggs * sizeof(int));
  ptr  = (int *)CSRAlloc(((size_t)n + 1) * sizeof(int));
  if (!mark || !slot || !ptr) goto fail;
  /* the pattern: agg(i) and the aggregates of the stored columns, each once */
  for (int a = 0; a < naggs; a++) mark[a] = -1;
  ptr[0] = 0;
  for (int i = 0; i < n; i++) {
    int cnt = 1;

    mark[agg[i]] = i;
    for (int k = A->ptr[i]; k < A->ptr[i + 1]; k++) {
      const int a = agg[A->col[k]];

      if (mark[a] != i) {
        mark[a] = i;
        cnt++;
      }
    }
    ptr[i + 1] = ptr[i] + cnt;
  }
  col = (int *)CSRAlloc((size_t)ptr[n] * sizeof(int));
  val = (double *)CSRAlloc((size_t)ptr[n] * sizeof(double));
  if (!col || !val) goto fail;
  for (int a = 0; a < naggs; a++) mark[a] = -1;
  for (int i = 0; i < n; i++) {
    int *c = col + ptr[i], m = 1;

    c[0]         = agg[i];
    mark[agg[i]] = i;
    for (int k = A->ptr[i]; k < A->ptr[i + 1]; k++) {
      const int a = agg[A->col[k]];

      if (mark[a] != i) {
        mark[a] = i;
        c[m++]  = a;
      }
    }
    CSRSortInts(c, m);
    for (int p = 0; p < m; p++) {
      slot[c[p]]      = ptr[i] + p;
      val[ptr[i] + p] = 0;
    }
    for (int k = A->ptr[i]; k < A->ptr[i + 1]; k++) val[slot[agg[A->col[k]]]] += A->val[k] * t[A->col[k]];
    for (int p = ptr[i]; p < ptr[i + 1]; p++) val[p] = -s[i] * val[p] + (col[p] == agg[i] ? t[i] : 0.0);
  }
  free(mark);
  free(slot);
  P->nrow = n;
  P->ncol = naggs;
  P->nnz  = ptr[n];
  P->ptr  = ptr;
  P->col  = col;
  P->val  = val;
  return 0;
fail:
  free(mark);
  free(slot);
  free(ptr);
  free(col);
  free(val);
  return 1;
}

int PatchworkSAProlongRef(const PatchworkCSR *A, const int *agg, int naggs, const double *z, const double *s, PatchworkCSRMatrix *P, double *zc)
{
  double *t;
  int     err;

  if (P) memset(P, 0, sizeof(*P));
  if (CheckArguments(A, agg, naggs, s, P)) return 1;
  if (!(t = (double *)CSRAlloc((size_t)A->n * sizeof(double)))) return 1;
  err = PatchworkSATentativeRef(A->n, agg, naggs, z, t, zc);
  if (!err) err = PatchworkSASmoothRef(A, agg, naggs, t, s, P);
  free(t);
  return err;
}
