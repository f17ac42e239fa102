static const char help[] = "PCVERTEXPATCH set up again for new coefficients on the same grid: after\n"
                           "MatPatchworkTensorSetCoefficients() (and MatPatchworkTensorSetQuadrature()) and KSPSetOperators() with\n"
                           "the same operator (SAME_NONZERO_PATTERN), the set-up is refreshed (PCView says so) instead of rebuilt,\n"
                           "and gives the iterations and, to rounding, the solution of a fresh set-up. Another operator object (a\n"
                           "DIFFERENT_NONZERO_PATTERN to PETSc) or one on another DM is set up anew. Single and double precision, multiplicative and additive, a coarse KSP.\n"
                           "  -quick   the first two cases only\n";

#include <patchwork.h>

typedef struct {
  PetscInt           dim, k, cells;
  PatchworkPrecision precision;
  PatchworkVPType    type;
} Case;

static PetscInt failures = 0, checks = 0;

static PetscErrorCode Check(PetscBool ok, const char what[], const char detail[])
{
  PetscFunctionBeginUser;
  checks++;
  if (!ok) failures++;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %s: %s\n", ok ? "ok  " : "FAIL", what, detail));
  PetscFunctionReturn(0);
}

/* FGMRES (the float cycle is linear only to rounding) with PCVERTEXPATCH as the case says */
static PetscErrorCode CreateKSP(const Case *c, Mat A, KSP *ksp)
{
  PC pc;

  PetscFunctionBeginUser;
  PetscCall(KSPCreate(PETSC_COMM_WORLD, ksp));
  PetscCall(KSPSetType(*ksp, KSPFGMRES));
  PetscCall(KSPSetTolerances(*ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 100));
  PetscCall(KSPGetPC(*ksp, &pc));
  PetscCall(PCSetType(pc, PCVERTEXPATCH));
  PetscCall(PCVertexPatchSetPrecision(pc, c->precision));
  PetscCall(PCVertexPatchSetType(pc, c->type));
  PetscCall(KSPSetFromOptions(*ksp));
  PetscCall(KSPSetOperators(*ksp, A, A));
  PetscFunctionReturn(0);
}

static PetscErrorCode Solve(KSP ksp, Vec b, Vec x, PetscInt *its)
{
  KSPConvergedReason reason;

  PetscFunctionBeginUser;
  PetscCall(VecSet(x, 0.0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCheck(reason > 0, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "KSPSolve did not converge: %s", KSPConvergedReasons[reason]);
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscFunctionReturn(0);
}

/* How many times PCView says the set-up was refreshed (0: it was not, or was made anew since) */
static PetscErrorCode Refreshes(PC pc, PetscInt *n)
{
  PetscViewer v;
  FILE       *fp = tmpfile();
  char        line[512];
  long        count = 0;

  PetscFunctionBeginUser;
  PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "tmpfile() failed");
  PetscCall(PetscViewerASCIIOpenWithFILE(PETSC_COMM_WORLD, fp, &v));
  PetscCall(PCView(pc, v));
  PetscCall(PetscViewerDestroy(&v));
  rewind(fp);
  while (fgets(line, sizeof(line), fp)) { /* rank 0 wrote the view */
    const char *p = strstr(line, "set up again ");

    if (p) count = strtol(p + strlen("set up again "), NULL, 10);
  }
  fclose(fp);
  PetscCallMPI(MPI_Bcast(&count, 1, MPI_LONG, 0, PETSC_COMM_WORLD));
  *n = (PetscInt)count;
  PetscFunctionReturn(0);
}

/* The solve of ksp (already given its operator A) against a fresh KSP on A: the same iterations and
   solution; ksp must have been refreshed `expect` times */
static PetscErrorCode CompareWithFresh(const Case *c, KSP ksp, Mat A, Vec b, PetscInt expect, const char what[], PetscLogDouble *tsetup)
{
  KSP            fresh;
  PC             pc;
  Vec            x, y;
  PetscInt       its, its_fresh, n;
  PetscReal      diff, nrm;
  PetscLogDouble t0, t1;
  char           detail[256];

  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(b, &x));
  PetscCall(VecDuplicate(b, &y));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PetscTime(&t0));
  PetscCall(PCSetUp(pc));
  PetscCall(PetscTime(&t1));
  if (tsetup) *tsetup = t1 - t0;
  PetscCall(Solve(ksp, b, x, &its));
  PetscCall(Refreshes(pc, &n));
  PetscCall(CreateKSP(c, A, &fresh));
  PetscCall(Solve(fresh, b, y, &its_fresh));
  PetscCall(KSPDestroy(&fresh));
  PetscCall(VecNorm(y, NORM_2, &nrm));
  PetscCall(VecAXPY(x, -1.0, y));
  PetscCall(VecNorm(x, NORM_2, &diff));
  PetscCall(PetscSNPrintf(detail, sizeof(detail), "%" PetscInt_FMT " iterations (fresh set-up %" PetscInt_FMT "), |x - x_fresh| / |x_fresh| = %.2e, refreshed %" PetscInt_FMT " time(s) (expected %" PetscInt_FMT ")", its, its_fresh, (double)(diff / nrm), n, expect));
  PetscCall(Check((PetscBool)(its == its_fresh && diff <= 1e-12 * nrm && n == expect), what, detail));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(0);
}

