/* SPAI(1): the sparse approximate inverse M of A with A's sparsity pattern that minimizes
   ||I - M A||_F. The Frobenius norm splits into one small least-squares problem per row:
     row i of M = argmin { ||A^T m - e_i||_2 : supp(m) = J_i }, J_i = the pattern of row i of A,
   which only involves the rows J_i of A and, of their columns, K_i = union of their patterns:
     min || A[J_i,K_i]^T m - e_i|K_i ||_2   (a |K_i| x |J_i| problem, 7 x 3 .. 125 x 27 for P1/Q1).
   With C = A[J_i,K_i]^T, the normal equations C^T C m = C^T e_i cost a fraction of a QR (C^T C sums
   products of the few rows of J_i that share a column: about 4K multiply-adds against the QR's 180K at
   Q1), but square the condition number. So they are used when kappa_1(C^T C) <= 1e4 (bounded above
   from its Cholesky factor), where their error, ~kappa(C)^2 u, is within 100 kappa(C) u; other rows
   (and the verdict on a singular one) go to a dense Householder QR of C.

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

/* Workspace of the normal equations of one row; cap: entries of the rows J (>= |K|) */
typedef struct {
  PetscInt     cap, capJ;
  PetscInt    *start, *row; /* per column k of K: its entries in the rows J, [start[k], start[k+1]) */
  PetscScalar *val, *G, *scratch, *rhs; /* G: nJ x nJ; scratch: 2 nJ */
} NormalWork;

