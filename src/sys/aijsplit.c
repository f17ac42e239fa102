/* Parallel AIJ matrices built from their two blocks' rows (PCPATCHAMG's coarse levels and prolongators on
   several ranks, PCLOR's matrix on several ranks) */
#include "pwimpl.h"

/*
  PatchworkMatAIJSetSplitRows - The pattern and values of B (sizes and type set, MPIAIJ or a subclass, not
  yet preallocated) from this rank's rows split as PETSc keeps them: the diagonal block (columns local to the rank's nloc columns, ascending in
  each row) and the rest (global columns, ascending); values NULL: zeros. Both are copied in whole into
  the blocks (no insertion row by row, unlike MatMPIAIJSetPreallocationCSR()), and the assembly then
  compresses the off-diagonal columns without moving an entry: entry e of a row's off-diagonal part
  stays at position optr[i] + e of the block's value array.
*/
PetscErrorCode PatchworkMatAIJSetSplitRows(Mat B, const PetscInt dptr[], PetscInt dcol[], const PetscScalar dval[], const PetscInt optr[], PetscInt ocol[], const PetscScalar oval[])
{
  PetscInt    *dnnz, *onnz, m;
  Mat          Ad, Ao;
  PetscScalar *a;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PATCHWORK_MatSplitRows, B, 0, 0, 0));
  PetscCall(MatGetLocalSize(B, &m, NULL));
  PetscCall(PetscMalloc2(PetscMax(m, 1), &dnnz, PetscMax(m, 1), &onnz));
  for (PetscInt i = 0; i < m; i++) {
    dnnz[i] = dptr[i + 1] - dptr[i];
    onnz[i] = optr[i + 1] - optr[i];
  }
  PetscCall(MatMPIAIJSetPreallocation(B, 0, dnnz, 0, onnz));
  PetscCall(PetscFree2(dnnz, onnz));
  PetscCall(MatMPIAIJGetSeqAIJ(B, &Ad, &Ao, NULL));
  if (dptr[m]) PetscCall(MatSeqAIJSetColumnIndices(Ad, dcol));
  if (optr[m]) PetscCall(MatSeqAIJSetColumnIndices(Ao, ocol));
  PetscCall(MatSeqAIJGetArrayWrite(Ad, &a));
  if (dval) PetscCall(PetscArraycpy(a, dval, dptr[m]));
  else PetscCall(PetscArrayzero(a, dptr[m]));
  PetscCall(MatSeqAIJRestoreArrayWrite(Ad, &a));
  PetscCall(MatSeqAIJGetArrayWrite(Ao, &a));
  if (oval) PetscCall(PetscArraycpy(a, oval, optr[m]));
  else PetscCall(PetscArrayzero(a, optr[m]));
  PetscCall(MatSeqAIJRestoreArrayWrite(Ao, &a));
  PetscCall(MatSetOption(B, MAT_NO_OFF_PROC_ENTRIES, PETSC_TRUE));
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatSetOption(B, MAT_NEW_NONZERO_LOCATION_ERR, PETSC_TRUE));
  PetscCall(PetscLogEventEnd(PATCHWORK_MatSplitRows, B, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The same, B a new matrix of type with m rows and nloc columns on this rank */
PetscErrorCode PatchworkMatCreateAIJSplit(MPI_Comm comm, MatType type, PetscInt m, PetscInt nloc, const PetscInt dptr[], PetscInt dcol[], const PetscScalar dval[], const PetscInt optr[], PetscInt ocol[], const PetscScalar oval[], Mat *B)
{
  PetscFunctionBegin;
  PetscCall(MatCreate(comm, B));
  PetscCall(MatSetSizes(*B, m, nloc, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatSetType(*B, type));
  PetscCall(PatchworkMatAIJSetSplitRows(*B, dptr, dcol, dval, optr, ocol, oval));
  PetscFunctionReturn(PETSC_SUCCESS);
}
