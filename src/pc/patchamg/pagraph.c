/* PCPATCHAMG's graph hierarchy (Fu et al. 2014, section 5.2.1): aggregates by k-MIS, the induced
   graph, patches of aggregates, and each level's positions (patches contiguous, aggregates
   contiguous inside them). On the host with the CPU functions of src/core/amg_graph.c, or on the
   device with their CUDA versions (cuda/amg_graph.cu, cuda/amg_balance.cu), which give the same
   hierarchy bit for bit: only the memory the arrays live in differs. */
#include "paimpl.h"
#include <patchwork/vec_kernel.h>

#if !defined(PATCHWORK_HAVE_CUDA)
  /* never called without CUDA (pa->device is false then: PETSc has no device vectors) */
  #define PW_NO_CUDA(...) 1
  #define PatchworkGraphPartitionCUDA(...)  PW_NO_CUDA()
  #define PatchworkGraphInduceCUDA(...)     PW_NO_CUDA()
  #define PatchworkGraphBalanceCUDA(...)    PW_NO_CUDA()
  #define PatchworkGraphLevelOrderCUDA(...) PW_NO_CUDA()
#endif

/* Arrays of the hierarchy: malloc on the host (PatchworkGraphFree frees the induced graphs),
   cudaMalloc on the device */
