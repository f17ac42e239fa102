/* GPU vs CPU: the Galerkin product Ac = P^T A P of PCPATCHAMG (cuda/amg_galerkin.cu vs
   src/core/amg_galerkin_ref.c), and the reference itself against the triple product evaluated
   densely in long double. Patterns must be equal exactly (row pointers and columns, entry by entry).
   Values are compared to a bound derived from double rounding: entry (I, J) is a sum of N products
   P_kI a_kl P_lJ, evaluated as sums of two-factor products nested two deep, so each evaluation is
   within gamma_{N+1} M of the exact value (M = sum of |terms|, gamma_k ~ k eps / 2), whatever the
   order of the sums; GPU vs CPU is two evaluations: |gpu - ref| <= 8 eps N M leaves a factor 4
   for the rounding of M and N themselves, which come from the reference run on |A|, |P| and on the
   patterns with every value 1. Against long double: 4 eps N M.
   Inputs: the 7-point Laplacian with the smoothed prolongator of PatchworkSAProlongRef (3x3x3
   aggregates, 2x2x2 ones, random aggregates); random nonsymmetric-valued A with a symmetric pattern,
   repeated entries and empty rows, with random P of 0..k entries a row; the corner cases (no rows,
   no entries in A or in P, one coarse column, rows stored at an offset); inputs whose rows reach
   every bin of the kernel: dense P with a few columns, rows of hundreds to thousands of columns
   with ncol <= 4096 (a column is its own slot) and > 4096 (hashed in shared memory, and rows of
   over 2048 columns: the global-memory tables). Bad arguments must be refused with 1 by both.
   The full run ends with a timing table (GPU ms from CUDA events, median of 3 after a warm-up; CPU
   ms of the reference on one core) for the Laplacian at 128^3 and 256^3 with 3x3x3 aggregates.
   Prints `ok ...` or `FAIL ...` per check and `# N passed, N failed` last; exits 0 when all pass,
   1 otherwise, 77 without a CUDA device.

   Usage: test_amg_galerkin_kernels [--quick]   (--quick: small cases, for compute-sanitizer) */
#include "gputest.h"
#include <chrono>
#include <cmath>
#include <cfloat>
#include <patchwork/amg_kernel.h>

/* A square level matrix; off > 0 stores its rows from entry off on (ptr[0] = off, junk before) */
struct Csr {
  int                 n = 0;
  std::vector<int>    ptr, col;
  std::vector<double> val;
  PatchworkCSR        View() const { return {n, ptr.data(), col.data(), val.data()}; }
};

/* A prolongator on the host (vectors, not malloc'd: the test owns it) */
struct Mat {
  int                 nrow = 0, ncol = 0;
  std::vector<int>    ptr, col;
  std::vector<double> val;
  PatchworkCSRMatrix  View() const
  {
    return {nrow, ncol, (int)col.size() - ptr[0], (int *)ptr.data(), (int *)col.data(), (double *)val.data()};
  }
};

static int RandInt(int lo, int hi) /* uniform in [lo, hi] */
{
  return lo + (int)((Rand() + 1.0) * 0.5 * (hi - lo + 1)) % (hi - lo + 1);
}

