/* Unit test of the CPU reference of the per-cell hanging-node constraints (src/core/hanging_ref.c;
   contract include/patchwork/hanging_kernel.h), k = 1..10 in 2D and 1..8 in 3D, 40 random cells each:
   a fine cell at a random position in its parent, random hanging faces on the parent's boundary and,
   in 3D, random hanging edges on none of them (the configurations of a 1-irregular mesh).
   - Reproduction: the raw values are a random Q_k polynomial g (in the fine cell's coordinates) at the
     fine nodes, and at the coarse nodes in the constrained slots (coarse node p of a half s sits at
     2 xi_p - s); C must return g at every fine node, the common edges of two hanging faces included.
     g is evaluated in long double here, independently of the tables. Bound: each value is a sum of
     at most n^2 products of table entries (each within 2n ulps) and raw values, so
     |error| <= (gamma(2n) + 4 n u) L^2 max|raw| + u max|g|, L the largest row sum of |P| (measured).
   - Adjoint: <C u, y> = <u, C^T y> for random u and y, within 2 gamma(n^dim + 2n) <|C| |u|, |y|>.
   - PatchworkHangingRow: every row of C dotted with the raw values gives C's value at that node,
     within gamma(n^2 + 1) sum |w| |raw| (the same products, summed in another order).
   - Identity without constraints; PatchworkHangingTables rejects degree 0 and 11.
   PETSc-free. */
#include <float.h>
#include <string.h>
#include <patchwork/basis1d.h>
#include <patchwork/hanging_kernel.h>
#include <patchwork/tensor_kernel.h>
#include "unittest.h"
#include "../roundoff.h"

#define NMAX (PW_MAX_N * PW_MAX_N * PW_MAX_N)

typedef struct {
  long double c[2][3][PW_MAX_N]; /* g = sum_t prod_d sum_m c[t][d][m] x_d^m */
} Poly;

static long double Eval(const Poly *g, int dim, int k, const long double x[3])
{
  long double v = 0;

  for (int t = 0; t < 2; t++) {
    long double prod = 1;
    for (int d = 0; d < dim; d++) {
      long double s = 0;
      for (int m = k; m >= 0; m--) s = s * x[d] + g->c[t][d][m];
      prod *= s;
    }
    v += prod;
  }
  return v;
}

/* A cell of a 1-irregular mesh: position ch[] in its parent, hanging faces on the parent's boundary,
   in 3D hanging edges of the parent's edges on no hanging face */
static unsigned long long RandomMask(int dim, const int ch[3], uint64_t *rs)
{
  unsigned long long mask = 0;

  for (int d = 0; d < dim; d++) {
    const int f = 2 * d + ch[d];
    int       t = 0;

    if (Rand(rs) < 0.5) continue;
    mask |= 1ull << f;
    for (int e = 0; e < dim; e++)
      if (e != d) mask |= (unsigned long long)ch[e] << (PW_HANG_FACE_POS + (dim - 1) * f + t++);
  }
  if (dim == 3)
    for (int d = 0; d < 3; d++) {
      const int o0 = d == 0 ? 1 : 0, o1 = d == 2 ? 1 : 2, a = ch[o0], b = ch[o1], e = 4 * d + 2 * b + a;

      if ((mask >> (2 * o0 + a)) & 1 || (mask >> (2 * o1 + b)) & 1 || Rand(rs) < 0.5) continue;
      mask |= 1ull << (PW_HANG_EDGE + e);
      mask |= (unsigned long long)ch[d] << (PW_HANG_EDGE_POS + e);
    }
  return mask;
}

/* raw values: g at the fine nodes, then at the coarse nodes in the slots of every hanging face and
   edge; exact[] = g at the fine nodes */
static void RawValues(int dim, int k, unsigned long long mask, const Poly *g, const double *xi, double *raw, double *exact)
{
  const int n = k + 1, nn = dim == 3 ? n * n * n : n * n;

  for (int node = 0; node < nn; node++) {
    const int   idx[3] = {node % n, (node / n) % n, node / (n * n)};
    long double x[3]   = {0, 0, 0};

    for (int d = 0; d < dim; d++) x[d] = xi[idx[d]];
    exact[node] = raw[node] = (double)Eval(g, dim, k, x);
  }
  for (int node = 0; node < nn; node++) {
    const int   idx[3] = {node % n, (node / n) % n, node / (n * n)};
    long double x[3]   = {0, 0, 0};
    int         hit    = 0;

    for (int d = 0; d < dim; d++) x[d] = xi[idx[d]];
    for (int f = 0; f < 2 * dim && !hit; f++) {
      const int d = f / 2, side = f % 2;
      int       t = 0;

      if (!((mask >> f) & 1) || idx[d] != side * k) continue;
      for (int e = 0; e < dim; e++)
        if (e != d) x[e] = 2 * (long double)xi[idx[e]] - (long double)((mask >> (PW_HANG_FACE_POS + (dim - 1) * f + t++)) & 1);
      hit = 1;
    }
    for (int e = 0; dim == 3 && e < 12 && !hit; e++) {
      const int d = e / 4, a = e % 2, b = (e / 2) % 2, o0 = d == 0 ? 1 : 0, o1 = d == 2 ? 1 : 2;

      if (!((mask >> (PW_HANG_EDGE + e)) & 1) || idx[o0] != a * k || idx[o1] != b * k) continue;
      x[d] = 2 * (long double)xi[idx[d]] - (long double)((mask >> (PW_HANG_EDGE_POS + e)) & 1);
      hit  = 1;
    }
    if (hit) raw[node] = (double)Eval(g, dim, k, x);
  }
}

