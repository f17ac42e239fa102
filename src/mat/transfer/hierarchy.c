/* A multigrid hierarchy for a Patchwork operator: coarser grids by DMCoarsen(), the operator
   rediscretized on each, and the transfers between them. */
#include "../../sys/pwimpl.h"

PetscInt PatchworkMaxLevels(PetscInt dim, const PetscInt cells[])
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

  PetscFunctionBegin;
  PetscCall(MatPatchworkTensorGetInfo(A, &info));
  PetscCall(PatchworkTensorRequireCartesian(&info, PetscObjectComm((PetscObject)A), "A multigrid hierarchy of the operator"));
  maxl = PatchworkMaxLevels(info.dim, info.cells);
  PetscCheck(n >= 1 && n <= maxl, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "The grid of %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT " cells cannot be coarsened to %" PetscInt_FMT " levels (at most %" PetscInt_FMT ": every coarsening halves an even number of at least 4 cells per direction)", info.cells[0], info.cells[1], info.dim == 3 ? info.cells[2] : 1, n, maxl);
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
