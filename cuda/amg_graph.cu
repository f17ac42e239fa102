/* CUDA port of PCPATCHAMG's graph partitions (contract: include/patchwork/amg_kernel.h; CPU
   reference: src/core/amg_graph.c): k-MIS, Partition (Grow, Dissolve, numbering), Induce and the
   level order, bit for bit equal to the reference. Balance lives in cuda/amg_balance.cu.

   The reference is written as synchronous rounds (a round reads the state at its start only), so
   one thread per vertex reproduces it; every tie is broken by PatchworkHash (include/patchwork/
   amg_hash.h, shared with the CPU) and then by the smaller index, and every sum is an integer sum,
   so atomics in any order give the same result. Each CPU step maps to kernels as follows:

   GraphCheck / PartCheck -> CheckRows (ptr nondecreasing, weights >= 0, their total in 64 bits),
                          then CheckAdj (neighbours and parts in range; it reads the adjacency only
                          when CheckRows found the rows sound, so a bad ptr[] never sends it out of
                          bounds); one copy of the verdict.
   KMISRun             -> KMISInit; every round k MaxSweep launches (ping-pong 64-bit keys) and
                          KMISUpdate, which applies the joins and leaves, writes the next round's
                          key over the swept one (only thread v touches entry v) and counts the
                          undecided; one 8-byte copy a round decides whether to go on.
   Partition, roots    -> PartInit (part = v for a root, -1 otherwise), in the caller's part[].
   Grow                -> GrowRound a round, reading one label array and writing the other. Every
                          unallocated vertex with an allocated neighbour chooses; for an undirected
                          graph these are exactly the CPU frontier (a vertex next to one allocated
                          in the last round was queued by it; one next to an older part was
                          allocated before). GrowChoice sums, for each distinct label at its first
                          occurrence in the row, 1 + the weights of the neighbours that carry it:
                          O(deg^2) reads and no label-indexed accumulator. With coordinates the
                          nearest root ranks first, its squared distance formed with __dsub_rn,
                          __dmul_rn, __dadd_rn in the CPU's order (no FMA: the same doubles). A
                          round that allocates nothing while vertices remain is the CPU's empty
                          frontier: return 1.
   Dissolve            -> PartWeights (atomicAdd by label), DissolveMark (a light part beside a
                          better one is doomed; the plain stores of 1 may race, harmlessly),
                          DissolveApply (unallocate and count); one copy a pass.
   numbering           -> FirstVertex (atomicMin by label), FirstFlags (v is the smallest vertex of
                          its part), exclusive scan (cub), Renumber: part = the rank of its first
                          vertex among the first vertices, i.e. the CPU's order of first sight.
   Induce              -> CrossCount, scan, CrossKeys (edge (q, r) of different parts as the key
                          q << b | r, b = bits of nparts-1, so a 2b-bit radix sort orders rows and
                          columns), cub radix sort, unique, RowStarts (binary search for each row's
                          first key), adjacency = the low bits; weights by atomicAdd. Centroids
                          (with coordinates): stable radix sort of the vertices by part, RowStarts,
                          Centroids (a thread per part and coordinate sums its vertices in
                          ascending order with __dadd_rn, then __ddiv_rn), as the CPU's loop.
   LevelOrder          -> stable radix sort of the aggregates by patch (the CPU counting sort is
                          stable too), apos scatter, stable radix sort of the vertices by the
                          position of their aggregate, RowStarts for the group starts, pos scatter,
                          patch_ptr gather.

   Scratch memory comes from the stream-ordered allocator, once per call. Indices are int32 like
   the CPU's; loops over edges and grid sizes use 64-bit arithmetic. */
#include <cuda_runtime.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <cub/cub.cuh>
#include <patchwork/amg_kernel.h>
#include <patchwork/amg_hash.h>
#include "amg_device.h"

