/* CUDA kernels of the tensor-product operator on general quadrilateral and hexahedral cells (contract:
   include/patchwork/plex_kernel.h; CPU reference: src/core/plex_ref.c).

   Apply. Per cell, with B the nq x n interpolation and Bd = Dq B the nq x n derivatives of the basis at
   the quadrature points, sum factorization in three passes forward and three back (3D):
     x pass  a = B_x u,   b = Bd_x u
     y pass  c = B_y a,   d = B_y b,   e = Bd_y a
     z pass  u_q = B_z c, dx = B_z d,  dy = B_z e,  dz = Bd_z c          (values and reference gradient)
     points  v = geom0 u_q, g = G (dx,dy,dz)                                (7 factors per point)
     z back  C = B_z^T v + Bd_z^T g_z,  D = B_z^T g_x,  E = B_z^T g_y
     y back  F = B_y^T C + Bd_y^T E,    H = B_y^T D
     x back  y_e = B_x^T F + Bd_x^T H
   which is the reference's B^T (M_q B + sum_a Dq_a^T G Dq_b B) since Dq_a acting on B u equals Bd in
   direction a. Collocated (Gauss-Lobatto points at the nodes, B = I, Bd = Dq) drops the interpolations:
     x and y pass  d = D_x u, e = D_y u;  points dz = D_z u, ...;  back  u_e = v + D_z^T g_z + D_x^T g_x + D_y^T g_y.

   Launch geometry (deal.II / libCEED style, cf. cuda/tensor_apply.cu): a block holds C cells and a plane
   of nq x nq threads per cell (nq in 2D). In every pass each thread owns one line of the cell and applies
   the same 1D matrix to it, so the matrix entries are uniform across the block: with the loops unrolled
   (templates on n and nq) they are compile-time offsets into the kernel-parameter constant bank, read
   with no shared-memory traffic. Lines change direction between passes through shared memory, three
   buffers per cell (two in 2D), each updated in place by the one thread that owns a line; the z pass, the
   point-wise product and the z back pass run in registers along the thread's z line.

   The geometric factors dominate the memory traffic (7 doubles per point in 3D against about 3 per node
   for x, y and the index map), and every one of them is read exactly once. Each block copies its cells'
   factors (one contiguous chunk) into shared memory with cp.async when it starts, so the load is in
   flight while the block gathers x and runs the forward passes; the point-wise step then reads them
   from shared memory. C is chosen at compile time to fit the most cells per SM into its shared memory
   (Lay::C below). Results are added to y with atomicAdd (nodes are shared between cells and the cell
   order is arbitrary). Measured on an H200 (bench/bench_plex_kernels.cu, 16M DoF): 70-82% of the copy
   bandwidth for k >= 2 except Gauss at k >= 7; an L2 evict-first policy on the staged copy (to keep x,
   y and elem in L2) and 256-thread blocks both changed the throughput by less than 2%.

   Hanging nodes: a cell whose mask is regular (PatchworkHangingRegular: every cell of a 1-irregular
   mesh) interpolates its raw face values in shared memory after the gather and applies the transpose
   before the scatter, sum-factorized along face lines (HangForward*, HangTranspose*), with four barriers
   more in the blocks that hold such a cell (a block-wide vote after the gather); these phases are
   compiled only into the kernels for meshes with hanging nodes (HANG). H100, 16M DoF, 10% / 30% of the
   cells hanging and scattered over the mesh (bench/bench_plex_kernels.cu): at most +21% / +33% over the
   plain apply for 3D k = 1..8 (collocated: at most +5% / +18%), where the generic kernel took 2-42x.

   Geometry on the fly (FLY kernels, PatchworkPlexDesc.corners): for multilinear cells the block stages
   each cell's corners (24 doubles in 3D) instead of its factors, and the point-wise step computes the
   factors from them (FlyLine3 / PointsFly3 below), so an apply moves x, y, the index map and the corners:
   less than half the bytes at k >= 2, and far less shared memory per cell, so that the registers bound
   the residency (CellsPerBlockRegs). A variable diffusion coefficient (one value per point) is staged
   with the corners. H100, 16M DoF, multilinear cells (bench/bench_plex_kernels.cu), GDoF/s stored ->
   on the fly with constant / variable diffusion: collocated k = 4..7 19.3 -> 37.7 / 34.7, 22.9 -> 34.6 /
   32.4, 22.9 -> 37.0 / 34.2, 24.1 -> 46.3 / 41.4; Gauss nq = k+2 13.0 -> 15.6 / 14.7, 14.7 -> 16.3 /
   15.4, 17.4 -> 20.7 / 19.7, 17.7 -> 17.3 / 15.9.

   The templated kernels are in cuda/plex_templated.h, instantiated by cuda/plex_apply3.cu and
   cuda/plex_apply2.cu (separate translation units, so that the build compiles them in parallel); this
   file has the generic kernels and the entry points.

   Templates cover 3D k = 1..8 and 2D k = 1..10 with nq = n (collocated or Gauss), n+1, n+2; other nq (up
   to PW_MAX_Q) take a generic kernel with run-time sizes (ApplyGeneric), as do the diagonal and the
   geometric factors, which run once per setup: one group of threads per cell, data in shared memory,
   each pass an entry-wise contraction along one direction (GroupContract). */
#include "plex_templated.h"

