/* GPU-vs-CPU test of the patch block-Jacobi relaxation kernels on the patchSPM layout
   (include/patchwork/amg_kernel.h), PETSc-free.

   Compares PatchworkSPM{PatchRelax,BoundaryResidual,Mult}CUDA (cuda/amg_relax.cu) with the CPU
   reference (src/core/amg_relax_ref.c) on random symmetric, diagonally dominant matrices: 3D 7- and
   27-point stencils with random weights, random local graphs with some long edges, a graph dense
   enough that the patch blocks overflow the kernel's shared-memory staging (the global-memory
   path), and patches of one row; contiguous patches of random sizes up to max_patch = 1, 7, 33, 100,
   384, 1024 (one patch of each problem has exactly max_patch rows), entries of each row in random
   order, double and single values. PatchRelax runs from a zero guess (x filled with NaN on the
   device, so that reading it shows) and from x, with inner = 1, 2, 3, 5, with r separate, r = NULL
   and r aliasing b (b must stay as it was when r is not b). BoundaryResidual also with y aliasing z.
   Bad descriptors must be refused with cudaErrorInvalidValue.
   The row map: every problem runs twice, with the identity layout and with a random permutation
   `row` (vectors in level order, AB columns renumbered to level rows). The tolerances are computed in
   position order from the identity layout's reference; in the row-mapped run the reference is also
   run with the map and must give the identity reference's bits (permuted), and the GPU's results
   are mapped back to positions and held to the same tolerance.

   PatchworkSPMBuildCUDA (cuda/amg_spm.cu) against PatchworkSPMBuildRef (src/core/amg_spm_ref.c):
   random CSR matrices in level rows (entries near the row's position and anywhere, repeated ones,
   the diagonal absent, once or repeated, rows in random order, random double values), patches of
   random sizes (some empty, one beyond the relaxation's 1024), identity or random positions, single
   and double values, up to a few million rows (--quick: up to 20000): every array, count and scalar
   must be equal exactly. Bad arguments must return 1 and leave the descriptor empty.

   Tolerances come from the precision: both sides compute in double from the same values and differ
   by rounding only (fused multiply-adds, the grouping of the sums). Each stage (t, every sweep, the
   update of x, r) is a row sum of at most L = (entries of the row) + 5 operations, and the earlier
   stages' errors propagate through maps bounded by the same recursion on |A|, |b|, |x| (the
   majorant M, computed here), so each side is within (stages) L u M of the exact result; the check
   is |gpu - ref| <= (stages) L eps M entry by entry, stages = inner + 3 (1 for Mult and
   BoundaryResidual). err is printed as the largest |gpu - ref| / (eps M), tol as (stages) L.
   Prints one line per check, `ok ...` or `FAIL ...`, and exits 0 when all pass, 1 otherwise, 77
   without a CUDA device.

   Usage: test_amg_kernels [--quick]   (--quick: small problems, for compute-sanitizer) */
#include <cuda_runtime.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <algorithm>
#include <map>
#include <vector>
#include <patchwork/amg_kernel.h>

#include "gputest.h"

static double g_worst = 0;
static char   g_worst_name[256];


static void Download(std::vector<double> &h, const double *d)
{
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  CHECK_CUDA(cudaMemcpy(h.data(), d, h.size() * sizeof(double), cudaMemcpyDeviceToHost));
}

static int RandInt(int lo, int hi) /* uniform in [lo, hi] */
{
  return lo + (int)((Rand() + 1.0) * 0.5 * (hi - lo + 1)) % (hi - lo + 1);
}

enum Kind { GRID7, GRID27, LOCAL, DENSE, POINT };

struct ProblemSpec {
  const char *name;
  Kind        kind;
  int         grid[3], n, maxp, deg, width;
};

/* A problem on the host (both value types) and on the device */
struct Problem {
  int                 n = 0, npatch = 0, maxp = 0, maxlen = 0;
  std::vector<int>    patch_ptr, ai_ptr, ai_col, ab_ptr, ab_col; /* ab_col: positions (the identity layout's) */
  std::vector<int>    row, ab_lvl;                                /* the row map and the AB columns in level rows; empty: identity */
  std::vector<double> ai, ab, dg;                                 /* float-rounded when single */
  int                *d_patch_ptr, *d_ai_ptr, *d_ai_col, *d_ab_ptr, *d_ab_col, *d_row;
  void               *d_ai, *d_ab, *d_dg;
  PatchworkSPMDesc    host, hmap, dev; /* host: identity layout; hmap: host with the row map (= host without); dev: the device's, with the map */
};

/* v in position order -> level order (vl[row[i]] = v[i]), and back */
static std::vector<double> ToLevel(const Problem &P, const std::vector<double> &v)
{
  if (P.row.empty()) return v;
  std::vector<double> vl(v.size());
  for (size_t i = 0; i < v.size(); i++) vl[P.row[i]] = v[i];
  return vl;
}

static std::vector<double> ToPosition(const Problem &P, const std::vector<double> &vl)
{
  if (P.row.empty()) return vl;
  std::vector<double> v(vl.size());
  for (size_t i = 0; i < v.size(); i++) v[i] = vl[P.row[i]];
  return v;
}