static double Seconds(std::chrono::steady_clock::time_point t0)
{
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/* ---------------------------------------------------------------------------------------------
   Inputs */

/* The 7-point Laplacian on an m^3 grid, x fastest */
static Csr Laplacian7(int m)
{
  Csr A;

  A.n = m * m * m;
  A.ptr.reserve((size_t)A.n + 1);
  A.col.reserve((size_t)A.n * 7);
  A.val.reserve((size_t)A.n * 7);
  A.ptr.push_back(0);
  for (int z = 0; z < m; z++)
    for (int y = 0; y < m; y++)
      for (int x = 0; x < m; x++) {
        const int d[7][3] = {{0, 0, -1}, {0, -1, 0}, {-1, 0, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};

        for (auto &o : d) {
          const int X = x + o[0], Y = y + o[1], Z = z + o[2];

          if (X < 0 || Y < 0 || Z < 0 || X >= m || Y >= m || Z >= m) continue;
          A.col.push_back((Z * m + Y) * m + X);
          A.val.push_back(o[0] || o[1] || o[2] ? -1.0 : 6.0);
        }
        A.ptr.push_back((int)A.col.size());
      }
  return A;
}

/* Aggregates: b^3 blocks of the m^3 grid (b > 0), or random ones (b = 0, about n / 20 of them) */
static std::vector<int> Aggregates(int m, int b, int *naggs)
{
  std::vector<int> agg((size_t)m * m * m);

  if (b > 0) {
    const int nb = (m + b - 1) / b;

    *naggs = nb * nb * nb;
    for (int z = 0; z < m; z++)
      for (int y = 0; y < m; y++)
        for (int x = 0; x < m; x++) agg[((size_t)z * m + y) * m + x] = ((z / b) * nb + y / b) * nb + x / b;
  } else {
    *naggs = std::max(1, (int)(agg.size() / 20));
    for (auto &a : agg) a = RandInt(0, *naggs - 1);
  }
  return agg;
}

/* The smoothed prolongator of A for the aggregates (s_i = (4/3) / (2 a_ii): the Jacobi damping with
   the Gershgorin bound 2 of D^{-1} A), copied into a Mat */
static Mat Prolong(const Csr &A, const std::vector<int> &agg, int naggs)
{
  std::vector<double> s(A.n);
  PatchworkCSRMatrix  P;
  Mat                 M;

  for (int i = 0; i < A.n; i++) {
    double d = 0;
    for (int e = A.ptr[i]; e < A.ptr[i + 1]; e++)
      if (A.col[e] == i) d += A.val[e];
    s[i] = d != 0 ? (4.0 / 3.0) / (2.0 * d) : 0.0;
  }
  const PatchworkCSR a = A.View();
  CheckRet(PatchworkSAProlongRef(&a, agg.data(), naggs, NULL, s.data(), &P, NULL), "PatchworkSAProlongRef");
  M.nrow = P.nrow;
  M.ncol = P.ncol;
  M.ptr.assign(P.ptr, P.ptr + P.nrow + 1);
  M.col.assign(P.col, P.col + P.nnz);
  M.val.assign(P.val, P.val + P.nnz);
  PatchworkCSRMatrixFree(&P);
  return M;
}

/* A symmetric pattern with about deg entries a row (some repeated), random values, the diagonal on
   all rows but a fraction `empty` of them, which stay empty */
static Csr RandomA(int n, int deg, double empty)
{
  std::vector<std::vector<int>> adj(n);
  std::vector<char>             hollow(n);
  Csr                           A;

  for (int i = 0; i < n; i++) hollow[i] = (Rand() + 1) * 0.5 < empty;
  for (int i = 0; i < n; i++) {
    if (hollow[i]) continue;
    adj[i].push_back(i);
    for (int e = RandInt(0, deg) / 2; e > 0; e--) {
      const int j = RandInt(0, n - 1);

      if (hollow[j]) continue;
      adj[i].push_back(j);
      if (j != i) adj[j].push_back(i);
      if (Rand() > 0.9) adj[i].push_back(j); /* stored twice: both count */
    }
  }
  A.n = n;
  A.ptr.push_back(0);
  for (int i = 0; i < n; i++) {
    for (int j : adj[i]) {
      A.col.push_back(j);
      A.val.push_back(Rand());
    }
    A.ptr.push_back((int)A.col.size());
  }
  return A;
}

/* n x ncol, kmin..kmax distinct random columns a row (all of them where kmax >= ncol), ascending */
static Mat RandomP(int n, int ncol, int kmin, int kmax)
{
  Mat              P;
  std::vector<int> pick(ncol);

  P.nrow = n;
  P.ncol = ncol;
  P.ptr.push_back(0);
  for (int J = 0; J < ncol; J++) pick[J] = J;
  for (int i = 0; i < n; i++) {
    const int k = std::min(ncol, RandInt(kmin, kmax));

    for (int t = 0; t < k; t++) std::swap(pick[t], pick[RandInt(t, ncol - 1)]); /* partial shuffle */
    std::vector<int> row(pick.begin(), pick.begin() + k);
    std::sort(row.begin(), row.end());
    for (int J : row) {
      P.col.push_back(J);
      P.val.push_back(Rand());
    }
    P.ptr.push_back((int)P.col.size());
  }
  return P;
}

/* The same rows stored from entry off on, with junk (out-of-range columns) before them */
template <typename M>
static M Offset(M X, int off)
{
  for (auto &p : X.ptr) p += off;
  X.col.insert(X.col.begin(), off, -7);
  X.val.insert(X.val.begin(), off, 1e300);
  return X;
}

/* Every value replaced by f(value) */
template <typename M, typename F>
static M Map(M X, F f)
{
  for (auto &v : X.val) v = f(v);
  return X;
}

/* ---------------------------------------------------------------------------------------------
   Checks */

struct HostCSR { /* a host copy of a PatchworkCSRMatrix */
  int                 nrow = 0, ncol = 0, nnz = 0;
  std::vector<int>    ptr, col;
  std::vector<double> val;
};

static HostCSR Copy(const PatchworkCSRMatrix &M, bool device)
{
  HostCSR R;

  R.nrow = M.nrow;
  R.ncol = M.ncol;
  R.nnz  = M.nnz;
  R.ptr.resize((size_t)M.nrow + 1);
  R.col.resize(M.nnz);
  R.val.resize(M.nnz);
  if (!device) {
    std::copy(M.ptr, M.ptr + R.ptr.size(), R.ptr.begin());
    std::copy(M.col, M.col + M.nnz, R.col.begin());
    std::copy(M.val, M.val + M.nnz, R.val.begin());
    return R;
  }
  CHECK_CUDA(cudaMemcpy(R.ptr.data(), M.ptr, sizeof(int) * R.ptr.size(), cudaMemcpyDeviceToHost));
  if (M.nnz) {
    CHECK_CUDA(cudaMemcpy(R.col.data(), M.col, sizeof(int) * M.nnz, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(R.val.data(), M.val, sizeof(double) * M.nnz, cudaMemcpyDeviceToHost));
  }
  return R;
}

static HostCSR Reference(const Csr &A, const Mat &P)
{
  const PatchworkCSR       a = A.View();
  const PatchworkCSRMatrix p = P.View();
  PatchworkCSRMatrix       C;

  CheckRet(PatchworkGalerkinRef(&a, &p, &C), "PatchworkGalerkinRef");
  HostCSR R = Copy(C, false);
  PatchworkCSRMatrixFree(&C);
  return R;
}

/* The reference against the dense triple product in long double: the pattern (I, J) is stored iff
   some P_kI a_kl P_lJ is, columns ascending, values within 4 eps N M */
static void CheckDense(const char *label, const Csr &A, const Mat &P, const HostCSR &R)
{
  const int                nc = P.ncol;
  std::vector<long double> D((size_t)nc * nc, 0), Mg((size_t)nc * nc, 0);
  std::vector<long long>   N((size_t)nc * nc, 0);
  bool                     same = R.nrow == nc && R.ncol == nc;
  double                   worst = 0;

  for (int k = 0; k < A.n; k++)
    for (int e = P.ptr[k]; e < P.ptr[k + 1]; e++)
      for (int a = A.ptr[k]; a < A.ptr[k + 1]; a++) {
        const int l = A.col[a];

        for (int f = P.ptr[l]; f < P.ptr[l + 1]; f++) {
          const size_t      IJ = (size_t)P.col[e] * nc + P.col[f];
          const long double t  = (long double)P.val[e] * A.val[a] * P.val[f];

          D[IJ] += t;
          Mg[IJ] += fabsl(t);
          N[IJ]++;
        }
      }
  for (int I = 0; same && I < nc; I++) {
    int p = R.ptr[I];

    for (int J = 0; same && J < nc; J++) {
      const size_t IJ = (size_t)I * nc + J;

      if (!N[IJ]) continue;
      same = p < R.ptr[I + 1] && R.col[p] == J;
      if (same) {
        const double tol = 4 * DBL_EPSILON * (double)N[IJ] * (double)Mg[IJ];

        worst = ErrMax(worst, tol > 0 ? (double)fabsl(R.val[p] - D[IJ]) / tol : R.val[p] == 0 ? 0.0 : INFINITY);
      }
      p++;
    }
    same = same && p == R.ptr[I + 1];
  }
  Result(same && worst <= 1, "reference %s: pattern and values vs long double (worst err/tol %.3f)", label, worst);
}

struct DevMat {
  int    *ptr = nullptr, *col = nullptr;
  double *val = nullptr;
};

static DevMat Upload(const std::vector<int> &ptr, const std::vector<int> &col, const std::vector<double> &val)
{
  DevMat d;

  d.ptr = Upload(ptr);
  d.col = Upload(col);
  d.val = Upload(val);
  return d;
}

static void Free(DevMat &d)
{
  CHECK_CUDA(cudaFree(d.ptr));
  CHECK_CUDA(cudaFree(d.col));
  CHECK_CUDA(cudaFree(d.val));
  d = DevMat();
}

struct Timing {
  double gpu_ms = 0, cpu_ms = 0, scratch_mb = 0;
  int    rows = 0, pnnz = 0, ac_nnz = 0, ac_rows = 0;
};

/* One GPU run (CUDA events around it); the peak of the stream-ordered scratch in *scratch_mb */
static PatchworkCSRMatrix RunGPU(const PatchworkCSR &a, const PatchworkCSRMatrix &p, float *ms, double *scratch_mb)
{
  cudaMemPool_t      pool;
  cudaEvent_t        e0, e1;
  PatchworkCSRMatrix C;
  uint64_t           zero = 0, high = 0;

  CHECK_CUDA(cudaDeviceGetDefaultMemPool(&pool, 0));
  CHECK_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));
  CHECK_CUDA(cudaEventCreate(&e0));
  CHECK_CUDA(cudaEventCreate(&e1));
  CHECK_CUDA(cudaEventRecord(e0, g_stream));
  CheckRet(PatchworkGalerkinCUDA(&a, &p, &C, g_stream), "PatchworkGalerkinCUDA");
  CHECK_CUDA(cudaEventRecord(e1, g_stream));
  CHECK_CUDA(cudaEventSynchronize(e1));
  CHECK_CUDA(cudaEventElapsedTime(ms, e0, e1));
  CHECK_CUDA(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high));
  if (scratch_mb) *scratch_mb = high / 1048576.0;
  CHECK_CUDA(cudaEventDestroy(e0));
  CHECK_CUDA(cudaEventDestroy(e1));
  return C;
}

