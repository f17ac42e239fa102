/* What src/mat/tensor/ offers the other modules (transfers, hierarchies, PCVERTEXPATCH) about Cartesian
   grids without the host work proportional to the grid: a DMDA that knows its Q_k box without
   coordinates, and operators on a box without a DM. */
#ifndef PATCHWORK_CARTESIAN_H
#define PATCHWORK_CARTESIAN_H

#include "../../sys/pwimpl.h"

/* Mark a DMDA as the Q_k node grid of the box [lower, upper] (NULL: the unit box) without setting
   coordinates: MatCreatePatchworkTensor() takes the box from the mark (src/mat/tensor/dmda_qk.c) */
PETSC_INTERN PetscErrorCode PatchworkDMDASetQkBox(DM, PetscInt, const PetscReal[], const PetscReal[]);

/* One rank only: the operator described by info (info->dm is ignored and left NULL) on vectors of type
   vtype, without a DM. A DMDA's set-up builds index sets and a scatter over all its nodes on the host;
   the coarse levels of a hierarchy need none of it on one rank (src/mat/tensor/tensor.c) */
PETSC_INTERN PetscErrorCode PatchworkTensorCreateOnBox(MPI_Comm, const PatchworkTensorInfo *, VecType, Mat *);

/* The owned box of this rank's nodes, and with the ghosts: the DMDA's, or the whole grid of an operator
   without a DM (PatchworkTensorFillDesc() serves both) */
PETSC_INTERN PetscErrorCode PatchworkTensorInfoCorners(const PatchworkTensorInfo *, PetscInt[3], PetscInt[3]);
PETSC_INTERN PetscErrorCode PatchworkTensorInfoGhostCorners(const PatchworkTensorInfo *, PetscInt[3], PetscInt[3], PetscInt[3], PetscInt[3]);

#endif
