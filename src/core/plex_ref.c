/* CPU reference of the tensor-product operator on general quadrilateral and hexahedral cells:
   sum factorization through quadrature points with stored geometric factors. The CUDA kernels in
   cuda/plex_apply.cu implement the same contract (include/patchwork/plex_kernel.h). */
#include <patchwork/plex_kernel.h>
#include <patchwork/hanging_kernel.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#define PW_MAX_QD (PW_MAX_Q * PW_MAX_Q * PW_MAX_Q)

int PatchworkPlex1DTables(int degree, int nq, PatchworkQuadrature q, double *points, double *weights, double *interp, double *deriv)
{
  const int n = degree + 1;
  double    nodes[PW_MAX_N], w[PW_MAX_N], phi[PW_MAX_Q], dphi[PW_MAX_Q];

  if (degree < 1 || degree > PW_MAX_DEGREE || nq < n || nq > PW_MAX_Q) return 1;
  if (q == PW_QUAD_GAUSSLOBATTO && nq != n) return 1;
  if (PatchworkGaussLobatto(n, nodes, w)) return 1;
  if (q == PW_QUAD_GAUSSLOBATTO ? PatchworkGaussLobatto(nq, points, weights) : PatchworkGauss(nq, points, weights)) return 1;
  for (int i = 0; i < nq; i++) {
    PatchworkLagrangeEval(n, nodes, points[i], phi, dphi);
    for (int j = 0; j < n; j++) interp[i * n + j] = phi[j];
    PatchworkLagrangeEval(nq, points, points[i], phi, dphi);
    for (int j = 0; j < nq; j++) deriv[i * nq + j] = dphi[j];
  }
  return 0;
}

/* out = A applied along direction dir of the array in (sizes s, x fastest); A is rows x cols, row
   major, and s[dir] == cols (or rows when transposed); out has s[dir] replaced by rows (or cols). */
static void Contract(const double *A, int rows, int cols, int transpose, int dir, const int s[3], const double *in, double *out)
{
  const int m = transpose ? rows : cols, r = transpose ? cols : rows;
  int       stride = 1, outer = 1;

  for (int d = 0; d < dir; d++) stride *= s[d];
  for (int d = dir + 1; d < 3; d++) outer *= s[d];
  for (int o = 0; o < outer; o++)
    for (int i = 0; i < r; i++)
      for (int t = 0; t < stride; t++) {
        double sum = 0;
        for (int j = 0; j < m; j++) sum += (transpose ? A[j * cols + i] : A[i * cols + j]) * in[(o * m + j) * stride + t];
        out[(o * r + i) * stride + t] = sum;
      }
}

/* Apply one 1D matrix per direction (dim directions), from size-m to size-r arrays per direction
   (the transposes go from r back to m). A[dir] is r x m. work is scratch of the largest size. */
static void TensorApply(int dim, const double *const A[3], int r, int m, int transpose, const double *in, double *out, double *work)
{
  int          s[3] = {1, 1, 1};
  const double *src = in;
  double       *bufs[2] = {work, out};

  for (int d = 0; d < dim; d++) s[d] = transpose ? r : m;
  for (int d = 0; d < dim; d++) {
    /* the last direction writes out; alternate so that it does */
    double *dst = bufs[(dim - 1 - d) % 2 == 0 ? 1 : 0];

    Contract(A[d], r, m, transpose, d, s, src, dst);
    s[d] = transpose ? m : r;
    src  = dst;
  }
}

static int Pow(int b, int e)
{
  int p = 1;
  for (int i = 0; i < e; i++) p *= b;
  return p;
}

/* Index of component G_ab (a,b < dim) in the geometry layout */
static int GIndex(int dim, int a, int b)
{
  if (a > b) {
    int t = a;
    a     = b;
    b     = t;
  }
  return 1 + (dim == 3 ? (a == 0 ? b : a == 1 ? 2 + b : 5) : a + b);
}

/* out = A_c u on cell c (both n^dim, lexicographic) */
static void CellApply(const PatchworkPlexDesc *d, int c, const double *in, double *out)
{
  const int     dim = d->dim, n = d->degree + 1, nq = d->nq, nqd = Pow(nq, dim), ncomp = PW_PLEX_NCOMP(dim);
  const double *B[3] = {d->interp, d->interp, d->interp};
  const double *gc   = d->geom + (size_t)c * ncomp * nqd;
  double        uq[PW_MAX_QD], g[3][PW_MAX_QD], f[3][PW_MAX_QD], w[PW_MAX_QD], work[PW_MAX_QD];
  int           s[3] = {1, 1, 1};

  for (int a = 0; a < dim; a++) s[a] = nq;
  if (d->collocated) memcpy(uq, in, sizeof(double) * nqd);
  else TensorApply(dim, B, nq, n, 0, in, uq, work);
  for (int a = 0; a < dim; a++) Contract(d->deriv, nq, nq, 0, a, s, uq, g[a]);
  for (int q = 0; q < nqd; q++) {
    w[q] = gc[q] * uq[q];
    for (int a = 0; a < dim; a++) {
      f[a][q] = 0;
      for (int b = 0; b < dim; b++) f[a][q] += gc[GIndex(dim, a, b) * nqd + q] * g[b][q];
    }
  }
  for (int a = 0; a < dim; a++) {
    Contract(d->deriv, nq, nq, 1, a, s, f[a], work);
    for (int q = 0; q < nqd; q++) w[q] += work[q];
  }
  if (d->collocated) memcpy(out, w, sizeof(double) * nqd);
  else TensorApply(dim, B, nq, n, 1, w, out, work);
}

