/* SPAI(1): the sparse approximate inverse M of A with A's sparsity pattern that minimizes
   ||I - M A||_F. The Frobenius norm splits into one small least-squares problem per row:
     row i of M = argmin { ||A^T m - e_i||_2 : supp(m) = J_i }, J_i = the pattern of row i of A,
   which only involves the rows J_i of A and, of their columns, K_i = union of their patterns:
     min || A[J_i,K_i]^T m - e_i|K_i ||_2   (a |K_i| x |J_i| problem, 7 x 3 .. 125 x 27 for P1/Q1).
   With C = A[J_i,K_i]^T, the normal equations C^T C m = C^T e_i cost a fraction of a QR (C^T C sums
   products of the few rows of J_i that share a column: about 4K multiply-adds against the QR's 180K at
   Q1), but square the condition number. So they are used when kappa_1(C^T C) <= 1e4 (bounded above
   from its Cholesky factor), where their error, ~kappa(C)^2 u, is within 100 kappa(C) u; other rows
   (and the verdict on a singular one) go to a dense Householder QR of C. The normal equations are
   src/core/amg_spai_ref.c's; for a sequential aijcusparse matrix cuda/amg_spai.cu solves them on
   the GPU, straight into M's device values, and only the rows it refuses come to the host.

   Several ranks: the exact SPAI(1), independent of the partition. A rank's rows reach columns of
   other ranks (A's off-diagonal block), and the least-squares problem of a row needs the rows of A
   of those columns: MatCreateSubMatrices() fetches them (the local rows and the ghost rows, all
   columns) once, then every row is solved locally. M keeps A's off-diagonal block. */
#include "paimpl.h"
#include <petscblaslapack.h>
#include <patchwork/vec_kernel.h>

