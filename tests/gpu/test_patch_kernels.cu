/* GPU-vs-CPU test of the vertex-patch smoother and transfer kernels (include/patchwork/patch_kernel.h),
   PETSc-free.

   Compares PatchworkPatch{Smooth,Solve,Residual}CUDA(Float) and Patchwork{Prolong,Restrict}CUDA(Float)
   with the CPU reference in the same precision (src/core/patch_ref.c, transfer_ref.c; 1D data from
   PatchworkPatchSetUp1D and PatchworkTransferSetUp1D) on random data: 2D degrees 1..10 and 3D degrees
   1..8, on the whole grid and on offset sub-boxes (a vertex / fine-cell sub-range with ghosted-array-
   like in and out boxes, as on an MPI rank), Dirichlet on and off, every color, smoothing in place
   (y = x) and out of place, the solve alone, the residual alone, prolongation and restriction, each
   in double and float. A "gen" geometry perturbs the patch mass so that the kernels take their
   plain-product path instead of the even-odd split. Also checks that the "separate" variant (residual
   then solve, color by color) is the fused smoother on the GPU, and that bad descriptors are refused.
   Errors are max-norm differences relative to the max-norm of the update (the residual: of the values
   written); tolerances are C d n eps, with n the terms of the longest 1D sum (smoother: n = 2k+1 per
   pass, d passes; transfer: k+1 or 2k+1 per pass) and C = 32 (smoother) or 16 (transfer) for the sums
   of both sides and the data's O(1) condition. Prints one line per case, `ok ...` or `FAIL ...`, the
   worst err/tol last, and exits 0 when all pass, 1 otherwise, 77 without a CUDA device.

   Usage: test_patch_kernels [--quick]   (--quick: one small sub-box geometry, two colors; the
   residual, the float solve and the float transfers once per degree, with Dirichlet; for
   compute-sanitizer) */
#include <cuda_runtime.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>
#include <patchwork/basis1d.h>
#include <patchwork/patch_kernel.h>

#include "gputest.h"


/* the worst err / tol over the cases that were compared */
static double g_worst = 0;
static char   g_worst_name[256];

static void Check(bool ok, const char *name, double err, double tol)
{
  if (tol > 0 && ErrMaxTakes(g_worst, err / tol)) {
    g_worst = err / tol;
    snprintf(g_worst_name, sizeof(g_worst_name), "%s", name);
  }
  Report(ok, name, err, tol);
}


template <typename T>
static void Download(std::vector<T> &h, const T *d)
{
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaMemcpy(h.data(), d, h.size() * sizeof(T), cudaMemcpyDeviceToHost));
}

/* max |a - b| / max |b - base| (the size of the update) */
template <typename T>
static double RelErr(const std::vector<T> &a, const std::vector<T> &b, const std::vector<T> &base, double *upd)
{
  double num = 0, den = 0;

  for (size_t i = 0; i < a.size(); i++) {
    num = ErrMax(num, fabs((double)a[i] - (double)b[i]));
    den = ErrMax(den, fabs((double)b[i] - (double)base[i]));
  }
  *upd = den;
  return den > 0 ? num / den : num;
}

static long long Count(const int size[3]) { return (long long)size[0] * size[1] * size[2]; }

/* ---------------------------------------------------------------------------------------------- */
/* Smoother */

/* A patch geometry: global cells; vertex range [vs, ve) (0: [1, N) per direction); margins of the in
   box around the closures and of the out box around the interiors of the range's patches (< 0: the
   whole grid); quadrature of the 1D matrices; gen: perturb the patch mass (plain-product path) */
struct PatchGeo {
  const char         *name;
  int                 cells[3], vs[3], ve[3];
  int                 in_lo, in_hi, out_lo, out_hi;
  PatchworkQuadrature quad;
  int                 gen;
};

