/* DMForest (p4est) meshes refined towards a sphere, as in Ljungkvist (2017): a brick of N^dim cells,
   then levels adaptations, each splitting the cells whose centre lies within one own cell width of
   |x| = r; PETSc's p4est forests are 2:1 balanced across faces, edges and corners (adjacency dimension
   0, the only one it supports), so faces and edges hang one level at most.
   For the tests and benchmarks; needs PETSc with p4est. */
#ifndef PATCHWORK_EXAMPLES_FOREST_H
#define PATCHWORK_EXAMPLES_FOREST_H

#include <petscdmforest.h>
#include <petscdmplex.h>
#include <petscsnes.h>

#if defined(PETSC_HAVE_P4EST)
/* One adaptation of *forest (replaced); nsplit: the cells marked, summed over ranks */
static inline PetscErrorCode ForestSplitTowardsSphere(DM *forest, PetscReal r, PetscInt *nsplit)
{
  DM       plex, adapted;
  DMLabel  adapt;
  PetscInt cStart, cEnd, dim;
  VecType  vtype;
  MatType  mtype;

  PetscFunctionBeginUser;
  PetscCall(DMGetDimension(*forest, &dim));
  PetscCall(DMConvert(*forest, DMPLEX, &plex)); /* the forest's cells are its mesh's */
  PetscCall(DMLabelCreate(PETSC_COMM_SELF, "adapt", &adapt));
  PetscCall(DMLabelSetDefaultValue(adapt, DM_ADAPT_KEEP));
  PetscCall(DMForestGetCellChart(*forest, &cStart, &cEnd));
  *nsplit = 0;
  for (PetscInt c = cStart; c < cEnd; c++) {
    PetscReal vol, x[3], rx = 0;

    PetscCall(DMPlexComputeCellGeometryFVM(plex, c, &vol, x, NULL));
    for (PetscInt d = 0; d < dim; d++) rx += x[d] * x[d];
    if (PetscAbsReal(PetscSqrtReal(rx) - r) < PetscPowReal(vol, 1.0 / dim)) {
      PetscCall(DMLabelSetValue(adapt, c, DM_ADAPT_REFINE));
      (*nsplit)++;
    }
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, nsplit, 1, MPIU_INT, MPI_SUM, PetscObjectComm((PetscObject)*forest)));
  PetscCall(DMDestroy(&plex));
  PetscCall(DMForestTemplate(*forest, PetscObjectComm((PetscObject)*forest), &adapted));
  PetscCall(DMForestSetAdaptivityLabel(adapted, adapt));
  PetscCall(DMGetVecType(*forest, &vtype)); /* PETSc's template does not carry the vector and matrix types */
  PetscCall(DMSetVecType(adapted, vtype));
  PetscCall(DMGetMatType(*forest, &mtype));
  PetscCall(DMSetMatType(adapted, mtype));
  PetscCall(DMSetUp(adapted));
  PetscCall(DMLabelDestroy(&adapt));
  PetscCall(DMDestroy(forest));
  *forest = adapted;
  PetscFunctionReturn(0);
}

/* The cube [-1,1]^dim onto the unit ball: each point moved radially so that the cube's surface lands on
   the sphere (|y| = |x|_inf); for DMForestSetBaseCoordinateMapping(): a ball of multilinear cells */
static inline PetscErrorCode ForestCubeToBall(DM base, PetscInt tree, PetscInt dim, const PetscReal x[], PetscReal y[], void *ctx)
{
  PetscReal r2 = 0, rinf = 0;

  (void)base, (void)tree, (void)ctx;
  for (PetscInt d = 0; d < dim; d++) {
    r2 += x[d] * x[d];
    rinf = PetscMax(rinf, PetscAbsReal(x[d]));
  }
  for (PetscInt d = 0; d < dim; d++) y[d] = r2 > 0 ? x[d] * rinf / PetscSqrtReal(r2) : 0;
  return PETSC_SUCCESS;
}

