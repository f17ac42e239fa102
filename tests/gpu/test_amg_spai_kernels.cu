/* GPU vs CPU: SPAI(1) by the normal equations, row i of M = argmin ||A^T m - e_i||_2 over the
   pattern J of row i of A (cuda/amg_spai.cu vs src/core/amg_spai_ref.c; the contract is in
   include/patchwork/amg_kernel.h), and the reference against an independent least-squares solve.
   Per input:
   - each answer alone: flag 0 or 1; accepted: kappa <= KMAX = 1e4, m finite; refused: kappa > KMAX
     (+inf for an empty row) and mval still the NaN bytes (0xFF) both buffers start with; on the
     GPU, rows longer than PATCHWORK_SPAI_MAX_ROW: flag 1, kappa -1, mval untouched.
   - flags equal on the rows both try, except where the reference's kappa is within tau(KMAX) KMAX
     of the limit (counted). That margin is a worst case; a real disagreement needs kappa within the
     actual rounding (~1e-12 relative) of the limit, so more than max(1, tried / 1000) fails.
   - m and kappa of the rows both accept, to the bounds below.
   - rows whose G is exactly singular (a zero or an empty row among the rows J): flag 1, kappa +inf
     on both. Rows whose J holds p and q with a_q = a_p (1 + d), |d| <= 1e-3 entrywise: sigma_min(C)
     <= ||c_p - c_q|| / sqrt2 <= 1e-3 ||c_p|| / sqrt2, so kappa_1(G) >= kappa_2(C)^2 >= 2e6: refused.
   - the reference on a subset of rows: m against min ||C m - e_i||_2 by Householder QR in long
     double on the dense |K| x nJ matrix C = A[J,K]^T, and kappa >= kappa_1(G) from that QR's R.
   Tolerances, first order in u = DBL_EPSILON / 2 (Higham, Accuracy and Stability of Numerical
   Algorithms, 2nd ed.); gamma(k) = k u / (1 - k u), n = nJ, L = the longest of the rows J.
   An evaluation forms G + D, |D| <= gamma(L) |C|^T|C| (G_ab sums at most L products, any order),
   and solves (G + D + E) m^ = r by Cholesky, |E| <= gamma(3n+1) |R^T||R| (Thm 10.4), where
   || |R^T||R| ||_1 <= n ||G||_1 / (1 - gamma(n+1)) (Cauchy-Schwarz on R's columns, whose squared
   norms are G's diagonal to gamma(n+1), Thm 10.3). So D + E has a symmetric bound B with
     ||B||_1 / ||G||_1 <= eps = gamma(L) || |C|^T|C| ||_1 / ||G||_1 + n gamma(3n+1) / (1 - gamma(n+1)),
   and m^ - m = -G^-1 (D + E) m^ gives ||m^ - m||_inf <= kappa eps / (1 - kappa eps) ||m^||_inf
   (||G^-1||_inf = ||G^-1||_1 <= kappa / ||G||_1). Two evaluations:
     ||m_gpu - m_ref||_inf <= 2 kappa eps / (1 - kappa eps) max(||m_gpu||_inf, ||m_ref||_inf).
   kappa = ||G||_1 max x max z, M(R) x = 1, M(R)^T z = 1. ||G||_1 moves by eps + gamma(n) relatively;
   R by ||dR||_F <= 2^-1/2 kappa_2(G) eps_F ||R||_2 (Thm 10.8; eps_F = ||D + E||_F / ||G||_2 <= n eps),
   so max x by at most max x ||dM(R)||_inf <= max x sqrt(n) ||dR||_F <= n^1.5 kappa^2 eps / sqrt2
   relatively (max x ||R||_2 <= kappa, as max z >= 1 / min r_jj), max z alike; the substitutions add
   nonnegative terms only: exact to gamma(n (n + 2)) componentwise. Two evaluations:
     |kappa_gpu - kappa_ref| <= tau kappa_ref,
     tau = 2 (eps + gamma(n + 2) + 2 gamma(n (n + 2)) + sqrt2 n^1.5 kappa^2 eps)
   (a worst case: 1e-4 at n = 7, 0.2 at n = 64 for kappa = 1e4; small kappa, tight bounds). The flag
   margin takes kappa = KMAX: a row accepted by either has kappa_1(G) <~ KMAX.
   The long-double QR: ||dC||_F <= e_q ||C||_F, e_q = gamma_ld(6 |K| n) (Thm 20.3; c = 6 for its
   unnamed constant); by Thm 20.1 with kappa_2(C)^2 = kappa_2(G) <= kappa and a residual <= 1, its m
   is within 2 kappa sqrt(n) e_q (||m||_2 + 1 / ||C||_2) of the exact one (||C||_2 >= max_a
   sqrt(G_aa)). The reference's m must be within that plus its one-evaluation bound, and
   kappa_1(G) <= kappa_ref (1 + gamma(n + 2) + 2 gamma(n (n + 2)) + eps + kappa eps + 2 n kappa e_q).
   Inputs (main): stencils, random patterns whose rows reach both tiers of the kernel and beyond,
   rows J lacking column i (r_a = 0), kappa spread across the limit, the corner cases. Bad arguments:
   1 from both; kappa NULL works. The full run ends with a timing table (GPU ms from CUDA events,
   median of 3 after a warm-up; CPU ms of the reference, one core) for the 27-point stencil on 64^3
   and the 7-point one on 128^3. Prints `ok ...` or `FAIL ...` per check and `# N passed, N failed`
   last; exits 0 when all pass, 1 otherwise, 77 without a CUDA device.

   Usage: test_amg_spai_kernels [--quick]   (--quick: small cases, for compute-sanitizer) */
