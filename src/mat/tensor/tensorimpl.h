/* Private context of the tensor-product MATSHELL; only src/mat/tensor/ sees it. */
#ifndef PATCHWORK_TENSORIMPL_H
#define PATCHWORK_TENSORIMPL_H

#include "../../sys/pwimpl.h"
#include <patchwork/basis1d.h>
#include <petsc/private/petscimpl.h> /* PetscObjectStateIncrease(): a changed operator has a new state */

typedef struct {
  PatchworkTensorInfo       info;       /* what the operator is; info.dm is referenced here */
  PatchworkScatter          scatter;
  PetscBool                 serial;     /* one rank: kernels act on the global arrays, no ghost exchange */
  PetscBool                 descvalid;  /* the descriptors below match the settings above */
  PatchworkTensorDesc       cells_desc; /* this rank's cells; boxes of the local (or global) arrays */
  PatchworkTensorDesc       owned_desc; /* out box = owned nodes: Dirichlet rows of global vectors */
  Vec                       xloc, yloc, work;
  PetscLogDouble            flops;      /* per apply on this rank */
} Mat_PatchworkTensor;

PETSC_INTERN PetscErrorCode PatchworkDMDAGetQkGrid(DM, PetscInt, PetscInt[], PetscReal[], PetscReal[]);
PETSC_INTERN PetscErrorCode PatchworkTensorSetUpDescriptors(Mat);
PETSC_INTERN PetscErrorCode MatMult_PatchworkTensor(Mat, Vec, Vec);
PETSC_INTERN PetscErrorCode MatMultAdd_PatchworkTensor(Mat, Vec, Vec, Vec);
PETSC_INTERN PetscErrorCode MatGetDiagonal_PatchworkTensor(Mat, Vec);

#endif
