/* Unit test of the CPU reference tensor-product kernels (src/core/tensor_ref.c) against an
   independent brute force: the dense n^d x n^d element matrix built from explicit Kronecker
   products of the 1D matrices, applied cell by cell on the global node grid.
   PETSc-free. Prints one line per check and returns 1 if any check failed. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <patchwork/basis1d.h>
#include <patchwork/tensor_kernel.h>
#include "unittest.h"

/* ---------------------------------------------------------------------------------------------
   Brute force, written without the kernel's index helpers: global node numbers, dense matrices. */

/* C = A (x) B, A na x na, B nb x nb, C row major (na nb) x (na nb): C[ia nb + ib][ja nb + jb] = A[ia][ja] B[ib][jb] */
static void Kron(int na, const double *A, int nb, const double *B, double *C)
{
  const int nc = na * nb;

  for (int ia = 0; ia < na; ia++)
    for (int ib = 0; ib < nb; ib++)
      for (int ja = 0; ja < na; ja++)
        for (int jb = 0; jb < nb; jb++) C[(ia * nb + ib) * nc + ja * nb + jb] = A[ia * na + ja] * B[ib * nb + jb];
}

/* E += c * (F[dim-1] (x) ... (x) F[0]): the leftmost factor is the slowest index (z), x is fastest */
static void AddKronTerm(int dim, int n, double c, const double *F[3], double *E, double *t1, double *t2)
{
  const int nt = dim == 2 ? n * n : n * n * n;

  Kron(n, F[1], n, F[0], t1);
  if (dim == 3) {
    Kron(n, F[2], n * n, t1, t2);
    t1 = t2;
  }
  for (int q = 0; q < nt * nt; q++) E[q] += c * t1[q];
}

/* Dense element matrix E = cm M..M + sum_d cs[d] (K in slot d); with absval, the same with |.| of
   every coefficient and entry, which bounds the rounding of any evaluation order of E u. */
static void BuildElement(int dim, int n, const double *M, const double *K, double cm, const double *cs, int absval, double *E)
{
  const int nt = dim == 2 ? n * n : n * n * n;
  double   *t1 = Malloc(sizeof(double) * nt * nt), *t2 = Malloc(sizeof(double) * nt * nt);
  double    Ma[PW_MAX_N * PW_MAX_N], Ka[PW_MAX_N * PW_MAX_N];
  const double *F[3];

  for (int q = 0; q < n * n; q++) {
    Ma[q] = absval ? fabs(M[q]) : M[q];
    Ka[q] = absval ? fabs(K[q]) : K[q];
  }
  memset(E, 0, sizeof(double) * nt * nt);
  F[0] = F[1] = F[2] = Ma;
  AddKronTerm(dim, n, absval ? fabs(cm) : cm, F, E, t1, t2);
  for (int d = 0; d < dim; d++) {
    F[0] = F[1] = F[2] = Ma;
    F[d]             = Ka;
    AddKronTerm(dim, n, absval ? fabs(cs[d]) : cs[d], F, E, t1, t2);
  }
  free(t1);
  free(t2);
}

typedef struct {
  int dim, k, nodes[3], cs[3], ce[3], dirichlet;
} Grid;

static long GlobalIndex(const Grid *g, int gx, int gy, int gz)
{
  return ((long)gz * g->nodes[1] + gy) * g->nodes[0] + gx;
}

static int IsBoundary(const Grid *g, int gx, int gy, int gz)
{
  int c[3] = {gx, gy, gz};

  for (int d = 0; d < g->dim; d++)
    if (c[d] == 0 || c[d] == g->nodes[d] - 1) return 1;
  return 0;
}

static long NumNodes(const Grid *g)
{
  return (long)g->nodes[0] * g->nodes[1] * g->nodes[2];
}

