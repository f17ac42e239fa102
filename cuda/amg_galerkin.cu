/* CUDA port of PCPATCHAMG's Galerkin product Ac = P^T A P (contract: include/patchwork/amg_kernel.h;
   CPU reference: src/core/amg_galerkin_ref.c). The pattern equals the reference's exactly (the
   structural pattern of the two products, columns ascending); the values equal it up to rounding,
   since the sums run in another order (atomics).

   Like the reference, two products: AP = A P, then Ac = R (AP) with R = P^T. The steps map to
   kernels as follows:

   argument check -> CheckRows (row pointers of A and P nondecreasing from >= 0), then CheckCols
                     (columns in range; it reads the columns only when CheckRows found the rows
                     sound, so a bad ptr[] never sends it out of bounds); one copy of the verdict.
   R = P^T        -> EntryRows (the row of each entry of P), a stable cub radix sort of P's columns
                     carrying the entry indices (stable: every row of R lists P's rows ascending, as
                     the reference's counting sort), RowStarts (R's row pointers from the sorted
                     columns), GatherR (R's columns and values through the permutation).
   C = X Y        -> the same two-phase hash SpGEMM for both products:
                     UpperBound: ub_i = sum_{k in X_i} |Y_k|, the products of row i.
                     symbolic: count the distinct columns of each row in a hash table; SumCounts
                     (64 bits, to refuse a result whose entries do not fit in an int), then a cub
                     exclusive scan gives C's row pointers.
                     numeric: the same insertion with atomicAdd of the products into the slots' values;
                     a bitonic sort of the table (empty slots hold INT_MAX, so they sort last) leaves
                     the row's c columns ascending in its first c slots, which are copied out.
   Each phase bins the rows (BinRows, then a 3-bit stable radix sort of the row indices by bin,
   skipped when one bin holds every row) by the table the row needs: twice its distinct columns
   (ub capped at ncol in the symbolic phase, the exact count in the numeric one), and by its work
   ub, so that a row of many products never runs on a few lanes:
     small:  8 lanes a row, <= 64 slots in shared memory, <= 512 products: the rows of AP of a
             7-point Laplacian with 3x3x3 aggregates (~20 products), and its coarse rows in the
             numeric phase (27 columns from ~400 products)
     medium: a warp a row, <= 256 slots in shared memory, <= 4096 products
     shared: a block a row, <= 4096 slots in dynamic shared memory (48 KB with the values): the
             coarse rows of the symbolic phase above (their table is sized by ~400 products)
     global: a block a row, its table in global memory, as many blocks as 512 MB of tables allow,
             for coarse levels whose rows have thousands of columns (slower, but right)
   A table that can hold every column (T >= ncol) maps column c to slot c: no collisions. Otherwise
   Fibonacci hashing and linear probing; insertion is a compare-and-swap on the key, the only way
   keys are read during the phase, so the shared tables are free of races by construction.

   Scratch memory comes from the stream-ordered allocator; the result's arrays from cudaMalloc
   (PatchworkCSRMatrixFreeCUDA frees them with cudaFree). Indices are int32 like the reference's. */
#include <cuda_runtime.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <vector>
#include <cub/cub.cuh>
#include <patchwork/amg_kernel.h>
#include "amg_device.h"

