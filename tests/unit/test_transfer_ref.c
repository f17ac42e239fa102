/* Unit test of the CPU reference Q_k transfer (src/core/transfer_ref.c): prolongation and
   restriction between a mesh and its refinement by two, against
   - exactness on polynomials of degree k (the coarse Q_k space is contained in the fine one),
   - a brute-force global interpolation matrix, entry by entry from Lagrange evaluations at the fine
     nodes' coordinates (no weights, no sum factorization),
   - the transpose identity <P x, y> = <x, P^T y>,
   - partitions of the fine cells into offset sub-boxes, summed, against the whole range,
   - the float kernels against the double ones, node by node within a derived rounding bound (the
     worst err/bound ratios are printed at the end).
   PETSc-free. Prints one line per check and returns 1 if any check failed. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <patchwork/basis1d.h>
#include <patchwork/patch_kernel.h>
#include "unittest.h"

/* ---------------------------------------------------------------------------------------------
   The two meshes and the brute force, on global arrays (x fastest) */

typedef struct {
  int    dim, k, nc[3];        /* coarse cells per direction (1 in unused z) */
  int    cn[3], fn[3];         /* coarse and fine node counts */
  double xi[PW_MAX_N];         /* Gauss-Lobatto nodes on [0,1] */
} Mesh;

static void MeshCreate(int dim, int k, const int nc[3], Mesh *m)
{
  double w[PW_MAX_N];

  m->dim = dim;
  m->k   = k;
  for (int d = 0; d < 3; d++) {
    m->nc[d] = d < dim ? nc[d] : 1;
    m->cn[d] = d < dim ? k * nc[d] + 1 : 1;
    m->fn[d] = d < dim ? 2 * k * nc[d] + 1 : 1;
  }
  PatchworkGaussLobatto(k + 1, m->xi, w);
}

static long Count(const int n[3])
{
  return (long)n[0] * n[1] * n[2];
}

static int OnBoundary(int dim, const int n[3], const int g[3])
{
  for (int d = 0; d < dim; d++)
    if (g[d] == 0 || g[d] == n[d] - 1) return 1;
  return 0;
}

/* Node g (global, one direction) of a mesh with cells of k+1 GLL nodes: cell, local index, and
   coordinate on [0,1] for ncell cells */
static void NodeCell(const Mesh *m, int g, int ncell, int *cell, int *loc, double *x)
{
  *cell = g / m->k < ncell ? g / m->k : ncell - 1;
  *loc  = g - m->k * *cell;
  *x    = (*cell + m->xi[*loc]) / ncell;
}

/* The row of the global interpolation matrix of fine node gf: coarse nodes idx[] (global index,
   -1 where eliminated) and values phi (with absval, |phi|). The fine node lies in coarse cell c
   at local coordinate t in [0,1] per direction; the coarse basis there is the Lagrange product. */
static int PRow(const Mesh *m, const int gf[3], int dirichlet, int absval, long *idx, double *val)
{
  double phi[3][PW_MAX_N];
  int    c[3], n[3], q = 0;

  for (int d = 0; d < 3; d++) {
    if (d < m->dim) {
      int    f, i;
      double x;

      NodeCell(m, gf[d], 2 * m->nc[d], &f, &i, &x);
      c[d] = f / 2;
      n[d] = m->k + 1;
      /* local coordinate in the coarse cell, from the fine node's coordinate (not the kernel's formula) */
      PatchworkLagrangeEval(m->k + 1, m->xi, x * m->nc[d] - c[d], phi[d], NULL);
    } else {
      c[d]      = 0;
      n[d]      = 1;
      phi[d][0] = 1.0;
    }
  }
  for (int l = 0; l < n[2]; l++)
    for (int j = 0; j < n[1]; j++)
      for (int i = 0; i < n[0]; i++, q++) {
        const int g[3] = {m->k * c[0] + i, m->k * c[1] + j, m->k * c[2] + l};

        val[q] = phi[0][i] * phi[1][j] * phi[2][l];
        if (absval) val[q] = fabs(val[q]);
        idx[q] = dirichlet && OnBoundary(m->dim, m->cn, g) ? -1 : ((long)g[2] * m->cn[1] + g[1]) * m->cn[0] + g[0];
      }
  return q;
}

