/* Throughput of the patch block-Jacobi relaxation kernels on the patchSPM layout
   (include/patchwork/amg_kernel.h, cuda/amg_relax.cu), PETSc-free, beside a plain CSR SpMV of the same
   matrix in the same run.

   Matrix: the 3D 7-point or 27-point Laplacian (off-diagonal -1) on an nx x ny x nz grid, made on the
   device, at about 2M rows (120 x 128 x 128) and 16M rows (240 x 256 x 256). Patches of 384 rows in two
   orderings: "box", rows numbered box by box (boxes of 6 x 8 x 8 points, lexicographic inside), as the
   patch partition of the setup would order them; "lex", the natural lexicographic numbering cut into
   ranges of 384 rows (3 grid lines: most vertical couplings fall into AB); "box+r", the box layout
   with the row map: the vectors (and AB columns) stay in the lexicographic numbering and row[i] maps
   the layout's box-ordered position i to it, as when the level matrix keeps its own order; the
   difference to "box" is the cost of the indirection (scattered vector accesses). inner = 3 sweeps.
   Times (median of --reps, CUDA events, ms):
     relax  PatchRelax from a zero guess with the residual (the paper's prerelax-residual kernel)
     bres   BoundaryResidual(x, r, r) (its compensation: the true residual)
     pre    relax + bres, the fused pre-relaxation with residual
     post   BoundaryResidual(x, b, t) + PatchRelax(t) from x, the post-relaxation
     mult   PatchworkSPMMultCUDA, y = A x on the patchSPM layout
     spmv   CSR y = A x with the values of the same precision and the rows in the same order, the best
            of 1, 4 and 8 lanes a row (the number in parentheses)
   pre/spmv is the cost of a pre-relaxation with residual in SpMVs. GB/s counts the matrix bytes read
   (values, 32-bit columns and row pointers, diagonal); "%copy" counts all the bytes pre must move at
   least (the matrix and 48 B a row of vectors: b, x, r written, r read and written, x gathered)
   against the device-to-device copy bandwidth measured in the same run.

   Usage: bench_amg_kernels [--quick] [--reps N] [--size ROWS]   (--dim and --k are ignored) */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>
#include <cub/cub.cuh>
#include "benchgpu.h"
#include <patchwork/amg_kernel.h>

constexpr int kBX = 6, kBY = 8, kBZ = 8, kPatch = kBX * kBY * kBZ; /* 384 rows a patch */

struct Grid {
  int  nx, ny, nz, stencil; /* 7 or 27 */
  bool box;                 /* box ordering, else lexicographic */
};

/* the grid point of a row and back; patches are the aligned ranges of kPatch rows in both orderings */
__device__ __forceinline__ void RowToPoint(const Grid &g, long long row, int p[3])
{
  if (g.box) {
    const long long b = row / kPatch;
    const int       l = (int)(row % kPatch), nbx = g.nx / kBX, nby = g.ny / kBY;
    p[0] = (int)(b % nbx) * kBX + l % kBX;
    p[1] = (int)((b / nbx) % nby) * kBY + (l / kBX) % kBY;
    p[2] = (int)(b / ((long long)nbx * nby)) * kBZ + l / (kBX * kBY);
  } else {
    p[0] = (int)(row % g.nx);
    p[1] = (int)((row / g.nx) % g.ny);
    p[2] = (int)(row / ((long long)g.nx * g.ny));
  }
}

__device__ __forceinline__ long long PointToRow(const Grid &g, const int p[3])
{
  if (g.box) {
    const int nbx = g.nx / kBX, nby = g.ny / kBY;
    const long long b = ((long long)(p[2] / kBZ) * nby + p[1] / kBY) * nbx + p[0] / kBX;
    return b * kPatch + ((p[2] % kBZ) * kBY + p[1] % kBY) * kBX + p[0] % kBX;
  }
  return ((long long)p[2] * g.ny + p[1]) * g.nx + p[0];
}

