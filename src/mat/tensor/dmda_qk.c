/* DMDA node grids of Q_k elements on axis-aligned boxes: creation, coordinates, validation. */
#include "tensorimpl.h"

static PetscInt MaxDegree(PetscInt dim) { return dim == 2 ? PW_MAX_DEGREE : 8; }

/* Position of global node g along one direction: node i of cell e sits at the i-th Gauss-Lobatto point */
static PetscReal NodeCoordinate(PetscInt g, PetscInt degree, PetscInt cells, PetscReal lo, PetscReal hi, const double gll[])
{
  PetscInt e = PetscMin(g / degree, cells - 1);

  return lo + (hi - lo) * ((PetscReal)e + (PetscReal)gll[g - degree * e]) / (PetscReal)cells;
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

  Level: intermediate

.seealso: `PatchworkDMDACreateQk()`, `MatCreatePatchworkTensor()`
@*/
PetscErrorCode PatchworkDMDASetCoordinatesQk(DM dm, PetscInt degree, const PetscReal lower[], const PetscReal upper[])
{
  PetscInt  dim, M[3], xs[3], xm[3], cells[3];
  PetscReal lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
  double    gll[PW_MAX_N], w[PW_MAX_N];
  DM        cdm;
  Vec       c;

  PetscFunctionBegin;
  PetscCall(DMDAGetInfo(dm, &dim, &M[0], &M[1], &M[2], NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCheck(degree >= 1 && degree <= MaxDegree(dim), PetscObjectComm((PetscObject)dm), PETSC_ERR_ARG_OUTOFRANGE, "Degree %" PetscInt_FMT " not supported in %" PetscInt_FMT "D (1..%" PetscInt_FMT ")", degree, dim, MaxDegree(dim));
  for (PetscInt d = 0; d < dim; d++) {
    PetscCheck((M[d] - 1) % degree == 0 && M[d] > degree, PetscObjectComm((PetscObject)dm), PETSC_ERR_ARG_INCOMP, "DMDA has %" PetscInt_FMT " nodes in direction %" PetscInt_FMT ": not degree*cells+1 for degree %" PetscInt_FMT, M[d], d, degree);
    cells[d] = (M[d] - 1) / degree;
    if (lower) lo[d] = lower[d];
    if (upper) hi[d] = upper[d];
    PetscCheck(hi[d] > lo[d], PetscObjectComm((PetscObject)dm), PETSC_ERR_ARG_WRONG, "Box upper corner %g must exceed lower corner %g in direction %" PetscInt_FMT, (double)hi[d], (double)lo[d], d);
  }
  PetscCheck(!PatchworkGaussLobatto((int)degree + 1, gll, w), PETSC_COMM_SELF, PETSC_ERR_LIB, "Gauss-Lobatto points of degree %" PetscInt_FMT " failed", degree);
  PetscCall(DMDASetUniformCoordinates(dm, lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]));
  PetscCall(DMGetCoordinateDM(dm, &cdm));
  PetscCall(DMGetCoordinates(dm, &c));
  PetscCall(DMDAGetCorners(dm, &xs[0], &xs[1], &xs[2], &xm[0], &xm[1], &xm[2]));
  {
    PetscScalar *a;
    PetscInt     n = 0;

    /* the coordinate vector is interlaced, x fastest: the same order as the loop below */
    PetscCall(VecGetArray(c, &a));
    for (PetscInt k = xs[2]; k < xs[2] + xm[2]; k++)
      for (PetscInt j = xs[1]; j < xs[1] + xm[1]; j++)
        for (PetscInt i = xs[0]; i < xs[0] + xm[0]; i++) {
          const PetscInt g[3] = {i, j, k};
          for (PetscInt d = 0; d < dim; d++) a[n++] = NodeCoordinate(g[d], degree, cells[d], lo[d], hi[d], gll);
        }
    PetscCall(VecRestoreArray(c, &a));
  }
  PetscCall(DMSetCoordinates(dm, c)); /* drops the cached local coordinates */
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

  Level: beginner

.seealso: `MatCreatePatchworkTensor()`, `PatchworkDMDASetCoordinatesQk()`
@*/
PetscErrorCode PatchworkDMDACreateQk(MPI_Comm comm, PetscInt dim, PetscInt degree, const PetscInt cells[], const PetscReal lower[], const PetscReal upper[], DM *dm)
{
  PetscInt M[3] = {1, 1, 1};

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
  PetscCall(DMSetUp(*dm));
  PetscCall(PatchworkDMDASetCoordinatesQk(*dm, degree, lower, upper));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Check that dm is the Q_k node grid of an axis-aligned box; return cells and the box */
PetscErrorCode PatchworkDMDAGetQkGrid(DM dm, PetscInt degree, PetscInt cells[], PetscReal lower[], PetscReal upper[])
{
  MPI_Comm         comm = PetscObjectComm((PetscObject)dm);
  PetscBool        isda;
  PetscInt         dim, M[3], dof, s, xs[3], xm[3];
  DMBoundaryType   b[3];
  DMDAStencilType  st;
  Vec              c;

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
  if (!c) PetscFunctionReturn(PETSC_SUCCESS); /* no coordinates: the unit box */
  {
    const PetscScalar *a;
    double             gll[PW_MAX_N], w[PW_MAX_N];
    PetscReal          maxerr = 0, extent = 0;
    PetscInt           n = 0;

    for (PetscInt d = 0; d < dim; d++) {
      PetscCall(VecStrideMin(c, d, NULL, &lower[d]));
      PetscCall(VecStrideMax(c, d, NULL, &upper[d]));
      PetscCheck(upper[d] > lower[d], comm, PETSC_ERR_ARG_WRONG, "DMDA coordinates are degenerate in direction %" PetscInt_FMT, d);
      extent = PetscMax(extent, upper[d] - lower[d]);
    }
    PetscCheck(!PatchworkGaussLobatto((int)degree + 1, gll, w), PETSC_COMM_SELF, PETSC_ERR_LIB, "Gauss-Lobatto points of degree %" PetscInt_FMT " failed", degree);
    PetscCall(DMDAGetCorners(dm, &xs[0], &xs[1], &xs[2], &xm[0], &xm[1], &xm[2]));
    PetscCall(VecGetArrayRead(c, &a));
    for (PetscInt k = xs[2]; k < xs[2] + xm[2]; k++)
      for (PetscInt j = xs[1]; j < xs[1] + xm[1]; j++)
        for (PetscInt i = xs[0]; i < xs[0] + xm[0]; i++) {
          const PetscInt g[3] = {i, j, k};
          for (PetscInt d = 0; d < dim; d++, n++) maxerr = PetscMax(maxerr, PetscAbsReal(PetscRealPart(a[n]) - NodeCoordinate(g[d], degree, cells[d], lower[d], upper[d], gll)));
        }
    PetscCall(VecRestoreArrayRead(c, &a));
    PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &maxerr, 1, MPIU_REAL, MPIU_MAX, comm));
    PetscCheck(maxerr <= 1e-10 * extent, comm, PETSC_ERR_ARG_WRONG, "DMDA coordinates are not the Gauss-Lobatto nodes of a uniform Cartesian Q%" PetscInt_FMT " mesh (max deviation %g): set them with PatchworkDMDASetCoordinatesQk() or use PatchworkDMDACreateQk()", degree, (double)maxerr);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
