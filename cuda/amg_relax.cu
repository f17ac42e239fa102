/* CUDA kernels of the patch block-Jacobi relaxation on the patchSPM layout (contract:
   include/patchwork/amg_kernel.h; CPU reference: src/core/amg_relax_ref.c). Arithmetic is double
   throughout, as in the reference: single-precision values only halve the matrix bytes.

   PatchRelax (the paper's prerelax-residual kernel, section 5.2.2). One thread block per patch, one
   thread per row (blockDim = max_patch rounded up to a warp, at most 1024). Each thread keeps its
   row's b, iw/diagonal (one division a row, then products), t and g in registers; the patch vector
   that the products read (x_p, then g after every sweep, then the new x_p) goes through shared
   memory, double-buffered so that one __syncthreads per product suffices. The products read the
   patch block AI up to inner + 1 times, so each warp first copies its rows of AI into shared memory:
   - layout: warp w owns rows 32w..32w+31 (a slice) and a fixed region of the staging area; the
     slice lies there as a sliced ELL, entry k of lane l at 33 k + l, padded to its longest row L.
     When the 32 lanes read entry k of their rows they touch 32 consecutive words: no bank
     conflicts, where CSR order would give 3-4 way conflicts (row starts fall on random banks). The
     stride 33 instead of 32 keeps the staging stores conflict-free too (consecutive entries of one
     row land on consecutive banks). Columns are stored as 16-bit patch-local indices.
   - staging: the warp copies its slice's contiguous CSR range with coalesced loads (32 consecutive
     entries a step), and each lane finds the row of its entry by a 5-step binary search over the
     lanes' row starts with shuffles. Reading rows one thread each from global memory instead would
     touch ~20 cache lines per load instruction.
   - budget: the descriptor gives max_patch but not the patch nnz (ai_ptr is device memory, and
     reading it back would synchronize), so the launcher sizes the staging area for kRowCap entries a
     row (27-point stencils and P1 tetrahedra fit) but never more than lets two blocks share an SM.
     A slice that does not fit its region reads its rows from global memory: slower, same result.
     Measured on an H200 (bench/bench_amg_kernels.cu, 4M rows, patches of 384 rows): with 19 AI
     entries a row (27-point, box patches) the staged kernel is 1.1x (single) to 1.7x (double)
     faster than one that reads AI through L1 and reserves nothing. With 3-6 entries a row the
     reservation is what costs: the kernel without it takes 15-30% less time, and skipping the
     staging of short slices (reading them through the small L1 that the reservation leaves) took
     up to 28% more, so every slice that fits is staged. A patch nnz in the descriptor would let
     the launcher reserve only what is needed.
   BoundaryResidual and Mult: CSR products in which each warp takes 32 consecutive rows and picks the
   lanes a row (1, 2, 4, 8) from their entry count: one lane a row is best for the few entries of AB
   on good patches, 4 lanes for the 20 a row of badly cut ones (measured: 1.5x and 1.9x against the
   other choice; on 7-point box patches the adaptive choice made BoundaryResidual 2.2x faster than 4
   lanes a row throughout). Mult runs one block per patch (AI columns are relative to the patch
   start), a warp per 32 rows.
   The row map: every kernel exists with and without it (template flag ROW), so that the identity
   layout (row == NULL) pays no extra load. With it, a thread handles position i and reads and writes
   the vectors at row[i]; the patch vector in shared memory stays in position order. Mult's AI part
   reads x[row[ps + col]], two dependent loads an entry: Mult serves tests and checks only. */
#include <cuda_runtime.h>
#include <limits.h>
#include <stddef.h>
#include <algorithm>
#include <patchwork/amg_kernel.h>