namespace {

enum { KMIS_OUT = 0, KMIS_UNDECIDED = 1, KMIS_IN = 2 }; /* as in the reference: the key's top bits */

__device__ __forceinline__ int Weight(const int *weight, int v)
{
  return weight ? weight[v] : 1;
}

/* The reference's CoordCheck (on the host): coordinates, where given, need a dimension of 1..3 */
static inline bool CoordBad(const PatchworkGraph *g)
{
  return g->coord && (g->dim < 1 || g->dim > 3);
}

/* ---------------------------------------------------------------------------------------------
   Argument checks */

struct Verdict {
  int                bad, lo, hi, pad; /* lo, hi: ptr[0], ptr[n] */
  unsigned long long total;            /* the vertex weights; weights are checked >= 0 */
};

__global__ void __launch_bounds__(kBlock) CheckRows(int n, const int *ptr, const int *weight, Verdict *res)
{
  typedef cub::BlockReduce<unsigned long long, kBlock> Reduce;
  __shared__ typename Reduce::TempStorage tmp;
  const long long                         v   = Gid();
  bool                                    bad = false;
  unsigned long long                      w   = 0, sum;

  if (v < n) {
    const int wv = Weight(weight, (int)v);

    bad = ptr[v + 1] < ptr[v] || wv < 0;
    w   = wv < 0 ? 0 : (unsigned long long)wv;
  }
  if (v == 0) {
    bad = bad || ptr[0] < 0;
    res->lo = ptr[0];
    res->hi = ptr[n];
  }
  if (bad) atomicOr(&res->bad, 1);
  sum = Reduce(tmp).Sum(w);
  if (threadIdx.x == 0 && sum) atomicAdd(&res->total, sum);
}

/* Neighbours in [0,n) (none when adj is NULL and the rows are empty), parts in [0,nparts) when
   part is given; skipped when CheckRows failed */
__global__ void __launch_bounds__(kBlock) CheckAdj(int n, const int *adj, const int *part, int nparts, Verdict *res)
{
  const long long stride = (long long)gridDim.x * blockDim.x;
  bool            bad    = false;

  if (res->bad) return;
  if (!adj) bad = res->hi > res->lo;
  else
    for (long long j = res->lo + Gid(); j < res->hi; j += stride)
      if (adj[j] < 0 || adj[j] >= n) bad = true;
  if (part)
    for (long long v = Gid(); v < n; v += stride)
      if (part[v] < 0 || part[v] >= nparts) bad = true;
  if (bad) atomicOr(&res->bad, 1);
}

/* The reference's GraphCheck (and PartCheck when part is given) for n > 0; dres is scratch */
static int CheckGraph(const PatchworkGraph *g, const int *part, int nparts, Verdict *dres, Verdict *hres, cudaStream_t s)
{
  PW_TRY(cudaMemsetAsync(dres, 0, sizeof(Verdict), s));
  CheckRows<<<Blocks(g->n), kBlock, 0, s>>>(g->n, g->ptr, g->weight, dres);
  CheckAdj<<<StrideBlocks(), kBlock, 0, s>>>(g->n, g->adj, part, nparts, dres);
  PW_TRY(cudaGetLastError());
  PW_TRY(Fetch(hres, dres, sizeof(Verdict), s));
  return hres->bad || hres->total >= (unsigned long long)INT_MAX;
}

/* ---------------------------------------------------------------------------------------------
   k-MIS */

__device__ __forceinline__ uint64_t KMISKey(int state, unsigned seed, int v)
{
  return (uint64_t)state << 62 | (uint64_t)(PatchworkHash(seed, v) >> 1) << 31 | (uint64_t)(INT_MAX - v);
}

__global__ void __launch_bounds__(kBlock) KMISInit(int n, unsigned seed, int *state, uint64_t *key)
{
  const long long v = Gid();

  if (v >= n) return;
  state[v] = KMIS_UNDECIDED;
  key[v]   = KMISKey(KMIS_UNDECIDED, seed, (int)v);
}

__global__ void __launch_bounds__(kBlock) MaxSweep(int n, const int *__restrict__ ptr, const int *__restrict__ adj, const uint64_t *__restrict__ in, uint64_t *__restrict__ out)
{
  const long long v = Gid();

  if (v >= n) return;
  uint64_t  m = in[v];
  const int e = ptr[v + 1];

  for (int j = ptr[v]; j < e; j++) {
    const uint64_t x = in[adj[j]];

    if (x > m) m = x;
  }
  out[v] = m;
}

/* key[] holds the swept keys on entry and the next round's own keys on exit. counts[0] += joined,
   counts[1] += still undecided. No early return: every thread reaches __syncthreads_count. */
__global__ void __launch_bounds__(kBlock) KMISUpdate(int n, unsigned seed, int *state, uint64_t *key, int *counts)
{
  const long long v      = Gid();
  int             joined = 0, open = 0;

  if (v < n) {
    int st = state[v];

    if (st == KMIS_UNDECIDED) {
      const uint64_t m = key[v];

      if (m == KMISKey(KMIS_UNDECIDED, seed, (int)v)) {
        st     = KMIS_IN;
        joined = 1;
      } else if ((int)(m >> 62) == KMIS_IN) st = KMIS_OUT;
      else open = 1;
      state[v] = st;
    }
    key[v] = KMISKey(st, seed, (int)v);
  }
  joined = __syncthreads_count(joined);
  open   = __syncthreads_count(open);
  if (threadIdx.x == 0) {
    if (joined) atomicAdd(&counts[0], joined);
    if (open) atomicAdd(&counts[1], open);
  }
}

__global__ void __launch_bounds__(kBlock) KMISFinish(int n, int *state)
{
  const long long v = Gid();

  if (v < n) state[v] = state[v] == KMIS_IN;
}

/* state[v] = KMIS_IN or KMIS_OUT, *count = the set's size; a, b: n keys each, counts: 2 ints */
static int KMISRun(const PatchworkGraph *g, int k, unsigned seed, int *state, int *count, uint64_t *a, uint64_t *b, int *counts, cudaStream_t s)
{
  const int n = g->n;
  int       h[2];

  *count = 0;
  KMISInit<<<Blocks(n), kBlock, 0, s>>>(n, seed, state, a);
  PW_TRY(cudaGetLastError());
  for (;;) {
    for (int r = 0; r < k; r++) {
      MaxSweep<<<Blocks(n), kBlock, 0, s>>>(n, g->ptr, g->adj, a, b);
      uint64_t *t = a;
      a           = b;
      b           = t;
    }
    PW_TRY(cudaMemsetAsync(counts, 0, 2 * sizeof(int), s));
    KMISUpdate<<<Blocks(n), kBlock, 0, s>>>(n, seed, state, a, counts);
    PW_TRY(cudaGetLastError());
    PW_TRY(Fetch(h, counts, sizeof(h), s));
    *count += h[0];
    if (!h[1]) break;
  }
  return 0;
}

/* ---------------------------------------------------------------------------------------------
   Partition */

/* The reference's LabelBetter: larger value, then larger hash of the label, then smaller label */
__device__ __forceinline__ bool LabelBetter(unsigned seed, int wa, int a, int wb, int b)
{
  if (wa != wb) return wa > wb;
  const uint32_t ha = PatchworkHash(seed, a), hb = PatchworkHash(seed, b);
  if (ha != hb) return ha > hb;
  return a < b;
}

__global__ void __launch_bounds__(kBlock) PartInit(int n, int *part)
{
  const long long v = Gid();

  if (v < n) part[v] = part[v] == KMIS_IN ? (int)v : -1;
}

/* The reference's Distance2: ((dx*dx + dy*dy) + dz*dz), every operation rounded on its own */
__device__ __forceinline__ double Distance2(const double *__restrict__ coord, int dim, int a, int b)
{
  const double *x = coord + (size_t)a * dim, *y = coord + (size_t)b * dim;
  double        d = __dsub_rn(x[0], y[0]), s = __dmul_rn(d, d);

  for (int i = 1; i < dim; i++) {
    d = __dsub_rn(x[i], y[i]);
    s = __dadd_rn(s, __dmul_rn(d, d));
  }
  return s;
}

/* The reference's GrowChoice: each distinct allocated label among v's neighbours (self loops
   skipped) is scored at its first occurrence as 1 + the weights of all neighbours carrying it, and
   with coordinates by the distance of its root (the label) to v, which ranks first */
__device__ int GrowChoice(const int *__restrict__ ptr, const int *__restrict__ adj, const int *__restrict__ weight, const double *__restrict__ coord, int dim, unsigned seed, const int *__restrict__ part, int v)
{
  const int s = ptr[v], e = ptr[v + 1];
  int       best = -1, bestacc = 0;
  double    bestd = 0;

  for (int j = s; j < e; j++) {
    const int u = adj[j], l = u == v ? -1 : part[u];
    bool      seen = false;
    int       acc  = 1;

    if (l < 0) continue;
    for (int i = s; i < j && !seen; i++) seen = adj[i] != v && part[adj[i]] == l;
    if (seen) continue;
    for (int i = j; i < e; i++)
      if (adj[i] != v && part[adj[i]] == l) acc += Weight(weight, adj[i]);
    const double d = coord ? Distance2(coord, dim, v, l) : 0;
    if (best < 0 || d < bestd || (d == bestd && LabelBetter(seed, acc, l, bestacc, best))) {
      best    = l;
      bestacc = acc;
      bestd   = d;
    }
  }
  return best;
}

/* One round of Grow: nxt = cur with every unallocated vertex's choice; counts[0] += allocated,
   counts[1] += left unallocated */
__global__ void __launch_bounds__(kBlock) GrowRound(int n, const int *__restrict__ ptr, const int *__restrict__ adj, const int *__restrict__ weight, const double *__restrict__ coord, int dim, unsigned seed, const int *__restrict__ cur, int *__restrict__ nxt, int *counts)
{
  const long long v   = Gid();
  int             got = 0, left = 0;

  if (v < n) {
    int p = cur[v];

    if (p < 0) {
      p    = GrowChoice(ptr, adj, weight, coord, dim, seed, cur, (int)v);
      got  = p >= 0;
      left = p < 0;
    }
    nxt[v] = p;
  }
  got  = __syncthreads_count(got);
  left = __syncthreads_count(left);
  if (threadIdx.x == 0) {
    if (got) atomicAdd(&counts[0], got);
    if (left) atomicAdd(&counts[1], left);
  }
}

/* wt[part[v]] += weight of v (wt zeroed by the caller) */
__global__ void __launch_bounds__(kBlock) PartWeights(int n, const int *weight, const int *part, int *wt)
{
  const long long v = Gid();

  if (v < n) atomicAdd(&wt[part[v]], Weight(weight, (int)v));
}

__global__ void __launch_bounds__(kBlock) DissolveMark(int n, const int *__restrict__ ptr, const int *__restrict__ adj, unsigned seed, int min_weight, const int *__restrict__ part, const int *__restrict__ wt, int *doomed)
{
  const long long v = Gid();

  if (v >= n) return;
  const int l = part[v], wl = wt[l], e = ptr[v + 1];

  if (wl >= min_weight) return;
  for (int j = ptr[v]; j < e; j++) {
    const int m = part[adj[j]];

    if (m != l && LabelBetter(seed, wt[m], m, wl, l)) {
      doomed[l] = 1;
      return;
    }
  }
}

__global__ void __launch_bounds__(kBlock) DissolveApply(int n, int *part, const int *doomed, int *counts)
{
  const long long v    = Gid();
  int             gone = 0;

  if (v < n && doomed[part[v]]) {
    part[v] = -1;
    gone    = 1;
  }
  gone = __syncthreads_count(gone);
  if (threadIdx.x == 0 && gone) atomicAdd(&counts[0], gone);
}

__global__ void __launch_bounds__(kBlock) Fill(long long count, int value, int *x)
{
  const long long i = Gid();

  if (i < count) x[i] = value;
}

__global__ void __launch_bounds__(kBlock) FirstVertex(int n, const int *part, int *first)
{
  const long long v = Gid();

  if (v < n) atomicMin(&first[part[v]], (int)v);
}

/* flag[v] = v is the smallest vertex of its part, for v < n; flag[n] = 0 */
__global__ void __launch_bounds__(kBlock) FirstFlags(int n, const int *part, const int *first, int *flag)
{
  const long long v = Gid();

  if (v < n) flag[v] = first[part[v]] == v;
  else if (v == n) flag[v] = 0;
}

__global__ void __launch_bounds__(kBlock) Renumber(int n, const int *cur, const int *first, const int *rank, int *part)
{
  const long long v = Gid();

  if (v < n) part[v] = rank[first[cur[v]]];
}

/* GroupIsolated of the reference, over the list of isolated vertices in vertex order: flag[v] =
   v is isolated (flag[n] = 0) */
__global__ void __launch_bounds__(kBlock) IsolatedFlags(int n, const int *__restrict__ ptr, const int *__restrict__ adj, int *flag)
{
  const long long v = Gid();

  if (v < n) {
    int iso = 1;

    for (int j = ptr[v]; j < ptr[v + 1] && iso; j++) iso = adj[j] == v;
    flag[v] = iso;
  } else if (v == n) flag[v] = 0;
}

/* list[rank[v]] = v for the isolated v; w[i] = the weight of list[i] */
__global__ void __launch_bounds__(kBlock) IsolatedList(int n, const int *weight, const int *flag, const int *rank, int *list, int *w)
{
  const long long v = Gid();

  if (v < n && flag[v]) {
    list[rank[v]] = (int)v;
    w[rank[v]]    = Weight(weight, (int)v);
  }
}

/* label[i] = list[i] where a group starts (its weight prefix W[i] enters a new multiple of cap),
   -1 elsewhere; a running maximum then labels every member by its group's first vertex */
__global__ void __launch_bounds__(kBlock) IsolatedStarts(int m, int cap, const int *list, const int *W, int *label)
{
  const long long i = Gid();

  if (i < m) label[i] = i == 0 || W[i] / cap != W[i - 1] / cap ? list[i] : -1;
}

__global__ void __launch_bounds__(kBlock) IsolatedApply(int m, const int *list, const int *label, int *part)
{
  const long long i = Gid();

  if (i < m) part[list[i]] = label[i];
}

/* Grow rounds until nothing is unallocated (left: how many are on entry); the labels move
   between *cur and *nxt, *cur holds them on exit. Returns 1 when a round allocates nothing. */
static int Grow(const PatchworkGraph *g, unsigned seed, int **cur, int **nxt, int left, int *counts, cudaStream_t s)
{
  int h[2];

  while (left > 0) {
    PW_TRY(cudaMemsetAsync(counts, 0, 2 * sizeof(int), s));
    GrowRound<<<Blocks(g->n), kBlock, 0, s>>>(g->n, g->ptr, g->adj, g->weight, g->coord, g->dim, seed, *cur, *nxt, counts);
    PW_TRY(cudaGetLastError());
    PW_TRY(Fetch(h, counts, sizeof(h), s));
    int *t = *cur;
    *cur   = *nxt;
    *nxt   = t;
    if (h[1] && !h[0]) return 1;
    left = h[1];
  }
  return 0;
}

} // namespace

