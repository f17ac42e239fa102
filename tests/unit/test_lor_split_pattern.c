/* Unit test of the split LOR pattern of one rank's rows (contract: include/patchwork/lor_kernel.h):
   PatchworkLORSplitPattern{Count,Fill}Ref (src/core/lor_ref.c) and the helpers they share with the
   CUDA kernels, PatchworkLORRowColumns and PatchworkLORRowGlobal, against a brute force written here.
   Cases (tests/unit/lor_split_cases.h): 2D and 3D, degrees 1..4 (they only matter through the node
   counts), grids from 2x2(x2) nodes to 28x22 (2D) and 13x11x15 (3D), each split into P = 1, 2, 3, 4 row
   boxes as a DMDA splits it among ranks (along x, y, z or two directions; range sizes balanced as
   PETSc's, growing or shrinking), every box with the coordinate box = the row box grown by one node
   layer (clipped) and l2g = the DMDA-like global numbering (box r owns [rstart, rend), lexicographic
   in the box, boxes in rank order); Dirichlet off and on, axis_only 0 and 1. Per case (all P boxes):
     helpers   PatchworkLORRowColumns of every row = the brute-force row (the 3^dim neighbours kept by
               the rule re-derived here: inside the grid; with axis_only on an axis through the node;
               with Dirichlet, a boundary row or a boundary column only on the diagonal; columns the
               global numbers, ascending) entry by entry, columns and slots; PatchworkLORRowGlobal =
               rstart + row; and the re-derived rule = PatchworkLORSlotStored on every slot;
     split     Count returns 0 and dptr, optr = the brute force's; Fill's dcol (column - rstart),
               ocol (global) and keep (row*S + slot, the diagonal block's first) = the brute force's,
               entry by entry. Every array is filled beforehand with a sentinel fresh per case (a
               negative value, never a valid one) and has GUARD entries on each side: the functions
               write exactly dptr/optr[0..nrow], dcol[0..nd), ocol[0..no), keep[0..nd+no);
     union     the entries (global row, global column, slot) of the P boxes, numbered back into the
               natural (lexicographic) numbering, are the one-rank pattern of the whole grid
               (PatchworkLORPattern{Count,Fill}Ref) exactly: every grid row once, its columns and keep
               (natural row * S + slot), the same total. This catches numbering mistakes that a
               per-box comparison made in the same numbering would share.
   Per partition, Count's refusals (return value exactly 1): rstart + 1 and rstart - 1, two owned
   nodes' l2g entries swapped, an owned node given a ghost's number; and its acceptance (0) of two
   ghost entries swapped (only the own nodes' numbers are checked). Also: an empty row box (Count 0,
   dptr[0] = optr[0] = 0, Fill writes nothing) and a row box whose entries do not fit int (Count 1;
   passed NULL arrays: it must refuse before touching them).
   Prints one line per check, `# N checks, M failed` and `all ok` or `FAIL` last; exits 1 on a failure.
   PETSc-free; --quick: 2D 8x6 and 2x2 nodes, 3D 5x7x5 and 2x2x2, the balanced and growing splits
   only, for valgrind. */
#include <string.h>
#include <patchwork/lor_kernel.h>
#include "unittest.h"
#include "lor_split_cases.h"

#define GUARD 8

static int nchecks = 0;
#define CHECK(...) (nchecks++, Check(__VA_ARGS__))

/* A fresh negative sentinel per case (no valid pattern entry is negative) */
static long long Sentinel(uint64_t *rs)
{
  return -1 - (long long)(Rand(rs) * 2.0e9);
}

static int *IntBuf(long long n, int v)
{
  int *p = (int *)Malloc(sizeof(int) * (size_t)(n + 2 * GUARD));

  for (long long i = 0; i < n + 2 * GUARD; i++) p[i] = v;
  return p;
}

static long long *LLBuf(long long n, long long v)
{
  long long *p = (long long *)Malloc(sizeof(long long) * (size_t)(n + 2 * GUARD));

  for (long long i = 0; i < n + 2 * GUARD; i++) p[i] = v;
  return p;
}

/* guard entries (GUARD each side of n) not equal to the sentinel */
static long GuardsTouchedInt(const int *p, long long n, int v)
{
  long bad = 0;

  for (int i = 0; i < GUARD; i++) bad += (p[i] != v) + (p[GUARD + n + i] != v);
  return bad;
}

