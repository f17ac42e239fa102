/* GPU-vs-CPU test of the P1 assembly (include/patchwork/p1_kernel.h), PETSc-free.

   Compares PatchworkP1AssembleCUDA (cuda/p1_assemble.cu, the patch-based hierarchical assembly) with the
   CPU reference PatchworkP1AssembleRef (src/core/p1_ref.c) on meshes made here: the unit cube cut into
   n^3 cubes of six tetrahedra each (the Kuhn split, or the split by a random vertex order as in
   examples/tets.h), the unit square into n^2 squares of two triangles (random diagonals), vertices moved
   by up to 0.2 h per coordinate, vertex numbers shuffled and each cell's vertices rotated before
   PatchworkP1LayoutCreate() renumbers them patch by patch. sigma random in [0.5, 2] per cell (or NULL),
   lambda random in [0, 2] (0 in some cases). Per case:
     assemble  vals (filled with NaN before, so every entry must be assigned) against the reference's,
               max-norm relative to max|A|. The atomics add in any order, and nvcc contracts to FMA where
               the host compiler does not: an entry sums at most m element entries (m the most cells
               around a vertex), each bounded by max|A| (a diagonal entry of an element matrix is positive
               and below the assembled diagonal; off-diagonal ones are below the geometric mean of two
               diagonals). Order: within (m-1) eps m max|A| on each side. Element entries: their vertex
               differences carry eps |x|, relative eps R with R = max|x| / h_min, amplified a few times
               by the products: c eps R max|A| per term, m terms. Tolerance eps max|A| (4 m^2 + 16 m R).
               The error counts (degenerate cells, missing pattern entries) must be 0.
     patching  the same with other layouts and block memory: the default patches (48 KB); tiny patches
               (1 KB: most entries go through global memory); patches that do not fit the block's memory
               (every patch through the global fallback); smem_bytes = 0 (no shared memory at all); 96 KB
               (the opt-in launch); every cell given to patch 0 (any assignment must work).
     rowsum    lambda = 0: every row of the stiffness sums to zero within the tolerance (independent of
               the reference).
   Also: degenerate cells and entries missing from the pattern are counted like the reference counts
   them; bad descriptors are refused with cudaErrorInvalidValue; an empty mesh is a no-op. When not quick,
   a timing line for a larger mesh (reference, patch kernel, all-global kernel).
   Prints one line per check, `ok ...` or `FAIL ...`, the worst err/tol last, and exits 0 when all pass,
   1 otherwise, 77 without a CUDA device.

   Usage: test_p1_kernels [--quick]   (--quick: small meshes only; for compute-sanitizer) */
#include <cuda_runtime.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <chrono>
#include <vector>
#include <patchwork/p1_kernel.h>

#include "gputest.h"

static double g_worst = 0;
static char   g_worst_name[256];

static void Check(bool ok, const char *name, double err, double tol)
{
  if (tol > 0 && ErrMaxTakes(g_worst, err / tol)) {
    g_worst = err / tol;
    snprintf(g_worst_name, sizeof(g_worst_name), "%s", name);
  }
  Report(ok, name, err, tol);
}

/* A mesh before the layout: cells interleaved (dim+1 per cell), coordinates interleaved (dim per vertex) */
struct Mesh {
  int                 dim, nvert, ncell;
  std::vector<int>    cells;
  std::vector<double> x;
  double              R; /* max|x| / h */
};

static double Rand01(void) { return 0.5 * (Rand() + 1.0); }

/* n^dim boxes of the unit cube/square; random_order: split by a random vertex order (3D) or random
   diagonals (2D); vertices moved by up to 0.2 h; vertex numbers shuffled, cells' vertices rotated */
