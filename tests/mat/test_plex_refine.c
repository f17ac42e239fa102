static const char help[] = "Checks PatchworkDMPlexRefineCells() without the Patchwork operator. On the unit box mesh with some cells\n"
                           "split, the conforming Q_k space holds every polynomial p of Q_k (the cells are axis-aligned boxes), so\n"
                           "  - with p's values at the unknowns, PETSc's own constraints (DMGlobalToLocal() fills the hanging\n"
                           "    dofs from the anchor matrix PETSc builds from the tree) must give p at every node, and\n"
                           "  - u^T J u with PETSc's assembled J of int u v + grad u . grad v must be int p^2 + |grad p|^2.\n"
                           "A wrong childID, orientation or vertex of the tree breaks one of the two. Also the refusals.\n"
                           "Options:\n"
                           "  -refine_cells <c0,c1,...>  the cells of the serial box mesh to split\n"
                           "  -refine_cells2 <c0,...>    then these cells of that tree (before distributing): two levels\n"
                           "  -expect_levels2            fail unless some point hangs on a point the first split made (two levels)\n"
                           "  -kmin <1>, -kmax <4>       range of degrees\n"
                           "  -random_orientations       turn every edge, face and cell of the box mesh by a random orientation\n"
                           "                             (DMPlexOrientPoint()) before splitting, so that the parents are seen in\n"
                           "                             many orientations\n"
                           "  -expect_edge_only          fail unless some cell has a hanging edge but no hanging face (3D)\n"
                           "  -refusals                  check the refusals (bad input) instead\n"
                           "  -tree_cell <c>             check PETSc's own tree of DMPlexTreeRefineCell() instead (a control; an\n"
                           "                             interior cell: that tree keeps a split cell's boundary faces as parents\n"
                           "                             outside every cell, where no projection reaches)\n"
                           "  -tol <1e-12>               relative tolerance\n"
                           "plus the DMPlex options (-dm_plex_dim, -dm_plex_box_faces, ...; the box must be the unit box).\n\n";

#include <patchwork.h>
#include <petscds.h>
#include <petscsnes.h>
#include "compare.h"

#define MAXK 4

/* p = sum over multi-indices j (each j_d <= k) of c_j x^j on the unit box */
typedef struct {
  PetscInt  dim, k;
  PetscReal c[(MAXK + 1) * (MAXK + 1) * (MAXK + 1)];
} Poly;

static PetscInt PolyTerms(const Poly *p) { return PetscPowInt(p->k + 1, p->dim); }

static void PolyExponents(const Poly *p, PetscInt t, PetscInt e[3])
{
  for (PetscInt d = 0; d < 3; d++, t /= p->k + 1) e[d] = d < p->dim ? t % (p->k + 1) : 0;
}

static PetscErrorCode PolyEval(PetscInt dim, PetscReal time, const PetscReal x[], PetscInt Nc, PetscScalar *u, void *ctx)
{
  const Poly *p = (const Poly *)ctx;
  PetscReal   s = 0;

  (void)dim, (void)time, (void)Nc;
  for (PetscInt t = 0; t < PolyTerms(p); t++) {
    PetscInt  e[3];
    PetscReal m = p->c[t];

    PolyExponents(p, t, e);
    for (PetscInt d = 0; d < p->dim; d++) m *= PetscPowRealInt(x[d], e[d]);
    s += m;
  }
  u[0] = s;
  return 0;
}

static PetscErrorCode One(PetscInt dim, PetscReal time, const PetscReal x[], PetscInt Nc, PetscScalar *u, void *ctx)
{
  (void)dim, (void)time, (void)x, (void)Nc, (void)ctx;
  u[0] = 1;
  return 0;
}

/* int over the unit box of p^2 + |grad p|^2, exactly */
static PetscReal PolyEnergy(const Poly *p)
{
  PetscReal E = 0;

  for (PetscInt s = 0; s < PolyTerms(p); s++)
    for (PetscInt t = 0; t < PolyTerms(p); t++) {
      PetscInt  a[3], b[3];
      PetscReal mass = p->c[s] * p->c[t];

      PolyExponents(p, s, a);
      PolyExponents(p, t, b);
      for (PetscInt d = 0; d < p->dim; d++) mass /= (PetscReal)(a[d] + b[d] + 1);
      E += mass;
      for (PetscInt g = 0; g < p->dim; g++) { /* d/dx_g x^a d/dx_g x^b */
        PetscReal stiff = p->c[s] * p->c[t] * a[g] * b[g];

        if (!a[g] || !b[g]) continue;
        for (PetscInt d = 0; d < p->dim; d++) stiff /= (PetscReal)(a[d] + b[d] + 1 - (d == g ? 2 : 0));
        E += stiff;
      }
    }
  return E;
}

