/* Test helper: the variable-coefficient problem alpha r(x) u - div(beta c(x) grad u) of Ljungkvist (2017),
   c = 1/(0.05 + 2|x|^2) and r = 1 + x^2, as the operator's callbacks and as PETSc's pointwise Jacobians
   (constants[0] = alpha, [1] = beta, [2] = variable: 0 for c = r = 1), for the tests that compare the
   operator with PETSc's FEM assembly */
#ifndef PATCHWORK_TEST_PLEXFORMS_H
#define PATCHWORK_TEST_PLEXFORMS_H

#include <petscsys.h>

static inline PetscReal Diffusion(PetscInt dim, const PetscReal x[])
{
  PetscReal r2 = 0;
  for (PetscInt d = 0; d < dim; d++) r2 += x[d] * x[d];
  return 1.0 / (0.05 + 2 * r2);
}

static inline PetscReal Reaction(const PetscReal x[]) { return 1.0 + x[0] * x[0]; }

static inline PetscErrorCode DiffusionFn(PetscInt dim, const PetscReal x[], PetscReal *v, void *ctx)
{
  (void)ctx;
  *v = Diffusion(dim, x);
  return 0;
}

static inline PetscErrorCode ReactionFn(PetscInt dim, const PetscReal x[], PetscReal *v, void *ctx)
{
  (void)dim;
  (void)ctx;
  *v = Reaction(x);
  return 0;
}

static inline void G0(PetscInt dim, PetscInt Nf, PetscInt NfAux, const PetscInt uOff[], const PetscInt uOff_x[], const PetscScalar u[], const PetscScalar u_t[], const PetscScalar u_x[], const PetscInt aOff[], const PetscInt aOff_x[], const PetscScalar a[], const PetscScalar a_t[], const PetscScalar a_x[], PetscReal t, PetscReal u_tShift, const PetscReal x[], PetscInt numConstants, const PetscScalar constants[], PetscScalar g0[])
{
  (void)dim, (void)Nf, (void)NfAux, (void)uOff, (void)uOff_x, (void)u, (void)u_t, (void)u_x, (void)aOff, (void)aOff_x, (void)a, (void)a_t, (void)a_x, (void)t, (void)u_tShift, (void)numConstants;
  g0[0] = constants[0] * (PetscRealPart(constants[2]) ? Reaction(x) : 1.0);
}

static inline void G3(PetscInt dim, PetscInt Nf, PetscInt NfAux, const PetscInt uOff[], const PetscInt uOff_x[], const PetscScalar u[], const PetscScalar u_t[], const PetscScalar u_x[], const PetscInt aOff[], const PetscInt aOff_x[], const PetscScalar a[], const PetscScalar a_t[], const PetscScalar a_x[], PetscReal t, PetscReal u_tShift, const PetscReal x[], PetscInt numConstants, const PetscScalar constants[], PetscScalar g3[])
{
  (void)Nf, (void)NfAux, (void)uOff, (void)uOff_x, (void)u, (void)u_t, (void)u_x, (void)aOff, (void)aOff_x, (void)a, (void)a_t, (void)a_x, (void)t, (void)u_tShift, (void)numConstants;
  for (PetscInt d = 0; d < dim; d++) g3[d * dim + d] = constants[1] * (PetscRealPart(constants[2]) ? Diffusion(dim, x) : 1.0);
}

#endif
