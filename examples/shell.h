/* The curved domain and coefficient shared by examples/shell.c and bench/bench_plex.c: the cubed-sphere
   panel of the shell 1/2 < |x| < 1 and Ljungkvist's (2017) diffusion coefficient 1/(0.05 + 2|x|^2); and
   the same panel with the cells around a sphere split once (hanging nodes, SplitBand()). */
#ifndef PATCHWORK_EXAMPLES_SHELL_H
#define PATCHWORK_EXAMPLES_SHELL_H

#include <patchwork.h>

static inline PetscReal Radius(PetscInt dim, const PetscReal x[])
{
  PetscReal r2 = 0;
  for (PetscInt d = 0; d < dim; d++) r2 += x[d] * x[d];
  return PetscSqrtReal(r2);
}

static inline PetscReal Coefficient(PetscReal rho) { return 1.0 / (0.05 + 2 * rho * rho); }

static inline PetscErrorCode Diffusion(PetscInt dim, const PetscReal x[], PetscReal *c, void *ctx)
{
  (void)ctx;
  *c = Coefficient(Radius(dim, x));
  return 0;
}

/* The box [-1,1]^(dim-1) x [1/2,1] onto a cubed-sphere panel of the shell 1/2 < |x| < 1:
   (a, b, r) -> r (tan(pi a/4), tan(pi b/4), 1)/|.|, smooth and with a regular Jacobian everywhere */
static inline void BoxToShell(PetscInt dim, PetscInt Nf, PetscInt NfAux, const PetscInt uOff[], const PetscInt uOff_x[], const PetscScalar u[], const PetscScalar u_t[], const PetscScalar u_x[], const PetscInt aOff[], const PetscInt aOff_x[], const PetscScalar a[], const PetscScalar a_t[], const PetscScalar a_x[], PetscReal t, const PetscReal x[], PetscInt numConstants, const PetscScalar constants[], PetscScalar f0[])
{
  PetscReal dir[3], n2 = 0;

  (void)Nf, (void)NfAux, (void)uOff, (void)uOff_x, (void)u, (void)u_t, (void)u_x, (void)aOff, (void)aOff_x, (void)a, (void)a_t, (void)a_x, (void)t, (void)numConstants, (void)constants;
  for (PetscInt d = 0; d < dim - 1; d++) dir[d] = PetscTanReal(0.25 * PETSC_PI * x[d]);
  dir[dim - 1] = 1;
  for (PetscInt d = 0; d < dim; d++) n2 += dir[d] * dir[d];
  for (PetscInt d = 0; d < dim; d++) f0[d] = x[dim - 1] * dir[d] / PetscSqrtReal(n2);
}

/* Move every vertex x of dm to map(x), in its global and local coordinates alike (a tree has no
   coordinate field to remap, and PETSc 3.26 cannot rebuild its local coordinates from the global ones) */
static inline PetscErrorCode MapVertices(DM dm, void (*map)(PetscInt dim, const PetscReal x[], PetscReal y[], void *ctx), void *ctx)
{
  Vec      cv[2];
  PetscInt dim;

  PetscFunctionBeginUser;
  PetscCall(DMGetDimension(dm, &dim));
  PetscCall(DMGetCoordinates(dm, &cv[0]));
  PetscCall(DMGetCoordinatesLocal(dm, &cv[1]));
  for (int i = 0; i < 2; i++) {
    PetscScalar *a;
    PetscInt     n;

    PetscCall(VecGetLocalSize(cv[i], &n));
    PetscCall(VecGetArray(cv[i], &a));
    for (PetscInt v = 0; v < n / dim; v++) {
      PetscReal x[3], y[3];

      for (PetscInt d = 0; d < dim; d++) x[d] = PetscRealPart(a[v * dim + d]);
      map(dim, x, y, ctx);
      for (PetscInt d = 0; d < dim; d++) a[v * dim + d] = y[d];
    }
    PetscCall(VecRestoreArray(cv[i], &a));
  }
  PetscFunctionReturn(0);
}

static inline void BoxToShellVertex(PetscInt dim, const PetscReal x[], PetscReal y[], void *ctx)
{
  PetscScalar f[3];

  (void)ctx;
  BoxToShell(dim, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0.0, x, 0, NULL, f);
  for (PetscInt d = 0; d < dim; d++) y[d] = PetscRealPart(f[d]);
}

/* Put every hanging vertex of the serial tree dm back at the centre of its coarse edge or face (the mean of
   the parent's corners), where the multilinear coarse cell has it: the map moved it off that edge (face),
   which would open a gap between the coarse cell and its split neighbours */
