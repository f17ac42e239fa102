static const char help[] = "Singular P1 problems: -div(sigma grad u) = f with natural (Neumann) conditions on the whole boundary of\n"
                           "the test meshes of Fu et al. 2014 (examples/tets.h), assembled by PatchworkDMPlexAssembleP1() with\n"
                           "lambda = 0, the constants attached as null space (MatSetNullSpace()). The exact solution is a smooth\n"
                           "field plus noise with zero mean, b = A u; CG (default) to the options' tolerance (default 1e-10) with\n"
                           "the preconditioner the options give (default PCPATCHAMG); the error is taken up to the null space.\n"
                           "  -mesh, -cells, -refine, -refine_hierarchy, -sigma_ratio, ...   the mesh (examples/tets.c's options)\n"
                           "  -nullspace <1>   attach the null space (0: PCPATCHAMG must refuse the singular matrix clearly)\n"
                           "  -max_its <m>     fail when the KSP needs more iterations (0: no check)\n"
                           "  -max_err <e>     fail when the relative error, null space removed, is larger (default 1e-6)\n"
                           "  -solves <n>      solve n times with the same KSP; each solve after the first scales A and b by 2, so\n"
                           "                   that the preconditioner is set up again (PCReset, the null space handling rebuilt)\n"
                           "  -scale           : solve D A D instead (D a positive diagonal in [1/2, 2]): the null vector D^-1 1 is not constant\n"
                           "The last line is 'summary: key=value ...'.\n";

#include <patchwork.h>
#include "../../examples/tets.h"

/* The exact solution: a smooth field of the coordinates plus a little noise, per local row; d (may be NULL):
   a positive diagonal in [1/2, 2] by position too */
