/* GPU vs CPU: the CSR operations of PCPATCHAMG's coarse levels, y = z + M x, T = M^T and the
   diagonal (cuda/amg_csr.cu, cuda/amg_galerkin.cu vs src/core/amg_csr_ref.c).
   Transpose and Diagonal must equal the reference bit for bit (sizes, ptr, col, val; d). Mult is
   checked row by row against the long double value of the row and against the reference: row i is
   n_i products summed in any order with z_i added, so each evaluation is within
   gamma(n_i + 1) (sum_j |m_ij x_j| + |z_i|) of the exact value, gamma(n) = n u / (1 - n u),
   u = DBL_EPSILON / 2 (fused multiply-adds only round less); against the reference twice that.
   Values and x spread over 40 binary orders of magnitude, so rows cancel. z NULL, distinct from y,
   and aliasing y; y starts as NaN where it is not z, so a row left unwritten fails.
   Inputs: a P-like matrix (1e6 rows, 1/16 as many columns, 3..8 entries a row), its transpose
   (R-like: wide, ~90 entries a row), an A-like square one (20..60 entries a row, the diagonal in
   most rows), rows of 0 entries mixed with rows of over 1000, a single long row, a single column,
   matrices without rows or without entries (with NULL for every empty array, and with real
   pointers). Symmetrize (M + M^T)/2 must equal (m_ij + m_ji) * 0.5 bit for bit on both where the
   pattern is symmetric, and return 3 leaving M alone where it is not. Bad arguments must be
   refused with 1 by both.
   JoinColumns, SplitColumns and IntMap (no arithmetic) must equal the reference bit for bit (sizes,
   ptr, col, val; idx): Join of square/rectangular blocks, A or B without entries, no rows (NULL
   arrays), extra empty rows and columns; Split of every input above at cut 0, a third, nrow (<= ncol)
   and ncol; IntMap of 0 .. 10^6 indices; their bad arguments are refused with 1 by both, results
   left empty. Add (M = A + B) must equal the reference bit for bit (an entry in both is the one
   rounding a + b) with the entries that cancel to 0 stored: rows of both with identical, disjoint
   and overlapping patterns, rows only in A or only in B, empty rows, mixed row by row; no rows, no
   columns, no entries (NULL arrays), ncol above the largest column, long rows (up to 6000 entries),
   rows of 0 .. 2500 entries, and 1e6 rows of 20 .. 40 entries a side; bad arguments (NULL A, B, M
   or ptr, B->n != A->n, ncol < 0) are refused with 1 by both, M left empty.
   The full run ends with a timing table
   (GPU ms from CUDA events, median of 3 after a warm-up; CPU ms of the reference on one core).
   Prints `ok ...` or `FAIL ...` per check and `# N passed, N failed` last; exits 0 when all pass,
   1 otherwise, 77 without a CUDA device.

   Usage: test_amg_csr_kernels [--quick]   (--quick: small cases, for compute-sanitizer) */
#include "gputest.h"
#include "../roundoff.h"
#include <chrono>
#include <cmath>
#include <cfloat>
#include <patchwork/amg_kernel.h>

/* A matrix on the host (vectors: the test owns it) */
struct Mat {
  int                 nrow = 0, ncol = 0;
  std::vector<int>    ptr{0}, col;
  std::vector<double> val;
  PatchworkCSRMatrix  View() const { return {nrow, ncol, (int)col.size(), (int *)ptr.data(), (int *)col.data(), (double *)val.data()}; }
};

static int RandInt(int lo, int hi) /* uniform in [lo, hi] */
{
  return lo + (int)((Rand() + 1.0) * 0.5 * (hi - lo + 1)) % (hi - lo + 1);
}

/* in [-0.5, 0.5) times 2^[-20, 20] */
static double Spread(void)
{
  return std::ldexp(0.5 * Rand(), RandInt(-20, 20));
}

static double Seconds(std::chrono::steady_clock::time_point t0)
{
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}


/* ---------------------------------------------------------------------------------------------
   Inputs */

/* nrow x ncol, len() entries a row (at most ncol), distinct ascending columns; a square matrix
   holds its diagonal in 90% of the rows that have entries */
template <typename F>
static Mat RandomMat(int nrow, int ncol, F len)
{
  Mat              M;
  std::vector<int> perm, row;

  M.nrow = nrow;
  M.ncol = ncol;
  M.ptr.reserve((size_t)nrow + 1);
  for (int i = 0; i < nrow; i++) {
    const int k = std::min(ncol, len());

    row.clear();
    if ((size_t)k * 8 < (size_t)ncol) { /* few of many: draw, drop repeats, draw again */
      while ((int)row.size() < k) {
        for (int t = (int)row.size(); t < k; t++) row.push_back(RandInt(0, ncol - 1));
        std::sort(row.begin(), row.end());
        row.erase(std::unique(row.begin(), row.end()), row.end());
      }
    } else if (k > 0) { /* a partial shuffle of all columns */
      if (perm.size() != (size_t)ncol) {
        perm.resize(ncol);
        for (int j = 0; j < ncol; j++) perm[j] = j;
      }
      for (int t = 0; t < k; t++) std::swap(perm[t], perm[RandInt(t, ncol - 1)]);
      row.assign(perm.begin(), perm.begin() + k);
      std::sort(row.begin(), row.end());
    }
    if (nrow == ncol && k > 0 && Rand() < 0.8 && !std::binary_search(row.begin(), row.end(), i)) {
      row[RandInt(0, k - 1)] = i;
      std::sort(row.begin(), row.end());
    }
    for (int j : row) {
      M.col.push_back(j);
      M.val.push_back(Spread());
    }
    M.ptr.push_back((int)M.col.size());
  }
  return M;
}

static Mat Transposed(const Mat &M)
{
  const PatchworkCSRMatrix v = M.View();
  PatchworkCSRMatrix       T;
  Mat                      R;

  CheckRet(PatchworkCSRTransposeRef(&v, &T), "PatchworkCSRTransposeRef");
  R.nrow = T.nrow;
  R.ncol = T.ncol;
  R.ptr.assign(T.ptr, T.ptr + T.nrow + 1);
  R.col.assign(T.col, T.col + T.nnz);
  R.val.assign(T.val, T.val + T.nnz);
  PatchworkCSRMatrixFree(&T);
  return R;
}

/* ---------------------------------------------------------------------------------------------
   Device copies */

template <typename T>
static T *DeviceAlloc(size_t n, bool nan) /* one element at least; NaN bytes where asked */
{
  T *d;
  CHECK_CUDA(cudaMalloc((void **)&d, std::max<size_t>(n, 1) * sizeof(T)));
  CHECK_CUDA(cudaMemsetAsync(d, nan ? 0xFF : 0, std::max<size_t>(n, 1) * sizeof(T), g_stream));
  return d;
}

template <typename T>
static std::vector<T> ToHost(const T *d, size_t n)
{
  std::vector<T> h(n);

  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  if (n) CHECK_CUDA(cudaMemcpyAsync(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost, g_stream));
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  return h;
}

/* M on the device; with nul, NULL for the arrays that have no entries (ptr when there are no rows) */
static PatchworkCSRMatrix UploadMat(const Mat &M, bool nul)
{
  PatchworkCSRMatrix d = {M.nrow, M.ncol, (int)M.col.size(), nullptr, nullptr, nullptr};

  if (!(nul && M.nrow == 0)) d.ptr = Upload(M.ptr);
  if (!(nul && M.col.empty())) {
    d.col = Upload(M.col);
    d.val = Upload(M.val);
  }
  return d;
}

static void FreeMat(PatchworkCSRMatrix &d) /* ours, from cudaMalloc (not the library's) */
{
  CHECK_CUDA(cudaFree(d.ptr));
  CHECK_CUDA(cudaFree(d.col));
  CHECK_CUDA(cudaFree(d.val));
  d.ptr = d.col = nullptr;
  d.val = nullptr;
}

/* ---------------------------------------------------------------------------------------------
   Checks */

static const char *zname[] = {"z NULL", "z distinct", "z aliasing y"};

/* y = z + M x on both, for the three kinds of z; single: MultSingle with M's values rounded to
   float (the exact sum then uses the float values, so the bound is the same) */
