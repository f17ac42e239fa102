/* Test helper: how far two operators are apart on random vectors */
#ifndef PATCHWORK_TEST_COMPARE_H
#define PATCHWORK_TEST_COMPARE_H

#include <petscmat.h>

/* max over trials random x (from rnd) of |B x - A x| / |A x| */
PetscErrorCode PatchworkTestCompareMult(Mat A, Mat B, PetscRandom rnd, PetscInt trials, PetscReal *err);

#endif
