/* CPU reference of the vertex-patch smoother (contract: include/patchwork/patch_kernel.h).

   Per patch, with N = 2k+1 nodes and NI = 2k-1 interior nodes per direction (x fastest, local
   node (i,j,l) of patch v is global node (k(v_x-1)+i, k(v_y-1)+j, k(v_z-1)+l)):
     Abar = cm Pm(x)Pm(x)Pm + cs0 Pm_z(x)Pm_y(x)Ps_x + cs1 Pm(x)Ps(x)Pm + cs2 Ps(x)Pm(x)Pm   (NI^d x N^d)
     A^{-1} = (S(x)S(x)S) diag(1/(cm + cs0 lam_i + cs1 lam_j + cs2 lam_l)) (S(x)S(x)S)^T     (NI^d x NI^d)
   with Pm, Ps = patch_mass, patch_stiff (NI x N) and S, lam the fast-diagonalization data; 2D drops
   the z factors and cs2 is not read. Both are applied by sum factorization, O(d N^(d+1)) per patch.

   Assumptions, checked with assert(): 1 <= vertex_start, vertex_end <= N_d (interior vertices only);
   for d >= dim the vertex range is [0,1); the in box holds the N^d nodes (the solve: the NI^d
   interior nodes) and the out box the NI^d interior nodes of every patch of the color in the range.
   x may alias y (then the in and out boxes must be the same): a patch's nodes are all read before
   its interior is written, and a patch of one color never reads another's interior, so the in-place
   update is the multiplicative one. The code is serial: patches are visited in order.

   Work arrays live on the stack: three tensors of N^d entries and one of NI^d, about 280 KB in 3D
   at k = 10 (half in float). */
#include <assert.h>
#include <stddef.h>
#include <patchwork/patch_kernel.h>
#include "coreimpl.h"

#define PW_PATCH_MAX_NODES (PW_PATCH_MAX_N * PW_PATCH_MAX_N * PW_PATCH_MAX_N)

/* The patches of one call: per direction the first and last vertex of the color in the range and
   the patch sizes */
typedef struct {
  int dim, k, np, ni; /* degree, nodes and interior nodes of a patch per used direction */
  int vfirst[3], vlast[3];
  int n[3], nint[3];  /* per direction: np/ni for a used direction, 1 for the unused z in 2D */
  int ioff[3];        /* local index of the first interior node: 1, 0 for the unused z in 2D */
} PatchLoop;

/* Validate the descriptor and find the patches of the color; returns 0 when there are none. The
   in box must hold the patches' closures (read_closure) or only their interiors (the solve). */
static int SetUpLoop(const PatchworkPatchDesc *d, int read_closure, PatchLoop *p)
{
  const PatchworkTensorDesc *op = &d->op;
  const int                  k  = op->degree;
  int                        lo[3], hi[3], ilo[3], ihi[3];

  assert(op->dim == 2 || op->dim == 3);
  assert(k >= 1 && k <= PW_MAX_DEGREE);
  assert(d->color >= 0 && d->color < (1 << op->dim));
  p->dim = op->dim;
  p->k   = k;
  p->np  = 2 * k + 1;
  p->ni  = 2 * k - 1;
  for (int dir = 0; dir < 3; dir++) {
    if (dir < op->dim) {
      const int bit = (d->color >> dir) & 1;

      assert(op->nodes[dir] >= k + 1 && (op->nodes[dir] - 1) % k == 0);
      assert(d->vertex_start[dir] >= 1 && d->vertex_end[dir] <= (op->nodes[dir] - 1) / k);
      p->vfirst[dir] = d->vertex_start[dir] + ((d->vertex_start[dir] & 1) != bit);
      p->vlast[dir]  = d->vertex_end[dir] - 1 - (((d->vertex_end[dir] - 1) & 1) != bit);
      p->n[dir]      = p->np;
      p->nint[dir]   = p->ni;
      p->ioff[dir]   = 1;
      lo[dir]        = k * (p->vfirst[dir] - 1);
      hi[dir]        = k * (p->vlast[dir] + 1);
      ilo[dir]       = lo[dir] + 1;
      ihi[dir]       = hi[dir] - 1;
    } else {
      assert(d->vertex_start[dir] == 0 && d->vertex_end[dir] == 1);
      p->vfirst[dir] = p->vlast[dir] = 0;
      p->n[dir] = p->nint[dir] = 1;
      p->ioff[dir]                = 0;
      lo[dir] = hi[dir] = ilo[dir] = ihi[dir] = 0;
    }
    if (p->vlast[dir] < p->vfirst[dir]) return 0;
  }
  if (read_closure) AssertBoxContains(op->in_start, op->in_size, lo, hi);
  else AssertBoxContains(op->in_start, op->in_size, ilo, ihi);
  AssertBoxContains(op->out_start, op->out_size, ilo, ihi);
  return 1;
}

