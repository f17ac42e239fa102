/* Kernel ABI of PCPATCHAMG (Fu, Lewis, Kirby, Whitaker 2014): the graph partitions of the setup
   (aggregates and patches) and the patch block-Jacobi relaxation on the patchSPM layout.
   Plain C structs, no PETSc types: the CPU reference (src/core/amg_graph.c, src/core/amg_relax_ref.c)
   and the CUDA kernels (cuda/amg_*.cu) take the same descriptors.

   Graph partitions. A graph is CSR adjacency, undirected (u in adj(v) iff v in adj(u); self loops
   allowed and ignored), with optional vertex weights. Every step is a sequence of synchronous
   rounds in which a vertex's new state depends only on the previous round's states of itself and
   its neighbours, with ties broken by a hash of (seed, vertex) and then by the smaller index: the
   result depends on the seed only, never on the order in which vertices are visited, so the CPU
   and a GPU produce the same partition.

   Partition (the paper's section 5.2.1, steps 1-5): roots = a k-MIS of the graph (no two roots
   joined by a path of k or fewer edges, maximal); root r starts part r; unallocated vertices join,
   round by round, the part with which they share the largest total weight of allocated neighbours;
   parts whose total vertex weight is below min_weight are dissolved and their vertices re-allocated
   the same way, repeatedly, until every part has min_weight or is alone in its connected component
   (a light part dissolves only beside a part that ranks above it: heavier, ties by hash and index;
   so touching light parts never all go at once and no component is left without a part);
   isolated vertices (no neighbour but themselves, e.g. Dirichlet rows) are then grouped in vertex
   order, v with the isolated vertices before it of the same floor(W / (4 max(min_weight, 1))), W
   the weight of the isolated vertices before v, so that they do not stall the coarsening;
   parts are numbered by their smallest vertex. With coordinates (g->coord; dim 1..3, else return 1)
   a joining vertex takes, among those parts, the one whose root is nearest (section 5.1: ungrouped
   nodes join the nearest aggregate), by the squared distance ((dx*dx + dy*dy) + dz*dz) in double
   without fused multiply-adds, so that the CPU and the GPU agree; equal distances fall back to the
   weight rule. The k-MIS, Dissolve and Balance ignore coordinates.
   Balance (patches): while the heaviest part exceeds max_weight and for at most max_rounds rounds,
   every vertex on the border of a part heavier than the lighter neighbouring part may move there;
   each part gives up at most one vertex per round (its move that reduces the weight difference
   most among those a local test shows keep it connected) and takes at most one (the best offered),
   which damps oscillation. A vertex moves only to a part where it keeps a neighbour, so connected
   parts stay connected. The exact ranks and hash: src/core/amg_graph.c.

   Relaxation on the patchSPM layout (section 5.2.2). The layout orders the level's rows by
   position so that every patch is a contiguous range [patch_ptr[p], patch_ptr[p+1]) of positions;
   row[i] is the level row (the index into the vectors) at position i, so the level matrix and its
   vectors keep their own order. A = AI + AD + AB, where AD is the diagonal, AI the off-diagonal
   entries whose row and column lie in the same patch, AB the rest. Everything of the layout is
   indexed by position (ai_ptr, ab_ptr, diag); AI columns are positions relative to the patch start,
   AB columns level rows. Vectors are double, indexed by level row; the matrix values are float
   when `single`, double otherwise. Where the formulas below say b_p or x_p they mean the vector
   entries of the patch's rows.

   PatchRelax: for every patch p (independent, any order), with the patch block A_p = AI_p + AD_p:
     t   = b_p                        (zero_guess)
     t   = b_p - A_p x_p              (otherwise; b already has the AB x coupling subtracted)
     g   = inner weighted Jacobi sweeps on A_p g = t from g = 0:
             g <- g + inner_omega * AD_p^{-1} (t - A_p g)      (inner >= 1 times)
     x_p = omega * g                  (zero_guess)
     x_p = x_p + omega * g            (otherwise)
     r_p = b_p - A_p x_p              (only when r is given; the residual without the AB coupling)
   r may alias b, never x.
   BoundaryResidual: y = z - AB x for every row (y may alias z, never x).
   Mult: y = (AI + AD + AB) x (tests and the fine-level check; y never aliases x).
   The paper's fused pre-relaxation with residual is PatchRelax(zero_guess, r) then
   BoundaryResidual(x, r, r); its post-relaxation is BoundaryResidual(x, b, t) then PatchRelax(t). */
