/* Unit test of PatchworkLORGatherCSRRef (src/core/lor_ref.c; contract include/patchwork/lor_kernel.h):
   the fused A2 + A4 + A3 of the one-rank LOR assembly against the pipeline it replaces,
   PatchworkLORGatherRef -> PatchworkLORDirichletRef -> PatchworkLORCompactRef with the keep map of
   PatchworkLORPattern{Count,Fill}Ref (the same axis_only), bit for bit.
   Cases: 2D and 3D, degrees k = 1..8, non-cubic grids (3D: the cells per direction a permutation of
   1, 2, 3, k = 1: 2, 2, 3; 2D: 3..6 by 2..6), one rank (row box = coordinate box = all nodes, cell range = all cells),
   Ae from PatchworkLORMacroRef on distorted node coordinates: per direction a uniform or a
   Chebyshev-Gauss-Lobatto-like node distribution within each macro cell (alternating with k) of random
   extent, every coordinate then moved by less than 0.1 of the smallest node spacing of its direction
   (every Q1 sub-element stays valid); both vertex rules, alpha and beta random in [0.1, 2.1);
   Dirichlet off and on, axis_only 0 and 1 (the functions must agree for any value). Per case:
     pattern    nnz = rowptr[nrow] = the stored slots summed over the rows (PatchworkLORSlotStored over
                all 3^dim slots) = a brute-force count over the grid written here (in the grid; along an
                axis with axis_only; with Dirichlet, boundary rows and columns only on the diagonal),
                and cols and keep equal that brute-force rule entry by entry (ascending slots);
     written    out filled with a NaN sentinel beforehand (and GUARD entries before and after it): after
                GatherCSRRef no sentinel is left in out[0..nnz), every entry is finite and both guards
                are untouched (exactly nnz entries written);
     bitwise    out = the pipeline's compacted values, bit for bit. This catches a fused function that
                skips a Dirichlet row's identity (its diagonal would be the gathered sum, not 1) or that writes a row's slots in another
                order (the entries of a row differ on distorted cells);
   and on box cells (no distortion) with the vertex rule, what axis_only leaves out is exactly zero:
   the full (axis_only = 0) rows restricted to the axis slots equal the axis_only rows bitwise, and
   every other entry is +-0.
   Also, per Ae, the pipeline's A2 (PatchworkLORGatherRef) against A2 written out here (every macro
   element visited, lexicographically, z slowest), bitwise: the fused function and the pipeline share
   the reference's cell search, which this keeps honest.
   Prints one line per check, `# N checks, M failed` and `all ok` or `FAIL` last; exits 1 on a failure.
   PETSc-free; --quick: smaller grids (3D at most 2 cells per direction, 2D 2..3), for valgrind. */
#include <string.h>
#include <patchwork/lor_kernel.h>
#include "unittest.h"

#define GUARD 8

static int nchecks = 0;
#define CHECK(...) (nchecks++, Check(__VA_ARGS__))

/* The sentinel: a quiet NaN with a payload, compared by its bits */
static const uint64_t SENTINEL_BITS = 0x7ffc0ffee0000badull;

static int IsSentinel(double v)
{
  uint64_t b;

  memcpy(&b, &v, sizeof(b));
  return b == SENTINEL_BITS;
}

static void FillSentinel(double *v, long long n)
{
  for (long long i = 0; i < n; i++) memcpy(&v[i], &SENTINEL_BITS, sizeof(double));
}

/* The one-rank descriptor of a grid of N[0] x N[1] (x N[2]) macro cells of degree k */
static void MakeDesc(int dim, int k, const int N[3], int dirichlet, int vertex_rule, double alpha, double beta, PatchworkLORDesc *d)
{
  memset(d, 0, sizeof(*d));
  d->dim         = dim;
  d->degree      = k;
  d->dirichlet   = dirichlet;
  d->vertex_rule = vertex_rule;
  d->alpha       = alpha;
  d->beta        = beta;
  for (int dir = 0; dir < 3; dir++) {
    const int n = dir < dim ? k * N[dir] + 1 : 1;

    d->nodes[dir]      = n;
    d->cell_start[dir] = 0;
    d->cell_end[dir]   = dir < dim ? N[dir] : 1;
    d->coord_start[dir] = d->row_start[dir] = 0;
    d->coord_size[dir] = d->row_size[dir] = n;
  }
}

