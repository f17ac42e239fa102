/* CUDA kernels of the LOR assembly by macro element (contract: include/patchwork/lor_kernel.h; CPU
   reference: src/core/lor_ref.c; Pazner et al. 2023, section 3, steps A1, A2 and A4).

   A1 Macro: one thread per Q1 sub-element computes its element matrix (PatchworkQ1ElementMatrixRule, the
      dimension a template parameter so that its loops unroll) from its 2^dim vertices in the
      coordinate box; the macro element's matrix is summed in shared memory and written to Ae once,
      coalesced, padding zeros included: no zeroing pass and no global atomics. The sums in shared
      memory take the 2^dim colors of sub-elements (parities of their indices) one after the other,
      barriers between: sub-elements of one color share no node, so plain read-modify-writes suffice
      (double atomicAdd on shared memory compiles to a CAS loop on sm_90, ATOMS.CAST.SPIN.64). The
      result is deterministic; it differs from the reference only in the order of the up to 2^dim terms
      of a sum (color order, not z-slowest) and where the element matrices do (nvcc contracts to FMA).
      The degree and the rule are template parameters (the vertex rule's closed form,
      PatchworkQ1ElementMatrixVertex, needs 160 registers and no spills; compiled beside the Gauss
      loop in one kernel both spilled). Blocks of 128 threads, three paths:
        whole   (k^dim <= 128 but 3D k = 1): a step takes M = 128 / k^dim whole macro elements, the
                tile their M (k+1)^dim 3^dim entries (at most 91 KB, 3D k = 2);
        layers  (3D k >= 6): a block takes one macro element in steps of 128 / k^2 sub-element layers;
                the tile is a ring of node layers (one more than the step's sub-element layers); after
                a step the node layers whose sub-elements are all done are copied out and zeroed, the
                step's top layer carries over (at most 52 KB);
        direct  (3D k = 1): the macro element is one sub-element, Ae its element matrix spread over the
                27 slots: a warp writes 8 macro elements' 216 entries at a time through shared memory
                and copies them out coalesced (54 KB).
      This replaced the paper's atomicAdd of every sub-element matrix into a zeroed Ae (first version;
      bench/bench_lor_kernels.cu keeps it as "A1at"): on the H200 at 8M DoF that took 9-18 ms against
      3.5 ms for the element matrices alone, the global double atomics being the bottleneck; this
      kernel takes 5-7 ms with Gauss points, 1.8-3.0 ms with the vertex rule (H100, 8M DoF). Offsets
      into Ae are 64-bit: Ae has (k+1)^dim 3^dim doubles per macro element, more than 2^31 entries
      from about 10M macro elements at k = 1 in 3D.
   A1-A4 MacroCSR (the one-rank route whose pattern is the matrix's CSR): the same kernel writes the
      tile's rows into the CSR instead of Ae (EmitRows), with the macro elements taken in 2^dim colors
      (cell parities), one launch each: a thread per row finds where the row starts and which slots
      the pattern stores and this macro element holds, then a thread per entry stores it (the first
      color holding the entry) or adds it with a global reduction (later colors; one per entry and
      launch, so deterministic). No Ae, no gather: on the H100 at 8M DoF, 3D, distorted cells, 3.6-4.4
      ms at k = 4..8 against 7.0-7.4 for Macro + GatherCSR (vertex rule). A first version, a warp per
      row that loaded the row start and read-modified-wrote shared entries one row after the other,
      took 11-41 ms: the loads' latency, with 12 warps per SM, was the whole cost. Tried and not kept
      (H100, 8M DoF): owner-computes (a block writes whole the rows of its nodes 0..k-1 per direction,
      recomputing the halo's sub-elements; no colors, no reductions): 3.2-4.4 ms at k = 4..8 with the
      vertex rule, 10.8-11.3 with Gauss points, worse on box cells; threads of one ColoredAdd color made
      consecutive: within 10%, either way. Nsight Compute on a color launch (k = 4): 18.75% occupancy
      (3 blocks of 4 warps: 160 registers, 58 KB of shared memory), 1.1 TB/s, 39% of the SM's issue
      rate. More blocks do not help: __launch_bounds__ for 4 or 5 blocks per SM (128 or 102 registers,
      spills) made it 10-40% slower at every k. Where the time goes (k = 4, 4.35 ms): the reductions
      hardly count (storing instead of adding, a wrong result, 4.27 ms); without any global write
      (loads and arithmetic kept) 2.6 ms, so the writes, partial sectors of rows that up to 8 launches
      touch, take about 40%, and the rest is more than A1 with Ae (2.0 ms): the 8 launches and the row
      information. Nsight Compute counts 57% excess global sectors (the 2^dim dim coordinate loads of a
      warp's sub-elements span several node rows), but they hit L1: staging a step's coordinates in
      shared memory, loaded coalesced, took 186-198 registers and made the kernel 5-15% slower at
      k = 3..5 (held to 3 blocks per SM; 15-30% at 2 blocks), equal at k = 6..8.
   A2 Gather: one thread per (row, slot) pair, thread t = row*S + s writing vals[t] (coalesced); a
      block's rows are stepped from its first row (one 64-bit decode per block), the degree a template
      parameter, at most 32 registers (8 blocks of 256 per SM: 20% faster than 46 registers; k = 1,
      whose rows all gather from up to 2^dim macro elements, issues its loads at once instead). The
      thread finds, per direction, the at most two cells of the range that contain both its node g and
      the neighbour g+o (floor(g/k) when < N, g/k - 1 when g%k == 0 and g > 0, in ascending order), and
      sums their Ae entries starting from 0 in lexicographic order (z slowest): exactly the reference's
      additions, hence bitwise equal results. A neighbour outside the global grid gives 0.
   A4 Dirichlet: one thread per row, stores only: the identity row on global-boundary rows, 0 in the
      slots of other rows whose neighbour is on the global boundary; other entries untouched (rows not
      next to the boundary return after the test: the kernel costs about a read of the row box).

   Grid-stride loops over 64-bit indices throughout; degrees 1..PW_MAX_DEGREE in 2D and 3D. A descriptor
   that would make a kernel read or write out of its arrays (bad dim or degree, a cell range outside
   the grid, a coordinate box not holding the nodes of the cells, a row box outside the grid) is refused
   with cudaErrorInvalidValue; empty ranges launch nothing and succeed. */
#include <climits>
#include <cuda_runtime.h>
#include <cub/cub.cuh>
#include <patchwork/lor_kernel.h>
#include <patchwork/q1_element.h>

