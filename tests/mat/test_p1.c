static const char help[] = "Compares PatchworkDMPlexAssembleP1() with the matrix PETSc's own FEM assembles (DMPlexSNESComputeJacobianFEM)\n"
                           "for -div(sigma grad u) + lambda u, P1 on triangles and tetrahedra, sigma per cell through a DG0 auxiliary\n"
                           "field: the same nonzero pattern, entries equal to tol relative to max|A|. Meshes: PETSc's simplex boxes and\n"
                           "the generators of examples/tets.h (regular, irregular, blobs, annulus). On every mesh PatchworkDMPlexReassembleP1()\n"
                           "with other coefficients must give what a new assembly gives (bit for bit on the CPU), and the first matrix\n"
                           "again, also on a moving mesh. Then bad input must fail cleanly.\n"
                           "Options:\n"
                           "  -tol <1e-13>      relative tolerance\n"
                           "  -dm_mat_type, -dm_vec_type   given to every DM (aijcusparse, cuda: the GPU assembly)\n"
                           "  -skip_bad         only the comparisons\n"
                           "  -quick            two meshes of examples/tets.h, the overlap, a moving mesh and bad reassemblies only\n"
                           "                    (for valgrind)\n"
                           "  -time_reassembly <r>  only time: the regular mesh of examples/tets.h (8^3 cubes) refined r times, one\n"
                           "                    assembly and 5 reassemblies with new sigma and lambda (with -log_view: the P1 events)\n\n";

#include <patchwork.h>
#include <petscds.h>
#include <petscfe.h>
#include <petscsnes.h>
#include <petscdmda.h>
#include "../../examples/tets.h"
#include "compare.h" /* ErrMax(), PatchworkTestErrMaxAllreduce() */
#include <math.h>

static PetscInt  failures = 0;
static char      mattype[64] = "", vectype[64] = "";
static PetscReal tol         = 1e-13;

/* PETSc's pointwise Jacobian: g0 = lambda (constants[0]), g3 = sigma I with sigma the auxiliary field */
static void G0(PetscInt dim, PetscInt Nf, PetscInt NfAux, const PetscInt uOff[], const PetscInt uOff_x[], const PetscScalar u[], const PetscScalar u_t[], const PetscScalar u_x[], const PetscInt aOff[], const PetscInt aOff_x[], const PetscScalar a[], const PetscScalar a_t[], const PetscScalar a_x[], PetscReal t, PetscReal u_tShift, const PetscReal x[], PetscInt numConstants, const PetscScalar constants[], PetscScalar g0[])
{
  (void)dim, (void)Nf, (void)NfAux, (void)uOff, (void)uOff_x, (void)u, (void)u_t, (void)u_x, (void)aOff, (void)aOff_x, (void)a, (void)a_t, (void)a_x, (void)t, (void)u_tShift, (void)x, (void)numConstants;
  g0[0] = constants[0];
}

static void G3(PetscInt dim, PetscInt Nf, PetscInt NfAux, const PetscInt uOff[], const PetscInt uOff_x[], const PetscScalar u[], const PetscScalar u_t[], const PetscScalar u_x[], const PetscInt aOff[], const PetscInt aOff_x[], const PetscScalar a[], const PetscScalar a_t[], const PetscScalar a_x[], PetscReal t, PetscReal u_tShift, const PetscReal x[], PetscInt numConstants, const PetscScalar constants[], PetscScalar g3[])
{
  (void)Nf, (void)NfAux, (void)uOff, (void)uOff_x, (void)u, (void)u_t, (void)u_x, (void)aOff_x, (void)a_t, (void)a_x, (void)t, (void)u_tShift, (void)x, (void)numConstants, (void)constants;
  for (PetscInt d = 0; d < dim; d++) g3[d * dim + d] = a[aOff[0]];
}

static PetscErrorCode SetTypes(DM dm)
{
  PetscFunctionBeginUser;
  if (mattype[0]) PetscCall(DMSetMatType(dm, mattype));
  if (vectype[0]) PetscCall(DMSetVecType(dm, vectype));
  PetscFunctionReturn(0);
}

/* A box mesh of PETSc's own (DMPlexCreateBoxMesh's arguments differ between versions: options); without a
   mesh generator (none in these PETSc builds) only quadrilaterals and hexahedra */
static PetscErrorCode BoxMesh(MPI_Comm comm, const char prefix[], PetscInt dim, const char faces[], DM *dm)
{
  char name[256];

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(name, sizeof(name), "-%sdm_plex_dim", prefix));
  PetscCall(PetscOptionsSetValue(NULL, name, dim == 2 ? "2" : "3"));
  PetscCall(PetscSNPrintf(name, sizeof(name), "-%sdm_plex_simplex", prefix));
  PetscCall(PetscOptionsSetValue(NULL, name, "0"));
  PetscCall(PetscSNPrintf(name, sizeof(name), "-%sdm_plex_box_faces", prefix));
  PetscCall(PetscOptionsSetValue(NULL, name, faces));
  PetscCall(DMCreate(comm, dm));
  PetscCall(DMSetType(*dm, DMPLEX));
  PetscCall(PetscObjectSetOptionsPrefix((PetscObject)*dm, prefix));
  PetscCall(DMSetFromOptions(*dm));
  PetscCall(SetTypes(*dm));
  PetscFunctionReturn(0);
}

/* PETSc's own simplex mesh: its reference triangle or tetrahedron (on rank 0), refined `refine` times
   (regularly), distributed, then split once more by PETSc's Alfeld (barycentric) refinement when alfeld
   is set: cells of many shapes and vertices of high valence */
