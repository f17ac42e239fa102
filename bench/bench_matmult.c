static const char help[] = "MatMult throughput of the Patchwork tensor-product operator (3D Q_k Poisson, Dirichlet)\n"
                           "beside PETSc's SpMV on the same operator assembled as AIJ (AIJCUSPARSE with -dm_vec_type cuda)\n"
                           "and the bandwidth bound of 16 bytes per DoF at the VecCopy rate measured in the same run.\n"
                           "  -kmin <1> -kmax <8>      degrees\n"
                           "  -dofs <1e5,1e6,1e7,5e7>  target problem sizes (the grid is the nearest k*N+1 cube)\n"
                           "  -spmv_max_nnz <1.2e9>    assemble the AIJ matrix only up to this many nonzeros (12 bytes each;\n"
                           "                           1.2e9 takes 1M DoF at k=8; at most 2^31-1 with 32-bit PetscInt)\n"
                           "  -reps <20>               timed applies per measurement (median reported)\n";

#include "benchutil.h"

int main(int argc, char **argv)
{
  PetscInt  kmin = 1, kmax = 8, ndofs = 8, reps = 20;
  PetscReal dofs[8] = {1e5, 1e6, 1e7, 5e7}, maxnnz = 1.2e9, copyrate = 0;
  PetscBool device;
  VecType   vtype;
  char      vtypename[64] = "standard";

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PatchworkInitializePackage());
  ndofs = 4;
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "MatMult benchmark", NULL);
  PetscCall(PetscOptionsInt("-kmin", "Lowest degree", NULL, kmin, &kmin, NULL));
  PetscCall(PetscOptionsInt("-kmax", "Highest degree", NULL, kmax, &kmax, NULL));
  PetscCall(PetscOptionsRealArray("-dofs", "Target sizes", NULL, dofs, &ndofs, NULL));
  PetscCall(PetscOptionsReal("-spmv_max_nnz", "Largest AIJ matrix to assemble", NULL, maxnnz, &maxnnz, NULL));
  PetscCall(PetscOptionsInt("-reps", "Timed applies", NULL, reps, &reps, NULL));
  PetscOptionsEnd();
  PetscCall(PetscOptionsGetString(NULL, NULL, "-dm_vec_type", vtypename, sizeof(vtypename), NULL));
  device = strstr(vtypename, "cuda") ? PETSC_TRUE : PETSC_FALSE;

  /* the bandwidth bound: VecCopy moves 16 bytes per entry, like an ideal MatMult */
  {
    Vec       a, b;
    PetscInt  n = (PetscInt)dofs[ndofs - 1];
    double    t = 0;

    PetscCall(VecCreate(PETSC_COMM_WORLD, &a));
    PetscCall(VecSetSizes(a, PETSC_DECIDE, n));
    PetscCall(VecSetType(a, device ? VECCUDA : VECSTANDARD));
    PetscCall(VecDuplicate(a, &b));
    PetscCall(VecSet(a, 1.0));
    PetscCall(VecCopy(a, b));
    for (PetscInt i = 0; i < 10; i++) {
      PetscLogDouble t0, t1;

      PetscCall(Sync());
      PetscCall(PetscTime(&t0));
      PetscCall(VecCopy(a, b));
      PetscCall(Sync());
      PetscCall(PetscTime(&t1));
      t = i ? PetscMin(t, t1 - t0) : t1 - t0;
    }
    copyrate = 16.0 * n / t;
    PetscCall(VecDestroy(&a));
    PetscCall(VecDestroy(&b));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "vectors %s; VecCopy rate %.3f TB/s -> bound %.1f GDoF/s at 16 B/DoF\n", vtypename, copyrate * 1e-12, copyrate / 16 * 1e-9));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-3s %-3s %11s %13s %13s %13s %10s %9s %10s\n", "dim", "k", "DoF", "shell-atomic", "shell-color", "AIJ SpMV", "AIJ nnz", "%bound", "shell/AIJ"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-3s %-3s %11s %13s %13s %13s %10s %9s %10s\n", "", "", "", "GDoF/s", "GDoF/s", "GDoF/s", "", "(best)", ""));

  for (PetscInt k = kmin; k <= kmax; k++) {
    for (PetscInt s = 0; s < ndofs; s++) {
      PetscInt  N = PetscMax(1, (PetscInt)(0.5 + (PetscPowReal(dofs[s], 1.0 / 3) - 1) / k)), cells[3] = {N, N, N}, n;
      DM        dm;
      Mat       A, S = NULL;
      Vec       x, y, z;
      double    tat, tco, tsp = 0;
      PetscReal rate[3], err = 0, best;
      PetscLogDouble nnz = 0;
      char      spmv[32] = "-", nnzs[32] = "-", ratio[32] = "-";

      PetscCall(PatchworkDMDACreateQk(PETSC_COMM_WORLD, 3, k, cells, NULL, NULL, &dm));
      PetscCall(DMGetVecType(dm, &vtype));
      PetscCall(MatCreatePatchworkTensor(dm, k, &A));
      PetscCall(MatCreateVecs(A, &x, &y));
      PetscCall(VecDuplicate(y, &z));
      PetscCall(VecGetSize(x, &n));
      PetscCall(VecSetRandom(x, NULL));
      PetscCall(MatPatchworkTensorSetCoefficients(A, 0.0, 1.0));
      PetscCall(PetscOptionsSetValue(NULL, "-mat_patchwork_scatter", "atomic"));
      PetscCall(MatSetFromOptions(A));
      PetscCall(TimeMult(A, x, y, reps, &tat));
      PetscCall(PetscOptionsSetValue(NULL, "-mat_patchwork_scatter", "colored"));
      PetscCall(MatSetFromOptions(A));
      PetscCall(TimeMult(A, x, z, reps, &tco));
      PetscCall(VecAXPY(z, -1.0, y));
      PetscCall(VecNorm(z, NORM_INFINITY, &err));
      PetscCheck(err <= 1e-10 * n, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "atomic and colored scatter disagree by %g", (double)err);
      rate[0] = n / tat * 1e-9;
      rate[1] = n / tco * 1e-9;
      /* the assembled operator, where it fits (its exact nonzero count, in floating point) */
      nnz = KronNonzeros(3, k, N);
      if (nnz <= maxnnz && nnz <= PETSC_MAX_INT) {
        PetscReal ynorm;

        PetscCall(AssembleKron(3, k, N, &S));
        if (device) PetscCall(MatConvert(S, MATSEQAIJCUSPARSE, MAT_INPLACE_MATRIX, &S));
        PetscCall(TimeMult(S, x, z, reps, &tsp));
        PetscCall(VecNorm(y, NORM_INFINITY, &ynorm));
        PetscCall(VecAXPY(z, -1.0, y));
        PetscCall(VecNorm(z, NORM_INFINITY, &err));
        PetscCheck(err <= 1e-11 * ynorm, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "shell and assembled operator disagree: %g relative", (double)(err / ynorm));
        {
          MatInfo info;

          PetscCall(MatGetInfo(S, MAT_LOCAL, &info));
          nnz = info.nz_used;
        }
        rate[2] = n / tsp * 1e-9;
        PetscCall(PetscSNPrintf(spmv, sizeof(spmv), "%.3f", (double)rate[2]));
        PetscCall(PetscSNPrintf(nnzs, sizeof(nnzs), "%.3g", (double)nnz));
        PetscCall(PetscSNPrintf(ratio, sizeof(ratio), "%.1fx", (double)(PetscMax(rate[0], rate[1]) / rate[2])));
        PetscCall(MatDestroy(&S));
      }
      best = PetscMax(rate[0], rate[1]);
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-3d %-3" PetscInt_FMT " %11" PetscInt_FMT " %13.3f %13.3f %13s %10s %8.1f%% %10s\n", 3, k, n, (double)rate[0], (double)rate[1], spmv, nnzs, (double)(100 * best / (copyrate / 16 * 1e-9)), ratio));
      PetscCall(VecDestroy(&x));
      PetscCall(VecDestroy(&y));
      PetscCall(VecDestroy(&z));
      PetscCall(MatDestroy(&A));
      PetscCall(DMDestroy(&dm));
    }
  }
  PetscCall(PetscFinalize());
  return 0;
}
