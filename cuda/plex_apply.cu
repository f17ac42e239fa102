/* CUDA kernels of the tensor-product operator on general quadrilateral and hexahedral cells (contract:
   include/patchwork/plex_kernel.h; CPU reference: src/core/plex_ref.c).

   Apply. Per cell, with B the nq x n interpolation and Bd = Dq B the nq x n derivatives of the basis at
   the quadrature points, sum factorization in three passes forward and three back (3D):
     x pass  a = B_x u,   b = Bd_x u
     y pass  c = B_y a,   d = B_y b,   e = Bd_y a
     z pass  u_q = B_z c, dx = B_z d,  dy = B_z e,  dz = Bd_z c          (values and reference gradient)
     points  v = geom0 u_q, g = G (dx,dy,dz)                                (7 factors per point)
     z back  C = B_z^T v + Bd_z^T g_z,  D = B_z^T g_x,  E = B_z^T g_y
     y back  F = B_y^T C + Bd_y^T E,    H = B_y^T D
     x back  y_e = B_x^T F + Bd_x^T H
   which is the reference's B^T (M_q B + sum_a Dq_a^T G Dq_b B) since Dq_a acting on B u equals Bd in
   direction a. Collocated (Gauss-Lobatto points at the nodes, B = I, Bd = Dq) drops the interpolations:
     x and y pass  d = D_x u, e = D_y u;  points dz = D_z u, ...;  back  u_e = v + D_z^T g_z + D_x^T g_x + D_y^T g_y.

   Launch geometry (deal.II / libCEED style, cf. cuda/tensor_apply.cu): a block holds C cells and a plane
   of nq x nq threads per cell (nq in 2D). In every pass each thread owns one line of the cell and applies
   the same 1D matrix to it, so the matrix entries are uniform across the block: with the loops unrolled
   (templates on n and nq) they are compile-time offsets into the kernel-parameter constant bank, read
   with no shared-memory traffic. Lines change direction between passes through shared memory, three
   buffers per cell (two in 2D), each updated in place by the one thread that owns a line; the z pass, the
   point-wise product and the z back pass run in registers along the thread's z line.

   The geometric factors dominate the memory traffic (7 doubles per point in 3D against about 3 per node
   for x, y and the index map), and every one of them is read exactly once. Each block copies its cells'
   factors (one contiguous chunk) into shared memory with cp.async when it starts, so the load is in
   flight while the block gathers x and runs the forward passes; the point-wise step then reads them
   from shared memory. C is chosen at compile time to fit the most cells per SM into its shared memory
   (Lay::C below). Results are added to y with atomicAdd (nodes are shared between cells and the cell
   order is arbitrary). Measured on an H200 (bench/bench_plex_kernels.cu, 16M DoF): 70-82% of the copy
   bandwidth for k >= 2 except Gauss at k >= 7; an L2 evict-first policy on the staged copy (to keep x,
   y and elem in L2) and 256-thread blocks both changed the throughput by less than 2%.

   Hanging nodes: a cell whose mask is regular (PatchworkHangingRegular: every cell of a 1-irregular
   mesh) interpolates its raw face values in shared memory after the gather and applies the transpose
   before the scatter, sum-factorized along face lines (HangForward*, HangTranspose*), with four barriers
   more in the blocks that hold such a cell (a block-wide vote after the gather); these phases are
   compiled only into the kernels for meshes with hanging nodes (HANG). H100, 16M DoF, 10% / 30% of the
   cells hanging and scattered over the mesh (bench/bench_plex_kernels.cu): at most +21% / +33% over the
   plain apply for 3D k = 1..8 (collocated: at most +5% / +18%), where the generic kernel took 2-42x.

   Geometry on the fly (FLY kernels, PatchworkPlexDesc.corners): for multilinear cells the block stages
   each cell's corners (24 doubles in 3D) instead of its factors, and the point-wise step computes the
   factors from them (FlyLine3 / PointsFly3 below), so an apply moves x, y, the index map and the corners:
   less than half the bytes at k >= 2, and far less shared memory per cell, so that the registers bound
   the residency (CellsPerBlockRegs). A variable diffusion coefficient (one value per point) is staged
   with the corners. H100, 16M DoF, multilinear cells (bench/bench_plex_kernels.cu), GDoF/s stored ->
   on the fly with constant / variable diffusion: collocated k = 4..7 19.3 -> 37.7 / 34.7, 22.9 -> 34.6 /
   32.4, 22.9 -> 37.0 / 34.2, 24.1 -> 46.3 / 41.4; Gauss nq = k+2 13.0 -> 15.6 / 14.7, 14.7 -> 16.3 /
   15.4, 17.4 -> 20.7 / 19.7, 17.7 -> 17.3 / 15.9.

   Templates cover 3D k = 1..8 and 2D k = 1..10 with nq = n (collocated or Gauss), n+1, n+2; other nq (up
   to PW_MAX_Q) take a generic kernel with run-time sizes (ApplyGeneric), as do the diagonal and the
   geometric factors, which run once per setup: one group of threads per cell, data in shared memory,
   each pass an entry-wise contraction along one direction (GroupContract). */
#include <cuda_runtime.h>
#include <cuda_pipeline.h>
#include <stddef.h>
#include <stdint.h>
#include <patchwork/plex_kernel.h>
#include <patchwork/hanging_kernel.h>