namespace {

/* The descriptor in the form the kernels use */
struct LorGeom {
  int       k, nodes[3], N[3];                /* degree, global nodes and cells per direction */
  int       cell_start[3], mc[3];             /* cell range: first cell and count per direction */
  int       coord_start[3], coord_size[3];    /* coordinate box */
  int       row_start[3], row_size[3];        /* row box */
  int       nloc, nsub;                       /* nodes and sub-elements per macro element */
  long long nmacro, nrow;                     /* macro elements in the cell range, rows in the row box */
  double    alpha, beta;
  int       vertex_rule;                      /* Gauss-Lobatto (vertex) rule of the sub-elements */
  /* the macro elements of one A1 launch: cells first + stride * i, i < count, per direction (all of
     the range with stride 1; one parity class, stride 2, for the fused route's colors) */
  int       first[3], count[3], stride;
  long long nlaunch;
};

constexpr int MACRO_THREADS = 128, ROW_THREADS = 256;

/* Box index of global node (gx,gy,gz), 64-bit */
__device__ __forceinline__ long long BoxIndex(const int start[3], const int size[3], int gx, int gy, int gz)
{
  return ((long long)(gz - start[2]) * size[1] + (gy - start[1])) * size[0] + (gx - start[0]);
}

/* Global node of row `row` of the row box */
__device__ __forceinline__ void RowNode(const LorGeom &g, long long row, int n[3])
{
  const long long plane = (long long)g.row_size[0] * g.row_size[1];
  const long long z     = row / plane;
  const long long r     = row - z * plane;
  const int       y     = (int)(r / g.row_size[0]);

  n[0] = g.row_start[0] + (int)(r - (long long)y * g.row_size[0]);
  n[1] = g.row_start[1] + y;
  n[2] = g.row_start[2] + (int)z;
}

template <int DIM>
__device__ __forceinline__ bool OnBoundary(const LorGeom &g, const int n[3])
{
#pragma unroll
  for (int d = 0; d < DIM; d++)
    if (n[d] == 0 || n[d] == g.nodes[d] - 1) return true;
  return false;
}

/* Cell (macro element) i of the launch, lexicographic over its counts */
__device__ __forceinline__ void LaunchCell(const LorGeom &g, long long i, int c[3])
{
  const long long plane = (long long)g.count[0] * g.count[1];
  const long long iz    = i / plane;
  const long long r     = i - iz * plane;
  const int       iy    = (int)(r / g.count[0]);

  c[0] = g.first[0] + g.stride * (int)(r - (long long)iy * g.count[0]);
  c[1] = g.first[1] + g.stride * iy;
  c[2] = g.first[2] + g.stride * (int)iz;
}

/* The element matrix of sub-element (sx,sy,sz) of the macro element of cell c, with the vertex rule
   or Gauss points (a template parameter: either alone fits the registers, both together spill) */
template <int DIM, int K, bool VERTEX>
__device__ __forceinline__ void SubElementMatrix(const LorGeom &g, const double *__restrict__ coords, const int c[3], int sx, int sy, int sz, double *Ke)
{
  constexpr int NV = 1 << DIM;
  double        xv[NV * DIM];

#pragma unroll
  for (int a = 0; a < NV; a++) {
    const long long p = BoxIndex(g.coord_start, g.coord_size, K * c[0] + sx + (a & 1), K * c[1] + sy + ((a >> 1) & 1), DIM == 3 ? K * c[2] + sz + ((a >> 2) & 1) : 0);
#pragma unroll
    for (int i = 0; i < DIM; i++) xv[a * DIM + i] = coords[p * DIM + i];
  }
  PatchworkQ1ElementMatrixRule(DIM, xv, g.alpha, g.beta, VERTEX, Ke);
}

/* Slot of the offset from vertex a to vertex b of a sub-element: per direction (bit of b) - (bit of a) + 1 */
template <int DIM>
__device__ __forceinline__ constexpr int VertexSlot(int a, int b)
{
  return DIM == 3 ? (((b >> 2) & 1) - ((a >> 2) & 1) + 1) * 9 + (((b >> 1) & 1) - ((a >> 1) & 1) + 1) * 3 + ((b & 1) - (a & 1) + 1)
                  : (((b >> 1) & 1) - ((a >> 1) & 1) + 1) * 3 + ((b & 1) - (a & 1) + 1);
}

/* How A1 holds macro-element matrices of degree K in shared memory (see the top of the file) */
template <int DIM, int K>
struct MacroPlan {
  static constexpr int  NV = 1 << DIM, S = DIM == 3 ? 27 : 9, N1 = K + 1;
  static constexpr int  NSUB = DIM == 3 ? K * K * K : K * K, NLOC = DIM == 3 ? N1 * N1 * N1 : N1 * N1;
  static constexpr bool DIRECT = DIM == 3 && K == 1;  /* Ae is the element matrix */
  static constexpr bool LAYERS = NSUB > MACRO_THREADS; /* 3D k >= 6 */
  /* 128 threads (256 where fewer would idle, k = 3, 6, 7, 9, measured slower on the H200) */
  static constexpr int THREADS = MACRO_THREADS;
  static constexpr int M       = DIRECT || LAYERS ? 1 : THREADS / NSUB; /* macro elements per step */
  static constexpr int LZ      = LAYERS ? THREADS / (K * K) : K;        /* sub-element layers per step */
  static constexpr int RING    = LZ + 1;                                /* node layers held */
  static constexpr int LAYER   = N1 * N1 * S;                           /* entries of a node layer (3D) */
  /* DIRECT: per warp, the 8 x 27 entries of 8 macro elements at a time, 8 x 27 + 1 apart (banks) */
  static constexpr int    DPAD = NLOC * S + 1;
  static constexpr int    TILE = DIRECT ? (THREADS / 32) * 8 * DPAD : LAYERS ? RING * LAYER : M * NLOC * S;
  static constexpr size_t SMEM = (size_t)TILE * sizeof(double);
  /* the fused route: rows of a step (DIRECT: of a warp's round) and their EmitInfo after the tile */
  static constexpr int    ROWS     = DIRECT ? 8 * NLOC : LAYERS ? (LZ + 1) * N1 * N1 : M * NLOC;
  static constexpr size_t SMEM_CSR = SMEM + (size_t)(DIRECT ? THREADS / 32 : 1) * 4 * ROWS * sizeof(int);
};

/* Add the element matrix of sub-element (sx,sy,sz) to the tile (row of vertex a at node index loc(a)),
   one color (sub-element index parities) at a time: sub-elements of one color share no node, so the
   plain read-modify-writes of a color do not race, and the colors are separated by barriers. */
template <int DIM, typename Loc>
__device__ __forceinline__ void ColoredAdd(double *tile, bool active, int sx, int sy, int sz, const double *Ke, Loc loc)
{
  constexpr int S = DIM == 3 ? 27 : 9, NV = 1 << DIM;
  const int     color = (sx & 1) | (sy & 1) << 1 | (sz & 1) << 2;

  for (int c = 0; c < NV; c++) {
    if (active && color == c) {
#pragma unroll
      for (int a = 0; a < NV; a++) {
        double *T = tile + loc(a) * S;
#pragma unroll
        for (int b = 0; b < NV; b++) T[VertexSlot<DIM>(a, b)] += Ke[a * NV + b];
      }
    }
    __syncthreads();
  }
}

/* Where the fused route writes: the one-rank CSR of the pattern (PatchworkLORPattern*(), axis_only) */
struct CSROut {
  PatchworkLORDesc d;
  int              axis_only;
  const int       *rowptr;
  double          *out;
};

/* What EmitRows needs of each row, computed once per row: where the row starts in the CSR, the
   slots the pattern stores (their ranks place the entries), those this macro element writes (the
   neighbour in it too), those it adds to (an earlier color assigned them), and UNIT_ROW for a
   Dirichlet row (its diagonal alone, 1). Arrays of the rows of a step, in shared memory after the
   tile (MacroPlan::ROWS). */
struct EmitInfo {
  int *pos, *stored, *write, *add;
  __device__ EmitInfo(int *base, int rows) : pos(base), stored(base + rows), write(base + 2 * rows), add(base + 3 * rows) { }
};
constexpr int UNIT_ROW = 1 << 30;

/* The 3^dim-slot mask of the offsets whose per-direction parts (3 bits each, bit o+1) are all set */
template <int DIM>
__device__ __forceinline__ int SlotProduct(const int m[3])
{
  int r = 0;
#pragma unroll
  for (int oz = 0; oz < (DIM == 3 ? 3 : 1); oz++)
#pragma unroll
    for (int oy = 0; oy < 3; oy++)
      if ((DIM == 2 || (m[2] >> oz) & 1) && (m[1] >> oy) & 1) r |= m[0] << (oz * 9 + oy * 3);
  return r;
}

/* Slots whose offset is 0 in direction d; slots on an axis through the centre */
template <int DIM>
__host__ __device__ constexpr int ZeroOffsetSlots(int d)
{
  int r = 0;
  for (int s = 0; s < (DIM == 3 ? 27 : 9); s++)
    if ((d == 0 ? s % 3 : d == 1 ? (s / 3) % 3 : s / 9) == 1) r |= 1 << s;
  return r;
}
template <int DIM>
__host__ __device__ constexpr int AxisSlots(void)
{
  int r = 0;
  for (int s = 0; s < (DIM == 3 ? 27 : 9); s++)
    if ((s % 3 != 1) + ((s / 3) % 3 != 1) + (DIM == 3 && s / 9 != 1) <= 1) r |= 1 << s;
  return r;
}

/* The slots the pattern stores in the row of node x (PatchworkLORSlotStored() in closed form): per
   direction the offsets whose neighbour is in the grid (and, with Dirichlet, the row inside, not on the
   boundary), their product, the axes only with axis_only; a Dirichlet row on the boundary stores its
   diagonal alone. boundary: whether x is on the global boundary. */
template <int DIM>
__device__ __forceinline__ int RowSlots(const PatchworkLORDesc &d, int axis_only, const int x[3], bool &boundary)
{
  constexpr int S = DIM == 3 ? 27 : 9;
  int           in[3] = {1, 1, 1};

  boundary = false;
#pragma unroll
  for (int i = 0; i < DIM; i++) {
    const int lo = d.dirichlet ? 2 : 1, hi = d.dirichlet ? d.nodes[i] - 3 : d.nodes[i] - 2;
    boundary     = boundary || x[i] == 0 || x[i] == d.nodes[i] - 1;
    in[i]        = (x[i] >= lo) | 2 | (x[i] <= hi) << 2;
  }
  return d.dirichlet && boundary ? 1 << (S / 2) : SlotProduct<DIM>(in) & (axis_only ? AxisSlots<DIM>() : ~0);
}

/* The fused route's write of nrows rows of macro-element matrices into the CSR, by threads t of nt
   (a block, or a warp for DIRECT; sync() is their barrier). where(i, c, l) gives row i's cell c and
   its node's local index l, tile(i) its S entries. First a thread per row computes its EmitInfo (one
   load of the row start each, all in flight together), then a thread per entry writes. The macro
   elements are processed by colors (cell parities, x fastest, in ascending order, one launch each), so
   an entry shared by several macro elements is written by them one after the other: the first (the
   even cell in every direction in which two cells hold the pair) stores it, the later ones add with a
   global reduction (no load, no wait; one at a time per entry, so the sums are deterministic). What
   the pattern stores is PatchworkLORSlotStored() in closed form: per direction the offsets whose
   neighbour is in the grid (and, with Dirichlet, not on the boundary), their product, the axes only
   with axis_only; a Dirichlet row stores its diagonal alone. */
template <int DIM, int K, typename Where, typename Tile, typename Sync>
__device__ __forceinline__ void EmitRows(const LorGeom &g, const CSROut &o, const EmitInfo &info, int t, int nt, int nrows, Where where, Tile tile, Sync sync)
{
  constexpr int S = DIM == 3 ? 27 : 9;

  for (int i = t; i < nrows; i += nt) {
    int  c[3] = {0, 0, 0}, l[3] = {0, 0, 0}, x[3] = {0, 0, 0}, mine[3] = {1, 1, 1}, nf = 0;
    bool boundary;

    where(i, c, l);
#pragma unroll
    for (int d = 0; d < DIM; d++) {
      x[d]    = K * c[d] + l[d];
      mine[d] = (l[d] >= 1) | 2 | (l[d] <= K - 1) << 2;
      /* another cell holds the pairs of offset 0 in this direction and comes first (it is even) */
      if (((l[d] == 0 && c[d] > g.cell_start[d]) || (l[d] == K && c[d] + 1 < g.cell_start[d] + g.mc[d])) && (c[d] & 1)) nf |= ZeroOffsetSlots<DIM>(d);
    }
    const long long row    = x[0] + (long long)g.nodes[0] * (x[1] + (long long)g.nodes[1] * x[2]);
    const int       stored = RowSlots<DIM>(o.d, o.axis_only, x, boundary);
    const int       write  = stored & SlotProduct<DIM>(mine);

    info.pos[i]    = o.rowptr[row];
    info.stored[i] = stored;
    info.write[i]  = write | (o.d.dirichlet && boundary ? UNIT_ROW : 0);
    info.add[i]    = write & nf;
  }
  sync();
  for (int j = t; j < nrows * S; j += nt) {
    const int i = j / S, s = j % S, w = info.write[i];

    if (!((w >> s) & 1)) continue;
    double *v = o.out + info.pos[i] + __popc(info.stored[i] & ((1 << s) - 1));
    if ((info.add[i] >> s) & 1) {
      if (!(w & UNIT_ROW)) atomicAdd(v, tile(i)[s]);
    } else *v = w & UNIT_ROW ? 1.0 : tile(i)[s];
  }
}

/* A1 (see the top of the file for the three paths); CSR: the fused route, the macro elements of one
   color, each tile's rows written into the CSR (EmitRows) instead of Ae */
template <int DIM, int K, bool CSR, bool VERTEX>
__global__ void __launch_bounds__(MacroPlan<DIM, K>::THREADS) Macro(const LorGeom g, const double *__restrict__ coords, double *__restrict__ Ae, const __grid_constant__ CSROut o)
{
  using P = MacroPlan<DIM, K>;
  constexpr int NV = P::NV, S = P::S, N1 = P::N1, NSUB = P::NSUB, NLOC = P::NLOC, TILE = P::TILE, THREADS = P::THREADS;
  extern __shared__ double tile[];
  double                   Ke[NV * NV];
  const int                warp = (int)threadIdx.x / 32;
  /* the fused route's row information: per warp for DIRECT, else one for the block */
  EmitInfo info((int *)(tile + TILE) + (P::DIRECT ? warp * 4 * P::ROWS : 0), P::ROWS);

  if constexpr (P::DIRECT) {
    /* 3D k = 1: thread = macro element, whose 8 x 27 entries are its element matrix's and zeros. A warp
       writes them through its part of the tile, 8 macro elements per round, then copies the 8 x 216
       consecutive entries out coalesced (or writes their 64 rows into the CSR). */
    constexpr int DPAD = P::DPAD, R = 8;
    const int     lane = threadIdx.x % 32;
    double       *buf  = tile + warp * R * DPAD;
    for (long long e0 = blockIdx.x * (long long)THREADS + threadIdx.x - lane; e0 < g.nlaunch; e0 += (long long)gridDim.x * THREADS) {
      const long long e      = e0 + lane;
      const bool      active = e < g.nlaunch;
      int             c[3];
      if (active) {
        LaunchCell(g, e, c);
        SubElementMatrix<DIM, K, VERTEX>(g, coords, c, 0, 0, 0, Ke);
      }
      for (int round = 0; round < 32 / R; round++) {
        if (active && lane / R == round) {
          double *B = buf + (lane % R) * DPAD;
#pragma unroll
          for (int a = 0; a < NV; a++)
#pragma unroll
            for (int s = 0; s < S; s++) {
              const int bx = (a & 1) + s % 3 - 1, by = ((a >> 1) & 1) + (s / 3) % 3 - 1, bz = ((a >> 2) & 1) + s / 9 - 1;
              B[a * S + s] = bx < 0 || bx > 1 || by < 0 || by > 1 || bz < 0 || bz > 1 ? 0.0 : Ke[a * NV + (bz * 2 + by) * 2 + bx];
            }
        }
        __syncwarp();
        const long long first = e0 + round * R;
        const int       cnt   = first < g.nlaunch ? (int)min((long long)R, g.nlaunch - first) : 0;
        if constexpr (CSR) {
          EmitRows<DIM, K>(
            g, o, info, lane, 32, cnt * NV,
            [&](int i, int *cc, int *l) {
              LaunchCell(g, first + i / NV, cc);
              l[0] = i & 1;
              l[1] = (i >> 1) & 1;
              l[2] = (i >> 2) & 1;
            },
            [&](int i) { return buf + (i / NV) * DPAD + (i % NV) * S; }, [] { __syncwarp(); });
        } else {
          double *A = Ae + first * (NLOC * S);
          for (int i = lane; i < cnt * (NLOC * S); i += 32) A[i] = buf[(i / (NLOC * S)) * DPAD + i % (NLOC * S)];
        }
        __syncwarp();
      }
    }
  } else if constexpr (!P::LAYERS) { /* M whole macro elements per step, tile = their Ae */
    const long long nstep = (g.nlaunch + P::M - 1) / P::M;
    for (int i = threadIdx.x; i < TILE; i += THREADS) tile[i] = 0;
    __syncthreads();
    for (long long step = blockIdx.x; step < nstep; step += gridDim.x) {
      const long long e0 = step * P::M;
      const int       m = (int)min((long long)P::M, g.nlaunch - e0), t = threadIdx.x, me = t / NSUB, sub = t % NSUB;
      const int       sx = sub % K, sy = (sub / K) % K, sz = DIM == 3 ? sub / (K * K) : 0;
      const bool      active = t < m * NSUB;
      int             c[3];

      if (active) {
        LaunchCell(g, e0 + me, c);
        SubElementMatrix<DIM, K, VERTEX>(g, coords, c, sx, sy, sz, Ke);
      }
      ColoredAdd<DIM>(tile, active, sx, sy, sz, Ke, [&](int a) { return me * NLOC + ((sz + ((a >> 2) & 1)) * N1 + sy + ((a >> 1) & 1)) * N1 + sx + (a & 1); });
      if constexpr (CSR) {
        EmitRows<DIM, K>(
          g, o, info, threadIdx.x, THREADS, m * NLOC,
          [&](int i, int *cc, int *l) {
            const int r = i % NLOC;
            LaunchCell(g, e0 + i / NLOC, cc);
            l[0] = r % N1;
            l[1] = (r / N1) % N1;
            l[2] = DIM == 3 ? r / (N1 * N1) : 0;
          },
          [&](int i) { return tile + i * S; }, [] { __syncthreads(); });
        __syncthreads();
        for (int i = threadIdx.x; i < m * NLOC * S; i += THREADS) tile[i] = 0;
      } else {
        /* copy out (coalesced) and zero for the next step: each thread its own entries */
        double *A = Ae + e0 * (NLOC * S);
        for (int i = threadIdx.x; i < m * NLOC * S; i += THREADS) {
          A[i]    = tile[i];
          tile[i] = 0;
        }
      }
      __syncthreads();
    }
  } else { /* 3D k >= 6: one macro element per block, LZ sub-element layers per step, node layers in a ring */
    constexpr int LZ = P::LZ, RING = P::RING, LAYER = P::LAYER;
    for (int i = threadIdx.x; i < TILE; i += THREADS) tile[i] = 0;
    __syncthreads();
    for (long long e = blockIdx.x; e < g.nlaunch; e += gridDim.x) {
      double *A = CSR ? nullptr : Ae + e * (NLOC * S);
      int     c[3];
      LaunchCell(g, e, c);
      for (int z0 = 0; z0 < K; z0 += LZ) {
        const int  nl = min(LZ, K - z0), t = threadIdx.x, sz = z0 + t / (K * K), sy = (t / K) % K, sx = t % K;
        const bool active = t < nl * K * K;

        if (active) SubElementMatrix<DIM, K, VERTEX>(g, coords, c, sx, sy, sz, Ke);
        ColoredAdd<DIM>(tile, active, sx, sy, sz, Ke, [&](int a) { return ((sz + ((a >> 2) & 1)) % RING * N1 + sy + ((a >> 1) & 1)) * N1 + sx + (a & 1); });
        /* node layers z0 .. z0+nl-1 are complete (layer l takes sub-element layers l-1 and l), and at
           the end layer K; the last layer of the step stays for the next. Copy out (or write into the
           CSR) and zero. */
        const int lo = z0, hi = z0 + nl == K ? K : z0 + nl - 1;
        if constexpr (CSR) {
          EmitRows<DIM, K>(
            g, o, info, threadIdx.x, THREADS, (hi - lo + 1) * N1 * N1,
            [&](int i, int *cc, int *l) {
              cc[0] = c[0];
              cc[1] = c[1];
              cc[2] = c[2];
              l[0]  = i % N1;
              l[1]  = (i / N1) % N1;
              l[2]  = lo + i / (N1 * N1);
            },
            [&](int i) { return tile + ((lo + i / (N1 * N1)) % RING * N1 * N1 + i % (N1 * N1)) * S; }, [] { __syncthreads(); });
          __syncthreads();
        }
        for (int i = threadIdx.x; i < (hi - lo + 1) * LAYER; i += THREADS) {
          const int lz = lo + i / LAYER, j = (lz % RING) * LAYER + i % LAYER;
          if constexpr (!CSR) A[lo * LAYER + i] = tile[j];
          tile[j] = 0;
        }
        __syncthreads();
      }
    }
  }
}

/* Cells along one direction, in the range, that contain node x and node x+o: at most two, and then
   consecutive (x/K - 1 and x/K), so returned as the first and the count */
template <int K>
__device__ __forceinline__ int CellsAlong(int N, int start, int count, int x, int o, int *first)
{
  int m = 0;

  *first = 0;
  if (x % K == 0 && x > 0) {
    const int cl = x / K - 1;
    if (cl >= start && cl < start + count && x + o >= K * cl && x + o <= K * cl + K) {
      *first = cl;
      m      = 1;
    }
  }
  if (x / K < N) {
    const int cl = x / K;
    if (cl >= start && cl < start + count && x + o >= K * cl && x + o <= K * cl + K) {
      if (!m) *first = cl;
      m++;
    }
  }
  return m;
}

/* A2's sum for slot s of the row of node x: the Ae entries of the macro elements in the range that
   hold both x and its neighbour, from 0 in lexicographic order (z slowest): exactly the reference's
   additions; 0 for a neighbour outside the global grid. Gather and GatherCSR share it. */
template <int DIM, int K>
__device__ __forceinline__ double SlotSum(const LorGeom &g, const double *__restrict__ Ae, const int x[3], int s)
{
  constexpr int S = DIM == 3 ? 27 : 9, N1 = K + 1;
  const int     o[3] = {s % 3 - 1, (s / 3) % 3 - 1, DIM == 3 ? s / 9 - 1 : 0};
  int           c0[3] = {0, 0, 0}, nc[3] = {1, 1, 1};
  bool          inside = true;
  double        v      = 0;
#pragma unroll
  for (int d = 0; d < DIM; d++) {
    if (x[d] + o[d] < 0 || x[d] + o[d] >= g.nodes[d]) inside = false;
    nc[d] = CellsAlong<K>(g.N[d], g.cell_start[d], g.mc[d], x[d], o[d], &c0[d]);
  }
  auto at = [&](int ix, int iy, int iz) {
    const int       cx = c0[0] + ix, cy = c0[1] + iy, cz = c0[2] + iz;
    const long long e  = ((long long)(cz - g.cell_start[2]) * g.mc[1] + (cy - g.cell_start[1])) * g.mc[0] + (cx - g.cell_start[0]);
    const int       r  = DIM == 3 ? ((x[2] - K * cz) * N1 + x[1] - K * cy) * N1 + x[0] - K * cx : (x[1] - K * cy) * N1 + x[0] - K * cx;
    return Ae + (e * g.nloc + r) * S + s;
  };
  if constexpr (K == 1) {
    /* every node is a corner of up to 2^dim macro elements: issue all loads, then add in order */
    double w[8];
    bool   ok[8];
#pragma unroll
    for (int j = 0; j < 8; j++) {
      ok[j] = inside && (j & 1) < nc[0] && ((j >> 1) & 1) < nc[1] && (j >> 2) < nc[2];
      w[j]  = ok[j] ? *at(j & 1, (j >> 1) & 1, j >> 2) : 0.0;
    }
#pragma unroll
    for (int j = 0; j < 8; j++)
      if (ok[j]) v += w[j];
  } else if (inside) {
    for (int iz = 0; iz < nc[2]; iz++)
      for (int iy = 0; iy < nc[1]; iy++)
        for (int ix = 0; ix < nc[0]; ix++) v += *at(ix, iy, iz);
  }
  return v;
}

/* A2: thread t = row*S + s. The block's threads cover consecutive t, so their rows are the block's
   first row plus at most ROW_THREADS/S + 1: one thread decodes that first row (64-bit divisions by
   the box sizes), the others step from it (the integer work, not the memory traffic, bounded this
   kernel with a division per thread). The degree is a template parameter (divisions by constants). */
template <int DIM, int K>
__global__ void __launch_bounds__(ROW_THREADS, K == 1 ? 1 : 8) Gather(const LorGeom g, const double *__restrict__ Ae, double *__restrict__ vals)
{
  constexpr int   S = DIM == 3 ? 27 : 9;
  const long long total = g.nrow * S;
  __shared__ int  first[3];

  for (long long t0 = blockIdx.x * (long long)ROW_THREADS; t0 < total; t0 += (long long)gridDim.x * ROW_THREADS) {
    const long long row0 = t0 / S;
    if (threadIdx.x == 0) {
      int x[3];
      RowNode(g, row0, x);
      first[0] = x[0];
      first[1] = x[1];
      first[2] = x[2];
    }
    __syncthreads();
    int x[3] = {first[0], first[1], first[2]};
    __syncthreads(); /* first[] is rewritten in the next iteration */
    const long long t = t0 + threadIdx.x;
    if (t >= total) continue;
    const int q = (int)(t0 - row0 * S) + (int)threadIdx.x, s = q % S; /* t = (row0 + q/S)*S + q%S */
    x[0] += q / S;
    while (x[0] >= g.row_start[0] + g.row_size[0]) {
      x[0] -= g.row_size[0];
      if (++x[1] >= g.row_start[1] + g.row_size[1]) {
        x[1] = g.row_start[1];
        x[2]++;
      }
    }
    vals[t] = SlotSum<DIM, K>(g, Ae, x, s);
  }
}

/* A2, A4 and A3 fused for the one-rank CSR route (PatchworkLORGatherCSRCUDA): a warp per row in 3D
   (27 lanes), per 3 rows in 2D (9 lanes each), lane s of a row for slot s, so the lanes read the Ae
   entries of a macro element row side by side as Gather's threads do. Whether the slot is stored is
   the pattern's own test (PatchworkLORSlotStored); a ballot over the row's lanes gives each stored
   slot its rank, hence its place in the row of the CSR (no rows x slots array, no map). A Dirichlet
   row stores its diagonal alone, 1; other values are Gather's sums, in Gather's order: bitwise equal
   to Gather, Dirichlet and Compact. */
template <int DIM, int K>
__global__ void __launch_bounds__(ROW_THREADS) GatherCSR(const LorGeom g, const __grid_constant__ PatchworkLORDesc d, int axis_only, const double *__restrict__ Ae, const int *__restrict__ rowptr, double *__restrict__ out)
{
  constexpr int S = DIM == 3 ? 27 : 9, RPW = 32 / S; /* rows per warp */
  const int     lane = (int)(threadIdx.x & 31), grp = lane / S, s = lane % S;
  const long long warps = (long long)gridDim.x * (ROW_THREADS / 32);

  for (long long w = blockIdx.x * (long long)(ROW_THREADS / 32) + threadIdx.x / 32; w * RPW < g.nrow; w += warps) {
    const long long row = w * RPW + grp;
    const bool      active = grp < RPW && row < g.nrow;
    int             x[3] = {0, 0, 0};

    if (active) { /* whole grid: the row is the node's lexicographic index */
      const long long plane = (long long)g.nodes[0] * g.nodes[1];
      x[2]                  = (int)(row / plane);
      x[1]                  = (int)((row - x[2] * plane) / g.nodes[0]);
      x[0]                  = (int)(row - x[2] * plane - (long long)x[1] * g.nodes[0]);
    }
    const bool     stored = active && PatchworkLORSlotStored(&d, axis_only, x, s);
    const unsigned mask   = __ballot_sync(0xffffffffu, stored) >> (grp * S);
    if (!stored) continue;
    const long long pos = rowptr[row] + __popc(mask & ((1u << s) - 1u));
    if (d.dirichlet && OnBoundary<DIM>(g, x)) {
      out[pos] = 1.0;
      continue;
    }
    out[pos] = SlotSum<DIM, K>(g, Ae, x, s);
  }
}

/* A4: one thread per row; only rows on or next to the global boundary store anything */
template <int DIM>
__global__ void __launch_bounds__(ROW_THREADS) Dirichlet(const LorGeom g, double *__restrict__ vals)
{
  constexpr int S = DIM == 3 ? 27 : 9, CENTER = S / 2;

  for (long long row = blockIdx.x * (long long)blockDim.x + threadIdx.x; row < g.nrow; row += (long long)gridDim.x * blockDim.x) {
    double *v = vals + row * S;
    int     x[3];
    bool    near = false;

    RowNode(g, row, x);
    if (OnBoundary<DIM>(g, x)) {
#pragma unroll
      for (int s = 0; s < S; s++) v[s] = s == CENTER ? 1.0 : 0.0;
      continue;
    }
#pragma unroll
    for (int d = 0; d < DIM; d++) near = near || x[d] == 1 || x[d] == g.nodes[d] - 2;
    if (!near) continue;
#pragma unroll
    for (int s = 0; s < S; s++) {
      const int nb[3] = {x[0] + s % 3 - 1, x[1] + (s / 3) % 3 - 1, x[2] + (DIM == 3 ? s / 9 - 1 : 0)};
      if (OnBoundary<DIM>(g, nb)) v[s] = 0.0;
    }
  }
}

/* ---------------------------------------------------------------------------------------------- */
/* Host side */

enum { USE_CELLS = 1, USE_COORDS = 2, USE_ROWS = 4 };

/* Validate what the kernel `use` reads and writes through; fill *g. cudaErrorInvalidValue for a bad
   descriptor. */
static cudaError_t MakeGeom(const PatchworkLORDesc *d, int use, LorGeom *g)
{
  if (!d || (d->dim != 2 && d->dim != 3)) return cudaErrorInvalidValue;
  const int k = d->degree;
  if (k < 1 || k > PW_MAX_DEGREE) return cudaErrorInvalidValue;
  g->k = k;
  for (int dir = 0; dir < 3; dir++) {
    if (dir >= d->dim) {
      if (d->nodes[dir] != 1) return cudaErrorInvalidValue;
      if ((use & USE_CELLS) && (d->cell_start[dir] != 0 || d->cell_end[dir] != 1)) return cudaErrorInvalidValue;
      if ((use & USE_COORDS) && (d->coord_start[dir] != 0 || d->coord_size[dir] != 1)) return cudaErrorInvalidValue;
      if ((use & USE_ROWS) && (d->row_start[dir] != 0 || d->row_size[dir] != 1)) return cudaErrorInvalidValue;
      g->N[dir] = 1;
    } else {
      if (d->nodes[dir] < k + 1 || (d->nodes[dir] - 1) % k) return cudaErrorInvalidValue;
      g->N[dir] = (d->nodes[dir] - 1) / k;
      if ((use & USE_CELLS) && (d->cell_start[dir] < 0 || d->cell_end[dir] > g->N[dir])) return cudaErrorInvalidValue;
      if ((use & USE_ROWS) && d->row_size[dir] > 0 && (d->row_start[dir] < 0 || d->row_start[dir] + d->row_size[dir] > d->nodes[dir])) return cudaErrorInvalidValue;
    }
    g->nodes[dir]       = d->nodes[dir];
    g->cell_start[dir]  = d->cell_start[dir];
    g->mc[dir]          = d->cell_end[dir] > d->cell_start[dir] ? d->cell_end[dir] - d->cell_start[dir] : 0;
    g->coord_start[dir] = d->coord_start[dir];
    g->coord_size[dir]  = d->coord_size[dir];
    g->row_start[dir]   = d->row_start[dir];
    g->row_size[dir]    = d->row_size[dir] > 0 ? d->row_size[dir] : 0;
  }
  g->nloc   = PatchworkLORMacroNodes(d);
  g->nsub   = d->dim == 3 ? k * k * k : k * k;
  g->nmacro = (long long)g->mc[0] * g->mc[1] * g->mc[2];
  g->nrow   = (long long)g->row_size[0] * g->row_size[1] * g->row_size[2];
  g->alpha  = d->alpha;
  g->beta   = d->beta;
  g->vertex_rule = d->vertex_rule;
  for (int dir = 0; dir < 3; dir++) {
    g->first[dir] = g->cell_start[dir];
    g->count[dir] = g->mc[dir];
  }
  g->stride  = 1;
  g->nlaunch = g->nmacro;
  if ((use & USE_COORDS) && g->nmacro > 0)
    for (int dir = 0; dir < d->dim; dir++) {
      const int lo = k * d->cell_start[dir], hi = k * d->cell_end[dir];
      if (d->coord_start[dir] > lo || hi >= d->coord_start[dir] + d->coord_size[dir]) return cudaErrorInvalidValue;
    }
  return cudaSuccess;
}

/* Blocks for `work` threads of `threads` per block, grid-stride beyond 2^31 - 1 blocks */
static unsigned Blocks(long long work, int threads)
{
  const long long need = (work + threads - 1) / threads, most = 0x7fffffffLL;
  return (unsigned)(need < most ? need : most);
}

template <int DIM, int K, bool CSR, bool VERTEX>
static cudaError_t LaunchMacroRule(const LorGeom &g, const double *coords, double *Ae, const CSROut &o, cudaStream_t s)
{
  using P = MacroPlan<DIM, K>;
  static bool attr = false; /* the stage exceeds the default 48 KB of dynamic shared memory */

  if (!attr) {
    const cudaError_t err = cudaFuncSetAttribute(Macro<DIM, K, CSR, VERTEX>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)(CSR ? P::SMEM_CSR : P::SMEM));
    if (err != cudaSuccess) return err;
    attr = true;
  }
  const long long steps = P::DIRECT ? (g.nlaunch + P::THREADS - 1) / P::THREADS : P::LAYERS ? g.nlaunch : (g.nlaunch + P::M - 1) / P::M;
  Macro<DIM, K, CSR, VERTEX><<<(unsigned)(steps < 0x7fffffffLL ? steps : 0x7fffffffLL), P::THREADS, CSR ? P::SMEM_CSR : P::SMEM, s>>>(g, coords, Ae, o);
  return cudaGetLastError();
}

