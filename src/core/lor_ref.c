/* CPU reference of the LOR assembly (contract: include/patchwork/lor_kernel.h). Serial loops in
   the order the header fixes, so that A2 and A4 are reproduced bit for bit by the CUDA kernels. */
#include <assert.h>
#include <limits.h>
#include <string.h>
#include <patchwork/lor_kernel.h>
#include <patchwork/q1_element.h>
#include "coreimpl.h"

int PatchworkLORSlots(const PatchworkLORDesc *d)
{
  return d->dim == 3 ? 27 : 9;
}

int PatchworkLORMacroNodes(const PatchworkLORDesc *d)
{
  const int n = d->degree + 1;
  return d->dim == 3 ? n * n * n : n * n;
}

long PatchworkLORMacroCount(const PatchworkLORDesc *d)
{
  long c = 1;
  for (int dir = 0; dir < 3; dir++) c *= d->cell_end[dir] > d->cell_start[dir] ? d->cell_end[dir] - d->cell_start[dir] : 0;
  return c;
}

long PatchworkLORRowCount(const PatchworkLORDesc *d)
{
  return (long)d->row_size[0] * d->row_size[1] * d->row_size[2];
}

static void CheckDesc(const PatchworkLORDesc *d)
{
  assert(d->dim == 2 || d->dim == 3);
  assert(d->degree >= 1 && d->degree <= PW_MAX_DEGREE);
  for (int dir = d->dim; dir < 3; dir++) assert(d->nodes[dir] == 1 && d->cell_start[dir] == 0 && d->cell_end[dir] == 1);
  for (int dir = 0; dir < d->dim; dir++) assert((d->nodes[dir] - 1) % d->degree == 0 && d->cell_start[dir] >= 0 && d->cell_end[dir] <= (d->nodes[dir] - 1) / d->degree);
  (void)d;
}

/* Slot of neighbour offset o (each component -1, 0 or 1) */
static int Slot(int dim, const int o[3])
{
  return dim == 3 ? (o[2] + 1) * 9 + (o[1] + 1) * 3 + o[0] + 1 : (o[1] + 1) * 3 + o[0] + 1;
}

void PatchworkLORMacroRef(const PatchworkLORDesc *d, const double *coords, double *Ae)
{
  const int  k = d->degree, n = k + 1, dim = d->dim, nv = 1 << dim, S = PatchworkLORSlots(d), nloc = PatchworkLORMacroNodes(d);
  const int  sub[3] = {k, k, dim == 3 ? k : 1};
  const long ncell  = PatchworkLORMacroCount(d);
  long       e      = 0;

  CheckDesc(d);
  if (ncell <= 0) return;
  memset(Ae, 0, sizeof(double) * (size_t)ncell * (size_t)nloc * (size_t)S);
  for (int cz = d->cell_start[2]; cz < d->cell_end[2]; cz++)
    for (int cy = d->cell_start[1]; cy < d->cell_end[1]; cy++)
      for (int cx = d->cell_start[0]; cx < d->cell_end[0]; cx++, e++) {
        const int c[3] = {cx, cy, cz};
        double   *A    = Ae + (size_t)e * nloc * S;
        for (int sz = 0; sz < sub[2]; sz++)
          for (int sy = 0; sy < sub[1]; sy++)
            for (int sx = 0; sx < sub[0]; sx++) {
              double xv[8 * 3], Ke[64];
              int    loc[8];
              for (int a = 0; a < nv; a++) {
                const int l[3] = {sx + (a & 1), sy + ((a >> 1) & 1), dim == 3 ? sz + ((a >> 2) & 1) : 0};
                int       g[3];
                for (int dir = 0; dir < 3; dir++) g[dir] = dir < dim ? k * c[dir] + l[dir] : 0;
                const long p = BoxIndex(d->coord_start, d->coord_size, g);
                for (int dir = 0; dir < 3; dir++) assert(g[dir] >= d->coord_start[dir] && g[dir] < d->coord_start[dir] + d->coord_size[dir]);
                for (int i = 0; i < dim; i++) xv[a * dim + i] = coords[p * dim + i];
                loc[a] = (l[2] * n + l[1]) * n + l[0];
              }
              PatchworkQ1ElementMatrixRule(dim, xv, d->alpha, d->beta, d->vertex_rule, Ke);
              for (int a = 0; a < nv; a++)
                for (int b = 0; b < nv; b++) {
                  const int o[3] = {(b & 1) - (a & 1), ((b >> 1) & 1) - ((a >> 1) & 1), ((b >> 2) & 1) - ((a >> 2) & 1)};
                  A[(size_t)loc[a] * S + Slot(dim, o)] += Ke[a * nv + b];
                }
            }
      }
}

