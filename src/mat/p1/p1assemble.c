/* Assembly of the P1 Helmholtz matrix -div(sigma grad u) + lambda u on a DMPlex of triangles or
   tetrahedra (Fu et al. 2014, sections 3 and 4). The host reads the mesh (vertex coordinates, the
   vertices of the cells this rank owns), derives the layout of include/patchwork/p1_kernel.h (vertex
   graph pattern, patches), hands the pattern to PETSc as COO, and has the values computed by the CPU
   reference or, for a CUDA matrix, by the patch-based kernel on the device; MatSetValuesCOO() then sums
   the rank-local rows into the parallel matrix (rows of vertices another rank owns travel there). */
#include "../../sys/pwimpl.h"
#include <petscfe.h>
#include <petscsf.h>
#include <patchwork/p1_kernel.h>
#include <patchwork/vec_kernel.h>

static PetscLogEvent P1_SetUp, P1_Layout, P1_Preallocate, P1_Values, P1_SetValues;

static const char citation[] = "@article{fu2014architecting,\n"
                               "  title   = {Architecting the finite element method pipeline for the {GPU}},\n"
                               "  author  = {Fu, Zhisong and Lewis, T. James and Kirby, Robert M. and Whitaker, Ross T.},\n"
                               "  journal = {Journal of Computational and Applied Mathematics},\n"
                               "  volume  = {257},\n"
                               "  pages   = {195--211},\n"
                               "  year    = {2014}\n"
                               "}\n";
static PetscBool cited = PETSC_FALSE;

/* A DMPlex of one cell type: triangles in 2D, tetrahedra in 3D, with affine vertex coordinates */
static PetscErrorCode CheckMesh(DM dm, PetscInt *dim)
{
  MPI_Comm       comm = PetscObjectComm((PetscObject)dm);
  PetscBool      isplex, localized;
  PetscInt       cStart, cEnd, vStart, vEnd, cdim, csize;
  PetscMPIInt    lmask = 0, mask;
  DMPolytopeType want, types[2] = {DM_POLYTOPE_UNKNOWN, DM_POLYTOPE_UNKNOWN};
  PetscInt       ntypes = 0;
  DM             cdm;
  PetscSection   csec;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)dm, DMPLEX, &isplex));
  if (!isplex) {
    DMType type;

    PetscCall(DMGetType(dm, &type));
    SETERRQ(comm, PETSC_ERR_ARG_WRONG, "PatchworkDMPlexAssembleP1() needs a DMPlex, not a DM of type %s", type);
  }
  PetscCall(DMGetDimension(dm, dim));
  PetscCheck(*dim == 2 || *dim == 3, comm, PETSC_ERR_SUP, "PatchworkDMPlexAssembleP1() supports triangles (2D) and tetrahedra (3D), not a %" PetscInt_FMT "D mesh", *dim);
  want = *dim == 2 ? DM_POLYTOPE_TRIANGLE : DM_POLYTOPE_TETRAHEDRON;
  PetscCall(DMPlexGetHeightStratum(dm, 0, &cStart, &cEnd));
  { /* fast: every cell has the wanted type when that many points have it (they can only be cells) */
    DMLabel  ctlabel;
    PetscInt n;

    PetscMPIInt flags[2];

    PetscCall(DMPlexGetCellTypeLabel(dm, &ctlabel));
    PetscCall(DMLabelGetStratumSize(ctlabel, (PetscInt)want, &n));
    flags[0] = n == cEnd - cStart ? 0 : 1; /* other types here */
    flags[1] = cEnd > cStart ? 1 : 0;      /* cells here */
    PetscCall(MPIU_Allreduce(MPI_IN_PLACE, flags, 2, MPI_INT, MPI_MAX, comm));
    lmask = flags[0];
    mask  = flags[1] ? 1 << (int)want : 0;
  }
  if (lmask) { /* the types there are, for the message */
    lmask = 0;
    for (PetscInt c = cStart; c < cEnd; c++) {
      DMPolytopeType ct;
      PetscCall(DMPlexGetCellType(dm, c, &ct));
      lmask |= 1 << (int)ct;
    }
    PetscCall(MPIU_Allreduce(&lmask, &mask, 1, MPI_INT, MPI_BOR, comm));
  }
  PetscCheck(mask, comm, PETSC_ERR_ARG_WRONG, "The DMPlex has no cells");
  for (int t = 0; t < DM_NUM_POLYTOPES; t++)
    if (mask & (1 << t)) {
      if (ntypes < 2) types[ntypes] = (DMPolytopeType)t;
      ntypes++;
    }
  PetscCheck(ntypes == 1, comm, PETSC_ERR_SUP, "The DMPlex mixes cell types (%s and %s%s): P1 assembly needs only %s", DMPolytopeTypes[types[0]], DMPolytopeTypes[types[1]], ntypes > 2 ? ", and more" : "", *dim == 2 ? "triangles" : "tetrahedra");
  PetscCheck(types[0] == want, comm, PETSC_ERR_SUP, "P1 assembly needs %s, the DMPlex has %s cells (create simplices, e.g. -dm_plex_simplex 1; for quadrilaterals and hexahedra use MatCreatePatchworkTensor())", *dim == 2 ? "triangles" : "tetrahedra", DMPolytopeTypes[types[0]]);

  PetscCall(DMGetCoordinateDim(dm, &cdim));
  PetscCheck(cdim == *dim, comm, PETSC_ERR_SUP, "P1 assembly needs coordinates of the mesh's dimension: the %" PetscInt_FMT "D mesh has %" PetscInt_FMT "D coordinates (embedded manifolds are not supported)", *dim, cdim);
  PetscCall(DMGetCoordinatesLocalized(dm, &localized));
  PetscCheck(!localized, comm, PETSC_ERR_SUP, "P1 assembly needs vertex coordinates: this DMPlex has cell-wise (localized, periodic) coordinates");
  PetscCall(DMGetCoordinatesLocalSetUp(dm));
  PetscCall(DMGetCoordinateDM(dm, &cdm));
  PetscCall(DMGetLocalSection(cdm, &csec));
  PetscCall(DMPlexGetDepthStratum(dm, 0, &vStart, &vEnd));
  PetscCall(PetscSectionGetStorageSize(csec, &csize));
  lmask = csize != cdim * (vEnd - vStart);
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &lmask, 1, MPI_INT, MPI_MAX, comm));
  PetscCheck(!lmask, comm, PETSC_ERR_SUP, "P1 assembly needs straight cells given by their vertices: the coordinate field of this DMPlex has values beyond the vertices (a higher-degree coordinate space)");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The local section of a DM whose only field is the scalar P1 element, built directly: one dof (of
   field 0) on every vertex. It equals DMPlexCreateSection()'s, which asks the depth label of every point
   of the mesh (2.2 of the 2.9 s this function took at 275K vertices, 1.6M tetrahedra). */
