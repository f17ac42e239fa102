/* GPU-vs-CPU test of the LOR assembly kernels (include/patchwork/lor_kernel.h), PETSc-free.

   Compares PatchworkLOR{Macro,Gather,Dirichlet}CUDA (cuda/lor_assemble.cu) with the CPU reference
   (src/core/lor_ref.c) on random data: 2D and 3D, degrees 1..8 and 10, distorted node coordinates
   (a uniform grid of random extents, each coordinate moved by less than 0.2 h so that every Q1
   sub-element stays valid), random alpha >= 0 (alpha = 0 in some cases) and beta > 0, Dirichlet on and
   off, on several non-cubic grids: the whole grid, and parallel-rank-like sub-ranges (the row box one
   part of a partition of the nodes, strictly inside the grid or at its corner; the cell range the cells
   touching those rows, or all cells; the coordinate box a ghosted box one node wider than those cells'
   nodes, clipped to the grid). Per case:
     macro      GPU A1 against the reference's Ae, max-norm over the array relative to max|Ae|. Two
                sources of difference:
                - the order of the sums of the up to m = 2^dim sub-element matrices that share an entry
                  (the ABI lets the kernel add them with atomics, in any order; the current kernel
                  adds them in the order of the sub-elements' colors, the reference z slowest). A sum
                  of m terms in any order is within (m-1) eps sum|terms| of the exact sum, and every
                  term (an entry of an SPD element matrix, bounded by its largest diagonal entry) is at
                  most max|Ae| (a diagonal entry of Ae adds positive diagonal entries of element
                  matrices): both sides together within 2 m^2 eps max|Ae|;
                - the element matrices themselves differ in the last bits (nvcc contracts to FMA, the host
                  compiler need not), and the Jacobian sums vertex coordinates of size |x| into
                  differences of size h: its relative rounding error, and that of the element matrix, is
                  about eps R with R = max|x| / h_min (R ~ 160 on the 2D "big" grids, where the first
                  tolerance, without this term, was exceeded). Up to m such terms per entry: m c eps R
                  max|Ae|, c ~ 1.5 measured.
                Tolerance: m eps (2 R + 8 m) max|Ae| (both terms with a margin of 4 or more). The
                padding slots (neighbour outside the macro element) must be exactly 0, and the array is
                filled with NaN before, so every entry must be assigned. A second run must give the
                same bits (the kernel is deterministic).
     gather     GPU A2 fed the reference's Ae: bitwise equal to the reference (same additions, same
                order); vals filled with NaN before, so every entry must be assigned.
     dirichlet  GPU A4 on the reference's gathered values: bitwise equal to the reference's A4 (with
                Dirichlet off: unchanged).
     pipeline   GPU A1, A2, A4 against the reference's: the same bound as macro (an entry of the
                assembled matrix also sums at most 2^dim sub-element contributions).
     symmetry   (independent of the reference) the GPU's gathered matrix is symmetric to that tolerance
                where both rows are in the row box;
     rowsum     (alpha = 0, independent of the reference) every gathered row of the stiffness sums to 0
                within S times that tolerance (the Q1 gradients sum to zero).
   The pattern (PatchworkLORPattern{Count,Fill}CUDA) on whole grids, with and without axis_only and
   Dirichlet: rowptr, cols and keep equal the reference's exactly, and the reference equals a
   brute-force rule over the grid coordinates.
   DMPlex (PatchworkLORPlex{Values,HangingValues}{Ref,CUDA}), 2D and 3D, degrees 1..8, 3..7 cells of
   (k+1)^dim nodes each (mildly distorted, sheared, shifted boxes), reaction and diffusion at the nodes or
   NULL, both vertex rules; the sub-cells' ranges contiguous or with one unused entry between them, and
   a NaN guard after the last:
     values ref   every kept entry (a, b) (mask bits, a slower) = Ke[a][b] of
                  PatchworkLORPlexSubcellMatrix, bitwise; nothing outside the ranges written;
     hanging      the count mode of PatchworkLORPlexSubcellHanging = (sum of the sub-cell's vertices'
                  terms)^2, counted in the test; the reference's entries = (xw[p] xw[q]) Ke[a][b] in
                  the order a, b, p, q, bitwise;
     GPU vs ref   both functions, per entry relative to max|Ke| of the sub-cell, within a forward error
                  bound of the FMA contractions (PlexTol); guard untouched, every entry finite;
     ncells = 0   both launchers return 0 and write nothing.
   The fused one-rank gather (PatchworkLORGatherCSRCUDA: A2, A4 and A3 into the CSR's values), on whole
   non-cubic grids, 2D and 3D, degrees 1..8 and 10, Dirichlet off and on, axis_only 0 and 1, Ae from
   PatchworkLORMacroRef uploaded (so that only the gather is compared), the int row starts and keep map
   of PatchworkLORPattern{Count,Fill}Ref:
     fused      bitwise equal to PatchworkLORGatherCSRRef; the output filled with NaN and guarded by
                CSR_GUARD entries on each side: every entry assigned, the guards untouched;
     pipeline   bitwise equal to PatchworkLOR{Gather,Dirichlet,Compact}CUDA on the same Ae;
     macro-csr  PatchworkLORMacroCSRCUDA (A1 to A4 from the coordinates, no Ae) into an array filled
                with NaN and guarded: within the pipeline's tolerance (below) of GatherCSRRef on
                MacroRef's Ae (an entry sums at most 2^dim sub-element contributions, in another order),
                every entry assigned, the guards untouched; a second run bitwise equal;
     large      (full run only) 3D k = 4 on 50^3 macro elements (8.1M rows), Ae and the pattern from the
                GPU: fused = pipeline bitwise, and a timing line per axis_only (informational: the fused
                kernel against Gather + Dirichlet + Compact, cudaEvent means, GDoF/s = rows / time);
                and k = 2, 4, 8 at 8.1M rows, the vertex rule with axis_only 0 and 1 and the Gauss rule:
                MacroCSR = Macro + GatherCSR within that tolerance (relative to the largest entry), with
                a timing line each;
     errors     NULL descriptor, row boxes that are not the whole grid, bad dim, degree, nodes or cell
                range, NULL rowptr or out (and for MacroCSR NULL coordinates, a coordinate box missing
                cell nodes): cudaErrorInvalidValue (1), nothing written.
   Also: bad descriptors are refused with cudaErrorInvalidValue, empty ranges are no-ops.
   Prints one line per check, `ok ...` or `FAIL ...`, the worst err/tol last, and exits 0 when all
   pass, 1 otherwise, 77 without a CUDA device.

   Usage: test_lor_kernels [--quick]   (--quick: one small sub-range geometry per degree, Dirichlet on
   and off; DMPlex: 3 cells, 3D k = 1..3, 2D k = 1 and 3, two runs each; fused gather: 3D k = 1 and 4,
   2D k = 2 and 5 on grids of at most 3x2x3 cells, no large case; for compute-sanitizer) */
#include <cuda_runtime.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <algorithm>
#include <cmath>
#include <vector>
#include <patchwork/lor_kernel.h>

#include "gputest.h"

/* the worst err / tol over the cases that were compared */
static double g_worst = 0;
static char   g_worst_name[320];

static void Check(bool ok, const char *name, double err, double tol)
{
  if (tol > 0 && ErrMaxTakes(g_worst, err / tol)) {
    g_worst = err / tol;
    snprintf(g_worst_name, sizeof(g_worst_name), "%s", name);
  }
  Report(ok, name, err, tol);
}


static double *DeviceAlloc(size_t n)
{
  double *d;
  CHECK_CUDA(cudaMalloc((void **)&d, std::max<size_t>(n, 1) * sizeof(double)));
  return d;
}

static void Upload(double *d, const std::vector<double> &h)
{
  CHECK_CUDA(cudaMemcpyAsync(d, h.data(), h.size() * sizeof(double), cudaMemcpyHostToDevice, g_stream));
}

static void Download(std::vector<double> &h, const double *d)
{
  CHECK_CUDA(cudaMemcpyAsync(h.data(), d, h.size() * sizeof(double), cudaMemcpyDeviceToHost, g_stream));
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  CHECK_CUDA(cudaGetLastError());
}

/* NaN everywhere (all bits set): entries a kernel fails to assign show up */
static void FillNaN(double *d, size_t n)
{
  CHECK_CUDA(cudaMemsetAsync(d, 0xff, n * sizeof(double), g_stream));
}

/* A geometry: global cells per direction, and the row box as part p[d] of P[d] equal parts of the nodes
   (P = 1: the whole grid); all_cells: the cell range is the whole grid instead of the cells touching the
   rows */
struct Geo {
  const char *name;
  int         cells[3], P[3], p[3];
  int         all_cells;
};

static void MakeDesc(int dim, int k, const Geo &G, int dirichlet, double alpha, double beta, PatchworkLORDesc *d)
{
  memset(d, 0, sizeof(*d));
  d->dim       = dim;
  d->degree    = k;
  d->dirichlet = dirichlet;
  d->alpha     = alpha;
  d->beta      = beta;
  for (int dir = 0; dir < 3; dir++) {
    if (dir >= dim) {
      d->nodes[dir]      = 1;
      d->cell_start[dir] = 0;
      d->cell_end[dir]   = 1;
      d->coord_start[dir] = d->row_start[dir] = 0;
      d->coord_size[dir] = d->row_size[dir] = 1;
      continue;
    }
    const int N = G.cells[dir], n = k * N + 1;
    const int r0 = (int)((long)G.p[dir] * n / G.P[dir]), r1 = (int)((long)(G.p[dir] + 1) * n / G.P[dir]);
    /* cells touching nodes r0..r1-1: cell c holds nodes k c .. k c + k */
    const int c0 = G.all_cells ? 0 : (r0 > 0 ? (r0 + k - 1) / k - 1 : 0), c1 = G.all_cells ? N : std::min(N - 1, (r1 - 1) / k) + 1;
    const int x0 = std::max(0, k * c0 - 1), x1 = std::min(n - 1, k * c1 + 1);

    d->nodes[dir]       = n;
    d->row_start[dir]   = r0;
    d->row_size[dir]    = r1 - r0;
    d->cell_start[dir]  = c0;
    d->cell_end[dir]    = c1;
    d->coord_start[dir] = x0;
    d->coord_size[dir]  = x1 - x0 + 1;
  }
}

/* Coordinates of the coordinate box: the global grid on [0,L_0] x [0,L_1] (x [0,L_2]), L random in
   [0.5,2], every coordinate moved by less than 0.19 h (drawn for the whole grid, so that the values do
   not depend on the box). Returns R = max|x| / min h, the cancellation factor of the Jacobians. */
