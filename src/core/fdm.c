/* Fast-diagonalization data of the vertex-patch smoother (contract: include/patchwork/patch_kernel.h):
   the 1D patch matrices of a two-cell patch and the symmetric-definite generalized eigenproblem
   K S = M S diag(lam), S^T M S = I, on their interior blocks. PETSc-free, no LAPACK: the matrices
   are at most 19 x 19, and a Cholesky factorization followed by cyclic Jacobi is accurate and short. */
#include <float.h>
#include <math.h>
#include <string.h>
#include <patchwork/patch_kernel.h>

#define PW_JACOBI_MAX_SWEEPS 64

/* M = L L^T, L lower triangular, row major; only the lower triangle of M is read. Nonzero when a
   pivot is not positive (M not positive definite, or NaN). */
static int Cholesky(int n, const double *M, double *L)
{
  memset(L, 0, sizeof(double) * n * n);
  for (int j = 0; j < n; j++) {
    double s = M[j * n + j];

    for (int p = 0; p < j; p++) s -= L[j * n + p] * L[j * n + p];
    if (!(s > 0.0)) return 1;
    L[j * n + j] = sqrt(s);
    for (int i = j + 1; i < n; i++) {
      double t = M[i * n + j];

      for (int p = 0; p < j; p++) t -= L[i * n + p] * L[j * n + p];
      L[i * n + j] = t / L[j * n + j];
    }
  }
  return 0;
}

/* X = L^{-1} B (forward substitution on every column), all n x n row major */
static void LowerSolve(int n, const double *L, const double *B, double *X)
{
  for (int c = 0; c < n; c++) {
    for (int i = 0; i < n; i++) {
      double s = B[i * n + c];

      for (int p = 0; p < i; p++) s -= L[i * n + p] * X[p * n + c];
      X[i * n + c] = s / L[i * n + i];
    }
  }
}

/* X = L^{-T} B (backward substitution on every column) */
static void LowerTransposeSolve(int n, const double *L, const double *B, double *X)
{
  for (int c = 0; c < n; c++) {
    for (int i = n - 1; i >= 0; i--) {
      double s = B[i * n + c];

      for (int p = i + 1; p < n; p++) s -= L[p * n + i] * X[p * n + c];
      X[i * n + c] = s / L[i * n + i];
    }
  }
}

/*
  Cyclic Jacobi on the symmetric C (overwritten by its eigenvalues on the diagonal), accumulating the
  rotations in V (V = I on entry). An off-diagonal entry is rotated away unless it is below
  eps/2 sqrt(|c_pp c_qq|): relative to the diagonal, not to ||C||, so that the small eigenvalues
  (which dominate the patch inverse) are not left with errors of the size of the largest (a patch
  stiffness has eigenvalues over three to four decades). Converged when a whole sweep rotates
  nothing; nonzero when that does not happen in PW_JACOBI_MAX_SWEEPS (the patch matrices k <= 10
  take at most 8 sweeps, the check included).
*/
static int Jacobi(int n, double *C, double *V)
{
  for (int sweep = 0; sweep < PW_JACOBI_MAX_SWEEPS; sweep++) {
    int rotated = 0;

    for (int p = 0; p < n - 1; p++) {
      for (int q = p + 1; q < n; q++) {
        const double apq = C[p * n + q], app = C[p * n + p], aqq = C[q * n + q];
        double       theta, t, c, s;

        if (apq == 0.0) continue;
        if (fabs(apq) <= 0.5 * DBL_EPSILON * sqrt(fabs(app * aqq))) {
          C[p * n + q] = C[q * n + p] = 0.0; /* below the rounding of the diagonal: drop it */
          continue;
        }
        /* t = tan(phi) of the smaller rotation angle zeroing c_pq; 1/(2 theta) avoids theta^2 overflow */
        theta = (aqq - app) / (2.0 * apq);
        if (fabs(theta) > 1e150) t = 0.5 / theta;
        else t = (theta >= 0.0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(1.0 + theta * theta));
        c = 1.0 / sqrt(1.0 + t * t);
        s = t * c;
        C[p * n + p] = app - t * apq;
        C[q * n + q] = aqq + t * apq;
        C[p * n + q] = C[q * n + p] = 0.0;
        for (int r = 0; r < n; r++) {
          double vrp = V[r * n + p], vrq = V[r * n + q];

          V[r * n + p] = c * vrp - s * vrq;
          V[r * n + q] = s * vrp + c * vrq;
          if (r == p || r == q) continue;
          vrp          = C[r * n + p];
          vrq          = C[r * n + q];
          C[r * n + p] = C[p * n + r] = c * vrp - s * vrq;
          C[r * n + q] = C[q * n + r] = s * vrp + c * vrq;
        }
        rotated = 1;
      }
    }
    if (!rotated) return 0;
  }
  return 1;
}