static void G0(PetscInt dim, PetscInt Nf, PetscInt NfAux, const PetscInt uOff[], const PetscInt uOff_x[], const PetscScalar u[], const PetscScalar u_t[], const PetscScalar u_x[], const PetscInt aOff[], const PetscInt aOff_x[], const PetscScalar a[], const PetscScalar a_t[], const PetscScalar a_x[], PetscReal t, PetscReal u_tShift, const PetscReal x[], PetscInt numConstants, const PetscScalar constants[], PetscScalar g0[])
{
  (void)dim, (void)Nf, (void)NfAux, (void)uOff, (void)uOff_x, (void)u, (void)u_t, (void)u_x, (void)aOff, (void)aOff_x, (void)a, (void)a_t, (void)a_x, (void)t, (void)u_tShift, (void)x, (void)numConstants, (void)constants;
  g0[0] = 1.0;
}

static void G3(PetscInt dim, PetscInt Nf, PetscInt NfAux, const PetscInt uOff[], const PetscInt uOff_x[], const PetscScalar u[], const PetscScalar u_t[], const PetscScalar u_x[], const PetscInt aOff[], const PetscInt aOff_x[], const PetscScalar a[], const PetscScalar a_t[], const PetscScalar a_x[], PetscReal t, PetscReal u_tShift, const PetscReal x[], PetscInt numConstants, const PetscScalar constants[], PetscScalar g3[])
{
  (void)Nf, (void)NfAux, (void)uOff, (void)uOff_x, (void)u, (void)u_t, (void)u_x, (void)aOff, (void)aOff_x, (void)a, (void)a_t, (void)a_x, (void)t, (void)u_tShift, (void)x, (void)numConstants, (void)constants;
  for (PetscInt d = 0; d < dim; d++) g3[d * dim + d] = 1.0;
}

/* Every edge and face by a random orientation, every cell by a random rotation (a reflection would turn
   it inside out) */
static PetscErrorCode RandomOrientations(DM dm)
{
  PetscRandom rnd;
  PetscInt    pStart, pEnd, cStart, cEnd, vStart, vEnd;

  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &rnd));
  PetscCall(PetscRandomSetInterval(rnd, 0, 1));
  PetscCall(DMPlexGetChart(dm, &pStart, &pEnd));
  PetscCall(DMPlexGetHeightStratum(dm, 0, &cStart, &cEnd));
  PetscCall(DMPlexGetDepthStratum(dm, 0, &vStart, &vEnd));
  for (PetscInt p = pStart; p < pEnd; p++) {
    DMPolytopeType ct;
    PetscInt       n;
    PetscReal      r;

    if (p >= vStart && p < vEnd) continue;
    PetscCall(DMPlexGetCellType(dm, p, &ct));
    n = ct == DM_POLYTOPE_SEGMENT ? 1 : ct == DM_POLYTOPE_QUADRILATERAL ? 4 : 24; /* half the arrangements */
    PetscCall(PetscRandomGetValueReal(rnd, &r));
    if (p >= cStart && p < cEnd) PetscCall(DMPlexOrientPoint(dm, p, PetscMin((PetscInt)(r * n), n - 1)));
    else PetscCall(DMPlexOrientPoint(dm, p, PetscMin((PetscInt)(r * 2 * n), 2 * n - 1) - n));
  }
  PetscCall(PetscRandomDestroy(&rnd));
  PetscFunctionReturn(0);
}