/* Node coordinates of the whole grid, interleaved: per direction the macro cells of width L/N
   (L in [0.5, 2)) hold their k+1 nodes uniformly (gll = 0) or at the Chebyshev-Gauss-Lobatto points
   (gll = 1); then every coordinate moves by less than perturb times the smallest node spacing of its
   direction */
static void MakeCoords(const PatchworkLORDesc *d, int gll, double perturb, uint64_t *rs, double *x)
{
  const int dim = d->dim, k = d->degree;
  double   *pos[3], hmin[3];

  for (int dir = 0; dir < dim; dir++) {
    const int    n = d->nodes[dir], N = (n - 1) / k;
    const double L = 0.5 + 1.5 * Rand(rs), hc = L / N;

    pos[dir]  = (double *)Malloc(sizeof(double) * (size_t)n);
    hmin[dir] = INFINITY;
    for (int g = 0; g < n; g++) {
      const int c = g / k < N ? g / k : N - 1, i = g - k * c;
      pos[dir][g] = hc * (c + (gll ? 0.5 * (1 - cos(3.14159265358979323846 * i / k)) : (double)i / k));
      if (g > 0) hmin[dir] = fmin(hmin[dir], pos[dir][g] - pos[dir][g - 1]);
    }
  }
  for (int gz = 0; gz < d->nodes[2]; gz++)
    for (int gy = 0; gy < d->nodes[1]; gy++)
      for (int gx = 0; gx < d->nodes[0]; gx++) {
        const int    g[3] = {gx, gy, gz};
        const size_t p    = ((size_t)gz * d->nodes[1] + gy) * d->nodes[0] + gx;
        for (int i = 0; i < dim; i++) x[p * dim + i] = pos[i][g[i]] + perturb * hmin[i] * (2 * Rand(rs) - 1);
      }
  for (int dir = 0; dir < dim; dir++) free(pos[dir]);
}

/* A2 written out here, apart from the reference's cell search: vals[row*S + s] = the sum from 0 of the
   Ae entries of every macro element that holds both the row's node and its slot-s neighbour, the
   elements visited lexicographically (z slowest), which is the order the contract fixes: the
   pipeline's PatchworkLORGatherRef must equal it bitwise */
static void GatherBrute(const PatchworkLORDesc *d, const double *Ae, double *vals)
{
  const int  k = d->degree, n = k + 1, dim = d->dim, S = PatchworkLORSlots(d), nloc = PatchworkLORMacroNodes(d);
  const long nrow = PatchworkLORRowCount(d);

  for (long row = 0; row < nrow; row++) {
    const int g[3] = {(int)(row % d->nodes[0]), (int)((row / d->nodes[0]) % d->nodes[1]), (int)(row / ((long)d->nodes[0] * d->nodes[1]))};
    for (int s = 0; s < S; s++) {
      const int nb[3] = {g[0] + s % 3 - 1, g[1] + (s / 3) % 3 - 1, g[2] + (dim == 3 ? s / 9 - 1 : 0)};
      double    v     = 0;
      long      e     = 0;

      for (int cz = d->cell_start[2]; cz < d->cell_end[2]; cz++)
        for (int cy = d->cell_start[1]; cy < d->cell_end[1]; cy++)
          for (int cx = d->cell_start[0]; cx < d->cell_end[0]; cx++, e++) {
            const int c[3] = {cx, cy, cz};
            int       in   = 1, r = 0;

            for (int i = 0; i < 3; i++) {
              const int lo = i < dim ? k * c[i] : 0, hi = i < dim ? k * c[i] + k : 0;
              in = in && g[i] >= lo && g[i] <= hi && nb[i] >= lo && nb[i] <= hi;
            }
            if (!in) continue;
            for (int i = dim - 1; i >= 0; i--) r = r * n + g[i] - k * c[i];
            v += Ae[((size_t)e * nloc + r) * S + s];
          }
      vals[(size_t)row * S + s] = v;
    }
  }
}

