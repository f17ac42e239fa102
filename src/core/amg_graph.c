/* CPU reference of PCPATCHAMG's graph partitions (contract: include/patchwork/amg_kernel.h): the
   k-MIS, the aggregate/patch partition with size control, the exchange balancing of patches, the
   quotient graph and the grouping permutation (Fu, Lewis, Kirby, Whitaker 2014, section 5.2.1).

   Every step is a loop of synchronous rounds: a round computes all its decisions from the state at
   its start, then applies them together. The result therefore depends on the seed only, never on
   the order in which vertices or their neighbours are visited, and a GPU kernel with one thread per
   vertex reproduces it exactly, provided it uses the same Hash() below (murmur3's 32-bit finalizer
   applied to v xor the mixed seed; a bijection of v for every seed).

   The graph is taken as undirected: u in adj(v) must imply v in adj(u) (not checked; an unsymmetric
   graph can make the partition fail with an error). Self loops are skipped; a repeated entry counts
   as often as it appears, the same on every visit order.

   Vertex coordinates (optional) steer the growth of parts (the paper's section 5.1: ungrouped
   nodes join the nearest aggregate) and give the induced graph its centroids. Every floating-point
   result here must equal the GPU's bit for bit, so the operations are fixed: squared distances as
   ((dx*dx + dy*dy) + dz*dz) with each product rounded (no fused multiply-add), centroid sums in
   ascending vertex order.

   Cost: O(nnz) per round, over a few arrays of n; nothing is allocated per vertex. The k-MIS takes
   k sweeps per round and O(log n) rounds in practice; part growth visits each vertex it allocates
   once (a frontier), a dissolution pass is O(n) plus the edges of the light parts. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <patchwork/amg_kernel.h>
#include <patchwork/amg_hash.h>

enum { KMIS_OUT = 0, KMIS_UNDECIDED = 1, KMIS_IN = 2 }; /* ordered: an undecided vertex outranks an excluded one */

#define BALANCE_REACH 1024 /* largest neighbourhood the local connectivity test of Balance explores */

static void *Alloc(size_t count, size_t size)
{
  return malloc(count ? count * size : 1);
}

/* The tie-breaking hash of (seed, v); the CUDA kernels compute the same */
static inline uint32_t Hash(unsigned seed, int v)
{
  return PatchworkHash(seed, v);
}

static inline int Weight(const PatchworkGraph *g, int v)
{
  return g->weight ? g->weight[v] : 1;
}

/* Validate the CSR arrays (rows nondecreasing, neighbours in range, weights >= 0 with a total that
   leaves one unit of int headroom: sums of weights plus one are formed below); *maxdeg = longest row */
static int GraphCheck(const PatchworkGraph *g, int *maxdeg)
{
  long long total = 0;

  *maxdeg = 0;
  if (!g || g->n < 0) return 1;
  if (g->n == 0) return 0;
  if (!g->ptr || g->ptr[0] < 0) return 1;
  for (int v = 0; v < g->n; v++) {
    if (g->ptr[v + 1] < g->ptr[v]) return 1;
    if (g->ptr[v + 1] - g->ptr[v] > *maxdeg) *maxdeg = g->ptr[v + 1] - g->ptr[v];
    if (Weight(g, v) < 0) return 1;
    total += Weight(g, v);
  }
  if (total >= INT_MAX) return 1;
  if (g->ptr[g->n] > g->ptr[0] && !g->adj) return 1;
  for (int j = g->ptr[0]; j < g->ptr[g->n]; j++)
    if (g->adj[j] < 0 || g->adj[j] >= g->n) return 1;
  return 0;
}

/* Coordinates, where given, need a dimension of 1..3 */
static int CoordCheck(const PatchworkGraph *g)
{
  return g->coord && (g->dim < 1 || g->dim > 3);
}

static int PartCheck(int n, const int *part, int nparts)
{
  if (nparts < 0 || (n > 0 && (!part || nparts < 1))) return 1;
  for (int v = 0; v < n; v++)
    if (part[v] < 0 || part[v] >= nparts) return 1;
  return 0;
}