/* yg += sum over cells of P_K^T E P_K xg on the global grid, Dirichlet nodes zeroed in and out */
static void BruteApply(const Grid *g, const double *E, const double *xg, double *yg)
{
  const int n = g->k + 1, nz = g->dim == 3 ? n : 1, nt = n * n * nz;
  long      idx[PW_MAX_N * PW_MAX_N * PW_MAX_N];
  double    u[PW_MAX_N * PW_MAX_N * PW_MAX_N];

  for (int ez = g->cs[2]; ez < g->ce[2]; ez++) {
    for (int ey = g->cs[1]; ey < g->ce[1]; ey++) {
      for (int ex = g->cs[0]; ex < g->ce[0]; ex++) {
        for (int l = 0; l < nz; l++) {
          for (int j = 0; j < n; j++) {
            for (int i = 0; i < n; i++) {
              int gx = g->k * ex + i, gy = g->k * ey + j, gz = g->k * ez + l, q = (l * n + j) * n + i;

              idx[q] = (g->dirichlet && IsBoundary(g, gx, gy, gz)) ? -1 : GlobalIndex(g, gx, gy, gz);
              u[q]   = idx[q] < 0 ? 0.0 : xg[idx[q]];
            }
          }
        }
        for (int r = 0; r < nt; r++) {
          double s = 0.0;

          if (idx[r] < 0) continue;
          for (int c = 0; c < nt; c++) s += E[r * nt + c] * u[c];
          yg[idx[r]] += s;
        }
      }
    }
  }
}

/* yg += diagonal of the brute-force assembly */
static void BruteDiagonal(const Grid *g, const double *E, double *yg)
{
  const int n = g->k + 1, nz = g->dim == 3 ? n : 1, nt = n * n * nz;

  for (int ez = g->cs[2]; ez < g->ce[2]; ez++)
    for (int ey = g->cs[1]; ey < g->ce[1]; ey++)
      for (int ex = g->cs[0]; ex < g->ce[0]; ex++)
        for (int l = 0; l < nz; l++)
          for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
              int gx = g->k * ex + i, gy = g->k * ey + j, gz = g->k * ez + l, q = (l * n + j) * n + i;

              if (g->dirichlet && IsBoundary(g, gx, gy, gz)) continue;
              yg[GlobalIndex(g, gx, gy, gz)] += E[q * nt + q];
            }
}

/* Copy between a global array and a box array (start, size) */
static void BoxFromGlobal(const Grid *g, const int start[3], const int size[3], const double *xg, double *xb)
{
  long b = 0;

  for (int z = 0; z < size[2]; z++)
    for (int y = 0; y < size[1]; y++)
      for (int x = 0; x < size[0]; x++) xb[b++] = xg[GlobalIndex(g, start[0] + x, start[1] + y, start[2] + z)];
}

static long BoxCount(const int size[3])
{
  return (long)size[0] * size[1] * size[2];
}

/* ---------------------------------------------------------------------------------------------
   Test cases */

typedef struct {
  const char *name;
  int         ncell[3];     /* global cells */
  int         cs[3], ce[3]; /* applied cells */
  int         in_lo[3], in_hi[3], out_lo[3], out_hi[3]; /* extra nodes on each side of the cells' nodes (clipped to the grid) */
} Case;

static void SetupDesc(int dim, int k, PatchworkQuadrature quad, const Case *c, int dirichlet, uint64_t *seed, PatchworkTensorDesc *desc, Grid *g)
{
  memset(desc, 0, sizeof(*desc));
  desc->dim       = dim;
  desc->degree    = k;
  desc->dirichlet = dirichlet;
  desc->scatter   = PW_SCATTER_ATOMIC;
  g->dim          = dim;
  g->k            = k;
  g->dirichlet    = dirichlet;
  for (int d = 0; d < 3; d++) {
    if (d < dim) {
      int lo = k * c->cs[d], hi = k * c->ce[d];

      desc->nodes[d]      = k * c->ncell[d] + 1;
      desc->cell_start[d] = c->cs[d];
      desc->cell_end[d]   = c->ce[d];
      desc->in_start[d]   = lo - c->in_lo[d] < 0 ? 0 : lo - c->in_lo[d];
      desc->in_size[d]    = (hi + c->in_hi[d] > desc->nodes[d] - 1 ? desc->nodes[d] - 1 : hi + c->in_hi[d]) - desc->in_start[d] + 1;
      desc->out_start[d]  = lo - c->out_lo[d] < 0 ? 0 : lo - c->out_lo[d];
      desc->out_size[d]   = (hi + c->out_hi[d] > desc->nodes[d] - 1 ? desc->nodes[d] - 1 : hi + c->out_hi[d]) - desc->out_start[d] + 1;
    } else {
      desc->nodes[d]    = 1;
      desc->cell_end[d] = 1;
      desc->in_size[d] = desc->out_size[d] = 1;
    }
    g->nodes[d] = desc->nodes[d];
    g->cs[d]    = desc->cell_start[d];
    g->ce[d]    = desc->cell_end[d];
  }
  PatchworkTensor1DMatrices(k, quad, desc->mass1d, desc->stiff1d);
  /* cell aspect ratios up to 10: stiffness coefficients spread over two decades */
  desc->coef_mass = 0.5 + Rand(seed);
  for (int d = 0; d < 3; d++) desc->coef_stiff[d] = (0.5 + Rand(seed)) * pow(10.0, 2 * Rand(seed) - 1);
}