/* Visit the stencil neighbours of row (the row itself included, in stencil order) */
template <typename F>
__device__ __forceinline__ void Neighbours(const Grid &g, long long row, F f)
{
  int p[3], q[3];
  RowToPoint(g, row, p);
  for (int dz = -1; dz <= 1; dz++)
    for (int dy = -1; dy <= 1; dy++)
      for (int dx = -1; dx <= 1; dx++) {
        if (g.stencil == 7 && abs(dx) + abs(dy) + abs(dz) > 1) continue;
        q[0] = p[0] + dx, q[1] = p[1] + dy, q[2] = p[2] + dz;
        if (q[0] < 0 || q[0] >= g.nx || q[1] < 0 || q[1] >= g.ny || q[2] < 0 || q[2] >= g.nz) continue;
        f(PointToRow(g, q));
      }
}

/* entries a row: AI, AB (patchSPM, without the diagonal) and CSR (with it) */
__global__ void Count(Grid g, long long n, int *ai, int *ab, int *csr)
{
  for (long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x; row < n; row += (long long)gridDim.x * blockDim.x) {
    int a = 0, o = 0;
    Neighbours(g, row, [&](long long j) {
      if (j == row) return;
      if (j / kPatch == row / kPatch) a++;
      else o++;
    });
    ai[row]  = a;
    ab[row]  = o;
    csr[row] = a + o + 1;
  }
}

template <typename T>
__global__ void Fill(Grid g, long long n, const int *ai_ptr, int *ai_col, T *ai_val, const int *ab_ptr, int *ab_col, T *ab_val, T *diag, const int *csr_ptr, int *csr_col, T *csr_val,
                     bool cols)
{
  for (long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x; row < n; row += (long long)gridDim.x * blockDim.x) {
    const long long ps = row / kPatch * kPatch;
    int             a = ai_ptr[row], o = ab_ptr[row], c = csr_ptr[row], cnt = 0;
    Neighbours(g, row, [&](long long j) { cnt++; });
    const T d = (T)(cnt - 1) + (T)0.5;
    Neighbours(g, row, [&](long long j) {
      if (cols) csr_col[c] = (int)j;
      csr_val[c++] = j == row ? d : (T)-1;
      if (j == row) return;
      if (j / kPatch == row / kPatch) {
        if (cols) ai_col[a] = (int)(j - ps);
        ai_val[a++] = (T)-1;
      } else {
        if (cols) ab_col[o] = (int)j;
        ab_val[o++] = (T)-1;
      }
    });
    diag[row] = d;
  }
}

/* The row map of the box layout: row[i] = the lexicographic index of box position i, and the AB
   columns renumbered to it */
__global__ void BoxToLex(Grid g, long long n, int *row)
{
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    int p[3];
    RowToPoint(g, i, p);
    row[i] = (int)(((long long)p[2] * g.ny + p[1]) * g.nx + p[0]);
  }
}

__global__ void Renumber(long long nnz, const int *row, const int *col, int *out)
{
  for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < nnz; k += (long long)gridDim.x * blockDim.x) out[k] = row[col[k]];
}

__global__ void FillVec(double *x, long long n, unsigned seed)
{
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    unsigned long long h = (unsigned long long)i * 0x9E3779B97F4A7C15ull + seed;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    x[i] = (double)(h >> 40) * (1.0 / 16777216.0) - 0.5;
  }
}

/* The baseline: CSR y = A x, G lanes a row, double accumulation */
template <typename T, int G>
__global__ void SpMV(int n, const int *__restrict__ ptr, const int *__restrict__ col, const T *__restrict__ val, const double *__restrict__ x, double *__restrict__ y)
{
  const long long gid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const int       row = (int)(gid / G), sub = (int)(gid % G);
  double          acc = 0;

  if (row < n)
    for (int j = ptr[row] + sub; j < ptr[row + 1]; j += G) acc += (double)val[j] * x[col[j]];
#pragma unroll
  for (int o = G / 2; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o, G);
  if (row < n && sub == 0) y[row] = acc;
}

static void Ok(int ret, const char *what)
{
  if (ret) {
    fprintf(stderr, "%s failed: %s\n", what, cudaGetErrorString((cudaError_t)ret));
    exit(1);
  }
}

static unsigned Blocks(long long work, int threads)
{
  return (unsigned)std::min<long long>((work + threads - 1) / threads, 1 << 20);
}

/* The matrix of one grid, ordering and stencil on the device: the columns once, values per precision */
struct Dev {
  long long n, nai, nab, ncsr;
  int      *patch_ptr, *ai_ptr, *ab_ptr, *csr_ptr, *ai_col, *ab_col, *csr_col;
  void     *ai_val, *ab_val, *diag, *csr_val;
};