/* inplace: the out box is the in box (one array) */
static void MakePatchDesc(int dim, int k, const PatchGeo &G, int dirichlet, int color, bool inplace, PatchworkPatchDesc *d)
{
  PatchworkTensorDesc *op = &d->op;

  memset(d, 0, sizeof(*d));
  op->dim       = dim;
  op->degree    = k;
  op->dirichlet = dirichlet;
  op->scatter   = PW_SCATTER_ATOMIC;
  for (int r = 0; r < 3; r++) {
    if (r >= dim) {
      op->nodes[r]      = 1;
      op->cell_start[r] = 0;
      op->cell_end[r]   = 1;
      op->in_start[r] = op->out_start[r] = 0;
      op->in_size[r] = op->out_size[r] = 1;
      d->vertex_start[r]                  = 0;
      d->vertex_end[r]                    = 1;
      continue;
    }
    const int nodes = k * G.cells[r] + 1;
    const int vs = G.vs[r] ? G.vs[r] : 1, ve = G.ve[r] ? G.ve[r] : G.cells[r];

    op->nodes[r]       = nodes;
    op->cell_start[r]  = 0;
    op->cell_end[r]    = G.cells[r];
    d->vertex_start[r] = vs;
    d->vertex_end[r]   = ve;
    /* closure of every patch of the range, whatever the color */
    int ilo = G.in_lo < 0 ? 0 : k * (vs - 1) - G.in_lo, ihi = G.in_hi < 0 ? nodes - 1 : k * ve + G.in_hi;
    int olo = G.out_lo < 0 ? 0 : k * (vs - 1) + 1 - G.out_lo, ohi = G.out_hi < 0 ? nodes - 1 : k * ve - 1 + G.out_hi;
    ilo = std::max(ilo, 0);
    olo = std::max(olo, 0);
    ihi = std::min(ihi, nodes - 1);
    ohi = std::min(ohi, nodes - 1);
    if (inplace) olo = ilo, ohi = ihi;
    op->in_start[r]  = ilo;
    op->in_size[r]   = ihi - ilo + 1;
    op->out_start[r] = olo;
    op->out_size[r]  = ohi - olo + 1;
  }
  op->coef_mass     = 1.3;
  op->coef_stiff[0] = 0.7;
  op->coef_stiff[1] = 1.1;
  op->coef_stiff[2] = dim == 3 ? 1.9 : 0.0;
  if (PatchworkTensor1DMatrices(k, G.quad, op->mass1d, op->stiff1d)) {
    printf("FAIL PatchworkTensor1DMatrices(%d) failed\n", k);
    exit(1);
  }
  if (PatchworkPatchSetUp1D(d)) {
    printf("FAIL PatchworkPatchSetUp1D(%d) failed\n", k);
    exit(1);
  }
  if (G.gen) d->patch_mass[1] *= 1.25; /* not centro-symmetric: the kernels' plain products */
  d->color = color;
  d->omega = 0.8;
}

enum SmoothMode { SMOOTH = 0, SMOOTH_INPLACE = 1, SOLVE = 2, RESIDUAL = 3 };

/* The reference and the kernel of a mode, in double or float */
static void RefCall(const PatchworkPatchDesc *d, SmoothMode mode, const double *x, const double *b, double *y)
{
  if (mode == SOLVE) PatchworkPatchSolveRef(d, b, y);
  else if (mode == RESIDUAL) PatchworkPatchResidualRef(d, x, b, y);
  else PatchworkPatchSmoothRef(d, x, b, y);
}
static void RefCall(const PatchworkPatchDesc *d, SmoothMode mode, const float *x, const float *b, float *y)
{
  if (mode == SOLVE) PatchworkPatchSolveRefFloat(d, b, y);
  else if (mode == RESIDUAL) PatchworkPatchResidualRefFloat(d, x, b, y);
  else PatchworkPatchSmoothRefFloat(d, x, b, y);
}
static int GPUCall(const PatchworkPatchDesc *d, SmoothMode mode, const double *x, const double *b, double *y)
{
  if (mode == SOLVE) return PatchworkPatchSolveCUDA(d, b, y, g_stream);
  if (mode == RESIDUAL) return PatchworkPatchResidualCUDA(d, x, b, y, g_stream);
  return PatchworkPatchSmoothCUDA(d, x, b, y, g_stream);
}
static int GPUCall(const PatchworkPatchDesc *d, SmoothMode mode, const float *x, const float *b, float *y)
{
  if (mode == SOLVE) return PatchworkPatchSolveCUDAFloat(d, b, y, g_stream);
  if (mode == RESIDUAL) return PatchworkPatchResidualCUDAFloat(d, x, b, y, g_stream);
  return PatchworkPatchSmoothCUDAFloat(d, x, b, y, g_stream);
}