static PetscErrorCode RefCellMesh(MPI_Comm comm, const char prefix[], PetscInt dim, PetscInt refine, PetscBool alfeld, DM *dm)
{
  const PetscInt  cell[4] = {0, 1, 2, 3};
  const PetscReal x2[6] = {-1, -1, 1, -1, -1, 1}, x3[12] = {-1, -1, -1, -1, 1, -1, 1, -1, -1, -1, -1, 1};
  char            name[256], value[16];
  PetscMPIInt     rank;
  DM              dist = NULL;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(DMPlexCreateFromCellListPetsc(comm, dim, rank ? 0 : 1, rank ? 0 : dim + 1, dim + 1, PETSC_TRUE, cell, dim, dim == 2 ? x2 : x3, dm));
  PetscCall(PetscSNPrintf(name, sizeof(name), "-%spre_dm_refine", prefix));
  PetscCall(PetscSNPrintf(value, sizeof(value), "%d", (int)refine));
  PetscCall(PetscOptionsSetValue(NULL, name, value));
  PetscCall(PetscSNPrintf(name, sizeof(name), "%spre_", prefix));
  PetscCall(PetscObjectSetOptionsPrefix((PetscObject)*dm, name));
  PetscCall(DMSetFromOptions(*dm));
  PetscCall(DMPlexDistribute(*dm, 0, NULL, &dist));
  if (dist) {
    PetscCall(DMDestroy(dm));
    *dm = dist;
  }
  if (alfeld) {
    PetscCall(PetscSNPrintf(name, sizeof(name), "-%sdm_refine", prefix));
    PetscCall(PetscOptionsSetValue(NULL, name, "1"));
    PetscCall(PetscSNPrintf(name, sizeof(name), "-%sdm_plex_transform_type", prefix));
    PetscCall(PetscOptionsSetValue(NULL, name, "refine_alfeld"));
    PetscCall(PetscObjectSetOptionsPrefix((PetscObject)*dm, prefix));
    PetscCall(DMSetFromOptions(*dm));
  }
  PetscCall(SetTypes(*dm));
  PetscFunctionReturn(0);
}

/* A random sigma in [0.5, 2] per local cell */
static PetscErrorCode RandomSigma(DM dm, Vec *sigma)
{
  PetscInt    cStart, cEnd;
  PetscRandom rnd;

  PetscFunctionBeginUser;
  PetscCall(DMPlexGetHeightStratum(dm, 0, &cStart, &cEnd));
  PetscCall(VecCreateMPI(PetscObjectComm((PetscObject)dm), cEnd - cStart, PETSC_DETERMINE, sigma));
  PetscCall(PetscRandomCreate(PetscObjectComm((PetscObject)dm), &rnd));
  PetscCall(PetscRandomSetInterval(rnd, 0.5, 2.0));
  PetscCall(VecSetRandom(*sigma, rnd));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscFunctionReturn(0);
}

/* PETSc's FEM matrix on the DM's P1 field (made by PatchworkDMPlexAssembleP1()), sigma a DG0 auxiliary field */
static PetscErrorCode ReferenceMatrix(DM dm, PetscReal lambda, Vec sigma, Mat *J)
{
  MPI_Comm           comm = PetscObjectComm((PetscObject)dm);
  PetscScalar        constants[1] = {lambda};
  PetscInt           dim, cStart, cEnd;
  PetscDS            ds;
  PetscFE            fe, feAux;
  DM                 dmAux;
  PetscSection       asec;
  Vec                aux, X;
  PetscScalar       *a;
  const PetscScalar *s = NULL;

  PetscFunctionBeginUser;
  PetscCall(DMGetDimension(dm, &dim));
  PetscCall(DMGetDS(dm, &ds));
  PetscCall(PetscDSSetConstants(ds, 1, constants));
  PetscCall(PetscDSSetJacobian(ds, 0, 0, G0, NULL, NULL, G3));
  PetscCall(DMGetField(dm, 0, NULL, (PetscObject *)&fe));
  PetscCall(DMClone(dm, &dmAux));
  PetscCall(PetscFECreateLagrange(comm, dim, 1, PETSC_TRUE, 0, 2, &feAux));
  PetscCall(PetscFECopyQuadrature(fe, feAux));
  PetscCall(DMSetField(dmAux, 0, NULL, (PetscObject)feAux));
  PetscCall(PetscFEDestroy(&feAux));
  PetscCall(DMCreateDS(dmAux));
  PetscCall(DMCreateLocalVector(dmAux, &aux));
  PetscCall(DMGetLocalSection(dmAux, &asec));
  PetscCall(DMPlexGetHeightStratum(dm, 0, &cStart, &cEnd));
  if (sigma) PetscCall(VecGetArrayRead(sigma, &s));
  PetscCall(VecGetArray(aux, &a));
  for (PetscInt c = cStart; c < cEnd; c++) {
    PetscInt off;
    PetscCall(PetscSectionGetOffset(asec, c, &off));
    a[off] = s ? s[c - cStart] : 1.0;
  }
  PetscCall(VecRestoreArray(aux, &a));
  if (sigma) PetscCall(VecRestoreArrayRead(sigma, &s));
  PetscCall(DMSetAuxiliaryVec(dm, NULL, 0, 0, aux));
  PetscCall(VecDestroy(&aux));
  PetscCall(DMDestroy(&dmAux));

  PetscCall(DMCreateMatrix(dm, J));
  PetscCall(DMCreateLocalVector(dm, &X)); /* the Jacobian of the linear problem does not depend on X */
  PetscCall(VecZeroEntries(X));
  PetscCall(DMPlexSNESComputeJacobianFEM(dm, X, *J, *J, NULL));
  PetscCall(VecDestroy(&X));
  PetscCall(DMSetAuxiliaryVec(dm, NULL, 0, 0, NULL));
  PetscFunctionReturn(0);
}

/* Row by row: the same columns, max |A - J| and max |J|; and the row lengths of A (1 + the valence) */
static PetscErrorCode CompareMatrices(Mat A, Mat J, PetscReal *diff, PetscReal *amax, PetscInt *pattern, PetscInt len[2])
{
  PetscInt rstart, rend;

  PetscFunctionBeginUser;
  *diff = *amax = 0;
  *pattern      = 0;
  len[0]        = PETSC_MAX_INT;
  len[1]        = 0;
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (PetscInt r = rstart; r < rend; r++) {
    const PetscInt    *ca, *cj;
    const PetscScalar *va, *vj;
    PetscInt           na, nj;

    PetscCall(MatGetRow(A, r, &na, &ca, &va));
    PetscCall(MatGetRow(J, r, &nj, &cj, &vj));
    len[0] = PetscMin(len[0], na);
    len[1] = PetscMax(len[1], na);
    if (na != nj) (*pattern)++;
    else
      for (PetscInt k = 0; k < na; k++) {
        if (ca[k] != cj[k]) {
          (*pattern)++;
          break;
        }
        *diff = ErrMax(*diff, PetscAbsScalar(va[k] - vj[k]));
        *amax = ErrMax(*amax, PetscAbsScalar(vj[k]));
      }
    PetscCall(MatRestoreRow(J, r, &nj, &cj, &vj));
    PetscCall(MatRestoreRow(A, r, &na, &ca, &va));
  }
  PetscCall(PatchworkTestErrMaxAllreduce(PetscObjectComm((PetscObject)A), 1, diff));
  PetscCall(PatchworkTestErrMaxAllreduce(PetscObjectComm((PetscObject)A), 1, amax));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, pattern, 1, MPIU_INT, MPI_SUM, PetscObjectComm((PetscObject)A)));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &len[0], 1, MPIU_INT, MPI_MIN, PetscObjectComm((PetscObject)A)));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &len[1], 1, MPIU_INT, MPI_MAX, PetscObjectComm((PetscObject)A)));
  PetscFunctionReturn(0);
}