static unsigned long long HangMask(const PatchworkPlexDesc *d, int c)
{
  return d->hang ? d->hang[c] : 0;
}

void PatchworkPlexApplyRef(const PatchworkPlexDesc *d, const double *x, double *y)
{
  const int dim = d->dim, n = d->degree + 1, nd = Pow(n, dim);
  double    u[PW_MAX_QD], v[PW_MAX_QD];

  for (int c = 0; c < d->ncells; c++) {
    const int               *e    = d->elem + (size_t)c * nd;
    const unsigned long long mask = HangMask(d, c);

    for (int i = 0; i < nd; i++) u[i] = e[i] < 0 ? 0 : x[e[i]];
    if (mask) PatchworkHangingApplyRef(dim, d->degree, mask, d->hangP, u);
    CellApply(d, c, u, v);
    if (mask) PatchworkHangingApplyTransposeRef(dim, d->degree, mask, d->hangP, v);
    for (int i = 0; i < nd; i++)
      if (e[i] >= 0) y[e[i]] += v[i];
  }
}

/* The diagonal of C^T A_c C of a cell with hanging faces or edges, column by column: the unknown of
   slot i, with every slot that holds the same unknown */
static void HangingCellDiagonal(const PatchworkPlexDesc *d, int c, unsigned long long mask, double *y)
{
  const int  dim = d->dim, n = d->degree + 1, nd = Pow(n, dim);
  const int *e   = d->elem + (size_t)c * nd;
  double     u[PW_MAX_QD], v[PW_MAX_QD];

  for (int i = 0; i < nd; i++) {
    int    seen = 0;
    double sum  = 0;

    if (e[i] < 0) continue;
    for (int j = 0; j < i && !seen; j++) seen = e[j] == e[i];
    if (seen) continue;
    for (int j = 0; j < nd; j++) u[j] = e[j] == e[i] ? 1.0 : 0.0;
    PatchworkHangingApplyRef(dim, d->degree, mask, d->hangP, u);
    CellApply(d, c, u, v);
    PatchworkHangingApplyTransposeRef(dim, d->degree, mask, d->hangP, v);
    for (int j = 0; j < nd; j++)
      if (e[j] == e[i]) sum += v[j];
    y[e[i]] += sum;
  }
}

/* bd = deriv * interp: derivatives of the basis functions at the quadrature points (nq x n) */
static void BasisDerivative(int n, int nq, const double *interp, const double *deriv, double *bd)
{
  for (int q = 0; q < nq; q++)
    for (int i = 0; i < n; i++) {
      double s = 0;
      for (int p = 0; p < nq; p++) s += deriv[q * nq + p] * interp[p * n + i];
      bd[q * n + i] = s;
    }
}

void PatchworkPlexDiagonalRef(const PatchworkPlexDesc *d, double *y)
{
  const int dim = d->dim, n = d->degree + 1, nq = d->nq, nd = Pow(n, dim), nqd = Pow(nq, dim), ncomp = PW_PLEX_NCOMP(dim);
  double    bd[PW_MAX_Q * PW_MAX_N], bb[PW_MAX_Q * PW_MAX_N], dd[PW_MAX_Q * PW_MAX_N], db[PW_MAX_Q * PW_MAX_N];
  double    diag[PW_MAX_QD], t[PW_MAX_QD], work[PW_MAX_QD];

  BasisDerivative(n, nq, d->interp, d->deriv, bd);
  /* diag_i = sum_q g(q) prod_dir S_dir(q_dir, i_dir), S one of B*B, Bd*Bd, Bd*B elementwise */
  for (int i = 0; i < nq * n; i++) {
    bb[i] = d->interp[i] * d->interp[i];
    dd[i] = bd[i] * bd[i];
    db[i] = bd[i] * d->interp[i];
  }
  for (int c = 0; c < d->ncells; c++) {
    const int    *e  = d->elem + (size_t)c * nd;
    const double *gc = d->geom + (size_t)c * ncomp * nqd;

    if (HangMask(d, c)) {
      HangingCellDiagonal(d, c, HangMask(d, c), y);
      continue;
    }
    memset(diag, 0, sizeof(double) * nd);
    for (int m = 0; m < ncomp; m++) {
      const double *S[3] = {bb, bb, bb};
      double        factor = 1;

      if (m > 0) {
        int a = 0, b = 0;
        for (a = 0; a < dim; a++)
          for (b = a; b < dim; b++)
            if (GIndex(dim, a, b) == m) goto found;
      found:
        if (a == b) S[a] = dd;
        else {
          S[a]   = db;
          S[b]   = db;
          factor = 2; /* G_ab and G_ba */
        }
      }
      TensorApply(dim, S, nq, n, 1, gc + (size_t)m * nqd, t, work);
      for (int i = 0; i < nd; i++) diag[i] += factor * t[i];
    }
    for (int i = 0; i < nd; i++)
      if (e[i] >= 0) y[e[i]] += diag[i];
  }
}