namespace {

/* ---------------------------------------------------------------------------------------------- */
/* Generic kernels (run-time n and nq): one group of TG threads per cell, C groups per block, all
   arrays of a cell in shared memory, each pass an entry-wise contraction. The groups of a block pass the
   same barriers; a group without a cell only skips the work. */

/* The 1D tables of the generic kernels (by value), copied to shared memory on entry */
struct Tables {
  double B[PW_MAX_Q * PW_MAX_N], Bd[PW_MAX_Q * PW_MAX_N], w[PW_MAX_Q];
};

struct Group {
  int       dim, n, nq, nd, nqd; /* nd = n^dim, nqd = nq^dim */
  int       C, TG;               /* cells per block, threads per cell */
  int       cellsz;              /* doubles of shared memory per cell */
  long long ncells;
};

/* out (+)= A along direction dir of in (sizes s0,s1,s2, x fastest): A is nq x n; trans = 0: s[dir] == n
   and out has nq there (interpolation), trans = 1: s[dir] == nq, out has n (its transpose) */
__device__ void GroupContract(int tid, int nt, const double *A, int nq, int n, int trans, int dir, int s0, int s1, int s2, const double *in, double *out, double scale, int add)
{
  const int m = trans ? nq : n, rr = trans ? n : nq;
  const int stride = dir == 0 ? 1 : dir == 1 ? s0 : s0 * s1, outer = dir == 0 ? s1 * s2 : dir == 1 ? s2 : 1;
  const int total = outer * rr * stride;

  for (int idx = tid; idx < total; idx += nt) {
    const int     tt = idx % stride, rest = idx / stride, i = rest % rr, o = rest / rr;
    const double *p  = in + (size_t)o * m * stride + tt;
    double        s  = 0;
    for (int j = 0; j < m; j++) s += (trans ? A[j * n + i] : A[i * n + j]) * p[(size_t)j * stride];
    out[idx] = add ? out[idx] + scale * s : scale * s;
  }
}

static __device__ __forceinline__ int GIdx3(int a, int b) /* index of G_ab in the 3D factor layout */
{
  if (a > b) {
    const int t = a;
    a = b;
    b = t;
  }
  return a == 0 ? 1 + b : a == 1 ? 3 + b : 6;
}

/* Hanging-node constraints of one cell (contract: include/patchwork/hanging_kernel.h; CPU reference:
   src/core/hanging_ref.c, sum-factorized). Here one thread per node, each from the raw copy: a node's
   value comes from the first hanging face or edge that holds it (its claim), the transpose gathers into
   a raw slot every claimed node of every constraint whose grid holds the slot. */
struct HangCon {
  int base, st0, st1, s0, s1, m; /* nodes base + i st0 + j st1 (m = 2) or base + i st0 (m = 1), halves s0, s1 */
};

/* Constraint q (faces 0..2 dim-1, then the 12 edges of 3D) of the mask, if it hangs */
static __device__ bool HangGet(int dim, int n, unsigned long long mask, int q, HangCon *c)
{
  const int st[3] = {1, n, n * n};

  if (q < 2 * dim) {
    const int d = q / 2, side = q % 2;
    int       t[2], k = 0;

    if (!((mask >> q) & 1)) return false;
    for (int e = 0; e < dim; e++)
      if (e != d) t[k++] = e;
    c->m    = dim - 1;
    c->base = side * (n - 1) * st[d];
    c->st0  = st[t[0]];
    c->st1  = dim == 3 ? st[t[1]] : 0;
    c->s0   = (int)((mask >> (PW_HANG_FACE_POS + (dim - 1) * q)) & 1);
    c->s1   = dim == 3 ? (int)((mask >> (PW_HANG_FACE_POS + (dim - 1) * q + 1)) & 1) : 0;
    return true;
  }
  q -= 2 * dim;
  if (dim != 3 || q >= 12 || !((mask >> (PW_HANG_EDGE + q)) & 1)) return false;
  {
    const int d = q / 4, a = q % 2, b = (q / 2) % 2, o0 = d == 0 ? 1 : 0, o1 = d == 2 ? 1 : 2;
    c->m    = 1;
    c->base = a * (n - 1) * st[o0] + b * (n - 1) * st[o1];
    c->st0  = st[d];
    c->st1  = 0;
    c->s0   = (int)((mask >> (PW_HANG_EDGE_POS + q)) & 1);
    c->s1   = 0;
  }
  return true;
}

/* Whether node `node` lies on constraint c, and where (i, j) */
static __device__ bool HangOn(const HangCon &c, int n, int node, int *i, int *j)
{
  const int r = node - c.base;

  if (r < 0) return false;
  for (int jj = 0; jj < (c.m == 2 ? n : 1); jj++)
    for (int ii = 0; ii < n; ii++)
      if (ii * c.st0 + jj * c.st1 == r) {
        *i = ii;
        *j = jj;
        return true;
      }
  return false;
}

/* The first hanging constraint that holds node (its claim), -1 if none */
static __device__ int HangClaim(int dim, int n, unsigned long long mask, int node)
{
  HangCon c;
  int     i, j;

  for (int q = 0; q < 2 * dim + (dim == 3 ? 12 : 0); q++)
    if (HangGet(dim, n, mask, q, &c) && HangOn(c, n, node, &i, &j)) return q;
  return -1;
}

/* C raw at node */
static __device__ double HangForward(int dim, int n, unsigned long long mask, const double *P, const double *raw, int node)
{
  HangCon   c;
  int       i, j;
  double    v = 0;
  const int q = HangClaim(dim, n, mask, node);

  if (q < 0) return raw[node];
  HangGet(dim, n, mask, q, &c);
  HangOn(c, n, node, &i, &j);
  for (int qq = 0; qq < (c.m == 2 ? n : 1); qq++) {
    const double wj = c.m == 2 ? P[(c.s1 * n + j) * n + qq] : 1.0;
    for (int p = 0; p < n; p++) v += P[(c.s0 * n + i) * n + p] * wj * raw[c.base + p * c.st0 + qq * c.st1];
  }
  return v;
}

/* C^T y at raw slot node */
static __device__ double HangTranspose(int dim, int n, unsigned long long mask, const double *P, const double *y, int node)
{
  HangCon c;
  int     p, qq;
  double  v = HangClaim(dim, n, mask, node) < 0 ? y[node] : 0.0;

  for (int q = 0; q < 2 * dim + (dim == 3 ? 12 : 0); q++) {
    if (!HangGet(dim, n, mask, q, &c) || !HangOn(c, n, node, &p, &qq)) continue;
    for (int j = 0; j < (c.m == 2 ? n : 1); j++)
      for (int i = 0; i < n; i++) {
        const int o = c.base + i * c.st0 + j * c.st1;
        if (HangClaim(dim, n, mask, o) != q) continue;
        v += P[(c.s0 * n + i) * n + p] * (c.m == 2 ? P[(c.s1 * n + j) * n + qq] : 1.0) * y[o];
      }
  }
  return v;
}

/* What the generic apply does beyond plain cells: hanging constraints (mask, P), a list of cells to take
   (NULL: all), and the diagonal mode, in which each list entry c*nd + i is one column of C^T A_c C */
struct HangArgs {
  const unsigned long long *mask;
  const double             *P;
  const long long          *list;
  int                       diag;
};

/* Generic apply, the same passes as Apply3/Apply2 with run-time sizes; cells with hanging faces or
   edges interpolate their raw values first and apply the transpose last */
__global__ void __launch_bounds__(256) ApplyGeneric(const Tables tb, const Group g, const HangArgs h, const int *__restrict__ elem, const double *__restrict__ geom, const double *__restrict__ x, double *__restrict__ y)
{
  extern __shared__ __align__(16) double smem[];
  const int       n = g.n, nq = g.nq, nd = g.nd, nqd = g.nqd, nt = g.TG, ncomp = PW_PLEX_NCOMP(g.dim);
  const int       slot = threadIdx.x / nt, tid = threadIdx.x - slot * nt;
  const long long entry = (long long)blockIdx.x * g.C + slot;
  const bool      active = entry < g.ncells;
  const long long item = active && h.list ? h.list[entry] : entry;
  const long long cell = h.diag ? item / nd : item;
  const int       dslot = h.diag ? (int)(item % nd) : -1;
  const unsigned long long mask = active && h.mask ? h.mask[cell] : 0;
  double         *B = smem, *Bd = smem + nq * n;
  double         *u = smem + 2 * nq * n + (size_t)slot * g.cellsz;
  const int       sa = g.dim == 3 ? nq * n * n : nq * n, sc = g.dim == 3 ? nq * nq * n : 0;
  double         *a = u + nd, *b = a + sa, *c = b + sa, *dd = c + sc, *e = dd + sc, *uq = e + sc;
  double         *qd[3] = {uq + nqd, uq + 2 * nqd, uq + 3 * nqd}; /* dx, dy, dz */
  const int      *el = elem + cell * nd;
  const double   *gc = geom + cell * ncomp * nqd;

  for (int k = threadIdx.x; k < nq * n; k += blockDim.x) {
    B[k]  = tb.B[k];
    Bd[k] = tb.Bd[k];
  }
  if (active)
    for (int i = tid; i < nd; i += nt) {
      const int ei = el[i];
      u[i]         = h.diag ? (el[i] == el[dslot] ? 1.0 : 0.0) : ei >= 0 ? x[ei] : 0.0;
    }
  __syncthreads();
  if (mask) { /* u = C raw, through a (scratch until the first pass) */
    for (int i = tid; i < nd; i += nt) a[i] = u[i];
  }
  __syncthreads();
  if (mask)
    for (int i = tid; i < nd; i += nt) u[i] = HangForward(g.dim, n, mask, h.P, a, i);
  __syncthreads();
  if (g.dim == 3) {
    if (active) {
      GroupContract(tid, nt, B, nq, n, 0, 0, n, n, n, u, a, 1, 0);
      GroupContract(tid, nt, Bd, nq, n, 0, 0, n, n, n, u, b, 1, 0);
    }
    __syncthreads();
    if (active) {
      GroupContract(tid, nt, B, nq, n, 0, 1, nq, n, n, a, c, 1, 0);
      GroupContract(tid, nt, B, nq, n, 0, 1, nq, n, n, b, dd, 1, 0);
      GroupContract(tid, nt, Bd, nq, n, 0, 1, nq, n, n, a, e, 1, 0);
    }
    __syncthreads();
    if (active) {
      GroupContract(tid, nt, B, nq, n, 0, 2, nq, nq, n, c, uq, 1, 0);
      GroupContract(tid, nt, B, nq, n, 0, 2, nq, nq, n, dd, qd[0], 1, 0);
      GroupContract(tid, nt, B, nq, n, 0, 2, nq, nq, n, e, qd[1], 1, 0);
      GroupContract(tid, nt, Bd, nq, n, 0, 2, nq, nq, n, c, qd[2], 1, 0);
    }
  } else {
    if (active) {
      GroupContract(tid, nt, B, nq, n, 0, 0, n, n, 1, u, a, 1, 0);
      GroupContract(tid, nt, Bd, nq, n, 0, 0, n, n, 1, u, b, 1, 0);
    }
    __syncthreads();
    if (active) {
      GroupContract(tid, nt, B, nq, n, 0, 1, nq, n, 1, a, uq, 1, 0);
      GroupContract(tid, nt, B, nq, n, 0, 1, nq, n, 1, b, qd[0], 1, 0);
      GroupContract(tid, nt, Bd, nq, n, 0, 1, nq, n, 1, a, qd[1], 1, 0);
    }
  }
  __syncthreads();
  if (active)
    for (int q = tid; q < nqd; q += nt) {
      double gr[3], f[3] = {0, 0, 0};
      for (int k = 0; k < g.dim; k++) gr[k] = qd[k][q];
      for (int k = 0; k < g.dim; k++)
        for (int l = 0; l < g.dim; l++) f[k] += gc[(size_t)(g.dim == 3 ? GIdx3(k, l) : 1 + k + l) * nqd + q] * gr[l];
      uq[q] *= gc[q];
      for (int k = 0; k < g.dim; k++) qd[k][q] = f[k];
    }
  __syncthreads();
  if (g.dim == 3) {
    if (active) {
      GroupContract(tid, nt, B, nq, n, 1, 2, nq, nq, nq, uq, c, 1, 0);
      GroupContract(tid, nt, Bd, nq, n, 1, 2, nq, nq, nq, qd[2], c, 1, 1);
      GroupContract(tid, nt, B, nq, n, 1, 2, nq, nq, nq, qd[0], dd, 1, 0);
      GroupContract(tid, nt, B, nq, n, 1, 2, nq, nq, nq, qd[1], e, 1, 0);
    }
    __syncthreads();
    if (active) {
      GroupContract(tid, nt, B, nq, n, 1, 1, nq, nq, n, c, a, 1, 0);
      GroupContract(tid, nt, Bd, nq, n, 1, 1, nq, nq, n, e, a, 1, 1);
      GroupContract(tid, nt, B, nq, n, 1, 1, nq, nq, n, dd, b, 1, 0);
    }
    __syncthreads();
    if (active) {
      GroupContract(tid, nt, B, nq, n, 1, 0, nq, n, n, a, u, 1, 0);
      GroupContract(tid, nt, Bd, nq, n, 1, 0, nq, n, n, b, u, 1, 1);
    }
  } else {
    if (active) {
      GroupContract(tid, nt, B, nq, n, 1, 1, nq, nq, 1, uq, a, 1, 0);
      GroupContract(tid, nt, Bd, nq, n, 1, 1, nq, nq, 1, qd[1], a, 1, 1);
      GroupContract(tid, nt, B, nq, n, 1, 1, nq, nq, 1, qd[0], b, 1, 0);
    }
    __syncthreads();
    if (active) {
      GroupContract(tid, nt, B, nq, n, 1, 0, nq, n, 1, a, u, 1, 0);
      GroupContract(tid, nt, Bd, nq, n, 1, 0, nq, n, 1, b, u, 1, 1);
    }
  }
  __syncthreads();
  if (mask) { /* u = C^T u, through a */
    for (int i = tid; i < nd; i += nt) a[i] = u[i];
  }
  __syncthreads();
  if (mask)
    for (int i = tid; i < nd; i += nt) u[i] = HangTranspose(g.dim, n, mask, h.P, a, i);
  __syncthreads();
  if (active && h.diag) { /* the column's entry at its unknown: the sum over the slots that hold it */
    if (tid == 0) {
      double v = 0;
      for (int i = 0; i < nd; i++)
        if (el[i] == el[dslot]) v += u[i];
      if (el[dslot] >= 0) atomicAdd(y + el[dslot], v);
    }
  } else if (active)
    for (int i = tid; i < nd; i += nt) {
      const int ei = el[i];
      if (ei >= 0) atomicAdd(y + ei, u[i]);
    }
}

/* Diagonal: for every factor, the 1D contractions with B.B, Bd.Bd or Bd.B (elementwise products) in
   each direction, grouped by the matrices still to apply (3D):
     z  T1 = BB g0 + DD G22, T2 = BB G00, T3 = BB G11, T4 = 2 BB G01, T5 = 2 DB G02, T6 = 2 DB G12
     y  U1 = BB T1 + DD T3 + DB T6, U2 = BB T2, U3 = DB T4 + BB T5
     x  diag = BB U1 + DD U2 + DB U3
   2D:  y  T1 = BB g0 + DD G11, T2 = BB G00, T3 = 2 DB G01;  x  diag = BB T1 + DD T2 + DB T3 */
__global__ void __launch_bounds__(256) DiagonalGeneric(const Tables tb, const Group g, const unsigned long long *__restrict__ hang, const int *__restrict__ elem, const double *__restrict__ geom, double *__restrict__ y)
{
  extern __shared__ __align__(16) double smem[];
  const int       n = g.n, nq = g.nq, nd = g.nd, nqd = g.nqd, nt = g.TG, ncomp = PW_PLEX_NCOMP(g.dim);
  const int       slot = threadIdx.x / nt, tid = threadIdx.x - slot * nt;
  const long long cell = (long long)blockIdx.x * g.C + slot;
  const bool      active = cell < g.ncells && !(hang && hang[cell]); /* hanging cells: ApplyGeneric, column by column */
  double         *BB = smem, *DD = BB + nq * n, *DB = DD + nq * n;
  double         *T = smem + 3 * nq * n + (size_t)slot * g.cellsz;
  const double   *gc = geom + cell * ncomp * nqd;
  const int      *el = elem + cell * nd;

  for (int k = threadIdx.x; k < nq * n; k += blockDim.x) {
    BB[k] = tb.B[k] * tb.B[k];
    DD[k] = tb.Bd[k] * tb.Bd[k];
    DB[k] = tb.Bd[k] * tb.B[k];
  }
  __syncthreads();
  if (g.dim == 3) {
    const int st = nq * nq * n, su = nq * n * n;
    double   *U = T + 6 * st;
    if (active) {
      GroupContract(tid, nt, BB, nq, n, 1, 2, nq, nq, nq, gc, T, 1, 0);
      GroupContract(tid, nt, DD, nq, n, 1, 2, nq, nq, nq, gc + 6 * nqd, T, 1, 1);
      GroupContract(tid, nt, BB, nq, n, 1, 2, nq, nq, nq, gc + 1 * nqd, T + st, 1, 0);
      GroupContract(tid, nt, BB, nq, n, 1, 2, nq, nq, nq, gc + 4 * nqd, T + 2 * st, 1, 0);
      GroupContract(tid, nt, BB, nq, n, 1, 2, nq, nq, nq, gc + 2 * nqd, T + 3 * st, 2, 0);
      GroupContract(tid, nt, DB, nq, n, 1, 2, nq, nq, nq, gc + 3 * nqd, T + 4 * st, 2, 0);
      GroupContract(tid, nt, DB, nq, n, 1, 2, nq, nq, nq, gc + 5 * nqd, T + 5 * st, 2, 0);
    }
    __syncthreads();
    if (active) {
      GroupContract(tid, nt, BB, nq, n, 1, 1, nq, nq, n, T, U, 1, 0);
      GroupContract(tid, nt, DD, nq, n, 1, 1, nq, nq, n, T + 2 * st, U, 1, 1);
      GroupContract(tid, nt, DB, nq, n, 1, 1, nq, nq, n, T + 5 * st, U, 1, 1);
      GroupContract(tid, nt, BB, nq, n, 1, 1, nq, nq, n, T + st, U + su, 1, 0);
      GroupContract(tid, nt, DB, nq, n, 1, 1, nq, nq, n, T + 3 * st, U + 2 * su, 1, 0);
      GroupContract(tid, nt, BB, nq, n, 1, 1, nq, nq, n, T + 4 * st, U + 2 * su, 1, 1);
    }
    __syncthreads();
    if (active) { /* the result over T, free now */
      GroupContract(tid, nt, BB, nq, n, 1, 0, nq, n, n, U, T, 1, 0);
      GroupContract(tid, nt, DD, nq, n, 1, 0, nq, n, n, U + su, T, 1, 1);
      GroupContract(tid, nt, DB, nq, n, 1, 0, nq, n, n, U + 2 * su, T, 1, 1);
    }
  } else {
    const int st = nq * n;
    double   *D = T + 3 * st;
    if (active) {
      GroupContract(tid, nt, BB, nq, n, 1, 1, nq, nq, 1, gc, T, 1, 0);
      GroupContract(tid, nt, DD, nq, n, 1, 1, nq, nq, 1, gc + 3 * nqd, T, 1, 1);
      GroupContract(tid, nt, BB, nq, n, 1, 1, nq, nq, 1, gc + 1 * nqd, T + st, 1, 0);
      GroupContract(tid, nt, DB, nq, n, 1, 1, nq, nq, 1, gc + 2 * nqd, T + 2 * st, 2, 0);
    }
    __syncthreads();
    if (active) {
      GroupContract(tid, nt, BB, nq, n, 1, 0, nq, n, 1, T, D, 1, 0);
      GroupContract(tid, nt, DD, nq, n, 1, 0, nq, n, 1, T + st, D, 1, 1);
      GroupContract(tid, nt, DB, nq, n, 1, 0, nq, n, 1, T + 2 * st, D, 1, 1);
    }
    T = D;
  }
  __syncthreads();
  if (active)
    for (int i = tid; i < nd; i += nt) {
      const int ei = el[i];
      if (ei >= 0) atomicAdd(y + ei, T[i]);
    }
}

/* Geometric factors. J[d][a] = dx_d/dxi_a by Bd in direction a and B in the others (as the reference):
   3D, per coordinate d: x pass a = B X_d, b = Bd X_d; y pass c_d = B a, e_d = Bd a, f_d = B b; then at
   each point J[d][0] = B_z f_d, J[d][1] = B_z e_d, J[d][2] = Bd_z c_d (sums of n terms from shared).
   2D: x pass a_d, b_d; at each point J[d][0] = B_y b_d, J[d][1] = Bd_y a_d. A cell is bad when det J is
   zero at a point or takes both signs; its factors are computed with det = 1 there (finite, as the
   reference). */
__global__ void __launch_bounds__(256) GeometryGeneric(const Tables tb, const Group g, const double *__restrict__ coords, const double *__restrict__ diffusion, const double *__restrict__ reaction, double alpha, double beta, double *__restrict__ geom, int *__restrict__ nbad)
{
  extern __shared__ __align__(16) double smem[];
  __shared__ int  flags[32];
  const int       dim = g.dim, n = g.n, nq = g.nq, nd = g.nd, nqd = g.nqd, nt = g.TG, ncomp = PW_PLEX_NCOMP(dim);
  const int       slot = threadIdx.x / nt, tid = threadIdx.x - slot * nt;
  const long long cell = (long long)blockIdx.x * g.C + slot;
  const bool      active = cell < g.ncells;
  double         *B = smem, *Bd = B + nq * n, *W = Bd + nq * n;
  double         *X = smem + 2 * nq * n + PW_MAX_Q + (size_t)slot * g.cellsz; /* dim x nd coordinates */
  double         *P = X + dim * nd;                                          /* x pass, 2 (or 2 dim in 2D) arrays */
  const int       sa = dim == 3 ? nq * n * n : nq * n, sr = nq * nq * n;
  double         *R = P + 2 * sa; /* 3D: 9 arrays c_d, e_d, f_d */

  for (int k = threadIdx.x; k < nq * n; k += blockDim.x) {
    B[k]  = tb.B[k];
    Bd[k] = tb.Bd[k];
  }
  for (int k = threadIdx.x; k < nq; k += blockDim.x) W[k] = tb.w[k];
  if (tid == 0) flags[slot] = 0;
  if (active)
    for (int i = tid; i < dim * nd; i += nt) X[i] = coords[cell * dim * nd + i];
  __syncthreads();
  if (dim == 3) {
    for (int d = 0; d < 3; d++) {
      if (active) {
        GroupContract(tid, nt, B, nq, n, 0, 0, n, n, n, X + d * nd, P, 1, 0);
        GroupContract(tid, nt, Bd, nq, n, 0, 0, n, n, n, X + d * nd, P + sa, 1, 0);
      }
      __syncthreads();
      if (active) {
        GroupContract(tid, nt, B, nq, n, 0, 1, nq, n, n, P, R + (3 * d) * sr, 1, 0);
        GroupContract(tid, nt, Bd, nq, n, 0, 1, nq, n, n, P, R + (3 * d + 1) * sr, 1, 0);
        GroupContract(tid, nt, B, nq, n, 0, 1, nq, n, n, P + sa, R + (3 * d + 2) * sr, 1, 0);
      }
      __syncthreads();
    }
  } else {
    if (active)
      for (int d = 0; d < 2; d++) {
        GroupContract(tid, nt, B, nq, n, 0, 0, n, n, 1, X + d * nd, P + (2 * d) * sa, 1, 0);
        GroupContract(tid, nt, Bd, nq, n, 0, 0, n, n, 1, X + d * nd, P + (2 * d + 1) * sa, 1, 0);
      }
    __syncthreads();
  }
  if (active) {
    int f = 0;
    for (int q = tid; q < nqd; q += nt) {
      const int qx = q % nq, qy = (q / nq) % nq, qz = q / (nq * nq);
      double    J[3][3], det, wq = W[qx] * W[qy];

      if (dim == 3) {
        wq *= W[qz];
        for (int d = 0; d < 3; d++) {
          const double *c = R + (3 * d) * sr + qy * nq + qx, *e = c + sr, *fd = e + sr;
          double        s0 = 0, s1 = 0, s2 = 0;
          for (int m = 0; m < n; m++) {
            s0 += B[qz * n + m] * fd[m * nq * nq];
            s1 += B[qz * n + m] * e[m * nq * nq];
            s2 += Bd[qz * n + m] * c[m * nq * nq];
          }
          J[d][0] = s0;
          J[d][1] = s1;
          J[d][2] = s2;
        }
      } else {
        for (int d = 0; d < 2; d++) {
          const double *a = P + (2 * d) * sa + qx, *b = a + sa;
          double        s0 = 0, s1 = 0;
          for (int m = 0; m < n; m++) {
            s0 += B[qy * n + m] * b[m * nq];
            s1 += Bd[qy * n + m] * a[m * nq];
          }
          J[d][0] = s0;
          J[d][1] = s1;
        }
      }
      /* adjugate A (J^-1 = A / det): G = w beta c A A^T / |det| */
      double A[3][3];
      if (dim == 3) {
        A[0][0] = J[1][1] * J[2][2] - J[1][2] * J[2][1];
        A[0][1] = J[0][2] * J[2][1] - J[0][1] * J[2][2];
        A[0][2] = J[0][1] * J[1][2] - J[0][2] * J[1][1];
        A[1][0] = J[1][2] * J[2][0] - J[1][0] * J[2][2];
        A[1][1] = J[0][0] * J[2][2] - J[0][2] * J[2][0];
        A[1][2] = J[0][2] * J[1][0] - J[0][0] * J[1][2];
        A[2][0] = J[1][0] * J[2][1] - J[1][1] * J[2][0];
        A[2][1] = J[0][1] * J[2][0] - J[0][0] * J[2][1];
        A[2][2] = J[0][0] * J[1][1] - J[0][1] * J[1][0];
        det     = J[0][0] * A[0][0] + J[0][1] * A[1][0] + J[0][2] * A[2][0];
      } else {
        A[0][0] = J[1][1];
        A[0][1] = -J[0][1];
        A[1][0] = -J[1][0];
        A[1][1] = J[0][0];
        det     = J[0][0] * J[1][1] - J[0][1] * J[1][0];
      }
      f |= det > 0 ? 1 : det < 0 ? 2 : 4;
      if (det == 0) det = 1;
      const double ad = fabs(det), cq = beta * (diffusion ? diffusion[cell * nqd + q] : 1.0), rq = alpha * (reaction ? reaction[cell * nqd + q] : 1.0);
      double      *gq = geom + cell * ncomp * nqd + q;

      gq[0] = wq * ad * rq;
      for (int a = 0; a < dim; a++)
        for (int b = a; b < dim; b++) {
          double s = 0;
          for (int d = 0; d < dim; d++) s += A[a][d] * A[b][d];
          gq[(size_t)(dim == 3 ? GIdx3(a, b) : 1 + a + b) * nqd] = wq * cq * s / ad;
        }
    }
    if (f) atomicOr(&flags[slot], f);
  }
  __syncthreads();
  if (active && tid == 0) {
    const int f = flags[slot];
    if ((f & 4) || (f & 3) == 3) atomicAdd(nbad, 1);
  }
}

/* ---------------------------------------------------------------------------------------------- */
/* Host side */

static int Pow(int b, int e)
{
  int p = 1;
  for (int i = 0; i < e; i++) p *= b;
  return p;
}


static cudaError_t CheckSizes(int dim, int degree, int nq)
{
  if (dim != 2 && dim != 3) return cudaErrorInvalidValue;
  if (degree < 1 || degree > (dim == 3 ? 8 : PW_MAX_DEGREE)) return cudaErrorInvalidValue;
  if (nq < degree + 1 || nq > PW_MAX_Q) return cudaErrorInvalidValue;
  return cudaSuccess;
}

/* Validate an apply/diagonal descriptor; *empty: nothing to do */
static cudaError_t CheckDesc(const PatchworkPlexDesc *d, int *empty)
{
  *empty = 0;
  if (!d) return cudaErrorInvalidValue;
  cudaError_t err = CheckSizes(d->dim, d->degree, d->nq);
  if (err != cudaSuccess) return err;
  if (d->collocated && d->nq != d->degree + 1) return cudaErrorInvalidValue;
  if (d->ncells < 0) return cudaErrorInvalidValue;
  if (d->ncells == 0) {
    *empty = 1;
    return cudaSuccess;
  }
  if (!d->elem || (!d->geom && !d->corners)) return cudaErrorInvalidValue;
  if (d->hang && (!d->hangP || (d->nhang > 0 && !d->hang_cells) || (d->nhang_diag > 0 && !d->hang_diag))) return cudaErrorInvalidValue;
  if (d->corners && (d->nq > d->degree + 3 || (d->hang && d->nhang > 0))) return cudaErrorInvalidValue; /* the generic kernel reads geom */
  return cudaSuccess;
}

/* Shape of a generic launch: TG threads per cell, C cells per block, within 64 KiB of shared memory
   where possible; returns the dynamic shared memory bytes and sets the kernel's limit when above 48 KiB */
template <typename K>
static cudaError_t GroupShape(K kern, Group *g, size_t table_doubles, size_t *shmem)
{
  const size_t       cellb = (size_t)g->cellsz * sizeof(double), tab = table_doubles * sizeof(double);
  cudaFuncAttributes fa;
  cudaError_t        err = cudaFuncGetAttributes(&fa, kern);

  if (err != cudaSuccess) return err;
  /* the kernel's static shared memory counts against the same 48 KiB default (k = 5, nq = 6 in 3D
     came to 49064 dynamic + 128 static bytes: an invalid launch without the opt-in) */
  const size_t stat = fa.sharedSizeBytes;
  g->TG = g->nqd <= 64 ? 32 : g->nqd <= 256 ? 64 : 128;
  g->C  = 256 / g->TG;
  while (g->C > 1 && stat + tab + g->C * cellb > 64 * 1024) g->C--;
  *shmem = tab + g->C * cellb;
  if (stat + *shmem > (size_t)kSharedPerBlock) return cudaErrorInvalidValue;
  if (stat + *shmem > 48 * 1024) return cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)*shmem);
  return cudaSuccess;
}