extern "C" int PatchworkGraphKMISCUDA(const PatchworkGraph *g, int k, unsigned seed, int *in_set, int *count, void *stream)
{
  const cudaStream_t s = (cudaStream_t)stream;
  Scratch            mem(s);
  Verdict           *dres, hres;
  uint64_t          *a, *b;
  int               *counts, ret;

  if (!g || g->n < 0 || k < 1 || !count || (g->n > 0 && (!in_set || !g->ptr))) return 1;
  *count = 0;
  if (g->n == 0) return 0;
  PW_TRY(mem.Get(&dres, 1));
  PW_TRY(mem.Get(&a, g->n));
  PW_TRY(mem.Get(&b, g->n));
  PW_TRY(mem.Get(&counts, 2));
  if ((ret = CheckGraph(g, NULL, 0, dres, &hres, s))) return ret;
  if ((ret = KMISRun(g, k, seed, in_set, count, a, b, counts, s))) return ret;
  KMISFinish<<<Blocks(g->n), kBlock, 0, s>>>(g->n, in_set);
  return (int)cudaGetLastError();
}

extern "C" int PatchworkGraphPartitionCUDA(const PatchworkGraph *g, int k, unsigned seed, int min_weight, int *part, int *nparts, void *stream)
{
  const cudaStream_t s = (cudaStream_t)stream;
  Scratch            mem(s);
  Verdict           *dres, hres;
  uint64_t          *a, *b;
  int               *counts, *flag, *rank, *cur = part, *nxt, *wt, *doomed, *first, *list, *iw, *label, nroots, niso, ret, h[2];
  char              *tmp;
  size_t             tmp_bytes = 0, max_bytes = 0;
  const int          n         = g ? g->n : 0;

  if (!g || g->n < 0 || CoordBad(g) || k < 1 || !nparts || (g->n > 0 && (!part || !g->ptr))) return 1;
  *nparts = 0;
  if (n == 0) return 0;
  PW_TRY(cub::DeviceScan::ExclusiveSum(nullptr, tmp_bytes, (const int *)nullptr, (int *)nullptr, n + 1, s));
  PW_TRY(cub::DeviceScan::InclusiveScan(nullptr, max_bytes, (const int *)nullptr, (int *)nullptr, cuda::maximum<int>(), n, s));
  tmp_bytes = tmp_bytes > max_bytes ? tmp_bytes : max_bytes;
  PW_TRY(mem.Get(&dres, 1));
  PW_TRY(mem.Get(&a, n));
  PW_TRY(mem.Get(&b, n));
  PW_TRY(mem.Get(&counts, 2));
  PW_TRY(mem.Get(&flag, (size_t)n + 1));
  PW_TRY(mem.Get(&rank, (size_t)n + 1));
  PW_TRY(mem.Get(&list, (size_t)n));
  PW_TRY(mem.Get(&iw, (size_t)n + 1));
  PW_TRY(mem.Get(&label, (size_t)n));
  PW_TRY(mem.Get(&tmp, tmp_bytes));
  if ((ret = CheckGraph(g, NULL, 0, dres, &hres, s))) return ret;
  if ((ret = KMISRun(g, k, seed, part, &nroots, a, b, counts, s))) return ret;
  /* the keys are dead now: their room holds the label-indexed arrays */
  nxt    = (int *)a;
  wt     = nxt + n;
  doomed = (int *)b;
  first  = doomed + n;

  /* every root starts its own part (labelled by the root), then Grow and Dissolve as the CPU */
  PartInit<<<Blocks(n), kBlock, 0, s>>>(n, part);
  PW_TRY(cudaGetLastError());
  if ((ret = Grow(g, seed, &cur, &nxt, n - nroots, counts, s))) return ret;
  for (;;) {
    PW_TRY(cudaMemsetAsync(wt, 0, sizeof(int) * n, s));
    PW_TRY(cudaMemsetAsync(doomed, 0, sizeof(int) * n, s));
    PW_TRY(cudaMemsetAsync(counts, 0, sizeof(int), s));
    PartWeights<<<Blocks(n), kBlock, 0, s>>>(n, g->weight, cur, wt);
    DissolveMark<<<Blocks(n), kBlock, 0, s>>>(n, g->ptr, g->adj, seed, min_weight, cur, wt, doomed);
    DissolveApply<<<Blocks(n), kBlock, 0, s>>>(n, cur, doomed, counts);
    PW_TRY(cudaGetLastError());
    PW_TRY(Fetch(h, counts, sizeof(int), s));
    if (!h[0]) break;
    if ((ret = Grow(g, seed, &cur, &nxt, h[0], counts, s))) return ret;
  }

  /* group the isolated vertices: list, weights iw, their exclusive prefix W (in wt, dead now), group
     starts (over iw), labels */
  IsolatedFlags<<<Blocks((long long)n + 1), kBlock, 0, s>>>(n, g->ptr, g->adj, flag);
  PW_TRY(cudaGetLastError());
  PW_TRY(cub::DeviceScan::ExclusiveSum(tmp, tmp_bytes, flag, rank, n + 1, s));
  PW_TRY(Fetch(&niso, rank + n, sizeof(int), s));
  if (niso > 0) {
    int *W = wt;

    IsolatedList<<<Blocks(n), kBlock, 0, s>>>(n, g->weight, flag, rank, list, iw);
    PW_TRY(cudaGetLastError());
    PW_TRY(cub::DeviceScan::ExclusiveSum(tmp, tmp_bytes, iw, W, niso, s));
    IsolatedStarts<<<Blocks(niso), kBlock, 0, s>>>(niso, PatchworkIsolatedCap(min_weight), list, W, iw);
    PW_TRY(cudaGetLastError());
    PW_TRY(cub::DeviceScan::InclusiveScan(tmp, tmp_bytes, iw, label, cuda::maximum<int>(), niso, s));
    IsolatedApply<<<Blocks(niso), kBlock, 0, s>>>(niso, list, label, cur);
    PW_TRY(cudaGetLastError());
  }

  /* number the parts by their smallest vertex: a part's number is how many parts have a smaller
     first vertex, the rank of its first vertex among the flagged ones */
  Fill<<<Blocks(n), kBlock, 0, s>>>(n, INT_MAX, first);
  FirstVertex<<<Blocks(n), kBlock, 0, s>>>(n, cur, first);
  FirstFlags<<<Blocks((long long)n + 1), kBlock, 0, s>>>(n, cur, first, flag);
  PW_TRY(cudaGetLastError());
  PW_TRY(cub::DeviceScan::ExclusiveSum(tmp, tmp_bytes, flag, rank, n + 1, s));
  Renumber<<<Blocks(n), kBlock, 0, s>>>(n, cur, first, rank, part);
  PW_TRY(cudaGetLastError());
  PW_TRY(Fetch(nparts, rank + n, sizeof(int), s));
  return 0;
}

