/* CUDA kernels of the Cartesian tensor-product operator (contract: include/patchwork/tensor_kernel.h;
   CPU reference: src/core/tensor_ref.c).

   Apply, per cell, by sum factorization with the 1D matrices folded on the host into
     3D: a = M_x u, b = cs0 K_x u;  c = M_y a, d = cs1 K_y a + M_y b;  v = (cm M + cs2 K)_z c + M_z d
     2D: a = M_x u, b = cs0 K_x u;  v = (cm M + cs1 K)_y a + M_y b
   which is the reference's cm MMM + cs0 MMK_x + cs1 MK_yM + cs2 K_zMM (7 contractions in 3D, 4 in 2D).

   Launch geometry (3D): a block holds C cells and n^2 threads per cell. Each thread owns one line of
   the cell in every pass and applies the SAME n x n matrix to it, so all matrix entries are uniform
   across the block: with the loops fully unrolled (templates on n) they are compile-time offsets
   into the kernel-parameter constant bank, read through uniform registers (no shared-memory traffic
   and no per-thread registers for the matrices). In 3D, when the 1D matrices are centro-symmetric
   (always, for the mass and stiffness of the Gauss-Lobatto basis; checked on the host), each line
   product uses the even-odd split (Coef3EO): half the FMAs and coefficients, fewer registers;
   other matrices take the plain products (Coef3). The lines change direction between passes through shared
   memory, two buffers of n^3 per cell, updated in place (a thread writes only the line it has read):
     gather  thread (i,j): u(i,j,:) from x (coalesced in i)          -> S0
     x pass  thread (j,l): S0(:,j,l) -> a -> S0, b -> S1
     y pass  thread (i,l): S0(i,:,l), S1(i,:,l) -> c -> S0, d -> S1
     z pass  thread (i,j): S0(i,j,:), S1(i,j,:) -> v in registers -> y (coalesced in i)
   Thread t is (a, q, b) = (t mod n, cell slot (t / n) mod C, t / (n C)): a warp spans the first index
   across neighbouring cells, so that the gather and the scatter of one row of nodes touch a run of
   C k + 1 consecutive entries of x and y (2-19% faster at k = 2..8, 1e8 DoF, than n^2 consecutive
   threads per cell, which touch runs of n). The paddings (LD, PS, CS below) minimize the
   shared-memory wavefronts of the four access patterns for 8- and 4-byte words under this numbering
   (bench/smem_wavefronts.py). 2D is the same with n threads per cell and two passes
   (plain products). Degrees: 1..8 in 3D, 1..10 in 2D; others return cudaErrorInvalidValue, as does
   a descriptor whose boxes do not hold the nodes of its cells.

   Scatter: PW_SCATTER_ATOMIC adds with atomicAdd in one launch; PW_SCATTER_COLORED makes 2^dim
   launches, each over the cells whose index parity in every direction equals the color, and adds
   with plain loads and stores (cells of one color share no node). With atomics, the 3D kernel marches
   in z (Apply3D): a block takes its C cells through Z cells in z, one after the other, and each
   thread carries the top node of its input and output columns to the next cell, so that a z-face
   is loaded once and added once; nodes shared by x-neighbours in one warp are added once, after a
   shuffle. On the H100 at 1e8 DoF that cut the L2 traffic (the L2 was the busiest unit, 72% at
   k = 4, by Nsight Compute) and ran 1.3x faster at k = 4 (70.7 -> 89.8 GDoF/s), 1.6x at k = 1,
   the same at k = 7, 8, than one cell per thread column.

   Overwrite (d->overwrite): y is set, not added into: a memset of the out box, then the add. Zeroing
   y inside the one-cell 3D kernel instead, while the lines are in L2 (slab by slab, a block waiting
   before its scatter until the slabs it touches are zeroed), was slower on the H100 at 1e8 DoF,
   k = 4: 33.6 GDoF/s with tiles handed out by an atomic counter, 43.7 with a cooperative persistent
   grid (whose tile loop alone costs a quarter), against 57.0 for memset + add and 66.3 for the add
   alone. */
#include <cuda_runtime.h>
#include <math.h>
#include <patchwork/tensor_kernel.h>

