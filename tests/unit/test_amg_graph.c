/* Unit test of PCPATCHAMG's graph partitions (src/core/amg_graph.c, contract
   include/patchwork/amg_kernel.h), on a path, 2D/3D grid graphs (5/9/7/27-point), a random
   geometric graph and a weighted graph of several components with isolated vertices and self loops:
   (a) k-MIS: no two set vertices within distance k, every other vertex within distance k of one
       (breadth-first searches); the same set for shuffled adjacency rows and for the same seed,
       another for another seed;
   (b) partition: every vertex in a part, parts connected and numbered by their smallest vertex,
       weight >= min_weight unless the part is alone in its component, order independence;
   (c) induced graph: against a brute-force quotient, weights summing to the total, symmetric;
   (d) balance: the heaviest part lighter afterwards, no part empty or split, order independence;
   (e) order: a stable grouping permutation;
   (f) level order: a permutation with patches and aggregates contiguous, both in ascending order
       within their group, pos its inverse, patch_ptr right (random and real aggregates/patches);
   (g) bad arguments fail;
   (h) coordinates (geometry-informed partitions): a vertex joins the part of the nearest root where
       the weight rule would choose another (equal distances: the weight rule); partitions of a
       geometric graph, a path and perturbed/anisotropic 3D grids with coordinates pass (b) and are
       order independent; induced centroids equal a direct computation exactly; dim outside 1..3
       fails; coordinates NULL leave everything as without them.
   Prints aggregate and patch statistics of 3D grids, the compactness of aggregates with and without
   coordinates, and times the setup on a 100^3 7-point grid.
   PETSc-free. Prints one line per check and returns 1 if any check failed; --quick skips the
   timing (for valgrind). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <patchwork/amg_kernel.h>
#include "unittest.h"

/* ---------------------------------------------------------------------------------------------
   Test graphs: owned CSR arrays, built from undirected edge lists */

typedef struct {
  int  n;
  int *ptr, *adj, *weight;
} Graph;

typedef struct {
  int  ne, cap;
  int *e; /* pairs */
} Edges;

static PatchworkGraph View(const Graph *G)
{
  PatchworkGraph g = {G->n, G->ptr, G->adj, G->weight, 0, NULL};

  return g;
}

/* The same with vertex coordinates x[n*dim] */
static PatchworkGraph ViewCoord(const Graph *G, int dim, const double *x)
{
  PatchworkGraph g = {G->n, G->ptr, G->adj, G->weight, dim, x};

  return g;
}

static void GraphDestroy(Graph *G)
{
  free(G->ptr);
  free(G->adj);
  free(G->weight);
  memset(G, 0, sizeof(*G));
}

static void EdgeAdd(Edges *E, int a, int b)
{
  if (E->ne == E->cap) {
    E->cap = 2 * E->cap + 64;
    E->e   = realloc(E->e, sizeof(int) * 2 * (size_t)E->cap);
    if (!E->e) {
      fprintf(stderr, "FAIL out of memory\n");
      exit(1);
    }
  }
  E->e[2 * E->ne]     = a;
  E->e[2 * E->ne + 1] = b;
  E->ne++;
}

/* CSR with both directions of every edge (a self loop once); takes E */
static Graph FromEdges(int n, Edges *E)
{
  Graph G   = {n, Malloc(sizeof(int) * (n + 1)), NULL, NULL};
  int  *cur = Malloc(sizeof(int) * (n + 1));

  for (int i = 0; i < E->ne; i++) {
    G.ptr[E->e[2 * i] + 1]++;
    if (E->e[2 * i] != E->e[2 * i + 1]) G.ptr[E->e[2 * i + 1] + 1]++;
  }
  for (int v = 0; v < n; v++) G.ptr[v + 1] += G.ptr[v];
  G.adj = Malloc(sizeof(int) * (size_t)G.ptr[n]);
  memcpy(cur, G.ptr, sizeof(int) * n);
  for (int i = 0; i < E->ne; i++) {
    const int a = E->e[2 * i], b = E->e[2 * i + 1];

    G.adj[cur[a]++] = b;
    if (a != b) G.adj[cur[b]++] = a;
  }
  free(cur);
  free(E->e);
  memset(E, 0, sizeof(*E));
  return G;
}

static Graph Path(int n)
{
  Edges E = {0, 0, NULL};

  for (int v = 0; v + 1 < n; v++) EdgeAdd(&E, v, v + 1);
  return FromEdges(n, &E);
}

/* nx*ny*nz grid, x fastest; box: all 8/26 neighbours, else the 4/6 face neighbours */
static Graph Grid(int nx, int ny, int nz, int box)
{
  Edges E = {0, 0, NULL};

  for (int l = 0; l < nz; l++)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++)
        for (int dl = -1; dl <= 1; dl++)
          for (int dj = -1; dj <= 1; dj++)
            for (int di = -1; di <= 1; di++) {
              const int a = i + di, b = j + dj, c = l + dl, v = (l * ny + j) * nx + i, u = (c * ny + b) * nx + a;

              if (a < 0 || a >= nx || b < 0 || b >= ny || c < 0 || c >= nz || u <= v) continue;
              if (!box && abs(di) + abs(dj) + abs(dl) != 1) continue;
              EdgeAdd(&E, v, u);
            }
  return FromEdges(nx * ny * nz, &E);
}

/* n random points of the unit square joined when closer than r, numbered at offset off into E;
   the points go to *xout (2n entries) when it is given */
static void GeometricEdges(int n, double r, int off, Edges *E, uint64_t *s, double **xout)
{
  double *x = Malloc(sizeof(double) * 2 * n);

  for (int i = 0; i < 2 * n; i++) x[i] = Rand(s);
  for (int a = 0; a < n; a++)
    for (int b = a + 1; b < n; b++)
      if ((x[2 * a] - x[2 * b]) * (x[2 * a] - x[2 * b]) + (x[2 * a + 1] - x[2 * b + 1]) * (x[2 * a + 1] - x[2 * b + 1]) < r * r) EdgeAdd(E, off + a, off + b);
  if (xout) *xout = x;
  else free(x);
}

static Graph Geometric(int n, double r, uint64_t *s, double **xout)
{
  Edges E = {0, 0, NULL};

  GeometricEdges(n, r, 0, &E, s, xout);
  return FromEdges(n, &E);
}

/* Several components (a path, a grid, a geometric graph, a triangle, an edge, isolated vertices),
   vertices randomly renumbered so that they interleave, self loops on every 7th vertex, random
   weights 1..5 */
static Graph Mixed(uint64_t *s)
{
  const int nisolated = 6, n = 12 + 8 * 6 + 300 + 3 + 2 + nisolated;
  Edges     E = {0, 0, NULL}, F = {0, 0, NULL};
  int      *perm = Malloc(sizeof(int) * n), off = 0;
  Graph     G;

  for (int v = 0; v < 11; v++) EdgeAdd(&E, v, v + 1);
  off = 12;
  for (int j = 0; j < 6; j++)
    for (int i = 0; i < 8; i++) {
      if (i + 1 < 8) EdgeAdd(&E, off + j * 8 + i, off + j * 8 + i + 1);
      if (j + 1 < 6) EdgeAdd(&E, off + j * 8 + i, off + (j + 1) * 8 + i);
    }
  off += 48;
  GeometricEdges(300, 0.09, off, &E, s, NULL);
  off += 300;
  EdgeAdd(&E, off, off + 1);
  EdgeAdd(&E, off + 1, off + 2);
  EdgeAdd(&E, off + 2, off);
  off += 3;
  EdgeAdd(&E, off, off + 1);
  for (int v = 0; v < n; v++) perm[v] = v;
  for (int v = n - 1; v > 0; v--) {
    const int u = (int)(Rand(s) * (v + 1)), t = perm[v];

    perm[v] = perm[u];
    perm[u] = t;
  }
  for (int i = 0; i < E.ne; i++) EdgeAdd(&F, perm[E.e[2 * i]], perm[E.e[2 * i + 1]]);
  for (int v = 0; v < n; v += 7) EdgeAdd(&F, v, v);
  free(E.e);
  free(perm);
  G        = FromEdges(n, &F);
  G.weight = Malloc(sizeof(int) * n);
  for (int v = 0; v < n; v++) G.weight[v] = 1 + (int)(Rand(s) * 5);
  return G;
}