namespace {

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

/* ---------------------------------------------------------------------------------------------- */
/* Generic kernels (run-time n and nq): one group of TG threads per cell, C groups per block, all
   arrays of a cell in shared memory, each pass an entry-wise contraction. The groups of a block pass the
   same barriers; a group without a cell only skips the work. */

/* The 1D tables of the generic kernels (by value), copied to shared memory on entry */
struct Tables {
  double B[PW_MAX_Q * PW_MAX_N], Bd[PW_MAX_Q * PW_MAX_N], w[PW_MAX_Q];
};

struct Group {
  int       dim, n, nq, nd, nqd; /* nd = n^dim, nqd = nq^dim */
  int       C, TG;               /* cells per block, threads per cell */
  int       cellsz;              /* doubles of shared memory per cell */
  long long ncells;
};

/* out (+)= A along direction dir of in (sizes s0,s1,s2, x fastest): A is nq x n; trans = 0: s[dir] == n
   and out has nq there (interpolation), trans = 1: s[dir] == nq, out has n (its transpose) */
__device__ void GroupContract(int tid, int nt, const double *A, int nq, int n, int trans, int dir, int s0, int s1, int s2, const double *in, double *out, double scale, int add)
{
  const int m = trans ? nq : n, rr = trans ? n : nq;
  const int stride = dir == 0 ? 1 : dir == 1 ? s0 : s0 * s1, outer = dir == 0 ? s1 * s2 : dir == 1 ? s2 : 1;
  const int total = outer * rr * stride;

  for (int idx = tid; idx < total; idx += nt) {
    const int     tt = idx % stride, rest = idx / stride, i = rest % rr, o = rest / rr;
    const double *p  = in + (size_t)o * m * stride + tt;
    double        s  = 0;
    for (int j = 0; j < m; j++) s += (trans ? A[j * n + i] : A[i * n + j]) * p[(size_t)j * stride];
    out[idx] = add ? out[idx] + scale * s : scale * s;
  }
}

static __device__ __forceinline__ int GIdx3(int a, int b) /* index of G_ab in the 3D factor layout */
{
  if (a > b) {
    const int t = a;
    a = b;
    b = t;
  }
  return a == 0 ? 1 + b : a == 1 ? 3 + b : 6;
}

/* Hanging-node constraints of one cell (contract: include/patchwork/hanging_kernel.h; CPU reference:
   src/core/hanging_ref.c, sum-factorized). Here one thread per node, each from the raw copy: a node's
   value comes from the first hanging face or edge that holds it (its claim), the transpose gathers into
   a raw slot every claimed node of every constraint whose grid holds the slot. */
struct HangCon {
  int base, st0, st1, s0, s1, m; /* nodes base + i st0 + j st1 (m = 2) or base + i st0 (m = 1), halves s0, s1 */
};

/* Constraint q (faces 0..2 dim-1, then the 12 edges of 3D) of the mask, if it hangs */
static __device__ bool HangGet(int dim, int n, unsigned long long mask, int q, HangCon *c)
{
  const int st[3] = {1, n, n * n};

  if (q < 2 * dim) {
    const int d = q / 2, side = q % 2;
    int       t[2], k = 0;

    if (!((mask >> q) & 1)) return false;
    for (int e = 0; e < dim; e++)
      if (e != d) t[k++] = e;
    c->m    = dim - 1;
    c->base = side * (n - 1) * st[d];
    c->st0  = st[t[0]];
    c->st1  = dim == 3 ? st[t[1]] : 0;
    c->s0   = (int)((mask >> (PW_HANG_FACE_POS + (dim - 1) * q)) & 1);
    c->s1   = dim == 3 ? (int)((mask >> (PW_HANG_FACE_POS + (dim - 1) * q + 1)) & 1) : 0;
    return true;
  }
  q -= 2 * dim;
  if (dim != 3 || q >= 12 || !((mask >> (PW_HANG_EDGE + q)) & 1)) return false;
  {
    const int d = q / 4, a = q % 2, b = (q / 2) % 2, o0 = d == 0 ? 1 : 0, o1 = d == 2 ? 1 : 2;
    c->m    = 1;
    c->base = a * (n - 1) * st[o0] + b * (n - 1) * st[o1];
    c->st0  = st[d];
    c->st1  = 0;
    c->s0   = (int)((mask >> (PW_HANG_EDGE_POS + q)) & 1);
    c->s1   = 0;
  }
  return true;
}

/* Whether node `node` lies on constraint c, and where (i, j) */
static __device__ bool HangOn(const HangCon &c, int n, int node, int *i, int *j)
{
  const int r = node - c.base;

  if (r < 0) return false;
  for (int jj = 0; jj < (c.m == 2 ? n : 1); jj++)
    for (int ii = 0; ii < n; ii++)
      if (ii * c.st0 + jj * c.st1 == r) {
        *i = ii;
        *j = jj;
        return true;
      }
  return false;
}

/* The first hanging constraint that holds node (its claim), -1 if none */
static __device__ int HangClaim(int dim, int n, unsigned long long mask, int node)
{
  HangCon c;
  int     i, j;

  for (int q = 0; q < 2 * dim + (dim == 3 ? 12 : 0); q++)
    if (HangGet(dim, n, mask, q, &c) && HangOn(c, n, node, &i, &j)) return q;
  return -1;
}

/* C raw at node */
static __device__ double HangForward(int dim, int n, unsigned long long mask, const double *P, const double *raw, int node)
{
  HangCon   c;
  int       i, j;
  double    v = 0;
  const int q = HangClaim(dim, n, mask, node);

  if (q < 0) return raw[node];
  HangGet(dim, n, mask, q, &c);
  HangOn(c, n, node, &i, &j);
  for (int qq = 0; qq < (c.m == 2 ? n : 1); qq++) {
    const double wj = c.m == 2 ? P[(c.s1 * n + j) * n + qq] : 1.0;
    for (int p = 0; p < n; p++) v += P[(c.s0 * n + i) * n + p] * wj * raw[c.base + p * c.st0 + qq * c.st1];
  }
  return v;
}

/* C^T y at raw slot node */
static __device__ double HangTranspose(int dim, int n, unsigned long long mask, const double *P, const double *y, int node)
{
  HangCon c;
  int     p, qq;
  double  v = HangClaim(dim, n, mask, node) < 0 ? y[node] : 0.0;

  for (int q = 0; q < 2 * dim + (dim == 3 ? 12 : 0); q++) {
    if (!HangGet(dim, n, mask, q, &c) || !HangOn(c, n, node, &p, &qq)) continue;
    for (int j = 0; j < (c.m == 2 ? n : 1); j++)
      for (int i = 0; i < n; i++) {
        const int o = c.base + i * c.st0 + j * c.st1;
        if (HangClaim(dim, n, mask, o) != q) continue;
        v += P[(c.s0 * n + i) * n + p] * (c.m == 2 ? P[(c.s1 * n + j) * n + qq] : 1.0) * y[o];
      }
  }
  return v;
}

/* What the generic apply does beyond plain cells: hanging constraints (mask, P), a list of cells to take
   (NULL: all), and the diagonal mode, in which each list entry c*nd + i is one column of C^T A_c C */
struct HangArgs {
  const unsigned long long *mask;
  const double             *P;
  const long long          *list;
  int                       diag;
};

/* Generic apply, the same passes as Apply3/Apply2 with run-time sizes; cells with hanging faces or
   edges interpolate their raw values first and apply the transpose last */
__global__ void __launch_bounds__(256) ApplyGeneric(const Tables tb, const Group g, const HangArgs h, const int *__restrict__ elem, const double *__restrict__ geom, const double *__restrict__ x, double *__restrict__ y)
{
  extern __shared__ __align__(16) double smem[];
  const int       n = g.n, nq = g.nq, nd = g.nd, nqd = g.nqd, nt = g.TG, ncomp = PW_PLEX_NCOMP(g.dim);
  const int       slot = threadIdx.x / nt, tid = threadIdx.x - slot * nt;
  const long long entry = (long long)blockIdx.x * g.C + slot;
  const bool      active = entry < g.ncells;
  const long long item = active && h.list ? h.list[entry] : entry;
  const long long cell = h.diag ? item / nd : item;
  const int       dslot = h.diag ? (int)(item % nd) : -1;
  const unsigned long long mask = active && h.mask ? h.mask[cell] : 0;
  double         *B = smem, *Bd = smem + nq * n;
  double         *u = smem + 2 * nq * n + (size_t)slot * g.cellsz;
  const int       sa = g.dim == 3 ? nq * n * n : nq * n, sc = g.dim == 3 ? nq * nq * n : 0;
  double         *a = u + nd, *b = a + sa, *c = b + sa, *dd = c + sc, *e = dd + sc, *uq = e + sc;
  double         *qd[3] = {uq + nqd, uq + 2 * nqd, uq + 3 * nqd}; /* dx, dy, dz */
  const int      *el = elem + cell * nd;
  const double   *gc = geom + cell * ncomp * nqd;

  for (int k = threadIdx.x; k < nq * n; k += blockDim.x) {
    B[k]  = tb.B[k];
    Bd[k] = tb.Bd[k];
  }
  if (active)
    for (int i = tid; i < nd; i += nt) {
      const int ei = el[i];
      u[i]         = h.diag ? (el[i] == el[dslot] ? 1.0 : 0.0) : ei >= 0 ? x[ei] : 0.0;
    }
  __syncthreads();
  if (mask) { /* u = C raw, through a (scratch until the first pass) */
    for (int i = tid; i < nd; i += nt) a[i] = u[i];
  }
  __syncthreads();
  if (mask)
    for (int i = tid; i < nd; i += nt) u[i] = HangForward(g.dim, n, mask, h.P, a, i);
  __syncthreads();
  if (g.dim == 3) {
    if (active) {
      GroupContract(tid, nt, B, nq, n, 0, 0, n, n, n, u, a, 1, 0);
      GroupContract(tid, nt, Bd, nq, n, 0, 0, n, n, n, u, b, 1, 0);
    }
    __syncthreads();
    if (active) {
      GroupContract(tid, nt, B, nq, n, 0, 1, nq, n, n, a, c, 1, 0);
      GroupContract(tid, nt, B, nq, n, 0, 1, nq, n, n, b, dd, 1, 0);
      GroupContract(tid, nt, Bd, nq, n, 0, 1, nq, n, n, a, e, 1, 0);
    }
    __syncthreads();
    if (active) {
      GroupContract(tid, nt, B, nq, n, 0, 2, nq, nq, n, c, uq, 1, 0);
      GroupContract(tid, nt, B, nq, n, 0, 2, nq, nq, n, dd, qd[0], 1, 0);
      GroupContract(tid, nt, B, nq, n, 0, 2, nq, nq, n, e, qd[1], 1, 0);
      GroupContract(tid, nt, Bd, nq, n, 0, 2, nq, nq, n, c, qd[2], 1, 0);
    }
  } else {
    if (active) {
      GroupContract(tid, nt, B, nq, n, 0, 0, n, n, 1, u, a, 1, 0);
      GroupContract(tid, nt, Bd, nq, n, 0, 0, n, n, 1, u, b, 1, 0);
    }
    __syncthreads();
    if (active) {
      GroupContract(tid, nt, B, nq, n, 0, 1, nq, n, 1, a, uq, 1, 0);
      GroupContract(tid, nt, B, nq, n, 0, 1, nq, n, 1, b, qd[0], 1, 0);
      GroupContract(tid, nt, Bd, nq, n, 0, 1, nq, n, 1, a, qd[1], 1, 0);
    }
  }
  __syncthreads();
  if (active)
    for (int q = tid; q < nqd; q += nt) {
      double gr[3], f[3] = {0, 0, 0};
      for (int k = 0; k < g.dim; k++) gr[k] = qd[k][q];
      for (int k = 0; k < g.dim; k++)
        for (int l = 0; l < g.dim; l++) f[k] += gc[(size_t)(g.dim == 3 ? GIdx3(k, l) : 1 + k + l) * nqd + q] * gr[l];
      uq[q] *= gc[q];
      for (int k = 0; k < g.dim; k++) qd[k][q] = f[k];
    }
  __syncthreads();
  if (g.dim == 3) {
    if (active) {
      GroupContract(tid, nt, B, nq, n, 1, 2, nq, nq, nq, uq, c, 1, 0);
      GroupContract(tid, nt, Bd, nq, n, 1, 2, nq, nq, nq, qd[2], c, 1, 1);
      GroupContract(tid, nt, B, nq, n, 1, 2, nq, nq, nq, qd[0], dd, 1, 0);
      GroupContract(tid, nt, B, nq, n, 1, 2, nq, nq, nq, qd[1], e, 1, 0);
    }
    __syncthreads();
    if (active) {
      GroupContract(tid, nt, B, nq, n, 1, 1, nq, nq, n, c, a, 1, 0);
      GroupContract(tid, nt, Bd, nq, n, 1, 1, nq, nq, n, e, a, 1, 1);
      GroupContract(tid, nt, B, nq, n, 1, 1, nq, nq, n, dd, b, 1, 0);
    }
    __syncthreads();
    if (active) {
      GroupContract(tid, nt, B, nq, n, 1, 0, nq, n, n, a, u, 1, 0);
      GroupContract(tid, nt, Bd, nq, n, 1, 0, nq, n, n, b, u, 1, 1);
    }
  } else {
    if (active) {
      GroupContract(tid, nt, B, nq, n, 1, 1, nq, nq, 1, uq, a, 1, 0);
      GroupContract(tid, nt, Bd, nq, n, 1, 1, nq, nq, 1, qd[1], a, 1, 1);
      GroupContract(tid, nt, B, nq, n, 1, 1, nq, nq, 1, qd[0], b, 1, 0);
    }
    __syncthreads();
    if (active) {
      GroupContract(tid, nt, B, nq, n, 1, 0, nq, n, 1, a, u, 1, 0);
      GroupContract(tid, nt, Bd, nq, n, 1, 0, nq, n, 1, b, u, 1, 1);
    }
  }
  __syncthreads();
  if (mask) { /* u = C^T u, through a */
    for (int i = tid; i < nd; i += nt) a[i] = u[i];
  }
  __syncthreads();
  if (mask)
    for (int i = tid; i < nd; i += nt) u[i] = HangTranspose(g.dim, n, mask, h.P, a, i);
  __syncthreads();
  if (active && h.diag) { /* the column's entry at its unknown: the sum over the slots that hold it */
    if (tid == 0) {
      double v = 0;
      for (int i = 0; i < nd; i++)
        if (el[i] == el[dslot]) v += u[i];
      if (el[dslot] >= 0) atomicAdd(y + el[dslot], v);
    }
  } else if (active)
    for (int i = tid; i < nd; i += nt) {
      const int ei = el[i];
      if (ei >= 0) atomicAdd(y + ei, u[i]);
    }
}

/* Diagonal: for every factor, the 1D contractions with B.B, Bd.Bd or Bd.B (elementwise products) in
   each direction, grouped by the matrices still to apply (3D):
     z  T1 = BB g0 + DD G22, T2 = BB G00, T3 = BB G11, T4 = 2 BB G01, T5 = 2 DB G02, T6 = 2 DB G12
     y  U1 = BB T1 + DD T3 + DB T6, U2 = BB T2, U3 = DB T4 + BB T5
     x  diag = BB U1 + DD U2 + DB U3
   2D:  y  T1 = BB g0 + DD G11, T2 = BB G00, T3 = 2 DB G01;  x  diag = BB T1 + DD T2 + DB T3 */
__global__ void __launch_bounds__(256) DiagonalGeneric(const Tables tb, const Group g, const unsigned long long *__restrict__ hang, const int *__restrict__ elem, const double *__restrict__ geom, double *__restrict__ y)
{
  extern __shared__ __align__(16) double smem[];
  const int       n = g.n, nq = g.nq, nd = g.nd, nqd = g.nqd, nt = g.TG, ncomp = PW_PLEX_NCOMP(g.dim);
  const int       slot = threadIdx.x / nt, tid = threadIdx.x - slot * nt;
  const long long cell = (long long)blockIdx.x * g.C + slot;
  const bool      active = cell < g.ncells && !(hang && hang[cell]); /* hanging cells: ApplyGeneric, column by column */
  double         *BB = smem, *DD = BB + nq * n, *DB = DD + nq * n;
  double         *T = smem + 3 * nq * n + (size_t)slot * g.cellsz;
  const double   *gc = geom + cell * ncomp * nqd;
  const int      *el = elem + cell * nd;

  for (int k = threadIdx.x; k < nq * n; k += blockDim.x) {
    BB[k] = tb.B[k] * tb.B[k];
    DD[k] = tb.Bd[k] * tb.Bd[k];
    DB[k] = tb.Bd[k] * tb.B[k];
  }
  __syncthreads();
  if (g.dim == 3) {
    const int st = nq * nq * n, su = nq * n * n;
    double   *U = T + 6 * st;
    if (active) {
      GroupContract(tid, nt, BB, nq, n, 1, 2, nq, nq, nq, gc, T, 1, 0);
      GroupContract(tid, nt, DD, nq, n, 1, 2, nq, nq, nq, gc + 6 * nqd, T, 1, 1);
      GroupContract(tid, nt, BB, nq, n, 1, 2, nq, nq, nq, gc + 1 * nqd, T + st, 1, 0);
      GroupContract(tid, nt, BB, nq, n, 1, 2, nq, nq, nq, gc + 4 * nqd, T + 2 * st, 1, 0);
      GroupContract(tid, nt, BB, nq, n, 1, 2, nq, nq, nq, gc + 2 * nqd, T + 3 * st, 2, 0);
      GroupContract(tid, nt, DB, nq, n, 1, 2, nq, nq, nq, gc + 3 * nqd, T + 4 * st, 2, 0);
      GroupContract(tid, nt, DB, nq, n, 1, 2, nq, nq, nq, gc + 5 * nqd, T + 5 * st, 2, 0);
    }
    __syncthreads();
    if (active) {
      GroupContract(tid, nt, BB, nq, n, 1, 1, nq, nq, n, T, U, 1, 0);
      GroupContract(tid, nt, DD, nq, n, 1, 1, nq, nq, n, T + 2 * st, U, 1, 1);
      GroupContract(tid, nt, DB, nq, n, 1, 1, nq, nq, n, T + 5 * st, U, 1, 1);
      GroupContract(tid, nt, BB, nq, n, 1, 1, nq, nq, n, T + st, U + su, 1, 0);
      GroupContract(tid, nt, DB, nq, n, 1, 1, nq, nq, n, T + 3 * st, U + 2 * su, 1, 0);
      GroupContract(tid, nt, BB, nq, n, 1, 1, nq, nq, n, T + 4 * st, U + 2 * su, 1, 1);
    }
    __syncthreads();
    if (active) { /* the result over T, free now */
      GroupContract(tid, nt, BB, nq, n, 1, 0, nq, n, n, U, T, 1, 0);
      GroupContract(tid, nt, DD, nq, n, 1, 0, nq, n, n, U + su, T, 1, 1);
      GroupContract(tid, nt, DB, nq, n, 1, 0, nq, n, n, U + 2 * su, T, 1, 1);
    }
  } else {
    const int st = nq * n;
    double   *D = T + 3 * st;
    if (active) {
      GroupContract(tid, nt, BB, nq, n, 1, 1, nq, nq, 1, gc, T, 1, 0);
      GroupContract(tid, nt, DD, nq, n, 1, 1, nq, nq, 1, gc + 3 * nqd, T, 1, 1);
      GroupContract(tid, nt, BB, nq, n, 1, 1, nq, nq, 1, gc + 1 * nqd, T + st, 1, 0);
      GroupContract(tid, nt, DB, nq, n, 1, 1, nq, nq, 1, gc + 2 * nqd, T + 2 * st, 2, 0);
    }
    __syncthreads();
    if (active) {
      GroupContract(tid, nt, BB, nq, n, 1, 0, nq, n, 1, T, D, 1, 0);
      GroupContract(tid, nt, DD, nq, n, 1, 0, nq, n, 1, T + st, D, 1, 1);
      GroupContract(tid, nt, DB, nq, n, 1, 0, nq, n, 1, T + 2 * st, D, 1, 1);
    }
    T = D;
  }
  __syncthreads();
  if (active)
    for (int i = tid; i < nd; i += nt) {
      const int ei = el[i];
      if (ei >= 0) atomicAdd(y + ei, T[i]);
    }
}

/* Geometric factors. J[d][a] = dx_d/dxi_a by Bd in direction a and B in the others (as the reference):
   3D, per coordinate d: x pass a = B X_d, b = Bd X_d; y pass c_d = B a, e_d = Bd a, f_d = B b; then at
   each point J[d][0] = B_z f_d, J[d][1] = B_z e_d, J[d][2] = Bd_z c_d (sums of n terms from shared).
   2D: x pass a_d, b_d; at each point J[d][0] = B_y b_d, J[d][1] = Bd_y a_d. A cell is bad when det J is
   zero at a point or takes both signs; its factors are computed with det = 1 there (finite, as the
   reference). */
__global__ void __launch_bounds__(256) GeometryGeneric(const Tables tb, const Group g, const double *__restrict__ coords, const double *__restrict__ diffusion, const double *__restrict__ reaction, double alpha, double beta, double *__restrict__ geom, int *__restrict__ nbad)
{
  extern __shared__ __align__(16) double smem[];
  __shared__ int  flags[32];
  const int       dim = g.dim, n = g.n, nq = g.nq, nd = g.nd, nqd = g.nqd, nt = g.TG, ncomp = PW_PLEX_NCOMP(dim);
  const int       slot = threadIdx.x / nt, tid = threadIdx.x - slot * nt;
  const long long cell = (long long)blockIdx.x * g.C + slot;
  const bool      active = cell < g.ncells;
  double         *B = smem, *Bd = B + nq * n, *W = Bd + nq * n;
  double         *X = smem + 2 * nq * n + PW_MAX_Q + (size_t)slot * g.cellsz; /* dim x nd coordinates */
  double         *P = X + dim * nd;                                          /* x pass, 2 (or 2 dim in 2D) arrays */
  const int       sa = dim == 3 ? nq * n * n : nq * n, sr = nq * nq * n;
  double         *R = P + 2 * sa; /* 3D: 9 arrays c_d, e_d, f_d */

  for (int k = threadIdx.x; k < nq * n; k += blockDim.x) {
    B[k]  = tb.B[k];
    Bd[k] = tb.Bd[k];
  }
  for (int k = threadIdx.x; k < nq; k += blockDim.x) W[k] = tb.w[k];
  if (tid == 0) flags[slot] = 0;
  if (active)
    for (int i = tid; i < dim * nd; i += nt) X[i] = coords[cell * dim * nd + i];
  __syncthreads();
  if (dim == 3) {
    for (int d = 0; d < 3; d++) {
      if (active) {
        GroupContract(tid, nt, B, nq, n, 0, 0, n, n, n, X + d * nd, P, 1, 0);
        GroupContract(tid, nt, Bd, nq, n, 0, 0, n, n, n, X + d * nd, P + sa, 1, 0);
      }
      __syncthreads();
      if (active) {
        GroupContract(tid, nt, B, nq, n, 0, 1, nq, n, n, P, R + (3 * d) * sr, 1, 0);
        GroupContract(tid, nt, Bd, nq, n, 0, 1, nq, n, n, P, R + (3 * d + 1) * sr, 1, 0);
        GroupContract(tid, nt, B, nq, n, 0, 1, nq, n, n, P + sa, R + (3 * d + 2) * sr, 1, 0);
      }
      __syncthreads();
    }
  } else {
    if (active)
      for (int d = 0; d < 2; d++) {
        GroupContract(tid, nt, B, nq, n, 0, 0, n, n, 1, X + d * nd, P + (2 * d) * sa, 1, 0);
        GroupContract(tid, nt, Bd, nq, n, 0, 0, n, n, 1, X + d * nd, P + (2 * d + 1) * sa, 1, 0);
      }
    __syncthreads();
  }
  if (active) {
    int f = 0;
    for (int q = tid; q < nqd; q += nt) {
      const int qx = q % nq, qy = (q / nq) % nq, qz = q / (nq * nq);
      double    J[3][3], det, wq = W[qx] * W[qy];

      if (dim == 3) {
        wq *= W[qz];
        for (int d = 0; d < 3; d++) {
          const double *c = R + (3 * d) * sr + qy * nq + qx, *e = c + sr, *fd = e + sr;
          double        s0 = 0, s1 = 0, s2 = 0;
          for (int m = 0; m < n; m++) {
            s0 += B[qz * n + m] * fd[m * nq * nq];
            s1 += B[qz * n + m] * e[m * nq * nq];
            s2 += Bd[qz * n + m] * c[m * nq * nq];
          }
          J[d][0] = s0;
          J[d][1] = s1;
          J[d][2] = s2;
        }
      } else {
        for (int d = 0; d < 2; d++) {
          const double *a = P + (2 * d) * sa + qx, *b = a + sa;
          double        s0 = 0, s1 = 0;
          for (int m = 0; m < n; m++) {
            s0 += B[qy * n + m] * b[m * nq];
            s1 += Bd[qy * n + m] * a[m * nq];
          }
          J[d][0] = s0;
          J[d][1] = s1;
        }
      }
      /* adjugate A (J^-1 = A / det): G = w beta c A A^T / |det| */
      double A[3][3];
      if (dim == 3) {
        A[0][0] = J[1][1] * J[2][2] - J[1][2] * J[2][1];
        A[0][1] = J[0][2] * J[2][1] - J[0][1] * J[2][2];
        A[0][2] = J[0][1] * J[1][2] - J[0][2] * J[1][1];
        A[1][0] = J[1][2] * J[2][0] - J[1][0] * J[2][2];
        A[1][1] = J[0][0] * J[2][2] - J[0][2] * J[2][0];
        A[1][2] = J[0][2] * J[1][0] - J[0][0] * J[1][2];
        A[2][0] = J[1][0] * J[2][1] - J[1][1] * J[2][0];
        A[2][1] = J[0][1] * J[2][0] - J[0][0] * J[2][1];
        A[2][2] = J[0][0] * J[1][1] - J[0][1] * J[1][0];
        det     = J[0][0] * A[0][0] + J[0][1] * A[1][0] + J[0][2] * A[2][0];
      } else {
        A[0][0] = J[1][1];
        A[0][1] = -J[0][1];
        A[1][0] = -J[1][0];
        A[1][1] = J[0][0];
        det     = J[0][0] * J[1][1] - J[0][1] * J[1][0];
      }
      f |= det > 0 ? 1 : det < 0 ? 2 : 4;
      if (det == 0) det = 1;
      const double ad = fabs(det), cq = beta * (diffusion ? diffusion[cell * nqd + q] : 1.0), rq = alpha * (reaction ? reaction[cell * nqd + q] : 1.0);
      double      *gq = geom + cell * ncomp * nqd + q;

      gq[0] = wq * ad * rq;
      for (int a = 0; a < dim; a++)
        for (int b = a; b < dim; b++) {
          double s = 0;
          for (int d = 0; d < dim; d++) s += A[a][d] * A[b][d];
          gq[(size_t)(dim == 3 ? GIdx3(a, b) : 1 + a + b) * nqd] = wq * cq * s / ad;
        }
    }
    if (f) atomicOr(&flags[slot], f);
  }
  __syncthreads();
  if (active && tid == 0) {
    const int f = flags[slot];
    if ((f & 4) || (f & 3) == 3) atomicAdd(nbad, 1);
  }
}

/* ---------------------------------------------------------------------------------------------- */
/* Host side */

static int Pow(int b, int e)
{
  int p = 1;
  for (int i = 0; i < e; i++) p *= b;
  return p;
}

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

static cudaError_t CheckSizes(int dim, int degree, int nq)
{
  if (dim != 2 && dim != 3) return cudaErrorInvalidValue;
  if (degree < 1 || degree > (dim == 3 ? 8 : PW_MAX_DEGREE)) return cudaErrorInvalidValue;
  if (nq < degree + 1 || nq > PW_MAX_Q) return cudaErrorInvalidValue;
  return cudaSuccess;
}

/* Validate an apply/diagonal descriptor; *empty: nothing to do */
static cudaError_t CheckDesc(const PatchworkPlexDesc *d, int *empty)
{
  *empty = 0;
  if (!d) return cudaErrorInvalidValue;
  cudaError_t err = CheckSizes(d->dim, d->degree, d->nq);
  if (err != cudaSuccess) return err;
  if (d->collocated && d->nq != d->degree + 1) return cudaErrorInvalidValue;
  if (d->ncells < 0) return cudaErrorInvalidValue;
  if (d->ncells == 0) {
    *empty = 1;
    return cudaSuccess;
  }
  if (!d->elem || (!d->geom && !d->corners)) return cudaErrorInvalidValue;
  if (d->hang && (!d->hangP || (d->nhang > 0 && !d->hang_cells) || (d->nhang_diag > 0 && !d->hang_diag))) return cudaErrorInvalidValue;
  if (d->corners && (d->nq > d->degree + 3 || (d->hang && d->nhang > 0))) return cudaErrorInvalidValue; /* the generic kernel reads geom */
  return cudaSuccess;
}

/* Shape of a generic launch: TG threads per cell, C cells per block, within 64 KiB of shared memory
   where possible; returns the dynamic shared memory bytes and sets the kernel's limit when above 48 KiB */
template <typename K>
static cudaError_t GroupShape(K kern, Group *g, size_t table_doubles, size_t *shmem)
{
  const size_t cellb = (size_t)g->cellsz * sizeof(double), tab = table_doubles * sizeof(double);

  g->TG = g->nqd <= 64 ? 32 : g->nqd <= 256 ? 64 : 128;
  g->C  = 256 / g->TG;
  while (g->C > 1 && tab + g->C * cellb > 64 * 1024) g->C--;
  *shmem = tab + g->C * cellb;
  if (*shmem > (size_t)kSharedPerBlock) return cudaErrorInvalidValue;
  if (*shmem > 48 * 1024) return cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)*shmem);
  return cudaSuccess;
}

