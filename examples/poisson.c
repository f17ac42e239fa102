static const char help[] = "Poisson problem -div(grad u) = f on the unit box with the Patchwork matrix-free Q_k operator.\n"
                           "The manufactured solution u = prod_d sin(pi x_d) vanishes on the boundary.\n"
                           "  -dim <3>     spatial dimension, 2 or 3\n"
                           "  -degree <4>  polynomial degree k of the Q_k elements\n"
                           "  -cells <8>   cells per direction\n"
                           "  -rhs <sine>  sine: the manufactured solution above; one: f = 1 (no exact solution; as in Cui et al. 2024)\n"
                           "  -fmg         start from one full multigrid cycle of -pc_type vertexpatch\n"
                           "  -pc_type mg  PETSc's PCMG on the Patchwork hierarchy (PCMGSetPatchworkHierarchy()), -pc_mg_levels of it\n"
                           "Every PETSc option works too: -ksp_type, -pc_type, -dm_vec_type cuda, -log_view, ...\n"
                           "The last line is 'summary: key=value ...' for scripts.\n"
                           "A solve that does not converge is an error (nonzero exit) after the summary line; to accept -ksp_max_it\n"
                           "iterations as converged (a fixed iteration count) add -ksp_converged_maxits.\n";

#include <patchwork.h>
#include "poisson.h"
#include "walltime.h"

static PetscReal Exact(PetscInt dim, const PetscReal x[])
{
  PetscReal u = 1;

  for (PetscInt d = 0; d < dim; d++) u *= PetscSinReal(PETSC_PI * x[d]);
  return u;
}

/* Nodal interpolant of the exact solution (scale 1) or of f = dim*pi^2*u (scale dim*pi^2) */
static PetscErrorCode Interpolate(DM dm, PetscReal scale, Vec v)
{
  PetscInt           dim, n;
  Vec                coords;
  const PetscScalar *c;
  PetscScalar       *a;

  PetscFunctionBeginUser;
  PetscCall(DMGetDimension(dm, &dim));
  PetscCall(DMGetCoordinates(dm, &coords));
  PetscCall(VecGetLocalSize(v, &n));
  PetscCall(VecGetArrayRead(coords, &c));
  PetscCall(VecGetArrayWrite(v, &a));
  for (PetscInt i = 0; i < n; i++) {
    PetscReal x[3];

    for (PetscInt d = 0; d < dim; d++) x[d] = PetscRealPart(c[i * dim + d]);
    a[i] = scale * Exact(dim, x);
  }
  PetscCall(VecRestoreArrayWrite(v, &a));
  PetscCall(VecRestoreArrayRead(coords, &c));
  PetscFunctionReturn(0);
}

/* Values of the Lagrange polynomials through nodes[0..n-1] at t */
static void Lagrange(PetscInt n, const PetscReal nodes[], PetscReal t, PetscReal phi[])
{
  for (PetscInt i = 0; i < n; i++) {
    phi[i] = 1;
    for (PetscInt j = 0; j < n; j++)
      if (j != i) phi[i] *= (t - nodes[j]) / (nodes[i] - nodes[j]);
  }
}