/* The serial box mesh, on rank 0 */
static PetscErrorCode CreateBox(MPI_Comm comm, PetscBool random, DM *dm)
{
  PetscFunctionBegin;
  PetscCall(PetscOptionsSetValue(NULL, "-dm_distribute", "0"));
  PetscCall(DMCreate(comm, dm));
  PetscCall(DMSetType(*dm, DMPLEX));
  PetscCall(DMSetFromOptions(*dm));
  if (random) {
    PetscCall(RandomOrientations(*dm));
    PetscCall(DMPlexCheckSymmetry(*dm));
    PetscCall(DMPlexCheckSkeleton(*dm, 0));
    PetscCall(DMPlexCheckFaces(*dm, 0));
    PetscCall(DMPlexCheckGeometry(*dm));
  }
  PetscFunctionReturn(0);
}

static PetscReal box_h = 1; /* the smallest cell width of the box mesh */

/* Whether point p is a point of the second level: narrower than the box mesh's cells in every direction */
static PetscErrorCode SecondLevel(DM dm, PetscInt p, PetscBool *fine)
{
  DM           cdm;
  PetscSection csec;
  Vec          coords;
  PetscScalar *x = NULL;
  PetscInt     n, dim;
  PetscReal    extent = 0;

  PetscFunctionBegin;
  PetscCall(DMGetCoordinateDim(dm, &dim));
  PetscCall(DMGetCoordinateDM(dm, &cdm));
  PetscCall(DMGetLocalSection(cdm, &csec));
  PetscCall(DMGetCoordinatesLocal(dm, &coords));
  PetscCall(DMPlexVecGetClosure(cdm, csec, coords, p, &n, &x));
  for (PetscInt d = 0; d < dim; d++) {
    PetscReal lo = PETSC_MAX_REAL, hi = PETSC_MIN_REAL;

    for (PetscInt i = 0; i < n / dim; i++) {
      lo = PetscMin(lo, PetscRealPart(x[i * dim + d]));
      hi = PetscMax(hi, PetscRealPart(x[i * dim + d]));
    }
    extent = PetscMax(extent, hi - lo);
  }
  PetscCall(DMPlexVecRestoreClosure(cdm, csec, coords, p, &n, &x));
  *fine = (PetscBool)(extent < 0.75 * box_h);
  PetscFunctionReturn(0);
}

/* What hangs in the tree: points with a parent, cells with a hanging face, or a hanging edge only, and
   the points whose parent is a point of the second level (made by the first split) */
static PetscErrorCode Census(DM dm, PetscInt *hanging, PetscInt *facecells, PetscInt *edgeonly, PetscInt *deep)
{
  PetscInt dim, cStart, cEnd, pStart, pEnd, fStart, fEnd, eStart, eEnd, c[4];

  PetscFunctionBegin;
  PetscCall(DMGetDimension(dm, &dim));
  PetscCall(DMPlexGetChart(dm, &pStart, &pEnd));
  PetscCall(DMPlexGetHeightStratum(dm, 0, &cStart, &cEnd));
  PetscCall(DMPlexGetHeightStratum(dm, 1, &fStart, &fEnd));
  PetscCall(DMPlexGetDepthStratum(dm, 1, &eStart, &eEnd));
  c[0] = c[1] = c[2] = c[3] = 0;
  for (PetscInt p = pStart; p < pEnd; p++) {
    PetscInt  parent;
    PetscBool fine;

    PetscCall(DMPlexGetTreeParent(dm, p, &parent, NULL));
    if (parent == p) continue;
    c[0]++;
    PetscCall(SecondLevel(dm, parent, &fine));
    if (fine) c[3]++;
  }
  for (PetscInt cell = cStart; cell < cEnd; cell++) {
    PetscInt *cl = NULL, ncl;
    PetscBool face = PETSC_FALSE, edge = PETSC_FALSE;

    PetscCall(DMPlexGetTransitiveClosure(dm, cell, PETSC_TRUE, &ncl, &cl));
    for (PetscInt i = 0; i < ncl; i++) {
      const PetscInt q = cl[2 * i];
      PetscInt       parent;

      PetscCall(DMPlexGetTreeParent(dm, q, &parent, NULL));
      if (parent == q) continue;
      if (q >= fStart && q < fEnd) face = PETSC_TRUE;
      else if (q >= eStart && q < eEnd) edge = PETSC_TRUE;
    }
    PetscCall(DMPlexRestoreTransitiveClosure(dm, cell, PETSC_TRUE, &ncl, &cl));
    if (face) c[1]++;
    else if (edge) c[2]++;
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, c, 4, MPIU_INT, MPI_SUM, PetscObjectComm((PetscObject)dm)));
  *deep      = c[3];
  *hanging   = c[0];
  *facecells = c[1];
  *edgeonly  = c[2];
  PetscFunctionReturn(0);
}

