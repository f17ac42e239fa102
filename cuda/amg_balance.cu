/* The exchange balancing of patches on the GPU (contract: include/patchwork/amg_kernel.h; CPU
   reference: PatchworkGraphBalance in src/core/amg_graph.c), bit for bit equal to the CPU.

   A CPU round maps to kernels as follows; everything reads the state at the round's start and the
   per-part reductions are integer maxima, so the result does not depend on the order in which the
   GPU visits vertices or parts.
     RoundMax    the heaviest part (one host sync a round: the stop tests, see below)
     BestMoves   (1a) a warp a vertex: the vertex's BestMove; a valid one is appended to the
                 candidate list (order irrelevant: everything after it takes maxima)
     SafeMoves   (1b) a warp a candidate: LocalSafe, with the region in shared memory; a safe move
                 raises its part's first offer key
     OfferKey2   (1c) the second key among the safe moves that tie on the first
     OfferPick   (1d) the unique candidate with both keys is the part's offer; it raises the first
                 take key of its target part (2a)
     TakeKey2    (2b) the second take key among offers that tie on the first
     TakePick    (2c) the taken offer of every part; its vertex is marked as leaving
     Stay        (3)  StaysAttached against the marks; counts the moves that stand
     Apply       the moves that stand, the weight and count updates (integer atomics: exact), the
                 marks cleared and the per-part keys reset for the next round
   Move order. MoveBetter compares (r, d, gain, Hash(0, v), -v, -q). Offers of one part, and offers
   to one part, come from distinct vertices, and Hash(0, .) is a bijection, so (r, d, gain, hash)
   already separates them: key1 = r << 32 | d (r = d - |d - 2w| lies in (0, 2w], below 2^32) and
   key2 = (gain with its sign bit flipped) << 32 | hash, both compared as unsigned 64-bit integers.
   Within one vertex the moves differ by q only, and BestMoves reduces them with (key1, gain, -q).
   Stop tests. The CPU stops when the heaviest part is light enough (before a round) or when no move
   stood (after it); the host reads both counts once a round, after RoundMax. A round with no move
   changes nothing, so testing its count at the start of the next round gives the same result.

   LocalSafe. The CPU's region is v's neighbours in p in adjacency order, deduplicated (near), then
   their neighbours in p in the same order (far); more than BALANCE_REACH distinct vertices means
   unsafe. The warp builds the same list, 32 adjacency entries a step: a lane keeps its entry when
   it is in p, is not v and is not yet in the region (lookup in an open-addressing table in shared
   memory), the lowest lane of equal entries wins (__match_any_sync), and the winners are appended in
   lane order; so the region, its size and region[0] (where the search starts) equal the CPU's. The
   search is breadth-first inside the region with a seen bitmap and stops early once every near
   vertex is reached (the CPU's outcome, reached == nnear, is then already decided).

   Costs. BestMoves counts the neighbours in each candidate part by a scan of v's row per 32 entries
   (O(deg^2 / 32) a vertex, only for vertices with a possible move; rows beyond kBuf entries are read
   from global memory). The induced graphs this serves have degrees of 10-60: measured on an H200,
   50 rounds on the 1.27M aggregates of a 7-point 256^3 grid take 62-76 ms (the CPU: 5.9-6.1 s).
   A vertex with a row of ~20K entries (the test's dense graph) costs ~0.5 s a round: an O(deg)
   count (a per-warp table keyed by part) would remove that if such graphs ever matter. */
#include <cuda_runtime.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <algorithm>
#include <patchwork/amg_kernel.h>
#include <patchwork/amg_hash.h>

