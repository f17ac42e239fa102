/* The cases of the split LOR pattern tests (tests/unit/test_lor_split_pattern.c against a brute force,
   tests/gpu/test_lor_split_pattern.cu the CUDA functions against the reference): a grid of N[d] macro
   cells of degree k per direction (k N[d] + 1 nodes) split into P = p[0] p[1] p[2] <= 4 row boxes as
   PETSc's DMDA splits it among ranks: per direction the nodes cut into p[d] consecutive ranges, box r
   the product of range r % p[0] in x, (r / p[0]) % p[1] in y and r / (p[0] p[1]) in z (ranks x fastest).
   Range sizes per variant: 0 "balanced" as PETSc (n/p, the first n%p one more), 1 "growing" (about
   proportional to 1, 2, .., p), 2 "shrinking" (about p, .., 2, 1); at least one node each.
   Global numbering (PETSc's DMDA ordering): box r owns [rstart[r], rstart[r+1]), its nodes numbered
   lexicographically (x fastest) within the box. A box's descriptor: the row box, the coordinate box
   the row box grown by one node layer (clipped to the grid), the cell range the cells touching the
   row box; l2g the global numbers of the coordinate box's nodes (lexicographic, x fastest).
   C99 and C++ (nvcc); no allocation here. */
#ifndef PATCHWORK_LOR_SPLIT_CASES_H
#define PATCHWORK_LOR_SPLIT_CASES_H

#include <string.h>
#include <patchwork/lor_kernel.h>

#define SPLIT_MAX_P 4

typedef struct {
  int       dim, k, N[3], nodes[3]; /* N: cells per direction (1 in unused directions) */
  int       p[3], P, variant;       /* boxes per direction, their product, the range sizes' variant */
  int       b[3][SPLIT_MAX_P + 1];  /* per direction the ranges' bounds: range i is [b[d][i], b[d][i+1]) */
  long long rstart[SPLIT_MAX_P + 1];
} SplitPartition;

static const char *const SplitVariantName[3] = {"balanced", "growing", "shrinking"};

/* The box of rank r: start and size per direction */
static inline void SplitBox(const SplitPartition *s, int r, int lo[3], int sz[3])
{
  const int q[3] = {r % s->p[0], (r / s->p[0]) % s->p[1], r / (s->p[0] * s->p[1])};

  for (int a = 0; a < 3; a++) {
    lo[a] = s->b[a][q[a]];
    sz[a] = s->b[a][q[a] + 1] - lo[a];
  }
}

/* The partition; returns 0 when it does not exist (more boxes than nodes in a direction, P > 4) */
static inline int SplitPartitionMake(int dim, int k, const int N[3], const int p[3], int variant, SplitPartition *s)
{
  memset(s, 0, sizeof(*s));
  s->dim     = dim;
  s->k       = k;
  s->variant = variant;
  s->P       = 1;
  for (int a = 0; a < 3; a++) {
    const int  n = a < dim ? k * N[a] + 1 : 1, q = a < dim ? p[a] : 1;
    const long W = (long)q * (q + 1) / 2;

    s->N[a]     = a < dim ? N[a] : 1;
    s->nodes[a] = n;
    s->p[a]     = q;
    s->P *= q;
    if (q < 1 || q > n || q > SPLIT_MAX_P) return 0;
    s->b[a][0] = 0;
    for (int i = 1; i < q; i++) {
      long t;

      if (variant == 0) t = (long)i * (n / q) + (i < n % q ? i : n % q);
      else {
        const long w = variant == 1 ? (long)i * (i + 1) / 2 : W - (long)(q - i) * (q - i + 1) / 2;
        t            = (n * w + W / 2) / W;
      }
      if (t < s->b[a][i - 1] + 1) t = s->b[a][i - 1] + 1;
      if (t > n - (q - i)) t = n - (q - i);
      s->b[a][i] = (int)t;
    }
    s->b[a][q] = n;
  }
  if (s->P > SPLIT_MAX_P) return 0;
  s->rstart[0] = 0;
  for (int r = 0; r < s->P; r++) {
    int lo[3], sz[3];

    SplitBox(s, r, lo, sz);
    s->rstart[r + 1] = s->rstart[r] + (long long)sz[0] * sz[1] * sz[2];
  }
  return 1;
}

/* The global number of grid node g (its owner's rstart plus its index in the owner's box) */
static inline long long SplitGlobal(const SplitPartition *s, const int g[3])
{
  int q[3], lo[3], sz[3];

  for (int a = 0; a < 3; a++)
    for (q[a] = 0; g[a] >= s->b[a][q[a] + 1]; q[a]++) {}
  const int r = q[0] + s->p[0] * (q[1] + s->p[1] * q[2]);
  SplitBox(s, r, lo, sz);
  return s->rstart[r] + (g[0] - lo[0]) + (long long)sz[0] * ((g[1] - lo[1]) + (long long)sz[1] * (g[2] - lo[2]));
}