#ifndef PATCHWORK_AMG_KERNEL_H
#define PATCHWORK_AMG_KERNEL_H

#include <math.h>
#include <patchwork/host_device.h>

typedef struct {
  int        n;      /* vertices */
  const int *ptr;    /* [n+1] */
  const int *adj;    /* [ptr[n]] neighbours; entries equal to the row are ignored */
  const int *weight; /* [n] vertex weights (>= 1), or NULL for all 1 */
  int           dim;   /* 1..3 where coord is given */
  const double *coord; /* [n*dim] vertex coordinates (geometry-informed partitions), or NULL */
} PatchworkGraph;

typedef struct {
  int          n;           /* rows of the level, patch-ordered */
  int          npatch;      /* patches */
  int          max_patch;   /* rows of the largest patch */
  const int   *patch_ptr;   /* [npatch+1] positions */
  const int   *row;         /* [n] the vector index (level row) at each position, or NULL: the identity */
  const int   *ai_ptr;      /* [n+1] */
  const int   *ai_col;      /* column - patch_ptr[p] of row's patch p */
  const int   *ab_ptr;      /* [n+1] */
  const int   *ab_col;      /* level row */
  int          single;      /* nonzero: ai_val, ab_val, diag point to float */
  const void  *ai_val, *ab_val, *diag;
  int          inner;       /* inner Jacobi sweeps, >= 1 */
  double       inner_omega; /* their damping */
  double       omega;       /* damping of the block-Jacobi update */
} PatchworkSPMDesc;

/* The rank-local block of a level matrix, CSR with level-row columns (entries whose column is out
   of [0, n) are not allowed) */
typedef struct {
  int           n;
  const int    *ptr; /* [n+1] */
  const int    *col;
  const double *val;
} PatchworkCSR;

/* A CSR matrix the library allocated: ptr [nrow+1], col and val [nnz], columns ascending in every
   row. The host functions allocate with malloc, the CUDA ones device memory; free with the
   matching PatchworkCSRMatrixFree / PatchworkCSRMatrixFreeCUDA. */
typedef struct {
  int     nrow, ncol, nnz;
  int    *ptr, *col;
  double *val;
} PatchworkCSRMatrix;

/* Row i of A + B (PatchworkCSRAdd*): the union of the two rows' ascending columns, an entry in both
   a + b; into col and val when col is given (else only counted, no value read); returns its length */
PW_HOST_DEVICE int PatchworkCSRAddRow(const PatchworkCSR *A, const PatchworkCSR *B, int i, int *col, double *val)
{
  int       a = A->ptr[i], b = B->ptr[i], m = 0;
  const int ae = A->ptr[i + 1], be = B->ptr[i + 1];

  while (a < ae || b < be) {
    const int fromA = b == be || (a < ae && A->col[a] <= B->col[b]), fromB = a == ae || (b < be && B->col[b] <= A->col[a]);

    if (col) {
      col[m] = fromA ? A->col[a] : B->col[b];
      val[m] = fromA && fromB ? A->val[a] + B->val[b] : fromA ? A->val[a] : B->val[b];
    }
    a += fromA;
    b += fromB;
    m++;
  }
  return m;
}

/* The position of column j among the ascending columns col[lo..hi), -1 when absent: the lookups of
   mirror entries (CSR Symmetrize, SPAI(1)'s right-hand side) on the host and the device */
PW_HOST_DEVICE int PatchworkCSRFind(const int *col, int lo, int hi, int j)
{
  const int end = hi;

  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;

    if (col[mid] < j) lo = mid + 1;
    else hi = mid;
  }
  return lo < end && col[lo] == j ? lo : -1;
}

