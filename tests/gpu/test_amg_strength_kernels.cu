/* GPU vs CPU: PCPATCHAMG's strong graph (smoothed-aggregation strength of connection),
   PatchworkGraphStrengthCUDA (cuda/amg_strength.cu) against its CPU reference PatchworkGraphStrength
   (src/core/amg_strength_ref.c; contract in include/patchwork/amg_kernel.h; the reference itself is
   checked against brute force by tests/unit/test_amg_strength.c). The graphs must be equal bit for
   bit: n, ptr and adj, weight and coord NULL. Exact equality holds because both decide every entry
   with the same PatchworkCSRStrong (|x|, one product, one sqrt, one product, one comparison: each
   correctly rounded on both, no sum whose order could differ, nothing to contract into an FMA).
   Inputs: the unit test's random families (0 to 2000 rows, 200000 in the full run: nonsymmetric and
   symmetric patterns, nonsymmetric and symmetric values, rows without entries or without a diagonal,
   zero and negative diagonals, explicit +-0, values over 120 and 1000 binary orders of magnitude,
   NaNs) for theta in {-1, 0, 0.01, 0.05, 0.25, 1, 10}; in the full run a 7-point-like matrix on a
   126^3 grid and a P1-tetrahedral-like one (the Freudenthal mesh of a 126^3 grid, 15 entries an
   interior row, vertices randomly renumbered), 2000376 rows each, symmetric pattern, random values;
   no rows (NULL arrays or real ones), rows without entries, the NULL stream; bad arguments must be
   refused with 1 by both, s left empty. The full run prints the time of the CUDA call on the
   P1-like matrix (CUDA events, median of 3 after a warm-up) beside the reference's (one core).
   Prints `ok ...` or `FAIL ...` per check and `# N passed, N failed` last; exits 0 when all pass,
   1 otherwise, 77 without a CUDA device.

   Usage: test_amg_strength_kernels [--quick]   (--quick: small cases, for compute-sanitizer) */
#include "gputest.h"
#include <chrono>
#include <cmath>
#include <numeric>
#include <patchwork/amg_kernel.h>

static const double kThetas[] = {-1, 0, 0.01, 0.05, 0.25, 1, 10};

/* A matrix on the host (vectors: the test owns it) */
struct Mat {
  int                 n = 0;
  std::vector<int>    ptr{0}, col;
  std::vector<double> val;
  /* with rows, the contract wants all three arrays, also without entries (an empty vector's data() may be NULL) */
  PatchworkCSR View() const
  {
    static const int    no_col = 0;
    static const double no_val = 0;

    return {n, ptr.data(), col.empty() ? &no_col : col.data(), val.empty() ? &no_val : val.data()};
  }
};

static int RandInt(int lo, int hi) /* uniform in [lo, hi] */
{
  return lo + (int)((Rand() + 1.0) * 0.5 * (hi - lo + 1)) % (hi - lo + 1);
}

static double Uniform(void) /* in [0, 1) */
{
  return 0.5 * (Rand() + 1.0);
}

/* The unit test's families */
struct Family {
  const char *name;
  int         sym; /* 0: any pattern; 1: symmetric pattern, values drawn per entry; 2: symmetric values too */
  double      pdiag, pzero_diag, pzero_off, pnan_diag, pnan_off;
  int         emax; /* |values| in [2^-(emax+1), 2^emax) */
};

static const Family kFamilies[] = {
  {"nonsymmetric pattern", 0, 0.85, 0.05, 0.05, 0, 0, 60},
  {"symmetric pattern, nonsymmetric values", 1, 0.85, 0.05, 0.05, 0, 0, 60},
  {"symmetric pattern and values", 2, 0.85, 0.05, 0.05, 0, 0, 60},
  {"symmetric pattern, values in [0.25, 2)", 1, 0.95, 0, 0, 0, 0, 1},
  {"few or zero diagonals", 1, 0.30, 0.50, 0.05, 0, 0, 20},
  {"explicit zeros", 0, 0.80, 0.20, 0.50, 0, 0, 20},
  {"values over 2^+-500", 1, 0.85, 0.05, 0.05, 0, 0, 500},
  {"NaNs", 1, 0.85, 0.05, 0.05, 0.04, 0.04, 20},
};

static double Value(const Family &f, bool diag)
{
  const double r = Uniform();

  if (r < (diag ? f.pnan_diag : f.pnan_off)) return NAN;
  if (r < (diag ? f.pnan_diag + f.pzero_diag : f.pnan_off + f.pzero_off)) return Rand() < 0 ? 0.0 : -0.0;
  const double m = 0.5 + 0.5 * Uniform();
  return std::ldexp(Rand() < 0 ? -m : m, RandInt(-f.emax, f.emax));
}