/* ---------------------------------------------------------------------------------------------
   Induce */

namespace {

/* cnt[v] = v's neighbours in another part; cnt[n] = 0 */
__global__ void __launch_bounds__(kBlock) CrossCount(int n, const int *__restrict__ ptr, const int *__restrict__ adj, const int *__restrict__ part, int *cnt)
{
  const long long v = Gid();

  if (v < n) {
    const int q = part[v], e = ptr[v + 1];
    int       c = 0;

    for (int j = ptr[v]; j < e; j++) c += part[adj[j]] != q;
    cnt[v] = c;
  } else if (v == n) cnt[v] = 0;
}

__global__ void __launch_bounds__(kBlock) CrossKeys(int n, const int *__restrict__ ptr, const int *__restrict__ adj, const int *__restrict__ part, const int *__restrict__ off, int bits, unsigned long long *key)
{
  const long long v = Gid();

  if (v >= n) return;
  const int q = part[v], e = ptr[v + 1];
  int       o = off[v];

  for (int j = ptr[v]; j < e; j++) {
    const int r = part[adj[j]];

    if (r != q) key[o++] = (unsigned long long)q << bits | (unsigned)r;
  }
}

/* start[r] = the first i with key[i] >> shift >= r, for r = 0..nrows (key sorted): the group
   starts; with low != NULL also low[i] = the key's low shift bits */
template <typename K>
__global__ void __launch_bounds__(kBlock) RowStarts(int m, const K *__restrict__ key, int shift, int nrows, int *start, int *low)
{
  const long long r = Gid();

  if (low && r < m) low[r] = (int)(key[r] & (((K)1 << shift) - 1));
  if (r > nrows) return;
  int lo = 0, hi = m;

  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;

    if ((long long)(key[mid] >> shift) < r) lo = mid + 1;
    else hi = mid;
  }
  start[r] = lo;
}