static Problem Build(const ProblemSpec &S, int single, bool map)
{
  Problem                            P;
  const int                          n = S.n;
  std::vector<std::map<int, double>> rows(n);
  auto                               edge = [&](int i, int j, double w) {
    if (i == j || j < 0 || j >= n) return;
    rows[i][j] = w;
    rows[j][i] = w;
  };

  if (S.kind == GRID7 || S.kind == GRID27) {
    const int nx = S.grid[0], ny = S.grid[1], nz = S.grid[2];
    for (int z = 0; z < nz; z++)
      for (int y = 0; y < ny; y++)
        for (int x = 0; x < nx; x++)
          for (int dz = -1; dz <= 1; dz++)
            for (int dy = -1; dy <= 1; dy++)
              for (int dx = -1; dx <= 1; dx++) {
                if (x + dx < 0 || x + dx >= nx || y + dy < 0 || y + dy >= ny || z + dz < 0 || z + dz >= nz) continue;
                if (S.kind == GRID7 && abs(dx) + abs(dy) + abs(dz) != 1) continue;
                const int i = (z * ny + y) * nx + x, j = ((z + dz) * ny + y + dy) * nx + x + dx;
                if (j > i) edge(i, j, -(1.0 + Rand()) * 0.5 - 0.25);
              }
  } else if (S.kind == POINT) {
    for (int q = 0; q < n; q++) edge(RandInt(0, n - 1), RandInt(0, n - 1), Rand());
  } else {
    for (int i = 0; i < n; i++)
      for (int q = 0; q < S.deg; q++) edge(i, Rand() > 0.8 ? RandInt(0, n - 1) : i + RandInt(-S.width, S.width), Rand());
  }
  /* contiguous patches: the first one has exactly maxp rows, the others random sizes 1..maxp */
  P.n = n;
  P.patch_ptr.push_back(0);
  for (int start = 0; start < n;) {
    const int m = std::min(start == 0 ? S.maxp : RandInt(1, S.maxp), n - start);
    P.maxp      = std::max(P.maxp, m);
    start += m;
    P.patch_ptr.push_back(start);
  }
  P.npatch = (int)P.patch_ptr.size() - 1;
  P.dg.resize(n);
  P.ai_ptr.push_back(0);
  P.ab_ptr.push_back(0);
  for (int p = 0; p < P.npatch; p++) {
    const int s = P.patch_ptr[p], e = P.patch_ptr[p + 1];
    for (int i = s; i < e; i++) {
      const size_t ai0 = P.ai.size(), ab0 = P.ab.size();
      double       sum = 0;
      for (const auto &kv : rows[i]) {
        const double v = single ? (double)(float)kv.second : kv.second;
        sum += fabs(v);
        if (kv.first >= s && kv.first < e) {
          P.ai_col.push_back(kv.first - s);
          P.ai.push_back(v);
        } else {
          P.ab_col.push_back(kv.first);
          P.ab.push_back(v);
        }
      }
      /* random order within the row */
      for (size_t k = P.ai.size() - ai0; k > 1; k--) {
        const size_t q = ai0 + RandInt(0, (int)k - 1);
        std::swap(P.ai[ai0 + k - 1], P.ai[q]);
        std::swap(P.ai_col[ai0 + k - 1], P.ai_col[q]);
      }
      for (size_t k = P.ab.size() - ab0; k > 1; k--) {
        const size_t q = ab0 + RandInt(0, (int)k - 1);
        std::swap(P.ab[ab0 + k - 1], P.ab[q]);
        std::swap(P.ab_col[ab0 + k - 1], P.ab_col[q]);
      }
      P.dg[i] = sum + 0.05 + 0.25 * (Rand() + 1.0);
      if (single) P.dg[i] = (double)(float)P.dg[i];
      P.ai_ptr.push_back((int)P.ai.size());
      P.ab_ptr.push_back((int)P.ab.size());
      P.maxlen = std::max(P.maxlen, (int)rows[i].size() + 1);
    }
  }
  /* the row map: a random permutation; AB columns become level rows */
  if (map) {
    P.row.resize(n);
    for (int i = 0; i < n; i++) P.row[i] = i;
    for (int k = n - 1; k > 0; k--) std::swap(P.row[k], P.row[RandInt(0, k)]);
    P.ab_lvl.resize(P.ab_col.size());
    for (size_t k = 0; k < P.ab_col.size(); k++) P.ab_lvl[k] = P.row[P.ab_col[k]];
  }
  /* the device copy, and the host descriptor of the same values in the reference's type */
  P.d_patch_ptr = Upload(P.patch_ptr);
  P.d_ai_ptr    = Upload(P.ai_ptr);
  P.d_ai_col    = Upload(P.ai_col);
  P.d_ab_ptr    = Upload(P.ab_ptr);
  P.d_ab_col    = Upload(map ? P.ab_lvl : P.ab_col);
  P.d_row       = map ? Upload(P.row) : NULL;
  std::vector<float> fai(P.ai.begin(), P.ai.end()), fab(P.ab.begin(), P.ab.end()), fdg(P.dg.begin(), P.dg.end());
  if (single) {
    P.d_ai = Upload(fai);
    P.d_ab = Upload(fab);
    P.d_dg = Upload(fdg);
  } else {
    P.d_ai = Upload(P.ai);
    P.d_ab = Upload(P.ab);
    P.d_dg = Upload(P.dg);
  }
  PatchworkSPMDesc d;
  memset(&d, 0, sizeof(d));
  d.n         = n;
  d.npatch    = P.npatch;
  d.max_patch = P.maxp;
  d.single    = 0; /* the host descriptor holds the (rounded) values as double: the same numbers */
  d.patch_ptr = P.patch_ptr.data();
  d.ai_ptr    = P.ai_ptr.data();
  d.ai_col    = P.ai_col.data();
  d.ab_ptr    = P.ab_ptr.data();
  d.ab_col    = P.ab_col.data();
  d.ai_val    = P.ai.data();
  d.ab_val    = P.ab.data();
  d.diag      = P.dg.data();
  P.host      = d;
  if (map) {
    d.row    = P.row.data();
    d.ab_col = P.ab_lvl.data();
  }
  P.hmap      = d;
  d.row       = P.d_row;
  d.single    = single;
  d.patch_ptr = P.d_patch_ptr;
  d.ai_ptr    = P.d_ai_ptr;
  d.ai_col    = P.d_ai_col;
  d.ab_ptr    = P.d_ab_ptr;
  d.ab_col    = P.d_ab_col;
  d.ai_val    = P.d_ai;
  d.ab_val    = P.d_ab;
  d.diag      = P.d_dg;
  P.dev       = d;
  return P;
}

