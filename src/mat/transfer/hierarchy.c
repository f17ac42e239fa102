/* A multigrid hierarchy for a Patchwork operator: coarser grids by DMCoarsen(), the operator
   rediscretized on each, and the transfers between them. */
#include "../../sys/pwimpl.h"

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
  MPI_Comm comm = PetscObjectComm((PetscObject)info->dm);
  PetscInt ranks[3], width[3], wmin[3];

  PetscFunctionBegin;
  *maxl = MaxLevelsOfCells(info->dim, info->cells);
  PetscCall(PetscSNPrintf(why, len, "every coarsening halves an even number of at least 4 cells per direction"));
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
   coarse grid: the coarse coordinates are set from the box anyway, and the injection (a scatter built
   on the host) costs more than everything else in the setup on large grids */
static PetscErrorCode CoarsenWithoutCoordinates(DM fine, DM *coarse)
{
  Vec coords;

  PetscFunctionBegin;
  PetscCall(DMGetCoordinates(fine, &coords));
  PetscCall(PetscObjectReference((PetscObject)coords));
  PetscCall(DMSetCoordinates(fine, NULL));
  PetscCall(DMCoarsen(fine, PetscObjectComm((PetscObject)fine), coarse));
  PetscCall(DMSetCoordinates(fine, coords));
  PetscCall(VecDestroy(&coords));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PatchworkCreateHierarchy(Mat A, PetscInt n, Mat ops[], Mat interp[])
{
  PatchworkTensorInfo info;
  PetscInt            maxl;
  VecType             vtype;
  char                why[256];

  PetscFunctionBegin;
  PetscCall(MatPatchworkTensorGetInfo(A, &info));
  PetscCall(PatchworkTensorRequireCartesian(&info, PetscObjectComm((PetscObject)A), "A multigrid hierarchy of the operator"));
  PetscCall(PatchworkMaxLevels(&info, &maxl, why, sizeof(why)));
  PetscCheck(n >= 1 && n <= maxl, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "The grid of %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT " cells cannot be coarsened to %" PetscInt_FMT " levels (at most %" PetscInt_FMT ": %s)", info.cells[0], info.cells[1], info.dim == 3 ? info.cells[2] : 1, n, maxl, why);
  PetscCall(DMGetVecType(info.dm, &vtype));
  ops[n - 1] = A;
  PetscCall(PetscObjectReference((PetscObject)A));
  interp[0] = NULL;
  for (PetscInt l = n - 2; l >= 0; l--) {
    PatchworkTensorInfo fine;
    DM                  dm;

    PetscCall(MatPatchworkTensorGetInfo(ops[l + 1], &fine));
    PetscCall(CoarsenWithoutCoordinates(fine.dm, &dm));
    PetscCall(DMSetVecType(dm, vtype));
    PetscCall(PatchworkDMDASetCoordinatesQk(dm, info.degree, info.lower, info.upper));
    PetscCall(MatCreatePatchworkTensor(dm, info.degree, &ops[l]));
    PetscCall(DMDestroy(&dm)); /* the operator holds it */
    PetscCall(MatPatchworkTensorSetCoefficients(ops[l], info.alpha, info.beta));
    PetscCall(MatPatchworkTensorSetQuadrature(ops[l], info.quadrature));
    PetscCall(MatPatchworkTensorSetBC(ops[l], info.bc));
    PetscCall(MatCreatePatchworkTransfer(ops[l], ops[l + 1], &interp[l + 1]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
