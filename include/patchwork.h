/* Patchwork: GPU preconditioners and matrix-free operators for high-order finite elements in PETSc.
   The one public header. */
#ifndef PATCHWORK_H
#define PATCHWORK_H

#include <petscdmda.h>
#include <petscdmplex.h>
#include <petscksp.h>

#define PATCHWORK_VERSION_MAJOR 0
#define PATCHWORK_VERSION_MINOR 1
#define PATCHWORK_VERSION_PATCH 0

PETSC_EXTERN PetscErrorCode PatchworkInitializePackage(void);
PETSC_EXTERN PetscErrorCode PatchworkFinalizePackage(void);

/* Log events, registered by PatchworkInitializePackage() */
PETSC_EXTERN PetscLogEvent PATCHWORK_TensorSetUp, PATCHWORK_TensorMult, PATCHWORK_TensorDiagonal, PATCHWORK_VPSetUp, PATCHWORK_VPApply, PATCHWORK_VPCoarse, PATCHWORK_Transfer, PATCHWORK_Halo;
PETSC_EXTERN PetscLogEvent PATCHWORK_HaloSetUp, PATCHWORK_Levels, PATCHWORK_VPGather;
PETSC_EXTERN PetscLogEvent PATCHWORK_PlexElements, PATCHWORK_PlexGeometry;
PETSC_EXTERN PetscLogEvent PATCHWORK_AMGGraph, PATCHWORK_AMGProlong, PATCHWORK_AMGGalerkin, PATCHWORK_AMGRelaxSetUp, PATCHWORK_AMGCoarse, PATCHWORK_AMGCoarseSolve, PATCHWORK_AMGApply, PATCHWORK_SPAI1, PATCHWORK_AMGGhostRows, PATCHWORK_AMGCoarseRows, PATCHWORK_MatSplitRows, PATCHWORK_NCCLInit;
PETSC_EXTERN PetscLogEvent PATCHWORK_LORPattern, PATCHWORK_LORMacro, PATCHWORK_LORGather, PATCHWORK_LORDirichlet, PATCHWORK_LORSetValues, PATCHWORK_LORInnerSetUp, PATCHWORK_LORApply;

/*E
  PatchworkTensorQuadrature - quadrature of the tensor-product operator

  Values:
+ PATCHWORK_QUADRATURE_GAUSS        - k+1 Gauss points per direction (exact integration, default)
- PATCHWORK_QUADRATURE_GAUSSLOBATTO - k+1 Gauss-Lobatto points collocated with the nodes (lumped mass)
E*/
typedef enum {
  PATCHWORK_QUADRATURE_GAUSS,
  PATCHWORK_QUADRATURE_GAUSSLOBATTO
} PatchworkTensorQuadrature;
PETSC_EXTERN const char *const PatchworkTensorQuadratures[];

/*E
  PatchworkTensorBC - boundary conditions of the tensor-product operator

  Values:
+ PATCHWORK_BC_DIRICHLET - homogeneous Dirichlet; boundary rows and columns act as the identity (default)
- PATCHWORK_BC_NATURAL   - natural (Neumann) conditions; every node is an unknown
E*/
typedef enum {
  PATCHWORK_BC_DIRICHLET,
  PATCHWORK_BC_NATURAL
} PatchworkTensorBC;
PETSC_EXTERN const char *const PatchworkTensorBCs[];

/*E
  PatchworkTensorMesh - the mesh a tensor-product operator lives on

  Values:
+ PATCHWORK_MESH_CARTESIAN - a DMDA node grid of an axis-aligned box (constant cell size)
- PATCHWORK_MESH_GENERAL   - a DMPlex of quadrilaterals or hexahedra, straight or curved, with
                             geometric factors stored per quadrature point (or, for multilinear
                             cells on the GPU, computed in every apply)
E*/
typedef enum {
  PATCHWORK_MESH_CARTESIAN,
  PATCHWORK_MESH_GENERAL
} PatchworkTensorMesh;
PETSC_EXTERN const char *const PatchworkTensorMeshes[];

