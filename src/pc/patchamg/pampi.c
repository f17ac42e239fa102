/* PCPATCHAMG on several ranks: a level's smoothed prolongator and the next level's Galerkin operator by
   the product kernels of amg_kernel.h on each rank's block (on the GPU where the level is), instead of
   PETSc's MatMatMult and MatPtAP on the whole parallel matrices (5.4 s on the host at 7.2M unknowns on
   two ranks; PETSc's cuSPARSE products run out of work memory there).

   The aggregates stay on their rank, and the prolongator is smoothed with the rank's block of A, the
   couplings to other ranks lumped into its diagonal (A z - A_d z, divided by z, so that the filtered
   block maps the near-null-space vector z as A does): P = (I - diag(s) A_f) P~ is then block
   diagonal, each rank's rows and columns its own, and applying it needs no exchange. The Galerkin
   operator is P^T A P exactly: its diagonal block P_r^T A_d P_r by the kernel, its off-diagonal block
   P_r^T A_o P_g (P_g: the neighbours' rows of P for this rank's ghost columns) by PETSc on the host,
   where only the rows next to other ranks take part. */
#include "paimpl.h"
#include "padevmat.h"

#if !defined(PATCHWORK_HAVE_CUDA)
  /* never called without CUDA: pa->device is false then */
  #define PatchworkGalerkinCUDA(...) 1
  #define PatchworkCSRMatrixFreeCUDA(M) ((void)(M))
#endif

/* Whether level l of a several-rank hierarchy gets its products from the kernels: the whole products
   (padist.c; -pc_patchamg_product_kernels) or each rank's block (-pc_patchamg_block_products: the block
   prolongator costs iterations, 13 -> 18 on the 7-point Laplacian on 96^3 points on 2 ranks), the
   kernels' int indices and doubles, an MPIAIJ level matrix, and a next level whose rows are this rank's aggregates (a level
   gathered onto fewer ranks has prolongator columns on other ranks: PETSc's products) */
PetscErrorCode PCPatchAMGUseProductKernelsMPI(PC pc, Mat A, PetscInt naggs, PetscInt ncol, PetscBool *use)
{
  PC_PatchAMG *pa = (PC_PatchAMG *)pc->data;
  PetscBool    mpiaij;

  PetscFunctionBegin;
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)A, MATMPIAIJ, &mpiaij));
  *use = (PetscBool)(!pa->serial && (pa->product_kernels || pa->block_products) && PCPatchAMGKernelTypes() && mpiaij && ncol == naggs);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* lump = (A z - A_d z) / z on this rank's rows (z: NULL for constants), a sequential vector of s's kind */
