/* CPU reference of the Q_k transfer between a mesh and its refinement by two in every direction
   (contract: include/patchwork/patch_kernel.h).

   Fine cell f lies in coarse cell c = f/2 as child a = f mod 2 (per direction). On it the coarse
   function restricted to the fine cell's nodes is (I[a_z](x)I[a_y](x)I[a_x]) u_c, I[a] = interp[a]
   (n x n), u_c the coarse cell's nodal values; the fine node (k f_d + i) receives it weighted by
   W = prod_d (1/2 where the node is shared by two fine cells in direction d), so that the sum over
   all fine cells is the global interpolation P exactly (a node on a fine face between two cells
   gets two equal halves). Restriction runs the same steps transposed. Sum factorization:
   O(d n^(d+1)) per fine cell. 2D: the z direction has one node and is skipped.

   Assumptions, checked with assert(): fine_nodes[d] = 2 k N_d + 1; the fine cell range lies in
   [0, 2 N_d); the fine box holds the nodes of those fine cells and the coarse box those of their
   coarse parents; for d >= dim everything is the single node 0. Serial: cells are visited in order
   and added straight into the output. */
#include <assert.h>
#include <stddef.h>
#include <string.h>
#include <patchwork/basis1d.h>
#include <patchwork/patch_kernel.h>
#include "coreimpl.h"

#define PW_MAX_CELL_NODES (PW_MAX_N * PW_MAX_N * PW_MAX_N)

/*
  PatchworkTransferSetUp1D - interp[a][i n + j] = phi_j((a + xi_i)/2) for the Lagrange basis phi on
  the n = degree+1 Gauss-Lobatto nodes xi of [0,1]: the coarse basis at the nodes of child a. Only
  interp is written (the caller sets degree and the rest); unused entries are zeroed.
*/
int PatchworkTransferSetUp1D(int degree, PatchworkTransferDesc *d)
{
  const int n = degree + 1;
  double    xi[PW_MAX_N], w[PW_MAX_N];

  if (degree < 1 || degree > PW_MAX_DEGREE) return 1;
  if (PatchworkGaussLobatto(n, xi, w)) return 2;
  memset(d->interp, 0, sizeof(d->interp));
  for (int a = 0; a < 2; a++)
    for (int i = 0; i < n; i++) PatchworkLagrangeEval(n, xi, 0.5 * (a + xi[i]), &d->interp[a][i * n], NULL);
  return 0;
}

/* Validate the descriptor; returns 0 when the cell range is empty */
static int CheckCells(const PatchworkTransferDesc *d)
{
  const int k = d->degree;
  int       flo[3], fhi[3], clo[3], chi[3];

  assert(d->dim == 2 || d->dim == 3);
  assert(k >= 1 && k <= PW_MAX_DEGREE);
  for (int dir = 0; dir < 3; dir++) {
    if (dir < d->dim) {
      assert(d->fine_nodes[dir] >= 2 * k + 1 && (d->fine_nodes[dir] - 1) % (2 * k) == 0);
      assert(0 <= d->cell_start[dir] && d->cell_end[dir] <= (d->fine_nodes[dir] - 1) / k);
    } else assert(d->fine_nodes[dir] == 1 && d->cell_start[dir] == 0 && d->cell_end[dir] == 1);
    if (d->cell_end[dir] <= d->cell_start[dir]) return 0;
    flo[dir] = dir < d->dim ? k * d->cell_start[dir] : 0;
    fhi[dir] = dir < d->dim ? k * d->cell_end[dir] : 0;
    clo[dir] = dir < d->dim ? k * (d->cell_start[dir] / 2) : 0;
    chi[dir] = dir < d->dim ? k * ((d->cell_end[dir] - 1) / 2 + 1) : 0;
  }
  AssertBoxContains(d->fine_start, d->fine_size, flo, fhi);
  AssertBoxContains(d->coarse_start, d->coarse_size, clo, chi);
  return 1;
}

/* Node offsets of fine cell f in the fine box and of its coarse parent in the coarse box, and the
   weight W of each fine node; -1 marks a node eliminated by the Dirichlet condition (read as zero,
   never written) */
