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
   The code is serial: cells are visited in order and added straight into y. The apply is written
   once, in tensor_ref_impl.h, and instantiated here in double and in float. */
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

/* Entries of the out array (d->overwrite sets all of them, also those no cell reaches) */
static ptrdiff_t OutBoxSize(const PatchworkTensorDesc *d)
{
  return (ptrdiff_t)d->out_size[0] * d->out_size[1] * d->out_size[2];
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

/* The operator once, instantiated in double and in float (every operation in float, as on the
   device): tensor_ref_impl.h is a template on PW_REAL, PW_FN(name) names the instance */
#define PW_REAL  double
#define PW_FN(n) n
#include "tensor_ref_impl.h"
#undef PW_REAL
#undef PW_FN

#define PW_REAL  float
#define PW_FN(n) n##Float
#include "tensor_ref_impl.h"
#undef PW_REAL
#undef PW_FN

/* diag(A_K) = cm m(x)m(x)m + cs0 m(x)m(x)s + cs1 m(x)s(x)m + cs2 s(x)m(x)m with m = diag(M), s = diag(K):
   the same for every cell, so it is formed once and scattered. */
void PatchworkTensorDiagonalRef(const PatchworkTensorDesc *d, double *y)
{
  const int n = d->degree + 1, nx = CellNodes(d, 0), ny = CellNodes(d, 1), nz = CellNodes(d, 2);
  const double cm = d->coef_mass, *cs = d->coef_stiff;
  double       m[PW_MAX_N], s[PW_MAX_N], diag[PW_MAX_CELL_NODES];
  ptrdiff_t    out[PW_MAX_CELL_NODES];
  int          e[3], q = 0;

  if (d->overwrite)
    for (ptrdiff_t i = 0; i < OutBoxSize(d); i++) y[i] = 0;
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
