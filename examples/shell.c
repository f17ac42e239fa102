static const char help[] = "Variable-coefficient Poisson problem on a curved domain, matrix-free on a DMPlex:\n"
                           "  -div(c(x) grad u) + alpha u = f, u = g on the boundary,\n"
                           "  c(x) = 1/(0.05 + 2|x|^2) (Ljungkvist 2017), exact solution u = g = cos(pi |x| / 2),\n"
                           "on a spherical shell sector (a cubed-sphere panel of 1/2 < |x| < 1; in 2D an annulus sector)\n"
                           "or on the box [-1,1]^dim. The shell is a box mesh of hexahedra (quadrilaterals) mapped by the\n"
                           "smooth cubed-sphere map; its coordinate field has the solution's degree, so the cells are\n"
                           "curved and the operator's geometry is the map's at the nodes. CG with Jacobi by default.\n"
                           "Options:\n"
                           "  -dim <3>         2 or 3\n"
                           "  -degree <4>      polynomial degree k: 1..10 in 2D, 1..8 in 3D\n"
                           "  -cells <4>       cells per direction of the box before the map\n"
                           "  -alpha <0>       reaction coefficient\n"
                           "  -domain <shell>  shell or box\n"
                           "  -refine_shell <r>  split once the cells whose centre lies within one cell width of the sphere |x| = r\n"
                           "  -refine_shell_levels <1>  then split the cells within half that width again, and so on (2:1 balanced)\n"
                           "                   (of the box's last coordinate, the radius), giving hanging nodes (PatchworkDMPlexRefineCells()).\n"
                           "                   The mesh is then a PETSc tree, which carries vertex coordinates only: the vertices are mapped\n"
                           "                   onto the shell (the hanging ones stay at the centres of their coarse edges and faces) and the\n"
                           "                   cells are multilinear between them, not curved: a polyhedral shell, on whose boundary u = g\n"
                           "                   holds, so the error still falls as h^(k+1)\n"
                           "The last line is 'summary: key=value ...' for scripts.\n"
                           "A solve that does not converge is an error (nonzero exit) after the summary line; to accept -ksp_max_it\n"
                           "iterations as converged (a fixed iteration count) add -ksp_converged_maxits.\n";

#include "shell.h"
#include "walltime.h"
#include <petscds.h>
#include <petscsnes.h>

typedef struct {
  PetscReal alpha;
} Problem;

static PetscErrorCode Exact(PetscInt dim, PetscReal t, const PetscReal x[], PetscInt Nc, PetscScalar *u, void *ctx)
{
  (void)t, (void)Nc, (void)ctx;
  u[0] = PetscCosReal(0.5 * PETSC_PI * Radius(dim, x));
  return 0;
}

/* f = -div(c grad u) + alpha u for the radial u = cos(pi rho/2), c = 1/(0.05 + 2 rho^2):
   div(g(rho) x/rho) = g' + (dim-1) g/rho with g = c u' */
static PetscReal Forcing(PetscInt dim, const PetscReal x[], PetscReal alpha)
{
  const PetscReal rho = Radius(dim, x), a = 0.5 * PETSC_PI, c = Coefficient(rho), dc = -4 * rho * c * c;
  const PetscReal du = -a * PetscSinReal(a * rho), d2u = -a * a * PetscCosReal(a * rho);
  const PetscReal du_over_rho = rho > 1e-12 ? du / rho : -a * a; /* the limit at the centre */

  return -(dc * du + c * d2u + (dim - 1) * c * du_over_rho) + alpha * PetscCosReal(a * rho);
}

/* The residual alpha u v + c grad u . grad v - f v, for PETSc's FEM to assemble the right-hand side
   with the boundary values lifted (the operator itself is never assembled) */
static void F0(PetscInt dim, PetscInt Nf, PetscInt NfAux, const PetscInt uOff[], const PetscInt uOff_x[], const PetscScalar u[], const PetscScalar u_t[], const PetscScalar u_x[], const PetscInt aOff[], const PetscInt aOff_x[], const PetscScalar a[], const PetscScalar a_t[], const PetscScalar a_x[], PetscReal t, const PetscReal x[], PetscInt numConstants, const PetscScalar constants[], PetscScalar f0[])
{
  (void)Nf, (void)NfAux, (void)uOff, (void)uOff_x, (void)u_t, (void)u_x, (void)aOff, (void)aOff_x, (void)a, (void)a_t, (void)a_x, (void)t, (void)numConstants;
  f0[0] = constants[0] * u[0] - Forcing(dim, x, PetscRealPart(constants[0]));
}