static void MakeMesh(int dim, int n, bool random_order, Mesh &M)
{
  const int n1 = n + 1, nv = dim == 3 ? n1 * n1 * n1 : n1 * n1;
  const double h = 1.0 / n;
  std::vector<int> order(nv), shuffle(nv);

  M.dim   = dim;
  M.nvert = nv;
  M.cells.clear();
  M.x.assign((size_t)nv * dim, 0.0);
  for (int v = 0; v < nv; v++) order[v] = shuffle[v] = v;
  if (random_order)
    for (int v = nv - 1; v > 0; v--) std::swap(order[v], order[std::min(v, (int)(Rand01() * (v + 1)))]);
  for (int v = nv - 1; v > 0; v--) std::swap(shuffle[v], shuffle[std::min(v, (int)(Rand01() * (v + 1)))]);
  if (dim == 3) {
    const int eb[4] = {0, 1, 1, 0}, fb[4] = {0, 0, 1, 1};
    for (int cz = 0; cz < n; cz++)
      for (int cy = 0; cy < n; cy++)
        for (int cx = 0; cx < n; cx++) {
          int corner[8], a0 = 0;
          for (int a = 0; a < 8; a++) corner[a] = ((cz + (a >> 2)) * n1 + cy + ((a >> 1) & 1)) * n1 + cx + (a & 1);
          for (int a = 1; a < 8; a++)
            if (order[corner[a]] < order[corner[a0]]) a0 = a;
          for (int d = 0; d < 3; d++) {
            const int e = (d + 1) % 3, f = (d + 2) % 3, side = 1 - ((a0 >> d) & 1);
            int       q[4], i = 0;
            for (int k = 0; k < 4; k++) q[k] = corner[(side << d) | (eb[k] << e) | (fb[k] << f)];
            for (int k = 1; k < 4; k++)
              if (order[q[k]] < order[q[i]]) i = k;
            for (int tri = 0; tri < 2; tri++) {
              const int t[4] = {corner[a0], q[i], q[(i + 1 + tri) % 4], q[(i + 2 + tri) % 4]};
              M.cells.insert(M.cells.end(), t, t + 4);
            }
          }
        }
  } else {
    for (int cy = 0; cy < n; cy++)
      for (int cx = 0; cx < n; cx++) {
        const int q[4] = {cy * n1 + cx, cy * n1 + cx + 1, (cy + 1) * n1 + cx + 1, (cy + 1) * n1 + cx};
        const int k    = random_order ? (Rand() > 0 ? 1 : 0) : 0;
        const int t[6] = {q[k], q[k + 1], q[(k + 2) % 4], q[k], q[(k + 2) % 4], q[(k + 3) % 4]};
        M.cells.insert(M.cells.end(), t, t + 6);
      }
  }
  M.ncell = (int)(M.cells.size() / (dim + 1));
  for (int v = 0; v < nv; v++) {
    const int g[3] = {v % n1, (v / n1) % n1, v / (n1 * n1)};
    for (int d = 0; d < dim; d++) M.x[(size_t)shuffle[v] * dim + d] = h * g[d] + 0.2 * h * Rand();
  }
  for (int &v : M.cells) v = shuffle[v];
  for (int c = 0; c < M.ncell; c++) /* rotate: vertex 0 is not special */
    std::rotate(M.cells.begin() + (size_t)c * (dim + 1), M.cells.begin() + (size_t)c * (dim + 1) + c % (dim + 1), M.cells.begin() + (size_t)(c + 1) * (dim + 1));
  M.R = 1.2 / h;
}

/* The most cells around one vertex */
static int MaxCellsPerVertex(const Mesh &M)
{
  std::vector<int> count(M.nvert, 0);
  for (int v : M.cells) count[v]++;
  return *std::max_element(count.begin(), count.end());
}

/* Host data of one layout: coordinates and sigma in its order */
struct Host {
  PatchworkP1Layout   L;
  std::vector<double> coords, sigma;
  PatchworkP1Desc     d; /* host pointers */
};

