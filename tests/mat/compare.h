/* Test helper: how far two operators are apart on random vectors */
#ifndef PATCHWORK_TEST_COMPARE_H
#define PATCHWORK_TEST_COMPARE_H

#include <petscdmplex.h>

/* max over trials random x (from rnd) of |B x - A x| / |A x| */
PetscErrorCode PatchworkTestCompareMult(Mat A, Mat B, PetscRandom rnd, PetscInt trials, PetscReal *err);

/* Split cell `cell` of the serial DMPlex *dm with PETSc's reference tree (DMPlexTreeRefineCell():
   hanging nodes), then distribute it; *dm is replaced. Create *dm with -dm_distribute 0. */
PetscErrorCode PatchworkTestTreeRefine(DM *dm, PetscInt cell);

/* Split the cells cells[0..n-1] of the serial DMPlex *dm (on rank 0) once each by
   PatchworkDMPlexRefineCells() (hanging faces and edges), then distribute it; *dm is replaced.
   Create *dm with -dm_distribute 0. */
PetscErrorCode PatchworkTestRefineCells(DM *dm, PetscInt n, const PetscInt cells[]);

/* The same, then cells2[0..n2-1] of that tree split again (before distributing): two levels */
PetscErrorCode PatchworkTestRefineCells2(DM *dm, PetscInt n, const PetscInt cells[], PetscInt n2, const PetscInt cells2[]);

/* Move every vertex x of dm to map(x), in the global and the local coordinates alike, in place (PETSc
   3.26 cannot rebuild the local coordinates of a tree, which has no coordinate field) */
PetscErrorCode PatchworkTestMapVertices(DM dm, void (*map)(PetscInt dim, const PetscReal x[], PetscReal y[], void *ctx), void *ctx);

#endif
