/* The patchSPM layout of a level matrix on the GPU (contract: include/patchwork/amg_kernel.h; CPU
   reference, equal bit for bit: src/core/amg_spm_ref.c).

   One thread a position, as the reference's loops: a count kernel (which also checks the arguments
   and sums the diagonal in storage order, in double, rounded once to the value type), exclusive
   scans of the AI and AB counts (cub), and a fill kernel that walks each row again in storage order.
   The patch of a position is found by binary search in patch_ptr, so no position-to-patch array is
   needed. The only transfer to the host is one small struct (the bad-argument flag, max_patch and
   the two totals), which the allocation of the entry arrays needs anyway.

   Validation happens on the device: a column out of range, a row pointer that decreases, a row map
   that is not the inverse of pos, or patch_ptr not rising from 0 to n set the flag; the kernels never
   read out of bounds on such input (an out-of-range index is flagged before it is used), and the
   fill kernel runs only on valid input. */
#include <cuda_runtime.h>
#include <stddef.h>
#include <string.h>
#include <algorithm>
#include <cub/cub.cuh>
#include <patchwork/amg_kernel.h>

namespace {

constexpr int kThreads = 256;

/* What comes back to the host */
struct Info {
  int bad, max_patch, nai, nab;
};

unsigned Blocks(long long work)
{
  return (unsigned)std::max<long long>(1, std::min<long long>((work + kThreads - 1) / kThreads, 1 << 20));
}

/* Copy patch_ptr, check it (0, nondecreasing, n) and find the largest patch */
__global__ void PatchKernel(int n, int npatch, const int *__restrict__ patch_ptr, int *__restrict__ out, Info *info)
{
  int big = 0, bad = 0;

  for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p <= npatch; p += (long long)gridDim.x * blockDim.x) {
    const int s = patch_ptr[p];

    out[p] = s;
    if ((p == 0 && s != 0) || (p == npatch && s != n)) bad = 1;
    if (p < npatch) {
      const int m = patch_ptr[p + 1] - s;

      if (m < 0) bad = 1;
      big = max(big, m);
    }
  }
  big = __reduce_max_sync(0xffffffffu, big); /* every thread gets here: one atomic a warp */
  if ((threadIdx.x & 31) == 0 && big > 0) atomicMax(&info->max_patch, big);
  if (bad) atomicOr(&info->bad, 1);
}

/* The patch [ps, pe) of position i: the largest p with patch_ptr[p] <= i (empty patches before a
   nonempty one share its start and are skipped). Reads only patch_ptr[0..npatch]. */
__device__ __forceinline__ void FindPatch(int npatch, const int *__restrict__ patch_ptr, int i, int *ps, int *pe)
{
  int lo = 0, hi = npatch - 1;

  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;

    if (__ldg(patch_ptr + mid) <= i) lo = mid;
    else hi = mid - 1;
  }
  *ps = __ldg(patch_ptr + lo);
  *pe = __ldg(patch_ptr + lo + 1);
}

/* Per position: check, count AI and AB entries, sum the diagonal; copy the row map */
template <typename T>
__global__ void CountKernel(PatchworkCSR A, int npatch, const int *__restrict__ patch_ptr, const int *__restrict__ row, const int *__restrict__ pos, int *__restrict__ cai, int *__restrict__ cab,
                            T *__restrict__ diag, int *__restrict__ row_out, Info *info)
{
  const int n   = A.n;
  int       bad = 0;

  for (long long i0 = (long long)blockIdx.x * blockDim.x + threadIdx.x; i0 < n; i0 += (long long)gridDim.x * blockDim.x) {
    const int i = (int)i0;
    int       r = i, nai = 0, nab = 0;
    double    aii = 0.0;

    if (row) {
      r          = row[i];
      row_out[i] = r;
      if (r < 0 || r >= n || pos[r] != i) {
        bad = 1;
        r   = -1;
      }
    }
    if (r >= 0) {
      const int b = A.ptr[r], e = A.ptr[r + 1];
      int       ps, pe;

      FindPatch(npatch, patch_ptr, i, &ps, &pe);
      if (b < 0 || b > e || (e > b && (!A.col || !A.val))) bad = 1;
      else
        for (int j = b; j < e; j++) {
          const int c = A.col[j];

          if (c < 0 || c >= n) bad = 1;
          else if (c == r) aii += A.val[j];
          else {
            const int q = row ? pos[c] : c;

            if (q >= ps && q < pe) nai++;
            else nab++;
          }
        }
    }
    cai[i]  = nai;
    cab[i]  = nab;
    diag[i] = (T)aii;
  }
  if (bad) atomicOr(&info->bad, 1);
}

