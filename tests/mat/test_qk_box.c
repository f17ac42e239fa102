static const char help[] = "A Q_k node-grid DMDA that knows its box: PatchworkDMDACreateQk() with -dm_patchwork_coordinates false\n"
                           "makes no coordinates, and the operator on it is the one on the DM with coordinates, bit for bit (the\n"
                           "same box, the same products); PatchworkDMDASetCoordinatesQk() sets the same coordinates later;\n"
                           "coordinates the caller changes are read and checked again (a bent grid line is refused, a rewrite\n"
                           "with the same values accepted), and coordinates set on a box-only DM are the mesh.\n"
                           "Then the time of MatCreatePatchworkTensor() against PETSc's own DMDA creation (printed only).\n"
                           "  -time_cells <48>  cells per direction of the timing (3D Q3); 0: no timing\n";

#include <patchwork.h>
#include <petsctime.h>

static PetscInt failures = 0, checks = 0;

static PetscErrorCode Check(PetscBool ok, const char what[])
{
  PetscFunctionBeginUser;
  checks++;
  if (!ok) failures++;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %s\n", ok ? "ok  " : "FAIL", what));
  PetscFunctionReturn(0);
}

static PetscErrorCode CreateQk(PetscInt dim, PetscInt k, const PetscInt cells[], const PetscReal lo[], const PetscReal hi[], PetscBool coordinates, DM *dm)
{
  PetscFunctionBeginUser;
  PetscCall(PetscOptionsSetValue(NULL, "-dm_patchwork_coordinates", coordinates ? "true" : "false"));
  PetscCall(PatchworkDMDACreateQk(PETSC_COMM_WORLD, dim, k, cells, lo, hi, dm));
  PetscCall(PetscOptionsClearValue(NULL, "-dm_patchwork_coordinates"));
  PetscFunctionReturn(0);
}

/* max |A x - B x| for a random x, and whether the boxes of the two operators are the same bits */
static PetscErrorCode SameOperator(Mat A, Mat B, PetscReal *diff, PetscBool *samebox)
{
  PatchworkTensorInfo ia, ib;
  PetscRandom         rnd;
  Vec                 x, ya, yb;

  PetscFunctionBeginUser;
  /* bit for bit also on the GPU: its atomic scatter adds in any order, the colored one in a fixed one */
  PetscCall(PetscOptionsSetValue(NULL, "-qkbox_mat_patchwork_scatter", "colored"));
  PetscCall(MatSetOptionsPrefix(A, "qkbox_"));
  PetscCall(MatSetOptionsPrefix(B, "qkbox_"));
  PetscCall(MatSetFromOptions(A));
  PetscCall(MatSetFromOptions(B));
  PetscCall(MatPatchworkTensorGetInfo(A, &ia));
  PetscCall(MatPatchworkTensorGetInfo(B, &ib));
  *samebox = PETSC_TRUE;
  for (PetscInt d = 0; d < 3; d++) *samebox = (PetscBool)(*samebox && ia.lower[d] == ib.lower[d] && ia.upper[d] == ib.upper[d] && ia.cells[d] == ib.cells[d]);
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetFromOptions(rnd));
  PetscCall(MatCreateVecs(A, &x, &ya));
  PetscCall(VecDuplicate(ya, &yb));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(MatMult(A, x, ya));
  PetscCall(MatMult(B, x, yb));
  PetscCall(VecAXPY(ya, -1.0, yb));
  PetscCall(VecNorm(ya, NORM_INFINITY, diff));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&ya));
  PetscCall(VecDestroy(&yb));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscFunctionReturn(0);
}

/* MatCreatePatchworkTensor() on dm, or its error message (the error is expected) */
static PetscErrorCode TryOperator(DM dm, PetscInt k, Mat *A, PetscBool *failed)
{
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = MatCreatePatchworkTensor(dm, k, A);
  PetscCall(PetscPopErrorHandler());
  *failed = ierr ? PETSC_TRUE : PETSC_FALSE;
  if (ierr) *A = NULL;
  PetscFunctionReturn(0);
}

