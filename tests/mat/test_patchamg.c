static char help[] = "PCPATCHAMG on assembled SPD matrices: CG iterations, determinism, relaxations.\n"
                     "  -problem q1|fd7 : Q1 hexahedra (27-point) or the 7-point finite-difference Laplacian on an n^3 box, Neumann, + lambda*mass\n"
                     "  -n <n>          : cells (q1) or points (fd7) per direction\n"
                     "  -lambda <l>     : reaction coefficient (default 1)\n"
                     "  -max_its <m>    : fail when CG needs more iterations (0: no check)\n"
                     "  -repeat         : set up and solve twice; the iterations must be equal (same seed, same hierarchy)\n"
                     "  -coordinates    : give PCPATCHAMG the grid points (PCSetCoordinates): geometry-informed aggregation\n";

#include <petscksp.h>
#include <petscdmda.h>
#include <patchwork.h>

/* Q1 element matrices of the unit cube, 2x2x2 Gauss points: stiffness K and mass M (8x8) */
static void Q1Reference(PetscReal K[64], PetscReal M[64])
{
  const PetscReal g[2] = {0.5 - 0.5 / PetscSqrtReal(3.0), 0.5 + 0.5 / PetscSqrtReal(3.0)};

  for (int i = 0; i < 64; i++) K[i] = M[i] = 0;
  for (int q = 0; q < 8; q++) {
    PetscReal x[3] = {g[q & 1], g[(q >> 1) & 1], g[q >> 2]}, phi[8], dphi[8][3];

    for (int a = 0; a < 8; a++) {
      PetscReal f[3], df[3];

      for (int d = 0; d < 3; d++) {
        int bit = (a >> d) & 1;
        f[d]    = bit ? x[d] : 1 - x[d];
        df[d]   = bit ? 1 : -1;
      }
      phi[a]     = f[0] * f[1] * f[2];
      dphi[a][0] = df[0] * f[1] * f[2];
      dphi[a][1] = f[0] * df[1] * f[2];
      dphi[a][2] = f[0] * f[1] * df[2];
    }
    for (int a = 0; a < 8; a++)
      for (int b = 0; b < 8; b++) {
        K[a * 8 + b] += 0.125 * (dphi[a][0] * dphi[b][0] + dphi[a][1] * dphi[b][1] + dphi[a][2] * dphi[b][2]);
        M[a * 8 + b] += 0.125 * phi[a] * phi[b];
      }
  }
}

/* The matrix, and the grid points of its rows (interlaced x, y, z; the layout of the DMDA's vectors) */
static PetscErrorCode CreateMatrix(const char problem[], PetscInt n, PetscReal lambda, Mat *A, Vec *points)
{
  DM        da;
  PetscBool q1;

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(problem, "q1", &q1));
  PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, q1 ? DMDA_STENCIL_BOX : DMDA_STENCIL_STAR, q1 ? n + 1 : n, q1 ? n + 1 : n, q1 ? n + 1 : n, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, NULL, &da));
  PetscCall(DMSetFromOptions(da));
  PetscCall(DMSetUp(da));
  PetscCall(DMDASetUniformCoordinates(da, 0, 1, 0, 1, 0, 1));
  {
    Vec x;

    PetscCall(DMGetCoordinates(da, &x));
    PetscCall(VecDuplicate(x, points));
    PetscCall(VecCopy(x, *points));
  }
  PetscCall(DMCreateMatrix(da, A));
  if (q1) { /* element by element over the cells whose first node this rank owns */
    PetscReal h = 1.0 / n, K[64], M[64], Ae[64];
    PetscInt  xs, ys, zs, xm, ym, zm;

    Q1Reference(K, M);
    for (int i = 0; i < 64; i++) Ae[i] = h * K[i] + lambda * h * h * h * M[i];
    PetscCall(DMDAGetCorners(da, &xs, &ys, &zs, &xm, &ym, &zm));
    for (PetscInt k = zs; k < PetscMin(zs + zm, n); k++)
      for (PetscInt j = ys; j < PetscMin(ys + ym, n); j++)
        for (PetscInt i = xs; i < PetscMin(xs + xm, n); i++) {
          MatStencil s[8];

          for (int a = 0; a < 8; a++) {
            s[a].i = i + (a & 1);
            s[a].j = j + ((a >> 1) & 1);
            s[a].k = k + (a >> 2);
            s[a].c = 0;
          }
          PetscCall(MatSetValuesStencil(*A, 8, s, 8, s, Ae, ADD_VALUES));
        }
  } else {
    PetscInt xs, ys, zs, xm, ym, zm;

    PetscCall(DMDAGetCorners(da, &xs, &ys, &zs, &xm, &ym, &zm));
    for (PetscInt k = zs; k < zs + zm; k++)
      for (PetscInt j = ys; j < ys + ym; j++)
        for (PetscInt i = xs; i < xs + xm; i++) {
          MatStencil  row = {k, j, i, 0}, col[7];
          PetscScalar v[7];
          PetscInt    nc = 0;
          const int   off[6][3] = {{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}};

          for (int o = 0; o < 6; o++) {
            PetscInt ii = i + off[o][0], jj = j + off[o][1], kk = k + off[o][2];

            if (ii < 0 || jj < 0 || kk < 0 || ii >= n || jj >= n || kk >= n) continue;
            col[nc].i = ii;
            col[nc].j = jj;
            col[nc].k = kk;
            col[nc].c = 0;
            v[nc++]   = -1;
          }
          col[nc] = row;
          v[nc]   = (PetscScalar)nc + lambda / ((PetscReal)n * n);
          nc++;
          PetscCall(MatSetValuesStencil(*A, 1, &row, nc, col, v, INSERT_VALUES));
        }
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(DMDestroy(&da));
  PetscFunctionReturn(0);
}