/* transpose = 0: yf += P xc; 1: yc += P^T xf. Eliminated nodes are read as zero and not written. */
static void BruteTransfer(const Mesh *m, int dirichlet, int absval, int transpose, const double *x, double *y)
{
  long   idx[PW_MAX_N * PW_MAX_N * PW_MAX_N];
  double val[PW_MAX_N * PW_MAX_N * PW_MAX_N];
  int    gf[3];
  long   r = 0;

  for (gf[2] = 0; gf[2] < m->fn[2]; gf[2]++)
    for (gf[1] = 0; gf[1] < m->fn[1]; gf[1]++)
      for (gf[0] = 0; gf[0] < m->fn[0]; gf[0]++, r++) {
        int nq;

        if (dirichlet && OnBoundary(m->dim, m->fn, gf)) continue;
        nq = PRow(m, gf, dirichlet, absval, idx, val);
        if (!transpose) {
          double s = 0.0;

          for (int q = 0; q < nq; q++)
            if (idx[q] >= 0) s += val[q] * (absval ? fabs(x[idx[q]]) : x[idx[q]]);
          y[r] += s;
        } else {
          for (int q = 0; q < nq; q++)
            if (idx[q] >= 0) y[idx[q]] += val[q] * (absval ? fabs(x[r]) : x[r]);
        }
      }
}

/* Descriptor for the fine cells [cs, ce) with boxes of the cells' nodes, widened by margin nodes on
   each side (clipped to the meshes) to exercise the box offsets */
static void SetupDesc(const Mesh *m, const int cs[3], const int ce[3], int margin, int dirichlet, PatchworkTransferDesc *d)
{
  memset(d, 0, sizeof(*d));
  d->dim       = m->dim;
  d->degree    = m->k;
  d->dirichlet = dirichlet;
  PatchworkTransferSetUp1D(m->k, d);
  for (int dir = 0; dir < 3; dir++) {
    d->fine_nodes[dir] = m->fn[dir];
    if (dir < m->dim) {
      int flo = m->k * cs[dir] - margin, fhi = m->k * ce[dir] + margin;
      int clo = m->k * (cs[dir] / 2) - margin, chi = m->k * ((ce[dir] - 1) / 2 + 1) + margin;

      flo = flo < 0 ? 0 : flo;
      clo = clo < 0 ? 0 : clo;
      fhi = fhi > m->fn[dir] - 1 ? m->fn[dir] - 1 : fhi;
      chi = chi > m->cn[dir] - 1 ? m->cn[dir] - 1 : chi;
      d->cell_start[dir]   = cs[dir];
      d->cell_end[dir]     = ce[dir];
      d->fine_start[dir]   = flo;
      d->fine_size[dir]    = fhi - flo + 1;
      d->coarse_start[dir] = clo;
      d->coarse_size[dir]  = chi - clo + 1;
    } else {
      d->cell_end[dir]  = 1;
      d->fine_size[dir] = d->coarse_size[dir] = 1;
    }
  }
}

/* Copy between a global array (node counts n) and a box array; add: scatter-add the box into the global one */
static void BoxGather(const int n[3], const int start[3], const int size[3], const double *g, double *b)
{
  long q = 0;

  for (int z = 0; z < size[2]; z++)
    for (int y = 0; y < size[1]; y++)
      for (int x = 0; x < size[0]; x++) b[q++] = g[((long)(start[2] + z) * n[1] + start[1] + y) * n[0] + start[0] + x];
}

static void BoxScatterAdd(const int n[3], const int start[3], const int size[3], const double *b, double *g)
{
  long q = 0;

  for (int z = 0; z < size[2]; z++)
    for (int y = 0; y < size[1]; y++)
      for (int x = 0; x < size[0]; x++) g[((long)(start[2] + z) * n[1] + start[1] + y) * n[0] + start[0] + x] += b[q++];
}