/* GPU vs reference on one input: the pattern exactly, values within 8 eps N M; with dense, the
   reference against long double too; with tm, three timed GPU runs after a warm-up */
static void Compare(const char *label, const Csr &A, const Mat &P, bool dense, Timing *tm = nullptr)
{
  const auto    t0  = std::chrono::steady_clock::now();
  const HostCSR R   = Reference(A, P);
  const double  cpu = Seconds(t0);

  if (dense) CheckDense(label, A, P, R);

  DevMat                   dA = Upload(A.ptr, A.col, A.val), dP = Upload(P.ptr, P.col, P.val);
  const PatchworkCSR       a  = {A.n, dA.ptr, dA.col, dA.val};
  const PatchworkCSRMatrix p  = {P.nrow, P.ncol, (int)P.col.size() - P.ptr[0], dP.ptr, dP.col, dP.val};
  float                    ms = 0;
  double                   scratch = 0;
  PatchworkCSRMatrix       C = RunGPU(a, p, &ms, nullptr); /* the checked run, also the warm-up */
  const HostCSR            G = Copy(C, true);

  PatchworkCSRMatrixFreeCUDA(&C);
  if (tm) {
    std::vector<float> t(3);

    for (auto &x : t) {
      C = RunGPU(a, p, &x, &scratch);
      PatchworkCSRMatrixFreeCUDA(&C);
    }
    std::sort(t.begin(), t.end());
    ms = t[1];
  }
  Free(dA);
  Free(dP);

  const bool same = G.nrow == R.nrow && G.ncol == R.ncol && G.nnz == R.nnz && G.ptr == R.ptr && G.col == R.col;
  Result(same, "pattern %s: %d x %d, %d entries", label, R.nrow, R.ncol, R.nnz);
  if (same) { /* the bound from the reference on |A|, |P| (M) and on the patterns (N) */
    const HostCSR M = Reference(Map(A, [](double v) { return fabs(v); }), Map(P, [](double v) { return fabs(v); }));
    const HostCSR N = Reference(Map(A, [](double) { return 1.0; }), Map(P, [](double) { return 1.0; }));
    double        worst = 0, err = 0, tol = 0;

    for (int q = 0; q < R.nnz; q++) {
      const double e = fabs(G.val[q] - R.val[q]), b = 8 * DBL_EPSILON * N.val[q] * M.val[q];
      const double r = b > 0 ? e / b : e == 0 ? 0.0 : INFINITY;

      if (ErrMaxTakes(worst, r)) {
        err = e;
        tol = b;
      }
      worst = ErrMax(worst, r);
    }
    char values[128];

    snprintf(values, sizeof(values), "values %s (worst err/tol)", label);
    Report(worst <= 1, values, err, tol);
  }
  if (tm) {
    tm->gpu_ms     = ms;
    tm->cpu_ms     = 1e3 * cpu;
    tm->scratch_mb = scratch;
    tm->rows       = A.n;
    tm->pnnz       = (int)P.col.size();
    tm->ac_rows    = R.nrow;
    tm->ac_nnz     = R.nnz;
  }
}

