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
   In the smoother x may alias y (then the in and out boxes must be the same): a patch's nodes are
   all read before its interior is written, and a patch of one color never reads another's interior,
   so the in-place update is the multiplicative one. The residual assigns b - Abar x at the patch
   interiors; there y must not alias x or b (a later patch's closure would read what an earlier one
   wrote). The code is serial: patches are visited in order.

   Each algorithm is written once, in patch_ref_impl.h, and instantiated here in double and in float.

   Work arrays live on the stack: three tensors of N^d entries and one of NI^d, about 280 KB in 3D
   at k = 10 (half in float), plus the 1D data in the working precision (12 KB in double). */
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

/* In place, one array is read through the in box and written through the out box: they must agree */
static void AssertSameBoxes(const PatchworkPatchDesc *d, const void *x, const void *y)
{
  for (int dir = 0; dir < 3; dir++) assert(x != y || (d->op.in_start[dir] == d->op.out_start[dir] && d->op.in_size[dir] == d->op.out_size[dir]));
  (void)d;
  (void)x;
  (void)y;
}

/* What one sweep over the patches of a color does with the local residual */
typedef enum {
  PATCH_SMOOTH,  /* y += omega A_j^{-1} (b - Abar_j x) */
  PATCH_SOLVE,   /* y += omega A_j^{-1} b */
  PATCH_RESIDUAL /* y  = b - Abar_j x */
} PatchMode;

/* The algorithms once, instantiated in double and in float (every operation in float, as on the
   device): patch_ref_impl.h is a template on PW_REAL, PW_FN(name) names the instance */
#define PW_REAL  double
#define PW_FN(n) n
#include "patch_ref_impl.h"
#undef PW_REAL
#undef PW_FN

#define PW_REAL  float
#define PW_FN(n) n##Float
#include "patch_ref_impl.h"
#undef PW_REAL
#undef PW_FN