/* ---------------------------------------------------------------------------------------------
   k-MIS (Bell, Dalton, Olson 2012): the priority of a vertex is the tuple (state, hash, -index),
   packed into 64 bits so that "largest tuple" is an integer max: state in bits 62-63, the top 31
   bits of the hash in bits 31-61, INT_MAX - v in bits 0-30 (the smaller index wins a hash tie). */

static inline uint64_t KMISKey(int state, unsigned seed, int v)
{
  return (uint64_t)state << 62 | (uint64_t)(Hash(seed, v) >> 1) << 31 | (uint64_t)(INT_MAX - v);
}

/* out[v] = the largest of in[] over v and its neighbours */
static void MaxSweep(const PatchworkGraph *g, const uint64_t *in, uint64_t *out)
{
  for (int v = 0; v < g->n; v++) {
    uint64_t m = in[v];

    for (int j = g->ptr[v]; j < g->ptr[v + 1]; j++)
      if (in[g->adj[j]] > m) m = in[g->adj[j]];
    out[v] = m;
  }
}

/* state[v] = KMIS_IN or KMIS_OUT for every vertex; *count = vertices in the set. Each round, k max
   sweeps give every vertex the best key within distance k: an undecided vertex that holds it
   joins, one that sees a set vertex (the largest state) leaves; at least the best undecided
   vertex joins, so every round makes progress. */
static int KMISRun(const PatchworkGraph *g, int k, unsigned seed, int *state, int *count)
{
  const int n         = g->n;
  uint64_t *a         = Alloc(n, sizeof(uint64_t)), *b = Alloc(n, sizeof(uint64_t));
  int       undecided = n;

  *count = 0;
  if (!a || !b) {
    free(a);
    free(b);
    return 1;
  }
  for (int v = 0; v < n; v++) state[v] = KMIS_UNDECIDED;
  while (undecided > 0) {
    for (int v = 0; v < n; v++) a[v] = KMISKey(state[v], seed, v);
    for (int r = 0; r < k; r++) {
      uint64_t *t = a;

      MaxSweep(g, a, b);
      a = b;
      b = t;
    }
    /* a[v] now depends on the previous states only, so updating state[] in place is synchronous */
    for (int v = 0; v < n; v++) {
      if (state[v] != KMIS_UNDECIDED) continue;
      if (a[v] == KMISKey(KMIS_UNDECIDED, seed, v)) {
        state[v] = KMIS_IN;
        (*count)++;
        undecided--;
      } else if ((int)(a[v] >> 62) == KMIS_IN) {
        state[v] = KMIS_OUT;
        undecided--;
      }
    }
  }
  free(a);
  free(b);
  return 0;
}

int PatchworkGraphKMIS(const PatchworkGraph *g, int k, unsigned seed, int *in_set, int *count)
{
  int maxdeg;

  if (GraphCheck(g, &maxdeg) || k < 1 || !count || (g->n > 0 && !in_set)) return 1;
  if (KMISRun(g, k, seed, in_set, count)) return 1;
  for (int v = 0; v < g->n; v++) in_set[v] = in_set[v] == KMIS_IN;
  return 0;
}

/* ---------------------------------------------------------------------------------------------
   Partition. During the work a part is labelled by its root vertex (labels lie in [0,n), so
   label-indexed scratch arrays have n entries); the final numbering comes at the end. */

/* Whether label a with value wa ranks above label b with value wb: larger value, then larger hash
   of the label, then smaller label */
static inline int LabelBetter(unsigned seed, int wa, int a, int wb, int b)
{
  if (wa != wb) return wa > wb;
  if (Hash(seed, a) != Hash(seed, b)) return Hash(seed, a) > Hash(seed, b);
  return a < b;
}

/* Squared distance of vertices a and b. The products go through volatile storage so that no
   compiler fuses them into the sums (a GNU-mode build may contract across statements): the CUDA
   kernels compute the same with __dsub_rn, __dmul_rn, __dadd_rn. */