/*S
  PatchworkCoefficientFn - a coefficient of the operator as a function of the position, evaluated at
  the quadrature points when the operator is set up

  Calling sequence:
+ dim   - the spatial dimension
. x     - the point
. value - the coefficient at x (output)
- ctx   - the user context
S*/
typedef PetscErrorCode (*PatchworkCoefficientFn)(PetscInt dim, const PetscReal x[], PetscReal *value, void *ctx);

/* What the operator is, for the preconditioners (and users) that need to know */
typedef struct {
  DM                        dm;        /* the DMDA node grid or the DMPlex (not referenced) */
  PatchworkTensorMesh       mesh;
  PetscBool                 variable;  /* alpha and beta are multiplied by variable coefficients r(x), c(x) */
  PetscInt                  dim, degree;
  PetscInt                  cells[3];  /* Cartesian: cells per direction (1 in unused directions);
                                          general: cells[0] is the number of cells on this rank */
  PetscReal                 lower[3], upper[3]; /* Cartesian: the box */
  PetscInt                  qpoints;   /* quadrature points per direction */
  PetscReal                 alpha, beta;        /* alpha*M + beta*K */
  PatchworkTensorQuadrature quadrature;
  PatchworkTensorBC         bc;
} PatchworkTensorInfo;

/*J
  PCVERTEXPATCH - "vertexpatch": geometric multigrid with multiplicative vertex-patch Schwarz smoothing
J*/
#define PCVERTEXPATCH "vertexpatch"

/*E
  PatchworkVPType - how the vertex patches of PCVERTEXPATCH are combined

  Values:
+ PATCHWORK_VP_MULTIPLICATIVE - colors one after the other, each seeing the updates of the previous (default)
- PATCHWORK_VP_ADDITIVE       - all patches from the same residual, damped
E*/
typedef enum {
  PATCHWORK_VP_MULTIPLICATIVE,
  PATCHWORK_VP_ADDITIVE
} PatchworkVPType;
PETSC_EXTERN const char *const PatchworkVPTypes[];

/*E
  PatchworkVPKernel - how a multiplicative smoothing step computes residuals (Cui et al. 2024, table 4)

  Values:
+ PATCHWORK_VP_KERNEL_FUSED    - local residual on each patch and local solve in one kernel (default)
. PATCHWORK_VP_KERNEL_GLOBAL   - global residual with the operator, then the local solves
- PATCHWORK_VP_KERNEL_SEPARATE - local residuals of one color's patches in one kernel, their solves in another
E*/
typedef enum {
  PATCHWORK_VP_KERNEL_FUSED,
  PATCHWORK_VP_KERNEL_GLOBAL,
  PATCHWORK_VP_KERNEL_SEPARATE
} PatchworkVPKernel;
PETSC_EXTERN const char *const PatchworkVPKernels[];

/*E
  PatchworkPrecision - the precision a preconditioner works in; the outer Krylov method stays in PetscScalar

  Values:
+ PATCHWORK_PRECISION_SINGLE - float arrays owned by the preconditioner, converted on entry and exit of PCApply()
- PATCHWORK_PRECISION_DOUBLE - PETSc vectors throughout
E*/
typedef enum {
  PATCHWORK_PRECISION_SINGLE,
  PATCHWORK_PRECISION_DOUBLE
} PatchworkPrecision;
PETSC_EXTERN const char *const PatchworkPrecisions[];

PETSC_EXTERN PetscErrorCode PCVertexPatchSetLevels(PC, PetscInt);
PETSC_EXTERN PetscErrorCode PCVertexPatchGetLevels(PC, PetscInt *);
PETSC_EXTERN PetscErrorCode PCVertexPatchSetType(PC, PatchworkVPType);
PETSC_EXTERN PetscErrorCode PCVertexPatchSetSmoothSteps(PC, PetscInt);
PETSC_EXTERN PetscErrorCode PCVertexPatchSetPrecision(PC, PatchworkPrecision);
PETSC_EXTERN PetscErrorCode PCVertexPatchGetPrecision(PC, PatchworkPrecision *);
PETSC_EXTERN PetscErrorCode PCVertexPatchFMG(PC, Vec, Vec);