/* First global node of the patch of vertex v (its local node (0,0,0)) */
static void PatchOrigin(const PatchLoop *p, const int v[3], int g0[3])
{
  for (int dir = 0; dir < 3; dir++) g0[dir] = dir < p->dim ? p->k * (v[dir] - 1) : 0;
}

/* Box offset of local node (i0, j, l) of the patch at g0: rows in x are contiguous in a box */
static ptrdiff_t RowStart(const int start[3], const int size[3], const int g0[3], int i0, int j, int l)
{
  const int g[3] = {g0[0] + i0, g0[1] + j, g0[2] + l};

  return BoxIndex(start, size, g);
}

/* Dirichlet elimination in the closure: the whole row (j,l) when its y or z node is on the global
   boundary; otherwise [ilo, ihi) is the range of the row that is not eliminated */
static int ClosureRow(const PatchLoop *p, const PatchworkTensorDesc *op, const int g0[3], int j, int l, int *ilo, int *ihi)
{
  *ilo = 0;
  *ihi = p->n[0];
  if (!op->dirichlet) return 1;
  if (g0[1] + j == 0 || g0[1] + j == op->nodes[1] - 1) return 0;
  if (p->dim == 3 && (g0[2] + l == 0 || g0[2] + l == op->nodes[2] - 1)) return 0;
  if (g0[0] == 0) *ilo = 1;
  if (g0[0] + p->n[0] - 1 == op->nodes[0] - 1) *ihi = p->n[0] - 1;
  return 1;
}

/* ---------------------------------------------------------------------------------------------
   Double precision. The float section below repeats it with float everywhere. */

/* Contraction along one direction of a tensor of shape [nout][p][s] into one of shape [nout][m][s]:
   v[(o m + i) s + r] (+)= alpha sum_q A[i p + q] u[(o p + q) s + r], A row major m x p; add
   selects += (accumulate into v) over =. (Reordering the loops to run innermost over the
   contiguous r measured no faster at these sizes with -O2.) */
static void Contract(int m, int p, int nout, int s, const double *A, double alpha, int add, const double *u, double *v)
{
  for (int o = 0; o < nout; o++) {
    const double *uo = u + (ptrdiff_t)o * p * s;
    double       *vo = v + (ptrdiff_t)o * m * s;

    for (int i = 0; i < m; i++) {
      const double *Ai = A + i * p;

      for (int r = 0; r < s; r++) {
        double sum = 0.0;

        for (int q = 0; q < p; q++) sum += Ai[q] * uo[q * s + r];
        if (add) vo[i * s + r] += alpha * sum;
        else vo[i * s + r] = alpha * sum;
      }
    }
  }
}

/*
  r -= Abar X for the closure values X (in B0, overwritten); B1, B2 are work arrays. Factored so that
  three closure-sized arrays suffice and each 1D matrix is applied once per intermediate:
    2D: a = Pm_x X, b = cm a + cs0 Ps_x X;                  Abar X = Pm_y b + cs1 Ps_y a
    3D: a = Pm_x X, b = cm a + cs0 Ps_x X, w = Pm_y b + cs1 Ps_y a, c = Pm_y a;  Abar X = Pm_z w + cs2 Ps_z c
*/
static void PatchResidual(const PatchLoop *p, const double *Pm, const double *Ps, double cm, const double cs[3], double *B0, double *B1, double *B2, double *r)
{
  const int np = p->np, ni = p->ni, nx = p->dim == 2 ? np : np * np;

  Contract(ni, np, nx, 1, Pm, 1.0, 0, B0, B1);
  Contract(ni, np, nx, 1, Ps, 1.0, 0, B0, B2);
  for (int q = 0; q < nx * ni; q++) B2[q] = cm * B1[q] + cs[0] * B2[q];
  if (p->dim == 2) {
    Contract(ni, np, 1, ni, Pm, -1.0, 1, B2, r);
    Contract(ni, np, 1, ni, Ps, -cs[1], 1, B1, r);
  } else {
    Contract(ni, np, np, ni, Pm, 1.0, 0, B2, B0);
    Contract(ni, np, np, ni, Ps, cs[1], 1, B1, B0);
    Contract(ni, np, np, ni, Pm, 1.0, 0, B1, B2);
    Contract(ni, np, 1, ni * ni, Pm, -1.0, 1, B0, r);
    Contract(ni, np, 1, ni * ni, Ps, -cs[2], 1, B2, r);
  }
}