namespace {

constexpr unsigned kFull     = 0xffffffffu;
constexpr int      kMaxPatch = 1024; /* one thread a row, one block a patch */
constexpr int      kSkew     = 33;   /* slot stride of the staged slices */
constexpr int      kRowCap   = 28;   /* staged entries a row the shared budget is sized for */

/* The descriptor with typed values, passed by value */
template <typename T>
struct Spm {
  int        n, npatch, inner;
  double     iw, w;
  const int *patch_ptr, *row, *ai_ptr, *ai_col, *ab_ptr, *ab_col;
  const T   *ai_val, *ab_val, *diag;
};

/* the vector index of position i */
template <bool ROW>
__device__ __forceinline__ int VecIndex(const int *row, int i)
{
  return ROW ? __ldg(row + i) : i;
}

template <typename T>
static Spm<T> MakeSpm(const PatchworkSPMDesc *d)
{
  Spm<T> A;

  A.n         = d->n;
  A.npatch    = d->npatch;
  A.inner     = d->inner;
  A.iw        = d->inner_omega;
  A.w         = d->omega;
  A.patch_ptr = d->patch_ptr;
  A.row       = d->row;
  A.ai_ptr    = d->ai_ptr;
  A.ai_col    = d->ai_col;
  A.ab_ptr    = d->ab_ptr;
  A.ab_col    = d->ab_col;
  A.ai_val    = (const T *)d->ai_val;
  A.ab_val    = (const T *)d->ab_val;
  A.diag      = (const T *)d->diag;
  return A;
}

/* ---------------------------------------------------------------------------------------------- */
/* PatchRelax */

/* sum_k AI_k v[col_k] over the row, from the staged slice (sv, sc: the lane's first slot) or from
   global memory (rows [rs, rs+len) of the CSR) */
template <typename T>
__device__ __forceinline__ double PatchDot(bool staged, const T *sv, const unsigned short *sc, const Spm<T> &A, int rs, int len, const double *v)
{
  double acc = 0.0;

  if (staged) {
#pragma unroll 4
    for (int k = 0; k < len; k++) acc += (double)sv[k * kSkew] * v[sc[k * kSkew]];
  } else {
#pragma unroll 4
    for (int k = 0; k < len; k++) acc += (double)__ldg(A.ai_val + rs + k) * v[__ldg(A.ai_col + rs + k)];
  }
  return acc;
}

/* Copy the warp's rows of AI (CSR entries [first, last)) into its slice at sv/sc (slot 0, lane 0).
   rs: this lane's row start, INT_MAX for lanes without a row, so that the binary search (the
   largest lane whose row starts at or before the entry) never picks them; empty rows share their
   start with the next row, which the search prefers. */
template <typename T>
__device__ __forceinline__ void StageSlice(const Spm<T> &A, int rs, int first, int last, T *sv, unsigned short *sc)
{
  const int lane = threadIdx.x & 31;

  for (int j0 = first; j0 < last; j0 += 4 * 32) {
    T   v[4];
    int c[4];

#pragma unroll
    for (int u = 0; u < 4; u++) { /* the loads first: four in flight */
      const int j = j0 + 32 * u + lane;
      v[u]        = j < last ? __ldg(A.ai_val + j) : T(0);
      c[u]        = j < last ? __ldg(A.ai_col + j) : 0;
    }
#pragma unroll
    for (int u = 0; u < 4; u++) {
      const int j = j0 + 32 * u + lane;
      int       l = 0;

      for (int step = 16; step > 0; step >>= 1)
        if (__shfl_sync(kFull, rs, l + step) <= j) l += step;
      const int k = j - __shfl_sync(kFull, rs, l);
      if (j < last) {
        sv[k * kSkew + l] = v[u];
        sc[k * kSkew + l] = (unsigned short)c[u];
      }
    }
  }
}

/* cap: entries of the staging area; each warp owns cap / warps of them */
template <typename T, bool ROW>
__global__ void __launch_bounds__(kMaxPatch, 1) PatchRelaxKernel(const Spm<T> A, const double *b, double *x, double *r, int zero_guess, int cap)
{
  extern __shared__ double smem[];
  const int       nt = blockDim.x, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  double         *cur = smem, *nxt = smem + nt; /* the patch vector the next product reads, and the other buffer */
  T              *sval = (T *)(smem + 2 * nt);  /* [cap] staged AI */
  unsigned short *scol = (unsigned short *)(sval + cap);
  const int       s = A.patch_ptr[blockIdx.x], m = A.patch_ptr[blockIdx.x + 1] - s;
  const bool      active = tid < m, prod = !zero_guess || A.inner > 1 || r;
  const int       pos = s + tid, region = cap / (nt / 32), off = warp * region; /* the warp's staging region */
  int             rs = INT_MAX, len = 0, vi = 0; /* vi: the vector index of the thread's position */
  bool            staged = false;
  double          wd = 0.0, bi = 0.0, xi = 0.0, dg = 1.0;

  if (m > nt) return; /* a patch larger than max_patch breaks the contract; the whole block leaves */
  if (active) {
    vi  = VecIndex<ROW>(A.row, pos);
    rs  = A.ai_ptr[pos];
    len = A.ai_ptr[pos + 1] - rs;
    dg  = (double)A.diag[pos];
    wd  = A.iw / dg;
    bi  = b[vi]; /* read before r, which may alias b, is written (by this thread only) */
    if (!zero_guess) xi = x[vi];
  }
  if (prod) {
    const int L = __reduce_max_sync(kFull, len);

    staged = L > 0 && kSkew * L <= region;
    if (staged) {
      StageSlice(A, rs, __shfl_sync(kFull, rs, 0), __reduce_max_sync(kFull, active ? rs + len : 0), sval + off, scol + off);
      __syncwarp(); /* a warp reads only its own slice */
    }
  }
  const T              *sv = sval + off + lane;
  const unsigned short *sc = scol + off + lane;
  double                t  = bi, g;

#define PW_SWAP() \
  do { \
    double *tmp_ = cur; \
    cur          = nxt; \
    nxt          = tmp_; \
  } while (0)
  if (!zero_guess) {
    cur[tid] = xi;
    __syncthreads();
    t = bi - (dg * xi + PatchDot(staged, sv, sc, A, rs, len, cur));
    PW_SWAP();
  }
  g = wd * t; /* the first sweep, from g = 0 */
  for (int k = 1; k < A.inner; k++) {
    cur[tid] = g;
    __syncthreads();
    g = g + wd * (t - (dg * g + PatchDot(staged, sv, sc, A, rs, len, cur)));
    PW_SWAP();
  }
  xi = zero_guess ? A.w * g : xi + A.w * g;
  if (active) x[vi] = xi;
  if (r) {
    cur[tid] = xi;
    __syncthreads();
    const double ri = bi - (dg * xi + PatchDot(staged, sv, sc, A, rs, len, cur));
    if (active) r[vi] = ri;
  }
#undef PW_SWAP
}

template <typename T, bool ROW>
static cudaError_t PatchRelax(const PatchworkSPMDesc *d, const double *b, double *x, double *r, int zero_guess, cudaStream_t stream)
{
  const Spm<T> A    = MakeSpm<T>(d);
  const int    nt   = (d->max_patch + 31) / 32 * 32;
  const size_t vec  = 2 * nt * sizeof(double);
  const size_t per  = sizeof(T) + sizeof(unsigned short);
  const bool   prod = !zero_guess || d->inner > 1 || r;
  size_t       cap  = 0, bytes;
  cudaError_t  err;

  if (prod) {
    int dev, optin, per_sm;

    if ((err = cudaGetDevice(&dev)) != cudaSuccess) return err;
    if ((err = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)) != cudaSuccess) return err;
    if ((err = cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev)) != cudaSuccess) return err;
    /* two blocks an SM at least (the runtime reserves 1 KiB of shared memory a block) */
    const size_t lim  = std::min((size_t)optin, (size_t)per_sm / 2 - 1024);
    const size_t want = (size_t)(nt / 32) * kSkew * kRowCap * per;
    if (lim > vec) cap = std::min(want, lim - vec) / per;
  }
  bytes = vec + cap * per;
  if (bytes > 48 * 1024 && (err = cudaFuncSetAttribute(PatchRelaxKernel<T, ROW>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes)) != cudaSuccess) return err;
  PatchRelaxKernel<T, ROW><<<d->npatch, nt, bytes, stream>>>(A, b, x, r, zero_guess, (int)cap);
  return cudaGetLastError();
}

