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
   and added straight into the output. Each algorithm is written once, in transfer_ref_impl.h, and
   instantiated here in double and in float. */
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

/* The algorithms once, instantiated in double and in float (every operation in float, as on the
   device): transfer_ref_impl.h is a template on PW_REAL, PW_FN(name) names the instance */
#define PW_REAL  double
#define PW_FN(n) n
#include "transfer_ref_impl.h"
#undef PW_REAL
#undef PW_FN

#define PW_REAL  float
#define PW_FN(n) n##Float
#include "transfer_ref_impl.h"
#undef PW_REAL
#undef PW_FN