static void MakeHost(const Mesh &M, size_t patch_bytes, bool with_sigma, double lambda, Host &H)
{
  if (PatchworkP1LayoutCreate(M.dim, M.nvert, M.ncell, M.cells.data(), patch_bytes, &H.L)) {
    printf("FAIL PatchworkP1LayoutCreate\n");
    exit(1);
  }
  H.coords.assign((size_t)M.dim * M.nvert, 0.0);
  for (int r = 0; r < M.nvert; r++)
    for (int d = 0; d < M.dim; d++) H.coords[(size_t)d * M.nvert + r] = M.x[(size_t)H.L.perm[r] * M.dim + d];
  H.sigma.assign(M.ncell, 1.0);
  if (with_sigma)
    for (double &s : H.sigma) s = 1.25 + 0.75 * Rand();
  PatchworkP1LayoutDesc(&H.L, &H.d);
  H.d.coords     = H.coords.data();
  H.d.sigma      = with_sigma ? H.sigma.data() : NULL;
  H.d.lambda     = lambda;
  H.d.smem_bytes = (int)std::min<size_t>(patch_bytes, 48 * 1024);
}

/* The descriptor's arrays on the device */
struct Dev {
  double    *coords = NULL, *sigma = NULL, *vals = NULL;
  int       *cells = NULL, *col = NULL, *patch_ptr = NULL;
  long long *rowptr = NULL, *patch_cell = NULL;
  void      *work = NULL;
  PatchworkP1Desc d;
};

template <class T>
static T *Upload(const T *h, size_t n)
{
  T *p;
  CHECK_CUDA(cudaMalloc((void **)&p, std::max<size_t>(n, 1) * sizeof(T)));
  if (n) CHECK_CUDA(cudaMemcpyAsync(p, h, n * sizeof(T), cudaMemcpyHostToDevice, g_stream));
  return p;
}

static void MakeDev(const PatchworkP1Desc &h, Dev &D)
{
  const int n = h.dim + 1;
  D.d          = h;
  D.coords     = Upload(h.coords, (size_t)h.dim * h.nvert);
  D.cells      = Upload(h.cells, (size_t)n * h.ncell);
  D.sigma      = h.sigma ? Upload(h.sigma, (size_t)h.ncell) : NULL;
  D.rowptr     = Upload(h.rowptr, (size_t)h.nvert + 1);
  D.col        = Upload(h.col, (size_t)h.nnz);
  D.patch_ptr  = Upload(h.patch_ptr, (size_t)h.npatch + 1);
  D.patch_cell = Upload(h.patch_cell, (size_t)h.npatch + 1);
  CHECK_CUDA(cudaMalloc((void **)&D.vals, std::max<long long>(h.nnz, 1) * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&D.work, PatchworkP1WorkBytes(&h)));
  D.d.coords     = D.coords;
  D.d.cells      = D.cells;
  D.d.sigma      = D.sigma;
  D.d.rowptr     = D.rowptr;
  D.d.col        = D.col;
  D.d.patch_ptr  = D.patch_ptr;
  D.d.patch_cell = D.patch_cell;
}

static void FreeDev(Dev &D)
{
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  cudaFree(D.coords);
  cudaFree(D.sigma);
  cudaFree(D.vals);
  cudaFree(D.cells);
  cudaFree(D.col);
  cudaFree(D.patch_ptr);
  cudaFree(D.rowptr);
  cudaFree(D.patch_cell);
  cudaFree(D.work);
}

/* Run the kernel with descriptor d (device pointers), vals filled with NaN first; returns the values */
static std::vector<double> RunGPU(Dev &D, const PatchworkP1Desc &d, PatchworkP1Errors *err)
{
  std::vector<double> v((size_t)d.nnz);
  CHECK_CUDA(cudaMemsetAsync(D.vals, 0xff, std::max<long long>(d.nnz, 1) * sizeof(double), g_stream));
  CheckRet(PatchworkP1AssembleCUDA(&d, D.vals, D.work, err, g_stream), "PatchworkP1AssembleCUDA");
  if (d.nnz) CHECK_CUDA(cudaMemcpyAsync(v.data(), D.vals, (size_t)d.nnz * sizeof(double), cudaMemcpyDeviceToHost, g_stream));
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  CHECK_CUDA(cudaGetLastError());
  return v;
}

static double MaxAbs(const std::vector<double> &v)
{
  double m = 0;
  for (double a : v) m = ErrMax(m, fabs(a));
  return m;
}