template <int DIM, int K, bool CSR>
static cudaError_t LaunchMacro(const LorGeom &g, const double *coords, double *Ae, const CSROut &o, cudaStream_t s)
{
  return g.vertex_rule ? LaunchMacroRule<DIM, K, CSR, true>(g, coords, Ae, o, s) : LaunchMacroRule<DIM, K, CSR, false>(g, coords, Ae, o, s);
}

/* A1 into Ae (o unused), or the fused route into the CSR o (g one color's launch) */
template <int DIM, bool CSR>
static cudaError_t MacroDispatch(const LorGeom &g, const double *coords, double *Ae, const CSROut &o, cudaStream_t s)
{
  switch (g.k) {
  case 1: return LaunchMacro<DIM, 1, CSR>(g, coords, Ae, o, s);
  case 2: return LaunchMacro<DIM, 2, CSR>(g, coords, Ae, o, s);
  case 3: return LaunchMacro<DIM, 3, CSR>(g, coords, Ae, o, s);
  case 4: return LaunchMacro<DIM, 4, CSR>(g, coords, Ae, o, s);
  case 5: return LaunchMacro<DIM, 5, CSR>(g, coords, Ae, o, s);
  case 6: return LaunchMacro<DIM, 6, CSR>(g, coords, Ae, o, s);
  case 7: return LaunchMacro<DIM, 7, CSR>(g, coords, Ae, o, s);
  case 8: return LaunchMacro<DIM, 8, CSR>(g, coords, Ae, o, s);
  case 9: return LaunchMacro<DIM, 9, CSR>(g, coords, Ae, o, s);
  default: return LaunchMacro<DIM, 10, CSR>(g, coords, Ae, o, s); /* k <= PW_MAX_DEGREE = 10, checked */
  }
}