/* (S(x)S(x)S) diag(1/(cm + cs.lam)) (S(x)S(x)S)^T r with r in u (overwritten) and the work array
   v; returns the one of the two that holds the result */
static double *FastDiagSolve(const PatchLoop *p, const double *S, const double *ST, const double *lam, double cm, const double cs[3], double *u, double *v)
{
  const int ni = p->ni, nt = p->dim == 2 ? ni * ni : ni * ni * ni;
  double   *w;
  int       q = 0, s = 1;

  for (int dir = 0; dir < p->dim; dir++, s *= ni) {
    Contract(ni, ni, nt / (s * ni), s, ST, 1.0, 0, u, v);
    w = u, u = v, v = w;
  }
  for (int l = 0; l < p->nint[2]; l++) {
    for (int j = 0; j < ni; j++) {
      const double base = cm + cs[1] * lam[j] + (p->dim == 3 ? cs[2] * lam[l] : 0.0);

      for (int i = 0; i < ni; i++, q++) u[q] /= base + cs[0] * lam[i];
    }
  }
  s = 1;
  for (int dir = 0; dir < p->dim; dir++, s *= ni) {
    Contract(ni, ni, nt / (s * ni), s, S, 1.0, 0, u, v);
    w = u, u = v, v = w;
  }
  return u;
}

/* The smoother (x != NULL: local residual from the patch closure of x) and the solve (x == NULL:
   the residual is b itself at the patch interior) */
static void PatchSweep(const PatchworkPatchDesc *d, const double *x, const double *b, double *y)
{
  const PatchworkTensorDesc *op = &d->op;
  double    B0[PW_PATCH_MAX_NODES], B1[PW_PATCH_MAX_NODES], B2[PW_PATCH_MAX_NODES];
  double    R[PW_PATCH_MAX_NI * PW_PATCH_MAX_NI * PW_PATCH_MAX_NI], ST[PW_PATCH_MAX_NI * PW_PATCH_MAX_NI];
  PatchLoop p;
  int       v[3], g0[3];

  if (!SetUpLoop(d, x != NULL, &p)) return;
  for (int i = 0; i < p.ni; i++)
    for (int j = 0; j < p.ni; j++) ST[i * p.ni + j] = d->eigvec[j * p.ni + i];
  for (v[2] = p.vfirst[2]; v[2] <= p.vlast[2]; v[2] += 2) {
    for (v[1] = p.vfirst[1]; v[1] <= p.vlast[1]; v[1] += 2) {
      for (v[0] = p.vfirst[0]; v[0] <= p.vlast[0]; v[0] += 2) {
        const double *t;

        PatchOrigin(&p, v, g0);
        for (int l = 0; l < p.nint[2]; l++)
          for (int j = 0; j < p.nint[1]; j++) {
            const ptrdiff_t o = RowStart(op->in_start, op->in_size, g0, 1, j + p.ioff[1], l + p.ioff[2]);

            for (int i = 0; i < p.nint[0]; i++) R[(l * p.nint[1] + j) * p.nint[0] + i] = b[o + i];
          }
        if (x) {
          /* the whole closure is read before the interior is written: x may be y */
          for (int l = 0; l < p.n[2]; l++)
            for (int j = 0; j < p.n[1]; j++) {
              const ptrdiff_t o   = RowStart(op->in_start, op->in_size, g0, 0, j, l);
              double         *row = B0 + (l * p.n[1] + j) * p.n[0];
              int             ilo, ihi;

              for (int i = 0; i < p.n[0]; i++) row[i] = 0.0;
              if (ClosureRow(&p, op, g0, j, l, &ilo, &ihi))
                for (int i = ilo; i < ihi; i++) row[i] = x[o + i];
            }
          PatchResidual(&p, d->patch_mass, d->patch_stiff, op->coef_mass, op->coef_stiff, B0, B1, B2, R);
        }
        t = FastDiagSolve(&p, d->eigvec, ST, d->eigval, op->coef_mass, op->coef_stiff, R, B0);
        for (int l = 0; l < p.nint[2]; l++)
          for (int j = 0; j < p.nint[1]; j++) {
            const ptrdiff_t o = RowStart(op->out_start, op->out_size, g0, 1, j + p.ioff[1], l + p.ioff[2]);

            for (int i = 0; i < p.nint[0]; i++) y[o + i] += d->omega * t[(l * p.nint[1] + j) * p.nint[0] + i];
          }
      }
    }
  }
}