static PetscErrorCode SetP1LocalSection(DM dm)
{
  PetscSection sec;
  PetscInt     pStart, pEnd, vStart, vEnd;

  PetscFunctionBegin;
  PetscCall(DMPlexGetChart(dm, &pStart, &pEnd));
  PetscCall(DMPlexGetDepthStratum(dm, 0, &vStart, &vEnd));
  PetscCall(PetscSectionCreate(PetscObjectComm((PetscObject)dm), &sec));
  PetscCall(PetscSectionSetNumFields(sec, 1));
  PetscCall(PetscSectionSetFieldComponents(sec, 0, 1));
  PetscCall(PetscSectionSetChart(sec, pStart, pEnd));
  for (PetscInt v = vStart; v < vEnd; v++) {
    PetscCall(PetscSectionSetDof(sec, v, 1));
    PetscCall(PetscSectionSetFieldDof(sec, v, 0, 1));
  }
  PetscCall(PetscSectionSetUp(sec));
  PetscCall(DMSetLocalSection(dm, sec));
  PetscCall(PetscSectionDestroy(&sec));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Field 0 the scalar P1 Lagrange element (created when the DM has no field); its section must put one
   unconstrained dof on every vertex and none elsewhere */
static PetscErrorCode SetP1Field(DM dm, PetscInt dim)
{
  MPI_Comm     comm = PetscObjectComm((PetscObject)dm);
  PetscInt     nf, vStart, vEnd, size, csize;
  PetscSection sec;
  PetscMPIInt  bad = 0;

  PetscFunctionBegin;
  PetscCall(DMGetNumFields(dm, &nf));
  if (nf == 0) {
    PetscFE fe;

    /* quadrature of order 2: PETSc's own FEM assembly on this DM then integrates the mass exactly too */
    PetscCall(PetscFECreateLagrange(comm, dim, 1, PETSC_TRUE, 1, 2, &fe));
    PetscCall(PetscObjectSetName((PetscObject)fe, "u"));
    PetscCall(DMSetField(dm, 0, NULL, (PetscObject)fe));
    PetscCall(PetscFEDestroy(&fe));
    PetscCall(DMCreateDS(dm));
    PetscCall(SetP1LocalSection(dm));
    nf = 1;
  }
  PetscCheck(nf == 1, comm, PETSC_ERR_SUP, "The DMPlex has %" PetscInt_FMT " fields; P1 assembly needs one scalar P1 field (or none: it then creates it)", nf);
  /* one dof on every vertex and storage for no more: none elsewhere */
  PetscCall(DMGetLocalSection(dm, &sec));
  PetscCall(DMPlexGetDepthStratum(dm, 0, &vStart, &vEnd));
  PetscCall(PetscSectionGetStorageSize(sec, &size));
  PetscCall(PetscSectionGetConstrainedStorageSize(sec, &csize));
  if (size != vEnd - vStart) bad = 1;
  for (PetscInt v = vStart; v < vEnd && !bad; v++) {
    PetscInt dof;

    PetscCall(PetscSectionGetDof(sec, v, &dof));
    if (dof != 1) bad = 1;
  }
  if (!bad && csize != size) bad = 2;
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm));
  PetscCheck(bad != 1, comm, PETSC_ERR_ARG_WRONG, "Field 0 of the DMPlex is not scalar P1 (one dof per vertex, none on edges, faces or cells); give a DM without fields and PatchworkDMPlexAssembleP1() creates the P1 field");
  PetscCheck(bad != 2, comm, PETSC_ERR_SUP, "The DMPlex's section constrains dofs (essential boundary conditions): P1 assembly gives natural (Neumann) conditions only");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* lambda >= 0, sigma > 0 (finite) with one value per local cell */
