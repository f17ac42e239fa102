/* The device CSR matrices of PCPATCHAMG's coarse levels: y = z + M x and the diagonal, and the
   symmetric part (M + M^T)/2 of SPAI(1)'s M (contract:
   include/patchwork/amg_kernel.h; CPU reference: src/core/amg_csr_ref.c; the transpose is in
   cuda/amg_galerkin.cu, beside the one the Galerkin product uses).

   Mult is the vector CSR SpMV: a group of g lanes of a warp per row (g a power of two, 2..32,
   from the mean row length, so that prolongators of ~4 entries a row and coarse operators of
   ~30-60 both keep their lanes busy), the group's partial sums added by shuffles. MultSingle reads float values (a level's transfers in
single precision), products and sums in double. The order of a
   row's sum depends only on g, so repeated products are bitwise equal. Diagonal: a thread a row,
   its entries in storage order, as the reference adds them. */
#include <cuda_runtime.h>
#include <patchwork/amg_kernel.h>
#include "amg_device.h"

namespace {

template <int G, typename V>
__global__ void __launch_bounds__(kBlock) MultKernel(int n, const int *__restrict__ ptr, const int *__restrict__ col, const V *__restrict__ val, const double *__restrict__ x, const double *z, double *y)
{
  const long long t    = Gid();
  const long long i    = t / G;
  const int       lane = (int)(t % G);
  double          sum  = 0;

  if (i < n)
    for (int e = ptr[i] + lane; e < ptr[i + 1]; e += G) sum += (double)val[e] * x[col[e]];
  /* every lane of the warp takes part in the shuffles: n * G is rounded up to whole warps */
  for (int o = G / 2; o > 0; o /= 2) sum += __shfl_down_sync(0xffffffffu, sum, o, G);
  if (i < n && lane == 0) y[i] = z ? z[i] + sum : sum;
}

__global__ void __launch_bounds__(kBlock) DiagonalKernel(int n, const int *__restrict__ ptr, const int *__restrict__ col, const double *__restrict__ val, double *__restrict__ d)
{
  const long long i = Gid();
  double          s = 0;

  if (i >= n) return;
  for (int e = ptr[i]; e < ptr[i + 1]; e++)
    if (col[e] == i) s += val[e];
  d[i] = s;
}

/* a thread a row: *missing = 1 when an entry has no mirror */
__global__ void __launch_bounds__(kBlock) MirrorKernel(int n, const int *__restrict__ ptr, const int *__restrict__ col, int *missing)
{
  const long long i = Gid();

  if (i >= n) return;
  for (int e = ptr[i]; e < ptr[i + 1]; e++)
    if (col[e] < 0 || col[e] >= n || PatchworkCSRFind(col, ptr[col[e]], ptr[col[e] + 1], (int)i) < 0) *missing = 1;
}

/* a thread a row, each pair from the row of its upper entry: no two threads write one entry */
__global__ void __launch_bounds__(kBlock) SymmetrizeKernel(int n, const int *__restrict__ ptr, const int *__restrict__ col, double *val)
{
  const long long i = Gid();

  if (i >= n) return;
  for (int e = ptr[i]; e < ptr[i + 1]; e++)
    if (col[e] > i) {
      const int    f = PatchworkCSRFind(col, ptr[col[e]], ptr[col[e] + 1], (int)i);
      const double v = (val[e] + val[f]) * 0.5;

      val[e] = val[f] = v;
    }
}

template <int G, typename V>
cudaError_t LaunchMult(const PatchworkCSRMatrix *M, const V *val, const double *x, const double *z, double *y, cudaStream_t s)
{
  const long long threads = ((long long)M->nrow * G + 31) / 32 * 32;

  MultKernel<G, V><<<Blocks(threads), kBlock, 0, s>>>(M->nrow, M->ptr, M->col, val, x, z, y);
  return cudaGetLastError();
}

/* y = z + M x with the values val (M's own, or their float copy) */
template <typename V>
int Mult(const PatchworkCSRMatrix *M, const V *val, const double *x, const double *z, double *y, cudaStream_t s)
{
  const double mean = M && M->nrow > 0 ? (double)M->nnz / M->nrow : 0;
  int          g    = 2;

  if (!M || M->nrow < 0 || M->ncol < 0 || M->nnz < 0) return 1;
  if (M->nrow == 0) return 0;
  if (!M->ptr || !y || (M->nnz > 0 && (!M->col || !val || !x))) return 1;
  while (g < 32 && 2 * g < mean) g *= 2;
  switch (g) {
  case 2: return (int)LaunchMult<2>(M, val, x, z, y, s);
  case 4: return (int)LaunchMult<4>(M, val, x, z, y, s);
  case 8: return (int)LaunchMult<8>(M, val, x, z, y, s);
  case 16: return (int)LaunchMult<16>(M, val, x, z, y, s);
  default: return (int)LaunchMult<32>(M, val, x, z, y, s);
  }
}

} // namespace

extern "C" int PatchworkCSRMultCUDA(const PatchworkCSRMatrix *M, const double *x, const double *z, double *y, void *stream)
{
  return Mult(M, M ? M->val : (const double *)nullptr, x, z, y, (cudaStream_t)stream);
}

extern "C" int PatchworkCSRMultSingleCUDA(const PatchworkCSRMatrix *M, const float *val, const double *x, const double *z, double *y, void *stream)
{
  return Mult(M, val, x, z, y, (cudaStream_t)stream);
}

extern "C" int PatchworkCSRDiagonalCUDA(const PatchworkCSRMatrix *M, double *d, void *stream)
{
  if (!M || M->nrow < 0 || M->ncol < 0 || M->nnz < 0 || M->nrow != M->ncol) return 1;
  if (M->nrow == 0) return 0;
  if (!M->ptr || !d || (M->nnz > 0 && (!M->col || !M->val))) return 1;
  DiagonalKernel<<<Blocks(M->nrow), kBlock, 0, (cudaStream_t)stream>>>(M->nrow, M->ptr, M->col, M->val, d);
  return (int)cudaGetLastError();
}

extern "C" int PatchworkCSRSymmetrizeCUDA(PatchworkCSRMatrix *M, void *stream)
{
  const cudaStream_t s = (cudaStream_t)stream;
  Scratch            mem(s);
  int               *dmissing, missing = 0;

  if (!M || M->nrow < 0 || M->ncol < 0 || M->nnz < 0 || M->nrow != M->ncol) return 1;
  if (M->nrow == 0) return 0;
  if (!M->ptr || (M->nnz > 0 && (!M->col || !M->val))) return 1;
  PW_TRY(mem.Get(&dmissing, 1));
  PW_TRY(cudaMemsetAsync(dmissing, 0, sizeof(int), s));
  MirrorKernel<<<Blocks(M->nrow), kBlock, 0, s>>>(M->nrow, M->ptr, M->col, dmissing);
  PW_TRY(cudaGetLastError());
  PW_TRY(Fetch(&missing, dmissing, sizeof(int), s));
  if (missing) return 3;
  SymmetrizeKernel<<<Blocks(M->nrow), kBlock, 0, s>>>(M->nrow, M->ptr, M->col, M->val);
  return (int)cudaGetLastError();
}