static void CheckMult(const char *label, const Mat &M, const PatchworkCSRMatrix &dM, bool nul, bool single)
{
  const int                nr = M.nrow, nc = M.ncol;
  const PatchworkCSRMatrix hM = M.View();
  const double             u = DBL_EPSILON / 2, uld = LongDoubleRoundoff();
  std::vector<double>      x(nc), z(nr), ref(nr);
  std::vector<float>       fval(M.val.begin(), M.val.end());
  double                  *dx, *dz, *dy;
  float                   *dfval = single && !(nul && fval.empty()) ? Upload(fval) : nullptr;
  const char              *which = single ? "mult single" : "mult";

  for (auto &v : x) v = Spread();
  for (auto &v : z) v = Spread();
  dx = nul && nc == 0 ? nullptr : Upload(x);
  dz = nul && nr == 0 ? nullptr : Upload(z);
  for (int mode = 0; mode < 3; mode++) {
    int    ret;
    double worst_exact = 0, worst_ref = 0;

    ref = z;
    if (single) CheckRet(PatchworkCSRMultSingleRef(&hM, fval.data(), x.data(), mode == 0 ? nullptr : mode == 1 ? z.data() : ref.data(), ref.data()), "PatchworkCSRMultSingleRef");
    else CheckRet(PatchworkCSRMultRef(&hM, x.data(), mode == 0 ? nullptr : mode == 1 ? z.data() : ref.data(), ref.data()), "PatchworkCSRMultRef");
    dy = nul && nr == 0 ? nullptr : DeviceAlloc<double>(nr, mode != 2);
    if (mode == 2 && nr) CHECK_CUDA(cudaMemcpyAsync(dy, dz, sizeof(double) * nr, cudaMemcpyDeviceToDevice, g_stream));
    if (single) ret = PatchworkCSRMultSingleCUDA(&dM, dfval, dx, mode == 0 ? nullptr : mode == 1 ? dz : dy, dy, g_stream);
    else ret = PatchworkCSRMultCUDA(&dM, dx, mode == 0 ? nullptr : mode == 1 ? dz : dy, dy, g_stream);
    if (ret) {
      Result(false, "%s %s, %s: returned %d (%s)", which, label, zname[mode], ret, cudaGetErrorString((cudaError_t)ret));
      CHECK_CUDA(cudaFree(dy));
      continue;
    }
    const std::vector<double> y = ToHost(dy, nr);
    CHECK_CUDA(cudaFree(dy));
    for (int i = 0; i < nr; i++) {
      const int   n = M.ptr[i + 1] - M.ptr[i];
      long double s = mode ? z[i] : 0, a = mode ? fabsl(z[i]) : 0;

      for (int e = M.ptr[i]; e < M.ptr[i + 1]; e++) {
        const long double t = (long double)(single ? (double)fval[e] : M.val[e]) * x[M.col[e]];

        s += t;
        a += fabsl(t);
      }
      const double b = (Gamma(n + 1, u) + Gamma(n + 2, uld)) * (double)a, e1 = (double)fabsl(y[i] - s), e2 = fabs(y[i] - ref[i]);
      const double r1 = b > 0 ? e1 / b : e1 == 0 ? 0.0 : INFINITY, r2 = b > 0 ? e2 / (2 * b) : e2 == 0 ? 0.0 : INFINITY;

      worst_exact = ErrMax(worst_exact, r1);
      worst_ref   = ErrMax(worst_ref, r2);
    }
    Result(worst_exact <= 1 && worst_ref <= 1, "%s %s, %s: worst |gpu - exact| %.3f of the bound, |gpu - ref| %.3f of twice it", which, label, zname[mode], worst_exact, worst_ref);
  }
  CHECK_CUDA(cudaFree(dfval));
  CHECK_CUDA(cudaFree(dx));
  CHECK_CUDA(cudaFree(dz));
}

static void CheckTranspose(const char *label, const Mat &M, const PatchworkCSRMatrix &dM)
{
  const PatchworkCSRMatrix hM = M.View();
  PatchworkCSRMatrix       R, G;
  int                      ret;
  bool                     same;

  CheckRet(PatchworkCSRTransposeRef(&hM, &R), "PatchworkCSRTransposeRef");
  ret = PatchworkCSRTransposeCUDA(&dM, &G, g_stream);
  if (ret) {
    Result(false, "transpose %s: PatchworkCSRTransposeCUDA returned %d (%s)", label, ret, cudaGetErrorString((cudaError_t)ret));
    PatchworkCSRMatrixFree(&R);
    return;
  }
  same = G.nrow == R.nrow && G.ncol == R.ncol && G.nnz == R.nnz && G.ptr && (G.nnz == 0 || (G.col && G.val));
  if (same) {
    const std::vector<int>    ptr = ToHost(G.ptr, (size_t)G.nrow + 1), col = ToHost(G.col, G.nnz);
    const std::vector<double> val = ToHost(G.val, G.nnz);

    same = !memcmp(ptr.data(), R.ptr, sizeof(int) * ptr.size()) && (G.nnz == 0 || (!memcmp(col.data(), R.col, sizeof(int) * G.nnz) && !memcmp(val.data(), R.val, sizeof(double) * G.nnz)));
  }
  Result(same, "transpose %s: %d x %d, %d entries, equal to the reference bit for bit", label, R.nrow, R.ncol, R.nnz);
  PatchworkCSRMatrixFreeCUDA(&G);
  PatchworkCSRMatrixFree(&R);
}

static void CheckDiagonal(const char *label, const Mat &M, const PatchworkCSRMatrix &dM, bool nul)
{
  const PatchworkCSRMatrix hM = M.View();
  std::vector<double>      ref(M.nrow);
  double                  *dd;
  int                      ret, present = 0;

  if (M.nrow != M.ncol) { /* refused */
    char name[160];

    dd = DeviceAlloc<double>(M.nrow, true);
    snprintf(name, sizeof(name), "diagonal %s: ref", label);
    ReportRet(PatchworkCSRDiagonalRef(&hM, ref.data()), 1, name);
    snprintf(name, sizeof(name), "diagonal %s: cuda", label);
    ReportRet(PatchworkCSRDiagonalCUDA(&dM, dd, g_stream), 1, name);
    CHECK_CUDA(cudaFree(dd));
    return;
  }
  CheckRet(PatchworkCSRDiagonalRef(&hM, ref.data()), "PatchworkCSRDiagonalRef");
  for (int i = 0; i < M.nrow; i++)
    for (int e = M.ptr[i]; e < M.ptr[i + 1]; e++) present += M.col[e] == i;
  dd  = nul && M.nrow == 0 ? nullptr : DeviceAlloc<double>(M.nrow, true);
  ret = PatchworkCSRDiagonalCUDA(&dM, dd, g_stream);
  if (ret) Result(false, "diagonal %s: PatchworkCSRDiagonalCUDA returned %d (%s)", label, ret, cudaGetErrorString((cudaError_t)ret));
  else {
    const std::vector<double> d = ToHost(dd, M.nrow);

    Result(!memcmp(d.data(), ref.data(), sizeof(double) * d.size()), "diagonal %s: equal to the reference bit for bit (%d of %d rows hold one)", label, present, M.nrow);
  }
  CHECK_CUDA(cudaFree(dd));
}

static void Run(const char *label, const Mat &M, bool nul = false)
{
  PatchworkCSRMatrix dM = UploadMat(M, nul);
  char               name[128];
  int                maxrow = 0;

  for (int i = 0; i < M.nrow; i++) maxrow = std::max(maxrow, M.ptr[i + 1] - M.ptr[i]);
  snprintf(name, sizeof(name), "%s (%d x %d, %d entries, rows <= %d%s)", label, M.nrow, M.ncol, (int)M.col.size(), maxrow, nul ? ", NULL arrays" : "");
  CheckMult(name, M, dM, nul, false);
  CheckMult(name, M, dM, nul, true);
  CheckTranspose(name, M, dM);
  CheckDiagonal(name, M, dM, nul);
  FreeMat(dM);
}

/* ---------------------------------------------------------------------------------------------
   Timing: GPU median of 3 after a warm-up, CPU reference once */

struct Row {
  const char *op, *matrix;
  int         nrow, ncol, nnz;
  double      gpu_ms, cpu_ms;
};