/*
  PatchworkGeneralizedEigen - K S = M S diag(lam), S^T M S = I, lam ascending, for symmetric K and
  symmetric positive definite M (the symmetric parts are used), n <= PW_PATCH_MAX_NI.

  With M = L L^T the problem is the standard one C Q = Q diag(lam), C = L^{-1} K L^{-T}, and
  S = L^{-T} Q: then S^T M S = Q^T Q = I and K S = L C Q = L Q diag(lam) = M S diag(lam).
  Each eigenvector is signed so that its first entry of (nearly) largest magnitude is positive, so
  that S does not depend on the rotation order (any consumer that recomputes it gets the same S).
  Returns 1 when M is not positive definite, 2 when Jacobi does not converge, 3 on bad n.
*/
int PatchworkGeneralizedEigen(int n, const double *K, const double *M, double *S, double *lam)
{
  double Ms[PW_PATCH_MAX_NI * PW_PATCH_MAX_NI], L[PW_PATCH_MAX_NI * PW_PATCH_MAX_NI];
  double W[PW_PATCH_MAX_NI * PW_PATCH_MAX_NI], C[PW_PATCH_MAX_NI * PW_PATCH_MAX_NI], V[PW_PATCH_MAX_NI * PW_PATCH_MAX_NI];
  int    perm[PW_PATCH_MAX_NI];

  if (n < 1 || n > PW_PATCH_MAX_NI) return 3;
  memset(W, 0, sizeof(W)); /* only n x n is used; this keeps the compiler's flow analysis quiet */
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      Ms[i * n + j] = 0.5 * (M[i * n + j] + M[j * n + i]);
      W[i * n + j]  = 0.5 * (K[i * n + j] + K[j * n + i]);
    }
  if (Cholesky(n, Ms, L)) return 1;
  /* C = L^{-1} (L^{-1} K)^T, symmetric up to rounding, then made exactly so */
  LowerSolve(n, L, W, C);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) W[i * n + j] = C[j * n + i];
  LowerSolve(n, L, W, C);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++) C[i * n + j] = C[j * n + i] = 0.5 * (C[i * n + j] + C[j * n + i]);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) V[i * n + j] = i == j ? 1.0 : 0.0;
  if (Jacobi(n, C, V)) return 2;
  LowerTransposeSolve(n, L, V, W);
  /* sort ascending (selection sort: n <= 19), then fix the signs */
  for (int i = 0; i < n; i++) perm[i] = i;
  for (int i = 0; i < n; i++) {
    int m = i;

    for (int j = i + 1; j < n; j++)
      if (C[perm[j] * n + perm[j]] < C[perm[m] * n + perm[m]]) m = j;
    if (m != i) {
      int t   = perm[i];
      perm[i] = perm[m];
      perm[m] = t;
    }
  }
  for (int j = 0; j < n; j++) {
    const int src = perm[j];
    double    vmax = 0.0;
    int       imax = 0;

    lam[j] = C[src * n + src];
    for (int i = 0; i < n; i++) vmax = fmax(vmax, fabs(W[i * n + src]));
    /* the first entry within rounding of the largest: a symmetric patch has mirrored pairs of equal
       magnitude, and the choice between them must not depend on the last bit */
    while (fabs(W[imax * n + src]) < (1.0 - 1e-8) * vmax) imax++;
    for (int i = 0; i < n; i++) S[i * n + j] = W[imax * n + src] < 0.0 ? -W[i * n + src] : W[i * n + src];
  }
  return 0;
}