namespace {

/* Cells of one launch: cell t = (tx,ty,tz) is global cell first + step*t, t < count (lexicographic) */
struct Geom {
  int       dim, n;
  int       first[3], count[3], step;
  int       nodes[3];
  int       in_start[3], in_size[3], out_start[3], out_size[3];
  int       dirichlet;
  long long ncells;
};

/* Folded 1D matrices, row major n x n; passed by value (constant bank) */
template <typename T, int N>
struct Coef3 {
  T M[N * N], Kx[N * N], Ky[N * N], Az[N * N]; /* M, cs0 K, cs1 K, cm M + cs2 K */
};
/* The same four matrices split by even-odd decomposition, for centro-symmetric 1D matrices
   (A[i][j] = A[n-1-i][n-1-j], true of mass and stiffness on Gauss-Lobatto nodes): with h = n/2,
   he = (n+1)/2, ue[j] = u[j] + u[n-1-j] (j < h), ue[h] = u[h] (odd n), uo[j] = u[j] - u[n-1-j],
     P_i = sum_j E[i][j] ue[j],  Q_i = sum_j O[i][j] uo[j],  (A u)[i] = P_i + Q_i, (A u)[n-1-i] = P_i - Q_i
   with E[i][j] = (A[i][j] + A[i][n-1-j])/2, E[i][h] = A[i][h], O[i][j] = (A[i][j] - A[i][n-1-j])/2:
   about half the multiply-adds and half the coefficients of the plain product. */
template <typename T, int N>
struct Coef3EO {
  static constexpr int H = N / 2, HE = (N + 1) / 2;
  T ME[HE * HE], MO[H * H], KxE[HE * HE], KxO[H * H], KyE[HE * HE], KyO[H * H], AzE[HE * HE], AzO[H * H];
};

template <typename T, int N>
struct Coef2 {
  T M[N * N], Kx[N * N], Ay[N * N]; /* M, cs0 K, cm M + cs1 K */
};

/* Shared-memory layout of a 3D cell tile: entry (i,j,l) of cell slot q at q*CS + l*PS + j*LD + i;
   C cells per block; MINB: minimum resident blocks for __launch_bounds__. At n <= 7 it is the
   occupancy of the one-cell kernel, which the z-marching one would lose to its loop state otherwise
   (at n = 5: 74 registers unbounded, 47 bounded; bounded ran 1.06x faster at k = 4 and 1.12x at
   k = 1, 1e8 DoF, Z = 4, and about as fast at k = 6); at n = 8 it
   caps the registers at 80 so that 3 blocks fit; n = 9 runs faster unbounded. The plain-product
   kernels (non-centro-symmetric matrices only) spill a little under these bounds. Z: cells a block
   marches through in z, the best on the H100 at 5e7 and 1e8 DoF among 2, 4, 6, 8, 16, 32. */
template <int N>
struct Lay3;
template <> struct Lay3<2> { static constexpr int LD = 3, PS = 5, CS = 10, C = 64, MINB = 8, Z = 16; };
template <> struct Lay3<3> { static constexpr int LD = 4, PS = 11, CS = 35, C = 32, MINB = 7, Z = 8; };
template <> struct Lay3<4> { static constexpr int LD = 5, PS = 19, CS = 76, C = 16, MINB = 6, Z = 4; };
template <> struct Lay3<5> { static constexpr int LD = 6, PS = 34, CS = 165, C = 10, MINB = 5, Z = 4; };
template <> struct Lay3<6> { static constexpr int LD = 9, PS = 52, CS = 326, C = 8, MINB = 4, Z = 4; };
template <> struct Lay3<7> { static constexpr int LD = 10, PS = 67, CS = 471, C = 5, MINB = 4, Z = 4; };
template <> struct Lay3<8> { static constexpr int LD = 9, PS = 71, CS = 568, C = 4, MINB = 3, Z = 4; };
template <> struct Lay3<9> { static constexpr int LD = 11, PS = 101, CS = 905, C = 3, MINB = 1, Z = 4; };

/* 2D: entry (i,j) of cell slot q at q*CS + j*LD + i */
template <int N>
struct Lay2;
template <> struct Lay2<2> { static constexpr int LD = 3, CS = 6, C = 64; };
template <> struct Lay2<3> { static constexpr int LD = 3, CS = 9, C = 64; };
template <> struct Lay2<4> { static constexpr int LD = 5, CS = 20, C = 64; };
template <> struct Lay2<5> { static constexpr int LD = 5, CS = 25, C = 32; };
template <> struct Lay2<6> { static constexpr int LD = 9, CS = 54, C = 32; };
template <> struct Lay2<7> { static constexpr int LD = 10, CS = 71, C = 32; };
template <> struct Lay2<8> { static constexpr int LD = 9, CS = 72, C = 32; };
template <> struct Lay2<9> { static constexpr int LD = 11, CS = 105, C = 24; };
template <> struct Lay2<10> { static constexpr int LD = 11, CS = 110, C = 16; };
template <> struct Lay2<11> { static constexpr int LD = 11, CS = 121, C = 16; };

/* Global cell of the launch's cell number cid */
__device__ __forceinline__ void DecodeCell(const Geom &g, long long cid, int e[3])
{
  const long long cxy = (long long)g.count[0] * g.count[1];
  const long long tz  = cid / cxy;
  const long long r   = cid - tz * cxy;
  const int       ty  = (int)(r / g.count[0]);
  const int       tx  = (int)(r - (long long)ty * g.count[0]);

  e[0] = g.first[0] + g.step * tx;
  e[1] = g.first[1] + g.step * ty;
  e[2] = g.first[2] + g.step * (int)tz;
}

__device__ __forceinline__ bool OnEdge(int gi, int nodes) { return gi == 0 || gi == nodes - 1; }

template <bool ATOMIC, typename T>
__device__ __forceinline__ void AddOut(T *p, T v)
{
  if (ATOMIC) atomicAdd(p, v);
  else *p += v;
}

/* The three passes of the 3D apply on one line per thread, plain products: x pass a = M u,
   b = cs0 K u; y pass c = M a, d = cs1 K a + M b; z pass v = (cm M + cs2 K) c + M d. */
template <typename T, int N>
__device__ __forceinline__ void PassX(const Coef3<T, N> &cf, const T (&u)[N], T (&a)[N], T (&b)[N])
{
#pragma unroll
  for (int i = 0; i < N; i++) {
    T sa = T(0), sb = T(0);
#pragma unroll
    for (int m = 0; m < N; m++) {
      sa += cf.M[i * N + m] * u[m];
      sb += cf.Kx[i * N + m] * u[m];
    }
    a[i] = sa;
    b[i] = sb;
  }
}

template <typename T, int N>
__device__ __forceinline__ void PassY(const Coef3<T, N> &cf, const T (&a)[N], const T (&b)[N], T (&c)[N], T (&d)[N])
{
#pragma unroll
  for (int j = 0; j < N; j++) {
    T sc = T(0), sd = T(0);
#pragma unroll
    for (int m = 0; m < N; m++) {
      sc += cf.M[j * N + m] * a[m];
      sd += cf.Ky[j * N + m] * a[m];
      sd += cf.M[j * N + m] * b[m];
    }
    c[j] = sc;
    d[j] = sd;
  }
}

template <typename T, int N>
__device__ __forceinline__ void PassZ(const Coef3<T, N> &cf, const T (&c)[N], const T (&d)[N], T (&v)[N])
{
#pragma unroll
  for (int l = 0; l < N; l++) {
    T sv = T(0);
#pragma unroll
    for (int m = 0; m < N; m++) {
      sv += cf.Az[l * N + m] * c[m];
      sv += cf.M[l * N + m] * d[m];
    }
    v[l] = sv;
  }
}

/* Even-odd versions */
template <typename T, int N>
__device__ __forceinline__ void Split(const T (&u)[N], T (&ue)[(N + 1) / 2], T (&uo)[N / 2])
{
#pragma unroll
  for (int j = 0; j < N / 2; j++) {
    ue[j] = u[j] + u[N - 1 - j];
    uo[j] = u[j] - u[N - 1 - j];
  }
  if (N % 2) ue[N / 2] = u[N / 2];
}

/* v = A1 u1 (+ A2 u2 when TWO) from the even/odd parts */
template <typename T, int N, bool TWO>
__device__ __forceinline__ void EOApply(const T (&E1)[((N + 1) / 2) * ((N + 1) / 2)], const T (&O1)[(N / 2) * (N / 2)], const T (&ue1)[(N + 1) / 2], const T (&uo1)[N / 2],
                                        const T (&E2)[((N + 1) / 2) * ((N + 1) / 2)], const T (&O2)[(N / 2) * (N / 2)], const T (&ue2)[(N + 1) / 2], const T (&uo2)[N / 2], T (&v)[N])
{
  constexpr int H = N / 2, HE = (N + 1) / 2;
#pragma unroll
  for (int i = 0; i < HE; i++) {
    T p = T(0), q = T(0);
#pragma unroll
    for (int j = 0; j < HE; j++) {
      p += E1[i * HE + j] * ue1[j];
      if (TWO) p += E2[i * HE + j] * ue2[j];
    }
    if (i < H) {
#pragma unroll
      for (int j = 0; j < H; j++) {
        q += O1[i * H + j] * uo1[j];
        if (TWO) q += O2[i * H + j] * uo2[j];
      }
      v[i]         = p + q;
      v[N - 1 - i] = p - q;
    } else v[i] = p; /* the middle row of odd n */
  }
}

template <typename T, int N>
__device__ __forceinline__ void PassX(const Coef3EO<T, N> &cf, const T (&u)[N], T (&a)[N], T (&b)[N])
{
  T ue[(N + 1) / 2], uo[N / 2];
  Split<T, N>(u, ue, uo);
  EOApply<T, N, false>(cf.ME, cf.MO, ue, uo, cf.ME, cf.MO, ue, uo, a);
  EOApply<T, N, false>(cf.KxE, cf.KxO, ue, uo, cf.KxE, cf.KxO, ue, uo, b);
}

template <typename T, int N>
__device__ __forceinline__ void PassY(const Coef3EO<T, N> &cf, const T (&a)[N], const T (&b)[N], T (&c)[N], T (&d)[N])
{
  T ae[(N + 1) / 2], ao[N / 2], be[(N + 1) / 2], bo[N / 2];
  Split<T, N>(a, ae, ao);
  Split<T, N>(b, be, bo);
  EOApply<T, N, false>(cf.ME, cf.MO, ae, ao, cf.ME, cf.MO, ae, ao, c);
  EOApply<T, N, true>(cf.KyE, cf.KyO, ae, ao, cf.ME, cf.MO, be, bo, d);
}

template <typename T, int N>
__device__ __forceinline__ void PassZ(const Coef3EO<T, N> &cf, const T (&c)[N], const T (&d)[N], T (&v)[N])
{
  T ce[(N + 1) / 2], co[N / 2], de[(N + 1) / 2], dd[N / 2];
  Split<T, N>(c, ce, co);
  Split<T, N>(d, de, dd);
  EOApply<T, N, true>(cf.AzE, cf.AzO, ce, co, cf.ME, cf.MO, de, dd, v);
}

/* One cell of a 3D tile, given the column u(a,b,:) of this thread: the three passes, through the tile
   S0, S1 in shared memory, to the column v(a,b,:) of the result. The barriers are inside. Each
   thread owns one line per pass:
     gather  thread (i,j): u(i,j,:)                                   -> S0
     x pass  thread (j,l): S0(:,j,l) -> a -> S0, b -> S1
     y pass  thread (i,l): S0(i,:,l), S1(i,:,l) -> c -> S0, d -> S1
     z pass  thread (i,j): S0(i,j,:), S1(i,j,:) -> v
   The z pass reads only this thread's own column, which its next gather overwrites: a cell after
   this one needs no barrier before its gather. */
template <typename T, int N, typename CF>
__device__ __forceinline__ void CellPasses3D(const CF &cf, T *S0, T *S1, int a, int b, const T (&u)[N], T (&v)[N])
{
  constexpr int LD = Lay3<N>::LD, PS = Lay3<N>::PS;
#pragma unroll
  for (int l = 0; l < N; l++) S0[l * PS + b * LD + a] = u[l];
  __syncthreads();
  {
    T  w[N], va[N], vb[N];
    T *r0 = S0 + b * PS + a * LD, *r1 = S1 + b * PS + a * LD;
#pragma unroll
    for (int m = 0; m < N; m++) w[m] = r0[m];
    PassX<T, N>(cf, w, va, vb);
#pragma unroll
    for (int i = 0; i < N; i++) {
      r0[i] = va[i];
      r1[i] = vb[i];
    }
  }
  __syncthreads();
  {
    T  av[N], bv[N], vc[N], vd[N];
    T *r0 = S0 + b * PS + a, *r1 = S1 + b * PS + a;
#pragma unroll
    for (int m = 0; m < N; m++) {
      av[m] = r0[m * LD];
      bv[m] = r1[m * LD];
    }
    PassY<T, N>(cf, av, bv, vc, vd);
#pragma unroll
    for (int j = 0; j < N; j++) {
      r0[j * LD] = vc[j];
      r1[j * LD] = vd[j];
    }
  }
  __syncthreads();
  {
    T        cv[N], dv[N];
    const T *r0 = S0 + b * LD + a, *r1 = S1 + b * LD + a;
#pragma unroll
    for (int m = 0; m < N; m++) {
      cv[m] = r0[m * PS];
      dv[m] = r1[m * PS];
    }
    PassZ<T, N>(cf, cv, dv, v);
  }
}

/* Whether node l of the z column at (gx, gy, gz0 + l) is a Dirichlet node; bxy: whether (gx, gy) is */
__device__ __forceinline__ bool DirichletZ(const Geom &g, bool bxy, int gz) { return g.dirichlet && (bxy || OnEdge(gz, g.nodes[2])); }

/* The 3D apply of one color of the colored scatter (cells g.step apart share no node): one cell per
   n^2 threads, plain adds. */
template <typename T, int N, typename CF>
__global__ void __launch_bounds__(Lay3<N>::C * N * N, Lay3<N>::MINB) Apply3DColored(const CF cf, const Geom g, const T *__restrict__ x, T *__restrict__ y)
{
  constexpr int C = Lay3<N>::C, CS = Lay3<N>::CS;
  __shared__ T  s0[C * CS], s1[C * CS];
  const int     t = threadIdx.x, a = t % N, q = (t / N) % C, b = t / (N * C);
  const long long cid    = (long long)blockIdx.x * C + q;
  const bool      active = cid < g.ncells;
  int             e[3]   = {0, 0, 0};
  T               u[N], v[N];

  if (active) DecodeCell(g, cid, e);
  /* this thread's column: nodes (gx, gy, gz0 + l) */
  const int  gx = (N - 1) * e[0] + a, gy = (N - 1) * e[1] + b, gz0 = (N - 1) * e[2];
  const bool bxy = g.dirichlet && (OnEdge(gx, g.nodes[0]) || OnEdge(gy, g.nodes[1]));
  const long long pin = (long long)g.in_size[0] * g.in_size[1], pout = (long long)g.out_size[0] * g.out_size[1];

  if (active) {
    const T *xp = x + (((long long)(gz0 - g.in_start[2]) * g.in_size[1] + (gy - g.in_start[1])) * g.in_size[0] + (gx - g.in_start[0]));
#pragma unroll
    for (int l = 0; l < N; l++) u[l] = DirichletZ(g, bxy, gz0 + l) ? T(0) : xp[l * pin];
  } else {
#pragma unroll
    for (int l = 0; l < N; l++) u[l] = T(0);
  }
  CellPasses3D<T, N>(cf, s0 + q * CS, s1 + q * CS, a, b, u, v);
  if (active) {
    T *yp = y + (((long long)(gz0 - g.out_start[2]) * g.out_size[1] + (gy - g.out_start[1])) * g.out_size[0] + (gx - g.out_start[0]));
#pragma unroll
    for (int l = 0; l < N; l++)
      if (!DirichletZ(g, bxy, gz0 + l)) yp[l * pout] += v[l];
  }
}

/* The 3D apply with atomic scatter, marching in z (see the top): block (bx, bz) takes the cells
   bx C .. bx C + C - 1 of the launch's x-y cell grid (lexicographic) through the z cells
   bz zchunk .. bz zchunk + zchunk - 1. The z loop runs the same number of times in every thread. */
template <typename T, int N, typename CF>
__global__ void __launch_bounds__(Lay3<N>::C * N * N, Lay3<N>::MINB) Apply3D(const CF cf, const Geom g, int zchunk, const T *__restrict__ x, T *__restrict__ y)
{
  constexpr int C = Lay3<N>::C, CS = Lay3<N>::CS;
  __shared__ T  s0[C * CS], s1[C * CS];
  const int     t = threadIdx.x, a = t % N, q = (t / N) % C, b = t / (N * C), lane = t & 31;
  const long long cxy = (long long)g.count[0] * g.count[1], cid = (long long)blockIdx.x * C + q;
  const bool      active = cid < cxy;
  const int       ty = active ? (int)(cid / g.count[0]) : 0, tx = active ? (int)(cid - (long long)ty * g.count[0]) : 0;
  const int       tz0 = blockIdx.y * zchunk, tz1 = min(tz0 + zchunk, g.count[2]);
  const int       gx = (N - 1) * (g.first[0] + tx) + a, gy = (N - 1) * (g.first[1] + ty) + b;
  const bool      bxy = g.dirichlet && (OnEdge(gx, g.nodes[0]) || OnEdge(gy, g.nodes[1]));
  /* give: this lane's output goes to lane t-1, which holds the same node (n-1 of the cell before in
     the row); recv: lane t+1 gives to this one. Both lanes are in this warp. */
  const bool     give = active && a == 0 && q > 0 && tx > 0 && lane != 0;
  const bool     recv = active && a == N - 1 && q < C - 1 && cid + 1 < cxy && tx + 1 < g.count[0] && lane != 31;
  const int      warp_threads = min(32, (int)blockDim.x - (t & ~31));
  const unsigned mask = warp_threads == 32 ? 0xffffffffu : (1u << warp_threads) - 1;
  const long long pin = (long long)g.in_size[0] * g.in_size[1], pout = (long long)g.out_size[0] * g.out_size[1];
  int             gz0 = (N - 1) * (g.first[2] + tz0);
  const T        *xp = x + (((long long)(gz0 - g.in_start[2]) * g.in_size[1] + (gy - g.in_start[1])) * g.in_size[0] + (gx - g.in_start[0]));
  T              *yp = y + (((long long)(gz0 - g.out_start[2]) * g.out_size[1] + (gy - g.out_start[1])) * g.out_size[0] + (gx - g.out_start[0]));
  T               xtop = T(0), ytop = T(0); /* the top node of the previous cell's input and output column */

  for (int tz = tz0; tz < tz1; tz++, gz0 += N - 1, xp += (N - 1) * pin, yp += (N - 1) * pout) {
    T u[N], v[N];

    if (active) {
      u[0] = tz == tz0 ? xp[0] : xtop;
#pragma unroll
      for (int l = 1; l < N; l++) u[l] = xp[l * pin];
      xtop = u[N - 1];
#pragma unroll
      for (int l = 0; l < N; l++)
        if (DirichletZ(g, bxy, gz0 + l)) u[l] = T(0);
    } else {
#pragma unroll
      for (int l = 0; l < N; l++) u[l] = T(0);
    }
    CellPasses3D<T, N>(cf, s0 + q * CS, s1 + q * CS, a, b, u, v);
    /* nodes 0..n-2 are final here (node 0 with the top of the cell below); node n-1 waits for the cell above */
    v[0] += ytop;
    ytop = v[N - 1];
#pragma unroll
    for (int l = 0; l < N - 1; l++) {
      const T w = __shfl_down_sync(mask, v[l], 1);
      if (recv) v[l] += w;
    }
    if (active && !give) {
#pragma unroll
      for (int l = 0; l < N - 1; l++)
        if (!DirichletZ(g, bxy, gz0 + l)) atomicAdd(yp + l * pout, v[l]);
    }
  }
  /* the top face of the last cell */
  const T w = __shfl_down_sync(mask, ytop, 1);
  if (recv) ytop += w;
  if (active && !give && tz1 > tz0 && !DirichletZ(g, bxy, gz0)) atomicAdd(yp, ytop);
}

template <typename T, int N, bool ATOMIC>
__global__ void __launch_bounds__(Lay2<N>::C * N) Apply2D(const Coef2<T, N> cf, const Geom g, const T *__restrict__ x, T *__restrict__ y)
{
  constexpr int LD = Lay2<N>::LD, CS = Lay2<N>::CS, C = Lay2<N>::C;
  __shared__ T  s0[C * CS], s1[C * CS];
  const int     t = threadIdx.x, q = t / N, a = t - q * N;
  T *const      S0 = s0 + q * CS, *const S1 = s1 + q * CS;
  const long long cid    = (long long)blockIdx.x * C + q;
  const bool      active = cid < g.ncells;
  int             e[3]   = {0, 0, 0};

  if (active) DecodeCell(g, cid, e);
  /* this thread's y column in the gather and y pass: node (gx, gy0+j) */
  const int  gx = (N - 1) * e[0] + a, gy0 = (N - 1) * e[1];
  const bool bx = g.dirichlet && OnEdge(gx, g.nodes[0]);

  {
    T v[N];
    if (active) {
      const T *xp = x + ((long long)(gy0 - g.in_start[1]) * g.in_size[0] + (gx - g.in_start[0]));
#pragma unroll
      for (int j = 0; j < N; j++) v[j] = xp[(long long)j * g.in_size[0]];
      if (g.dirichlet) {
#pragma unroll
        for (int j = 0; j < N; j++)
          if (bx || OnEdge(gy0 + j, g.nodes[1])) v[j] = T(0);
      }
    } else {
#pragma unroll
      for (int j = 0; j < N; j++) v[j] = T(0);
    }
#pragma unroll
    for (int j = 0; j < N; j++) S0[j * LD + a] = v[j];
  }
  __syncthreads();
  /* x pass, thread j = a */
  {
    T  u[N];
    T *r0 = S0 + a * LD, *r1 = S1 + a * LD;
#pragma unroll
    for (int m = 0; m < N; m++) u[m] = r0[m];
#pragma unroll
    for (int i = 0; i < N; i++) {
      T sa = T(0), sb = T(0);
#pragma unroll
      for (int m = 0; m < N; m++) {
        sa += cf.M[i * N + m] * u[m];
        sb += cf.Kx[i * N + m] * u[m];
      }
      r0[i] = sa;
      r1[i] = sb;
    }
  }
  __syncthreads();
  /* y pass, thread i = a, and scatter */
  {
    T        av[N], bv[N];
    const T *r0 = S0 + a, *r1 = S1 + a;
#pragma unroll
    for (int m = 0; m < N; m++) {
      av[m] = r0[m * LD];
      bv[m] = r1[m * LD];
    }
    if (active) {
      T *yp = y + ((long long)(gy0 - g.out_start[1]) * g.out_size[0] + (gx - g.out_start[0]));
#pragma unroll
      for (int j = 0; j < N; j++) {
        T sv = T(0);
#pragma unroll
        for (int m = 0; m < N; m++) {
          sv += cf.Ay[j * N + m] * av[m];
          sv += cf.M[j * N + m] * bv[m];
        }
        if (!(g.dirichlet && (bx || OnEdge(gy0 + j, g.nodes[1])))) AddOut<ATOMIC>(yp + (long long)j * g.out_size[0], sv);
      }
    }
  }
}

/* Diagonal: one thread per (cell, x-y column) in 3D, looping over z, or per (cell, x index) in 2D,
   looping over y; not performance critical, so n is a run-time value. */
struct DiagCoef {
  double m[PW_MAX_N], s[PW_MAX_N]; /* diagonals of the 1D mass and stiffness matrices */
  double cm, cs[3];
};

template <bool ATOMIC>
__global__ void __launch_bounds__(256) Diagonal(const DiagCoef dc, const Geom g, double *__restrict__ y)
{
  const int       n = g.n, per = g.dim == 3 ? n * n : n; /* threads per cell */
  const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long cid = tid / per;
  int             e[3];

  if (cid >= g.ncells) return;
  const int a = (int)(tid - cid * per) % n, b = g.dim == 3 ? (int)(tid - cid * per) / n : 0;
  DecodeCell(g, cid, e);
  const int gx = (n - 1) * e[0] + a, gy0 = (n - 1) * e[1], gz0 = (n - 1) * e[2];
  for (int l = 0; l < n; l++) {
    double    v;
    bool      bnd;
    long long o;

    if (g.dim == 3) {
      const int gy = gy0 + b, gz = gz0 + l;

      v   = dc.cm * dc.m[a] * dc.m[b] * dc.m[l] + dc.cs[0] * dc.s[a] * dc.m[b] * dc.m[l] + dc.cs[1] * dc.m[a] * dc.s[b] * dc.m[l] + dc.cs[2] * dc.m[a] * dc.m[b] * dc.s[l];
      bnd = g.dirichlet && (OnEdge(gx, g.nodes[0]) || OnEdge(gy, g.nodes[1]) || OnEdge(gz, g.nodes[2]));
      o   = ((long long)(gz - g.out_start[2]) * g.out_size[1] + (gy - g.out_start[1])) * g.out_size[0] + (gx - g.out_start[0]);
    } else {
      const int gy = gy0 + l;

      v   = dc.cm * dc.m[a] * dc.m[l] + dc.cs[0] * dc.s[a] * dc.m[l] + dc.cs[1] * dc.m[a] * dc.s[l];
      bnd = g.dirichlet && (OnEdge(gx, g.nodes[0]) || OnEdge(gy, g.nodes[1]));
      o   = (long long)(gy - g.out_start[1]) * g.out_size[0] + (gx - g.out_start[0]);
    }
    if (!bnd) AddOut<ATOMIC>(y + o, v);
  }
}

/* Dirichlet rows: blockIdx.y picks one of the 2*dim faces of the global grid; threads walk the part of
   that face inside the out box, so the work is the boundary's size, not the box's. Nodes on edges
   belong to two faces and get the same value twice. */
__global__ void __launch_bounds__(256) Boundary(const Geom g, const double *__restrict__ x, double *__restrict__ y)
{
  const int d = blockIdx.y >> 1, lp = ((blockIdx.y & 1) ? g.nodes[d] - 1 : 0) - g.out_start[d];
  const int d1 = d == 0 ? 1 : 0, d2 = d == 2 ? 1 : 2; /* the two directions along the face */
  const int n1 = g.out_size[d1], n2 = g.out_size[d2];

  if (lp < 0 || lp >= g.out_size[d]) return; /* this face is not in the box */
  for (int o = blockIdx.x * blockDim.x + threadIdx.x; o < n1 * n2; o += gridDim.x * blockDim.x) {
    int l[3];

    l[d]  = lp;
    l[d1] = o % n1;
    l[d2] = o / n1;
    const long long idx = ((long long)l[2] * g.out_size[1] + l[1]) * g.out_size[0] + l[0];
    y[idx] = x ? x[idx] : 1.0;
  }
}

/* ---------------------------------------------------------------------------------------------- */
/* Host side */

/* Validate the descriptor for apply/diagonal (use_in: x is read through the in box). Returns
   cudaErrorInvalidValue for a bad descriptor; *empty is set when the cell range is empty. */
static cudaError_t CheckDesc(const PatchworkTensorDesc *d, int use_in, int *empty)
{
  int k;

  *empty = 0;
  if (!d || (d->dim != 2 && d->dim != 3)) return cudaErrorInvalidValue;
  k = d->degree;
  if (k < 1 || k > (d->dim == 3 ? 8 : PW_MAX_DEGREE)) return cudaErrorInvalidValue;
  if (d->scatter != PW_SCATTER_ATOMIC && d->scatter != PW_SCATTER_COLORED) return cudaErrorInvalidValue;
  for (int dir = 0; dir < 3; dir++) {
    if (dir >= d->dim) {
      if (d->cell_start[dir] != 0 || d->cell_end[dir] != 1) return cudaErrorInvalidValue;
      continue;
    }
    if (d->nodes[dir] < k + 1 || (d->nodes[dir] - 1) % k) return cudaErrorInvalidValue;
    if (d->cell_start[dir] < 0 || d->cell_end[dir] > (d->nodes[dir] - 1) / k) return cudaErrorInvalidValue;
    if (d->cell_end[dir] <= d->cell_start[dir]) *empty = 1;
  }
  if (*empty) return cudaSuccess;
  for (int dir = 0; dir < 3; dir++) {
    const int lo = dir < d->dim ? k * d->cell_start[dir] : 0, hi = dir < d->dim ? k * d->cell_end[dir] : 0;

    if (use_in && (d->in_start[dir] > lo || hi >= d->in_start[dir] + d->in_size[dir])) return cudaErrorInvalidValue;
    if (d->out_start[dir] > lo || hi >= d->out_start[dir] + d->out_size[dir]) return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

static Geom GeomFromDesc(const PatchworkTensorDesc *d)
{
  Geom g;

  g.dim = d->dim;
  g.n   = d->degree + 1;
  for (int dir = 0; dir < 3; dir++) {
    g.first[dir]     = d->cell_start[dir];
    g.count[dir]     = d->cell_end[dir] - d->cell_start[dir];
    g.nodes[dir]     = d->nodes[dir];
    g.in_start[dir]  = d->in_start[dir];
    g.in_size[dir]   = d->in_size[dir];
    g.out_start[dir] = d->out_start[dir];
    g.out_size[dir]  = d->out_size[dir];
  }
  g.step      = 1;
  g.dirichlet = d->dirichlet ? 1 : 0;
  g.ncells    = (long long)g.count[0] * g.count[1] * g.count[2];
  return g;
}

/* Restrict g to the cells of one color (bit dir of color = parity of the cell index in dir);
   returns 0 when the color has no cell. */
static int GeomColor(const PatchworkTensorDesc *d, int color, Geom *g)
{
  g->step = 2;
  for (int dir = 0; dir < 3; dir++) {
    if (dir >= d->dim) {
      g->first[dir] = 0;
      g->count[dir] = 1;
      continue;
    }
    const int par = (color >> dir) & 1, s = d->cell_start[dir], e = d->cell_end[dir];
    const int f   = s + ((s & 1) != par ? 1 : 0);

    g->first[dir] = f;
    g->count[dir] = f < e ? (e - f + 1) / 2 : 0;
  }
  g->ncells = (long long)g->count[0] * g->count[1] * g->count[2];
  return g->ncells > 0;
}

/* Blocks of per_block cells (or threads) each for count of them */
static unsigned BlocksOf(long long count, long long per_block)
{
  return (unsigned)((count + per_block - 1) / per_block);
}

/* launch_atomic(g) over the whole cell range, or launch_colored(g) over each of the 2^dim colors; each
   launch sizes its own grid from g */
template <typename LaunchA, typename LaunchC>
static cudaError_t LaunchScatter(const PatchworkTensorDesc *d, LaunchA launch_atomic, LaunchC launch_colored)
{
  Geom g = GeomFromDesc(d);

  if (d->scatter == PW_SCATTER_ATOMIC) {
    launch_atomic(g);
  } else {
    for (int color = 0; color < (1 << d->dim); color++) {
      if (!GeomColor(d, color, &g)) continue;
      launch_colored(g);
    }
  }
  return cudaGetLastError();
}

/* Whether the n x n matrix is centro-symmetric to rounding: A[i][j] = A[n-1-i][n-1-j] */
static bool CentroSymmetric(int n, const double *A)
{
  double amax = 0, dmax = 0;

  for (int r = 0; r < n * n; r++) amax = fmax(amax, fabs(A[r]));
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) dmax = fmax(dmax, fabs(A[i * n + j] - A[(n - 1 - i) * n + (n - 1 - j)]));
  return dmax <= 1e-13 * amax;
}

/* E (he x he) and O (h x h) of the even-odd split of the n x n matrix A (see Coef3EO) */
template <typename T>
static void SplitEO(int n, const double *A, T *E, T *O)
{
  const int h = n / 2, he = (n + 1) / 2;

  for (int i = 0; i < he; i++) {
    for (int j = 0; j < h; j++) E[i * he + j] = (T)(0.5 * (A[i * n + j] + A[i * n + n - 1 - j]));
    if (n % 2) E[i * he + h] = (T)A[i * n + h];
  }
  for (int i = 0; i < h; i++)
    for (int j = 0; j < h; j++) O[i * h + j] = (T)(0.5 * (A[i * n + j] - A[i * n + n - 1 - j]));
}

/* y = 0 on the out box (d->overwrite) */
template <typename T>
static cudaError_t ZeroOut(const PatchworkTensorDesc *d, T *y, cudaStream_t s)
{
  if (!d->overwrite) return cudaSuccess;
  if (d->out_size[0] < 0 || d->out_size[1] < 0 || d->out_size[2] < 0) return cudaErrorInvalidValue;
  return cudaMemsetAsync(y, 0, (size_t)d->out_size[0] * d->out_size[1] * d->out_size[2] * sizeof(T), s);
}

template <typename T, int N, typename CF>
static cudaError_t Launch3(const PatchworkTensorDesc *d, const CF &cf, const T *x, T *y, cudaStream_t s)
{
  constexpr int C = Lay3<N>::C, Z = Lay3<N>::Z, threads = C * N * N;

  return LaunchScatter(
    d,
    [&](const Geom &g) { /* C cells of the x-y grid per block in x, chunks of z cells in y */
      const int zchunk = std::max(Z, (g.count[2] + 65534) / 65535); /* gridDim.y <= 65535 */

      Apply3D<T, N, CF><<<dim3(BlocksOf((long long)g.count[0] * g.count[1], C), BlocksOf(g.count[2], zchunk)), threads, 0, s>>>(cf, g, zchunk, x, y);
    },
    [&](const Geom &g) { Apply3DColored<T, N, CF><<<BlocksOf(g.ncells, C), threads, 0, s>>>(cf, g, x, y); });
}

template <typename T, int N>
static cudaError_t Apply3(const PatchworkTensorDesc *d, const T *x, T *y, cudaStream_t s)
{
  const double cm = d->coef_mass, *cs = d->coef_stiff;
  double       M[N * N], Kx[N * N], Ky[N * N], Az[N * N];

  for (int r = 0; r < N * N; r++) {
    M[r]  = d->mass1d[r];
    Kx[r] = cs[0] * d->stiff1d[r];
    Ky[r] = cs[1] * d->stiff1d[r];
    Az[r] = cm * d->mass1d[r] + cs[2] * d->stiff1d[r];
  }
  if (CentroSymmetric(N, d->mass1d) && CentroSymmetric(N, d->stiff1d)) {
    Coef3EO<T, N> cf;
    SplitEO(N, M, cf.ME, cf.MO);
    SplitEO(N, Kx, cf.KxE, cf.KxO);
    SplitEO(N, Ky, cf.KyE, cf.KyO);
    SplitEO(N, Az, cf.AzE, cf.AzO);
    return Launch3<T, N>(d, cf, x, y, s);
  } else {
    Coef3<T, N> cf;
    for (int r = 0; r < N * N; r++) {
      cf.M[r]  = (T)M[r];
      cf.Kx[r] = (T)Kx[r];
      cf.Ky[r] = (T)Ky[r];
      cf.Az[r] = (T)Az[r];
    }
    return Launch3<T, N>(d, cf, x, y, s);
  }
}

template <typename T, int N>
static cudaError_t Apply2(const PatchworkTensorDesc *d, const T *x, T *y, cudaStream_t s)
{
  Coef2<T, N> cf;
  const double cm = d->coef_mass, *cs = d->coef_stiff;

  for (int r = 0; r < N * N; r++) {
    cf.M[r]  = (T)d->mass1d[r];
    cf.Kx[r] = (T)(cs[0] * d->stiff1d[r]);
    cf.Ay[r] = (T)(cm * d->mass1d[r] + cs[1] * d->stiff1d[r]);
  }
  constexpr int C = Lay2<N>::C, threads = C * N;
  return LaunchScatter(
    d, [&](const Geom &g) { Apply2D<T, N, true><<<BlocksOf(g.ncells, C), threads, 0, s>>>(cf, g, x, y); },
    [&](const Geom &g) { Apply2D<T, N, false><<<BlocksOf(g.ncells, C), threads, 0, s>>>(cf, g, x, y); });
}

template <typename T>
static cudaError_t ApplyDispatch(const PatchworkTensorDesc *d, const T *x, T *y, void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  int          empty;
  cudaError_t  err = CheckDesc(d, 1, &empty);

  if (err != cudaSuccess || (err = ZeroOut(d, y, s)) != cudaSuccess || empty) return err;
  if (d->dim == 3) {
    switch (d->degree) {
    case 1: return Apply3<T, 2>(d, x, y, s);
    case 2: return Apply3<T, 3>(d, x, y, s);
    case 3: return Apply3<T, 4>(d, x, y, s);
    case 4: return Apply3<T, 5>(d, x, y, s);
    case 5: return Apply3<T, 6>(d, x, y, s);
    case 6: return Apply3<T, 7>(d, x, y, s);
    case 7: return Apply3<T, 8>(d, x, y, s);
    case 8: return Apply3<T, 9>(d, x, y, s);
    default: return cudaErrorInvalidValue;
    }
  }
  switch (d->degree) {
  case 1: return Apply2<T, 2>(d, x, y, s);
  case 2: return Apply2<T, 3>(d, x, y, s);
  case 3: return Apply2<T, 4>(d, x, y, s);
  case 4: return Apply2<T, 5>(d, x, y, s);
  case 5: return Apply2<T, 6>(d, x, y, s);
  case 6: return Apply2<T, 7>(d, x, y, s);
  case 7: return Apply2<T, 8>(d, x, y, s);
  case 8: return Apply2<T, 9>(d, x, y, s);
  case 9: return Apply2<T, 10>(d, x, y, s);
  case 10: return Apply2<T, 11>(d, x, y, s);
  default: return cudaErrorInvalidValue;
  }
}

} // namespace

extern "C" int PatchworkTensorApplyCUDA(const PatchworkTensorDesc *d, const double *x, double *y, void *stream)
{
  return (int)ApplyDispatch<double>(d, x, y, stream);
}

extern "C" int PatchworkTensorApplyCUDAFloat(const PatchworkTensorDesc *d, const float *x, float *y, void *stream)
{
  return (int)ApplyDispatch<float>(d, x, y, stream);
}

extern "C" int PatchworkTensorDiagonalCUDA(const PatchworkTensorDesc *d, double *y, void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  int          empty;
  cudaError_t  err = CheckDesc(d, 0, &empty);
  DiagCoef     dc;

  if (err != cudaSuccess || (err = ZeroOut(d, y, s)) != cudaSuccess || empty) return (int)err;
  const int n = d->degree + 1, per = d->dim == 3 ? n * n : n;
  for (int i = 0; i < n; i++) {
    dc.m[i] = d->mass1d[i * n + i];
    dc.s[i] = d->stiff1d[i * n + i];
  }
  dc.cm    = d->coef_mass;
  dc.cs[0] = d->coef_stiff[0];
  dc.cs[1] = d->coef_stiff[1];
  dc.cs[2] = d->dim == 3 ? d->coef_stiff[2] : 0.0;
  /* 256 threads per block over (cell, column) pairs */
  return (int)LaunchScatter(
    d, [&](const Geom &g) { Diagonal<true><<<BlocksOf(g.ncells * per, 256), 256, 0, s>>>(dc, g, y); },
    [&](const Geom &g) { Diagonal<false><<<BlocksOf(g.ncells * per, 256), 256, 0, s>>>(dc, g, y); });
}

extern "C" int PatchworkTensorBoundaryCUDA(const PatchworkTensorDesc *d, const double *x, double *y, void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;

  if (!d || (d->dim != 2 && d->dim != 3)) return (int)cudaErrorInvalidValue;
  if (!d->dirichlet) return (int)cudaSuccess;
  Geom g = GeomFromDesc(d);
  if (d->dim == 2) { /* the third direction is a single node, never a boundary */
    g.out_size[2] = 1;
  }
  if ((long long)g.out_size[0] * g.out_size[1] * g.out_size[2] <= 0) return (int)cudaSuccess;
  long long face = 0; /* nodes of the largest face in the box */
  for (int e = 0; e < d->dim; e++) face = std::max(face, (long long)g.out_size[0] * g.out_size[1] * g.out_size[2] / g.out_size[e]);
  const unsigned blocks = (unsigned)std::min<long long>((face + 255) / 256, 65535);
  Boundary<<<dim3(blocks, 2 * d->dim), 256, 0, s>>>(g, x, y);
  return (int)cudaGetLastError();
}

extern "C" const char *PatchworkCUDAErrorString(int err)
{
  return cudaGetErrorString((cudaError_t)err);
}
