/* What the CUDA files of PCPATCHAMG's setup share (cuda/amg_graph.cu, cuda/amg_galerkin.cu): the
   block size, launch sizes, the error return, stream-ordered scratch memory, small copies back. */
#ifndef PATCHWORK_AMG_DEVICE_H
#define PATCHWORK_AMG_DEVICE_H

#include <cuda_runtime.h>
#include <vector>

constexpr int kBlock = 256; /* threads of every kernel */

/* return the CUDA error of call, if any, as the int of the kernel ABI */
#define PW_TRY(call) \
  do { \
    const cudaError_t e_ = (call); \
    if (e_ != cudaSuccess) return (int)e_; \
  } while (0)

static inline unsigned Blocks(long long count)
{
  return (unsigned)((count + kBlock - 1) / kBlock);
}

static inline int Multiprocessors(void)
{
  int dev = 0, sms = 0;

  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms < 1) sms = 32;
  return sms;
}

/* Blocks of a grid-stride loop whose length only the device knows */
static inline unsigned StrideBlocks(void)
{
  return (unsigned)Multiprocessors() * 8;
}

/* Bits to hold the values 0..maxval, at least 1 (radix sorts need a nonempty bit range) */
static inline int Bits(long long maxval)
{
  int b = 1;

  while (b < 63 && (maxval >> b) > 0) b++;
  return b;
}

/* Scratch arrays freed, stream-ordered, when the object goes out of scope */
class Scratch {
public:
  explicit Scratch(cudaStream_t s) : s_(s) {}
  Scratch(const Scratch &)            = delete;
  Scratch &operator=(const Scratch &) = delete;
  ~Scratch()
  {
    for (void *p : p_) cudaFreeAsync(p, s_);
  }
  template <typename T>
  cudaError_t Get(T **ptr, size_t count)
  {
    void *q = nullptr;

    *ptr                = nullptr;
    const cudaError_t e = cudaMallocAsync(&q, (count ? count : 1) * sizeof(T), s_);
    if (e != cudaSuccess) return e;
    p_.push_back(q);
    *ptr = static_cast<T *>(q);
    return cudaSuccess;
  }

private:
  cudaStream_t        s_;
  std::vector<void *> p_;
};

/* Copy a few bytes back to the host and wait for them */
static inline cudaError_t Fetch(void *host, const void *dev, size_t bytes, cudaStream_t s)
{
  cudaError_t e = cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, s);

  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  return e;
}

__device__ __forceinline__ long long Gid(void)
{
  return (long long)blockIdx.x * blockDim.x + threadIdx.x;
}

#endif
