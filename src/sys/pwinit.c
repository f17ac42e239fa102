/* Package registration: log events, citations, and every type Patchwork provides. */
#include "pwimpl.h"

PetscBool     PatchworkPackageInitialized = PETSC_FALSE;
PetscLogEvent PATCHWORK_TensorSetUp, PATCHWORK_TensorMult, PATCHWORK_TensorDiagonal;

const char *const PatchworkTensorQuadratures[] = {"gauss", "gausslobatto", "PatchworkTensorQuadrature", "PATCHWORK_QUADRATURE_", NULL};
const char *const PatchworkTensorBCs[]         = {"dirichlet", "natural", "PatchworkTensorBC", "PATCHWORK_BC_", NULL};

static PetscClassId PATCHWORK_CLASSID;

/*@C
  PatchworkFinalizePackage - Forget that Patchwork was initialized; called by `PetscFinalize()`

  Level: developer

.seealso: `PatchworkInitializePackage()`
@*/
PetscErrorCode PatchworkFinalizePackage(void)
{
  PetscFunctionBegin;
  PatchworkPackageInitialized = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  PatchworkInitializePackage - Register Patchwork's log events and types with PETSc

  Not Collective

  Notes:
  Idempotent. Called by `PetscDLLibraryRegister_petscpatchwork()` when the library is loaded with
  `-dll_append /path/to/libpetscpatchwork.so`, and by every Patchwork constructor; programs linked
  against Patchwork may call it themselves after `PetscInitialize()`.

  Level: beginner

.seealso: `MatCreatePatchworkTensor()`
@*/
PetscErrorCode PatchworkInitializePackage(void)
{
  PetscFunctionBegin;
  if (PatchworkPackageInitialized) PetscFunctionReturn(PETSC_SUCCESS);
  PatchworkPackageInitialized = PETSC_TRUE;
  PetscCall(PetscClassIdRegister("Patchwork", &PATCHWORK_CLASSID));
  PetscCall(PetscLogEventRegister("PWTensorSetUp", MAT_CLASSID, &PATCHWORK_TensorSetUp));
  PetscCall(PetscLogEventRegister("PWTensorMult", MAT_CLASSID, &PATCHWORK_TensorMult));
  PetscCall(PetscLogEventRegister("PWTensorDiag", MAT_CLASSID, &PATCHWORK_TensorDiagonal));
  PetscCall(PetscRegisterFinalize(PatchworkFinalizePackage));
  PetscFunctionReturn(PETSC_SUCCESS);
}
