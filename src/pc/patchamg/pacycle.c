/* PCPATCHAMG's V-cycle (Fu et al. 2014, algorithm 5.3): relaxation (the fused pre-relaxation with
   residual where it applies), restriction by P^T, the coarse correction, prolongation by P. */
#include "paimpl.h"

/* One relaxation step on level L: x from b (x = 0 first when zero_guess); r = b - A x after it when
   want_residual */
static PetscErrorCode RelaxStep(PC_PatchAMG *pa, PC_PatchAMGLevel *L, PetscBool zero_guess, PetscBool want_residual)
{
  PetscBool have_residual = PETSC_FALSE;

  PetscFunctionBegin;
  switch (pa->relax) {
  case PATCHWORK_AMG_RELAX_PATCH:
    if (zero_guess) {
      /* the fused kernel: relaxation and the residual inside the patches; one rank adds the
         coupling between patches (AB) itself, several ranks use A's own residual */
      if (want_residual && pa->serial) {
        PetscCall(PCPatchAMGSPMRelax(pa, &L->spm, L->b, L->x, L->r, PETSC_TRUE));
        if (L->spm.has_ab) PetscCall(PCPatchAMGSPMBoundaryResidual(pa, &L->spm, L->x, L->r, L->r));
        have_residual = PETSC_TRUE;
      } else PetscCall(PCPatchAMGSPMRelax(pa, &L->spm, L->b, L->x, NULL, PETSC_TRUE));
    } else if (pa->serial) { /* b - AB x is the right-hand side of the patch blocks */
      PetscCall(PCPatchAMGSPMBoundaryResidual(pa, &L->spm, L->x, L->b, L->y));
      PetscCall(PCPatchAMGSPMRelax(pa, &L->spm, L->y, L->x, NULL, PETSC_FALSE));
    } else {
      PetscCall(MatResidual(L->A, L->b, L->x, L->r));
      PetscCall(PCPatchAMGSPMRelax(pa, &L->spm, L->r, L->y, NULL, PETSC_TRUE));
      PetscCall(VecAXPY(L->x, 1.0, L->y));
    }
    break;
  case PATCHWORK_AMG_RELAX_SPAI1: /* x += S (b - A x), S the symmetrized SPAI(1) */
    if (zero_guess) PetscCall(MatMult(L->spai, L->b, L->x));
    else {
      PetscCall(MatResidual(L->A, L->b, L->x, L->r));
      PetscCall(MatMultAdd(L->spai, L->r, L->x, L->x));
    }
    break;
  case PATCHWORK_AMG_RELAX_CHEBYSHEV:
    if (zero_guess) PetscCall(VecSet(L->x, 0.0));
    PetscCall(KSPSolve(L->cheby, L->b, L->x));
    break;
  default: /* point relaxations: x += dscale .* (b - A x) */
    if (zero_guess) PetscCall(VecPointwiseMult(L->x, L->dscale, L->b));
    else {
      PetscCall(MatResidual(L->A, L->b, L->x, L->r));
      PetscCall(VecPointwiseMult(L->y, L->dscale, L->r));
      PetscCall(VecAXPY(L->x, 1.0, L->y));
    }
  }
  if (want_residual && !have_residual) PetscCall(MatResidual(L->A, L->b, L->x, L->r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode VCycle(PC_PatchAMG *pa, PetscInt l)
{
  PC_PatchAMGLevel *L = &pa->levels[l], *C;

  PetscFunctionBegin;
  if (l == pa->nlevels - 1) {
    PetscCall(PetscLogEventBegin(PATCHWORK_AMGCoarseSolve, 0, 0, 0, 0));
    PetscCall(PCPatchAMGCoarseSolve(pa, L->b, L->x, L->r)); /* the pseudo-inverse where the level is singular */
    PetscCall(PetscLogEventEnd(PATCHWORK_AMGCoarseSolve, 0, 0, 0, 0));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  C = &pa->levels[l + 1];
  PetscCall(PetscLogEventBegin(L->ev_relax, 0, 0, 0, 0));
  for (PetscInt s = 0; s < pa->smooth_steps; s++) PetscCall(RelaxStep(pa, L, (PetscBool)(s == 0), (PetscBool)(s == pa->smooth_steps - 1)));
  PetscCall(PetscLogEventEnd(L->ev_relax, 0, 0, 0, 0));
  PetscCall(PetscLogEventBegin(L->ev_transfer, 0, 0, 0, 0));
  if (L->R) PetscCall(MatMult(L->R, L->r, C->b));
  else PetscCall(MatMultTranspose(L->P, L->r, C->b));
  PetscCall(PetscLogEventEnd(L->ev_transfer, 0, 0, 0, 0));
  PetscCall(VCycle(pa, l + 1));
  PetscCall(PetscLogEventBegin(L->ev_transfer, 0, 0, 0, 0));
  PetscCall(MatMultAdd(L->P, C->x, L->x, L->x));
  PetscCall(PetscLogEventEnd(L->ev_transfer, 0, 0, 0, 0));
  PetscCall(PetscLogEventBegin(L->ev_relax, 0, 0, 0, 0));
  for (PetscInt s = 0; s < pa->smooth_steps; s++) PetscCall(RelaxStep(pa, L, PETSC_FALSE, PETSC_FALSE));
  PetscCall(PetscLogEventEnd(L->ev_relax, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCApply_PatchAMG(PC pc, Vec b, Vec x)
{
  PC_PatchAMG      *pa = (PC_PatchAMG *)pc->data;
  PC_PatchAMGLevel *F  = &pa->levels[0];
  Vec               fb = F->b, fx = F->x;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PATCHWORK_AMGApply, pc, b, x, 0));
  if (pa->geometric && pa->perm) {
    /* geometric mode, renumbered: level 0 is the matrix in the new order, b and x go through the
       permutation (an SF, on the device where the vectors are) */
    PetscCall(VecScatterBegin(pa->perm, b, F->b, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(pa->perm, b, F->b, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VCycle(pa, 0));
    PetscCall(VecScatterBegin(pa->perm, F->x, x, INSERT_VALUES, SCATTER_REVERSE));
    PetscCall(VecScatterEnd(pa->perm, F->x, x, INSERT_VALUES, SCATTER_REVERSE));
  } else {
    /* level 0 is the user's matrix in the user's order: the cycle works on b and x themselves */
    F->b = b;
    F->x = x;
    PetscCall(VCycle(pa, 0));
    F->b = fb;
    F->x = fx;
  }
  /* singular matrices: the null component of x is arbitrary (no residual sees it); remove it, as KSP
     does after a left preconditioner, so that right-preconditioned methods stay orthogonal to it too */
  if (pa->nullsp) PetscCall(MatNullSpaceRemove(pa->nullsp, x));
  /* a coarse solve that failed (caught at setup, unless the coarse solver is iterative) flags the PC
     and sets x to Inf: KSP then reports DIVERGED_PC_FAILED, never a silent NaN */
  PetscCall(KSPCheckSolve(pa->coarse, pc, x));
  PetscCall(PetscLogEventEnd(PATCHWORK_AMGApply, pc, b, x, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}