/* In place, one array is read through the in box and written through the out box: they must agree */
static void AssertSameBoxes(const PatchworkPatchDesc *d, const void *x, const void *y)
{
  for (int dir = 0; dir < 3; dir++) assert(x != y || (d->op.in_start[dir] == d->op.out_start[dir] && d->op.in_size[dir] == d->op.out_size[dir]));
  (void)d;
  (void)x;
  (void)y;
}

void PatchworkPatchSmoothRef(const PatchworkPatchDesc *d, const double *x, const double *b, double *y)
{
  AssertSameBoxes(d, x, y);
  PatchSweep(d, x, b, y);
}

void PatchworkPatchSolveRef(const PatchworkPatchDesc *d, const double *r, double *y)
{
  AssertSameBoxes(d, r, y);
  PatchSweep(d, NULL, r, y);
}

/* ---------------------------------------------------------------------------------------------
   Single precision: the same steps with every operation in float, as on the device */

static void ContractFloat(int m, int p, int nout, int s, const float *A, float alpha, int add, const float *u, float *v)
{
  for (int o = 0; o < nout; o++) {
    const float *uo = u + (ptrdiff_t)o * p * s;
    float       *vo = v + (ptrdiff_t)o * m * s;

    for (int i = 0; i < m; i++) {
      const float *Ai = A + i * p;

      for (int r = 0; r < s; r++) {
        float sum = 0.0f;

        for (int q = 0; q < p; q++) sum += Ai[q] * uo[q * s + r];
        if (add) vo[i * s + r] += alpha * sum;
        else vo[i * s + r] = alpha * sum;
      }
    }
  }
}

static void PatchResidualFloat(const PatchLoop *p, const float *Pm, const float *Ps, float cm, const float cs[3], float *B0, float *B1, float *B2, float *r)
{
  const int np = p->np, ni = p->ni, nx = p->dim == 2 ? np : np * np;

  ContractFloat(ni, np, nx, 1, Pm, 1.0f, 0, B0, B1);
  ContractFloat(ni, np, nx, 1, Ps, 1.0f, 0, B0, B2);
  for (int q = 0; q < nx * ni; q++) B2[q] = cm * B1[q] + cs[0] * B2[q];
  if (p->dim == 2) {
    ContractFloat(ni, np, 1, ni, Pm, -1.0f, 1, B2, r);
    ContractFloat(ni, np, 1, ni, Ps, -cs[1], 1, B1, r);
  } else {
    ContractFloat(ni, np, np, ni, Pm, 1.0f, 0, B2, B0);
    ContractFloat(ni, np, np, ni, Ps, cs[1], 1, B1, B0);
    ContractFloat(ni, np, np, ni, Pm, 1.0f, 0, B1, B2);
    ContractFloat(ni, np, 1, ni * ni, Pm, -1.0f, 1, B0, r);
    ContractFloat(ni, np, 1, ni * ni, Ps, -cs[2], 1, B2, r);
  }
}

static float *FastDiagSolveFloat(const PatchLoop *p, const float *S, const float *ST, const float *lam, float cm, const float cs[3], float *u, float *v)
{
  const int ni = p->ni, nt = p->dim == 2 ? ni * ni : ni * ni * ni;
  float    *w;
  int       q = 0, s = 1;

  for (int dir = 0; dir < p->dim; dir++, s *= ni) {
    ContractFloat(ni, ni, nt / (s * ni), s, ST, 1.0f, 0, u, v);
    w = u, u = v, v = w;
  }
  for (int l = 0; l < p->nint[2]; l++) {
    for (int j = 0; j < ni; j++) {
      const float base = cm + cs[1] * lam[j] + (p->dim == 3 ? cs[2] * lam[l] : 0.0f);

      for (int i = 0; i < ni; i++, q++) u[q] /= base + cs[0] * lam[i];
    }
  }
  s = 1;
  for (int dir = 0; dir < p->dim; dir++, s *= ni) {
    ContractFloat(ni, ni, nt / (s * ni), s, S, 1.0f, 0, u, v);
    w = u, u = v, v = w;
  }
  return u;
}