/* ---------------------------------------------------------------------------------------------- */
/* BoundaryResidual and Mult */

/* the sum of the G partial sums of a row's lanes (G consecutive lanes, G a power of 2) */
template <int G>
__device__ __forceinline__ double GroupSum(double v)
{
#pragma unroll
  for (int o = G / 2; o > 0; o >>= 1) v += __shfl_xor_sync(kFull, v, o, G);
  return v;
}

/* Positions [r0, r1) (r1 - r0 <= 32) of one warp, G lanes a row, R(i) = row[i] or i:
     MULT   y_R(i) = AD_i x_R(i) + sum AI_ij x_R(ps + j) + sum AB_ij x_j    (ps: the start of the patch)
     else   y_R(i) = z_R(i) - sum AB_ij x_j                  (z is read by the lane that writes y) */
template <typename T, int G, bool MULT, bool ROW>
__device__ __forceinline__ void WarpRows(const Spm<T> &A, int r0, int r1, int ps, const double *__restrict__ x, const double *z, double *y)
{
  const int lane = threadIdx.x & 31, sub = lane % G;

  for (int i0 = r0; i0 < r1; i0 += 32 / G) { /* the same trip count for the whole warp */
    const int i   = i0 + lane / G;
    double    acc = 0.0;

    if (i < r1) {
      if (MULT) {
        const int e = __ldg(A.ai_ptr + i + 1);
        for (int j = __ldg(A.ai_ptr + i) + sub; j < e; j += G) acc += (double)__ldg(A.ai_val + j) * x[VecIndex<ROW>(A.row, ps + __ldg(A.ai_col + j))];
      }
      const int e = __ldg(A.ab_ptr + i + 1);
      for (int j = __ldg(A.ab_ptr + i) + sub; j < e; j += G) acc += (double)__ldg(A.ab_val + j) * x[__ldg(A.ab_col + j)];
    }
    acc = GroupSum<G>(acc);
    if (i < r1 && sub == 0) {
      const int vi = VecIndex<ROW>(A.row, i);

      y[vi] = MULT ? (double)A.diag[i] * x[vi] + acc : z[vi] - acc;
    }
  }
}

