/* GPU vs CPU: the smoothed-aggregation prolongator P = (I - diag(s) A) P~ (cuda/amg_prolong.cu vs
   src/core/amg_prolong_ref.c), and the reference itself against the formula evaluated row by row in
   long double with a map (an independent evaluation). Patterns must be equal exactly; values to a
   bound derived from double rounding: an entry is t_i [J = agg(i)] - s_i * (a sum of at most m
   products), so its error is at most (m + 2) eps (|t_i| + |s_i| sum |a_ik t_k|) per evaluation.
   The two halves (PatchworkSATentativeCUDA, PatchworkSASmoothCUDA) against their references on the
   same inputs: Tentative's t and zc bit for bit with z = NULL (counts summed exactly, one correctly
   rounded root and division), within the bound derived at TentativeRel with z (the atomics' order);
   Smooth from the reference's t: the pattern exactly, values within the bound above (with |t_k| in
   place of 1: t need not come from Tentative); with z = NULL, SAProlongCUDA equals TentativeCUDA then
   SmoothCUDA bit for bit (both deterministic). Smooth also on "extended" problems: owned rows whose
   columns reach ghost rows (empty rows, their aggregates and t given), t drawn with signs and zeros.
   Bad arguments: 1 from both, P empty.
     test_amg_prolong_kernels [--quick]   (77 without a device) */
#include "gputest.h"
#include <cfloat>
#include <chrono>
#include <cmath>
#include <map>
#include <patchwork/amg_kernel.h>

struct Csr {
  int                 n = 0;
  std::vector<int>    ptr, col;
  std::vector<double> val;
};