/* ---------------------------------------------------------------------------------------------
   Checks */

/* Lebesgue-type constant of the child interpolation: max_a ||interp[a]||_inf. Rounding in the
   coarse values is amplified by at most its d-th power. */
static double InterpNorm(const PatchworkTransferDesc *d)
{
  const int n = d->degree + 1;
  double    m = 0.0;

  for (int a = 0; a < 2; a++)
    for (int i = 0; i < n; i++) {
      double s = 0.0;

      for (int j = 0; j < n; j++) s += fabs(d->interp[a][i * n + j]);
      m = ErrMax(m, s);
    }
  return m;
}

/* p(x) = sum_{a,b,c <= k} C[a][b][c] x^a y^b z^c, and the same with |C| (the rounding scale) */
static void Poly(const Mesh *m, const double *C, const double x[3], double *p, double *pabs)
{
  const int n = m->k + 1, nz = m->dim == 3 ? n : 1;
  double    px[PW_MAX_N], py[PW_MAX_N], pz[PW_MAX_N];

  px[0] = py[0] = pz[0] = 1.0;
  for (int a = 1; a < n; a++) {
    px[a] = px[a - 1] * x[0];
    py[a] = py[a - 1] * x[1];
    pz[a] = pz[a - 1] * x[2];
  }
  *p = *pabs = 0.0;
  for (int c = 0; c < nz; c++)
    for (int b = 0; b < n; b++)
      for (int a = 0; a < n; a++) {
        double t = C[(c * n + b) * n + a] * px[a] * py[b] * pz[c];

        *p += t;
        *pabs += fabs(t);
      }
}

/* Nodal values of the polynomial on the mesh with node counts nn and ncell cells per direction */
static void PolyNodal(const Mesh *m, const double *C, const int nn[3], int refine, double *v, double *scale)
{
  int  g[3];
  long r = 0;

  *scale = 0.0;
  for (g[2] = 0; g[2] < nn[2]; g[2]++)
    for (g[1] = 0; g[1] < nn[1]; g[1]++)
      for (g[0] = 0; g[0] < nn[0]; g[0]++, r++) {
        double x[3] = {0, 0, 0}, pabs;

        for (int d = 0; d < m->dim; d++) {
          int c, i;

          NodeCell(m, g[d], refine * m->nc[d], &c, &i, &x[d]);
        }
        Poly(m, C, x, &v[r], &pabs);
        *scale = ErrMax(*scale, pabs);
      }
}

/*
  (a) Prolongation of the coarse interpolant of a polynomial of degree k per variable is its fine
  interpolant. Rounding: evaluating p at a node costs <= ((k+1)^d + d k) eps pabs, the prolongation
  <= (d n + 2^d) eps of |P||x|, and the coarse values' errors are amplified by at most Lambda^d
  (Lambda = InterpNorm). Factor 2 for the constants.
*/
static void TestPolynomial(int *fails, const Mesh *m, uint64_t *seed)
{
  const int n = m->k + 1, nd = m->dim == 2 ? n * n : n * n * n;
  const int cs[3] = {0, 0, 0}, ce[3] = {2 * m->nc[0], 2 * m->nc[1], m->dim == 3 ? 2 * m->nc[2] : 1};
  PatchworkTransferDesc d;
  long   ncn = Count(m->cn), nfn = Count(m->fn);
  double C[PW_MAX_N * PW_MAX_N * PW_MAX_N], *xc = Malloc(sizeof(double) * ncn), *yf = Malloc(sizeof(double) * nfn), *ex = Malloc(sizeof(double) * nfn);
  double sc, sf, err = 0.0, lam;

  for (int q = 0; q < nd; q++) C[q] = 2 * Rand(seed) - 1;
  SetupDesc(m, cs, ce, 0, 0, &d);
  PolyNodal(m, C, m->cn, 1, xc, &sc);
  PolyNodal(m, C, m->fn, 2, ex, &sf);
  memset(yf, 0, sizeof(double) * nfn);
  PatchworkProlongRef(&d, xc, yf);
  for (long i = 0; i < nfn; i++) err = ErrMax(err, fabs(yf[i] - ex[i]));
  lam = pow(InterpNorm(&d), m->dim);
  Check(fails, err, 2.0 * (nd + m->dim * n + (1 << m->dim) + 8) * DBL_EPSILON * lam * ErrMax(sc, sf), "transfer %dD k=%d prolong of a degree-k polynomial is exact", m->dim, m->k);
  free(xc);
  free(yf);
  free(ex);
}

