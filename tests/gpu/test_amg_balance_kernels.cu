/* GPU-vs-CPU test of the exchange balancing of patches (include/patchwork/amg_kernel.h), PETSc-free.

   Compares PatchworkGraphBalanceCUDA (cuda/amg_balance.cu) with the CPU reference
   PatchworkGraphBalance (src/core/amg_graph.c): the part arrays must be equal, entry by entry.
   Inputs are built as in production: a fine graph (3D 7- and 27-point grids, random local graphs
   with duplicate entries and self loops) is aggregated with PatchworkGraphPartition(k = 2,
   min_weight 9), the aggregates' graph is induced (weights = aggregate sizes) and partitioned with
   PatchworkGraphPartition(k = 1, min_weight = max_weight / 4); both balance that partition with
   max_weight 50, 100, 400, 1000 and max_rounds 50 (and 0, 1, 3 at 400). Further cases: unit weights
   (weight = NULL) on fine graphs, zero weights, rows longer than the kernel's shared buffer, one
   part, parts of one vertex and empty parts, and hand-made graphs where the local connectivity
   test decides: rings and paths with a pendant from a light part, a hub whose region holds exactly
   1024 and 1025 vertices (the test's cap), a move dropped because its only anchor leaves, several
   parts offering to one. Those also check the expected outcome, not only CPU == GPU. Bad arguments
   must be refused with 1 by both.
   The full run also times the balance of the induced graph of a 27-point 128^3 and a 7-point 256^3
   grid (max_weight 400, max_rounds 50): GPU by cudaEvents after a warm-up, CPU by the wall clock.
   Prints one line per check, `ok ...` or `FAIL ...`, and exits 0 when all pass, 1 otherwise, 77
   without a CUDA device.

   Usage: test_amg_balance_kernels [--quick]   (--quick: small problems, for compute-sanitizer) */
#include <cuda_runtime.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <algorithm>
#include <vector>
#include <patchwork/amg_kernel.h>

#include "gputest.h"


static double Now(void)
{
  struct timespec t;

  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int RandInt(int lo, int hi) /* uniform in [lo, hi] */
{
  return lo + (int)((Rand() + 1.0) * 0.5 * (hi - lo + 1)) % (hi - lo + 1);
}

/* A graph on the host, with its copy on the device */
struct HGraph {
  int              n = 0;
  std::vector<int> ptr, adj, weight; /* weight empty: NULL */
  int             *d_ptr = NULL, *d_adj = NULL, *d_weight = NULL;

  PatchworkGraph Host() const
  {
    PatchworkGraph g = {n, ptr.data(), adj.data(), weight.empty() ? NULL : weight.data(), 0, NULL};
    return g;
  }
  PatchworkGraph Dev() const
  {
    PatchworkGraph g = {n, d_ptr, d_adj, weight.empty() ? NULL : d_weight, 0, NULL};
    return g;
  }
};


static void ToDevice(HGraph &G)
{
  G.d_ptr    = Upload(G.ptr);
  G.d_adj    = Upload(G.adj);
  G.d_weight = G.weight.empty() ? NULL : Upload(G.weight);
}

static void FreeDevice(HGraph &G)
{
  CHECK_CUDA(cudaFree(G.d_ptr));
  CHECK_CUDA(cudaFree(G.d_adj));
  if (G.d_weight) CHECK_CUDA(cudaFree(G.d_weight));
  G.d_ptr = G.d_adj = G.d_weight = NULL;
}

/* CSR from an edge list, both directions of every edge, rows in the order the edges came */
static HGraph FromEdges(int n, const std::vector<std::pair<int, int>> &edges)
{
  HGraph G;

  G.n = n;
  G.ptr.assign(n + 1, 0);
  for (const auto &e : edges) {
    G.ptr[e.first + 1]++;
    if (e.second != e.first) G.ptr[e.second + 1]++;
  }
  for (int v = 0; v < n; v++) G.ptr[v + 1] += G.ptr[v];
  G.adj.resize(G.ptr[n]);
  std::vector<int> fill(G.ptr.begin(), G.ptr.end() - 1);
  for (const auto &e : edges) {
    G.adj[fill[e.first]++] = e.second;
    if (e.second != e.first) G.adj[fill[e.second]++] = e.first;
  }
  return G;
}

static HGraph Grid(int nx, int ny, int nz, bool p27)
{
  HGraph    G;
  const int n = nx * ny * nz;

  G.n = n;
  G.ptr.reserve(n + 1);
  G.adj.reserve((size_t)n * (p27 ? 26 : 6));
  G.ptr.push_back(0);
  for (int z = 0; z < nz; z++)
    for (int y = 0; y < ny; y++)
      for (int x = 0; x < nx; x++) {
        for (int dz = -1; dz <= 1; dz++)
          for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
              if (!dx && !dy && !dz) continue;
              if (!p27 && abs(dx) + abs(dy) + abs(dz) != 1) continue;
              if (x + dx < 0 || x + dx >= nx || y + dy < 0 || y + dy >= ny || z + dz < 0 || z + dz >= nz) continue;
              G.adj.push_back(((z + dz) * ny + y + dy) * nx + x + dx);
            }
        G.ptr.push_back((int)G.adj.size());
      }
  return G;
}

