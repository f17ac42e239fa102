/* One level of non-conforming refinement of a DMPlex: the marked cells of a conforming serial mesh of
   quadrilaterals or hexahedra are split into 2^dim children each, and the result is a PETSc tree
   (DMPlexSetTree() over the default reference tree), so that PETSc itself derives the constraints of
   the hanging faces and edges (DMGetDefaultConstraints()), which src/mat/tensor/plex_hanging.c reads.

   The new mesh is built from cell-vertex lists (the unsplit cells, then the children), so each of its
   points is either a point of the old mesh (all its vertices are old) or lies inside one old point,
   its origin: of the old points its new vertices stand for (edge midpoints, face and cell centres),
   the one of the highest dimension. A new point hangs when its origin, a face or an edge, is still a
   point of the new mesh (it bounds an unsplit cell): its tree parent is that point, its childID the
   point of the reference tree at the same place in the reference face (edge). PETSc lays the
   reference constraint onto the mesh by matching the closures of the parent and of the reference
   parent point by point, and it takes the child's own dofs in the reference child's order, so the
   place is read through the parent's closure order and a child laid the other way is turned
   (DMPlexOrientPoint()).

   The old mesh may be such a tree itself (one more level per call, 1-irregular throughout): an edge or
   face of a split cell that already has a hanging vertex (a tree child: the midpoint or centre its fine
   neighbours made) gives that vertex to the children, so their points on it are the old hanging points
   again. An old point keeps its parent as long as the parent is still a point of the new mesh, and is
   conforming once every cell around the parent is split. A cell whose faces or edges hang may be split
   only together with every cell around their parents, so that no parent ever hangs itself: PETSc
   resolves one level of constraints, not chains. */
#include "../../sys/pwimpl.h"

#define PW_REFINE_TOL 1e-10 /* reference coordinates are dyadic: any match is exact */

typedef struct {
  DM         dm; /* the old mesh */
  PetscInt   dim, cdim, nc; /* nc = 2^dim corners per cell */
  PetscInt   pEnd, vStart, vEnd, cStart, cEnd;
  PetscInt  *newv;      /* old point -> its vertex in the new mesh (old vertices, and the midpoints and centres of the points of split cells); -1 */
  PetscInt   nv;        /* vertices of the new mesh */
  PetscInt  *vorig;     /* new vertex -> the old point it stands for */
  PetscInt   ncells, nkept; /* cells of the new mesh; the first nkept are the unsplit old cells */
  PetscInt  *kept;      /* new cell i < nkept -> its old cell */
  PetscInt   ncl;       /* closure points of a cell: 9 (quadrilateral), 27 (hexahedron) */
  PetscInt  *keptpts;   /* the closures of the kept cells (nkept x ncl), taken once for BuildCells() and Classify() */
  unsigned char *keptmasks; /* their vertex sets over the cell's corners (CellMasks()) */
  PetscInt  *split;     /* new cell i >= nkept -> its old cell split[(i - nkept) / nc] */
  PetscInt  *cells;     /* cell-vertex lists of the new mesh (closure order) */
  PetscReal *coords;    /* nv x cdim */
  PetscReal  corner[8][3]; /* the reference cell's corners in closure order */
} Refine;

/* The depth strata of a DMPlex (contiguous ranges), so that a point's depth is found without a label
   lookup: such lookups (depth, and the cell types inside DMPlexGetTransitiveClosure()) dominated the
   refinement of large meshes */
typedef struct {
  PetscInt depth, start[4], end[4];
} Strata;

