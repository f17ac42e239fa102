/* PCVERTEXPATCH setup: the level hierarchy by coarsening the DMDA, level operators, the kernel
   descriptors of smoothers and transfers, the coarse solver. On one rank the levels between the
   coarsest and the finest have no DM, so that no host work grows with the grid; a set-up for new
   coefficients on the same grid refreshes only the descriptors the coefficients enter. */
#include "vpimpl.h"
#include <patchwork/vec_kernel.h>

PetscErrorCode PCReset_VertexPatch(PC pc)
{
  PC_VertexPatch *vp = (PC_VertexPatch *)pc->data;

  PetscFunctionBegin;
  for (PetscInt l = 0; l < vp->nlevels && vp->levels; l++) {
    PC_VPLevel *L = &vp->levels[l];

    for (int i = 0; i < VP_NVEC; i++) {
      PetscCall(VecDestroy(&L->v[i]));
      PetscCall(PatchworkFree(vp->device, &L->f[i]));
    }
    for (int i = 0; i < VP_NLOC; i++) {
      PetscCall(PatchworkFree(vp->device, &L->loc[i]));
      PetscCall(PatchworkFree(vp->device, &L->wloc[i]));
    }
    PetscCall(PatchworkHaloDestroy(&L->halo));
    PetscCall(PatchworkHaloDestroy(&L->bhalo));
    PetscCall(PatchworkHaloDestroy(&L->whalo));
    PetscCall(MatDestroy(&L->A));
    PetscCall(MatDestroy(&L->P));
    PetscCall(DMDestroy(&L->dm));
  }
  PetscCall(PetscFree(vp->levels));
  PetscCall(KSPDestroy(&vp->coarse_ksp));
  PetscCall(PCVertexPatchGatherReset(pc));
  vp->nlevels = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode RegisterLevelEvents(PC_VPLevel *L, PetscInt l)
{
  char name[64];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(name, sizeof(name), "PWVPSmooth L%" PetscInt_FMT, l));
  PetscCall(PatchworkLogEventRegisterOnce(name, PC_CLASSID, &L->ev_smooth));
  PetscCall(PetscSNPrintf(name, sizeof(name), "PWVPResidual L%" PetscInt_FMT, l));
  PetscCall(PatchworkLogEventRegisterOnce(name, PC_CLASSID, &L->ev_residual));
  PetscCall(PetscSNPrintf(name, sizeof(name), "PWVPTransfer L%" PetscInt_FMT, l));
  PetscCall(PatchworkLogEventRegisterOnce(name, PC_CLASSID, &L->ev_transfer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Smoother descriptor: this rank's patches are those whose center node it owns */
static PetscErrorCode SetUpPatch(PC_VertexPatch *vp, PC_VPLevel *L, const PatchworkTensorInfo *info)
{
  PatchworkPatchDesc *p = &L->patch;
  PetscInt            xs[3], xm[3], k = vp->degree;
  PetscLogDouble      npatch = 1, a = 2 * k + 1, b = 2 * k - 1;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(p, sizeof(*p)));
  PetscCall(PatchworkTensorFillDesc(info, PW_SCATTER_ATOMIC, vp->serial, &p->op, NULL, &L->apply_flops));
  PetscCall(PatchworkTensorInfoCorners(info, xs, xm));
  for (PetscInt d = 0; d < 3; d++) {
    if (d < vp->dim) {
      p->vertex_start[d] = (int)PetscMax(1, (xs[d] + k - 1) / k);
      p->vertex_end[d]   = (int)PetscMin(L->cells[d], (xs[d] + xm[d] + k - 1) / k);
      if (p->vertex_end[d] < p->vertex_start[d]) p->vertex_end[d] = p->vertex_start[d];
    } else {
      p->vertex_start[d] = 0;
      p->vertex_end[d]   = 1;
    }
    npatch *= p->vertex_end[d] - p->vertex_start[d];
  }
  p->omega = vp->type == PATCHWORK_VP_ADDITIVE ? (vp->omega > 0 ? vp->omega : 1.0 / (1 << vp->dim)) : 1.0;
  PetscCheck(!PatchworkPatchSetUp1D(p), PETSC_COMM_SELF, PETSC_ERR_LIB, "The 1D patch eigenproblem of degree %" PetscInt_FMT " failed", k);
  /* multiply-adds per patch: residual contractions with the (2k-1)x(2k+1) patch matrices, then
     six contractions with S of the fast-diagonalization solve; a color holds about 1/2^dim of them */
  if (vp->dim == 3) L->smooth_flops = 2 * npatch * (2 * a * a * a * b + 3 * a * a * b * b + 2 * a * b * b * b + 6 * b * b * b * b);
  else L->smooth_flops = 2 * npatch * (2 * a * a * b + 3 * a * b * b + 4 * b * b * b);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The patches of the vertex box [vs, ve) less the interior box [lo, hi), as disjoint boxes: below and
   above the interior in the last direction, then in the one before within the interior's range there,
   and so on */
static void PatchBoxes(const PatchworkPatchDesc *p, const int lo[3], const int hi[3], PatchworkPatchDesc box[6], PetscInt *n)
{
  int vs[3], ve[3];

  *n = 0;
  for (int d = 0; d < 3; d++) {
    vs[d] = p->vertex_start[d];
    ve[d] = p->vertex_end[d];
  }
  for (int d = p->op.dim - 1; d >= 0; d--) {
    const int from[2] = {vs[d], hi[d]}, to[2] = {lo[d], ve[d]};

    for (int s = 0; s < 2; s++) {
      if (from[s] >= to[s]) continue;
      box[*n] = *p;
      for (int e = 0; e < 3; e++) {
        box[*n].vertex_start[e] = vs[e];
        box[*n].vertex_end[e]   = ve[e];
      }
      box[*n].vertex_start[d] = from[s];
      box[*n].vertex_end[d]   = to[s];
      (*n)++;
    }
    vs[d] = lo[d];
    ve[d] = hi[d];
  }
}

/* floor(a / b) for b > 0 */
static inline PetscInt FloorDiv(PetscInt a, PetscInt b)
{
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* Several ranks: the interior patches (every node of their closure owned) and cells of the level run
   on the global arrays, the others on the ghosted copies. Their descriptors, copies of L->patch with
   other boxes, carry the coefficients: made again by a refreshing set-up */
static PetscErrorCode SetUpSplitBoxes(PC_VertexPatch *vp, PC_VPLevel *L)
{
  const PetscInt k = vp->degree;
  PetscInt       xs[3], xm[3];
  int            lo[3], hi[3];

  PetscFunctionBegin;
  PetscCall(DMDAGetCorners(L->dm, &xs[0], &xs[1], &xs[2], &xm[0], &xm[1], &xm[2]));
  L->patch_int = L->patch;
  for (int d = 0; d < 3; d++) {
    if (d < vp->dim) { /* k (v - 1) >= xs and k (v + 1) <= xs + xm - 1 */
      lo[d] = (int)PetscMin(L->patch.vertex_end[d], PetscMax(L->patch.vertex_start[d], (xs[d] + k - 1) / k + 1));
      hi[d] = (int)PetscMax(lo[d], PetscMin(L->patch.vertex_end[d], (xs[d] + xm[d] - 1) / k));
    } else {
      lo[d] = 0;
      hi[d] = 1;
    }
    L->patch_int.vertex_start[d] = lo[d];
    L->patch_int.vertex_end[d]   = hi[d];
    L->patch_int.op.in_start[d] = L->patch_int.op.out_start[d] = (int)xs[d];
    L->patch_int.op.in_size[d] = L->patch_int.op.out_size[d] = (int)xm[d];
  }
  PatchBoxes(&L->patch, lo, hi, L->patch_bnd, &L->npatch_bnd);
  PetscCall(PatchworkTensorSplitCells(L->dm, &L->patch.op, &L->op_int, L->op_bnd, &L->nop_bnd));
  if (L->redundant) { /* every patch whose interior, k (v - 1) < i < k (v + 1), holds an owned node i */
    PatchworkPatchDesc w = L->patch;

    for (int d = 0; d < 3; d++) {
      if (d < vp->dim) {
        w.vertex_start[d] = (int)PetscMax(1, (xs[d] + k) / k - 1);
        w.vertex_end[d]   = (int)PetscMin(L->cells[d], FloorDiv(xs[d] + xm[d] - 2, k) + 2);
        if (w.vertex_end[d] < w.vertex_start[d]) w.vertex_end[d] = w.vertex_start[d];
      }
      w.op.in_start[d] = w.op.out_start[d] = (int)L->wgs[d];
      w.op.in_size[d] = w.op.out_size[d] = (int)L->wgm[d];
    }
    PatchBoxes(&w, lo, hi, L->wpatch_bnd, &L->nwpatch_bnd);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the level's patches run redundantly (-pc_vertexpatch_redundant): the patches of the
   neighbours that reach into this rank's nodes read 2k - 1 nodes beyond them, which needs every rank's
   box that wide (the halo reaches the neighbours' boxes only); the corners of the ghosted copies then */
static PetscErrorCode ChooseRedundant(PC_VertexPatch *vp, PC_VPLevel *L)
{
  const PetscInt width = 2 * vp->degree - 1;
  PetscInt       xm[3], narrow = PETSC_MAX_INT, gnarrow;

  PetscFunctionBegin;
  L->redundant = PETSC_FALSE;
  if (!vp->redundant) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DMDAGetCorners(L->dm, NULL, NULL, NULL, &xm[0], &xm[1], &xm[2]));
  for (int d = 0; d < vp->dim; d++) narrow = PetscMin(narrow, xm[d]);
  PetscCallMPI(MPI_Allreduce(&narrow, &gnarrow, 1, MPIU_INT, MPI_MIN, PetscObjectComm((PetscObject)L->dm)));
  L->redundant = (PetscBool)(gnarrow >= width);
  PetscCall(PatchworkDMDAGhostBox(L->dm, width, L->wgs, L->wgm)); /* whalo's, by the same function */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Flag the nodes of the closures of the patches in boxes, on a ghosted copy with corners gs, gm */
static PetscErrorCode MarkPatchClosures(PetscInt k, PetscInt dim, const PatchworkPatchDesc box[], PetscInt n, const PetscInt gs[3], const PetscInt gm[3], PetscBool needed[])
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < n; i++) {
    PetscInt nlo[3], nhi[3];

    for (int d = 0; d < 3; d++) {
      nlo[d] = d < dim ? k * (box[i].vertex_start[d] - 1) : 0;
      nhi[d] = d < dim ? k * box[i].vertex_end[d] : 0;
    }
    PetscCall(PatchworkDMDAMarkNodes(gs, gm, nlo, nhi, needed));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ... and the ghosted copies with their halos (they depend on the grid only). bhalo fills and sums the
   nodes the boundary patches (unless redundant) and the float residual's boundary cells touch; the
   transfers of the single-precision cycle keep whole ghosted copies (halo); redundant patches have
   copies of their own, 2k - 1 deep (whalo, wloc) */
static PetscErrorCode SetUpSplitHalos(PC_VertexPatch *vp, PC_VPLevel *L)
{
  const PetscInt k  = vp->degree;
  const size_t   es = vp->single ? sizeof(float) : sizeof(double);
  PetscBool     *needed;

  PetscFunctionBegin;
  if (!L->redundant || vp->single) {
    PetscInt gs[3], gm[3];

    PetscCall(DMDAGetGhostCorners(L->dm, &gs[0], &gs[1], &gs[2], &gm[0], &gm[1], &gm[2]));
    PetscCall(PetscCalloc1(gm[0] * gm[1] * gm[2], &needed));
    if (!L->redundant) PetscCall(MarkPatchClosures(k, vp->dim, L->patch_bnd, L->npatch_bnd, gs, gm, needed));
    if (vp->single) PetscCall(PatchworkTensorMarkCells(L->dm, L->op_bnd, L->nop_bnd, needed)); /* the float residual's apply */
    PetscCall(PatchworkHaloCreate(L->dm, PETSC_DECIDE, vp->single, vp->device, needed, &L->bhalo));
    PetscCall(PetscFree(needed));
    PetscCall(PatchworkHaloGetLocalSize(L->bhalo, &L->nloc));
    if (vp->single) PetscCall(PatchworkHaloCreate(L->dm, PETSC_DECIDE, PETSC_TRUE, vp->device, NULL, &L->halo));
    for (int i = 0; i < VP_NLOC; i++) { /* redundant: the float residual and transfers only (x in, y out) */
      if (L->redundant ? i == VP_LB || i == VP_LR : i == VP_LR && vp->kernel != PATCHWORK_VP_KERNEL_SEPARATE) continue;
      PetscCall(PatchworkMalloc(vp->device, (size_t)L->nloc * es, &L->loc[i]));
    }
  }
  if (L->redundant) {
    PetscInt nw;

    PetscCall(PetscCalloc1(L->wgm[0] * L->wgm[1] * L->wgm[2], &needed));
    PetscCall(MarkPatchClosures(k, vp->dim, L->wpatch_bnd, L->nwpatch_bnd, L->wgs, L->wgm, needed));
    PetscCall(PatchworkHaloCreate(L->dm, 2 * k - 1, vp->single, vp->device, needed, &L->whalo));
    PetscCall(PetscFree(needed));
    PetscCall(PatchworkHaloGetLocalSize(L->whalo, &nw));
    for (int i = 0; i < VP_NLOC; i++) {
      if (i == VP_LR && vp->kernel != PATCHWORK_VP_KERNEL_SEPARATE) continue;
      PetscCall(PatchworkMalloc(vp->device, (size_t)nw * es, &L->wloc[i]));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether a set-up exists for the operator now given: the same operator (another Mat object is a
   DIFFERENT_NONZERO_PATTERN to PETSc) on the same grid (the finest level's DM and cells), the degree
   and options that shape the arrays, vectors on the same side; only the coefficients or the
   quadrature may have changed */
static PetscErrorCode SameStructure(PC pc, const PatchworkTensorInfo *info, PetscBool *same)
{
  PC_VertexPatch *vp = (PC_VertexPatch *)pc->data;
  PC_VPLevel     *L;
  PetscBool       device;

  PetscFunctionBegin;
  *same = PETSC_FALSE;
  if (!vp->levels || pc->flag == DIFFERENT_NONZERO_PATTERN) PetscFunctionReturn(PETSC_SUCCESS);
  L = &vp->levels[vp->nlevels - 1];
  PetscCall(PatchworkMatVectorsOnDevice(pc->pmat, &device));
  *same = (PetscBool)(pc->pmat == L->A && info->dm == L->dm && info->degree == vp->setup_degree && info->cells[0] == L->cells[0] && info->cells[1] == L->cells[1] && info->cells[2] == L->cells[2] && device == vp->device && vp->type == vp->setup_type && vp->kernel == vp->setup_kernel && vp->redundant == vp->setup_redundant && vp->gather_nodes == vp->setup_gather_nodes);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* New coefficients or quadrature on the same grid: the level operators take them, and the
   descriptors that carry them (the smoothers' operator and fast-diagonalization factors, the split
   boxes on several ranks) and the coarse solver's set-up are made again. Grids, transfers, vectors
   and halos stay: nothing here grows with the grid */
static PetscErrorCode Refresh(PC pc, const PatchworkTensorInfo *info)
{
  PC_VertexPatch *vp = (PC_VertexPatch *)pc->data;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PATCHWORK_VPSetUp, pc, 0, 0, 0));
  for (PetscInt l = vp->nlevels - 1; l >= 0; l--) {
    PC_VPLevel         *L = &vp->levels[l];
    PatchworkTensorInfo li;

    if (l < vp->nlevels - 1) {
      PetscCall(MatPatchworkTensorSetCoefficients(L->A, info->alpha, info->beta));
      PetscCall(MatPatchworkTensorSetQuadrature(L->A, info->quadrature));
    }
    PetscCall(MatPatchworkTensorGetInfo(L->A, &li));
    PetscCall(SetUpPatch(vp, L, &li));
    if (!vp->serial) PetscCall(SetUpSplitBoxes(vp, L));
  }
  {
    PatchworkTensorDesc cells;

    PetscCall(PatchworkTensorFillDesc(info, PW_SCATTER_ATOMIC, vp->serial, &cells, &vp->boundary, NULL));
  }
  PetscCall(PCVertexPatchGatherRefresh(pc));
  if (vp->coarse_ksp) { /* its operator changed: the KSP's PC (Jacobi's diagonal, ...) is made again */
    PetscCall(KSPSetOperators(vp->coarse_ksp, vp->levels[0].A, vp->levels[0].A));
    PetscCall(KSPSetUp(vp->coarse_ksp));
  }
  vp->nrefresh++;
  PetscCall(PetscInfo(pc, "New coefficients (alpha %g, beta %g) on the same grid: descriptors refreshed, hierarchy kept\n", (double)info->alpha, (double)info->beta));
  PetscCall(PetscLogEventEnd(PATCHWORK_VPSetUp, pc, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCSetUp_VertexPatch(PC pc)
{
  PC_VertexPatch     *vp   = (PC_VertexPatch *)pc->data;
  MPI_Comm            comm = PetscObjectComm((PetscObject)pc);
  PatchworkTensorInfo info;
  PetscBool           ours;
  PetscMPIInt         size;
  PetscInt            maxl, n;
  char                why[256];

  PetscFunctionBegin;
  PetscCall(MatIsPatchworkTensor(pc->pmat, &ours));
  if (!ours) {
    MatType type;

    PetscCall(MatGetType(pc->pmat, &type));
    SETERRQ(comm, PETSC_ERR_ARG_WRONG, "PCVERTEXPATCH needs the Patchwork tensor-product operator (MatCreatePatchworkTensor()) as preconditioning matrix, not a Mat of type %s", type);
  }
  PetscCall(MatPatchworkTensorGetInfo(pc->pmat, &info));
  PetscCall(PatchworkTensorRequireCartesian(&info, comm, "PCVERTEXPATCH"));
  PetscCheck(info.bc == PATCHWORK_BC_DIRICHLET, comm, PETSC_ERR_SUP, "PCVERTEXPATCH supports Dirichlet conditions only (patches live around interior vertices); the operator has %s conditions", PatchworkTensorBCs[info.bc]);
  if (pc->setupcalled && vp->levels) {
    PetscBool same;

    PetscCall(SameStructure(pc, &info, &same));
    if (same) {
      PetscCall(Refresh(pc, &info));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    PetscCall(PCReset_VertexPatch(pc)); /* another grid or other options: everything anew */
  }
  PetscCall(PetscLogEventBegin(PATCHWORK_VPSetUp, pc, 0, 0, 0));
  vp->dim          = info.dim;
  vp->degree       = info.degree;
  vp->setup_degree = info.degree;
  vp->setup_type   = vp->type;
  vp->setup_kernel = vp->kernel;
  vp->setup_redundant = vp->redundant;
  vp->setup_gather_nodes = vp->gather_nodes;
  vp->nrefresh     = 0;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  vp->serial = size == 1 ? PETSC_TRUE : PETSC_FALSE;
  vp->single = (PetscBool)(vp->precision == PATCHWORK_PRECISION_SINGLE);
  PetscCall(PatchworkMatVectorsOnDevice(pc->pmat, &vp->device));
  /* the default gathers more on the GPU, where a level's kernels take about as long as its exchanges
     up to a few million nodes, than on the CPU */
  vp->gather_limit = vp->gather_nodes == PETSC_DEFAULT ? (vp->device ? PCVERTEXPATCH_GATHER_NODES_DEVICE : PCVERTEXPATCH_GATHER_NODES_HOST) : vp->gather_nodes;
  /* the levels the ranks share are limited by the partition (maxl); gathered ones only by the cells,
     the limit of the same grid without a DM */
  PetscCall(PatchworkMaxLevels(&info, &maxl, why, sizeof(why)));
  n = maxl;
  if (!vp->serial && vp->gather_limit > 0) {
    PatchworkTensorInfo cells = info;

    cells.dm = NULL;
    PetscCall(PatchworkMaxLevels(&cells, &n, why, sizeof(why)));
  }
  if (vp->nlevels_req != PETSC_DECIDE && vp->nlevels_req > 0) {
    PetscCheck(vp->nlevels_req <= n, comm, PETSC_ERR_ARG_OUTOFRANGE, "The grid of %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT " cells cannot be coarsened to %" PetscInt_FMT " levels (at most %" PetscInt_FMT ": %s)", info.cells[0], info.cells[1], info.dim == 3 ? info.cells[2] : 1, vp->nlevels_req, n, why);
    n = vp->nlevels_req;
  }
  PetscCall(PCVertexPatchGatherLevels(pc, &info, n, maxl, &vp->nlevels));
  PetscCall(PetscCalloc1(vp->nlevels, &vp->levels));
  {
    Mat *ops, *interp;

    PetscCall(PetscMalloc2(vp->nlevels, &ops, vp->nlevels, &interp));
    PetscCall(PatchworkCreateLevels(pc->pmat, vp->nlevels, PETSC_TRUE, ops, interp)); /* the middle levels without a DM on one rank */
    for (PetscInt l = 0; l < vp->nlevels; l++) {
      vp->levels[l].A = ops[l];
      vp->levels[l].P = interp[l];
    }
    PetscCall(PetscFree2(ops, interp));
  }
  for (PetscInt l = vp->nlevels - 1; l >= 0; l--) {
    PC_VPLevel         *L = &vp->levels[l];
    PatchworkTensorInfo li;

    PetscCall(MatPatchworkTensorGetInfo(L->A, &li));
    L->dm = li.dm;
    PetscCall(PetscObjectReference((PetscObject)L->dm));
    PetscCall(PetscArraycpy(L->cells, li.cells, 3));
    PetscCall(MatGetLocalSize(L->A, &L->n, NULL));
    if (L->P) PetscCall(PatchworkTransferGetDesc(L->P, &L->transfer));
    if (vp->single) {
      for (int i = 0; i < VP_NVEC; i++)
        if (i != VP_W || vp->type == PATCHWORK_VP_ADDITIVE) PetscCall(PatchworkMalloc(vp->device, (size_t)L->n * sizeof(float), (void **)&L->f[i]));
    } else { /* the finest level's x and b are the caller's vectors */
      PetscCall(MatCreateVecs(L->A, &L->v[VP_R], NULL));
      if (l < vp->nlevels - 1) {
        PetscCall(VecDuplicate(L->v[VP_R], &L->v[VP_X]));
        PetscCall(VecDuplicate(L->v[VP_R], &L->v[VP_B]));
      }
      if (vp->type == PATCHWORK_VP_ADDITIVE) PetscCall(VecDuplicate(L->v[VP_R], &L->v[VP_W]));
    }
    PetscCall(SetUpPatch(vp, L, &li));
    if (!vp->serial) {
      PetscCall(ChooseRedundant(vp, L));
      PetscCall(SetUpSplitBoxes(vp, L));
      PetscCall(SetUpSplitHalos(vp, L));
    }
    PetscCall(RegisterLevelEvents(L, l + vp->ngathered));
  }
  {
    PatchworkTensorDesc cells;

    PetscCall(PatchworkTensorFillDesc(&info, PW_SCATTER_ATOMIC, vp->serial, &cells, &vp->boundary, NULL));
  }

  if (vp->ngathered) { /* the levels below levels[0] on every rank alone, in double on levels[0]'s vectors */
    if (vp->single) PetscCall(MatCreateVecs(vp->levels[0].A, &vp->levels[0].v[VP_X], &vp->levels[0].v[VP_B]));
    PetscCall(PCVertexPatchGatherSetUp(pc));
    PetscCall(PetscLogEventEnd(PATCHWORK_VPSetUp, pc, 0, 0, 0));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* coarse solve: one patch holds every unknown when the coarsest grid has two cells per direction */
  vp->coarse_patch = PETSC_TRUE;
  for (PetscInt d = 0; d < vp->dim; d++) vp->coarse_patch = (PetscBool)(vp->coarse_patch && vp->levels[0].cells[d] == 2);
  if (vp->nlevels > 1 && !vp->coarse_patch) {
    const char *prefix;
    PC          cpc;

    if (vp->single) PetscCall(MatCreateVecs(vp->levels[0].A, &vp->levels[0].v[VP_X], &vp->levels[0].v[VP_B])); /* the KSP works in double */
    PetscCall(KSPCreate(comm, &vp->coarse_ksp));
    PetscCall(PCGetOptionsPrefix(pc, &prefix));
    PetscCall(KSPSetOptionsPrefix(vp->coarse_ksp, prefix));
    PetscCall(KSPAppendOptionsPrefix(vp->coarse_ksp, "pc_vertexpatch_coarse_"));
    PetscCall(KSPSetOperators(vp->coarse_ksp, vp->levels[0].A, vp->levels[0].A));
    PetscCall(KSPSetType(vp->coarse_ksp, KSPCG));
    PetscCall(KSPGetPC(vp->coarse_ksp, &cpc));
    /* preconditioned by the level's own smoother, symmetric, in double: with Jacobi CG needs about 30
       iterations at Q3 and about 100 at Q7, with this 2-6 */
    PetscCall(PCSetType(cpc, PCVERTEXPATCH));
    {
      PC_VertexPatch *cvp = (PC_VertexPatch *)cpc->data;

      cvp->nlevels_req = 1;
      cvp->symmetric   = PETSC_TRUE;
      cvp->precision   = PATCHWORK_PRECISION_DOUBLE;
    }
    PetscCall(KSPSetTolerances(vp->coarse_ksp, 1e-12, PETSC_DEFAULT, PETSC_DEFAULT, 1000));
    PetscCall(KSPSetFromOptions(vp->coarse_ksp));
    PetscCall(KSPSetUp(vp->coarse_ksp));
  }
  PetscCall(PetscLogEventEnd(PATCHWORK_VPSetUp, pc, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}