namespace {

constexpr unsigned kFull      = 0xffffffffu;
constexpr int      kReach     = 1024; /* BALANCE_REACH of the CPU reference */
constexpr int      kSlots     = 2 * kReach; /* the region's hash table: load at most 1/2 */
constexpr int      kMoveWarps = 8;
constexpr int      kBuf       = 256; /* neighbour parts of a row kept in shared memory by BestMoves */
constexpr int      kSafeWarps = 3;   /* 3 x 14 KiB of shared memory a block */
constexpr int      kThreads   = 256;
constexpr int      kMaxBlocks = 1 << 16;
constexpr int      kSafeBlocks = 1024; /* grid of SafeMoves (grid-stride): the candidates are not known on the host */

static_assert(kReach == 32 * 32, "the seen bitmap is one word a lane");

struct Graph {
  int        n;
  const int *ptr, *adj, *weight;
};

/* The candidates of a round (vertices with a valid BestMove), in structure-of-arrays form */
struct Cands {
  int                *v, *p, *q, *safe;
  unsigned long long *k1, *k2;
};

/* Per-part state: weights, counts, the keys and picks of offers (by part giving) and takes (by part
   taking), and whether the take stands */
struct Parts {
  int                *wt, *cnt, *offer, *take, *stand;
  unsigned long long *offer1, *offer2, *take1, *take2;
};

struct Status {
  int                maxw, nmove, ncand, bad;
  int                ptr0, ptrn;
  unsigned long long total;
};

struct alignas(16) SafeScratch {
  int            region[kReach];
  int            slot[kSlots]; /* region index + 1, 0 = empty (32-bit: native shared atomics) */
  unsigned short queue[kReach];
  unsigned       seen[kReach / 32];
};

__device__ __forceinline__ int W(const Graph &g, int v)
{
  return g.weight ? g.weight[v] : 1;
}

__device__ __forceinline__ unsigned LanesBelow(int lane)
{
  return (1u << lane) - 1u;
}

/* The part of row entry j of v, -1 for a self loop */
__device__ __forceinline__ int NbrPart(const Graph &g, const int *part, int v, int j)
{
  const int u = g.adj[j];

  return u == v ? -1 : part[u];
}

__device__ __forceinline__ unsigned long long Key1(int d, int w)
{
  const long long r = (long long)d - llabs((long long)d - 2LL * w);

  return ((unsigned long long)r << 32) | (unsigned)d;
}

__device__ __forceinline__ unsigned long long Key2(int gain, int v)
{
  return ((unsigned long long)((unsigned)gain ^ 0x80000000u) << 32) | PatchworkHash(0, v);
}

/* (key1, gain, -q) of moves of one vertex; q < 0 is no move */
__device__ __forceinline__ bool VertexMoveBetter(unsigned long long ka, int ga, int qa, unsigned long long kb, int gb, int qb)
{
  if (qb < 0) return qa >= 0;
  if (qa < 0) return false;
  if (ka != kb) return ka > kb;
  if (ga != gb) return ga > gb;
  return qa < qb;
}

/* Validation (GraphCheck and PartCheck of the CPU) fused with the initial part weights and counts */
__global__ void CheckVertices(Graph g, const int *part, int nparts, Parts P, Status *st)
{
  unsigned long long sum = 0;
  int                bad = 0;

  for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < g.n; v += gridDim.x * blockDim.x) {
    const int w = W(g, v), p = part[v];

    if (v == 0) {
      st->ptr0 = g.ptr[0];
      st->ptrn = g.ptr[g.n];
      if (g.ptr[0] < 0) bad = 1;
    }
    if (g.ptr[v + 1] < g.ptr[v] || w < 0 || p < 0 || p >= nparts) bad = 1;
    if (w >= 0) sum += (unsigned long long)w;
    if (p >= 0 && p < nparts) {
      atomicAdd(&P.wt[p], w);
      atomicAdd(&P.cnt[p], 1);
    }
  }
  for (int o = 16; o; o >>= 1) sum += __shfl_xor_sync(kFull, sum, o);
  bad = __any_sync(kFull, bad);
  if ((threadIdx.x & 31) == 0) {
    if (sum) atomicAdd(&st->total, sum);
    if (bad) st->bad = 1;
  }
}

__global__ void CheckAdj(int n, const int *adj, int beg, int end, Status *st)
{
  for (long long j = beg + (long long)blockIdx.x * blockDim.x + threadIdx.x; j < end; j += (long long)gridDim.x * blockDim.x)
    if (adj[j] < 0 || adj[j] >= n) st->bad = 1;
}

__global__ void InitParts(int nparts, Parts P)
{
  for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < nparts; x += gridDim.x * blockDim.x) {
    P.offer[x] = P.take[x] = -1;
    P.stand[x]             = 0;
    P.offer1[x] = P.offer2[x] = P.take1[x] = P.take2[x] = 0;
  }
}

/* Weights are >= 0, so a maximum started from 0 is the CPU's maximum */
__global__ void RoundMax(int nparts, const int *wt, Status *st)
{
  int m = 0;

  for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < nparts; x += gridDim.x * blockDim.x) m = max(m, wt[x]);
  for (int o = 16; o; o >>= 1) m = max(m, __shfl_xor_sync(kFull, m, o));
  if ((threadIdx.x & 31) == 0 && m > 0) atomicMax(&st->maxw, m);
}