static PetscErrorCode ExactSolution(DM dm, Vec u, Vec d)
{
  PetscSection       gsec, csec;
  Vec                xl;
  const PetscScalar *xa;
  PetscScalar       *ua, *da = NULL;
  PetscInt           cdim, vStart, vEnd, rstart;

  PetscFunctionBeginUser;
  PetscCall(DMGetGlobalSection(dm, &gsec));
  PetscCall(DMGetCoordinateSection(dm, &csec));
  PetscCall(DMGetCoordinatesLocal(dm, &xl));
  PetscCall(DMGetCoordinateDim(dm, &cdim));
  PetscCall(DMPlexGetDepthStratum(dm, 0, &vStart, &vEnd));
  PetscCall(VecGetOwnershipRange(u, &rstart, NULL));
  PetscCall(VecGetArrayRead(xl, &xa));
  PetscCall(VecGetArray(u, &ua));
  if (d) PetscCall(VecGetArray(d, &da));
  for (PetscInt v = vStart; v < vEnd; v++) {
    PetscInt           dof, off, coff;
    PetscReal          x[3] = {0, 0, 0};
    unsigned long long s;

    PetscCall(PetscSectionGetDof(gsec, v, &dof));
    PetscCall(PetscSectionGetOffset(gsec, v, &off));
    if (dof <= 0 || off < 0) continue; /* another rank's vertex */
    PetscCall(PetscSectionGetOffset(csec, v, &coff));
    for (PetscInt d = 0; d < cdim; d++) x[d] = PetscRealPart(xa[coff + d]);
    s = 0x9e3779b97f4a7c15ULL ^ (unsigned long long)(1e6 * (x[0] + 3 * x[1] + 7 * x[2] + 11)); /* by position: any number of ranks */
    for (int i = 0; i < 3; i++) TetsRandom(&s);
    ua[off - rstart] = PetscCosReal(x[0]) * PetscCosReal(2 * x[1]) * PetscCosReal(x[2]) + 0.1 * TetsRandom(&s);
    if (da) da[off - rstart] = 0.5 + 1.5 * TetsRandom(&s);
  }
  if (d) PetscCall(VecRestoreArray(d, &da));
  PetscCall(VecRestoreArray(u, &ua));
  PetscCall(VecRestoreArrayRead(xl, &xa));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  TetsOptions        o;
  PetscBool          attach = PETSC_TRUE, scale = PETSC_FALSE;
  PetscInt           max_its = 0, solves = 1, its = 0, nvert;
  PetscReal          max_err = 1e-6, err = 0, nu;
  DM                 dm;
  Vec                sigma, u, x, b;
  Mat                A;
  MatNullSpace       nsp;
  KSP                ksp;
  PC                 pc;
  PCType             pctype;
  KSPConvergedReason reason = KSP_CONVERGED_ITERATING;
  PetscMPIInt        size;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PatchworkInitializePackage());
  TetsOptionsDefault(&o);
  PetscCall(TetsOptionsSetFromOptions(PETSC_COMM_WORLD, &o));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-nullspace", &attach, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-max_its", &max_its, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-max_err", &max_err, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-solves", &solves, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-scale", &scale, NULL));

  PetscCall(TetsCreateMesh(PETSC_COMM_WORLD, &o, &dm));
  PetscCall(DMSetFromOptions(dm)); /* -dm_mat_type aijcusparse -dm_vec_type cuda on the GPU */
  PetscCall(TetsCreateSigma(dm, &o, &sigma, NULL));
  PetscCall(PatchworkDMPlexAssembleP1(dm, 0.0, sigma, &A));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(x, &u));
  PetscCall(ExactSolution(dm, u, scale ? b : NULL));
  if (scale) { /* D A D, null vector D^-1 1 */
    PetscCall(MatDiagonalScale(A, b, b));
    Vec z; /* MatNullSpaceCreate() keeps the vector itself */

    PetscCall(VecDuplicate(x, &z));
    PetscCall(VecSet(z, 1.0));
    PetscCall(VecPointwiseDivide(z, z, b));
    PetscCall(VecNormalize(z, NULL));
    PetscCall(MatNullSpaceCreate(PETSC_COMM_WORLD, PETSC_FALSE, 1, &z, &nsp));
    PetscCall(VecDestroy(&z));
  } else PetscCall(MatNullSpaceCreate(PETSC_COMM_WORLD, PETSC_TRUE, 0, NULL, &nsp));
  if (attach) PetscCall(MatSetNullSpace(A, nsp));
  PetscCall(MatNullSpaceRemove(nsp, u));
  PetscCall(MatMult(A, u, b));
  PetscCall(VecNorm(u, NORM_2, &nu));

  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCPATCHAMG));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 1000));
  if (o.hierarchy) PetscCall(PCSetDM(pc, dm)); /* -pc_patchamg_hierarchy geometric */
  PetscCall(KSPSetFromOptions(ksp));
  for (PetscInt s = 0; s < solves; s++) {
    if (s > 0) { /* new values: the KSP sets the preconditioner up again */
      PetscCall(MatScale(A, 2.0));
      PetscCall(VecScale(b, 2.0));
    }
    PetscCall(VecZeroEntries(x));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(KSPGetIterationNumber(ksp, &its));
    PetscCall(KSPGetConvergedReason(ksp, &reason));
    PetscCall(MatNullSpaceRemove(nsp, x));
    PetscCall(VecAXPY(x, -1.0, u));
    PetscCall(VecNorm(x, NORM_2, &err));
    err /= nu;
  }
  PetscCall(PCGetType(pc, &pctype));
  PetscCall(MatGetSize(A, &nvert, NULL));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "summary: mesh=%s vertices=%" PetscInt_FMT " ranks=%d pc=%s its=%" PetscInt_FMT " reason=%s err=%.2e\n", TetsMeshTypes[o.type], nvert, size, pctype, its, KSPConvergedReasons[reason], (double)err));
  PetscCheck(reason > 0, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "The solve did not converge: %s after %" PetscInt_FMT " iterations", KSPConvergedReasons[reason], its);
  PetscCheck(err <= max_err, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "The relative error %g is above -max_err %g", (double)err, (double)max_err);
  PetscCheck(max_its <= 0 || its <= max_its, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "%" PetscInt_FMT " iterations, more than -max_its %" PetscInt_FMT, its, max_its);

  PetscCall(MatNullSpaceDestroy(&nsp));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&u));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&sigma));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&dm));
  PetscCall(PetscFinalize());
  return 0;
}
