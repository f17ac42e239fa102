/* The templated apply kernels of the operator on general quadrilateral and hexahedral cells (their design:
   cuda/plex_apply.cu), shared by the translation units that instantiate them, which compile in parallel:
   cuda/plex_apply3.cu (3D) and cuda/plex_apply2.cu (2D). cuda/plex_apply.cu holds the generic kernels
   and the entry points. */
#ifndef PATCHWORK_PLEX_TEMPLATED_H
#define PATCHWORK_PLEX_TEMPLATED_H

#include <cuda_runtime.h>
#include <cuda_pipeline.h>
#include <stddef.h>
#include <stdint.h>
#include <patchwork/plex_kernel.h>
#include <patchwork/hanging_kernel.h>

namespace patchwork_plex {
/* cuda/plex_apply.cu: the generic apply over all cells (list NULL) or the nlist entries of list (cells, or
   in the diagonal mode cell*nd + slot) */
cudaError_t ApplyGenericLaunch(const PatchworkPlexDesc *d, const double *x, double *y, const long long *list, long long nlist, int diag, cudaStream_t s);
/* cuda/plex_apply3.cu, cuda/plex_apply2.cu: the templated apply of a checked descriptor of that dimension */
cudaError_t ApplyTemplated3(const PatchworkPlexDesc *d, const double *x, double *y, cudaStream_t s);
cudaError_t ApplyTemplated2(const PatchworkPlexDesc *d, const double *x, double *y, cudaStream_t s);
} // namespace patchwork_plex