/*
  (a') Prolong and restrict on the whole mesh against the brute-force P and P^T, added onto random
  y0. Each output is a sum of products of d 1D values: the dense row of P has n^d terms (prolong),
  a column up to (4k+1)^d (restrict: the fine nodes in a coarse basis function's support), the
  kernel's sum factorization d n terms plus 2^d (prolong) or 4^d (restrict) cell contributions. The
  bound is gamma_m of the longest of these times |P||x| + |y0|, factor 2 for the constants.
  (b) <P x, y> = <x, P^T y>: dot products of length N_fine of vectors carrying the above errors.
*/
static void TestBrute(int *fails, const Mesh *m, int dirichlet, uint64_t *seed)
{
  const int n = m->k + 1, nd = m->dim == 2 ? n * n : n * n * n, mr = m->dim == 2 ? (4 * m->k + 1) * (4 * m->k + 1) : (4 * m->k + 1) * (4 * m->k + 1) * (4 * m->k + 1);
  const int cs[3] = {0, 0, 0}, ce[3] = {2 * m->nc[0], 2 * m->nc[1], m->dim == 3 ? 2 * m->nc[2] : 1};
  PatchworkTransferDesc d;
  long    ncn = Count(m->cn), nfn = Count(m->fn);
  double *xc = Malloc(sizeof(double) * ncn), *xf = Malloc(sizeof(double) * nfn);
  double *yf0 = Malloc(sizeof(double) * nfn), *yc0 = Malloc(sizeof(double) * ncn);
  double *yf = Malloc(sizeof(double) * nfn), *yc = Malloc(sizeof(double) * ncn);
  double *bf = Malloc(sizeof(double) * nfn), *bc = Malloc(sizeof(double) * ncn);
  double *sf = Malloc(sizeof(double) * nfn), *scl = Malloc(sizeof(double) * ncn);
  double  err, tol, d1 = 0.0, d2 = 0.0, dsc = 0.0;

  SetupDesc(m, cs, ce, 0, dirichlet, &d);
  for (long i = 0; i < ncn; i++) xc[i] = 2 * Rand(seed) - 1;
  for (long i = 0; i < nfn; i++) xf[i] = 2 * Rand(seed) - 1;
  for (long i = 0; i < nfn; i++) yf0[i] = 2 * Rand(seed) - 1;
  for (long i = 0; i < ncn; i++) yc0[i] = 2 * Rand(seed) - 1;

  /* prolong */
  memcpy(yf, yf0, sizeof(double) * nfn);
  memcpy(bf, yf0, sizeof(double) * nfn);
  PatchworkProlongRef(&d, xc, yf);
  BruteTransfer(m, dirichlet, 0, 0, xc, bf);
  for (long i = 0; i < nfn; i++) sf[i] = fabs(yf0[i]);
  BruteTransfer(m, dirichlet, 1, 0, xc, sf);
  err = 0.0;
  for (long i = 0; i < nfn; i++) err = ErrMax(err, fabs(yf[i] - bf[i]));
  tol = 2.0 * (nd + m->dim * n + (1 << m->dim) + 8) * DBL_EPSILON * MaxAbs(nfn, sf);
  Check(fails, err, tol, "transfer %dD k=%d dirichlet=%d prolong vs brute-force P", m->dim, m->k, dirichlet);

  /* restrict */
  memcpy(yc, yc0, sizeof(double) * ncn);
  memcpy(bc, yc0, sizeof(double) * ncn);
  PatchworkRestrictRef(&d, xf, yc);
  BruteTransfer(m, dirichlet, 0, 1, xf, bc);
  for (long i = 0; i < ncn; i++) scl[i] = fabs(yc0[i]);
  BruteTransfer(m, dirichlet, 1, 1, xf, scl);
  err = 0.0;
  for (long i = 0; i < ncn; i++) err = ErrMax(err, fabs(yc[i] - bc[i]));
  tol = 2.0 * (mr + m->dim * n + (1 << (2 * m->dim)) + 8) * DBL_EPSILON * MaxAbs(ncn, scl);
  Check(fails, err, tol, "transfer %dD k=%d dirichlet=%d restrict vs brute-force P^T", m->dim, m->k, dirichlet);

  /* transpose identity, from zero; scale sum_f |y_f| (|P||x|)_f */
  memset(yf, 0, sizeof(double) * nfn);
  memset(yc, 0, sizeof(double) * ncn);
  memset(sf, 0, sizeof(double) * nfn);
  PatchworkProlongRef(&d, xc, yf);
  PatchworkRestrictRef(&d, xf, yc);
  BruteTransfer(m, dirichlet, 1, 0, xc, sf);
  for (long i = 0; i < nfn; i++) {
    d1 += yf[i] * xf[i];
    dsc += sf[i] * fabs(xf[i]);
  }
  for (long i = 0; i < ncn; i++) d2 += xc[i] * yc[i];
  tol = 2.0 * (nfn + mr + m->dim * n + (1 << (2 * m->dim)) + 8) * DBL_EPSILON * dsc;
  Check(fails, fabs(d1 - d2), tol, "transfer %dD k=%d dirichlet=%d <P x, y> = <x, P^T y>", m->dim, m->k, dirichlet);
  free(xc);
  free(xf);
  free(yf0);
  free(yc0);
  free(yf);
  free(yc);
  free(bf);
  free(bc);
  free(sf);
  free(scl);
}