/* (1a) BestMove of every vertex, a warp a vertex */
__global__ void __launch_bounds__(kMoveWarps * 32) BestMoves(Graph g, const int *part, Parts P, Cands C, Status *st)
{
  __shared__ int sbuf[kMoveWarps][kBuf];
  const int      lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
  int           *buf  = sbuf[wib];

  for (int v = blockIdx.x * kMoveWarps + wib; v < g.n; v += gridDim.x * kMoveWarps) {
    const int p = part[v], w = W(g, v);

    if (P.cnt[p] < 2 || w <= 0) continue; /* a part of one vertex gives nothing */
    const int beg = g.ptr[v], deg = g.ptr[v + 1] - beg, wp = P.wt[p];
    int       accp = 0;

    for (int b = 0; b < deg; b += 32) {
      const int k = b + lane;
      int       q = -1;

      if (k < deg) {
        q = NbrPart(g, part, v, beg + k);
        if (k < kBuf) buf[k] = q;
      }
      accp += __popc(__ballot_sync(kFull, q == p));
    }
    __syncwarp();

    unsigned long long bk = 0;
    int                bg = 0, bq = -1;

    for (int b = 0; b < deg; b += 32) {
      const int k = b + lane;
      int       q = -1, d = 0;

      if (k < deg) q = k < kBuf ? buf[k] : NbrPart(g, part, v, beg + k);
      const bool cand = q >= 0 && q != p && (d = wp - P.wt[q]) > w;

      if (!__any_sync(kFull, cand)) continue;
      /* neighbours in q, repeated entries counted as on the CPU; a part seen twice gives the same
         move twice, which the maximum absorbs */
      int acc = 0;

      for (int kk = 0; kk < deg; kk++) acc += (kk < kBuf ? buf[kk] : NbrPart(g, part, v, beg + kk)) == q;
      if (cand) {
        const unsigned long long k1 = Key1(d, w);
        const int                gain = acc - accp;

        if (VertexMoveBetter(k1, gain, q, bk, bg, bq)) {
          bk = k1;
          bg = gain;
          bq = q;
        }
      }
    }
    for (int o = 16; o; o >>= 1) {
      const unsigned long long ok = __shfl_xor_sync(kFull, bk, o);
      const int                og = __shfl_xor_sync(kFull, bg, o), oq = __shfl_xor_sync(kFull, bq, o);

      if (VertexMoveBetter(ok, og, oq, bk, bg, bq)) {
        bk = ok;
        bg = og;
        bq = oq;
      }
    }
    if (lane == 0 && bq >= 0) {
      const int i = atomicAdd(&st->ncand, 1);

      C.v[i]  = v;
      C.p[i]  = p;
      C.q[i]  = bq;
      C.k1[i] = bk;
      C.k2[i] = Key2(bg, v);
    }
    __syncwarp(); /* buf is reused by the next vertex */
  }
}

__device__ __forceinline__ unsigned SlotOf(int u)
{
  return ((unsigned)u * 2654435761u) >> (32 - 11);
}

static_assert(kSlots == 1 << 11, "SlotOf gives 11 bits");

/* The region index of u, or -1 */
__device__ __forceinline__ int Find(const SafeScratch &s, int u)
{
  for (unsigned h = SlotOf(u);; h = (h + 1) & (kSlots - 1)) {
    const int e = s.slot[h];

    if (!e) return -1;
    if (s.region[e - 1] == u) return e - 1;
  }
}

/* Append the entries of adj[beg, end) in part p, other than v and not yet in the region, in order;
   false when the region would exceed kReach (the CPU's "unsafe" exit) */
__device__ bool Gather(const Graph &g, const int *part, int v, int p, int beg, int end, SafeScratch &s, int &nr, int lane)
{
  for (int b = beg; b < end; b += 32) {
    const int j = b + lane;
    int       u = -1;

    if (j < end) {
      u = g.adj[j];
      if (u == v || part[u] != p || Find(s, u) >= 0) u = -1;
    }
    const unsigned same = __match_any_sync(kFull, u);
    const bool     lead = u >= 0 && !(same & LanesBelow(lane));
    const unsigned m    = __ballot_sync(kFull, lead);
    const int      nnew = __popc(m);

    if (nr + nnew > kReach) return false;
    if (lead) {
      const int idx = nr + __popc(m & LanesBelow(lane));

      s.region[idx] = u;
      for (unsigned h = SlotOf(u); atomicCAS(&s.slot[h], 0, idx + 1) != 0; h = (h + 1) & (kSlots - 1)) {}
    }
    nr += nnew;
    __syncwarp();
  }
  return true;
}

