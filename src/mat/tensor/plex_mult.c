/* Application and diagonal of the operator on general meshes: ghost exchange through the DMPlex
   (none on one rank, where the element map indexes the global vector) and dispatch to the CPU
   reference or the CUDA kernels by where the vectors live. */
#include "tensorimpl.h"

static PetscErrorCode RunKernel(Mat_PatchworkTensor *ctx, Vec x, Vec y)
{
  PatchworkPlexData *px = ctx->plex;
  PatchworkArrays    p;

  PetscFunctionBegin;
  PetscCall(PatchworkArraysGet(x, NULL, y, &p));
  PetscCheck(p.device == px->on_device, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "The operator was set up for %s vectors but got %s vectors: use vectors from MatCreateVecs() or the DM", px->on_device ? "device" : "host", p.device ? "device" : "host");
  if (p.device) {
#if defined(PATCHWORK_HAVE_CUDA)
    void *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
    PetscCall(PetscLogGpuTimeBegin());
    if (x && px->order) { /* hanging nodes: the plain cells, then the hanging ones (HangingToDevice()) */
      PatchworkCallKernel(PatchworkPlexApplyCUDA(&px->desc_plain, p.r[0], p.w, stream));
      PatchworkCallKernel(PatchworkPlexApplyCUDA(&px->desc_hang, p.r[0], p.w, stream));
    } else if (x) PatchworkCallKernel(PatchworkPlexApplyCUDA(&px->desc, p.r[0], p.w, stream));
    else if (px->fly) { /* the diagonal reads stored factors: made for it */
      PatchworkPlexDesc d = px->desc;
      void             *geom;

      PetscCall(PatchworkPlexGeometryDevice(ctx, &geom));
      d.geom = (const double *)geom;
      PatchworkCallKernel(PatchworkPlexDiagonalCUDA(&d, p.w, stream));
      PatchworkCallKernel(PatchworkDeviceFree(geom));
    } else PatchworkCallKernel(PatchworkPlexDiagonalCUDA(&px->desc, p.w, stream));
    PetscCall(PetscLogGpuTimeEnd());
    if (x) PetscCall(PetscLogGpuFlops(ctx->flops));
#endif
  } else {
    if (x) PatchworkPlexApplyRef(&px->desc, p.r[0], p.w);
    else PatchworkPlexDiagonalRef(&px->desc, p.w);
    if (x) PetscCall(PetscLogFlops(ctx->flops));
  }
  PetscCall(PatchworkArraysRestore(&p));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = A x, or y = diag(A) when x is NULL */
PetscErrorCode PatchworkPlexApplyOrDiagonal(Mat A, Vec x, Vec y)
{
  Mat_PatchworkTensor *ctx;
  DM                   dm;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &ctx));
  PetscCall(PatchworkPlexSetUpGeometry(A));
  dm = ctx->info.dm;
  if (ctx->serial) {
    PetscCall(VecZeroEntries(y));
    PetscCall(RunKernel(ctx, x, y));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (!ctx->xloc) PetscCall(DMCreateLocalVector(dm, &ctx->xloc));
  if (!ctx->yloc) PetscCall(VecDuplicate(ctx->xloc, &ctx->yloc));
  if (x) {
    PetscCall(DMGlobalToLocalBegin(dm, x, INSERT_VALUES, ctx->xloc));
    PetscCall(DMGlobalToLocalEnd(dm, x, INSERT_VALUES, ctx->xloc));
  }
  PetscCall(VecZeroEntries(ctx->yloc));
  PetscCall(RunKernel(ctx, x ? ctx->xloc : NULL, ctx->yloc));
  PetscCall(VecZeroEntries(y));
  PetscCall(DMLocalToGlobalBegin(dm, ctx->yloc, ADD_VALUES, y));
  PetscCall(DMLocalToGlobalEnd(dm, ctx->yloc, ADD_VALUES, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PatchworkPlexView(Mat A, PetscViewer viewer)
{
  Mat_PatchworkTensor *ctx;
  PatchworkPlexData   *px;
  PetscInt             ncells;
  const char          *coef;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &ctx));
  px     = ctx->plex;
  ncells = px->ncells;
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &ncells, 1, MPIU_INT, MPI_SUM, PetscObjectComm((PetscObject)A)));
  coef = px->diffusion_fn || px->reaction_fn ? "functions of x, evaluated at the quadrature points" : px->diffusion || px->reaction ? "values at the quadrature points (Vecs)" : "constant";
  PetscCall(PetscViewerASCIIPrintf(viewer, "Patchwork tensor-product operator %g*%sM + %g*%sK, Q%" PetscInt_FMT " Lagrange on Gauss-Lobatto nodes, %" PetscInt_FMT "D general mesh (DMPlex)\n", (double)ctx->info.alpha, px->reaction_fn || px->reaction ? "r(x)*" : "", (double)ctx->info.beta, px->diffusion_fn || px->diffusion ? "c(x)*" : "", ctx->info.degree, ctx->info.dim));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  PetscCall(PetscViewerASCIIPrintf(viewer, "%" PetscInt_FMT " %s cells; coefficients: %s\n", ncells, ctx->info.dim == 2 ? "quadrilateral" : "hexahedral", coef));
  PetscCall(PetscViewerASCIIPrintf(viewer, "quadrature: %s, %" PetscInt_FMT " points per direction\n", PatchworkTensorQuadratures[ctx->info.quadrature], ctx->info.qpoints));
  if (!px->geomvalid) PetscCall(PetscViewerASCIIPrintf(viewer, "geometric factors: not computed yet (%s)\n", px->fly_allowed ? "on the fly in each apply where the vectors live on the device and the cells are multilinear, else stored" : "to be stored"));
  else if (px->fly) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "geometric factors: computed at every quadrature point in each apply from the cells' corners (multilinear cells, CUDA)\n"));
    if (!px->fly_hang) PetscCall(PetscViewerASCIIPrintf(viewer, "  in the cells with hanging faces or edges (a launch of their own) stored per quadrature point: %s\n", px->fly_hang_refusal));
  } else PetscCall(PetscViewerASCIIPrintf(viewer, "geometric factors: stored per quadrature point (%d per point); %s\n", PW_PLEX_NCOMP((int)ctx->info.dim), px->fly_refusal));
  PetscCall(PetscViewerASCIIPrintf(viewer, "geometry: coordinate field of degree %" PetscInt_FMT ", %s\n", px->coord_degree, px->coord_degree <= ctx->info.degree ? "represented exactly at the Q_k nodes" : "interpolated at the Q_k nodes (isoparametric approximation)"));
  PetscCall(PetscViewerASCIIPrintf(viewer, "boundary conditions: %s\n", px->constrained ? "essential conditions of the DM (constrained nodes are not unknowns)" : "natural (no constrained nodes)"));
  {
    PetscInt nh = px->nhanging; /* on every rank: a rank none of whose cells hangs has no masks (px->hang) */

    PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &nh, 1, MPIU_INT, MPI_SUM, PetscObjectComm((PetscObject)A)));
    if (nh) PetscCall(PetscViewerASCIIPrintf(viewer, "hanging nodes: %" PetscInt_FMT " cells with hanging faces or edges, constrained inside the cell kernel (sum-factorized interpolation from the coarse face)\n", nh));
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "backend: %s, %s\n", px->geomvalid ? (px->on_device ? "CUDA kernels on device vectors" : "CPU sum factorization") : "not set up yet", ctx->serial ? "one rank: no ghost exchange" : "ghost exchange through the DMPlex"));
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}