static Group MakeGroup(int dim, int degree, int nq, long long ncells)
{
  Group g;
  g.dim    = dim;
  g.n      = degree + 1;
  g.nq     = nq;
  g.nd     = Pow(g.n, dim);
  g.nqd    = Pow(nq, dim);
  g.ncells = ncells;
  g.C = g.TG = g.cellsz = 0;
  return g;
}

static unsigned GroupBlocks(const Group &g) { return (unsigned)((g.ncells + g.C - 1) / g.C); }

} // namespace

/* The generic apply over all cells (list NULL) or the nlist entries of list (cells, or in the diagonal
   mode cell*nd + slot) */
cudaError_t patchwork_plex::ApplyGenericLaunch(const PatchworkPlexDesc *d, const double *x, double *y, const long long *list, long long nlist, int diag, cudaStream_t s)
{
  Group    g = MakeGroup(d->dim, d->degree, d->nq, list ? nlist : d->ncells);
  Tables   tb;
  size_t   shmem;
  HangArgs h = {d->hang, d->hangP, list, diag};

  Fill1D(g.n, g.nq, 0, d->interp, d->deriv, tb.B, tb.Bd); /* interp is the identity when collocated */
  const int sa = g.dim == 3 ? g.nq * g.n * g.n : g.nq * g.n, sc = g.dim == 3 ? g.nq * g.nq * g.n : 0;
  g.cellsz = g.nd + 2 * sa + 3 * sc + (g.dim + 1) * g.nqd;
  cudaError_t err = GroupShape(ApplyGeneric, &g, 2 * g.nq * g.n, &shmem);
  if (err != cudaSuccess) return err;
  if (g.ncells == 0) return cudaSuccess;
  ApplyGeneric<<<GroupBlocks(g), g.C * g.TG, shmem, s>>>(tb, g, h, d->elem, d->geom, x, y);
  return cudaGetLastError();
}