static PetscErrorCode RunCase(const Case *c)
{
  const PetscInt cells[3] = {c->cells, c->cells, c->cells};
  DM             dm, dm2;
  Mat            A, B, C;
  KSP            ksp;
  Vec            b, x;
  PetscInt       its;
  PetscLogDouble t0, t1, tfirst, tagain;
  char           what[128];

  PetscFunctionBeginUser;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT "D Q%" PetscInt_FMT ", %" PetscInt_FMT " cells per direction, %s precision, %s:\n", c->dim, c->k, c->cells, PatchworkPrecisions[c->precision], PatchworkVPTypes[c->type]));
  PetscCall(PatchworkDMDACreateQk(PETSC_COMM_WORLD, c->dim, c->k, cells, NULL, NULL, &dm));
  PetscCall(MatCreatePatchworkTensor(dm, c->k, &A));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecSet(b, 1.0));
  PetscCall(CreateKSP(c, A, &ksp));
  {
    PC pc;

    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PetscTime(&t0));
    PetscCall(PCSetUp(pc));
    PetscCall(PetscTime(&t1));
    tfirst = t1 - t0;
  }
  PetscCall(Solve(ksp, b, x, &its));

  /* new coefficients on the same operator */
  PetscCall(MatPatchworkTensorSetCoefficients(A, 1.5, 0.25));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(PetscSNPrintf(what, sizeof(what), "new coefficients 1.5 M + 0.25 K"));
  PetscCall(CompareWithFresh(c, ksp, A, b, 1, what, &tagain));

  /* other coefficients and quadrature on the same operator */
  PetscCall(MatPatchworkTensorSetCoefficients(A, 0.3, 2.0));
  PetscCall(MatPatchworkTensorSetQuadrature(A, PATCHWORK_QUADRATURE_GAUSSLOBATTO));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(CompareWithFresh(c, ksp, A, b, 2, "0.3 M + 2 K, Gauss-Lobatto quadrature", NULL));

  /* another operator object on the same DM: a DIFFERENT_NONZERO_PATTERN to PETSc, set up anew */
  PetscCall(MatCreatePatchworkTensor(dm, c->k, &B));
  PetscCall(MatPatchworkTensorSetCoefficients(B, 2.0, 0.5));
  PetscCall(KSPSetOperators(ksp, B, B));
  PetscCall(CompareWithFresh(c, ksp, B, b, 0, "another operator on the same DM", NULL));

  /* an operator on another DM of the same size: set up anew */
  PetscCall(PatchworkDMDACreateQk(PETSC_COMM_WORLD, c->dim, c->k, cells, NULL, NULL, &dm2));
  PetscCall(MatCreatePatchworkTensor(dm2, c->k, &C));
  PetscCall(MatPatchworkTensorSetCoefficients(C, 1.0, 1.0));
  PetscCall(KSPSetOperators(ksp, C, C));
  PetscCall(CompareWithFresh(c, ksp, C, b, 0, "an operator on another DM", NULL));

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "     PCSetUp: first %.4f s, refreshed %.4f s (%.0f%%)\n", tfirst, tagain, 100 * tagain / tfirst));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&C));
  PetscCall(DMDestroy(&dm));
  PetscCall(DMDestroy(&dm2));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  const Case cases[] = {
    {2, 3, 16, PATCHWORK_PRECISION_DOUBLE, PATCHWORK_VP_MULTIPLICATIVE}, /* 16, 8, 4, 2 cells: two levels without a DM on one rank */
    {3, 2, 8,  PATCHWORK_PRECISION_SINGLE, PATCHWORK_VP_MULTIPLICATIVE},
    {2, 2, 12, PATCHWORK_PRECISION_DOUBLE, PATCHWORK_VP_MULTIPLICATIVE}, /* 12, 6, 3: a coarse KSP, refreshed too */
    {2, 3, 16, PATCHWORK_PRECISION_SINGLE, PATCHWORK_VP_ADDITIVE},
  };
  PetscBool quick = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PatchworkInitializePackage());
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-quick", &quick, NULL));
  for (size_t i = 0; i < (quick ? 2 : sizeof(cases) / sizeof(cases[0])); i++) PetscCall(RunCase(&cases[i]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " of %" PetscInt_FMT " checks failed\n", failures, checks));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
