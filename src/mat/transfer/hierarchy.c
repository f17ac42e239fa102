/* A multigrid hierarchy for a Patchwork operator: coarser grids by DMCoarsen(), the operator
   rediscretized on each, and the transfers between them. */
#include "hierarchy.h"
#include "../tensor/cartesian.h"

/* Levels the cells allow: every coarsening halves an even number of at least 4 cells per direction */
static PetscInt MaxLevelsOfCells(PetscInt dim, const PetscInt cells[])
{
  PetscInt n = 1, c[3] = {cells[0], cells[1], cells[2]};

  for (;;) {
    PetscBool ok = PETSC_TRUE;

    for (PetscInt d = 0; d < dim; d++) ok = (PetscBool)(ok && c[d] % 2 == 0 && c[d] >= 4);
    if (!ok) return n;
    for (PetscInt d = 0; d < dim; d++) c[d] /= 2;
    n++;
  }
}

/*
  PatchworkMaxLevels - The most levels a hierarchy of the operator can have, and why no more (for
  error messages). Collective.

  The cells limit it (above), and so does the DMDA's partition: DMCoarsen() keeps the partitions
  nested (a coarse node goes to the owner of the fine node at twice its index), so a rank's share
  of w nodes in a direction split over several ranks keeps at least floor(w / 2) nodes with every
  coarsening, and PETSc refuses a share narrower than the stencil width (k nodes).
*/
PetscErrorCode PatchworkMaxLevels(const PatchworkTensorInfo *info, PetscInt *maxl, char why[], size_t len)
{
  MPI_Comm comm;
  PetscInt ranks[3], width[3], wmin[3];

  PetscFunctionBegin;
  *maxl = MaxLevelsOfCells(info->dim, info->cells);
  PetscCall(PetscSNPrintf(why, len, "every coarsening halves an even number of at least 4 cells per direction"));
  if (!info->dm) PetscFunctionReturn(PETSC_SUCCESS); /* an operator without a DM: one rank, no partition */
  comm = PetscObjectComm((PetscObject)info->dm);
  PetscCall(DMDAGetInfo(info->dm, NULL, NULL, NULL, NULL, &ranks[0], &ranks[1], &ranks[2], NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetCorners(info->dm, NULL, NULL, NULL, &width[0], &width[1], &width[2]));
  PetscCallMPI(MPI_Allreduce(width, wmin, 3, MPIU_INT, MPI_MIN, comm));
  for (PetscInt d = 0; d < info->dim; d++) {
    PetscInt l = 0, w = wmin[d];

    if (ranks[d] == 1) continue;
    while (l + 1 < *maxl && w / 2 >= info->degree) {
      w /= 2;
      l++;
    }
    if (l + 1 < *maxl) {
      *maxl = l + 1;
      PetscCall(PetscSNPrintf(why, len, "direction %" PetscInt_FMT " is split over %" PetscInt_FMT " ranks, the narrowest share has %" PetscInt_FMT " nodes and every coarsening halves it, down to no fewer than the stencil width %" PetscInt_FMT ": use fewer ranks or levels", d, ranks[d], wmin[d], info->degree));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* DMCoarsen(), which keeps the partitions nested, without injecting the fine coordinates into the
   coarse grid: the coarse grid knows its box (PatchworkDMDASetQkBox()) and needs none, and the
   injection (a scatter built on the host) costs more than everything else in the set-up on large
   grids. (Taking the fine coordinates away and back drops the DM's cached local coordinates; PETSc
   makes them again when asked.) */
static PetscErrorCode CoarsenWithoutCoordinates(DM fine, DM *coarse)
{
  Vec coords;

  PetscFunctionBegin;
  PetscCall(DMGetCoordinates(fine, &coords));
  if (!coords) {
    PetscCall(DMCoarsen(fine, PetscObjectComm((PetscObject)fine), coarse));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscObjectReference((PetscObject)coords));
  PetscCall(DMSetCoordinates(fine, NULL));
  PetscCall(DMCoarsen(fine, PetscObjectComm((PetscObject)fine), coarse));
  PetscCall(DMSetCoordinates(fine, coords));
  PetscCall(VecDestroy(&coords));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The grid of the next coarser level of fine (cells halved, the same box, no DM) */
static void CoarseInfo(const PatchworkTensorInfo *fine, PatchworkTensorInfo *coarse)
{
  *coarse    = *fine;
  coarse->dm = NULL;
  for (PetscInt d = 0; d < fine->dim; d++) coarse->cells[d] = fine->cells[d] / 2;
}

/* A DMDA for the coarse grid c: DMCoarsen() of the finer level's DMDA, or on one rank, when the finer
   level has none, made directly (one rank has no partition to keep nested). It knows its box and has
   no coordinates. */
static PetscErrorCode CoarseDM(MPI_Comm comm, const PatchworkTensorInfo *fine, const PatchworkTensorInfo *c, VecType vtype, DM *dm)
{
  PetscFunctionBegin;
  if (fine->dm) PetscCall(CoarsenWithoutCoordinates(fine->dm, dm));
  else {
    PetscInt M[3];

    for (PetscInt d = 0; d < 3; d++) M[d] = d < c->dim ? c->degree * c->cells[d] + 1 : 1;
    if (c->dim == 2) PetscCall(DMDACreate2d(comm, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, M[0], M[1], 1, 1, 1, c->degree, NULL, NULL, dm));
    else PetscCall(DMDACreate3d(comm, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, M[0], M[1], M[2], 1, 1, 1, 1, c->degree, NULL, NULL, NULL, dm));
    PetscCall(DMSetUp(*dm));
  }
  PetscCall(DMSetVecType(*dm, vtype));
  PetscCall(PatchworkDMDASetQkBox(*dm, c->degree, c->lower, c->upper));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The operator of the coarse grid c: without a DM when allowed, else on a DMDA (CoarseDM()) */
static PetscErrorCode CoarseOperator(MPI_Comm comm, const PatchworkTensorInfo *fine, const PatchworkTensorInfo *c, PetscBool nodm, VecType vtype, Mat *A)
{
  DM dm;

  PetscFunctionBegin;
  if (nodm) {
    PetscCall(PatchworkTensorCreateOnBox(comm, c, vtype, A));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(CoarseDM(comm, fine, c, vtype, &dm));
  PetscCall(MatCreatePatchworkTensor(dm, c->degree, A));
  PetscCall(DMDestroy(&dm)); /* the operator holds it */
  PetscCall(MatPatchworkTensorSetCoefficients(*A, c->alpha, c->beta));
  PetscCall(MatPatchworkTensorSetQuadrature(*A, c->quadrature));
  PetscCall(MatPatchworkTensorSetBC(*A, c->bc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  PatchworkCreateLevels - PatchworkCreateHierarchy(), and with nodm on one rank, the levels strictly
  between the coarsest and the finest without a DM (PatchworkTensorCreateOnBox()): a DMDA's set-up
  builds index sets and a scatter over all its nodes on the host, which made a preconditioner's set-up
  cost about a seventh of the fine DMDA's creation. The coarsest level keeps a DMDA (made directly), so
  that its operator serves any PETSc coarse solver. Several ranks need the DMDAs (DMCoarsen() keeps
  the partitions nested; the halo exchanges are the DMDA's), and so does PCMG, whose level operators
  users reach through options.

  Collective.
*/
PetscErrorCode PatchworkCreateLevels(Mat A, PetscInt n, PetscBool nodm, Mat ops[], Mat interp[])
{
  MPI_Comm            comm = PetscObjectComm((PetscObject)A);
  PatchworkTensorInfo info;
  PetscInt            maxl;
  PetscMPIInt         size;
  VecType             vtype;
  char                why[256];

  PetscFunctionBegin;
  PetscCall(MatPatchworkTensorGetInfo(A, &info));
  PetscCall(PatchworkTensorRequireCartesian(&info, comm, "A multigrid hierarchy of the operator"));
  PetscCall(PatchworkMaxLevels(&info, &maxl, why, sizeof(why)));
  PetscCheck(n >= 1 && n <= maxl, comm, PETSC_ERR_ARG_OUTOFRANGE, "The grid of %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT " cells cannot be coarsened to %" PetscInt_FMT " levels (at most %" PetscInt_FMT ": %s)", info.cells[0], info.cells[1], info.dim == 3 ? info.cells[2] : 1, n, maxl, why);
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(MatGetVecType(A, &vtype));
  PetscCall(PetscLogEventBegin(PATCHWORK_Levels, A, 0, 0, 0));
  ops[n - 1] = A;
  PetscCall(PetscObjectReference((PetscObject)A));
  interp[0] = NULL;
  for (PetscInt l = n - 2; l >= 0; l--) {
    PatchworkTensorInfo fine, coarse;

    PetscCall(MatPatchworkTensorGetInfo(ops[l + 1], &fine));
    CoarseInfo(&fine, &coarse);
    PetscCall(CoarseOperator(comm, &fine, &coarse, (PetscBool)(nodm && size == 1 && l > 0), vtype, &ops[l]));
    PetscCall(MatCreatePatchworkTransfer(ops[l], ops[l + 1], &interp[l + 1]));
  }
  PetscCall(PetscLogEventEnd(PATCHWORK_Levels, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PatchworkCreateHierarchy(Mat A, PetscInt n, Mat ops[], Mat interp[])
{
  PetscFunctionBegin;
  PetscCall(PatchworkCreateLevels(A, n, PETSC_FALSE, ops, interp));
  PetscFunctionReturn(PETSC_SUCCESS);
}
