/* Private context of PCPATCHAMG; only src/pc/patchamg/ sees it. */
#ifndef PATCHWORK_PAIMPL_H
#define PATCHWORK_PAIMPL_H

#include "../../sys/pwimpl.h"
#include <patchwork/amg_kernel.h>
#include <petsc/private/pcimpl.h>

/* The patchSPM layout of one level's rank-local rows (amg_kernel.h): host arrays always (the CPU
   reference and the statistics), device copies when the level's vectors live on the device */
typedef struct {
  PatchworkSPMDesc host, dev; /* the same layout; dev holds device pointers (unused on the CPU) */
  PetscInt         nnz_ai, nnz_ab;
  PetscInt         min_patch;
  PetscBool        has_ab;    /* any AB entry: the fused kernels need BoundaryResidual */
} PC_PatchAMGSPM;

typedef struct {
  Mat            A;          /* level operator, rows in patch order (level 0: the user's, permuted) */
  Mat            P;          /* prolongation from level l+1 (NULL on the coarsest) */
  Vec            b, x, r, y; /* right-hand side, solution, residual, correction */
  Vec            dscale;     /* point relaxations: the scaling of the residual */
  KSP            cheby;      /* relaxation chebyshev */
  PC_PatchAMGSPM spm;
  PetscInt       n, N;       /* local and global rows */
  PetscInt       naggs;      /* aggregates (rows of level l+1) on this rank */
  PetscInt       agg_min, agg_max;
  PetscReal      nnz;        /* global nonzeros */
  PetscReal      rho_dinv;   /* estimate of rho(D^-1 A) (prolongator smoothing, inner damping) */
  PetscReal      lambda_relax; /* estimate of lambda_max(M^-1 A) of the undamped patch relaxation */
  PetscLogEvent  ev_relax, ev_transfer;
} PC_PatchAMGLevel;

typedef struct {
  /* options */
  PetscInt               k;            /* aggregates: k-MIS radius */
  PetscInt               min_agg;      /* aggregates below this size are dissolved */
  PetscInt               patch_size;   /* weight cap of a patch (rows) */
  PetscInt               inner;        /* inner Jacobi sweeps per patch */
  PetscReal              omega;        /* damping of the relaxation update; 0: the default of the relaxation */
  PetscReal              inner_omega;  /* damping of the inner sweeps */
  PetscReal              prolong_omega;/* P = (I - w/rho D^-1 A) P~, w (4/3) */
  PatchworkAMGRelax      relax;
  PetscInt               smooth_steps;
  PetscInt               coarse_size;
  PetscInt               max_levels;
  PatchworkPrecision     precision;
  PetscInt               seed;
  PetscBool              check;        /* symmetry and definiteness checks at setup */
  /* set up */
  PetscInt               nlevels;      /* levels[0] finest */
  PC_PatchAMGLevel      *levels;
  IS                     perm;         /* level-0 rows in patch order (global indices of the user's rows) */
  VecScatter             to_patch;     /* user's order -> patch order */
  KSP                    coarse;
  PetscBool              device;       /* level vectors live on the device */
  PetscBool              serial;       /* one rank: fused kernels with AB */
  PetscLogDouble         setup_time[4];
} PC_PatchAMG;

PETSC_INTERN PetscErrorCode PCSetUp_PatchAMG(PC);
PETSC_INTERN PetscErrorCode PCReset_PatchAMG(PC);
PETSC_INTERN PetscErrorCode PCApply_PatchAMG(PC, Vec, Vec);
PETSC_INTERN PetscErrorCode PCPatchAMGSPMCreate(PC_PatchAMG *, Mat, const int[], PetscInt, PC_PatchAMGSPM *);
PETSC_INTERN PetscErrorCode PCPatchAMGSPMDestroy(PC_PatchAMGSPM *, PetscBool);
PETSC_INTERN PetscErrorCode PCPatchAMGSPMRelax(PC_PatchAMG *, PC_PatchAMGSPM *, Vec, Vec, Vec, PetscBool);
PETSC_INTERN PetscErrorCode PCPatchAMGSPMBoundaryResidual(PC_PatchAMG *, PC_PatchAMGSPM *, Vec, Vec, Vec);

#endif