/* The same graph with every adjacency row in a random order */
static Graph Shuffled(const Graph *G, uint64_t *s)
{
  Graph H = {G->n, Malloc(sizeof(int) * (G->n + 1)), Malloc(sizeof(int) * ((size_t)G->ptr[G->n] + 1)), NULL};

  memcpy(H.ptr, G->ptr, sizeof(int) * (G->n + 1));
  memcpy(H.adj, G->adj, sizeof(int) * G->ptr[G->n]);
  if (G->weight) {
    H.weight = Malloc(sizeof(int) * G->n);
    memcpy(H.weight, G->weight, sizeof(int) * G->n);
  }
  for (int v = 0; v < G->n; v++)
    for (int j = H.ptr[v + 1] - 1; j > H.ptr[v]; j--) {
      const int i = H.ptr[v] + (int)(Rand(s) * (j - H.ptr[v] + 1)), t = H.adj[j];

      H.adj[j] = H.adj[i];
      H.adj[i] = t;
    }
  return H;
}

static int Weight(const Graph *G, int v)
{
  return G->weight ? G->weight[v] : 1;
}

static long TotalWeight(const Graph *G)
{
  long t = 0;

  for (int v = 0; v < G->n; v++) t += Weight(G, v);
  return t;
}

/* ---------------------------------------------------------------------------------------------
   Breadth-first searches written without the library's helpers */

/* dist[] = distance from the sources, up to depth (-1 beyond); dist[] must be all -1 on entry.
   Returns the number reached; queue[] lists them (for resetting dist[]). Only vertices with
   inside[u] == label are entered when inside is given. */
static int BFS(const Graph *G, int nsrc, const int *src, int depth, const int *inside, int label, int *dist, int *queue)
{
  int head = 0, tail = 0;

  for (int i = 0; i < nsrc; i++)
    if (dist[src[i]] < 0) {
      dist[src[i]]  = 0;
      queue[tail++] = src[i];
    }
  while (head < tail) {
    const int x = queue[head++];

    if (dist[x] == depth) continue;
    for (int j = G->ptr[x]; j < G->ptr[x + 1]; j++) {
      const int u = G->adj[j];

      if (dist[u] >= 0 || (inside && inside[u] != label)) continue;
      dist[u]       = dist[x] + 1;
      queue[tail++] = u;
    }
  }
  return tail;
}

/* comp[v] = connected component; returns their number */
static int Components(const Graph *G, int *comp)
{
  int *dist = Malloc(sizeof(int) * G->n), *queue = Malloc(sizeof(int) * G->n), nc = 0;

  for (int v = 0; v < G->n; v++) dist[v] = -1;
  for (int v = 0; v < G->n; v++) {
    if (dist[v] >= 0) continue;
    const int m = BFS(G, 1, &v, G->n, NULL, 0, dist, queue);

    for (int i = 0; i < m; i++) comp[queue[i]] = nc;
    nc++;
  }
  free(dist);
  free(queue);
  return nc;
}

/* Independence (a search of depth k from every set vertex meets no other) and maximality (a search
   of depth k from all set vertices reaches every vertex) */
static void CheckKMIS(int *fails, const char *name, const Graph *G, int k, const int *in_set, int count)
{
  int *dist = Malloc(sizeof(int) * G->n), *queue = Malloc(sizeof(int) * G->n), *src = Malloc(sizeof(int) * (G->n + 1));
  int  nsrc = 0, close = 0, missed, bad = 0;

  for (int v = 0; v < G->n; v++) {
    dist[v] = -1;
    if (in_set[v] != 0 && in_set[v] != 1) bad++;
    if (in_set[v]) src[nsrc++] = v;
  }
  for (int i = 0; i < nsrc; i++) {
    const int m = BFS(G, 1, &src[i], k, NULL, 0, dist, queue);

    for (int q = 0; q < m; q++) {
      if (queue[q] != src[i] && in_set[queue[q]]) close++;
      dist[queue[q]] = -1;
    }
  }
  missed = G->n - BFS(G, nsrc, src, k, NULL, 0, dist, queue);
  Check(fails, bad + abs(count - nsrc), 0, "%s k=%d: in_set is 0/1, count %d matches", name, k, count);
  Check(fails, close, 0, "%s k=%d: no two set vertices within distance k", name, k);
  Check(fails, missed, 0, "%s k=%d: every vertex within distance k of the set (maximal)", name, k);
  free(dist);
  free(queue);
  free(src);
}

typedef struct {
  int    nparts, minw, maxw;
  double meanw;
} PartStats;

/* Isolated vertices (no neighbour but themselves) share parts with each other only, in runs of
   vertex order: v joins the run of the isolated vertex before it unless the weight of the isolated
   vertices before v enters a new multiple of 4 max(min_weight, 1) (the contract's rule, counted
   here independently); returns how many vertices break it. *iso[v] = v is isolated. */
static int IsolatedViolations(const Graph *G, const int *part, int min_weight, int **iso)
{
  const int cap = 4 * (min_weight > 1 ? min_weight : 1);
  int       bad = 0, prev = -1, wprev = 0, w = 0;

  *iso = Malloc(sizeof(int) * (G->n + 1));
  for (int v = 0; v < G->n; v++) {
    (*iso)[v] = 1;
    for (int j = G->ptr[v]; j < G->ptr[v + 1]; j++)
      if (G->adj[j] != v) (*iso)[v] = 0;
  }
  for (int v = 0; v < G->n; v++) {
    if (!(*iso)[v]) continue;
    if (prev >= 0 && (part[v] == part[prev]) != (w / cap == wprev / cap)) bad++;
    prev  = v;
    wprev = w;
    w += Weight(G, v);
  }
  for (int v = 0; v < G->n; v++)
    for (int j = G->ptr[v]; j < G->ptr[v + 1]; j++) bad += !(*iso)[v] && (*iso)[G->adj[j]]; /* (unsymmetric input) */
  return bad;
}

/* Every vertex in a part, parts nonempty, connected (but for the groups of isolated vertices),
   numbered by their smallest vertex, and weight >= min_weight unless alone in their component
   (min_weight < 0: skip that); returns the weights */
