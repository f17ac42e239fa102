static const char help[] = "Compares the LOR matrix PCLOR assembles (macro elements, gather, Dirichlet elimination) with an\n"
                           "independent Q1 assembly on the node grid (tests/mat/lor_reference.c), entry by entry:\n"
                           "dim 2 and 3, degrees kmin..kmax, Dirichlet and natural conditions, vertex and Gauss rules, two routes:\n"
                           "  operator: a Patchwork tensor operator on a box (affine cells, coefficients read from it);\n"
                           "  dm:       any Mat with the node grid given by PCSetDM(), coordinates moved smoothly (curved cells).\n"
                           "Then PCSetUp() after new coefficients must keep the matrix (pattern built once) and give the new values.\n"
                           "Options:\n"
                           "  -kmin <1>, -kmax <8>, -dims <2,3>, -tol <1e-13> (relative, max norm)\n\n";

#include <patchwork.h>
#include "lor_reference.h"
#include "compare.h" /* PatchworkTestMatNormInf() */

/* || A - B ||_max / || B ||_max, on host copies (named host types: "aij" would keep a device
   matrix's type, and PETSc 3.26's MatAXPY on SeqAIJCUSPARSE of different patterns faulted on an H200) */
static PetscErrorCode RelativeDifference(Mat A, Mat B, PetscReal *rel)
{
  Mat         Ah, D;
  PetscReal   nb, nd;
  PetscMPIInt size;
  MatType     host;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  host = size > 1 ? MATMPIAIJ : MATSEQAIJ;
  PetscCall(MatConvert(A, host, MAT_INITIAL_MATRIX, &Ah));
  PetscCall(MatConvert(B, host, MAT_INITIAL_MATRIX, &D));
  PetscCall(PatchworkTestMatNormInf(B, &nb));
  PetscCall(MatAXPY(D, -1.0, Ah, DIFFERENT_NONZERO_PATTERN));
  PetscCall(PatchworkTestMatNormInf(D, &nd));
  *rel = nd / nb;
  PetscCall(MatDestroy(&Ah));
  PetscCall(MatDestroy(&D));
  PetscFunctionReturn(0);
}

/* The LOR matrix of pc after PCSetUp() */
static PetscErrorCode SetUpAndGet(PC pc, Mat *Alor)
{
  PetscFunctionBeginUser;
  PetscCall(PCSetUp(pc));
  PetscCall(PCLORGetMatrix(pc, Alor));
  PetscCheck(*Alor, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONGSTATE, "PCLOR has no matrix after PCSetUp()");
  PetscFunctionReturn(0);
}

static PetscErrorCode Report(const char *route, PetscInt dim, PetscInt k, PatchworkTensorBC bc, PetscBool vertex, const char *what, PetscReal rel, PetscReal tol, PetscInt *fails)
{
  PetscFunctionBeginUser;
  if (!(rel <= tol)) (*fails)++;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-4s %-8s %dD Q%-2d %-9s %-6s %-22s rel diff %.2e\n", rel <= tol ? "ok" : "FAIL", route, (int)dim, (int)k, PatchworkTensorBCs[bc], vertex ? "vertex" : "gauss", what, (double)rel));
  PetscFunctionReturn(0);
}

/* operator route: coefficients and grid read from a Patchwork tensor operator on a non-cubic box */
static PetscErrorCode OperatorRoute(PetscInt dim, PetscInt k, PatchworkTensorBC bc, PetscBool vertex, PetscReal tol, PetscInt *fails)
{
  const PetscInt  cells[3] = {3, 2, 2};
  const PetscReal lower[3] = {0, -1, 0.25}, upper[3] = {2, 1, 0.75};
  DM              dm;
  Mat             A, Alor, Alor2, R;
  PC              pc;
  PetscReal       rel;

  PetscFunctionBeginUser;
  PetscCall(PatchworkDMDACreateQk(PETSC_COMM_WORLD, dim, k, cells, lower, upper, &dm));
  PetscCall(MatCreatePatchworkTensor(dm, k, &A));
  PetscCall(MatPatchworkTensorSetCoefficients(A, 0.7, 1.3));
  PetscCall(MatPatchworkTensorSetBC(A, bc));
  PetscCall(PCCreate(PETSC_COMM_WORLD, &pc));
  PetscCall(PCSetType(pc, PCLOR));
  PetscCall(PCSetOperators(pc, A, A));
  PetscCall(PCLORSetQuadrature(pc, vertex ? PATCHWORK_QUADRATURE_GAUSSLOBATTO : PATCHWORK_QUADRATURE_GAUSS));
  PetscCall(PCSetFromOptions(pc));
  PetscCall(SetUpAndGet(pc, &Alor));
  PetscCall(PatchworkTestAssembleQ1Refined(dm, 0.7, 1.3, (PetscBool)(bc == PATCHWORK_BC_DIRICHLET), vertex, &R));
  PetscCall(RelativeDifference(Alor, R, &rel));
  PetscCall(Report("operator", dim, k, bc, vertex, "0.7 M + 1.3 K", rel, tol, fails));
  PetscCall(MatDestroy(&R));

  /* new coefficients: the same matrix object (pattern kept), new values */
  PetscCall(MatPatchworkTensorSetCoefficients(A, 2.5, 0.4));
  PetscCall(PCSetOperators(pc, A, A));
  PetscCall(SetUpAndGet(pc, &Alor2));
  PetscCall(PatchworkTestAssembleQ1Refined(dm, 2.5, 0.4, (PetscBool)(bc == PATCHWORK_BC_DIRICHLET), vertex, &R));
  PetscCall(RelativeDifference(Alor2, R, &rel));
  if (Alor2 != Alor) rel = PETSC_MAX_REAL; /* the pattern was rebuilt */
  PetscCall(Report("operator", dim, k, bc, vertex, "new coefs, same pattern", rel, tol, fails));
  PetscCall(MatDestroy(&R));
  PetscCall(PCDestroy(&pc));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&dm));
  PetscFunctionReturn(0);
}

