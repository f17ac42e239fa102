#include "compare.h"

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