static Group MakeGroup(int dim, int degree, int nq, long long ncells)
{
  Group g;
  g.dim    = dim;
  g.n      = degree + 1;
  g.nq     = nq;
  g.nd     = Pow(g.n, dim);
  g.nqd    = Pow(nq, dim);
  g.ncells = ncells;
  g.C = g.TG = g.cellsz = 0;
  return g;
}

static unsigned GroupBlocks(const Group &g) { return (unsigned)((g.ncells + g.C - 1) / g.C); }

/* The generic apply over all cells (list NULL) or the nlist entries of list (cells, or in the diagonal
   mode cell*nd + slot) */
static cudaError_t ApplyGenericLaunch(const PatchworkPlexDesc *d, const double *x, double *y, const long long *list, long long nlist, int diag, cudaStream_t s)
{
  Group    g = MakeGroup(d->dim, d->degree, d->nq, list ? nlist : d->ncells);
  Tables   tb;
  size_t   shmem;
  HangArgs h = {d->hang, d->hangP, list, diag};

  Fill1D(g.n, g.nq, 0, d->interp, d->deriv, tb.B, tb.Bd); /* interp is the identity when collocated */
  const int sa = g.dim == 3 ? g.nq * g.n * g.n : g.nq * g.n, sc = g.dim == 3 ? g.nq * g.nq * g.n : 0;
  g.cellsz = g.nd + 2 * sa + 3 * sc + (g.dim + 1) * g.nqd;
  cudaError_t err = GroupShape(ApplyGeneric, &g, 2 * g.nq * g.n, &shmem);
  if (err != cudaSuccess) return err;
  if (g.ncells == 0) return cudaSuccess;
  ApplyGeneric<<<GroupBlocks(g), g.C * g.TG, shmem, s>>>(tb, g, h, d->elem, d->geom, x, y);
  return cudaGetLastError();
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

extern "C" int PatchworkPlexApplyCUDA(const PatchworkPlexDesc *d, const double *x, double *y, void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  int          empty;
  cudaError_t  err = CheckDesc(d, &empty);

  if (err != cudaSuccess || empty) return (int)err;
  if (!x || !y) return (int)cudaErrorInvalidValue;
  if (d->dim == 3) {
    switch (d->degree) {
    case 1: return (int)ApplyN<3, 2>(d, x, y, s);
    case 2: return (int)ApplyN<3, 3>(d, x, y, s);
    case 3: return (int)ApplyN<3, 4>(d, x, y, s);
    case 4: return (int)ApplyN<3, 5>(d, x, y, s);
    case 5: return (int)ApplyN<3, 6>(d, x, y, s);
    case 6: return (int)ApplyN<3, 7>(d, x, y, s);
    case 7: return (int)ApplyN<3, 8>(d, x, y, s);
    case 8: return (int)ApplyN<3, 9>(d, x, y, s);
    default: return (int)cudaErrorInvalidValue;
    }
  }
  switch (d->degree) {
  case 1: return (int)ApplyN<2, 2>(d, x, y, s);
  case 2: return (int)ApplyN<2, 3>(d, x, y, s);
  case 3: return (int)ApplyN<2, 4>(d, x, y, s);
  case 4: return (int)ApplyN<2, 5>(d, x, y, s);
  case 5: return (int)ApplyN<2, 6>(d, x, y, s);
  case 6: return (int)ApplyN<2, 7>(d, x, y, s);
  case 7: return (int)ApplyN<2, 8>(d, x, y, s);
  case 8: return (int)ApplyN<2, 9>(d, x, y, s);
  case 9: return (int)ApplyN<2, 10>(d, x, y, s);
  case 10: return (int)ApplyN<2, 11>(d, x, y, s);
  default: return (int)cudaErrorInvalidValue;
  }
}

extern "C" int PatchworkPlexDiagonalCUDA(const PatchworkPlexDesc *d, double *y, void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  int          empty;
  cudaError_t  err = CheckDesc(d, &empty);
  Tables       tb;
  size_t       shmem;

  if (err != cudaSuccess || empty) return (int)err;
  if (!y || !d->geom) return (int)cudaErrorInvalidValue;
  Group g = MakeGroup(d->dim, d->degree, d->nq, d->ncells);
  Fill1D(g.n, g.nq, 0, d->interp, d->deriv, tb.B, tb.Bd);
  g.cellsz = g.dim == 3 ? 6 * g.nq * g.nq * g.n + 3 * g.nq * g.n * g.n : 3 * g.nq * g.n + g.n * g.n;
  err      = GroupShape(DiagonalGeneric, &g, 3 * g.nq * g.n, &shmem);
  if (err != cudaSuccess) return (int)err;
  DiagonalGeneric<<<GroupBlocks(g), g.C * g.TG, shmem, s>>>(tb, g, d->hang, d->elem, d->geom, y);
  if ((err = cudaGetLastError()) != cudaSuccess) return (int)err;
  if (d->hang && d->nhang_diag > 0) return (int)ApplyGenericLaunch(d, NULL, y, d->hang_diag, d->nhang_diag, 1, s);
  return (int)cudaSuccess;
}

extern "C" int PatchworkPlexGeometryCUDA(const PatchworkPlexGeomDesc *gd, double *geom, int *nbad, void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  Tables       tb;
  size_t       shmem;
  int         *dcount = NULL;

  if (!gd || !nbad) return (int)cudaErrorInvalidValue;
  cudaError_t err = CheckSizes(gd->dim, gd->degree, gd->nq);
  if (err != cudaSuccess) return (int)err;
  if (gd->ncells < 0) return (int)cudaErrorInvalidValue;
  *nbad = 0;
  if (gd->ncells == 0) return (int)cudaSuccess;
  if (!gd->coords || !geom) return (int)cudaErrorInvalidValue;
  Group g = MakeGroup(gd->dim, gd->degree, gd->nq, gd->ncells);
  Fill1D(g.n, g.nq, 0, gd->interp, gd->deriv, tb.B, tb.Bd);
  for (int q = 0; q < g.nq; q++) tb.w[q] = gd->weights[q];
  g.cellsz = g.dim == 3 ? 3 * g.nd + 2 * g.nq * g.n * g.n + 9 * g.nq * g.nq * g.n : 2 * g.nd + 4 * g.nq * g.n;
  err      = GroupShape(GeometryGeneric, &g, 2 * g.nq * g.n + PW_MAX_Q, &shmem);
  if (err != cudaSuccess) return (int)err;
  if ((err = cudaMallocAsync((void **)&dcount, sizeof(int), s)) != cudaSuccess) return (int)err;
  err = cudaMemsetAsync(dcount, 0, sizeof(int), s);
  if (err == cudaSuccess) {
    GeometryGeneric<<<GroupBlocks(g), g.C * g.TG, shmem, s>>>(tb, g, gd->coords, gd->diffusion, gd->reaction, gd->alpha, gd->beta, geom, dcount);
    err = cudaGetLastError();
  }
  if (err == cudaSuccess) err = cudaMemcpyAsync(nbad, dcount, sizeof(int), cudaMemcpyDeviceToHost, s);
  const cudaError_t ferr = cudaFreeAsync(dcount, s);
  if (err == cudaSuccess) err = cudaStreamSynchronize(s);
  return (int)(err != cudaSuccess ? err : ferr);
}