/* Random row lengths (0, 1, a few, a few dozen), the diagonal in a fraction pdiag of the rows,
   closed under transposition where sym, sorted distinct columns */
static Mat RandomMat(int n, const Family &f)
{
  std::vector<std::pair<int, int>> pair;
  Mat                              M;

  for (int i = 0; i < n; i++) {
    const double r = Uniform();
    const int    k = std::min(n, r < 0.10 ? 0 : r < 0.25 ? 1 : r < 0.75 ? RandInt(2, 8) : RandInt(9, 40));

    for (int t = 0; t <= k; t++) {
      const int j = t < k ? RandInt(0, n - 1) : i;

      if (j == i && (t < k || Uniform() >= f.pdiag)) continue; /* the diagonal per pdiag only */
      pair.push_back({i, j});
      if (f.sym) pair.push_back({j, i});
    }
  }
  std::sort(pair.begin(), pair.end());
  pair.erase(std::unique(pair.begin(), pair.end()), pair.end());
  M.n = n;
  M.ptr.assign((size_t)n + 1, 0);
  for (const auto &p : pair) {
    M.ptr[p.first + 1]++;
    M.col.push_back(p.second);
    M.val.push_back(Value(f, p.first == p.second));
  }
  std::partial_sum(M.ptr.begin(), M.ptr.end(), M.ptr.begin());
  if (f.sym == 2)
    for (int i = 0; i < n; i++)
      for (int e = M.ptr[i]; e < M.ptr[i + 1]; e++) {
        const int j = M.col[e];

        if (j < i) M.val[e] = M.val[std::lower_bound(M.col.begin() + M.ptr[j], M.col.begin() + M.ptr[j + 1], i) - M.col.begin()];
      }
  return M;
}

/* m^3 grid, lexicographic order; neighbour offsets off[0..noff); values: a positive diagonal of about noff / 4
   (negative in 1% of the rows), negative couplings of random size, one in four 2^-10 smaller (so
   that theta splits them), one in 200 an explicit zero; drawn per entry (nonsymmetric values) */
static Mat GridMat(int m, const int (*off)[3], int noff, bool renumber)
{
  const int        n = m * m * m;
  std::vector<int> perm(n), inv(n), row;
  Mat              M;

  std::iota(perm.begin(), perm.end(), 0);
  if (renumber)
    for (int v = n - 1; v > 0; v--) std::swap(perm[v], perm[RandInt(0, v)]);
  for (int v = 0; v < n; v++) inv[perm[v]] = v;
  M.n = n;
  M.ptr.reserve((size_t)n + 1);
  M.col.reserve((size_t)n * (noff + 1));
  M.val.reserve((size_t)n * (noff + 1));
  for (int r = 0; r < n; r++) { /* new row r is grid vertex inv[r] */
    const int v = inv[r], x = v % m, y = v / m % m, z = v / (m * m);

    row.assign(1, r);
    for (int k = 0; k < noff; k++) {
      const int a = x + off[k][0], b = y + off[k][1], c = z + off[k][2];

      if (a >= 0 && a < m && b >= 0 && b < m && c >= 0 && c < m) row.push_back(perm[a + m * (b + m * c)]);
    }
    std::sort(row.begin(), row.end());
    for (int j : row) {
      double w;

      if (j == r) w = (Uniform() < 0.01 ? -1 : 1) * 0.25 * noff * (0.5 + Uniform());
      else {
        const double u = Uniform();
        w              = u < 0.005 ? 0.0 : -(0.25 + Uniform()) * (u < 0.25 ? 0x1p-10 : 1.0);
      }
      M.col.push_back(j);
      M.val.push_back(w);
    }
    M.ptr.push_back((int)M.col.size());
  }
  return M;
}

static const int kSeven[6][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
/* the Freudenthal (Kuhn) triangulation of the cubes: edges along e_a, e_a + e_b, e_1 + e_2 + e_3 */
static const int kTet[14][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 0}, {1, 0, 1}, {0, 1, 1}, {1, 1, 1},
                                {-1, 0, 0}, {0, -1, 0}, {0, 0, -1}, {-1, -1, 0}, {-1, 0, -1}, {0, -1, -1}, {-1, -1, -1}};

/* ---------------------------------------------------------------------------------------------
   Device copies */

template <typename T>
static std::vector<T> ToHost(const T *d, size_t n)
{
  std::vector<T> h(n);

  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  if (n) CHECK_CUDA(cudaMemcpyAsync(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost, g_stream));
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  return h;
}