/*
  Tolerances. Each output entry is a sum over <= 2^d cells of the d-fold product of 1D matrices with
  the cell vector. With the standard bound |fl(a.b) - a.b| <= gamma_m |a|.|b| (gamma_m ~ m eps) per
  dot product of length m, the error of the sum factorization is <= (d n + 2^d + c) eps (|A||x|)_i,
  and that of the dense brute force <= (n^d + 2^d + c) eps (|A||x|)_i, where |A| is the assembled
  operator with every 1D entry and coefficient replaced by its absolute value (BuildElement with
  absval). The max-norm of |A||x| + |y0| is the scale, not that of the result, because stiffness
  terms may cancel. A factor 2 gives room for the c's.
*/
static double ApplyTol(int dim, int n, double eps)
{
  double nd = dim == 2 ? n * n : n * n * n;

  return 2.0 * (nd + dim * n + (1 << dim) + 8) * eps;
}

static double FloatTol(int dim, int n)
{
  /* float side only: the float rounding of the 1D entries and coefficients adds ~ (d+1) eps_f */
  return 2.0 * ((dim + 1) * n + (1 << dim) + dim + 8) * FLT_EPSILON;
}

/* quad < 0: random nonsymmetric 1D matrices, so that a transposed contraction is caught too */
static void TestCase(int *fails, int dim, int k, int quad, const Case *c, int dirichlet, uint64_t *seed)
{
  const int  n = k + 1, nt = dim == 2 ? n * n : n * n * n;
  const char *qn = quad < 0 ? "rand" : quad == PW_QUAD_GAUSS ? "gauss" : "gll";
  PatchworkTensorDesc desc;
  Grid       g;
  long       ng, nin, nout;
  double    *E, *Ea, *xg, *ag, *yg, *xin, *y0, *y, *ex, *sc, err, tol;
  float     *xf, *yf;

  SetupDesc(dim, k, quad < 0 ? PW_QUAD_GAUSS : (PatchworkQuadrature)quad, c, dirichlet, seed, &desc, &g);
  if (quad < 0)
    for (int q = 0; q < n * n; q++) {
      desc.mass1d[q]  = 2 * Rand(seed) - 1;
      desc.stiff1d[q] = 2 * Rand(seed) - 1;
    }
  ng   = NumNodes(&g);
  nin  = BoxCount(desc.in_size);
  nout = BoxCount(desc.out_size);
  E    = Malloc(sizeof(double) * nt * nt);
  Ea   = Malloc(sizeof(double) * nt * nt);
  xg   = Malloc(sizeof(double) * ng);
  ag   = Malloc(sizeof(double) * ng);
  yg   = Malloc(sizeof(double) * ng);
  xin  = Malloc(sizeof(double) * nin);
  y0   = Malloc(sizeof(double) * nout);
  y    = Malloc(sizeof(double) * nout);
  ex   = Malloc(sizeof(double) * nout);
  sc   = Malloc(sizeof(double) * nout);
  xf   = Malloc(sizeof(float) * nin);
  yf   = Malloc(sizeof(float) * nout);
  BuildElement(dim, k + 1, desc.mass1d, desc.stiff1d, desc.coef_mass, desc.coef_stiff, 0, E);
  BuildElement(dim, k + 1, desc.mass1d, desc.stiff1d, desc.coef_mass, desc.coef_stiff, 1, Ea);

  /* x and y0 are rounded to float so that the float run sees exactly the same input */
  for (long i = 0; i < ng; i++) xg[i] = (float)(2 * Rand(seed) - 1);
  for (long i = 0; i < nout; i++) y0[i] = (float)(2 * Rand(seed) - 1);
  BoxFromGlobal(&g, desc.in_start, desc.in_size, xg, xin);

  /* expected = y0 + brute force; scale = |A||x| + |y0| */
  memset(yg, 0, sizeof(double) * ng);
  BruteApply(&g, E, xg, yg);
  BoxFromGlobal(&g, desc.out_start, desc.out_size, yg, ex);
  for (long i = 0; i < ng; i++) ag[i] = fabs(xg[i]);
  memset(yg, 0, sizeof(double) * ng);
  BruteApply(&g, Ea, ag, yg);
  BoxFromGlobal(&g, desc.out_start, desc.out_size, yg, sc);
  for (long i = 0; i < nout; i++) {
    ex[i] += y0[i];
    sc[i] += fabs(y0[i]);
  }

  memcpy(y, y0, sizeof(double) * nout);
  PatchworkTensorApplyRef(&desc, xin, y);
  err = 0.0;
  for (long i = 0; i < nout; i++) err = ErrMax(err, fabs(y[i] - ex[i]));
  tol = ApplyTol(dim, n, DBL_EPSILON) * MaxAbs(nout, sc);
  Check(fails, err, tol, "tensor %dD k=%d %-5s %-6s dirichlet=%d apply vs dense Kronecker assembly", dim, k, qn, c->name, dirichlet);

  for (long i = 0; i < nin; i++) xf[i] = (float)xin[i];
  for (long i = 0; i < nout; i++) yf[i] = (float)y0[i];
  PatchworkTensorApplyRefFloat(&desc, xf, yf);
  err = 0.0;
  for (long i = 0; i < nout; i++) err = ErrMax(err, fabs(yf[i] - y[i]));
  tol = FloatTol(dim, n) * MaxAbs(nout, sc);
  Check(fails, err, tol, "tensor %dD k=%d %-5s %-6s dirichlet=%d float apply vs double", dim, k, qn, c->name, dirichlet);

  /* diagonal: a sum of 2^d cells of d+1 terms, each a product of d factors */
  memset(yg, 0, sizeof(double) * ng);
  BruteDiagonal(&g, E, yg);
  BoxFromGlobal(&g, desc.out_start, desc.out_size, yg, ex);
  memset(yg, 0, sizeof(double) * ng);
  BruteDiagonal(&g, Ea, yg);
  BoxFromGlobal(&g, desc.out_start, desc.out_size, yg, sc);
  memcpy(y, y0, sizeof(double) * nout);
  PatchworkTensorDiagonalRef(&desc, y);
  err = 0.0;
  for (long i = 0; i < nout; i++) err = ErrMax(err, fabs(y[i] - (y0[i] + ex[i])));
  for (long i = 0; i < nout; i++) sc[i] += fabs(y0[i]);
  tol = 4.0 * (dim + 1 + (1 << dim) + 4) * DBL_EPSILON * MaxAbs(nout, sc);
  Check(fails, err, tol, "tensor %dD k=%d %-5s %-6s dirichlet=%d diagonal vs dense assembly", dim, k, qn, c->name, dirichlet);

  /* overwrite: y starting as NaN gives exactly the apply into zeros (0 + v = v), on the whole out box */
  for (int kind = 0; kind < 2; kind++) {
    for (long i = 0; i < nout; i++) {
      y[i]  = NAN;
      ex[i] = 0;
    }
    desc.overwrite = 1;
    if (kind == 0) PatchworkTensorApplyRef(&desc, xin, y);
    else PatchworkTensorDiagonalRef(&desc, y);
    desc.overwrite = 0;
    if (kind == 0) PatchworkTensorApplyRef(&desc, xin, ex);
    else PatchworkTensorDiagonalRef(&desc, ex);
    err = 0.0;
    for (long i = 0; i < nout; i++) err = ErrMax(err, fabs(y[i] - ex[i]));
    Check(fails, err, 0, "tensor %dD k=%d %-5s %-6s dirichlet=%d %s overwriting NaN = adding into 0", dim, k, qn, c->name, dirichlet, kind ? "diagonal" : "apply");
  }

  free(E);
  free(Ea);
  free(xg);
  free(ag);
  free(yg);
  free(xin);
  free(y0);
  free(y);
  free(ex);
  free(sc);
  free(xf);
  free(yf);
}

