static const char help[] = "Bad input to the Patchwork operator must give a PETSc error that names the problem.\n";

#include <patchwork.h>
#include <petscdmshell.h>
#include <math.h>

static PetscInt failures = 0, cases = 0;

/* The call must fail, and its message must contain the expected words */
static PetscErrorCode Expect(PetscErrorCode code, const char what[], const char words[])
{
  const char *msg = NULL;

  PetscFunctionBeginUser;
  cases++;
  /* the message argument is char ** up to PETSc 3.2x and const char ** after: void * fits both */
  if (code) PetscCall(PetscErrorMessage(code, NULL, (void *)&msg));
  if (code && msg && strstr(msg, words)) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok   %-34s -> %s\n", what, msg));
  } else {
    failures++;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %-34s -> %s (expected an error containing '%s')\n", what, code ? (msg ? msg : "(no message)") : "no error", words));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode TryOperator(DM dm, PetscInt degree, const char what[], const char words[])
{
  Mat            A = NULL;
  PetscErrorCode code;

  PetscFunctionBeginUser;
  code = MatCreatePatchworkTensor(dm, degree, &A);
  PetscCall(Expect(code, what, words));
  if (!code) PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

/* PCSetUp() of a PCLOR on operator A (and dm when given) must fail naming the problem */
static PetscErrorCode TryLOR(Mat A, DM dm, PetscInt degree, PetscReal beta, const char what[], const char words[])
{
  PC pc;

  PetscFunctionBeginUser;
  PetscCall(PCCreate(PETSC_COMM_WORLD, &pc));
  PetscCall(PCSetType(pc, PCLOR));
  PetscCall(PCSetOperators(pc, A, A));
  if (dm) PetscCall(PCSetDM(pc, dm));
  if (degree) PetscCall(PCLORSetDegree(pc, degree));
  PetscCall(PCLORSetCoefficients(pc, 0.0, beta));
  PetscCall(Expect(PCSetUp(pc), what, words));
  PetscCall(PCDestroy(&pc));
  PetscFunctionReturn(0);
}

static PetscErrorCode Grid2d(PetscInt, PetscInt, PetscInt, DMDAStencilType, DMBoundaryType, DM *);
static PetscErrorCode NaNCoefficient(PetscInt, const PetscReal[], PetscReal *, void *);

/* PCLOR: the discretization must be known and be a Gauss-Lobatto Q_k node grid */
static PetscErrorCode BadLOR(void)
{
  const PetscInt cells[3] = {3, 3, 3};
  Mat            A;
  DM             dm;

  PetscFunctionBeginUser;
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, 100, 100, 1, NULL, 0, NULL, &A));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatShift(A, 1.0));
  PetscCall(TryLOR(A, NULL, 3, 1.0, "LOR: plain Mat, no DM", "needs to know the discretization"));
  PetscCall(DMShellCreate(PETSC_COMM_WORLD, &dm));
  PetscCall(TryLOR(A, dm, 3, 1.0, "LOR: DMShell", "needs a DMDA"));
  PetscCall(DMDestroy(&dm));
  PetscCall(MatDestroy(&A));

  PetscCall(PatchworkDMDACreateQk(PETSC_COMM_WORLD, 2, 3, cells, NULL, NULL, &dm));
  PetscCall(DMCreateMatrix(dm, &A));
  PetscCall(MatShift(A, 1.0));
  PetscCall(TryLOR(A, dm, 0, 1.0, "LOR: DM without degree", "needs the degree"));
  PetscCall(TryLOR(A, dm, 3, 0.0, "LOR: beta = 0", "beta > 0"));
  PetscCall(DMDASetUniformCoordinates(dm, 0, 1, 0, 1, 0, 0));
  PetscCall(TryLOR(A, dm, 3, 1.0, "LOR: equispaced (non-GLL) nodes", "Gauss-Lobatto nodal basis"));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&dm));

  PetscCall(Grid2d(10, 1, 3, DMDA_STENCIL_BOX, DM_BOUNDARY_NONE, &dm));
  PetscCall(DMCreateMatrix(dm, &A));
  PetscCall(MatShift(A, 1.0));
  PetscCall(TryLOR(A, dm, 3, 1.0, "LOR: DM without coordinates", "needs node coordinates"));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&dm));
  PetscCall(Grid2d(11, 1, 3, DMDA_STENCIL_BOX, DM_BOUNDARY_NONE, &dm));
  PetscCall(DMCreateMatrix(dm, &A));
  PetscCall(TryLOR(A, dm, 3, 1.0, "LOR: grid not k*N+1 nodes", "not k*N+1"));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&dm));
  PetscCall(Grid2d(12, 1, 11, DMDA_STENCIL_BOX, DM_BOUNDARY_NONE, &dm));
  PetscCall(DMCreateMatrix(dm, &A));
  PetscCall(TryLOR(A, dm, 11, 1.0, "LOR: degree 11", "supports degrees 1..10"));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&dm));
  PetscFunctionReturn(0);
}

