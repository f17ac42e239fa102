static const char help[] = "The halo exchange of a DMDA (PatchworkHalo, float and double, all ghosted entries or a mask) against\n"
                           "DMGlobalToLocal(INSERT_VALUES) and DMLocalToGlobal(ADD_VALUES) of the same values in double, 2D and 3D, host arrays.\n";

#include <patchwork.h>
#include <petscdmshell.h>
#include <float.h>
#include "compare.h" /* ErrMax(), PatchworkTestErrMaxAllreduce() */
/* The exchange is PETSC_INTERN, hidden in the shared library: compile it, and its CPU kernel, into the test */
#include "../../src/sys/halo.c"
#include "../../src/sys/device.c"
#include "../../src/core/vecops_ref.c"

static PetscInt failures = 0, cases = 0;

static PetscErrorCode Report(const char what[], PetscReal err, PetscReal tol)
{
  PetscFunctionBeginUser;
  cases++;
  if (!(err <= tol)) failures++;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %s: err %.2e tol %.0e\n", err <= tol ? "ok  " : "FAIL", what, (double)err, (double)tol));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One exchange of entries of type T (float or double) against PETSc's own in double: to local, then
   add to global, on every ghosted entry or on those a random mask flags (needed); entries outside
   the mask must keep their values, and ZeroLocal must zero exactly the needed ones. The halo is made
   from hdm ghosted width deep (PETSC_DECIDE: hdm's own width), to match dm's local vectors */
#define DEFINE_TEST_ONE(T, NAME, SINGLE, EPS) \
  static PetscErrorCode NAME(DM dm, DM hdm, PetscInt width, PetscBool masked, PetscRandom rnd, const char desc[]) \
  { \
    PatchworkHalo h; \
    Vec           x, xl, a, al; \
    PetscInt      nown, nloc, nh, ghosts[2]; \
    PetscScalar  *xa, *xla, *aa, *ala; \
    T            *g, *l; \
    PetscBool    *needed = NULL; \
    PetscReal     err[3] = {0, 0, 0}, gerr[3]; \
    char          what[200]; \
\
    PetscFunctionBeginUser; \
    PetscCall(DMCreateGlobalVector(dm, &x)); \
    PetscCall(DMCreateLocalVector(dm, &xl)); \
    PetscCall(VecDuplicate(x, &a)); \
    PetscCall(VecDuplicate(xl, &al)); \
    PetscCall(VecGetLocalSize(x, &nown)); \
    PetscCall(VecGetLocalSize(xl, &nloc)); \
    if (masked) { \
      PetscCall(PetscMalloc1(nloc, &needed)); \
      for (PetscInt i = 0; i < nloc; i++) { \
        PetscReal r; \
        PetscCall(PetscRandomGetValueReal(rnd, &r)); \
        needed[i] = r > 0.2 ? PETSC_TRUE : PETSC_FALSE; \
      } \
    } \
    PetscCall(PatchworkHaloCreate(hdm, width, SINGLE, PETSC_FALSE, needed, &h)); \
    PetscCall(PatchworkHaloGetLocalSize(h, &nh)); \
    PetscCheck(nh == nloc, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "local size %" PetscInt_FMT ", the DMDA's %" PetscInt_FMT, nh, nloc); \
    PetscCall(PetscMalloc2(nown, &g, nloc, &l)); \
\
    /* to local: copies of a double vector's entries, so equal to the double result's (rounded to T) */ \
    PetscCall(VecSetRandom(x, rnd)); \
    PetscCall(VecSet(xl, -7.0)); /* entries no rank sets (a star stencil's corners) stay as they were in both */ \
    PetscCall(VecGetArray(x, &xa)); \
    for (PetscInt i = 0; i < nown; i++) g[i] = (T)PetscRealPart(xa[i]); \
    PetscCall(VecRestoreArray(x, &xa)); \
    for (PetscInt i = 0; i < nloc; i++) l[i] = (T)-7.0; \
    PetscCall(DMGlobalToLocal(dm, x, INSERT_VALUES, xl)); \
    PetscCall(PatchworkHaloToLocalBegin(h, g, l)); \
    PetscCall(PatchworkHaloToLocalEnd(h, l)); \
    PetscCall(VecGetArrayRead(xl, (const PetscScalar **)&xla)); \
    for (PetscInt i = 0; i < nloc; i++) err[0] += l[i] != (needed && !needed[i] ? (T)-7.0 : (T)PetscRealPart(xla[i])); \
    PetscCall(VecRestoreArrayRead(xl, (const PetscScalar **)&xla)); \
\
    /* add to global: x = g and xl = l (zero outside the mask) in double hold the same values; a = |x| \
       + the sums of |xl| bounds the rounding of each sum */ \
    PetscCall(VecGetArray(x, &xa)); \
    PetscCall(VecGetArray(a, &aa)); \
    for (PetscInt i = 0; i < nown; i++) { \
      xa[i] = g[i]; \
      aa[i] = PetscAbsReal(g[i]); \
    } \
    PetscCall(VecRestoreArray(a, &aa)); \
    PetscCall(VecRestoreArray(x, &xa)); \
    PetscCall(VecGetArray(xl, &xla)); \
    PetscCall(VecGetArray(al, &ala)); \
    for (PetscInt i = 0; i < nloc; i++) { \
      PetscReal r; \
      PetscCall(PetscRandomGetValueReal(rnd, &r)); \
      l[i]   = (T)r; \
      xla[i] = needed && !needed[i] ? 0 : l[i]; \
      ala[i] = PetscAbsReal(xla[i]); \
    } \
    PetscCall(VecRestoreArray(al, &ala)); \
    PetscCall(VecRestoreArray(xl, &xla)); \
    PetscCall(DMLocalToGlobal(dm, xl, ADD_VALUES, x)); \
    PetscCall(DMLocalToGlobal(dm, al, ADD_VALUES, a)); \
    PetscCall(PatchworkHaloAddToGlobalBegin(h, l, g)); \
    PetscCall(PatchworkHaloAddToGlobalEnd(h, g)); \
    PetscCall(VecGetArrayRead(x, (const PetscScalar **)&xa)); \
    PetscCall(VecGetArrayRead(a, (const PetscScalar **)&aa)); \
    for (PetscInt i = 0; i < nown; i++) { \
      const PetscReal e = PetscRealPart(aa[i]) > 0 ? PetscAbsReal(g[i] - PetscRealPart(xa[i])) / PetscRealPart(aa[i]) : g[i] == PetscRealPart(xa[i]) ? 0 : PETSC_INFINITY; \
      err[1] = ErrMax(err[1], e); \
    } \
    PetscCall(VecRestoreArrayRead(a, (const PetscScalar **)&aa)); \
    PetscCall(VecRestoreArrayRead(x, (const PetscScalar **)&xa)); \
\
    /* zero the needed entries: exactly those become 0 */ \
    for (PetscInt i = 0; i < nloc; i++) l[i] = (T)(1 + i % 5); \
    PetscCall(PatchworkHaloZeroLocal(h, l)); \
    PetscCall(VecSet(al, 0.0)); \
    { /* the entries the DMDA's scatter reaches at all: a star stencil's corners are never needed */ \
      Vec one; \
      PetscCall(VecDuplicate(x, &one)); \
      PetscCall(VecSet(one, 1.0)); \
      PetscCall(DMGlobalToLocal(dm, one, INSERT_VALUES, al)); \
      PetscCall(VecDestroy(&one)); \
    } \
    PetscCall(VecGetArrayRead(al, (const PetscScalar **)&ala)); \
    for (PetscInt i = 0; i < nloc; i++) { \
      const PetscBool zeroed = (PetscBool)(PetscRealPart(ala[i]) == 1.0 && (!needed || needed[i])); \
      err[2] += l[i] != (zeroed ? (T)0 : (T)(1 + i % 5)); \
    } \
    PetscCall(VecRestoreArrayRead(al, (const PetscScalar **)&ala)); \
    for (int e = 0; e < 3; e++) gerr[e] = err[e]; \
    PetscCall(PatchworkTestErrMaxAllreduce(PETSC_COMM_WORLD, 3, gerr)); \
    /* the entries that travel between ranks, so a run on several ranks shows it exchanged some */ \
    ghosts[0] = h->in.off[h->in.n]; \
    ghosts[1] = h->nself; \
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, ghosts, 2, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD)); \
\
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s %s%s (%" PetscInt_FMT " entries copied on-rank, %" PetscInt_FMT " by messages) to local", #T, desc, masked ? " masked" : "", ghosts[1], ghosts[0])); \
    PetscCall(Report(what, gerr[0], 0)); \
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s %s%s add to global", #T, desc, masked ? " masked" : "")); \
    PetscCall(Report(what, gerr[1], 8 * (EPS))); \
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s %s%s zero local", #T, desc, masked ? " masked" : "")); \
    PetscCall(Report(what, gerr[2], 0)); \
\
    PetscCall(PetscFree2(g, l)); \
    PetscCall(PetscFree(needed)); \
    PetscCall(VecDestroy(&x)); \
    PetscCall(VecDestroy(&xl)); \
    PetscCall(VecDestroy(&a)); \
    PetscCall(VecDestroy(&al)); \
    PetscCall(PatchworkHaloDestroy(&h)); \
    PetscFunctionReturn(PETSC_SUCCESS); \
  }

DEFINE_TEST_ONE(float, TestFloat, PETSC_TRUE, FLT_EPSILON)
DEFINE_TEST_ONE(double, TestDouble, PETSC_FALSE, DBL_EPSILON)

static PetscErrorCode TestOne(PetscInt dim, const PetscInt n[], PetscInt dof, DMDAStencilType st, PetscInt sw, PetscRandom rnd)
{
  const DMBoundaryType b = DM_BOUNDARY_NONE;
  DM                   dm;
  char                 desc[128];

  PetscFunctionBeginUser;
  if (dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, b, b, st, n[0], n[1], PETSC_DECIDE, PETSC_DECIDE, dof, sw, NULL, NULL, &dm));
  else PetscCall(DMDACreate3d(PETSC_COMM_WORLD, b, b, b, st, n[0], n[1], n[2], PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, dof, sw, NULL, NULL, NULL, &dm));
  PetscCall(DMSetUp(dm));
  PetscCall(PetscSNPrintf(desc, sizeof(desc), "%" PetscInt_FMT "D %" PetscInt_FMT "x%" PetscInt_FMT "x%" PetscInt_FMT " dof %" PetscInt_FMT " %s s=%" PetscInt_FMT, dim, n[0], n[1], dim == 3 ? n[2] : 1, dof, st == DMDA_STENCIL_BOX ? "box" : "star", sw));
  for (PetscInt m = 0; m < 2; m++) {
    PetscCall(TestFloat(dm, dm, PETSC_DECIDE, (PetscBool)m, rnd, desc));
    PetscCall(TestDouble(dm, dm, PETSC_DECIDE, (PetscBool)m, rnd, desc));
  }
  if (st == DMDA_STENCIL_BOX && sw > 1) { /* ghosted sw deep from a DMDA of width 1 on the same partition */
    DM              narrow;
    const PetscInt *l[3];
    PetscInt        m[3];

    PetscCall(DMDAGetInfo(dm, NULL, NULL, NULL, NULL, &m[0], &m[1], &m[2], NULL, NULL, NULL, NULL, NULL, NULL));
    PetscCall(DMDAGetOwnershipRanges(dm, &l[0], &l[1], &l[2]));
    if (dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, b, b, st, n[0], n[1], m[0], m[1], dof, 1, l[0], l[1], &narrow));
    else PetscCall(DMDACreate3d(PETSC_COMM_WORLD, b, b, b, st, n[0], n[1], n[2], m[0], m[1], m[2], dof, 1, l[0], l[1], l[2], &narrow));
    PetscCall(DMSetUp(narrow));
    PetscCall(PetscSNPrintf(desc, sizeof(desc), "%" PetscInt_FMT "D %" PetscInt_FMT "x%" PetscInt_FMT "x%" PetscInt_FMT " dof %" PetscInt_FMT " box s=1, ghosted %" PetscInt_FMT " deep", dim, n[0], n[1], dim == 3 ? n[2] : 1, dof, sw));
    for (PetscInt mask = 0; mask < 2; mask++) {
      PetscCall(TestFloat(dm, narrow, sw, (PetscBool)mask, rnd, desc));
      PetscCall(TestDouble(dm, narrow, sw, (PetscBool)mask, rnd, desc));
    }
    PetscCall(DMDestroy(&narrow));
  }
  PetscCall(DMDestroy(&dm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Bad input fails with the error a caller can act on */
static PetscErrorCode TestErrors(void)
{
  DM                 dm;
  PatchworkHalo  h = NULL;
  PetscErrorCode     ierr;

  PetscFunctionBeginUser;
  PetscCall(DMShellCreate(PETSC_COMM_WORLD, &dm));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = PatchworkHaloCreate(dm, PETSC_DECIDE, PETSC_TRUE, PETSC_FALSE, NULL, &h);
  PetscCall(PetscPopErrorHandler());
  PetscCall(Report("a DMShell is refused", ierr == PETSC_ERR_ARG_WRONG && !h ? 0 : 1, 0));
  PetscCall(DMDestroy(&dm));
  PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, 8, 8, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, &dm));
  PetscCall(DMSetUp(dm));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = PatchworkHaloCreate(dm, PETSC_DECIDE, PETSC_TRUE, PETSC_TRUE, NULL, &h); /* this test is built without CUDA */
  PetscCall(PetscPopErrorHandler());
  PetscCall(Report("device arrays without CUDA are refused", ierr == PETSC_ERR_SUP && !h ? 0 : 1, 0));
  {
    PetscMPIInt size;

    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    if (size > 1) { /* deeper than a rank's box: the ghosts would belong to ranks beyond the neighbours */
      PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
      ierr = PatchworkHaloCreate(dm, 8, PETSC_TRUE, PETSC_FALSE, NULL, &h);
      PetscCall(PetscPopErrorHandler());
      PetscCall(Report("a depth beyond a rank's box is refused", ierr == PETSC_ERR_ARG_OUTOFRANGE && !h ? 0 : 1, 0));
    }
  }
  PetscCall(DMDestroy(&dm));
  PetscCall(PatchworkHaloDestroy(&h)); /* NULL: nothing to do */
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
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "test_halo: %" PetscInt_FMT " cases, %" PetscInt_FMT " failed\n", cases, failures));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
