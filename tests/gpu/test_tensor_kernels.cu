/* GPU-vs-CPU test of the tensor-product kernels (include/patchwork/tensor_kernel.h), PETSc-free.

   Compares PatchworkTensor{Apply,ApplyFloat,Diagonal,Boundary}CUDA with the CPU reference
   (src/core/tensor_ref.c) on random data: 2D degrees 1..10 and 3D degrees 1..8, on the whole grid
   and on offset sub-boxes (cell range, in box and out box as on an MPI rank, each a different box),
   Dirichlet on and off, atomic and colored scatter, adding into y or overwriting it. Prints one
   line per case, `ok ...` or
   `FAIL ... err=... tol=...`, and exits 0 when all pass, 1 otherwise, 77 without a CUDA device.

   Usage: test_tensor_kernels [--quick]   (--quick: small sub-box grids only, for compute-sanitizer) */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <float.h>
#include <vector>
#include <patchwork/basis1d.h>
#include <patchwork/tensor_kernel.h>

#include "gputest.h"

/* A test geometry: global cells, the applied cell range, and node margins of the in/out boxes
   around the range's nodes (clipped to the grid); margin < 0 means the whole grid. */
struct Geometry {
  const char *name;
  int         cells[3], cs[3], ce[3];
  int         in_lo, in_hi, out_lo, out_hi;
  PatchworkQuadrature quad;
};

static long long BoxCount(const int size[3]) { return (long long)size[0] * size[1] * size[2]; }

static void MakeDesc(int dim, int k, const Geometry &G, int dirichlet, int scatter, PatchworkTensorDesc *d)
{
  memset(d, 0, sizeof(*d));
  d->dim       = dim;
  d->degree    = k;
  d->dirichlet = dirichlet;
  d->scatter   = scatter;
  for (int r = 0; r < 3; r++) {
    if (r >= dim) {
      d->nodes[r] = 1;
      d->cell_start[r] = 0;
      d->cell_end[r] = 1;
      d->in_start[r] = d->out_start[r] = 0;
      d->in_size[r] = d->out_size[r] = 1;
      continue;
    }
    const int nodes = k * G.cells[r] + 1, lo = k * G.cs[r], hi = k * G.ce[r];
    d->nodes[r]      = nodes;
    d->cell_start[r] = G.cs[r];
    d->cell_end[r]   = G.ce[r];
    int ilo = G.in_lo < 0 ? 0 : lo - G.in_lo, ihi = G.in_hi < 0 ? nodes - 1 : hi + G.in_hi;
    int olo = G.out_lo < 0 ? 0 : lo - G.out_lo, ohi = G.out_hi < 0 ? nodes - 1 : hi + G.out_hi;
    if (ilo < 0) ilo = 0;
    if (olo < 0) olo = 0;
    if (ihi > nodes - 1) ihi = nodes - 1;
    if (ohi > nodes - 1) ohi = nodes - 1;
    d->in_start[r]  = ilo;
    d->in_size[r]   = ihi - ilo + 1;
    d->out_start[r] = olo;
    d->out_size[r]  = ohi - olo + 1;
  }
  d->coef_mass     = 1.3;
  d->coef_stiff[0] = 0.7;
  d->coef_stiff[1] = 1.1;
  d->coef_stiff[2] = dim == 3 ? 1.9 : 0.0;
  if (PatchworkTensor1DMatrices(k, G.quad, d->mass1d, d->stiff1d)) {
    printf("FAIL PatchworkTensor1DMatrices(%d) failed\n", k);
    exit(1);
  }
}

/* max |a-b| / max(scale,tiny) */
template <typename T>
static double RelErr(const std::vector<T> &a, const std::vector<T> &b, const std::vector<T> &base)
{
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); i++) {
    num = ErrMax(num, fabs((double)a[i] - (double)b[i]));
    den = ErrMax(den, fabs((double)b[i] - (double)base[i])); /* size of the operator's contribution */
  }
  return den > 0 ? num / den : num;
}

