static const char help[] = "Checks the SPAI(1) approximate inverse of PCPATCHAMG (src/pc/patchamg/paspai.c) against a dense\n"
                           "brute-force least-squares solve per row (long double Householder QR of A[J_i,:]^T), on small\n"
                           "Laplacians with random SPD perturbations, a 3D 7-point and a 27-point Laplacian, a random sparse SPD\n"
                           "matrix and a nonsymmetric one; the pattern must be A's and ||I - M A||_F must beat Jacobi and SPAI(0).\n"
                           "Then bad input (zero rows, a singular row problem) must fail naming the row, on every rank.\n"
                           "Options:\n"
                           "  -mat_type <aij>   the type of the test matrices\n"
                           "  -skip_bad         only the comparisons\n\n";

#include <patchwork.h>
#include <math.h>
#include "compare.h" /* ErrMax(), PatchworkTestErrMaxAllreduce() */

static PetscInt failures = 0;

/* A test matrix, dense and the same on every rank: the reference needs all of it */
typedef struct {
  const char *name;
  PetscInt    n;
  PetscReal  *a;  /* row-major n x n values */
  char       *nz; /* row-major pattern: entries stored in the AIJ matrix (stored zeros allowed) */
} Dense;

static unsigned long long rng_state = 0x9e3779b97f4a7c15ULL;
static PetscReal          Uniform(void) /* xorshift64*: the same numbers on every rank */
{
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (PetscReal)((rng_state * 0x2545f4914f6cdd1dULL) >> 11) / 9007199254740992.0;
}

static PetscErrorCode DenseCreate(const char name[], PetscInt n, Dense *D)
{
  PetscFunctionBeginUser;
  D->name = name;
  D->n    = n;
  PetscCall(PetscCalloc2(n * n, &D->a, n * n, &D->nz));
  PetscFunctionReturn(0);
}

static PetscErrorCode DenseDestroy(Dense *D)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree2(D->a, D->nz));
  PetscFunctionReturn(0);
}

static void Set(Dense *D, PetscInt i, PetscInt j, PetscReal v)
{
  D->a[i * D->n + j]  = v;
  D->nz[i * D->n + j] = 1;
}

/* Symmetric couplings -(1 + pert*U) and a diagonal that makes every row diagonally dominant:
   SPD, a Laplacian for pert = 0 (Dirichlet boundary: the dominance comes from the cut neighbours) */
static void Couple(Dense *D, PetscInt i, PetscInt j, PetscReal pert)
{
  PetscReal v = -(1 + pert * Uniform());

  Set(D, i, j, v);
  Set(D, j, i, v);
}

static void Diagonal(Dense *D, PetscReal lap, PetscReal pert)
{
  for (PetscInt i = 0; i < D->n; i++) {
    PetscReal s = 0;

    for (PetscInt j = 0; j < D->n; j++)
      if (j != i) s += PetscAbsReal(D->a[i * D->n + j]);
    Set(D, i, i, pert > 0 ? s + pert * (0.1 + Uniform()) : lap);
  }
}

/* Grid Laplacians, n^dim points; stencil 1: 3/5/7-point, 2: all 3^dim - 1 neighbours (Q1-like) */
static PetscErrorCode Grid(const char name[], PetscInt dim, PetscInt n, PetscInt stencil, PetscReal pert, Dense *D)
{
  PetscInt N = dim == 1 ? n : dim == 2 ? n * n : n * n * n;

  PetscFunctionBeginUser;
  PetscCall(DenseCreate(name, N, D));
  for (PetscInt p = 0; p < N; p++) {
    PetscInt x[3] = {p % n, (p / n) % n, p / (n * n)};

    for (PetscInt q = p + 1; q < N; q++) {
      PetscInt y[3] = {q % n, (q / n) % n, q / (n * n)}, far = 0, dist = 0;

      for (PetscInt d = 0; d < dim; d++) {
        PetscInt e = PetscAbsInt(x[d] - y[d]);

        far |= e > 1;
        dist += e;
      }
      if (!far && (stencil == 2 || dist == 1)) Couple(D, p, q, pert);
    }
  }
  Diagonal(D, stencil == 2 ? (dim == 2 ? 8 : 26) : 2 * dim, pert);
  PetscFunctionReturn(0);
}