static PetscErrorCode SpaceMalloc(PetscBool dev, size_t count, size_t size, void *p)
{
  size_t bytes = (count ? count : 1) * size;

  PetscFunctionBegin;
  *(void **)p = NULL;
  if (dev) {
#if defined(PATCHWORK_HAVE_CUDA)
    PatchworkCallKernel(PatchworkDeviceMalloc(bytes, (void **)p));
#endif
  } else {
    *(void **)p = malloc(bytes);
    PetscCheck(*(void **)p, PETSC_COMM_SELF, PETSC_ERR_MEM, "PCPATCHAMG: out of memory (%zu bytes) for the graph hierarchy", bytes);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SpaceFree(PetscBool dev, void *p)
{
  PetscFunctionBegin;
  if (!*(void **)p) PetscFunctionReturn(PETSC_SUCCESS);
  if (dev) {
#if defined(PATCHWORK_HAVE_CUDA)
    PatchworkCallKernel(PatchworkDeviceFree(*(void **)p));
#endif
  } else free(*(void **)p);
  *(void **)p = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Copies bytes of the hierarchy (on the device when dev) into the host array dst */
static PetscErrorCode SpaceToHost(PetscBool dev, const void *src, size_t bytes, void *dst)
{
  PetscFunctionBegin;
  if (!dev) PetscCall(PetscMemcpy(dst, src, bytes));
#if defined(PATCHWORK_HAVE_CUDA)
  else {
    void *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
    PatchworkCallKernel(PatchworkDeviceCopyToHost(dst, src, bytes, stream));
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A host copy of count ints of the hierarchy (PetscFree it) */
PetscErrorCode PCPatchAMGGraphToHost(PetscBool dev, const int *src, PetscInt count, int **dst)
{
  PetscFunctionBegin;
  PetscCall(PetscMalloc1(PetscMax(count, 1), dst));
  PetscCall(SpaceToHost(dev, src, (size_t)count * sizeof(int), *dst));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Before a gathering: the points of level lc of H (this rank's aggregates of the level before, in
   order, numbered globally from this rank's offset) moved to the ranks that own those rows in the
   gathered layout, ncol of them here, for the next segment's GraphCoordinates() */
PetscErrorCode PCPatchAMGGatherCoordinates(PC pc, const PC_PatchAMGGraph *H, PetscInt lc, PetscInt ncol)
{
  PC_PatchAMG          *pa = (PC_PatchAMG *)pc->data;
  const PatchworkGraph *g  = &H->L[lc].g;
  MPI_Comm              comm;
  PetscInt              nc = g->n, dim = g->dim, cstart, *idx;
  double               *x;
  PetscScalar          *vals;
  const PetscScalar    *ga;
  int                   any = g->coord ? 1 : 0; /* an int: MPIU_BOOL is deprecated since PETSc 3.24 */
  Vec                   v;

  PetscFunctionBegin;
  PetscCall(PetscFree(pa->gathered_coords));
  PetscCall(PetscObjectGetComm((PetscObject)pc, &comm));
  PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_LOR, comm));
  if (!any) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, &dim, 1, MPIU_INT, MPI_MAX, comm)); /* a rank without rows has none */
  PetscCallMPI(MPI_Scan(&nc, &cstart, 1, MPIU_INT, MPI_SUM, comm));
  cstart -= nc;
  PetscCall(PetscMalloc3(PetscMax(nc * dim, 1), &x, PetscMax(nc * dim, 1), &idx, PetscMax(nc * dim, 1), &vals));
  if (g->coord) PetscCall(SpaceToHost(H->dev, g->coord, sizeof(double) * (size_t)(nc * dim), x));
  for (PetscInt i = 0; i < nc * dim; i++) {
    idx[i]  = cstart * dim + i;
    vals[i] = g->coord ? (PetscScalar)x[i] : 0;
  }
  PetscCall(VecCreateMPI(comm, ncol * dim, PETSC_DETERMINE, &v));
  PetscCall(VecSetValues(v, nc * dim, idx, vals, INSERT_VALUES));
  PetscCall(VecAssemblyBegin(v));
  PetscCall(VecAssemblyEnd(v));
  PetscCall(PetscMalloc1(PetscMax(ncol * dim, 1), &pa->gathered_coords));
  PetscCall(VecGetArrayRead(v, &ga));
  for (PetscInt i = 0; i < ncol * dim; i++) pa->gathered_coords[i] = (double)PetscRealPart(ga[i]);
  PetscCall(VecRestoreArrayRead(v, &ga));
  PetscCall(VecDestroy(&v));
  PetscCall(PetscFree3(x, idx, vals));
  pa->gathered_n   = ncol;
  pa->gathered_dim = dim;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The graph of the rank-local diagonal block of A: its pattern, or with theta > 0 its strong
   couplings only (PatchworkCSRStrong). On the device the pattern borrows the matrix's own CSR index
   arrays (int by construction; an aijcusparse matrix's or those of a matrix over device CSR
   arrays), the strong graph is built there; on the host both are int copies. */
static PetscErrorCode GraphFromMatrix(PC_PatchAMGGraph *H, Mat A, PetscReal theta)
{
  Mat       Ad;
  PetscBool mpi;
  int       err = 0;

  PetscFunctionBegin;
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)A, MATMPIAIJ, &mpi));
  if (mpi) PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, NULL, NULL));
  else Ad = A;
  PetscCall(MatGetLocalSize(A, &H->n0, NULL));
  PetscCheck(H->n0 < INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "PCPATCHAMG: more than 2^31 rows on one rank");
  H->Ad = Ad;
  if (H->dev) {
#if defined(PATCHWORK_HAVE_CUDA)
    PatchworkCSR csr;
    void        *stream;

    PetscCall(PCPatchAMGMatGetDeviceArrays(Ad, &csr));
    if (theta > 0) {
      PetscCall(PatchworkGetDeviceStream(&stream));
      err = PatchworkGraphStrengthCUDA(&csr, (double)theta, &H->L[0].g, stream);
      PetscCall(PCPatchAMGMatRestoreDeviceArrays(Ad, &csr));
    } else {
      H->L[0].g.n   = csr.n;
      H->L[0].g.ptr = csr.ptr;
      H->L[0].g.adj = csr.col;
      H->csr        = csr;
      H->borrowed   = PETSC_TRUE;
    }
#endif
  } else {
    PetscInt           n;
    const PetscInt    *ia, *ja;
    const PetscScalar *va = NULL;
    PetscBool          done;
    int               *ptr, *adj;

    PetscCall(MatGetRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
    PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "PCPATCHAMG could not read the matrix's rows");
    PetscCheck((size_t)ia[n] < (size_t)INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "PCPATCHAMG: more than 2^31 nonzeros in one rank's diagonal block");
    PetscCall(SpaceMalloc(PETSC_FALSE, (size_t)n + 1, sizeof(int), &ptr));
    PetscCall(SpaceMalloc(PETSC_FALSE, (size_t)ia[n], sizeof(int), &adj));
    for (PetscInt i = 0; i <= n; i++) ptr[i] = (int)ia[i];
    for (PetscInt j = 0; j < ia[n]; j++) adj[j] = (int)ja[j];
    H->L[0].g.n = (int)n; /* before the restore, which may reset n */
    PetscCall(MatRestoreRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
    H->L[0].g.ptr = ptr;
    H->L[0].g.adj = adj;
    if (theta > 0) {
      PatchworkCSR csr = {H->L[0].g.n, ptr, adj, NULL};

      PetscCall(MatSeqAIJGetArrayRead(Ad, &va));
      csr.val = (const double *)va;
      err     = PatchworkGraphStrength(&csr, (double)theta, &H->L[0].g);
      PetscCall(MatSeqAIJRestoreArrayRead(Ad, &va));
      PetscCall(SpaceFree(PETSC_FALSE, &ptr));
      PetscCall(SpaceFree(PETSC_FALSE, &adj));
    }
  }
  PetscCheck(!err, PETSC_COMM_SELF, PETSC_ERR_LIB, "PCPATCHAMG: the strong graph (threshold %g) failed (error %d)", (double)theta, err);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A segment's first level's points for the geometry-informed aggregation, where the level's vectors
   live. Level 0: PCSetCoordinates()'s points, else the DM's coordinates when they have one point per
   local row (a P1 or Q1 DM without constrained vertices), else none (the aggregation is algebraic).
   A gathered level: the centroids PCPatchAMGGatherCoordinates() moved with its rows, if any. */
static PetscErrorCode GraphCoordinates(PC pc, PetscInt first, PC_PatchAMGGraph *H)
{
  PC_PatchAMG   *pa = (PC_PatchAMG *)pc->data;
  PatchworkGraph *g  = &H->L[0].g;
  const double  *x  = NULL;
  double        *copy = NULL, *c;
  PetscInt       dim = 0;

  PetscFunctionBegin;
  if (first > 0) {
    if (!pa->gathered_coords) PetscFunctionReturn(PETSC_SUCCESS);
    PetscCheck(pa->gathered_n == H->n0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCPATCHAMG: %" PetscInt_FMT " gathered points for %" PetscInt_FMT " rows", pa->gathered_n, H->n0);
    x   = pa->gathered_coords;
    dim = pa->gathered_dim;
  } else {
    pa->coord_source = NULL;
    pa->coord_levels = 0;
    if (!pa->use_coords) PetscFunctionReturn(PETSC_SUCCESS);
    if (pa->coords) {
      PetscCheck(pa->ncoords == H->n0, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "PCPATCHAMG: PCSetCoordinates() gave %" PetscInt_FMT " points on this rank, but the matrix has %" PetscInt_FMT " local rows (one point per row)", pa->ncoords, H->n0);
      x                = pa->coords;
      dim              = pa->coord_dim;
      pa->coord_source = "PCSetCoordinates()";
    } else if (pc->dm) {
      Vec      X;
      PetscInt nx, cdim;

      PetscCall(DMGetCoordinateDim(pc->dm, &cdim));
      PetscCall(DMGetCoordinates(pc->dm, &X));
      if (X) PetscCall(VecGetLocalSize(X, &nx));
      if (X && cdim >= 1 && cdim <= 3 && nx == cdim * H->n0) {
        const PetscScalar *xa;

        PetscCall(PetscMalloc1(nx, &copy));
        PetscCall(VecGetArrayRead(X, &xa));
        for (PetscInt i = 0; i < nx; i++) copy[i] = (double)PetscRealPart(xa[i]);
        PetscCall(VecRestoreArrayRead(X, &xa));
        x                = copy;
        dim              = cdim;
        pa->coord_source = "the DM";
      }
    }
  }
  if (!x) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SpaceMalloc(H->dev, (size_t)dim * (size_t)H->n0, sizeof(double), &c));
  if (!H->dev) PetscCall(PetscArraycpy(c, x, dim * H->n0));
#if defined(PATCHWORK_HAVE_CUDA)
  else {
    void *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
    PatchworkCallKernel(PatchworkDeviceCopyToDevice(c, x, sizeof(double) * (size_t)dim * (size_t)H->n0, stream));
  }
#endif
  PetscCall(PetscFree(copy));
  g->dim   = (int)dim;
  g->coord = c;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The growth of the graph's neighbourhoods, sum |S_3| / sum |S_2| over up to 64 rows of this rank's
   diagonal block, at golden-ratio spacing (evenly spaced rows of a grid alias: fd7 40^3's all lay on
   one face), S_r the vertices at graph distance exactly r, both sums over all ranks. A ring grows
   like r^(d-1) on a d-dimensional mesh, so the ratio tends to (3/2)^(d-1); measured (one rank): 2D
   1.35-1.49 (ex2 20^2 and 200^2 1.42, 1.49; P1 triangles, annulus and tests/dll/neumann, 1.35-1.49),
   3D 1.65-2.23 (the lowest on the smallest meshes, whose boundaries cut the rings: q1 and P1 tetrahedra
   on 8^3 cells 1.65, fd7 8^3 1.82, fd7 40^3 2.06, P1 tetrahedra of examples/tets 2.17-2.23). *growth =
   -1 when the matrix has no host pattern (a matrix over device CSR arrays) or no ring of radius 2. */
static PetscErrorCode GraphGrowth(Mat A, PetscReal *growth)
{
  Mat             Ad;
  PetscBool       mpi, done = PETSC_FALSE, shell;
  PetscInt        n = 0, *mark = NULL, *queue = NULL;
  const PetscInt *ia, *ja;
  PetscReal       ring[2] = {0, 0};

  PetscFunctionBegin;
  *growth = -1;
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSHELL, &shell));
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)A, MATMPIAIJ, &mpi));
  if (mpi) PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, NULL, NULL));
  else Ad = A;
  if (!shell) PetscCall(MatGetRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  if (done && n > 0) {
    const PetscInt ns = PetscMin(n, 64);

    PetscCall(PetscMalloc2(n, &mark, n, &queue));
    for (PetscInt i = 0; i < n; i++) mark[i] = -1;
    for (PetscInt s = 0; s < ns; s++) {
      const PetscReal f = 0.6180339887498949 * (PetscReal)s - PetscFloorReal(0.6180339887498949 * (PetscReal)s);
      const PetscInt  v = PetscMin(n - 1, (PetscInt)(f * (PetscReal)n)); /* golden-ratio spacing: no alias with a grid's rows */
      PetscInt       head = 0, tail = 0, start[4];

      /* breadth-first to distance 3: queue[start[r] .. start[r + 1]) is the ring at distance r */
      mark[v]        = s;
      queue[tail++]  = v;
      start[0]       = 0;
      for (PetscInt r = 0; r < 3; r++) {
        start[r + 1] = tail;
        for (; head < start[r + 1]; head++)
          for (PetscInt j = ia[queue[head]]; j < ia[queue[head] + 1]; j++)
            if (mark[ja[j]] != s) {
              mark[ja[j]]    = s;
              queue[tail++] = ja[j];
            }
      }
      ring[0] += (PetscReal)(start[3] - start[2]);
      ring[1] += (PetscReal)(tail - start[3]);
    }
    PetscCall(PetscFree2(mark, queue));
  }
  if (!shell) PetscCall(MatRestoreRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, ring, 2, MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)A)));
  if (ring[0] > 0) *growth = ring[1] / ring[0];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The k and the minimum aggregate size of the aggregation: the user's, else the defaults of the
   problem's dimension (-pc_patchamg_dim; else the dimension of PCSetCoordinates()'s points or of the
   PC's DM; else inferred from the matrix graph by GraphGrowth(): 2D below 1.57, between the measured
   2D and 3D ratios; without a host pattern 3D's, the defaults before dimensions were told apart).

   Why the dimension matters: a 2-MIS root's aggregate is its distance-1 neighbourhood and part of the
   ring beyond, about 7 rows of a 5-point grid against 11 of the 7-point stencil (fd7 40^3; 25 of P1
   tetrahedra). The paper's minimum of 9 rows then dissolves most 2D aggregates, and their rows regrow
   into the neighbours: ex2's 200^2 5-point Laplacian coarsened 40000 -> 1096 (aggregates of 9..96
   rows, 36 on average), which needed 19 CG iterations against GAMG's 9 (whose aggregates have 6.8
   rows). In 2D the aggregates grow around a 1-MIS and only those under 4 rows are dissolved: 8.5 rows
   on average on ex2 (9 iterations), 8.7 on the P1 annulus (31 -> 24 iterations, GAMG 20; a 2-MIS with
   minimum 4 gave it 11.8 rows and 28). 3D keeps k = 2 and 9 rows, and with them every 3D hierarchy. */