__global__ void __launch_bounds__(kBlock) Iota(int count, int *x)
{
  const long long i = Gid();

  if (i < count) x[i] = (int)i;
}

/* centroid[q*dim + d] for every q < nparts, d < dim (one thread each): the reference's Centroids
   over the vertices order[start[q] .. start[q+1]), ascending; 0 for an empty part */
__global__ void __launch_bounds__(kBlock) Centroids(int nparts, int dim, const double *__restrict__ coord, const int *__restrict__ order, const int *__restrict__ start, double *__restrict__ centroid)
{
  const long long t = Gid();

  if (t >= (long long)nparts * dim) return;
  const int q = (int)(t / dim), d = (int)(t % dim), b = start[q], e = start[q + 1];
  double    s = 0;

  for (int i = b; i < e; i++) s = __dadd_rn(s, coord[(size_t)order[i] * dim + d]);
  centroid[t] = e > b ? __ddiv_rn(s, (double)(e - b)) : 0;
}

/* The centroids of the parts into centroid (nparts*dim, device); n > 0 */
static int InduceCentroids(const PatchworkGraph *g, const int *part, int nparts, double *centroid, Scratch &mem, cudaStream_t s)
{
  const int n = g->n, bits = Bits(nparts > 0 ? nparts - 1 : 0);
  int      *iota, *order, *start;
  unsigned *ksorted;
  char     *tmp;
  size_t    tmp_bytes = 0;

  PW_TRY(cub::DeviceRadixSort::SortPairs(nullptr, tmp_bytes, (const unsigned *)nullptr, (unsigned *)nullptr, (const int *)nullptr, (int *)nullptr, n, 0, bits, s));
  PW_TRY(mem.Get(&tmp, tmp_bytes));
  PW_TRY(mem.Get(&iota, n));
  PW_TRY(mem.Get(&order, n));
  PW_TRY(mem.Get(&ksorted, n));
  PW_TRY(mem.Get(&start, (size_t)nparts + 1));
  Iota<<<Blocks(n), kBlock, 0, s>>>(n, iota);
  PW_TRY(cudaGetLastError());
  /* radix sorts are stable: within a part the vertices stay ascending, as the CPU's grouping */
  PW_TRY(cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, (const unsigned *)part, ksorted, iota, order, n, 0, bits, s));
  RowStarts<unsigned><<<Blocks((long long)nparts + 1), kBlock, 0, s>>>(n, ksorted, 0, nparts, start, nullptr);
  if (nparts > 0) Centroids<<<Blocks((long long)nparts * g->dim), kBlock, 0, s>>>(nparts, g->dim, g->coord, order, start, centroid);
  return (int)cudaGetLastError();
}

} // namespace