/* Random symmetric pattern (about deg couplings a row), random values, diagonally dominant */
static PetscErrorCode RandomSPD(PetscInt N, PetscInt deg, Dense *D)
{
  PetscFunctionBeginUser;
  PetscCall(DenseCreate("random sparse SPD", N, D));
  for (PetscInt i = 0; i < N; i++)
    for (PetscInt k = 0; k < deg / 2; k++) {
      PetscInt j = (PetscInt)(Uniform() * N);

      if (j != i) Couple(D, i, j, 3.0);
    }
  Diagonal(D, 0, 0.5);
  PetscFunctionReturn(0);
}

/* Upwind convection-diffusion on n x n: west, south, east neighbours only (a nonsymmetric pattern) */
static PetscErrorCode Upwind(PetscInt n, Dense *D)
{
  PetscFunctionBeginUser;
  PetscCall(DenseCreate("2D upwind, nonsymmetric pattern", n * n, D));
  for (PetscInt p = 0; p < n * n; p++) {
    PetscInt x = p % n, y = p / n;

    Set(D, p, p, 4 + Uniform());
    if (x > 0) Set(D, p, p - 1, -2 - Uniform());
    if (y > 0) Set(D, p, p - n, -1.5 - Uniform());
    if (x < n - 1) Set(D, p, p + 1, -0.2 * Uniform());
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode DenseToMat(const Dense *D, Mat *A)
{
  PetscInt rstart, rend, maxrow = 1, *cols;
  PetscScalar *vals;

  PetscFunctionBeginUser;
  for (PetscInt i = 0; i < D->n; i++) {
    PetscInt c = 0;

    for (PetscInt j = 0; j < D->n; j++) c += D->nz[i * D->n + j];
    maxrow = PetscMax(maxrow, c);
  }
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, D->n, D->n));
  PetscCall(MatSetType(*A, MATAIJ));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSeqAIJSetPreallocation(*A, maxrow, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, maxrow, NULL, maxrow, NULL));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  PetscCall(PetscMalloc2(D->n, &cols, D->n, &vals));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscInt c = 0;

    for (PetscInt j = 0; j < D->n; j++)
      if (D->nz[i * D->n + j]) {
        cols[c]   = j;
        vals[c++] = D->a[i * D->n + j];
      }
    PetscCall(MatSetValues(*A, 1, &i, c, cols, vals, INSERT_VALUES));
  }
  PetscCall(PetscFree2(cols, vals));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* The reference: row i of M = argmin ||C m - e_i||, C = A[J,:]^T (n x nJ, all n columns: the zero
   rows of C change nothing), by Householder QR of [C e_i] in long double. Returns m, the residual
   norm and kappa = ||R||_F ||R^-1||_F >= cond_2(C). */
