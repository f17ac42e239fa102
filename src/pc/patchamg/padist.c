/* PCPATCHAMG on several ranks: each rank's rows of the smoothed prolongator P = (I - diag(s) A) P~ and of
   the Galerkin operator P^T A P by the product kernels of amg_kernel.h, on the GPU where the level is,
   equal to what one rank computes for the whole matrix (the couplings to other ranks included, so the
   iterations do not grow with the ranks as the block-diagonal prolongator of pampi.c's makes them).

   The rank's rows are extended by its ghosts (the columns of A's off-diagonal block), whose rows are
   empty in the extended matrix A_x = [A_d  A_o; 0 0]:
   - P's rows: the kernel smooths the extended rows with the ghosts' tentative values and aggregates
     (fetched from their owners), whose own rows, being empty, stay tentative and are dropped.
   - P^T A P's rows: with the ghosts' rows of P (fetched whole) below the rank's own, P_x^T A_x P_x
     = P_r^T (A_d P_r + A_o P_g), the rank's share of the sum over fine rows. Its rows of the rank's
     aggregates are its own; the others go to their owners, which add them to theirs.
   Coarse columns are numbered locally: the rank's aggregates first, then the others it meets in
   ascending global order. Only rows next to other ranks travel (through PetscSF, GPU to GPU where MPI
   takes device memory); the O(n) work is the kernels', on the side the level lives. */
#include "paimpl.h"
#include <petscsf.h>
#include <petscsection.h>
#include <patchwork/vec_kernel.h>

#if !defined(PATCHWORK_HAVE_CUDA)
  /* never called without CUDA: pa->device is false then */
  #define PatchworkSATentativeCUDA(...)     1
  #define PatchworkSASmoothCUDA(...)        1
  #define PatchworkGalerkinCUDA(...)        1
  #define PatchworkCSRJoinColumnsCUDA(...)  1
  #define PatchworkCSRSplitColumnsCUDA(...) 1
  #define PatchworkIntMapCUDA(...)          1
  #define PatchworkCSRMatrixFreeCUDA(M)     ((void)(M))
#endif

