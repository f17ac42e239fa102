/* DMDA node grids of Q_k elements on axis-aligned boxes: creation, coordinates, validation. */
#include "tensorimpl.h"

static PetscInt MaxDegree(PetscInt dim) { return dim == 2 ? PW_MAX_DEGREE : 8; }

/* Position of global node g along one direction: node i of cell e sits at the i-th Gauss-Lobatto point */
static PetscReal NodeCoordinate(PetscInt g, PetscInt degree, PetscInt cells, PetscReal lo, PetscReal hi, const double gll[])
{
  PetscInt e = PetscMin(g / degree, cells - 1);

  return lo + (hi - lo) * ((PetscReal)e + (PetscReal)gll[g - degree * e]) / (PetscReal)cells;
}

/* What PatchworkDMDACreateQk() and PatchworkDMDASetCoordinatesQk() know about a DM, composed on it:
   it is the Q_k node grid of this axis-aligned box, and the coordinate Vec they set, if any, holds
   its Gauss-Lobatto nodes for as long as that Vec is unchanged (same id, same state). The operator
   then takes the box from here instead of reading and checking every coordinate on the host. */
typedef struct {
  PetscInt         degree;
  PetscReal        lower[3], upper[3];
  PetscObjectId    coord_id; /* 0: marked without coordinates */
  PetscObjectState coord_state;
} QkBox;

static const char QkBoxName[] = "Patchwork_QkBox";