static PartStats CheckPartition(int *fails, const char *name, const Graph *G, const int *part, int nparts, int min_weight)
{
  int      *wt = Malloc(sizeof(int) * (nparts + 1)), *first = Malloc(sizeof(int) * (nparts + 1)), *cnt = Malloc(sizeof(int) * (nparts + 1));
  int      *comp = Malloc(sizeof(int) * G->n), *pcomp = Malloc(sizeof(int) * G->n), *dist = Malloc(sizeof(int) * G->n), *queue = Malloc(sizeof(int) * G->n);
  int       range = 0, empty = 0, order = 0, split = 0, light = 0, next = 0, mixed = 0, nc, *iso = NULL;
  PartStats st = {nparts, 0, 0, 0};

  for (int p = 0; p < nparts; p++) first[p] = -1;
  for (int v = 0; v < G->n; v++) {
    dist[v] = -1;
    if (part[v] < 0 || part[v] >= nparts) {
      range++;
      continue;
    }
    wt[part[v]] += Weight(G, v);
    cnt[part[v]]++;
    if (first[part[v]] < 0) {
      first[part[v]] = v;
      if (part[v] != next++) order++;
    }
  }
  Check(fails, range, 0, "%s: every vertex in a part of [0,%d)", name, nparts);
  if (range) goto out;
  Check(fails, IsolatedViolations(G, part, min_weight, &iso), 0, "%s: isolated vertices grouped by the weight rule", name);
  for (int v = 0; v < G->n; v++) mixed += iso[v] != iso[first[part[v]]];
  Check(fails, mixed, 0, "%s: isolated vertices share parts with isolated ones only", name);
  for (int p = 0; p < nparts; p++) {
    if (!cnt[p]) {
      empty++;
      continue;
    }
    if (iso[first[p]]) continue;
    if (BFS(G, 1, &first[p], G->n, part, p, dist, queue) != cnt[p]) split++;
    for (int i = 0; i < cnt[p]; i++) dist[queue[i]] = -1;
  }
  /* a part alone in its component: no vertex of the component in another part */
  nc = Components(G, comp);
  for (int c = 0; c < nc; c++) pcomp[c] = -1;
  for (int v = 0; v < G->n; v++) pcomp[comp[v]] = pcomp[comp[v]] == -1 || pcomp[comp[v]] == part[v] ? part[v] : -2;
  for (int p = 0; p < nparts; p++)
    if (cnt[p] && min_weight >= 0 && wt[p] < min_weight && pcomp[comp[first[p]]] != p) light++;
  Check(fails, empty, 0, "%s: no part empty", name);
  Check(fails, order, 0, "%s: parts numbered by their smallest vertex", name);
  Check(fails, split, 0, "%s: every part connected", name);
  if (min_weight >= 0) Check(fails, light, 0, "%s: weight >= %d unless alone in the component", name, min_weight);
  st.minw = nparts ? wt[0] : 0;
  for (int p = 0; p < nparts; p++) {
    st.minw = wt[p] < st.minw ? wt[p] : st.minw;
    st.maxw = wt[p] > st.maxw ? wt[p] : st.maxw;
  }
  st.meanw = nparts ? (double)TotalWeight(G) / nparts : 0;
out:
  free(iso);
  free(wt);
  free(first);
  free(cnt);
  free(comp);
  free(pcomp);
  free(dist);
  free(queue);
  return st;
}

static int Differ(int n, const int *a, const int *b)
{
  int d = 0;

  for (int i = 0; i < n; i++) d += a[i] != b[i];
  return d;
}

/* ---------------------------------------------------------------------------------------------
   The tests */

static void TestKMIS(int *fails, const char *name, const Graph *G, int k, uint64_t *s, int expect_seed_change)
{
  Graph          H   = Shuffled(G, s);
  PatchworkGraph g   = View(G), h = View(&H);
  int           *a   = Malloc(sizeof(int) * G->n), *b = Malloc(sizeof(int) * G->n), *c = Malloc(sizeof(int) * G->n);
  int            ca = -1, cb = -1, cc = -1, err;

  err = PatchworkGraphKMIS(&g, k, 7, a, &ca);
  err |= PatchworkGraphKMIS(&h, k, 7, b, &cb);
  err |= PatchworkGraphKMIS(&g, k, 8, c, &cc);
  Check(fails, err, 0, "%s k=%d: k-MIS returns 0", name, k);
  CheckKMIS(fails, name, G, k, a, ca);
  CheckKMIS(fails, name, G, k, c, cc);
  Check(fails, Differ(G->n, a, b), 0, "%s k=%d: the same set with shuffled adjacency rows", name, k);
  PatchworkGraphKMIS(&g, k, 7, b, &cb);
  Check(fails, Differ(G->n, a, b), 0, "%s k=%d: the same set for the same seed", name, k);
  if (expect_seed_change) Check(fails, Differ(G->n, a, c) == 0, 0, "%s k=%d: another set for another seed (%d vs %d vertices)", name, k, ca, cc);
  GraphDestroy(&H);
  free(a);
  free(b);
  free(c);
}

/* Partition checks plus order independence */
static void TestPartition(int *fails, const char *name, const Graph *G, int k, int min_weight, uint64_t *s)
{
  Graph          H = Shuffled(G, s);
  PatchworkGraph g = View(G), h = View(&H);
  int           *a = Malloc(sizeof(int) * G->n), *b = Malloc(sizeof(int) * G->n);
  int            na = 0, nb = 0, err;
  char           label[128];

  err = PatchworkGraphPartition(&g, k, 3, min_weight, a, &na);
  err |= PatchworkGraphPartition(&h, k, 3, min_weight, b, &nb);
  snprintf(label, sizeof(label), "%s partition k=%d min_weight=%d", name, k, min_weight);
  Check(fails, err, 0, "%s returns 0", label);
  CheckPartition(fails, label, G, a, na, min_weight);
  Check(fails, Differ(G->n, a, b) + abs(na - nb), 0, "%s: the same with shuffled adjacency rows", label);
  GraphDestroy(&H);
  free(a);
  free(b);
}

/* Induce against a dense brute-force quotient (small graphs), plus the structural checks */
static void CheckInduce(int *fails, const char *name, const Graph *G, const int *part, int nparts, int brute)
{
  PatchworkGraph g = View(G), c;
  int            err = PatchworkGraphInduce(&g, part, nparts, &c), bad = 0, asym = 0, wrong = 0;
  long           total = 0;

  Check(fails, err, 0, "%s induce: returns 0", name);
  if (err) return;
  for (int q = 0; q < c.n; q++) {
    total += c.weight[q];
    for (int j = c.ptr[q]; j < c.ptr[q + 1]; j++) {
      const int r = c.adj[j];
      int       found = 0;

      if (r < 0 || r >= nparts || r == q || (j > c.ptr[q] && c.adj[j - 1] >= r)) bad++;
      for (int i = c.ptr[r]; i < c.ptr[r + 1]; i++) found += c.adj[i] == q;
      asym += found != 1;
    }
  }
  Check(fails, c.n != nparts || total != TotalWeight(G) || c.dim || c.coord, 0, "%s induce: %d vertices, weights sum to the total %ld, no coordinates", name, c.n, total);
  Check(fails, bad, 0, "%s induce: rows sorted, distinct, in range, no self loops", name);
  Check(fails, asym, 0, "%s induce: symmetric", name);
  if (brute) {
    char *A = Malloc((size_t)nparts * nparts);
    long *w = Malloc(sizeof(long) * nparts);

    for (int v = 0; v < G->n; v++) {
      w[part[v]] += Weight(G, v);
      for (int j = G->ptr[v]; j < G->ptr[v + 1]; j++)
        if (part[v] != part[G->adj[j]]) A[(size_t)part[v] * nparts + part[G->adj[j]]] = 1;
    }
    for (int q = 0; q < nparts; q++) {
      int len = 0;

      for (int r = 0; r < nparts; r++) len += A[(size_t)q * nparts + r];
      wrong += len != c.ptr[q + 1] - c.ptr[q] || w[q] != c.weight[q];
      for (int j = c.ptr[q]; j < c.ptr[q + 1]; j++) wrong += !A[(size_t)q * nparts + c.adj[j]];
    }
    Check(fails, wrong, 0, "%s induce: equals the brute-force quotient", name);
    free(A);
    free(w);
  }
  PatchworkGraphFree(&c);
  Check(fails, c.n || c.ptr || c.adj || c.weight || c.dim || c.coord, 0, "%s induce: PatchworkGraphFree zeroes the struct", name);
}