template <int DIM>
static void LaunchGather(const LorGeom &g, unsigned blocks, cudaStream_t s, const double *Ae, double *vals)
{
  switch (g.k) {
  case 1: Gather<DIM, 1><<<blocks, ROW_THREADS, 0, s>>>(g, Ae, vals); break;
  case 2: Gather<DIM, 2><<<blocks, ROW_THREADS, 0, s>>>(g, Ae, vals); break;
  case 3: Gather<DIM, 3><<<blocks, ROW_THREADS, 0, s>>>(g, Ae, vals); break;
  case 4: Gather<DIM, 4><<<blocks, ROW_THREADS, 0, s>>>(g, Ae, vals); break;
  case 5: Gather<DIM, 5><<<blocks, ROW_THREADS, 0, s>>>(g, Ae, vals); break;
  case 6: Gather<DIM, 6><<<blocks, ROW_THREADS, 0, s>>>(g, Ae, vals); break;
  case 7: Gather<DIM, 7><<<blocks, ROW_THREADS, 0, s>>>(g, Ae, vals); break;
  case 8: Gather<DIM, 8><<<blocks, ROW_THREADS, 0, s>>>(g, Ae, vals); break;
  case 9: Gather<DIM, 9><<<blocks, ROW_THREADS, 0, s>>>(g, Ae, vals); break;
  default: Gather<DIM, 10><<<blocks, ROW_THREADS, 0, s>>>(g, Ae, vals); break; /* k <= PW_MAX_DEGREE = 10, checked */
  }
}