/*
  (c) The fine cells split in every direction at an odd cell (so that a coarse cell is split between
  two parts), each part applied on its own boxes (ghosted by one node, clipped), the box results
  summed: equal to the whole-range result up to the order of the additions of the <= 2^d (prolong)
  or 4^d (restrict) cell contributions to a node, which are themselves computed identically.
*/
static void TestPartition(int *fails, const Mesh *m, int dirichlet, uint64_t *seed)
{
  const int cs0[3] = {0, 0, 0}, ce0[3] = {2 * m->nc[0], 2 * m->nc[1], m->dim == 3 ? 2 * m->nc[2] : 1};
  PatchworkTransferDesc d;
  long    ncn = Count(m->cn), nfn = Count(m->fn);
  double *xc = Malloc(sizeof(double) * ncn), *xf = Malloc(sizeof(double) * nfn);
  double *yf = Malloc(sizeof(double) * nfn), *yc = Malloc(sizeof(double) * ncn);
  double *pf = Malloc(sizeof(double) * nfn), *pc = Malloc(sizeof(double) * ncn);
  double *sf = Malloc(sizeof(double) * nfn), *scl = Malloc(sizeof(double) * ncn);
  double *bin = Malloc(sizeof(double) * (nfn > ncn ? nfn : ncn)), *bout = Malloc(sizeof(double) * (nfn > ncn ? nfn : ncn));
  double  ef = 0.0, ec = 0.0;
  int     split[3], part[3];

  for (long i = 0; i < ncn; i++) xc[i] = 2 * Rand(seed) - 1;
  for (long i = 0; i < nfn; i++) xf[i] = 2 * Rand(seed) - 1;
  SetupDesc(m, cs0, ce0, 0, dirichlet, &d);
  memset(yf, 0, sizeof(double) * nfn);
  memset(yc, 0, sizeof(double) * ncn);
  PatchworkProlongRef(&d, xc, yf);
  PatchworkRestrictRef(&d, xf, yc);
  memset(sf, 0, sizeof(double) * nfn);
  memset(scl, 0, sizeof(double) * ncn);
  BruteTransfer(m, dirichlet, 1, 0, xc, sf);
  BruteTransfer(m, dirichlet, 1, 1, xf, scl);

  memset(pf, 0, sizeof(double) * nfn);
  memset(pc, 0, sizeof(double) * ncn);
  for (int dir = 0; dir < 3; dir++) split[dir] = dir < m->dim ? (ce0[dir] / 2) | 1 : 1; /* odd, inside (0, 2N) since N >= 2 */
  for (part[2] = 0; part[2] < (m->dim == 3 ? 2 : 1); part[2]++)
    for (part[1] = 0; part[1] < 2; part[1]++)
      for (part[0] = 0; part[0] < 2; part[0]++) {
        int cs[3], ce[3];

        for (int dir = 0; dir < 3; dir++) {
          cs[dir] = part[dir] ? split[dir] : 0;
          ce[dir] = part[dir] ? ce0[dir] : split[dir];
        }
        SetupDesc(m, cs, ce, 1, dirichlet, &d);
        BoxGather(m->cn, d.coarse_start, d.coarse_size, xc, bin);
        memset(bout, 0, sizeof(double) * Count(d.fine_size));
        PatchworkProlongRef(&d, bin, bout);
        BoxScatterAdd(m->fn, d.fine_start, d.fine_size, bout, pf);
        BoxGather(m->fn, d.fine_start, d.fine_size, xf, bin);
        memset(bout, 0, sizeof(double) * Count(d.coarse_size));
        PatchworkRestrictRef(&d, bin, bout);
        BoxScatterAdd(m->cn, d.coarse_start, d.coarse_size, bout, pc);
      }
  for (long i = 0; i < nfn; i++) ef = ErrMax(ef, fabs(pf[i] - yf[i]));
  for (long i = 0; i < ncn; i++) ec = ErrMax(ec, fabs(pc[i] - yc[i]));
  Check(fails, ef, 2.0 * ((1 << m->dim) + 2) * DBL_EPSILON * MaxAbs(nfn, sf), "transfer %dD k=%d dirichlet=%d prolong on %d offset sub-boxes = whole", m->dim, m->k, dirichlet,
        1 << m->dim);
  Check(fails, ec, 2.0 * ((1 << (2 * m->dim)) + 2) * DBL_EPSILON * MaxAbs(ncn, scl), "transfer %dD k=%d dirichlet=%d restrict on %d offset sub-boxes = whole", m->dim, m->k, dirichlet,
        1 << m->dim);
  free(xc);
  free(xf);
  free(yf);
  free(yc);
  free(pf);
  free(pc);
  free(sf);
  free(scl);
  free(bin);
  free(bout);
}

