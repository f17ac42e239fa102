/* MatMult / MatMultAdd / MatGetDiagonal of the tensor-product operator: set up the kernel
   descriptors, move data between global and ghosted local vectors, and dispatch to the CPU
   reference or the CUDA kernels by the memory type of the vectors. No arithmetic on field data here. */
#include "tensorimpl.h"

static void SetBox(int start[3], int size[3], PetscInt s0, PetscInt s1, PetscInt s2, PetscInt n0, PetscInt n1, PetscInt n2)
{
  start[0] = (int)s0;
  start[1] = (int)s1;
  start[2] = (int)s2;
  size[0]  = (int)n0;
  size[1]  = (int)n1;
  size[2]  = (int)n2;
}

/*
  PatchworkTensorFillDesc - the kernel descriptors of the operator described by info on this rank

  cells: this rank's cells (a cell belongs to the rank owning its first node) with the boxes of the
  ghosted local arrays, or of the whole grid when serial (kernels then act on global arrays); an
  operator without a DM (one rank) has the whole grid;
  owned: the same with the out box restricted to the owned nodes (Dirichlet rows of global vectors).
  flops: per apply of this rank's cells.
*/
PetscErrorCode PatchworkTensorFillDesc(const PatchworkTensorInfo *info, PatchworkScatter scatter, PetscBool serial, PatchworkTensorDesc *c, PatchworkTensorDesc *owned, PetscLogDouble *flops)
{
  PetscInt   xs[3], xm[3], gs[3], gm[3], k = info->degree, dim = info->dim;
  PetscReal  vol = 1, h[3];
  PetscInt64 ncells = 1;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(c, sizeof(*c)));
  c->dim       = (int)dim;
  c->degree    = (int)k;
  c->dirichlet = info->bc == PATCHWORK_BC_DIRICHLET;
  c->scatter   = scatter;
  PetscCheck(!PatchworkTensor1DMatrices((int)k, info->quadrature == PATCHWORK_QUADRATURE_GAUSS ? PW_QUAD_GAUSS : PW_QUAD_GAUSSLOBATTO, c->mass1d, c->stiff1d), PETSC_COMM_SELF, PETSC_ERR_LIB, "Cannot build the 1D matrices of degree %" PetscInt_FMT, k);
  for (PetscInt d = 0; d < dim; d++) {
    h[d] = (info->upper[d] - info->lower[d]) / (PetscReal)info->cells[d];
    vol *= h[d];
  }
  c->coef_mass = (double)(info->alpha * vol);
  for (PetscInt d = 0; d < dim; d++) c->coef_stiff[d] = (double)(info->beta * vol / (h[d] * h[d]));

  PetscCall(PatchworkTensorInfoGhostCorners(info, xs, xm, gs, gm));
  for (PetscInt d = 0; d < 3; d++) {
    c->nodes[d]      = (int)(d < dim ? k * info->cells[d] + 1 : 1);
    c->cell_start[d] = (int)(d < dim ? (xs[d] + k - 1) / k : 0);
    c->cell_end[d]   = (int)(d < dim ? PetscMin(info->cells[d], (xs[d] + xm[d] + k - 1) / k) : 1);
    if (c->cell_end[d] < c->cell_start[d]) c->cell_end[d] = c->cell_start[d];
    if (d < dim && c->cell_end[d] > c->cell_start[d]) PetscCheck(k * c->cell_end[d] < gs[d] + gm[d], PETSC_COMM_SELF, PETSC_ERR_PLIB, "Ghost region too narrow for the cells of this rank");
    ncells *= c->cell_end[d] - c->cell_start[d];
  }
  if (serial) SetBox(c->in_start, c->in_size, 0, 0, 0, c->nodes[0], c->nodes[1], c->nodes[2]);
  else SetBox(c->in_start, c->in_size, gs[0], gs[1], gs[2], gm[0], gm[1], gm[2]);
  PetscCall(PetscArraycpy(c->out_start, c->in_start, 3));
  PetscCall(PetscArraycpy(c->out_size, c->in_size, 3));
  if (owned) {
    *owned = *c;
    SetBox(owned->out_start, owned->out_size, xs[0], xs[1], xs[2], xm[0], xm[1], xm[2]);
  }
  if (flops) {
    const PetscLogDouble n = (PetscLogDouble)(k + 1);
    /* 1D contractions per cell: 7 of n^4 multiply-adds in 3D, 5 of n^3 in 2D */
    *flops = (PetscLogDouble)ncells * (dim == 3 ? 14 * n * n * n * n : 10 * n * n * n);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  PatchworkTensorSplitCells - On several ranks, the cells that touch this rank's nodes, as the interior
  ones of this rank's cells (c, boxes of the ghosted local arrays), whose nodes are all owned, to apply
  on the global arrays (in and out box the owned one), and the boundary layer, applied on the ghosted
  local arrays in up to 2 dim disjoint boxes: the rank's cells along its upper faces (a cell's nodes
  reach k beyond its first) and the lower neighbours' cells whose last nodes are this rank's. Those are
  computed on both ranks, so that each keeps the sums at its own nodes and none travel
  (PatchworkHaloAddOwned()): past the interior in the last direction, then in the one before within
  the interior's range there, and so on.
