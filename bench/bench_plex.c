static const char help[] = "MatMult throughput of the tensor-product operator on a general (DMPlex) hexahedral mesh with\n"
                           "the variable coefficient 1/(0.05 + 2|x|^2) (Ljungkvist 2017), for three quadrature rules, beside\n"
                           "PETSc's SpMV on the same operator assembled by PETSc's FEM (AIJCUSPARSE with -dm_vec_type cuda\n"
                           "-dm_mat_type aijcusparse) where assembling it is affordable. On device vectors and multilinear\n"
                           "cells (-domain box; -refine_shell from k = 4) the operator computes the geometry on the fly; the columns\n"
                           "'stored' time the Gauss-Lobatto and Gauss rules again with stored factors (the same otherwise).\n"
                           "  -dim <3>                 2 or 3\n"
                           "  -kmin <1> -kmax <8>      degrees\n"
                           "  -dofs <3e5,1e6,1e7>      target problem sizes (N^dim cells with N*k+1 nodes per direction)\n"
                           "  -domain <shell>          shell (curved cubed-sphere panel, quadratic coordinates), box, forest (a p4est\n"
                           "                           brick on [-1,1]^dim, DMP4EST/DMP8EST; -refine_shell: adapted towards the sphere |x| = r)\n"
                           "                           or ball (that brick mapped onto the unit ball, multilinear cells)\n"
                           "  -refine_shell <r>        split the cells around the sphere |x| = r once (hanging nodes, examples/shell.h)\n"
                           "  -refine_shell_levels <1> levels of that refinement, each within half the last width (2:1 balanced)\n"
                           "  -spmv_max_work <3e10>    assemble only if cells * nodes^2 * points <= this (PETSc's host assembly)\n"
                           "  -reps <20>               timed applies per measurement (median reported)\n";

#include "benchutil.h"
#include <petscds.h>
#include <petscsnes.h>
#include "../examples/shell.h"
#include "../examples/forest.h"

static void G3(PetscInt dim, PetscInt Nf, PetscInt NfAux, const PetscInt uOff[], const PetscInt uOff_x[], const PetscScalar u[], const PetscScalar u_t[], const PetscScalar u_x[], const PetscInt aOff[], const PetscInt aOff_x[], const PetscScalar a[], const PetscScalar a_t[], const PetscScalar a_x[], PetscReal t, PetscReal u_tShift, const PetscReal x[], PetscInt numConstants, const PetscScalar constants[], PetscScalar g3[])
{
  (void)Nf, (void)NfAux, (void)uOff, (void)uOff_x, (void)u, (void)u_t, (void)u_x, (void)aOff, (void)aOff_x, (void)a, (void)a_t, (void)a_x, (void)t, (void)u_tShift, (void)numConstants, (void)constants;
  for (PetscInt d = 0; d < dim; d++) g3[d * dim + d] = Coefficient(Radius(dim, x));
}

/* The coordinate field has degree min(k, 2): the operator interpolates the geometry at its Q_k nodes.
   With rsplit >= 0 the cells within one radial cell width of |x| = rsplit are split once (hanging nodes;
   the tree carries vertex coordinates only, so the cells are multilinear between vertices on the shell) */
/* PETSc's FEM Jacobian of dm's DS, as a matrix of the DM's type; a forest's is assembled on its DMPlex
   as host AIJ and converted (examples/forest.h says why) */
static PetscErrorCode AssembleJacobian(DM dm, PetscBool forest, Mat *J)
{
  Vec X;

  PetscFunctionBeginUser;
  if (forest) {
#if defined(PETSC_HAVE_P4EST)
    MatType mtype;

    PetscCall(DMGetMatType(dm, &mtype));
    PetscCall(ForestAssembleJacobianAIJ(dm, J));
    PetscCall(MatConvert(*J, mtype, MAT_INPLACE_MATRIX, J));
    PetscFunctionReturn(0);
#else
    SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_SUP, "-domain forest needs PETSc with p4est");
#endif
  }
  PetscCall(DMCreateMatrix(dm, J));
  PetscCall(DMGetLocalVector(dm, &X));
  PetscCall(VecZeroEntries(X));
  PetscCall(DMPlexSNESComputeJacobianFEM(dm, X, *J, *J, NULL));
  PetscCall(DMRestoreLocalVector(dm, &X));
  PetscFunctionReturn(0);
}