/* x2.(A x1) = x1.(A x2) on the full grid (in = out = global box), with the Dirichlet identity rows.
   Both sides are dot products of length N of outputs carrying the apply error, so the bound is
   (N + d n + 2^d + c) eps x2.|A||x1|, N the number of nodes. */
static void TestSymmetry(int *fails, int dim, int k, PatchworkQuadrature quad, int dirichlet, uint64_t *seed)
{
  const Case full = {"full", {3, 2, 2}, {0, 0, 0}, {3, 2, 2}, {0}, {0}, {0}, {0}};
  const int  n = k + 1, nt = dim == 2 ? n * n : n * n * n;
  PatchworkTensorDesc desc;
  Grid       g;
  long       ng;
  double    *x1, *x2, *y1, *y2, *a1, *s1, *Ea, d12 = 0.0, d21 = 0.0, scale = 0.0;

  SetupDesc(dim, k, quad, &full, dirichlet, seed, &desc, &g);
  ng = NumNodes(&g);
  x1 = Malloc(sizeof(double) * ng);
  x2 = Malloc(sizeof(double) * ng);
  y1 = Malloc(sizeof(double) * ng);
  y2 = Malloc(sizeof(double) * ng);
  a1 = Malloc(sizeof(double) * ng);
  s1 = Malloc(sizeof(double) * ng);
  Ea = Malloc(sizeof(double) * nt * nt);
  for (long i = 0; i < ng; i++) {
    x1[i] = 2 * Rand(seed) - 1;
    x2[i] = 2 * Rand(seed) - 1;
    a1[i] = fabs(x1[i]);
  }
  memset(y1, 0, sizeof(double) * ng);
  memset(y2, 0, sizeof(double) * ng);
  PatchworkTensorApplyRef(&desc, x1, y1);
  PatchworkTensorApplyRef(&desc, x2, y2);
  PatchworkTensorBoundaryRef(&desc, x1, y1);
  PatchworkTensorBoundaryRef(&desc, x2, y2);
  BuildElement(dim, n, desc.mass1d, desc.stiff1d, desc.coef_mass, desc.coef_stiff, 1, Ea);
  memset(s1, 0, sizeof(double) * ng);
  BruteApply(&g, Ea, a1, s1);
  for (long i = 0; i < ng; i++) {
    d12 += x2[i] * y1[i];
    d21 += x1[i] * y2[i];
    scale += fabs(x2[i]) * (s1[i] + a1[i]);
  }
  Check(fails, fabs(d12 - d21), 2.0 * (ng + dim * n + (1 << dim) + 8) * DBL_EPSILON * scale, "tensor %dD k=%d %-5s full   dirichlet=%d symmetry x2.(A x1) = x1.(A x2)", dim, k,
        quad == PW_QUAD_GAUSS ? "gauss" : "gll", dirichlet);
  free(x1);
  free(x2);
  free(y1);
  free(y2);
  free(a1);
  free(s1);
  free(Ea);
}

