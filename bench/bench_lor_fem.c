static const char help[] = "LOR assembly against the generic route: PETSc's own FEM assembly of the same Q1 matrix on the\n"
                           "refined mesh (Pazner et al. 2023, figure 7). For every degree k, with N^dim macro cells, N = the\n"
                           "nearest integer to dofs^(1/dim)/k, and u - lap u, 2 Gauss points per direction everywhere:\n"
                           "  PCLOR, DMDA   the Q_k operator on a DMDA: PCLOR's first setup (pattern and values) and a second\n"
                           "                after new coefficients (values only: the macro-element kernels on the GPU)\n"
                           "  PCLOR, DMPlex the same operator on a DMPlex box: pattern on the host, values per sub-cell\n"
                           "  PETSc FEM     DMPlex box of (kN)^dim Q1 hexahedra: DMCreateMatrix + DMPlexSNESComputeJacobianFEM,\n"
                           "                then the Jacobian again (values only)\n"
                           "Each time ends after a MatMult with the matrix (PETSc copies a host-assembled matrix to the GPU\n"
                           "there). The inner preconditioner is PCNONE: only the assembly is timed.\n"
                           "  -dim <3>  -degrees <1,2,4,6,8>  -dofs <1e6>  -fem_max_dofs <3e6> (PETSc's route only up to this)\n";

#include "benchutil.h"
#include <petscds.h>
#include <petscsnes.h>

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

/* Time of a MatMult-terminated step that the caller started at t0 */
static PetscErrorCode StopAfterMult(Mat A, PetscLogDouble t0, double *s)
{
  Vec            x, y;
  PetscLogDouble t1;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(MatMult(A, x, y));
  PetscCall(Sync());
  PetscCall(PetscTime(&t1));
  *s = t1 - t0;
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(0);
}

/* PCLOR on the operator A: first setup, then values only after new coefficients */
static PetscErrorCode TimeLOR(Mat A, double *first, double *second, PetscInt *nnz)
{
  PC             pc;
  Mat            L;
  MatInfo        info;
  PetscLogDouble t0;

  PetscFunctionBeginUser;
  PetscCall(PCCreate(PETSC_COMM_WORLD, &pc));
  PetscCall(PCSetType(pc, PCLOR));
  PetscCall(PCLORSetQuadrature(pc, PATCHWORK_QUADRATURE_GAUSS));
  PetscCall(PCSetOperators(pc, A, A));
  PetscCall(Sync());
  PetscCall(PetscTime(&t0));
  PetscCall(PCSetUp(pc));
  PetscCall(PCLORGetMatrix(pc, &L));
  PetscCall(StopAfterMult(L, t0, first));
  PetscCall(MatPatchworkTensorSetCoefficients(A, 1.5, 1.0));
  PetscCall(PCSetOperators(pc, A, A));
  PetscCall(Sync());
  PetscCall(PetscTime(&t0));
  PetscCall(PCSetUp(pc));
  PetscCall(PCLORGetMatrix(pc, &L));
  PetscCall(StopAfterMult(L, t0, second));
  PetscCall(MatGetInfo(L, MAT_GLOBAL_SUM, &info));
  *nnz = (PetscInt)info.nz_used;
  PetscCall(PCDestroy(&pc));
  PetscFunctionReturn(0);
}

static PetscErrorCode TimeLORDMDA(PetscInt dim, PetscInt k, PetscInt N, PetscInt *dofs, double *first, double *second, PetscInt *nnz)
{
  const PetscInt cells[3] = {N, N, N};
  DM             dm;
  Mat            A;

  PetscFunctionBeginUser;
  PetscCall(PatchworkDMDACreateQk(PETSC_COMM_WORLD, dim, k, cells, NULL, NULL, &dm));
  PetscCall(MatCreatePatchworkTensor(dm, k, &A));
  PetscCall(MatPatchworkTensorSetCoefficients(A, 1.0, 1.0));
  PetscCall(MatPatchworkTensorSetBC(A, PATCHWORK_BC_NATURAL));
  PetscCall(MatSetFromOptions(A));
  PetscCall(MatGetSize(A, dofs, NULL));
  PetscCall(TimeLOR(A, first, second, nnz));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&dm));
  PetscFunctionReturn(0);
}

static PetscErrorCode TimeLORPlex(PetscInt dim, PetscInt k, PetscInt N, double *first, double *second, PetscInt *nnz)
{
  DM  dm;
  Mat A;

  PetscFunctionBeginUser;
  PetscCall(BenchPlexBox(dim, N, "0,0,0", "1,1,1", 1, &dm));
  PetscCall(PatchworkDMPlexSetQkField(dm, k, PETSC_FALSE));
  PetscCall(MatCreatePatchworkTensor(dm, k, &A));
  PetscCall(MatPatchworkTensorSetCoefficients(A, 1.0, 1.0));
  PetscCall(TimeLOR(A, first, second, nnz));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&dm));
  PetscFunctionReturn(0);
}

