/* PCLOR: creation, options, viewing, setup and apply. lorassemble.c builds the LOR matrix. */
#include "lorimpl.h"

static PetscBool  cited      = PETSC_FALSE;
static const char citation[] = "@article{PaznerKolevCamier2023,\n"
                               "  title   = {End-to-end {GPU} acceleration of low-order-refined preconditioning for high-order finite element discretizations},\n"
                               "  author  = {Pazner, Will and Kolev, Tzanio and Camier, Jean-Sylvain},\n"
                               "  journal = {The International Journal of High Performance Computing Applications},\n"
                               "  volume  = {37},\n"
                               "  number  = {5},\n"
                               "  pages   = {578--599},\n"
                               "  year    = {2023}\n}\n";

/* On device matrices PCPATCHAMG, whose set-up runs on the GPU: at k = 4, 7.2M DoF on one H200 it set up
   in 0.33 s and solved in 17 iterations (0.057 s) where GAMG took 11.9 s and 19 (0.090 s), and it keeps
   the LOR matrix as the kernels' device CSR. On host matrices BoomerAMG where PETSc has hypre, else GAMG. */
static PetscErrorCode SetDefaultInnerType(PC_LOR *lor)
{
  PCType    type;
  PetscBool hypre = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(PCGetType(lor->inner, &type));
  if (type) PetscFunctionReturn(PETSC_SUCCESS);
  if (lor->device) {
    PetscCall(PCSetType(lor->inner, PCPATCHAMG));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#if defined(PETSC_HAVE_HYPRE)
  hypre = PETSC_TRUE;
#endif
  if (hypre) {
#if defined(PETSC_HAVE_HYPRE)
    PetscCall(PCSetType(lor->inner, PCHYPRE));
    PetscCall(PCHYPRESetType(lor->inner, "boomeramg"));
#endif
  } else PetscCall(PCSetType(lor->inner, PCGAMG));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCSetUp_LOR(PC pc)
{
  PC_LOR     *lor = (PC_LOR *)pc->data;
  PetscInt    old_nodes[3], old_rows[3], old_start[3], old_deg = lor->desc.degree, old_bc = lor->desc.dirichlet;
  PetscBool   same = PETSC_FALSE, old_plex = lor->plex;
  DM          old_dm = lor->dm; /* compared, not used */
  const char *prefix;
  char        lprefix[256];

  PetscFunctionBegin;
  for (int i = 0; i < 3; i++) {
    old_nodes[i] = lor->desc.nodes[i];
    old_rows[i]  = lor->desc.row_size[i];
    old_start[i] = lor->desc.row_start[i];
  }
  PetscCall(PCLORSetUpDiscretization(pc));
  /* the pattern depends on the grid, its partition and the boundary condition only: when those are
     unchanged (new coefficients, a new operator on the same grid), only the values are recomputed */
  if (lor->A) {
    same = (PetscBool)(old_deg == lor->desc.degree && old_bc == lor->desc.dirichlet && old_plex == lor->plex && old_dm == lor->dm);
    for (int i = 0; i < 3; i++) same = (PetscBool)(same && old_nodes[i] == lor->desc.nodes[i] && old_rows[i] == lor->desc.row_size[i] && old_start[i] == lor->desc.row_start[i]);
  }
  if (lor->plex) {
    PatchworkPlexLORData d;

    PetscCall(PatchworkPlexGetLORData(pc->pmat, &d));
    if (!same) PetscCall(PCLORCreatePatternPlex(pc, &d));
    PetscCall(PCLORAssemblePlex(pc, &d));
    PetscCall(PatchworkPlexRestoreLORData(&d));
  } else {
    if (!same) PetscCall(PCLORCreatePattern(pc));
    PetscCall(PCLORAssemble(pc));
  }

  if (!lor->inner) {
    PetscCall(PCCreate(PetscObjectComm((PetscObject)pc), &lor->inner));
    PetscCall(PetscObjectIncrementTabLevel((PetscObject)lor->inner, (PetscObject)pc, 1));
    PetscCall(PCGetOptionsPrefix(pc, &prefix));
    PetscCall(PetscSNPrintf(lprefix, sizeof(lprefix), "%slor_", prefix ? prefix : ""));
    PetscCall(PCSetOptionsPrefix(lor->inner, lprefix));
    PetscCall(PCSetOperators(lor->inner, lor->A, lor->A));
    PetscCall(SetDefaultInnerType(lor));
    PetscCall(PCSetFromOptions(lor->inner));
    { /* PCPATCHAMG inside: the operator's dimension, unless given (its device CSR has no host pattern to infer it from) */
      PetscBool given;

      PetscCall(PetscOptionsHasName(((PetscObject)pc)->options, lprefix, "-pc_patchamg_dim", &given));
      if (!given) PetscCall(PCPatchAMGSetDimension(lor->inner, lor->desc.dim));
    }
  } else PetscCall(PCSetOperators(lor->inner, lor->A, lor->A));
  PetscCall(PetscLogEventBegin(PATCHWORK_LORInnerSetUp, pc, 0, 0, 0));
  PetscCall(PCSetUp(lor->inner));
  PetscCall(PetscLogEventEnd(PATCHWORK_LORInnerSetUp, pc, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCApply_LOR(PC pc, Vec x, Vec y)
{
  PC_LOR *lor = (PC_LOR *)pc->data;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PATCHWORK_LORApply, pc, x, y, 0));
  PetscCall(PCApply(lor->inner, x, y));
  PetscCall(PetscLogEventEnd(PATCHWORK_LORApply, pc, x, y, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCApplyTranspose_LOR(PC pc, Vec x, Vec y)
{
  PC_LOR *lor = (PC_LOR *)pc->data;

  PetscFunctionBegin;
  PetscCall(PCApplyTranspose(lor->inner, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCReset_LOR(PC pc)
{
  PC_LOR *lor = (PC_LOR *)pc->data;

  PetscFunctionBegin;
  PetscCall(PCDestroy(&lor->inner));
  PetscCall(PCLORDestroyPattern(pc));
  PetscCall(DMDestroy(&lor->dm));
  PetscCall(PetscMemzero(&lor->desc, sizeof(lor->desc)));
  lor->npattern = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCSetFromOptions_LOR(PC pc, PatchworkOptionItems PetscOptionsObject)
{
  PC_LOR     *lor = (PC_LOR *)pc->data;
  MPI_Comm    comm = PetscObjectComm((PetscObject)pc);
  const char *pre  = ((PetscObject)pc)->prefix ? ((PetscObject)pc)->prefix : "";

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "Low-order-refined preconditioner options");
  PetscCall(PetscOptionsInt("-pc_lor_degree", "Degree k of the Q_k node grid (only without a Patchwork operator), 1 <= k <= 10", "PCLORSetDegree", lor->degree_req, &lor->degree_req, NULL));
  PetscCall(PetscOptionsReal("-pc_lor_alpha", "Mass coefficient of alpha*M + beta*K (only without a Patchwork operator), alpha >= 0", "PCLORSetCoefficients", lor->alpha_req, &lor->alpha_req, NULL));
  PetscCall(PetscOptionsReal("-pc_lor_beta", "Stiffness coefficient of alpha*M + beta*K (only without a Patchwork operator), beta > 0", "PCLORSetCoefficients", lor->beta_req, &lor->beta_req, NULL));
  PetscCall(PetscOptionsEnum("-pc_lor_quadrature", "Quadrature of the Q1 sub-elements: gausslobatto (their vertices) or gauss, 2 points per direction", "PCLORSetQuadrature", PatchworkTensorQuadratures, (PetscEnum)lor->quadrature, (PetscEnum *)&lor->quadrature, NULL));
  PetscCall(PetscOptionsEnum("-pc_lor_bc", "Boundary condition (only without a Patchwork operator)", "PCLORSetBC", PatchworkTensorBCs, (PetscEnum)lor->bc_req, (PetscEnum *)&lor->bc_req, NULL));
  PetscCall(PetscOptionsBool("-pc_lor_device_csr", "One GPU rank with -lor_pc_type patchamg: hand PCPATCHAMG the LOR matrix as the device CSR the kernels built (no AIJCUSPARSE, no host copy)", "", lor->devcsr_req, &lor->devcsr_req, NULL));
  PetscOptionsHeadEnd();
  /* the set-up checks these too, when it uses them; here they are refused even where an operator makes them unused */
  PetscCheck(lor->degree_req >= 0 && lor->degree_req <= PW_MAX_DEGREE, comm, PETSC_ERR_ARG_OUTOFRANGE, "-%spc_lor_degree %" PetscInt_FMT " is out of range: it must be in [1, %d]", pre, lor->degree_req, PW_MAX_DEGREE);
  PetscCheck(lor->alpha_req >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-%spc_lor_alpha %g is out of range: it must be at least 0 (alpha*M + beta*K)", pre, (double)lor->alpha_req);
  PetscCheck(lor->beta_req > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-%spc_lor_beta %g is out of range: it must be positive (alpha*M + beta*K)", pre, (double)lor->beta_req);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCView_LOR(PC pc, PetscViewer viewer)
{
  PC_LOR   *lor = (PC_LOR *)pc->data;
  PetscBool ascii;
  MatInfo   info;
  MatType   mtype;
  PetscInt  N;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (!ascii) PetscFunctionReturn(PETSC_SUCCESS);
  if (!lor->A) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "  not set up\n"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatGetSize(lor->A, &N, NULL));
  if (lor->devcsr) info.nz_used = (PetscLogDouble)lor->nkeep; /* a shell has no MatGetInfo */
  else PetscCall(MatGetInfo(lor->A, MAT_GLOBAL_SUM, &info));
  PetscCall(MatGetType(lor->A, &mtype));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  low-order-refined Q1 matrix of the Q%" PetscInt_FMT " operator in %dD: every cell split at its Gauss-Lobatto nodes into %" PetscInt_FMT " Q1 cells\n", lor->info.degree, lor->desc.dim, (PetscInt)PetscPowInt(lor->info.degree, lor->desc.dim)));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  %g*M + %g*K (%s), %s conditions; %" PetscInt_FMT " rows, %.0f nonzeros, type %s, values computed on the %s\n", (double)lor->info.alpha, (double)lor->info.beta, lor->from_tensor ? "from the Patchwork operator" : "from PCLORSetCoefficients()", PatchworkTensorBCs[lor->info.bc], N, (double)info.nz_used, mtype, lor->device ? "GPU" : "CPU"));
  if (lor->plex) PetscCall(PetscViewerASCIIPrintf(viewer, "  operator on a DMPlex mesh: assembled cell by cell (one thread per sub-cell on the GPU); variable coefficients enter as their Q1 interpolants from the nodes\n"));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  sub-cells integrated at %s; pattern built %" PetscInt_FMT " time(s), %s\n", lor->quadrature == PATCHWORK_QUADRATURE_GAUSSLOBATTO ? (lor->axis_only ? "their vertices (box cells: couplings along the axes only)" : "their vertices") : "2 Gauss points per direction", lor->npattern,
                                   lor->devcsr ? "as a device CSR that PCPATCHAMG reads directly (no AIJCUSPARSE, values written in place)" : lor->csr ? "as the matrix's CSR (values written in place)" : lor->split ? (lor->device ? "as the parallel matrix's two blocks, each rank's rows sorted and split on the GPU (values written in place)" : "as the parallel matrix's two blocks, each rank's rows sorted and split (values written in place)") : "by MatSetPreallocationCOO() (values by MatSetValuesCOO())"));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  preconditioner of the LOR matrix (options prefix %slor_):\n", ((PetscObject)pc)->prefix ? ((PetscObject)pc)->prefix : ""));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  PetscCall(PCView(lor->inner, viewer));
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCDestroy_LOR(PC pc)
{
  PetscFunctionBegin;
  PetscCall(PCReset_LOR(pc));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCLORSetDegree_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCLORSetCoefficients_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCLORSetBC_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCLORSetQuadrature_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCLORGetMatrix_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCLORGetInnerPC_C", NULL));
  PetscCall(PetscFree(pc->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCLORSetDegree_LOR(PC pc, PetscInt k)
{
  PetscFunctionBegin;
  ((PC_LOR *)pc->data)->degree_req = k;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCLORSetCoefficients_LOR(PC pc, PetscReal alpha, PetscReal beta)
{
  PC_LOR *lor = (PC_LOR *)pc->data;

  PetscFunctionBegin;
  lor->alpha_req = alpha;
  lor->beta_req  = beta;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCLORSetBC_LOR(PC pc, PatchworkTensorBC bc)
{
  PetscFunctionBegin;
  ((PC_LOR *)pc->data)->bc_req = bc;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCLORSetQuadrature_LOR(PC pc, PatchworkTensorQuadrature q)
{
  PetscFunctionBegin;
  ((PC_LOR *)pc->data)->quadrature = q;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCLORGetMatrix_LOR(PC pc, Mat *A)
{
  PetscFunctionBegin;
  *A = ((PC_LOR *)pc->data)->A;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCLORGetInnerPC_LOR(PC pc, PC *inner)
{
  PetscFunctionBegin;
  *inner = ((PC_LOR *)pc->data)->inner;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCLORSetDegree - Set the degree k of the Q_k node grid, for a `PCLOR` whose operator is not a
  Patchwork tensor operator (the grid then comes from `PCSetDM()`)

  Logically Collective

  Input Parameters:
+ pc - the `PCLOR`
- k  - the degree, 1 to 10

  Options Database Key:
. -pc_lor_degree <k> - the degree

  Level: intermediate

.seealso: `PCLOR`, `PCLORSetCoefficients()`, `PCLORSetBC()`
@*/
PetscErrorCode PCLORSetDegree(PC pc, PetscInt k)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidLogicalCollectiveInt(pc, k, 2);
  PetscTryMethod(pc, "PCLORSetDegree_C", (PC, PetscInt), (pc, k));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCLORSetCoefficients - Set the bilinear form alpha*M + beta*K of a `PCLOR` whose operator is not a
  Patchwork tensor operator (with one, its coefficients are used)

  Logically Collective

  Input Parameters:
+ pc    - the `PCLOR`
. alpha - mass coefficient, >= 0 (default 0)
- beta  - stiffness coefficient, > 0 (default 1)

  Options Database Keys:
+ -pc_lor_alpha <alpha> - mass coefficient
- -pc_lor_beta <beta>   - stiffness coefficient

  Level: intermediate

.seealso: `PCLOR`, `PCLORSetDegree()`
@*/
PetscErrorCode PCLORSetCoefficients(PC pc, PetscReal alpha, PetscReal beta)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscTryMethod(pc, "PCLORSetCoefficients_C", (PC, PetscReal, PetscReal), (pc, alpha, beta));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCLORSetBC - Set the boundary condition of a `PCLOR` whose operator is not a Patchwork tensor
  operator: Dirichlet rows and columns of global-boundary nodes are eliminated (identity rows)

  Logically Collective

  Input Parameters:
+ pc - the `PCLOR`
- bc - `PATCHWORK_BC_DIRICHLET` (default) or `PATCHWORK_BC_NATURAL`

  Options Database Key:
. -pc_lor_bc <dirichlet,natural> - the condition

  Level: intermediate

.seealso: `PCLOR`, `MatPatchworkTensorSetBC()`
@*/
PetscErrorCode PCLORSetBC(PC pc, PatchworkTensorBC bc)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscTryMethod(pc, "PCLORSetBC_C", (PC, PatchworkTensorBC), (pc, bc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCLORSetQuadrature - Choose how `PCLOR` integrates its Q1 sub-cells: at their vertices (2 Gauss-Lobatto
  points per direction, the default) or at 2 Gauss points per direction

  Logically Collective

  Input Parameters:
+ pc - the `PCLOR`
- q  - `PATCHWORK_QUADRATURE_GAUSSLOBATTO` or `PATCHWORK_QUADRATURE_GAUSS`

  Options Database Key:
. -pc_lor_quadrature <gausslobatto,gauss> - the rule

  Notes:
  Both give matrices spectrally equivalent to the Q_k operator. The vertex rule lumps the mass and,
  on box cells, reduces the stiffness to the finite-difference stencil on the Gauss-Lobatto grid
  (5 or 7 nonzeros per row instead of 9 or 27); with it the CG iterations stay flat in k, while with
  Gauss points they grow with k in 3D (measured in the README).

  Level: intermediate

.seealso: `PCLOR`
@*/
PetscErrorCode PCLORSetQuadrature(PC pc, PatchworkTensorQuadrature q)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscTryMethod(pc, "PCLORSetQuadrature_C", (PC, PatchworkTensorQuadrature), (pc, q));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCLORGetMatrix - The assembled low-order-refined matrix of a `PCLOR` (NULL before `PCSetUp()`)

  Not Collective

  Input Parameter:
. pc - the `PCLOR`

  Output Parameter:
. A - the matrix, owned by the PC

  Note:
  On one GPU rank with a `PCPATCHAMG` inner PC the matrix is a `MATSHELL` over the device CSR arrays
  (`MatMult()` and `MatGetDiagonal()` work); -pc_lor_device_csr 0 makes it an AIJCUSPARSE matrix.

  Level: intermediate

.seealso: `PCLOR`, `PCLORGetInnerPC()`
@*/
PetscErrorCode PCLORGetMatrix(PC pc, Mat *A)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PatchworkAssertPointer(A, 2);
  *A = NULL;
  PetscTryMethod(pc, "PCLORGetMatrix_C", (PC, Mat *), (pc, A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCLORGetInnerPC - The preconditioner of the low-order-refined matrix (NULL before `PCSetUp()`)

  Not Collective

  Input Parameter:
. pc - the `PCLOR`

  Output Parameter:
. inner - the inner PC, options prefix lor_

  Level: intermediate

.seealso: `PCLOR`, `PCLORGetMatrix()`
@*/
PetscErrorCode PCLORGetInnerPC(PC pc, PC *inner)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PatchworkAssertPointer(inner, 2);
  *inner = NULL;
  PetscTryMethod(pc, "PCLORGetInnerPC_C", (PC, PC *), (pc, inner));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
  PCLOR - "lor": low-order-refined preconditioning (Pazner, Kolev, Camier 2023). The Q_k operator is
  preconditioned by a PETSc PC built on the Q1 matrix of the mesh obtained by splitting every cell at
  its Gauss-Lobatto nodes; that matrix is spectrally equivalent to the high-order one, uniformly in k
  and the mesh size, and has 3^dim nonzeros per row instead of (2k+1)^dim.

  Options Database Keys:
+ -pc_lor_degree <k>                 - degree of the node grid (only without a Patchwork operator)
. -pc_lor_alpha <0>, -pc_lor_beta <1> - alpha*M + beta*K (only without a Patchwork operator)
. -pc_lor_bc <dirichlet,natural>      - boundary condition (only without a Patchwork operator)
. -pc_lor_quadrature <gausslobatto,gauss> - rule of the Q1 sub-cells: vertices (default) or Gauss points
. -lor_pc_type <patchamg,hypre,gamg,...> - the inner PC (default: PCPATCHAMG on device matrices; on host matrices BoomerAMG where PETSc has hypre, else GAMG)
. -pc_lor_device_csr <true>           - one GPU rank, DMDA, -lor_pc_type patchamg: the LOR matrix stays the device CSR the kernels built, read by PCPATCHAMG as it is
- -lor_mat_type <aij,aijcusparse>     - type of the LOR matrix (default: device type when the operator's vectors are on the device)

  Notes:
  The operator is a `MatCreatePatchworkTensor()` (degree, coefficients, boundary condition and grid are
  read from it), or any matrix with the Q_k node grid given by `PCSetDM()` (a DMDA whose coordinates
  are the Gauss-Lobatto nodes of its cells, possibly moved: curved or distorted cells are allowed) and
  the discretization by `PCLORSetDegree()`, `PCLORSetCoefficients()`, `PCLORSetBC()`.
  Each sub-cell is integrated through its multilinear map at its vertices (default; on box cells the
  matrix is then the finite-difference stencil on the Gauss-Lobatto grid) or at 2 Gauss points per direction.
  The matrix is assembled by macro element (A1), gathered into the rank's rows without duplicates
  (A2), Dirichlet rows and columns eliminated (A4) and placed with `MatSetValuesCOO()` (A3), on the
  GPU when the matrix is a device matrix; a new `PCSetUp()` on the same grid only recomputes values.
  On one rank the pattern is the matrix's CSR and the values are written into it in place: on the GPU
  by one pass from the node coordinates (A1 to A4, logged as PWLORMacro). `-log_view` shows
  PWLORPattern, PWLORMacro, PWLORGather, PWLORDirichlet, PWLORSetValues, PWLORInnerSetUp and PWLORApply.

  Level: beginner

.seealso: `PCLORGetMatrix()`, `PCLORGetInnerPC()`, `MatCreatePatchworkTensor()`, `PCVERTEXPATCH`
M*/
PETSC_EXTERN PetscErrorCode PCCreate_LOR(PC pc)
{
  PC_LOR *lor;

  PetscFunctionBegin;
  PetscCall(PatchworkInitializePackage());
  PetscCall(PetscCitationsRegister(citation, &cited));
  PetscCall(PetscNew(&lor));
  lor->devcsr_req = PETSC_TRUE;
  lor->alpha_req = 0;
  lor->beta_req  = 1;
  lor->bc_req    = PATCHWORK_BC_DIRICHLET;
  lor->quadrature = PATCHWORK_QUADRATURE_GAUSSLOBATTO;
  pc->data       = lor;

  pc->ops->setup          = PCSetUp_LOR;
  pc->ops->apply          = PCApply_LOR;
  pc->ops->applytranspose = PCApplyTranspose_LOR;
  pc->ops->reset          = PCReset_LOR;
  pc->ops->destroy        = PCDestroy_LOR;
  pc->ops->setfromoptions = PCSetFromOptions_LOR;
  pc->ops->view           = PCView_LOR;
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCLORSetDegree_C", PCLORSetDegree_LOR));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCLORSetCoefficients_C", PCLORSetCoefficients_LOR));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCLORSetBC_C", PCLORSetBC_LOR));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCLORSetQuadrature_C", PCLORSetQuadrature_LOR));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCLORGetMatrix_C", PCLORGetMatrix_LOR));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCLORGetInnerPC_C", PCLORGetInnerPC_LOR));
  PetscFunctionReturn(PETSC_SUCCESS);
}
