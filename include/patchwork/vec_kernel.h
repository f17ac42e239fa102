/* Vector kernels of the single-precision preconditioner cycles: the conversions on entry and exit
   of PCApply() and the few vector updates a cycle makes on arrays the preconditioner owns.
   CPU reference in src/core/vecops_ref.c, CUDA in cuda/vecops.cu (device pointers, stream a
   cudaStream_t as void*, NULL: default; they return 0 or a cudaError_t code). */
#ifndef PATCHWORK_VEC_KERNEL_H
#define PATCHWORK_VEC_KERNEL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif
/* y = (float)x and y = (double)x; NaN and Inf pass through as such */
void PatchworkVecToFloatRef(ptrdiff_t n, const double *x, float *y);
void PatchworkVecToDoubleRef(ptrdiff_t n, const float *x, double *y);
/* y = a y + x in float (a = -1: y = x - y, a residual from b and A x; a = 1: y += x) */
void PatchworkVecAYPXFloatRef(ptrdiff_t n, float a, const float *x, float *y);

/* y_i = a pseudo-random number in [-1, 1) from the hash of (seed, first + i) (amg_hash.h): the start
   of power iterations, the same on the host and the device and independent of how the vector is
   distributed (first: the global index of y_0) */
void PatchworkVecHashFillRef(ptrdiff_t n, ptrdiff_t first, unsigned seed, double *y);

/* y = (int)x for indices known to fit in int (the caller checks): 64-bit row starts of a pattern
   handed to the int CSR of the AMG kernels */
void PatchworkVecLongToIntRef(ptrdiff_t n, const long long *x, int *y);
int  PatchworkVecLongToIntCUDA(ptrdiff_t n, const long long *x, int *y, void *stream);

int PatchworkVecHashFillCUDA(ptrdiff_t n, ptrdiff_t first, unsigned seed, double *y, void *stream);
int PatchworkVecToFloatCUDA(ptrdiff_t n, const double *x, float *y, void *stream);
int PatchworkVecToDoubleCUDA(ptrdiff_t n, const float *x, double *y, void *stream);
int PatchworkVecAYPXFloatCUDA(ptrdiff_t n, float a, const float *x, float *y, void *stream);
/* device memory the preconditioners own: plain cudaMalloc (no managed memory), zeroing in a stream */
int PatchworkDeviceMalloc(size_t bytes, void **p);
int PatchworkDeviceFree(void *p);
int PatchworkDeviceMemzero(void *p, size_t bytes, void *stream);
/* host to device copy in a stream (the host buffer must stay alive until the stream has run) */
int PatchworkDeviceCopyToDevice(void *dst, const void *src, size_t bytes, void *stream);
/* device to device copy in a stream */
int PatchworkDeviceCopy(void *dst, const void *src, size_t bytes, void *stream);
/* device to host copy, complete on return (waits for the stream's earlier work) */
int PatchworkDeviceCopyToHost(void *dst, const void *src, size_t bytes, void *stream);
/* device to host copy in a stream (complete once the stream is synchronized) */
int PatchworkDeviceCopyToHostAsync(void *dst, const void *src, size_t bytes, void *stream);
int PatchworkDeviceStreamSynchronize(void *stream);
/* page-locked host memory: the staging buffers of halo exchanges through a non-CUDA-aware MPI */
int PatchworkHostPinnedMalloc(size_t bytes, void **p);
int PatchworkHostPinnedFree(void *p);

/* y[iy ? iy[i] : i] = x[ix ? ix[i] : i] (0 when x is NULL) for i < n, or += when add: the pack,
   unpack, local and zeroing parts of the halo exchanges (src/sys/halo.c), in float and double.
   Without add the iy[i] must be distinct; with add they may repeat: the reference adds in order of
   i, the CUDA version atomically in any order. */
void PatchworkVecScatterFloatRef(ptrdiff_t n, const int *ix, const float *x, const int *iy, float *y, int add);
int  PatchworkVecScatterFloatCUDA(ptrdiff_t n, const int *ix, const float *x, const int *iy, float *y, int add, void *stream);
void PatchworkVecScatterRef(ptrdiff_t n, const int *ix, const double *x, const int *iy, double *y, int add);
int  PatchworkVecScatterCUDA(ptrdiff_t n, const int *ix, const double *x, const int *iy, double *y, int add, void *stream);
#ifdef __cplusplus
}
#endif
#endif