/* Boundary rows on an offset out box that touches part of the global boundary: exact copies */
static void TestBoundary(int *fails, int dim, const Case *c, uint64_t *seed)
{
  PatchworkTensorDesc desc;
  Grid       g;
  long       nout, nb = 0;
  double    *x, *y, *y0;
  double     ecopy = 0.0, eone = 0.0, eoff = 0.0;

  for (int dirichlet = 0; dirichlet <= 1; dirichlet++) {
    SetupDesc(dim, 2, PW_QUAD_GAUSS, c, dirichlet, seed, &desc, &g);
    nout = BoxCount(desc.out_size);
    x    = Malloc(sizeof(double) * nout);
    y    = Malloc(sizeof(double) * nout);
    y0   = Malloc(sizeof(double) * nout);
    for (long i = 0; i < nout; i++) {
      x[i]  = 2 * Rand(seed) - 1;
      y0[i] = 2 * Rand(seed) - 1;
    }
    for (int pass = 0; pass < 2; pass++) {
      long b = 0;

      memcpy(y, y0, sizeof(double) * nout);
      PatchworkTensorBoundaryRef(&desc, pass ? NULL : x, y);
      for (int gz = desc.out_start[2]; gz < desc.out_start[2] + desc.out_size[2]; gz++)
        for (int gy = desc.out_start[1]; gy < desc.out_start[1] + desc.out_size[1]; gy++)
          for (int gx = desc.out_start[0]; gx < desc.out_start[0] + desc.out_size[0]; gx++, b++) {
            double want = y0[b];

            if (dirichlet && IsBoundary(&g, gx, gy, gz)) {
              want = pass ? 1.0 : x[b];
              if (!pass) nb++;
            }
            if (!dirichlet) eoff = ErrMax(eoff, fabs(y[b] - want));
            else if (pass) eone = ErrMax(eone, fabs(y[b] - want));
            else ecopy = ErrMax(ecopy, fabs(y[b] - want));
          }
    }
    free(x);
    free(y);
    free(y0);
  }
  Check(fails, nb == 0, 0, "tensor %dD boundary: out box %s touches %ld global-boundary nodes", dim, c->name, nb);
  Check(fails, ecopy, 0, "tensor %dD boundary dirichlet=1 y = x on boundary nodes, others untouched", dim);
  Check(fails, eone, 0, "tensor %dD boundary dirichlet=1 x=NULL: y = 1 on boundary nodes, others untouched", dim);
  Check(fails, eoff, 0, "tensor %dD boundary dirichlet=0 leaves y untouched", dim);
}

