/* The smoothed-aggregation prolongator of one rank's level matrix on the GPU (contract:
   include/patchwork/amg_kernel.h; CPU reference: src/core/amg_prolong_ref.c).

   One thread a row, as the reference: the tentative values (the aggregate norms by atomics: exact
   for constants, where they count; else the order of the sums, so the last bit, may vary), a count kernel (the distinct aggregates of a row, by looking
   back over the row: rows of fine levels are short), a cub scan, and a fill kernel that writes the
   distinct aggregates, sorts them in place and sums a_ik t_k per aggregate in storage order,
   without fused multiply-adds, as the reference does. Quadratic in the row length: coarse levels
   with rows of thousands of entries are slow but still right. Arguments are checked on the device
   (a column or an aggregate out of range sets a flag before it is used). */
#include <cuda_runtime.h>
#include <string.h>
#include <algorithm>
#include <cub/cub.cuh>
#include <patchwork/amg_kernel.h>

namespace {

constexpr int kThreads = 256;

unsigned Blocks(long long work)
{
  return (unsigned)std::max<long long>(1, std::min<long long>((work + kThreads - 1) / kThreads, 1 << 20));
}

#define PW_ROWS(i, n) for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (long long)gridDim.x * blockDim.x)

/* norm2[agg(i)] += z_i^2, after checking agg(i) */
__global__ void NormKernel(int n, const int *__restrict__ agg, int naggs, const double *__restrict__ z, double *__restrict__ norm2, int *bad)
{
  PW_ROWS(i, n)
  {
    const int a = agg[i];

    if (a < 0 || a >= naggs) atomicOr(bad, 1);
    else atomicAdd(norm2 + a, z ? z[i] * z[i] : 1.0);
  }
}

/* bad = 1 where a row's aggregate or one of its columns is out of range */
__global__ void CheckKernel(PatchworkCSR A, const int *__restrict__ agg, int naggs, int *bad)
{
  PW_ROWS(i, A.n)
  {
    const int a = agg[i];
    int       b = a < 0 || a >= naggs || A.ptr[i + 1] < A.ptr[i];

    for (int k = A.ptr[i]; !b && k < A.ptr[i + 1]; k++) b = A.col[k] < 0 || A.col[k] >= A.n;
    if (b) atomicOr(bad, 1);
  }
}

__global__ void TentativeKernel(int n, const int *__restrict__ agg, const double *__restrict__ z, const double *__restrict__ norm2, double *__restrict__ t)
{
  PW_ROWS(i, n)
  {
    const double q = norm2[agg[i]];

    t[i] = q > 0 ? (z ? z[i] : 1.0) / sqrt(q) : 0.0;
  }
}

__global__ void AggregateNormKernel(int naggs, const double *__restrict__ norm2, double *__restrict__ zc)
{
  PW_ROWS(a, naggs) zc[a] = sqrt(norm2[a]);
}

/* Is a the aggregate of row i or of a column stored before position k of the row? */
__device__ __forceinline__ bool SeenBefore(const PatchworkCSR &A, const int *__restrict__ agg, int ai, int start, int k, int a)
{
  if (a == ai) return true;
  for (int q = start; q < k; q++)
    if (__ldg(agg + A.col[q]) == a) return true;
  return false;
}

__global__ void CountKernel(PatchworkCSR A, const int *__restrict__ agg, int *__restrict__ cnt)
{
  PW_ROWS(i, A.n)
  {
    const int s = A.ptr[i], e = A.ptr[i + 1], ai = agg[i];
    int       m = 1;

    for (int k = s; k < e; k++) m += !SeenBefore(A, agg, ai, s, k, __ldg(agg + A.col[k]));
    cnt[i] = m;
  }
}

__global__ void FillKernel(PatchworkCSR A, const int *__restrict__ agg, const double *__restrict__ t, const double *__restrict__ sc, const int *__restrict__ ptr, int *__restrict__ col, double *__restrict__ val)
{
  PW_ROWS(i, A.n)
  {
    const int s = A.ptr[i], e = A.ptr[i + 1], ai = agg[i];
    int      *c = col + ptr[i], m = 1;

    c[0] = ai;
    for (int k = s; k < e; k++) {
      const int a = __ldg(agg + A.col[k]);

      if (!SeenBefore(A, agg, ai, s, k, a)) c[m++] = a;
    }
    for (int p = 1; p < m; p++) { /* insertion sort of the row's columns */
      const int v = c[p];
      int       q = p - 1;

      for (; q >= 0 && c[q] > v; q--) c[q + 1] = c[q];
      c[q + 1] = v;
    }
    for (int p = 0; p < m; p++) {
      const int J   = c[p];
      double    sum = 0;

      for (int k = s; k < e; k++)
        if (__ldg(agg + A.col[k]) == J) sum = __dadd_rn(sum, __dmul_rn(A.val[k], t[A.col[k]]));
      val[ptr[i] + p] = __dadd_rn(__dmul_rn(-sc[i], sum), J == ai ? t[i] : 0.0);
    }
  }
}

cudaError_t Malloc(void **p, size_t bytes)
{
  return cudaMalloc(p, bytes ? bytes : 1);
}

/* t and zc from z: the aggregate norms, after checking every aggregate */
cudaError_t Tentative(int n, const int *agg, int naggs, const double *z, double *t, double *zc, cudaStream_t stream)
{
  int        *dbad = NULL, bad = 0;
  double     *norm2 = NULL;
  cudaError_t err;

#define PW_TRY(call) \
  do { \
    if ((err = (call)) != cudaSuccess) goto fail; \
  } while (0)
  PW_TRY(Malloc((void **)&norm2, sizeof(double) * (size_t)naggs));
  PW_TRY(Malloc((void **)&dbad, sizeof(int)));
  PW_TRY(cudaMemsetAsync(dbad, 0, sizeof(int), stream));
  PW_TRY(cudaMemsetAsync(norm2, 0, sizeof(double) * (size_t)naggs, stream));
  if (n > 0) {
    NormKernel<<<Blocks(n), kThreads, 0, stream>>>(n, agg, naggs, z, norm2, dbad);
    PW_TRY(cudaGetLastError());
    PW_TRY(cudaMemcpyAsync(&bad, dbad, sizeof(int), cudaMemcpyDeviceToHost, stream));
    PW_TRY(cudaStreamSynchronize(stream));
    if (bad) {
      err = (cudaError_t)1; /* the bad-argument code of the contract */
      goto fail;
    }
    TentativeKernel<<<Blocks(n), kThreads, 0, stream>>>(n, agg, z, norm2, t);
    PW_TRY(cudaGetLastError());
  }
  if (zc && naggs > 0) {
    AggregateNormKernel<<<Blocks(naggs), kThreads, 0, stream>>>(naggs, norm2, zc);
    PW_TRY(cudaGetLastError());
  }
  PW_TRY(cudaStreamSynchronize(stream)); /* norm2 is freed below */
fail:
  cudaStreamSynchronize(stream);
  if (norm2) cudaFree(norm2);
  if (dbad) cudaFree(dbad);
  return err;
}

/* P from the tentative values t, after checking A's columns and the aggregates */
cudaError_t Smooth(const PatchworkCSR *A, const int *agg, int naggs, const double *t, const double *s, PatchworkCSRMatrix *P, cudaStream_t stream)
{
  const int    n  = A->n;
  const size_t n1 = (size_t)n + 1;
  int         *ptr = NULL, *col = NULL, *cnt = NULL, *dbad = NULL, bad = 0, nnz = 0;
  double      *val = NULL;
  void        *tmp = NULL;
  size_t       tmp_bytes = 0;
  cudaError_t  err;

  PW_TRY(Malloc((void **)&ptr, sizeof(int) * n1));
  PW_TRY(Malloc((void **)&cnt, sizeof(int) * n1));
  PW_TRY(Malloc((void **)&dbad, sizeof(int)));
  PW_TRY(cub::DeviceScan::ExclusiveSum(NULL, tmp_bytes, cnt, ptr, (int)n1, stream));
  PW_TRY(Malloc(&tmp, tmp_bytes));
  PW_TRY(cudaMemsetAsync(dbad, 0, sizeof(int), stream));
  PW_TRY(cudaMemsetAsync(cnt + n, 0, sizeof(int), stream));
  if (n > 0) {
    CheckKernel<<<Blocks(n), kThreads, 0, stream>>>(*A, agg, naggs, dbad);
    PW_TRY(cudaGetLastError());
    PW_TRY(cudaMemcpyAsync(&bad, dbad, sizeof(int), cudaMemcpyDeviceToHost, stream));
    PW_TRY(cudaStreamSynchronize(stream));
    if (bad) {
      err = (cudaError_t)1;
      goto fail;
    }
    CountKernel<<<Blocks(n), kThreads, 0, stream>>>(*A, agg, cnt);
    PW_TRY(cudaGetLastError());
  }
  PW_TRY(cub::DeviceScan::ExclusiveSum(tmp, tmp_bytes, cnt, ptr, (int)n1, stream));
  PW_TRY(cudaMemcpyAsync(&nnz, ptr + n, sizeof(int), cudaMemcpyDeviceToHost, stream));
  PW_TRY(cudaStreamSynchronize(stream));
  PW_TRY(Malloc((void **)&col, sizeof(int) * (size_t)nnz));
  PW_TRY(Malloc((void **)&val, sizeof(double) * (size_t)nnz));
  if (n > 0) {
    FillKernel<<<Blocks(n), kThreads, 0, stream>>>(*A, agg, t, s, ptr, col, val);
    PW_TRY(cudaGetLastError());
  }
  PW_TRY(cudaStreamSynchronize(stream)); /* the work arrays are freed below */
#undef PW_TRY
  cudaFree(cnt);
  cudaFree(dbad);
  cudaFree(tmp);
  P->nrow = n;
  P->ncol = naggs;
  P->nnz  = nnz;
  P->ptr  = ptr;
  P->col  = col;
  P->val  = val;
  return cudaSuccess;

fail:
  cudaStreamSynchronize(stream);
  for (void *p : {(void *)ptr, (void *)col, (void *)cnt, (void *)val, (void *)dbad, tmp})
    if (p) cudaFree(p);
  return err;
}

} // namespace

