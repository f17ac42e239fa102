/* Throughput of the vertex-patch smoother and transfer kernels (include/patchwork/patch_kernel.h),
   PETSc-free.

   Smoother: one smoothing step = the 2^dim colors in sequence, in place (the multiplicative smoother
   of the V-cycle), on the whole grid with Dirichlet conditions, for 3D degrees 1..8 and 2D degrees
   2..10 at about --size DoF (grid nodes), in double and float, by the paper's kernel variants (Cui et
   al. 2024, Table 4):
     fused     PatchworkPatchSmoothCUDA per color (local residual, solve and update in one kernel)
     separate  per color PatchworkPatchResidualCUDA into r, then PatchworkPatchSolveCUDA from r
     solve     PatchworkPatchSolveCUDA per color alone: the local part of the "global" variant (whose
               residual is a MatMult, bench_tensor_kernels) and the additive smoother's kernel
   Reported: the median time of --reps timed steps (CUDA events) after warm-up, DoF/s (grid nodes per
   second), and GFLOP/s with the percentage of the FP64 / FP32 peak (--peak64 / --peak32 TFLOP/s;
   defaults: H100 SXM 33.4 / 65.3). Flops are those the kernels execute with the even-odd split (a
   multiply-add counts 2; the reciprocals of the eigenvalue sums count 0), per patch: 3D x pass NP^2
   lines of 2 products (NI x NP), y pass NI NP lines of 3, z pass NI^2 lines of 2 plus S^T, and 6 NI^2
   lines of the transforms S / S^T in the solve (NP = 2k+1, NI = 2k-1); separate executes the fused
   kernel's flops (the z pass's S^T moves into the solve kernel). The column "flop/DoF" gives the
   count per grid node and step.

   Transfer: prolongation coarse -> fine and restriction fine -> coarse between the grid and its
   coarsening by two, in double and float, as fine DoF/s and effective bandwidth (prolong: coarse
   read, fine read and written; restrict: fine read, coarse read and written).

   Usage: bench_patch_kernels [--quick] [--reps N] [--size DOF] [--dim 2|3] [--k K] [--peak64 T] [--peak32 T] */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>
#include "benchgpu.h"
#include <patchwork/basis1d.h>
#include <patchwork/patch_kernel.h>