/* DM route: the operator is any Mat (here the reference itself), the curved node grid comes from
   PCSetDM(), the discretization from PCLORSet*() */
static PetscErrorCode DMRoute(PetscInt dim, PetscInt k, PatchworkTensorBC bc, PetscBool vertex, PetscReal tol, PetscInt *fails)
{
  const PetscInt cells[3] = {2, 3, 2};
  DM             dm;
  Mat            Alor, R;
  PC             pc;
  PetscReal      rel;

  PetscFunctionBeginUser;
  PetscCall(PatchworkDMDACreateQk(PETSC_COMM_WORLD, dim, k, cells, NULL, NULL, &dm));
  PetscCall(PatchworkTestPerturbCoordinates(dm, 0.3));
  PetscCall(PatchworkTestAssembleQ1Refined(dm, 0.2, 3.0, (PetscBool)(bc == PATCHWORK_BC_DIRICHLET), vertex, &R));
  PetscCall(PCCreate(PETSC_COMM_WORLD, &pc));
  PetscCall(PCSetType(pc, PCLOR));
  PetscCall(PCSetOperators(pc, R, R));
  PetscCall(PCSetDM(pc, dm));
  PetscCall(PCLORSetDegree(pc, k));
  PetscCall(PCLORSetCoefficients(pc, 0.2, 3.0));
  PetscCall(PCLORSetBC(pc, bc));
  PetscCall(PCLORSetQuadrature(pc, vertex ? PATCHWORK_QUADRATURE_GAUSSLOBATTO : PATCHWORK_QUADRATURE_GAUSS));
  PetscCall(PCSetFromOptions(pc));
  PetscCall(SetUpAndGet(pc, &Alor));
  PetscCall(RelativeDifference(Alor, R, &rel));
  PetscCall(Report("dm", dim, k, bc, vertex, "curved, 0.2 M + 3 K", rel, tol, fails));
  PetscCall(MatDestroy(&R));
  PetscCall(PCDestroy(&pc));
  PetscCall(DMDestroy(&dm));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscInt  kmin = 1, kmax = 8, dims[2] = {2, 3}, ndims = 2, fails = 0, runs = 0;
  PetscReal tol = 1e-13;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PatchworkInitializePackage());
  {
    PetscBool set;

    /* the matrix is under test, not the AMG built on it (-lor_pc_type to run one anyway) */
    PetscCall(PetscOptionsHasName(NULL, NULL, "-lor_pc_type", &set));
    if (!set) PetscCall(PetscOptionsSetValue(NULL, "-lor_pc_type", "none"));
  }
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-kmin", &kmin, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-kmax", &kmax, NULL));
  {
    PetscInt  n = 2, given[2];
    PetscBool set;
    PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-dims", given, &n, &set));
    if (set) {
      ndims = n;
      for (PetscInt i = 0; i < n; i++) dims[i] = given[i];
    }
  }
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol", &tol, NULL));
  for (PetscInt i = 0; i < ndims; i++)
    for (PetscInt k = kmin; k <= kmax; k++)
      for (int b = 0; b < 4; b++) {
        const PatchworkTensorBC bc     = b & 1 ? PATCHWORK_BC_NATURAL : PATCHWORK_BC_DIRICHLET;
        const PetscBool         vertex = (PetscBool)(b < 2);
        PetscCall(OperatorRoute(dims[i], k, bc, vertex, tol, &fails));
        PetscCall(DMRoute(dims[i], k, bc, vertex, tol, &fails));
        runs += 3;
      }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "# %d of %d comparisons within %.0e\n", (int)(runs - fails), (int)runs, (double)tol));
  PetscCall(PetscFinalize());
  return fails ? 1 : 0;
}