/* running max of err/bound that keeps a NaN; a zero bound admits only a zero error */
static double RatioMax(double m, double err, double bound)
{
  const double r = err == 0 ? 0.0 : err / bound;

  return ErrMax(m, r);
}

/* max over a box of |yf - yd| / (L FLT_EPSILON (|y0| + s)), s the global scale gathered over the box */
static double FloatRatio(long nb, const float *yf, const double *yd, const double *y0, const double *s, double L)
{
  double r = 0.0;

  for (long q = 0; q < nb; q++) r = RatioMax(r, fabs(yf[q] - yd[q]), L * FLT_EPSILON * (fabs(y0[q]) + s[q]));
  return r;
}

/*
  (d) Float prolong and restrict against double on the same float-representable inputs, node by node,
  on the whole range and on the offset sub-boxes of (c), as err/bound <= 1. With u = FLT_EPSILON/2
  the unit roundoff, a value computed through a chain of L roundings per term is off by at most
  gamma_L = L u/(1 - L u) times the sum of the |terms|:
  - prolong: a fine value is y0 plus <= 2^d cell contributions W (I(x)I(x)I) u_c; a term carries d
    interp entries rounded to float (d), d contractions of n = k+1 terms (n roundings each: n-1
    additions and the product), the weight W (a power of 2: exact) and up to 2^d additions into y:
    L = d (n + 1) + 2^d, against |y0| + |P||x| (the weighted cell sums of |I(x)I(x)I| |x| are the
    rows of |P||x|, BruteTransfer absval; a sub-range of cells sums fewer of them).
  - restrict: the same with up to 4^d cell contributions to a coarse node: L = d (n + 1) + 4^d,
    against |y0| + |P^T||x|.
  The double kernel's own error is smaller by 2^-29 and 1/(1 - L u) < 1.01: FLT_EPSILON = 2u
  instead of u covers both. The worst ratio is returned in *worst (prolong, restrict).
*/
static void TestFloat(int *fails, const Mesh *m, int dirichlet, uint64_t *seed, double worst[2])
{
  const int cs0[3] = {0, 0, 0}, ce0[3] = {2 * m->nc[0], 2 * m->nc[1], m->dim == 3 ? 2 * m->nc[2] : 1};
  const double lpro = m->dim * (m->k + 2) + (1 << m->dim), lres = m->dim * (m->k + 2) + (1 << (2 * m->dim));
  PatchworkTransferDesc d;
  long    ncn = Count(m->cn), nfn = Count(m->fn), nmax = nfn > ncn ? nfn : ncn;
  double *xc = Malloc(sizeof(double) * ncn), *xf = Malloc(sizeof(double) * nfn), *sf = Malloc(sizeof(double) * nfn), *scl = Malloc(sizeof(double) * ncn);
  double *bin = Malloc(sizeof(double) * nmax), *y0 = Malloc(sizeof(double) * nmax), *yd = Malloc(sizeof(double) * nmax), *sb = Malloc(sizeof(double) * nmax);
  float  *fin = Malloc(sizeof(float) * nmax), *yf = Malloc(sizeof(float) * nmax);
  double  rp = 0.0, rr = 0.0;
  int     split[3], part[3];

  for (long i = 0; i < ncn; i++) xc[i] = (float)(2 * Rand(seed) - 1);
  for (long i = 0; i < nfn; i++) xf[i] = (float)(2 * Rand(seed) - 1);
  memset(sf, 0, sizeof(double) * nfn);
  memset(scl, 0, sizeof(double) * ncn);
  BruteTransfer(m, dirichlet, 1, 0, xc, sf);  /* |P||x_c| */
  BruteTransfer(m, dirichlet, 1, 1, xf, scl); /* |P^T||x_f| */
  for (int dir = 0; dir < 3; dir++) split[dir] = dir < m->dim ? (ce0[dir] / 2) | 1 : 1;
  /* part -1: the whole range on exact boxes; then the 2^d parts of (c) on ghosted boxes */
  for (int p = -1; p < (1 << m->dim); p++) {
    int cs[3], ce[3];
    long nf, nc;

    for (int dir = 0; dir < 3; dir++) {
      part[dir] = (p >> dir) & 1;
      cs[dir]   = p < 0 || !part[dir] ? cs0[dir] : split[dir];
      ce[dir]   = p < 0 || part[dir] ? ce0[dir] : split[dir];
      if (dir >= m->dim) cs[dir] = 0, ce[dir] = 1;
    }
    SetupDesc(m, cs, ce, p < 0 ? 0 : 1, dirichlet, &d);
    nf = Count(d.fine_size);
    nc = Count(d.coarse_size);

    /* prolong onto random y0 */
    BoxGather(m->cn, d.coarse_start, d.coarse_size, xc, bin);
    for (long q = 0; q < nc; q++) fin[q] = (float)bin[q];
    for (long q = 0; q < nf; q++) yf[q] = (float)(y0[q] = yd[q] = (float)(2 * Rand(seed) - 1));
    PatchworkProlongRef(&d, bin, yd);
    PatchworkProlongRefFloat(&d, fin, yf);
    BoxGather(m->fn, d.fine_start, d.fine_size, sf, sb);
    rp = RatioMax(rp, FloatRatio(nf, yf, yd, y0, sb, lpro), 1.0);

    /* restrict onto random y0 */
    BoxGather(m->fn, d.fine_start, d.fine_size, xf, bin);
    for (long q = 0; q < nf; q++) fin[q] = (float)bin[q];
    for (long q = 0; q < nc; q++) yf[q] = (float)(y0[q] = yd[q] = (float)(2 * Rand(seed) - 1));
    PatchworkRestrictRef(&d, bin, yd);
    PatchworkRestrictRefFloat(&d, fin, yf);
    BoxGather(m->cn, d.coarse_start, d.coarse_size, scl, sb);
    rr = RatioMax(rr, FloatRatio(nc, yf, yd, y0, sb, lres), 1.0);
  }
  Check(fails, rp, 1.0, "transfer %dD k=%d dirichlet=%d float prolong vs double (whole, %d sub-boxes): max err/bound", m->dim, m->k, dirichlet, 1 << m->dim);
  Check(fails, rr, 1.0, "transfer %dD k=%d dirichlet=%d float restrict vs double (whole, %d sub-boxes): max err/bound", m->dim, m->k, dirichlet, 1 << m->dim);
  worst[0] = RatioMax(worst[0], rp, 1.0);
  worst[1] = RatioMax(worst[1], rr, 1.0);
  free(xc);
  free(xf);
  free(sf);
  free(scl);
  free(bin);
  free(y0);
  free(yd);
  free(sb);
  free(fin);
  free(yf);
}