static double MakeCoords(const PatchworkLORDesc *d, std::vector<double> &x)
{
  const int dim = d->dim;
  double    L[3], h[3], Lmax = 0, hmin = INFINITY;

  for (int i = 0; i < dim; i++) {
    L[i] = 1.25 + 0.75 * Rand();
    h[i] = L[i] / (d->nodes[i] - 1);
    Lmax = std::max(Lmax, 1.19 * L[i]);
    hmin = std::min(hmin, h[i]);
  }
  x.assign((size_t)d->coord_size[0] * d->coord_size[1] * d->coord_size[2] * dim, 0.0);
  for (int gz = 0; gz < d->nodes[2]; gz++)
    for (int gy = 0; gy < d->nodes[1]; gy++)
      for (int gx = 0; gx < d->nodes[0]; gx++) {
        const int g[3] = {gx, gy, gz};
        double    v[3];
        bool      in = true;
        for (int i = 0; i < dim; i++) v[i] = h[i] * g[i] + 0.19 * h[i] * Rand();
        for (int i = 0; i < 3; i++) in = in && g[i] >= d->coord_start[i] && g[i] < d->coord_start[i] + d->coord_size[i];
        if (!in) continue;
        const size_t p = ((size_t)(gz - d->coord_start[2]) * d->coord_size[1] + (gy - d->coord_start[1])) * d->coord_size[0] + (gx - d->coord_start[0]);
        for (int i = 0; i < dim; i++) x[p * dim + i] = v[i];
      }
  return Lmax / hmin;
}

static double MaxAbs(const std::vector<double> &v)
{
  double m = 0;
  for (double a : v) m = ErrMax(m, fabs(a));
  return m;
}

/* max |a - b| (NaN anywhere: NaN) */
static double MaxDiff(const std::vector<double> &a, const std::vector<double> &b)
{
  double m = 0;
  for (size_t i = 0; i < a.size(); i++) m = ErrMax(m, fabs(a[i] - b[i]));
  return m;
}

/* entries whose bits differ */
static size_t BitDiff(const std::vector<double> &a, const std::vector<double> &b)
{
  size_t bad = 0;
  for (size_t i = 0; i < a.size(); i++) bad += memcmp(&a[i], &b[i], sizeof(double)) != 0;
  return bad;
}

static void RunCase(const PatchworkLORDesc *d, const char *label)
{
  const int    dim = d->dim, k = d->degree, n = k + 1, S = PatchworkLORSlots(d), nloc = PatchworkLORMacroNodes(d);
  const size_t nmacro = (size_t)PatchworkLORMacroCount(d), nrow = (size_t)PatchworkLORRowCount(d);
  const size_t nAe = nmacro * nloc * S, nv = nrow * S;
  const int    m = 1 << dim;
  char         name[256];

  std::vector<double> coords, Ae_ref(nAe), vals_ref(nv), valsD_ref, Ae(nAe), vals(nv), vals_g(nv);
  const double        R   = MakeCoords(d, coords);
  const double        tol = m * DBL_EPSILON * (2 * R + 8 * m);
  PatchworkLORMacroRef(d, coords.data(), Ae_ref.data());
  PatchworkLORGatherRef(d, Ae_ref.data(), vals_ref.data());
  valsD_ref = vals_ref;
  PatchworkLORDirichletRef(d, valsD_ref.data());
  const double scale = ErrMax(MaxAbs(Ae_ref), DBL_MIN);

  double *dx = DeviceAlloc(coords.size()), *dAe = DeviceAlloc(nAe), *dv = DeviceAlloc(nv);
  Upload(dx, coords);

  /* macro: tolerance; padding exactly 0 */
  FillNaN(dAe, nAe);
  CheckRet(PatchworkLORMacroCUDA(d, dx, dAe, g_stream), "PatchworkLORMacroCUDA");
  Download(Ae, dAe);
  {
    size_t pad = 0;
    for (size_t e = 0; e < nmacro; e++)
      for (int r = 0; r < nloc; r++) {
        const int l[3] = {r % n, (r / n) % n, dim == 3 ? r / (n * n) : 0};
        for (int s = 0; s < S; s++) {
          const int o[3] = {s % 3 - 1, (s / 3) % 3 - 1, dim == 3 ? s / 9 - 1 : 0};
          bool      out  = false;
          for (int i = 0; i < dim; i++) out = out || l[i] + o[i] < 0 || l[i] + o[i] > k;
          if (out && Ae[(e * nloc + r) * S + s] != 0.0) pad++;
        }
      }
    const double err = MaxDiff(Ae, Ae_ref) / scale;
    snprintf(name, sizeof(name), "%s macro", label);
    Check(err <= tol && pad == 0, name, err, tol);
    if (pad) printf("     %zu padding entries not zero\n", pad);
  }

  /* gather on the reference's Ae: bitwise */
  Upload(dAe, Ae_ref);
  FillNaN(dv, nv);
  CheckRet(PatchworkLORGatherCUDA(d, dAe, dv, g_stream), "PatchworkLORGatherCUDA");
  Download(vals, dv);
  {
    const size_t bad = BitDiff(vals, vals_ref);
    snprintf(name, sizeof(name), "%s gather (bitwise)", label);
    Check(bad == 0, name, (double)bad, 0);
  }

  /* dirichlet on the reference's gathered values: bitwise */
  Upload(dv, vals_ref);
  CheckRet(PatchworkLORDirichletCUDA(d, dv, g_stream), "PatchworkLORDirichletCUDA");
  Download(vals, dv);
  {
    const size_t bad = BitDiff(vals, valsD_ref);
    snprintf(name, sizeof(name), "%s dirichlet (bitwise)", label);
    Check(bad == 0, name, (double)bad, 0);
  }

  /* the GPU pipeline */
  FillNaN(dAe, nAe);
  FillNaN(dv, nv);
  CheckRet(PatchworkLORMacroCUDA(d, dx, dAe, g_stream), "PatchworkLORMacroCUDA");
  {
    std::vector<double> Ae2(nAe);
    Download(Ae2, dAe);
    const size_t bad = BitDiff(Ae2, Ae);
    snprintf(name, sizeof(name), "%s macro repeated (bitwise)", label);
    Check(bad == 0, name, (double)bad, 0);
  }
  CheckRet(PatchworkLORGatherCUDA(d, dAe, dv, g_stream), "PatchworkLORGatherCUDA");
  Download(vals_g, dv);
  CheckRet(PatchworkLORDirichletCUDA(d, dv, g_stream), "PatchworkLORDirichletCUDA");
  Download(vals, dv);
  {
    const double err = MaxDiff(vals, valsD_ref) / scale;
    snprintf(name, sizeof(name), "%s pipeline", label);
    Check(err <= tol, name, err, tol);
  }

  /* symmetry of the GPU's gathered matrix, rows in the row box */
  {
    double err = 0;
    for (size_t row = 0; row < nrow; row++) {
      const int g[3] = {d->row_start[0] + (int)(row % d->row_size[0]), d->row_start[1] + (int)((row / d->row_size[0]) % d->row_size[1]), d->row_start[2] + (int)(row / ((size_t)d->row_size[0] * d->row_size[1]))};
      for (int s = 0; s < S; s++) {
        const int o[3] = {s % 3 - 1, (s / 3) % 3 - 1, dim == 3 ? s / 9 - 1 : 0};
        int       nb[3];
        bool      in = true;
        for (int i = 0; i < 3; i++) {
          nb[i] = g[i] + o[i];
          in    = in && nb[i] >= d->row_start[i] && nb[i] < d->row_start[i] + d->row_size[i];
        }
        if (!in) continue;
        const size_t rn = ((size_t)(nb[2] - d->row_start[2]) * d->row_size[1] + (nb[1] - d->row_start[1])) * d->row_size[0] + (nb[0] - d->row_start[0]);
        err = ErrMax(err, fabs(vals_g[row * S + s] - vals_g[rn * S + (S - 1 - s)]));
      }
    }
    err /= scale;
    snprintf(name, sizeof(name), "%s symmetry", label);
    Check(err <= tol, name, err, tol);
  }

  /* row sums of the stiffness */
  if (d->alpha == 0) {
    double err = 0;
    for (size_t row = 0; row < nrow; row++) {
      double sum = 0;
      for (int s = 0; s < S; s++) sum += vals_g[row * S + s];
      err = ErrMax(err, fabs(sum));
    }
    err /= scale;
    snprintf(name, sizeof(name), "%s rowsum", label);
    Check(err <= S * tol, name, err, S * tol);
  }
  CHECK_CUDA(cudaFree(dx));
  CHECK_CUDA(cudaFree(dAe));
  CHECK_CUDA(cudaFree(dv));
}

/* The pattern of a whole-grid descriptor (one rank): the GPU's rowptr, cols and keep equal the
   reference's exactly, and the reference's rows hold exactly the neighbours a brute-force rule over
   the grid coordinates admits (in the grid; along an axis with axis_only; with Dirichlet, boundary
   rows and columns only on the diagonal), ascending */
