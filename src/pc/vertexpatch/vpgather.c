/* PCVERTEXPATCH on several ranks, the coarse levels gathered: a level of a few thousand nodes per rank
   costs the latency of its exchanges (one per color and step), not its arithmetic, so from the first
   level small enough down every rank gathers the whole level once per cycle and runs the levels below
   alone, with a PCVERTEXPATCH of its own on PETSC_COMM_SELF over the same grid (no DM, so no host work
   grows with it), then keeps its own nodes of the result. The cycle is the one a single rank runs:
   the same iterations. */
#include "vpimpl.h"
#include "../../mat/tensor/cartesian.h"

/* Nodes of level l of n whose finest has the given cells (every level halves them) */
static PetscInt LevelNodes(const PatchworkTensorInfo *info, PetscInt n, PetscInt l)
{
  PetscInt nodes = 1;

  for (PetscInt d = 0; d < info->dim; d++) nodes *= info->degree * (info->cells[d] >> (n - 1 - l)) + 1;
  return nodes;
}

/*
  PCVertexPatchGatherLevels - of the n levels of a hierarchy on the operator with info, how many the
  ranks share (*nshared, the finest ones; vp->ngathered = n - *nshared below them run gathered).
  Levels are gathered from the finest one with at most vp->gather_limit nodes down, and from the
  coarsest the partition allows (maxl levels, PatchworkMaxLevels()) in any case; gathering needs at least
  one level below the shared ones, so that the gathered PC has the coarse solve of the whole hierarchy.
*/
PetscErrorCode PCVertexPatchGatherLevels(PC pc, const PatchworkTensorInfo *info, PetscInt n, PetscInt maxl, PetscInt *nshared)
{
  PC_VertexPatch *vp = (PC_VertexPatch *)pc->data;
  PetscInt        g  = -1; /* the gathered levels' finest */

  PetscFunctionBegin;
  vp->ngathered = 0;
  *nshared      = n;
  if (vp->serial || vp->gather_limit <= 0) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt l = n - 1; l >= 0 && g < 0; l--)
    if (LevelNodes(info, n, l) <= vp->gather_limit) g = l;
  g = PetscMax(g, n - maxl);
  if (g < 1) PetscFunctionReturn(PETSC_SUCCESS);
  vp->ngathered = g;
  *nshared      = n - g;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The vector type of the same kind on one rank (mpicuda -> seqcuda); types without "mpi" serve both */