static double Distance2(const PatchworkGraph *g, int a, int b)
{
  const double   *x = g->coord + (size_t)a * g->dim, *y = g->coord + (size_t)b * g->dim;
  volatile double sq[3];
  double          s;

  for (int d = 0; d < g->dim; d++) sq[d] = (x[d] - y[d]) * (x[d] - y[d]);
  s = sq[0];
  for (int d = 1; d < g->dim; d++) s = s + sq[d];
  return s;
}

/* The part an unallocated vertex v joins, or -1 when no neighbour is allocated: with coordinates
   the one whose root (the label) is nearest to v; then, and without coordinates first, the one
   whose allocated neighbours of v weigh most (ties: larger hash of the label, then smaller label).
   acc[] is zero on entry and on exit; it holds 1 + weight so that a zero-weight neighbour counts. */
static int GrowChoice(const PatchworkGraph *g, unsigned seed, const int *part, int v, int *acc, int *touched)
{
  int    nt = 0, best = -1;
  double bestd = 0;

  for (int j = g->ptr[v]; j < g->ptr[v + 1]; j++) {
    const int u = g->adj[j], l = u == v ? -1 : part[u];

    if (l < 0) continue;
    if (!acc[l]) {
      touched[nt++] = l;
      acc[l] = 1;
    }
    acc[l] += Weight(g, u);
  }
  for (int t = 0; t < nt; t++) {
    const int    l = touched[t];
    const double d = g->coord ? Distance2(g, v, l) : 0;

    if (best < 0 || d < bestd || (d == bestd && LabelBetter(seed, acc[l], l, acc[best], best))) {
      best  = l;
      bestd = d;
    }
  }
  for (int t = 0; t < nt; t++) acc[touched[t]] = 0;
  return best;
}

/* Allocate the nlist vertices of list[] (all unallocated, part -1) round by round; a round's
   choices read the previous round's part[] and are applied together. A vertex left unallocated by
   a round had no allocated neighbour, so the next round only needs the unallocated neighbours of
   the vertices just allocated: the frontier, marked UNALLOCATED_QUEUED in part[] to list it once.
   The work is then O(sum of the degrees), whatever the number of rounds. list[] and front[] (n
   entries each) are overwritten. A frontier that runs empty early means some vertex cannot reach
   any part, which an undirected graph rules out. */
#define UNALLOCATED_QUEUED (-2)
static int Grow(const PatchworkGraph *g, unsigned seed, int *part, int *list, int nlist, int *front, int *choice, int *acc, int *touched)
{
  int nf = 0;

  for (int i = 0; i < nlist; i++) {
    const int v = list[i];

    for (int j = g->ptr[v]; j < g->ptr[v + 1]; j++)
      if (part[g->adj[j]] >= 0) {
        part[v]     = UNALLOCATED_QUEUED;
        front[nf++] = v;
        break;
      }
  }
  while (nlist > 0) {
    int nnext = 0, *t;

    if (nf == 0) return 1;
    for (int i = 0; i < nf; i++) choice[i] = GrowChoice(g, seed, part, front[i], acc, touched);
    for (int i = 0; i < nf; i++) part[front[i]] = choice[i];
    nlist -= nf;
    for (int i = 0; i < nf; i++)
      for (int j = g->ptr[front[i]]; j < g->ptr[front[i] + 1]; j++) {
        const int u = g->adj[j];

        if (part[u] != -1) continue;
        part[u]       = UNALLOCATED_QUEUED;
        list[nnext++] = u;
      }
    t     = front;
    front = list;
    list  = t;
    nf    = nnext;
  }
  return 0;
}

/* Unallocate the parts lighter than min_weight that touch a part ranking above them (LabelBetter
   on the part weights) and list their vertices; returns how many. Among touching light parts the
   best one stays, so a connected component never loses all its parts; and as long as a light part
   touches another part, one of the two goes, so repeating until nothing goes leaves light parts
   only alone in their component (each pass removes at least one part; in practice a few passes
   do). The dissolved vertices are connected to a surviving part (follow the chain of better
   parts), so Grow() reallocates all of them. */