static PetscErrorCode OffRankLump(Mat A, Mat Ad, Vec z, Vec s, Vec *lump)
{
  Vec zz, az, zl, al, dl;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(s, &zz));
  if (z) PetscCall(VecCopy(z, zz));
  else PetscCall(VecSet(zz, 1.0));
  PetscCall(VecDuplicate(s, &az));
  PetscCall(MatMult(A, zz, az));
  PetscCall(VecCreateLocalVector(zz, &zl));
  PetscCall(VecCreateLocalVector(az, &al));
  PetscCall(VecDuplicate(zl, &dl));
  PetscCall(VecDuplicate(zl, lump));
  PetscCall(VecGetLocalVectorRead(zz, zl));
  PetscCall(VecGetLocalVectorRead(az, al));
  PetscCall(MatMult(Ad, zl, dl));
  PetscCall(VecWAXPY(*lump, -1.0, dl, al));
  PetscCall(VecPointwiseDivide(*lump, *lump, zl)); /* PETSc's divide leaves entries with z = 0 at 0 */
  PetscCall(VecRestoreLocalVectorRead(az, al));
  PetscCall(VecRestoreLocalVectorRead(zz, zl));
  PetscCall(VecDestroy(&dl));
  PetscCall(VecDestroy(&al));
  PetscCall(VecDestroy(&zl));
  PetscCall(VecDestroy(&az));
  PetscCall(VecDestroy(&zz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* M on the host: M itself (host arrays, dev false) or a copy to free (device arrays) */
static PetscErrorCode HostCSR(PetscBool dev, const PatchworkCSRMatrix *M, PatchworkCSRMatrix *h)
{
  PetscFunctionBegin;
  if (dev) PetscCall(PCPatchAMGCSRToHost(M, h));
  else *h = *M;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The rows of P (host CSR, local columns) that the ranks next to this one need, and that the
   off-diagonal block reaches: those whose row of A_o has entries; as an AIJ matrix on comm with the
   other rows empty and global columns (Pb), and as a sequential one with local columns (Pbl) */
static PetscErrorCode BoundaryRows(MPI_Comm comm, const PatchworkCSRMatrix *P, Mat Ao, PetscInt cstart, Mat *Pb, Mat *Pbl)
{
  const PetscInt *oi, *oj;
  PetscInt        n, *ia, *ja, *jl, nnz = 0;
  PetscScalar    *va;
  PetscBool       done;

  PetscFunctionBegin;
  PetscCall(MatGetRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &n, &oi, &oj, &done));
  PetscCheck(done && n == P->nrow, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCPATCHAMG: the off-diagonal block's rows do not match the prolongator's");
  for (PetscInt i = 0; i < n; i++)
    if (oi[i + 1] > oi[i]) nnz += P->ptr[i + 1] - P->ptr[i];
  PetscCall(PetscMalloc4(n + 1, &ia, nnz, &ja, nnz, &jl, nnz, &va));
  ia[0] = 0;
  for (PetscInt i = 0; i < n; i++) {
    ia[i + 1] = ia[i];
    if (oi[i + 1] == oi[i]) continue;
    for (int k = P->ptr[i]; k < P->ptr[i + 1]; k++) {
      jl[ia[i + 1]]   = P->col[k];
      ja[ia[i + 1]]   = P->col[k] + cstart;
      va[ia[i + 1]++] = P->val[k];
    }
  }
  PetscCall(MatRestoreRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &n, &oi, &oj, &done));
  PetscCall(PCPatchAMGMatCreateFromCSR(comm, MATAIJ, P->nrow, P->ncol, ia, ja, va, Pb));
  PetscCall(PCPatchAMGMatCreateFromCSR(PETSC_COMM_SELF, MATSEQAIJ, P->nrow, P->ncol, ia, jl, va, Pbl));
  PetscCall(PetscFree4(ia, ja, jl, va));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A_o as a matrix on comm with global columns (the couplings of this rank's rows to other ranks) */
static PetscErrorCode OffRankPart(MPI_Comm comm, Mat A, Mat Ao, const PetscInt garray[], Mat *Aoff)
{
  const PetscInt    *oi, *oj;
  const PetscScalar *ov;
  PetscInt           n, nl, *ja;
  PetscBool          done;

  PetscFunctionBegin;
  PetscCall(MatGetLocalSize(A, NULL, &nl));
  PetscCall(MatGetRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &n, &oi, &oj, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCPATCHAMG could not read the off-diagonal block's rows");
  PetscCall(MatSeqAIJGetArrayRead(Ao, &ov));
  PetscCall(PetscMalloc1(oi[n], &ja));
  for (PetscInt k = 0; k < oi[n]; k++) ja[k] = garray[oj[k]];
  PetscCall(PCPatchAMGMatCreateFromCSR(comm, MATAIJ, n, nl, oi, ja, ov, Aoff));
  PetscCall(PetscFree(ja));
  PetscCall(MatSeqAIJRestoreArrayRead(Ao, &ov));
  PetscCall(MatRestoreRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &n, &oi, &oj, &done));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Co = P_r^T A_o P_g: this rank's coarse rows' couplings to other ranks' coarse columns (global); PETSc's
   product of the off-rank part of A with the boundary rows of P fetches the neighbours' rows P_g */
static PetscErrorCode OffDiagonalBlock(MPI_Comm comm, const PatchworkCSRMatrix *Ph, Mat A, Mat Ao, const PetscInt garray[], PetscInt cstart, Mat *Co)
{
  Mat Pb, Pbl, Aoff, T, Tl;

  PetscFunctionBegin;
  PetscCall(BoundaryRows(comm, Ph, Ao, cstart, &Pb, &Pbl));
  PetscCall(OffRankPart(comm, A, Ao, garray, &Aoff));
  PetscCall(MatMatMult(Aoff, Pb, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &T));
  PetscCall(MatMPIAIJGetLocalMat(T, MAT_INITIAL_MATRIX, &Tl)); /* this rank's rows, global columns */
  PetscCall(MatTransposeMatMult(Pbl, Tl, MAT_INITIAL_MATRIX, PETSC_DEFAULT, Co));
  PetscCall(MatDestroy(&Tl));
  PetscCall(MatDestroy(&T));
  PetscCall(MatDestroy(&Aoff));
  PetscCall(MatDestroy(&Pbl));
  PetscCall(MatDestroy(&Pb));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The next level's matrix on comm, of A's type: rows of the diagonal block Ach (host CSR, local columns)
   and of Co (global columns), this rank's coarse rows */
static PetscErrorCode CoarseMatrix(MPI_Comm comm, Mat A, const PatchworkCSRMatrix *Ach, Mat Co, PetscInt cstart, Mat *Ac)
{
  const PetscInt    *ci, *cj;
  const PetscScalar *cv;
  PetscInt           n = Ach->nrow, m, *ia, *ja, nnz;
  PetscScalar       *va;
  PetscBool          done;
  MatType            type;

  PetscFunctionBegin;
  PetscCall(MatGetRowIJ(Co, 0, PETSC_FALSE, PETSC_FALSE, &m, &ci, &cj, &done));
  PetscCheck(done && m == n, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCPATCHAMG: the Galerkin operator's blocks do not match");
  PetscCall(MatSeqAIJGetArrayRead(Co, &cv));
  nnz = Ach->nnz + ci[n];
  PetscCall(PetscMalloc3(n + 1, &ia, nnz, &ja, nnz, &va));
  ia[0] = 0;
  for (PetscInt i = 0; i < n; i++) {
    ia[i + 1] = ia[i];
    for (int k = Ach->ptr[i]; k < Ach->ptr[i + 1]; k++) {
      ja[ia[i + 1]]   = Ach->col[k] + cstart;
      va[ia[i + 1]++] = Ach->val[k];
    }
    for (PetscInt k = ci[i]; k < ci[i + 1]; k++) {
      ja[ia[i + 1]]   = cj[k];
      va[ia[i + 1]++] = cv[k];
    }
  }
  PetscCall(MatSeqAIJRestoreArrayRead(Co, &cv));
  PetscCall(MatRestoreRowIJ(Co, 0, PETSC_FALSE, PETSC_FALSE, &m, &ci, &cj, &done));
  PetscCall(MatGetType(A, &type));
  PetscCall(PCPatchAMGMatCreateFromCSR(comm, type, n, n, ia, ja, va, Ac));
  PetscCall(PetscFree3(ia, ja, va));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -pc_patchamg_check on the host: C->A against PETSc's P^T A P for the same P, to rounding */
static PetscErrorCode CheckGalerkin(PC pc, PC_PatchAMGLevel *L, PC_PatchAMGLevel *C, PetscInt l)
{
  Mat       PtAP;
  PetscReal diff, ref;

  PetscFunctionBegin;
  PetscCall(MatPtAP(L->A, L->P, MAT_INITIAL_MATRIX, 2.0, &PtAP));
  PetscCall(MatNorm(PtAP, NORM_FROBENIUS, &ref));
  PetscCall(MatAXPY(PtAP, -1.0, C->A, DIFFERENT_NONZERO_PATTERN));
  PetscCall(MatNorm(PtAP, NORM_FROBENIUS, &diff));
  PetscCall(MatDestroy(&PtAP));
  PetscCall(PetscInfo(pc, "Level %" PetscInt_FMT ": Galerkin operator from the blocks against PETSc's PtAP: %g relative\n", l, (double)(diff / ref)));
  PetscCheck(diff <= 1e-12 * ref, PetscObjectComm((PetscObject)pc), PETSC_ERR_PLIB, "PCPATCHAMG: the Galerkin operator of level %" PetscInt_FMT " from the ranks' blocks differs from P^T A P by %g (relative)", l + 1, (double)(diff / ref));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* L->P and C->A (above) for graph level l; z: the near-null-space vector (NULL: constants), s: the
   smoothing's scaling (omega / rho(D^-1 A) D^-1), *zc: the next level's near-null-space vector */
PetscErrorCode PCPatchAMGProductKernelsMPI(PC pc, const PC_PatchAMGGraph *H, PetscInt l, Vec z, Vec s, PC_PatchAMGLevel *L, PC_PatchAMGLevel *C, Vec *zc)
{
  PC_PatchAMG        *pa   = (PC_PatchAMG *)pc->data;
  PetscBool           dev  = pa->device;
  MPI_Comm            comm = PetscObjectComm((PetscObject)L->A);
  PetscInt            nc   = H->L[l].naggs, cstart = 0;
  Mat                 Ad, Ao, Af, Co;
  const PetscInt     *garray;
  Vec                 lump;
  PatchworkCSR        Afc, Adc;
  PatchworkCSRMatrix  P = {0}, Ac = {0}, Ph, Ach;
  void               *stream = NULL;
  int                 err;

  PetscFunctionBegin;
  if (!pa->block_products) { /* the whole product, as one rank would make it (padist.c) */
    PetscCall(PCPatchAMGProductsDistributed(pc, H, l, z, s, L, C, zc));
    if (!dev && pa->check) PetscCall(CheckGalerkin(pc, L, C, l));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (dev) PetscCall(PatchworkGetDeviceStream(&stream));
  PetscCallMPI(MPI_Scan(&nc, &cstart, 1, MPIU_INT, MPI_SUM, comm));
  cstart -= nc;
  PetscCall(MatMPIAIJGetSeqAIJ(L->A, &Ad, &Ao, &garray));

  PetscCall(PetscLogEventBegin(PATCHWORK_AMGProlong, pc, 0, 0, 0));
  /* the smoothing block: A_d with the couplings to other ranks lumped into its diagonal */
  PetscCall(OffRankLump(L->A, Ad, z, s, &lump));
  PetscCall(MatDuplicate(Ad, MAT_COPY_VALUES, &Af));
  PetscCall(MatDiagonalSet(Af, lump, ADD_VALUES));
  PetscCall(VecDestroy(&lump));
  PetscCall(PCPatchAMGGetCSR(dev, Af, &Afc));
  PetscCall(PCPatchAMGSmoothedProlongator(pc, H, l, &Afc, z, s, comm, &P, zc));
  PetscCall(PCPatchAMGRestoreCSR(dev, Af, &Afc));
  PetscCall(MatDestroy(&Af));
  PetscCall(PetscLogEventEnd(PATCHWORK_AMGProlong, pc, 0, 0, 0));

  PetscCall(PetscLogEventBegin(PATCHWORK_AMGGalerkin, pc, 0, 0, 0));
  PetscCall(PCPatchAMGGetCSR(dev, Ad, &Adc));
  if (dev) err = PatchworkGalerkinCUDA(&Adc, &P, &Ac, stream);
  else err = PatchworkGalerkinRef(&Adc, &P, &Ac);
  PetscCheck(!err, PETSC_COMM_SELF, PETSC_ERR_LIB, "PCPATCHAMG: the Galerkin product of level %" PetscInt_FMT " failed (error %d)", l, err);
  PetscCall(PCPatchAMGRestoreCSR(dev, Ad, &Adc));
  PetscCall(HostCSR(dev, &P, &Ph));
  PetscCall(HostCSR(dev, &Ac, &Ach));
  PetscCall(OffDiagonalBlock(comm, &Ph, L->A, Ao, garray, cstart, &Co));
  PetscCall(CoarseMatrix(comm, L->A, &Ach, Co, cstart, &C->A));
  PetscCall(MatDestroy(&Co));
  PetscCall(PetscLogEventEnd(PATCHWORK_AMGGalerkin, pc, 0, 0, 0));

  /* the prolongator: block diagonal, applied on each rank's local parts */
  if (dev) {
    PetscCall(PCPatchAMGMatCreateDeviceOn(comm, &P, PETSC_TRUE, &L->P));
    PatchworkCSRMatrixFree(&Ph);
    PatchworkCSRMatrixFree(&Ach);
    PatchworkCSRMatrixFreeCUDA(&Ac);
  } else {
    PetscInt *ja;

    PetscCall(PetscMalloc1(Ph.nnz, &ja));
    for (int k = 0; k < Ph.nnz; k++) ja[k] = Ph.col[k] + cstart;
    PetscCall(PCPatchAMGMatCreateFromCSR(comm, MATAIJ, Ph.nrow, nc, (const PetscInt *)Ph.ptr, ja, Ph.val, &L->P));
    PetscCall(PetscFree(ja));
    PatchworkCSRMatrixFree(&P);
    PatchworkCSRMatrixFree(&Ac);
    if (pa->check) PetscCall(CheckGalerkin(pc, L, C, l));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