/* Bad degrees are refused; an empty cell range adds nothing */
static void TestEdges(int *fails)
{
  PatchworkTransferDesc d;
  Mesh   m;
  const int nc[3] = {2, 2, 2}, cs[3] = {1, 0, 0}, ce[3] = {1, 4, 4};
  double x[4] = {0, 0, 0, 0}, y[4] = {1, 2, 3, 4}, err = 0.0;
  float  xf[4] = {0, 0, 0, 0}, yf[4] = {1, 2, 3, 4};

  Check(fails, !PatchworkTransferSetUp1D(0, &d) + !PatchworkTransferSetUp1D(PW_MAX_DEGREE + 1, &d), 0, "transfer setup refuses degree 0 and %d", PW_MAX_DEGREE + 1);
  MeshCreate(3, 2, nc, &m);
  SetupDesc(&m, cs, ce, 0, 1, &d);
  PatchworkProlongRef(&d, x, y);
  PatchworkRestrictRef(&d, x, y);
  PatchworkProlongRefFloat(&d, xf, yf);
  PatchworkRestrictRefFloat(&d, xf, yf);
  for (int i = 0; i < 4; i++) err = ErrMax(err, ErrMax(fabs(y[i] - (i + 1)), fabs(yf[i] - (i + 1))));
  Check(fails, err, 0, "transfer 3D empty cell range adds nothing (double, float)");
}

