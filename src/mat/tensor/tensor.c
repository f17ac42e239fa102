/* The matrix-free tensor-product operator alpha*M + beta*K: a MATSHELL on a DMDA Q_k node grid.
   This file creates, configures and describes it; tensor_mult.c applies it. */
#include "tensorimpl.h"
#include <petscdmforest.h>

static const char        *const ScatterTypes[] = {"atomic", "colored", "PatchworkScatter", "PW_SCATTER_", NULL};
static PetscBool          cited                = PETSC_FALSE;
static const char         citation[]           = "@article{CuiGrosseBleyKanschatStrzodka2024,\n"
                                                 "  title   = {An implementation of tensor product patch smoothers on {GPU}s},\n"
                                                 "  author  = {Cui, Cu and Grosse-Bley, Paul and Kanschat, Guido and Strzodka, Robert},\n"
                                                 "  journal = {arXiv preprint arXiv:2405.19004},\n"
                                                 "  year    = {2024}\n}\n";

static PetscErrorCode MatDestroy_PatchworkTensor(Mat A)
{
  Mat_PatchworkTensor *ctx;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &ctx));
  PetscCall(VecDestroy(&ctx->xloc));
  PetscCall(VecDestroy(&ctx->yloc));
  PetscCall(VecDestroy(&ctx->work));
  PetscCall(PatchworkTensorDestroyExchange(ctx));
  PetscCall(PatchworkPlexDestroy(&ctx->plex));
  PetscCall(DMDestroy(&ctx->info.dm));
  PetscCall(PetscFree(ctx));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatPatchworkTensorGetInfo_C", NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PatchworkTensorGetContext(Mat A, Mat_PatchworkTensor **ctx)
{
  PetscBool is;

  PetscFunctionBegin;
  PetscCall(MatIsPatchworkTensor(A, &is));
  PetscCheck(is, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "Mat is not a Patchwork tensor-product operator: create it with MatCreatePatchworkTensor()");
  PetscCall(MatShellGetContext(A, ctx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* alpha M + beta K is positive definite when neither coefficient is negative and the stiffness part
   has no null space (Dirichlet) or the mass part is there. Saying so lets PETSc skip host-side
   checks: PCJACOBI, for one, otherwise scans its diagonal on the host for negative entries. */
static PetscErrorCode SetDefiniteness(Mat A, const PatchworkTensorInfo *info)
{
  const PetscBool spd = (PetscBool)(info->alpha >= 0 && info->beta >= 0 && (info->alpha > 0 || (info->beta > 0 && info->bc == PATCHWORK_BC_DIRICHLET)));

  PetscFunctionBegin;
  PetscCall(MatSetOption(A, MAT_SPD, spd));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The owned and ghosted boxes of this rank's nodes: the DMDA's, or the whole grid of an operator
   without a DM (one rank) */
PetscErrorCode PatchworkTensorInfoGhostCorners(const PatchworkTensorInfo *info, PetscInt xs[3], PetscInt xm[3], PetscInt gs[3], PetscInt gm[3])
{
  PetscFunctionBegin;
  if (info->dm) {
    PetscCall(DMDAGetCorners(info->dm, &xs[0], &xs[1], &xs[2], &xm[0], &xm[1], &xm[2]));
    PetscCall(DMDAGetGhostCorners(info->dm, &gs[0], &gs[1], &gs[2], &gm[0], &gm[1], &gm[2]));
  } else {
    for (PetscInt d = 0; d < 3; d++) {
      xs[d] = gs[d] = 0;
      xm[d] = gm[d] = d < info->dim ? info->degree * info->cells[d] + 1 : 1;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PatchworkTensorInfoCorners(const PatchworkTensorInfo *info, PetscInt xs[3], PetscInt xm[3])
{
  PetscInt gs[3], gm[3];

  PetscFunctionBegin;
  PetscCall(PatchworkTensorInfoGhostCorners(info, xs, xm, gs, gm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A changed setting: the descriptors are filled again at the next apply (PatchworkTensorSetUpDescriptors()),
   except without a DM, where that would ask the DM for its corners: filled here, as it does serially */
static PetscErrorCode InvalidateDescriptors(Mat_PatchworkTensor *ctx)
{
  PetscFunctionBegin;
  ctx->descvalid = PETSC_FALSE;
  if (!ctx->nodm) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventBegin(PATCHWORK_TensorSetUp, 0, 0, 0, 0));
  PetscCall(PatchworkTensorFillDesc(&ctx->info, ctx->scatter, PETSC_TRUE, &ctx->cells_desc, &ctx->owned_desc, &ctx->flops));
  ctx->cells_desc.overwrite = 1; /* MatMult and MatGetDiagonal set y */
  ctx->descvalid            = PETSC_TRUE;
  PetscCall(PetscLogEventEnd(PATCHWORK_TensorSetUp, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatView_PatchworkTensor(Mat A, PetscViewer viewer)
{
  Mat_PatchworkTensor *ctx;
  PetscBool            ascii;
  VecType              vtype;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (!ascii) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatShellGetContext(A, &ctx));
  if (ctx->plex) {
    PetscCall(PatchworkPlexView(A, viewer));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatGetVecType(A, &vtype)); /* the DM's (MatCreatePatchworkTensor()); an operator without a DM has none */
  PetscCall(PetscViewerASCIIPrintf(viewer, "Patchwork tensor-product operator %g*M + %g*K, Q%" PetscInt_FMT " Lagrange on Gauss-Lobatto nodes, %" PetscInt_FMT "D\n", (double)ctx->info.alpha, (double)ctx->info.beta, ctx->info.degree, ctx->info.dim));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  if (ctx->info.dim == 2) PetscCall(PetscViewerASCIIPrintf(viewer, "cells %" PetscInt_FMT " x %" PetscInt_FMT " on [%g,%g]x[%g,%g]\n", ctx->info.cells[0], ctx->info.cells[1], (double)ctx->info.lower[0], (double)ctx->info.upper[0], (double)ctx->info.lower[1], (double)ctx->info.upper[1]));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "cells %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT " on [%g,%g]x[%g,%g]x[%g,%g]\n", ctx->info.cells[0], ctx->info.cells[1], ctx->info.cells[2], (double)ctx->info.lower[0], (double)ctx->info.upper[0], (double)ctx->info.lower[1], (double)ctx->info.upper[1], (double)ctx->info.lower[2], (double)ctx->info.upper[2]));
  PetscCall(PetscViewerASCIIPrintf(viewer, "quadrature: %s, %" PetscInt_FMT " points per direction; boundary conditions: %s\n", PatchworkTensorQuadratures[ctx->info.quadrature], ctx->info.degree + 1, PatchworkTensorBCs[ctx->info.bc]));
  PetscCall(PetscViewerASCIIPrintf(viewer, "backend: %s (vector type %s), precision double, scatter %s, %s\n", PetscDefined(HAVE_CUDA) && vtype && strstr(vtype, "cuda") ? "CUDA kernels on device vectors" : "CPU sum factorization", vtype ? vtype : "standard", ScatterTypes[ctx->scatter],
                                   ctx->serial ? "one rank: no ghost exchange" : (ctx->plex ? "ghost exchange through the DM" : "interior cells on the owned arrays, the boundary layer through a halo of its nodes")));
  for (int device = 0; device < 2; device++) {
    const char *path;

    if (!ctx->halo[device]) continue;
    PetscCall(PatchworkHaloGetPath(ctx->halo[device], &path));
    PetscCall(PetscViewerASCIIPrintf(viewer, "halo exchange: %s\n", path));
  }
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetFromOptions_PatchworkTensor(Mat A, PatchworkOptionItems PetscOptionsObject)
{
  Mat_PatchworkTensor      *ctx;
  PetscReal                 alpha, beta;
  PetscBool                 set1, set2;
  PatchworkTensorQuadrature q;
  PatchworkTensorBC         bc;
  PatchworkScatter          sc;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &ctx));
  alpha = ctx->info.alpha;
  beta  = ctx->info.beta;
  q     = ctx->info.quadrature;
  bc    = ctx->info.bc;
  sc    = ctx->scatter;
  PetscOptionsHeadBegin(PetscOptionsObject, "Patchwork tensor-product operator options");
  PetscCall(PetscOptionsReal("-mat_patchwork_alpha", "Coefficient of the mass matrix", "MatPatchworkTensorSetCoefficients", alpha, &alpha, &set1));
  PetscCall(PetscOptionsReal("-mat_patchwork_beta", "Coefficient of the stiffness matrix", "MatPatchworkTensorSetCoefficients", beta, &beta, &set2));
  if (set1 || set2) PetscCall(MatPatchworkTensorSetCoefficients(A, alpha, beta));
  PetscCall(PetscOptionsEnum("-mat_patchwork_quadrature", "Quadrature", "MatPatchworkTensorSetQuadrature", PatchworkTensorQuadratures, (PetscEnum)q, (PetscEnum *)&q, &set1));
  if (set1) PetscCall(MatPatchworkTensorSetQuadrature(A, q));
  if (ctx->plex) {
    PetscInt nq = ctx->info.qpoints;

    PetscBool fly = ctx->plex->fly_allowed;

    PetscCall(PetscOptionsInt("-mat_patchwork_quadrature_points", "Gauss points per direction (k+1 to k+3)", "MatPatchworkTensorSetQuadraturePoints", nq, &nq, &set1));
    if (set1) PetscCall(MatPatchworkTensorSetQuadraturePoints(A, nq));
    PetscCall(PetscOptionsBool("-mat_patchwork_geometry_on_the_fly", "CUDA apply: compute the geometric factors of multilinear cells at every point instead of storing them", "MatPatchworkTensorSetGeometryOnTheFly", fly, &fly, &set1));
    if (set1) PetscCall(MatPatchworkTensorSetGeometryOnTheFly(A, fly));
  } else {
    PetscCall(PetscOptionsEnum("-mat_patchwork_bc", "Boundary conditions", "MatPatchworkTensorSetBC", PatchworkTensorBCs, (PetscEnum)bc, (PetscEnum *)&bc, &set1));
    if (set1) PetscCall(MatPatchworkTensorSetBC(A, bc));
  }
  PetscCall(PetscOptionsEnum("-mat_patchwork_scatter", "How CUDA kernels add cell results into shared nodes", "MatCreatePatchworkTensor", ScatterTypes, (PetscEnum)sc, (PetscEnum *)&sc, &set1));
  if (set1) {
    ctx->scatter = sc;
    PetscCall(InvalidateDescriptors(ctx));
  }
  PetscOptionsHeadEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatPatchworkTensorGetInfo_Tensor(Mat A, PatchworkTensorInfo *info)
{
  Mat_PatchworkTensor *ctx;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &ctx));
  *info = ctx->info;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PatchworkTensorRequireCartesian(const PatchworkTensorInfo *info, MPI_Comm comm, const char who[])
{
  PetscFunctionBegin;
  PetscCheck(info->mesh == PATCHWORK_MESH_CARTESIAN, comm, PETSC_ERR_SUP, "%s needs the tensor-product operator on a Cartesian DMDA mesh; this one is on a general (DMPlex) mesh", who);
  PetscCheck(!info->variable, comm, PETSC_ERR_SUP, "%s needs constant coefficients; this operator has variable ones", who);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatIsPatchworkTensor - Whether a Mat is a Patchwork tensor-product operator

  Not Collective

  Input Parameter:
. A - the matrix

  Output Parameter:
. is - `PETSC_TRUE` if A was created by `MatCreatePatchworkTensor()`

  Level: intermediate

.seealso: `MatCreatePatchworkTensor()`, `MatPatchworkTensorGetInfo()`
@*/
PetscErrorCode MatIsPatchworkTensor(Mat A, PetscBool *is)
{
  PetscErrorCode (*f)(Mat, PatchworkTensorInfo *) = NULL;

  PetscFunctionBegin;
  PatchworkAssertPointer(A, 1);
  PatchworkAssertPointer(is, 2);
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatPatchworkTensorGetInfo_C", &f));
  *is = f ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatPatchworkTensorGetInfo - Describe a Patchwork tensor-product operator: DM, degree, box, coefficients

  Not Collective

  Input Parameter:
. A - the operator

  Output Parameter:
. info - the description; info->dm is borrowed, not referenced

  Level: intermediate

.seealso: `MatCreatePatchworkTensor()`, `MatIsPatchworkTensor()`
@*/
PetscErrorCode MatPatchworkTensorGetInfo(Mat A, PatchworkTensorInfo *info)
{
  Mat_PatchworkTensor *ctx;

  PetscFunctionBegin;
  PatchworkAssertPointer(info, 2);
  PetscCall(PatchworkTensorGetContext(A, &ctx));
  PetscCall(MatPatchworkTensorGetInfo_Tensor(A, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatPatchworkTensorSetCoefficients - Set alpha and beta of the operator alpha*M + beta*K

  Logically Collective

  Input Parameters:
+ A     - the operator
. alpha - coefficient of the mass matrix (default 0)
- beta  - coefficient of the stiffness matrix (default 1)

  Options Database Keys:
+ -mat_patchwork_alpha <alpha> - mass coefficient
- -mat_patchwork_beta <beta>   - stiffness coefficient

  Level: beginner

.seealso: `MatCreatePatchworkTensor()`
@*/
PetscErrorCode MatPatchworkTensorSetCoefficients(Mat A, PetscReal alpha, PetscReal beta)
{
  Mat_PatchworkTensor *ctx;

  PetscFunctionBegin;
  PetscCall(PatchworkTensorGetContext(A, &ctx));
  PetscCheck(!PetscIsInfOrNanReal(alpha) && !PetscIsInfOrNanReal(beta), PetscObjectComm((PetscObject)A), PETSC_ERR_FP, "Coefficients must be finite numbers, got alpha = %g, beta = %g", (double)alpha, (double)beta);
  ctx->info.alpha = alpha;
  ctx->info.beta  = beta;
  PetscCall(InvalidateDescriptors(ctx));
  if (ctx->plex) ctx->plex->geomvalid = PETSC_FALSE;
  PetscCall(SetDefiniteness(A, &ctx->info));
  PetscCall(PetscObjectStateIncrease((PetscObject)A)); /* a new operator: preconditioners set up again */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatPatchworkTensorSetQuadrature - Choose the quadrature of the operator

  Logically Collective

  Input Parameters:
+ A - the operator
- q - `PATCHWORK_QUADRATURE_GAUSS` (k+1 Gauss points, default) or `PATCHWORK_QUADRATURE_GAUSSLOBATTO`
      (k+1 collocated Gauss-Lobatto points: diagonal mass)

  Options Database Key:
. -mat_patchwork_quadrature <gauss,gausslobatto> - the quadrature

  Level: intermediate

.seealso: `MatCreatePatchworkTensor()`
@*/
PetscErrorCode MatPatchworkTensorSetQuadrature(Mat A, PatchworkTensorQuadrature q)
{
  Mat_PatchworkTensor *ctx;

  PetscFunctionBegin;
  PetscCall(PatchworkTensorGetContext(A, &ctx));
  PetscCheck(q == PATCHWORK_QUADRATURE_GAUSS || q == PATCHWORK_QUADRATURE_GAUSSLOBATTO, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "Unknown quadrature %d", (int)q);
  ctx->info.quadrature = q;
  if (q == PATCHWORK_QUADRATURE_GAUSSLOBATTO) ctx->info.qpoints = ctx->info.degree + 1; /* collocated */
  PetscCall(InvalidateDescriptors(ctx));
  if (ctx->plex) ctx->plex->geomvalid = PETSC_FALSE;
  PetscCall(PetscObjectStateIncrease((PetscObject)A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatPatchworkTensorSetBC - Choose the boundary conditions of the operator

  Logically Collective

  Input Parameters:
+ A  - the operator
- bc - `PATCHWORK_BC_DIRICHLET` (default: boundary rows and columns of the identity) or `PATCHWORK_BC_NATURAL`

  Options Database Key:
. -mat_patchwork_bc <dirichlet,natural> - the boundary conditions

  Level: intermediate

.seealso: `MatCreatePatchworkTensor()`
@*/
PetscErrorCode MatPatchworkTensorSetBC(Mat A, PatchworkTensorBC bc)
{
  Mat_PatchworkTensor *ctx;

  PetscFunctionBegin;
  PetscCall(PatchworkTensorGetContext(A, &ctx));
  PetscCheck(bc == PATCHWORK_BC_DIRICHLET || bc == PATCHWORK_BC_NATURAL, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "Unknown boundary condition %d", (int)bc);
  PetscCheck(!ctx->plex, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "On a DMPlex the boundary conditions are the DM's essential boundary conditions (DMAddBoundary(), or PatchworkDMPlexSetQkField() with dirichlet), not an operator setting");
  ctx->info.bc = bc;
  PetscCall(InvalidateDescriptors(ctx));
  PetscCall(SetDefiniteness(A, &ctx->info));
  PetscCall(PetscObjectStateIncrease((PetscObject)A)); /* a new operator: preconditioners set up again */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Rows of this rank and in all of a Cartesian operator: the DMDA's owned box (dof 1), computed from
   its corners rather than from a global vector, which DMGetGlobalVector() would keep in the DM */
static PetscErrorCode GridSizes(const PatchworkTensorInfo *info, PetscInt *nlocal, PetscInt *N)
{
  PetscInt xs[3], xm[3];

  PetscFunctionBegin;
  PetscCall(PatchworkTensorInfoCorners(info, xs, xm));
  *nlocal = xm[0] * xm[1] * xm[2];
  *N      = 1;
  for (PetscInt d = 0; d < 3; d++) *N *= d < info->dim ? info->degree * info->cells[d] + 1 : 1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Rows of a DMPlex operator: those of the DM's global vectors (its section decides) */
static PetscErrorCode PlexSizes(DM dm, PetscInt *nlocal, PetscInt *N)
{
  Vec g;

  PetscFunctionBegin;
  PetscCall(DMGetGlobalVector(dm, &g));
  PetscCall(VecGetLocalSize(g, nlocal));
  PetscCall(VecGetSize(g, N));
  PetscCall(DMRestoreGlobalVector(dm, &g));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The MATSHELL around ctx, on vectors of type vtype */
static PetscErrorCode CreateShell(MPI_Comm comm, Mat_PatchworkTensor *ctx, PetscInt nlocal, PetscInt N, VecType vtype, Mat *A)
{
  PetscFunctionBegin;
  PetscCall(MatCreateShell(comm, nlocal, nlocal, N, N, ctx, A));
  PetscCall(MatShellSetVecType(*A, vtype));
  PetscCall(MatShellSetOperation(*A, MATOP_MULT, PatchworkShellOp(MatMult_PatchworkTensor)));
  PetscCall(MatShellSetOperation(*A, MATOP_MULT_TRANSPOSE, PatchworkShellOp(MatMult_PatchworkTensor)));
  PetscCall(MatShellSetOperation(*A, MATOP_MULT_ADD, PatchworkShellOp(MatMultAdd_PatchworkTensor)));
  PetscCall(MatShellSetOperation(*A, MATOP_MULT_TRANSPOSE_ADD, PatchworkShellOp(MatMultAdd_PatchworkTensor)));
  PetscCall(MatShellSetOperation(*A, MATOP_GET_DIAGONAL, PatchworkShellOp(MatGetDiagonal_PatchworkTensor)));
  PetscCall(MatShellSetOperation(*A, MATOP_VIEW, PatchworkShellOp(MatView_PatchworkTensor)));
  PetscCall(MatShellSetOperation(*A, MATOP_SET_FROM_OPTIONS, PatchworkShellOp(MatSetFromOptions_PatchworkTensor)));
  PetscCall(MatShellSetOperation(*A, MATOP_DESTROY, PatchworkShellOp(MatDestroy_PatchworkTensor)));
  PetscCall(PetscObjectComposeFunction((PetscObject)*A, "MatPatchworkTensorGetInfo_C", MatPatchworkTensorGetInfo_Tensor));
  PetscCall(MatSetOption(*A, MAT_SYMMETRIC, PETSC_TRUE));
  PetscCall(MatSetOption(*A, MAT_SYMMETRY_ETERNAL, PETSC_TRUE));
  PetscCall(SetDefiniteness(*A, &ctx->info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatCreatePatchworkTensor - Create the matrix-free operator alpha*M + beta*K of continuous Q_k
  Lagrange elements (Gauss-Lobatto nodes), on the axis-aligned box mesh whose node grid is a DMDA,
  or on a general quadrilateral/hexahedral DMPlex mesh

  Collective

  Input Parameters:
+ dm     - either a DMDA with k*N_d+1 nodes per direction, dof 1, `DMDA_STENCIL_BOX` of width >= k, no
           periodicity, whose coordinates, if set, are the Gauss-Lobatto nodes of a uniform box
           mesh (`PatchworkDMDACreateQk()` makes such a DM; without coordinates the box is [0,1]^d);
           or a DMPlex of quadrilaterals (2D) or hexahedra (3D), straight or curved, distributed
           without overlap, whose one field is a scalar Q_k Lagrange `PetscFE` on Gauss-Lobatto nodes
           (`PatchworkDMPlexSetQkField()` sets one); or a DMForest (`DMP4EST`/`DMP8EST`, PETSc with
           p4est) with such a field, whose DMPlex (with its hanging nodes) the operator then works on
- degree - the polynomial degree k: 1..8 in 3D, 1..10 in 2D

  Output Parameter:
. A - a MATSHELL with `MatMult()`, `MatMultAdd()`, `MatMultTranspose()`, `MatGetDiagonal()`, `MatView()`;
      its vectors have the DM's vector type, so `-dm_vec_type cuda` runs the CUDA kernels on device
      vectors end to end

  Options Database Keys (read by `MatSetFromOptions()`):
+ -mat_patchwork_alpha <0>                   - mass coefficient
. -mat_patchwork_beta <1>                    - stiffness coefficient
. -mat_patchwork_quadrature <gauss>          - gauss or gausslobatto
. -mat_patchwork_bc <dirichlet>              - dirichlet or natural
- -mat_patchwork_scatter <atomic>            - atomic or colored: how CUDA kernels add into shared nodes

  Notes:
  On a DMPlex the geometric factors w |J| J^-1 J^-T are computed once per quadrature point (on the
  device when the DM's vectors live there) from the node coordinates, so the geometry is that of the
  Q_k interpolation of the mesh (exact when the coordinate field has degree <= k). Variable
  coefficients come from `MatPatchworkTensorSetCoefficientFunctions()` or
  `MatPatchworkTensorSetCoefficientVecs()`, and the boundary conditions from the DM: essential
  boundary conditions remove the constrained nodes from global vectors, as in PETSc's own FEM, so the
  operator equals the matrix `DMPlexSNESComputeJacobianFEM()` assembles for the same problem.
  Options only there: -mat_patchwork_quadrature_points <k+1>, -mat_patchwork_geometry_on_the_fly <true>
  (on device vectors and multilinear cells the factors are computed in every apply instead of stored:
  `MatPatchworkTensorSetGeometryOnTheFly()`).

  On a DMDA each cell belongs to the rank that owns its first node; a rank applies its cells to the ghosted
  local vector and adds the results back. On one rank the kernels act on the global arrays directly.
  With Dirichlet conditions the boundary rows and columns are those of the identity, so that a
  right-hand side with zero boundary entries gives a solution with zero boundary values.

  Level: beginner

.seealso: `PatchworkDMDACreateQk()`, `MatPatchworkTensorSetCoefficients()`, `MatPatchworkTensorGetInfo()`
@*/
PetscErrorCode MatCreatePatchworkTensor(DM dm, PetscInt degree, Mat *A)
{
  Mat_PatchworkTensor *ctx;
  PetscInt             nlocal, N, cells[3];
  PetscReal            lower[3], upper[3];
  PetscMPIInt          size;
  VecType              vtype;
  DM                   plex = NULL;
  PetscBool            isplex, isforest;

  PetscFunctionBegin;
  PatchworkAssertPointer(dm, 1);
  PatchworkAssertPointer(A, 3);
  PetscCall(PatchworkInitializePackage());
  PetscCall(PetscCitationsRegister(citation, &cited));
  PetscCall(PetscObjectTypeCompare((PetscObject)dm, DMPLEX, &isplex));
  PetscCall(DMIsForest(dm, &isforest));
  if (isforest) { /* the operator lives on the forest's DMPlex, which has the same vectors */
    PetscCall(PatchworkDMGetPlex(dm, &plex));
    dm     = plex;
    isplex = PETSC_TRUE;
  }
  if (!isplex) PetscCall(PatchworkDMDAGetQkGrid(dm, degree, cells, lower, upper)); /* before anything is allocated */
  PetscCall(PetscNew(&ctx));
  if (isplex) PetscCall(PatchworkPlexCreate(dm, degree, &ctx->info, &ctx->plex));
  else {
    PetscCall(PetscArraycpy(ctx->info.cells, cells, 3));
    PetscCall(PetscArraycpy(ctx->info.lower, lower, 3));
    PetscCall(PetscArraycpy(ctx->info.upper, upper, 3));
    ctx->info.bc = PATCHWORK_BC_DIRICHLET;
    PetscCall(DMGetDimension(dm, &ctx->info.dim));
  }
  PetscCall(PetscObjectReference((PetscObject)dm));
  ctx->info.dm         = dm;
  ctx->info.degree     = degree;
  ctx->info.alpha      = 0;
  ctx->info.beta       = 1;
  ctx->info.quadrature = PATCHWORK_QUADRATURE_GAUSS;
  ctx->info.qpoints    = degree + 1;
  ctx->scatter         = PW_SCATTER_ATOMIC;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)dm), &size));
  ctx->serial = size == 1 ? PETSC_TRUE : PETSC_FALSE;

  if (isplex) PetscCall(PlexSizes(dm, &nlocal, &N));
  else PetscCall(GridSizes(&ctx->info, &nlocal, &N));
  PetscCall(DMGetVecType(dm, &vtype));
  PetscCall(CreateShell(PetscObjectComm((PetscObject)dm), ctx, nlocal, N, vtype, A));
  PetscCall(MatSetDM(*A, dm));
  PetscCall(DMDestroy(&plex));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Internal (cartesian.h): the operator of info on one rank without a DM */
PetscErrorCode PatchworkTensorCreateOnBox(MPI_Comm comm, const PatchworkTensorInfo *info, VecType vtype, Mat *A)
{
  Mat_PatchworkTensor *ctx;
  PetscMPIInt          size;
  PetscInt             nlocal, N;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCheck(size == 1, comm, PETSC_ERR_SUP, "An operator without a DM runs on one rank only: on several, its halo exchanges need the DMDA");
  PetscCheck(info->mesh == PATCHWORK_MESH_CARTESIAN && !info->variable, comm, PETSC_ERR_SUP, "An operator without a DM is a Cartesian one with constant coefficients");
  PetscCall(PatchworkInitializePackage());
  PetscCall(PetscNew(&ctx));
  ctx->info    = *info;
  ctx->info.dm = NULL;
  if (ctx->info.quadrature == PATCHWORK_QUADRATURE_GAUSSLOBATTO) ctx->info.qpoints = ctx->info.degree + 1;
  ctx->scatter = PW_SCATTER_ATOMIC;
  ctx->serial  = PETSC_TRUE;
  ctx->nodm    = PETSC_TRUE;
  PetscCall(GridSizes(&ctx->info, &nlocal, &N));
  PetscCall(CreateShell(comm, ctx, nlocal, N, vtype, A));
  PetscCall(InvalidateDescriptors(ctx)); /* fills them */
  PetscFunctionReturn(PETSC_SUCCESS);
}