static const char *ModeName(SmoothMode mode)
{
  switch (mode) {
  case SMOOTH: return "smooth";
  case SMOOTH_INPLACE: return "smooth-inplace";
  case SOLVE: return "solve";
  default: return "residual";
  }
}

/* The residual assigns: compare the nodes it wrote (those where the reference changed y) relative to
   their max-norm, and every other node exactly (it must not be written) */
template <typename T>
static double AssignErr(const std::vector<T> &a, const std::vector<T> &ref, const std::vector<T> &base, double *upd)
{
  double num = 0, den = 0;

  for (size_t i = 0; i < a.size(); i++) {
    if (ref[i] != base[i]) {
      num = ErrMax(num, fabs((double)a[i] - (double)ref[i]));
      den = ErrMax(den, fabs((double)ref[i]));
    } else if (a[i] != base[i]) num = INFINITY;
  }
  *upd = den;
  return den > 0 ? num / den : num;
}

template <typename T>
static void TestSmooth(const PatchworkPatchDesc *d, SmoothMode mode, const char *label, double tol)
{
  const long long nin = Count(d->op.in_size), nout = Count(d->op.out_size);
  std::vector<T>  x(nin), b(nin), y0(nout), yref, ygpu(nout);
  char            name[256];
  double          upd;

  for (auto &v : x) v = (T)Rand();
  for (auto &v : b) v = (T)Rand();
  for (auto &v : y0) v = (T)Rand();
  if (mode == SMOOTH_INPLACE) y0 = x;
  yref = y0;
  T *dx = Upload(x), *db = Upload(b), *dy = mode == SMOOTH_INPLACE ? dx : Upload(y0);
  RefCall(d, mode, mode == SMOOTH_INPLACE ? yref.data() : x.data(), b.data(), yref.data());
  CheckRet(GPUCall(d, mode, dx, db, dy), ModeName(mode));
  Download(ygpu, dy);
  CHECK_CUDA(cudaFree(dx));
  CHECK_CUDA(cudaFree(db));
  if (mode != SMOOTH_INPLACE) CHECK_CUDA(cudaFree(dy));
  const double err = mode == RESIDUAL ? AssignErr(ygpu, yref, y0, &upd) : RelErr(ygpu, yref, y0, &upd);
  snprintf(name, sizeof(name), "%s %s-%s", label, ModeName(mode), sizeof(T) == 4 ? "float" : "double");
  Check(err <= tol && upd > 0, name, err, tol);
}

/* The "separate" variant on the GPU, residual into r then the solve from r, color after color, against
   the fused smoother, both in place on x from the same start: one multiplicative sweep. d: an in-place
   descriptor (one box for x, b and r) */
template <typename T>
static void TestSeparate(PatchworkPatchDesc d, const char *label, double tol)
{
  const long long n = Count(d.op.in_size);
  std::vector<T>  x(n), b(n), r(n), yf(n), ys(n);
  char            name[256];
  double          upd;

  for (auto &v : x) v = (T)Rand();
  for (auto &v : b) v = (T)Rand();
  for (auto &v : r) v = (T)Rand();
  T *dxf = Upload(x), *dxs = Upload(x), *db = Upload(b), *dr = Upload(r);
  for (int c = 0; c < (1 << d.op.dim); c++) {
    d.color = c;
    CheckRet(GPUCall(&d, SMOOTH, dxf, db, dxf), "smooth");
    CheckRet(GPUCall(&d, RESIDUAL, dxs, db, dr), "residual");
    CheckRet(GPUCall(&d, SOLVE, dxs, dr, dxs), "solve");
  }
  Download(yf, dxf);
  Download(ys, dxs);
  CHECK_CUDA(cudaFree(dxf));
  CHECK_CUDA(cudaFree(dxs));
  CHECK_CUDA(cudaFree(db));
  CHECK_CUDA(cudaFree(dr));
  const double err = RelErr(ys, yf, x, &upd);
  snprintf(name, sizeof(name), "%s separate=fused-%s", label, sizeof(T) == 4 ? "float" : "double");
  Check(err <= tol && upd > 0, name, err, tol);
}

/* ---------------------------------------------------------------------------------------------- */
/* Transfer */

/* coarse cells per direction; fine cell range [cs, ce) (ce = 0: all); node margins of the boxes */
struct TransferGeo {
  const char *name;
  int         nc[3], cs[3], ce[3];
  int         margin_lo, margin_hi;
};