/*J
  PCLOR - "lor": low-order-refined preconditioning, a PETSc PC (AMG by default) on the Q1 matrix of the mesh refined at the Gauss-Lobatto nodes
J*/
#define PCLOR "lor"

PETSC_EXTERN PetscErrorCode PCLORSetDegree(PC, PetscInt);
PETSC_EXTERN PetscErrorCode PCLORSetCoefficients(PC, PetscReal, PetscReal);
PETSC_EXTERN PetscErrorCode PCLORSetBC(PC, PatchworkTensorBC);
PETSC_EXTERN PetscErrorCode PCLORSetQuadrature(PC, PatchworkTensorQuadrature);
PETSC_EXTERN PetscErrorCode PCLORGetMatrix(PC, Mat *);
PETSC_EXTERN PetscErrorCode PCLORGetInnerPC(PC, PC *);

/*J
  PCPATCHAMG - "patchamg": smoothed-aggregation AMG with patch block-Jacobi relaxation, for assembled SPD matrices of unstructured meshes
J*/
#define PCPATCHAMG "patchamg"

/*E
  PatchworkAMGRelax - the relaxation of PCPATCHAMG

  Values:
+ PATCHWORK_AMG_RELAX_PATCH     - weighted block Jacobi over patches, each block by inner Jacobi sweeps (default; Fu et al. 2014)
. PATCHWORK_AMG_RELAX_JACOBI    - damped point Jacobi
. PATCHWORK_AMG_RELAX_L1JACOBI  - l1-Jacobi, scaled by the rows' l1 norms
. PATCHWORK_AMG_RELAX_SPAI0     - the diagonal sparse approximate inverse a_ii / ||a_i||^2
. PATCHWORK_AMG_RELAX_CHEBYSHEV - Chebyshev polynomial in D^-1 A (a PETSc KSP, options prefix -pc_patchamg_levels_)
- PATCHWORK_AMG_RELAX_SPAI1     - the sparse approximate inverse M on A's pattern (PatchworkMatCreateSPAI1), symmetrized (M + M^T)/2 and damped
E*/
typedef enum {
  PATCHWORK_AMG_RELAX_PATCH,
  PATCHWORK_AMG_RELAX_JACOBI,
  PATCHWORK_AMG_RELAX_L1JACOBI,
  PATCHWORK_AMG_RELAX_SPAI0,
  PATCHWORK_AMG_RELAX_CHEBYSHEV,
  PATCHWORK_AMG_RELAX_SPAI1
} PatchworkAMGRelax;
PETSC_EXTERN const char *const PatchworkAMGRelaxes[];

PETSC_EXTERN PetscErrorCode PCPatchAMGSetRelax(PC, PatchworkAMGRelax);

/*E
  PatchworkAMGHierarchy - where the levels of PCPATCHAMG come from

  Values:
+ PATCHWORK_AMG_HIERARCHY_ALGEBRAIC - smoothed aggregation on the matrix (default; Fu et al. 2014)
- PATCHWORK_AMG_HIERARCHY_GEOMETRIC - the refinement hierarchy of the PC's DMPlex: interpolation from DMCreateInterpolation(),
                                      Galerkin coarse operators, every operation an SpMV (Geveler et al.)
E*/
typedef enum {
  PATCHWORK_AMG_HIERARCHY_ALGEBRAIC,
  PATCHWORK_AMG_HIERARCHY_GEOMETRIC
} PatchworkAMGHierarchy;
PETSC_EXTERN const char *const PatchworkAMGHierarchies[];

PETSC_EXTERN PetscErrorCode PCPatchAMGSetHierarchy(PC, PatchworkAMGHierarchy);
PETSC_EXTERN PetscErrorCode PCPatchAMGSetPrecision(PC, PatchworkPrecision);
PETSC_EXTERN PetscErrorCode PCPatchAMGSetPatchSize(PC, PetscInt);
PETSC_EXTERN PetscErrorCode PCPatchAMGSetDimension(PC, PetscInt);
PETSC_EXTERN PetscErrorCode PCPatchAMGGetNumberLevels(PC, PetscInt *);

