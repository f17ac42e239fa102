/* PCPATCHAMG on singular matrices (pure Neumann problems): the null space the user attached to the
   matrix with MatSetNullSpace() is carried through the hierarchy and the coarse solve is made exact on
   its complement.

   Hierarchy: the aggregation takes the null vector z as its near-null-space vector. The tentative
   prolongator maps the next level's vector z_c (the aggregate norms of z) onto z exactly, and the
   smoothed one too, since A z = 0: P z_c = (I - w D^-1 A) P~ z_c = z. So A_c z_c = P^T A z = 0 on every
   level, to rounding (aggregation of constants is exact).

   Coarse solve: A_c is singular, and a plain LU meets a zero pivot (PETSc's LU then returns Inf: the
   NaN of issue 33). The coarse operator is A_c with row and column k (the largest entry of z_c) replaced
   by the diagonal entry a_kk: nonsingular, since z_c(k) != 0. For a right-hand side b orthogonal to z_c
   its solution with b_k = 0 solves A_c x = b, and removing z_c from it gives the minimum-norm solution:
   x = Q K E Q b, with Q the orthogonal projection onto the complement of z_c, E the mask that zeroes
   b_k and K the inverse of the pinned matrix, is the pseudo-inverse of A_c (symmetric, so the V-cycle
   stays symmetric for CG). Any coarse KSP/PC the options give works on it.

   Relaxation: it only ever sees residuals b - A x, which do not see the null component of x, so it
   cannot amplify that component; the V-cycle's output has the null space removed (as KSP does for
   left preconditioning), so that right-preconditioned and flexible methods stay orthogonal to it too.

   A null space of several vectors (the rigid-body modes of pure-traction elasticity) cannot be carried
   by the one vector per row of the aggregation: PCSetUp refuses it with a message. A singular coarse
   matrix without an attached null space is caught at setup by one test solve. */
#include "paimpl.h"

/* A null vector must satisfy ||A z||_inf <= tol max_i |a_ii| ||z||_inf: rounding is ~1e-15 relative,
   the loose bound admits vectors computed to a few digits less than that */
#define PC_PATCHAMG_NULL_TOL 1e-6