/* Largest |A_ij - A_{n-1-i,m-1-j}| relative to max |A_ij| (A n x m): 0 for a centrosymmetric A */
static double CentroAsymmetry(int n, int m, const double *A)
{
  double amax = 0.0, dmax = 0.0;

  for (int i = 0; i < n * m; i++) amax = fmax(amax, fabs(A[i]));
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) dmax = fmax(dmax, fabs(A[i * m + j] - A[(n - 1 - i) * m + m - 1 - j]));
  return amax > 0.0 ? dmax / amax : 0.0;
}

/* Signs as in PatchworkGeneralizedEigen: the first entry of (nearly) largest magnitude positive */
static void NormalizeSign(int n, int ncol, int col, double *S)
{
  double vmax = 0.0;
  int    imax = 0;

  for (int i = 0; i < n; i++) vmax = fmax(vmax, fabs(S[i * ncol + col]));
  while (fabs(S[imax * ncol + col]) < (1.0 - 1e-8) * vmax) imax++;
  if (S[imax * ncol + col] < 0.0)
    for (int i = 0; i < n; i++) S[i * ncol + col] = -S[i * ncol + col];
}

/*
  The eigenproblem of centrosymmetric K, M (J K J = K, J M J = M, J the exchange matrix), n odd, on
  the even and odd subspaces separately: with the orthonormal bases E+ (columns (e_p + e_{n-1-p})/sqrt2
  and the middle e_h) and E- (columns (e_p - e_{n-1-p})/sqrt2), the problems E^T K E a = lam E^T M E a
  are (n+1)/2 and (n-1)/2 in size, and S = E a has S[n-1-i] = +-S[i] bitwise: every eigenvector is
  exactly symmetric or antisymmetric, which an even-odd split of the 1D contractions (the CUDA
  kernels) relies on. The two spectra are merged in ascending order.
*/
static int CentroEigen(int n, const double *K, const double *M, double *S, double *lam)
{
  const int    h = n / 2, nr[2] = {h + 1, h};
  const double r2 = sqrt(0.5);
  double       E[2][PW_PATCH_MAX_NI * PW_PATCH_MAX_NI], Kr[PW_PATCH_MAX_NI * PW_PATCH_MAX_NI], Mr[PW_PATCH_MAX_NI * PW_PATCH_MAX_NI];
  double       Sr[2][PW_PATCH_MAX_NI * PW_PATCH_MAX_NI], lr[2][PW_PATCH_MAX_NI], T[PW_PATCH_MAX_NI * PW_PATCH_MAX_NI];
  int          next[2] = {0, 0};

  memset(E, 0, sizeof(E));
  for (int p = 0; p < h; p++) {
    E[0][p * nr[0] + p] = E[0][(n - 1 - p) * nr[0] + p] = r2;
    E[1][p * nr[1] + p]                                  = r2;
    E[1][(n - 1 - p) * nr[1] + p]                        = -r2;
  }
  E[0][h * nr[0] + h] = 1.0;
  for (int par = 0; par < 2; par++) {
    const int     m  = nr[par];
    const double *Ep = E[par];

    if (m == 0) continue;
    /* Kr = E^T K E, Mr = E^T M E through T = K E (then M E) */
    for (int pass = 0; pass < 2; pass++) {
      const double *A = pass ? M : K;
      double       *R = pass ? Mr : Kr;

      for (int i = 0; i < n; i++)
        for (int c = 0; c < m; c++) {
          double t = 0.0;

          for (int q = 0; q < n; q++) t += A[i * n + q] * Ep[q * m + c];
          T[i * m + c] = t;
        }
      for (int a = 0; a < m; a++)
        for (int c = 0; c < m; c++) {
          double t = 0.0;

          for (int q = 0; q < n; q++) t += Ep[q * m + a] * T[q * m + c];
          R[a * m + c] = t;
        }
    }
    if (PatchworkGeneralizedEigen(m, Kr, Mr, Sr[par], lr[par])) return 1;
  }
  /* merge ascending; S = E a, built from the pairs so that the mirror entries are the same number */
  for (int j = 0; j < n; j++) {
    const int par = next[1] >= nr[1] || (next[0] < nr[0] && lr[0][next[0]] <= lr[1][next[1]]) ? 0 : 1, c = next[par]++, m = nr[par];

    lam[j] = lr[par][c];
    for (int p = 0; p < h; p++) {
      const double v = r2 * Sr[par][p * m + c];

      S[p * n + j]           = v;
      S[(n - 1 - p) * n + j] = par ? -v : v;
    }
    S[h * n + j] = par ? 0.0 : Sr[0][h * m + c];
    NormalizeSign(n, n, j, S);
  }
  return 0;
}

