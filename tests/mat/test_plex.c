static const char help[] = "Compares the Patchwork tensor-product operator on a DMPlex (MatCreatePatchworkTensor) with the\n"
                           "matrix PETSc's own FEM assembles (DMPlexSNESComputeJacobianFEM) for alpha r(x) u v + beta c(x) grad u . grad v,\n"
                           "on random vectors (MatMult) and the diagonal, for a range of degrees.\n"
                           "Options:\n"
                           "  -kmin <1>, -kmax <4>        range of degrees\n"
                           "  -curved                     move the nodes by a smooth map (with -dm_coord_petscspace_degree for curved cells)\n"
                           "  -variable                   c(x) = 1/(0.05 + 2|x|^2), r(x) = 1 + x_0^2 (the Ljungkvist paper's coefficient)\n"
                           "  -coefficient_vecs           give the variable coefficients as Vecs of quadrature-point values\n"
                           "  -dirichlet                  essential boundary conditions on the whole boundary\n"
                           "  -extra_points <0>           Gauss points per direction beyond k+1 (0..2)\n"
                           "  -gausslobatto               collocated Gauss-Lobatto quadrature instead of Gauss\n"
                           "  -gmsh_rotated               read a Gmsh mesh whose cells have randomly rotated vertex orders\n"
                           "  -tree_cell <c>              split cell c by DMPlexTreeRefineCell() (then distribute): hanging faces\n"
                           "                              whose constraints PETSc's assembly applies through its anchors\n"
                           "                              (-curved then moves the vertices: the tree has no coordinate field)\n"
                           "  -refine_cells <c0,c1,...>   split these cells by PatchworkDMPlexRefineCells() (then distribute):\n"
                           "                              hanging faces and edges of several split cells, as with -tree_cell\n"
                           "  -refine_cells2 <c0,...>     then split these cells of that tree too (before distributing): two\n"
                           "                              levels of refinement, 1-irregular\n"
                           "  -tol <1e-12>                relative tolerance\n"
                           "plus the DMPlex options (-dm_plex_dim, -dm_plex_box_faces, ...).\n\n";

#include <patchwork.h>
#include <petscds.h>
#include <petscfe.h>
#include <petscsnes.h>
#include "compare.h"
#include "plexforms.h"

typedef struct {
  PetscBool curved, variable, vecs, dirichlet, gll, gmsh;
  PetscInt  extra, tree_cell, nrefine, refine[64];
  PetscReal alpha, beta, tol;
  PetscInt  nrefine2, refine2[64];
} Options;

/* A smooth, orientation-preserving map of the unit box */
static void Bend(PetscInt dim, PetscInt Nf, PetscInt NfAux, const PetscInt uOff[], const PetscInt uOff_x[], const PetscScalar u[], const PetscScalar u_t[], const PetscScalar u_x[], const PetscInt aOff[], const PetscInt aOff_x[], const PetscScalar a[], const PetscScalar a_t[], const PetscScalar a_x[], PetscReal t, const PetscReal x[], PetscInt numConstants, const PetscScalar constants[], PetscScalar f0[])
{
  (void)Nf, (void)NfAux, (void)uOff, (void)uOff_x, (void)u, (void)u_t, (void)u_x, (void)aOff, (void)aOff_x, (void)a, (void)a_t, (void)a_x, (void)t, (void)numConstants, (void)constants;
  for (PetscInt d = 0; d < dim; d++) f0[d] = x[d] + 0.08 * PetscSinReal(PETSC_PI * x[(d + 1) % dim]) * (1 + 0.5 * x[d]);
}

static void BendVertex(PetscInt dim, const PetscReal x[], PetscReal y[], void *ctx)
{
  (void)ctx;
  Bend(dim, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, x, 0, NULL, y);
}

/* A Gmsh 2.2 file of N^dim cells of the unit box whose vertex lists start at a random corner and turn
   by a random proper rotation of the reference cell, so that edges and faces are seen in every orientation */
