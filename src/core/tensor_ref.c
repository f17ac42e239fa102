/* CPU reference of the Cartesian tensor-product operator (contract: include/patchwork/tensor_kernel.h).

   Per cell the operator is the Kronecker sum, x fastest in the cell-local numbering q = (l*n+j)*n+i,
     3D: A_K = cm M(x)M(x)M + cs[0] M_z(x)M_y(x)K_x + cs[1] M(x)K(x)M + cs[2] K(x)M(x)M
     2D: A_K = cm M(x)M + cs[0] M_y(x)K_x + cs[1] K_y(x)M_x
   with M = mass1d, K = stiff1d (both packed n x n, row major, stride n), cm = coef_mass and
   cs = coef_stiff (cs[2] is not read in 2D). Entry (i,p) multiplies input p into output i, so
   nonsymmetric 1D matrices are applied as given. Sum factorization: O(n^(d+1)) per cell.

   Assumptions, checked with assert():
   - the in box and the out box each contain every node of every cell in [cell_start, cell_end);
   - for d >= dim the cell range is [0,1) (2D convention of the header);
   - cell_start/cell_end lie within the global grid, nodes[d] = k*N_d + 1.
   The code is serial: cells are visited in order and added straight into y. */
#include <assert.h>
#include <stddef.h>
#include <patchwork/tensor_kernel.h>
#include "coreimpl.h"

#define PW_MAX_CELL_NODES (PW_MAX_N * PW_MAX_N * PW_MAX_N)

/* Nodes per cell in direction dir: n for a used direction, 1 for the unused third one in 2D */
static int CellNodes(const PatchworkTensorDesc *d, int dir)
{
  return dir < d->dim ? d->degree + 1 : 1;
}

static int OnGlobalBoundary(const PatchworkTensorDesc *d, const int g[3])
{
  for (int dir = 0; dir < d->dim; dir++)
    if (g[dir] == 0 || g[dir] == d->nodes[dir] - 1) return 1;
  return 0;
}

/* Validate the descriptor; returns 0 when the cell range is empty (nothing to do). The in box is
   checked only when the caller reads through it. */
static int CheckCells(const PatchworkTensorDesc *d, int use_in)
{
  const int k = d->degree;
  int       lo[3], hi[3];

  assert(d->dim == 2 || d->dim == 3);
  assert(k >= 1 && k <= PW_MAX_DEGREE);
  for (int dir = 0; dir < 3; dir++) {
    if (dir < d->dim) {
      assert(d->nodes[dir] >= k + 1 && (d->nodes[dir] - 1) % k == 0);
      assert(0 <= d->cell_start[dir] && d->cell_end[dir] <= (d->nodes[dir] - 1) / k);
    } else assert(d->cell_start[dir] == 0 && d->cell_end[dir] == 1);
    if (d->cell_end[dir] <= d->cell_start[dir]) return 0;
    lo[dir] = dir < d->dim ? k * d->cell_start[dir] : 0;
    hi[dir] = dir < d->dim ? k * d->cell_end[dir] : 0;
  }
  if (use_in) AssertBoxContains(d->in_start, d->in_size, lo, hi);
  AssertBoxContains(d->out_start, d->out_size, lo, hi);
  return 1;
}

/* Offsets of the cell's nodes in the in and out arrays (in may be NULL); -1 marks a node eliminated
   by the Dirichlet condition, which is read as zero and never written. */
static void CellOffsets(const PatchworkTensorDesc *d, const int e[3], ptrdiff_t *in, ptrdiff_t *out)
{
  const int k = d->degree, nx = CellNodes(d, 0), ny = CellNodes(d, 1), nz = CellNodes(d, 2);
  int       g[3], q = 0;

  for (int l = 0; l < nz; l++) {
    for (int j = 0; j < ny; j++) {
      for (int i = 0; i < nx; i++, q++) {
        int elim;

        g[0] = k * e[0] + i;
        g[1] = k * e[1] + j;
        g[2] = k * e[2] + l;
        elim = d->dirichlet && OnGlobalBoundary(d, g);
        if (in) in[q] = elim ? -1 : BoxIndex(d->in_start, d->in_size, g);
        out[q] = elim ? -1 : BoxIndex(d->out_start, d->out_size, g);
      }
    }
  }
}

/* v = A applied along the direction of stride s of the n^dim tensor u (ntot entries):
   v[o + i*s + r] = sum_p A[i*n+p] u[o + p*s + r] */
static void Contract(int n, int ntot, int s, const double *A, const double *u, double *v)
{
  for (int o = 0; o < ntot; o += n * s) {
    for (int i = 0; i < n; i++) {
      for (int r = 0; r < s; r++) {
        double sum = 0.0;

        for (int p = 0; p < n; p++) sum += A[i * n + p] * u[o + p * s + r];
        v[o + i * s + r] = sum;
      }
    }
  }
}