/* Cells of direction dir (within the range) that contain both node g and node g+o: at most two */
static int CellsAlong(const PatchworkLORDesc *d, int dir, int g, int o, int cells[2])
{
  const int k = d->degree, N = (d->nodes[dir] - 1) / k;
  int       m = 0, cand[2], nc = 0;

  if (dir >= d->dim) {
    cells[0] = 0;
    return 1;
  }
  if (g % k == 0 && g > 0) cand[nc++] = g / k - 1;
  if (g / k < N) cand[nc++] = g / k;
  for (int i = 0; i < nc; i++) {
    const int c = cand[i];
    if (c >= d->cell_start[dir] && c < d->cell_end[dir] && g + o >= k * c && g + o <= k * c + k) cells[m++] = c;
  }
  return m;
}

/* A2's sum for slot s of the row of node g: the Ae entries of the macro elements in the range that
   hold both g and its neighbour, lexicographic (z slowest), from 0; 0 outside the global grid */
static double GatherSlot(const PatchworkLORDesc *d, const double *Ae, const int g[3], int s)
{
  const int k = d->degree, n = k + 1, dim = d->dim, S = PatchworkLORSlots(d), nloc = PatchworkLORMacroNodes(d);
  const int mc[3] = {d->cell_end[0] - d->cell_start[0], d->cell_end[1] - d->cell_start[1], d->cell_end[2] - d->cell_start[2]};
  const int o[3]  = {s % 3 - 1, (s / 3) % 3 - 1, dim == 3 ? s / 9 - 1 : 0};
  int       cells[3][2], nc[3];
  double    v = 0;

  for (int dir = 0; dir < 3; dir++) {
    if (g[dir] + o[dir] < 0 || g[dir] + o[dir] >= d->nodes[dir]) return 0;
    nc[dir] = CellsAlong(d, dir, g[dir], o[dir], cells[dir]);
  }
  for (int iz = 0; iz < nc[2]; iz++)
    for (int iy = 0; iy < nc[1]; iy++)
      for (int ix = 0; ix < nc[0]; ix++) {
        const int  c[3] = {cells[0][ix], cells[1][iy], cells[2][iz]};
        const long e    = ((long)(c[2] - d->cell_start[2]) * mc[1] + (c[1] - d->cell_start[1])) * mc[0] + (c[0] - d->cell_start[0]);
        const int  r    = dim == 3 ? ((g[2] - k * c[2]) * n + g[1] - k * c[1]) * n + g[0] - k * c[0] : (g[1] - k * c[1]) * n + g[0] - k * c[0];
        v += Ae[((size_t)e * nloc + r) * S + s];
      }
  return v;
}

void PatchworkLORGatherRef(const PatchworkLORDesc *d, const double *Ae, double *vals)
{
  const int  S    = PatchworkLORSlots(d);
  const long nrow = PatchworkLORRowCount(d);

  CheckDesc(d);
  for (long row = 0; row < nrow; row++) {
    int g[3];

    PatchworkLORRowNode(d, row, g);
    for (int s = 0; s < S; s++) vals[(size_t)row * S + s] = GatherSlot(d, Ae, g, s);
  }
}

void PatchworkLORDirichletRef(const PatchworkLORDesc *d, double *vals)
{
  const int  S = PatchworkLORSlots(d), center = S / 2;
  const long nrow = PatchworkLORRowCount(d);

  CheckDesc(d);
  if (!d->dirichlet) return;
  for (long row = 0; row < nrow; row++) {
    double *v = vals + (size_t)row * S;
    int     g[3];

    PatchworkLORRowNode(d, row, g);
    if (PatchworkLOROnBoundary(d, g)) {
      for (int s = 0; s < S; s++) v[s] = s == center ? 1.0 : 0.0;
      continue;
    }
    for (int s = 0; s < S; s++) {
      int nb[3];

      PatchworkLORSlotNeighbour(d, g, s, nb);
      if (PatchworkLOROnBoundary(d, nb)) v[s] = 0;
    }
  }
}

