/* PCPATCHAMG on one rank: a level's smoothed prolongator and the next level's Galerkin operator by
   the kernels of amg_kernel.h (PatchworkSAProlong, PatchworkGalerkin: the CPU reference on the
   host, CUDA on the device) instead of PETSc's MatMatMult and MatPtAP, which are general and, on
   the GPU, slow (1.3 s for the Galerkin product alone at 16.8M unknowns). On the device the results
   stay there, as matrices over their device arrays (padevmat.c); on the host they become AIJ
   matrices over their CSR arrays (MatCreateSeqAIJWithArrays), which the levels keep, because such
   matrices do not own them. */
#include "paimpl.h"
#include <patchwork/vec_kernel.h>

#if !defined(PATCHWORK_HAVE_CUDA)
  /* never called without CUDA: pa->device is false then */
  #define PatchworkSAProlongCUDA(...) 1
  #define PatchworkGalerkinCUDA(...)  1
#endif

/*
  PCPatchAMGMatProduct - C = A B (MATPRODUCT_AB) or B^T A B (MATPRODUCT_PtAP) by PETSc, where the
  kernels do not serve (several ranks). The product gets the PC's options prefix and "pc_patchamg_".
  On device matrices PETSc's cuSPARSE SpGEMM asks for work buffers that cuSPARSE refuses from a few
  million rows per rank on (CUSPARSE_STATUS_INSUFFICIENT_RESOURCES; 7.2M unknowns on 2 H200s), so
  there the products default to PETSc's host code (-pc_patchamg_mat_product_algorithm_backend_cpu,
  which -pc_patchamg_mat_product_algorithm_backend_cpu 0 turns off) and the result moves back to the
  device when it is next used there.
*/
PetscErrorCode PCPatchAMGMatProduct(PC pc, MatProductType type, Mat A, Mat B, PetscReal fill, Mat *C)
{
  const char *prefix;
  PetscBool   device;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &device, MATMPIAIJCUSPARSE, MATSEQAIJCUSPARSE, MATAIJCUSPARSE, ""));
  PetscCall(MatProductCreate(A, B, NULL, C));
  PetscCall(MatProductSetType(*C, type));
  PetscCall(MatProductSetAlgorithm(*C, MATPRODUCTALGORITHMDEFAULT));
  PetscCall(MatProductSetFill(*C, fill));
  PetscCall(PCGetOptionsPrefix(pc, &prefix));
  PetscCall(MatSetOptionsPrefix(*C, prefix));
  PetscCall(MatAppendOptionsPrefix(*C, "pc_patchamg_"));
  if (device) {
    char      name[PETSC_MAX_OPTION_NAME];
    PetscBool set;

    PetscCall(PetscSNPrintf(name, sizeof(name), "-%spc_patchamg_mat_product_algorithm_backend_cpu", prefix ? prefix : ""));
    PetscCall(PetscOptionsHasName(NULL, NULL, name, &set));
    if (!set) PetscCall(PetscOptionsSetValue(NULL, name, "1"));
  }
  PetscCall(MatProductSetFromOptions(*C));
  PetscCall(MatProductSymbolic(*C));
  PetscCall(MatProductNumeric(*C));
  PetscCall(MatProductClear(*C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the kernels build level l: one rank, and the kernel ABI's int indices and real doubles */
PetscErrorCode PCPatchAMGUseProductKernels(PC pc, PetscBool *use)
{
  PC_PatchAMG *pa = (PC_PatchAMG *)pc->data;

  PetscFunctionBegin;
  *use = (PetscBool)(pa->serial && PCPatchAMGKernelTypes() && pa->product_kernels);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The level matrix's CSR where the level's vectors live (a sequential one: one rank's level matrix or
   block); restore with PCPatchAMGRestoreCSR */
PetscErrorCode PCPatchAMGGetCSR(PetscBool dev, Mat A, PatchworkCSR *csr)
{
  PetscInt           n;
  const PetscInt    *ia, *ja;
  const PetscScalar *va;
  PetscBool          done;

  PetscFunctionBegin;
  if (dev) {
    PetscCall(PCPatchAMGMatGetDeviceArrays(A, csr));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "PCPATCHAMG could not read the level matrix's rows");
  PetscCall(MatSeqAIJGetArrayRead(A, &va));
  *csr = (PatchworkCSR){(int)n, (const int *)ia, (const int *)ja, (const double *)va};
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCPatchAMGRestoreCSR(PetscBool dev, Mat A, PatchworkCSR *csr)
{
  const PetscInt    *ia = (const PetscInt *)csr->ptr, *ja = (const PetscInt *)csr->col;
  const PetscScalar *va = (const PetscScalar *)csr->val;
  PetscInt           n  = csr->n;
  PetscBool          done;

  PetscFunctionBegin;
  if (dev) {
    PetscCall(PCPatchAMGMatRestoreDeviceArrays(A, csr));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatSeqAIJRestoreArrayRead(A, &va));
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCall(PetscMemzero(csr, sizeof(*csr)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A PETSc matrix of A's type over the host arrays of M, which move to *keep (the caller frees them
   with PatchworkCSRMatrixFree after the matrix is destroyed: such matrices do not own them). Only
   reached with 32-bit PetscInt (PCPatchAMGUseProductKernels), where the int arrays are PetscInt's. */
static PetscErrorCode MatFromCSR(Mat A, PatchworkCSRMatrix *M, PatchworkCSRMatrix *keep, Mat *B)
{
  PetscBool cusparse;

  PetscFunctionBegin;
  *keep = *M;
  PetscCall(PetscMemzero(M, sizeof(*M)));
  PetscCheck(sizeof(PetscInt) == sizeof(int), PETSC_COMM_SELF, PETSC_ERR_PLIB, "The product kernels need 32-bit PetscInt");
  PetscCall(MatCreateSeqAIJWithArrays(PETSC_COMM_SELF, keep->nrow, keep->ncol, (PetscInt *)keep->ptr, (PetscInt *)keep->col, keep->val, B));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &cusparse, MATSEQAIJCUSPARSE, MATAIJCUSPARSE, ""));
  if (cusparse) PetscCall(MatConvert(*B, MATSEQAIJCUSPARSE, MAT_INPLACE_MATRIX, B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* P = (I - diag(s) A) P~ from the aggregates of graph level l by the kernel, A being the CSR of the
   matrix that smooths (on this rank), and *zc, the next level's near-null-space vector (a new vector
   on comm of s's type, this rank's aggregates as its rows); z: the near-null-space vector, NULL for
   constants */
PetscErrorCode PCPatchAMGSmoothedProlongator(PC pc, const PC_PatchAMGGraph *H, PetscInt l, const PatchworkCSR *A, Vec z, Vec s, MPI_Comm comm, PatchworkCSRMatrix *P, Vec *zc)
{
  PC_PatchAMG       *pa  = (PC_PatchAMG *)pc->data;
  PetscBool          dev = pa->device;
  const PetscScalar *sa, *za = NULL;
  PetscScalar       *zca;
  PetscMemType       mt, zcmt;
  VecType            vtype;
  Vec                zl = NULL;
  void              *stream = NULL;
  int                err;

  PetscFunctionBegin;
  PetscCheck(H->dev == dev, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCPATCHAMG: the graph hierarchy and the level vectors live on different sides");
  if (dev) PetscCall(PatchworkGetDeviceStream(&stream));
  if (z) { /* a copy of the level's vector type, so that its array lives where s does */
    PetscCall(VecDuplicate(s, &zl));
    PetscCall(VecCopy(z, zl));
    PetscCall(VecGetArrayReadAndMemType(zl, &za, &mt));
  }
  PetscCall(VecGetArrayReadAndMemType(s, &sa, &mt));
  PetscCheck(PetscMemTypeDevice(mt) == dev, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCPATCHAMG: the level vector is not where the level lives");
  PetscCall(VecGetType(s, &vtype));
  PetscCall(VecCreate(comm, zc));
  PetscCall(VecSetSizes(*zc, H->L[l].naggs, PETSC_DETERMINE));
  PetscCall(VecSetType(*zc, vtype));
  PetscCall(VecGetArrayWriteAndMemType(*zc, &zca, &zcmt));
  PetscCheck(PetscMemTypeDevice(zcmt) == dev, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCPATCHAMG: the coarse near-null-space vector is not where the level lives");
  if (dev) err = PatchworkSAProlongCUDA(A, H->L[l].agg, H->L[l].naggs, (const double *)za, (const double *)sa, P, (double *)zca, stream);
  else err = PatchworkSAProlongRef(A, H->L[l].agg, H->L[l].naggs, (const double *)za, (const double *)sa, P, (double *)zca);
  PetscCheck(!err, PETSC_COMM_SELF, PETSC_ERR_LIB, "PCPATCHAMG: the smoothed prolongator of level %" PetscInt_FMT " failed (error %d)", l, err);
  PetscCall(VecRestoreArrayWriteAndMemType(*zc, &zca));
  PetscCall(VecRestoreArrayReadAndMemType(s, &sa));
  if (zl) PetscCall(VecRestoreArrayReadAndMemType(zl, &za));
  PetscCall(VecDestroy(&zl));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* L->P = (I - diag(s) A) P~ from the aggregates of graph level l (z: the near-null-space vector,
   NULL for constants), C->A = P^T A P, and *zc, the near-null-space vector of C (a new vector of
   s's type) */
PetscErrorCode PCPatchAMGProductKernels(PC pc, const PC_PatchAMGGraph *H, PetscInt l, Vec z, Vec s, PC_PatchAMGLevel *L, PC_PatchAMGLevel *C, Vec *zc)
{
  PC_PatchAMG       *pa  = (PC_PatchAMG *)pc->data;
  PetscBool          dev = pa->device;
  PatchworkCSR       A;
  PatchworkCSRMatrix P = {0}, Ac = {0};
  void              *stream = NULL;
  int                err;

  PetscFunctionBegin;
  if (dev) PetscCall(PatchworkGetDeviceStream(&stream));
  PetscCall(PCPatchAMGGetCSR(dev, L->A, &A));
  PetscCall(PetscLogEventBegin(PATCHWORK_AMGProlong, pc, 0, 0, 0));
  PetscCall(PCPatchAMGSmoothedProlongator(pc, H, l, &A, z, s, PETSC_COMM_SELF, &P, zc));
  /* on the device P stays there, with its transpose for the restriction */
  if (dev) PetscCall(PCPatchAMGMatCreateDevice(&P, PETSC_TRUE, &L->P));
  else PetscCall(MatFromCSR(L->A, &P, &L->P_arrays, &L->P));
  PetscCall(PetscLogEventEnd(PATCHWORK_AMGProlong, pc, 0, 0, 0));

  PetscCall(PetscLogEventBegin(PATCHWORK_AMGGalerkin, pc, 0, 0, 0));
  if (dev) {
    const PatchworkCSRMatrix *Pd;

    PetscCall(PCPatchAMGMatGetDeviceCSR(L->P, &Pd));
    err = PatchworkGalerkinCUDA(&A, Pd, &Ac, stream);
  } else err = PatchworkGalerkinRef(&A, &L->P_arrays, &Ac);
  PetscCheck(!err, PETSC_COMM_SELF, PETSC_ERR_LIB, "PCPATCHAMG: the Galerkin product of level %" PetscInt_FMT " failed (error %d)", l, err);
  PetscCall(PCPatchAMGRestoreCSR(dev, L->A, &A));
  /* the transfers in the relaxation's precision once the product no longer needs P's doubles */
  if (dev && pa->precision == PATCHWORK_PRECISION_SINGLE) PetscCall(PCPatchAMGMatDeviceSetSingle(L->P));
  if (dev) PetscCall(PCPatchAMGMatCreateDevice(&Ac, PETSC_FALSE, &C->A));
  else PetscCall(MatFromCSR(L->A, &Ac, &C->A_arrays, &C->A));
  PetscCall(PetscLogEventEnd(PATCHWORK_AMGGalerkin, pc, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}