template <typename G, typename C>
static Row Time(const char *op, const char *matrix, const Mat &M, G gpu, C cpu)
{
  cudaEvent_t        e0, e1;
  std::vector<float> t(3);
  Row                r = {op, matrix, M.nrow, M.ncol, (int)M.col.size(), 0, 0};

  CHECK_CUDA(cudaEventCreate(&e0));
  CHECK_CUDA(cudaEventCreate(&e1));
  gpu();
  for (auto &ms : t) {
    CHECK_CUDA(cudaEventRecord(e0, g_stream));
    gpu();
    CHECK_CUDA(cudaEventRecord(e1, g_stream));
    CHECK_CUDA(cudaEventSynchronize(e1));
    CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
  }
  std::sort(t.begin(), t.end());
  r.gpu_ms = t[1];
  CHECK_CUDA(cudaEventDestroy(e0));
  CHECK_CUDA(cudaEventDestroy(e1));
  const auto c0 = std::chrono::steady_clock::now();
  cpu();
  r.cpu_ms = 1e3 * Seconds(c0);
  return r;
}

/* Mult (z distinct), Transpose (allocating and freeing T included) and, square, Diagonal */
static void TimeOps(const char *matrix, const Mat &M, std::vector<Row> &rows)
{
  PatchworkCSRMatrix       dM = UploadMat(M, false), T;
  const PatchworkCSRMatrix hM = M.View();
  std::vector<double>      x(M.ncol, 1.0), z(M.nrow, 1.0), y(M.nrow);
  double                  *dx = Upload(x), *dz = Upload(z), *dy = DeviceAlloc<double>(M.nrow, false);

  rows.push_back(Time("mult", matrix, M, [&] { CheckRet(PatchworkCSRMultCUDA(&dM, dx, dz, dy, g_stream), "PatchworkCSRMultCUDA"); },
                      [&] { CheckRet(PatchworkCSRMultRef(&hM, x.data(), z.data(), y.data()), "PatchworkCSRMultRef"); }));
  rows.push_back(Time("transpose", matrix, M,
                      [&] {
                        CheckRet(PatchworkCSRTransposeCUDA(&dM, &T, g_stream), "PatchworkCSRTransposeCUDA");
                        CHECK_CUDA(cudaStreamSynchronize(g_stream));
                        PatchworkCSRMatrixFreeCUDA(&T);
                      },
                      [&] {
                        CheckRet(PatchworkCSRTransposeRef(&hM, &T), "PatchworkCSRTransposeRef");
                        PatchworkCSRMatrixFree(&T);
                      }));
  if (M.nrow == M.ncol)
    rows.push_back(Time("diagonal", matrix, M, [&] { CheckRet(PatchworkCSRDiagonalCUDA(&dM, dy, g_stream), "PatchworkCSRDiagonalCUDA"); },
                        [&] { CheckRet(PatchworkCSRDiagonalRef(&hM, y.data()), "PatchworkCSRDiagonalRef"); }));
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  CHECK_CUDA(cudaFree(dx));
  CHECK_CUDA(cudaFree(dz));
  CHECK_CUDA(cudaFree(dy));
  FreeMat(dM);
}

/* ---------------------------------------------------------------------------------------------
   Symmetrize: with a symmetric pattern both give, bit for bit, (m_ij + m_ji) * 0.5 for every entry,
   computed here from M's own values (one rounding of the sum: no tolerance); otherwise both return 3
   and leave the values alone */

/* M (square) with a mirror of value Spread() added where one is missing */
static Mat SymmetricPattern(const Mat &M)
{
  const Mat T = Transposed(M);
  Mat       S;

  S.nrow = M.nrow;
  S.ncol = M.ncol;
  for (int i = 0; i < M.nrow; i++) {
    int a = M.ptr[i], b = T.ptr[i];

    while (a < M.ptr[i + 1] || b < T.ptr[i + 1]) {
      const int ca = a < M.ptr[i + 1] ? M.col[a] : M.ncol, cb = b < T.ptr[i + 1] ? T.col[b] : M.ncol;

      S.col.push_back(std::min(ca, cb));
      S.val.push_back(ca <= cb ? M.val[a] : Spread());
      if (ca <= cb) a++;
      if (cb <= ca) b++;
    }
    S.ptr.push_back((int)S.col.size());
  }
  return S;
}

static void CheckSymmetrize(const char *label, const Mat &M)
{
  Mat                S  = M;
  PatchworkCSRMatrix hS = S.View(), dS = UploadMat(M, false);
  std::vector<double> want = M.val;
  bool                sym  = true;
  char                name[160];

  for (int i = 0; i < M.nrow; i++)
    for (int e = M.ptr[i]; e < M.ptr[i + 1]; e++) {
      const int  j = M.col[e];
      const auto f = std::lower_bound(M.col.begin() + M.ptr[j], M.col.begin() + M.ptr[j + 1], i);

      if (f == M.col.begin() + M.ptr[j + 1] || *f != i) sym = false;
      else want[e] = (M.val[e] + M.val[f - M.col.begin()]) * 0.5;
    }
  if (!sym) want = M.val;
  const int rr = PatchworkCSRSymmetrizeRef(&hS), rg = PatchworkCSRSymmetrizeCUDA(&dS, g_stream);
  snprintf(name, sizeof(name), "symmetrize %s (%s pattern), reference", label, sym ? "symmetric" : "nonsymmetric");
  ReportRet(rr, sym ? 0 : 3, name);
  snprintf(name, sizeof(name), "symmetrize %s (%s pattern), CUDA", label, sym ? "symmetric" : "nonsymmetric");
  ReportRet(rg, sym ? 0 : 3, name);
  const std::vector<double> g = ToHost(dS.val, M.val.size());
  size_t                    bad_ref = 0, bad_gpu = 0;

  for (size_t e = 0; e < want.size(); e++) {
    bad_ref += std::memcmp(&S.val[e], &want[e], sizeof(double)) != 0;
    bad_gpu += std::memcmp(&g[e], &want[e], sizeof(double)) != 0;
  }
  Result(bad_ref == 0 && bad_gpu == 0, "symmetrize %s: %zu entries, %zu (reference) and %zu (CUDA) differ from %s", label, want.size(), bad_ref, bad_gpu, sym ? "(m_ij + m_ji) * 0.5" : "the input");
  FreeMat(dS);
}

/* ---------------------------------------------------------------------------------------------
   Bad arguments: 1 from both */