static void TestPattern(const PatchworkLORDesc *d, int axis_only, const char *label)
{
  const long nrow = PatchworkLORRowCount(d);
  const int  S    = PatchworkLORSlots(d), o3 = d->dim == 3 ? 1 : 0;
  char       name[256];

  std::vector<long long> rowptr(nrow + 1), rowptr_g(nrow + 1);
  const long long        nnz = PatchworkLORPatternCountRef(d, axis_only, rowptr.data());
  std::vector<int>       cols(nnz), cols_g(nnz);
  std::vector<long long> keep(nnz), keep_g(nnz);
  PatchworkLORPatternFillRef(d, axis_only, rowptr.data(), cols.data(), keep.data());

  size_t wrong = 0;
  for (long row = 0; row < nrow; row++) {
    const int g[3] = {(int)(row % d->nodes[0]), (int)((row / d->nodes[0]) % d->nodes[1]), (int)(row / ((long)d->nodes[0] * d->nodes[1]))};
    long long e = rowptr[row];
    for (int oz = -o3; oz <= o3; oz++)
      for (int oy = -1; oy <= 1; oy++)
        for (int ox = -1; ox <= 1; ox++) {
          const int nb[3] = {g[0] + ox, g[1] + oy, g[2] + oz}, off = (ox != 0) + (oy != 0) + (oz != 0);
          bool      in = true, bnd = false;
          for (int i = 0; i < 3; i++) in = in && nb[i] >= 0 && nb[i] < d->nodes[i];
          if (!in || (axis_only && off > 1)) continue;
          for (int i = 0; i < d->dim; i++) bnd = bnd || g[i] == 0 || g[i] == d->nodes[i] - 1 || nb[i] == 0 || nb[i] == d->nodes[i] - 1;
          if (d->dirichlet && off > 0 && bnd) continue;
          const int col = nb[0] + d->nodes[0] * (nb[1] + d->nodes[1] * nb[2]), slot = (oz + 1) * 9 * o3 + (oy + 1) * 3 + (ox + 1);
          if (e >= rowptr[row + 1] || cols[e] != col || keep[e] != (long long)row * S + slot) wrong++;
          e++;
        }
    if (e != rowptr[row + 1]) wrong++;
  }
  snprintf(name, sizeof(name), "%s pattern axis_only=%d: reference rows = brute force (%lld entries)", label, axis_only, nnz);
  Check(wrong == 0, name, (double)wrong, 0);

  long long *drow, *dkeep, nnz_g = -1;
  int       *dcols;
  CHECK_CUDA(cudaMalloc((void **)&drow, (nrow + 1) * sizeof(long long)));
  CHECK_CUDA(cudaMalloc((void **)&dcols, std::max<long long>(nnz, 1) * sizeof(int)));
  CHECK_CUDA(cudaMalloc((void **)&dkeep, std::max<long long>(nnz, 1) * sizeof(long long)));
  int ret = PatchworkLORPatternCountCUDA(d, axis_only, drow, &nnz_g, g_stream);
  if (!ret && nnz_g == nnz) ret = PatchworkLORPatternFillCUDA(d, axis_only, drow, dcols, dkeep, g_stream);
  CHECK_CUDA(cudaMemcpyAsync(rowptr_g.data(), drow, (nrow + 1) * sizeof(long long), cudaMemcpyDeviceToHost, g_stream));
  if (nnz_g == nnz) {
    CHECK_CUDA(cudaMemcpyAsync(cols_g.data(), dcols, nnz * sizeof(int), cudaMemcpyDeviceToHost, g_stream));
    CHECK_CUDA(cudaMemcpyAsync(keep_g.data(), dkeep, nnz * sizeof(long long), cudaMemcpyDeviceToHost, g_stream));
  }
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  snprintf(name, sizeof(name), "%s pattern axis_only=%d: GPU rowptr, cols, keep = reference", label, axis_only);
  Check(!ret && nnz_g == nnz && rowptr_g == rowptr && cols_g == cols && keep_g == keep, name, ret ? (double)ret : (double)(nnz_g != nnz), 0);
  CHECK_CUDA(cudaFree(drow));
  CHECK_CUDA(cudaFree(dcols));
  CHECK_CUDA(cudaFree(dkeep));
}

static void TestErrors(void)
{
  PatchworkLORDesc d, b;
  const Geo        G = {"sub", {4, 3, 3}, {3, 3, 3}, {1, 1, 1}, 0};
  double          *dv, sentinel = 7.0, back;

  MakeDesc(3, 2, G, 1, 1.0, 1.0, &d);
  CHECK_CUDA(cudaMalloc((void **)&dv, sizeof(double)));
  b     = d;
  b.dim = 4;
  ReportRet(PatchworkLORMacroCUDA(&b, dv, dv, g_stream), cudaErrorInvalidValue, "dim = 4");
  b        = d;
  b.degree = 0;
  ReportRet(PatchworkLORGatherCUDA(&b, dv, dv, g_stream), cudaErrorInvalidValue, "degree 0");
  b        = d;
  b.degree = PW_MAX_DEGREE + 1;
  ReportRet(PatchworkLORDirichletCUDA(&b, dv, g_stream), cudaErrorInvalidValue, "degree 11");
  b          = d;
  b.nodes[1] = d.nodes[1] + 1;
  ReportRet(PatchworkLORMacroCUDA(&b, dv, dv, g_stream), cudaErrorInvalidValue, "nodes not k N + 1");
  b             = d;
  b.cell_end[0] = 5;
  ReportRet(PatchworkLORGatherCUDA(&b, dv, dv, g_stream), cudaErrorInvalidValue, "cell range beyond the grid");
  b                = d;
  b.coord_start[2] = d.coord_start[2] + 1;
  b.coord_size[2]  = d.coord_size[2] - 1;
  ReportRet(PatchworkLORMacroCUDA(&b, dv, dv, g_stream), cudaErrorInvalidValue, "coordinate box misses cell nodes");
  b             = d;
  b.row_size[1] = d.nodes[1];
  ReportRet(PatchworkLORGatherCUDA(&b, dv, dv, g_stream), cudaErrorInvalidValue, "row box beyond the grid (gather)");
  ReportRet(PatchworkLORDirichletCUDA(&b, dv, g_stream), cudaErrorInvalidValue, "row box beyond the grid (dirichlet)");
  ReportRet(PatchworkLORMacroCUDA(NULL, dv, dv, g_stream), cudaErrorInvalidValue, "NULL descriptor");
  {
    long long nnz;
    ReportRet(PatchworkLORPatternCountCUDA(&d, 0, (long long *)dv, &nnz, g_stream), cudaErrorInvalidValue, "pattern of a row box that is not the whole grid");
    ReportRet(PatchworkLORPatternFillCUDA(&d, 0, (long long *)dv, (int *)dv, (long long *)dv, g_stream), cudaErrorInvalidValue, "pattern fill of a row box that is not the whole grid");
  }

  /* empty ranges: nothing launched, nothing written */
  CHECK_CUDA(cudaMemcpy(dv, &sentinel, sizeof(double), cudaMemcpyHostToDevice));
  b             = d;
  b.cell_end[1] = b.cell_start[1];
  int ret       = PatchworkLORMacroCUDA(&b, dv, dv, g_stream);
  b             = d;
  b.row_size[0] = 0;
  ret |= PatchworkLORGatherCUDA(&b, dv, dv, g_stream);
  ret |= PatchworkLORDirichletCUDA(&b, dv, g_stream);
  b           = d;
  b.dirichlet = 0;
  ret |= PatchworkLORDirichletCUDA(&b, dv, g_stream);
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  CHECK_CUDA(cudaMemcpy(&back, dv, sizeof(double), cudaMemcpyDeviceToHost));
  ReportRet(back == sentinel ? ret : -1, 0, "empty ranges and dirichlet off are no-ops");
  CHECK_CUDA(cudaFree(dv));
}

/* ---- DMPlex: PatchworkLORPlex{Values,HangingValues}{Ref,CUDA} ----
   A case: ncells cells of (k+1)^dim nodes, each a box [0,L_0] x ... (L random in [0.75,1.25)) whose nodes
   move by less than 0.15 h (h = L/k) per coordinate, sheared by I + S (|S_ij| < 0.15, zero diagonal) and
   shifted by up to 3 per coordinate: every Q1 sub-cell stays valid. Reaction and diffusion in [0.5,1.5)
   at the nodes, or NULL; alpha, beta in [0.05,2.05); both vertex rules. Values: mask of sub-cell i full
   when i % 5 == 0, empty when i % 7 == 3, else random; hanging: every cell node has 0 terms (~20%), 1
   term of weight 1 (~30%) or 2..4 terms of weights in [0.05,0.95). The ranges of the sub-cells follow
   each other (offset = prefix sums of the counts), with one unused entry between them when gap is set,
   and a guard of PLEX_GUARD entries after the last; every entry outside the ranges must keep its NaN. */
#define PLEX_GUARD 64

static long long g_plex_values_entries = 0, g_plex_hanging_entries = 0;

struct PlexCase {
  PatchworkLORPlexDesc       d;
  int                        nsub, nv; /* sub-cells per cell (k^dim), vertices per sub-cell (2^dim) */
  std::vector<double>        coords, reaction, diffusion; /* coefficient empty: NULL */
  std::vector<unsigned char> mask;
  std::vector<long long>     off, vcount;  /* values: range start and size of sub-cell i; off[nsubs] = the end */
  std::vector<int>           xptr;
  std::vector<double>        xw;
  std::vector<long long>     hoff, hcount; /* hanging: the same */
  std::vector<double>        kmax;         /* max |Ke| of sub-cell i (the reference's) */
  double                     R;            /* max |x| / min distance of neighbouring nodes */
};

static const double *OrNull(const std::vector<double> &v) { return v.empty() ? NULL : v.data(); }

/* The bits of the guard value: all set (a NaN), as cudaMemset(0xff) writes */
static double GuardValue(void)
{
  double         g;
  const uint64_t bits = ~(uint64_t)0;
  memcpy(&g, &bits, sizeof(g));
  return g;
}

static bool IsGuard(double v)
{
  uint64_t bits;
  memcpy(&bits, &v, sizeof(bits));
  return bits == ~(uint64_t)0;
}

/* The cell node of vertex a of sub-cell sub, written out here apart from PatchworkLORPlexSubcellNode */
static int PlexVertexNode(int dim, int k, int sub, int a)
{
  int node = 0, stride = 1, rest = sub;
  for (int e = 0; e < dim; e++) {
    node += (rest % k + ((a >> e) & 1)) * stride;
    rest /= k;
    stride *= k + 1;
  }
  return node;
}