static PetscErrorCode CreateMesh(PetscInt dim, PetscInt N, PetscInt k, PetscBool shell, PetscBool forest, PetscBool ball, PetscReal rsplit, PetscInt levels, DM *dm)
{
  PetscFunctionBeginUser;
  if (forest) {
#if defined(PETSC_HAVE_P4EST)
    PetscInt cStart, cEnd, ncells;

    PetscCall(ForestCreateTowardsSphere(PETSC_COMM_WORLD, dim, N, -1.0, 1.0, ball ? ForestCubeToBall : NULL, rsplit, rsplit >= 0 ? levels : 0, dm));
    PetscCall(DMForestGetCellChart(*dm, &cStart, &cEnd));
    ncells = cEnd - cStart;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ncells, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "forest: brick of %" PetscInt_FMT "^%" PetscInt_FMT " cells, %" PetscInt_FMT " level(s) towards |x| = %g: %" PetscInt_FMT " cells\n", N, dim, rsplit >= 0 ? levels : 0, (double)rsplit, ncells));
    PetscFunctionReturn(0);
#else
    SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_SUP, "-domain forest needs PETSc with p4est");
#endif
  }
  PetscCall(BenchPlexBox(dim, N, dim == 2 ? (shell ? "-1,0.5" : "-1,-1") : (shell ? "-1,-1,0.5" : "-1,-1,-1"), dim == 2 ? "1,1" : "1,1,1", shell && k > 1 && rsplit < 0 ? 2 : 1, dm));
  if (rsplit >= 0) PetscCall(SplitBand(dm, rsplit, (shell ? 0.5 : 2.0) / N, levels, shell)); /* keeps the vector and matrix types */
  else if (shell) PetscCall(DMPlexRemapGeometry(*dm, 0.0, BoxToShell));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscInt  dim = 3, kmin = 1, kmax = 8, ndofs = 8, reps = 20, levels = 1;
  PetscReal dofs[8] = {3e5, 1e6, 1e7}, maxwork = 3e10, rsplit = -1;
  PetscBool shell = PETSC_TRUE, forest, ball;
  char      domain[16] = "shell", vtypename[64] = "standard";

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PatchworkInitializePackage());
  ndofs = 3;
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "General-mesh MatMult benchmark", NULL);
  PetscCall(PetscOptionsInt("-dim", "Dimension", NULL, dim, &dim, NULL));
  PetscCall(PetscOptionsInt("-kmin", "Lowest degree", NULL, kmin, &kmin, NULL));
  PetscCall(PetscOptionsInt("-kmax", "Highest degree", NULL, kmax, &kmax, NULL));
  PetscCall(PetscOptionsRealArray("-dofs", "Target sizes", NULL, dofs, &ndofs, NULL));
  PetscCall(PetscOptionsString("-domain", "shell or box", NULL, domain, domain, sizeof(domain), NULL));
  PetscCall(PetscOptionsReal("-spmv_max_work", "Largest PETSc FEM assembly (cells * nodes^2 * points)", NULL, maxwork, &maxwork, NULL));
  PetscCall(PetscOptionsInt("-reps", "Timed applies", NULL, reps, &reps, NULL));
  PetscCall(PetscOptionsReal("-refine_shell", "Split the cells around |x| = r once (hanging nodes)", NULL, rsplit, &rsplit, NULL));
  PetscCall(PetscOptionsInt("-refine_shell_levels", "Levels of -refine_shell, each within half the last width", NULL, levels, &levels, NULL));
  PetscOptionsEnd();
  shell  = (PetscBool)!strcmp(domain, "shell");
  ball   = (PetscBool)!strcmp(domain, "ball");
  forest = (PetscBool)(ball || !strcmp(domain, "forest"));
  PetscCheck(shell || forest || !strcmp(domain, "box"), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-domain %s: use shell, box, forest or ball", domain);
  PetscCall(PetscOptionsGetString(NULL, NULL, "-dm_vec_type", vtypename, sizeof(vtypename), NULL));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "general mesh (%s, %s cells), %" PetscInt_FMT "D, vectors %s, variable coefficient; GDoF/s = unknowns / median MatMult time\n", domain, shell ? "curved" : "straight", dim, vtypename));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-3s %-3s %9s %11s %9s %9s %9s %9s %9s %9s %9s %10s\n", "dim", "k", "cells", "DoF", "gll", "gauss", "gauss+1", "gll", "gauss", "AIJ SpMV", "AIJ nnz", "gauss/AIJ"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-3s %-3s %9s %11s %9s %9s %9s %9s %9s %9s %9s %10s\n", "", "", "", "", "GDoF/s", "GDoF/s", "GDoF/s", "stored", "stored", "GDoF/s", "", ""));
  for (PetscInt k = kmin; k <= kmax; k++) {
    for (PetscInt s = 0; s < ndofs; s++) {
      const PetscInt  N = PetscMax(1, (PetscInt)(0.5 + (PetscPowReal(dofs[s], 1.0 / dim) - 1) / k));
      const PetscReal ncells = PetscPowReal((PetscReal)N, (PetscReal)dim), nodes = PetscPowReal((PetscReal)(k + 1), (PetscReal)dim);
      DM              dm;
      Mat             A;
      Vec             x, y, z;
      PetscInt        n;
      double          t[5], tsp;
      char            spmv[32] = "-", nnzs[32] = "-", ratio[32] = "-";

      PetscCall(CreateMesh(dim, N, k, shell, forest, ball, rsplit, levels, &dm));
      PetscCall(PatchworkDMPlexSetQkField(dm, k, PETSC_TRUE));
      PetscCall(MatCreatePatchworkTensor(dm, k, &A));
      PetscCall(MatSetFromOptions(A));
      PetscCall(MatPatchworkTensorSetCoefficientFunctions(A, Diffusion, NULL, NULL));
      PetscCall(MatCreateVecs(A, &x, &y));
      PetscCall(VecDuplicate(y, &z));
      PetscCall(VecGetSize(x, &n));
      PetscCall(VecSetRandom(x, NULL));
      for (PetscInt r = 0; r < 3; r++) {
        PetscCall(MatPatchworkTensorSetQuadrature(A, r == 0 ? PATCHWORK_QUADRATURE_GAUSSLOBATTO : PATCHWORK_QUADRATURE_GAUSS));
        if (r) PetscCall(MatPatchworkTensorSetQuadraturePoints(A, k + r));
        PetscCall(TimeMult(A, x, r == 1 ? y : z, reps, &t[r]));
      }
      PetscCall(MatPatchworkTensorSetGeometryOnTheFly(A, PETSC_FALSE));
      for (PetscInt r = 0; r < 2; r++) {
        PetscCall(MatPatchworkTensorSetQuadrature(A, r == 0 ? PATCHWORK_QUADRATURE_GAUSSLOBATTO : PATCHWORK_QUADRATURE_GAUSS));
        PetscCall(MatPatchworkTensorSetQuadraturePoints(A, k + 1));
        PetscCall(TimeMult(A, x, z, reps, &t[3 + r]));
      }
      /* PETSc's FEM assembly of the same operator (k+1 Gauss points), where affordable: compare, then time its SpMV */
      if (ncells * nodes * nodes * nodes <= maxwork) {
        PetscDS   ds;
        Mat       J;
        PetscReal err, ynorm;
        MatInfo   info;

        PetscCall(DMGetDS(dm, &ds));
        PetscCall(PetscDSSetJacobian(ds, 0, 0, NULL, NULL, NULL, G3));
        PetscCall(AssembleJacobian(dm, forest, &J));
        PetscCall(TimeMult(J, x, z, reps, &tsp));
        PetscCall(VecNorm(y, NORM_INFINITY, &ynorm));
        PetscCall(VecAXPY(z, -1.0, y));
        PetscCall(VecNorm(z, NORM_INFINITY, &err));
        PetscCheck(err <= 1e-11 * ynorm, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Q%" PetscInt_FMT ": operator and PETSc's assembled matrix disagree by %g relative", k, (double)(err / ynorm));
        PetscCall(MatGetInfo(J, MAT_GLOBAL_SUM, &info));
        PetscCall(PetscSNPrintf(spmv, sizeof(spmv), "%.3f", n / tsp * 1e-9));
        PetscCall(PetscSNPrintf(nnzs, sizeof(nnzs), "%.3g", (double)info.nz_used));
        PetscCall(PetscSNPrintf(ratio, sizeof(ratio), "%.1fx", tsp / t[1]));
        PetscCall(MatDestroy(&J));
      }
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-3" PetscInt_FMT " %-3" PetscInt_FMT " %9.0f %11" PetscInt_FMT " %9.3f %9.3f %9.3f %9.3f %9.3f %9s %9s %10s\n", dim, k, (double)ncells, n, n / t[0] * 1e-9, n / t[1] * 1e-9, n / t[2] * 1e-9, n / t[3] * 1e-9, n / t[4] * 1e-9, spmv, nnzs, ratio));
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
