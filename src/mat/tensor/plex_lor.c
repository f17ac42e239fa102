/* What PCLOR needs from the operator on a DMPlex: the nodes of every cell with their global rows and
   coordinates, and the coefficients at the nodes. The LOR mesh splits each cell at these nodes, so
   they are the vertices of its Q1 sub-cells. */
#include "tensorimpl.h"

/* A coefficient at every node of this rank's cells: the function at the node coordinates, or the
   Vec's values when the quadrature points are the nodes (Gauss-Lobatto, k+1 points, both
   lexicographic); NULL when the coefficient is constant */
static PetscErrorCode NodeValues(Mat_PatchworkTensor *ctx, PatchworkCoefficientFn fn, Vec v, const char *name, double **values)
{
  const PatchworkPlexData *px = ctx->plex;

  PetscFunctionBegin;
  PetscCheck(fn || !v || (ctx->info.quadrature == PATCHWORK_QUADRATURE_GAUSSLOBATTO && ctx->info.qpoints == ctx->info.degree + 1), PetscObjectComm((PetscObject)v), PETSC_ERR_SUP, "PCLOR needs the %s coefficient at the nodes: with a coefficient Vec the operator's quadrature must be Gauss-Lobatto with k+1 points (its points are then the nodes), or give the coefficient as a function (MatPatchworkTensorSetCoefficientFunctions())", name);
  PetscCall(PatchworkPlexCoefficientValues(px, ctx->info.dim, px->nodes, "node", fn, v, name, px->coords, values));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PatchworkPlexGetLORData(Mat A, PatchworkPlexLORData *d)
{
  Mat_PatchworkTensor *ctx;
  PatchworkPlexData   *px;
  PetscInt             nloc, *gl;

  PetscFunctionBegin;
  PetscCall(PatchworkTensorGetContext(A, &ctx));
  px = ctx->plex;
  PetscCheck(px, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "The operator lives on a DMDA, not a DMPlex");
  PetscCheck(!px->hang, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "PCLOR does not support meshes with hanging nodes yet");
  PetscCall(PetscMemzero(d, sizeof(*d)));
  d->dim    = ctx->info.dim;
  d->degree = ctx->info.degree;
  d->ncells = px->ncells;
  d->nodes  = px->nodes;
  d->alpha  = ctx->info.alpha;
  d->beta   = ctx->info.beta;
  d->coords = px->coords;
  PetscCall(PatchworkPlexLocalGlobalIndices(ctx->info.dm, &nloc, &gl));
  PetscCall(PetscMalloc1(px->ncells * px->nodes, &d->rows));
  for (PetscInt i = 0; i < px->ncells * px->nodes; i++) d->rows[i] = gl[px->elem_local[i]];
  PetscCall(PetscFree(gl));
  PetscCall(NodeValues(ctx, px->reaction_fn, px->reaction, "reaction", &d->reaction));
  PetscCall(NodeValues(ctx, px->diffusion_fn, px->diffusion, "diffusion", &d->diffusion));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PatchworkPlexRestoreLORData(PatchworkPlexLORData *d)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(d->rows));
  PetscCall(PetscFree(d->reaction));
  PetscCall(PetscFree(d->diffusion));
  d->coords = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}