/*
  PatchworkPatchSetUp1D - the 1D data of the vertex patch: the two-cell matrices assembled from the
  cell matrices op.mass1d, op.stiff1d (nodes 0..2k, the cells overlapping at node k), their interior
  rows 1..2k-1 (patch_mass, patch_stiff: the rectangular Abar factors) and, from the interior blocks
  M_I, K_I, the eigenvectors and eigenvalues of the fast diagonalization. Unused entries are zeroed so
  that a descriptor copied to the device is deterministic. Nonzero on bad degree or failed eigensolve.

  Symmetric cell matrices on the symmetric Gauss-Lobatto nodes make M_I and K_I centrosymmetric up to
  rounding; then (asymmetry below 64 eps) the eigenproblem of their centrosymmetric parts is solved
  by CentroEigen, and every column of S is exactly symmetric or antisymmetric about the middle node.
*/
int PatchworkPatchSetUp1D(PatchworkPatchDesc *d)
{
  const int k = d->op.degree, n = k + 1, np = 2 * k + 1, ni = 2 * k - 1;
  double    Pm[PW_PATCH_MAX_N * PW_PATCH_MAX_N], Ps[PW_PATCH_MAX_N * PW_PATCH_MAX_N];
  double    MI[PW_PATCH_MAX_NI * PW_PATCH_MAX_NI], KI[PW_PATCH_MAX_NI * PW_PATCH_MAX_NI];

  if (k < 1 || k > PW_MAX_DEGREE) return 1;
  memset(Pm, 0, sizeof(Pm));
  memset(Ps, 0, sizeof(Ps));
  for (int c = 0; c < 2; c++)
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        Pm[(c * k + i) * np + c * k + j] += d->op.mass1d[i * n + j];
        Ps[(c * k + i) * np + c * k + j] += d->op.stiff1d[i * n + j];
      }
  memset(d->patch_mass, 0, sizeof(d->patch_mass));
  memset(d->patch_stiff, 0, sizeof(d->patch_stiff));
  memset(d->eigvec, 0, sizeof(d->eigvec));
  memset(d->eigval, 0, sizeof(d->eigval));
  for (int i = 0; i < ni; i++) {
    for (int j = 0; j < np; j++) {
      d->patch_mass[i * np + j]  = Pm[(i + 1) * np + j];
      d->patch_stiff[i * np + j] = Ps[(i + 1) * np + j];
    }
    for (int j = 0; j < ni; j++) {
      MI[i * ni + j] = Pm[(i + 1) * np + j + 1];
      KI[i * ni + j] = Ps[(i + 1) * np + j + 1];
    }
  }
  if (CentroAsymmetry(ni, ni, MI) <= 64 * DBL_EPSILON && CentroAsymmetry(ni, ni, KI) <= 64 * DBL_EPSILON) {
    double Mc[PW_PATCH_MAX_NI * PW_PATCH_MAX_NI], Kc[PW_PATCH_MAX_NI * PW_PATCH_MAX_NI];

    for (int i = 0; i < ni; i++)
      for (int j = 0; j < ni; j++) {
        Mc[i * ni + j] = 0.5 * (MI[i * ni + j] + MI[(ni - 1 - i) * ni + ni - 1 - j]);
        Kc[i * ni + j] = 0.5 * (KI[i * ni + j] + KI[(ni - 1 - i) * ni + ni - 1 - j]);
      }
    return CentroEigen(ni, Kc, Mc, d->eigvec, d->eigval) ? 2 : 0;
  }
  return PatchworkGeneralizedEigen(ni, KI, MI, d->eigvec, d->eigval) ? 2 : 0;
}