/* The position of global row j among the rows the sequential matrix holds (rows == NULL: all) */
static inline PetscErrorCode RowPosition(PetscInt j, PetscInt nrows, const PetscInt rows[], PetscInt *p)
{
  PetscFunctionBegin;
  if (rows) PetscCall(PetscFindInt(j, nrows, rows, p));
  else *p = j;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* What the rows are solved from: B, a sequential AIJ matrix holding every row needed (its rows are
   rows[] of A, or all of A's when rows == NULL), its columns renumbered 0..ncol-1 in lj (the
   sorted distinct global columns cols[], or the columns themselves when cols == NULL), and the
   workspaces of the normal equations and of the QR */
typedef struct {
  PetscInt           nrows, ncol;
  const PetscInt    *rows, *cols, *ia, *ja, *lj;
  const PetscScalar *va;
  PatchworkSPAIWork *nw;   /* NULL: QR for every row (complex scalars, or 64-bit indices) */
  int               *jrow; /* [maxJ] the positions of the rows J in B */
  PetscInt          *mark, *K, capK, capC;
  PetscScalar       *C, *b, *tau, *work;
  PetscBLASInt       lwork;
  PetscInt           nnormal; /* rows solved by the normal equations */
  PetscLogDouble     flops;
} SPAIRows;

static PetscErrorCode SPAIRowsCreate(SPAIRows *s, PetscInt maxJ)
{
  PetscFunctionBegin;
  PetscCall(PetscMalloc1(s->ncol, &s->mark));
  for (PetscInt c = 0; c < s->ncol; c++) s->mark[c] = -1;
  s->lwork = (PetscBLASInt)(64 * PetscMax(maxJ, 1)); /* >= the blocked optimum of geqrf and ormqr */
  PetscCall(PetscMalloc3(maxJ, &s->tau, s->lwork, &s->work, maxJ, &s->jrow));
  /* the normal equations (src/core/amg_spai_ref.c) read B's arrays as int and double */
  if (PCPatchAMGKernelTypes()) PatchworkCallKernel(PatchworkSPAIWorkCreate((int)s->ncol, &s->nw));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SPAIRowsDestroy(SPAIRows *s)
{
  PetscFunctionBegin;
  PatchworkSPAIWorkDestroy(&s->nw);
  PetscCall(PetscFree(s->mark));
  PetscCall(PetscFree3(s->tau, s->work, s->jrow));
  PetscCall(PetscFree2(s->K, s->b));
  PetscCall(PetscFree(s->C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Row i of M (global) into m (nJ values, in the order of row i's columns): by the normal equations
   when they are accepted, else by QR. *bad: 0, or 1 for a zero row, 2 for a singular problem. */
static PetscErrorCode SPAIRowSolve(SPAIRows *s, PetscInt i, PetscScalar m[], PetscInt *bad)
{
  PetscInt           p, nJ, nK = 0, ki;
  const PetscInt    *J, *ia = s->ia, *lj = s->lj;
  const PetscScalar *aJ, *va = s->va;
  PetscBool          zero = PETSC_TRUE;
  PetscReal          cmax = 0, tol;
  PetscBLASInt       bm, bn, one = 1, info;

  PetscFunctionBegin;
  *bad = 0;
  PetscCall(RowPosition(i, s->nrows, s->rows, &p));
  nJ = ia[p + 1] - ia[p];
  J  = s->ja + ia[p];
  aJ = va + ia[p];
  for (PetscInt c = 0; c < nJ; c++)
    if (aJ[c] != (PetscScalar)0) zero = PETSC_FALSE;
  if (zero) { /* an empty row, or only stored zeros: no approximate inverse */
    *bad = 1;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (s->cols) {
    PetscCall(PetscFindInt(i, s->ncol, s->cols, &ki));
  } else ki = i;
  if (s->nw) {
    int    ok;
    double kappa;

    for (PetscInt c = 0; c < nJ; c++) {
      PetscCall(RowPosition(J[c], s->nrows, s->rows, &p));
      s->jrow[c] = (int)p;
    }
    PatchworkCallKernel(PatchworkSPAI1RowNormal((int)nJ, s->jrow, (const int *)ia, (const int *)lj, (const double *)va, (int)ki, s->nw, (double *)m, &ok, &kappa));
    if (ok) {
      s->nnormal++;
      s->flops += nJ * nJ * nJ / 3.0 + 6.0 * nJ * nJ; /* and G's products, not counted */
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }

  /* K: the union of the patterns of the rows J, numbered in mark[] */
  for (PetscInt c = 0; c < nJ; c++) {
    PetscCall(RowPosition(J[c], s->nrows, s->rows, &p));
    nK += ia[p + 1] - ia[p];
  }
  if (nK > s->capK) {
    PetscCall(PetscFree2(s->K, s->b));
    s->capK = 2 * nK;
    PetscCall(PetscMalloc2(s->capK, &s->K, s->capK, &s->b));
  }
  nK = 0;
  for (PetscInt c = 0; c < nJ; c++) {
    PetscCall(RowPosition(J[c], s->nrows, s->rows, &p));
    for (PetscInt t = ia[p]; t < ia[p + 1]; t++)
      if (s->mark[lj[t]] < 0) {
        s->mark[lj[t]] = nK;
        s->K[nK++]     = lj[t];
      }
  }
  ki = ki >= 0 ? s->mark[ki] : -1;
  if (nK < nJ) { /* fewer equations than unknowns */
    for (PetscInt k = 0; k < nK; k++) s->mark[s->K[k]] = -1;
    *bad = 2;
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  /* C = A[J,K]^T, column-major |K| x |J|: column c is row J[c] of A */
  if (nK * nJ > s->capC) {
    PetscCall(PetscFree(s->C));
    s->capC = 2 * nK * nJ;
    PetscCall(PetscMalloc1(s->capC, &s->C));
  }
  PetscCall(PetscArrayzero(s->C, nK * nJ));
  for (PetscInt c = 0; c < nJ; c++) {
    PetscReal r = 0;

    PetscCall(RowPosition(J[c], s->nrows, s->rows, &p));
    for (PetscInt t = ia[p]; t < ia[p + 1]; t++) {
      s->C[s->mark[lj[t]] + c * nK] = va[t];
      r += PetscRealPart(va[t] * PetscConj(va[t]));
    }
    cmax = PetscMax(cmax, PetscSqrtReal(r));
  }
  for (PetscInt k = 0; k < nK; k++) s->mark[s->K[k]] = -1;
  PetscCall(PetscArrayzero(s->b, nK));
  if (ki >= 0) s->b[ki] = 1; /* e_i restricted to K (i is in K unless no row of J has column i) */

  PetscCall(PetscBLASIntCast(nK, &bm));
  PetscCall(PetscBLASIntCast(nJ, &bn));
  PetscCallBLAS("LAPACKgeqrf", LAPACKgeqrf_(&bm, &bn, s->C, &bm, s->tau, s->work, &s->lwork, &info));
  PetscCheck(!info, PETSC_COMM_SELF, PETSC_ERR_LIB, "LAPACK geqrf returned %d for row %" PetscInt_FMT, (int)info, i);
  /* sigma_min(C) <= min |R_cc|: a tiny pivot next to the largest column means (near) rank deficiency */
  tol = 10 * nK * PETSC_MACHINE_EPSILON * cmax;
  for (PetscInt c = 0; c < nJ; c++)
    if (!(PetscAbsScalar(s->C[c + c * nK]) > tol) || PetscIsInfOrNanScalar(s->C[c + c * nK])) *bad = 2;
  if (*bad) PetscFunctionReturn(PETSC_SUCCESS);
#if defined(PETSC_USE_COMPLEX)
  PetscCallBLAS("LAPACKormqr", LAPACKormqr_("L", "C", &bm, &one, &bn, s->C, &bm, s->tau, s->b, &bm, s->work, &s->lwork, &info));
#else
  PetscCallBLAS("LAPACKormqr", LAPACKormqr_("L", "T", &bm, &one, &bn, s->C, &bm, s->tau, s->b, &bm, s->work, &s->lwork, &info));
#endif
  PetscCheck(!info, PETSC_COMM_SELF, PETSC_ERR_LIB, "LAPACK ormqr returned %d for row %" PetscInt_FMT, (int)info, i);
  for (PetscInt r = nJ - 1; r >= 0; r--) { /* R m = (Q^T b)[0:nJ] */
    PetscScalar v = s->b[r];

    for (PetscInt c = r + 1; c < nJ; c++) v -= s->C[r + c * nK] * m[c];
    m[r] = v / s->C[r + r * nK];
  }
  s->flops += 2.0 * nK * nJ * nJ - 2.0 * nJ * nJ * nJ / 3.0 + 4.0 * nK * nJ + (PetscLogDouble)nJ * nJ;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The rows of a sequential aijcusparse matrix on the GPU (cuda/amg_spai.cu): the normal equations
   of every accepted row are solved there into M's device values; the refused rows (a few, if any)
   come back to the host, which solves them as in the general case. *bad, *kind: the first bad row
   and what is wrong with it, as in the host loop. */
#if defined(PATCHWORK_HAVE_CUDA)
static PetscErrorCode SPAIDevice(Mat A, SPAIRows *s, Mat M, PetscInt *bad, PetscInt *kind)
{
  const PetscInt    *dia, *dja;
  const PetscScalar *dva;
  PetscScalar       *dmv, *hv;
  PetscInt           n, nrefused = 0;
  int               *dflag = NULL, *flag;
  void              *stream;

  PetscFunctionBegin;
  PetscCall(MatGetLocalSize(A, &n, NULL));
  PetscCall(PetscMalloc1(n, &flag));
  PetscCall(PatchworkGetDeviceStream(&stream));
  PatchworkCallKernel(PatchworkDeviceMalloc(sizeof(int) * (size_t)PetscMax(n, 1), (void **)&dflag));
  PetscCall(MatSeqAIJCUSPARSEGetIJ(A, PETSC_FALSE, &dia, &dja));
  PetscCall(MatSeqAIJCUSPARSEGetArrayRead(A, &dva));
  /* M, a duplicate made on the host, has no device matrix yet: a read access copies its structure */
  PetscCall(MatSeqAIJCUSPARSEGetArrayRead(M, (const PetscScalar **)&dmv));
  PetscCall(MatSeqAIJCUSPARSERestoreArrayRead(M, (const PetscScalar **)&dmv));
  PetscCall(MatSeqAIJCUSPARSEGetArrayWrite(M, &dmv));
  {
    const PatchworkCSR csr = {(int)n, (const int *)dia, (const int *)dja, (const double *)dva};

    PetscCall(PetscLogGpuTimeBegin());
    PatchworkCallKernel(PatchworkSPAI1NormalCUDA(&csr, (double *)dmv, dflag, NULL, stream));
    PetscCall(PetscLogGpuTimeEnd());
  }
  PatchworkCallKernel(PatchworkDeviceCopyToHost(flag, dflag, sizeof(int) * (size_t)n, stream));
  PetscCall(MatSeqAIJCUSPARSERestoreArrayWrite(M, &dmv));
  PetscCall(MatSeqAIJCUSPARSERestoreArrayRead(A, &dva));
  PetscCall(MatSeqAIJCUSPARSERestoreIJ(A, PETSC_FALSE, &dia, &dja));
  PatchworkCallKernel(PatchworkDeviceFree(dflag));
  for (PetscInt i = 0; i < n; i++) nrefused += flag[i] != 0;
  s->nnormal = n - nrefused;
  if (nrefused) { /* A's and M's values come to the host (PETSc copies M's back at its next use there) */
    PetscCall(MatSeqAIJGetArrayRead(A, &s->va));
    PetscCall(MatSeqAIJGetArray(M, &hv));
    for (PetscInt i = 0; i < n && !*kind; i++)
      if (flag[i]) {
        PetscCall(SPAIRowSolve(s, i, hv + s->ia[i], kind));
        if (*kind) *bad = i;
      }
    PetscCall(MatSeqAIJRestoreArray(M, &hv));
    PetscCall(MatSeqAIJRestoreArrayRead(A, &s->va));
  }
  PetscCall(PetscInfo(A, "SPAI(1) on the GPU: %" PetscInt_FMT " of %" PetscInt_FMT " rows by the normal equations there, %" PetscInt_FMT " refused rows on the host\n", n - nrefused, n, nrefused));
  PetscCall(PetscFree(flag));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

/*
  PatchworkMatCreateSPAI1 - The SPAI(1) sparse approximate inverse of an AIJ matrix

  Collective

  Input Parameter:
. A - an assembled square AIJ matrix (seqaij, mpiaij or their subtypes, e.g. aijcusparse)

  Output Parameter:
. M - the approximate inverse: same type, layout and nonzero pattern as A; row i minimizes
      ||e_i - A^T m||_2 over m with the pattern of row i of A, so M minimizes ||I - M A||_F

  Notes:
  M is not symmetric even when A is: a symmetric smoother uses M before and M^T after the coarse
  correction. A zero row of A, or a row whose least-squares problem is singular (the rows of A in its
  pattern are linearly dependent), is an error that names the row, raised on every rank.
  A sequential aijcusparse matrix is solved on the GPU (the rows whose normal equations are refused
  on the host); other matrices on the host, and PETSc copies M to the device when it is used there.
*/
PETSC_EXTERN PetscErrorCode PatchworkMatCreateSPAI1(Mat A, Mat *M)
{
  MatType         type;
  PetscBool       isseq, ismpi, assembled, done, device = PETSC_FALSE;
  Mat             B, *sub = NULL;
  IS              isrow = NULL, iscol = NULL;
  PetscInt        Mg, Ng, rstart, rend, nB, maxJ = 0, *rows = NULL, *cols = NULL, *ljm = NULL;
  PetscInt        bad = PETSC_MAX_INT, kind = 0; /* the first bad row: zero (1) or singular (2) */
  PetscScalar    *m   = NULL;
  SPAIRows        s   = {0};
  const PetscInt *ia, *ja;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PatchworkAssertPointer(M, 2);
  *M = NULL;
  PetscCall(MatGetType(A, &type));
  PetscCall(PetscStrbeginswith(type, MATSEQAIJ, &isseq));
  PetscCall(PetscStrbeginswith(type, MATMPIAIJ, &ismpi));
  PetscCheck(isseq || ismpi, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "SPAI(1) needs an AIJ matrix, not %s", type);
  PetscCall(MatAssembled(A, &assembled));
  PetscCheck(assembled, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "SPAI(1) needs an assembled matrix");
  PetscCall(MatGetSize(A, &Mg, &Ng));
  PetscCheck(Mg == Ng, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_SIZ, "SPAI(1) needs a square matrix, not %" PetscInt_FMT " x %" PetscInt_FMT, Mg, Ng);
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  PetscCall(PatchworkInitializePackage());
  PetscCall(PetscLogEventBegin(PATCHWORK_SPAI1, A, 0, 0, 0));
#if defined(PATCHWORK_HAVE_CUDA)
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJCUSPARSE, &device));
  device = (PetscBool)(device && PCPatchAMGKernelTypes());
#endif

  /* B: a sequential AIJ matrix with global column numbers holding every row this rank needs */
  if (isseq) {
    B = A;
  } else {
    Mat                Ad, Ao;
    const PetscInt    *garray;
    const PetscScalar *va;
    PetscInt           cstart, cend, no, n = 0;

    PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, &garray));
    /* values assembled on the device must be on the host before MatCreateSubMatrices() reads them */
    PetscCall(MatSeqAIJGetArrayRead(Ad, &va));
    PetscCall(MatSeqAIJRestoreArrayRead(Ad, &va));
    PetscCall(MatSeqAIJGetArrayRead(Ao, &va));
    PetscCall(MatSeqAIJRestoreArrayRead(Ao, &va));
    PetscCall(MatGetOwnershipRangeColumn(A, &cstart, &cend));
    PetscCall(MatGetLocalSize(Ao, NULL, &no));
    PetscCall(PetscMalloc1((rend - rstart) + (cend - cstart) + no, &rows));
    for (PetscInt i = rstart; i < rend; i++) rows[n++] = i;
    for (PetscInt j = cstart; j < cend; j++) rows[n++] = j;
    for (PetscInt j = 0; j < no; j++) rows[n++] = garray[j];
    PetscCall(PetscSortRemoveDupsInt(&n, rows));
    s.nrows = n;
    PetscCall(ISCreateGeneral(PETSC_COMM_SELF, s.nrows, rows, PETSC_USE_POINTER, &isrow));
    PetscCall(ISCreateStride(PETSC_COMM_SELF, Ng, 0, 1, &iscol)); /* all columns: PETSc's fast path */
    PetscCall(MatCreateSubMatrices(A, 1, &isrow, &iscol, MAT_INITIAL_MATRIX, &sub));
    B = sub[0];
  }
  PetscCall(MatGetRowIJ(B, 0, PETSC_FALSE, PETSC_FALSE, &nB, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRowIJ() failed on the rows SPAI(1) needs");
  s.rows = rows;
  s.ia   = ia;
  s.ja   = ja;
  /* B's columns numbered 0..ncol-1: sequential, the columns themselves; else the sorted distinct
     global columns cols[] (a column's position in K then needs neither sorting nor searching) */
  if (isseq) {
    s.ncol = Ng;
    s.lj   = ja;
  } else {
    PetscCall(PetscMalloc2(ia[nB], &cols, ia[nB], &ljm));
    PetscCall(PetscArraycpy(cols, ja, ia[nB]));
    s.ncol = ia[nB];
    PetscCall(PetscSortRemoveDupsInt(&s.ncol, cols));
    for (PetscInt t = 0; t < ia[nB]; t++) PetscCall(PetscFindInt(ja[t], s.ncol, cols, &ljm[t]));
    s.cols = cols;
    s.lj   = ljm;
  }
  for (PetscInt i = rstart; i < rend; i++) {
    PetscInt p;

    PetscCall(RowPosition(i, s.nrows, rows, &p));
    maxJ = PetscMax(maxJ, ia[p + 1] - ia[p]);
  }
  PetscCall(SPAIRowsCreate(&s, maxJ));
  PetscCall(MatDuplicate(A, MAT_DO_NOT_COPY_VALUES, M));
  if (device) {
#if defined(PATCHWORK_HAVE_CUDA)
    PetscCall(SPAIDevice(A, &s, *M, &bad, &kind));
#endif
  } else {
    PetscCall(MatSeqAIJGetArrayRead(B, &s.va));
    PetscCall(PetscMalloc1(maxJ, &m));
    for (PetscInt i = rstart; i < rend; i++) {
      PetscInt p;

      PetscCall(SPAIRowSolve(&s, i, m, &kind));
      if (kind) {
        bad = i;
        break;
      }
      PetscCall(RowPosition(i, s.nrows, rows, &p));
      PetscCall(MatSetValues(*M, 1, &i, ia[p + 1] - ia[p], ja + ia[p], m, INSERT_VALUES));
    }
    PetscCall(PetscFree(m));
    PetscCall(MatSeqAIJRestoreArrayRead(B, &s.va));
    PetscCall(PetscInfo(A, "SPAI(1): %" PetscInt_FMT " of %" PetscInt_FMT " rows by the normal equations, the others by QR\n", s.nnormal, rend - rstart));
  }
  PetscCall(PetscLogFlops(s.flops));
  PetscCall(SPAIRowsDestroy(&s));
  PetscCall(MatRestoreRowIJ(B, 0, PETSC_FALSE, PETSC_FALSE, &nB, &ia, &ja, &done));
  if (sub) PetscCall(MatDestroySubMatrices(1, &sub));
  PetscCall(ISDestroy(&isrow));
  PetscCall(ISDestroy(&iscol));
  PetscCall(PetscFree(rows));
  PetscCall(PetscFree2(cols, ljm));
  PetscCall(PetscLogEventEnd(PATCHWORK_SPAI1, A, 0, 0, 0));

  /* every rank raises the error of the first bad row: a rank alone would leave the others waiting
     in the assembly; M is gone first, so that a caller going on after the error leaks nothing */
  {
    PetscInt first = bad;

    PetscCallMPI(MPI_Allreduce(&bad, &first, 1, MPIU_INT, MPI_MIN, PetscObjectComm((PetscObject)A)));
    if (first != PETSC_MAX_INT) {
      PetscInt k = bad == first ? kind : 2;

      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &k, 1, MPIU_INT, MPI_MIN, PetscObjectComm((PetscObject)A)));
      PetscCall(MatDestroy(M));
      PetscCheck(k != 1, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "SPAI(1): row %" PetscInt_FMT " of the matrix is zero", first);
      SETERRQ(PetscObjectComm((PetscObject)A), PETSC_ERR_MAT_LU_ZRPVT, "SPAI(1): the least-squares problem of row %" PetscInt_FMT " is singular (the rows of the matrix in its pattern are linearly dependent)", first);
    }
  }
  if (!device) {
    PetscCall(MatAssemblyBegin(*M, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(*M, MAT_FINAL_ASSEMBLY));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
