static const char help[] = "Solve A u = 1 by CG to ||r|| / ||b|| < 1e-8 (as examples/tets) for a matrix read from a PETSc binary file, with the PC the\n"
                           "options give, and print the setup and solve times: the CPU AMGs (BoomerAMG, GAMG) on many ranks\n"
                           "on exactly the matrix a one-GPU run assembled (examples/tets ... -ksp_view_mat binary:A.bin).\n"
                           "  -f <file>     the matrix (MatLoad(); the type from -mat_type, default aij)\n"
                           "  -reps <1>     solves after the setup (the fastest is reported; total_s: from main() to the first solution)\n"
                           "The last line is 'summary: key=value ...' for scripts.\n";

#include <patchwork.h> /* PCPATCHAMG, PCLOR, ... by -pc_type */
#include "../examples/walltime.h"

int main(int argc, char **argv)
{
  char               file[PETSC_MAX_PATH_LEN] = "";
  PetscBool          flg;
  PetscInt           reps = 1, its = 0, m;
  PetscViewer        viewer;
  Mat                A;
  Vec                b, u;
  KSP                ksp;
  PC                 pc;
  PCType             pctype;
  KSPConvergedReason reason = KSP_CONVERGED_ITERATING;
  PetscLogDouble     start = WallTime(), last = start, tstartup, tload, tsetup, tzero, tsolve, tfirst = 0, total = 0, solve = PETSC_MAX_REAL;
  PetscMPIInt        size;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PatchworkInitializePackage());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", file, sizeof(file), &flg));
  PetscCheck(flg, PETSC_COMM_WORLD, PETSC_ERR_USER, "Give the matrix file with -f <file>");
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-reps", &reps, NULL));
  PetscCall(MPI_Comm_size(PETSC_COMM_WORLD, &size));

  PetscCall(WallPhase(PETSC_COMM_WORLD, &last, &tstartup));
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, file, FILE_MODE_READ, &viewer));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetFromOptions(A));
  PetscCall(MatLoad(A, viewer));
  PetscCall(PetscViewerDestroy(&viewer));
  PetscCall(MatCreateVecs(A, &u, &b));
  PetscCall(VecSet(b, 1.0));
  PetscCall(MatGetSize(A, &m, NULL));

  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 500));
  PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED)); /* ||r|| / ||b||, as examples/tets */
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(WallPhase(PETSC_COMM_WORLD, &last, &tload));
  PetscCall(KSPSetUp(ksp));
  PetscCall(PCSetUp(pc));
  PetscCall(WallPhase(PETSC_COMM_WORLD, &last, &tsetup));
  for (PetscInt r = 0; r < reps; r++) {
    PetscCall(VecSet(u, 0.0));
    PetscCall(WallPhase(PETSC_COMM_WORLD, &last, &tzero)); /* the zero initial guess: not part of the solve */
    PetscCall(KSPSolve(ksp, b, u));
    PetscCall(WallPhase(PETSC_COMM_WORLD, &last, &tsolve));
    solve = PetscMin(solve, tsolve);
    if (r == 0) { /* what a user waits for: up to the first solution */
      tfirst = tsolve;
      total  = last - start;
    }
  }
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(PCGetType(pc, &pctype));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "summary: rows=%" PetscInt_FMT " ranks=%d pc=%s load_s=%.4f setup_s=%.4f solve_s=%.4f first_solve_s=%.4f startup_s=%.4f total_s=%.4f its=%" PetscInt_FMT " reason=%s\n", m, size, pctype, tload, tsetup, solve, tfirst, tstartup, total, its, KSPConvergedReasons[reason]));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&u));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