/* Per position: the AI and AB entries in the storage order of the row (arguments already checked) */
template <typename T>
__global__ void FillKernel(PatchworkCSR A, int npatch, const int *__restrict__ patch_ptr, const int *__restrict__ row, const int *__restrict__ pos, const int *__restrict__ ai_ptr,
                           const int *__restrict__ ab_ptr, int *__restrict__ ai_col, T *__restrict__ ai_val, int *__restrict__ ab_col, T *__restrict__ ab_val)
{
  for (long long i0 = (long long)blockIdx.x * blockDim.x + threadIdx.x; i0 < A.n; i0 += (long long)gridDim.x * blockDim.x) {
    const int i = (int)i0, r = row ? row[i] : i, e = A.ptr[r + 1];
    int       a = ai_ptr[i], o = ab_ptr[i], ps, pe;

    FindPatch(npatch, patch_ptr, i, &ps, &pe);
    for (int j = A.ptr[r]; j < e; j++) {
      const int c = A.col[j];

      if (c == r) continue;
      const int q = row ? pos[c] : c;
      const T   v = (T)A.val[j];

      if (q >= ps && q < pe) {
        ai_col[a]   = q - ps;
        ai_val[a++] = v;
      } else {
        ab_col[o]   = c;
        ab_val[o++] = v;
      }
    }
  }
}

__global__ void TotalsKernel(int n, const int *ai_ptr, const int *ab_ptr, Info *info)
{
  info->nai = ai_ptr[n];
  info->nab = ab_ptr[n];
}

/* cudaMalloc of at least one byte (so that a NULL pointer always means "not allocated") */
cudaError_t Malloc(void **p, size_t bytes)
{
  return cudaMalloc(p, bytes ? bytes : 1);
}