static void MakePlexCase(int dim, int k, long ncells, int coef, int rule, int gap, PlexCase &P)
{
  const int n1 = k + 1, nodes = dim == 3 ? n1 * n1 * n1 : n1 * n1;
  double    X = 0, hmin = INFINITY;

  memset(&P.d, 0, sizeof(P.d));
  P.d.dim         = dim;
  P.d.degree      = k;
  P.d.nodes       = nodes;
  P.d.ncells      = ncells;
  P.d.alpha       = 1.05 + Rand();
  P.d.beta        = 1.05 + Rand();
  P.d.vertex_rule = rule;
  P.nsub          = dim == 3 ? k * k * k : k * k;
  P.nv            = 1 << dim;
  const long nsubs = ncells * P.nsub;

  /* coordinates */
  P.coords.assign((size_t)ncells * dim * nodes, 0.0);
  for (long c = 0; c < ncells; c++) {
    double o[3], L[3], A[3][3];
    for (int e = 0; e < dim; e++) {
      o[e] = 3 * Rand();
      L[e] = 1 + 0.25 * Rand();
      for (int f = 0; f < dim; f++) A[e][f] = e == f ? 1.0 : 0.15 * Rand();
    }
    for (int node = 0; node < nodes; node++) {
      const int l[3] = {node % n1, (node / n1) % n1, node / (n1 * n1)};
      double    y[3];
      for (int e = 0; e < dim; e++) y[e] = L[e] * (l[e] + 0.15 * Rand()) / k;
      for (int e = 0; e < dim; e++) {
        double x = o[e];
        for (int f = 0; f < dim; f++) x += A[e][f] * y[f];
        P.coords[((size_t)c * dim + e) * nodes + node] = x;
        X = ErrMax(X, fabs(x));
      }
    }
    for (int node = 0; node < nodes; node++) /* distances to the next node along each axis */
      for (int e = 0, stride = 1; e < dim; stride *= n1, e++) {
        if ((node / stride) % n1 == k) continue;
        double s = 0;
        for (int f = 0; f < dim; f++) {
          const double t = P.coords[((size_t)c * dim + f) * nodes + node + stride] - P.coords[((size_t)c * dim + f) * nodes + node];
          s += t * t;
        }
        hmin = std::min(hmin, sqrt(s));
      }
  }
  P.R = ncells ? X / hmin : 0;
  P.reaction.clear();
  P.diffusion.clear();
  if (coef & 1) {
    P.reaction.resize((size_t)ncells * nodes);
    for (double &r : P.reaction) r = 1 + 0.5 * Rand();
  }
  if (coef & 2) {
    P.diffusion.resize((size_t)ncells * nodes);
    for (double &r : P.diffusion) r = 1 + 0.5 * Rand();
  }

  /* values: masks and offsets */
  P.mask.resize(nsubs);
  P.vcount.resize(nsubs);
  P.off.assign(nsubs + 1, 0);
  for (long i = 0; i < nsubs; i++) {
    const unsigned full = (1u << P.nv) - 1;
    unsigned       m    = i % 5 == 0 ? full : i % 7 == 3 ? 0u : std::min(full, (unsigned)((Rand() + 1) * 0.5 * (full + 1)));
    int            pc   = 0;
    for (int a = 0; a < P.nv; a++) pc += (m >> a) & 1;
    P.mask[i]      = (unsigned char)m;
    P.vcount[i]    = (long long)pc * pc;
    P.off[i + 1]   = P.off[i] + P.vcount[i] + gap;
  }

  /* hanging: terms per cell node, offsets from the count mode */
  P.xptr.assign((size_t)ncells * nodes + 1, 0);
  P.xw.clear();
  for (long n = 0; n < ncells * nodes; n++) {
    const double u = Rand();
    if (u < -0.6) { /* constrained, no term */
    } else if (u < 0) P.xw.push_back(1.0);
    else {
      const int nt = std::min(4, 2 + (int)(u * 3));
      for (int t = 0; t < nt; t++) P.xw.push_back(0.5 + 0.45 * Rand());
    }
    P.xptr[n + 1] = (int)P.xw.size();
  }
  P.hcount.resize(nsubs);
  P.hoff.assign(nsubs + 1, 0);
  for (long i = 0; i < nsubs; i++) {
    P.hcount[i]     = PatchworkLORPlexSubcellHanging(dim, &P.d, i / P.nsub, (int)(i % P.nsub), P.coords.data(), OrNull(P.reaction), OrNull(P.diffusion), P.xptr.data(), P.xw.data(), NULL);
    P.hoff[i + 1]   = P.hoff[i] + P.hcount[i] + gap;
  }
}

/* Entries outside the ranges that still hold the guard, entries inside that are not finite */
static void PlexScan(const std::vector<double> &v, const std::vector<long long> &off, const std::vector<long long> &count, size_t *touched, size_t *nonfinite)
{
  std::vector<char> in(v.size(), 0);

  *touched = *nonfinite = 0;
  for (size_t i = 0; i + 1 < off.size(); i++)
    for (long long t = off[i]; t < off[i] + count[i]; t++) {
      in[t] = 1;
      *nonfinite += !std::isfinite(v[t]);
    }
  for (size_t t = 0; t < v.size(); t++) *touched += !in[t] && !IsGuard(v[t]);
}

/* The references, checked independently of their code paths (bitwise: same expressions, both host
   code without FMA); fills P.kmax and returns the reference arrays */
static void PlexHostChecks(PlexCase &P, const char *label, std::vector<double> &vref, std::vector<double> &href)
{
  const int       dim = P.d.dim, k = P.d.degree, nv = P.nv;
  const long long nsubs = P.d.ncells * P.nsub;
  const double   *r = OrNull(P.reaction), *dc = OrNull(P.diffusion);
  char            name[256];
  size_t          bad = 0, touched, nonfinite;

  vref.assign(P.off[nsubs] + PLEX_GUARD, GuardValue());
  href.assign(P.hoff[nsubs] + PLEX_GUARD, GuardValue());
  PatchworkLORPlexValuesRef(&P.d, P.coords.data(), r, dc, P.mask.data(), P.off.data(), vref.data());
  PatchworkLORPlexHangingValuesRef(&P.d, P.coords.data(), r, dc, P.xptr.data(), P.xw.data(), P.hoff.data(), href.data());

  /* values: entry (a, b) of the kept vertices, a slower, = Ke[a][b] of PatchworkLORPlexSubcellMatrix */
  P.kmax.assign(nsubs, 0.0);
  for (long long i = 0; i < nsubs; i++) {
    double    Ke[64];
    long long t = P.off[i];
    PatchworkLORPlexSubcellMatrix(dim, &P.d, (long)(i / P.nsub), (int)(i % P.nsub), P.coords.data(), r, dc, Ke);
    for (int e = 0; e < nv * nv; e++) P.kmax[i] = ErrMax(P.kmax[i], fabs(Ke[e]));
    for (int a = 0; a < nv; a++)
      for (int b = 0; b < nv; b++)
        if ((P.mask[i] >> a) & 1 && (P.mask[i] >> b) & 1) bad += memcmp(&vref[t++], &Ke[a * nv + b], sizeof(double)) != 0;
    bad += t != P.off[i] + P.vcount[i];
  }
  PlexScan(vref, P.off, P.vcount, &touched, &nonfinite);
  long long nent = 0;
  for (long long i = 0; i < nsubs; i++) nent += P.vcount[i];
  snprintf(name, sizeof(name), "%s values ref = Ke[a][b] (bitwise, %lld entries), guard kept, finite", label, nent);
  Check(bad + touched + nonfinite == 0, name, (double)(bad + touched + nonfinite), 0);

  /* hanging: the count = (sum of the vertices' terms)^2, counted here with PlexVertexNode; the entries
     xw[p] xw[q] Ke[a][b] in the order a, b, p, q */
  size_t badcount = 0;
  bad             = 0;
  for (long long i = 0; i < nsubs; i++) {
    const long c   = (long)(i / P.nsub);
    const int  sub = (int)(i % P.nsub);
    long       node[8], terms = 0;
    double     Ke[64];
    for (int a = 0; a < nv; a++) {
      node[a] = c * P.d.nodes + PlexVertexNode(dim, k, sub, a);
      terms += P.xptr[node[a] + 1] - P.xptr[node[a]];
    }
    badcount += P.hcount[i] != (long long)terms * terms;
    PatchworkLORPlexSubcellMatrix(dim, &P.d, c, sub, P.coords.data(), r, dc, Ke);
    long long t = P.hoff[i];
    for (int a = 0; a < nv; a++)
      for (int b = 0; b < nv; b++)
        for (int p = P.xptr[node[a]]; p < P.xptr[node[a] + 1]; p++)
          for (int q = P.xptr[node[b]]; q < P.xptr[node[b] + 1]; q++) {
            const double want = (P.xw[p] * P.xw[q]) * Ke[a * nv + b];
            if (t < P.hoff[i] + P.hcount[i]) bad += memcmp(&href[t], &want, sizeof(double)) != 0;
            t++;
          }
    bad += t != P.hoff[i] + P.hcount[i];
  }
  snprintf(name, sizeof(name), "%s hanging counts = (sum of terms)^2 (%lld sub-cells)", label, nsubs);
  Check(badcount == 0, name, (double)badcount, 0);
  PlexScan(href, P.hoff, P.hcount, &touched, &nonfinite);
  snprintf(name, sizeof(name), "%s hanging ref = xw[p] xw[q] Ke[a][b] (bitwise), guard kept, finite", label);
  Check(bad + touched + nonfinite == 0, name, (double)(bad + touched + nonfinite), 0);
}

/* The tolerance of GPU vs reference, relative to max |Ke| of the entry's sub-cell. Both evaluate the
   same expressions in the same order (PatchworkQ1ElementMatrixCoef); they differ only where nvcc
   contracts a*b + c into an FMA and the host does not (x86-64 gcc without -mfma never does). An FMA
   drops a rounding, so the two results lie within the sum of the two forward error bounds, built from
   gamma(m) = m u / (1 - m u), u = eps/2, with m the longest chain of roundings. First order:
   - J[i][j] = sum_a x_a,i dphi_a,j: nv products of a coordinate with dphi (itself dim - 1 products),
     chain mJ = nv + dim - 1 (10 in 3D); error <= gamma(mJ) sum_a |x_a,i| |dphi_a,j| = 2 gamma(mJ) max|x|
     (sum_a |dphi_a,j| = 2 at any point), on entries of size h (the sub-cell's edges, >= h_min): a
     normwise relative difference rho <= 2 * 2 gamma(mJ) R between the sides, R = max|x| / h_min (the
     cancellation of vertex coordinates into edge vectors; R < 8 k here).
   - Ke's terms per quadrature point are wdet (aq phi_a phi_b + bq grad_a . grad_b), det of degree dim
     and grad = J^{-T} dphi: a relative perturbation rho of J moves them by at most (dim + 2) kappa rho,
     kappa = cond(J) <= 6 for these cells (extents within a factor 5/3, shear < 0.15, node moves < 0.15 h;
     the largest Frobenius-norm condition number over all cases, at all points of both rules, is 5.8).
     |term(a,b)| <= (term(a,a) + term(b,b)) / 2 (Cauchy-Schwarz, positive weights and coefficients), so
     the magnitudes summed into any Ke[a][b] stay below max |Ke| (SPD: its largest entry is diagonal).
   - the roundings after J (det or cofactors, division, grad, gg, the coefficients' interpolation, the
     sum over the nv points) form chains under 40, amplified by the cancellation in det and the
     cofactors (<= kappa^2): 2 kappa^2 gamma(40) for both sides.
   tol = (dim + 2) kappa 4 gamma(mJ) R + 2 kappa^2 gamma(40), about 1.3e-13 R + 3.2e-13 in 3D: generous
   (in practice a few eps R: the macro check above measures about 1.5 eps R per element matrix), while
   any indexing error is O(1). Hanging entries are
   fl(fl(xw xw) Ke) with |xw xw| <= 1: the same bound plus 2 u. */
static double PlexTol(int dim, double R)
{
  const double u = DBL_EPSILON / 2, kappa = 6;
  const int    mJ = (1 << dim) + dim - 1;
  auto         gamma = [u](int m) { return m * u / (1 - m * u); };
  return (dim + 2) * kappa * 4 * gamma(mJ) * R + 2 * kappa * kappa * gamma(40);
}

