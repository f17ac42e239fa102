/* Private context of PCPATCHAMG; only src/pc/patchamg/ sees it. */
#ifndef PATCHWORK_PAIMPL_H
#define PATCHWORK_PAIMPL_H

#include "../../sys/pwimpl.h"
#include <patchwork/amg_kernel.h>
#include <petsc/private/pcimpl.h>
#include "padevmat.h"

/* PETSc's indices and scalars are the kernels' int and double (amg_kernel.h): the kernels and their CPU
   references can read PETSc's CSR arrays in place */
#define PCPatchAMGKernelTypes() (sizeof(PetscInt) == sizeof(int) && sizeof(PetscScalar) == sizeof(double) && !PetscDefined(USE_COMPLEX))

/* The patchSPM layout of one level's rank-local rows (amg_kernel.h), where the level's vectors live */
typedef struct {
  PatchworkSPMDesc desc;      /* host pointers, or device pointers when on_device */
  PetscBool        on_device;
  PetscInt         nnz_ai, nnz_ab;
  PetscInt         min_patch;
  PetscBool        has_ab;    /* any AB entry: the fused kernels need BoundaryResidual */
} PC_PatchAMGSPM;

/* One level of the graph hierarchy (pagraph.c), rank-local; arrays on the host or the device */
typedef struct {
  PatchworkGraph g;         /* the level's graph (level 0: the pattern of the matrix's diagonal block) */
  int           *agg;       /* vertex -> aggregate (= vertex of the next level); NULL on the coarsest */
  int            naggs;
  int           *patch;     /* aggregate -> patch */
  int            npatch;
  int           *order;     /* position -> vertex: patches contiguous, aggregates contiguous inside them */
  int           *pos;       /* vertex -> position */
  int           *patch_ptr; /* [npatch+1] positions */
} PC_PatchAMGGraphLevel;

typedef struct {
  PetscBool              dev;      /* arrays on the device (CUDA graph kernels) */
  PetscBool              borrowed; /* level 0's graph is the device matrix's own CSR, csr */
  PatchworkCSR           csr;
  Mat                    Ad;       /* the diagonal block it came from */
  PetscInt               n0;
  PetscInt               nl;
  PC_PatchAMGGraphLevel *L;
  PetscBool              redistribute; /* the last level is to be gathered onto fewer ranks (not the coarsest) */
} PC_PatchAMGGraph;

typedef struct {
  Mat            A;          /* level operator (level 0: the user's; level l+1: rows = aggregates of level l) */
  Mat            P;          /* prolongation from level l+1 (NULL on the coarsest) */
  Mat            R;          /* restriction when stored explicitly (geometric mode), else P^T is applied */
  Vec            b, x, r, y; /* right-hand side, solution, residual, correction */
  Vec            dscale;     /* point relaxations: the scaling of the residual */
  KSP            cheby;      /* relaxation chebyshev */
  Mat            spai;       /* relaxation spai1: the damped S = (M + M^T)/2 of SPAI(1)'s M */
  PetscReal      spai_shift; /* S += spai_shift diag(S) made S positive definite (0: not needed) */
  PC_PatchAMGSPM spm;
  PatchworkCSRMatrix P_arrays, A_arrays; /* host arrays under P and A when the product kernels made them */
  PetscInt       n, N;       /* local and global rows */
  PetscMPIInt    nranks;     /* ranks that hold rows of the level */
  PetscInt       naggs;      /* aggregates (rows of level l+1) on this rank */
  PetscInt       agg_min, agg_max;
  PetscReal      nnz;        /* global nonzeros */
  PetscReal      rho_dinv;   /* estimate of rho(D^-1 A) (prolongator smoothing, inner damping) */
  PetscLogEvent  ev_relax, ev_transfer;
} PC_PatchAMGLevel;

/* The DoF numberings of the geometric mode (Geveler et al., section 4) */
typedef enum {
  PC_PATCHAMG_RENUMBER_NATURAL,      /* the DM's own */
  PC_PATCHAMG_RENUMBER_RCM,          /* reverse Cuthill-McKee of every level's matrix */
  PC_PATCHAMG_RENUMBER_COORDINATE,   /* vertices sorted by z, then y, then x */
  PC_PATCHAMG_RENUMBER_HIERARCHICAL  /* each coarse vertex followed by the new vertices it is the first parent of */
} PC_PatchAMGRenumber;
PETSC_INTERN const char *const PC_PatchAMGRenumbers[];