static PetscErrorCode Grid2d(PetscInt M, PetscInt dof, PetscInt s, DMDAStencilType st, DMBoundaryType bt, DM *dm)
{
  PetscFunctionBeginUser;
  PetscCall(DMDACreate2d(PETSC_COMM_WORLD, bt, bt, st, M, M, PETSC_DECIDE, PETSC_DECIDE, dof, s, NULL, NULL, dm));
  PetscCall(DMSetUp(*dm));
  PetscFunctionReturn(0);
}

static PetscErrorCode NaNCoefficient(PetscInt dim, const PetscReal x[], PetscReal *v, void *ctx)
{
  (void)dim, (void)ctx;
  *v = x[0] > 0.5 ? (PetscReal)NAN : 1.0;
  return 0;
}

/* 2 x 2 quadrilaterals of the unit square, or two triangles (no mesh generator needed) */
static PetscErrorCode QuadMesh(PetscBool simplex, DM *dm)
{
  const PetscInt  tris[6] = {0, 1, 2, 1, 3, 2};
  const PetscReal xy[8]    = {0, 0, 1, 0, 0, 1, 1, 1};

  PetscFunctionBeginUser;
  if (simplex) PetscCall(DMPlexCreateFromCellListPetsc(PETSC_COMM_WORLD, 2, 2, 4, 3, PETSC_TRUE, tris, 2, xy, dm));
  else { /* through the options: DMPlexCreateBoxMesh()'s arguments differ between PETSc versions */
    PetscCall(PetscOptionsSetValue(NULL, "-quad_dm_plex_dim", "2"));
    PetscCall(PetscOptionsSetValue(NULL, "-quad_dm_plex_simplex", "0"));
    PetscCall(PetscOptionsSetValue(NULL, "-quad_dm_plex_box_faces", "2,2"));
    PetscCall(DMCreate(PETSC_COMM_WORLD, dm));
    PetscCall(DMSetType(*dm, DMPLEX));
    PetscCall(DMSetOptionsPrefix(*dm, "quad_"));
    PetscCall(DMSetFromOptions(*dm));
  }
  PetscFunctionReturn(0);
}

/* The operator on a DMPlex: cell types, the field, coefficients, geometry, and the preconditioners
   that need a Cartesian mesh */
/* Hanging nodes: anchors that do not come from a tree */
static PetscErrorCode BadHanging(void)
{
  DM           dm;
  PetscSection sec;
  IS           is;
  PetscInt     vStart, vEnd, pStart, pEnd, anchor;

  PetscFunctionBeginUser;
  PetscCall(QuadMesh(PETSC_FALSE, &dm));
  PetscCall(DMPlexGetDepthStratum(dm, 0, &vStart, &vEnd));
  PetscCall(DMPlexGetChart(dm, &pStart, &pEnd));
  PetscCall(PetscSectionCreate(PETSC_COMM_SELF, &sec));
  PetscCall(PetscSectionSetChart(sec, vStart, vStart + 1));
  PetscCall(PetscSectionSetDof(sec, vStart, 1));
  PetscCall(PetscSectionSetUp(sec));
  anchor = vStart + 1;
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, 1, &anchor, PETSC_COPY_VALUES, &is));
  PetscCall(DMPlexSetAnchors(dm, sec, is)); /* takes both */
  PetscCall(PetscSectionDestroy(&sec));
  PetscCall(ISDestroy(&is));
  PetscCall(PatchworkDMPlexSetQkField(dm, 2, PETSC_FALSE));
  PetscCall(TryOperator(dm, 2, "a DMPlex with anchors but no tree", "anchor constraints but no tree"));
  PetscCall(DMDestroy(&dm));

  PetscFunctionReturn(0);
}