/* Whether a KSP (preonly, Jacobi) on A set up before A's values changed solves with the new diagonal:
   the changed matrix must make it set up again */
static PetscErrorCode JacobiFollows(KSP ksp, Mat A, PetscBool *ok)
{
  Vec       b, x, d;
  PetscReal e;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(x, &d));
  PetscCall(VecSet(b, 1.0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(MatGetDiagonal(A, d));
  PetscCall(VecPointwiseMult(x, x, d));
  PetscCall(VecShift(x, -1.0));
  PetscCall(VecNorm(x, NORM_INFINITY, &e));
  *ok = (PetscBool)(e <= 1e-12);
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&d));
  PetscFunctionReturn(0);
}

/* PatchworkDMPlexReassembleP1() on a matrix of (lambda, sigma): with other coefficients it must give the
   matrix a new assembly gives (bit for bit on the CPU; the GPU's atomics add in any order: to tol), with
   sigma = 1 too, and then the first coefficients again PETSc's matrix J; a KSP on it must notice. */
static PetscErrorCode CompareReassembly(const char name[], DM dm, PetscReal lambda, Vec sigma, Mat J, PetscBool device)
{
  MPI_Comm         comm = PetscObjectComm((PetscObject)dm);
  const PetscReal  lambda2[2] = {2 * lambda + 0.6, 0.0};
  Mat              A, F;
  Vec              sigma2[2] = {NULL, NULL};
  PetscReal        diff[2], amax, dj;
  PetscBool        equal[2], ok = PETSC_TRUE;
  PetscInt         pattern, len[2];
  PetscBool        follows;
  KSP              ksp;
  PC               pc;
  DM               adm;

  PetscFunctionBeginUser;
  PetscCall(PatchworkDMPlexAssembleP1(dm, lambda, sigma, &A));
  PetscCall(KSPCreate(comm, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPPREONLY));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(JacobiFollows(ksp, A, &follows));
  if (sigma) { /* other values in every cell, in a vector of the DM's type (-dm_vec_type cuda: on the GPU) */
    const PetscScalar *a;
    PetscScalar       *b;
    PetscInt           n;

    PetscCall(VecGetLocalSize(sigma, &n));
    PetscCall(VecCreate(comm, &sigma2[0]));
    PetscCall(VecSetSizes(sigma2[0], n, PETSC_DETERMINE));
    PetscCall(VecSetType(sigma2[0], vectype[0] ? vectype : VECSTANDARD));
    PetscCall(VecGetArrayRead(sigma, &a));
    PetscCall(VecGetArrayWrite(sigma2[0], &b));
    for (PetscInt i = 0; i < n; i++) b[i] = 1.5 * a[i] + 0.25;
    PetscCall(VecRestoreArrayWrite(sigma2[0], &b));
    PetscCall(VecRestoreArrayRead(sigma, &a));
  } else PetscCall(RandomSigma(dm, &sigma2[0]));
  for (int k = 0; k < 2; k++) {
    PetscCall(PatchworkDMPlexReassembleP1(dm, lambda2[k], sigma2[k], A));
    PetscCall(JacobiFollows(ksp, A, &follows));
    if (!follows) ok = PETSC_FALSE;
    PetscCall(PatchworkDMPlexAssembleP1(dm, lambda2[k], sigma2[k], &F));
    PetscCall(MatEqual(A, F, &equal[k]));
    PetscCall(CompareMatrices(A, F, &diff[k], &amax, &pattern, len));
    if (pattern || (device ? !(diff[k] <= tol * amax) : !(equal[k] && diff[k] == 0))) ok = PETSC_FALSE;
    PetscCall(MatDestroy(&F));
  }
  PetscCall(PatchworkDMPlexReassembleP1(dm, lambda, sigma, A)); /* back: PETSc's matrix */
  PetscCall(CompareMatrices(A, J, &dj, &amax, &pattern, len));
  PetscCall(MatGetDM(A, &adm));
  if (pattern || !(dj <= tol * amax) || adm != dm) ok = PETSC_FALSE;
  if (!ok) failures++;
  PetscCall(PetscPrintf(comm, "%s %-34s reassembled = new assembly: max|diff| %.2e, %.2e (sigma = 1, lambda = 0)%s; back: max|A-J|/max|J| = %.2e%s\n", ok ? "ok  " : "FAIL", name, (double)diff[0], (double)diff[1], device ? "" : equal[0] && equal[1] ? ", MatEqual" : ", not MatEqual", (double)(dj / amax), follows ? "" : "; a KSP on it missed the new values"));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&sigma2[0]));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

/* A moving mesh: after DMSetCoordinates() and after writing the local coordinates in place, the
   reassembled matrix must be the new assembly's */