static inline PetscErrorCode SnapHangingVertices(DM dm)
{
  Vec          cv[2];
  PetscSection cs;
  PetscInt     dim, vStart, vEnd, n[2];

  PetscFunctionBeginUser;
  PetscCall(DMGetDimension(dm, &dim));
  PetscCall(DMPlexGetDepthStratum(dm, 0, &vStart, &vEnd));
  PetscCall(DMGetCoordinateSection(dm, &cs));
  PetscCall(DMGetCoordinates(dm, &cv[0]));
  PetscCall(DMGetCoordinatesLocal(dm, &cv[1]));
  PetscCall(VecGetLocalSize(cv[0], &n[0]));
  PetscCall(VecGetLocalSize(cv[1], &n[1]));
  PetscCheck(n[0] == n[1], PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "Snap the vertices of the serial tree, before distributing it");
  for (int i = 0; i < 2; i++) {
    PetscScalar *a;

    PetscCall(VecGetArray(cv[i], &a));
    for (PetscInt v = vStart; v < vEnd; v++) {
      PetscInt  parent, *cl = NULL, ncl, nc = 0, off;
      PetscReal x[3] = {0, 0, 0};

      PetscCall(DMPlexGetTreeParent(dm, v, &parent, NULL));
      if (parent == v) continue;
      PetscCall(DMPlexGetTransitiveClosure(dm, parent, PETSC_TRUE, &ncl, &cl));
      for (PetscInt j = 0; j < ncl; j++) {
        if (cl[2 * j] < vStart || cl[2 * j] >= vEnd) continue;
        PetscCall(PetscSectionGetOffset(cs, cl[2 * j], &off));
        for (PetscInt d = 0; d < dim; d++) x[d] += PetscRealPart(a[off + d]);
        nc++;
      }
      PetscCall(DMPlexRestoreTransitiveClosure(dm, parent, PETSC_TRUE, &ncl, &cl));
      PetscCall(PetscSectionGetOffset(cs, v, &off));
      for (PetscInt d = 0; d < dim; d++) a[off + d] = x[d] / nc;
    }
    PetscCall(VecRestoreArray(cv[i], &a));
  }
  PetscFunctionReturn(0);
}

/* Split the cells of the serial box mesh *dm whose centre's last coordinate (the radius the shell map
   gives it) is within h of r, then, levels - 1 times more, the cells of the tree within half the last
   width (adaptive refinement towards the sphere |x| = r, one level more at every step, 2:1 balanced:
   the coarser cells the balance needs are split too, PatchworkDMPlexRefineBalance());
   map the tree's vertices onto the shell (the hanging ones onto their coarse edges and faces), and
   distribute it */
static inline PetscErrorCode SplitBand(DM *dm, PetscReal r, PetscReal h, PetscInt levels, PetscBool shell)
{
  DM       tree = NULL, dist;
  PetscInt dim, ncells0 = 0;

  PetscFunctionBeginUser;
  PetscCall(DMGetDimension(*dm, &dim));
  for (PetscInt l = 0; l < levels; l++, h /= 2) {
    DMLabel  band;
    PetscInt cStart, cEnd, nsplit = 0, ncells;

    PetscCall(DMGetCoordinatesLocalSetUp(*dm));
    PetscCall(DMPlexGetHeightStratum(*dm, 0, &cStart, &cEnd));
    PetscCall(DMLabelCreate(PETSC_COMM_SELF, "band", &band));
    for (PetscInt c = cStart; c < cEnd; c++) {
      PetscReal vol, centre[3];

      PetscCall(DMPlexComputeCellGeometryFVM(*dm, c, &vol, centre, NULL));
      if (PetscAbsReal(centre[dim - 1] - r) < h) {
        PetscCall(DMLabelSetValue(band, c, 1));
        nsplit++;
      }
    }
    ncells = cEnd - cStart;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &nsplit, 1, MPIU_INT, MPI_SUM, PetscObjectComm((PetscObject)*dm)));
    if (l > 0) {
      PetscInt added;

      PetscCall(PatchworkDMPlexRefineBalance(*dm, band, 1, &added));
      nsplit += added;
    }
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ncells, 1, MPIU_INT, MPI_SUM, PetscObjectComm((PetscObject)*dm)));
    if (l == 0) ncells0 = ncells;
    PetscCall(PatchworkDMPlexRefineCells(*dm, band, 1, &tree));
    PetscCall(DMLabelDestroy(&band));
    PetscCall(DMDestroy(dm));
    *dm = tree;
    PetscCall(PetscPrintf(PetscObjectComm((PetscObject)tree), "level %" PetscInt_FMT ": split %" PetscInt_FMT " of %" PetscInt_FMT " cells, those whose centre is within %g of radius %g\n", l + 1, nsplit, ncells, (double)h, (double)r));
  }
  if (shell) { /* on the serial tree, the vertices onto the shell, the hanging ones back onto their coarse edges (faces) */
    PetscCall(MapVertices(tree, BoxToShellVertex, NULL));
    PetscCall(SnapHangingVertices(tree));
  }
  PetscCall(DMPlexDistribute(tree, 0, NULL, &dist));
  if (dist) {
    PetscCall(DMDestroy(&tree));
    tree = dist;
  }
  PetscCall(PetscPrintf(PetscObjectComm((PetscObject)tree), "%" PetscInt_FMT " level(s) of non-conforming refinement of %" PetscInt_FMT " cells (hanging nodes; multilinear cells)\n", levels, ncells0));
  *dm = tree;
  PetscFunctionReturn(0);
}

#endif