int main(void)
{
  uint64_t rs    = 0x9e3779b97f4a7c15ull;
  int      fails = 0;
  double   P[2 * PW_MAX_N * PW_MAX_N], absP[2 * PW_MAX_N * PW_MAX_N];
  double   u[NMAX], v[NMAX], y[NMAX], z[NMAX], exact[NMAX];
  const double eps = DBL_EPSILON / 2;

  Check(&fails, PatchworkHangingTables(0, P) && PatchworkHangingTables(PW_MAX_DEGREE + 1, P) ? 0 : 1, 0, "PatchworkHangingTables rejects degrees 0 and %d", PW_MAX_DEGREE + 1);
  for (int dim = 2; dim <= 3; dim++)
    for (int k = 1; k <= (dim == 2 ? PW_MAX_DEGREE : 8); k++) {
      const int n = k + 1, nn = dim == 3 ? n * n * n : n * n;
      double    xi[PW_MAX_N], w[PW_MAX_N], L = 0, worst_rep = 0, worst_adj = 0, worst_id = 0, worst_row = 0;
      int       nhang = 0;

      if (PatchworkHangingTables(k, P) || PatchworkGaussLobatto(n, xi, w)) {
        Check(&fails, 1, 0, "tables of degree %d", k);
        continue;
      }
      for (int i = 0; i < 2 * n * n; i++) absP[i] = fabs(P[i]);
      for (int r = 0; r < 2 * n; r++) {
        double s = 0;
        for (int p = 0; p < n; p++) s += absP[r * n + p];
        L = ErrMax(L, s);
      }
      for (int trial = 0; trial < 40; trial++) {
        const int          ch[3] = {Rand(&rs) < 0.5, Rand(&rs) < 0.5, Rand(&rs) < 0.5};
        unsigned long long mask  = RandomMask(dim, ch, &rs);
        Poly               g;
        double             a = 0, b = 0, S = 0, tol;

        nhang += mask != 0;
        for (int t = 0; t < 2; t++)
          for (int d = 0; d < 3; d++)
            for (int m = 0; m <= k; m++) g.c[t][d][m] = 2 * Rand(&rs) - 1;
        /* reproduction of g */
        RawValues(dim, k, mask, &g, xi, u, exact);
        tol = (Gamma(2 * n, eps) + 4 * n * eps) * L * L * MaxAbs(nn, u) + eps * MaxAbs(nn, exact);
        PatchworkHangingApplyRef(dim, k, mask, P, u);
        for (int i = 0; i < nn; i++) worst_rep = ErrMax(worst_rep, fabs(u[i] - exact[i]) / tol);
        /* rows of C against C itself */
        RawValues(dim, k, mask, &g, xi, u, exact);
        memcpy(z, u, sizeof(double) * nn);
        PatchworkHangingApplyRef(dim, k, mask, P, z);
        for (int node = 0; node < nn; node++) {
          int    sl[PW_MAX_N * PW_MAX_N];
          double wt[PW_MAX_N * PW_MAX_N], dot = 0, mag = 0;
          const int cnt = PatchworkHangingRow(dim, k, mask, P, node, sl, wt);

          for (int t = 0; t < cnt; t++) {
            dot += wt[t] * u[sl[t]];
            mag += fabs(wt[t] * u[sl[t]]);
          }
          worst_row = ErrMax(worst_row, fabs(dot - z[node]) / (2 * Gamma(n * n + 1, eps) * mag + DBL_MIN));
        }
        /* adjoint */
        for (int i = 0; i < nn; i++) {
          u[i] = 2 * Rand(&rs) - 1;
          y[i] = 2 * Rand(&rs) - 1;
          v[i] = fabs(u[i]);
        }
        memcpy(z, u, sizeof(double) * nn);
        PatchworkHangingApplyRef(dim, k, mask, P, z);   /* C u */
        PatchworkHangingApplyRef(dim, k, mask, absP, v); /* |C| |u| */
        for (int i = 0; i < nn; i++) {
          a += z[i] * y[i];
          S += v[i] * fabs(y[i]);
        }
        PatchworkHangingApplyTransposeRef(dim, k, mask, P, y); /* C^T y */
        for (int i = 0; i < nn; i++) b += u[i] * y[i];
        worst_adj = ErrMax(worst_adj, fabs(a - b) / (2 * Gamma(nn + 2 * n, eps) * S));
        /* no constraints: both leave the values alone */
        memcpy(z, u, sizeof(double) * nn);
        PatchworkHangingApplyRef(dim, k, 0, P, z);
        PatchworkHangingApplyTransposeRef(dim, k, 0, P, z);
        for (int i = 0; i < nn; i++) worst_id = ErrMax(worst_id, fabs(z[i] - u[i]));
      }
      Check(&fails, worst_rep, 1, "%dD k=%d: C reproduces Q_k polynomials (%d of 40 cells hang; error / bound)", dim, k, nhang);
      Check(&fails, worst_adj, 1, "%dD k=%d: <C u, y> = <u, C^T y> (error / bound)", dim, k);
      Check(&fails, worst_row, 1, "%dD k=%d: PatchworkHangingRow gives the rows of C (error / bound)", dim, k);
      Check(&fails, worst_id, 0, "%dD k=%d: identity without hanging faces or edges", dim, k);
    }
  printf("%s\n", fails ? "FAILED" : "all hanging-node constraint checks passed");
  return fails ? 1 : 0;
}