static PetscErrorCode WriteRotatedGmsh(PetscInt dim, PetscInt N, const char *path)
{
  /* Gmsh's corner order of the reference quadrilateral / hexahedron, as 0/1 coordinates */
  const int corner[8][3] = {
    {0, 0, 0},
    {1, 0, 0},
    {1, 1, 0},
    {0, 1, 0},
    {0, 0, 1},
    {1, 0, 1},
    {1, 1, 1},
    {0, 1, 1}
  };
  const int   nc = dim == 2 ? 4 : 8, nv = (int)PetscPowInt(N + 1, dim), ne = (int)PetscPowInt(N, dim);
  int         rot[48][3][3], nrot = 0;
  FILE       *f;
  PetscRandom rnd;

  PetscFunctionBegin;
  /* the proper rotations of the square / cube: signed permutation matrices of determinant +1 */
  for (int p = 0; p < 6; p++) {
    const int perm[6][3] = {
      {0, 1, 2},
      {0, 2, 1},
      {1, 0, 2},
      {1, 2, 0},
      {2, 0, 1},
      {2, 1, 0}
    };
    if (dim == 2 && perm[p][2] != 2) continue;
    for (int s = 0; s < 8; s++) {
      int R[3][3] = {{0}}, det;

      if (dim == 2 && (s & 4)) continue;
      for (int i = 0; i < 3; i++) R[i][perm[p][i]] = (s >> i) & 1 ? -1 : 1;
      det = R[0][0] * (R[1][1] * R[2][2] - R[1][2] * R[2][1]) - R[0][1] * (R[1][0] * R[2][2] - R[1][2] * R[2][0]) + R[0][2] * (R[1][0] * R[2][1] - R[1][1] * R[2][0]);
      if (det != 1) continue;
      PetscCall(PetscArraycpy(&rot[nrot][0][0], &R[0][0], 9));
      nrot++;
    }
  }
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &rnd));
  PetscCall(PetscRandomSetInterval(rnd, 0, nrot));
  PetscCall(PetscFOpen(PETSC_COMM_SELF, path, "w", &f));
  PetscCall(PetscFPrintf(PETSC_COMM_SELF, f, "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n%d\n", nv));
  for (int v = 0; v < nv; v++) {
    const int i = v % (N + 1), j = (v / (N + 1)) % (N + 1), l = v / ((N + 1) * (N + 1));
    PetscCall(PetscFPrintf(PETSC_COMM_SELF, f, "%d %.17g %.17g %.17g\n", v + 1, (double)i / N, (double)j / N, dim == 3 ? (double)l / N : 0.0));
  }
  PetscCall(PetscFPrintf(PETSC_COMM_SELF, f, "$EndNodes\n$Elements\n%d\n", ne));
  for (int e = 0; e < ne; e++) {
    const int ci = e % N, cj = (e / N) % N, cl = e / (N * N);
    PetscReal r;
    int       R;

    PetscCall(PetscRandomGetValueReal(rnd, &r));
    R = PetscMin((int)r, nrot - 1);
    PetscCall(PetscFPrintf(PETSC_COMM_SELF, f, "%d %d 2 1 1", e + 1, dim == 2 ? 3 : 5));
    for (int c = 0; c < nc; c++) {
      int q[3], gidx;
      /* rotate the centred corner, then back to 0/1 */
      for (int a = 0; a < 3; a++) {
        int s = 0;
        for (int b = 0; b < 3; b++) s += rot[R][a][b] * (2 * corner[c][b] - 1);
        q[a] = (s + 1) / 2;
      }
      if (dim == 2) q[2] = 0;
      gidx = ((cl + q[2]) * (N + 1) + cj + q[1]) * (N + 1) + ci + q[0];
      PetscCall(PetscFPrintf(PETSC_COMM_SELF, f, " %d", gidx + 1));
    }
    PetscCall(PetscFPrintf(PETSC_COMM_SELF, f, "\n"));
  }
  PetscCall(PetscFPrintf(PETSC_COMM_SELF, f, "$EndElements\n"));
  PetscCall(PetscFClose(PETSC_COMM_SELF, f));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscFunctionReturn(0);
}

