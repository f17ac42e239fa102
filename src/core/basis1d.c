/* One-dimensional Gauss and Gauss-Lobatto rules, Lagrange bases and the 1D mass and stiffness
   matrices of the tensor-product operator. PETSc-free and stateless. */
#include <math.h>
#include <patchwork/basis1d.h>
#include <patchwork/tensor_kernel.h>

#define PW_MAX_QUAD_POINTS (PW_MAX_N + 2)
#define PW_NEWTON_MAXIT    100
#define PW_NEWTON_TOL      1e-15

static const double PW_PI = 3.14159265358979323846;

/* P_N(x) and P_{N-1}(x) by the three-term recurrence (k+1) P_{k+1} = (2k+1) x P_k - k P_{k-1} */
static void Legendre(int N, double x, double *p, double *pm1)
{
  double pk = 1.0, pkm1 = 0.0;

  for (int k = 0; k < N; k++) {
    double pkp1 = ((2 * k + 1) * x * pk - k * pkm1) / (k + 1);

    pkm1 = pk;
    pk   = pkp1;
  }
  *p   = pk;
  *pm1 = pkm1;
}

/* Map points and weights from [-1,1] to [0,1]. Only the lower half is computed by Newton and the
   upper half mirrored, so the rule is symmetric to rounding and the midpoint is exactly 1/2. */
static void MirrorToUnit(int n, const double *xh, const double *wh, double *x, double *w)
{
  for (int j = 0; j < n / 2; j++) {
    x[j]         = 0.5 + 0.5 * xh[j];
    x[n - 1 - j] = 0.5 - 0.5 * xh[j];
    w[j] = w[n - 1 - j] = 0.5 * wh[j];
  }
  if (n % 2) {
    x[n / 2] = 0.5;
    w[n / 2] = 0.5 * wh[n / 2];
  }
}

/*
  PatchworkGaussLobatto - n Gauss-Lobatto points on [0,1]: the endpoints and the roots of P'_{n-1}.

  The interior roots are found by Newton's method on P'_N (N = n-1), started from the
  Chebyshev-Gauss-Lobatto points, which lie close enough for quadratic convergence at these n.
  P'_N and P''_N come from the Legendre differential equation, valid away from x = +-1.
  Weights: w_j = 2 / (N (N+1) P_N(x_j)^2) on [-1,1].
*/
int PatchworkGaussLobatto(int n, double *x, double *w)
{
  const int N = n - 1;
  double    xh[PW_MAX_QUAD_POINTS], wh[PW_MAX_QUAD_POINTS], p, pm1;

  if (n < 2 || n > PW_MAX_QUAD_POINTS) return 1;
  xh[0] = -1.0;
  for (int j = 1; j < (n + 1) / 2; j++) {
    double xj = -cos(PW_PI * j / N);
    int    it;

    if (2 * j == N) xj = 0.0; /* P'_N is odd for even N: the middle root is exactly 0 */
    for (it = 0; it < PW_NEWTON_MAXIT; it++) {
      double dp, d2p, dx;

      Legendre(N, xj, &p, &pm1);
      dp  = N * (pm1 - xj * p) / (1.0 - xj * xj);
      d2p = (2.0 * xj * dp - N * (N + 1.0) * p) / (1.0 - xj * xj);
      dx  = dp / d2p;
      xj -= dx;
      if (fabs(dx) <= PW_NEWTON_TOL) break;
    }
    if (it == PW_NEWTON_MAXIT || !(xj > xh[j - 1]) || !(xj <= 0.0)) return 2;
    xh[j] = xj;
  }
  for (int j = 0; j < (n + 1) / 2; j++) {
    Legendre(N, xh[j], &p, &pm1);
    wh[j] = 2.0 / (N * (N + 1.0) * p * p);
  }
  MirrorToUnit(n, xh, wh, x, w);
  return 0;
}