static double MaxDiff(const std::vector<double> &a, const std::vector<double> &b) /* NaN anywhere: NaN */
{
  double m = 0;
  for (size_t i = 0; i < a.size(); i++) m = ErrMax(m, fabs(a[i] - b[i]));
  return m;
}

/* One mesh: the reference once, then the GPU with every patching */
static void RunMesh(const Mesh &M, bool with_sigma, double lambda, const char *label)
{
  const int m   = MaxCellsPerVertex(M);
  Host      H;
  char      name[256];

  MakeHost(M, 48 * 1024, with_sigma, lambda, H);
  std::vector<double> ref((size_t)H.d.nnz);
  PatchworkP1Errors   rerr;
  PatchworkP1AssembleRef(&H.d, ref.data(), &rerr);
  const double amax = MaxAbs(ref), tol = DBL_EPSILON * amax * (4.0 * m * m + 16.0 * m * M.R);
  if (rerr.degenerate || rerr.missing) printf("FAIL %s: the reference counts %lld degenerate cells, %lld missing entries\n", label, rerr.degenerate, rerr.missing), g_fail++;

  struct Variant {
    const char *what;
    size_t      patch_bytes; /* layout */
    int         smem;        /* kernel */
    bool        one_patch;   /* every cell given to patch 0 */
  } variants[] = {
    {"48K patches", 48 * 1024, 48 * 1024, false},
    {"1K patches", 1024, 48 * 1024, false},
    {"patches beyond smem", 1 << 20, 48 * 1024, false},
    {"smem 0", 48 * 1024, 0, false},
    {"96K patches opt-in", 96 * 1024, 96 * 1024, false},
    {"cells all in patch 0", 48 * 1024, 48 * 1024, true},
  };
  for (const Variant &V : variants) {
    Host              HV;
    Dev               D;
    PatchworkP1Errors err = {-1, -1};

    MakeHost(M, V.patch_bytes, false, lambda, HV);
    { /* the same sigma per cell, in this layout's cell order */
      std::vector<double> by_old(M.ncell);
      for (long long c = 0; c < H.L.ncell; c++) by_old[H.L.cell_perm[c]] = H.sigma[c];
      for (long long c = 0; c < HV.L.ncell; c++) HV.sigma[c] = by_old[HV.L.cell_perm[c]];
    }
    HV.d.sigma      = with_sigma ? HV.sigma.data() : NULL;
    HV.d.smem_bytes = V.smem;
    std::vector<long long> all0(HV.d.npatch + 1, HV.d.ncell);
    if (V.one_patch) {
      all0[0]          = 0;
      HV.d.patch_cell  = all0.data();
    }
    /* the layout renumbers the vertices: compare in the old numbering, entry by (old row, old column) */
    std::vector<double> refV((size_t)HV.d.nnz);
    PatchworkP1AssembleRef(&HV.d, refV.data(), NULL);
    MakeDev(HV.d, D);
    std::vector<double> gpu = RunGPU(D, D.d, &err);
    const double        e   = MaxDiff(gpu, refV);

    snprintf(name, sizeof(name), "%s %s (%d patches, max %d rows, %lld cells)", label, V.what, HV.L.npatch, HV.L.max_patch_rows, V.one_patch ? (long long)HV.L.ncell : HV.L.max_patch_cells);
    Check(e <= tol && err.degenerate == 0 && err.missing == 0, name, e, tol);
    /* the reference in this layout is the reference in the first one, permuted (a check of the layouts) */
    if (&V == &variants[0]) {
      double           e0 = 0;
      std::vector<int> hinv(M.nvert);
      for (int r = 0; r < M.nvert; r++) hinv[H.L.perm[r]] = r;
      for (int r = 0; r < M.nvert; r++) {
        const int o = HV.L.perm[r], rh = hinv[o];
        for (long long z = HV.L.rowptr[r]; z < HV.L.rowptr[r + 1]; z++) {
          const int       oc  = HV.L.perm[HV.L.col[z]];
          const long long pos = PatchworkP1FindColumn(H.L.col, H.L.rowptr[rh], H.L.rowptr[rh + 1], hinv[oc]);
          e0                  = ErrMax(e0, pos < 0 ? INFINITY : fabs(refV[z] - ref[pos]));
        }
      }
      snprintf(name, sizeof(name), "%s layouts agree", label);
      Check(e0 <= tol, name, e0, tol);
    }
    if (lambda == 0 && &V == &variants[0]) {
      double worst = 0;
      for (int r = 0; r < M.nvert; r++) {
        double s = 0;
        for (long long z = HV.L.rowptr[r]; z < HV.L.rowptr[r + 1]; z++) s += gpu[z];
        worst = ErrMax(worst, fabs(s));
      }
      snprintf(name, sizeof(name), "%s rowsum", label);
      Check(worst <= 8 * tol, name, worst, 8 * tol);
    }
    FreeDev(D);
    PatchworkP1LayoutDestroy(&HV.L);
  }
  PatchworkP1LayoutDestroy(&H.L);
}