static double Det(int dim, const double J[3][3])
{
  if (dim == 2) return J[0][0] * J[1][1] - J[0][1] * J[1][0];
  return J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) - J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) + J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
}

/* inverse of J (det given) */
static void Inverse(int dim, const double J[3][3], double det, double K[3][3])
{
  if (dim == 2) {
    K[0][0] = J[1][1] / det;
    K[0][1] = -J[0][1] / det;
    K[1][0] = -J[1][0] / det;
    K[1][1] = J[0][0] / det;
    return;
  }
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      /* cofactor of J[j][i] */
      const int r0 = (j + 1) % 3, r1 = (j + 2) % 3, c0 = (i + 1) % 3, c1 = (i + 2) % 3;
      K[i][j] = (J[r0][c0] * J[r1][c1] - J[r0][c1] * J[r1][c0]) / det;
    }
}

int PatchworkPlexGeometryRef(const PatchworkPlexGeomDesc *g, double *geom)
{
  const int dim = g->dim, n = g->degree + 1, nq = g->nq, nd = Pow(n, dim), nqd = Pow(nq, dim), ncomp = PW_PLEX_NCOMP(dim);
  double    bd[PW_MAX_Q * PW_MAX_N], dX[3][3][PW_MAX_QD], work[PW_MAX_QD];
  int       nbad = 0;

  BasisDerivative(n, nq, g->interp, g->deriv, bd);
  for (int c = 0; c < g->ncells; c++) {
    double *gc   = geom + (size_t)c * ncomp * nqd;
    int     sign = 0, bad = 0;

    /* dX[d][a] = d x_d / d xi_a at the quadrature points */
    for (int d = 0; d < dim; d++)
      for (int a = 0; a < dim; a++) {
        const double *A[3] = {g->interp, g->interp, g->interp};

        A[a] = bd;
        TensorApply(dim, A, nq, n, 0, g->coords + ((size_t)c * dim + d) * nd, dX[d][a], work);
      }
    for (int q = 0; q < nqd; q++) {
      double J[3][3], K[3][3], det, wq = 1, cd, r;
      int    qi = q;

      for (int d = 0; d < dim; d++) {
        wq *= g->weights[qi % nq];
        qi /= nq;
        for (int a = 0; a < dim; a++) J[d][a] = dX[d][a][q];
      }
      det = Det(dim, J);
      if (det == 0 || (sign && (det > 0) != (sign > 0))) bad = 1;
      if (!sign) sign = det > 0 ? 1 : -1;
      if (det == 0) det = 1; /* keep the factors finite; the cell is reported */
      Inverse(dim, J, det, K);
      cd    = g->beta * (g->diffusion ? g->diffusion[(size_t)c * nqd + q] : 1.0);
      r     = g->alpha * (g->reaction ? g->reaction[(size_t)c * nqd + q] : 1.0);
      gc[q] = wq * fabs(det) * r;
      for (int a = 0; a < dim; a++)
        for (int b = a; b < dim; b++) {
          double s = 0;
          for (int d = 0; d < dim; d++) s += K[a][d] * K[b][d];
          gc[(size_t)GIndex(dim, a, b) * nqd + q] = wq * fabs(det) * cd * s;
        }
    }
    nbad += bad;
  }
  return nbad;
}

void PatchworkPlexQuadCoordsRef(const PatchworkPlexGeomDesc *g, double *xq)
{
  const int     dim = g->dim, n = g->degree + 1, nq = g->nq, nd = Pow(n, dim), nqd = Pow(nq, dim);
  const double *B[3] = {g->interp, g->interp, g->interp};
  double        work[PW_MAX_QD];

  for (int c = 0; c < g->ncells; c++)
    for (int d = 0; d < dim; d++) TensorApply(dim, B, nq, n, 0, g->coords + ((size_t)c * dim + d) * nd, xq + ((size_t)c * dim + d) * nqd, work);
}