static void BadArguments(void)
{
  const Mat                M  = RandomMat(12, 12, [] { return RandInt(1, 5); });
  const PatchworkCSRMatrix hM = M.View();
  PatchworkCSRMatrix       dM = UploadMat(M, false), T;
  std::vector<double>      hx(12, 1.0), hy(12);
  double                  *dx = Upload(hx), *dy = DeviceAlloc<double>(12, false);
  struct Case {
    const char *name;
    void (*spoil)(PatchworkCSRMatrix *m);
  };
  const Case cases[] = {
    {"negative rows", [](PatchworkCSRMatrix *m) { m->nrow = -1; }},
    {"negative columns", [](PatchworkCSRMatrix *m) { m->ncol = -1; }},
    {"negative entries", [](PatchworkCSRMatrix *m) { m->nnz = -1; }},
    {"NULL ptr", [](PatchworkCSRMatrix *m) { m->ptr = nullptr; }},
    {"NULL col", [](PatchworkCSRMatrix *m) { m->col = nullptr; }},
    {"NULL val", [](PatchworkCSRMatrix *m) { m->val = nullptr; }},
  };
  char name[96];

  for (const Case &c : cases) {
    PatchworkCSRMatrix h = hM, d = dM;

    c.spoil(&h);
    c.spoil(&d);
    snprintf(name, sizeof(name), "ref: mult, %s", c.name);
    ReportRet(PatchworkCSRMultRef(&h, hx.data(), nullptr, hy.data()), 1, name);
    snprintf(name, sizeof(name), "cuda: mult, %s", c.name);
    ReportRet(PatchworkCSRMultCUDA(&d, dx, nullptr, dy, g_stream), 1, name);
    snprintf(name, sizeof(name), "ref: transpose, %s", c.name);
    ReportRet(PatchworkCSRTransposeRef(&h, &T), 1, name);
    snprintf(name, sizeof(name), "cuda: transpose, %s", c.name);
    ReportRet(PatchworkCSRTransposeCUDA(&d, &T, g_stream), 1, name);
    snprintf(name, sizeof(name), "ref: diagonal, %s", c.name);
    ReportRet(PatchworkCSRDiagonalRef(&h, hy.data()), 1, name);
    snprintf(name, sizeof(name), "cuda: diagonal, %s", c.name);
    ReportRet(PatchworkCSRDiagonalCUDA(&d, dy, g_stream), 1, name);
    snprintf(name, sizeof(name), "ref: symmetrize, %s", c.name);
    ReportRet(PatchworkCSRSymmetrizeRef(&h), 1, name);
    snprintf(name, sizeof(name), "cuda: symmetrize, %s", c.name);
    ReportRet(PatchworkCSRSymmetrizeCUDA(&d, g_stream), 1, name);
  }
  ReportRet(PatchworkCSRSymmetrizeRef(nullptr), 1, "ref: symmetrize, NULL M");
  ReportRet(PatchworkCSRSymmetrizeCUDA(nullptr, g_stream), 1, "cuda: symmetrize, NULL M");
  ReportRet(PatchworkCSRMultRef(nullptr, hx.data(), nullptr, hy.data()), 1, "ref: mult, NULL M");
  ReportRet(PatchworkCSRMultCUDA(nullptr, dx, nullptr, dy, g_stream), 1, "cuda: mult, NULL M");
  ReportRet(PatchworkCSRMultRef(&hM, nullptr, nullptr, hy.data()), 1, "ref: mult, NULL x");
  ReportRet(PatchworkCSRMultCUDA(&dM, nullptr, nullptr, dy, g_stream), 1, "cuda: mult, NULL x");
  ReportRet(PatchworkCSRMultSingleRef(&hM, nullptr, hx.data(), nullptr, hy.data()), 1, "ref: mult single, NULL values");
  ReportRet(PatchworkCSRMultSingleCUDA(&dM, nullptr, dx, nullptr, dy, g_stream), 1, "cuda: mult single, NULL values");
  ReportRet(PatchworkCSRMultRef(&hM, hx.data(), nullptr, nullptr), 1, "ref: mult, NULL y");
  ReportRet(PatchworkCSRMultCUDA(&dM, dx, nullptr, nullptr, g_stream), 1, "cuda: mult, NULL y");
  ReportRet(PatchworkCSRTransposeRef(nullptr, &T), 1, "ref: transpose, NULL M");
  ReportRet(PatchworkCSRTransposeCUDA(nullptr, &T, g_stream), 1, "cuda: transpose, NULL M");
  ReportRet(PatchworkCSRTransposeRef(&hM, nullptr), 1, "ref: transpose, NULL T");
  ReportRet(PatchworkCSRTransposeCUDA(&dM, nullptr, g_stream), 1, "cuda: transpose, NULL T");
  ReportRet(PatchworkCSRDiagonalRef(nullptr, hy.data()), 1, "ref: diagonal, NULL M");
  ReportRet(PatchworkCSRDiagonalCUDA(nullptr, dy, g_stream), 1, "cuda: diagonal, NULL M");
  ReportRet(PatchworkCSRDiagonalRef(&hM, nullptr), 1, "ref: diagonal, NULL d");
  ReportRet(PatchworkCSRDiagonalCUDA(&dM, nullptr, g_stream), 1, "cuda: diagonal, NULL d");
  {
    PatchworkCSRMatrix h = hM, d = dM;

    h.ncol = d.ncol = 13;
    ReportRet(PatchworkCSRDiagonalRef(&h, hy.data()), 1, "ref: diagonal, 12 x 13");
    ReportRet(PatchworkCSRDiagonalCUDA(&d, dy, g_stream), 1, "cuda: diagonal, 12 x 13");
  }
  ReportRet(PatchworkCSRMultRef(&hM, hx.data(), nullptr, hy.data()), 0, "ref: mult, good arguments accepted");
  ReportRet(PatchworkCSRMultCUDA(&dM, dx, nullptr, dy, g_stream), 0, "cuda: mult, good arguments accepted");
  ReportRet(PatchworkCSRTransposeRef(&hM, &T), 0, "ref: transpose, good arguments accepted");
  PatchworkCSRMatrixFree(&T);
  ReportRet(PatchworkCSRTransposeCUDA(&dM, &T, g_stream), 0, "cuda: transpose, good arguments accepted");
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  PatchworkCSRMatrixFreeCUDA(&T);
  ReportRet(PatchworkCSRDiagonalRef(&hM, hy.data()), 0, "ref: diagonal, good arguments accepted");
  ReportRet(PatchworkCSRDiagonalCUDA(&dM, dy, g_stream), 0, "cuda: diagonal, good arguments accepted");
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  CHECK_CUDA(cudaFree(dx));
  CHECK_CUDA(cudaFree(dy));
  FreeMat(dM);
}

/* ---------------------------------------------------------------------------------------------
   JoinColumns, SplitColumns, IntMap: bit for bit */

static PatchworkCSR CsrOf(const PatchworkCSRMatrix &m)
{
  PatchworkCSR c;

  c.n   = m.nrow;
  c.ptr = m.ptr;
  c.col = m.col;
  c.val = m.val;
  return c;
}

static bool IsEmpty(const PatchworkCSRMatrix &m)
{
  return m.nrow == 0 && m.ncol == 0 && m.nnz == 0 && !m.ptr && !m.col && !m.val;
}

/* a device result of the library against the reference's host one: sizes, ptr, col, val */
static bool SameOnDevice(const PatchworkCSRMatrix &G, const PatchworkCSRMatrix &R)
{
  if (G.nrow != R.nrow || G.ncol != R.ncol || G.nnz != R.nnz || !G.ptr || (G.nnz > 0 && (!G.col || !G.val))) return false;
  const std::vector<int>    ptr = ToHost(G.ptr, (size_t)G.nrow + 1), col = ToHost(G.col, G.nnz);
  const std::vector<double> val = ToHost(G.val, G.nnz);

  return !memcmp(ptr.data(), R.ptr, sizeof(int) * ptr.size()) && (G.nnz == 0 || (!memcmp(col.data(), R.col, sizeof(int) * col.size()) && !memcmp(val.data(), R.val, sizeof(double) * val.size())));
}

static void CheckJoin(const char *label, const Mat &A, const Mat &B, int shift, int nrow, int ncol, bool nul)
{
  PatchworkCSRMatrix hA = A.View(), hB = B.View(), dA = UploadMat(A, nul), dB = UploadMat(B, nul), R, G;
  PatchworkCSR       ha = CsrOf(hA), hb = CsrOf(hB), da = CsrOf(dA), db = CsrOf(dB);
  int                rr, rg;

  if (nul) { /* the reference gets the NULLs too */
    if (A.nrow == 0) ha.ptr = hb.ptr = nullptr;
    if (A.col.empty()) ha.col = nullptr, ha.val = nullptr;
    if (B.col.empty()) hb.col = nullptr, hb.val = nullptr;
  }
  rr = PatchworkCSRJoinColumnsRef(&ha, &hb, shift, nrow, ncol, &R);
  memset(&G, 0xA5, sizeof(G)); /* junk that must be replaced */
  rg = PatchworkCSRJoinColumnsCUDA(&da, &db, shift, nrow, ncol, &G, g_stream);
  if (rr || rg) Result(false, "join %s: returned %d (reference), %d (CUDA: %s)", label, rr, rg, cudaGetErrorString((cudaError_t)rg));
  else {
    Result(SameOnDevice(G, R), "join %s: %d x %d, %d entries, equal to the reference bit for bit", label, R.nrow, R.ncol, R.nnz);
    PatchworkCSRMatrixFreeCUDA(&G);
  }
  if (!rr) PatchworkCSRMatrixFree(&R);
  FreeMat(dA);
  FreeMat(dB);
}