static long GuardsTouchedLL(const long long *p, long long n, long long v)
{
  long bad = 0;

  for (int i = 0; i < GUARD; i++) bad += (p[i] != v) + (p[GUARD + n + i] != v);
  return bad;
}

static int OnBoundary(const SplitPartition *s, const int g[3])
{
  for (int a = 0; a < s->dim; a++)
    if (g[a] == 0 || g[a] == s->nodes[a] - 1) return 1;
  return 0;
}

/* The brute-force row of node g: every one of the 3^dim neighbours, the rule re-derived, columns the
   global numbers (SplitGlobal, not l2g), sorted ascending; *rule_bad counts the slots where the rule
   and PatchworkLORSlotStored disagree */
static int BruteRow(const SplitPartition *s, const PatchworkLORDesc *d, int axis_only, const int g[3], long long col[27], int slot[27], long *rule_bad)
{
  const int o3 = s->dim == 3;
  int       m  = 0;

  for (int oz = -o3; oz <= o3; oz++)
    for (int oy = -1; oy <= 1; oy++)
      for (int ox = -1; ox <= 1; ox++) {
        const int nb[3] = {g[0] + ox, g[1] + oy, g[2] + oz}, off = (ox != 0) + (oy != 0) + (oz != 0);
        const int sl    = o3 ? (oz + 1) * 9 + (oy + 1) * 3 + (ox + 1) : (oy + 1) * 3 + (ox + 1);
        int       in = 1, keep, q;

        for (int a = 0; a < 3; a++) in = in && nb[a] >= 0 && nb[a] < s->nodes[a];
        keep = in && !(axis_only && off > 1) && !(d->dirichlet && off > 0 && (OnBoundary(s, g) || OnBoundary(s, nb)));
        *rule_bad += keep != (PatchworkLORSlotStored(d, axis_only, g, sl) != 0);
        if (!keep) continue;
        const long long c = SplitGlobal(s, nb);
        for (q = m++; q > 0 && col[q - 1] > c; q--) {
          col[q]  = col[q - 1];
          slot[q] = slot[q - 1];
        }
        col[q]  = c;
        slot[q] = sl;
      }
  return m;
}