/* An empty cell range adds nothing (and touches no memory through the boxes) */
static void TestEmpty(int *fails, uint64_t *seed)
{
  const Case          c = {"empty", {3, 2, 2}, {1, 0, 0}, {1, 2, 2}, {0}, {0}, {0}, {0}};
  PatchworkTensorDesc desc;
  Grid                g;
  double              y[4] = {1, 2, 3, 4}, x[4] = {0, 0, 0, 0}, err = 0.0;

  SetupDesc(3, 2, PW_QUAD_GAUSS, &c, 1, seed, &desc, &g);
  PatchworkTensorApplyRef(&desc, x, y);
  PatchworkTensorDiagonalRef(&desc, y);
  for (int i = 0; i < 4; i++) err = ErrMax(err, fabs(y[i] - (i + 1)));
  Check(fails, err, 0, "tensor 3D empty cell range adds nothing");
  /* but an overwriting one still sets its out box to zero */
  desc.overwrite = 1;
  for (int kind = 0; kind < 2; kind++) {
    const long nout = BoxCount(desc.out_size);
    double    *yb   = Malloc(sizeof(double) * nout);

    for (long i = 0; i < nout; i++) yb[i] = NAN;
    if (kind == 0) PatchworkTensorApplyRef(&desc, x, yb);
    else PatchworkTensorDiagonalRef(&desc, yb);
    err = 0.0;
    for (long i = 0; i < nout; i++) err = ErrMax(err, fabs(yb[i]));
    Check(fails, err, 0, "tensor 3D empty cell range, overwriting: %s sets the out box to 0", kind ? "diagonal" : "apply");
    free(yb);
  }
}

int main(void)
{
  /* "small": the whole grid in one array. "offset": an MPI-rank-like sub-box of a bigger grid
     whose cells touch part of the global boundary, the in box a ghosted box with extra nodes around
     the cells, the out box a different box, so both index formulas are exercised with offsets. */
  const Case cases[2][2] = {
    {{"small", {3, 2, 1}, {0, 0, 0}, {3, 2, 1}, {0}, {0}, {0}, {0}},
     {"offset", {5, 4, 1}, {1, 1, 0}, {4, 4, 1}, {1, 2, 0}, {3, 1, 0}, {0, 1, 0}, {2, 0, 0}}},
    {{"small", {3, 2, 2}, {0, 0, 0}, {3, 2, 2}, {0}, {0}, {0}, {0}},
     {"offset", {5, 4, 3}, {1, 1, 0}, {4, 4, 2}, {1, 2, 0}, {3, 1, 2}, {0, 1, 0}, {2, 0, 1}}}
  };
  int      fails = 0;
  uint64_t seed  = 0x2545F4914F6CDD1DULL;

  for (int dim = 2; dim <= 3; dim++) {
    int kmax = dim == 2 ? PW_MAX_DEGREE : 8;

    for (int k = 1; k <= kmax; k++)
      for (int q = -1; q < 2; q++)
        for (int c = 0; c < 2; c++)
          for (int dirichlet = 0; dirichlet <= 1; dirichlet++) TestCase(&fails, dim, k, q, &cases[dim - 2][c], dirichlet, &seed);
    for (int k = 1; k <= kmax; k++)
      for (int dirichlet = 0; dirichlet <= 1; dirichlet++) TestSymmetry(&fails, dim, k, PW_QUAD_GAUSS, dirichlet, &seed);
    TestBoundary(&fails, dim, &cases[dim - 2][1], &seed);
  }
  TestEmpty(&fails, &seed);
  printf("%s: %d check(s) failed\n", fails ? "FAIL" : "ok  ", fails);
  return fails ? 1 : 0;
}