/* The pattern checks; fills rowptr (nrow + 1), returns nnz, *cols and *keep malloc'd */
static long long Pattern(int *fails, const PatchworkLORDesc *d, int axis_only, const char *label, long long *rowptr, int **cols, long long **keep)
{
  const long nrow = PatchworkLORRowCount(d);
  const int  S = PatchworkLORSlots(d), o3 = d->dim == 3;
  long long  nnz, stored = 0, brute = 0;
  long       wrong = 0;

  nnz   = PatchworkLORPatternCountRef(d, axis_only, rowptr);
  *cols = (int *)Malloc(sizeof(int) * (size_t)(nnz > 0 ? nnz : 1));
  *keep = (long long *)Malloc(sizeof(long long) * (size_t)(nnz > 0 ? nnz : 1));
  PatchworkLORPatternFillRef(d, axis_only, rowptr, *cols, *keep);
  wrong += rowptr[0] != 0 || rowptr[nrow] != nnz;
  for (long row = 0; row < nrow; row++) {
    const int g[3] = {(int)(row % d->nodes[0]), (int)((row / d->nodes[0]) % d->nodes[1]), (int)(row / ((long)d->nodes[0] * d->nodes[1]))};
    long long e    = rowptr[row];

    for (int s = 0; s < S; s++) stored += PatchworkLORSlotStored(d, axis_only, g, s);
    for (int oz = -o3; oz <= o3; oz++)
      for (int oy = -1; oy <= 1; oy++)
        for (int ox = -1; ox <= 1; ox++) {
          const int nb[3] = {g[0] + ox, g[1] + oy, g[2] + oz}, off = (ox != 0) + (oy != 0) + (oz != 0);
          int       in = 1, bnd = 0;

          for (int i = 0; i < 3; i++) in = in && nb[i] >= 0 && nb[i] < d->nodes[i];
          if (!in || (axis_only && off > 1)) continue;
          for (int i = 0; i < d->dim; i++) bnd = bnd || g[i] == 0 || g[i] == d->nodes[i] - 1 || nb[i] == 0 || nb[i] == d->nodes[i] - 1;
          if (d->dirichlet && off > 0 && bnd) continue;
          const int col = nb[0] + d->nodes[0] * (nb[1] + d->nodes[1] * nb[2]), slot = (oz + 1) * 9 * o3 + (oy + 1) * 3 + (ox + 1);
          brute++;
          if (e >= rowptr[row + 1] || (*cols)[e] != col || (*keep)[e] != (long long)row * S + slot) wrong++;
          e++;
        }
    wrong += e != rowptr[row + 1];
  }
  CHECK(fails, (double)((nnz != stored) + (nnz != brute) + wrong), 0, "%s: pattern nnz %lld = stored slots %lld = brute force %lld; cols, keep = brute force (%ld wrong)", label, nnz, stored, brute, wrong);
  return nnz;
}

/* One case: the pattern, then the fused gather against the pipeline. Returns the fused values
   (malloc'd, nnz of them) and the int rowptr when asked (for the axis_only comparison), else frees them. */
