/* The test meshes of Fu, Lewis, Kirby and Whitaker (2014), section 6, built in code so that they are the
   same on every PETSc version (examples/tets.c, tests/mat/test_p1.c and the benchmarks share them). The
   coarse mesh is made on rank 0 (DMPlexCreateFromCellListPetsc()) and distributed (DMPlexDistribute()),
   except the regular box on several ranks: each rank makes its slab of cubes along z
   (DMPlexCreateFromCellListParallelPetsc()). It is then refined in parallel (DMRefine(): every triangle
   into 4, every tetrahedron into 8).

     regular    the box [0,L]^3 of n^3 cubes, each cut into six tetrahedra around its main diagonal (the
                Kuhn/Freudenthal split, conforming), refined r times. The paper's Regular mesh is
                L = 4, n = 8, r = 3: 274,625 vertices, 1,572,864 tetrahedra.
     irregular  the box of n^3 cubes, each cut into six tetrahedra by the vertex order of a random
                permutation (each cube "pulled" from its lowest vertex over its three far faces, each face
                cut through its lowest vertex: conforming for any order), so the connectivity is
                irregular (3 to 26 neighbours per vertex; the Kuhn mesh has 14 at every interior
                vertex; the paper's Irregular mesh has 3 to 25); the vertices then move
                by up to perturb*h in each coordinate (boundary vertices within their faces), halved for
                any vertex of a tetrahedron whose volume fell below a quarter of its original one.
                The vertices remain a (displaced) lattice: this is not a Delaunay or advancing-front mesh
                of varying size, which would need TetGen (the PETSc builds here have no mesh generator).
                Refinement refines the irregular coarse mesh regularly: for irregularity at every scale
                use a large n and r = 0.
     blobs      the regular or irregular mesh (-blobs_base) with sigma = sigma_ratio in the cells whose
                centroid lies in one of five spheres of radius 0.21 L (19.4% of the volume), 1 elsewhere
                (the paper's Blobs mesh has two materials, the blobs about 20% of the volume).
     annulus    2D: the unit square with a circular hole of radius 0.15 at its centre (the domain of
                Geveler et al.: a rectangle with a circle as the inner boundary), triangulated in four
                blocks between the circle and the square's sides (4n cells around, n cells out, each
                quadrilateral cut into two triangles, diagonals alternating), refined r times (the hole
                stays the polygon of the coarse mesh); sigma = sigma_ratio in the annulus
                0.25 <= |x - c| <= 0.35 (20% of the area), 1 elsewhere. */
#ifndef PATCHWORK_EXAMPLES_TETS_H
#define PATCHWORK_EXAMPLES_TETS_H

#include <patchwork.h>

typedef enum {
  TETS_REGULAR,
  TETS_IRREGULAR,
  TETS_BLOBS,
  TETS_ANNULUS
} TetsMeshType;
static const char *const TetsMeshTypes[] = {"regular", "irregular", "blobs", "annulus", "TetsMeshType", "TETS_", NULL};

typedef struct {
  TetsMeshType type;
  TetsMeshType blobs_base;  /* blobs: the regular or the irregular mesh */
  PetscInt     cells;       /* n: cubes per direction (3D), cells out from the hole (annulus) */
  PetscInt     refine;      /* DMRefine() steps */
  PetscBool    hierarchy;   /* keep the coarse meshes of the refinements (DMSetCoarseDM()) */
  PetscBool    interpolate; /* create edges and faces (DMRefine() needs them; P1 assembly does not) */
  PetscInt     seed;        /* irregular: random order and displacements */
  PetscReal    length;      /* L: side of the box (3D) */
  PetscReal    perturb;     /* irregular: largest displacement per coordinate, in units of h = L/n */
  PetscReal    sigma_ratio; /* blobs, annulus: sigma in the inclusion (1 outside) */
} TetsOptions;

static inline void TetsOptionsDefault(TetsOptions *o)
{
  o->type        = TETS_REGULAR;
  o->blobs_base  = TETS_IRREGULAR;
  o->cells       = 8;
  o->refine      = 0;
  o->hierarchy   = PETSC_FALSE;
  o->interpolate = PETSC_TRUE;
  o->seed        = 1;
  o->length      = 4;
  o->perturb     = 0.3;
  o->sigma_ratio = 10;
}