int main(int argc, char **argv)
{
  /* coarse meshes: 3x2 in 2D, 2x2x2 in 3D (fine 6x4, 4x4x4): every coarse cell touches the
     boundary, the fine mesh has interior faces in every direction; --quick: fewer degrees */
  const int nc[2][3] = {{3, 2, 1}, {2, 2, 2}};
  int       fails = 0, quick = argc > 1 && !strcmp(argv[1], "--quick");
  uint64_t  seed  = 0x9E3779B97F4A7C15ULL;
  double    worst[2] = {0, 0};

  for (int dim = 2; dim <= 3; dim++) {
    const int kmax = quick ? 4 : dim == 2 ? PW_MAX_DEGREE : 8;

    for (int k = 1; k <= kmax; k++) {
      Mesh m;

      MeshCreate(dim, k, nc[dim - 2], &m);
      TestPolynomial(&fails, &m, &seed);
      for (int dirichlet = 0; dirichlet <= 1; dirichlet++) {
        TestBrute(&fails, &m, dirichlet, &seed);
        TestPartition(&fails, &m, dirichlet, &seed);
        TestFloat(&fails, &m, dirichlet, &seed, worst);
      }
    }
  }
  TestEdges(&fails);
  printf("worst err/bound: float prolong %.3g, float restrict %.3g\n", worst[0], worst[1]);
  printf("%s: %d check(s) failed\n", fails ? "FAIL" : "ok  ", fails);
  return fails ? 1 : 0;
}