static PetscErrorCode NormalWorkReserve(NormalWork *w, PetscInt entries, PetscInt nJ)
{
  PetscFunctionBegin;
  if (entries + 1 > w->cap) {
    PetscCall(PetscFree3(w->start, w->row, w->val));
    w->cap = 2 * (entries + 1);
    PetscCall(PetscMalloc3(w->cap, &w->start, w->cap, &w->row, w->cap, &w->val));
  }
  if (nJ > w->capJ) {
    PetscCall(PetscFree3(w->G, w->scratch, w->rhs));
    w->capJ = 2 * nJ;
    PetscCall(PetscMalloc3(w->capJ * w->capJ, &w->G, 2 * w->capJ, &w->scratch, w->capJ, &w->rhs));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Row i by the normal equations (see the top): m (nJ values) when *ok; *ok = PETSC_FALSE when G is not
   positive definite or the bound ||G||_1 ||R^-1||_1 ||R^-1||_inf on kappa_1(G) exceeds 1e4 */
static PetscErrorCode SolveRowNormal(PetscInt i, PetscInt nJ, const PetscInt J[], PetscInt nK, PetscInt ki, const PetscInt mark[], const PetscInt ia[], const PetscInt lj[], const PetscScalar va[], PetscInt nrows, const PetscInt rows[], NormalWork *w, PetscScalar m[], PetscBool *ok, PetscLogDouble *flops)
{
  PetscScalar   *G = w->G, *work = w->scratch;
  PetscReal      gnorm = 0, r1 = 0, rinf = 0;
  PetscLogDouble pairs = 0;

  PetscFunctionBegin;
  *ok = PETSC_FALSE;
  PetscCall(PetscArrayzero(w->start, nK + 1));
  for (PetscInt c = 0; c < nJ; c++) { /* count the entries of each column k */
    PetscInt p;

    PetscCall(RowPosition(J[c], nrows, rows, &p));
    for (PetscInt t = ia[p]; t < ia[p + 1]; t++) w->start[mark[lj[t]] + 1]++;
  }
  for (PetscInt k = 0; k < nK; k++) w->start[k + 1] += w->start[k];
  for (PetscInt c = 0; c < nJ; c++) { /* fill, rows in increasing c within each column */
    PetscInt p;

    PetscCall(RowPosition(J[c], nrows, rows, &p));
    for (PetscInt t = ia[p]; t < ia[p + 1]; t++) {
      const PetscInt k = mark[lj[t]];

      w->row[w->start[k]] = c;
      w->val[w->start[k]] = va[t];
      w->start[k]++;
    }
  }
  for (PetscInt k = nK; k > 0; k--) w->start[k] = w->start[k - 1];
  w->start[0] = 0;
  /* G = C^T C, upper triangle, column-major; rhs = C^T e_i = the column i entries */
  PetscCall(PetscArrayzero(G, nJ * nJ));
  for (PetscInt k = 0; k < nK; k++) {
    for (PetscInt a = w->start[k]; a < w->start[k + 1]; a++) {
      PetscScalar *Ga = G + w->row[a];
      PetscScalar  va = PetscConj(w->val[a]);

      for (PetscInt b = a; b < w->start[k + 1]; b++) Ga[w->row[b] * nJ] += va * w->val[b];
    }
    pairs += (PetscLogDouble)(w->start[k + 1] - w->start[k]) * (w->start[k + 1] - w->start[k] + 1) / 2;
  }
  PetscCall(PetscArrayzero(w->rhs, nJ));
  if (ki >= 0)
    for (PetscInt a = w->start[ki]; a < w->start[ki + 1]; a++) w->rhs[w->row[a]] = PetscConj(w->val[a]);
  /* ||G||_1 from the upper triangle (column sums in work) */
  PetscCall(PetscArrayzero(work, nJ));
  for (PetscInt d = 0; d < nJ; d++)
    for (PetscInt c = 0; c <= d; c++) {
      const PetscReal v = PetscAbsScalar(G[c + d * nJ]);

      work[d] += v;
      if (c < d) work[c] += v;
    }
  for (PetscInt d = 0; d < nJ; d++) gnorm = PetscMax(gnorm, PetscRealPart(work[d]));
  /* Cholesky G = R^H R in place (upper triangle); small n, so no LAPACK call overhead */
  for (PetscInt j = 0; j < nJ; j++) {
    PetscReal d = PetscRealPart(G[j + j * nJ]);

    for (PetscInt k = 0; k < j; k++) d -= PetscRealPart(PetscConj(G[k + j * nJ]) * G[k + j * nJ]);
    if (!(d > 0)) PetscFunctionReturn(PETSC_SUCCESS); /* not positive definite: the QR decides */
    d             = PetscSqrtReal(d);
    G[j + j * nJ] = d;
    for (PetscInt c = j + 1; c < nJ; c++) {
      PetscScalar v = G[j + c * nJ];

      for (PetscInt k = 0; k < j; k++) v -= PetscConj(G[k + j * nJ]) * G[k + c * nJ];
      G[j + c * nJ] = v / d;
    }
  }
  /* ||R^-1||_inf <= max x and ||R^-1||_1 <= max z for the comparison matrix M(R) (|r_jj| on the
     diagonal, -|r_jk| off it): M(R) x = 1 and M(R)^T z = 1 (Higham, Accuracy and Stability, 8.3) */
  for (PetscInt j = nJ - 1; j >= 0; j--) {
    PetscReal x = 1;

    for (PetscInt k = j + 1; k < nJ; k++) x += PetscAbsScalar(G[j + k * nJ]) * PetscRealPart(work[k]);
    work[j] = x / PetscRealPart(G[j + j * nJ]);
    rinf    = PetscMax(rinf, PetscRealPart(work[j]));
  }
  for (PetscInt j = 0; j < nJ; j++) {
    PetscReal z = 1;

    for (PetscInt k = 0; k < j; k++) z += PetscAbsScalar(G[k + j * nJ]) * PetscRealPart(work[nJ + k]);
    work[nJ + j] = z / PetscRealPart(G[j + j * nJ]);
    r1           = PetscMax(r1, PetscRealPart(work[nJ + j]));
  }
  if (!(gnorm * r1 * rinf <= 1e4)) PetscFunctionReturn(PETSC_SUCCESS);
  /* R^H y = rhs, then R m = y */
  for (PetscInt j = 0; j < nJ; j++) {
    PetscScalar v = w->rhs[j];

    for (PetscInt k = 0; k < j; k++) v -= PetscConj(G[k + j * nJ]) * m[k];
    m[j] = v / G[j + j * nJ];
  }
  for (PetscInt j = nJ - 1; j >= 0; j--) {
    PetscScalar v = m[j];

    for (PetscInt k = j + 1; k < nJ; k++) v -= G[j + k * nJ] * m[k];
    m[j] = v / G[j + j * nJ];
  }
  *ok = PETSC_TRUE;
  *flops += 2.0 * pairs + nJ * nJ * nJ / 3.0 + 6.0 * nJ * nJ;
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
  NormalWork         nw      = {0};
  PetscInt           nnormal = 0; /* rows solved by the normal equations */
  PetscInt           ncol, *cols = NULL, *ljm = NULL, *mark;
  const PetscInt    *lj;

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

  /* B's columns numbered 0..ncol-1 (lj[t] for entry t): sequential, the columns themselves; else the
     sorted distinct global columns cols[]. mark[] (-1 outside the row at hand) gives a column's
     position in K, so that K needs neither sorting nor searching. */
  if (isseq) {
    ncol = Ng;
    lj   = ja;
  } else {
    PetscCall(PetscMalloc2(ia[nB], &cols, ia[nB], &ljm));
    PetscCall(PetscArraycpy(cols, ja, ia[nB]));
    ncol = ia[nB];
    PetscCall(PetscSortRemoveDupsInt(&ncol, cols));
    for (PetscInt t = 0; t < ia[nB]; t++) PetscCall(PetscFindInt(ja[t], ncol, cols, &ljm[t]));
    lj = ljm;
  }
  PetscCall(PetscMalloc1(ncol, &mark));
  for (PetscInt c = 0; c < ncol; c++) mark[c] = -1;

  PetscCall(MatDuplicate(A, MAT_DO_NOT_COPY_VALUES, M));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscInt p;

    PetscCall(RowPosition(i, nrows, rows, &p));
    maxJ = PetscMax(maxJ, ia[p + 1] - ia[p]);
  }
  lwork = (PetscBLASInt)(64 * PetscMax(maxJ, 1)); /* >= the blocked optimum of geqrf and ormqr */
  PetscCall(PetscMalloc2(maxJ, &tau, lwork, &work));

  for (PetscInt i = rstart; i < rend; i++) {
    PetscInt           p, nJ, nK = 0, ki, entries;
    PetscBool          normal;
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
    entries = nK;
    nK      = 0;
    for (PetscInt c = 0; c < nJ; c++) {
      PetscCall(RowPosition(J[c], nrows, rows, &p));
      for (PetscInt t = ia[p]; t < ia[p + 1]; t++)
        if (mark[lj[t]] < 0) {
          mark[lj[t]] = nK;
          K[nK++]     = lj[t];
        }
    }
    if (isseq) ki = mark[i];
    else {
      PetscCall(PetscFindInt(i, ncol, cols, &ki));
      if (ki >= 0) ki = mark[ki];
    }
    if (nK < nJ) { /* fewer equations than unknowns */
      bad      = i;
      singular = 1;
      break;
    }
    PetscCall(NormalWorkReserve(&nw, entries, nJ));
    PetscCall(SolveRowNormal(i, nJ, J, nK, ki, mark, ia, lj, va, nrows, rows, &nw, b, &normal, &flops));
    if (normal) {
      for (PetscInt k = 0; k < nK; k++) mark[K[k]] = -1;
      PetscCall(MatSetValues(*M, 1, &i, nJ, J, b, INSERT_VALUES));
      nnormal++;
      continue;
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
        C[mark[lj[t]] + c * nK] = va[t];
        s += PetscRealPart(va[t] * PetscConj(va[t]));
      }
      cmax = PetscMax(cmax, PetscSqrtReal(s));
    }
    for (PetscInt k = 0; k < nK; k++) mark[K[k]] = -1;
    PetscCall(PetscArrayzero(b, nK));
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
  PetscCall(PetscFree3(nw.start, nw.row, nw.val));
  PetscCall(PetscFree(mark));
  PetscCall(PetscFree2(cols, ljm));
  PetscCall(PetscFree3(nw.G, nw.scratch, nw.rhs));
  PetscCall(PetscLogFlops(flops));
  PetscCall(PetscInfo(A, "SPAI(1): %" PetscInt_FMT " of %" PetscInt_FMT " rows by the normal equations, the others by QR\n", nnormal, rend - rstart));

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