static PetscErrorCode Reference(const Dense *D, PetscInt i, PetscInt nJ, const PetscInt J[], PetscReal m[], PetscReal *res, PetscReal *kappa, PetscReal *normC)
{
  PetscInt     n = D->n;
  long double *W, *Ri, nR = 0, nRi = 0, r2 = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(n * (nJ + 1), &W, nJ * nJ, &Ri));
  for (PetscInt c = 0; c < nJ; c++)
    for (PetscInt k = 0; k < n; k++) W[k + c * n] = D->a[J[c] * n + k];
  for (PetscInt k = 0; k < n; k++) W[k + nJ * n] = k == i;
  for (PetscInt c = 0; c < nJ; c++) { /* reflect column c onto e_c, apply to the columns right of it */
    long double s = 0, alpha, vnorm2;

    for (PetscInt k = c; k < n; k++) s += W[k + c * n] * W[k + c * n];
    alpha = W[c + c * n] > 0 ? -sqrtl(s) : sqrtl(s);
    PetscCheck(alpha != 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "reference: row %" PetscInt_FMT " is rank deficient", i);
    W[c + c * n] -= alpha; /* v = x - alpha e_c, stored in place */
    vnorm2 = s - 2 * alpha * (W[c + c * n] + alpha) + alpha * alpha;
    for (PetscInt d = c + 1; d <= nJ; d++) {
      long double t = 0;

      for (PetscInt k = c; k < n; k++) t += W[k + c * n] * W[k + d * n];
      t = 2 * t / vnorm2;
      for (PetscInt k = c; k < n; k++) W[k + d * n] -= t * W[k + c * n];
    }
    W[c + c * n] = alpha; /* R's diagonal; the strict upper part of R is already in place */
  }
  for (PetscInt k = nJ; k < n; k++) r2 += W[k + nJ * n] * W[k + nJ * n];
  for (PetscInt r = nJ - 1; r >= 0; r--) {
    long double s = W[r + nJ * n];

    for (PetscInt c = r + 1; c < nJ; c++) s -= W[r + c * n] * (long double)m[c];
    m[r] = (PetscReal)(s / W[r + r * n]);
  }
  /* R^-1 column by column (upper triangular) for the condition estimate */
  for (PetscInt c = 0; c < nJ; c++)
    for (PetscInt r = nJ - 1; r >= 0; r--) {
      long double s = r == c;

      for (PetscInt q = r + 1; q < nJ; q++) s -= W[r + q * n] * Ri[q + c * nJ];
      Ri[r + c * nJ] = r > c ? 0 : s / W[r + r * n];
    }
  for (PetscInt c = 0; c < nJ; c++)
    for (PetscInt r = 0; r <= c; r++) {
      nR += W[r + c * n] * W[r + c * n];
      nRi += Ri[r + c * nJ] * Ri[r + c * nJ];
    }
  *res   = (PetscReal)sqrtl(r2);
  *kappa = (PetscReal)sqrtl(nR * nRi);
  *normC = (PetscReal)sqrtl(nR); /* ||C||_F = ||R||_F */
  PetscCall(PetscFree2(W, Ri));
  PetscFunctionReturn(0);
}

/* Collective: a check passes when it passes on every rank */
static PetscErrorCode Report(PetscBool pass, const char name[], const char what[], const char detail[])
{
  PetscMPIInt ok = pass;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, PETSC_COMM_WORLD));
  if (!ok) failures++;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %-34s %-22s %s\n", ok ? "ok  " : "FAIL", name, what, detail));
  PetscFunctionReturn(0);
}

/* ||I - S A||_F for the diagonal S = s */
static PetscErrorCode ScaledDistance(Mat A, Vec s, PetscReal *nrm)
{
  Mat B;

  PetscFunctionBeginUser;
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &B));
  PetscCall(MatDiagonalScale(B, s, NULL));
  PetscCall(MatShift(B, -1.0));
  PetscCall(MatNorm(B, NORM_FROBENIUS, nrm));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