/* GPU vs the reference arrays, per entry relative to kmax of its sub-cell; guard kept, finite */
static void PlexCompare(const char *name0, const std::vector<double> &g, const std::vector<double> &ref, const std::vector<long long> &off, const std::vector<long long> &count, const std::vector<double> &kmax, double tol)
{
  double err = 0;
  size_t touched, nonfinite;
  char   name[256];

  for (size_t i = 0; i + 1 < off.size(); i++)
    for (long long t = off[i]; t < off[i] + count[i]; t++) {
      err = ErrMax(err, fabs(g[t] - ref[t]) / ErrMax(kmax[i], DBL_MIN));
    }
  PlexScan(g, off, count, &touched, &nonfinite);
  snprintf(name, sizeof(name), "%s (guard touched %zu, not finite %zu)", name0, touched, nonfinite);
  Check(err <= tol && touched == 0 && nonfinite == 0, name, err, tol);
}

static void PlexGpuChecks(const PlexCase &P, const char *label, const std::vector<double> &vref, const std::vector<double> &href)
{
  const long long nsubs = P.d.ncells * P.nsub;
  const double    tol   = PlexTol(P.d.dim, P.R);
  char            name[256];

  double        *dx = Upload(P.coords), *dr = P.reaction.empty() ? NULL : Upload(P.reaction), *dc = P.diffusion.empty() ? NULL : Upload(P.diffusion), *dxw = Upload(P.xw);
  unsigned char *dmask = Upload(P.mask);
  long long     *doff = Upload(P.off), *dhoff = Upload(P.hoff);
  int           *dxptr = Upload(P.xptr);
  double        *dv = DeviceAlloc(vref.size()), *dh = DeviceAlloc(href.size());
  std::vector<double> v(vref.size()), h(href.size());

  FillNaN(dv, vref.size());
  CheckRet(PatchworkLORPlexValuesCUDA(&P.d, dx, dr, dc, dmask, doff, dv, g_stream), "PatchworkLORPlexValuesCUDA");
  Download(v, dv);
  snprintf(name, sizeof(name), "%s values GPU vs ref R=%.0f", label, P.R);
  PlexCompare(name, v, vref, P.off, P.vcount, P.kmax, tol);

  FillNaN(dh, href.size());
  CheckRet(PatchworkLORPlexHangingValuesCUDA(&P.d, dx, dr, dc, dxptr, dxw, dhoff, dh, g_stream), "PatchworkLORPlexHangingValuesCUDA");
  Download(h, dh);
  snprintf(name, sizeof(name), "%s hanging GPU vs ref R=%.0f", label, P.R);
  PlexCompare(name, h, href, P.hoff, P.hcount, P.kmax, tol + DBL_EPSILON);

  for (long long i = 0; i < nsubs; i++) {
    g_plex_values_entries += P.vcount[i];
    g_plex_hanging_entries += P.hcount[i];
  }
  CHECK_CUDA(cudaFree(dx));
  if (dr) CHECK_CUDA(cudaFree(dr));
  if (dc) CHECK_CUDA(cudaFree(dc));
  CHECK_CUDA(cudaFree(dxw));
  CHECK_CUDA(cudaFree(dmask));
  CHECK_CUDA(cudaFree(doff));
  CHECK_CUDA(cudaFree(dhoff));
  CHECK_CUDA(cudaFree(dxptr));
  CHECK_CUDA(cudaFree(dv));
  CHECK_CUDA(cudaFree(dh));
}

/* ncells = 0: both launchers return 0 without touching anything (NULL inputs), the references too */
static void TestPlexEmpty(void)
{
  PatchworkLORPlexDesc d;
  double               *dv, sentinel = 7.0, back = 0, host = 7.0;

  memset(&d, 0, sizeof(d));
  d.dim    = 3;
  d.degree = 2;
  d.nodes  = 27;
  d.ncells = 0;
  d.alpha = d.beta = 1.0;
  CHECK_CUDA(cudaMalloc((void **)&dv, sizeof(double)));
  CHECK_CUDA(cudaMemcpy(dv, &sentinel, sizeof(double), cudaMemcpyHostToDevice));
  int ret = PatchworkLORPlexValuesCUDA(&d, NULL, NULL, NULL, NULL, NULL, dv, g_stream);
  ReportRet(ret, 0, "plex values ncells = 0");
  ret = PatchworkLORPlexHangingValuesCUDA(&d, NULL, NULL, NULL, NULL, NULL, NULL, dv, g_stream);
  ReportRet(ret, 0, "plex hanging ncells = 0");
  d.dim = 2;
  d.nodes = 9;
  ret = PatchworkLORPlexValuesCUDA(&d, NULL, NULL, NULL, NULL, NULL, dv, g_stream) | PatchworkLORPlexHangingValuesCUDA(&d, NULL, NULL, NULL, NULL, NULL, NULL, dv, g_stream);
  ReportRet(ret, 0, "plex values and hanging 2D ncells = 0");
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  CHECK_CUDA(cudaMemcpy(&back, dv, sizeof(double), cudaMemcpyDeviceToHost));
  PatchworkLORPlexValuesRef(&d, NULL, NULL, NULL, NULL, NULL, &host);
  PatchworkLORPlexHangingValuesRef(&d, NULL, NULL, NULL, NULL, NULL, NULL, &host);
  Result(back == sentinel && host == 7.0, "plex ncells = 0 writes nothing (device %g, reference %g, want 7)", back, host);
  CHECK_CUDA(cudaFree(dv));
}

/* dim 3 and 2, degrees 1..8 (quick: 3D 1..3, 2D 1 and 3, 3 cells), 3..7 cells; runs: every coefficient
   case (none, reaction, diffusion, both), the vertex rule and the gaps alternating with k */
static void TestPlex(bool quick)
{
  for (int dim = 3; dim >= 2; dim--)
    for (int k = 1; k <= 8; k++) {
      if (quick && (k > 3 || (dim == 2 && k == 2))) continue;
      const long ncells = quick ? 3 : 3 + (k + dim) % 5;
      static const int full_runs[4] = {0, 1, 2, 3}, quick_runs[2] = {0, 3};
      const int        nruns = quick ? 2 : 4;
      for (int run = 0; run < nruns; run++) {
        static const char *const cname[4] = {"const", "reaction", "diffusion", "both"};
        const int                coef = quick ? quick_runs[run] : full_runs[run], rule = (run + k) & 1, gap = (run / 2 + k) & 1;
        PlexCase                 P;
        std::vector<double>      vref, href;
        char                     label[128];

        MakePlexCase(dim, k, ncells, coef, rule, gap, P);
        snprintf(label, sizeof(label), "plex %dD k=%d cells=%ld coef=%s rule=%s gap=%d", dim, k, ncells, cname[coef], rule ? "vertex" : "gauss", gap);
        PlexHostChecks(P, label, vref, href);
        PlexGpuChecks(P, label, vref, href);
      }
    }
  printf("# plex entries compared GPU vs reference: PatchworkLORPlexValuesCUDA %lld, PatchworkLORPlexHangingValuesCUDA %lld\n", g_plex_values_entries, g_plex_hanging_entries);
}

/* ---- the fused one-rank gather: PatchworkLORGatherCSRCUDA ----
   Ae from the reference (PatchworkLORMacroRef, uploaded), so that only the gather is compared; the
   pattern and the int row starts from PatchworkLORPattern{Count,Fill}Ref. */
#define CSR_GUARD 16

static long long g_csr_entries = 0;

/* The pattern of a whole-grid descriptor on the host: the row starts as int (the matrix's CSR) and the
   keep map of PatchworkLORCompact*(); returns nnz */
static long long CSRPattern(const PatchworkLORDesc *d, int axis_only, std::vector<int> &rowptr, std::vector<long long> &keep)
{
  const long             nrow = PatchworkLORRowCount(d);
  std::vector<long long> rp(nrow + 1);
  const long long        nnz = PatchworkLORPatternCountRef(d, axis_only, rp.data());
  std::vector<int>       cols(std::max<long long>(nnz, 1));

  keep.assign(std::max<long long>(nnz, 1), 0);
  PatchworkLORPatternFillRef(d, axis_only, rp.data(), cols.data(), keep.data());
  rowptr.resize(nrow + 1);
  for (long r = 0; r <= nrow; r++) rowptr[r] = (int)rp[r];
  return nnz;
}

/* One whole-grid descriptor, axis_only 0 and 1:
     fused      PatchworkLORGatherCSRCUDA into an array filled with NaN, CSR_GUARD entries before and
                after: bitwise equal to PatchworkLORGatherCSRRef on the same Ae, every entry assigned,
                the guards untouched;
     pipeline   PatchworkLOR{Gather,Dirichlet,Compact}CUDA (keep map of the pattern) on the same Ae:
                bitwise equal to the fused result. */