static PetscErrorCode CheckCoefficients(DM dm, PetscReal lambda, Vec sigma)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)dm);
  PetscInt    cStart, cEnd, n;
  PetscMPIInt bad[2] = {0, 0};
  PetscReal   smin   = PETSC_MAX_REAL;

  PetscFunctionBegin;
  PetscCheck(!PetscIsInfOrNanReal(lambda) && lambda >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "lambda must be finite and >= 0 (the reaction coefficient of -div(sigma grad u) + lambda u), not %g", (double)lambda);
  if (!sigma) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DMPlexGetHeightStratum(dm, 0, &cStart, &cEnd));
  PetscCall(VecGetLocalSize(sigma, &n));
  if (n != cEnd - cStart) bad[0] = 1;
  else {
    const PetscScalar *s;

    PetscCall(VecGetArrayRead(sigma, &s));
    for (PetscInt i = 0; i < n; i++) {
      const PetscReal v = PetscRealPart(s[i]);
      if (PetscIsInfOrNanReal(v)) bad[1] = 1;
      else smin = PetscMin(smin, v);
    }
    PetscCall(VecRestoreArrayRead(sigma, &s));
  }
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, bad, 2, MPI_INT, MPI_MAX, comm));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &smin, 1, MPIU_REAL, MPIU_MIN, comm));
  PetscCheck(!bad[0], comm, PETSC_ERR_ARG_SIZ, "sigma must have one entry per local cell (height-0 point of the DMPlex, in stratum order) on every rank: here it has %" PetscInt_FMT " local entries for %" PetscInt_FMT " cells", n, cEnd - cStart);
  PetscCheck(!bad[1], comm, PETSC_ERR_ARG_OUTOFRANGE, "sigma has NaN or infinite entries");
  PetscCheck(smin > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "sigma must be positive in every cell; its smallest entry is %g", (double)smin);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The n vertices of a cell of any depth, down its cones */