static PetscErrorCode TimeFEM(PetscInt dim, PetscInt n, double *first, double *second, PetscInt *nnz)
{
  DM             dm;
  PetscDS        ds;
  Mat            J;
  Vec            X;
  MatInfo        info;
  PetscLogDouble t0;

  PetscFunctionBeginUser;
  PetscCall(BenchPlexBox(dim, n, "0,0,0", "1,1,1", 1, &dm));
  PetscCall(PatchworkDMPlexSetQkField(dm, 1, PETSC_FALSE));
  PetscCall(DMGetDS(dm, &ds));
  PetscCall(PetscDSSetJacobian(ds, 0, 0, G0, NULL, NULL, G3));
  PetscCall(DMCreateLocalVector(dm, &X));
  PetscCall(VecZeroEntries(X));
  PetscCall(Sync());
  PetscCall(PetscTime(&t0));
  PetscCall(DMCreateMatrix(dm, &J));
  PetscCall(DMPlexSNESComputeJacobianFEM(dm, X, J, J, NULL));
  PetscCall(StopAfterMult(J, t0, first));
  PetscCall(PetscTime(&t0));
  PetscCall(DMPlexSNESComputeJacobianFEM(dm, X, J, J, NULL));
  PetscCall(StopAfterMult(J, t0, second));
  PetscCall(MatGetInfo(J, MAT_GLOBAL_SUM, &info));
  *nnz = (PetscInt)info.nz_used;
  PetscCall(MatDestroy(&J));
  PetscCall(VecDestroy(&X));
  PetscCall(DMDestroy(&dm));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscInt  dim = 3, degrees[16] = {1, 2, 4, 6, 8}, nk = 16;
  PetscReal dofs = 1e6, femmax = 3e6;
  PetscBool set;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PatchworkInitializePackage());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-dim", &dim, NULL));
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-degrees", degrees, &nk, &set));
  if (!set) nk = 5;
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-dofs", &dofs, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-fem_max_dofs", &femmax, NULL));
  PetscCall(PetscOptionsSetValue(NULL, "-lor_pc_type", "none"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "== LOR assembly vs PETSc's FEM assembly of the same Q1 matrix, %" PetscInt_FMT "D, seconds (first: with the pattern; again: values only)\n", dim));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-2s %5s %10s %11s | %9s %9s %9s | %9s %9s | %9s %9s %11s | %8s %8s\n", "k", "N", "DoF", "nonzeros", "DMDA 1st", "again", "GDoF/s", "Plex 1st", "again", "FEM 1st", "again", "FEM nnz", "FEM/DMDA", "FEM/Plex"));
  for (PetscInt i = 0; i < nk; i++) {
    const PetscInt k = degrees[i];
    const PetscInt N = PetscMax(1, (PetscInt)(PetscPowReal(dofs, 1.0 / dim) / k + 0.5));
    PetscInt       n, nnz, pnnz, fnnz = 0;
    double         d1, d2, p1, p2, f1 = 0, f2 = 0;

    PetscCall(TimeLORDMDA(dim, k, N, &n, &d1, &d2, &nnz));
    PetscCall(TimeLORPlex(dim, k, N, &p1, &p2, &pnnz));
    if (n <= femmax) PetscCall(TimeFEM(dim, k * N, &f1, &f2, &fnnz));
    PetscCheck(pnnz == nnz && (!fnnz || fnnz == nnz), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "The matrices differ in their nonzeros: DMDA %" PetscInt_FMT ", DMPlex %" PetscInt_FMT ", FEM %" PetscInt_FMT, nnz, pnnz, fnnz);
    if (fnnz)
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-2" PetscInt_FMT " %5" PetscInt_FMT " %10" PetscInt_FMT " %11" PetscInt_FMT " | %9.4f %9.4f %9.3f | %9.4f %9.4f | %9.3f %9.3f %11" PetscInt_FMT " | %8.0f %8.0f\n", k, N, n, nnz, d1, d2, n / d2 / 1e9, p1, p2, f1, f2, fnnz, f2 / d2, f2 / p2));
    else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-2" PetscInt_FMT " %5" PetscInt_FMT " %10" PetscInt_FMT " %11" PetscInt_FMT " | %9.4f %9.4f %9.3f | %9.4f %9.4f | %9s %9s %11s | %8s %8s\n", k, N, n, nnz, d1, d2, n / d2 / 1e9, p1, p2, "-", "-", "-", "-", "-"));
  }
  PetscCall(PetscFinalize());
  return 0;
}