static void CellOffsets(const PatchworkTransferDesc *d, const int f[3], ptrdiff_t *fine, double *wt, ptrdiff_t *coarse)
{
  const int k = d->degree, n = k + 1, nz = d->dim == 3 ? n : 1;
  int       gf[3], gc[3], q = 0;

  for (int l = 0; l < nz; l++) {
    for (int j = 0; j < n; j++) {
      for (int i = 0; i < n; i++, q++) {
        const int loc[3] = {i, j, l};
        int       fb = 0, cb = 0;

        wt[q] = 1.0;
        for (int dir = 0; dir < 3; dir++) {
          const int cnodes = (d->fine_nodes[dir] - 1) / 2 + 1;

          if (dir >= d->dim) {
            gf[dir] = gc[dir] = 0;
            continue;
          }
          gf[dir] = k * f[dir] + loc[dir];
          gc[dir] = k * (f[dir] / 2) + loc[dir];
          if (gf[dir] == 0 || gf[dir] == d->fine_nodes[dir] - 1) fb = 1;
          else if (gf[dir] % k == 0) wt[q] *= 0.5; /* on a fine face shared by two fine cells */
          if (gc[dir] == 0 || gc[dir] == cnodes - 1) cb = 1;
        }
        fine[q]   = d->dirichlet && fb ? -1 : BoxIndex(d->fine_start, d->fine_size, gf);
        coarse[q] = d->dirichlet && cb ? -1 : BoxIndex(d->coarse_start, d->coarse_size, gc);
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

/* u <- (A[a_z](x)A[a_y](x)A[a_x]) u, one 1D matrix per direction chosen by the child index; v is
   work; returns the array holding the result */
static double *ChildApply(int dim, int n, const double *A[2], const int a[3], double *u, double *v)
{
  const int ntot = dim == 2 ? n * n : n * n * n;
  double   *w;
  int       s = 1;

  for (int dir = 0; dir < dim; dir++, s *= n) {
    Contract(n, ntot, s, A[a[dir]], u, v);
    w = u, u = v, v = w;
  }
  return u;
}

/* Shared loop of prolong (transpose = 0: coarse -> fine) and restrict (transpose = 1: fine -> coarse) */
static void Transfer(const PatchworkTransferDesc *d, int transpose, const double *x, double *y)
{
  const int n = d->degree + 1, nt = d->dim == 2 ? n * n : n * n * n;
  double    IT[2][PW_MAX_N * PW_MAX_N], u[PW_MAX_CELL_NODES], v[PW_MAX_CELL_NODES], wt[PW_MAX_CELL_NODES], *res;
  ptrdiff_t fine[PW_MAX_CELL_NODES], coarse[PW_MAX_CELL_NODES];
  const double *A[2];
  int       f[3], a[3];

  if (!CheckCells(d)) return;
  for (int c = 0; c < 2; c++)
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) IT[c][i * n + j] = d->interp[c][j * n + i];
  A[0] = transpose ? IT[0] : d->interp[0];
  A[1] = transpose ? IT[1] : d->interp[1];
  for (f[2] = d->cell_start[2]; f[2] < d->cell_end[2]; f[2]++) {
    for (f[1] = d->cell_start[1]; f[1] < d->cell_end[1]; f[1]++) {
      for (f[0] = d->cell_start[0]; f[0] < d->cell_end[0]; f[0]++) {
        for (int dir = 0; dir < 3; dir++) a[dir] = f[dir] % 2;
        CellOffsets(d, f, fine, wt, coarse);
        if (!transpose) {
          for (int q = 0; q < nt; q++) u[q] = coarse[q] < 0 ? 0.0 : x[coarse[q]];
          res = ChildApply(d->dim, n, A, a, u, v);
          for (int q = 0; q < nt; q++)
            if (fine[q] >= 0) y[fine[q]] += wt[q] * res[q];
        } else {
          for (int q = 0; q < nt; q++) u[q] = fine[q] < 0 ? 0.0 : wt[q] * x[fine[q]];
          res = ChildApply(d->dim, n, A, a, u, v);
          for (int q = 0; q < nt; q++)
            if (coarse[q] >= 0) y[coarse[q]] += res[q];
        }
      }
    }
  }
}

void PatchworkProlongRef(const PatchworkTransferDesc *d, const double *coarse, double *fine)
{
  Transfer(d, 0, coarse, fine);
}

void PatchworkRestrictRef(const PatchworkTransferDesc *d, const double *fine, double *coarse)
{
  Transfer(d, 1, fine, coarse);
}
