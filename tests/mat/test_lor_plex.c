static const char help[] = "PCLOR on the Patchwork operator of a DMPlex mesh: the assembled LOR matrix against independent values.\n"
                           "  Q1: the LOR matrix (Gauss rule) is the Q1 operator itself, so it equals PETSc's FEM Jacobian\n"
                           "      (DMPlexSNESComputeJacobianFEM) on distorted bilinear cells, with coefficients linear in x\n"
                           "      (which the LOR matrix interpolates exactly), with or without Dirichlet conditions.\n"
                           "  Q2..Qkmax on the unit box: the LOR quadratic form of the nodal values of u = 1 and of u = a.x is\n"
                           "      alpha*int u^2 + beta*int |grad u|^2, which the sub-cells' Gauss rule integrates exactly; again\n"
                           "      after new coefficients, which must keep the matrix (its pattern) and change its values.\n"
                           "  -compare_host: also assemble each LOR matrix on the host (options prefix host_, -host_lor_mat_type aij) and\n"
                           "      compare (with -dm_vec_type cuda: GPU-assembled against CPU-assembled, to 1e-13)\n"
                           "  -tree_cell <c>: split cell c (DMPlexTreeRefineCell(), then distribute): hanging nodes, where the LOR matrix\n"
                           "      is P^T A_LOR P; at k = 1 it must still equal PETSc's Jacobian, which applies P through its anchors\n"
                           "      (the forms then of u = 1 only, set directly: PETSc's projection leaves the DoFs that only\n"
                           "      anchors reach unset)\n"
                           "  -refine_cells <c0,...> [-refine_cells2 <c0,...>]: split these cells by PatchworkDMPlexRefineCells() (and\n"
                           "      those of the tree again: two levels of hanging nodes), then distribute; checked as -tree_cell\n"
                           "  -kmax <4>  -dirichlet  -distort <0.2>  plus -dm_plex_dim, -dm_plex_box_faces\n";

#include <patchwork.h>
#include <petscds.h>
#include <petscsnes.h>
#include "compare.h"

static const PetscReal Alpha = 0.7, Beta = 1.3;

/* coefficients linear in x: r = 1 + x_0/2, c = 2 - x_0/4 + x_1/8 */
static PetscReal R(const PetscReal x[]) { return 1.0 + 0.5 * x[0]; }
static PetscReal C(const PetscReal x[]) { return 2.0 - 0.25 * x[0] + 0.125 * x[1]; }

static PetscErrorCode RFn(PetscInt dim, const PetscReal x[], PetscReal *v, void *ctx)
{
  (void)dim;
  (void)ctx;
  *v = R(x);
  return 0;
}

static PetscErrorCode CFn(PetscInt dim, const PetscReal x[], PetscReal *v, void *ctx)
{
  (void)dim;
  (void)ctx;
  *v = C(x);
  return 0;
}

static void G0(PetscInt dim, PetscInt Nf, PetscInt NfAux, const PetscInt uOff[], const PetscInt uOff_x[], const PetscScalar u[], const PetscScalar u_t[], const PetscScalar u_x[], const PetscInt aOff[], const PetscInt aOff_x[], const PetscScalar a[], const PetscScalar a_t[], const PetscScalar a_x[], PetscReal t, PetscReal u_tShift, const PetscReal x[], PetscInt numConstants, const PetscScalar constants[], PetscScalar g0[])
{
  g0[0] = Alpha * R(x);
}

static void G3(PetscInt dim, PetscInt Nf, PetscInt NfAux, const PetscInt uOff[], const PetscInt uOff_x[], const PetscScalar u[], const PetscScalar u_t[], const PetscScalar u_x[], const PetscInt aOff[], const PetscInt aOff_x[], const PetscScalar a[], const PetscScalar a_t[], const PetscScalar a_x[], PetscReal t, PetscReal u_tShift, const PetscReal x[], PetscInt numConstants, const PetscScalar constants[], PetscScalar g3[])
{
  for (PetscInt d = 0; d < dim; d++) g3[d * dim + d] = Beta * C(x);
}