template <int DIM>
static void LaunchGatherCSR(const LorGeom &g, unsigned blocks, cudaStream_t s, const PatchworkLORDesc &d, int axis_only, const double *Ae, const int *rowptr, double *out)
{
  switch (g.k) {
  case 1: GatherCSR<DIM, 1><<<blocks, ROW_THREADS, 0, s>>>(g, d, axis_only, Ae, rowptr, out); break;
  case 2: GatherCSR<DIM, 2><<<blocks, ROW_THREADS, 0, s>>>(g, d, axis_only, Ae, rowptr, out); break;
  case 3: GatherCSR<DIM, 3><<<blocks, ROW_THREADS, 0, s>>>(g, d, axis_only, Ae, rowptr, out); break;
  case 4: GatherCSR<DIM, 4><<<blocks, ROW_THREADS, 0, s>>>(g, d, axis_only, Ae, rowptr, out); break;
  case 5: GatherCSR<DIM, 5><<<blocks, ROW_THREADS, 0, s>>>(g, d, axis_only, Ae, rowptr, out); break;
  case 6: GatherCSR<DIM, 6><<<blocks, ROW_THREADS, 0, s>>>(g, d, axis_only, Ae, rowptr, out); break;
  case 7: GatherCSR<DIM, 7><<<blocks, ROW_THREADS, 0, s>>>(g, d, axis_only, Ae, rowptr, out); break;
  case 8: GatherCSR<DIM, 8><<<blocks, ROW_THREADS, 0, s>>>(g, d, axis_only, Ae, rowptr, out); break;
  case 9: GatherCSR<DIM, 9><<<blocks, ROW_THREADS, 0, s>>>(g, d, axis_only, Ae, rowptr, out); break;
  default: GatherCSR<DIM, 10><<<blocks, ROW_THREADS, 0, s>>>(g, d, axis_only, Ae, rowptr, out); break; /* k <= PW_MAX_DEGREE = 10, checked */
  }
}

} // namespace

