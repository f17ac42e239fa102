/* Hanging-node constraints of a DMPlex with a tree (non-conforming refinement: DMPlexTreeRefineCell(),
   DMForest): which faces (in 3D also edges) of each cell hang inside a coarser face (edge), which half
   of it they cover, and the coarse nodes for the cell's slots on them, laid out in the cell's own axes
   (include/patchwork/hanging_kernel.h). The coarse nodes are read off PETSc's constraint matrix
   (DMGetDefaultConstraints()): the row of a constrained node holds the coarse face's Lagrange basis at
   that node, so each coarse node is the column that equals one tensor product P[s1][.][p] P[s2][.][q]
   over the face's slots. Whatever the coarse face's orientation, the match lays it out in the cell's
   axes; constraints that are no such interpolation are refused. */
#include "tensorimpl.h"
#include <patchwork/hanging_kernel.h>

typedef struct {
  PetscSection local, csec; /* the DM's local section; rows of the constraint matrix per point */
  Mat          cmat;
  PetscInt     nloc, *dofpoint; /* local index -> its point */
  int          n, dim;
  double       P[2 * PW_MAX_N * PW_MAX_N];
} Hang;

/* The constraint row of local index li: the coarse nodes and weights that give its value (itself with
   weight 1 when it is free). Restore with RestoreRow(). */