namespace {

constexpr int kEmpty = INT_MAX; /* an empty slot: greater than every column */

/* The bins of a phase, and their limits: table slots (log2) and products per row */
enum { BIN_EMPTY, BIN_SMALL, BIN_MEDIUM, BIN_SHARED, BIN_GLOBAL, kBins };
constexpr int kSmallLanes = 8, kSmallLog = 6, kSmallWork = 512;
constexpr int kMediumLanes = 32, kMediumLog = 8, kMediumWork = 4096;
constexpr int kSharedLog = 12;
constexpr int kBlockMinLog = 9;                          /* 2 * kBlock: every thread sorts a pair */
constexpr size_t kGlobalBudget = (size_t)512 << 20;      /* bytes of the global bin's tables at once */
constexpr int kGlobalMaxNeed = 1 << 29;                  /* the largest row a table of 2^30 slots takes */

/* cudaMalloc of at least one element, so that a pointer of the result is never NULL */
template <typename T>
static cudaError_t MallocResult(T **ptr, size_t count)
{
  return cudaMalloc((void **)ptr, (count ? count : 1) * sizeof(T));
}

/* ---------------------------------------------------------------------------------------------
   Argument checks */

struct Verdict {
  int bad, alo, ahi, plo, phi; /* ptr[0] and ptr[n] of A and of P */
};

__global__ void __launch_bounds__(kBlock) CheckRows(int n, const int *aptr, const int *pptr, Verdict *res)
{
  const long long i   = Gid();
  bool            bad = false;

  if (i < n) bad = aptr[i + 1] < aptr[i] || pptr[i + 1] < pptr[i];
  if (i == 0) {
    bad      = bad || aptr[0] < 0 || pptr[0] < 0;
    res->alo = aptr[0];
    res->ahi = aptr[n];
    res->plo = pptr[0];
    res->phi = pptr[n];
  }
  if (bad) atomicOr(&res->bad, 1);
}

/* A's columns in [0, n), P's in [0, ncol) (NULL columns only where there are no entries); skipped
   when CheckRows failed */
__global__ void __launch_bounds__(kBlock) CheckCols(int n, const int *acol, int ncol, const int *pcol, Verdict *res)
{
  const long long stride = (long long)gridDim.x * blockDim.x;
  bool            bad    = false;

  if (res->bad) return;
  if (!acol) bad = res->ahi > res->alo;
  else
    for (long long e = res->alo + Gid(); e < res->ahi; e += stride) bad = bad || acol[e] < 0 || acol[e] >= n;
  if (!pcol) bad = bad || res->phi > res->plo;
  else
    for (long long e = res->plo + Gid(); e < res->phi; e += stride) bad = bad || pcol[e] < 0 || pcol[e] >= ncol;
  if (bad) atomicOr(&res->bad, 1);
}

/* ---------------------------------------------------------------------------------------------
   R = P^T */

/* row[e - lo] = the row of P's entry e */
__global__ void __launch_bounds__(kBlock) EntryRows(int n, const int *__restrict__ ptr, int lo, int *__restrict__ row)
{
  const long long i = Gid();

  if (i >= n) return;
  for (int e = ptr[i]; e < ptr[i + 1]; e++) row[e - lo] = (int)i;
}

__global__ void __launch_bounds__(kBlock) Iota(int count, int *x)
{
  const long long i = Gid();

  if (i < count) x[i] = (int)i;
}

/* ptr[J] = the first t with key[t] >= J, J = 0..nrows, for sorted keys: entry t writes the rows
   that start at it (those after the previous entry's key, up to its own), O(nnz + nrows) */
__global__ void __launch_bounds__(kBlock) RowStarts(int nnz, const int *__restrict__ key, int nrows, int *__restrict__ ptr)
{
  const long long t = Gid();

  if (t > nnz) return;
  const int lo = t == 0 ? 0 : key[t - 1] + 1, hi = t == nnz ? nrows : key[t];
  for (int J = lo; J <= hi; J++) ptr[J] = (int)t;
}

__global__ void __launch_bounds__(kBlock) GatherR(int nnz, const int *__restrict__ perm, const int *__restrict__ row, const double *__restrict__ pval, int *__restrict__ rcol, double *__restrict__ rval)
{
  const long long t = Gid();

  if (t >= nnz) return;
  const int e = perm[t];
  rcol[t]     = row[e];
  rval[t]     = pval[e];
}

/* ---------------------------------------------------------------------------------------------
   C = X Y: the hash tables */

/* A CSR operand: m rows, entries at ptr[i]..ptr[i+1] (absolute positions) */
struct Operand {
  int           m;
  const int    *ptr, *col;
  const double *val;
};

/* One product and what its phases read and write */
struct Product {
  Operand    X, Y;
  int        ncol;  /* Y's columns, C's columns */
  const int *ub;    /* [X.m] products of each row, at most INT_MAX */
  int       *cnt;   /* symbolic: [X.m] distinct columns of each row */
  const int *cptr;  /* numeric: C's row pointers */
  int       *ccol;  /* numeric: C's columns and values */
  double    *cval;
};

/* log2 of the table for a row of at most need distinct columns: twice need (load factor at most
   1/2), but no more than the power of two that holds every column (then each column is its own
   slot), and at least 2^minlog; at most 2^30 */
__host__ __device__ __forceinline__ int TableLog(int need, int ncol, int minlog)
{
  int lg = minlog;

  while (lg < 30 && (1LL << lg) < 2LL * need && (1LL << lg) < ncol) lg++;
  return lg;
}

__host__ __device__ __forceinline__ int BinOf(int need, int work, int ncol)
{
  if (need == 0) return BIN_EMPTY;
  const int lg = TableLog(need, ncol, 4);
  if (lg <= kSmallLog && work <= kSmallWork) return BIN_SMALL;
  if (lg <= kMediumLog && work <= kMediumWork) return BIN_MEDIUM;
  if (lg <= kSharedLog) return BIN_SHARED;
  return BIN_GLOBAL;
}

/* The distinct columns a row's table must hold: symbolic, a bound; numeric, the count */
template <bool NUMERIC>
__device__ __forceinline__ int Need(const Product &p, int row)
{
  return NUMERIC ? p.cptr[row + 1] - p.cptr[row] : min(p.ub[row], p.ncol);
}

struct Table {
  int    *key; /* [1 << lg] columns, kEmpty where free */
  double *val; /* [1 << lg] sums (numeric) */
  int     lg;
  bool    direct; /* 1 << lg >= ncol: column c lives in slot c */
};

__device__ __forceinline__ Table MakeTable(int *key, double *val, int need, int ncol, int minlog)
{
  const int lg = TableLog(need, ncol, minlog);

  return Table{key, val, lg, (1LL << lg) >= ncol};
}

template <bool NUMERIC>
__device__ void ClearTable(const Table &t, int tid, int nthr)
{
  for (int s = tid; s < 1 << t.lg; s += nthr) {
    t.key[s] = kEmpty;
    if (NUMERIC) t.val[s] = 0;
  }
}

/* Column c, with the product v, into the table (the table never fills: it has room for need) */
template <bool NUMERIC>
__device__ __forceinline__ void Add(const Table &t, int c, double v)
{
  const unsigned mask = (1u << t.lg) - 1;
  unsigned       h    = t.direct ? (unsigned)c : ((unsigned)c * 0x9E3779B1u) >> (32 - t.lg);

  for (;; h = (h + 1) & mask) {
    const int old = atomicCAS(t.key + h, kEmpty, c);

    if (old == kEmpty || old == c) break;
  }
  if (NUMERIC) atomicAdd(t.val + h, v);
}

/* The products of X's entries xs..xe with their rows of Y, one entry of X per participant: for
   short rows of Y */
template <bool NUMERIC>
__device__ void AddByEntry(const Product &p, const Table &t, int xs, int xe, int tid, int nthr)
{
  for (int e = xs + tid; e < xe; e += nthr) {
    const int    k  = __ldg(p.X.col + e), fe = __ldg(p.Y.ptr + k + 1);
    const double x  = NUMERIC ? __ldg(p.X.val + e) : 0.0;

    for (int f = __ldg(p.Y.ptr + k); f < fe; f++) Add<NUMERIC>(t, __ldg(p.Y.col + f), NUMERIC ? x * __ldg(p.Y.val + f) : 0.0);
  }
}

/* The same, one entry of X per warp, its lanes along the row of Y: for long rows of Y */
template <bool NUMERIC>
__device__ void AddByWarp(const Product &p, const Table &t, int xs, int xe)
{
  const int lane = threadIdx.x % 32;

  for (int e = xs + (int)threadIdx.x / 32; e < xe; e += kBlock / 32) {
    const int    k  = __ldg(p.X.col + e), fe = __ldg(p.Y.ptr + k + 1);
    const double x  = NUMERIC ? __ldg(p.X.val + e) : 0.0;

    for (int f = __ldg(p.Y.ptr + k) + lane; f < fe; f += 32) Add<NUMERIC>(t, __ldg(p.Y.col + f), NUMERIC ? x * __ldg(p.Y.val + f) : 0.0);
  }
}

/* Bitonic sort of the whole table by key, values along; sync() separates the stages */
template <typename Sync>
__device__ void SortTable(const Table &t, int tid, int nthr, const Sync &sync)
{
  const int size = 1 << t.lg;

  for (int k = 2; k <= size; k <<= 1)
    for (int j = k >> 1; j > 0; j >>= 1) {
      for (int i = tid; i < size / 2; i += nthr) {
        const int a = ((i & ~(j - 1)) << 1) | (i & (j - 1)), b = a + j; /* a has bit j clear */
        const int ka = t.key[a], kb = t.key[b];

        if ((ka > kb) == ((a & k) == 0)) {
          const double va = t.val[a];

          t.key[a] = kb;
          t.key[b] = ka;
          t.val[a] = t.val[b];
          t.val[b] = va;
        }
      }
      sync();
    }
}

/* The sorted table's first c slots are the row */
__device__ void WriteRow(const Product &p, const Table &t, int row, int tid, int nthr)
{
  const int start = p.cptr[row], c = p.cptr[row + 1] - start;

  for (int s = tid; s < c; s += nthr) {
    p.ccol[start + s] = t.key[s];
    p.cval[start + s] = t.val[s];
  }
}

struct GroupSync {
  unsigned mask;
  __device__ void operator()() const { __syncwarp(mask); }
};

struct BlockSync {
  __device__ void operator()() const { __syncthreads(); }
};

__host__ __device__ constexpr int Log2(int x)
{
  return x <= 1 ? 0 : 1 + Log2(x / 2);
}

/* The small and medium bins: G lanes a row (G divides 32), tables of at most 2^LOGCAP slots in
   shared memory; rows[] lists the bin's rows (NULL: rows 0..count-1) */
template <int G, int LOGCAP, bool NUMERIC>
__global__ void __launch_bounds__(kBlock) GroupRows(Product p, const int *__restrict__ rows, int count)
{
  constexpr int   kGroups = kBlock / G, kCap = 1 << LOGCAP;
  __shared__ int  skey[kGroups][kCap];
  __shared__ double sval[NUMERIC ? kGroups : 1][NUMERIC ? kCap : 1];
  const int       g = threadIdx.x / G, lane = threadIdx.x % G;
  const long long r = (long long)blockIdx.x * kGroups + g;

  if (r >= count) return; /* the whole group leaves */
  const GroupSync sync{G == 32 ? 0xffffffffu : ((1u << G) - 1) << (threadIdx.x % 32 / G * G)};
  constexpr int   kMinLog = Log2(2 * G); /* every lane sorts a pair */
  const int       row = rows ? rows[r] : (int)r;
  const Table     t   = MakeTable(skey[g], NUMERIC ? sval[g] : nullptr, Need<NUMERIC>(p, row), p.ncol, kMinLog);

  ClearTable<NUMERIC>(t, lane, G);
  sync();
  AddByEntry<NUMERIC>(p, t, p.X.ptr[row], p.X.ptr[row + 1], lane, G);
  sync();
  if (NUMERIC) {
    SortTable(t, lane, G, sync);
    WriteRow(p, t, row, lane, G);
  } else {
    int c = 0;

    for (int s = lane; s < 1 << t.lg; s += G) c += t.key[s] != kEmpty;
    for (int o = G / 2; o > 0; o /= 2) c += __shfl_xor_sync(sync.mask, c, o, G);
    if (lane == 0) p.cnt[row] = c;
  }
}

/* The shared and global bins: a block a row (grid-stride over the bin's rows). GLOBAL: block b's
   table is gkey/gval + b * gcap; otherwise dynamic shared memory (values first, then keys). */
template <bool NUMERIC, bool GLOBAL>
__global__ void __launch_bounds__(kBlock) BlockRows(Product p, const int *__restrict__ rows, int count, int *gkey, double *gval, size_t gcap)
{
  extern __shared__ __align__(16) unsigned char smem[];
  int                                          *key;
  double                                       *val;

  if (GLOBAL) {
    key = gkey + blockIdx.x * gcap;
    val = NUMERIC ? gval + blockIdx.x * gcap : nullptr;
  } else {
    val = NUMERIC ? (double *)smem : nullptr;
    key = (int *)(smem + (NUMERIC ? sizeof(double) << kSharedLog : 0));
  }
  for (long long r = blockIdx.x; r < count; r += gridDim.x) {
    const int   row = rows ? rows[r] : (int)r, xs = p.X.ptr[row], xe = p.X.ptr[row + 1];
    const Table t   = MakeTable(key, val, Need<NUMERIC>(p, row), p.ncol, kBlockMinLog);

    ClearTable<NUMERIC>(t, threadIdx.x, kBlock);
    __syncthreads();
    if ((long long)p.ub[row] >= 32LL * (xe - xs)) AddByWarp<NUMERIC>(p, t, xs, xe);
    else AddByEntry<NUMERIC>(p, t, xs, xe, threadIdx.x, kBlock);
    __syncthreads();
    if (NUMERIC) {
      SortTable(t, threadIdx.x, kBlock, BlockSync());
      WriteRow(p, t, row, threadIdx.x, kBlock);
    } else {
      int c = 0;

      for (int s = 0; s < 1 << t.lg; s += kBlock) c += __syncthreads_count(t.key[s + threadIdx.x] != kEmpty);
      if (threadIdx.x == 0) p.cnt[row] = c;
    }
    __syncthreads(); /* the next row clears the table */
  }
}

/* ---------------------------------------------------------------------------------------------
   C = X Y: bins, phases */

__global__ void __launch_bounds__(kBlock) UpperBound(Operand X, Operand Y, int *ub)
{
  const long long i = Gid();

  if (i >= X.m) return;
  long long s = 0;
  for (int e = X.ptr[i]; e < X.ptr[i + 1]; e++) {
    const int k = X.col[e];

    s += Y.ptr[k + 1] - Y.ptr[k];
  }
  ub[i] = (int)(s < INT_MAX ? s : INT_MAX);
}

struct BinInfo {
  int count[kBins];
  int maxneed; /* of the global bin's rows */
};

template <bool NUMERIC>
__global__ void __launch_bounds__(kBlock) BinRows(Product p, unsigned char *bin, BinInfo *info)
{
  __shared__ int  hist[kBins], maxneed;
  const long long i = Gid();

  if (threadIdx.x < kBins) hist[threadIdx.x] = 0;
  if (threadIdx.x == 0) maxneed = 0;
  __syncthreads();
  if (i < p.X.m) {
    const int need = Need<NUMERIC>(p, (int)i), b = BinOf(need, p.ub[i], p.ncol);

    bin[i] = (unsigned char)b;
    atomicAdd(&hist[b], 1);
    if (b == BIN_GLOBAL) atomicMax(&maxneed, need);
  }
  __syncthreads();
  if (threadIdx.x < kBins && hist[threadIdx.x]) atomicAdd(&info->count[threadIdx.x], hist[threadIdx.x]);
  if (threadIdx.x == 0 && maxneed) atomicMax(&info->maxneed, maxneed);
}

__global__ void __launch_bounds__(kBlock) SumCounts(int m, const int *cnt, unsigned long long *total)
{
  typedef cub::BlockReduce<unsigned long long, kBlock> Reduce;
  __shared__ typename Reduce::TempStorage             tmp;
  const long long                                     i   = Gid();
  const unsigned long long                            sum = Reduce(tmp).Sum(i < m ? (unsigned long long)cnt[i] : 0ull);

  if (threadIdx.x == 0 && sum) atomicAdd(total, sum);
}

/* One phase of C = X Y (p.X.m > 0): bin the rows, then each bin's kernel */
template <bool NUMERIC>
static int Phase(const Product &p, Scratch &mem, cudaStream_t s)
{
  const int      m = p.X.m;
  BinInfo       *dinfo, info;
  unsigned char *bin, *sbin;
  int           *iota, *rows = nullptr, off[kBins + 1], used = 0;
  char          *tmp;
  size_t         bytes = 0;

  PW_TRY(mem.Get(&dinfo, 1));
  PW_TRY(mem.Get(&bin, m));
  PW_TRY(cudaMemsetAsync(dinfo, 0, sizeof(BinInfo), s));
  BinRows<NUMERIC><<<Blocks(m), kBlock, 0, s>>>(p, bin, dinfo);
  PW_TRY(cudaGetLastError());
  PW_TRY(Fetch(&info, dinfo, sizeof(info), s));
  off[0] = 0;
  for (int b = 0; b < kBins; b++) {
    off[b + 1] = off[b] + info.count[b];
    used += info.count[b] > 0;
  }
  if (used > 1) { /* the rows of each bin together, in row order */
    PW_TRY(mem.Get(&sbin, m));
    PW_TRY(mem.Get(&iota, m));
    PW_TRY(mem.Get(&rows, m));
    Iota<<<Blocks(m), kBlock, 0, s>>>(m, iota);
    PW_TRY(cudaGetLastError());
    PW_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, bin, sbin, iota, rows, m, 0, Bits(kBins - 1), s));
    PW_TRY(mem.Get(&tmp, bytes));
    PW_TRY(cub::DeviceRadixSort::SortPairs(tmp, bytes, bin, sbin, iota, rows, m, 0, Bits(kBins - 1), s));
  }
  for (int b = BIN_SMALL; b < kBins; b++) {
    const int  count = info.count[b];
    const int *list  = rows ? rows + off[b] : nullptr;

    if (!count) continue;
    switch (b) {
    case BIN_SMALL:
      GroupRows<kSmallLanes, kSmallLog, NUMERIC><<<(unsigned)((count + kBlock / kSmallLanes - 1) / (kBlock / kSmallLanes)), kBlock, 0, s>>>(p, list, count);
      break;
    case BIN_MEDIUM:
      GroupRows<kMediumLanes, kMediumLog, NUMERIC><<<(unsigned)((count + kBlock / kMediumLanes - 1) / (kBlock / kMediumLanes)), kBlock, 0, s>>>(p, list, count);
      break;
    case BIN_SHARED:
      BlockRows<NUMERIC, false><<<(unsigned)(count < (1 << 20) ? count : 1 << 20), kBlock, (NUMERIC ? 12 : 4) << kSharedLog, s>>>(p, list, count, nullptr, nullptr, 0);
      break;
    default: { /* global: as many blocks as the budget of table memory allows */
      if (info.maxneed > kGlobalMaxNeed) return (int)cudaErrorMemoryAllocation;
      const size_t cap = (size_t)1 << TableLog(info.maxneed, p.ncol, kBlockMinLog), slot = NUMERIC ? 12 : 4;
      size_t       nblk = kGlobalBudget / (cap * slot);
      int          *gkey;
      double       *gval = nullptr;

      nblk = nblk < 1 ? 1 : nblk;
      nblk = nblk > (size_t)count ? (size_t)count : nblk;
      nblk = nblk > (size_t)(4 * Multiprocessors()) ? (size_t)(4 * Multiprocessors()) : nblk;
      PW_TRY(mem.Get(&gkey, nblk * cap));
      if (NUMERIC) PW_TRY(mem.Get(&gval, nblk * cap));
      BlockRows<NUMERIC, true><<<(unsigned)nblk, kBlock, 0, s>>>(p, list, count, gkey, gval, cap);
    }
    }
    PW_TRY(cudaGetLastError());
  }
  return 0;
}

