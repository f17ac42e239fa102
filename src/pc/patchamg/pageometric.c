/* PCPATCHAMG's geometric mode (-pc_patchamg_hierarchy geometric; Geveler, Ribbrock, Goeddeke, Turek):
   the levels are the meshes of the refinement hierarchy of the PC's DMPlex; the interpolation between
   consecutive levels is assembled once (for P1 by matching the fine vertices to coarse vertices and
   edge midpoints, else by DMCreateInterpolation()) and its transpose stored beside it; the coarse
   operators are Galerkin products; the relaxations are the point and SPAI ones. Every operation of the
   V-cycle but the coarse solve is an SpMV (or a vector operation), in the format -pc_patchamg_mat_type
   chooses. Every level can be renumbered once at setup (natural, rcm, coordinate, hierarchical);
   PCApply_PatchAMG maps b and x of level 0 through pa->perm. The hierarchy is built on the host in AIJ
   and copied to the matrix's type (the device's) once. */
#include "paimpl.h"
#include <petscdmplex.h>
#include <petscfe.h>

const char *const PC_PatchAMGRenumbers[] = {"natural", "rcm", "coordinate", "hierarchical", "PC_PatchAMGRenumber", "PC_PATCHAMG_RENUMBER_", NULL};

/* ---------------------------------------------------------------- formats */

/* A copy of M in type, preallocated exactly from M's rows: PETSc's generic MatConvert() (aijcusparse
   to sellcuda, say) inserts into an unpreallocated matrix, minutes at 10^5 rows. The copy is made as
   any matrix of that type is (MatSetValues(), assembly), so its device copy is made by PETSc itself. */