/* One partition, one dirichlet, one axis_only: all P boxes */
static void SplitCase(int *fails, const SplitPartition *s, int dirichlet, int axis_only, uint64_t *rs, const char *label0)
{
  PatchworkLORDesc w;
  char             label[240];
  const int        S = s->dim == 3 ? 27 : 9;

  snprintf(label, sizeof(label), "%s dirichlet=%d axis_only=%d", label0, dirichlet, axis_only);
  SplitWholeDesc(s, dirichlet, &w);
  const long      nnodes = PatchworkLORRowCount(&w);
  long long      *rp_w   = (long long *)Malloc(sizeof(long long) * (size_t)(nnodes + 1));
  const long long nnz_w  = PatchworkLORPatternCountRef(&w, axis_only, rp_w);
  int            *cols_w = (int *)Malloc(sizeof(int) * (size_t)nnz_w);
  long long      *keep_w = (long long *)Malloc(sizeof(long long) * (size_t)nnz_w);
  long long      *nat    = (long long *)Malloc(sizeof(long long) * (size_t)nnodes);
  int            *seen   = (int *)Malloc(sizeof(int) * (size_t)nnodes);
  long            helper_bad = 0, rule_bad = 0, ret_bad = 0, ptr_bad = 0, fill_bad = 0, guard_bad = 0, union_bad = 0, skipped = 0;
  long long       nd_all = 0, no_all = 0, nunion = 0;

  PatchworkLORPatternFillRef(&w, axis_only, rp_w, cols_w, keep_w);
  { /* natural (lexicographic) number of every global number */
    int g[3];
    for (g[2] = 0; g[2] < s->nodes[2]; g[2]++)
      for (g[1] = 0; g[1] < s->nodes[1]; g[1]++)
        for (g[0] = 0; g[0] < s->nodes[0]; g[0]++) nat[SplitGlobal(s, g)] = PatchworkLORGridIndex(&w, g);
  }

  for (int r = 0; r < s->P; r++) {
    PatchworkLORDesc d;

    SplitBoxDesc(s, r, dirichlet, &d);
    const long      nrow = PatchworkLORRowCount(&d);
    const long long rstart = s->rstart[r], rend = s->rstart[r + 1];
    long long      *l2g    = (long long *)Malloc(sizeof(long long) * (size_t)SplitCoordCount(&d));
    long long      *bcol   = (long long *)Malloc(sizeof(long long) * 27 * (size_t)nrow);
    int            *bslot  = (int *)Malloc(sizeof(int) * 27 * (size_t)nrow), *bm = (int *)Malloc(sizeof(int) * (size_t)nrow);
    int            *edptr = (int *)Malloc(sizeof(int) * (size_t)(nrow + 1)), *eoptr = (int *)Malloc(sizeof(int) * (size_t)(nrow + 1));
    const long long sent   = Sentinel(rs);
    const int       isent  = (int)sent;

    SplitL2G(s, &d, l2g);
    /* brute force, row by row (the row's node from the box directly, not PatchworkLORRowNode) */
    edptr[0] = eoptr[0] = 0;
    for (long row = 0; row < nrow; row++) {
      const int g[3] = {d.row_start[0] + (int)(row % d.row_size[0]), d.row_start[1] + (int)(row / d.row_size[0] % d.row_size[1]), d.row_start[2] + (int)(row / ((long)d.row_size[0] * d.row_size[1]))};
      int       nd   = 0;

      bm[row] = BruteRow(s, &d, axis_only, g, bcol + 27 * row, bslot + 27 * row, &rule_bad);
      for (int q = 0; q < bm[row]; q++) nd += bcol[27 * row + q] >= rstart && bcol[27 * row + q] < rend;
      edptr[row + 1] = edptr[row] + nd;
      eoptr[row + 1] = eoptr[row] + bm[row] - nd;
    }
    const long long end = edptr[nrow], eno = eoptr[nrow];
    nd_all += end;
    no_all += eno;

    /* helpers */
    for (long row = 0; row < nrow; row++) {
      long long col[PW_LOR_MAX_SLOTS];
      int       slot[PW_LOR_MAX_SLOTS];
      const int m = PatchworkLORRowColumns(&d, axis_only, l2g, row, col, slot);

      if (m != bm[row]) helper_bad++;
      else
        for (int q = 0; q < m; q++) helper_bad += col[q] != bcol[27 * row + q] || slot[q] != bslot[27 * row + q];
      helper_bad += PatchworkLORRowGlobal(&d, l2g, row) != rstart + row;
    }

    /* Count */
    int *dptr = IntBuf(nrow + 1, isent), *optr = IntBuf(nrow + 1, isent);
    const int ret = PatchworkLORSplitPatternCountRef(&d, axis_only, l2g, rstart, rend, dptr + GUARD, optr + GUARD);
    ret_bad += ret != 0;
    guard_bad += GuardsTouchedInt(dptr, nrow + 1, isent) + GuardsTouchedInt(optr, nrow + 1, isent);
    for (long row = 0; row <= nrow; row++) ptr_bad += (dptr[GUARD + row] != edptr[row]) + (optr[GUARD + row] != eoptr[row]);

    /* Fill, only on the right row starts (wrong ones could make it write out of the arrays) */
    if (ret == 0 && dptr[GUARD + nrow] == end && optr[GUARD + nrow] == eno && !ptr_bad) {
      int       *dcol = IntBuf(end, isent);
      long long *ocol = LLBuf(eno, sent), *keep = LLBuf(end + eno, sent);

      PatchworkLORSplitPatternFillRef(&d, axis_only, l2g, rstart, rend, dptr + GUARD, optr + GUARD, dcol + GUARD, ocol + GUARD, keep + GUARD);
      guard_bad += GuardsTouchedInt(dcol, end, isent) + GuardsTouchedLL(ocol, eno, sent) + GuardsTouchedLL(keep, end + eno, sent);
      for (long row = 0; row < nrow; row++) {
        long long e = edptr[row], o = eoptr[row];
        for (int q = 0; q < bm[row]; q++) {
          const long long c = bcol[27 * row + q], k = (long long)row * S + bslot[27 * row + q];
          if (c >= rstart && c < rend) {
            fill_bad += dcol[GUARD + e] != c - rstart || keep[GUARD + e] != k;
            e++;
          } else {
            fill_bad += ocol[GUARD + o] != c || keep[GUARD + end + o] != k;
            o++;
          }
        }
      }

      /* union: this box's rows, from what Fill wrote, in the natural numbering */
      for (long row = 0; row < nrow; row++) {
        const long long n = nat[rstart + row];
        long long       c[PW_LOR_MAX_SLOTS];
        int             sl[PW_LOR_MAX_SLOTS], m = 0, bad = 0;

        seen[n]++;
        for (int part = 0; part < 2; part++) {
          const int lo = part ? optr[GUARD + row] : dptr[GUARD + row], hi = part ? optr[GUARD + row + 1] : dptr[GUARD + row + 1];
          for (int e = lo; e < hi; e++) {
            const long long gc = part ? ocol[GUARD + e] : dcol[GUARD + e] + rstart, kk = keep[GUARD + (part ? end : 0) + e];
            const long long nc = gc >= 0 && gc < nnodes ? nat[gc] : -1;
            int             q;

            if (nc < 0 || kk / S != row || m == PW_LOR_MAX_SLOTS) {
              bad = 1;
              continue;
            }
            for (q = m++; q > 0 && c[q - 1] > nc; q--) {
              c[q]  = c[q - 1];
              sl[q] = sl[q - 1];
            }
            c[q]  = nc;
            sl[q] = (int)(kk % S);
          }
        }
        nunion += m;
        if (bad || m != rp_w[n + 1] - rp_w[n]) union_bad++;
        else
          for (int q = 0; q < m; q++) union_bad += c[q] != cols_w[rp_w[n] + q] || keep_w[rp_w[n] + q] != n * S + sl[q];
      }
      free(dcol);
      free(ocol);
      free(keep);
    } else skipped++;
    free(dptr);
    free(optr);
    free(l2g);
    free(bcol);
    free(bslot);
    free(bm);
    free(edptr);
    free(eoptr);
  }
  for (long n = 0; n < nnodes; n++) union_bad += seen[n] != 1;
  union_bad += nunion != nnz_w;

  CHECK(fails, (double)(helper_bad + rule_bad), 0, "%s: RowColumns, RowGlobal = brute force on %lld rows (%ld wrong), rule = SlotStored (%ld slots differ)", label, (long long)nnodes, helper_bad, rule_bad);
  CHECK(fails, (double)(ret_bad + ptr_bad + fill_bad + guard_bad + skipped), 0, "%s: Count = 0, dptr, optr, dcol, ocol, keep = brute force (%lld + %lld entries; %ld returns != 0, %ld row starts and %ld entries wrong, %ld guard entries touched, %ld boxes not filled)", label, nd_all, no_all, ret_bad, ptr_bad, fill_bad, guard_bad, skipped);
  CHECK(fails, (double)union_bad, 0, "%s: union of the %d boxes = one-rank pattern (%lld entries of %lld; %ld rows or entries wrong)", label, s->P, nunion, nnz_w, union_bad);
  free(rp_w);
  free(cols_w);
  free(keep_w);
  free(nat);
  free(seen);
}