/* Random local graph: deg edges a vertex to within width, some long, some repeated, some loops */
static HGraph RandomLocal(int n, int deg, int width)
{
  std::vector<std::pair<int, int>> e;

  for (int i = 0; i < n; i++)
    for (int q = 0; q < deg; q++) {
      const double r = Rand();
      int          j = r > 0.9 ? RandInt(0, n - 1) : std::min(n - 1, std::max(0, i + RandInt(-width, width)));

      e.push_back({i, j});
      if (r < -0.95) e.push_back({i, j}); /* a repeated entry */
    }
  return FromEdges(n, e);
}

static int MaxPartWeight(const HGraph &G, const std::vector<int> &part, int nparts)
{
  std::vector<long long> wt(nparts, 0);
  long long              m = 0;

  for (int v = 0; v < G.n; v++) wt[part[v]] += G.weight.empty() ? 1 : G.weight[v];
  for (int p = 0; p < nparts; p++) m = std::max(m, wt[p]);
  return (int)m;
}

/* Balance part0 on the CPU and the GPU, compare; returns the balanced part (CPU's) in *out */
static void Compare(const char *name, HGraph &G, int nparts, const std::vector<int> &part0, int max_weight, int max_rounds, std::vector<int> *out = NULL, double *cpu_ms = NULL, double *gpu_ms = NULL)
{
  const PatchworkGraph hg = G.Host(), dg = G.Dev();
  std::vector<int>     cpu(part0), gpu(G.n, -2);
  int                 *d_part = Upload(part0), *d_part0 = NULL;
  double               t0 = Now();
  const int            rc = PatchworkGraphBalance(&hg, nparts, max_weight, max_rounds, cpu.data());
  const double         tc = 1e3 * (Now() - t0);
  int                  rg, diff = 0, moved = 0, first = -1;
  double               tg;

  t0 = Now();
  rg = PatchworkGraphBalanceCUDA(&dg, nparts, max_weight, max_rounds, d_part, g_stream);
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  tg = 1e3 * (Now() - t0);
  if (G.n) CHECK_CUDA(cudaMemcpy(gpu.data(), d_part, (size_t)G.n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int v = 0; v < G.n; v++) {
    if (cpu[v] != gpu[v] && !diff++) first = v;
    moved += cpu[v] != part0[v];
  }
  if (gpu_ms) { /* timed run from the same input, after the one above as warm-up */
    cudaEvent_t e0, e1;
    float       ms;

    d_part0 = Upload(part0);
    CHECK_CUDA(cudaEventCreate(&e0));
    CHECK_CUDA(cudaEventCreate(&e1));
    CHECK_CUDA(cudaMemcpyAsync(d_part, d_part0, (size_t)G.n * sizeof(int), cudaMemcpyDeviceToDevice, g_stream));
    CHECK_CUDA(cudaEventRecord(e0, g_stream));
    CheckRet(PatchworkGraphBalanceCUDA(&dg, nparts, max_weight, max_rounds, d_part, g_stream), "timed balance");
    CHECK_CUDA(cudaEventRecord(e1, g_stream));
    CHECK_CUDA(cudaEventSynchronize(e1));
    CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
    *gpu_ms = ms;
    *cpu_ms = tc;
    CHECK_CUDA(cudaMemcpy(gpu.data(), d_part, (size_t)G.n * sizeof(int), cudaMemcpyDeviceToHost));
    for (int v = 0; v < G.n; v++) diff += cpu[v] != gpu[v];
    CHECK_CUDA(cudaEventDestroy(e0));
    CHECK_CUDA(cudaEventDestroy(e1));
    CHECK_CUDA(cudaFree(d_part0));
  }
  Result(!rc && !rg && !diff, "%s n=%d nparts=%d max_weight=%d rounds=%d: ret %d/%d, %d moved, max part %d -> %d, %d differ (first %d); cpu %.1f ms, gpu %.1f ms", name, G.n, nparts, max_weight, max_rounds, rc,
         rg, moved, MaxPartWeight(G, part0, nparts), MaxPartWeight(G, cpu, nparts), diff, first, tc, tg);
  CHECK_CUDA(cudaFree(d_part));
  if (out) *out = cpu;
}

/* The production pipeline on a fine graph: aggregates, their graph, patches, balance */
static void Pipeline(const char *name, HGraph &F, bool quick, double *cpu_ms = NULL, double *gpu_ms = NULL)
{
  const PatchworkGraph fg = F.Host();
  std::vector<int>     agg(F.n);
  int                  naggs;
  PatchworkGraph       c;
  HGraph               A;
  char                 label[160];
  const int            mws[] = {50, 100, 400, 1000};

  CheckRet(PatchworkGraphPartition(&fg, 2, 7u, 9, agg.data(), &naggs), "aggregation");
  CheckRet(PatchworkGraphInduce(&fg, agg.data(), naggs, &c), "induce");
  A.n = c.n;
  A.ptr.assign(c.ptr, c.ptr + c.n + 1);
  A.adj.assign(c.adj, c.adj + c.ptr[c.n]);
  A.weight.assign(c.weight, c.weight + c.n);
  PatchworkGraphFree(&c);
  ToDevice(A);
  printf("# %s: %d vertices, %d aggregates, %d entries in their graph\n", name, F.n, A.n, A.ptr[A.n]);
  for (int mw : mws) {
    const PatchworkGraph ag = A.Host();
    std::vector<int>     part(A.n);
    int                  np;

    if (gpu_ms && mw != 400) continue;
    CheckRet(PatchworkGraphPartition(&ag, 1, 3u, mw / 4, part.data(), &np), "patches");
    snprintf(label, sizeof(label), "%s induced", name);
    if (gpu_ms) {
      Compare(label, A, np, part, mw, 50, NULL, cpu_ms, gpu_ms);
      continue;
    }
    Compare(label, A, np, part, mw, 50);
    if (mw == 400)
      for (int r : {0, 1, 3}) {
        if (quick && r == 3) continue;
        Compare(label, A, np, part, mw, r);
      }
  }
  FreeDevice(A);
}

/* Unit weights (weight = NULL) on the fine graph itself, patches of k = 1 */
static void FineUnit(const char *name, HGraph &F, int min_weight, int max_weight)
{
  const PatchworkGraph fg = F.Host();
  std::vector<int>     part(F.n);
  int                  np;
  char                 label[160];

  ToDevice(F);
  CheckRet(PatchworkGraphPartition(&fg, 1, 5u, min_weight, part.data(), &np), "fine patches");
  snprintf(label, sizeof(label), "%s unit weights", name);
  Compare(label, F, np, part, max_weight, 50);
  Compare(label, F, np, part, max_weight, 2);
  FreeDevice(F);
}

/* Random weights 0..wmax (zero weights never move) and rows longer than the kernel's buffer */
static void Weighted(const char *name, HGraph &F, int wmax, int min_weight, int max_weight, int max_rounds)
{
  std::vector<int> part(F.n);
  int              np;
  char             label[160];

  F.weight.resize(F.n);
  for (int v = 0; v < F.n; v++) F.weight[v] = RandInt(0, wmax);
  const PatchworkGraph fg = F.Host();
  ToDevice(F);
  CheckRet(PatchworkGraphPartition(&fg, 1, 9u, min_weight, part.data(), &np), "weighted patches");
  snprintf(label, sizeof(label), "%s weights 0..%d", name, wmax);
  Compare(label, F, np, part, max_weight, max_rounds);
  Compare(label, F, np, part, max_weight / 2, max_rounds);
  FreeDevice(F);
}

/* Hand-made: expect part[v] == want[v] after the balance where want[v] >= 0 */
static void Expect(const char *name, HGraph &G, int nparts, const std::vector<int> &part0, int max_weight, int max_rounds, const std::vector<std::pair<int, int>> &want)
{
  std::vector<int> out;
  bool             ok = true;

  ToDevice(G);
  Compare(name, G, nparts, part0, max_weight, max_rounds, &out);
  for (const auto &w : want) ok = ok && out[w.first] == w.second;
  Result(ok, "%s: expected outcome (the reference's)", name);
  FreeDevice(G);
}

/* A ring of L vertices (part 0) with a pendant of part 1 on vertex 0: vertex 0 may leave only
   when its two ring neighbours stay joined within distance 2 (L <= 5) */
static void Rings(void)
{
  for (int L = 3; L <= 8; L++) {
    std::vector<std::pair<int, int>> e;
    char                             name[64];

    for (int i = 0; i < L; i++) e.push_back({i, (i + 1) % L});
    e.push_back({0, L});
    HGraph           G = FromEdges(L + 1, e);
    std::vector<int> part(L + 1, 0);

    part[L] = 1;
    snprintf(name, sizeof(name), "ring of %d", L);
    Expect(name, G, 2, part, 0, 1, {{0, L <= 5 ? 1 : 0}});
    Expect(name, G, 2, part, 0, 50, {});
  }
}

/* A path 0..L-1 (part 0) with a pendant of part 1 on vertex at: safe only at an end */
static void Paths(void)
{
  const int L = 7;

  for (int at : {0, 1, 3, L - 1}) {
    std::vector<std::pair<int, int>> e;
    char                             name[64];

    for (int i = 0; i + 1 < L; i++) e.push_back({i, i + 1});
    e.push_back({at, L});
    HGraph           G = FromEdges(L + 1, e);
    std::vector<int> part(L + 1, 0);

    part[L] = 1;
    snprintf(name, sizeof(name), "path of %d, pendant at %d", L, at);
    Expect(name, G, 2, part, 0, 1, {{at, (at == 0 || at == L - 1) ? 1 : 0}});
    Expect(name, G, 2, part, 0, 50, {});
  }
}

/* A hub (vertex 0, part 0) with N neighbours in part 0 joined as a path (or with a gap), E more
   vertices of part 0 hanging off them, and a light part-1 vertex: the region has N + E vertices,
   the hub may leave iff N + E <= 1024 and the near vertices are joined */
static void Hubs(void)
{
  struct {
    int  N, E;
    bool gap, through_far;
  } cases[] = {
    {1024, 0, false, false}, {1025, 0, false, false}, {1000, 24, false, false}, {1000, 25, false, false},
    {500, 524, false, false}, {500, 525, false, false}, {40, 10, true, false}, {300, 299, false, true},
  };

  for (const auto &c : cases) {
    std::vector<std::pair<int, int>> e;
    const int                        light = 1 + c.N + c.E, n = light + 1;
    char                             name[128];

    for (int i = 1; i <= c.N; i++) e.push_back({0, i});
    if (c.through_far) /* near i and i+1 joined only through far vertex N+i */
      for (int i = 1; i < c.N; i++) {
        e.push_back({i, c.N + i});
        e.push_back({c.N + i, i + 1});
      }
    else {
      for (int i = 1; i < c.N; i++)
        if (!(c.gap && i == c.N / 2)) e.push_back({i, i + 1});
      for (int k = 0; k < c.E; k++) e.push_back({1 + k % c.N, 1 + c.N + k});
    }
    e.push_back({0, light});
    HGraph           G = FromEdges(n, e);
    std::vector<int> part(n, 0);
    const bool       safe = c.N + c.E <= 1024 && !c.gap;

    part[light] = 1;
    snprintf(name, sizeof(name), "hub: %d near + %d far%s%s (degree %d)", c.N, c.E, c.gap ? ", near split" : "", c.through_far ? ", joined through far" : "", G.ptr[1] - G.ptr[0]);
    Expect(name, G, 2, part, 0, 1, {{0, safe ? 1 : 0}});
  }
}

/* Parts X = {x0 (20), a}, Y = {b, y0 (8)}, Z = {z0} on the path x0 - a - b - z0, b - y0: X gives a
   to Y and Y gives b to Z in the same round, so a would lose its only anchor in Y: dropped */
static void Anchor(void)
{
  HGraph           G    = FromEdges(5, {{0, 1}, {1, 2}, {2, 3}, {2, 4}}); /* x0 a b z0 y0 */
  std::vector<int> part = {0, 0, 1, 2, 1};

  G.weight = {20, 1, 1, 1, 8};
  Expect("anchor leaves", G, 3, part, 0, 1, {{1, 0}, {2, 2}});
  Expect("anchor leaves", G, 3, part, 0, 50, {});
}

/* A light single vertex c (part 0) beside paths of parts 1..6 of different lengths and weights:
   every part offers, part 0 takes one; then the rounds go on */
static void Offers(void)
{
  std::vector<std::pair<int, int>> e;
  std::vector<int>                 part = {0}, w = {1};
  int                              n    = 1;

  for (int p = 1; p <= 6; p++) {
    const int len = 2 + p % 3;

    for (int i = 0; i < len; i++) {
      part.push_back(p);
      w.push_back(1 + (p * 7 + i * 3) % 5);
      if (i) e.push_back({n + i - 1, n + i});
    }
    e.push_back({0, n});
    if (p == 3) e.push_back({0, n + 1}); /* a larger gain */
    n += len;
  }
  HGraph G  = FromEdges(n, e);
  G.weight  = w;
  Expect("six parts offer to one", G, 7, part, 0, 1, {});
  Expect("six parts offer to one", G, 7, part, 0, 50, {});
}

static void Trivial(bool quick)
{
  HGraph           G = RandomLocal(quick ? 500 : 5000, 4, 20);
  std::vector<int> part(G.n, 0);

  ToDevice(G);
  Compare("one part", G, 1, part, 0, 50);
  for (int v = 0; v < G.n; v++) part[v] = v;
  Compare("parts of one vertex", G, G.n, part, 0, 50);
  for (int v = 0; v < G.n; v++) part[v] = v % 3 == 0 ? 2 * v : 2 * (v - v % 3) + 1; /* pairs, singletons, empty parts */
  Compare("pairs, singletons and empty parts", G, 2 * G.n, part, 0, 50);
  FreeDevice(G);
  {
    HGraph           E;
    std::vector<int> none;

    E.n   = 0;
    E.ptr = {0};
    ToDevice(E);
    Compare("no vertices", E, 3, none, 0, 50);
    FreeDevice(E);
  }
}

/* Bad arguments: both must return 1 and leave part as it was */
static void BadArgs(void)
{
  HGraph           G = FromEdges(6, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 0}});
  std::vector<int> part = {0, 0, 0, 1, 1, 1};
  int             *d_part;

  G.weight = {1, 2, 3, 4, 5, 6};
  ToDevice(G);
  d_part = Upload(part);
  auto run = [&](const char *what, PatchworkGraph hg, PatchworkGraph dg, int nparts, int max_rounds, const std::vector<int> &hp, bool null_part = false) {
    std::vector<int> cpu(hp), back(hp.size());
    int             *dp = Upload(hp);
    const int        rc = PatchworkGraphBalance(&hg, nparts, 0, max_rounds, null_part ? NULL : cpu.data());
    const int        rg = PatchworkGraphBalanceCUDA(&dg, nparts, 0, max_rounds, null_part ? NULL : dp, g_stream);

    CHECK_CUDA(cudaStreamSynchronize(g_stream));
    CHECK_CUDA(cudaMemcpy(back.data(), dp, hp.size() * sizeof(int), cudaMemcpyDeviceToHost));
    Result(rc == 1 && rg == 1 && back == hp, "bad arguments: %s: ret cpu %d gpu %d, part %s", what, rc, rg, back == hp ? "kept" : "changed");
    CHECK_CUDA(cudaFree(dp));
  };
  const PatchworkGraph hg = G.Host(), dg = G.Dev();
  PatchworkGraph       h2, d2;
  std::vector<int>     p2;

  ReportRet(PatchworkGraphBalanceCUDA(NULL, 2, 0, 1, d_part, g_stream), 1, "NULL graph");
  h2 = hg, d2 = dg, h2.n = d2.n = -1;
  run("n < 0", h2, d2, 2, 1, part);
  run("max_rounds < 0", hg, dg, 2, -1, part);
  run("nparts 0", hg, dg, 0, 1, part);
  run("nparts < 0", hg, dg, -1, 1, part);
  run("part NULL", hg, dg, 2, 1, part, true);
  p2 = part, p2[4] = 2;
  run("part == nparts", hg, dg, 2, 1, p2);
  p2 = part, p2[0] = -1;
  run("part < 0", hg, dg, 2, 1, p2);
  h2 = hg, d2 = dg, h2.ptr = d2.ptr = NULL;
  run("ptr NULL", h2, d2, 2, 1, part);
  h2 = hg, d2 = dg, h2.adj = d2.adj = NULL;
  run("adj NULL", h2, d2, 2, 1, part);
  {
    HGraph B = G;

    B.weight[2] = -1;
    ToDevice(B);
    run("negative weight", B.Host(), B.Dev(), 2, 1, part);
    FreeDevice(B);
    B           = G;
    B.weight[0] = INT_MAX / 2;
    B.weight[5] = INT_MAX / 2;
    ToDevice(B);
    run("total weight >= INT_MAX", B.Host(), B.Dev(), 2, 1, part);
    FreeDevice(B);
    B         = G;
    B.weight  = {};
    B.adj[3]  = 6;
    ToDevice(B);
    run("neighbour out of range", B.Host(), B.Dev(), 2, 1, part);
    FreeDevice(B);
    B         = G;
    B.adj[7]  = -1;
    ToDevice(B);
    run("negative neighbour", B.Host(), B.Dev(), 2, 1, part);
    FreeDevice(B);
    B        = G;
    B.ptr[3] = B.ptr[2] - 1;
    ToDevice(B);
    run("decreasing ptr", B.Host(), B.Dev(), 2, 1, part);
    FreeDevice(B);
  }
  {
    PatchworkGraph e0 = {0, NULL, NULL, NULL, 0, NULL};
    const int      rc = PatchworkGraphBalance(&e0, 0, 0, 1, NULL), rg = PatchworkGraphBalanceCUDA(&e0, 0, 0, 1, NULL, g_stream);

    Result(rc == 0 && rg == 0, "no vertices, no parts: ret cpu %d gpu %d", rc, rg);
  }
  CHECK_CUDA(cudaFree(d_part));
  FreeDevice(G);
}

