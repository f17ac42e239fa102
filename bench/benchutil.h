/* Helpers shared by the benchmark drivers in bench/: the clocks of examples/walltime.h and the
   assembled (AIJ) form of the Q_k Poisson operator that PETSc's own solvers are measured on. */
#ifndef PATCHWORK_BENCHUTIL_H
#define PATCHWORK_BENCHUTIL_H

#include <patchwork.h>
#include <patchwork/basis1d.h>
#include <petscdevice.h>
#include "../examples/walltime.h" /* Sync(): the device idle before a clock is read */

/* A DMPlex box of n^dim quadrilaterals or hexahedra on [lower, upper] (comma lists), with a coordinate
   field of the given degree, through the options of prefix bench_ (DMPlexCreateBoxMesh()'s arguments
   differ between PETSc versions); the vector and matrix types come from the unprefixed options, as
   for every other benchmark */
static inline PetscErrorCode BenchPlexBox(PetscInt dim, PetscInt n, const char *lower, const char *upper, PetscInt coord_degree, DM *dm)
{
  char      faces[64], deg[16], type[64];
  PetscBool set;

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(faces, sizeof(faces), dim == 2 ? "%d,%d" : "%d,%d,%d", (int)n, (int)n, (int)n));
  PetscCall(PetscSNPrintf(deg, sizeof(deg), "%d", (int)coord_degree));
  PetscCall(PetscOptionsSetValue(NULL, "-bench_dm_plex_dim", dim == 2 ? "2" : "3"));
  PetscCall(PetscOptionsSetValue(NULL, "-bench_dm_plex_simplex", "0"));
  PetscCall(PetscOptionsSetValue(NULL, "-bench_dm_plex_box_faces", faces));
  PetscCall(PetscOptionsSetValue(NULL, "-bench_dm_plex_box_lower", lower));
  PetscCall(PetscOptionsSetValue(NULL, "-bench_dm_plex_box_upper", upper));
  PetscCall(PetscOptionsSetValue(NULL, "-bench_dm_coord_petscspace_degree", deg));
  PetscCall(DMCreate(PETSC_COMM_WORLD, dm));
  PetscCall(DMSetType(*dm, DMPLEX));
  PetscCall(DMSetOptionsPrefix(*dm, "bench_"));
  PetscCall(DMSetFromOptions(*dm));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-dm_vec_type", type, sizeof(type), &set));
  if (set) PetscCall(DMSetVecType(*dm, type));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-dm_mat_type", type, sizeof(type), &set));
  if (set) PetscCall(DMSetMatType(*dm, type));
  PetscFunctionReturn(0);
}

static inline int CompareDouble(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median time of one y = A x over reps synchronized applies, after 3 warm-up applies; on several
   ranks each apply starts together (a barrier) and takes the slowest rank's time */
static inline PetscErrorCode TimeMult(Mat A, Vec x, Vec y, PetscInt reps, double *median)
{
  double  *t;
  MPI_Comm comm = PetscObjectComm((PetscObject)A);

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(reps, &t));
  for (PetscInt i = 0; i < 3; i++) PetscCall(MatMult(A, x, y));
  for (PetscInt i = 0; i < reps; i++) {
    PetscLogDouble t0, t1;

    PetscCall(Sync());
    PetscCallMPI(MPI_Barrier(comm));
    PetscCall(PetscTime(&t0));
    PetscCall(MatMult(A, x, y));
    PetscCall(Sync());
    PetscCall(PetscTime(&t1));
    t[i] = t1 - t0;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &t[i], 1, MPI_DOUBLE, MPI_MAX, comm));
  }
  qsort(t, (size_t)reps, sizeof(double), CompareDouble);
  *median = t[reps / 2];
  PetscCall(PetscFree(t));
  PetscFunctionReturn(0);
}

