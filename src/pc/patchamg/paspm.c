/* PCPATCHAMG's patchSPM layout (Fu et al. 2014, section 5.2.2): the level matrix split into the
   patch-interior blocks AI, the diagonal AD and the coupling AB between patches, and the dispatch
   of the relaxation kernels to the CPU reference or CUDA by where the vectors live. */
#include "paimpl.h"
#include <patchwork/vec_kernel.h>

/* Copies n elements of size bytes to new device memory (*d), or NULL when n is 0 */
static PetscErrorCode ToDevice(const void *h, size_t bytes, void *stream, const void **d)
{
  PetscFunctionBegin;
  *d = NULL;
#if defined(PATCHWORK_HAVE_CUDA)
  {
    void *p;

    PatchworkCallKernel(PatchworkDeviceMalloc(bytes ? bytes : 1, &p));
    if (bytes) PatchworkCallKernel(PatchworkDeviceCopyToDevice(p, h, bytes, stream));
    *d = p;
  }
#else
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "Device vectors, but Patchwork was built without CUDA: rebuild it against a PETSc configured with CUDA");
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The split of the rank-local diagonal block of A (rows in patch order; off-rank couplings stay in
   A and reach the relaxation through a full residual) */
PetscErrorCode PCPatchAMGSPMCreate(PC_PatchAMG *pa, Mat A, const int patch_ptr[], PetscInt npatch, PC_PatchAMGSPM *spm)
{
  Mat                Ad;
  PetscBool          mpi, done, single = (PetscBool)(pa->precision == PATCHWORK_PRECISION_SINGLE);
  PetscInt           n;
  const PetscInt    *ia, *ja;
  const PetscScalar *va;
  int               *pptr, *aip, *aic, *abp, *abc;
  size_t             vsize = single ? sizeof(float) : sizeof(double);
  char              *aiv, *abv, *dg;
  PatchworkSPMDesc  *d = &spm->host;

  PetscFunctionBegin;
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)A, MATMPIAIJ, &mpi));
  if (mpi) PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, NULL, NULL));
  else Ad = A;
  PetscCall(MatGetRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "PCPATCHAMG could not read the level matrix's rows");
  PetscCheck(patch_ptr[npatch] == n, PETSC_COMM_SELF, PETSC_ERR_PLIB, "patches cover %d of %" PetscInt_FMT " rows", patch_ptr[npatch], n);
  PetscCall(MatSeqAIJGetArrayRead(Ad, &va));
  PetscCall(PetscMalloc5(npatch + 1, &pptr, n + 1, &aip, n + 1, &abp, ia[n], &aic, ia[n], &abc));
  PetscCall(PetscMalloc3(ia[n] * vsize, &aiv, ia[n] * vsize, &abv, PetscMax(n, 1) * vsize, &dg));
  d->max_patch = 0;
  spm->min_patch = n;
  aip[0] = abp[0] = 0;
  for (PetscInt p = 0; p < npatch; p++) {
    PetscInt ps = patch_ptr[p], pe = patch_ptr[p + 1];

    pptr[p]        = (int)ps;
    d->max_patch   = PetscMax(d->max_patch, (int)(pe - ps));
    spm->min_patch = PetscMin(spm->min_patch, pe - ps);
    for (PetscInt i = ps; i < pe; i++) {
      PetscReal aii = 0;
      int       nai = aip[i], nab = abp[i];

      for (PetscInt j = ia[i]; j < ia[i + 1]; j++) {
        PetscInt  c = ja[j];
        PetscReal v = PetscRealPart(va[j]);

        if (c == i) aii += v;
        else if (c >= ps && c < pe) {
          aic[nai] = (int)(c - ps);
          if (single) ((float *)aiv)[nai] = (float)v;
          else ((double *)aiv)[nai] = v;
          nai++;
        } else {
          abc[nab] = (int)c;
          if (single) ((float *)abv)[nab] = (float)v;
          else ((double *)abv)[nab] = v;
          nab++;
        }
      }
      PetscCheck(aii > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "PCPATCHAMG: level row %" PetscInt_FMT " has diagonal %g; the matrix is not positive definite", i, (double)aii);
      if (single) ((float *)dg)[i] = (float)aii;
      else ((double *)dg)[i] = aii;
      aip[i + 1] = nai;
      abp[i + 1] = nab;
    }
  }
  pptr[npatch] = (int)n;
  PetscCall(MatSeqAIJRestoreArrayRead(Ad, &va));
  {
    PetscInt nr = n; /* the restore may reset its argument */

    PetscCall(MatRestoreRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &nr, &ia, &ja, &done));
  }

  d->n           = (int)n;
  d->npatch      = (int)npatch;
  d->patch_ptr   = pptr;
  d->ai_ptr      = aip;
  d->ai_col      = aic;
  d->ab_ptr      = abp;
  d->ab_col      = abc;
  d->single      = single;
  d->ai_val      = aiv;
  d->ab_val      = abv;
  d->diag        = dg;
  d->inner       = (int)pa->inner;
  d->inner_omega = pa->inner_omega;
  d->omega       = pa->omega > 0 ? pa->omega : 1.0;
  spm->nnz_ai    = aip[n];
  spm->nnz_ab    = abp[n];
  spm->has_ab    = (PetscBool)(abp[n] > 0);
  if (pa->device) {
    void *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
    spm->dev = *d;
    PetscCall(ToDevice(pptr, (npatch + 1) * sizeof(int), stream, (const void **)&spm->dev.patch_ptr));
    PetscCall(ToDevice(aip, (n + 1) * sizeof(int), stream, (const void **)&spm->dev.ai_ptr));
    PetscCall(ToDevice(aic, aip[n] * sizeof(int), stream, (const void **)&spm->dev.ai_col));
    PetscCall(ToDevice(abp, (n + 1) * sizeof(int), stream, (const void **)&spm->dev.ab_ptr));
    PetscCall(ToDevice(abc, abp[n] * sizeof(int), stream, (const void **)&spm->dev.ab_col));
    PetscCall(ToDevice(aiv, aip[n] * vsize, stream, &spm->dev.ai_val));
    PetscCall(ToDevice(abv, abp[n] * vsize, stream, &spm->dev.ab_val));
    PetscCall(ToDevice(dg, n * vsize, stream, &spm->dev.diag));
    PetscCall(PatchworkDeviceSynchronize()); /* the host arrays may be reused */
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCPatchAMGSPMDestroy(PC_PatchAMGSPM *spm, PetscBool device)
{
  PatchworkSPMDesc *d = &spm->host;

  PetscFunctionBegin;
  if (!d->patch_ptr) PetscFunctionReturn(PETSC_SUCCESS);
#if defined(PATCHWORK_HAVE_CUDA)
  if (device) {
    const void *p[] = {spm->dev.patch_ptr, spm->dev.ai_ptr, spm->dev.ai_col, spm->dev.ab_ptr, spm->dev.ab_col, spm->dev.ai_val, spm->dev.ab_val, spm->dev.diag};

    for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
      if (p[i]) PatchworkCallKernel(PatchworkDeviceFree((void *)p[i]));
  }
#endif
  PetscCall(PetscFree5(d->patch_ptr, d->ai_ptr, d->ab_ptr, d->ai_col, d->ab_col));
  PetscCall(PetscFree3(d->ai_val, d->ab_val, d->diag));
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
    PatchworkCallKernel(PatchworkSPMPatchRelaxCUDA(&spm->dev, arr.r[0], arr.w, rr, zero_guess, stream));
#endif
  } else PatchworkSPMPatchRelaxRef(&spm->host, arr.r[0], arr.w, rr, zero_guess);
  {
    PetscLogDouble nai = (PetscLogDouble)spm->nnz_ai, n = spm->host.n, block = 2 * nai + 2 * n; /* one product with a patch block, and its subtraction */
    PetscLogDouble flops = spm->host.inner * (block + 2 * n) + 2 * n + (r ? block : 0) + (zero_guess ? 0 : block);

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
    PatchworkCallKernel(PatchworkSPMBoundaryResidualCUDA(&spm->dev, arr.r[0], arr.r[1], arr.w, stream));
#endif
  } else PatchworkSPMBoundaryResidualRef(&spm->host, arr.r[0], arr.r[1], arr.w);
  if (arr.device) PetscCall(PetscLogGpuFlops(2.0 * spm->nnz_ab));
  else PetscCall(PetscLogFlops(2.0 * spm->nnz_ab));
  PetscCall(PatchworkArraysRestore(&arr));
  PetscFunctionReturn(PETSC_SUCCESS);
}