static PetscErrorCode CompareMoved(MPI_Comm comm, const char name[])
{
  TetsOptions o;
  DM          dm;
  Vec         sigma, x;
  Mat         A, F;
  MatType     t;
  char       *cusparse;
  PetscReal   diff[2], amax;
  PetscInt    pattern, len[2];
  PetscBool   equal[2], ok = PETSC_TRUE;

  PetscFunctionBeginUser;
  TetsOptionsDefault(&o);
  o.type  = TETS_IRREGULAR;
  o.cells = 3;
  PetscCall(TetsCreateMesh(comm, &o, &dm));
  PetscCall(SetTypes(dm));
  PetscCall(RandomSigma(dm, &sigma));
  PetscCall(PatchworkDMPlexAssembleP1(dm, 1.0, sigma, &A));
  PetscCall(MatGetType(A, &t));
  PetscCall(PetscStrstr(t, "cusparse", &cusparse));
  for (int k = 0; k < 2; k++) {
    if (k == 0) { /* new coordinates: stretched in x */
      Vec      c;
      PetscInt n, dim;
      PetscScalar *a;

      PetscCall(DMGetDimension(dm, &dim));
      PetscCall(DMGetCoordinates(dm, &x));
      PetscCall(VecDuplicate(x, &c));
      PetscCall(VecCopy(x, c));
      PetscCall(VecGetLocalSize(c, &n));
      PetscCall(VecGetArray(c, &a));
      for (PetscInt i = 0; i < n; i += dim) a[i] *= 1.7;
      PetscCall(VecRestoreArray(c, &a));
      PetscCall(DMSetCoordinates(dm, c));
      PetscCall(VecDestroy(&c));
    } else { /* the local coordinates written in place */
      PetscCall(DMGetCoordinatesLocal(dm, &x));
      PetscCall(VecScale(x, 0.6));
    }
    PetscCall(PatchworkDMPlexReassembleP1(dm, 1.0, sigma, A));
    PetscCall(PatchworkDMPlexAssembleP1(dm, 1.0, sigma, &F));
    PetscCall(MatEqual(A, F, &equal[k]));
    PetscCall(CompareMatrices(A, F, &diff[k], &amax, &pattern, len));
    if (pattern || (cusparse ? !(diff[k] <= tol * amax) : !(equal[k] && diff[k] == 0))) ok = PETSC_FALSE;
    PetscCall(MatDestroy(&F));
  }
  if (!ok) failures++;
  PetscCall(PetscPrintf(comm, "%s %-34s reassembled = new assembly after DMSetCoordinates(): max|diff| %.2e, after writing the local coordinates: %.2e\n", ok ? "ok  " : "FAIL", name, (double)diff[0], (double)diff[1]));
  PetscCall(MatDestroy(&A));
  PetscCall(VecDestroy(&sigma));
  PetscCall(DMDestroy(&dm));
  PetscFunctionReturn(0);
}

/* The time of an assembly and of reassemblies (the best of 5, new sigma and lambda each) on the regular
   mesh refined `refine` times */
static PetscErrorCode TimeReassembly(MPI_Comm comm, PetscInt refine)
{
  TetsOptions    o;
  DM             dm;
  Vec            sigma;
  Mat            A;
  PetscInt       N;
  PetscLogDouble t0, t1, first, best = PETSC_MAX_REAL;

  PetscFunctionBeginUser;
  TetsOptionsDefault(&o);
  o.refine = refine;
  PetscCall(TetsCreateMesh(comm, &o, &dm));
  PetscCall(SetTypes(dm));
  PetscCall(RandomSigma(dm, &sigma));
  PetscCall(PetscBarrier((PetscObject)dm));
  PetscCall(PetscTime(&t0));
  PetscCall(PatchworkDMPlexAssembleP1(dm, 1.0, sigma, &A));
  PetscCall(PetscBarrier((PetscObject)A));
  PetscCall(PetscTime(&t1));
  first = t1 - t0;
  for (int k = 0; k < 5; k++) {
    PetscCall(VecScale(sigma, 1.1));
    PetscCall(PetscTime(&t0));
    PetscCall(PatchworkDMPlexReassembleP1(dm, 1.0 + k, sigma, A));
    PetscCall(PetscBarrier((PetscObject)A));
    PetscCall(PetscTime(&t1));
    best = PetscMin(best, t1 - t0);
  }
  PetscCall(MatGetSize(A, &N, NULL));
  PetscCall(PetscPrintf(comm, "P1 %" PetscInt_FMT " rows (regular, refined %" PetscInt_FMT " times): assembly %.4f s, reassembly %.4f s (best of 5)\n", N, refine, (double)first, (double)best));
  PetscCall(MatDestroy(&A));
  PetscCall(VecDestroy(&sigma));
  PetscCall(DMDestroy(&dm));
  PetscFunctionReturn(0);
}

/* Assemble on dm (destroyed here) and compare with PETSc; twice: the second call finds the P1 field there */
static PetscErrorCode Compare(const char name[], DM dm, PetscReal lambda, Vec sigma)
{
  MPI_Comm  comm = PetscObjectComm((PetscObject)dm);
  Mat       A, J;
  Vec       x, g;
  DM        adm;
  PetscReal diff, amax;
  PetscInt  pattern, len[2], N, nx, ng, nnz;
  MatType   ta, tj;
  MatInfo   info;
  PetscBool ok, same, device;
  char     *cusparse;

  PetscFunctionBeginUser;
  PetscCall(PatchworkDMPlexAssembleP1(dm, lambda, sigma, &A));
  PetscCall(ReferenceMatrix(dm, lambda, sigma, &J));
  PetscCall(CompareMatrices(A, J, &diff, &amax, &pattern, len));
  PetscCall(MatGetSize(A, &N, NULL));
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
  nnz = (PetscInt)info.nz_used;
  PetscCall(MatGetType(A, &ta));
  PetscCall(PetscStrstr(ta, "cusparse", &cusparse));
  device = (PetscBool)(cusparse != NULL);
  PetscCall(MatGetType(J, &tj));
  PetscCall(PetscStrcmp(ta, tj, &same));
  PetscCall(MatGetDM(A, &adm));
  PetscCall(MatCreateVecs(A, &x, NULL));
  PetscCall(DMCreateGlobalVector(dm, &g));
  PetscCall(VecGetLocalSize(x, &nx));
  PetscCall(VecGetLocalSize(g, &ng));
  ok = (PetscBool)(pattern == 0 && diff <= tol * amax && same && adm == dm && nx == ng);
  PetscCall(PetscPrintf(comm, "%s %-34s %7" PetscInt_FMT " rows %8" PetscInt_FMT " nnz, row length %2" PetscInt_FMT "..%2" PetscInt_FMT ", max|A-J|/max|J| = %.2e, %s\n", ok ? "ok  " : "FAIL", name, N, nnz, len[0], len[1], (double)(diff / amax), ta));
  if (pattern) PetscCall(PetscPrintf(comm, "     %" PetscInt_FMT " rows with another pattern than PETSc's\n", pattern));
  if (!same) PetscCall(PetscPrintf(comm, "     matrix type %s, PETSc's %s\n", ta, tj));
  if (adm != dm || nx != ng) PetscCall(PetscPrintf(comm, "     the matrix does not carry the DM or its vectors' layout\n"));
  if (!ok) failures++;
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&g));
  PetscCall(MatDestroy(&A));

  { /* the local section PatchworkDMPlexAssembleP1() built is the one PETSc makes for a scalar P1 field */
    PetscSection mine, ref;
    PetscInt     numComp[1] = {1}, numDof[4] = {1, 0, 0, 0};
    PetscBool    congruent;

    PetscCall(DMGetLocalSection(dm, &mine));
    PetscCall(DMPlexCreateSection(dm, NULL, numComp, numDof, 0, NULL, NULL, NULL, NULL, &ref));
    PetscCall(PetscSectionCompare(mine, ref, &congruent));
    if (!congruent) {
      failures++;
      PetscCall(PetscPrintf(comm, "FAIL %s: the DM's local section differs from DMPlexCreateSection()'s for a P1 field\n", name));
    }
    PetscCall(PetscSectionDestroy(&ref));
  }

  /* again, the DM now has the P1 field (and PETSc's DS): the same matrix */
  PetscCall(PatchworkDMPlexAssembleP1(dm, lambda, sigma, &A));
  PetscCall(CompareMatrices(A, J, &diff, &amax, &pattern, len));
  if (pattern || !(diff <= tol * amax)) {
    failures++;
    PetscCall(PetscPrintf(comm, "FAIL %s, second call: %" PetscInt_FMT " rows with another pattern, max|A-J|/max|J| = %.2e\n", name, pattern, (double)(diff / amax)));
  }
  PetscCall(MatDestroy(&A));
  PetscCall(CompareReassembly(name, dm, lambda, sigma, J, device));
  PetscCall(MatDestroy(&J));
  PetscCall(DMDestroy(&dm));
  PetscFunctionReturn(0);
}