/* C = X Y, Y with ncol columns: C's row pointers into cptr ([X.m + 1]), its columns and values
   allocated with cudaMalloc when result (the caller frees them, also on failure), else from keep */
static int Multiply(const Operand &X, const Operand &Y, int ncol, int *cptr, int **ccol, double **cval, int *nnz, bool result, Scratch &keep, cudaStream_t s)
{
  const int           m = X.m;
  Scratch             mem(s); /* this product's work arrays */
  Product             p = {X, Y, ncol, nullptr, nullptr, nullptr, nullptr, nullptr};
  int                *ub, *cnt;
  unsigned long long *dtotal, total = 0;
  char               *tmp;
  size_t              bytes = 0;

  *ccol = nullptr;
  *cval = nullptr;
  *nnz  = 0;
  PW_TRY(mem.Get(&ub, m));
  PW_TRY(mem.Get(&cnt, (size_t)m + 1));
  PW_TRY(mem.Get(&dtotal, 1));
  PW_TRY(cudaMemsetAsync(cnt, 0, sizeof(int) * ((size_t)m + 1), s));
  PW_TRY(cudaMemsetAsync(dtotal, 0, sizeof(*dtotal), s));
  p.ub  = ub;
  p.cnt = cnt;
  if (m > 0) {
    UpperBound<<<Blocks(m), kBlock, 0, s>>>(X, Y, ub);
    PW_TRY(cudaGetLastError());
    if (int ret = Phase<false>(p, mem, s)) return ret;
    SumCounts<<<Blocks(m), kBlock, 0, s>>>(m, cnt, dtotal);
    PW_TRY(cudaGetLastError());
    PW_TRY(Fetch(&total, dtotal, sizeof(total), s));
  }
  if (total > (unsigned long long)INT_MAX) return 1; /* the entries of C do not fit in an int */
  PW_TRY(cub::DeviceScan::ExclusiveSum(nullptr, bytes, cnt, cptr, m + 1, s));
  PW_TRY(mem.Get(&tmp, bytes));
  PW_TRY(cub::DeviceScan::ExclusiveSum(tmp, bytes, cnt, cptr, m + 1, s));
  if (result) {
    PW_TRY(MallocResult(ccol, total));
    PW_TRY(MallocResult(cval, total));
  } else {
    PW_TRY(keep.Get(ccol, total));
    PW_TRY(keep.Get(cval, total));
  }
  *nnz    = (int)total;
  p.cptr = cptr;
  p.ccol = *ccol;
  p.cval = *cval;
  if (total > 0) return Phase<true>(p, mem, s);
  return 0;
}

