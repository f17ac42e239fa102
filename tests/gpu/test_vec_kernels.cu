/* The vector kernels of the single-precision cycles (cuda/vecops.cu) against their CPU reference
   (src/core/vecops_ref.c) on random data of several lengths, NaN and Inf included. Conversions and
   a*y + x are one rounding each in both, so the results must be bitwise equal (nvcc contracts
   a*y + x into one FMA: the reference is compared with a tolerance of one float rounding). Exit 77
   without a device. */
#include <cmath>
#include <cfloat>
#include <vector>
#include <patchwork/vec_kernel.h>
#include "gputest.h"

static void TestLength(ptrdiff_t n)
{
  std::vector<double> xd(n), yd(n);
  std::vector<float>  xf(n), yf(n), rf(n), gf(n);
  double *dxd, *dyd;
  float  *dxf, *dyf;
  char    name[64];

  for (ptrdiff_t i = 0; i < n; i++) {
    xd[i] = 1e3 * Rand();
    yf[i] = (float)Rand();
  }
  if (n > 2) {
    xd[0] = NAN;
    xd[1] = INFINITY;
    xd[2] = 1e300; /* overflows to Inf in float, on both sides */
  }
  CHECK_CUDA(PatchworkDeviceMalloc(n * sizeof(double), (void **)&dxd));
  CHECK_CUDA(PatchworkDeviceMalloc(n * sizeof(double), (void **)&dyd));
  CHECK_CUDA(PatchworkDeviceMalloc(n * sizeof(float), (void **)&dxf));
  CHECK_CUDA(PatchworkDeviceMalloc(n * sizeof(float), (void **)&dyf));
  CHECK_CUDA(cudaMemcpy(dxd, xd.data(), n * sizeof(double), cudaMemcpyHostToDevice));

  /* double -> float -> double: bitwise equal to the reference, NaN as NaN */
  PatchworkVecToFloatRef(n, xd.data(), xf.data());
  CHECK_CUDA(PatchworkVecToFloatCUDA(n, dxd, dxf, g_stream));
  CHECK_CUDA(cudaMemcpyAsync(gf.data(), dxf, n * sizeof(float), cudaMemcpyDeviceToHost, g_stream));
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  ptrdiff_t bad = 0;
  for (ptrdiff_t i = 0; i < n; i++) bad += !(gf[i] == xf[i] || (std::isnan(gf[i]) && std::isnan(xf[i])));
  snprintf(name, sizeof(name), "to-float n=%td", n);
  Report(bad == 0, name, (double)bad, 0);

  PatchworkVecToDoubleRef(n, xf.data(), yd.data());
  CHECK_CUDA(PatchworkVecToDoubleCUDA(n, dxf, dyd, g_stream));
  std::vector<double> gd(n);
  CHECK_CUDA(cudaMemcpyAsync(gd.data(), dyd, n * sizeof(double), cudaMemcpyDeviceToHost, g_stream));
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  bad = 0;
  for (ptrdiff_t i = 0; i < n; i++) bad += !(gd[i] == yd[i] || (std::isnan(gd[i]) && std::isnan(yd[i])));
  snprintf(name, sizeof(name), "to-double n=%td", n);
  Report(bad == 0, name, (double)bad, 0);

  /* 64-bit indices that fit in int, narrowed: equal to the reference (large, negative and 0 included) */
  {
    std::vector<long long> li(n);
    std::vector<int>       ri(n), gi(n);
    long long             *dli;
    int                   *dgi;

    for (ptrdiff_t i = 0; i < n; i++) li[i] = (long long)(Rand() * 2147483647.0);
    if (n > 2) {
      li[0] = 2147483647;
      li[1] = -2147483647 - 1;
      li[2] = 0;
    }
    CHECK_CUDA(PatchworkDeviceMalloc(n * sizeof(long long), (void **)&dli));
    CHECK_CUDA(PatchworkDeviceMalloc(n * sizeof(int), (void **)&dgi));
    CHECK_CUDA(cudaMemcpy(dli, li.data(), n * sizeof(long long), cudaMemcpyHostToDevice));
    PatchworkVecLongToIntRef(n, li.data(), ri.data());
    CHECK_CUDA(PatchworkVecLongToIntCUDA(n, dli, dgi, g_stream));
    CHECK_CUDA(cudaMemcpyAsync(gi.data(), dgi, n * sizeof(int), cudaMemcpyDeviceToHost, g_stream));
    CHECK_CUDA(cudaStreamSynchronize(g_stream));
    bad = 0;
    for (ptrdiff_t i = 0; i < n; i++) bad += gi[i] != ri[i] || (long long)ri[i] != li[i];
    snprintf(name, sizeof(name), "long-to-int n=%td", n);
    Report(bad == 0, name, (double)bad, 0);
    CHECK_CUDA(PatchworkDeviceFree(dli));
    CHECK_CUDA(PatchworkDeviceFree(dgi));
  }

  /* y = a y + x on finite data: within one float rounding of |a y| + |x| (FMA or not) */
  for (ptrdiff_t i = 0; i < n; i++) xf[i] = (float)Rand();
  for (float a : {-1.0f, 1.0f, 0.5f}) {
    CHECK_CUDA(cudaMemcpyAsync(dxf, xf.data(), n * sizeof(float), cudaMemcpyHostToDevice, g_stream));
    CHECK_CUDA(cudaMemcpyAsync(dyf, yf.data(), n * sizeof(float), cudaMemcpyHostToDevice, g_stream));
    rf = yf;
    PatchworkVecAYPXFloatRef(n, a, xf.data(), rf.data());
    CHECK_CUDA(PatchworkVecAYPXFloatCUDA(n, a, dxf, dyf, g_stream));
    CHECK_CUDA(cudaMemcpyAsync(gf.data(), dyf, n * sizeof(float), cudaMemcpyDeviceToHost, g_stream));
    CHECK_CUDA(cudaStreamSynchronize(g_stream));
    double worst = 0;
    for (ptrdiff_t i = 0; i < n; i++) {
      const double scale = std::fabs((double)a * yf[i]) + std::fabs((double)xf[i]);
      worst = ErrMax(worst, scale > 0 ? std::fabs((double)gf[i] - rf[i]) / scale : gf[i] == rf[i] ? 0.0 : INFINITY);
    }
    snprintf(name, sizeof(name), "aypx a=%g n=%td", (double)a, n);
    Report(worst <= 2 * FLT_EPSILON, name, worst, 2 * FLT_EPSILON);
  }
  /* the hash fill: integer hash to double, so equal bit for bit, and in [-1, 1) */
  for (ptrdiff_t first : {(ptrdiff_t)0, (ptrdiff_t)123457}) {
    std::vector<double> gh(n);
    PatchworkVecHashFillRef(n, first, 7u, yd.data());
    CHECK_CUDA(PatchworkVecHashFillCUDA(n, first, 7u, dyd, g_stream));
    CHECK_CUDA(cudaMemcpyAsync(gh.data(), dyd, n * sizeof(double), cudaMemcpyDeviceToHost, g_stream));
    CHECK_CUDA(cudaStreamSynchronize(g_stream));
    bad = 0;
    for (ptrdiff_t i = 0; i < n; i++) bad += gh[i] != yd[i] || !(yd[i] >= -1.0 && yd[i] < 1.0);
    snprintf(name, sizeof(name), "hash fill first=%td n=%td", first, n);
    Report(bad == 0, name, (double)bad, 0);
  }
  CHECK_CUDA(PatchworkDeviceMemzero(dyf, n * sizeof(float), g_stream));
  CHECK_CUDA(cudaMemcpyAsync(gf.data(), dyf, n * sizeof(float), cudaMemcpyDeviceToHost, g_stream));
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  bad = 0;
  for (ptrdiff_t i = 0; i < n; i++) bad += gf[i] != 0.0f;
  snprintf(name, sizeof(name), "memzero n=%td", n);
  Report(bad == 0, name, (double)bad, 0);
  CHECK_CUDA(PatchworkDeviceFree(dxd));
  CHECK_CUDA(PatchworkDeviceFree(dyd));
  CHECK_CUDA(PatchworkDeviceFree(dxf));
  CHECK_CUDA(PatchworkDeviceFree(dyf));
}

