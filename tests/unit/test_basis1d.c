/* Unit test of src/core/basis1d.c: Gauss and Gauss-Lobatto rules, Lagrange bases, 1D matrices.
   PETSc-free. Prints one line per check and returns 1 if any check failed. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <patchwork/basis1d.h>
#include <patchwork/tensor_kernel.h>
#include "unittest.h"

#define NQMAX (PW_MAX_N + 2)

static double Factorial(int n)
{
  double f = 1.0;

  for (int i = 2; i <= n; i++) f *= i;
  return f;
}

/* sum_q w_q x_q^p - 1/(p+1) */
static double QuadError(int n, const double *x, const double *w, int p)
{
  double s = 0.0;

  for (int q = 0; q < n; q++) s += w[q] * pow(x[q], p);
  return s - 1.0 / (p + 1);
}

/* Points ascending in [0,1], symmetric about 1/2, weights symmetric, positive, summing to 1 */
static void CheckRuleShape(int *fails, const char *name, int n, const double *x, const double *w)
{
  double sym = 0.0, order = 0.0, sumw = 0.0;

  for (int q = 0; q < n; q++) {
    sym = ErrMax(sym, fabs(x[q] + x[n - 1 - q] - 1.0));
    sym = ErrMax(sym, fabs(w[q] - w[n - 1 - q]));
    if (x[q] < 0.0 || x[q] > 1.0 || w[q] <= 0.0) order = 1.0;
    if (q > 0 && !(x[q] > x[q - 1])) order = 1.0;
    sumw += w[q];
  }
  Check(fails, sym, 2 * DBL_EPSILON, "%s n=%d points and weights symmetric", name, n);
  Check(fails, order, 0.0, "%s n=%d points ascending in [0,1], weights positive", name, n);
  Check(fails, fabs(sumw - 1.0), n * DBL_EPSILON, "%s n=%d weights sum to 1", name, n);
}

/* Exact for monomials up to degree exact_deg; for the next degree the error must equal the
   classical remainder `theory` (checked only where it stands well above rounding), which shows the
   rule is exactly as strong as claimed and no stronger. */
static void CheckRuleDegree(int *fails, const char *name, int n, const double *x, const double *w, int exact_deg, double theory)
{
  double err = 0.0;

  for (int p = 0; p <= exact_deg; p++) err = ErrMax(err, fabs(QuadError(n, x, w, p)));
  Check(fails, err, 1e-14, "%s n=%d exact for x^0..x^%d", name, n, exact_deg);
  if (fabs(theory) > 1e-9) {
    double e = QuadError(n, x, w, exact_deg + 1);

    Check(fails, fabs(e - theory) / fabs(theory), 1e-6, "%s n=%d x^%d error %.6e equals remainder %.6e", name, n, exact_deg + 1, e, theory);
  }
}