static void TestOrder(int *fails, uint64_t *s)
{
  const int n = 1000, nkeys = 37;
  int      *key = Malloc(sizeof(int) * n), *order = Malloc(sizeof(int) * n), *start = Malloc(sizeof(int) * (nkeys + 1)), *seen = Malloc(sizeof(int) * n);
  int       bad = 0, err;

  for (int v = 0; v < n; v++) key[v] = (int)(Rand(s) * (nkeys - 5)); /* some keys unused */
  err = PatchworkGraphOrder(n, key, nkeys, order, start);
  Check(fails, err, 0, "order: returns 0");
  bad += start[0] != 0 || start[nkeys] != n;
  for (int q = 0; q < nkeys; q++) {
    bad += start[q] > start[q + 1];
    for (int i = start[q]; i < start[q + 1]; i++) {
      bad += order[i] < 0 || order[i] >= n || key[order[i]] != q || (i > start[q] && order[i - 1] >= order[i]);
      if (order[i] >= 0 && order[i] < n) seen[order[i]]++;
    }
  }
  for (int v = 0; v < n; v++) bad += seen[v] != 1;
  Check(fails, bad, 0, "order: a permutation grouped by ascending key, stable, start[] right");
  key[5] = nkeys;
  Check(fails, !PatchworkGraphOrder(n, key, nkeys, order, start), 0, "order: key out of range fails");
  key[5] = -1;
  Check(fails, !PatchworkGraphOrder(n, key, nkeys, order, start), 0, "order: negative key fails");
  Check(fails, PatchworkGraphOrder(0, NULL, 0, NULL, start) || start[0] != 0, 0, "order: empty input");
  free(key);
  free(order);
  free(start);
  free(seen);
}

/* The positions of a level (PatchworkGraphLevelOrder): order a permutation, pos its inverse,
   patch_ptr the patch ranges; within a patch its aggregates contiguous in ascending aggregate
   order, within an aggregate its vertices ascending. Returns the number of violations. */
static int LevelOrderViolations(int n, const int *agg, int naggs, const int *patch, int npatch, const int *order, const int *pos, const int *patch_ptr)
{
  int *seen = Malloc(sizeof(int) * (n + 1)), *aseen = Malloc(sizeof(int) * (naggs + 1)), bad = 0;

  bad += patch_ptr[0] != 0 || patch_ptr[npatch] != n;
  for (int p = 0; p < npatch; p++) bad += patch_ptr[p] > patch_ptr[p + 1];
  for (int i = 0; i < n; i++) {
    const int v = order[i];

    if (v < 0 || v >= n || seen[v]++) {
      bad++;
      continue;
    }
    bad += pos[v] != i;
  }
  if (bad) goto out;
  for (int p = 0; p < npatch; p++)
    for (int i = patch_ptr[p]; i < patch_ptr[p + 1]; i++) {
      const int v = order[i], a = agg[v];

      bad += patch[a] != p;
      if (i == patch_ptr[p]) continue;
      if (agg[order[i - 1]] == a) bad += order[i - 1] >= v; /* ascending vertex within the aggregate */
      else bad += agg[order[i - 1]] > a || aseen[a]; /* ascending aggregate, each one contiguous */
      aseen[agg[order[i - 1]]] = 1;
    }
out:
  free(seen);
  free(aseen);
  return bad;
}

static void TestLevelOrder(int *fails, uint64_t *s)
{
  const int n = 3000, naggs = 211, npatch = 23;
  int      *agg = Malloc(sizeof(int) * n), *patch = Malloc(sizeof(int) * naggs), *order = Malloc(sizeof(int) * n), *pos = Malloc(sizeof(int) * n), *patch_ptr = Malloc(sizeof(int) * (npatch + 1));
  int      *order2 = Malloc(sizeof(int) * n), *pos2 = Malloc(sizeof(int) * n), *patch_ptr2 = Malloc(sizeof(int) * (npatch + 1)), err, nerr = 0;

  /* some aggregates and patches empty */
  for (int v = 0; v < n; v++) agg[v] = (int)(Rand(s) * (naggs - 7));
  for (int a = 0; a < naggs; a++) patch[a] = (int)(Rand(s) * (npatch - 3));
  err = PatchworkGraphLevelOrder(n, agg, naggs, patch, npatch, order, pos, patch_ptr);
  Check(fails, err, 0, "level order: returns 0");
  if (!err) Check(fails, LevelOrderViolations(n, agg, naggs, patch, npatch, order, pos, patch_ptr), 0, "level order (random %d vertices, %d aggregates, %d patches): permutation, pos inverse, patches and aggregates contiguous, stable", n, naggs, npatch);
  /* the same from the two groupings done by hand with PatchworkGraphOrder */
  {
    int *aorder = Malloc(sizeof(int) * naggs), *pstart = Malloc(sizeof(int) * (npatch + 1)), *apos = Malloc(sizeof(int) * naggs), *key = Malloc(sizeof(int) * n), *astart = Malloc(sizeof(int) * (naggs + 1)), bad = 0;

    PatchworkGraphOrder(naggs, patch, npatch, aorder, pstart);
    for (int i = 0; i < naggs; i++) apos[aorder[i]] = i;
    for (int v = 0; v < n; v++) key[v] = apos[agg[v]];
    PatchworkGraphOrder(n, key, naggs, order2, astart);
    for (int p = 0; p <= npatch; p++) bad += patch_ptr[p] != astart[pstart[p]];
    bad += Differ(n, order, order2);
    Check(fails, bad, 0, "level order: equals the two stable groupings (aggregates by patch, vertices by aggregate position)");
    free(aorder);
    free(pstart);
    free(apos);
    free(key);
    free(astart);
  }
  /* no aggregation: naggs vertices, one aggregate per vertex and one patch per aggregate (agg[]
     serves as both maps, pos[] as patch_ptr) give the identity; patch[] is refilled with valid
     values for the bad-argument checks below */
  {
    int bad = 0;

    for (int v = 0; v < n; v++) agg[v] = v < naggs ? v : 0;
    for (int a = 0; a < naggs; a++) patch[a] = a < npatch ? a : npatch - 1;
    bad += PatchworkGraphLevelOrder(naggs, agg, naggs, agg, naggs, order2, pos2, pos);
    for (int i = 0; i < naggs; i++) bad += order2[i] != i || pos2[i] != i || pos[i] != i;
    Check(fails, bad, 0, "level order: identity for singleton aggregates and patches");
  }
  Check(fails, PatchworkGraphLevelOrder(0, NULL, 0, NULL, 0, NULL, NULL, patch_ptr2) || patch_ptr2[0] != 0, 0, "level order: empty input");
  Check(fails, PatchworkGraphLevelOrder(0, NULL, 3, patch, npatch, NULL, NULL, patch_ptr2) || patch_ptr2[0] || patch_ptr2[npatch], 0, "level order: no vertices, some aggregates");
  for (int v = 0; v < n; v++) agg[v] = v % naggs;
  nerr += !PatchworkGraphLevelOrder(-1, agg, naggs, patch, npatch, order, pos, patch_ptr);
  nerr += !PatchworkGraphLevelOrder(n, agg, -1, patch, npatch, order, pos, patch_ptr);
  nerr += !PatchworkGraphLevelOrder(n, agg, naggs, patch, -1, order, pos, patch_ptr);
  nerr += !PatchworkGraphLevelOrder(n, agg, naggs, patch, npatch, order, pos, NULL);
  nerr += !PatchworkGraphLevelOrder(n, NULL, naggs, patch, npatch, order, pos, patch_ptr);
  nerr += !PatchworkGraphLevelOrder(n, agg, naggs, NULL, npatch, order, pos, patch_ptr);
  nerr += !PatchworkGraphLevelOrder(n, agg, naggs, patch, npatch, NULL, pos, patch_ptr);
  nerr += !PatchworkGraphLevelOrder(n, agg, naggs, patch, npatch, order, NULL, patch_ptr);
  agg[17] = naggs;
  nerr += !PatchworkGraphLevelOrder(n, agg, naggs, patch, npatch, order, pos, patch_ptr);
  agg[17] = -1;
  nerr += !PatchworkGraphLevelOrder(n, agg, naggs, patch, npatch, order, pos, patch_ptr);
  agg[17] = 0;
  patch[5] = npatch;
  nerr += !PatchworkGraphLevelOrder(n, agg, naggs, patch, npatch, order, pos, patch_ptr);
  patch[5] = -2;
  nerr += !PatchworkGraphLevelOrder(n, agg, naggs, patch, npatch, order, pos, patch_ptr);
  nerr += !PatchworkGraphLevelOrder(n, agg, naggs, patch, 0, order, pos, patch_ptr);
  Check(fails, nerr, 0, "level order: bad arguments (negative sizes, NULL, aggregate/patch out of range) fail");
  free(agg);
  free(patch);
  free(order);
  free(pos);
  free(patch_ptr);
  free(order2);
  free(pos2);
  free(patch_ptr2);
}