static PetscErrorCode CompareTets(MPI_Comm comm, const char name[], TetsMeshType type, PetscInt cells, PetscInt refine, PetscReal ratio, PetscBool random, PetscReal lambda)
{
  TetsOptions o;
  DM          dm;
  Vec         sigma;

  PetscFunctionBeginUser;
  TetsOptionsDefault(&o);
  o.type        = type;
  o.cells       = cells;
  o.refine      = refine;
  o.sigma_ratio = ratio;
  PetscCall(TetsCreateMesh(comm, &o, &dm));
  PetscCall(SetTypes(dm));
  { /* the generator orients every cell as PETSc's FEM expects (its matrix changes sign on inverted cells) */
    PetscInt cStart, cEnd, bad = 0;

    PetscCall(DMPlexGetHeightStratum(dm, 0, &cStart, &cEnd));
    for (PetscInt c = cStart; c < cEnd; c++) {
      PetscReal v0[3], J[9], invJ[9], detJ;
      PetscCall(DMPlexComputeCellGeometryFEM(dm, c, NULL, v0, J, invJ, &detJ));
      if (!(detJ > 0)) bad++;
    }
    PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &bad, 1, MPIU_INT, MPI_SUM, comm));
    if (bad) {
      failures++;
      PetscCall(PetscPrintf(comm, "FAIL %s: %" PetscInt_FMT " cells with detJ <= 0 in PETSc's geometry\n", name, bad));
    }
  }
  if (random) PetscCall(RandomSigma(dm, &sigma));
  else PetscCall(TetsCreateSigma(dm, &o, &sigma, NULL));
  PetscCall(Compare(name, dm, lambda, sigma));
  PetscCall(VecDestroy(&sigma));
  PetscFunctionReturn(0);
}

/* A mesh without edges and faces (not interpolated): the irregular box of examples/tets.h, its cells'
   cones the vertices */
static PetscErrorCode CompareUninterpolated(MPI_Comm comm, const char name[], PetscInt cells)
{
  TetsOptions o;
  PetscMPIInt rank;
  PetscInt    nv = 0, nc = 0, *c = NULL;
  PetscReal  *x = NULL;
  DM          dm, dist = NULL;
  Vec         sigma;

  PetscFunctionBeginUser;
  TetsOptionsDefault(&o);
  o.cells = cells;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) PetscCall(TetsBoxCells(&o, PETSC_TRUE, 0, o.cells, &nv, &nc, &c, &x));
  PetscCall(DMPlexCreateFromCellListPetsc(comm, 3, nc, nv, 4, PETSC_FALSE, c, 3, x, &dm));
  PetscCall(PetscFree(c));
  PetscCall(PetscFree(x));
  PetscCall(DMPlexDistribute(dm, 0, NULL, &dist));
  if (dist) {
    PetscCall(DMDestroy(&dm));
    dm = dist;
  }
  PetscCall(SetTypes(dm));
  PetscCall(RandomSigma(dm, &sigma));
  PetscCall(Compare(name, dm, 0.9, sigma));
  PetscCall(VecDestroy(&sigma));
  PetscFunctionReturn(0);
}

/* The interpolant of f(x) = sin(a.x + b) at the vertices, in the DM's global numbering */
static PetscErrorCode Interpolant(DM dm, const PetscReal a[3], PetscReal b, Vec g)
{
  PetscInt           dim, vStart, vEnd;
  PetscSection       sec, csec;
  DM                 cdm;
  Vec                loc, cvec;
  const PetscScalar *x;
  PetscScalar       *u;

  PetscFunctionBeginUser;
  PetscCall(DMGetDimension(dm, &dim));
  PetscCall(DMPlexGetDepthStratum(dm, 0, &vStart, &vEnd));
  PetscCall(DMGetLocalSection(dm, &sec));
  PetscCall(DMGetCoordinateDM(dm, &cdm));
  PetscCall(DMGetLocalSection(cdm, &csec));
  PetscCall(DMGetCoordinatesLocal(dm, &cvec));
  PetscCall(DMGetLocalVector(dm, &loc));
  PetscCall(VecGetArrayRead(cvec, &x));
  PetscCall(VecGetArrayWrite(loc, &u));
  for (PetscInt v = vStart; v < vEnd; v++) {
    PetscInt  off, coff;
    PetscReal t = b;

    PetscCall(PetscSectionGetOffset(sec, v, &off));
    PetscCall(PetscSectionGetOffset(csec, v, &coff));
    for (PetscInt d = 0; d < dim; d++) t += a[d] * PetscRealPart(x[coff + d]);
    u[off] = PetscSinReal(t);
  }
  PetscCall(VecRestoreArrayWrite(loc, &u));
  PetscCall(VecRestoreArrayRead(cvec, &x));
  PetscCall(DMLocalToGlobalBegin(dm, loc, INSERT_VALUES, g));
  PetscCall(DMLocalToGlobalEnd(dm, loc, INSERT_VALUES, g));
  PetscCall(DMRestoreLocalVector(dm, &loc));
  PetscFunctionReturn(0);
}