static PetscErrorCode Solve(Mat A, Vec points, PetscInt *its, PetscReal *relres)
{
  KSP       ksp;
  Vec       x, b, r;
  PetscReal nb, nr;

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(b, &r));
  PetscCall(VecSet(b, 1.0));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 500));
  PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED)); /* ||r|| / ||b|| < 1e-8, as the paper */
  {
    PC pc;

    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCPATCHAMG));
    if (points) {
      PetscScalar *x;
      PetscInt     nx;

      PetscCall(VecGetLocalSize(points, &nx));
      PetscCall(VecGetArray(points, &x));
      PetscCall(PCSetCoordinates(pc, 3, nx / 3, (PetscReal *)x));
      PetscCall(VecRestoreArray(points, &x));
    }
  }
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(MatResidual(A, b, x, r));
  PetscCall(VecNorm(r, NORM_2, &nr));
  PetscCall(VecNorm(b, NORM_2, &nb));
  *relres = nr / nb;
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&r));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Mat       A;
  Vec       points;
  char      problem[16] = "q1";
  PetscInt  n = 16, max_its = 0, its, its2;
  PetscReal lambda = 1, relres, relres2;
  PetscBool repeat = PETSC_FALSE, coordinates = PETSC_FALSE;
  int       fails = 0;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PatchworkInitializePackage());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-problem", problem, sizeof(problem), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-max_its", &max_its, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-lambda", &lambda, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-repeat", &repeat, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-coordinates", &coordinates, NULL));
  PetscCall(CreateMatrix(problem, n, lambda, &A, &points));
  PetscCall(Solve(A, coordinates ? points : NULL, &its, &relres));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s n=%" PetscInt_FMT ": CG iterations %" PetscInt_FMT ", relative residual %.2e\n", problem, n, its, (double)relres));
  if (!(relres <= 1e-8)) {
    fails++;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: relative residual %.3e > 1e-8\n", (double)relres));
  }
  if (max_its && its > max_its) {
    fails++;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: %" PetscInt_FMT " iterations > %" PetscInt_FMT "\n", its, max_its));
  }
  if (repeat) {
    PetscCall(Solve(A, coordinates ? points : NULL, &its2, &relres2));
    if (its2 != its || relres2 != relres) {
      fails++;
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: a second setup gave %" PetscInt_FMT " iterations, residual %.17e (first: %" PetscInt_FMT ", %.17e)\n", its2, (double)relres2, its, (double)relres));
    } else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "a second setup gives the same iterations and residual\n"));
  }
  PetscCall(MatDestroy(&A));
  PetscCall(VecDestroy(&points));
  PetscCall(PetscFinalize());
  return fails ? 1 : 0;
}
