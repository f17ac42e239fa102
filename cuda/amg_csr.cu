/* The device CSR matrices of PCPATCHAMG's coarse levels: y = z + M x and the diagonal, and the
   symmetric part (M + M^T)/2 of SPAI(1)'s M (contract:
   include/patchwork/amg_kernel.h; CPU reference: src/core/amg_csr_ref.c; the transpose is in
   cuda/amg_galerkin.cu, beside the one the Galerkin product uses).

   Mult is the vector CSR SpMV: a group of g lanes of a warp per row (g a power of two, 2..32,
   from the mean row length, so that prolongators of ~4 entries a row and coarse operators of
   ~30-60 both keep their lanes busy), the group's partial sums added by shuffles. MultSingle reads float values (a level's transfers in
single precision), products and sums in double. The order of a
   row's sum depends only on g, so repeated products are bitwise equal. Diagonal: a thread a row,
   its entries in storage order, as the reference adds them. */
#include <cuda_runtime.h>
#include <string.h>
#include <cub/cub.cuh>
#include <patchwork/amg_kernel.h>
#include "amg_device.h"

namespace {

template <int G, typename V>
__global__ void __launch_bounds__(kBlock) MultKernel(int n, const int *__restrict__ ptr, const int *__restrict__ col, const V *__restrict__ val, const double *__restrict__ x, const double *z, double *y)
{
  const long long t    = Gid();
  const long long i    = t / G;
  const int       lane = (int)(t % G);
  double          sum  = 0;

  if (i < n)
    for (int e = ptr[i] + lane; e < ptr[i + 1]; e += G) sum += (double)val[e] * x[col[e]];
  /* every lane of the warp takes part in the shuffles: n * G is rounded up to whole warps */
  for (int o = G / 2; o > 0; o /= 2) sum += __shfl_down_sync(0xffffffffu, sum, o, G);
  if (i < n && lane == 0) y[i] = z ? z[i] + sum : sum;
}

__global__ void __launch_bounds__(kBlock) DiagonalKernel(int n, const int *__restrict__ ptr, const int *__restrict__ col, const double *__restrict__ val, double *__restrict__ d)
{
  const long long i = Gid();
  double          s = 0;

  if (i >= n) return;
  for (int e = ptr[i]; e < ptr[i + 1]; e++)
    if (col[e] == i) s += val[e];
  d[i] = s;
}

/* a thread a row: *missing = 1 when an entry has no mirror */
__global__ void __launch_bounds__(kBlock) MirrorKernel(int n, const int *__restrict__ ptr, const int *__restrict__ col, int *missing)
{
  const long long i = Gid();

  if (i >= n) return;
  for (int e = ptr[i]; e < ptr[i + 1]; e++)
    if (col[e] < 0 || col[e] >= n || PatchworkCSRFind(col, ptr[col[e]], ptr[col[e] + 1], (int)i) < 0) *missing = 1;
}

/* a thread a row, each pair from the row of its upper entry: no two threads write one entry */
__global__ void __launch_bounds__(kBlock) SymmetrizeKernel(int n, const int *__restrict__ ptr, const int *__restrict__ col, double *val)
{
  const long long i = Gid();

  if (i >= n) return;
  for (int e = ptr[i]; e < ptr[i + 1]; e++)
    if (col[e] > i) {
      const int    f = PatchworkCSRFind(col, ptr[col[e]], ptr[col[e] + 1], (int)i);
      const double v = (val[e] + val[f]) * 0.5;

      val[e] = val[f] = v;
    }
}

template <int G, typename V>
cudaError_t LaunchMult(const PatchworkCSRMatrix *M, const V *val, const double *x, const double *z, double *y, cudaStream_t s)
{
  const long long threads = ((long long)M->nrow * G + 31) / 32 * 32;

  MultKernel<G, V><<<Blocks(threads), kBlock, 0, s>>>(M->nrow, M->ptr, M->col, val, x, z, y);
  return cudaGetLastError();
}

/* y = z + M x with the values val (M's own, or their float copy) */
template <typename V>
int Mult(const PatchworkCSRMatrix *M, const V *val, const double *x, const double *z, double *y, cudaStream_t s)
{
  const double mean = M && M->nrow > 0 ? (double)M->nnz / M->nrow : 0;
  int          g    = 2;

  if (!M || M->nrow < 0 || M->ncol < 0 || M->nnz < 0) return 1;
  if (M->nrow == 0) return 0;
  if (!M->ptr || !y || (M->nnz > 0 && (!M->col || !val || !x))) return 1;
  while (g < 32 && 2 * g < mean) g *= 2;
  switch (g) {
  case 2: return (int)LaunchMult<2>(M, val, x, z, y, s);
  case 4: return (int)LaunchMult<4>(M, val, x, z, y, s);
  case 8: return (int)LaunchMult<8>(M, val, x, z, y, s);
  case 16: return (int)LaunchMult<16>(M, val, x, z, y, s);
  default: return (int)LaunchMult<32>(M, val, x, z, y, s);
  }
}


/* JoinColumns: row i's length, then its entries (A's, then B's shifted) */
__global__ void __launch_bounds__(kBlock) JoinCountKernel(PatchworkCSR A, PatchworkCSR B, int nrow, int *cnt)
{
  const long long i = Gid();

  if (i < nrow) cnt[i] = i < A.n ? A.ptr[i + 1] - A.ptr[i] + B.ptr[i + 1] - B.ptr[i] : 0;
}

__global__ void __launch_bounds__(kBlock) JoinFillKernel(PatchworkCSR A, PatchworkCSR B, int shift, const int *__restrict__ ptr, int *__restrict__ col, double *__restrict__ val)
{
  const long long i = Gid();

  if (i >= A.n) return;
  int e = ptr[i];
  for (int k = A.ptr[i]; k < A.ptr[i + 1]; k++, e++) {
    col[e] = A.col[k];
    val[e] = A.val[k];
  }
  for (int k = B.ptr[i]; k < B.ptr[i + 1]; k++, e++) {
    col[e] = B.col[k] + shift;
    val[e] = B.val[k];
  }
}

/* Add: row i's length, then its entries (PatchworkCSRAddRow, shared with the reference) */
__global__ void __launch_bounds__(kBlock) AddCountKernel(PatchworkCSR A, PatchworkCSR B, int *cnt)
{
  const long long i = Gid();

  if (i < A.n) cnt[i] = PatchworkCSRAddRow(&A, &B, (int)i, NULL, NULL);
}

__global__ void __launch_bounds__(kBlock) AddFillKernel(PatchworkCSR A, PatchworkCSR B, const int *__restrict__ ptr, int *__restrict__ col, double *__restrict__ val)
{
  const long long i = Gid();

  if (i < A.n) PatchworkCSRAddRow(&A, &B, (int)i, col + ptr[i], val + ptr[i]);
}

/* SplitColumns: the entries of row i below cut, then the row's entries into Lo or Hi */
__global__ void __launch_bounds__(kBlock) SplitCountKernel(int n, const int *__restrict__ ptr, const int *__restrict__ col, int cut, int *lo, int *hi)
{
  const long long i = Gid();

  if (i >= n) return;
  int c = 0;
  for (int e = ptr[i]; e < ptr[i + 1]; e++) c += col[e] < cut;
  lo[i] = c;
  hi[i] = ptr[i + 1] - ptr[i] - c;
}

__global__ void __launch_bounds__(kBlock) SplitFillKernel(PatchworkCSRMatrix M, int cut, PatchworkCSRMatrix Lo, PatchworkCSRMatrix Hi)
{
  const long long i = Gid();

  if (i >= M.nrow) return;
  int l = Lo.ptr[i], h = Hi.ptr[i];
  for (int e = M.ptr[i]; e < M.ptr[i + 1]; e++) {
    if (M.col[e] < cut) {
      Lo.col[l]   = M.col[e];
      Lo.val[l++] = M.val[e];
    } else {
      Hi.col[h]   = M.col[e] - cut;
      Hi.val[h++] = M.val[e];
    }
  }
}

__global__ void __launch_bounds__(kBlock) MapKernel(int n, const int *__restrict__ map, int nmap, int *idx, int *bad)
{
  const long long k = Gid();

  if (k >= n) return;
  const int j = idx[k];
  if (j < 0 || j >= nmap) atomicOr(bad, 1);
  else idx[k] = map[j];
}

/* cudaMalloc of at least one element */
template <typename T>
cudaError_t MallocResult(T **ptr, size_t count)
{
  return cudaMalloc((void **)ptr, (count ? count : 1) * sizeof(T));
}

/* ptr[0..n] = exclusive scan of cnt[0..n) (cnt[n] must be 0); *nnz = ptr[n] */
cudaError_t Scan(int *cnt, int *ptr, int n, int *nnz, Scratch &mem, cudaStream_t s)
{
  void       *tmp = nullptr;
  size_t      bytes = 0;
  cudaError_t e;

  if ((e = cub::DeviceScan::ExclusiveSum(nullptr, bytes, cnt, ptr, n + 1, s)) != cudaSuccess) return e;
  if ((e = mem.Get((char **)&tmp, bytes)) != cudaSuccess) return e;
  if ((e = cub::DeviceScan::ExclusiveSum(tmp, bytes, cnt, ptr, n + 1, s)) != cudaSuccess) return e;
  return Fetch(nnz, ptr + n, sizeof(int), s);
}

/* M's arrays for nrow rows (ptr, already there when given) and nnz entries */
cudaError_t AllocEntries(PatchworkCSRMatrix *M)
{
  cudaError_t e = MallocResult(&M->col, (size_t)M->nnz);

  if (e == cudaSuccess) e = MallocResult(&M->val, (size_t)M->nnz);
  return e;
}

} // namespace

