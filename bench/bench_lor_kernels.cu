/* Throughput of the LOR assembly kernels (include/patchwork/lor_kernel.h, cuda/lor_assemble.cu),
   PETSc-free.

   For 3D degrees 1..8 at about 1M, 8M and 27M DoF (grid nodes = matrix rows; sizes whose arrays do not
   fit in the free device memory are skipped), on the whole grid of the unit cube with distorted
   coordinates (every coordinate moved by less than 0.19 h) and Dirichlet conditions:
     A1     PatchworkLORMacroCUDA (macro-element matrices summed in shared memory, Ae written once)
     A1at   for comparison, A1 as the paper's kernel (and this file's first version): one thread per
            sub-element atomically adding its element matrix into Ae, zeroed first (included)
     A2     PatchworkLORGatherCUDA
     A4     PatchworkLORDirichletCUDA
     total  A1 + A2 + A4 timed as one sequence; GDoF/s = rows / total
     generic  the assembly without macro structure: one thread per LOR (Q1) element of the grid
            computes its element matrix with PatchworkQ1ElementMatrix and atomically adds it into
            vals[row*27 + slot] directly (vals zeroed first), then A4 as above
     ratio  total / generic (below 1: the macro-element assembly is faster)
     fused  PatchworkLORMacroCSRCUDA: A1 to A4 in one pass into the one-rank CSR (pattern from
            PatchworkLORPatternCountCUDA), no Ae; "f/gen" its time / generic, "diff f" max |fused -
            (A1 + GatherCSR)| / max |entry| (rounding: ~1e-15)
     count, fill  the one-rank CSR pattern's kernels: PatchworkLORPatternCountCUDA (row lengths, their
            scan, nnz to the host) and PatchworkLORPatternFillCUDA (columns, int32); "alloc" the host
            wall time of cudaMalloc + cudaFree of the pattern's columns and values (once, not a median);
            "first GDoF" = rows / (count + fill + alloc + fused), the first assembly of a new grid
     diff   max |vals_macro - vals_generic| / max |vals_macro|, a sanity check (rounding: ~1e-15);
            "diff A1at" the same with A1at's Ae gathered
   Each time is the median of --reps timed runs (CUDA events) after 2 warm-up runs.

   Usage: bench_lor_kernels [--quick] [--reps N] [--k K] [--size DOF] [--rule gauss|vertex]
     --quick: 1M DoF only; --k, --size: only that degree / one grid of about DOF nodes; --rule: the
     sub-elements' quadrature (default gauss; PCLOR's default is vertex) */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>
#include "benchgpu.h"
#include <patchwork/lor_kernel.h>
#include <patchwork/q1_element.h>

/* Node coordinates of the unit cube's grid, interleaved, each moved by less than 0.19 h */
__global__ void FillCoords(int nx, int ny, int nz, double *x)
{
  const long long n = (long long)nx * ny * nz;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    const long long g[3] = {i % nx, (i / nx) % ny, i / ((long long)nx * ny)};
    const int       m[3] = {nx, ny, nz};
    for (int d = 0; d < 3; d++) {
      unsigned long long h = (unsigned long long)(3 * i + d) * 0x9E3779B97F4A7C15ull;
      h ^= h >> 31;
      h *= 0xBF58476D1CE4E5B9ull;
      h ^= h >> 29;
      const double r = (double)(h >> 40) * (2.0 / 16777216.0) - 1.0, hd = 1.0 / (m[d] - 1);
      x[3 * i + d]   = hd * g[d] + 0.19 * hd * r;
    }
  }
}