static void MakeTransferDesc(int dim, int k, const TransferGeo &G, int dirichlet, PatchworkTransferDesc *d)
{
  memset(d, 0, sizeof(*d));
  d->dim       = dim;
  d->degree    = k;
  d->dirichlet = dirichlet;
  if (PatchworkTransferSetUp1D(k, d)) {
    printf("FAIL PatchworkTransferSetUp1D(%d) failed\n", k);
    exit(1);
  }
  for (int r = 0; r < 3; r++) {
    if (r >= dim) {
      d->fine_nodes[r] = 1;
      d->cell_start[r] = 0;
      d->cell_end[r]   = 1;
      d->fine_start[r] = d->coarse_start[r] = 0;
      d->fine_size[r] = d->coarse_size[r] = 1;
      continue;
    }
    const int cs = G.cs[r], ce = G.ce[r] ? G.ce[r] : 2 * G.nc[r], fn = 2 * k * G.nc[r] + 1, cn = k * G.nc[r] + 1;
    const int flo = std::max(0, k * cs - G.margin_lo), fhi = std::min(fn - 1, k * ce + G.margin_hi);
    const int clo = std::max(0, k * (cs / 2) - G.margin_hi), chi = std::min(cn - 1, k * ((ce - 1) / 2 + 1) + G.margin_lo);

    d->fine_nodes[r]   = fn;
    d->cell_start[r]   = cs;
    d->cell_end[r]     = ce;
    d->fine_start[r]   = flo;
    d->fine_size[r]    = fhi - flo + 1;
    d->coarse_start[r] = clo;
    d->coarse_size[r]  = chi - clo + 1;
  }
}

static void TransferRef(const PatchworkTransferDesc *d, int transpose, const double *x, double *y)
{
  if (transpose) PatchworkRestrictRef(d, x, y);
  else PatchworkProlongRef(d, x, y);
}
static void TransferRef(const PatchworkTransferDesc *d, int transpose, const float *x, float *y)
{
  if (transpose) PatchworkRestrictRefFloat(d, x, y);
  else PatchworkProlongRefFloat(d, x, y);
}
static int TransferGPU(const PatchworkTransferDesc *d, int transpose, const double *x, double *y)
{
  return transpose ? PatchworkRestrictCUDA(d, x, y, g_stream) : PatchworkProlongCUDA(d, x, y, g_stream);
}
static int TransferGPU(const PatchworkTransferDesc *d, int transpose, const float *x, float *y)
{
  return transpose ? PatchworkRestrictCUDAFloat(d, x, y, g_stream) : PatchworkProlongCUDAFloat(d, x, y, g_stream);
}

template <typename T>
static void TestTransfer(const PatchworkTransferDesc *d, int transpose, const char *label, double tol)
{
  const long long nf = Count(d->fine_size), nc = Count(d->coarse_size), nin = transpose ? nf : nc, nout = transpose ? nc : nf;
  std::vector<T>  x(nin), y0(nout), yref, ygpu(nout);
  char            name[256];
  double          upd;

  for (auto &v : x) v = (T)Rand();
  for (auto &v : y0) v = (T)Rand();
  yref  = y0;
  T *dx = Upload(x), *dy = Upload(y0);
  TransferRef(d, transpose, x.data(), yref.data());
  CheckRet(TransferGPU(d, transpose, dx, dy), transpose ? "restrict" : "prolong");
  Download(ygpu, dy);
  CHECK_CUDA(cudaFree(dx));
  CHECK_CUDA(cudaFree(dy));
  const double err = RelErr(ygpu, yref, y0, &upd);
  snprintf(name, sizeof(name), "%s %s-%s", label, transpose ? "restrict" : "prolong", sizeof(T) == 4 ? "float" : "double");
  Check(err <= tol && upd > 0, name, err, tol);
}