/* Count's refusals of a numbering that is not the rows' own from rstart, and its acceptance of changed ghosts */
static void SplitErrors(int *fails, const SplitPartition *s, uint64_t *rs, const char *label)
{
  long wrong = 0, tried = 0;

  for (int r = 0; r < s->P; r++) {
    PatchworkLORDesc d;
    const int        dirichlet = r & 1, axis_only = (r >> 1) & 1;

    SplitBoxDesc(s, r, dirichlet, &d);
    const long      nrow = PatchworkLORRowCount(&d);
    const long long nc = SplitCoordCount(&d), rstart = s->rstart[r], rend = s->rstart[r + 1];
    long long      *l2g  = (long long *)Malloc(sizeof(long long) * (size_t)nc);
    int            *dptr = (int *)Malloc(sizeof(int) * (size_t)(nrow + 1)), *optr = (int *)Malloc(sizeof(int) * (size_t)(nrow + 1));
    long long       ghost[2] = {-1, -1}; /* coordinate-box indices of two ghost nodes */
    int             g[3], ng = 0;

    SplitL2G(s, &d, l2g);
    for (g[2] = d.coord_start[2]; g[2] < d.coord_start[2] + d.coord_size[2]; g[2]++)
      for (g[1] = d.coord_start[1]; g[1] < d.coord_start[1] + d.coord_size[1]; g[1]++)
        for (g[0] = d.coord_start[0]; g[0] < d.coord_start[0] + d.coord_size[0]; g[0]++) {
          int own = 1;
          for (int a = 0; a < 3; a++) own = own && g[a] >= d.row_start[a] && g[a] < d.row_start[a] + d.row_size[a];
          if (!own && ng < 2) ghost[ng++] = SplitCoordIndex(&d, g);
        }

    /* rstart shifted */
    wrong += PatchworkLORSplitPatternCountRef(&d, axis_only, l2g, rstart + 1, rend + 1, dptr, optr) != 1;
    wrong += PatchworkLORSplitPatternCountRef(&d, axis_only, l2g, rstart - 1, rend - 1, dptr, optr) != 1;
    tried += 2;
    if (nrow >= 2) { /* two random owned nodes swapped */
      const long i = (long)(Rand(rs) * nrow), j = (i + 1 + (long)(Rand(rs) * (nrow - 1))) % nrow;
      int        gi[3], gj[3];
      long long  t;

      PatchworkLORRowNode(&d, i, gi);
      PatchworkLORRowNode(&d, j, gj);
      const long long ci = SplitCoordIndex(&d, gi), cj = SplitCoordIndex(&d, gj);
      t       = l2g[ci];
      l2g[ci] = l2g[cj];
      l2g[cj] = t;
      wrong += PatchworkLORSplitPatternCountRef(&d, axis_only, l2g, rstart, rend, dptr, optr) != 1;
      tried++;
      l2g[cj] = l2g[ci];
      l2g[ci] = t;
    }
    if (ng >= 1 && nrow >= 1) { /* the last owned node numbered as a ghost */
      int       gl[3];
      long long t;

      PatchworkLORRowNode(&d, nrow - 1, gl);
      const long long cl = SplitCoordIndex(&d, gl);
      t       = l2g[cl];
      l2g[cl] = l2g[ghost[0]];
      wrong += PatchworkLORSplitPatternCountRef(&d, axis_only, l2g, rstart, rend, dptr, optr) != 1;
      tried++;
      l2g[cl] = t;
    }
    if (ng == 2) { /* two ghosts swapped: the rows' own numbers are right, accepted */
      const long long t = l2g[ghost[0]];
      l2g[ghost[0]]     = l2g[ghost[1]];
      l2g[ghost[1]]     = t;
      wrong += PatchworkLORSplitPatternCountRef(&d, axis_only, l2g, rstart, rend, dptr, optr) != 0;
      tried++;
    }
    free(l2g);
    free(dptr);
    free(optr);
  }
  CHECK(fails, (double)wrong, 0, "%s: Count returns 1 for rstart +-1, swapped owned numbers, an owned node numbered as a ghost; 0 for swapped ghosts (%ld of %ld calls wrong)", label, wrong, tried);
}