/* bytes from src to dst, each on the side its flag says (host: memcpy) */
static PetscErrorCode Copy(PetscBool dst_dev, void *dst, PetscBool src_dev, const void *src, size_t bytes)
{
  PetscFunctionBegin;
  if (!bytes) PetscFunctionReturn(PETSC_SUCCESS);
  if (!dst_dev && !src_dev) {
    PetscCall(PetscMemcpy(dst, src, bytes));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#if defined(PATCHWORK_HAVE_CUDA)
  {
    void *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
    if (dst_dev && src_dev) PatchworkCallKernel(PatchworkDeviceCopy(dst, src, bytes, stream));
    else if (dst_dev) PatchworkCallKernel(PatchworkDeviceCopyToDevice(dst, src, bytes, stream));
    else PatchworkCallKernel(PatchworkDeviceCopyToHost(dst, src, bytes, stream));
    if (dst_dev) PatchworkCallKernel(PatchworkDeviceStreamSynchronize(stream)); /* the host source may go next */
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Arrays of a CSR matrix the kernels' way: malloc on the host, cudaMalloc on the device, so that
   PatchworkCSRMatrixFree(CUDA) frees them */
static PetscErrorCode CSRAlloc(PetscBool dev, int nrow, int ncol, int nnz, PatchworkCSRMatrix *M)
{
  PetscFunctionBegin;
  *M = (PatchworkCSRMatrix){nrow, ncol, nnz, NULL, NULL, NULL};
  if (dev) {
#if defined(PATCHWORK_HAVE_CUDA)
    PatchworkCallKernel(PatchworkDeviceMalloc(sizeof(int) * ((size_t)nrow + 1), (void **)&M->ptr));
    PatchworkCallKernel(PatchworkDeviceMalloc(sizeof(int) * PetscMax((size_t)nnz, 1), (void **)&M->col));
    PatchworkCallKernel(PatchworkDeviceMalloc(sizeof(double) * PetscMax((size_t)nnz, 1), (void **)&M->val));
#endif
  } else {
    M->ptr = (int *)malloc(sizeof(int) * ((size_t)nrow + 1));
    M->col = (int *)malloc(sizeof(int) * PetscMax((size_t)nnz, 1));
    M->val = (double *)malloc(sizeof(double) * PetscMax((size_t)nnz, 1));
    PetscCheck(M->ptr && M->col && M->val, PETSC_COMM_SELF, PETSC_ERR_MEM, "PCPATCHAMG: no memory for a %d x %d matrix with %d entries", nrow, ncol, nnz);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void CSRFree(PetscBool dev, PatchworkCSRMatrix *M)
{
  if (dev) PatchworkCSRMatrixFreeCUDA(M);
  else PatchworkCSRMatrixFree(M);
}

/* The rank owning entry i of a layout of starts off[0..size] */
static PetscMPIInt OwnerOf(PetscInt i, const PetscInt off[], PetscMPIInt size)
{
  PetscMPIInt lo = 0, hi = size - 1;

  while (lo < hi) {
    const PetscMPIInt mid = (lo + hi + 1) / 2;

    if (off[mid] <= i) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/* The local number of global coarse column J: this rank's aggregates first, then the sorted others R */
static PetscErrorCode LocalColumn(PetscInt J, PetscInt cstart, PetscInt nc, PetscInt nr, const PetscInt R[], int *j)
{
  PetscInt loc;

  PetscFunctionBegin;
  if (J >= cstart && J < cstart + nc) {
    *j = (int)(J - cstart);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscFindInt(J, nr, R, &loc));
  PetscCheck(loc >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCPATCHAMG: coarse column %" PetscInt_FMT " is not numbered here", J);
  *j = (int)(nc + loc);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The global number of local coarse column j */
static inline PetscInt GlobalColumn(int j, PetscInt cstart, PetscInt nc, const PetscInt R[])
{
  return j < nc ? cstart + j : R[j - nc];
}

/* Row i of a host CSR whose local columns j are GlobalColumn(j), as (global column, value) pairs in
   ascending order (local columns ascend as this rank's, then R's: the others below this rank's range
   come first); returns their count */
static PetscInt RowInGlobalOrder(const PatchworkCSRMatrix *M, PetscInt i, PetscInt cstart, PetscInt nc, const PetscInt R[], PetscInt col[], PetscScalar val[])
{
  PetscInt m = 0;

  for (int e = M->ptr[i]; e < M->ptr[i + 1]; e++)
    if (M->col[e] >= nc && R[M->col[e] - nc] < cstart) {
      col[m]   = R[M->col[e] - nc];
      val[m++] = M->val[e];
    }
  for (int e = M->ptr[i]; e < M->ptr[i + 1]; e++)
    if (M->col[e] < nc || R[M->col[e] - nc] > cstart) {
      col[m]   = GlobalColumn(M->col[e], cstart, nc, R);
      val[m++] = M->val[e];
    }
  return m;
}

/* The longest row of a host CSR */
static PetscInt LongestRow(const PatchworkCSRMatrix *M)
{
  PetscInt len = 0;

  for (int i = 0; i < M->nrow; i++) len = PetscMax(len, M->ptr[i + 1] - M->ptr[i]);
  return len;
}

/* The split rows of a host CSR M whose local columns j are GlobalColumn(j): diagonal block (j < nc)
   and global others, each row ascending */
static PetscErrorCode SplitHostRows(const PatchworkCSRMatrix *M, PetscInt cstart, PetscInt nc, const PetscInt R[], PetscInt **dptr, PetscInt **dcol, PetscScalar **dval, PetscInt **optr, PetscInt **ocol, PetscScalar **oval)
{
  const PetscInt m = M->nrow, maxlen = LongestRow(M);
  PetscInt       nd = 0, no, *rcol;
  PetscScalar   *rval;

  PetscFunctionBegin;
  for (int e = 0; e < M->nnz; e++) nd += M->col[e] < nc;
  no = M->nnz - nd;
  PetscCall(PetscMalloc3(m + 1, dptr, PetscMax(nd, 1), dcol, PetscMax(nd, 1), dval));
  PetscCall(PetscMalloc3(m + 1, optr, PetscMax(no, 1), ocol, PetscMax(no, 1), oval));
  PetscCall(PetscMalloc2(PetscMax(maxlen, 1), &rcol, PetscMax(maxlen, 1), &rval));
  (*dptr)[0] = (*optr)[0] = 0;
  for (PetscInt i = 0; i < m; i++) {
    const PetscInt len = RowInGlobalOrder(M, i, cstart, nc, R, rcol, rval);
    PetscInt       d = (*dptr)[i], o = (*optr)[i];

    for (PetscInt q = 0; q < len; q++) {
      if (rcol[q] >= cstart && rcol[q] < cstart + nc) {
        (*dcol)[d]   = rcol[q] - cstart;
        (*dval)[d++] = rval[q];
      } else {
        (*ocol)[o]   = rcol[q];
        (*oval)[o++] = rval[q];
      }
    }
    (*dptr)[i + 1] = d;
    (*optr)[i + 1] = o;
  }
  PetscCall(PetscFree2(rcol, rval));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* What the rows of one level share: sizes, the coarse layout, the ghosts' SF */
typedef struct {
  MPI_Comm    comm;
  PetscBool   dev;
  PetscMPIInt size;
  PetscInt    n, ng, nc, cstart, *coff; /* coff[size+1]: every rank's first coarse row */
  PetscSF     sf;                      /* leaves: A's ghost columns, roots: their rows on their owners */
  void       *stream;
} Dist;

/* Every ghost's aggregate (global number) and tentative value, from its owner (host arrays) */
static PetscErrorCode GhostTentative(Dist *D, const int *agg, const double *t, PetscInt **gagg, double **tg)
{
  const PetscMemType mt = D->dev ? PETSC_MEMTYPE_DEVICE : PETSC_MEMTYPE_HOST;
  const PetscSFNode *remote;
  PetscInt           nroots;
  int               *local;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(PetscMax(D->ng, 1), &local));
  PetscCall(PetscMalloc1(PetscMax(D->ng, 1), gagg));
  PetscCall(PetscMalloc1(PetscMax(D->ng, 1), tg));
  PetscCall(PetscSFBcastWithMemTypeBegin(D->sf, MPI_INT, mt, agg, PETSC_MEMTYPE_HOST, local, MPI_REPLACE));
  PetscCall(PetscSFBcastEnd(D->sf, MPI_INT, agg, local, MPI_REPLACE));
  PetscCall(PetscSFBcastWithMemTypeBegin(D->sf, MPI_DOUBLE, mt, t, PETSC_MEMTYPE_HOST, *tg, MPI_REPLACE));
  PetscCall(PetscSFBcastEnd(D->sf, MPI_DOUBLE, t, *tg, MPI_REPLACE));
  PetscCall(PetscSFGetGraph(D->sf, &nroots, NULL, NULL, &remote));
  for (PetscInt g = 0; g < D->ng; g++) (*gagg)[g] = D->coff[remote[g].rank] + local[g];
  PetscCall(PetscFree(local));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* P's rows (n of them, columns local: the rank's aggregates, then R1, the ghosts' sorted): the kernel on
   the extended rows Ax, the ghosts' rows dropped. agg, t, s: the rank's, on the level's side */
static PetscErrorCode ProlongatorRows(Dist *D, const PatchworkCSR *Ax, const int *agg, const double *t, const double *s, const PetscInt gagg[], const double tg[], PetscInt *nr1, PetscInt **R1, PatchworkCSRMatrix *P)
{
  const PetscInt n = D->n, ng = D->ng, nc = D->nc;
  int           *xagg, *hagg, nnz, err;
  double        *xt, *xs, *zero;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(PetscMax(ng, 1), R1));
  PetscCall(PetscArraycpy(*R1, gagg, ng));
  *nr1 = ng;
  PetscCall(PetscSortRemoveDupsInt(nr1, *R1));
  PetscCall(PetscMalloc2(PetscMax(ng, 1), &hagg, PetscMax(ng, 1), &zero));
  for (PetscInt g = 0; g < ng; g++) {
    PetscCall(LocalColumn(gagg[g], D->cstart, nc, *nr1, *R1, &hagg[g]));
    zero[g] = 0;
  }
  PetscCall(PatchworkMalloc(D->dev, sizeof(int) * PetscMax(n + ng, 1), (void **)&xagg));
  PetscCall(PatchworkMalloc(D->dev, sizeof(double) * PetscMax(n + ng, 1), (void **)&xt));
  PetscCall(PatchworkMalloc(D->dev, sizeof(double) * PetscMax(n + ng, 1), (void **)&xs));
  PetscCall(Copy(D->dev, xagg, D->dev, agg, sizeof(int) * n));
  PetscCall(Copy(D->dev, xagg + n, PETSC_FALSE, hagg, sizeof(int) * ng));
  PetscCall(Copy(D->dev, xt, D->dev, t, sizeof(double) * n));
  PetscCall(Copy(D->dev, xt + n, PETSC_FALSE, tg, sizeof(double) * ng));
  PetscCall(Copy(D->dev, xs, D->dev, s, sizeof(double) * n));
  PetscCall(Copy(D->dev, xs + n, PETSC_FALSE, zero, sizeof(double) * ng)); /* the ghosts' rows stay tentative */
  PetscCall(PetscFree2(hagg, zero));
  if (D->dev) err = PatchworkSASmoothCUDA(Ax, xagg, (int)(nc + *nr1), xt, xs, P, D->stream);
  else err = PatchworkSASmoothRef(Ax, xagg, (int)(nc + *nr1), xt, xs, P);
  PetscCheck(!err, PETSC_COMM_SELF, PETSC_ERR_LIB, "PCPATCHAMG: the smoothed prolongator's rows failed (error %d)", err);
  PetscCall(PatchworkFree(D->dev, &xagg));
  PetscCall(PatchworkFree(D->dev, &xt));
  PetscCall(PatchworkFree(D->dev, &xs));
  PetscCall(Copy(PETSC_FALSE, &nnz, D->dev, P->ptr + n, sizeof(int)));
  P->nrow = (int)n; /* the arrays keep the ghosts' rows at their end, unused */
  P->nnz  = nnz;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The ghosts' rows of P from their owners, host CSR with global columns; colg: P's columns in global
   numbers, on the level's side */
static PetscErrorCode GhostRows(Dist *D, const PatchworkCSRMatrix *P, const int *colg, PetscInt **gptr, PetscInt **gcol, PetscScalar **gval)
{
  const PetscMemType mt = D->dev ? PETSC_MEMTYPE_DEVICE : PETSC_MEMTYPE_HOST;
  PetscSection       root, leaf;
  PetscSF            esf;
  PetscInt          *roff = NULL, ne;
  int               *ptr;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(D->n + 1, &ptr));
  PetscCall(Copy(PETSC_FALSE, ptr, D->dev, P->ptr, sizeof(int) * (D->n + 1)));
  PetscCall(PetscSectionCreate(PETSC_COMM_SELF, &root));
  PetscCall(PetscSectionSetChart(root, 0, D->n));
  for (PetscInt i = 0; i < D->n; i++) PetscCall(PetscSectionSetDof(root, i, ptr[i + 1] - ptr[i]));
  PetscCall(PetscSectionSetUp(root));
  PetscCall(PetscFree(ptr));
  PetscCall(PetscSectionCreate(PETSC_COMM_SELF, &leaf));
  PetscCall(PetscSFDistributeSection(D->sf, root, &roff, leaf));
  PetscCall(PetscSFCreateSectionSF(D->sf, root, roff, leaf, &esf));
  PetscCall(PetscFree(roff));
  PetscCall(PetscSectionGetStorageSize(leaf, &ne));
  PetscCall(PetscMalloc1(D->ng + 1, gptr));
  PetscCall(PetscMalloc2(PetscMax(ne, 1), gcol, PetscMax(ne, 1), gval));
  (*gptr)[0] = 0;
  for (PetscInt g = 0; g < D->ng; g++) {
    PetscInt off, dof;

    PetscCall(PetscSectionGetOffset(leaf, g, &off));
    PetscCall(PetscSectionGetDof(leaf, g, &dof));
    PetscCheck(off == (*gptr)[g], PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCPATCHAMG: the ghosts' rows arrive out of order");
    (*gptr)[g + 1] = off + dof;
  }
  PetscCall(PetscSFBcastWithMemTypeBegin(esf, MPI_INT, mt, colg, PETSC_MEMTYPE_HOST, *gcol, MPI_REPLACE));
  PetscCall(PetscSFBcastEnd(esf, MPI_INT, colg, *gcol, MPI_REPLACE));
  PetscCall(PetscSFBcastWithMemTypeBegin(esf, MPI_DOUBLE, mt, P->val, PETSC_MEMTYPE_HOST, *gval, MPI_REPLACE));
  PetscCall(PetscSFBcastEnd(esf, MPI_DOUBLE, P->val, *gval, MPI_REPLACE));
  PetscCall(PetscSFDestroy(&esf));
  PetscCall(PetscSectionDestroy(&leaf));
  PetscCall(PetscSectionDestroy(&root));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A table on the level's side: count ints from the host */
static PetscErrorCode PlaceTable(PetscBool dev, PetscInt count, const int host[], int **table)
{
  PetscFunctionBegin;
  PetscCall(PatchworkMalloc(dev, sizeof(int) * PetscMax(count, 1), (void **)table));
  PetscCall(Copy(dev, *table, PETSC_FALSE, host, sizeof(int) * count));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MapInts(Dist *D, PetscInt n, const int *table, PetscInt nmap, int *idx)
{
  int err;

  PetscFunctionBegin;
  if (D->dev) err = PatchworkIntMapCUDA((int)n, table, (int)nmap, idx, D->stream);
  else err = PatchworkIntMapRef((int)n, table, (int)nmap, idx);
  PetscCheck(!err, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCPATCHAMG: a column renumbering failed (error %d)", err);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* P's columns in global numbers (a new array on the level's side) */
static PetscErrorCode GlobalColumns(Dist *D, const PatchworkCSRMatrix *P, PetscInt nr1, const PetscInt R1[], int **colg)
{
  int *h, *table;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(D->nc + nr1, &h));
  for (PetscInt j = 0; j < D->nc + nr1; j++) h[j] = (int)GlobalColumn((int)j, D->cstart, D->nc, R1);
  PetscCall(PlaceTable(D->dev, D->nc + nr1, h, &table));
  PetscCall(PetscFree(h));
  PetscCall(PatchworkMalloc(D->dev, sizeof(int) * PetscMax(P->nnz, 1), (void **)colg));
  PetscCall(Copy(D->dev, *colg, D->dev, P->col, sizeof(int) * P->nnz));
  PetscCall(MapInts(D, P->nnz, table, D->nc + nr1, *colg));
  PetscCall(PatchworkFree(D->dev, &table));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* *Rx: R and the columns in extra[] of other ranks, ascending without repeats */
static PetscErrorCode ExtendColumns(Dist *D, PetscInt nr, const PetscInt R[], PetscInt nextra, const PetscInt extra[], PetscInt *nrx, PetscInt **Rx)
{
  PetscInt m = nr;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(nr + nextra + 1, Rx));
  PetscCall(PetscArraycpy(*Rx, R, nr));
  for (PetscInt e = 0; e < nextra; e++)
    if (extra[e] < D->cstart || extra[e] >= D->cstart + D->nc) (*Rx)[m++] = extra[e];
  PetscCall(PetscSortRemoveDupsInt(&m, *Rx));
  *nrx = m;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* idx[0..n) (on the level's side), local columns of R, renumbered in place to those of Rx (which holds R):
   monotone, so rows stay ascending */
static PetscErrorCode RenumberColumns(Dist *D, PetscInt nr, const PetscInt R[], PetscInt nrx, const PetscInt Rx[], PetscInt n, int *idx)
{
  int *h, *table;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(D->nc + nr, &h));
  for (PetscInt j = 0; j < D->nc + nr; j++) PetscCall(LocalColumn(GlobalColumn((int)j, D->cstart, D->nc, R), D->cstart, D->nc, nrx, Rx, &h[j]));
  PetscCall(PlaceTable(D->dev, D->nc + nr, h, &table));
  PetscCall(PetscFree(h));
  PetscCall(MapInts(D, n, table, D->nc + nr, idx));
  PetscCall(PatchworkFree(D->dev, &table));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* P_x: P's rows (renumbered in place from R1's columns to R2's) over the ghosts' (host, global columns,
   renumbered and sorted here), columns local to R2 = R1 and the others the ghosts' rows reach */
static PetscErrorCode StackRows(Dist *D, PatchworkCSRMatrix *P, PetscInt nr1, const PetscInt R1[], PetscInt gptr[], PetscInt gcol[], PetscScalar gval[], PetscInt *nr2, PetscInt **R2, PatchworkCSRMatrix *Px)
{
  const PetscInt ne = gptr[D->ng];
  PetscInt       m;
  int           *tail;

  PetscFunctionBegin;
  PetscCall(ExtendColumns(D, nr1, R1, ne, gcol, nr2, R2));
  m = *nr2;
  PetscCall(RenumberColumns(D, nr1, R1, m, *R2, P->nnz, P->col));
  for (PetscInt e = 0; e < ne; e++) {
    int j;

    PetscCall(LocalColumn(gcol[e], D->cstart, D->nc, m, *R2, &j));
    gcol[e] = j;
  }
  for (PetscInt g = 0; g < D->ng; g++) PetscCall(PetscSortIntWithScalarArray(gptr[g + 1] - gptr[g], gcol + gptr[g], gval + gptr[g]));
  PetscCall(CSRAlloc(D->dev, (int)(D->n + D->ng), (int)(D->nc + m), (int)(P->nnz + ne), Px));
  PetscCall(PetscMalloc1(PetscMax(D->ng, 1), &tail));
  for (PetscInt g = 0; g < D->ng; g++) tail[g] = (int)(P->nnz + gptr[g + 1]);
  PetscCall(Copy(D->dev, Px->ptr, D->dev, P->ptr, sizeof(int) * (D->n + 1)));
  PetscCall(Copy(D->dev, Px->ptr + D->n + 1, PETSC_FALSE, tail, sizeof(int) * D->ng));
  PetscCall(Copy(D->dev, Px->col, D->dev, P->col, sizeof(int) * P->nnz));
  PetscCall(Copy(D->dev, Px->col + P->nnz, PETSC_FALSE, gcol, sizeof(int) * ne));
  PetscCall(Copy(D->dev, Px->val, D->dev, P->val, sizeof(double) * P->nnz));
  PetscCall(Copy(D->dev, Px->val + P->nnz, PETSC_FALSE, gval, sizeof(double) * ne));
  PetscCall(PetscFree(tail));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The rows of the Galerkin product that belong to other ranks (R2's; host, entries fptr[r] ..
   fptr[r+1] - 1 of fcol, columns local to R2, and fval), sent to their owners; *rrow, *rcol (global)
   and *rval: the entries other ranks sent here */
static PetscErrorCode ExchangeForeignRows(Dist *D, PetscInt nr2, const PetscInt R2[], const int fptr[], const int fcol[], const double fval[], PetscInt *nrecv, PetscInt **rrow, PetscInt **rcol, PetscScalar **rval)
{
  PetscMPIInt  nto = 0, nfrom, *to, *from, tag[2];
  PetscInt    *cnt, *fromcnt, *sidx, total = 0;
  PetscScalar *sval;
  MPI_Request *req;
  PetscInt     first = fptr[0], nsend = fptr[nr2] - first;

  PetscFunctionBegin;
  PetscCall(PetscMalloc2(D->size, &to, D->size, &cnt));
  for (PetscInt r = 0; r < nr2; r++) { /* R2 ascends, so its owners do */
    const PetscMPIInt o = OwnerOf(R2[r], D->coff, D->size);
    const PetscInt    c = fptr[r + 1] - fptr[r];

    if (!c) continue;
    if (!nto || to[nto - 1] != o) {
      to[nto]    = o;
      cnt[nto++] = 0;
    }
    cnt[nto - 1] += c;
  }
  PetscCall(PetscMalloc2(2 * PetscMax(nsend, 1), &sidx, PetscMax(nsend, 1), &sval));
  for (PetscInt r = 0; r < nr2; r++)
    for (int e = fptr[r]; e < fptr[r + 1]; e++) {
      sidx[2 * (e - first)]     = R2[r];
      sidx[2 * (e - first) + 1] = GlobalColumn(fcol[e], D->cstart, D->nc, R2);
      sval[e - first]           = fval[e];
    }
  PetscCall(PetscCommBuildTwoSided(D->comm, 1, MPIU_INT, nto, to, cnt, &nfrom, &from, &fromcnt));
  for (PetscMPIInt q = 0; q < nfrom; q++) total += fromcnt[q];
  PetscCall(PetscMalloc3(PetscMax(total, 1), rrow, PetscMax(total, 1), rcol, PetscMax(total, 1), rval));
  {
    PetscInt *ridx, off = 0;

    PetscCall(PetscMalloc1(2 * PetscMax(total, 1), &ridx));
    PetscCall(PetscMalloc1(2 * (nto + nfrom), &req));
    PetscCall(PetscCommGetNewTag(D->comm, &tag[0])); /* two tags of their own: tag + 1 may be another's */
    PetscCall(PetscCommGetNewTag(D->comm, &tag[1]));
    for (PetscMPIInt q = 0; q < nfrom; q++) {
      PetscMPIInt c2, c1;

      PetscCall(PetscMPIIntCast(2 * fromcnt[q], &c2));
      PetscCall(PetscMPIIntCast(fromcnt[q], &c1));
      PetscCallMPI(MPI_Irecv(ridx + 2 * off, c2, MPIU_INT, from[q], tag[0], D->comm, &req[2 * q]));
      PetscCallMPI(MPI_Irecv(*rval + off, c1, MPIU_SCALAR, from[q], tag[1], D->comm, &req[2 * q + 1]));
      off += fromcnt[q];
    }
    off = 0;
    for (PetscMPIInt q = 0; q < nto; q++) {
      PetscMPIInt c2, c1;

      PetscCall(PetscMPIIntCast(2 * cnt[q], &c2));
      PetscCall(PetscMPIIntCast(cnt[q], &c1));
      PetscCallMPI(MPI_Isend(sidx + 2 * off, c2, MPIU_INT, to[q], tag[0], D->comm, &req[2 * nfrom + 2 * q]));
      PetscCallMPI(MPI_Isend(sval + off, c1, MPIU_SCALAR, to[q], tag[1], D->comm, &req[2 * nfrom + 2 * q + 1]));
      off += cnt[q];
    }
    PetscCallMPI(MPI_Waitall(2 * (nto + nfrom), req, MPI_STATUSES_IGNORE));
    for (PetscInt e = 0; e < total; e++) {
      (*rrow)[e] = ridx[2 * e];
      (*rcol)[e] = ridx[2 * e + 1];
      PetscCheck((*rrow)[e] >= D->cstart && (*rrow)[e] < D->cstart + D->nc, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCPATCHAMG: a Galerkin row %" PetscInt_FMT " arrived at the wrong rank", (*rrow)[e]);
    }
    PetscCall(PetscFree(ridx));
    PetscCall(PetscFree(req));
  }
  *nrecv = total;
  PetscCall(PetscFree(from));
  PetscCall(PetscFree(fromcnt));
  PetscCall(PetscFree2(sidx, sval));
  PetscCall(PetscFree2(to, cnt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The received entries by row (a counting sort, stable), each row's by column: rcol, rval reordered in
   place, *rptr (nc + 1) the rows' starts */
static PetscErrorCode ReceivedByRow(Dist *D, PetscInt nrecv, const PetscInt rrow[], PetscInt rcol[], PetscScalar rval[], PetscInt **rptr)
{
  const PetscInt nc = D->nc;
  PetscInt      *next, *c;
  PetscScalar   *v;

  PetscFunctionBegin;
  PetscCall(PetscCalloc1(nc + 1, rptr));
  for (PetscInt e = 0; e < nrecv; e++) (*rptr)[rrow[e] - D->cstart + 1]++;
  for (PetscInt i = 0; i < nc; i++) (*rptr)[i + 1] += (*rptr)[i];
  PetscCall(PetscMalloc3(nc + 1, &next, PetscMax(nrecv, 1), &c, PetscMax(nrecv, 1), &v));
  PetscCall(PetscArraycpy(next, *rptr, nc + 1));
  for (PetscInt e = 0; e < nrecv; e++) {
    const PetscInt p = next[rrow[e] - D->cstart]++;

    c[p] = rcol[e];
    v[p] = rval[e];
  }
  PetscCall(PetscArraycpy(rcol, c, nrecv));
  PetscCall(PetscArraycpy(rval, v, nrecv));
  PetscCall(PetscFree3(next, c, v));
  for (PetscInt i = 0; i < nc; i++) PetscCall(PetscSortIntWithScalarArray((*rptr)[i + 1] - (*rptr)[i], rcol + (*rptr)[i], rval + (*rptr)[i]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The next level's matrix, of type: this rank's rows of Ac (host, columns local to R2) plus the entries
   other ranks computed for them */
static PetscErrorCode CoarseMatrix(Dist *D, MatType type, const PatchworkCSRMatrix *Ac, PetscInt nr2, const PetscInt R2[], Mat *B)
{
  const PetscInt nc = D->nc;
  PetscInt       nrecv, *rrow, *rcol, *rptr, *dptr, *dcol, *optr, *ocol, maxlen = 0, *mcol;
  PetscScalar   *rval, *dval, *oval, *mval;
  PetscInt       bound;

  PetscFunctionBegin;
  PetscCall(ExchangeForeignRows(D, nr2, R2, Ac->ptr + nc, Ac->col, Ac->val, &nrecv, &rrow, &rcol, &rval));
  PetscCall(ReceivedByRow(D, nrecv, rrow, rcol, rval, &rptr));
  maxlen = LongestRow(Ac);
  /* merged rows: the own row in global order and the received one, equal columns added; then split into the diagonal block and the others */
  bound = Ac->ptr[nc] + nrecv;
  PetscCall(PetscMalloc3(nc + 1, &dptr, PetscMax(bound, 1), &dcol, PetscMax(bound, 1), &dval));
  PetscCall(PetscMalloc3(nc + 1, &optr, PetscMax(bound, 1), &ocol, PetscMax(bound, 1), &oval));
  PetscCall(PetscMalloc2(PetscMax(maxlen, 1), &mcol, PetscMax(maxlen, 1), &mval));
  dptr[0] = optr[0] = 0;
  for (PetscInt i = 0; i < nc; i++) {
    const PetscInt m = RowInGlobalOrder(Ac, i, D->cstart, nc, R2, mcol, mval);
    PetscInt       d = dptr[i], o = optr[i], a = 0, b = rptr[i];

    while (a < m || b < rptr[i + 1]) {
      PetscInt    J;
      PetscScalar v;

      if (b == rptr[i + 1] || (a < m && mcol[a] < rcol[b])) {
        J = mcol[a];
        v = mval[a++];
      } else if (a == m || rcol[b] < mcol[a]) {
        J = rcol[b];
        v = rval[b++];
      } else {
        J = mcol[a];
        v = mval[a++] + rval[b++];
      }
      while (b < rptr[i + 1] && rcol[b] == J) v += rval[b++]; /* several ranks' entries of one column */
      if (J >= D->cstart && J < D->cstart + nc) {
        dcol[d]   = J - D->cstart;
        dval[d++] = v;
      } else {
        ocol[o]   = J;
        oval[o++] = v;
      }
    }
    dptr[i + 1] = d;
    optr[i + 1] = o;
  }
  PetscCall(PatchworkMatCreateAIJSplit(D->comm, type, nc, nc, dptr, dcol, dval, optr, ocol, oval, B));
  PetscCall(PetscFree2(mcol, mval));
  PetscCall(PetscFree3(dptr, dcol, dval));
  PetscCall(PetscFree3(optr, ocol, oval));
  PetscCall(PetscFree(rptr));
  PetscCall(PetscFree3(rrow, rcol, rval));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if defined(PATCHWORK_HAVE_CUDA)
/* The next level's matrix on the device route: Ac (device, columns local to R2) stays there but for its
   foreign rows, which go to their owners; the received entries (duplicates summed) are added to the
   rank's own rows by PatchworkCSRAdd on the device, with the columns renumbered to R3 = R2 and the
   received ones; the result split into the two blocks comes to the host only for PETSc's matrix. Ac's
   own rows' columns are renumbered in place. */
static PetscErrorCode CoarseMatrixDevice(Dist *D, MatType type, PatchworkCSRMatrix *Ac, PetscInt nr2, const PetscInt R2[], Mat *B)
{
  const PetscInt     nc = D->nc;
  int               *fptr, *fcol, *bptr, *bcol, nf, first, err;
  double            *fval, *bval;
  PetscInt           nrecv, *rrow, *rcol, *rptr, nr3 = 0, *R3, nb = 0, *dptr, *dcol, *optr, *ocol;
  PetscScalar       *rval, *dval, *oval;
  PatchworkCSRMatrix Bd = {0}, C = {0}, Cd = {0}, Co = {0};
  PatchworkCSR       Aown, Bown;

  PetscFunctionBegin;
  /* the foreign rows to the host and to their owners */
  PetscCall(PetscMalloc1(nr2 + 1, &fptr));
  PetscCall(Copy(PETSC_FALSE, fptr, PETSC_TRUE, Ac->ptr + nc, sizeof(int) * (nr2 + 1)));
  first = fptr[0];
  nf    = fptr[nr2] - first;
  for (PetscInt r = 0; r <= nr2; r++) fptr[r] -= first;
  PetscCall(PetscMalloc2(PetscMax(nf, 1), &fcol, PetscMax(nf, 1), &fval));
  PetscCall(Copy(PETSC_FALSE, fcol, PETSC_TRUE, Ac->col + first, sizeof(int) * nf));
  PetscCall(Copy(PETSC_FALSE, fval, PETSC_TRUE, Ac->val + first, sizeof(double) * nf));
  PetscCall(ExchangeForeignRows(D, nr2, R2, fptr, fcol, fval, &nrecv, &rrow, &rcol, &rval));
  PetscCall(PetscFree(fptr));
  PetscCall(PetscFree2(fcol, fval));
  PetscCall(ReceivedByRow(D, nrecv, rrow, rcol, rval, &rptr));
  PetscCall(ExtendColumns(D, nr2, R2, nrecv, rcol, &nr3, &R3)); /* R2 and the received columns */
  /* the received rows, equal columns summed (adjacent: each row is sorted), in R3's local numbering,
     ascending: this rank's columns first, then the others (in global order) */
  PetscCall(PetscMalloc3(nc + 1, &bptr, PetscMax(nrecv, 1), &bcol, PetscMax(nrecv, 1), &bval));
  bptr[0] = 0;
  for (PetscInt i = 0; i < nc; i++) {
    PetscInt m = rptr[i];

    for (PetscInt e = rptr[i]; e < rptr[i + 1]; e++) { /* in place: rcol/rval[rptr[i] .. m) the summed row */
      if (m > rptr[i] && rcol[m - 1] == rcol[e]) rval[m - 1] += rval[e];
      else {
        rcol[m]   = rcol[e];
        rval[m++] = rval[e];
      }
    }
    for (int own = 1; own >= 0; own--)
      for (PetscInt e = rptr[i]; e < m; e++) {
        if ((rcol[e] >= D->cstart && rcol[e] < D->cstart + nc) != own) continue;
        PetscCall(LocalColumn(rcol[e], D->cstart, nc, nr3, R3, &bcol[nb]));
        bval[nb++] = rval[e];
      }
    bptr[i + 1] = (int)nb;
  }
  PetscCall(RenumberColumns(D, nr2, R2, nr3, R3, first, Ac->col)); /* the own rows' columns */
  PetscCall(CSRAlloc(PETSC_TRUE, (int)nc, (int)(nc + nr3), (int)nb, &Bd));
  PetscCall(Copy(PETSC_TRUE, Bd.ptr, PETSC_FALSE, bptr, sizeof(int) * (nc + 1)));
  PetscCall(Copy(PETSC_TRUE, Bd.col, PETSC_FALSE, bcol, sizeof(int) * nb));
  PetscCall(Copy(PETSC_TRUE, Bd.val, PETSC_FALSE, bval, sizeof(double) * nb));
  PetscCall(PetscFree3(bptr, bcol, bval));
  PetscCall(PetscFree(rptr));
  PetscCall(PetscFree3(rrow, rcol, rval));
  /* own rows + received, then the two blocks */
  Aown = (PatchworkCSR){(int)nc, Ac->ptr, Ac->col, Ac->val};
  Bown = (PatchworkCSR){(int)nc, Bd.ptr, Bd.col, Bd.val};
  err  = PatchworkCSRAddCUDA(&Aown, &Bown, (int)(nc + nr3), &C, D->stream);
  PetscCheck(!err, PETSC_COMM_SELF, PETSC_ERR_LIB, "PCPATCHAMG: adding the received Galerkin rows failed (error %d)", err);
  CSRFree(PETSC_TRUE, &Bd);
  err = PatchworkCSRSplitColumnsCUDA(&C, (int)nc, &Cd, &Co, D->stream);
  PetscCheck(!err, PETSC_COMM_SELF, PETSC_ERR_LIB, "PCPATCHAMG: splitting the Galerkin rows failed (error %d)", err);
  CSRFree(PETSC_TRUE, &C);
  /* to the host: the diagonal block as it is, the other's columns global */
  PetscCall(PetscMalloc3(nc + 1, &dptr, PetscMax(Cd.nnz, 1), &dcol, PetscMax(Cd.nnz, 1), &dval));
  PetscCall(PetscMalloc3(nc + 1, &optr, PetscMax(Co.nnz, 1), &ocol, PetscMax(Co.nnz, 1), &oval));
  {
    int *ip, *ic;

    PetscCall(PetscMalloc2(nc + 1, &ip, PetscMax(PetscMax(Cd.nnz, Co.nnz), 1), &ic));
    PetscCall(Copy(PETSC_FALSE, ip, PETSC_TRUE, Cd.ptr, sizeof(int) * (nc + 1)));
    PetscCall(Copy(PETSC_FALSE, ic, PETSC_TRUE, Cd.col, sizeof(int) * Cd.nnz));
    for (PetscInt i = 0; i <= nc; i++) dptr[i] = ip[i];
    for (int e = 0; e < Cd.nnz; e++) dcol[e] = ic[e];
    PetscCall(Copy(PETSC_FALSE, ip, PETSC_TRUE, Co.ptr, sizeof(int) * (nc + 1)));
    PetscCall(Copy(PETSC_FALSE, ic, PETSC_TRUE, Co.col, sizeof(int) * Co.nnz));
    for (PetscInt i = 0; i <= nc; i++) optr[i] = ip[i];
    for (int e = 0; e < Co.nnz; e++) ocol[e] = R3[ic[e]];
    PetscCall(PetscFree2(ip, ic));
  }
  PetscCall(Copy(PETSC_FALSE, dval, PETSC_TRUE, Cd.val, sizeof(double) * Cd.nnz));
  PetscCall(Copy(PETSC_FALSE, oval, PETSC_TRUE, Co.val, sizeof(double) * Co.nnz));
  CSRFree(PETSC_TRUE, &Cd);
  CSRFree(PETSC_TRUE, &Co);
  PetscCall(PetscFree(R3));
  PetscCall(PatchworkMatCreateAIJSplit(D->comm, type, nc, nc, dptr, dcol, dval, optr, ocol, oval, B));
  PetscCall(PetscFree3(dptr, dcol, dval));
  PetscCall(PetscFree3(optr, ocol, oval));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

/* L->P from P's rows (columns local to R1): on the device a shell over the two blocks (padevmat.c), on
   the host a parallel AIJ matrix of type */
static PetscErrorCode ProlongatorMatrix(Dist *D, MatType type, PatchworkCSRMatrix *P, PetscInt nr1, const PetscInt R1[], Mat *B)
{
  PetscFunctionBegin;
  if (D->dev) {
    PatchworkCSRMatrix Pd, Po;
    int                err = PatchworkCSRSplitColumnsCUDA(P, (int)D->nc, &Pd, &Po, D->stream);

    PetscCheck(!err, PETSC_COMM_SELF, PETSC_ERR_LIB, "PCPATCHAMG: splitting the prolongator's rows failed (error %d)", err);
    PetscCall(PCPatchAMGMatCreateDeviceSplit(D->comm, &Pd, &Po, nr1, R1, B));
  } else {
    PetscInt    *dptr, *dcol, *optr, *ocol;
    PetscScalar *dval, *oval;

    PetscCall(SplitHostRows(P, D->cstart, D->nc, R1, &dptr, &dcol, &dval, &optr, &ocol, &oval));
    PetscCall(PatchworkMatCreateAIJSplit(D->comm, type, D->n, D->nc, dptr, dcol, dval, optr, ocol, oval, B));
    PetscCall(PetscFree3(dptr, dcol, dval));
    PetscCall(PetscFree3(optr, ocol, oval));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A level's CSR block on its side (device arrays of an aijcusparse block, or the host's) */
static PetscErrorCode BlockCSR(PetscBool dev, Mat A, PatchworkCSR *csr)
{
  PetscFunctionBegin;
  if (dev) PetscCall(PCPatchAMGMatGetDeviceArrays(A, csr));
  else PetscCall(PCPatchAMGGetCSR(PETSC_FALSE, A, csr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode BlockCSRRestore(PetscBool dev, Mat A, PatchworkCSR *csr)
{
  PetscFunctionBegin;
  if (dev) PetscCall(PCPatchAMGMatRestoreDeviceArrays(A, csr));
  else PetscCall(PCPatchAMGRestoreCSR(PETSC_FALSE, A, csr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  PCPatchAMGProductsDistributed - L->P = (I - diag(s) A) P~ from the aggregates of graph level l, C->A =
  P^T A P, and *zc, the next level's near-null-space vector (a new vector of s's type), for a level on
  several ranks whose next level's rows are each rank's aggregates; z: the near-null-space vector (NULL:
  constants). The same P and P^T A P as one rank would compute, up to the order of sums.
*/
PetscErrorCode PCPatchAMGProductsDistributed(PC pc, const PC_PatchAMGGraph *H, PetscInt l, Vec z, Vec s, PC_PatchAMGLevel *L, PC_PatchAMGLevel *C, Vec *zc)
{
  PC_PatchAMG       *pa = (PC_PatchAMG *)pc->data;
  Dist               D;
  Mat                Ad, Ao;
  const PetscInt    *garray;
  PetscLayout        cmap;
  PatchworkCSR       Adc, Aoc, Axc;
  PatchworkCSRMatrix Ax = {0}, P = {0}, Px = {0}, Ac = {0};
  const PetscScalar *sa, *za = NULL;
  PetscScalar       *ta, *zca;
  PetscMemType       mt;
  Vec                zl = NULL, t;
  VecType            vtype;
  MatType            type;
  PetscInt          *gagg, nr1 = 0, *R1, nr2 = 0, *R2, *gptr, *gcol;
  PetscScalar       *gval;
  double            *tg;
  int               *colg, err;

  PetscFunctionBegin;
  D.comm = PetscObjectComm((PetscObject)L->A);
  D.dev  = pa->device;
  PetscCheck(H->dev == D.dev, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCPATCHAMG: the graph hierarchy and the level vectors live on different sides");
  PetscCallMPI(MPI_Comm_size(D.comm, &D.size));
  PetscCall(PatchworkGetDeviceStream(&D.stream));
  PetscCall(MatGetType(L->A, &type));
  PetscCall(MatMPIAIJGetSeqAIJ(L->A, &Ad, &Ao, &garray));
  PetscCall(MatGetLocalSize(L->A, &D.n, NULL));
  PetscCall(MatGetSize(Ao, NULL, &D.ng));
  D.nc = H->L[l].naggs;
  PetscCallMPI(MPI_Scan(&D.nc, &D.cstart, 1, MPIU_INT, MPI_SUM, D.comm));
  D.cstart -= D.nc;
  PetscCall(PetscMalloc1(D.size + 1, &D.coff));
  PetscCallMPI(MPI_Allgather(&D.cstart, 1, MPIU_INT, D.coff, 1, MPIU_INT, D.comm));
  PetscCallMPI(MPIU_Allreduce(&D.nc, &D.coff[D.size], 1, MPIU_INT, MPI_SUM, D.comm));
  PetscCall(MatGetLayouts(L->A, NULL, &cmap));
  PetscCall(PetscSFCreate(D.comm, &D.sf));
  PetscCall(PetscSFSetGraphLayout(D.sf, cmap, D.ng, NULL, PETSC_COPY_VALUES, garray));

  PetscCall(PetscLogEventBegin(PATCHWORK_AMGProlong, pc, 0, 0, 0));
  /* the tentative values of this rank's rows, the next level's near-null-space vector */
  PetscCall(VecDuplicate(s, &t));
  if (z) { /* a copy of the level's vector type, so that its array lives where s does */
    PetscCall(VecDuplicate(s, &zl));
    PetscCall(VecCopy(z, zl));
    PetscCall(VecGetArrayReadAndMemType(zl, &za, &mt));
  }
  PetscCall(VecGetType(s, &vtype));
  PetscCall(VecCreate(D.comm, zc));
  PetscCall(VecSetSizes(*zc, D.nc, PETSC_DETERMINE));
  PetscCall(VecSetType(*zc, vtype));
  PetscCall(VecGetArrayWriteAndMemType(t, &ta, &mt));
  PetscCheck(PetscMemTypeDevice(mt) == D.dev, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCPATCHAMG: the level vector is not where the level lives");
  PetscCall(VecGetArrayWriteAndMemType(*zc, &zca, &mt));
  if (D.dev) err = PatchworkSATentativeCUDA((int)D.n, H->L[l].agg, (int)D.nc, (const double *)za, (double *)ta, (double *)zca, D.stream);
  else err = PatchworkSATentativeRef((int)D.n, H->L[l].agg, (int)D.nc, (const double *)za, (double *)ta, (double *)zca);
  PetscCheck(!err, PETSC_COMM_SELF, PETSC_ERR_LIB, "PCPATCHAMG: the tentative prolongator of level %" PetscInt_FMT " failed (error %d)", l, err);
  PetscCall(VecRestoreArrayWriteAndMemType(*zc, &zca));
  if (zl) PetscCall(VecRestoreArrayReadAndMemType(zl, &za));
  PetscCall(VecDestroy(&zl));
  PetscCall(PetscLogEventBegin(PATCHWORK_AMGGhostRows, pc, 0, 0, 0));
  PetscCall(GhostTentative(&D, H->L[l].agg, (const double *)ta, &gagg, &tg));
  PetscCall(PetscLogEventEnd(PATCHWORK_AMGGhostRows, pc, 0, 0, 0));

  /* P's rows from the extended matrix [A_d A_o; 0 0] */
  PetscCall(BlockCSR(D.dev, Ad, &Adc));
  PetscCall(BlockCSR(D.dev, Ao, &Aoc));
  if (D.dev) err = PatchworkCSRJoinColumnsCUDA(&Adc, &Aoc, (int)D.n, (int)(D.n + D.ng), (int)(D.n + D.ng), &Ax, D.stream);
  else err = PatchworkCSRJoinColumnsRef(&Adc, &Aoc, (int)D.n, (int)(D.n + D.ng), (int)(D.n + D.ng), &Ax);
  PetscCheck(!err, PETSC_COMM_SELF, PETSC_ERR_LIB, "PCPATCHAMG: joining the level's blocks failed (error %d)", err);
  PetscCall(BlockCSRRestore(D.dev, Ao, &Aoc));
  PetscCall(BlockCSRRestore(D.dev, Ad, &Adc));
  Axc = (PatchworkCSR){Ax.nrow, Ax.ptr, Ax.col, Ax.val};
  PetscCall(VecGetArrayReadAndMemType(s, &sa, &mt));
  PetscCall(ProlongatorRows(&D, &Axc, H->L[l].agg, (const double *)ta, (const double *)sa, gagg, tg, &nr1, &R1, &P));
  PetscCall(VecRestoreArrayReadAndMemType(s, &sa));
  PetscCall(VecRestoreArrayWriteAndMemType(t, &ta));
  PetscCall(VecDestroy(&t));
  PetscCall(PetscFree(gagg));
  PetscCall(PetscFree(tg));
  PetscCall(ProlongatorMatrix(&D, type, &P, nr1, R1, &L->P));
  PetscCall(PetscLogEventEnd(PATCHWORK_AMGProlong, pc, 0, 0, 0));

  /* P^T A P: the ghosts' rows of P under this rank's, then the kernel on the extended matrices */
  PetscCall(PetscLogEventBegin(PATCHWORK_AMGGalerkin, pc, 0, 0, 0));
  PetscCall(PetscLogEventBegin(PATCHWORK_AMGGhostRows, pc, 0, 0, 0));
  PetscCall(GlobalColumns(&D, &P, nr1, R1, &colg));
  PetscCall(GhostRows(&D, &P, colg, &gptr, &gcol, &gval));
  PetscCall(PatchworkFree(D.dev, &colg));
  PetscCall(StackRows(&D, &P, nr1, R1, gptr, gcol, gval, &nr2, &R2, &Px));
  PetscCall(PetscLogEventEnd(PATCHWORK_AMGGhostRows, pc, 0, 0, 0));
  PetscCall(PetscFree(gptr));
  PetscCall(PetscFree2(gcol, gval));
  CSRFree(D.dev, &P);
  if (D.dev) err = PatchworkGalerkinCUDA(&Axc, &Px, &Ac, D.stream);
  else err = PatchworkGalerkinRef(&Axc, &Px, &Ac);
  PetscCheck(!err, PETSC_COMM_SELF, PETSC_ERR_LIB, "PCPATCHAMG: the Galerkin product of level %" PetscInt_FMT " failed (error %d)", l, err);
  CSRFree(D.dev, &Px);
  CSRFree(D.dev, &Ax);
  PetscCall(PetscLogEventBegin(PATCHWORK_AMGCoarseRows, pc, 0, 0, 0));
#if defined(PATCHWORK_HAVE_CUDA)
  if (D.dev) {
    PetscCall(CoarseMatrixDevice(&D, type, &Ac, nr2, R2, &C->A));
    PatchworkCSRMatrixFreeCUDA(&Ac);
  } else
#endif
  {
    PetscCall(CoarseMatrix(&D, type, &Ac, nr2, R2, &C->A));
    PatchworkCSRMatrixFree(&Ac);
  }
  PetscCall(PetscLogEventEnd(PATCHWORK_AMGCoarseRows, pc, 0, 0, 0));
  PetscCall(PetscLogEventEnd(PATCHWORK_AMGGalerkin, pc, 0, 0, 0));
  PetscCall(PetscFree(R1));
  PetscCall(PetscFree(R2));
  PetscCall(PetscSFDestroy(&D.sf));
  PetscCall(PetscFree(D.coff));
  PetscFunctionReturn(PETSC_SUCCESS);
}