void PatchworkPatchSmoothRefFloat(const PatchworkPatchDesc *d, const float *x, const float *b, float *y)
{
  const PatchworkTensorDesc *op = &d->op;
  float     B0[PW_PATCH_MAX_NODES], B1[PW_PATCH_MAX_NODES], B2[PW_PATCH_MAX_NODES];
  float     R[PW_PATCH_MAX_NI * PW_PATCH_MAX_NI * PW_PATCH_MAX_NI];
  float     Pm[PW_PATCH_MAX_NI * PW_PATCH_MAX_N], Ps[PW_PATCH_MAX_NI * PW_PATCH_MAX_N];
  float     S[PW_PATCH_MAX_NI * PW_PATCH_MAX_NI], ST[PW_PATCH_MAX_NI * PW_PATCH_MAX_NI], lam[PW_PATCH_MAX_NI];
  float     cm, cs[3], omega;
  PatchLoop p;
  int       v[3], g0[3];

  AssertSameBoxes(d, x, y);
  if (!SetUpLoop(d, 1, &p)) return;
  /* round the data once, so all arithmetic below is in float as on the device */
  for (int q = 0; q < p.ni * p.np; q++) {
    Pm[q] = (float)d->patch_mass[q];
    Ps[q] = (float)d->patch_stiff[q];
  }
  for (int i = 0; i < p.ni; i++) {
    lam[i] = (float)d->eigval[i];
    for (int j = 0; j < p.ni; j++) {
      S[i * p.ni + j]  = (float)d->eigvec[i * p.ni + j];
      ST[i * p.ni + j] = (float)d->eigvec[j * p.ni + i];
    }
  }
  cm    = (float)op->coef_mass;
  omega = (float)d->omega;
  for (int dir = 0; dir < 3; dir++) cs[dir] = dir < op->dim ? (float)op->coef_stiff[dir] : 0.0f;
  for (v[2] = p.vfirst[2]; v[2] <= p.vlast[2]; v[2] += 2) {
    for (v[1] = p.vfirst[1]; v[1] <= p.vlast[1]; v[1] += 2) {
      for (v[0] = p.vfirst[0]; v[0] <= p.vlast[0]; v[0] += 2) {
        const float *t;

        PatchOrigin(&p, v, g0);
        for (int l = 0; l < p.nint[2]; l++)
          for (int j = 0; j < p.nint[1]; j++) {
            const ptrdiff_t o = RowStart(op->in_start, op->in_size, g0, 1, j + p.ioff[1], l + p.ioff[2]);

            for (int i = 0; i < p.nint[0]; i++) R[(l * p.nint[1] + j) * p.nint[0] + i] = b[o + i];
          }
        for (int l = 0; l < p.n[2]; l++)
          for (int j = 0; j < p.n[1]; j++) {
            const ptrdiff_t o   = RowStart(op->in_start, op->in_size, g0, 0, j, l);
            float          *row = B0 + (l * p.n[1] + j) * p.n[0];
            int             ilo, ihi;

            for (int i = 0; i < p.n[0]; i++) row[i] = 0.0f;
            if (ClosureRow(&p, op, g0, j, l, &ilo, &ihi))
              for (int i = ilo; i < ihi; i++) row[i] = x[o + i];
          }
        PatchResidualFloat(&p, Pm, Ps, cm, cs, B0, B1, B2, R);
        t = FastDiagSolveFloat(&p, S, ST, lam, cm, cs, R, B0);
        for (int l = 0; l < p.nint[2]; l++)
          for (int j = 0; j < p.nint[1]; j++) {
            const ptrdiff_t o = RowStart(op->out_start, op->out_size, g0, 1, j + p.ioff[1], l + p.ioff[2]);

            for (int i = 0; i < p.nint[0]; i++) y[o + i] += omega * t[(l * p.nint[1] + j) * p.nint[0] + i];
          }
      }
    }
  }
}