static PetscErrorCode CreateMesh(MPI_Comm comm, const Options *o, DM *dm)
{
  PetscFunctionBegin;
  if (o->gmsh) {
    PetscMPIInt rank;
    PetscInt    dim = 3, N = 3;
    char        path[PETSC_MAX_PATH_LEN] = "test_plex_rotated.msh";

    PetscCall(PetscOptionsGetInt(NULL, NULL, "-dm_plex_dim", &dim, NULL));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-gmsh_cells", &N, NULL));
    PetscCall(PetscOptionsGetString(NULL, NULL, "-gmsh_path", path, sizeof(path), NULL));
    PetscCallMPI(MPI_Comm_rank(comm, &rank));
    if (rank == 0) PetscCall(WriteRotatedGmsh(dim, N, path));
    PetscCallMPI(MPI_Barrier(comm));
    PetscCall(PetscOptionsSetValue(NULL, "-dm_plex_filename", path));
  }
  if (o->tree_cell >= 0 || o->nrefine) PetscCall(PetscOptionsSetValue(NULL, "-dm_distribute", "0")); /* split first, on rank 0 */
  PetscCall(DMCreate(comm, dm));
  PetscCall(DMSetType(*dm, DMPLEX));
  PetscCall(DMSetFromOptions(*dm));
  if (o->tree_cell >= 0) PetscCall(PatchworkTestTreeRefine(dm, o->tree_cell)); /* hanging nodes */
  if (o->nrefine) PetscCall(PatchworkTestRefineCells2(dm, o->nrefine, o->refine, o->nrefine2, o->refine2));
  if (o->nrefine2) { /* once: how many points hang (a second level hangs on points of the first) */
    static PetscBool shown = PETSC_FALSE;
    PetscInt         nhang;

    PetscCall(PatchworkTestCountHanging(*dm, &nhang));
    if (!shown) PetscCall(PetscPrintf(comm, "%" PetscInt_FMT " + %" PetscInt_FMT " cells split: %" PetscInt_FMT " points hang (summed over ranks)\n", o->nrefine, o->nrefine2, nhang));
    shown = PETSC_TRUE;
  }
  { /* the boundary of the unit box by geometry, before any map: an independent boundary label */
    DMLabel  label;
    PetscInt fStart, fEnd, dim;
    DM       cdm;
    Vec      coords;

    PetscCall(DMGetDimension(*dm, &dim));
    PetscCall(DMGetCoordinatesLocalSetUp(*dm));
    PetscCall(DMCreateLabel(*dm, "test_boundary"));
    PetscCall(DMGetLabel(*dm, "test_boundary", &label));
    PetscCall(DMPlexGetHeightStratum(*dm, 1, &fStart, &fEnd));
    PetscCall(DMGetCoordinateDM(*dm, &cdm));
    PetscCall(DMGetCoordinatesLocal(*dm, &coords));
    for (PetscInt f = fStart; f < fEnd; f++) {
      PetscScalar *cl = NULL;
      PetscInt     ncl;
      PetscBool    on = PETSC_FALSE;

      /* on the box boundary: every coordinate point of the face's closure has x_d = 0, or every one x_d = 1 */
      PetscCall(DMPlexVecGetClosure(cdm, NULL, coords, f, &ncl, &cl));
      for (PetscInt d = 0; d < dim; d++)
        for (PetscInt side = 0; side < 2; side++) {
          PetscBool all = PETSC_TRUE;
          for (PetscInt i = d; i < ncl; i += dim) all = (PetscBool)(all && PetscAbsReal(PetscRealPart(cl[i]) - side) < 1e-12);
          on = (PetscBool)(on || all);
        }
      PetscCall(DMPlexVecRestoreClosure(cdm, NULL, coords, f, &ncl, &cl));
      if (on) PetscCall(DMLabelSetValue(label, f, 1));
    }
    PetscCall(DMPlexLabelComplete(*dm, label));
  }
  if (o->curved && o->tree_cell < 0 && !o->nrefine) PetscCall(DMPlexRemapGeometry(*dm, 0.0, Bend));
  else if (o->curved) PetscCall(PatchworkTestMapVertices(*dm, BendVertex, NULL)); /* a tree has vertex coordinates only */
  PetscCall(DMViewFromOptions(*dm, NULL, "-dm_view"));
  PetscFunctionReturn(0);
}

