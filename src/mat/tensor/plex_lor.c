/* What PCLOR needs from the operator on a DMPlex: the nodes of every cell with their global rows and
   coordinates, and the coefficients at the nodes. The LOR mesh splits each cell at these nodes, so
   they are the vertices of its Q1 sub-cells. */
#include "tensorimpl.h"
#include <patchwork/hanging_kernel.h>

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

/* With hanging nodes, every node of a cell as its row of the cell's constraint, in global rows:
   the unknowns of the kernels' map (px->elem: global indices on one rank, local ones otherwise) */
static PetscErrorCode HangingExpansions(Mat_PatchworkTensor *ctx, const PetscInt *gl, PatchworkPlexLORData *d)
{
  const PatchworkPlexData *px = ctx->plex;
  const PetscInt           nn = px->ncells * px->nodes;
  PetscInt                 cap = nn, n = 0;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(nn + 1, &d->xptr));
  PetscCall(PetscMalloc2(cap, &d->xrow, cap, &d->xw));
  d->xptr[0] = 0;
  for (PetscInt c = 0; c < px->ncells; c++)
    for (PetscInt i = 0; i < px->nodes; i++) {
      int    slot[PW_MAX_N * PW_MAX_N];
      double w[PW_MAX_N * PW_MAX_N];
      int    cnt = PatchworkHangingRow((int)d->dim, (int)d->degree, px->hang[c], px->hangP, (int)i, slot, w);

      if (n + cnt > cap) { /* grow */
        PetscInt  *r;
        PetscReal *ww;

        cap = 2 * cap + cnt;
        PetscCall(PetscMalloc2(cap, &r, cap, &ww));
        PetscCall(PetscArraycpy(r, d->xrow, n));
        PetscCall(PetscArraycpy(ww, d->xw, n));
        PetscCall(PetscFree2(d->xrow, d->xw));
        d->xrow = r;
        d->xw   = ww;
      }
      for (int t = 0; t < cnt; t++) {
        const int e = px->elem[c * px->nodes + slot[t]];

        if (e < 0) continue; /* an essential condition */
        d->xrow[n] = ctx->serial ? e : gl[e];
        d->xw[n++] = w[t];
      }
      d->xptr[c * px->nodes + i + 1] = n;
    }
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
  if (px->hang) PetscCall(HangingExpansions(ctx, gl, d));
  PetscCall(PetscFree(gl));
  PetscCall(NodeValues(ctx, px->reaction_fn, px->reaction, "reaction", &d->reaction));
  PetscCall(NodeValues(ctx, px->diffusion_fn, px->diffusion, "diffusion", &d->diffusion));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PatchworkPlexRestoreLORData(PatchworkPlexLORData *d)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(d->rows));
  PetscCall(PetscFree(d->xptr));
  PetscCall(PetscFree2(d->xrow, d->xw));
  PetscCall(PetscFree(d->reaction));
  PetscCall(PetscFree(d->diffusion));
  d->coords = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}
