/* Private context of PCVERTEXPATCH; only src/pc/vertexpatch/ sees it. */
#ifndef PATCHWORK_VPIMPL_H
#define PATCHWORK_VPIMPL_H

#include "../../sys/pwimpl.h"
#include "../../mat/tensor/cartesian.h"
#include "../../mat/transfer/hierarchy.h"
#include <patchwork/patch_kernel.h>
#include <petsc/private/pcimpl.h> /* a new PC type fills pc->ops, like PETSc's own PCs */

/* -pc_vertexpatch_gather_nodes by default: device vectors, host vectors */
#define PCVERTEXPATCH_GATHER_NODES_DEVICE 2097152
#define PCVERTEXPATCH_GATHER_NODES_HOST   4096

/* The level vectors of the cycle: solution, right-hand side, residual, additive update */
typedef enum {
  VP_X,
  VP_B,
  VP_R,
  VP_W,
  VP_NVEC
} VPVec;

/* Ghosted copies of a level's vectors, several ranks only: a kernel's input, the right-hand side
   (ghosted once per smoothing), its output (corrections added to the owners), a local residual.
   The smoother and the operator fill and read only the entries their boundary patches and cells
   touch (bhalo); the single-precision transfers all of them (halo) */
typedef enum {
  VP_LX,
  VP_LB,
  VP_LY,
  VP_LR,
  VP_NLOC
} VPLoc;

typedef struct {
  DM                    dm;                    /* NULL on a level without a DM (one rank, between the coarsest and the finest) */
  Mat                   A;                     /* the level operator (the user's on the finest level) */
  PetscInt              n;                     /* entries of this rank's level vectors */
  Vec                   v[VP_NVEC];            /* double precision; in single only on level 0 for the coarse KSP */
  float                *f[VP_NVEC];            /* single precision: arrays the PC owns (device or host) */
  void                 *loc[VP_NLOC];          /* ghosted copies, several ranks, in the cycle's precision */
  PatchworkHalo         halo;                  /* all their ghosts (single precision transfers) */
  PatchworkHalo         bhalo;                 /* the entries the boundary patches and cells touch */
  PetscInt              nloc;                  /* entries of the ghosted copies */
  PetscInt              cells[3];
  PatchworkPatchDesc    patch;                 /* smoother; color and vertex range set per call; patch.op applies the operator */
  /* several ranks: the patches and cells whose nodes are all owned run on the global arrays (the
     owned box); the others, near the rank's faces, on the ghosted copies */
  PatchworkPatchDesc    patch_int, patch_bnd[6];
  PetscInt              npatch_bnd;
  PatchworkTensorDesc   op_int, op_bnd[6];
  PetscInt              nop_bnd;
  /* patches computed redundantly (vp->redundant and wide enough boxes on every rank): every patch
     whose interior holds an owned node runs here, those near the faces on copies ghosted 2k - 1 deep
     (their own layout: wloc, filled by whalo), and only their owned entries are kept, so that no
     correction travels: one exchange per color instead of two */
  PetscBool             redundant;
  PatchworkHalo         whalo;
  void                 *wloc[VP_NLOC];
  PetscInt              wgs[3], wgm[3];        /* the corners of those copies */
  PatchworkPatchDesc    wpatch_bnd[6];
  PetscInt              nwpatch_bnd;
  Mat                   P;                     /* interpolation from the next coarser level (NULL on the coarsest) */
  PatchworkTransferDesc transfer;              /* its kernel descriptor, for single precision */
  PetscLogEvent         ev_smooth, ev_residual, ev_transfer;
  PetscLogDouble        smooth_flops;          /* per color sweep of this rank's patches */
  PetscLogDouble        apply_flops;           /* per operator apply */
} PC_VPLevel;

typedef struct {
  /* options */
  PetscInt             nlevels_req;            /* -pc_vertexpatch_levels, PETSC_DECIDE: as many as possible */
  PetscInt             smooth_steps;
  PatchworkVPType      type;
  PatchworkVPKernel    kernel;
  PatchworkPrecision   precision;              /* requested */
  PetscReal            omega;                  /* additive damping; 0: 1/2^dim */
  PetscBool            symmetric;              /* post-smoothing sweeps the colors in reverse order */
  PetscBool            redundant;              /* several ranks: neighbours' boundary patches run here too */
  PetscInt             gather_nodes;           /* several ranks: levels of at most this many nodes run gathered; PETSC_DEFAULT: by the vectors' side, 0: never */
  /* set up */
  PetscInt             dim, degree, nlevels;
  PetscBool            serial;                 /* one rank: kernels act on the global arrays */
  PetscBool            single;                 /* the cycle runs in float on the f[] arrays */
  PetscBool            device;                 /* the f[] arrays are device memory */
  PC_VPLevel          *levels;                 /* levels[0] coarsest, levels[nlevels-1] finest */
  PetscBool            coarse_patch;           /* coarsest level has one patch: its smoother is exact */
  KSP                  coarse_ksp;             /* otherwise a Krylov solve on the coarsest level */
  /* several ranks, the coarse levels gathered (vpgather.c): levels[0] is then the finest of them, which
     every rank gathers whole and hands to a PCVERTEXPATCH of its own on PETSC_COMM_SELF with the
     ngathered coarser levels below it, so that they exchange nothing */
  PetscInt             ngathered;              /* levels only the gathered PC has (0: none gathered) */
  PetscInt             gather_limit;           /* gather_nodes as it applied */
  PC                   gathered;               /* that PC, on the whole grid of levels[0] */
  VecScatter           gather, scatter;        /* levels[0]'s vector to every rank's whole copy (natural order), and back */
  Vec                  gb, gx;                 /* the whole copies */
  PatchworkTensorDesc  boundary;               /* finest level, owned nodes: Dirichlet rows pass through */
  /* what the set-up was made for beyond the coefficients (the grid is the finest level's: dm, cells):
     when none of it changed, PCSetUp() again refreshes only what the coefficients enter */
  PetscInt             setup_degree;
  PatchworkVPType      setup_type;
  PatchworkVPKernel    setup_kernel;
  PetscBool            setup_redundant;
  PetscInt             setup_gather_nodes;
  PetscInt             nrefresh;               /* set-ups since the last full one that refreshed only that */
} PC_VertexPatch;

PETSC_INTERN PetscErrorCode PCSetUp_VertexPatch(PC);
PETSC_INTERN PetscErrorCode PCApply_VertexPatch(PC, Vec, Vec);
PETSC_INTERN PetscErrorCode PCReset_VertexPatch(PC);

/* the gathered coarse levels (vpgather.c) */
PETSC_INTERN PetscErrorCode PCVertexPatchGatherLevels(PC, const PatchworkTensorInfo *, PetscInt, PetscInt, PetscInt *);
PETSC_INTERN PetscErrorCode PCVertexPatchGatherSetUp(PC);
PETSC_INTERN PetscErrorCode PCVertexPatchGatherRefresh(PC);
PETSC_INTERN PetscErrorCode PCVertexPatchGatherSolve(PC, PetscBool);
PETSC_INTERN PetscErrorCode PCVertexPatchGatherView(PC, PetscViewer);
PETSC_INTERN PetscErrorCode PCVertexPatchGatherReset(PC);
/* a cycle of pc on its finest level for x with right-hand side b, without the Dirichlet rows' pass:
   what a level of the outer cycle runs (vpcycle.c) */
PETSC_INTERN PetscErrorCode PCVertexPatchCycleWithin(PC, Vec, Vec, PetscBool);

#endif