/* Moves the interior vertices by up to amp cell widths (smoothly), so the cells are general bilinear ones */
typedef struct {
  PetscReal amp, h;
} DistortCtx;

static void DistortMap(PetscInt dim, const PetscReal x[], PetscReal y[], void *ctx)
{
  const DistortCtx *c = (const DistortCtx *)ctx;
  PetscReal         s = 1;

  for (PetscInt d = 0; d < dim; d++) s *= PetscSinReal(PETSC_PI * x[d]);
  for (PetscInt d = 0; d < dim; d++) y[d] = x[d] + c->amp * c->h * s * PetscCosReal(3.0 * (d + 1) * x[(d + 1) % dim]);
}

static PetscInt TreeCell = -1;    /* -tree_cell: split that cell (hanging nodes) */
static PetscInt NRefine = 0, Refine[64], NRefine2 = 0, Refine2[64]; /* -refine_cells, -refine_cells2 */
static int      FormsChecked = 2; /* 1: u = 1 only (see CheckForms) */

static PetscErrorCode CreateMesh(PetscReal distort, DM *dm)
{
  PetscInt faces[3] = {3, 3, 3}, nf = 3;

  PetscFunctionBeginUser;
  if (TreeCell >= 0 || NRefine) PetscCall(PetscOptionsSetValue(NULL, "-dm_distribute", "0")); /* split first, on rank 0 */
  PetscCall(DMCreate(PETSC_COMM_WORLD, dm));
  PetscCall(DMSetType(*dm, DMPLEX));
  PetscCall(DMSetFromOptions(*dm));
  if (TreeCell >= 0) PetscCall(PatchworkTestTreeRefine(dm, TreeCell));
  if (NRefine) PetscCall(PatchworkTestRefineCells2(dm, NRefine, Refine, NRefine2, Refine2));
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-dm_plex_box_faces", faces, &nf, NULL));
  if (distort > 0) {
    DistortCtx c = {distort, 1.0 / faces[0]};

    PetscCall(PatchworkTestMapVertices(*dm, DistortMap, &c));
  }
  PetscFunctionReturn(0);
}

static PetscBool CompareHost  = PETSC_FALSE;
static PetscReal HostMismatch = 0; /* the largest |L_host x - L x| / |L x| seen */
static PetscInt  HostCompared = 0;

static PetscErrorCode LORMatrixPrefix(Mat A, PatchworkTensorQuadrature rule, const char *prefix, PC *pc, Mat *L)
{
  PetscFunctionBeginUser;
  PetscCall(PCCreate(PetscObjectComm((PetscObject)A), pc));
  PetscCall(PCSetOptionsPrefix(*pc, prefix));
  PetscCall(PCSetType(*pc, PCLOR));
  PetscCall(PCSetOperators(*pc, A, A));
  PetscCall(PCLORSetQuadrature(*pc, rule));
  PetscCall(PCSetUp(*pc));
  PetscCall(PCLORGetMatrix(*pc, L));
  PetscFunctionReturn(0);
}

/* The LOR matrix of A; with -compare_host also assembled on the host and compared */
static PetscErrorCode LORMatrix(Mat A, PatchworkTensorQuadrature rule, PC *pc, Mat *L)
{
  PetscFunctionBeginUser;
  PetscCall(LORMatrixPrefix(A, rule, NULL, pc, L));
  if (CompareHost) {
    PC          hpc;
    Mat         H;
    PetscRandom rnd;
    PetscReal   err;

    PetscCall(LORMatrixPrefix(A, rule, "host_", &hpc, &H));
    PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
    PetscCall(PatchworkTestCompareMult(*L, H, rnd, 3, &err));
    PetscCall(PetscRandomDestroy(&rnd));
    HostMismatch = ErrMax(HostMismatch, err);
    HostCompared++;
    PetscCall(PCDestroy(&hpc));
  }
  PetscFunctionReturn(0);
}