static inline PetscErrorCode TetsOptionsSetFromOptions(MPI_Comm comm, TetsOptions *o)
{
  PetscFunctionBeginUser;
  PetscOptionsBegin(comm, NULL, "Test meshes of Fu et al. 2014 (examples/tets.h)", NULL);
  PetscCall(PetscOptionsEnum("-mesh", "Mesh", NULL, TetsMeshTypes, (PetscEnum)o->type, (PetscEnum *)&o->type, NULL));
  PetscCall(PetscOptionsEnum("-blobs_base", "Mesh under the blobs: regular or irregular", NULL, TetsMeshTypes, (PetscEnum)o->blobs_base, (PetscEnum *)&o->blobs_base, NULL));
  PetscCall(PetscOptionsInt("-cells", "Cubes per direction (3D); cells from the hole to the boundary (annulus)", NULL, o->cells, &o->cells, NULL));
  PetscCall(PetscOptionsInt("-refine", "Regular refinements of the coarse mesh (DMRefine)", NULL, o->refine, &o->refine, NULL));
  PetscCall(PetscOptionsBool("-refine_hierarchy", "Keep the coarse meshes of -refine as the fine mesh's hierarchy (DMGetCoarseDM), for -pc_patchamg_hierarchy geometric", NULL, o->hierarchy, &o->hierarchy, NULL));
  PetscCall(PetscOptionsBool("-interpolate", "Create the mesh's edges and faces (needed by -refine); without them a large mesh is built in a fraction of the time and memory", NULL, o->interpolate, &o->interpolate, NULL));
  PetscCall(PetscOptionsInt("-seed", "Seed of the irregular mesh", NULL, o->seed, &o->seed, NULL));
  PetscCall(PetscOptionsReal("-length", "Side of the box (3D)", NULL, o->length, &o->length, NULL));
  PetscCall(PetscOptionsReal("-perturb", "Irregular mesh: vertex displacement per coordinate, in units of the cube size", NULL, o->perturb, &o->perturb, NULL));
  PetscCall(PetscOptionsReal("-sigma_ratio", "sigma in the blobs / the annulus (1 elsewhere)", NULL, o->sigma_ratio, &o->sigma_ratio, NULL));
  PetscOptionsEnd();
  PetscCheck(o->cells >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "-cells must be >= 1");
  PetscCheck(o->refine >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-refine must be >= 0");
  PetscCheck(o->interpolate || o->refine == 0, comm, PETSC_ERR_ARG_INCOMP, "-refine needs the interpolated mesh: give -interpolate 0 with -refine 0 (a larger -cells instead)");
  PetscCheck(o->blobs_base == TETS_REGULAR || o->blobs_base == TETS_IRREGULAR, comm, PETSC_ERR_ARG_WRONG, "-blobs_base is regular or irregular");
  PetscCheck(o->perturb >= 0 && o->perturb < 0.5, comm, PETSC_ERR_ARG_OUTOFRANGE, "-perturb must be in [0, 0.5)");
  PetscCheck(o->sigma_ratio > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-sigma_ratio must be positive");
  PetscFunctionReturn(0);
}

/* xorshift64*: the same numbers on every platform; uniform in [0,1) */
static inline PetscReal TetsRandom(unsigned long long *s)
{
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return (PetscReal)((*s * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}

static inline PetscReal TetsSignedVolume(PetscInt dim, const PetscReal *x, const PetscInt *v)
{
  PetscReal e[3][3];

  for (PetscInt k = 0; k < dim; k++)
    for (PetscInt d = 0; d < dim; d++) e[k][d] = x[v[k + 1] * dim + d] - x[v[0] * dim + d];
  if (dim == 2) return 0.5 * (e[0][0] * e[1][1] - e[0][1] * e[1][0]);
  return (e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) - e[0][1] * (e[1][0] * e[2][2] - e[1][2] * e[2][0]) + e[0][2] * (e[1][0] * e[2][1] - e[1][1] * e[2][0])) / 6.0;
}

/* Orient every cell as PETSc expects, so that its FEM sees positive Jacobian determinants: triangles
   counterclockwise, tetrahedra with (x1-x0, x2-x0, x3-x0) left-handed (PETSc's reference tetrahedron is
   (-1,-1,-1), (-1,1,-1), (1,-1,-1), (-1,-1,1)). Swaps the last two vertices where needed. */
static inline void TetsOrient(PetscInt dim, PetscInt ncell, PetscInt *cells, const PetscReal *x)
{
  const PetscInt  n    = dim + 1;
  const PetscReal sign = dim == 3 ? -1 : 1;

  for (PetscInt c = 0; c < ncell; c++)
    if (sign * TetsSignedVolume(dim, x, &cells[c * n]) < 0) {
      const PetscInt t = cells[c * n + n - 1];
      cells[c * n + n - 1] = cells[c * n + n - 2];
      cells[c * n + n - 2] = t;
    }
}

/* The cubes cz0 <= z < cz1 of the box mesh (n+1)^3 vertices, 6 n^3 tetrahedra: 6 n^2 (cz1 - cz0)
   tetrahedra on the vertex planes cz0..cz1, numbered from plane cz0. irregular (the whole box only):
   random vertex order for the splits, displaced vertices. */
static inline PetscErrorCode TetsBoxCells(const TetsOptions *o, PetscBool irregular, PetscInt cz0, PetscInt cz1, PetscInt *nvert, PetscInt *ncell, PetscInt **cells, PetscReal **coords)
{
  const PetscInt     n = o->cells, n1 = n + 1, nv = n1 * n1 * (cz1 - cz0 + 1), nc = 6 * n * n * (cz1 - cz0);
  const PetscReal    h = o->length / n;
  /* corner t (0..3) of a face, as bits of the two other axes */
  const int          eb[4] = {0, 1, 1, 0}, fb[4] = {0, 0, 1, 1};
  unsigned long long s     = 0x9E3779B97F4A7C15ULL ^ (unsigned long long)o->seed * 0xD1B54A32D192ED03ULL;
  PetscInt          *order, *c;
  PetscReal         *x;

  PetscFunctionBeginUser;
  PetscCheck(n1 * n1 * n1 < PETSC_MAX_INT / 3 && 6 * n * n * n < PETSC_MAX_INT / 4, PETSC_COMM_SELF, PETSC_ERR_SUP, "%" PetscInt_FMT " cubes per direction is too many for 32-bit indices", n);
  PetscCheck(!irregular || (cz0 == 0 && cz1 == n), PETSC_COMM_SELF, PETSC_ERR_PLIB, "the irregular box is made whole");
  PetscCall(PetscMalloc1(nv, &order));
  PetscCall(PetscMalloc1(3 * nv, &x));
  PetscCall(PetscMalloc1(4 * nc, &c));
  for (PetscInt v = 0; v < nv; v++) order[v] = v;
  if (irregular) /* Fisher-Yates: a random rank of every vertex */
    for (PetscInt v = nv - 1; v > 0; v--) {
      const PetscInt j = PetscMin(v, (PetscInt)(TetsRandom(&s) * (v + 1))), t = order[v];
      order[v] = order[j];
      order[j] = t;
    }
  for (PetscInt v = 0; v < nv; v++) {
    x[3 * v + 0] = h * (v % n1);
    x[3 * v + 1] = h * ((v / n1) % n1);
    x[3 * v + 2] = h * (cz0 + v / (n1 * n1));
  }
  for (PetscInt cz = 0, t = 0; cz < cz1 - cz0; cz++)
    for (PetscInt cy = 0; cy < n; cy++)
      for (PetscInt cx = 0; cx < n; cx++) {
        PetscInt corner[8], a0 = 0;

        for (int a = 0; a < 8; a++) corner[a] = ((cz + (a >> 2)) * n1 + cy + ((a >> 1) & 1)) * n1 + cx + (a & 1);
        for (int a = 1; a < 8; a++)
          if (order[corner[a]] < order[corner[a0]]) a0 = a;
        /* the lowest corner pulled over the three faces without it; each face cut through its lowest corner */
        for (int d = 0; d < 3; d++) {
          const int e = (d + 1) % 3, f = (d + 2) % 3, side = 1 - ((a0 >> d) & 1);
          PetscInt  q[4], i = 0;

          for (int k = 0; k < 4; k++) q[k] = corner[(side << d) | (eb[k] << e) | (fb[k] << f)];
          for (int k = 1; k < 4; k++)
            if (order[q[k]] < order[q[i]]) i = k;
          for (int tri = 0; tri < 2; tri++, t++) {
            c[4 * t + 0] = corner[a0];
            c[4 * t + 1] = q[i];
            c[4 * t + 2] = q[(i + 1 + tri) % 4];
            c[4 * t + 3] = q[(i + 2 + tri) % 4];
          }
        }
      }
  PetscCall(PetscFree(order));
  TetsOrient(3, nc, c, x);

  if (irregular && o->perturb > 0) {
    PetscReal *dx, *x0;
    PetscBool *shrink;
    PetscInt   nbad = 1;

    PetscCall(PetscMalloc3(3 * nv, &dx, 3 * nv, &x0, nv, &shrink));
    PetscCall(PetscArraycpy(x0, x, 3 * nv));
    for (PetscInt v = 0; v < nv; v++) {
      const PetscInt g[3] = {v % n1, (v / n1) % n1, v / (n1 * n1)};
      for (int d = 0; d < 3; d++) {
        const PetscReal r = (2 * TetsRandom(&s) - 1) * o->perturb * h;
        dx[3 * v + d]     = g[d] == 0 || g[d] == n ? 0 : r; /* boundary vertices stay in their faces */
      }
    }
    for (int it = 0; it < 64 && nbad; it++) {
      for (PetscInt i = 0; i < 3 * nv; i++) x[i] = x0[i] + dx[i];
      PetscCall(PetscArrayzero(shrink, nv));
      nbad = 0;
      for (PetscInt t = 0; t < nc; t++)
        if (-TetsSignedVolume(3, x, &c[4 * t]) < 0.25 * h * h * h / 6) { /* PETSc's orientation: negative */
          nbad++;
          for (int k = 0; k < 4; k++) shrink[c[4 * t + k]] = PETSC_TRUE;
        }
      for (PetscInt v = 0; v < nv; v++)
        if (shrink[v])
          for (int d = 0; d < 3; d++) dx[3 * v + d] *= 0.5;
    }
    if (nbad) PetscCall(PetscArraycpy(x, x0, 3 * nv)); /* cannot happen: 2^-64 of the displacement is none */
    PetscCall(PetscFree3(dx, x0, shrink));
  }
  *nvert  = nv;
  *ncell  = nc;
  *cells  = c;
  *coords = x;
  PetscFunctionReturn(0);
}

/* The square with a hole on rank 0: 4n x n quadrilaterals between the circle and the square, 2 triangles each */
static inline PetscErrorCode TetsAnnulusCells(const TetsOptions *o, PetscInt *nvert, PetscInt *ncell, PetscInt **cells, PetscReal **coords)
{
  const PetscInt  n = o->cells, m = 4 * n, nv = m * (n + 1), nc = 2 * m * n;
  const PetscReal R = 0.15;
  PetscInt       *c;
  PetscReal      *x;

  PetscFunctionBeginUser;
  PetscCheck(nv < PETSC_MAX_INT / 2 && nc < PETSC_MAX_INT / 3, PETSC_COMM_SELF, PETSC_ERR_SUP, "-cells %" PetscInt_FMT " is too many for 32-bit indices", n);
  PetscCall(PetscMalloc1(2 * nv, &x));
  PetscCall(PetscMalloc1(3 * nc, &c));
  for (PetscInt j = 0; j <= n; j++)
    for (PetscInt i = 0; i < m; i++) {
      const PetscReal th = -0.75 * PETSC_PI + 2 * PETSC_PI * i / m, t = (PetscReal)(i % n) / n, a = (PetscReal)j / n;
      PetscReal       out[2];

      switch (i / n) {
      case 0: out[0] = t, out[1] = 0; break;
      case 1: out[0] = 1, out[1] = t; break;
      case 2: out[0] = 1 - t, out[1] = 1; break;
      default: out[0] = 0, out[1] = 1 - t; break;
      }
      x[2 * (j * m + i) + 0] = (1 - a) * (0.5 + R * PetscCosReal(th)) + a * out[0];
      x[2 * (j * m + i) + 1] = (1 - a) * (0.5 + R * PetscSinReal(th)) + a * out[1];
    }
  for (PetscInt j = 0, t = 0; j < n; j++)
    for (PetscInt i = 0; i < m; i++, t += 2) {
      const PetscInt q[4] = {j * m + i, j * m + (i + 1) % m, (j + 1) * m + (i + 1) % m, (j + 1) * m + i};
      const PetscInt k    = (i + j) % 2; /* the diagonal from q[k] to q[k+2] */

      c[3 * t + 0] = q[k];
      c[3 * t + 1] = q[k + 1];
      c[3 * t + 2] = q[(k + 2) % 4];
      c[3 * t + 3] = q[k];
      c[3 * t + 4] = q[(k + 2) % 4];
      c[3 * t + 5] = q[(k + 3) % 4];
    }
  TetsOrient(2, nc, c, x);
  *nvert  = nv;
  *ncell  = nc;
  *cells  = c;
  *coords = x;
  PetscFunctionReturn(0);
}

/*
  TetsCreateMesh - the mesh o describes, distributed over comm and refined o->refine times (with
  o->hierarchy, every refined mesh keeps its coarse one: DMGetCoarseDM() walks down the hierarchy)
*/
static inline PetscErrorCode TetsCreateMesh(MPI_Comm comm, const TetsOptions *o, DM *dm)
{
  PetscMPIInt  rank, size;
  PetscInt     dim = o->type == TETS_ANNULUS ? 2 : 3, nv = 0, nc = 0, *cells = NULL;
  PetscReal   *x = NULL;
  PetscBool    irregular = (PetscBool)(o->type == TETS_IRREGULAR || (o->type == TETS_BLOBS && o->blobs_base == TETS_IRREGULAR));
  DM           dist = NULL;
  PetscPartitioner part;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  if (dim == 3 && !irregular && size > 1) {
    /* the regular box in slabs of cubes along z, each rank its own: no mesh on one rank, no partitioner
       (rank 0's whole mesh and its distribution take minutes at 10^8 tetrahedra) */
    const PetscInt n = o->cells, plane = (n + 1) * (n + 1), cz0 = n * rank / size, cz1 = n * (rank + 1) / size;

    PetscCall(TetsBoxCells(o, PETSC_FALSE, cz0, cz1, &nv, &nc, &cells, &x));
    for (PetscInt i = 0; i < 4 * nc; i++) cells[i] += cz0 * plane;
    /* each rank owns the vertex planes cz0..cz1-1, the last also plane n: global numbers in rank order */
    PetscCall(DMPlexCreateFromCellListParallelPetsc(comm, dim, nc, (cz1 - cz0 + (rank == size - 1)) * plane, PETSC_DECIDE, dim + 1, o->interpolate, cells, dim, x, NULL, NULL, dm));
    PetscCall(PetscFree(cells));
    PetscCall(PetscFree(x));
  } else {
    if (rank == 0) {
      if (dim == 2) PetscCall(TetsAnnulusCells(o, &nv, &nc, &cells, &x));
      else PetscCall(TetsBoxCells(o, irregular, 0, o->cells, &nv, &nc, &cells, &x));
    }
    PetscCall(DMPlexCreateFromCellListPetsc(comm, dim, nc, nv, dim + 1, o->interpolate, cells, dim, x, dm));
    PetscCall(PetscFree(cells));
    PetscCall(PetscFree(x));
    PetscCall(DMPlexGetPartitioner(*dm, &part));
    PetscCall(PetscPartitionerSetFromOptions(part));
    PetscCall(DMPlexDistribute(*dm, 0, NULL, &dist));
    if (dist) {
      PetscCall(DMDestroy(dm));
      *dm = dist;
    }
  }
  PetscCall(PetscObjectSetName((PetscObject)*dm, TetsMeshTypes[o->type]));
  /* distributed here: DMSetFromOptions() must not partition it again (PETSc cannot partition an
     uninterpolated mesh in parallel, and the refined hierarchy would lose its coarse DMs) */
  PetscCall(DMPlexDistributeSetDefault(*dm, PETSC_FALSE));
  for (PetscInt r = 0; r < o->refine; r++) {
    DM fine;

    PetscCall(DMRefine(*dm, comm, &fine));
    if (o->hierarchy) { /* the fine mesh holds the coarse one */
      PetscCall(DMSetCoarseDM(fine, *dm));
      PetscCall(DMPlexSetRegularRefinement(fine, PETSC_TRUE));
    }
    PetscCall(DMPlexDistributeSetDefault(fine, PETSC_FALSE));
    PetscCall(DMDestroy(dm));
    *dm = fine;
  }
  PetscCall(DMGetCoordinatesLocalSetUp(*dm)); /* collective: later per-cell geometry calls are not */
  PetscFunctionReturn(0);
}

/* Whether point p lies in the inclusion of the mesh (blobs: five spheres; annulus: the ring) */
static inline PetscBool TetsInInclusion(const TetsOptions *o, const PetscReal p[])
{
  if (o->type == TETS_BLOBS) {
    const PetscReal ctr[5][3] = {
      {0.22, 0.22, 0.22},
      {0.78, 0.78, 0.22},
      {0.78, 0.22, 0.78},
      {0.22, 0.78, 0.78},
      {0.50, 0.50, 0.50}
    };
    for (int b = 0; b < 5; b++) {
      PetscReal r2 = 0;
      for (int d = 0; d < 3; d++) r2 += PetscSqr(p[d] / o->length - ctr[b][d]);
      if (r2 <= 0.21 * 0.21) return PETSC_TRUE;
    }
  } else if (o->type == TETS_ANNULUS) {
    const PetscReal r = PetscSqrtReal(PetscSqr(p[0] - 0.5) + PetscSqr(p[1] - 0.5));
    return (PetscBool)(r >= 0.25 && r <= 0.35);
  }
  return PETSC_FALSE;
}

/*
  TetsCreateSigma - the per-cell sigma of PatchworkDMPlexAssembleP1() for blobs and annulus (NULL for
  the others): sigma_ratio where the cell's centroid is in the inclusion, 1 elsewhere. fraction (may be
  NULL): the volume fraction of the cells with sigma_ratio.
*/
static inline PetscErrorCode TetsCreateSigma(DM dm, const TetsOptions *o, Vec *sigma, PetscReal *fraction)
{
  PetscInt     cStart, cEnd;
  PetscScalar *s;
  PetscReal    vol[2] = {0, 0};

  PetscFunctionBeginUser;
  *sigma = NULL;
  if (fraction) *fraction = 0;
  if (o->type != TETS_BLOBS && o->type != TETS_ANNULUS) PetscFunctionReturn(0);
  PetscCall(DMPlexGetHeightStratum(dm, 0, &cStart, &cEnd));
  PetscCall(VecCreateMPI(PetscObjectComm((PetscObject)dm), cEnd - cStart, PETSC_DETERMINE, sigma));
  PetscCall(PetscObjectSetName((PetscObject)*sigma, "sigma"));
  PetscCall(VecGetArrayWrite(*sigma, &s));
  for (PetscInt c = cStart; c < cEnd; c++) {
    PetscReal v, ctr[3];
    PetscBool in;

    PetscCall(DMPlexComputeCellGeometryFVM(dm, c, &v, ctr, NULL));
    in         = TetsInInclusion(o, ctr);
    s[c - cStart] = in ? o->sigma_ratio : 1.0;
    vol[0] += in ? v : 0;
    vol[1] += v;
  }
  PetscCall(VecRestoreArrayWrite(*sigma, &s));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, vol, 2, MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)dm)));
  if (fraction) *fraction = vol[1] > 0 ? vol[0] / vol[1] : 0;
  PetscFunctionReturn(0);
}

#endif
