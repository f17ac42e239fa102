/* What the PETSc-free CUDA kernel benchmarks share: CUDA error checks and event timing. */
#ifndef PATCHWORK_BENCHGPU_H
#define PATCHWORK_BENCHGPU_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <algorithm>
#include <vector>

#define CHECK_CUDA(call) \
  do { \
    cudaError_t e_ = (cudaError_t)(call); \
    if (e_ != cudaSuccess) { \
      fprintf(stderr, "cuda error %s at %s:%d: %s\n", cudaGetErrorName(e_), __FILE__, __LINE__, cudaGetErrorString(e_)); \
      exit(1); \
    } \
  } while (0)

static double Median(std::vector<float> v)
{
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* host wall-clock time in seconds */
static inline double WallSeconds(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* median time in ms of reps calls of f (each timed with events), after warm warm-up calls */
template <typename F>
static double TimeIt(int reps, cudaStream_t s, F f, int warm = 2)
{
  std::vector<cudaEvent_t> ev(2 * reps);
  std::vector<float>       ms(reps);

  for (auto &e : ev) CHECK_CUDA(cudaEventCreate(&e));
  for (int w = 0; w < warm; w++) f();
  for (int r = 0; r < reps; r++) {
    CHECK_CUDA(cudaEventRecord(ev[2 * r], s));
    f();
    CHECK_CUDA(cudaEventRecord(ev[2 * r + 1], s));
  }
  CHECK_CUDA(cudaStreamSynchronize(s));
  CHECK_CUDA(cudaGetLastError());
  for (int r = 0; r < reps; r++) CHECK_CUDA(cudaEventElapsedTime(&ms[r], ev[2 * r], ev[2 * r + 1]));
  for (auto &e : ev) CHECK_CUDA(cudaEventDestroy(e));
  return Median(ms);
}

/* The options of the tensor and plex kernel benchmarks; the caller sets the defaults */
struct BenchOptions {
  bool   quick;
  int    reps, dim, k; /* dim, k: 0 for all */
  double size;         /* target DoF (0: the benchmark's own list) */
};

/* The start of main(): parse [--quick] [--reps N] [--dim 2|3] [--k K] [--size DOF], check for a device
   and print it. Returns -1 to go on, else the exit code: 2 for bad arguments, 77 without a device. */
static inline int BenchStart(int argc, char **argv, BenchOptions *o)
{
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) o->quick = true;
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) o->reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--dim") && i + 1 < argc) o->dim = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--k") && i + 1 < argc) o->k = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--size") && i + 1 < argc) o->size = atof(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--quick] [--reps N] [--dim 2|3] [--k K] [--size DOF]\n", argv[0]);
      return 2;
    }
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    printf("SKIP: no CUDA device\n");
    return 77;
  }
  if (o->reps < 1) o->reps = 1;
  cudaDeviceProp p;
  CHECK_CUDA(cudaGetDeviceProperties(&p, 0));
  printf("# device: %s, %d SMs, %.1f GiB, L2 %.0f MiB\n", p.name, p.multiProcessorCount, p.totalGlobalMem / 1073741824.0, p.l2CacheSize / 1048576.0);
  return -1;
}

#endif