/* ---------------------------------------------------------------------------------------------- */
/* Bad descriptors are refused; empty ranges are a no-op */
static void TestErrors(void)
{
  PatchworkPatchDesc    d;
  PatchworkTransferDesc t;
  const PatchGeo        G  = {"err", {4, 4, 4}, {0, 0, 0}, {0, 0, 0}, -1, -1, -1, -1, PW_QUAD_GAUSS, 0};
  const TransferGeo     TG = {"err", {2, 2, 2}, {0, 0, 0}, {0, 0, 0}, 0, 0};
  double               *dv;
  double                one = 1.0, back = 0.0;
  int                   ret;

  CHECK_CUDA(cudaMalloc((void **)&dv, 1 << 20));
  CHECK_CUDA(cudaMemcpy(dv, &one, sizeof(double), cudaMemcpyHostToDevice));
  MakePatchDesc(3, 2, G, 1, 0, true, &d);
  d.op.degree = 9; /* 3D supports 1..8 */
  ReportRet(PatchworkPatchSmoothCUDA(&d, dv, dv, dv, g_stream), cudaErrorInvalidValue, "smooth 3D degree 9 refused");
  MakePatchDesc(2, 2, G, 1, 0, true, &d);
  d.op.degree = 11;
  ReportRet(PatchworkPatchSolveCUDA(&d, dv, dv, g_stream), cudaErrorInvalidValue, "solve 2D degree 11 refused");
  MakePatchDesc(3, 2, G, 1, 0, true, &d);
  d.color = 8;
  ReportRet(PatchworkPatchSmoothCUDAFloat(&d, (const float *)dv, (const float *)dv, (float *)dv, g_stream), cudaErrorInvalidValue, "color 8 refused in 3D");
  MakePatchDesc(3, 2, G, 1, 0, true, &d);
  d.vertex_start[1] = 0; /* vertex 0 is on the boundary: no patch */
  ReportRet(PatchworkPatchSmoothCUDA(&d, dv, dv, dv, g_stream), cudaErrorInvalidValue, "boundary vertex refused");
  MakePatchDesc(3, 2, G, 1, 7, true, &d);
  d.op.in_size[2] -= 1; /* in box misses the closure of the patches of vertex z = N-1 (odd) */
  ReportRet(PatchworkPatchSmoothCUDA(&d, dv, dv, dv, g_stream), cudaErrorInvalidValue, "in box too small refused");
  MakePatchDesc(2, 3, G, 1, 0, true, &d);
  d.vertex_end[2] = 2; /* 2D: [0,1) in z */
  ReportRet(PatchworkPatchSmoothCUDA(&d, dv, dv, dv, g_stream), cudaErrorInvalidValue, "2D z vertex range refused");
  MakeTransferDesc(3, 2, TG, 0, &t);
  t.fine_nodes[0] -= 2; /* not 2kN+1 */
  ReportRet(PatchworkProlongCUDA(&t, dv, dv, g_stream), cudaErrorInvalidValue, "prolong bad fine node count refused");
  MakeTransferDesc(3, 2, TG, 0, &t);
  t.coarse_size[1] -= 1;
  ReportRet(PatchworkRestrictCUDA(&t, dv, dv, g_stream), cudaErrorInvalidValue, "restrict coarse box too small refused");
  MakePatchDesc(3, 2, G, 1, 0, true, &d);
  ReportRet(PatchworkPatchResidualCUDA(&d, dv, dv + 4096, dv, g_stream), cudaErrorInvalidValue, "residual y = x refused");
  ReportRet(PatchworkPatchResidualCUDAFloat(&d, (const float *)dv, (const float *)dv + 4096, (float *)dv + 4096, g_stream), cudaErrorInvalidValue, "residual y = b refused");
  MakePatchDesc(3, 2, G, 1, 7, false, &d);
  d.op.in_size[2] -= 1; /* the residual reads the closures, like the smoother */
  ReportRet(PatchworkPatchResidualCUDA(&d, dv, dv + 4096, dv + 8192, g_stream), cudaErrorInvalidValue, "residual in box too small refused");
  MakePatchDesc(3, 2, G, 1, 0, true, &d);
  d.op.degree = 9;
  ReportRet(PatchworkPatchSolveCUDAFloat(&d, (const float *)dv, (float *)dv, g_stream), cudaErrorInvalidValue, "solve float 3D degree 9 refused");
  MakeTransferDesc(2, 3, TG, 1, &t);
  t.fine_size[0] -= 1;
  ReportRet(PatchworkProlongCUDAFloat(&t, (const float *)dv, (float *)dv, g_stream), cudaErrorInvalidValue, "prolong float fine box too small refused");
  /* empty ranges: nothing written */
  MakePatchDesc(3, 2, G, 1, 0, true, &d);
  d.vertex_end[0] = d.vertex_start[0];
  ret = PatchworkPatchSmoothCUDA(&d, dv, dv, dv, g_stream);
  MakePatchDesc(3, 2, G, 1, 0, true, &d);
  d.vertex_start[0] = d.vertex_end[0] - 1; /* the one vertex N-1 = 3 is odd: no patch of color 0 */
  ret |= PatchworkPatchSolveCUDA(&d, dv, dv, g_stream);
  ret |= PatchworkPatchSolveCUDAFloat(&d, (const float *)dv, (float *)dv, g_stream);
  ret |= PatchworkPatchResidualCUDA(&d, dv + 4096, dv + 8192, dv, g_stream);
  ret |= PatchworkPatchResidualCUDAFloat(&d, (const float *)(dv + 4096), (const float *)(dv + 8192), (float *)dv, g_stream);
  MakeTransferDesc(2, 2, TG, 1, &t);
  t.cell_end[1] = t.cell_start[1];
  ret |= PatchworkProlongCUDA(&t, dv, dv, g_stream);
  ret |= PatchworkRestrictCUDA(&t, dv, dv, g_stream);
  ret |= PatchworkProlongCUDAFloat(&t, (const float *)dv, (float *)dv, g_stream);
  ret |= PatchworkRestrictCUDAFloat(&t, (const float *)dv, (float *)dv, g_stream);
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  CHECK_CUDA(cudaMemcpy(&back, dv, sizeof(double), cudaMemcpyDeviceToHost));
  ReportRet(back == 1.0 ? ret : -1, 0, "empty ranges are a no-op");
  CHECK_CUDA(cudaFree(dv));
}