/* The global 1D mass and stiffness matrices of N cells of degree k on [0,1] */
static inline PetscErrorCode Assemble1D(PetscInt k, PetscInt N, Mat *M, Mat *K)
{
  PetscInt  n = k + 1, nn = k * N + 1, *idx;
  double    m[121], s[121];
  PetscReal h = 1.0 / N;

  PetscFunctionBeginUser;
  PetscCheck(k >= 1 && k <= 10, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Degree %" PetscInt_FMT " out of range 1..10", k);
  PetscCheck(!PatchworkTensor1DMatrices((int)k, PW_QUAD_GAUSS, m, s), PETSC_COMM_SELF, PETSC_ERR_LIB, "1D matrices");
  PetscCall(PetscMalloc1(n, &idx));
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, nn, nn, 2 * k + 1, NULL, M));
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, nn, nn, 2 * k + 1, NULL, K));
  for (PetscInt e = 0; e < N; e++) {
    PetscScalar me[121], ke[121];

    for (PetscInt i = 0; i < n; i++) idx[i] = e * k + i;
    for (PetscInt i = 0; i < n * n; i++) {
      me[i] = h * m[i];
      ke[i] = s[i] / h;
    }
    PetscCall(MatSetValues(*M, n, idx, n, idx, me, ADD_VALUES));
    PetscCall(MatSetValues(*K, n, idx, n, idx, ke, ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(*M, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*M, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(*K, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*K, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree(idx));
  PetscFunctionReturn(0);
}

/* Nonzeros of AssembleKron()'s matrix, without assembling it: the 1D matrix has (k+1)^2 entries per
   cell, less one where neighbouring cells share a node, and the Kronecker product multiplies them */
static inline PetscLogDouble KronNonzeros(PetscInt dim, PetscInt k, PetscInt N)
{
  const PetscLogDouble nnz1 = (PetscLogDouble)N * (k + 1) * (k + 1) - (N - 1);

  return dim == 3 ? nnz1 * nnz1 * nnz1 : nnz1 * nnz1;
}

/* The Q_k Laplacian on N^dim cells of the unit box, assembled in one SeqAIJ matrix in the DMDA's
   lexicographic order (x fastest), homogeneous Dirichlet rows and columns replaced by the identity.
   On a Cartesian mesh it is exactly K(x)M + M(x)K in 2D and K(x)M(x)M + M(x)K(x)M + M(x)M(x)K in 3D
   (slowest direction first). Each row is written once: its columns are the tensor product of the
   1D rows' (sorted in this ordering), its values summed in the order of MatSeqAIJKron() + MatAXPY(),
   so the matrix is bitwise theirs after MatZeroRowsColumns(): Dirichlet rows and columns keep their
   entries, zero but for 1 on the diagonal. Memory: the matrix (12 bytes per nonzero) and a row array. */
static inline PetscErrorCode AssembleKron(PetscInt dim, PetscInt k, PetscInt N, Mat *A)
{
  Mat          M, K;
  PetscInt     nn = k * N + 1, nz = dim == 3 ? nn : 1, n, w = 2 * k + 1, *off, *c1, *rnz, *cols;
  PetscScalar *m1, *k1, *vals, *mm, *km, *mk;
  PetscBool   *bnd;
  PetscCount   total = 0;

  PetscFunctionBeginUser;
  PetscCheck(dim == 2 || dim == 3, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Dimension %" PetscInt_FMT " is not 2 or 3", dim);
  PetscCheck((PetscLogDouble)nz * nn * nn <= PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_SUP, "%g rows do not fit in PetscInt", (double)nz * nn * nn);
  n = nz * nn * nn;
  PetscCall(Assemble1D(k, N, &M, &K));
  /* the 1D rows: columns, mass and stiffness values (both matrices have the same pattern) */
  PetscCall(PetscMalloc5(nn + 1, &off, nn * w, &c1, nn * w, &m1, nn * w, &k1, nn, &bnd));
  off[0] = 0;
  for (PetscInt i = 0; i < nn; i++) {
    const PetscInt    *cm, *ck;
    const PetscScalar *vm, *vk;
    PetscInt           ncm, nck;

    PetscCall(MatGetRow(M, i, &ncm, &cm, &vm));
    PetscCall(MatGetRow(K, i, &nck, &ck, &vk));
    PetscCheck(ncm == nck && ncm <= w, PETSC_COMM_SELF, PETSC_ERR_PLIB, "1D row %" PetscInt_FMT ": patterns differ", i);
    for (PetscInt j = 0; j < ncm; j++) {
      PetscCheck(cm[j] == ck[j], PETSC_COMM_SELF, PETSC_ERR_PLIB, "1D row %" PetscInt_FMT ": patterns differ", i);
      c1[off[i] + j] = cm[j];
      m1[off[i] + j] = vm[j];
      k1[off[i] + j] = vk[j];
    }
    off[i + 1] = off[i] + ncm;
    bnd[i]     = (PetscBool)(i == 0 || i == nn - 1);
    PetscCall(MatRestoreRow(M, i, &ncm, &cm, &vm));
    PetscCall(MatRestoreRow(K, i, &nck, &ck, &vk));
  }
  PetscCall(MatDestroy(&M));
  PetscCall(MatDestroy(&K));
  /* exact preallocation; the nonzero count is checked in 64 bits before PETSc sums it in PetscInt */
  PetscCall(PetscMalloc1(n, &rnz));
  for (PetscInt z = 0; z < nz; z++)
    for (PetscInt y = 0; y < nn; y++)
      for (PetscInt x = 0; x < nn; x++) {
        PetscInt r = (z * nn + y) * nn + x;

        rnz[r] = (dim == 3 ? off[z + 1] - off[z] : 1) * (off[y + 1] - off[y]) * (off[x + 1] - off[x]);
        total += rnz[r];
      }
  PetscCheck(total <= PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_SUP, "%.4g nonzeros do not fit in PetscInt", (double)total);
  PetscCall(MatCreate(PETSC_COMM_SELF, A));
  PetscCall(MatSetSizes(*A, n, n, n, n));
  PetscCall(MatSetType(*A, MATSEQAIJ));
  PetscCall(MatSeqAIJSetPreallocation(*A, 0, rnz));
  PetscCall(PetscFree(rnz));
  /* each row is set whole, in one call, with sorted columns */
  PetscCall(MatSetOption(*A, MAT_SORTED_FULL, PETSC_TRUE));
  PetscCall(MatSetOption(*A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  PetscCall(PetscMalloc5(w * w * (dim == 3 ? w : 1), &cols, w * w * (dim == 3 ? w : 1), &vals, w * w, &mm, w * w, &km, w * w, &mk));
  for (PetscInt z = 0; z < nz; z++) {
    /* in 2D the z factor is a single dummy entry */
    const PetscInt z0 = dim == 3 ? off[z] : 0, z1 = dim == 3 ? off[z + 1] : 1;

    for (PetscInt y = 0; y < nn; y++) {
      for (PetscInt x = 0; x < nn; x++) {
        const PetscInt  row = (z * nn + y) * nn + x, ly = off[y + 1] - off[y], lx = off[x + 1] - off[x];
        const PetscBool brow = (PetscBool)(bnd[x] || bnd[y] || (dim == 3 && bnd[z]));
        PetscInt        nr = 0;

        /* the (y,x) factors of the three terms */
        for (PetscInt b = 0; b < ly; b++)
          for (PetscInt c = 0; c < lx; c++) {
            const PetscInt p = off[y] + b, q = off[x] + c;

            mm[b * lx + c] = m1[p] * m1[q];
            km[b * lx + c] = k1[p] * m1[q];
            mk[b * lx + c] = m1[p] * k1[q];
          }
        for (PetscInt a = z0; a < z1; a++) {
          const PetscInt    cz = dim == 3 ? c1[a] : 0;
          const PetscScalar Mz = dim == 3 ? m1[a] : 1, Kz = dim == 3 ? k1[a] : 0;
          const PetscBool   bz = (PetscBool)(dim == 3 && bnd[cz]);

          for (PetscInt b = 0; b < ly; b++) {
            const PetscInt  cy = c1[off[y] + b];
            const PetscBool bzy = (PetscBool)(bz || bnd[cy]);

            for (PetscInt c = 0; c < lx; c++, nr++) {
              const PetscInt cx = c1[off[x] + c], e = b * lx + c;

              cols[nr] = (cz * nn + cy) * nn + cx;
              if (brow) vals[nr] = cols[nr] == row ? 1.0 : 0.0;
              else if (bzy || bnd[cx]) vals[nr] = 0.0;
              else if (dim == 3) vals[nr] = Kz * mm[e] + Mz * km[e] + Mz * mk[e];
              else vals[nr] = km[e] + mk[e];
            }
          }
        }
        PetscCall(MatSetValues(*A, 1, &row, nr, cols, vals, INSERT_VALUES));
      }
    }
  }
  PetscCall(MatSetOption(*A, MAT_SORTED_FULL, PETSC_FALSE)); /* later MatSetValues() as usual */
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree5(cols, vals, mm, km, mk));
  PetscCall(PetscFree5(off, c1, m1, k1, bnd));
  PetscFunctionReturn(0);
}

#endif