static int Dissolve(const PatchworkGraph *g, unsigned seed, int min_weight, int *part, int *wt, unsigned char *doomed, int *list)
{
  const int n     = g->n;
  int       nlist = 0;

  memset(wt, 0, sizeof(int) * n);
  memset(doomed, 0, n);
  for (int v = 0; v < n; v++) wt[part[v]] += Weight(g, v);
  for (int v = 0; v < n; v++) {
    const int l = part[v];

    if (wt[l] >= min_weight || doomed[l]) continue;
    for (int j = g->ptr[v]; j < g->ptr[v + 1]; j++) {
      const int m = part[g->adj[j]];

      if (m != l && LabelBetter(seed, wt[m], m, wt[l], l)) {
        doomed[l] = 1;
        break;
      }
    }
  }
  for (int v = 0; v < n; v++)
    if (doomed[part[v]]) {
      list[nlist++] = v;
      part[v]       = -1;
    }
  return nlist;
}

/* An isolated vertex (no neighbour but itself: a Dirichlet row, say) is a root alone in its
   component, so it would stay a part of its own, and coarsening would stall on them. They are
   grouped instead, in vertex order, by W / cap (W: the weight of the isolated vertices before v),
   into parts labelled by their first vertex. */
static inline int Isolated(const PatchworkGraph *g, int v)
{
  for (int j = g->ptr[v]; j < g->ptr[v + 1]; j++)
    if (g->adj[j] != v) return 0;
  return 1;
}

static void GroupIsolated(const PatchworkGraph *g, int min_weight, int *part)
{
  const int cap = PatchworkIsolatedCap(min_weight);
  int       w = 0, group = -1, label = -1;

  for (int v = 0; v < g->n; v++) {
    if (!Isolated(g, v)) continue;
    if (w / cap != group) {
      group = w / cap;
      label = v;
    }
    part[v] = label;
    w += Weight(g, v);
  }
}

int PatchworkGraphPartition(const PatchworkGraph *g, int k, unsigned seed, int min_weight, int *part, int *nparts)
{
  int            maxdeg, nroots, nlist = 0, np = 0, err = 1;
  int           *list = NULL, *front = NULL, *choice = NULL, *acc = NULL, *wt = NULL, *touched = NULL;
  unsigned char *doomed = NULL;

  if (GraphCheck(g, &maxdeg) || CoordCheck(g) || k < 1 || !nparts || (g->n > 0 && !part)) return 1;
  *nparts = 0;
  if (KMISRun(g, k, seed, part, &nroots)) return 1;
  list    = Alloc(g->n, sizeof(int));
  front   = Alloc(g->n, sizeof(int));
  choice  = Alloc(g->n, sizeof(int));
  acc     = calloc(g->n ? g->n : 1, sizeof(int));
  wt      = Alloc(g->n, sizeof(int));
  touched = Alloc(maxdeg, sizeof(int));
  doomed  = Alloc(g->n, 1);
  if (!list || !front || !choice || !acc || !wt || !touched || !doomed) goto out;

  /* every root starts its own part */
  for (int v = 0; v < g->n; v++) {
    if (part[v] == KMIS_IN) part[v] = v;
    else {
      part[v]       = -1;
      list[nlist++] = v;
    }
  }
  if (Grow(g, seed, part, list, nlist, front, choice, acc, touched)) goto out;
  while ((nlist = Dissolve(g, seed, min_weight, part, wt, doomed, list)) > 0)
    if (Grow(g, seed, part, list, nlist, front, choice, acc, touched)) goto out;

  GroupIsolated(g, min_weight, part);

  /* number the parts by their smallest vertex */
  for (int v = 0; v < g->n; v++) acc[v] = -1;
  for (int v = 0; v < g->n; v++) {
    if (acc[part[v]] < 0) acc[part[v]] = np++;
    part[v] = acc[part[v]];
  }
  *nparts = np;
  err     = 0;
out:
  free(list);
  free(front);
  free(choice);
  free(acc);
  free(wt);
  free(touched);
  free(doomed);
  return err;
}