void PatchworkLORCompactRef(long n, const long long *map, const double *vals, double *out)
{
  for (long i = 0; i < n; i++) out[i] = vals[map[i]];
}

void PatchworkLORPlexValuesRef(const PatchworkLORPlexDesc *d, const double *coords, const double *reaction, const double *diffusion, const unsigned char *mask, const long long *offset, double *v)
{
  const int nsub = d->dim == 3 ? d->degree * d->degree * d->degree : d->degree * d->degree;

  for (long c = 0; c < d->ncells; c++)
    for (int sub = 0; sub < nsub; sub++) {
      const long i = c * nsub + sub;
      if (d->dim == 3) PatchworkLORPlexSubcell(3, d, c, sub, coords, reaction, diffusion, mask[i], v + offset[i]);
      else PatchworkLORPlexSubcell(2, d, c, sub, coords, reaction, diffusion, mask[i], v + offset[i]);
    }
}

void PatchworkLORPlexHangingValuesRef(const PatchworkLORPlexDesc *d, const double *coords, const double *reaction, const double *diffusion, const int *xptr, const double *xw, const long long *offset, double *v)
{
  const int nsub = d->dim == 3 ? d->degree * d->degree * d->degree : d->degree * d->degree;

  for (long c = 0; c < d->ncells; c++)
    for (int sub = 0; sub < nsub; sub++) {
      const long i = c * nsub + sub;
      if (d->dim == 3) (void)PatchworkLORPlexSubcellHanging(3, d, c, sub, coords, reaction, diffusion, xptr, xw, v + offset[i]);
      else (void)PatchworkLORPlexSubcellHanging(2, d, c, sub, coords, reaction, diffusion, xptr, xw, v + offset[i]);
    }
}

static void CheckWholeGrid(const PatchworkLORDesc *d)
{
  assert(d->dim == 2 || d->dim == 3);
  for (int i = 0; i < 3; i++) assert(d->row_start[i] == 0 && d->row_size[i] == d->nodes[i]);
  (void)d;
}

void PatchworkLORGatherCSRRef(const PatchworkLORDesc *d, int axis_only, const double *Ae, const int *rowptr, double *out)
{
  const long nrow = PatchworkLORRowCount(d);
  int        slots[PW_LOR_MAX_SLOTS];
  const int  ns = PatchworkLORSlotCandidates(d, axis_only, slots);

  CheckDesc(d);
  CheckWholeGrid(d);
  for (int i = 0; i < d->dim; i++) assert(d->cell_start[i] == 0 && d->cell_end[i] == (d->nodes[i] - 1) / d->degree); /* every cell: whole sums */
  for (long row = 0; row < nrow; row++) {
    int g[3], e = rowptr[row];

    PatchworkLORRowNode(d, row, g);
    const int identity = d->dirichlet && PatchworkLOROnBoundary(d, g); /* A4: only the diagonal is stored, 1 */
    for (int t = 0; t < ns; t++)
      if (PatchworkLORSlotStored(d, axis_only, g, slots[t])) out[e++] = identity ? 1.0 : GatherSlot(d, Ae, g, slots[t]);
  }
}

long long PatchworkLORPatternCountRef(const PatchworkLORDesc *d, int axis_only, long long *rowptr)
{
  const long nrow = PatchworkLORRowCount(d);
  int        slots[PW_LOR_MAX_SLOTS];
  const int  ns = PatchworkLORSlotCandidates(d, axis_only, slots);

  CheckWholeGrid(d);
  rowptr[0] = 0;
  for (long row = 0; row < nrow; row++) {
    int g[3], c = 0;

    PatchworkLORRowNode(d, row, g);
    for (int t = 0; t < ns; t++) c += PatchworkLORSlotStored(d, axis_only, g, slots[t]);
    rowptr[row + 1] = rowptr[row] + c;
  }
  return rowptr[nrow];
}

