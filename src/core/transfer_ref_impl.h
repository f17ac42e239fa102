/* Precision template of the Q_k transfer CPU reference (no include guard: transfer_ref.c includes
   it once per real type, after its precision-free helpers CheckCells, CellOffsets and
   PW_MAX_CELL_NODES). PW_REAL is the type of the data and of all arithmetic, PW_FN(name) the name
   of the instance; see contract_impl.h. */
#include "contract_impl.h"

/* u <- (A[a_z](x)A[a_y](x)A[a_x]) u, one 1D matrix per direction chosen by the child index; v is
   work; returns the array holding the result */
static PW_REAL *PW_FN(ChildApply)(int dim, int n, PW_REAL A[2][PW_MAX_N * PW_MAX_N], const int a[3], PW_REAL *u, PW_REAL *v)
{
  const int ntot = dim == 2 ? n * n : n * n * n;
  PW_REAL  *w;
  int       s = 1;

  for (int dir = 0; dir < dim; dir++, s *= n) {
    PW_FN(ContractSquare)(n, ntot, s, A[a[dir]], u, v);
    w = u, u = v, v = w;
  }
  return u;
}

/* Shared loop of prolong (transpose = 0: coarse -> fine) and restrict (transpose = 1: fine -> coarse).
   The weights W are powers of 1/2: exact in any precision. */
static void PW_FN(Transfer)(const PatchworkTransferDesc *d, int transpose, const PW_REAL *x, PW_REAL *y)
{
  const int n = d->degree + 1, nt = d->dim == 2 ? n * n : n * n * n;
  PW_REAL   A[2][PW_MAX_N * PW_MAX_N], u[PW_MAX_CELL_NODES], v[PW_MAX_CELL_NODES], *res;
  double    wt[PW_MAX_CELL_NODES];
  ptrdiff_t fine[PW_MAX_CELL_NODES], coarse[PW_MAX_CELL_NODES];
  int       f[3], a[3];

  if (!CheckCells(d)) return;
  /* interp or its transpose, converted once */
  for (int c = 0; c < 2; c++)
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) A[c][i * n + j] = (PW_REAL)(transpose ? d->interp[c][j * n + i] : d->interp[c][i * n + j]);
  for (f[2] = d->cell_start[2]; f[2] < d->cell_end[2]; f[2]++) {
    for (f[1] = d->cell_start[1]; f[1] < d->cell_end[1]; f[1]++) {
      for (f[0] = d->cell_start[0]; f[0] < d->cell_end[0]; f[0]++) {
        for (int dir = 0; dir < 3; dir++) a[dir] = f[dir] % 2;
        CellOffsets(d, f, fine, wt, coarse);
        if (!transpose) {
          for (int q = 0; q < nt; q++) u[q] = coarse[q] < 0 ? (PW_REAL)0 : x[coarse[q]];
          res = PW_FN(ChildApply)(d->dim, n, A, a, u, v);
          for (int q = 0; q < nt; q++)
            if (fine[q] >= 0) y[fine[q]] += (PW_REAL)wt[q] * res[q];
        } else {
          for (int q = 0; q < nt; q++) u[q] = fine[q] < 0 ? (PW_REAL)0 : (PW_REAL)wt[q] * x[fine[q]];
          res = PW_FN(ChildApply)(d->dim, n, A, a, u, v);
          for (int q = 0; q < nt; q++)
            if (coarse[q] >= 0) y[coarse[q]] += res[q];
        }
      }
    }
  }
}

void PW_FN(PatchworkProlongRef)(const PatchworkTransferDesc *d, const PW_REAL *coarse, PW_REAL *fine)
{
  PW_FN(Transfer)(d, 0, coarse, fine);
}

void PW_FN(PatchworkRestrictRef)(const PatchworkTransferDesc *d, const PW_REAL *fine, PW_REAL *coarse)
{
  PW_FN(Transfer)(d, 1, fine, coarse);
}