/* The gathers and scatters of the halo exchanges, float and double, against the reference: copies
   are exact, and so are adds into distinct entries (one rounding each) and zeroing (x NULL); where
   several adds meet in one entry the atomics add in any order, so each of the two sums is within c
   roundings of magnitude at most S (c terms, S the sum of their magnitudes) of the exact one:
   |gpu - ref| <= c S eps. */
static void ScatterRef(ptrdiff_t n, const int *ix, const float *x, const int *iy, float *y, int add)
{
  PatchworkVecScatterFloatRef(n, ix, x, iy, y, add);
}
static void ScatterRef(ptrdiff_t n, const int *ix, const double *x, const int *iy, double *y, int add)
{
  PatchworkVecScatterRef(n, ix, x, iy, y, add);
}
static int ScatterCUDA(ptrdiff_t n, const int *ix, const float *x, const int *iy, float *y, int add)
{
  return PatchworkVecScatterFloatCUDA(n, ix, x, iy, y, add, g_stream);
}
static int ScatterCUDA(ptrdiff_t n, const int *ix, const double *x, const int *iy, double *y, int add)
{
  return PatchworkVecScatterCUDA(n, ix, x, iy, y, add, g_stream);
}

template <typename T>
static void TestScatter(ptrdiff_t n)
{
  const ptrdiff_t     m = 2 * n + 1; /* the arrays indexed are larger than n */
  const double        eps = sizeof(T) == sizeof(float) ? FLT_EPSILON : DBL_EPSILON;
  std::vector<T>      x(m), y0(m), rf(m), gf(m);
  std::vector<double> mag(m);
  std::vector<int>    perm(m), gat(n), dup(n), cnt(m);
  T                  *dy;
  char                name[80];

  for (ptrdiff_t i = 0; i < m; i++) {
    x[i]    = (T)Rand();
    y0[i]   = (T)Rand();
    perm[i] = (int)i;
  }
  for (ptrdiff_t i = m - 1; i > 0; i--) std::swap(perm[i], perm[std::min(i, (ptrdiff_t)((Rand() + 1) * 0.5 * (i + 1)))]);
  for (ptrdiff_t i = 0; i < n; i++) {
    gat[i] = std::min((int)(m - 1), (int)((Rand() + 1) * 0.5 * m)); /* entries read twice or never */
    dup[i] = perm[i] % (int)(n / 4 + 1);                             /* about four adds per entry */
  }
  T   *dx    = Upload(x);
  int *dperm = Upload(perm), *dgat = Upload(gat), *ddup = Upload(dup);
  CHECK_CUDA(PatchworkDeviceMalloc(m * sizeof(T), (void **)&dy));
  const struct {
    const char *what;
    const int  *ix, *dix, *iy, *diy;
    int         add;
    bool        zero; /* x NULL: zeros */
  } cases[] = {
    {"copy", NULL, NULL, NULL, NULL, 0, false},
    {"gather", gat.data(), dgat, NULL, NULL, 0, false},
    {"scatter", NULL, NULL, perm.data(), dperm, 0, false},
    {"gather-scatter", gat.data(), dgat, perm.data(), dperm, 0, false},
    {"zero scattered", NULL, NULL, perm.data(), dperm, 0, true},
    {"add distinct", gat.data(), dgat, perm.data(), dperm, 1, false},
    {"add repeated", NULL, NULL, dup.data(), ddup, 1, false},
    {"gather-add repeated", gat.data(), dgat, dup.data(), ddup, 1, false},
  };
  for (const auto &c : cases) {
    const bool repeated = c.add && c.iy == dup.data();

    rf = y0;
    ScatterRef(n, c.ix, c.zero ? NULL : x.data(), c.iy, rf.data(), c.add);
    CHECK_CUDA(cudaMemcpyAsync(dy, y0.data(), m * sizeof(T), cudaMemcpyHostToDevice, g_stream));
    CHECK_CUDA(ScatterCUDA(n, c.dix, c.zero ? NULL : dx, c.diy, dy, c.add));
    CHECK_CUDA(cudaMemcpyAsync(gf.data(), dy, m * sizeof(T), cudaMemcpyDeviceToHost, g_stream));
    CHECK_CUDA(cudaStreamSynchronize(g_stream));
    snprintf(name, sizeof(name), "scatter %s %s n=%td", sizeof(T) == sizeof(float) ? "float" : "double", c.what, n);
    if (!repeated) {
      ptrdiff_t bad = 0;
      for (ptrdiff_t i = 0; i < m; i++) bad += gf[i] != rf[i];
      Report(bad == 0, name, (double)bad, 0);
    } else {
      double worst = 0;
      for (ptrdiff_t j = 0; j < m; j++) {
        mag[j] = std::fabs(y0[j]);
        cnt[j] = 1;
      }
      for (ptrdiff_t i = 0; i < n; i++) {
        mag[c.iy[i]] += std::fabs(x[c.ix ? c.ix[i] : i]);
        cnt[c.iy[i]]++;
      }
      for (ptrdiff_t j = 0; j < m; j++) worst = ErrMax(worst, mag[j] > 0 ? std::fabs((double)gf[j] - rf[j]) / (cnt[j] * mag[j]) : gf[j] == rf[j] ? 0.0 : INFINITY);
      Report(worst <= eps, name, worst, eps);
    }
  }
  CHECK_CUDA(PatchworkDeviceFree(dy));
  CHECK_CUDA(cudaFree(dx));
  CHECK_CUDA(cudaFree(dperm));
  CHECK_CUDA(cudaFree(dgat));
  CHECK_CUDA(cudaFree(ddup));
}

