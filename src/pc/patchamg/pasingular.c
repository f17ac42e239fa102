/* PCPATCHAMG on singular matrices. A singular coarse matrix makes PETSc's LU meet a zero pivot, after
   which its PCApply returns Inf and every V-cycle Inf or NaN: the outer KSP reported DIVERGED_NANORINF
   after 0 iterations and nothing else (issue 33). PCSetUp now tries the coarse solver once and refuses
   to go on with one that fails, saying what to do. */
#include "paimpl.h"

/*
  PCPatchAMGCheckCoarseSolver - One coarse solve of a random vector at setup: a coarse solver that fails
  (a zero pivot in LU: a singular coarse matrix) would otherwise turn every V-cycle into Inf or NaN,
  which the outer KSP reports only as DIVERGED_NANORINF. Errors with what to do instead.
*/
PetscErrorCode PCPatchAMGCheckCoarseSolver(PC pc)
{
  PC_PatchAMG       *pa = (PC_PatchAMG *)pc->data;
  PC_PatchAMGLevel  *L  = &pa->levels[pa->nlevels - 1];
  Vec                b, x;
  PetscReal          nrm;
  KSPConvergedReason reason;
  PC                 cpc;
  PCFailedReason     pcreason;
  PetscInt           pcr[2]; /* max and -min over the ranks (PC_SETUP_ERROR is negative) */
  PetscErrorCode     err;
  PetscBool          redundant;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(L->x, &b));
  PetscCall(VecDuplicate(L->x, &x));
  PetscCall(PatchworkVecSetHashRandom(b, 0x5eed + 4));
  PetscCall(KSPSolve(pa->coarse, b, x));
  PetscCall(VecNorm(x, NORM_2, &nrm));
  PetscCall(KSPGetConvergedReason(pa->coarse, &reason));
  PetscCall(KSPGetPC(pa->coarse, &cpc));
  /* the coarse PC's failure on this rank: PCGetFailedReasonRank() in PETSc 3.18, PCGetFailedReason() in
     later ones; the fields behind them are the same in both */
  pcreason = cpc->failedreasonrank ? cpc->failedreasonrank : cpc->failedreason;
  pcr[0] = (PetscInt)pcreason;
  pcr[1] = -(PetscInt)pcreason;
  PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, pcr, 2, MPIU_INT, MPI_MAX, PetscObjectComm((PetscObject)pc)));
  if (!pcr[0]) pcr[0] = -pcr[1];
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x));
  if (!PetscIsInfOrNanReal(nrm) && (reason >= 0 || reason == KSP_DIVERGED_ITS) && !pcr[0]) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompare((PetscObject)cpc, PCREDUNDANT, &redundant)); /* the option of the factorization inside */
  err = pcr[0] == PC_FACTOR_NUMERIC_ZEROPIVOT || pcr[0] == PC_FACTOR_STRUCT_ZEROPIVOT ? PETSC_ERR_MAT_LU_ZRPVT : PETSC_ERR_NOT_CONVERGED;
  SETERRQ(PetscObjectComm((PetscObject)pc), err,
          "PCPATCHAMG: the coarse solver of level %" PetscInt_FMT " (%" PetscInt_FMT " rows) fails (%s%s%s): the coarse matrix is singular, so the matrix is singular or nearly so. "
          "Shift the coarse factorization (-pc_patchamg_coarse_%spc_factor_shift_type nonzero)",
          pa->nlevels - 1, L->N, KSPConvergedReasons[reason], pcr[0] ? ", PC: " : "", pcr[0] ? PCFailedReasons[pcr[0]] : "", redundant ? "redundant_" : "");
}
