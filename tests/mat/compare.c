#include "compare.h"
#include <patchwork.h>
#include "../../examples/shell.h" /* MapVertices() */

PetscErrorCode PatchworkTestErrMaxAllreduce(MPI_Comm comm, PetscInt n, PetscReal e[])
{
  PetscMPIInt *nan, cnt;

  PetscFunctionBeginUser;
  PetscCall(PetscMPIIntCast(n, &cnt));
  PetscCall(PetscMalloc1(n, &nan));
  for (PetscInt i = 0; i < n; i++) nan[i] = (PetscMPIInt)PetscIsNanReal(e[i]);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, nan, cnt, MPI_INT, MPI_MAX, comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, e, cnt, MPIU_REAL, MPIU_MAX, comm));
  for (PetscInt i = 0; i < n; i++)
    if (nan[i]) e[i] = (PetscReal)NAN;
  PetscCall(PetscFree(nan));
  PetscFunctionReturn(0);
}

PetscErrorCode PatchworkTestMatNormInf(Mat A, PetscReal *nrm)
{
  PetscReal fro;

  PetscFunctionBeginUser;
  PetscCall(MatNorm(A, NORM_MAX, nrm));
  PetscCall(MatNorm(A, NORM_FROBENIUS, &fro)); /* a sum of squares: NaN with any entry */
  if (PetscIsNanReal(fro)) *nrm = (PetscReal)NAN;
  PetscFunctionReturn(0);
}

PetscErrorCode PatchworkTestCompareMultVec(Mat A, Mat B, Vec x, PetscRandom rnd, PetscInt trials, PetscReal *err)
{
  Vec ya, yb;

  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(x, &ya));
  PetscCall(VecDuplicate(x, &yb));
  *err = 0;
  for (PetscInt t = 0; t < trials; t++) {
    PetscReal na, nd;

    PetscCall(VecSetRandom(x, rnd));
    PetscCall(MatMult(A, x, ya));
    PetscCall(MatMult(B, x, yb));
    PetscCall(VecNorm(ya, NORM_2, &na));
    PetscCall(VecAXPY(yb, -1.0, ya));
    PetscCall(VecNorm(yb, NORM_2, &nd));
    *err = ErrMax(*err, nd / na);
  }
  PetscCall(VecDestroy(&ya));
  PetscCall(VecDestroy(&yb));
  PetscFunctionReturn(0);
}

PetscErrorCode PatchworkTestCompareMult(Mat A, Mat B, PetscRandom rnd, PetscInt trials, PetscReal *err)
{
  Vec x;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(A, &x, NULL));
  PetscCall(PatchworkTestCompareMultVec(A, B, x, rnd, trials, err));
  PetscCall(VecDestroy(&x));
  PetscFunctionReturn(0);
}

PetscErrorCode PatchworkTestCompareDiagonal(Mat A, Mat B, Vec like, PetscReal *err)
{
  Vec       da, db;
  PetscReal na, nd;

  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(like, &da));
  PetscCall(VecDuplicate(like, &db));
  PetscCall(MatGetDiagonal(A, da));
  PetscCall(MatGetDiagonal(B, db));
  PetscCall(VecNorm(da, NORM_2, &na));
  PetscCall(VecAXPY(db, -1.0, da));
  PetscCall(VecNorm(db, NORM_2, &nd));
  *err = nd / na;
  PetscCall(VecDestroy(&da));
  PetscCall(VecDestroy(&db));
  PetscFunctionReturn(0);
}

PetscErrorCode PatchworkTestCountHanging(DM dm, PetscInt *nhang)
{
  PetscInt pStart, pEnd;

  PetscFunctionBeginUser;
  *nhang = 0;
  PetscCall(DMPlexGetChart(dm, &pStart, &pEnd));
  for (PetscInt p = pStart; p < pEnd; p++) {
    PetscInt parent;

    PetscCall(DMPlexGetTreeParent(dm, p, &parent, NULL));
    if (parent != p) (*nhang)++;
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, nhang, 1, MPIU_INT, MPI_SUM, PetscObjectComm((PetscObject)dm)));
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