/* Count parts that are not connected (Balance keeps them connected only on a best-effort basis) */
static int SplitParts(const Graph *G, const int *part, int nparts)
{
  int *first = Malloc(sizeof(int) * (nparts + 1)), *cnt = Malloc(sizeof(int) * (nparts + 1)), *dist = Malloc(sizeof(int) * G->n), *queue = Malloc(sizeof(int) * G->n), split = 0;

  for (int p = 0; p < nparts; p++) first[p] = -1;
  for (int v = 0; v < G->n; v++) {
    dist[v] = -1;
    cnt[part[v]]++;
    if (first[part[v]] < 0) first[part[v]] = v;
  }
  for (int p = 0; p < nparts; p++) {
    if (!cnt[p]) continue;
    if (BFS(G, 1, &first[p], G->n, part, p, dist, queue) != cnt[p]) split++;
    for (int i = 0; i < cnt[p]; i++) dist[queue[i]] = -1;
  }
  free(first);
  free(cnt);
  free(dist);
  free(queue);
  return split;
}

/* Balance from part[] with cap max_weight: max weight down, no part empty, order independent */
static void TestBalance(int *fails, const char *name, const Graph *G, const int *part0, int nparts, int max_weight, int rounds, uint64_t *s)
{
  Graph          H = Shuffled(G, s);
  PatchworkGraph g = View(G), h = View(&H);
  int           *a = Malloc(sizeof(int) * G->n), *b = Malloc(sizeof(int) * G->n), *wt = Malloc(sizeof(int) * nparts);
  int            err, before = 0, after = 0, minw, empty = 0, split0 = SplitParts(G, part0, nparts), split;

  memcpy(a, part0, sizeof(int) * G->n);
  memcpy(b, part0, sizeof(int) * G->n);
  for (int v = 0; v < G->n; v++) wt[part0[v]] += Weight(G, v);
  for (int p = 0; p < nparts; p++) before = wt[p] > before ? wt[p] : before;
  err = PatchworkGraphBalance(&g, nparts, max_weight, rounds, a);
  err |= PatchworkGraphBalance(&h, nparts, max_weight, rounds, b);
  Check(fails, err, 0, "%s balance: returns 0", name);
  memset(wt, 0, sizeof(int) * nparts);
  for (int v = 0; v < G->n; v++) wt[a[v]] += Weight(G, v);
  minw = wt[0];
  for (int p = 0; p < nparts; p++) {
    after = wt[p] > after ? wt[p] : after;
    minw  = wt[p] < minw ? wt[p] : minw;
    empty += wt[p] == 0;
  }
  split = SplitParts(G, a, nparts);
  Check(fails, after >= before, 0, "%s balance: cap %d, max weight %d -> %d (min %d, mean %.1f)", name, max_weight, before, after, minw, (double)TotalWeight(G) / nparts);
  Check(fails, empty, 0, "%s balance: no part empty", name);
  Check(fails, split > split0, 0, "%s balance: no part split (%d -> %d disconnected)", name, split0, split);
  Check(fails, Differ(G->n, a, b), 0, "%s balance: the same with shuffled adjacency rows", name);
  GraphDestroy(&H);
  free(a);
  free(b);
  free(wt);
}

/* A 2D grid cut into vertical strips, one of them far over the cap */
static void TestBalanceStrips(int *fails, uint64_t *s)
{
  const int nx = 48, ny = 20, widths[] = {2, 3, 24, 4, 3, 4, 8}, nparts = 7;
  Graph     G    = Grid(nx, ny, 1, 0);
  int      *part = Malloc(sizeof(int) * G.n);

  for (int i = 0, p = 0, x = 0; i < nx; i++) {
    if (i == x + widths[p]) x += widths[p++];
    for (int j = 0; j < ny; j++) part[j * nx + i] = p;
  }
  TestBalance(fails, "2D 48x20 5-point strips", &G, part, nparts, 200, 400, s);
  free(part);
  GraphDestroy(&G);
}

/* Aggregates (k=2) of a 3D grid, their graph, patches (k=1) of that graph, balance: statistics and
   checks of the whole double partition */
static void TestDoublePartition(int *fails, const char *name, const Graph *G, int agg_min, int patch_min, int patch_cap, uint64_t *s)
{
  PatchworkGraph g = View(G), c;
  int           *agg = Malloc(sizeof(int) * G->n), nagg = 0, nroots = 0, *in_set = Malloc(sizeof(int) * G->n);
  char           label[160];
  PartStats      st;

  PatchworkGraphKMIS(&g, 2, 3, in_set, &nroots);
  snprintf(label, sizeof(label), "%s aggregates k=2 min %d", name, agg_min);
  Check(fails, PatchworkGraphPartition(&g, 2, 3, agg_min, agg, &nagg), 0, "%s: returns 0", label);
  st = CheckPartition(fails, label, G, agg, nagg, agg_min);
  printf("stats %s: %d vertices, %d k-MIS roots, %d aggregates, size mean %.1f min %d max %d\n", label, G->n, nroots, nagg, st.meanw, st.minw, st.maxw);
  if (!PatchworkGraphInduce(&g, agg, nagg, &c)) {
    Graph C     = {c.n, (int *)c.ptr, (int *)c.adj, (int *)c.weight};
    int  *patch = Malloc(sizeof(int) * c.n), npatch = 0;

    CheckInduce(fails, label, G, agg, nagg, 0);
    snprintf(label, sizeof(label), "%s patches k=1 min %d", name, patch_min);
    Check(fails, PatchworkGraphPartition(&c, 1, 5, patch_min, patch, &npatch), 0, "%s: returns 0", label);
    st = CheckPartition(fails, label, &C, patch, npatch, patch_min);
    printf("stats %s: %d aggregates (mean degree %.1f), %d patches, weight mean %.1f min %d max %d\n", label, c.n, (double)c.ptr[c.n] / c.n, npatch, st.meanw, st.minw, st.maxw);
    TestBalance(fails, label, &C, patch, npatch, patch_cap, 100, s);
    {
      int *order = Malloc(sizeof(int) * G->n), *pos = Malloc(sizeof(int) * G->n), *patch_ptr = Malloc(sizeof(int) * (npatch + 1)), err;

      PatchworkGraphBalance(&c, npatch, patch_cap, 100, patch);
      err = PatchworkGraphLevelOrder(G->n, agg, nagg, patch, npatch, order, pos, patch_ptr);
      Check(fails, err || LevelOrderViolations(G->n, agg, nagg, patch, npatch, order, pos, patch_ptr), 0, "%s: level order of the aggregates and balanced patches", label);
      free(order);
      free(pos);
      free(patch_ptr);
    }
    free(patch);
    PatchworkGraphFree(&c);
  }
  free(agg);
  free(in_set);
}

