/* PETSc's PCMG on a Patchwork hierarchy: the baseline PCVERTEXPATCH is compared with, and the way to
   use PCVERTEXPATCH (with -pc_vertexpatch_levels 1) as a PCMG smoother. */
#include "../../sys/pwimpl.h"
#include <petscpc.h>

/*@
  PCMGSetPatchworkHierarchy - Give a `PCMG` the levels of a Patchwork operator: coarser grids by
  `DMCoarsen()`, the operator rediscretized on each (matrix-free), and matrix-free Q_k interpolation

  Collective

  Input Parameters:
+ pc      - a `PCMG` whose preconditioning matrix comes from `MatCreatePatchworkTensor()`
- nlevels - number of levels, `PETSC_DECIDE` for as many as the grid allows

  Notes:
  Call it after `KSPSetOperators()` and `KSPSetFromOptions()`; options of the levels
  (-mg_levels_ksp_type, -mg_levels_pc_type, -mg_coarse_ksp_type, ...) still apply at `KSPSetUp()`.
  Defaults suited to matrix-free operators are set: Chebyshev/Jacobi smoothing on every level (the
  level PCs are `PCJACOBI`, whose diagonal comes from `MatGetDiagonal()`), and CG with Jacobi to
  1e-12 on the coarsest level.

  Example Usage:
.vb
  -pc_type mg -mg_levels_ksp_type chebyshev -mg_levels_pc_type jacobi
  -pc_type mg -mg_levels_ksp_type richardson -mg_levels_pc_type vertexpatch -mg_levels_pc_vertexpatch_levels 1
.ve

  Level: intermediate

.seealso: `PCMG`, `PCVERTEXPATCH`, `MatCreatePatchworkTransfer()`
@*/
PetscErrorCode PCMGSetPatchworkHierarchy(PC pc, PetscInt nlevels)
{
  PatchworkTensorInfo info;
  PetscBool           ismg, ours;
  Mat                 A, *ops, *interp;
  KSP                 ksp;
  PC                  lpc;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCMG, &ismg));
  PetscCheck(ismg, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONG, "PCMGSetPatchworkHierarchy() needs a PC of type %s", PCMG);
  PetscCall(PCGetOperators(pc, NULL, &A));
  PetscCall(MatIsPatchworkTensor(A, &ours));
  PetscCheck(ours, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONG, "PCMGSetPatchworkHierarchy() needs the Patchwork tensor-product operator as preconditioning matrix");
  PetscCall(MatPatchworkTensorGetInfo(A, &info));
  PetscCall(PatchworkTensorRequireCartesian(&info, PetscObjectComm((PetscObject)pc), "PCMGSetPatchworkHierarchy()"));
  if (nlevels == PETSC_DECIDE || nlevels <= 0) {
    char why[256];

    PetscCall(PatchworkMaxLevels(&info, &nlevels, why, sizeof(why)));
  }
  PetscCall(PetscMalloc2(nlevels, &ops, nlevels, &interp));
  PetscCall(PatchworkCreateHierarchy(A, nlevels, ops, interp));
  PetscCall(PCMGSetLevels(pc, nlevels, NULL));
  PetscCall(PCMGSetGalerkin(pc, PC_MG_GALERKIN_NONE));
  for (PetscInt l = 0; l < nlevels; l++) {
    PetscCall(PCMGGetSmoother(pc, l, &ksp));
    PetscCall(KSPSetOperators(ksp, ops[l], ops[l]));
    PetscCall(KSPGetPC(ksp, &lpc));
    PetscCall(PCSetType(lpc, PCJACOBI));
    if (l == 0) {
      PetscCall(KSPSetType(ksp, KSPCG));
      PetscCall(KSPSetTolerances(ksp, 1e-12, PETSC_DEFAULT, PETSC_DEFAULT, 1000));
    } else PetscCall(PCMGSetInterpolation(pc, l, interp[l]));
    if (l < nlevels - 1) PetscCall(MatDestroy(&ops[l])); /* the KSP holds it; the finest is the caller's */
    PetscCall(MatDestroy(&interp[l]));
  }
  PetscCall(MatDestroy(&ops[nlevels - 1]));
  PetscCall(PetscFree2(ops, interp));
  PetscFunctionReturn(PETSC_SUCCESS);
}