/* The two checks at degree k on a clone of the refined mesh */
static PetscErrorCode CheckDegree(DM tree, PetscInt k, PetscReal *err_nodes, PetscReal *err_energy, PetscInt *nconstrained)
{
  DM          dm;
  Poly        p;
  Vec         L, L2, In, Lu, Iu, G, C, JG, X;
  PetscSection csec;
  Mat         J, cmat;
  PetscDS     ds;
  PetscRandom rnd;
  PetscReal   pmax, dmax, E;
  PetscScalar uJu;
  PetscErrorCode (*funcs[1])(PetscInt, PetscReal, const PetscReal[], PetscInt, PetscScalar *, void *) = {PolyEval};
  PetscErrorCode (*ones[1])(PetscInt, PetscReal, const PetscReal[], PetscInt, PetscScalar *, void *) = {One};
  void *ctxs[1] = {&p};

  PetscFunctionBegin;
  PetscCall(DMClone(tree, &dm));
  { /* a fresh reference tree for this degree: the clones share it, and PETSc 3.18 (not 3.26) leaves it
       holding the layout of the last field it served, read past at a higher degree */
    DM ref;

    PetscCall(DMGetDimension(dm, &p.dim));
    PetscCall(DMPlexCreateDefaultReferenceTree(PetscObjectComm((PetscObject)dm), p.dim, PETSC_FALSE, &ref));
    PetscCall(DMPlexSetReferenceTree(dm, ref));
    PetscCall(DMDestroy(&ref));
  }
  PetscCall(PatchworkDMPlexSetQkField(dm, k, PETSC_FALSE));
  p.k = k;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &rnd));
  PetscCall(PetscRandomSetInterval(rnd, -1, 1));
  for (PetscInt t = 0; t < PolyTerms(&p); t++) PetscCall(PetscRandomGetValueReal(rnd, &p.c[t]));
  PetscCall(PetscRandomDestroy(&rnd));

  /* p at the nodes of this rank's cells, In = 1 there (a parallel tree also holds parent points of other
     ranks' cells, which no local cell projects onto); at the unknowns the mean over the ranks that have
     them (the hanging dofs zeroed first: DMLocalToGlobal() with ADD_VALUES would add them to their
     anchors); back, with the hanging dofs from PETSc's constraints */
  PetscCall(DMCreateLocalVector(dm, &L));
  PetscCall(VecDuplicate(L, &In));
  PetscCall(VecDuplicate(L, &L2));
  PetscCall(VecDuplicate(L, &Lu));
  PetscCall(VecDuplicate(L, &Iu));
  PetscCall(DMCreateGlobalVector(dm, &G));
  PetscCall(VecDuplicate(G, &C));
  PetscCall(VecZeroEntries(L));
  PetscCall(VecZeroEntries(In));
  PetscCall(DMProjectFunctionLocal(dm, 0.0, funcs, ctxs, INSERT_ALL_VALUES, L));
  PetscCall(DMProjectFunctionLocal(dm, 0.0, ones, NULL, INSERT_ALL_VALUES, In));
  PetscCall(VecCopy(L, Lu));
  PetscCall(VecCopy(In, Iu));
  PetscCall(DMGetDefaultConstraints(dm, &csec, &cmat, NULL));
  if (csec) {
    PetscSection sec;
    PetscScalar *lu, *iu;
    PetscInt     cStart, cEnd;

    PetscCall(DMGetLocalSection(dm, &sec));
    PetscCall(PetscSectionGetChart(csec, &cStart, &cEnd));
    PetscCall(VecGetArray(Lu, &lu));
    PetscCall(VecGetArray(Iu, &iu));
    for (PetscInt pt = cStart; pt < cEnd; pt++) {
      PetscInt cdof, off;

      PetscCall(PetscSectionGetDof(csec, pt, &cdof));
      PetscCall(PetscSectionGetOffset(sec, pt, &off));
      for (PetscInt i = 0; i < cdof; i++) lu[off + i] = iu[off + i] = 0;
    }
    PetscCall(VecRestoreArray(Lu, &lu));
    PetscCall(VecRestoreArray(Iu, &iu));
  }
  PetscCall(VecZeroEntries(G));
  PetscCall(VecZeroEntries(C));
  PetscCall(DMLocalToGlobal(dm, Lu, ADD_VALUES, G));
  PetscCall(DMLocalToGlobal(dm, Iu, ADD_VALUES, C));
  PetscCall(VecPointwiseDivide(G, G, C));
  PetscCall(VecSet(L2, 1e30)); /* a dof nobody fills shows */
  PetscCall(DMGlobalToLocal(dm, G, INSERT_VALUES, L2));
  PetscCall(VecAXPY(L2, -1.0, L));
  PetscCall(VecPointwiseMult(L2, L2, In));
  PetscCall(VecNorm(L, NORM_INFINITY, &pmax));
  PetscCall(VecNorm(L2, NORM_INFINITY, &dmax));
  PetscCall(PatchworkTestErrMaxAllreduce(PetscObjectComm((PetscObject)dm), 1, &pmax));
  PetscCall(PatchworkTestErrMaxAllreduce(PetscObjectComm((PetscObject)dm), 1, &dmax));
  *err_nodes = dmax / pmax;
  *nconstrained = 0;
  if (cmat) PetscCall(MatGetSize(cmat, nconstrained, NULL));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, nconstrained, 1, MPIU_INT, MPI_SUM, PetscObjectComm((PetscObject)dm)));

  /* the energy of p by PETSc's assembled matrix (with the anchors) */
  PetscCall(DMGetDS(dm, &ds));
  PetscCall(PetscDSSetJacobian(ds, 0, 0, G0, NULL, NULL, G3));
  PetscCall(DMCreateMatrix(dm, &J));
  PetscCall(DMCreateLocalVector(dm, &X));
  PetscCall(VecZeroEntries(X));
  PetscCall(DMPlexSNESComputeJacobianFEM(dm, X, J, J, NULL));
  PetscCall(VecDuplicate(G, &JG));
  PetscCall(MatMult(J, G, JG));
  PetscCall(VecDot(G, JG, &uJu));
  E           = PolyEnergy(&p);
  *err_energy = PetscAbsReal(PetscRealPart(uJu) - E) / E;

  PetscCall(VecDestroy(&X));
  PetscCall(VecDestroy(&JG));
  PetscCall(MatDestroy(&J));
  PetscCall(VecDestroy(&L));
  PetscCall(VecDestroy(&L2));
  PetscCall(VecDestroy(&In));
  PetscCall(VecDestroy(&Lu));
  PetscCall(VecDestroy(&Iu));
  PetscCall(VecDestroy(&G));
  PetscCall(VecDestroy(&C));
  PetscCall(DMDestroy(&dm));
  PetscFunctionReturn(0);
}