template <typename T>
cudaError_t Build(const PatchworkCSR *A, int npatch, const int *patch_ptr, const int *row, const int *pos, PatchworkSPMDesc *d, int *nnz_ai, int *nnz_ab, cudaStream_t stream)
{
  const int   n  = A->n;
  const size_t n1 = (size_t)n + 1;
  int        *pp = NULL, *rw = NULL, *aip = NULL, *abp = NULL, *aic = NULL, *abc = NULL, *cnt = NULL;
  T          *aiv = NULL, *abv = NULL, *dg = NULL;
  void       *tmp = NULL;
  Info       *dinfo = NULL, info;
  size_t      tmp_bytes = 0;
  cudaError_t err;

#define PW_TRY(call) \
  do { \
    if ((err = (call)) != cudaSuccess) goto fail; \
  } while (0)
  PW_TRY(Malloc((void **)&pp, sizeof(int) * ((size_t)npatch + 1)));
  if (row) PW_TRY(Malloc((void **)&rw, sizeof(int) * (size_t)n));
  PW_TRY(Malloc((void **)&aip, sizeof(int) * n1));
  PW_TRY(Malloc((void **)&abp, sizeof(int) * n1));
  PW_TRY(Malloc((void **)&dg, sizeof(T) * (size_t)n));
  PW_TRY(Malloc((void **)&cnt, 2 * sizeof(int) * n1)); /* AI counts, then AB counts */
  PW_TRY(Malloc((void **)&dinfo, sizeof(Info)));
  PW_TRY(cub::DeviceScan::ExclusiveSum(NULL, tmp_bytes, cnt, aip, (int)n1, stream));
  PW_TRY(Malloc(&tmp, tmp_bytes));

  PW_TRY(cudaMemsetAsync(dinfo, 0, sizeof(Info), stream));
  PatchKernel<<<Blocks((long long)npatch + 1), kThreads, 0, stream>>>(n, npatch, patch_ptr, pp, dinfo);
  PW_TRY(cudaGetLastError());
  /* the scans need the count after the last position to be 0 */
  PW_TRY(cudaMemsetAsync(cnt + n, 0, sizeof(int), stream));
  PW_TRY(cudaMemsetAsync(cnt + n1 + n, 0, sizeof(int), stream));
  if (n > 0) {
    CountKernel<T><<<Blocks(n), kThreads, 0, stream>>>(*A, npatch, patch_ptr, row, pos, cnt, cnt + n1, dg, rw, dinfo);
    PW_TRY(cudaGetLastError());
  }
  PW_TRY(cub::DeviceScan::ExclusiveSum(tmp, tmp_bytes, cnt, aip, (int)n1, stream));
  PW_TRY(cub::DeviceScan::ExclusiveSum(tmp, tmp_bytes, cnt + n1, abp, (int)n1, stream));
  TotalsKernel<<<1, 1, 0, stream>>>(n, aip, abp, dinfo);
  PW_TRY(cudaGetLastError());
  PW_TRY(cudaMemcpyAsync(&info, dinfo, sizeof(Info), cudaMemcpyDeviceToHost, stream));
  PW_TRY(cudaStreamSynchronize(stream));
  if (info.bad) {
    err = (cudaError_t)1; /* the bad-argument code of the contract */
    goto fail;
  }
  PW_TRY(cudaFree(cnt));
  PW_TRY(cudaFree(tmp));
  PW_TRY(cudaFree(dinfo));
  cnt   = NULL;
  tmp   = NULL;
  dinfo = NULL;

  PW_TRY(Malloc((void **)&aic, sizeof(int) * (size_t)info.nai));
  PW_TRY(Malloc((void **)&abc, sizeof(int) * (size_t)info.nab));
  PW_TRY(Malloc((void **)&aiv, sizeof(T) * (size_t)info.nai));
  PW_TRY(Malloc((void **)&abv, sizeof(T) * (size_t)info.nab));
  if (n > 0) {
    FillKernel<T><<<Blocks(n), kThreads, 0, stream>>>(*A, npatch, patch_ptr, row, pos, aip, abp, aic, aiv, abc, abv);
    PW_TRY(cudaGetLastError());
  }
#undef PW_TRY

  memset(d, 0, sizeof(*d));
  d->n           = n;
  d->npatch      = npatch;
  d->max_patch   = info.max_patch;
  d->patch_ptr   = pp;
  d->row         = rw;
  d->ai_ptr      = aip;
  d->ai_col      = aic;
  d->ab_ptr      = abp;
  d->ab_col      = abc;
  d->single      = sizeof(T) == sizeof(float);
  d->ai_val      = aiv;
  d->ab_val      = abv;
  d->diag        = dg;
  d->inner       = 1;
  d->inner_omega = 1.0;
  d->omega       = 1.0;
  *nnz_ai        = info.nai;
  *nnz_ab        = info.nab;
  return cudaSuccess;

fail:
  /* the kernels may still run on an error other than bad arguments: let them finish first */
  cudaStreamSynchronize(stream);
  for (void *p : {(void *)pp, (void *)rw, (void *)aip, (void *)abp, (void *)aic, (void *)abc, (void *)cnt, (void *)aiv, (void *)abv, (void *)dg, tmp, (void *)dinfo})
    if (p) cudaFree(p);
  return err;
}

} // namespace

extern "C" int PatchworkSPMBuildCUDA(const PatchworkCSR *A, int npatch, const int *patch_ptr, const int *row, const int *pos, int single, PatchworkSPMDesc *d, int *nnz_ai, int *nnz_ab, void *stream)
{
  if (d) memset(d, 0, sizeof(*d)); /* empty on every failure */
  if (!A || !d || !nnz_ai || !nnz_ab || A->n < 0 || A->n == 0x7fffffff || npatch < 0 || npatch == 0x7fffffff || !patch_ptr || (A->n > 0 && (!A->ptr || npatch == 0)) || (row && !pos)) return 1;
  return (int)(single ? Build<float>(A, npatch, patch_ptr, row, pos, d, nnz_ai, nnz_ab, (cudaStream_t)stream) : Build<double>(A, npatch, patch_ptr, row, pos, d, nnz_ai, nnz_ab, (cudaStream_t)stream));
}

extern "C" void PatchworkSPMFreeCUDA(PatchworkSPMDesc *d)
{
  if (!d) return;
  for (const void *p : {(const void *)d->patch_ptr, (const void *)d->row, (const void *)d->ai_ptr, (const void *)d->ai_col, (const void *)d->ab_ptr, (const void *)d->ab_col, d->ai_val, d->ab_val, d->diag})
    if (p) cudaFree((void *)p);
  memset(d, 0, sizeof(*d));
}
