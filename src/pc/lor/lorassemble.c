/* PCLOR assembly (Pazner et al. 2023, section 3): the discretization read from the operator or the
   DM, the matrix pattern in COO form (built once per grid), and the values. The values are computed
   by the kernels of lor_kernel.h, A1 macro-element matrices, A2 rank-local rows without duplicates,
   A4 Dirichlet elimination on those rows, and placed by MatSetValuesCOO() (A3: every row is the
   rank's own, so no entry travels), on the device when the matrix lives there. On one rank the
   pattern is the matrix's CSR, computed from the grid (by the kernels for a device matrix), and A2,
   A4 and A3 are one pass (GatherCSR) into its value array (PETSc's COO setup sorts on the host and
   keeps two 8-byte maps per entry: 3 s and 0.9 GB at 8M rows; the rows x slots array and the map of
   the separate steps cost 650 bytes of traffic and 440 bytes of memory per row in 3D). */
#include "lorimpl.h"
#include <patchwork/basis1d.h>
#include <patchwork/vec_kernel.h>
#include "../../core/coreimpl.h" /* BoxIndex() */

/* The node grid must be a DMDA a rank can assemble its rows from: one dof, box stencil at least k
   wide (a row's cells reach k nodes past the owned ones), k*N+1 nodes per direction. */
