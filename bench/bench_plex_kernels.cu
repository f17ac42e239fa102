/* Throughput of the kernels of the operator on general quadrilateral and hexahedral cells
   (include/patchwork/plex_kernel.h), PETSc-free.

   Mesh: a grid of m^dim cells of degree k on the unit cube whose vertices a smooth map moves (the cells
   are multilinear, not parallelepipeds; coordinates made on the device), cells and nodes numbered
   lexicographically, boundary nodes eliminated (-1), as a mesh from DMPlex after a locality-preserving
   reordering would be. For 3D k = 1..8 and a few 2D degrees, with
   Gauss-Lobatto collocation (nq = n) and Gauss nq = k+2, at about --size DoF (DoF = nodes of the grid,
   about ncells k^dim): the time of the geometric factors (PatchworkPlexGeometryCUDA, once, which also
   checks the mesh: 0 bad cells), of the diagonal (once), and the median of --reps applies (each timed
   with CUDA events) as GDoF/s and as effective bandwidth: the bytes an apply must move at least,
   geometric factors (ncomp nq^dim doubles per cell) + index map (n^dim ints per cell) + 24 B per DoF
   (x read, y read and written), against the device-to-device copy bandwidth measured in the same run.
   The last lines give the apply throughput per degree against the targets (30 GDoF/s collocated,
   15 GDoF/s Gauss nq = k+2, in 3D for k = 4..7), and the cost of hanging nodes: the apply again with
   10% and 30% of the cells marked as hanging (each with one or two hanging faces at a random position,
   hanging_kernel.h; the index map is left as it is, which changes no work), scattered over the mesh (so
   that most blocks of cells hold one: a refinement front keeps them together, this is the worse case),
   which the templated kernels apply with their constraints: the overhead against the plain apply, with
   stored factors and on the fly.
   Each row also times the apply with the geometry on the fly (PatchworkPlexDesc.corners: the factors
   computed at every point from the cell's corners instead of read; the same operator on these multilinear
   cells, the largest difference to the stored-factor apply relative to max |y| is printed as fly-err),
   and its short table puts both beside the targets; fly+c: GDoF/s on the fly with a variable diffusion
   coefficient (one value per point read; the stored factors include it at no cost).

   Usage: bench_plex_kernels [--quick] [--reps N] [--dim 2|3] [--k K] [--size DOF] */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>
#include "benchgpu.h"
#include <patchwork/basis1d.h>
#include <patchwork/plex_kernel.h>
#include <patchwork/hanging_kernel.h>

/* index map of cell c: global node of (i,j,l), lexicographic on the (k m + 1)^dim grid, -1 on the boundary */
__global__ void MakeElem(int dim, int k, int m, long long ncells, int *elem)
{
  const int       n = k + 1, nd = dim == 3 ? n * n * n : n * n, nn = k * m + 1;
  const long long total = ncells * nd;

  for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += (long long)gridDim.x * blockDim.x) {
    const long long c = t / nd;
    const int       node = (int)(t - c * nd), i = node % n, j = (node / n) % n, l = node / (n * n);
    const int       ex = (int)(c % m), ey = (int)((c / m) % m), ez = dim == 3 ? (int)(c / ((long long)m * m)) : 0;
    const int       gx = ex * k + i, gy = ey * k + j, gz = ez * k + l;
    const bool      bnd = gx == 0 || gx == nn - 1 || gy == 0 || gy == nn - 1 || (dim == 3 && (gz == 0 || gz == nn - 1));
    elem[t]             = bnd ? -1 : (int)(((long long)gz * nn + gy) * nn + gx);
  }
}

/* Gauss-Lobatto nodes t[] of the cells */
struct Nodes {
  double t[PW_MAX_N];
};

/* the vertex map: x = p + 0.03 prod sin(2 pi p_e + phase) */
__device__ void MapVertex(int dim, const double p[3], double x[3])
{
  for (int d = 0; d < dim; d++) {
    double s = 1;
    for (int a = 0; a < dim; a++) s *= sin(6.283185307179586 * p[a] + 0.7 * (d + 1) + 0.3 * a);
    x[d] = p[d] + 0.03 * s;
  }
}

