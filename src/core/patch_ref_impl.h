/* Precision template of the vertex-patch CPU reference (no include guard: patch_ref.c includes it
   once per real type, after its precision-free helpers PatchLoop, SetUpLoop, PatchOrigin,
   RowStart, ClosureRow, AssertSameBoxes and PatchMode). PW_REAL is the type of the data and of all
   arithmetic, PW_FN(name) the name of the instance; see contract_impl.h. */
#include "contract_impl.h"

/* The descriptor's 1D data and coefficients in PW_REAL, converted once per call: in float every
   operation below is then in float, as on the device; in double the copies are exact. */
typedef struct {
  PW_REAL Pm[PW_PATCH_MAX_NI * PW_PATCH_MAX_N], Ps[PW_PATCH_MAX_NI * PW_PATCH_MAX_N];
  PW_REAL S[PW_PATCH_MAX_NI * PW_PATCH_MAX_NI], ST[PW_PATCH_MAX_NI * PW_PATCH_MAX_NI], lam[PW_PATCH_MAX_NI];
  PW_REAL cm, cs[3], omega; /* cs[2] = 0 in 2D */
} PW_FN(PatchData);

static void PW_FN(PatchDataSetUp)(const PatchworkPatchDesc *d, const PatchLoop *p, PW_FN(PatchData) *D)
{
  for (int q = 0; q < p->ni * p->np; q++) {
    D->Pm[q] = (PW_REAL)d->patch_mass[q];
    D->Ps[q] = (PW_REAL)d->patch_stiff[q];
  }
  for (int i = 0; i < p->ni; i++) {
    D->lam[i] = (PW_REAL)d->eigval[i];
    for (int j = 0; j < p->ni; j++) {
      D->S[i * p->ni + j]  = (PW_REAL)d->eigvec[i * p->ni + j];
      D->ST[i * p->ni + j] = (PW_REAL)d->eigvec[j * p->ni + i];
    }
  }
  D->cm    = (PW_REAL)d->op.coef_mass;
  D->omega = (PW_REAL)d->omega;
  for (int dir = 0; dir < 3; dir++) D->cs[dir] = dir < p->dim ? (PW_REAL)d->op.coef_stiff[dir] : (PW_REAL)0;
}

/*
  r -= Abar X for the closure values X (in B0, overwritten); B1, B2 are work arrays. Factored so that
  three closure-sized arrays suffice and each 1D matrix is applied once per intermediate:
    2D: a = Pm_x X, b = cm a + cs0 Ps_x X;                  Abar X = Pm_y b + cs1 Ps_y a
    3D: a = Pm_x X, b = cm a + cs0 Ps_x X, w = Pm_y b + cs1 Ps_y a, c = Pm_y a;  Abar X = Pm_z w + cs2 Ps_z c
*/
static void PW_FN(PatchResidual)(const PatchLoop *p, const PW_FN(PatchData) *D, PW_REAL *B0, PW_REAL *B1, PW_REAL *B2, PW_REAL *r)
{
  const int      np = p->np, ni = p->ni, nx = p->dim == 2 ? np : np * np;
  const PW_REAL *Pm = D->Pm, *Ps = D->Ps, cm = D->cm, *cs = D->cs, one = 1;

  PW_FN(Contract)(ni, np, nx, 1, Pm, one, 0, B0, B1);
  PW_FN(Contract)(ni, np, nx, 1, Ps, one, 0, B0, B2);
  for (int q = 0; q < nx * ni; q++) B2[q] = cm * B1[q] + cs[0] * B2[q];
  if (p->dim == 2) {
    PW_FN(Contract)(ni, np, 1, ni, Pm, -one, 1, B2, r);
    PW_FN(Contract)(ni, np, 1, ni, Ps, -cs[1], 1, B1, r);
  } else {
    PW_FN(Contract)(ni, np, np, ni, Pm, one, 0, B2, B0);
    PW_FN(Contract)(ni, np, np, ni, Ps, cs[1], 1, B1, B0);
    PW_FN(Contract)(ni, np, np, ni, Pm, one, 0, B1, B2);
    PW_FN(Contract)(ni, np, 1, ni * ni, Pm, -one, 1, B0, r);
    PW_FN(Contract)(ni, np, 1, ni * ni, Ps, -cs[2], 1, B2, r);
  }
}

/* (S(x)S(x)S) diag(1/(cm + cs.lam)) (S(x)S(x)S)^T r with r in u (overwritten) and the work array
   v; returns the one of the two that holds the result */
static PW_REAL *PW_FN(FastDiagSolve)(const PatchLoop *p, const PW_FN(PatchData) *D, PW_REAL *u, PW_REAL *v)
{
  const int      ni = p->ni, nt = p->dim == 2 ? ni * ni : ni * ni * ni;
  const PW_REAL *lam = D->lam, cm = D->cm, *cs = D->cs, one = 1;
  PW_REAL       *w;
  int            q = 0, s = 1;

  for (int dir = 0; dir < p->dim; dir++, s *= ni) {
    PW_FN(Contract)(ni, ni, nt / (s * ni), s, D->ST, one, 0, u, v);
    w = u, u = v, v = w;
  }
  for (int l = 0; l < p->nint[2]; l++) {
    for (int j = 0; j < ni; j++) {
      const PW_REAL base = cm + cs[1] * lam[j] + (p->dim == 3 ? cs[2] * lam[l] : (PW_REAL)0);

      for (int i = 0; i < ni; i++, q++) u[q] /= base + cs[0] * lam[i];
    }
  }
  s = 1;
  for (int dir = 0; dir < p->dim; dir++, s *= ni) {
    PW_FN(Contract)(ni, ni, nt / (s * ni), s, D->S, one, 0, u, v);
    w = u, u = v, v = w;
  }
  return u;
}