PetscErrorCode PCPatchAMGAggregationDefaults(PC pc, Mat A)
{
  PC_PatchAMG *pa = (PC_PatchAMG *)pc->data;
  PetscInt     dim = 0;

  PetscFunctionBegin;
  pa->agg_growth     = -1;
  pa->agg_dim_source = NULL;
  if (pa->dim) {
    dim                = pa->dim;
    pa->agg_dim_source = "-pc_patchamg_dim or PCPatchAMGSetDimension()";
  } else if (pa->coords && pa->coord_dim >= 2) {
    dim                = pa->coord_dim;
    pa->agg_dim_source = "PCSetCoordinates()";
  } else if (pc->dm) {
    PetscCall(DMGetDimension(pc->dm, &dim));
    if (dim >= 2 && dim <= 3) pa->agg_dim_source = "the DM";
    else dim = 0;
  }
  if (!dim) {
    PetscCall(GraphGrowth(A, &pa->agg_growth));
    if (pa->agg_growth > 0) {
      dim                = pa->agg_growth < 1.57 ? 2 : 3;
      pa->agg_dim_source = "the matrix graph";
    } else {
      dim                = 3;
      pa->agg_dim_source = "none known (3D's)";
    }
  }
  pa->agg_dim = dim;
  pa->agg_k   = pa->k_set ? pa->k : (dim == 2 ? 1 : 2);
  pa->agg_min = pa->min_agg_set ? pa->min_agg : (dim == 2 ? 4 : 9);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Gives back level 0's graph when it is the matrix's own (it must not outlive the hierarchy's construction) */
static PetscErrorCode ReleaseMatrixGraph(PC_PatchAMGGraph *H)
{
  PetscFunctionBegin;
  if (H->borrowed) {
    PetscCall(PCPatchAMGMatRestoreDeviceArrays(H->Ad, &H->csr));
    H->L[0].g.ptr = H->L[0].g.adj = NULL;
    H->borrowed                   = PETSC_FALSE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

#define PW_GRAPH_CALL(H, call, cuda_args, host_args, what, level) \
  do { \
    int err_; \
    if ((H)->dev) err_ = call##CUDA cuda_args; \
    else err_ = call host_args; \
    PetscCheck(!err_, PETSC_COMM_SELF, PETSC_ERR_LIB, "PCPATCHAMG: %s of level %" PetscInt_FMT " failed (error %d)", what, (PetscInt)(level), err_); \
  } while (0)

/* Aggregate, induce, partition the induced graph into patches, from the matrix A of level first,
   until the coarse size (global) or the level limit is reached or coarsening stalls, or until a
   level has fewer rows per rank than pa->redistribute on several ranks (H->redistribute:
   the caller gathers it onto fewer ranks and builds the graphs again from its matrix); then the
   positions of every level but the last */
PetscErrorCode PCPatchAMGGraphBuild(PC pc, Mat A, PetscInt first, PC_PatchAMGGraph *H)
{
  PC_PatchAMG *pa = (PC_PatchAMG *)pc->data;
  MPI_Comm     comm;
  void        *stream = NULL;
  PetscInt     maxl   = (pa->max_levels > 0 ? pa->max_levels : 30) - first;

  PetscFunctionBegin;
  PetscCall(PetscObjectGetComm((PetscObject)pc, &comm));
  PetscCall(PetscMemzero(H, sizeof(*H)));
  H->dev = pa->device;
  if (H->dev) PetscCall(PatchworkGetDeviceStream(&stream));
  PetscCall(PetscCalloc1(maxl, &H->L));
  PetscCall(GraphFromMatrix(H, A, pa->threshold));
  PetscCall(GraphCoordinates(pc, first, H));
  for (;;) {
    PC_PatchAMGGraphLevel *L = &H->L[H->nl++];
    PatchworkGraph         unweighted = L->g;
    PetscInt               n = L->g.n, N, Nagg, nagg, l = H->nl - 1, sums[2], mine[2] = {n, n > 0};
    int                    min_patch = (int)PetscMax(1, pa->patch_size / 4);

    PetscCallMPI(MPIU_Allreduce(mine, sums, 2, MPIU_INT, MPI_SUM, comm));
    N = sums[0];
    if (H->nl >= maxl || N <= pa->coarse_size) break;
    if (H->nl > 1 && pa->redistribute > 0 && sums[1] > 1 && (PetscInt64)N < (PetscInt64)pa->redistribute * sums[1]) {
      H->redistribute = PETSC_TRUE;
      break;
    }
    /* aggregates of the level's vertices: sizes count vertices, not the weights of finer levels */
    unweighted.weight = NULL;
    PetscCall(SpaceMalloc(H->dev, (size_t)n, sizeof(int), &L->agg));
    PW_GRAPH_CALL(H, PatchworkGraphPartition, (&unweighted, (int)pa->agg_k, (unsigned)(pa->seed + H->nl), (int)pa->agg_min, L->agg, &L->naggs, stream), (&unweighted, (int)pa->agg_k, (unsigned)(pa->seed + H->nl), (int)pa->agg_min, L->agg, &L->naggs), "aggregation", l);
    nagg = L->naggs;
    PetscCallMPI(MPIU_Allreduce(&nagg, &Nagg, 1, MPIU_INT, MPI_SUM, comm));
    if (Nagg == 0 || (PetscReal)Nagg > 0.9 * (PetscReal)N) { /* coarsening stalled: this is the coarsest level */
      PetscCall(SpaceFree(H->dev, &L->agg));
      L->naggs = 0;
      break;
    }
    if (L->g.coord) pa->coord_levels++; /* an aggregation level that used coordinates */
    /* the next level's graph (weights: rows of this level per aggregate), then the patches of this
       level: a partition of that graph (k = 1), capped in weight, so patches never cut aggregates */
    PW_GRAPH_CALL(H, PatchworkGraphInduce, (&unweighted, L->agg, L->naggs, &H->L[H->nl].g, stream), (&unweighted, L->agg, L->naggs, &H->L[H->nl].g), "the induced graph", l);
    PetscCall(SpaceMalloc(H->dev, (size_t)L->naggs, sizeof(int), &L->patch));
    PW_GRAPH_CALL(H, PatchworkGraphPartition, (&H->L[H->nl].g, 1, (unsigned)(pa->seed + 1000 + H->nl), min_patch, L->patch, &L->npatch, stream), (&H->L[H->nl].g, 1, (unsigned)(pa->seed + 1000 + H->nl), min_patch, L->patch, &L->npatch), "patch partition", l);
    PW_GRAPH_CALL(H, PatchworkGraphBalance, (&H->L[H->nl].g, L->npatch, (int)pa->patch_size, 50, L->patch, stream), (&H->L[H->nl].g, L->npatch, (int)pa->patch_size, 50, L->patch), "patch balancing", l);
  }
  for (PetscInt l = 0; l < H->nl - 1; l++) {
    PC_PatchAMGGraphLevel *L = &H->L[l];

    PetscCall(SpaceMalloc(H->dev, (size_t)L->g.n, sizeof(int), &L->order));
    PetscCall(SpaceMalloc(H->dev, (size_t)L->g.n, sizeof(int), &L->pos));
    PetscCall(SpaceMalloc(H->dev, (size_t)L->npatch + 1, sizeof(int), &L->patch_ptr));
    PW_GRAPH_CALL(H, PatchworkGraphLevelOrder, (L->g.n, L->agg, L->naggs, L->patch, L->npatch, L->order, L->pos, L->patch_ptr, stream), (L->g.n, L->agg, L->naggs, L->patch, L->npatch, L->order, L->pos, L->patch_ptr), "ordering", l);
  }
  PetscCall(ReleaseMatrixGraph(H));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCPatchAMGGraphDestroy(PC_PatchAMGGraph *H)
{
  PetscFunctionBegin;
  PetscCall(ReleaseMatrixGraph(H));
  for (PetscInt l = 0; l < H->nl; l++) {
    PC_PatchAMGGraphLevel *L = &H->L[l];

    if (l == 0) { /* the copy of the matrix's graph (host); the device one was borrowed */
      PetscCall(SpaceFree(H->dev, &L->g.ptr));
      PetscCall(SpaceFree(H->dev, &L->g.adj));
      PetscCall(SpaceFree(H->dev, &L->g.coord));
    } else if (H->dev) {
#if defined(PATCHWORK_HAVE_CUDA)
      PatchworkGraphFreeCUDA(&L->g);
#endif
    } else PatchworkGraphFree(&L->g);
    PetscCall(SpaceFree(H->dev, &L->agg));
    PetscCall(SpaceFree(H->dev, &L->patch));
    PetscCall(SpaceFree(H->dev, &L->order));
    PetscCall(SpaceFree(H->dev, &L->pos));
    PetscCall(SpaceFree(H->dev, &L->patch_ptr));
  }
  PetscCall(PetscFree(H->L));
  H->nl = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}