/* ---------------------------------------------------------------------------------------------
   Balance. A move is (vertex v, its part p, a neighbouring part q with wt[p] - wt[q] = d > w(v));
   it changes |wt[p] - wt[q]| from d to |d - 2w|, a reduction r > 0. Moves rank by r, then d (to
   the lighter part), then gain = v's neighbours in q minus those in p (compact parts), then
   Hash(0, v), then the smaller vertex and part.

   A round, all from the state at its start: (1) every part offers its best move whose vertex can
   leave without splitting the part (LocalSafe); (2) every part takes the best offer made to it and
   no other, so that several neighbours cannot pile onto one light part at once; (3) a taken move
   stands only if its vertex has a neighbour in the new part other than the vertex that part gives
   away, so that a part that gives one vertex and takes one stays connected. */

typedef struct {
  int       v, q, d, gain;
  long long r;
  uint32_t  h;
} Move;

static int MoveBetter(const Move *a, const Move *b)
{
  if (b->v < 0) return a->v >= 0;
  if (a->v < 0) return 0;
  if (a->r != b->r) return a->r > b->r;
  if (a->d != b->d) return a->d > b->d;
  if (a->gain != b->gain) return a->gain > b->gain;
  if (a->h != b->h) return a->h > b->h;
  if (a->v != b->v) return a->v < b->v;
  return a->q < b->q;
}

/* The best move of v, or v = -1. A part of one vertex gives nothing. acc[] (part-indexed neighbour
   counts) is zero on entry and on exit. */
static Move BestMove(const PatchworkGraph *g, const int *part, const int *wt, const int *cnt, int v, int *acc, int *touched)
{
  const int p = part[v], w = Weight(g, v);
  Move      best = {-1, -1, 0, 0, 0, 0};
  int       nt   = 0;

  if (cnt[p] < 2 || w <= 0) return best;
  for (int j = g->ptr[v]; j < g->ptr[v + 1]; j++) {
    const int u = g->adj[j];

    if (u == v) continue;
    if (!acc[part[u]]++) touched[nt++] = part[u];
  }
  for (int t = 0; t < nt; t++) {
    const int q = touched[t], d = wt[p] - wt[q];

    if (q != p && d > w) {
      const Move m = {v, q, d, acc[q] - acc[p], (long long)d - llabs((long long)d - 2LL * w), Hash(0, v)};

      if (MoveBetter(&m, &best)) best = m;
    }
  }
  for (int t = 0; t < nt; t++) acc[touched[t]] = 0;
  return best;
}

/* Whether v can leave its part p without splitting it, judged locally: v's other neighbours in p
   must be connected through vertices of p, other than v, within distance 2 of v (then every vertex
   of p still reaches them). Sufficient, not necessary: a longer way round is not seen, and a
   neighbourhood larger than BALANCE_REACH counts as unsafe. mark[] is zero on entry and on exit;
   region[] and queue[] hold BALANCE_REACH entries. */