static void Free(Problem &P)
{
  CHECK_CUDA(cudaFree(P.d_patch_ptr));
  CHECK_CUDA(cudaFree(P.d_ai_ptr));
  CHECK_CUDA(cudaFree(P.d_ai_col));
  CHECK_CUDA(cudaFree(P.d_ab_ptr));
  CHECK_CUDA(cudaFree(P.d_ab_col));
  CHECK_CUDA(cudaFree(P.d_ai));
  CHECK_CUDA(cudaFree(P.d_ab));
  CHECK_CUDA(cudaFree(P.d_dg));
  CHECK_CUDA(cudaFree(P.d_row));
}

/* The majorant of the relaxation: the reference's recursion on |A|, |b|, |x| with every minus a plus */
static void Majorant(const Problem &P, double iw, double w, int inner, int zero_guess, const std::vector<double> &b, const std::vector<double> &x, std::vector<double> &xm,
                     std::vector<double> &rm)
{
  std::vector<double> t(P.maxp), g(P.maxp), gn(P.maxp), v(P.maxp);
  auto                apply = [&](int s, int il, const double *u) {
    double a = fabs(P.dg[s + il]) * u[il];
    for (int j = P.ai_ptr[s + il]; j < P.ai_ptr[s + il + 1]; j++) a += fabs(P.ai[j]) * u[P.ai_col[j]];
    return a;
  };

  for (int p = 0; p < P.npatch; p++) {
    const int s = P.patch_ptr[p], m = P.patch_ptr[p + 1] - s;
    for (int il = 0; il < m; il++) v[il] = zero_guess ? 0.0 : fabs(x[s + il]);
    for (int il = 0; il < m; il++) t[il] = fabs(b[s + il]) + (zero_guess ? 0.0 : apply(s, il, v.data()));
    std::fill(g.begin(), g.end(), 0.0);
    for (int k = 0; k < inner; k++) {
      for (int il = 0; il < m; il++) gn[il] = g[il] + fabs(iw) * (t[il] + apply(s, il, g.data())) / fabs(P.dg[s + il]);
      std::swap(g, gn);
    }
    for (int il = 0; il < m; il++) xm[s + il] = v[il] + fabs(w) * g[il];
    for (int il = 0; il < m; il++) rm[s + il] = fabs(b[s + il]) + apply(s, il, xm.data() + s);
  }
}

/* max_i |a_i - b_i| / (eps M_i); a difference where M_i = 0 is infinite, a NaN gives NaN */
static double ErrRatio(const std::vector<double> &a, const std::vector<double> &b, const std::vector<double> &M)
{
  double e = 0;
  for (size_t i = 0; i < a.size(); i++) {
    const double d = fabs(a[i] - b[i]);
    if (d == 0) continue;
    e = ErrMax(e, M[i] == 0 ? INFINITY : d / (DBL_EPSILON * M[i]));
  }
  return e;
}

static void Check(double err, double tol, const char *name)
{
  const double ratio = err == 0 ? 0 : err / tol; /* an exact check (tol 0) passed is 0, not 0/0 */

  if (ErrMaxTakes(g_worst, ratio)) {
    g_worst = ratio;
    snprintf(g_worst_name, sizeof(g_worst_name), "%s", name);
  }
  Report(err <= tol, name, err, tol);
}

static std::vector<double> RandVec(int n)
{
  std::vector<double> v(n);
  for (auto &e : v) e = Rand();
  return v;
}

