static const char help[] = "Definite Helmholtz problem alpha u - beta div(grad u) = f on the unit box, the Patchwork matrix-free\n"
                           "Q_k operator preconditioned by PCLOR (AMG on the low-order-refined matrix), with the time breakdown\n"
                           "of Pazner et al. 2023, figure 5: operator setup, LOR assembly, AMG setup, operator applies, AMG cycles.\n"
                           "The right-hand side is M 1 (Dirichlet rows: 1).\n"
                           "  -dim <3>, -degree <4>, -cells <8>   (cells: n or nx,ny[,nz])\n"
                           "  -alpha <1>, -beta <1>\n"
                           "Defaults: -ksp_type cg -ksp_rtol 1e-8 -pc_type lor; every PETSc option works (-lor_pc_type gamg,\n"
                           "-dm_vec_type cuda, -log_view, ...). On the GPU add -log_view_gpu_time so that the phase times wait for\n"
                           "the kernels. The last line is 'summary: key=value ...' for scripts.\n"
                           "A solve that does not converge is an error (nonzero exit) after the summary line; to accept -ksp_max_it\n"
                           "iterations as converged (a fixed iteration count) add -ksp_converged_maxits.\n";

#include <patchwork.h>
#include "walltime.h"

/* seconds spent in an event so far (main stage) */
static PetscErrorCode EventTime(PetscLogEvent e, PetscLogDouble *t)
{
  PetscEventPerfInfo info;

  PetscFunctionBeginUser;
  PetscCall(PetscLogEventGetPerfInfo(0, e, &info));
  *t = info.time;
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscInt           dim = 3, degree = 4, cells[3] = {8, 8, 8}, ncells = 3, its, N;
  PetscReal          alpha = 1, beta = 1;
  DM                 dm;
  Mat                A, Mass;
  Vec                u, b, one;
  KSP                ksp;
  PC                 pc;
  KSPConvergedReason reason;
  PetscLogDouble     start = WallTime(), last = start, tstartup, tdm, top, tpcsetup, tsolve, pattern, macro, gather, dirichlet, setvalues, inner, lorapply, opapply;
  PCType             ptype;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PatchworkInitializePackage());
  PetscCall(PetscLogDefaultBegin());
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Patchwork LOR example", NULL);
  PetscCall(PetscOptionsInt("-dim", "Spatial dimension (2 or 3)", NULL, dim, &dim, NULL));
  PetscCall(PetscOptionsInt("-degree", "Polynomial degree k", NULL, degree, &degree, NULL));
  PetscCall(PetscOptionsIntArray("-cells", "Cells per direction (one value: all directions)", NULL, cells, &ncells, NULL));
  PetscCall(PetscOptionsReal("-alpha", "Mass coefficient", NULL, alpha, &alpha, NULL));
  PetscCall(PetscOptionsReal("-beta", "Stiffness coefficient", NULL, beta, &beta, NULL));
  PetscOptionsEnd();
  if (ncells == 1) cells[1] = cells[2] = cells[0];

  PetscCall(WallPhase(PETSC_COMM_WORLD, &last, &tstartup));
  PetscCall(PatchworkDMDACreateQk(PETSC_COMM_WORLD, dim, degree, cells, NULL, NULL, &dm));
  PetscCall(WallPhase(PETSC_COMM_WORLD, &last, &tdm));
  PetscCall(MatCreatePatchworkTensor(dm, degree, &A));
  PetscCall(MatPatchworkTensorSetCoefficients(A, alpha, beta));
  PetscCall(MatSetFromOptions(A));
  PetscCall(DMCreateGlobalVector(dm, &u));
  PetscCall(VecDuplicate(u, &b));
  PetscCall(VecDuplicate(u, &one));
  PetscCall(VecGetSize(u, &N));
  PetscCall(MatCreatePatchworkTensor(dm, degree, &Mass));
  PetscCall(MatPatchworkTensorSetCoefficients(Mass, 1.0, 0.0));
  PetscCall(VecSet(one, 1.0));
  PetscCall(MatMult(Mass, one, b)); /* also sets up the kernel descriptors the operator shares */
  PetscCall(MatMult(A, one, u));
  PetscCall(VecDestroy(&one));
  PetscCall(WallPhase(PETSC_COMM_WORLD, &last, &top));

  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCLOR));
  PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 10000));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSetUp(ksp));
  PetscCall(WallPhase(PETSC_COMM_WORLD, &last, &tpcsetup));
  PetscCall(VecSet(u, 0.0));
  PetscCall(EventTime(PATCHWORK_TensorMult, &opapply));
  PetscCall(KSPSolve(ksp, b, u));
  PetscCall(WallPhase(PETSC_COMM_WORLD, &last, &tsolve));
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(PCGetType(pc, &ptype));

  {
    PetscLogDouble op2;
    PetscCall(EventTime(PATCHWORK_TensorMult, &op2));
    opapply = op2 - opapply;
  }
  PetscCall(EventTime(PATCHWORK_LORPattern, &pattern));
  PetscCall(EventTime(PATCHWORK_LORMacro, &macro));
  PetscCall(EventTime(PATCHWORK_LORGather, &gather));
  PetscCall(EventTime(PATCHWORK_LORDirichlet, &dirichlet));
  PetscCall(EventTime(PATCHWORK_LORSetValues, &setvalues));
  PetscCall(EventTime(PATCHWORK_LORInnerSetUp, &inner));
  PetscCall(EventTime(PATCHWORK_LORApply, &lorapply));

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Helmholtz %g u - %g lap u, %" PetscInt_FMT "D, Q%" PetscInt_FMT ", %" PetscInt_FMT " DoFs; KSP + PC %s: %" PetscInt_FMT " iterations, %s\n", (double)alpha, (double)beta, dim, degree, N, ptype, its, KSPConvergedReasons[reason]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  operator setup   %9.4f s (grid, operator, right-hand side)\n", tdm + top));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  PC setup         %9.4f s\n", tpcsetup));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "    LOR pattern    %9.4f s (once per grid)\n", pattern));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "    LOR values     %9.4f s (macro %.4f, gather %.4f, Dirichlet %.4f, MatSetValuesCOO %.4f)\n", macro + gather + dirichlet + setvalues, macro, gather, dirichlet, setvalues));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "    inner PC setup %9.4f s\n", inner));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  solve            %9.4f s (operator applies %.4f, inner PC applies %.4f)\n", tsolve, opapply, lorapply));
  PetscCall(WallPrint(PETSC_COMM_WORLD, tstartup, tdm, "DM", top, "operator and right-hand side", tpcsetup, tsolve, last - start));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "summary: dim=%" PetscInt_FMT " degree=%" PetscInt_FMT " dofs=%" PetscInt_FMT " pc=%s its=%" PetscInt_FMT " reason=%s op_setup_s=%.6f pc_setup_s=%.6f lor_pattern_s=%.6f lor_values_s=%.6f inner_setup_s=%.6f solve_s=%.6f op_apply_s=%.6f inner_apply_s=%.6f startup_s=%.6f dm_s=%.6f op_s=%.6f total_s=%.6f\n", dim, degree, N, ptype, its, KSPConvergedReasons[reason], tdm + top, tpcsetup, pattern, macro + gather + dirichlet + setvalues, inner, tsolve, opapply, lorapply, tstartup, tdm, top, last - start));
  PetscCheck(reason > 0, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "KSPSolve did not converge: %s%s", KSPConvergedReasons[reason], reason == KSP_DIVERGED_ITS ? " (for a fixed number of iterations add -ksp_converged_maxits)" : "");

  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&u));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&Mass));
  PetscCall(DMDestroy(&dm));
  PetscCall(PetscFinalize());
  return 0;
}