static void CheckSplitColumns(const char *label, const Mat &M, int cut, bool nul)
{
  const PatchworkCSRMatrix hM = M.View();
  PatchworkCSRMatrix       dM = UploadMat(M, nul), h = hM, RL, RH, GL, GH;
  int                      rr, rg;

  if (nul) {
    if (M.nrow == 0) h.ptr = nullptr;
    if (M.col.empty()) h.col = nullptr, h.val = nullptr;
  }
  rr = PatchworkCSRSplitColumnsRef(&h, cut, &RL, &RH);
  memset(&GL, 0xA5, sizeof(GL));
  memset(&GH, 0xA5, sizeof(GH));
  rg = PatchworkCSRSplitColumnsCUDA(&dM, cut, &GL, &GH, g_stream);
  if (rr || rg) Result(false, "split %s at %d: returned %d (reference), %d (CUDA: %s)", label, cut, rr, rg, cudaGetErrorString((cudaError_t)rg));
  else {
    Result(SameOnDevice(GL, RL) && SameOnDevice(GH, RH), "split %s at %d: Lo %d x %d (%d entries), Hi %d x %d (%d), equal to the reference bit for bit", label, cut, RL.nrow, RL.ncol, RL.nnz, RH.nrow, RH.ncol, RH.nnz);
    PatchworkCSRMatrixFreeCUDA(&GL);
    PatchworkCSRMatrixFreeCUDA(&GH);
  }
  if (!rr) {
    PatchworkCSRMatrixFree(&RL);
    PatchworkCSRMatrixFree(&RH);
  }
  FreeMat(dM);
}

/* Split at 0, a third, nrow (where <= ncol) and ncol */
static void CheckSplits(const char *label, const Mat &M, bool nul = false)
{
  for (int cut : {0, M.ncol / 3, std::min(M.nrow, M.ncol), M.ncol}) CheckSplitColumns(label, M, cut, nul);
}

static void CheckIntMap(int n, int nmap, bool nul)
{
  std::vector<int> map(nmap), idx(n), ref;
  int             *dmap, *didx, rr, rg;

  for (int &m : map) m = (int)(Rand() * 2e9); /* any int, negative too */
  for (int &k : idx) k = RandInt(0, nmap - 1);
  ref  = idx;
  dmap = nul && nmap == 0 ? nullptr : Upload(map);
  didx = nul && n == 0 ? nullptr : Upload(idx);
  rr   = PatchworkIntMapRef(n, nul && nmap == 0 ? nullptr : map.data(), nmap, nul && n == 0 ? nullptr : ref.data());
  rg   = PatchworkIntMapCUDA(n, dmap, nmap, didx, g_stream);
  if (rr || rg) Result(false, "int map %d into %d: returned %d (reference), %d (CUDA: %s)", n, nmap, rr, rg, cudaGetErrorString((cudaError_t)rg));
  else {
    const std::vector<int> g = ToHost(didx, n);
    size_t                 bad = 0;

    for (int k = 0; k < n; k++) bad += g[k] != ref[k] || ref[k] != map[idx[k]];
    Result(bad == 0, "int map %d indices into %d%s: equal to the reference and to map[idx] (%zu differ)", n, nmap, nul ? ", NULL arrays" : "", bad);
  }
  CHECK_CUDA(cudaFree(dmap));
  CHECK_CUDA(cudaFree(didx));
}

static void JoinSplitMapCases(bool quick, const Mat &P, const Mat &A)
{
  char name[160];

  { /* no rows, into 0 and 5 rows; one row; blocks without entries */
    Mat Z0, Z3;

    Z3.ncol = 3;
    for (bool nul : {false, true}) {
      CheckJoin(nul ? "no rows, NULL arrays" : "no rows", Z0, Z3, 0, 0, 3, nul);
      CheckJoin(nul ? "no rows into 5 x 9, NULL arrays" : "no rows into 5 x 9", Z0, Z3, 4, 5, 9, nul);
    }
    const Mat a1 = RandomMat(1, 1, [] { return 1; }), b1 = RandomMat(1, 4, [] { return 2; });
    CheckJoin("1 row", a1, b1, 1, 1, 5, false);
    CheckJoin("1 row into 3 x 9", a1, b1, 2, 3, 9, false);
    const Mat e = RandomMat(200, 200, [] { return 0; }), f = RandomMat(200, 150, [] { return RandInt(0, 12); });
    for (bool nul : {false, true}) {
      CheckJoin(nul ? "A without entries, NULL arrays" : "A without entries", e, f, 200, 200, 350, nul);
      CheckJoin(nul ? "B without entries, NULL arrays" : "B without entries", f, e, 200, 210, 420, nul);
    }
  }
  { /* a rank's block and its ghost columns: mixed rows (0 .. 2500 entries), then large */
    const int n = quick ? 300 : 3000;
    auto      len = [] {
      const double r = 0.5 * (Rand() + 1);
      return r < 0.1 ? 0 : r < 0.97 ? RandInt(1, 40) : RandInt(1001, 2500);
    };
    const Mat a = RandomMat(n, n, len), b = RandomMat(n, 4000, len);
    snprintf(name, sizeof(name), "mixed rows, %d + 4000 columns", n);
    CheckJoin(name, a, b, n, n, n + 4000, false);
    CheckJoin(name, a, b, n + 17, n + 5, n + 4100, false);
    const int m  = quick ? 20000 : 200000;
    const Mat al = RandomMat(m, m, [] { return RandInt(5, 30); }), bl = RandomMat(m, m / 4, [] { return RandInt(0, 8); });
    snprintf(name, sizeof(name), "large, %d + %d columns", m, m / 4);
    CheckJoin(name, al, bl, m, m, m + m / 4, false);
    /* Split of the joined one at the rank's columns */
    PatchworkCSRMatrix ha = al.View(), hb = bl.View(), J;
    const PatchworkCSR ca = CsrOf(ha), cb = CsrOf(hb);
    CheckRet(PatchworkCSRJoinColumnsRef(&ca, &cb, m, m, m + m / 4, &J), "PatchworkCSRJoinColumnsRef");
    Mat Jm;
    Jm.nrow = J.nrow;
    Jm.ncol = J.ncol;
    Jm.ptr.assign(J.ptr, J.ptr + J.nrow + 1);
    Jm.col.assign(J.col, J.col + J.nnz);
    Jm.val.assign(J.val, J.val + J.nnz);
    PatchworkCSRMatrixFree(&J);
    snprintf(name, sizeof(name), "joined %d x %d", Jm.nrow, Jm.ncol);
    CheckSplits(name, Jm);
  }
  { /* Split: the corners and the inputs of the other checks */
    Mat M0;

    M0.ncol = 7;
    CheckSplits("no rows", M0, false);
    CheckSplits("no rows, NULL arrays", M0, true);
    const Mat E = RandomMat(100, 50, [] { return 0; });
    CheckSplits("no entries", E, false);
    CheckSplits("no entries, NULL arrays", E, true);
    CheckSplits("5 x 0", RandomMat(5, 0, [] { return 0; }), true);
    CheckSplits("1 x 1", RandomMat(1, 1, [] { return 1; }));
    CheckSplits("one long row", RandomMat(1, 6000, [] { return 5000; }));
    CheckSplits("small square", RandomMat(300, 300, [] { return RandInt(0, 12); }));
    CheckSplits("P-like", P);
    CheckSplits("A-like", A);
  }
  for (int n : {0, 1, 7, 1000, 100000, 1000000}) {
    if (quick && n > 100000) break;
    for (int nmap : {1, 3000, 100000})
      for (bool nul : {false, true}) CheckIntMap(n, nmap, nul);
  }
  CheckIntMap(0, 0, true);
}