static void Case(int *fails, const PatchworkLORDesc *d, int axis_only, const double *Ae, const char *label0, double **out_ret, int **rowptr_ret)
{
  const long nrow = PatchworkLORRowCount(d);
  const int  S    = PatchworkLORSlots(d);
  long long *rowptr_ll = (long long *)Malloc(sizeof(long long) * ((size_t)nrow + 1)), *keep;
  int       *rowptr    = (int *)Malloc(sizeof(int) * ((size_t)nrow + 1)), *cols;
  char       label[256];

  snprintf(label, sizeof(label), "%s axis_only=%d", label0, axis_only);
  const long long nnz = Pattern(fails, d, axis_only, label, rowptr_ll, &cols, &keep);
  for (long row = 0; row <= nrow; row++) rowptr[row] = (int)rowptr_ll[row]; /* nnz < 2^31 here */

  /* the pipeline: A2, A4, A3 with the keep map */
  double *vals = (double *)Malloc(sizeof(double) * (size_t)nrow * S), *ref = (double *)Malloc(sizeof(double) * (size_t)(nnz > 0 ? nnz : 1));
  PatchworkLORGatherRef(d, Ae, vals);
  PatchworkLORDirichletRef(d, vals);
  PatchworkLORCompactRef((long)nnz, keep, vals, ref);

  /* the fused function, into a sentinel-filled array with guards on both sides */
  double *buf = (double *)Malloc(sizeof(double) * (size_t)(nnz + 2 * GUARD)), *out = buf + GUARD;
  FillSentinel(buf, nnz + 2 * GUARD);
  PatchworkLORGatherCSRRef(d, axis_only, Ae, rowptr, out);
  {
    long long left = 0, nonfinite = 0, guard = 0;

    for (long long i = 0; i < nnz; i++) {
      left += IsSentinel(out[i]);
      nonfinite += !IsSentinel(out[i]) && !isfinite(out[i]);
    }
    for (int i = 0; i < GUARD; i++) guard += !IsSentinel(buf[i]) + !IsSentinel(out[nnz + i]);
    CHECK(fails, (double)(left + nonfinite + guard), 0, "%s: %lld entries written (unwritten %lld, not finite %lld, guard entries touched %lld)", label, nnz, left, nonfinite, guard);
  }
  {
    long long bad = 0, first = -1;
    long      frow = -1;
    int       ident = 0;

    for (long long i = 0; i < nnz; i++)
      if (memcmp(&out[i], &ref[i], sizeof(double))) {
        if (first < 0) first = i;
        bad++;
      }
    for (long row = 0; row < nrow; row++) ident += rowptr[row + 1] - rowptr[row] == 1 && ref[rowptr[row]] == 1.0;
    if (first >= 0) {
      for (frow = 0; rowptr[frow + 1] <= first; frow++) {
      }
      printf("     first difference: row %ld entry %lld of %d: fused %.17g, pipeline %.17g\n", frow, first - rowptr[frow], rowptr[frow + 1] - rowptr[frow], out[first], ref[first]);
    }
    CHECK(fails, (double)bad, 0, "%s: fused = Gather, Dirichlet, Compact bitwise (%lld entries, %d rows stored as a lone 1)", label, nnz, ident);
  }
  if (out_ret) {
    *out_ret = (double *)Malloc(sizeof(double) * (size_t)(nnz > 0 ? nnz : 1));
    memcpy(*out_ret, out, sizeof(double) * (size_t)nnz);
  }
  if (rowptr_ret) *rowptr_ret = rowptr;
  else free(rowptr);
  free(rowptr_ll);
  free(cols);
  free(keep);
  free(vals);
  free(ref);
  free(buf);
}

/* Box cells, vertex rule: the full rows (axis_only = 0) restricted to the centre and the axis slots
   equal the axis_only rows bitwise, and their other entries are +-0. Both patterns list a row's slots
   ascending; the full one is a superset. */
static void AxisOnlyDropsZeros(int *fails, const PatchworkLORDesc *d, const double *full, const int *rp_full, const double *axis, const int *rp_axis, const char *label)
{
  const long nrow = PatchworkLORRowCount(d);
  const int  S    = PatchworkLORSlots(d);
  int        slots_f[PW_LOR_MAX_SLOTS], slots_a[PW_LOR_MAX_SLOTS];
  long       nonzero = 0, differ = 0, dropped = 0;

  for (long row = 0; row < nrow; row++) {
    int g[3], nf = 0, na = 0;

    PatchworkLORRowNode(d, row, g);
    for (int s = 0; s < S; s++) {
      if (PatchworkLORSlotStored(d, 0, g, s)) slots_f[nf++] = s;
      if (PatchworkLORSlotStored(d, 1, g, s)) slots_a[na++] = s;
    }
    if (nf != rp_full[row + 1] - rp_full[row] || na != rp_axis[row + 1] - rp_axis[row]) {
      differ++;
      continue;
    }
    for (int i = 0, j = 0; i < nf; i++) {
      const double v = full[rp_full[row] + i];

      if (j < na && slots_a[j] == slots_f[i]) {
        differ += memcmp(&v, &axis[rp_axis[row] + j], sizeof(double)) != 0;
        j++;
      } else {
        dropped++;
        nonzero += v != 0;
      }
    }
  }
  CHECK(fails, (double)(nonzero + differ), 0, "%s: box cells, vertex rule: axis_only drops %ld entries, all 0 (nonzero %ld), keeps the others bitwise (differ %ld)", label, dropped, nonzero, differ);
}