/* A DMP4EST (2D) or DMP8EST (3D) brick of N^dim cells on [lo, hi]^dim (the options database may
   override: -dm_forest_topology, -dm_p4est_brick_size, -dm_p4est_brick_bounds, -dm_vec_type, ...),
   its vertices moved by map (if not NULL: curved, multilinear cells), adapted levels times towards |x| = r */
static inline PetscErrorCode ForestCreateTowardsSphere(MPI_Comm comm, PetscInt dim, PetscInt N, PetscReal lo, PetscReal hi, PetscErrorCode (*map)(DM, PetscInt, PetscInt, const PetscReal[], PetscReal[], void *), PetscReal r, PetscInt levels, DM *forest)
{
  char      size[64], bounds[128];
  PetscBool setsize, setbounds;

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(size, sizeof(size), dim == 2 ? "%d,%d" : "%d,%d,%d", (int)N, (int)N, (int)N));
  PetscCall(PetscSNPrintf(bounds, sizeof(bounds), dim == 2 ? "%g,%g,%g,%g" : "%g,%g,%g,%g,%g,%g", (double)lo, (double)hi, (double)lo, (double)hi, (double)lo, (double)hi));
  PetscCall(DMCreate(comm, forest));
  PetscCall(DMSetType(*forest, dim == 2 ? DMP4EST : DMP8EST));
  PetscCall(DMForestSetTopology(*forest, "brick"));
  if (map) PetscCall(DMForestSetBaseCoordinateMapping(*forest, map, NULL));
  PetscCall(PetscOptionsHasName(NULL, NULL, "-dm_p4est_brick_size", &setsize));
  if (!setsize) PetscCall(PetscOptionsSetValue(NULL, "-dm_p4est_brick_size", size));
  PetscCall(PetscOptionsHasName(NULL, NULL, "-dm_p4est_brick_bounds", &setbounds));
  if (!setbounds) PetscCall(PetscOptionsSetValue(NULL, "-dm_p4est_brick_bounds", bounds));
  PetscCall(DMSetFromOptions(*forest));
  PetscCall(DMSetUp(*forest));
  if (!setsize) PetscCall(PetscOptionsClearValue(NULL, "-dm_p4est_brick_size")); /* the next mesh may have another N */
  if (!setbounds) PetscCall(PetscOptionsClearValue(NULL, "-dm_p4est_brick_bounds"));
  for (PetscInt l = 0; l < levels; l++) {
    PetscInt nsplit;

    PetscCall(ForestSplitTowardsSphere(forest, r, &nsplit));
    PetscCall(PetscInfo(*forest, "level %" PetscInt_FMT ": %" PetscInt_FMT " cells split towards |x| = %g\n", l + 1, nsplit, (double)r));
  }
  PetscFunctionReturn(0);
}

/* PETSc's FEM Jacobian of the forest's discretization (its DS), with the hanging-node constraints, as a
   new host AIJ matrix assembled on the forest's DMPlex: PETSc 3.26's DMPlexSNESComputeJacobianFEM() of a
   forest segfaults (a forest has no DMSNES), and its DMCreateMatrix() with -dm_mat_type aijcusparse gave
   a zero matrix on the H100 */
static inline PetscErrorCode ForestAssembleJacobianAIJ(DM forest, Mat *J)
{
  DM  plex;
  Vec X;

  PetscFunctionBeginUser;
  PetscCall(DMConvert(forest, DMPLEX, &plex));
  PetscCall(DMSetMatType(plex, MATAIJ));
  PetscCall(DMCreateMatrix(plex, J));
  PetscCall(DMCreateLocalVector(plex, &X));
  PetscCall(VecZeroEntries(X));
  PetscCall(DMPlexSNESComputeJacobianFEM(plex, X, *J, *J, NULL));
  PetscCall(VecDestroy(&X));
  PetscCall(DMDestroy(&plex));
  PetscFunctionReturn(0);
}
#endif

#endif
