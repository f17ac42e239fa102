/* What the PETSc-free GPU tests share: results, a reproducible random generator, CUDA error checks. */
#ifndef PATCHWORK_GPUTEST_H
#define PATCHWORK_GPUTEST_H

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

#include "../errmax.h"

static int           g_fail = 0, g_pass = 0;
static cudaStream_t  g_stream;
static unsigned long long g_rng = 0x9E3779B97F4A7C15ull;

static inline double Rand(void) /* uniform in [-1,1) */
{
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return (double)(g_rng >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

#define CHECK_CUDA(call) \
  do { \
    cudaError_t e_ = (cudaError_t)(call); \
    if (e_ != cudaSuccess) { \
      printf("FAIL cuda error %s at %s:%d: %s\n", cudaGetErrorName(e_), __FILE__, __LINE__, cudaGetErrorString(e_)); \
      exit(1); \
    } \
  } while (0)

/* The start of every kernel test's main(): parse [--quick], create g_stream, print the device.
   Returns -1 to go on, else the exit code: 2 for bad arguments, 77 (skipped) without a device. */
static inline int GpuTestStart(int argc, char **argv, bool *quick)
{
  int ndev = 0;

  *quick = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) *quick = true;
    else {
      fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
      return 2;
    }
  }
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    printf("SKIP: no CUDA device\n");
    return 77;
  }
  CHECK_CUDA(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  {
    cudaDeviceProp p;
    CHECK_CUDA(cudaGetDeviceProperties(&p, 0));
    printf("# device: %s (sm_%d%d), %s\n", p.name, p.major, p.minor, *quick ? "quick" : "full");
  }
  return -1;
}

static inline void Report(bool ok, const char *name, double err, double tol)
{
  if (ok) g_pass++;
  else g_fail++;
  printf("%s %s err=%.2e tol=%.2e\n", ok ? "ok  " : "FAIL", name, err, tol);
  fflush(stdout);
}

/* A launcher must return want (an error code for bad input); CheckRet: must succeed, else stop */
static inline void ReportRet(int ret, int want, const char *name)
{
  const bool ok = ret == want;

  if (ok) g_pass++;
  else g_fail++;
  printf("%s errors %s ret=%d want=%d (%s)\n", ok ? "ok  " : "FAIL", name, ret, want, cudaGetErrorString((cudaError_t)ret));
  fflush(stdout);
}

static inline void CheckRet(int ret, const char *what)
{
  if (ret) {
    printf("FAIL %s returned %d (%s)\n", what, ret, cudaGetErrorString((cudaError_t)ret));
    exit(1);
  }
}

/* A device copy of h (one element at least, so the pointer is valid); synchronized, because the
   kernels under test run on a non-blocking stream that a plain cudaMemcpy does not order */
template <typename T>
static T *Upload(const std::vector<T> &h)
{
  T *d;
  CHECK_CUDA(cudaMalloc((void **)&d, std::max<size_t>(h.size(), 1) * sizeof(T)));
  if (!h.empty()) CHECK_CUDA(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaDeviceSynchronize());
  return d;
}

/* Counts a check and prints its line: "ok   ..." or "FAIL ..." */
static inline void Result(bool ok, const char *fmt, ...)
{
  va_list ap;

  if (ok) g_pass++;
  else g_fail++;
  printf("%s ", ok ? "ok  " : "FAIL");
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  fflush(stdout);
}

#endif