void PatchworkLORPatternFillRef(const PatchworkLORDesc *d, int axis_only, const long long *rowptr, int *cols, long long *keep)
{
  const long nrow = PatchworkLORRowCount(d);
  const int  S    = PatchworkLORSlots(d);
  int        slots[PW_LOR_MAX_SLOTS];
  const int  ns = PatchworkLORSlotCandidates(d, axis_only, slots);

  for (long row = 0; row < nrow; row++) {
    long long e = rowptr[row];
    int       g[3];

    PatchworkLORRowNode(d, row, g);
    for (int t = 0; t < ns; t++) {
      const int s = slots[t];
      int       nb[3];

      if (!PatchworkLORSlotStored(d, axis_only, g, s)) continue;
      PatchworkLORSlotNeighbour(d, g, s, nb);
      cols[e] = PatchworkLORGridIndex(d, nb);
      if (keep) keep[e] = (long long)row * S + s;
      e++;
    }
  }
}

int PatchworkLORSplitDescValid(const PatchworkLORDesc *d, long long rstart, long long rend)
{
  if (!d || (d->dim != 2 && d->dim != 3)) return 0;
  for (int i = 0; i < 3; i++) {
    const int lo = d->row_start[i] > 0 ? d->row_start[i] - 1 : 0, hi = d->row_start[i] + d->row_size[i] < d->nodes[i] ? d->row_start[i] + d->row_size[i] + 1 : d->nodes[i];

    if (d->nodes[i] < 1 || (i >= d->dim && d->nodes[i] != 1) || d->row_size[i] < 0 || d->row_start[i] < 0 || d->row_start[i] + d->row_size[i] > d->nodes[i]) return 0;
    if (d->row_size[i] && (d->coord_start[i] < 0 || d->coord_start[i] > lo || d->coord_start[i] + d->coord_size[i] < hi || d->coord_start[i] + d->coord_size[i] > d->nodes[i])) return 0;
  }
  return rend - rstart == PatchworkLORRowCount(d);
}

int PatchworkLORSplitPatternCountRef(const PatchworkLORDesc *d, int axis_only, const long long *l2g, long long rstart, long long rend, int *dptr, int *optr)
{
  const long nrow = PatchworkLORRowCount(d);
  int        slots[PW_LOR_MAX_SLOTS], slot[PW_LOR_MAX_SLOTS];
  long long  col[PW_LOR_MAX_SLOTS];

  if (!PatchworkLORSplitDescValid(d, rstart, rend) || (long long)nrow * PatchworkLORSlotCandidates(d, axis_only, slots) > INT_MAX) return 1;
  dptr[0] = optr[0] = 0;
  for (long row = 0; row < nrow; row++) {
    const int m = PatchworkLORRowColumns(d, axis_only, l2g, row, col, slot);
    int       nd = 0;

    if (PatchworkLORRowGlobal(d, l2g, row) != rstart + row) return 1;
    for (int q = 0; q < m; q++) nd += col[q] >= rstart && col[q] < rend;
    dptr[row + 1] = dptr[row] + nd;
    optr[row + 1] = optr[row] + m - nd;
  }
  return 0;
}

void PatchworkLORSplitPatternFillRef(const PatchworkLORDesc *d, int axis_only, const long long *l2g, long long rstart, long long rend, const int *dptr, const int *optr, int *dcol, long long *ocol, long long *keep)
{
  const long nrow = PatchworkLORRowCount(d);
  const int  S    = PatchworkLORSlots(d);
  long long *okeep = keep + dptr[nrow];
  int        slot[PW_LOR_MAX_SLOTS];
  long long  col[PW_LOR_MAX_SLOTS];

  for (long row = 0; row < nrow; row++) {
    const int m = PatchworkLORRowColumns(d, axis_only, l2g, row, col, slot);
    int       e = dptr[row], o = optr[row];

    for (int q = 0; q < m; q++) {
      if (col[q] >= rstart && col[q] < rend) {
        dcol[e]   = (int)(col[q] - rstart);
        keep[e++] = (long long)row * S + slot[q];
      } else {
        ocol[o]    = col[q];
        okeep[o++] = (long long)row * S + slot[q];
      }
    }
  }
}