int main(int argc, char **argv)
{
  int ndev = 0;

  (void)argc;
  (void)argv;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    printf("SKIP: no CUDA device\n");
    return 77;
  }
  CHECK_CUDA(cudaStreamCreate(&g_stream));
  for (ptrdiff_t n : {(ptrdiff_t)1, (ptrdiff_t)255, (ptrdiff_t)257, (ptrdiff_t)100003, (ptrdiff_t)5000001}) TestLength(n);
  for (ptrdiff_t n : {(ptrdiff_t)1, (ptrdiff_t)255, (ptrdiff_t)257, (ptrdiff_t)100003, (ptrdiff_t)1000003}) {
    TestScatter<float>(n);
    TestScatter<double>(n);
  }
  CHECK_CUDA(PatchworkVecScatterFloatCUDA(0, NULL, NULL, NULL, NULL, 1, g_stream));
  CHECK_CUDA(PatchworkVecScatterCUDA(0, NULL, NULL, NULL, NULL, 1, g_stream));
  /* zero length launches nothing and succeeds */
  CHECK_CUDA(PatchworkVecAYPXFloatCUDA(0, 1.0f, NULL, NULL, g_stream));
  CHECK_CUDA(cudaStreamDestroy(g_stream));
  printf("# %d passed, %d failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