static void TestBadArguments(int *fails)
{
  int            ptr[4] = {0, 1, 3, 4}, adj[4] = {1, 0, 2, 1}, bad_adj[4] = {1, 0, 3, 1}, w[3] = {1, -1, 1};
  int            out[3], part[3] = {0, 0, 1}, bad_part[3] = {0, 2, 1}, count, np, nerr = 0;
  PatchworkGraph g = {3, ptr, adj, NULL, 0, NULL}, gb = {3, ptr, bad_adj, NULL, 0, NULL}, gw = {3, ptr, adj, w, 0, NULL}, gn = {-1, ptr, adj, NULL, 0, NULL}, c = {7, ptr, adj, w, 0, NULL};

  nerr += !PatchworkGraphKMIS(NULL, 1, 0, out, &count);
  nerr += !PatchworkGraphKMIS(&g, 0, 0, out, &count);
  nerr += !PatchworkGraphKMIS(&g, 1, 0, NULL, &count);
  nerr += !PatchworkGraphKMIS(&g, 1, 0, out, NULL);
  nerr += !PatchworkGraphKMIS(&gb, 1, 0, out, &count);
  nerr += !PatchworkGraphKMIS(&gw, 1, 0, out, &count);
  nerr += !PatchworkGraphKMIS(&gn, 1, 0, out, &count);
  nerr += !PatchworkGraphPartition(&g, 0, 0, 1, out, &np);
  nerr += !PatchworkGraphPartition(&g, 1, 0, 1, NULL, &np);
  nerr += !PatchworkGraphPartition(&g, 1, 0, 1, out, NULL);
  nerr += !PatchworkGraphPartition(&gb, 1, 0, 1, out, &np);
  nerr += !PatchworkGraphBalance(&g, 0, 1, 1, part);
  nerr += !PatchworkGraphBalance(&g, 2, 1, 1, bad_part);
  nerr += !PatchworkGraphBalance(&g, 2, 1, -1, part);
  nerr += !PatchworkGraphBalance(&g, 2, 1, 1, NULL);
  nerr += !PatchworkGraphInduce(&g, bad_part, 2, &c);
  nerr += c.n || c.ptr || c.adj || c.weight; /* zeroed on failure */
  nerr += !PatchworkGraphInduce(&g, part, 2, NULL);
  nerr += !PatchworkGraphInduce(&gb, part, 2, &c);
  nerr += !PatchworkGraphOrder(-1, part, 2, out, ptr);
  nerr += !PatchworkGraphOrder(3, part, 2, out, NULL);
  Check(fails, nerr, 0, "bad arguments (NULL, k < 1, neighbour/weight/part/key out of range, negative sizes) fail");
  PatchworkGraphFree(NULL);
}

/* Small cases: empty graph, one vertex, isolated vertices only, a complete graph */
static void TestSmall(int *fails)
{
  int            ptr[6] = {0, 0, 0, 0, 0, 0}, adj[1] = {0}, kptr[5] = {0, 3, 6, 9, 12}, kadj[12] = {1, 2, 3, 0, 2, 3, 0, 1, 3, 0, 1, 2}, out[5], count, np, bad = 0;
  PatchworkGraph e = {0, ptr, NULL, NULL, 0, NULL}, iso = {5, ptr, adj, NULL, 0, NULL}, k4 = {4, kptr, kadj, NULL, 0, NULL};

  bad += PatchworkGraphKMIS(&e, 1, 0, NULL, &count) || count != 0;
  bad += PatchworkGraphPartition(&e, 1, 0, 9, NULL, &np) || np != 0;
  bad += PatchworkGraphKMIS(&iso, 3, 0, out, &count) || count != 5;
  bad += PatchworkGraphPartition(&iso, 2, 0, 9, out, &np) || np != 1; /* groups of weight 4 * 9 */
  for (int v = 0; v < 5; v++) bad += out[v] != 0;
  bad += PatchworkGraphPartition(&iso, 2, 0, 1, out, &np) || np != 2; /* groups of weight 4 */
  for (int v = 0; v < 5; v++) bad += out[v] != v / 4;
  for (unsigned seed = 0; seed < 20; seed++) {
    bad += PatchworkGraphKMIS(&k4, 1, seed, out, &count) || count != 1;
    bad += PatchworkGraphPartition(&k4, 1, seed, 9, out, &np) || np != 1;
  }
  {
    Graph          P = Path(10);
    PatchworkGraph p = View(&P);
    int            part[10];

    /* every part of the path is light: dissolving them all would leave nothing to grow from */
    bad += PatchworkGraphPartition(&p, 1, 0, 100, part, &np) || np != 1;
    for (int v = 0; v < 10; v++) bad += part[v] != 0;
    GraphDestroy(&P);
  }
  Check(fails, bad, 0, "small graphs: empty, isolated vertices (grouped four times min_weight at a time), K4 (one root, one part), a path lighter than min_weight (one part)");
}

/* ---------------------------------------------------------------------------------------------
   Coordinates (geometry-informed partitions) */

/* Induce with coordinates x[n*dim]: c.dim = dim and the centroids equal a direct computation
   exactly (sums in ascending vertex order, then the division by the count), also with an empty part
   appended (centroid 0); PatchworkGraphFree zeroes the struct. Returns the compactness of the
   partition: the mean squared distance of the vertices to the centroid of their part. */
static double CheckCentroids(int *fails, const char *name, const Graph *G, int dim, const double *x, const int *part, int nparts)
{
  const PatchworkGraph g   = ViewCoord(G, dim, x);
  double              *sum = Malloc(sizeof(double) * (nparts + 1) * dim), msd = 0;
  int                 *cnt = Malloc(sizeof(int) * (nparts + 1)), wrong = 0, err = 0;

  for (int v = 0; v < G->n; v++) {
    cnt[part[v]]++;
    for (int d = 0; d < dim; d++) sum[part[v] * dim + d] += x[v * dim + d];
  }
  for (int q = 0; q <= nparts; q++)
    for (int d = 0; d < dim; d++) sum[q * dim + d] = cnt[q] ? sum[q * dim + d] / cnt[q] : 0;
  for (int extra = 0; extra <= 1; extra++) {
    PatchworkGraph c;

    if (PatchworkGraphInduce(&g, part, nparts + extra, &c)) {
      err++;
      continue;
    }
    wrong += c.n != nparts + extra || c.dim != dim || !c.coord;
    for (int i = 0; !wrong && i < (nparts + extra) * dim; i++) wrong += c.coord[i] != sum[i];
    if (!extra && !wrong)
      for (int v = 0; v < G->n; v++)
        for (int d = 0; d < dim; d++) msd += (x[v * dim + d] - c.coord[part[v] * dim + d]) * (x[v * dim + d] - c.coord[part[v] * dim + d]);
    PatchworkGraphFree(&c);
    wrong += c.n || c.ptr || c.adj || c.weight || c.dim || c.coord;
  }
  Check(fails, err, 0, "%s induce with coordinates: returns 0", name);
  Check(fails, wrong, 0, "%s induce: centroids (dim %d) equal the direct computation exactly, 0 for an empty part; freed", name, dim);
  free(sum);
  free(cnt);
  return G->n ? msd / G->n : 0;
}

/* Roots 0 and 1 (a seed is searched whose 2-MIS is {0, 1}); 2, 3, 4 join part 0 and 6 joins part 1
   in the first round; then vertex 5 sees three neighbours in part 0 and one in part 1, so the weight
   rule takes part 0, and coordinates that put 5 nearer to root 1 must take part 1 (in 1, 2 and 3
   dimensions); at equal distances the weight rule decides again. */
