static char help[] = "The comparison helpers of the PETSc tests (compare.c) with planted NaNs: an operator whose output\n"
                     "holds a NaN on one rank, a matrix with one NaN entry, a NaN error on one rank must each give a\n"
                     "NaN (never the largest finite value), so that every check err <= tol fails. Run on several ranks:\n"
                     "the NaN is planted on each rank in turn.\n";

#include <petscmat.h>
#include "compare.h"
#include "../../src/sys/compat.h" /* PatchworkShellOp(): MatShellSetOperation()'s cast differs between PETSc versions */

static PetscInt failures = 0;

/* A NaN must come out */
static PetscErrorCode ExpectNaN(const char what[], PetscReal v)
{
  PetscFunctionBeginUser;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %s: %g\n", PetscIsNanReal(v) ? "ok  " : "FAIL", what, (double)v));
  if (!PetscIsNanReal(v)) failures++;
  PetscFunctionReturn(0);
}

static PetscErrorCode ExpectValue(const char what[], PetscReal v, PetscReal want)
{
  PetscFunctionBeginUser;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %s: %g (want %g)\n", v == want ? "ok  " : "FAIL", what, (double)v, (double)want));
  if (!(v == want)) failures++;
  PetscFunctionReturn(0);
}

/* The shell B x = A x, with a NaN in the first owned entry of rank `rank` at the `call`-th product */
typedef struct {
  Mat         A;
  PetscMPIInt rank;
  PetscInt    call, calls;
} Plant;

static PetscErrorCode MultPlant(Mat B, Vec x, Vec y)
{
  Plant      *p;
  PetscMPIInt rank;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(B, &p));
  PetscCall(MatMult(p->A, x, y));
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)B), &rank));
  if (p->calls++ == p->call && rank == p->rank) {
    PetscScalar *a;

    PetscCall(VecGetArray(y, &a));
    a[0] = (PetscScalar)NAN;
    PetscCall(VecRestoreArray(y, &a));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode DiagonalPlant(Mat B, Vec d)
{
  Plant      *p;
  PetscMPIInt rank;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(B, &p));
  PetscCall(MatGetDiagonal(p->A, d));
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)B), &rank));
  if (rank == p->rank) {
    PetscScalar *a;

    PetscCall(VecGetArray(d, &a));
    a[0] = (PetscScalar)NAN;
    PetscCall(VecRestoreArray(d, &a));
  }
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  const PetscInt n = 5; /* rows per rank */
  Mat            A, B;
  PetscRandom    rnd;
  PetscMPIInt    size, rank;
  PetscInt       rstart, rend;
  Plant          p;
  char           what[128];

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetFromOptions(rnd));
  /* A: the 1D Laplacian + 1 on the diagonal, n rows per rank */
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, n, n, PETSC_DETERMINE, PETSC_DETERMINE, 3, NULL, 2, NULL, &A));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscCall(MatSetValue(A, i, i, 3.0, INSERT_VALUES));
    if (i > 0) PetscCall(MatSetValue(A, i, i - 1, -1.0, INSERT_VALUES));
    if (i < n * size - 1) PetscCall(MatSetValue(A, i, i + 1, -1.0, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatCreateShell(PETSC_COMM_WORLD, n, n, PETSC_DETERMINE, PETSC_DETERMINE, &p, &B));
  PetscCall(MatShellSetOperation(B, MATOP_MULT, PatchworkShellOp(MultPlant)));
  PetscCall(MatShellSetOperation(B, MATOP_GET_DIAGONAL, PatchworkShellOp(DiagonalPlant)));
  p.A = A;

  /* without a NaN: the same operator, no difference */
  {
    PetscReal err;

    p.rank  = -1;
    p.call  = -1;
    p.calls = 0;
    PetscCall(PatchworkTestCompareMult(A, B, rnd, 3, &err));
    PetscCall(ExpectValue("CompareMult of A with itself", err, 0));
  }
  for (PetscMPIInt r = 0; r < size; r++) {
    /* the operator's output holds a NaN in one of 3 trials (the first, then the last) on rank r */
    for (PetscInt call = 0; call < 3; call += 2) {
      PetscReal err;

      p.rank  = r;
      p.call  = call;
      p.calls = 0;
      PetscCall(PatchworkTestCompareMult(A, B, rnd, 3, &err));
      PetscCall(PetscSNPrintf(what, sizeof(what), "CompareMult, NaN planted on rank %d in trial %" PetscInt_FMT " of 3", r, call + 1));
      PetscCall(ExpectNaN(what, err));
    }
    { /* the diagonal holds a NaN on rank r */
      PetscReal err;
      Vec       x;

      PetscCall(MatCreateVecs(A, &x, NULL));
      PetscCall(PatchworkTestCompareDiagonal(A, B, x, &err));
      PetscCall(VecDestroy(&x));
      PetscCall(PetscSNPrintf(what, sizeof(what), "CompareDiagonal, NaN planted on rank %d", r));
      PetscCall(ExpectNaN(what, err));
    }
    { /* an error that is NaN on rank r, 1 or 2 elsewhere; the second entry without a NaN */
      PetscReal e[2] = {rank == r ? (PetscReal)NAN : 1.0 + rank, 1.0 + rank};

      PetscCall(PatchworkTestErrMaxAllreduce(PETSC_COMM_WORLD, 2, e));
      PetscCall(PetscSNPrintf(what, sizeof(what), "ErrMaxAllreduce, NaN planted on rank %d", r));
      PetscCall(ExpectNaN(what, e[0]));
      PetscCall(PetscSNPrintf(what, sizeof(what), "ErrMaxAllreduce, no NaN (with one on rank %d beside it)", r));
      PetscCall(ExpectValue(what, e[1], size));
    }
    { /* the infinity norm of A with a NaN entry on rank r */
      Mat       C;
      PetscReal nrm;

      PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &C));
      if (rank == r) PetscCall(MatSetValue(C, rstart, rstart, (PetscScalar)NAN, INSERT_VALUES));
      PetscCall(MatAssemblyBegin(C, MAT_FINAL_ASSEMBLY));
      PetscCall(MatAssemblyEnd(C, MAT_FINAL_ASSEMBLY));
      PetscCall(PatchworkTestMatNormInf(C, &nrm));
      PetscCall(PetscSNPrintf(what, sizeof(what), "MatNormInf, NaN entry planted on rank %d", r));
      PetscCall(ExpectNaN(what, nrm));
      PetscCall(MatDestroy(&C));
    }
  }
  {
    PetscReal nrm;

    PetscCall(PatchworkTestMatNormInf(A, &nrm));
    PetscCall(ExpectValue("MatNormInf without a NaN (|-1| + 3 + |-1|)", nrm, 5));
  }
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s\n", failures ? "FAILED" : "every planted NaN came out as NaN"));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