/* M on the device; with nul, NULL for every array of a matrix without rows */
static PatchworkCSR UploadMat(const Mat &M, bool nul)
{
  PatchworkCSR d = {M.n, nullptr, nullptr, nullptr};

  if (!(nul && M.n == 0)) {
    d.ptr = Upload(M.ptr);
    d.col = Upload(M.col);
    d.val = Upload(M.val);
  }
  return d;
}

static void FreeMat(PatchworkCSR &d) /* ours, from cudaMalloc (not the library's) */
{
  CHECK_CUDA(cudaFree((void *)d.ptr));
  CHECK_CUDA(cudaFree((void *)d.col));
  CHECK_CUDA(cudaFree((void *)d.val));
  d = {0, nullptr, nullptr, nullptr};
}

/* ---------------------------------------------------------------------------------------------
   Checks */

/* The CUDA graph of dA (M's device copy) against the reference's, bit for bit */
static void Compare(const char *label, const Mat &M, const PatchworkCSR &dA, double theta, cudaStream_t stream = g_stream)
{
  const PatchworkCSR hA = M.View();
  PatchworkGraph     r, g;
  int                ret;

  CheckRet(PatchworkGraphStrength(&hA, theta, &r), "PatchworkGraphStrength");
  memset(&g, 0xA5, sizeof(g)); /* junk the function must overwrite */
  ret = PatchworkGraphStrengthCUDA(&dA, theta, &g, stream);
  CHECK_CUDA(cudaStreamSynchronize(stream)); /* ToHost orders after g_stream only, and stream may be another */
  if (ret) {
    Result(false, "%s, theta %g: PatchworkGraphStrengthCUDA returned %d (%s)", label, theta, ret, cudaGetErrorString((cudaError_t)ret));
    PatchworkGraphFree(&r);
    return;
  }
  bool same  = g.n == r.n && g.ptr && g.adj && !g.weight && !g.coord;
  int  first = -1; /* first row whose start differs */
  if (same) {
    const std::vector<int> ptr = ToHost(g.ptr, (size_t)r.n + 1);

    for (int i = 0; i <= r.n && first < 0; i++)
      if (ptr[i] != r.ptr[i]) first = i;
    same = first < 0;
    if (same) {
      const std::vector<int> adj = ToHost(g.adj, (size_t)r.ptr[r.n]);

      same = adj.empty() || !memcmp(adj.data(), r.adj, sizeof(int) * adj.size());
    }
  }
  Result(same, "%s, theta %g: %d of %d couplings kept, graph equal to the reference bit for bit%s", label, theta, r.ptr[r.n], M.ptr[M.n], first >= 0 ? " (ptr differs)" : "");
  if (first >= 0) printf("     first differing ptr at row %d\n", first);
  PatchworkGraphFreeCUDA(&g);
  PatchworkGraphFree(&r);
}

static void Run(const char *label, const Mat &M, const double *thetas, int nthetas, bool nul = false)
{
  PatchworkCSR dA = UploadMat(M, nul);
  char         name[200];

  snprintf(name, sizeof(name), "%s (%d rows, %d entries%s)", label, M.n, M.ptr[M.n], nul ? ", NULL arrays" : "");
  for (int t = 0; t < nthetas; t++) Compare(name, M, dA, thetas[t]);
  FreeMat(dA);
}

/* Bad arguments: 1 from both, s left empty */
static void BadArguments(void)
{
  Mat            M;
  PatchworkGraph s;
  int            ret;

  M.n   = 3;
  M.ptr = {0, 2, 3, 4};
  M.col = {0, 1, 1, 2};
  M.val = {1, 1, 1, 1};
  const PatchworkCSR h = M.View(), d = UploadMat(M, false);
  struct Case {
    const char  *name;
    PatchworkCSR h, d;
    bool         nullA;
  };
  const Case cases[] = {
    {"NULL A", h, d, true},
    {"negative n", {-1, h.ptr, h.col, h.val}, {-1, d.ptr, d.col, d.val}, false},
    {"NULL ptr", {3, nullptr, h.col, h.val}, {3, nullptr, d.col, d.val}, false},
    {"NULL col", {3, h.ptr, nullptr, h.val}, {3, d.ptr, nullptr, d.val}, false},
    {"NULL val", {3, h.ptr, h.col, nullptr}, {3, d.ptr, d.col, nullptr}, false},
  };

  for (const Case &c : cases) {
    memset(&s, 0xA5, sizeof(s));
    ret = PatchworkGraphStrength(c.nullA ? nullptr : &c.h, 0.1, &s);
    Result(ret == 1 && !s.ptr && !s.adj && !s.n, "ref: %s refused (ret %d, want 1), s left empty", c.name, ret);
    memset(&s, 0xA5, sizeof(s));
    ret = PatchworkGraphStrengthCUDA(c.nullA ? nullptr : &c.d, 0.1, &s, g_stream);
    Result(ret == 1 && !s.ptr && !s.adj && !s.n, "cuda: %s refused (ret %d, want 1), s left empty", c.name, ret);
  }
  ReportRet(PatchworkGraphStrength(&h, 0.1, nullptr), 1, "ref: NULL s");
  ReportRet(PatchworkGraphStrengthCUDA(&d, 0.1, nullptr, g_stream), 1, "cuda: NULL s");
  ret = PatchworkGraphStrength(&h, 0.1, &s);
  ReportRet(ret, 0, "ref: good arguments accepted");
  if (!ret) PatchworkGraphFree(&s);
  ret = PatchworkGraphStrengthCUDA(&d, 0.1, &s, g_stream);
  ReportRet(ret, 0, "cuda: good arguments accepted");
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  if (!ret) PatchworkGraphFreeCUDA(&s);
  PatchworkCSR dd = d;
  FreeMat(dd);
}

