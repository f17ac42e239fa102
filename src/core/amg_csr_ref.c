/* The CPU reference of the device CSR operations of PCPATCHAMG's coarse levels: y = z + M x,
   T = M^T and the diagonal (contract: include/patchwork/amg_kernel.h; the GPU versions:
   cuda/amg_csr.cu, cuda/amg_galerkin.cu).

   Mult (and MultSingle, with float values) sums a row in storage order and adds z last; the GPU
   may sum in another order, so the two
   agree up to rounding. Transpose is a counting sort of M's entries by column: count, prefix sum,
   then a fill that visits M's rows in ascending order, so every row of T lists them ascending
   without a sort. Diagonal adds a row's entries in column i in storage order, from 0. */
#include <stdlib.h>
#include <string.h>
#include <patchwork/amg_kernel.h>
#include "amg_csr_impl.h"

/* Sizes and pointers only: arrays with entries must be there (ptr has nrow + 1 entries; with no
   rows it is never read). The contents are trusted: the matrices come from the library. */
static int CheckMatrix(const PatchworkCSRMatrix *M)
{
  if (!M || M->nrow < 0 || M->ncol < 0 || M->nnz < 0) return 1;
  if (M->nrow > 0 && !M->ptr) return 1;
  if (M->nnz > 0 && (!M->col || !M->val)) return 1;
  return 0;
}

int PatchworkCSRMultRef(const PatchworkCSRMatrix *M, const double *x, const double *z, double *y)
{
  if (CheckMatrix(M) || (M->nrow > 0 && !y) || (M->nnz > 0 && !x)) return 1; /* x is read only through entries */
  for (int i = 0; i < M->nrow; i++) {
    double s = 0.0;

    for (int e = M->ptr[i]; e < M->ptr[i + 1]; e++) s += M->val[e] * x[M->col[e]];
    y[i] = z ? z[i] + s : s; /* z[i] is read before y[i] is written: z may alias y */
  }
  return 0;
}

int PatchworkCSRMultSingleRef(const PatchworkCSRMatrix *M, const float *val, const double *x, const double *z, double *y)
{
  if (!M || M->nrow < 0 || M->ncol < 0 || M->nnz < 0 || (M->nrow > 0 && !M->ptr) || (M->nnz > 0 && (!M->col || !val || !x)) || (M->nrow > 0 && !y)) return 1;
  for (int i = 0; i < M->nrow; i++) {
    double s = 0.0;

    for (int e = M->ptr[i]; e < M->ptr[i + 1]; e++) s += (double)val[e] * x[M->col[e]];
    y[i] = z ? z[i] + s : s;
  }
  return 0;
}

int PatchworkCSRTransposeRef(const PatchworkCSRMatrix *M, PatchworkCSRMatrix *T)
{
  const int nr = M ? M->nrow : 0, nc = M ? M->ncol : 0, nnz = M ? M->nnz : 0;
  int      *ptr = NULL, *next = NULL, *col = NULL;
  double   *val = NULL;

  if (T) memset(T, 0, sizeof(*T)); /* empty on every failure */
  if (!T || CheckMatrix(M)) return 1;
  /* the whole structure, unlike Mult: T's entries are written through M's columns, and a bad
     one would write outside T; the check costs less than the transpose */
  if (nr > 0 && (M->ptr[0] != 0 || M->ptr[nr] != nnz)) return 1;
  if (nr == 0 && nnz != 0) return 1;
  for (int i = 0; i < nr; i++)
    if (M->ptr[i + 1] < M->ptr[i]) return 1;
  for (int e = 0; e < nnz; e++)
    if (M->col[e] < 0 || M->col[e] >= nc) return 1;

  ptr  = (int *)CSRAlloc(((size_t)nc + 1) * sizeof(int));
  next = (int *)CSRAlloc(((size_t)nc + 1) * sizeof(int));
  col  = (int *)CSRAlloc((size_t)nnz * sizeof(int));
  val  = (double *)CSRAlloc((size_t)nnz * sizeof(double));
  if (!ptr || !next || !col || !val) {
    free(ptr);
    free(next);
    free(col);
    free(val);
    return 1;
  }
  memset(ptr, 0, ((size_t)nc + 1) * sizeof(int));
  for (int e = 0; e < nnz; e++) ptr[M->col[e] + 1]++;
  for (int j = 0; j < nc; j++) ptr[j + 1] += ptr[j];
  memcpy(next, ptr, ((size_t)nc + 1) * sizeof(int));
  for (int i = 0; i < nr; i++) /* rows ascending: every row of T comes out sorted */
    for (int e = M->ptr[i]; e < M->ptr[i + 1]; e++) {
      const int t = next[M->col[e]]++;

      col[t] = i;
      val[t] = M->val[e];
    }
  free(next);
  T->nrow = nc;
  T->ncol = nr;
  T->nnz  = nnz;
  T->ptr  = ptr;
  T->col  = col;
  T->val  = val;
  return 0;
}

int PatchworkCSRDiagonalRef(const PatchworkCSRMatrix *M, double *d)
{
  if (CheckMatrix(M) || M->nrow != M->ncol || (M->nrow > 0 && !d)) return 1;
  for (int i = 0; i < M->nrow; i++) {
    double s = 0.0;

    for (int e = M->ptr[i]; e < M->ptr[i + 1]; e++)
      if (M->col[e] == i) s += M->val[e];
    d[i] = s;
  }
  return 0;
}