extern "C" int PatchworkGraphInduceCUDA(const PatchworkGraph *g, const int *part, int nparts, PatchworkGraph *c, void *stream)
{
  const cudaStream_t  s = (cudaStream_t)stream;
  Scratch             mem(s);
  Verdict            *dres, hres;
  int                *cnt, *off, *nsel, *ptr = nullptr, *adj = nullptr, *weight = nullptr, m = 0, ne = 0, ret, bits;
  double             *coord = nullptr;
  unsigned long long *k0 = nullptr, *k1 = nullptr;
  char               *tmp;
  size_t              tmp_bytes = 0, bytes;
  cudaError_t         e;

  if (!c) return 1;
  memset(c, 0, sizeof(*c));
  if (!g || g->n < 0 || CoordBad(g) || (g->n > 0 && !g->ptr) || nparts < 0 || (g->n > 0 && (!part || nparts < 1))) return 1;
  const int n = g->n;
  bits        = Bits(nparts > 0 ? nparts - 1 : 0);
  if (n > 0) {
    PW_TRY(mem.Get(&dres, 1));
    if ((ret = CheckGraph(g, part, nparts, dres, &hres, s))) return ret;
    /* the edges between parts, as sortable keys */
    PW_TRY(mem.Get(&cnt, (size_t)n + 1));
    PW_TRY(mem.Get(&off, (size_t)n + 1));
    PW_TRY(mem.Get(&nsel, 1));
    CrossCount<<<Blocks((long long)n + 1), kBlock, 0, s>>>(n, g->ptr, g->adj, part, cnt);
    PW_TRY(cudaGetLastError());
    PW_TRY(cub::DeviceScan::ExclusiveSum(nullptr, tmp_bytes, cnt, off, n + 1, s));
    PW_TRY(mem.Get(&tmp, tmp_bytes));
    PW_TRY(cub::DeviceScan::ExclusiveSum(tmp, tmp_bytes, cnt, off, n + 1, s));
    PW_TRY(Fetch(&m, off + n, sizeof(int), s));
  }
  if (m > 0) {
    PW_TRY(mem.Get(&k0, m));
    PW_TRY(mem.Get(&k1, m));
    CrossKeys<<<Blocks(n), kBlock, 0, s>>>(n, g->ptr, g->adj, part, off, bits, k0);
    PW_TRY(cudaGetLastError());
    cub::DoubleBuffer<unsigned long long> keys(k0, k1);
    tmp_bytes = 0;
    PW_TRY(cub::DeviceRadixSort::SortKeys(nullptr, tmp_bytes, keys, m, 0, 2 * bits, s));
    bytes = 0;
    PW_TRY(cub::DeviceSelect::Unique(nullptr, bytes, k0, k1, nsel, m, s));
    PW_TRY(mem.Get(&tmp, tmp_bytes > bytes ? tmp_bytes : bytes));
    PW_TRY(cub::DeviceRadixSort::SortKeys(tmp, tmp_bytes, keys, m, 0, 2 * bits, s));
    PW_TRY(cub::DeviceSelect::Unique(tmp, bytes, keys.Current(), keys.Alternate(), nsel, m, s));
    PW_TRY(Fetch(&ne, nsel, sizeof(int), s));
    k0 = keys.Alternate();
  }
  /* the graph's arrays: cudaMalloc, so that they outlive the stream-ordered scratch */
  if ((e = cudaMalloc(&ptr, sizeof(int) * ((size_t)nparts + 1))) != cudaSuccess || (e = cudaMalloc(&adj, sizeof(int) * (ne ? (size_t)ne : 1))) != cudaSuccess ||
      (e = cudaMalloc(&weight, sizeof(int) * (nparts ? (size_t)nparts : 1))) != cudaSuccess)
    goto fail;
  if (ne > 0) RowStarts<unsigned long long><<<Blocks((long long)(ne > nparts ? ne : nparts) + 1), kBlock, 0, s>>>(ne, k0, bits, nparts, ptr, adj);
  else if ((e = cudaMemsetAsync(ptr, 0, sizeof(int) * ((size_t)nparts + 1), s)) != cudaSuccess) goto fail;
  if ((e = cudaMemsetAsync(weight, 0, sizeof(int) * (nparts ? (size_t)nparts : 1), s)) != cudaSuccess) goto fail;
  if (n > 0) PartWeights<<<Blocks(n), kBlock, 0, s>>>(n, g->weight, part, weight);
  if ((e = cudaGetLastError()) != cudaSuccess) goto fail;
  if (g->coord) {
    const size_t count = (size_t)nparts * (size_t)g->dim, bytes = sizeof(double) * (count ? count : 1);

    if ((e = cudaMalloc(&coord, bytes)) != cudaSuccess) goto fail;
    if (n == 0) e = cudaMemsetAsync(coord, 0, bytes, s); /* only empty parts (all-zero bits: 0.0) */
    else e = (cudaError_t)InduceCentroids(g, part, nparts, coord, mem, s);
    if (e != cudaSuccess) goto fail;
    c->dim   = g->dim;
    c->coord = coord;
  }
  c->n      = nparts;
  c->ptr    = ptr;
  c->adj    = adj;
  c->weight = weight;
  return 0;
fail:
  cudaFree(ptr);
  cudaFree(adj);
  cudaFree(weight);
  cudaFree(coord);
  return (int)e;
}

