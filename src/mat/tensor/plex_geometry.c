/* Geometric factors and variable coefficients of the operator on general meshes: computed once per
   setting, on the device when the operator's vectors live there, and the setters that change them. */
#include "tensorimpl.h"
#include <patchwork/vec_kernel.h>
#include <patchwork/hanging_kernel.h>

static PetscErrorCode GetPlexContext(Mat A, Mat_PatchworkTensor **ctx)
{
  PetscFunctionBegin;
  PetscCall(PatchworkTensorGetContext(A, ctx));
  PetscCheck((*ctx)->plex, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "Only an operator on a general (DMPlex) mesh has variable coefficients, a choice of quadrature points and of how its geometry is kept; this one is on a Cartesian DMDA");
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscInt Pow(PetscInt b, PetscInt e)
{
  PetscInt p = 1;
  for (PetscInt i = 0; i < e; i++) p *= b;
  return p;
}

/* The geometry descriptor on host arrays (coefficients not yet attached), and the rule's points */
static PetscErrorCode FillGeomDesc(const Mat_PatchworkTensor *ctx, PatchworkPlexGeomDesc *g, double pts[PW_MAX_Q])
{
  const PatchworkTensorInfo *info = &ctx->info;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(g, sizeof(*g)));
  g->dim    = (int)info->dim;
  g->degree = (int)info->degree;
  g->nq     = (int)info->qpoints;
  g->ncells = (int)ctx->plex->ncells;
  g->coords = ctx->plex->coords;
  g->alpha  = (double)info->alpha;
  g->beta   = (double)info->beta;
  PetscCheck(!PatchworkPlex1DTables(g->degree, g->nq, info->quadrature == PATCHWORK_QUADRATURE_GAUSS ? PW_QUAD_GAUSS : PW_QUAD_GAUSSLOBATTO, pts, g->weights, g->interp, g->deriv), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "No %s rule with %" PetscInt_FMT " points for degree %" PetscInt_FMT " (Gauss-Lobatto needs k+1 points; at most k+3)", PatchworkTensorQuadratures[info->quadrature], info->qpoints, info->degree);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Coefficient values at npts points of each of this rank's cells (what: "quadrature point" or
   "node"; x: their coordinates, (cell * dim + d) * npts + point), from the function or the Vec;
   NULL when constant */