/* Q1: |J x - L x| / |L x| on random vectors (of L's type: a device LOR matrix needs device vectors) */
static PetscErrorCode CheckQ1(PetscBool dirichlet, PetscReal distort, PetscReal *err)
{
  DM          dm;
  PetscDS     ds;
  Mat         J, A, L;
  PC          pc;
  Vec         X;
  PetscRandom rnd;

  PetscFunctionBeginUser;
  PetscCall(CreateMesh(distort, &dm));
  PetscCall(PatchworkDMPlexSetQkField(dm, 1, dirichlet));
  PetscCall(DMGetDS(dm, &ds));
  PetscCall(PetscDSSetJacobian(ds, 0, 0, G0, NULL, NULL, G3));
  PetscCall(DMCreateMatrix(dm, &J));
  PetscCall(DMCreateLocalVector(dm, &X));
  PetscCall(VecZeroEntries(X));
  PetscCall(DMPlexSNESComputeJacobianFEM(dm, X, J, J, NULL));
  PetscCall(MatCreatePatchworkTensor(dm, 1, &A));
  PetscCall(MatPatchworkTensorSetCoefficients(A, Alpha, Beta));
  PetscCall(MatPatchworkTensorSetCoefficientFunctions(A, CFn, RFn, NULL));
  PetscCall(LORMatrix(A, PATCHWORK_QUADRATURE_GAUSS, &pc, &L));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PatchworkTestCompareMult(L, J, rnd, 3, err));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(VecDestroy(&X));
  PetscCall(PCDestroy(&pc));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&J));
  PetscCall(DMDestroy(&dm));
  PetscFunctionReturn(0);
}

static PetscErrorCode One(PetscInt dim, PetscReal time, const PetscReal x[], PetscInt Nc, PetscScalar *u, void *ctx)
{
  u[0] = 1.0;
  return 0;
}

static PetscErrorCode Linear(PetscInt dim, PetscReal time, const PetscReal x[], PetscInt Nc, PetscScalar *u, void *ctx)
{
  const PetscReal a[3] = {0.3, -0.5, 0.8};

  u[0] = 0;
  for (PetscInt d = 0; d < dim; d++) u[0] += a[d] * x[d];
  return 0;
}