static void GatherCSRCase(const PatchworkLORDesc *d, const char *label0)
{
  const int    S = PatchworkLORSlots(d), nloc = PatchworkLORMacroNodes(d);
  const size_t nmacro = (size_t)PatchworkLORMacroCount(d), nrow = (size_t)PatchworkLORRowCount(d);
  const size_t nAe = nmacro * nloc * S, nv = nrow * S;
  char         name[320];

  std::vector<double> coords, Ae(nAe);
  const double        R = MakeCoords(d, coords), m = 1 << d->dim, tol = m * DBL_EPSILON * (2 * R + 8 * m);
  PatchworkLORMacroRef(d, coords.data(), Ae.data());
  const double scale = ErrMax(MaxAbs(Ae), DBL_MIN);
  double      *dAe = DeviceAlloc(nAe), *dv = DeviceAlloc(nv), *dx = Upload(coords);
  Upload(dAe, Ae);
  for (int axis_only = 0; axis_only <= 1; axis_only++) {
    std::vector<int>       rowptr;
    std::vector<long long> keep;
    const long long        nnz = CSRPattern(d, axis_only, rowptr, keep);
    std::vector<double>    ref(nnz), got(nnz + 2 * CSR_GUARD), pipe(nnz);

    PatchworkLORGatherCSRRef(d, axis_only, Ae.data(), rowptr.data(), ref.data());
    int       *drow  = Upload(rowptr);
    long long *dkeep = Upload(keep);
    double    *dout = DeviceAlloc(got.size()), *dpipe = DeviceAlloc(nnz);

    FillNaN(dout, got.size());
    CheckRet(PatchworkLORGatherCSRCUDA(d, axis_only, dAe, drow, dout + CSR_GUARD, g_stream), "PatchworkLORGatherCSRCUDA");
    Download(got, dout);
    size_t bad = 0, guard = 0;
    for (long long i = 0; i < nnz; i++) bad += memcmp(&got[CSR_GUARD + i], &ref[i], sizeof(double)) != 0;
    for (int i = 0; i < CSR_GUARD; i++) guard += !IsGuard(got[i]) + !IsGuard(got[CSR_GUARD + nnz + i]);
    snprintf(name, sizeof(name), "%s axis_only=%d fused (bitwise = GatherCSRRef, %lld entries; guard entries touched %zu)", label0, axis_only, nnz, guard);
    Check(bad + guard == 0, name, (double)(bad + guard), 0);

    /* the whole assembly from the coordinates: within the pipeline's tolerance of the reference */
    {
      std::vector<double> mc(got.size()), again(got.size());
      double              err = 0;
      size_t              guard2 = 0, diff = 0;

      FillNaN(dout, got.size());
      CheckRet(PatchworkLORMacroCSRCUDA(d, axis_only, dx, drow, dout + CSR_GUARD, g_stream), "PatchworkLORMacroCSRCUDA");
      Download(mc, dout);
      for (long long i = 0; i < nnz; i++) err = ErrMax(err, fabs(mc[CSR_GUARD + i] - ref[i])); /* a NaN left: an entry not written */
      for (int i = 0; i < CSR_GUARD; i++) guard2 += !IsGuard(mc[i]) + !IsGuard(mc[CSR_GUARD + nnz + i]);
      snprintf(name, sizeof(name), "%s axis_only=%d macro-csr (A1-A4 from the coordinates) = GatherCSRRef(MacroRef) (guard entries touched %zu)", label0, axis_only, guard2);
      Check(err / scale <= tol && guard2 == 0, name, err / scale, tol);
      FillNaN(dout, got.size());
      CheckRet(PatchworkLORMacroCSRCUDA(d, axis_only, dx, drow, dout + CSR_GUARD, g_stream), "PatchworkLORMacroCSRCUDA");
      Download(again, dout);
      diff = BitDiff(again, mc);
      snprintf(name, sizeof(name), "%s axis_only=%d macro-csr repeated (bitwise)", label0, axis_only);
      Check(diff == 0, name, (double)diff, 0);
    }

    FillNaN(dv, nv);
    FillNaN(dpipe, nnz);
    CheckRet(PatchworkLORGatherCUDA(d, dAe, dv, g_stream), "PatchworkLORGatherCUDA");
    CheckRet(PatchworkLORDirichletCUDA(d, dv, g_stream), "PatchworkLORDirichletCUDA");
    CheckRet(PatchworkLORCompactCUDA((long)nnz, dkeep, dv, dpipe, g_stream), "PatchworkLORCompactCUDA");
    Download(pipe, dpipe);
    bad = 0;
    for (long long i = 0; i < nnz; i++) bad += memcmp(&got[CSR_GUARD + i], &pipe[i], sizeof(double)) != 0;
    snprintf(name, sizeof(name), "%s axis_only=%d fused = GPU Gather, Dirichlet, Compact (bitwise)", label0, axis_only);
    Check(bad == 0, name, (double)bad, 0);
    g_csr_entries += nnz;
    CHECK_CUDA(cudaFree(drow));
    CHECK_CUDA(cudaFree(dkeep));
    CHECK_CUDA(cudaFree(dout));
    CHECK_CUDA(cudaFree(dpipe));
  }
  CHECK_CUDA(cudaFree(dAe));
  CHECK_CUDA(cudaFree(dv));
  CHECK_CUDA(cudaFree(dx));
}

/* 3D and 2D, degrees 1..8 and 10 (quick: 3D k = 1 and 4, 2D k = 2 and 5), whole non-cubic grids,
   Dirichlet off and on, the vertex rule alternating with k and Dirichlet, alpha and beta random */
static void TestGatherCSR(bool quick)
{
  const int degrees[] = {1, 2, 3, 4, 5, 6, 7, 8, 10};

  for (int dim = 3; dim >= 2; dim--)
    for (int k : degrees) {
      if (quick && !(dim == 3 ? k == 1 || k == 4 : k == 2 || k == 5)) continue;
      std::vector<Geo> geos;
      if (dim == 3) {
        if (k <= 2) geos.push_back({"whole", {5, 4, 3}, {1, 1, 1}, {0, 0, 0}, 0});
        else if (k <= 5) geos.push_back({"whole", {3, 2, 2}, {1, 1, 1}, {0, 0, 0}, 0});
        else geos.push_back({"whole", {2, 2, 1}, {1, 1, 1}, {0, 0, 0}, 0});
        if (quick) geos[0] = {"whole", {k == 1 ? 3 : 2, 2, k == 1 ? 3 : 1}, {1, 1, 1}, {0, 0, 0}, 0};
        else if (k == 1) geos.push_back({"big", {24, 20, 17}, {1, 1, 1}, {0, 0, 0}, 0});
        else if (k == 2) geos.push_back({"big", {12, 10, 9}, {1, 1, 1}, {0, 0, 0}, 0});
      } else {
        geos.push_back({"whole", {k <= 5 ? 7 : 3, k <= 5 ? 5 : 2, 1}, {1, 1, 1}, {0, 0, 0}, 0});
        if (quick) geos[0] = {"whole", {3, 2, 1}, {1, 1, 1}, {0, 0, 0}, 0};
        else if (k <= 2) geos.push_back({"big", {160 / k, 130 / k, 1}, {1, 1, 1}, {0, 0, 0}, 0});
      }
      for (const Geo &G : geos)
        for (int dirichlet = 0; dirichlet <= 1; dirichlet++) {
          PatchworkLORDesc d;
          char             label[200];

          MakeDesc(dim, k, G, dirichlet, 0.05 + 2 * fabs(Rand()), 0.05 + 2 * fabs(Rand()), &d);
          d.vertex_rule = (k + dirichlet) & 1;
          snprintf(label, sizeof(label), "gather-csr %dD k=%-2d %s %dx%dx%d dirichlet=%d rule=%s", dim, k, G.name, G.cells[0], G.cells[1], dim == 3 ? G.cells[2] : 1, dirichlet, d.vertex_rule ? "vertex" : "gauss");
          GatherCSRCase(&d, label);
        }
    }
  printf("# gather-csr entries compared GPU vs reference: %lld\n", g_csr_entries);
}

/* Bad arguments: PatchworkLORGatherCSRCUDA returns cudaErrorInvalidValue (1) and writes nothing, for
   the descriptors PatchworkLORPatternCountCUDA refuses (NULL, a row box that is not the whole grid) and
   for those the gather cannot read through (bad dim or degree, nodes not k N + 1, cells beyond the
   grid), and for NULL rowptr or out */
static void TestGatherCSRErrors(void)
{
  const Geo        W = {"whole", {3, 2, 2}, {1, 1, 1}, {0, 0, 0}, 0}, P = {"sub", {4, 3, 3}, {3, 3, 3}, {1, 1, 1}, 0}, C = {"corner", {3, 2, 2}, {2, 1, 1}, {0, 0, 0}, 0};
  PatchworkLORDesc d, b;
  const int        NS = 64;
  double          *dv, sentinel[NS], back[NS];
  int             *drow;

  for (int i = 0; i < NS; i++) sentinel[i] = 7.0 + i;
  MakeDesc(3, 2, W, 1, 1.0, 1.0, &d);
  CHECK_CUDA(cudaMalloc((void **)&dv, NS * sizeof(double)));
  CHECK_CUDA(cudaMalloc((void **)&drow, (size_t)(PatchworkLORRowCount(&d) + 1) * sizeof(int)));
  CHECK_CUDA(cudaMemset(drow, 0, (size_t)(PatchworkLORRowCount(&d) + 1) * sizeof(int)));
  CHECK_CUDA(cudaMemcpy(dv, sentinel, sizeof(sentinel), cudaMemcpyHostToDevice));

  ReportRet(PatchworkLORGatherCSRCUDA(NULL, 0, dv, drow, dv, g_stream), cudaErrorInvalidValue, "gather-csr NULL descriptor");
  MakeDesc(3, 2, P, 1, 1.0, 1.0, &b);
  ReportRet(PatchworkLORGatherCSRCUDA(&b, 0, dv, drow, dv, g_stream), cudaErrorInvalidValue, "gather-csr row box inside the grid (a rank's part)");
  MakeDesc(3, 2, C, 0, 1.0, 1.0, &b);
  ReportRet(PatchworkLORGatherCSRCUDA(&b, 1, dv, drow, dv, g_stream), cudaErrorInvalidValue, "gather-csr row box at the grid's corner, not all of it");
  b             = d;
  b.row_size[2] = d.nodes[2] - 1;
  ReportRet(PatchworkLORGatherCSRCUDA(&b, 0, dv, drow, dv, g_stream), cudaErrorInvalidValue, "gather-csr row box one layer short");
  b              = d;
  b.row_start[0] = 1;
  ReportRet(PatchworkLORGatherCSRCUDA(&b, 0, dv, drow, dv, g_stream), cudaErrorInvalidValue, "gather-csr row box shifted");
  b     = d;
  b.dim = 4;
  ReportRet(PatchworkLORGatherCSRCUDA(&b, 0, dv, drow, dv, g_stream), cudaErrorInvalidValue, "gather-csr dim = 4");
  b     = d;
  b.dim = 2; /* nodes[2] != 1 */
  ReportRet(PatchworkLORGatherCSRCUDA(&b, 0, dv, drow, dv, g_stream), cudaErrorInvalidValue, "gather-csr 2D with nodes[2] != 1");
  b        = d;
  b.degree = 0;
  ReportRet(PatchworkLORGatherCSRCUDA(&b, 0, dv, drow, dv, g_stream), cudaErrorInvalidValue, "gather-csr degree 0");
  b        = d;
  b.degree = PW_MAX_DEGREE + 1;
  ReportRet(PatchworkLORGatherCSRCUDA(&b, 0, dv, drow, dv, g_stream), cudaErrorInvalidValue, "gather-csr degree 11");
  b             = d;
  b.nodes[1]    = d.nodes[1] + 1;
  b.row_size[1] = b.nodes[1];
  ReportRet(PatchworkLORGatherCSRCUDA(&b, 0, dv, drow, dv, g_stream), cudaErrorInvalidValue, "gather-csr nodes not k N + 1 (row box the whole grid)");
  b             = d;
  b.cell_end[0] = d.cell_end[0] + 1;
  ReportRet(PatchworkLORGatherCSRCUDA(&b, 0, dv, drow, dv, g_stream), cudaErrorInvalidValue, "gather-csr cell range beyond the grid");
  ReportRet(PatchworkLORGatherCSRCUDA(&d, 0, dv, NULL, dv, g_stream), cudaErrorInvalidValue, "gather-csr NULL rowptr");
  ReportRet(PatchworkLORGatherCSRCUDA(&d, 0, dv, drow, NULL, g_stream), cudaErrorInvalidValue, "gather-csr NULL out");
  /* the whole assembly from the coordinates refuses the same, and NULL coordinates */
  ReportRet(PatchworkLORMacroCSRCUDA(NULL, 0, dv, drow, dv, g_stream), cudaErrorInvalidValue, "macro-csr NULL descriptor");
  MakeDesc(3, 2, P, 1, 1.0, 1.0, &b);
  ReportRet(PatchworkLORMacroCSRCUDA(&b, 0, dv, drow, dv, g_stream), cudaErrorInvalidValue, "macro-csr row box inside the grid (a rank's part)");
  b             = d;
  b.cell_end[0] = d.cell_end[0] + 1;
  ReportRet(PatchworkLORMacroCSRCUDA(&b, 0, dv, drow, dv, g_stream), cudaErrorInvalidValue, "macro-csr cell range beyond the grid");
  b              = d;
  b.coord_size[0] = d.coord_size[0] - 1;
  ReportRet(PatchworkLORMacroCSRCUDA(&b, 0, dv, drow, dv, g_stream), cudaErrorInvalidValue, "macro-csr coordinate box misses cell nodes");
  b        = d;
  b.degree = PW_MAX_DEGREE + 1;
  ReportRet(PatchworkLORMacroCSRCUDA(&b, 0, dv, drow, dv, g_stream), cudaErrorInvalidValue, "macro-csr degree 11");
  ReportRet(PatchworkLORMacroCSRCUDA(&d, 0, NULL, drow, dv, g_stream), cudaErrorInvalidValue, "macro-csr NULL coordinates");
  ReportRet(PatchworkLORMacroCSRCUDA(&d, 0, dv, NULL, dv, g_stream), cudaErrorInvalidValue, "macro-csr NULL rowptr");
  ReportRet(PatchworkLORMacroCSRCUDA(&d, 0, dv, drow, NULL, g_stream), cudaErrorInvalidValue, "macro-csr NULL out");
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaMemcpy(back, dv, sizeof(back), cudaMemcpyDeviceToHost));
  Result(!memcmp(back, sentinel, sizeof(back)), "errors gather-csr and macro-csr: the refused calls wrote nothing");
  CHECK_CUDA(cudaFree(dv));
  CHECK_CUDA(cudaFree(drow));
}

