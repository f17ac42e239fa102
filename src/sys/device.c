/* The little host code that talks about devices: PETSc's stream, kernel error codes. */
#include "pwimpl.h"
#if defined(PATCHWORK_HAVE_CUDA)
  #include <petscdevice.h>
#endif

PetscErrorCode PatchworkGetDeviceStream(void **stream)
{
  PetscFunctionBegin;
  *stream = NULL;
#if defined(PATCHWORK_HAVE_CUDA)
  {
    PetscDeviceContext dctx;
    void              *handle;

    /* launch on the stream PETSc's own vector kernels use, so no extra synchronization is needed */
    PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
    PetscCall(PetscDeviceContextGetStreamHandle(dctx, &handle));
    *stream = *(void **)handle;
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PatchworkCheckKernel(int err, const char call[])
{
  PetscFunctionBegin;
#if defined(PATCHWORK_HAVE_CUDA)
  PetscCheck(!err, PETSC_COMM_SELF, PETSC_ERR_GPU, "CUDA error %d (%s) in %s", err, PatchworkCUDAErrorString(err), call);
#else
  PetscCheck(!err, PETSC_COMM_SELF, PETSC_ERR_SUP, "Patchwork was built without CUDA: %s is not available", call);
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Wait for the work queued in PETSc's current device context (nothing without CUDA) */
PetscErrorCode PatchworkDeviceSynchronize(void)
{
  PetscFunctionBegin;
#if defined(PATCHWORK_HAVE_CUDA)
  {
    PetscDeviceContext dctx;

    PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
    PetscCall(PetscDeviceContextSynchronize(dctx));
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}
