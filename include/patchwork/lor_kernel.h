/* Kernel ABI of PCLOR: assembly of the low-order-refined (LOR) matrix of a Q_k operator on a DMDA
   node grid, by macro element (Pazner et al. 2023, section 3, steps A1, A2 and A4).
   Plain C structs, no PETSc types: the CPU reference (src/core/lor_ref.c) and the CUDA kernels
   (cuda/lor_assemble.cu) take the same descriptor. Index and box conventions are those of
   tensor_kernel.h: nodes lexicographic, x fastest; 2D uses nodes[2] = 1 and the range [0,1) in z.

   The LOR mesh subdivides every cell (macro element) of the Q_k mesh at its (k+1)^dim nodes into k^dim
   Q1 sub-elements. The LOR matrix is alpha*M1 + beta*K1 of Q1 elements on that mesh, each sub-element
   integrated with 2 Gauss or 2 Gauss-Lobatto points per direction (vertex_rule) through its
   multilinear map (q1_element.h), so distorted node coordinates are allowed. Every LOR row couples a node with its 3^dim box neighbours;
   slot s = (oz+1)*9 + (oy+1)*3 + (ox+1) (2D: (oy+1)*3 + (ox+1)) names neighbour g + (ox,oy,oz).

   A1 Macro: for every cell in [cell_start, cell_end) (macro element e, lexicographic in that range,
      x fastest), Ae[(e*nloc + r)*S + s] = the macro element's own matrix entry between its local
      node r (lexicographic, (k+1)^dim of them = nloc) and the neighbour of r in slot s; S = 3^dim.
      Slots whose neighbour lies outside the macro element are zero (padding). Ae is assigned.
   A2 Gather: for every row node g in the row box (lexicographic), vals[row*S + s] = sum over the
      macro elements in the cell range that contain both g and its slot-s neighbour, visited in
      lexicographic order, of their Ae entry: the rank-local matrix row without duplicates. Slots
      whose neighbour is outside the global grid get zero. vals is assigned.
   A4 Dirichlet (only when dirichlet is set): rows of nodes on the global boundary become the
      identity row (slot of offset 0 is 1, others 0); in every other row the slots whose neighbour is
      on the global boundary become 0 (column elimination).

   The cell range must contain every cell that touches a row node, and the coordinate box every node
   of those cells. Coordinates are dim values per node, interleaved (PETSc's DMDA layout). */
#ifndef PATCHWORK_LOR_KERNEL_H
#define PATCHWORK_LOR_KERNEL_H

#include <patchwork/tensor_kernel.h>
#include <patchwork/q1_element.h>

#define PW_LOR_MAX_SLOTS 27 /* 3^dim neighbours of a LOR node */

typedef struct {
  int    dim;                            /* 2 or 3 */
  int    degree;                         /* k >= 1 (k = 1: the LOR matrix is the Q1 operator itself) */
  int    nodes[3];                       /* global node counts per direction, k*N_d+1 */
  int    cell_start[3], cell_end[3];     /* macro elements of A1 and A2: global cell range [start,end) */
  int    coord_start[3], coord_size[3];  /* box of the coordinate array */
  int    row_start[3], row_size[3];      /* box of the rows of A2 and A4 (a rank's owned nodes) */
  int    dirichlet;                      /* nonzero: eliminate global-boundary nodes in A4 */
  double alpha, beta;                    /* alpha*M + beta*K */
  int    vertex_rule;                    /* nonzero: sub-elements integrated at their vertices (2 Gauss-Lobatto
                                            points per direction), else at 2 Gauss points per direction */
} PatchworkLORDesc;

/* Global node g of row `row` of the row box (lexicographic, x fastest) */
PW_HOST_DEVICE void PatchworkLORRowNode(const PatchworkLORDesc *d, long row, int g[3])
{
  g[0] = d->row_start[0] + (int)(row % d->row_size[0]);
  g[1] = d->row_start[1] + (int)((row / d->row_size[0]) % d->row_size[1]);
  g[2] = d->row_start[2] + (int)(row / ((long)d->row_size[0] * d->row_size[1]));
}

/* The neighbour of node g in slot s */
PW_HOST_DEVICE void PatchworkLORSlotNeighbour(const PatchworkLORDesc *d, const int g[3], int s, int nb[3])
{
  nb[0] = g[0] + s % 3 - 1;
  nb[1] = g[1] + (s / 3) % 3 - 1;
  nb[2] = g[2] + (d->dim == 3 ? s / 9 - 1 : 0);
}