/* The generic assembly: thread t = one Q1 element of the whole grid (nodes n[0] x n[1] x n[2]) */
template <bool VERTEX>
__global__ void __launch_bounds__(128) Generic(int nx, int ny, int nz, const double *__restrict__ coords, double alpha, double beta, double *__restrict__ vals)
{
  const int       ex = nx - 1, ey = ny - 1, ez = nz - 1;
  const long long total = (long long)ex * ey * ez;

  for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += (long long)gridDim.x * blockDim.x) {
    const int i = (int)(t % ex), j = (int)((t / ex) % ey), l = (int)(t / ((long long)ex * ey));
    double    xv[24], Ke[64];
    long long node[8];
#pragma unroll
    for (int a = 0; a < 8; a++) {
      node[a] = ((long long)(l + ((a >> 2) & 1)) * ny + j + ((a >> 1) & 1)) * nx + i + (a & 1);
#pragma unroll
      for (int d = 0; d < 3; d++) xv[3 * a + d] = coords[3 * node[a] + d];
    }
    PatchworkQ1ElementMatrixRule(3, xv, alpha, beta, VERTEX, Ke);
#pragma unroll
    for (int a = 0; a < 8; a++)
#pragma unroll
      for (int b = 0; b < 8; b++) {
        const int slot = (((b >> 2) & 1) - ((a >> 2) & 1) + 1) * 9 + (((b >> 1) & 1) - ((a >> 1) & 1) + 1) * 3 + ((b & 1) - (a & 1) + 1);
        atomicAdd(vals + node[a] * 27 + slot, Ke[a * 8 + b]);
      }
  }
}

/* A1 with atomics: thread t = one sub-element of the whole grid's macro elements (N^3 cells, k^3
   sub-elements each, sub-element fastest), its element matrix atomically added into Ae (zeroed) */
template <bool VERTEX>
__global__ void __launch_bounds__(128) MacroAtomic(int k, int N, const double *__restrict__ coords, double alpha, double beta, double *__restrict__ Ae)
{
  const int       n = k + 1, nsub = k * k * k, nloc = n * n * n, nx = k * N + 1;
  const long long total = (long long)N * N * N * nsub;

  for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += (long long)gridDim.x * blockDim.x) {
    const long long e = t / nsub;
    const int       sub = (int)(t - e * nsub), s[3] = {sub % k, (sub / k) % k, sub / (k * k)};
    const int       c[3] = {(int)(e % N), (int)((e / N) % N), (int)(e / ((long long)N * N))};
    double          xv[24], Ke[64];
    int             loc[8];
#pragma unroll
    for (int a = 0; a < 8; a++) {
      const int       l[3] = {s[0] + (a & 1), s[1] + ((a >> 1) & 1), s[2] + ((a >> 2) & 1)};
      const long long p    = ((long long)(k * c[2] + l[2]) * nx + k * c[1] + l[1]) * nx + k * c[0] + l[0];
#pragma unroll
      for (int d = 0; d < 3; d++) xv[3 * a + d] = coords[3 * p + d];
      loc[a] = (l[2] * n + l[1]) * n + l[0];
    }
    PatchworkQ1ElementMatrixRule(3, xv, alpha, beta, VERTEX, Ke);
    double *A = Ae + e * nloc * 27;
#pragma unroll
    for (int a = 0; a < 8; a++)
#pragma unroll
      for (int b = 0; b < 8; b++) {
        const int slot = (((b >> 2) & 1) - ((a >> 2) & 1) + 1) * 9 + (((b >> 1) & 1) - ((a >> 1) & 1) + 1) * 3 + ((b & 1) - (a & 1) + 1);
        atomicAdd(A + (long long)loc[a] * 27 + slot, Ke[a * 8 + b]);
      }
  }
}

/* the pattern's row starts as int (the CSR's) */
__global__ void RowptrToInt(long long n, const long long *in, int *out)
{
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) out[i] = (int)in[i];
}

/* out[0] = max |a - b|, out[1] = max |a| as the bits of nonnegative doubles (ordered like the values) */
__global__ void MaxDiff(long long n, const double *__restrict__ a, const double *__restrict__ b, unsigned long long *out)
{
  double da = 0, dd = 0;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    dd = fmax(dd, fabs(a[i] - b[i]));
    da = fmax(da, fabs(a[i]));
  }
  atomicMax(out, (unsigned long long)__double_as_longlong(dd));
  atomicMax(out + 1, (unsigned long long)__double_as_longlong(da));
}