static void TestRules(int *fails)
{
  double x[NQMAX], w[NQMAX];

  for (int n = 2; n <= NQMAX; n++) {
    int ierr = PatchworkGaussLobatto(n, x, w);

    Check(fails, ierr, 0, "gll n=%d returns 0", n);
    if (ierr) continue;
    CheckRuleShape(fails, "gll", n, x, w);
    Check(fails, ErrMax(fabs(x[0]), fabs(x[n - 1] - 1.0)), 0.0, "gll n=%d endpoints 0 and 1", n);
    /* quad - exact for x^(2n-2) on [0,1]: n (n-1)^3 ((n-2)!)^4 / ((2n-1) ((2n-2)!)^2) */
    CheckRuleDegree(fails, "gll", n, x, w, 2 * n - 3, n * pow(n - 1.0, 3) * pow(Factorial(n - 2), 4) / ((2 * n - 1) * pow(Factorial(2 * n - 2), 2)));
  }
  for (int n = 1; n <= NQMAX; n++) {
    int ierr = PatchworkGauss(n, x, w);

    Check(fails, ierr, 0, "gauss n=%d returns 0", n);
    if (ierr) continue;
    CheckRuleShape(fails, "gauss", n, x, w);
    Check(fails, !(x[0] > 0.0 && x[n - 1] < 1.0), 0, "gauss n=%d points interior", n);
    /* exact - quad for x^(2n) on [0,1]: (n!)^4 / ((2n+1) ((2n)!)^2) */
    CheckRuleDegree(fails, "gauss", n, x, w, 2 * n - 1, -pow(Factorial(n), 4) / ((2 * n + 1) * pow(Factorial(2 * n), 2)));
  }
  /* known values */
  {
    double err;

    PatchworkGaussLobatto(2, x, w);
    err = ErrMax(ErrMax(fabs(x[0]), fabs(x[1] - 1)), ErrMax(fabs(w[0] - 0.5), fabs(w[1] - 0.5)));
    Check(fails, err, DBL_EPSILON, "gll n=2 is the trapezoidal rule");
    PatchworkGaussLobatto(3, x, w);
    err = ErrMax(ErrMax(fabs(x[0]), fabs(x[1] - 0.5)), fabs(x[2] - 1));
    err = ErrMax(err, ErrMax(fabs(w[0] - 1.0 / 6), ErrMax(fabs(w[1] - 2.0 / 3), fabs(w[2] - 1.0 / 6))));
    Check(fails, err, 2 * DBL_EPSILON, "gll n=3 is Simpson's rule (0, 1/2, 1; 1/6, 2/3, 1/6)");
    PatchworkGaussLobatto(4, x, w);
    err = ErrMax(fabs(x[1] - (0.5 - sqrt(5.0) / 10)), fabs(x[2] - (0.5 + sqrt(5.0) / 10)));
    err = ErrMax(err, ErrMax(fabs(w[0] - 1.0 / 12), fabs(w[1] - 5.0 / 12)));
    Check(fails, err, 2 * DBL_EPSILON, "gll n=4 nodes 1/2 -+ sqrt(5)/10, weights 1/12, 5/12");
    PatchworkGaussLobatto(5, x, w);
    err = ErrMax(ErrMax(fabs(x[1] - (0.5 - sqrt(21.0) / 14)), fabs(x[2] - 0.5)), fabs(x[3] - (0.5 + sqrt(21.0) / 14)));
    err = ErrMax(err, ErrMax(fabs(w[0] - 1.0 / 20), ErrMax(fabs(w[1] - 49.0 / 180), fabs(w[2] - 32.0 / 90))));
    Check(fails, err, 2 * DBL_EPSILON, "gll n=5 nodes 1/2 -+ sqrt(21)/14, weights 1/20, 49/180, 16/45");
    PatchworkGauss(1, x, w);
    Check(fails, ErrMax(fabs(x[0] - 0.5), fabs(w[0] - 1)), 0.0, "gauss n=1 is the midpoint rule");
    PatchworkGauss(2, x, w);
    err = ErrMax(ErrMax(fabs(x[0] - (0.5 - sqrt(3.0) / 6)), fabs(x[1] - (0.5 + sqrt(3.0) / 6))), fabs(w[0] - 0.5));
    Check(fails, err, 2 * DBL_EPSILON, "gauss n=2 nodes 1/2 -+ sqrt(3)/6");
    PatchworkGauss(3, x, w);
    err = ErrMax(ErrMax(fabs(x[0] - (0.5 - sqrt(15.0) / 10)), fabs(x[1] - 0.5)), fabs(x[2] - (0.5 + sqrt(15.0) / 10)));
    err = ErrMax(err, ErrMax(fabs(w[0] - 5.0 / 18), fabs(w[1] - 8.0 / 18)));
    Check(fails, err, 2 * DBL_EPSILON, "gauss n=3 nodes 1/2 -+ sqrt(15)/10, weights 5/18, 4/9");
  }
  /* out of range */
  Check(fails, !PatchworkGaussLobatto(1, x, w), 0, "gll n=1 rejected");
  Check(fails, !PatchworkGaussLobatto(NQMAX + 1, x, w), 0, "gll n=%d rejected", NQMAX + 1);
  Check(fails, !PatchworkGauss(0, x, w), 0, "gauss n=0 rejected");
  Check(fails, !PatchworkGauss(NQMAX + 1, x, w), 0, "gauss n=%d rejected", NQMAX + 1);
}