static void ContractFloat(int n, int ntot, int s, const float *A, const float *u, float *v)
{
  for (int o = 0; o < ntot; o += n * s) {
    for (int i = 0; i < n; i++) {
      for (int r = 0; r < s; r++) {
        float sum = 0.0f;

        for (int p = 0; p < n; p++) sum += A[i * n + p] * u[o + p * s + r];
        v[o + i * s + r] = sum;
      }
    }
  }
}

/* v = A_K u by sum factorization; u is overwritten (used as workspace) */
static void CellApply(int dim, int n, const double *M, const double *K, double cm, const double cs[3], double *u, double *v)
{
  double a[PW_MAX_CELL_NODES], b[PW_MAX_CELL_NODES], c[PW_MAX_CELL_NODES], t[PW_MAX_CELL_NODES];

  if (dim == 2) {
    const int nt = n * n;

    /* v = M_y (cm M_x u + cs0 K_x u) + cs1 K_y M_x u */
    Contract(n, nt, 1, M, u, a);
    Contract(n, nt, 1, K, u, b);
    for (int q = 0; q < nt; q++) t[q] = cm * a[q] + cs[0] * b[q];
    Contract(n, nt, n, M, t, v);
    Contract(n, nt, n, K, a, t);
    for (int q = 0; q < nt; q++) v[q] += cs[1] * t[q];
  } else {
    const int nt = n * n * n;

    /* a = M_x u, b = K_x u; c = M_y a, u <- cs1 K_y a + cs0 M_y b; v = M_z (cm c + u) + cs2 K_z c */
    Contract(n, nt, 1, M, u, a);
    Contract(n, nt, 1, K, u, b);
    Contract(n, nt, n, M, a, c);
    Contract(n, nt, n, K, a, t);
    for (int q = 0; q < nt; q++) u[q] = cs[1] * t[q];
    Contract(n, nt, n, M, b, t);
    for (int q = 0; q < nt; q++) u[q] = cm * c[q] + (u[q] + cs[0] * t[q]);
    Contract(n, nt, n * n, M, u, v);
    Contract(n, nt, n * n, K, c, t);
    for (int q = 0; q < nt; q++) v[q] += cs[2] * t[q];
  }
}

/* Same as CellApply, every operation in float */
static void CellApplyFloat(int dim, int n, const float *M, const float *K, float cm, const float cs[3], float *u, float *v)
{
  float a[PW_MAX_CELL_NODES], b[PW_MAX_CELL_NODES], c[PW_MAX_CELL_NODES], t[PW_MAX_CELL_NODES];

  if (dim == 2) {
    const int nt = n * n;

    ContractFloat(n, nt, 1, M, u, a);
    ContractFloat(n, nt, 1, K, u, b);
    for (int q = 0; q < nt; q++) t[q] = cm * a[q] + cs[0] * b[q];
    ContractFloat(n, nt, n, M, t, v);
    ContractFloat(n, nt, n, K, a, t);
    for (int q = 0; q < nt; q++) v[q] += cs[1] * t[q];
  } else {
    const int nt = n * n * n;

    ContractFloat(n, nt, 1, M, u, a);
    ContractFloat(n, nt, 1, K, u, b);
    ContractFloat(n, nt, n, M, a, c);
    ContractFloat(n, nt, n, K, a, t);
    for (int q = 0; q < nt; q++) u[q] = cs[1] * t[q];
    ContractFloat(n, nt, n, M, b, t);
    for (int q = 0; q < nt; q++) u[q] = cm * c[q] + (u[q] + cs[0] * t[q]);
    ContractFloat(n, nt, n * n, M, u, v);
    ContractFloat(n, nt, n * n, K, c, t);
    for (int q = 0; q < nt; q++) v[q] += cs[2] * t[q];
  }
}

void PatchworkTensorApplyRef(const PatchworkTensorDesc *d, const double *x, double *y)
{
  const int n  = d->degree + 1;
  const int nt = CellNodes(d, 0) * CellNodes(d, 1) * CellNodes(d, 2);
  double    u[PW_MAX_CELL_NODES], v[PW_MAX_CELL_NODES];
  ptrdiff_t in[PW_MAX_CELL_NODES], out[PW_MAX_CELL_NODES];
  int       e[3];

  if (!CheckCells(d, 1)) return;
  for (e[2] = d->cell_start[2]; e[2] < d->cell_end[2]; e[2]++) {
    for (e[1] = d->cell_start[1]; e[1] < d->cell_end[1]; e[1]++) {
      for (e[0] = d->cell_start[0]; e[0] < d->cell_end[0]; e[0]++) {
        CellOffsets(d, e, in, out);
        for (int q = 0; q < nt; q++) u[q] = in[q] < 0 ? 0.0 : x[in[q]];
        CellApply(d->dim, n, d->mass1d, d->stiff1d, d->coef_mass, d->coef_stiff, u, v);
        for (int q = 0; q < nt; q++)
          if (out[q] >= 0) y[out[q]] += v[q];
      }
    }
  }
}