/* The 7-point Laplacian on an m^3 grid, aggregates = b^3 blocks */
static void Laplacian7(int m, int b, Csr &A, std::vector<int> &agg, int &naggs)
{
  const int nb = (m + b - 1) / b;

  A.n = m * m * m;
  A.ptr.assign(1, 0);
  A.col.clear();
  A.val.clear();
  agg.resize(A.n);
  naggs = nb * nb * nb;
  for (int z = 0; z < m; z++)
    for (int y = 0; y < m; y++)
      for (int x = 0; x < m; x++) {
        const int i = (z * m + y) * m + x;
        const int nbr[7][3] = {{0, 0, -1}, {0, -1, 0}, {-1, 0, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};

        for (auto &d : nbr) {
          const int X = x + d[0], Y = y + d[1], Z = z + d[2];

          if (X < 0 || Y < 0 || Z < 0 || X >= m || Y >= m || Z >= m) continue;
          A.col.push_back((Z * m + Y) * m + X);
          A.val.push_back(d[0] == 0 && d[1] == 0 && d[2] == 0 ? 6.0 : -1.0);
        }
        A.ptr.push_back((int)A.col.size());
        agg[i] = ((z / b) * nb + y / b) * nb + x / b;
      }
}

/* A random symmetric pattern with long rows in places (maxdeg), random values, random aggregates */
static void RandomGraph(int n, int maxdeg, int naggs, Csr &A, std::vector<int> &agg)
{
  std::vector<std::vector<int>> adj(n);

  for (int i = 0; i < n; i++) {
    const int deg = (int)((Rand() + 1) * 0.5 * maxdeg);

    adj[i].push_back(i);
    for (int e = 0; e < deg / 2; e++) {
      const int j = (int)((Rand() + 1) * 0.5 * n) % n;

      adj[i].push_back(j);
      adj[j].push_back(i);
    }
  }
  A.n = n;
  A.ptr.assign(1, 0);
  A.col.clear();
  A.val.clear();
  for (int i = 0; i < n; i++) {
    for (int j : adj[i]) { /* duplicates stay: a CSR may store a column twice, both count */
      A.col.push_back(j);
      A.val.push_back(Rand());
    }
    A.ptr.push_back((int)A.col.size());
  }
  agg.resize(n);
  for (int i = 0; i < n; i++) agg[i] = (int)((Rand() + 1) * 0.5 * naggs) % naggs;
}

static PatchworkCSR View(const Csr &A, const int *ptr, const int *col, const double *val)
{
  PatchworkCSR v;

  v.n   = A.n;
  v.ptr = ptr;
  v.col = col;
  v.val = val;
  return v;
}

/* The reference against the formula in long double; returns false with a message on a mismatch */
static bool CheckReference(const Csr &A, const std::vector<int> &agg, int naggs, const double *z, const std::vector<double> &s, const PatchworkCSRMatrix &P, double *worst)
{
  std::vector<long double> norm2(naggs, 0);

  for (int i = 0; i < A.n; i++) norm2[agg[i]] += z ? (long double)z[i] * z[i] : 1.0L;
  auto t = [&](int i) { return norm2[agg[i]] > 0 ? (z ? z[i] : 1.0L) / sqrtl(norm2[agg[i]]) : 0.0L; };
  *worst = 0;
  if (P.nrow != A.n || P.ncol != naggs) return false;
  for (int i = 0; i < A.n; i++) {
    std::map<int, long double> row, mag;

    row[agg[i]] = 0;
    for (int k = A.ptr[i]; k < A.ptr[i + 1]; k++) {
      row[agg[A.col[k]]] -= s[i] * A.val[k] * t(A.col[k]);
      mag[agg[A.col[k]]] += fabsl(s[i] * A.val[k] * t(A.col[k]));
    }
    row[agg[i]] += t(i);
    mag[agg[i]] += fabsl(t(i));
    if (P.ptr[i + 1] - P.ptr[i] != (int)row.size()) return false;
    int p = P.ptr[i];
    for (auto &e : row) {
      const double tol = (A.ptr[i + 1] - A.ptr[i] + 4) * 2.3e-16 * (double)mag[e.first] + 1e-300;

      if (P.col[p] != e.first) return false;
      *worst = ErrMax(*worst, fabs(P.val[p] - (double)e.second) / tol);
      p++;
    }
  }
  return *worst <= 1;
}

/* GPU result vs the reference: the pattern exactly, values within the rounding bound of both */
static void Compare(const char *label, const Csr &A, const std::vector<int> &agg, int naggs, bool withz, bool timing)
{
  std::vector<double> z(A.n), s(A.n), absrow(A.n, 0), zc(naggs), gzc(naggs);
  std::vector<int>    size(naggs, 0);
  PatchworkCSRMatrix  R, G;
  double              worst = 0;

  for (int i = 0; i < A.n; i++) {
    z[i] = 0.5 + 0.5 * fabs(Rand());
    s[i] = (4.0 / 3.0) / (1.0 + fabs(Rand()));
  }
  const PatchworkCSR host = View(A, A.ptr.data(), A.col.data(), A.val.data());
  auto               c0   = std::chrono::steady_clock::now();
  CheckRet(PatchworkSAProlongRef(&host, agg.data(), naggs, withz ? z.data() : NULL, s.data(), &R, zc.data()), "PatchworkSAProlongRef");
  const double tcpu = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
  if (A.n <= 40000) {
    const bool ok = CheckReference(A, agg, naggs, withz ? z.data() : NULL, s, R, &worst);

    Result(ok, "reference %s%s: pattern and values vs long double (worst err/tol %.3f)", label, withz ? ", z" : "", worst);
  }

  int    *dptr = Upload(A.ptr), *dcol = Upload(A.col), *dagg = Upload(agg);
  double *dval = Upload(A.val), *dz = Upload(z), *ds = Upload(s), *dzc = Upload(gzc);
  const PatchworkCSR dev = View(A, dptr, dcol, dval);
  cudaEvent_t        e0, e1;
  float              ms = 0;

  CHECK_CUDA(cudaEventCreate(&e0));
  CHECK_CUDA(cudaEventCreate(&e1));
  if (timing) { /* warm-up */
    CheckRet(PatchworkSAProlongCUDA(&dev, dagg, naggs, withz ? dz : NULL, ds, &G, NULL, g_stream), "PatchworkSAProlongCUDA");
    PatchworkCSRMatrixFreeCUDA(&G);
  }
  CHECK_CUDA(cudaEventRecord(e0, g_stream));
  CheckRet(PatchworkSAProlongCUDA(&dev, dagg, naggs, withz ? dz : NULL, ds, &G, dzc, g_stream), "PatchworkSAProlongCUDA");
  CHECK_CUDA(cudaEventRecord(e1, g_stream));
  CHECK_CUDA(cudaEventSynchronize(e1));
  CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));

  std::vector<int>    gptr(G.nrow + 1), gcol(G.nnz);
  std::vector<double> gval(G.nnz);
  CHECK_CUDA(cudaMemcpy(gptr.data(), G.ptr, sizeof(int) * gptr.size(), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(gcol.data(), G.col, sizeof(int) * gcol.size(), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(gval.data(), G.val, sizeof(double) * gval.size(), cudaMemcpyDeviceToHost));
  bool same = G.nrow == R.nrow && G.ncol == R.ncol && G.nnz == R.nnz && !memcmp(gptr.data(), R.ptr, sizeof(int) * gptr.size()) && !memcmp(gcol.data(), R.col, sizeof(int) * gcol.size());
  Result(same, "pattern %s%s: %d rows, %d aggregates, %d entries", label, withz ? ", z" : "", R.nrow, R.ncol, R.nnz);
  if (same) {
    /* bound per entry: both sum the same m products in the same order */
    double err = 0, tol, rel = 0;
    for (int i = 0; i < A.n; i++) {
      double mag = 0;
      for (int k = A.ptr[i]; k < A.ptr[i + 1]; k++) mag += fabs(A.val[k]);
      mag = fabs(s[i]) * mag * 1.0 + 1.0; /* |t| <= 1 */
      for (int p = R.ptr[i]; p < R.ptr[i + 1]; p++) {
        tol = 2 * (A.ptr[i + 1] - A.ptr[i] + 2) * 1.12e-16 * mag;
        err = fabs(gval[p] - R.val[p]);
        rel = ErrMax(rel, err / tol);
      }
    }
    Result(rel <= 1, "values %s%s: worst err/tol %.3g", label, withz ? ", z" : "", rel);
  }
  { /* the next level's near-null vector: the same size_J squares summed in another order (constants: exact) */
    double rel = 0;

    CHECK_CUDA(cudaMemcpy(gzc.data(), dzc, sizeof(double) * naggs, cudaMemcpyDeviceToHost));
    for (int i = 0; i < A.n; i++) size[agg[i]]++;
    for (int J = 0; J < naggs; J++) rel = ErrMax(rel, fabs(gzc[J] - zc[J]) / ((withz ? 2 * (size[J] + 2) * 1.12e-16 * zc[J] : 0) + 1e-300));
    Result(rel <= 1, "next level's near-null vector %s%s: worst err/tol %.3g%s", label, withz ? ", z" : "", rel, withz ? "" : " (constants: bit for bit)");
  }
  if (timing) printf("# prolongator %s: GPU %.2f ms, CPU reference %.1f ms (%.0fx), %d entries\n", label, ms, 1e3 * tcpu, 1e3 * tcpu / std::max(ms, 1e-3f), R.nnz);
  PatchworkCSRMatrixFree(&R);
  PatchworkCSRMatrixFreeCUDA(&G);
  for (void *p : {(void *)dptr, (void *)dcol, (void *)dagg, (void *)dval, (void *)dz, (void *)ds, (void *)dzc}) CHECK_CUDA(cudaFree(p));
  CHECK_CUDA(cudaEventDestroy(e0));
  CHECK_CUDA(cudaEventDestroy(e1));
}

/* Bad input: both versions return 1 and leave P empty */
static void BadArguments(void)
{
  Csr              A;
  std::vector<int> agg;
  int              naggs;

  Laplacian7(4, 2, A, agg, naggs);
  std::vector<double> s(A.n, 1.0);
  PatchworkCSRMatrix  P;
  const PatchworkCSR  h = View(A, A.ptr.data(), A.col.data(), A.val.data());
  int                *dptr = Upload(A.ptr), *dcol = Upload(A.col), *dagg = Upload(agg);
  double             *dval = Upload(A.val), *ds = Upload(s);
  PatchworkCSR        d = View(A, dptr, dcol, dval);

  ReportRet(PatchworkSAProlongRef(&h, agg.data(), naggs - 1, NULL, s.data(), &P, NULL), 1, "ref: aggregate out of range");
  ReportRet(PatchworkSAProlongCUDA(&d, dagg, naggs - 1, NULL, ds, &P, NULL, g_stream), 1, "cuda: aggregate out of range");
  ReportRet(PatchworkSAProlongRef(&h, agg.data(), naggs, NULL, NULL, &P, NULL), 1, "ref: no scaling");
  ReportRet(PatchworkSAProlongCUDA(&d, dagg, naggs, NULL, NULL, &P, NULL, g_stream), 1, "cuda: no scaling");
  ReportRet(PatchworkSAProlongCUDA(&d, dagg, naggs, NULL, ds, NULL, NULL, g_stream), 1, "cuda: no result");
  {
    std::vector<int> col = A.col;
    col[5]               = A.n; /* a column out of range */
    int *dc              = Upload(col);
    PatchworkCSR hb = View(A, A.ptr.data(), col.data(), A.val.data()), db = View(A, dptr, dc, dval);

    ReportRet(PatchworkSAProlongRef(&hb, agg.data(), naggs, NULL, s.data(), &P, NULL), 1, "ref: column out of range");
    ReportRet(PatchworkSAProlongCUDA(&db, dagg, naggs, NULL, ds, &P, NULL, g_stream), 1, "cuda: column out of range");
    Result(P.ptr == NULL && P.nnz == 0, "cuda: P empty after a failure");
    CHECK_CUDA(cudaFree(dc));
  }
  {
    PatchworkCSR e = d, eh = h; /* no rows: an empty P */
    e.n = eh.n = 0;
    ReportRet(PatchworkSAProlongRef(&eh, agg.data(), 0, NULL, s.data(), &P, NULL), 0, "ref: no rows");
    PatchworkCSRMatrixFree(&P);
    ReportRet(PatchworkSAProlongCUDA(&e, dagg, 0, NULL, ds, &P, NULL, g_stream), 0, "cuda: no rows");
    Result(P.nrow == 0 && P.nnz == 0, "cuda: no rows gives an empty P");
    PatchworkCSRMatrixFreeCUDA(&P);
  }
  for (void *p : {(void *)dptr, (void *)dcol, (void *)dagg, (void *)dval, (void *)ds}) CHECK_CUDA(cudaFree(p));
}

/* ---------------------------------------------------------------------------------------------
   The two halves of SAProlong: Tentative and Smooth */

constexpr double kU = DBL_EPSILON / 2; /* unit roundoff of double */

static double Gamma(int m, double u)
{
  return m * u / (1 - m * u);
}

/* Relative bounds on t and zc of one evaluation, against T = z_i / sqrt(S) and sqrt(S), S = the exact
   sum of the m squares of an aggregate. The m squares summed in any order (the reference's loop, the
   GPU's atomics, fused or not) are within g = gamma(m) relative of S; sqrt(S (1 + e)) = sqrt(S)(1 + r)
   with |r| = |e| / (1 + sqrt(1 + e)) <= g / (2 - g); the root rounds once (zc: |zc / sqrt(S) - 1| <=
   (1 + r)(1 + u) - 1 = r + u + r u), the division once more (t: (1 + u) / ((1 - r)(1 - u)) - 1 =
   (2u + r (1 - u)) / ((1 - r)(1 - u)), written so that no 1 + u rounds away). Two evaluations are
   within twice that of the exact value, so |gpu - ref| <= 2 h / (1 - h) |ref|. */
static void TentativeRel(int m, double *ht, double *hz)
{
  const double g = Gamma(m, kU), r = g / (2 - g);

  *hz = r + kU + r * kU;
  *ht = (2 * kU + r * (1 - kU)) / ((1 - r) * (1 - kU));
}

static double *DeviceNaN(size_t n) /* stale values must not pass for results */
{
  return Upload(std::vector<double>(std::max<size_t>(n, 1), NAN));
}

template <typename T>
static std::vector<T> Download(const T *d, size_t n)
{
  std::vector<T> h(n);

  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  if (n) CHECK_CUDA(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

/* Tentative on both from the same z (NULL: constants); returns the reference's t */
static std::vector<double> CompareTentative(const char *label, int n, const std::vector<int> &agg, int naggs, const double *z)
{
  std::vector<double> t(n, NAN), zc(naggs, NAN);
  std::vector<int>    size(naggs, 0);
  double              wt = 0, wz = 0;

  CheckRet(PatchworkSATentativeRef(n, agg.data(), naggs, z, t.data(), zc.data()), "PatchworkSATentativeRef");
  int    *dagg = Upload(agg);
  double *dz = z ? Upload(std::vector<double>(z, z + n)) : nullptr, *dt = DeviceNaN(n), *dzc = DeviceNaN(naggs);
  int     ret = PatchworkSATentativeCUDA(n, dagg, naggs, dz, dt, dzc, g_stream);

  if (ret) Result(false, "tentative %s%s: PatchworkSATentativeCUDA returned %d (%s)", label, z ? ", z" : "", ret, cudaGetErrorString((cudaError_t)ret));
  else {
    const std::vector<double> gt = Download(dt, n), gzc = Download(dzc, naggs);

    for (int i = 0; i < n; i++) size[agg[i]]++;
    if (!z) { /* exact */
      Result(!memcmp(gt.data(), t.data(), sizeof(double) * n) && !memcmp(gzc.data(), zc.data(), sizeof(double) * naggs), "tentative %s: %d rows, %d aggregates: t and zc equal the reference bit for bit", label, n, naggs);
    } else {
      for (int i = 0; i < n; i++) {
        double ht, hz;

        TentativeRel(size[agg[i]], &ht, &hz);
        const double tol = 2 * ht / (1 - ht) * fabs(t[i]), err = fabs(gt[i] - t[i]);
        wt = ErrMax(wt, tol > 0 ? err / tol : (err == 0 ? 0 : INFINITY));
      }
      for (int J = 0; J < naggs; J++) {
        double ht, hz;

        TentativeRel(size[J], &ht, &hz);
        const double tol = 2 * hz / (1 - hz) * zc[J], err = fabs(gzc[J] - zc[J]);
        wz = ErrMax(wz, tol > 0 ? err / tol : (err == 0 ? 0 : INFINITY));
      }
      Result(wt <= 1 && wz <= 1, "tentative %s, z: %d rows, %d aggregates: worst |gpu - ref| / bound: t %.3g, zc %.3g", label, n, naggs, wt, wz);
    }
  }
  for (void *p : {(void *)dagg, (void *)dz, (void *)dt, (void *)dzc}) CHECK_CUDA(cudaFree(p));
  return t;
}

/* A device P (library-allocated) to the host */
struct HostP {
  int                 nrow = 0, ncol = 0, nnz = 0;
  std::vector<int>    ptr, col;
  std::vector<double> val;
};

static HostP Fetch(const PatchworkCSRMatrix &G)
{
  HostP h;

  h.nrow = G.nrow;
  h.ncol = G.ncol;
  h.nnz  = G.nnz;
  h.ptr  = G.ptr ? Download(G.ptr, (size_t)G.nrow + 1) : std::vector<int>();
  h.col  = Download(G.col, G.nnz);
  h.val  = Download(G.val, G.nnz);
  return h;
}

/* Smooth on both from the same t: the pattern exactly; values within the bound of Compare, with the
   row's majorant |t_i| + |s_i| sum_k |a_ik t_k| (Compare's |s_i| sum_k |a_ik| + 1 uses |t| <= 1) */
static void CompareSmooth(const char *label, const Csr &A, const std::vector<int> &agg, int naggs, const std::vector<double> &t, const std::vector<double> &s)
{
  PatchworkCSRMatrix R, G;
  const PatchworkCSR host = View(A, A.ptr.data(), A.col.data(), A.val.data());

  CheckRet(PatchworkSASmoothRef(&host, agg.data(), naggs, t.data(), s.data(), &R), "PatchworkSASmoothRef");
  int               *dptr = Upload(A.ptr), *dcol = Upload(A.col), *dagg = Upload(agg);
  double            *dval = Upload(A.val), *dt = Upload(t), *ds = Upload(s);
  const PatchworkCSR dev = View(A, dptr, dcol, dval);
  int                ret;

  memset(&G, 0xA5, sizeof(G)); /* junk that must be replaced */
  ret = PatchworkSASmoothCUDA(&dev, dagg, naggs, dt, ds, &G, g_stream);
  if (ret) Result(false, "smooth %s: PatchworkSASmoothCUDA returned %d (%s)", label, ret, cudaGetErrorString((cudaError_t)ret));
  else {
    const HostP g    = Fetch(G);
    const bool  same = g.nrow == R.nrow && g.ncol == R.ncol && g.nnz == R.nnz && (int)g.ptr.size() == R.nrow + 1 && !memcmp(g.ptr.data(), R.ptr, sizeof(int) * g.ptr.size()) &&
                      !memcmp(g.col.data(), R.col, sizeof(int) * g.col.size());

    Result(same, "smooth %s: pattern: %d rows, %d aggregates, %d entries", label, R.nrow, R.ncol, R.nnz);
    if (same) {
      double rel = 0;

      for (int i = 0; i < A.n; i++) {
        double mag = 0;

        for (int k = A.ptr[i]; k < A.ptr[i + 1]; k++) mag += fabs(A.val[k] * t[A.col[k]]);
        mag = fabs(s[i]) * mag + fabs(t[i]);
        for (int p = R.ptr[i]; p < R.ptr[i + 1]; p++) {
          const double tol = 2 * (A.ptr[i + 1] - A.ptr[i] + 2) * 1.12e-16 * mag, err = fabs(g.val[p] - R.val[p]);

          rel = ErrMax(rel, tol > 0 ? err / tol : (err == 0 ? 0 : INFINITY));
        }
      }
      Result(rel <= 1, "smooth %s: values: worst err/tol %.3g", label, rel);
    }
    PatchworkCSRMatrixFreeCUDA(&G);
  }
  PatchworkCSRMatrixFree(&R);
  for (void *p : {(void *)dptr, (void *)dcol, (void *)dagg, (void *)dval, (void *)dt, (void *)ds}) CHECK_CUDA(cudaFree(p));
}

/* Tentative and Smooth on both for one problem; with z = NULL also SAProlongCUDA against
   TentativeCUDA then SmoothCUDA, bit for bit (the sums of constants are exact, Smooth's row sums run
   in one order) */
static void CompareHalves(const char *label, const Csr &A, const std::vector<int> &agg, int naggs, bool withz)
{
  std::vector<double> z(A.n), s(A.n);
  char                name[160];

  for (int i = 0; i < A.n; i++) {
    z[i] = Rand() < -0.9 ? 0.0 : std::ldexp(Rand(), (int)(8 * Rand())); /* signs, zeros */
    s[i] = (4.0 / 3.0) / (1.0 + fabs(Rand()));
  }
  const std::vector<double> t = CompareTentative(label, A.n, agg, naggs, withz ? z.data() : nullptr);
  snprintf(name, sizeof(name), "%s%s", label, withz ? ", t from z" : ", t from constants");
  CompareSmooth(name, A, agg, naggs, t, s);
  if (!withz) {
    int               *dptr = Upload(A.ptr), *dcol = Upload(A.col), *dagg = Upload(agg);
    double            *dval = Upload(A.val), *ds = Upload(s), *dt = DeviceNaN(A.n);
    const PatchworkCSR dev = View(A, dptr, dcol, dval);
    PatchworkCSRMatrix G1, G2;

    CheckRet(PatchworkSAProlongCUDA(&dev, dagg, naggs, NULL, ds, &G1, NULL, g_stream), "PatchworkSAProlongCUDA");
    CheckRet(PatchworkSATentativeCUDA(A.n, dagg, naggs, NULL, dt, NULL, g_stream), "PatchworkSATentativeCUDA");
    CheckRet(PatchworkSASmoothCUDA(&dev, dagg, naggs, dt, ds, &G2, g_stream), "PatchworkSASmoothCUDA");
    const HostP a = Fetch(G1), b = Fetch(G2);
    Result(a.nrow == b.nrow && a.ncol == b.ncol && a.nnz == b.nnz && a.ptr == b.ptr && a.col == b.col && !memcmp(a.val.data(), b.val.data(), sizeof(double) * a.val.size()),
           "halves %s: SAProlongCUDA equals TentativeCUDA then SmoothCUDA bit for bit (%d entries)", label, a.nnz);
    PatchworkCSRMatrixFreeCUDA(&G1);
    PatchworkCSRMatrixFreeCUDA(&G2);
    for (void *p : {(void *)dptr, (void *)dcol, (void *)dagg, (void *)dval, (void *)ds, (void *)dt}) CHECK_CUDA(cudaFree(p));
  }
}

/* The extended problem of a rank: N = n + ng rows, the ghosts' rows (n .. N-1) empty, owned rows with
   their diagonal (mostly) and up to maxdeg columns anywhere in [0, N) (some repeated), aggregates of
   all N rows, t drawn (signs, a tenth zero, 2^[-8, 8]) as the owners would send it */
static void Extended(int n, int ng, int maxdeg, int naggs, Csr &A, std::vector<int> &agg, std::vector<double> &t)
{
  const int N = n + ng;

  A.n = N;
  A.ptr.assign(1, 0);
  A.col.clear();
  A.val.clear();
  for (int i = 0; i < N; i++) {
    if (i < n) {
      const int deg = (int)((Rand() + 1) * 0.5 * (maxdeg + 1));

      if (Rand() < 0.9) {
        A.col.push_back(i);
        A.val.push_back(std::ldexp(1.5 + 0.5 * Rand(), (int)(8 * Rand())));
      }
      for (int e = 0; e < deg; e++) {
        A.col.push_back(e > 0 && Rand() < -0.8 ? A.col.back() : (int)((Rand() + 1) * 0.5 * N) % N);
        A.val.push_back(std::ldexp(Rand(), (int)(8 * Rand())));
      }
    }
    A.ptr.push_back((int)A.col.size());
  }
  if (A.col.empty()) { /* the kernels take no NULL arrays for rows: one unused slot past the entries */
    A.col.push_back(0);
    A.val.push_back(0.0);
  }
  agg.resize(N);
  t.resize(N);
  for (int i = 0; i < N; i++) {
    agg[i] = (int)((Rand() + 1) * 0.5 * naggs) % naggs;
    t[i]   = Rand() < -0.8 ? 0.0 : std::ldexp(Rand(), (int)(8 * Rand()));
  }
}

/* Bad input of the halves: 1 from both, P empty; good input accepted after them (no sticky error) */
static void BadArgumentsHalves(void)
{
  Csr              A;
  std::vector<int> agg;
  int              naggs;
  char             name[96];

  Laplacian7(4, 2, A, agg, naggs);
  std::vector<double> s(A.n, 1.0), t(A.n, 0.5), zc(naggs);
  PatchworkCSRMatrix  P;
  const PatchworkCSR  h = View(A, A.ptr.data(), A.col.data(), A.val.data());
  int                *dptr = Upload(A.ptr), *dcol = Upload(A.col), *dagg = Upload(agg);
  double             *dval = Upload(A.val), *ds = Upload(s), *dt = Upload(t), *dzc = DeviceNaN(naggs);
  const PatchworkCSR  d = View(A, dptr, dcol, dval);

  /* Tentative */
  ReportRet(PatchworkSATentativeRef(A.n, agg.data(), naggs - 1, NULL, t.data(), zc.data()), 1, "ref: tentative, aggregate out of range");
  ReportRet(PatchworkSATentativeCUDA(A.n, dagg, naggs - 1, NULL, dt, dzc, g_stream), 1, "cuda: tentative, aggregate out of range");
  ReportRet(PatchworkSATentativeRef(A.n, agg.data(), 0, NULL, t.data(), NULL), 1, "ref: tentative, no aggregates");
  ReportRet(PatchworkSATentativeCUDA(A.n, dagg, 0, NULL, dt, NULL, g_stream), 1, "cuda: tentative, no aggregates");
  ReportRet(PatchworkSATentativeRef(A.n, NULL, naggs, NULL, t.data(), NULL), 1, "ref: tentative, NULL agg");
  ReportRet(PatchworkSATentativeCUDA(A.n, NULL, naggs, NULL, dt, NULL, g_stream), 1, "cuda: tentative, NULL agg");
  ReportRet(PatchworkSATentativeRef(A.n, agg.data(), naggs, NULL, NULL, NULL), 1, "ref: tentative, NULL t");
  ReportRet(PatchworkSATentativeCUDA(A.n, dagg, naggs, NULL, NULL, NULL, g_stream), 1, "cuda: tentative, NULL t");
  ReportRet(PatchworkSATentativeRef(-1, agg.data(), naggs, NULL, t.data(), NULL), 1, "ref: tentative, n < 0");
  ReportRet(PatchworkSATentativeCUDA(-1, dagg, naggs, NULL, dt, NULL, g_stream), 1, "cuda: tentative, n < 0");
  ReportRet(PatchworkSATentativeRef(A.n, agg.data(), -1, NULL, t.data(), NULL), 1, "ref: tentative, naggs < 0");
  ReportRet(PatchworkSATentativeCUDA(A.n, dagg, -1, NULL, dt, NULL, g_stream), 1, "cuda: tentative, naggs < 0");
  ReportRet(PatchworkSATentativeCUDA(0, NULL, 0, NULL, NULL, NULL, g_stream), 0, "cuda: tentative, no rows, NULL arrays");
  ReportRet(PatchworkSATentativeCUDA(A.n, dagg, naggs, NULL, dt, dzc, g_stream), 0, "cuda: tentative, good arguments accepted after the refusals");

  /* Smooth: P junk before each call, empty after */
  auto smooth = [&](const PatchworkCSR *hA, const PatchworkCSR *dA, const int *hagg, const int *dagg_, int na, bool nullt, bool nulls, const char *what) {
    memset(&P, 0xA5, sizeof(P));
    snprintf(name, sizeof(name), "ref: smooth, %s", what);
    ReportRet(PatchworkSASmoothRef(hA, hagg, na, nullt ? NULL : t.data(), nulls ? NULL : s.data(), &P), 1, name);
    Result(P.ptr == NULL && P.col == NULL && P.val == NULL && P.nrow == 0 && P.ncol == 0 && P.nnz == 0, "ref: smooth, %s: P empty", what);
    memset(&P, 0xA5, sizeof(P));
    snprintf(name, sizeof(name), "cuda: smooth, %s", what);
    ReportRet(PatchworkSASmoothCUDA(dA, dagg_, na, nullt ? NULL : dt, nulls ? NULL : ds, &P, g_stream), 1, name);
    Result(P.ptr == NULL && P.col == NULL && P.val == NULL && P.nrow == 0 && P.ncol == 0 && P.nnz == 0, "cuda: smooth, %s: P empty", what);
  };
  smooth(&h, &d, agg.data(), dagg, naggs - 1, false, false, "aggregate out of range");
  smooth(&h, &d, agg.data(), dagg, 0, false, false, "no aggregates");
  smooth(&h, &d, agg.data(), dagg, naggs, true, false, "NULL t");
  smooth(&h, &d, agg.data(), dagg, naggs, false, true, "NULL s");
  smooth(&h, &d, NULL, NULL, naggs, false, false, "NULL agg");
  smooth(NULL, NULL, agg.data(), dagg, naggs, false, false, "NULL A");
  {
    std::vector<int> col = A.col;
    int             *dc;

    col[5] = A.n; /* a column out of range */
    dc     = Upload(col);
    const PatchworkCSR hb = View(A, A.ptr.data(), col.data(), A.val.data()), db = View(A, dptr, dc, dval);
    smooth(&hb, &db, agg.data(), dagg, naggs, false, false, "column = n");
    CHECK_CUDA(cudaFree(dc));
    col[5] = -1;
    dc     = Upload(col);
    const PatchworkCSR hc = View(A, A.ptr.data(), col.data(), A.val.data()), dcc = View(A, dptr, dc, dval);
    smooth(&hc, &dcc, agg.data(), dagg, naggs, false, false, "column < 0");
    CHECK_CUDA(cudaFree(dc));
  }
  ReportRet(PatchworkSASmoothRef(&h, agg.data(), naggs, t.data(), s.data(), NULL), 1, "ref: smooth, NULL P");
  ReportRet(PatchworkSASmoothCUDA(&d, dagg, naggs, dt, ds, NULL, g_stream), 1, "cuda: smooth, NULL P");
  ReportRet(PatchworkSASmoothCUDA(&d, dagg, naggs, dt, ds, &P, g_stream), 0, "cuda: smooth, good arguments accepted after the refusals");
  PatchworkCSRMatrixFreeCUDA(&P);
  {
    PatchworkCSR e = {0, NULL, NULL, NULL};

    ReportRet(PatchworkSASmoothCUDA(&e, NULL, 0, NULL, NULL, &P, g_stream), 0, "cuda: smooth, no rows, NULL arrays");
    Result(P.nrow == 0 && P.nnz == 0 && P.ptr != NULL, "cuda: smooth, no rows: an empty P with its ptr");
    PatchworkCSRMatrixFreeCUDA(&P);
  }
  for (void *p : {(void *)dptr, (void *)dcol, (void *)dagg, (void *)dval, (void *)ds, (void *)dt, (void *)dzc}) CHECK_CUDA(cudaFree(p));
}

int main(int argc, char **argv)
{
  bool quick;
  int  ret = GpuTestStart(argc, argv, &quick);
  char label[96];

  if (ret >= 0) return ret;
  for (int m : {4, 9, 20, 64, 256}) {
    if (quick && m > 20) break;
    for (int b : {1, 2, 3}) {
      Csr              A;
      std::vector<int> agg;
      int              naggs;

      if (m == 256 && b != 3) continue;
      Laplacian7(m, b, A, agg, naggs);
      snprintf(label, sizeof(label), "fd7 %d^3, %d^3 blocks", m, b);
      Compare(label, A, agg, naggs, false, m >= 64);
      if (m <= 64) Compare(label, A, agg, naggs, true, false);
    }
  }
  for (int maxdeg : {3, 40, 600}) {
    for (int naggs : {1, 7, 500}) {
      Csr              A;
      std::vector<int> agg;
      const int        n = quick ? 300 : 3000;

      RandomGraph(n, maxdeg, naggs, A, agg);
      snprintf(label, sizeof(label), "random n=%d deg<=%d naggs=%d", n, maxdeg, naggs);
      Compare(label, A, agg, naggs, true, false);
    }
  }
  BadArguments();
  /* the two halves */
  for (int m : {4, 9, 20, 64}) {
    if (quick && m > 20) break;
    for (int b : {1, 3}) {
      Csr              A;
      std::vector<int> agg;
      int              naggs;

      Laplacian7(m, b, A, agg, naggs);
      snprintf(label, sizeof(label), "fd7 %d^3, %d^3 blocks", m, b);
      CompareHalves(label, A, agg, naggs, false);
      CompareHalves(label, A, agg, naggs, true);
    }
  }
  for (int maxdeg : {3, 40, 600}) {
    for (int naggs : {1, 7, 500}) {
      Csr              A;
      std::vector<int> agg;
      const int        n = quick ? 300 : 3000;

      RandomGraph(n, maxdeg, naggs, A, agg);
      snprintf(label, sizeof(label), "random n=%d deg<=%d naggs=%d", n, maxdeg, naggs);
      CompareHalves(label, A, agg, naggs, false);
      CompareHalves(label, A, agg, naggs, true);
    }
  }
  for (int naggs : {0, 3}) { /* no rows */
    Csr              A;
    std::vector<int> agg;

    A.ptr.assign(1, 0);
    snprintf(label, sizeof(label), "no rows, %d aggregates", naggs);
    CompareHalves(label, A, agg, naggs, false);
    CompareHalves(label, A, agg, naggs, true);
  }
  {
    const int sizes[][2] = {{0, 5}, {1, 3}, {100, 50}, {3000, 1000}, {100000, 30000}};

    for (const auto &sz : sizes) {
      if (quick && sz[0] > 3000) break;
      for (int maxdeg : {0, 3, 40})
        for (int g = 0; g < 3; g++) {
          const int           N = sz[0] + sz[1], naggs = g == 0 ? 1 : g == 1 ? std::max(1, N / 8) : N;
          Csr                 A;
          std::vector<int>    agg;
          std::vector<double> t, s(N);

          Extended(sz[0], sz[1], maxdeg, naggs, A, agg, t);
          for (auto &v : s) v = (4.0 / 3.0) / (1.0 + fabs(Rand()));
          snprintf(label, sizeof(label), "extended n=%d ghosts=%d deg<=%d naggs=%d", sz[0], sz[1], maxdeg, naggs);
          CompareSmooth(label, A, agg, naggs, t, s);
        }
    }
  }
  BadArgumentsHalves();
  printf("# %d passed, %d failed\n", g_pass, g_fail);
  CHECK_CUDA(cudaStreamDestroy(g_stream));
  return g_fail ? 1 : 0;
}
