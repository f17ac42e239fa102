/* Unit test of PatchworkQ1ElementMatrixVertex (include/patchwork/q1_element.h), the closed form of the
   Q1 element matrix with the vertex (Gauss-Lobatto) rule, against the loop over the 2^dim points it
   replaced (PatchworkQ1ElementMatrixPoints with vertex = 1), which evaluates the same quadrature.
   Cases: 2D and 3D; affine and distorted elements (a box of random extents 0.2..2 at a random offset of
   up to 10, each vertex then moved by less than 0.15 of the shortest edge, which keeps the Jacobian's
   determinant positive at every vertex), and the same vertices listed mirrored in x (negative
   determinants: the rule takes |det J|); alpha in {0, random}, beta random, without coefficients and
   with random positive reaction and diffusion values at the vertices. Per element:
     equal      max |Vertex - Points| / max |Points| <= m eps (2 R + 8 m), m = 2^dim, R = max|x| / h_min:
                both evaluate the same sums, which differ in rounding only; the Jacobian's entries are
                differences of coordinates of size |x| with results of size h (relative error eps R),
                and up to m point contributions of magnitude <= max|Ke| are summed in the same order
                with differently rounded terms (the bound of the LOR kernels' tests, test_lor_kernels);
     symmetric  exactly (both triangles take the same products in the same order);
     rowsum     alpha = 0: every row of the stiffness sums to 0 within nv times that tolerance;
     zeros      the entries of vertex pairs across the element's body diagonal are exactly 0 (no point
                has both gradients), and on boxes (no distortion) across face diagonals too (the metric
                is diagonal): the couplings PCLOR's axis_only pattern leaves out;
     mass       beta = 0: the matrix is diagonal, diag = alpha r_q |det J(q)| / m summed = the lumped
                mass, checked against the Points loop by the first check.
   Prints one line per check and `# N checks, M failed`; exits 1 on a failure. PETSc-free. */
#include <float.h>
#include <string.h>
#include <patchwork/q1_element.h>
#include "unittest.h"

static int nchecks = 0;
#define CHECK(...) (nchecks++, Check(__VA_ARGS__))

/* 2^dim vertices (lexicographic, x fastest) of a random box, moved by up to shake x the shortest edge;
   returns R = max|x| / shortest edge */
static double MakeElement(int dim, double shake, uint64_t *seed, double *xv)
{
  const int nv = 1 << dim;
  double    h[3], o[3], hmin = 1e300, xmax = 0;

  for (int i = 0; i < dim; i++) {
    h[i] = 0.2 + 1.8 * Rand(seed);
    o[i] = 20 * Rand(seed) - 10;
    hmin = fmin(hmin, h[i]);
  }
  for (int a = 0; a < nv; a++)
    for (int i = 0; i < dim; i++) {
      xv[a * dim + i] = o[i] + ((a >> i) & 1) * h[i] + shake * hmin * (2 * Rand(seed) - 1);
      xmax            = ErrMax(xmax, fabs(xv[a * dim + i]));
    }
  return xmax / hmin;
}

static void RunElement(int dim, const double *xv, double R, double alpha, double beta, const double *r, const double *c, int box, const char *label, int *fails)
{
  const int    nv = 1 << dim, m = nv;
  const double tol = m * DBL_EPSILON * (2 * R + 8 * m);
  double       Kv[64], Kp[64], err = 0, asym = 0, rowsum = 0, zeros = 0;

  PatchworkQ1ElementMatrixVertex(dim, xv, alpha, beta, r, c, Kv);
  PatchworkQ1ElementMatrixPoints(dim, xv, alpha, beta, r, c, 1, Kp);
  const double scale = ErrMax(MaxAbs(nv * nv, Kp), DBL_MIN);
  for (int i = 0; i < nv * nv; i++) err = ErrMax(err, fabs(Kv[i] - Kp[i]));
  CHECK(fails, err / scale, tol, "%s equal", label);
  for (int a = 0; a < nv; a++)
    for (int b = 0; b < nv; b++) {
      const int diff = a ^ b, nbits = (diff & 1) + ((diff >> 1) & 1) + ((diff >> 2) & 1);
      asym           = ErrMax(asym, fabs(Kv[a * nv + b] - Kv[b * nv + a]));
      if (nbits == dim && dim == 3) zeros = ErrMax(zeros, fabs(Kv[a * nv + b]));
      if (box && nbits >= 2) zeros = ErrMax(zeros, fabs(Kv[a * nv + b]));
      if (beta == 0 && a != b) zeros = ErrMax(zeros, fabs(Kv[a * nv + b]));
    }
  CHECK(fails, asym, 0, "%s symmetric", label);
  CHECK(fails, zeros, 0, "%s structural zeros exact (%s)", label, beta == 0 ? "diagonal mass" : box ? "box: axis couplings only" : "body diagonals");
  if (alpha == 0) {
    for (int a = 0; a < nv; a++) {
      double s = 0;
      for (int b = 0; b < nv; b++) s += Kv[a * nv + b];
      rowsum = ErrMax(rowsum, fabs(s));
    }
    CHECK(fails, rowsum / scale, nv * tol, "%s stiffness rows sum to 0", label);
  }
}

int main(void)
{
  uint64_t seed  = 0x5eedf00dcafe1234ull;
  int      fails = 0;

  for (int dim = 2; dim <= 3; dim++) {
    const int nv = 1 << dim;
    for (int t = 0; t < 24; t++) {
      const int    box = t % 4 == 0, coef = (t / 2) % 2, mirror = t % 3 == 2;
      const double alpha = t % 5 == 1 ? 0.0 : 0.1 + 2 * Rand(&seed), beta = t % 7 == 3 ? 0.0 : 0.1 + 2 * Rand(&seed);
      double       xv[24], r[8], c[8];
      char         label[160];
      double       R = MakeElement(dim, box ? 0.0 : 0.15, &seed, xv);

      if (mirror) { /* the same element with its vertices listed mirrored in x: det J < 0 */
        double y[24];
        for (int a = 0; a < nv; a++)
          for (int i = 0; i < dim; i++) y[a * dim + i] = xv[(a ^ 1) * dim + i];
        memcpy(xv, y, sizeof(y));
      }
      for (int a = 0; a < nv; a++) {
        r[a] = 0.5 + Rand(&seed);
        c[a] = 0.5 + Rand(&seed);
      }
      snprintf(label, sizeof(label), "%dD element %2d (%s%s, alpha %.2f, beta %.2f, %s)", dim, t, box ? "box" : "distorted", mirror ? ", mirrored" : "", alpha, beta, coef ? "coefficients" : "constant");
      RunElement(dim, xv, R, alpha, beta, coef ? r : NULL, coef ? c : NULL, box, label, &fails);
    }
  }
  printf("# %d checks, %d failed\n%s\n", nchecks, fails, fails ? "FAIL" : "all ok");
  return fails ? 1 : 0;
}