/* ||A z||_inf / (max_i |a_ii| ||z||_inf): ~1e-16 for an exact null vector (w: work of z's layout) */
static PetscErrorCode NullResidual(Mat A, Vec z, Vec w, PetscReal *ratio)
{
  PetscReal az, zn, dmax;

  PetscFunctionBegin;
  PetscCall(MatGetDiagonal(A, w));
  PetscCall(VecNorm(w, NORM_INFINITY, &dmax));
  PetscCall(MatMult(A, z, w));
  PetscCall(VecNorm(w, NORM_INFINITY, &az));
  PetscCall(VecNorm(z, NORM_INFINITY, &zn));
  *ratio = dmax > 0 && zn > 0 ? az / (dmax * zn) : PETSC_MAX_REAL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  PCPatchAMGSetUpNullSpace - The null space attached to the matrix A (MatSetNullSpace()), checked: one
  vector, and a null vector of A. Sets pa->nullsp and *z, the vector the aggregation must carry (a new
  reference; NULL for the constants). Without a null space nothing is set.
*/
PetscErrorCode PCPatchAMGSetUpNullSpace(PC pc, Mat A, Vec *z)
{
  PC_PatchAMG  *pa   = (PC_PatchAMG *)pc->data;
  MPI_Comm      comm = PetscObjectComm((PetscObject)pc);
  MatNullSpace  nsp;
  PetscBool     has_const;
  PetscInt      nvec;
  const Vec    *vecs;
  Vec           v, w;
  PetscReal     ratio;

  PetscFunctionBegin;
  *z = NULL;
  PetscCall(MatGetNullSpace(A, &nsp));
  if (!nsp) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatNullSpaceGetVecs(nsp, &has_const, &nvec, &vecs));
  if (nvec + (has_const ? 1 : 0) == 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(nvec + (has_const ? 1 : 0) == 1, comm, PETSC_ERR_SUP,
             "PCPATCHAMG: the matrix's null space (MatSetNullSpace()) has %" PetscInt_FMT " vectors, but the aggregation carries one vector per row from level to level (scalar problems, e.g. the constants of a pure Neumann problem): a null space of several vectors, like the rigid-body modes of pure-traction elasticity, cannot be represented on its coarse levels. "
             "Remove it by boundary conditions (fix enough displacement components), or use PCGAMG (-pc_type gamg) with the modes as near null space (MatSetNearNullSpace())",
             nvec + (has_const ? 1 : 0));
  PetscCheck(!pa->geometric || has_const, comm, PETSC_ERR_SUP, "PCPATCHAMG -pc_patchamg_hierarchy geometric carries a null space of constants only (the interpolation reproduces them), but the matrix's null space (MatSetNullSpace()) is another vector: use -pc_patchamg_hierarchy algebraic, whose aggregation carries any one vector");
  PetscCall(MatCreateVecs(A, &v, &w));
  if (has_const) PetscCall(VecSet(v, 1.0));
  else PetscCall(VecCopy(vecs[0], v));
  PetscCall(VecNorm(v, NORM_INFINITY, &ratio));
  PetscCheck(ratio > 0, comm, PETSC_ERR_ARG_WRONG, "PCPATCHAMG: the vector of the null space attached to the matrix (MatSetNullSpace()) is zero (was it overwritten? MatNullSpaceCreate() keeps the vector, not a copy)");
  PetscCall(NullResidual(A, v, w, &ratio));
  PetscCall(VecDestroy(&w));
  PetscCheck(ratio <= PC_PATCHAMG_NULL_TOL, comm, PETSC_ERR_ARG_WRONG,
             "PCPATCHAMG: the null space attached to the matrix (MatSetNullSpace()) is not one: ||A z||_inf = %g max|a_ii| ||z||_inf (at most %g expected). Attach the exact null space (a pure Neumann problem: the constants, MatNullSpaceCreate() with has_cnst PETSC_TRUE) or none; a vector that is only nearly a null vector belongs in MatSetNearNullSpace()",
             (double)ratio, (double)PC_PATCHAMG_NULL_TOL);
  PetscCall(PetscObjectReference((PetscObject)nsp));
  pa->nullsp = nsp;
  if (has_const) PetscCall(VecDestroy(&v));
  else *z = v;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* B = A with row and column k removed but for a_kk (global row k), of A's type: built row by row,
   which works for every AIJ type (host or device) alike */
static PetscErrorCode PinnedCopy(Mat A, PetscInt k, Mat *B)
{
  PetscInt  rstart, rend, cstart, cend, m, n, M, N, *dnz, *onz;
  MatType   type;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  PetscCall(MatGetOwnershipRangeColumn(A, &cstart, &cend));
  PetscCall(MatGetLocalSize(A, &m, &n));
  PetscCall(MatGetSize(A, &M, &N));
  PetscCall(PetscCalloc2(m, &dnz, m, &onz));
  for (PetscInt r = rstart; r < rend; r++) {
    PetscInt        nc;
    const PetscInt *cols;

    PetscCall(MatGetRow(A, r, &nc, &cols, NULL));
    for (PetscInt j = 0; j < nc; j++) {
      if ((r == k || cols[j] == k) && r != cols[j]) continue;
      if (cols[j] >= cstart && cols[j] < cend) dnz[r - rstart]++;
      else onz[r - rstart]++;
    }
    PetscCall(MatRestoreRow(A, r, &nc, &cols, NULL));
  }
  PetscCall(MatGetType(A, &type));
  PetscCall(MatCreate(PetscObjectComm((PetscObject)A), B));
  PetscCall(MatSetSizes(*B, m, n, M, N));
  PetscCall(MatSetType(*B, type));
  PetscCall(MatXAIJSetPreallocation(*B, 1, dnz, onz, NULL, NULL));
  PetscCall(PetscFree2(dnz, onz));
  for (PetscInt r = rstart; r < rend; r++) {
    PetscInt           nc, nk = 0;
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscInt           c[1024];
    PetscScalar        v[1024];

    PetscCall(MatGetRow(A, r, &nc, &cols, &vals));
    for (PetscInt j = 0; j < nc; j++) {
      if ((r == k || cols[j] == k) && r != cols[j]) continue;
      if (nk == (PetscInt)PETSC_STATIC_ARRAY_LENGTH(c)) { /* a long row: in pieces */
        PetscCall(MatSetValues(*B, 1, &r, nk, c, v, INSERT_VALUES));
        nk = 0;
      }
      c[nk]   = cols[j];
      v[nk++] = vals[j];
    }
    PetscCall(MatSetValues(*B, 1, &r, nk, c, v, INSERT_VALUES));
    PetscCall(MatRestoreRow(A, r, &nc, &cols, &vals));
  }
  PetscCall(MatAssemblyBegin(*B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*B, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  PCPatchAMGCoarseOperator - The operator of the coarse solver for the coarsest level's matrix Ac (a real
  AIJ matrix): Ac itself (a new reference), or, when the matrix has a null space and Ac is singular with
  the level's image of it, Ac pinned at the largest entry of that vector, with pa->coarse_nullsp and
  pa->coarse_mask set for PCPatchAMGCoarseSolve(). pa->coarse_z is the image (NULL: the constants).
*/
PetscErrorCode PCPatchAMGCoarseOperator(PC pc, Mat Ac, Mat *Aop)
{
  PC_PatchAMG      *pa = (PC_PatchAMG *)pc->data;
  PC_PatchAMGLevel *L  = &pa->levels[pa->nlevels - 1];
  MPI_Comm          comm;
  Vec               zc, w;
  PetscInt          k, rstart, rend;
  PetscReal         zmax;

  PetscFunctionBegin;
  PetscCall(PetscObjectReference((PetscObject)Ac));
  *Aop                     = Ac;
  pa->coarse_null_residual = -1;
  if (!pa->nullsp) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectGetComm((PetscObject)Ac, &comm));
  PetscCall(VecDuplicate(L->x, &zc));
  PetscCall(VecDuplicate(L->x, &w));
  if (pa->coarse_z) PetscCall(VecCopy(pa->coarse_z, zc));
  else PetscCall(VecSet(zc, 1.0));
  PetscCall(NullResidual(Ac, zc, w, &pa->coarse_null_residual));
  if (pa->coarse_null_residual > PC_PATCHAMG_NULL_TOL) { /* A_c is regular here (a geometric interpolation need not reproduce z) */
    PetscCall(VecDestroy(&zc));
    PetscCall(VecDestroy(&w));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* pin the row where |z_c| is largest: the pinned matrix is the better conditioned the larger z_c(k) */
  PetscCall(VecCopy(zc, w));
  PetscCall(VecAbs(w));
  PetscCall(VecMax(w, &k, &zmax));
  PetscCall(MatDestroy(Aop));
  PetscCall(PinnedCopy(Ac, k, Aop));
  pa->coarse_pin = k;
  PetscCall(VecSet(w, 1.0));
  PetscCall(VecGetOwnershipRange(w, &rstart, &rend));
  if (k >= rstart && k < rend) PetscCall(VecSetValue(w, k, 0.0, INSERT_VALUES));
  PetscCall(VecAssemblyBegin(w));
  PetscCall(VecAssemblyEnd(w));
  pa->coarse_mask = w;
  PetscCall(VecNormalize(zc, NULL));
  PetscCall(MatNullSpaceCreate(comm, PETSC_FALSE, 1, &zc, &pa->coarse_nullsp));
  PetscCall(VecDestroy(&zc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  PCPatchAMGCoarseSolve - x = the coarse solver applied to b (w: work of the coarsest level's layout,
  neither b nor x); on a singular coarsest level the pseudo-inverse: b projected onto the range, its
  pinned entry zeroed, solved, the null vector removed from x
*/
PetscErrorCode PCPatchAMGCoarseSolve(PC_PatchAMG *pa, Vec b, Vec x, Vec w)
{
  PetscFunctionBegin;
  if (!pa->coarse_nullsp) {
    PetscCall(KSPSolve(pa->coarse, b, x));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(VecCopy(b, w));
  PetscCall(MatNullSpaceRemove(pa->coarse_nullsp, w));
  PetscCall(VecPointwiseMult(w, w, pa->coarse_mask));
  PetscCall(KSPSolve(pa->coarse, w, x));
  PetscCall(MatNullSpaceRemove(pa->coarse_nullsp, x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  PCPatchAMGCheckCoarseSolver - One coarse solve of a random vector at setup: a coarse solver that fails
  (a zero pivot in LU: a singular coarse matrix) would otherwise turn every V-cycle into Inf or NaN,
  which the outer KSP reports only as DIVERGED_NANORINF. Errors with what to do instead.
*/
PetscErrorCode PCPatchAMGCheckCoarseSolver(PC pc)
{
  PC_PatchAMG       *pa = (PC_PatchAMG *)pc->data;
  PC_PatchAMGLevel  *L  = &pa->levels[pa->nlevels - 1];
  Vec                b, x, w;
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
  PetscCall(VecDuplicate(L->x, &w));
  PetscCall(PatchworkVecSetHashRandom(b, 0x5eed + 4));
  PetscCall(PCPatchAMGCoarseSolve(pa, b, x, w));
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
  PetscCall(VecDestroy(&w));
  if (!PetscIsInfOrNanReal(nrm) && (reason >= 0 || reason == KSP_DIVERGED_ITS) && !pcr[0]) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompare((PetscObject)cpc, PCREDUNDANT, &redundant)); /* the option of the factorization inside */
  err = pcr[0] == PC_FACTOR_NUMERIC_ZEROPIVOT || pcr[0] == PC_FACTOR_STRUCT_ZEROPIVOT ? PETSC_ERR_MAT_LU_ZRPVT : PETSC_ERR_NOT_CONVERGED;
  PetscCheck(pa->nullsp, PetscObjectComm((PetscObject)pc), err,
             "PCPATCHAMG: the coarse solver of level %" PetscInt_FMT " (%" PetscInt_FMT " rows) fails (%s%s%s): the coarse matrix is singular, so the matrix is singular or nearly so. "
             "If it has a null space (pure Neumann or periodic boundary conditions: the constants), attach it with MatSetNullSpace() and PCPATCHAMG carries it through its levels; otherwise shift the coarse factorization (-pc_patchamg_coarse_%spc_factor_shift_type nonzero)",
             pa->nlevels - 1, L->N, KSPConvergedReasons[reason], pcr[0] ? ", PC: " : "", pcr[0] ? PCFailedReasons[pcr[0]] : "", redundant ? "redundant_" : "");
  SETERRQ(PetscObjectComm((PetscObject)pc), err,
          "PCPATCHAMG: the coarse solver of level %" PetscInt_FMT " (%" PetscInt_FMT " rows) fails (%s%s%s) although the null space attached to the matrix was removed there (||A_c z_c|| = %g max|a_ii| ||z_c||): the matrix is singular beyond that null space. "
          "Attach the whole null space (MatSetNullSpace()), or shift the coarse factorization (-pc_patchamg_coarse_%spc_factor_shift_type nonzero)",
          pa->nlevels - 1, L->N, KSPConvergedReasons[reason], pcr[0] ? ", PC: " : "", pcr[0] ? PCFailedReasons[pcr[0]] : "", (double)pa->coarse_null_residual, redundant ? "redundant_" : "");
}