/* The large case: entries whose bits differ, counted on the device; rowptr from long long to int */
__global__ void CountBitDiff(long long n, const double *a, const double *b, unsigned long long *count)
{
  unsigned long long c = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) c += __double_as_longlong(a[i]) != __double_as_longlong(b[i]);
  if (c) atomicAdd(count, c);
}

__global__ void RowptrToInt(long long n, const long long *in, int *out)
{
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) out[i] = (int)in[i];
}

/* One large 3D case (full run only): k = 4, 50^3 macro elements, 201^3 = 8.1M rows, Dirichlet, vertex
   rule, Ae from PatchworkLORMacroCUDA (the CPU would take long; every kernel below reads the same
   Ae), the pattern from PatchworkLORPattern{Count,Fill}CUDA. Per axis_only: the fused result equals
   the GPU pipeline's bitwise (a check), and a timing line, informational: the fused kernel against
   Gather + Dirichlet + Compact, the mean of REPS runs after one warm-up, in GDoF/s = rows / time. */
static void GatherCSRLarge(void)
{
  const Geo        G    = {"large", {50, 50, 50}, {1, 1, 1}, {0, 0, 0}, 0};
  const int        REPS = 5;
  PatchworkLORDesc d;
  char             name[320];

  MakeDesc(3, 4, G, 1, 1.0, 1.0, &d);
  d.vertex_rule = 1;
  const int    S = PatchworkLORSlots(&d), nloc = PatchworkLORMacroNodes(&d);
  const size_t nrow = (size_t)PatchworkLORRowCount(&d), nAe = (size_t)PatchworkLORMacroCount(&d) * nloc * S, nv = nrow * S;

  std::vector<double> coords;
  MakeCoords(&d, coords);
  double *dx = Upload(coords), *dAe = DeviceAlloc(nAe), *dv = DeviceAlloc(nv);
  std::vector<double>().swap(coords);
  CheckRet(PatchworkLORMacroCUDA(&d, dx, dAe, g_stream), "PatchworkLORMacroCUDA");
  CHECK_CUDA(cudaFree(dx));

  cudaEvent_t ev[5];
  for (cudaEvent_t &e : ev) CHECK_CUDA(cudaEventCreate(&e));
  for (int axis_only = 0; axis_only <= 1; axis_only++) {
    long long          *drow_ll, *dkeep, nnz = 0;
    int                *drow, *dcols;
    unsigned long long *dcount, bad = 0;

    CHECK_CUDA(cudaMalloc((void **)&drow_ll, (nrow + 1) * sizeof(long long)));
    CheckRet(PatchworkLORPatternCountCUDA(&d, axis_only, drow_ll, &nnz, g_stream), "PatchworkLORPatternCountCUDA");
    CHECK_CUDA(cudaMalloc((void **)&dkeep, nnz * sizeof(long long)));
    CHECK_CUDA(cudaMalloc((void **)&dcols, nnz * sizeof(int)));
    CHECK_CUDA(cudaMalloc((void **)&drow, (nrow + 1) * sizeof(int)));
    CHECK_CUDA(cudaMalloc((void **)&dcount, sizeof(unsigned long long)));
    CheckRet(PatchworkLORPatternFillCUDA(&d, axis_only, drow_ll, dcols, dkeep, g_stream), "PatchworkLORPatternFillCUDA");
    CHECK_CUDA(cudaFree(dcols));
    RowptrToInt<<<1024, 256, 0, g_stream>>>((long long)nrow + 1, drow_ll, drow);
    CHECK_CUDA(cudaGetLastError());
    double *dfused = DeviceAlloc(nnz), *dpipe = DeviceAlloc(nnz);
    FillNaN(dfused, nnz);
    FillNaN(dpipe, nnz);

    /* warm-up, then REPS of each: fused; gather, dirichlet, compact */
    float tf = 0, tg = 0, td = 0, tc = 0, ms;
    CheckRet(PatchworkLORGatherCSRCUDA(&d, axis_only, dAe, drow, dfused, g_stream), "PatchworkLORGatherCSRCUDA");
    CheckRet(PatchworkLORGatherCUDA(&d, dAe, dv, g_stream), "PatchworkLORGatherCUDA");
    CheckRet(PatchworkLORDirichletCUDA(&d, dv, g_stream), "PatchworkLORDirichletCUDA");
    CheckRet(PatchworkLORCompactCUDA((long)nnz, dkeep, dv, dpipe, g_stream), "PatchworkLORCompactCUDA");
    CHECK_CUDA(cudaMemsetAsync(dcount, 0, sizeof(unsigned long long), g_stream));
    CountBitDiff<<<1024, 256, 0, g_stream>>>(nnz, dfused, dpipe, dcount);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaMemcpyAsync(&bad, dcount, sizeof(bad), cudaMemcpyDeviceToHost, g_stream));
    CHECK_CUDA(cudaStreamSynchronize(g_stream));
    for (int r = 0; r < REPS; r++) {
      CHECK_CUDA(cudaEventRecord(ev[0], g_stream));
      CheckRet(PatchworkLORGatherCSRCUDA(&d, axis_only, dAe, drow, dfused, g_stream), "PatchworkLORGatherCSRCUDA");
      CHECK_CUDA(cudaEventRecord(ev[1], g_stream));
      CheckRet(PatchworkLORGatherCUDA(&d, dAe, dv, g_stream), "PatchworkLORGatherCUDA");
      CHECK_CUDA(cudaEventRecord(ev[2], g_stream));
      CheckRet(PatchworkLORDirichletCUDA(&d, dv, g_stream), "PatchworkLORDirichletCUDA");
      CHECK_CUDA(cudaEventRecord(ev[3], g_stream));
      CheckRet(PatchworkLORCompactCUDA((long)nnz, dkeep, dv, dpipe, g_stream), "PatchworkLORCompactCUDA");
      CHECK_CUDA(cudaEventRecord(ev[4], g_stream));
      CHECK_CUDA(cudaEventSynchronize(ev[4]));
      CHECK_CUDA(cudaEventElapsedTime(&ms, ev[0], ev[1]));
      tf += ms / REPS;
      CHECK_CUDA(cudaEventElapsedTime(&ms, ev[1], ev[2]));
      tg += ms / REPS;
      CHECK_CUDA(cudaEventElapsedTime(&ms, ev[2], ev[3]));
      td += ms / REPS;
      CHECK_CUDA(cudaEventElapsedTime(&ms, ev[3], ev[4]));
      tc += ms / REPS;
    }
    snprintf(name, sizeof(name), "gather-csr 3D k=4 large 50x50x50 (%zu rows, %lld entries) dirichlet=1 rule=vertex axis_only=%d fused = GPU Gather, Dirichlet, Compact (bitwise)", nrow, nnz, axis_only);
    Check(bad == 0, name, (double)bad, 0);
    const double tp = (double)tg + td + tc;
    printf("# gather-csr timing 3D k=4 %zu rows axis_only=%d: fused %.3f ms (%.2f GDoF/s); Gather + Dirichlet + Compact %.3f ms (%.2f GDoF/s; %.3f + %.3f + %.3f ms); fused %.2fx\n", nrow, axis_only, tf, nrow / (tf * 1e6), tp, nrow / (tp * 1e6), tg, td, tc, tp / tf);
    CHECK_CUDA(cudaFree(drow_ll));
    CHECK_CUDA(cudaFree(drow));
    CHECK_CUDA(cudaFree(dkeep));
    CHECK_CUDA(cudaFree(dcount));
    CHECK_CUDA(cudaFree(dfused));
    CHECK_CUDA(cudaFree(dpipe));
  }
  for (cudaEvent_t &e : ev) CHECK_CUDA(cudaEventDestroy(e));
  CHECK_CUDA(cudaFree(dAe));
  CHECK_CUDA(cudaFree(dv));
}

/* max |a - b| and max |b| over n entries (NaN if one is), as the bits of non-negative doubles: a NaN's
   bits, read as an unsigned integer, are above those of every other non-negative double, so that
   atomicMax keeps it */
__global__ void MaxAbsDiff(long long n, const double *a, const double *b, unsigned long long *out)
{
  double e = 0, m = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    const double t = fabs(a[i] - b[i]);
    e              = ErrMax(e, t);
    m              = ErrMax(m, fabs(b[i]));
  }
  atomicMax(&out[0], (unsigned long long)__double_as_longlong(e));
  atomicMax(&out[1], (unsigned long long)__double_as_longlong(m));
}

/* Large 3D cases of the whole assembly from the coordinates (full run only): k = 2, 4, 8 at about 8M
   rows, Dirichlet, distorted nodes; the vertex rule with axis_only 0 and 1, the Gauss rule with 0.
   PatchworkLORMacroCSRCUDA against PatchworkLORMacroCUDA + PatchworkLORGatherCSRCUDA (the route it
   replaces): max difference relative to max |Ae| within the pipeline's tolerance (a check), and a
   timing line (informational: means of REPS runs after a warm-up, GDoF/s = rows / time). */
