/* Shared by examples/poisson.c and tests/mat/test_mg_sor.c: the right-hand side of the Q_k Poisson
   problem with f = 1 (-rhs one). */
#ifndef PATCHWORK_EXAMPLES_POISSON_H
#define PATCHWORK_EXAMPLES_POISSON_H

#include <patchwork.h>

/* b = M 1 with zero Dirichlet rows: the load vector of f = 1 */
static inline PetscErrorCode LoadOne(DM dm, PetscInt degree, Vec b)
{
  Mat          Mnat;
  Vec          one;
  PetscInt     dim, M[3], xs[3], xm[3], n = 0;
  PetscScalar *a;

  PetscFunctionBeginUser;
  PetscCall(MatCreatePatchworkTensor(dm, degree, &Mnat));
  PetscCall(MatPatchworkTensorSetCoefficients(Mnat, 1.0, 0.0));
  PetscCall(MatPatchworkTensorSetBC(Mnat, PATCHWORK_BC_NATURAL));
  PetscCall(VecDuplicate(b, &one));
  PetscCall(VecSet(one, 1.0));
  PetscCall(MatMult(Mnat, one, b));
  PetscCall(DMDAGetInfo(dm, &dim, &M[0], &M[1], &M[2], NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetCorners(dm, &xs[0], &xs[1], &xs[2], &xm[0], &xm[1], &xm[2]));
  PetscCall(VecGetArray(b, &a));
  for (PetscInt k = xs[2]; k < xs[2] + xm[2]; k++)
    for (PetscInt j = xs[1]; j < xs[1] + xm[1]; j++)
      for (PetscInt i = xs[0]; i < xs[0] + xm[0]; i++, n++)
        if (i == 0 || j == 0 || i == M[0] - 1 || j == M[1] - 1 || (dim == 3 && (k == 0 || k == M[2] - 1))) a[n] = 0;
  PetscCall(VecRestoreArray(b, &a));
  PetscCall(VecDestroy(&one));
  PetscCall(MatDestroy(&Mnat));
  PetscFunctionReturn(0);
}

#endif