static void JoinSplitMapBadArguments(void)
{
  const Mat          A = RandomMat(10, 10, [] { return RandInt(1, 4); }), B = RandomMat(10, 6, [] { return RandInt(0, 3); });
  PatchworkCSRMatrix hA = A.View(), hB = B.View(), dA = UploadMat(A, false), dB = UploadMat(B, false), M, Lo, Hi;
  const PatchworkCSR ha = CsrOf(hA), hb = CsrOf(hB), da = CsrOf(dA), db = CsrOf(dB);
  char               name[128];

  /* Join: (A, B, shift, nrow, ncol) spoilt one at a time, on both */
  auto join = [&](const PatchworkCSR *a1, const PatchworkCSR *b1, const PatchworkCSR *a2, const PatchworkCSR *b2, int shift, int nrow, int ncol, const char *what) {
    memset(&M, 0xA5, sizeof(M));
    snprintf(name, sizeof(name), "ref: join, %s", what);
    ReportRet(PatchworkCSRJoinColumnsRef(a1, b1, shift, nrow, ncol, &M), 1, name);
    Result(IsEmpty(M), "ref: join, %s: M empty", what);
    memset(&M, 0xA5, sizeof(M));
    snprintf(name, sizeof(name), "cuda: join, %s", what);
    ReportRet(PatchworkCSRJoinColumnsCUDA(a2, b2, shift, nrow, ncol, &M, g_stream), 1, name);
    Result(IsEmpty(M), "cuda: join, %s: M empty", what);
  };
  join(nullptr, &hb, nullptr, &db, 10, 10, 16, "NULL A");
  join(&ha, nullptr, &da, nullptr, 10, 10, 16, "NULL B");
  {
    PatchworkCSR a1 = ha, a2 = da, b1 = hb, b2 = db;

    a1.n = a2.n = -1;
    join(&a1, &hb, &a2, &db, 10, 10, 16, "A->n < 0");
    b1.n = b2.n = 9;
    join(&ha, &b1, &da, &b2, 10, 10, 16, "B->n != A->n");
  }
  join(&ha, &hb, &da, &db, 9, 10, 16, "shift < A->n");
  join(&ha, &hb, &da, &db, 10, 9, 16, "nrow < A->n");
  join(&ha, &hb, &da, &db, 10, 10, 9, "ncol < shift");
  ReportRet(PatchworkCSRJoinColumnsRef(&ha, &hb, 10, 10, 16, nullptr), 1, "ref: join, NULL M");
  ReportRet(PatchworkCSRJoinColumnsCUDA(&da, &db, 10, 10, 16, nullptr, g_stream), 1, "cuda: join, NULL M");
  { /* the reference reads A->ptr[n] without a check: the CUDA version alone */
    PatchworkCSR a2 = da, b2 = db;

    a2.ptr = nullptr;
    memset(&M, 0xA5, sizeof(M));
    ReportRet(PatchworkCSRJoinColumnsCUDA(&a2, &db, 10, 10, 16, &M, g_stream), 1, "cuda: join, NULL A->ptr");
    Result(IsEmpty(M), "cuda: join, NULL A->ptr: M empty");
    b2.ptr = nullptr;
    ReportRet(PatchworkCSRJoinColumnsCUDA(&da, &b2, 10, 10, 16, &M, g_stream), 1, "cuda: join, NULL B->ptr");
  }
  ReportRet(PatchworkCSRJoinColumnsCUDA(&da, &db, 10, 10, 16, &M, g_stream), 0, "cuda: join, good arguments accepted");
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  PatchworkCSRMatrixFreeCUDA(&M);

  /* Split */
  auto split = [&](const PatchworkCSRMatrix *m1, const PatchworkCSRMatrix *m2, int cut, bool withlo, bool withhi, const char *what) {
    memset(&Lo, 0xA5, sizeof(Lo));
    memset(&Hi, 0xA5, sizeof(Hi));
    snprintf(name, sizeof(name), "ref: split, %s", what);
    ReportRet(PatchworkCSRSplitColumnsRef(m1, cut, withlo ? &Lo : nullptr, withhi ? &Hi : nullptr), 1, name);
    Result((!withlo || IsEmpty(Lo)) && (!withhi || IsEmpty(Hi)), "ref: split, %s: Lo and Hi empty", what);
    memset(&Lo, 0xA5, sizeof(Lo));
    memset(&Hi, 0xA5, sizeof(Hi));
    snprintf(name, sizeof(name), "cuda: split, %s", what);
    ReportRet(PatchworkCSRSplitColumnsCUDA(m2, cut, withlo ? &Lo : nullptr, withhi ? &Hi : nullptr, g_stream), 1, name);
    Result((!withlo || IsEmpty(Lo)) && (!withhi || IsEmpty(Hi)), "cuda: split, %s: Lo and Hi empty", what);
  };
  split(nullptr, nullptr, 3, true, true, "NULL M");
  split(&hA, &dA, 3, false, true, "NULL Lo");
  split(&hA, &dA, 3, true, false, "NULL Hi");
  split(&hA, &dA, -1, true, true, "cut < 0");
  split(&hA, &dA, 11, true, true, "cut > ncol");
  struct Spoil {
    const char *name;
    void (*f)(PatchworkCSRMatrix *m);
  };
  const Spoil spoils[] = {
    {"nrow < 0", [](PatchworkCSRMatrix *m) { m->nrow = -1; }}, {"ncol < 0", [](PatchworkCSRMatrix *m) { m->ncol = -1; }},
    {"nnz < 0", [](PatchworkCSRMatrix *m) { m->nnz = -1; }},   {"NULL ptr", [](PatchworkCSRMatrix *m) { m->ptr = nullptr; }},
    {"NULL col", [](PatchworkCSRMatrix *m) { m->col = nullptr; }}, {"NULL val", [](PatchworkCSRMatrix *m) { m->val = nullptr; }},
  };
  for (const Spoil &sp : spoils) {
    PatchworkCSRMatrix h = hA, d = dA;

    sp.f(&h);
    sp.f(&d);
    split(&h, &d, 0, true, true, sp.name);
  }
  ReportRet(PatchworkCSRSplitColumnsCUDA(&dA, 10, &Lo, &Hi, g_stream), 0, "cuda: split, good arguments accepted (cut = ncol)");
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  PatchworkCSRMatrixFreeCUDA(&Lo);
  PatchworkCSRMatrixFreeCUDA(&Hi);

  /* IntMap */
  std::vector<int> map = {3, 2, 1, 0}, idx = {0, 1, 2, 3, 0};
  int             *dmap = Upload(map), *didx;
  auto             intmap = [&](int n, bool nulmap, int nmap, bool nulidx, int spoil, const char *what) {
    std::vector<int> h = idx;

    if (spoil != 0) h[4] = spoil;
    didx = Upload(h);
    snprintf(name, sizeof(name), "ref: int map, %s", what);
    ReportRet(PatchworkIntMapRef(n, nulmap ? nullptr : map.data(), nmap, nulidx ? nullptr : h.data()), 1, name);
    snprintf(name, sizeof(name), "cuda: int map, %s", what);
    ReportRet(PatchworkIntMapCUDA(n, nulmap ? nullptr : dmap, nmap, nulidx ? nullptr : didx, g_stream), 1, name);
    CHECK_CUDA(cudaFree(didx));
  };
  intmap(-1, false, 4, false, 0, "n < 0");
  intmap(5, false, -1, false, 0, "nmap < 0");
  intmap(5, true, 4, false, 0, "NULL map");
  intmap(5, false, 4, true, 0, "NULL idx");
  intmap(5, false, 0, false, 0, "an empty map");
  intmap(5, false, 4, false, 4, "an index = nmap");
  intmap(5, false, 4, false, -1, "an index < 0");
  didx = Upload(idx);
  ReportRet(PatchworkIntMapCUDA(5, dmap, 4, didx, g_stream), 0, "cuda: int map, good arguments accepted");
  const std::vector<int> g = ToHost(didx, 5);
  Result(g[0] == 3 && g[1] == 2 && g[2] == 1 && g[3] == 0 && g[4] == 3, "cuda: int map, good arguments: idx = map[idx]");
  CHECK_CUDA(cudaFree(didx));
  CHECK_CUDA(cudaFree(dmap));
  FreeMat(dA);
  FreeMat(dB);
}

/* ---------------------------------------------------------------------------------------------
   Add: M = A + B, the CUDA version against the reference bit for bit (an entry in both is the one
   rounding a + b, PatchworkCSRAddRow on both sides) */

enum { ADD_MIXED, ADD_IDENTICAL, ADD_DISJOINT, ADD_OVERLAP, ADD_ONLY_A, ADD_ONLY_B, ADD_EMPTY, ADD_MODES };
static const char *add_mode[ADD_MODES] = {"mixed rows", "identical patterns", "disjoint patterns", "overlapping patterns", "rows only in A", "rows only in B", "no entries"};

/* k (at most ncol) distinct columns of [0, ncol), ascending: few of many drawn, else a partial
   shuffle of perm (a permutation of 0..ncol-1 that stays one) */
