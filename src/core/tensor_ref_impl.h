/* Precision template of the tensor-product operator's CPU reference (no include guard:
   tensor_ref.c includes it once per real type, after its precision-free helpers CellNodes,
   CheckCells, OutBoxSize, CellOffsets and PW_MAX_CELL_NODES). PW_REAL is the type of the data and of all
   arithmetic, PW_FN(name) the name of the instance; see contract_impl.h. */
#include "contract_impl.h"

/* v = A_K u by sum factorization; u is overwritten (used as workspace) */
static void PW_FN(CellApply)(int dim, int n, const PW_REAL *M, const PW_REAL *K, PW_REAL cm, const PW_REAL cs[3], PW_REAL *u, PW_REAL *v)
{
  PW_REAL a[PW_MAX_CELL_NODES], b[PW_MAX_CELL_NODES], c[PW_MAX_CELL_NODES], t[PW_MAX_CELL_NODES];

  if (dim == 2) {
    const int nt = n * n;

    /* v = M_y (cm M_x u + cs0 K_x u) + cs1 K_y M_x u */
    PW_FN(ContractSquare)(n, nt, 1, M, u, a);
    PW_FN(ContractSquare)(n, nt, 1, K, u, b);
    for (int q = 0; q < nt; q++) t[q] = cm * a[q] + cs[0] * b[q];
    PW_FN(ContractSquare)(n, nt, n, M, t, v);
    PW_FN(ContractSquare)(n, nt, n, K, a, t);
    for (int q = 0; q < nt; q++) v[q] += cs[1] * t[q];
  } else {
    const int nt = n * n * n;

    /* a = M_x u, b = K_x u; c = M_y a, u <- cs1 K_y a + cs0 M_y b; v = M_z (cm c + u) + cs2 K_z c */
    PW_FN(ContractSquare)(n, nt, 1, M, u, a);
    PW_FN(ContractSquare)(n, nt, 1, K, u, b);
    PW_FN(ContractSquare)(n, nt, n, M, a, c);
    PW_FN(ContractSquare)(n, nt, n, K, a, t);
    for (int q = 0; q < nt; q++) u[q] = cs[1] * t[q];
    PW_FN(ContractSquare)(n, nt, n, M, b, t);
    for (int q = 0; q < nt; q++) u[q] = cm * c[q] + (u[q] + cs[0] * t[q]);
    PW_FN(ContractSquare)(n, nt, n * n, M, u, v);
    PW_FN(ContractSquare)(n, nt, n * n, K, c, t);
    for (int q = 0; q < nt; q++) v[q] += cs[2] * t[q];
  }
}

void PW_FN(PatchworkTensorApplyRef)(const PatchworkTensorDesc *d, const PW_REAL *x, PW_REAL *y)
{
  const int n  = d->degree + 1;
  const int nt = CellNodes(d, 0) * CellNodes(d, 1) * CellNodes(d, 2);
  PW_REAL   u[PW_MAX_CELL_NODES], v[PW_MAX_CELL_NODES], M[PW_MAX_N * PW_MAX_N], K[PW_MAX_N * PW_MAX_N], cs[3], cm;
  ptrdiff_t in[PW_MAX_CELL_NODES], out[PW_MAX_CELL_NODES];
  int       e[3];

  if (d->overwrite)
    for (ptrdiff_t i = 0; i < OutBoxSize(d); i++) y[i] = 0;
  if (!CheckCells(d, 1)) return;
  /* the 1D data converted once: in float every operation below is in float, as on the device */
  for (int q = 0; q < n * n; q++) {
    M[q] = (PW_REAL)d->mass1d[q];
    K[q] = (PW_REAL)d->stiff1d[q];
  }
  cm = (PW_REAL)d->coef_mass;
  for (int dir = 0; dir < 3; dir++) cs[dir] = dir < d->dim ? (PW_REAL)d->coef_stiff[dir] : (PW_REAL)0;
  for (e[2] = d->cell_start[2]; e[2] < d->cell_end[2]; e[2]++) {
    for (e[1] = d->cell_start[1]; e[1] < d->cell_end[1]; e[1]++) {
      for (e[0] = d->cell_start[0]; e[0] < d->cell_end[0]; e[0]++) {
        CellOffsets(d, e, in, out);
        for (int q = 0; q < nt; q++) u[q] = in[q] < 0 ? (PW_REAL)0 : x[in[q]];
        PW_FN(CellApply)(d->dim, n, M, K, cm, cs, u, v);
        for (int q = 0; q < nt; q++)
          if (out[q] >= 0) y[out[q]] += v[q];
      }
    }
  }
}