/*
  PatchworkGauss - n Gauss-Legendre points on [0,1]: the roots of P_n, by Newton's method from the
  asymptotic guess cos(pi (j + 3/4) / (n + 1/2)). Weights: w_j = 2 / ((1 - x_j^2) P'_n(x_j)^2).
*/
int PatchworkGauss(int n, double *x, double *w)
{
  double xh[PW_MAX_QUAD_POINTS], wh[PW_MAX_QUAD_POINTS], p, pm1, dp;

  if (n < 1 || n > PW_MAX_QUAD_POINTS) return 1;
  for (int j = 0; j < (n + 1) / 2; j++) {
    double xj = -cos(PW_PI * (j + 0.75) / (n + 0.5));
    int    it;

    if (2 * j + 1 == n) xj = 0.0; /* P_n is odd for odd n: the middle root is exactly 0 */
    for (it = 0; it < PW_NEWTON_MAXIT; it++) {
      double dx;

      Legendre(n, xj, &p, &pm1);
      dp = n * (pm1 - xj * p) / (1.0 - xj * xj);
      dx = p / dp;
      xj -= dx;
      if (fabs(dx) <= PW_NEWTON_TOL) break;
    }
    if (it == PW_NEWTON_MAXIT || !(xj > -1.0) || !(xj <= 0.0) || (j > 0 && !(xj > xh[j - 1]))) return 2;
    xh[j] = xj;
    Legendre(n, xj, &p, &pm1);
    dp    = n * (pm1 - xj * p) / (1.0 - xj * xj);
    wh[j] = 2.0 / ((1.0 - xj * xj) * dp * dp);
  }
  MirrorToUnit(n, xh, wh, x, w);
  return 0;
}

/*
  PatchworkLagrangeEval - values phi[i] and derivatives dphi[i] at t of the Lagrange polynomials
  through nodes[0..n-1] (either output may be NULL).

  Product formula, phi_i(t) = prod_{j!=i} (t - x_j) / prod_{j!=i} (x_i - x_j), with the derivative
  of the numerator carried along by the product rule: no division by (t - x_j), so t may coincide
  with a node. Both products run in the same order, so phi_i(x_i) is exactly 1 and phi_j(x_i) exactly
  0, which keeps a collocated mass matrix exactly diagonal. O(n^2).
*/
void PatchworkLagrangeEval(int n, const double *nodes, double t, double *phi, double *dphi)
{
  for (int i = 0; i < n; i++) {
    double num = 1.0, dnum = 0.0, den = 1.0;

    for (int j = 0; j < n; j++) {
      if (j == i) continue;
      dnum = dnum * (t - nodes[j]) + num;
      num *= t - nodes[j];
      den *= nodes[i] - nodes[j];
    }
    if (phi) phi[i] = num / den;
    if (dphi) dphi[i] = dnum / den;
  }
}

/*
  PatchworkTensor1DMatrices - mass_ij = sum_q w_q phi_i(x_q) phi_j(x_q) and
  stiff_ij = sum_q w_q phi_i'(x_q) phi_j'(x_q), n = degree+1, row major with stride n.

  Gauss with n points integrates degree 2n-1 and so both matrices exactly; Gauss-Lobatto with n
  points is exact for the stiffness (degree 2n-4) and lumps the mass to diag(w). Only the upper
  triangle is summed and then mirrored so the matrices are exactly symmetric.
*/
int PatchworkTensor1DMatrices(int degree, PatchworkQuadrature q, double *mass, double *stiff)
{
  const int n = degree + 1;
  double    nodes[PW_MAX_N], wn[PW_MAX_N], xq[PW_MAX_N], wq[PW_MAX_N];
  double    phi[PW_MAX_N][PW_MAX_N], dphi[PW_MAX_N][PW_MAX_N];

  if (degree < 1 || degree > PW_MAX_DEGREE) return 1;
  if (PatchworkGaussLobatto(n, nodes, wn)) return 2;
  switch (q) {
  case PW_QUAD_GAUSS:
    if (PatchworkGauss(n, xq, wq)) return 2;
    break;
  case PW_QUAD_GAUSSLOBATTO:
    for (int p = 0; p < n; p++) {
      xq[p] = nodes[p];
      wq[p] = wn[p];
    }
    break;
  default:
    return 1;
  }
  for (int p = 0; p < n; p++) PatchworkLagrangeEval(n, nodes, xq[p], phi[p], dphi[p]);
  for (int i = 0; i < n; i++) {
    for (int j = i; j < n; j++) {
      double m = 0.0, k = 0.0;

      for (int p = 0; p < n; p++) {
        m += wq[p] * phi[p][i] * phi[p][j];
        k += wq[p] * dphi[p][i] * dphi[p][j];
      }
      if (mass) mass[i * n + j] = mass[j * n + i] = m;
      if (stiff) stiff[i * n + j] = stiff[j * n + i] = k;
    }
  }
  return 0;
}