void PatchworkTensorApplyRefFloat(const PatchworkTensorDesc *d, const float *x, float *y)
{
  const int n  = d->degree + 1;
  const int nt = CellNodes(d, 0) * CellNodes(d, 1) * CellNodes(d, 2);
  float     u[PW_MAX_CELL_NODES], v[PW_MAX_CELL_NODES], M[PW_MAX_N * PW_MAX_N], K[PW_MAX_N * PW_MAX_N], cs[3], cm;
  ptrdiff_t in[PW_MAX_CELL_NODES], out[PW_MAX_CELL_NODES];
  int       e[3];

  if (!CheckCells(d, 1)) return;
  /* Round the data once, so all arithmetic below is in float as on the device */
  for (int q = 0; q < n * n; q++) {
    M[q] = (float)d->mass1d[q];
    K[q] = (float)d->stiff1d[q];
  }
  cm = (float)d->coef_mass;
  for (int dir = 0; dir < 3; dir++) cs[dir] = dir < d->dim ? (float)d->coef_stiff[dir] : 0.0f;
  for (e[2] = d->cell_start[2]; e[2] < d->cell_end[2]; e[2]++) {
    for (e[1] = d->cell_start[1]; e[1] < d->cell_end[1]; e[1]++) {
      for (e[0] = d->cell_start[0]; e[0] < d->cell_end[0]; e[0]++) {
        CellOffsets(d, e, in, out);
        for (int q = 0; q < nt; q++) u[q] = in[q] < 0 ? 0.0f : x[in[q]];
        CellApplyFloat(d->dim, n, M, K, cm, cs, u, v);
        for (int q = 0; q < nt; q++)
          if (out[q] >= 0) y[out[q]] += v[q];
      }
    }
  }
}

/* diag(A_K) = cm m(x)m(x)m + cs0 m(x)m(x)s + cs1 m(x)s(x)m + cs2 s(x)m(x)m with m = diag(M), s = diag(K):
   the same for every cell, so it is formed once and scattered. */
void PatchworkTensorDiagonalRef(const PatchworkTensorDesc *d, double *y)
{
  const int n = d->degree + 1, nx = CellNodes(d, 0), ny = CellNodes(d, 1), nz = CellNodes(d, 2);
  const double cm = d->coef_mass, *cs = d->coef_stiff;
  double       m[PW_MAX_N], s[PW_MAX_N], diag[PW_MAX_CELL_NODES];
  ptrdiff_t    out[PW_MAX_CELL_NODES];
  int          e[3], q = 0;

  if (!CheckCells(d, 0)) return;
  for (int i = 0; i < n; i++) {
    m[i] = d->mass1d[i * n + i];
    s[i] = d->stiff1d[i * n + i];
  }
  for (int l = 0; l < nz; l++) {
    for (int j = 0; j < ny; j++) {
      for (int i = 0; i < nx; i++, q++) {
        if (d->dim == 2) diag[q] = cm * m[i] * m[j] + cs[0] * s[i] * m[j] + cs[1] * m[i] * s[j];
        else diag[q] = cm * m[i] * m[j] * m[l] + cs[0] * s[i] * m[j] * m[l] + cs[1] * m[i] * s[j] * m[l] + cs[2] * m[i] * m[j] * s[l];
      }
    }
  }
  for (e[2] = d->cell_start[2]; e[2] < d->cell_end[2]; e[2]++) {
    for (e[1] = d->cell_start[1]; e[1] < d->cell_end[1]; e[1]++) {
      for (e[0] = d->cell_start[0]; e[0] < d->cell_end[0]; e[0]++) {
        CellOffsets(d, e, NULL, out);
        for (q = 0; q < nx * ny * nz; q++)
          if (out[q] >= 0) y[out[q]] += diag[q];
      }
    }
  }
}

/* Identity rows of the eliminated nodes, over the whole out box (not only the cells' nodes) */
void PatchworkTensorBoundaryRef(const PatchworkTensorDesc *d, const double *x, double *y)
{
  int g[3];

  if (!d->dirichlet) return;
  for (g[2] = d->out_start[2]; g[2] < d->out_start[2] + d->out_size[2]; g[2]++) {
    for (g[1] = d->out_start[1]; g[1] < d->out_start[1] + d->out_size[1]; g[1]++) {
      for (g[0] = d->out_start[0]; g[0] < d->out_start[0] + d->out_size[0]; g[0]++) {
        ptrdiff_t o;

        if (!OnGlobalBoundary(d, g)) continue;
        o    = BoxIndex(d->out_start, d->out_size, g);
        y[o] = x ? x[o] : 1.0;
      }
    }
  }
}