extern "C" int PatchworkLORMacroCUDA(const PatchworkLORDesc *d, const double *coords, double *Ae, void *stream)
{
  LorGeom     g;
  cudaError_t err = MakeGeom(d, USE_CELLS | USE_COORDS, &g);

  if (err != cudaSuccess) return (int)err;
  if (g.nmacro <= 0) return (int)cudaSuccess;
  const CSROut o = {};
  if (d->dim == 3) return (int)MacroDispatch<3, false>(g, coords, Ae, o, (cudaStream_t)stream);
  return (int)MacroDispatch<2, false>(g, coords, Ae, o, (cudaStream_t)stream);
}

extern "C" int PatchworkLORGatherCUDA(const PatchworkLORDesc *d, const double *Ae, double *vals, void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  LorGeom      g;
  cudaError_t  err = MakeGeom(d, USE_CELLS | USE_ROWS, &g);

  if (err != cudaSuccess) return (int)err;
  if (g.nrow <= 0) return (int)cudaSuccess;
  const unsigned blocks = Blocks(g.nrow * PatchworkLORSlots(d), ROW_THREADS);
  if (d->dim == 3) LaunchGather<3>(g, blocks, s, Ae, vals);
  else LaunchGather<2>(g, blocks, s, Ae, vals);
  return (int)cudaGetLastError();
}

extern "C" int PatchworkLORDirichletCUDA(const PatchworkLORDesc *d, double *vals, void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  LorGeom      g;
  cudaError_t  err = MakeGeom(d, USE_ROWS, &g);

  if (err != cudaSuccess) return (int)err;
  if (!d->dirichlet || g.nrow <= 0) return (int)cudaSuccess;
  const unsigned blocks = Blocks(g.nrow, ROW_THREADS);
  if (d->dim == 3) Dirichlet<3><<<blocks, ROW_THREADS, 0, s>>>(g, vals);
  else Dirichlet<2><<<blocks, ROW_THREADS, 0, s>>>(g, vals);
  return (int)cudaGetLastError();
}

namespace {
__global__ void Compact(long long n, const long long *__restrict__ map, const double *__restrict__ vals, double *__restrict__ out)
{
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) out[i] = vals[map[i]];
}
/* DMPlex: one thread per sub-cell, its element matrix in registers (the loops unroll for DIM) */
template <int DIM>
__global__ void PlexValues(PatchworkLORPlexDesc d, long long nsubs, int nsub, const double *coords, const double *reaction, const double *diffusion, const unsigned char *mask, const long long *offset, double *v)
{
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < nsubs; i += (long long)gridDim.x * blockDim.x) PatchworkLORPlexSubcell(DIM, &d, (long)(i / nsub), (int)(i % nsub), coords, reaction, diffusion, mask[i], v + offset[i]);
}
/* the same with hanging nodes: a thread a sub-cell, its entries spread over the nodes' terms */
template <int DIM>
__global__ void PlexHangingValues(PatchworkLORPlexDesc d, long long nsubs, int nsub, const double *coords, const double *reaction, const double *diffusion, const int *xptr, const double *xw, const long long *offset, double *v)
{
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < nsubs; i += (long long)gridDim.x * blockDim.x) (void)PatchworkLORPlexSubcellHanging(DIM, &d, (long)(i / nsub), (int)(i % nsub), coords, reaction, diffusion, xptr, xw, v + offset[i]);
}
} // namespace

extern "C" int PatchworkLORPlexHangingValuesCUDA(const PatchworkLORPlexDesc *d, const double *coords, const double *reaction, const double *diffusion, const int *xptr, const double *xw, const long long *offset, double *v, void *stream)
{
  const int       nsub  = d->dim == 3 ? d->degree * d->degree * d->degree : d->degree * d->degree;
  const long long nsubs = (long long)d->ncells * nsub;

  if (nsubs <= 0) return (int)cudaSuccess;
  if (d->dim == 3) PlexHangingValues<3><<<Blocks(nsubs, 128), 128, 0, (cudaStream_t)stream>>>(*d, nsubs, nsub, coords, reaction, diffusion, xptr, xw, offset, v);
  else PlexHangingValues<2><<<Blocks(nsubs, 128), 128, 0, (cudaStream_t)stream>>>(*d, nsubs, nsub, coords, reaction, diffusion, xptr, xw, offset, v);
  return (int)cudaGetLastError();
}