template <typename T>
static void Upload(T **dptr, const std::vector<T> &h)
{
  CHECK_CUDA(cudaMalloc((void **)dptr, h.size() * sizeof(T)));
  CHECK_CUDA(cudaMemcpy(*dptr, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
}

template <typename T>
static void Download(std::vector<T> &h, const T *dptr)
{
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  CHECK_CUDA(cudaMemcpy(h.data(), dptr, h.size() * sizeof(T), cudaMemcpyDeviceToHost));
}

/* With d->overwrite, y starts as NaN (every entry must be set, also those no cell reaches), the
   operator's contribution is measured from zero, and the kernel runs twice (the result must not
   double). */
template <typename T>
static double OverwriteErr(bool overwrite, const std::vector<T> &ygpu, const std::vector<T> &yref, std::vector<T> &y0)
{
  if (!overwrite) return RelErr(ygpu, yref, y0);
  for (const T v : ygpu)
    if (!isfinite((double)v)) return INFINITY;
  for (auto &v : y0) v = T(0);
  return RelErr(ygpu, yref, y0);
}

template <typename T>
static void TestApply(const PatchworkTensorDesc *d, const char *label, double tol)
{
  const long long nin = BoxCount(d->in_size), nout = BoxCount(d->out_size);
  std::vector<T>  x(nin), y0(nout), yref, ygpu(nout);
  T              *dx, *dy;
  char            name[256];

  for (auto &v : x) v = (T)Rand();
  for (auto &v : y0) v = d->overwrite ? (T)NAN : (T)Rand();
  yref = y0;
  if (sizeof(T) == 8) PatchworkTensorApplyRef(d, (const double *)x.data(), (double *)yref.data());
  else PatchworkTensorApplyRefFloat(d, (const float *)x.data(), (float *)yref.data());
  Upload(&dx, x);
  Upload(&dy, y0);
  for (int rep = 0; rep < (d->overwrite ? 2 : 1); rep++) {
    int ret = sizeof(T) == 8 ? PatchworkTensorApplyCUDA(d, (const double *)dx, (double *)dy, g_stream) : PatchworkTensorApplyCUDAFloat(d, (const float *)dx, (float *)dy, g_stream);
    CheckRet(ret, "apply");
  }
  Download(ygpu, dy);
  CHECK_CUDA(cudaFree(dx));
  CHECK_CUDA(cudaFree(dy));
  const double err = OverwriteErr(d->overwrite, ygpu, yref, y0);
  snprintf(name, sizeof(name), "%s apply-%s%s", label, sizeof(T) == 8 ? "double" : "float", d->overwrite ? " overwrite" : "");
  Report(err <= tol, name, err, tol);
}

static void TestDiagonal(const PatchworkTensorDesc *d, const char *label, double tol)
{
  const long long     nout = BoxCount(d->out_size);
  std::vector<double> y0(nout), yref, ygpu(nout);
  double             *dy;
  char                name[256];

  for (auto &v : y0) v = d->overwrite ? NAN : Rand();
  yref = y0;
  PatchworkTensorDiagonalRef(d, yref.data());
  Upload(&dy, y0);
  CheckRet(PatchworkTensorDiagonalCUDA(d, dy, g_stream), "diagonal");
  Download(ygpu, dy);
  CHECK_CUDA(cudaFree(dy));
  const double err = OverwriteErr(d->overwrite, ygpu, yref, y0);
  snprintf(name, sizeof(name), "%s diagonal%s", label, d->overwrite ? " overwrite" : "");
  Report(err <= tol, name, err, tol);
}

static void TestBoundary(const PatchworkTensorDesc *d, const char *label, bool with_x)
{
  const long long     nout = BoxCount(d->out_size);
  std::vector<double> x(nout), y0(nout), yref, ygpu(nout);
  double             *dx = NULL, *dy;
  char                name[256];

  for (auto &v : x) v = Rand();
  for (auto &v : y0) v = Rand();
  yref = y0;
  PatchworkTensorBoundaryRef(d, with_x ? x.data() : NULL, yref.data());
  if (with_x) Upload(&dx, x);
  Upload(&dy, y0);
  CheckRet(PatchworkTensorBoundaryCUDA(d, dx, dy, g_stream), "boundary");
  Download(ygpu, dy);
  if (dx) CHECK_CUDA(cudaFree(dx));
  CHECK_CUDA(cudaFree(dy));
  double err = 0;
  for (long long i = 0; i < nout; i++) err = ErrMax(err, fabs(ygpu[i] - yref[i]));
  snprintf(name, sizeof(name), "%s boundary-%s", label, with_x ? "x" : "one");
  Report(err == 0, name, err, 0.0);
}

/* Bad descriptors are refused, empty ranges are a no-op */
static void TestErrors(void)
{
  PatchworkTensorDesc d;
  Geometry            G = {"err", {2, 2, 2}, {0, 0, 0}, {2, 2, 2}, -1, -1, -1, -1, PW_QUAD_GAUSS};
  double             *dy;
  int                 ret;
  double              one = 1.0, back = 0.0;

  CHECK_CUDA(cudaMalloc((void **)&dy, 4096 * sizeof(double)));
  CHECK_CUDA(cudaMemcpy(dy, &one, sizeof(double), cudaMemcpyHostToDevice));
  MakeDesc(3, 8, G, 0, PW_SCATTER_ATOMIC, &d);
  d.degree = 9; /* 3D supports 1..8 */
  ret = PatchworkTensorApplyCUDA(&d, dy, dy, g_stream);
  ReportRet(ret, cudaErrorInvalidValue, "3D degree 9 refused");
  MakeDesc(2, 10, G, 0, PW_SCATTER_ATOMIC, &d);
  d.degree = 11;
  ret = PatchworkTensorApplyCUDAFloat(&d, (const float *)dy, (float *)dy, g_stream);
  ReportRet(ret, cudaErrorInvalidValue, "2D degree 11 refused");
  MakeDesc(3, 2, G, 0, PW_SCATTER_ATOMIC, &d);
  d.dim = 4;
  ret = PatchworkTensorDiagonalCUDA(&d, dy, g_stream);
  ReportRet(ret, cudaErrorInvalidValue, "dim 4 refused");
  MakeDesc(3, 2, G, 0, PW_SCATTER_ATOMIC, &d);
  d.in_size[0] -= 1; /* in box misses nodes of the cells */
  ret = PatchworkTensorApplyCUDA(&d, dy, dy, g_stream);
  ReportRet(ret, cudaErrorInvalidValue, "in box too small refused");
  MakeDesc(3, 2, G, 0, 7, &d);
  ret = PatchworkTensorApplyCUDA(&d, dy, dy, g_stream);
  ReportRet(ret, cudaErrorInvalidValue, "bad scatter refused");
  for (int sc = 0; sc < 2; sc++) {
    MakeDesc(3, 2, G, 1, sc, &d);
    d.cell_end[1] = d.cell_start[1]; /* empty */
    ret = PatchworkTensorApplyCUDA(&d, dy, dy, g_stream);
    ret |= PatchworkTensorDiagonalCUDA(&d, dy, g_stream);
    CHECK_CUDA(cudaStreamSynchronize(g_stream));
    CHECK_CUDA(cudaMemcpy(&back, dy, sizeof(double), cudaMemcpyDeviceToHost));
    ReportRet(back == 1.0 ? ret : -1, 0, sc ? "empty range no-op colored" : "empty range no-op atomic");
  }
  CHECK_CUDA(cudaFree(dy));
}

int main(int argc, char **argv)
{
  bool      quick;
  const int start = GpuTestStart(argc, argv, &quick);

  if (start >= 0) return start;
  TestErrors();
  for (int dim = 2; dim <= 3; dim++) {
    const int kmax = dim == 3 ? 8 : 10;
    for (int k = 1; k <= kmax; k++) {
      const int          n = k + 1;
      std::vector<Geometry> geos;
      if (dim == 3) {
        /* tall: more z cells than a block of the atomic kernel marches through (16 at k = 1), so
           that blocks meet at z-faces, a partial last chunk, and x-rows shorter than a block */
        geos.push_back({"tall", {2, 3, 19}, {0, 1, 1}, {2, 3, 18}, k, k, 1, 2, PW_QUAD_GAUSS});
        if (quick) geos.push_back({"sub", {4, 4, 3}, {1, 0, 1}, {4, 3, 3}, k, k, 1, 2, PW_QUAD_GAUSS});
        else {
          if (k <= 2) geos.push_back({"full", {9, 7, 5}, {0, 0, 0}, {9, 7, 5}, -1, -1, -1, -1, PW_QUAD_GAUSS});
          else if (k <= 4) geos.push_back({"full", {5, 4, 3}, {0, 0, 0}, {5, 4, 3}, -1, -1, -1, -1, PW_QUAD_GAUSS});
          else geos.push_back({"full", {3, 3, 2}, {0, 0, 0}, {3, 3, 2}, -1, -1, -1, -1, PW_QUAD_GAUSS});
          if (k <= 4) geos.push_back({"sub", {7, 6, 5}, {2, 1, 0}, {7, 5, 3}, k, k, 1, 2, PW_QUAD_GAUSS});
          else geos.push_back({"sub", {5, 4, 4}, {2, 1, 0}, {5, 3, 3}, k, k, 1, 2, PW_QUAD_GAUSS});
          if (k <= 3) geos.push_back({"odd-gl", {11, 3, 7}, {1, 0, 2}, {10, 3, 7}, 0, 0, 0, 0, PW_QUAD_GAUSSLOBATTO});
          else geos.push_back({"odd-gl", {4, 3, 3}, {1, 0, 0}, {4, 3, 3}, 0, 0, 0, 0, PW_QUAD_GAUSSLOBATTO});
        }
      } else {
        if (quick) geos.push_back({"sub", {6, 5, 1}, {1, 0, 0}, {6, 4, 1}, k, k, 1, 2, PW_QUAD_GAUSS});
        else {
          if (k <= 5) geos.push_back({"full", {13, 9, 1}, {0, 0, 0}, {13, 9, 1}, -1, -1, -1, -1, PW_QUAD_GAUSS});
          else geos.push_back({"full", {7, 5, 1}, {0, 0, 0}, {7, 5, 1}, -1, -1, -1, -1, PW_QUAD_GAUSS});
          geos.push_back({"sub", {12, 10, 1}, {3, 1, 0}, {12, 8, 1}, k, k, 1, 2, PW_QUAD_GAUSS});
          geos.push_back({"odd-gl", {21, 3, 1}, {0, 1, 0}, {19, 3, 1}, 0, 0, 0, 0, PW_QUAD_GAUSSLOBATTO});
        }
      }
      /* rounding: each output is d passes of n-term sums; relative to the max-norm of A x */
      const double tol_d = 16.0 * dim * n * DBL_EPSILON, tol_f = 64.0 * dim * n * FLT_EPSILON;
      /* 3D: the kernels split centro-symmetric 1D matrices into even and odd parts and fall back
         to plain products otherwise; the last geometry is run again with matrices made
         non-centro-symmetric ("gen") to cover the fallback */
      std::vector<std::pair<Geometry, int>> runs;
      for (const Geometry &G : geos) runs.push_back({G, 0});
      if (dim == 3) runs.push_back({geos.back(), 1});
      for (const auto &run : runs) {
        const Geometry &G = run.first;
        for (int dir = 0; dir <= 1; dir++) {
          for (int sc = 0; sc <= 1; sc++) {
            PatchworkTensorDesc d;
            char                label[128], gname[32];

            MakeDesc(dim, k, G, dir, sc, &d);
            if (run.second) { /* perturb one entry of each matrix, keeping the size of the entries */
              d.mass1d[1] *= 1.25;
              d.stiff1d[n] *= 0.75;
            }
            snprintf(gname, sizeof(gname), "%s%s", G.name, run.second ? "-gen" : "");
            snprintf(label, sizeof(label), "%dD k=%d %-10s dirichlet=%d %-7s", dim, k, gname, dir, sc ? "colored" : "atomic");
            for (int ow = 0; ow <= 1; ow++) {
              d.overwrite = ow;
              TestApply<double>(&d, label, tol_d);
              TestApply<float>(&d, label, tol_f);
              TestDiagonal(&d, label, tol_d);
            }
            d.overwrite = 0;
            if (sc == 0) {
              snprintf(label, sizeof(label), "%dD k=%d %-10s dirichlet=%d", dim, k, gname, dir);
              TestBoundary(&d, label, true);
              TestBoundary(&d, label, false);
            }
          }
        }
      }
    }
  }
  CHECK_CUDA(cudaStreamDestroy(g_stream));
  CHECK_CUDA(cudaDeviceSynchronize());
  printf("# %d passed, %d failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