static PetscErrorCode SelfVecType(VecType type, char self[], size_t len)
{
  PetscBool mpi;

  PetscFunctionBegin;
  PetscCall(PetscStrncmp(type, "mpi", 3, &mpi));
  if (mpi) PetscCall(PetscSNPrintf(self, len, "seq%s", type + 3));
  else PetscCall(PetscStrncpy(self, type, len));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The gathered PC over the whole grid of levels[0] (its finest level), with the options of this one */
PetscErrorCode PCVertexPatchGatherSetUp(PC pc)
{
  PC_VertexPatch     *vp = (PC_VertexPatch *)pc->data;
  PC_VPLevel         *L  = &vp->levels[0];
  PC_VertexPatch     *in;
  PatchworkTensorInfo info;
  VecType             vtype;
  char                self[64];
  const char         *prefix;
  Mat                 A;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PATCHWORK_VPGather, pc, 0, 0, 0));
  PetscCall(MatPatchworkTensorGetInfo(L->A, &info));
  PetscCall(MatGetVecType(L->A, &vtype));
  PetscCall(SelfVecType(vtype, self, sizeof(self)));
  PetscCall(PatchworkTensorCreateOnBox(PETSC_COMM_SELF, &info, self, &A));
  PetscCall(PCCreate(PETSC_COMM_SELF, &vp->gathered));
  PetscCall(PCGetOptionsPrefix(pc, &prefix)); /* the coarse KSP's options reach it: the same prefix */
  PetscCall(PCSetOptionsPrefix(vp->gathered, prefix));
  PetscCall(PCSetType(vp->gathered, PCVERTEXPATCH));
  in               = (PC_VertexPatch *)vp->gathered->data;
  in->nlevels_req  = vp->ngathered + 1;
  in->smooth_steps = vp->smooth_steps;
  in->type         = vp->type;
  in->kernel       = vp->kernel;
  in->precision    = vp->precision;
  in->omega        = vp->omega;
  in->symmetric    = vp->symmetric;
  in->gather_nodes = 0;
  PetscCall(PCSetOperators(vp->gathered, A, A));
  PetscCall(MatDestroy(&A));
  PetscCall(PCSetUp(vp->gathered));
  PetscCall(PCGetOperators(vp->gathered, &A, NULL));
  PetscCall(MatCreateVecs(A, &vp->gx, &vp->gb));
  PetscCall(DMDAGlobalToNaturalAllCreate(L->dm, &vp->gather));
  PetscCall(DMDANaturalAllToGlobalCreate(L->dm, &vp->scatter));
  PetscCall(PetscLogEventEnd(PATCHWORK_VPGather, pc, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* New coefficients or quadrature (levels[0]'s operator has them already): the gathered PC refreshes */
PetscErrorCode PCVertexPatchGatherRefresh(PC pc)
{
  PC_VertexPatch     *vp = (PC_VertexPatch *)pc->data;
  PatchworkTensorInfo info;
  Mat                 A;

  PetscFunctionBegin;
  if (!vp->gathered) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatPatchworkTensorGetInfo(vp->levels[0].A, &info));
  PetscCall(PCGetOperators(vp->gathered, &A, NULL));
  PetscCall(MatPatchworkTensorSetCoefficients(A, info.alpha, info.beta));
  PetscCall(MatPatchworkTensorSetQuadrature(A, info.quadrature));
  PetscCall(PetscObjectStateIncrease((PetscObject)A)); /* PCSetUp() acts on a changed operator only */
  PetscCall(PCSetUp(vp->gathered));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* levels[0]'s x from its b by the gathered levels: a V-cycle from a zero guess, or (fmg) their full
   multigrid cycle */
PetscErrorCode PCVertexPatchGatherSolve(PC pc, PetscBool fmg)
{
  PC_VertexPatch *vp = (PC_VertexPatch *)pc->data;
  PC_VPLevel     *L  = &vp->levels[0];

  PetscFunctionBegin;
  PetscCall(VecScatterBegin(vp->gather, L->v[VP_B], vp->gb, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(vp->gather, L->v[VP_B], vp->gb, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(PCVertexPatchCycleWithin(vp->gathered, vp->gb, vp->gx, fmg));
  PetscCall(VecScatterBegin(vp->scatter, vp->gx, L->v[VP_X], INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(vp->scatter, vp->gx, L->v[VP_X], INSERT_VALUES, SCATTER_FORWARD));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCVertexPatchGatherView(PC pc, PetscViewer viewer)
{
  PC_VertexPatch *vp = (PC_VertexPatch *)pc->data;
  PetscInt        N;
  PetscViewer     sub;
  PetscMPIInt     rank;

  PetscFunctionBegin;
  if (!vp->gathered) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGetSize(vp->levels[0].A, &N, NULL));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  levels 0-%" PetscInt_FMT " gathered: every rank gathers level %" PetscInt_FMT " (%" PetscInt_FMT " nodes; -pc_vertexpatch_gather_nodes %" PetscInt_FMT ") once per cycle and runs them alone, by\n", vp->ngathered, vp->ngathered, N, vp->gather_limit));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  PetscCall(PetscViewerGetSubViewer(viewer, PETSC_COMM_SELF, &sub)); /* each rank's copy is the same: rank 0's */
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)pc), &rank));
  if (rank == 0) PetscCall(PCView(vp->gathered, sub));
  PetscCall(PetscViewerRestoreSubViewer(viewer, PETSC_COMM_SELF, &sub));
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCVertexPatchGatherReset(PC pc)
{
  PC_VertexPatch *vp = (PC_VertexPatch *)pc->data;

  PetscFunctionBegin;
  PetscCall(PCDestroy(&vp->gathered));
  PetscCall(VecScatterDestroy(&vp->gather));
  PetscCall(VecScatterDestroy(&vp->scatter));
  PetscCall(VecDestroy(&vp->gb));
  PetscCall(VecDestroy(&vp->gx));
  vp->ngathered = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}
