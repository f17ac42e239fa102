/* What src/mat/transfer/ offers PCVERTEXPATCH beyond pwimpl.h's PatchworkCreateHierarchy(). */
#ifndef PATCHWORK_HIERARCHY_H
#define PATCHWORK_HIERARCHY_H

#include "../../sys/pwimpl.h"

/* PatchworkCreateHierarchy(); with nodm (a PETSC_TRUE that takes effect on one rank only), the levels
   between the coarsest and the finest have operators without a DM (src/mat/transfer/hierarchy.c) */
PETSC_INTERN PetscErrorCode PatchworkCreateLevels(Mat, PetscInt, PetscBool, Mat[], Mat[]);

#endif