typedef struct {
  /* options */
  PetscInt               k;            /* aggregates: k-MIS radius */
  PetscInt               min_agg;      /* aggregates below this size are dissolved */
  PetscBool              k_set, min_agg_set; /* given by the user (else the dimension's defaults) */
  PetscInt               dim;          /* -pc_patchamg_dim: 2 or 3 chooses k and min_agg's defaults (0: inferred) */
  PetscInt               patch_size;   /* weight cap of a patch (rows) */
  PetscInt               inner;        /* inner Jacobi sweeps per patch */
  PetscReal              omega;        /* damping of the relaxation update; 0: the default of the relaxation */
  PetscReal              inner_omega;  /* damping of the inner sweeps */
  PetscReal              prolong_omega;/* P = (I - w/rho D^-1 A) P~, w (4/3) */
  PetscReal              threshold;    /* strength of connection: aggregates and patches follow couplings >= threshold sqrt(|a_ii a_jj|) */
  PatchworkAMGRelax      relax;
  PetscInt               smooth_steps;
  PetscInt               coarse_size;
  PetscInt               redistribute; /* gather a level onto fewer ranks below this many rows per rank (0: never) */
  PetscInt               max_levels;
  PatchworkPrecision     precision;
  PetscInt               seed;
  PetscBool              check;        /* symmetry and definiteness checks at setup */
  PetscBool              product_kernels; /* one rank: P and the Galerkin operators by amg_kernel.h's kernels */
  PetscBool              block_products;  /* several ranks: the kernels on each rank's block (pampi.c) */
  PetscBool              geometric;    /* levels from the DM's refinement hierarchy instead of aggregates */
  PetscBool              use_coords;   /* geometry-informed aggregation where coordinates are known */
  double                *coords;       /* PCSetCoordinates(): this rank's points, interlaced (kept over resets) */
  PetscInt               coord_dim, ncoords;
  const char            *coord_source; /* set up: where level 0's coordinates came from (NULL: none, algebraic) */
  double                *gathered_coords; /* set up: the points of the rows a gathering gives this rank (the
                                             aggregate centroids of the level before), for the next segment */
  PetscInt               gathered_n, gathered_dim;
  PetscInt               coord_levels;  /* set up: aggregation levels that used coordinates */
  PetscInt               agg_k, agg_min; /* set up: the k and minimum aggregate size the aggregation used */
  PetscInt               agg_dim;       /* set up: the dimension their defaults were chosen for */
  const char            *agg_dim_source; /* set up: where agg_dim came from */
  PetscReal              agg_growth;    /* set up: |S_3|/|S_2| of the matrix graph's sampled neighbourhoods (-1: not measured) */
  /* set up */
  PetscInt               nlevels;      /* levels[0] finest */
  PC_PatchAMGLevel      *levels;
  KSP                    coarse;
  PetscBool              device;       /* level vectors live on the device */
  PetscBool              serial;       /* one rank: fused kernels with AB */
  PetscLogDouble         setup_time[4];
  /* singular matrices (pasingular.c): the null space attached with MatSetNullSpace(), carried to the
     coarsest level, where the coarse solve is the pseudo-inverse */
  MatNullSpace           nullsp;       /* the matrix's (one vector), NULL when it has none */
  Vec                    coarse_z;     /* its image on the coarsest level (NULL: the constants) */
  MatNullSpace           coarse_nullsp;/* that image normalized, when the coarsest matrix is singular with it */
  Vec                    coarse_mask;  /* 1 but 0 in the pinned row of the coarse operator */
  PetscInt               coarse_pin;   /* the pinned row (global) */
  PetscReal              coarse_null_residual; /* ||A_c z_c||_inf / (max|a_ii| ||z_c||_inf); -1: not computed */
  /* the geometric mode (pageometric.c; -pc_patchamg_hierarchy geometric): levels from the DM's
     refinement hierarchy; level l's P is a shell applying the explicit interpolation and restriction */
  PetscBool              relax_set;    /* the relaxation was chosen; else the geometric mode takes spai1 */
  PC_PatchAMGRenumber    renumber;
  char                  *mat_type;     /* the format of the level matrices, transfers, SPAI (NULL: the matrix's) */
  PetscBool              dm_interp;    /* always DMCreateInterpolation(), also for P1 */
  PetscBool              geo_p1;       /* set up: every interpolation was P1's by vertex matching */
  VecScatter             perm;         /* level 0: the user's order -> the renumbered one (NULL: natural) */
  PetscInt              *bandwidth;    /* [nlevels] max |i - j| over the level matrix's entries */
  PetscLogDouble         geo_time[2];  /* setup: renumbering, format conversion */
} PC_PatchAMG;

