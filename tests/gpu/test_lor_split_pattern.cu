/* GPU-vs-CPU test of the split LOR pattern of one rank's rows (include/patchwork/lor_kernel.h),
   PETSc-free: PatchworkLORSplitPattern{Count,Fill}CUDA (cuda/lor_assemble.cu) against
   PatchworkLORSplitPattern{Count,Fill}Ref (src/core/lor_ref.c), exactly. The reference itself is
   checked against a brute force by tests/unit/test_lor_split_pattern.c, on the same cases
   (tests/unit/lor_split_cases.h): 2D and 3D, degrees 1..4, grids from 2x2(x2) to 28x22 and 13x11x15
   nodes, each split into P = 1, 2, 3, 4 row boxes as a DMDA splits it among ranks (along x, y, z or two
   directions; balanced, growing or shrinking ranges), the coordinate box the row box grown by one node
   layer (clipped), l2g the DMDA-like global numbering (box r owns [rstart, rend)), Dirichlet off and
   on, axis_only 0 and 1. Per case (all P boxes):
     split      Count returns 0 like the reference, *nd and *no (back on the host) = the reference's
                dptr[nrow] and optr[nrow]; the device's dptr, optr (Count), dcol, ocol, keep (Fill) =
                the reference's entry by entry. Every device array is filled beforehand with a
                sentinel fresh per case (negative: never a valid entry) and has GUARD entries on each
                side: the kernels write exactly dptr/optr[0..nrow], dcol[0..nd), ocol[0..no),
                keep[0..nd+no).
   Per partition: Count returns cudaErrorInvalidValue where the reference returns 1 (rstart + 1, two
   owned nodes' l2g entries swapped; the reference checked to return 1 there too).
   Large (full run only): 3D k = 2 on 201x101x201 nodes split 2x1x2, boxes 0 and 3 (about 1.0e6 rows
   each, off-diagonal columns on different sides), axis_only 1 (Dirichlet on) and 0 (Dirichlet off):
   the same comparison, and a timing line each (informational).
   Errors: NULL nd or no, NULL descriptor, dim 4, a row box beyond the grid: cudaErrorInvalidValue;
   an empty row box: Count 0, *nd = *no = 0, dptr[0] = optr[0] = 0, Fill 0, nothing else written;
   and last (a kernel launched on it would write far out of its arrays), a row box whose entries do
   not fit int (1001^3 rows with axis_only): cudaErrorInvalidValue.
   Prints one line per check, `ok ...` or `FAIL ...`, and `# N passed, M failed` last; exits 0 when all
   pass, 1 otherwise, 77 without a CUDA device.

   Usage: test_lor_split_pattern [--quick]   (--quick: two grids per dimension, 2D 8x6 and 9x7 nodes,
   3D 5x7x5 and 6x5x4, balanced splits only, (dirichlet, axis_only) = (0, 0) and (1, 1), no large
   case; for compute-sanitizer) */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>
#include <patchwork/lor_kernel.h>

#include "gputest.h"
#include "../unit/lor_split_cases.h"

#define GUARD 8

/* A fresh negative sentinel per case */
static long long Sentinel(void)
{
  return -2 - (long long)((Rand() + 1.0) * 1.0e9);
}

template <typename T>
static T *GuardedUpload(long long n, T v)
{
  return Upload(std::vector<T>((size_t)n + 2 * GUARD, v));
}

template <typename T>
static std::vector<T> Download(const T *d, long long n)
{
  std::vector<T> h((size_t)n);
  if (n > 0) CHECK_CUDA(cudaMemcpyAsync(h.data(), d, (size_t)n * sizeof(T), cudaMemcpyDeviceToHost, g_stream));
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  return h;
}

/* guard entries (GUARD on each side of n) not equal to v */
template <typename T>
static long GuardsTouched(const std::vector<T> &h, long long n, T v)
{
  long bad = 0;

  for (int i = 0; i < GUARD; i++) bad += (h[i] != v) + (h[GUARD + n + i] != v);
  return bad;
}

