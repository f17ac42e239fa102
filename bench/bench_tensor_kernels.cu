/* Throughput of the tensor-product apply kernels (include/patchwork/tensor_kernel.h), PETSc-free.

   For 3D degrees 1..8 (and 2D degrees 1..10) at several sizes, atomic and colored scatter adding
   into y, and the atomic one overwriting y (a memset first, as in MatMult); double and float: the median time of `reps` warm applies (each timed with CUDA events) on the whole grid
   with Dirichlet boundary conditions, as GDoF/s and as a percentage of the bandwidth bound. The
   bound assumes 16 B/DoF in double (8 B/DoF in float): x read once, y written once, at the
   device-to-device cudaMemcpy bandwidth measured in the same run (counting bytes read + written).
   An apply also reads y (it adds into it), so 24 B/DoF actually move: 2/3 of the bound is the
   practical ceiling.

   The last lines (prefixed SUMMARY) give, per dimension and degree at the largest size, the
   throughput of each variant and a bandwidth-model estimate of an assembled CSR SpMV:
   (2k+1)^dim nonzeros per row at 12 B each (value + column index) plus 16 B of vector traffic.

   Usage: bench_tensor_kernels [--quick] [--reps N] [--dim 2|3] [--k K] [--size DOF]
     --k, --size: only that degree / one grid of about DOF nodes (e.g. for a profiler run) */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>
#include "benchgpu.h"
#include <patchwork/basis1d.h>
#include <patchwork/tensor_kernel.h>

template <typename T>
__global__ void Fill(T *x, long long n, unsigned seed)
{
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    unsigned long long h = (unsigned long long)i * 0x9E3779B97F4A7C15ull + seed;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    x[i] = (T)((double)(h >> 40) * (1.0 / 16777216.0) - 0.5);
  }
}

struct Config {
  int       dim, k, cells;
  long long dof;
};

/* atomic and colored add into y; overwrite sets y (a memset, then the atomic add), as MatMult does */
enum { ATOMIC, COLORED, OVERWRITE, NVARIANT };
static const char *variant_name[NVARIANT] = {"atomic", "colored", "overwrite"};

struct Result {
  Config c;
  int    scatter, prec; /* scatter: the variant; prec: 8 double, 4 float */
  double ms, gdofs, pct;
};

static Config MakeConfig(int dim, int k, double target)
{
  Config c;
  const double per_dir = dim == 3 ? cbrt(target) : sqrt(target);

  c.dim   = dim;
  c.k     = k;
  c.cells = std::max(1, (int)lround((per_dir - 1) / k));
  const long long nodes = (long long)k * c.cells + 1;
  c.dof = dim == 3 ? nodes * nodes * nodes : nodes * nodes;
  return c;
}

static void MakeDesc(const Config &c, int scatter, PatchworkTensorDesc *d)
{
  memset(d, 0, sizeof(*d));
  d->dim       = c.dim;
  d->degree    = c.k;
  d->dirichlet = 1;
  d->scatter   = scatter;
  for (int r = 0; r < 3; r++) {
    const int nodes = r < c.dim ? c.k * c.cells + 1 : 1;
    d->nodes[r]      = nodes;
    d->cell_start[r] = 0;
    d->cell_end[r]   = r < c.dim ? c.cells : 1;
    d->in_start[r] = d->out_start[r] = 0;
    d->in_size[r] = d->out_size[r] = nodes;
  }
  /* a Helmholtz-like operator on the unit cube: alpha |K| M + beta |K|/h^2 K */
  const double h = 1.0 / c.cells, vol = c.dim == 3 ? h * h * h : h * h;
  d->coef_mass = vol;
  for (int r = 0; r < c.dim; r++) d->coef_stiff[r] = vol / (h * h);
  if (PatchworkTensor1DMatrices(c.k, PW_QUAD_GAUSS, d->mass1d, d->stiff1d)) {
    fprintf(stderr, "PatchworkTensor1DMatrices(%d) failed\n", c.k);
    exit(1);
  }
}

