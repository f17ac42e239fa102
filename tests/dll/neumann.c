static const char help[] = "Singular problems: P1 finite elements on a jittered simplicial box mesh (triangles in 2D, the\n"
                           "six Kuhn tetrahedra of each cube in 3D) with natural (Neumann) conditions on the whole boundary,\n"
                           "the null space attached with MatSetNullSpace(). A plain PETSc program that reaches Patchwork\n"
                           "through -dll_append only, so that -pc_type patchamg, gamg and hypre run on the same matrix.\n"
                           "  -dim <2,3>       : dimension (default 3)\n"
                           "  -n <n>           : cells per direction (default 16)\n"
                           "  -jitter <j>      : interior vertices moved by up to j h in each direction (default 0.2)\n"
                           "  -jump <c>        : coefficient c in the middle box [1/4, 3/4]^dim, 1 elsewhere (default 1)\n"
                           "  -scale           : solve D A D instead (D a positive diagonal in [1/2, 2]): the null vector D^-1 1 is not constant\n"
                           "  -elasticity      : linear elasticity with free boundary (pure traction): the rigid-body modes as null space\n"
                           "  -nullspace <0,1> : attach the null space (default 1)\n"
                           "  -attach_constants: attach the constants as null space whatever the matrix (with -scale a wrong one)\n"
                           "  -max_its <m>     : fail when the KSP needs more iterations (0: no check)\n"
                           "  -max_err <e>     : fail when the relative error, null space removed, is larger (default 1e-5)\n"
                           "  -dm_mat_type, -dm_vec_type : e.g. aijcusparse and cuda, for the device path\n";

#include <petscdmda.h>
#include <petscksp.h>

typedef struct {
  PetscInt  dim, n, dof;
  PetscReal h, jitter, jump;
  PetscBool elasticity;
} Problem;

/* A deterministic number in [0, 1) from a few integers (the same on any number of ranks) */
static PetscReal Hash(PetscInt a, PetscInt b, PetscInt c, PetscInt d)
{
  unsigned long long x = 0x9e3779b97f4a7c15ULL;
  PetscInt           v[4] = {a, b, c, d};

  for (int i = 0; i < 4; i++) {
    x ^= (unsigned long long)v[i] + 0x9e3779b97f4a7c15ULL + (x << 6) + (x >> 2);
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 31;
  }
  return (PetscReal)(x >> 11) / 9007199254740992.0;
}

/* The coordinates of vertex v (grid indices): the uniform grid on [0,1]^dim, interior vertices jittered
   in each direction, boundary vertices only along the boundary */
static void Vertex(const Problem *p, const PetscInt v[3], PetscReal x[3])
{
  for (PetscInt d = 0; d < 3; d++) {
    x[d] = 0;
    if (d >= p->dim) continue;
    x[d] = v[d] * p->h;
    if (v[d] > 0 && v[d] < p->n) x[d] += p->jitter * p->h * (2 * Hash(v[0], v[1], v[2], d) - 1);
  }
}

/* The simplices of cell c: 2 triangles (2D) or the 6 Kuhn tetrahedra along the diagonal (3D), conforming
   between cells; s[t][a] are vertex offsets (bits x, y, z) */
static PetscInt CellSimplices(PetscInt dim, PetscInt s[6][4])
{
  if (dim == 2) {
    const PetscInt t[2][3] = {{0, 1, 3}, {0, 3, 2}};

    for (int i = 0; i < 2; i++)
      for (int a = 0; a < 3; a++) s[i][a] = t[i][a];
    return 2;
  }
  {
    const PetscInt perm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};

    for (int i = 0; i < 6; i++) {
      PetscInt bits = 0;

      s[i][0] = 0;
      for (int a = 0; a < 3; a++) {
        bits |= 1 << perm[i][a];
        s[i][a + 1] = bits;
      }
    }
    return 6;
  }
}