extern "C" void PatchworkGraphFreeCUDA(PatchworkGraph *g)
{
  if (!g) return;
  cudaFree((void *)g->ptr);
  cudaFree((void *)g->adj);
  cudaFree((void *)g->weight);
  cudaFree((void *)g->coord);
  memset(g, 0, sizeof(*g));
}

/* ---------------------------------------------------------------------------------------------
   LevelOrder */

namespace {

/* bad = an aggregate or a patch out of range */
__global__ void __launch_bounds__(kBlock) CheckLevel(int n, const int *agg, int naggs, const int *patch, int npatch, int *bad)
{
  const long long stride = (long long)gridDim.x * blockDim.x;
  bool            b      = false;

  for (long long v = Gid(); v < n; v += stride) b = b || agg[v] < 0 || agg[v] >= naggs;
  for (long long a = Gid(); a < naggs; a += stride) b = b || patch[a] < 0 || patch[a] >= npatch;
  if (b) atomicOr(bad, 1);
}

/* inv[perm[i]] = i */
__global__ void __launch_bounds__(kBlock) Invert(int count, const int *perm, int *inv)
{
  const long long i = Gid();

  if (i < count) inv[perm[i]] = (int)i;
}

/* key[v] = apos[agg[v]] */
__global__ void __launch_bounds__(kBlock) Gather(int count, const int *idx, const int *val, unsigned *key)
{
  const long long i = Gid();

  if (i < count) key[i] = (unsigned)val[idx[i]];
}

} // namespace