int main(int argc, char **argv)
{
  bool      quick;
  const int start = GpuTestStart(argc, argv, &quick);

  if (start >= 0) return start;
  TestErrors();
  for (int dim = 3; dim >= 2; dim--) {
    const int kmax = dim == 3 ? 8 : 10;
    for (int k = 1; k <= kmax; k++) {
      const int             np = 2 * k + 1;
      std::vector<PatchGeo> geos;
      if (dim == 3) {
        if (quick) geos.push_back({"sub", {5, 4, 5}, {2, 1, 2}, {4, 3, 5}, k, 1, 1, 2, PW_QUAD_GAUSS, 0});
        else {
          if (k <= 2) geos.push_back({"full", {7, 6, 5}, {0, 0, 0}, {0, 0, 0}, -1, -1, -1, -1, PW_QUAD_GAUSS, 0});
          else if (k <= 5) geos.push_back({"full", {4, 4, 3}, {0, 0, 0}, {0, 0, 0}, -1, -1, -1, -1, PW_QUAD_GAUSS, 0});
          else geos.push_back({"full", {3, 3, 3}, {0, 0, 0}, {0, 0, 0}, -1, -1, -1, -1, PW_QUAD_GAUSS, 0});
          if (k <= 4) geos.push_back({"sub-gl", {8, 7, 6}, {2, 1, 3}, {7, 6, 6}, k, 1, 1, 2, PW_QUAD_GAUSSLOBATTO, 0});
          else geos.push_back({"sub-gl", {5, 5, 4}, {2, 1, 2}, {5, 4, 4}, k, 1, 1, 2, PW_QUAD_GAUSSLOBATTO, 0});
          geos.push_back({"gen", {4, 3, 4}, {1, 1, 2}, {4, 3, 4}, 1, 0, 0, 1, PW_QUAD_GAUSS, 1});
        }
      } else {
        if (quick) geos.push_back({"sub", {7, 6, 1}, {2, 1, 0}, {6, 5, 1}, k, 1, 1, 2, PW_QUAD_GAUSS, 0});
        else {
          geos.push_back({"full", {k <= 5 ? 13 : 7, k <= 5 ? 9 : 6, 1}, {0, 0, 0}, {0, 0, 0}, -1, -1, -1, -1, PW_QUAD_GAUSS, 0});
          geos.push_back({"sub-gl", {12, 10, 1}, {3, 2, 0}, {11, 9, 1}, k, 1, 1, 2, PW_QUAD_GAUSSLOBATTO, 0});
          geos.push_back({"gen", {6, 5, 1}, {1, 2, 0}, {5, 5, 1}, 1, 0, 0, 1, PW_QUAD_GAUSS, 1});
        }
      }
      /* rounding: d passes (residual, and d + 1 transforms of the solve) of sums of up to np = 2k+1
         terms each, on both sides, relative to the update's max-norm: C d np eps, C = 32 */
      const double tol_d = 32.0 * dim * np * DBL_EPSILON, tol_f = 32.0 * dim * np * FLT_EPSILON;
      for (const PatchGeo &G : geos) {
        for (int dir = 0; dir <= 1; dir++) {
          for (int color = 0; color < (1 << dim); color++) {
            if (quick && color != 0 && color != (1 << dim) - 1) continue;
            if (G.gen && color != 1) continue; /* the plain-product path: one color suffices */
            /* the quick run takes the residual and the float solve once per degree (sanitizer time) */
            const bool         more = !quick || (dir == 1 && color == 0);
            PatchworkPatchDesc d;
            char               label[128];

            snprintf(label, sizeof(label), "%dD k=%d %-6s dirichlet=%d color=%d", dim, k, G.name, dir, color);
            MakePatchDesc(dim, k, G, dir, color, false, &d);
            TestSmooth<double>(&d, SMOOTH, label, tol_d);
            TestSmooth<double>(&d, SOLVE, label, tol_d);
            if (more) {
              TestSmooth<double>(&d, RESIDUAL, label, tol_d);
              TestSmooth<float>(&d, RESIDUAL, label, tol_f);
              TestSmooth<float>(&d, SOLVE, label, tol_f);
            }
            if (!quick) TestSmooth<float>(&d, SMOOTH, label, tol_f);
            MakePatchDesc(dim, k, G, dir, color, true, &d);
            TestSmooth<double>(&d, SMOOTH_INPLACE, label, tol_d);
            TestSmooth<float>(&d, SMOOTH_INPLACE, label, tol_f);
          }
          if (!quick) { /* one sweep over all colors */
            PatchworkPatchDesc d;
            char               label[128];

            snprintf(label, sizeof(label), "%dD k=%d %-6s dirichlet=%d all colors", dim, k, G.name, dir);
            MakePatchDesc(dim, k, G, dir, 0, true, &d);
            TestSeparate<double>(d, label, tol_d);
            TestSeparate<float>(d, label, tol_f);
          }
        }
      }
      /* transfers: the whole fine grid, and an odd fine-cell sub-range with margins */
      std::vector<TransferGeo> tgeos;
      if (dim == 3) {
        if (!quick) tgeos.push_back({"full", {k <= 4 ? 3 : 2, 2, k <= 4 ? 3 : 2}, {0, 0, 0}, {0, 0, 0}, 0, 0});
        tgeos.push_back({"sub", {3, 3, 2}, {1, 2, 0}, {5, 3, 3}, 1, 2});
      } else {
        if (!quick) tgeos.push_back({"full", {6, 5, 1}, {0, 0, 0}, {0, 0, 0}, 0, 0});
        tgeos.push_back({"sub", {6, 5, 1}, {3, 2, 0}, {10, 9, 1}, 2, 1});
      }
      /* d passes of sums of k+1 terms (per fine cell in the reference), C = 16 */
      const double tol_t = 16.0 * dim * (k + 1) * DBL_EPSILON, tol_tf = 16.0 * dim * (k + 1) * FLT_EPSILON;
      for (const TransferGeo &G : tgeos) {
        for (int dir = 0; dir <= 1; dir++) {
          PatchworkTransferDesc t;
          char                  label[128];

          snprintf(label, sizeof(label), "%dD k=%d %-6s dirichlet=%d", dim, k, G.name, dir);
          MakeTransferDesc(dim, k, G, dir, &t);
          TestTransfer<double>(&t, 0, label, tol_t);
          TestTransfer<double>(&t, 1, label, tol_t);
          if (!quick || dir == 1) {
            TestTransfer<float>(&t, 0, label, tol_tf);
            TestTransfer<float>(&t, 1, label, tol_tf);
          }
        }
      }
    }
  }
  CHECK_CUDA(cudaStreamDestroy(g_stream));
  CHECK_CUDA(cudaDeviceSynchronize());
  /* one line, last: the scripts take it as the summary */
  printf("# %d passed, %d failed; worst err/tol %.3f (%s)\n", g_pass, g_fail, g_worst, g_worst_name);
  return g_fail ? 1 : 0;
}
