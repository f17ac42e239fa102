/* CPU reference of the P1 assembly and the layout it works on (contract: include/patchwork/p1_kernel.h):
   the vertex graph's CSR pattern, the patches of the CUDA kernel (Fu et al. 2014, section 4: vertices
   partitioned into patches, vertices renumbered patch by patch, each cell given to the patch of its first
   vertex), and the serial accumulation of the element matrices. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <patchwork/p1_kernel.h>

/* Load what a later iteration reads: the graph loops below wait on scattered reads of arrays larger than
   the cache, not on arithmetic (the hints took a third off them at 2.1M vertices) */
#define Prefetch(p) PW_PREFETCH(p, 0)

/* The positions of the n columns v[] in the sorted row col[lo..hi) (-1 where missing): for the short rows of
   a mesh one branch-free pass over the row, each position the count of the row's columns below the one
   wanted (a binary search mispredicts a branch at about every step); longer rows by binary search */
static inline void FindColumns(const int *col, long long lo, long long hi, int n, const int v[], long long z[])
{
  if (hi - lo > 64) {
    for (int l = 0; l < n; l++) z[l] = PatchworkP1FindColumn(col, lo, hi, v[l]);
    return;
  }
  { /* four counters side by side (a triangle counts its last vertex twice): one vector compare a column */
    const int w[4] = {v[0], v[1], v[2], n > 3 ? v[3] : v[2]};
    int       k[4] = {0, 0, 0, 0};

    for (long long i = lo; i < hi; i++) {
      const int c = col[i];
      for (int l = 0; l < 4; l++) k[l] += c < w[l];
    }
    for (int l = 0; l < n; l++) z[l] = lo + k[l];
  }
  for (int l = 0; l < n; l++)
    if (z[l] >= hi || col[z[l]] != v[l]) z[l] = -1;
}

void PatchworkP1AssembleRef(const PatchworkP1Desc *d, double *vals, PatchworkP1Errors *err)
{
  const int       n   = d->dim + 1;
  const long long nnz = d->nnz;
  long long       degenerate = 0, missing = 0;
  /* with vals_pos: the sums in pattern order first, then moved (adding through vals_pos scatters every
     addition; without the memory for that, it does) */
  double          *acc = d->vals_pos && nnz > 0 ? (double *)malloc(sizeof(double) * (size_t)nnz) : NULL;
  double          *sum = acc ? acc : vals;
  const long long *pos = acc ? NULL : d->vals_pos;

  if (nnz > 0) memset(sum, 0, sizeof(double) * (size_t)nnz);
  for (long long c = 0; c < d->ncell; c++) {
    double xv[4 * 3], Ae[16];
    int    v[4];

    for (int k = 0; k < n; k++) {
      v[k] = d->cells[k * d->ncell + c];
      for (int e = 0; e < d->dim; e++) xv[k * d->dim + e] = d->coords[(long long)e * d->nvert + v[k]];
    }
    degenerate += PatchworkP1ElementMatrix(d->dim, xv, d->sigma ? d->sigma[d->sigma_map ? d->sigma_map[c] : c] : 1.0, d->lambda, Ae);
    for (int k = 0; k < n; k++) {
      long long z[4];

      FindColumns(d->col, d->rowptr[v[k]], d->rowptr[v[k] + 1], n, v, z);
      for (int l = 0; l < n; l++) {
        if (z[l] < 0) missing++;
        else sum[pos ? pos[z[l]] : z[l]] += Ae[k * n + l];
      }
    }
  }
  if (acc) {
    for (long long z = 0; z < nnz; z++) vals[d->vals_pos[z]] = acc[z];
    free(acc);
  }
  if (err) {
    err->degenerate = degenerate;
    err->missing    = missing;
  }
}

void PatchworkP1LayoutDestroy(PatchworkP1Layout *L)
{
  free(L->perm);
  free(L->cell_perm);
  free(L->cells);
  free(L->rowptr);
  free(L->col);
  free(L->patch_ptr);
  free(L->patch_cell);
  memset(L, 0, sizeof(*L));
}

