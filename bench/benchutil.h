/* Helpers shared by the benchmark drivers in bench/: device synchronization for timing and the
   assembled (AIJ) form of the Q_k Poisson operator that PETSc's own solvers are measured on. */
#ifndef PATCHWORK_BENCHUTIL_H
#define PATCHWORK_BENCHUTIL_H

#include <patchwork.h>
#include <patchwork/basis1d.h>
#include <petscdevice.h>

/* Wait for the device, so that a clock read after it counts the queued kernels. A run on host
   vectors never initialized the device and has nothing to wait for: leave it so (it may have none). */
static inline PetscErrorCode Sync(void)
{
  PetscFunctionBeginUser;
#if defined(PETSC_HAVE_DEVICE)
  if (PetscDeviceInitialized(PETSC_DEVICE_DEFAULT())) {
    PetscDeviceContext dctx;

    PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
    PetscCall(PetscDeviceContextSynchronize(dctx));
  }
#endif
  PetscFunctionReturn(0);
}

static inline int CompareDouble(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median time of one y = A x over reps synchronized applies, after 3 warm-up applies */
static inline PetscErrorCode TimeMult(Mat A, Vec x, Vec y, PetscInt reps, double *median)
{
  double *t;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(reps, &t));
  for (PetscInt i = 0; i < 3; i++) PetscCall(MatMult(A, x, y));
  for (PetscInt i = 0; i < reps; i++) {
    PetscLogDouble t0, t1;

    PetscCall(Sync());
    PetscCall(PetscTime(&t0));
    PetscCall(MatMult(A, x, y));
    PetscCall(Sync());
    PetscCall(PetscTime(&t1));
    t[i] = t1 - t0;
  }
  qsort(t, (size_t)reps, sizeof(double), CompareDouble);
  *median = t[reps / 2];
  PetscCall(PetscFree(t));
  PetscFunctionReturn(0);
}

/* The global 1D mass and stiffness matrices of N cells of degree k on [0,1] */
static inline PetscErrorCode Assemble1D(PetscInt k, PetscInt N, Mat *M, Mat *K)
{
  PetscInt  n = k + 1, nn = k * N + 1, *idx;
  double    m[121], s[121];
  PetscReal h = 1.0 / N;

  PetscFunctionBeginUser;
  PetscCheck(k >= 1 && k <= 10, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Degree %" PetscInt_FMT " out of range 1..10", k);
  PetscCheck(!PatchworkTensor1DMatrices((int)k, PW_QUAD_GAUSS, m, s), PETSC_COMM_SELF, PETSC_ERR_LIB, "1D matrices");
  PetscCall(PetscMalloc1(n, &idx));
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, nn, nn, 2 * k + 1, NULL, M));
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, nn, nn, 2 * k + 1, NULL, K));
  for (PetscInt e = 0; e < N; e++) {
    PetscScalar me[121], ke[121];

    for (PetscInt i = 0; i < n; i++) idx[i] = e * k + i;
    for (PetscInt i = 0; i < n * n; i++) {
      me[i] = h * m[i];
      ke[i] = s[i] / h;
    }
    PetscCall(MatSetValues(*M, n, idx, n, idx, me, ADD_VALUES));
    PetscCall(MatSetValues(*K, n, idx, n, idx, ke, ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(*M, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*M, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(*K, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*K, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree(idx));
  PetscFunctionReturn(0);
}

/* Nonzeros of AssembleKron()'s matrix, without assembling it: the 1D matrix has (k+1)^2 entries per
   cell, less one where neighbouring cells share a node, and the Kronecker product multiplies them */
static inline PetscLogDouble KronNonzeros(PetscInt dim, PetscInt k, PetscInt N)
{
  const PetscLogDouble nnz1 = (PetscLogDouble)N * (k + 1) * (k + 1) - (N - 1);

  return dim == 3 ? nnz1 * nnz1 * nnz1 : nnz1 * nnz1;
}

/* The Q_k Laplacian on N^dim cells of the unit box, assembled in one SeqAIJ matrix in the DMDA's
   lexicographic order (x fastest), homogeneous Dirichlet rows and columns replaced by the identity.
   On a Cartesian mesh it is exactly K(x)M + M(x)K in 2D and K(x)M(x)M + M(x)K(x)M + M(x)M(x)K in 3D
   (slowest direction first). */
static inline PetscErrorCode AssembleKron(PetscInt dim, PetscInt k, PetscInt N, Mat *A)
{
  Mat      M, K, T;
  PetscInt nn = k * N + 1, nb = 0, *rows;

  PetscFunctionBeginUser;
  PetscCheck(dim == 2 || dim == 3, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Dimension %" PetscInt_FMT " is not 2 or 3", dim);
  PetscCall(Assemble1D(k, N, &M, &K));
  if (dim == 2) {
    PetscCall(MatSeqAIJKron(K, M, MAT_INITIAL_MATRIX, A));
    PetscCall(MatSeqAIJKron(M, K, MAT_INITIAL_MATRIX, &T));
    PetscCall(MatAXPY(*A, 1.0, T, SAME_NONZERO_PATTERN));
    PetscCall(MatDestroy(&T));
  } else {
    Mat MM, KM, MK;

    PetscCall(MatSeqAIJKron(M, M, MAT_INITIAL_MATRIX, &MM));
    PetscCall(MatSeqAIJKron(K, M, MAT_INITIAL_MATRIX, &KM));
    PetscCall(MatSeqAIJKron(M, K, MAT_INITIAL_MATRIX, &MK));
    PetscCall(MatSeqAIJKron(K, MM, MAT_INITIAL_MATRIX, A));
    PetscCall(MatSeqAIJKron(M, KM, MAT_INITIAL_MATRIX, &T));
    PetscCall(MatAXPY(*A, 1.0, T, SAME_NONZERO_PATTERN));
    PetscCall(MatDestroy(&T));
    PetscCall(MatSeqAIJKron(M, MK, MAT_INITIAL_MATRIX, &T));
    PetscCall(MatAXPY(*A, 1.0, T, SAME_NONZERO_PATTERN));
    PetscCall(MatDestroy(&T));
    PetscCall(MatDestroy(&MM));
    PetscCall(MatDestroy(&KM));
    PetscCall(MatDestroy(&MK));
  }
  PetscCall(PetscMalloc1(2 * dim * (dim == 3 ? nn * nn : nn), &rows));
  for (PetscInt z = 0; z < (dim == 3 ? nn : 1); z++)
    for (PetscInt y = 0; y < nn; y++)
      for (PetscInt x = 0; x < nn; x++)
        if (!x || !y || x == nn - 1 || y == nn - 1 || (dim == 3 && (!z || z == nn - 1))) rows[nb++] = (z * nn + y) * nn + x;
  PetscCall(MatZeroRowsColumns(*A, nb, rows, 1.0, NULL, NULL));
  PetscCall(PetscFree(rows));
  PetscCall(MatDestroy(&M));
  PetscCall(MatDestroy(&K));
  PetscFunctionReturn(0);
}

#endif