int main(int argc, char **argv)
{
  int      fails = 0, quick = argc > 1 && !strcmp(argv[1], "--quick");
  uint64_t rs    = 20250611;

  for (int dim = 2; dim <= 3; dim++)
    for (int k = 1; k <= 8; k++) {
      int N[3];

      if (dim == 3) { /* a permutation of 1, 2, 3 (quick: of 1, 2, 2 and 1, 1, 2); k = 1: 3x2x2 (quick 2x2x2), so
                         that some rows are off the boundary in every direction */
        const int base[3] = {k == 1 ? 2 : 1, 2, quick ? 1 + (k & 1) : 3};
        for (int i = 0; i < 3; i++) N[i] = base[(i + k) % 3];
      } else {
        N[0] = quick ? 2 + k % 2 : 3 + k % 4;
        N[1] = quick ? 3 - k % 2 : 2 + (k + 1) % 5;
        N[2] = 1;
      }
      const int gll = k & 1;

      /* distorted cells: both rules, Dirichlet off and on, axis_only 0 and 1 */
      for (int rule = 0; rule <= 1; rule++) {
        PatchworkLORDesc d;
        const double     alpha = 0.1 + 2 * Rand(&rs), beta = 0.1 + 2 * Rand(&rs);
        char             label[200];

        MakeDesc(dim, k, N, 0, rule, alpha, beta, &d);
        const long nnodes = PatchworkLORRowCount(&d);
        double    *x = (double *)Malloc(sizeof(double) * (size_t)nnodes * dim);
        double    *Ae = (double *)Malloc(sizeof(double) * (size_t)PatchworkLORMacroCount(&d) * PatchworkLORMacroNodes(&d) * PatchworkLORSlots(&d));

        MakeCoords(&d, gll, 0.1, &rs, x);
        PatchworkLORMacroRef(&d, x, Ae);
        {
          const size_t nv = (size_t)nnodes * PatchworkLORSlots(&d);
          double      *v1 = (double *)Malloc(sizeof(double) * nv), *v2 = (double *)Malloc(sizeof(double) * nv);
          long         bad = 0;

          PatchworkLORGatherRef(&d, Ae, v1);
          GatherBrute(&d, Ae, v2);
          for (size_t i = 0; i < nv; i++) bad += memcmp(&v1[i], &v2[i], sizeof(double)) != 0;
          CHECK(&fails, (double)bad, 0, "%dD k=%d %dx%dx%d %s distorted rule=%s: GatherRef = brute force over all macro elements, bitwise (%zu entries)", dim, k, N[0], N[1], N[2], gll ? "gll" : "uniform", rule ? "vertex" : "gauss", nv);
          free(v1);
          free(v2);
        }
        for (int dirichlet = 0; dirichlet <= 1; dirichlet++) {
          d.dirichlet = dirichlet;
          snprintf(label, sizeof(label), "%dD k=%d %dx%dx%d %s distorted rule=%s alpha=%.2f beta=%.2f dirichlet=%d", dim, k, N[0], N[1], N[2], gll ? "gll" : "uniform", rule ? "vertex" : "gauss", alpha, beta, dirichlet);
          for (int axis_only = 0; axis_only <= 1; axis_only++) Case(&fails, &d, axis_only, Ae, label, NULL, NULL);
        }
        free(x);
        free(Ae);
      }

      /* box cells with the vertex rule: what axis_only leaves out is zero */
      {
        PatchworkLORDesc d;
        const int        dirichlet = (k + dim) & 1;
        double          *full, *axis;
        int             *rp_full, *rp_axis;
        char             label[200];

        MakeDesc(dim, k, N, dirichlet, 1, 0.1 + 2 * Rand(&rs), 0.1 + 2 * Rand(&rs), &d);
        const long nnodes = PatchworkLORRowCount(&d);
        double    *x = (double *)Malloc(sizeof(double) * (size_t)nnodes * dim);
        double    *Ae = (double *)Malloc(sizeof(double) * (size_t)PatchworkLORMacroCount(&d) * PatchworkLORMacroNodes(&d) * PatchworkLORSlots(&d));

        MakeCoords(&d, !gll, 0.0, &rs, x);
        PatchworkLORMacroRef(&d, x, Ae);
        snprintf(label, sizeof(label), "%dD k=%d %dx%dx%d %s box rule=vertex alpha=%.2f beta=%.2f dirichlet=%d", dim, k, N[0], N[1], N[2], !gll ? "gll" : "uniform", d.alpha, d.beta, dirichlet);
        Case(&fails, &d, 0, Ae, label, &full, &rp_full);
        Case(&fails, &d, 1, Ae, label, &axis, &rp_axis);
        AxisOnlyDropsZeros(&fails, &d, full, rp_full, axis, rp_axis, label);
        free(full);
        free(axis);
        free(rp_full);
        free(rp_axis);
        free(x);
        free(Ae);
      }
    }
  printf("# %d checks, %d failed\n", nchecks, fails);
  printf("%s\n", fails ? "FAIL" : "all ok");
  return fails != 0;
}