static PetscErrorCode RunCase(PetscInt dim, PetscInt k)
{
  const PetscInt  cells[3] = {3, 4, 2};
  const PetscReal lo[3] = {-0.3, 0.1, 2.0}, hi[3] = {0.4, 0.7, 2.9};
  DM              dmc, dmb;
  Mat             Ac, Ab, A2;
  Vec             cc, cb;
  PetscReal       diff;
  PetscBool       samebox, failed;
  char            what[160];

  PetscFunctionBeginUser;
  PetscCall(CreateQk(dim, k, cells, lo, hi, PETSC_TRUE, &dmc));
  PetscCall(CreateQk(dim, k, cells, lo, hi, PETSC_FALSE, &dmb));
  PetscCall(DMGetCoordinates(dmb, &cb));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%" PetscInt_FMT "D Q%" PetscInt_FMT ": -dm_patchwork_coordinates false makes no coordinates", dim, k));
  PetscCall(Check((PetscBool)!cb, what));

  PetscCall(MatCreatePatchworkTensor(dmc, k, &Ac));
  PetscCall(MatCreatePatchworkTensor(dmb, k, &Ab));
  PetscCall(MatPatchworkTensorSetCoefficients(Ac, 0.7, 1.3));
  PetscCall(MatPatchworkTensorSetCoefficients(Ab, 0.7, 1.3));
  PetscCall(SameOperator(Ac, Ab, &diff, &samebox));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%" PetscInt_FMT "D Q%" PetscInt_FMT ": the operator without coordinates is the one with them (same box bits, max |diff| %.1e)", dim, k, (double)diff));
  PetscCall(Check((PetscBool)(samebox && diff == 0), what));

  /* coordinates set later are those PatchworkDMDACreateQk() would have set */
  PetscCall(PatchworkDMDASetCoordinatesQk(dmb, k, lo, hi));
  PetscCall(DMGetCoordinates(dmb, &cb));
  PetscCall(DMGetCoordinates(dmc, &cc));
  PetscCall(VecAXPY(cb, -1.0, cc));
  PetscCall(VecNorm(cb, NORM_INFINITY, &diff));
  PetscCall(VecAXPY(cb, 1.0, cc)); /* back (changes their state: the next operator reads and checks them) */
  PetscCall(PetscSNPrintf(what, sizeof(what), "%" PetscInt_FMT "D Q%" PetscInt_FMT ": PatchworkDMDASetCoordinatesQk() later sets the same coordinates (max |diff| %.1e)", dim, k, diff));
  PetscCall(Check((PetscBool)(diff == 0), what));
  PetscCall(MatCreatePatchworkTensor(dmb, k, &A2));
  PetscCall(MatPatchworkTensorSetCoefficients(A2, 0.7, 1.3));
  PetscCall(SameOperator(Ac, A2, &diff, &samebox));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%" PetscInt_FMT "D Q%" PetscInt_FMT ": coordinates rewritten with the same values are read and accepted (max |diff| %.1e)", dim, k, (double)diff));
  PetscCall(Check((PetscBool)(samebox && diff == 0), what));
  PetscCall(MatDestroy(&A2));

  /* a bent grid line in coordinates the DM noted as its own: read again and refused */
  {
    PetscScalar *a;
    PetscInt     n;

    PetscCall(VecGetLocalSize(cc, &n));
    PetscCall(VecGetArray(cc, &a));
    if (n > dim) a[dim + 1] += 0.01;
    PetscCall(VecRestoreArray(cc, &a));
  }
  PetscCall(TryOperator(dmc, k, &A2, &failed));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%" PetscInt_FMT "D Q%" PetscInt_FMT ": coordinates changed in place are checked again (a bent grid line is refused)", dim, k));
  PetscCall(Check(failed, what));
  PetscCall(MatDestroy(&A2));

  /* equispaced coordinates set by the caller on a DM that knows its box: they are the mesh (refused
     from Q3 on; the Gauss-Lobatto nodes of Q1 and Q2 are equispaced) */
  PetscCall(DMDestroy(&dmb));
  PetscCall(CreateQk(dim, k, cells, lo, hi, PETSC_FALSE, &dmb));
  PetscCall(DMDASetUniformCoordinates(dmb, lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]));
  PetscCall(TryOperator(dmb, k, &A2, &failed));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%" PetscInt_FMT "D Q%" PetscInt_FMT ": equispaced coordinates set on a box-only DM are the mesh (%s)", dim, k, failed ? "refused" : "accepted"));
  PetscCall(Check((PetscBool)(failed == (k > 2)), what));
  PetscCall(MatDestroy(&A2));

  PetscCall(MatDestroy(&Ac));
  PetscCall(MatDestroy(&Ab));
  PetscCall(DMDestroy(&dmc));
  PetscCall(DMDestroy(&dmb));
  PetscFunctionReturn(0);
}

/* MatCreatePatchworkTensor() against DMDACreate3d() + DMSetUp() of the same node grid, best of 3 */
static PetscErrorCode TimeOperator(PetscInt n)
{
  const PetscInt k = 3, cells[3] = {n, n, n};
  PetscLogDouble tda = 1e30, top[2] = {1e30, 1e30}, t0, t1;

  PetscFunctionBeginUser;
  for (int r = 0; r < 3; r++) {
    DM  dm;
    Mat A;

    PetscCall(PetscTime(&t0));
    PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, k * n + 1, k * n + 1, k * n + 1, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, 1, k, NULL, NULL, NULL, &dm));
    PetscCall(DMSetUp(dm));
    PetscCall(PetscTime(&t1));
    tda = PetscMin(tda, t1 - t0);
    PetscCall(DMDestroy(&dm));
    for (int c = 0; c < 2; c++) {
      PetscCall(CreateQk(3, k, cells, NULL, NULL, (PetscBool)c, &dm));
      PetscCall(PetscTime(&t0));
      PetscCall(MatCreatePatchworkTensor(dm, k, &A));
      PetscCall(PetscTime(&t1));
      top[c] = PetscMin(top[c], t1 - t0);
      PetscCall(MatDestroy(&A));
      PetscCall(DMDestroy(&dm));
    }
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "time: 3D Q%" PetscInt_FMT " on %" PetscInt_FMT "^3 cells: PETSc's DMDA %.4f s; MatCreatePatchworkTensor %.6f s on the box-only DM (%.2f%%), %.6f s on the DM with coordinates (%.2f%%)\n", k, n, tda, top[0], 100 * top[0] / tda, top[1], 100 * top[1] / tda));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscInt n = 48;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PatchworkInitializePackage());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-time_cells", &n, NULL));
  for (PetscInt dim = 2; dim <= 3; dim++)
    for (PetscInt k = 1; k <= 4; k++) PetscCall(RunCase(dim, k));
  if (n > 0) PetscCall(TimeOperator(n));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " of %" PetscInt_FMT " checks failed\n", failures, checks));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
