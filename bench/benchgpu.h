/* What the PETSc-free CUDA kernel benchmarks share: CUDA error checks and event timing. */
#ifndef PATCHWORK_BENCHGPU_H
#define PATCHWORK_BENCHGPU_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
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

#endif