static void F1(PetscInt dim, PetscInt Nf, PetscInt NfAux, const PetscInt uOff[], const PetscInt uOff_x[], const PetscScalar u[], const PetscScalar u_t[], const PetscScalar u_x[], const PetscInt aOff[], const PetscInt aOff_x[], const PetscScalar a[], const PetscScalar a_t[], const PetscScalar a_x[], PetscReal t, const PetscReal x[], PetscInt numConstants, const PetscScalar constants[], PetscScalar f1[])
{
  (void)Nf, (void)NfAux, (void)uOff, (void)uOff_x, (void)u, (void)u_t, (void)aOff, (void)aOff_x, (void)a, (void)a_t, (void)a_x, (void)t, (void)numConstants, (void)constants;
  for (PetscInt d = 0; d < dim; d++) f1[d] = Coefficient(Radius(dim, x)) * u_x[d];
}

/* Compute and keep the constraints of the tree dm's hanging dofs (DMGetDefaultConstraints()) from a clean
   reference tree: dm and its clones share the reference tree, which PETSc 3.18 (not 3.26) leaves holding
   the layout of the last field it served */
static PetscErrorCode TreeConstraints(DM dm)
{
  DM ref;

  PetscFunctionBeginUser;
  PetscCall(DMPlexGetReferenceTree(dm, &ref));
  if (ref) {
    PetscCall(DMSetLocalSection(ref, NULL));
    PetscCall(DMSetDefaultConstraints(ref, NULL, NULL, NULL));
  }
  PetscCall(DMGetDefaultConstraints(dm, NULL, NULL, NULL));
  PetscFunctionReturn(0);
}

static PetscErrorCode One(PetscInt dim, PetscReal t, const PetscReal x[], PetscInt Nc, PetscScalar *u, void *ctx)
{
  (void)dim, (void)t, (void)x, (void)Nc, (void)ctx;
  u[0] = 1;
  return 0;
}

/* The exact solution at every dof of xl, a local vector of the tree dm with the Q_k field of `degree`.
   DMPlexInsertBoundaryValues() sets the points of this rank's cells only, but a distributed tree also holds
   coarse edges and faces of other ranks' cells, the anchors of its hanging dofs, whose boundary values the
   hanging dofs interpolate. So: on a copy of the field without boundary conditions (every dof that does not
   hang is an unknown), p at the nodes of this rank's cells, each unknown from the ranks whose cells hold it,
   and back to every local dof */
