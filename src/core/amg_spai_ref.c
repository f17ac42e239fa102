/* The CPU reference of SPAI(1)'s normal equations (contract: include/patchwork/amg_kernel.h; the
   GPU version: cuda/amg_spai.cu; the whole SPAI(1), with the QR for refused rows:
   src/pc/patchamg/paspai.c).

   G = C^T C is summed column by column of K (the union of the rows J): the entries of the rows J
   are bucketed by column, and each column adds the products of its own entries, so only pairs of
   rows that share a column cost anything (about 4K multiply-adds at Q1 against the 20K of a merge
   of every pair of rows). The Cholesky factor R (G = R^T R) overwrites G's upper triangle. */
#include <math.h>
#include <stdlib.h>
#include <patchwork/amg_kernel.h>

struct PatchworkSPAIWork_ {
  int     ncol, capE, capJ;
  int    *mark;              /* [ncol] a column's position in K, -1 outside the row at hand */
  int    *K;                 /* [capE] the columns of K, in order of first appearance */
  int    *start, *row;       /* [capE + 1], [capE]: per column of K, its entries in the rows J */
  double *val;               /* [capE] */
  double *G, *scratch, *rhs; /* [capJ * capJ], [2 capJ], [capJ] */
};

int PatchworkSPAIWorkCreate(int ncol, PatchworkSPAIWork **w)
{
  if (!w || ncol < 0) return 1;
  *w = (PatchworkSPAIWork *)calloc(1, sizeof(**w));
  if (!*w) return 2;
  (*w)->ncol = ncol;
  (*w)->mark = (int *)malloc(sizeof(int) * (size_t)(ncol > 0 ? ncol : 1));
  if (!(*w)->mark) {
    PatchworkSPAIWorkDestroy(w);
    return 2;
  }
  for (int c = 0; c < ncol; c++) (*w)->mark[c] = -1;
  return 0;
}

void PatchworkSPAIWorkDestroy(PatchworkSPAIWork **w)
{
  if (!w || !*w) return;
  free((*w)->mark);
  free((*w)->K);
  free((*w)->start);
  free((*w)->row);
  free((*w)->val);
  free((*w)->G);
  free((*w)->scratch);
  free((*w)->rhs);
  free(*w);
  *w = NULL;
}

/* room for the entries of the rows J and for nJ unknowns; 2 when memory runs out (the workspace
   then has no room, and the next call tries again) */
static int Reserve(PatchworkSPAIWork *w, int entries, int nJ)
{
  if (entries > w->capE) {
    const size_t cap = 2 * (size_t)entries;

    free(w->K);
    free(w->start);
    free(w->row);
    free(w->val);
    w->K     = (int *)malloc(sizeof(int) * cap);
    w->start = (int *)malloc(sizeof(int) * (cap + 1));
    w->row   = (int *)malloc(sizeof(int) * cap);
    w->val   = (double *)malloc(sizeof(double) * cap);
    w->capE  = w->K && w->start && w->row && w->val ? (int)cap : 0;
    if (!w->capE) return 2;
  }
  if (nJ > w->capJ) {
    const size_t cap = 2 * (size_t)nJ;

    free(w->G);
    free(w->scratch);
    free(w->rhs);
    w->G       = (double *)malloc(sizeof(double) * cap * cap);
    w->scratch = (double *)malloc(sizeof(double) * 2 * cap);
    w->rhs     = (double *)malloc(sizeof(double) * cap);
    w->capJ    = w->G && w->scratch && w->rhs ? (int)cap : 0;
    if (!w->capJ) return 2;
  }
  return 0;
}

/* G = C^T C (upper triangle, column-major, nJ x nJ) and rhs = C^T e_self from the rows J; nK: the
   columns of K */
static void Normal(int nJ, const int *jrow, const int *ptr, const int *col, const double *val, int self, PatchworkSPAIWork *w)
{
  int *start = w->start, nK = 0;

  for (int a = 0; a < nJ; a++) /* K, and the count of each of its columns */
    for (int t = ptr[jrow[a]]; t < ptr[jrow[a] + 1]; t++) {
      if (w->mark[col[t]] < 0) {
        w->mark[col[t]] = nK;
        w->K[nK]        = col[t];
        start[++nK]     = 0;
      }
      start[w->mark[col[t]] + 1]++;
    }
  start[0] = 0;
  for (int k = 0; k < nK; k++) start[k + 1] += start[k];
  for (int a = 0; a < nJ; a++) /* fill, rows in increasing a within each column */
    for (int t = ptr[jrow[a]]; t < ptr[jrow[a] + 1]; t++) {
      const int k = w->mark[col[t]];

      w->row[start[k]] = a;
      w->val[start[k]] = val[t];
      start[k]++;
    }
  for (int k = nK; k > 0; k--) start[k] = start[k - 1];
  start[0] = 0;
  for (int e = 0; e < nJ * nJ; e++) w->G[e] = 0;
  for (int k = 0; k < nK; k++)
    for (int a = start[k]; a < start[k + 1]; a++) {
      double *Ga = w->G + w->row[a];

      for (int b = a; b < start[k + 1]; b++) Ga[w->row[b] * nJ] += w->val[a] * w->val[b];
    }
  for (int a = 0; a < nJ; a++) w->rhs[a] = 0;
  if (self >= 0 && w->mark[self] >= 0)
    for (int a = start[w->mark[self]]; a < start[w->mark[self] + 1]; a++) w->rhs[w->row[a]] = w->val[a];
  for (int k = 0; k < nK; k++) w->mark[w->K[k]] = -1;
}

