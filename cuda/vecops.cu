/* CUDA vector kernels of the single-precision cycles (contract: include/patchwork/vec_kernel.h; CPU
   reference: src/core/vecops_ref.c). Grid-stride loops over 64-bit indices: one launch of a few
   blocks per SM covers any length, and arrays beyond 2^31 entries fit on one GPU. */
#include <cuda_runtime.h>
#include <patchwork/amg_hash.h>
#include <patchwork/vec_kernel.h>

namespace {

template <typename From, typename To>
__global__ void Convert(ptrdiff_t n, const From *__restrict__ x, To *__restrict__ y)
{
  for (ptrdiff_t i = blockIdx.x * (ptrdiff_t)blockDim.x + threadIdx.x; i < n; i += (ptrdiff_t)gridDim.x * blockDim.x) y[i] = (To)x[i];
}

__global__ void AYPX(ptrdiff_t n, float a, const float *__restrict__ x, float *__restrict__ y)
{
  for (ptrdiff_t i = blockIdx.x * (ptrdiff_t)blockDim.x + threadIdx.x; i < n; i += (ptrdiff_t)gridDim.x * blockDim.x) y[i] = a * y[i] + x[i];
}

__global__ void HashFill(ptrdiff_t n, ptrdiff_t first, unsigned seed, double *__restrict__ y)
{
  for (ptrdiff_t i = blockIdx.x * (ptrdiff_t)blockDim.x + threadIdx.x; i < n; i += (ptrdiff_t)gridDim.x * blockDim.x) y[i] = PatchworkHash(seed, (int)(first + i)) * (2.0 / 4294967296.0) - 1.0;
}

/* enough 256-thread blocks to fill the device several times over, no more than the data needs */
unsigned Blocks(ptrdiff_t n)
{
  static int sms = 0;
  if (!sms) {
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) sms = 132;
  }
  const ptrdiff_t need = (n + 255) / 256, most = 8 * (ptrdiff_t)sms;
  return (unsigned)(need < most ? (need > 0 ? need : 1) : most);
}

} // namespace

extern "C" int PatchworkVecToFloatCUDA(ptrdiff_t n, const double *x, float *y, void *stream)
{
  if (n <= 0) return (int)cudaSuccess;
  Convert<double, float><<<Blocks(n), 256, 0, (cudaStream_t)stream>>>(n, x, y);
  return (int)cudaGetLastError();
}

extern "C" int PatchworkVecToDoubleCUDA(ptrdiff_t n, const float *x, double *y, void *stream)
{
  if (n <= 0) return (int)cudaSuccess;
  Convert<float, double><<<Blocks(n), 256, 0, (cudaStream_t)stream>>>(n, x, y);
  return (int)cudaGetLastError();
}

extern "C" int PatchworkVecLongToIntCUDA(ptrdiff_t n, const long long *x, int *y, void *stream)
{
  if (n <= 0) return (int)cudaSuccess;
  Convert<long long, int><<<Blocks(n), 256, 0, (cudaStream_t)stream>>>(n, x, y);
  return (int)cudaGetLastError();
}

extern "C" int PatchworkVecAYPXFloatCUDA(ptrdiff_t n, float a, const float *x, float *y, void *stream)
{
  if (n <= 0) return (int)cudaSuccess;
  AYPX<<<Blocks(n), 256, 0, (cudaStream_t)stream>>>(n, a, x, y);
  return (int)cudaGetLastError();
}

extern "C" int PatchworkDeviceMalloc(size_t bytes, void **p)
{
  *p = NULL;
  return bytes ? (int)cudaMalloc(p, bytes) : (int)cudaSuccess;
}

extern "C" int PatchworkDeviceFree(void *p)
{
  return p ? (int)cudaFree(p) : (int)cudaSuccess;
}