/* The CUDA call on M (CUDA events on g_stream, median of 3 after a warm-up; the graph freed
   outside the timed span) beside the reference (one call, one core) */
static void Time(const char *label, const Mat &M, double theta)
{
  const PatchworkCSR hA = M.View();
  PatchworkCSR       dA = UploadMat(M, false);
  PatchworkGraph     g;
  cudaEvent_t        e0, e1;
  std::vector<float> t(3);

  CHECK_CUDA(cudaEventCreate(&e0));
  CHECK_CUDA(cudaEventCreate(&e1));
  CheckRet(PatchworkGraphStrengthCUDA(&dA, theta, &g, g_stream), "PatchworkGraphStrengthCUDA");
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  PatchworkGraphFreeCUDA(&g);
  for (auto &ms : t) {
    CHECK_CUDA(cudaEventRecord(e0, g_stream));
    CheckRet(PatchworkGraphStrengthCUDA(&dA, theta, &g, g_stream), "PatchworkGraphStrengthCUDA");
    CHECK_CUDA(cudaEventRecord(e1, g_stream));
    CHECK_CUDA(cudaEventSynchronize(e1));
    CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
    PatchworkGraphFreeCUDA(&g);
  }
  std::sort(t.begin(), t.end());
  const auto c0 = std::chrono::steady_clock::now();
  CheckRet(PatchworkGraphStrength(&hA, theta, &g), "PatchworkGraphStrength");
  const double cpu_ms = 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
  printf("# strength %s, %d rows, %d entries, theta %g, %d kept: GPU %.3f ms (CUDA events, median of 3), CPU reference %.1f ms (%.0fx)\n", label, M.n, M.ptr[M.n], theta, g.ptr[g.n], t[1], cpu_ms,
         cpu_ms / std::max((double)t[1], 1e-3));
  PatchworkGraphFree(&g);
  CHECK_CUDA(cudaEventDestroy(e0));
  CHECK_CUDA(cudaEventDestroy(e1));
  FreeMat(dA);
}

int main(int argc, char **argv)
{
  bool      quick;
  int       rc    = GpuTestStart(argc, argv, &quick);
  const int ntheta = (int)(sizeof(kThetas) / sizeof(kThetas[0]));

  if (rc >= 0) return rc;
  BadArguments();
  { /* no rows, rows without entries, the NULL stream */
    Mat M0, E;

    Run("no rows", M0, kThetas, ntheta, true);
    Run("no rows", M0, kThetas, ntheta, false);
    E.n = 100;
    E.ptr.assign(101, 0);
    Run("no entries", E, kThetas, ntheta);
    const Mat    S  = RandomMat(300, kFamilies[1]);
    PatchworkCSR dS = UploadMat(S, false);
    Compare("symmetric pattern, 300 rows, NULL stream", S, dS, 0.25, nullptr);
    FreeMat(dS);
  }
  const int sizes[] = {1, 2, 3, 7, 40, 300, 2000, 200000};
  for (int n : sizes) {
    if (quick && n > 2000) continue;
    for (const Family &f : kFamilies) Run(f.name, RandomMat(n, f), kThetas, ntheta);
  }
  if (!quick) {
    const double big[] = {0, 0.05, 0.25};
    const Mat    S     = GridMat(126, kSeven, 6, false);
    Run("7-point-like, 126^3", S, big, 3);
    const Mat T = GridMat(126, kTet, 14, true);
    Run("P1-tet-like, 126^3 renumbered", T, big, 3);
    Time("P1-tet-like", T, 0.25);
  }
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaStreamDestroy(g_stream));
  CHECK_CUDA(cudaDeviceSynchronize());
  /* one line, last: the scripts take it as the summary */
  printf("# %d passed, %d failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
