static const char help[] = "The Patchwork transfer Mat: Galerkin identity P^T A_fine P = A_coarse (nested Q_k spaces,\n"
                           "exact quadrature), <P x, y> = <x, P^T y>, and MatMultAdd / MatMultTransposeAdd semantics.\n";

#include <patchwork.h>
#include "compare.h" /* ErrMax() */

static PetscInt failures = 0, cases = 0;

static PetscErrorCode Report(const char what[], PetscReal err, PetscReal tol)
{
  PetscFunctionBeginUser;
  cases++;
  if (!(err <= tol)) failures++;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %s: err %.2e tol %.0e\n", err <= tol ? "ok  " : "FAIL", what, (double)err, (double)tol));
  PetscFunctionReturn(0);
}

/* x random, zero on the Dirichlet nodes (where the identity rows would break the identity) */
static PetscErrorCode RandomInterior(Mat A, PetscRandom rnd, Vec x)
{
  Vec one, d;

  PetscFunctionBeginUser;
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(VecDuplicate(x, &one));
  PetscCall(VecDuplicate(x, &d));
  /* boundary rows of the Dirichlet operator are the identity: diag = 1 there, and 1 = A e_i only there */
  PetscCall(MatPatchworkTensorSetBC(A, PATCHWORK_BC_NATURAL));
  PetscCall(MatGetDiagonal(A, one));
  PetscCall(MatPatchworkTensorSetBC(A, PATCHWORK_BC_DIRICHLET));
  PetscCall(MatGetDiagonal(A, d));
  PetscCall(VecPointwiseDivide(d, d, one)); /* 1 in the interior, 1/diag_natural on the boundary */
  PetscCall(VecSet(one, 1.0));
  PetscCall(VecAXPY(d, -1.0, one));          /* 0 inside, nonzero on the boundary */
  {
    PetscScalar       *a;
    const PetscScalar *m;
    PetscInt           n;

    PetscCall(VecGetLocalSize(x, &n));
    PetscCall(VecGetArray(x, &a));
    PetscCall(VecGetArrayRead(d, &m));
    for (PetscInt i = 0; i < n; i++)
      if (PetscAbsScalar(m[i]) > 1e-12) a[i] = 0;
    PetscCall(VecRestoreArrayRead(d, &m));
    PetscCall(VecRestoreArray(x, &a));
  }
  PetscCall(VecDestroy(&one));
  PetscCall(VecDestroy(&d));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestOne(PetscInt dim, PetscInt k, PetscRandom rnd)
{
  const PetscInt  cells[3] = {4, 8, 4}; /* coarse: 2 x 4 x 2, so every direction keeps interior nodes */
  const PetscReal lo[3] = {0, -1, 0.5}, hi[3] = {1, 1, 2};
  DM              fdm, cdm;
  Mat             Af, Ac, P;
  Vec             xc, yc, zc, xf, yf, zf;
  PetscReal       nrm, err;
  PetscScalar     d1, d2;
  char            what[64];

  PetscFunctionBeginUser;
  PetscCall(PatchworkDMDACreateQk(PETSC_COMM_WORLD, dim, k, cells, lo, hi, &fdm));
  PetscCall(DMCoarsen(fdm, PETSC_COMM_WORLD, &cdm));
  PetscCall(PatchworkDMDASetCoordinatesQk(cdm, k, lo, hi));
  PetscCall(MatCreatePatchworkTensor(fdm, k, &Af));
  PetscCall(MatCreatePatchworkTensor(cdm, k, &Ac));
  PetscCall(MatPatchworkTensorSetCoefficients(Af, 0.6, 1.7));
  PetscCall(MatPatchworkTensorSetCoefficients(Ac, 0.6, 1.7));
  PetscCall(MatCreatePatchworkTransfer(Ac, Af, &P));
  PetscCall(MatCreateVecs(Ac, &xc, &yc));
  PetscCall(VecDuplicate(xc, &zc));
  PetscCall(MatCreateVecs(Af, &xf, &yf));
  PetscCall(VecDuplicate(xf, &zf));

  /* P^T A_f P x = A_c x */
  PetscCall(RandomInterior(Ac, rnd, xc));
  PetscCall(MatMult(P, xc, xf));
  PetscCall(MatMult(Af, xf, yf));
  PetscCall(MatMultTranspose(P, yf, yc));
  PetscCall(MatMult(Ac, xc, zc));
  PetscCall(VecNorm(zc, NORM_INFINITY, &nrm));
  PetscCall(VecAXPY(yc, -1.0, zc));
  PetscCall(VecNorm(yc, NORM_INFINITY, &err));
  PetscCall(PetscSNPrintf(what, sizeof(what), "dim=%" PetscInt_FMT " k=%" PetscInt_FMT " Galerkin P^T A P = A_c", dim, k));
  PetscCall(Report(what, err / nrm, 1e-11));

  /* adjoint */
  PetscCall(VecSetRandom(xc, rnd));
  PetscCall(VecSetRandom(yf, rnd));
  PetscCall(MatMult(P, xc, xf));
  PetscCall(MatMultTranspose(P, yf, yc));
  PetscCall(VecDot(xf, yf, &d1));
  PetscCall(VecDot(xc, yc, &d2));
  PetscCall(PetscSNPrintf(what, sizeof(what), "dim=%" PetscInt_FMT " k=%" PetscInt_FMT " <Px,y> = <x,P^T y>", dim, k));
  PetscCall(Report(what, PetscAbsScalar(d1 - d2) / PetscAbsScalar(d1), 1e-12));

  /* z = y + P x, also in place */
  PetscCall(MatMultAdd(P, xc, yf, zf));
  PetscCall(MatMult(P, xc, xf));
  PetscCall(VecAXPY(xf, 1.0, yf));
  PetscCall(MatMultAdd(P, xc, yf, yf));
  PetscCall(VecAXPY(zf, -1.0, xf));
  PetscCall(VecAXPY(yf, -1.0, xf));
  PetscCall(VecNorm(zf, NORM_INFINITY, &err));
  PetscCall(VecNorm(yf, NORM_INFINITY, &nrm));
  PetscCall(PetscSNPrintf(what, sizeof(what), "dim=%" PetscInt_FMT " k=%" PetscInt_FMT " MatMultAdd", dim, k));
  PetscCall(Report(what, ErrMax(err, nrm), 1e-12));
  PetscCall(MatMultTransposeAdd(P, xf, yc, zc));
  PetscCall(MatMultTranspose(P, xf, xc));
  PetscCall(VecAXPY(xc, 1.0, yc));
  PetscCall(VecAXPY(zc, -1.0, xc));
  PetscCall(VecNorm(zc, NORM_INFINITY, &err));
  PetscCall(PetscSNPrintf(what, sizeof(what), "dim=%" PetscInt_FMT " k=%" PetscInt_FMT " MatMultTransposeAdd", dim, k));
  PetscCall(Report(what, err, 1e-12));

  PetscCall(VecDestroy(&xc));
  PetscCall(VecDestroy(&yc));
  PetscCall(VecDestroy(&zc));
  PetscCall(VecDestroy(&xf));
  PetscCall(VecDestroy(&yf));
  PetscCall(VecDestroy(&zf));
  PetscCall(MatDestroy(&P));
  PetscCall(MatDestroy(&Af));
  PetscCall(MatDestroy(&Ac));
  PetscCall(DMDestroy(&fdm));
  PetscCall(DMDestroy(&cdm));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscRandom rnd;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PatchworkInitializePackage());
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetSeed(rnd, 7));
  PetscCall(PetscRandomSeed(rnd));
  for (PetscInt k = 1; k <= 6; k++) PetscCall(TestOne(2, k, rnd));
  for (PetscInt k = 1; k <= 4; k++) PetscCall(TestOne(3, k, rnd));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "test_transfer: %" PetscInt_FMT " cases, %" PetscInt_FMT " failed\n", cases, failures));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
