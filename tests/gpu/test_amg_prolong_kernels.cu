/* GPU vs CPU: the smoothed-aggregation prolongator P = (I - diag(s) A) P~ (cuda/amg_prolong.cu vs
   src/core/amg_prolong_ref.c), and the reference itself against the formula evaluated row by row in
   long double with a map (an independent evaluation). Patterns must be equal exactly; values to a
   bound derived from double rounding: an entry is t_i [J = agg(i)] - s_i * (a sum of at most m
   products), so its error is at most (m + 2) eps (|t_i| + |s_i| sum |a_ik t_k|) per evaluation.
     test_amg_prolong_kernels [--quick]   (77 without a device) */
#include "gputest.h"
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

int main(int argc, char **argv)
{
  bool quick;
  int  ret = GpuTestStart(argc, argv, &quick);
  char label[64];

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
  printf("# %d passed, %d failed\n", g_pass, g_fail);
  CHECK_CUDA(cudaStreamDestroy(g_stream));
  return g_fail ? 1 : 0;
}