PETSC_INTERN PetscErrorCode PCSetUp_PatchAMG(PC);
PETSC_INTERN PetscErrorCode PCPatchAMGMatProduct(PC, MatProductType, Mat, Mat, PetscReal, Mat *);
PETSC_INTERN PetscErrorCode PCReset_PatchAMG(PC);
PETSC_INTERN PetscErrorCode PCApply_PatchAMG(PC, Vec, Vec);
PETSC_INTERN PetscErrorCode PCPatchAMGSetUpRelaxation(PC, PC_PatchAMGLevel *, const PC_PatchAMGGraphLevel *, PetscInt);
PETSC_INTERN PetscErrorCode PCPatchAMGSetUpCoarseSolver(PC, Mat);
PETSC_INTERN PetscErrorCode PCPatchAMGLevelSetUpVecs(PC_PatchAMGLevel *);
PETSC_INTERN PetscErrorCode PCPatchAMGMatCreateFromCSR(MPI_Comm, MatType, PetscInt, PetscInt, const PetscInt[], const PetscInt[], const PetscScalar[], Mat *);
PETSC_INTERN PetscErrorCode PCPatchAMGSetUpRelaxations(PC, const PC_PatchAMGGraphLevel *, PetscInt, PetscInt);
PETSC_INTERN PetscErrorCode PCPatchAMGSetUpCoarse(PC);
PETSC_INTERN PetscErrorCode PCPatchAMGSetUpRelaxationsAndCoarse(PC, const PC_PatchAMGGraphLevel *);
PETSC_INTERN PetscErrorCode PCPatchAMGSetUpGeometric(PC);
PETSC_INTERN PetscErrorCode PCPatchAMGResetGeometric(PC);
PETSC_INTERN PetscErrorCode PCPatchAMGUseProductKernels(PC, PetscBool *);
PETSC_INTERN PetscErrorCode PCPatchAMGProductKernels(PC, const PC_PatchAMGGraph *, PetscInt, Vec, Vec, PC_PatchAMGLevel *, PC_PatchAMGLevel *, Vec *);
PETSC_INTERN PetscErrorCode PCPatchAMGSmoothedProlongator(PC, const PC_PatchAMGGraph *, PetscInt, const PatchworkCSR *, Vec, Vec, MPI_Comm, PatchworkCSRMatrix *, Vec *);
PETSC_INTERN PetscErrorCode PCPatchAMGGetCSR(PetscBool, Mat, PatchworkCSR *);
PETSC_INTERN PetscErrorCode PCPatchAMGRestoreCSR(PetscBool, Mat, PatchworkCSR *);
/* several ranks: the same kernels on each rank's block (pampi.c) */
PETSC_INTERN PetscErrorCode PCPatchAMGUseProductKernelsMPI(PC, Mat, PetscInt, PetscInt, PetscBool *);
PETSC_INTERN PetscErrorCode PCPatchAMGProductKernelsMPI(PC, const PC_PatchAMGGraph *, PetscInt, Vec, Vec, PC_PatchAMGLevel *, PC_PatchAMGLevel *, Vec *);
PETSC_INTERN PetscErrorCode PCPatchAMGProductsDistributed(PC, const PC_PatchAMGGraph *, PetscInt, Vec, Vec, PC_PatchAMGLevel *, PC_PatchAMGLevel *, Vec *);
PETSC_INTERN PetscErrorCode PCPatchAMGGraphBuild(PC, Mat, PetscInt, PC_PatchAMGGraph *);
PETSC_INTERN PetscErrorCode PCPatchAMGAggregationDefaults(PC, Mat);
PETSC_INTERN PetscErrorCode PCPatchAMGGraphDestroy(PC_PatchAMGGraph *);
PETSC_INTERN PetscErrorCode PCPatchAMGGraphToHost(PetscBool, const int *, PetscInt, int **);
PETSC_INTERN PetscErrorCode PCPatchAMGGatherCoordinates(PC, const PC_PatchAMGGraph *, PetscInt, PetscInt);
PETSC_INTERN PetscErrorCode PCPatchAMGSPMCreate(PC_PatchAMG *, Mat, const PC_PatchAMGGraphLevel *, PC_PatchAMGSPM *);
PETSC_INTERN PetscErrorCode PCPatchAMGSPMDestroy(PC_PatchAMGSPM *);
PETSC_INTERN PetscErrorCode PCPatchAMGSPMRelax(PC_PatchAMG *, PC_PatchAMGSPM *, Vec, Vec, Vec, PetscBool);
PETSC_INTERN PetscErrorCode PCPatchAMGSetUpNullSpace(PC, Mat, Vec *);
PETSC_INTERN PetscErrorCode PCPatchAMGCoarseOperator(PC, Mat, Mat *);
PETSC_INTERN PetscErrorCode PCPatchAMGCoarseSolve(PC_PatchAMG *, Vec, Vec, Vec);
PETSC_INTERN PetscErrorCode PCPatchAMGCheckCoarseSolver(PC);
PETSC_INTERN PetscErrorCode PCPatchAMGSPMBoundaryResidual(PC_PatchAMG *, PC_PatchAMGSPM *, Vec, Vec, Vec);

#endif