extern "C" int PatchworkCSRMultCUDA(const PatchworkCSRMatrix *M, const double *x, const double *z, double *y, void *stream)
{
  return Mult(M, M ? M->val : (const double *)nullptr, x, z, y, (cudaStream_t)stream);
}

extern "C" int PatchworkCSRMultSingleCUDA(const PatchworkCSRMatrix *M, const float *val, const double *x, const double *z, double *y, void *stream)
{
  return Mult(M, val, x, z, y, (cudaStream_t)stream);
}

extern "C" int PatchworkCSRDiagonalCUDA(const PatchworkCSRMatrix *M, double *d, void *stream)
{
  if (!M || M->nrow < 0 || M->ncol < 0 || M->nnz < 0 || M->nrow != M->ncol) return 1;
  if (M->nrow == 0) return 0;
  if (!M->ptr || !d || (M->nnz > 0 && (!M->col || !M->val))) return 1;
  DiagonalKernel<<<Blocks(M->nrow), kBlock, 0, (cudaStream_t)stream>>>(M->nrow, M->ptr, M->col, M->val, d);
  return (int)cudaGetLastError();
}

extern "C" int PatchworkCSRSymmetrizeCUDA(PatchworkCSRMatrix *M, void *stream)
{
  const cudaStream_t s = (cudaStream_t)stream;
  Scratch            mem(s);
  int               *dmissing, missing = 0;

  if (!M || M->nrow < 0 || M->ncol < 0 || M->nnz < 0 || M->nrow != M->ncol) return 1;
  if (M->nrow == 0) return 0;
  if (!M->ptr || (M->nnz > 0 && (!M->col || !M->val))) return 1;
  PW_TRY(mem.Get(&dmissing, 1));
  PW_TRY(cudaMemsetAsync(dmissing, 0, sizeof(int), s));
  MirrorKernel<<<Blocks(M->nrow), kBlock, 0, s>>>(M->nrow, M->ptr, M->col, dmissing);
  PW_TRY(cudaGetLastError());
  PW_TRY(Fetch(&missing, dmissing, sizeof(int), s));
  if (missing) return 3;
  SymmetrizeKernel<<<Blocks(M->nrow), kBlock, 0, s>>>(M->nrow, M->ptr, M->col, M->val);
  return (int)cudaGetLastError();
}