/* R = P^T (P has nnz > 0 entries from plo on): R's arrays rptr [ncol + 1], rcol, rval [nnz] */
static int Transpose(const PatchworkCSRMatrix *P, int plo, int nnz, int *rptr, int *rcol, double *rval, cudaStream_t s)
{
  Scratch   mem(s);
  int      *row, *iota, *perm;
  unsigned *keys;
  char     *tmp;
  size_t    bytes = 0;
  const int bits  = Bits(P->ncol - 1);

  PW_TRY(mem.Get(&row, nnz));
  PW_TRY(mem.Get(&iota, nnz));
  PW_TRY(mem.Get(&perm, nnz));
  PW_TRY(mem.Get(&keys, nnz));
  EntryRows<<<Blocks(P->nrow), kBlock, 0, s>>>(P->nrow, P->ptr, plo, row);
  Iota<<<Blocks(nnz), kBlock, 0, s>>>(nnz, iota);
  PW_TRY(cudaGetLastError());
  PW_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, (const unsigned *)P->col + plo, keys, iota, perm, nnz, 0, bits, s));
  PW_TRY(mem.Get(&tmp, bytes));
  PW_TRY(cub::DeviceRadixSort::SortPairs(tmp, bytes, (const unsigned *)P->col + plo, keys, iota, perm, nnz, 0, bits, s));
  RowStarts<<<Blocks((long long)nnz + 1), kBlock, 0, s>>>(nnz, (const int *)keys, P->ncol, rptr);
  GatherR<<<Blocks(nnz), kBlock, 0, s>>>(nnz, perm, row, P->val + plo, rcol, rval);
  PW_TRY(cudaGetLastError());
  return 0;
}