/* The lanes a row from the warp's entry count: 1 below 8 entries a row on average, then 2, 4, 8 */
template <typename T, bool MULT, bool ROW>
__device__ __forceinline__ void WarpRowsAdaptive(const Spm<T> &A, int r0, int r1, int ps, const double *__restrict__ x, const double *z, double *y)
{
  const int i   = r0 + (threadIdx.x & 31);
  int       cnt = 0;

  if (i < r1) {
    cnt = __ldg(A.ab_ptr + i + 1) - __ldg(A.ab_ptr + i);
    if (MULT) cnt += __ldg(A.ai_ptr + i + 1) - __ldg(A.ai_ptr + i);
  }
  const int tot = __reduce_add_sync(kFull, cnt);
  if (tot < 8 * 32) WarpRows<T, 1, MULT, ROW>(A, r0, r1, ps, x, z, y);
  else if (tot < 16 * 32) WarpRows<T, 2, MULT, ROW>(A, r0, r1, ps, x, z, y);
  else if (tot < 48 * 32) WarpRows<T, 4, MULT, ROW>(A, r0, r1, ps, x, z, y);
  else WarpRows<T, 8, MULT, ROW>(A, r0, r1, ps, x, z, y);
}

template <typename T, bool ROW>
__global__ void BoundaryResidualKernel(const Spm<T> A, const double *__restrict__ x, const double *z, double *y)
{
  const long long r0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32 * 32;

  if (r0 < A.n) WarpRowsAdaptive<T, false, ROW>(A, (int)r0, r0 + 32 < A.n ? (int)r0 + 32 : A.n, 0, x, z, y); /* warp-uniform */
}