static PetscErrorCode CheckGrid(DM dm, PetscInt k, PetscInt cells[3], PetscInt *dim)
{
  MPI_Comm         comm = PetscObjectComm((PetscObject)dm);
  PetscBool        isda;
  PetscInt         M[3], dof, s;
  DMDAStencilType  st;
  DMBoundaryType   bx, by, bz;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)dm, DMDA, &isda));
  PetscCheck(isda, comm, PETSC_ERR_SUP, "PCLOR needs a DMDA node grid, not a DM of type %s", ((PetscObject)dm)->type_name);
  PetscCall(DMDAGetInfo(dm, dim, &M[0], &M[1], &M[2], NULL, NULL, NULL, &dof, &s, &bx, &by, &bz, &st));
  PetscCheck(*dim == 2 || *dim == 3, comm, PETSC_ERR_SUP, "PCLOR supports 2D and 3D grids, not %" PetscInt_FMT "D", *dim);
  PetscCheck(dof == 1, comm, PETSC_ERR_SUP, "PCLOR supports scalar fields (1 dof per node), not %" PetscInt_FMT, dof);
  PetscCheck(st == DMDA_STENCIL_BOX, comm, PETSC_ERR_ARG_WRONG, "PCLOR needs a DMDA with DMDA_STENCIL_BOX: cells reach diagonal neighbours");
  PetscCheck(s >= k, comm, PETSC_ERR_ARG_WRONG, "DMDA stencil width %" PetscInt_FMT " is smaller than the degree %" PetscInt_FMT ": a rank cannot see all nodes of its cells", s, k);
  PetscCheck(bx == DM_BOUNDARY_NONE && by == DM_BOUNDARY_NONE && bz == DM_BOUNDARY_NONE, comm, PETSC_ERR_SUP, "PCLOR supports non-periodic DMDAs only");
  for (PetscInt d = 0; d < 3; d++) {
    cells[d] = 1;
    if (d >= *dim) continue;
    PetscCheck(M[d] >= k + 1 && (M[d] - 1) % k == 0, comm, PETSC_ERR_ARG_WRONG, "DMDA has %" PetscInt_FMT " nodes in direction %" PetscInt_FMT ", not k*N+1 for degree k = %" PetscInt_FMT, M[d], d, k);
    cells[d] = (M[d] - 1) / k;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCLORSetUpDiscretization(PC pc)
{
  PC_LOR          *lor  = (PC_LOR *)pc->data;
  MPI_Comm         comm = PetscObjectComm((PetscObject)pc);
  PatchworkLORDesc *d   = &lor->desc;
  PetscBool        istensor;
  DM               dm;
  PetscInt         k, dim, cells[3], xs[3], xm[3], gs[3], gm[3];

  PetscFunctionBegin;
  PetscCheck(pc->pmat, comm, PETSC_ERR_ARG_WRONGSTATE, "PCLOR has no operator: call KSPSetOperators() or PCSetOperators() first");
  PetscCall(MatIsPatchworkTensor(pc->pmat, &istensor));
  lor->from_tensor = istensor;
  lor->plex        = PETSC_FALSE;
  if (istensor) {
    PetscCall(MatPatchworkTensorGetInfo(pc->pmat, &lor->info));
    lor->plex = (PetscBool)(lor->info.mesh == PATCHWORK_MESH_GENERAL); /* a DMPlex: lorplex.c assembles cell by cell */
    if (!lor->plex) PetscCall(PatchworkTensorRequireCartesian(&lor->info, comm, "PCLOR"));
  } else {
    PetscCall(PCGetDM(pc, &dm));
    PetscCheck(dm, comm, PETSC_ERR_ARG_WRONGSTATE, "PCLOR needs to know the discretization: use an operator from MatCreatePatchworkTensor(), or give the Q_k node grid with PCSetDM() (a DMDA) and the degree with PCLORSetDegree() or -pc_lor_degree");
    PetscCheck(lor->degree_req > 0, comm, PETSC_ERR_ARG_WRONGSTATE, "PCLOR with a DM but no Patchwork operator needs the degree: PCLORSetDegree() or -pc_lor_degree");
    PetscCall(PetscMemzero(&lor->info, sizeof(lor->info)));
    lor->info.dm         = dm;
    lor->info.degree     = lor->degree_req;
    lor->info.alpha      = lor->alpha_req;
    lor->info.beta       = lor->beta_req;
    lor->info.bc         = lor->bc_req;
    lor->info.quadrature = PATCHWORK_QUADRATURE_GAUSSLOBATTO;
  }
  k = lor->info.degree;
  PetscCheck(k >= 1 && k <= PW_MAX_DEGREE, comm, PETSC_ERR_ARG_OUTOFRANGE, "PCLOR supports degrees 1..%d, not %" PetscInt_FMT, PW_MAX_DEGREE, k);
  PetscCheck(lor->info.alpha >= 0 && lor->info.beta > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "PCLOR needs alpha >= 0 and beta > 0 (alpha*M + beta*K), got %g and %g", (double)lor->info.alpha, (double)lor->info.beta);
  if (lor->dm != lor->info.dm) {
    PetscCall(PetscObjectReference((PetscObject)lor->info.dm));
    PetscCall(DMDestroy(&lor->dm));
    lor->dm = lor->info.dm;
  }
  if (lor->plex) { /* no grid descriptor: what PCView and PCSetUp compare */
    PetscCall(PetscMemzero(d, sizeof(*d)));
    d->dim         = (int)lor->info.dim;
    d->degree      = (int)k;
    d->dirichlet   = lor->info.bc == PATCHWORK_BC_DIRICHLET;
    d->vertex_rule = lor->quadrature == PATCHWORK_QUADRATURE_GAUSSLOBATTO;
    lor->axis_only = PETSC_FALSE;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(CheckGrid(lor->info.dm, k, cells, &dim));
  if (!istensor) {
    lor->info.dim = dim;
    for (PetscInt i = 0; i < 3; i++) lor->info.cells[i] = cells[i];
  }

  PetscCall(DMDAGetCorners(lor->dm, &xs[0], &xs[1], &xs[2], &xm[0], &xm[1], &xm[2]));
  PetscCall(DMDAGetGhostCorners(lor->dm, &gs[0], &gs[1], &gs[2], &gm[0], &gm[1], &gm[2]));
  PetscCall(PetscMemzero(d, sizeof(*d)));
  d->dim       = (int)dim;
  d->degree    = (int)k;
  d->dirichlet = lor->info.bc == PATCHWORK_BC_DIRICHLET;
  d->alpha     = (double)lor->info.alpha;
  d->beta      = (double)lor->info.beta;
  d->vertex_rule = lor->quadrature == PATCHWORK_QUADRATURE_GAUSSLOBATTO;
  /* the operator's cells are boxes: with the vertex rule, couplings off the axes vanish exactly */
  lor->axis_only = (PetscBool)(lor->from_tensor && d->vertex_rule);
  for (PetscInt i = 0; i < 3; i++) {
    if (i < dim) {
      const PetscInt xe = xs[i] + xm[i];
      d->nodes[i]       = (int)(k * cells[i] + 1);
      /* every cell with an owned node: the first contains node xs, the last node xe-1 */
      d->cell_start[i] = (int)PetscMax(0, (xs[i] + k - 1) / k - 1);
      d->cell_end[i]   = (int)PetscMin(cells[i], (xe - 1) / k + 1);
      PetscCheck(k * d->cell_start[i] >= gs[i] && k * d->cell_end[i] < gs[i] + gm[i], PETSC_COMM_SELF, PETSC_ERR_PLIB, "Ghost region too narrow for the cells of this rank");
    } else {
      d->nodes[i]      = 1;
      d->cell_start[i] = 0;
      d->cell_end[i]   = 1;
    }
    d->coord_start[i] = (int)(i < dim ? gs[i] : 0);
    d->coord_size[i]  = (int)(i < dim ? gm[i] : 1);
    d->row_start[i]   = (int)(i < dim ? xs[i] : 0);
    d->row_size[i]    = (int)(i < dim ? xm[i] : 1);
  }
  lor->ncoo = (PetscCount)PatchworkLORRowCount(d) * PatchworkLORSlots(d);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FreeKeep(PC_LOR *lor)
{
  PetscFunctionBegin;
#if defined(PATCHWORK_HAVE_CUDA)
  if (lor->device) {
    PatchworkCallKernel(PatchworkDeviceFree(lor->keep));
    PatchworkCallKernel(PatchworkDeviceFree(lor->submask));
  } else
#endif
  {
    PetscCall(PetscFree(lor->keep));
    PetscCall(PetscFree(lor->submask));
  }
  lor->keep    = NULL;
  lor->submask = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCLORDestroyPattern(PC pc)
{
  PC_LOR *lor = (PC_LOR *)pc->data;

  PetscFunctionBegin;
  PetscCall(FreeKeep(lor));
  PetscCall(MatDestroy(&lor->A));
  lor->devcsr = PETSC_FALSE;
  lor->split  = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The LOR matrix with the operator's layout, not yet preallocated: AIJCUSPARSE when the operator's
   vectors live on the device, options prefix lor_ */
static PetscErrorCode CreateMatrix(PC pc)
{
  PC_LOR     *lor   = (PC_LOR *)pc->data;
  MatType     mtype = MATAIJ;
  PetscInt    m, N;
  PetscBool   vecdev;
  const char *prefix;
  char        lprefix[256];

  PetscFunctionBegin;
  PetscCall(MatGetLocalSize(pc->pmat, &m, NULL));
  PetscCall(MatGetSize(pc->pmat, &N, NULL));
  PetscCall(MatCreate(PetscObjectComm((PetscObject)pc), &lor->A));
  PetscCall(MatSetSizes(lor->A, m, m, N, N));
  PetscCall(PatchworkMatVectorsOnDevice(pc->pmat, &vecdev));
#if defined(PATCHWORK_HAVE_CUDA)
  if (vecdev) mtype = MATAIJCUSPARSE;
#endif
  PetscCall(MatSetType(lor->A, mtype));
  PetscCall(PCGetOptionsPrefix(pc, &prefix));
  PetscCall(PetscSNPrintf(lprefix, sizeof(lprefix), "%slor_", prefix ? prefix : ""));
  PetscCall(MatSetOptionsPrefix(lor->A, lprefix));
  PetscCall(MatSetFromOptions(lor->A));
  lor->device = PETSC_FALSE;
#if defined(PATCHWORK_HAVE_CUDA)
  PetscCall(PetscObjectTypeCompareAny((PetscObject)lor->A, &lor->device, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE, ""));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After the preallocation: symmetric, and definite with a mass term or Dirichlet conditions (both
   checked in setup) */
static PetscErrorCode SetSymmetry(PC_LOR *lor)
{
  PetscFunctionBegin;
  PetscCall(MatSetOption(lor->A, MAT_SYMMETRIC, PETSC_TRUE));
  if (lor->info.alpha > 0 || lor->info.bc == PATCHWORK_BC_DIRICHLET) PetscCall(MatSetOption(lor->A, MAT_SPD, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Row lengths for a SELL matrix before its COO pattern. PETSc has no COO preallocation of SELL's own
   (3.18 to 3.26 at least): MatSetPreallocationCOO() falls back to MatPreallocatorPreallocate(), whose
   MatXAIJSetPreallocation() preallocates AIJ, BAIJ, SBAIJ, IS and HYPRE but not SELL, so SELL keeps its
   default (5 entries per row) and the zero fill that follows stops at "New nonzero ... caused a
   malloc". rowlen: exact lengths of this rank's rows when the caller has them (one rank, no
   off-diagonal block), else they are counted by an AIJ matrix with PETSc's own COO preallocation,
   which sends off-rank entries and merges repeated ones. Other types are left to
   MatSetPreallocationCOO(). */
static PetscErrorCode PreallocateSELL(Mat A, PetscCount n, const PetscInt ci[], const PetscInt cj[], const PetscInt rowlen[])
{
  void (*coo)(void) = NULL, (*seq)(void) = NULL, (*mpi)(void) = NULL;
  PetscInt        m, N, *dnz, *onz, *ti, *tj;
  Mat             C, Ad, Ao;
  const PetscInt *ia, *ja;
  PetscBool       done, isseq;

  PetscFunctionBegin;
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatSetPreallocationCOO_C", &coo));
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatSeqSELLSetPreallocation_C", &seq));
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatMPISELLSetPreallocation_C", &mpi));
  if (coo || (!seq && !mpi)) PetscFunctionReturn(PETSC_SUCCESS); /* not SELL, or a PETSc whose SELL has COO of its own */
  if (rowlen) {
    PetscCall(MatSeqSELLSetPreallocation(A, 0, rowlen));
    PetscCall(MatMPISELLSetPreallocation(A, 0, rowlen, 0, NULL));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatGetLocalSize(A, &m, NULL));
  PetscCall(MatGetSize(A, &N, NULL));
  PetscCall(MatCreate(PetscObjectComm((PetscObject)A), &C));
  PetscCall(MatSetSizes(C, m, m, N, N));
  PetscCall(MatSetType(C, MATAIJ));
  PetscCall(PetscMalloc2(n, &ti, n, &tj)); /* MatSetPreallocationCOO() may change the indices it gets */
  PetscCall(PetscArraycpy(ti, ci, n));
  PetscCall(PetscArraycpy(tj, cj, n));
  PetscCall(MatSetPreallocationCOO(C, n, ti, tj));
  PetscCall(PetscFree2(ti, tj));
  PetscCall(PetscObjectTypeCompare((PetscObject)C, MATSEQAIJ, &isseq));
  if (isseq) {
    Ad = C;
    Ao = NULL;
  } else PetscCall(MatMPIAIJGetSeqAIJ(C, &Ad, &Ao, NULL));
  PetscCall(PetscCalloc2(m, &dnz, m, &onz));
  for (PetscInt b = 0; b < 2; b++) {
    Mat       B = b ? Ao : Ad;
    PetscInt *len = b ? onz : dnz, mb;

    if (!B) continue;
    PetscCall(MatGetRowIJ(B, 0, PETSC_FALSE, PETSC_FALSE, &mb, &ia, &ja, &done));
    PetscCheck(done && mb == m, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCLOR could not read the row lengths of its COO pattern");
    for (PetscInt i = 0; i < m; i++) len[i] = ia[i + 1] - ia[i];
    PetscCall(MatRestoreRowIJ(B, 0, PETSC_FALSE, PETSC_FALSE, &mb, &ia, &ja, &done));
  }
  PetscCall(MatDestroy(&C));
  PetscCall(MatSeqSELLSetPreallocation(A, 0, dnz));
  PetscCall(MatMPISELLSetPreallocation(A, 0, dnz, 0, onz));
  PetscCall(PetscFree2(dnz, onz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The COO pattern (ci, cj) of the created matrix; offproc: some entries belong to rows of other ranks
   (PETSc sends them); rowlen: see PreallocateSELL() */
static PetscErrorCode PreallocateCOO(PC_LOR *lor, PetscCount n, PetscInt ci[], PetscInt cj[], PetscBool offproc, const PetscInt rowlen[])
{
  PetscFunctionBegin;
  lor->csr = PETSC_FALSE;
  PetscCall(PreallocateSELL(lor->A, n, ci, cj, rowlen));
  if (!offproc) PetscCall(MatSetOption(lor->A, MAT_NO_OFF_PROC_ENTRIES, PETSC_TRUE));
  PetscCall(MatSetPreallocationCOO(lor->A, n, ci, cj));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The LOR matrix with the COO pattern (ci, cj), see PreallocateCOO() */
PetscErrorCode PCLORCreateMatrixCOO(PC pc, PetscCount n, PetscInt ci[], PetscInt cj[], PetscBool offproc)
{
  PC_LOR *lor = (PC_LOR *)pc->data;

  PetscFunctionBegin;
  PetscCall(CreateMatrix(pc));
  PetscCall(PreallocateCOO(lor, n, ci, cj, offproc, NULL));
  PetscCall(SetSymmetry(lor));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The matrix of a CSR pattern (rows of this rank, columns ascending within each row): preallocated
   by row lengths, its column indices copied in whole (no per-row insertion), and on the device the
   copy of the structure that the values are written into. A matrix type other than
   (Seq)AIJ(CUSPARSE) (lor->csr false, as CreatePatternWhole() found), e.g. -lor_mat_type sell, gets
   the same entries as a COO pattern instead. The values stay unset until PCLORAssemble(). */
static PetscErrorCode PreallocateCSR(PC pc, PetscInt nrow, const long long rowptr[], PetscInt cj[])
{
  PC_LOR   *lor = (PC_LOR *)pc->data;
  PetscInt *nnz;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(nrow, &nnz));
  for (PetscInt r = 0; r < nrow; r++) nnz[r] = (PetscInt)(rowptr[r + 1] - rowptr[r]);
  if (!lor->csr) {
    PetscInt *ci;

    PetscCall(PetscMalloc1(rowptr[nrow], &ci));
    for (PetscInt r = 0; r < nrow; r++)
      for (long long e = rowptr[r]; e < rowptr[r + 1]; e++) ci[e] = r;
    PetscCall(PreallocateCOO(lor, (PetscCount)rowptr[nrow], ci, cj, PETSC_FALSE, nnz));
    PetscCall(PetscFree(ci));
    PetscCall(PetscFree(nnz));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatSeqAIJSetPreallocation(lor->A, 0, nnz));
  PetscCall(PetscFree(nnz));
  PetscCall(MatSeqAIJSetColumnIndices(lor->A, cj));
  PetscCall(MatAssemblyBegin(lor->A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(lor->A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatSetOption(lor->A, MAT_NEW_NONZERO_LOCATION_ERR, PETSC_TRUE));
#if defined(PATCHWORK_HAVE_CUDA)
  if (lor->device) { /* the device CSR is made on first access; the values are written there */
    const PetscScalar *a;

    PetscCall(MatSeqAIJCUSPARSEGetArrayRead(lor->A, &a));
    PetscCall(MatSeqAIJCUSPARSERestoreArrayRead(lor->A, &a));
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether this rank's rows are the whole grid, numbered like the nodes (one rank, no ghosts, the
   identity local-to-global map): then the pattern is PatchworkLORPattern*()'s CSR */
static PetscErrorCode RowsAreWholeGrid(PC pc, PetscBool *whole)
{
  PC_LOR                 *lor = (PC_LOR *)pc->data;
  const PatchworkLORDesc *d   = &lor->desc;
  PetscMPIInt             size;
  ISLocalToGlobalMapping  ltog;
  const PetscInt         *l2g;
  PetscInt                n;
  PetscBool               isda;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)pc), &size));
  *whole = (PetscBool)(size == 1);
  for (int i = 0; i < 3; i++) *whole = (PetscBool)(*whole && d->row_start[i] == 0 && d->row_size[i] == d->nodes[i] && d->coord_start[i] == 0 && d->coord_size[i] == d->nodes[i]);
  if (!*whole) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DMGetLocalToGlobalMapping(lor->dm, &ltog));
  PetscCall(ISLocalToGlobalMappingGetSize(ltog, &n));
  *whole = (PetscBool)(n == (PetscInt)PatchworkLORRowCount(d));
  /* one rank, no ghosts: a DMDA numbers its nodes naturally, so the map is the identity; other DMs
     are checked (the scan took 8-39 ms at 8-27M rows) */
  PetscCall(PetscObjectTypeCompare((PetscObject)lor->dm, DMDA, &isda));
  if (*whole && !isda) {
    PetscCall(ISLocalToGlobalMappingGetIndices(ltog, &l2g));
    for (PetscInt i = 0; i < n && *whole; i++) *whole = (PetscBool)(l2g[i] == i);
    PetscCall(ISLocalToGlobalMappingRestoreIndices(ltog, &l2g));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The CSR route's values come by GatherCSR (PCLORAssemble()), which takes int row starts: no map from
   rows x slots is kept */
static inline PetscBool GatherIntoCSR(const PC_LOR *lor)
{
  return (PetscBool)(lor->csr && sizeof(PetscInt) == sizeof(int));
}

#if defined(PATCHWORK_HAVE_CUDA)
/* Whether the inner PC is (or the options make it) PCPATCHAMG */
static PetscErrorCode InnerIsPatchAMG(PC pc, PetscBool *is)
{
  PC_LOR     *lor = (PC_LOR *)pc->data;
  PCType      type = NULL;
  const char *prefix;
  char        lprefix[256], opt[256];
  PetscBool   set;

  PetscFunctionBegin;
  if (lor->inner) PetscCall(PCGetType(lor->inner, &type));
  PetscCall(PCGetOptionsPrefix(pc, &prefix));
  PetscCall(PetscSNPrintf(lprefix, sizeof(lprefix), "%slor_", prefix ? prefix : ""));
  PetscCall(PetscOptionsGetString(((PetscObject)pc)->options, lprefix, "-pc_type", opt, sizeof(opt), &set));
  if (set) type = opt;
  if (!type) type = PCPATCHAMG; /* neither set: the default on device matrices (SetDefaultInnerType()) */
  PetscCall(PetscStrcmp(type, PCPATCHAMG, is));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One GPU rank with PCPATCHAMG inside: the kernels' CSR (rowptr_d, cols_d, taken) becomes the
   matrix as it is, a shell over device arrays that PCPATCHAMG reads directly. PETSc's AIJCUSPARSE
   would first copy the structure to the host and back: 0.7 s at 8M DoF, 6.4-7.5 s at 64M. */
static PetscErrorCode CreateDeviceCSR(PC pc, PetscInt nrow, long long nnz, long long *rowptr_d, int *cols_d, void *stream)
{
  PC_LOR            *lor = (PC_LOR *)pc->data;
  PatchworkCSRMatrix M   = {(int)nrow, (int)nrow, (int)nnz, NULL, cols_d, NULL};

  PetscFunctionBegin;
  PetscCheck(nnz <= INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "PCLOR: %lld nonzeros do not fit the int indices of a device CSR for PCPATCHAMG; use -pc_lor_device_csr 0", nnz);
  PatchworkCallKernel(PatchworkDeviceMalloc(sizeof(int) * ((size_t)nrow + 1), (void **)&M.ptr));
  PatchworkCallKernel(PatchworkVecLongToIntCUDA(nrow + 1, rowptr_d, M.ptr, stream));
  PatchworkCallKernel(PatchworkDeviceMalloc(sizeof(double) * (size_t)PetscMax(nnz, 1), (void **)&M.val));
  PatchworkCallKernel(PatchworkDeviceMemzero(M.val, sizeof(double) * (size_t)PetscMax(nnz, 1), stream));
  PatchworkCallKernel(PatchworkDeviceFree(rowptr_d)); /* waits for the conversion */
  PetscCall(MatDestroy(&lor->A));
  PetscCall(PCPatchAMGMatCreateDevice(&M, PETSC_FALSE, &lor->A));
  lor->devcsr = PETSC_TRUE;
  lor->nkeep  = (PetscCount)nnz;
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

/* One rank: the CSR pattern from the grid, by the CUDA kernels for a device matrix (the compaction
   map stays there; rows and columns come to the host for PETSc's copy of the structure, unless
   PCPATCHAMG takes the device CSR as it is) */
static PetscErrorCode CreatePatternWhole(PC pc)
{
  PC_LOR                 *lor  = (PC_LOR *)pc->data;
  const PatchworkLORDesc *d    = &lor->desc;
  const PetscInt          nrow = (PetscInt)PatchworkLORRowCount(d);
  long long              *rowptr, nnz = 0;
  int                    *cols;
  PetscInt               *cj;

  PetscFunctionBegin;
  PetscCall(CreateMatrix(pc));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)lor->A, &lor->csr, MATSEQAIJ, MATSEQAIJCUSPARSE, "")); /* the pattern can be its CSR */
  PetscCall(PetscMalloc1(nrow + 1, &rowptr));
  if (lor->device) {
#if defined(PATCHWORK_HAVE_CUDA)
    void      *stream;
    long long *rowptr_d;
    int       *cols_d;
    PetscBool  devcsr;

    PetscCall(PatchworkGetDeviceStream(&stream));
    PatchworkCallKernel(PatchworkDeviceMalloc((size_t)(nrow + 1) * sizeof(long long), (void **)&rowptr_d));
    PatchworkCallKernel(PatchworkLORPatternCountCUDA(d, lor->axis_only, rowptr_d, &nnz, stream));
    PatchworkCallKernel(PatchworkDeviceMalloc((size_t)PetscMax(nnz, 1) * sizeof(int), (void **)&cols_d));
    if (!GatherIntoCSR(lor)) PatchworkCallKernel(PatchworkDeviceMalloc((size_t)PetscMax(nnz, 1) * sizeof(long long), (void **)&lor->keep));
    PatchworkCallKernel(PatchworkLORPatternFillCUDA(d, lor->axis_only, rowptr_d, cols_d, lor->keep, stream));
    PetscCall(InnerIsPatchAMG(pc, &devcsr));
    if (devcsr && lor->devcsr_req && lor->csr) { /* aijcusparse (not -lor_mat_type sell etc.) */
      PetscCall(CreateDeviceCSR(pc, nrow, nnz, rowptr_d, cols_d, stream));
      PetscCall(SetSymmetry(lor));
      PetscCall(PetscFree(rowptr));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    PetscCall(PetscMalloc1(nnz, &cols));
    PatchworkCallKernel(PatchworkDeviceCopyToHost(rowptr, rowptr_d, (size_t)(nrow + 1) * sizeof(long long), stream));
    PatchworkCallKernel(PatchworkDeviceCopyToHost(cols, cols_d, (size_t)nnz * sizeof(int), stream));
    PetscCall(PatchworkDeviceSynchronize());
    PetscCall(PetscLogGpuToCpu((PetscLogDouble)(nrow + 1) * sizeof(long long) + (PetscLogDouble)nnz * sizeof(int)));
    PatchworkCallKernel(PatchworkDeviceFree(rowptr_d));
    PatchworkCallKernel(PatchworkDeviceFree(cols_d));
#endif
  } else {
    nnz = PatchworkLORPatternCountRef(d, lor->axis_only, rowptr);
    PetscCall(PetscMalloc1(nnz, &cols));
    if (!GatherIntoCSR(lor)) PetscCall(PetscMalloc1(nnz, &lor->keep));
    PatchworkLORPatternFillRef(d, lor->axis_only, rowptr, cols, lor->keep);
  }
#if defined(PETSC_USE_64BIT_INDICES)
  PetscCall(PetscMalloc1(nnz, &cj));
  for (long long e = 0; e < nnz; e++) cj[e] = cols[e];
  PetscCall(PetscFree(cols));
#else
  cj = cols;
#endif
  lor->nkeep = (PetscCount)nnz;
  PetscCall(PreallocateCSR(pc, nrow, rowptr, cj));
  PetscCall(SetSymmetry(lor));
  PetscCall(PetscFree(cj));
  PetscCall(PetscFree(rowptr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* An int array of the kernels as PetscInt (a copy to free where PetscInt is 64-bit, else the array itself) */
static PetscErrorCode IntsAsPetscInt(PetscCount n, int *a, PetscInt **b)
{
  PetscFunctionBegin;
#if defined(PETSC_USE_64BIT_INDICES)
  PetscCall(PetscMalloc1(PetscMax(n, 1), b));
  for (PetscCount e = 0; e < n; e++) (*b)[e] = a[e];
#else
  (void)n;
  *b = a;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode IntsAsPetscIntRestore(int *a, PetscInt **b)
{
  PetscFunctionBegin;
#if defined(PETSC_USE_64BIT_INDICES)
  PetscCall(PetscFree(*b));
#endif
  (void)a;
  *b = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Several ranks, an MPIAIJ matrix (also aijcusparse): the pattern as the two blocks PETSc keeps, each row
   sorted and split by PatchworkLORSplitPattern*() (on the GPU for a device matrix: only the blocks' rows
   come to the host, the keep map stays there), copied in whole into the blocks; the values are later
   written into the blocks' value arrays. PETSc's COO set-up sorted every entry on the host: 1.8 s of the
   3 s pattern at 7.2M rows on 2 GPUs. */
static PetscErrorCode CreatePatternSplit(PC pc, PetscInt rstart, PetscInt rend)
{
  PC_LOR                 *lor  = (PC_LOR *)pc->data;
  const PatchworkLORDesc *d    = &lor->desc;
  const long              nrow = PatchworkLORRowCount(d);
  const PetscCount        nbox = (PetscCount)d->coord_size[0] * d->coord_size[1] * d->coord_size[2];
  ISLocalToGlobalMapping  ltog;
  const PetscInt         *l2g;
  PetscInt                nl2g, *dptr, *optr, *dcol, *ocol;
  long long              *gl, *oc;
  int                    *dp, *op, *dc, nd = 0, no = 0, err = 0;

  PetscFunctionBegin;
  PetscCall(DMGetLocalToGlobalMapping(lor->dm, &ltog));
  PetscCall(ISLocalToGlobalMappingGetSize(ltog, &nl2g));
  PetscCheck(nl2g == nbox, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCLOR: the DM's local numbering has %" PetscInt_FMT " nodes, the coordinate box %" PetscCount_FMT, nl2g, nbox);
  PetscCall(ISLocalToGlobalMappingGetIndices(ltog, &l2g));
  PetscCall(PetscMalloc1(PetscMax(nbox, 1), &gl));
  for (PetscCount i = 0; i < nbox; i++) gl[i] = l2g[i];
  PetscCall(ISLocalToGlobalMappingRestoreIndices(ltog, &l2g));
  PetscCall(PetscMalloc2(nrow + 1, &dp, nrow + 1, &op));
  if (lor->device) {
#if defined(PATCHWORK_HAVE_CUDA)
    void      *stream;
    long long *gl_d, *oc_d;
    int       *dp_d, *op_d, *dc_d;

    PetscCall(PatchworkGetDeviceStream(&stream));
    PatchworkCallKernel(PatchworkDeviceMalloc(sizeof(long long) * PetscMax(nbox, 1), (void **)&gl_d));
    PatchworkCallKernel(PatchworkDeviceCopyToDevice(gl_d, gl, sizeof(long long) * nbox, stream));
    PatchworkCallKernel(PatchworkDeviceMalloc(sizeof(int) * (nrow + 1), (void **)&dp_d));
    PatchworkCallKernel(PatchworkDeviceMalloc(sizeof(int) * (nrow + 1), (void **)&op_d));
    err = PatchworkLORSplitPatternCountCUDA(d, lor->axis_only, gl_d, rstart, rend, dp_d, op_d, &nd, &no, stream);
    if (!err) {
      PatchworkCallKernel(PatchworkDeviceMalloc(sizeof(int) * PetscMax(nd, 1), (void **)&dc_d));
      PatchworkCallKernel(PatchworkDeviceMalloc(sizeof(long long) * PetscMax(no, 1), (void **)&oc_d));
      PatchworkCallKernel(PatchworkDeviceMalloc(sizeof(long long) * PetscMax((PetscCount)nd + no, 1), (void **)&lor->keep));
      PatchworkCallKernel(PatchworkLORSplitPatternFillCUDA(d, lor->axis_only, gl_d, rstart, rend, dp_d, op_d, dc_d, oc_d, lor->keep, stream));
      PetscCall(PetscMalloc2(PetscMax(nd, 1), &dc, PetscMax(no, 1), &oc));
      PatchworkCallKernel(PatchworkDeviceCopyToHost(dp, dp_d, sizeof(int) * (nrow + 1), stream));
      PatchworkCallKernel(PatchworkDeviceCopyToHost(op, op_d, sizeof(int) * (nrow + 1), stream));
      PatchworkCallKernel(PatchworkDeviceCopyToHost(dc, dc_d, sizeof(int) * nd, stream));
      PatchworkCallKernel(PatchworkDeviceCopyToHost(oc, oc_d, sizeof(long long) * no, stream));
      PetscCall(PatchworkDeviceSynchronize());
      PetscCall(PetscLogGpuToCpu((PetscLogDouble)sizeof(int) * (2 * (nrow + 1) + nd) + (PetscLogDouble)sizeof(long long) * no));
      PatchworkCallKernel(PatchworkDeviceFree(dc_d));
      PatchworkCallKernel(PatchworkDeviceFree(oc_d));
    }
    PatchworkCallKernel(PatchworkDeviceFree(dp_d));
    PatchworkCallKernel(PatchworkDeviceFree(op_d));
    PatchworkCallKernel(PatchworkDeviceFree(gl_d));
#endif
  } else {
    err = PatchworkLORSplitPatternCountRef(d, lor->axis_only, gl, rstart, rend, dp, op);
    if (!err) {
      nd = dp[nrow];
      no = op[nrow];
      PetscCall(PetscMalloc2(PetscMax(nd, 1), &dc, PetscMax(no, 1), &oc));
      PetscCall(PetscMalloc1(PetscMax((PetscCount)nd + no, 1), &lor->keep));
      PatchworkLORSplitPatternFillRef(d, lor->axis_only, gl, rstart, rend, dp, op, dc, oc, lor->keep);
    }
  }
  PetscCall(PetscFree(gl));
  PetscCheck(!err, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCLOR: this rank's rows are not the DM's owned nodes numbered from %" PetscInt_FMT " in order, or their %ld rows' entries exceed int (error %d)", rstart, nrow, err);
  PetscCall(PetscMalloc1(PetscMax(no, 1), &ocol));
  for (int e = 0; e < no; e++) ocol[e] = (PetscInt)oc[e];
  PetscCall(IntsAsPetscInt(nrow + 1, dp, &dptr));
  PetscCall(IntsAsPetscInt(nrow + 1, op, &optr));
  PetscCall(IntsAsPetscInt(nd, dc, &dcol));
  PetscCall(PatchworkMatAIJSetSplitRows(lor->A, dptr, dcol, NULL, optr, ocol, NULL));
  PetscCall(IntsAsPetscIntRestore(dc, &dcol));
  PetscCall(IntsAsPetscIntRestore(op, &optr));
  PetscCall(IntsAsPetscIntRestore(dp, &dptr));
  PetscCall(PetscFree(ocol));
  PetscCall(PetscFree2(dc, oc));
  PetscCall(PetscFree2(dp, op));
  lor->split  = PETSC_TRUE;
  lor->nsplit = nd;
  lor->nkeep  = (PetscCount)nd + no;
#if defined(PATCHWORK_HAVE_CUDA)
  if (lor->device) { /* the blocks' device CSR is made on first access; the values are written there */
    Mat                B[2];
    const PetscScalar *a;

    PetscCall(MatMPIAIJGetSeqAIJ(lor->A, &B[0], &B[1], NULL));
    for (int b = 0; b < 2; b++) {
      PetscCall(MatSeqAIJCUSPARSEGetArrayRead(B[b], &a));
      PetscCall(MatSeqAIJCUSPARSERestoreArrayRead(B[b], &a));
    }
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Several ranks, other matrix types: the pattern row by row over the owned nodes with the global
   numbering, as a COO pattern */
static PetscErrorCode CreatePatternCOO(PC pc)
{
  PC_LOR                 *lor  = (PC_LOR *)pc->data;
  const PatchworkLORDesc *d    = &lor->desc;
  const int               S    = PatchworkLORSlots(d);
  const long              nrow = PatchworkLORRowCount(d);
  ISLocalToGlobalMapping  ltog;
  const PetscInt         *l2g;
  PetscInt               *ci, *cj, rstart, rend;
  long long              *keep;
  PetscCount              n = 0;
  PetscBool               split;
  int                     slots[PW_LOR_MAX_SLOTS];
  const int               ns = PatchworkLORSlotCandidates(d, lor->axis_only, slots); /* 7 of 27 on box cells */

  PetscFunctionBegin;
  PetscCall(CreateMatrix(pc));
  {
    PetscLayout rmap, cmap;

    PetscCall(MatGetLayouts(lor->A, &rmap, &cmap)); /* set up before the preallocation does it */
    PetscCall(PetscLayoutSetUp(rmap));
    PetscCall(PetscLayoutSetUp(cmap));
    PetscCall(PetscLayoutGetRange(rmap, &rstart, &rend));
  }
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)lor->A, MATMPIAIJ, &split));
  if (split) {
    PetscCall(CreatePatternSplit(pc, rstart, rend));
    PetscCall(SetSymmetry(lor));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(DMGetLocalToGlobalMapping(lor->dm, &ltog));
  PetscCall(ISLocalToGlobalMappingGetIndices(ltog, &l2g));
  PetscCall(PetscMalloc2(lor->ncoo, &ci, lor->ncoo, &cj));
  PetscCall(PetscMalloc1(lor->ncoo, &keep));
  for (long row = 0; row < nrow; row++) {
    int      g[3];
    PetscInt gi;

    PatchworkLORRowNode(d, row, g);
    gi = l2g[BoxIndex(d->coord_start, d->coord_size, g)];
    for (int t = 0; t < ns; t++) {
      const int s = slots[t];
      int       nb[3];

      if (!PatchworkLORSlotStored(d, lor->axis_only, g, s)) continue;
      PatchworkLORSlotNeighbour(d, g, s, nb);
      ci[n]   = gi;
      cj[n]   = l2g[BoxIndex(d->coord_start, d->coord_size, nb)];
      keep[n] = (long long)row * S + s;
      n++;
    }
  }
  PetscCall(ISLocalToGlobalMappingRestoreIndices(ltog, &l2g));
  PetscCall(PreallocateCOO(lor, n, ci, cj, PETSC_FALSE, NULL));
  PetscCall(SetSymmetry(lor));
  lor->nkeep = n;
  PetscCall(PetscFree2(ci, cj));
  PetscCall(PCLORSetKeep(pc, (size_t)n, keep));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* keep (n entries, PetscMalloc'd; the PC takes it) becomes lor->keep: copied to the device and freed
   when the values are computed there */
PetscErrorCode PCLORSetKeep(PC pc, size_t n, long long *keep)
{
  PC_LOR *lor = (PC_LOR *)pc->data;

  PetscFunctionBegin;
  if (lor->device) {
#if defined(PATCHWORK_HAVE_CUDA)
    void *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
    PatchworkCallKernel(PatchworkDeviceMalloc(n * sizeof(long long), (void **)&lor->keep));
    PatchworkCallKernel(PatchworkDeviceCopyToDevice(lor->keep, keep, n * sizeof(long long), stream));
    PetscCall(PetscLogCpuToGpu((PetscLogDouble)n * sizeof(long long)));
    PetscCall(PatchworkDeviceSynchronize()); /* before the host copy goes */
#endif
    PetscCall(PetscFree(keep));
  } else lor->keep = keep;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The matrix and its pattern: rows x slots of A2 without the entries that are structurally absent
   (neighbours outside the grid, eliminated Dirichlet couplings, and on box cells with the vertex
   rule the couplings off the axes, about 3/4 of the slots in 3D); keep[] maps the pattern to them */
PetscErrorCode PCLORCreatePattern(PC pc)
{
  PC_LOR   *lor = (PC_LOR *)pc->data;
  PetscBool whole;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PATCHWORK_LORPattern, pc, 0, 0, 0));
  PetscCall(PCLORDestroyPattern(pc));
  PetscCall(RowsAreWholeGrid(pc, &whole));
  if (whole) PetscCall(CreatePatternWhole(pc));
  else PetscCall(CreatePatternCOO(pc));
  lor->npattern++;
  PetscCall(PetscLogEventEnd(PATCHWORK_LORPattern, pc, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Coordinates of the ghosted box, dim per node: the DM's, or the Gauss-Lobatto nodes of the
   operator's box when the DM has none. *owned tells whether the caller must free them. */
static PetscErrorCode GetBoxCoordinates(PC_LOR *lor, const PetscScalar **xc, PetscBool *owned, Vec *cvec)
{
  const PatchworkLORDesc *d = &lor->desc;
  PetscInt                k = lor->info.degree;

  PetscFunctionBegin;
  *owned = PETSC_FALSE;
  PetscCall(DMGetCoordinatesLocal(lor->dm, cvec));
  if (*cvec) {
    PetscInt n;
    PetscCall(VecGetLocalSize(*cvec, &n));
    PetscCheck(n == (PetscInt)d->dim * d->coord_size[0] * d->coord_size[1] * d->coord_size[2], PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "The DM's local coordinates have %" PetscInt_FMT " entries, not dim x ghosted nodes", n);
    PetscCall(VecGetArrayRead(*cvec, xc));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCheck(lor->from_tensor, PetscObjectComm((PetscObject)lor->dm), PETSC_ERR_ARG_WRONGSTATE, "PCLOR needs node coordinates: the DM has none (DMDASetUniformCoordinates() or PatchworkDMDASetCoordinatesQk())");
  {
    double       gll[PW_MAX_N], w[PW_MAX_N];
    PetscScalar *x;
    const long   n = (long)d->coord_size[0] * d->coord_size[1] * d->coord_size[2];

    PetscCheck(!PatchworkGaussLobatto((int)k + 1, gll, w), PETSC_COMM_SELF, PETSC_ERR_LIB, "No Gauss-Lobatto rule of %" PetscInt_FMT " points", k + 1);
    PetscCall(PetscMalloc1(n * d->dim, &x));
    for (long p = 0; p < n; p++) {
      const int g[3] = {d->coord_start[0] + (int)(p % d->coord_size[0]), d->coord_start[1] + (int)((p / d->coord_size[0]) % d->coord_size[1]), d->coord_start[2] + (int)(p / ((long)d->coord_size[0] * d->coord_size[1]))};
      for (int i = 0; i < d->dim; i++) {
        const PetscReal h = (lor->info.upper[i] - lor->info.lower[i]) / (PetscReal)lor->info.cells[i];
        const int       c = g[i] / (int)k, l = g[i] % (int)k;
        x[p * d->dim + i] = lor->info.lower[i] + h * (c + gll[l]);
      }
    }
    *xc    = x;
    *owned = PETSC_TRUE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A Gauss-Lobatto basis is what makes the LOR matrix spectrally equivalent: reject node grids whose
   first owned cell in each direction (along its first grid line) has other node positions.
   Distorted meshes move nodes too, so the test is loose (2% of the cell). */
static PetscErrorCode CheckGaussLobatto(PC_LOR *lor, const PetscScalar *xc)
{
  const PatchworkLORDesc *d = &lor->desc;
  const int               k = d->degree;
  double                  gll[PW_MAX_N], w[PW_MAX_N];

  PetscFunctionBegin;
  if (k < 3 || PatchworkLORMacroCount(d) <= 0) PetscFunctionReturn(PETSC_SUCCESS); /* k <= 2: equispaced nodes are Gauss-Lobatto */
  PetscCheck(!PatchworkGaussLobatto(k + 1, gll, w), PETSC_COMM_SELF, PETSC_ERR_LIB, "No Gauss-Lobatto rule of %d points", k + 1);
  for (int dir = 0; dir < d->dim; dir++) {
    double x[PW_MAX_N][3], len = 0, worst = 0;
    for (int l = 0; l <= k; l++) {
      int g[3] = {k * d->cell_start[0], k * d->cell_start[1], k * d->cell_start[2]};
      g[dir] += l;
      for (int i = 0; i < d->dim; i++) x[l][i] = (double)PetscRealPart(xc[BoxIndex(d->coord_start, d->coord_size, g) * d->dim + i]);
    }
    for (int i = 0; i < d->dim; i++) len += (x[k][i] - x[0][i]) * (x[k][i] - x[0][i]);
    len = sqrt(len);
    PetscCheck(len > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "PCLOR: a cell of the node grid has zero extent in direction %d", dir);
    for (int l = 1; l < k; l++) {
      double t = 0;
      for (int i = 0; i < d->dim; i++) t += (x[l][i] - x[0][i]) * (x[k][i] - x[0][i]);
      worst = PetscMax(worst, PetscAbsReal(t / (len * len) - gll[l]));
    }
    PetscCheck(worst < 0.02, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "PCLOR needs a Gauss-Lobatto nodal basis, but the nodes of a Q%d cell along direction %d are %g (relative) off the Gauss-Lobatto points", k, dir, worst);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A3 of the rows x slots route: the stored entries in the pattern's order (the keep map), written into
   the matrix's value array (a CSR pattern with 64-bit PetscInt) or placed by MatSetValuesCOO(); vals
   is freed */
static PetscErrorCode SetValuesCOO(PC pc, double *vals)
{
  PC_LOR *lor = (PC_LOR *)pc->data;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PATCHWORK_LORSetValues, pc, 0, 0, 0));
#if defined(PATCHWORK_HAVE_CUDA)
  if (lor->device) {
    void        *stream;
    PetscScalar *v;

    PetscCall(PatchworkGetDeviceStream(&stream));
    if (lor->split) { /* the two blocks' value arrays, one after the other */
      Mat B[2];

      PetscCall(MatMPIAIJGetSeqAIJ(lor->A, &B[0], &B[1], NULL));
      for (int b = 0; b < 2; b++) {
        PetscCall(MatSeqAIJCUSPARSEGetArrayWrite(B[b], &v));
        PatchworkCallKernel(PatchworkLORCompactCUDA((long)(b ? lor->nkeep - lor->nsplit : lor->nsplit), lor->keep + (b ? lor->nsplit : 0), vals, (double *)v, stream));
        PetscCall(MatSeqAIJCUSPARSERestoreArrayWrite(B[b], &v));
      }
      PatchworkCallKernel(PatchworkDeviceFree(vals));
      PetscCall(PetscObjectStateIncrease((PetscObject)lor->A));
      PetscCall(PetscLogEventEnd(PATCHWORK_LORSetValues, pc, 0, 0, 0));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    if (lor->csr) PetscCall(MatSeqAIJCUSPARSEGetArrayWrite(lor->A, &v));
    else PatchworkCallKernel(PatchworkDeviceMalloc((size_t)lor->nkeep * sizeof(double), (void **)&v));
    PetscCall(PetscLogGpuTimeBegin());
    PatchworkCallKernel(PatchworkLORCompactCUDA((long)lor->nkeep, lor->keep, vals, (double *)v, stream));
    PetscCall(PetscLogGpuTimeEnd());
    PatchworkCallKernel(PatchworkDeviceFree(vals));
    if (lor->csr) PetscCall(MatSeqAIJCUSPARSERestoreArrayWrite(lor->A, &v));
    else {
      PetscCall(MatSetValuesCOO(lor->A, v, INSERT_VALUES));
      PatchworkCallKernel(PatchworkDeviceFree(v));
    }
  } else
#endif
  {
    PetscScalar *v;

    if (lor->split) {
      Mat B[2];

      PetscCall(MatMPIAIJGetSeqAIJ(lor->A, &B[0], &B[1], NULL));
      for (int b = 0; b < 2; b++) {
        PetscCall(MatSeqAIJGetArrayWrite(B[b], &v));
        PatchworkLORCompactRef((long)(b ? lor->nkeep - lor->nsplit : lor->nsplit), lor->keep + (b ? lor->nsplit : 0), vals, (double *)v);
        PetscCall(MatSeqAIJRestoreArrayWrite(B[b], &v));
      }
      PetscCall(PetscFree(vals));
      PetscCall(PetscObjectStateIncrease((PetscObject)lor->A));
      PetscCall(PetscLogEventEnd(PATCHWORK_LORSetValues, pc, 0, 0, 0));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    if (lor->csr) PetscCall(MatSeqAIJGetArrayWrite(lor->A, &v));
    else PetscCall(PetscMalloc1(lor->nkeep, &v));
    PatchworkLORCompactRef((long)lor->nkeep, lor->keep, vals, (double *)v);
    PetscCall(PetscFree(vals));
    if (lor->csr) PetscCall(MatSeqAIJRestoreArrayWrite(lor->A, &v));
    else {
      PetscCall(MatSetValuesCOO(lor->A, v, INSERT_VALUES));
      PetscCall(PetscFree(v));
    }
  }
  PetscCall(PetscLogEventEnd(PATCHWORK_LORSetValues, pc, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The CSR route's row starts and value array (one rank, int indices: the kernels' ABI): the device
   CSR handed to PCPATCHAMG, an aijcusparse matrix's, or a host seqaij matrix's; restore with
   PutCSRValues() */
static PetscErrorCode GetCSRValues(PC_LOR *lor, const int **rowptr, double **v)
{
  PetscFunctionBegin;
  if (lor->devcsr) {
    const PatchworkCSRMatrix *M;

    PetscCall(PCPatchAMGMatGetDeviceCSR(lor->A, &M));
    *rowptr = M->ptr;
    PetscCall(PCPatchAMGMatDeviceGetValues(lor->A, v));
  } else if (lor->device) {
#if defined(PATCHWORK_HAVE_CUDA)
    const PetscInt *ia, *ja;

    PetscCall(MatSeqAIJCUSPARSEGetIJ(lor->A, PETSC_FALSE, &ia, &ja));
    *rowptr = (const int *)ia;
    PetscCall(MatSeqAIJCUSPARSEGetArrayWrite(lor->A, (PetscScalar **)v));
#endif
  } else {
    PetscInt        n;
    const PetscInt *ia, *ja;
    PetscBool       done;

    PetscCall(MatGetRowIJ(lor->A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
    PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCLOR could not read its matrix's rows");
    *rowptr = (const int *)ia;
    PetscCall(MatSeqAIJGetArrayWrite(lor->A, (PetscScalar **)v));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PutCSRValues(PC_LOR *lor, const int **rowptr, double **v)
{
  PetscFunctionBegin;
  if (lor->devcsr) PetscCall(PCPatchAMGMatDeviceRestoreValues(lor->A, v));
  else if (lor->device) {
#if defined(PATCHWORK_HAVE_CUDA)
    const PetscInt *ia = (const PetscInt *)*rowptr, *ja = NULL;

    PetscCall(MatSeqAIJCUSPARSERestoreArrayWrite(lor->A, (PetscScalar **)v));
    PetscCall(MatSeqAIJCUSPARSERestoreIJ(lor->A, PETSC_FALSE, &ia, &ja));
#endif
  } else {
    PetscInt        n;
    const PetscInt *ia = (const PetscInt *)*rowptr, *ja = NULL;
    PetscBool       done;

    PetscCall(MatSeqAIJRestoreArrayWrite(lor->A, (PetscScalar **)v));
    PetscCall(MatRestoreRowIJ(lor->A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  }
  *rowptr = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The values. On the CSR route (one rank, the pattern the matrix's CSR) the GPU computes A1 to A4 in
   one pass straight into the matrix's value array (MacroCSR, no Ae; logged as PWLORMacro), the CPU A1
   then A2, A4 and A3 in one pass (GatherCSR); else A1, A2 and A4 into rows x slots and A3 by
   MatSetValuesCOO() */
PetscErrorCode PCLORAssemble(PC pc)
{
  PC_LOR                 *lor = (PC_LOR *)pc->data;
  const PatchworkLORDesc *d   = &lor->desc;
  const size_t            ncoord = (size_t)d->dim * d->coord_size[0] * d->coord_size[1] * d->coord_size[2];
  const size_t            nAe    = (size_t)PatchworkLORMacroCount(d) * PatchworkLORMacroNodes(d) * PatchworkLORSlots(d);
  const PetscBool         fused  = GatherIntoCSR(lor);
  const PetscScalar      *xc;
  PetscBool               owned;
  Vec                     cvec;
  double                 *Ae = NULL, *vals = NULL, *v = NULL;
  const int              *rowptr = NULL;

  PetscFunctionBegin;
  PetscCall(GetBoxCoordinates(lor, &xc, &owned, &cvec));
  if (!lor->from_tensor) PetscCall(CheckGaussLobatto(lor, xc));
  if (lor->device) {
#if defined(PATCHWORK_HAVE_CUDA)
    void   *stream;
    double *xd = NULL;

    PetscCall(PatchworkGetDeviceStream(&stream));
    PatchworkCallKernel(PatchworkDeviceMalloc(ncoord * sizeof(double), (void **)&xd));
    if (!fused) {
      PatchworkCallKernel(PatchworkDeviceMalloc(nAe * sizeof(double), (void **)&Ae));
      PatchworkCallKernel(PatchworkDeviceMalloc((size_t)lor->ncoo * sizeof(double), (void **)&vals));
    }
    PatchworkCallKernel(PatchworkDeviceCopyToDevice(xd, xc, ncoord * sizeof(double), stream));
    PetscCall(PetscLogCpuToGpu(ncoord * sizeof(double)));
    PetscCall(PetscLogEventBegin(PATCHWORK_LORMacro, pc, 0, 0, 0));
    PetscCall(PetscLogGpuTimeBegin());
    if (fused) { /* A1 to A4 in one pass, no Ae: the macro elements' rows go straight into the CSR */
      PetscCall(GetCSRValues(lor, &rowptr, &v));
      PatchworkCallKernel(PatchworkLORMacroCSRCUDA(d, (int)lor->axis_only, xd, rowptr, v, stream));
    } else PatchworkCallKernel(PatchworkLORMacroCUDA(d, xd, Ae, stream));
    PetscCall(PetscLogGpuTimeEnd());
    PetscCall(PetscLogEventEnd(PATCHWORK_LORMacro, pc, 0, 0, 0));
    if (fused) PetscCall(PutCSRValues(lor, &rowptr, &v));
    else {
      PetscCall(PetscLogEventBegin(PATCHWORK_LORGather, pc, 0, 0, 0));
      PetscCall(PetscLogGpuTimeBegin());
      PatchworkCallKernel(PatchworkLORGatherCUDA(d, Ae, vals, stream));
      PetscCall(PetscLogGpuTimeEnd());
      PetscCall(PetscLogEventEnd(PATCHWORK_LORGather, pc, 0, 0, 0));
      PetscCall(PetscLogEventBegin(PATCHWORK_LORDirichlet, pc, 0, 0, 0));
      PetscCall(PetscLogGpuTimeBegin());
      PatchworkCallKernel(PatchworkLORDirichletCUDA(d, vals, stream));
      PetscCall(PetscLogGpuTimeEnd());
      PetscCall(PetscLogEventEnd(PATCHWORK_LORDirichlet, pc, 0, 0, 0));
    }
    /* cudaFree waits for the kernels, so the host coordinates may go after it */
    PatchworkCallKernel(PatchworkDeviceFree(Ae));
    PatchworkCallKernel(PatchworkDeviceFree(xd));
#else
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "A device matrix, but Patchwork was built without CUDA");
#endif
  } else {
    (void)ncoord;
    PetscCall(PetscMalloc1(nAe, &Ae));
    if (!fused) PetscCall(PetscMalloc1(lor->ncoo, &vals));
    PetscCall(PetscLogEventBegin(PATCHWORK_LORMacro, pc, 0, 0, 0));
    PatchworkLORMacroRef(d, (const double *)xc, Ae);
    PetscCall(PetscLogEventEnd(PATCHWORK_LORMacro, pc, 0, 0, 0));
    PetscCall(PetscLogEventBegin(PATCHWORK_LORGather, pc, 0, 0, 0));
    if (fused) {
      PetscCall(GetCSRValues(lor, &rowptr, &v));
      PatchworkLORGatherCSRRef(d, (int)lor->axis_only, Ae, rowptr, v);
      PetscCall(PutCSRValues(lor, &rowptr, &v));
    } else PatchworkLORGatherRef(d, Ae, vals);
    PetscCall(PetscLogEventEnd(PATCHWORK_LORGather, pc, 0, 0, 0));
    if (!fused) {
      PetscCall(PetscLogEventBegin(PATCHWORK_LORDirichlet, pc, 0, 0, 0));
      PatchworkLORDirichletRef(d, vals);
      PetscCall(PetscLogEventEnd(PATCHWORK_LORDirichlet, pc, 0, 0, 0));
    }
    PetscCall(PetscFree(Ae));
  }
  if (owned) PetscCall(PetscFree(xc));
  else PetscCall(VecRestoreArrayRead(cvec, &xc));
  if (!fused) PetscCall(SetValuesCOO(pc, vals));
  PetscFunctionReturn(PETSC_SUCCESS);
}