/* The reference's split of one box */
struct Split {
  int                    ret;
  std::vector<int>       dptr, optr, dcol;
  std::vector<long long> ocol, keep;
};

static Split Reference(const PatchworkLORDesc *d, int axis_only, const std::vector<long long> &l2g, long long rstart, long long rend)
{
  const long nrow = PatchworkLORRowCount(d);
  Split      r;

  r.dptr.assign(nrow + 1, 0);
  r.optr.assign(nrow + 1, 0);
  r.ret = PatchworkLORSplitPatternCountRef(d, axis_only, l2g.data(), rstart, rend, r.dptr.data(), r.optr.data());
  if (r.ret) return r;
  r.dcol.assign(std::max(r.dptr[nrow], 1), 0);
  r.ocol.assign(std::max(r.optr[nrow], 1), 0);
  r.keep.assign(std::max(r.dptr[nrow] + r.optr[nrow], 1), 0);
  PatchworkLORSplitPatternFillRef(d, axis_only, l2g.data(), rstart, rend, r.dptr.data(), r.optr.data(), r.dcol.data(), r.ocol.data(), r.keep.data());
  r.dcol.resize(r.dptr[nrow]);
  r.ocol.resize(r.optr[nrow]);
  r.keep.resize(r.dptr[nrow] + r.optr[nrow]);
  return r;
}

/* Tallies of one comparison (over the boxes of a case) */
struct Tally {
  long      ret = 0, counts = 0, ptr = 0, entries = 0, guards = 0, unfilled = 0;
  long long nd = 0, no = 0;
  double    count_ms = 0, fill_ms = 0;
  long      bad() const { return ret + counts + ptr + entries + guards + unfilled; }
};

/* GPU Count and Fill of one box against the reference's result */
static void CompareBox(const PatchworkLORDesc *d, int axis_only, const std::vector<long long> &l2g, long long rstart, long long rend, Tally *t)
{
  const long      nrow = PatchworkLORRowCount(d);
  const Split     ref  = Reference(d, axis_only, l2g, rstart, rend);
  const long long sent = Sentinel();
  const int       isent = (int)sent;
  long long      *dl2g  = Upload(l2g);
  int            *dptr = GuardedUpload<int>(nrow + 1, isent), *optr = GuardedUpload<int>(nrow + 1, isent);
  int             nd = -1, no = -1, ret;
  cudaEvent_t     e0, e1, e2, e3;
  float           ms;

  if (ref.ret) { /* every case numbers its rows right: the reference must accept it */
    printf("FAIL the reference refused a case (Count returned %d)\n", ref.ret);
    t->ret++;
  }
  CHECK_CUDA(cudaEventCreate(&e0));
  CHECK_CUDA(cudaEventCreate(&e1));
  CHECK_CUDA(cudaEventCreate(&e2));
  CHECK_CUDA(cudaEventCreate(&e3));
  CHECK_CUDA(cudaEventRecord(e0, g_stream));
  ret = PatchworkLORSplitPatternCountCUDA(d, axis_only, dl2g, rstart, rend, dptr + GUARD, optr + GUARD, &nd, &no, g_stream);
  CHECK_CUDA(cudaEventRecord(e1, g_stream));
  t->ret += ret != 0;
  if (!ref.ret) {
    const std::vector<int> hd = Download(dptr, nrow + 1 + 2 * GUARD), ho = Download(optr, nrow + 1 + 2 * GUARD);

    t->counts += (nd != ref.dptr[nrow]) + (no != ref.optr[nrow]);
    t->guards += GuardsTouched(hd, nrow + 1, isent) + GuardsTouched(ho, nrow + 1, isent);
    for (long i = 0; i <= nrow; i++) t->ptr += (hd[GUARD + i] != ref.dptr[i]) + (ho[GUARD + i] != ref.optr[i]);
    t->nd += ref.dptr[nrow];
    t->no += ref.optr[nrow];
  }
  if (!ret && !ref.ret && nd == ref.dptr[nrow] && no == ref.optr[nrow]) {
    int       *dcol = GuardedUpload<int>(nd, isent);
    long long *ocol = GuardedUpload<long long>(no, sent), *keep = GuardedUpload<long long>((long long)nd + no, sent);

    CHECK_CUDA(cudaEventRecord(e2, g_stream));
    ret = PatchworkLORSplitPatternFillCUDA(d, axis_only, dl2g, rstart, rend, dptr + GUARD, optr + GUARD, dcol + GUARD, ocol + GUARD, keep + GUARD, g_stream);
    CHECK_CUDA(cudaEventRecord(e3, g_stream));
    t->ret += ret != 0;
    {
      const std::vector<int>       hc = Download(dcol, nd + 2 * GUARD);
      const std::vector<long long> hoc = Download(ocol, no + 2 * GUARD), hk = Download(keep, (long long)nd + no + 2 * GUARD);

      t->guards += GuardsTouched(hc, nd, isent) + GuardsTouched(hoc, no, sent) + GuardsTouched(hk, (long long)nd + no, sent);
      for (int i = 0; i < nd; i++) t->entries += hc[GUARD + i] != ref.dcol[i];
      for (int i = 0; i < no; i++) t->entries += hoc[GUARD + i] != ref.ocol[i];
      for (long long i = 0; i < (long long)nd + no; i++) t->entries += hk[GUARD + i] != ref.keep[i];
    }
    CHECK_CUDA(cudaEventElapsedTime(&ms, e2, e3));
    t->fill_ms += ms;
    CHECK_CUDA(cudaFree(dcol));
    CHECK_CUDA(cudaFree(ocol));
    CHECK_CUDA(cudaFree(keep));
  } else t->unfilled++;
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
  t->count_ms += ms;
  CHECK_CUDA(cudaEventDestroy(e0));
  CHECK_CUDA(cudaEventDestroy(e1));
  CHECK_CUDA(cudaEventDestroy(e2));
  CHECK_CUDA(cudaEventDestroy(e3));
  CHECK_CUDA(cudaFree(dl2g));
  CHECK_CUDA(cudaFree(dptr));
  CHECK_CUDA(cudaFree(optr));
}

