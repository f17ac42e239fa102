/* Entry point for -dll_append .../libpetscpatchwork.so: PETSc looks this symbol up by the file name. */
#include "pwimpl.h"

PETSC_EXTERN PetscErrorCode PetscDLLibraryRegister_petscpatchwork(void)
{
  PetscFunctionBegin;
  PetscCall(PatchworkInitializePackage());
  PetscFunctionReturn(PETSC_SUCCESS);
}