int main(int argc, char **argv)
{
  int                 reps = 5, konly = 0, ndev = 0, vertex = 0;
  bool                quick = false;
  std::vector<double> sizes = {1e6, 8e6, 27e6};

  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) quick = true;
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--k") && i + 1 < argc) konly = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--size") && i + 1 < argc) sizes = {atof(argv[++i])};
    else if (!strcmp(argv[i], "--rule") && i + 1 < argc) vertex = !strcmp(argv[++i], "vertex");
    else {
      fprintf(stderr, "usage: %s [--quick] [--reps N] [--k K] [--size DOF] [--rule gauss|vertex]\n", argv[0]);
      return 2;
    }
  }
  if (quick) sizes = {1e6};
  if (reps < 1) reps = 1;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    printf("SKIP: no CUDA device\n");
    return 77;
  }
  cudaStream_t   s;
  cudaDeviceProp p;
  CHECK_CUDA(cudaGetDeviceProperties(&p, 0));
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  printf("# device: %s, %d SMs; LOR assembly A1+A2+A4, 3D, whole distorted grid, Dirichlet, %s rule; median of %d\n", p.name, p.multiProcessorCount, vertex ? "vertex" : "Gauss", reps);
  printf("%2s %10s %9s %9s %9s %9s %9s %8s %9s %8s %7s %8s %8s %9s %8s %7s %8s %8s %8s %8s %8s\n", "k", "DoF", "A1 ms", "A1at ms", "A2 ms", "A4 ms", "total ms", "GDoF/s", "gen ms", "gen GDoF", "ratio", "diff", "diff A1at", "fused ms", "fused GDoF", "f/gen", "diff f", "count ms", "fill ms", "alloc ms", "first GDoF");
  for (double size : sizes) {
    for (int k = 1; k <= 8; k++) {
      if (konly && k != konly) continue;
      const int        N = std::max(1, (int)lround((cbrt(size) - 1) / k)), n = k * N + 1;
      PatchworkLORDesc d;

      memset(&d, 0, sizeof(d));
      d.dim       = 3;
      d.degree    = k;
      d.dirichlet = 1;
      d.alpha     = 1.0;
      d.beta      = 1.0;
      d.vertex_rule = vertex;
      for (int dir = 0; dir < 3; dir++) {
        d.nodes[dir]      = n;
        d.cell_start[dir] = 0;
        d.cell_end[dir]   = N;
        d.coord_start[dir] = d.row_start[dir] = 0;
        d.coord_size[dir] = d.row_size[dir] = n;
      }
      const long long nrow = PatchworkLORRowCount(&d), nmacro = PatchworkLORMacroCount(&d);
      const size_t    bx = (size_t)nrow * 3 * sizeof(double), bAe = (size_t)nmacro * PatchworkLORMacroNodes(&d) * 27 * sizeof(double);
      const size_t    bv = (size_t)nrow * 27 * sizeof(double);
      size_t          mfree, mtotal;
      CHECK_CUDA(cudaMemGetInfo(&mfree, &mtotal));
      /* the fused route's CSR (at most 27 entries a row, int row starts, two value arrays) */
      const size_t bcsr = (size_t)nrow * (27 * 2 * sizeof(double) + sizeof(int) + sizeof(long long));
      if (bx + bAe + 2 * bv + bcsr + (64u << 20) > mfree) {
        printf("%2d %10lld skipped: needs %.1f GB, %.1f GB free\n", k, nrow, (bx + bAe + 2 * bv + bcsr) / 1e9, mfree / 1e9);
        fflush(stdout);
        continue;
      }
      double             *dx, *dAe, *dv, *dg;
      unsigned long long *dmax, hmax[2];
      CHECK_CUDA(cudaMalloc((void **)&dx, bx));
      CHECK_CUDA(cudaMalloc((void **)&dAe, bAe));
      CHECK_CUDA(cudaMalloc((void **)&dv, bv));
      CHECK_CUDA(cudaMalloc((void **)&dg, bv));
      CHECK_CUDA(cudaMalloc((void **)&dmax, 2 * sizeof(unsigned long long)));
      FillCoords<<<4 * p.multiProcessorCount, 256, 0, s>>>(n, n, n, dx);
      CHECK_CUDA(cudaGetLastError());

      const long long nel = (long long)(n - 1) * (n - 1) * (n - 1);
      const unsigned  gblocks = (unsigned)std::min<long long>((nel + 127) / 128, 0x7fffffffLL);
      auto            a1      = [&] { CHECK_CUDA(PatchworkLORMacroCUDA(&d, dx, dAe, s)); };
      auto            a2      = [&] { CHECK_CUDA(PatchworkLORGatherCUDA(&d, dAe, dv, s)); };
      auto            a4      = [&] { CHECK_CUDA(PatchworkLORDirichletCUDA(&d, dv, s)); };
      auto            all     = [&] { a1(); a2(); a4(); };
      auto            gen     = [&] {
        CHECK_CUDA(cudaMemsetAsync(dg, 0, bv, s));
        if (vertex) Generic<true><<<gblocks, 128, 0, s>>>(n, n, n, dx, d.alpha, d.beta, dg);
        else Generic<false><<<gblocks, 128, 0, s>>>(n, n, n, dx, d.alpha, d.beta, dg);
        CHECK_CUDA(cudaGetLastError());
        CHECK_CUDA(PatchworkLORDirichletCUDA(&d, dg, s));
      };
      const double t1 = TimeIt(reps, s, a1), t2 = TimeIt(reps, s, a2), t4 = TimeIt(reps, s, a4);
      const double tt = TimeIt(reps, s, all), tg = TimeIt(reps, s, gen);
      /* max |vals - generic vals| / max |vals| */
      auto diff = [&] {
        double dd, da;
        CHECK_CUDA(cudaMemsetAsync(dmax, 0, 2 * sizeof(unsigned long long), s));
        MaxDiff<<<4 * p.multiProcessorCount, 256, 0, s>>>(nrow * 27, dv, dg, dmax);
        CHECK_CUDA(cudaGetLastError());
        CHECK_CUDA(cudaMemcpyAsync(hmax, dmax, sizeof(hmax), cudaMemcpyDeviceToHost, s));
        CHECK_CUDA(cudaStreamSynchronize(s));
        memcpy(&dd, &hmax[0], sizeof(double));
        memcpy(&da, &hmax[1], sizeof(double));
        return da > 0 ? dd / da : dd;
      };
      const double diff1 = diff(); /* dv, dg: the last timed runs' */
      /* the paper's atomic A1 into Ae; its values gathered, against the generic ones too */
      const long long nsubt   = nmacro * k * k * k;
      const unsigned  ablocks = (unsigned)std::min<long long>((nsubt + 127) / 128, 0x7fffffffLL);
      const double    ta      = TimeIt(reps, s, [&] {
        CHECK_CUDA(cudaMemsetAsync(dAe, 0, bAe, s));
        if (vertex) MacroAtomic<true><<<ablocks, 128, 0, s>>>(k, N, dx, d.alpha, d.beta, dAe);
        else MacroAtomic<false><<<ablocks, 128, 0, s>>>(k, N, dx, d.alpha, d.beta, dAe);
        CHECK_CUDA(cudaGetLastError());
      });
      a2();
      a4();
      const double diffa = diff();
      /* the fused route: A1 to A4 straight into the one-rank CSR (PatchworkLORMacroCSRCUDA), against
         A1 + GatherCSR into the same pattern */
      long long *drowll, nnz = 0;
      int       *drow;
      double    *dcf, *dcp, df, dmaxv;
      CHECK_CUDA(cudaMalloc((void **)&drowll, (nrow + 1) * sizeof(long long)));
      CHECK_CUDA(cudaMalloc((void **)&drow, (nrow + 1) * sizeof(int)));
      CHECK_CUDA(PatchworkLORPatternCountCUDA(&d, 0, drowll, &nnz, s));
      const double tcount = TimeIt(reps, s, [&] { CHECK_CUDA(PatchworkLORPatternCountCUDA(&d, 0, drowll, &nnz, s)); });
      double       tfill, talloc;
      {
        int    *dcols;
        double *dvals;
        CHECK_CUDA(cudaStreamSynchronize(s));
        const double w0 = WallSeconds();
        CHECK_CUDA(cudaMalloc((void **)&dcols, nnz * sizeof(int)));
        CHECK_CUDA(cudaMalloc((void **)&dvals, nnz * sizeof(double)));
        CHECK_CUDA(cudaFree(dvals));
        talloc = (WallSeconds() - w0) * 1e3;
        tfill  = TimeIt(reps, s, [&] { CHECK_CUDA(PatchworkLORPatternFillCUDA(&d, 0, drowll, dcols, NULL, s)); });
        CHECK_CUDA(cudaFree(dcols));
      }
      RowptrToInt<<<4 * p.multiProcessorCount, 256, 0, s>>>(nrow + 1, drowll, drow);
      CHECK_CUDA(cudaGetLastError());
      CHECK_CUDA(cudaFree(drowll));
      CHECK_CUDA(cudaMalloc((void **)&dcf, nnz * sizeof(double)));
      CHECK_CUDA(cudaMalloc((void **)&dcp, nnz * sizeof(double)));
      const double tf = TimeIt(reps, s, [&] { CHECK_CUDA(PatchworkLORMacroCSRCUDA(&d, 0, dx, drow, dcf, s)); });
      a1();
      CHECK_CUDA(PatchworkLORGatherCSRCUDA(&d, 0, dAe, drow, dcp, s));
      CHECK_CUDA(cudaMemsetAsync(dmax, 0, 2 * sizeof(unsigned long long), s));
      MaxDiff<<<4 * p.multiProcessorCount, 256, 0, s>>>(nnz, dcf, dcp, dmax);
      CHECK_CUDA(cudaGetLastError());
      CHECK_CUDA(cudaMemcpyAsync(hmax, dmax, sizeof(hmax), cudaMemcpyDeviceToHost, s));
      CHECK_CUDA(cudaStreamSynchronize(s));
      memcpy(&df, &hmax[0], sizeof(double));
      memcpy(&dmaxv, &hmax[1], sizeof(double));
      printf("%2d %10lld %9.3f %9.3f %9.3f %9.3f %9.3f %8.3f %9.3f %8.3f %7.2f %8.1e %8.1e %9.3f %8.3f %7.2f %8.1e %8.3f %8.3f %8.3f %8.3f\n", k, nrow, t1, ta, t2, t4, tt, nrow / (tt * 1e-3) / 1e9, tg, nrow / (tg * 1e-3) / 1e9, tt / tg, diff1, diffa, tf,
             nrow / (tf * 1e-3) / 1e9, tf / tg, dmaxv > 0 ? df / dmaxv : df, tcount, tfill, talloc, nrow / ((tcount + tfill + talloc + tf) * 1e-3) / 1e9);
      CHECK_CUDA(cudaFree(drow));
      CHECK_CUDA(cudaFree(dcf));
      CHECK_CUDA(cudaFree(dcp));
      fflush(stdout);
      CHECK_CUDA(cudaFree(dx));
      CHECK_CUDA(cudaFree(dAe));
      CHECK_CUDA(cudaFree(dv));
      CHECK_CUDA(cudaFree(dg));
      CHECK_CUDA(cudaFree(dmax));
    }
  }
  CHECK_CUDA(cudaStreamDestroy(s));
  return 0;
}