/* Strength of connection (smoothed aggregation, Vanek, Mandel, Brezina 1996): entry e of row i, in
   column j, is a strong coupling when j != i and max(|a_ij|, |a_ji|) >= theta sqrt(d_i) sqrt(d_j),
   where a_ji = 0 if row j has no column i and d holds |a_ii| (0 where absent); the square roots
   are taken apart so that the product neither overflows nor underflows. The max keeps the strong
   graph of a symmetric pattern symmetric, whatever the values; a NaN on either side (or in d) makes
   the coupling weak. Columns ascending in every row. Shared by the CPU and the GPU, which thus
   agree exactly. */
PW_HOST_DEVICE int PatchworkCSRStrong(const PatchworkCSR *A, const double *d, double theta, int i, int e)
{
  const int    j   = A->col[e];
  const int    m   = j == i ? -1 : PatchworkCSRFind(A->col, A->ptr[j], A->ptr[j + 1], i);
  const double aij = fabs(A->val[e]), aji = m >= 0 ? fabs(A->val[m]) : 0.0;

  if (j == i || aij != aij || aji != aji) return 0;
  return (aij > aji ? aij : aji) >= theta * (sqrt(d[i]) * sqrt(d[j]));
}

#ifdef __cplusplus
extern "C" {
#endif
/* Graph partitions (CPU, src/core/amg_graph.c). Return 0, or nonzero on bad arguments or failed
   allocation. Arrays are allocated by the caller unless said otherwise. */
int  PatchworkGraphKMIS(const PatchworkGraph *g, int k, unsigned seed, int *in_set, int *count);
int  PatchworkGraphPartition(const PatchworkGraph *g, int k, unsigned seed, int min_weight, int *part, int *nparts);
int  PatchworkGraphBalance(const PatchworkGraph *g, int nparts, int max_weight, int max_rounds, int *part);
/* The graph of the parts: vertex q = part q, weight = total weight of its vertices, an edge where
   any two of their vertices are joined. Allocates c->ptr, c->adj, c->weight with malloc; free with
   PatchworkGraphFree. Adjacency rows are sorted and have no self loops. With g->coord, c->dim =
   g->dim and c->coord (malloc'd too) holds the parts' centroids: the mean of a part's vertex
   coordinates, summed in ascending vertex order, then divided by the count (0 for an empty part);
   without, c->coord is NULL and c->dim 0. PatchworkGraphFree (for Induce's outputs only) frees
   it too. */
int  PatchworkGraphInduce(const PatchworkGraph *g, const int *part, int nparts, PatchworkGraph *c);
void PatchworkGraphFree(PatchworkGraph *g);
/* order[pos] = vertex, vertices grouped by key (ascending, stable: ties keep vertex order);
   start[key] = first position of the key, start[nkeys] = n */
int  PatchworkGraphOrder(int n, const int *key, int nkeys, int *order, int *start);

/* The positions of a level: aggregates ordered by patch (ascending aggregate within a patch),
   vertices grouped by aggregate (ascending vertex within). order[i] = vertex at position i, pos its
   inverse, patch_ptr[p] = first position of patch p, patch_ptr[npatch] = n. */
int  PatchworkGraphLevelOrder(int n, const int *agg, int naggs, const int *patch, int npatch, int *order, int *pos, int *patch_ptr);

/* The same on the GPU (cuda/amg_graph.cu, cuda/amg_balance.cu), bit for bit: the graph's arrays and
   every array argument are device pointers (the PatchworkGraph structs live on the host), counts
   come back to the host; stream is a cudaStream_t. Return 0, 1 on bad arguments, or a cudaError_t
   code. Induce allocates c's arrays on the device: free them with PatchworkGraphFreeCUDA. */
int  PatchworkGraphKMISCUDA(const PatchworkGraph *g, int k, unsigned seed, int *in_set, int *count, void *stream);
int  PatchworkGraphPartitionCUDA(const PatchworkGraph *g, int k, unsigned seed, int min_weight, int *part, int *nparts, void *stream);
int  PatchworkGraphBalanceCUDA(const PatchworkGraph *g, int nparts, int max_weight, int max_rounds, int *part, void *stream);
int  PatchworkGraphInduceCUDA(const PatchworkGraph *g, const int *part, int nparts, PatchworkGraph *c, void *stream);
void PatchworkGraphFreeCUDA(PatchworkGraph *g);
int  PatchworkGraphLevelOrderCUDA(int n, const int *agg, int naggs, const int *patch, int npatch, int *order, int *pos, int *patch_ptr, void *stream);

/* The strong graph of a level matrix A (square, columns in [0, A->n) and ascending): vertex i's
   neighbours are the columns of row i's strong couplings (PatchworkCSRStrong), in A's order, so
   weak couplings neither join aggregates nor link patches. theta <= 0 keeps every off-diagonal
   entry without a NaN. With A->n > 0, A's three arrays must be given. Allocates s->ptr and s->adj (malloc on the host, src/core/amg_strength_ref.c; cudaMalloc in
   the CUDA version, cuda/amg_strength.cu, which takes A's device arrays and gives the same graph);
   s->weight and s->coord are NULL. Free with PatchworkGraphFree / PatchworkGraphFreeCUDA. Return 0,
   1 on bad arguments or failed allocation, or a cudaError_t code. */
int PatchworkGraphStrength(const PatchworkCSR *A, double theta, PatchworkGraph *s);
int PatchworkGraphStrengthCUDA(const PatchworkCSR *A, double theta, PatchworkGraph *s, void *stream);

/* The patchSPM layout of A for the given positions (row: position -> level row, pos: its inverse,
   patch_ptr: patches as position ranges). Fills every field of d but inner, inner_omega and omega
   (set to 1, 1, 1); allocates its arrays (patch_ptr and row are copied), AI and AB entries in
   the storage order of each row of A, the diagonal as the sum of a row's diagonal entries (0 when
   absent). Free with the matching Free. *nnz_ai, *nnz_ab: the entries of AI and AB. The CUDA
   version takes device pointers (A's arrays, row, pos, patch_ptr) and fills d with device
   pointers; its result equals the CPU one exactly. */
int  PatchworkSPMBuildRef(const PatchworkCSR *A, int npatch, const int *patch_ptr, const int *row, const int *pos, int single, PatchworkSPMDesc *d, int *nnz_ai, int *nnz_ab);
void PatchworkSPMFreeRef(PatchworkSPMDesc *d);
int  PatchworkSPMBuildCUDA(const PatchworkCSR *A, int npatch, const int *patch_ptr, const int *row, const int *pos, int single, PatchworkSPMDesc *d, int *nnz_ai, int *nnz_ab, void *stream);
void PatchworkSPMFreeCUDA(PatchworkSPMDesc *d);

/* Smoothed aggregation on one rank's level matrix A (every column in [0, A->n), section 5.1.1):
   the tentative prolongator P~ has one entry per row, t_i = z_i / ||z on agg(i)||_2 in column
   agg(i) (z = NULL: constants; t_i = 0 where z vanishes on the whole aggregate), and
     P = (I - diag(s) A) P~,   P_iJ = t_i [agg(i) = J] - s_i sum_{k: a_ik stored, agg(k) = J} a_ik t_k
   (s_i = w / (rho a_ii), given by the caller). zc (naggs entries, or NULL) receives the next
   level's near-null-space vector zc_J = ||z on aggregate J||_2, the one P~ maps to z. Row i of P has exactly the columns
   {agg(i)} U {agg(k) : a_ik stored}, ascending: the structural pattern, entries that cancel to
   zero are kept, so the pattern never depends on rounding. P->nrow = A->n, P->ncol = naggs.
   The Galerkin product Ac = P^T A P (Ac->nrow = Ac->ncol = P->ncol) has the structural pattern of
   the triple product: (I, J) is stored iff P_kI a_kl P_lJ are all stored for some k, l.
   Reference: src/core/amg_prolong_ref.c, src/core/amg_galerkin_ref.c. The CUDA versions
   (cuda/amg_prolong.cu, cuda/amg_galerkin.cu) take device pointers (A's arrays, agg, z, s, P's
   arrays) and a stream (cudaStream_t), allocate the result on the device and return 0, 1 on bad
   arguments, or a cudaError_t code. Their patterns equal the reference's exactly; their values
   equal them up to rounding (sums may run in another order). */
int  PatchworkSAProlongRef(const PatchworkCSR *A, const int *agg, int naggs, const double *z, const double *s, PatchworkCSRMatrix *P, double *zc);
int  PatchworkSAProlongCUDA(const PatchworkCSR *A, const int *agg, int naggs, const double *z, const double *s, PatchworkCSRMatrix *P, double *zc, void *stream);
/* The two halves of SAProlong, for a prolongator whose rows reach aggregates of other ranks (several
   ranks: src/pc/patchamg/padist.c): Tentative writes t_i (n entries) and zc (naggs entries, or NULL)
   as above; Smooth builds P from given tentative values t (one per column of A, the ghosts' from their
   owners), P_iJ = t_i [agg(i) = J] - s_i sum_{k: a_ik stored, agg(k) = J} a_ik t_k, with the same
   pattern and the same sums as SAProlong. SAProlong(A, agg, naggs, z, s, P, zc) equals Tentative
   then Smooth. Same return codes, allocation and CUDA conventions as SAProlong. */
int PatchworkSATentativeRef(int n, const int *agg, int naggs, const double *z, double *t, double *zc);
int PatchworkSATentativeCUDA(int n, const int *agg, int naggs, const double *z, double *t, double *zc, void *stream);
int PatchworkSASmoothRef(const PatchworkCSR *A, const int *agg, int naggs, const double *t, const double *s, PatchworkCSRMatrix *P);
int PatchworkSASmoothCUDA(const PatchworkCSR *A, const int *agg, int naggs, const double *t, const double *s, PatchworkCSRMatrix *P, void *stream);
int  PatchworkGalerkinRef(const PatchworkCSR *A, const PatchworkCSRMatrix *P, PatchworkCSRMatrix *Ac);
int  PatchworkGalerkinCUDA(const PatchworkCSR *A, const PatchworkCSRMatrix *P, PatchworkCSRMatrix *Ac, void *stream);
void PatchworkCSRMatrixFree(PatchworkCSRMatrix *M);
void PatchworkCSRMatrixFreeCUDA(PatchworkCSRMatrix *M);

/* What the coarse levels need of their matrices when these stay on the device (no PETSc matrix,
   no host copy): y = z + M x (z NULL: y = M x; z may alias y, x never aliases y or z; x has
   M->ncol entries, y and z M->nrow); T = M^T, allocated (T->nrow = M->ncol, columns ascending in
   every row, entries of a row of T in the order of M's rows); d[i] = M(i,i) for i < M->nrow, the
   sum of the row's entries in column i, 0 where there is none (M square). Reference:
   src/core/amg_csr_ref.c (Transpose allocates with malloc); CUDA: cuda/amg_csr.cu (Mult,
   Diagonal) and cuda/amg_galerkin.cu (Transpose, device memory), device pointers, stream a
   cudaStream_t. Return 0, 1 on bad arguments, or a cudaError_t code. Transpose and Diagonal equal
   the reference exactly, Mult up to rounding (a row's sum runs in another order). MultSingle is Mult
   with M's values replaced by val (float, M->nnz entries; M->val is not read), each promoted to
   double before its product. */
int PatchworkCSRMultRef(const PatchworkCSRMatrix *M, const double *x, const double *z, double *y);
int PatchworkCSRMultCUDA(const PatchworkCSRMatrix *M, const double *x, const double *z, double *y, void *stream);
int PatchworkCSRMultSingleRef(const PatchworkCSRMatrix *M, const float *val, const double *x, const double *z, double *y);
int PatchworkCSRMultSingleCUDA(const PatchworkCSRMatrix *M, const float *val, const double *x, const double *z, double *y, void *stream);
int PatchworkCSRTransposeRef(const PatchworkCSRMatrix *M, PatchworkCSRMatrix *T);
int PatchworkCSRTransposeCUDA(const PatchworkCSRMatrix *M, PatchworkCSRMatrix *T, void *stream);
int PatchworkCSRDiagonalRef(const PatchworkCSRMatrix *M, double *d);
int PatchworkCSRDiagonalCUDA(const PatchworkCSRMatrix *M, double *d, void *stream);
/* Pieces of a rank's rows and their neighbours' (src/pc/patchamg/padist.c):
   JoinColumns: M (nrow rows, ncol columns) has in row i < A->n the entries of row i of A, then those
   of row i of B (B->n == A->n) with their columns shifted by shift (shift >= A->n and every column of A
   below shift); rows A->n .. nrow-1 are empty. Columns stay ascending when A's and B's are.
   SplitColumns: Lo holds the entries of M with a column below cut, Hi the others with cut
   subtracted from their columns (Lo->ncol = cut, Hi->ncol = M->ncol - cut), each in M's order.
   IntMap: idx[k] = map[idx[k]] for k < n (every idx[k] in [0, nmap)).
   References in src/core/amg_csr_ref.c, CUDA in cuda/amg_csr.cu (device pointers, stream a
   cudaStream_t; results allocated as PatchworkCSRMatrix says); exact: no arithmetic. Return 0, 1 on
   bad arguments, 2 when memory runs out (CPU), or a cudaError_t code. */
int PatchworkCSRJoinColumnsRef(const PatchworkCSR *A, const PatchworkCSR *B, int shift, int nrow, int ncol, PatchworkCSRMatrix *M);
int PatchworkCSRJoinColumnsCUDA(const PatchworkCSR *A, const PatchworkCSR *B, int shift, int nrow, int ncol, PatchworkCSRMatrix *M, void *stream);
int PatchworkCSRSplitColumnsRef(const PatchworkCSRMatrix *M, int cut, PatchworkCSRMatrix *Lo, PatchworkCSRMatrix *Hi);
int PatchworkCSRSplitColumnsCUDA(const PatchworkCSRMatrix *M, int cut, PatchworkCSRMatrix *Lo, PatchworkCSRMatrix *Hi, void *stream);
/* Add: M = A + B (A->n == B->n rows, ncol columns, each row's columns ascending and none repeated):
   every row the union of A's and B's columns, ascending, an entry in both the sum a + b
   (PatchworkCSRAddRow(); the same bits on both sides). */
int PatchworkCSRAddRef(const PatchworkCSR *A, const PatchworkCSR *B, int ncol, PatchworkCSRMatrix *M);
int PatchworkCSRAddCUDA(const PatchworkCSR *A, const PatchworkCSR *B, int ncol, PatchworkCSRMatrix *M, void *stream);
int PatchworkIntMapRef(int n, const int *map, int nmap, int *idx);
int PatchworkIntMapCUDA(int n, const int *map, int nmap, int *idx, void *stream);
/* M <- (M + M^T)/2 in place (SPAI(1)'s symmetric part) for a square M whose pattern is symmetric:
   an entry (i, j) and its mirror (j, i) both become (m_ij + m_ji) * 0.5, the sum rounded once, so
   the reference and the CUDA version (cuda/amg_csr.cu) give the same bits, and the same as
   PETSc's MatAXPY(M, 1, M^T) then MatScale(0.5). Columns ascending, none repeated in a row. Return 0,
   3 when an entry has no mirror, 1 on bad arguments, or a cudaError_t code; M changes only with 0. */
int PatchworkCSRSymmetrizeRef(PatchworkCSRMatrix *M);
int PatchworkCSRSymmetrizeCUDA(PatchworkCSRMatrix *M, void *stream);

/* SPAI(1) by the normal equations (Geveler et al.; src/pc/patchamg/paspai.c builds the whole M and
   solves the rows refused here by QR). Row i of M minimizes ||A^T m - e_i||_2 over m with the
   pattern J of row i of A (A square: A->n rows and columns, columns ascending in every row). With
   C = A[J,:]^T the normal equations are G m = r, G = C^T C (nJ x nJ),
     G_ab = sum_l a(J_a, l) a(J_b, l),   r_a = a(J_a, i)   (0 where row J_a has no column i).
   A row is accepted when every pivot of the Cholesky factorization G = R^T R is positive (and
   finite) and
     kappa = ||G||_1 max_j x_j max_j z_j <= PATCHWORK_SPAI_KAPPA_MAX,
   where M(R) x = 1 and M(R)^T z = 1 for the comparison matrix M(R) (|r_jj| on the diagonal, -|r_jk|
   off it): a bound on kappa_1(G) (Higham, Accuracy and Stability, 8.3). The normal equations'
   error, ~kappa(C)^2 u, is then within 100 kappa(C) u of the QR's. An accepted row writes
   m = R^-1 R^-T r to mval[ptr[i] .. ptr[i+1]) (in the order of row i's columns) and flag[i] = 0;
   a refused row writes flag[i] = 1 and leaves its mval entries alone. kappa (may be NULL)
   receives the bound, +INFINITY where the factorization failed (an empty row, a zero or empty row
   among the rows J, a singular G; a zero row i itself is not refused when its diagonal is not
   stored: paspai.c tests for zero rows before it solves). The CUDA version refuses rows longer than PATCHWORK_SPAI_MAX_ROW without trying
   them (flag 1, kappa -1); it may sum G in another order, so its accepted m agree with the
   reference's up to rounding amplified by at most kappa, and a row whose kappa lies within
   rounding of the limit may be accepted by one and refused by the other. A's arrays, mval and
   flag must not be NULL when A->n > 0. Return 0, 1 on bad arguments, 2 when memory runs out
   (CPU), or a cudaError_t code (CUDA: device pointers, stream a cudaStream_t). */
#define PATCHWORK_SPAI_KAPPA_MAX 1e4
#define PATCHWORK_SPAI_MAX_ROW   64
int PatchworkSPAI1NormalRef(const PatchworkCSR *A, double *mval, int *flag, double *kappa);
int PatchworkSPAI1NormalCUDA(const PatchworkCSR *A, double *mval, int *flag, double *kappa, void *stream);

/* One row of the above, for rows gathered from several ranks (paspai.c): the rows J of the
   normal equations are rows jrow[0..nJ) of the CSR (ptr, col, val), whose columns are numbered
   0..ncol-1 (ascending in every row); self is the column of row i itself (-1: none of the rows
   J has it). w is a workspace made by PatchworkSPAIWorkCreate(ncol) (reused across rows; free
   with PatchworkSPAIWorkDestroy). Writes the nJ values of the row to m when accepted (*ok = 1),
   and the bound to *kappa. Return 0, 1 on bad arguments, 2 when memory runs out. */
typedef struct PatchworkSPAIWork_ PatchworkSPAIWork;
int  PatchworkSPAIWorkCreate(int ncol, PatchworkSPAIWork **w);
void PatchworkSPAIWorkDestroy(PatchworkSPAIWork **w);
int  PatchworkSPAI1RowNormal(int nJ, const int *jrow, const int *ptr, const int *col, const double *val, int self, PatchworkSPAIWork *w, double *m, int *ok, double *kappa);

/* Relaxation, CPU reference (src/core/amg_relax_ref.c) */
void PatchworkSPMPatchRelaxRef(const PatchworkSPMDesc *d, const double *b, double *x, double *r, int zero_guess);
void PatchworkSPMBoundaryResidualRef(const PatchworkSPMDesc *d, const double *x, const double *z, double *y);
void PatchworkSPMMultRef(const PatchworkSPMDesc *d, const double *x, double *y);
/* CUDA (cuda/amg_relax.cu): every pointer in d and the vectors are device pointers, stream a
   cudaStream_t; return 0 or a cudaError_t code */
int PatchworkSPMPatchRelaxCUDA(const PatchworkSPMDesc *d, const double *b, double *x, double *r, int zero_guess, void *stream);
int PatchworkSPMBoundaryResidualCUDA(const PatchworkSPMDesc *d, const double *x, const double *z, double *y, void *stream);
int PatchworkSPMMultCUDA(const PatchworkSPMDesc *d, const double *x, double *y, void *stream);
#ifdef __cplusplus
}
#endif
#endif