/* An empty row box, and a row box whose entries do not fit int */
static void SplitEdges(int *fails, uint64_t *rs)
{
  const int N3[3] = {3, 2, 2}, p3[3] = {2, 1, 1};
  SplitPartition s;
  PatchworkLORDesc d;

  SplitPartitionMake(3, 2, N3, p3, 0, &s);
  for (int axis_only = 0; axis_only <= 1; axis_only++) {
    SplitBoxDesc(&s, 1, 1, &d);
    d.row_size[1] = 0; /* no rows; the coordinate box as before */
    {
      const long long sent = Sentinel(rs);
      const int       isent = (int)sent;
      long long      *l2g   = (long long *)Malloc(sizeof(long long) * (size_t)SplitCoordCount(&d));
      int            *dptr = IntBuf(1, isent), *optr = IntBuf(1, isent), *dcol = IntBuf(0, isent);
      long long      *ocol = LLBuf(0, sent), *keep = LLBuf(0, sent);
      int             ret;
      long            touched;

      SplitL2G(&s, &d, l2g);
      ret = PatchworkLORSplitPatternCountRef(&d, axis_only, l2g, s.rstart[1], s.rstart[1], dptr + GUARD, optr + GUARD);
      PatchworkLORSplitPatternFillRef(&d, axis_only, l2g, s.rstart[1], s.rstart[1], dptr + GUARD, optr + GUARD, dcol + GUARD, ocol + GUARD, keep + GUARD);
      touched = GuardsTouchedInt(dptr, 1, isent) + GuardsTouchedInt(optr, 1, isent) + GuardsTouchedInt(dcol, 0, isent) + GuardsTouchedLL(ocol, 0, sent) + GuardsTouchedLL(keep, 0, sent);
      CHECK(fails, (double)((ret != 0) + (dptr[GUARD] != 0) + (optr[GUARD] != 0) + touched), 0, "empty row box axis_only=%d: Count returns 0 (%d), dptr[0] = optr[0] = 0 (%d, %d), nothing else written (%ld entries touched)", axis_only, ret, dptr[GUARD], optr[GUARD], touched);
      free(l2g);
      free(dptr);
      free(optr);
      free(dcol);
      free(ocol);
      free(keep);
    }
  }
  { /* entries beyond int: 3D 1001^3 rows x 7 candidate slots (axis_only), 2D 20001^2 x 9; NULL arrays:
       a function that did not refuse first would crash */
    const int      Nb3[3] = {1000, 1000, 1000}, Nb2[3] = {20000, 20000, 1}, p1[3] = {1, 1, 1};
    SplitPartition b;
    int            r3, r2;

    SplitPartitionMake(3, 1, Nb3, p1, 0, &b);
    SplitWholeDesc(&b, 0, &d);
    r3 = PatchworkLORSplitPatternCountRef(&d, 1, NULL, 0, (long long)PatchworkLORRowCount(&d), NULL, NULL);
    SplitPartitionMake(2, 1, Nb2, p1, 0, &b);
    SplitWholeDesc(&b, 1, &d);
    r2 = PatchworkLORSplitPatternCountRef(&d, 0, NULL, 0, (long long)PatchworkLORRowCount(&d), NULL, NULL);
    CHECK(fails, (double)((r3 != 1) + (r2 != 1)), 0, "entries beyond 2^31 - 1 (3D 1001^3 rows axis_only=1, 2D 20001^2 rows axis_only=0): Count returns 1 (%d, %d)", r3, r2);
  }
}

