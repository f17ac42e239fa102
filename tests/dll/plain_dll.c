static const char help[] = "A plain PETSc program, never linked against Patchwork, that reaches it through\n"
                           "-dll_append /path/to/libpetscpatchwork.so only: it checks that loading the\n"
                           "library registered Patchwork's log events, then solves a small problem with the\n"
                           "operator it finds in the loaded library.\n";

#include <petscdmda.h>
#include <petscksp.h>

/* The two Patchwork entry points this program uses, declared here: no Patchwork header is included */
typedef PetscErrorCode (*CreateQkFn)(MPI_Comm, PetscInt, PetscInt, const PetscInt[], const PetscReal[], const PetscReal[], DM *);
typedef PetscErrorCode (*CreateTensorFn)(DM, PetscInt, Mat *);

int main(int argc, char **argv)
{
  PetscLogEvent  event;
  PetscErrorCode lookup;
  void          *f1 = NULL, *f2 = NULL;
  const PetscInt cells[2] = {6, 5};
  DM             dm;
  Mat            A;
  Vec            x, b, u;
  KSP            ksp;
  PetscReal      err;
  PetscInt       its;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  /* PetscDLLibraryRegister_petscpatchwork() ran at PetscInitialize() if the library was appended */
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  event  = -1;
  lookup = PetscLogEventGetId("PWTensorMult", &event);
  if (!lookup && event < 0) lookup = PETSC_ERR_ARG_WRONG; /* unknown names give -1 on some versions */
  PetscCall(PetscPopErrorHandler());
  PetscCall(PetscDLLibrarySym(PETSC_COMM_WORLD, &PetscDLLibrariesLoaded, NULL, "PatchworkDMDACreateQk", &f1));
  PetscCall(PetscDLLibrarySym(PETSC_COMM_WORLD, &PetscDLLibrariesLoaded, NULL, "MatCreatePatchworkTensor", &f2));
  if (lookup || !f1 || !f2) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "plain_dll: Patchwork is not loaded (events %s, symbols %s): run with -dll_append /path/to/libpetscpatchwork.so\n", lookup ? "missing" : "registered", f1 && f2 ? "found" : "missing"));
    PetscCall(PetscFinalize());
    return 2;
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "plain_dll: Patchwork loaded: log events registered, constructors found\n"));

  /* solve A u = A x for a random x with the operator from the plugin */
  PetscCall(((CreateQkFn)f1)(PETSC_COMM_WORLD, 2, 3, cells, NULL, NULL, &dm));
  PetscCall(((CreateTensorFn)f2)(dm, 3, &A));
  PetscCall(MatSetFromOptions(A));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(x, &u));
  PetscCall(VecSetRandom(x, NULL));
  PetscCall(MatMult(A, x, b));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPSetTolerances(ksp, 1e-12, PETSC_DEFAULT, PETSC_DEFAULT, 1000));
  {
    PC pc;

    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCJACOBI));
  }
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSolve(ksp, b, u));
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(VecAXPY(u, -1.0, x));
  PetscCall(VecNorm(u, NORM_INFINITY, &err));
  PetscCall(MatView(A, PETSC_VIEWER_STDOUT_WORLD));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s plain_dll: CG + Jacobi recovered x in %" PetscInt_FMT " iterations, max error %g (tolerance 1e-8)\n", err < 1e-8 ? "ok  " : "FAIL", its, (double)err));

  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&u));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&dm));
  PetscCall(PetscFinalize());
  return err < 1e-8 ? 0 : 1; /* a NaN fails */
}