static void ExclusiveScan(int *cnt, int *ptr, long long n, cudaStream_t s)
{
  void  *tmp   = NULL;
  size_t bytes = 0;
  CHECK_CUDA(cudaMemsetAsync(cnt + n, 0, sizeof(int), s));
  CHECK_CUDA(cub::DeviceScan::ExclusiveSum(tmp, bytes, cnt, ptr, (int)(n + 1), s));
  CHECK_CUDA(cudaMalloc(&tmp, bytes));
  CHECK_CUDA(cub::DeviceScan::ExclusiveSum(tmp, bytes, cnt, ptr, (int)(n + 1), s));
  CHECK_CUDA(cudaStreamSynchronize(s));
  CHECK_CUDA(cudaFree(tmp));
}

static Dev Make(const Grid &g, cudaStream_t s)
{
  Dev       D;
  const int nt = 256;
  int      *cnt[3];
  int       last[3];

  D.n = (long long)g.nx * g.ny * g.nz;
  for (auto &c : cnt) CHECK_CUDA(cudaMalloc((void **)&c, (D.n + 1) * sizeof(int)));
  Count<<<Blocks(D.n, nt), nt, 0, s>>>(g, D.n, cnt[0], cnt[1], cnt[2]);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaMalloc((void **)&D.ai_ptr, (D.n + 1) * sizeof(int)));
  CHECK_CUDA(cudaMalloc((void **)&D.ab_ptr, (D.n + 1) * sizeof(int)));
  CHECK_CUDA(cudaMalloc((void **)&D.csr_ptr, (D.n + 1) * sizeof(int)));
  ExclusiveScan(cnt[0], D.ai_ptr, D.n, s);
  ExclusiveScan(cnt[1], D.ab_ptr, D.n, s);
  ExclusiveScan(cnt[2], D.csr_ptr, D.n, s);
  CHECK_CUDA(cudaMemcpy(&last[0], D.ai_ptr + D.n, sizeof(int), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(&last[1], D.ab_ptr + D.n, sizeof(int), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(&last[2], D.csr_ptr + D.n, sizeof(int), cudaMemcpyDeviceToHost));
  for (auto &c : cnt) CHECK_CUDA(cudaFree(c));
  D.nai  = last[0];
  D.nab  = last[1];
  D.ncsr = last[2];
  std::vector<int> pp(D.n / kPatch + 1);
  for (size_t p = 0; p < pp.size(); p++) pp[p] = (int)(p * kPatch);
  CHECK_CUDA(cudaMalloc((void **)&D.patch_ptr, pp.size() * sizeof(int)));
  CHECK_CUDA(cudaMemcpy(D.patch_ptr, pp.data(), pp.size() * sizeof(int), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMalloc((void **)&D.ai_col, std::max(D.nai, 1LL) * sizeof(int)));
  CHECK_CUDA(cudaMalloc((void **)&D.ab_col, std::max(D.nab, 1LL) * sizeof(int)));
  CHECK_CUDA(cudaMalloc((void **)&D.csr_col, D.ncsr * sizeof(int)));
  /* room for double values; single ones use the first half */
  CHECK_CUDA(cudaMalloc(&D.ai_val, std::max(D.nai, 1LL) * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&D.ab_val, std::max(D.nab, 1LL) * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&D.diag, D.n * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&D.csr_val, D.ncsr * sizeof(double)));
  return D;
}

template <typename T>
static void FillValues(const Grid &g, Dev &D, bool cols, cudaStream_t s)
{
  Fill<T><<<Blocks(D.n, 256), 256, 0, s>>>(g, D.n, D.ai_ptr, D.ai_col, (T *)D.ai_val, D.ab_ptr, D.ab_col, (T *)D.ab_val, (T *)D.diag, D.csr_ptr, D.csr_col, (T *)D.csr_val, cols);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaStreamSynchronize(s));
}

static void FreeDev(Dev &D)
{
  for (void *p : {(void *)D.patch_ptr, (void *)D.ai_ptr, (void *)D.ab_ptr, (void *)D.csr_ptr, (void *)D.ai_col, (void *)D.ab_col, (void *)D.csr_col, D.ai_val, D.ab_val, D.diag, D.csr_val})
    CHECK_CUDA(cudaFree(p));
}

/* row, ab_col: the row map and the AB columns in level rows, or NULL (the identity layout) */
template <typename T>
static void Run(const Grid &g, Dev &D, const int *row, const int *ab_col, int reps, double bw, double *x, double *b, double *r, double *t, cudaStream_t s)
{
  const int        n = (int)D.n;
  PatchworkSPMDesc d;
  double           ms_spmv = 1e30;
  int              gbest   = 0;

  memset(&d, 0, sizeof(d));
  d.n           = n;
  d.npatch      = n / kPatch;
  d.max_patch   = kPatch;
  d.patch_ptr   = D.patch_ptr;
  d.ai_ptr      = D.ai_ptr;
  d.ai_col      = D.ai_col;
  d.ab_ptr      = D.ab_ptr;
  d.ab_col      = row ? ab_col : D.ab_col;
  d.row         = row;
  d.single      = sizeof(T) == 4;
  d.ai_val      = D.ai_val;
  d.ab_val      = D.ab_val;
  d.diag        = D.diag;
  d.inner       = 3;
  d.inner_omega = 0.8;
  d.omega       = 1.0;

  const double relax = TimeIt(reps, s, [&] { Ok(PatchworkSPMPatchRelaxCUDA(&d, b, x, r, 1, s), "PatchRelax"); });
  const double bres  = TimeIt(reps, s, [&] { Ok(PatchworkSPMBoundaryResidualCUDA(&d, x, r, t, s), "BoundaryResidual"); });
  const double pre   = TimeIt(reps, s, [&] {
    Ok(PatchworkSPMPatchRelaxCUDA(&d, b, x, r, 1, s), "PatchRelax");
    Ok(PatchworkSPMBoundaryResidualCUDA(&d, x, r, r, s), "BoundaryResidual");
  });
  const double post  = TimeIt(reps, s, [&] {
    Ok(PatchworkSPMBoundaryResidualCUDA(&d, x, b, t, s), "BoundaryResidual");
    Ok(PatchworkSPMPatchRelaxCUDA(&d, t, x, NULL, 0, s), "PatchRelax");
  });
  const double mult  = TimeIt(reps, s, [&] { Ok(PatchworkSPMMultCUDA(&d, x, t, s), "Mult"); });
  {
    const int    nt = 256;
    const T     *val = (const T *)D.csr_val;
    auto         grid = [&](int G) { return (unsigned)((G * D.n + nt - 1) / nt); }; /* one thread a lane, no grid stride */
    const double m1   = TimeIt(reps, s, [&] { SpMV<T, 1><<<grid(1), nt, 0, s>>>(n, D.csr_ptr, D.csr_col, val, x, t); });
    const double m4   = TimeIt(reps, s, [&] { SpMV<T, 4><<<grid(4), nt, 0, s>>>(n, D.csr_ptr, D.csr_col, val, x, t); });
    const double m8   = TimeIt(reps, s, [&] { SpMV<T, 8><<<grid(8), nt, 0, s>>>(n, D.csr_ptr, D.csr_col, val, x, t); });
    ms_spmv          = std::min(m1, std::min(m4, m8));
    gbest            = ms_spmv == m1 ? 1 : ms_spmv == m4 ? 4 : 8;
  }
  const double mat_pre  = (double)(D.nai + D.nab) * (sizeof(T) + 4) + 2.0 * (n + 1) * 4 + (double)n * sizeof(T) + 4.0 * (d.npatch + 1);
  const double mat_spmv = (double)D.ncsr * (sizeof(T) + 4) + 4.0 * (n + 1);
  printf("%-5s %5s %9d %-6s %5.1f %5.1f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f(%d) %6.2f %7.0f %7.0f %6.0f%% %7.0f\n", g.box ? (row ? "box+r" : "box") : "lex", g.stencil == 7 ? "7pt" : "27pt", n, sizeof(T) == 4 ? "single" : "double",
         (double)D.nai / n, (double)D.nab / n, relax, bres, pre, post, mult, ms_spmv, gbest, pre / ms_spmv, mat_pre / (pre * 1e-3) / 1e9, n / (pre * 1e-3) / 1e6,
         100.0 * (mat_pre + 48.0 * n) / (pre * 1e-3) / bw, mat_spmv / (ms_spmv * 1e-3) / 1e9);
  fflush(stdout);
}

int main(int argc, char **argv)
{
  BenchOptions o = {false, 20, 0, 0, 0};
  const int    start = BenchStart(argc, argv, &o);

  if (start >= 0) return start;
  std::vector<Grid> grids;
  if (o.size > 0) { /* one grid of about --size rows, whole boxes */
    const int e  = std::max(1, (int)lround(cbrt(o.size) / kBY));
    const int nx = std::max(1, (int)lround(o.size / (64.0 * e * e) / kBX));
    grids.push_back({kBX * nx, kBY * e, kBZ * e, 0, true});
  } else if (o.quick) grids.push_back({60, 64, 64, 0, true});
  else {
    grids.push_back({120, 128, 128, 0, true});
    grids.push_back({240, 256, 256, 0, true});
  }
  if (o.quick) o.reps = std::min(o.reps, 5);

  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  double bw;
  {
    const size_t bytes = (size_t)1 << 30;
    void        *a, *b;
    CHECK_CUDA(cudaMalloc(&a, bytes));
    CHECK_CUDA(cudaMalloc(&b, bytes));
    CHECK_CUDA(cudaMemsetAsync(a, 0, bytes, s));
    const double ms = TimeIt(10, s, [&] { CHECK_CUDA(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s)); }, 3);
    bw              = 2.0 * bytes / (ms * 1e-3);
    CHECK_CUDA(cudaFree(a));
    CHECK_CUDA(cudaFree(b));
  }
  printf("# copy bandwidth (device-to-device cudaMemcpy of 1 GiB, read+written): %.1f GB/s\n", bw / 1e9);
  printf("# patches of %d rows, inner = 3; times in ms, median of %d; GB/s: matrix bytes read; %%copy: pre's matrix + 48 B/row against the copy\n", kPatch, o.reps);
  printf("%-5s %5s %9s %-6s %5s %5s %7s %7s %7s %7s %7s %10s %6s %7s %7s %7s %7s\n", "ord", "sten", "rows", "prec", "AI/r", "AB/r", "relax", "bres", "pre", "post", "mult", "spmv(G)", "pre/sp",
         "preGB/s", "Mrow/s", "%copy", "spGB/s");
  for (const Grid &g0 : grids)
    for (int stencil : {7, 27})
      for (int box = 1; box >= 0; box--) {
        Grid g    = g0;
        g.stencil = stencil;
        g.box     = box;
        Dev     D = Make(g, s);
        double *v;
        CHECK_CUDA(cudaMalloc((void **)&v, 4 * D.n * sizeof(double)));
        double *x = v, *b = v + D.n, *r = v + 2 * D.n, *t = v + 3 * D.n;
        FillVec<<<Blocks(D.n, 256), 256, 0, s>>>(b, D.n, 7);
        FillVec<<<Blocks(D.n, 256), 256, 0, s>>>(x, D.n, 11);
        CHECK_CUDA(cudaGetLastError());
        FillValues<double>(g, D, true, s);
        int *row = NULL, *ab_lex = NULL;
        if (box) { /* the row map to the lexicographic numbering (the columns stay, the values change below) */
          CHECK_CUDA(cudaMalloc((void **)&row, D.n * sizeof(int)));
          CHECK_CUDA(cudaMalloc((void **)&ab_lex, std::max(D.nab, 1LL) * sizeof(int)));
          BoxToLex<<<Blocks(D.n, 256), 256, 0, s>>>(g, D.n, row);
          if (D.nab) Renumber<<<Blocks(D.nab, 256), 256, 0, s>>>(D.nab, row, D.ab_col, ab_lex);
          CHECK_CUDA(cudaGetLastError());
          CHECK_CUDA(cudaStreamSynchronize(s));
        }
        Run<double>(g, D, NULL, NULL, o.reps, bw, x, b, r, t, s);
        if (box) Run<double>(g, D, row, ab_lex, o.reps, bw, x, b, r, t, s);
        FillValues<float>(g, D, false, s);
        Run<float>(g, D, NULL, NULL, o.reps, bw, x, b, r, t, s);
        if (box) Run<float>(g, D, row, ab_lex, o.reps, bw, x, b, r, t, s);
        CHECK_CUDA(cudaFree(row));
        CHECK_CUDA(cudaFree(ab_lex));
        CHECK_CUDA(cudaFree(v));
        FreeDev(D);
      }
  CHECK_CUDA(cudaStreamDestroy(s));
  return 0;
}