static void TestMultBoundary(const Problem &P, const char *label)
{
  const int           n = P.n;
  std::vector<double> x = RandVec(n), z = RandVec(n), ref(n), gpu(n), M(n), refm(n);
  double             *dx = Upload(ToLevel(P, x)), *dz = Upload(ToLevel(P, z)), *dy;
  char                name[256];
  const bool          map = !P.row.empty();
  bool                same = true; /* the reference with the map gives the identity's bits */

  CHECK_CUDA(cudaMalloc((void **)&dy, n * sizeof(double)));
  for (int i = 0; i < n; i++) {
    M[i] = fabs(P.dg[i] * x[i]);
    for (int j = P.ab_ptr[i]; j < P.ab_ptr[i + 1]; j++) M[i] += fabs(P.ab[j] * x[P.ab_col[j]]);
  }
  for (int p = 0; p < P.npatch; p++)
    for (int i = P.patch_ptr[p]; i < P.patch_ptr[p + 1]; i++)
      for (int j = P.ai_ptr[i]; j < P.ai_ptr[i + 1]; j++) M[i] += fabs(P.ai[j] * x[P.patch_ptr[p] + P.ai_col[j]]);
  PatchworkSPMMultRef(&P.host, x.data(), ref.data());
  if (map) {
    std::vector<double> xl = ToLevel(P, x);
    PatchworkSPMMultRef(&P.hmap, xl.data(), refm.data());
    same = !memcmp(ToPosition(P, refm).data(), ref.data(), n * sizeof(double));
  }
  CheckRet(PatchworkSPMMultCUDA(&P.dev, dx, dy, g_stream), "PatchworkSPMMultCUDA");
  Download(gpu, dy);
  gpu = ToPosition(P, gpu);
  snprintf(name, sizeof(name), "%s mult%s", label, same ? "" : " CPU ROW MAP DIFFERS");
  Check(same ? ErrRatio(gpu, ref, M) : INFINITY, 2.0 * (P.maxlen + 5), name);

  for (int i = 0; i < n; i++) {
    M[i] = fabs(z[i]);
    for (int j = P.ab_ptr[i]; j < P.ab_ptr[i + 1]; j++) M[i] += fabs(P.ab[j] * x[P.ab_col[j]]);
  }
  PatchworkSPMBoundaryResidualRef(&P.host, x.data(), z.data(), ref.data());
  if (map) {
    std::vector<double> xl = ToLevel(P, x), zl = ToLevel(P, z);
    PatchworkSPMBoundaryResidualRef(&P.hmap, xl.data(), zl.data(), refm.data());
    same = !memcmp(ToPosition(P, refm).data(), ref.data(), n * sizeof(double));
  }
  CheckRet(PatchworkSPMBoundaryResidualCUDA(&P.dev, dx, dz, dy, g_stream), "PatchworkSPMBoundaryResidualCUDA");
  Download(gpu, dy);
  double err = ErrRatio(ToPosition(P, gpu), ref, M);
  CheckRet(PatchworkSPMBoundaryResidualCUDA(&P.dev, dx, dz, dz, g_stream), "PatchworkSPMBoundaryResidualCUDA (y = z)");
  Download(gpu, dz);
  err = ErrMax(err, ErrRatio(ToPosition(P, gpu), ref, M));
  snprintf(name, sizeof(name), "%s boundary residual, y separate and y = z%s", label, same ? "" : " CPU ROW MAP DIFFERS");
  Check(same ? err : INFINITY, 2.0 * (P.maxlen + 5), name);
  CHECK_CUDA(cudaFree(dx));
  CHECK_CUDA(cudaFree(dz));
  CHECK_CUDA(cudaFree(dy));
}

