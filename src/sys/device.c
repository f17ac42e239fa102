/* The little host code that talks about devices: PETSc's stream, kernel error codes, memory that lives
   where the arrays it serves live. */
#include "pwimpl.h"
#include <patchwork/vec_kernel.h>
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

/* Memory of n bytes on the device (plain cudaMalloc) or the host, as the arrays it serves live */
PetscErrorCode PatchworkMalloc(PetscBool device, size_t bytes, void **p)
{
  PetscFunctionBegin;
  *p = NULL;
  if (device) {
#if defined(PATCHWORK_HAVE_CUDA)
    PatchworkCallKernel(PatchworkDeviceMalloc(bytes, p));
#else
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "Device arrays, but Patchwork was built without CUDA: rebuild it against a PETSc configured with CUDA");
#endif
  } else PetscCall(PetscMalloc(bytes, p));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Free what PatchworkMalloc() gave (NULL: nothing), and set the pointer to NULL */
PetscErrorCode PatchworkFree(PetscBool device, void *p)
{
  void **pp = (void **)p;

  PetscFunctionBegin;
  if (device) {
#if defined(PATCHWORK_HAVE_CUDA)
    PatchworkCallKernel(PatchworkDeviceFree(*pp));
#endif
    *pp = NULL;
  } else PetscCall(PetscFree(*pp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* bytes = 0 where the memory lives: in PETSc's stream on the device */
PetscErrorCode PatchworkMemzero(PetscBool device, void *p, size_t bytes)
{
  PetscFunctionBegin;
  if (device) {
#if defined(PATCHWORK_HAVE_CUDA)
    void *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
    PatchworkCallKernel(PatchworkDeviceMemzero(p, bytes, stream));
#endif
  } else PetscCall(PetscMemzero(p, bytes));
  PetscFunctionReturn(PETSC_SUCCESS);
}