int main(int argc, char **argv)
{
  int      fails = 0, quick = argc > 1 && !strcmp(argv[1], "--quick");
  uint64_t rs    = 0x5eed5a11e7ull;
  static const struct {
    int dim, k, N[3], quick;
  } grids[] = {
    {2, 1, {7, 5, 1}, 1}, {2, 1, {1, 1, 1}, 1}, {2, 2, {4, 3, 1}, 0}, {2, 3, {2, 3, 1}, 0}, {2, 4, {3, 2, 1}, 0}, {2, 3, {9, 7, 1}, 0},
    {3, 2, {2, 3, 2}, 1}, {3, 1, {1, 1, 1}, 1}, {3, 1, {5, 4, 3}, 0}, {3, 3, {2, 1, 2}, 0}, {3, 4, {1, 2, 1}, 0}, {3, 2, {6, 5, 7}, 0},
  };

  for (size_t i = 0; i < sizeof(grids) / sizeof(grids[0]); i++) {
    int p[16][3];
    const int np = SplitProcessGrids(grids[i].dim, p);

    if (quick && !grids[i].quick) continue;
    for (int j = 0; j < np; j++) {
      const int P = p[j][0] * p[j][1] * p[j][2];
      for (int variant = 0; variant < (P == 1 ? 1 : quick ? 2 : 3); variant++) {
        SplitPartition s;
        char           label[200];

        if (!SplitPartitionMake(grids[i].dim, grids[i].k, grids[i].N, p[j], variant, &s)) continue;
        snprintf(label, sizeof(label), "%dD k=%d %dx%dx%d nodes, %d boxes %dx%dx%d %s", s.dim, s.k, s.nodes[0], s.nodes[1], s.nodes[2], s.P, s.p[0], s.p[1], s.p[2], SplitVariantName[variant]);
        for (int dirichlet = 0; dirichlet <= 1; dirichlet++)
          for (int axis_only = 0; axis_only <= 1; axis_only++) SplitCase(&fails, &s, dirichlet, axis_only, &rs, label);
        SplitErrors(&fails, &s, &rs, label);
      }
    }
  }
  SplitEdges(&fails, &rs);
  printf("# %d checks, %d failed\n", nchecks, fails);
  printf("%s\n", fails ? "FAIL" : "all ok");
  return fails != 0;
}