static void TestNearestRoot(int *fails)
{
  const int    edges[8][2] = {{0, 2}, {0, 3}, {0, 4}, {2, 5}, {3, 5}, {4, 5}, {5, 6}, {6, 1}};
  const double x1[7]       = {0, 4, 1, 1, 1, 2.5, 3.5};                             /* |5-0|^2 = 6.25, |5-1|^2 = 2.25 */
  const double x2[14]      = {0, 0, 4, 0, 1, -1, 1, 0, 1, 1, 2.5, 0, 3.25, 0.5};     /* the same in the plane */
  const double tie[14]     = {0, 0, 4, 0, 1, -1, 1, 0, 1, 1, 2, 0, 3.25, 0.5};       /* 4 and 4 */
  const double x3[21]      = {0, 0, 3, 4, 0, 0, 1, -1, 2, 1, 0, 2, 1, 1, 2, 2, 0, 0, 3, 0.5, 0}; /* 13 and 4: the z term decides */
  const struct {
    int           dim;
    const double *x;
    int           want; /* part of vertex 5 */
  } cases[] = {
    {0, NULL, 0},
    {1, x1,   1},
    {2, x2,   1},
    {2, tie,  0},
    {3, x3,   1},
  };
  Edges          E = {0, 0, NULL};
  Graph          G;
  PatchworkGraph g;
  int            in_set[7], count, seed = -1, part[7], np, bad = 0;

  for (int i = 0; i < 8; i++) EdgeAdd(&E, edges[i][0], edges[i][1]);
  G = FromEdges(7, &E);
  g = View(&G);
  for (unsigned t = 0; t < 1000 && seed < 0; t++)
    if (!PatchworkGraphKMIS(&g, 2, t, in_set, &count) && count == 2 && in_set[0] && in_set[1]) seed = (int)t;
  Check(fails, seed < 0, 0, "nearest root: a seed whose 2-MIS is {0, 1} (%d)", seed);
  if (seed >= 0)
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
      const PatchworkGraph h = ViewCoord(&G, cases[i].dim, cases[i].x);

      if (PatchworkGraphPartition(&h, 2, (unsigned)seed, 1, part, &np) || np != 2) {
        bad++;
        continue;
      }
      bad += part[0] != 0 || part[1] != 1 || part[2] != 0 || part[3] != 0 || part[4] != 0 || part[6] != 1 || part[5] != cases[i].want;
    }
  Check(fails, bad, 0, "nearest root: vertex 5 joins part 0 by weight (no coordinates, equal distances) and the nearer root 1 with coordinates (dim 1, 2, 3)");
  GraphDestroy(&G);
}

/* Partitions with coordinates: the checks of TestPartition, order independence with coordinates,
   and the centroids of the result */
static void TestPartitionCoord(int *fails, const char *name, const Graph *G, int dim, const double *x, int k, int min_weight, uint64_t *s)
{
  Graph                H = Shuffled(G, s);
  const PatchworkGraph g = ViewCoord(G, dim, x), h = ViewCoord(&H, dim, x);
  int                 *a = Malloc(sizeof(int) * G->n), *b = Malloc(sizeof(int) * G->n);
  int                  na = 0, nb = 0, err;
  char                 label[160];

  err = PatchworkGraphPartition(&g, k, 3, min_weight, a, &na);
  err |= PatchworkGraphPartition(&h, k, 3, min_weight, b, &nb);
  snprintf(label, sizeof(label), "%s with coordinates (dim %d) partition k=%d min_weight=%d", name, dim, k, min_weight);
  Check(fails, err, 0, "%s returns 0", label);
  CheckPartition(fails, label, G, a, na, min_weight);
  Check(fails, Differ(G->n, a, b) + abs(na - nb), 0, "%s: the same with shuffled adjacency rows", label);
  if (!err) CheckCentroids(fails, label, G, dim, x, a, na);
  GraphDestroy(&H);
  free(a);
  free(b);
}

/* Aggregates (k=2, min 9) of a 3D grid with spacings h[] and vertex positions perturbed by up to
   perturb spacings, without and with coordinates: both pass the partition checks, and the
   compactness of both (mean squared distance to the part's centroid) is printed; then patches
   (k=1, min 64) of the induced graph with its centroids */
static void TestGeometricGrid(int *fails, int nx, int ny, int nz, int box, const double h[3], double perturb, uint64_t *s)
{
  Graph          G = Grid(nx, ny, nz, box);
  double        *x = Malloc(sizeof(double) * 3 * G.n), msd[2];
  int           *part[2] = {Malloc(sizeof(int) * G.n), Malloc(sizeof(int) * G.n)}, np[2] = {0, 0}, err = 0;
  PartStats      st[2];
  PatchworkGraph g[2], c;
  char           name[96], label[160];

  snprintf(name, sizeof(name), "3D %dx%dx%d %s spacing %gx%gx%g perturbed %g", nx, ny, nz, box ? "27-point" : "7-point", h[0], h[1], h[2], perturb);
  for (int l = 0, v = 0; l < nz; l++)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++, v++) {
        const int ijl[3] = {i, j, l};

        for (int d = 0; d < 3; d++) x[3 * v + d] = h[d] * (ijl[d] + perturb * (2 * Rand(s) - 1));
      }
  g[0] = View(&G);
  g[1] = ViewCoord(&G, 3, x);
  for (int i = 0; i < 2; i++) {
    snprintf(label, sizeof(label), "%s aggregates k=2 min 9 %s coordinates", name, i ? "with" : "without");
    err = PatchworkGraphPartition(&g[i], 2, 3, 9, part[i], &np[i]);
    Check(fails, err, 0, "%s: returns 0", label);
    if (err) goto out;
    st[i]  = CheckPartition(fails, label, &G, part[i], np[i], 9);
    msd[i] = CheckCentroids(fails, label, &G, 3, x, part[i], np[i]);
  }
  printf("compactness %s, aggregates k=2 min 9: without coordinates %d parts (size %d..%d), mean squared distance to the centroid %.4f; with coordinates %d parts (size %d..%d), %.4f (ratio %.3f)\n", name, np[0], st[0].minw,
         st[0].maxw, msd[0], np[1], st[1].minw, st[1].maxw, msd[1], msd[1] / msd[0]);
  if (!PatchworkGraphInduce(&g[1], part[1], np[1], &c)) {
    Graph C     = {c.n, (int *)c.ptr, (int *)c.adj, (int *)c.weight};
    int  *patch = Malloc(sizeof(int) * c.n), npatch = 0;

    snprintf(label, sizeof(label), "%s patches k=1 min 64 of the aggregates' centroids", name);
    Check(fails, PatchworkGraphPartition(&c, 1, 5, 64, patch, &npatch), 0, "%s: returns 0", label);
    CheckPartition(fails, label, &C, patch, npatch, 64);
    free(patch);
    PatchworkGraphFree(&c);
  } else Check(fails, 1, 0, "%s: induce returns 0", name);
out:
  free(x);
  free(part[0]);
  free(part[1]);
  GraphDestroy(&G);
}

/* dim outside 1..3 with coordinates fails (Partition, Induce, also without vertices); coordinates
   NULL leave dim unused and the result as without them */