static PetscInt failures = 0;

/* The call must fail with an error whose message holds `words` */
static PetscErrorCode Expect(PetscErrorCode code, const char what[], const char words[])
{
  const char *msg = NULL;

  PetscFunctionBeginUser;
  /* the message argument is char ** up to PETSc 3.2x and const char ** after: void * fits both */
  if (code) PetscCall(PetscErrorMessage(code, NULL, (void *)&msg));
  if (code && msg && strstr(msg, words)) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok   %-28s -> %s\n", what, msg));
  else {
    failures++;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %-28s -> %s (expected an error containing '%s')\n", what, code ? (msg ? msg : "(no message)") : "no error", words));
  }
  PetscFunctionReturn(0);
}

/* Refine dm's cell `cell` and expect a refusal */
static PetscErrorCode TryRefineCell(DM dm, PetscInt cell, const char what[], const char words[])
{
  DMLabel        marked;
  DM             tree = NULL;
  PetscErrorCode code;

  PetscFunctionBeginUser;
  PetscCall(DMLabelCreate(PETSC_COMM_SELF, "split", &marked));
  PetscCall(DMLabelSetValue(marked, cell, 1));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  code = PatchworkDMPlexRefineCells(dm, marked, 1, &tree);
  PetscCall(PetscPopErrorHandler());
  PetscCall(Expect(code, what, words));
  PetscCall(DMDestroy(&tree));
  PetscCall(DMLabelDestroy(&marked));
  PetscFunctionReturn(0);
}

