/* CPU reference of PCPATCHAMG's strong graph (contract: include/patchwork/amg_kernel.h; the GPU
   version: cuda/amg_strength.cu): |diagonal|, every entry decided once by PatchworkCSRStrong while
   the rows are counted, then the fill. */
#include <stdlib.h>
#include <string.h>
#include <patchwork/amg_kernel.h>

int PatchworkGraphStrength(const PatchworkCSR *A, double theta, PatchworkGraph *s)
{
  double        *d      = NULL;
  unsigned char *strong = NULL;
  int           *ptr    = NULL, *adj;

  if (!s) return 1;
  memset(s, 0, sizeof(*s));
  if (!A || A->n < 0 || (A->n > 0 && (!A->ptr || !A->col || !A->val))) return 1;
  const int n   = A->n;
  const int nnz = n ? A->ptr[n] : 0;
  d             = malloc(sizeof(double) * (n ? (size_t)n : 1));
  strong        = malloc(nnz ? (size_t)nnz : 1);
  ptr           = malloc(sizeof(int) * ((size_t)n + 1));
  if (!d || !strong || !ptr) goto fail;
  for (int i = 0; i < n; i++) {
    const int e = PatchworkCSRFind(A->col, A->ptr[i], A->ptr[i + 1], i);

    d[i] = e >= 0 ? fabs(A->val[e]) : 0.0;
  }
  /* one decision per entry (each costs a search in row j), kept for the fill */
  ptr[0] = 0;
  for (int i = 0; i < n; i++) {
    int c = 0;

    for (int e = A->ptr[i]; e < A->ptr[i + 1]; e++) c += strong[e] = (unsigned char)PatchworkCSRStrong(A, d, theta, i, e);
    ptr[i + 1] = ptr[i] + c;
  }
  adj = malloc(sizeof(int) * (ptr[n] ? (size_t)ptr[n] : 1));
  if (!adj) goto fail;
  for (int e = 0, a = 0; e < nnz; e++)
    if (strong[e]) adj[a++] = A->col[e];
  free(d);
  free(strong);
  s->n   = n;
  s->ptr = ptr;
  s->adj = adj;
  return 0;
fail:
  free(d);
  free(strong);
  free(ptr);
  return 1;
}