PetscErrorCode PatchworkPlexCoefficientValues(const PatchworkPlexData *px, PetscInt dim, PetscInt npts, const char *what, PatchworkCoefficientFn fn, Vec v, const char *name, const double *x, double **values)
{
  const PetscInt n = px->ncells * npts;

  PetscFunctionBegin;
  *values = NULL;
  if (!fn && !v) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscMalloc1(n, values));
  if (fn) {
    for (PetscInt c = 0; c < px->ncells; c++)
      for (PetscInt q = 0; q < npts; q++) {
        PetscReal p[3], val;

        for (PetscInt d = 0; d < dim; d++) p[d] = x[(c * dim + d) * npts + q];
        PetscCall((*fn)(dim, p, &val, px->fnctx));
        (*values)[c * npts + q] = val;
      }
  } else {
    const PetscScalar *a;
    PetscInt           nv;

    PetscCall(VecGetLocalSize(v, &nv));
    PetscCheck(nv == n, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "The %s Vec has local size %" PetscInt_FMT ", expected %" PetscInt_FMT " (%" PetscInt_FMT " cells x %" PetscInt_FMT " %ss)", name, nv, n, px->ncells, npts, what);
    PetscCall(VecGetArrayRead(v, &a));
    for (PetscInt i = 0; i < n; i++) (*values)[i] = PetscRealPart(a[i]);
    PetscCall(VecRestoreArrayRead(v, &a));
  }
  for (PetscInt i = 0; i < n; i++) PetscCheck(PetscIsNormalReal((*values)[i]) || (*values)[i] == 0, PETSC_COMM_SELF, PETSC_ERR_FP, "The %s coefficient is %g at %s %" PetscInt_FMT " of local cell %" PetscInt_FMT ": coefficients must be finite", name, (*values)[i], what, i % npts, i / npts);
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if defined(PATCHWORK_HAVE_CUDA)
static PetscErrorCode ToDevice(const void *h, size_t bytes, void **d)
{
  void *stream;

  PetscFunctionBegin;
  *d = NULL;
  if (!h) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PatchworkGetDeviceStream(&stream));
  PatchworkCallKernel(PatchworkDeviceMalloc(bytes, d));
  PatchworkCallKernel(PatchworkDeviceCopyToDevice(*d, h, bytes, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Cells [first, first + count) of the device order of h (cellbytes per cell, host order) into a new
   device array; NULL for NULL */
static PetscErrorCode ToDeviceOrdered(const PatchworkPlexData *px, const void *h, size_t cellbytes, PetscInt first, PetscInt count, void **d)
{
  char *tmp;

  PetscFunctionBegin;
  if (!px->order || !h) {
    PetscCall(ToDevice(h ? (const char *)h + first * cellbytes : NULL, cellbytes * count, d));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscMalloc1(cellbytes * count, &tmp));
  for (PetscInt p = 0; p < count; p++) PetscCall(PetscMemcpy(tmp + p * cellbytes, (const char *)h + px->order[first + p] * cellbytes, cellbytes));
  PetscCall(ToDevice(tmp, cellbytes * count, d));
  PetscCall(PatchworkDeviceSynchronize()); /* before tmp goes */
  PetscCall(PetscFree(tmp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The hanging-node data on the device (once). The cells are reordered there, those without hanging faces
   or edges first (px->order, px->nplain), so that the apply takes them with the plain kernels (and their
   geometry on the fly at every degree) and only the others with the constraint phases (H100, p4est
   meshes refined once towards a sphere, 1M DoF: 3D k = 3 +35% -> +27% over the uniform mesh, k = 4
   +16% -> +9%, bench/plex_adaptive.sh).
   Then the masks, the tables, the hanging cells whose masks the templated kernels do not take (none on a
   1-irregular mesh; a generic kernel applies them; numbered from the first hanging cell) and, for the
   diagonal, every unknown of the hanging cells once (device positions) */
static PetscErrorCode HangingToDevice(PatchworkPlexData *px, int dim)
{
  long long *cells, *diag, nd = 0;
  PetscInt   nh = 0, np = 0;

  PetscFunctionBegin;
  if (!px->hang || px->hang_dev) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscMalloc1(px->ncells, &px->order));
  for (PetscInt c = 0; c < px->ncells; c++)
    if (!px->hang[c]) px->order[np++] = c;
  px->nplain = np;
  for (PetscInt c = 0; c < px->ncells; c++)
    if (px->hang[c]) px->order[np++] = c;
  PetscCall(PetscMalloc2(px->nhanging, &cells, px->nhanging * px->nodes, &diag));
  for (PetscInt p = px->nplain; p < px->ncells; p++) {
    const PetscInt c = px->order[p];
    const int     *e = px->elem + c * px->nodes;

    if (!PatchworkHangingRegular(dim, px->hang[c])) cells[nh++] = p - px->nplain; /* not for the templated kernels */
    for (PetscInt i = 0; i < px->nodes; i++) {
      PetscBool seen = (PetscBool)(e[i] < 0);

      for (PetscInt j = 0; j < i && !seen; j++) seen = (PetscBool)(e[j] == e[i]);
      if (!seen) diag[nd++] = (long long)p * px->nodes + i;
    }
  }
  PetscCall(ToDeviceOrdered(px, px->hang, sizeof(unsigned long long), 0, px->ncells, &px->hang_dev));
  PetscCall(ToDevice(px->hangP, sizeof(px->hangP), &px->hangP_dev));
  PetscCall(ToDevice(cells, sizeof(long long) * nh, &px->hang_cells_dev));
  PetscCall(ToDevice(diag, sizeof(long long) * nd, &px->hang_diag_dev));
  px->nhang_diag = nd;
  px->nhang_irregular = nh;
  PetscCall(PatchworkDeviceSynchronize()); /* before the host lists go */
  PetscCall(PetscFree2(cells, diag));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The geometric factors of the setting g (host arrays; the coefficients are taken from the device copies)
   of the cells [first, first + count) of the device order into a new device array, and the number of bad
   cells */
static PetscErrorCode GeometryDevice(Mat_PatchworkTensor *ctx, const PatchworkPlexGeomDesc *g, PetscInt first, PetscInt count, void **geom, int *nbad)
{
  PatchworkPlexData    *px = ctx->plex;
  PatchworkPlexGeomDesc gd = *g;
  void                 *coords, *stream;
  const size_t          nqd = (size_t)Pow(g->nq, g->dim);

  PetscFunctionBegin;
  PetscCall(PatchworkGetDeviceStream(&stream));
  PetscCall(ToDeviceOrdered(px, px->coords, sizeof(double) * g->dim * px->nodes, first, count, &coords));
  PatchworkCallKernel(PatchworkDeviceMalloc(sizeof(double) * count * PW_PLEX_NCOMP(g->dim) * nqd, geom));
  gd.ncells    = (int)count;
  gd.coords    = (const double *)coords;
  gd.diffusion = px->diffusion_dev ? (const double *)px->diffusion_dev + first * nqd : NULL;
  gd.reaction  = px->reaction_dev ? (const double *)px->reaction_dev + first * nqd : NULL;
  PetscCall(PetscLogGpuTimeBegin());
  PatchworkCallKernel(PatchworkPlexGeometryCUDA(&gd, (double *)*geom, nbad, stream));
  PetscCall(PetscLogGpuTimeEnd());
  PatchworkCallKernel(PatchworkDeviceFree(coords));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The corners of every cell (the layout of PatchworkPlexDesc.corners, device order) from its nodes, to the device */
static PetscErrorCode UploadCorners(PatchworkPlexData *px, int dim, int n)
{
  const PetscInt nv = PW_PLEX_NCORNER(dim);
  double        *X;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(px->ncells * dim * nv, &X));
  for (PetscInt p = 0; p < px->ncells; p++) {
    const PetscInt c = px->order ? px->order[p] : p;

    for (PetscInt d = 0; d < dim; d++)
      for (PetscInt v = 0; v < nv; v++) X[(p * dim + d) * nv + v] = px->coords[(c * dim + d) * px->nodes + PatchworkPlexCornerNode(n, (int)v)];
  }
  PetscCall(ToDevice(X, sizeof(double) * px->ncells * dim * nv, &px->corners_dev));
  PetscCall(PatchworkDeviceSynchronize()); /* before X goes */
  PetscCall(PetscFree(X));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The factors for the diagonal when the apply computes them on the fly: a new device array */
PetscErrorCode PatchworkPlexGeometryDevice(Mat_PatchworkTensor *ctx, void **geom)
{
  PatchworkPlexGeomDesc g;
  double                pts[PW_MAX_Q];
  int                   nbad;

  PetscFunctionBegin;
  PetscCall(FillGeomDesc(ctx, &g, pts));
  PetscCall(GeometryDevice(ctx, &g, 0, g.ncells, geom, &nbad));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

/* Release the device arrays of the factors (and of their computation on the fly) */
PetscErrorCode PatchworkPlexFreeGeometryDevice(PatchworkPlexData *px)
{
  PetscFunctionBegin;
#if defined(PATCHWORK_HAVE_CUDA)
  void **a[5] = {&px->geom_dev, &px->geom_hang_dev, &px->corners_dev, &px->diffusion_dev, &px->reaction_dev};

  for (int i = 0; i < 5; i++) {
    PatchworkCallKernel(PatchworkDeviceFree(*a[i]));
    *a[i] = NULL;
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Why the CUDA apply does not compute the factors on the fly (NULL: it does), which MatView() reports:
   in the cells without hanging faces or edges (hanging false), and in the others (true; the device order
   puts them apart, HangingToDevice()). By default not in the hanging cells below k = 4, where the
   constraint phases cost more than the factors save (H100, bench_plex_kernels: k = 1..3 with 10-30% of
   the cells hanging, 0.8-1.5x the stored time). */
static const char *FlyRefusal(const PatchworkPlexData *px, PetscBool device, const PatchworkPlexGeomDesc *g, PetscBool hanging)
{
  if (!px->fly_allowed) return "as asked (-mat_patchwork_geometry_on_the_fly 0)";
  if (!device) return "on the fly needs device vectors";
  if (px->coord_degree != 1) return "on the fly needs multilinear cells (a coordinate field of degree 1)";
  if (g->nq > g->degree + 3) return "on the fly needs at most k+3 points"; /* the templated kernels */
  if (hanging && px->nhang_irregular > 0) return "on the fly does not take irregular hanging masks";
  if (hanging && g->degree < 4 && !px->fly_forced) return "with hanging nodes on the fly is the default from k = 4 (-mat_patchwork_geometry_on_the_fly 1 forces it)";
  return NULL;
}

#if defined(PATCHWORK_HAVE_CUDA)
/* The two launches of the apply on a mesh with hanging nodes (device order): the plain cells with no
   masks, then the hanging ones, each with its own geometry; the full descriptor d serves the diagonal */
static void SplitDescriptors(PatchworkPlexData *px, const PatchworkPlexDesc *d, PetscInt nqd)
{
  const PetscInt np = px->nplain, ncomp = PW_PLEX_NCOMP(d->dim), nc = d->dim * PW_PLEX_NCORNER(d->dim);
  const double  *geom = px->geom_dev ? (const double *)px->geom_dev + np * ncomp * nqd : (const double *)px->geom_hang_dev;

  px->desc_plain            = *d;
  px->desc_plain.ncells     = (int)np;
  px->desc_plain.hang       = NULL;
  px->desc_plain.hang_cells = px->desc_plain.hang_diag = NULL;
  px->desc_plain.nhang      = px->desc_plain.nhang_diag = 0;
  px->desc_hang             = *d;
  px->desc_hang.ncells      = d->ncells - (int)np;
  px->desc_hang.elem        = d->elem + np * px->nodes;
  px->desc_hang.hang        = d->hang + np;
  px->desc_hang.hang_cells  = (const long long *)px->hang_cells_dev; /* numbered from the first hanging cell */
  px->desc_hang.nhang       = px->nhang_irregular;
  px->desc_hang.hang_diag   = NULL;
  px->desc_hang.nhang_diag  = 0;
  px->desc_hang.geom        = px->fly_hang ? NULL : geom;
  px->desc_hang.corners     = px->fly_hang ? d->corners + np * nc : NULL;
  px->desc_hang.diffusion   = d->diffusion ? d->diffusion + np * nqd : NULL;
  px->desc_hang.reaction    = d->reaction ? d->reaction + np * nqd : NULL;
}
#endif

/* The geometric factors (and the apply descriptor) for the current coefficients and quadrature */
PetscErrorCode PatchworkPlexSetUpGeometry(Mat A)
{
  Mat_PatchworkTensor  *ctx;
  PatchworkPlexData    *px;
  PatchworkPlexGeomDesc g;
  double               *xq = NULL, *cdiff, *creact, pts[PW_MAX_Q];
  PetscInt              nqd, ncomp;
  int                   nbad = 0;
  PetscBool             device;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &ctx));
  px = ctx->plex;
  if (px->geomvalid) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventBegin(PATCHWORK_PlexGeometry, A, 0, 0, 0));
  PetscCall(FillGeomDesc(ctx, &g, pts));
  nqd   = Pow(g.nq, g.dim);
  ncomp = PW_PLEX_NCOMP(g.dim);
  if (px->diffusion_fn || px->reaction_fn) {
    PetscCall(PetscMalloc1(g.ncells * g.dim * nqd, &xq));
    PatchworkPlexQuadCoordsRef(&g, xq);
  }
  PetscCall(PatchworkPlexCoefficientValues(px, g.dim, nqd, "quadrature point", px->diffusion_fn, px->diffusion, "diffusion", xq, &cdiff));
  PetscCall(PatchworkPlexCoefficientValues(px, g.dim, nqd, "quadrature point", px->reaction_fn, px->reaction, "reaction", xq, &creact));
  PetscCall(PetscFree(xq));
  PetscCall(PatchworkMatVectorsOnDevice(A, &device));
  PetscCall(PetscFree(px->geom));
  PetscCall(PatchworkPlexFreeGeometryDevice(px));
#if defined(PATCHWORK_HAVE_CUDA)
  if (device) PetscCall(HangingToDevice(px, g.dim)); /* the device order; counts the irregular masks FlyRefusal() reads */
#endif
  if (!px->order) px->nplain = g.ncells;
  px->fly_refusal      = FlyRefusal(px, device, &g, PETSC_FALSE);
  px->fly              = (PetscBool)!px->fly_refusal;
  px->fly_hang_refusal = px->hang ? FlyRefusal(px, device, &g, PETSC_TRUE) : px->fly_refusal;
  px->fly_hang         = (PetscBool)!px->fly_hang_refusal;
#if defined(PATCHWORK_HAVE_CUDA)
  if (device) {
    const size_t cellq = sizeof(double) * nqd;

    if (!px->elem_dev) PetscCall(ToDeviceOrdered(px, px->elem, sizeof(int) * px->nodes, 0, g.ncells, &px->elem_dev));
    PetscCall(ToDeviceOrdered(px, cdiff, cellq, 0, g.ncells, &px->diffusion_dev));
    PetscCall(ToDeviceOrdered(px, creact, cellq, 0, g.ncells, &px->reaction_dev));
    PetscCall(GeometryDevice(ctx, &g, 0, g.ncells, &px->geom_dev, &nbad)); /* also the check of the cells on the fly */
    if (px->fly) {
      int nb = 0; /* those cells were checked above */

      PetscCall(UploadCorners(px, g.dim, g.degree + 1));
      if (!px->fly_hang && px->nplain < g.ncells) PetscCall(GeometryDevice(ctx, &g, px->nplain, g.ncells - px->nplain, &px->geom_hang_dev, &nb));
      PatchworkCallKernel(PatchworkDeviceFree(px->geom_dev));
      px->geom_dev = NULL;
    } else {
      PatchworkCallKernel(PatchworkDeviceFree(px->diffusion_dev));
      PatchworkCallKernel(PatchworkDeviceFree(px->reaction_dev));
      px->diffusion_dev = px->reaction_dev = NULL;
    }
  } else
#endif
  {
    PetscCheck(!device, PETSC_COMM_SELF, PETSC_ERR_SUP, "Device vectors, but Patchwork was built without CUDA: rebuild it against a PETSc configured with CUDA");
    g.diffusion = cdiff;
    g.reaction  = creact;
    PetscCall(PetscMalloc1(g.ncells * ncomp * nqd, &px->geom));
    nbad = PatchworkPlexGeometryRef(&g, px->geom);
  }
  PetscCall(PetscFree(cdiff));
  PetscCall(PetscFree(creact));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &nbad, 1, MPI_INT, MPI_SUM, PetscObjectComm((PetscObject)A)));
  PetscCheck(nbad == 0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "%d cells have a Jacobian determinant that vanishes or changes sign at a quadrature point: the mesh is tangled or degenerate, or its curved geometry is not representable at degree %" PetscInt_FMT, nbad, ctx->info.degree);

  PetscCall(PetscMemzero(&px->desc, sizeof(px->desc)));
  px->desc.dim        = g.dim;
  px->desc.degree     = g.degree;
  px->desc.nq         = g.nq;
  px->desc.collocated = ctx->info.quadrature == PATCHWORK_QUADRATURE_GAUSSLOBATTO;
  px->desc.ncells     = g.ncells;
  px->desc.elem       = device ? (const int *)px->elem_dev : px->elem;
  px->desc.geom       = device ? (const double *)px->geom_dev : px->geom;
  px->desc.corners    = (const double *)px->corners_dev;
  px->desc.diffusion  = (const double *)px->diffusion_dev;
  px->desc.reaction   = (const double *)px->reaction_dev;
  px->desc.alpha      = g.alpha;
  px->desc.beta       = g.beta;
  px->desc.hang       = px->hang;
  px->desc.hangP      = px->hangP;
#if defined(PATCHWORK_HAVE_CUDA)
  if (device && px->hang) { /* the full descriptor serves the diagonal, which takes no irregular-mask list */
    px->desc.hang       = (const unsigned long long *)px->hang_dev;
    px->desc.hangP      = (const double *)px->hangP_dev;
    px->desc.hang_diag  = (const long long *)px->hang_diag_dev;
    px->desc.nhang_diag = px->nhang_diag;
  }
#endif
  PetscCall(PetscArraycpy(px->desc.interp, g.interp, PW_MAX_Q * PW_MAX_N));
  PetscCall(PetscArraycpy(px->desc.deriv, g.deriv, PW_MAX_Q * PW_MAX_Q));
  PetscCall(PetscArraycpy(px->desc.points, pts, PW_MAX_Q));
  PetscCall(PetscArraycpy(px->desc.weights, g.weights, PW_MAX_Q));
#if defined(PATCHWORK_HAVE_CUDA)
  if (device && px->hang) SplitDescriptors(px, &px->desc, nqd);
#endif
  px->on_device = device;
  {
    const PetscLogDouble n = (PetscLogDouble)(g.degree + 1), q = (PetscLogDouble)g.nq, nd = (PetscLogDouble)g.dim;
    /* per cell: interpolation there and back (2 dim contractions of about q^dim n), the gradients there
       and back (2 dim of q^(dim+1)), the metric (2 dim^2 + 2 per point; on the fly also the factors
       from the corners: about 88 per point in 3D, 26 in 2D) */
    const PetscLogDouble qd = PetscPowReal(q, nd), cell = (px->desc.collocated ? 0 : 4 * nd * qd * n) + (4 * nd * qd * q + (2 * nd * nd + 2) * qd), fly = (g.dim == 3 ? 88 : 26) * qd;

    ctx->flops = (PetscLogDouble)g.ncells * cell + (PetscLogDouble)(px->fly ? px->nplain : 0) * fly + (PetscLogDouble)(px->fly_hang ? g.ncells - px->nplain : 0) * fly;
  }
  px->geomvalid = PETSC_TRUE;
  PetscCall(PetscLogEventEnd(PATCHWORK_PlexGeometry, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Changed(Mat A, Mat_PatchworkTensor *ctx)
{
  PetscFunctionBegin;
  ctx->plex->geomvalid = PETSC_FALSE;
  PetscCall(PetscObjectStateIncrease((PetscObject)A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatPatchworkTensorSetQuadraturePoints - Set the number of Gauss points per direction of an operator
  on a general (DMPlex) mesh

  Logically Collective

  Input Parameters:
+ A  - the operator
- nq - quadrature points per direction, k+1 (default) to k+3; more integrate curved cells and variable
       coefficients more accurately

  Options Database Key:
. -mat_patchwork_quadrature_points <k+1> - the number of points

  Level: intermediate

.seealso: `MatCreatePatchworkTensor()`, `MatPatchworkTensorSetQuadrature()`
@*/
PetscErrorCode MatPatchworkTensorSetQuadraturePoints(Mat A, PetscInt nq)
{
  Mat_PatchworkTensor *ctx;

  PetscFunctionBegin;
  PetscCall(GetPlexContext(A, &ctx));
  PetscCheck(nq >= ctx->info.degree + 1 && nq <= PetscMin(ctx->info.degree + 3, PW_MAX_Q), PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "%" PetscInt_FMT " quadrature points per direction: use k+1 = %" PetscInt_FMT " to %" PetscInt_FMT, nq, ctx->info.degree + 1, PetscMin(ctx->info.degree + 3, (PetscInt)PW_MAX_Q));
  PetscCheck(ctx->info.quadrature == PATCHWORK_QUADRATURE_GAUSS || nq == ctx->info.degree + 1, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_INCOMP, "The collocated Gauss-Lobatto rule has exactly k+1 points; choose the Gauss rule for %" PetscInt_FMT, nq);
  ctx->info.qpoints = nq;
  PetscCall(Changed(A, ctx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatPatchworkTensorSetGeometryOnTheFly - Whether the CUDA apply of an operator on a general (DMPlex) mesh
  computes the geometric factors of multilinear cells at every quadrature point, from the cell's corners,
  instead of reading them from storage

  Logically Collective

  Input Parameters:
+ A   - the operator
- flg - `PETSC_TRUE` to compute them on the fly wherever possible, `PETSC_FALSE` to store them (default:
        on the fly where possible, except on meshes with hanging nodes at degrees below 4)

  Options Database Key:
. -mat_patchwork_geometry_on_the_fly <true> - the choice

  Notes:
  Stored factors cost 7 doubles per quadrature point in 3D (4 in 2D), which bound the apply by memory
  bandwidth; on the fly the apply reads the cell's 8 corners (and the coefficient values, when they are
  variable) and computes the same factors, with that memory free. On an H100 (bench/bench_plex_kernels.cu,
  3D, k = 3..8) the collocated apply is 1.6-2.0x faster, the Gauss apply 1.0-1.5x with constant and
  0.9-1.3x with variable coefficients. It is used on device vectors when every cell
  is multilinear (the DM's coordinate field has degree 1: vertex coordinates, also on meshes with
  hanging nodes) and the quadrature has at most k+3 points; otherwise, and on the CPU, the factors are
  stored. On meshes with hanging nodes the cells with hanging faces or edges are applied in a launch of
  their own, after the others (which take the plain kernels); their constraint phases cost relatively
  more on the fly (with 30% of the cells hanging, +22-91% over the plain apply against +1-34% stored),
  which below k = 4 made them slower than with stored factors, so there the default stores the factors
  of those cells only. `MatView()` says which is used. The diagonal computes stored factors for its one
  pass and frees them.

  Level: advanced

.seealso: `MatCreatePatchworkTensor()`, `MatPatchworkTensorSetQuadraturePoints()`
@*/
PetscErrorCode MatPatchworkTensorSetGeometryOnTheFly(Mat A, PetscBool flg)
{
  Mat_PatchworkTensor *ctx;

  PetscFunctionBegin;
  PetscCall(GetPlexContext(A, &ctx));
  ctx->plex->geomvalid   = PETSC_FALSE; /* the same operator, perhaps stored otherwise */
  ctx->plex->fly_allowed = flg;
  ctx->plex->fly_forced  = flg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatPatchworkTensorSetCoefficientFunctions - Make the operator alpha*r(x)*M + beta*c(x)*K with
  coefficients given as functions, evaluated at the quadrature points when the operator is set up

  Logically Collective

  Input Parameters:
+ A         - the operator, on a general (DMPlex) mesh
. diffusion - c(x), or NULL for 1
. reaction  - r(x), or NULL for 1
- ctx       - context passed to both functions

  Notes:
  Replaces coefficients given with `MatPatchworkTensorSetCoefficientVecs()`. The values must be
  finite; the operator is positive definite when they are positive.

  Level: intermediate

.seealso: `MatPatchworkTensorSetCoefficientVecs()`, `MatPatchworkTensorSetCoefficients()`
@*/
PetscErrorCode MatPatchworkTensorSetCoefficientFunctions(Mat A, PatchworkCoefficientFn diffusion, PatchworkCoefficientFn reaction, void *fnctx)
{
  Mat_PatchworkTensor *ctx;

  PetscFunctionBegin;
  PetscCall(GetPlexContext(A, &ctx));
  PetscCall(VecDestroy(&ctx->plex->diffusion));
  PetscCall(VecDestroy(&ctx->plex->reaction));
  ctx->plex->diffusion_fn = diffusion;
  ctx->plex->reaction_fn  = reaction;
  ctx->plex->fnctx        = fnctx;
  ctx->info.variable      = (PetscBool)(diffusion || reaction);
  PetscCall(Changed(A, ctx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatPatchworkTensorSetCoefficientVecs - Make the operator alpha*r*M + beta*c*K with coefficients
  given by their values at the quadrature points

  Logically Collective

  Input Parameters:
+ A         - the operator, on a general (DMPlex) mesh
. diffusion - values of c, or NULL for 1
- reaction  - values of r, or NULL for 1

  Notes:
  Each Vec holds, on every rank, one value per quadrature point of the rank's cells, cell by cell,
  in the order of `MatPatchworkTensorGetQuadraturePoints()` (whose coordinates tell where each value
  belongs). The Vecs are referenced and read when the operator is set up again. Replaces coefficient
  functions.

  Level: intermediate

.seealso: `MatPatchworkTensorGetQuadraturePoints()`, `MatPatchworkTensorSetCoefficientFunctions()`
@*/
PetscErrorCode MatPatchworkTensorSetCoefficientVecs(Mat A, Vec diffusion, Vec reaction)
{
  Mat_PatchworkTensor *ctx;

  PetscFunctionBegin;
  PetscCall(GetPlexContext(A, &ctx));
  if (diffusion) PetscCall(PetscObjectReference((PetscObject)diffusion));
  if (reaction) PetscCall(PetscObjectReference((PetscObject)reaction));
  PetscCall(VecDestroy(&ctx->plex->diffusion));
  PetscCall(VecDestroy(&ctx->plex->reaction));
  ctx->plex->diffusion    = diffusion;
  ctx->plex->reaction     = reaction;
  ctx->plex->diffusion_fn = ctx->plex->reaction_fn = NULL;
  ctx->info.variable      = (PetscBool)(diffusion || reaction);
  PetscCall(Changed(A, ctx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatPatchworkTensorGetQuadraturePoints - The coordinates of the operator's quadrature points

  Collective

  Input Parameter:
. A - the operator, on a general (DMPlex) mesh

  Output Parameter:
. X - a new Vec (block size dim, coordinates interlaced) with the points of this rank's cells, cell by
      cell, lexicographic within a cell; destroy it when done

  Level: intermediate

.seealso: `MatPatchworkTensorSetCoefficientVecs()`
@*/
PetscErrorCode MatPatchworkTensorGetQuadraturePoints(Mat A, Vec *X)
{
  Mat_PatchworkTensor  *ctx;
  PatchworkPlexGeomDesc g;
  PetscInt              nqd;
  double               *xq, pts[PW_MAX_Q];
  PetscScalar          *a;

  PetscFunctionBegin;
  PatchworkAssertPointer(X, 2);
  PetscCall(GetPlexContext(A, &ctx));
  PetscCall(FillGeomDesc(ctx, &g, pts));
  nqd = Pow(g.nq, g.dim);
  PetscCall(PetscMalloc1(g.ncells * g.dim * nqd, &xq));
  PatchworkPlexQuadCoordsRef(&g, xq);
  PetscCall(VecCreate(PetscObjectComm((PetscObject)A), X));
  PetscCall(VecSetSizes(*X, g.ncells * nqd * g.dim, PETSC_DETERMINE));
  PetscCall(VecSetBlockSize(*X, g.dim));
  PetscCall(VecSetType(*X, VECSTANDARD));
  PetscCall(VecGetArrayWrite(*X, &a));
  for (PetscInt c = 0; c < g.ncells; c++)
    for (PetscInt q = 0; q < nqd; q++)
      for (PetscInt d = 0; d < g.dim; d++) a[(c * nqd + q) * g.dim + d] = xq[(c * g.dim + d) * nqd + q];
  PetscCall(VecRestoreArrayWrite(*X, &a));
  PetscCall(PetscFree(xq));
  PetscFunctionReturn(PETSC_SUCCESS);
}