/* R = b at the patch interior (in box), x fastest */
static void PW_FN(GatherInterior)(const PatchLoop *p, const PatchworkTensorDesc *op, const int g0[3], const PW_REAL *b, PW_REAL *R)
{
  for (int l = 0; l < p->nint[2]; l++)
    for (int j = 0; j < p->nint[1]; j++) {
      const ptrdiff_t o = RowStart(op->in_start, op->in_size, g0, 1, j + p->ioff[1], l + p->ioff[2]);

      for (int i = 0; i < p->nint[0]; i++) R[(l * p->nint[1] + j) * p->nint[0] + i] = b[o + i];
    }
}

/* X = x on the patch closure (in box), the Dirichlet-eliminated nodes as zero */
static void PW_FN(GatherClosure)(const PatchLoop *p, const PatchworkTensorDesc *op, const int g0[3], const PW_REAL *x, PW_REAL *X)
{
  for (int l = 0; l < p->n[2]; l++)
    for (int j = 0; j < p->n[1]; j++) {
      const ptrdiff_t o   = RowStart(op->in_start, op->in_size, g0, 0, j, l);
      PW_REAL        *row = X + (l * p->n[1] + j) * p->n[0];
      int             ilo, ihi;

      for (int i = 0; i < p->n[0]; i++) row[i] = 0;
      if (ClosureRow(p, op, g0, j, l, &ilo, &ihi))
        for (int i = ilo; i < ihi; i++) row[i] = x[o + i];
    }
}

/* y at the patch interior (out box) += omega t, or = t when !add */
static void PW_FN(ScatterInterior)(const PatchLoop *p, const PatchworkTensorDesc *op, const int g0[3], int add, PW_REAL omega, const PW_REAL *t, PW_REAL *y)
{
  for (int l = 0; l < p->nint[2]; l++)
    for (int j = 0; j < p->nint[1]; j++) {
      const ptrdiff_t o = RowStart(op->out_start, op->out_size, g0, 1, j + p->ioff[1], l + p->ioff[2]);
      const PW_REAL  *tr = t + (l * p->nint[1] + j) * p->nint[0];

      if (add)
        for (int i = 0; i < p->nint[0]; i++) y[o + i] += omega * tr[i];
      else
        for (int i = 0; i < p->nint[0]; i++) y[o + i] = tr[i];
    }
}

/* One pass over the patches of the color: the local residual R_j b - Abar_j Rbar_j x from the
   closure of x (not for the solve, whose residual is b itself), then the assignment of that
   residual (PATCH_RESIDUAL) or the damped local solve added (PATCH_SMOOTH, PATCH_SOLVE). */
static void PW_FN(PatchSweep)(const PatchworkPatchDesc *d, PatchMode mode, const PW_REAL *x, const PW_REAL *b, PW_REAL *y)
{
  const PatchworkTensorDesc *op = &d->op;
  PW_REAL         B0[PW_PATCH_MAX_NODES], B1[PW_PATCH_MAX_NODES], B2[PW_PATCH_MAX_NODES];
  PW_REAL         R[PW_PATCH_MAX_NI * PW_PATCH_MAX_NI * PW_PATCH_MAX_NI];
  PW_FN(PatchData) D;
  PatchLoop       p;
  int             v[3], g0[3];

  if (!SetUpLoop(d, mode != PATCH_SOLVE, &p)) return;
  PW_FN(PatchDataSetUp)(d, &p, &D);
  for (v[2] = p.vfirst[2]; v[2] <= p.vlast[2]; v[2] += 2) {
    for (v[1] = p.vfirst[1]; v[1] <= p.vlast[1]; v[1] += 2) {
      for (v[0] = p.vfirst[0]; v[0] <= p.vlast[0]; v[0] += 2) {
        PatchOrigin(&p, v, g0);
        PW_FN(GatherInterior)(&p, op, g0, b, R);
        if (mode != PATCH_SOLVE) {
          /* the whole closure is read before the interior is written: x may be y (smooth) */
          PW_FN(GatherClosure)(&p, op, g0, x, B0);
          PW_FN(PatchResidual)(&p, &D, B0, B1, B2, R);
        }
        if (mode == PATCH_RESIDUAL) PW_FN(ScatterInterior)(&p, op, g0, 0, D.omega, R, y);
        else PW_FN(ScatterInterior)(&p, op, g0, 1, D.omega, PW_FN(FastDiagSolve)(&p, &D, R, B0), y);
      }
    }
  }
}

void PW_FN(PatchworkPatchSmoothRef)(const PatchworkPatchDesc *d, const PW_REAL *x, const PW_REAL *b, PW_REAL *y)
{
  AssertSameBoxes(d, x, y);
  PW_FN(PatchSweep)(d, PATCH_SMOOTH, x, b, y);
}

void PW_FN(PatchworkPatchSolveRef)(const PatchworkPatchDesc *d, const PW_REAL *r, PW_REAL *y)
{
  AssertSameBoxes(d, r, y);
  PW_FN(PatchSweep)(d, PATCH_SOLVE, NULL, r, y);
}

void PW_FN(PatchworkPatchResidualRef)(const PatchworkPatchDesc *d, const PW_REAL *x, const PW_REAL *b, PW_REAL *y)
{
  /* patches of one color overlap in their closures: writing y while x or b is still to be read by
     a later patch would feed residuals into residuals */
  assert(y != x && y != b);
  PW_FN(PatchSweep)(d, PATCH_RESIDUAL, x, b, y);
}
