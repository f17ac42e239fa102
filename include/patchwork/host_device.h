/* PW_HOST_DEVICE: small functions of the kernel headers that the CPU references (C) and the CUDA kernels
   both call: inline on the host and on the device under nvcc, static inline in C. PW_UNROLL: a loop
   nvcc must unroll (so that arrays indexed by its counter stay in registers); nothing on the host. */
#ifndef PATCHWORK_HOST_DEVICE_H
#define PATCHWORK_HOST_DEVICE_H

#if defined(__CUDACC__)
  #define PW_HOST_DEVICE __host__ __device__ __forceinline__
#else
  #define PW_HOST_DEVICE static inline
#endif
#if defined(__CUDA_ARCH__)
  #define PW_UNROLL _Pragma("unroll")
#else
  #define PW_UNROLL
#endif

#endif