extern "C" int PatchworkPlexApplyCUDA(const PatchworkPlexDesc *d, const double *x, double *y, void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  int          empty;
  cudaError_t  err = CheckDesc(d, &empty);

  if (err != cudaSuccess || empty) return (int)err;
  if (!x || !y) return (int)cudaErrorInvalidValue;
  return (int)(d->dim == 3 ? patchwork_plex::ApplyTemplated3(d, x, y, s) : patchwork_plex::ApplyTemplated2(d, x, y, s));
}

extern "C" int PatchworkPlexDiagonalCUDA(const PatchworkPlexDesc *d, double *y, void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  int          empty;
  cudaError_t  err = CheckDesc(d, &empty);
  Tables       tb;
  size_t       shmem;

  if (err != cudaSuccess || empty) return (int)err;
  if (!y || !d->geom) return (int)cudaErrorInvalidValue;
  Group g = MakeGroup(d->dim, d->degree, d->nq, d->ncells);
  Fill1D(g.n, g.nq, 0, d->interp, d->deriv, tb.B, tb.Bd);
  g.cellsz = g.dim == 3 ? 6 * g.nq * g.nq * g.n + 3 * g.nq * g.n * g.n : 3 * g.nq * g.n + g.n * g.n;
  err      = GroupShape(DiagonalGeneric, &g, 3 * g.nq * g.n, &shmem);
  if (err != cudaSuccess) return (int)err;
  DiagonalGeneric<<<GroupBlocks(g), g.C * g.TG, shmem, s>>>(tb, g, d->hang, d->elem, d->geom, y);
  if ((err = cudaGetLastError()) != cudaSuccess) return (int)err;
  if (d->hang && d->nhang_diag > 0) return (int)ApplyGenericLaunch(d, NULL, y, d->hang_diag, d->nhang_diag, 1, s);
  return (int)cudaSuccess;
}

