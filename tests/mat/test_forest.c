static const char help[] = "The tensor-product operator on a DMForest (p4est): adaptively refined, 2:1 balanced\n"
                           "quadrilateral/hexahedral meshes with hanging nodes, against PETSc's FEM assembly on the same forest.\n"
                           "Options:\n"
                           "  -dim <3>           2 (DMP4EST) or 3 (DMP8EST)\n"
                           "  -cells <4>         N: a brick of N^dim cells on [-1,1]^dim\n"
                           "  -kmin <1> -kmax <3> degrees\n"
                           "  -levels <2>        adaptations, each splitting the cells within their width of |x| = radius (p4est balances)\n"
                           "  -radius <0.6>      that sphere\n"
                           "  -curved           the brick's vertices moved by a smooth map (DMForestSetBaseCoordinateMapping())\n"
                           "  -ball             the brick mapped onto the unit ball (ForestCubeToBall(), examples/forest.h)\n"
                           "  -variable          the coefficients 1/(0.05 + 2|x|^2) and 1 + x^2 (else 1 and 1)\n"
                           "  -dirichlet         essential boundary conditions on the whole boundary\n"
                           "  -tol <1e-12>       relative tolerance\n"
                           "plus the forest's options (-dm_forest_initial_refinement, -dm_forest_partition_overlap,\n"
                           "-dm_vec_type cuda, ...). Exits with 1 when a degree fails, with 77 and a line 'SKIP: ...' when PETSc has\n"
                           "no p4est.\n\n";

#include <patchwork.h>
#include <petscdmforest.h>
#include <petscds.h>
#include <petscsnes.h>
#include "compare.h"
#include "plexforms.h"
#include "../../examples/forest.h"

#if defined(PETSC_HAVE_P4EST)
/* A smooth orientation-preserving map of [-1,1]^dim, for the forest's vertices: curved (multilinear) cells */
static PetscErrorCode Bend(DM base, PetscInt tree, PetscInt dim, const PetscReal x[], PetscReal y[], void *ctx)
{
  (void)base, (void)tree, (void)ctx;
  for (PetscInt d = 0; d < dim; d++) y[d] = x[d] + 0.1 * PetscSinReal(PETSC_PI * x[(d + 1) % dim]) * (1 - x[d] * x[d]);
  return PETSC_SUCCESS;
}

/* Cells and hanging points of the forest's mesh, summed over ranks */
static PetscErrorCode Census(DM forest, PetscInt *ncells, PetscInt *nhang)
{
  DM       plex;
  PetscInt cStart, cEnd;

  PetscFunctionBegin;
  PetscCall(DMConvert(forest, DMPLEX, &plex));
  PetscCall(DMPlexGetHeightStratum(plex, 0, &cStart, &cEnd));
  *ncells = cEnd - cStart;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, ncells, 1, MPIU_INT, MPI_SUM, PetscObjectComm((PetscObject)forest)));
  PetscCall(PatchworkTestCountHanging(plex, nhang));
  PetscCall(DMDestroy(&plex));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Degree k on the forest against PETSc's assembly; *failures counts the checks that fail */