static PetscErrorCode Zero(PetscInt dim, PetscReal t, const PetscReal x[], PetscInt Nc, PetscScalar *u, void *ctx)
{
  (void)dim, (void)t, (void)x, (void)ctx;
  for (PetscInt c = 0; c < Nc; c++) u[c] = 0;
  return 0;
}

/* The field as a user would make it from the options database (a Lagrange PetscFE on Gauss-Lobatto
   nodes), with the operator's rule: nq Gauss, or n Gauss-Lobatto, points per direction on [-1,1].
   Used when the rule is not PatchworkDMPlexSetQkField()'s default (k+1 Gauss points). */
static PetscErrorCode SetFieldByHand(DM dm, PetscInt dim, PetscInt k, PetscInt nq, PetscBool gll, PetscBool dirichlet)
{
  PetscFE         fe;
  PetscQuadrature q = NULL;
  char            deg[8];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(deg, sizeof(deg), "%d", (int)k));
  PetscCall(PetscOptionsSetValue(NULL, "-qk_petscspace_degree", deg));
  PetscCall(PetscOptionsSetValue(NULL, "-qk_petscdualspace_lagrange_node_type", "gaussjacobi"));
  PetscCall(PetscOptionsSetValue(NULL, "-qk_petscdualspace_lagrange_node_endpoints", "1"));
  PetscCall(PetscFECreateDefault(PetscObjectComm((PetscObject)dm), dim, 1, PETSC_FALSE, "qk_", PETSC_DETERMINE, &fe));
  if (!gll) PetscCall(PetscDTGaussTensorQuadrature(dim, 1, nq, -1.0, 1.0, &q));
  else {
    PetscReal *x, *w, *pts, *wts;
    PetscInt   np = 1;

    for (PetscInt d = 0; d < dim; d++) np *= nq;
    PetscCall(PetscMalloc2(nq, &x, nq, &w));
    PetscCall(PetscDTGaussLobattoLegendreQuadrature(nq, PETSCGAUSSLOBATTOLEGENDRE_VIA_NEWTON, x, w));
    PetscCall(PetscMalloc1(np * dim, &pts));
    PetscCall(PetscMalloc1(np, &wts));
    for (PetscInt p = 0; p < np; p++) {
      PetscInt r = p;
      wts[p] = 1;
      for (PetscInt d = 0; d < dim; d++, r /= nq) {
        pts[p * dim + d] = x[r % nq];
        wts[p] *= w[r % nq];
      }
    }
    PetscCall(PetscQuadratureCreate(PETSC_COMM_SELF, &q));
    PetscCall(PetscQuadratureSetData(q, dim, 1, np, pts, wts));
    PetscCall(PetscFree2(x, w));
  }
  PetscCall(PetscFESetQuadrature(fe, q));
  PetscCall(PetscQuadratureDestroy(&q));
  PetscCall(DMSetField(dm, 0, NULL, (PetscObject)fe));
  PetscCall(PetscFEDestroy(&fe));
  PetscCall(DMCreateDS(dm));
  if (dirichlet) {
    DMLabel  label;
    PetscInt one = 1;

    PetscCall(DMGetLabel(dm, "test_boundary", &label));
    PetscCall(DMAddBoundary(dm, DM_BC_ESSENTIAL, "wall", label, 1, &one, 0, 0, NULL, (void (*)(void))Zero, NULL, NULL, NULL));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode CompareDegree(MPI_Comm comm, const Options *o, PetscInt k, PetscReal *err_mult, PetscReal *err_diag)
{
  DM          dm;
  PetscDS     ds;
  Mat         J, A;
  Vec         X, x;
  PetscInt    dim, nq = k + 1 + o->extra;
  PetscScalar constants[3] = {o->alpha, o->beta, o->variable ? 1.0 : 0.0};
  PetscRandom rnd;

  PetscFunctionBegin;
  PetscCall(CreateMesh(comm, o, &dm));
  PetscCall(DMGetDimension(dm, &dim));
  if (!o->gll && !o->extra) PetscCall(PatchworkDMPlexSetQkField(dm, k, o->dirichlet));
  else PetscCall(SetFieldByHand(dm, dim, k, o->gll ? k + 1 : nq, o->gll, o->dirichlet));
  PetscCall(DMGetDS(dm, &ds));
  PetscCall(PetscDSSetConstants(ds, 3, constants));
  PetscCall(PetscDSSetJacobian(ds, 0, 0, G0, NULL, NULL, G3));

  PetscCall(DMCreateMatrix(dm, &J));
  PetscCall(DMCreateLocalVector(dm, &X)); /* the linear problem's Jacobian does not depend on X */
  PetscCall(VecZeroEntries(X));
  PetscCall(DMPlexSNESComputeJacobianFEM(dm, X, J, J, NULL));

  PetscCall(MatCreatePatchworkTensor(dm, k, &A));
  PetscCall(MatPatchworkTensorSetCoefficients(A, o->alpha, o->beta));
  if (o->gll) PetscCall(MatPatchworkTensorSetQuadrature(A, PATCHWORK_QUADRATURE_GAUSSLOBATTO));
  else PetscCall(MatPatchworkTensorSetQuadraturePoints(A, nq));
  if (o->variable && !o->vecs) PetscCall(MatPatchworkTensorSetCoefficientFunctions(A, DiffusionFn, ReactionFn, NULL));
  if (o->variable && o->vecs) {
    Vec                Xq, c, r;
    const PetscScalar *xq;
    PetscScalar       *ca, *ra;
    PetscInt           n;

    PetscCall(MatPatchworkTensorGetQuadraturePoints(A, &Xq));
    PetscCall(VecGetLocalSize(Xq, &n));
    PetscCall(VecCreateMPI(comm, n / dim, PETSC_DETERMINE, &c));
    PetscCall(VecDuplicate(c, &r));
    PetscCall(VecGetArrayRead(Xq, &xq));
    PetscCall(VecGetArrayWrite(c, &ca));
    PetscCall(VecGetArrayWrite(r, &ra));
    for (PetscInt i = 0; i < n / dim; i++) {
      PetscReal p[3];
      for (PetscInt d = 0; d < dim; d++) p[d] = PetscRealPart(xq[i * dim + d]);
      ca[i] = Diffusion(dim, p);
      ra[i] = Reaction(p);
    }
    PetscCall(VecRestoreArrayRead(Xq, &xq));
    PetscCall(VecRestoreArrayWrite(c, &ca));
    PetscCall(VecRestoreArrayWrite(r, &ra));
    PetscCall(MatPatchworkTensorSetCoefficientVecs(A, c, r));
    PetscCall(VecDestroy(&c));
    PetscCall(VecDestroy(&r));
    PetscCall(VecDestroy(&Xq));
  }
  PetscCall(MatSetFromOptions(A));
  PetscCall(MatViewFromOptions(A, NULL, "-op_view"));

  PetscCall(MatCreateVecs(A, &x, NULL));
  { /* device vectors when asked for (a refined DM that forgot its vector type would test the host twice) */
    char      want[64];
    PetscBool set, device;
    VecType   have;
    char     *found = NULL;

    PetscCall(PetscOptionsGetString(NULL, NULL, "-dm_vec_type", want, sizeof(want), &set));
    PetscCall(VecGetType(x, &have));
    device = (PetscBool)(set && strstr(want, "cuda"));
    if (device) PetscCall(PetscStrstr(have, "cuda", &found));
    PetscCheck(!device || found, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-dm_vec_type %s, but the operator's vectors are %s", want, have);
  }
  { /* the unknowns of the unit box mesh: every node, or the interior ones with Dirichlet conditions */
    PetscInt  faces[3] = {3, 3, 3}, nf = 3, N, expect = 1;
    PetscBool known = PETSC_TRUE;

    if (o->gmsh) {
      faces[0] = 3;
      PetscCall(PetscOptionsGetInt(NULL, NULL, "-gmsh_cells", &faces[0], NULL));
      faces[1] = faces[2] = faces[0];
    } else PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-dm_plex_box_faces", faces, &nf, &known));
    if (o->tree_cell >= 0 || o->nrefine) known = PETSC_FALSE; /* hanging nodes add unknowns */
    for (PetscInt d = 0; d < dim; d++) expect *= k * faces[d] + (o->dirichlet ? -1 : 1);
    PetscCall(VecGetSize(x, &N));
    PetscCheck(!known || N == expect, comm, PETSC_ERR_ARG_SIZ, "%" PetscInt_FMT " unknowns, expected %" PetscInt_FMT, N, expect);
    PetscCall(MatGetSize(J, &N, NULL));
    PetscCheck(!known || N == expect, comm, PETSC_ERR_ARG_SIZ, "PETSc's matrix has %" PetscInt_FMT " rows, expected %" PetscInt_FMT, N, expect);
  }
  PetscCall(PetscRandomCreate(comm, &rnd));
  PetscCall(PetscRandomSetFromOptions(rnd));
  PetscCall(PatchworkTestCompareMult(J, A, rnd, 3, err_mult));
  PetscCall(PatchworkTestCompareDiagonal(J, A, x, err_diag));

  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&X));
  PetscCall(MatDestroy(&J));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&dm));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Options  o     = {PETSC_FALSE, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE, 0, -1, 0, {0}, 0.7, 1.3, 1e-12};
  PetscInt kmin = 1, kmax = 4, nfail = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PatchworkInitializePackage());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-kmin", &kmin, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-kmax", &kmax, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-extra_points", &o.extra, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-curved", &o.curved, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-variable", &o.variable, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-coefficient_vecs", &o.vecs, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-dirichlet", &o.dirichlet, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-gausslobatto", &o.gll, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-gmsh_rotated", &o.gmsh, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol", &o.tol, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-tree_cell", &o.tree_cell, NULL));
  o.nrefine = (PetscInt)(sizeof(o.refine) / sizeof(o.refine[0]));
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-refine_cells", o.refine, &o.nrefine, NULL));
  o.nrefine2 = (PetscInt)(sizeof(o.refine2) / sizeof(o.refine2[0]));
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-refine_cells2", o.refine2, &o.nrefine2, NULL));
  PetscCheck(!o.nrefine2 || o.nrefine, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-refine_cells2 splits cells of the tree that -refine_cells makes: give both");
  PetscCheck(o.tree_cell < 0 || !o.nrefine, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "Give -tree_cell or -refine_cells, not both");
  for (PetscInt k = kmin; k <= kmax; k++) {
    PetscReal em, ed;

    PetscCall(CompareDegree(PETSC_COMM_WORLD, &o, k, &em, &ed));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Q%" PetscInt_FMT ": |A x - J x|/|J x| = %.2e, |diag A - diag J|/|diag J| = %.2e %s\n", k, (double)em, (double)ed, em <= o.tol && ed <= o.tol ? "ok" : "FAIL"));
    if (!(em <= o.tol && ed <= o.tol)) nfail++;
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s\n", nfail ? "FAILED" : "all degrees agree with PETSc's FEM assembly"));
  PetscCall(PetscFinalize());
  return nfail ? 1 : 0;
}