static PetscErrorCode TryRefine(DM dm, const char what[], const char words[])
{
  PetscFunctionBeginUser;
  PetscCall(TryRefineCell(dm, 0, what, words));
  PetscFunctionReturn(0);
}

static PetscErrorCode Refusals(MPI_Comm comm)
{
  DM          dm, tree;
  PetscMPIInt size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  /* a tree: split cell 0 of 2x2 cells, then its child at the box's centre (tree cell 3 + 2), which hangs on
     both unsplit neighbours (2:1 balance) */
  PetscCall(PetscOptionsSetValue(NULL, "-dm_plex_dim", "2"));
  PetscCall(PetscOptionsSetValue(NULL, "-dm_plex_box_faces", "2,2"));
  PetscCall(PetscOptionsSetValue(NULL, "-dm_plex_simplex", "0"));
  PetscCall(CreateBox(comm, PETSC_FALSE, &dm));
  {
    DMLabel marked;

    PetscCall(DMLabelCreate(PETSC_COMM_SELF, "split", &marked));
    PetscCall(DMLabelSetValue(marked, 0, 1));
    PetscCall(PatchworkDMPlexRefineCells(dm, marked, 1, &tree));
    PetscCall(DMLabelDestroy(&marked));
  }
  PetscCall(TryRefineCell(tree, 5, "a child at a coarse cell", "2:1 balance"));
  PetscCall(DMDestroy(&tree));
  /* PETSc's own tree (DMPlexTreeRefineCell()) */
  PetscCall(PatchworkTestTreeRefine(&dm, 0));
  if (size == 1) PetscCall(TryRefine(dm, "DMPlexTreeRefineCell()'s tree", "did not make"));
  PetscCall(DMDestroy(&dm));
  /* triangles (two, on rank 0) */
  {
    const PetscInt  tris[6] = {0, 1, 2, 1, 3, 2};
    const PetscReal xy[8]   = {0, 0, 1, 0, 0, 1, 1, 1};
    PetscMPIInt     rank;

    PetscCallMPI(MPI_Comm_rank(comm, &rank));
    PetscCall(DMPlexCreateFromCellListPetsc(comm, 2, rank ? 0 : 2, rank ? 0 : 4, 3, PETSC_TRUE, tris, 2, xy, &dm));
    PetscCall(TryRefine(dm, "triangles", "splits quadrilateral cells only"));
    PetscCall(DMDestroy(&dm));
  }
  /* a quadratic coordinate field */
  PetscCall(PetscOptionsSetValue(NULL, "-dm_coord_petscspace_degree", "2"));
  PetscCall(CreateBox(comm, PETSC_FALSE, &dm));
  PetscCall(TryRefine(dm, "quadratic coordinates", "move its vertices"));
  PetscCall(DMDestroy(&dm));
  PetscCall(PetscOptionsClearValue(NULL, "-dm_coord_petscspace_degree"));
  /* a distributed mesh */
  if (size > 1) {
    DM dist;

    PetscCall(CreateBox(comm, PETSC_FALSE, &dm));
    PetscCall(DMPlexDistribute(dm, 0, NULL, &dist));
    PetscCall(TryRefine(dist, "a distributed mesh", "is distributed"));
    PetscCall(DMDestroy(&dist));
    PetscCall(DMDestroy(&dm));
  }
  PetscCall(PetscPrintf(comm, "%s\n", failures ? "FAILED" : "all refusals name the problem"));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  MPI_Comm  comm;
  DM        dm;
  PetscInt  kmin = 1, kmax = MAXK, cells[64], ncells = 64, cells2[64], ncells2 = 64, tree_cell = -1, hanging, facecells, edgeonly, nc0, nc1, deep = 0;
  PetscBool random = PETSC_FALSE, expect_edge = PETSC_FALSE, refusals = PETSC_FALSE, expect_levels2 = PETSC_FALSE;
  PetscReal tol = 1e-12;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PatchworkInitializePackage());
  comm = PETSC_COMM_WORLD;
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-kmin", &kmin, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-kmax", &kmax, NULL));
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-refine_cells", cells, &ncells, NULL));
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-refine_cells2", cells2, &ncells2, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_levels2", &expect_levels2, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-random_orientations", &random, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_edge_only", &expect_edge, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-refusals", &refusals, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-tree_cell", &tree_cell, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol", &tol, NULL));
  PetscCheck(kmin >= 1 && kmax <= MAXK, comm, PETSC_ERR_ARG_OUTOFRANGE, "Degrees 1..%d", MAXK);
  if (refusals) {
    PetscCall(Refusals(comm));
    PetscCall(PetscFinalize());
    return failures ? 1 : 0;
  }

  PetscCall(CreateBox(comm, random, &dm));
  {
    PetscInt faces[3] = {1, 1, 1}, nfaces = 3;

    PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-dm_plex_box_faces", faces, &nfaces, NULL));
    for (PetscInt d = 0; d < nfaces; d++) box_h = PetscMin(box_h, 1.0 / faces[d]);
  }
  PetscCall(DMPlexGetHeightStratum(dm, 0, NULL, &nc0));
  if (tree_cell >= 0) { /* a control for the check itself: PETSc's own tree */
    PetscCall(PatchworkTestTreeRefine(&dm, tree_cell));
    ncells = 1;
  } else PetscCall(PatchworkTestRefineCells2(&dm, ncells, cells, ncells2, cells2)); /* split (twice), then distribute */
  PetscCall(DMPlexGetHeightStratum(dm, 0, NULL, &nc1));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &nc0, 1, MPIU_INT, MPI_SUM, comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &nc1, 1, MPIU_INT, MPI_SUM, comm));
  {
    PetscInt dim;

    PetscCall(DMGetDimension(dm, &dim));
    if (nc1 != nc0 + (ncells + ncells2) * ((1 << dim) - 1)) {
      PetscCall(PetscPrintf(comm, "FAIL: %" PetscInt_FMT " cells after splitting %" PetscInt_FMT " + %" PetscInt_FMT " of %" PetscInt_FMT "\n", nc1, ncells, ncells2, nc0));
      failures++;
    }
  }
  PetscCall(Census(dm, &hanging, &facecells, &edgeonly, &deep));
  if (ncells2) PetscCall(PetscPrintf(comm, "%" PetscInt_FMT " + %" PetscInt_FMT " cells split: %" PetscInt_FMT " points hang (summed over ranks), %" PetscInt_FMT " of them on points of the second level; %" PetscInt_FMT " cells have a hanging face, %" PetscInt_FMT " a hanging edge only\n", ncells, ncells2, hanging, deep, facecells, edgeonly));
  else PetscCall(PetscPrintf(comm, "%" PetscInt_FMT " cells split: %" PetscInt_FMT " points hang (summed over ranks); %" PetscInt_FMT " cells have a hanging face, %" PetscInt_FMT " a hanging edge only\n", ncells, hanging, facecells, edgeonly));
  if (expect_levels2 && !deep) {
    PetscCall(PetscPrintf(comm, "FAIL: no point hangs on a point of the second level\n"));
    failures++;
  }
  if (expect_edge && !edgeonly) {
    PetscCall(PetscPrintf(comm, "FAIL: no cell with a hanging edge only\n"));
    failures++;
  }
  if (ncells && !hanging) {
    PetscCall(PetscPrintf(comm, "FAIL: no point hangs\n"));
    failures++;
  }
  for (PetscInt k = kmin; k <= kmax; k++) {
    PetscReal en, ee;
    PetscInt  ncon;
    PetscBool ok;

    PetscCall(CheckDegree(dm, k, &en, &ee, &ncon));
    ok = (PetscBool)(en <= tol && ee <= tol && (ncon > 0 || !hanging));
    PetscCall(PetscPrintf(comm, "Q%" PetscInt_FMT ": %" PetscInt_FMT " constrained dofs; nodes |P p - p|/|p| = %.2e, energy |u^T J u - E|/E = %.2e %s\n", k, ncon, (double)en, (double)ee, ok ? "ok" : "FAIL"));
    if (!ok) failures++;
  }
  PetscCall(PetscPrintf(comm, "%s\n", failures ? "FAILED" : "PETSc's constraints on the refined mesh reproduce Q_k"));
  PetscCall(DMDestroy(&dm));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