namespace {

using patchwork_plex::ApplyGenericLaunch;

/* B and Bd = Dq B (collocated: Bd = Dq, B unused) into row-major nq x n arrays */
static void Fill1D(int n, int nq, int collocated, const double *interp, const double *deriv, double *B, double *Bd)
{
  for (int q = 0; q < nq; q++)
    for (int i = 0; i < n; i++) {
      double s = 0;
      if (collocated) s = deriv[q * nq + i];
      else
        for (int p = 0; p < nq; p++) s += deriv[q * nq + p] * interp[p * n + i];
      B[q * n + i]  = interp[q * n + i];
      Bd[q * n + i] = s;
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* Templated apply */

/* The 1D tables, passed by value (constant bank): B (nq x n) and Bd = Dq B (nq x n); collocated: Bd = Dq;
   the rule's points X and weights W on [0,1] (for the geometry on the fly) */
template <int N, int NQ>
struct Tab {
  double B[NQ * N], Bd[NQ * N], X[NQ], W[NQ];
};

/* The geometry on the fly (FLY kernels): coefficient values at the points (NULL: 1) and the scalings */
struct FlyArgs {
  const double *diffusion, *reaction;
  double        alpha, beta;
};

/* The FLY kernels: at least 128 registers per thread (168 and 255 spill less at Gauss k >= 7 but were
   2-20% slower elsewhere, H100) and blocks of up to 256 threads (128 and 512: within 5%, except 128 at
   Gauss k = 5, 7: 7-14% slower) */
constexpr int kFlyMinRegs = 128, kFlyTarget = 256;

constexpr int kSharedPerSM    = 233472; /* bytes of shared memory per SM (sm_90) */
constexpr int kSharedPerBlock = 232448; /* the opt-in limit of one block */

/* Resident blocks per SM of c cells of t threads and `bytes` of shared memory each */
constexpr int BlocksPerSM(int c, int t, int bytes)
{
  int blocks = kSharedPerSM / (c * bytes + 16 + 1024); /* 1 KiB reserved per block */
  if (blocks > 32) blocks = 32;
  if (blocks > 2048 / (c * t)) blocks = 2048 / (c * t);
  return blocks;
}

/* Cells per block, up to `target` threads per block: the most resident cells per SM given the shared
   memory per cell, weighted by the used fraction of the block's warps (ties: more cells per block) */
constexpr int CellsPerBlock(int t, int bytes, int target)
{
  int cmax = target / t, best = 1;
  long long bestscore = -1;
  if (cmax < 1) cmax = 1;
  for (int c = 1; c <= cmax; c++) {
    if (c * bytes + 16 > kSharedPerBlock) break;
    const int       th    = c * t, warps = (th + 31) / 32;
    const long long score = (long long)BlocksPerSM(c, t, bytes) * th * 1000 / (32 * warps);
    if (score >= bestscore) {
      best      = c;
      bestscore = score;
    }
  }
  return best;
}

/* Cells per block of the FLY kernels, up to `target` threads per block. With little shared memory per cell
   their residency is bounded by the registers (regs per thread): the most active threads per SM given
   both (ties: fewer cells per block) */
constexpr int CellsPerBlockRegs(int t, int bytes, int target, int regs)
{
  int cmax = target / t, best = 1;
  long long bestscore = -1;
  if (cmax < 1) cmax = 1;
  for (int c = 1; c <= cmax; c++) {
    if (c * bytes + 16 > kSharedPerBlock) break;
    const int warps = (c * t + 31) / 32, byregs = 65536 / (warps * 32 * regs), bysh = BlocksPerSM(c, t, bytes);
    const long long score = (long long)(bysh < byregs ? bysh : byregs) * c * t;
    if (score > bestscore) {
      best      = c;
      bestscore = score;
    }
  }
  return best;
}

/* Minimum resident blocks for __launch_bounds__: as many as the shared memory allows, so that registers
   do not limit the residency further, but never fewer than minregs registers per thread */
constexpr int MinBlocks(int threads, int blocks, int minregs)
{
  const int byregs = 65536 / (((threads + 31) / 32) * 32 * minregs);
  const int m      = blocks < byregs ? blocks : byregs;
  return m < 1 ? 1 : m;
}

/* Shared-memory layout of one cell: work buffers with entry (i,j,l) at (l*NQ + j)*LD + i (2D: j*LD + i),
   i,j < NQ, l < N; an odd row stride LD spreads the lines of a warp over the banks. The staged geometric
   factors of the block's C cells come first, as in global memory (FLY: the cells' corners instead, and
   their diffusion values at the points after the buffers, when the coefficient is variable). */
template <int DIM, int N, int NQ, bool FLY = false>
struct Lay {
  static constexpr int    LD      = NQ % 2 ? NQ : NQ + 1;
  static constexpr int    NBUF    = DIM;
  static constexpr int    CS      = (DIM == 3 ? N * NQ * LD : N * LD) | 1; /* buffer stride per cell */
  static constexpr int    QP      = DIM == 3 ? NQ * NQ * NQ : NQ * NQ;
  static constexpr int    GS      = FLY ? DIM * (1 << DIM) : (DIM == 3 ? 7 : 4) * QP; /* staged doubles per cell */
  static constexpr int    T       = DIM == 3 ? NQ * NQ : NQ; /* threads per cell */
  static constexpr int    CQ      = FLY ? QP : 0; /* FLY: the staged diffusion values, after the buffers */
  static constexpr int    C       = FLY ? CellsPerBlockRegs(T, (NBUF * CS + GS + CQ) * 8, kFlyTarget, kFlyMinRegs) : CellsPerBlock(T, (NBUF * CS + GS) * 8, 128);
  static constexpr int    THREADS = C * T;
  static constexpr int    MINB    = MinBlocks(THREADS, BlocksPerSM(C, T, (NBUF * CS + GS + CQ) * 8), FLY ? kFlyMinRegs : 128);
  static constexpr size_t SHMEM   = (size_t)(C * (GS + NBUF * CS + CQ) + 1 + (FLY ? 1 : 0)) * sizeof(double); /* +1: alignment shifts */
};

/* out = A in, A (NQ x N) from the kernel parameters */
template <int N, int NQ>
__device__ __forceinline__ void Mul(const double (&A)[NQ * N], const double (&in)[N], double (&out)[NQ])
{
#pragma unroll
  for (int q = 0; q < NQ; q++) {
    double s = 0;
#pragma unroll
    for (int i = 0; i < N; i++) s += A[q * N + i] * in[i];
    out[q] = s;
  }
}

/* out = A^T in (ADD: out += A^T in) */
template <int N, int NQ, bool ADD>
__device__ __forceinline__ void MulT(const double (&A)[NQ * N], const double (&in)[NQ], double (&out)[N])
{
#pragma unroll
  for (int i = 0; i < N; i++) {
    double s = ADD ? out[i] : 0.0;
#pragma unroll
    for (int q = 0; q < NQ; q++) s += A[q * N + i] * in[q];
    out[i] = s;
  }
}

/* Start the asynchronous copy of count doubles src -> dst (shared) by the block's nthr threads; dst and
   src agree modulo 16 bytes, so all but the ends go in 16-byte pieces. */
__device__ __forceinline__ void StageAsync(double *dst, const double *src, long long count, int tid, int nthr)
{
  long long i0 = 0;

  if (count > 0 && ((uintptr_t)src & 15)) {
    if (tid == 0) __pipeline_memcpy_async(dst, src, 8);
    i0 = 1;
  }
  const long long pairs = (count - i0) / 2;
  for (long long p = tid; p < pairs; p += nthr) __pipeline_memcpy_async(dst + i0 + 2 * p, src + i0 + 2 * p, 16);
  if (count > i0 && ((count - i0) & 1) && tid == nthr - 1) __pipeline_memcpy_async(dst + count - 1, src + count - 1, 8);
  __pipeline_commit();
}

/* Where to stage an array at src in shared memory at or one double after base: the address that agrees
   with src modulo 16 bytes (StageAsync) */
__device__ __forceinline__ double *StagedAfter(double *base, const double *src)
{
  return base + ((((uintptr_t)base ^ (uintptr_t)src) & 15) ? 1 : 0);
}

/* The point-wise step at the NQ points of a z line (3D): g points to factor 0 of point 0 of the line, the
   points are PSTRIDE apart and the factors QP apart. u becomes v = geom0 u, (dx,dy,dz) becomes G (dx,dy,dz). */
template <int NQ, int PSTRIDE, int QP>
__device__ __forceinline__ void Points3(const double *g, double (&u)[NQ], double (&dx)[NQ], double (&dy)[NQ], double (&dz)[NQ])
{
#pragma unroll
  for (int l = 0; l < NQ; l++) {
    const double *p = g + l * PSTRIDE;
    const double  a = dx[l], b = dy[l], c = dz[l];
    const double  g00 = p[QP], g01 = p[2 * QP], g02 = p[3 * QP], g11 = p[4 * QP], g12 = p[5 * QP], g22 = p[6 * QP];

    u[l] *= p[0];
    dx[l] = g00 * a + g01 * b + g02 * c;
    dy[l] = g01 * a + g11 * b + g12 * c;
    dz[l] = g02 * a + g12 * b + g22 * c;
  }
}

template <int NQ, int PSTRIDE, int QP>
__device__ __forceinline__ void Points2(const double *g, double (&u)[NQ], double (&dx)[NQ], double (&dy)[NQ])
{
#pragma unroll
  for (int l = 0; l < NQ; l++) {
    const double *p = g + l * PSTRIDE;
    const double  a = dx[l], b = dy[l];
    const double  g00 = p[QP], g01 = p[2 * QP], g11 = p[3 * QP];

    u[l] *= p[0];
    dx[l] = g00 * a + g01 * b;
    dy[l] = g01 * a + g11 * b;
  }
}

/* Geometry on the fly (FLY kernels) of a multilinear cell from its corners X (dim x 2^dim, corner
   v = (z*2 + y)*2 + x, staged in shared memory): the same factors as the stored ones (plex_kernel.h).
   The columns of J = dx/dxi are J_a = sum of the corner differences along a, weighted bilinearly in the
   other two coordinates; on a thread's z line xi and eta are fixed, so J_2 is constant and J_0, J_1 are
   linear in zeta: FlyLine3 folds xi and eta in once, and a point costs six multiply-adds for J, three
   cross products n_a = J_(a+1) x J_(a+2) (the rows of det J J^-1), so that G = w beta c n_a.n_b / |det J|
   and g0 = w alpha r |det J| with det J = J_0.n_0. */
struct FlyLine3 {
  double a0[3], da[3], b0[3], db[3], c[3]; /* J_0 = a0 + zeta da, J_1 = b0 + zeta db, J_2 = c */
};

__device__ __forceinline__ void FlyLine3Init(const double *X, double xi, double eta, FlyLine3 &f)
{
#pragma unroll
  for (int d = 0; d < 3; d++) {
    const double *P  = X + 8 * d;
    const double  e0 = P[1] - P[0], e1 = P[3] - P[2], e2 = P[5] - P[4], e3 = P[7] - P[6]; /* along x at (y,z) = 00, 10, 01, 11 */
    const double  f0 = P[2] - P[0], f1 = P[3] - P[1], f2 = P[6] - P[4], f3 = P[7] - P[5]; /* along y at (x,z) */
    const double  g0 = P[4] - P[0], g1 = P[5] - P[1], g2 = P[6] - P[2], g3 = P[7] - P[3]; /* along z at (x,y) */
    const double  A0 = e0 + eta * (e1 - e0), A1 = e2 + eta * (e3 - e2);
    const double  B0 = f0 + xi * (f1 - f0), B1 = f2 + xi * (f3 - f2);
    const double  C0 = g0 + xi * (g1 - g0), C1 = g2 + xi * (g3 - g2);

    f.a0[d] = A0;
    f.da[d] = A1 - A0;
    f.b0[d] = B0;
    f.db[d] = B1 - B0;
    f.c[d]  = C0 + eta * (C1 - C0);
  }
}

__device__ __forceinline__ void Cross(const double (&a)[3], const double (&b)[3], double (&o)[3])
{
  o[0] = a[1] * b[2] - a[2] * b[1];
  o[1] = a[2] * b[0] - a[0] * b[2];
  o[2] = a[0] * b[1] - a[1] * b[0];
}

__device__ __forceinline__ double Dot(const double (&a)[3], const double (&b)[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* The point-wise step at the NQ points (xi, eta, Z[l]) of a z line, as Points3 with the factors made here;
   dif: the line's first diffusion value in shared memory (NULL: constant), rea: its first reaction value
   in global memory (NULL: constant), points PSTRIDE apart in both */
template <int NQ, int PSTRIDE>
__device__ __forceinline__ void PointsFly3(const FlyLine3 &f, const double (&Z)[NQ], const double (&WZ)[NQ], double wxy, const FlyArgs &fa, const double *dif, const double *rea, double (&u)[NQ], double (&dx)[NQ], double (&dy)[NQ], double (&dz)[NQ])
{
#pragma unroll
  for (int l = 0; l < NQ; l++) {
    double J0[3], J1[3], n0[3], n1[3], n2[3];
#pragma unroll
    for (int d = 0; d < 3; d++) {
      J0[d] = f.a0[d] + Z[l] * f.da[d];
      J1[d] = f.b0[d] + Z[l] * f.db[d];
    }
    Cross(J1, f.c, n0);
    Cross(f.c, J0, n1);
    Cross(J0, J1, n2);
    const double ad = fabs(Dot(J0, n0)), w = wxy * WZ[l];
    const double m  = w * fa.alpha * (rea ? __ldg(rea + l * PSTRIDE) : 1.0) * ad;
    const double s  = w * fa.beta * (dif ? dif[l * PSTRIDE] : 1.0) / ad;
    const double a = dx[l], b = dy[l], c = dz[l];
    const double g00 = s * Dot(n0, n0), g01 = s * Dot(n0, n1), g02 = s * Dot(n0, n2), g11 = s * Dot(n1, n1), g12 = s * Dot(n1, n2), g22 = s * Dot(n2, n2);

    u[l] *= m;
    dx[l] = g00 * a + g01 * b + g02 * c;
    dy[l] = g01 * a + g11 * b + g12 * c;
    dz[l] = g02 * a + g12 * b + g22 * c;
  }
}

/* 2D: on a thread's y line xi is fixed, so J_1 = c is constant and J_0 = a0 + eta da; with J^-1 J^-T =
   [|J_1|^2, -J_0.J_1; -J_0.J_1, |J_0|^2] / det^2 */
struct FlyLine2 {
  double a0[2], da[2], c[2];
};

__device__ __forceinline__ void FlyLine2Init(const double *X, double xi, FlyLine2 &f)
{
#pragma unroll
  for (int d = 0; d < 2; d++) {
    const double *P  = X + 4 * d;
    const double  e0 = P[1] - P[0], e1 = P[3] - P[2], g0 = P[2] - P[0], g1 = P[3] - P[1]; /* along x at y = 0, 1; along y at x = 0, 1 */

    f.a0[d] = e0;
    f.da[d] = e1 - e0;
    f.c[d]  = g0 + xi * (g1 - g0);
  }
}

/* The factors at (xi, eta) with weight w: g0 and G00, G01, G11 (dif, rea: as in PointsFly3, at the point) */
__device__ __forceinline__ void FlyPoint2(const FlyLine2 &f, double eta, double w, const FlyArgs &fa, const double *dif, const double *rea, double &g0, double &g00, double &g01, double &g11)
{
  const double j0 = f.a0[0] + eta * f.da[0], j1 = f.a0[1] + eta * f.da[1];
  const double ad = fabs(j0 * f.c[1] - j1 * f.c[0]);
  const double s  = w * fa.beta * (dif ? *dif : 1.0) / ad;

  g0  = w * fa.alpha * (rea ? __ldg(rea) : 1.0) * ad;
  g00 = s * (f.c[0] * f.c[0] + f.c[1] * f.c[1]);
  g01 = -s * (j0 * f.c[0] + j1 * f.c[1]);
  g11 = s * (j0 * j0 + j1 * j1);
}

/* Hanging-node constraints in the templated kernels (contract: include/patchwork/hanging_kernel.h; CPU
   reference: src/core/hanging_ref.c), for regular masks (PatchworkHangingRegular): at most one hanging
   face and one hanging edge per direction d. On the cell's buffer S0 (node (c0,c1,c2) at Off), with two
   scratch areas W1 (3 n^2 doubles) and W2 (3 n), and one thread per face position (a, b), a, b < N:
     forward    F1  face d: W1_d(a, b) = sum_p P[s0][a][p] raw(p, b);  edge d: W2_d(a) = sum_p P[s][a][p] raw(p)
                F2  face d: u(a, b) = sum_q P[s1][b][q] W1_d(a, q);     edge d: u(a) = W2_d(a)
                    each written only where the face (edge) claims the node
     transpose  T1  face d: W1_d(p, j) = sum_i P[s0][i][p] Y_d(i, j), with Y_d the claimed entries of y
                    (0 elsewhere); edge d: W2_d(p) = sum_i P[s][i][p] Y_d(i) - Y_d(p)
                T2  face d: y(p, r) += sum_j P[s1][j][r] W1_d(p, j) - Y_d(p, r);  edge d: y(p) += W2_d(p)
   so that every raw slot ends with its own value if free, nothing of it if claimed, plus what the
   constraints send it (shared-memory atomics: faces meet on edges). A barrier separates the phases;
   the tangential directions of d are T0(d) < T1(d). Claims: faces in direction order (one per
   direction), then edges; a face node is claimed unless it lies on an earlier hanging face, an edge
   node unless it lies on a hanging face or on an earlier hanging edge. */
__device__ __forceinline__ int T0(int d) { return d == 0 ? 1 : 0; }
__device__ __forceinline__ int T1(int d) { return d == 2 ? 1 : 2; }

/* The side (0 or 1) of the hanging face across direction d, -1 if none */
__device__ __forceinline__ int FaceSide(unsigned long long m, int d)
{
  return (m >> (2 * d)) & 1 ? 0 : (m >> (2 * d + 1)) & 1 ? 1 : -1;
}
template <int DIM>
__device__ __forceinline__ int FaceHalf(unsigned long long m, int d, int side, int t)
{
  return (int)((m >> (PW_HANG_FACE_POS + (DIM - 1) * (2 * d + side) + t)) & 1);
}
/* The hanging edge along direction d as k = 2b + a (at a(n-1) in T0(d), b(n-1) in T1(d)), -1 if none */
__device__ __forceinline__ int EdgeOf(unsigned long long m, int d)
{
  const unsigned v = (unsigned)(m >> (PW_HANG_EDGE + 4 * d)) & 15u;
  return v ? __ffs(v) - 1 : -1;
}
__device__ __forceinline__ int EdgeHalf(unsigned long long m, int d, int k) { return (int)((m >> (PW_HANG_EDGE_POS + 4 * d + k)) & 1); }

template <int DIM, int NQ, int LD>
__device__ __forceinline__ int Off(const int (&c)[3])
{
  return DIM == 3 ? (c[2] * NQ + c[1]) * LD + c[0] : c[1] * LD + c[0];
}

/* Node (a, b) of the face across d (2D: node a, b unused) */
template <int DIM, int N>
__device__ __forceinline__ void FaceNode(int d, int side, int a, int b, int (&c)[3])
{
  c[2]    = 0;
  c[d]    = side * (N - 1);
  c[T0(d)] = a;
  if (DIM == 3) c[T1(d)] = b;
}

/* Node a of the edge k along d (3D) */
template <int N>
__device__ __forceinline__ void EdgeNode(int d, int k, int a, int (&c)[3])
{
  c[d]     = a;
  c[T0(d)] = (k & 1) * (N - 1);
  c[T1(d)] = (k >> 1) * (N - 1);
}

/* Whether node c of the face across d is claimed by it: on no hanging face of an earlier direction */
template <int DIM, int N>
__device__ __forceinline__ bool FaceClaims(unsigned long long m, int d, const int (&c)[3])
{
  for (int e = 0; e < d; e++) {
    const int s = FaceSide(m, e);
    if (s >= 0 && c[e] == s * (N - 1)) return false;
  }
  return true;
}

/* Whether node c of the edge along d is claimed by it: on no hanging face and no earlier hanging edge */
template <int N>
__device__ __forceinline__ bool EdgeClaims(unsigned long long m, int d, const int (&c)[3])
{
  for (int e = 0; e < 3; e++) {
    const int s = FaceSide(m, e), k = e < d ? EdgeOf(m, e) : -1;
    if (s >= 0 && c[e] == s * (N - 1)) return false;
    if (k >= 0 && c[T0(e)] == (k & 1) * (N - 1) && c[T1(e)] == (k >> 1) * (N - 1)) return false;
  }
  return true;
}

/* Forward, phase F1 (thread r of the cell; r < N^(DIM-1) take part) */
template <int DIM, int N, int NQ, int LD>
__device__ __forceinline__ void HangForward1(unsigned long long m, const double *__restrict__ P, const double *S0, double *W1, double *W2, int r)
{
  constexpr int NF = DIM == 3 ? N * N : N;
  const int     a = r % N, b = r / N;

  if (r >= NF) return;
#pragma unroll
  for (int d = 0; d < DIM; d++) {
    const int side = FaceSide(m, d);
    if (side < 0) continue;
    const double *Pa = P + (FaceHalf<DIM>(m, d, side, 0) * N + a) * N;
    double        v  = 0;
#pragma unroll
    for (int p = 0; p < N; p++) {
      int c[3];
      FaceNode<DIM, N>(d, side, p, b, c);
      v += __ldg(Pa + p) * S0[Off<DIM, NQ, LD>(c)];
    }
    W1[d * NF + r] = v;
  }
  if (DIM == 3 && r < N)
#pragma unroll
    for (int d = 0; d < 3; d++) {
      const int k = EdgeOf(m, d);
      if (k < 0) continue;
      const double *Pa = P + (EdgeHalf(m, d, k) * N + a) * N;
      double        v  = 0;
#pragma unroll
      for (int p = 0; p < N; p++) {
        int c[3];
        EdgeNode<N>(d, k, p, c);
        v += __ldg(Pa + p) * S0[Off<DIM, NQ, LD>(c)];
      }
      W2[d * N + r] = v;
    }
}

/* Forward, phase F2 */
template <int DIM, int N, int NQ, int LD>
__device__ __forceinline__ void HangForward2(unsigned long long m, const double *__restrict__ P, double *S0, const double *W1, const double *W2, int r)
{
  constexpr int NF = DIM == 3 ? N * N : N;
  const int     a = r % N, b = r / N;

  if (r >= NF) return;
#pragma unroll
  for (int d = 0; d < DIM; d++) {
    const int side = FaceSide(m, d);
    int       c[3];
    if (side < 0) continue;
    FaceNode<DIM, N>(d, side, a, b, c);
    if (!FaceClaims<DIM, N>(m, d, c)) continue;
    double v = W1[d * NF + r];
    if (DIM == 3) {
      const double *Pb = P + (FaceHalf<DIM>(m, d, side, 1) * N + b) * N;
      v                = 0;
#pragma unroll
      for (int q = 0; q < N; q++) v += __ldg(Pb + q) * W1[d * NF + q * N + a];
    }
    S0[Off<DIM, NQ, LD>(c)] = v;
  }
  if (DIM == 3 && r < N)
#pragma unroll
    for (int d = 0; d < 3; d++) {
      const int k = EdgeOf(m, d);
      int       c[3];
      if (k < 0) continue;
      EdgeNode<N>(d, k, a, c);
      if (EdgeClaims<N>(m, d, c)) S0[Off<DIM, NQ, LD>(c)] = W2[d * N + r];
    }
}

/* Transpose, phase T1: the claimed entries this thread owns go to own[] (for T2) */
template <int DIM, int N, int NQ, int LD>
__device__ __forceinline__ void HangTranspose1(unsigned long long m, const double *__restrict__ P, const double *S0, double *W1, double *W2, int r, double (&own)[DIM])
{
  constexpr int NF = DIM == 3 ? N * N : N;
  const int     a = r % N, b = r / N;

  if (r >= NF) return;
#pragma unroll
  for (int d = 0; d < DIM; d++) {
    const int side = FaceSide(m, d);
    int       c[3];
    own[d] = 0;
    if (side < 0) continue;
    FaceNode<DIM, N>(d, side, a, b, c);
    if (FaceClaims<DIM, N>(m, d, c)) own[d] = S0[Off<DIM, NQ, LD>(c)];
    /* the column (a = p) of P[s0] against Y_d(:, b) */
    const double *Pc = P + FaceHalf<DIM>(m, d, side, 0) * N * N + a;
    double        v  = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
      FaceNode<DIM, N>(d, side, i, b, c);
      if (FaceClaims<DIM, N>(m, d, c)) v += __ldg(Pc + i * N) * S0[Off<DIM, NQ, LD>(c)];
    }
    W1[d * NF + r] = DIM == 3 ? v : v - own[d];
  }
  if (DIM == 3 && r < N)
#pragma unroll
    for (int d = 0; d < 3; d++) {
      const int k = EdgeOf(m, d);
      int       c[3];
      if (k < 0) continue;
      const double *Pc = P + EdgeHalf(m, d, k) * N * N + a;
      double        v  = 0;
#pragma unroll
      for (int i = 0; i < N; i++) {
        EdgeNode<N>(d, k, i, c);
        if (EdgeClaims<N>(m, d, c)) v += __ldg(Pc + i * N) * S0[Off<DIM, NQ, LD>(c)];
      }
      EdgeNode<N>(d, k, a, c);
      if (EdgeClaims<N>(m, d, c)) v -= S0[Off<DIM, NQ, LD>(c)];
      W2[d * N + r] = v;
    }
}

/* Transpose, phase T2 */
template <int DIM, int N, int NQ, int LD>
__device__ __forceinline__ void HangTranspose2(unsigned long long m, const double *__restrict__ P, double *S0, const double *W1, const double *W2, int r, const double (&own)[DIM])
{
  constexpr int NF = DIM == 3 ? N * N : N;
  const int     a = r % N, b = r / N;

  if (r >= NF) return;
#pragma unroll
  for (int d = 0; d < DIM; d++) {
    const int side = FaceSide(m, d);
    int       c[3];
    if (side < 0) continue;
    FaceNode<DIM, N>(d, side, a, b, c);
    double v = W1[d * NF + r];
    if (DIM == 3) {
      const double *Pc = P + FaceHalf<DIM>(m, d, side, 1) * N * N + b;
      v                = -own[d];
#pragma unroll
      for (int j = 0; j < N; j++) v += __ldg(Pc + j * N) * W1[d * NF + j * N + a];
    }
    atomicAdd(S0 + Off<DIM, NQ, LD>(c), v);
  }
  if (DIM == 3 && r < N)
#pragma unroll
    for (int d = 0; d < 3; d++) {
      const int k = EdgeOf(m, d);
      int       c[3];
      if (k < 0) continue;
      EdgeNode<N>(d, k, a, c);
      atomicAdd(S0 + Off<DIM, NQ, LD>(c), W2[d * N + r]);
    }
}

/* Both transpose phases with their barriers (every thread of the block calls it; on a cell with
   constraints `on`) */
template <int DIM, int N, int NQ, int LD>
__device__ __forceinline__ void HangTranspose(bool on, unsigned long long m, const double *__restrict__ P, double *S0, double *W1, double *W2, int r)
{
  double own[DIM];

  if (on) HangTranspose1<DIM, N, NQ, LD>(m, P, S0, W1, W2, r, own);
  __syncthreads();
  if (on) HangTranspose2<DIM, N, NQ, LD>(m, P, S0, W1, W2, r, own);
  __syncthreads();
}

/* 3D apply; see the top of the file for the passes */
template <int N, int NQ, bool COLLOC, bool HANG, bool FLY>
__global__ void __launch_bounds__(Lay<3, N, NQ, FLY>::THREADS, Lay<3, N, NQ, FLY>::MINB) Apply3(const Tab<N, NQ> tb, const int *__restrict__ elem, const double *__restrict__ geom, const FlyArgs fa, long long ncells, const unsigned long long *__restrict__ hang, const double *__restrict__ hangP, const double *__restrict__ x, double *__restrict__ y)
{
  using L = Lay<3, N, NQ, FLY>;
  constexpr int LD = L::LD, PS = NQ * LD, NN = N * N, NQN = NQ * N;
  extern __shared__ __align__(16) double smem[];
  const int       t = threadIdx.x, slot = t / L::T, r = t - slot * L::T;
  const long long c0 = (long long)blockIdx.x * L::C, cell = c0 + slot, nc = ncells - c0 < L::C ? ncells - c0 : L::C;
  const unsigned long long m = HANG && cell < ncells ? __ldg(hang + cell) : 0ull;
  const bool      active = cell < ncells && (!HANG || PatchworkHangingRegular(3, m)); /* others: ApplyGeneric */
  const double   *gsrc   = geom + c0 * L::GS;
  double *const   sg     = smem + (((uintptr_t)gsrc & 15) ? 1 : 0);
  double *const   S0     = smem + L::C * L::GS + 1 + slot * L::CS, *const S1 = S0 + L::C * L::CS, *const S2 = S1 + L::C * L::CS;
  const double   *G      = sg + slot * L::GS; /* FLY: the cell's corners */
  const int      *el     = elem + cell * (N * N * N);
  const double   *dsrc   = FLY && fa.diffusion ? fa.diffusion + c0 * L::QP : nullptr;
  double *const   sd     = StagedAfter(smem + L::C * (L::GS + L::NBUF * L::CS) + 1, dsrc);
  const double   *D      = dsrc ? sd + slot * L::QP : nullptr; /* FLY: the cell's diffusion values */
  const double   *R      = FLY && fa.reaction ? fa.reaction + cell * L::QP : nullptr;

  StageAsync(sg, gsrc, nc * L::GS, t, L::THREADS);
  if (dsrc) StageAsync(sd, dsrc, nc * L::QP, t, L::THREADS);

  /* gather, thread (i,j): u(i,j,:), coalesced in i */
  if (active && r < NN) {
    const int i = r % N, j = r / N;
#pragma unroll
    for (int l = 0; l < N; l++) {
      const int e            = __ldg(el + (l * N + j) * N + i);
      S0[(l * NQ + j) * LD + i] = e >= 0 ? __ldg(x + e) : 0.0;
    }
  }
  const bool bhang = HANG ? __syncthreads_or(active && m) : (__syncthreads(), false); /* the block has cells with constraints */
  if (bhang) { /* u = C raw on them */
    if (active && m) HangForward1<3, N, NQ, LD>(m, hangP, S0, S1, S2, r);
    __syncthreads();
    if (active && m) HangForward2<3, N, NQ, LD>(m, hangP, S0, S1, S2, r);
    __syncthreads();
  }

  if constexpr (COLLOC) {
    /* x line (:,a,b) -> S1 = D_x u; y line (a,:,b) -> S2 = D_y u (both only read S0) */
    if (active && r < NN) {
      const int a = r % N, b = r / N;
      double    u[N], o[N];
      {
        const double *p = S0 + (b * N + a) * LD;
#pragma unroll
        for (int m = 0; m < N; m++) u[m] = p[m];
        Mul<N, N>(tb.Bd, u, o);
        double *q = S1 + (b * N + a) * LD;
#pragma unroll
        for (int m = 0; m < N; m++) q[m] = o[m];
      }
      {
        const double *p = S0 + b * PS + a;
#pragma unroll
        for (int m = 0; m < N; m++) u[m] = p[m * LD];
        Mul<N, N>(tb.Bd, u, o);
        double *q = S2 + b * PS + a;
#pragma unroll
        for (int m = 0; m < N; m++) q[m * LD] = o[m];
      }
    }
    __pipeline_wait_prior(0);
    __syncthreads();
    /* z line (a,b,:): values, D_x u, D_y u from shared, D_z u here; points; v + D_z^T g_z -> S0, g_x -> S1, g_y -> S2 */
    if (active) {
      const int a = r % N, b = r / N, o0 = b * LD + a;
      double    u[N], dx[N], dy[N], dz[N];
#pragma unroll
      for (int l = 0; l < N; l++) {
        u[l]  = S0[o0 + l * PS];
        dx[l] = S1[o0 + l * PS];
        dy[l] = S2[o0 + l * PS];
      }
      Mul<N, N>(tb.Bd, u, dz);
      if constexpr (FLY) {
        FlyLine3 f;
        FlyLine3Init(G, tb.X[a], tb.X[b], f);
        PointsFly3<N, N * N>(f, tb.X, tb.W, tb.W[a] * tb.W[b], fa, D ? D + b * N + a : nullptr, R ? R + b * N + a : nullptr, u, dx, dy, dz);
      } else Points3<N, N * N, N * N * N>(G + b * N + a, u, dx, dy, dz);
      MulT<N, N, true>(tb.Bd, dz, u);
#pragma unroll
      for (int l = 0; l < N; l++) {
        S0[o0 + l * PS] = u[l];
        S1[o0 + l * PS] = dx[l];
        S2[o0 + l * PS] = dy[l];
      }
    }
    __syncthreads();
    /* D_x^T on the x lines of S1, D_y^T on the y lines of S2, in place */
    if (active && r < NN) {
      const int a = r % N, b = r / N;
      double    g[N], o[N];
      {
        double *p = S1 + (b * N + a) * LD;
#pragma unroll
        for (int m = 0; m < N; m++) g[m] = p[m];
        MulT<N, N, false>(tb.Bd, g, o);
#pragma unroll
        for (int m = 0; m < N; m++) p[m] = o[m];
      }
      {
        double *p = S2 + b * PS + a;
#pragma unroll
        for (int m = 0; m < N; m++) g[m] = p[m * LD];
        MulT<N, N, false>(tb.Bd, g, o);
#pragma unroll
        for (int m = 0; m < N; m++) p[m * LD] = o[m];
      }
    }
    __syncthreads();
    if (bhang) { /* y_e = S0 + S1 + S2 into S0, then C^T on it */
      if (active && r < NN) {
        const int i = r % N, j = r / N;
#pragma unroll
        for (int l = 0; l < N; l++) {
          const int o = (l * N + j) * LD + i;
          S0[o] += S1[o] + S2[o];
        }
      }
      __syncthreads();
      HangTranspose<3, N, N, LD>(active && m, m, hangP, S0, S1, S2, r);
    }
    /* scatter, thread (i,j): S0 + S1 + S2 at (i,j,:) */
    if (active && r < NN) {
      const int i = r % N, j = r / N;
#pragma unroll
      for (int l = 0; l < N; l++) {
        const int e = __ldg(el + (l * N + j) * N + i), o = (l * N + j) * LD + i;
        if (e >= 0) atomicAdd(y + e, bhang ? S0[o] : S0[o] + S1[o] + S2[o]);
      }
    }
    return;
  }

  /* x pass, thread (j,l): a = B u -> S0, b = Bd u -> S1 along (:,j,l) */
  if (active && r < NN) {
    const int j = r % N, l = r / N;
    double   *p0 = S0 + (l * NQ + j) * LD, *p1 = S1 + (l * NQ + j) * LD;
    double    u[N], o[NQ];
#pragma unroll
    for (int m = 0; m < N; m++) u[m] = p0[m];
    Mul<N, NQ>(tb.B, u, o);
#pragma unroll
    for (int q = 0; q < NQ; q++) p0[q] = o[q];
    Mul<N, NQ>(tb.Bd, u, o);
#pragma unroll
    for (int q = 0; q < NQ; q++) p1[q] = o[q];
  }
  __syncthreads();
  /* y pass, thread (i,l): c = B a -> S0, d = B b -> S1, e = Bd a -> S2 along (i,:,l) */
  if (active && r < NQN) {
    const int i = r % NQ, l = r / NQ;
    double   *p0 = S0 + l * PS + i, *p1 = S1 + l * PS + i, *p2 = S2 + l * PS + i;
    double    a[N], b[N], o[NQ];
#pragma unroll
    for (int m = 0; m < N; m++) {
      a[m] = p0[m * LD];
      b[m] = p1[m * LD];
    }
    Mul<N, NQ>(tb.B, a, o);
#pragma unroll
    for (int q = 0; q < NQ; q++) p0[q * LD] = o[q];
    Mul<N, NQ>(tb.B, b, o);
#pragma unroll
    for (int q = 0; q < NQ; q++) p1[q * LD] = o[q];
    Mul<N, NQ>(tb.Bd, a, o);
#pragma unroll
    for (int q = 0; q < NQ; q++) p2[q * LD] = o[q];
  }
  __pipeline_wait_prior(0);
  __syncthreads();
  /* z pass, points and z back pass on the z line (i,j,:) in registers */
  if (active) {
    const int i = r % NQ, j = r / NQ, o0 = j * LD + i;
    double    u[NQ], dx[NQ], dy[NQ], dz[NQ], o[N];
    {
      double c[N];
#pragma unroll
      for (int m = 0; m < N; m++) c[m] = S0[o0 + m * PS];
      Mul<N, NQ>(tb.B, c, u);
      Mul<N, NQ>(tb.Bd, c, dz);
#pragma unroll
      for (int m = 0; m < N; m++) c[m] = S1[o0 + m * PS];
      Mul<N, NQ>(tb.B, c, dx);
#pragma unroll
      for (int m = 0; m < N; m++) c[m] = S2[o0 + m * PS];
      Mul<N, NQ>(tb.B, c, dy);
    }
    if constexpr (FLY) {
      FlyLine3 f;
      FlyLine3Init(G, tb.X[i], tb.X[j], f);
      PointsFly3<NQ, NQ * NQ>(f, tb.X, tb.W, tb.W[i] * tb.W[j], fa, D ? D + j * NQ + i : nullptr, R ? R + j * NQ + i : nullptr, u, dx, dy, dz);
    } else Points3<NQ, NQ * NQ, NQ * NQ * NQ>(G + j * NQ + i, u, dx, dy, dz);
    MulT<N, NQ, false>(tb.B, u, o);
    MulT<N, NQ, true>(tb.Bd, dz, o);
#pragma unroll
    for (int m = 0; m < N; m++) S0[o0 + m * PS] = o[m];
    MulT<N, NQ, false>(tb.B, dx, o);
#pragma unroll
    for (int m = 0; m < N; m++) S1[o0 + m * PS] = o[m];
    MulT<N, NQ, false>(tb.B, dy, o);
#pragma unroll
    for (int m = 0; m < N; m++) S2[o0 + m * PS] = o[m];
  }
  __syncthreads();
  /* y back, thread (i,m): F = B^T C + Bd^T E -> S0, H = B^T D -> S1 along (i,:,m) */
  if (active && r < NQN) {
    const int i = r % NQ, m = r / NQ;
    double   *p0 = S0 + m * PS + i, *p1 = S1 + m * PS + i;
    const double *p2 = S2 + m * PS + i;
    double    c[NQ], o[N];
#pragma unroll
    for (int q = 0; q < NQ; q++) c[q] = p0[q * LD];
    MulT<N, NQ, false>(tb.B, c, o);
#pragma unroll
    for (int q = 0; q < NQ; q++) c[q] = p2[q * LD];
    MulT<N, NQ, true>(tb.Bd, c, o);
#pragma unroll
    for (int p = 0; p < N; p++) p0[p * LD] = o[p];
#pragma unroll
    for (int q = 0; q < NQ; q++) c[q] = p1[q * LD];
    MulT<N, NQ, false>(tb.B, c, o);
#pragma unroll
    for (int p = 0; p < N; p++) p1[p * LD] = o[p];
  }
  __syncthreads();
  /* x back, thread (p,m): B^T F + Bd^T H -> S0 along (:,p,m) */
  if (active && r < NN) {
    const int p = r % N, m = r / N;
    double   *p0 = S0 + (m * NQ + p) * LD;
    const double *p1 = S1 + (m * NQ + p) * LD;
    double    c[NQ], o[N];
#pragma unroll
    for (int q = 0; q < NQ; q++) c[q] = p0[q];
    MulT<N, NQ, false>(tb.B, c, o);
#pragma unroll
    for (int q = 0; q < NQ; q++) c[q] = p1[q];
    MulT<N, NQ, true>(tb.Bd, c, o);
#pragma unroll
    for (int q = 0; q < N; q++) p0[q] = o[q];
  }
  __syncthreads();
  if (bhang) HangTranspose<3, N, NQ, LD>(active && m, m, hangP, S0, S1, S2, r);
  /* scatter, thread (i,j) */
  if (active && r < NN) {
    const int i = r % N, j = r / N;
#pragma unroll
    for (int l = 0; l < N; l++) {
      const int e = __ldg(el + (l * N + j) * N + i);
      if (e >= 0) atomicAdd(y + e, S0[(l * NQ + j) * LD + i]);
    }
  }
}

/* 2D apply: the same with one line of NQ threads per cell */
template <int N, int NQ, bool COLLOC, bool HANG, bool FLY>
__global__ void __launch_bounds__(Lay<2, N, NQ, FLY>::THREADS, Lay<2, N, NQ, FLY>::MINB) Apply2(const Tab<N, NQ> tb, const int *__restrict__ elem, const double *__restrict__ geom, const FlyArgs fa, long long ncells, const unsigned long long *__restrict__ hang, const double *__restrict__ hangP, const double *__restrict__ x, double *__restrict__ y)
{
  using L = Lay<2, N, NQ, FLY>;
  constexpr int LD = L::LD;
  extern __shared__ __align__(16) double smem[];
  const int       t = threadIdx.x, slot = t / L::T, r = t - slot * L::T;
  const long long c0 = (long long)blockIdx.x * L::C, cell = c0 + slot, nc = ncells - c0 < L::C ? ncells - c0 : L::C;
  const unsigned long long m = HANG && cell < ncells ? __ldg(hang + cell) : 0ull;
  const bool      active = cell < ncells && (!HANG || PatchworkHangingRegular(2, m)); /* others: ApplyGeneric */
  const double   *gsrc   = geom + c0 * L::GS;
  double *const   sg     = smem + (((uintptr_t)gsrc & 15) ? 1 : 0);
  double *const   S0     = smem + L::C * L::GS + 1 + slot * L::CS, *const S1 = S0 + L::C * L::CS;
  const double   *G      = sg + slot * L::GS;
  const int      *el     = elem + cell * (N * N);
  const double   *dsrc   = FLY && fa.diffusion ? fa.diffusion + c0 * L::QP : nullptr;
  double *const   sd     = StagedAfter(smem + L::C * (L::GS + L::NBUF * L::CS) + 1, dsrc);
  const double   *D      = dsrc ? sd + slot * L::QP : nullptr;
  const double   *R      = FLY && fa.reaction ? fa.reaction + cell * L::QP : nullptr;

  StageAsync(sg, gsrc, nc * L::GS, t, L::THREADS);
  if (dsrc) StageAsync(sd, dsrc, nc * L::QP, t, L::THREADS);

  /* gather, thread i: u(i,:) */
  if (active && r < N) {
#pragma unroll
    for (int j = 0; j < N; j++) {
      const int e    = __ldg(el + j * N + r);
      S0[j * LD + r] = e >= 0 ? __ldg(x + e) : 0.0;
    }
  }
  const bool bhang = HANG ? __syncthreads_or(active && m) : (__syncthreads(), false); /* the block has cells with constraints */
  if (bhang) { /* u = C raw on them */
    if (active && m) HangForward1<2, N, NQ, LD>(m, hangP, S0, S1, nullptr, r);
    __syncthreads();
    if (active && m) HangForward2<2, N, NQ, LD>(m, hangP, S0, S1, nullptr, r);
    __syncthreads();
  }
  /* x pass, thread j: collocated S1 = D u; else a = B u -> S0, b = Bd u -> S1 */
  if (active && r < N) {
    double *p0 = S0 + r * LD, *p1 = S1 + r * LD;
    double  u[N], o[NQ];
#pragma unroll
    for (int m = 0; m < N; m++) u[m] = p0[m];
    if constexpr (!COLLOC) {
      Mul<N, NQ>(tb.B, u, o);
#pragma unroll
      for (int q = 0; q < NQ; q++) p0[q] = o[q];
    }
    Mul<N, NQ>(tb.Bd, u, o);
#pragma unroll
    for (int q = 0; q < NQ; q++) p1[q] = o[q];
  }
  __pipeline_wait_prior(0);
  __syncthreads();
  /* y pass, points and y back on the y line (i,:) */
  if (active) {
    if constexpr (COLLOC) {
      double u[NQ], dx[NQ], dy[NQ];
#pragma unroll
      for (int m = 0; m < N; m++) {
        u[m]  = S0[m * LD + r];
        dx[m] = S1[m * LD + r];
      }
      Mul<N, NQ>(tb.Bd, u, dy);
      if constexpr (FLY) {
        FlyLine2 f;
        FlyLine2Init(G, tb.X[r], f);
#pragma unroll
        for (int l = 0; l < NQ; l++) {
          double g0, g00, g01, g11;
          const double a = dx[l], b = dy[l];
          FlyPoint2(f, tb.X[l], tb.W[r] * tb.W[l], fa, D ? D + l * NQ + r : nullptr, R ? R + l * NQ + r : nullptr, g0, g00, g01, g11);
          u[l] *= g0;
          dx[l] = g00 * a + g01 * b;
          dy[l] = g01 * a + g11 * b;
        }
      } else Points2<NQ, NQ, NQ * NQ>(G + r, u, dx, dy);
      MulT<N, NQ, true>(tb.Bd, dy, u);
#pragma unroll
      for (int m = 0; m < N; m++) {
        S0[m * LD + r] = u[m];
        S1[m * LD + r] = dx[m];
      }
    } else {
      /* one point at a time: the line's values come and go, only a, b and the two results stay live */
      double   a[N], b[N], oc[N], od[N];
      FlyLine2 f;
      if constexpr (FLY) FlyLine2Init(G, tb.X[r], f);
#pragma unroll
      for (int m = 0; m < N; m++) {
        a[m]  = S0[m * LD + r];
        b[m]  = S1[m * LD + r];
        oc[m] = 0;
        od[m] = 0;
      }
#pragma unroll
      for (int l = 0; l < NQ; l++) {
        double uv = 0, gx = 0, gy = 0;
#pragma unroll
        for (int m = 0; m < N; m++) {
          uv += tb.B[l * N + m] * a[m];
          gy += tb.Bd[l * N + m] * a[m];
          gx += tb.B[l * N + m] * b[m];
        }
        const double ex = gx, ey = gy;
        double       g0, g00, g01, g11;
        if constexpr (FLY) FlyPoint2(f, tb.X[l], tb.W[r] * tb.W[l], fa, D ? D + l * NQ + r : nullptr, R ? R + l * NQ + r : nullptr, g0, g00, g01, g11);
        else {
          const double *p = G + l * NQ + r;
          g0              = p[0];
          g00             = p[L::QP];
          g01             = p[2 * L::QP];
          g11             = p[3 * L::QP];
        }
        uv *= g0;
        gx = g00 * ex + g01 * ey;
        gy = g01 * ex + g11 * ey;
#pragma unroll
        for (int m = 0; m < N; m++) {
          oc[m] += tb.B[l * N + m] * uv + tb.Bd[l * N + m] * gy;
          od[m] += tb.B[l * N + m] * gx;
        }
      }
#pragma unroll
      for (int m = 0; m < N; m++) {
        S0[m * LD + r] = oc[m];
        S1[m * LD + r] = od[m];
      }
    }
  }
  __syncthreads();
  /* x back, thread m: collocated S1 = D^T S1 along (:,m); else B^T F + Bd^T H -> S0 */
  if (active && r < N) {
    double *p0 = S0 + r * LD, *p1 = S1 + r * LD;
    double  c[NQ], o[N];
    if constexpr (COLLOC) {
#pragma unroll
      for (int q = 0; q < NQ; q++) c[q] = p1[q];
      MulT<N, NQ, false>(tb.Bd, c, o);
#pragma unroll
      for (int q = 0; q < N; q++) p1[q] = o[q];
    } else {
#pragma unroll
      for (int q = 0; q < NQ; q++) c[q] = p0[q];
      MulT<N, NQ, false>(tb.B, c, o);
#pragma unroll
      for (int q = 0; q < NQ; q++) c[q] = p1[q];
      MulT<N, NQ, true>(tb.Bd, c, o);
#pragma unroll
      for (int q = 0; q < N; q++) p0[q] = o[q];
    }
  }
  __syncthreads();
  if (bhang) { /* collocated: y_e = S0 + S1 into S0 first; then C^T */
    if (COLLOC && active && r < N) {
#pragma unroll
      for (int j = 0; j < N; j++) S0[j * LD + r] += S1[j * LD + r];
    }
    if (COLLOC) __syncthreads();
    HangTranspose<2, N, NQ, LD>(active && m, m, hangP, S0, S1, nullptr, r);
  }
  /* scatter, thread i */
  if (active && r < N) {
#pragma unroll
    for (int j = 0; j < N; j++) {
      const int e = __ldg(el + j * N + r);
      if (e >= 0) atomicAdd(y + e, COLLOC && !bhang ? S0[j * LD + r] + S1[j * LD + r] : S0[j * LD + r]);
    }
  }
}

/* The templated kernel of the cell shape, with the hanging-node phases compiled in only where the mesh
   has hanging nodes (without them the kernel is the plain one: measured 5-45% faster on the H100 than the
   one with the phases present but skipped, from the registers they hold) */
template <int DIM, int N, int NQ, bool COLLOC, bool HANG, bool FLY>
constexpr auto ApplyKernel()
{
  if constexpr (DIM == 3) return Apply3<N, NQ, COLLOC, HANG, FLY>;
  else return Apply2<N, NQ, COLLOC, HANG, FLY>;
}

template <int DIM, int N, int NQ, bool COLLOC, bool HANG, bool FLY>
static cudaError_t LaunchTemplated(const PatchworkPlexDesc *d, const Tab<N, NQ> &tb, const double *x, double *y, cudaStream_t s)
{
  using L = Lay<DIM, N, NQ, FLY>;
  static_assert(L::SHMEM <= (size_t)kSharedPerBlock, "cell too large for shared memory");
  const unsigned blocks = (unsigned)((d->ncells + L::C - 1) / L::C);
  auto           kern   = ApplyKernel<DIM, N, NQ, COLLOC, HANG, FLY>();
  const FlyArgs  fa     = {d->diffusion, d->reaction, d->alpha, d->beta};
  cudaError_t    err    = cudaSuccess;

  if (L::SHMEM > 48 * 1024) err = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)L::SHMEM);
  if (err != cudaSuccess) return err;
  kern<<<blocks, L::THREADS, L::SHMEM, s>>>(tb, d->elem, FLY ? d->corners : d->geom, fa, d->ncells, d->hang, d->hangP, x, y);
  return cudaGetLastError();
}

template <int DIM, int N, int NQ, bool COLLOC, bool HANG>
static cudaError_t LaunchGeometry(const PatchworkPlexDesc *d, const Tab<N, NQ> &tb, const double *x, double *y, cudaStream_t s)
{
  return d->corners ? LaunchTemplated<DIM, N, NQ, COLLOC, HANG, true>(d, tb, x, y, s) : LaunchTemplated<DIM, N, NQ, COLLOC, HANG, false>(d, tb, x, y, s);
}

template <int DIM, int N, int NQ, bool COLLOC>
static cudaError_t LaunchApply(const PatchworkPlexDesc *d, const double *x, double *y, cudaStream_t s)
{
  Tab<N, NQ>  tb;
  cudaError_t err;

  Fill1D(N, NQ, COLLOC, d->interp, d->deriv, tb.B, tb.Bd);
  for (int q = 0; q < NQ; q++) {
    tb.X[q] = d->points[q];
    tb.W[q] = d->weights[q];
  }
  err = d->hang ? LaunchGeometry<DIM, N, NQ, COLLOC, true>(d, tb, x, y, s) : LaunchGeometry<DIM, N, NQ, COLLOC, false>(d, tb, x, y, s);
  if (err != cudaSuccess) return err;
  if (d->hang && d->nhang > 0) return ApplyGenericLaunch(d, x, y, d->hang_cells, d->nhang, 0, s);
  return cudaSuccess;
}

template <int DIM, int N>
static cudaError_t ApplyN(const PatchworkPlexDesc *d, const double *x, double *y, cudaStream_t s)
{
  if (d->collocated) return LaunchApply<DIM, N, N, true>(d, x, y, s);
  switch (d->nq - N) {
  case 0: return LaunchApply<DIM, N, N, false>(d, x, y, s);
  case 1: return LaunchApply<DIM, N, N + 1, false>(d, x, y, s);
  case 2: return LaunchApply<DIM, N, N + 2, false>(d, x, y, s);
  default: return ApplyGenericLaunch(d, x, y, NULL, 0, 0, s); /* not with corners: CheckDesc */
  }
}

} // namespace
#endif