static void MacroCSRLarge(void)
{
  const int REPS = 5;
  char      name[320];

  for (int k : {2, 4, 8})
    for (int rule = 1; rule >= 0; rule--)
      for (int axis_only = 0; axis_only <= rule; axis_only++) {
        const int        N = 200 / k;
        const Geo        G = {"large", {N, N, N}, {1, 1, 1}, {0, 0, 0}, 0};
        PatchworkLORDesc d;

        MakeDesc(3, k, G, 1, 1.0, 1.0, &d);
        d.vertex_rule = rule;
        const int    S = PatchworkLORSlots(&d), nloc = PatchworkLORMacroNodes(&d);
        const size_t nrow = (size_t)PatchworkLORRowCount(&d), nAe = (size_t)PatchworkLORMacroCount(&d) * nloc * S;

        std::vector<double> coords;
        const double        R = MakeCoords(&d, coords), tol = 8 * DBL_EPSILON * (2 * R + 64);
        double             *dx = Upload(coords), *dAe = DeviceAlloc(nAe);
        std::vector<double>().swap(coords);
        long long          *drow_ll, nnz = 0;
        int                *drow;
        unsigned long long *dmax, hmax[2] = {0, 0};

        CHECK_CUDA(cudaMalloc((void **)&drow_ll, (nrow + 1) * sizeof(long long)));
        CHECK_CUDA(cudaMalloc((void **)&drow, (nrow + 1) * sizeof(int)));
        CHECK_CUDA(cudaMalloc((void **)&dmax, 2 * sizeof(unsigned long long)));
        CheckRet(PatchworkLORPatternCountCUDA(&d, axis_only, drow_ll, &nnz, g_stream), "PatchworkLORPatternCountCUDA");
        RowptrToInt<<<1024, 256, 0, g_stream>>>((long long)nrow + 1, drow_ll, drow);
        CHECK_CUDA(cudaGetLastError());
        double *dfused = DeviceAlloc(nnz), *dpipe = DeviceAlloc(nnz);
        auto    pipe  = [&] {
          CheckRet(PatchworkLORMacroCUDA(&d, dx, dAe, g_stream), "PatchworkLORMacroCUDA");
          CheckRet(PatchworkLORGatherCSRCUDA(&d, axis_only, dAe, drow, dpipe, g_stream), "PatchworkLORGatherCSRCUDA");
        };
        auto fused = [&] { CheckRet(PatchworkLORMacroCSRCUDA(&d, axis_only, dx, drow, dfused, g_stream), "PatchworkLORMacroCSRCUDA"); };
        /* the mean of REPS runs after a warm-up, ms */
        auto time = [&](auto f) {
          cudaEvent_t a, b;
          float       ms = 0;
          CHECK_CUDA(cudaEventCreate(&a));
          CHECK_CUDA(cudaEventCreate(&b));
          f();
          CHECK_CUDA(cudaEventRecord(a, g_stream));
          for (int r = 0; r < REPS; r++) f();
          CHECK_CUDA(cudaEventRecord(b, g_stream));
          CHECK_CUDA(cudaEventSynchronize(b));
          CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
          CHECK_CUDA(cudaEventDestroy(a));
          CHECK_CUDA(cudaEventDestroy(b));
          return (double)ms / REPS;
        };
        FillNaN(dfused, nnz);
        const double tp = time(pipe), tf = time(fused);
        CHECK_CUDA(cudaMemsetAsync(dmax, 0, 2 * sizeof(unsigned long long), g_stream));
        MaxAbsDiff<<<1024, 256, 0, g_stream>>>(nnz, dfused, dpipe, dmax);
        CHECK_CUDA(cudaGetLastError());
        CHECK_CUDA(cudaMemcpyAsync(hmax, dmax, sizeof(hmax), cudaMemcpyDeviceToHost, g_stream));
        CHECK_CUDA(cudaStreamSynchronize(g_stream));
        double err, big;
        memcpy(&err, &hmax[0], sizeof(double));
        memcpy(&big, &hmax[1], sizeof(double));
        /* max |Ae| <= max |assembled| (a diagonal entry sums positive ones): relative to the latter */
        snprintf(name, sizeof(name), "macro-csr 3D k=%d large %dx%dx%d (%zu rows, %lld entries) dirichlet=1 rule=%s axis_only=%d = Macro + GatherCSR", k, N, N, N, nrow, nnz, rule ? "vertex" : "gauss", axis_only);
        Check(err <= tol * big, name, err / ErrMax(big, DBL_MIN), tol);
        printf("# macro-csr timing 3D k=%d %zu rows rule=%s axis_only=%d: fused %.3f ms (%.2f GDoF/s); Macro + GatherCSR %.3f ms (%.2f GDoF/s); fused %.2fx\n", k, nrow, rule ? "vertex" : "gauss", axis_only, tf, nrow / (tf * 1e6), tp, nrow / (tp * 1e6), tp / tf);
        fflush(stdout);
        CHECK_CUDA(cudaFree(drow_ll));
        CHECK_CUDA(cudaFree(drow));
        CHECK_CUDA(cudaFree(dmax));
        CHECK_CUDA(cudaFree(dfused));
        CHECK_CUDA(cudaFree(dpipe));
        CHECK_CUDA(cudaFree(dAe));
        CHECK_CUDA(cudaFree(dx));
      }
}

int main(int argc, char **argv)
{
  bool      quick;
  const int start = GpuTestStart(argc, argv, &quick);

  if (start >= 0) return start;
  TestErrors();
  TestGatherCSRErrors();
  { /* the pattern on small whole grids (also under --quick, for compute-sanitizer) */
    const Geo G3 = {"whole", {3, 2, 2}, {1, 1, 1}, {0, 0, 0}, 0}, G2 = {"whole", {4, 3, 1}, {1, 1, 1}, {0, 0, 0}, 0};
    for (int dirichlet = 0; dirichlet <= 1; dirichlet++)
      for (int axis_only = 0; axis_only <= 1; axis_only++) {
        PatchworkLORDesc d;
        char             label[64];

        MakeDesc(3, 3, G3, dirichlet, 1.0, 1.0, &d);
        snprintf(label, sizeof(label), "3D k=3 whole dirichlet=%d", dirichlet);
        TestPattern(&d, axis_only, label);
        MakeDesc(2, 2, G2, dirichlet, 1.0, 1.0, &d);
        snprintf(label, sizeof(label), "2D k=2 whole dirichlet=%d", dirichlet);
        TestPattern(&d, axis_only, label);
      }
  }
  const int degrees[] = {1, 2, 3, 4, 5, 6, 7, 8, 10};
  for (int dim = 3; dim >= 2; dim--) {
    for (int k : degrees) {
      std::vector<Geo> geos;
      if (dim == 3) {
        const int m = k <= 3 ? 6 : k <= 8 ? 4 : 3; /* cells per direction of the sub-range grids */
        if (quick) geos.push_back({"mid", {m - 1, m, m - 1}, {3, 3, 3}, {1, 1, 1}, 0});
        else {
          if (k <= 2) geos.push_back({"full", {5, 4, 3}, {1, 1, 1}, {0, 0, 0}, 0});
          else if (k <= 5) geos.push_back({"full", {3, 2, 2}, {1, 1, 1}, {0, 0, 0}, 0});
          else geos.push_back({"full", {2, 2, 1}, {1, 1, 1}, {0, 0, 0}, 0});
          geos.push_back({"mid", {m, m - 1, m}, {3, 3, 3}, {1, 1, 1}, 0});
          geos.push_back({"corner", {m, m, m - 1}, {2, 3, 2}, {0, 2, 1}, 0});
          geos.push_back({"allcell", {m - 1, m, m}, {3, 2, 3}, {1, 1, 2}, 1});
          if (k == 1) geos.push_back({"big", {24, 20, 17}, {1, 1, 1}, {0, 0, 0}, 0});
          if (k == 2) geos.push_back({"big", {12, 10, 9}, {1, 1, 1}, {0, 0, 0}, 0});
        }
      } else {
        const int m = k <= 5 ? 9 : 5;
        if (quick) geos.push_back({"mid", {m, m - 1, 1}, {3, 3, 1}, {1, 1, 0}, 0});
        else {
          geos.push_back({"full", {k <= 5 ? 7 : 3, k <= 5 ? 5 : 2, 1}, {1, 1, 1}, {0, 0, 0}, 0});
          geos.push_back({"mid", {m, m - 1, 1}, {3, 3, 1}, {1, 1, 0}, 0});
          geos.push_back({"corner", {m - 1, m, 1}, {2, 3, 1}, {1, 0, 0}, 0});
          geos.push_back({"allcell", {m, m, 1}, {3, 2, 1}, {2, 1, 0}, 1});
          if (k <= 2) geos.push_back({"big", {160 / k, 130 / k, 1}, {1, 1, 1}, {0, 0, 0}, 0});
        }
      }
      for (const Geo &G : geos) {
        /* runs: {dirichlet, alpha = 0 (the stiffness alone)}; alpha random otherwise */
        static const int full_runs[3][2] = {{0, 1}, {0, 0}, {1, 0}}, quick_runs[2][2] = {{1, 0}, {0, 1}};
        const int        nruns = quick ? 2 : 3;
        for (int run = 0; run < nruns; run++) {
          const int *const R    = quick ? quick_runs[run] : full_runs[run];
          const double     alpha = R[1] ? 0.0 : 1.0 + Rand(), beta = 1.05 + Rand();
          PatchworkLORDesc d;
          char             label[160];

          MakeDesc(dim, k, G, R[0], alpha, beta, &d);
          d.vertex_rule = run % 2; /* both rules of the sub-elements: vertices and Gauss points */
          snprintf(label, sizeof(label), "%dD k=%-2d %-7s dirichlet=%d alpha=%.2f beta=%.2f rule=%s", dim, k, G.name, d.dirichlet, d.alpha, d.beta, d.vertex_rule ? "vertex" : "gauss");
          RunCase(&d, label);
          if (G.P[0] * G.P[1] * G.P[2] == 1 && !G.all_cells)
            for (int axis_only = 0; axis_only <= 1; axis_only++) TestPattern(&d, axis_only, label);
        }
      }
    }
  }
  TestPlexEmpty();
  TestPlex(quick);
  TestGatherCSR(quick);
  if (!quick) GatherCSRLarge();
  if (!quick) MacroCSRLarge();
  CHECK_CUDA(cudaStreamDestroy(g_stream));
  CHECK_CUDA(cudaDeviceSynchronize());
  /* one line, last: the scripts take it as the summary */
  printf("# %d passed, %d failed; worst err/tol %.3f (%s)\n", g_pass, g_fail, g_worst, g_worst_name);
  return g_fail ? 1 : 0;
}