/* Whether node g is on the boundary of the global grid (in the dim used directions) */
PW_HOST_DEVICE int PatchworkLOROnBoundary(const PatchworkLORDesc *d, const int g[3])
{
  for (int dir = 0; dir < d->dim; dir++)
    if (g[dir] == 0 || g[dir] == d->nodes[dir] - 1) return 1;
  return 0;
}

/* PCLOR on a DMPlex mesh (src/pc/lor/lorplex.c): every cell of the operator is a macro element with
   its own (k+1)^dim nodes (lexicographic, x fastest), their coordinates stored per cell and direction
   (coords[(c*dim + e)*nodes + node]) and the coefficients at the nodes (reaction, diffusion:
   [c*nodes + node], NULL when constant). Sub-cell sub of cell c (k^dim of them, lexicographic) has
   the 2^dim vertices a (lexicographic); bit a of mask[c*k^dim + sub] is set when vertex a is an
   unknown (not a constrained node). The sub-cell's entries (a, b) with both bits set, a slower,
   are its values in the matrix's COO pattern, from v[offset[c*k^dim + sub]] on. */
typedef struct {
  int    dim, degree, nodes; /* nodes = (k+1)^dim */
  long   ncells;
  double alpha, beta;        /* alpha*r*M + beta*c*K */
  int    vertex_rule;        /* as in PatchworkLORDesc */
} PatchworkLORPlexDesc;

/* The cell node (lexicographic) of vertex a of sub-cell sub */
PW_HOST_DEVICE int PatchworkLORPlexSubcellNode(int dim, int k, int sub, int a)
{
  const int s[3] = {sub % k, (sub / k) % k, sub / (k * k)};

  return (s[0] + (a & 1)) + (k + 1) * ((s[1] + ((a >> 1) & 1)) + (k + 1) * (dim == 3 ? s[2] + ((a >> 2) & 1) : 0));
}

/* The Q1 matrix of one sub-cell (Ke, 2^dim x 2^dim) from its vertices' coordinates and coefficients
   (the reference and the kernel share it; dim a literal there, so that the loops unroll) */
PW_HOST_DEVICE void PatchworkLORPlexSubcellMatrix(int dim, const PatchworkLORPlexDesc *d, long c, int sub, const double *coords, const double *reaction, const double *diffusion, double *Ke)
{
  const int nv = 1 << dim;
  double    xv[24], r[8], dc[8];

  for (int a = 0; a < nv; a++) {
    const int node = PatchworkLORPlexSubcellNode(dim, d->degree, sub, a);
    for (int e = 0; e < dim; e++) xv[a * dim + e] = coords[(c * dim + e) * d->nodes + node];
    if (reaction) r[a] = reaction[c * d->nodes + node];
    if (diffusion) dc[a] = diffusion[c * d->nodes + node];
  }
  PatchworkQ1ElementMatrixCoef(dim, xv, d->alpha, d->beta, reaction ? r : (const double *)0, diffusion ? dc : (const double *)0, d->vertex_rule, Ke);
}

/* The kept entries of one sub-cell */
PW_HOST_DEVICE void PatchworkLORPlexSubcell(int dim, const PatchworkLORPlexDesc *d, long c, int sub, const double *coords, const double *reaction, const double *diffusion, unsigned mask, double *v)
{
  const int nv = 1 << dim;
  double    Ke[64];
  int       n = 0;

  PatchworkLORPlexSubcellMatrix(dim, d, c, sub, coords, reaction, diffusion, Ke);
  for (int a = 0; a < nv; a++) {
    if (!((mask >> a) & 1)) continue;
    for (int b = 0; b < nv; b++)
      if ((mask >> b) & 1) v[n++] = Ke[a * nv + b];
  }
}

/* Hanging nodes (P^T A_LOR P, Pazner et al. 2023, section 2.4): node n = c*nodes + node of a cell
   is the combination of unknowns with the weights xw[p], p in [xptr[n], xptr[n+1]) (an unknown node
   has one term, a constrained one none). Entry (a, b) of a sub-cell's matrix spreads over every pair
   (p, q) of vertex a's and vertex b's terms: v[t] = (xw[p] xw[q]) Ke[a][b], t running over a, b, p, q
   in that order from 0 (the order of the host's pattern, src/pc/lor/lorplex.c). Returns the number of
   entries, (sum_a terms of a)^2; with v NULL it only counts. */
