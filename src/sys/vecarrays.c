/* Raw arrays of the vectors a kernel reads and writes, all on one side: the device when every
   vector lives there, else the host (PETSc copies what it must). Kernels are chosen by this side. */
#include "pwimpl.h"
#include <patchwork/vec_kernel.h>

static PetscErrorCode ArraysGet(Vec r0, Vec r1, Vec w, PetscBool overwrite, PatchworkArrays *a)
{
  const Vec    in[2] = {r0, r1};
  PetscMemType mt;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(a, sizeof(*a)));
  PetscCheck(!overwrite || (r0 != w && r1 != w), PETSC_COMM_SELF, PETSC_ERR_ARG_IDN, "A vector overwritten by a kernel cannot also be its input");
  a->vw        = w;
  a->overwrite = overwrite;
  for (int i = 0; i < 2; i++) a->vr[i] = in[i] == w ? NULL : in[i]; /* a vector both read and written is got once */
  a->device = PETSC_TRUE;
  if (overwrite) PetscCall(VecGetArrayWriteAndMemType(w, &a->w, &mt));
  else PetscCall(VecGetArrayAndMemType(w, &a->w, &mt));
  if (!PetscMemTypeDevice(mt)) a->device = PETSC_FALSE;
  for (int i = 0; i < 2; i++) {
    if (!a->vr[i]) continue;
    PetscCall(VecGetArrayReadAndMemType(a->vr[i], &a->r[i], &mt));
    if (!PetscMemTypeDevice(mt)) a->device = PETSC_FALSE;
  }
  if (!a->device) { /* host, or vectors on both sides: take host arrays of all */
    if (overwrite) {
      PetscCall(VecRestoreArrayWriteAndMemType(w, &a->w));
      PetscCall(VecGetArrayWrite(w, &a->w));
    } else {
      PetscCall(VecRestoreArrayAndMemType(w, &a->w));
      PetscCall(VecGetArray(w, &a->w));
    }
    for (int i = 0; i < 2; i++) {
      if (!a->vr[i]) continue;
      PetscCall(VecRestoreArrayReadAndMemType(a->vr[i], &a->r[i]));
      PetscCall(VecGetArrayRead(a->vr[i], &a->r[i]));
    }
  }
  for (int i = 0; i < 2; i++)
    if (in[i] == w) a->r[i] = a->w;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PatchworkArraysGet(Vec r0, Vec r1, Vec w, PatchworkArrays *a)
{
  PetscFunctionBegin;
  PetscCall(ArraysGet(r0, r1, w, PETSC_FALSE, a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PatchworkArraysGetOverwrite(Vec r0, Vec r1, Vec w, PatchworkArrays *a)
{
  PetscFunctionBegin;
  PetscCall(ArraysGet(r0, r1, w, PETSC_TRUE, a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PatchworkArraysRestore(PatchworkArrays *a)
{
  PetscFunctionBegin;
  for (int i = 0; i < 2; i++) {
    if (!a->vr[i]) continue;
    if (a->device) PetscCall(VecRestoreArrayReadAndMemType(a->vr[i], &a->r[i]));
    else PetscCall(VecRestoreArrayRead(a->vr[i], &a->r[i]));
  }
  if (a->overwrite) {
    if (a->device) PetscCall(VecRestoreArrayWriteAndMemType(a->vw, &a->w));
    else PetscCall(VecRestoreArrayWrite(a->vw, &a->w));
  } else {
    if (a->device) PetscCall(VecRestoreArrayAndMemType(a->vw, &a->w));
    else PetscCall(VecRestoreArray(a->vw, &a->w));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the vectors of a matrix's type live on the device. Asked of a one-entry vector of that
   type, not of a full-size one (5.8 GB at 721M DoF). */
PetscErrorCode PatchworkMatVectorsOnDevice(Mat A, PetscBool *device)
{
  Vec          v;
  VecType      vtype;
  PetscScalar *a;
  PetscMemType mt;

  PetscFunctionBegin;
  PetscCall(MatGetVecType(A, &vtype));
  PetscCall(VecCreate(PETSC_COMM_SELF, &v));
  PetscCall(VecSetSizes(v, 1, 1));
  PetscCall(VecSetType(v, vtype));
  PetscCall(VecGetArrayAndMemType(v, &a, &mt));
  *device = PetscMemTypeDevice(mt) ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(VecRestoreArrayAndMemType(v, &a));
  PetscCall(VecDestroy(&v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* v = pseudo-random entries in [-1, 1) from a hash of (seed, global index), filled where v lives: the
   same vector on the host and the device for any distribution, and no host generator and copy
   (PetscRandom and VecSetRandom took 0.74 s of a 2.7 s setup at 16.8M unknowns on the GPU) */
PetscErrorCode PatchworkVecSetHashRandom(Vec v, unsigned seed)
{
  PetscScalar *a;
  PetscMemType mt;
  PetscInt     n, first;

  PetscFunctionBegin;
  PetscCheck(!PetscDefined(USE_COMPLEX) && sizeof(PetscScalar) == sizeof(double), PetscObjectComm((PetscObject)v), PETSC_ERR_SUP, "PatchworkVecSetHashRandom needs real double vectors");
  PetscCall(VecGetLocalSize(v, &n));
  PetscCall(VecGetOwnershipRange(v, &first, NULL));
  PetscCall(VecGetArrayWriteAndMemType(v, &a, &mt));
  if (PetscMemTypeDevice(mt)) {
#if defined(PATCHWORK_HAVE_CUDA)
    void *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
    PatchworkCallKernel(PatchworkVecHashFillCUDA(n, first, seed, (double *)a, stream));
#endif
  } else PatchworkVecHashFillRef(n, first, seed, (double *)a);
  PetscCall(VecRestoreArrayWriteAndMemType(v, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}
