/* SPAI(1): the sparse approximate inverse M of A with A's sparsity pattern that minimizes
   ||I - M A||_F. The Frobenius norm splits into one small least-squares problem per row:
     row i of M = argmin { ||A^T m - e_i||_2 : supp(m) = J_i }, J_i = the pattern of row i of A,
   which only involves the rows J_i of A and, of their columns, K_i = union of their patterns:
     min || A[J_i,K_i]^T m - e_i|K_i ||_2   (a |K_i| x |J_i| problem, 7 x 3 .. 125 x 27 for P1/Q1).
   It is solved by a dense Householder QR: the normal equations would square the condition number.

   Several ranks: the exact SPAI(1), independent of the partition. A rank's rows reach columns of
   other ranks (A's off-diagonal block), and the least-squares problem of a row needs the rows of A
   of those columns: MatCreateSubMatrices() fetches them (the local rows and the ghost rows, all
   columns) once, then every row is solved locally. M keeps A's off-diagonal block. */
#include "paimpl.h"
#include <petscblaslapack.h>

/* The position of global row j among the rows the sequential matrix holds (rows == NULL: all) */
static inline PetscErrorCode RowPosition(PetscInt j, PetscInt nrows, const PetscInt rows[], PetscInt *p)
{
  PetscFunctionBegin;
  if (rows) PetscCall(PetscFindInt(j, nrows, rows, p));
  else *p = j;
  PetscFunctionReturn(PETSC_SUCCESS);
}

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
  The rows are computed on the host; PETSc copies M to the device when it is used there.