static PetscErrorCode BadPlex(void)
{
  DM      dm;
  Mat     A;
  Vec     x, y;
  PetscFE fe;

  PetscFunctionBeginUser;
  PetscCall(QuadMesh(PETSC_TRUE, &dm));
  PetscCall(TryOperator(dm, 2, "DMPlex of triangles", "needs quadrilateral cells"));
  PetscCall(Expect(PatchworkDMPlexSetQkField(dm, 2, PETSC_FALSE), "Q_k field on triangles", "needs quadrilateral cells"));
  PetscCall(DMDestroy(&dm));
  PetscCall(QuadMesh(PETSC_FALSE, &dm));
  PetscCall(TryOperator(dm, 2, "DMPlex without a field", "has no field"));
  /* PETSc's default Lagrange nodes are Gauss-Lobatto; equispaced ones must be refused */
  PetscCall(PetscOptionsSetValue(NULL, "-eq_petscspace_degree", "3"));
  PetscCall(PetscOptionsSetValue(NULL, "-eq_petscdualspace_lagrange_node_type", "equispaced"));
  PetscCall(PetscOptionsSetValue(NULL, "-eq_petscdualspace_lagrange_node_endpoints", "1"));
  PetscCall(PetscFECreateDefault(PETSC_COMM_WORLD, 2, 1, PETSC_FALSE, "eq_", PETSC_DETERMINE, &fe));
  PetscCall(DMSetField(dm, 0, NULL, (PetscObject)fe));
  PetscCall(PetscFEDestroy(&fe));
  PetscCall(DMCreateDS(dm));
  PetscCall(TryOperator(dm, 3, "equispaced Lagrange nodes", "not the Gauss-Lobatto points"));
  PetscCall(PetscFECreateLagrange(PETSC_COMM_WORLD, 2, 2, PETSC_FALSE, 3, PETSC_DETERMINE, &fe));
  PetscCall(DMSetField(dm, 0, NULL, (PetscObject)fe));
  PetscCall(PetscFEDestroy(&fe));
  PetscCall(DMCreateDS(dm));
  PetscCall(TryOperator(dm, 3, "vector-valued field", "components"));
  PetscCall(DMDestroy(&dm));
  PetscCall(QuadMesh(PETSC_FALSE, &dm));
  PetscCall(Expect(PatchworkDMPlexSetQkField(dm, 11, PETSC_FALSE), "Q_k field of degree 11", "Degree 11 not supported"));
  PetscCall(PatchworkDMPlexSetQkField(dm, 2, PETSC_TRUE));
  PetscCall(TryOperator(dm, 3, "operator degree != field degree", "has degree 2"));

  PetscCall(MatCreatePatchworkTensor(dm, 2, &A));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(Expect(MatPatchworkTensorSetBC(A, PATCHWORK_BC_NATURAL), "BC setter on a DMPlex operator", "essential boundary conditions"));
  PetscCall(Expect(MatPatchworkTensorSetQuadraturePoints(A, 6), "6 quadrature points for Q2", "use k+1 = 3 to 5"));
  PetscCall(MatPatchworkTensorSetQuadrature(A, PATCHWORK_QUADRATURE_GAUSSLOBATTO));
  PetscCall(Expect(MatPatchworkTensorSetQuadraturePoints(A, 4), "Gauss-Lobatto with k+2 points", "exactly k+1"));
  PetscCall(MatPatchworkTensorSetQuadrature(A, PATCHWORK_QUADRATURE_GAUSS));
  {
    Vec c;

    PetscCall(VecCreateMPI(PETSC_COMM_WORLD, 5, PETSC_DETERMINE, &c));
    PetscCall(MatPatchworkTensorSetCoefficientVecs(A, c, NULL));
    PetscCall(Expect(MatMult(A, x, y), "coefficient Vec of the wrong size", "has local size 5"));
    PetscCall(VecDestroy(&c));
  }
  PetscCall(MatPatchworkTensorSetCoefficientFunctions(A, NaNCoefficient, NULL, NULL));
  PetscCall(Expect(MatMult(A, x, y), "NaN diffusion coefficient", "must be finite"));
  PetscCall(MatPatchworkTensorSetCoefficientFunctions(A, NULL, NULL, NULL));
  PetscCall(MatMult(A, x, y)); /* constant coefficients again: no error */
  {
    KSP ksp;
    PC  pc;

    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCVERTEXPATCH));
    PetscCall(Expect(PCSetUp(pc), "PCVERTEXPATCH on a DMPlex operator", "on a Cartesian DMDA mesh"));
    PetscCall(KSPDestroy(&ksp));
  }
  { /* PCLOR takes coefficients at the nodes: a Vec at Gauss points cannot give them */
    Vec      Xq, c;
    PetscInt n, dim;

    PetscCall(MatPatchworkTensorGetQuadraturePoints(A, &Xq));
    PetscCall(VecGetLocalSize(Xq, &n));
    PetscCall(VecGetBlockSize(Xq, &dim));
    PetscCall(VecCreateMPI(PETSC_COMM_WORLD, n / dim, PETSC_DETERMINE, &c));
    PetscCall(VecSet(c, 1.0));
    PetscCall(MatPatchworkTensorSetCoefficientVecs(A, c, NULL));
    PetscCall(TryLOR(A, NULL, 0, 1.0, "PCLOR, DMPlex operator, coefficient Vec at Gauss points", "coefficient at the nodes"));
    PetscCall(MatPatchworkTensorSetCoefficientVecs(A, NULL, NULL));
    PetscCall(VecDestroy(&c));
    PetscCall(VecDestroy(&Xq));
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&A));

  { /* fold the mesh: move the centre vertex beyond a corner, so that cells are inverted */
    Vec          c;
    PetscScalar *a;
    PetscInt     n;

    PetscCall(DMGetCoordinatesLocal(dm, &c));
    PetscCall(VecGetLocalSize(c, &n));
    PetscCall(VecGetArray(c, &a));
    for (PetscInt i = 0; i < n; i += 2)
      if (PetscAbsScalar(a[i] - 0.5) < 1e-12 && PetscAbsScalar(a[i + 1] - 0.5) < 1e-12) a[i] = a[i + 1] = 1.7;
    PetscCall(VecRestoreArray(c, &a));
    PetscCall(DMSetCoordinatesLocal(dm, c));
  }
  PetscCall(MatCreatePatchworkTensor(dm, 2, &A));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(Expect(MatMult(A, x, y), "folded (inverted) cells", "Jacobian determinant"));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&dm));
  PetscFunctionReturn(0);
}