/* Degenerate cells and missing pattern entries are counted as the reference counts them */
static void TestCounts(void)
{
  Mesh              M;
  Host              H;
  Dev               D;
  PatchworkP1Errors rerr, gerr = {-1, -1};
  char              name[128];

  MakeMesh(3, 3, false, M);
  /* the second vertex of cell 0 onto its first: the cells with both are flat */
  for (int d = 0; d < 3; d++) M.x[(size_t)M.cells[1] * 3 + d] = M.x[(size_t)M.cells[0] * 3 + d];
  MakeHost(M, 2048, false, 1.0, H);
  /* the last column of one row replaced by a larger number: that coupling is missing from the pattern */
  std::vector<int> col(H.L.col, H.L.col + H.d.nnz);
  const int        row = M.nvert / 2;
  col[H.L.rowptr[row + 1] - 1] = M.nvert + 7;
  H.d.col = col.data();
  std::vector<double> ref((size_t)H.d.nnz);
  PatchworkP1AssembleRef(&H.d, ref.data(), &rerr);
  MakeDev(H.d, D);
  RunGPU(D, D.d, &gerr);
  snprintf(name, sizeof(name), "counts degenerate %lld/%lld missing %lld/%lld (gpu/ref)", gerr.degenerate, rerr.degenerate, gerr.missing, rerr.missing);
  Check(gerr.degenerate == rerr.degenerate && gerr.missing == rerr.missing && rerr.degenerate > 0 && rerr.missing > 0, name, 0, 1);
  FreeDev(D);
  PatchworkP1LayoutDestroy(&H.L);
}

/* Bad descriptors: cudaErrorInvalidValue; an empty mesh: success */
static void TestErrors(void)
{
  PatchworkP1Desc d;
  double         *vals;
  void           *work;
  int             optin, dev;

  CHECK_CUDA(cudaGetDevice(&dev));
  CHECK_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  CHECK_CUDA(cudaMalloc((void **)&vals, 64));
  CHECK_CUDA(cudaMalloc(&work, 64));
  memset(&d, 0, sizeof(d));
  d.dim = 3;
  ReportRet(PatchworkP1AssembleCUDA(&d, vals, work, NULL, g_stream), 0, "empty mesh");
  d.dim = 4;
  ReportRet(PatchworkP1AssembleCUDA(&d, vals, work, NULL, g_stream), (int)cudaErrorInvalidValue, "dim 4");
  d.dim        = 2;
  d.smem_bytes = optin + 8;
  ReportRet(PatchworkP1AssembleCUDA(&d, vals, work, NULL, g_stream), (int)cudaErrorInvalidValue, "smem above the opt-in limit");
  d.smem_bytes = 0;
  d.nvert      = 3;
  ReportRet(PatchworkP1AssembleCUDA(&d, vals, work, NULL, g_stream), (int)cudaErrorInvalidValue, "rows but no patch");
  ReportRet(PatchworkP1AssembleCUDA(NULL, vals, work, NULL, g_stream), (int)cudaErrorInvalidValue, "no descriptor");
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  cudaFree(vals);
  cudaFree(work);
}