*/
PETSC_EXTERN PetscErrorCode PatchworkMatCreateSPAI1(Mat A, Mat *M)
{
  MatType            type;
  PetscBool          isseq, ismpi, assembled, done;
  Mat                B, *sub = NULL;
  IS                 isrow = NULL, iscol = NULL;
  PetscInt           Mg, Ng, rstart, rend, nB, nrows = 0, *rows = NULL;
  PetscInt           bad = PETSC_MAX_INT, singular = 0; /* the first bad row: zero (0) or singular (1) */
  const PetscInt    *ia, *ja;
  const PetscScalar *va;
  PetscInt           maxJ = 0, capK = 0, capC = 0, *K = NULL;
  PetscScalar       *C = NULL, *b = NULL, *tau = NULL, *work = NULL;
  PetscBLASInt       lwork = 0;
  PetscLogDouble     flops = 0;

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

  /* B: a sequential AIJ matrix with global column numbers holding every row this rank needs */
  if (isseq) {
    B = A;
  } else {
    Mat             Ad, Ao;
    const PetscInt *garray;
    PetscInt        cstart, cend, no, n = 0;

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
    nrows = n;
    PetscCall(ISCreateGeneral(PETSC_COMM_SELF, nrows, rows, PETSC_USE_POINTER, &isrow));
    PetscCall(ISCreateStride(PETSC_COMM_SELF, Ng, 0, 1, &iscol)); /* all columns: PETSc's fast path */
    PetscCall(MatCreateSubMatrices(A, 1, &isrow, &iscol, MAT_INITIAL_MATRIX, &sub));
    B = sub[0];
  }
  PetscCall(MatGetRowIJ(B, 0, PETSC_FALSE, PETSC_FALSE, &nB, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRowIJ() failed on the rows SPAI(1) needs");
  PetscCall(MatSeqAIJGetArrayRead(B, &va)); /* copies device values to the host */

  PetscCall(MatDuplicate(A, MAT_DO_NOT_COPY_VALUES, M));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscInt p;

    PetscCall(RowPosition(i, nrows, rows, &p));
    maxJ = PetscMax(maxJ, ia[p + 1] - ia[p]);
  }
  lwork = (PetscBLASInt)(64 * PetscMax(maxJ, 1)); /* >= the blocked optimum of geqrf and ormqr */
  PetscCall(PetscMalloc2(maxJ, &tau, lwork, &work));

  for (PetscInt i = rstart; i < rend; i++) {
    PetscInt           p, nJ, nK = 0, ki;
    const PetscInt    *J;
    const PetscScalar *aJ;
    PetscBool          zero = PETSC_TRUE;
    PetscReal          cmax = 0, tol;
    PetscBLASInt       bm, bn, one = 1, info;

    PetscCall(RowPosition(i, nrows, rows, &p));
    nJ = ia[p + 1] - ia[p];
    J  = ja + ia[p];
    aJ = va + ia[p];
    for (PetscInt c = 0; c < nJ; c++)
      if (aJ[c] != (PetscScalar)0) zero = PETSC_FALSE;
    if (zero) { /* an empty row, or only stored zeros: no approximate inverse */
      bad = i;
      break;
    }

    /* K: the union of the patterns of the rows J */
    for (PetscInt c = 0; c < nJ; c++) {
      PetscCall(RowPosition(J[c], nrows, rows, &p));
      nK += ia[p + 1] - ia[p];
    }
    if (nK > capK) {
      PetscCall(PetscFree2(K, b));
      capK = 2 * nK;
      PetscCall(PetscMalloc2(capK, &K, capK, &b));
    }
    nK = 0;
    for (PetscInt c = 0; c < nJ; c++) {
      PetscCall(RowPosition(J[c], nrows, rows, &p));
      for (PetscInt t = ia[p]; t < ia[p + 1]; t++) K[nK++] = ja[t];
    }
    PetscCall(PetscSortRemoveDupsInt(&nK, K));
    if (nK < nJ) { /* fewer equations than unknowns */
      bad      = i;
      singular = 1;
      break;
    }

    /* C = A[J,K]^T, column-major |K| x |J|: column c is row J[c] of A */
    if (nK * nJ > capC) {
      PetscCall(PetscFree(C));
      capC = 2 * nK * nJ;
      PetscCall(PetscMalloc1(capC, &C));
    }
    PetscCall(PetscArrayzero(C, nK * nJ));
    for (PetscInt c = 0; c < nJ; c++) {
      PetscReal s = 0;

      PetscCall(RowPosition(J[c], nrows, rows, &p));
      for (PetscInt t = ia[p]; t < ia[p + 1]; t++) {
        PetscInt k;

        PetscCall(PetscFindInt(ja[t], nK, K, &k));
        C[k + c * nK] = va[t];
        s += PetscRealPart(va[t] * PetscConj(va[t]));
      }
      cmax = PetscMax(cmax, PetscSqrtReal(s));
    }
    PetscCall(PetscArrayzero(b, nK));
    PetscCall(PetscFindInt(i, nK, K, &ki));
    if (ki >= 0) b[ki] = 1; /* e_i restricted to K (i is in K unless no row of J has column i) */

    PetscCall(PetscBLASIntCast(nK, &bm));
    PetscCall(PetscBLASIntCast(nJ, &bn));
    PetscCallBLAS("LAPACKgeqrf", LAPACKgeqrf_(&bm, &bn, C, &bm, tau, work, &lwork, &info));
    PetscCheck(!info, PETSC_COMM_SELF, PETSC_ERR_LIB, "LAPACK geqrf returned %d for row %" PetscInt_FMT, (int)info, i);
    /* sigma_min(C) <= min |R_cc|: a tiny pivot next to the largest column means (near) rank deficiency */
    tol = 10 * nK * PETSC_MACHINE_EPSILON * cmax;
    for (PetscInt c = 0; c < nJ; c++)
      if (!(PetscAbsScalar(C[c + c * nK]) > tol) || PetscIsInfOrNanScalar(C[c + c * nK])) singular = 1;
    if (singular) {
      bad = i;
      break;
    }
#if defined(PETSC_USE_COMPLEX)
    PetscCallBLAS("LAPACKormqr", LAPACKormqr_("L", "C", &bm, &one, &bn, C, &bm, tau, b, &bm, work, &lwork, &info));
#else
    PetscCallBLAS("LAPACKormqr", LAPACKormqr_("L", "T", &bm, &one, &bn, C, &bm, tau, b, &bm, work, &lwork, &info));
#endif
    PetscCheck(!info, PETSC_COMM_SELF, PETSC_ERR_LIB, "LAPACK ormqr returned %d for row %" PetscInt_FMT, (int)info, i);
    for (PetscInt r = nJ - 1; r >= 0; r--) { /* R m = (Q^T b)[0:nJ], in place in b */
      PetscScalar s = b[r];

      for (PetscInt c = r + 1; c < nJ; c++) s -= C[r + c * nK] * b[c];
      b[r] = s / C[r + r * nK];
    }
    PetscCall(MatSetValues(*M, 1, &i, nJ, J, b, INSERT_VALUES));
    flops += 2.0 * nK * nJ * nJ - 2.0 * nJ * nJ * nJ / 3.0 + 4.0 * nK * nJ + (PetscLogDouble)nJ * nJ;
  }

  PetscCall(MatSeqAIJRestoreArrayRead(B, &va));
  PetscCall(MatRestoreRowIJ(B, 0, PETSC_FALSE, PETSC_FALSE, &nB, &ia, &ja, &done));
  if (sub) PetscCall(MatDestroySubMatrices(1, &sub));
  PetscCall(ISDestroy(&isrow));
  PetscCall(ISDestroy(&iscol));
  PetscCall(PetscFree(rows));
  PetscCall(PetscFree2(K, b));
  PetscCall(PetscFree(C));
  PetscCall(PetscFree2(tau, work));
  PetscCall(PetscLogFlops(flops));

  /* every rank raises the error of the first bad row: a rank alone would leave the others waiting
     in the assembly; M is gone first, so that a caller going on after the error leaks nothing */
  {
    PetscInt first = bad;

    PetscCallMPI(MPI_Allreduce(&bad, &first, 1, MPIU_INT, MPI_MIN, PetscObjectComm((PetscObject)A)));
    if (first != PETSC_MAX_INT) {
      PetscInt kind = bad == first ? singular : 1;

      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &kind, 1, MPIU_INT, MPI_MIN, PetscObjectComm((PetscObject)A)));
      PetscCall(MatDestroy(M));
      PetscCheck(kind, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "SPAI(1): row %" PetscInt_FMT " of the matrix is zero", first);
      SETERRQ(PetscObjectComm((PetscObject)A), PETSC_ERR_MAT_LU_ZRPVT, "SPAI(1): the least-squares problem of row %" PetscInt_FMT " is singular (the rows of the matrix in its pattern are linearly dependent)", first);
    }
  }
  PetscCall(MatAssemblyBegin(*M, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*M, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}