/* The Laplacian on m^3 with aggregates of b^3 blocks (b = 0: random) */
static void Laplacian(int m, int b, bool dense, Timing *tm = nullptr)
{
  char             label[96];
  int              naggs;
  const Csr        A   = Laplacian7(m);
  std::vector<int> agg = Aggregates(m, b, &naggs);
  const Mat        P   = Prolong(A, agg, naggs);

  if (b > 0) snprintf(label, sizeof(label), "fd7 %d^3, %d^3 aggregates", m, b);
  else snprintf(label, sizeof(label), "fd7 %d^3, %d random aggregates", m, naggs);
  Compare(label, A, P, dense, tm);
}

static void Random(int n, int deg, double empty, int ncol, int kmin, int kmax, bool dense)
{
  char label[96];

  snprintf(label, sizeof(label), "random n=%d deg<=%d ncol=%d P %d..%d", n, deg, ncol, kmin, kmax);
  Compare(label, RandomA(n, deg, empty), RandomP(n, ncol, kmin, kmax), dense);
}

/* The rows that reach the kernel's larger tables, all with the reference checked densely where small */
static void BigRows(bool quick)
{
  {
    const Csr A = RandomA(200, 6, 0);
    Compare("dense P, 6 columns", A, RandomP(200, 6, 6, 6), true);
  }
  Compare("shared bin, hashed: ncol 5000, P rows 60..120", RandomA(10, 5, 0), RandomP(10, 5000, 60, 120), false);
  Compare("shared bin, direct: ncol 1000, P rows 0..200", RandomA(12, 6, 0.1), RandomP(12, 1000, 0, 200), false);
  { /* one fine row: AP and Ac have rows of 2100 of 4100 columns, past the shared tables */
    Csr A;
    A.n   = 1;
    A.ptr = {0, 1};
    A.col = {0};
    A.val = {2.0};
    Compare("global bin: rows of 2100 of 4100 columns", A, RandomP(1, 4100, 2100, 2100), false);
  }
  if (!quick) {
    Compare("shared bin, direct: ncol 3000, P rows 0..300", RandomA(30, 6, 0.1), RandomP(30, 3000, 0, 300), false);
    Compare("global bin: ncol 6000, P rows 300..500", RandomA(24, 6, 0), RandomP(24, 6000, 300, 500), false);
    Compare("mixed bins: ncol 3000, P rows 0..40", RandomA(4000, 30, 0.05), RandomP(4000, 3000, 0, 40), false);
  }
}

