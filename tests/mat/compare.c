#include "compare.h"
#include <patchwork.h>
#include "../../examples/shell.h" /* MapVertices() */

PetscErrorCode PatchworkTestCompareMult(Mat A, Mat B, PetscRandom rnd, PetscInt trials, PetscReal *err)
{
  Vec x, ya, yb;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(A, &x, &ya));
  PetscCall(VecDuplicate(ya, &yb));
  *err = 0;
  for (PetscInt t = 0; t < trials; t++) {
    PetscReal na, nd;

    PetscCall(VecSetRandom(x, rnd));
    PetscCall(MatMult(A, x, ya));
    PetscCall(MatMult(B, x, yb));
    PetscCall(VecNorm(ya, NORM_2, &na));
    PetscCall(VecAXPY(yb, -1.0, ya));
    PetscCall(VecNorm(yb, NORM_2, &nd));
    *err = PetscMax(*err, nd / na);
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&ya));
  PetscCall(VecDestroy(&yb));
  PetscFunctionReturn(0);
}

/* *dm (destroyed) replaced by the serial mesh tree, distributed over the ranks */
static PetscErrorCode ReplaceDistributed(DM *dm, DM tree)
{
  DM dist;

  PetscFunctionBeginUser;
  PetscCall(DMDestroy(dm));
  PetscCall(DMPlexDistribute(tree, 0, NULL, &dist));
  if (dist) {
    PetscCall(DMDestroy(&tree));
    tree = dist;
  }
  *dm = tree;
  PetscFunctionReturn(0);
}

PetscErrorCode PatchworkTestTreeRefine(DM *dm, PetscInt cell)
{
  DM       ref, nc;
  PetscInt dim;

  PetscFunctionBeginUser;
  PetscCall(DMGetDimension(*dm, &dim));
  PetscCall(DMPlexCreateDefaultReferenceTree(PetscObjectComm((PetscObject)*dm), dim, PETSC_FALSE, &ref));
  PetscCall(DMPlexSetReferenceTree(*dm, ref));
  PetscCall(DMDestroy(&ref));
  PetscCall(DMPlexTreeRefineCell(*dm, cell, &nc));
  { /* PETSc's tree does not keep the vector and matrix types */
    VecType vtype;
    MatType mtype;

    PetscCall(DMGetVecType(*dm, &vtype));
    PetscCall(DMSetVecType(nc, vtype));
    PetscCall(DMGetMatType(*dm, &mtype));
    PetscCall(DMSetMatType(nc, mtype));
  }
  PetscCall(ReplaceDistributed(dm, nc));
  PetscFunctionReturn(0);
}

/* The tree of the serial DMPlex dm with cells[0..n-1] split */
static PetscErrorCode SplitSerial(DM dm, PetscInt n, const PetscInt cells[], DM *tree)
{
  DMLabel     marked;
  PetscMPIInt rank;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)dm), &rank));
  PetscCall(DMLabelCreate(PETSC_COMM_SELF, "split", &marked));
  if (rank == 0) /* the serial mesh lives on rank 0 */
    for (PetscInt i = 0; i < n; i++) PetscCall(DMLabelSetValue(marked, cells[i], 1));
  PetscCall(PatchworkDMPlexRefineCells(dm, marked, 1, tree));
  PetscCall(DMLabelDestroy(&marked));
  PetscFunctionReturn(0);
}

PetscErrorCode PatchworkTestRefineCells(DM *dm, PetscInt n, const PetscInt cells[])
{
  PetscFunctionBeginUser;
  PetscCall(PatchworkTestRefineCells2(dm, n, cells, 0, NULL));
  PetscFunctionReturn(0);
}

PetscErrorCode PatchworkTestRefineCells2(DM *dm, PetscInt n, const PetscInt cells[], PetscInt n2, const PetscInt cells2[])
{
  DM tree;

  PetscFunctionBeginUser;
  PetscCall(SplitSerial(*dm, n, cells, &tree));
  if (n2) { /* a second level, on the serial tree */
    DM tree2;

    PetscCall(SplitSerial(tree, n2, cells2, &tree2));
    PetscCall(DMDestroy(&tree));
    tree = tree2;
  }
  PetscCall(ReplaceDistributed(dm, tree));
  PetscFunctionReturn(0);
}

PetscErrorCode PatchworkTestMapVertices(DM dm, void (*map)(PetscInt dim, const PetscReal x[], PetscReal y[], void *ctx), void *ctx)
{
  PetscFunctionBeginUser;
  PetscCall(MapVertices(dm, map, ctx));
  PetscFunctionReturn(0);
}
