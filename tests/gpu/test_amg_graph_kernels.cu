/* GPU-vs-CPU test of PCPATCHAMG's graph partitions (include/patchwork/amg_kernel.h), PETSc-free.

   Compares PatchworkGraph{KMIS,Partition,Induce,LevelOrder}CUDA (cuda/amg_graph.cu) with the CPU
   reference (src/core/amg_graph.c), which they must equal exactly: the same return code, the same
   counts, every output array equal entry by entry. Graphs: 3D 7- and 27-point grids from one vertex
   up to 64^3 (full run; and 128^3 27-point, 256^3 7-point for the timing), random graphs with long
   edges, repeated entries and self loops, graphs of several components with isolated vertices,
   rows stored at an offset (ptr[0] > 0), and weighted graphs (random weights 1..50, like induced
   graphs); and with vertex coordinates (geometry-informed partitions): grids with their points
   exact (many equal distances: the ties) or perturbed, random points in 1, 2 or 3 dimensions.
   For every graph, k = 1, 2, 3 and several seeds: the k-MIS, then for min_weight 1, 9, 100 the
   chain of the setup: Partition, Induce of the partition (with coordinates: the centroids, equal
   as doubles), Partition (k = 1) of that weighted graph into patches (with the centroids as its
   coordinates), the CPU Balance of the patches, LevelOrder of the aggregates and patches. Bad
   arguments (also coordinates with dim outside 1..3) must be refused with 1, like the CPU.
   The full run ends with a timing table (GPU ms from CUDA events after a warm-up run, CPU ms of
   the reference on one core) for the two large grids, without and with coordinates.
   Prints `ok ...` or `FAIL ...` per check and `# N passed, N failed` last; exits 0 when all pass,
   1 otherwise, 77 without a CUDA device.

   Usage: test_amg_graph_kernels [--quick]   (--quick: small graphs, for compute-sanitizer) */
#include <cuda_runtime.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>
#include <patchwork/amg_kernel.h>

#include "gputest.h"

/* ---------------------------------------------------------------------------------------------
   Host graphs and their device copies */

struct HostGraph {
  std::string         name;
  int                 n = 0, dim = 0;
  std::vector<int>    ptr, adj, weight; /* weight empty: NULL */
  std::vector<double> coord;            /* [n*dim], empty: NULL */
  PatchworkGraph      View() const { return {n, ptr.data(), adj.data(), weight.empty() ? nullptr : weight.data(), dim, coord.empty() ? nullptr : coord.data()}; }
};

struct DevGraph {
  int           *ptr = nullptr, *adj = nullptr, *weight = nullptr;
  double        *coord = nullptr;
  PatchworkGraph g     = {0, nullptr, nullptr, nullptr, 0, nullptr};
};

static int RandInt(int lo, int hi) /* uniform in [lo, hi] */
{
  return lo + (int)((Rand() + 1.0) * 0.5 * (hi - lo + 1)) % (hi - lo + 1);
}

static double Ms(std::chrono::steady_clock::time_point t0)
{
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}


