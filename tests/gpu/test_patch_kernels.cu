/* GPU-vs-CPU test of the vertex-patch smoother and transfer kernels (include/patchwork/patch_kernel.h),
   PETSc-free.

   Compares PatchworkPatch{Smooth,SmoothFloat,Solve}CUDA and Patchwork{Prolong,Restrict}CUDA with the
   CPU reference (src/core/patch_ref.c, transfer_ref.c; 1D data from PatchworkPatchSetUp1D and
   PatchworkTransferSetUp1D) on random data: 2D degrees 1..10 and 3D degrees 1..8, on the whole grid
   and on offset sub-boxes (a vertex / fine-cell sub-range with ghosted-array-like in and out boxes,
   as on an MPI rank), Dirichlet on and off, every color, smoothing in place (y = x) and out of place,
   in double and float, the solve alone, prolongation and restriction. A "gen" geometry perturbs the
   patch mass so that the kernels take their plain-product path instead of the even-odd split.
   Errors are max-norm differences relative to the max-norm of the update; tolerances grow with the
   number of terms summed (C d n eps). Prints one line per case, `ok ...` or `FAIL ...`, and exits 0
   when all pass, 1 otherwise, 77 without a CUDA device.

   Usage: test_patch_kernels [--quick]   (--quick: one small sub-box geometry, two colors, for
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

static void ReportRet(int ret, int want, const char *name)
{
  const bool ok = ret == want;

  if (ok) g_pass++;
  else g_fail++;
  printf("%s errors %s ret=%d want=%d (%s)\n", ok ? "ok  " : "FAIL", name, ret, want, cudaGetErrorString((cudaError_t)ret));
  fflush(stdout);
}

static void CheckRet(int ret, const char *what)
{
  if (ret) {
    printf("FAIL %s returned %d (%s)\n", what, ret, cudaGetErrorString((cudaError_t)ret));
    exit(1);
  }
}

template <typename T>
static T *Upload(const std::vector<T> &h)
{
  T *d;
  CHECK_CUDA(cudaMalloc((void **)&d, std::max<size_t>(h.size(), 1) * sizeof(T)));
  CHECK_CUDA(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
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
    num = fmax(num, fabs((double)a[i] - (double)b[i]));
    den = fmax(den, fabs((double)b[i] - (double)base[i]));
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

/* mode 0: smooth out of place, 1: smooth in place (y = x), 2: solve */
template <typename T>
static void TestSmooth(const PatchworkPatchDesc *d, int mode, const char *label, double tol)
{
  const long long nin = Count(d->op.in_size), nout = Count(d->op.out_size);
  std::vector<T>  x(nin), b(nin), y0(nout), yref, ygpu(nout);
  char            name[256];
  double          upd;

  for (auto &v : x) v = (T)Rand();
  for (auto &v : b) v = (T)Rand();
  for (auto &v : y0) v = (T)Rand();
  if (mode == 1) y0 = x;
  yref = y0;
  T *dx = Upload(x), *db = Upload(b), *dy = mode == 1 ? dx : Upload(y0);
  int ret;
  if (sizeof(T) == 4) {
    PatchworkPatchSmoothRefFloat(d, (const float *)(mode == 1 ? yref.data() : x.data()), (const float *)b.data(), (float *)yref.data());
    ret = PatchworkPatchSmoothCUDAFloat(d, (const float *)dx, (const float *)db, (float *)dy, g_stream);
  } else if (mode == 2) {
    PatchworkPatchSolveRef(d, (const double *)b.data(), (double *)yref.data());
    ret = PatchworkPatchSolveCUDA(d, (const double *)db, (double *)dy, g_stream);
  } else {
    PatchworkPatchSmoothRef(d, (const double *)(mode == 1 ? yref.data() : x.data()), (const double *)b.data(), (double *)yref.data());
    ret = PatchworkPatchSmoothCUDA(d, (const double *)dx, (const double *)db, (double *)dy, g_stream);
  }
  CheckRet(ret, mode == 2 ? "solve" : "smooth");
  Download(ygpu, dy);
  CHECK_CUDA(cudaFree(dx));
  CHECK_CUDA(cudaFree(db));
  if (mode != 1) CHECK_CUDA(cudaFree(dy));
  const double err = RelErr(ygpu, yref, y0, &upd);
  snprintf(name, sizeof(name), "%s %s-%s", label, mode == 2 ? "solve" : mode == 1 ? "smooth-inplace" : "smooth", sizeof(T) == 4 ? "float" : "double");
  Report(err <= tol && upd > 0, name, err, tol);
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

static void TestTransfer(const PatchworkTransferDesc *d, int transpose, const char *label, double tol)
{
  const long long     nf = Count(d->fine_size), nc = Count(d->coarse_size), nin = transpose ? nf : nc, nout = transpose ? nc : nf;
  std::vector<double> x(nin), y0(nout), yref, ygpu(nout);
  char                name[256];
  double              upd;

  for (auto &v : x) v = Rand();
  for (auto &v : y0) v = Rand();
  yref       = y0;
  double *dx = Upload(x), *dy = Upload(y0);
  if (transpose) {
    PatchworkRestrictRef(d, x.data(), yref.data());
    CheckRet(PatchworkRestrictCUDA(d, dx, dy, g_stream), "restrict");
  } else {
    PatchworkProlongRef(d, x.data(), yref.data());
    CheckRet(PatchworkProlongCUDA(d, dx, dy, g_stream), "prolong");
  }
  Download(ygpu, dy);
  CHECK_CUDA(cudaFree(dx));
  CHECK_CUDA(cudaFree(dy));
  const double err = RelErr(ygpu, yref, y0, &upd);
  snprintf(name, sizeof(name), "%s %s", label, transpose ? "restrict" : "prolong");
  Report(err <= tol && upd > 0, name, err, tol);
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
  /* empty ranges: nothing written */
  MakePatchDesc(3, 2, G, 1, 0, true, &d);
  d.vertex_end[0] = d.vertex_start[0];
  ret = PatchworkPatchSmoothCUDA(&d, dv, dv, dv, g_stream);
  MakePatchDesc(3, 2, G, 1, 0, true, &d);
  d.vertex_start[0] = d.vertex_end[0] - 1; /* the one vertex N-1 = 3 is odd: no patch of color 0 */
  ret |= PatchworkPatchSolveCUDA(&d, dv, dv, g_stream);
  MakeTransferDesc(2, 2, TG, 1, &t);
  t.cell_end[1] = t.cell_start[1];
  ret |= PatchworkProlongCUDA(&t, dv, dv, g_stream);
  ret |= PatchworkRestrictCUDA(&t, dv, dv, g_stream);
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  CHECK_CUDA(cudaMemcpy(&back, dv, sizeof(double), cudaMemcpyDeviceToHost));
  ReportRet(back == 1.0 ? ret : -1, 0, "empty ranges are a no-op");
  CHECK_CUDA(cudaFree(dv));
}

int main(int argc, char **argv)
{
  int  ndev  = 0;
  bool quick = false;

  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) quick = true;
    else {
      fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
      return 2;
    }
  }
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    printf("SKIP: no CUDA device\n");
    return 77;
  }
  CHECK_CUDA(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  {
    cudaDeviceProp p;
    CHECK_CUDA(cudaGetDeviceProperties(&p, 0));
    printf("# device: %s (sm_%d%d), %s\n", p.name, p.major, p.minor, quick ? "quick" : "full");
  }
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
      /* rounding: a few passes of sums of up to np terms each, relative to the update's max-norm */
      const double tol_d = 32.0 * dim * np * DBL_EPSILON, tol_f = 32.0 * dim * np * FLT_EPSILON;
      for (const PatchGeo &G : geos) {
        for (int dir = 0; dir <= 1; dir++) {
          for (int color = 0; color < (1 << dim); color++) {
            if (quick && color != 0 && color != (1 << dim) - 1) continue;
            if (G.gen && color != 1) continue; /* the plain-product path: one color suffices */
            PatchworkPatchDesc d;
            char               label[128];

            snprintf(label, sizeof(label), "%dD k=%d %-6s dirichlet=%d color=%d", dim, k, G.name, dir, color);
            MakePatchDesc(dim, k, G, dir, color, false, &d);
            TestSmooth<double>(&d, 0, label, tol_d);
            TestSmooth<double>(&d, 2, label, tol_d);
            MakePatchDesc(dim, k, G, dir, color, true, &d);
            TestSmooth<double>(&d, 1, label, tol_d);
            TestSmooth<float>(&d, 1, label, tol_f);
            if (!quick) {
              MakePatchDesc(dim, k, G, dir, color, false, &d);
              TestSmooth<float>(&d, 0, label, tol_f);
            }
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
      const double tol_t = 16.0 * dim * (k + 1) * DBL_EPSILON;
      for (const TransferGeo &G : tgeos) {
        for (int dir = 0; dir <= 1; dir++) {
          PatchworkTransferDesc t;
          char                  label[128];

          snprintf(label, sizeof(label), "%dD k=%d %-6s dirichlet=%d", dim, k, G.name, dir);
          MakeTransferDesc(dim, k, G, dir, &t);
          TestTransfer(&t, 0, label, tol_t);
          TestTransfer(&t, 1, label, tol_t);
        }
      }
    }
  }
  CHECK_CUDA(cudaStreamDestroy(g_stream));
  CHECK_CUDA(cudaDeviceSynchronize());
  printf("# %d passed, %d failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
