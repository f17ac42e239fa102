/* The patchSPM layout of a level matrix on the host (contract: include/patchwork/amg_kernel.h; the
   GPU version, equal bit for bit: cuda/amg_spm.cu).

   Two passes over the positions: the first checks the arguments and counts each position's AI and
   AB entries, the second fills them in the storage order of the matrix row. The diagonal is summed
   in double in storage order and rounded once to the value type, as are the other values, so the
   GPU, which does the same per position, gets the same bits. */
#include <stdlib.h>
#include <string.h>
#include <patchwork/amg_kernel.h>

void PatchworkSPMFreeRef(PatchworkSPMDesc *d)
{
  if (!d) return;
  free((void *)d->patch_ptr);
  free((void *)d->row);
  free((void *)d->ai_ptr);
  free((void *)d->ai_col);
  free((void *)d->ab_ptr);
  free((void *)d->ab_col);
  free((void *)d->ai_val);
  free((void *)d->ab_val);
  free((void *)d->diag);
  memset(d, 0, sizeof(*d));
}

/* malloc that never returns NULL for 0 bytes, so that NULL always means failure */
static void *Alloc(size_t bytes)
{
  return malloc(bytes ? bytes : 1);
}

/* The patch of every position (from patch_ptr, checked to be nondecreasing from 0 to n), and the
   largest patch; returns nonzero on a bad patch_ptr */
static int PatchOf(int n, int npatch, const int *patch_ptr, int *part, int *max_patch)
{
  *max_patch = 0;
  if (patch_ptr[0] != 0 || patch_ptr[npatch] != n) return 1;
  for (int p = 0; p < npatch; p++) {
    if (patch_ptr[p + 1] < patch_ptr[p]) return 1;
    if (patch_ptr[p + 1] - patch_ptr[p] > *max_patch) *max_patch = patch_ptr[p + 1] - patch_ptr[p];
    for (int i = patch_ptr[p]; i < patch_ptr[p + 1]; i++) part[i] = p;
  }
  return 0;
}

int PatchworkSPMBuildRef(const PatchworkCSR *A, int npatch, const int *patch_ptr, const int *row, const int *pos, int single, PatchworkSPMDesc *d, int *nnz_ai, int *nnz_ab)
{
  const size_t vs = single ? sizeof(float) : sizeof(double);
  int          n, nai = 0, nab = 0, max_patch, *part, *pp, *rw = NULL, *aip, *abp, *aic, *abc;
  void        *aiv, *abv, *dg;

  if (d) memset(d, 0, sizeof(*d)); /* empty on every failure */
  if (!A || !d || !nnz_ai || !nnz_ab || A->n < 0 || npatch < 0 || !patch_ptr || (A->n > 0 && (!A->ptr || (A->ptr[A->n] > A->ptr[0] && (!A->col || !A->val))))) return 1;
  if (row && !pos) return 1;
  n = A->n;
  part = (int *)Alloc(sizeof(int) * (size_t)n);
  if (!part) return 1;
  if (PatchOf(n, npatch, patch_ptr, part, &max_patch)) {
    free(part);
    return 1;
  }
  /* row must be a permutation with inverse pos (then every level row is some position's) */
  if (row)
    for (int i = 0; i < n; i++)
      if (row[i] < 0 || row[i] >= n || pos[row[i]] != i) {
        free(part);
        return 1;
      }
  /* count; a column out of range or a bad row pointer is a bad argument */
  for (int i = 0; i < n; i++) {
    const int r = row ? row[i] : i, ps = patch_ptr[part[i]], pe = patch_ptr[part[i] + 1];

    if (A->ptr[r] > A->ptr[r + 1] || A->ptr[r] < 0) {
      free(part);
      return 1;
    }
    for (int j = A->ptr[r]; j < A->ptr[r + 1]; j++) {
      const int c = A->col[j];

      if (c < 0 || c >= n) {
        free(part);
        return 1;
      }
      if (c == r) continue;
      if ((row ? pos[c] : c) >= ps && (row ? pos[c] : c) < pe) nai++;
      else nab++;
    }
  }
  pp  = (int *)Alloc(sizeof(int) * ((size_t)npatch + 1));
  aip = (int *)Alloc(sizeof(int) * ((size_t)n + 1));
  abp = (int *)Alloc(sizeof(int) * ((size_t)n + 1));
  aic = (int *)Alloc(sizeof(int) * (size_t)nai);
  abc = (int *)Alloc(sizeof(int) * (size_t)nab);
  aiv = Alloc(vs * (size_t)nai);
  abv = Alloc(vs * (size_t)nab);
  dg  = Alloc(vs * (size_t)n);
  if (row) rw = (int *)Alloc(sizeof(int) * (size_t)n);
  /* the descriptor owns them from here: the Free below releases a partial allocation */
  d->patch_ptr = pp;
  d->row       = rw;
  d->ai_ptr    = aip;
  d->ab_ptr    = abp;
  d->ai_col    = aic;
  d->ab_col    = abc;
  d->ai_val    = aiv;
  d->ab_val    = abv;
  d->diag      = dg;
  if (!pp || !aip || !abp || !aic || !abc || !aiv || !abv || !dg || (row && !rw)) {
    free(part);
    PatchworkSPMFreeRef(d);
    return 1;
  }
  memcpy(pp, patch_ptr, sizeof(int) * ((size_t)npatch + 1));
  if (row) memcpy(rw, row, sizeof(int) * (size_t)n);
  nai = nab = 0;
  aip[0] = abp[0] = 0;
  for (int i = 0; i < n; i++) {
    const int r = row ? row[i] : i, ps = patch_ptr[part[i]], pe = patch_ptr[part[i] + 1];
    double    aii = 0.0;

    for (int j = A->ptr[r]; j < A->ptr[r + 1]; j++) {
      const int    c = A->col[j], q = row ? pos[c] : c;
      const double v = A->val[j];

      if (c == r) aii += v;
      else if (q >= ps && q < pe) {
        aic[nai] = q - ps;
        if (single) ((float *)aiv)[nai] = (float)v;
        else ((double *)aiv)[nai] = v;
        nai++;
      } else {
        abc[nab] = c;
        if (single) ((float *)abv)[nab] = (float)v;
        else ((double *)abv)[nab] = v;
        nab++;
      }
    }
    if (single) ((float *)dg)[i] = (float)aii;
    else ((double *)dg)[i] = aii;
    aip[i + 1] = nai;
    abp[i + 1] = nab;
  }
  free(part);
  d->n           = n;
  d->npatch      = npatch;
  d->max_patch   = max_patch;
  d->single      = single ? 1 : 0;
  d->inner       = 1;
  d->inner_omega = 1.0;
  d->omega       = 1.0;
  *nnz_ai        = nai;
  *nnz_ab        = nab;
  return 0;
}