/* DMDA node grids for Q_k elements */
PETSC_EXTERN PetscErrorCode PatchworkDMDACreateQk(MPI_Comm, PetscInt dim, PetscInt degree, const PetscInt cells[], const PetscReal lower[], const PetscReal upper[], DM *);
PETSC_EXTERN PetscErrorCode PatchworkDMDASetCoordinatesQk(DM, PetscInt degree, const PetscReal lower[], const PetscReal upper[]);

/* The matrix-free tensor-product operator (a MATSHELL) */
PETSC_EXTERN PetscErrorCode MatCreatePatchworkTensor(DM, PetscInt degree, Mat *);
PETSC_EXTERN PetscErrorCode MatPatchworkTensorSetCoefficients(Mat, PetscReal alpha, PetscReal beta);
PETSC_EXTERN PetscErrorCode MatPatchworkTensorSetQuadrature(Mat, PatchworkTensorQuadrature);
PETSC_EXTERN PetscErrorCode MatPatchworkTensorSetBC(Mat, PatchworkTensorBC);
PETSC_EXTERN PetscErrorCode MatPatchworkTensorGetInfo(Mat, PatchworkTensorInfo *);
PETSC_EXTERN PetscErrorCode MatIsPatchworkTensor(Mat, PetscBool *);
/* General meshes (DMPlex): the Q_k field, quadrature points and variable coefficients */
PETSC_EXTERN PetscErrorCode PatchworkDMPlexSetQkField(DM, PetscInt degree, PetscBool dirichlet);
PETSC_EXTERN PetscErrorCode MatPatchworkTensorSetQuadraturePoints(Mat, PetscInt);
PETSC_EXTERN PetscErrorCode MatPatchworkTensorSetGeometryOnTheFly(Mat, PetscBool);
PETSC_EXTERN PetscErrorCode MatPatchworkTensorSetCoefficientFunctions(Mat, PatchworkCoefficientFn diffusion, PatchworkCoefficientFn reaction, void *ctx);
PETSC_EXTERN PetscErrorCode MatPatchworkTensorSetCoefficientVecs(Mat, Vec diffusion, Vec reaction);
PETSC_EXTERN PetscErrorCode MatPatchworkTensorGetQuadraturePoints(Mat, Vec *);
/* Hanging nodes: split the cells of stratum `value` of `marked` of a serial conforming DMPlex of quadrilaterals
   (hexahedra), or of a tree this made, once, into 2^dim children each; *tree is a 1-irregular PETSc tree
   (DMPlexSetTree()) whose hanging faces and edges PETSc constrains itself. Vertex coordinates only;
   distribute *tree afterwards. RefineBalance first adds the coarser cells the 2:1 balance needs. */
PETSC_EXTERN PetscErrorCode PatchworkDMPlexRefineCells(DM dm, DMLabel marked, PetscInt value, DM *tree);
PETSC_EXTERN PetscErrorCode PatchworkDMPlexRefineBalance(DM dm, DMLabel marked, PetscInt value, PetscInt *added);

/* Multigrid hierarchies of the operator: Q_k interpolation between a grid and its refinement, PCMG levels */
PETSC_EXTERN PetscErrorCode MatCreatePatchworkTransfer(Mat, Mat, Mat *);
PETSC_EXTERN PetscErrorCode PCMGSetPatchworkHierarchy(PC, PetscInt);

/* P1 finite elements on triangles and tetrahedra (DMPlex): the Helmholtz matrix -div(sigma grad u) + lambda u,
   natural boundary conditions, sigma one value per local cell (or NULL for 1); on the GPU for a CUDA matrix type */
PETSC_EXTERN PetscErrorCode PatchworkDMPlexAssembleP1(DM dm, PetscReal lambda, Vec sigma, Mat *A);
/* New values (lambda, sigma) into a matrix of PatchworkDMPlexAssembleP1() on the same DM, its layout and pattern kept */
PETSC_EXTERN PetscErrorCode PatchworkDMPlexReassembleP1(DM dm, PetscReal lambda, Vec sigma, Mat A);
/* SPAI(1): M on A's pattern minimizing ||I - M A||_F row by row (Geveler et al.; src/pc/patchamg/paspai.c) */
PETSC_EXTERN PetscErrorCode PatchworkMatCreateSPAI1(Mat A, Mat *M);

#endif