/* The container's destroy callback (its argument: src/sys/compat.h) */
static PetscErrorCode QkBoxDestroy(void *arg)
{
  void *box = PatchworkContainerCtx(arg);

  PetscFunctionBegin;
  PetscCall(PetscFree(box));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode QkBoxGet(DM dm, QkBox **box)
{
  PetscContainer c = NULL;

  PetscFunctionBegin;
  *box = NULL;
  PetscCall(PetscObjectQuery((PetscObject)dm, QkBoxName, (PetscObject *)&c));
  if (c) PetscCall(PetscContainerGetPointer(c, (void **)box));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Mark dm as the Q_k node grid of [lo, hi] whose coordinates are coords (NULL: none). The box noted
   is the extent of the nodes as NodeCoordinate() places them (the last node may differ from hi in the
   last bit), which is what reading the coordinates would give */
static PetscErrorCode QkBoxSet(DM dm, PetscInt degree, const PetscInt cells[3], const PetscReal lo[3], const PetscReal hi[3], Vec coords)
{
  QkBox   *box;
  double   gll[PW_MAX_N], w[PW_MAX_N];
  PetscInt dim;

  PetscFunctionBegin;
  PetscCall(DMGetDimension(dm, &dim));
  PetscCheck(!PatchworkGaussLobatto((int)degree + 1, gll, w), PETSC_COMM_SELF, PETSC_ERR_LIB, "Gauss-Lobatto points of degree %" PetscInt_FMT " failed", degree);
  PetscCall(QkBoxGet(dm, &box));
  if (!box) {
    PetscContainer c;

    PetscCall(PetscNew(&box));
    PetscCall(PetscContainerCreate(PetscObjectComm((PetscObject)dm), &c));
    PetscCall(PetscContainerSetPointer(c, box));
    PetscCall(PatchworkContainerSetDestroy(c, QkBoxDestroy));
    PetscCall(PetscObjectCompose((PetscObject)dm, QkBoxName, (PetscObject)c));
    PetscCall(PetscContainerDestroy(&c));
  }
  box->degree = degree;
  for (PetscInt d = 0; d < 3; d++) {
    box->lower[d] = d < dim ? NodeCoordinate(0, degree, cells[d], lo[d], hi[d], gll) : lo[d];
    box->upper[d] = d < dim ? NodeCoordinate(degree * cells[d], degree, cells[d], lo[d], hi[d], gll) : hi[d];
  }
  box->coord_id    = 0;
  box->coord_state = 0;
  if (coords) {
    PetscCall(PetscObjectGetId((PetscObject)coords, &box->coord_id));
    PetscCall(PetscObjectStateGet((PetscObject)coords, &box->coord_state));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The arguments of PatchworkDMDASetCoordinatesQk(): cells per direction and the box (NULL corners: the unit box) */
static PetscErrorCode CheckQkBox(DM dm, PetscInt degree, const PetscReal lower[], const PetscReal upper[], PetscInt *dim, PetscInt cells[3], PetscReal lo[3], PetscReal hi[3])
{
  PetscInt M[3];

  PetscFunctionBegin;
  PetscCall(DMDAGetInfo(dm, dim, &M[0], &M[1], &M[2], NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCheck(degree >= 1 && degree <= MaxDegree(*dim), PetscObjectComm((PetscObject)dm), PETSC_ERR_ARG_OUTOFRANGE, "Degree %" PetscInt_FMT " not supported in %" PetscInt_FMT "D (1..%" PetscInt_FMT ")", degree, *dim, MaxDegree(*dim));
  for (PetscInt d = 0; d < 3; d++) {
    cells[d] = 1;
    lo[d]    = 0;
    hi[d]    = d < *dim ? 1 : 0;
    if (d >= *dim) continue;
    PetscCheck((M[d] - 1) % degree == 0 && M[d] > degree, PetscObjectComm((PetscObject)dm), PETSC_ERR_ARG_INCOMP, "DMDA has %" PetscInt_FMT " nodes in direction %" PetscInt_FMT ": not degree*cells+1 for degree %" PetscInt_FMT, M[d], d, degree);
    cells[d] = (M[d] - 1) / degree;
    if (lower) lo[d] = lower[d];
    if (upper) hi[d] = upper[d];
    PetscCheck(hi[d] > lo[d], PetscObjectComm((PetscObject)dm), PETSC_ERR_ARG_WRONG, "Box upper corner %g must exceed lower corner %g in direction %" PetscInt_FMT, (double)hi[d], (double)lo[d], d);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The node positions of this rank's owned range [xs, xs + xm) per direction (x[d] has xm[d] entries;
   1 in unused directions); free with PetscFree3(x[0], x[1], x[2]) */
static PetscErrorCode OwnedNodePositions(PetscInt dim, PetscInt degree, const PetscInt cells[3], const PetscReal lo[3], const PetscReal hi[3], const PetscInt xs[3], const PetscInt xm[3], PetscReal *x[3])
{
  double gll[PW_MAX_N], w[PW_MAX_N];

  PetscFunctionBegin;
  PetscCheck(!PatchworkGaussLobatto((int)degree + 1, gll, w), PETSC_COMM_SELF, PETSC_ERR_LIB, "Gauss-Lobatto points of degree %" PetscInt_FMT " failed", degree);
  PetscCall(PetscMalloc3(xm[0], &x[0], xm[1], &x[1], xm[2], &x[2]));
  for (PetscInt d = 0; d < 3; d++)
    for (PetscInt i = 0; i < xm[d]; i++) x[d][i] = d < dim ? NodeCoordinate(xs[d] + i, degree, cells[d], lo[d], hi[d], gll) : 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  PatchworkDMDASetCoordinatesQk - Set the coordinates of a Q_k node-grid DMDA to the Gauss-Lobatto
  nodes of a uniform axis-aligned box mesh

  Collective

  Input Parameters:
+ dm     - the DMDA, (degree*N_d+1) nodes in direction d
. degree - the polynomial degree k
. lower  - lower corner of the box (NULL: the origin)
- upper  - upper corner of the box (NULL: all ones)

  Note:
  The DM remembers the box, so that `MatCreatePatchworkTensor()` takes it from there without reading
  the coordinates, for as long as the coordinate vector is not changed or replaced; coordinates
  changed since are read and checked.

  Level: intermediate

.seealso: `PatchworkDMDACreateQk()`, `MatCreatePatchworkTensor()`
@*/
PetscErrorCode PatchworkDMDASetCoordinatesQk(DM dm, PetscInt degree, const PetscReal lower[], const PetscReal upper[])
{
  PetscInt     dim, xs[3], xm[3], cells[3], n = 0;
  PetscReal    lo[3], hi[3], *x[3];
  DM           cdm;
  Vec          c;
  PetscScalar *a;

  PetscFunctionBegin;
  PetscCall(CheckQkBox(dm, degree, lower, upper, &dim, cells, lo, hi));
  PetscCall(DMDAGetCorners(dm, &xs[0], &xs[1], &xs[2], &xm[0], &xm[1], &xm[2]));
  PetscCall(OwnedNodePositions(dim, degree, cells, lo, hi, xs, xm, x));
  PetscCall(DMGetCoordinateDM(dm, &cdm));
  PetscCall(DMCreateGlobalVector(cdm, &c));
  /* the coordinate vector is interlaced, x fastest: the order of this loop */
  PetscCall(VecGetArrayWrite(c, &a));
  for (PetscInt k = 0; k < xm[2]; k++)
    for (PetscInt j = 0; j < xm[1]; j++)
      for (PetscInt i = 0; i < xm[0]; i++) {
        const PetscReal p[3] = {x[0][i], x[1][j], x[2][k]};

        for (PetscInt d = 0; d < dim; d++) a[n++] = p[d];
      }
  PetscCall(VecRestoreArrayWrite(c, &a));
  PetscCall(PetscFree3(x[0], x[1], x[2]));
  PetscCall(DMSetCoordinates(dm, c)); /* drops the cached local coordinates */
  PetscCall(QkBoxSet(dm, degree, cells, lo, hi, c));
  PetscCall(VecDestroy(&c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Internal (src/mat/tensor/cartesian.h): mark dm as the Q_k node grid of the box without setting
   coordinates, for grids only Patchwork sees (the coarse levels of a hierarchy) */
PetscErrorCode PatchworkDMDASetQkBox(DM dm, PetscInt degree, const PetscReal lower[], const PetscReal upper[])
{
  PetscInt  dim, cells[3];
  PetscReal lo[3], hi[3];

  PetscFunctionBegin;
  PetscCall(CheckQkBox(dm, degree, lower, upper, &dim, cells, lo, hi));
  PetscCall(QkBoxSet(dm, degree, cells, lo, hi, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  PatchworkDMDACreateQk - Create a DMDA whose nodes are the Q_k node grid of a uniform box mesh

  Collective

  Input Parameters:
+ comm   - MPI communicator
. dim    - 2 or 3
. degree - polynomial degree k (1..10 in 2D, 1..8 in 3D)
. cells  - number of cells per direction
. lower  - lower corner of the box (NULL: the origin)
- upper  - upper corner of the box (NULL: all ones)

  Output Parameter:
. dm - the DMDA: k*cells[d]+1 nodes per direction, one dof, box stencil of width k, Gauss-Lobatto
       coordinates. `DMSetFromOptions()` has been called (`-dm_vec_type cuda`, `-da_processors_x`).

  Options Database Key:
. -dm_patchwork_coordinates <true> - give the DM its node coordinates; false: the DM knows only its box,
                                     which is all that `MatCreatePatchworkTensor()` and the
                                     preconditioners need (`DMGetCoordinates()` then gives NULL until
                                     `PatchworkDMDASetCoordinatesQk()` sets them)

  Notes:
  The coordinates are a second DMDA (dim dof per node, the same stencil) and a vector of dim values
  per node, made and filled on the host: on large grids they take about as long as the DMDA itself.
  A program that computes node positions from the box itself can do without them.

  Level: beginner

.seealso: `MatCreatePatchworkTensor()`, `PatchworkDMDASetCoordinatesQk()`
@*/
PetscErrorCode PatchworkDMDACreateQk(MPI_Comm comm, PetscInt dim, PetscInt degree, const PetscInt cells[], const PetscReal lower[], const PetscReal upper[], DM *dm)
{
  PetscInt  M[3] = {1, 1, 1};
  PetscBool coordinates = PETSC_TRUE;

  PetscFunctionBegin;
  PatchworkAssertPointer(cells, 4);
  PatchworkAssertPointer(dm, 7);
  PetscCheck(dim == 2 || dim == 3, comm, PETSC_ERR_ARG_OUTOFRANGE, "Dimension %" PetscInt_FMT " not supported: use 2 or 3", dim);
  PetscCheck(degree >= 1 && degree <= MaxDegree(dim), comm, PETSC_ERR_ARG_OUTOFRANGE, "Degree %" PetscInt_FMT " not supported in %" PetscInt_FMT "D (1..%" PetscInt_FMT ")", degree, dim, MaxDegree(dim));
  for (PetscInt d = 0; d < dim; d++) {
    PetscCheck(cells[d] >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "Need at least one cell per direction, got %" PetscInt_FMT " in direction %" PetscInt_FMT, cells[d], d);
    M[d] = degree * cells[d] + 1;
  }
  if (dim == 2) PetscCall(DMDACreate2d(comm, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, M[0], M[1], PETSC_DECIDE, PETSC_DECIDE, 1, degree, NULL, NULL, dm));
  else PetscCall(DMDACreate3d(comm, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, M[0], M[1], M[2], PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, 1, degree, NULL, NULL, NULL, dm));
  PetscCall(DMSetFromOptions(*dm));
  PetscObjectOptionsBegin((PetscObject)*dm);
  PetscCall(PetscOptionsBool("-dm_patchwork_coordinates", "Give the Q_k node grid its Gauss-Lobatto node coordinates (false: only its box, all the operator needs)", "PatchworkDMDACreateQk", coordinates, &coordinates, NULL));
  PetscOptionsEnd();
  PetscCall(DMSetUp(*dm));
  if (coordinates) PetscCall(PatchworkDMDASetCoordinatesQk(*dm, degree, lower, upper));
  else PetscCall(PatchworkDMDASetQkBox(*dm, degree, lower, upper));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the coordinates c (NULL: none) are those the box mark says, on every rank (collective, so
   that all ranks take the same route) */
static PetscErrorCode QkBoxKnows(DM dm, PetscInt degree, Vec c, QkBox **box, PetscBool *known)
{
  PetscMPIInt k = 0;

  PetscFunctionBegin;
  PetscCall(QkBoxGet(dm, box));
  if (*box && (*box)->degree == degree) {
    if (!c) k = (*box)->coord_id == 0;
    else {
      PetscObjectId    id;
      PetscObjectState state;

      PetscCall(PetscObjectGetId((PetscObject)c, &id));
      PetscCall(PetscObjectStateGet((PetscObject)c, &state));
      k = id == (*box)->coord_id && state == (*box)->coord_state;
    }
  }
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &k, 1, MPI_INT, MPI_MIN, PetscObjectComm((PetscObject)dm)));
  *known = k ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Coordinates nobody vouched for: the box is their extent, and every owned node must sit at its
   Gauss-Lobatto position in that box (a host pass over the coordinates, taken only for coordinates
   set or changed by the caller) */
static PetscErrorCode CheckCoordinates(DM dm, PetscInt degree, const PetscInt cells[3], Vec c, PetscReal lower[3], PetscReal upper[3])
{
  MPI_Comm           comm = PetscObjectComm((PetscObject)dm);
  const PetscScalar *a;
  PetscReal          maxerr = 0, extent = 0, *x[3];
  PetscInt           dim, n = 0, xs[3], xm[3];

  PetscFunctionBegin;
  PetscCall(DMGetDimension(dm, &dim));
  for (PetscInt d = 0; d < dim; d++) {
    PetscCall(VecStrideMin(c, d, NULL, &lower[d]));
    PetscCall(VecStrideMax(c, d, NULL, &upper[d]));
    PetscCheck(upper[d] > lower[d], comm, PETSC_ERR_ARG_WRONG, "DMDA coordinates are degenerate in direction %" PetscInt_FMT, d);
    extent = PetscMax(extent, upper[d] - lower[d]);
  }
  PetscCall(DMDAGetCorners(dm, &xs[0], &xs[1], &xs[2], &xm[0], &xm[1], &xm[2]));
  PetscCall(OwnedNodePositions(dim, degree, cells, lower, upper, xs, xm, x));
  PetscCall(VecGetArrayRead(c, &a));
  for (PetscInt k = 0; k < xm[2]; k++)
    for (PetscInt j = 0; j < xm[1]; j++)
      for (PetscInt i = 0; i < xm[0]; i++) {
        const PetscReal p[3] = {x[0][i], x[1][j], x[2][k]};

        for (PetscInt d = 0; d < dim; d++, n++) maxerr = PetscMax(maxerr, PetscAbsReal(PetscRealPart(a[n]) - p[d]));
      }
  PetscCall(VecRestoreArrayRead(c, &a));
  PetscCall(PetscFree3(x[0], x[1], x[2]));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &maxerr, 1, MPIU_REAL, MPIU_MAX, comm));
  PetscCheck(maxerr <= 1e-10 * extent, comm, PETSC_ERR_ARG_WRONG, "DMDA coordinates are not the Gauss-Lobatto nodes of a uniform Cartesian Q%" PetscInt_FMT " mesh (max deviation %g): set them with PatchworkDMDASetCoordinatesQk() or use PatchworkDMDACreateQk()", degree, (double)maxerr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Check that dm is the Q_k node grid of an axis-aligned box; return cells and the box: the one
   PatchworkDMDACreateQk()/PatchworkDMDASetCoordinatesQk() noted while its coordinates are theirs
   (no pass over the grid), else the extent of the coordinates, checked node by node, else the unit box */
PetscErrorCode PatchworkDMDAGetQkGrid(DM dm, PetscInt degree, PetscInt cells[], PetscReal lower[], PetscReal upper[])
{
  MPI_Comm        comm = PetscObjectComm((PetscObject)dm);
  PetscBool       isda, known = PETSC_FALSE;
  PetscInt        dim, M[3], dof, s;
  DMBoundaryType  b[3];
  DMDAStencilType st;
  QkBox          *box = NULL;
  Vec             c;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)dm, DMDA, &isda));
  if (!isda) {
    DMType type;

    PetscCall(DMGetType(dm, &type));
    SETERRQ(comm, PETSC_ERR_ARG_WRONG, "The tensor-product operator needs a DMDA node grid or a DMPlex of quadrilaterals or hexahedra, not a DM of type %s", type ? type : "(not set)");
  }
  PetscCall(DMDAGetInfo(dm, &dim, &M[0], &M[1], &M[2], NULL, NULL, NULL, &dof, &s, &b[0], &b[1], &b[2], &st));
  PetscCheck(dim == 2 || dim == 3, comm, PETSC_ERR_ARG_WRONG, "DMDA of dimension %" PetscInt_FMT " not supported: use 2 or 3", dim);
  PetscCheck(degree >= 1 && degree <= MaxDegree(dim), comm, PETSC_ERR_ARG_OUTOFRANGE, "Degree %" PetscInt_FMT " not supported in %" PetscInt_FMT "D (1..%" PetscInt_FMT ")", degree, dim, MaxDegree(dim));
  PetscCheck(dof == 1, comm, PETSC_ERR_ARG_WRONG, "DMDA has %" PetscInt_FMT " dof per node; the scalar Q_k operator needs dof = 1", dof);
  PetscCheck(st == DMDA_STENCIL_BOX, comm, PETSC_ERR_ARG_WRONG, "DMDA needs DMDA_STENCIL_BOX: cells reach diagonal neighbours");
  PetscCheck(s >= degree, comm, PETSC_ERR_ARG_WRONG, "DMDA stencil width %" PetscInt_FMT " is smaller than the degree %" PetscInt_FMT ": a rank cannot see all nodes of its cells", s, degree);
  for (PetscInt d = 0; d < 3; d++) {
    cells[d] = 1;
    lower[d] = 0;
    upper[d] = d < dim ? 1 : 0;
    if (d >= dim) continue;
    PetscCheck(b[d] == DM_BOUNDARY_NONE, comm, PETSC_ERR_SUP, "DMDA boundary type %s in direction %" PetscInt_FMT " not supported: use DM_BOUNDARY_NONE", DMBoundaryTypes[b[d]], d);
    PetscCheck((M[d] - 1) % degree == 0 && M[d] > degree, comm, PETSC_ERR_ARG_INCOMP, "DMDA has %" PetscInt_FMT " nodes in direction %" PetscInt_FMT ", not a Q%" PetscInt_FMT " node grid (degree*cells+1 nodes)", M[d], d, degree);
    cells[d] = (M[d] - 1) / degree;
  }
  PetscCall(DMGetCoordinates(dm, &c));
  PetscCall(QkBoxKnows(dm, degree, c, &box, &known));
  if (known) {
    for (PetscInt d = 0; d < dim; d++) {
      lower[d] = box->lower[d];
      upper[d] = box->upper[d];
    }
  } else if (c) PetscCall(CheckCoordinates(dm, degree, cells, c, lower, upper));
  PetscFunctionReturn(PETSC_SUCCESS);
}