static std::vector<long long> L2G(const SplitPartition *s, const PatchworkLORDesc *d)
{
  std::vector<long long> l2g((size_t)SplitCoordCount(d));
  SplitL2G(s, d, l2g.data());
  return l2g;
}

static void SplitCase(const SplitPartition *s, int dirichlet, int axis_only, const char *label)
{
  Tally t;

  for (int r = 0; r < s->P; r++) {
    PatchworkLORDesc d;

    SplitBoxDesc(s, r, dirichlet, &d);
    CompareBox(&d, axis_only, L2G(s, &d), s->rstart[r], s->rstart[r + 1], &t);
  }
  Result(t.bad() == 0, "%s dirichlet=%d axis_only=%d: GPU = reference: returns, nd/no, dptr, optr, dcol, ocol, keep (%lld + %lld entries; %ld returns != 0, %ld nd/no, %ld row starts, %ld entries wrong, %ld guard entries touched, %ld boxes not filled)", label, dirichlet, axis_only, t.nd, t.no, t.ret, t.counts, t.ptr, t.entries, t.guards, t.unfilled);
}

/* Count's refusal of numberings that the reference refuses */
static void SplitErrors(const SplitPartition *s, const char *label)
{
  long wrong = 0, tried = 0;

  for (int r = 0; r < s->P; r++) {
    PatchworkLORDesc d;
    const int        dirichlet = r & 1, axis_only = (r >> 1) & 1;

    SplitBoxDesc(s, r, dirichlet, &d);
    const long             nrow = PatchworkLORRowCount(&d);
    const long long        rstart = s->rstart[r], rend = s->rstart[r + 1];
    std::vector<long long> l2g = L2G(s, &d);
    std::vector<int>       hp(nrow + 1);
    int                   *dp, *op, nd, no;

    CHECK_CUDA(cudaMalloc((void **)&dp, (nrow + 1) * sizeof(int)));
    CHECK_CUDA(cudaMalloc((void **)&op, (nrow + 1) * sizeof(int)));
    {
      long long *dl2g = Upload(l2g);
      wrong += PatchworkLORSplitPatternCountRef(&d, axis_only, l2g.data(), rstart + 1, rend + 1, hp.data(), hp.data()) != 1;
      wrong += PatchworkLORSplitPatternCountCUDA(&d, axis_only, dl2g, rstart + 1, rend + 1, dp, op, &nd, &no, g_stream) != cudaErrorInvalidValue;
      tried += 2;
      CHECK_CUDA(cudaFree(dl2g));
    }
    if (nrow >= 2) { /* the first and the last owned node swapped */
      int g0[3], g1[3];

      PatchworkLORRowNode(&d, 0, g0);
      PatchworkLORRowNode(&d, nrow - 1, g1);
      std::swap(l2g[SplitCoordIndex(&d, g0)], l2g[SplitCoordIndex(&d, g1)]);
      long long *dl2g = Upload(l2g);
      wrong += PatchworkLORSplitPatternCountRef(&d, axis_only, l2g.data(), rstart, rend, hp.data(), hp.data()) != 1;
      wrong += PatchworkLORSplitPatternCountCUDA(&d, axis_only, dl2g, rstart, rend, dp, op, &nd, &no, g_stream) != cudaErrorInvalidValue;
      tried += 2;
      CHECK_CUDA(cudaFree(dl2g));
    }
    CHECK_CUDA(cudaFree(dp));
    CHECK_CUDA(cudaFree(op));
  }
  Result(wrong == 0, "%s: bad numbering (rstart + 1, owned nodes swapped): reference 1, GPU cudaErrorInvalidValue (%ld of %ld calls wrong)", label, wrong, tried);
}