static void TestLagrange(int *fails, uint64_t *seed)
{
  for (int n = 1; n <= NQMAX; n++) {
    double nodes[NQMAX], w[NQMAX], phi[NQMAX], dphi[NQMAX], eid = 0.0, esum = 0.0, edsum = 0.0, tsum = 0.0, tdsum = 0.0;

    if (n == 1) nodes[0] = 0.5;
    else PatchworkGaussLobatto(n, nodes, w);
    for (int j = 0; j < n; j++) {
      PatchworkLagrangeEval(n, nodes, nodes[j], phi, NULL);
      for (int i = 0; i < n; i++) eid = ErrMax(eid, fabs(phi[i] - (i == j)));
    }
    Check(fails, eid, 0.0, "lagrange n=%d identity at the nodes", n);
    /* sum_i phi_i = 1 and sum_i phi_i' = 0: rounding is bounded by n eps times sum_i |phi_i| */
    for (int r = 0; r < 20; r++) {
      double t = Rand(seed), s = 0.0, ds = 0.0, sa = 0.0, dsa = 0.0;

      PatchworkLagrangeEval(n, nodes, t, phi, dphi);
      for (int i = 0; i < n; i++) {
        s += phi[i];
        ds += dphi[i];
        sa += fabs(phi[i]);
        dsa += fabs(dphi[i]);
      }
      esum  = ErrMax(esum, fabs(s - 1.0));
      edsum = ErrMax(edsum, fabs(ds));
      tsum  = ErrMax(tsum, 4 * n * DBL_EPSILON * sa);
      tdsum = ErrMax(tdsum, 4 * n * DBL_EPSILON * dsa);
    }
    Check(fails, esum, tsum, "lagrange n=%d sum phi_i = 1 at 20 random t", n);
    Check(fails, edsum, tdsum, "lagrange n=%d sum phi_i' = 0 at 20 random t", n);
    /* derivative against a central difference of the values (O(h^2) + O(eps/h)) */
    if (n >= 2) {
      double t = Rand(seed), h = 1e-5, pp[NQMAX], pm[NQMAX], err = 0.0, scale = 0.0;

      PatchworkLagrangeEval(n, nodes, t, NULL, dphi);
      PatchworkLagrangeEval(n, nodes, t + h, pp, NULL);
      PatchworkLagrangeEval(n, nodes, t - h, pm, NULL);
      for (int i = 0; i < n; i++) {
        err   = ErrMax(err, fabs(dphi[i] - (pp[i] - pm[i]) / (2 * h)));
        scale = ErrMax(scale, fabs(dphi[i]));
      }
      Check(fails, err / scale, 1e-6, "lagrange n=%d derivative matches central difference (relative)", n);
    }
  }
}

/* p(t) = sum_a c[a] t^a at t */
static double Poly(int k, const double *c, double t)
{
  double p = 0.0;

  for (int a = k; a >= 0; a--) p = p * t + c[a];
  return p;
}