static std::vector<int> DrawColumns(int ncol, int k, std::vector<int> &perm)
{
  std::vector<int> row;

  k = std::min(k, ncol);
  if ((size_t)k * 8 < (size_t)ncol) {
    while ((int)row.size() < k) {
      for (int t = (int)row.size(); t < k; t++) row.push_back(RandInt(0, ncol - 1));
      std::sort(row.begin(), row.end());
      row.erase(std::unique(row.begin(), row.end()), row.end());
    }
  } else if (k > 0) {
    if (perm.size() != (size_t)ncol) {
      perm.resize(ncol);
      for (int j = 0; j < ncol; j++) perm[j] = j;
    }
    for (int t = 0; t < k; t++) std::swap(perm[t], perm[RandInt(t, ncol - 1)]);
    row.assign(perm.begin(), perm.begin() + k);
    std::sort(row.begin(), row.end());
  }
  return row;
}

struct AddPair {
  Mat    A, B;
  size_t cancel = 0; /* entries in both whose sum is exactly 0 */
};

/* A and B, n x ncol, each row's two patterns as mode says (ADD_MIXED: each row one of the others at
   random): identical; disjoint; overlapping (B takes about half of A's columns and len()/2 of its
   own); only in A; only in B; empty. Where both hold a column B's value is -a a quarter of the time
   (the sum cancels to exactly 0), else a Spread() of its own. */
template <typename F>
static AddPair MakeAddPair(int n, int ncol, int mode, F len)
{
  AddPair          P;
  std::vector<int> perm, ca, cb;

  P.A.nrow = P.B.nrow = n;
  P.A.ncol = P.B.ncol = ncol;
  P.A.ptr.reserve((size_t)n + 1);
  P.B.ptr.reserve((size_t)n + 1);
  for (int i = 0; i < n; i++) {
    const int m = mode == ADD_MIXED ? RandInt(ADD_IDENTICAL, ADD_EMPTY) : mode;
    const int la = len(), lb = len();

    ca.clear();
    cb.clear();
    switch (m) {
    case ADD_IDENTICAL: cb = ca = DrawColumns(ncol, la, perm); break;
    case ADD_DISJOINT:
      for (int j : DrawColumns(ncol, la + lb, perm)) (Rand() < 0 ? ca : cb).push_back(j);
      break;
    case ADD_OVERLAP:
      ca = DrawColumns(ncol, la, perm);
      for (int j : ca)
        if (Rand() < 0) cb.push_back(j);
      for (int j : DrawColumns(ncol, lb / 2, perm)) cb.push_back(j);
      std::sort(cb.begin(), cb.end());
      cb.erase(std::unique(cb.begin(), cb.end()), cb.end());
      break;
    case ADD_ONLY_A: ca = DrawColumns(ncol, la, perm); break;
    case ADD_ONLY_B: cb = DrawColumns(ncol, lb, perm); break;
    default: break;
    }
    const size_t a0 = P.A.col.size();
    for (int j : ca) {
      P.A.col.push_back(j);
      P.A.val.push_back(Spread());
    }
    for (int j : cb) {
      const auto f    = std::lower_bound(ca.begin(), ca.end(), j);
      const bool both = f != ca.end() && *f == j && Rand() < -0.5;

      P.B.col.push_back(j);
      P.B.val.push_back(both ? -P.A.val[a0 + (f - ca.begin())] : Spread());
      P.cancel += both;
    }
    P.A.ptr.push_back((int)P.A.col.size());
    P.B.ptr.push_back((int)P.B.col.size());
  }
  return P;
}

/* Add on both: the CUDA result equal to the reference's bit for bit (sizes, ptr, col, val), and the
   reference holding the cancelled entries as +0. nul: NULL for the empty arrays on both sides. */
static void CheckAdd(const char *label, const AddPair &P, int ncol, bool nul)
{
  PatchworkCSRMatrix hA = P.A.View(), hB = P.B.View(), dA = UploadMat(P.A, nul), dB = UploadMat(P.B, nul), R, G;
  PatchworkCSR       ha = CsrOf(hA), hb = CsrOf(hB), da = CsrOf(dA), db = CsrOf(dB);
  char               name[224];
  int                rr, rg;

  snprintf(name, sizeof(name), "add %s (%d rows, %d + %d entries, ncol %d%s)", label, P.A.nrow, (int)P.A.col.size(), (int)P.B.col.size(), ncol, nul ? ", NULL arrays" : "");
  if (nul) {
    if (P.A.nrow == 0) ha.ptr = hb.ptr = nullptr;
    if (P.A.col.empty()) ha.col = nullptr, ha.val = nullptr;
    if (P.B.col.empty()) hb.col = nullptr, hb.val = nullptr;
  }
  rr = PatchworkCSRAddRef(&ha, &hb, ncol, &R);
  memset(&G, 0xA5, sizeof(G)); /* junk that must be replaced */
  rg = PatchworkCSRAddCUDA(&da, &db, ncol, &G, g_stream);
  if (rr || rg) Result(false, "%s: returned %d (reference), %d (CUDA: %s)", name, rr, rg, cudaGetErrorString((cudaError_t)rg));
  else {
    size_t zeros = 0;

    for (int e = 0; e < R.nnz; e++) zeros += R.val[e] == 0 && !std::signbit(R.val[e]);
    Result(R.nrow == P.A.nrow && R.ncol == ncol && SameOnDevice(G, R), "%s: %d x %d, %d entries, equal to the reference bit for bit", name, G.nrow, G.ncol, G.nnz);
    Result(zeros == P.cancel, "%s: the %zu entries that cancel are stored as +0 (%zu)", name, P.cancel, zeros);
    PatchworkCSRMatrixFreeCUDA(&G);
  }
  if (!rr) PatchworkCSRMatrixFree(&R);
  FreeMat(dA);
  FreeMat(dB);
}

/* the corners, every kind of row alone, rows of 0 .. 2500 entries, and *L: ~1e6 rows of ~30 entries
   each side (kept for the timing table) */
static void AddCases(bool quick, AddPair &L)
{
  auto small = [] { return RandInt(0, 12); };
  auto wide  = [] { return RandInt(10, 40); };

  for (bool nul : {false, true}) {
    CheckAdd("no rows", MakeAddPair(0, 0, ADD_MIXED, small), 0, nul);
    CheckAdd("no rows", MakeAddPair(0, 7, ADD_MIXED, small), 9, nul);
    CheckAdd("no columns", MakeAddPair(5, 0, ADD_MIXED, small), 0, nul);
    CheckAdd("no entries", MakeAddPair(100, 50, ADD_EMPTY, small), 53, nul);
  }
  CheckAdd("1 x 1, identical", MakeAddPair(1, 1, ADD_IDENTICAL, [] { return 1; }), 1, false);
  CheckAdd("1 x 1, only B", MakeAddPair(1, 1, ADD_ONLY_B, [] { return 1; }), 1, true);
  for (int mode = ADD_MIXED; mode < ADD_MODES; mode++) {
    const bool nul = mode == ADD_ONLY_A || mode == ADD_ONLY_B || mode == ADD_EMPTY;

    CheckAdd(add_mode[mode], MakeAddPair(300, 300, mode, small), 300, nul);
    CheckAdd(add_mode[mode], MakeAddPair(quick ? 200 : 2000, 3000, mode, wide), 3005, nul);
  }
  CheckAdd("one long row, overlapping", MakeAddPair(1, 6000, ADD_OVERLAP, [] { return RandInt(2000, 3000); }), 6000, false);
  CheckAdd("one long row, identical", MakeAddPair(1, 6000, ADD_IDENTICAL, [] { return 5000; }), 6000, false);
  { /* rows of 0 entries beside rows of over 1000 */
    const int n = quick ? 300 : 3000;
    auto      len = [] {
      const double r = 0.5 * (Rand() + 1);
      return r < 0.1 ? 0 : r < 0.97 ? RandInt(1, 40) : RandInt(1001, 2500);
    };
    CheckAdd("mixed rows, 0 .. 2500 entries", MakeAddPair(n, 4000, ADD_MIXED, len), 4000, false);
  }
  { /* large: 20 .. 40 entries a row each side */
    const int n = quick ? 20000 : 1000000;
    char      name[64];

    L = MakeAddPair(n, n, ADD_MIXED, [] { return RandInt(20, 40); });
    snprintf(name, sizeof(name), "large, %s", add_mode[ADD_MIXED]);
    CheckAdd(name, L, n, false);
    const AddPair I = MakeAddPair(quick ? 20000 : 300000, quick ? 20000 : 300000, ADD_OVERLAP, [] { return RandInt(20, 40); });
    CheckAdd("large, overlapping", I, I.A.ncol, false);
  }
}