static void Errors(void)
{
  const int        N[3] = {3, 2, 2}, p[3] = {2, 1, 1};
  SplitPartition   s;
  PatchworkLORDesc d, b;
  int              nd, no;

  SplitPartitionMake(3, 2, N, p, 0, &s);
  SplitBoxDesc(&s, 1, 1, &d);
  const long             nrow = PatchworkLORRowCount(&d);
  std::vector<long long> l2g  = L2G(&s, &d);
  long long             *dl2g = Upload(l2g), *dll;
  int                   *dp, *op;

  CHECK_CUDA(cudaMalloc((void **)&dp, (nrow + 1) * sizeof(int)));
  CHECK_CUDA(cudaMalloc((void **)&op, (nrow + 1) * sizeof(int)));
  CHECK_CUDA(cudaMalloc((void **)&dll, 27 * (nrow + 1) * sizeof(long long)));
  ReportRet(PatchworkLORSplitPatternCountCUDA(&d, 0, dl2g, s.rstart[1], s.rstart[2], dp, op, NULL, &no, g_stream), cudaErrorInvalidValue, "split count with nd NULL");
  ReportRet(PatchworkLORSplitPatternCountCUDA(&d, 0, dl2g, s.rstart[1], s.rstart[2], dp, op, &nd, NULL, g_stream), cudaErrorInvalidValue, "split count with no NULL");
  ReportRet(PatchworkLORSplitPatternCountCUDA(NULL, 0, dl2g, s.rstart[1], s.rstart[2], dp, op, &nd, &no, g_stream), cudaErrorInvalidValue, "split count NULL descriptor");
  ReportRet(PatchworkLORSplitPatternFillCUDA(NULL, 0, dl2g, s.rstart[1], s.rstart[2], dp, op, (int *)dll, dll, dll, g_stream), cudaErrorInvalidValue, "split fill NULL descriptor");
  b     = d;
  b.dim = 4;
  ReportRet(PatchworkLORSplitPatternCountCUDA(&b, 0, dl2g, s.rstart[1], s.rstart[2], dp, op, &nd, &no, g_stream), cudaErrorInvalidValue, "split count dim = 4");
  ReportRet(PatchworkLORSplitPatternFillCUDA(&b, 0, dl2g, s.rstart[1], s.rstart[2], dp, op, (int *)dll, dll, dll, g_stream), cudaErrorInvalidValue, "split fill dim = 4");
  b             = d;
  b.row_size[0] = d.nodes[0] - d.row_start[0] + 1;
  ReportRet(PatchworkLORSplitPatternCountCUDA(&b, 0, dl2g, s.rstart[1], s.rstart[2], dp, op, &nd, &no, g_stream), cudaErrorInvalidValue, "split count row box beyond the grid");
  ReportRet(PatchworkLORSplitPatternFillCUDA(&b, 0, dl2g, s.rstart[1], s.rstart[2], dp, op, (int *)dll, dll, dll, g_stream), cudaErrorInvalidValue, "split fill row box beyond the grid");

  /* an empty row box: Count 0 with nd = no = 0, dptr[0] = optr[0] = 0; nothing else written */
  for (int axis_only = 0; axis_only <= 1; axis_only++) {
    const long long sent = Sentinel();
    const int       isent = (int)sent;
    int            *gdp = GuardedUpload<int>(1, isent), *gop = GuardedUpload<int>(1, isent), *gdc = GuardedUpload<int>(0, isent);
    long long      *goc = GuardedUpload<long long>(0, sent), *gk = GuardedUpload<long long>(0, sent);
    int             rc, rf;
    long            touched;

    b             = d;
    b.row_size[1] = 0;
    nd = no = -1;
    rc      = PatchworkLORSplitPatternCountCUDA(&b, axis_only, dl2g, s.rstart[1], s.rstart[1], gdp + GUARD, gop + GUARD, &nd, &no, g_stream);
    rf      = PatchworkLORSplitPatternFillCUDA(&b, axis_only, dl2g, s.rstart[1], s.rstart[1], gdp + GUARD, gop + GUARD, gdc + GUARD, goc + GUARD, gk + GUARD, g_stream);
    const std::vector<int>       hdp = Download(gdp, 1 + 2 * GUARD), hop = Download(gop, 1 + 2 * GUARD), hdc = Download(gdc, 2 * GUARD);
    const std::vector<long long> hoc = Download(goc, 2 * GUARD), hk = Download(gk, 2 * GUARD);
    touched = GuardsTouched(hdp, 1, isent) + GuardsTouched(hop, 1, isent) + GuardsTouched(hdc, 0, isent) + GuardsTouched(hoc, 0LL, sent) + GuardsTouched(hk, 0LL, sent);
    Result(!rc && !rf && nd == 0 && no == 0 && hdp[GUARD] == 0 && hop[GUARD] == 0 && !touched, "empty row box axis_only=%d: Count %d, Fill %d, nd %d, no %d, dptr[0] %d, optr[0] %d, %ld other entries touched", axis_only, rc, rf, nd, no, hdp[GUARD], hop[GUARD], touched);
    CHECK_CUDA(cudaFree(gdp));
    CHECK_CUDA(cudaFree(gop));
    CHECK_CUDA(cudaFree(gdc));
    CHECK_CUDA(cudaFree(goc));
    CHECK_CUDA(cudaFree(gk));
  }
  CHECK_CUDA(cudaFree(dl2g));
  CHECK_CUDA(cudaFree(dll));
  CHECK_CUDA(cudaFree(dp));
  CHECK_CUDA(cudaFree(op));
}