/* LocalSafe of the CPU, by one warp */
__device__ bool LocalSafe(const Graph &g, const int *part, int v, int p, SafeScratch &s, int lane)
{
  int nr = 0, nnear, head = 0, tail = 1, reached = 0;

  {
    uint4 *z = reinterpret_cast<uint4 *>(s.slot);

    for (int t = lane; t < (int)(sizeof(s.slot) / sizeof(uint4)); t += 32) z[t] = make_uint4(0, 0, 0, 0);
  }
  __syncwarp();
  if (!Gather(g, part, v, p, g.ptr[v], g.ptr[v + 1], s, nr, lane)) return false;
  nnear = nr;
  if (nnear <= 1) return true;
  for (int i = 0; i < nnear; i++) {
    const int x = s.region[i];

    if (!Gather(g, part, v, p, g.ptr[x], g.ptr[x + 1], s, nr, lane)) return false;
  }
  /* breadth-first search inside the region from region[0] (v is not in it) */
  s.seen[lane] = lane == 0 ? 1u : 0u;
  if (lane == 0) s.queue[0] = 0;
  __syncwarp();
  while (head < tail && reached < nnear) {
    const int xi = s.queue[head++], x = s.region[xi], beg = g.ptr[x], end = g.ptr[x + 1];

    if (xi < nnear) reached++;
    for (int b = beg; b < end; b += 32) {
      const int j     = b + lane;
      int       idx   = -1;
      bool      fresh = false;

      if (j < end) idx = Find(s, g.adj[j]);
      if (idx >= 0) {
        const unsigned bit = 1u << (idx & 31);

        fresh = !(atomicOr(&s.seen[idx >> 5], bit) & bit);
      }
      const unsigned m = __ballot_sync(kFull, fresh);

      if (fresh) s.queue[tail + __popc(m & LanesBelow(lane))] = (unsigned short)idx;
      tail += __popc(m);
      __syncwarp();
    }
  }
  return reached == nnear;
}

/* (1b) LocalSafe of every candidate, a warp a candidate; a safe move bids for its part's offer */
__global__ void __launch_bounds__(kSafeWarps * 32) SafeMoves(Graph g, const int *part, Parts P, Cands C, const Status *st)
{
  __shared__ SafeScratch sh[kSafeWarps];
  const int              lane = threadIdx.x & 31, wib = threadIdx.x >> 5, ncand = st->ncand;

  for (int i = blockIdx.x * kSafeWarps + wib; i < ncand; i += gridDim.x * kSafeWarps) {
    const bool safe = LocalSafe(g, part, C.v[i], C.p[i], sh[wib], lane);

    if (lane == 0) {
      C.safe[i] = safe;
      if (safe) atomicMax(&P.offer1[C.p[i]], C.k1[i]);
    }
    __syncwarp();
  }
}

/* (1c) */
__global__ void OfferKey2(Parts P, Cands C, const Status *st)
{
  const int ncand = st->ncand;

  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < ncand; i += gridDim.x * blockDim.x)
    if (C.safe[i] && C.k1[i] == P.offer1[C.p[i]]) atomicMax(&P.offer2[C.p[i]], C.k2[i]);
}

/* (1d) the offer of each part, then (2a) */
__global__ void OfferPick(Parts P, Cands C, const Status *st)
{
  const int ncand = st->ncand;

  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < ncand; i += gridDim.x * blockDim.x)
    if (C.safe[i] && C.k1[i] == P.offer1[C.p[i]] && C.k2[i] == P.offer2[C.p[i]]) {
      P.offer[C.p[i]] = i;
      atomicMax(&P.take1[C.q[i]], C.k1[i]);
    }
}

/* (2b) */
__global__ void TakeKey2(int nparts, Parts P, Cands C)
{
  for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < nparts; x += gridDim.x * blockDim.x) {
    const int i = P.offer[x];

    if (i >= 0 && C.k1[i] == P.take1[C.q[i]]) atomicMax(&P.take2[C.q[i]], C.k2[i]);
  }
}

