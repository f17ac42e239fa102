/* Test helper: how far two operators are apart on random vectors */
#ifndef PATCHWORK_TEST_COMPARE_H
#define PATCHWORK_TEST_COMPARE_H

#include <petscdmplex.h>
#include "../errmax.h" /* ErrMax(): the maximum of errors that keeps a NaN */

/* e[i] = the maximum of e[i] over the ranks of comm, i < n, NaN where some rank's is NaN (MPI_MAX, like
   fmax(), may return the other operand of a NaN: Open MPI's drops a NaN of rank 1 but not of rank 0) */
PetscErrorCode PatchworkTestErrMaxAllreduce(MPI_Comm comm, PetscInt n, PetscReal e[]);

/* MatNorm(A, NORM_INFINITY) (= NORM_MAX in PETSc: the largest row sum of |a_ij|), NaN when an entry is
   NaN (MatNorm's maximum over the rows skips a NaN row) */
PetscErrorCode PatchworkTestMatNormInf(Mat A, PetscReal *nrm);

/* max over trials random x (from rnd) of |B x - A x| / |A x|, NaN when a trial's is */
PetscErrorCode PatchworkTestCompareMult(Mat A, Mat B, PetscRandom rnd, PetscInt trials, PetscReal *err);

/* the same with the caller's input vector x (overwritten), e.g. a DM's own vectors */
PetscErrorCode PatchworkTestCompareMultVec(Mat A, Mat B, Vec x, PetscRandom rnd, PetscInt trials, PetscReal *err);

/* |diag B - diag A| / |diag A| (2-norms), in vectors like `like` */
PetscErrorCode PatchworkTestCompareDiagonal(Mat A, Mat B, Vec like, PetscReal *err);

/* the points of the DMPlex dm that hang (have a tree parent), summed over ranks */
PetscErrorCode PatchworkTestCountHanging(DM dm, PetscInt *nhang);

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