PW_HOST_DEVICE long PatchworkLORPlexSubcellHanging(int dim, const PatchworkLORPlexDesc *d, long c, int sub, const double *coords, const double *reaction, const double *diffusion, const int *xptr, const double *xw, double *v)
{
  const int nv = 1 << dim;
  double    Ke[64];
  long      node[8], t = 0;

  for (int a = 0; a < nv; a++) node[a] = c * d->nodes + PatchworkLORPlexSubcellNode(dim, d->degree, sub, a);
  if (!v) {
    for (int a = 0; a < nv; a++) t += xptr[node[a] + 1] - xptr[node[a]];
    return t * t;
  }
  PatchworkLORPlexSubcellMatrix(dim, d, c, sub, coords, reaction, diffusion, Ke);
  for (int a = 0; a < nv; a++)
    for (int b = 0; b < nv; b++)
      for (int p = xptr[node[a]]; p < xptr[node[a] + 1]; p++)
        for (int q = xptr[node[b]]; q < xptr[node[b] + 1]; q++) v[t++] = (xw[p] * xw[q]) * Ke[a * nv + b];
  return t;
}

/* The slots that can be stored, ascending, into slots[]; returns how many (axis_only: the centre and
   its 2 dim axis neighbours). Loops over these alone skip what PatchworkLORSlotStored() rejects first. */
PW_HOST_DEVICE int PatchworkLORSlotCandidates(const PatchworkLORDesc *d, int axis_only, int slots[PW_LOR_MAX_SLOTS])
{
  const int S = d->dim == 3 ? 27 : 9;
  int       n = 0;

  for (int s = 0; s < S; s++)
    if (!axis_only || (s % 3 != 1) + ((s / 3) % 3 != 1) + (d->dim == 3 && s / 9 != 1) <= 1) slots[n++] = s;
  return n;
}

/* The row of node g when the row box is the whole grid (one rank): its lexicographic index */
PW_HOST_DEVICE int PatchworkLORGridIndex(const PatchworkLORDesc *d, const int g[3])
{
  return g[0] + d->nodes[0] * (g[1] + d->nodes[1] * g[2]);
}

/* Whether the matrix stores slot s of the row of node g: its neighbour is inside the grid, on an
   axis through g when axis_only (box cells with the vertex rule: the other couplings vanish), and,
   with dirichlet, neither node is on the boundary unless s is the centre (eliminated rows and
   columns keep only their diagonal) */
PW_HOST_DEVICE int PatchworkLORSlotStored(const PatchworkLORDesc *d, int axis_only, const int g[3], int s)
{
  int nb[3], naxes = 0;

  PatchworkLORSlotNeighbour(d, g, s, nb);
  for (int i = 0; i < 3; i++) {
    if (nb[i] < 0 || nb[i] >= d->nodes[i]) return 0;
    naxes += nb[i] != g[i];
  }
  if (axis_only && naxes > 1) return 0;
  return !(d->dirichlet && naxes > 0 && (PatchworkLOROnBoundary(d, g) || PatchworkLOROnBoundary(d, nb)));
}

/* The stored slots of row `row` of the row box (any box, a rank's owned nodes) with their columns'
   global numbers, ascending by column: l2g gives the global number of every node of the coordinate
   box (lexicographic, x fastest). Writes m entries into col[] and slot[], returns m. */
PW_HOST_DEVICE int PatchworkLORRowColumns(const PatchworkLORDesc *d, int axis_only, const long long *l2g, long row, long long col[PW_LOR_MAX_SLOTS], int slot[PW_LOR_MAX_SLOTS])
{
  int       slots[PW_LOR_MAX_SLOTS], g[3], m = 0;
  const int ns = PatchworkLORSlotCandidates(d, axis_only, slots);

  PatchworkLORRowNode(d, row, g);
  for (int t = 0; t < ns; t++) {
    const int s = slots[t];
    int       nb[3], q;
    long long c;

    if (!PatchworkLORSlotStored(d, axis_only, g, s)) continue;
    PatchworkLORSlotNeighbour(d, g, s, nb);
    c = l2g[((long long)(nb[2] - d->coord_start[2]) * d->coord_size[1] + (nb[1] - d->coord_start[1])) * d->coord_size[0] + (nb[0] - d->coord_start[0])];
    for (q = m++; q > 0 && col[q - 1] > c; q--) { /* insertion sort: at most 27 */
      col[q]  = col[q - 1];
      slot[q] = slot[q - 1];
    }
    col[q]  = c;
    slot[q] = s;
  }
  return m;
}