/* Entries beyond int: refused before any launch (last: one that launched would corrupt the context) */
static void Overflow(void)
{
  const int        N[3] = {1000, 1000, 1000}, p[3] = {1, 1, 1};
  SplitPartition   s;
  PatchworkLORDesc d;
  int             *dp, nd = -1, no = -1;
  long long       *dll;

  SplitPartitionMake(3, 1, N, p, 0, &s);
  SplitWholeDesc(&s, 0, &d);
  CHECK_CUDA(cudaMalloc((void **)&dp, 2 * sizeof(int)));
  CHECK_CUDA(cudaMalloc((void **)&dll, sizeof(long long)));
  ReportRet(PatchworkLORSplitPatternCountCUDA(&d, 1, dll, 0, (long long)PatchworkLORRowCount(&d), dp, dp + 1, &nd, &no, g_stream), cudaErrorInvalidValue, "split count of 1001^3 rows x 7 slots (beyond int)");
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  CHECK_CUDA(cudaFree(dp));
  CHECK_CUDA(cudaFree(dll));
}

/* About 1.0e6 rows: boxes 0 and 3 of 201x101x201 nodes split 2x1x2 */
static void Large(void)
{
  const int      N[3] = {100, 50, 100}, p[3] = {2, 1, 2};
  SplitPartition s;

  SplitPartitionMake(3, 2, N, p, 0, &s);
  for (int axis_only = 1; axis_only >= 0; axis_only--)
    for (int r = 0; r < 4; r += 3) {
      PatchworkLORDesc d;
      Tally            t;
      const int        dirichlet = axis_only;

      SplitBoxDesc(&s, r, dirichlet, &d);
      const long nrow = PatchworkLORRowCount(&d);
      CompareBox(&d, axis_only, L2G(&s, &d), s.rstart[r], s.rstart[r + 1], &t);
      Result(t.bad() == 0, "large 3D k=2 %dx%dx%d nodes, box %d of 2x1x2 (%ld rows) dirichlet=%d axis_only=%d: GPU = reference (%lld + %lld entries; %ld returns != 0, %ld nd/no, %ld row starts, %ld entries wrong, %ld guard entries touched, %ld boxes not filled)", s.nodes[0], s.nodes[1], s.nodes[2], r, nrow, dirichlet, axis_only, t.nd, t.no, t.ret, t.counts, t.ptr, t.entries, t.guards, t.unfilled);
      printf("# split pattern timing %ld rows axis_only=%d: Count %.3f ms (with its allocations and synchronization), Fill %.3f ms\n", nrow, axis_only, t.count_ms, t.fill_ms);
    }
}

