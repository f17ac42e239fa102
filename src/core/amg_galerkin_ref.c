/* The Galerkin product Ac = P^T A P of PCPATCHAMG on the host (contract: include/patchwork/amg_kernel.h;
   the GPU version: cuda/amg_galerkin.cu).

   Two sparse products, as the GPU does them: AP = A P, then Ac = R (AP) with R = P^T. R comes from a
   counting sort of P's entries by column, rows visited in ascending order, so every row of R lists
   P's rows ascending. Each product is Gustavson's row by row: the products of a row are summed in a
   dense accumulator of the product's column count, a marker array (the row that last touched a
   column) finds the row's distinct columns without clearing anything between rows, so the time is
   proportional to the products and the memory to the columns. Every column reached is stored, also
   when its sum is 0: the structural pattern. A row's columns are sorted before its values are
   gathered from the accumulator. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <patchwork/amg_kernel.h>
#include "amg_csr_impl.h"

/* One operand of a product: m rows in CSR (entries at ptr[i]..ptr[i+1], ptr[0] may be nonzero) */
typedef struct {
  int           m;
  const int    *ptr, *col;
  const double *val;
} Operand;

/* nrow rows with nondecreasing pointers from ptr[0] >= 0 and every column in [0, ncol); col and
   val may be NULL where there are no entries */
static int CheckCSR(int nrow, const int *ptr, const int *col, const double *val, int ncol)
{
  if (nrow < 0 || ncol < 0 || nrow == INT_MAX || ncol == INT_MAX) return 1;
  if (nrow == 0) return 0;
  if (!ptr || ptr[0] < 0 || (ptr[nrow] > ptr[0] && (!col || !val))) return 1;
  for (int i = 0; i < nrow; i++) {
    if (ptr[i + 1] < ptr[i]) return 1;
    for (int e = ptr[i]; e < ptr[i + 1]; e++)
      if (col[e] < 0 || col[e] >= ncol) return 1;
  }
  return 0;
}

/* R = P^T (ncol rows): a counting sort by column; filling in row order keeps every row of R ascending */
static int Transpose(const PatchworkCSRMatrix *P, int **rptr, int **rcol, double **rval)
{
  const int n = P->nrow, nc = P->ncol, lo = n > 0 ? P->ptr[0] : 0, nnz = n > 0 ? P->ptr[n] - lo : 0;
  int      *ptr = (int *)CSRAlloc(((size_t)nc + 1) * sizeof(int)), *col = (int *)CSRAlloc((size_t)nnz * sizeof(int)), *next = (int *)CSRAlloc(((size_t)nc + 1) * sizeof(int));
  double   *val = (double *)CSRAlloc((size_t)nnz * sizeof(double));

  if (!ptr || !col || !next || !val) {
    free(ptr);
    free(col);
    free(next);
    free(val);
    return 1;
  }
  memset(ptr, 0, ((size_t)nc + 1) * sizeof(int));
  for (int e = lo; e < lo + nnz; e++) ptr[P->col[e] + 1]++;
  for (int J = 0; J < nc; J++) ptr[J + 1] += ptr[J];
  memcpy(next, ptr, ((size_t)nc + 1) * sizeof(int));
  for (int i = 0; i < n; i++)
    for (int e = P->ptr[i]; e < P->ptr[i + 1]; e++) {
      const int t = next[P->col[e]]++;

      col[t] = i;
      val[t] = P->val[e];
    }
  free(next);
  *rptr = ptr;
  *rcol = col;
  *rval = val;
  return 0;
}

/* Room for one more entry in C's arrays (doubling); nonzero when the entries do not fit in an int */
static int Grow(size_t need, size_t *cap, int **col, double **val)
{
  size_t  c;
  int    *nc;
  double *nv;

  if (need <= *cap) return 0;
  if (need > (size_t)INT_MAX) return 1;
  c = 2 * *cap > (size_t)INT_MAX ? (size_t)INT_MAX : 2 * *cap;
  if (!(nc = (int *)realloc(*col, c * sizeof(int)))) return 1;
  *col = nc;
  if (!(nv = (double *)realloc(*val, c * sizeof(double)))) return 1;
  *val = nv;
  *cap = c;
  return 0;
}

/* C = X Y, Y with ncol columns, C's columns ascending in every row; C is left empty on failure */
static int Multiply(const Operand *X, const Operand *Y, int ncol, PatchworkCSRMatrix *C)
{
  const int m = X->m;
  size_t    nnz = 0, cap = 16;
  int      *mark = (int *)CSRAlloc((size_t)ncol * sizeof(int)), *ptr = (int *)CSRAlloc(((size_t)m + 1) * sizeof(int)), *col = (int *)CSRAlloc(cap * sizeof(int));
  double   *acc = (double *)CSRAlloc((size_t)ncol * sizeof(double)), *val = (double *)CSRAlloc(cap * sizeof(double));

  memset(C, 0, sizeof(*C));
  if (!mark || !ptr || !col || !acc || !val) goto fail;
  for (int J = 0; J < ncol; J++) mark[J] = -1;
  ptr[0] = 0;
  for (int i = 0; i < m; i++) {
    const size_t start = nnz;

    for (int e = X->ptr[i]; e < X->ptr[i + 1]; e++) {
      const int    k = X->col[e];
      const double x = X->val[e];

      for (int f = Y->ptr[k]; f < Y->ptr[k + 1]; f++) {
        const int J = Y->col[f];

        if (mark[J] != i) { /* first product of the row in column J */
          if (Grow(nnz + 1, &cap, &col, &val)) goto fail;
          mark[J]    = i;
          col[nnz++] = J;
          acc[J]     = 0;
        }
        acc[J] += x * Y->val[f];
      }
    }
    CSRSortInts(col + start, (int)(nnz - start));
    for (size_t p = start; p < nnz; p++) val[p] = acc[col[p]];
    ptr[i + 1] = (int)nnz;
  }
  free(mark);
  free(acc);
  C->nrow = m;
  C->ncol = ncol;
  C->nnz  = (int)nnz;
  C->ptr  = ptr;
  C->col  = col;
  C->val  = val;
  return 0;
fail:
  free(mark);
  free(acc);
  free(ptr);
  free(col);
  free(val);
  return 1;
}

int PatchworkGalerkinRef(const PatchworkCSR *A, const PatchworkCSRMatrix *P, PatchworkCSRMatrix *Ac)
{
  PatchworkCSRMatrix AP;
  int               *rptr, *rcol, ret;
  double            *rval;

  if (Ac) memset(Ac, 0, sizeof(*Ac)); /* empty on every failure */
  if (!A || !P || !Ac || A->n < 0 || P->nrow != A->n || CheckCSR(A->n, A->ptr, A->col, A->val, A->n) || CheckCSR(P->nrow, P->ptr, P->col, P->val, P->ncol)) return 1;
  {
    const Operand a = {A->n, A->ptr, A->col, A->val}, p = {P->nrow, P->ptr, P->col, P->val};

    if (Multiply(&a, &p, P->ncol, &AP)) return 1;
  }
  if (Transpose(P, &rptr, &rcol, &rval)) {
    PatchworkCSRMatrixFree(&AP);
    return 1;
  }
  {
    const Operand r = {P->ncol, rptr, rcol, rval}, ap = {AP.nrow, AP.ptr, AP.col, AP.val};

    ret = Multiply(&r, &ap, P->ncol, Ac);
  }
  PatchworkCSRMatrixFree(&AP);
  free(rptr);
  free(rcol);
  free(rval);
  return ret;
}