/* node coordinates: the multilinear interpolation of the mapped vertices of each cell; and the corners
   (PatchworkPlexDesc.corners) */
__global__ void MakeCoords(int dim, int k, int m, long long ncells, const Nodes nodes, double *coords, double *corners)
{
  const int       n = k + 1, nd = dim == 3 ? n * n * n : n * n, nv = 1 << dim;
  const long long total = ncells * nd;

  for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += (long long)gridDim.x * blockDim.x) {
    const long long c = t / nd;
    const int       node = (int)(t - c * nd), ijl[3] = {node % n, (node / n) % n, node / (n * n)};
    const long long e[3] = {c % m, (c / m) % m, dim == 3 ? c / ((long long)m * m) : 0};
    double          x[3] = {0, 0, 0};
    for (int v = 0; v < nv; v++) {
      double p[3], X[3], phi = 1;
      for (int d = 0; d < dim; d++) {
        const int b = (v >> d) & 1;
        p[d]        = (double)(e[d] + b) / m;
        phi *= b ? nodes.t[ijl[d]] : 1 - nodes.t[ijl[d]];
      }
      MapVertex(dim, p, X);
      for (int d = 0; d < dim; d++) x[d] += phi * X[d];
      if (node == PatchworkPlexCornerNode(n, v))
        for (int d = 0; d < dim; d++) corners[(c * dim + d) * nv + v] = X[d];
    }
    for (int d = 0; d < dim; d++) coords[(c * dim + d) * nd + node] = x[d];
  }
}

/* max |a - b| and max |b| (as ordered bits of non-negative doubles) */
__global__ void MaxDiff(const double *a, const double *b, long long n, unsigned long long *out)
{
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    atomicMax(out, (unsigned long long)__double_as_longlong(fabs(a[i] - b[i])));
    atomicMax(out + 1, (unsigned long long)__double_as_longlong(fabs(b[i])));
  }
}

__global__ void Fill(double *x, long long n, unsigned seed)
{
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    unsigned long long h = (unsigned long long)i * 0x9E3779B97F4A7C15ull + seed;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    x[i] = (double)(h >> 40) * (1.0 / 16777216.0) - 0.5;
  }
}

struct Row {
  int       dim, k, nq, colloc, m;
  long long ncells, dof;
  double    geom_ms, diag_ms, ms, gdofs, gbs, ms_hang[2], ms_plain; /* apply with 10% and 30% hanging cells, and none, interleaved */
  double    ms_fly, gdofs_fly, bytes_fly, fly_err;                  /* the geometry on the fly */
  double    gdofs_flyc;                                             /* the same with a variable diffusion coefficient */
  double    ms_plain_fly, ms_hang_fly[2];                           /* the hanging-node overhead on the fly */
  int       nbad;
  bool      done;
};

static unsigned Blocks(long long n) { return (unsigned)std::min<long long>((n + 255) / 256, 65535 * 16); }

static void CheckRet(int ret, const char *what)
{
  if (ret) {
    fprintf(stderr, "%s failed: %s\n", what, cudaGetErrorString((cudaError_t)ret));
    exit(1);
  }
}