/* u_k^T A u_l for the interpolants of four smooth functions: the same however the mesh is distributed */
static PetscErrorCode BilinearForms(DM dm, Mat A, PetscReal q[16])
{
  const PetscReal a[4][3] = {
    {0,    0,    0   },
    {0.3,  -0.2, 0.5 },
    {-0.7, 0.4,  0.1 },
    {0.2,  0.9,  -0.6}
  };
  Vec u[4], Au;

  PetscFunctionBeginUser;
  for (int k = 0; k < 4; k++) {
    PetscCall(MatCreateVecs(A, &u[k], NULL));
    PetscCall(Interpolant(dm, a[k], k ? 0.3 * k : 0.5 * PETSC_PI, u[k])); /* k = 0: the constant 1 */
  }
  PetscCall(MatCreateVecs(A, NULL, &Au));
  for (int k = 0; k < 4; k++) {
    PetscCall(MatMult(A, u[k], Au));
    for (int l = 0; l < 4; l++) {
      PetscScalar d;
      PetscCall(VecDot(Au, u[l], &d));
      q[4 * k + l] = PetscRealPart(d);
    }
  }
  for (int k = 0; k < 4; k++) PetscCall(VecDestroy(&u[k]));
  PetscCall(VecDestroy(&Au));
  PetscFunctionReturn(0);
}

/* With overlap, a rank holds cells other ranks own: each must count once (PETSc's own FEM assembly,
   DMPlexSNESComputeJacobianFEM, adds them on every rank that holds them, so it is no reference here).
   The blobs mesh distributed without and with overlap: the same bilinear forms; 1^T A 1 = lambda |box|. */
static PetscErrorCode CompareOverlap(MPI_Comm comm, const char name[], PetscInt cells, PetscReal lambda)
{
  TetsOptions o;
  DM          dm0, dm1 = NULL;
  Vec         s0, s1;
  Mat         A0, A1;
  PetscReal   q0[16], q1[16], diff = 0, qmax = 0, vol;
  PetscBool   ok;

  PetscFunctionBeginUser;
  TetsOptionsDefault(&o);
  o.type  = TETS_BLOBS;
  o.cells = cells;
  PetscCall(TetsCreateMesh(comm, &o, &dm0));
  PetscCall(SetTypes(dm0));
  PetscCall(DMPlexDistributeOverlap(dm0, 1, NULL, &dm1));
  if (!dm1) { /* one rank: nothing to overlap */
    PetscCall(DMClone(dm0, &dm1));
  }
  PetscCall(SetTypes(dm1));
  PetscCall(TetsCreateSigma(dm0, &o, &s0, NULL));
  PetscCall(TetsCreateSigma(dm1, &o, &s1, NULL));
  PetscCall(PatchworkDMPlexAssembleP1(dm0, lambda, s0, &A0));
  PetscCall(PatchworkDMPlexAssembleP1(dm1, lambda, s1, &A1));
  PetscCall(BilinearForms(dm0, A0, q0));
  PetscCall(BilinearForms(dm1, A1, q1));
  for (int i = 0; i < 16; i++) {
    diff = ErrMax(diff, PetscAbsReal(q0[i] - q1[i]));
    qmax = ErrMax(qmax, PetscAbsReal(q0[i]));
  }
  vol = PetscPowRealInt(o.length, 3);
  ok  = (PetscBool)(diff <= 100 * tol * qmax && PetscAbsReal(q1[0] - lambda * vol) <= 100 * tol * vol);
  if (!ok) failures++;
  PetscCall(PetscPrintf(comm, "%s %-34s 1^T A 1 = %.15g (lambda |box| = %g), bilinear forms differ by %.2e relative\n", ok ? "ok  " : "FAIL", name, (double)q1[0], (double)(lambda * vol), (double)(diff / qmax)));
  PetscCall(MatDestroy(&A0));
  PetscCall(MatDestroy(&A1));
  PetscCall(VecDestroy(&s0));
  PetscCall(VecDestroy(&s1));
  PetscCall(DMDestroy(&dm0));
  PetscCall(DMDestroy(&dm1));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- bad input */
static PetscErrorCode Expect(PetscErrorCode code, const char what[], const char words[])
{
  const char *msg = NULL;

  PetscFunctionBeginUser;
  /* the message argument is char ** up to PETSc 3.2x and const char ** after: void * fits both */
  if (code) PetscCall(PetscErrorMessage(code, NULL, (void *)&msg));
  if (code && msg && strstr(msg, words)) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok   %-34s -> %s\n", what, msg));
  else {
    failures++;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %-34s -> %s (expected an error containing '%s')\n", what, code ? (msg ? msg : "(no message)") : "no error", words));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode TryAssemble(DM dm, PetscReal lambda, Vec sigma, const char what[], const char words[])
{
  Mat            A = NULL;
  PetscErrorCode code;

  PetscFunctionBeginUser;
  code = PatchworkDMPlexAssembleP1(dm, lambda, sigma, &A);
  PetscCall(Expect(code, what, words));
  if (!code) PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

static PetscErrorCode TryReassemble(DM dm, PetscReal lambda, Vec sigma, Mat A, const char what[], const char words[])
{
  PetscFunctionBeginUser;
  PetscCall(Expect(PatchworkDMPlexReassembleP1(dm, lambda, sigma, A), what, words));
  PetscFunctionReturn(0);
}

/* PatchworkDMPlexReassembleP1() refuses matrices it did not make (or made on another DM) and bad
   coefficients, and a refused call leaves the matrix as it was */
static PetscErrorCode BadReassembly(MPI_Comm comm)
{
  DM          dm, other;
  Mat         A, B, C;
  Vec         sigma;
  PetscInt    cStart, cEnd;
  PetscScalar *s;
  PetscBool   same;

  PetscFunctionBeginUser;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  PetscCall(RefCellMesh(comm, "retri_", 2, 2, PETSC_FALSE, &dm));
  PetscCall(PatchworkDMPlexAssembleP1(dm, 1.0, NULL, &A));
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &C));
  PetscCall(DMCreateMatrix(dm, &B));
  PetscCall(TryReassemble(dm, 1.0, NULL, B, "reassemble a DMCreateMatrix() matrix", "needs a matrix made by PatchworkDMPlexAssembleP1()"));
  PetscCall(TryReassemble(dm, 1.0, NULL, C, "reassemble a MatDuplicate() copy", "not a copy"));
  PetscCall(MatDestroy(&B));
  PetscCall(RefCellMesh(comm, "retri2_", 2, 2, PETSC_FALSE, &other));
  PetscCall(TryReassemble(other, 1.0, NULL, A, "reassemble on another DM", "assembled by PatchworkDMPlexAssembleP1() on another DM"));
  PetscCall(DMDestroy(&other));
  PetscCall(TryReassemble(dm, -1.0, NULL, A, "reassemble with lambda < 0", "lambda must be finite and >= 0"));
  PetscCall(DMPlexGetHeightStratum(dm, 0, &cStart, &cEnd));
  PetscCall(VecCreateMPI(comm, cEnd - cStart + 1, PETSC_DETERMINE, &sigma));
  PetscCall(VecSet(sigma, 1.0));
  PetscCall(TryReassemble(dm, 1.0, sigma, A, "reassemble, sigma one entry too many", "one entry per local cell"));
  PetscCall(VecDestroy(&sigma));
  PetscCall(VecCreateMPI(comm, cEnd - cStart, PETSC_DETERMINE, &sigma));
  PetscCall(VecSet(sigma, 2.0));
  PetscCall(VecGetArray(sigma, &s));
  if (cEnd > cStart) s[0] = (PetscReal)NAN;
  PetscCall(VecRestoreArray(sigma, &s));
  PetscCall(TryReassemble(dm, 1.0, sigma, A, "reassemble, sigma NaN in a cell", "NaN"));
  PetscCall(VecDestroy(&sigma));
  { /* the mesh moved to a point */
    Vec x;

    PetscCall(DMGetCoordinatesLocal(dm, &x));
    PetscCall(VecScale(x, 0.0));
    PetscCall(TryReassemble(dm, 1.0, NULL, A, "reassemble, mesh moved to a point", "cells of the mesh are degenerate"));
  }
  PetscCall(MatEqual(A, C, &same));
  if (!same) failures++;
  PetscCall(PetscPrintf(comm, "%s %-34s -> the matrix is unchanged\n", same ? "ok  " : "FAIL", "refused reassemblies"));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&dm));
  PetscCall(PetscPopErrorHandler());
  PetscFunctionReturn(0);
}