*/
PetscErrorCode PatchworkTensorSplitCells(DM dm, const PatchworkTensorDesc *c, PatchworkTensorDesc *interior, PatchworkTensorDesc boundary[6], PetscInt *nboundary)
{
  PetscInt xs[3], xm[3], gs[3], gm[3], lo[3], ie[3], vs[3], ve[3], k = c->degree, dim = c->dim;

  PetscFunctionBegin;
  PetscCall(DMDAGetCorners(dm, &xs[0], &xs[1], &xs[2], &xm[0], &xm[1], &xm[2]));
  PetscCall(DMDAGetGhostCorners(dm, &gs[0], &gs[1], &gs[2], &gm[0], &gm[1], &gm[2]));
  *interior  = *c;
  *nboundary = 0;
  for (PetscInt d = 0; d < 3; d++) {
    lo[d] = c->cell_start[d];
    /* the cells starting before ie[d] end at an owned node (k*e + k <= xs + xm - 1) */
    ie[d] = d < dim ? PetscMax(c->cell_start[d], PetscMin(c->cell_end[d], (xs[d] + xm[d] - 1) / k)) : c->cell_end[d];
    interior->cell_end[d] = (int)ie[d];
    interior->in_start[d] = interior->out_start[d] = (int)xs[d];
    interior->in_size[d] = interior->out_size[d] = (int)xm[d];
    /* and the layer below, whose cells end at the rank's first node */
    vs[d] = d < dim && c->cell_start[d] > 0 ? c->cell_start[d] - 1 : c->cell_start[d];
    ve[d] = c->cell_end[d];
    PetscCheck(k * vs[d] >= gs[d], PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "The DMDA's ghost region is %" PetscInt_FMT " nodes deep below this rank's nodes in direction %" PetscInt_FMT ": Q%" PetscInt_FMT " on several ranks needs a box stencil of width at least %" PetscInt_FMT, xs[d] - gs[d], d, k, k);
  }
  for (PetscInt d = dim - 1; d >= 0; d--) {
    const PetscInt from[2] = {vs[d], ie[d]}, to[2] = {lo[d], ve[d]};

    for (int side = 0; side < 2; side++) {
      PatchworkTensorDesc *b = &boundary[*nboundary];

      if (from[side] >= to[side]) continue;
      *b = *c;
      for (PetscInt e = 0; e < 3; e++) {
        b->cell_start[e] = (int)vs[e];
        b->cell_end[e]   = (int)ve[e];
      }
      b->cell_start[d] = (int)from[side];
      b->cell_end[d]   = (int)to[side];
      (*nboundary)++;
    }
    vs[d] = lo[d];
    ve[d] = ie[d];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Flag the nodes of the ghosted local box (gs, gm) in the global node box [lo, hi] (inclusive) */
PetscErrorCode PatchworkDMDAMarkNodes(const PetscInt gs[3], const PetscInt gm[3], const PetscInt lo[3], const PetscInt hi[3], PetscBool needed[])
{
  PetscFunctionBegin;
  for (PetscInt z = lo[2]; z <= hi[2]; z++)
    for (PetscInt y = lo[1]; y <= hi[1]; y++)
      for (PetscInt x = lo[0]; x <= hi[0]; x++) {
        PetscCheck(x >= gs[0] && x < gs[0] + gm[0] && y >= gs[1] && y < gs[1] + gm[1] && z >= gs[2] && z < gs[2] + gm[2], PETSC_COMM_SELF, PETSC_ERR_PLIB, "Node (%" PetscInt_FMT ",%" PetscInt_FMT ",%" PetscInt_FMT ") outside the ghosted box", x, y, z);
        needed[((z - gs[2]) * gm[1] + y - gs[1]) * gm[0] + x - gs[0]] = PETSC_TRUE;
      }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Flag the nodes of the cells of the boundary boxes */
PetscErrorCode PatchworkTensorMarkCells(DM dm, const PatchworkTensorDesc boundary[], PetscInt nboundary, PetscBool needed[])
{
  PetscInt gs[3], gm[3];

  PetscFunctionBegin;
  PetscCall(DMDAGetGhostCorners(dm, &gs[0], &gs[1], &gs[2], &gm[0], &gm[1], &gm[2]));
  for (PetscInt i = 0; i < nboundary; i++) {
    const PatchworkTensorDesc *b = &boundary[i];
    PetscInt                   lo[3], hi[3];

    for (PetscInt d = 0; d < 3; d++) {
      lo[d] = d < b->dim ? b->degree * b->cell_start[d] : 0;
      hi[d] = d < b->dim ? b->degree * b->cell_end[d] : 0;
    }
    PetscCall(PatchworkDMDAMarkNodes(gs, gm, lo, hi, needed));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PatchworkTensorSetUpDescriptors(Mat A)
{
  Mat_PatchworkTensor *ctx;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &ctx));
  if (ctx->descvalid) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventBegin(PATCHWORK_TensorSetUp, A, 0, 0, 0));
  PetscCall(PatchworkTensorFillDesc(&ctx->info, ctx->scatter, ctx->serial, &ctx->cells_desc, &ctx->owned_desc, &ctx->flops));
  /* MatMult and MatGetDiagonal set y: no separate zeroing pass */
  ctx->cells_desc.overwrite = 1;
  if (!ctx->serial) {
    PetscCall(PatchworkTensorSplitCells(ctx->info.dm, &ctx->cells_desc, &ctx->interior_desc, ctx->boundary_desc, &ctx->nboundary));
    ctx->interior_desc.overwrite = 0; /* adds: ApplySplit() zeroes y first */
    for (PetscInt i = 0; i < ctx->nboundary; i++) ctx->boundary_desc[i].overwrite = 0;
  }
  ctx->descvalid = PETSC_TRUE;
  PetscCall(PetscLogEventEnd(PATCHWORK_TensorSetUp, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The halo of the boundary cells' nodes and the ghosted local arrays, for arrays on the host or the
   device, made when first needed (the split depends only on the grid, not on the coefficients) */
static PetscErrorCode GetExchange(Mat_PatchworkTensor *ctx, PetscBool device, PatchworkHalo *halo, void **xloc, void **yloc)
{
  PetscInt nlocal;

  PetscFunctionBegin;
  if (!ctx->halo[device]) {
    PetscInt   gs[3], gm[3];
    PetscBool *needed;

    PetscCall(DMDAGetGhostCorners(ctx->info.dm, &gs[0], &gs[1], &gs[2], &gm[0], &gm[1], &gm[2]));
    PetscCall(PetscCalloc1(gm[0] * gm[1] * gm[2], &needed));
    PetscCall(PatchworkTensorMarkCells(ctx->info.dm, ctx->boundary_desc, ctx->nboundary, needed));
    PetscCall(PatchworkHaloCreate(ctx->info.dm, PETSC_DECIDE, PETSC_FALSE, device, needed, &ctx->halo[device]));
    PetscCall(PetscFree(needed));
  }
  PetscCall(PatchworkHaloGetLocalSize(ctx->halo[device], &nlocal));
  for (int i = 0; i < 2; i++)
    if (!ctx->loc[device][i]) PetscCall(PatchworkMalloc(device, (size_t)nlocal * sizeof(double), &ctx->loc[device][i]));
  *halo = ctx->halo[device];
  *xloc = ctx->loc[device][0];
  *yloc = ctx->loc[device][1];
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PatchworkTensorDestroyExchange(Mat_PatchworkTensor *ctx)
{
  PetscFunctionBegin;
  for (int device = 0; device < 2; device++) {
    PetscCall(PatchworkHaloDestroy(&ctx->halo[device]));
    for (int i = 0; i < 2; i++) PetscCall(PatchworkFree((PetscBool)device, &ctx->loc[device][i]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef enum {
  KERNEL_APPLY,
  KERNEL_DIAGONAL,
  KERNEL_BOUNDARY
} KernelKind;

/* One kernel on raw arrays of the given side (x unused by the diagonal) */
static PetscErrorCode RunArrays(Mat_PatchworkTensor *ctx, PetscBool device, KernelKind kind, const PatchworkTensorDesc *d, const double *x, double *y)
{
  PetscFunctionBegin;
  if (device) {
#if defined(PATCHWORK_HAVE_CUDA)
    void *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
    PetscCall(PetscLogGpuTimeBegin());
    switch (kind) {
    case KERNEL_APPLY:
      PatchworkCallKernel(PatchworkTensorApplyCUDA(d, x, y, stream));
      break;
    case KERNEL_DIAGONAL:
      PatchworkCallKernel(PatchworkTensorDiagonalCUDA(d, y, stream));
      break;
    case KERNEL_BOUNDARY:
      PatchworkCallKernel(PatchworkTensorBoundaryCUDA(d, x, y, stream));
      break;
    }
    PetscCall(PetscLogGpuTimeEnd());
#else
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "Device vectors, but Patchwork was built without CUDA: rebuild it against a PETSc configured with CUDA");
#endif
  } else {
    switch (kind) {
    case KERNEL_APPLY:
      PatchworkTensorApplyRef(d, x, y);
      break;
    case KERNEL_DIAGONAL:
      PatchworkTensorDiagonalRef(d, y);
      break;
    case KERNEL_BOUNDARY:
      PatchworkTensorBoundaryRef(d, x, y);
      break;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode LogApplyFlops(Mat_PatchworkTensor *ctx, PetscBool device)
{
  PetscFunctionBegin;
  if (device) PetscCall(PetscLogGpuFlops(ctx->flops));
  else PetscCall(PetscLogFlops(ctx->flops));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode RunKernel(Mat_PatchworkTensor *ctx, KernelKind kind, const PatchworkTensorDesc *d, Vec x, Vec y)
{
  PatchworkArrays p;

  PetscFunctionBegin;
  if (d->overwrite && kind != KERNEL_BOUNDARY) PetscCall(PatchworkArraysGetOverwrite(x, NULL, y, &p));
  else PetscCall(PatchworkArraysGet(x, NULL, y, &p));
  PetscCall(RunArrays(ctx, p.device, kind, d, p.r[0], p.w));
  if (kind == KERNEL_APPLY) PetscCall(LogApplyFlops(ctx, p.device));
  PetscCall(PatchworkArraysRestore(&p));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Several ranks: y = A x (or diag(A) when x is NULL). One exchange, the ghosts of x, while y is zeroed
   and the interior cells run on the global arrays; then the boundary layer (which holds the
   neighbours' cells that touch this rank's nodes) on the ghosted local arrays, of whose sums this
   rank keeps its own nodes' */
static PetscErrorCode ApplySplit(Mat_PatchworkTensor *ctx, KernelKind kind, Vec x, Vec y)
{
  PatchworkArrays p;
  PatchworkHalo   h    = NULL;
  void           *xloc = NULL, *yloc = NULL;
  PetscInt        n;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(y, &n));
  PetscCall(PatchworkArraysGetOverwrite(x, NULL, y, &p)); /* every owned entry of y is set below */
  PetscCall(GetExchange(ctx, p.device, &h, &xloc, &yloc));
  if (x) PetscCall(PatchworkHaloToLocalBegin(h, p.r[0], xloc));
  PetscCall(PatchworkMemzero(p.device, p.w, (size_t)n * sizeof(double)));
  PetscCall(RunArrays(ctx, p.device, kind, &ctx->interior_desc, p.r[0], p.w));
  if (x) PetscCall(PatchworkHaloToLocalEnd(h, xloc));
  PetscCall(PatchworkHaloZeroLocal(h, yloc));
  for (PetscInt i = 0; i < ctx->nboundary; i++) PetscCall(RunArrays(ctx, p.device, kind, &ctx->boundary_desc[i], (const double *)xloc, (double *)yloc));
  PetscCall(PatchworkHaloAddOwned(h, yloc, p.w));
  if (kind == KERNEL_APPLY) PetscCall(LogApplyFlops(ctx, p.device));
  PetscCall(PatchworkArraysRestore(&p));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = A x, or y = diag(A) when x is NULL */
static PetscErrorCode ApplyOrDiagonal(Mat A, Vec x, Vec y)
{
  Mat_PatchworkTensor *ctx;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &ctx));
  if (ctx->plex) {
    PetscCall(PatchworkPlexApplyOrDiagonal(A, x, y));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PatchworkTensorSetUpDescriptors(A));
  if (ctx->serial) PetscCall(RunKernel(ctx, x ? KERNEL_APPLY : KERNEL_DIAGONAL, &ctx->cells_desc, x, y));
  else PetscCall(ApplySplit(ctx, x ? KERNEL_APPLY : KERNEL_DIAGONAL, x, y));
  if (ctx->info.bc == PATCHWORK_BC_DIRICHLET) PetscCall(RunKernel(ctx, KERNEL_BOUNDARY, &ctx->owned_desc, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatMult_PatchworkTensor(Mat A, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCheck(x != y, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_IDN, "x and y must be different vectors");
  PetscCall(PetscLogEventBegin(PATCHWORK_TensorMult, A, x, y, 0));
  PetscCall(ApplyOrDiagonal(A, x, y));
  PetscCall(PetscLogEventEnd(PATCHWORK_TensorMult, A, x, y, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatMultAdd_PatchworkTensor(Mat A, Vec x, Vec z, Vec w)
{
  Mat_PatchworkTensor *ctx;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &ctx));
  if (!ctx->work) PetscCall(VecDuplicate(x, &ctx->work));
  PetscCall(MatMult_PatchworkTensor(A, x, ctx->work));
  if (w == z) PetscCall(VecAXPY(w, 1.0, ctx->work));
  else PetscCall(VecWAXPY(w, 1.0, ctx->work, z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatGetDiagonal_PatchworkTensor(Mat A, Vec d)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PATCHWORK_TensorDiagonal, A, d, 0, 0));
  PetscCall(ApplyOrDiagonal(A, NULL, d));
  PetscCall(PetscLogEventEnd(PATCHWORK_TensorDiagonal, A, d, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}
