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
      The degree is a template parameter. Blocks of 128 threads, three paths:
        whole   (k^dim <= 128 but 3D k = 1): a step takes M = 128 / k^dim whole macro elements, the
                tile their M (k+1)^dim 3^dim entries (at most 91 KB, 3D k = 2);
        layers  (3D k >= 6): a block takes one macro element in steps of 128 / k^2 sub-element layers;
                the tile is a ring of node layers (one more than the step's sub-element layers); after
                a step the node layers whose sub-elements are all done are copied out and zeroed, the
                step's top layer carries over (at most 52 KB);
        direct  (3D k = 1): the macro element is one sub-element, Ae its element matrix spread over the
                27 slots: a warp writes 8 macro elements' 216 entries at a time through shared memory
                and copies them out coalesced (54 KB).
      Two blocks per SM, which the element matrix's 255 registers allow anyway. This replaced the
      paper's atomicAdd of every sub-element matrix into a zeroed Ae (first version;
      bench/bench_lor_kernels.cu keeps it as "A1at"): on the H200 at 8M DoF that took 9-18 ms against
      3.5 ms for the element matrices alone, the global double atomics being the bottleneck; this
      kernel takes 5-7 ms. Offsets into Ae are 64-bit: Ae has (k+1)^dim 3^dim doubles per macro
      element, more than 2^31 entries from about 10M macro elements at k = 1 in 3D.
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