template <typename T, bool ROW>
__global__ void __launch_bounds__(kMaxPatch) MultKernel(const Spm<T> A, const double *__restrict__ x, double *__restrict__ y)
{
  const int s = A.patch_ptr[blockIdx.x], e = A.patch_ptr[blockIdx.x + 1];

  for (int r0 = s + 32 * (threadIdx.x / 32); r0 < e; r0 += blockDim.x) WarpRowsAdaptive<T, true, ROW>(A, r0, r0 + 32 < e ? r0 + 32 : e, s, x, NULL, y);
}

constexpr int kThreads = 256;

template <typename T, bool ROW>
static cudaError_t BoundaryResidual(const PatchworkSPMDesc *d, const double *x, const double *z, double *y, cudaStream_t stream)
{
  BoundaryResidualKernel<T, ROW><<<(unsigned)(((long long)d->n + kThreads - 1) / kThreads), kThreads, 0, stream>>>(MakeSpm<T>(d), x, z, y);
  return cudaGetLastError();
}

template <typename T, bool ROW>
static cudaError_t Mult(const PatchworkSPMDesc *d, const double *x, double *y, cudaStream_t stream)
{
  /* a warp per 32 rows of the patch, so that the warps of a block finish together; max_patch only
     sizes the block (the loop covers any patch) */
  const int nt = d->max_patch >= 1 && d->max_patch <= kMaxPatch ? (d->max_patch + 31) / 32 * 32 : kThreads;

  MultKernel<T, ROW><<<d->npatch, nt, 0, stream>>>(MakeSpm<T>(d), x, y);
  return cudaGetLastError();
}

/* the launcher for the value type and the presence of a row map */
#define PW_DISPATCH(F, d, ...) \
  ((d)->single ? ((d)->row ? F<float, true>(d, __VA_ARGS__) : F<float, false>(d, __VA_ARGS__)) : ((d)->row ? F<double, true>(d, __VA_ARGS__) : F<double, false>(d, __VA_ARGS__)))

} // namespace

extern "C" int PatchworkSPMPatchRelaxCUDA(const PatchworkSPMDesc *d, const double *b, double *x, double *r, int zero_guess, void *stream)
{
  if (!d || d->npatch < 0) return (int)cudaErrorInvalidValue;
  if (d->npatch == 0) return (int)cudaSuccess;
  if (d->max_patch < 1 || d->max_patch > kMaxPatch || d->inner < 1) return (int)cudaErrorInvalidValue;
  if (!d->patch_ptr || !d->ai_ptr || !d->diag || !b || !x || r == x) return (int)cudaErrorInvalidValue;
  return (int)PW_DISPATCH(PatchRelax, d, b, x, r, zero_guess, (cudaStream_t)stream);
}

extern "C" int PatchworkSPMBoundaryResidualCUDA(const PatchworkSPMDesc *d, const double *x, const double *z, double *y, void *stream)
{
  if (!d || d->n < 0) return (int)cudaErrorInvalidValue;
  if (d->n == 0) return (int)cudaSuccess;
  if (!d->ab_ptr || !x || !z || !y || y == x) return (int)cudaErrorInvalidValue;
  return (int)PW_DISPATCH(BoundaryResidual, d, x, z, y, (cudaStream_t)stream);
}

extern "C" int PatchworkSPMMultCUDA(const PatchworkSPMDesc *d, const double *x, double *y, void *stream)
{
  if (!d || d->npatch < 0) return (int)cudaErrorInvalidValue;
  if (d->npatch == 0) return (int)cudaSuccess;
  if (!d->patch_ptr || !d->ai_ptr || !d->ab_ptr || !d->diag || !x || !y || y == x) return (int)cudaErrorInvalidValue;
  return (int)PW_DISPATCH(Mult, d, x, y, (cudaStream_t)stream);
}