/* (2c) the take of each part; its vertex is marked as leaving */
__global__ void TakePick(int nparts, Parts P, Cands C, unsigned char *mark)
{
  for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < nparts; x += gridDim.x * blockDim.x) {
    const int i = P.offer[x];

    if (i >= 0 && C.k1[i] == P.take1[C.q[i]] && C.k2[i] == P.take2[C.q[i]]) {
      P.take[C.q[i]] = i;
      mark[C.v[i]]   = 1;
    }
  }
}

/* (3) StaysAttached */
__global__ void Stay(Graph g, int nparts, const int *part, Parts P, Cands C, const unsigned char *mark, Status *st)
{
  for (int q = blockIdx.x * blockDim.x + threadIdx.x; q < nparts; q += gridDim.x * blockDim.x) {
    const int i = P.take[q];

    if (i < 0) continue;
    const int v = C.v[i];

    for (int j = g.ptr[v]; j < g.ptr[v + 1]; j++)
      if (part[g.adj[j]] == q && !mark[g.adj[j]]) {
        P.stand[q] = 1;
        atomicAdd(&st->nmove, 1);
        break;
      }
  }
}

/* The moves that stand; every part's keys and picks are reset for the next round */
__global__ void Apply(Graph g, int nparts, int *part, Parts P, Cands C, unsigned char *mark)
{
  for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < nparts; x += gridDim.x * blockDim.x) {
    const int i = P.take[x];

    if (i >= 0) {
      const int v = C.v[i];

      mark[v] = 0;
      if (P.stand[x]) {
        const int p = C.p[i], w = W(g, v);

        part[v] = x;
        atomicSub(&P.wt[p], w);
        atomicAdd(&P.wt[x], w);
        atomicSub(&P.cnt[p], 1);
        atomicAdd(&P.cnt[x], 1);
      }
    }
    P.offer[x] = P.take[x] = -1;
    P.stand[x]             = 0;
    P.offer1[x] = P.offer2[x] = P.take1[x] = P.take2[x] = 0;
  }
}

static int Blocks(long long count, int per_block)
{
  return (int)std::max(1LL, std::min<long long>((count + per_block - 1) / per_block, kMaxBlocks));
}

/* carve aligned pieces out of one allocation */
template <typename T>
static T *Carve(char *&at, size_t count)
{
  T *p = reinterpret_cast<T *>(at);

  at += (count * sizeof(T) + 255) & ~(size_t)255;
  return p;
}

} // namespace