/* The global number of row `row`'s own node (l2g as above) */
PW_HOST_DEVICE long long PatchworkLORRowGlobal(const PatchworkLORDesc *d, const long long *l2g, long row)
{
  int g[3];

  PatchworkLORRowNode(d, row, g);
  return l2g[((long long)(g[2] - d->coord_start[2]) * d->coord_size[1] + (g[1] - d->coord_start[1])) * d->coord_size[0] + (g[0] - d->coord_start[0])];
}

#ifdef __cplusplus
extern "C" {
#endif

/* Sizes: slots per row (3^dim), nodes per macro element ((k+1)^dim), macro elements in the cell
   range, rows in the row box */
int  PatchworkLORSlots(const PatchworkLORDesc *d);
int  PatchworkLORMacroNodes(const PatchworkLORDesc *d);
long PatchworkLORMacroCount(const PatchworkLORDesc *d);
long PatchworkLORRowCount(const PatchworkLORDesc *d);

/* CPU reference (src/core/lor_ref.c) */
void PatchworkLORMacroRef(const PatchworkLORDesc *d, const double *coords, double *Ae);
void PatchworkLORGatherRef(const PatchworkLORDesc *d, const double *Ae, double *vals);
void PatchworkLORDirichletRef(const PatchworkLORDesc *d, double *vals);
/* out[i] = vals[map[i]], i < n: the entries the matrix stores, in the order of its COO pattern
   (the rows' slots without the ones that are structurally absent) */
void PatchworkLORCompactRef(long n, const long long *map, const double *vals, double *out);
/* A2, A4 and A3 in one pass, for the one-rank route whose pattern is the matrix's CSR (the row box the
   whole grid, the cell range every cell, the pattern of PatchworkLORPattern*() with axis_only, fewer
   than 2^31 entries): out[rowptr[row] + j] = the entry
   of the j-th stored slot of the row, i.e. the value Gather, Dirichlet and Compact (with that
   pattern's keep map) give, bit for bit (the same sums in the same order; a Dirichlet row stores
   only its diagonal, 1). No rows x slots array and no map: about 650 bytes less traffic per row in
   3D. rowptr: the pattern's row starts (int, as the matrix's CSR has them). */
void PatchworkLORGatherCSRRef(const PatchworkLORDesc *d, int axis_only, const double *Ae, const int *rowptr, double *out);

/* The stored pattern when the row box is the whole grid (one rank; rows and columns numbered like the
   nodes): row by row, slots ascending (so columns ascending), the slots PatchworkLORSlotStored() keeps.
   Count: rowptr[0..nrow] (rowptr[0] = 0), returns the entry count nnz. Fill: cols[nnz] the columns,
   keep[nnz] = row * S + s, the map of PatchworkLORCompact*() from the rows x slots of A2 to them
   (NULL: not written; GatherCSR needs none). */
long long PatchworkLORPatternCountRef(const PatchworkLORDesc *d, int axis_only, long long *rowptr);
void      PatchworkLORPatternFillRef(const PatchworkLORDesc *d, int axis_only, const long long *rowptr, int *cols, long long *keep);

/* The stored pattern of a rank's rows (the row box; several ranks) split as a parallel AIJ matrix keeps
   it: columns numbered by l2g (PatchworkLORRowColumns()), row `row` the global row rstart + row; the
   diagonal block holds the columns in [rstart, rend), as column - rstart, the off-diagonal block the
   others, global; each block's row ascending. Count: dptr[0..nrow], optr[0..nrow] the two blocks' row
   starts (dptr[0] = optr[0] = 0); returns 0, or 1 if the descriptor is not such a pattern's
   (PatchworkLORSplitDescValid()), a row's own node is not global row rstart + row, or the entries
   might not fit int (nrow times the candidate slots, PatchworkLORSlotCandidates(), above 2^31 - 1).
   Fill: dcol[dptr[nrow]], ocol[optr[nrow]], and keep[dptr[nrow] + optr[nrow]] (required) = row * S +
   s, the map of PatchworkLORCompact*() from the rows x slots of A2: the diagonal block's entries first,
   then the off-diagonal block's. */
/* Whether d fits a split pattern: 2D or 3D, the row box inside the grid, the coordinate box inside it
   and holding the row box grown by one node (clipped to the grid), rend - rstart the row count */
int  PatchworkLORSplitDescValid(const PatchworkLORDesc *d, long long rstart, long long rend);
int  PatchworkLORSplitPatternCountRef(const PatchworkLORDesc *d, int axis_only, const long long *l2g, long long rstart, long long rend, int *dptr, int *optr);
void PatchworkLORSplitPatternFillRef(const PatchworkLORDesc *d, int axis_only, const long long *l2g, long long rstart, long long rend, const int *dptr, const int *optr, int *dcol, long long *ocol, long long *keep);

/* CUDA kernels (cuda/lor_assemble.cu) on device pointers, in stream (a cudaStream_t, NULL: default);
   they return 0 or a cudaError_t code. Macro sums the sub-element matrices in shared memory in
   another order than the reference (and with FMA), so its entries may differ in the last bits; it is
   deterministic. Gather and Dirichlet reproduce the reference bit for bit. */
int PatchworkLORMacroCUDA(const PatchworkLORDesc *d, const double *coords, double *Ae, void *stream);
int PatchworkLORGatherCUDA(const PatchworkLORDesc *d, const double *Ae, double *vals, void *stream);
int PatchworkLORDirichletCUDA(const PatchworkLORDesc *d, double *vals, void *stream);
int PatchworkLORCompactCUDA(long n, const long long *map, const double *vals, double *out, void *stream);
int PatchworkLORGatherCSRCUDA(const PatchworkLORDesc *d, int axis_only, const double *Ae, const int *rowptr, double *out, void *stream);
/* A1 to A4 in one pass on GatherCSR's route (same descriptors, pattern and output), from the node
   coordinates: no Ae. The macro elements are taken in 2^dim colors (cell parities), one launch each;
   a block sums a macro element's matrix in shared memory as Macro does and writes its rows into the
   CSR, the first color that holds an entry storing it and later ones adding (the entries those of the
   reference's Macro + GatherCSR but for the order of their up to 2^dim sub-element terms and the
   element matrices' rounding; deterministic). out needs no initialization: every entry is assigned. */
int PatchworkLORMacroCSRCUDA(const PatchworkLORDesc *d, int axis_only, const double *coords, const int *rowptr, double *out, void *stream);
/* The same pattern as the reference's, exactly; *nnz comes back to the host */
int PatchworkLORPatternCountCUDA(const PatchworkLORDesc *d, int axis_only, long long *rowptr, long long *nnz, void *stream);
int PatchworkLORPatternFillCUDA(const PatchworkLORDesc *d, int axis_only, const long long *rowptr, int *cols, long long *keep, void *stream);
/* The split pattern as the reference's, exactly (all arrays on the device); Count returns
   cudaErrorInvalidValue where the reference returns 1, and the blocks' entry counts to the host in
   *nd and *no */
int PatchworkLORSplitPatternCountCUDA(const PatchworkLORDesc *d, int axis_only, const long long *l2g, long long rstart, long long rend, int *dptr, int *optr, int *nd, int *no, void *stream);
int PatchworkLORSplitPatternFillCUDA(const PatchworkLORDesc *d, int axis_only, const long long *l2g, long long rstart, long long rend, const int *dptr, const int *optr, int *dcol, long long *ocol, long long *keep, void *stream);

/* DMPlex: the values of every sub-cell of every cell (PatchworkLORPlexSubcell), on the host and
   by one CUDA thread per sub-cell (results equal but for FMA contractions) */
void PatchworkLORPlexValuesRef(const PatchworkLORPlexDesc *d, const double *coords, const double *reaction, const double *diffusion, const unsigned char *mask, const long long *offset, double *v);
int  PatchworkLORPlexValuesCUDA(const PatchworkLORPlexDesc *d, const double *coords, const double *reaction, const double *diffusion, const unsigned char *mask, const long long *offset, double *v, void *stream);
/* The same with hanging nodes (PatchworkLORPlexSubcellHanging), sub-cell i's entries from v[offset[i]] on */
void PatchworkLORPlexHangingValuesRef(const PatchworkLORPlexDesc *d, const double *coords, const double *reaction, const double *diffusion, const int *xptr, const double *xw, const long long *offset, double *v);
int  PatchworkLORPlexHangingValuesCUDA(const PatchworkLORPlexDesc *d, const double *coords, const double *reaction, const double *diffusion, const int *xptr, const double *xw, const long long *offset, double *v, void *stream);

#ifdef __cplusplus
}
#endif
#endif