/* No rows, no entries, one column, rows at an offset */
static void Corners(void)
{
  Csr A0;
  Mat P0;

  A0.ptr = {0};
  P0.ptr = {0};
  Compare("no rows, no columns", A0, P0, true);
  P0.ncol = 5;
  Compare("no rows, 5 columns", A0, P0, true);
  {
    const Csr A = RandomA(50, 6, 0);
    Compare("P without entries", A, RandomP(50, 4, 0, 0), true);
    Compare("P with 0..1 entries a row", A, RandomP(50, 9, 0, 1), true);
    Compare("one column", A, RandomP(50, 1, 0, 1), true);
    Compare("one column, every row", A, RandomP(50, 1, 1, 1), true);
    Compare("rows at an offset", Offset(A, 3), Offset(RandomP(50, 7, 0, 3), 5), true);
  }
  Compare("A without entries", RandomA(40, 6, 1.0), RandomP(40, 6, 1, 3), true);
}

/* Bad input: both refuse it with 1 and leave Ac empty */
static void BadArguments(void)
{
  const Csr          A = RandomA(20, 6, 0);
  const Mat          P = RandomP(20, 5, 1, 2);
  DevMat             dA = Upload(A.ptr, A.col, A.val), dP = Upload(P.ptr, P.col, P.val);
  const PatchworkCSR ha = A.View(), da = {A.n, dA.ptr, dA.col, dA.val};
  const PatchworkCSRMatrix hp = P.View(), dp = {P.nrow, P.ncol, (int)P.col.size(), dP.ptr, dP.col, dP.val};
  PatchworkCSRMatrix C;

  /* cases: a function of (A, P) views to spoil, for the host and the device copies alike */
  struct Case {
    const char *name;
    void (*spoil)(PatchworkCSR *a, PatchworkCSRMatrix *p);
  };
  const Case cases[] = {
    {"P rows != A rows", [](PatchworkCSR *, PatchworkCSRMatrix *p) { p->nrow--; }},
    {"negative rows", [](PatchworkCSR *a, PatchworkCSRMatrix *p) { a->n = p->nrow = -1; }},
    {"negative columns of P", [](PatchworkCSR *, PatchworkCSRMatrix *p) { p->ncol = -1; }},
    {"NULL A->ptr", [](PatchworkCSR *a, PatchworkCSRMatrix *) { a->ptr = nullptr; }},
    {"NULL A->col", [](PatchworkCSR *a, PatchworkCSRMatrix *) { a->col = nullptr; }},
    {"NULL P->val", [](PatchworkCSR *, PatchworkCSRMatrix *p) { p->val = nullptr; }},
  };
  for (const Case &c : cases) {
    PatchworkCSR       a1 = ha, a2 = da;
    PatchworkCSRMatrix p1 = hp, p2 = dp;
    char               name[96];

    c.spoil(&a1, &p1);
    c.spoil(&a2, &p2);
    snprintf(name, sizeof(name), "ref: %s", c.name);
    ReportRet(PatchworkGalerkinRef(&a1, &p1, &C), 1, name);
    snprintf(name, sizeof(name), "cuda: %s", c.name);
    ReportRet(PatchworkGalerkinCUDA(&a2, &p2, &C, g_stream), 1, name);
    Result(C.ptr == nullptr && C.col == nullptr && C.nnz == 0, "cuda: Ac empty after \"%s\"", c.name);
  }
  ReportRet(PatchworkGalerkinRef(nullptr, &hp, &C), 1, "ref: NULL A");
  ReportRet(PatchworkGalerkinCUDA(nullptr, &dp, &C, g_stream), 1, "cuda: NULL A");
  ReportRet(PatchworkGalerkinRef(&ha, nullptr, &C), 1, "ref: NULL P");
  ReportRet(PatchworkGalerkinCUDA(&da, nullptr, &C, g_stream), 1, "cuda: NULL P");
  ReportRet(PatchworkGalerkinRef(&ha, &hp, nullptr), 1, "ref: NULL Ac");
  ReportRet(PatchworkGalerkinCUDA(&da, &dp, nullptr, g_stream), 1, "cuda: NULL Ac");
  /* bad contents: a column out of range in A or P, row pointers that decrease or start below 0 */
  struct Spoilt {
    const char *name;
    bool        inA;
    int         which; /* 0: a column, 1: a row pointer */
    int         at, value;
  };
  const Spoilt spoilt[] = {
    {"A column = n", true, 0, 5, A.n},
    {"A column < 0", true, 0, 0, -1},
    {"P column = ncol", false, 0, (int)P.col.size() - 1, P.ncol},
    {"P column < 0", false, 0, 3, -2},
    {"A row pointers decrease", true, 1, 5, A.ptr[4] - 1}, /* every row of A has its diagonal */
    {"P row pointers decrease", false, 1, 8, P.ptr[7] - 1}, /* every row of P has an entry */
    {"A ptr[0] < 0", true, 1, 0, -1},
  };
  for (const Spoilt &c : spoilt) {
    Csr                a = A;
    Mat                p = P;
    std::vector<int>  &v = c.inA ? (c.which ? a.ptr : a.col) : (c.which ? p.ptr : p.col);
    char               name[96];

    v[c.at] = c.value;
    DevMat             d1 = Upload(a.ptr, a.col, a.val), d2 = Upload(p.ptr, p.col, p.val);
    const PatchworkCSR ha2 = a.View(), da2 = {a.n, d1.ptr, d1.col, d1.val};
    const PatchworkCSRMatrix hp2 = {p.nrow, p.ncol, (int)p.col.size(), p.ptr.data(), p.col.data(), p.val.data()}, dp2 = {p.nrow, p.ncol, (int)p.col.size(), d2.ptr, d2.col, d2.val};

    snprintf(name, sizeof(name), "ref: %s", c.name);
    ReportRet(PatchworkGalerkinRef(&ha2, &hp2, &C), 1, name);
    snprintf(name, sizeof(name), "cuda: %s", c.name);
    ReportRet(PatchworkGalerkinCUDA(&da2, &dp2, &C, g_stream), 1, name);
    Free(d1);
    Free(d2);
  }
  ReportRet(PatchworkGalerkinRef(&ha, &hp, &C), 0, "ref: good arguments accepted");
  PatchworkCSRMatrixFree(&C);
  ReportRet(PatchworkGalerkinCUDA(&da, &dp, &C, g_stream), 0, "cuda: good arguments accepted");
  PatchworkCSRMatrixFreeCUDA(&C);
  PatchworkCSRMatrixFree(nullptr);
  PatchworkCSRMatrixFreeCUDA(nullptr);
  Free(dA);
  Free(dP);
}

