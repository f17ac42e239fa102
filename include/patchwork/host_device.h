/* PW_HOST_DEVICE: small functions of the kernel headers that the CPU references (C) and the CUDA kernels
   both call: inline on the host and on the device under nvcc, static inline in C. PW_UNROLL: a loop
   nvcc must unroll (so that arrays indexed by its counter stay in registers); nothing on the host.
   PW_PREFETCH: a host prefetch hint. */
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
/* PW_PREFETCH(p, w): on the host, ask for the cache line at p early (w: 1 when it will be written), for
   loops that wait on scattered reads of arrays larger than the cache; nothing where GCC's builtin is
   missing (PETSc's PetscPrefetchBlock() needs <xmmintrin.h>, which 3.26's headers do not include) */
#if defined(__GNUC__) || defined(__clang__)
  #define PW_PREFETCH(p, w) __builtin_prefetch((p), (w))
#else
  #define PW_PREFETCH(p, w) ((void)(p))
#endif

#endif
