/* Q_k fields on DMPlex quadrilateral and hexahedral meshes: the field itself (Gauss-Lobatto
   Lagrange), its validation, and the element restriction and node coordinates of the operator. */
#include "tensorimpl.h"
#include <petscds.h>
#include <petscfe.h>
#include <petscsf.h>
#include <petscdmforest.h>

static PetscErrorCode Zero(PetscInt dim, PetscReal t, const PetscReal x[], PetscInt Nc, PetscScalar *u, void *ctx)
{
  (void)dim;
  (void)t;
  (void)x;
  (void)ctx;
  for (PetscInt c = 0; c < Nc; c++) u[c] = 0;
  return PETSC_SUCCESS;
}

static PetscErrorCode Coordinate(PetscInt dim, PetscReal t, const PetscReal x[], PetscInt Nc, PetscScalar *u, void *ctx)
{
  (void)dim;
  (void)t;
  (void)Nc;
  u[0] = x[*(PetscInt *)ctx];
  return PETSC_SUCCESS;
}

/* The DMPlex the operator works on: dm itself, or the mesh of a DMForest (p4est), which shares the
   forest's discretization (field, section, boundary conditions) and so its vector layout */
PetscErrorCode PatchworkDMGetPlex(DM dm, DM *plex)
{
  PetscBool isplex, isforest;
  VecType   vtype;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)dm, DMPLEX, &isplex));
  if (isplex) {
    PetscCall(PetscObjectReference((PetscObject)dm));
    *plex = dm;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(DMIsForest(dm, &isforest));
  PetscCheck(isforest, PetscObjectComm((PetscObject)dm), PETSC_ERR_ARG_WRONG, "Expected a DMPlex or a DMForest, not a DM of type %s", ((PetscObject)dm)->type_name);
  PetscCall(DMConvert(dm, DMPLEX, plex));
  PetscCall(DMGetVecType(dm, &vtype)); /* PETSc's forest gives its mesh the matrix type only */
  PetscCall(DMSetVecType(*plex, vtype));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Every cell of this rank must be a quadrilateral (2D) or hexahedron (3D) */
static PetscErrorCode CheckCells(DM dm, PetscInt *dim)
{
  MPI_Comm       comm = PetscObjectComm((PetscObject)dm);
  PetscBool      isplex;
  PetscInt       cStart, cEnd;
  DMPolytopeType want;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)dm, DMPLEX, &isplex));
  PetscCheck(isplex, comm, PETSC_ERR_ARG_WRONG, "Expected a DMPlex");
  PetscCall(DMGetDimension(dm, dim));
  PetscCheck(*dim == 2 || *dim == 3, comm, PETSC_ERR_ARG_WRONG, "DMPlex of dimension %" PetscInt_FMT " not supported: use 2 or 3", *dim);
  want = *dim == 2 ? DM_POLYTOPE_QUADRILATERAL : DM_POLYTOPE_HEXAHEDRON;
  PetscCall(DMPlexGetHeightStratum(dm, 0, &cStart, &cEnd));
  for (PetscInt c = cStart; c < cEnd; c++) {
    DMPolytopeType ct;

    PetscCall(DMPlexGetCellType(dm, c, &ct));
    if (ct == DM_POLYTOPE_FV_GHOST) continue;
    PetscCheck(ct == want, PETSC_COMM_SELF, PETSC_ERR_SUP, "Cell %" PetscInt_FMT " is a %s: the tensor-product operator needs %s cells (for simplex meshes use PCPATCHAMG on an assembled matrix)", c, DMPolytopeTypes[ct], DMPolytopeTypes[want]);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Mark the faces of the domain boundary: one cell on their side and not shared with another rank
   (on a distributed mesh a face on the partition boundary has one local cell too) */
static PetscErrorCode MarkBoundaryFaces(DM dm, DMLabel label)
{
  PetscSF            sf;
  PetscInt           fStart, fEnd, pStart, pEnd, nroots, nleaves;
  const PetscInt    *leaves;
  const PetscInt    *degree = NULL;
  PetscBool         *shared;

  PetscFunctionBegin;
  PetscCall(DMPlexGetHeightStratum(dm, 1, &fStart, &fEnd));
  PetscCall(DMPlexGetChart(dm, &pStart, &pEnd));
  PetscCall(PetscCalloc1(pEnd - pStart, &shared));
  PetscCall(DMGetPointSF(dm, &sf));
  PetscCall(PetscSFGetGraph(sf, &nroots, &nleaves, &leaves, NULL));
  if (nroots >= 0) {
    for (PetscInt i = 0; i < nleaves; i++) shared[(leaves ? leaves[i] : i) - pStart] = PETSC_TRUE;
    PetscCall(PetscSFComputeDegreeBegin(sf, &degree));
    PetscCall(PetscSFComputeDegreeEnd(sf, &degree));
    for (PetscInt p = 0; p < nroots && p < pEnd - pStart; p++)
      if (degree[p]) shared[p] = PETSC_TRUE;
  }
  for (PetscInt f = fStart; f < fEnd; f++) {
    PetscInt ns;

    PetscCall(DMPlexGetSupportSize(dm, f, &ns));
    if (ns == 1 && !shared[f - pStart]) PetscCall(DMLabelSetValue(label, f, 1));
  }
  PetscCall(PetscFree(shared));
  PetscCall(DMPlexLabelComplete(dm, label));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  PatchworkDMPlexSetQkField - Give a DMPlex of quadrilaterals or hexahedra the scalar Q_k Lagrange
  field on Gauss-Lobatto nodes that `MatCreatePatchworkTensor()` works on

  Collective

  Input Parameters:
+ dm        - the DMPlex (2D quadrilaterals or 3D hexahedra, straight or curved), or a DMForest
              (`DMP4EST`, `DMP8EST`: adaptively refined, with hanging nodes) set up
. degree    - the polynomial degree k (1..10 in 2D, 1..8 in 3D)
- dirichlet - `PETSC_TRUE`: homogeneous essential boundary conditions on the whole boundary (the
              boundary nodes are removed from global vectors, as PETSc's own FEM does)

  Notes:
  Sets field 0 to a `PetscFE` with a tensor polynomial space, a Lagrange dual space with
  Gauss-Lobatto-Legendre nodes (`PETSCDTNODES_GAUSSJACOBI` with end points) and k+1 Gauss points
  per direction, and creates the `PetscDS`. The same DM then serves PETSc's own FEM assembly.
  On a DMForest the field is the forest's; set it after the last adaptation (PETSc's forest transfers
  vectors between adapted forests, not the operator).

  Level: beginner

.seealso: `MatCreatePatchworkTensor()`
@*/
PetscErrorCode PatchworkDMPlexSetQkField(DM dm, PetscInt degree, PetscBool dirichlet)
{
  MPI_Comm        comm;
  PetscInt        dim;
  PetscSpace      P;
  PetscDualSpace  Q;
  PetscFE         fe;
  DM              K, plex;
  PetscQuadrature q, fq;

  PetscFunctionBegin;
  PatchworkAssertPointer(dm, 1);
  comm = PetscObjectComm((PetscObject)dm);
  PetscCall(PatchworkDMGetPlex(dm, &plex));
  PetscCall(CheckCells(plex, &dim));
  PetscCheck(degree >= 1 && degree <= (dim == 2 ? PW_MAX_DEGREE : 8), comm, PETSC_ERR_ARG_OUTOFRANGE, "Degree %" PetscInt_FMT " not supported in %" PetscInt_FMT "D (1..%d)", degree, dim, dim == 2 ? PW_MAX_DEGREE : 8);
  PetscCall(PetscSpaceCreate(comm, &P));
  PetscCall(PetscSpaceSetType(P, PETSCSPACEPOLYNOMIAL));
  PetscCall(PetscSpaceSetNumComponents(P, 1));
  PetscCall(PetscSpaceSetNumVariables(P, dim));
  PetscCall(PetscSpaceSetDegree(P, degree, PETSC_DETERMINE));
  PetscCall(PetscSpacePolynomialSetTensor(P, PETSC_TRUE));
  PetscCall(PetscSpaceSetUp(P));
  PetscCall(PetscDualSpaceCreate(comm, &Q));
  PetscCall(PetscDualSpaceSetType(Q, PETSCDUALSPACELAGRANGE));
  PetscCall(DMPlexCreateReferenceCell(PETSC_COMM_SELF, dim == 2 ? DM_POLYTOPE_QUADRILATERAL : DM_POLYTOPE_HEXAHEDRON, &K));
  PetscCall(PetscDualSpaceSetDM(Q, K));
  PetscCall(DMDestroy(&K));
  PetscCall(PetscDualSpaceSetNumComponents(Q, 1));
  PetscCall(PetscDualSpaceSetOrder(Q, degree));
  PetscCall(PetscDualSpaceLagrangeSetTensor(Q, PETSC_TRUE));
  PetscCall(PetscDualSpaceLagrangeSetNodeType(Q, PETSCDTNODES_GAUSSJACOBI, PETSC_TRUE, 0.0));
  PetscCall(PetscDualSpaceSetUp(Q));
  PetscCall(PetscFECreate(comm, &fe));
  PetscCall(PetscFESetType(fe, PETSCFEBASIC));
  PetscCall(PetscFESetBasisSpace(fe, P));
  PetscCall(PetscFESetDualSpace(fe, Q));
  PetscCall(PetscFESetNumComponents(fe, 1));
  PetscCall(PetscFESetUp(fe));
  PetscCall(PetscDTGaussTensorQuadrature(dim, 1, degree + 1, -1.0, 1.0, &q));
  PetscCall(PetscDTGaussTensorQuadrature(dim - 1, 1, degree + 1, -1.0, 1.0, &fq));
  PetscCall(PetscFESetQuadrature(fe, q));
  PetscCall(PetscFESetFaceQuadrature(fe, fq));
  PetscCall(PetscObjectSetName((PetscObject)fe, "u"));
  PetscCall(DMSetField(dm, 0, NULL, (PetscObject)fe));
  PetscCall(DMCreateDS(dm));
  if (dirichlet) {
    const char name[] = "patchwork_boundary";
    DMLabel    label;
    PetscBool  has;
    PetscInt   one = 1;

    PetscCall(DMHasLabel(dm, name, &has));
    if (!has) {
      PetscCall(DMCreateLabel(dm, name));
      PetscCall(DMGetLabel(dm, name, &label));
      PetscCall(MarkBoundaryFaces(plex, label)); /* a forest's points are its mesh's */
    }
    PetscCall(DMGetLabel(dm, name, &label));
    PetscCall(DMAddBoundary(dm, DM_BC_ESSENTIAL, "wall", label, 1, &one, 0, 0, NULL, (void (*)(void))Zero, NULL, NULL, NULL));
  }
  PetscCall(DMDestroy(&plex));
  PetscCall(PetscQuadratureDestroy(&q));
  PetscCall(PetscQuadratureDestroy(&fq));
  PetscCall(PetscSpaceDestroy(&P));
  PetscCall(PetscDualSpaceDestroy(&Q));
  PetscCall(PetscFEDestroy(&fe));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Field 0 must be a scalar, continuous, tensor Q_k Lagrange PetscFE whose nodes are the Gauss-Lobatto points */
static PetscErrorCode CheckField(DM dm, PetscInt dim, PetscInt degree)
{
  MPI_Comm       comm = PetscObjectComm((PetscObject)dm);
  PetscInt       nf, nc, deg, sdim, ndual, n = degree + 1, nodes = 1;
  PetscObject    obj;
  PetscClassId   id;
  PetscSpace     P;
  PetscDualSpace Q;
  PetscBool      lagrange, continuous;
  double         gll[PW_MAX_N], w[PW_MAX_N];
  const char    *hint = "use PatchworkDMPlexSetQkField(), or a continuous scalar Lagrange PetscFE on Gauss-Lobatto nodes (PETSc's default node type, or -petscdualspace_lagrange_node_type gaussjacobi -petscdualspace_lagrange_node_endpoints)";

  PetscFunctionBegin;
  for (PetscInt d = 0; d < dim; d++) nodes *= n;
  PetscCall(DMGetNumFields(dm, &nf));
  PetscCheck(nf >= 1, comm, PETSC_ERR_ARG_WRONG, "The DMPlex has no field: %s", hint);
  PetscCheck(nf == 1, comm, PETSC_ERR_SUP, "The DMPlex has %" PetscInt_FMT " fields; the tensor-product operator acts on one scalar field", nf);
  PetscCall(DMGetField(dm, 0, NULL, &obj));
  PetscCall(PetscObjectGetClassId(obj, &id));
  PetscCheck(id == PETSCFE_CLASSID, comm, PETSC_ERR_ARG_WRONG, "Field 0 of the DMPlex is not a PetscFE: %s", hint);
  PetscCall(PetscFEGetNumComponents((PetscFE)obj, &nc));
  PetscCheck(nc == 1, comm, PETSC_ERR_SUP, "Field 0 has %" PetscInt_FMT " components; the operator is scalar", nc);
  PetscCall(PetscFEGetBasisSpace((PetscFE)obj, &P));
  PetscCall(PetscSpaceGetDegree(P, &deg, NULL));
  PetscCall(PetscSpaceGetDimension(P, &sdim));
  PetscCheck(deg == degree, comm, PETSC_ERR_ARG_INCOMP, "Field 0 has degree %" PetscInt_FMT ", the operator was asked for degree %" PetscInt_FMT, deg, degree);
  PetscCheck(sdim == nodes, comm, PETSC_ERR_ARG_WRONG, "Field 0 has %" PetscInt_FMT " basis functions per cell, not the %" PetscInt_FMT " of the tensor space Q%" PetscInt_FMT ": %s", sdim, nodes, degree, hint);
  PetscCall(PetscFEGetDualSpace((PetscFE)obj, &Q));
  PetscCall(PetscObjectTypeCompare((PetscObject)Q, PETSCDUALSPACELAGRANGE, &lagrange));
  PetscCheck(lagrange, comm, PETSC_ERR_ARG_WRONG, "Field 0 is not a Lagrange (nodal) element: %s", hint);
  PetscCall(PetscDualSpaceLagrangeGetContinuity(Q, &continuous));
  PetscCheck(continuous, comm, PETSC_ERR_ARG_WRONG, "Field 0 is discontinuous; the operator needs continuous Q%" PetscInt_FMT, degree);
  PetscCall(PetscDualSpaceGetDimension(Q, &ndual));
  PetscCheck(ndual == nodes, comm, PETSC_ERR_ARG_WRONG, "Field 0 has %" PetscInt_FMT " nodes per cell, expected %" PetscInt_FMT, ndual, nodes);
  PetscCheck(!PatchworkGaussLobatto((int)n, gll, w), PETSC_COMM_SELF, PETSC_ERR_LIB, "Gauss-Lobatto points of degree %" PetscInt_FMT " failed", degree);
  for (PetscInt i = 0; i < ndual; i++) {
    PetscQuadrature  f;
    PetscInt         np;
    const PetscReal *pts;

    PetscCall(PetscDualSpaceGetFunctional(Q, i, &f));
    PetscCall(PetscQuadratureGetData(f, NULL, NULL, &np, &pts, NULL));
    PetscCheck(np == 1, comm, PETSC_ERR_ARG_WRONG, "Node %" PetscInt_FMT " of field 0 is not a point evaluation: %s", i, hint);
    for (PetscInt d = 0; d < dim; d++) {
      PetscReal best = PETSC_MAX_REAL;

      for (PetscInt j = 0; j < n; j++) best = PetscMin(best, PetscAbsReal(pts[d] - (2 * (PetscReal)gll[j] - 1)));
      PetscCheck(best < 1e-10, comm, PETSC_ERR_ARG_WRONG, "The nodes of field 0 are not the Gauss-Lobatto points (node %" PetscInt_FMT " has reference coordinate %g): %s", i, (double)pts[d], hint);
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Node coordinates through the field's own nodes (exact for any coordinate space) */
static PetscErrorCode NodeCoordinates(DM dm, PatchworkPlexData *px, PetscInt dim)
{
  Vec xl;

  PetscFunctionBegin;
  PetscCall(DMGetLocalVector(dm, &xl));
  for (PetscInt d = 0; d < dim; d++) {
    PetscErrorCode (*funcs[1])(PetscInt, PetscReal, const PetscReal[], PetscInt, PetscScalar *, void *) = {Coordinate};
    void              *ctxs[1] = {&d};
    const PetscScalar *a;

    PetscCall(DMProjectFunctionLocal(dm, 0.0, funcs, ctxs, INSERT_ALL_VALUES, xl));
    PetscCall(VecGetArrayRead(xl, &a));
    for (PetscInt c = 0; c < px->ncells; c++)
      for (PetscInt i = 0; i < px->nodes; i++) px->coords[(c * dim + d) * px->nodes + i] = PetscRealPart(a[px->elem_local[c * px->nodes + i]]);
    PetscCall(VecRestoreArrayRead(xl, &a));
  }
  PetscCall(DMRestoreLocalVector(dm, &xl));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Node coordinates through the coordinate field's own basis: tabulated once at the lexicographic
   Gauss-Lobatto points of the reference cell and contracted with each cell's coordinate closure (what
   DMPlexReferenceToCoordinates() does per cell, tabulating each time). *done stays false when the
   coordinates are not one PetscFE field of the DM's dimension (vertex coordinates without a field,
   localized coordinates): the caller then projects. */
static PetscErrorCode NodeCoordinatesTabulated(DM dm, PatchworkPlexData *px, PetscInt dim, PetscInt degree, PetscBool *done)
{
  DM              cdm;
  Vec             X;
  PetscObject     obj;
  PetscClassId    id;
  PetscBool       localized;
  PetscInt        nf, Nb, Nc, cdim, n = degree + 1, cStart, cEnd, e = 0;
  PetscReal      *ref;
  PetscTabulation T;
  double          gll[PW_MAX_N], w[PW_MAX_N];

  PetscFunctionBegin;
  *done = PETSC_FALSE;
  PetscCall(DMGetCoordinatesLocalized(dm, &localized));
  PetscCall(DMGetCoordinateDim(dm, &cdim));
  PetscCall(DMGetCoordinateDM(dm, &cdm));
  PetscCall(DMGetNumFields(cdm, &nf));
  PetscCall(DMGetCoordinatesLocal(dm, &X));
  if (localized || cdim != dim || nf != 1 || !X) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DMGetField(cdm, 0, NULL, &obj));
  PetscCall(PetscObjectGetClassId(obj, &id));
  if (id != PETSCFE_CLASSID) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscFEGetNumComponents((PetscFE)obj, &Nc));
  PetscCall(PetscFEGetDimension((PetscFE)obj, &Nb));
  if (Nc != cdim) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(!PatchworkGaussLobatto((int)n, gll, w), PETSC_COMM_SELF, PETSC_ERR_LIB, "Gauss-Lobatto points of degree %" PetscInt_FMT " failed", degree);
  PetscCall(PetscMalloc1(px->nodes * dim, &ref));
  for (PetscInt i = 0; i < px->nodes; i++) /* node i = a + n (b + n c): reference coordinates on [-1,1] */
    for (PetscInt d = 0, r = i; d < dim; d++, r /= n) ref[i * dim + d] = 2 * (PetscReal)gll[r % n] - 1;
  PetscCall(PetscFECreateTabulation((PetscFE)obj, 1, px->nodes, ref, 0, &T));
  PetscCall(PetscFree(ref));
  PetscCall(DMPlexGetHeightStratum(dm, 0, &cStart, &cEnd));
  for (PetscInt c = cStart; c < cEnd; c++) {
    DMPolytopeType ct;
    PetscScalar   *cx = NULL;
    PetscInt       csize;

    PetscCall(DMPlexGetCellType(dm, c, &ct));
    if (ct == DM_POLYTOPE_FV_GHOST) continue;
    PetscCall(DMPlexVecGetClosure(cdm, NULL, X, c, &csize, &cx));
    PetscCheck(csize == Nb, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cell %" PetscInt_FMT " has %" PetscInt_FMT " coordinate values, its field %" PetscInt_FMT " basis functions", c, csize, Nb);
    for (PetscInt i = 0; i < px->nodes; i++)
      for (PetscInt d = 0; d < dim; d++) {
        PetscReal x = 0;

        for (PetscInt b = 0; b < Nb; b++) x += T->T[0][(i * Nb + b) * Nc + d] * PetscRealPart(cx[b]);
        px->coords[(e * dim + d) * px->nodes + i] = x;
      }
    PetscCall(DMPlexVecRestoreClosure(cdm, NULL, X, c, &csize, &cx));
    e++;
  }
  PetscCall(PetscTabulationDestroy(&T));
  *done = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The global index of every entry of dm's local vector, -1 for constrained ones: the global indices
   themselves, scattered to the local vector. Host arrays whatever the DM's vector type. */
PetscErrorCode PatchworkPlexLocalGlobalIndices(DM dm, PetscInt *nloc, PetscInt **gl)
{
  PetscInt           lo, hi;
  Vec                g, l;
  PetscScalar       *ga;
  const PetscScalar *la;

  PetscFunctionBegin;
  PetscCall(DMCreateGlobalVector(dm, &g));
  PetscCall(DMCreateLocalVector(dm, &l));
  PetscCall(VecSetType(g, VECSTANDARD));
  PetscCall(VecSetType(l, VECSTANDARD));
  PetscCall(VecGetOwnershipRange(g, &lo, &hi));
  PetscCheck(hi <= PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_SUP, "More than 2^31 indices");
  PetscCall(VecGetArray(g, &ga));
  for (PetscInt i = lo; i < hi; i++) ga[i - lo] = (PetscScalar)i;
  PetscCall(VecRestoreArray(g, &ga));
  PetscCall(VecSet(l, -1.0));
  PetscCall(DMGlobalToLocalBegin(dm, g, INSERT_VALUES, l));
  PetscCall(DMGlobalToLocalEnd(dm, g, INSERT_VALUES, l));
  PetscCall(VecGetLocalSize(l, nloc));
  PetscCall(PetscMalloc1(*nloc, gl));
  PetscCall(VecGetArrayRead(l, &la));
  for (PetscInt i = 0; i < *nloc; i++) (*gl)[i] = (PetscInt)PetscRealPart(la[i]);
  PetscCall(VecRestoreArrayRead(l, &la));
  PetscCall(VecDestroy(&g));
  PetscCall(VecDestroy(&l));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The element restriction in tensor (lexicographic) order, from a copy of the local section with the
   tensor closure permutation, so that the user's DM keeps its own closure order */
static PetscErrorCode ElementMap(DM dm, PatchworkPlexData *px)
{
  PetscSection s, sc;
  PetscInt     cStart, cEnd, nloc;
  Vec          iv;
  PetscScalar *ia;

  PetscFunctionBegin;
  PetscCall(DMGetLocalSection(dm, &s));
  PetscCall(PetscSectionClone(s, &sc));
  PetscCall(DMPlexSetClosurePermutationTensor(dm, PETSC_DETERMINE, sc));
  PetscCall(DMPlexGetHeightStratum(dm, 0, &cStart, &cEnd));
  px->ncells = 0;
  for (PetscInt c = cStart; c < cEnd; c++) {
    DMPolytopeType ct;

    PetscCall(DMPlexGetCellType(dm, c, &ct));
    if (ct != DM_POLYTOPE_FV_GHOST) px->ncells++;
  }
  PetscCall(PetscMalloc2(px->ncells * px->nodes, &px->elem_local, px->ncells * px->nodes, &px->elem));
  /* the closure of a vector holding its own indices: DMPlexGetClosureIndices() would replace the nodes
     of hanging faces by their anchors, the closure of values keeps them (plex_hanging.c reads them) */
  PetscCall(PetscSectionGetStorageSize(sc, &nloc));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, nloc, &iv));
  PetscCall(VecGetArray(iv, &ia));
  for (PetscInt i = 0; i < nloc; i++) ia[i] = (PetscScalar)i;
  PetscCall(VecRestoreArray(iv, &ia));
  for (PetscInt c = cStart, e = 0; c < cEnd; c++) {
    DMPolytopeType ct;
    PetscInt       nidx;
    PetscScalar   *idx = NULL;

    PetscCall(DMPlexGetCellType(dm, c, &ct));
    if (ct == DM_POLYTOPE_FV_GHOST) continue;
    PetscCall(DMPlexVecGetClosure(dm, sc, iv, c, &nidx, &idx));
    PetscCheck(nidx == px->nodes, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cell %" PetscInt_FMT " has %" PetscInt_FMT " closure values, expected %" PetscInt_FMT, c, nidx, px->nodes);
    for (PetscInt i = 0; i < nidx; i++) px->elem_local[e * px->nodes + i] = (PetscInt)PetscRealPart(idx[i]);
    PetscCall(DMPlexVecRestoreClosure(dm, sc, iv, c, &nidx, &idx));
    e++;
  }
  PetscCall(VecDestroy(&iv));
  PetscCall(PetscSectionDestroy(&sc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The kernels' map from the element restriction with the coarse nodes on hanging faces: on one rank
   the kernels index the global vector directly (constrained entries are -1) */
static PetscErrorCode KernelMap(DM dm, PatchworkPlexData *px, PetscInt degree, PetscBool serial)
{
  PetscInt nloc, ncon = 0, *gl, *kl;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(px->ncells * px->nodes, &kl));
  PetscCall(PetscArraycpy(kl, px->elem_local, px->ncells * px->nodes));
  PetscCall(PatchworkPlexSetUpHanging(dm, degree, px, kl));
  PetscCall(PatchworkPlexLocalGlobalIndices(dm, &nloc, &gl));
  PetscCheck(px->ncells * px->nodes <= PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_SUP, "More than 2^31 indices on one rank");
  for (PetscInt i = 0; i < px->ncells * px->nodes; i++) {
    const PetscInt li = kl[i];
    PetscInt       gi;

    PetscCheck(li >= 0 && li < nloc, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Closure index %" PetscInt_FMT " outside the local vector (size %" PetscInt_FMT ")", li, nloc);
    gi = gl[li];
    if (gi < 0) ncon++;
    px->elem[i] = gi < 0 ? -1 : (int)(serial ? gi : li);
  }
  PetscCall(PetscFree(gl));
  PetscCall(PetscFree(kl));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &ncon, 1, MPIU_INT, MPI_SUM, PetscObjectComm((PetscObject)dm)));
  px->constrained = ncon > 0 ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Degree of the coordinate field (1 when the DM has only vertex coordinates) */
static PetscErrorCode CoordinateDegree(DM dm, PetscInt *degree)
{
  DM       cdm;
  PetscInt nf;

  PetscFunctionBegin;
  *degree = 1;
  PetscCall(DMGetCoordinateDM(dm, &cdm));
  PetscCall(DMGetNumFields(cdm, &nf));
  if (nf > 0) {
    PetscObject  obj;
    PetscClassId id;

    PetscCall(DMGetField(cdm, 0, NULL, &obj));
    PetscCall(PetscObjectGetClassId(obj, &id));
    if (id == PETSCFE_CLASSID) {
      PetscSpace P;

      PetscCall(PetscFEGetBasisSpace((PetscFE)obj, &P));
      PetscCall(PetscSpaceGetDegree(P, degree, NULL));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Validate dm and build the general-mesh part of the operator; fills the mesh fields of info */
PetscErrorCode PatchworkPlexCreate(DM dm, PetscInt degree, PatchworkTensorInfo *info, PatchworkPlexData **plex)
{
  PatchworkPlexData *px;
  PetscInt           dim;
  PetscMPIInt        size;
  PetscBool          tabulated;

  PetscFunctionBegin;
  PetscCall(CheckCells(dm, &dim));
  PetscCheck(degree >= 1 && degree <= (dim == 2 ? PW_MAX_DEGREE : 8), PetscObjectComm((PetscObject)dm), PETSC_ERR_ARG_OUTOFRANGE, "Degree %" PetscInt_FMT " not supported in %" PetscInt_FMT "D (1..%d)", degree, dim, dim == 2 ? PW_MAX_DEGREE : 8);
  PetscCall(CheckField(dm, dim, degree));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)dm), &size));
  PetscCall(PetscLogEventBegin(PATCHWORK_PlexElements, dm, 0, 0, 0));
  PetscCall(PetscNew(&px));
  px->fly_allowed = PETSC_TRUE; /* the geometry on the fly where the cells allow it */
  px->nodes = 1;
  for (PetscInt d = 0; d < dim; d++) px->nodes *= degree + 1;
  PetscCall(ElementMap(dm, px));
  PetscCall(KernelMap(dm, px, degree, size == 1 ? PETSC_TRUE : PETSC_FALSE));
  PetscCall(PetscMalloc1(px->ncells * dim * px->nodes, &px->coords));
  PetscCall(NodeCoordinatesTabulated(dm, px, dim, degree, &tabulated));
  if (!tabulated) PetscCall(NodeCoordinates(dm, px, dim));
  PetscCall(PetscLogEventEnd(PATCHWORK_PlexElements, dm, 0, 0, 0));
  PetscCall(CoordinateDegree(dm, &px->coord_degree));
  if (px->coord_degree > degree) PetscCall(PetscInfo(dm, "The coordinate field has degree %" PetscInt_FMT " > %" PetscInt_FMT ": the operator's geometry is its Q%" PetscInt_FMT " interpolation at the nodes\n", px->coord_degree, degree, degree));
  info->dim      = dim;
  info->mesh     = PATCHWORK_MESH_GENERAL;
  info->bc       = px->constrained ? PATCHWORK_BC_DIRICHLET : PATCHWORK_BC_NATURAL;
  info->cells[0] = px->ncells;
  info->cells[1] = info->cells[2] = 1;
  *plex          = px;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PatchworkPlexDestroy(PatchworkPlexData **plex)
{
  PatchworkPlexData *px = *plex;

  PetscFunctionBegin;
  if (!px) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscFree2(px->elem_local, px->elem));
  PetscCall(PetscFree(px->coords));
  PetscCall(PetscFree(px->geom));
  PetscCall(PetscFree(px->hang));
  PetscCall(PetscFree(px->order));
  PetscCall(PatchworkPlexFreeGeometryDevice(px));
#if defined(PATCHWORK_HAVE_CUDA)
  if (px->elem_dev) PatchworkCallKernel(PatchworkDeviceFree(px->elem_dev));
  PatchworkCallKernel(PatchworkDeviceFree(px->hang_dev));
  PatchworkCallKernel(PatchworkDeviceFree(px->hangP_dev));
  PatchworkCallKernel(PatchworkDeviceFree(px->hang_cells_dev));
  PatchworkCallKernel(PatchworkDeviceFree(px->hang_diag_dev));
#endif
  PetscCall(VecDestroy(&px->diffusion));
  PetscCall(VecDestroy(&px->reaction));
  PetscCall(PetscFree(*plex));
  PetscFunctionReturn(PETSC_SUCCESS);
}