static void RunRow(Row &r, int reps, cudaStream_t s, double bw)
{
  const int    n = r.k + 1, nd = r.dim == 3 ? n * n * n : n * n, nqd = r.dim == 3 ? r.nq * r.nq * r.nq : r.nq * r.nq, ncomp = PW_PLEX_NCOMP(r.dim);
  const size_t geom_bytes = (size_t)r.ncells * ncomp * nqd * sizeof(double), elem_bytes = (size_t)r.ncells * nd * sizeof(int);
  const size_t coord_bytes = (size_t)r.ncells * r.dim * nd * sizeof(double), vec_bytes = (size_t)r.dof * sizeof(double);
  const size_t corner_bytes = (size_t)r.ncells * r.dim * PW_PLEX_NCORNER(r.dim) * sizeof(double);
  size_t       freeb, totalb;

  r.done = false;
  CHECK_CUDA(cudaMemGetInfo(&freeb, &totalb));
  if (geom_bytes + elem_bytes + coord_bytes + corner_bytes + 3 * vec_bytes + (256u << 20) > freeb) {
    printf("%3d %2d %2d %-6s %9lld %11lld   skipped: needs %.1f GB, %.1f GB free\n", r.dim, r.k, r.nq, r.colloc ? "gl" : "gauss", r.ncells, r.dof, (geom_bytes + elem_bytes + coord_bytes + corner_bytes + 3 * vec_bytes) / 1e9, freeb / 1e9);
    return;
  }
  double *geom, *coords, *corners, *x, *y, *y2;
  int    *elem;
  CHECK_CUDA(cudaMalloc((void **)&geom, geom_bytes));
  CHECK_CUDA(cudaMalloc((void **)&corners, corner_bytes));
  CHECK_CUDA(cudaMalloc((void **)&y2, vec_bytes));
  CHECK_CUDA(cudaMalloc((void **)&coords, coord_bytes));
  CHECK_CUDA(cudaMalloc((void **)&elem, elem_bytes));
  CHECK_CUDA(cudaMalloc((void **)&x, vec_bytes));
  CHECK_CUDA(cudaMalloc((void **)&y, vec_bytes));

  PatchworkPlexGeomDesc g;
  PatchworkPlexDesc     d;
  double                pts[PW_MAX_Q], w[PW_MAX_Q], gw[PW_MAX_N];
  Nodes                 nodes;
  const PatchworkQuadrature q = r.colloc ? PW_QUAD_GAUSSLOBATTO : PW_QUAD_GAUSS;

  memset(&g, 0, sizeof(g));
  memset(&d, 0, sizeof(d));
  if (PatchworkPlex1DTables(r.k, r.nq, q, pts, w, g.interp, g.deriv) || PatchworkGaussLobatto(n, nodes.t, gw)) {
    fprintf(stderr, "PatchworkPlex1DTables(k=%d, nq=%d) failed\n", r.k, r.nq);
    exit(1);
  }
  memcpy(g.weights, w, sizeof(w));
  g.dim = d.dim = r.dim;
  g.degree = d.degree = r.k;
  g.nq = d.nq = r.nq;
  g.ncells = d.ncells = (int)r.ncells;
  g.coords = coords;
  g.alpha  = 1.0;
  g.beta   = 1.0;
  d.collocated = r.colloc;
  d.elem       = elem;
  d.geom       = geom;
  memcpy(d.interp, g.interp, sizeof(d.interp));
  memcpy(d.deriv, g.deriv, sizeof(d.deriv));

  MakeElem<<<Blocks(r.ncells * nd), 256, 0, s>>>(r.dim, r.k, r.m, r.ncells, elem);
  MakeCoords<<<Blocks(r.ncells * nd), 256, 0, s>>>(r.dim, r.k, r.m, r.ncells, nodes, coords, corners);
  Fill<<<Blocks(r.dof), 256, 0, s>>>(x, r.dof, 1234u + r.k);
  CHECK_CUDA(cudaMemsetAsync(y, 0, vec_bytes, s));
  CHECK_CUDA(cudaGetLastError());

  r.geom_ms = TimeIt(
    1, s, [&] { CheckRet(PatchworkPlexGeometryCUDA(&g, geom, &r.nbad, s), "geometry"); }, 1);
  r.diag_ms = TimeIt(
    1, s, [&] { CheckRet(PatchworkPlexDiagonalCUDA(&d, y, s), "diagonal"); }, 1);
  r.ms = TimeIt(
    reps, s, [&] { CheckRet(PatchworkPlexApplyCUDA(&d, x, y, s), "apply"); }, 3);
  PatchworkPlexDesc df = d; /* the geometry on the fly */
  df.geom    = NULL;
  df.corners = corners;
  df.alpha   = g.alpha;
  df.beta    = g.beta;
  memcpy(df.points, pts, sizeof(pts));
  memcpy(df.weights, w, sizeof(w));
  { /* one apply of each into zeroed vectors for the difference, then timed */
    unsigned long long *dmax, hmax[2];
    CHECK_CUDA(cudaMemsetAsync(y, 0, vec_bytes, s));
    CHECK_CUDA(cudaMemsetAsync(y2, 0, vec_bytes, s));
    CheckRet(PatchworkPlexApplyCUDA(&d, x, y, s), "apply");
    CheckRet(PatchworkPlexApplyCUDA(&df, x, y2, s), "apply on the fly");
    CHECK_CUDA(cudaMalloc((void **)&dmax, 2 * sizeof(unsigned long long)));
    CHECK_CUDA(cudaMemsetAsync(dmax, 0, 2 * sizeof(unsigned long long), s));
    MaxDiff<<<Blocks(r.dof), 256, 0, s>>>(y2, y, r.dof, dmax);
    CHECK_CUDA(cudaMemcpyAsync(hmax, dmax, sizeof(hmax), cudaMemcpyDeviceToHost, s));
    CHECK_CUDA(cudaStreamSynchronize(s));
    CHECK_CUDA(cudaFree(dmax));
    double dd, ym;
    memcpy(&dd, &hmax[0], sizeof(dd));
    memcpy(&ym, &hmax[1], sizeof(ym));
    r.fly_err = dd / ym;
    r.ms_fly  = TimeIt(
      reps, s, [&] { CheckRet(PatchworkPlexApplyCUDA(&df, x, y2, s), "apply on the fly"); }, 3);
    r.bytes_fly = (double)corner_bytes + elem_bytes + 24.0 * r.dof;
    r.gdofs_fly = r.dof / (r.ms_fly * 1e-3) / 1e9;
    double *dif; /* one value per point: what a variable coefficient adds (stored factors include it) */
    CHECK_CUDA(cudaMalloc((void **)&dif, (size_t)r.ncells * nqd * sizeof(double)));
    Fill<<<Blocks(r.ncells * nqd), 256, 0, s>>>(dif, r.ncells * nqd, 99u);
    df.diffusion = dif;
    r.gdofs_flyc = r.dof / (TimeIt(
                              reps, s, [&] { CheckRet(PatchworkPlexApplyCUDA(&df, x, y2, s), "apply on the fly, variable coefficient"); }, 3) *
                            1e-3) /
                   1e9;
    df.diffusion = NULL;
    CHECK_CUDA(cudaFree(dif));
  }
  { /* hanging cells: masks from a hash of the cell (regular, as a mesh gives them, so no list for the
       generic kernel), then the plain apply and both hanging ones interleaved over rounds, each the
       best of its rounds (one apply's time varies by 10-20% between calls of a few milliseconds) */
    const double             frac[2] = {0.1, 0.3};
    double                   P[2 * PW_MAX_N * PW_MAX_N];
    unsigned long long      *dmask[2];
    double                  *dP;
    PatchworkPlexDesc        dh[2] = {d, d}, dhf[2] = {df, df}; /* stored, on the fly */
    PatchworkHangingTables(r.k, P);
    CHECK_CUDA(cudaMalloc((void **)&dP, sizeof(P)));
    CHECK_CUDA(cudaMemcpy(dP, P, sizeof(P), cudaMemcpyHostToDevice));
    for (int f = 0; f < 2; f++) {
      std::vector<unsigned long long> mask(r.ncells, 0);
      for (long long c = 0; c < r.ncells; c++) {
        unsigned long long h = (unsigned long long)c * 0x9E3779B97F4A7C15ull + 77;
        h ^= h >> 29;
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 32;
        if ((double)(h & 0xffffff) / 16777216.0 >= frac[f]) continue;
        const int d0 = (int)((h >> 24) % r.dim), side = (int)((h >> 28) & 1), face = 2 * d0 + side;
        int       side1 = -1;
        mask[c] = 1ull << face;
        for (int t = 0; t < r.dim - 1; t++) mask[c] |= ((h >> (30 + t)) & 1ull) << (PW_HANG_FACE_POS + (r.dim - 1) * face + t);
        if ((h >> 40) & 1) { /* a second face, across the next direction */
          const int d1 = (d0 + 1) % r.dim, f1 = 2 * d1 + (int)((h >> 41) & 1);
          side1 = f1 % 2;
          mask[c] |= 1ull << f1;
          for (int t = 0; t < r.dim - 1; t++) mask[c] |= ((h >> (42 + t)) & 1ull) << (PW_HANG_FACE_POS + (r.dim - 1) * f1 + t);
        }
        if (r.dim == 3 && (h >> 44) & 1) { /* an edge along d0, off the second face */
          const int d1 = (d0 + 1) % 3, o0 = d0 == 0 ? 1 : 0; /* the edge's first other direction */
          int       ab[2] = {(int)((h >> 45) & 1), (int)((h >> 46) & 1)};
          if (side1 >= 0) ab[d1 == o0 ? 0 : 1] = 1 - side1;
          const int e = 4 * d0 + 2 * ab[1] + ab[0];
          mask[c] |= 1ull << (PW_HANG_EDGE + e);
          mask[c] |= ((h >> 47) & 1ull) << (PW_HANG_EDGE_POS + e);
        }
        if (!PatchworkHangingRegular(r.dim, mask[c])) {
          fprintf(stderr, "bench_plex_kernels: an irregular hanging mask\n");
          exit(1);
        }
      }
      CHECK_CUDA(cudaMalloc((void **)&dmask[f], mask.size() * sizeof(unsigned long long)));
      CHECK_CUDA(cudaMemcpy(dmask[f], mask.data(), mask.size() * sizeof(unsigned long long), cudaMemcpyHostToDevice));
      dh[f].hang = dhf[f].hang = dmask[f];
      dh[f].hangP = dhf[f].hangP = dP;
      dh[f].nhang = dhf[f].nhang = 0;
    }
    r.ms_plain = r.ms_hang[0] = r.ms_hang[1] = r.ms_plain_fly = r.ms_hang_fly[0] = r.ms_hang_fly[1] = 1e30;
    for (int round = 0; round < 5; round++) {
      r.ms_plain = std::min(r.ms_plain, TimeIt(
                                          reps, s, [&] { CheckRet(PatchworkPlexApplyCUDA(&d, x, y, s), "apply"); }, 1));
      r.ms_plain_fly = std::min(r.ms_plain_fly, TimeIt(
                                                  reps, s, [&] { CheckRet(PatchworkPlexApplyCUDA(&df, x, y, s), "apply on the fly"); }, 1));
      for (int f = 0; f < 2; f++) {
        r.ms_hang[f]     = std::min(r.ms_hang[f], TimeIt(
                                                reps, s, [&] { CheckRet(PatchworkPlexApplyCUDA(&dh[f], x, y, s), "apply (hanging)"); }, 1));
        r.ms_hang_fly[f] = std::min(r.ms_hang_fly[f], TimeIt(
                                                        reps, s, [&] { CheckRet(PatchworkPlexApplyCUDA(&dhf[f], x, y, s), "apply on the fly (hanging)"); }, 1));
      }
    }
    for (int f = 0; f < 2; f++) CHECK_CUDA(cudaFree(dmask[f]));
    CHECK_CUDA(cudaFree(dP));
  }
  const double bytes = (double)geom_bytes + elem_bytes + 24.0 * r.dof;
  r.gdofs = r.dof / (r.ms * 1e-3) / 1e9;
  r.gbs   = bytes / (r.ms * 1e-3) / 1e9;
  r.done  = true;
  printf("%3d %2d %2d %-6s %9lld %11lld %9.2f %8.2f %9.3f %8.2f %8.0f %6.0f%% %5d %8.3f %8.2f %8.1e %8.2f\n", r.dim, r.k, r.nq, r.colloc ? "gl" : "gauss", r.ncells, r.dof, r.geom_ms, r.diag_ms, r.ms, r.gdofs, r.gbs, 100.0 * r.gbs * 1e9 / bw, r.nbad, r.ms_fly, r.gdofs_fly, r.fly_err, r.gdofs_flyc);
  fflush(stdout);
  CHECK_CUDA(cudaFree(geom));
  CHECK_CUDA(cudaFree(corners));
  CHECK_CUDA(cudaFree(y2));
  CHECK_CUDA(cudaFree(coords));
  CHECK_CUDA(cudaFree(elem));
  CHECK_CUDA(cudaFree(x));
  CHECK_CUDA(cudaFree(y));
}