static int LocalSafe(const PatchworkGraph *g, const int *part, int v, unsigned char *mark, int *region, int *queue)
{
  enum { NEAR = 1, FAR = 2, SEEN = 4 };
  const int p = part[v];
  int       nr = 0, nnear, head = 0, tail = 0, reached = 0, safe = 0;

  for (int j = g->ptr[v]; j < g->ptr[v + 1]; j++) {
    const int u = g->adj[j];

    if (u == v || part[u] != p || mark[u]) continue;
    if (nr == BALANCE_REACH) goto out;
    mark[u]      = NEAR;
    region[nr++] = u;
  }
  nnear = nr;
  if (nnear <= 1) {
    safe = 1;
    goto out;
  }
  for (int i = 0; i < nnear; i++)
    for (int j = g->ptr[region[i]]; j < g->ptr[region[i] + 1]; j++) {
      const int u = g->adj[j];

      if (u == v || part[u] != p || mark[u]) continue;
      if (nr == BALANCE_REACH) goto out;
      mark[u]      = FAR;
      region[nr++] = u;
    }
  /* breadth-first search inside the region (v is unmarked) from one near vertex */
  mark[region[0]] |= SEEN;
  queue[tail++] = region[0];
  while (head < tail) {
    const int x = queue[head++];

    if (mark[x] & NEAR) reached++;
    for (int j = g->ptr[x]; j < g->ptr[x + 1]; j++) {
      const int u = g->adj[j];

      if (!mark[u] || (mark[u] & SEEN)) continue;
      mark[u] |= SEEN;
      queue[tail++] = u;
    }
  }
  safe = reached == nnear;
out:
  for (int i = 0; i < nr; i++) mark[region[i]] = 0;
  return safe;
}

/* Whether v, moving to part q, keeps a neighbour there that is not leaving q (mark[] set) */
static int StaysAttached(const PatchworkGraph *g, const int *part, const unsigned char *mark, int v, int q)
{
  for (int j = g->ptr[v]; j < g->ptr[v + 1]; j++)
    if (part[g->adj[j]] == q && !mark[g->adj[j]]) return 1;
  return 0;
}

int PatchworkGraphBalance(const PatchworkGraph *g, int nparts, int max_weight, int max_rounds, int *part)
{
  int            maxdeg, err = 1;
  int           *wt = NULL, *cnt = NULL, *acc = NULL, *touched = NULL, *region = NULL, *queue = NULL;
  Move          *offer = NULL, *take = NULL, *moves = NULL;
  unsigned char *mark = NULL;

  if (GraphCheck(g, &maxdeg) || max_rounds < 0 || PartCheck(g->n, part, nparts)) return 1;
  wt      = calloc(nparts ? nparts : 1, sizeof(int));
  cnt     = calloc(nparts ? nparts : 1, sizeof(int));
  acc     = calloc(nparts ? nparts : 1, sizeof(int));
  touched = Alloc(maxdeg, sizeof(int));
  region  = Alloc(BALANCE_REACH, sizeof(int));
  queue   = Alloc(BALANCE_REACH, sizeof(int));
  offer   = Alloc(nparts, sizeof(Move));
  take    = Alloc(nparts, sizeof(Move));
  moves   = Alloc(nparts, sizeof(Move));
  mark    = calloc(g->n ? g->n : 1, 1);
  if (!wt || !cnt || !acc || !touched || !region || !queue || !offer || !take || !moves || !mark) goto out;
  for (int v = 0; v < g->n; v++) {
    wt[part[v]] += Weight(g, v);
    cnt[part[v]]++;
  }
  for (int round = 0; round < max_rounds; round++) {
    int maxw = INT_MIN, nmove = 0;

    for (int p = 0; p < nparts; p++)
      if (wt[p] > maxw) maxw = wt[p];
    if (maxw <= max_weight) break;
    for (int p = 0; p < nparts; p++) offer[p].v = take[p].v = -1;
    /* (1) the offer of a part is its best safe move: the safety test runs only on a move that
       would beat the offer so far, and the outcome is the same in any visit order */
    for (int v = 0; v < g->n; v++) {
      const Move m = BestMove(g, part, wt, cnt, v, acc, touched);

      if (MoveBetter(&m, &offer[part[v]]) && LocalSafe(g, part, v, mark, region, queue)) offer[part[v]] = m;
    }
    /* (2) one vertex in per part */
    for (int p = 0; p < nparts; p++)
      if (offer[p].v >= 0 && MoveBetter(&offer[p], &take[offer[p].q])) take[offer[p].q] = offer[p];
    /* (3) against the vertices leaving; a move dropped here only keeps a vertex where it was */
    for (int q = 0; q < nparts; q++)
      if (take[q].v >= 0) mark[take[q].v] = 1;
    for (int q = 0; q < nparts; q++)
      if (take[q].v >= 0 && StaysAttached(g, part, mark, take[q].v, q)) moves[nmove++] = take[q];
    for (int q = 0; q < nparts; q++)
      if (take[q].v >= 0) mark[take[q].v] = 0;
    if (!nmove) break;
    for (int i = 0; i < nmove; i++) {
      const int v = moves[i].v, p = part[v], q = moves[i].q;

      part[v] = q;
      wt[p] -= Weight(g, v);
      wt[q] += Weight(g, v);
      cnt[p]--;
      cnt[q]++;
    }
  }
  err = 0;
out:
  free(wt);
  free(cnt);
  free(acc);
  free(touched);
  free(region);
  free(queue);
  free(offer);
  free(take);
  free(moves);
  free(mark);
  return err;
}