/* Cholesky in place and the bound on kappa_1(G); 0 when G is not positive definite */
static int Factor(int nJ, PatchworkSPAIWork *w, double *kappa)
{
  double *G = w->G, *work = w->scratch, gnorm = 0, r1 = 0, rinf = 0;

  for (int d = 0; d < nJ; d++) work[d] = 0; /* ||G||_1 from the upper triangle (column sums) */
  for (int d = 0; d < nJ; d++)
    for (int c = 0; c <= d; c++) {
      const double v = fabs(G[c + d * nJ]);

      work[d] += v;
      if (c < d) work[c] += v;
    }
  for (int d = 0; d < nJ; d++) gnorm = fmax(gnorm, work[d]);
  for (int j = 0; j < nJ; j++) { /* G = R^T R, R upper */
    double d = G[j + j * nJ];

    for (int k = 0; k < j; k++) d -= G[k + j * nJ] * G[k + j * nJ];
    if (!(d > 0) || !isfinite(d)) return 0;
    d             = sqrt(d);
    G[j + j * nJ] = d;
    for (int c = j + 1; c < nJ; c++) {
      double v = G[j + c * nJ];

      for (int k = 0; k < j; k++) v -= G[k + j * nJ] * G[k + c * nJ];
      G[j + c * nJ] = v / d;
    }
  }
  /* M(R) x = 1 (back substitution) and M(R)^T z = 1 (forward) */
  for (int j = nJ - 1; j >= 0; j--) {
    double x = 1;

    for (int k = j + 1; k < nJ; k++) x += fabs(G[j + k * nJ]) * work[k];
    work[j] = x / G[j + j * nJ];
    rinf    = fmax(rinf, work[j]);
  }
  for (int j = 0; j < nJ; j++) {
    double z = 1;

    for (int k = 0; k < j; k++) z += fabs(G[k + j * nJ]) * work[nJ + k];
    work[nJ + j] = z / G[j + j * nJ];
    r1           = fmax(r1, work[nJ + j]);
  }
  *kappa = gnorm * r1 * rinf;
  return 1;
}

int PatchworkSPAI1RowNormal(int nJ, const int *jrow, const int *ptr, const int *col, const double *val, int self, PatchworkSPAIWork *w, double *m, int *ok, double *kappa)
{
  const double *G;
  int           entries = 0, err;

  if (!w || !ok || !kappa || nJ < 0 || self >= w->ncol || (nJ > 0 && (!jrow || !ptr || !col || !val || !m))) return 1;
  *ok    = 0;
  *kappa = INFINITY;
  if (nJ == 0) return 0;
  for (int a = 0; a < nJ; a++) entries += ptr[jrow[a] + 1] - ptr[jrow[a]];
  if ((err = Reserve(w, entries, nJ))) return err;
  Normal(nJ, jrow, ptr, col, val, self, w);
  if (!Factor(nJ, w, kappa)) {
    *kappa = INFINITY;
    return 0;
  }
  if (!(*kappa <= PATCHWORK_SPAI_KAPPA_MAX)) return 0;
  G = w->G;
  for (int j = 0; j < nJ; j++) { /* R^T y = rhs, then R m = y */
    double v = w->rhs[j];

    for (int k = 0; k < j; k++) v -= G[k + j * nJ] * m[k];
    m[j] = v / G[j + j * nJ];
  }
  for (int j = nJ - 1; j >= 0; j--) {
    double v = m[j];

    for (int k = j + 1; k < nJ; k++) v -= G[j + k * nJ] * m[k];
    m[j] = v / G[j + j * nJ];
  }
  *ok = 1;
  return 0;
}

int PatchworkSPAI1NormalRef(const PatchworkCSR *A, double *mval, int *flag, double *kappa)
{
  PatchworkSPAIWork *w = NULL;
  int                err;

  if (!A || A->n < 0) return 1;
  if (A->n == 0) return 0;
  if (!A->ptr || !A->col || !A->val || !mval || !flag) return 1;
  if ((err = PatchworkSPAIWorkCreate(A->n, &w))) return err;
  for (int i = 0; i < A->n && !err; i++) {
    int    ok;
    double k;

    err = PatchworkSPAI1RowNormal(A->ptr[i + 1] - A->ptr[i], A->col + A->ptr[i], A->ptr, A->col, A->val, i, w, mval + A->ptr[i], &ok, &k);
    flag[i] = !ok;
    if (kappa) kappa[i] = k;
  }
  PatchworkSPAIWorkDestroy(&w);
  return err;
}
