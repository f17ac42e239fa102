/* PCVERTEXPATCH apply: the V-cycle. Moves data between global and ghosted local vectors and
   dispatches every kernel to the CPU reference or CUDA by where the vectors live. In double
   precision the level vectors are PETSc Vecs and the operators and transfers their Mats; in single
   precision they are float arrays the PC owns, the kernels are called on them directly and, on
   several ranks, ghosted copies are exchanged by the PC's own float halo (PetscSF cannot add floats). */
#include "vpimpl.h"
#include <patchwork/vec_kernel.h>

typedef enum {
  K_SMOOTH,   /* y += local solves of the local residuals b - A x (x, b read; y may be x) */
  K_SOLVE,    /* y += local solves of x */
  K_RESIDUAL, /* y = b - A x at the interior nodes of the color's patches */
  K_APPLY,    /* y += A x (single precision; zeroed y first) */
  K_PROLONG,  /* y += P x */
  K_RESTRICT, /* y += P^T x */
  K_BOUNDARY  /* y = x on Dirichlet nodes */
} KernelKind;

#if defined(PATCHWORK_HAVE_CUDA)
static const char *const KernelNames[] = {"PatchworkPatchSmoothCUDA", "PatchworkPatchSmoothCUDAFloat", "PatchworkPatchSolveCUDA", "PatchworkPatchSolveCUDAFloat", "PatchworkPatchResidualCUDA", "PatchworkPatchResidualCUDAFloat", "PatchworkTensorApplyCUDA", "PatchworkTensorApplyCUDAFloat", "PatchworkProlongCUDA", "PatchworkProlongCUDAFloat", "PatchworkRestrictCUDA", "PatchworkRestrictCUDAFloat", "PatchworkTensorBoundaryCUDA", "(none)"};

/* The CUDA kernel of each kind, double and float */
static int LaunchCUDA(KernelKind kind, const void *desc, const double *x, const double *b, double *y, void *s)
{
  switch (kind) {
  case K_SMOOTH: return PatchworkPatchSmoothCUDA((const PatchworkPatchDesc *)desc, x, b, y, s);
  case K_SOLVE: return PatchworkPatchSolveCUDA((const PatchworkPatchDesc *)desc, x, y, s);
  case K_RESIDUAL: return PatchworkPatchResidualCUDA((const PatchworkPatchDesc *)desc, x, b, y, s);
  case K_APPLY: return PatchworkTensorApplyCUDA((const PatchworkTensorDesc *)desc, x, y, s);
  case K_PROLONG: return PatchworkProlongCUDA((const PatchworkTransferDesc *)desc, x, y, s);
  case K_RESTRICT: return PatchworkRestrictCUDA((const PatchworkTransferDesc *)desc, x, y, s);
  case K_BOUNDARY: return PatchworkTensorBoundaryCUDA((const PatchworkTensorDesc *)desc, x, y, s);
  }
  return -1;
}

static int LaunchCUDAFloat(KernelKind kind, const void *desc, const float *x, const float *b, float *y, void *s)
{
  switch (kind) {
  case K_SMOOTH: return PatchworkPatchSmoothCUDAFloat((const PatchworkPatchDesc *)desc, x, b, y, s);
  case K_SOLVE: return PatchworkPatchSolveCUDAFloat((const PatchworkPatchDesc *)desc, x, y, s);
  case K_RESIDUAL: return PatchworkPatchResidualCUDAFloat((const PatchworkPatchDesc *)desc, x, b, y, s);
  case K_APPLY: return PatchworkTensorApplyCUDAFloat((const PatchworkTensorDesc *)desc, x, y, s);
  case K_PROLONG: return PatchworkProlongCUDAFloat((const PatchworkTransferDesc *)desc, x, y, s);
  case K_RESTRICT: return PatchworkRestrictCUDAFloat((const PatchworkTransferDesc *)desc, x, y, s);
  case K_BOUNDARY: break; /* Dirichlet rows are handled on the caller's double vectors */
  }
  return -1;
}
#endif