static PetscErrorCode ExactEverywhere(DM dm, PetscInt degree, Vec xl)
{
  PetscErrorCode (*funcs[2])(PetscInt, PetscReal, const PetscReal[], PetscInt, PetscScalar *, void *) = {Exact, One};
  DM           dmg;
  Vec          l[2], g[2];
  PetscSection csec = NULL, sec;

  PetscFunctionBeginUser;
  PetscCall(DMClone(dm, &dmg));
  PetscCall(PatchworkDMPlexSetQkField(dmg, degree, PETSC_FALSE));
  PetscCall(TreeConstraints(dmg));
  PetscCall(DMGetLocalSection(dmg, &sec));
  PetscCall(DMGetDefaultConstraints(dmg, &csec, NULL, NULL));
  for (int i = 0; i < 2; i++) { /* l[0]: the solution, l[1]: 1, where this rank's cells reach */
    PetscCall(DMCreateLocalVector(dmg, &l[i]));
    PetscCall(DMCreateGlobalVector(dmg, &g[i]));
    PetscCall(VecZeroEntries(l[i]));
    PetscCall(VecZeroEntries(g[i]));
    PetscCall(DMProjectFunctionLocal(dmg, 0.0, &funcs[i], NULL, INSERT_ALL_VALUES, l[i]));
    if (csec) { /* no hanging values: DMLocalToGlobal() would add them to their anchors */
      PetscScalar *a;
      PetscInt     pStart, pEnd;

      PetscCall(PetscSectionGetChart(csec, &pStart, &pEnd));
      PetscCall(VecGetArray(l[i], &a));
      for (PetscInt p = pStart; p < pEnd; p++) {
        PetscInt cdof, off;

        PetscCall(PetscSectionGetDof(csec, p, &cdof));
        PetscCall(PetscSectionGetOffset(sec, p, &off));
        for (PetscInt j = 0; j < cdof; j++) a[off + j] = 0;
      }
      PetscCall(VecRestoreArray(l[i], &a));
    }
    PetscCall(DMLocalToGlobal(dmg, l[i], ADD_VALUES, g[i]));
  }
  PetscCall(VecPointwiseDivide(g[0], g[0], g[1]));
  PetscCall(DMGlobalToLocal(dmg, g[0], INSERT_VALUES, l[0]));
  PetscCall(VecCopy(l[0], xl)); /* the same local layout: boundary conditions do not change it */
  for (int i = 0; i < 2; i++) {
    PetscCall(VecDestroy(&l[i]));
    PetscCall(VecDestroy(&g[i]));
  }
  PetscCall(DMDestroy(&dmg));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  DM             dm;
  Mat            A;
  KSP            ksp;
  Vec            u, b;
  PetscInt       dim = 3, degree = 4, cells = 4, levels = 1, maxdegree, its, N;
  PetscReal      alpha = 0, err, rsplit = -1;
  PetscBool      shell = PETSC_TRUE;
  char           domain[16] = "shell", opt[64], ktype[64], ptype[64];
  PetscLogDouble start = WallTime(), last = start, tstartup, tmesh, top, tpcsetup, tsolve;
  KSPConvergedReason reason;
  PetscErrorCode (*exact[1])(PetscInt, PetscReal, const PetscReal[], PetscInt, PetscScalar *, void *) = {Exact};

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PatchworkInitializePackage());
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Curved-domain Poisson example", NULL);
  PetscCall(PetscOptionsInt("-dim", "Dimension (2 or 3)", NULL, dim, &dim, NULL));
  PetscCall(PetscOptionsInt("-degree", "Polynomial degree", NULL, degree, &degree, NULL));
  PetscCall(PetscOptionsInt("-cells", "Cells per direction of the box", NULL, cells, &cells, NULL));
  PetscCall(PetscOptionsReal("-alpha", "Reaction coefficient", NULL, alpha, &alpha, NULL));
  PetscCall(PetscOptionsString("-domain", "shell or box", NULL, domain, domain, sizeof(domain), NULL));
  PetscCall(PetscOptionsReal("-refine_shell", "Split the cells within one radial cell of |x| = r (hanging nodes)", NULL, rsplit, &rsplit, NULL));
  PetscCall(PetscOptionsInt("-refine_shell_levels", "Levels of -refine_shell: each splits the cells within half the last width again", NULL, levels, &levels, NULL));
  PetscOptionsEnd();
  /* check the input before any work: the coordinate field of the shell has the solution's degree, and
     building it at a degree the operator refuses takes minutes */
  PetscCheck(dim == 2 || dim == 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-dim %" PetscInt_FMT " is not supported: use 2 or 3", dim);
  maxdegree = dim == 2 ? 10 : 8; /* MatCreatePatchworkTensor()'s degrees on a DMPlex */
  PetscCheck(degree >= 1 && degree <= maxdegree, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-degree %" PetscInt_FMT " is not supported in %" PetscInt_FMT "D: use 1..%" PetscInt_FMT, degree, dim, maxdegree);
  PetscCheck(cells >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-cells %" PetscInt_FMT " is not supported: use at least 1 cell per direction", cells);
  PetscCheck(levels >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-refine_shell_levels must be at least 1, not %" PetscInt_FMT, levels);
  PetscCheck(!strcmp(domain, "shell") || !strcmp(domain, "box"), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "Unknown -domain %s: use shell or box", domain);
  shell = (PetscBool)!strcmp(domain, "shell");

  PetscCall(WallPhase(PETSC_COMM_WORLD, &last, &tstartup));
  /* the box mesh, distributed, with a coordinate field of the solution's degree, then mapped */
  PetscCall(PetscSNPrintf(opt, sizeof(opt), "%" PetscInt_FMT, dim));
  PetscCall(PetscOptionsSetValue(NULL, "-dm_plex_dim", opt));
  PetscCall(PetscOptionsSetValue(NULL, "-dm_plex_simplex", "0"));
  PetscCall(PetscSNPrintf(opt, sizeof(opt), dim == 2 ? "%" PetscInt_FMT ",%" PetscInt_FMT : "%" PetscInt_FMT ",%" PetscInt_FMT ",%" PetscInt_FMT, cells, cells, cells));
  PetscCall(PetscOptionsSetValue(NULL, "-dm_plex_box_faces", opt));
  PetscCall(PetscOptionsSetValue(NULL, "-dm_plex_box_lower", dim == 2 ? (shell ? "-1,0.5" : "-1,-1") : (shell ? "-1,-1,0.5" : "-1,-1,-1")));
  PetscCall(PetscOptionsSetValue(NULL, "-dm_plex_box_upper", dim == 2 ? "1,1" : "1,1,1"));
  if (shell && rsplit < 0) {
    PetscCall(PetscSNPrintf(opt, sizeof(opt), "%" PetscInt_FMT, degree));
    PetscCall(PetscOptionsSetValue(NULL, "-dm_coord_petscspace_degree", opt));
  }
  if (rsplit >= 0) PetscCall(PetscOptionsSetValue(NULL, "-dm_distribute", "0")); /* split the serial mesh, then distribute */
  PetscCall(DMCreate(PETSC_COMM_WORLD, &dm));
  PetscCall(DMSetType(dm, DMPLEX));
  PetscCall(DMSetFromOptions(dm));
  if (rsplit >= 0) PetscCall(SplitBand(&dm, rsplit, (shell ? 0.5 : 2.0) / cells, levels, shell));
  else if (shell) PetscCall(DMPlexRemapGeometry(dm, 0.0, BoxToShell));
  PetscCall(DMViewFromOptions(dm, NULL, "-dm_view"));
  /* the Q_k field, and u = g on the whole boundary (the box mesh's "marker" label) */
  PetscCall(PatchworkDMPlexSetQkField(dm, degree, PETSC_FALSE));
  {
    DMLabel  marker;
    PetscInt one = 1;

    PetscCall(DMGetLabel(dm, "marker", &marker));
    PetscCheck(marker, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "The box mesh has no boundary label \"marker\"");
    PetscCall(DMAddBoundary(dm, DM_BC_ESSENTIAL, "wall", marker, 1, &one, 0, 0, NULL, (void (*)(void))Exact, NULL, NULL, NULL));
  }
  if (rsplit >= 0) PetscCall(TreeConstraints(dm));

  /* the right-hand side b = -F(u_g) by PETSc's own FEM residual at the boundary values, zero inside:
     f with the boundary values lifted (the operator itself is never assembled) */
  {
    PetscDS     ds;
    PetscScalar constants[1] = {alpha};

    PetscCall(DMGetDS(dm, &ds));
    PetscCall(PetscDSSetConstants(ds, 1, constants));
    PetscCall(PetscDSSetResidual(ds, 0, F0, F1));
    Vec xl, fl;

    PetscCall(DMCreateGlobalVector(dm, &b));
    PetscCall(DMGetLocalVector(dm, &xl));
    PetscCall(DMGetLocalVector(dm, &fl));
    PetscCall(VecZeroEntries(xl));
    PetscCall(VecZeroEntries(fl));
    PetscCall(VecZeroEntries(b));
    if (rsplit < 0) PetscCall(DMPlexInsertBoundaryValues(dm, PETSC_TRUE, xl, 0.0, NULL, NULL, NULL));
    else PetscCall(ExactEverywhere(dm, degree, xl)); /* hanging nodes: boundary values at every anchor */
    /* with hanging nodes the lifting must lie in the constrained space: the unknowns zero, then PETSc's
       constraints fill the hanging dofs from their anchors, boundary values included */
    PetscCall(DMGlobalToLocal(dm, b, INSERT_VALUES, xl));
    PetscCall(DMPlexSNESComputeResidualFEM(dm, xl, fl, NULL));
    PetscCall(VecZeroEntries(b));
    PetscCall(DMLocalToGlobal(dm, fl, ADD_VALUES, b));
    PetscCall(DMRestoreLocalVector(dm, &xl));
    PetscCall(DMRestoreLocalVector(dm, &fl));
    PetscCall(VecScale(b, -1.0));
  }

  PetscCall(WallPhase(PETSC_COMM_WORLD, &last, &tmesh));
  PetscCall(MatCreatePatchworkTensor(dm, degree, &A));
  PetscCall(MatPatchworkTensorSetCoefficients(A, alpha, 1.0));
  PetscCall(MatPatchworkTensorSetCoefficientFunctions(A, Diffusion, NULL, NULL));
  PetscCall(MatSetFromOptions(A));
  PetscCall(MatCreateVecs(A, &u, NULL));
  {
    Vec bb; /* b in the operator's vector type (device vectors with -dm_vec_type cuda) */

    PetscCall(VecDuplicate(u, &bb));
    PetscCall(VecCopy(b, bb));
    PetscCall(VecDestroy(&b));
    b = bb;
  }
  PetscCall(WallPhase(PETSC_COMM_WORLD, &last, &top));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPCG));
  {
    PC pc;
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCJACOBI));
  }
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 10000));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSetUp(ksp));
  PetscCall(WallPhase(PETSC_COMM_WORLD, &last, &tpcsetup));
  PetscCall(KSPSolve(ksp, b, u));
  PetscCall(WallPhase(PETSC_COMM_WORLD, &last, &tsolve));
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(VecGetSize(u, &N));
  {
    Vec uh, ul; /* DMComputeL2Diff reads a host vector of the DM's layout */

    PetscCall(DMCreateGlobalVector(dm, &uh));
    PetscCall(VecCopy(u, uh));
    if (rsplit < 0) PetscCall(DMComputeL2Diff(dm, 0.0, exact, NULL, uh, &err));
    else { /* hanging nodes: the boundary values at every anchor, the unknowns, then the hanging dofs from both */
      PetscCall(DMGetLocalVector(dm, &ul));
      PetscCall(ExactEverywhere(dm, degree, ul));
      PetscCall(DMGlobalToLocal(dm, uh, INSERT_VALUES, ul));
      PetscCall(DMPlexComputeL2DiffLocal(dm, 0.0, exact, NULL, ul, &err));
      PetscCall(DMRestoreLocalVector(dm, &ul));
    }
    PetscCall(VecDestroy(&uh));
  }
  {
    KSPType kt;
    PC      pc;
    PCType  pt;

    PetscCall(KSPGetType(ksp, &kt));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCGetType(pc, &pt));
    PetscCall(PetscStrncpy(ktype, kt, sizeof(ktype)));
    PetscCall(PetscStrncpy(ptype, pt, sizeof(ptype)));
  }
  PetscCall(WallPrint(PETSC_COMM_WORLD, tstartup, tmesh, "mesh and right-hand side", top, "operator", tpcsetup, tsolve, last - start));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "summary: dim=%" PetscInt_FMT " degree=%" PetscInt_FMT " cells=%" PetscInt_FMT " domain=%s dofs=%" PetscInt_FMT " ksp=%s pc=%s its=%" PetscInt_FMT " reason=%s l2err=%.6e setup_s=%.6f solve_s=%.6f startup_s=%.6f mesh_s=%.6f op_s=%.6f pc_setup_s=%.6f total_s=%.6f\n", dim, degree, cells, domain, N, ktype, ptype, its, KSPConvergedReasons[reason], (double)err, top + tpcsetup, tsolve, tstartup, tmesh, top, tpcsetup, last - start));
  PetscCheck(reason > 0, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "KSPSolve did not converge: %s%s", KSPConvergedReasons[reason], reason == KSP_DIVERGED_ITS ? " (for a fixed number of iterations add -ksp_converged_maxits)" : "");

  PetscCall(KSPDestroy(&ksp));
  PetscCall(MatDestroy(&A));
  PetscCall(VecDestroy(&u));
  PetscCall(VecDestroy(&b));
  PetscCall(DMDestroy(&dm));
  PetscCall(PetscFinalize());
  return 0;
}