void PatchworkP1LayoutDesc(const PatchworkP1Layout *L, PatchworkP1Desc *d)
{
  memset(d, 0, sizeof(*d));
  d->dim        = L->dim;
  d->nvert      = L->nvert;
  d->ncell      = L->ncell;
  d->cells      = L->cells;
  d->nnz        = L->rowptr[L->nvert];
  d->rowptr     = L->rowptr;
  d->col        = L->col;
  d->npatch     = L->npatch;
  d->patch_ptr  = L->patch_ptr;
  d->patch_cell = L->patch_cell;
}

/* Ascending order of a row's columns: insertion sort for the short rows of a mesh, qsort() for long ones */
static int CompareInt(const void *a, const void *b)
{
  const int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

static void SortRow(int *a, long long n)
{
  if (n > 64) {
    qsort(a, (size_t)n, sizeof(int), CompareInt);
    return;
  }
  for (long long i = 1; i < n; i++) {
    const int x = a[i];
    long long j = i - 1;

    for (; j >= 0 && a[j] > x; j--) a[j + 1] = a[j];
    a[j + 1] = x;
  }
}

/* The vertex graph: the row of vertex v holds v and every vertex it shares a cell with. Without perm, in
   the old numbering, the columns of a row in the order they first appear in v's cells (cell order, then
   vertex order within the cell), the order GrowPatches() queues them in. With perm (new -> old) and inv
   (old -> new): row r is that of vertex perm[r], its columns the new numbers, ascending. One pass over the
   cells of each vertex, col grown as needed (a counting pass first cost as much again). vc_ptr/vc: the
   cells of each vertex. mark: nvert ints of scratch. */
static int VertexGraph(int n, int nvert, const int *cells_in, const long long *vc_ptr, const int *vc, const int *perm, const int *inv, int *mark, long long **optr, int **ocol)
{
  long long *ptr, z = 0, cap;
  int       *col;

  /* about the row length of tetrahedral meshes (15 for 23 cell-vertex incidences per vertex) */
  cap = vc_ptr[nvert] * (n - 1) / 4 + nvert + 16;
  ptr = (long long *)malloc(sizeof(long long) * ((size_t)nvert + 1));
  col = (int *)malloc(sizeof(int) * (size_t)cap);
  if (!ptr || !col) {
    free(ptr);
    free(col);
    return 2;
  }
  for (int v = 0; v < nvert; v++) mark[v] = -1;
  for (int r = 0; r < nvert; r++) {
    const int       v    = perm ? perm[r] : r;
    const long long most = (vc_ptr[v + 1] - vc_ptr[v]) * n; /* this row has at most that many entries */

    if (z + most > cap) {
      const long long want = 2 * cap > z + most ? 2 * cap : z + most;
      int            *grown = (int *)realloc(col, sizeof(int) * (size_t)want);

      if (!grown) {
        free(ptr);
        free(col);
        return 2;
      }
      col = grown;
      cap = want;
    }
    ptr[r] = z;
    if (r + 2 < nvert) { /* the cells of the row after next */
      const int u = perm ? perm[r + 2] : r + 2;

      for (long long i = vc_ptr[u]; i < vc_ptr[u + 1]; i++) Prefetch(cells_in + (long long)vc[i] * n);
    }
    for (long long i = vc_ptr[v]; i < vc_ptr[v + 1]; i++) {
      const int *cv = cells_in + (long long)vc[i] * n;

      for (int k = 0; k < n; k++) {
        const int w = cv[k];
        if (mark[w] != r) {
          mark[w]  = r;
          col[z++] = inv ? inv[w] : w;
        }
      }
    }
    if (perm) SortRow(col + ptr[r], z - ptr[r]);
  }
  ptr[nvert] = z;
  *optr      = ptr;
  *ocol      = col;
  return 0;
}

/* Patches grown breadth-first: a patch takes vertices from its queue while their rows fit in
   patch_bytes; the next patch starts at the first unassigned vertex left in that queue (a neighbour of
   the patch just closed), else at the first unassigned vertex in the old order. Fills perm (new -> old),
   inv (old -> new), patch (new vertex -> patch) and patch_ptr; returns the patch count. */
static int GrowPatches(int dim, int nvert, const long long *optr, const int *ocol, size_t patch_bytes, int *perm, int *inv, int *patch, int *patch_ptr, int *queue, int *stamp)
{
  int r = 0, np = 0, scan = 0, qh = 0, qt = 0;

  for (int v = 0; v < nvert; v++) inv[v] = stamp[v] = -1;
  patch_ptr[0] = 0;
  while (r < nvert) {
    const int start = r;
    size_t    bytes = PatchworkP1PatchBytes(dim, 0, 0);
    int       seed  = -1;

    for (; qh < qt && seed < 0; qh++)
      if (inv[queue[qh]] < 0) seed = queue[qh];
    if (seed < 0) {
      while (inv[scan] >= 0) scan++;
      seed = scan;
    }
    qh = qt    = 0;
    queue[qt++] = seed;
    stamp[seed] = np;
    while (qh < qt) {
      const int    v   = queue[qh];
      const size_t add = PatchworkP1PatchBytes(dim, 1, optr[v + 1] - optr[v]) - PatchworkP1PatchBytes(dim, 0, 0);

      if (r > start && bytes + add > patch_bytes) break;
      if (qh + 2 < qt) { /* what the vertex after next looks at */
        const int u = queue[qh + 2];

        for (long long i = optr[u]; i < optr[u + 1]; i++) {
          Prefetch(&inv[ocol[i]]);
          Prefetch(&stamp[ocol[i]]);
        }
      }
      if (qh + 4 < qt) Prefetch(&ocol[optr[queue[qh + 4]]]);
      qh++;
      bytes += add;
      inv[v]     = r;
      perm[r]    = v;
      patch[r++] = np;
      for (long long i = optr[v]; i < optr[v + 1]; i++) {
        const int w = ocol[i];
        if (inv[w] < 0 && stamp[w] != np) {
          stamp[w]    = np;
          queue[qt++] = w;
        }
      }
    }
    patch_ptr[++np] = r;
  }
  return np;
}

/* Old cell c of cells_in (n vertices) as new cell pos of cells (structure of arrays, ncell cells), its
   vertices renumbered by inv and its lowest new vertex moved to position 0 (a transposition: the
   orientation flips, which the element matrix ignores) */
static void PlaceCell(int n, long long ncell, const int *cells_in, const int *inv, long long c, long long pos, int *cells)
{
  int v[4], kmin = 0;

  for (int k = 0; k < n; k++) {
    v[k] = inv[cells_in[c * n + k]];
    if (v[k] < v[kmin]) kmin = k;
  }
  if (kmin) {
    const int t = v[0];
    v[0]    = v[kmin];
    v[kmin] = t;
  }
  for (int k = 0; k < n; k++) cells[k * ncell + pos] = v[k];
}

/* PatchworkP1LayoutCreate() (ordered false: patches grown) and PatchworkP1LayoutCreateOrdered() (ordered
   true: the vertices numbered by order, or kept when it is NULL; the cells kept in their order; one patch) */
static int LayoutCreate(int dim, int nvert, long long ncell, const int *cells_in, size_t patch_bytes, int ordered, const int *order, PatchworkP1Layout *L)
{
  const int  n = dim + 1;
  long long *vc_ptr = NULL, *optr = NULL;
  int       *vc = NULL, *ocol = NULL, *inv = NULL, *patch = NULL, *queue = NULL, *stamp = NULL;
  int        ret = 2;

  memset(L, 0, sizeof(*L));
  if ((dim != 2 && dim != 3) || nvert < 0 || ncell < 0 || ncell > INT_MAX || (ncell > 0 && !cells_in)) return 1;
  L->dim   = dim;
  L->nvert = nvert;
  L->ncell = ncell;

  /* Memory is reused where an array dies as another is born (first touches of fresh pages cost as much as
     the work here on large meshes): vc, the cells of each vertex, becomes L->cells (the same size), and the
     unsorted graph's columns L->cell_perm */
  vc_ptr       = (long long *)calloc((size_t)nvert + 1, sizeof(long long));
  vc           = (int *)malloc(sizeof(int) * ((size_t)ncell * n + 1));
  inv          = (int *)malloc(sizeof(int) * ((size_t)nvert + 1));
  stamp        = (int *)malloc(sizeof(int) * ((size_t)nvert + 1));
  L->perm      = (int *)malloc(sizeof(int) * ((size_t)nvert + 1));
  L->patch_ptr = (int *)malloc(sizeof(int) * (ordered ? 2 : (size_t)nvert + 2));
  if (!vc_ptr || !vc || !inv || !stamp || !L->perm || !L->patch_ptr) goto done;
  if (!ordered) {
    patch     = (int *)malloc(sizeof(int) * ((size_t)nvert + 1));
    queue     = (int *)malloc(sizeof(int) * ((size_t)nvert + 1));
    L->rowptr = (long long *)malloc(sizeof(long long) * ((size_t)nvert + 1));
    if (!patch || !queue || !L->rowptr) goto done;
  }
  /* the cells of each vertex (the vertices checked on the way) */
  for (long long i = 0; i < ncell * n; i++) {
    if ((unsigned)cells_in[i] >= (unsigned)nvert) {
      ret = 1;
      goto done;
    }
    vc_ptr[cells_in[i] + 1]++;
  }
  for (int v = 0; v < nvert; v++) vc_ptr[v + 1] += vc_ptr[v];
  for (long long c = 0; c < ncell; c++)
    for (int k = 0; k < n; k++) vc[vc_ptr[cells_in[c * n + k]]++] = (int)c;
  for (int v = nvert; v > 0; v--) vc_ptr[v] = vc_ptr[v - 1];
  vc_ptr[0] = 0;

  if (ordered) {
    /* the given numbering (a permutation: checked), the pattern built in it directly */
    for (int v = 0; v < nvert; v++) inv[v] = -1;
    for (int r = 0; r < nvert; r++) {
      const int v = order ? order[r] : r;

      if (v < 0 || v >= nvert || inv[v] >= 0) {
        ret = 1;
        goto done;
      }
      inv[v]     = r;
      L->perm[r] = v;
    }
    if ((ret = VertexGraph(n, nvert, cells_in, vc_ptr, vc, L->perm, inv, stamp, &L->rowptr, &L->col))) goto done;
    ret = 2;
    { /* col was grown by estimate: give back what the pattern does not use */
      int *fit = (int *)realloc(L->col, sizeof(int) * ((size_t)L->rowptr[nvert] + 1));
      if (fit) L->col = fit;
    }
    L->npatch          = 1;
    L->patch_ptr[0]    = 0;
    L->patch_ptr[1]    = nvert;
    if (!(L->patch_cell = (long long *)malloc(2 * sizeof(long long)))) goto done;
    L->patch_cell[0]   = 0;
    L->patch_cell[1]   = ncell;
    L->max_patch_rows  = nvert;
    L->max_patch_cells = ncell;
    /* the cells in their order, each one's lowest vertex moved to position 0 (into vc, done with) */
    L->cells = vc;
    vc       = NULL;
    for (long long c = 0; c < ncell; c++) PlaceCell(n, ncell, cells_in, inv, c, c, L->cells);
    ret = 0;
    goto done;
  }

  if ((ret = VertexGraph(n, nvert, cells_in, vc_ptr, vc, NULL, NULL, stamp, &optr, &ocol))) goto done;
  ret = 2;
  L->npatch = GrowPatches(dim, nvert, optr, ocol, patch_bytes, L->perm, inv, patch, L->patch_ptr, queue, stamp);
  for (int v = 0; v < nvert; v++) inv[L->perm[v]] = v;

  /* the pattern in the new numbering, columns sorted. The graph is symmetric (c is in row r iff r is in
     row c), so appending each column c, in increasing order, to the rows of its neighbours sorts every
     row without comparisons (vc_ptr, free now, holds where each row is filled to) */
  L->rowptr[0] = 0;
  for (int r = 0; r < nvert; r++) L->rowptr[r + 1] = L->rowptr[r] + optr[L->perm[r] + 1] - optr[L->perm[r]];
  if (!(L->col = (int *)malloc(sizeof(int) * ((size_t)L->rowptr[nvert] + 1)))) goto done;
  for (int r = 0; r < nvert; r++) vc_ptr[r] = L->rowptr[r];
  for (int c = 0; c < nvert; c++) {
    const int old = L->perm[c];

    if (c + 16 < nvert) Prefetch(&optr[L->perm[c + 16]]);
    if (c + 8 < nvert) Prefetch(&ocol[optr[L->perm[c + 8]]]);
    if (c + 4 < nvert) {
      const int u = L->perm[c + 4];

      for (long long i = optr[u]; i < optr[u + 1]; i++) Prefetch(&inv[ocol[i]]);
    }
    for (long long i = optr[old]; i < optr[old + 1]; i++) L->col[vc_ptr[inv[ocol[i]]]++] = c;
  }
  { /* cell_perm in the old pattern's columns, done with, when they have room (realloc() copies to grow) */
    const size_t bytes = sizeof(long long) * ((size_t)ncell + 1);

    if (bytes <= sizeof(int) * (size_t)optr[nvert]) {
      if (!(L->cell_perm = (long long *)realloc(ocol, bytes))) goto done;
      ocol = NULL;
    } else if (!(L->cell_perm = (long long *)malloc(bytes))) goto done;
  }

  /* cells by the patch of their lowest new vertex (moved to position 0), stable: the patch of each cell
     (in vc, free now), the cells of each patch, then the cells' vertices in that order (one scattered
     write per cell, not one per vertex) */
  if (!(L->patch_cell = (long long *)calloc((size_t)L->npatch + 1, sizeof(long long)))) goto done;
  for (long long c = 0; c < ncell; c++) {
    int lo = inv[cells_in[c * n]];
    for (int k = 1; k < n; k++)
      if (inv[cells_in[c * n + k]] < lo) lo = inv[cells_in[c * n + k]];
    vc[c] = patch[lo];
    L->patch_cell[vc[c] + 1]++;
  }
  for (int p = 0; p < L->npatch; p++) L->patch_cell[p + 1] += L->patch_cell[p];
  for (long long c = 0; c < ncell; c++) L->cell_perm[L->patch_cell[vc[c]]++] = c;
  L->cells = vc; /* vc done with */
  vc       = NULL;
  for (long long pos = 0; pos < ncell; pos++) PlaceCell(n, ncell, cells_in, inv, L->cell_perm[pos], pos, L->cells);
  for (int p = L->npatch; p > 0; p--) L->patch_cell[p] = L->patch_cell[p - 1];
  L->patch_cell[0] = 0;

  for (int p = 0; p < L->npatch; p++) {
    if (L->patch_ptr[p + 1] - L->patch_ptr[p] > L->max_patch_rows) L->max_patch_rows = L->patch_ptr[p + 1] - L->patch_ptr[p];
    if (L->patch_cell[p + 1] - L->patch_cell[p] > L->max_patch_cells) L->max_patch_cells = L->patch_cell[p + 1] - L->patch_cell[p];
  }
  ret = 0;

done:
  free(vc_ptr);
  free(vc);
  free(optr);
  free(ocol);
  free(inv);
  free(patch);
  free(queue);
  free(stamp);
  if (ret) PatchworkP1LayoutDestroy(L);
  return ret;
}

int PatchworkP1LayoutCreate(int dim, int nvert, long long ncell, const int *cells_in, size_t patch_bytes, PatchworkP1Layout *L)
{
  return LayoutCreate(dim, nvert, ncell, cells_in, patch_bytes, 0, NULL, L);
}

int PatchworkP1LayoutCreateOrdered(int dim, int nvert, long long ncell, const int *cells_in, const int *order, PatchworkP1Layout *L)
{
  return LayoutCreate(dim, nvert, ncell, cells_in, 0, 1, order, L);
}