int main(int argc, char **argv)
{
  bool      quick;
  const int start = GpuTestStart(argc, argv, &quick);

  if (start >= 0) return start;
  (void)Report; /* gputest.h's float check; this test compares exactly */
  BadArgs();
  Trivial(quick);
  Rings();
  Paths();
  Hubs();
  Anchor();
  Offers();
  {
    HGraph g7 = quick ? Grid(10, 9, 8, false) : Grid(40, 36, 32, false);
    HGraph g27 = quick ? Grid(9, 8, 8, true) : Grid(32, 32, 30, true);
    HGraph rl = quick ? RandomLocal(3000, 5, 40) : RandomLocal(60000, 6, 200);

    Pipeline("grid7", g7, quick);
    Pipeline("grid27", g27, quick);
    Pipeline("random", rl, quick);
  }
  {
    HGraph g7 = quick ? Grid(8, 8, 6, false) : Grid(24, 20, 18, false);
    HGraph rl = quick ? RandomLocal(1500, 4, 30) : RandomLocal(20000, 4, 100);

    FineUnit("grid7", g7, 6, 12);
    FineUnit("random", rl, 10, 25);
  }
  if (!quick) {
    double cpu_ms = 0, gpu_ms = 0;
    {
      HGraph g27 = Grid(128, 128, 128, true);
      Pipeline("grid27 128^3", g27, false, &cpu_ms, &gpu_ms);
      printf("# timing grid27 128^3 induced, max_weight 400, 50 rounds: GPU %.2f ms, CPU %.2f ms (%.1fx)\n", gpu_ms, cpu_ms, cpu_ms / gpu_ms);
    }
    {
      HGraph g7 = Grid(256, 256, 256, false);
      Pipeline("grid7 256^3", g7, false, &cpu_ms, &gpu_ms);
      printf("# timing grid7 256^3 induced, max_weight 400, 50 rounds: GPU %.2f ms, CPU %.2f ms (%.1fx)\n", gpu_ms, cpu_ms, cpu_ms / gpu_ms);
    }
  }
  {
    HGraph rl = quick ? RandomLocal(2000, 5, 50) : RandomLocal(30000, 5, 100);
    HGraph dn = quick ? RandomLocal(300, 140, 150) : RandomLocal(2000, 160, 1000); /* rows of ~320 entries */

    Weighted("random", rl, 20, 60, 200, 50);
    Weighted("dense", dn, 60, 2000, 4000, quick ? 50 : 4); /* few rounds: clamping gives vertices 0 and n-1 rows of ~20n entries, O(deg^2) in BestMoves (cuda/amg_balance.cu) */
  }
  CHECK_CUDA(cudaStreamDestroy(g_stream));
  CHECK_CUDA(cudaDeviceSynchronize());
  /* one line, last: the scripts take it as the summary */
  printf("# %d passed, %d failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