static PetscErrorCode CompareDegree(MPI_Comm comm, PetscInt dim, PetscInt N, PetscInt levels, PetscReal radius, PetscInt k, PetscBool curved, PetscBool ball, PetscBool variable, PetscBool dirichlet, PetscReal tol, PetscInt *failures)
{
  DM          forest;
  PetscDS     ds;
  Mat         J, A;
  Vec         x;
  PetscScalar constants[3] = {0.7, 1.3, variable ? 1.0 : 0.0};
  PetscRandom rnd;
  PetscReal   err, errd;
  PetscInt    ncells = 0, nhang = 0, n;
  VecType     have, want;

  PetscFunctionBegin;
  PetscCall(ForestCreateTowardsSphere(comm, dim, N, -1.0, 1.0, ball ? ForestCubeToBall : curved ? Bend : NULL, radius, levels, &forest));
  PetscCall(PatchworkDMPlexSetQkField(forest, k, dirichlet));
  PetscCall(DMGetDS(forest, &ds));
  PetscCall(PetscDSSetConstants(ds, 3, constants));
  PetscCall(PetscDSSetJacobian(ds, 0, 0, G0, NULL, NULL, G3));
  /* PETSc's FEM assembly as a host AIJ matrix: a reference independent of the device */
  PetscCall(ForestAssembleJacobianAIJ(forest, &J));

  PetscCall(MatCreatePatchworkTensor(forest, k, &A));
  PetscCall(MatPatchworkTensorSetCoefficients(A, 0.7, 1.3));
  if (variable) PetscCall(MatPatchworkTensorSetCoefficientFunctions(A, DiffusionFn, ReactionFn, NULL));
  PetscCall(MatSetFromOptions(A));

  /* the user's vectors: the forest's own */
  PetscCall(DMCreateGlobalVector(forest, &x));
  { /* device vectors when asked for, the forest's and the operator's alike */
    Vec       xA;
    VecType   haveA;
    char     *found = NULL, *foundA = NULL;
    PetscBool device;

    PetscCall(DMGetVecType(forest, &want));
    PetscCall(VecGetType(x, &have));
    PetscCall(MatCreateVecs(A, &xA, NULL));
    PetscCall(VecGetType(xA, &haveA));
    PetscCall(PetscStrstr(want, "cuda", &found));
    device = (PetscBool)!!found;
    PetscCall(PetscStrstr(have, "cuda", &found));
    PetscCall(PetscStrstr(haveA, "cuda", &foundA));
    PetscCheck(!device || (found && foundA), comm, PETSC_ERR_ARG_WRONG, "The forest's vector type is %s, but its vectors are %s and the operator's %s", want, have, haveA);
    PetscCall(VecDestroy(&xA));
  }
  PetscCall(PetscRandomCreate(comm, &rnd));
  PetscCall(PetscRandomSetFromOptions(rnd));
  PetscCall(PatchworkTestCompareMultVec(J, A, x, rnd, 3, &err));
  PetscCall(MatViewFromOptions(A, NULL, "-op_view")); /* set up by now: how the geometry is kept */
  PetscCall(PatchworkTestCompareDiagonal(J, A, x, &errd));
  PetscCall(Census(forest, &ncells, &nhang));
  PetscCall(VecGetSize(x, &n));
  PetscCall(PetscPrintf(comm, "Q%" PetscInt_FMT ": %" PetscInt_FMT " cells, %" PetscInt_FMT " hanging points, %" PetscInt_FMT " unknowns, vectors %s: MatMult %.2e, diagonal %.2e (relative to PETSc's assembly)\n", k, ncells, nhang, n, have, (double)err, (double)errd));
  if (!(levels == 0 || nhang > 0)) {
    PetscCall(PetscPrintf(comm, "FAIL Q%" PetscInt_FMT ": the adapted forest has no hanging points: the test would not test them\n", k));
    (*failures)++;
  }
  if (!(err <= tol && errd <= tol)) { /* a NaN fails */
    PetscCall(PetscPrintf(comm, "FAIL Q%" PetscInt_FMT ": the operator and PETSc's assembly on the forest disagree (MatMult %g, diagonal %g, tolerance %g)\n", k, (double)err, (double)errd, (double)tol));
    (*failures)++;
  }
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(VecDestroy(&x));
  PetscCall(MatDestroy(&J));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&forest));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

int main(int argc, char **argv)
{
  PetscInt  dim = 3, N = 4, kmin = 1, kmax = 3, levels = 2, failures = 0;
  PetscReal radius = 0.6, tol = 1e-12;
  PetscBool curved = PETSC_FALSE, ball = PETSC_FALSE, variable = PETSC_FALSE, dirichlet = PETSC_FALSE;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PatchworkInitializePackage());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-dim", &dim, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-kmin", &kmin, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-kmax", &kmax, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-cells", &N, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-levels", &levels, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-radius", &radius, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-curved", &curved, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-ball", &ball, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-variable", &variable, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-dirichlet", &dirichlet, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol", &tol, NULL));
#if defined(PETSC_HAVE_P4EST)
  for (PetscInt k = kmin; k <= kmax; k++) PetscCall(CompareDegree(PETSC_COMM_WORLD, dim, N, levels, radius, k, curved, ball, variable, dirichlet, tol, &failures));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s\n", failures ? "FAILED" : "all degrees agree with PETSc's FEM assembly on the forest"));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
#else
  (void)curved, (void)ball;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "SKIP: this PETSc has no p4est, so no DMForest (tests/gpu/run.sh runs this test with the CUDA PETSc of make deps-gpu, built with Debian's p4est)\n"));
  PetscCall(PetscFinalize());
  return 77;
#endif
}
