/* SPAI(1) by the normal equations on the GPU (contract: include/patchwork/amg_kernel.h; CPU
   reference: src/core/amg_spai_ref.c; the whole SPAI(1), with the QR for refused rows:
   src/pc/patchamg/paspai.c).

   A warp per row i, G in shared memory. Each lane takes pairs (a, b), a <= b, of the rows J and
   forms G_ab by merging the two sorted rows (the reference buckets by column instead, which needs a
   column-sized marker per thread); lane a finds r_a = a(J_a, i) by bisection. The Cholesky factor
   L = R^T is right-looking: after pivot j the lanes update the trailing triangle together. The
   substitutions (the two of the bound on kappa, the two of the solve) go pivot by pivot, each step
   a warp sum. Two launches: rows of up to 32 entries (4 warps a block, 9 KB of shared memory each)
   and of 33..64 (a warp a block, 34 KB); longer rows are refused untried. */
#include <cmath>
#include <cuda_runtime.h>
#include <patchwork/amg_kernel.h>
#include "amg_device.h"

namespace {

template <int MAXJ>
struct RowShared {
  double G[MAXJ * MAXJ]; /* G_ab at [a * MAXJ + b], then L (lower) */
  double r[MAXJ];        /* the right-hand side, then y, then m */
  double v[MAXJ];        /* x, then z of the bound */
  int    start[MAXJ], len[MAXJ];
};

__device__ __forceinline__ double WarpSum(double s)
{
  for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
  return s;
}

__device__ __forceinline__ double WarpMax(double s)
{
  for (int o = 16; o > 0; o /= 2) s = fmax(s, __shfl_xor_sync(0xffffffffu, s, o));
  return s;
}

/* sum of the products of the entries two sorted rows share */
__device__ double SparseDot(const int *__restrict__ col, const double *__restrict__ val, int x, int xe, int y, int ye)
{
  double s = 0;

  while (x < xe && y < ye) {
    const int cx = col[x], cy = col[y];

    if (cx == cy) s += val[x++] * val[y++];
    else if (cx < cy) x++;
    else y++;
  }
  return s;
}

/* rows with lo < nJ <= MAXJ; the first launch (lo = -1) also refuses the rows longer than
   PATCHWORK_SPAI_MAX_ROW */
template <int MAXJ, int WARPS>
__global__ void __launch_bounds__(32 * WARPS) NormalKernel(int n, int lo, const int *__restrict__ ptr, const int *__restrict__ col, const double *__restrict__ val, double *__restrict__ mval, int *__restrict__ flag, double *__restrict__ kappa)
{
  __shared__ RowShared<MAXJ> shared[WARPS];
  RowShared<MAXJ>           &S    = shared[threadIdx.x / 32];
  const int                  lane = threadIdx.x % 32;

  for (long long i = (long long)blockIdx.x * WARPS + threadIdx.x / 32; i < n; i += (long long)gridDim.x * WARPS) {
    const int p0 = ptr[i], nJ = ptr[i + 1] - p0;
    double    gnorm = 0, rinf = 0, r1 = 0, bound;
    bool      ok = true;

    if (nJ > PATCHWORK_SPAI_MAX_ROW || nJ == 0) { /* the warp's row, uniform: one lane answers */
      if (lo < 0 && lane == 0) {
        flag[i] = 1;
        if (kappa) kappa[i] = nJ ? -1.0 : (double)INFINITY;
      }
      continue;
    }
    if (nJ <= lo || nJ > MAXJ) continue;
    for (int a = lane; a < nJ; a += 32) {
      const int j = col[p0 + a], s = ptr[j], e = ptr[j + 1], l = PatchworkCSRFind(col, s, e, (int)i);

      S.start[a] = s;
      S.len[a]   = e - s;
      S.r[a]     = l >= 0 ? val[l] : 0.0;
    }
    __syncwarp();
    for (int t = lane; t < nJ * nJ; t += 32) {
      const int a = t / nJ, b = t - a * nJ;
      double    g = 0;

      if (b < a) continue;
      if (a == b)
        for (int e = S.start[a]; e < S.start[a] + S.len[a]; e++) g += val[e] * val[e];
      else g = SparseDot(col, val, S.start[a], S.start[a] + S.len[a], S.start[b], S.start[b] + S.len[b]);
      S.G[a * MAXJ + b] = g;
      S.G[b * MAXJ + a] = g;
    }
    __syncwarp();
    for (int d = lane; d < nJ; d += 32) { /* ||G||_1: the largest column sum */
      double s = 0;

      for (int c = 0; c < nJ; c++) s += fabs(S.G[c * MAXJ + d]);
      gnorm = fmax(gnorm, s);
    }
    gnorm = WarpMax(gnorm);
    for (int j = 0; j < nJ && ok; j++) { /* G = L L^T in the lower triangle */
      const int m = nJ - j - 1;
      double    d;

      __syncwarp();
      d = S.G[j * MAXJ + j];
      if (!(d > 0) || !isfinite(d)) {
        ok = false; /* the same value in every lane: the warp leaves together */
        break;
      }
      d = sqrt(d);
      __syncwarp();
      if (lane == 0) S.G[j * MAXJ + j] = d;
      for (int r = j + 1 + lane; r < nJ; r += 32) S.G[r * MAXJ + j] /= d;
      __syncwarp();
      for (int t = lane; t < m * m; t += 32) {
        const int rr = t / m, cc = t - rr * m;

        if (cc <= rr) S.G[(j + 1 + rr) * MAXJ + j + 1 + cc] -= S.G[(j + 1 + rr) * MAXJ + j] * S.G[(j + 1 + cc) * MAXJ + j];
      }
    }
    __syncwarp();
    if (!ok) {
      if (lane == 0) {
        flag[i] = 1;
        if (kappa) kappa[i] = (double)INFINITY;
      }
      continue;
    }
    /* M(R) x = 1, R = L^T: x_j = (1 + sum_{k>j} |L_kj| x_k) / L_jj, from the last */
    for (int j = nJ - 1; j >= 0; j--) {
      double s = 0;

      for (int k = j + 1 + lane; k < nJ; k += 32) s += fabs(S.G[k * MAXJ + j]) * S.v[k];
      s    = (1 + WarpSum(s)) / S.G[j * MAXJ + j];
      rinf = fmax(rinf, s);
      __syncwarp();
      if (lane == 0) S.v[j] = s;
      __syncwarp();
    }
    /* M(R)^T z = 1: z_j = (1 + sum_{k<j} |L_jk| z_k) / L_jj, from the first (z over x) */
    for (int j = 0; j < nJ; j++) {
      double s = 0;

      for (int k = lane; k < j; k += 32) s += fabs(S.G[j * MAXJ + k]) * S.v[k];
      s  = (1 + WarpSum(s)) / S.G[j * MAXJ + j];
      r1 = fmax(r1, s);
      __syncwarp();
      if (lane == 0) S.v[j] = s;
      __syncwarp();
    }
    bound = gnorm * r1 * rinf;
    if (!(bound <= PATCHWORK_SPAI_KAPPA_MAX)) {
      if (lane == 0) {
        flag[i] = 1;
        if (kappa) kappa[i] = bound;
      }
      continue;
    }
    for (int j = 0; j < nJ; j++) { /* L y = r */
      double s = 0;

      for (int k = lane; k < j; k += 32) s += S.G[j * MAXJ + k] * S.r[k];
      s = WarpSum(s);
      __syncwarp();
      if (lane == 0) S.r[j] = (S.r[j] - s) / S.G[j * MAXJ + j];
      __syncwarp();
    }
    for (int j = nJ - 1; j >= 0; j--) { /* L^T m = y */
      double s = 0;

      for (int k = j + 1 + lane; k < nJ; k += 32) s += S.G[k * MAXJ + j] * S.r[k];
      s = WarpSum(s);
      __syncwarp();
      if (lane == 0) S.r[j] = (S.r[j] - s) / S.G[j * MAXJ + j];
      __syncwarp();
    }
    for (int a = lane; a < nJ; a += 32) mval[p0 + a] = S.r[a];
    if (lane == 0) {
      flag[i] = 0;
      if (kappa) kappa[i] = bound;
    }
    __syncwarp(); /* the next row overwrites S */
  }
}

template <int MAXJ, int WARPS>
cudaError_t Launch(const PatchworkCSR *A, int lo, double *mval, int *flag, double *kappa, cudaStream_t s)
{
  const long long need   = ((long long)A->n + WARPS - 1) / WARPS;
  const long long cap    = (long long)Multiprocessors() * (WARPS == 1 ? 16 : 8);
  const unsigned  blocks = (unsigned)(need < cap ? need : cap);

  NormalKernel<MAXJ, WARPS><<<blocks, 32 * WARPS, 0, s>>>(A->n, lo, A->ptr, A->col, A->val, mval, flag, kappa);
  return cudaGetLastError();
}

} // namespace

extern "C" int PatchworkSPAI1NormalCUDA(const PatchworkCSR *A, double *mval, int *flag, double *kappa, void *stream)
{
  const cudaStream_t s = (cudaStream_t)stream;

  if (!A || A->n < 0) return 1;
  if (A->n == 0) return 0;
  if (!A->ptr || !A->col || !A->val || !mval || !flag) return 1;
  PW_TRY((Launch<32, 4>(A, -1, mval, flag, kappa, s)));
  PW_TRY((Launch<64, 1>(A, 32, mval, flag, kappa, s)));
  return 0;
}