static PetscErrorCode CopyToType(Mat M, MatType type, Mat *B)
{
  PetscInt rstart, rend, cstart, cend, m, n, Mg, Ng, *dnz, *onz;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(M, &rstart, &rend));
  PetscCall(MatGetOwnershipRangeColumn(M, &cstart, &cend));
  PetscCall(MatGetLocalSize(M, &m, &n));
  PetscCall(MatGetSize(M, &Mg, &Ng));
  PetscCall(PetscCalloc2(m, &dnz, m, &onz));
  for (PetscInt r = rstart; r < rend; r++) {
    PetscInt        nc;
    const PetscInt *cols;

    PetscCall(MatGetRow(M, r, &nc, &cols, NULL));
    for (PetscInt j = 0; j < nc; j++) {
      if (cols[j] >= cstart && cols[j] < cend) dnz[r - rstart]++;
      else onz[r - rstart]++;
    }
    PetscCall(MatRestoreRow(M, r, &nc, &cols, NULL));
  }
  PetscCall(MatCreate(PetscObjectComm((PetscObject)M), B));
  PetscCall(MatSetSizes(*B, m, n, Mg, Ng));
  PetscCall(MatSetType(*B, type));
  PetscCall(MatXAIJSetPreallocation(*B, 1, dnz, onz, dnz, onz)); /* AIJ, BAIJ, SBAIJ and subtypes; SELL: */
  PetscCall(MatSeqSELLSetPreallocation(*B, 0, dnz));
  PetscCall(MatMPISELLSetPreallocation(*B, 0, dnz, 0, onz));
  PetscCall(MatSetOption(*B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  PetscCall(PetscFree2(dnz, onz));
  for (PetscInt r = rstart; r < rend; r++) {
    PetscInt           nc;
    const PetscInt    *cols;
    const PetscScalar *vals;

    PetscCall(MatGetRow(M, r, &nc, &cols, &vals));
    PetscCall(MatSetValues(*B, 1, &r, nc, cols, vals, INSERT_VALUES));
    PetscCall(MatRestoreRow(M, r, &nc, &cols, &vals));
  }
  PetscCall(MatAssemblyBegin(*B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*B, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* *M in type (nothing when it is already): a new matrix, our reference to the old one dropped */
static PetscErrorCode ConvertTo(Mat *M, MatType type)
{
  PetscBool same;
  Mat       B;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)*M, type, &same));
  if (same) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(CopyToType(*M, type, &B));
  PetscCall(MatDestroy(M));
  *M = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- the transfer of a level */

/* The transfers of a geometric level: L->P = P (a host AIJ matrix; takes its reference) and
   L->R = P^T, stored explicitly so that restriction is an SpMV too (SELL on the GPU has no transpose
   product), both converted to type */
static PetscErrorCode TransferCreate(Mat P, MatType type, PC_PatchAMGLevel *L)
{
  PetscFunctionBegin;
  L->P = P;
  PetscCall(MatTranspose(P, MAT_INITIAL_MATRIX, &L->R));
  PetscCall(ConvertTo(&L->P, type));
  PetscCall(ConvertTo(&L->R, type));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- the DM hierarchy */

/* The DMs of the levels, finest first: the PC's DMPlex and its chain of coarse DMs (at most
   -pc_patchamg_levels of them), every one a DMPlex with coordinates */
static PetscErrorCode GetLevelDMs(PC pc, PetscInt *nl, DM **dms)
{
  PC_PatchAMG *pa   = (PC_PatchAMG *)pc->data;
  MPI_Comm     comm = PetscObjectComm((PetscObject)pc);
  DM           dm, c;
  PetscInt     n = 0;
  PetscBool    isplex;

  PetscFunctionBegin;
  PetscCall(PCGetDM(pc, &dm));
  PetscCheck(dm, comm, PETSC_ERR_ARG_WRONGSTATE, "PCPATCHAMG -pc_patchamg_hierarchy geometric needs a DM with a refinement hierarchy, and the PC has none: give it the DMPlex the matrix was assembled on with PCSetDM() (or KSPSetDM() with the KSP's use of the DM switched off by KSPSetDMActive())");
  PetscCall(PetscObjectTypeCompare((PetscObject)dm, DMPLEX, &isplex));
  PetscCheck(isplex, comm, PETSC_ERR_SUP, "PCPATCHAMG -pc_patchamg_hierarchy geometric needs a DMPlex with a refinement hierarchy, not a DM of type %s (use -pc_patchamg_hierarchy algebraic)", ((PetscObject)dm)->type_name);
  for (c = dm; c && (pa->max_levels <= 0 || n < pa->max_levels); n++) PetscCall(DMGetCoarseDM(c, &c));
  PetscCheck(n >= 2, comm, PETSC_ERR_ARG_WRONGSTATE, "PCPATCHAMG -pc_patchamg_hierarchy geometric needs a DM with a refinement hierarchy, but %s: refine the mesh so that the coarse meshes are kept (-dm_refine_hierarchy <n>, DMRefineHierarchy(), or DMRefine() and DMSetCoarseDM(); examples/tets: -refine <n> -refine_hierarchy), or use -pc_patchamg_hierarchy algebraic",
             pa->max_levels == 1 ? "-pc_patchamg_levels is 1" : "the PC's DMPlex has no coarse DM (DMGetCoarseDM() gives NULL)");
  PetscCall(PetscMalloc1(n, dms));
  c = dm;
  for (PetscInt l = 0; l < n; l++) {
    Vec x;

    PetscCall(PetscObjectTypeCompare((PetscObject)c, DMPLEX, &isplex));
    PetscCheck(isplex, comm, PETSC_ERR_SUP, "PCPATCHAMG -pc_patchamg_hierarchy geometric needs a hierarchy of DMPlex, but the coarse DM of level %" PetscInt_FMT " is of type %s", l, ((PetscObject)c)->type_name);
    PetscCall(DMGetCoordinatesLocal(c, &x));
    PetscCheck(x, comm, PETSC_ERR_ARG_WRONGSTATE, "PCPATCHAMG -pc_patchamg_hierarchy geometric needs the vertex coordinates of every mesh of the hierarchy (the interpolation evaluates the coarse basis at the fine nodes), and the DMPlex of level %" PetscInt_FMT " has none", l);
    (*dms)[l] = c;
    PetscCall(DMGetCoarseDM(c, &c));
  }
  *nl = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The finest DM's discretization (scalar P1 when it has none, as PatchworkDMPlexAssembleP1() makes)
   copied to the coarse DMs that have none; the matrix must be laid out like the DM's global vectors */
static PetscErrorCode SetUpDiscretization(PC pc, PetscInt nl, DM dms[])
{
  MPI_Comm     comm = PetscObjectComm((PetscObject)pc);
  PetscInt     nf, n, m;
  PetscSection gs;
  PetscMPIInt  bad;

  PetscFunctionBegin;
  PetscCall(DMGetNumFields(dms[0], &nf));
  if (nf == 0) {
    PetscFE   fe;
    PetscInt  dim;
    PetscBool simplex;

    PetscCall(DMGetDimension(dms[0], &dim));
    PetscCall(DMPlexIsSimplex(dms[0], &simplex));
    PetscCall(PetscFECreateLagrange(comm, dim, 1, simplex, 1, PETSC_DETERMINE, &fe));
    PetscCall(PetscObjectSetName((PetscObject)fe, "u"));
    PetscCall(DMSetField(dms[0], 0, NULL, (PetscObject)fe));
    PetscCall(PetscFEDestroy(&fe));
    PetscCall(DMCreateDS(dms[0]));
  }
  for (PetscInt l = 1; l < nl; l++) {
    PetscCall(DMGetNumFields(dms[l], &nf));
    if (nf == 0) PetscCall(DMCopyDisc(dms[0], dms[l]));
  }
  PetscCall(DMGetGlobalSection(dms[0], &gs));
  PetscCall(PetscSectionGetConstrainedStorageSize(gs, &n));
  PetscCall(MatGetLocalSize(pc->pmat, &m, NULL));
  bad = m != n;
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm));
  PetscCheck(!bad, comm, PETSC_ERR_ARG_SIZ, "PCPATCHAMG -pc_patchamg_hierarchy geometric: the matrix has %" PetscInt_FMT " local rows, the DM's global vectors %" PetscInt_FMT " (on some rank): the matrix must be assembled on the PC's DM, in its numbering", m, n);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- P1 interpolation */

/* Whether every DM's local section holds one dof on every vertex and none elsewhere (on every rank) */
static PetscErrorCode IsP1(DM dm, PetscBool *p1)
{
  PetscSection s;
  PetscInt     vStart, vEnd, size;
  PetscMPIInt  bad = 0;

  PetscFunctionBegin;
  PetscCall(DMGetLocalSection(dm, &s));
  PetscCall(DMPlexGetDepthStratum(dm, 0, &vStart, &vEnd));
  PetscCall(PetscSectionGetStorageSize(s, &size));
  if (size != vEnd - vStart) bad = 1;
  for (PetscInt v = vStart; v < vEnd && !bad; v++) {
    PetscInt dof;

    PetscCall(PetscSectionGetDof(s, v, &dof));
    if (dof != 1) bad = 1;
  }
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, PetscObjectComm((PetscObject)dm)));
  *p1 = (PetscBool)!bad;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A coarse vertex (b = -1) or the midpoint of a coarse edge (a, b: its vertices), as global dofs */
typedef struct {
  PetscReal x[3];
  PetscInt  a, b;
} Node;

static int CompareNode(const void *a, const void *b, void *ctx)
{
  const Node *p = (const Node *)a, *q = (const Node *)b;

  for (int d = 0; d < 3; d++)
    if (p->x[d] != q->x[d]) return p->x[d] < q->x[d] ? -1 : 1;
  return 0;
}

static inline PetscInt GlobalDof(PetscSection gs, PetscInt p)
{
  PetscInt off;

  if (PetscSectionGetOffset(gs, p, &off)) return -1;
  return off < 0 ? -(off + 1) : off;
}

static inline void PointCoordinates(PetscSection cs, const PetscScalar *x, PetscInt cdim, PetscInt v, PetscReal y[3])
{
  PetscInt off = 0;

  PetscSectionGetOffset(cs, v, &off);
  for (PetscInt d = 0; d < 3; d++) y[d] = d < cdim ? PetscRealPart(x[off + d]) : 0;
}

/* The coarse mesh's points a fine vertex may come from, for P1Interpolation() */
typedef struct {
  PetscSection       gs, cs;
  const PetscScalar *x;
  PetscInt           cdim, vStart, vEnd, eStart, eEnd;
  DM                 dm;
} CoarseMesh;

/* The node of a coarse vertex or edge (as point) */
static PetscErrorCode CoarseNode(const CoarseMesh *c, PetscInt p, Node *node)
{
  PetscFunctionBegin;
  if (p < c->vEnd) {
    PointCoordinates(c->cs, c->x, c->cdim, p, node->x);
    node->a = GlobalDof(c->gs, p);
    node->b = -1;
  } else {
    const PetscInt *cone;
    PetscReal       y0[3], y1[3];

    PetscCall(DMPlexGetCone(c->dm, p, &cone));
    PointCoordinates(c->cs, c->x, c->cdim, cone[0], y0);
    PointCoordinates(c->cs, c->x, c->cdim, cone[1], y1);
    for (PetscInt d = 0; d < 3; d++) node->x[d] = (y0[d] + y1[d]) / 2; /* as DMPlexTransform's barycentre */
    node->a = GlobalDof(c->gs, cone[0]);
    node->b = GlobalDof(c->gs, cone[1]);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The P1 interpolation of a regular refinement (every new vertex the midpoint of a coarse edge, as
   DMRefine() makes them): each fine vertex is matched to a coarse vertex or edge midpoint by its
   coordinates (computed as PETSc's refinement computes them, so equal to the bit), and its row gets
   1, or 1/2 and 1/2. The match is first guessed from the numbering of PETSc's refinement (the coarse
   vertices' children first, then the edges', in the coarse order) and verified; where a guess fails,
   the vertex is searched among all the rank's coarse vertices and edge midpoints, sorted. Equal to
   DMCreateInterpolation()'s (-pc_patchamg_dm_interpolation gives the same iterations), which PETSc 3.18
   cannot build for tetrahedra, and much faster. found: every fine vertex on every rank was (else P is
   NULL and the caller asks DMCreateInterpolation()). */
static PetscErrorCode P1Interpolation(DM dmc, DM dmf, Mat *P, PetscBool *found)
{
  MPI_Comm           comm = PetscObjectComm((PetscObject)dmf);
  PetscSection       gsf, csf;
  DM                 cdm;
  Vec                xcv, xfv;
  const PetscScalar *xf;
  PetscInt           vStart, vEnd, nn = 0, m, n, rstart, *ia, *ja, nsearch = 0;
  PetscScalar       *va;
  Node              *node = NULL;
  CoarseMesh         c;
  PetscMPIInt        bad = 0;

  PetscFunctionBegin;
  *P   = NULL;
  c.dm = dmc;
  PetscCall(DMGetCoordinateDim(dmc, &c.cdim));
  PetscCall(DMGetGlobalSection(dmc, &c.gs));
  PetscCall(DMGetGlobalSection(dmf, &gsf));
  PetscCall(DMGetCoordinateDM(dmc, &cdm));
  PetscCall(DMGetLocalSection(cdm, &c.cs));
  PetscCall(DMGetCoordinateDM(dmf, &cdm));
  PetscCall(DMGetLocalSection(cdm, &csf));
  PetscCall(DMGetCoordinatesLocal(dmc, &xcv));
  PetscCall(DMGetCoordinatesLocal(dmf, &xfv));
  PetscCall(VecGetArrayRead(xcv, &c.x));
  PetscCall(VecGetArrayRead(xfv, &xf));
  PetscCall(DMPlexGetDepthStratum(dmc, 0, &c.vStart, &c.vEnd));
  PetscCall(DMPlexGetDepthStratum(dmc, 1, &c.eStart, &c.eEnd));
  if (c.eStart == c.vStart) c.eStart = c.eEnd; /* not interpolated: no edges (the search then fails) */
  PetscCall(PetscSectionGetConstrainedStorageSize(gsf, &m));
  PetscCall(PetscSectionGetConstrainedStorageSize(c.gs, &n));
  PetscCall(PetscMalloc3(m + 1, &ia, 2 * PetscMax(m, 1), &ja, 2 * PetscMax(m, 1), &va));
  PetscCall(PetscArrayzero(ia, m + 1));
  PetscCall(DMPlexGetDepthStratum(dmf, 0, &vStart, &vEnd));
  rstart = PETSC_MAX_INT;
  for (PetscInt v = vStart; v < vEnd; v++) {
    PetscInt dof, off;

    PetscCall(PetscSectionGetDof(gsf, v, &dof));
    PetscCall(PetscSectionGetOffset(gsf, v, &off));
    if (dof > 0) rstart = PetscMin(rstart, off);
  }
  for (PetscInt v = vStart; v < vEnd && !bad; v++) {
    const PetscInt k  = v - vStart, nvc = c.vEnd - c.vStart;
    const PetscInt gp = k < nvc ? c.vStart + k : (k - nvc < c.eEnd - c.eStart ? c.eStart + k - nvc : -1);
    PetscInt       dof, off, r;
    Node           key, guess, *hit = NULL;

    PetscCall(PetscSectionGetDof(gsf, v, &dof));
    if (dof <= 0) continue; /* another rank's */
    PetscCall(PetscSectionGetOffset(gsf, v, &off));
    r = off - rstart;
    PointCoordinates(csf, xf, c.cdim, v, key.x);
    if (gp >= 0) {
      PetscCall(CoarseNode(&c, gp, &guess));
      if (!CompareNode(&key, &guess, NULL)) hit = &guess;
    }
    if (!hit) { /* search: all candidates sorted by position, made at the first miss */
      PetscInt lo = 0, hi;

      nsearch++;
      if (!node) {
        PetscCall(PetscMalloc1(c.vEnd - c.vStart + c.eEnd - c.eStart, &node));
        for (PetscInt p = c.vStart; p < c.vEnd; p++) PetscCall(CoarseNode(&c, p, &node[nn++]));
        for (PetscInt p = c.eStart; p < c.eEnd; p++) PetscCall(CoarseNode(&c, p, &node[nn++]));
        PetscCall(PetscTimSort(nn, node, sizeof(Node), CompareNode, NULL));
      }
      hi = nn - 1;
      while (lo <= hi) {
        const PetscInt mid = lo + (hi - lo) / 2;
        const int      cmp = CompareNode(&key, &node[mid], NULL);

        if (!cmp) {
          hit = &node[mid];
          break;
        }
        if (cmp < 0) hi = mid - 1;
        else lo = mid + 1;
      }
    }
    if (!hit || r < 0 || r >= m) {
      bad = 1;
      break;
    }
    ja[2 * r]     = hit->a;
    ja[2 * r + 1] = hit->b;
    ia[r + 1]     = hit->b < 0 ? 1 : 2;
  }
  PetscCall(VecRestoreArrayRead(xcv, &c.x));
  PetscCall(VecRestoreArrayRead(xfv, &xf));
  PetscCall(PetscFree(node));
  PetscCall(PetscInfo(dmf, "P1 interpolation: %" PetscInt_FMT " of %" PetscInt_FMT " rows searched (the others as the refinement numbered them)%s\n", nsearch, m, bad ? "; a vertex matched nothing" : ""));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm));
  *found = (PetscBool)!bad;
  if (*found) { /* the pairs to CSR, columns ascending */
    PetscInt k = 0;

    for (PetscInt r = 0; r < m; r++) {
      const PetscInt a = ja[2 * r], b = ja[2 * r + 1], cnt = ia[r + 1];

      if (cnt == 1) {
        ja[k]   = a;
        va[k++] = 1;
      } else {
        ja[k]   = PetscMin(a, b);
        va[k++] = 0.5;
        ja[k]   = PetscMax(a, b);
        va[k++] = 0.5;
      }
      ia[r + 1] = k;
    }
    PetscCall(PCPatchAMGMatCreateFromCSR(comm, MATAIJ, m, n, ia, ja, va, P));
  }
  PetscCall(PetscFree3(ia, ja, va));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* DMCreateInterpolation() stores the zeros of the coarse basis at the fine nodes (and rounding
   residue): dropping what lies below 1e-12 of the row's largest keeps the Galerkin operators on the
   pattern of the rediscretized ones (P1: 2.2 -> 1.33 operator complexity on the annulus) */
static PetscErrorCode DropZeros(Mat *P)
{
  PetscInt     rstart, rend, m, n, *ia, *ja, k = 0;
  PetscScalar *va;
  Mat          F;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(*P, &rstart, &rend));
  PetscCall(MatGetLocalSize(*P, &m, &n));
  {
    MatInfo info;

    PetscCall(MatGetInfo(*P, MAT_LOCAL, &info));
    PetscCall(PetscMalloc3(m + 1, &ia, (PetscInt)info.nz_used + 1, &ja, (PetscInt)info.nz_used + 1, &va));
  }
  ia[0] = 0;
  for (PetscInt r = rstart; r < rend; r++) {
    PetscInt           nc;
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscReal          vmax = 0;

    PetscCall(MatGetRow(*P, r, &nc, &cols, &vals));
    for (PetscInt j = 0; j < nc; j++) vmax = PetscMax(vmax, PetscAbsScalar(vals[j]));
    for (PetscInt j = 0; j < nc; j++)
      if (PetscAbsScalar(vals[j]) > 1e-12 * vmax) {
        ja[k]   = cols[j];
        va[k++] = vals[j];
      }
    PetscCall(MatRestoreRow(*P, r, &nc, &cols, &vals));
    ia[r - rstart + 1] = k;
  }
  PetscCall(PCPatchAMGMatCreateFromCSR(PetscObjectComm((PetscObject)*P), MATAIJ, m, n, ia, ja, va, &F));
  PetscCall(PetscFree3(ia, ja, va));
  PetscCall(MatDestroy(P));
  *P = F;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- renumberings (rank-local) */

/* Every ordering is perm[new] = old over the rank's rows (local indices) */

/* Reverse Cuthill-McKee of the rank's diagonal block (its host pattern; the values are not read) */
static PetscErrorCode OrderRCM(Mat A, PetscInt **perm)
{
  Mat             Ad;
  IS              rp, cp;
  const PetscInt *idx;
  PetscInt        n;

  PetscFunctionBegin;
  PetscCall(MatGetDiagonalBlock(A, &Ad));
  PetscCall(MatGetOrdering(Ad, MATORDERINGRCM, &rp, &cp));
  PetscCall(MatGetLocalSize(A, &n, NULL));
  PetscCall(PetscMalloc1(n, perm));
  PetscCall(ISGetIndices(rp, &idx));
  PetscCall(PetscArraycpy(*perm, idx, n));
  PetscCall(ISRestoreIndices(rp, &idx));
  PetscCall(ISDestroy(&rp));
  PetscCall(ISDestroy(&cp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  PetscReal x[3];
  PetscInt  i;
} CoordKey;

/* z, then y, then x (x runs fastest, as in a lexicographic grid numbering), then the old index */
static int CompareCoord(const void *a, const void *b, void *ctx)
{
  const CoordKey *p = (const CoordKey *)a, *q = (const CoordKey *)b;

  for (int d = 2; d >= 0; d--)
    if (p->x[d] != q->x[d]) return p->x[d] < q->x[d] ? -1 : 1;
  return p->i < q->i ? -1 : (p->i > q->i ? 1 : 0);
}

/* The rank's dofs sorted by the coordinates of their vertices (one dof on every vertex, as P1) */
static PetscErrorCode OrderCoordinate(DM dm, Mat A, PetscInt **perm)
{
  PetscSection       gs, cs;
  DM                 cdm;
  Vec                xv;
  const PetscScalar *x;
  PetscInt           vStart, vEnd, cdim, rstart, rend, n, cnt = 0;
  PetscMPIInt        bad = 0;
  CoordKey          *key;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  n = rend - rstart;
  PetscCall(DMGetGlobalSection(dm, &gs));
  PetscCall(DMPlexGetDepthStratum(dm, 0, &vStart, &vEnd));
  PetscCall(DMGetCoordinateDim(dm, &cdim));
  PetscCall(DMGetCoordinateDM(dm, &cdm));
  PetscCall(DMGetLocalSection(cdm, &cs));
  PetscCall(DMGetCoordinatesLocal(dm, &xv));
  PetscCall(VecGetArrayRead(xv, &x));
  PetscCall(PetscMalloc1(n, &key));
  for (PetscInt v = vStart; v < vEnd && !bad; v++) {
    PetscInt dof, off, coff;

    PetscCall(PetscSectionGetDof(gs, v, &dof));
    if (dof <= 0) continue; /* another rank's vertex */
    PetscCall(PetscSectionGetOffset(gs, v, &off));
    PetscCall(PetscSectionGetOffset(cs, v, &coff));
    if (dof != 1 || off < rstart || off >= rend || cnt == n) {
      bad = 1;
      break;
    }
    for (PetscInt d = 0; d < 3; d++) key[cnt].x[d] = d < cdim ? PetscRealPart(x[coff + d]) : 0;
    key[cnt++].i = off - rstart;
  }
  PetscCall(VecRestoreArrayRead(xv, &x));
  if (cnt != n) bad = 1;
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, PetscObjectComm((PetscObject)A)));
  if (bad) PetscCall(PetscFree(key));
  PetscCheck(!bad, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "PCPATCHAMG -pc_patchamg_renumber coordinate needs one dof on every vertex and none elsewhere (P1); use rcm or hierarchical");
  PetscCall(PetscTimSort(n, key, sizeof(CoordKey), CompareCoord, NULL));
  PetscCall(PetscMalloc1(n, perm));
  for (PetscInt i = 0; i < n; i++) (*perm)[i] = key[i].i;
  PetscCall(PetscFree(key));
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  PetscInt first, second, i;
} ParentKey;

static int CompareParent(const void *a, const void *b, void *ctx)
{
  const ParentKey *p = (const ParentKey *)a, *q = (const ParentKey *)b;

  if (p->first != q->first) return p->first < q->first ? -1 : 1;
  if (p->second != q->second) return p->second < q->second ? -1 : 1;
  return p->i < q->i ? -1 : (p->i > q->i ? 1 : 0);
}

/* The hierarchical numbering of a fine level from its coarse level's (permc): every coarse dof in the
   coarse order, each followed by the new dofs whose first parent (the coarse dof of their row of the
   interpolation P, in the coarse order) it is, those sorted by their second parent. The parents are
   the rank's coarse dofs with an entry above 1e-8 of the row's largest; a row without them goes last. */
static PetscErrorCode OrderHierarchical(Mat P, const PetscInt permc[], PetscInt **perm)
{
  PetscInt   rstart, rend, cstart, cend, *posc;
  ParentKey *key;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(P, &rstart, &rend));
  PetscCall(MatGetOwnershipRangeColumn(P, &cstart, &cend));
  PetscCall(PetscMalloc2(cend - cstart, &posc, rend - rstart, &key));
  for (PetscInt k = 0; k < cend - cstart; k++) posc[permc[k]] = k;
  for (PetscInt r = rstart; r < rend; r++) {
    PetscInt           nc, np = 0;
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscReal          vmax = 0;
    ParentKey         *k = &key[r - rstart];

    k->first = k->second = PETSC_MAX_INT;
    k->i                 = r - rstart;
    PetscCall(MatGetRow(P, r, &nc, &cols, &vals));
    for (PetscInt j = 0; j < nc; j++) vmax = PetscMax(vmax, PetscAbsScalar(vals[j]));
    for (PetscInt j = 0; j < nc; j++) {
      PetscInt p;

      if (PetscAbsScalar(vals[j]) <= 1e-8 * vmax) continue;
      np++;
      if (cols[j] < cstart || cols[j] >= cend) continue;
      p = posc[cols[j] - cstart];
      if (p < k->first) {
        k->second = k->first;
        k->first  = p;
      } else if (p < k->second) k->second = p;
    }
    PetscCall(MatRestoreRow(P, r, &nc, &cols, &vals));
    if (np == 1) k->second = -1; /* a coarse vertex itself: before the new ones around it */
  }
  PetscCall(PetscTimSort(rend - rstart, key, sizeof(ParentKey), CompareParent, NULL));
  PetscCall(PetscMalloc1(rend - rstart, perm));
  for (PetscInt i = 0; i < rend - rstart; i++) (*perm)[i] = key[i].i;
  PetscCall(PetscFree2(posc, key));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Q (row i: a one in column perm[i], so (Q x)_i = x_perm[i]) or, transpose, Q^T; A's type and rows */
static PetscErrorCode PermutationMatrix(Mat A, const PetscInt perm[], PetscBool transpose, Mat *Q)
{
  PetscInt     rstart, rend, n, *ia, *ja;
  PetscScalar *va;
  MatType      type;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  n = rend - rstart;
  PetscCall(PetscMalloc3(n + 1, &ia, PetscMax(n, 1), &ja, PetscMax(n, 1), &va));
  for (PetscInt i = 0; i <= n; i++) ia[i] = i;
  for (PetscInt i = 0; i < n; i++) {
    va[i] = 1;
    if (transpose) ja[perm[i]] = rstart + i;
    else ja[i] = rstart + perm[i];
  }
  PetscCall(MatGetType(A, &type));
  PetscCall(PCPatchAMGMatCreateFromCSR(PetscObjectComm((PetscObject)A), type, n, n, ia, ja, va, Q));
  PetscCall(PetscFree3(ia, ja, va));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Renumber every level (host AIJ matrices): A_l <- Q_l A_l Q_l^T, P_l <- Q_l P_l Q_{l+1}^T as products
   with permutation matrices (exact: one product of a one per entry). is0: level 0's new -> old, global. */
static PetscErrorCode Renumber(PC pc, PetscInt nl, DM dms[], Mat A[], Mat P[], IS *is0)
{
  PC_PatchAMG *pa = (PC_PatchAMG *)pc->data;
  PetscInt   **perm;
  Mat         *Q, *Qt;

  PetscFunctionBegin;
  PetscCall(PetscCalloc3(nl, &perm, nl, &Q, nl, &Qt));
  switch (pa->renumber) {
  case PC_PATCHAMG_RENUMBER_RCM:
    for (PetscInt l = 0; l < nl; l++) PetscCall(OrderRCM(A[l], &perm[l]));
    break;
  case PC_PATCHAMG_RENUMBER_COORDINATE:
    for (PetscInt l = 0; l < nl; l++) PetscCall(OrderCoordinate(dms[l], A[l], &perm[l]));
    break;
  case PC_PATCHAMG_RENUMBER_HIERARCHICAL: /* from the coarsest level (RCM) down */
    PetscCall(OrderRCM(A[nl - 1], &perm[nl - 1]));
    for (PetscInt l = nl - 2; l >= 0; l--) PetscCall(OrderHierarchical(P[l], perm[l + 1], &perm[l]));
    break;
  default:
    SETERRQ(PetscObjectComm((PetscObject)pc), PETSC_ERR_PLIB, "unknown renumbering");
  }
  for (PetscInt l = 0; l < nl; l++) {
    PetscCall(PermutationMatrix(A[l], perm[l], PETSC_FALSE, &Q[l]));
    PetscCall(PermutationMatrix(A[l], perm[l], PETSC_TRUE, &Qt[l]));
  }
  for (PetscInt l = 0; l < nl; l++) {
    Mat B;

    PetscCall(MatPtAP(A[l], Qt[l], MAT_INITIAL_MATRIX, 1.0, &B));
    PetscCall(MatDestroy(&A[l]));
    A[l] = B;
    if (l < nl - 1) {
      Mat T;

      PetscCall(MatMatMult(P[l], Qt[l + 1], MAT_INITIAL_MATRIX, 1.0, &T));
      PetscCall(MatDestroy(&P[l]));
      PetscCall(MatMatMult(Q[l], T, MAT_INITIAL_MATRIX, 1.0, &P[l]));
      PetscCall(MatDestroy(&T));
    }
  }
  { /* level 0: b_new[i] = b[perm[i]] */
    PetscInt rstart, rend, *idx;

    PetscCall(MatGetOwnershipRange(A[0], &rstart, &rend));
    PetscCall(PetscMalloc1(rend - rstart, &idx));
    for (PetscInt i = 0; i < rend - rstart; i++) idx[i] = rstart + perm[0][i];
    PetscCall(ISCreateGeneral(PetscObjectComm((PetscObject)pc), rend - rstart, idx, PETSC_OWN_POINTER, is0));
  }
  for (PetscInt l = 0; l < nl; l++) {
    PetscCall(PetscFree(perm[l]));
    PetscCall(MatDestroy(&Q[l]));
    PetscCall(MatDestroy(&Qt[l]));
  }
  PetscCall(PetscFree3(perm, Q, Qt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- setup */

/* max |i - j| over the entries of A (global indices): what a numbering does to the SpMV's reach */
static PetscErrorCode Bandwidth(Mat A, PetscInt *bw)
{
  PetscInt rstart, rend;

  PetscFunctionBegin;
  *bw = 0;
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (PetscInt r = rstart; r < rend; r++) {
    PetscInt        nc;
    const PetscInt *cols;

    PetscCall(MatGetRow(A, r, &nc, &cols, NULL));
    if (nc) *bw = PetscMax(*bw, PetscMax(PetscAbsInt(cols[0] - r), PetscAbsInt(cols[nc - 1] - r)));
    PetscCall(MatRestoreRow(A, r, &nc, &cols, NULL));
  }
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, bw, 1, MPIU_INT, MPI_MAX, PetscObjectComm((PetscObject)A)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCPatchAMGResetGeometric(PC pc)
{
  PC_PatchAMG *pa = (PC_PatchAMG *)pc->data;

  PetscFunctionBegin;
  PetscCall(VecScatterDestroy(&pa->perm));
  PetscCall(PetscFree(pa->bandwidth));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscBool cited      = PETSC_FALSE;
static const char citation[] = "@inproceedings{GevelerRibbrockGoeddekeTurek2011,\n"
                               "  title     = {Efficient finite element geometric multigrid solvers for unstructured grids on {GPUs}},\n"
                               "  author    = {Geveler, Markus and Ribbrock, Dirk and G{\\\"o}ddeke, Dominik and Turek, Stefan},\n"
                               "  booktitle = {Second International Conference on Parallel, Distributed, Grid and Cloud Computing for Engineering},\n"
                               "  year      = {2011}\n}\n";

/* The levels of the geometric mode, filled as the algebraic setup fills them (pasetup.c): L->A, L->P,
   the vectors, sizes, relaxation, then the coarse solver. Called by PCSetUp_PatchAMG after its checks
   of the matrix, with the levels reset. The hierarchy (interpolations, Galerkin products,
   renumbering) is built on host AIJ copies, then moved to the matrix's type (on the GPU the products
   are one-time setup work, and the relaxation's setup reads the matrices' rows on the host anyway). */
PetscErrorCode PCPatchAMGSetUpGeometric(PC pc)
{
  PC_PatchAMG   *pa   = (PC_PatchAMG *)pc->data;
  MPI_Comm       comm = PetscObjectComm((PetscObject)pc);
  PetscInt       nl   = 0;
  DM            *dms;
  Mat           *A, *P;
  IS             is0 = NULL;
  MatType        atype;
  PetscBool      host;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(PetscCitationsRegister(citation, &cited));
  PetscCall(PCPatchAMGResetGeometric(pc));
  PetscCheck(pa->relax != PATCHWORK_AMG_RELAX_PATCH, comm, PETSC_ERR_SUP, "PCPATCHAMG: the patch relaxation works on the patches of aggregates, which -pc_patchamg_hierarchy geometric does not build; use -pc_patchamg_relax spai1 (its default), jacobi, l1jacobi, spai0 or chebyshev");
  pa->geo_time[0] = pa->geo_time[1] = 0;
  PetscCall(MatGetType(pc->pmat, &atype));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)pc->pmat, &host, MATSEQAIJ, MATMPIAIJ, ""));

  /* 1. the levels' DMs, their discretization, the interpolations (host AIJ, the DMs' numbering) */
  PetscCall(PetscTime(&t0));
  PetscCall(PetscLogEventBegin(PATCHWORK_AMGProlong, pc, 0, 0, 0));
  PetscCall(GetLevelDMs(pc, &nl, &dms));
  PetscCall(SetUpDiscretization(pc, nl, dms));
  PetscCall(PetscCalloc2(nl, &A, nl, &P));
  pa->geo_p1 = PETSC_FALSE;
  if (!pa->dm_interp) {
    pa->geo_p1 = PETSC_TRUE;
    for (PetscInt l = 0; l < nl && pa->geo_p1; l++) PetscCall(IsP1(dms[l], &pa->geo_p1));
  }
  for (PetscInt l = 0; l < nl - 1; l++) {
    PetscBool found = PETSC_FALSE;

    if (pa->geo_p1) PetscCall(P1Interpolation(dms[l + 1], dms[l], &P[l], &found));
    if (!found) {
      pa->geo_p1 = PETSC_FALSE;
      PetscCall(DMCreateInterpolation(dms[l + 1], dms[l], &P[l], NULL));
      PetscCall(DropZeros(&P[l])); /* also makes it host AIJ */
    }
  }
  PetscCall(PetscLogEventEnd(PATCHWORK_AMGProlong, pc, 0, 0, 0));
  PetscCall(PetscTime(&t1));
  pa->setup_time[0] = t1 - t0;

  /* 2. Galerkin operators A_{l+1} = P_l^T A_l P_l, from a host copy of the matrix */
  PetscCall(PetscTime(&t0));
  PetscCall(PetscLogEventBegin(PATCHWORK_AMGGalerkin, pc, 0, 0, 0));
  if (host) {
    PetscCall(PetscObjectReference((PetscObject)pc->pmat));
    A[0] = pc->pmat;
  } else PetscCall(CopyToType(pc->pmat, MATAIJ, &A[0]));
  for (PetscInt l = 0; l < nl - 1; l++) PetscCall(MatPtAP(A[l], P[l], MAT_INITIAL_MATRIX, 2.0, &A[l + 1]));
  PetscCall(PetscLogEventEnd(PATCHWORK_AMGGalerkin, pc, 0, 0, 0));
  PetscCall(PetscTime(&t1));
  pa->setup_time[1] = t1 - t0;

  /* 3. renumbering, once for all levels */
  PetscCall(PetscTime(&t0));
  if (pa->renumber != PC_PATCHAMG_RENUMBER_NATURAL) PetscCall(Renumber(pc, nl, dms, A, P, &is0));
  PetscCall(PetscTime(&t1));
  pa->geo_time[0] = t1 - t0;

  /* 4. the levels as the V-cycle sees them, in the matrix's type (level 0 natural: the matrix itself) */
  PetscCall(PetscTime(&t0));
  pa->nlevels = nl;
  PetscCall(PetscCalloc1(nl, &pa->levels));
  PetscCall(PetscMalloc1(nl, &pa->bandwidth));
  for (PetscInt l = 0; l < nl; l++) {
    PC_PatchAMGLevel *L = &pa->levels[l];
    MatInfo           info;

    PetscCall(MatGetInfo(A[l], MAT_GLOBAL_SUM, &info));
    L->nnz = info.nz_used;
    PetscCall(Bandwidth(A[l], &pa->bandwidth[l]));
    if (l == 0 && !is0 && !host) {
      PetscCall(MatDestroy(&A[0]));
      PetscCall(PetscObjectReference((PetscObject)pc->pmat));
      A[0] = pc->pmat;
    } else if (A[l] != pc->pmat) PetscCall(ConvertTo(&A[l], atype));
    L->A = A[l];
    PetscCall(PCPatchAMGLevelSetUpVecs(L));
    if (l < nl - 1) PetscCall(MatGetLocalSize(P[l], NULL, &L->naggs));
  }
  if (is0) { /* b in the new order: b0[i] = b[perm[i]] */
    Vec u;

    PetscCall(MatCreateVecs(pc->pmat, &u, NULL));
    PetscCall(VecScatterCreate(u, is0, pa->levels[0].x, NULL, &pa->perm));
    PetscCall(VecDestroy(&u));
    PetscCall(ISDestroy(&is0));
  }
  PetscCall(PetscTime(&t1));
  pa->geo_time[1] = t1 - t0;

  /* 5. relaxation (on the matrices' own type: SPAI and scalings read rows), the coarse solver */
  PetscCall(PCPatchAMGSetUpRelaxationsAndCoarse(pc, NULL));

  /* 6. the SpMV format of everything the cycle multiplies by (not the coarsest matrix: LU needs AIJ),
     P and its stored transpose R */
  PetscCall(PetscTime(&t0));
  for (PetscInt l = 0; l < nl - 1; l++) {
    PC_PatchAMGLevel *L = &pa->levels[l];
    PetscBool         same = PETSC_TRUE;

    if (pa->mat_type) PetscCall(PetscObjectTypeCompare((PetscObject)L->A, pa->mat_type, &same));
    if (!same) { /* new matrices: the user's stays as it is */
      PetscCall(ConvertTo(&L->A, pa->mat_type));
      if (L->cheby) PetscCall(KSPSetOperators(L->cheby, L->A, L->A));
      if (L->spai) PetscCall(ConvertTo(&L->spai, pa->mat_type));
    }
    PetscCall(TransferCreate(P[l], pa->mat_type ? pa->mat_type : atype, L));
    P[l] = NULL;
  }
  PetscCall(PetscTime(&t1));
  pa->geo_time[1] += t1 - t0;
  PetscCall(PetscFree2(A, P));
  PetscCall(PetscFree(dms));
  PetscFunctionReturn(PETSC_SUCCESS);
}