static void TestRelax(Problem &P, int zero_guess, int inner, const char *label)
{
  const int           n  = P.n;
  const double        iw = 0.6 + 0.3 * Rand(), w = 0.9 + 0.3 * Rand();
  std::vector<double> b = RandVec(n), x0 = RandVec(n), xref(n), rref(n), xm(n), rm(n), xg(n), rg(n), bg(n);
  const bool          map = !P.row.empty();
  double             *db = Upload(ToLevel(P, b)), *dx, *dr;
  char                name[256];
  double              err;
  bool                bsame, same = true;

  for (PatchworkSPMDesc *d : {&P.host, &P.hmap, &P.dev}) {
    d->inner       = inner;
    d->inner_omega = iw;
    d->omega       = w;
  }
  if (zero_guess)
    for (auto &e : x0) e = NAN;
  CHECK_CUDA(cudaMalloc((void **)&dx, n * sizeof(double)));
  CHECK_CUDA(cudaMalloc((void **)&dr, n * sizeof(double)));
  xref = x0;
  PatchworkSPMPatchRelaxRef(&P.host, b.data(), xref.data(), rref.data(), zero_guess);
  Majorant(P, iw, w, inner, zero_guess, b, x0, xm, rm);
  if (map) {
    std::vector<double> bl = ToLevel(P, b), xl = ToLevel(P, x0), rl(n);
    PatchworkSPMPatchRelaxRef(&P.hmap, bl.data(), xl.data(), rl.data(), zero_guess);
    same = !memcmp(ToPosition(P, xl).data(), xref.data(), n * sizeof(double)) && !memcmp(ToPosition(P, rl).data(), rref.data(), n * sizeof(double));
  }
  const std::vector<double> x0l = ToLevel(P, x0), bl = ToLevel(P, b);

  /* r separate */
  CHECK_CUDA(cudaMemcpy(dx, x0l.data(), n * sizeof(double), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(dr, 0xff, n * sizeof(double))); /* NaN: every entry must be written */
  CheckRet(PatchworkSPMPatchRelaxCUDA(&P.dev, db, dx, dr, zero_guess, g_stream), "PatchworkSPMPatchRelaxCUDA");
  Download(xg, dx);
  Download(rg, dr);
  err = ErrMax(ErrRatio(ToPosition(P, xg), xref, xm), ErrRatio(ToPosition(P, rg), rref, rm));
  /* r = NULL */
  CHECK_CUDA(cudaMemcpy(dx, x0l.data(), n * sizeof(double), cudaMemcpyHostToDevice));
  CheckRet(PatchworkSPMPatchRelaxCUDA(&P.dev, db, dx, NULL, zero_guess, g_stream), "PatchworkSPMPatchRelaxCUDA (r = NULL)");
  Download(xg, dx);
  Download(bg, db);
  err   = ErrMax(err, ErrRatio(ToPosition(P, xg), xref, xm));
  bsame = !memcmp(bg.data(), bl.data(), n * sizeof(double));
  /* r = b */
  CHECK_CUDA(cudaMemcpy(dx, x0l.data(), n * sizeof(double), cudaMemcpyHostToDevice));
  CheckRet(PatchworkSPMPatchRelaxCUDA(&P.dev, db, dx, db, zero_guess, g_stream), "PatchworkSPMPatchRelaxCUDA (r = b)");
  Download(xg, dx);
  Download(rg, db);
  err = ErrMax(err, ErrMax(ErrRatio(ToPosition(P, xg), xref, xm), ErrRatio(ToPosition(P, rg), rref, rm)));
  snprintf(name, sizeof(name), "%s relax %s inner %d iw %.2f w %.2f (r separate, NULL, = b)%s%s", label, zero_guess ? "zero guess" : "from x    ", inner, iw, w, bsame ? "" : " b CHANGED",
           same ? "" : " CPU ROW MAP DIFFERS");
  Check(bsame && same ? err : INFINITY, (double)(inner + 3) * (P.maxlen + 5), name);
  CHECK_CUDA(cudaFree(db));
  CHECK_CUDA(cudaFree(dx));
  CHECK_CUDA(cudaFree(dr));
}

static void TestErrors(void)
{
  const ProblemSpec S = {"err", LOCAL, {0, 0, 0}, 100, 10, 3, 5};
  Problem           P = Build(S, 0, false);
  PatchworkSPMDesc  d;
  double           *dv;

  CHECK_CUDA(cudaMalloc((void **)&dv, 3 * P.n * sizeof(double)));
  CHECK_CUDA(cudaMemset(dv, 0, 3 * P.n * sizeof(double)));
  double *b = dv, *x = dv + P.n, *r = dv + 2 * P.n;
  P.dev.inner = 2, P.dev.inner_omega = 0.8, P.dev.omega = 1.0;
  ReportRet(PatchworkSPMPatchRelaxCUDA(NULL, b, x, r, 0, g_stream), cudaErrorInvalidValue, "relax: NULL descriptor");
  d           = P.dev;
  d.max_patch = 1025;
  ReportRet(PatchworkSPMPatchRelaxCUDA(&d, b, x, r, 0, g_stream), cudaErrorInvalidValue, "relax: max_patch 1025");
  d.max_patch = 0;
  ReportRet(PatchworkSPMPatchRelaxCUDA(&d, b, x, r, 0, g_stream), cudaErrorInvalidValue, "relax: max_patch 0");
  d       = P.dev;
  d.inner = 0;
  ReportRet(PatchworkSPMPatchRelaxCUDA(&d, b, x, r, 1, g_stream), cudaErrorInvalidValue, "relax: inner 0");
  ReportRet(PatchworkSPMPatchRelaxCUDA(&P.dev, b, x, x, 0, g_stream), cudaErrorInvalidValue, "relax: r aliasing x");
  ReportRet(PatchworkSPMPatchRelaxCUDA(&P.dev, b, NULL, r, 0, g_stream), cudaErrorInvalidValue, "relax: NULL x");
  ReportRet(PatchworkSPMBoundaryResidualCUDA(&P.dev, x, b, x, g_stream), cudaErrorInvalidValue, "boundary residual: y aliasing x");
  ReportRet(PatchworkSPMMultCUDA(&P.dev, x, x, g_stream), cudaErrorInvalidValue, "mult: y aliasing x");
  d        = P.dev;
  d.npatch = 0;
  d.n      = 0;
  ReportRet(PatchworkSPMPatchRelaxCUDA(&d, b, x, r, 0, g_stream), cudaSuccess, "relax: no patches is a no-op");
  ReportRet(PatchworkSPMBoundaryResidualCUDA(&d, x, b, r, g_stream), cudaSuccess, "boundary residual: no rows is a no-op");
  ReportRet(PatchworkSPMMultCUDA(&d, x, r, g_stream), cudaSuccess, "mult: no patches is a no-op");
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  CHECK_CUDA(cudaFree(dv));
  Free(P);
}

/* ---------------------------------------------------------------------------------------------- */
/* PatchworkSPMBuildCUDA against PatchworkSPMBuildRef */

struct Csr {
  int                 n = 0, npatch = 0;
  std::vector<int>    ptr, col, patch_ptr, row, pos; /* row, pos empty: identity positions */
  std::vector<double> val;
};

/* Level rows; entries mostly near the row's position (so that many fall into its patch), some
   anywhere, some repeated, the diagonal absent, once or twice, the row's entries shuffled */
static Csr MakeCsr(int n, int maxp, int mean, bool map)
{
  Csr A;

  A.n = n;
  if (map) {
    A.row.resize(n);
    A.pos.resize(n);
    for (int i = 0; i < n; i++) A.row[i] = i;
    for (int k = n - 1; k > 0; k--) std::swap(A.row[k], A.row[RandInt(0, k)]);
    for (int i = 0; i < n; i++) A.pos[A.row[i]] = i;
  }
  A.patch_ptr.push_back(0);
  for (int start = 0; start < n;) {
    int m = Rand() < -0.9 ? 0 : RandInt(1, maxp); /* 5% empty */
    if (A.patch_ptr.size() == 3 && n >= 4000) m = 1500; /* beyond the relaxation's limit: the build does not care */
    m = std::min(m, n - start);
    start += m;
    A.patch_ptr.push_back(start);
  }
  A.npatch = (int)A.patch_ptr.size() - 1;
  A.ptr.resize(n + 1);
  A.col.reserve((size_t)n * (mean + 2));
  A.val.reserve((size_t)n * (mean + 2));
  for (int r = 0; r < n; r++) {
    const int i = map ? A.pos[r] : r, cnt = RandInt(0, 2 * mean), ndiag = RandInt(0, 4) / 2; /* 0, 1 or 2 diagonal entries */
    A.ptr[r] = (int)A.col.size();
    for (int k = 0; k < cnt + ndiag; k++) {
      int q = k >= cnt ? i : Rand() > 0.6 ? RandInt(0, n - 1) : i + RandInt(-2 * maxp, 2 * maxp); /* a position */
      if (q < 0 || q >= n) q = RandInt(0, n - 1);
      if (k > 0 && k < cnt && Rand() > 0.9) {
        A.col.push_back(A.col.back()); /* a repeated entry */
      } else A.col.push_back(map ? A.row[q] : q);
      A.val.push_back(Rand());
    }
    for (int k = (int)A.col.size() - 1; k > A.ptr[r]; k--) {
      const int q = RandInt(A.ptr[r], k);
      std::swap(A.col[k], A.col[q]);
      std::swap(A.val[k], A.val[q]);
    }
  }
  A.ptr[n] = (int)A.col.size();
  return A;
}

/* the device copies of a Csr's arrays */
struct DevCsr {
  int    *ptr = NULL, *col = NULL, *patch_ptr = NULL, *row = NULL, *pos = NULL;
  double *val = NULL;
  PatchworkCSR A;
};

static DevCsr UploadCsr(const Csr &C)
{
  DevCsr D;
  D.ptr       = Upload(C.ptr);
  D.col       = Upload(C.col);
  D.val       = Upload(C.val);
  D.patch_ptr = Upload(C.patch_ptr);
  if (!C.row.empty()) {
    D.row = Upload(C.row);
    D.pos = Upload(C.pos);
  }
  D.A = {C.n, D.ptr, D.col, D.val};
  return D;
}

static void FreeCsr(DevCsr &D)
{
  for (void *p : {(void *)D.ptr, (void *)D.col, (void *)D.val, (void *)D.patch_ptr, (void *)D.row, (void *)D.pos}) CHECK_CUDA(cudaFree(p));
}

/* a device array equals a host one, byte for byte (both NULL counts as equal) */
static bool SameArray(const void *dev, const void *host, size_t bytes)
{
  if (!dev || !host) return !dev && !host;
  std::vector<char> h(bytes);
  if (bytes) CHECK_CUDA(cudaMemcpy(h.data(), dev, bytes, cudaMemcpyDeviceToHost));
  return !bytes || !memcmp(h.data(), host, bytes);
}

static double Seconds(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static void TestBuild(int n, int maxp, int mean, bool map)
{
  const Csr C = MakeCsr(n, maxp, mean, map);
  DevCsr    D = UploadCsr(C);

  for (int single = 0; single <= 1; single++) {
    const PatchworkCSR A  = {C.n, C.ptr.data(), C.col.data(), C.val.data()};
    const size_t       vs = single ? sizeof(float) : sizeof(double);
    PatchworkSPMDesc   h, d;
    int                hai = -1, hab = -1, dai = -2, dab = -2;
    char               name[256];
    double             t0 = Seconds(), tc, tg;

    CheckRet(PatchworkSPMBuildRef(&A, C.npatch, C.patch_ptr.data(), map ? C.row.data() : NULL, map ? C.pos.data() : NULL, single, &h, &hai, &hab), "PatchworkSPMBuildRef");
    tc = Seconds() - t0;
    CHECK_CUDA(cudaStreamSynchronize(g_stream));
    t0 = Seconds();
    CheckRet(PatchworkSPMBuildCUDA(&D.A, C.npatch, D.patch_ptr, D.row, D.pos, single, &d, &dai, &dab, g_stream), "PatchworkSPMBuildCUDA");
    CHECK_CUDA(cudaStreamSynchronize(g_stream));
    tg = Seconds() - t0;
    bool same = hai == dai && hab == dab && h.n == d.n && h.npatch == d.npatch && h.max_patch == d.max_patch && h.single == d.single && h.inner == d.inner && h.inner_omega == d.inner_omega &&
                h.omega == d.omega;
    same = same && SameArray(d.patch_ptr, h.patch_ptr, sizeof(int) * (C.npatch + 1)) && SameArray(d.row, h.row, sizeof(int) * n);
    same = same && SameArray(d.ai_ptr, h.ai_ptr, sizeof(int) * (n + 1)) && SameArray(d.ab_ptr, h.ab_ptr, sizeof(int) * (n + 1));
    same = same && SameArray(d.ai_col, h.ai_col, sizeof(int) * hai) && SameArray(d.ab_col, h.ab_col, sizeof(int) * hab);
    same = same && SameArray(d.ai_val, h.ai_val, vs * hai) && SameArray(d.ab_val, h.ab_val, vs * hab) && SameArray(d.diag, h.diag, vs * n);
    snprintf(name, sizeof(name), "build %s %s positions n=%-7d %d patches (max %d), %d AI %d AB entries: GPU equals CPU exactly (GPU %.2f ms, CPU %.0f ms)", single ? "single" : "double",
             map ? "random  " : "identity", n, C.npatch, h.max_patch, hai, hab, 1e3 * tg, 1e3 * tc);
    Check(same ? 0.0 : 1.0, 0.0, name);
    PatchworkSPMFreeRef(&h);
    PatchworkSPMFreeCUDA(&d);
  }
  FreeCsr(D);
}

/* Bad arguments: 1, and the descriptor left empty */
static void TestBuildErrors(void)
{
  Csr              C = MakeCsr(300, 10, 6, true);
  DevCsr           D = UploadCsr(C);
  PatchworkSPMDesc d = {};
  int              nai, nab;
  auto             empty = [&](int ret) { return ret == 1 && !d.ai_ptr && !d.patch_ptr && !d.diag ? 1 : ret == 1 ? -1 : ret; }; /* -1: 1 but not empty */
  auto             build = [&](const int *patch_ptr, int npatch, const int *row, const int *pos) {
    memset(&d, 0xff, sizeof(d));
    return empty(PatchworkSPMBuildCUDA(&D.A, npatch, patch_ptr, row, pos, 1, &d, &nai, &nab, g_stream));
  };
  auto             set = [&](int *dev, int v) { CHECK_CUDA(cudaMemcpy(dev, &v, sizeof(int), cudaMemcpyHostToDevice)); };
  const int        mid = C.ptr[C.n] / 2;

  memset(&d, 0xff, sizeof(d));
  ReportRet(empty(PatchworkSPMBuildCUDA(NULL, C.npatch, D.patch_ptr, D.row, D.pos, 0, &d, &nai, &nab, g_stream)), 1, "build: NULL matrix");
  ReportRet(build(D.patch_ptr, C.npatch, D.row, NULL), 1, "build: row without pos");
  ReportRet(build(D.patch_ptr, 0, D.row, D.pos), 1, "build: no patches for 300 rows");
  set(D.col + mid, C.n);
  ReportRet(build(D.patch_ptr, C.npatch, D.row, D.pos), 1, "build: column n");
  set(D.col + mid, -1);
  ReportRet(build(D.patch_ptr, C.npatch, NULL, NULL), 1, "build: column -1 (identity positions)");
  set(D.col + mid, C.col[mid]);
  set(D.patch_ptr + C.npatch, C.n - 1);
  ReportRet(build(D.patch_ptr, C.npatch, D.row, D.pos), 1, "build: patches cover n - 1 positions");
  set(D.patch_ptr + C.npatch, C.n);
  ReportRet(build(D.patch_ptr, C.npatch - 1, D.row, D.pos), 1, "build: patches miss the last one");
  set(D.patch_ptr + 1, C.patch_ptr[2] + 1);
  ReportRet(build(D.patch_ptr, C.npatch, D.row, D.pos), 1, "build: patch_ptr decreasing");
  set(D.patch_ptr + 1, C.patch_ptr[1]);
  set(D.pos + C.row[3], 4);
  ReportRet(build(D.patch_ptr, C.npatch, D.row, D.pos), 1, "build: pos is not the inverse of row");
  set(D.pos + C.row[3], 3);
  set(D.row + 5, C.n);
  ReportRet(build(D.patch_ptr, C.npatch, D.row, D.pos), 1, "build: row out of range");
  set(D.row + 5, C.row[5]);
  ReportRet(build(D.patch_ptr, C.npatch, D.row, D.pos), 0, "build: the repaired arguments build");
  PatchworkSPMFreeCUDA(&d);
  {
    const PatchworkCSR E = {0, NULL, NULL, NULL};
    int               *pp;
    CHECK_CUDA(cudaMalloc((void **)&pp, 2 * sizeof(int)));
    CHECK_CUDA(cudaMemset(pp, 0, 2 * sizeof(int)));
    const int ret = PatchworkSPMBuildCUDA(&E, 1, pp, NULL, NULL, 0, &d, &nai, &nab, g_stream);
    ReportRet(ret == 0 && d.n == 0 && d.max_patch == 0 && nai == 0 && nab == 0 ? 0 : ret ? ret : -1, 0, "build: empty matrix, one empty patch");
    PatchworkSPMFreeCUDA(&d);
    CHECK_CUDA(cudaFree(pp));
  }
  FreeCsr(D);
}

int main(int argc, char **argv)
{
  bool      quick;
  const int start = GpuTestStart(argc, argv, &quick);

  if (start >= 0) return start;
  TestErrors();
  /* name, kind, grid, n, max patch, degree and width of the random graphs */
  const ProblemSpec full[] = {
    {"grid7 ", GRID7, {24, 20, 16}, 24 * 20 * 16, 100, 0, 0},
    {"grid27", GRID27, {16, 16, 12}, 16 * 16 * 12, 384, 0, 0},
    {"local ", LOCAL, {0, 0, 0}, 20000, 33, 6, 30},
    {"local ", LOCAL, {0, 0, 0}, 40000, 1024, 6, 300},
    {"dense ", DENSE, {0, 0, 0}, 6000, 1024, 40, 400},
    {"point ", POINT, {0, 0, 0}, 5000, 1, 0, 0},
    {"tiny  ", LOCAL, {0, 0, 0}, 40, 7, 3, 4},
  };
  const ProblemSpec small[] = {
    {"grid7 ", GRID7, {8, 7, 6}, 8 * 7 * 6, 100, 0, 0},
    {"grid27", GRID27, {8, 8, 7}, 8 * 8 * 7, 384, 0, 0},
    {"local ", LOCAL, {0, 0, 0}, 2500, 1024, 6, 300},
    {"dense ", DENSE, {0, 0, 0}, 1200, 1024, 40, 400},
    {"point ", POINT, {0, 0, 0}, 300, 1, 0, 0},
    {"tiny  ", LOCAL, {0, 0, 0}, 40, 7, 3, 4},
  };
  const ProblemSpec *specs  = quick ? small : full;
  const int          nspec  = quick ? (int)(sizeof(small) / sizeof(small[0])) : (int)(sizeof(full) / sizeof(full[0]));
  const int          inners[] = {1, 2, 3, 5};

  for (int single = 0; single <= 1; single++)
    for (int c = 0; c < nspec; c++)
      for (int map = 0; map <= 1; map++) {
        Problem P = Build(specs[c], single, map);
        char    label[128];

        snprintf(label, sizeof(label), "%s %s %s n=%-6d max_patch=%-4d", specs[c].name, single ? "single" : "double", map ? "row map " : "identity", P.n, P.maxp);
        printf("# %s: %d patches, %d AI and %d AB entries, at most %d entries a row\n", label, P.npatch, P.ai_ptr[P.n], P.ab_ptr[P.n], P.maxlen);
        TestMultBoundary(P, label);
        for (int zg = 0; zg <= 1; zg++)
          for (int q = 0; q < 4; q++) {
            if (quick && q == 2) continue;
            TestRelax(P, zg, inners[q], label);
          }
        Free(P);
      }
  TestBuildErrors();
  {
    /* rows, largest random patch, mean entries a row (before repeats and the diagonal) */
    const int full_sizes[][3] = {{1, 1, 2}, {7, 3, 4}, {1000, 40, 6}, {100000, 384, 8}, {3000000, 384, 6}, {2000000, 64, 24}};
    const int quick_sizes[][3] = {{1, 1, 2}, {7, 3, 4}, {1000, 40, 6}, {20000, 384, 8}};
    const int nsize = quick ? 4 : 6;

    for (int c = 0; c < nsize; c++)
      for (int map = 0; map <= 1; map++) {
        const int *z = quick ? quick_sizes[c] : full_sizes[c];
        TestBuild(z[0], z[1], z[2], map);
      }
  }
  CHECK_CUDA(cudaStreamDestroy(g_stream));
  CHECK_CUDA(cudaDeviceSynchronize());
  /* one line, last: the scripts take it as the summary */
  printf("# %d passed, %d failed; worst err/tol %.3f (%s)\n", g_pass, g_fail, g_worst, g_worst_name);
  return g_fail ? 1 : 0;
}