#define CHECK_RET(call) \
  do { \
    int r_ = (call); \
    if (r_) { \
      fprintf(stderr, "%s failed at %s:%d: %s\n", #call, __FILE__, __LINE__, cudaGetErrorString((cudaError_t)r_)); \
      exit(1); \
    } \
  } while (0)

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

/* Flops of the kernels' even-odd 1D operations (multiply-add = 2) */
static double FlopsMatVec(int no, int nin, bool add)
{
  const int ho = no / 2, hi = nin / 2, re = (no + 1) / 2, ce = (nin + 1) / 2;
  return 2.0 * (re * ce + ho * hi) + 2.0 * hi + 2.0 * ho + (add ? no : 0);
}

static double FlopsModes(int ni)
{
  const int ks = (ni + 1) / 2, ka = ni / 2;
  return 2.0 * (ks * ks + ka * ka) + 2.0 * ka;
}

/* per patch: smoother (solve = false) or solve alone */
static double FlopsPerPatch(int dim, int k, bool solve)
{
  const int    np = 2 * k + 1, ni = 2 * k - 1;
  const double mv = FlopsMatVec(ni, np, false), mva = FlopsMatVec(ni, np, true), tm = FlopsModes(ni);

  if (dim == 3) {
    const double lines = (double)ni * ni;
    double       f     = lines * (tm + (tm + 2.0 * ni + tm) + tm + (tm + 2.0 * ni)); /* solve y, x, y, z */
    if (solve) return f + lines * tm;                                          /* z to modes */
    f += (double)np * np * 2 * mv;                                               /* x pass */
    f += (double)ni * np * (2 * mv + mva);                                       /* y pass */
    f += lines * (mv + mva + ni + tm);                                           /* z pass */
    return f;
  }
  double f = ni * ((tm + 2.0 * ni + tm) + (tm + 2.0 * ni)); /* solve x, y */
  if (solve) return f + ni * tm;
  f += (double)np * 2 * mv;           /* x pass */
  f += (double)ni * (mv + mva + ni + tm); /* y pass */
  return f;
}

static int CellsFor(int dim, int k, double target)
{
  const double per_dir = dim == 3 ? cbrt(target) : sqrt(target);
  return std::max(2, (int)lround((per_dir - 1) / k));
}

static void MakePatchDesc(int dim, int k, int cells, PatchworkPatchDesc *d)
{
  PatchworkTensorDesc *op = &d->op;
  const double         h = 1.0 / cells, vol = dim == 3 ? h * h * h : h * h;

  memset(d, 0, sizeof(*d));
  op->dim       = dim;
  op->degree    = k;
  op->dirichlet = 1;
  for (int r = 0; r < 3; r++) {
    const int nodes = r < dim ? k * cells + 1 : 1;
    op->nodes[r]      = nodes;
    op->cell_start[r] = 0;
    op->cell_end[r]   = r < dim ? cells : 1;
    op->in_start[r] = op->out_start[r] = 0;
    op->in_size[r] = op->out_size[r] = nodes;
    d->vertex_start[r]                  = r < dim ? 1 : 0;
    d->vertex_end[r]                    = r < dim ? cells : 1;
  }
  op->coef_mass = vol; /* a Helmholtz-like operator on the unit cube, as in bench_tensor_kernels */
  for (int r = 0; r < dim; r++) op->coef_stiff[r] = vol / (h * h);
  if (PatchworkTensor1DMatrices(k, PW_QUAD_GAUSS, op->mass1d, op->stiff1d) || PatchworkPatchSetUp1D(d)) {
    fprintf(stderr, "1D setup failed for k = %d\n", k);
    exit(1);
  }
  d->omega = 1.0;
}

int main(int argc, char **argv)
{
  int    reps = 10, only_dim = 0, only_k = 0;
  double size = 5e7, peak64 = 33.4, peak32 = 65.3;
  bool   quick = false;

  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) quick = true;
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--size") && i + 1 < argc) size = atof(argv[++i]);
    else if (!strcmp(argv[i], "--dim") && i + 1 < argc) only_dim = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--k") && i + 1 < argc) only_k = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--peak64") && i + 1 < argc) peak64 = atof(argv[++i]);
    else if (!strcmp(argv[i], "--peak32") && i + 1 < argc) peak32 = atof(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--quick] [--reps N] [--size DOF] [--dim 2|3] [--k K] [--peak64 T] [--peak32 T]\n", argv[0]);
      return 2;
    }
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    printf("SKIP: no CUDA device\n");
    return 77;
  }
  if (quick) size = std::min(size, 4e6);
  if (reps < 1) reps = 1;

  cudaDeviceProp p;
  CHECK_CUDA(cudaGetDeviceProperties(&p, 0));
  printf("# device: %s, %d SMs; peaks assumed %.1f TFLOP/s FP64, %.1f FP32\n", p.name, p.multiProcessorCount, peak64, peak32);
  printf("# smoothing step = all 2^dim colors in place, Dirichlet, whole grid of ~%.0e DoF, Gauss quadrature; median of %d\n", size, reps);

  /* buffers for the largest grid: x, b and y (the solve's output, the separate variant's r), in double */
  long long maxdof = 0;
  for (int dim = 2; dim <= 3; dim++)
    for (int k = 1; k <= (dim == 3 ? 8 : 10); k++) {
      const long long n = (long long)k * CellsFor(dim, k, size) + 1;
      maxdof            = std::max(maxdof, dim == 3 ? n * n * n : n * n);
    }
  void        *x, *b, *y;
  cudaStream_t s;
  CHECK_CUDA(cudaMalloc(&x, maxdof * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&b, maxdof * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&y, maxdof * sizeof(double)));
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  printf("%3s %2s %11s %-15s %9s %8s %9s %9s %7s\n", "dim", "k", "DoF", "kernel", "ms/step", "GDoF/s", "flop/DoF", "GFLOP/s", "%peak");
  for (int dim = 3; dim >= 2; dim--) {
    if (only_dim && dim != only_dim) continue;
    for (int k = dim == 3 ? 1 : 2; k <= (dim == 3 ? 8 : 10); k++) {
      if (only_k && k != only_k) continue;
      PatchworkPatchDesc d;
      const int          cells = CellsFor(dim, k, size);
      MakePatchDesc(dim, k, cells, &d);
      const long long nodes = (long long)k * cells + 1, dof = dim == 3 ? nodes * nodes * nodes : nodes * nodes;
      const double    npatch = pow(cells - 1.0, dim);
      for (int fl = 0; fl <= 1; fl++) {
        for (int variant = 0; variant < 3; variant++) { /* fused, separate, solve */
          const bool   solve = variant == 2;
          const double flops = npatch * FlopsPerPatch(dim, k, solve), peak = fl ? peak32 : peak64;
          char         name[32];
          if (fl) {
            Fill<float><<<1024, 256, 0, s>>>((float *)x, dof, 3u + k);
            Fill<float><<<1024, 256, 0, s>>>((float *)b, dof, 5u + k);
          } else {
            Fill<double><<<1024, 256, 0, s>>>((double *)x, dof, 3u + k);
            Fill<double><<<1024, 256, 0, s>>>((double *)b, dof, 17u + k);
          }
          const double ms = TimeIt(reps, s, [&]() {
            for (int c = 0; c < (1 << dim); c++) {
              d.color = c;
              if (fl) {
                float *xf = (float *)x, *bf = (float *)b, *yf = (float *)y;
                if (variant == 0) CHECK_RET(PatchworkPatchSmoothCUDAFloat(&d, xf, bf, xf, s));
                else if (variant == 1) {
                  CHECK_RET(PatchworkPatchResidualCUDAFloat(&d, xf, bf, yf, s));
                  CHECK_RET(PatchworkPatchSolveCUDAFloat(&d, yf, xf, s));
                } else CHECK_RET(PatchworkPatchSolveCUDAFloat(&d, bf, yf, s));
              } else {
                double *xd = (double *)x, *bd = (double *)b, *yd = (double *)y;
                if (variant == 0) CHECK_RET(PatchworkPatchSmoothCUDA(&d, xd, bd, xd, s));
                else if (variant == 1) {
                  CHECK_RET(PatchworkPatchResidualCUDA(&d, xd, bd, yd, s));
                  CHECK_RET(PatchworkPatchSolveCUDA(&d, yd, xd, s));
                } else CHECK_RET(PatchworkPatchSolveCUDA(&d, bd, yd, s));
              }
            }
          });
          const double gflops = flops / (ms * 1e-3) / 1e9;
          snprintf(name, sizeof(name), "%s-%s", variant == 0 ? "fused" : variant == 1 ? "separate" : "solve", fl ? "float" : "double");
          printf("%3d %2d %11lld %-15s %9.3f %8.3f %9.0f %9.1f %6.1f%%\n", dim, k, dof, name, ms, dof / (ms * 1e-3) / 1e9, flops / dof, gflops, 100.0 * gflops / (peak * 1e3));
          fflush(stdout);
        }
      }
    }
  }

  printf("\n# transfer between the grid (~%.0e fine DoF) and its coarsening by two, Dirichlet, whole grid\n", size);
  printf("%3s %2s %11s %-15s %9s %8s %8s\n", "dim", "k", "fine DoF", "kernel", "ms", "GDoF/s", "GB/s");
  for (int dim = 3; dim >= 2; dim--) {
    if (only_dim && dim != only_dim) continue;
    for (int k = 1; k <= (dim == 3 ? 8 : 10); k++) {
      if (only_k && k != only_k) continue;
      PatchworkTransferDesc t;
      const int             nc = std::max(1, CellsFor(dim, k, size) / 2);
      memset(&t, 0, sizeof(t));
      t.dim       = dim;
      t.degree    = k;
      t.dirichlet = 1;
      CHECK_RET(PatchworkTransferSetUp1D(k, &t));
      long long nf = 1, ncn = 1;
      for (int r = 0; r < 3; r++) {
        const int fn = r < dim ? 2 * k * nc + 1 : 1, cn = r < dim ? k * nc + 1 : 1;
        t.fine_nodes[r] = fn;
        t.cell_start[r] = 0;
        t.cell_end[r]   = r < dim ? 2 * nc : 1;
        t.fine_start[r] = t.coarse_start[r] = 0;
        t.fine_size[r]                      = fn;
        t.coarse_size[r]                    = cn;
        nf *= fn;
        ncn *= cn;
      }
      for (int fl = 0; fl <= 1; fl++) {
        const double ws = fl ? 4.0 : 8.0; /* bytes per value */
        if (fl) {
          Fill<float><<<1024, 256, 0, s>>>((float *)x, nf, 7u + k);
          Fill<float><<<1024, 256, 0, s>>>((float *)b, ncn, 9u + k);
        } else {
          Fill<double><<<1024, 256, 0, s>>>((double *)x, nf, 7u + k);
          Fill<double><<<1024, 256, 0, s>>>((double *)b, ncn, 9u + k);
        }
        for (int tr = 0; tr < 2; tr++) {
          char         name[32];
          const double ms = TimeIt(reps, s, [&]() {
            if (fl) {
              if (tr) CHECK_RET(PatchworkRestrictCUDAFloat(&t, (const float *)x, (float *)b, s));
              else CHECK_RET(PatchworkProlongCUDAFloat(&t, (const float *)b, (float *)x, s));
            } else {
              if (tr) CHECK_RET(PatchworkRestrictCUDA(&t, (const double *)x, (double *)b, s));
              else CHECK_RET(PatchworkProlongCUDA(&t, (const double *)b, (double *)x, s));
            }
          });
          const double bytes = tr ? ws * nf + 2 * ws * ncn : ws * ncn + 2 * ws * nf;
          snprintf(name, sizeof(name), "%s-%s", tr ? "restrict" : "prolong", fl ? "float" : "double");
          printf("%3d %2d %11lld %-15s %9.3f %8.3f %8.1f\n", dim, k, nf, name, ms, nf / (ms * 1e-3) / 1e9, bytes / (ms * 1e-3) / 1e9);
          fflush(stdout);
        }
      }
    }
  }
  CHECK_CUDA(cudaFree(x));
  CHECK_CUDA(cudaFree(b));
  CHECK_CUDA(cudaFree(y));
  CHECK_CUDA(cudaStreamDestroy(s));
  return 0;
}