/* Qk on the unit box, natural conditions: the forms of u = 1 and u = a.x, relative errors */
static PetscErrorCode CheckForms(PetscInt k, PetscReal *err)
{
  const PetscReal a[3] = {0.3, -0.5, 0.8};
  PetscErrorCode (*fn[2])(PetscInt, PetscReal, const PetscReal[], PetscInt, PetscScalar *, void *) = {One, Linear};
  DM        dm;
  Mat       A, L;
  PC        pc;
  Vec       v, w;
  PetscInt  dim;
  PetscReal exact[2], a2 = 0, u2 = 0;
  PetscBool projects;

  PetscFunctionBeginUser;
  PetscCall(CreateMesh(0, &dm));
  PetscCall(DMGetDimension(dm, &dim));
  PetscCall(PatchworkDMPlexSetQkField(dm, k, PETSC_FALSE));
  PetscCall(MatCreatePatchworkTensor(dm, k, &A));
  PetscCall(MatPatchworkTensorSetCoefficients(A, Alpha, Beta));
  PetscCall(LORMatrix(A, PATCHWORK_QUADRATURE_GAUSS, &pc, &L));
  /* int_[0,1]^dim (a.x)^2 = sum_d a_d^2/3 + sum_{d != e} a_d a_e/4 */
  for (PetscInt d = 0; d < dim; d++) {
    a2 += a[d] * a[d];
    for (PetscInt e = 0; e < dim; e++) u2 += a[d] * a[e] * (d == e ? 1.0 / 3 : 0.25);
  }
  exact[0] = Alpha;
  exact[1] = Alpha * u2 + Beta * a2;
  PetscCall(MatCreateVecs(L, &v, &w));
  { /* on a tree PETSc's projection misses the DoFs that only anchors reach (a coarse face on the boundary,
       or on another rank): then only u = 1 is checked, its nodal values (all 1) set directly */
    PetscReal mn;

    PetscCall(DMProjectFunction(dm, 0.0, &fn[0], NULL, INSERT_VALUES, v));
    PetscCall(VecMin(v, NULL, &mn));
    projects = (PetscBool)(mn > 0.5);
  }
  *err = 0;
  for (int pass = 0; pass < 2; pass++) {
    FormsChecked = projects ? 2 : 1;
    for (int i = 0; i < FormsChecked; i++) {
      PetscScalar form;

      if (!projects) PetscCall(VecSet(v, 1.0));
      else PetscCall(DMProjectFunction(dm, 0.0, &fn[i], NULL, INSERT_VALUES, v));
      PetscCall(MatMult(L, v, w));
      PetscCall(VecDot(v, w, &form));
      *err = ErrMax(*err, PetscAbsReal(PetscRealPart(form) - exact[i]) / exact[i]);
    }
    if (pass == 0) { /* new coefficients: the same matrix (pattern kept), the new values */
      PetscInt64 id, id2; /* object ids are never reused, unlike addresses */

      PetscCall(PetscObjectGetId((PetscObject)L, &id));
      PetscCall(MatPatchworkTensorSetCoefficients(A, 2 * Alpha, Beta));
      PetscCall(PCSetOperators(pc, A, A));
      PetscCall(PCSetUp(pc));
      PetscCall(PCLORGetMatrix(pc, &L));
      PetscCall(PetscObjectGetId((PetscObject)L, &id2));
      if (id2 != id) *err = PETSC_MAX_REAL;
      exact[0] = 2 * Alpha;
      exact[1] = 2 * Alpha * u2 + Beta * a2;
    }
  }
  PetscCall(VecDestroy(&v));
  PetscCall(VecDestroy(&w));
  PetscCall(PCDestroy(&pc));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&dm));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscInt  kmax = 4, nfail = 0;
  PetscBool dirichlet = PETSC_FALSE;
  PetscReal distort = 0.2, err, tol = 1e-12;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PatchworkInitializePackage());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-kmax", &kmax, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-dirichlet", &dirichlet, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-distort", &distort, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-compare_host", &CompareHost, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-tree_cell", &TreeCell, NULL));
  NRefine  = (PetscInt)(sizeof(Refine) / sizeof(Refine[0]));
  NRefine2 = (PetscInt)(sizeof(Refine2) / sizeof(Refine2[0]));
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-refine_cells", Refine, &NRefine, NULL));
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-refine_cells2", Refine2, &NRefine2, NULL));
  PetscCheck(TreeCell < 0 || !NRefine, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "Give -tree_cell or -refine_cells, not both");
  if (CompareHost) PetscCall(PetscOptionsSetValue(NULL, "-host_lor_mat_type", "aij"));
  PetscCall(CheckQ1(dirichlet, distort, &err));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Q1, distorted cells, linear coefficients%s: |J x - L x|/|L x| = %.2e %s\n", dirichlet ? ", Dirichlet" : "", (double)err, err <= tol ? "ok" : "FAIL"));
  if (!(err <= tol)) nfail++;
  for (PetscInt k = 2; k <= kmax; k++) {
    PetscCall(CheckForms(k, &err));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Q%" PetscInt_FMT ", unit box: forms of u = 1%s, relative error %.2e %s\n", k, FormsChecked == 2 ? " and u = a.x" : "", (double)err, err <= tol ? "ok" : "FAIL"));
    if (!(err <= tol)) nfail++;
  }
  if (CompareHost) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " LOR matrices against their host assembly: max |L_host x - L x|/|L x| = %.2e %s\n", HostCompared, (double)HostMismatch, HostMismatch <= 1e-13 ? "ok" : "FAIL"));
    if (!(HostMismatch <= 1e-13)) nfail++;
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s\n", nfail ? "FAILED" : "the LOR matrices agree"));
  PetscCall(PetscFinalize());
  return nfail ? 1 : 0;
}