/* ---------------------------------------------------------------------------------------------
   Quotient graph and grouping permutation */

static int IntCompare(const void *a, const void *b)
{
  const int x = *(const int *)a, y = *(const int *)b;

  return (x > y) - (x < y);
}

int PatchworkGraphOrder(int n, const int *key, int nkeys, int *order, int *start)
{
  if (n < 0 || nkeys < 0 || !start || (n > 0 && (!key || !order))) return 1;
  for (int v = 0; v < n; v++)
    if (key[v] < 0 || key[v] >= nkeys) return 1;
  memset(start, 0, sizeof(int) * ((size_t)nkeys + 1));
  for (int v = 0; v < n; v++) start[key[v] + 1]++;
  for (int q = 0; q < nkeys; q++) start[q + 1] += start[q];
  /* start[q] serves as the cursor of key q, ending at the start of key q+1; then shift back */
  for (int v = 0; v < n; v++) order[start[key[v]]++] = v;
  for (int q = nkeys; q > 0; q--) start[q] = start[q - 1];
  start[0] = 0;
  return 0;
}

/* Row q of the quotient: the distinct parts other than q beside part q's vertices (unsorted);
   mark[] is part-indexed and must not hold q on entry; returns the row length */
static int QuotientRow(const PatchworkGraph *g, const int *part, const int *order, const int *start, int q, int *mark, int *row)
{
  int len = 0;

  for (int i = start[q]; i < start[q + 1]; i++) {
    const int v = order[i];

    for (int j = g->ptr[v]; j < g->ptr[v + 1]; j++) {
      const int r = part[g->adj[j]];

      if (r == q || mark[r] == q) continue;
      mark[r] = q;
      if (row) row[len] = r;
      len++;
    }
  }
  return len;
}

/* centroid[q*dim + d] = the mean of coordinate d over part q's vertices, summed in ascending vertex
   order (the grouping is stable); 0 for an empty part */
static void Centroids(const PatchworkGraph *g, int nparts, const int *order, const int *start, double *centroid)
{
  const int dim = g->dim;

  for (int q = 0; q < nparts; q++) {
    const int cnt = start[q + 1] - start[q];

    for (int d = 0; d < dim; d++) {
      double s = 0;

      for (int i = start[q]; i < start[q + 1]; i++) s += g->coord[(size_t)order[i] * dim + d];
      centroid[(size_t)q * dim + d] = cnt ? s / cnt : 0;
    }
  }
}

