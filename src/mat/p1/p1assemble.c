/* Assembly of the P1 Helmholtz matrix -div(sigma grad u) + lambda u on a DMPlex of triangles or
   tetrahedra (Fu et al. 2014, sections 3 and 4). The host numbers the rows from the vertices and the
   point SF (as the DM's global section would), reads the mesh (vertex coordinates, the vertices of the
   cells this rank owns), derives the layout of include/patchwork/p1_kernel.h (vertex graph pattern; for
   the GPU, patches), hands the pattern to PETSc as COO, and has the values computed by the CPU reference
   or, for a CUDA matrix, by the patch-based kernel on the device; MatSetValuesCOO() then sums the
   rank-local rows into the parallel matrix (rows of vertices another rank owns travel there). On one rank
   with the plain AIJ type the CPU's pattern is the matrix's CSR itself (MatSeqAIJSetPreallocationCSR()),
   and the values go straight into its rows. The layout stays with the matrix, so that
   PatchworkDMPlexReassembleP1() recomputes only the values. */
#include "../../sys/pwimpl.h"
#include <petsc/private/petscimpl.h> /* PetscObjectStateGet(): moved coordinates are read again */
#include <petsc/private/dmimpl.h>    /* dm->globalSection: a global section the DM has already is used */
#include <petscfe.h>
#include <petscsf.h>
#include <petscbt.h>
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
  { /* fast: every cell has the wanted type when that many points have it (they can only be cells); on a
       mesh without edges and faces when every cone has dim + 1 vertices (PETSc has no cell types for it
       yet and would compute the type of every point: 41 of the 89 s of an assembly at 101M tetrahedra) */
    DMLabel     ctlabel;
    PetscInt    n, depth;
    PetscMPIInt flags[2];

    PetscCall(DMPlexGetDepth(dm, &depth));
    if (depth == 1) {
      n = 0;
      for (PetscInt c = cStart; c < cEnd; c++) {
        PetscInt size;

        PetscCall(DMPlexGetConeSize(dm, c, &size));
        n += size == *dim + 1;
      }
    } else {
      PetscCall(DMPlexGetCellTypeLabel(dm, &ctlabel));
      PetscCall(DMLabelGetStratumSize(ctlabel, (PetscInt)want, &n));
    }
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

/* The global row of every local dof (indexed by its offset in the DM's local section) and the number of
   rows this rank owns: the numbering of the DM's global section, made from the vertices alone. That section
   (PetscSectionCreateGlobalSection()) numbers the dofs of the points that are not leaves of the point SF in
   their local order, after those of the lower ranks, and gives a leaf the number of its root; building it
   visits every point of the mesh with several calls each, 4.9 of the 25 s this assembly took at 2.1M
   vertices, 12.6M tetrahedra (55M points; and its local-to-global mapping 0.5 s more). PETSc still builds it
   when asked (DMCreateGlobalVector()), not here. A global section the DM has already (the caller's, or one
   built before) is read as it is, and so is PETSc's for a local section with a permutation. */
static PetscErrorCode P1GlobalRows(DM dm, PetscInt *orstart, PetscInt *onown, PetscInt **ogidx)
{
  MPI_Comm           comm = PetscObjectComm((PetscObject)dm);
  PetscSection       lsec;
  IS                 lperm;
  PetscSF            sf;
  PetscInt           vStart, vEnd, nv, nleaves, nghost = 0, nown, rstart = 0, k = 0, *gidx;
  const PetscInt    *ilocal;
  const PetscSFNode *iremote;
  PetscMPIInt        size, rank, theirs;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(DMPlexGetDepthStratum(dm, 0, &vStart, &vEnd));
  nv = vEnd - vStart;
  PetscCall(DMGetLocalSection(dm, &lsec));
  PetscCall(PetscSectionGetPermutation(lsec, &lperm));
  PetscCall(PetscMalloc1(nv, &gidx));
  theirs = (PetscMPIInt)(lperm || dm->globalSection);
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &theirs, 1, MPI_INT, MPI_MAX, comm));
  if (theirs) { /* the DM's global section, as it is: a leaf's offset o there is -(o+1) */
    PetscSection gsec;

    PetscCall(DMGetGlobalSection(dm, &gsec));
    PetscCall(PetscSectionGetConstrainedStorageSize(gsec, &nown));
    for (PetscInt v = vStart; v < vEnd; v++) {
      PetscInt off, goff;

      PetscCall(PetscSectionGetOffset(lsec, v, &off));
      PetscCall(PetscSectionGetOffset(gsec, v, &goff));
      PetscCheck(off >= 0 && off < nv, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Vertex %" PetscInt_FMT " has local offset %" PetscInt_FMT " outside [0, %" PetscInt_FMT ")", v, off, nv);
      gidx[off] = goff < 0 ? -(goff + 1) : goff;
    }
    PetscCallMPI(MPI_Exscan(&nown, &rstart, 1, MPIU_INT, MPI_SUM, comm));
    *orstart = rank ? rstart : 0;
    *onown   = nown;
    *ogidx   = gidx;
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  /* the vertices that are leaves (-1; the others 0 for now), the offsets of the others in order */
  for (PetscInt i = 0; i < nv; i++) gidx[i] = 0;
  PetscCall(DMGetPointSF(dm, &sf));
  PetscCall(PetscSFGetGraph(sf, NULL, &nleaves, &ilocal, &iremote));
  nleaves = PetscMax(nleaves, 0);
  for (PetscInt i = 0; i < nleaves; i++) {
    const PetscInt p = ilocal ? ilocal[i] : i;
    PetscInt       off;

    if (p < vStart || p >= vEnd) continue;
    PetscCall(PetscSectionGetOffset(lsec, p, &off));
    PetscCheck(off >= 0 && off < nv, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Vertex %" PetscInt_FMT " has local offset %" PetscInt_FMT " outside [0, %" PetscInt_FMT ")", p, off, nv);
    gidx[off] = -1;
    nghost++;
  }
  nown = nv - nghost;
  PetscCallMPI(MPI_Exscan(&nown, &rstart, 1, MPIU_INT, MPI_SUM, comm));
  if (rank == 0) rstart = 0;
  for (PetscInt i = 0; i < nv; i++)
    if (gidx[i] == 0) gidx[i] = rstart + k++;

  /* the leaves' numbers from their roots, over the vertices: an SF from the ghost vertices to their owners'
     vertices (numbered from each rank's vStart), not the point SF with its arrays over every point */
  if (size > 1) {
    PetscSF      vsf;
    PetscSFNode *vremote;
    PetscInt    *range, *leafoff, *rootg, *leafg, j = 0;

    PetscCall(PetscMalloc1(2 * (size_t)size, &range));
    {
      const PetscInt mine[2] = {vStart, vEnd};
      PetscCallMPI(MPI_Allgather(mine, 2, MPIU_INT, range, 2, MPIU_INT, comm));
    }
    PetscCall(PetscMalloc1(nghost, &vremote));
    PetscCall(PetscMalloc3(nghost, &leafoff, nghost, &leafg, nv, &rootg));
    for (PetscInt i = 0; i < nleaves; i++) {
      const PetscInt    p = ilocal ? ilocal[i] : i;
      const PetscMPIInt r = (PetscMPIInt)iremote[i].rank;
      const PetscInt    q = iremote[i].index;

      if (p < vStart || p >= vEnd) continue;
      PetscCheck(r >= 0 && r < size && q >= range[2 * r] && q < range[2 * r + 1], PETSC_COMM_SELF, PETSC_ERR_PLIB, "Vertex %" PetscInt_FMT " is a leaf of point %" PetscInt_FMT " of rank %d, not a vertex there", p, q, (int)r);
      PetscCall(PetscSectionGetOffset(lsec, p, &leafoff[j]));
      vremote[j].rank  = r;
      vremote[j].index = q - range[2 * r];
      j++;
    }
    for (PetscInt v = vStart; v < vEnd; v++) {
      PetscInt off;

      PetscCall(PetscSectionGetOffset(lsec, v, &off));
      rootg[v - vStart] = gidx[off];
    }
    PetscCall(PetscSFCreate(comm, &vsf));
    PetscCall(PetscSFSetGraph(vsf, nv, nghost, NULL, PETSC_COPY_VALUES, vremote, PETSC_OWN_POINTER));
    PetscCall(PetscSFBcastBegin(vsf, MPIU_INT, rootg, leafg, MPI_REPLACE));
    PetscCall(PetscSFBcastEnd(vsf, MPIU_INT, rootg, leafg, MPI_REPLACE));
    PetscCall(PetscSFDestroy(&vsf));
    for (PetscInt i = 0; i < nghost; i++) {
      PetscCheck(leafg[i] >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "A ghost vertex's owner has no row for it");
      gidx[leafoff[i]] = leafg[i];
    }
    PetscCall(PetscFree3(leafoff, leafg, rootg));
    PetscCall(PetscFree(range));
  }
  *orstart = rstart;
  *onown   = nown;
  *ogidx   = gidx;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The cones of a DMPlex as its one array and section: DMPlexGetCone() per point costs a call and checks
   (this loop asks 6-7 cones of each of 1.6M tetrahedra at 275K vertices). A stratum whose points all have
   cones of one size (cells, faces, edges of a simplex mesh) has them side by side in that array, in point
   order (the section's offsets add up the sizes); PlexConesCreate() checks that at the stratum's ends and
   then GetCone() computes the offset instead of asking the section. direct: strata s = 0 .. dim-1 are the
   heights 0 .. dim-1, with the cone sizes of a simplex (SimplexVerticesDirect()) */
typedef struct {
  PetscSection    sec;
  const PetscInt *cones;
  PetscInt        nstrata;
  PetscInt        start[3], end[3], off[3], size[3]; /* point p of [start, end): cone at off + size (p - start) */
  PetscBool       direct;
} PlexCones;

static PetscErrorCode PlexConesCreate(DM dm, PetscInt dim, PlexCones *pc)
{
  PetscInt *cones;
  IS        perm;

  PetscFunctionBegin;
  PetscCall(DMPlexGetConeSection(dm, &pc->sec));
  PetscCall(DMPlexGetCones(dm, &cones));
  pc->cones   = cones;
  pc->nstrata = 0;
  pc->direct  = PETSC_FALSE;
  PetscCall(PetscSectionGetPermutation(pc->sec, &perm));
  if (perm) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt h = 0; h < PetscMin(dim, 3); h++) {
    PetscInt pStart, pEnd, off0, offl, size, sizel;

    PetscCall(DMPlexGetHeightStratum(dm, h, &pStart, &pEnd));
    if (pEnd <= pStart) continue;
    PetscCall(PetscSectionGetDof(pc->sec, pStart, &size));
    PetscCall(PetscSectionGetDof(pc->sec, pEnd - 1, &sizel));
    PetscCall(PetscSectionGetOffset(pc->sec, pStart, &off0));
    PetscCall(PetscSectionGetOffset(pc->sec, pEnd - 1, &offl));
    if (size < 1 || sizel != size || offl != off0 + size * (pEnd - 1 - pStart)) continue;
    pc->start[pc->nstrata] = pStart;
    pc->end[pc->nstrata]   = pEnd;
    pc->off[pc->nstrata]   = off0;
    pc->size[pc->nstrata]  = size;
    pc->nstrata++;
  }
  pc->direct = (PetscBool)(pc->nstrata == dim); /* then stratum s is height s */
  for (PetscInt s = 0; s < pc->nstrata; s++)
    if (pc->size[s] != (s == dim - 1 ? 2 : dim + 1 - s)) pc->direct = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline PetscErrorCode GetCone(const PlexCones *pc, PetscInt p, const PetscInt **cone)
{
  PetscInt off;

  PetscFunctionBegin;
  for (PetscInt s = 0; s < pc->nstrata; s++)
    if (p >= pc->start[s] && p < pc->end[s]) {
      *cone = pc->cones + pc->off[s] + pc->size[s] * (p - pc->start[s]);
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  PetscCall(PetscSectionGetOffset(pc->sec, p, &off));
  *cone = pc->cones + off;
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
static PetscErrorCode SimplexVertices(const PlexCones *pc, PetscInt dim, PetscInt c, PetscInt v[])
{
  const PetscInt *cone = NULL, *face = NULL, *e0 = NULL, *e1 = NULL;

  PetscFunctionBegin;
  PetscCall(GetCone(pc, c, &cone));
  if (dim == 3) PetscCall(GetCone(pc, cone[0], &face));
  else face = cone;
  PetscCall(GetCone(pc, face[0], &e0));
  PetscCall(GetCone(pc, face[1], &e1));
  v[0] = e0[0];
  v[1] = e0[1];
  v[2] = e1[0] == v[0] || e1[0] == v[1] ? e1[1] : e1[0];
  if (dim == 3) {
    PetscInt k;

    v[3] = -1;
    PetscCall(GetCone(pc, cone[1], &face));
    for (k = 0; k < 3 && v[3] < 0; k++) {
      PetscCall(GetCone(pc, face[k], &e0));
      for (PetscInt l = 0; l < 2; l++)
        if (e0[l] != v[0] && e0[l] != v[1] && e0[l] != v[2]) v[3] = e0[l];
    }
    PetscCheck(v[3] >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Tetrahedron %" PetscInt_FMT ": its second face has no fourth vertex", c);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The cone of point p of stratum h (as PlexConesCreate() found them) when p is in it, else NULL */
static inline const PetscInt *DirectCone(const PlexCones *pc, PetscInt h, PetscInt p)
{
  const PetscInt q = p - pc->start[h];

  return q >= 0 && q < pc->end[h] - pc->start[h] ? pc->cones + pc->off[h] + pc->size[h] * q : NULL;
}

/* SimplexVertices() on a mesh whose strata hold the cones side by side (pc->direct), without the search
   for each point's stratum: the same vertices in the same order. PETSC_FALSE where a cone leaves the
   strata or no fourth vertex turns up: SimplexVertices() then says what is wrong */
static inline PetscBool SimplexVerticesDirect(const PlexCones *pc, PetscInt dim, PetscInt c, PetscInt v[])
{
  const PetscInt *cone = DirectCone(pc, 0, c), *face, *e0, *e1;

  if (!cone) return PETSC_FALSE;
  face = dim == 3 ? DirectCone(pc, 1, cone[0]) : cone;
  if (!face) return PETSC_FALSE;
  e0 = DirectCone(pc, dim - 1, face[0]);
  e1 = DirectCone(pc, dim - 1, face[1]);
  if (!e0 || !e1) return PETSC_FALSE;
  v[0] = e0[0];
  v[1] = e0[1];
  v[2] = e1[0] == v[0] || e1[0] == v[1] ? e1[1] : e1[0];
  if (dim == 3) {
    v[3] = -1;
    if (!(face = DirectCone(pc, 1, cone[1]))) return PETSC_FALSE;
    for (PetscInt k = 0; k < 3 && v[3] < 0; k++) {
      if (!(e0 = DirectCone(pc, 2, face[k]))) return PETSC_FALSE;
      for (PetscInt l = 0; l < 2; l++)
        if (e0[l] != v[0] && e0[l] != v[1] && e0[l] != v[2]) v[3] = e0[l];
    }
    if (v[3] < 0) return PETSC_FALSE;
  }
  return PETSC_TRUE;
}

/* What a matrix of PatchworkDMPlexAssembleP1() keeps for its values (composed on it, freed with it): the
   layout, the coordinates in its order, the sigma entry of each of its cells, the position of each
   pattern entry in the COO list PETSc was given; on the device their copies and the value buffers,
   made by the first assembly there */
typedef struct {
  DM                dm;                 /* the DM (no reference: the matrix holds one, MatGetDM()) */
  PetscInt          ncell_dm, nvert_dm; /* its cells and vertices: a changed mesh is refused */
  PetscInt          patch_bytes;
  PatchworkP1Layout L;
  double           *coords;    /* [dim*nvert] in the layout's order */
  PetscInt         *coord_off; /* [nvert] where each layout vertex is in the local coordinates */
  PetscObjectId     coord_id;  /* the local coordinate Vec read, and its state then */
  PetscObjectState  coord_state;
  int              *sigma_map; /* [ncell] the local cell (c - cStart) of each layout cell: sigma's entry */
  long long        *vals_pos;  /* [nnz] position of each pattern entry in the COO list (NULL: the same) */
  PetscBool         csr;       /* the pattern is the CSR of the (MATSEQAIJ) matrix: no COO, values copied in */
  PetscBool         listcsr;   /* one rank: the COO list, sorted, is the matrix's CSR (values copied in, list order) */
  double           *sigma_buf; /* [ncell_dm] sigma as double where PetscScalar is not (complex, single) */
  struct {
    PetscBool  ready, coords_stale;
    double    *coords, *sigma, *vals; /* sigma: [ncell_dm] a host Vec's values copied */
    int       *cells, *col, *patch_ptr, *sigma_map;
    long long *rowptr, *patch_cell, *vals_pos;
    void      *work;
  } dev;
} P1Ctx;

static const char P1CtxName[] = "PatchworkDMPlexAssembleP1_Layout";

static PetscErrorCode P1CtxDestroy(P1Ctx *ctx)
{
  PetscFunctionBegin;
  if (!ctx) PetscFunctionReturn(PETSC_SUCCESS);
#if defined(PATCHWORK_HAVE_CUDA) /* (NULL pointers: no call to CUDA) */
  PatchworkCallKernel(PatchworkDeviceFree(ctx->dev.coords));
  PatchworkCallKernel(PatchworkDeviceFree(ctx->dev.sigma));
  PatchworkCallKernel(PatchworkDeviceFree(ctx->dev.vals));
  PatchworkCallKernel(PatchworkDeviceFree(ctx->dev.cells));
  PatchworkCallKernel(PatchworkDeviceFree(ctx->dev.col));
  PatchworkCallKernel(PatchworkDeviceFree(ctx->dev.patch_ptr));
  PatchworkCallKernel(PatchworkDeviceFree(ctx->dev.sigma_map));
  PatchworkCallKernel(PatchworkDeviceFree(ctx->dev.rowptr));
  PatchworkCallKernel(PatchworkDeviceFree(ctx->dev.patch_cell));
  PatchworkCallKernel(PatchworkDeviceFree(ctx->dev.vals_pos));
  PatchworkCallKernel(PatchworkDeviceFree(ctx->dev.work));
#endif
  PatchworkP1LayoutDestroy(&ctx->L);
  PetscCall(PetscFree(ctx->coords));
  PetscCall(PetscFree(ctx->coord_off));
  PetscCall(PetscFree(ctx->sigma_map));
  PetscCall(PetscFree(ctx->vals_pos));
  PetscCall(PetscFree(ctx->sigma_buf));
  PetscCall(PetscFree(ctx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The container's destroy callback (its argument: src/sys/compat.h) */
static PetscErrorCode P1CtxContainerDestroy(void *arg)
{
  PetscFunctionBegin;
  PetscCall(P1CtxDestroy((P1Ctx *)PatchworkContainerCtx(arg)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Give ctx to B: it goes with B */
static PetscErrorCode P1CtxAttach(Mat B, P1Ctx *ctx)
{
  PetscContainer container;

  PetscFunctionBegin;
  PetscCall(PetscContainerCreate(PetscObjectComm((PetscObject)B), &container));
  PetscCall(PetscContainerSetPointer(container, ctx));
  PetscCall(PatchworkContainerSetDestroy(container, P1CtxContainerDestroy));
  PetscCall(PetscObjectCompose((PetscObject)B, P1CtxName, (PetscObject)container));
  PetscCall(PetscContainerDestroy(&container));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The vertex coordinates in the layout's order, noting which Vec (and state) they came from: a moved
   mesh is read again */
static PetscErrorCode P1CtxReadCoordinates(P1Ctx *ctx, DM dm)
{
  const PetscInt     nv = ctx->L.nvert, dim = ctx->L.dim;
  Vec                cvec;
  const PetscScalar *x;

  PetscFunctionBegin;
  PetscCall(DMGetCoordinatesLocalSetUp(dm));
  PetscCall(DMGetCoordinatesLocal(dm, &cvec));
  if (!ctx->coords) PetscCall(PetscMalloc1((size_t)dim * nv, &ctx->coords));
  PetscCall(VecGetArrayRead(cvec, &x));
  for (PetscInt r = 0; r < nv; r++)
    for (PetscInt d = 0; d < dim; d++) ctx->coords[d * nv + r] = (double)PetscRealPart(x[ctx->coord_off[r] + d]);
  PetscCall(VecRestoreArrayRead(cvec, &x));
  PetscCall(PetscObjectGetId((PetscObject)cvec, &ctx->coord_id));
  PetscCall(PetscObjectStateGet((PetscObject)cvec, &ctx->coord_state));
  ctx->dev.coords_stale = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the DM's coordinates changed since they were read (DMSetCoordinates(), or the local Vec written) */
static PetscErrorCode P1CtxCoordinatesChanged(P1Ctx *ctx, DM dm, PetscBool *changed)
{
  Vec              cvec;
  PetscObjectId    id;
  PetscObjectState state;

  PetscFunctionBegin;
  PetscCall(DMGetCoordinatesLocalSetUp(dm));
  PetscCall(DMGetCoordinatesLocal(dm, &cvec));
  PetscCall(PetscObjectGetId((PetscObject)cvec, &id));
  PetscCall(PetscObjectStateGet((PetscObject)cvec, &state));
  *changed = (PetscBool)(id != ctx->coord_id || state != ctx->coord_state);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The numbering of the CPU layout, new vertex -> local dof: the order of the rows of the COO list
   (P1Preallocate()), this rank's rows rstart .. rstart+nown-1 first, then the other ranks' vertices by
   their global row. NULL when that is the local order (no vertex of another rank here) */
static PetscErrorCode P1RowOrder(PetscInt nv, PetscInt rstart, PetscInt nown, const PetscInt gidx[], int **oorder)
{
  PetscInt *gkey, *goff, nghost = 0;
  int      *order;
  PetscBool identity = PETSC_TRUE;

  PetscFunctionBegin;
  *oorder = NULL;
  PetscCall(PetscMalloc1(nv, &order));
  PetscCall(PetscMalloc2(nv - nown, &gkey, nv - nown, &goff));
  for (PetscInt i = 0; i < nv; i++) {
    if (gidx[i] >= rstart && gidx[i] < rstart + nown) order[gidx[i] - rstart] = (int)i;
    else {
      PetscCheck(nghost < nv - nown, PETSC_COMM_SELF, PETSC_ERR_PLIB, "More than %" PetscInt_FMT " local vertices of other ranks", nv - nown);
      gkey[nghost]   = gidx[i];
      goff[nghost++] = i;
    }
  }
  PetscCheck(nghost == nv - nown, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%" PetscInt_FMT " local vertices of other ranks, not %" PetscInt_FMT, nghost, nv - nown);
  PetscCall(PetscSortIntWithArray(nghost, gkey, goff));
  for (PetscInt i = 0; i < nghost; i++) order[nown + i] = (int)goff[i];
  PetscCall(PetscFree2(gkey, goff));
  for (PetscInt i = 0; i < nv && identity; i++) identity = (PetscBool)(order[i] == i);
  if (identity) PetscCall(PetscFree(order));
  *oorder = order;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The layout of the cells this rank owns and what the values need (ctx), and the global row of each
   layout vertex (grow, for the COO list). gidx: the global row of each local dof (P1GlobalRows()), this
   rank's rows rstart .. rstart+nown-1. With patches (the GPU's) the layout's patches feed the CUDA kernel;
   without (the CPU's) the vertices are numbered in the order of the COO list's rows and the cells stay in
   their order (PatchworkP1LayoutCreateOrdered()): the reference sums straight into the list's order, with
   no vals_pos, and no patches are grown */
static PetscErrorCode P1CtxCreate(DM dm, PetscInt dim, PetscInt patch_bytes, PetscBool patches, PetscInt rstart, PetscInt nown, const PetscInt gidx[], P1Ctx **octx, PetscInt **ogrow)
{
  PetscInt           vStart, vEnd, cStart, cEnd, nv, nc, nowned, ncleaf = 0, nleaves, depth;
  const PetscInt    *ilocal;
  PetscSection       lsec, csec;
  PetscSF            sf;
  DM                 cdm;
  PetscInt          *lidx, *owned = NULL, *vert, *grow;
  int               *cells;
  const int          n = (int)dim + 1;
  int                ret;
  P1Ctx             *ctx;

  PetscFunctionBegin;
  PetscCall(PetscNew(&ctx));
  PetscCall(DMPlexGetDepthStratum(dm, 0, &vStart, &vEnd));
  PetscCall(DMPlexGetHeightStratum(dm, 0, &cStart, &cEnd));
  nv               = vEnd - vStart;
  nc               = cEnd - cStart;
  ctx->dm          = dm;
  ctx->ncell_dm    = nc;
  ctx->nvert_dm    = nv;
  ctx->patch_bytes = patch_bytes;
  PetscCheck(nc < PETSC_MAX_INT && (PetscInt64)nc * n < PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_SUP, "Too many cells on one rank for 32-bit indices");

  /* the local dof of every vertex: its number in the kernel's old numbering; and the vertex of each dof */
  PetscCall(DMGetLocalSection(dm, &lsec));
  PetscCall(PetscMalloc2(nv, &lidx, nv, &vert));
  for (PetscInt v = vStart; v < vEnd; v++) {
    PetscInt off;
    PetscCall(PetscSectionGetOffset(lsec, v, &off));
    PetscCheck(off >= 0 && off < nv, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Vertex %" PetscInt_FMT " has local offset %" PetscInt_FMT " outside [0, %" PetscInt_FMT ")", v, off, nv);
    lidx[v - vStart] = off;
    vert[off]        = v;
  }

  /* the cells this rank owns (not leaves of the point SF: with overlap, other ranks' cells are here too);
     all of them, owned stays NULL, when no cell is a leaf */
  PetscCall(DMGetPointSF(dm, &sf));
  PetscCall(PetscSFGetGraph(sf, NULL, &nleaves, &ilocal, NULL));
  for (PetscInt i = 0; i < nleaves; i++) {
    const PetscInt p = ilocal ? ilocal[i] : i;
    if (p >= cStart && p < cEnd) ncleaf++;
  }
  nowned = nc;
  if (ncleaf) {
    PetscBT leaf;

    PetscCall(PetscBTCreate(nc, &leaf));
    for (PetscInt i = 0; i < nleaves; i++) {
      const PetscInt p = ilocal ? ilocal[i] : i;
      if (p >= cStart && p < cEnd) PetscCall(PetscBTSet(leaf, p - cStart));
    }
    PetscCall(PetscMalloc1(nc, &owned));
    nowned = 0;
    for (PetscInt c = cStart; c < cEnd; c++)
      if (!PetscBTLookup(leaf, c - cStart)) owned[nowned++] = c;
    PetscCall(PetscBTDestroy(&leaf));
  }

  /* their vertices, from the cones (DMPlexGetTransitiveClosure() looks up cell types on the way: 40% of
     the assembly on PETSc 3.18); the order does not matter to the element matrix */
  PetscCall(DMPlexGetDepth(dm, &depth));
  PetscCall(PetscMalloc1((size_t)nowned * n, &cells));
  {
    PlexCones pc;

    PetscCall(PetscMemzero(&pc, sizeof(pc)));
    if (depth == dim) PetscCall(PlexConesCreate(dm, dim, &pc));
    else if (depth == 1) PetscCall(PlexConesCreate(dm, 1, &pc)); /* the cells' cones are their vertices */
    for (PetscInt i = 0; i < nowned; i++) {
      const PetscInt c = owned ? owned[i] : cStart + i;
      PetscInt       v[4];

      const PetscInt *cone = depth == 1 && pc.nstrata == 1 && pc.size[0] == n ? DirectCone(&pc, 0, c) : NULL;

      if (cone)
        for (PetscInt k = 0; k < n; k++) v[k] = cone[k];
      else if (depth != dim) PetscCall(CellVertices(dm, vStart, vEnd, n, c, v));
      else if (!pc.direct || !SimplexVerticesDirect(&pc, dim, c, v)) PetscCall(SimplexVertices(&pc, dim, c, v));
      for (PetscInt k = 0; k < n; k++) {
        PetscCheck(v[k] >= vStart && v[k] < vEnd, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cell %" PetscInt_FMT ": point %" PetscInt_FMT " is not a vertex", c, v[k]);
        cells[(size_t)i * n + k] = (int)lidx[v[k] - vStart];
      }
    }
  }

  if (patches) ret = PatchworkP1LayoutCreate((int)dim, (int)nv, (long long)nowned, cells, (size_t)patch_bytes, &ctx->L);
  else {
    int *order;

    PetscCall(P1RowOrder(nv, rstart, nown, gidx, &order));
    ret = PatchworkP1LayoutCreateOrdered((int)dim, (int)nv, (long long)nowned, cells, order, &ctx->L);
    PetscCall(PetscFree(order));
  }
  PetscCheck(ret != 2, PETSC_COMM_SELF, PETSC_ERR_MEM, "Out of memory in the P1 layout");
  PetscCheck(ret == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The P1 layout refused the cell list");
  PetscCall(PetscFree(cells));

  /* coordinates in the layout's order, the sigma entry of each layout cell (none: the cells are the DM's,
     in order), global rows */
  PetscCall(DMGetCoordinateDM(dm, &cdm));
  PetscCall(DMGetLocalSection(cdm, &csec));
  PetscCall(PetscMalloc1(nv, &ctx->coord_off));
  for (PetscInt r = 0; r < nv; r++) PetscCall(PetscSectionGetOffset(csec, vert[ctx->L.perm[r]], &ctx->coord_off[r]));
  PetscCall(P1CtxReadCoordinates(ctx, dm));
  if (owned || ctx->L.cell_perm) {
    PetscCall(PetscMalloc1(ctx->L.ncell, &ctx->sigma_map));
    for (long long c = 0; c < ctx->L.ncell; c++) {
      const long long i = ctx->L.cell_perm ? ctx->L.cell_perm[c] : c;
      ctx->sigma_map[c] = (int)(owned ? owned[i] - cStart : i);
    }
  }
  PetscCall(PetscFree(owned));
  PetscCall(PetscFree2(lidx, vert));
  PetscCall(PetscMalloc1(nv, &grow));
  for (PetscInt r = 0; r < nv; r++) grow[r] = gidx[ctx->L.perm[r]];
  *octx  = ctx;
  *ogrow = grow;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The count of the first w keys below kj: w fixed, so that the compiler vectorizes the loop */
static inline PetscInt CountBelow(PetscInt w, const PetscInt key[], PetscInt kj)
{
  PetscInt k = 0;

  for (PetscInt i = 0; i < w; i++) k += key[i] < kj;
  return k;
}

/* The pattern as a COO list for MatSetPreallocationCOO(), in the order that spares PETSc most of its
   work: the rows of this rank's vertices by increasing global row, then those of other ranks' vertices
   (which PETSc sends away) by increasing global row, the columns of every row in that same order (the
   diagonal block's first: the order PETSc sorts a row into). PETSc 3.26 then skips its sorts on one rank
   (3.18 sorts in any case, faster when in order), and MatSetValuesCOO() reads the values in order.
   ctx->vals_pos[z] is where pattern entry z is in the list: the kernels put the values there. A layout
   numbered in the list's order (the CPU's, P1RowOrder()) is the list itself: no vals_pos, no sorting. */
/* A sequential AIJ matrix's pattern from its row lengths and its columns (rows in order, ascending in
   each), copied in whole: no insertion row by row (MatSeqAIJSetPreallocationCSR() inserts) */
static PetscErrorCode SetSeqPattern(Mat B, const PetscInt rnnz[], PetscInt cols[])
{
  PetscFunctionBegin;
  PetscCall(MatSeqAIJSetPreallocation(B, 0, rnnz));
  PetscCall(MatSeqAIJSetColumnIndices(B, cols));
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatSetOption(B, MAT_NEW_NONZERO_LOCATION_ERR, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode P1Preallocate(Mat B, P1Ctx *ctx, const PetscInt grow[])
{
  const PatchworkP1Layout *L   = &ctx->L;
  const int                nv  = L->nvert;
  const long long          nnz = L->rowptr[nv];
  PetscLayout              rmap;
  PetscInt                 rstart, rend, nown = 0, nghost = 0, maxlen = 0, *order, *place, *gkey, *gvert, *key, *idx, *ci, *cj;
  long long               *start, pos = 0;
  PetscBool                inorder = PETSC_TRUE;

  PetscFunctionBegin;
  PetscCheck(nnz < PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_SUP, "Too many matrix entries on one rank for 32-bit indices");
  PetscCall(MatGetLayouts(B, &rmap, NULL));
  PetscCall(PetscLayoutSetUp(rmap));
  PetscCall(PetscLayoutGetRange(rmap, &rstart, &rend));

  /* the layout's vertices in the list's row order: this rank's by their row (no sort), the others sorted */
  PetscCall(PetscMalloc1(nv, &order));
  for (PetscInt i = 0; i < nv; i++) order[i] = -1;
  for (int r = 0; r < nv; r++) {
    if (grow[r] >= rstart && grow[r] < rend) {
      order[grow[r] - rstart] = r;
      nown++;
    } else nghost++;
  }
  PetscCheck(nown == rend - rstart, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%" PetscInt_FMT " local vertices for the %" PetscInt_FMT " rows of this rank", nown, rend - rstart);
  for (PetscInt i = 0; i < nown; i++) PetscCheck(order[i] >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Row %" PetscInt_FMT " of this rank has no local vertex", rstart + i);
  PetscCall(PetscMalloc2(nghost, &gkey, nghost, &gvert));
  nghost = 0;
  for (int r = 0; r < nv; r++)
    if (!(grow[r] >= rstart && grow[r] < rend)) {
      gkey[nghost]    = grow[r];
      gvert[nghost++] = r;
    }
  PetscCall(PetscSortIntWithArray(nghost, gkey, gvert));
  for (PetscInt i = 0; i < nghost; i++) order[nown + i] = gvert[i];
  PetscCall(PetscFree2(gkey, gvert));
  for (PetscInt i = 0; i < nv && inorder; i++) inorder = (PetscBool)(order[i] == i);

  if (inorder) { /* a plain MATSEQAIJ takes the pattern as its CSR (3.18's COO preallocation sorts the list
                    even when it is sorted: 3.4 of the 12.9 s this assembly took at 12.6M tetrahedra) */
    PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQAIJ, &ctx->csr));
  }
  if (ctx->csr) { /* (MatSeqAIJSetPreallocationCSR() took 2.2 s here at 12.6M tetrahedra on this 2-core machine) */
    PetscInt *rnnz, *jj = NULL;

    PetscCall(PetscMalloc1(nv, &rnnz));
    for (PetscInt i = 0; i < nv; i++) rnnz[i] = (PetscInt)(L->rowptr[i + 1] - L->rowptr[i]);
    if (sizeof(PetscInt) != sizeof(int)) {
      PetscCall(PetscMalloc1(nnz, &jj));
      for (long long z = 0; z < nnz; z++) jj[z] = L->col[z];
    }
    PetscCall(SetSeqPattern(B, rnnz, jj ? jj : (PetscInt *)L->col));
    PetscCall(PetscFree(rnnz));
    PetscCall(PetscFree(jj));
    PetscCall(PetscFree(order));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscMalloc2(nnz, &ci, nnz, &cj));
  if (inorder) { /* rows in the list's order, columns ascending in it */
    for (int r = 0; r < nv; r++)
      for (long long z = L->rowptr[r]; z < L->rowptr[r + 1]; z++) {
        ci[z] = grow[r];
        cj[z] = grow[L->col[z]];
      }
  } else {
    /* each vertex's place in that order, where its row starts in the list; then row by row (in the
       layout's order, which keeps the rows' neighbours near) the columns sorted by their place. For the
       short rows of a mesh, the rank of a column is the count of smaller places in its row (no two alike),
       over 16 or 32 keys padded with the largest PetscInt, in vector compares without branches (an
       insertion sort mispredicts a branch at about every step); longer rows sorted */
    PetscCall(PetscMalloc2(nv, &place, nv, &start));
    for (PetscInt i = 0; i < nv; i++) {
      const int r = (int)order[i];
      place[r]    = i;
      start[r]    = pos;
      pos += L->rowptr[r + 1] - L->rowptr[r];
      maxlen = PetscMax(maxlen, L->rowptr[r + 1] - L->rowptr[r]);
    }
    PetscCall(PetscMalloc1(nnz, &ctx->vals_pos));
    PetscCall(PetscMalloc2(PetscMax(maxlen, 32), &key, maxlen, &idx));
    for (int r = 0; r < nv; r++) {
      const long long z0  = L->rowptr[r];
      const PetscInt  len = (PetscInt)(L->rowptr[r + 1] - z0);

      if (r + 4 < nv) { /* the list's rows are scattered: ask for a later row's place early */
        PW_PREFETCH(ci + start[r + 4], 1);
        PW_PREFETCH(cj + start[r + 4], 1);
      }
      for (PetscInt j = 0; j < len; j++) key[j] = place[L->col[z0 + j]];
      if (len <= 16) {
        for (PetscInt j = len; j < 16; j++) key[j] = PETSC_MAX_INT;
        for (PetscInt j = 0; j < len; j++) idx[CountBelow(16, key, key[j])] = j;
      } else if (len <= 32) {
        for (PetscInt j = len; j < 32; j++) key[j] = PETSC_MAX_INT;
        for (PetscInt j = 0; j < len; j++) idx[CountBelow(32, key, key[j])] = j;
      } else {
        for (PetscInt j = 0; j < len; j++) idx[j] = j;
        PetscCall(PetscSortIntWithArray(len, key, idx));
      }
      for (PetscInt j = 0; j < len; j++) {
        const long long k = start[r] + j;

        ctx->vals_pos[z0 + idx[j]] = k;
        ci[k]                      = grow[r];
        cj[k]                      = grow[L->col[z0 + idx[j]]];
      }
    }
    PetscCall(PetscFree2(key, idx));
    PetscCall(PetscFree2(place, start));
  }
  PetscCall(PetscFree(order));
  /* One rank (no other rank's rows): the list is sorted by row and, in each row, by column, so it is the
     CSR of a sequential matrix; taking it as such spares PETSc's COO preallocation (at 912K vertices on
     this 2-core machine PWP1Preallocate 0.78 -> 0.30 s). aijcusparse takes it too: its device CSR is made
     here, once, and the patch kernel then writes the values straight into it (no COO gather, no buffer). */
  PetscCall(PetscObjectTypeCompareAny((PetscObject)B, &ctx->listcsr, MATSEQAIJ, MATSEQAIJCUSPARSE, ""));
  if (ctx->listcsr && nghost == 0) {
    PetscInt *rnnz;

    PetscCall(PetscMalloc1(nv, &rnnz));
    for (int r = 0; r < nv; r++) rnnz[grow[r] - rstart] = (PetscInt)(L->rowptr[r + 1] - L->rowptr[r]);
    PetscCall(SetSeqPattern(B, rnnz, cj));
    PetscCall(PetscFree(rnnz));
#if defined(PATCHWORK_HAVE_CUDA)
    {
      PetscBool          cusparse;
      const PetscScalar *a;

      PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQAIJCUSPARSE, &cusparse));
      if (cusparse) { /* the device CSR, made now: MatSeqAIJCUSPARSEGetArrayWrite() needs it */
        PetscCall(MatSeqAIJCUSPARSEGetArrayRead(B, &a));
        PetscCall(MatSeqAIJCUSPARSERestoreArrayRead(B, &a));
      }
    }
#endif
  } else {
    ctx->listcsr = PETSC_FALSE;
    PetscCall(MatSetPreallocationCOO(B, (PetscCount)nnz, ci, cj));
  }
  PetscCall(PetscFree2(ci, cj));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if defined(PATCHWORK_HAVE_CUDA)
/* The layout on the device and the value buffers: once per matrix; the coordinates again when read again */
static PetscErrorCode P1CtxUpload(P1Ctx *ctx)
{
  const PatchworkP1Layout *L   = &ctx->L;
  const long long          nnz = L->rowptr[L->nvert];
  PatchworkP1Desc          d;
  void                    *stream;
  size_t                   up = 0;

  PetscFunctionBegin;
  if (ctx->dev.ready && !ctx->dev.coords_stale) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PatchworkGetDeviceStream(&stream));
  #define UPLOAD(dst, src, count) \
    do { \
      const size_t bytes_ = (size_t)(count) * sizeof(*(src)); \
      if (!(dst)) PatchworkCallKernel(PatchworkDeviceMalloc(bytes_ ? bytes_ : 1, (void **)&(dst))); \
      if (bytes_) PatchworkCallKernel(PatchworkDeviceCopyToDevice((dst), (src), bytes_, stream)); \
      up += bytes_; \
    } while (0)
  UPLOAD(ctx->dev.coords, ctx->coords, (size_t)L->dim * L->nvert);
  ctx->dev.coords_stale = PETSC_FALSE;
  if (!ctx->dev.ready) {
    UPLOAD(ctx->dev.cells, L->cells, (size_t)(L->dim + 1) * L->ncell);
    UPLOAD(ctx->dev.rowptr, L->rowptr, (size_t)L->nvert + 1);
    UPLOAD(ctx->dev.col, L->col, nnz);
    UPLOAD(ctx->dev.patch_ptr, L->patch_ptr, (size_t)L->npatch + 1);
    UPLOAD(ctx->dev.patch_cell, L->patch_cell, (size_t)L->npatch + 1);
    if (ctx->vals_pos) UPLOAD(ctx->dev.vals_pos, ctx->vals_pos, nnz);
    if (ctx->sigma_map) UPLOAD(ctx->dev.sigma_map, ctx->sigma_map, L->ncell);
    PatchworkP1LayoutDesc(L, &d);
    if (!ctx->listcsr) PatchworkCallKernel(PatchworkDeviceMalloc((size_t)(nnz ? nnz : 1) * sizeof(double), (void **)&ctx->dev.vals)); /* a list CSR's: at the first reassembly */
    PatchworkCallKernel(PatchworkDeviceMalloc(PatchworkP1WorkBytes(&d), &ctx->dev.work));
    ctx->dev.ready = PETSC_TRUE;
  }
  #undef UPLOAD
  PetscCall(PetscLogCpuToGpu((PetscLogDouble)up));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

/* The values on the device, by the patch kernel into ctx->dev.vals; a new matrix whose CSR is the list
   (listcsr) gets them straight into its device values (on an error it is destroyed). h has host pointers;
   its sigma is in memory of type smt (a host Vec's array is copied over) */
static PetscErrorCode ValuesDevice(Mat A, P1Ctx *ctx, const PatchworkP1Desc *h, PetscMemType smt, PetscBool fresh, PatchworkP1Errors *err)
{
#if defined(PATCHWORK_HAVE_CUDA)
  PatchworkP1Desc d = *h;
  void           *stream;
  const PetscBool direct = (PetscBool)(ctx->listcsr && fresh);

  PetscFunctionBegin;
  PetscCall(P1CtxUpload(ctx));
  PetscCall(PatchworkGetDeviceStream(&stream));
  if (h->sigma && !PetscMemTypeDevice(smt)) {
    const size_t bytes = (size_t)ctx->ncell_dm * sizeof(double);

    if (!ctx->dev.sigma) PatchworkCallKernel(PatchworkDeviceMalloc(bytes ? bytes : 1, (void **)&ctx->dev.sigma));
    if (bytes) PatchworkCallKernel(PatchworkDeviceCopyToDevice(ctx->dev.sigma, h->sigma, bytes, stream));
    PetscCall(PetscLogCpuToGpu((PetscLogDouble)bytes));
    d.sigma = ctx->dev.sigma;
  }
  d.coords     = ctx->dev.coords;
  d.cells      = ctx->dev.cells;
  d.rowptr     = ctx->dev.rowptr;
  d.col        = ctx->dev.col;
  d.patch_ptr  = ctx->dev.patch_ptr;
  d.patch_cell = ctx->dev.patch_cell;
  d.vals_pos   = h->vals_pos ? ctx->dev.vals_pos : NULL;
  d.sigma_map  = h->sigma_map ? ctx->dev.sigma_map : NULL;

  PetscCall(PetscLogEventBegin(P1_Values, A, 0, 0, 0));
  PetscCall(PetscLogGpuTimeBegin());
  if (direct) {
    PetscScalar *a;

    PetscCall(MatSeqAIJCUSPARSEGetArrayWrite(A, &a));
    PatchworkCallKernel(PatchworkP1AssembleCUDA(&d, (double *)a, ctx->dev.work, err, stream)); /* waits for the stream: err */
    PetscCall(MatSeqAIJCUSPARSERestoreArrayWrite(A, &a));
  } else {
    if (!ctx->dev.vals) PatchworkCallKernel(PatchworkDeviceMalloc((size_t)(d.nnz ? d.nnz : 1) * sizeof(double), (void **)&ctx->dev.vals));
    PatchworkCallKernel(PatchworkP1AssembleCUDA(&d, ctx->dev.vals, ctx->dev.work, err, stream));
  }
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuFlops((h->dim == 3 ? 150.0 : 60.0) * (PetscLogDouble)h->ncell));
  PetscCall(PetscLogEventEnd(P1_Values, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
#else
  PetscFunctionBegin;
  (void)ctx;
  (void)h;
  (void)smt;
  (void)fresh;
  (void)err;
  SETERRQ(PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "A device matrix, but Patchwork was built without CUDA");
#endif
}

/* The values on the host, by the CPU reference into vals (nnz of them) */
static PetscErrorCode ValuesHost(Mat A, const PatchworkP1Desc *d, PetscScalar *vals, PatchworkP1Errors *err)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(P1_Values, A, 0, 0, 0));
  PatchworkP1AssembleRef(d, (double *)vals, err);
  PetscCall(PetscLogFlops((d->dim == 3 ? 150.0 : 60.0) * (PetscLogDouble)d->ncell));
  PetscCall(PetscLogEventEnd(P1_Values, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The values for lambda and sigma: on the device for a CUDA matrix (sigma read where its Vec has it),
   else by the CPU reference; the counts of degenerate cells and missing entries over all ranks in bad;
   only when both are 0 the values go to A (MatSetValuesCOO(), or copied into its rows when the pattern
   is its CSR), so that A is left as it was otherwise. A fresh matrix (destroyed on error) with the
   pattern as its CSR takes the reference's sums straight into its rows */
static PetscErrorCode P1Values(Mat A, P1Ctx *ctx, PetscReal lambda, Vec sigma, PetscBool device, PetscBool fresh, long long bad[2])
{
  const PetscBool    as_double = (PetscBool)(sizeof(PetscScalar) == sizeof(double) && !PetscDefined(USE_COMPLEX));
  PatchworkP1Desc    d;
  PatchworkP1Errors  err  = {0, 0};
  const PetscScalar *s    = NULL;
  PetscScalar       *vals = NULL;
  PetscMemType       smt  = PETSC_MEMTYPE_HOST;
  PetscBool          memtype = PETSC_FALSE;

  PetscFunctionBegin;
  PatchworkP1LayoutDesc(&ctx->L, &d);
  d.coords     = ctx->coords;
  d.lambda     = (double)lambda;
  d.smem_bytes = (int)ctx->patch_bytes;
  d.vals_pos   = ctx->vals_pos;
  if (sigma) {
    d.sigma_map = ctx->sigma_map;
    if (as_double) { /* the Vec's own array, in the DM's cell order: sigma_map reads it */
      memtype = device;
      if (memtype) PetscCall(VecGetArrayReadAndMemType(sigma, &s, &smt));
      else PetscCall(VecGetArrayRead(sigma, &s));
      d.sigma = (const double *)s;
    } else {
      const PetscScalar *v;

      if (!ctx->sigma_buf) PetscCall(PetscMalloc1(ctx->ncell_dm, &ctx->sigma_buf));
      PetscCall(VecGetArrayRead(sigma, &v));
      for (PetscInt c = 0; c < ctx->ncell_dm; c++) ctx->sigma_buf[c] = (double)PetscRealPart(v[c]);
      PetscCall(VecRestoreArrayRead(sigma, &v));
      d.sigma = ctx->sigma_buf;
    }
  }
  if (device) PetscCall(ValuesDevice(A, ctx, &d, smt, fresh, &err));
  else if (ctx->csr && fresh) { /* straight into a new matrix (destroyed on error) */
    PetscCall(MatSeqAIJGetArrayWrite(A, &vals));
    PetscCall(ValuesHost(A, &d, vals, &err));
    PetscCall(MatSeqAIJRestoreArrayWrite(A, &vals));
  } else {
    PetscCall(PetscMalloc1(d.nnz, &vals));
    PetscCall(ValuesHost(A, &d, vals, &err));
  }
  if (s) {
    if (memtype) PetscCall(VecRestoreArrayReadAndMemType(sigma, &s));
    else PetscCall(VecRestoreArrayRead(sigma, &s));
  }
  bad[0] = err.degenerate;
  bad[1] = err.missing;
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, bad, 2, MPI_LONG_LONG, MPI_SUM, PetscObjectComm((PetscObject)A)));
  if (!bad[0] && !bad[1] && !(ctx->csr && fresh) && !(device && ctx->listcsr && fresh)) {
    PetscCall(PetscLogEventBegin(P1_SetValues, A, 0, 0, 0));
    if (device) {
#if defined(PATCHWORK_HAVE_CUDA)
      if (ctx->listcsr) { /* the matrix's own rows, in the same order */
        PetscScalar *a;
        void        *stream;

        PetscCall(PatchworkGetDeviceStream(&stream));
        PetscCall(MatSeqAIJCUSPARSEGetArrayWrite(A, &a));
        PatchworkCallKernel(PatchworkDeviceCopy(a, ctx->dev.vals, (size_t)d.nnz * sizeof(double), stream));
        PetscCall(MatSeqAIJCUSPARSERestoreArrayWrite(A, &a));
      } else PetscCall(MatSetValuesCOO(A, ctx->dev.vals, INSERT_VALUES));
#endif
    } else if (ctx->csr || ctx->listcsr) { /* the matrix's own rows, in the same order */
      PetscScalar *a;

      PetscCall(MatSeqAIJGetArrayWrite(A, &a));
      PetscCall(PetscArraycpy(a, vals, d.nnz));
      PetscCall(MatSeqAIJRestoreArrayWrite(A, &a));
    } else PetscCall(MatSetValuesCOO(A, vals, INSERT_VALUES));
    PetscCall(PetscLogEventEnd(P1_SetValues, A, 0, 0, 0));
  }
  if (!(ctx->csr && fresh)) PetscCall(PetscFree(vals));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The log events and the citation, once */
static PetscErrorCode P1Register(void)
{
  PetscFunctionBegin;
  PetscCall(PatchworkInitializePackage());
  PetscCall(PetscCitationsRegister(citation, &cited));
  PetscCall(PatchworkLogEventRegisterOnce("PWP1SetUp", MAT_CLASSID, &P1_SetUp));
  PetscCall(PatchworkLogEventRegisterOnce("PWP1Layout", MAT_CLASSID, &P1_Layout));
  PetscCall(PatchworkLogEventRegisterOnce("PWP1Preallocate", MAT_CLASSID, &P1_Preallocate));
  PetscCall(PatchworkLogEventRegisterOnce("PWP1Values", MAT_CLASSID, &P1_Values));
  PetscCall(PatchworkLogEventRegisterOnce("PWP1SetValues", MAT_CLASSID, &P1_SetValues));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether B is a CUDA matrix (its values then come from the patch kernel) */
static PetscErrorCode P1OnDevice(Mat B, PetscBool *device)
{
  PetscFunctionBegin;
  (void)B; /* without CUDA */
  *device = PETSC_FALSE;
#if defined(PATCHWORK_HAVE_CUDA)
  PetscCall(PetscObjectTypeCompareAny((PetscObject)B, device, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE, ""));
#endif
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

  Options Database Keys:
+ -patchwork_p1_patch_bytes <49152> - shared memory a patch of the GPU assembly may fill, at most the
                                      device's per-block limit (227 KB on H100/H200); smaller: more, smaller
                                      patches, more entries added through global memory
- -patchwork_p1_patches <false>     - on the CPU too, lay the mesh out in the GPU's patches (and its COO
                                      order), to check that layout; by default the CPU, whose reference needs
                                      no patches, keeps the vertices in the order of the matrix rows

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
  rows of its local vertices; `MatSetValuesCOO()` sums rows of vertices owned by other ranks there (a
  `MATSEQAIJ` matrix on one rank takes the pattern as its CSR, `MatSeqAIJSetPreallocationCSR()`, and the
  values in its rows). On a
  CUDA matrix type (aijcusparse) the values are computed on the GPU by the patch-based hierarchical
  assembly of Fu et al. (vertices partitioned into patches, a CUDA block per patch accumulating its rows
  in shared memory) and handed to PETSc on the device; otherwise by the CPU reference.

  The matrix is marked symmetric, and symmetric positive definite when lambda > 0. It is a new matrix on
  every call; the DM is attached to it (`MatGetDM()`), and so is what its values need (the patch layout,
  the coordinates in its order, where each entry goes in the matrix; on the GPU their device copies and
  the value buffers): `PatchworkDMPlexReassembleP1()` recomputes the values for other coefficients without
  the preparation. `-log_view` shows PWP1SetUp (checks, the P1 field, its local section and the global
  rows of the vertices), PWP1Layout (mesh, pattern and patches), PWP1Preallocate (the COO pattern to PETSc,
  and the upload of the layout to the GPU), PWP1Values (element matrices and their sums) and PWP1SetValues.
  The rows are numbered from the vertices and the point SF as the DM's global section numbers them; the
  DM's global section itself (which PETSc builds over every point of the mesh) is left to whoever asks for
  it, e.g. `DMCreateGlobalVector()`.

  Level: beginner

.seealso: `PatchworkDMPlexReassembleP1()`, `MatCreatePatchworkTensor()`, `DMSetMatType()`, `DMPlexSNESComputeJacobianFEM()`
@*/
PetscErrorCode PatchworkDMPlexAssembleP1(DM dm, PetscReal lambda, Vec sigma, Mat *A)
{
  MPI_Comm     comm;
  PetscInt     dim, nrow, rstart;
  PetscInt     patch_bytes = 48 * 1024;
  PetscBool    patches = PETSC_FALSE;
  PetscInt    *grow = NULL, *gidx = NULL;
  P1Ctx       *ctx  = NULL;
  long long    bad[2];
  MatType      mtype;
  PetscBool    isaij, device;
  Mat          B;

  PetscFunctionBegin;
  PatchworkAssertPointer(dm, 1);
  PatchworkAssertPointer(A, 4);
  comm = PetscObjectComm((PetscObject)dm);
  PetscCall(P1Register());
  PetscOptionsBegin(comm, NULL, "Patchwork P1 assembly", "Mat");
  PetscCall(PetscOptionsInt("-patchwork_p1_patch_bytes", "Shared memory a patch of the GPU assembly may fill", "PatchworkDMPlexAssembleP1", patch_bytes, &patch_bytes, NULL));
  PetscCall(PetscOptionsBool("-patchwork_p1_patches", "On the CPU too, lay the mesh out in the GPU's patches", "PatchworkDMPlexAssembleP1", patches, &patches, NULL));
  PetscOptionsEnd();
  PetscCheck(patch_bytes >= 0 && patch_bytes <= 1048576, comm, PETSC_ERR_ARG_OUTOFRANGE, "-patchwork_p1_patch_bytes must be in [0, 1048576] (and on the GPU at most its shared memory per block), not %" PetscInt_FMT, patch_bytes);

  PetscCall(PetscLogEventBegin(P1_SetUp, dm, 0, 0, 0));
  PetscCall(CheckMesh(dm, &dim));
  PetscCall(CheckCoefficients(dm, lambda, sigma));
  PetscCall(SetP1Field(dm, dim));

  /* the matrix: rows numbered as the DM's global section numbers the vertices, the DM's AIJ type */
  PetscCall(P1GlobalRows(dm, &rstart, &nrow, &gidx));
  PetscCall(DMGetMatType(dm, &mtype));
  PetscCall(MatCreate(comm, &B));
  PetscCall(MatSetSizes(B, nrow, nrow, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatSetType(B, mtype ? mtype : MATAIJ));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)B, &isaij, MATSEQAIJ, MATMPIAIJ, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE, MATSEQAIJKOKKOS, MATMPIAIJKOKKOS, ""));
  if (!isaij) {
    const char *type;
    char        t[64];

    PetscCall(MatGetType(B, &type));
    PetscCall(PetscStrncpy(t, type, sizeof(t))); /* the type's name goes with B */
    PetscCall(MatDestroy(&B));
    PetscCall(PetscFree(gidx));
    PetscCall(PetscLogEventEnd(P1_SetUp, dm, 0, 0, 0));
    SETERRQ(comm, PETSC_ERR_SUP, "P1 assembly creates AIJ matrices (aij, aijcusparse, aijkokkos), not the DM's mat type %s", t);
  }
  PetscCall(P1OnDevice(B, &device));
  PetscCall(PetscLogEventEnd(P1_SetUp, dm, 0, 0, 0));

  PetscCall(PetscLogEventBegin(P1_Layout, B, 0, 0, 0));
  PetscCall(P1CtxCreate(dm, dim, patch_bytes, (PetscBool)(device || patches), rstart, nrow, gidx, &ctx, &grow));
  PetscCall(P1CtxAttach(B, ctx)); /* freed with B from here on */
  PetscCall(PetscLogEventEnd(P1_Layout, B, 0, 0, 0));

  /* the rank-local pattern as COO (rows of other ranks' vertices included: PETSc sends them) */
  PetscCall(PetscLogEventBegin(P1_Preallocate, B, 0, 0, 0));
  PetscCall(P1Preallocate(B, ctx, grow));
  PetscCall(PetscFree(grow));
#if defined(PATCHWORK_HAVE_CUDA)
  if (device) PetscCall(P1CtxUpload(ctx));
#endif
  PetscCall(PetscLogEventEnd(P1_Preallocate, B, 0, 0, 0));

  PetscCall(P1Values(B, ctx, lambda, sigma, device, PETSC_TRUE, bad));
  if (bad[0] || bad[1]) {
    PetscCall(MatDestroy(&B));
    PetscCall(PetscFree(gidx));
  }
  PetscCheck(!bad[0], comm, PETSC_ERR_ARG_WRONG, "%lld cells of the mesh are degenerate (zero volume, or coordinates not finite)", bad[0]);
  PetscCheck(!bad[1], comm, PETSC_ERR_PLIB, "%lld element entries missing from the P1 pattern", bad[1]);
  { /* the DM's local-to-global mapping (DMGetLocalToGlobalMapping()), from the same numbering */
    ISLocalToGlobalMapping ltog;

    PetscCall(ISLocalToGlobalMappingCreate(comm, 1, ctx->nvert_dm, gidx, PETSC_OWN_POINTER, &ltog));
    PetscCall(MatSetLocalToGlobalMapping(B, ltog, ltog));
    PetscCall(ISLocalToGlobalMappingDestroy(&ltog));
  }

  PetscCall(MatSetDM(B, dm));
  PetscCall(MatSetOption(B, MAT_SYMMETRIC, PETSC_TRUE));
  if (lambda > 0) PetscCall(MatSetOption(B, MAT_SPD, PETSC_TRUE));
  *A = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PatchworkDMPlexReassembleP1 - Recompute the values of a matrix made by `PatchworkDMPlexAssembleP1()` for
  new coefficients on the same mesh, keeping its layout and nonzero pattern

  Collective

  Input Parameters:
+ dm     - the DMPlex the matrix was assembled on (`MatGetDM()` of A)
. lambda - the reaction coefficient, >= 0
. sigma  - the diffusion coefficient, one positive value per local cell as for `PatchworkDMPlexAssembleP1()`,
           or `NULL` for 1
- A      - the matrix from `PatchworkDMPlexAssembleP1()` on dm

  Notes:
  The case of time stepping and of changing coefficients: the mesh checks, the P1 section, the patch
  layout and the preallocation of `PatchworkDMPlexAssembleP1()` are not repeated; only the element
  matrices are computed again (on the GPU for a CUDA matrix, reading sigma where its `Vec` has it, in
  device or host memory; else by the CPU reference) and handed to `MatSetValuesCOO()` (or copied into the
  rows of a `MATSEQAIJ` matrix whose CSR is the pattern). The result is the
  matrix a new `PatchworkDMPlexAssembleP1()` would give, entry for entry (bit for bit on the CPU), and A
  keeps its nonzero pattern, local-to-global mapping and DM; its state changes, so a `KSP` using it sets
  up its preconditioner again. It is marked symmetric positive definite when lambda > 0, not when
  lambda = 0. `-patchwork_p1_patch_bytes` is not read again: the layout is the one A was made with.

  The mesh may move: when the DM's coordinates changed since (`DMSetCoordinates()`, or the local
  coordinate vector written), they are read again. Its topology and distribution must stay: A must come
  from `PatchworkDMPlexAssembleP1()` itself (`MatDuplicate()` and `MatConvert()` do not carry what its
  values need), on this dm, with as many cells and vertices on every rank as then. On error (bad
  coefficients, degenerate cells of a moved mesh) A keeps its values.

  Level: intermediate

.seealso: `PatchworkDMPlexAssembleP1()`, `MatSetValuesCOO()`
@*/
PetscErrorCode PatchworkDMPlexReassembleP1(DM dm, PetscReal lambda, Vec sigma, Mat A)
{
  MPI_Comm       comm;
  PetscContainer container = NULL;
  P1Ctx         *ctx       = NULL;
  DM             adm;
  PetscInt       cStart, cEnd, vStart, vEnd;
  PetscMPIInt    flags[3] = {0, 0, 0};
  long long      bad[2];
  PetscBool      device;

  PetscFunctionBegin;
  PatchworkAssertPointer(dm, 1);
  PatchworkAssertPointer(A, 4);
  comm = PetscObjectComm((PetscObject)A);
  PetscCall(P1Register());
  PetscCall(PetscLogEventBegin(P1_SetUp, dm, 0, 0, 0));
  /* what A keeps, made on this dm, whose mesh has as many cells and vertices as then (on every rank) */
  PetscCall(PetscObjectQuery((PetscObject)A, P1CtxName, (PetscObject *)&container));
  if (container) PetscCall(PetscContainerGetPointer(container, (void **)&ctx));
  PetscCall(MatGetDM(A, &adm));
  if (!ctx) flags[0] = 1;
  else if (ctx->dm != dm || adm != dm) flags[1] = 1;
  else {
    PetscCall(DMPlexGetHeightStratum(dm, 0, &cStart, &cEnd));
    PetscCall(DMPlexGetDepthStratum(dm, 0, &vStart, &vEnd));
    if (cEnd - cStart != ctx->ncell_dm || vEnd - vStart != ctx->nvert_dm) flags[2] = 1;
  }
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, flags, 3, MPI_INT, MPI_MAX, comm));
  PetscCheck(!flags[0], comm, PETSC_ERR_ARG_WRONG, "PatchworkDMPlexReassembleP1() needs a matrix made by PatchworkDMPlexAssembleP1() (not a copy: MatDuplicate() and MatConvert() leave its layout behind); assemble it with PatchworkDMPlexAssembleP1() first");
  PetscCheck(!flags[1], comm, PETSC_ERR_ARG_INCOMP, "The matrix was assembled by PatchworkDMPlexAssembleP1() on another DM than the one given: pass MatGetDM() of the matrix, or assemble anew on this DM");
  PetscCheck(!flags[2], comm, PETSC_ERR_ARG_INCOMP, "The DM's mesh has changed since PatchworkDMPlexAssembleP1() made the matrix (other numbers of cells or vertices): assemble anew");
  PetscCall(CheckCoefficients(dm, lambda, sigma));
  PetscCall(P1OnDevice(A, &device));
  PetscCall(PetscLogEventEnd(P1_SetUp, dm, 0, 0, 0));
  { /* a moved mesh: its coordinates read again */
    PetscBool moved = PETSC_FALSE;

    PetscCall(P1CtxCoordinatesChanged(ctx, dm, &moved));
    if (moved) {
      PetscCall(PetscLogEventBegin(P1_Layout, A, 0, 0, 0));
      PetscCall(P1CtxReadCoordinates(ctx, dm));
      PetscCall(PetscLogEventEnd(P1_Layout, A, 0, 0, 0));
    }
  }

  PetscCall(P1Values(A, ctx, lambda, sigma, device, PETSC_FALSE, bad));
  PetscCheck(!bad[0], comm, PETSC_ERR_ARG_WRONG, "%lld cells of the mesh are degenerate (zero volume, or coordinates not finite)", bad[0]);
  PetscCheck(!bad[1], comm, PETSC_ERR_PLIB, "%lld element entries missing from the P1 pattern", bad[1]);
  PetscCall(MatSetOption(A, MAT_SYMMETRIC, PETSC_TRUE));
  PetscCall(MatSetOption(A, MAT_SPD, lambda > 0 ? PETSC_TRUE : PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}
