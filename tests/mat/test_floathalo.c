static const char help[] = "The float halo exchange of a DMDA (PatchworkFloatHalo) against DMGlobalToLocal(INSERT_VALUES)\n"
                           "and DMLocalToGlobal(ADD_VALUES) of the same values in double, in 2D and 3D, host arrays.\n";

#include <patchwork.h>
#include <petscdmshell.h>
#include <float.h>
/* The exchange is PETSC_INTERN, hidden in the shared library: compile it, and its CPU kernel, into the test */
#include "../../src/sys/floathalo.c"
#include "../../src/core/vecops_ref.c"
#include "compare.h" /* ErrMax(), PatchworkTestErrMaxAllreduce() */

static PetscInt failures = 0, cases = 0;

static PetscErrorCode Report(const char what[], PetscReal err, PetscReal tol)
{
  PetscFunctionBeginUser;
  cases++;
  if (!(err <= tol)) failures++;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %s: err %.2e tol %.0e\n", err <= tol ? "ok  " : "FAIL", what, (double)err, (double)tol));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestOne(PetscInt dim, const PetscInt n[], PetscInt dof, DMDAStencilType st, PetscInt sw, PetscRandom rnd)
{
  const DMBoundaryType b = DM_BOUNDARY_NONE;
  DM                   dm;
  PatchworkFloatHalo   h;
  Vec                  x, xl, a, al;
  PetscInt             nown, nloc, nh, ghosts[2];
  PetscScalar         *xa, *xla, *aa, *ala;
  float               *g, *l;
  PetscReal            err[2] = {0, 0}, gerr[2];
  char                 what[128];

  PetscFunctionBeginUser;
  if (dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, b, b, st, n[0], n[1], PETSC_DECIDE, PETSC_DECIDE, dof, sw, NULL, NULL, &dm));
  else PetscCall(DMDACreate3d(PETSC_COMM_WORLD, b, b, b, st, n[0], n[1], n[2], PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, dof, sw, NULL, NULL, NULL, &dm));
  PetscCall(DMSetUp(dm));
  PetscCall(PatchworkFloatHaloCreate(dm, PETSC_FALSE, &h));
  PetscCall(DMCreateGlobalVector(dm, &x));
  PetscCall(DMCreateLocalVector(dm, &xl));
  PetscCall(VecDuplicate(x, &a));
  PetscCall(VecDuplicate(xl, &al));
  PetscCall(VecGetLocalSize(x, &nown));
  PetscCall(VecGetLocalSize(xl, &nloc));
  PetscCall(PatchworkFloatHaloGetLocalSize(h, &nh));
  PetscCheck(nh == nloc, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "local size %" PetscInt_FMT ", the DMDA's %" PetscInt_FMT, nh, nloc);
  PetscCall(PetscMalloc2(nown, &g, nloc, &l));

  /* to local: the float copies of a double vector's entries, so equal to the double result's */
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(VecSet(xl, -7.0)); /* entries no rank sets (a star stencil's corners) stay as they were in both */
  PetscCall(VecGetArray(x, &xa));
  for (PetscInt i = 0; i < nown; i++) g[i] = (float)PetscRealPart(xa[i]);
  PetscCall(VecRestoreArray(x, &xa));
  for (PetscInt i = 0; i < nloc; i++) l[i] = -7.0f;
  PetscCall(DMGlobalToLocal(dm, x, INSERT_VALUES, xl));
  PetscCall(PatchworkFloatHaloToLocal(h, g, l));
  PetscCall(VecGetArrayRead(xl, (const PetscScalar **)&xla));
  for (PetscInt i = 0; i < nloc; i++) err[0] += l[i] != (float)PetscRealPart(xla[i]);
  PetscCall(VecRestoreArrayRead(xl, (const PetscScalar **)&xla));

  /* add to global: x = g and xl = l in double hold the same values; a = |x| + the sums of |xl|
     bounds the rounding of each float sum */
  PetscCall(VecGetArray(x, &xa));
  PetscCall(VecGetArray(a, &aa));
  for (PetscInt i = 0; i < nown; i++) {
    xa[i] = g[i];
    aa[i] = PetscAbsReal(g[i]);
  }
  PetscCall(VecRestoreArray(a, &aa));
  PetscCall(VecRestoreArray(x, &xa));
  PetscCall(VecGetArray(xl, &xla));
  PetscCall(VecGetArray(al, &ala));
  for (PetscInt i = 0; i < nloc; i++) {
    PetscReal r;

    PetscCall(PetscRandomGetValueReal(rnd, &r));
    l[i]   = (float)r;
    xla[i] = l[i];
    ala[i] = PetscAbsReal(l[i]);
  }
  PetscCall(VecRestoreArray(al, &ala));
  PetscCall(VecRestoreArray(xl, &xla));
  PetscCall(DMLocalToGlobal(dm, xl, ADD_VALUES, x));
  PetscCall(DMLocalToGlobal(dm, al, ADD_VALUES, a));
  PetscCall(PatchworkFloatHaloAddToGlobal(h, l, g));
  PetscCall(VecGetArrayRead(x, (const PetscScalar **)&xa));
  PetscCall(VecGetArrayRead(a, (const PetscScalar **)&aa));
  for (PetscInt i = 0; i < nown; i++) err[1] = ErrMax(err[1], PetscRealPart(aa[i]) > 0 ? PetscAbsReal(g[i] - PetscRealPart(xa[i])) / PetscRealPart(aa[i]) : g[i] == PetscRealPart(xa[i]) ? 0 : PETSC_INFINITY);
  PetscCall(VecRestoreArrayRead(a, (const PetscScalar **)&aa));
  PetscCall(VecRestoreArrayRead(x, (const PetscScalar **)&xa));
  gerr[0] = err[0];
  gerr[1] = err[1];
  PetscCall(PatchworkTestErrMaxAllreduce(PETSC_COMM_WORLD, 2, gerr));
  /* the entries that travel between ranks, so a run on several ranks shows it exchanged some */
  ghosts[0] = h->in.off[h->in.n];
  ghosts[1] = h->nself;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, ghosts, 2, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));

  PetscCall(PetscSNPrintf(what, sizeof(what), "%" PetscInt_FMT "D %" PetscInt_FMT "x%" PetscInt_FMT "x%" PetscInt_FMT " dof %" PetscInt_FMT " %s s=%" PetscInt_FMT " (%" PetscInt_FMT " entries copied on-rank, %" PetscInt_FMT " by messages) to local", dim, n[0], n[1], dim == 3 ? n[2] : 1, dof, st == DMDA_STENCIL_BOX ? "box" : "star", sw, ghosts[1], ghosts[0]));
  PetscCall(Report(what, gerr[0], 0));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%" PetscInt_FMT "D %" PetscInt_FMT "x%" PetscInt_FMT "x%" PetscInt_FMT " dof %" PetscInt_FMT " %s s=%" PetscInt_FMT " add to global", dim, n[0], n[1], dim == 3 ? n[2] : 1, dof, st == DMDA_STENCIL_BOX ? "box" : "star", sw));
  PetscCall(Report(what, gerr[1], 8 * FLT_EPSILON));

  PetscCall(PetscFree2(g, l));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&xl));
  PetscCall(VecDestroy(&a));
  PetscCall(VecDestroy(&al));
  PetscCall(PatchworkFloatHaloDestroy(&h));
  PetscCall(DMDestroy(&dm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Bad input fails with the error a caller can act on */
static PetscErrorCode TestErrors(void)
{
  DM                 dm;
  PatchworkFloatHalo h = NULL;
  PetscErrorCode     ierr;

  PetscFunctionBeginUser;
  PetscCall(DMShellCreate(PETSC_COMM_WORLD, &dm));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = PatchworkFloatHaloCreate(dm, PETSC_FALSE, &h);
  PetscCall(PetscPopErrorHandler());
  PetscCall(Report("a DMShell is refused", ierr == PETSC_ERR_ARG_WRONG && !h ? 0 : 1, 0));
  PetscCall(DMDestroy(&dm));
  PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, 8, 8, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, &dm));
  PetscCall(DMSetUp(dm));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = PatchworkFloatHaloCreate(dm, PETSC_TRUE, &h); /* this test is built without CUDA */
  PetscCall(PetscPopErrorHandler());
  PetscCall(Report("device arrays without CUDA are refused", ierr == PETSC_ERR_SUP && !h ? 0 : 1, 0));
  PetscCall(DMDestroy(&dm));
  PetscCall(PatchworkFloatHaloDestroy(&h)); /* NULL: nothing to do */
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  /* every direction has at least 12 nodes: room for width-3 stencils on up to 4 ranks per direction */
  const PetscInt  n2[][2] = {{12, 12}, {17, 13}, {31, 14}}, n3[][3] = {{12, 12, 12}, {13, 17, 12}};
  const DMDAStencilType st[] = {DMDA_STENCIL_BOX, DMDA_STENCIL_STAR};
  PetscRandom     rnd;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PatchworkInitializePackage());
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetInterval(rnd, -1.0, 1.0));
  PetscCall(PetscRandomSetSeed(rnd, 7));
  PetscCall(PetscRandomSeed(rnd));
  for (PetscInt s = 0; s < 2; s++)
    for (PetscInt w = 1; w <= 3; w++) {
      for (size_t i = 0; i < sizeof(n2) / sizeof(n2[0]); i++) PetscCall(TestOne(2, n2[i], 1, st[s], w, rnd));
      for (size_t i = 0; i < sizeof(n3) / sizeof(n3[0]); i++) PetscCall(TestOne(3, n3[i], 1, st[s], w, rnd));
    }
  /* several dof per node: the scatter's graph may be on blocks of nodes */
  PetscCall(TestOne(2, n2[1], 2, DMDA_STENCIL_BOX, 2, rnd));
  PetscCall(TestOne(3, n3[1], 3, DMDA_STENCIL_BOX, 1, rnd));
  PetscCall(TestErrors());
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "test_floathalo: %" PetscInt_FMT " cases, %" PetscInt_FMT " failed\n", cases, failures));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
