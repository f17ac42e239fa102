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
  ghosted local arrays, or of the whole grid when serial (kernels then act on global arrays);
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

  PetscCall(DMDAGetCorners(info->dm, &xs[0], &xs[1], &xs[2], &xm[0], &xm[1], &xm[2]));
  PetscCall(DMDAGetGhostCorners(info->dm, &gs[0], &gs[1], &gs[2], &gm[0], &gm[1], &gm[2]));
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

PetscErrorCode PatchworkTensorSetUpDescriptors(Mat A)
{
  Mat_PatchworkTensor *ctx;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &ctx));
  if (ctx->descvalid) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventBegin(PATCHWORK_TensorSetUp, A, 0, 0, 0));
  PetscCall(PatchworkTensorFillDesc(&ctx->info, ctx->scatter, ctx->serial, &ctx->cells_desc, &ctx->owned_desc, &ctx->flops));
  /* MatMult and MatGetDiagonal set y: no separate zeroing pass (on the GPU the 3D kernel zeroes y
     as it goes, while the lines are in L2) */
  ctx->cells_desc.overwrite = 1;
  if (!ctx->serial) {
    if (!ctx->xloc) PetscCall(DMCreateLocalVector(ctx->info.dm, &ctx->xloc));
    if (!ctx->yloc) PetscCall(VecDuplicate(ctx->xloc, &ctx->yloc));
  }
  ctx->descvalid = PETSC_TRUE;
  PetscCall(PetscLogEventEnd(PATCHWORK_TensorSetUp, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef enum {
  KERNEL_APPLY,
  KERNEL_DIAGONAL,
  KERNEL_BOUNDARY
} KernelKind;

static PetscErrorCode RunKernel(Mat_PatchworkTensor *ctx, KernelKind kind, const PatchworkTensorDesc *d, Vec x, Vec y)
{
  PatchworkArrays p;

  PetscFunctionBegin;
  if (d->overwrite && kind != KERNEL_BOUNDARY) PetscCall(PatchworkArraysGetOverwrite(x, NULL, y, &p));
  else PetscCall(PatchworkArraysGet(x, NULL, y, &p));
  if (p.device) {
#if defined(PATCHWORK_HAVE_CUDA)
    void *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
    PetscCall(PetscLogGpuTimeBegin());
    switch (kind) {
    case KERNEL_APPLY:
      PatchworkCallKernel(PatchworkTensorApplyCUDA(d, p.r[0], p.w, stream));
      break;
    case KERNEL_DIAGONAL:
      PatchworkCallKernel(PatchworkTensorDiagonalCUDA(d, p.w, stream));
      break;
    case KERNEL_BOUNDARY:
      PatchworkCallKernel(PatchworkTensorBoundaryCUDA(d, p.r[0], p.w, stream));
      break;
    }
    PetscCall(PetscLogGpuTimeEnd());
    if (kind == KERNEL_APPLY) PetscCall(PetscLogGpuFlops(ctx->flops));
#else
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "Device vectors, but Patchwork was built without CUDA: rebuild it against a PETSc configured with CUDA");
#endif
  } else {
    switch (kind) {
    case KERNEL_APPLY:
      PatchworkTensorApplyRef(d, p.r[0], p.w);
      break;
    case KERNEL_DIAGONAL:
      PatchworkTensorDiagonalRef(d, p.w);
      break;
    case KERNEL_BOUNDARY:
      PatchworkTensorBoundaryRef(d, p.r[0], p.w);
      break;
    }
    if (kind == KERNEL_APPLY) PetscCall(PetscLogFlops(ctx->flops));
  }
  PetscCall(PatchworkArraysRestore(&p));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = A x, or y = diag(A) when x is NULL */
static PetscErrorCode ApplyOrDiagonal(Mat A, Vec x, Vec y)
{
  Mat_PatchworkTensor *ctx;
  Vec                  xin = x, yout = y;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &ctx));
  if (ctx->plex) {
    PetscCall(PatchworkPlexApplyOrDiagonal(A, x, y));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PatchworkTensorSetUpDescriptors(A));
  if (!ctx->serial) {
    if (x) {
      PetscCall(DMGlobalToLocalBegin(ctx->info.dm, x, INSERT_VALUES, ctx->xloc));
      PetscCall(DMGlobalToLocalEnd(ctx->info.dm, x, INSERT_VALUES, ctx->xloc));
      xin = ctx->xloc;
    }
    yout = ctx->yloc;
  }
  PetscCall(RunKernel(ctx, x ? KERNEL_APPLY : KERNEL_DIAGONAL, &ctx->cells_desc, xin, yout));
  if (!ctx->serial) {
    PetscCall(VecZeroEntries(y));
    PetscCall(DMLocalToGlobalBegin(ctx->info.dm, ctx->yloc, ADD_VALUES, y));
    PetscCall(DMLocalToGlobalEnd(ctx->info.dm, ctx->yloc, ADD_VALUES, y));
  }
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