/* The product into M (arrays from cudaMalloc; the caller frees them on failure) */
static int Galerkin(const PatchworkCSR *A, const PatchworkCSRMatrix *P, PatchworkCSRMatrix *M, cudaStream_t s)
{
  const int n = A->n, nc = P->ncol;
  Scratch   mem(s); /* R and AP */
  Verdict  *dres, res = {0, 0, 0, 0, 0};
  int      *rptr, *rcol, *apptr, *apcol, apnnz;
  double   *rval, *apval;

  if (n > 0) {
    PW_TRY(mem.Get(&dres, 1));
    PW_TRY(cudaMemsetAsync(dres, 0, sizeof(Verdict), s));
    CheckRows<<<Blocks(n), kBlock, 0, s>>>(n, A->ptr, P->ptr, dres);
    CheckCols<<<StrideBlocks(), kBlock, 0, s>>>(n, A->col, nc, P->col, dres);
    PW_TRY(cudaGetLastError());
    PW_TRY(Fetch(&res, dres, sizeof(res), s));
    if (res.bad || (res.ahi > res.alo && !A->val) || (res.phi > res.plo && !P->val)) return 1;
  }
  M->nrow = M->ncol = nc;
  PW_TRY(MallocResult(&M->ptr, (size_t)nc + 1));
  if (res.ahi == res.alo || res.phi == res.plo) { /* no products: no entries */
    PW_TRY(cudaMemsetAsync(M->ptr, 0, sizeof(int) * ((size_t)nc + 1), s));
    PW_TRY(MallocResult(&M->col, 0));
    PW_TRY(MallocResult(&M->val, 0));
    return 0;
  }
  const int nnzp = res.phi - res.plo;
  PW_TRY(mem.Get(&rptr, (size_t)nc + 1));
  PW_TRY(mem.Get(&rcol, nnzp));
  PW_TRY(mem.Get(&rval, nnzp));
  PW_TRY(mem.Get(&apptr, (size_t)n + 1));
  if (int ret = Transpose(P, res.plo, nnzp, rptr, rcol, rval, s)) return ret;
  {
    const Operand a = {n, A->ptr, A->col, A->val}, p = {n, P->ptr, P->col, P->val};

    if (int ret = Multiply(a, p, nc, apptr, &apcol, &apval, &apnnz, false, mem, s)) return ret;
  }
  {
    const Operand r = {nc, rptr, rcol, rval}, ap = {n, apptr, apcol, apval};

    return Multiply(r, ap, nc, M->ptr, &M->col, &M->val, &M->nnz, true, mem, s);
  }
}

} // namespace