static void TestCoordArguments(int *fails)
{
  Graph          P = Path(6);
  const double   x[18] = {0};
  const int      dims[3] = {-1, 0, 4};
  int            a[6], b[6], part[6] = {0, 0, 1, 1, 2, 2}, na, nb, nerr = 0, bad = 0;
  PatchworkGraph g, c;

  for (int i = 0; i < 3; i++) {
    g = ViewCoord(&P, dims[i], x);
    nerr += !PatchworkGraphPartition(&g, 1, 0, 1, a, &na);
    nerr += !PatchworkGraphInduce(&g, part, 3, &c);
    nerr += c.n || c.ptr || c.adj || c.weight || c.dim || c.coord;
    g.n = 0;
    nerr += !PatchworkGraphPartition(&g, 1, 0, 1, a, &na);
    nerr += !PatchworkGraphInduce(&g, part, 3, &c);
  }
  Check(fails, nerr, 0, "coordinates with dim 0, 4 or -1 fail (Partition, Induce, also on an empty graph)");
  g = ViewCoord(&P, 4, NULL);
  bad += PatchworkGraphPartition(&g, 2, 9, 2, a, &na);
  g = View(&P);
  bad += PatchworkGraphPartition(&g, 2, 9, 2, b, &nb);
  bad += Differ(6, a, b) + abs(na - nb);
  g = ViewCoord(&P, 4, NULL);
  bad += PatchworkGraphInduce(&g, part, 3, &c) || c.dim || c.coord;
  PatchworkGraphFree(&c);
  /* no vertices: every part empty, centroid 0 */
  g   = ViewCoord(&P, 2, x);
  g.n = 0;
  bad += PatchworkGraphPartition(&g, 1, 0, 1, a, &na) || na != 0;
  if (!PatchworkGraphInduce(&g, part, 3, &c)) {
    bad += c.n != 3 || c.dim != 2 || !c.coord;
    for (int i = 0; c.coord && i < 6; i++) bad += c.coord[i] != 0;
    PatchworkGraphFree(&c);
  } else bad++;
  Check(fails, bad, 0, "coordinates NULL: dim ignored, the partition as without them, no centroids; no vertices: empty parts' centroids 0");
  GraphDestroy(&P);
}

static double Seconds(clock_t t0)
{
  return (double)(clock() - t0) / CLOCKS_PER_SEC;
}

/* The setup path on a 100^3 7-point grid: k-MIS, aggregates, their graph, patches, balance */
static void TimeSetup(int *fails)
{
  Graph          G = Grid(100, 100, 100, 0);
  PatchworkGraph g = View(&G), c;
  int           *in_set = Malloc(sizeof(int) * G.n), *agg = Malloc(sizeof(int) * G.n), *patch, count, nagg, npatch, err;
  clock_t        t0;
  double         tk, tp, ti, tq, tb;

  t0  = clock();
  err = PatchworkGraphKMIS(&g, 2, 1, in_set, &count);
  tk  = Seconds(t0);
  t0  = clock();
  err |= PatchworkGraphPartition(&g, 2, 1, 9, agg, &nagg);
  tp = Seconds(t0);
  t0 = clock();
  err |= PatchworkGraphInduce(&g, agg, nagg, &c);
  ti = Seconds(t0);
  if (err) {
    Check(fails, err, 0, "100^3 7-point: setup returns 0");
    goto out;
  }
  patch = Malloc(sizeof(int) * c.n);
  t0    = clock();
  err |= PatchworkGraphPartition(&c, 1, 1, 64, patch, &npatch);
  tq = Seconds(t0);
  t0 = clock();
  err |= PatchworkGraphBalance(&c, npatch, 400, 50, patch);
  tb = Seconds(t0);
  Check(fails, err, 0, "100^3 7-point: setup returns 0");
  printf("time 100^3 7-point (%d vertices, %d edges): k-MIS k=2 %.3f s (%d roots), aggregates %.3f s (%d), induce %.3f s (%d edges), patches %.3f s (%d), balance %.3f s\n", G.n,
         G.ptr[G.n] / 2, tk, count, tp, nagg, ti, c.ptr[c.n] / 2, tq, npatch, tb);
  free(patch);
  PatchworkGraphFree(&c);
out:
  free(in_set);
  free(agg);
  GraphDestroy(&G);
}

int main(int argc, char **argv)
{
  int      fails = 0, quick = argc > 1 && !strcmp(argv[1], "--quick");
  uint64_t s     = 0x2545F4914F6CDD1DULL;
  double  *geo_x = NULL, *path_x;
  Graph    path = Path(200), g2 = Grid(30, 20, 1, 0), g9 = Grid(25, 25, 1, 1), g7 = Grid(12, 10, 9, 0), g27 = Grid(10, 9, 8, 1), geo = Geometric(1500, 0.05, &s, &geo_x), mix = Mixed(&s);
  const struct {
    const char  *name;
    const Graph *G;
  } cases[] = {
    {"path 200",             &path},
    {"2D 30x20 5-point",     &g2  },
    {"2D 25x25 9-point",     &g9  },
    {"3D 12x10x9 7-point",   &g7  },
    {"3D 10x9x8 27-point",   &g27 },
    {"geometric 1500",       &geo },
    {"weighted, components", &mix },
  };
  const int ncase = sizeof(cases) / sizeof(cases[0]);

  for (int i = 0; i < ncase; i++)
    for (int k = 1; k <= 3; k++) TestKMIS(&fails, cases[i].name, cases[i].G, k, &s, i > 0);
  for (int i = 0; i < ncase; i++) {
    const int mins[] = {0, 9, 40};

    for (int k = 1; k <= 2; k++)
      for (int m = 0; m < 3; m++) TestPartition(&fails, cases[i].name, cases[i].G, k, mins[m], &s);
  }
  /* the quotient against brute force, on the partitions of the small graphs */
  for (int i = 0; i < ncase; i++) {
    PatchworkGraph g    = View(cases[i].G);
    int           *part = Malloc(sizeof(int) * cases[i].G->n), np = 0;

    if (!PatchworkGraphPartition(&g, 1, 11, 4, part, &np)) CheckInduce(&fails, cases[i].name, cases[i].G, part, np, 1);
    free(part);
  }
  TestOrder(&fails, &s);
  TestLevelOrder(&fails, &s);
  TestBalanceStrips(&fails, &s);
  TestSmall(&fails);
  TestBadArguments(&fails);
  {
    Graph a = Grid(30, 30, 30, 1), b = Grid(30, 30, 30, 0);

    TestDoublePartition(&fails, "3D 30^3 27-point", &a, 9, 64, 400, &s);
    TestDoublePartition(&fails, "3D 30^3 7-point", &b, 9, 64, 200, &s);
    GraphDestroy(&a);
    GraphDestroy(&b);
  }
  /* coordinates: the geometric graph's points (2D), a path on a jittered line (1D), 3D grids */
  TestNearestRoot(&fails);
  TestCoordArguments(&fails);
  path_x = Malloc(sizeof(double) * path.n);
  for (int v = 0; v < path.n; v++) path_x[v] = v + 0.45 * Rand(&s);
  for (int k = 1; k <= 2; k++) {
    const int mins[] = {0, 9, 40};

    for (int m = 0; m < 3; m++) {
      TestPartitionCoord(&fails, "geometric 1500", &geo, 2, geo_x, k, mins[m], &s);
      TestPartitionCoord(&fails, "path 200", &path, 1, path_x, k, mins[m], &s);
    }
  }
  {
    const double unit[3] = {1, 1, 1}, aniso[3] = {1, 1, 3};

    TestGeometricGrid(&fails, 24, 24, 24, 0, unit, 0, &s);
    TestGeometricGrid(&fails, 24, 24, 24, 1, unit, 0.3, &s);
    TestGeometricGrid(&fails, 30, 30, 12, 0, aniso, 0, &s);
    TestGeometricGrid(&fails, 30, 30, 12, 1, aniso, 0.2, &s);
  }
  free(geo_x);
  free(path_x);
  if (!quick) TimeSetup(&fails);
  for (int i = 0; i < ncase; i++) GraphDestroy((Graph *)cases[i].G);
  printf("%s: %d check(s) failed\n", fails ? "FAIL" : "ok  ", fails);
  return fails ? 1 : 0;
}