static PetscErrorCode Check(Dense *D)
{
  Mat         A, M, P;
  Vec         s;
  MatType     ta, tm;
  PetscInt    rstart, rend, m0, n0, m1, n1, *J;
  PetscBool   same, pattern = PETSC_TRUE;
  PetscReal  *ref, worst = 0, errmax = 0, kmax = 0, nM, nJac, nS0;
  char        buf[256];

  PetscFunctionBeginUser;
  PetscCall(DenseToMat(D, &A));
  PetscCall(PatchworkMatCreateSPAI1(A, &M));
  PetscCall(MatGetType(A, &ta));
  PetscCall(MatGetType(M, &tm));
  PetscCall(PetscStrcmp(ta, tm, &same));
  PetscCall(MatGetLocalSize(A, &m0, &n0));
  PetscCall(MatGetLocalSize(M, &m1, &n1));
  PetscCall(PetscSNPrintf(buf, sizeof(buf), "%s, %" PetscInt_FMT " rows", tm, D->n));
  PetscCall(Report((PetscBool)(same && m0 == m1 && n0 == n1), D->name, "type and layout", buf));

  /* Row by row: the pattern, then the values against the reference. The tolerance is Higham's
     perturbation bound for least squares (Accuracy and Stability, Thm 20.1) with a backward error
     eps_bw = 1e3 u of Householder QR (its bound grows like |K| |J| u; 1e3 covers the sizes here):
       ||m - m_ref|| <= eps_bw kappa (2 ||m_ref|| + (kappa + 1) ||r|| / ||C||_2),
     kappa = ||R||_F ||R^-1||_F >= cond_2(C) and ||C||_2 >= ||C||_F / sqrt(|J|), so the bound is safe;
     the residual term (kappa^2: SPAI residuals are far from zero) is why the QR must not be replaced
     by the normal equations, whose error is eps kappa^2 even for a zero residual. */
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  PetscCall(PetscMalloc2(D->n, &J, D->n, &ref));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscInt           nc, nJ = 0;
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscReal          res, kappa, normC, err = 0, nref = 0, tol, u = PETSC_MACHINE_EPSILON;

    for (PetscInt j = 0; j < D->n; j++)
      if (D->nz[i * D->n + j]) J[nJ++] = j;
    PetscCall(Reference(D, i, nJ, J, ref, &res, &kappa, &normC));
    PetscCall(MatGetRow(M, i, &nc, &cols, &vals));
    if (nc != nJ) pattern = PETSC_FALSE;
    for (PetscInt c = 0; c < PetscMin(nc, nJ); c++) {
      if (cols[c] != J[c]) pattern = PETSC_FALSE;
      err += PetscSqr(PetscRealPart(vals[c]) - ref[c]);
      nref += PetscSqr(ref[c]);
    }
    PetscCall(MatRestoreRow(M, i, &nc, &cols, &vals));
    err = PetscSqrtReal(err);
    nref = PetscSqrtReal(nref);
    tol  = 1e3 * u * kappa * (2 * nref + (kappa + 1) * res * PetscSqrtReal((PetscReal)nJ) / normC);
    worst  = ErrMax(worst, err / tol);
    errmax = ErrMax(errmax, err / nref);
    kmax   = ErrMax(kmax, kappa);
  }
  PetscCall(PetscFree2(J, ref));
  PetscCall(Report(pattern, D->name, "pattern = A's", ""));
  PetscCall(PatchworkTestErrMaxAllreduce(PETSC_COMM_WORLD, 1, &worst));
  PetscCall(PatchworkTestErrMaxAllreduce(PETSC_COMM_WORLD, 1, &errmax));
  PetscCall(PatchworkTestErrMaxAllreduce(PETSC_COMM_WORLD, 1, &kmax));
  PetscCall(PetscSNPrintf(buf, sizeof(buf), "max rel. error %.1e, max error/tol %.1e (kappa <= %.1f)", (double)errmax, (double)worst, (double)kmax));
  PetscCall(Report((PetscBool)(worst <= 1), D->name, "rows = dense LS", buf));

  /* ||I - M A||_F through PETSc's product; SPAI(1)'s search space holds Jacobi's D^-1 and SPAI(0)'s
     a_ii / ||a_i||^2 (the best diagonal), so it must do at least as well as both, Jacobi strictly */
  PetscCall(MatMatMult(M, A, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &P));
  PetscCall(MatShift(P, -1.0));
  PetscCall(MatNorm(P, NORM_FROBENIUS, &nM));
  PetscCall(MatDestroy(&P));
  PetscCall(MatCreateVecs(A, &s, NULL));
  PetscCall(MatGetDiagonal(A, s));
  PetscCall(VecReciprocal(s));
  PetscCall(ScaledDistance(A, s, &nJac));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscInt           nc;
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscScalar        aii = 0;
    PetscReal          l2 = 0;

    PetscCall(MatGetRow(A, i, &nc, &cols, &vals));
    for (PetscInt c = 0; c < nc; c++) {
      if (cols[c] == i) aii = vals[c];
      l2 += PetscRealPart(vals[c] * PetscConj(vals[c]));
    }
    PetscCall(MatRestoreRow(A, i, &nc, &cols, &vals));
    PetscCall(VecSetValue(s, i, aii / l2, INSERT_VALUES));
  }
  PetscCall(VecAssemblyBegin(s));
  PetscCall(VecAssemblyEnd(s));
  PetscCall(ScaledDistance(A, s, &nS0));
  PetscCall(PetscSNPrintf(buf, sizeof(buf), "||I-MA||_F %.4g < Jacobi %.4g, <= SPAI(0) %.4g", (double)nM, (double)nJac, (double)nS0));
  PetscCall(Report((PetscBool)(nM < nJac && nM <= nS0 * (1 + 1e-12)), D->name, "beats Jacobi, SPAI(0)", buf));
  PetscCall(VecDestroy(&s));
  PetscCall(MatDestroy(&M));
  PetscCall(MatDestroy(&A));
  PetscCall(DenseDestroy(D));
  PetscFunctionReturn(0);
}