static PetscErrorCode StrataGet(DM dm, Strata *s)
{
  PetscFunctionBegin;
  PetscCall(DMPlexGetDepth(dm, &s->depth));
  PetscCheck(s->depth <= 3, PETSC_COMM_SELF, PETSC_ERR_SUP, "DMPlex of depth %" PetscInt_FMT, s->depth);
  for (PetscInt d = 0; d < 4; d++) {
    s->start[d] = s->end[d] = 0;
    if (d <= s->depth) PetscCall(DMPlexGetDepthStratum(dm, d, &s->start[d], &s->end[d]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline PetscInt StrataDepth(const Strata *s, PetscInt p)
{
  for (PetscInt d = 0; d <= s->depth; d++)
    if (p >= s->start[d] && p < s->end[d]) return d;
  return -1;
}

/* The vertices of point p in closure order (at most 8) */
static PetscErrorCode ClosureVertices(DM dm, PetscInt p, PetscInt *n, PetscInt v[])
{
  PetscInt *cl = NULL, ncl, vStart, vEnd;

  PetscFunctionBegin;
  PetscCall(DMPlexGetDepthStratum(dm, 0, &vStart, &vEnd));
  PetscCall(DMPlexGetTransitiveClosure(dm, p, PETSC_TRUE, &ncl, &cl));
  *n = 0;
  for (PetscInt i = 0; i < ncl; i++)
    if (cl[2 * i] >= vStart && cl[2 * i] < vEnd) {
      PetscCheck(*n < 8, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Point %" PetscInt_FMT " has more than 8 vertices", p);
      v[(*n)++] = cl[2 * i];
    }
  PetscCall(DMPlexRestoreTransitiveClosure(dm, p, PETSC_TRUE, &ncl, &cl));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The vertices of point p as a set (no closure order), walking the cones down: no closure taken */
static PetscErrorCode ConeVertices(DM dm, const Strata *s, PetscInt p, PetscInt *n, PetscInt v[])
{
  PetscInt pts[27], np = 1;

  PetscFunctionBegin;
  pts[0] = p;
  *n     = 0;
  for (PetscInt i = 0; i < np; i++) {
    const PetscInt *cone;
    PetscInt        size;

    if (pts[i] >= s->start[0] && pts[i] < s->end[0]) {
      PetscCheck(*n < 8, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Point %" PetscInt_FMT " has more than 8 vertices", p);
      v[(*n)++] = pts[i];
      continue;
    }
    PetscCall(DMPlexGetConeSize(dm, pts[i], &size));
    PetscCall(DMPlexGetCone(dm, pts[i], &cone));
    for (PetscInt j = 0; j < size; j++) {
      PetscInt k;

      for (k = 0; k < np && pts[k] != cone[j]; k++) { }
      if (k < np) continue;
      PetscCheck(np < 27, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Point %" PetscInt_FMT " has more than 27 closure points", p);
      pts[np++] = cone[j];
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The points of the closure of cell c (at most 27, closure order) with their vertex sets as bit masks
   over the cell's corners, and the corners cv[] (closure order; NULL if not wanted): one closure, the
   masks of the edges and faces from their cones */
static PetscErrorCode CellMasks(DM dm, const Strata *s, PetscInt c, PetscInt *n, PetscInt pts[], int masks[], PetscInt *ncv, PetscInt cv[])
{
  PetscInt *cl = NULL, ncl, nv = 0;

  PetscFunctionBegin;
  PetscCall(DMPlexGetTransitiveClosure(dm, c, PETSC_TRUE, &ncl, &cl));
  PetscCheck(ncl <= 27, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cell %" PetscInt_FMT " has %" PetscInt_FMT " closure points", c, ncl);
  for (PetscInt i = 0; i < ncl; i++) {
    pts[i]   = cl[2 * i];
    masks[i] = 0;
    if (pts[i] >= s->start[0] && pts[i] < s->end[0]) {
      PetscCheck(nv < 8, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cell %" PetscInt_FMT " has more than 8 vertices", c);
      if (cv) cv[nv] = pts[i];
      masks[i] = 1 << nv++;
    }
  }
  *n = ncl;
  PetscCall(DMPlexRestoreTransitiveClosure(dm, c, PETSC_TRUE, &ncl, &cl)); /* which zeroes ncl */
  ncl = *n;
  for (PetscInt d = 1; d <= s->depth; d++)
    for (PetscInt i = 0; i < ncl; i++) {
      const PetscInt *cone;
      PetscInt        size;

      if (pts[i] < s->start[d] || pts[i] >= s->end[d]) continue;
      PetscCall(DMPlexGetConeSize(dm, pts[i], &size));
      PetscCall(DMPlexGetCone(dm, pts[i], &cone));
      for (PetscInt j = 0; j < size; j++) {
        PetscInt k;

        for (k = 0; k < ncl && pts[k] != cone[j]; k++) { }
        PetscCheck(k < ncl, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Point %" PetscInt_FMT " of the cone of %" PetscInt_FMT " is not in the closure of cell %" PetscInt_FMT, cone[j], pts[i], c);
        masks[i] |= masks[k];
      }
    }
  if (ncv) *ncv = nv;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The hanging vertex inside edge or face p of a tree (the tree child that is a vertex: the midpoint or
   centre that p's fine neighbours made), -1 if none */
static PetscErrorCode HangingVertex(DM dm, PetscInt p, PetscInt *v)
{
  PetscInt        n, vStart, vEnd;
  const PetscInt *children;

  PetscFunctionBegin;
  *v = -1;
  PetscCall(DMPlexGetDepthStratum(dm, 0, &vStart, &vEnd));
  PetscCall(DMPlexGetTreeChildren(dm, p, &n, &children));
  for (PetscInt i = 0; i < n; i++)
    if (children[i] >= vStart && children[i] < vEnd) *v = children[i];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The point of dm of depth `depth` whose vertices are v[0..n-1] (in any order), -1 if none: up from
   v[0] through the supports (no two points have the same vertices, so the first match is the one) */
static PetscErrorCode FindPoint(DM dm, const Strata *s, PetscInt depth, PetscInt n, const PetscInt v[], PetscInt *p)
{
  PetscInt up[64], nup = 1;

  PetscFunctionBegin;
  *p    = -1;
  up[0] = v[0];
  for (PetscInt i = 0; i < nup && *p < 0; i++) {
    const PetscInt  q = up[i], qdepth = StrataDepth(s, q);
    const PetscInt *supp;
    PetscInt        size;

    if (qdepth == depth) {
      PetscInt qv[8], nqv, a, b;

      PetscCall(ConeVertices(dm, s, q, &nqv, qv));
      if (nqv != n) continue;
      for (a = 0; a < n; a++) {
        for (b = 0; b < nqv && qv[b] != v[a]; b++) { }
        if (b == nqv) break;
      }
      if (a == n) *p = q;
      continue;
    }
    if (qdepth > depth) continue;
    PetscCall(DMPlexGetSupportSize(dm, q, &size));
    PetscCall(DMPlexGetSupport(dm, q, &supp));
    for (PetscInt j = 0; j < size; j++) {
      PetscInt k;

      for (k = 0; k < nup && up[k] != supp[j]; k++) { }
      if (k < nup) continue;
      PetscCheck(nup < 64, PETSC_COMM_SELF, PETSC_ERR_PLIB, "More than 64 points above vertex %" PetscInt_FMT, v[0]);
      up[nup++] = supp[j];
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether point q holds point p in its closure (p of depth pdepth), down the cones */
static PetscErrorCode InClosure(DM dm, const Strata *s, PetscInt q, PetscInt p, PetscInt pdepth, PetscBool *in)
{
  const PetscInt *cone;
  PetscInt        size;

  PetscFunctionBegin;
  *in = (PetscBool)(q == p);
  if (*in || StrataDepth(s, q) <= pdepth) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DMPlexGetConeSize(dm, q, &size));
  PetscCall(DMPlexGetCone(dm, q, &cone));
  for (PetscInt j = 0; j < size && !*in; j++) PetscCall(InClosure(dm, s, cone[j], p, pdepth, in));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The cells whose closure holds point p of dm: up to max of them in cells[], their number in *n, in the
   order of p's star (DMPlexGetTransitiveClosure() over the supports, walked here without it). In a tree
   the supports of a parent hold the points above its children too, which do not count */
static PetscErrorCode CellsAround(DM dm, const Strata *s, PetscInt p, PetscInt max, PetscInt *n, PetscInt cells[])
{
  PetscInt       st[256], nst = 1;
  const PetscInt pdepth = StrataDepth(s, p);

  PetscFunctionBegin;
  *n    = 0;
  st[0] = p;
  for (PetscInt i = 0; i < nst; i++) {
    const PetscInt *supp;
    PetscInt        size;

    PetscCall(DMPlexGetSupportSize(dm, st[i], &size));
    PetscCall(DMPlexGetSupport(dm, st[i], &supp));
    for (PetscInt j = 0; j < size; j++) {
      PetscInt k;

      for (k = 0; k < nst && st[k] != supp[j]; k++) { }
      if (k < nst) continue;
      PetscCheck(nst < 256, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The star of point %" PetscInt_FMT " has more than 256 points", p);
      st[nst++] = supp[j];
    }
  }
  for (PetscInt i = 0; i < nst; i++) {
    const PetscInt c = st[i];
    PetscBool      in;

    if (StrataDepth(s, c) != s->depth) continue;
    PetscCall(InClosure(dm, s, c, p, pdepth, &in));
    if (!in) continue;
    if (*n < max) cells[*n] = c;
    (*n)++;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Refusals, collectively: a DMPlex of quadrilaterals (hexahedra), interpolated, on rank 0 alone, no tree
   but one of ours, coordinates on the vertices only */
static PetscErrorCode CheckInput(DM dm, DMLabel marked)
{
  MPI_Comm     comm = PetscObjectComm((PetscObject)dm);
  PetscMPIInt  rank;
  PetscBool    isplex, distributed, localized;
  PetscInt     dim, bad[5] = {-1, -1, -1, -1, -1}, gbad[5], pStart, pEnd, cStart, cEnd, vStart, vEnd;
  PetscSection parents = NULL, csec;
  Strata       st;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)dm, DMPLEX, &isplex));
  PetscCheck(isplex, comm, PETSC_ERR_ARG_WRONG, "PatchworkDMPlexRefineCells() needs a DMPlex");
  PetscCheck(marked, comm, PETSC_ERR_ARG_NULL, "No label of cells to split: give a DMLabel");
  PetscCall(DMGetDimension(dm, &dim));
  PetscCheck(dim == 2 || dim == 3, comm, PETSC_ERR_SUP, "DMPlex of dimension %" PetscInt_FMT ": PatchworkDMPlexRefineCells() splits quadrilaterals (2D) and hexahedra (3D)", dim);
  PetscCall(DMPlexIsDistributed(dm, &distributed));
  PetscCheck(!distributed, comm, PETSC_ERR_ARG_WRONG, "The DMPlex is distributed: refine the serial mesh (create it with -dm_distribute 0), then distribute the tree with DMPlexDistribute()");
  PetscCall(DMGetCoordinatesLocalized(dm, &localized));
  PetscCheck(!localized, comm, PETSC_ERR_SUP, "The DMPlex has cellwise (periodic) coordinates, which a tree cannot carry: refine a mesh without them");
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(DMPlexGetChart(dm, &pStart, &pEnd));
  PetscCall(DMPlexGetHeightStratum(dm, 0, &cStart, &cEnd));
  PetscCall(DMPlexGetDepthStratum(dm, 0, &vStart, &vEnd));
  if (rank > 0 && pEnd > pStart) bad[0] = rank;
  PetscCall(DMPlexGetTree(dm, &parents, NULL, NULL, NULL, NULL));
  if (parents) PetscCall(StrataGet(dm, &st));
  /* a tree as PatchworkDMPlexRefineCells() makes it: every parent is an edge or face of a cell and hangs
     nowhere itself, its children are no higher-dimensional than it */
  for (PetscInt p = pStart; parents && p < pEnd && bad[1] < 0; p++) {
    PetscInt parent, grandparent, depth, pdepth, ncells;

    PetscCall(DMPlexGetTreeParent(dm, p, &parent, NULL));
    if (parent == p) continue;
    depth  = StrataDepth(&st, p);
    pdepth = StrataDepth(&st, parent);
    PetscCall(DMPlexGetTreeParent(dm, parent, &grandparent, NULL));
    PetscCall(CellsAround(dm, &st, parent, 0, &ncells, NULL));
    if (pdepth < 1 || pdepth >= dim || depth > pdepth || grandparent != parent || !ncells) bad[1] = p;
  }
  if (cEnd > cStart) {
    DMPlexInterpolatedFlag interp;

    PetscCall(DMPlexIsInterpolated(dm, &interp));
    if (interp != DMPLEX_INTERPOLATED_FULL) bad[2] = 1;
  }
  for (PetscInt c = cStart; c < cEnd && bad[3] < 0; c++) {
    DMPolytopeType ct;

    PetscCall(DMPlexGetCellType(dm, c, &ct));
    if (ct != (dim == 2 ? DM_POLYTOPE_QUADRILATERAL : DM_POLYTOPE_HEXAHEDRON)) bad[3] = c;
  }
  PetscCall(DMGetCoordinateSection(dm, &csec));
  if (csec && pEnd > pStart) {
    PetscInt sStart, sEnd;

    PetscCall(PetscSectionGetChart(csec, &sStart, &sEnd));
    for (PetscInt p = sStart; p < sEnd && bad[4] < 0; p++) {
      PetscInt dof;

      if (p >= vStart && p < vEnd) continue;
      PetscCall(PetscSectionGetDof(csec, p, &dof));
      if (dof > 0) bad[4] = p;
    }
  }
  PetscCallMPI(MPI_Allreduce(bad, gbad, 5, MPIU_INT, MPI_MAX, comm));
  PetscCheck(gbad[0] < 0, comm, PETSC_ERR_ARG_WRONG, "Rank %" PetscInt_FMT " holds points of the DMPlex: the serial mesh must live on rank 0 (create it with -dm_distribute 0)", gbad[0]);
  PetscCheck(gbad[1] < 0, comm, PETSC_ERR_ARG_WRONG, "The DMPlex is a tree that PatchworkDMPlexRefineCells() did not make: point %" PetscInt_FMT " hangs on a cell, on a point outside every cell or on a point that hangs itself; PatchworkDMPlexRefineCells() refines a conforming mesh or a 1-irregular tree of its own", gbad[1]);
  PetscCheck(gbad[2] < 0, comm, PETSC_ERR_ARG_WRONG, "The DMPlex is not interpolated (no edges and faces): call DMPlexInterpolate() first");
  if (gbad[3] >= 0) {
    DMPolytopeType ct = DM_POLYTOPE_UNKNOWN;

    if (cEnd > cStart) PetscCall(DMPlexGetCellType(dm, gbad[3], &ct));
    SETERRQ(comm, PETSC_ERR_SUP, "Cell %" PetscInt_FMT " is a %s: PatchworkDMPlexRefineCells() splits %s cells only (for simplices use DMRefine() or DMAdaptLabel())", gbad[3], DMPolytopeTypes[ct], dim == 2 ? "quadrilateral" : "hexahedral");
  }
  PetscCheck(gbad[4] < 0, comm, PETSC_ERR_SUP, "The coordinates of the DMPlex have values on point %" PetscInt_FMT ", not only on vertices (a higher-order coordinate field), which a tree cannot carry: refine the mesh with vertex coordinates, then move its vertices (the tree's cells are then multilinear)", gbad[4]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The 2:1 balance of the cells in `marked`'s stratum `value`: a marked cell with a face, edge or vertex
   that hangs on a coarser point may be split only if every cell around that point is split too (then the
   point goes, and what hung on it is conforming); otherwise the children would hang on a point that hangs
   itself. With mark, the missing cells are marked (*added counts them; again until nothing changes: a
   cell marked now may hang itself); without, the first one missing is reported in bad[]: the cell, its
   hanging point, the parent, the unmarked cell around it, the depths of the point and the parent. */
static PetscErrorCode BalanceWalk(DM dm, DMLabel marked, PetscInt value, PetscBool mark, PetscInt *added, PetscInt bad[6])
{
  PetscInt     cStart, cEnd;
  PetscBool    changed = PETSC_TRUE;
  PetscSection parents;
  Strata       st;

  PetscFunctionBegin;
  *added = 0;
  for (int i = 0; i < 6; i++) bad[i] = -1;
  /* a conforming mesh hangs nowhere: nothing to walk */
  PetscCall(DMPlexGetTree(dm, &parents, NULL, NULL, NULL, NULL));
  if (!parents) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(StrataGet(dm, &st));
  PetscCall(DMPlexGetHeightStratum(dm, 0, &cStart, &cEnd));
  while (changed && bad[0] < 0) {
    changed = PETSC_FALSE;
    for (PetscInt c = cStart; c < cEnd && bad[0] < 0; c++) {
      PetscInt *cl = NULL, ncl;
      PetscBool split;

      PetscCall(DMLabelStratumHasPoint(marked, value, c, &split));
      if (!split) continue;
      PetscCall(DMPlexGetTransitiveClosure(dm, c, PETSC_TRUE, &ncl, &cl));
      for (PetscInt i = 0; i < ncl && bad[0] < 0; i++) {
        PetscInt p = cl[2 * i], parent, around[64], naround;

        PetscCall(DMPlexGetTreeParent(dm, p, &parent, NULL));
        if (parent == p) continue;
        PetscCall(CellsAround(dm, &st, parent, 64, &naround, around));
        PetscCheck(naround <= 64, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Point %" PetscInt_FMT " bounds %" PetscInt_FMT " cells", parent, naround);
        for (PetscInt j = 0; j < naround && bad[0] < 0; j++) {
          PetscCall(DMLabelStratumHasPoint(marked, value, around[j], &split));
          if (split) continue;
          if (mark) {
            PetscCall(DMLabelSetValue(marked, around[j], value));
            (*added)++;
            changed = PETSC_TRUE;
          } else {
            bad[0] = c;
            bad[1] = p;
            bad[2] = parent;
            bad[3] = around[j];
            bad[4] = StrataDepth(&st, p);
            bad[5] = StrataDepth(&st, parent);
          }
        }
      }
      PetscCall(DMPlexRestoreTransitiveClosure(dm, c, PETSC_TRUE, &ncl, &cl));
    }
    if (!mark) break;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* 2:1 balance, collectively: refuse a split that breaks it, naming the cell to split too */
static PetscErrorCode CheckBalance(DM dm, DMLabel marked, PetscInt value)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)dm);
  PetscInt    bad[6], gbad[6], none;
  const char *names[3] = {"vertex", "edge", "face"};

  PetscFunctionBegin;
  PetscCall(BalanceWalk(dm, marked, value, PETSC_FALSE, &none, bad));
  PetscCallMPI(MPI_Allreduce(bad, gbad, 6, MPIU_INT, MPI_MAX, comm));
  PetscCheck(gbad[0] < 0, comm, PETSC_ERR_ARG_WRONG, "Splitting cell %" PetscInt_FMT " would break the 2:1 balance: its %s %" PetscInt_FMT " hangs on %s %" PetscInt_FMT " of the coarser cell %" PetscInt_FMT ", so cell %" PetscInt_FMT " must be split in the same call (a hanging face or edge may be one level finer than its parent, not two)", gbad[0], names[PetscMin(gbad[4], 2)], gbad[1], names[PetscMin(gbad[5], 2)], gbad[2], gbad[3], gbad[3]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PatchworkDMPlexRefineBalance - Add to the cells marked for `PatchworkDMPlexRefineCells()` the coarser cells
  that the 2:1 balance needs split with them, as p4est's balance does

  Collective

  Input Parameters:
+ dm     - a tree made by `PatchworkDMPlexRefineCells()` (or a conforming mesh: then nothing is added), serial
           on rank 0 as that function wants it
. marked - a label of dm's cells
- value  - the cells in `marked`'s stratum `value` are to be split

  Output Parameter:
. added - how many cells were added to the stratum (summed over the ranks)

  Notes:
  A marked cell whose face, edge or vertex hangs takes every cell around the parent of that point along,
  and so on until nothing changes; `PatchworkDMPlexRefineCells()` then accepts the label instead of
  refusing the split. The refinement grows outwards by the cells added.

  Level: intermediate

.seealso: `PatchworkDMPlexRefineCells()`
@*/
PetscErrorCode PatchworkDMPlexRefineBalance(DM dm, DMLabel marked, PetscInt value, PetscInt *added)
{
  PetscInt bad[6];

  PetscFunctionBegin;
  PatchworkAssertPointer(added, 4);
  PetscCall(BalanceWalk(dm, marked, value, PETSC_TRUE, added, bad));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, added, 1, MPIU_INT, MPI_SUM, PetscObjectComm((PetscObject)dm)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The new mesh's vertices and cell-vertex lists (on the rank that holds the mesh) */
static PetscErrorCode BuildCells(Refine *r, DMLabel marked, PetscInt value)
{
  DM                 dm = r->dm, K;
  PetscInt           nsplit = 0, pStart, cv[8], ncv;
  PetscBool         *split;
  PetscSection       csec;
  Vec                cvec;
  const PetscScalar *x;
  Strata             st;

  PetscFunctionBegin;
  PetscCall(StrataGet(dm, &st));
  /* the reference cell's corners in closure order: child b is the one at corner b */
  PetscCall(DMPlexCreateReferenceCell(PETSC_COMM_SELF, r->dim == 2 ? DM_POLYTOPE_QUADRILATERAL : DM_POLYTOPE_HEXAHEDRON, &K));
  PetscCall(ClosureVertices(K, 0, &ncv, cv));
  PetscCall(DMGetCoordinateSection(K, &csec));
  PetscCall(DMGetCoordinatesLocal(K, &cvec));
  PetscCall(VecGetArrayRead(cvec, &x));
  for (PetscInt j = 0; j < ncv; j++) {
    PetscInt off;

    PetscCall(PetscSectionGetOffset(csec, cv[j], &off));
    for (PetscInt d = 0; d < r->dim; d++) r->corner[j][d] = PetscRealPart(x[off + d]);
  }
  PetscCall(VecRestoreArrayRead(cvec, &x));
  PetscCall(DMDestroy(&K));

  PetscCall(DMPlexGetChart(dm, &pStart, &r->pEnd));
  PetscCheck(pStart == 0, PETSC_COMM_SELF, PETSC_ERR_SUP, "Chart starting at %" PetscInt_FMT ", expected 0", pStart);
  PetscCall(PetscCalloc1(r->cEnd - r->cStart, &split));
  for (PetscInt c = r->cStart; c < r->cEnd; c++) {
    PetscCall(DMLabelStratumHasPoint(marked, value, c, &split[c - r->cStart]));
    if (split[c - r->cStart]) nsplit++;
  }
  r->nkept  = r->cEnd - r->cStart - nsplit;
  r->ncells = r->nkept + nsplit * r->nc;
  /* vertices: the old ones, then one for each edge, face and cell of a split cell, but for an edge or
     face that has a hanging vertex already (in a tree): that one */
  PetscCall(PetscMalloc1(r->pEnd, &r->newv));
  for (PetscInt p = 0; p < r->pEnd; p++) r->newv[p] = p >= r->vStart && p < r->vEnd ? p - r->vStart : -1;
  r->nv = r->vEnd - r->vStart;
  for (PetscInt c = r->cStart; c < r->cEnd; c++) {
    PetscInt *cl = NULL, ncl;

    if (!split[c - r->cStart]) continue;
    PetscCall(DMPlexGetTransitiveClosure(dm, c, PETSC_TRUE, &ncl, &cl));
    for (PetscInt i = 0; i < ncl; i++) {
      const PetscInt p = cl[2 * i];
      PetscInt       hv;

      if (r->newv[p] >= 0) continue;
      PetscCall(HangingVertex(dm, p, &hv));
      r->newv[p] = hv >= 0 ? r->newv[hv] : r->nv++;
    }
    PetscCall(DMPlexRestoreTransitiveClosure(dm, c, PETSC_TRUE, &ncl, &cl));
  }
  PetscCall(PetscMalloc1(r->nv, &r->vorig));
  for (PetscInt p = 0; p < r->pEnd; p++) /* an old vertex stands for itself, also where it is an edge's or face's */
    if (r->newv[p] >= 0 && ((p >= r->vStart && p < r->vEnd) || r->newv[p] >= r->vEnd - r->vStart)) r->vorig[r->newv[p]] = p;
  /* coordinates: the old vertices', and at a new vertex the mean of its old point's corners (the
     multilinear map of the cell at the centre of that edge, face or cell) */
  PetscCall(PetscMalloc1(r->nv * r->cdim, &r->coords));
  PetscCall(DMGetCoordinateSection(dm, &csec));
  PetscCall(DMGetCoordinatesLocal(dm, &cvec));
  PetscCall(VecGetArrayRead(cvec, &x));
  for (PetscInt n = 0; n < r->nv; n++) {
    PetscInt pv[8], npv;

    PetscCall(ClosureVertices(dm, r->vorig[n], &npv, pv));
    for (PetscInt d = 0; d < r->cdim; d++) r->coords[n * r->cdim + d] = 0;
    for (PetscInt a = 0; a < npv; a++) {
      PetscInt off;

      PetscCall(PetscSectionGetOffset(csec, pv[a], &off));
      for (PetscInt d = 0; d < r->cdim; d++) r->coords[n * r->cdim + d] += PetscRealPart(x[off + d]) / npv;
    }
  }
  PetscCall(VecRestoreArrayRead(cvec, &x));
  /* cells: the unsplit ones as they were, then the children of each split cell, child b at corner b */
  PetscCall(PetscMalloc3(r->ncells * r->nc, &r->cells, r->nkept, &r->kept, nsplit, &r->split));
  r->ncl = r->dim == 2 ? 9 : 27;
  PetscCall(PetscMalloc2(r->nkept * r->ncl, &r->keptpts, r->nkept * r->ncl, &r->keptmasks));
  for (PetscInt c = r->cStart, i = 0, ichild = r->nkept; c < r->cEnd; c++) {
    PetscInt pts[27], npts;
    int      masks[27];

    if (!split[c - r->cStart]) {
      PetscCall(CellMasks(dm, &st, c, &npts, pts, masks, &ncv, cv));
      PetscCheck(npts == r->ncl && ncv == r->nc, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cell %" PetscInt_FMT " has %" PetscInt_FMT " closure points and %" PetscInt_FMT " vertices", c, npts, ncv);
      for (PetscInt k = 0; k < npts; k++) {
        r->keptpts[i * r->ncl + k]   = pts[k];
        r->keptmasks[i * r->ncl + k] = (unsigned char)masks[k];
      }
      for (PetscInt j = 0; j < r->nc; j++) r->cells[i * r->nc + j] = r->newv[cv[j]];
      r->kept[i++] = c;
      continue;
    }
    PetscCall(CellMasks(dm, &st, c, &npts, pts, masks, NULL, NULL));
    r->split[(ichild - r->nkept) / r->nc] = c;
    for (PetscInt b = 0; b < r->nc; b++, ichild++) {
      for (PetscInt j = 0; j < r->nc; j++) {
        int mask = 0, k;

        /* corner j of child b sits at (X_j + X_b)/2: the old point spanned by the corners i that agree
           with it wherever it is not 0 */
        for (PetscInt i2 = 0; i2 < r->nc; i2++) {
          PetscBool in = PETSC_TRUE;

          for (PetscInt d = 0; d < r->dim; d++) {
            const PetscReal y = 0.5 * (r->corner[j][d] + r->corner[b][d]);

            if (PetscAbsReal(y) > PW_REFINE_TOL && PetscAbsReal(r->corner[i2][d] - y) > PW_REFINE_TOL) in = PETSC_FALSE;
          }
          if (in) mask |= 1 << i2;
        }
        for (k = 0; k < npts && masks[k] != mask; k++) { }
        PetscCheck(k < npts, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cell %" PetscInt_FMT ": no closure point spans the corners %d", c, mask);
        r->cells[ichild * r->nc + j] = r->newv[pts[k]];
      }
    }
  }
  PetscCall(PetscFree(split));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Where every point of the new mesh T comes from: q2old[q] (an old point that stayed) or orig[q] (the
   old point it lies inside) */
static PetscErrorCode Classify(Refine *r, DM T, PetscInt *q2old, PetscInt *orig, PetscInt *old2new)
{
  DM       dm = r->dm;
  PetscInt qStart, qEnd, vStartT, cStartT, cEndT, sv[8], nsv = 0;
  Strata   st, sT;

  PetscFunctionBegin;
  PetscCall(StrataGet(dm, &st));
  PetscCall(StrataGet(T, &sT));
  PetscCall(DMPlexGetChart(T, &qStart, &qEnd));
  PetscCall(DMPlexGetDepthStratum(T, 0, &vStartT, NULL));
  PetscCall(DMPlexGetHeightStratum(T, 0, &cStartT, &cEndT));
  PetscCheck(cEndT - cStartT == r->ncells, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The new mesh has %" PetscInt_FMT " cells, expected %" PetscInt_FMT, cEndT - cStartT, r->ncells);
  for (PetscInt q = qStart; q < qEnd; q++) q2old[q] = orig[q] = -1;
  for (PetscInt p = 0; p < r->pEnd; p++) old2new[p] = -1;
  for (PetscInt n = 0; n < r->nv; n++) {
    const PetscInt o = r->vorig[n];

    if (o >= r->vStart && o < r->vEnd) {
      q2old[vStartT + n] = o;
      old2new[o]         = vStartT + n;
    } else orig[vStartT + n] = o;
  }
  for (PetscInt i = 0, s = -1; i < r->ncells; i++) {
    const PetscInt c = cStartT + i;
    PetscInt       tv[8], ntv, tpts[27], ntpts;
    int            tmasks[27];

    /* PETSc keeps the cell-vertex order as the closure order (the children rely on it) */
    PetscCall(CellMasks(T, &sT, c, &ntpts, tpts, tmasks, &ntv, tv));
    PetscCheck(ntv == r->nc, PETSC_COMM_SELF, PETSC_ERR_PLIB, "New cell %" PetscInt_FMT " has %" PetscInt_FMT " vertices", c, ntv);
    for (PetscInt j = 0; j < ntv; j++) PetscCheck(tv[j] - vStartT == r->cells[i * r->nc + j], PETSC_COMM_SELF, PETSC_ERR_PLIB, "New cell %" PetscInt_FMT " does not keep its vertex order", c);
    if (i < r->nkept) { /* an old cell: match its closure with the old one by corner sets */
      const PetscInt      *pts = &r->keptpts[i * r->ncl], npts = r->ncl;
      const unsigned char *masks = &r->keptmasks[i * r->ncl];

      PetscCheck(npts == ntpts, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Closures of old cell %" PetscInt_FMT " and new cell %" PetscInt_FMT " differ", r->kept[i], c);
      for (PetscInt a = 0; a < ntpts; a++) {
        PetscInt b;

        for (b = 0; b < npts && masks[b] != tmasks[a]; b++) { }
        PetscCheck(b < npts, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Point %" PetscInt_FMT " of new cell %" PetscInt_FMT " is no point of old cell %" PetscInt_FMT, tpts[a], c, r->kept[i]);
        q2old[tpts[a]]  = pts[b];
        old2new[pts[b]] = tpts[a];
      }
    } else { /* a child of old cell s: a point of its closure whose vertices are all old is an old point
                (on a face or edge of s that fine neighbours had split already), any other lies inside the
                highest old point its vertices stand for */
      if (s != r->split[(i - r->nkept) / r->nc]) { /* the children of s are consecutive */
        s = r->split[(i - r->nkept) / r->nc];
        PetscCall(ClosureVertices(dm, s, &nsv, sv));
      }
      for (PetscInt a = 0; a < ntpts; a++) {
        const PetscInt q = tpts[a];
        PetscInt       qv[8], ov[8], nqv = 0, best = -1, bestdepth = 0, depth;
        PetscBool      allold = PETSC_TRUE;

        if (q >= vStartT && q < vStartT + r->nv && q2old[q] >= 0) continue; /* an old vertex */
        for (PetscInt j = 0; j < ntv; j++) /* q's vertices (their order does not matter) */
          if (tmasks[a] & (1 << j)) qv[nqv++] = tv[j];
        for (PetscInt b = 0; b < nqv; b++) {
          PetscInt o = r->vorig[qv[b] - vStartT], j;

          ov[b] = o;
          if (o >= r->vStart && o < r->vEnd) {
            for (j = 0; j < nsv && sv[j] != o; j++) { }
            if (j < nsv) continue; /* a corner of s */
            PetscCall(DMPlexGetTreeParent(dm, o, &o, NULL)); /* a hanging vertex of s's: it stands for its parent */
            PetscCheck(o != ov[b], PETSC_COMM_SELF, PETSC_ERR_PLIB, "Vertex %" PetscInt_FMT " of child %" PetscInt_FMT " is neither a corner of old cell %" PetscInt_FMT " nor a hanging vertex", qv[b], c, s);
          } else allold = PETSC_FALSE;
          depth = StrataDepth(&st, o);
          if (depth > bestdepth) {
            best      = o;
            bestdepth = depth;
          }
        }
        depth = StrataDepth(&sT, q);
        if (allold) {
          PetscInt p;

          PetscCall(FindPoint(dm, &st, depth, nqv, ov, &p));
          PetscCheck(p >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Point %" PetscInt_FMT " of child %" PetscInt_FMT " has old vertices only but is no old point", q, c);
          PetscCheck(q2old[q] < 0 || q2old[q] == p, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Point %" PetscInt_FMT " is old points %" PetscInt_FMT " and %" PetscInt_FMT, q, q2old[q], p);
          q2old[q]   = p;
          old2new[p] = q;
          continue;
        }
        PetscCheck(best >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Point %" PetscInt_FMT " of child %" PetscInt_FMT " has no new vertex", q, c);
        PetscCheck(orig[q] < 0 || orig[q] == best, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Point %" PetscInt_FMT " lies inside old points %" PetscInt_FMT " and %" PetscInt_FMT, q, orig[q], best);
        orig[q] = best;
      }
    }
  }
  for (PetscInt q = qStart; q < qEnd; q++) PetscCheck(q2old[q] >= 0 || orig[q] >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Point %" PetscInt_FMT " of the new mesh has no origin", q);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The coordinates of the closure vertices of point p of the reference tree K */
static PetscErrorCode RefVertexCoords(DM K, PetscInt p, PetscInt *n, PetscReal X[][3])
{
  PetscInt           v[8], dim;
  PetscSection       csec;
  Vec                cvec;
  const PetscScalar *x;

  PetscFunctionBegin;
  PetscCall(DMGetDimension(K, &dim));
  PetscCall(ClosureVertices(K, p, n, v));
  PetscCall(DMGetCoordinateSection(K, &csec));
  PetscCall(DMGetCoordinatesLocal(K, &cvec));
  PetscCall(VecGetArrayRead(cvec, &x));
  for (PetscInt a = 0; a < *n; a++) {
    PetscInt off;

    PetscCall(PetscSectionGetOffset(csec, v[a], &off));
    for (PetscInt d = 0; d < 3; d++) X[a][d] = d < dim ? PetscRealPart(x[off + d]) : 0;
  }
  PetscCall(VecRestoreArrayRead(cvec, &x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscBool SamePoint(const PetscReal a[3], const PetscReal b[3])
{
  return (PetscBool)(PetscAbsReal(a[0] - b[0]) < PW_REFINE_TOL && PetscAbsReal(a[1] - b[1]) < PW_REFINE_TOL && PetscAbsReal(a[2] - b[2]) < PW_REFINE_TOL);
}

/* A reference parent R of the reference tree K with the coordinates of its corners and of its children's
   (taken once: every hanging point of its dimension is matched against them) */
typedef struct {
  PetscInt        R, nW, nchildren;
  PetscReal       W[8][3];
  const PetscInt *children;
  PetscInt       *kdepth, *nX;
  PetscReal (*X)[8][3];
} RefParent;

static PetscErrorCode RefParentCreate(DM K, PetscInt R, RefParent *rp)
{
  Strata sK;

  PetscFunctionBegin;
  PetscCall(StrataGet(K, &sK));
  rp->R = R;
  PetscCall(RefVertexCoords(K, R, &rp->nW, rp->W));
  PetscCall(DMPlexGetTreeChildren(K, R, &rp->nchildren, &rp->children));
  PetscCall(PetscMalloc3(rp->nchildren, &rp->kdepth, rp->nchildren, &rp->nX, rp->nchildren, &rp->X));
  for (PetscInt i = 0; i < rp->nchildren; i++) {
    rp->kdepth[i] = StrataDepth(&sK, rp->children[i]);
    PetscCall(RefVertexCoords(K, rp->children[i], &rp->nX[i], rp->X[i]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode RefParentDestroy(RefParent *rp)
{
  PetscFunctionBegin;
  PetscCall(PetscFree3(rp->kdepth, rp->nX, rp->X));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The childID of hanging point q of T, whose parent is `parent` (the new point of old point orig[q], or
   of the old parent of old point q2old[q]), in the reference tree K, where R is the reference point of
   parent's dimension whose children are PETSc's canonical ones; q is turned to the reference child's
   orientation (the parent may be laid otherwise than in the old mesh: an old child's childID is found
   again) */
static PetscErrorCode ChildID(Refine *r, DM T, const Strata *sT, const RefParent *rp, PetscInt parent, const PetscInt *q2old, PetscInt q, PetscInt *childID)
{
  const PetscInt  R = rp->R, nW = rp->nW, nchildren = rp->nchildren, vStartT = sT->start[0], depth = StrataDepth(sT, q);
  const PetscInt *children = rp->children;
  PetscInt        pv[8], npv, qv[8], nqv;
  PetscReal       loc[8][3];
  const PetscReal(*W)[3] = rp->W;

  PetscFunctionBegin;
  *childID = -1;
  /* the parent's corners (closure order) are the reference parent's corners W (closure order) */
  PetscCall(ClosureVertices(T, parent, &npv, pv));
  PetscCheck(npv == nW, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Parent %" PetscInt_FMT " has %" PetscInt_FMT " vertices, reference point %" PetscInt_FMT " %" PetscInt_FMT, parent, npv, R, nW);
  /* q's vertices in the reference parent: a corner, or the mean of the corners their old points span (an
     old vertex inside the parent hangs on an edge or face of it, and spans that) */
  PetscCall(ClosureVertices(T, q, &nqv, qv));
  for (PetscInt a = 0; a < nqv; a++) {
    PetscInt ov[8], nov, o = r->vorig[qv[a] - vStartT], j;

    for (j = 0; j < npv && pv[j] != qv[a]; j++) { }
    if (j < npv) {
      for (PetscInt d = 0; d < 3; d++) loc[a][d] = W[j][d];
      continue;
    }
    if (o >= r->vStart && o < r->vEnd) PetscCall(DMPlexGetTreeParent(r->dm, o, &o, NULL));
    PetscCall(ClosureVertices(r->dm, o, &nov, ov));
    loc[a][0] = loc[a][1] = loc[a][2] = 0;
    for (PetscInt b = 0; b < nov; b++) {
      for (j = 0; j < npv && q2old[pv[j]] != ov[b]; j++) { }
      PetscCheck(j < npv, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Vertex %" PetscInt_FMT " of point %" PetscInt_FMT " is not inside its parent %" PetscInt_FMT, qv[a], q, parent);
      for (PetscInt d = 0; d < 3; d++) loc[a][d] += W[j][d] / nov;
    }
  }
  /* the reference child with the same vertices; then q takes its vertex order */
  for (PetscInt i = 0; i < nchildren && *childID < 0; i++) {
    const PetscInt nX = rp->nX[i];
    const PetscReal(*X)[3] = rp->X[i];
    PetscInt  target[8];
    PetscBool match = PETSC_TRUE;

    if (rp->kdepth[i] != depth) continue;
    if (nX != nqv) continue;
    for (PetscInt b = 0; b < nX && match; b++) {
      PetscInt a;

      for (a = 0; a < nqv && !SamePoint(loc[a], X[b]); a++) { }
      if (a == nqv) match = PETSC_FALSE;
      else target[b] = qv[a];
    }
    if (!match) continue;
    *childID = children[i];
    if (depth > 0) {
      PetscInt       o, nnew, qnew[8];
      DMPolytopeType ct;

      PetscCall(DMPlexGetCellType(T, q, &ct));
      PetscCall(DMPolytopeGetVertexOrientation(ct, qv, target, &o));
      if (o) PetscCall(DMPlexOrientPoint(T, q, o));
      PetscCall(ClosureVertices(T, q, &nnew, qnew));
      for (PetscInt b = 0; b < nnew; b++) PetscCheck(qnew[b] == target[b], PETSC_COMM_SELF, PETSC_ERR_PLIB, "Turning point %" PetscInt_FMT " by orientation %" PetscInt_FMT " did not give the reference child's vertex order", q, o);
    }
  }
  PetscCheck(*childID >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "No child of reference point %" PetscInt_FMT " matches point %" PetscInt_FMT, R, q);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Every label of the old mesh onto the new one: a point that stayed keeps its values, a new point
   takes those of the old point it lies inside (so boundary labels such as "marker" and "Face Sets"
   carry over to the children) */
static PetscErrorCode CopyLabels(DM dm, DM T, const PetscInt *orig, const PetscInt *old2new)
{
  PetscInt nlabels, qStart, qEnd, pEnd, *start, *fill, *inside;

  PetscFunctionBegin;
  PetscCall(DMPlexGetChart(T, &qStart, &qEnd));
  PetscCall(DMPlexGetChart(dm, NULL, &pEnd));
  /* the new points inside each old point p: inside[start[p] .. start[p+1]) */
  PetscCall(PetscCalloc2(pEnd + 1, &start, pEnd + 1, &fill));
  PetscCall(PetscMalloc1(qEnd - qStart, &inside));
  for (PetscInt q = qStart; q < qEnd; q++)
    if (orig && orig[q] >= 0) start[orig[q] + 1]++;
  for (PetscInt p = 0; p < pEnd; p++) start[p + 1] += start[p];
  for (PetscInt q = qStart; q < qEnd; q++)
    if (orig && orig[q] >= 0) inside[start[orig[q]] + fill[orig[q]]++] = q;

  PetscCall(DMGetNumLabels(dm, &nlabels));
  for (PetscInt l = 0; l < nlabels; l++) {
    const char     *name;
    PetscBool       skip1, skip2;
    DMLabel         label, tlabel;
    IS              values;
    const PetscInt *vals;
    PetscInt        nvals;

    PetscCall(DMGetLabelName(dm, l, &name));
    PetscCall(PetscStrcmp(name, "depth", &skip1));
    PetscCall(PetscStrcmp(name, "celltype", &skip2));
    if (skip1 || skip2) continue;
    PetscCall(DMGetLabelByNum(dm, l, &label));
    PetscCall(DMCreateLabel(T, name));
    PetscCall(DMGetLabel(T, name, &tlabel));
    PetscCall(DMLabelGetValueIS(label, &values));
    PetscCall(ISGetLocalSize(values, &nvals));
    PetscCall(ISGetIndices(values, &vals));
    for (PetscInt i = 0; i < nvals; i++) {
      IS              stratum;
      const PetscInt *pts;
      PetscInt        npts;

      PetscCall(DMLabelGetStratumIS(label, vals[i], &stratum));
      if (!stratum) continue;
      PetscCall(ISGetLocalSize(stratum, &npts));
      PetscCall(ISGetIndices(stratum, &pts));
      for (PetscInt j = 0; j < npts; j++) {
        const PetscInt p = pts[j];

        if (p < 0 || p >= pEnd) continue;
        if (old2new && old2new[p] >= 0) PetscCall(DMLabelSetValue(tlabel, old2new[p], vals[i]));
        for (PetscInt k = start[p]; k < start[p + 1]; k++) PetscCall(DMLabelSetValue(tlabel, inside[k], vals[i]));
      }
      PetscCall(ISRestoreIndices(stratum, &pts));
      PetscCall(ISDestroy(&stratum));
    }
    PetscCall(ISRestoreIndices(values, &vals));
    PetscCall(ISDestroy(&values));
  }
  PetscCall(PetscFree2(start, fill));
  PetscCall(PetscFree(inside));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  PatchworkDMPlexRefineCells - Split the marked cells of a conforming mesh of quadrilaterals or hexahedra
  (or of a tree this function made) once each, into 2^dim children, giving a non-conforming mesh (hanging
  nodes) that is a PETSc tree

  Collective

  Input Parameters:
+ dm     - a serial, interpolated DMPlex of quadrilaterals (2D) or hexahedra (3D), all of it on rank 0
           (for instance created with -dm_distribute 0), with coordinates on its vertices only: a
           conforming mesh or a tree this function made
. marked - a label of dm's cells
- value  - the cells in `marked`'s stratum `value` are split

  Output Parameter:
. tree - the refined mesh: a DMPlex with the default reference tree (`DMPlexCreateDefaultReferenceTree()`)
         and a tree (`DMPlexSetTree()`) whose hanging faces and edges PETSc constrains itself
         (`DMGetDefaultConstraints()`, its anchors), on rank 0 as dm was

  Notes:
  The faces and edges where a split cell meets one that is not split hang: their new points get the
  coarse face (edge) as tree parent and the reference tree's matching point as childID. Faces (edges)
  whose cells are all split, and the boundary faces of split cells, are conforming. The cells of the tree
  are dm's unsplit cells in their order, then 2^dim children per split cell in its order, child b at
  the cell's b-th vertex (closure order); its vertices are dm's, then one per edge, face and cell of the
  split cells, placed at the centre of the cell's multilinear map (the mean of the corners). Every label
  of dm carries over: a new point takes the values of the old point it lies inside.

  Several levels, one per call: dm may be a tree that `PatchworkDMPlexRefineCells()` made, which stays
  1-irregular (2:1 balanced). A cell with a hanging face, edge or vertex can be split only together with
  every coarser cell that holds the face or edge it hangs on (the coarse point then goes, and what hung
  on it becomes conforming); otherwise the children would hang on a point that hangs itself, which
  PETSc's constraints do not resolve, and the call is refused, naming the coarser cell to split too. A
  hanging point keeps its parent while the parent still bounds an unsplit cell. An edge or face of a split
  cell that has a hanging vertex already (made by its finer neighbours) keeps that vertex. A tree of
  `DMPlexTreeRefineCell()` (whose parents lie outside every cell) is refused. A higher-order coordinate
  field (-dm_coord_petscspace_degree) cannot be carried by a tree: refine the mesh with vertex
  coordinates and then move its vertices (the cells are then multilinear), keeping each hanging vertex
  at the centre of its parent edge or face, where the unsplit neighbour has it (examples/shell.c does
  both). Distribute the tree with `DMPlexDistribute()` afterwards.

  Level: intermediate

.seealso: `MatCreatePatchworkTensor()`, `DMPlexTreeRefineCell()`, `DMPlexSetTree()`, `DMPlexDistribute()`
@*/
PetscErrorCode PatchworkDMPlexRefineCells(DM dm, DMLabel marked, PetscInt value, DM *tree)
{
  MPI_Comm     comm;
  DM           K, T;
  PetscMPIInt  rank;
  Refine       r;
  PetscSection parentSection;
  PetscInt     qStart, qEnd, nparents = 0, *q2old = NULL, *orig = NULL, *old2new = NULL, *tparent = NULL, *parents = NULL, *childIDs = NULL, R[3] = {-1, -1, -1};
  RefParent    rp[3];
  Strata       st, sT;
  const char  *name, *prefix;

  PetscFunctionBegin;
  PatchworkAssertPointer(dm, 1);
  PatchworkAssertPointer(tree, 4);
  comm = PetscObjectComm((PetscObject)dm);
  PetscCall(CheckInput(dm, marked));
  PetscCall(CheckBalance(dm, marked, value));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscMemzero(&r, sizeof(r)));
  r.dm = dm;
  PetscCall(DMGetDimension(dm, &r.dim));
  PetscCall(DMGetCoordinateDim(dm, &r.cdim));
  r.nc = 1 << r.dim;
  PetscCall(DMPlexGetHeightStratum(dm, 0, &r.cStart, &r.cEnd));
  PetscCall(DMPlexGetDepthStratum(dm, 0, &r.vStart, &r.vEnd));
  PetscCall(DMGetCoordinatesLocalSetUp(dm)); /* collective */
  if (rank == 0) PetscCall(BuildCells(&r, marked, value));
  PetscCall(DMPlexCreateFromCellListPetsc(comm, r.dim, r.ncells, r.nv, r.nc, PETSC_TRUE, r.cells, r.cdim, r.coords, &T));

  /* the reference tree and, per dimension of a parent, the reference point with PETSc's canonical children */
  PetscCall(DMPlexCreateDefaultReferenceTree(comm, r.dim, PETSC_FALSE, &K));
  for (PetscInt d = 1; d < r.dim; d++) {
    PetscInt kStart, kEnd;

    PetscCall(DMPlexGetDepthStratum(K, d, &kStart, &kEnd));
    for (PetscInt k = kStart; k < kEnd && R[d] < 0; k++) {
      PetscInt n;

      PetscCall(DMPlexGetTreeChildren(K, k, &n, NULL));
      if (n) R[d] = k;
    }
    PetscCheck(R[d] >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The reference tree has no %s with children", d == 1 ? "edge" : "face");
    PetscCall(RefParentCreate(K, R[d], &rp[d]));
  }

  /* the hanging points: their parents and childIDs (turning them to the reference children) */
  PetscCall(DMPlexGetChart(T, &qStart, &qEnd));
  PetscCall(PetscSectionCreate(PETSC_COMM_SELF, &parentSection));
  PetscCall(PetscSectionSetChart(parentSection, qStart, qEnd));
  if (rank == 0) {
    PetscCall(PetscMalloc4(qEnd, &q2old, qEnd, &orig, r.pEnd, &old2new, qEnd, &tparent));
    PetscCall(StrataGet(dm, &st));
    PetscCall(StrataGet(T, &sT));
    PetscCall(Classify(&r, T, q2old, orig, old2new));
    /* a new point inside an old edge or face that is still there hangs on it; an old point keeps its old
       parent while that is still there */
    for (PetscInt q = qStart; q < qEnd; q++) {
      PetscInt depth = 0, P = -1;

      if (orig[q] >= 0) {
        depth = StrataDepth(&st, orig[q]);
        if (depth >= 1 && depth < r.dim) P = orig[q];
      } else {
        PetscCall(DMPlexGetTreeParent(dm, q2old[q], &P, NULL));
        if (P == q2old[q]) P = -1;
      }
      tparent[q] = P >= 0 ? old2new[P] : -1;
      if (tparent[q] >= 0) nparents++;
    }
    for (PetscInt q = qStart; q < qEnd; q++) {
      if (tparent[q] < 0) continue;
      PetscCheck(tparent[tparent[q]] < 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Point %" PetscInt_FMT " would hang on point %" PetscInt_FMT ", which hangs on point %" PetscInt_FMT, q, tparent[q], tparent[tparent[q]]);
      PetscCall(PetscSectionSetDof(parentSection, q, 1));
    }
  }
  PetscCall(PetscSectionSetUp(parentSection));
  PetscCall(PetscMalloc2(nparents, &parents, nparents, &childIDs));
  if (rank == 0) {
    for (PetscInt q = qStart; q < qEnd; q++) {
      PetscInt dof, off, depth;

      PetscCall(PetscSectionGetDof(parentSection, q, &dof));
      if (!dof) continue;
      PetscCall(PetscSectionGetOffset(parentSection, q, &off));
      depth        = StrataDepth(&sT, tparent[q]);
      parents[off] = tparent[q];
      PetscCall(ChildID(&r, T, &sT, &rp[depth], parents[off], q2old, q, &childIDs[off]));
    }
  }
  PetscCall(CopyLabels(dm, T, orig, old2new));
  PetscCall(DMPlexSetReferenceTree(T, K));
  PetscCall(DMPlexSetTree(T, parentSection, parents, childIDs));
  PetscCall(PetscObjectGetName((PetscObject)dm, &name));
  PetscCall(PetscObjectSetName((PetscObject)T, name));
  PetscCall(PetscObjectGetOptionsPrefix((PetscObject)dm, &prefix));
  PetscCall(PetscObjectSetOptionsPrefix((PetscObject)T, prefix));
  { /* the vector and matrix types too (device vectors stay device vectors, as with DMRefine()) */
    VecType vtype;
    MatType mtype;

    PetscCall(DMGetVecType(dm, &vtype));
    PetscCall(DMSetVecType(T, vtype));
    PetscCall(DMGetMatType(dm, &mtype));
    PetscCall(DMSetMatType(T, mtype));
  }

  PetscCall(PetscSectionDestroy(&parentSection));
  PetscCall(PetscFree2(parents, childIDs));
  PetscCall(PetscFree4(q2old, orig, old2new, tparent));
  for (PetscInt d = 1; d < r.dim; d++) PetscCall(RefParentDestroy(&rp[d]));
  PetscCall(DMDestroy(&K));
  PetscCall(PetscFree(r.newv));
  PetscCall(PetscFree(r.vorig));
  PetscCall(PetscFree3(r.cells, r.kept, r.split));
  PetscCall(PetscFree2(r.keptpts, r.keptmasks));
  PetscCall(PetscFree(r.coords));
  *tree = T;
  PetscFunctionReturn(PETSC_SUCCESS);
}
