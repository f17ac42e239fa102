/* The Q_k transfer between two Patchwork operators' grids (the fine one refines the coarse one by two
   in every direction) as a MATSHELL: MatMult prolongs by interpolation, MatMultTranspose restricts.
   PCVERTEXPATCH and PCMG (PCMGSetPatchworkHierarchy()) use it between levels. */
#include "../tensor/cartesian.h"
#include <patchwork/patch_kernel.h>

typedef struct {
  DM                    coarse, fine;   /* NULL for a level without a DM (one rank: not needed) */
  PetscBool             serial;      /* one rank: kernels act on the global arrays */
  PatchworkTransferDesc desc;        /* this rank's fine cells; boxes of the local (or global) arrays */
  Vec                   cloc, floc;  /* ghosted copies, several ranks only */
} Mat_PatchworkTransfer;

static PetscErrorCode RunTransfer(PetscBool transpose, const PatchworkTransferDesc *d, Vec x, Vec y)
{
  PatchworkArrays a;

  PetscFunctionBegin;
  PetscCall(PatchworkArraysGet(x, NULL, y, &a));
  if (a.device) {
#if defined(PATCHWORK_HAVE_CUDA)
    void *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
    PetscCall(PetscLogGpuTimeBegin());
    if (transpose) PatchworkCallKernel(PatchworkRestrictCUDA(d, a.r[0], a.w, stream));
    else PatchworkCallKernel(PatchworkProlongCUDA(d, a.r[0], a.w, stream));
    PetscCall(PetscLogGpuTimeEnd());
#else
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "Device vectors, but Patchwork was built without CUDA: rebuild it against a PETSc configured with CUDA");
#endif
  } else if (transpose) PatchworkRestrictRef(d, a.r[0], a.w);
  else PatchworkProlongRef(d, a.r[0], a.w);
  PetscCall(PatchworkArraysRestore(&a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y (+)= P x, or y (+)= P^T x when transpose; y is zeroed first unless add */
static PetscErrorCode Apply(Mat P, Vec x, Vec y, PetscBool transpose, PetscBool add)
{
  Mat_PatchworkTransfer *t;
  DM                     from, to;
  Vec                    xl, yl;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(P, &t));
  PetscCall(PetscLogEventBegin(PATCHWORK_Transfer, P, x, y, 0));
  if (!add) PetscCall(VecZeroEntries(y));
  if (t->serial) PetscCall(RunTransfer(transpose, &t->desc, x, y));
  else {
    from = transpose ? t->fine : t->coarse;
    to   = transpose ? t->coarse : t->fine;
    xl   = transpose ? t->floc : t->cloc;
    yl   = transpose ? t->cloc : t->floc;
    PetscCall(DMGlobalToLocalBegin(from, x, INSERT_VALUES, xl));
    PetscCall(DMGlobalToLocalEnd(from, x, INSERT_VALUES, xl));
    PetscCall(VecZeroEntries(yl));
    PetscCall(RunTransfer(transpose, &t->desc, xl, yl));
    PetscCall(DMLocalToGlobalBegin(to, yl, ADD_VALUES, y));
    PetscCall(DMLocalToGlobalEnd(to, yl, ADD_VALUES, y));
  }
  PetscCall(PetscLogEventEnd(PATCHWORK_Transfer, P, x, y, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMult_Transfer(Mat P, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(Apply(P, x, y, PETSC_FALSE, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultTranspose_Transfer(Mat P, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(Apply(P, x, y, PETSC_TRUE, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* z = y + P x (or P^T x); the kernels add, so when z is y nothing is copied */
static PetscErrorCode MultAdd(Mat P, Vec x, Vec y, Vec z, PetscBool transpose)
{
  PetscFunctionBegin;
  if (z != y) PetscCall(VecCopy(y, z));
  PetscCall(Apply(P, x, z, transpose, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultAdd_Transfer(Mat P, Vec x, Vec y, Vec z)
{
  PetscFunctionBegin;
  PetscCall(MultAdd(P, x, y, z, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultTransposeAdd_Transfer(Mat P, Vec x, Vec y, Vec z)
{
  PetscFunctionBegin;
  PetscCall(MultAdd(P, x, y, z, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDestroy_Transfer(Mat P)
{
  Mat_PatchworkTransfer *t;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(P, &t));
  PetscCall(VecDestroy(&t->cloc));
  PetscCall(VecDestroy(&t->floc));
  PetscCall(DMDestroy(&t->coarse));
  PetscCall(DMDestroy(&t->fine));
  PetscCall(PetscFree(t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatView_Transfer(Mat P, PetscViewer viewer)
{
  Mat_PatchworkTransfer *t;
  PetscBool              ascii;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (!ascii) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatShellGetContext(P, &t));
  PetscCall(PetscViewerASCIIPrintf(viewer, "Patchwork Q%d transfer: interpolation from a %dD grid to its refinement by two, matrix-free (MatMultTranspose restricts)\n", t->desc.degree, t->desc.dim));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The kernel descriptor of a transfer made by MatCreatePatchworkTransfer(), for callers that run the
   kernels on arrays of their own (PCVERTEXPATCH in single precision) */
PetscErrorCode PatchworkTransferGetDesc(Mat P, PatchworkTransferDesc *desc)
{
  Mat_PatchworkTransfer *t;
  PatchworkShellOpFn     mult;

  PetscFunctionBegin;
  PetscCall(MatShellGetOperation(P, MATOP_MULT, &mult));
  PetscCheck(mult == PatchworkShellOp(MatMult_Transfer), PetscObjectComm((PetscObject)P), PETSC_ERR_ARG_WRONG, "Not a Patchwork transfer (MatCreatePatchworkTransfer())");
  PetscCall(MatShellGetContext(P, &t));
  *desc = t->desc;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatCreatePatchworkTransfer - The Q_k interpolation from the grid of one Patchwork operator to the grid
  of another that refines it by two in every direction, as a matrix-free MATSHELL

  Collective

  Input Parameters:
+ coarse - `MatCreatePatchworkTensor()` operator on the coarse grid
- fine   - operator of the same degree and box on the grid with twice the cells in every direction

  Output Parameter:
. P - fine x coarse MATSHELL: `MatMult()` interpolates (P), `MatMultTranspose()` restricts (P^T),
      `MatMultAdd()`, `MatMultTransposeAdd()`; Dirichlet nodes are neither read nor written

  Notes:
  Each rank transfers through its own fine cells, whose parents must lie in its ghosted coarse
  vector: the coarse DMDA must be the `DMCoarsen()` of the fine one (a different partition is refused).
  Suited to `PCMGSetInterpolation()`; `PCMGSetPatchworkHierarchy()` builds a whole hierarchy.

  Level: intermediate

.seealso: `MatCreatePatchworkTensor()`, `PCMGSetPatchworkHierarchy()`, `PCVERTEXPATCH`
@*/
PetscErrorCode MatCreatePatchworkTransfer(Mat coarse, Mat fine, Mat *P)
{
  PatchworkTensorInfo    ci, fi;
  Mat_PatchworkTransfer *t;
  PatchworkTensorDesc    fd;
  PetscInt               gs[3] = {0, 0, 0}, gm[3] = {0, 0, 0}, k, mc, nc, mf, nf;
  PetscMPIInt            size;
  MPI_Comm               comm;
  VecType                vtype;

  PetscFunctionBegin;
  PatchworkAssertPointer(P, 3);
  PetscCall(MatPatchworkTensorGetInfo(coarse, &ci));
  PetscCall(MatPatchworkTensorGetInfo(fine, &fi));
  comm = PetscObjectComm((PetscObject)fine);
  PetscCall(PatchworkTensorRequireCartesian(&ci, comm, "MatCreatePatchworkTransfer()"));
  PetscCall(PatchworkTensorRequireCartesian(&fi, comm, "MatCreatePatchworkTransfer()"));
  k    = fi.degree;
  PetscCheck(ci.degree == k && ci.dim == fi.dim, comm, PETSC_ERR_ARG_INCOMP, "The transfer needs operators of the same degree and dimension (coarse Q%" PetscInt_FMT " %" PetscInt_FMT "D, fine Q%" PetscInt_FMT " %" PetscInt_FMT "D)", ci.degree, ci.dim, k, fi.dim);
  for (PetscInt d = 0; d < fi.dim; d++) {
    PetscCheck(fi.cells[d] == 2 * ci.cells[d], comm, PETSC_ERR_ARG_INCOMP, "The fine grid must have twice the coarse cells in every direction: %" PetscInt_FMT " vs %" PetscInt_FMT " in direction %" PetscInt_FMT, fi.cells[d], ci.cells[d], d);
    PetscCheck(PetscAbsReal(fi.lower[d] - ci.lower[d]) <= 1e-12 * (fi.upper[d] - fi.lower[d]) && PetscAbsReal(fi.upper[d] - ci.upper[d]) <= 1e-12 * (fi.upper[d] - fi.lower[d]), comm, PETSC_ERR_ARG_INCOMP, "The coarse and fine operators must cover the same box");
  }
  PetscCheck(ci.bc == fi.bc, comm, PETSC_ERR_ARG_INCOMP, "The coarse and fine operators have different boundary conditions");
  PetscCall(PatchworkInitializePackage());
  PetscCall(PetscNew(&t));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  t->serial = size == 1 ? PETSC_TRUE : PETSC_FALSE;
  t->coarse = ci.dm;
  t->fine   = fi.dm;
  PetscCall(PetscObjectReference((PetscObject)t->coarse));
  PetscCall(PetscObjectReference((PetscObject)t->fine));

  /* the fine operator's cells and boxes, the coarse array's box (levels without a DM: one rank) */
  PetscCall(PatchworkTensorFillDesc(&fi, PW_SCATTER_ATOMIC, t->serial, &fd, NULL, NULL));
  t->desc.dim       = (int)fi.dim;
  t->desc.degree    = (int)k;
  t->desc.dirichlet = fd.dirichlet;
  if (!t->serial) PetscCall(DMDAGetGhostCorners(ci.dm, &gs[0], &gs[1], &gs[2], &gm[0], &gm[1], &gm[2]));
  for (PetscInt d = 0; d < 3; d++) {
    t->desc.fine_nodes[d] = fd.nodes[d];
    t->desc.cell_start[d] = fd.cell_start[d];
    t->desc.cell_end[d]   = fd.cell_end[d];
    t->desc.fine_start[d] = fd.in_start[d];
    t->desc.fine_size[d]  = fd.in_size[d];
    if (t->serial) {
      t->desc.coarse_start[d] = 0;
      t->desc.coarse_size[d]  = d < fi.dim ? (int)(k * ci.cells[d] + 1) : 1;
    } else {
      t->desc.coarse_start[d] = (int)gs[d];
      t->desc.coarse_size[d]  = (int)gm[d];
      if (d < fi.dim && fd.cell_end[d] > fd.cell_start[d]) {
        const PetscInt lo = k * (fd.cell_start[d] / 2), hi = k * ((fd.cell_end[d] - 1) / 2) + k;

        PetscCheck(lo >= gs[d] && hi < gs[d] + gm[d], PETSC_COMM_SELF, PETSC_ERR_SUP, "The coarse grid partition does not cover the parents of this rank's fine cells in direction %" PetscInt_FMT ": make the coarse DMDA with DMCoarsen() of the fine one, or use fewer ranks or levels", d);
      }
    }
  }
  PetscCheck(!PatchworkTransferSetUp1D((int)k, &t->desc), PETSC_COMM_SELF, PETSC_ERR_LIB, "Transfer matrices of degree %" PetscInt_FMT " failed", k);
  if (!t->serial) {
    PetscCall(DMCreateLocalVector(ci.dm, &t->cloc));
    PetscCall(DMCreateLocalVector(fi.dm, &t->floc));
  }

  PetscCall(MatGetLocalSize(coarse, &mc, &nc));
  PetscCall(MatGetLocalSize(fine, &mf, &nf));
  PetscCall(MatCreateShell(comm, mf, mc, PETSC_DETERMINE, PETSC_DETERMINE, t, P));
  PetscCall(MatGetVecType(fine, &vtype)); /* the fine DM's (a level without a DM has none) */
  PetscCall(MatShellSetVecType(*P, vtype));
  PetscCall(MatShellSetOperation(*P, MATOP_MULT, PatchworkShellOp(MatMult_Transfer)));
  PetscCall(MatShellSetOperation(*P, MATOP_MULT_TRANSPOSE, PatchworkShellOp(MatMultTranspose_Transfer)));
  PetscCall(MatShellSetOperation(*P, MATOP_MULT_ADD, PatchworkShellOp(MatMultAdd_Transfer)));
  PetscCall(MatShellSetOperation(*P, MATOP_MULT_TRANSPOSE_ADD, PatchworkShellOp(MatMultTransposeAdd_Transfer)));
  PetscCall(MatShellSetOperation(*P, MATOP_VIEW, PatchworkShellOp(MatView_Transfer)));
  PetscCall(MatShellSetOperation(*P, MATOP_DESTROY, PatchworkShellOp(MatDestroy_Transfer)));
  PetscFunctionReturn(PETSC_SUCCESS);
}