int PatchworkCSRSymmetrizeRef(PatchworkCSRMatrix *M)
{
  if (CheckMatrix(M) || M->nrow != M->ncol) return 1;
  for (int i = 0; i < M->nrow; i++) /* every mirror first: M stays as it is when one is missing */
    for (int e = M->ptr[i]; e < M->ptr[i + 1]; e++)
      if (M->col[e] < 0 || M->col[e] >= M->ncol || PatchworkCSRFind(M->col, M->ptr[M->col[e]], M->ptr[M->col[e] + 1], i) < 0) return 3;
  for (int i = 0; i < M->nrow; i++) /* each pair once, from the row of its upper entry */
    for (int e = M->ptr[i]; e < M->ptr[i + 1]; e++)
      if (M->col[e] > i) {
        const int    f = PatchworkCSRFind(M->col, M->ptr[M->col[e]], M->ptr[M->col[e] + 1], i);
        const double v = (M->val[e] + M->val[f]) * 0.5;

        M->val[e] = M->val[f] = v;
      }
  return 0;
}

/* A CSR matrix of nrow rows and nnz entries, or 1 */
static int CSRMatrixAlloc(int nrow, int ncol, int nnz, PatchworkCSRMatrix *M)
{
  M->nrow = nrow;
  M->ncol = ncol;
  M->nnz  = nnz;
  M->ptr  = (int *)CSRAlloc(((size_t)nrow + 1) * sizeof(int));
  M->col  = (int *)CSRAlloc((size_t)nnz * sizeof(int));
  M->val  = (double *)CSRAlloc((size_t)nnz * sizeof(double));
  if (M->ptr && M->col && M->val) return 0;
  PatchworkCSRMatrixFree(M);
  return 1;
}

int PatchworkCSRJoinColumnsRef(const PatchworkCSR *A, const PatchworkCSR *B, int shift, int nrow, int ncol, PatchworkCSRMatrix *M)
{
  int n, nnz;

  if (M) memset(M, 0, sizeof(*M));
  if (!A || !B || !M || A->n < 0 || B->n != A->n || nrow < A->n || shift < A->n || ncol < shift) return 1;
  if (A->n > 0 && (!A->ptr || !B->ptr || A->ptr[0] != 0 || B->ptr[0] != 0)) return 1;
  n   = A->n;
  nnz = n ? A->ptr[n] + B->ptr[n] : 0;
  if (CSRMatrixAlloc(nrow, ncol, nnz, M)) return 2;
  M->ptr[0] = 0;
  for (int i = 0; i < n; i++) {
    int e = M->ptr[i];

    for (int k = A->ptr[i]; k < A->ptr[i + 1]; k++, e++) {
      M->col[e] = A->col[k];
      M->val[e] = A->val[k];
    }
    for (int k = B->ptr[i]; k < B->ptr[i + 1]; k++, e++) {
      M->col[e] = B->col[k] + shift;
      M->val[e] = B->val[k];
    }
    M->ptr[i + 1] = e;
  }
  for (int i = n; i < nrow; i++) M->ptr[i + 1] = nnz;
  return 0;
}

int PatchworkCSRAddRef(const PatchworkCSR *A, const PatchworkCSR *B, int ncol, PatchworkCSRMatrix *M)
{
  const int n = A ? A->n : 0;
  int       nnz = 0;

  if (M) memset(M, 0, sizeof(*M));
  if (!A || !B || !M || n < 0 || B->n != n || ncol < 0) return 1;
  if (n > 0 && (!A->ptr || !B->ptr)) return 1;
  for (int i = 0; i < n; i++) nnz += PatchworkCSRAddRow(A, B, i, NULL, NULL);
  if (CSRMatrixAlloc(n, ncol, nnz, M)) return 2;
  M->ptr[0] = 0;
  for (int i = 0; i < n; i++) M->ptr[i + 1] = M->ptr[i] + PatchworkCSRAddRow(A, B, i, M->col + M->ptr[i], M->val + M->ptr[i]);
  return 0;
}

int PatchworkCSRSplitColumnsRef(const PatchworkCSRMatrix *M, int cut, PatchworkCSRMatrix *Lo, PatchworkCSRMatrix *Hi)
{
  int nlo = 0;

  if (Lo) memset(Lo, 0, sizeof(*Lo));
  if (Hi) memset(Hi, 0, sizeof(*Hi));
  if (CheckMatrix(M) || !Lo || !Hi || cut < 0 || cut > M->ncol) return 1;
  for (int e = 0; e < M->nnz; e++) nlo += M->col[e] < cut;
  if (CSRMatrixAlloc(M->nrow, cut, nlo, Lo) || CSRMatrixAlloc(M->nrow, M->ncol - cut, M->nnz - nlo, Hi)) {
    PatchworkCSRMatrixFree(Lo);
    return 2;
  }
  Lo->ptr[0] = Hi->ptr[0] = 0;
  for (int i = 0; i < M->nrow; i++) {
    int l = Lo->ptr[i], h = Hi->ptr[i];

    for (int e = M->ptr[i]; e < M->ptr[i + 1]; e++) {
      if (M->col[e] < cut) {
        Lo->col[l]   = M->col[e];
        Lo->val[l++] = M->val[e];
      } else {
        Hi->col[h]   = M->col[e] - cut;
        Hi->val[h++] = M->val[e];
      }
    }
    Lo->ptr[i + 1] = l;
    Hi->ptr[i + 1] = h;
  }
  return 0;
}

int PatchworkIntMapRef(int n, const int *map, int nmap, int *idx)
{
  if (n < 0 || nmap < 0 || (n > 0 && (!map || !idx))) return 1;
  for (int k = 0; k < n; k++)
    if (idx[k] < 0 || idx[k] >= nmap) return 1;
  for (int k = 0; k < n; k++) idx[k] = map[idx[k]];
  return 0;
}