static PetscErrorCode CellVertices(DM dm, PetscInt vStart, PetscInt vEnd, PetscInt n, PetscInt c, PetscInt v[])
{
  PetscInt pts[64], np = 1, k = 0;

  PetscFunctionBegin;
  pts[0] = c;
  for (PetscInt j = 0; j < np; j++) {
    const PetscInt *cone;
    PetscInt        ncone, l;

    if (pts[j] >= vStart && pts[j] < vEnd) {
      for (l = 0; l < k; l++)
        if (v[l] == pts[j]) break;
      if (l == k) {
        PetscCheck(k < n, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cell %" PetscInt_FMT " has more than %" PetscInt_FMT " vertices", c, n);
        v[k++] = pts[j];
      }
      continue;
    }
    PetscCall(DMPlexGetConeSize(dm, pts[j], &ncone));
    PetscCall(DMPlexGetCone(dm, pts[j], &cone));
    PetscCheck(np + ncone <= 64, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cell %" PetscInt_FMT ": cone tree too large", c);
    for (l = 0; l < ncone; l++) pts[np++] = cone[l];
  }
  PetscCheck(k == n, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cell %" PetscInt_FMT " has %" PetscInt_FMT " vertices, not %" PetscInt_FMT, c, k, n);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The vertices of a triangle or tetrahedron of an interpolated mesh, with few cone lookups: two edges of
   (the first face of) the cell give three vertices, the first edge of the second face with another
   vertex the fourth */
static PetscErrorCode SimplexVertices(DM dm, PetscInt dim, PetscInt c, PetscInt v[])
{
  const PetscInt *cone, *face, *e0, *e1;

  PetscFunctionBegin;
  PetscCall(DMPlexGetCone(dm, c, &cone));
  if (dim == 3) PetscCall(DMPlexGetCone(dm, cone[0], &face));
  else face = cone;
  PetscCall(DMPlexGetCone(dm, face[0], &e0));
  PetscCall(DMPlexGetCone(dm, face[1], &e1));
  v[0] = e0[0];
  v[1] = e0[1];
  v[2] = e1[0] == v[0] || e1[0] == v[1] ? e1[1] : e1[0];
  if (dim == 3) {
    PetscInt k;

    v[3] = -1;
    PetscCall(DMPlexGetCone(dm, cone[1], &face));
    for (k = 0; k < 3 && v[3] < 0; k++) {
      PetscCall(DMPlexGetCone(dm, face[k], &e0));
      for (PetscInt l = 0; l < 2; l++)
        if (e0[l] != v[0] && e0[l] != v[1] && e0[l] != v[2]) v[3] = e0[l];
    }
    PetscCheck(v[3] >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Tetrahedron %" PetscInt_FMT ": its second face has no fourth vertex", c);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* What the host gathers from the mesh: the layout (new vertex and cell numbers), coordinates and sigma
   in its order, and the global row of each vertex */
typedef struct {
  PatchworkP1Layout L;
  double           *coords; /* [dim*nvert], structure of arrays */
  double           *sigma;  /* [ncell] or NULL */
  PetscInt         *grow;   /* [nvert] global row of each (new) vertex */
} P1Mesh;

static PetscErrorCode P1MeshDestroy(P1Mesh *m)
{
  PetscFunctionBegin;
  PatchworkP1LayoutDestroy(&m->L);
  PetscCall(PetscFree(m->coords));
  PetscCall(PetscFree(m->sigma));
  PetscCall(PetscFree(m->grow));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode P1MeshCreate(DM dm, PetscInt dim, Vec sigma, size_t patch_bytes, P1Mesh *m)
{
  PetscInt               vStart, vEnd, cStart, cEnd, nv, nowned = 0, nleaves, depth;
  const PetscInt        *ilocal, *l2g;
  PetscSection           lsec, csec;
  ISLocalToGlobalMapping ltog;
  PetscSF                sf;
  DM                     cdm;
  Vec                    cvec;
  const PetscScalar     *x;
  PetscBool             *leaf;
  PetscInt              *lidx, *owned;
  int                   *cells;
  const int              n = (int)dim + 1;
  int                    ret;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(m, sizeof(*m)));
  PetscCall(DMPlexGetDepthStratum(dm, 0, &vStart, &vEnd));
  PetscCall(DMPlexGetHeightStratum(dm, 0, &cStart, &cEnd));
  nv = vEnd - vStart;
  PetscCheck(cEnd - cStart < PETSC_MAX_INT && (PetscInt64)(cEnd - cStart) * n < PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_SUP, "Too many cells on one rank for 32-bit indices");

  /* the local dof of every vertex: its number in the kernel's old numbering */
  PetscCall(DMGetLocalSection(dm, &lsec));
  PetscCall(PetscMalloc1(nv, &lidx));
  for (PetscInt v = vStart; v < vEnd; v++) {
    PetscInt off;
    PetscCall(PetscSectionGetOffset(lsec, v, &off));
    PetscCheck(off >= 0 && off < nv, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Vertex %" PetscInt_FMT " has local offset %" PetscInt_FMT " outside [0, %" PetscInt_FMT ")", v, off, nv);
    lidx[v - vStart] = off;
  }

  /* the cells this rank owns (not leaves of the point SF: with overlap, other ranks' cells are here too) */
  PetscCall(PetscCalloc1(cEnd - cStart, &leaf));
  PetscCall(DMGetPointSF(dm, &sf));
  PetscCall(PetscSFGetGraph(sf, NULL, &nleaves, &ilocal, NULL));
  for (PetscInt i = 0; i < nleaves; i++) {
    const PetscInt p = ilocal ? ilocal[i] : i;
    if (p >= cStart && p < cEnd) leaf[p - cStart] = PETSC_TRUE;
  }
  PetscCall(PetscMalloc1(cEnd - cStart, &owned));
  for (PetscInt c = cStart; c < cEnd; c++)
    if (!leaf[c - cStart]) owned[nowned++] = c;
  PetscCall(PetscFree(leaf));

  /* their vertices, from the cones (DMPlexGetTransitiveClosure() looks up cell types on the way: 40% of
     the assembly on PETSc 3.18); the order does not matter to the element matrix */
  PetscCall(DMPlexGetDepth(dm, &depth));
  PetscCall(PetscMalloc1((size_t)nowned * n, &cells));
  for (PetscInt i = 0; i < nowned; i++) {
    PetscInt v[4];

    if (depth == dim) PetscCall(SimplexVertices(dm, dim, owned[i], v));
    else PetscCall(CellVertices(dm, vStart, vEnd, n, owned[i], v));
    for (PetscInt k = 0; k < n; k++) {
      PetscCheck(v[k] >= vStart && v[k] < vEnd, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cell %" PetscInt_FMT ": point %" PetscInt_FMT " is not a vertex", owned[i], v[k]);
      cells[(size_t)i * n + k] = (int)lidx[v[k] - vStart];
    }
  }

  ret = PatchworkP1LayoutCreate((int)dim, (int)nv, (long long)nowned, cells, patch_bytes, &m->L);
  PetscCheck(ret != 2, PETSC_COMM_SELF, PETSC_ERR_MEM, "Out of memory in PatchworkP1LayoutCreate()");
  PetscCheck(ret == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PatchworkP1LayoutCreate() refused the cell list");
  PetscCall(PetscFree(cells));

  /* coordinates and sigma in the layout's order, global rows */
  PetscCall(DMGetCoordinateDM(dm, &cdm));
  PetscCall(DMGetLocalSection(cdm, &csec));
  PetscCall(DMGetCoordinatesLocal(dm, &cvec));
  PetscCall(PetscMalloc1((size_t)dim * nv, &m->coords));
  {
    PetscInt *vert; /* the vertex point of each local dof */

    PetscCall(PetscMalloc1(nv, &vert));
    for (PetscInt v = 0; v < nv; v++) vert[lidx[v]] = vStart + v;
    PetscCall(VecGetArrayRead(cvec, &x));
    for (PetscInt r = 0; r < nv; r++) {
      PetscInt off;
      PetscCall(PetscSectionGetOffset(csec, vert[m->L.perm[r]], &off));
      for (PetscInt d = 0; d < dim; d++) m->coords[d * nv + r] = (double)PetscRealPart(x[off + d]);
    }
    PetscCall(VecRestoreArrayRead(cvec, &x));
    PetscCall(PetscFree(vert));
  }
  if (sigma) {
    const PetscScalar *s;

    PetscCall(PetscMalloc1(m->L.ncell, &m->sigma));
    PetscCall(VecGetArrayRead(sigma, &s));
    for (long long c = 0; c < m->L.ncell; c++) m->sigma[c] = (double)PetscRealPart(s[owned[m->L.cell_perm[c]] - cStart]);
    PetscCall(VecRestoreArrayRead(sigma, &s));
  }
  PetscCall(PetscFree(owned));
  PetscCall(PetscFree(lidx));
  PetscCall(DMGetLocalToGlobalMapping(dm, &ltog));
  PetscCall(ISLocalToGlobalMappingGetIndices(ltog, &l2g));
  PetscCall(PetscMalloc1(nv, &m->grow));
  for (PetscInt r = 0; r < nv; r++) m->grow[r] = l2g[m->L.perm[r]];
  PetscCall(ISLocalToGlobalMappingRestoreIndices(ltog, &l2g));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The values on the device: upload the layout, run the patch kernel, hand the device array to PETSc */
static PetscErrorCode SetValuesDevice(Mat A, const PatchworkP1Desc *h, PatchworkP1Errors *err)
{
#if defined(PATCHWORK_HAVE_CUDA)
  const int        n   = h->dim + 1;
  const long long  nnz = h->nnz;
  PatchworkP1Desc  d   = *h;
  void            *stream, *work;
  double          *coords, *sigma = NULL, *vals;
  int             *cells, *col, *patch_ptr;
  long long       *rowptr, *patch_cell;
  size_t           up = 0;

  PetscFunctionBegin;
  PetscCall(PatchworkGetDeviceStream(&stream));
  #define UPLOAD(dst, src, count) \
    do { \
      const size_t bytes_ = (size_t)(count) * sizeof(*(src)); \
      PatchworkCallKernel(PatchworkDeviceMalloc(bytes_ ? bytes_ : 1, (void **)&(dst))); \
      if (bytes_) PatchworkCallKernel(PatchworkDeviceCopyToDevice((dst), (src), bytes_, stream)); \
      up += bytes_; \
    } while (0)
  UPLOAD(coords, h->coords, (size_t)h->dim * h->nvert);
  UPLOAD(cells, h->cells, (size_t)n * h->ncell);
  if (h->sigma) UPLOAD(sigma, h->sigma, h->ncell);
  UPLOAD(rowptr, h->rowptr, (size_t)h->nvert + 1);
  UPLOAD(col, h->col, nnz);
  UPLOAD(patch_ptr, h->patch_ptr, (size_t)h->npatch + 1);
  UPLOAD(patch_cell, h->patch_cell, (size_t)h->npatch + 1);
  #undef UPLOAD
  PetscCall(PetscLogCpuToGpu((PetscLogDouble)up));
  d.coords     = coords;
  d.cells      = cells;
  d.sigma      = sigma;
  d.rowptr     = rowptr;
  d.col        = col;
  d.patch_ptr  = patch_ptr;
  d.patch_cell = patch_cell;
  PatchworkCallKernel(PatchworkDeviceMalloc((size_t)(nnz ? nnz : 1) * sizeof(double), (void **)&vals));
  PatchworkCallKernel(PatchworkDeviceMalloc(PatchworkP1WorkBytes(&d), &work));

  PetscCall(PetscLogEventBegin(P1_Values, A, 0, 0, 0));
  PetscCall(PetscLogGpuTimeBegin());
  PatchworkCallKernel(PatchworkP1AssembleCUDA(&d, vals, work, err, stream)); /* waits for the stream: err */
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuFlops((h->dim == 3 ? 150.0 : 60.0) * (PetscLogDouble)h->ncell));
  PetscCall(PetscLogEventEnd(P1_Values, A, 0, 0, 0));
  PatchworkCallKernel(PatchworkDeviceFree(work));
  PatchworkCallKernel(PatchworkDeviceFree(coords));
  PatchworkCallKernel(PatchworkDeviceFree(cells));
  if (sigma) PatchworkCallKernel(PatchworkDeviceFree(sigma));
  PatchworkCallKernel(PatchworkDeviceFree(rowptr));
  PatchworkCallKernel(PatchworkDeviceFree(col));
  PatchworkCallKernel(PatchworkDeviceFree(patch_ptr));
  PatchworkCallKernel(PatchworkDeviceFree(patch_cell));

  PetscCall(PetscLogEventBegin(P1_SetValues, A, 0, 0, 0));
  PetscCall(MatSetValuesCOO(A, vals, INSERT_VALUES));
  PetscCall(PetscLogEventEnd(P1_SetValues, A, 0, 0, 0));
  PatchworkCallKernel(PatchworkDeviceFree(vals));
  PetscFunctionReturn(PETSC_SUCCESS);
#else
  PetscFunctionBegin;
  (void)h;
  (void)err;
  SETERRQ(PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "A device matrix, but Patchwork was built without CUDA");
#endif
}

static PetscErrorCode SetValuesHost(Mat A, const PatchworkP1Desc *d, PatchworkP1Errors *err)
{
  const long long nnz = d->nnz;
  PetscScalar    *vals;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(nnz, &vals));
  PetscCall(PetscLogEventBegin(P1_Values, A, 0, 0, 0));
  PatchworkP1AssembleRef(d, (double *)vals, err);
  PetscCall(PetscLogFlops((d->dim == 3 ? 150.0 : 60.0) * (PetscLogDouble)d->ncell));
  PetscCall(PetscLogEventEnd(P1_Values, A, 0, 0, 0));
  PetscCall(PetscLogEventBegin(P1_SetValues, A, 0, 0, 0));
  PetscCall(MatSetValuesCOO(A, vals, INSERT_VALUES));
  PetscCall(PetscLogEventEnd(P1_SetValues, A, 0, 0, 0));
  PetscCall(PetscFree(vals));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PatchworkDMPlexAssembleP1 - Assemble the P1 finite element matrix of -div(sigma grad u) + lambda u
  with natural (Neumann) boundary conditions on a DMPlex of triangles or tetrahedra

  Collective

  Input Parameters:
+ dm     - the DMPlex: 2D triangles or 3D tetrahedra (one cell type), straight cells, any distribution
. lambda - the reaction coefficient, >= 0 (0 gives the singular Neumann Laplacian)
- sigma  - the diffusion coefficient, one positive value per local cell (the height-0 points of the
           DMPlex in stratum order, i.e. entry c - cStart for cell c), or `NULL` for 1

  Output Parameter:
. A - the assembled matrix, of the type `DMGetMatType()` gives (`-dm_mat_type aijcusparse` for the GPU)

  Options Database Key:
. -patchwork_p1_patch_bytes <49152> - shared memory a patch of the GPU assembly may fill, at most the
                                      device's per-block limit (227 KB on H100/H200); smaller: more, smaller
                                      patches, more entries added through global memory

  Notes:
  The element matrices are exact: A_kl = sigma |T| grad phi_k . grad phi_l + lambda |T| (1 + delta_kl) / ((d+1)(d+2))
  for a cell T of dimension d (Fu et al. 2014, equation 4). Rows and columns follow the DM's P1 section:
  the global numbering of `DMCreateGlobalVector()`, so that `MatCreateVecs()` and the DM's vectors agree.

  The DM needs one scalar P1 field: when it has no field, this function gives it one (a `PetscFE` from
  `PetscFECreateLagrange()` of degree 1 with a quadrature of order 2, named "u", and its `PetscDS`), so that
  the caller can make vectors with `DMCreateGlobalVector()` and PETSc's own FEM assembly on the same DM
  gives the same matrix. A DM that already has a field must have exactly one, with one dof per vertex and
  none elsewhere, and no constraints (natural boundary conditions only).

  Each rank computes the element matrices of the cells it owns (not the leaves of the point SF) into the
  rows of its local vertices; `MatSetValuesCOO()` sums rows of vertices owned by other ranks there. On a
  CUDA matrix type (aijcusparse) the values are computed on the GPU by the patch-based hierarchical
  assembly of Fu et al. (vertices partitioned into patches, a CUDA block per patch accumulating its rows
  in shared memory) and handed to PETSc on the device; otherwise by the CPU reference.

  The matrix is marked symmetric, and symmetric positive definite when lambda > 0. It is a new matrix on
  every call; the DM is attached to it (`MatGetDM()`). `-log_view` shows PWP1SetUp (checks, the P1 field
  and its sections), PWP1Layout (mesh, pattern and patches), PWP1Preallocate (the COO pattern to PETSc),
  PWP1Values (element matrices and their sums) and PWP1SetValues.

  Level: beginner

.seealso: `MatCreatePatchworkTensor()`, `DMSetMatType()`, `DMPlexSNESComputeJacobianFEM()`
@*/
PetscErrorCode PatchworkDMPlexAssembleP1(DM dm, PetscReal lambda, Vec sigma, Mat *A)
{
  MPI_Comm          comm;
  PetscInt          dim, nrow, ncoo_int = 0;
  PetscInt          patch_bytes = 48 * 1024;
  PetscInt         *ci, *cj;
  PetscSection      gsec;
  P1Mesh            m;
  PatchworkP1Desc   d;
  PatchworkP1Errors err    = {0, 0};
  long long         bad[2] = {0, 0};
  MatType           mtype;
  PetscBool         isaij, device = PETSC_FALSE;
  Mat               B;

  PetscFunctionBegin;
  PatchworkAssertPointer(dm, 1);
  PatchworkAssertPointer(A, 4);
  comm = PetscObjectComm((PetscObject)dm);
  PetscCall(PatchworkInitializePackage());
  PetscCall(PetscCitationsRegister(citation, &cited));
  PetscCall(PatchworkLogEventRegisterOnce("PWP1SetUp", MAT_CLASSID, &P1_SetUp));
  PetscCall(PatchworkLogEventRegisterOnce("PWP1Layout", MAT_CLASSID, &P1_Layout));
  PetscCall(PatchworkLogEventRegisterOnce("PWP1Preallocate", MAT_CLASSID, &P1_Preallocate));
  PetscCall(PatchworkLogEventRegisterOnce("PWP1Values", MAT_CLASSID, &P1_Values));
  PetscCall(PatchworkLogEventRegisterOnce("PWP1SetValues", MAT_CLASSID, &P1_SetValues));
  PetscOptionsBegin(comm, NULL, "Patchwork P1 assembly", "Mat");
  PetscCall(PetscOptionsInt("-patchwork_p1_patch_bytes", "Shared memory a patch of the GPU assembly may fill", "PatchworkDMPlexAssembleP1", patch_bytes, &patch_bytes, NULL));
  PetscOptionsEnd();
  PetscCheck(patch_bytes >= 0 && patch_bytes <= 1048576, comm, PETSC_ERR_ARG_OUTOFRANGE, "-patchwork_p1_patch_bytes must be in [0, 1048576] (and on the GPU at most its shared memory per block), not %" PetscInt_FMT, patch_bytes);

  PetscCall(PetscLogEventBegin(P1_SetUp, dm, 0, 0, 0));
  PetscCall(CheckMesh(dm, &dim));
  PetscCall(CheckCoefficients(dm, lambda, sigma));
  PetscCall(SetP1Field(dm, dim));

  /* the matrix: rows of the DM's global section, the DM's AIJ type */
  PetscCall(DMGetGlobalSection(dm, &gsec));
  PetscCall(PetscSectionGetConstrainedStorageSize(gsec, &nrow));
  PetscCall(DMGetMatType(dm, &mtype));
  PetscCall(MatCreate(comm, &B));
  PetscCall(MatSetSizes(B, nrow, nrow, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatSetType(B, mtype ? mtype : MATAIJ));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)B, &isaij, MATSEQAIJ, MATMPIAIJ, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE, MATSEQAIJKOKKOS, MATMPIAIJKOKKOS, ""));
  if (!isaij) {
    const char *t;

    PetscCall(MatGetType(B, &t));
    PetscCall(MatDestroy(&B));
    PetscCall(PetscLogEventEnd(P1_SetUp, dm, 0, 0, 0));
    SETERRQ(comm, PETSC_ERR_SUP, "P1 assembly creates AIJ matrices (aij, aijcusparse, aijkokkos), not the DM's mat type %s", t);
  }
#if defined(PATCHWORK_HAVE_CUDA)
  PetscCall(PetscObjectTypeCompareAny((PetscObject)B, &device, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE, ""));
#endif
  PetscCall(PetscLogEventEnd(P1_SetUp, dm, 0, 0, 0));

  PetscCall(PetscLogEventBegin(P1_Layout, B, 0, 0, 0));
  PetscCall(P1MeshCreate(dm, dim, sigma, (size_t)patch_bytes, &m));
  PatchworkP1LayoutDesc(&m.L, &d);
  d.coords     = m.coords;
  d.sigma      = m.sigma;
  d.lambda     = (double)lambda;
  d.smem_bytes = (int)patch_bytes;
  PetscCall(PetscLogEventEnd(P1_Layout, B, 0, 0, 0));

  /* the rank-local pattern as COO (rows of other ranks' vertices included: PETSc sends them) */
  PetscCall(PetscLogEventBegin(P1_Preallocate, B, 0, 0, 0));
  PetscCheck(m.L.rowptr[m.L.nvert] < PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_SUP, "Too many matrix entries on one rank for 32-bit indices");
  ncoo_int = (PetscInt)m.L.rowptr[m.L.nvert];
  PetscCall(PetscMalloc2(ncoo_int, &ci, ncoo_int, &cj));
  for (int r = 0; r < m.L.nvert; r++)
    for (long long z = m.L.rowptr[r]; z < m.L.rowptr[r + 1]; z++) {
      ci[z] = m.grow[r];
      cj[z] = m.grow[m.L.col[z]];
    }
  PetscCall(MatSetPreallocationCOO(B, ncoo_int, ci, cj));
  PetscCall(PetscFree2(ci, cj));
  PetscCall(PetscLogEventEnd(P1_Preallocate, B, 0, 0, 0));

  if (device) PetscCall(SetValuesDevice(B, &d, &err));
  else PetscCall(SetValuesHost(B, &d, &err));
  PetscCall(P1MeshDestroy(&m));
  bad[0] = err.degenerate;
  bad[1] = err.missing;
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, bad, 2, MPI_LONG_LONG, MPI_SUM, comm));
  if (bad[0] || bad[1]) PetscCall(MatDestroy(&B));
  PetscCheck(!bad[0], comm, PETSC_ERR_ARG_WRONG, "%lld cells of the mesh are degenerate (zero volume, or coordinates not finite)", bad[0]);
  PetscCheck(!bad[1], comm, PETSC_ERR_PLIB, "%lld element entries missing from the P1 pattern", bad[1]);

  {
    ISLocalToGlobalMapping ltog;

    PetscCall(DMGetLocalToGlobalMapping(dm, &ltog));
    PetscCall(MatSetLocalToGlobalMapping(B, ltog, ltog));
  }
  PetscCall(MatSetDM(B, dm));
  PetscCall(MatSetOption(B, MAT_SYMMETRIC, PETSC_TRUE));
  if (lambda > 0) PetscCall(MatSetOption(B, MAT_SPD, PETSC_TRUE));
  *A = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}
