/* PCVERTEXPATCH: creation, options, viewing. vpsetup.c builds the hierarchy, vpcycle.c applies it. */
#include "vpimpl.h"

const char *const PatchworkVPTypes[]   = {"multiplicative", "additive", "PatchworkVPType", "PATCHWORK_VP_", NULL};
const char *const PatchworkVPKernels[] = {"fused", "global", "separate", "PatchworkVPKernel", "PATCHWORK_VP_KERNEL_", NULL};
const char *const PatchworkPrecisions[] = {"single", "double", "PatchworkPrecision", "PATCHWORK_PRECISION_", NULL};

static PetscBool  cited      = PETSC_FALSE;
static const char citation[] = "@article{CuiGrosseBleyKanschatStrzodka2024,\n"
                               "  title   = {An implementation of tensor product patch smoothers on {GPU}s},\n"
                               "  author  = {Cui, Cu and Grosse-Bley, Paul and Kanschat, Guido and Strzodka, Robert},\n"
                               "  journal = {arXiv preprint arXiv:2405.19004},\n"
                               "  year    = {2024}\n}\n";

static PetscErrorCode PCSetFromOptions_VertexPatch(PC pc, PatchworkOptionItems PetscOptionsObject)
{
  PC_VertexPatch *vp = (PC_VertexPatch *)pc->data;
  PetscInt        n  = vp->nlevels_req;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "Vertex-patch multigrid options");
  PetscCall(PetscOptionsInt("-pc_vertexpatch_levels", "Number of levels, at least 1 (default: as many as the grid allows)", "PCVertexPatchSetLevels", n, &n, NULL));
  if (n != vp->nlevels_req) PetscCall(PCVertexPatchSetLevels(pc, n));
  PetscCall(PetscOptionsInt("-pc_vertexpatch_smooth_steps", "Pre- and post-smoothing steps, at least 1", "PCVertexPatchSetSmoothSteps", vp->smooth_steps, &vp->smooth_steps, NULL));
  PetscCheck(vp->smooth_steps >= 1, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "Need at least one smoothing step, got %" PetscInt_FMT, vp->smooth_steps);
  PetscCall(PetscOptionsEnum("-pc_vertexpatch_type", "How the patches are combined", "PCVertexPatchSetType", PatchworkVPTypes, (PetscEnum)vp->type, (PetscEnum *)&vp->type, NULL));
  PetscCall(PetscOptionsEnum("-pc_vertexpatch_kernel", "Residual of the multiplicative smoother: local per patch (fused with the solve, or separate) or global", "PCVERTEXPATCH", PatchworkVPKernels, (PetscEnum)vp->kernel, (PetscEnum *)&vp->kernel, NULL));
  PetscCall(PetscOptionsEnum("-pc_vertexpatch_precision", "Precision of the V-cycle (the Krylov method stays in double)", "PCVertexPatchSetPrecision", PatchworkPrecisions, (PetscEnum)vp->precision, (PetscEnum *)&vp->precision, NULL));
  PetscCall(PetscOptionsBool("-pc_vertexpatch_symmetric", "Post-smoothing sweeps the colors in reverse order: a symmetric V-cycle, for CG", "PCVERTEXPATCH", vp->symmetric, &vp->symmetric, NULL));
  PetscCall(PetscOptionsBool("-pc_vertexpatch_redundant", "Several ranks: each rank also runs its neighbours' patches that reach into its nodes, one exchange per color instead of two", "PCVERTEXPATCH", vp->redundant, &vp->redundant, NULL));
  PetscCall(PetscOptionsInt("-pc_vertexpatch_gather_nodes", "Several ranks: the coarse levels of at most this many nodes run whole on every rank, gathered once per cycle (0: never; default 2097152 on GPU vectors, 4096 on the CPU)", "PCVERTEXPATCH", vp->gather_nodes, &vp->gather_nodes, NULL));
  PetscCheck(vp->gather_nodes >= 0 || vp->gather_nodes == PETSC_DEFAULT, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "-%spc_vertexpatch_gather_nodes %" PetscInt_FMT " is out of range: it must be >= 0 (0: never gather)", ((PetscObject)pc)->prefix ? ((PetscObject)pc)->prefix : "", vp->gather_nodes);
  PetscCall(PetscOptionsReal("-pc_vertexpatch_omega", "Damping w of the additive smoother, 0 <= w <= 1 (0: 1/2^dim)", "PCVERTEXPATCH", vp->omega, &vp->omega, NULL));
  PetscOptionsHeadEnd();
  /* each of the 2^dim colors corrects by exact patch solves: a damping above 1 overshoots even one patch */
  PetscCheck(vp->omega >= 0 && vp->omega <= 1, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "-%spc_vertexpatch_omega %g is out of range: it must be in [0, 1] (0: 1/2^dim)", ((PetscObject)pc)->prefix ? ((PetscObject)pc)->prefix : "", (double)vp->omega);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCView_VertexPatch(PC pc, PetscViewer viewer)
{
  PC_VertexPatch *vp = (PC_VertexPatch *)pc->data;
  PetscBool       ascii;
  char            how[64];

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (!ascii) PetscFunctionReturn(PETSC_SUCCESS);
  if (!vp->levels) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "  not set up\n"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "  V-cycle, %" PetscInt_FMT " levels, Q%" PetscInt_FMT " in %" PetscInt_FMT "D, matrix-free operators and Q%" PetscInt_FMT " transfers\n", vp->nlevels + vp->ngathered, vp->degree, vp->dim, vp->degree));
  if (vp->type == PATCHWORK_VP_ADDITIVE) PetscCall(PetscSNPrintf(how, sizeof(how), "damping %g", (double)vp->levels[0].patch.omega));
  else PetscCall(PetscSNPrintf(how, sizeof(how), "%s kernel", PatchworkVPKernels[vp->kernel]));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  smoother: %s vertex-patch Schwarz, %" PetscInt_FMT " colors (post-smoothing in %s order: %s), %" PetscInt_FMT " pre- and post-smoothing step(s), %s\n", PatchworkVPTypes[vp->type], (PetscInt)1 << vp->dim, vp->symmetric ? "reverse" : "the same", vp->symmetric ? "symmetric" : "nonsymmetric, use GMRES", vp->smooth_steps, how));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  local solver: exact, fast diagonalization of the (2k-1)^%" PetscInt_FMT " = %" PetscInt_FMT " patch unknowns (1D generalized eigenproblems of size %" PetscInt_FMT ")\n", vp->dim, (PetscInt)PetscPowInt(2 * vp->degree - 1, vp->dim), 2 * vp->degree - 1));
  if (vp->single) PetscCall(PetscViewerASCIIPrintf(viewer, "  precision: single (float V-cycle on the %s, double outside)\n", vp->device ? "GPU" : "CPU"));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "  precision: double\n"));
  if (vp->nrefresh) PetscCall(PetscViewerASCIIPrintf(viewer, "  set up again %" PetscInt_FMT " time(s) for new coefficients on the same grid: refreshed, hierarchy kept\n", vp->nrefresh));
  if (!vp->serial) {
    const char *path;
    PetscMPIInt size;

    PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)pc), &size));
    PetscInt    nred = 0;

    for (PetscInt l = 0; l < vp->nlevels; l++) nred += vp->levels[l].redundant;
    PetscCall(PatchworkHaloGetPath(vp->levels[vp->nlevels - 1].redundant ? vp->levels[vp->nlevels - 1].whalo : vp->levels[vp->nlevels - 1].bhalo, &path));
    PetscCall(PetscViewerASCIIPrintf(viewer, "  %d ranks: interior patches on the owned arrays, the boundary layer through a halo of its nodes, %s\n", size, path));
    PetscCall(PetscViewerASCIIPrintf(viewer, "  boundary patches: the neighbours' too, one exchange per color, on %" PetscInt_FMT " of the %" PetscInt_FMT " shared levels%s\n", nred, vp->nlevels,
                                     !vp->redundant ? " (-pc_vertexpatch_redundant 0: corrections sent to their owners, two exchanges per color)" : nred < vp->nlevels ? " (on the others a rank's box is narrower than 2k - 1 nodes)" : ""));
  }
  for (PetscInt l = vp->nlevels - 1; l >= 0; l--) {
    PC_VPLevel *L = &vp->levels[l];
    PetscInt    N;

    PetscCall(MatGetSize(L->A, &N, NULL));
    if (vp->dim == 2) PetscCall(PetscViewerASCIIPrintf(viewer, "  level %" PetscInt_FMT ": %" PetscInt_FMT " x %" PetscInt_FMT " cells, %" PetscInt_FMT " DoFs\n", l + vp->ngathered, L->cells[0], L->cells[1], N));
    else PetscCall(PetscViewerASCIIPrintf(viewer, "  level %" PetscInt_FMT ": %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT " cells, %" PetscInt_FMT " DoFs\n", l + vp->ngathered, L->cells[0], L->cells[1], L->cells[2], N));
  }
  if (vp->gathered) PetscCall(PCVertexPatchGatherView(pc, viewer));
  else if (vp->nlevels > 1) {
    if (vp->coarse_patch) PetscCall(PetscViewerASCIIPrintf(viewer, "  coarse solve: exact, the coarsest level is one vertex patch\n"));
    else {
      PetscCall(PetscViewerASCIIPrintf(viewer, "  coarse solve: KSP on level 0 (options prefix %spc_vertexpatch_coarse_)\n", ((PetscObject)pc)->prefix ? ((PetscObject)pc)->prefix : ""));
      PetscCall(PetscViewerASCIIPushTab(viewer));
      PetscCall(KSPView(vp->coarse_ksp, viewer));
      PetscCall(PetscViewerASCIIPopTab(viewer));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCDestroy_VertexPatch(PC pc)
{
  PetscFunctionBegin;
  PetscCall(PCReset_VertexPatch(pc));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCVertexPatchSetLevels_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCVertexPatchGetLevels_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCVertexPatchSetType_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCVertexPatchSetSmoothSteps_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCVertexPatchSetPrecision_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCVertexPatchGetPrecision_C", NULL));
  PetscCall(PetscFree(pc->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCVertexPatchSetLevels_VP(PC pc, PetscInt n)
{
  PC_VertexPatch *vp = (PC_VertexPatch *)pc->data;

  PetscFunctionBegin;
  PetscCheck(n == PETSC_DECIDE || n >= 1, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "Number of levels must be positive (or PETSC_DECIDE), got %" PetscInt_FMT, n);
  if (n != vp->nlevels_req) {
    vp->nlevels_req = n;
    PetscCall(PCReset_VertexPatch(pc));
    pc->setupcalled = 0;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCVertexPatchGetLevels_VP(PC pc, PetscInt *n)
{
  PC_VertexPatch *vp = (PC_VertexPatch *)pc->data;

  PetscFunctionBegin;
  *n = vp->levels ? vp->nlevels + vp->ngathered : vp->nlevels_req;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCVertexPatchSetType_VP(PC pc, PatchworkVPType type)
{
  PetscFunctionBegin;
  ((PC_VertexPatch *)pc->data)->type = type;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCVertexPatchSetSmoothSteps_VP(PC pc, PetscInt n)
{
  PetscFunctionBegin;
  PetscCheck(n >= 1, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "Need at least one smoothing step, got %" PetscInt_FMT, n);
  ((PC_VertexPatch *)pc->data)->smooth_steps = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCVertexPatchSetPrecision_VP(PC pc, PatchworkPrecision p)
{
  PC_VertexPatch *vp = (PC_VertexPatch *)pc->data;

  PetscFunctionBegin;
  if (p != vp->precision) {
    vp->precision = p;
    PetscCall(PCReset_VertexPatch(pc));
    pc->setupcalled = 0;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCVertexPatchGetPrecision_VP(PC pc, PatchworkPrecision *p)
{
  PC_VertexPatch *vp = (PC_VertexPatch *)pc->data;

  PetscFunctionBegin;
  *p = vp->levels ? (vp->single ? PATCHWORK_PRECISION_SINGLE : PATCHWORK_PRECISION_DOUBLE) : vp->precision;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCVertexPatchSetPrecision - Set the precision of the `PCVERTEXPATCH` V-cycle

  Logically Collective

  Input Parameters:
+ pc        - the preconditioner
- precision - `PATCHWORK_PRECISION_SINGLE` (default) or `PATCHWORK_PRECISION_DOUBLE`

  Options Database Key:
. -pc_vertexpatch_precision <single,double> - the precision

  Notes:
  In single precision the whole cycle (smoothers, residuals, transfers, the coarse patch solve) runs
  in float on arrays the PC owns, converted from and to the Krylov method's double vectors once per
  `PCApply()` (Cui et al. 2024, table 7: the final accuracy of the outer double-precision Krylov
  method is unchanged). On several ranks the float ghost values are exchanged by the PC itself
  (PETSc's `PetscSF` cannot add floats when `PetscReal` is double), staged through the host when the
  arrays are on the device.

  The float cycle is a linear operator only up to float rounding. Use a flexible Krylov method
  (`KSPFGMRES`, `KSPGCR`) or left preconditioning: PETSc's right-preconditioned `KSPGMRES` forms
  its solution by applying the preconditioner once more to a combination of its basis vectors,
  which brings the float rounding into the double iterate and limits its accuracy to about 1e-7
  relative (measured: L2 error 1.04e-7 instead of 9.14e-8 on a 3D Q4 problem even at rtol 1e-12;
  `KSPFGMRES` gives the double run's error to all printed digits).

  Level: intermediate

.seealso: `PCVERTEXPATCH`, `PCVertexPatchGetPrecision()`
@*/
PetscErrorCode PCVertexPatchSetPrecision(PC pc, PatchworkPrecision precision)
{
  PetscFunctionBegin;
  PetscTryMethod(pc, "PCVertexPatchSetPrecision_C", (PC, PatchworkPrecision), (pc, precision));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCVertexPatchGetPrecision - Get the precision of the `PCVERTEXPATCH` V-cycle

  Not Collective

  Input Parameter:
. pc - the preconditioner

  Output Parameter:
. precision - the precision the cycle runs in (after `PCSetUp()`), or the one requested before

  Level: intermediate

.seealso: `PCVERTEXPATCH`, `PCVertexPatchSetPrecision()`
@*/
PetscErrorCode PCVertexPatchGetPrecision(PC pc, PatchworkPrecision *precision)
{
  PetscFunctionBegin;
  PetscUseMethod(pc, "PCVertexPatchGetPrecision_C", (PC, PatchworkPrecision *), (pc, precision));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCVertexPatchSetLevels - Set the number of multigrid levels of `PCVERTEXPATCH`

  Logically Collective

  Input Parameters:
+ pc - the preconditioner
- n  - number of levels, `PETSC_DECIDE` for as many as the grid allows (halving the cells while
       every direction has an even number of at least 4); 1 makes the PC the smoother alone

  Options Database Key:
. -pc_vertexpatch_levels <n> - number of levels

  Level: intermediate

.seealso: `PCVERTEXPATCH`
@*/
PetscErrorCode PCVertexPatchSetLevels(PC pc, PetscInt n)
{
  PetscFunctionBegin;
  PetscTryMethod(pc, "PCVertexPatchSetLevels_C", (PC, PetscInt), (pc, n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCVertexPatchGetLevels - Get the number of multigrid levels of `PCVERTEXPATCH`

  Not Collective

  Input Parameter:
. pc - the preconditioner

  Output Parameter:
. n - the number of levels (after `PCSetUp()`), or the number requested before

  Level: intermediate

.seealso: `PCVERTEXPATCH`, `PCVertexPatchSetLevels()`
@*/
PetscErrorCode PCVertexPatchGetLevels(PC pc, PetscInt *n)
{
  PetscFunctionBegin;
  PetscUseMethod(pc, "PCVertexPatchGetLevels_C", (PC, PetscInt *), (pc, n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCVertexPatchSetType - Combine the vertex patches multiplicatively (default) or additively

  Logically Collective

  Input Parameters:
+ pc   - the preconditioner
- type - `PATCHWORK_VP_MULTIPLICATIVE` or `PATCHWORK_VP_ADDITIVE`

  Options Database Key:
. -pc_vertexpatch_type <multiplicative,additive> - the type

  Level: intermediate

.seealso: `PCVERTEXPATCH`
@*/
PetscErrorCode PCVertexPatchSetType(PC pc, PatchworkVPType type)
{
  PetscFunctionBegin;
  PetscTryMethod(pc, "PCVertexPatchSetType_C", (PC, PatchworkVPType), (pc, type));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCVertexPatchSetSmoothSteps - Set the number of pre- and post-smoothing steps of `PCVERTEXPATCH`

  Logically Collective

  Input Parameters:
+ pc - the preconditioner
- n  - steps (default 1)

  Options Database Key:
. -pc_vertexpatch_smooth_steps <n> - the steps

  Level: intermediate

.seealso: `PCVERTEXPATCH`
@*/
PetscErrorCode PCVertexPatchSetSmoothSteps(PC pc, PetscInt n)
{
  PetscFunctionBegin;
  PetscTryMethod(pc, "PCVertexPatchSetSmoothSteps_C", (PC, PetscInt), (pc, n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
  PCVERTEXPATCH - "vertexpatch": geometric multigrid for the Patchwork tensor-product operator on a
  Cartesian DMDA, with the colored multiplicative vertex-patch Schwarz smoother whose local solvers
  are exact by fast diagonalization (Cui, Grosse-Bley, Kanschat, Strzodka 2024)

  Options Database Keys:
+ -pc_vertexpatch_levels <n>                           - number of levels (default: as many as the grid allows)
. -pc_vertexpatch_smooth_steps <1>                     - pre- and post-smoothing steps
. -pc_vertexpatch_type <multiplicative,additive>       - how patches are combined
. -pc_vertexpatch_kernel <fused,global,separate>       - local residual fused with the solve, global residual, or local residual in a kernel of its own
. -pc_vertexpatch_precision <single,double>            - precision of the V-cycle (the Krylov method stays in double)
. -pc_vertexpatch_symmetric <false>                    - post-smoothing sweeps the colors in reverse order: a symmetric V-cycle for CG
. -pc_vertexpatch_omega <0>                            - damping of the additive smoother (0: 1/2^dim)
. -pc_vertexpatch_redundant <true>                     - several ranks: each rank also runs the neighbours' patches that reach into its nodes (one exchange per color, not two)
. -pc_vertexpatch_gather_nodes <n>                     - several ranks: the coarse levels of at most n nodes run whole on every rank, gathered once per cycle (0: never; default 2097152 on GPU vectors, 4096 on the CPU)
- -pc_vertexpatch_coarse_ksp_type, -pc_vertexpatch_coarse_pc_type - coarse solver when the coarsest level is more than one patch (default CG with the level's symmetric smoother)

  Notes:
  The preconditioning matrix must come from `MatCreatePatchworkTensor()` with Dirichlet conditions.
  Levels are made by coarsening the grid by two in every direction (`DMCoarsen()` on several ranks;
  on one rank the levels between the coarsest and the finest need no DM); operators on
  every level are matrix-free, prolongation is Q_k interpolation from parent to child cells and
  restriction its transpose. On several ranks the coarse levels (at most -pc_vertexpatch_gather_nodes
  nodes) run whole on every rank: each gathers the first of them once per cycle and runs the rest
  alone, so they exchange nothing, and the cycle is the one a single rank runs. After `MatPatchworkTensorSetCoefficients()` or
  `MatPatchworkTensorSetQuadrature()` on the same operator and `KSPSetOperators()` again, the next
  set-up refreshes what the coefficients enter and keeps the hierarchy (`PCView()` counts these);
  another operator, grid or precision is set up anew. Pre- and post-smoothing sweep the 2^dim colors in the same order, as in
  the paper: the V-cycle is not symmetric (use GMRES or Richardson); -pc_vertexpatch_symmetric
  reverses the post-smoothing order for a symmetric V-cycle that can precondition CG, at a cost of
  about one more iteration. The cycle runs in single precision by default
  (`PCVertexPatchSetPrecision()`): use `KSPFGMRES` around it for full double accuracy. Vectors of the DM's type choose the
  kernels: `-dm_vec_type cuda` runs the whole cycle on the GPU. With levels = 1 the PC is the
  smoother alone (forward sweeps from a zero guess).

  Level: beginner

.seealso: `MatCreatePatchworkTensor()`, `PCVertexPatchSetLevels()`, `PCMG`
M*/
PETSC_EXTERN PetscErrorCode PCCreate_VertexPatch(PC pc)
{
  PC_VertexPatch *vp;

  PetscFunctionBegin;
  PetscCall(PatchworkInitializePackage());
  PetscCall(PetscCitationsRegister(citation, &cited));
  PetscCall(PetscNew(&vp));
  vp->nlevels_req  = PETSC_DECIDE;
  vp->smooth_steps = 1;
  vp->redundant    = PETSC_TRUE;
  vp->gather_nodes = PETSC_DEFAULT;
  vp->type         = PATCHWORK_VP_MULTIPLICATIVE;
  vp->kernel       = PATCHWORK_VP_KERNEL_FUSED;
  vp->precision    = PATCHWORK_PRECISION_SINGLE;
  pc->data         = vp;

  pc->ops->setup          = PCSetUp_VertexPatch;
  pc->ops->apply          = PCApply_VertexPatch;
  pc->ops->reset          = PCReset_VertexPatch;
  pc->ops->destroy        = PCDestroy_VertexPatch;
  pc->ops->setfromoptions = PCSetFromOptions_VertexPatch;
  pc->ops->view           = PCView_VertexPatch;
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCVertexPatchSetLevels_C", PCVertexPatchSetLevels_VP));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCVertexPatchGetLevels_C", PCVertexPatchGetLevels_VP));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCVertexPatchSetType_C", PCVertexPatchSetType_VP));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCVertexPatchSetSmoothSteps_C", PCVertexPatchSetSmoothSteps_VP));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCVertexPatchSetPrecision_C", PCVertexPatchSetPrecision_VP));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCVertexPatchGetPrecision_C", PCVertexPatchGetPrecision_VP));
  PetscFunctionReturn(PETSC_SUCCESS);
}