/* The call must fail on every rank with a message containing the words */
static PetscErrorCode ExpectError(Dense *D, const char words[])
{
  Mat            A, M = NULL;
  PetscErrorCode code;
  const char    *msg = NULL;

  PetscFunctionBeginUser;
  PetscCall(DenseToMat(D, &A));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  code = PatchworkMatCreateSPAI1(A, &M);
  PetscCall(PetscPopErrorHandler());
  /* the message argument is char ** up to PETSc 3.2x and const char ** after: void * fits both */
  if (code) PetscCall(PetscErrorMessage(code, NULL, (void *)&msg));
  PetscCall(Report((PetscBool)(code && msg && strstr(msg, words) && !M), D->name, "refused", code ? (msg ? msg : "(no message)") : "no error"));
  PetscCall(MatDestroy(&M));
  PetscCall(MatDestroy(&A));
  PetscCall(DenseDestroy(D));
  PetscFunctionReturn(0);
}

/* Tridiagonal SPD n = 10, then row/column `cut` removed (empty) or only a stored zero diagonal */
static PetscErrorCode BadRow(const char name[], PetscInt cut, PetscBool stored, Dense *D)
{
  PetscFunctionBeginUser;
  PetscCall(Grid(name, 1, 10, 1, 0, D));
  for (PetscInt j = 0; j < D->n; j++) {
    D->a[cut * D->n + j] = D->a[j * D->n + cut] = 0;
    D->nz[cut * D->n + j] = D->nz[j * D->n + cut] = 0;
  }
  if (stored) Set(D, cut, cut, 0);
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Dense     D;
  PetscBool skip_bad = PETSC_FALSE;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-skip_bad", &skip_bad, NULL));

  PetscCall(Grid("1D Laplacian + SPD perturbation", 1, 20, 1, 0.5, &D));
  PetscCall(Check(&D));
  PetscCall(Grid("2D 5-point + SPD perturbation", 2, 8, 1, 0.5, &D));
  PetscCall(Check(&D));
  PetscCall(Grid("3D 7-point Laplacian 6^3", 3, 6, 1, 0, &D));
  PetscCall(Check(&D));
  PetscCall(Grid("3D 27-point (Q1-like) 5^3", 3, 5, 2, 0.3, &D));
  PetscCall(Check(&D));
  PetscCall(RandomSPD(80, 6, &D));
  PetscCall(Check(&D));
  PetscCall(Upwind(7, &D));
  PetscCall(Check(&D));

  if (!skip_bad) {
    PetscCall(BadRow("empty row 3", 3, PETSC_FALSE, &D));
    PetscCall(ExpectError(&D, "row 3 of the matrix is zero"));
    /* on two ranks row 7 lies on the second: the first must raise the same error */
    PetscCall(BadRow("stored zero row 7", 7, PETSC_TRUE, &D));
    PetscCall(ExpectError(&D, "row 7 of the matrix is zero"));
    /* rows 4 and 5 equal ([1 1; 1 1], decoupled): row 4's problem has two equal columns */
    PetscCall(Grid("equal rows 4 and 5", 1, 10, 1, 0, &D));
    for (PetscInt i = 3; i <= 6; i++)
      for (PetscInt j = 3; j <= 6; j++) D.a[i * D.n + j] = D.nz[i * D.n + j] = 0;
    for (PetscInt i = 4; i <= 5; i++)
      for (PetscInt j = 4; j <= 5; j++) Set(&D, i, j, 1);
    Set(&D, 3, 3, 2);
    Set(&D, 6, 6, 2);
    PetscCall(ExpectError(&D, "row 4 is singular"));
  }

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s\n", failures ? "FAILED" : "SPAI(1) agrees with the dense least-squares solution"));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