/* The element matrix of sub-element (sx,sy,sz) of macro element e (lexicographic in the cell range) */
template <int DIM, int K>
__device__ __forceinline__ void SubElementMatrix(const LorGeom &g, const double *__restrict__ coords, long long e, int sx, int sy, int sz, double *Ke)
{
  constexpr int   NV    = 1 << DIM;
  const long long plane = (long long)g.mc[0] * g.mc[1];
  const long long ez    = e / plane;
  const long long r     = e - ez * plane;
  const int       ey    = (int)(r / g.mc[0]);
  const int       cx = g.cell_start[0] + (int)(r - (long long)ey * g.mc[0]), cy = g.cell_start[1] + ey, cz = g.cell_start[2] + (int)ez;
  double          xv[NV * DIM];

#pragma unroll
  for (int a = 0; a < NV; a++) {
    const long long p = BoxIndex(g.coord_start, g.coord_size, K * cx + sx + (a & 1), K * cy + sy + ((a >> 1) & 1), DIM == 3 ? K * cz + sz + ((a >> 2) & 1) : 0);
#pragma unroll
    for (int i = 0; i < DIM; i++) xv[a * DIM + i] = coords[p * DIM + i];
  }
  PatchworkQ1ElementMatrixRule(DIM, xv, g.alpha, g.beta, g.vertex_rule, Ke);
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

/* A1 (see the top of the file for the three paths) */
template <int DIM, int K>
__global__ void __launch_bounds__(MacroPlan<DIM, K>::THREADS) Macro(const LorGeom g, const double *__restrict__ coords, double *__restrict__ Ae)
{
  using P = MacroPlan<DIM, K>;
  constexpr int NV = P::NV, S = P::S, N1 = P::N1, NSUB = P::NSUB, NLOC = P::NLOC, TILE = P::TILE, THREADS = P::THREADS;
  extern __shared__ double tile[];
  double                   Ke[NV * NV];

  if constexpr (P::DIRECT) {
    /* 3D k = 1: thread = macro element, whose 8 x 27 entries are its element matrix's and zeros. A warp
       writes them through its part of the tile, 8 macro elements per round, then copies the 8 x 216
       consecutive entries out coalesced. */
    constexpr int DPAD = P::DPAD, R = 8;
    const int     lane = threadIdx.x % 32;
    double       *buf  = tile + (threadIdx.x / 32) * R * DPAD;
    for (long long e0 = blockIdx.x * (long long)THREADS + threadIdx.x - lane; e0 < g.nmacro; e0 += (long long)gridDim.x * THREADS) {
      const long long e      = e0 + lane;
      const bool      active = e < g.nmacro;
      if (active) SubElementMatrix<DIM, K>(g, coords, e, 0, 0, 0, Ke);
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
        const int       cnt   = first < g.nmacro ? (int)min((long long)R, g.nmacro - first) * (NLOC * S) : 0;
        double         *A     = Ae + first * (NLOC * S);
        for (int i = lane; i < cnt; i += 32) A[i] = buf[(i / (NLOC * S)) * DPAD + i % (NLOC * S)];
        __syncwarp();
      }
    }
  } else if constexpr (!P::LAYERS) { /* M whole macro elements per step, tile = their Ae */
    const long long nstep = (g.nmacro + P::M - 1) / P::M;
    for (int i = threadIdx.x; i < TILE; i += THREADS) tile[i] = 0;
    __syncthreads();
    for (long long step = blockIdx.x; step < nstep; step += gridDim.x) {
      const long long e0 = step * P::M;
      const int       m = (int)min((long long)P::M, g.nmacro - e0), t = threadIdx.x, me = t / NSUB, sub = t % NSUB;
      const int       sx = sub % K, sy = (sub / K) % K, sz = DIM == 3 ? sub / (K * K) : 0;
      const bool      active = t < m * NSUB;

      if (active) SubElementMatrix<DIM, K>(g, coords, e0 + me, sx, sy, sz, Ke);
      ColoredAdd<DIM>(tile, active, sx, sy, sz, Ke, [&](int a) { return me * NLOC + ((sz + ((a >> 2) & 1)) * N1 + sy + ((a >> 1) & 1)) * N1 + sx + (a & 1); });
      /* copy out (coalesced) and zero for the next step: each thread its own entries */
      double *A = Ae + e0 * (NLOC * S);
      for (int i = threadIdx.x; i < m * NLOC * S; i += THREADS) {
        A[i]    = tile[i];
        tile[i] = 0;
      }
      __syncthreads();
    }
  } else { /* 3D k >= 6: one macro element per block, LZ sub-element layers per step, node layers in a ring */
    constexpr int LZ = P::LZ, RING = P::RING, LAYER = P::LAYER;
    for (int i = threadIdx.x; i < TILE; i += THREADS) tile[i] = 0;
    __syncthreads();
    for (long long e = blockIdx.x; e < g.nmacro; e += gridDim.x) {
      double *A = Ae + e * (NLOC * S);
      for (int z0 = 0; z0 < K; z0 += LZ) {
        const int  nl = min(LZ, K - z0), t = threadIdx.x, sz = z0 + t / (K * K), sy = (t / K) % K, sx = t % K;
        const bool active = t < nl * K * K;

        if (active) SubElementMatrix<DIM, K>(g, coords, e, sx, sy, sz, Ke);
        ColoredAdd<DIM>(tile, active, sx, sy, sz, Ke, [&](int a) { return ((sz + ((a >> 2) & 1)) % RING * N1 + sy + ((a >> 1) & 1)) * N1 + sx + (a & 1); });
        /* node layers z0 .. z0+nl-1 are complete (layer l takes sub-element layers l-1 and l), and at
           the end layer K; the last layer of the step stays for the next. Copy out and zero. */
        const int lo = z0, hi = z0 + nl == K ? K : z0 + nl - 1;
        for (int i = threadIdx.x; i < (hi - lo + 1) * LAYER; i += THREADS) {
          const int lz = lo + i / LAYER, j = (lz % RING) * LAYER + i % LAYER;
          A[lo * LAYER + i] = tile[j];
          tile[j]           = 0;
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

template <int DIM, int K>
static cudaError_t LaunchMacro(const LorGeom &g, const double *coords, double *Ae, cudaStream_t s)
{
  using P = MacroPlan<DIM, K>;
  static bool attr = false; /* the stage exceeds the default 48 KB of dynamic shared memory */

  if (!attr) {
    const cudaError_t err = cudaFuncSetAttribute(Macro<DIM, K>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)P::SMEM);
    if (err != cudaSuccess) return err;
    attr = true;
  }
  const long long steps = P::DIRECT ? (g.nmacro + P::THREADS - 1) / P::THREADS : P::LAYERS ? g.nmacro : (g.nmacro + P::M - 1) / P::M;
  Macro<DIM, K><<<(unsigned)(steps < 0x7fffffffLL ? steps : 0x7fffffffLL), P::THREADS, P::SMEM, s>>>(g, coords, Ae);
  return cudaGetLastError();
}

template <int DIM>
static cudaError_t MacroDispatch(const LorGeom &g, const double *coords, double *Ae, cudaStream_t s)
{
  switch (g.k) {
  case 1: return LaunchMacro<DIM, 1>(g, coords, Ae, s);
  case 2: return LaunchMacro<DIM, 2>(g, coords, Ae, s);
  case 3: return LaunchMacro<DIM, 3>(g, coords, Ae, s);
  case 4: return LaunchMacro<DIM, 4>(g, coords, Ae, s);
  case 5: return LaunchMacro<DIM, 5>(g, coords, Ae, s);
  case 6: return LaunchMacro<DIM, 6>(g, coords, Ae, s);
  case 7: return LaunchMacro<DIM, 7>(g, coords, Ae, s);
  case 8: return LaunchMacro<DIM, 8>(g, coords, Ae, s);
  case 9: return LaunchMacro<DIM, 9>(g, coords, Ae, s);
  default: return LaunchMacro<DIM, 10>(g, coords, Ae, s); /* k <= PW_MAX_DEGREE = 10, checked */
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
  if (d->dim == 3) return (int)MacroDispatch<3>(g, coords, Ae, (cudaStream_t)stream);
  return (int)MacroDispatch<2>(g, coords, Ae, (cudaStream_t)stream);
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
/* The pattern: a thread per row, the reference's loops (PatchworkLORPatternCountRef/FillRef).
   Count: len[row] = stored slots of the row, len[nrow] = 0 (the exclusive scan then ends with nnz) */
__global__ void PatternCount(const PatchworkLORDesc d, int axis_only, long long nrow, long long *len)
{
  int       slots[PW_LOR_MAX_SLOTS];
  const int ns = PatchworkLORSlotCandidates(&d, axis_only, slots);

  for (long long row = blockIdx.x * (long long)blockDim.x + threadIdx.x; row <= nrow; row += (long long)gridDim.x * blockDim.x) {
    int g[3], c = 0;

    if (row == nrow) {
      len[row] = 0;
      continue;
    }
    PatchworkLORRowNode(&d, (long)row, g);
    for (int t = 0; t < ns; t++) c += PatchworkLORSlotStored(&d, axis_only, g, slots[t]);
    len[row] = c;
  }
}

__global__ void PatternFill(const PatchworkLORDesc d, int axis_only, long long nrow, const long long *__restrict__ rowptr, int *__restrict__ cols, long long *__restrict__ keep)
{
  const int S = d.dim == 3 ? 27 : 9;
  int       slots[PW_LOR_MAX_SLOTS];
  const int ns = PatchworkLORSlotCandidates(&d, axis_only, slots);

  for (long long row = blockIdx.x * (long long)blockDim.x + threadIdx.x; row < nrow; row += (long long)gridDim.x * blockDim.x) {
    long long e = rowptr[row];
    int       g[3], nb[3];

    PatchworkLORRowNode(&d, (long)row, g);
    for (int t = 0; t < ns; t++) {
      const int s = slots[t];

      if (!PatchworkLORSlotStored(&d, axis_only, g, s)) continue;
      PatchworkLORSlotNeighbour(&d, g, s, nb);
      cols[e] = PatchworkLORGridIndex(&d, nb);
      if (keep) keep[e] = row * S + s;
      e++;
    }
  }
}
} // namespace

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
  long long         *len   = nullptr;
  cudaError_t        err;

  *nnz = 0;
  if ((err = cub::DeviceScan::ExclusiveSum(nullptr, bytes, (const long long *)nullptr, (long long *)nullptr, nrow + 1, s)) != cudaSuccess) return (int)err;
  if ((err = cudaMallocAsync(&tmp, bytes, s)) != cudaSuccess) return (int)err;
  if ((err = cudaMallocAsync((void **)&len, (size_t)(nrow + 1) * sizeof(long long), s)) != cudaSuccess) return (int)err;
  PatternCount<<<Blocks(nrow + 1, 256), 256, 0, s>>>(*d, axis_only, nrow, len);
  if ((err = cudaGetLastError()) == cudaSuccess) err = cub::DeviceScan::ExclusiveSum(tmp, bytes, len, rowptr, nrow + 1, s);
  if (err == cudaSuccess) err = cudaMemcpyAsync(nnz, rowptr + nrow, sizeof(long long), cudaMemcpyDeviceToHost, s);
  cudaFreeAsync(len, s);
  cudaFreeAsync(tmp, s);
  if (err == cudaSuccess) err = cudaStreamSynchronize(s);
  return (int)err;
}

extern "C" int PatchworkLORPatternFillCUDA(const PatchworkLORDesc *d, int axis_only, const long long *rowptr, int *cols, long long *keep, void *stream)
{
  if (PatternDescBad(d)) return (int)cudaErrorInvalidValue;
  const long long nrow = PatchworkLORRowCount(d);

  PatternFill<<<Blocks(nrow, 256), 256, 0, (cudaStream_t)stream>>>(*d, axis_only, nrow, rowptr, cols, keep);
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
