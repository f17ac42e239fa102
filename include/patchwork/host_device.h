/* PW_HOST_DEVICE: small functions of the kernel headers that the CPU references (C) and the CUDA kernels
   both call: inline on the host and on the device under nvcc, static inline in C. */
#ifndef PATCHWORK_HOST_DEVICE_H
#define PATCHWORK_HOST_DEVICE_H

#if defined(__CUDACC__)
  #define PW_HOST_DEVICE __host__ __device__ __forceinline__
#else
  #define PW_HOST_DEVICE static inline
#endif

#endif
