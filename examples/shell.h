/* The curved domain and coefficient shared by examples/shell.c and bench/bench_plex.c: the cubed-sphere
   panel of the shell 1/2 < |x| < 1 and Ljungkvist's (2017) diffusion coefficient 1/(0.05 + 2|x|^2). */
#ifndef PATCHWORK_EXAMPLES_SHELL_H
#define PATCHWORK_EXAMPLES_SHELL_H

#include <patchwork.h>

static inline PetscReal Radius(PetscInt dim, const PetscReal x[])
{
  PetscReal r2 = 0;
  for (PetscInt d = 0; d < dim; d++) r2 += x[d] * x[d];
  return PetscSqrtReal(r2);
}

static inline PetscReal Coefficient(PetscReal rho) { return 1.0 / (0.05 + 2 * rho * rho); }

static inline PetscErrorCode Diffusion(PetscInt dim, const PetscReal x[], PetscReal *c, void *ctx)
{
  (void)ctx;
  *c = Coefficient(Radius(dim, x));
  return 0;
}

/* The box [-1,1]^(dim-1) x [1/2,1] onto a cubed-sphere panel of the shell 1/2 < |x| < 1:
   (a, b, r) -> r (tan(pi a/4), tan(pi b/4), 1)/|.|, smooth and with a regular Jacobian everywhere */
static inline void BoxToShell(PetscInt dim, PetscInt Nf, PetscInt NfAux, const PetscInt uOff[], const PetscInt uOff_x[], const PetscScalar u[], const PetscScalar u_t[], const PetscScalar u_x[], const PetscInt aOff[], const PetscInt aOff_x[], const PetscScalar a[], const PetscScalar a_t[], const PetscScalar a_x[], PetscReal t, const PetscReal x[], PetscInt numConstants, const PetscScalar constants[], PetscScalar f0[])
{
  PetscReal dir[3], n2 = 0;

  (void)Nf, (void)NfAux, (void)uOff, (void)uOff_x, (void)u, (void)u_t, (void)u_x, (void)aOff, (void)aOff_x, (void)a, (void)a_t, (void)a_x, (void)t, (void)numConstants, (void)constants;
  for (PetscInt d = 0; d < dim - 1; d++) dir[d] = PetscTanReal(0.25 * PETSC_PI * x[d]);
  dir[dim - 1] = 1;
  for (PetscInt d = 0; d < dim; d++) n2 += dir[d] * dir[d];
  for (PetscInt d = 0; d < dim; d++) f0[d] = x[dim - 1] * dir[d] / PetscSqrtReal(n2);
}

#endif
