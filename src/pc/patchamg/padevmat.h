/* PCPATCHAMG's matrices over device CSR arrays (padevmat.c): its coarse levels, and a finest level
   that another part of the library (PCLOR) hands over without a PETSc AIJCUSPARSE copy. */
#ifndef PATCHWORK_PADEVMAT_H
#define PATCHWORK_PADEVMAT_H

#include <patchwork/amg_kernel.h>
#include <petscmat.h>

PETSC_INTERN PetscErrorCode PCPatchAMGMatCreateDevice(PatchworkCSRMatrix *, PetscBool, Mat *);
PETSC_INTERN PetscErrorCode PCPatchAMGMatCreateDeviceOn(MPI_Comm, PatchworkCSRMatrix *, PetscBool, Mat *);
PETSC_INTERN PetscErrorCode PCPatchAMGMatCreateDeviceSplit(MPI_Comm, PatchworkCSRMatrix *, PatchworkCSRMatrix *, PetscInt, const PetscInt[], Mat *);
PETSC_INTERN PetscErrorCode PCPatchAMGCSRToHost(const PatchworkCSRMatrix *, PatchworkCSRMatrix *);
PETSC_INTERN PetscErrorCode PCPatchAMGMatGetDeviceCSR(Mat, const PatchworkCSRMatrix **);
PETSC_INTERN PetscErrorCode PCPatchAMGMatDeviceGetValues(Mat, double **);
PETSC_INTERN PetscErrorCode PCPatchAMGMatDeviceRestoreValues(Mat, double **);
PETSC_INTERN PetscErrorCode PCPatchAMGMatDeviceSetSingle(Mat);
PETSC_INTERN PetscErrorCode PCPatchAMGMatGetDeviceArrays(Mat, PatchworkCSR *);
PETSC_INTERN PetscErrorCode PCPatchAMGMatRestoreDeviceArrays(Mat, PatchworkCSR *);
PETSC_INTERN PetscErrorCode PCPatchAMGMatGetAIJ(Mat, Mat *);

#endif