/* rank 0: a quadrilateral and a triangle sharing an edge (other ranks: nothing) */
static PetscErrorCode MixedMesh(MPI_Comm comm, DM *dm)
{
  PetscMPIInt       rank;
  const PetscInt    npts[2] = {5, 2}, csize[7] = {4, 3, 0, 0, 0, 0, 0}, cones[7] = {2, 3, 4, 5, 3, 6, 4}, orient[7] = {0};
  const PetscScalar x[10]   = {0, 0, 1, 0, 1, 1, 0, 1, 2, 0};
  const PetscInt    none[2] = {0, 0};

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(DMCreate(comm, dm));
  PetscCall(DMSetType(*dm, DMPLEX));
  PetscCall(DMSetDimension(*dm, 2));
  if (rank == 0) PetscCall(DMPlexCreateFromDAG(*dm, 1, npts, csize, cones, orient, x));
  else PetscCall(DMPlexCreateFromDAG(*dm, 1, none, NULL, NULL, NULL, NULL));
  PetscFunctionReturn(0);
}

static PetscErrorCode BadInput(MPI_Comm comm)
{
  DM          dm;
  Vec         sigma;
  PetscInt    cStart, cEnd;
  PetscScalar *s;

  PetscFunctionBeginUser;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  PetscCall(BoxMesh(comm, "hex_", 3, "2,2,2", &dm));
  PetscCall(TryAssemble(dm, 1.0, NULL, "hexahedra", "the DMPlex has hexahedron cells"));
  PetscCall(DMDestroy(&dm));
  PetscCall(BoxMesh(comm, "quad_", 2, "3,3", &dm));
  PetscCall(TryAssemble(dm, 1.0, NULL, "quadrilaterals", "the DMPlex has quadrilateral cells"));
  PetscCall(DMDestroy(&dm));
  PetscCall(MixedMesh(comm, &dm));
  PetscCall(TryAssemble(dm, 1.0, NULL, "mixed triangles and quadrilaterals", "mixes cell types"));
  PetscCall(DMDestroy(&dm));
  { /* without edges (not interpolated: the cells' types come from their cone sizes) */
    PetscMPIInt     rank;
    const PetscInt  quad[4] = {0, 1, 3, 2};
    const PetscReal x[8]    = {0, 0, 1, 0, 0, 1, 1, 1};

    PetscCallMPI(MPI_Comm_rank(comm, &rank));
    PetscCall(DMPlexCreateFromCellListPetsc(comm, 2, rank ? 0 : 1, rank ? 0 : 4, 4, PETSC_FALSE, quad, 2, x, &dm));
    PetscCall(TryAssemble(dm, 1.0, NULL, "a quadrilateral, not interpolated", "the DMPlex has quadrilateral cells"));
    PetscCall(DMDestroy(&dm));
  }
  PetscCall(DMDACreate2d(comm, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, 4, 4, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, &dm));
  PetscCall(DMSetUp(dm));
  PetscCall(TryAssemble(dm, 1.0, NULL, "DMDA", "needs a DMPlex"));
  PetscCall(DMDestroy(&dm));

  PetscCall(RefCellMesh(comm, "badtri_", 2, 2, PETSC_FALSE, &dm));
  PetscCall(TryAssemble(dm, -1.0, NULL, "lambda < 0", "lambda must be finite and >= 0"));
  PetscCall(TryAssemble(dm, (PetscReal)NAN, NULL, "lambda NaN", "lambda must be finite and >= 0"));
  PetscCall(DMPlexGetHeightStratum(dm, 0, &cStart, &cEnd));
  PetscCall(VecCreateMPI(comm, cEnd - cStart + 1, PETSC_DETERMINE, &sigma));
  PetscCall(VecSet(sigma, 1.0));
  PetscCall(TryAssemble(dm, 1.0, sigma, "sigma one entry too many", "one entry per local cell"));
  PetscCall(VecDestroy(&sigma));
  PetscCall(VecCreateMPI(comm, cEnd - cStart, PETSC_DETERMINE, &sigma));
  PetscCall(VecSet(sigma, 1.0));
  PetscCall(VecGetArray(sigma, &s));
  if (cEnd > cStart) s[cEnd - cStart - 1] = 0;
  PetscCall(VecRestoreArray(sigma, &s));
  PetscCall(TryAssemble(dm, 1.0, sigma, "sigma = 0 in a cell", "sigma must be positive"));
  PetscCall(VecSet(sigma, -2.0));
  PetscCall(TryAssemble(dm, 1.0, sigma, "sigma < 0", "sigma must be positive"));
  PetscCall(VecSet(sigma, 1.0));
  PetscCall(VecGetArray(sigma, &s));
  if (cEnd > cStart) s[0] = (PetscReal)NAN;
  PetscCall(VecRestoreArray(sigma, &s));
  PetscCall(TryAssemble(dm, 1.0, sigma, "sigma NaN in a cell", "NaN"));
  PetscCall(VecDestroy(&sigma));
  PetscCall(DMDestroy(&dm));

  { /* a field that is not P1 */
    PetscFE fe;

    PetscCall(RefCellMesh(comm, "p2_", 2, 2, PETSC_FALSE, &dm));
    PetscCall(PetscFECreateLagrange(comm, 2, 1, PETSC_TRUE, 2, PETSC_DETERMINE, &fe));
    PetscCall(DMSetField(dm, 0, NULL, (PetscObject)fe));
    PetscCall(PetscFEDestroy(&fe));
    PetscCall(DMCreateDS(dm));
    PetscCall(TryAssemble(dm, 1.0, NULL, "P2 field", "is not scalar P1"));
    PetscCall(DMDestroy(&dm));
  }
  { /* a flat tetrahedron */
    PetscMPIInt     rank;
    const PetscInt  cells[8]  = {0, 1, 2, 3, 1, 2, 3, 4};
    const PetscReal x[15]     = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0, 1, 1, 1};

    PetscCallMPI(MPI_Comm_rank(comm, &rank));
    PetscCall(DMPlexCreateFromCellListPetsc(comm, 3, rank ? 0 : 2, rank ? 0 : 5, 4, PETSC_TRUE, cells, 3, x, &dm));
    PetscCall(TryAssemble(dm, 1.0, NULL, "flat tetrahedron", "cells of the mesh are degenerate"));
    PetscCall(DMDestroy(&dm));
  }
  PetscCall(BadReassembly(comm));
  PetscCall(PetscPopErrorHandler());
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  MPI_Comm  comm;
  PetscBool skip_bad = PETSC_FALSE, quick = PETSC_FALSE, timing = PETSC_FALSE;
  PetscInt  refine = 0;
  DM        dm;
  Vec       sigma;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PatchworkInitializePackage());
  comm = PETSC_COMM_WORLD;
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol", &tol, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-skip_bad", &skip_bad, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-quick", &quick, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-time_reassembly", &refine, &timing));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-dm_mat_type", mattype, sizeof(mattype), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-dm_vec_type", vectype, sizeof(vectype), NULL));

  if (timing) {
    PetscCall(TimeReassembly(comm, refine));
    PetscCall(PetscFinalize());
    return 0;
  }
  if (quick) {
    PetscCall(CompareTets(comm, "regular 3^3, random sigma", TETS_REGULAR, 3, 0, 1, PETSC_TRUE, 0.5));
    PetscCall(CompareTets(comm, "annulus, lambda 0, random sigma", TETS_ANNULUS, 5, 0, 1, PETSC_TRUE, 0.0));
    PetscCall(CompareOverlap(comm, "blobs 5^3 (1,10), overlap 1 vs 0", 5, 1.0));
    PetscCall(CompareMoved(comm, "irregular 3^3, moving"));
    if (!skip_bad) PetscCall(BadReassembly(comm));
    PetscCall(PetscPrintf(comm, "%s\n", failures ? "FAILED" : "quick: the P1 matrices agree with PETSc's, reassembled ones with new assemblies"));
    PetscCall(PetscFinalize());
    return failures ? 1 : 0;
  }

  /* PETSc's own simplex meshes, random sigma */
  PetscCall(RefCellMesh(comm, "tri_", 2, 3, PETSC_TRUE, &dm));
  PetscCall(RandomSigma(dm, &sigma));
  PetscCall(Compare("petsc triangle, refined, Alfeld", dm, 0.7, sigma));
  PetscCall(VecDestroy(&sigma));
  PetscCall(RefCellMesh(comm, "tet_", 3, 2, PETSC_TRUE, &dm));
  PetscCall(RandomSigma(dm, &sigma));
  PetscCall(Compare("petsc tetrahedron, refined, Alfeld", dm, 1.3, sigma));
  PetscCall(VecDestroy(&sigma));
  PetscCall(RefCellMesh(comm, "tetr_", 3, 3, PETSC_FALSE, &dm));
  PetscCall(Compare("petsc tetrahedron, refined, lambda 0", dm, 0.0, NULL));

  /* the generators of examples/tets.h */
  PetscCall(CompareTets(comm, "regular 4^3, refined once", TETS_REGULAR, 4, 1, 1, PETSC_FALSE, 1.0));
  PetscCall(CompareTets(comm, "regular 3^3, random sigma", TETS_REGULAR, 3, 0, 1, PETSC_TRUE, 0.5));
  PetscCall(CompareTets(comm, "irregular 6^3", TETS_IRREGULAR, 6, 0, 1, PETSC_FALSE, 1.0));
  PetscCall(CompareTets(comm, "irregular 4^3, refined, random sigma", TETS_IRREGULAR, 4, 1, 1, PETSC_TRUE, 2.0));
  PetscCall(CompareTets(comm, "blobs (1,100) 6^3", TETS_BLOBS, 6, 0, 100, PETSC_FALSE, 1.0));
  PetscCall(CompareTets(comm, "annulus (1,10), refined once", TETS_ANNULUS, 4, 1, 10, PETSC_FALSE, 1.0));
  PetscCall(CompareTets(comm, "annulus, lambda 0, random sigma", TETS_ANNULUS, 5, 0, 1, PETSC_TRUE, 0.0));
  PetscCall(CompareUninterpolated(comm, "irregular 4^3, not interpolated", 4));
  PetscCall(CompareOverlap(comm, "blobs 5^3 (1,10), overlap 1 vs 0", 5, 1.0));
  PetscCall(CompareMoved(comm, "irregular 3^3, moving"));

  if (!skip_bad) PetscCall(BadInput(comm));
  PetscCall(PetscPrintf(comm, "%s%s\n", failures ? "FAILED" : "all P1 matrices agree with PETSc's FEM assembly, reassembled ones with new assemblies", failures ? "" : skip_bad ? " (bad input skipped)" : "; bad input refused"));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