extern "C" int PatchworkDeviceMemzero(void *p, size_t bytes, void *stream)
{
  return bytes ? (int)cudaMemsetAsync(p, 0, bytes, (cudaStream_t)stream) : (int)cudaSuccess;
}

extern "C" int PatchworkDeviceCopyToDevice(void *dst, const void *src, size_t bytes, void *stream)
{
  return bytes ? (int)cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, (cudaStream_t)stream) : (int)cudaSuccess;
}

extern "C" int PatchworkDeviceCopy(void *dst, const void *src, size_t bytes, void *stream)
{
  return bytes ? (int)cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, (cudaStream_t)stream) : (int)cudaSuccess;
}

extern "C" int PatchworkDeviceCopyToHost(void *dst, const void *src, size_t bytes, void *stream)
{
  cudaError_t err;

  if (!bytes) return (int)cudaSuccess;
  err = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, (cudaStream_t)stream);
  return (int)(err ? err : cudaStreamSynchronize((cudaStream_t)stream));
}

extern "C" int PatchworkVecHashFillCUDA(ptrdiff_t n, ptrdiff_t first, unsigned seed, double *y, void *stream)
{
  if (n <= 0) return (int)cudaSuccess;
  HashFill<<<Blocks(n), 256, 0, (cudaStream_t)stream>>>(n, first, seed, y);
  return (int)cudaGetLastError();
}

extern "C" int PatchworkHostPinnedMalloc(size_t bytes, void **p)
{
  *p = NULL;
  return bytes ? (int)cudaMallocHost(p, bytes) : (int)cudaSuccess;
}

extern "C" int PatchworkHostPinnedFree(void *p)
{
  return p ? (int)cudaFreeHost(p) : (int)cudaSuccess;
}

extern "C" int PatchworkDeviceStreamSynchronize(void *stream)
{
  return (int)cudaStreamSynchronize((cudaStream_t)stream);
}

extern "C" int PatchworkDeviceCopyToHostAsync(void *dst, const void *src, size_t bytes, void *stream)
{
  return bytes ? (int)cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, (cudaStream_t)stream) : (int)cudaSuccess;
}

namespace {

/* the halo exchange's gathers and scatters: several entries i may add into one y entry, so adds are
   atomic; NULL index arrays are the identity, a branch every thread takes the same way; a NULL x
   writes zeros */
template <typename T, bool Add>
__global__ void Scatter(ptrdiff_t n, const int *__restrict__ ix, const T *__restrict__ x, const int *__restrict__ iy, T *y)
{
  for (ptrdiff_t i = blockIdx.x * (ptrdiff_t)blockDim.x + threadIdx.x; i < n; i += (ptrdiff_t)gridDim.x * blockDim.x) {
    const ptrdiff_t s = ix ? ix[i] : i, d = iy ? iy[i] : i;
    const T         v = x ? x[s] : (T)0;

    if (Add) atomicAdd(&y[d], v);
    else y[d] = v;
  }
}

template <typename T>
int ScatterLaunch(ptrdiff_t n, const int *ix, const T *x, const int *iy, T *y, int add, void *stream)
{
  if (n <= 0) return (int)cudaSuccess;
  if (add) Scatter<T, true><<<Blocks(n), 256, 0, (cudaStream_t)stream>>>(n, ix, x, iy, y);
  else Scatter<T, false><<<Blocks(n), 256, 0, (cudaStream_t)stream>>>(n, ix, x, iy, y);
  return (int)cudaGetLastError();
}

} // namespace

extern "C" int PatchworkVecScatterFloatCUDA(ptrdiff_t n, const int *ix, const float *x, const int *iy, float *y, int add, void *stream)
{
  return ScatterLaunch<float>(n, ix, x, iy, y, add, stream);
}

extern "C" int PatchworkVecScatterCUDA(ptrdiff_t n, const int *ix, const double *x, const int *iy, double *y, int add, void *stream)
{
  return ScatterLaunch<double>(n, ix, x, iy, y, add, stream);
}