/* The element matrix of a simplex (vertices X[a], dim+1 of them): coef grad phi_a . grad phi_b |T|,
   or the elasticity form 2 mu eps(u):eps(v) + lambda div u div v (mu = lambda = 1), rows (a, i) = a*dim + i */
static PetscErrorCode ElementMatrix(const Problem *p, PetscReal X[4][3], PetscReal coef, PetscScalar *Ke)
{
  PetscInt  dim = p->dim, nv = dim + 1, m = nv * p->dof;
  PetscReal J[3][3], Ji[3][3], det, vol, g[4][3];

  PetscFunctionBeginUser;
  for (PetscInt r = 0; r < dim; r++)
    for (PetscInt c = 0; c < dim; c++) J[r][c] = X[c + 1][r] - X[0][r]; /* columns: edges from vertex 0 */
  if (dim == 2) {
    det      = J[0][0] * J[1][1] - J[0][1] * J[1][0];
    Ji[0][0] = J[1][1] / det;
    Ji[0][1] = -J[0][1] / det;
    Ji[1][0] = -J[1][0] / det;
    Ji[1][1] = J[0][0] / det;
    vol      = PetscAbsReal(det) / 2;
  } else {
    det = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) - J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) + J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) Ji[c][r] = (J[(r + 1) % 3][(c + 1) % 3] * J[(r + 2) % 3][(c + 2) % 3] - J[(r + 1) % 3][(c + 2) % 3] * J[(r + 2) % 3][(c + 1) % 3]) / det;
    vol = PetscAbsReal(det) / 6;
  }
  PetscCheck(PetscAbsReal(det) > 1e-3 * PetscPowRealInt(p->h, dim), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "A simplex of the jittered mesh is degenerate: use a smaller -jitter");
  /* the gradients of the barycentric coordinates: rows of J^-1 for vertices 1..dim, minus their sum for 0 */
  for (PetscInt d = 0; d < dim; d++) {
    g[0][d] = 0;
    for (PetscInt a = 1; a < nv; a++) {
      g[a][d] = Ji[a - 1][d];
      g[0][d] -= g[a][d];
    }
  }
  for (PetscInt i = 0; i < m * m; i++) Ke[i] = 0;
  for (PetscInt a = 0; a < nv; a++)
    for (PetscInt b = 0; b < nv; b++) {
      PetscReal gg = 0;

      for (PetscInt d = 0; d < dim; d++) gg += g[a][d] * g[b][d];
      if (!p->elasticity) Ke[a * m + b] = coef * gg * vol;
      else
        for (PetscInt i = 0; i < dim; i++)
          for (PetscInt j = 0; j < dim; j++) Ke[(a * dim + i) * m + b * dim + j] = vol * ((i == j ? gg : 0) + g[a][j] * g[b][i] + g[a][i] * g[b][j]);
    }
  PetscFunctionReturn(0);
}

/* The matrix on the DMDA of the vertices: element by element over the cells whose first vertex this rank
   owns */