extern "C" int PatchworkGraphLevelOrderCUDA(int n, const int *agg, int naggs, const int *patch, int npatch, int *order, int *pos, int *patch_ptr, void *stream)
{
  const cudaStream_t s = (cudaStream_t)stream;
  Scratch            mem(s);
  int               *bad, hbad = 0, *iota, *aorder, *pstart, *apos, *astart;
  unsigned          *psorted, *key, *ksorted;
  char              *tmp;
  size_t             tmp_bytes = 0, bytes = 0;
  const int          nmax = n > naggs ? n : naggs, pbits = Bits(npatch > 0 ? npatch - 1 : 0), abits = Bits(naggs > 0 ? naggs - 1 : 0);

  if (n < 0 || naggs < 0 || npatch < 0 || !patch_ptr || (n > 0 && (!agg || !order || !pos)) || (naggs > 0 && !patch)) return 1;
  PW_TRY(mem.Get(&bad, 1));
  PW_TRY(cudaMemsetAsync(bad, 0, sizeof(int), s));
  if (nmax > 0) {
    CheckLevel<<<StrideBlocks(), kBlock, 0, s>>>(n, agg, naggs, patch, npatch, bad);
    PW_TRY(cudaGetLastError());
    PW_TRY(Fetch(&hbad, bad, sizeof(int), s));
    if (hbad) return 1;
  }
  if (naggs > 0) PW_TRY(cub::DeviceRadixSort::SortPairs(nullptr, tmp_bytes, (const unsigned *)patch, (unsigned *)nullptr, (const int *)nullptr, (int *)nullptr, naggs, 0, pbits, s));
  if (n > 0) PW_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, (const unsigned *)nullptr, (unsigned *)nullptr, (const int *)nullptr, (int *)nullptr, n, 0, abits, s));
  PW_TRY(mem.Get(&tmp, tmp_bytes > bytes ? tmp_bytes : bytes));
  tmp_bytes = tmp_bytes > bytes ? tmp_bytes : bytes;
  PW_TRY(mem.Get(&iota, nmax));
  PW_TRY(mem.Get(&psorted, naggs));
  PW_TRY(mem.Get(&aorder, naggs));
  PW_TRY(mem.Get(&pstart, (size_t)npatch + 1));
  PW_TRY(mem.Get(&apos, naggs));
  PW_TRY(mem.Get(&key, n));
  PW_TRY(mem.Get(&ksorted, n));
  PW_TRY(mem.Get(&astart, (size_t)naggs + 1));
  if (nmax > 0) Iota<<<Blocks(nmax), kBlock, 0, s>>>(nmax, iota);

  /* the aggregates by patch (radix sorts are stable), the first aggregate of every patch */
  if (naggs > 0) {
    bytes = tmp_bytes;
    PW_TRY(cub::DeviceRadixSort::SortPairs(tmp, bytes, (const unsigned *)patch, psorted, iota, aorder, naggs, 0, pbits, s));
    Invert<<<Blocks(naggs), kBlock, 0, s>>>(naggs, aorder, apos);
  }
  RowStarts<unsigned><<<Blocks((long long)npatch + 1), kBlock, 0, s>>>(naggs, psorted, 0, npatch, pstart, nullptr);
  /* the vertices by the position of their aggregate, the first position of every aggregate */
  if (n > 0) {
    Gather<<<Blocks(n), kBlock, 0, s>>>(n, agg, apos, key);
    bytes = tmp_bytes;
    PW_TRY(cub::DeviceRadixSort::SortPairs(tmp, bytes, key, ksorted, iota, order, n, 0, abits, s));
    Invert<<<Blocks(n), kBlock, 0, s>>>(n, order, pos);
  }
  RowStarts<unsigned><<<Blocks((long long)naggs + 1), kBlock, 0, s>>>(n, ksorted, 0, naggs, astart, nullptr);
  /* patch_ptr[p] = astart[pstart[p]] */
  Gather<<<Blocks((long long)npatch + 1), kBlock, 0, s>>>(npatch + 1, pstart, astart, (unsigned *)patch_ptr);
  return (int)cudaGetLastError();
}
