/* PCVERTEXPATCH apply: the V-cycle. Moves data between global and ghosted local vectors and
   dispatches every kernel to the CPU reference or CUDA by where the vectors live. */
#include "vpimpl.h"

typedef enum {
  K_SMOOTH,   /* y += local solves of the local residuals b - A x (x, b read; y may be x) */
  K_SOLVE,    /* y += local solves of r */
  K_BOUNDARY  /* y = x on Dirichlet nodes */
} KernelKind;

/* Run one kernel on the arrays of x (and b), adding into y */
static PetscErrorCode RunKernel(KernelKind kind, const void *desc, Vec x, Vec b, Vec y, PetscLogDouble flops)
{
  PatchworkArrays a;

  PetscFunctionBegin;
  PetscCall(PatchworkArraysGet(x, b, y, &a));
  if (a.device) {
#if defined(PATCHWORK_HAVE_CUDA)
    void *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
    PetscCall(PetscLogGpuTimeBegin());
    switch (kind) {
    case K_SMOOTH:
      PatchworkCallKernel(PatchworkPatchSmoothCUDA((const PatchworkPatchDesc *)desc, a.r[0], a.r[1], a.w, stream));
      break;
    case K_SOLVE:
      PatchworkCallKernel(PatchworkPatchSolveCUDA((const PatchworkPatchDesc *)desc, a.r[0], a.w, stream));
      break;
    case K_BOUNDARY:
      PatchworkCallKernel(PatchworkTensorBoundaryCUDA((const PatchworkTensorDesc *)desc, a.r[0], a.w, stream));
      break;
    }
    PetscCall(PetscLogGpuTimeEnd());
    PetscCall(PetscLogGpuFlops(flops));
#else
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "Device vectors, but Patchwork was built without CUDA: rebuild it against a PETSc configured with CUDA");
#endif
  } else {
    switch (kind) {
    case K_SMOOTH:
      PatchworkPatchSmoothRef((const PatchworkPatchDesc *)desc, a.r[0], a.r[1], a.w);
      break;
    case K_SOLVE:
      PatchworkPatchSolveRef((const PatchworkPatchDesc *)desc, a.r[0], a.w);
      break;
    case K_BOUNDARY:
      PatchworkTensorBoundaryRef((const PatchworkTensorDesc *)desc, a.r[0], a.w);
      break;
    }
    PetscCall(PetscLogFlops(flops));
  }
  PetscCall(PatchworkArraysRestore(&a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ToLocal(DM dm, Vec g, Vec l)
{
  PetscFunctionBegin;
  PetscCall(DMGlobalToLocalBegin(dm, g, INSERT_VALUES, l));
  PetscCall(DMGlobalToLocalEnd(dm, g, INSERT_VALUES, l));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AddToGlobal(DM dm, Vec l, Vec g)
{
  PetscFunctionBegin;
  PetscCall(DMLocalToGlobalBegin(dm, l, ADD_VALUES, g));
  PetscCall(DMLocalToGlobalEnd(dm, l, ADD_VALUES, g));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One patch kernel of one color on level L: y += corrections. On one rank it acts on the global
   vectors in place; on several, on ghosted copies whose corrections are added back */
static PetscErrorCode PatchColor(PC_VertexPatch *vp, PC_VPLevel *L, KernelKind kind, int color, Vec x, Vec b, Vec y)
{
  PatchworkPatchDesc d = L->patch;

  PetscFunctionBegin;
  d.color = color;
  if (vp->serial) {
    PetscCall(RunKernel(kind, &d, x, b, y, L->smooth_flops / (1 << vp->dim)));
  } else {
    PetscCall(ToLocal(L->dm, x, L->xloc));
    PetscCall(VecZeroEntries(L->yloc));
    PetscCall(RunKernel(kind, &d, L->xloc, kind == K_SMOOTH ? L->bloc : NULL, L->yloc, L->smooth_flops / (1 << vp->dim)));
    PetscCall(AddToGlobal(L->dm, L->yloc, y));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* r = b - A x on level L */
static PetscErrorCode Residual(PC_VPLevel *L)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(L->ev_residual, 0, 0, 0, 0));
  PetscCall(MatMult(L->A, L->x, L->r));
  PetscCall(VecAYPX(L->r, -1.0, L->b));
  PetscCall(PetscLogEventEnd(L->ev_residual, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Smoothing steps on level L for x with right-hand side b; colors in reverse order when reverse */
static PetscErrorCode Smooth(PC_VertexPatch *vp, PC_VPLevel *L, PetscBool reverse)
{
  const int ncolors = 1 << vp->dim;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(L->ev_smooth, 0, 0, 0, 0));
  if (!vp->serial && vp->type == PATCHWORK_VP_MULTIPLICATIVE && vp->kernel == PATCHWORK_VP_KERNEL_FUSED) PetscCall(ToLocal(L->dm, L->b, L->bloc));
  for (PetscInt s = 0; s < vp->smooth_steps; s++) {
    if (vp->type == PATCHWORK_VP_ADDITIVE) { /* every patch from the same residual */
      PetscCall(Residual(L));
      PetscCall(VecZeroEntries(L->w));
      for (int c = 0; c < ncolors; c++) PetscCall(PatchColor(vp, L, K_SOLVE, c, L->r, NULL, L->w));
      PetscCall(VecAXPY(L->x, 1.0, L->w));
      continue;
    }
    for (int i = 0; i < ncolors; i++) {
      const int c = reverse ? ncolors - 1 - i : i;

      if (vp->kernel == PATCHWORK_VP_KERNEL_FUSED) PetscCall(PatchColor(vp, L, K_SMOOTH, c, L->x, L->b, L->x));
      else {
        PetscCall(Residual(L));
        PetscCall(PatchColor(vp, L, K_SOLVE, c, L->r, NULL, L->x));
      }
    }
  }
  PetscCall(PetscLogEventEnd(L->ev_smooth, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Coarse b = P^T f for f on fine level L (C = the next coarser level) */
static PetscErrorCode Restrict(PC_VPLevel *L, Vec f, PC_VPLevel *C)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(L->ev_transfer, 0, 0, 0, 0));
  PetscCall(MatMultTranspose(L->P, f, C->b));
  PetscCall(PetscLogEventEnd(L->ev_transfer, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Fine x += P (coarse x) */
static PetscErrorCode Prolong(PC_VPLevel *L, PC_VPLevel *C)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(L->ev_transfer, 0, 0, 0, 0));
  PetscCall(MatMultAdd(L->P, C->x, L->x, L->x));
  PetscCall(PetscLogEventEnd(L->ev_transfer, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* V-cycle on level l for L->x with right-hand side L->b, from a zero guess unless told otherwise */
static PetscErrorCode Cycle(PC pc, PetscInt l, PetscBool zero_guess)
{
  PC_VertexPatch *vp = (PC_VertexPatch *)pc->data;
  PC_VPLevel     *L  = &vp->levels[l];

  PetscFunctionBegin;
  if (l == 0 && vp->nlevels > 1) {
    PetscCall(PetscLogEventBegin(PATCHWORK_VPCoarse, pc, 0, 0, 0));
    if (vp->coarse_patch) { /* the one patch is the whole problem: one local solve is exact */
      PetscCall(VecZeroEntries(L->x));
      PetscCall(PatchColor(vp, L, K_SMOOTH, (1 << vp->dim) - 1, L->x, L->b, L->x));
    } else PetscCall(KSPSolve(vp->coarse_ksp, L->b, L->x));
    PetscCall(PetscLogEventEnd(PATCHWORK_VPCoarse, pc, 0, 0, 0));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (zero_guess) PetscCall(VecZeroEntries(L->x));
  PetscCall(Smooth(vp, L, PETSC_FALSE));
  if (l == 0) PetscFunctionReturn(PETSC_SUCCESS); /* one level: the smoother alone */
  PetscCall(Residual(L));
  PetscCall(Restrict(L, L->r, &vp->levels[l - 1]));
  PetscCall(Cycle(pc, l - 1, PETSC_TRUE));
  PetscCall(Prolong(L, &vp->levels[l - 1]));
  PetscCall(Smooth(vp, L, vp->symmetric)); /* the paper sweeps in the same order; reversed is symmetric */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCApply_VertexPatch(PC pc, Vec r, Vec z)
{
  PC_VertexPatch *vp = (PC_VertexPatch *)pc->data;
  PC_VPLevel     *F  = &vp->levels[vp->nlevels - 1];
  Vec             x = F->x, b = F->b;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PATCHWORK_VPApply, pc, r, z, 0));
  /* the finest level works on the caller's vectors directly */
  F->x = z;
  F->b = r;
  PetscCall(Cycle(pc, vp->nlevels - 1, PETSC_TRUE));
  F->x = x;
  F->b = b;
  /* Dirichlet rows of the operator are the identity: pass their residual through */
  PetscCall(RunKernel(K_BOUNDARY, &vp->boundary, r, NULL, z, 0));
  PetscCall(PetscLogEventEnd(PATCHWORK_VPApply, pc, r, z, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCVertexPatchFMG - One full multigrid cycle of `PCVERTEXPATCH` for A x = b: restrict b to every
  level, solve on the coarsest, then on each finer level interpolate and run one V-cycle from there

  Collective

  Input Parameters:
+ pc - the preconditioner, of type `PCVERTEXPATCH`
- b  - the right-hand side (a Dirichlet row's entry is copied to x)

  Output Parameter:
. x - the approximation; on a Q_k discretization its error is already at the level of the
      discretization error, so it is a good initial guess (`KSPSetInitialGuessNonzero()`)

  Note:
  With `KSPRICHARDSON` on the true residual this is the full multigrid solver of Cui et al. (2024),
  Algorithm 2, whose iteration counts their tables 1 and 2 report.

  Level: intermediate

.seealso: `PCVERTEXPATCH`
@*/
PetscErrorCode PCVertexPatchFMG(PC pc, Vec b, Vec x)
{
  PC_VertexPatch *vp;
  PC_VPLevel     *F;
  Vec             xs, bs;
  PetscBool       is;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCVERTEXPATCH, &is));
  PetscCheck(is, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONG, "PCVertexPatchFMG() needs a PC of type %s", PCVERTEXPATCH);
  PetscCall(PCSetUp(pc));
  vp = (PC_VertexPatch *)pc->data;
  F  = &vp->levels[vp->nlevels - 1];
  xs = F->x;
  bs = F->b;
  F->x = x;
  F->b = b;
  for (PetscInt l = vp->nlevels - 1; l >= 1; l--) PetscCall(Restrict(&vp->levels[l], vp->levels[l].b, &vp->levels[l - 1]));
  PetscCall(Cycle(pc, 0, PETSC_TRUE));
  for (PetscInt l = 1; l < vp->nlevels; l++) {
    PetscCall(VecZeroEntries(vp->levels[l].x));
    PetscCall(Prolong(&vp->levels[l], &vp->levels[l - 1]));
    PetscCall(Cycle(pc, l, PETSC_FALSE));
  }
  F->x = xs;
  F->b = bs;
  PetscCall(RunKernel(K_BOUNDARY, &vp->boundary, b, NULL, x, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}