extern "C" int PatchworkPlexGeometryCUDA(const PatchworkPlexGeomDesc *gd, double *geom, int *nbad, void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  Tables       tb;
  size_t       shmem;
  int         *dcount = NULL;

  if (!gd || !nbad) return (int)cudaErrorInvalidValue;
  cudaError_t err = CheckSizes(gd->dim, gd->degree, gd->nq);
  if (err != cudaSuccess) return (int)err;
  if (gd->ncells < 0) return (int)cudaErrorInvalidValue;
  *nbad = 0;
  if (gd->ncells == 0) return (int)cudaSuccess;
  if (!gd->coords || !geom) return (int)cudaErrorInvalidValue;
  Group g = MakeGroup(gd->dim, gd->degree, gd->nq, gd->ncells);
  Fill1D(g.n, g.nq, 0, gd->interp, gd->deriv, tb.B, tb.Bd);
  for (int q = 0; q < g.nq; q++) tb.w[q] = gd->weights[q];
  g.cellsz = g.dim == 3 ? 3 * g.nd + 2 * g.nq * g.n * g.n + 9 * g.nq * g.nq * g.n : 2 * g.nd + 4 * g.nq * g.n;
  err      = GroupShape(GeometryGeneric, &g, 2 * g.nq * g.n + PW_MAX_Q, &shmem);
  if (err != cudaSuccess) return (int)err;
  if ((err = cudaMallocAsync((void **)&dcount, sizeof(int), s)) != cudaSuccess) return (int)err;
  err = cudaMemsetAsync(dcount, 0, sizeof(int), s);
  if (err == cudaSuccess) {
    GeometryGeneric<<<GroupBlocks(g), g.C * g.TG, shmem, s>>>(tb, g, gd->coords, gd->diffusion, gd->reaction, gd->alpha, gd->beta, geom, dcount);
    err = cudaGetLastError();
  }
  if (err == cudaSuccess) err = cudaMemcpyAsync(nbad, dcount, sizeof(int), cudaMemcpyDeviceToHost, s);
  const cudaError_t ferr = cudaFreeAsync(dcount, s);
  if (err == cudaSuccess) err = cudaStreamSynchronize(s);
  return (int)(err != cudaSuccess ? err : ferr);
}