extern "C" int PatchworkCSRJoinColumnsCUDA(const PatchworkCSR *A, const PatchworkCSR *B, int shift, int nrow, int ncol, PatchworkCSRMatrix *M, void *stream)
{
  const cudaStream_t s = (cudaStream_t)stream;
  Scratch            mem(s);
  int               *cnt;
  int                err;

  if (M) memset(M, 0, sizeof(*M));
  if (!A || !B || !M || A->n < 0 || B->n != A->n || nrow < A->n || shift < A->n || ncol < shift) return 1;
  if (A->n > 0 && (!A->ptr || !B->ptr)) return 1;
  M->nrow = nrow;
  M->ncol = ncol;
  if ((err = (int)MallocResult(&M->ptr, (size_t)nrow + 1)) || (err = (int)mem.Get(&cnt, (size_t)nrow + 1)) || (err = (int)cudaMemsetAsync(cnt + nrow, 0, sizeof(int), s))) goto fail;
  if (nrow > 0) JoinCountKernel<<<Blocks(nrow), kBlock, 0, s>>>(*A, *B, nrow, cnt);
  if ((err = (int)cudaGetLastError()) || (err = (int)Scan(cnt, M->ptr, nrow, &M->nnz, mem, s)) || (err = (int)AllocEntries(M))) goto fail;
  if (A->n > 0) JoinFillKernel<<<Blocks(A->n), kBlock, 0, s>>>(*A, *B, shift, M->ptr, M->col, M->val);
  if ((err = (int)cudaGetLastError()) || (err = (int)cudaStreamSynchronize(s))) goto fail;
  return 0;
fail:
  cudaStreamSynchronize(s);
  PatchworkCSRMatrixFreeCUDA(M);
  return err;
}