#include "gputest.h"
#include "../roundoff.h"
#include <chrono>
#include <cmath>
#include <cfloat>
#include <patchwork/amg_kernel.h>

static const double KMAX = PATCHWORK_SPAI_KAPPA_MAX, U = DBL_EPSILON / 2;
static const int    MAXR = PATCHWORK_SPAI_MAX_ROW;

struct Csr {
  int                 n = 0;
  std::vector<int>    ptr{0}, col;
  std::vector<double> val;
  int                 Len(int i) const { return ptr[i + 1] - ptr[i]; }
  PatchworkCSR        View() const /* no entries: valid pointers all the same */
  {
    static const int    c0 = 0;
    static const double v0 = 0;
    return {n, ptr.data(), col.empty() ? &c0 : col.data(), val.empty() ? &v0 : val.data()};
  }
};

static int RandInt(int lo, int hi) /* uniform in [lo, hi] */
{
  return lo + (int)((Rand() + 1.0) * 0.5 * (hi - lo + 1)) % (hi - lo + 1);
}

static void SortUnique(std::vector<int> &v)
{
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

/* ---------------------------------------------------------------------------------------------
   Inputs */

/* rows as sorted column lists; off-diagonal values in [-1, 1), the diagonal (1.05 .. 1.55) times
   their absolute sum plus 0.1, then the row divided by that */
static Csr FromRows(const std::vector<std::vector<int>> &rows)
{
  Csr A;

  A.n = (int)rows.size();
  for (int i = 0; i < A.n; i++) {
    const size_t b   = A.val.size();
    double       off = 0, diag;

    for (int j : rows[i]) {
      A.col.push_back(j);
      A.val.push_back(j == i ? 0.0 : Rand());
      off += fabs(A.val.back());
    }
    diag = (1.3 + 0.25 * Rand()) * off + 0.1;
    for (size_t e = b; e < A.val.size(); e++) A.val[e] = A.col[e] == i ? 1 : A.val[e] / diag;
    A.ptr.push_back((int)A.col.size());
  }
  return A;
}

/* the 7- or 27-point stencil on an m^3 grid, x fastest */
static Csr Stencil(int m, int points)
{
  std::vector<std::vector<int>> rows((size_t)m * m * m);

  for (int i = 0; i < m * m * m; i++)
    for (int d = 0; d < 27; d++) {
      const int dx = d % 3 - 1, dy = d / 3 % 3 - 1, dz = d / 9 - 1, x = i % m + dx, y = i / m % m + dy, z = i / (m * m) + dz;

      if (x >= 0 && y >= 0 && z >= 0 && x < m && y < m && z < m && (points == 27 || abs(dx) + abs(dy) + abs(dz) <= 1)) rows[i].push_back((z * m + y) * m + x);
    }
  return FromRows(rows);
}

/* symmetric pattern, row i of about 1 + w_i entries: w_i / 2 edges from i to partners drawn with
   probability proportional to their w (Chung-Lu), as many reaching i; w in [0, 63], 4% in [66, 110] */
static Csr RandomSymmetric(int n)
{
  std::vector<std::vector<int>> rows(n);
  std::vector<double>           cum(n + 1, 0);

  for (int i = 0; i < n; i++) cum[i + 1] = cum[i] + (Rand() < -0.92 ? RandInt(66, 110) : RandInt(0, 63));
  for (int i = 0; i < n; i++) {
    rows[i].push_back(i);
    for (int e = (int)(cum[i + 1] - cum[i]) / 2; e > 0; e--) {
      const int j = std::min(n - 1, (int)(std::upper_bound(cum.begin(), cum.end(), 0.5 * (Rand() + 1) * cum[n]) - cum.begin()) - 1);

      rows[i].push_back(j);
      rows[j].push_back(i);
    }
  }
  for (auto &r : rows) SortUnique(r);
  return FromRows(rows);
}

/* nonsymmetric pattern: rows of exactly the listed lengths, random columns, i itself in 3/4 */
static Csr RandomNonsymmetric(int n)
{
  static const int              len[] = {1, 2, 16, 31, 32, 33, 63, 64, 65, 80};
  std::vector<std::vector<int>> rows(n);

  for (int i = 0; i < n; i++) {
    const int k = std::min(n, len[RandInt(0, 9)]);
    auto     &r = rows[i];

    if (Rand() < 0.5) r.push_back(i);
    while ((int)r.size() < k) {
      r.push_back(RandInt(0, n - 1));
      SortUnique(r);
    }
  }
  return FromRows(rows);
}

static Csr ScaleRows(Csr A, double decades) /* row i times 10^[-decades, decades] */
{
  for (int i = 0; i < A.n; i++) {
    const double s = pow(10.0, decades * Rand());

    for (int e = A.ptr[i]; e < A.ptr[i + 1]; e++) A.val[e] *= s;
  }
  return A;
}

static void SetRow(Csr &A, int i, const std::vector<int> &c, const std::vector<double> &v) /* c sorted */
{
  const int b = A.ptr[i], e = A.ptr[i + 1];

  A.col.erase(A.col.begin() + b, A.col.begin() + e);
  A.val.erase(A.val.begin() + b, A.val.begin() + e);
  A.col.insert(A.col.begin() + b, c.begin(), c.end());
  A.val.insert(A.val.begin() + b, v.begin(), v.end());
  for (int r = i + 1; r <= A.n; r++) A.ptr[r] += (int)c.size() - (e - b);
}

/* appends the rows whose pattern holds columns p and q to out */
static void RowsHolding(const Csr &A, int p, int q, std::vector<int> &out)
{
  for (int i = 0; i < A.n; i++)
    if (std::binary_search(A.col.data() + A.ptr[i], A.col.data() + A.ptr[i + 1], p) && std::binary_search(A.col.data() + A.ptr[i], A.col.data() + A.ptr[i + 1], q)) out.push_back(i);
}

/* count pairs: row q := row p times (1 + d), |d| <= 1e-3, q a neighbour of p, each row in one pair
   at most (so p's row is A's own); the rows that must be refused (p and q both in J) */
static std::vector<int> NearlyEqualRows(Csr &A, int count)
{
  std::vector<char> used(A.n, 0);
  std::vector<int>  refuse, pair;

  for (int t = 0; t < 50 * count && (int)pair.size() < 2 * count; t++) {
    const int p = RandInt(0, A.n - 1), q = A.col[A.ptr[p] + RandInt(0, A.Len(p) - 1)];

    if (q == p || used[p] || used[q]) continue;
    std::vector<double> v(A.val.begin() + A.ptr[p], A.val.begin() + A.ptr[p + 1]);
    for (double &x : v) x *= 1 + 1e-3 * Rand();
    SetRow(A, q, std::vector<int>(A.col.begin() + A.ptr[p], A.col.begin() + A.ptr[p + 1]), v);
    used[p] = used[q] = 1;
    pair.insert(pair.end(), {p, q});
  }
  for (size_t t = 0; t < pair.size(); t += 2) RowsHolding(A, pair[t], pair[t + 1], refuse);
  SortUnique(refuse);
  return refuse;
}

/* ---------------------------------------------------------------------------------------------
   Row i's least-squares problem in the test: K, per column of K its entries (a, a(J_a, k)) in the
   rows J, and G's norms */

struct RowInfo {
  int    nJ = 0, L = 0, nK = 0, self = -1; /* self: i's position in K, -1: none */
  double gnorm = 0, cnorm = 0, gdiag = 0;  /* ||G||_1, || |C|^T|C| ||_1, max_a G_aa */
};

struct Analyzer {
  std::vector<int>                                   mark, K;
  std::vector<std::vector<std::pair<int, double>>> bucket;
  std::vector<double>                                t, G;

  explicit Analyzer(int n) : mark(n, -1) {}

  RowInfo Get(const Csr &A, int i)
  {
    RowInfo   r;
    const int n = r.nJ = A.Len(i), *J = A.col.data() + A.ptr[i];

    K.clear();
    for (int a = 0; a < n; a++) {
      r.L = std::max(r.L, A.Len(J[a]));
      for (int e = A.ptr[J[a]]; e < A.ptr[J[a] + 1]; e++) {
        if (mark[A.col[e]] < 0) {
          mark[A.col[e]] = (int)K.size();
          K.push_back(A.col[e]);
          if (bucket.size() < K.size()) bucket.emplace_back();
          bucket[K.size() - 1].clear();
        }
        bucket[mark[A.col[e]]].push_back({a, A.val[e]});
      }
    }
    r.nK   = (int)K.size();
    r.self = mark[i];
    for (int k : K) mark[k] = -1;
    /* G (upper triangle: a ascends in a bucket) and || |C|^T|C| ||_1 = max_b sum_l |c_lb| (|C| 1)_l */
    G.assign((size_t)n * n, 0);
    t.assign(n, 0);
    for (int k = 0; k < r.nK; k++) {
      const auto &c  = bucket[k];
      double      sk = 0;

      for (size_t p = 0; p < c.size(); p++) {
        sk += fabs(c[p].second);
        for (size_t q = p; q < c.size(); q++) G[(size_t)c[p].first * n + c[q].first] += c[p].second * c[q].second;
      }
      for (const auto &e : c) t[e.first] += fabs(e.second) * sk;
    }
    for (int b = 0; b < n; b++) {
      double c = 0;

      for (int a = 0; a < n; a++) c += fabs(G[a <= b ? (size_t)a * n + b : (size_t)b * n + a]);
      r.gnorm = ErrMax(r.gnorm, c);
      r.cnorm = ErrMax(r.cnorm, t[b]);
      r.gdiag = ErrMax(r.gdiag, G[(size_t)b * n + b]);
    }
    return r;
  }
};

static double Eps(const RowInfo &r) /* ||B||_1 / ||G||_1 of one evaluation (the top) */
{
  return r.gnorm > 0 ? Gamma(r.L, U) * r.cnorm / r.gnorm + r.nJ * Gamma(3 * r.nJ + 1, U) / (1 - Gamma(r.nJ + 1, U)) : INFINITY;
}

static double Tau(int n, double kappa, double eps) /* relative tolerance on kappa, GPU vs CPU */
{
  return 2 * (eps + Gamma(n + 2, U) + 2 * Gamma(n * (n + 2), U) + sqrt(2.0) * pow(n, 1.5) * kappa * kappa * eps);
}

/* ---------------------------------------------------------------------------------------------
   Checks */

struct Out {
  std::vector<double> m, kappa; /* kappa empty: NULL was passed */
  std::vector<int>    flag;
};

/* the contract on one implementation's own answers; the first offence into why */
static int SelfCheck(const Csr &A, const Out &o, bool gpu, char *why, size_t len)
{
  int bad = 0;

  for (int i = 0; i < A.n; i++) {
    const int           nJ = A.Len(i), f = o.flag[i];
    const double        k  = o.kappa.empty() ? 0 : o.kappa[i], *m = o.m.data() + A.ptr[i];
    const unsigned char nan[sizeof(double)] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    bool                ok = f == 0 || f == 1;

    for (int e = 0; e < nJ; e++) ok = ok && (f == 0 ? std::isfinite(m[e]) : !memcmp(m + e, nan, sizeof(double)));
    if (f == 0) ok = ok && nJ > 0 && !(gpu && nJ > MAXR) && (o.kappa.empty() || k <= KMAX);
    if (f == 1 && !o.kappa.empty()) ok = ok && (nJ == 0 ? k == INFINITY : gpu && nJ > MAXR ? k == -1 : k > KMAX);
    if (!ok && !bad++) snprintf(why, len, "; first: row %d (%d entries) flag %d kappa %.6g", i, nJ, f, k);
  }
  return bad;
}

static void Compare(const char *label, const Csr &A, const Out &ref, const Out &gpu, const std::vector<int> &must_inf, const std::vector<int> &must_refuse)
{
  Analyzer   an(A.n);
  const bool gk = !gpu.kappa.empty();
  char       why[2][200] = {"", ""};
  int        tried = 0, both = 0, near = 0, near_diff = 0, far_diff = 0, badm = 0, badk = 0, acc[2] = {0, 0}, bad[2] = {0, 0};
  double     wm = 0, wk = 0;

  for (int i = 0; i < A.n; i++) acc[0] += ref.flag[i] == 0, acc[1] += gpu.flag[i] == 0;
  Result(!SelfCheck(A, ref, false, why[0], 200), "%s: ref answers keep the contract, %d of %d rows accepted%s", label, acc[0], A.n, why[0]);
  Result(!SelfCheck(A, gpu, true, why[1], 200), "%s: cuda answers keep the contract (untried rows: flag 1, kappa -1), %d accepted%s", label, acc[1], why[1]);
  why[0][0] = why[1][0] = 0;
  for (int i = 0; i < A.n; i++) {
    const int    nJ = A.Len(i), p0 = A.ptr[i];
    const double kc = ref.kappa[i];

    if (nJ > MAXR || nJ == 0) continue;
    tried++;
    if (!std::isfinite(kc) && ref.flag[i] == gpu.flag[i]) continue;
    const RowInfo r = an.Get(A, i);
    const double  eps = Eps(r), kappa = gk ? ErrMax(kc, gpu.kappa[i]) : kc;
    const bool    isnear = std::isfinite(kc) && fabs(kc - KMAX) <= Tau(nJ, KMAX, eps) * KMAX;
    double        d = 0, mx = 0, tol;

    near += isnear;
    if (ref.flag[i] != gpu.flag[i]) {
      if (isnear) near_diff++;
      else if (!far_diff++) snprintf(why[0], 200, "; first: row %d flag ref %d cuda %d, kappa ref %.6g cuda %.6g", i, ref.flag[i], gpu.flag[i], kc, gk ? gpu.kappa[i] : NAN);
    }
    if (ref.flag[i] || gpu.flag[i]) continue;
    both++;
    for (int e = p0; e < p0 + nJ; e++) {
      d  = ErrMax(d, fabs(gpu.m[e] - ref.m[e]));
      mx = ErrMax(mx, ErrMax(fabs(gpu.m[e]), fabs(ref.m[e])));
    }
    tol = kappa * eps < 1 ? 2 * kappa * eps / (1 - kappa * eps) * mx : INFINITY;
    if (!(d <= tol) && !badm++) snprintf(why[1], 200, "; first: row %d |dm| %.3g bound %.3g", i, d, tol);
    wm = ErrMax(wm, tol > 0 ? d / tol : d == 0 ? 0.0 : INFINITY);
    if (gk) {
      const double dk = fabs(gpu.kappa[i] - kc) / (Tau(nJ, kappa, eps) * kc);

      badk += !(dk <= 1);
      wk = ErrMax(wk, dk);
    }
  }
  const int allowed = std::max(1, tried / 1000);
  Result(far_diff == 0 && near_diff <= allowed, "%s: flags equal on the %d rows both try; %d near the limit (within tau(KMAX)), %d of those differ (<= %d allowed)%s", label, tried, near, near_diff, allowed, why[0]);
  Result(badm == 0, "%s: m of the %d rows both accept, worst |gpu - ref|_inf %.3g of the bound%s", label, both, wm, why[1]);
  if (gk) Result(badk == 0, "%s: kappa of the %d rows both accept, worst |gpu - ref| %.3g of tau kappa_ref", label, both, wk);
  for (int i : must_inf) bad[0] += !(ref.flag[i] == 1 && gpu.flag[i] == 1 && ref.kappa[i] == INFINITY && (!gk || gpu.kappa[i] == INFINITY));
  for (int i : must_refuse) bad[1] += !(ref.flag[i] == 1 && gpu.flag[i] == 1 && ref.kappa[i] > KMAX && (!gk || gpu.kappa[i] > KMAX || A.Len(i) > MAXR));
  if (!must_inf.empty()) Result(!bad[0], "%s: the %zu rows with an exactly singular G (a zero or empty row among J): flag 1, kappa +inf on both (%d not)", label, must_inf.size(), bad[0]);
  if (!must_refuse.empty()) Result(!bad[1], "%s: the %zu rows holding two nearly equal rows (kappa_1(G) >= 2e6): refused by both (%d not)", label, must_refuse.size(), bad[1]);
}

/* min ||C m - e_i||_2 by Householder QR in long double, C dense |K| x nJ, column-major, from an's
   last row; kappa_1(G) = ||G||_1 ||R^-1 R^-T||_1 from its R. false: C rank deficient. */
static bool SolveQR(const Analyzer &an, const RowInfo &r, std::vector<long double> &m, long double *kappa1)
{
  const int                nK = r.nK, n = r.nJ;
  std::vector<long double> C((size_t)nK * n, 0), b(nK, 0), x(n);
  long double              gi = 0;

  if (nK < n) return false;
  for (int k = 0; k < nK; k++)
    for (const auto &e : an.bucket[k]) C[(size_t)e.first * nK + k] = e.second;
  if (r.self >= 0) b[r.self] = 1;
  for (int j = 0; j < n; j++) {
    long double *c = &C[(size_t)j * nK], s = 0, alpha, vv = 0;

    for (int k = j; k < nK; k++) s += c[k] * c[k];
    if (!(s > 0)) return false;
    alpha = c[j] > 0 ? -sqrtl(s) : sqrtl(s);
    c[j] -= alpha; /* c[j..nK): the Householder vector */
    for (int k = j; k < nK; k++) vv += c[k] * c[k];
    for (int q = j + 1; q <= n; q++) {
      long double *y = q < n ? &C[(size_t)q * nK] : b.data(), d = 0;

      for (int k = j; k < nK; k++) d += c[k] * y[k];
      for (int k = j; k < nK; k++) y[k] -= 2 * d / vv * c[k];
    }
    c[j] = alpha;
  }
  auto R = [&](int i, int j) { return C[(size_t)j * nK + i]; };
  for (int c = -1; c < n; c++) { /* c = -1: R m = (Q^T b)[0..n); else column c of G^-1 = R^-1 R^-T e_c */
    long double s = 0;

    for (int i = 0; i < n; i++) { /* c >= 0: R^T x = e_c first */
      x[i] = c < 0 ? b[i] : i == c;
      for (int j = 0; j < i && c >= 0; j++) x[i] -= R(j, i) * x[j];
      if (c >= 0) x[i] /= R(i, i);
    }
    for (int i = n - 1; i >= 0; i--) {
      for (int j = i + 1; j < n; j++) x[i] -= R(i, j) * x[j];
      s += fabsl(x[i] /= R(i, i));
    }
    if (c < 0) m = x;
    else gi = std::max(gi, s);
  }
  *kappa1 = r.gnorm * gi;
  return true;
}

/* the reference against the QR: the rows first, then every (n / 200)-th row, as long as the budget
   of |K| nJ^2 long-double multiply-adds lasts; rows with kappa_ref eps >= 0.01 left out */
static void CheckReference(const char *label, const Csr &A, const Out &ref, std::vector<int> rows, double budget)
{
  Analyzer                 an(A.n);
  std::vector<long double> mq;
  int                      nm = 0, nk = 0, badm = 0, badk = 0;
  double                   wm = 0, wk = 0;
  char                     why[200] = "";

  for (int i = 0; i < A.n; i += std::max(1, A.n / 200)) rows.push_back(i);
  for (int i : rows) {
    const int    nJ = A.Len(i);
    const double kc = ref.kappa[i];
    long double  k1;

    if (nJ == 0 || !(kc <= 1e8)) continue;
    const RowInfo r = an.Get(A, i);
    const double  eps = Eps(r), eq = Gamma(6 * r.nK * nJ, LongDoubleRoundoff()), cost = (double)r.nK * nJ * nJ;
    const double  t1 = Gamma(nJ + 2, U) + 2 * Gamma(nJ * (nJ + 2), U) + eps + kc * eps + 2 * nJ * kc * eq;

    if (cost > budget || kc * eps >= 0.01 || !SolveQR(an, r, mq, &k1)) continue;
    budget -= cost;
    nk++;
    badk += !((double)k1 <= kc * (1 + t1));
    wk = ErrMax(wk, (double)k1 / kc);
    if (ref.flag[i]) continue;
    double d = 0, mx = 0, m2 = 0, tol;

    nm++;
    for (int a = 0; a < nJ; a++) {
      d  = ErrMax(d, (double)fabsl(ref.m[A.ptr[i] + a] - mq[a]));
      mx = ErrMax(mx, fabs(ref.m[A.ptr[i] + a]));
      m2 += (double)(mq[a] * mq[a]);
    }
    tol = kc * eps / (1 - kc * eps) * mx + 2 * kc * sqrt((double)nJ) * eq * (sqrt(m2) + 1 / sqrt(r.gdiag));
    if (!(d <= tol) && !badm++) snprintf(why, sizeof(why), "; first: row %d |dm| %.3g bound %.3g", i, d, tol);
    wm = ErrMax(wm, tol > 0 ? d / tol : d == 0 ? 0.0 : INFINITY);
  }
  Result(badm == 0, "%s: ref m against a long-double QR on %d accepted rows, worst %.3g of the bound%s", label, nm, wm, why);
  Result(badk == 0, "%s: ref kappa bounds kappa_1(G) of the QR on %d rows (%d not), largest kappa_1 / kappa %.3g", label, nk, badk, wk);
}

/* ---------------------------------------------------------------------------------------------
   One input: both implementations, the checks, optionally the kappa NULL runs and the timing */

template <typename T>
static T *DeviceZeros(size_t n) /* one element at least */
{
  return Upload(std::vector<T>(std::max<size_t>(n, 1)));
}

static PatchworkCSR UploadCsr(const Csr &A)
{
  return {A.n, Upload(A.ptr), Upload(A.col), Upload(A.val)};
}

static void FreeCsr(const PatchworkCSR &d)
{
  CHECK_CUDA(cudaFree((void *)d.ptr));
  CHECK_CUDA(cudaFree((void *)d.col));
  CHECK_CUDA(cudaFree((void *)d.val));
}

struct Timing { const char *matrix; int n, nnz; double gpu_ms, cpu_ms, accepted; };

/* the reference's answer; mval one entry at least (NULL is refused) */
static int RunRef(const Csr &A, Out &o, bool kappa)
{
  const PatchworkCSR hA = A.View();

  o.m.resize(std::max<size_t>(A.col.size(), 1));
  memset(o.m.data(), 0xFF, o.m.size() * sizeof(double));
  o.flag.assign(A.n, -1);
  o.kappa.assign(kappa ? A.n : 0, NAN);
  return PatchworkSPAI1NormalRef(&hA, o.m.data(), o.flag.data(), kappa ? o.kappa.data() : nullptr);
}

/* the GPU's answer, into buffers of NaN bytes (flags -1) */
static int RunGPU(const PatchworkCSR &dA, size_t nnz, double *dm, int *df, double *dk, Out &o, bool kappa)
{
  int  ret;
  auto get = [](auto &h, const void *d, size_t n) {
    h.resize(n);
    if (n) CHECK_CUDA(cudaMemcpyAsync(h.data(), d, n * sizeof(h[0]), cudaMemcpyDeviceToHost, g_stream));
  };

  CHECK_CUDA(cudaMemsetAsync(dm, 0xFF, std::max<size_t>(nnz, 1) * sizeof(double), g_stream));
  CHECK_CUDA(cudaMemsetAsync(df, 0xFF, std::max(dA.n, 1) * sizeof(int), g_stream));
  CHECK_CUDA(cudaMemsetAsync(dk, 0xFF, std::max(dA.n, 1) * sizeof(double), g_stream));
  if (!(ret = PatchworkSPAI1NormalCUDA(&dA, dm, df, kappa ? dk : nullptr, g_stream))) {
    get(o.m, dm, nnz);
    get(o.flag, df, dA.n);
    get(o.kappa, dk, kappa ? dA.n : 0);
  }
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  return ret;
}

static void Run(const char *label, const Csr &A, double budget, const std::vector<int> &must_inf = {}, const std::vector<int> &must_refuse = {}, bool null_kappa = false, std::vector<Timing> *timing = nullptr)
{
  const size_t nnz = A.col.size();
  PatchworkCSR dA  = UploadCsr(A);
  double      *dm = DeviceZeros<double>(nnz), *dk = DeviceZeros<double>(A.n);
  int         *df = DeviceZeros<int>(A.n), tier[4] = {0, 0, 0, 0}, ret, rret;
  Out          ref, gpu, o;
  char         name[160];

  for (int i = 0; i < A.n; i++) tier[A.Len(i) == 0 ? 0 : A.Len(i) <= 32 ? 1 : A.Len(i) <= MAXR ? 2 : 3]++;
  snprintf(name, sizeof(name), "%s (%d rows, %zu entries)", label, A.n, nnz);
  printf("# %s: rows of 0 | 1..32 | 33..%d | > %d entries: %d | %d | %d | %d\n", name, MAXR, MAXR, tier[0], tier[1], tier[2], tier[3]);
  const auto c0 = std::chrono::steady_clock::now();
  rret = RunRef(A, ref, true);
  const double cpu_ms = 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
  ret = RunGPU(dA, nnz, dm, df, dk, gpu, true);
  if (rret || ret) Result(false, "%s: PatchworkSPAI1NormalRef returned %d, PatchworkSPAI1NormalCUDA %d (%s)", name, rret, ret, cudaGetErrorString((cudaError_t)ret));
  else {
    Compare(name, A, ref, gpu, must_inf, must_refuse);
    CheckReference(name, A, ref, must_refuse, budget);
  }
  if (null_kappa && !ret && !rret) { /* kappa NULL: the GPU against the reference, the reference against itself */
    snprintf(name, sizeof(name), "%s, kappa NULL", label);
    if ((ret = RunGPU(dA, nnz, dm, df, dk, o, false))) Result(false, "%s: PatchworkSPAI1NormalCUDA returned %d", name, ret);
    else Compare(name, A, ref, o, {}, {});
    rret = RunRef(A, o, false);
    Result(!rret && o.flag == ref.flag && !memcmp(o.m.data(), ref.m.data(), o.m.size() * sizeof(double)), "%s: ref returned %d, flags and m bytes equal to its run with kappa", name, rret);
  }
  if (timing && !ret) {
    cudaEvent_t        e0, e1;
    std::vector<float> t(3);
    int                acc = 0;

    CHECK_CUDA(cudaEventCreate(&e0));
    CHECK_CUDA(cudaEventCreate(&e1));
    for (auto &ms : t) { /* the checked call above was the warm-up */
      CHECK_CUDA(cudaEventRecord(e0, g_stream));
      CheckRet(PatchworkSPAI1NormalCUDA(&dA, dm, df, dk, g_stream), "PatchworkSPAI1NormalCUDA");
      CHECK_CUDA(cudaEventRecord(e1, g_stream));
      CHECK_CUDA(cudaEventSynchronize(e1));
      CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
    }
    std::sort(t.begin(), t.end());
    CHECK_CUDA(cudaEventDestroy(e0));
    CHECK_CUDA(cudaEventDestroy(e1));
    for (int f : gpu.flag) acc += f == 0;
    timing->push_back({label, A.n, (int)nnz, t[1], cpu_ms, A.n ? (double)acc / A.n : 0});
  }
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  CHECK_CUDA(cudaFree(dm));
  CHECK_CUDA(cudaFree(dk));
  CHECK_CUDA(cudaFree(df));
  FreeCsr(dA);
}

/* ---------------------------------------------------------------------------------------------
   Bad arguments: 1 from both; kappa NULL, and n = 0 with every array NULL, accepted */

static void BadArguments(void)
{
  const Csr           A  = Stencil(3, 7);
  const PatchworkCSR  hA = A.View(), dA = UploadCsr(A), z = {0, nullptr, nullptr, nullptr};
  std::vector<double> hm(A.col.size()), hk(A.n);
  std::vector<int>    hf(A.n);
  double             *dm = DeviceZeros<double>(A.col.size()), *dk = DeviceZeros<double>(A.n);
  int                *df = DeviceZeros<int>(A.n);

  for (int g = 0; g < 2; g++) {
    PatchworkCSR a = g ? dA : hA, neg = a, noptr = a;
    double      *m = g ? dm : hm.data(), *k = g ? dk : hk.data();
    int         *f = g ? df : hf.data();
    auto         call = [&](const char *what, const PatchworkCSR *M, double *mv, int *fl, double *ka, int want) {
      char name[96];

      snprintf(name, sizeof(name), "%s: %s", g ? "cuda" : "ref", what);
      ReportRet(g ? PatchworkSPAI1NormalCUDA(M, mv, fl, ka, g_stream) : PatchworkSPAI1NormalRef(M, mv, fl, ka), want, name);
    };

    neg.n     = -1;
    noptr.ptr = nullptr;
    call("A NULL", nullptr, m, f, k, 1);
    call("n < 0", &neg, m, f, k, 1);
    call("ptr NULL", &noptr, m, f, k, 1);
    call("mval NULL", &a, nullptr, f, k, 1);
    call("flag NULL", &a, m, nullptr, k, 1);
    call("kappa NULL: accepted", &a, m, f, nullptr, 0);
    call("n = 0, every array NULL: accepted", &z, nullptr, nullptr, nullptr, 0);
  }
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  CHECK_CUDA(cudaFree(dm));
  CHECK_CUDA(cudaFree(dk));
  CHECK_CUDA(cudaFree(df));
  FreeCsr(dA);
}

int main(int argc, char **argv)
{
  bool quick;
  int  rc = GpuTestStart(argc, argv, &quick);

  if (rc >= 0) return rc;
  const double budget = quick ? 5e7 : 5e8; /* long-double multiply-adds of the QR checks, per input */
  Csr          A;

  BadArguments();
  Run("n = 0", A, budget);
  A.n   = 1;
  A.ptr = {0, 1};
  A.col = {0};
  A.val = {2.5};
  Run("one row, a = 2.5", A, budget);
  A.val = {0.0};
  Run("one row, a stored 0", A, budget, {0});
  A.ptr = {0, 0};
  A.col.clear();
  A.val.clear();
  Run("one row, empty", A, budget, {0});
  Run("7-point", Stencil(quick ? 8 : 24, 7), budget); /* diagonally dominant: all accepted */
  Run("27-point", Stencil(quick ? 6 : 16, 27), budget);
  /* rows of 1..110 entries (untried rows, and long rows among the rows J of tried ones); rows of
     exactly 1, 2, 31, 32, 33, 63, 64, 65 ... entries, r_a = 0 where row J_a lacks column i (r = 0,
     m = 0 in places); kappa spread across the limit by scaled rows */
  Run("random symmetric", RandomSymmetric(quick ? 250 : 6000), budget, {}, {}, true);
  Run("random nonsymmetric", RandomNonsymmetric(quick ? 200 : 4000), budget);
  Run("27-point, rows scaled by 10^[-1,1]", ScaleRows(Stencil(quick ? 6 : 12, 27), 1), budget);
  Run("7-point, rows scaled by 10^[-1.5,1.5]", ScaleRows(Stencil(quick ? 8 : 16, 7), 1.5), budget);
  A = Stencil(quick ? 8 : 16, 7);
  const std::vector<int> refuse = NearlyEqualRows(A, quick ? 20 : 200);
  Run("7-point, nearly equal rows", A, budget, {}, refuse);
  { /* a row of stored zeros (its diagonal among them) and an empty row: every row holding either */
    const int        z = (A = Stencil(quick ? 5 : 10, 27)).n / 3, e = 2 * A.n / 3;
    std::vector<int> inf = {e};

    for (int t = A.ptr[z]; t < A.ptr[z + 1]; t++) A.val[t] = 0;
    SetRow(A, e, {}, {});
    RowsHolding(A, z, z, inf);
    RowsHolding(A, e, e, inf);
    SortUnique(inf);
    Run("27-point, a zero row and an empty row", A, budget, inf);
  }
  if (!quick) {
    std::vector<Timing> rows;

    Run("27-point 64^3", Stencil(64, 27), budget, {}, {}, false, &rows);
    Run("7-point 128^3", Stencil(128, 7), budget, {}, {}, false, &rows);
    printf("# SPAI(1) normal equations (GPU: CUDA events, median of 3 after a warm-up; CPU: the reference, one core)\n");
    printf("# %-14s %9s %10s %9s %9s %8s %9s\n", "matrix", "rows", "nnz", "GPU ms", "CPU ms", "speedup", "accepted");
    for (const Timing &r : rows)
      printf("# %-14s %9d %10d %9.3f %9.1f %7.1fx %8.2f%%\n", r.matrix, r.n, r.nnz, r.gpu_ms, r.cpu_ms, r.cpu_ms / std::max(r.gpu_ms, 1e-3), 100 * r.accepted);
  }
  CHECK_CUDA(cudaStreamDestroy(g_stream));
  CHECK_CUDA(cudaDeviceSynchronize());
  /* one line, last: the scripts take it as the summary */
  printf("# %d passed, %d failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
