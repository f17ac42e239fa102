/* Private context of PCVERTEXPATCH; only src/pc/vertexpatch/ sees it. */
#ifndef PATCHWORK_VPIMPL_H
#define PATCHWORK_VPIMPL_H

#include "../../sys/pwimpl.h"
#include <patchwork/patch_kernel.h>
#include <petsc/private/pcimpl.h> /* a new PC type fills pc->ops, like PETSc's own PCs */

typedef struct {
  DM                    dm;
  Mat                   A;                     /* the level operator (the user's on the finest level) */
  Vec                   x, b, r, w;            /* level vectors: solution, right-hand side, residual, additive update */
  Vec                   xloc, bloc, yloc;      /* ghosted copies, several ranks only */
  PetscInt              cells[3];
  PatchworkPatchDesc    patch;                 /* smoother; color and vertex range set per call */
  Mat                   P;                     /* interpolation from the next coarser level (NULL on the coarsest) */
  PetscLogEvent         ev_smooth, ev_residual, ev_transfer;
  PetscLogDouble        smooth_flops;          /* per color sweep of this rank's patches */
} PC_VPLevel;

typedef struct {
  /* options */
  PetscInt             nlevels_req;            /* -pc_vertexpatch_levels, PETSC_DECIDE: as many as possible */
  PetscInt             smooth_steps;
  PatchworkVPType      type;
  PatchworkVPKernel    kernel;
  PetscReal            omega;                  /* additive damping; 0: 1/2^dim */
  PetscBool            symmetric;              /* post-smoothing sweeps the colors in reverse order */
  /* set up */
  PetscInt             dim, degree, nlevels;
  PetscBool            serial;                 /* one rank: kernels act on the global arrays */
  PC_VPLevel          *levels;                 /* levels[0] coarsest, levels[nlevels-1] finest */
  PetscBool            coarse_patch;           /* coarsest level has one patch: its smoother is exact */
  KSP                  coarse_ksp;             /* otherwise a Krylov solve on the coarsest level */
  PatchworkTensorDesc  boundary;               /* finest level, owned nodes: Dirichlet rows pass through */
} PC_VertexPatch;

PETSC_INTERN PetscErrorCode PCSetUp_VertexPatch(PC);
PETSC_INTERN PetscErrorCode PCApply_VertexPatch(PC, Vec, Vec);
PETSC_INTERN PetscErrorCode PCReset_VertexPatch(PC);

#endif