/* The descriptor of box r (alpha, beta, vertex_rule: unused by the pattern) */
static inline void SplitBoxDesc(const SplitPartition *s, int r, int dirichlet, PatchworkLORDesc *d)
{
  int lo[3], sz[3];

  SplitBox(s, r, lo, sz);
  memset(d, 0, sizeof(*d));
  d->dim         = s->dim;
  d->degree      = s->k;
  d->dirichlet   = dirichlet;
  d->alpha       = 1.0;
  d->beta        = 1.0;
  d->vertex_rule = 1;
  for (int a = 0; a < 3; a++) {
    const int hi = lo[a] + sz[a], c0 = lo[a] > 0 ? lo[a] - 1 : 0, c1 = hi < s->nodes[a] ? hi + 1 : s->nodes[a];

    d->nodes[a]       = s->nodes[a];
    d->row_start[a]   = lo[a];
    d->row_size[a]    = sz[a];
    d->coord_start[a] = c0;
    d->coord_size[a]  = c1 - c0;
    if (a < s->dim) {
      const int e0 = lo[a] > 0 ? (lo[a] - 1) / s->k : 0, e1 = (hi - 1) / s->k + 1;

      d->cell_start[a] = e0;
      d->cell_end[a]   = e1 < s->N[a] ? e1 : s->N[a];
    } else {
      d->cell_start[a] = 0;
      d->cell_end[a]   = 1;
    }
  }
}

/* The one-rank descriptor of the whole grid (the pattern of PatchworkLORPattern*()) */
static inline void SplitWholeDesc(const SplitPartition *s, int dirichlet, PatchworkLORDesc *d)
{
  memset(d, 0, sizeof(*d));
  d->dim         = s->dim;
  d->degree      = s->k;
  d->dirichlet   = dirichlet;
  d->alpha       = 1.0;
  d->beta        = 1.0;
  d->vertex_rule = 1;
  for (int a = 0; a < 3; a++) {
    d->nodes[a]      = s->nodes[a];
    d->row_size[a]   = d->coord_size[a] = s->nodes[a];
    d->cell_end[a]   = a < s->dim ? s->N[a] : 1;
  }
}

static inline long long SplitCoordCount(const PatchworkLORDesc *d)
{
  return (long long)d->coord_size[0] * d->coord_size[1] * d->coord_size[2];
}

/* l2g[SplitCoordCount(d)]: the global numbers of the coordinate box's nodes */
static inline void SplitL2G(const SplitPartition *s, const PatchworkLORDesc *d, long long *l2g)
{
  long long i = 0;
  int       g[3];

  for (g[2] = d->coord_start[2]; g[2] < d->coord_start[2] + d->coord_size[2]; g[2]++)
    for (g[1] = d->coord_start[1]; g[1] < d->coord_start[1] + d->coord_size[1]; g[1]++)
      for (g[0] = d->coord_start[0]; g[0] < d->coord_start[0] + d->coord_size[0]; g[0]++) l2g[i++] = SplitGlobal(s, g);
}

/* The index in l2g of grid node g (inside the coordinate box) */
static inline long long SplitCoordIndex(const PatchworkLORDesc *d, const int g[3])
{
  return (g[0] - d->coord_start[0]) + (long long)d->coord_size[0] * ((g[1] - d->coord_start[1]) + (long long)d->coord_size[1] * (g[2] - d->coord_start[2]));
}

/* The process grids tried (P = 1, 2, 3, 4 along different directions); returns how many, into p[][3] */
static inline int SplitProcessGrids(int dim, int p[16][3])
{
  static const int g3[][3] = {{1, 1, 1}, {2, 1, 1}, {1, 2, 1}, {1, 1, 2}, {3, 1, 1}, {1, 3, 1}, {1, 1, 3}, {2, 2, 1}, {2, 1, 2}, {1, 2, 2}, {4, 1, 1}, {1, 1, 4}};
  static const int g2[][3] = {{1, 1, 1}, {2, 1, 1}, {1, 2, 1}, {3, 1, 1}, {1, 3, 1}, {2, 2, 1}, {4, 1, 1}, {1, 4, 1}};
  const int        n       = dim == 3 ? (int)(sizeof(g3) / sizeof(g3[0])) : (int)(sizeof(g2) / sizeof(g2[0]));

  for (int i = 0; i < n; i++)
    for (int a = 0; a < 3; a++) p[i][a] = dim == 3 ? g3[i][a] : g2[i][a];
  return n;
}

#endif