int main(int argc, char **argv)
{
  bool quick;
  int  rc = GpuTestStart(argc, argv, &quick);

  if (rc >= 0) return rc;
  BadArguments();
  Corners();
  for (int m : {4, 6, 9, 16, 32, 64}) {
    if (quick && m > 9) break;
    Laplacian(m, 3, m <= 9);
    if (m <= 32) Laplacian(m, 2, m <= 6);
    if (m <= 32) Laplacian(m, 0, m <= 6);
  }
  Random(300, 8, 0.1, 40, 0, 3, true);
  Random(400, 12, 0.05, 200, 0, 8, false);
  Random(200, 20, 0, 12, 1, 5, true);
  if (!quick) {
    Random(20000, 10, 0.02, 2000, 0, 4, false);
    Random(5000, 60, 0, 300, 1, 12, false);
  }
  BigRows(quick);
  if (!quick) {
    Timing t[2];

    Laplacian(160, 3, false);
    Laplacian(128, 3, false, &t[0]);
    Laplacian(256, 3, false, &t[1]);
    printf("# Galerkin product Ac = P^T A P, 7-point Laplacian, 3x3x3 aggregates (GPU: CUDA events, median of 3 after a warm-up; CPU: the reference, one core)\n");
    printf("# %-8s %10s %10s %9s %10s %9s %9s %8s %11s\n", "grid", "rows", "P nnz", "Ac rows", "Ac nnz", "GPU ms", "CPU ms", "speedup", "scratch MB");
    for (int i = 0; i < 2; i++)
      printf("# %-8s %10d %10d %9d %10d %9.2f %9.1f %7.1fx %11.0f\n", i ? "256^3" : "128^3", t[i].rows, t[i].pnnz, t[i].ac_rows, t[i].ac_nnz, t[i].gpu_ms, t[i].cpu_ms, t[i].cpu_ms / std::max(t[i].gpu_ms, 1e-3), t[i].scratch_mb);
  }
  CHECK_CUDA(cudaStreamDestroy(g_stream));
  CHECK_CUDA(cudaDeviceSynchronize());
  /* one line, last: the scripts take it as the summary */
  printf("# %d passed, %d failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