int PatchworkGraphInduce(const PatchworkGraph *g, const int *part, int nparts, PatchworkGraph *c)
{
  int     maxdeg, err = 1;
  int    *order = NULL, *start = NULL, *mark = NULL, *ptr = NULL, *adj = NULL, *weight = NULL;
  double *coord = NULL;

  if (!c) return 1;
  memset(c, 0, sizeof(*c));
  if (GraphCheck(g, &maxdeg) || CoordCheck(g) || PartCheck(g->n, part, nparts)) return 1;
  order  = Alloc(g->n, sizeof(int));
  start  = Alloc((size_t)nparts + 1, sizeof(int));
  mark   = Alloc(nparts, sizeof(int));
  ptr    = Alloc((size_t)nparts + 1, sizeof(int));
  weight = calloc(nparts ? nparts : 1, sizeof(int));
  if (!order || !start || !mark || !ptr || !weight) goto out;
  if (PatchworkGraphOrder(g->n, part, nparts, order, start)) goto out;
  /* two passes over the parts: count the rows, then fill and sort them */
  for (int q = 0; q < nparts; q++) mark[q] = -1;
  ptr[0] = 0;
  for (int q = 0; q < nparts; q++) ptr[q + 1] = ptr[q] + QuotientRow(g, part, order, start, q, mark, NULL);
  adj = Alloc(ptr[nparts], sizeof(int));
  if (!adj) goto out;
  for (int q = 0; q < nparts; q++) mark[q] = -1;
  for (int q = 0; q < nparts; q++) {
    QuotientRow(g, part, order, start, q, mark, adj + ptr[q]);
    qsort(adj + ptr[q], ptr[q + 1] - ptr[q], sizeof(int), IntCompare);
  }
  for (int v = 0; v < g->n; v++) weight[part[v]] += Weight(g, v);
  if (g->coord) {
    coord = Alloc((size_t)nparts * g->dim, sizeof(double));
    if (!coord) goto out;
    Centroids(g, nparts, order, start, coord);
    c->dim   = g->dim;
    c->coord = coord;
  }
  c->n      = nparts;
  c->ptr    = ptr;
  c->adj    = adj;
  c->weight = weight;
  err       = 0;
out:
  free(order);
  free(start);
  free(mark);
  if (err) {
    free(ptr);
    free(adj);
    free(weight);
    free(coord);
  }
  return err;
}

void PatchworkGraphFree(PatchworkGraph *g)
{
  if (!g) return;
  free((void *)g->ptr);
  free((void *)g->adj);
  free((void *)g->weight);
  free((void *)g->coord);
  memset(g, 0, sizeof(*g));
}

/* Two stable groupings: the aggregates by patch (aorder, pstart), then the vertices by the position
   of their aggregate in that order (order, astart); a patch's first position is the first position
   of its first aggregate. */
int PatchworkGraphLevelOrder(int n, const int *agg, int naggs, const int *patch, int npatch, int *order, int *pos, int *patch_ptr)
{
  int  err    = 1;
  int *aorder = NULL, *pstart = NULL, *apos = NULL, *key = NULL, *astart = NULL;

  if (n < 0 || naggs < 0 || npatch < 0 || !patch_ptr || (n > 0 && (!agg || !order || !pos)) || (naggs > 0 && !patch)) return 1;
  for (int v = 0; v < n; v++)
    if (agg[v] < 0 || agg[v] >= naggs) return 1;
  for (int a = 0; a < naggs; a++)
    if (patch[a] < 0 || patch[a] >= npatch) return 1;
  aorder = Alloc(naggs, sizeof(int));
  pstart = Alloc((size_t)npatch + 1, sizeof(int));
  apos   = Alloc(naggs, sizeof(int));
  key    = calloc(n ? n : 1, sizeof(int)); /* zeroed only to quiet -Wmaybe-uninitialized */
  astart = Alloc((size_t)naggs + 1, sizeof(int));
  if (!aorder || !pstart || !apos || !key || !astart) goto out;
  if (PatchworkGraphOrder(naggs, patch, npatch, aorder, pstart)) goto out;
  for (int i = 0; i < naggs; i++) apos[aorder[i]] = i;
  for (int v = 0; v < n; v++) key[v] = apos[agg[v]];
  if (PatchworkGraphOrder(n, key, naggs, order, astart)) goto out;
  for (int i = 0; i < n; i++) pos[order[i]] = i;
  for (int p = 0; p <= npatch; p++) patch_ptr[p] = astart[pstart[p]];
  err = 0;
out:
  free(aorder);
  free(pstart);
  free(apos);
  free(key);
  free(astart);
  return err;
}