/* ||u_h - u||_L2 by (k+2)-point Gauss quadrature per direction on every cell this rank owns */
static PetscErrorCode L2Error(DM dm, PetscInt k, Vec u, PetscReal *err)
{
  PetscInt           dim, xs[3], xm[3], gs[3], gm[3], M[3], nq = k + 2, n = k + 1;
  PetscReal         *qx, *qw, sum = 0;
  Vec                uloc, cloc;
  const PetscScalar *ua, *ca;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetInfo(dm, &dim, &M[0], &M[1], &M[2], NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetCorners(dm, &xs[0], &xs[1], &xs[2], &xm[0], &xm[1], &xm[2]));
  PetscCall(DMDAGetGhostCorners(dm, &gs[0], &gs[1], &gs[2], &gm[0], &gm[1], &gm[2]));
  PetscCall(PetscMalloc2(nq, &qx, nq, &qw));
  PetscCall(PetscDTGaussQuadrature(nq, 0.0, 1.0, qx, qw));
  PetscCall(DMGetLocalVector(dm, &uloc));
  PetscCall(DMGlobalToLocalBegin(dm, u, INSERT_VALUES, uloc));
  PetscCall(DMGlobalToLocalEnd(dm, u, INSERT_VALUES, uloc));
  PetscCall(DMGetCoordinatesLocal(dm, &cloc));
  PetscCall(VecGetArrayRead(uloc, &ua));
  PetscCall(VecGetArrayRead(cloc, &ca));
  {
    PetscInt cs[3] = {0, 0, 0}, ce[3] = {1, 1, 1};

    for (PetscInt d = 0; d < dim; d++) { /* a cell belongs to the rank owning its first node */
      cs[d] = (xs[d] + k - 1) / k;
      ce[d] = PetscMin((M[d] - 1) / k, (xs[d] + xm[d] + k - 1) / k);
    }
    for (PetscInt ez = cs[2]; ez < ce[2]; ez++)
      for (PetscInt ey = cs[1]; ey < ce[1]; ey++)
        for (PetscInt ex = cs[0]; ex < ce[0]; ex++) {
          const PetscInt e[3] = {ex, ey, ez};
          PetscReal      lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0}, nodes[3][11], B[3][12][11];

          /* node positions of this cell along each direction, from the DM's coordinates */
          for (PetscInt d = 0; d < dim; d++) {
            for (PetscInt i = 0; i < n; i++) {
              PetscInt g[3] = {e[0] * k - gs[0], e[1] * k - gs[1], dim == 3 ? e[2] * k - gs[2] : 0};
              g[d] += i;
              nodes[d][i] = PetscRealPart(ca[((g[2] * gm[1] + g[1]) * gm[0] + g[0]) * dim + d]);
            }
            lo[d] = nodes[d][0];
            hi[d] = nodes[d][k];
            for (PetscInt q = 0; q < nq; q++) Lagrange(n, nodes[d], lo[d] + qx[q] * (hi[d] - lo[d]), B[d][q]);
          }
          /* u_h at the quadrature points one direction at a time (sum factorization: the
             cost per cell grows like n^4, not n^6), and the exact solution as the product of its
             factors per direction */
          {
            const PetscInt nz = dim == 3 ? n : 1, qz_n = dim == 3 ? nq : 1;
            PetscReal      U[11][11][11], T1[11][11][12], T2[11][12][12], S[3][12], W[3][12];

            for (PetscInt d = 0; d < 3; d++)
              for (PetscInt q = 0; q < nq; q++) {
                S[d][q] = d < dim ? PetscSinReal(PETSC_PI * (lo[d] + qx[q] * (hi[d] - lo[d]))) : 1;
                W[d][q] = d < dim ? qw[q] * (hi[d] - lo[d]) : 1;
              }
            for (PetscInt l = 0; l < nz; l++)
              for (PetscInt j = 0; j < n; j++)
                for (PetscInt i = 0; i < n; i++) U[l][j][i] = PetscRealPart(ua[((e[2] * k + l - gs[2]) * gm[1] + e[1] * k + j - gs[1]) * gm[0] + e[0] * k + i - gs[0]]);
            for (PetscInt l = 0; l < nz; l++)
              for (PetscInt j = 0; j < n; j++)
                for (PetscInt q = 0; q < nq; q++) {
                  T1[l][j][q] = 0;
                  for (PetscInt i = 0; i < n; i++) T1[l][j][q] += B[0][q][i] * U[l][j][i];
                }
            for (PetscInt l = 0; l < nz; l++)
              for (PetscInt qy = 0; qy < nq; qy++)
                for (PetscInt q = 0; q < nq; q++) {
                  T2[l][qy][q] = 0;
                  for (PetscInt j = 0; j < n; j++) T2[l][qy][q] += B[1][qy][j] * T1[l][j][q];
                }
            for (PetscInt qz = 0; qz < qz_n; qz++)
              for (PetscInt qy = 0; qy < nq; qy++)
                for (PetscInt q = 0; q < nq; q++) {
                  PetscReal uh = 0;

                  for (PetscInt l = 0; l < nz; l++) uh += (dim == 3 ? B[2][qz][l] : 1) * T2[l][qy][q];
                  sum += W[0][q] * W[1][qy] * W[2][qz] * PetscSqr(uh - S[0][q] * S[1][qy] * S[2][qz]);
                }
          }
        }
  }
  PetscCall(VecRestoreArrayRead(cloc, &ca));
  PetscCall(VecRestoreArrayRead(uloc, &ua));
  PetscCall(DMRestoreLocalVector(dm, &uloc));
  PetscCall(PetscFree2(qx, qw));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &sum, 1, MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)dm)));
  *err = PetscSqrtReal(sum);
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscInt           dim = 3, degree = 4, ncells = 8, cells[3], its, N;
  PetscBool          sine = PETSC_TRUE, fmg = PETSC_FALSE;
  char               rhs[16] = "sine";
  DM                 dm;
  Mat                A, Mass;
  Vec                u, b, f;
  KSP                ksp;
  KSPConvergedReason reason;
  PetscReal          err;
  PetscLogDouble     start = WallTime(), last = start, tstartup, tdm, top, tpcsetup, tsolve;
  VecType            vtype;
  KSPType            ktype;
  PC                 pc;
  PCType             ptype;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PatchworkInitializePackage());
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Patchwork Poisson example", NULL);
  PetscCall(PetscOptionsInt("-dim", "Spatial dimension (2 or 3)", NULL, dim, &dim, NULL));
  PetscCall(PetscOptionsInt("-degree", "Polynomial degree k", NULL, degree, &degree, NULL));
  PetscCall(PetscOptionsInt("-cells", "Cells per direction", NULL, ncells, &ncells, NULL));
  PetscCall(PetscOptionsBool("-fmg", "Initial guess by one full multigrid cycle (-pc_type vertexpatch)", NULL, fmg, &fmg, NULL));
  PetscCall(PetscOptionsString("-rhs", "Right-hand side: sine or one", NULL, rhs, rhs, sizeof(rhs), NULL));
  PetscOptionsEnd();
  PetscCall(PetscStrcmp(rhs, "sine", &sine));
  {
    PetscBool one;

    PetscCall(PetscStrcmp(rhs, "one", &one));
    PetscCheck(sine || one, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "Unknown -rhs %s: use sine or one", rhs);
  }
  cells[0] = cells[1] = cells[2] = ncells;

  PetscCall(WallPhase(PETSC_COMM_WORLD, &last, &tstartup));
  PetscCall(PatchworkDMDACreateQk(PETSC_COMM_WORLD, dim, degree, cells, NULL, NULL, &dm));
  PetscCall(WallPhase(PETSC_COMM_WORLD, &last, &tdm));
  PetscCall(MatCreatePatchworkTensor(dm, degree, &A));
  PetscCall(MatSetFromOptions(A));
  PetscCall(DMCreateGlobalVector(dm, &u));
  PetscCall(VecDuplicate(u, &b));
  PetscCall(VecDuplicate(u, &f));
  PetscCall(VecGetSize(u, &N));

  /* b = M f with the exact mass matrix; f vanishes on the boundary, so the Dirichlet rows give b = 0 there */
  PetscCall(MatCreatePatchworkTensor(dm, degree, &Mass));
  PetscCall(MatPatchworkTensorSetCoefficients(Mass, 1.0, 0.0));
  if (sine) {
    PetscCall(Interpolate(dm, dim * PETSC_PI * PETSC_PI, f));
    PetscCall(MatMult(Mass, f, b));
  } else PetscCall(LoadOne(dm, degree, b));
  PetscCall(VecDestroy(&f)); /* large runs need the memory */
  PetscCall(WallPhase(PETSC_COMM_WORLD, &last, &top));

  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 10000));
  PetscCall(KSPSetFromOptions(ksp));
  {
    PetscBool   ismg, set;
    PetscInt    nlevels = PETSC_DECIDE;
    const char *prefix;

    /* PETSc's PCMG on the Patchwork hierarchy: matrix-free levels and transfers, as many as -pc_mg_levels
       asks (PCMG has read it, but makes its levels without operators), else as many as the grid allows */
    PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCMG, &ismg));
    if (ismg) {
      PetscCall(PCGetOptionsPrefix(pc, &prefix));
      PetscCall(PetscOptionsGetInt(NULL, prefix, "-pc_mg_levels", &nlevels, &set));
      PetscCall(PCMGSetPatchworkHierarchy(pc, set ? nlevels : PETSC_DECIDE));
    }
  }
  PetscCall(KSPSetUp(ksp));
  PetscCall(VecSet(u, 0.0));
  PetscCall(WallPhase(PETSC_COMM_WORLD, &last, &tpcsetup));
  if (fmg) { /* the full multigrid solver of Cui et al.: FMG, then V-cycles until |b - A u| <= rtol |b| */
    PetscCall(PCVertexPatchFMG(pc, b, u));
    PetscCall(KSPSetInitialGuessNonzero(ksp, PETSC_TRUE));
  }
  PetscCall(KSPSolve(ksp, b, u));
  PetscCall(WallPhase(PETSC_COMM_WORLD, &last, &tsolve));
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  err = -1; /* no exact solution for f = 1 */
  if (sine) PetscCall(L2Error(dm, degree, u, &err));
  PetscCall(DMGetVecType(dm, &vtype));
  PetscCall(KSPGetType(ksp, &ktype));
  PetscCall(PCGetType(pc, &ptype));

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Poisson, %" PetscInt_FMT "D, Q%" PetscInt_FMT ", %" PetscInt_FMT "^%" PetscInt_FMT " cells, %" PetscInt_FMT " DoFs, vectors %s\n", dim, degree, ncells, dim, N, vtype));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "KSP %s + PC %s: %" PetscInt_FMT " iterations, %s\n", ktype, ptype, its, KSPConvergedReasons[reason]));
  if (sine) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "L2 error %.6e, solve time %.4f s\n", (double)err, tsolve));
  else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "f = 1: no exact solution; solve time %.4f s\n", tsolve));
  PetscCall(WallPrint(PETSC_COMM_WORLD, tstartup, tdm, "DM", top, "operator and right-hand side", tpcsetup, tsolve, last - start));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "summary: dim=%" PetscInt_FMT " degree=%" PetscInt_FMT " cells=%" PetscInt_FMT " dofs=%" PetscInt_FMT " ksp=%s pc=%s its=%" PetscInt_FMT " reason=%s l2err=%.6e solve_s=%.6f startup_s=%.6f dm_s=%.6f op_s=%.6f pc_setup_s=%.6f total_s=%.6f\n", dim, degree, ncells, N, ktype, ptype, its, KSPConvergedReasons[reason], (double)err, tsolve, tstartup, tdm, top, tpcsetup, last - start));
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