/* A 1D Laplacian with row `bad` changed: its diagonal set to d, its coupling to the next row to
   (up, down) (the symmetric pair, unless up != down) */
static PetscErrorCode Tridiagonal(PetscInt bad, PetscScalar d, PetscScalar up, PetscScalar down, Mat *A)
{
  PetscInt n = 40, rs, re;

  PetscFunctionBeginUser;
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, n, n, 3, NULL, 2, NULL, A));
  PetscCall(MatGetOwnershipRange(*A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    PetscScalar diag = i == bad ? d : 2.0;

    if (diag != 0.0) PetscCall(MatSetValue(*A, i, i, diag, INSERT_VALUES));
    if (i + 1 < n && i != bad - 1 && i != bad) PetscCall(MatSetValue(*A, i, i + 1, -1.0, INSERT_VALUES));
    if (i > 0 && i != bad && i != bad + 1) PetscCall(MatSetValue(*A, i, i - 1, -1.0, INSERT_VALUES));
    if (i == bad && i + 1 < n) PetscCall(MatSetValue(*A, i, i + 1, up, INSERT_VALUES));
    if (i == bad + 1) PetscCall(MatSetValue(*A, i, i - 1, down, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* PCSetUp() of a PCPATCHAMG on A, with options, must fail naming the problem */
static PetscErrorCode TryPatchAMG(Mat A, PetscBool check, const char what[], const char words[])
{
  PC pc;

  PetscFunctionBeginUser;
  PetscCall(PCCreate(PETSC_COMM_WORLD, &pc));
  PetscCall(PCSetType(pc, PCPATCHAMG));
  PetscCall(PCSetOperators(pc, A, A));
  PetscCall(PCSetOptionsPrefix(pc, check ? "checked_" : "plain_"));
  PetscCall(PetscOptionsSetValue(NULL, "-checked_pc_patchamg_check", "1"));
  PetscCall(PetscOptionsSetValue(NULL, "-plain_pc_patchamg_coarse_size", "10"));
  PetscCall(PCSetFromOptions(pc));
  PetscCall(Expect(PCSetUp(pc), what, words));
  PetscCall(PCDestroy(&pc));
  PetscFunctionReturn(0);
}

/* PCPATCHAMG: assembled symmetric positive definite matrices only */
static PetscErrorCode BadPatchAMG(void)
{
  Mat A;
  PC  pc;

  PetscFunctionBeginUser;
  PetscCall(Tridiagonal(7, 0.0, 0.0, 0.0, &A));
  PetscCall(TryPatchAMG(A, PETSC_FALSE, "PCPATCHAMG with an empty row", "an empty row"));
  PetscCall(MatDestroy(&A));
  PetscCall(Tridiagonal(7, -2.0, -1.0, -1.0, &A));
  PetscCall(TryPatchAMG(A, PETSC_FALSE, "PCPATCHAMG with a negative diagonal", "in row 7"));
  PetscCall(MatDestroy(&A));
  PetscCall(Tridiagonal(7, (PetscReal)NAN, -1.0, -1.0, &A));
  PetscCall(TryPatchAMG(A, PETSC_FALSE, "PCPATCHAMG with a NaN", "NaN or Inf on its diagonal"));
  PetscCall(MatDestroy(&A));
  PetscCall(Tridiagonal(7, 2.0, -1.0, -0.5, &A));
  PetscCall(TryPatchAMG(A, PETSC_TRUE, "PCPATCHAMG, nonsymmetric, checked", "not symmetric"));
  PetscCall(MatDestroy(&A));
  PetscCall(Tridiagonal(7, 2.0, -9.0, -9.0, &A));
  PetscCall(TryPatchAMG(A, PETSC_TRUE, "PCPATCHAMG, indefinite, checked", "negative curvature"));
  {
    Vec          v[2];
    MatNullSpace nsp;

    PetscCall(MatCreateVecs(A, &v[0], &v[1]));
    PetscCall(VecSet(v[0], 1.0));
    PetscCall(VecSet(v[1], 0.0));
    PetscCall(VecSetValue(v[1], 0, 1.0, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(v[1]));
    PetscCall(VecAssemblyEnd(v[1]));
    PetscCall(VecNormalize(v[0], NULL));
    PetscCall(MatNullSpaceCreate(PETSC_COMM_WORLD, PETSC_FALSE, 2, v, &nsp));
    PetscCall(MatSetNearNullSpace(A, nsp));
    PetscCall(TryPatchAMG(A, PETSC_FALSE, "PCPATCHAMG, near null space of 2", "a near null space of one vector"));
    PetscCall(MatNullSpaceDestroy(&nsp));
    PetscCall(VecDestroy(&v[0]));
    PetscCall(VecDestroy(&v[1]));
  }
  PetscCall(MatDestroy(&A));
  {
    DM       dm;
    PetscInt cells[2] = {4, 4};

    PetscCall(PatchworkDMDACreateQk(PETSC_COMM_WORLD, 2, 2, cells, NULL, NULL, &dm));
    PetscCall(MatCreatePatchworkTensor(dm, 2, &A));
    PetscCall(TryPatchAMG(A, PETSC_FALSE, "PCPATCHAMG on a matrix-free operator", "needs an assembled AIJ matrix"));
    PetscCall(MatDestroy(&A));
    PetscCall(DMDestroy(&dm));
  }
  PetscCall(PCCreate(PETSC_COMM_WORLD, &pc));
  PetscCall(PCSetType(pc, PCPATCHAMG));
  PetscCall(Expect(PCPatchAMGSetPatchSize(pc, 2000), "PCPATCHAMG patch size 2000", "must be in [1, 1024]"));
  { /* coordinates: 1 to 3 per point, finite, one point per local row */
    PetscReal xyz[8] = {0, 1, 2, 3, 4, 5, 6, (PetscReal)NAN};
    PetscInt  n;

    PetscCall(Expect(PCSetCoordinates(pc, 4, 2, xyz), "PCPATCHAMG with 4 coordinates per point", "1 to 3 coordinates per point"));
    PetscCall(Expect(PCSetCoordinates(pc, 1, 8, xyz), "PCPATCHAMG with a NaN coordinate", "is NaN or Inf"));
    PetscCall(Tridiagonal(-1, 2.0, -1.0, -1.0, &A));
    PetscCall(MatGetLocalSize(A, &n, NULL));
    PetscCall(PCSetOperators(pc, A, A));
    PetscCall(PCSetCoordinates(pc, 1, PetscMin(n, 7) - 1, xyz));
    PetscCall(Expect(PCSetUp(pc), "PCPATCHAMG with fewer points than rows", "one point per row"));
    PetscCall(MatDestroy(&A));
  }
  PetscCall(PCDestroy(&pc));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  const PetscInt cells[3] = {3, 3, 3};
  DM             dm;
  Mat            A, B;
  Vec            x, y, z;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PatchworkInitializePackage());
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));

  /* the DM */
  PetscCall(DMShellCreate(PETSC_COMM_WORLD, &dm));
  PetscCall(TryOperator(dm, 2, "not a DMDA", "needs a DMDA"));
  PetscCall(DMDestroy(&dm));
  PetscCall(Grid2d(7, 2, 3, DMDA_STENCIL_BOX, DM_BOUNDARY_NONE, &dm));
  PetscCall(TryOperator(dm, 3, "DMDA with dof 2", "dof"));
  PetscCall(DMDestroy(&dm));
  PetscCall(Grid2d(7, 1, 3, DMDA_STENCIL_STAR, DM_BOUNDARY_NONE, &dm));
  PetscCall(TryOperator(dm, 3, "star stencil", "DMDA_STENCIL_BOX"));
  PetscCall(DMDestroy(&dm));
  PetscCall(Grid2d(7, 1, 1, DMDA_STENCIL_BOX, DM_BOUNDARY_NONE, &dm));
  PetscCall(TryOperator(dm, 3, "stencil narrower than degree", "stencil width"));
  PetscCall(DMDestroy(&dm));
  PetscCall(Grid2d(8, 1, 3, DMDA_STENCIL_BOX, DM_BOUNDARY_NONE, &dm));
  PetscCall(TryOperator(dm, 3, "grid not degree*cells+1", "not a Q3 node grid"));
  PetscCall(DMDestroy(&dm));
  PetscCall(Grid2d(7, 1, 3, DMDA_STENCIL_BOX, DM_BOUNDARY_PERIODIC, &dm));
  PetscCall(TryOperator(dm, 3, "periodic DMDA", "boundary type"));
  PetscCall(DMDestroy(&dm));

  /* the mesh must be the Gauss-Lobatto node grid of a Cartesian box: equispaced nodes are not, for k=3 */
  PetscCall(Grid2d(7, 1, 3, DMDA_STENCIL_BOX, DM_BOUNDARY_NONE, &dm));
  PetscCall(DMDASetUniformCoordinates(dm, 0, 1, 0, 1, 0, 0));
  PetscCall(TryOperator(dm, 3, "equispaced (non-GLL) coordinates", "not the Gauss-Lobatto nodes"));
  PetscCall(DMDestroy(&dm));
  PetscCall(PatchworkDMDACreateQk(PETSC_COMM_WORLD, 2, 3, cells, NULL, NULL, &dm));
  {
    Vec          c;
    PetscScalar *a;

    PetscCall(DMGetCoordinates(dm, &c));
    PetscCall(VecGetArray(c, &a));
    a[2 * 10 + 1] += 0.01; /* bend one grid line: the mesh is no longer Cartesian */
    PetscCall(VecRestoreArray(c, &a));
    PetscCall(DMSetCoordinates(dm, c));
  }
  PetscCall(TryOperator(dm, 3, "perturbed (non-Cartesian) mesh", "not the Gauss-Lobatto nodes"));
  PetscCall(DMDestroy(&dm));

  /* degrees and sizes */
  PetscCall(Expect(PatchworkDMDACreateQk(PETSC_COMM_WORLD, 3, 9, cells, NULL, NULL, &dm), "degree 9 in 3D", "Degree 9 not supported"));
  PetscCall(Expect(PatchworkDMDACreateQk(PETSC_COMM_WORLD, 2, 0, cells, NULL, NULL, &dm), "degree 0", "Degree 0 not supported"));
  PetscCall(Expect(PatchworkDMDACreateQk(PETSC_COMM_WORLD, 4, 2, cells, NULL, NULL, &dm), "dimension 4", "Dimension 4"));
  {
    const PetscInt  none[2] = {3, 0};
    const PetscReal lo[2] = {0, 1}, hi[2] = {1, 0.5};

    PetscCall(Expect(PatchworkDMDACreateQk(PETSC_COMM_WORLD, 2, 2, none, NULL, NULL, &dm), "zero cells", "at least one cell"));
    PetscCall(Expect(PatchworkDMDACreateQk(PETSC_COMM_WORLD, 2, 2, cells, lo, hi, &dm), "inverted box", "must exceed"));
  }
  PetscCall(PatchworkDMDACreateQk(PETSC_COMM_WORLD, 2, 2, cells, NULL, NULL, &dm));
  PetscCall(TryOperator(dm, 3, "operator degree != grid degree", "stencil width"));

  /* coefficients, vectors, and Mats that are not ours */
  PetscCall(MatCreatePatchworkTensor(dm, 2, &A));
  PetscCall(Expect(MatPatchworkTensorSetCoefficients(A, (PetscReal)NAN, 1.0), "NaN coefficient", "finite"));
  PetscCall(Expect(MatPatchworkTensorSetCoefficientFunctions(A, NaNCoefficient, NULL, NULL), "variable coefficients on a DMDA", "general (DMPlex) mesh"));
  PetscCall(Expect(MatPatchworkTensorSetGeometryOnTheFly(A, PETSC_TRUE), "geometry on the fly on a DMDA", "general (DMPlex) mesh"));
  PetscCall(Expect(MatPatchworkTensorSetCoefficients(A, 1.0, (PetscReal)INFINITY), "infinite coefficient", "finite"));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecCreateMPI(PETSC_COMM_WORLD, PETSC_DECIDE, 5, &z));
  PetscCall(VecSet(x, 1.0));
  PetscCall(Expect(MatMult(A, z, y), "MatMult with a Vec of wrong size", "global dim"));
  PetscCall(Expect(MatMult(A, x, x), "MatMult in place", "must be different"));
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, 4, 4, 1, NULL, 0, NULL, &B));
  PetscCall(Expect(MatPatchworkTensorSetCoefficients(B, 1.0, 1.0), "setter on an AIJ matrix", "not a Patchwork"));
  {
    PatchworkTensorInfo info;

    PetscCall(Expect(MatPatchworkTensorGetInfo(B, &info), "info of an AIJ matrix", "not a Patchwork"));
  }
  {
    KSP ksp;
    PC  pc;

    /* PCVERTEXPATCH on an assembled matrix: it needs the operator's description */
    PetscCall(MatSetUp(B));
    PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, B, B));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCVERTEXPATCH));
    PetscCall(Expect(PCSetUp(pc), "PCVERTEXPATCH on an AIJ matrix", "needs the Patchwork tensor-product operator"));
    PetscCall(KSPDestroy(&ksp));
    /* more levels than the grid has */
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCVERTEXPATCH));
    PetscCall(PCVertexPatchSetLevels(pc, 3));
    PetscCall(Expect(PCSetUp(pc), "PCVERTEXPATCH with too many levels", "cannot be coarsened to 3 levels"));
    PetscCall(Expect(PCVertexPatchSetLevels(pc, -2), "PCVERTEXPATCH with -2 levels", "must be positive"));
    PetscCall(KSPDestroy(&ksp));
  }
  PetscCall(MatDestroy(&B));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&z));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&dm));

  PetscCall(BadLOR());
  PetscCall(BadPlex());
  PetscCall(BadHanging());
  PetscCall(BadPatchAMG());
  PetscCall(PetscPopErrorHandler());
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "test_bad_input: %" PetscInt_FMT " cases, %" PetscInt_FMT " failed\n", cases, failures));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