static void TestMatrices(int *fails, uint64_t *seed)
{
  for (int k = 1; k <= PW_MAX_DEGREE; k++) {
    const int n = k + 1;
    double    Mg[PW_MAX_N * PW_MAX_N], Kg[PW_MAX_N * PW_MAX_N], Ml[PW_MAX_N * PW_MAX_N], Kl[PW_MAX_N * PW_MAX_N];
    double    nodes[PW_MAX_N], w[PW_MAX_N], err, scale;
    int       ierr;

    ierr = PatchworkTensor1DMatrices(k, PW_QUAD_GAUSS, Mg, Kg) || PatchworkTensor1DMatrices(k, PW_QUAD_GAUSSLOBATTO, Ml, Kl);
    Check(fails, ierr, 0, "matrices k=%d return 0", k);
    if (ierr) continue;
    PatchworkGaussLobatto(n, nodes, w);
    /* symmetric */
    err = 0.0;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) err = ErrMax(err, ErrMax(fabs(Mg[i * n + j] - Mg[j * n + i]), fabs(Kg[i * n + j] - Kg[j * n + i])));
    Check(fails, err, 0.0, "matrices k=%d gauss mass and stiffness symmetric", k);
    /* GLL mass = diag(w) exactly; Gauss mass row sums = int phi_i = w_i too, since GLL is interpolatory */
    err = 0.0;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) err = ErrMax(err, fabs(Ml[i * n + j] - (i == j ? w[i] : 0.0)));
    Check(fails, err, 0.0, "matrices k=%d gll mass is diag(gll weights)", k);
    {
      double total = 0.0, rows = 0.0;

      for (int i = 0; i < n; i++) {
        double r = 0.0;

        for (int j = 0; j < n; j++) r += Mg[i * n + j];
        rows = ErrMax(rows, fabs(r - w[i]));
        total += r;
      }
      Check(fails, fabs(total - 1.0), 4 * n * DBL_EPSILON, "matrices k=%d gauss mass: 1^T M 1 = |[0,1]| = 1", k);
      Check(fails, rows, 4 * n * DBL_EPSILON, "matrices k=%d gauss mass: M 1 = gll weights", k);
    }
    /* K 1 = 0, relative to the largest entry of K */
    {
      double kmax = 0.0, kerr = 0.0;

      for (int i = 0; i < n; i++) {
        double rg = 0.0, rl = 0.0;

        for (int j = 0; j < n; j++) {
          rg += Kg[i * n + j];
          rl += Kl[i * n + j];
          kmax = ErrMax(kmax, fabs(Kg[i * n + j]));
        }
        kerr = ErrMax(kerr, ErrMax(fabs(rg), fabs(rl)));
      }
      Check(fails, kerr / kmax, 4 * n * DBL_EPSILON, "matrices k=%d stiffness annihilates constants (relative)", k);
    }
    /* v^T K v = int_0^1 p'^2 (both rules), v^T M v = int_0^1 p^2 (Gauss) for random p of degree k,
       v = p at the nodes. Rounding is bounded by ~n eps * |v|^T |K| |v|. */
    for (int r = 0; r < 5; r++) {
      double c[PW_MAX_N], v[PW_MAX_N], ip2 = 0.0, idp2 = 0.0, vMv = 0.0, vKg = 0.0, vKl = 0.0, sM = 0.0, sK = 0.0;

      for (int a = 0; a <= k; a++) c[a] = 2 * Rand(seed) - 1;
      for (int i = 0; i < n; i++) v[i] = Poly(k, c, nodes[i]);
      for (int a = 0; a <= k; a++) {
        for (int b = 0; b <= k; b++) {
          ip2 += c[a] * c[b] / (a + b + 1);
          if (a > 0 && b > 0) idp2 += a * b * c[a] * c[b] / (a + b - 1);
        }
      }
      for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
          vMv += v[i] * Mg[i * n + j] * v[j];
          vKg += v[i] * Kg[i * n + j] * v[j];
          vKl += v[i] * Kl[i * n + j] * v[j];
          sM += fabs(v[i] * Mg[i * n + j] * v[j]);
          sK += fabs(v[i] * Kg[i * n + j] * v[j]);
        }
      }
      scale = 8 * n * n * DBL_EPSILON;
      Check(fails, fabs(vMv - ip2), scale * sM, "matrices k=%d gauss v^T M v = int p^2 (random p #%d)", k, r);
      Check(fails, fabs(vKg - idp2), scale * sK, "matrices k=%d gauss v^T K v = int p'^2 (random p #%d)", k, r);
      Check(fails, fabs(vKl - idp2), scale * sK, "matrices k=%d gll   v^T K v = int p'^2 (random p #%d)", k, r);
    }
  }
  {
    double M[PW_MAX_N * PW_MAX_N], K[PW_MAX_N * PW_MAX_N];

    Check(fails, !PatchworkTensor1DMatrices(0, PW_QUAD_GAUSS, M, K), 0, "matrices k=0 rejected");
    Check(fails, !PatchworkTensor1DMatrices(PW_MAX_DEGREE + 1, PW_QUAD_GAUSS, M, K), 0, "matrices k=%d rejected", PW_MAX_DEGREE + 1);
    /* k=1: M = [1/3 1/6; 1/6 1/3], K = [1 -1; -1 1] */
    PatchworkTensor1DMatrices(1, PW_QUAD_GAUSS, M, K);
    Check(fails, ErrMax(ErrMax(fabs(M[0] - 1.0 / 3), fabs(M[1] - 1.0 / 6)), ErrMax(fabs(K[0] - 1), fabs(K[1] + 1))), 4 * DBL_EPSILON, "matrices k=1 gauss known values");
  }
}

int main(void)
{
  int      fails = 0;
  uint64_t seed  = 0x9E3779B97F4A7C15ULL;

  TestRules(&fails);
  TestLagrange(&fails, &seed);
  TestMatrices(&fails, &seed);
  printf("%s: %d check(s) failed\n", fails ? "FAIL" : "ok  ", fails);
  return fails ? 1 : 0;
}
