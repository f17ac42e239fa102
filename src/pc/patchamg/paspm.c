/* PCPATCHAMG's patchSPM layout (Fu et al. 2014, section 5.2.2): the level matrix split into the
   patch-interior blocks AI, the diagonal AD and the coupling AB between patches, and the dispatch
   of the relaxation kernels to the CPU reference or CUDA by where the vectors live. */
#include "paimpl.h"

/* The split of the rank-local diagonal block of A (off-rank couplings stay in A and reach the
   relaxation through a full residual), in the positions of the graph level G: built where the
   level's vectors live, from the matrix's own CSR there */
PetscErrorCode PCPatchAMGSPMCreate(PC_PatchAMG *pa, Mat A, const PC_PatchAMGGraphLevel *G, PC_PatchAMGSPM *spm)
{
  Mat          Ad;
  PetscBool    mpi, single = (PetscBool)(pa->precision == PATCHWORK_PRECISION_SINGLE);
  PatchworkCSR csr;
  int          nai = 0, nab = 0, err, *pptr;

  PetscFunctionBegin;
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)A, MATMPIAIJ, &mpi));
  if (mpi) PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, NULL, NULL));
  else Ad = A;
  spm->on_device = pa->device;
  if (pa->device) {
#if defined(PATCHWORK_HAVE_CUDA)
    void *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
    PetscCall(PCPatchAMGMatGetDeviceArrays(Ad, &csr));
    err = PatchworkSPMBuildCUDA(&csr, G->npatch, G->patch_ptr, G->order, G->pos, single, &spm->desc, &nai, &nab, stream);
    PetscCall(PCPatchAMGMatRestoreDeviceArrays(Ad, &csr));
    PatchworkCallKernel(err);
#endif
  } else {
    PetscInt           n;
    const PetscInt    *ia, *ja;
    const PetscScalar *va;
    PetscBool          done;
    int               *iai = NULL, *jai = NULL;

    PetscCall(MatGetRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
    PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "PCPATCHAMG could not read the level matrix's rows");
    if (sizeof(PetscInt) != sizeof(int)) { /* the kernel ABI takes int indices */
      PetscCall(PetscMalloc2(n + 1, &iai, ia[n], &jai));
      for (PetscInt i = 0; i <= n; i++) iai[i] = (int)ia[i];
      for (PetscInt j = 0; j < ia[n]; j++) jai[j] = (int)ja[j];
    }
    PetscCall(MatSeqAIJGetArrayRead(Ad, &va));
    csr = (PatchworkCSR){(int)n, iai ? iai : (const int *)ia, jai ? jai : (const int *)ja, (const double *)va};
    err = PatchworkSPMBuildRef(&csr, G->npatch, G->patch_ptr, G->order, G->pos, single, &spm->desc, &nai, &nab);
    PetscCall(MatSeqAIJRestoreArrayRead(Ad, &va));
    PetscCall(PetscFree2(iai, jai));
    PetscCall(MatRestoreRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
    PetscCheck(!err, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCPATCHAMG: the patchSPM split failed (error %d)", err);
  }
  spm->desc.inner       = (int)pa->inner;
  spm->desc.inner_omega = pa->inner_omega;
  spm->desc.omega       = pa->omega > 0 ? pa->omega : 1.0;
  spm->nnz_ai           = nai;
  spm->nnz_ab           = nab;
  spm->has_ab           = (PetscBool)(nab > 0);
  PetscCall(PCPatchAMGGraphToHost(pa->device, G->patch_ptr, G->npatch + 1, &pptr));
  spm->min_patch = G->g.n;
  for (int p = 0; p < G->npatch; p++) spm->min_patch = PetscMin(spm->min_patch, pptr[p + 1] - pptr[p]);
  PetscCall(PetscFree(pptr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCPatchAMGSPMDestroy(PC_PatchAMGSPM *spm)
{
  PetscFunctionBegin;
  if (!spm->desc.patch_ptr) PetscFunctionReturn(PETSC_SUCCESS);
  if (spm->on_device) {
#if defined(PATCHWORK_HAVE_CUDA)
    PatchworkSPMFreeCUDA(&spm->desc);
#endif
  } else PatchworkSPMFreeRef(&spm->desc);
  PetscCall(PetscMemzero(spm, sizeof(*spm)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PatchRelax of amg_kernel.h on the level vectors: x (and r when given) from b */
PetscErrorCode PCPatchAMGSPMRelax(PC_PatchAMG *pa, PC_PatchAMGSPM *spm, Vec b, Vec x, Vec r, PetscBool zero_guess)
{
  PatchworkArrays arr;
  PetscScalar    *rr = NULL;
  PetscMemType    mt;

  PetscFunctionBegin;
  /* x is read and written: get it as the "written" array of a read-write pair */
  PetscCall(PatchworkArraysGet(b, NULL, x, &arr));
  if (r && arr.device) PetscCall(VecGetArrayWriteAndMemType(r, &rr, &mt));
  else if (r) PetscCall(VecGetArrayWrite(r, &rr));
  if (arr.device) {
    void *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
#if defined(PATCHWORK_HAVE_CUDA)
    PatchworkCallKernel(PatchworkSPMPatchRelaxCUDA(&spm->desc, arr.r[0], arr.w, rr, zero_guess, stream));
#endif
  } else PatchworkSPMPatchRelaxRef(&spm->desc, arr.r[0], arr.w, rr, zero_guess);
  {
    PetscLogDouble nai = (PetscLogDouble)spm->nnz_ai, n = spm->desc.n, block = 2 * nai + 2 * n; /* one product with a patch block, and its subtraction */
    PetscLogDouble flops = spm->desc.inner * (block + 2 * n) + 2 * n + (r ? block : 0) + (zero_guess ? 0 : block);

    if (arr.device) PetscCall(PetscLogGpuFlops(flops));
    else PetscCall(PetscLogFlops(flops));
  }
  if (r && arr.device) PetscCall(VecRestoreArrayWriteAndMemType(r, &rr));
  else if (r) PetscCall(VecRestoreArrayWrite(r, &rr));
  PetscCall(PatchworkArraysRestore(&arr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = z - AB x */
PetscErrorCode PCPatchAMGSPMBoundaryResidual(PC_PatchAMG *pa, PC_PatchAMGSPM *spm, Vec x, Vec z, Vec y)
{
  PatchworkArrays arr;

  PetscFunctionBegin;
  PetscCall(PatchworkArraysGet(x, z, y, &arr));
  if (arr.device) {
    void *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
#if defined(PATCHWORK_HAVE_CUDA)
    PatchworkCallKernel(PatchworkSPMBoundaryResidualCUDA(&spm->desc, arr.r[0], arr.r[1], arr.w, stream));
#endif
  } else PatchworkSPMBoundaryResidualRef(&spm->desc, arr.r[0], arr.r[1], arr.w);
  if (arr.device) PetscCall(PetscLogGpuFlops(2.0 * spm->nnz_ab));
  else PetscCall(PetscLogFlops(2.0 * spm->nnz_ab));
  PetscCall(PatchworkArraysRestore(&arr));
  PetscFunctionReturn(PETSC_SUCCESS);
}