/* Reference, patch kernel and all-global kernel on a larger mesh */
static void Timing(int dim, int n)
{
  Mesh M;
  Host H;
  Dev  D;
  char label[64];

  MakeMesh(dim, n, true, M);
  MakeHost(M, 48 * 1024, true, 1.0, H);
  std::vector<double> ref((size_t)H.d.nnz);
  auto                t0 = std::chrono::steady_clock::now();
  PatchworkP1AssembleRef(&H.d, ref.data(), NULL);
  const double tref = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MakeDev(H.d, D);
  cudaEvent_t e0, e1;
  float       tpatch = 0, tglobal = 0, ms;
  CHECK_CUDA(cudaEventCreate(&e0));
  CHECK_CUDA(cudaEventCreate(&e1));
  for (int variant = 0; variant < 2; variant++) {
    PatchworkP1Desc d = D.d;
    d.smem_bytes      = variant ? 0 : 48 * 1024;
    CheckRet(PatchworkP1AssembleCUDA(&d, D.vals, D.work, NULL, g_stream), "warm-up");
    CHECK_CUDA(cudaEventRecord(e0, g_stream));
    for (int r = 0; r < 5; r++) CheckRet(PatchworkP1AssembleCUDA(&d, D.vals, D.work, NULL, g_stream), "timing");
    CHECK_CUDA(cudaEventRecord(e1, g_stream));
    CHECK_CUDA(cudaEventSynchronize(e1));
    CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
    (variant ? tglobal : tpatch) = ms / 5;
  }
  std::vector<double> gpu((size_t)H.d.nnz);
  CHECK_CUDA(cudaMemcpy(gpu.data(), D.vals, gpu.size() * sizeof(double), cudaMemcpyDeviceToHost));
  snprintf(label, sizeof(label), "%dD n=%d timing run", dim, n);
  const double tol = DBL_EPSILON * MaxAbs(ref) * (4.0 * MaxCellsPerVertex(M) * MaxCellsPerVertex(M) + 16.0 * MaxCellsPerVertex(M) * M.R);
  Check(MaxDiff(gpu, ref) <= tol, label, MaxDiff(gpu, ref), tol);
  printf("# timing %dD: %d vertices, %d cells, %lld entries, %d patches: reference %.1f ms, GPU patch kernel %.3f ms, GPU global atomics only %.3f ms\n", dim, M.nvert, M.ncell, H.d.nnz, H.d.npatch, 1e3 * tref, tpatch, tglobal);
  CHECK_CUDA(cudaEventDestroy(e0));
  CHECK_CUDA(cudaEventDestroy(e1));
  FreeDev(D);
  PatchworkP1LayoutDestroy(&H.L);
}

int main(int argc, char **argv)
{
  bool      quick;
  const int start = GpuTestStart(argc, argv, &quick);

  if (start >= 0) return start;
  TestErrors();
  TestCounts();
  for (int dim = 3; dim >= 2; dim--) {
    const int sizes3[] = {2, 5, 14}, sizes2[] = {3, 17, 60};
    const int nsizes   = quick ? 2 : 3;
    for (int s = 0; s < nsizes; s++) {
      const int n = dim == 3 ? sizes3[s] : sizes2[s];
      for (int run = 0; run < 3; run++) {
        const bool   random_order = run != 0, with_sigma = run != 1;
        const double lambda       = run == 2 ? 0.0 : Rand01() * 2;
        Mesh         M;
        char         label[160];

        MakeMesh(dim, n, random_order, M);
        snprintf(label, sizeof(label), "%dD n=%-2d %s sigma=%s lambda=%.2f:", dim, n, random_order ? "random-split" : "kuhn", with_sigma ? "random" : "1", lambda);
        RunMesh(M, with_sigma, lambda, label);
      }
    }
  }
  if (!quick) {
    Timing(3, 64);
    Timing(2, 700);
  }
  CHECK_CUDA(cudaStreamDestroy(g_stream));
  CHECK_CUDA(cudaDeviceSynchronize());
  printf("# %d passed, %d failed; worst err/tol %.3f (%s)\n", g_pass, g_fail, g_worst, g_worst_name);
  return g_fail ? 1 : 0;
}