static void LaunchRef(KernelKind kind, const void *desc, const double *x, const double *b, double *y)
{
  switch (kind) {
  case K_SMOOTH: PatchworkPatchSmoothRef((const PatchworkPatchDesc *)desc, x, b, y); break;
  case K_SOLVE: PatchworkPatchSolveRef((const PatchworkPatchDesc *)desc, x, y); break;
  case K_RESIDUAL: PatchworkPatchResidualRef((const PatchworkPatchDesc *)desc, x, b, y); break;
  case K_APPLY: PatchworkTensorApplyRef((const PatchworkTensorDesc *)desc, x, y); break;
  case K_PROLONG: PatchworkProlongRef((const PatchworkTransferDesc *)desc, x, y); break;
  case K_RESTRICT: PatchworkRestrictRef((const PatchworkTransferDesc *)desc, x, y); break;
  case K_BOUNDARY: PatchworkTensorBoundaryRef((const PatchworkTensorDesc *)desc, x, y); break;
  }
}

static void LaunchRefFloat(KernelKind kind, const void *desc, const float *x, const float *b, float *y)
{
  switch (kind) {
  case K_SMOOTH: PatchworkPatchSmoothRefFloat((const PatchworkPatchDesc *)desc, x, b, y); break;
  case K_SOLVE: PatchworkPatchSolveRefFloat((const PatchworkPatchDesc *)desc, x, y); break;
  case K_RESIDUAL: PatchworkPatchResidualRefFloat((const PatchworkPatchDesc *)desc, x, b, y); break;
  case K_APPLY: PatchworkTensorApplyRefFloat((const PatchworkTensorDesc *)desc, x, y); break;
  case K_PROLONG: PatchworkProlongRefFloat((const PatchworkTransferDesc *)desc, x, y); break;
  case K_RESTRICT: PatchworkRestrictRefFloat((const PatchworkTransferDesc *)desc, x, y); break;
  case K_BOUNDARY: break;
  }
}