template <typename T>
static double TimeApply(const PatchworkTensorDesc *d, const T *x, T *y, int reps, cudaStream_t s)
{
  return TimeIt(
    reps, s,
    [&] {
      const int ret = sizeof(T) == 8 ? PatchworkTensorApplyCUDA(d, (const double *)x, (double *)y, s) : PatchworkTensorApplyCUDAFloat(d, (const float *)x, (float *)y, s);
      if (ret) {
        fprintf(stderr, "apply failed: %s\n", PatchworkCUDAErrorString(ret));
        exit(1);
      }
    },
    3);
}

int main(int argc, char **argv)
{
  BenchOptions o     = {false, 20, 0, 0, 0.0};
  const int    start = BenchStart(argc, argv, &o);

  if (start >= 0) return start;
  const int    reps = o.reps, only_dim = o.dim, only_k = o.k;
  const double only_size = o.size;
  const bool   quick = o.quick;

  /* configurations */
  std::vector<Config> cfgs;
  std::vector<double> sizes3 = quick ? std::vector<double>{1e5, 4e6} : std::vector<double>{1e5, 4e6, 1e8};
  std::vector<double> sizes2 = quick ? std::vector<double>{1e6} : std::vector<double>{1e6, 1e8};
  if (only_size > 0) sizes3 = sizes2 = std::vector<double>{only_size};
  if (only_dim != 2)
    for (int k = 1; k <= 8; k++)
      for (double t : sizes3)
        if (!only_k || k == only_k) cfgs.push_back(MakeConfig(3, k, t));
  if (only_dim != 3)
    for (int k = 1; k <= 10; k++)
      for (double t : sizes2)
        if (!only_k || k == only_k) cfgs.push_back(MakeConfig(2, k, t));
  if (cfgs.empty()) {
    fprintf(stderr, "no configuration selected\n");
    return 2;
  }
  long long maxdof = 0;
  for (auto &c : cfgs) maxdof = std::max(maxdof, c.dof);

  void        *x, *y;
  cudaStream_t s;
  const size_t bytes = (size_t)maxdof * sizeof(double);
  CHECK_CUDA(cudaMalloc(&x, bytes));
  CHECK_CUDA(cudaMalloc(&y, bytes));
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  /* device-to-device copy bandwidth, counting bytes read and written */
  double bw;
  {
    std::vector<cudaEvent_t> ev(2 * 10);
    std::vector<float>       ms(10);
    for (auto &e : ev) CHECK_CUDA(cudaEventCreate(&e));
    for (int w = 0; w < 3; w++) CHECK_CUDA(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, s));
    for (int r = 0; r < 10; r++) {
      CHECK_CUDA(cudaEventRecord(ev[2 * r], s));
      CHECK_CUDA(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, s));
      CHECK_CUDA(cudaEventRecord(ev[2 * r + 1], s));
    }
    CHECK_CUDA(cudaStreamSynchronize(s));
    for (int r = 0; r < 10; r++) CHECK_CUDA(cudaEventElapsedTime(&ms[r], ev[2 * r], ev[2 * r + 1]));
    for (auto &e : ev) CHECK_CUDA(cudaEventDestroy(e));
    bw = 2.0 * bytes / (Median(ms) * 1e-3);
  }
  printf("# copy bandwidth (device-to-device cudaMemcpy of %.2f GB, read+written): %.1f GB/s\n", bytes / 1e9, bw / 1e9);
  printf("# bound at that rate: %.1f GDoF/s in double (16 B/DoF), %.1f GDoF/s in float (8 B/DoF)\n", bw / 16e9, bw / 8e9);
  printf("# median of %d warm applies, Dirichlet, whole grid, Gauss quadrature\n", reps);
  printf("%3s %2s %11s %-9s %-6s %9s %8s %7s\n", "dim", "k", "DoF", "variant", "prec", "ms", "GDoF/s", "%bound");

  std::vector<Result> res;
  for (const Config &c : cfgs) {
    Fill<double><<<1024, 256, 0, s>>>((double *)x, c.dof, 1234u + c.k);
    for (int prec : {8, 4}) {
      if (prec == 4) Fill<float><<<1024, 256, 0, s>>>((float *)x, c.dof, 4321u + c.k);
      for (int sc = 0; sc < NVARIANT; sc++) {
        PatchworkTensorDesc d;
        MakeDesc(c, sc == COLORED ? PW_SCATTER_COLORED : PW_SCATTER_ATOMIC, &d);
        d.overwrite = sc == OVERWRITE;
        CHECK_CUDA(cudaMemsetAsync(y, 0, (size_t)c.dof * prec, s));
        const double ms = prec == 8 ? TimeApply(&d, (const double *)x, (double *)y, reps, s) : TimeApply(&d, (const float *)x, (float *)y, reps, s);
        Result       r;
        r.c       = c;
        r.scatter = sc;
        r.prec    = prec;
        r.ms      = ms;
        r.gdofs   = c.dof / (ms * 1e-3) / 1e9;
        r.pct     = 100.0 * r.gdofs / (bw / (2.0 * prec) / 1e9);
        res.push_back(r);
        printf("%3d %2d %11lld %-9s %-6s %9.4f %8.2f %6.1f%%\n", c.dim, c.k, c.dof, variant_name[sc], prec == 8 ? "double" : "float", ms, r.gdofs, r.pct);
        fflush(stdout);
      }
    }
  }

  /* summary at the largest size of each (dim, k) */
  printf("SUMMARY copy bandwidth %.1f GB/s; bound %.1f GDoF/s double, %.1f float; GDoF/s (%% of bound) at the largest size\n", bw / 1e9, bw / 16e9, bw / 8e9);
  printf("SUMMARY %3s %2s %11s %15s %15s %15s %15s %15s %10s %7s\n", "dim", "k", "DoF", "atomic-double", "colored-double", "overwr-double", "atomic-float", "colored-float", "SpMV-model", "x-SpMV");
  for (int dim = 3; dim >= 2; dim--) {
    for (int k = 1; k <= 10; k++) {
      long long big = 0;
      for (auto &r : res)
        if (r.c.dim == dim && r.c.k == k) big = std::max(big, r.c.dof);
      if (!big) continue;
      double g[2][NVARIANT] = {{0}}, pc[2][NVARIANT] = {{0}};
      for (auto &r : res)
        if (r.c.dim == dim && r.c.k == k && r.c.dof == big) {
          g[r.prec == 4][r.scatter]  = r.gdofs;
          pc[r.prec == 4][r.scatter] = r.pct;
        }
      const double nnz = pow(2.0 * k + 1, dim), spmv = bw / (12.0 * nnz + 16.0) / 1e9;
      const int    shown[5][2] = {{0, ATOMIC}, {0, COLORED}, {0, OVERWRITE}, {1, ATOMIC}, {1, COLORED}};
      char         cell[5][32];
      for (int i = 0; i < 5; i++) snprintf(cell[i], sizeof(cell[i]), "%.1f (%.0f%%)", g[shown[i][0]][shown[i][1]], pc[shown[i][0]][shown[i][1]]);
      printf("SUMMARY %3d %2d %11lld %15s %15s %15s %15s %15s %10.2f %6.0fx\n", dim, k, big, cell[0], cell[1], cell[2], cell[3], cell[4], spmv, std::max(g[0][ATOMIC], g[0][COLORED]) / spmv);
    }
  }
  CHECK_CUDA(cudaFree(x));
  CHECK_CUDA(cudaFree(y));
  CHECK_CUDA(cudaStreamDestroy(s));
  return 0;
}