/* Bad arguments: 1 from both, M left empty */
static void AddBadArguments(void)
{
  const Mat          A = RandomMat(10, 10, [] { return RandInt(1, 4); }), B = RandomMat(10, 10, [] { return RandInt(0, 3); });
  PatchworkCSRMatrix hA = A.View(), hB = B.View(), dA = UploadMat(A, false), dB = UploadMat(B, false), M;
  const PatchworkCSR ha = CsrOf(hA), hb = CsrOf(hB), da = CsrOf(dA), db = CsrOf(dB);
  char               name[128];

  auto add = [&](const PatchworkCSR *a1, const PatchworkCSR *b1, const PatchworkCSR *a2, const PatchworkCSR *b2, int ncol, const char *what) {
    memset(&M, 0xA5, sizeof(M));
    snprintf(name, sizeof(name), "ref: add, %s", what);
    ReportRet(PatchworkCSRAddRef(a1, b1, ncol, &M), 1, name);
    Result(IsEmpty(M), "ref: add, %s: M empty", what);
    memset(&M, 0xA5, sizeof(M));
    snprintf(name, sizeof(name), "cuda: add, %s", what);
    ReportRet(PatchworkCSRAddCUDA(a2, b2, ncol, &M, g_stream), 1, name);
    Result(IsEmpty(M), "cuda: add, %s: M empty", what);
  };
  add(nullptr, &hb, nullptr, &db, 10, "NULL A");
  add(&ha, nullptr, &da, nullptr, 10, "NULL B");
  {
    PatchworkCSR a1 = ha, a2 = da, b1 = hb, b2 = db;

    b1.n = b2.n = 9;
    add(&ha, &b1, &da, &b2, 10, "B->n < A->n");
    b1.n = b2.n = 11;
    add(&ha, &b1, &da, &b2, 10, "B->n > A->n");
    a1.n = a2.n = -1;
    add(&a1, &hb, &a2, &db, 10, "A->n < 0");
    b1.n = b2.n = -1;
    add(&a1, &b1, &a2, &b2, 10, "A->n = B->n < 0");
  }
  add(&ha, &hb, &da, &db, -1, "ncol < 0");
  {
    PatchworkCSR a1 = ha, a2 = da, b1 = hb, b2 = db;

    a1.ptr = a2.ptr = nullptr;
    add(&a1, &hb, &a2, &db, 10, "NULL A->ptr with rows");
    b1.ptr = b2.ptr = nullptr;
    add(&ha, &b1, &da, &b2, 10, "NULL B->ptr with rows");
  }
  ReportRet(PatchworkCSRAddRef(&ha, &hb, 10, nullptr), 1, "ref: add, NULL M");
  ReportRet(PatchworkCSRAddCUDA(&da, &db, 10, nullptr, g_stream), 1, "cuda: add, NULL M");
  ReportRet(PatchworkCSRAddCUDA(&da, &db, 10, &M, g_stream), 0, "cuda: add, good arguments accepted");
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  PatchworkCSRMatrixFreeCUDA(&M);
  FreeMat(dA);
  FreeMat(dB);
}

/* Add (allocating and freeing M included); the table's sizes are A's */
static void TimeAdd(const char *matrix, const AddPair &P, std::vector<Row> &rows)
{
  PatchworkCSRMatrix dA = UploadMat(P.A, false), dB = UploadMat(P.B, false), hA = P.A.View(), hB = P.B.View(), M;
  const PatchworkCSR da = CsrOf(dA), db = CsrOf(dB), ha = CsrOf(hA), hb = CsrOf(hB);

  rows.push_back(Time("add", matrix, P.A,
                      [&] {
                        CheckRet(PatchworkCSRAddCUDA(&da, &db, P.A.ncol, &M, g_stream), "PatchworkCSRAddCUDA");
                        PatchworkCSRMatrixFreeCUDA(&M);
                      },
                      [&] {
                        CheckRet(PatchworkCSRAddRef(&ha, &hb, P.A.ncol, &M), "PatchworkCSRAddRef");
                        PatchworkCSRMatrixFree(&M);
                      }));
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  FreeMat(dA);
  FreeMat(dB);
}

int main(int argc, char **argv)
{
  bool quick;
  int  rc = GpuTestStart(argc, argv, &quick);

  if (rc >= 0) return rc;
  BadArguments();
  { /* corners: no rows, no entries, one column, one long row */
    Mat M0;

    M0.ncol = 7;
    Run("no rows", M0, false);
    Run("no rows", M0, true);
    M0.ncol = 0;
    Run("no rows, no columns", M0, true);
    const Mat E = RandomMat(100, 50, [] { return 0; });
    Run("no entries", E, false);
    Run("no entries", E, true);
    Run("5 x 0", RandomMat(5, 0, [] { return 0; }), true);
    Run("1 x 1", RandomMat(1, 1, [] { return 1; }));
    Run("one column", RandomMat(5000, 1, [] { return RandInt(0, 1); }));
    Run("one long row", RandomMat(1, 6000, [] { return 5000; }));
    Run("small square", RandomMat(300, 300, [] { return RandInt(0, 12); }));
  }
  { /* rows of 0 entries beside rows of over 1000 */
    const int n = quick ? 300 : 3000;
    auto      len = [] {
      const double r = 0.5 * (Rand() + 1);
      return r < 0.1 ? 0 : r < 0.97 ? RandInt(1, 40) : RandInt(1001, 2500);
    };
    Run("mixed rows, rectangular", RandomMat(n, 4000, len));
    Run("mixed rows, square", RandomMat(4000, 4000, len));
  }
  const int np = quick ? 20000 : 1000000, na = quick ? 3000 : 200000;
  const Mat P = RandomMat(np, np / 16, [] { return RandInt(3, 8); });
  const Mat R = Transposed(P);
  const Mat A = RandomMat(na, na, [] { return RandInt(20, 60); });

  Run("P-like", P);
  Run("R-like (P^T)", R);
  Run("A-like", A);
  CheckSymmetrize("1 x 1", RandomMat(1, 1, [] { return 1; }));
  CheckSymmetrize("small square", SymmetricPattern(RandomMat(300, 300, [] { return RandInt(0, 12); })));
  CheckSymmetrize("small square", RandomMat(300, 300, [] { return RandInt(2, 12); }));
  CheckSymmetrize("A-like", SymmetricPattern(A));
  CheckSymmetrize("A-like", A);
  {
    const Mat D = RandomMat(50, 50, [] { return 0; }); /* no entries: nothing to do */
    CheckSymmetrize("no entries", D);
  }
  JoinSplitMapCases(quick, P, A);
  JoinSplitMapBadArguments();
  AddPair L;
  AddCases(quick, L);
  AddBadArguments();
  if (!quick) {
    std::vector<Row> rows;

    TimeOps("P-like", P, rows);
    TimeOps("R-like (P^T)", R, rows);
    TimeOps("A-like", A, rows);
    TimeAdd("large A + B", L, rows);
    printf("# CSR operations (GPU: CUDA events, median of 3 after a warm-up; CPU: the reference, one core)\n");
    printf("# %-10s %-13s %9s %9s %10s %9s %9s %8s\n", "op", "matrix", "rows", "cols", "nnz", "GPU ms", "CPU ms", "speedup");
    for (const Row &r : rows)
      printf("# %-10s %-13s %9d %9d %10d %9.3f %9.2f %7.1fx\n", r.op, r.matrix, r.nrow, r.ncol, r.nnz, r.gpu_ms, r.cpu_ms, r.cpu_ms / std::max(r.gpu_ms, 1e-3));
  }
  CHECK_CUDA(cudaStreamDestroy(g_stream));
  CHECK_CUDA(cudaDeviceSynchronize());
  /* one line, last: the scripts take it as the summary */
  printf("# %d passed, %d failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