extern "C" int PatchworkGalerkinCUDA(const PatchworkCSR *A, const PatchworkCSRMatrix *P, PatchworkCSRMatrix *Ac, void *stream)
{
  const cudaStream_t s = (cudaStream_t)stream;
  PatchworkCSRMatrix M;
  int                ret;

  if (!Ac) return 1;
  memset(Ac, 0, sizeof(*Ac)); /* empty on every failure */
  if (!A || !P || A->n < 0 || A->n == INT_MAX || P->nrow != A->n || P->ncol < 0 || P->ncol == INT_MAX) return 1;
  if (A->n > 0 && (!A->ptr || !P->ptr)) return 1; /* col and val: checked once the entries are known */
  memset(&M, 0, sizeof(M));
  if ((ret = Galerkin(A, P, &M, s))) {
    cudaStreamSynchronize(s); /* kernels may still write the result's arrays */
    cudaFree(M.ptr);
    cudaFree(M.col);
    cudaFree(M.val);
    return ret;
  }
  *Ac = M;
  return 0;
}

/* T = M^T for the restriction of a level that lives on the device: the transpose of the product */
extern "C" int PatchworkCSRTransposeCUDA(const PatchworkCSRMatrix *M, PatchworkCSRMatrix *T, void *stream)
{
  const cudaStream_t s = (cudaStream_t)stream;
  PatchworkCSRMatrix R;
  int                ret = 0;

  if (!T) return 1;
  memset(T, 0, sizeof(*T));
  if (!M || M->nrow < 0 || M->ncol < 0 || M->nnz < 0 || (M->nrow > 0 && !M->ptr) || (M->nnz > 0 && (!M->col || !M->val))) return 1;
  memset(&R, 0, sizeof(R));
  R.nrow = M->ncol;
  R.ncol = M->nrow;
  R.nnz  = M->nnz;
  if (MallocResult(&R.ptr, (size_t)R.nrow + 1) != cudaSuccess || MallocResult(&R.col, R.nnz) != cudaSuccess || MallocResult(&R.val, R.nnz) != cudaSuccess) ret = (int)cudaErrorMemoryAllocation;
  else if (R.nnz == 0) ret = (int)cudaMemsetAsync(R.ptr, 0, sizeof(int) * ((size_t)R.nrow + 1), s);
  else ret = Transpose(M, 0, M->nnz, R.ptr, R.col, R.val, s);
  if (ret) {
    cudaStreamSynchronize(s);
    cudaFree(R.ptr);
    cudaFree(R.col);
    cudaFree(R.val);
    return ret;
  }
  *T = R;
  return 0;
}