int main(int argc, char **argv)
{
  bool      quick;
  const int start = GpuTestStart(argc, argv, &quick);
  static const struct {
    int dim, k, N[3], quick;
  } grids[] = {
    {2, 1, {7, 5, 1}, 1}, {2, 1, {1, 1, 1}, 0}, {2, 2, {4, 3, 1}, 1}, {2, 3, {2, 3, 1}, 0}, {2, 4, {3, 2, 1}, 0}, {2, 3, {9, 7, 1}, 0},
    {3, 2, {2, 3, 2}, 1}, {3, 1, {1, 1, 1}, 0}, {3, 1, {5, 4, 3}, 1}, {3, 3, {2, 1, 2}, 0}, {3, 4, {1, 2, 1}, 0}, {3, 2, {6, 5, 7}, 0},
  };

  if (start >= 0) return start;
  Errors();
  for (size_t i = 0; i < sizeof(grids) / sizeof(grids[0]); i++) {
    int       p[16][3];
    const int np = SplitProcessGrids(grids[i].dim, p);

    if (quick && !grids[i].quick) continue;
    for (int j = 0; j < np; j++) {
      const int P = p[j][0] * p[j][1] * p[j][2];
      for (int variant = 0; variant < (P == 1 || quick ? 1 : 3); variant++) {
        SplitPartition s;
        char           label[200];

        if (!SplitPartitionMake(grids[i].dim, grids[i].k, grids[i].N, p[j], variant, &s)) continue;
        snprintf(label, sizeof(label), "%dD k=%d %dx%dx%d nodes, %d boxes %dx%dx%d %s", s.dim, s.k, s.nodes[0], s.nodes[1], s.nodes[2], s.P, s.p[0], s.p[1], s.p[2], SplitVariantName[variant]);
        for (int dirichlet = 0; dirichlet <= 1; dirichlet++)
          for (int axis_only = 0; axis_only <= 1; axis_only++)
            if (!quick || dirichlet == axis_only) SplitCase(&s, dirichlet, axis_only, label);
        SplitErrors(&s, label);
      }
    }
  }
  if (!quick) Large();
  Overflow();
  CHECK_CUDA(cudaStreamDestroy(g_stream));
  CHECK_CUDA(cudaDeviceSynchronize());
  /* one line, last: the scripts take it as the summary */
  printf("# %d passed, %d failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