extern "C" int PatchworkLORPlexValuesCUDA(const PatchworkLORPlexDesc *d, const double *coords, const double *reaction, const double *diffusion, const unsigned char *mask, const long long *offset, double *v, void *stream)
{
  const int       nsub  = d->dim == 3 ? d->degree * d->degree * d->degree : d->degree * d->degree;
  const long long nsubs = (long long)d->ncells * nsub;

  if (nsubs <= 0) return (int)cudaSuccess;
  if (d->dim == 3) PlexValues<3><<<Blocks(nsubs, 128), 128, 0, (cudaStream_t)stream>>>(*d, nsubs, nsub, coords, reaction, diffusion, mask, offset, v);
  else PlexValues<2><<<Blocks(nsubs, 128), 128, 0, (cudaStream_t)stream>>>(*d, nsubs, nsub, coords, reaction, diffusion, mask, offset, v);
  return (int)cudaGetLastError();
}

extern "C" int PatchworkLORCompactCUDA(long n, const long long *map, const double *vals, double *out, void *stream)
{
  if (n <= 0) return (int)cudaSuccess;
  Compact<<<Blocks(n, 256), 256, 0, (cudaStream_t)stream>>>(n, map, vals, out);
  return (int)cudaGetLastError();
}

namespace {
/* The pattern (the reference: PatchworkLORPatternCountRef/FillRef), the rows' stored slots in closed
   form (RowSlots). Count: len[row] = stored slots of the row, len[nrow] = 0 (the exclusive scan then
   ends with nnz); a thread per row. */
template <int DIM>
__global__ void PatternCount(const PatchworkLORDesc d, int axis_only, long long nrow, long long *len)
{
  for (long long row = blockIdx.x * (long long)blockDim.x + threadIdx.x; row <= nrow; row += (long long)gridDim.x * blockDim.x) {
    int  x[3];
    bool boundary;

    if (row == nrow) {
      len[row] = 0;
      continue;
    }
    PatchworkLORRowNode(&d, (long)row, x);
    len[row] = __popc(RowSlots<DIM>(d, axis_only, x, boundary));
  }
}

/* Fill: a block takes ROW_THREADS rows at a time, a thread per row finds its stored slots and start,
   then a thread per (row, slot) writes the column (the row box is the whole grid: the neighbour's
   row is row + the slot's offset), so that consecutive threads write consecutive entries (a thread
   per row writing its 27 took 6.6 ms at 8M rows on the H100, its stores 108 bytes apart) */
template <int DIM>
__global__ void __launch_bounds__(ROW_THREADS) PatternFill(const PatchworkLORDesc d, int axis_only, long long nrow, const long long *__restrict__ rowptr, int *__restrict__ cols, long long *__restrict__ keep)
{
  constexpr int        S = DIM == 3 ? 27 : 9;
  __shared__ long long start[ROW_THREADS];
  __shared__ int       stored[ROW_THREADS];
  const long long      plane = (long long)d.nodes[0] * d.nodes[1];

  for (long long r0 = blockIdx.x * (long long)ROW_THREADS; r0 < nrow; r0 += (long long)gridDim.x * ROW_THREADS) {
    const long long row = r0 + threadIdx.x;
    const int       nr  = (int)min((long long)ROW_THREADS, nrow - r0);

    if (row < nrow) {
      int  x[3];
      bool boundary;

      PatchworkLORRowNode(&d, (long)row, x);
      stored[threadIdx.x] = RowSlots<DIM>(d, axis_only, x, boundary);
      start[threadIdx.x]  = rowptr[row];
    }
    __syncthreads();
    for (int j = threadIdx.x; j < nr * S; j += ROW_THREADS) {
      const int i = j / S, s = j % S, m = stored[i];

      if (!((m >> s) & 1)) continue;
      const long long e = start[i] + __popc(m & ((1 << s) - 1));
      const long long o = (s % 3 - 1) + (long long)d.nodes[0] * ((s / 3) % 3 - 1) + (DIM == 3 ? plane * (s / 9 - 1) : 0);

      cols[e] = (int)(r0 + i + o);
      if (keep) keep[e] = (r0 + i) * S + s;
    }
    __syncthreads();
  }
}

/* The split pattern of a rank's rows (the reference: PatchworkLORSplitPattern{Count,Fill}Ref), a thread
   per row sorting its at most 27 columns (PatchworkLORRowColumns, shared with the reference). Count:
   the two blocks' row lengths (and a last entry, so that the exclusive scans end with the totals); *bad counts rows whose own node
   is not global row rstart + row. */
__global__ void SplitCount(const PatchworkLORDesc d, int axis_only, const long long *__restrict__ l2g, long long rstart, long long rend, long long nrow, int *dlen, int *olen, int *bad)
{
  for (long long row = blockIdx.x * (long long)blockDim.x + threadIdx.x; row <= nrow; row += (long long)gridDim.x * blockDim.x) {
    long long col[PW_LOR_MAX_SLOTS];
    int       slot[PW_LOR_MAX_SLOTS], m, nd = 0;

    if (row == nrow) {
      dlen[row] = olen[row] = 0;
      continue;
    }
    m = PatchworkLORRowColumns(&d, axis_only, l2g, (long)row, col, slot);
    if (PatchworkLORRowGlobal(&d, l2g, (long)row) != rstart + row) atomicAdd(bad, 1);
    for (int q = 0; q < m; q++) nd += col[q] >= rstart && col[q] < rend;
    dlen[row] = nd;
    olen[row] = m - nd;
  }
}

__global__ void SplitFill(const PatchworkLORDesc d, int axis_only, const long long *__restrict__ l2g, long long rstart, long long rend, long long nrow, const int *__restrict__ dptr, const int *__restrict__ optr, int *__restrict__ dcol, long long *__restrict__ ocol, long long *__restrict__ keep)
{
  const int  S     = d.dim == 3 ? 27 : 9;
  long long *okeep = keep + dptr[nrow];

  for (long long row = blockIdx.x * (long long)blockDim.x + threadIdx.x; row < nrow; row += (long long)gridDim.x * blockDim.x) {
    long long col[PW_LOR_MAX_SLOTS];
    int       slot[PW_LOR_MAX_SLOTS], e = dptr[row], o = optr[row];
    const int m = PatchworkLORRowColumns(&d, axis_only, l2g, (long)row, col, slot);

    for (int q = 0; q < m; q++) {
      if (col[q] >= rstart && col[q] < rend) {
        dcol[e]   = (int)(col[q] - rstart);
        keep[e++] = row * S + slot[q];
      } else {
        ocol[o]    = col[q];
        okeep[o++] = row * S + slot[q];
      }
    }
  }
}
} // namespace

extern "C" int PatchworkLORSplitPatternCountCUDA(const PatchworkLORDesc *d, int axis_only, const long long *l2g, long long rstart, long long rend, int *dptr, int *optr, int *nd, int *no, void *stream)
{
  if (!nd || !no || !PatchworkLORSplitDescValid(d, rstart, rend)) return (int)cudaErrorInvalidValue;
  const cudaStream_t s    = (cudaStream_t)stream;
  const long long    nrow = PatchworkLORRowCount(d);
  int                slots[PW_LOR_MAX_SLOTS], *bad = nullptr, hbad = 0, tot[2] = {0, 0};
  size_t             bytes = 0;
  void              *tmp   = nullptr;
  cudaError_t        err;

  *nd = *no = 0;
  if (nrow * PatchworkLORSlotCandidates(d, axis_only, slots) > INT_MAX) return (int)cudaErrorInvalidValue;
  if ((err = cub::DeviceScan::ExclusiveSum(nullptr, bytes, (const int *)nullptr, (int *)nullptr, nrow + 1, s)) != cudaSuccess) return (int)err;
  if ((err = cudaMallocAsync(&tmp, bytes, s)) != cudaSuccess) return (int)err;
  if ((err = cudaMallocAsync((void **)&bad, sizeof(int), s)) == cudaSuccess) err = cudaMemsetAsync(bad, 0, sizeof(int), s);
  if (err == cudaSuccess) {
    SplitCount<<<Blocks(nrow + 1, ROW_THREADS), ROW_THREADS, 0, s>>>(*d, axis_only, l2g, rstart, rend, nrow, dptr, optr, bad);
    err = cudaGetLastError();
  }
  /* the row lengths scanned in place (CUB's scans allow d_in == d_out) */
  if (err == cudaSuccess) err = cub::DeviceScan::ExclusiveSum(tmp, bytes, dptr, dptr, nrow + 1, s);
  if (err == cudaSuccess) err = cub::DeviceScan::ExclusiveSum(tmp, bytes, optr, optr, nrow + 1, s);
  if (err == cudaSuccess) err = cudaMemcpyAsync(&tot[0], dptr + nrow, sizeof(int), cudaMemcpyDeviceToHost, s);
  if (err == cudaSuccess) err = cudaMemcpyAsync(&tot[1], optr + nrow, sizeof(int), cudaMemcpyDeviceToHost, s);
  if (err == cudaSuccess) err = cudaMemcpyAsync(&hbad, bad, sizeof(int), cudaMemcpyDeviceToHost, s);
  cudaFreeAsync(tmp, s);
  if (bad) cudaFreeAsync(bad, s);
  if (err == cudaSuccess) err = cudaStreamSynchronize(s);
  if (err == cudaSuccess && hbad) err = cudaErrorInvalidValue;
  if (err == cudaSuccess) {
    *nd = tot[0];
    *no = tot[1];
  }
  return (int)err;
}