extern "C" int PatchworkCSRAddCUDA(const PatchworkCSR *A, const PatchworkCSR *B, int ncol, PatchworkCSRMatrix *M, void *stream)
{
  const cudaStream_t s = (cudaStream_t)stream;
  Scratch            mem(s);
  int               *cnt, n;
  int                err;

  if (M) memset(M, 0, sizeof(*M));
  if (!A || !B || !M || A->n < 0 || B->n != A->n || ncol < 0) return 1;
  if (A->n > 0 && (!A->ptr || !B->ptr)) return 1;
  n       = A->n;
  M->nrow = n;
  M->ncol = ncol;
  if ((err = (int)MallocResult(&M->ptr, (size_t)n + 1)) || (err = (int)mem.Get(&cnt, (size_t)n + 1)) || (err = (int)cudaMemsetAsync(cnt + n, 0, sizeof(int), s))) goto fail;
  if (n > 0) AddCountKernel<<<Blocks(n), kBlock, 0, s>>>(*A, *B, cnt);
  if ((err = (int)cudaGetLastError()) || (err = (int)Scan(cnt, M->ptr, n, &M->nnz, mem, s)) || (err = (int)AllocEntries(M))) goto fail;
  if (n > 0) AddFillKernel<<<Blocks(n), kBlock, 0, s>>>(*A, *B, M->ptr, M->col, M->val);
  if ((err = (int)cudaGetLastError()) || (err = (int)cudaStreamSynchronize(s))) goto fail;
  return 0;
fail:
  cudaStreamSynchronize(s);
  PatchworkCSRMatrixFreeCUDA(M);
  return err;
}

extern "C" int PatchworkCSRSplitColumnsCUDA(const PatchworkCSRMatrix *M, int cut, PatchworkCSRMatrix *Lo, PatchworkCSRMatrix *Hi, void *stream)
{
  const cudaStream_t s = (cudaStream_t)stream;
  Scratch            mem(s);
  int               *clo, *chi, n;
  int                err;

  if (Lo) memset(Lo, 0, sizeof(*Lo));
  if (Hi) memset(Hi, 0, sizeof(*Hi));
  if (!M || !Lo || !Hi || M->nrow < 0 || M->ncol < 0 || M->nnz < 0 || cut < 0 || cut > M->ncol) return 1;
  if ((M->nrow > 0 && !M->ptr) || (M->nnz > 0 && (!M->col || !M->val))) return 1;
  n        = M->nrow;
  Lo->nrow = Hi->nrow = n;
  Lo->ncol = cut;
  Hi->ncol = M->ncol - cut;
  if ((err = (int)MallocResult(&Lo->ptr, (size_t)n + 1)) || (err = (int)MallocResult(&Hi->ptr, (size_t)n + 1)) || (err = (int)mem.Get(&clo, (size_t)n + 1)) || (err = (int)mem.Get(&chi, (size_t)n + 1))) goto fail;
  if ((err = (int)cudaMemsetAsync(clo + n, 0, sizeof(int), s)) || (err = (int)cudaMemsetAsync(chi + n, 0, sizeof(int), s))) goto fail;
  if (n > 0) SplitCountKernel<<<Blocks(n), kBlock, 0, s>>>(n, M->ptr, M->col, cut, clo, chi);
  if ((err = (int)cudaGetLastError()) || (err = (int)Scan(clo, Lo->ptr, n, &Lo->nnz, mem, s)) || (err = (int)Scan(chi, Hi->ptr, n, &Hi->nnz, mem, s))) goto fail;
  if ((err = (int)AllocEntries(Lo)) || (err = (int)AllocEntries(Hi))) goto fail;
  if (n > 0) SplitFillKernel<<<Blocks(n), kBlock, 0, s>>>(*M, cut, *Lo, *Hi);
  if ((err = (int)cudaGetLastError()) || (err = (int)cudaStreamSynchronize(s))) goto fail;
  return 0;
fail:
  cudaStreamSynchronize(s);
  PatchworkCSRMatrixFreeCUDA(Lo);
  PatchworkCSRMatrixFreeCUDA(Hi);
  return err;
}

extern "C" int PatchworkIntMapCUDA(int n, const int *map, int nmap, int *idx, void *stream)
{
  const cudaStream_t s = (cudaStream_t)stream;
  Scratch            mem(s);
  int               *dbad, bad = 0;

  if (n < 0 || nmap < 0 || (n > 0 && (!map || !idx))) return 1;
  if (n == 0) return 0;
  PW_TRY(mem.Get(&dbad, 1));
  PW_TRY(cudaMemsetAsync(dbad, 0, sizeof(int), s));
  MapKernel<<<Blocks(n), kBlock, 0, s>>>(n, map, nmap, idx, dbad);
  PW_TRY(cudaGetLastError());
  PW_TRY(Fetch(&bad, dbad, sizeof(int), s));
  return bad ? 1 : 0;
}