static PetscErrorCode Assemble(const Problem *p, DM da, Mat A)
{
  PetscInt xs, ys, zs, xm, ym, zm, s[6][4], ns = CellSimplices(p->dim, s);
  PetscInt ncz = p->dim == 3 ? p->n : 1;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetCorners(da, &xs, &ys, &zs, &xm, &ym, &zm));
  for (PetscInt k = zs; k < PetscMin(zs + zm, ncz); k++)
    for (PetscInt j = ys; j < PetscMin(ys + ym, p->n); j++)
      for (PetscInt i = xs; i < PetscMin(xs + xm, p->n); i++)
        for (PetscInt t = 0; t < ns; t++) {
          PetscReal   X[4][3], centre[3] = {0, 0, 0}, coef = 1;
          PetscBool   inside = PETSC_TRUE;
          MatStencil  st[12];
          PetscScalar Ke[144];
          PetscInt    m = 0;

          for (PetscInt a = 0; a <= p->dim; a++) {
            PetscInt v[3] = {i + (s[t][a] & 1), j + ((s[t][a] >> 1) & 1), k + ((s[t][a] >> 2) & 1)};

            if (p->dim == 2) v[2] = 0;
            Vertex(p, v, X[a]);
            for (PetscInt d = 0; d < p->dim; d++) centre[d] += X[a][d] / (p->dim + 1);
            for (PetscInt c = 0; c < p->dof; c++) {
              st[m].i   = v[0];
              st[m].j   = v[1];
              st[m].k   = v[2];
              st[m++].c = c;
            }
          }
          for (PetscInt d = 0; d < p->dim; d++) inside = (PetscBool)(inside && centre[d] > 0.25 && centre[d] < 0.75);
          if (inside) coef = p->jump;
          PetscCall(ElementMatrix(p, X, coef, Ke));
          PetscCall(MatSetValuesStencil(A, m, st, m, st, Ke, ADD_VALUES));
        }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* The vertex coordinates as a Vec of block size dim (the rigid-body modes' input) and a smooth field
   plus a little noise for the exact solution */
static PetscErrorCode Fields(const Problem *p, DM da, Vec coords, Vec u)
{
  PetscInt     xs, ys, zs, xm, ym, zm, idx = 0;
  PetscScalar *c, *ua;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetCorners(da, &xs, &ys, &zs, &xm, &ym, &zm));
  PetscCall(VecGetArray(coords, &c));
  PetscCall(VecGetArray(u, &ua));
  for (PetscInt k = zs; k < zs + zm; k++)
    for (PetscInt j = ys; j < ys + ym; j++)
      for (PetscInt i = xs; i < xs + xm; i++, idx++) {
        PetscInt  v[3] = {i, j, k};
        PetscReal x[3];

        Vertex(p, v, x);
        for (PetscInt d = 0; d < p->dim; d++) c[idx * p->dim + d] = x[d];
        for (PetscInt f = 0; f < p->dof; f++)
          ua[idx * p->dof + f] = PetscCosReal(PETSC_PI * x[0]) * PetscCosReal(2 * PETSC_PI * x[1]) * PetscCosReal(PETSC_PI * x[2]) * (f + 1) + 0.1 * Hash(i, j, k, 7 + f);
      }
  PetscCall(VecRestoreArray(u, &ua));
  PetscCall(VecRestoreArray(coords, &c));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Problem            p = {3, 16, 1, 0, 0.2, 1, PETSC_FALSE};
  PetscBool          scale = PETSC_FALSE, attach = PETSC_TRUE, constants = PETSC_FALSE;
  PetscInt           max_its = 0, its, nv;
  PetscReal          max_err = 1e-5, err, nu;
  DM                 da;
  Mat                A;
  Vec                u, x, b, coords, d = NULL;
  MatNullSpace       nsp;
  KSP                ksp;
  PC                 pc;
  PCType             pctype;
  KSPConvergedReason reason;
  PetscMPIInt        size;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-dim", &p.dim, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &p.n, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-jitter", &p.jitter, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-jump", &p.jump, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-scale", &scale, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-elasticity", &p.elasticity, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-nullspace", &attach, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-attach_constants", &constants, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-max_its", &max_its, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-max_err", &max_err, NULL));
  PetscCheck(p.dim == 2 || p.dim == 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-dim must be 2 or 3");
  PetscCheck(p.n >= 2, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-n must be at least 2");
  p.h   = 1.0 / p.n;
  p.dof = p.elasticity ? p.dim : 1;

  if (p.dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, p.n + 1, p.n + 1, PETSC_DECIDE, PETSC_DECIDE, p.dof, 1, NULL, NULL, &da));
  else PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, p.n + 1, p.n + 1, p.n + 1, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, p.dof, 1, NULL, NULL, NULL, &da));
  PetscCall(DMSetFromOptions(da)); /* -dm_mat_type aijcusparse -dm_vec_type cuda on a GPU machine */
  PetscCall(DMSetUp(da));
  PetscCall(DMCreateMatrix(da, &A));
  PetscCall(Assemble(&p, da, A));
  PetscCall(DMCreateGlobalVector(da, &u));
  PetscCall(VecDuplicate(u, &x));
  PetscCall(VecDuplicate(u, &b));
  PetscCall(VecGetLocalSize(u, &nv));
  PetscCall(VecCreateMPI(PETSC_COMM_WORLD, nv / p.dof * p.dim, PETSC_DETERMINE, &coords));
  PetscCall(VecSetBlockSize(coords, p.dim));
  PetscCall(Fields(&p, da, coords, u));

  /* the null space: constants, D^-1 1 for D A D, or the rigid-body modes */
  if (p.elasticity) PetscCall(MatNullSpaceCreateRigidBody(coords, &nsp));
  else if (scale) {
    PetscInt     xs, ys, zs, xm, ym, zm, idx = 0;
    PetscScalar *da_;
    Vec          z;

    PetscCall(VecDuplicate(u, &d)); /* by grid point, so that every number of ranks solves the same problem */
    PetscCall(DMDAGetCorners(da, &xs, &ys, &zs, &xm, &ym, &zm));
    PetscCall(VecGetArray(d, &da_));
    for (PetscInt k = zs; k < zs + zm; k++)
      for (PetscInt j = ys; j < ys + ym; j++)
        for (PetscInt i = xs; i < xs + xm; i++) da_[idx++] = 0.5 + 1.5 * Hash(i, j, k, 11);
    PetscCall(VecRestoreArray(d, &da_));
    PetscCall(MatDiagonalScale(A, d, d));
    PetscCall(VecDuplicate(d, &z));
    PetscCall(VecSet(z, 1.0));
    PetscCall(VecPointwiseDivide(z, z, d));
    PetscCall(VecNormalize(z, NULL));
    PetscCall(MatNullSpaceCreate(PETSC_COMM_WORLD, PETSC_FALSE, 1, &z, &nsp));
    PetscCall(VecDestroy(&z));
  } else PetscCall(MatNullSpaceCreate(PETSC_COMM_WORLD, PETSC_TRUE, 0, NULL, &nsp));
  if (attach && constants) {
    MatNullSpace c;

    PetscCall(MatNullSpaceCreate(PETSC_COMM_WORLD, PETSC_TRUE, 0, NULL, &c));
    PetscCall(MatSetNullSpace(A, c));
    PetscCall(MatNullSpaceDestroy(&c));
  } else if (attach) PetscCall(MatSetNullSpace(A, nsp));

  /* the exact solution orthogonal to the null space, the consistent right-hand side A u */
  PetscCall(MatNullSpaceRemove(nsp, u));
  PetscCall(MatMult(A, u, b));

  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 500));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCGetType(pc, &pctype));

  /* the error up to the null space */
  PetscCall(MatNullSpaceRemove(nsp, x));
  PetscCall(VecNorm(u, NORM_2, &nu));
  PetscCall(VecAXPY(x, -1.0, u));
  PetscCall(VecNorm(x, NORM_2, &err));
  err /= nu;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "summary: %s %" PetscInt_FMT "D n=%" PetscInt_FMT "%s%s ranks=%d pc=%s its=%" PetscInt_FMT " reason=%s err=%.2e\n", p.elasticity ? "elasticity" : "neumann", p.dim, p.n, scale ? " scaled" : "", p.jump != 1 ? " jump" : "", size, pctype, its, KSPConvergedReasons[reason], (double)err));
  PetscCheck(reason > 0, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "The solve did not converge: %s after %" PetscInt_FMT " iterations", KSPConvergedReasons[reason], its);
  PetscCheck(err <= max_err, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "The relative error %g is above -max_err %g", (double)err, (double)max_err);
  PetscCheck(max_its <= 0 || its <= max_its, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "%" PetscInt_FMT " iterations, more than -max_its %" PetscInt_FMT, its, max_its);

  PetscCall(MatNullSpaceDestroy(&nsp));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&d));
  PetscCall(VecDestroy(&coords));
  PetscCall(VecDestroy(&u));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return 0;
}
