/* PCPATCHAMG's strong graph on the GPU (contract: include/patchwork/amg_kernel.h; CPU reference:
   src/core/amg_strength_ref.c): a thread a row for |diagonal|, the count of strong couplings, and,
   after a cub scan of the counts into the graph's row starts, the fill. Each entry is decided by
   the same PatchworkCSRStrong as on the host, so the graphs are equal. */
#include <cuda_runtime.h>
#include <string.h>
#include <cub/cub.cuh>
#include <patchwork/amg_kernel.h>
#include "amg_device.h"

namespace {

__global__ void __launch_bounds__(kBlock) AbsDiagonal(PatchworkCSR A, double *__restrict__ d)
{
  const long long i = Gid();

  if (i >= A.n) return;
  const int e = PatchworkCSRFind(A.col, A.ptr[i], A.ptr[i + 1], (int)i);
  d[i]        = e >= 0 ? fabs(A.val[e]) : 0.0;
}

/* cnt[i] = strong couplings of row i; cnt[n] = 0 (the scan's last entry is the total) */
__global__ void __launch_bounds__(kBlock) StrongCount(PatchworkCSR A, const double *__restrict__ d, double theta, int *__restrict__ cnt)
{
  const long long i = Gid();
  int             c = 0;

  if (i > A.n) return;
  if (i < A.n)
    for (int e = A.ptr[i]; e < A.ptr[i + 1]; e++) c += PatchworkCSRStrong(&A, d, theta, (int)i, e);
  cnt[i] = c;
}

__global__ void __launch_bounds__(kBlock) StrongFill(PatchworkCSR A, const double *__restrict__ d, double theta, const int *__restrict__ ptr, int *__restrict__ adj)
{
  const long long i = Gid();

  if (i >= A.n) return;
  int *a = adj + ptr[i];
  for (int e = A.ptr[i]; e < A.ptr[i + 1]; e++)
    if (PatchworkCSRStrong(&A, d, theta, (int)i, e)) *a++ = A.col[e];
}

} // namespace

extern "C" int PatchworkGraphStrengthCUDA(const PatchworkCSR *A, double theta, PatchworkGraph *s, void *stream)
{
  cudaStream_t st  = (cudaStream_t)stream;
  Scratch      mem(st);
  double      *d;
  int         *cnt, *ptr = nullptr, *adj = nullptr, ne = 0;
  char        *tmp;
  size_t       tmp_bytes = 0;
  cudaError_t  e;

  if (!s) return 1;
  memset(s, 0, sizeof(*s));
  if (!A || A->n < 0 || (A->n > 0 && (!A->ptr || !A->col || !A->val))) return 1;
  const int n = A->n;
  PW_TRY(mem.Get(&d, (size_t)n));
  PW_TRY(mem.Get(&cnt, (size_t)n + 1));
  PW_TRY(cub::DeviceScan::ExclusiveSum(nullptr, tmp_bytes, cnt, ptr, n + 1, st));
  PW_TRY(mem.Get(&tmp, tmp_bytes));
  /* the graph's arrays: cudaMalloc, so that they outlive the stream-ordered scratch */
  PW_TRY(cudaMalloc(&ptr, sizeof(int) * ((size_t)n + 1)));
  if (n > 0) AbsDiagonal<<<Blocks(n), kBlock, 0, st>>>(*A, d);
  StrongCount<<<Blocks((long long)n + 1), kBlock, 0, st>>>(*A, d, theta, cnt);
  if ((e = cudaGetLastError()) != cudaSuccess) goto fail;
  if ((e = cub::DeviceScan::ExclusiveSum(tmp, tmp_bytes, cnt, ptr, n + 1, st)) != cudaSuccess) goto fail;
  if ((e = Fetch(&ne, ptr + n, sizeof(int), st)) != cudaSuccess) goto fail;
  if ((e = cudaMalloc(&adj, sizeof(int) * (ne ? (size_t)ne : 1))) != cudaSuccess) goto fail;
  if (n > 0) StrongFill<<<Blocks(n), kBlock, 0, st>>>(*A, d, theta, ptr, adj);
  if ((e = cudaGetLastError()) != cudaSuccess) goto fail;
  s->n   = n;
  s->ptr = ptr;
  s->adj = adj;
  return 0;
fail:
  cudaFree(ptr);
  cudaFree(adj);
  return (int)e;
}