static Row MakeRow(int dim, int k, int colloc, double target)
{
  Row          r;
  const double per_dir = dim == 3 ? cbrt(target) : sqrt(target);

  memset(&r, 0, sizeof(r));
  r.dim    = dim;
  r.k      = k;
  r.colloc = colloc;
  r.nq     = colloc ? k + 1 : k + 2;
  r.m      = std::max(1, (int)lround((per_dir - 1) / k));
  const long long nn = (long long)k * r.m + 1;
  r.dof    = dim == 3 ? nn * nn * nn : nn * nn;
  r.ncells = dim == 3 ? (long long)r.m * r.m * r.m : (long long)r.m * r.m;
  return r;
}

int main(int argc, char **argv)
{
  BenchOptions o     = {false, 10, 0, 0, 16e6};
  const int    start = BenchStart(argc, argv, &o);

  if (start >= 0) return start;
  const int  reps = o.reps, only_dim = o.dim, only_k = o.k;
  const bool quick = o.quick;
  double     size  = quick ? std::min(o.size, 2e6) : o.size;

  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  /* device-to-device copy bandwidth, counting bytes read and written */
  double bw;
  {
    const size_t bytes = (size_t)1 << 30;
    void        *a, *b;
    CHECK_CUDA(cudaMalloc(&a, bytes));
    CHECK_CUDA(cudaMalloc(&b, bytes));
    CHECK_CUDA(cudaMemsetAsync(a, 0, bytes, s));
    const double ms = TimeIt(
      10, s, [&] { CHECK_CUDA(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s)); }, 3);
    bw = 2.0 * bytes / (ms * 1e-3);
    CHECK_CUDA(cudaFree(a));
    CHECK_CUDA(cudaFree(b));
  }
  printf("# copy bandwidth (device-to-device cudaMemcpy of 1 GiB, read+written): %.1f GB/s\n", bw / 1e9);
  printf("# geometry, diagonal: one call each (after one warm-up); apply: median of %d; GB/s: geom + index map + 24 B/DoF\n", reps);
  printf("%3s %2s %2s %-6s %9s %11s %9s %8s %9s %8s %8s %7s %5s %8s %8s %8s %8s\n", "dim", "k", "nq", "rule", "cells", "DoF", "geom-ms", "diag-ms", "apply-ms", "GDoF/s", "GB/s", "%copy", "nbad", "fly-ms", "fly-GDoF", "fly-err", "fly+c");

  std::vector<Row> rows;
  if (only_dim != 2)
    for (int k = 1; k <= 8; k++)
      for (int colloc = 1; colloc >= 0; colloc--)
        if (!only_k || k == only_k) rows.push_back(MakeRow(3, k, colloc, size));
  if (only_dim != 3)
    for (int k : {2, 4, 7, 10})
      for (int colloc = 1; colloc >= 0; colloc--)
        if (!only_k || k == only_k) rows.push_back(MakeRow(2, k, colloc, size));
  for (Row &r : rows) RunRow(r, reps, s, bw);

  /* the short table: apply throughput per degree against the targets, stored factors and on the fly, with
     the bound that the bytes an apply must move put on each at this run's copy bandwidth (stored: 7
     doubles per point; on the fly: the corners) */
  printf("\n== apply throughput (GDoF/s), targets 30 collocated / 15 Gauss nq=k+2 (3D, k = 4..7); bound = copy bandwidth / bytes per DoF ==\n");
  printf("%3s %2s %7s %6s %14s %6s %6s | %7s %6s %14s %6s %6s\n", "dim", "k", "gl-stor", "bound", "gl-on-the-fly", "bound", "fly+c", "ga-stor", "bound", "ga-on-the-fly", "bound", "fly+c");
  for (int dim = 3; dim >= 2; dim--)
    for (int k = 1; k <= 10; k++) {
      double g[2][2] = {{-1, -1}, {-1, -1}}, b[2][2] = {{-1, -1}, {-1, -1}}, gc[2] = {-1, -1}; /* [rule][stored, fly] */
      for (const Row &r : rows)
        if (r.dim == dim && r.k == k && r.done) {
          const int i = r.colloc ? 0 : 1;
          g[i][0]     = r.gdofs;
          b[i][0]     = bw / 1e9 / (r.gbs / r.gdofs); /* GB/s over bytes per DoF */
          g[i][1]     = r.gdofs_fly;
          gc[i]       = r.gdofs_flyc;
          b[i][1]     = bw / (r.bytes_fly / r.dof) / 1e9;
        }
      if (g[0][0] < 0 && g[1][0] < 0) continue;
      char c[2][2][32], cb[2][2][16];
      for (int i = 0; i < 2; i++)
        for (int f = 0; f < 2; f++) {
          const bool tgt = dim == 3 && k >= 4 && k <= 7 && f == 1;
          if (g[i][f] < 0) snprintf(c[i][f], sizeof(c[i][f]), "-");
          else snprintf(c[i][f], sizeof(c[i][f]), "%.1f%s", g[i][f], tgt ? (g[i][f] >= (i ? 15.0 : 30.0) ? " (met)" : " (below)") : "");
          if (b[i][f] < 0) snprintf(cb[i][f], sizeof(cb[i][f]), "-");
          else snprintf(cb[i][f], sizeof(cb[i][f]), "%.1f", b[i][f]);
        }
      printf("%3d %2d %7s %6s %14s %6s %6.1f | %7s %6s %14s %6s %6.1f\n", dim, k, c[0][0], cb[0][0], c[0][1], cb[0][1], gc[0], c[1][0], cb[1][0], c[1][1], cb[1][1], gc[1]);
    }
  printf("\n== hanging-node overhead: apply time with 10%% / 30%% of the cells hanging, against none (the paper: 10-40%%) ==\n");
  printf("%3s %2s %-6s %9s %12s %12s | %12s %12s %12s\n", "dim", "k", "rule", "plain-ms", "10%: ms (+%)", "30%: ms (+%)", "fly plain-ms", "10%: ms (+%)", "30%: ms (+%)");
  for (const Row &r : rows)
    if (r.done)
      printf("%3d %2d %-6s %9.3f %6.3f (%3.0f%%) %6.3f (%3.0f%%) | %12.3f %6.3f (%3.0f%%) %6.3f (%3.0f%%)\n", r.dim, r.k, r.colloc ? "gl" : "gauss", r.ms_plain, r.ms_hang[0], 100 * (r.ms_hang[0] / r.ms_plain - 1), r.ms_hang[1], 100 * (r.ms_hang[1] / r.ms_plain - 1), r.ms_plain_fly, r.ms_hang_fly[0],
             100 * (r.ms_hang_fly[0] / r.ms_plain_fly - 1), r.ms_hang_fly[1], 100 * (r.ms_hang_fly[1] / r.ms_plain_fly - 1));
  CHECK_CUDA(cudaStreamDestroy(s));
  return 0;
}