extern "C" int PatchworkSATentativeCUDA(int n, const int *agg, int naggs, const double *z, double *t, double *zc, void *stream)
{
  if (n < 0 || naggs < 0 || (n > 0 && (!agg || !t || naggs == 0))) return 1;
  return (int)Tentative(n, agg, naggs, z, t, zc, (cudaStream_t)stream);
}

extern "C" int PatchworkSASmoothCUDA(const PatchworkCSR *A, const int *agg, int naggs, const double *t, const double *s, PatchworkCSRMatrix *P, void *stream)
{
  if (P) memset(P, 0, sizeof(*P)); /* empty on every failure */
  if (!A || !P || A->n < 0 || A->n == 0x7fffffff || naggs < 0 || (A->n > 0 && (!A->ptr || !A->col || !A->val || !agg || !s || !t || naggs == 0))) return 1;
  return (int)Smooth(A, agg, naggs, t, s, P, (cudaStream_t)stream);
}

extern "C" int PatchworkSAProlongCUDA(const PatchworkCSR *A, const int *agg, int naggs, const double *z, const double *s, PatchworkCSRMatrix *P, double *zc, void *stream)
{
  double *t = NULL;
  int     err;

  if (P) memset(P, 0, sizeof(*P));
  if (!A || !P || A->n < 0 || A->n == 0x7fffffff || naggs < 0 || (A->n > 0 && (!A->ptr || !A->col || !A->val || !agg || !s || naggs == 0))) return 1;
  if ((err = (int)Malloc((void **)&t, sizeof(double) * (size_t)A->n))) return err;
  err = PatchworkSATentativeCUDA(A->n, agg, naggs, z, t, zc, stream);
  if (!err) err = PatchworkSASmoothCUDA(A, agg, naggs, t, s, P, stream);
  cudaStreamSynchronize((cudaStream_t)stream);
  cudaFree(t);
  return err;
}

extern "C" void PatchworkCSRMatrixFreeCUDA(PatchworkCSRMatrix *M)
{
  if (!M) return;
  for (void *p : {(void *)M->ptr, (void *)M->col, (void *)M->val})
    if (p) cudaFree(p);
  memset(M, 0, sizeof(*M));
}