extern "C" int PatchworkGraphBalanceCUDA(const PatchworkGraph *g, int nparts, int max_weight, int max_rounds, int *part, void *stream)
{
  cudaStream_t  s    = (cudaStream_t)stream;
  char         *pool = NULL, *at;
  size_t        bytes;
  Graph         G;
  Parts         P;
  Cands         C;
  Status       *st, h;
  unsigned char *mark;
  cudaError_t   err = cudaSuccess;

  /* the CPU's argument checks; those on array contents run on the device below */
  if (!g || g->n < 0 || max_rounds < 0 || nparts < 0) return 1;
  if (g->n == 0) return 0;
  if (!g->ptr || !part || nparts < 1) return 1;
  G.n      = g->n;
  G.ptr    = g->ptr;
  G.adj    = g->adj;
  G.weight = g->weight;

  bytes = 0;
  for (size_t c : {(size_t)nparts * sizeof(int), (size_t)nparts * sizeof(int), (size_t)nparts * sizeof(int), (size_t)nparts * sizeof(int), (size_t)nparts * sizeof(int)}) bytes += (c + 255) & ~(size_t)255;
  bytes += 4 * (((size_t)nparts * 8 + 255) & ~(size_t)255);
  bytes += 4 * (((size_t)g->n * 4 + 255) & ~(size_t)255) + 2 * (((size_t)g->n * 8 + 255) & ~(size_t)255);
  bytes += (((size_t)g->n + 255) & ~(size_t)255) + 256;
  if ((err = cudaMallocAsync((void **)&pool, bytes, s)) != cudaSuccess) return (int)err;
  at       = pool;
  P.wt     = Carve<int>(at, nparts);
  P.cnt    = Carve<int>(at, nparts);
  P.offer  = Carve<int>(at, nparts);
  P.take   = Carve<int>(at, nparts);
  P.stand  = Carve<int>(at, nparts);
  P.offer1 = Carve<unsigned long long>(at, nparts);
  P.offer2 = Carve<unsigned long long>(at, nparts);
  P.take1  = Carve<unsigned long long>(at, nparts);
  P.take2  = Carve<unsigned long long>(at, nparts);
  C.v      = Carve<int>(at, g->n);
  C.p      = Carve<int>(at, g->n);
  C.q      = Carve<int>(at, g->n);
  C.safe   = Carve<int>(at, g->n);
  C.k1     = Carve<unsigned long long>(at, g->n);
  C.k2     = Carve<unsigned long long>(at, g->n);
  mark     = Carve<unsigned char>(at, g->n);
  st       = Carve<Status>(at, 1);

#define BAL_TRY(call) \
  do { \
    if ((err = (call)) != cudaSuccess) goto out; \
  } while (0)
#define BAL_LAUNCH(kernel, grid, block, ...) \
  do { \
    kernel<<<(grid), (block), 0, s>>>(__VA_ARGS__); \
    BAL_TRY(cudaGetLastError()); \
  } while (0)

  BAL_TRY(cudaMemsetAsync(P.wt, 0, (size_t)nparts * sizeof(int), s));
  BAL_TRY(cudaMemsetAsync(P.cnt, 0, (size_t)nparts * sizeof(int), s));
  BAL_TRY(cudaMemsetAsync(mark, 0, (size_t)g->n, s));
  BAL_TRY(cudaMemsetAsync(st, 0, sizeof(Status), s));
  BAL_LAUNCH(CheckVertices, Blocks(g->n, kThreads), kThreads, G, part, nparts, P, st);
  BAL_TRY(cudaMemcpyAsync(&h, st, sizeof(h), cudaMemcpyDeviceToHost, s));
  BAL_TRY(cudaStreamSynchronize(s));
  if (h.bad || h.total >= (unsigned long long)INT_MAX || (h.ptrn > h.ptr0 && !g->adj)) {
    err = (cudaError_t)1;
    goto out;
  }
  if (h.ptrn > h.ptr0) {
    BAL_LAUNCH(CheckAdj, Blocks((long long)h.ptrn - h.ptr0, kThreads), kThreads, g->n, g->adj, h.ptr0, h.ptrn, st);
    BAL_TRY(cudaMemcpyAsync(&h, st, sizeof(h), cudaMemcpyDeviceToHost, s));
    BAL_TRY(cudaStreamSynchronize(s));
    if (h.bad) {
      err = (cudaError_t)1;
      goto out;
    }
  }
  BAL_LAUNCH(InitParts, Blocks(nparts, kThreads), kThreads, nparts, P);
  BAL_TRY(cudaMemsetAsync(st, 0, sizeof(Status), s));
  for (int round = 0; round < max_rounds; round++) {
    BAL_LAUNCH(RoundMax, Blocks(nparts, kThreads), kThreads, nparts, P.wt, st);
    BAL_TRY(cudaMemcpyAsync(&h, st, sizeof(h), cudaMemcpyDeviceToHost, s));
    BAL_TRY(cudaStreamSynchronize(s));
    if (round > 0 && !h.nmove) break; /* the previous round moved nothing */
    if (h.maxw <= max_weight) break;
    BAL_TRY(cudaMemsetAsync(st, 0, sizeof(Status), s));
    BAL_LAUNCH(BestMoves, Blocks(g->n, kMoveWarps), kMoveWarps * 32, G, part, P, C, st);
    BAL_LAUNCH(SafeMoves, std::min(Blocks(g->n, kSafeWarps), kSafeBlocks), kSafeWarps * 32, G, part, P, C, st);
    BAL_LAUNCH(OfferKey2, Blocks(g->n, kThreads), kThreads, P, C, st);
    BAL_LAUNCH(OfferPick, Blocks(g->n, kThreads), kThreads, P, C, st);
    BAL_LAUNCH(TakeKey2, Blocks(nparts, kThreads), kThreads, nparts, P, C);
    BAL_LAUNCH(TakePick, Blocks(nparts, kThreads), kThreads, nparts, P, C, mark);
    BAL_LAUNCH(Stay, Blocks(nparts, kThreads), kThreads, G, nparts, part, P, C, mark, st);
    BAL_LAUNCH(Apply, Blocks(nparts, kThreads), kThreads, G, nparts, part, P, C, mark);
  }
#undef BAL_LAUNCH
#undef BAL_TRY
out:
  {
    const cudaError_t ferr = cudaFreeAsync(pool, s);

    if (err == cudaSuccess) err = ferr;
  }
  return (int)err;
}