extern "C" int PatchworkLORSplitPatternFillCUDA(const PatchworkLORDesc *d, int axis_only, const long long *l2g, long long rstart, long long rend, const int *dptr, const int *optr, int *dcol, long long *ocol, long long *keep, void *stream)
{
  if (!keep || !PatchworkLORSplitDescValid(d, rstart, rend)) return (int)cudaErrorInvalidValue;
  const long long nrow = PatchworkLORRowCount(d);

  if (nrow <= 0) return (int)cudaSuccess;
  SplitFill<<<Blocks(nrow, ROW_THREADS), ROW_THREADS, 0, (cudaStream_t)stream>>>(*d, axis_only, l2g, rstart, rend, nrow, dptr, optr, dcol, ocol, keep);
  return (int)cudaGetLastError();
}

/* The pattern's descriptors: 2D or 3D, the row box the whole grid */
static bool PatternDescBad(const PatchworkLORDesc *d)
{
  if (!d || (d->dim != 2 && d->dim != 3)) return true;
  for (int i = 0; i < 3; i++)
    if (d->row_start[i] != 0 || d->row_size[i] != d->nodes[i] || d->nodes[i] < 1 || (i >= d->dim && d->nodes[i] != 1)) return true;
  return false;
}

extern "C" int PatchworkLORPatternCountCUDA(const PatchworkLORDesc *d, int axis_only, long long *rowptr, long long *nnz, void *stream)
{
  if (!nnz || PatternDescBad(d)) return (int)cudaErrorInvalidValue;
  const cudaStream_t s     = (cudaStream_t)stream;
  const long long    nrow  = PatchworkLORRowCount(d);
  size_t             bytes = 0;
  void              *tmp   = nullptr;
  cudaError_t        err;

  *nnz = 0;
  if ((err = cub::DeviceScan::ExclusiveSum(nullptr, bytes, (const long long *)nullptr, (long long *)nullptr, nrow + 1, s)) != cudaSuccess) return (int)err;
  if ((err = cudaMallocAsync(&tmp, bytes, s)) != cudaSuccess) return (int)err;
  /* the row lengths into rowptr, then scanned in place (CUB's scans allow d_in == d_out) */
  if (d->dim == 3) PatternCount<3><<<Blocks(nrow + 1, ROW_THREADS), ROW_THREADS, 0, s>>>(*d, axis_only, nrow, rowptr);
  else PatternCount<2><<<Blocks(nrow + 1, ROW_THREADS), ROW_THREADS, 0, s>>>(*d, axis_only, nrow, rowptr);
  if ((err = cudaGetLastError()) == cudaSuccess) err = cub::DeviceScan::ExclusiveSum(tmp, bytes, rowptr, rowptr, nrow + 1, s);
  if (err == cudaSuccess) err = cudaMemcpyAsync(nnz, rowptr + nrow, sizeof(long long), cudaMemcpyDeviceToHost, s);
  cudaFreeAsync(tmp, s);
  if (err == cudaSuccess) err = cudaStreamSynchronize(s);
  return (int)err;
}

extern "C" int PatchworkLORPatternFillCUDA(const PatchworkLORDesc *d, int axis_only, const long long *rowptr, int *cols, long long *keep, void *stream)
{
  if (PatternDescBad(d)) return (int)cudaErrorInvalidValue;
  const long long nrow = PatchworkLORRowCount(d);

  if (nrow <= 0) return (int)cudaSuccess;
  if (d->dim == 3) PatternFill<3><<<Blocks(nrow, ROW_THREADS), ROW_THREADS, 0, (cudaStream_t)stream>>>(*d, axis_only, nrow, rowptr, cols, keep);
  else PatternFill<2><<<Blocks(nrow, ROW_THREADS), ROW_THREADS, 0, (cudaStream_t)stream>>>(*d, axis_only, nrow, rowptr, cols, keep);
  return (int)cudaGetLastError();
}

extern "C" int PatchworkLORGatherCSRCUDA(const PatchworkLORDesc *d, int axis_only, const double *Ae, const int *rowptr, double *out, void *stream)
{
  LorGeom     g;
  cudaError_t err;

  if (PatternDescBad(d) || !rowptr || !out) return (int)cudaErrorInvalidValue;
  for (int i = 0; i < d->dim; i++) /* every cell (whole sums) */
    if (d->degree < 1 || d->cell_start[i] != 0 || d->cell_end[i] != (d->nodes[i] - 1) / d->degree) return (int)cudaErrorInvalidValue;
  if ((err = MakeGeom(d, USE_CELLS | USE_ROWS, &g)) != cudaSuccess) return (int)err;
  if (g.nrow <= 0) return (int)cudaSuccess;
  const int      rpw    = d->dim == 3 ? 1 : 3;
  const long long warps = (g.nrow + rpw - 1) / rpw, want = (warps + ROW_THREADS / 32 - 1) / (ROW_THREADS / 32);
  const unsigned blocks = (unsigned)(want < 0x7fffffffLL ? want : 0x7fffffffLL);
  if (d->dim == 3) LaunchGatherCSR<3>(g, blocks, (cudaStream_t)stream, *d, axis_only, Ae, rowptr, out);
  else LaunchGatherCSR<2>(g, blocks, (cudaStream_t)stream, *d, axis_only, Ae, rowptr, out);
  return (int)cudaGetLastError();
}

/* The one-rank CSR route of GatherCSR, from the coordinates: every cell, the row box the whole grid */
extern "C" int PatchworkLORMacroCSRCUDA(const PatchworkLORDesc *d, int axis_only, const double *coords, const int *rowptr, double *out, void *stream)
{
  LorGeom     g;
  cudaError_t err;

  if (PatternDescBad(d) || !coords || !rowptr || !out) return (int)cudaErrorInvalidValue;
  for (int i = 0; i < d->dim; i++)
    if (d->degree < 1 || d->cell_start[i] != 0 || d->cell_end[i] != (d->nodes[i] - 1) / d->degree) return (int)cudaErrorInvalidValue;
  if ((err = MakeGeom(d, USE_CELLS | USE_COORDS | USE_ROWS, &g)) != cudaSuccess) return (int)err;
  const CSROut o = {*d, axis_only, rowptr, out};
  /* the colors one after the other: cells of one parity class per direction share no node */
  for (int color = 0; color < 1 << d->dim; color++) {
    g.stride  = 2;
    g.nlaunch = 1;
    for (int dir = 0; dir < 3; dir++) {
      const int p = (color >> dir) & 1;
      if (dir >= d->dim) {
        g.first[dir] = 0;
        g.count[dir] = 1;
        continue;
      }
      g.first[dir] = g.cell_start[dir] + ((g.cell_start[dir] & 1) != p);
      g.count[dir] = g.first[dir] < g.cell_start[dir] + g.mc[dir] ? (g.cell_start[dir] + g.mc[dir] - g.first[dir] + 1) / 2 : 0;
      g.nlaunch *= g.count[dir];
    }
    if (g.nlaunch <= 0) continue;
    if ((err = d->dim == 3 ? MacroDispatch<3, true>(g, coords, nullptr, o, (cudaStream_t)stream) : MacroDispatch<2, true>(g, coords, nullptr, o, (cudaStream_t)stream)) != cudaSuccess) return (int)err;
  }
  return (int)cudaSuccess;
}