static PetscErrorCode GetRow(Hang *h, PetscInt li, PetscInt *ncols, const PetscInt **cols, const PetscScalar **vals, PetscInt *row)
{
  const PetscInt pt = h->dofpoint[li];
  PetscInt       cs, ce, cdof = 0;

  PetscFunctionBegin;
  *row = -1;
  PetscCall(PetscSectionGetChart(h->csec, &cs, &ce));
  if (pt >= cs && pt < ce) PetscCall(PetscSectionGetDof(h->csec, pt, &cdof));
  if (cdof > 0) {
    PetscInt coff, loff;

    PetscCall(PetscSectionGetOffset(h->csec, pt, &coff));
    PetscCall(PetscSectionGetOffset(h->local, pt, &loff));
    *row = coff + (li - loff);
    PetscCall(MatGetRow(h->cmat, *row, ncols, cols, vals));
  } else *ncols = -1; /* free */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode RestoreRow(Hang *h, PetscInt row, PetscInt *ncols, const PetscInt **cols, const PetscScalar **vals)
{
  PetscFunctionBegin;
  if (row >= 0) PetscCall(MatRestoreRow(h->cmat, row, ncols, cols, vals));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The coarse nodes of one hanging face (m = dim-1 tangential directions) or edge (m = 1) of a cell,
   whose slots hold local indices slot[j*n + i]: coarse[q*n + p] and the halves s[] such that the slot
   values are sum P[s0][i][p] P[s1][j][q] coarse(p, q); *found false when no halves fit */
static PetscErrorCode MatchCoarse(Hang *h, int m, const PetscInt slot[], PetscInt coarse[], int s[2], PetscBool *found)
{
  const int n = h->n, nt = m == 2 ? n * n : n;
  PetscInt  anchors[PW_MAX_N * PW_MAX_N * 4], na = 0;
  double   *W; /* W[b*nt + t]: the weight of anchor b in the value of slot t */

  PetscFunctionBegin;
  *found = PETSC_FALSE;
  /* every index a slot depends on, then their weights: each constraint row read once per pass */
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) PetscCall(PetscCalloc1(na * nt, &W));
    for (int t = 0; t < nt; t++) {
      PetscInt           ncols, row;
      const PetscInt    *cols;
      const PetscScalar *vals;

      PetscCall(GetRow(h, slot[t], &ncols, &cols, &vals, &row));
      for (PetscInt j = 0; j < (ncols < 0 ? 1 : ncols); j++) {
        const PetscInt a = ncols < 0 ? slot[t] : cols[j];
        PetscInt       b = 0;

        while (b < na && anchors[b] != a) b++;
        if (pass == 0 && b == na && na < (PetscInt)(sizeof(anchors) / sizeof(anchors[0]))) anchors[na++] = a;
        if (pass == 1 && b < na) W[b * nt + t] += ncols < 0 ? 1.0 : PetscRealPart(vals[j]);
      }
      PetscCall(RestoreRow(h, row, &ncols, &cols, &vals));
    }
  }
  for (int combo = 0; combo < (m == 2 ? 4 : 2) && !*found; combo++) {
    const int s0 = combo & 1, s1 = (combo >> 1) & 1;
    PetscBool ok = PETSC_TRUE;

    for (int t = 0; t < nt; t++) coarse[t] = -1;
    for (PetscInt b = 0; b < na && ok; b++) {
      const double *Wb   = W + b * nt;
      double        wmax = 0;
      int           hit  = -1;

      for (int t = 0; t < nt; t++) wmax = PetscMax(wmax, PetscAbsReal(Wb[t]));
      if (wmax < 1e-12) continue; /* a stored zero */
      for (int pq = 0; pq < nt && hit < 0; pq++) {
        const int p = pq % n, q = pq / n;
        double    dev = 0;

        for (int t = 0; t < nt; t++) {
          const int    i = t % n, j = t / n;
          const double v = h->P[(s0 * n + i) * n + p] * (m == 2 ? h->P[(s1 * n + j) * n + q] : 1.0);
          dev            = PetscMax(dev, PetscAbsReal(Wb[t] - v));
        }
        if (dev < 1e-9) hit = pq;
      }
      if (hit < 0 || coarse[hit] >= 0) ok = PETSC_FALSE;
      else coarse[hit] = anchors[b];
    }
    for (int t = 0; t < nt && ok; t++) ok = (PetscBool)(coarse[t] >= 0);
    if (ok) {
      *found = PETSC_TRUE;
      s[0]   = s0;
      s[1]   = s1;
    }
  }
  PetscCall(PetscFree(W));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The corner (bit d set: at the upper end in direction d) of the cell with nodes el[] that is local index li, -1 if none */
static int Corner(const PetscInt *el, int dim, int n, PetscInt li)
{
  for (int a = 0; a < (1 << dim); a++) {
    int node = 0;
    for (int d = 0, st = 1; d < dim; d++, st *= n) node += ((a >> d) & 1) * (n - 1) * st;
    if (el[node] == li) return a;
  }
  return -1;
}

/* Corners of a face or edge point: AND and OR of their corner bits (a face of normal d has bit d equal
   in all of them) */
static PetscErrorCode PointCorners(DM dm, Hang *h, const PetscInt *el, PetscInt pt, int *and_bits, int *or_bits)
{
  PetscInt *cl = NULL, ncl, vStart, vEnd;

  PetscFunctionBegin;
  *and_bits = ~0;
  *or_bits  = 0;
  PetscCall(DMPlexGetDepthStratum(dm, 0, &vStart, &vEnd));
  PetscCall(DMPlexGetTransitiveClosure(dm, pt, PETSC_TRUE, &ncl, &cl));
  for (PetscInt i = 0; i < ncl; i++) {
    const PetscInt v = cl[2 * i];
    PetscInt       off;
    int            a;

    if (v < vStart || v >= vEnd) continue;
    PetscCall(PetscSectionGetOffset(h->local, v, &off));
    a = Corner(el, h->dim, h->n, off);
    PetscCheck(a >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Vertex %" PetscInt_FMT " of point %" PetscInt_FMT " is no corner of its cell", v, pt);
    *and_bits &= a;
    *or_bits |= a;
  }
  PetscCall(DMPlexRestoreTransitiveClosure(dm, pt, PETSC_TRUE, &ncl, &cl));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether point pt hangs: its tree parent is another point of its own height (a coarser face or edge) */
static PetscErrorCode Hangs(DM dm, PetscInt pt, PetscBool *hangs)
{
  PetscInt parent, hp, hq;

  PetscFunctionBegin;
  *hangs = PETSC_FALSE;
  PetscCall(DMPlexGetTreeParent(dm, pt, &parent, NULL));
  if (parent == pt) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DMPlexGetPointHeight(dm, pt, &hp));
  PetscCall(DMPlexGetPointHeight(dm, parent, &hq));
  *hangs = (PetscBool)(hp == hq);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Slots of the face of normal d on side `side` (dim-1 tangential directions, ascending) or of the edge
   along d at corner bits `bits` in the other directions: slot[j*n + i] = node index in the cell */
static void FaceNodes(int dim, int n, int d, int side, int *node)
{
  const int st[3] = {1, n, n * n};
  int       t[2], m = 0;

  for (int e = 0; e < dim; e++)
    if (e != d) t[m++] = e;
  for (int j = 0; j < (dim == 3 ? n : 1); j++)
    for (int i = 0; i < n; i++) node[j * n + i] = side * (n - 1) * st[d] + i * st[t[0]] + (dim == 3 ? j * st[t[1]] : 0);
}

static void EdgeNodes(int n, int d, int bits, int *node)
{
  const int st[3] = {1, n, n * n};
  int       base  = 0;

  for (int e = 0; e < 3; e++)
    if (e != d && (bits >> e) & 1) base += (n - 1) * st[e];
  for (int i = 0; i < n; i++) node[i] = base + i * st[d];
}

/* Replace the slots of cell e's hanging faces and edges by the coarse nodes in el[] (a copy of its
   element restriction); the mask */
static PetscErrorCode CellConstraints(DM dm, Hang *h, PatchworkPlexData *px, PetscInt c, PetscInt e, PetscInt *el, unsigned long long *mask)
{
  const int dim = h->dim, n = h->n;
  PetscInt *cl = NULL, ncl, orig[PW_MAX_N * PW_MAX_N * PW_MAX_N];
  int       covered[PW_MAX_N * PW_MAX_N * PW_MAX_N] = {0};

  PetscFunctionBegin;
  *mask = 0;
  PetscCall(PetscArraycpy(orig, px->elem_local + e * px->nodes, px->nodes));
  PetscCall(DMPlexGetTransitiveClosure(dm, c, PETSC_TRUE, &ncl, &cl));
  for (int pass = 0; pass < (dim == 3 ? 2 : 1); pass++) /* faces, then edges */
    for (PetscInt i = 0; i < ncl; i++) {
      const PetscInt pt = cl[2 * i];
      PetscInt       height;
      PetscBool      hangs, found;
      int            and_bits, or_bits, node[PW_MAX_N * PW_MAX_N], s[2], d = -1, nt = 0, bit = 0;
      PetscInt       slot[PW_MAX_N * PW_MAX_N], coarse[PW_MAX_N * PW_MAX_N];

      PetscCall(DMPlexGetPointHeight(dm, pt, &height));
      if (height != 1 + pass) continue;
      PetscCall(Hangs(dm, pt, &hangs));
      if (!hangs) continue;
      PetscCall(PointCorners(dm, h, orig, pt, &and_bits, &or_bits));
      if (pass == 0) { /* a face: the one direction whose bit all its corners share */
        for (int b = 0; b < dim; b++)
          if (((and_bits >> b) & 1) == ((or_bits >> b) & 1)) d = b;
        FaceNodes(dim, n, d, (and_bits >> d) & 1, node);
        nt  = dim == 3 ? n * n : n;
        bit = 2 * d + ((and_bits >> d) & 1);
      } else { /* an edge: the one direction in which its corners differ; not on a hanging face */
        int a, b;

        for (int q = 0; q < 3; q++)
          if (((and_bits >> q) & 1) != ((or_bits >> q) & 1)) d = q;
        a = (and_bits >> (d == 0 ? 1 : 0)) & 1;
        b = (and_bits >> (d == 2 ? 1 : 2)) & 1;
        if ((*mask >> (2 * (d == 0 ? 1 : 0) + a)) & 1 || (*mask >> (2 * (d == 2 ? 1 : 2) + b)) & 1) continue;
        EdgeNodes(n, d, and_bits, node);
        nt  = n;
        bit = 4 * d + 2 * b + a;
      }
      PetscCheck(d >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Point %" PetscInt_FMT " of cell %" PetscInt_FMT ": no face or edge of the cell", pt, c);
      for (int t = 0; t < nt; t++) slot[t] = orig[node[t]];
      PetscCall(MatchCoarse(h, nt == n ? 1 : 2, slot, coarse, s, &found));
      PetscCheck(found, PETSC_COMM_SELF, PETSC_ERR_SUP, "Cell %" PetscInt_FMT ": the constraints of its hanging %s %" PetscInt_FMT " are not the interpolation from the coarse %s of a 1-irregular mesh (more than one level of non-conformity?)", c, pass ? "edge" : "face", pt, pass ? "edge" : "face");
      for (int t = 0; t < nt; t++) {
        PetscCheck(!covered[node[t]] || el[node[t]] == coarse[t], PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cell %" PetscInt_FMT ": two hanging faces disagree on a coarse node", c);
        el[node[t]]       = coarse[t];
        covered[node[t]] = 1;
      }
      if (pass == 0) {
        *mask |= 1ull << bit;
        for (int t = 0; t < dim - 1; t++) *mask |= (unsigned long long)s[t] << (PW_HANG_FACE_POS + (dim - 1) * bit + t);
      } else {
        *mask |= 1ull << (PW_HANG_EDGE + bit);
        *mask |= (unsigned long long)s[0] << (PW_HANG_EDGE_POS + bit);
      }
    }
  PetscCall(DMPlexRestoreTransitiveClosure(dm, c, PETSC_TRUE, &ncl, &cl));
  /* every node the DM constrains must now be a coarse one */
  for (PetscInt i = 0; i < px->nodes; i++) {
    PetscInt cs, ce, cdof = 0;
    const PetscInt pt = h->dofpoint[orig[i]];

    if (covered[i]) continue;
    PetscCall(PetscSectionGetChart(h->csec, &cs, &ce));
    if (pt >= cs && pt < ce) PetscCall(PetscSectionGetDof(h->csec, pt, &cdof));
    PetscCheck(cdof == 0, PETSC_COMM_SELF, PETSC_ERR_SUP, "Cell %" PetscInt_FMT ": node %" PetscInt_FMT " is constrained by the DM's anchors but lies on no hanging face or edge of the cell", c, i);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Masks of hanging faces and edges (px->hang) and, in kernel_local (a copy of px->elem_local, whose
   nodes stay the cell's own: its geometry), the coarse nodes, when the DM is a tree; nothing on a
   conforming mesh. Anchors without a tree are refused. */
PetscErrorCode PatchworkPlexSetUpHanging(DM dm, PetscInt degree, PatchworkPlexData *px, PetscInt *kernel_local)
{
  MPI_Comm     comm = PetscObjectComm((PetscObject)dm);
  PetscSection anchors, parents;
  Hang         h;
  PetscInt     cStart, cEnd, pStart, pEnd, dim, nhang = 0;

  PetscFunctionBegin;
  PetscCall(DMPlexGetAnchors(dm, &anchors, NULL));
  PetscCall(DMPlexGetTree(dm, &parents, NULL, NULL, NULL, NULL));
  if (!anchors && !parents) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(parents, comm, PETSC_ERR_SUP, "The DMPlex has anchor constraints but no tree: only the hanging nodes of non-conforming refinement (DMPlexTreeRefineCell(), DMForest) are supported");
  PetscCall(DMGetDimension(dm, &dim));
  h.dim = (int)dim;
  h.n   = (int)degree + 1;
  PetscCheck(!PatchworkHangingTables((int)degree, h.P), comm, PETSC_ERR_ARG_OUTOFRANGE, "No hanging-node tables of degree %" PetscInt_FMT, degree);
  PetscCall(DMGetLocalSection(dm, &h.local));
  PetscCall(DMGetDefaultConstraints(dm, &h.csec, &h.cmat, NULL));
  PetscCheck(h.csec && h.cmat, comm, PETSC_ERR_ARG_WRONGSTATE, "The DMPlex is a tree but has no constraint matrix (DMGetDefaultConstraints())");
  PetscCall(PetscSectionGetStorageSize(h.local, &h.nloc));
  PetscCall(PetscMalloc1(h.nloc, &h.dofpoint));
  PetscCall(PetscSectionGetChart(h.local, &pStart, &pEnd));
  for (PetscInt p = pStart; p < pEnd; p++) {
    PetscInt dof, off;

    PetscCall(PetscSectionGetDof(h.local, p, &dof));
    PetscCall(PetscSectionGetOffset(h.local, p, &off));
    for (PetscInt i = 0; i < dof; i++) h.dofpoint[off + i] = p;
  }
  PetscCall(PetscMalloc1(px->ncells, &px->hang));
  PetscCall(DMPlexGetHeightStratum(dm, 0, &cStart, &cEnd));
  for (PetscInt c = cStart, e = 0; c < cEnd; c++) {
    DMPolytopeType ct;

    PetscCall(DMPlexGetCellType(dm, c, &ct));
    if (ct == DM_POLYTOPE_FV_GHOST) continue;
    PetscCall(CellConstraints(dm, &h, px, c, e, kernel_local + e * px->nodes, &px->hang[e]));
    nhang += px->hang[e] != 0;
    e++;
  }
  PetscCall(PetscFree(h.dofpoint));
  PetscCall(PetscMemcpy(px->hangP, h.P, sizeof(h.P)));
  px->nhanging = nhang;
  /* a tree none of whose cells here hangs (a p4est forest before adaptation, or this rank's part of a
     tree) is conforming here: the plain kernels, and the geometry on the fly at every degree */
  if (!nhang) PetscCall(PetscFree(px->hang));
  PetscFunctionReturn(PETSC_SUCCESS);
}