/* Run one kernel on raw arrays of the given precision and side, logging its flops */
static PetscErrorCode RunArrays(PetscBool device, PetscBool single, KernelKind kind, const void *desc, const void *x, const void *b, void *y, PetscLogDouble flops)
{
  PetscFunctionBegin;
  if (device) {
#if defined(PATCHWORK_HAVE_CUDA)
    void *stream;
    int   err;

    PetscCall(PatchworkGetDeviceStream(&stream));
    PetscCall(PetscLogGpuTimeBegin());
    if (single) err = LaunchCUDAFloat(kind, desc, (const float *)x, (const float *)b, (float *)y, stream);
    else err = LaunchCUDA(kind, desc, (const double *)x, (const double *)b, (double *)y, stream);
    PetscCall(PetscLogGpuTimeEnd());
    PetscCall(PatchworkCheckKernel(err, KernelNames[2 * kind + (single ? 1 : 0)]));
    PetscCall(PetscLogGpuFlops(flops));
#else
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "Device vectors, but Patchwork was built without CUDA: rebuild it against a PETSc configured with CUDA");
#endif
  } else {
    if (single) LaunchRefFloat(kind, desc, (const float *)x, (const float *)b, (float *)y);
    else LaunchRef(kind, desc, (const double *)x, (const double *)b, (double *)y);
    PetscCall(PetscLogFlops(flops));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Run one kernel on the arrays of Vecs x (and b), writing y */
static PetscErrorCode RunKernel(KernelKind kind, const void *desc, Vec x, Vec b, Vec y, PetscLogDouble flops)
{
  PatchworkArrays a;

  PetscFunctionBegin;
  PetscCall(PatchworkArraysGet(x, b, y, &a));
  PetscCall(RunArrays(a.device, PETSC_FALSE, kind, desc, a.r[0], a.r[1], a.w, flops));
  PetscCall(PatchworkArraysRestore(&a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------- */
/* the arrays of a level: global (this rank's entries) or ghosted copies, in the cycle's precision */

typedef struct {
  PC_VPLevel *L;     /* NULL: no array */
  PetscBool   local; /* a ghosted copy (VPLoc) rather than a global array (VPVec) */
  int         i;
} LevelArray;

static LevelArray Global(PC_VPLevel *L, VPVec i)
{
  LevelArray a = {L, PETSC_FALSE, (int)i};
  return a;
}

static LevelArray Local(PC_VPLevel *L, VPLoc i)
{
  LevelArray a = {L, PETSC_TRUE, (int)i};
  return a;
}

static const LevelArray None = {NULL, PETSC_FALSE, 0};

static float *FloatOf(LevelArray a)
{
  return a.L ? (a.local ? (float *)a.L->loc[a.i] : a.L->f[a.i]) : NULL;
}

static Vec VecOf(LevelArray a) /* global arrays only: double precision uses no ghosted Vecs */
{
  return a.L ? a.L->v[a.i] : NULL;
}

/* One kernel on level arrays: x (and b) read, y written */
static PetscErrorCode Run(PC_VertexPatch *vp, KernelKind kind, const void *desc, LevelArray x, LevelArray b, LevelArray y, PetscLogDouble flops)
{
  PetscFunctionBegin;
  if (vp->single) PetscCall(RunArrays(vp->device, PETSC_TRUE, kind, desc, FloatOf(x), FloatOf(b), FloatOf(y), flops));
  else PetscCall(RunKernel(kind, desc, VecOf(x), VecOf(b), VecOf(y), flops));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Zero(PC_VertexPatch *vp, LevelArray a)
{
  PetscFunctionBegin;
  if (vp->single) PetscCall(PatchworkMemzero(vp->device, FloatOf(a), (size_t)(a.local ? a.L->nloc : a.L->n) * sizeof(float)));
  else PetscCall(VecZeroEntries(VecOf(a)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* L->f[y] = a L->f[y] + L->f[x] */
static PetscErrorCode FloatAYPX(PC_VertexPatch *vp, PC_VPLevel *L, float a, VPVec x, VPVec y)
{
  PetscFunctionBegin;
  if (vp->device) {
#if defined(PATCHWORK_HAVE_CUDA)
    void *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
    PatchworkCallKernel(PatchworkVecAYPXFloatCUDA(L->n, a, L->f[x], L->f[y], stream));
    PetscCall(PetscLogGpuFlops(2.0 * L->n));
#endif
  } else {
    PatchworkVecAYPXFloatRef(L->n, a, L->f[x], L->f[y]);
    PetscCall(PetscLogFlops(2.0 * L->n));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Between a double Vec and a float array of the level: to float when in, else back to double */
static PetscErrorCode FloatConvert(PC_VertexPatch *vp, PC_VPLevel *L, Vec v, VPVec i, PetscBool in)
{
  PetscScalar *a;
  PetscMemType mt;

  PetscFunctionBegin;
  if (in) PetscCall(VecGetArrayReadAndMemType(v, (const PetscScalar **)&a, &mt));
  else PetscCall(VecGetArrayWriteAndMemType(v, &a, &mt));
  PetscCheck((PetscMemTypeDevice(mt) ? PETSC_TRUE : PETSC_FALSE) == vp->device, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "PCVERTEXPATCH was set up for %s vectors but got a vector on the %s: use vectors of the operator's type (MatCreateVecs())", vp->device ? "device" : "host", PetscMemTypeDevice(mt) ? "device" : "host");
  if (vp->device) {
#if defined(PATCHWORK_HAVE_CUDA)
    void *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
    if (in) PatchworkCallKernel(PatchworkVecToFloatCUDA(L->n, a, L->f[i], stream));
    else PatchworkCallKernel(PatchworkVecToDoubleCUDA(L->n, L->f[i], a, stream));
#endif
  } else if (in) PatchworkVecToFloatRef(L->n, a, L->f[i]);
  else PatchworkVecToDoubleRef(L->n, L->f[i], a);
  if (in) PetscCall(VecRestoreArrayReadAndMemType(v, (const PetscScalar **)&a));
  else PetscCall(VecRestoreArrayWriteAndMemType(v, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Ghosted copy l of the level's global float array g, every ghost (the single-precision transfers) */
static PetscErrorCode ToLocal(PC_VPLevel *L, VPVec g, VPLoc l)
{
  PetscFunctionBegin;
  PetscCall(PatchworkHaloToLocal(L->halo, L->f[g], L->loc[l]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* g += the ghosted copy l, every rank's entries added to their owner */
static PetscErrorCode AddToGlobal(PC_VPLevel *L, VPLoc l, VPVec g)
{
  PetscFunctionBegin;
  PetscCall(PatchworkHaloAddToGlobal(L->halo, L->loc[l], L->f[g]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A transfer kernel from level X's float array x to level Y's array y (y += the kernel's output). On
   one rank on the global arrays; on several, from a ghosted copy of x into a zeroed ghosted copy
   whose entries are then added to their owners */
static PetscErrorCode RunThrough(PC_VertexPatch *vp, KernelKind kind, const void *desc, PC_VPLevel *X, VPVec x, PC_VPLevel *Y, VPVec y, PetscLogDouble flops)
{
  PetscFunctionBegin;
  if (vp->serial) PetscCall(Run(vp, kind, desc, Global(X, x), None, Global(Y, y), flops));
  else {
    PetscCall(ToLocal(X, x, VP_LX));
    PetscCall(Zero(vp, Local(Y, VP_LY)));
    PetscCall(Run(vp, kind, desc, Local(X, VP_LX), None, Local(Y, VP_LY), flops));
    PetscCall(AddToGlobal(Y, VP_LY, y));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Raw arrays of a level's global vectors (the float arrays, or the double Vecs' arrays), those flagged
   in want (bit i: VPVec i); b is only read */
typedef struct {
  void    *a[VP_NVEC];
  PetscInt want;
} Globals;

static PetscErrorCode GlobalsGet(PC_VertexPatch *vp, PC_VPLevel *L, PetscInt want, Globals *g)
{
  PetscFunctionBegin;
  PetscCall(PetscMemzero(g, sizeof(*g)));
  g->want = want;
  for (int i = 0; i < VP_NVEC; i++) {
    PetscMemType mt;

    if (!(want & (1 << i))) continue;
    if (vp->single) {
      g->a[i] = L->f[i];
      continue;
    }
    if (i == VP_B) PetscCall(VecGetArrayReadAndMemType(L->v[i], (const PetscScalar **)&g->a[i], &mt));
    else PetscCall(VecGetArrayAndMemType(L->v[i], (PetscScalar **)&g->a[i], &mt));
    PetscCheck((PetscMemTypeDevice(mt) ? PETSC_TRUE : PETSC_FALSE) == vp->device, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "PCVERTEXPATCH was set up for %s vectors but got a vector on the %s: use vectors of the operator's type (MatCreateVecs())", vp->device ? "device" : "host", PetscMemTypeDevice(mt) ? "device" : "host");
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GlobalsRestore(PC_VertexPatch *vp, PC_VPLevel *L, Globals *g)
{
  PetscFunctionBegin;
  for (int i = 0; i < VP_NVEC && !vp->single; i++) {
    if (!(g->want & (1 << i))) continue;
    if (i == VP_B) PetscCall(VecRestoreArrayReadAndMemType(L->v[i], (const PetscScalar **)&g->a[i]));
    else PetscCall(VecRestoreArrayAndMemType(L->v[i], (PetscScalar **)&g->a[i]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Several ranks: where the patches near the rank's faces run. Redundant: the wide ghosted copies and
   the boxes that also hold the neighbours' patches reaching into this rank's nodes, whose corrections
   at the owned nodes stay here (the ghosts' are their owners' to make); else the rank's own boundary
   patches on the narrow copies, whose corrections are added to their owners (a second exchange) */
typedef struct {
  PatchworkHalo             h;
  void                    **loc;
  const PatchworkPatchDesc *box;
  PetscInt                  n;
  PetscBool                 keep; /* keep the owned corrections: nothing travels back */
} PatchLayer;

static PatchLayer BoundaryPatches(PC_VPLevel *L)
{
  PatchLayer b;

  if (L->redundant) {
    b.h   = L->whalo;
    b.loc = L->wloc;
    b.box = L->wpatch_bnd;
    b.n   = L->nwpatch_bnd;
  } else {
    b.h   = L->bhalo;
    b.loc = L->loc;
    b.box = L->patch_bnd;
    b.n   = L->npatch_bnd;
  }
  b.keep = L->redundant;
  return b;
}

/* Several ranks: the entries of the ghosted copy l of g that the boundary patches read */
static PetscErrorCode BoundaryToLocal(PC_VertexPatch *vp, PC_VPLevel *L, VPVec g, VPLoc l)
{
  const PatchLayer b = BoundaryPatches(L);
  Globals          a;

  PetscFunctionBegin;
  PetscCall(GlobalsGet(vp, L, 1 << g, &a));
  PetscCall(PatchworkHaloToLocal(b.h, a.a[g], b.loc[l]));
  PetscCall(GlobalsRestore(vp, L, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Several ranks: one patch kernel of one color on level L from x (and b) into y, or with separate the
   local residuals (from x and b) then the solves (into x): the interior patches on the global arrays
   while the ghosts of the others travel, then the boundary ones on the ghosted copies (b's made by the
   caller). Patches of one color have disjoint interiors and read none of another's, so the interior
   ones may update x in place while the boundary ones read it */
static PetscErrorCode PatchSplit(PC_VertexPatch *vp, PC_VPLevel *L, KernelKind kind, PetscBool separate, int color, VPVec x, PetscBool with_b, VPVec y, PetscLogDouble flops)
{
  const PatchLayer   b = BoundaryPatches(L);
  Globals            g;
  PatchworkPatchDesc d = L->patch_int;

  PetscFunctionBegin;
  PetscCall(GlobalsGet(vp, L, (1 << x) | (1 << y) | (with_b ? 1 << VP_B : 0) | (separate ? 1 << VP_R : 0), &g));
  PetscCall(PatchworkHaloToLocalBegin(b.h, g.a[x], b.loc[VP_LX]));
  d.color = color;
  if (separate) {
    PetscCall(RunArrays(vp->device, vp->single, K_RESIDUAL, &d, g.a[x], g.a[VP_B], g.a[VP_R], 0));
    PetscCall(RunArrays(vp->device, vp->single, K_SOLVE, &d, g.a[VP_R], NULL, g.a[y], flops));
  } else PetscCall(RunArrays(vp->device, vp->single, kind, &d, g.a[x], with_b ? g.a[VP_B] : NULL, g.a[y], flops));
  PetscCall(PatchworkHaloToLocalEnd(b.h, b.loc[VP_LX]));
  PetscCall(PatchworkHaloZeroLocal(b.h, b.loc[VP_LY]));
  for (PetscInt i = 0; i < b.n; i++) {
    d       = b.box[i];
    d.color = color;
    if (separate) {
      PetscCall(RunArrays(vp->device, vp->single, K_RESIDUAL, &d, b.loc[VP_LX], b.loc[VP_LB], b.loc[VP_LR], 0));
      PetscCall(RunArrays(vp->device, vp->single, K_SOLVE, &d, b.loc[VP_LR], NULL, b.loc[VP_LY], 0));
    } else PetscCall(RunArrays(vp->device, vp->single, kind, &d, b.loc[VP_LX], with_b ? b.loc[VP_LB] : NULL, b.loc[VP_LY], 0));
  }
  if (b.keep) PetscCall(PatchworkHaloAddOwned(b.h, b.loc[VP_LY], g.a[y]));
  else PetscCall(PatchworkHaloAddToGlobal(b.h, b.loc[VP_LY], g.a[y]));
  PetscCall(GlobalsRestore(vp, L, &g));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Several ranks: y = A x on level L (the float residual's apply): the interior cells on the global
   arrays while the ghosts of x travel, then the boundary layer, which holds the neighbours' cells that
   touch this rank's nodes, on the ghosted copies; the sums at the owned nodes stay here */
static PetscErrorCode ApplySplit(PC_VertexPatch *vp, PC_VPLevel *L, VPVec x, VPVec y, PetscLogDouble flops)
{
  Globals g;

  PetscFunctionBegin;
  PetscCall(GlobalsGet(vp, L, (1 << x) | (1 << y), &g));
  PetscCall(PatchworkHaloToLocalBegin(L->bhalo, g.a[x], L->loc[VP_LX]));
  PetscCall(RunArrays(vp->device, vp->single, K_APPLY, &L->op_int, g.a[x], NULL, g.a[y], flops));
  PetscCall(PatchworkHaloToLocalEnd(L->bhalo, L->loc[VP_LX]));
  PetscCall(PatchworkHaloZeroLocal(L->bhalo, L->loc[VP_LY]));
  for (PetscInt i = 0; i < L->nop_bnd; i++) PetscCall(RunArrays(vp->device, vp->single, K_APPLY, &L->op_bnd[i], L->loc[VP_LX], NULL, L->loc[VP_LY], 0));
  PetscCall(PatchworkHaloAddOwned(L->bhalo, L->loc[VP_LY], g.a[y]));
  PetscCall(GlobalsRestore(vp, L, &g));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------- */
/* the operations of the cycle, in either precision */

/* One patch kernel of one color on level L, reading x (and b), writing y */
static PetscErrorCode PatchColor(PC_VertexPatch *vp, PC_VPLevel *L, KernelKind kind, int color, VPVec x, VPVec y)
{
  PatchworkPatchDesc   d     = L->patch;
  const PetscBool      withb = (PetscBool)(kind != K_SOLVE);
  const PetscLogDouble flops = L->smooth_flops / (1 << vp->dim);

  PetscFunctionBegin;
  d.color = color;
  if (vp->serial) PetscCall(Run(vp, kind, &d, Global(L, x), withb ? Global(L, VP_B) : None, Global(L, y), flops));
  else PetscCall(PatchSplit(vp, L, kind, PETSC_FALSE, color, x, withb, y, flops));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The separate kernels of one color: the local residuals of the color's patches, then their solves.
   The residual at a patch's interior needs no exchange before its solve; on several ranks the
   interior patches run on the global arrays while the ghosts of the others travel */
static PetscErrorCode PatchColorSeparate(PC_VertexPatch *vp, PC_VPLevel *L, int color)
{
  PatchworkPatchDesc   d     = L->patch;
  const PetscLogDouble flops = L->smooth_flops / (1 << vp->dim);

  PetscFunctionBegin;
  d.color = color;
  if (vp->serial) {
    PetscCall(Run(vp, K_RESIDUAL, &d, Global(L, VP_X), Global(L, VP_B), Global(L, VP_R), 0));
    PetscCall(Run(vp, K_SOLVE, &d, Global(L, VP_R), None, Global(L, VP_X), flops));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PatchSplit(vp, L, K_SOLVE, PETSC_TRUE, color, VP_X, PETSC_TRUE, VP_X, flops));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* r = b - A x on level L */
static PetscErrorCode Residual(PC_VertexPatch *vp, PC_VPLevel *L)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(L->ev_residual, 0, 0, 0, 0));
  if (vp->single) { /* Dirichlet rows of r are left at b: restriction and the solves never read them */
    PetscCall(Zero(vp, Global(L, VP_R)));
    if (vp->serial) PetscCall(Run(vp, K_APPLY, &L->patch.op, Global(L, VP_X), None, Global(L, VP_R), L->apply_flops));
    else PetscCall(ApplySplit(vp, L, VP_X, VP_R, L->apply_flops));
    PetscCall(FloatAYPX(vp, L, -1.0f, VP_B, VP_R));
  } else {
    PetscCall(MatMult(L->A, L->v[VP_X], L->v[VP_R]));
    PetscCall(VecAYPX(L->v[VP_R], -1.0, L->v[VP_B]));
  }
  PetscCall(PetscLogEventEnd(L->ev_residual, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Smoothing steps on level L for x with right-hand side b; colors in reverse order when reverse */
static PetscErrorCode Smooth(PC_VertexPatch *vp, PC_VPLevel *L, PetscBool reverse)
{
  const int ncolors = 1 << vp->dim;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(L->ev_smooth, 0, 0, 0, 0));
  if (!vp->serial && vp->type == PATCHWORK_VP_MULTIPLICATIVE && vp->kernel != PATCHWORK_VP_KERNEL_GLOBAL) PetscCall(BoundaryToLocal(vp, L, VP_B, VP_LB));
  for (PetscInt s = 0; s < vp->smooth_steps; s++) {
    if (vp->type == PATCHWORK_VP_ADDITIVE) { /* every patch from the same residual */
      PetscCall(Residual(vp, L));
      PetscCall(Zero(vp, Global(L, VP_W)));
      for (int c = 0; c < ncolors; c++) PetscCall(PatchColor(vp, L, K_SOLVE, c, VP_R, VP_W));
      if (vp->single) PetscCall(FloatAYPX(vp, L, 1.0f, VP_W, VP_X));
      else PetscCall(VecAXPY(L->v[VP_X], 1.0, L->v[VP_W]));
      continue;
    }
    for (int i = 0; i < ncolors; i++) {
      const int c = reverse ? ncolors - 1 - i : i;

      switch (vp->kernel) {
      case PATCHWORK_VP_KERNEL_FUSED:
        PetscCall(PatchColor(vp, L, K_SMOOTH, c, VP_X, VP_X));
        break;
      case PATCHWORK_VP_KERNEL_SEPARATE:
        PetscCall(PatchColorSeparate(vp, L, c));
        break;
      case PATCHWORK_VP_KERNEL_GLOBAL:
        PetscCall(Residual(vp, L));
        PetscCall(PatchColor(vp, L, K_SOLVE, c, VP_R, VP_X));
        break;
      }
    }
  }
  PetscCall(PetscLogEventEnd(L->ev_smooth, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Coarse b = P^T (fine vector f) for fine level L (C = the next coarser level) */
static PetscErrorCode Restrict(PC_VertexPatch *vp, PC_VPLevel *L, VPVec f, PC_VPLevel *C)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(L->ev_transfer, 0, 0, 0, 0));
  if (vp->single) {
    PetscCall(Zero(vp, Global(C, VP_B)));
    PetscCall(RunThrough(vp, K_RESTRICT, &L->transfer, L, f, C, VP_B, 0));
  } else PetscCall(MatMultTranspose(L->P, L->v[f], C->v[VP_B]));
  PetscCall(PetscLogEventEnd(L->ev_transfer, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Fine x += P (coarse x) */
static PetscErrorCode Prolong(PC_VertexPatch *vp, PC_VPLevel *L, PC_VPLevel *C)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(L->ev_transfer, 0, 0, 0, 0));
  if (vp->single) PetscCall(RunThrough(vp, K_PROLONG, &L->transfer, C, VP_X, L, VP_X, 0));
  else PetscCall(MatMultAdd(L->P, C->v[VP_X], L->v[VP_X], L->v[VP_X]));
  PetscCall(PetscLogEventEnd(L->ev_transfer, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* x on the gathered levels' finest L (several ranks): every rank runs them whole, a V-cycle or, in full
   multigrid, their full multigrid cycle (vpgather.c), on L's double vectors */
static PetscErrorCode Gathered(PC pc, PC_VPLevel *L, PetscBool fmg)
{
  PC_VertexPatch *vp = (PC_VertexPatch *)pc->data;

  PetscFunctionBegin;
  if (vp->single) PetscCall(FloatConvert(vp, L, L->v[VP_B], VP_B, PETSC_FALSE));
  PetscCall(PCVertexPatchGatherSolve(pc, fmg));
  if (vp->single) PetscCall(FloatConvert(vp, L, L->v[VP_X], VP_X, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* x = the exact solution on the coarsest level L (or, gathered, the cycle of the levels below: in full
   multigrid (fmg) their full multigrid cycle) */
static PetscErrorCode CoarseSolve(PC pc, PC_VPLevel *L, PetscBool fmg)
{
  PC_VertexPatch *vp = (PC_VertexPatch *)pc->data;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PATCHWORK_VPCoarse, pc, 0, 0, 0));
  if (vp->gathered) PetscCall(Gathered(pc, L, fmg));
  else if (vp->coarse_patch) { /* the one patch is the whole problem: one local solve is exact */
    if (!vp->serial) PetscCall(BoundaryToLocal(vp, L, VP_B, VP_LB)); /* the boundary patches read b from the ghosted copy */
    PetscCall(Zero(vp, Global(L, VP_X)));
    PetscCall(PatchColor(vp, L, K_SMOOTH, (1 << vp->dim) - 1, VP_X, VP_X));
  } else {
    if (vp->single) PetscCall(FloatConvert(vp, L, L->v[VP_B], VP_B, PETSC_FALSE));
    PetscCall(KSPSolve(vp->coarse_ksp, L->v[VP_B], L->v[VP_X]));
    if (vp->single) PetscCall(FloatConvert(vp, L, L->v[VP_X], VP_X, PETSC_TRUE));
  }
  PetscCall(PetscLogEventEnd(PATCHWORK_VPCoarse, pc, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* V-cycle on level l for x with right-hand side b, from a zero guess unless told otherwise */
static PetscErrorCode Cycle(PC pc, PetscInt l, PetscBool zero_guess)
{
  PC_VertexPatch *vp = (PC_VertexPatch *)pc->data;
  PC_VPLevel     *L  = &vp->levels[l];

  PetscFunctionBegin;
  if (l == 0 && (vp->nlevels > 1 || vp->gathered)) {
    PetscCall(CoarseSolve(pc, L, PETSC_FALSE));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (zero_guess) PetscCall(Zero(vp, Global(L, VP_X)));
  PetscCall(Smooth(vp, L, PETSC_FALSE));
  if (l == 0) { /* one level: the smoother alone; the colors again in reverse make it symmetric (for CG) */
    if (vp->symmetric && vp->type == PATCHWORK_VP_MULTIPLICATIVE) PetscCall(Smooth(vp, L, PETSC_TRUE));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(Residual(vp, L));
  PetscCall(Restrict(vp, L, VP_R, &vp->levels[l - 1]));
  PetscCall(Cycle(pc, l - 1, PETSC_TRUE));
  PetscCall(Prolong(vp, L, &vp->levels[l - 1]));
  PetscCall(Smooth(vp, L, vp->symmetric)); /* the paper sweeps in the same order; reversed is symmetric */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Run body(pc) with the finest level's x and b being the caller's x and b: double precision works on
   them directly, single precision converts b in and x out; then the Dirichlet rows' pass, unless the
   finest level is a level of another PC's cycle (gathered), whose boundary nodes stay as the cycle
   leaves them */
typedef PetscErrorCode (*FinestBody)(PC);

static PetscErrorCode OnCallerVectors(PC pc, Vec b, Vec x, FinestBody body, PetscBool boundary)
{
  PC_VertexPatch *vp = (PC_VertexPatch *)pc->data;
  PC_VPLevel     *F  = &vp->levels[vp->nlevels - 1];
  Vec             xs = F->v[VP_X], bs = F->v[VP_B];

  PetscFunctionBegin;
  if (vp->single) {
    PetscCall(FloatConvert(vp, F, b, VP_B, PETSC_TRUE));
    PetscCall(body(pc));
    PetscCall(FloatConvert(vp, F, x, VP_X, PETSC_FALSE));
  } else {
    F->v[VP_X] = x;
    F->v[VP_B] = b;
    PetscCall(body(pc));
    F->v[VP_X] = xs;
    F->v[VP_B] = bs;
  }
  /* Dirichlet rows of the operator are the identity: pass their right-hand side through */
  if (boundary) PetscCall(RunKernel(K_BOUNDARY, &vp->boundary, b, NULL, x, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode VCycleBody(PC pc)
{
  PC_VertexPatch *vp = (PC_VertexPatch *)pc->data;

  PetscFunctionBegin;
  PetscCall(Cycle(pc, vp->nlevels - 1, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCApply_VertexPatch(PC pc, Vec r, Vec z)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PATCHWORK_VPApply, pc, r, z, 0));
  PetscCall(OnCallerVectors(pc, r, z, VCycleBody, PETSC_TRUE));
  PetscCall(PetscLogEventEnd(PATCHWORK_VPApply, pc, r, z, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Full multigrid: restrict b to every level, solve on the coarsest, then on each finer level
   interpolate and run one V-cycle from there */
static PetscErrorCode FMGBody(PC pc)
{
  PC_VertexPatch *vp = (PC_VertexPatch *)pc->data;

  PetscFunctionBegin;
  for (PetscInt l = vp->nlevels - 1; l >= 1; l--) PetscCall(Restrict(vp, &vp->levels[l], VP_B, &vp->levels[l - 1]));
  if (vp->gathered) PetscCall(CoarseSolve(pc, &vp->levels[0], PETSC_TRUE)); /* level 0 included */
  else PetscCall(Cycle(pc, 0, PETSC_TRUE));
  for (PetscInt l = 1; l < vp->nlevels; l++) {
    PetscCall(Zero(vp, Global(&vp->levels[l], VP_X)));
    PetscCall(Prolong(vp, &vp->levels[l], &vp->levels[l - 1]));
    PetscCall(Cycle(pc, l, PETSC_FALSE));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCVertexPatchCycleWithin(PC pc, Vec b, Vec x, PetscBool fmg)
{
  PetscFunctionBegin;
  PetscCall(OnCallerVectors(pc, b, x, fmg ? FMGBody : VCycleBody, PETSC_FALSE));
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
  PetscBool is;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCVERTEXPATCH, &is));
  PetscCheck(is, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONG, "PCVertexPatchFMG() needs a PC of type %s", PCVERTEXPATCH);
  PetscCall(PCSetUp(pc));
  PetscCall(OnCallerVectors(pc, b, x, FMGBody, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}