template <typename T>
static std::vector<T> Download(const T *d, size_t n)
{
  std::vector<T> h(n);
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  if (n) CHECK_CUDA(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

static int *DevInts(size_t n)
{
  int *d;
  CHECK_CUDA(cudaMalloc((void **)&d, std::max<size_t>(n, 1) * sizeof(int)));
  return d;
}

static DevGraph ToDevice(const HostGraph &h)
{
  DevGraph d;

  d.ptr    = Upload(h.ptr);
  d.adj    = Upload(h.adj);
  d.weight = h.weight.empty() ? nullptr : Upload(h.weight);
  d.coord  = h.coord.empty() ? nullptr : Upload(h.coord);
  d.g      = {h.n, d.ptr, d.adj, d.weight, h.dim, d.coord};
  return d;
}

static void Free(DevGraph &d)
{
  CHECK_CUDA(cudaFree(d.ptr));
  CHECK_CUDA(cudaFree(d.adj));
  if (d.weight) CHECK_CUDA(cudaFree(d.weight));
  if (d.coord) CHECK_CUDA(cudaFree(d.coord));
  d = DevGraph();
}

/* CSR with both directions of every edge (a self loop once) */
static HostGraph FromEdges(const char *name, int n, const std::vector<std::pair<int, int>> &e)
{
  HostGraph        G;
  std::vector<int> cur;

  G.name = name;
  G.n    = n;
  G.ptr.assign(n + 1, 0);
  for (auto &x : e) {
    G.ptr[x.first + 1]++;
    if (x.first != x.second) G.ptr[x.second + 1]++;
  }
  for (int v = 0; v < n; v++) G.ptr[v + 1] += G.ptr[v];
  G.adj.resize(G.ptr[n]);
  cur.assign(G.ptr.begin(), G.ptr.end() - 1);
  for (auto &x : e) {
    G.adj[cur[x.first]++] = x.second;
    if (x.first != x.second) G.adj[cur[x.second]++] = x.first;
  }
  return G;
}

/* nx*ny*nz grid, x fastest; box: the 26 neighbours, else the 6 face neighbours; built as CSR directly */
static HostGraph Grid(int nx, int ny, int nz, bool box)
{
  HostGraph G;
  char      name[96];
  const int n = nx * ny * nz;

  snprintf(name, sizeof(name), "3D %s %dx%dx%d", box ? "27-point" : "7-point", nx, ny, nz);
  G.name = name;
  G.n    = n;
  G.ptr.resize((size_t)n + 1);
  G.adj.reserve((size_t)n * (box ? 26 : 6));
  G.ptr[0] = 0;
  for (int l = 0; l < nz; l++)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++) {
        for (int dl = -1; dl <= 1; dl++)
          for (int dj = -1; dj <= 1; dj++)
            for (int di = -1; di <= 1; di++) {
              const int a = i + di, b = j + dj, c = l + dl, m = abs(di) + abs(dj) + abs(dl);

              if (!m || (!box && m != 1) || a < 0 || a >= nx || b < 0 || b >= ny || c < 0 || c >= nz) continue;
              G.adj.push_back((c * ny + b) * nx + a);
            }
        G.ptr[(size_t)(l * ny + j) * nx + i + 1] = (int)G.adj.size();
      }
  return G;
}

/* Each vertex joined to a few within distance width, a fraction plong of them anywhere; some
   repeated edges and self loops */
static HostGraph RandomLong(int n, int width, int deg, double plong)
{
  std::vector<std::pair<int, int>> e;
  char                             name[96];

  for (int v = 0; v < n; v++) {
    for (int d = 0; d < deg; d++) {
      const int u = (Rand() + 1) * 0.5 < plong ? RandInt(0, n - 1) : std::min(n - 1, v + RandInt(1, width));

      if (u != v) e.push_back({v, u});
    }
    if (v % 13 == 0) e.push_back({v, v});
    if (v % 17 == 0 && !e.empty()) e.push_back(e[RandInt(0, (int)e.size() - 1)]);
  }
  snprintf(name, sizeof(name), "random n=%d width %d long %.2f", n, width, plong);
  return FromEdges(name, n, e);
}

/* Paths, small grids, triangles, single edges and isolated vertices, renumbered at random */
static HostGraph Components(int copies)
{
  std::vector<std::pair<int, int>> e, f;
  std::vector<int>                 perm;
  int                              n = 0;
  char                             name[96];

  for (int c = 0; c < copies; c++) {
    const int len = RandInt(2, 40), gx = RandInt(2, 9), gy = RandInt(2, 9);

    for (int v = 0; v + 1 < len; v++) e.push_back({n + v, n + v + 1});
    n += len;
    for (int j = 0; j < gy; j++)
      for (int i = 0; i < gx; i++) {
        if (i + 1 < gx) e.push_back({n + j * gx + i, n + j * gx + i + 1});
        if (j + 1 < gy) e.push_back({n + j * gx + i, n + (j + 1) * gx + i});
        if (i + 1 < gx && j + 1 < gy) e.push_back({n + j * gx + i, n + (j + 1) * gx + i + 1});
      }
    n += gx * gy;
    e.push_back({n, n + 1});
    e.push_back({n + 1, n + 2});
    e.push_back({n + 2, n});
    n += 3;
    e.push_back({n, n + 1});
    n += 2;
    n += RandInt(1, 4); /* isolated */
  }
  perm.resize(n);
  for (int v = 0; v < n; v++) perm[v] = v;
  for (int v = n - 1; v > 0; v--) std::swap(perm[v], perm[RandInt(0, v)]);
  for (auto &x : e) f.push_back({perm[x.first], perm[x.second]});
  snprintf(name, sizeof(name), "components x%d with isolated vertices", copies);
  return FromEdges(name, n, f);
}

static HostGraph Weighted(HostGraph G, int maxw)
{
  G.name += " weighted 1.." + std::to_string(maxw);
  G.weight.resize(G.n);
  for (int v = 0; v < G.n; v++) G.weight[v] = RandInt(1, maxw);
  return G;
}

/* Coordinates of an nx*ny*nz grid's vertices (x fastest): the first dim of (i, j, l), each moved
   by up to perturb at random (0: the exact lattice, where many distances tie) */
static HostGraph GridCoords(HostGraph G, int nx, int ny, int dim, double perturb)
{
  char buf[64];

  snprintf(buf, sizeof(buf), " coords dim %d perturbed %.2f", dim, perturb);
  G.name += buf;
  G.dim = dim;
  G.coord.resize((size_t)dim * G.n);
  for (int v = 0; v < G.n; v++) {
    const int ijl[3] = {v % nx, v / nx % ny, v / nx / ny};

    for (int d = 0; d < dim; d++) G.coord[(size_t)dim * v + d] = ijl[d] + perturb * Rand();
  }
  return G;
}

/* Random points in [-1,1)^dim: geometry that disagrees with the connectivity everywhere */
static HostGraph RandomCoords(HostGraph G, int dim)
{
  G.name += " random coords dim " + std::to_string(dim);
  G.dim = dim;
  G.coord.resize((size_t)dim * G.n);
  for (auto &x : G.coord) x = Rand();
  return G;
}

/* The same rows stored after 5 unused entries (ptr[0] = 5) */
static HostGraph Offset(HostGraph G)
{
  G.name += " rows at offset 5";
  G.adj.insert(G.adj.begin(), {-7, G.n + 3, 0, -1, 1});
  for (auto &p : G.ptr) p += 5;
  return G;
}

/* ---------------------------------------------------------------------------------------------
   Checks */

/* An entry as the messages print it: ints as they are, doubles to all their digits */
static std::string Show(int v) { return std::to_string(v); }
static std::string Show(double v)
{
  char buf[32];

  snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

/* "" when equal (doubles compared with ==: bit for bit but for the sign of zero), else where they
   first differ */
template <typename T>
static std::string Differ(const char *what, const std::vector<T> &ref, const std::vector<T> &gpu)
{
  char   buf[200];
  size_t nd = 0, first = 0;

  if (ref.size() != gpu.size()) {
    snprintf(buf, sizeof(buf), " %s: %zu entries, want %zu;", what, gpu.size(), ref.size());
    return buf;
  }
  for (size_t i = ref.size(); i-- > 0;)
    if (!(ref[i] == gpu[i])) {
      nd++;
      first = i;
    }
  if (!nd) return "";
  snprintf(buf, sizeof(buf), " %s differs at %zu entries (first [%zu]: %s, want %s);", what, nd, first, Show(gpu[first]).c_str(), Show(ref[first]).c_str());
  return buf;
}

struct Timing {
  double cpu = 0, gpu = 0;
};

/* GPU time of f() in ms, CUDA events around it on g_stream (f itself may synchronize) */
template <typename F>
static double GpuMs(F f)
{
  cudaEvent_t e0, e1;
  float       ms = 0;

  CHECK_CUDA(cudaEventCreate(&e0));
  CHECK_CUDA(cudaEventCreate(&e1));
  CHECK_CUDA(cudaEventRecord(e0, g_stream));
  CheckRet(f(), "timed call");
  CHECK_CUDA(cudaEventRecord(e1, g_stream));
  CHECK_CUDA(cudaEventSynchronize(e1));
  CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
  CHECK_CUDA(cudaEventDestroy(e0));
  CHECK_CUDA(cudaEventDestroy(e1));
  return ms;
}

static void TestKMIS(const HostGraph &H, const DevGraph &D, int k, unsigned seed, Timing *t)
{
  const PatchworkGraph g = H.View();
  std::vector<int>     ref(H.n);
  int                  cref = -1, cgpu = -2, rref, rgpu, *d = DevInts(H.n);
  auto                 t0 = std::chrono::steady_clock::now();

  rref = PatchworkGraphKMIS(&g, k, seed, ref.data(), &cref);
  if (t) t->cpu = Ms(t0);
  rgpu = PatchworkGraphKMISCUDA(&D.g, k, seed, d, &cgpu, g_stream);
  std::string diff = Differ("in_set", ref, Download(d, H.n));
  if (rref != rgpu || cref != cgpu) diff += " return " + std::to_string(rgpu) + "/" + std::to_string(rref) + ", count " + std::to_string(cgpu) + "/" + std::to_string(cref) + ";";
  Result(diff.empty(), "kmis      %s k=%d seed=%u: %d in the set%s", H.name.c_str(), k, seed, cref, diff.c_str());
  if (t) t->gpu = GpuMs([&] { return PatchworkGraphKMISCUDA(&D.g, k, seed, d, &cgpu, g_stream); });
  CHECK_CUDA(cudaFree(d));
}

/* The CPU partition in part, *np (return code 0 asserted by the caller's use) */
static int TestPartition(const HostGraph &H, const DevGraph &D, int k, unsigned seed, int minw, std::vector<int> &part, int *np, std::string &diff, Timing *t)
{
  const PatchworkGraph g = H.View();
  int                  ngpu = -2, rref, rgpu, *d = DevInts(H.n);
  auto                 t0 = std::chrono::steady_clock::now();

  part.assign(H.n, -3);
  *np  = -1;
  rref = PatchworkGraphPartition(&g, k, seed, minw, part.data(), np);
  if (t) t->cpu = Ms(t0);
  rgpu = PatchworkGraphPartitionCUDA(&D.g, k, seed, minw, d, &ngpu, g_stream);
  if (rref != rgpu) diff += " partition return " + std::to_string(rgpu) + ", want " + std::to_string(rref) + ";";
  else if (!rref) {
    if (ngpu != *np) diff += " nparts " + std::to_string(ngpu) + ", want " + std::to_string(*np) + ";";
    diff += Differ("part", part, Download(d, H.n));
  }
  if (t) t->gpu = GpuMs([&] { return PatchworkGraphPartitionCUDA(&D.g, k, seed, minw, d, &ngpu, g_stream); });
  CHECK_CUDA(cudaFree(d));
  return rref;
}

/* The CPU quotient graph as a HostGraph */
static HostGraph TestInduce(const HostGraph &H, const DevGraph &D, const std::vector<int> &part, int np, std::string &diff, Timing *t)
{
  const PatchworkGraph g = H.View();
  PatchworkGraph       c, cg;
  HostGraph            C;
  int                 *dpart = Upload(part), rref, rgpu;
  auto                 t0    = std::chrono::steady_clock::now();

  rref = PatchworkGraphInduce(&g, part.data(), np, &c);
  if (t) t->cpu = Ms(t0);
  rgpu = PatchworkGraphInduceCUDA(&D.g, dpart, np, &cg, g_stream);
  if (rref || rgpu) {
    diff += " induce return " + std::to_string(rgpu) + "/" + std::to_string(rref) + ";";
    CHECK_CUDA(cudaFree(dpart));
    return C;
  }
  C.name = "induced";
  C.n    = c.n;
  C.dim  = c.dim;
  C.ptr.assign(c.ptr, c.ptr + c.n + 1);
  C.adj.assign(c.adj, c.adj + c.ptr[c.n]);
  C.weight.assign(c.weight, c.weight + c.n);
  if (c.coord) C.coord.assign(c.coord, c.coord + (size_t)c.n * c.dim);
  if (!H.coord.empty() != !!c.coord || c.dim != (H.coord.empty() ? 0 : H.dim)) diff += " CPU induced coordinates wrong;";
  PatchworkGraphFree(&c);
  if (cg.n != C.n) diff += " induced n " + std::to_string(cg.n) + ", want " + std::to_string(C.n) + ";";
  else {
    std::vector<int> ptr = Download(cg.ptr, C.n + 1);

    diff += Differ("induced ptr", C.ptr, ptr);
    if (ptr[C.n] == C.ptr[C.n]) diff += Differ("induced adj", C.adj, Download(cg.adj, C.adj.size()));
    diff += Differ("induced weight", C.weight, Download(cg.weight, C.n));
    if (cg.dim != C.dim || !cg.coord != H.coord.empty()) diff += " induced dim " + std::to_string(cg.dim) + " (want " + std::to_string(C.dim) + ") or centroids present/absent wrongly;";
    else if (cg.coord) diff += Differ("induced centroids", C.coord, Download(cg.coord, C.coord.size()));
  }
  PatchworkGraphFreeCUDA(&cg);
  if (cg.n || cg.ptr || cg.adj || cg.weight || cg.dim || cg.coord) diff += " PatchworkGraphFreeCUDA left the struct set;";
  if (t) {
    t->gpu = GpuMs([&] { return PatchworkGraphInduceCUDA(&D.g, dpart, np, &cg, g_stream); });
    PatchworkGraphFreeCUDA(&cg);
  }
  CHECK_CUDA(cudaFree(dpart));
  return C;
}

static void TestLevelOrder(int n, const std::vector<int> &agg, int naggs, const std::vector<int> &patch, int npatch, std::string &diff, Timing *t)
{
  std::vector<int> order(n), pos(n), pp(npatch + 1);
  int             *dagg = Upload(agg), *dpatch = Upload(patch), *dorder = DevInts(n), *dpos = DevInts(n), *dpp = DevInts(npatch + 1), rref, rgpu;
  auto             t0 = std::chrono::steady_clock::now();

  rref = PatchworkGraphLevelOrder(n, agg.data(), naggs, patch.data(), npatch, order.data(), pos.data(), pp.data());
  if (t) t->cpu = Ms(t0);
  rgpu = PatchworkGraphLevelOrderCUDA(n, dagg, naggs, dpatch, npatch, dorder, dpos, dpp, g_stream);
  if (rref != rgpu) diff += " level order return " + std::to_string(rgpu) + ", want " + std::to_string(rref) + ";";
  else if (!rref) {
    diff += Differ("order", order, Download(dorder, n));
    diff += Differ("pos", pos, Download(dpos, n));
    diff += Differ("patch_ptr", pp, Download(dpp, npatch + 1));
  }
  if (t) t->gpu = GpuMs([&] { return PatchworkGraphLevelOrderCUDA(n, dagg, naggs, dpatch, npatch, dorder, dpos, dpp, g_stream); });
  CHECK_CUDA(cudaFree(dagg));
  CHECK_CUDA(cudaFree(dpatch));
  CHECK_CUDA(cudaFree(dorder));
  CHECK_CUDA(cudaFree(dpos));
  CHECK_CUDA(cudaFree(dpp));
}

/* The setup chain on one graph: aggregates, their graph, patches of it (weighted), balance (CPU),
   level order; one result line. t: [partition, induce, level order] timings, or NULL. */
static void TestChain(const HostGraph &H, const DevGraph &D, int k, unsigned seed, int minw, Timing *t)
{
  std::string      diff;
  std::vector<int> agg, patch;
  int              nagg = 0, npatch = 0, rref;
  HostGraph        C;
  char             info[160] = "";

  rref = TestPartition(H, D, k, seed, minw, agg, &nagg, diff, t ? &t[0] : nullptr);
  if (!rref && diff.empty()) {
    C = TestInduce(H, D, agg, nagg, diff, t ? &t[1] : nullptr);
    if (diff.empty()) {
      DevGraph             DC = ToDevice(C);
      const PatchworkGraph c  = C.View();
      const int            pmin = 8 * (H.weight.empty() ? 1 : 25);

      rref = TestPartition(C, DC, 1, seed + 1000, pmin, patch, &npatch, diff, nullptr);
      if (!rref && diff.empty()) {
        if (PatchworkGraphBalance(&c, npatch, 6 * pmin, 50, patch.data())) diff += " CPU balance failed;";
        else TestLevelOrder(H.n, agg, nagg, patch, npatch, diff, t ? &t[2] : nullptr);
      }
      Free(DC);
      snprintf(info, sizeof(info), ", induced graph %d adjacency entries, %d patches", C.n ? C.ptr[C.n] : 0, npatch);
    }
  }
  Result(diff.empty(), "partition %s k=%d seed=%u min=%d: return %d, %d parts%s%s", H.name.c_str(), k, seed, minw, rref, nagg, info, diff.c_str());
}

static void TestGraph(const HostGraph &H, const std::vector<int> &ks, const std::vector<unsigned> &seeds, const std::vector<int> &mins)
{
  DevGraph D = ToDevice(H);

  printf("# %s: %d vertices, %d adjacency entries%s\n", H.name.c_str(), H.n, H.n ? H.ptr[H.n] - H.ptr[0] : 0, H.coord.empty() ? "" : ", coordinates");
  for (int k : ks)
    for (unsigned seed : seeds) {
      TestKMIS(H, D, k, seed, nullptr);
      for (int m : mins) TestChain(H, D, k, seed, m, nullptr);
    }
  Free(D);
}

/* ---------------------------------------------------------------------------------------------
   Small cases and bad arguments */

static void TestSmall(bool quick)
{
  std::vector<std::pair<int, int>> e;
  HostGraph                        Gs[7];

  Gs[0] = FromEdges("empty graph", 0, e);
  Gs[1] = FromEdges("isolated x7", 7, e);
  Gs[5] = RandomCoords(Gs[1], 2);
  e     = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
  Gs[2] = FromEdges("K4", 4, e);
  Gs[6] = RandomCoords(Gs[2], 3);
  e.clear();
  for (int v = 0; v + 1 < 10; v++) e.push_back({v, v + 1});
  Gs[3] = FromEdges("path 10", 10, e);
  Gs[4] = RandomCoords(Gs[3], 1);
  for (auto &H : Gs) {
    if (quick) TestGraph(H, {1, 3}, {5}, {1, 100});
    else TestGraph(H, {1, 2, 3}, {0, 5}, {1, 9, 100});
  }
  /* empty level order */
  {
    std::string diff;

    TestLevelOrder(0, {}, 0, {}, 0, diff, nullptr);
    TestLevelOrder(0, {}, 3, {0, 1, 1}, 2, diff, nullptr);
    Result(diff.empty(), "level order without vertices%s", diff.c_str());
  }
  /* induce without vertices but with coordinates (a dummy point): every part empty, centroids 0 */
  {
    HostGraph   E = FromEdges("empty graph", 0, {});
    std::string diff;

    E.dim   = 2;
    E.coord = {0.5};
    DevGraph D = ToDevice(E);
    TestInduce(E, D, {}, 3, diff, nullptr);
    Result(diff.empty(), "induce without vertices into 3 parts, with coordinates: centroids 0%s", diff.c_str());
    Free(D);
  }
}

static void TestBadArguments(void)
{
  /* the 3-vertex path 0-1-2 and broken variants */
  const std::vector<int> ptr = {0, 1, 3, 4}, adj = {1, 0, 2, 1}, bad_adj = {1, 0, 3, 1}, neg_adj = {1, -1, 2, 1}, bad_ptr = {0, 3, 1, 4}, neg_ptr = {-1, 1, 3, 4};
  const std::vector<int> w_neg = {1, -1, 1}, w_big = {INT_MAX / 2, INT_MAX / 2, 2}, part = {0, 0, 1}, bad_part = {0, 2, 1}, neg_part = {0, -1, 1};
  int *dptr = Upload(ptr), *dadj = Upload(adj), *dbad_adj = Upload(bad_adj), *dneg_adj = Upload(neg_adj), *dbad_ptr = Upload(bad_ptr), *dneg_ptr = Upload(neg_ptr);
  int *dw_neg = Upload(w_neg), *dw_big = Upload(w_big), *dpart = Upload(part), *dbad_part = Upload(bad_part), *dneg_part = Upload(neg_part), *out = DevInts(12);
  int  count, np;
  const PatchworkGraph g = {3, dptr, dadj, nullptr, 0, nullptr}, gb = {3, dptr, dbad_adj, nullptr, 0, nullptr}, gneg = {3, dptr, dneg_adj, nullptr, 0, nullptr}, gp = {3, dbad_ptr, dadj, nullptr, 0, nullptr},
                       gp0 = {3, dneg_ptr, dadj, nullptr, 0, nullptr}, gw = {3, dptr, dadj, dw_neg, 0, nullptr}, gbig = {3, dptr, dadj, dw_big, 0, nullptr}, gn = {-1, dptr, dadj, nullptr, 0, nullptr},
                       gnull = {3, nullptr, dadj, nullptr, 0, nullptr}, gnoadj = {3, dptr, nullptr, nullptr, 0, nullptr};
  const PatchworkGraph *bad[] = {nullptr, &gb, &gneg, &gp, &gp0, &gw, &gbig, &gn, &gnull, &gnoadj};
  const char *bad_name[] = {"NULL graph", "neighbour out of range", "negative neighbour", "decreasing ptr", "negative ptr[0]", "negative weight", "total weight >= INT_MAX", "negative n", "NULL ptr", "NULL adj with entries"};
  PatchworkGraph c;
  char           name[128];

  /* the CPU agrees that these are bad (host copies of the same graphs) */
  {
    const PatchworkGraph hb = {3, ptr.data(), bad_adj.data(), nullptr, 0, nullptr}, hw = {3, ptr.data(), adj.data(), w_big.data(), 0, nullptr}, hp = {3, bad_ptr.data(), adj.data(), nullptr, 0, nullptr};
    int                  h[3];

    Result(PatchworkGraphKMIS(&hb, 1, 0, h, &count) == 1 && PatchworkGraphKMIS(&hw, 1, 0, h, &count) == 1 && PatchworkGraphKMIS(&hp, 1, 0, h, &count) == 1, "errors CPU reference refuses the broken graphs too");
  }
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    snprintf(name, sizeof(name), "KMIS %s", bad_name[i]);
    ReportRet(PatchworkGraphKMISCUDA(bad[i], 1, 0, out, &count, g_stream), 1, name);
    snprintf(name, sizeof(name), "Partition %s", bad_name[i]);
    ReportRet(PatchworkGraphPartitionCUDA(bad[i], 2, 0, 1, out, &np, g_stream), 1, name);
    snprintf(name, sizeof(name), "Induce %s", bad_name[i]);
    c = {5, dptr, dadj, nullptr, 2, nullptr};
    ReportRet(PatchworkGraphInduceCUDA(bad[i], dpart, 2, &c, g_stream), 1, name);
    Result(!c.n && !c.ptr && !c.adj && !c.weight && !c.dim && !c.coord, "errors Induce %s leaves the output zeroed", bad_name[i]);
  }
  /* coordinates need dim 1..3 (Partition and Induce, also without vertices); the CPU agrees */
  {
    const std::vector<double> x(9, 0.5);
    double                   *dx = Upload(x);

    for (int dim : {-1, 0, 4}) {
      const PatchworkGraph gc = {3, dptr, dadj, nullptr, dim, dx}, gc0 = {0, dptr, dadj, nullptr, dim, dx}, hc = {3, ptr.data(), adj.data(), nullptr, dim, x.data()};
      int                  h[3];
      PatchworkGraph       ch;

      snprintf(name, sizeof(name), "Partition coordinates with dim %d", dim);
      ReportRet(PatchworkGraphPartitionCUDA(&gc, 2, 0, 1, out, &np, g_stream), 1, name);
      snprintf(name, sizeof(name), "Partition no vertices, coordinates with dim %d", dim);
      ReportRet(PatchworkGraphPartitionCUDA(&gc0, 2, 0, 1, out, &np, g_stream), 1, name);
      snprintf(name, sizeof(name), "Induce coordinates with dim %d", dim);
      c = {5, dptr, dadj, nullptr, 2, dx};
      ReportRet(PatchworkGraphInduceCUDA(&gc, dpart, 2, &c, g_stream), 1, name);
      Result(!c.n && !c.ptr && !c.adj && !c.weight && !c.dim && !c.coord, "errors Induce coordinates with dim %d leaves the output zeroed", dim);
      snprintf(name, sizeof(name), "Induce no vertices, coordinates with dim %d", dim);
      ReportRet(PatchworkGraphInduceCUDA(&gc0, dpart, 2, &c, g_stream), 1, name);
      Result(PatchworkGraphPartition(&hc, 2, 0, 1, h, &np) == 1 && PatchworkGraphInduce(&hc, part.data(), 2, &ch) == 1, "errors CPU reference refuses coordinates with dim %d too", dim);
    }
    CHECK_CUDA(cudaFree(dx));
  }
  ReportRet(PatchworkGraphKMISCUDA(&g, 0, 0, out, &count, g_stream), 1, "KMIS k=0");
  ReportRet(PatchworkGraphKMISCUDA(&g, 1, 0, nullptr, &count, g_stream), 1, "KMIS NULL in_set");
  ReportRet(PatchworkGraphKMISCUDA(&g, 1, 0, out, nullptr, g_stream), 1, "KMIS NULL count");
  ReportRet(PatchworkGraphPartitionCUDA(&g, 0, 0, 1, out, &np, g_stream), 1, "Partition k=0");
  ReportRet(PatchworkGraphPartitionCUDA(&g, 1, 0, 1, nullptr, &np, g_stream), 1, "Partition NULL part");
  ReportRet(PatchworkGraphPartitionCUDA(&g, 1, 0, 1, out, nullptr, g_stream), 1, "Partition NULL nparts");
  ReportRet(PatchworkGraphInduceCUDA(&g, dpart, 2, nullptr, g_stream), 1, "Induce NULL output");
  ReportRet(PatchworkGraphInduceCUDA(&g, dbad_part, 2, &c, g_stream), 1, "Induce part out of range");
  ReportRet(PatchworkGraphInduceCUDA(&g, dneg_part, 2, &c, g_stream), 1, "Induce negative part");
  ReportRet(PatchworkGraphInduceCUDA(&g, dpart, 0, &c, g_stream), 1, "Induce nparts 0 with vertices");
  ReportRet(PatchworkGraphInduceCUDA(&g, dpart, -1, &c, g_stream), 1, "Induce negative nparts");
  ReportRet(PatchworkGraphInduceCUDA(&g, nullptr, 2, &c, g_stream), 1, "Induce NULL part");
  /* level order: agg = part (2 aggregates), patch = {0, 1} of 2 patches */
  ReportRet(PatchworkGraphLevelOrderCUDA(-1, dpart, 2, dpart, 2, out, out + 3, out + 6, g_stream), 1, "LevelOrder negative n");
  ReportRet(PatchworkGraphLevelOrderCUDA(3, dpart, -1, dpart, 2, out, out + 3, out + 6, g_stream), 1, "LevelOrder negative naggs");
  ReportRet(PatchworkGraphLevelOrderCUDA(3, dpart, 2, dpart + 1, -1, out, out + 3, out + 6, g_stream), 1, "LevelOrder negative npatch");
  ReportRet(PatchworkGraphLevelOrderCUDA(3, dpart, 2, dpart + 1, 2, out, out + 3, nullptr, g_stream), 1, "LevelOrder NULL patch_ptr");
  ReportRet(PatchworkGraphLevelOrderCUDA(3, nullptr, 2, dpart + 1, 2, out, out + 3, out + 6, g_stream), 1, "LevelOrder NULL agg");
  ReportRet(PatchworkGraphLevelOrderCUDA(3, dpart, 2, nullptr, 2, out, out + 3, out + 6, g_stream), 1, "LevelOrder NULL patch");
  ReportRet(PatchworkGraphLevelOrderCUDA(3, dpart, 2, dpart + 1, 2, nullptr, out + 3, out + 6, g_stream), 1, "LevelOrder NULL order");
  ReportRet(PatchworkGraphLevelOrderCUDA(3, dpart, 2, dpart + 1, 2, out, nullptr, out + 6, g_stream), 1, "LevelOrder NULL pos");
  ReportRet(PatchworkGraphLevelOrderCUDA(3, dbad_part, 2, dpart + 1, 2, out, out + 3, out + 6, g_stream), 1, "LevelOrder aggregate out of range");
  ReportRet(PatchworkGraphLevelOrderCUDA(3, dneg_part, 2, dpart + 1, 2, out, out + 3, out + 6, g_stream), 1, "LevelOrder negative aggregate");
  ReportRet(PatchworkGraphLevelOrderCUDA(3, dpart, 2, dbad_part + 1, 2, out, out + 3, out + 6, g_stream), 1, "LevelOrder patch out of range");
  ReportRet(PatchworkGraphLevelOrderCUDA(3, dpart, 2, dpart + 1, 0, out, out + 3, out + 6, g_stream), 1, "LevelOrder npatch 0 with aggregates");
  ReportRet(PatchworkGraphLevelOrderCUDA(3, dpart, 2, dpart + 1, 2, out, out + 3, out + 6, g_stream), 0, "LevelOrder good arguments accepted");
  PatchworkGraphFreeCUDA(nullptr);
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  for (int *p : {dptr, dadj, dbad_adj, dneg_adj, dbad_ptr, dneg_ptr, dw_neg, dw_big, dpart, dbad_part, dneg_part, out}) CHECK_CUDA(cudaFree(p));
}

/* ---------------------------------------------------------------------------------------------
   Timing on the large grids (also checked for equality) */

/* rows: KMIS, Partition, Induce, LevelOrder, then Partition and Induce with the grid's points
   (perturbed) as coordinates */
static void TimeGraph(HostGraph H, int nx, int ny, double rows[6][2])
{
  DevGraph D = ToDevice(H);
  Timing   tk, tc[3];

  printf("# %s: %d vertices, %d adjacency entries (timed)\n", H.name.c_str(), H.n, H.ptr[H.n]);
  TestKMIS(H, D, 2, 1, &tk);
  TestChain(H, D, 2, 1, 9, tc);
  rows[0][0] = tk.gpu;
  rows[0][1] = tk.cpu;
  for (int i = 0; i < 3; i++) {
    rows[i + 1][0] = tc[i].gpu;
    rows[i + 1][1] = tc[i].cpu;
  }
  Free(D);
  H = GridCoords(std::move(H), nx, ny, 3, 0.3);
  D = ToDevice(H);
  printf("# %s (timed)\n", H.name.c_str());
  TestChain(H, D, 2, 1, 9, tc);
  for (int i = 0; i < 2; i++) {
    rows[i + 4][0] = tc[i].gpu;
    rows[i + 4][1] = tc[i].cpu;
  }
  Free(D);
}

int main(int argc, char **argv)
{
  bool quick;
  int  rc = GpuTestStart(argc, argv, &quick);

  (void)Report; /* gputest.h's tolerance report: every check here is exact */
  if (rc >= 0) return rc;
  TestBadArguments();
  TestSmall(quick);
  if (quick) {
    TestGraph(Grid(1, 1, 1, false), {1, 2}, {3}, {1, 9});
    TestGraph(Grid(6, 5, 4, false), {1, 2, 3}, {1, 7}, {1, 9, 100});
    TestGraph(Grid(5, 4, 4, true), {1, 2, 3}, {1}, {1, 9, 100});
    TestGraph(RandomLong(600, 5, 3, 0.05), {1, 2}, {1, 7}, {9, 100});
    TestGraph(Components(12), {1, 2}, {2}, {1, 9, 100});
    TestGraph(Weighted(Grid(7, 6, 5, true), 50), {1, 2}, {4}, {1, 100});
    TestGraph(Offset(Weighted(RandomLong(300, 4, 3, 0.1), 50)), {2}, {9}, {9});
    /* with coordinates */
    TestGraph(GridCoords(Grid(6, 5, 4, false), 6, 5, 3, 0.3), {1, 2}, {1, 7}, {1, 9, 100});
    TestGraph(GridCoords(Grid(5, 4, 4, true), 5, 4, 3, 0), {1, 2}, {1}, {1, 9});
    TestGraph(GridCoords(Grid(9, 8, 1, true), 9, 8, 2, 0.2), {2}, {3}, {9});
    TestGraph(RandomCoords(RandomLong(600, 5, 3, 0.05), 2), {1, 2}, {1}, {9, 100});
    TestGraph(RandomCoords(Components(12), 1), {1, 2}, {2}, {1, 9});
    TestGraph(Offset(Weighted(GridCoords(Grid(7, 6, 5, true), 7, 6, 3, 0.4), 50)), {2}, {4}, {9});
  } else {
    const std::vector<int>      all_k = {1, 2, 3}, all_min = {1, 9, 100};
    const std::vector<unsigned> seeds = {1, 7, 2024}, two_seeds = {1, 7};

    TestGraph(Grid(1, 1, 1, false), all_k, seeds, all_min);
    TestGraph(Grid(2, 1, 1, true), all_k, seeds, all_min);
    TestGraph(Grid(3, 2, 2, true), all_k, seeds, all_min);
    TestGraph(Grid(8, 8, 8, false), all_k, seeds, all_min);
    TestGraph(Grid(7, 6, 5, true), all_k, seeds, all_min);
    TestGraph(Grid(24, 24, 24, false), all_k, seeds, all_min);
    TestGraph(Grid(20, 21, 22, true), all_k, seeds, all_min);
    TestGraph(Grid(64, 64, 64, false), all_k, two_seeds, all_min);
    TestGraph(Grid(48, 48, 48, true), all_k, two_seeds, all_min);
    TestGraph(RandomLong(5000, 5, 3, 0.05), all_k, seeds, all_min);
    TestGraph(RandomLong(200000, 8, 4, 0.02), all_k, two_seeds, all_min);
    TestGraph(Components(200), all_k, seeds, all_min);
    TestGraph(Weighted(Grid(30, 30, 30, true), 50), all_k, seeds, all_min);
    TestGraph(Weighted(RandomLong(20000, 6, 3, 0.05), 50), all_k, seeds, all_min);
    TestGraph(Weighted(Components(100), 50), all_k, seeds, all_min);
    TestGraph(Offset(Weighted(Grid(12, 11, 10, true), 50)), all_k, two_seeds, all_min);
    /* with coordinates: exact lattices (ties), perturbed grids, random points in 1, 2, 3 dimensions */
    TestGraph(GridCoords(Grid(8, 8, 8, false), 8, 8, 3, 0.3), all_k, seeds, all_min);
    TestGraph(GridCoords(Grid(7, 6, 5, true), 7, 6, 3, 0), all_k, seeds, all_min);
    TestGraph(GridCoords(Grid(24, 24, 24, false), 24, 24, 3, 0), all_k, seeds, all_min);
    TestGraph(GridCoords(Grid(20, 21, 22, true), 20, 21, 3, 0.25), all_k, seeds, all_min);
    TestGraph(GridCoords(Grid(64, 64, 64, false), 64, 64, 3, 0.3), all_k, two_seeds, all_min);
    TestGraph(GridCoords(Grid(48, 48, 48, true), 48, 48, 3, 0.45), all_k, two_seeds, all_min);
    TestGraph(GridCoords(Grid(120, 110, 1, true), 120, 110, 2, 0.3), all_k, two_seeds, all_min);
    TestGraph(RandomCoords(RandomLong(5000, 5, 3, 0.05), 3), all_k, seeds, all_min);
    TestGraph(RandomCoords(RandomLong(200000, 8, 4, 0.02), 2), all_k, two_seeds, all_min);
    TestGraph(RandomCoords(Components(200), 1), all_k, seeds, all_min);
    TestGraph(Weighted(GridCoords(Grid(30, 30, 30, true), 30, 30, 3, 0.3), 50), all_k, seeds, all_min);
    TestGraph(Offset(Weighted(GridCoords(Grid(12, 11, 10, true), 12, 11, 3, 0.2), 50)), all_k, two_seeds, all_min);
    {
      const char *names[2] = {"27-point 128^3", "7-point 256^3"};
      const char *steps[6] = {"KMIS k=2", "Partition k=2 min 9", "Induce", "LevelOrder", "Partition, coordinates", "Induce, centroids"};
      double      rows[2][6][2];

      TimeGraph(Grid(128, 128, 128, true), 128, 128, rows[0]);
      TimeGraph(Grid(256, 256, 256, false), 256, 256, rows[1]);
      printf("# timing (ms; GPU: CUDA events after a warm-up call, CPU: the reference, one core)\n");
      printf("# %-22s %-16s %10s %10s %8s\n", "step", "graph", "GPU ms", "CPU ms", "speedup");
      for (int s = 0; s < 6; s++)
        for (int gi = 0; gi < 2; gi++) printf("# %-22s %-16s %10.2f %10.1f %7.1fx\n", steps[s], names[gi], rows[gi][s][0], rows[gi][s][1], rows[gi][s][1] / std::max(rows[gi][s][0], 1e-3));
    }
  }
  CHECK_CUDA(cudaStreamDestroy(g_stream));
  CHECK_CUDA(cudaDeviceSynchronize());
  /* one line, last: the scripts take it as the summary */
  printf("# %d passed, %d failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
