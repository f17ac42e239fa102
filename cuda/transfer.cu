/* CUDA kernels of the Q_k transfer between a mesh and its refinement by two in every direction
   (contract: include/patchwork/patch_kernel.h; CPU reference: src/core/transfer_ref.c).

   The reference iterates over fine cells; here a thread block works on whole coarse cells (the
   parents of the fine cells in the range), which computes each fine value once instead of once per
   fine cell sharing it and gathers each coarse cell once instead of 2^dim times. Per direction the
   (2k+1) x (k+1) matrix P[p][j] = phi_j(p / 2k) (rows 0..k from interp[0], k..2k from interp[1])
   interpolates the coarse cell's k+1 nodes to the 2k+1 fine nodes of its two children, and the
   weight of fine node p of coarse cell c,
     w(p) = sum over the children a in the fine cell range with p in child a of W(2kc+p),
     W = 1/2 on a node shared by two fine cells (a multiple of k strictly inside), else 1,
            0 on the global boundary with Dirichlet,
   makes the sum over coarse cells the reference's sum over fine cells. Nodes of children outside the
   range get weight 0 and are neither read nor written (they may lie outside the boxes).
     prolong (3D): gather u (k+1)^3 -> x: P u -> y: P -> z: P, fine += w v (atomicAdd)
     restrict:     z: P^T (w f) -> y: P^T -> x: P^T, coarse += (atomicAdd)
   2D drops the y pass of 3D (its last direction, y, plays the part of z).

   Restriction is prolongation transposed, pass by pass in reverse order on the same shared-memory
   layouts, so one kernel template (TR: restrict) runs both: a direction pass reads a line of one side
   of its 1D operator and writes the other (P: the k+1 coarse-side values to the 2k+1 fine-side ones;
   P^T: back), and the x pass (coarse side) and last pass (fine side) read or write global memory at
   the end that touches it. The passes are also generic in the dimension: a line of the x pass is
   (jy,jz) in 3D and jy in 2D, a line of the last pass (px,py) and px, both counted as one index r
   whose node stride in shared memory is the same formula in either dimension. Shared memory per coarse
   cell: A (u, then the y-pass result; 3D restrict: the z-pass result) and B (the x-pass side):
     A: 3D (jx,jy,jz) at jx + N jy + N^2 jz, then (px,py,jz) at px + NF py + NF^2 jz; 2D (jx,jy)
     B: (p,jy,jz) at p + NF jy + NF N jz (2D: jz = 0), the transposed passes read and write the same
   One line per thread and pass as in cuda/patch_smooth.cu (each use of P reads its own copy in the
   kernel parameters); C coarse cells per block. Fine nodes on the faces of a coarse cell and coarse
   nodes are shared between blocks, hence the atomics. Double and single precision (T), degrees 1..8
   in 3D and 1..10 in 2D; others and bad boxes return cudaErrorInvalidValue. */
#include <cuda_runtime.h>
#include <patchwork/patch_kernel.h>

#define PW_HD __host__ __device__ __forceinline__
/* the pass functions are host-callable too (for a CPU harness); unroll only in device code */
#ifdef __CUDA_ARCH__
  #define PW_UNROLL _Pragma("unroll")
#else
  #define PW_UNROLL
#endif

namespace {

/* The coarse cells of one launch and the data to weight and index their nodes */
struct TGeom {
  int       first[3], count[3];    /* coarse cells: first + t, t < count (lexicographic) */
  int       cell_start[3], cell_end[3];
  int       fine_nodes[3], coarse_nodes[3];
  int       fine_start[3], fine_size[3], coarse_start[3], coarse_size[3];
  int       dirichlet;
  long long ncells;
};

/* P[p (K+1) + j], one copy per direction pass */
template <typename T, int K, int DIM>
struct Interp {
  T P[DIM][(2 * K + 1) * (K + 1)];
};

template <int DIM, int K>
struct TLay {
  static constexpr int NF = 2 * K + 1, N = K + 1;
  static constexpr int NC    = DIM == 3 ? N * N : N;   /* lines of the gather and the x pass */
  static constexpr int NL    = DIM == 3 ? NF * NF : NF; /* lines of the last pass (the largest) */
  static constexpr int C     = DIM == 3 ? (256 / NL > 0 ? 256 / NL : 1) : 128 / NL;
  static constexpr int TB    = (C * NL + 31) / 32 * 32;
  /* per cell: A holds u ((k+1)^d) then the y-pass result, B the x-pass result */
  static constexpr int SA = DIM == 3 ? NF * NF * N : NF * N;
  static constexpr int SB = DIM == 3 ? NF * N * N : NF * N;
};

PW_HD long long BoxIdx(const int start[3], const int size[3], int gx, int gy, int gz)
{
  return ((long long)(gz - start[2]) * size[1] + (gy - start[1])) * size[0] + (gx - start[0]);
}

/* Weight of fine node p (0..2K) of coarse cell c in direction dir (0, 1/4, 1/2, 1: exact in T) */
template <typename T, int K>
PW_HD T Weight(const TGeom &g, int dir, int c, int p)
{
  const int  f0 = 2 * c, gn = 2 * K * c + p, fn = g.fine_nodes[dir];
  const bool in0 = f0 >= g.cell_start[dir] && f0 < g.cell_end[dir], in1 = f0 + 1 >= g.cell_start[dir] && f0 + 1 < g.cell_end[dir];
  const bool bnd = gn == 0 || gn == fn - 1;

  if (g.dirichlet && bnd) return T(0);
  const T W = (!bnd && gn % K == 0) ? T(0.5) : T(1);
  return (in0 && p <= K ? W : T(0)) + (in1 && p >= K ? W : T(0));
}

/* Coarse cell of slot q of the block, false past the last */
template <int DIM>
PW_HD bool CoarseCell(const TGeom &g, long long c0, int q, int c[3])
{
  const long long cid = c0 + q;

  if (cid >= g.ncells) return false;
  const long long cxy = (long long)g.count[0] * g.count[1];
  const long long tz  = cid / cxy;
  const long long r   = cid - tz * cxy;
  const int       ty  = (int)(r / g.count[0]);

  c[0] = g.first[0] + (int)(r - (long long)ty * g.count[0]);
  c[1] = g.first[1] + ty;
  c[2] = DIM == 3 ? g.first[2] + (int)tz : 0;
  return true;
}

template <typename T>
PW_HD void AtomicAdd(T *p, T v)
{
#ifdef __CUDA_ARCH__
  atomicAdd(p, v);
#else
  *p += v;
#endif
}

PW_HD bool CoarseBoundary(const TGeom &g, int dir, int gc) { return g.dirichlet && (gc == 0 || gc == g.coarse_nodes[dir] - 1); }

/* One direction of the transfer on a register line: out_m = (P u)_m (prolong: the K+1 coarse-side
   values to the 2K+1 fine-side ones) or (P^T u)_m (restrict: back), each handed to emit(m, out_m) as
   soon as it is summed (a store or an atomic: fewer values live at once) */
template <bool TR, typename T, int K, class Emit>
PW_HD void Line1D(const T (&P)[(2 * K + 1) * (K + 1)], const T (&u)[TR ? 2 * K + 1 : K + 1], Emit emit)
{
  constexpr int N = K + 1, NF = 2 * K + 1;

  if constexpr (TR) {
PW_UNROLL
    for (int j = 0; j < N; j++) {
      T s = T(0);
PW_UNROLL
      for (int p = 0; p < NF; p++) s += P[p * N + j] * u[p];
      emit(j, s);
    }
  } else {
PW_UNROLL
    for (int p = 0; p < NF; p++) {
      T s = T(0);
PW_UNROLL
      for (int j = 0; j < N; j++) s += P[p * N + j] * u[j];
      emit(p, s);
    }
  }
}

/* The passes of the kernel below, for thread t of the block whose first coarse cell is c0 (slot q of
   the block: coarse cell c0 + q); TR: restrict. Host-callable, so that a CPU harness can run them. */
template <typename T, int DIM, int K, bool TR>
struct TPasses {
  using L  = TLay<DIM, K>;
  using IP = Interp<T, K, DIM>;
  static constexpr int N = L::N, NF = L::NF, NC = L::NC, NL = L::NL, C = L::C, D = DIM - 1;

  /* node stride of the last direction (z in 3D, y in 2D) in a box */
  PW_HD static long long LastStride(const int size[3]) { return DIM == 3 ? (long long)size[0] * size[1] : (long long)size[0]; }

  /* prolong's gather, line r = jx (+ N jy) of NC: u(jx,(jy,):) -> A (r + NC j) */
  PW_HD static void Gather(const TGeom &g, const T *xc, T *sa, long long c0, int t)
  {
    int c[3];

    if (t < C * NC) {
      const int q = t / NC, r = t - q * NC, jx = r % N, jy = r / N; /* 2D: jy = 0 */
      if (CoarseCell<DIM>(g, c0, q, c)) {
        const int       gx = K * c[0] + jx, gy = K * c[1] + (DIM == 3 ? jy : 0), gz = K * c[2];
        const int       gl = DIM == 3 ? gz : gy;
        const bool      bxy    = CoarseBoundary(g, 0, gx) || (DIM == 3 && CoarseBoundary(g, 1, gy));
        const long long stride = LastStride(g.coarse_size);
        const T        *xp     = xc + BoxIdx(g.coarse_start, g.coarse_size, gx, gy, gz);
PW_UNROLL
        for (int j = 0; j < N; j++) sa[q * L::SA + j * NC + r] = (bxy || CoarseBoundary(g, D, gl + j)) ? T(0) : xp[j * stride];
      }
    }
  }

  /* x pass, line r = jy (+ N jz) of NC: prolong A(:,r) -> P -> B(:,r); restrict B(:,r) -> P^T ->
     coarse(:,jy,jz) += */
  PW_HD static void PassX(const IP &ip, const TGeom &g, T *yc, const T *sa, T *sb, long long c0, int t)
  {
    int c[3];

    if (t < C * NC) {
      const int q = t / NC, r = t - q * NC;
      if (CoarseCell<DIM>(g, c0, q, c)) {
        if constexpr (!TR) {
          T u[N];
PW_UNROLL
          for (int j = 0; j < N; j++) u[j] = sa[q * L::SA + r * N + j];
          T *const b = sb + q * L::SB + r * NF;
          Line1D<false, T, K>(ip.P[0], u, [&](int p, T v) { b[p] = v; });
        } else {
          const int jy = r % N, jz = r / N, gy = K * c[1] + jy, gz = K * c[2] + (DIM == 3 ? jz : 0);
          if (!CoarseBoundary(g, 1, gy) && (DIM == 2 || !CoarseBoundary(g, 2, gz))) {
            T u[NF];
PW_UNROLL
            for (int p = 0; p < NF; p++) u[p] = sb[q * L::SB + r * NF + p];
            T *const yp = yc + BoxIdx(g.coarse_start, g.coarse_size, K * c[0], gy, gz);
            Line1D<true, T, K>(ip.P[0], u, [&](int j, T v) {
              if (!CoarseBoundary(g, 0, K * c[0] + j)) AtomicAdd(yp + j, v);
            });
          }
        }
      }
    }
  }

  /* 3D y pass, line (px,jz) of NF N: prolong B(px,:,jz) -> P -> A(px,:,jz); restrict A -> P^T -> B */
  PW_HD static void PassY(const IP &ip, const TGeom &g, T *sa, T *sb, long long c0, int t)
  {
    static_assert(DIM == 3, "3D only");
    int c[3];

    if (t < C * NF * N) {
      const int q = t / (NF * N), r = t - q * NF * N, px = r % NF, jz = r / NF;
      if (CoarseCell<3>(g, c0, q, c)) {
        T *const a = sa + q * L::SA + jz * NF * NF + px, *const b = sb + q * L::SB + jz * NF * N + px;
        T        u[TR ? NF : N];
PW_UNROLL
        for (int m = 0; m < (TR ? NF : N); m++) u[m] = TR ? a[m * NF] : b[m * NF];
        Line1D<TR, T, K>(ip.P[1], u, [&](int m, T v) { (TR ? b : a)[m * NF] = v; });
      }
    }
  }

  /* last pass (z in 3D, y in 2D), line r = px (+ NF py) of NL, on the fine side: prolong
     S(r,:) -> P -> fine += w v; restrict fine -> w f -> P^T -> S(r,:), with S = A in 3D, B in 2D
     (node j of the line at r + NL j either way) */
  PW_HD static void PassLast(const IP &ip, const TGeom &g, const T *xf, T *yf, T *sa, T *sb, long long c0, int t)
  {
    int c[3];

    if (t < C * NL) {
      const int q = t / NL, r = t - q * NL, px = r % NF, py = r / NF; /* 2D: py = 0 */
      if (CoarseCell<DIM>(g, c0, q, c)) {
        T *const        s      = DIM == 3 ? sa + q * L::SA + r : sb + q * L::SB + r;
        const T         wxy    = DIM == 3 ? Weight<T, K>(g, 0, c[0], px) * Weight<T, K>(g, 1, c[1], py) : Weight<T, K>(g, 0, c[0], px);
        const int       gx     = 2 * K * c[0] + px, gy = 2 * K * c[1] + (DIM == 3 ? py : 0), gz = 2 * K * c[2];
        const long long stride = LastStride(g.fine_size);
        if constexpr (!TR) {
          if (wxy != T(0)) {
            T u[N];
PW_UNROLL
            for (int j = 0; j < N; j++) u[j] = s[j * NL];
            T *const yp = yf + BoxIdx(g.fine_start, g.fine_size, gx, gy, gz);
            Line1D<false, T, K>(ip.P[D], u, [&](int p, T v) {
              const T w = wxy * Weight<T, K>(g, D, c[D], p);
              if (w != T(0)) AtomicAdd(yp + p * stride, w * v);
            });
          }
        } else {
          T f[NF];
          if (wxy != T(0)) {
            const T *xp = xf + BoxIdx(g.fine_start, g.fine_size, gx, gy, gz);
PW_UNROLL
            for (int p = 0; p < NF; p++) {
              const T w = wxy * Weight<T, K>(g, D, c[D], p);
              f[p]      = w != T(0) ? w * xp[p * stride] : T(0);
            }
          } else {
PW_UNROLL
            for (int p = 0; p < NF; p++) f[p] = T(0);
          }
          Line1D<true, T, K>(ip.P[D], f, [&](int j, T v) { s[j * NL] = v; });
        }
      }
    }
  }
};

/* prolong (TR false): x coarse, y fine; restrict (TR true): x fine, y coarse */
template <typename T, int DIM, int K, bool TR>
__global__ void __launch_bounds__(TLay<DIM, K>::TB) Transfer(const Interp<T, K, DIM> ip, const TGeom g, const T *__restrict__ x, T *__restrict__ y)
{
  using L = TLay<DIM, K>;
  using P = TPasses<T, DIM, K, TR>;
  constexpr int C = L::C;
  /* 2D restrict never touches A */
  __shared__ T    sa[TR && DIM == 2 ? 1 : C * L::SA], sb[C * L::SB];
  const int       t  = threadIdx.x;
  const long long c0 = (long long)blockIdx.x * C;

  if constexpr (!TR) {
    P::Gather(g, x, sa, c0, t);
    __syncthreads();
    P::PassX(ip, g, NULL, sa, sb, c0, t);
    __syncthreads();
    if constexpr (DIM == 3) {
      P::PassY(ip, g, sa, sb, c0, t);
      __syncthreads();
    }
    P::PassLast(ip, g, NULL, y, sa, sb, c0, t);
  } else {
    P::PassLast(ip, g, x, NULL, sa, sb, c0, t);
    __syncthreads();
    if constexpr (DIM == 3) {
      P::PassY(ip, g, sa, sb, c0, t);
      __syncthreads();
    }
    P::PassX(ip, g, y, sa, sb, c0, t);
  }
}

/* ---------------------------------------------------------------------------------------------- */
/* Host side */

static bool BoxHolds(const int start[3], const int size[3], int dir, int lo, int hi) { return start[dir] <= lo && hi < start[dir] + size[dir]; }

/* Validate the descriptor (the reference's assumptions) and find the coarse cells */
static cudaError_t MakeTGeom(const PatchworkTransferDesc *d, TGeom *g, int *empty)
{
  *empty = 0;
  if (!d || (d->dim != 2 && d->dim != 3)) return cudaErrorInvalidValue;
  const int k = d->degree;
  if (k < 1 || k > (d->dim == 3 ? 8 : 10)) return cudaErrorInvalidValue;
  g->dirichlet = d->dirichlet ? 1 : 0;
  for (int dir = 0; dir < 3; dir++) {
    const int fn = d->fine_nodes[dir], cs = d->cell_start[dir], ce = d->cell_end[dir];

    g->cell_start[dir]   = cs;
    g->cell_end[dir]     = ce;
    g->fine_nodes[dir]   = fn;
    g->coarse_nodes[dir] = dir < d->dim ? (fn - 1) / 2 + 1 : 1;
    g->fine_start[dir]   = d->fine_start[dir];
    g->fine_size[dir]    = d->fine_size[dir];
    g->coarse_start[dir] = d->coarse_start[dir];
    g->coarse_size[dir]  = d->coarse_size[dir];
    if (dir >= d->dim) {
      if (fn != 1 || cs != 0 || ce != 1) return cudaErrorInvalidValue;
      if (!BoxHolds(d->fine_start, d->fine_size, dir, 0, 0) || !BoxHolds(d->coarse_start, d->coarse_size, dir, 0, 0)) return cudaErrorInvalidValue;
      g->first[dir] = 0;
      g->count[dir] = 1;
      continue;
    }
    if (fn < 2 * k + 1 || (fn - 1) % (2 * k)) return cudaErrorInvalidValue;
    if (cs < 0 || ce > (fn - 1) / k) return cudaErrorInvalidValue;
    if (ce <= cs) {
      *empty = 1;
      continue;
    }
    if (!BoxHolds(d->fine_start, d->fine_size, dir, k * cs, k * ce)) return cudaErrorInvalidValue;
    if (!BoxHolds(d->coarse_start, d->coarse_size, dir, k * (cs / 2), k * ((ce - 1) / 2 + 1))) return cudaErrorInvalidValue;
    g->first[dir] = cs / 2;
    g->count[dir] = (ce - 1) / 2 - cs / 2 + 1;
  }
  g->ncells = (long long)g->count[0] * g->count[1] * g->count[2];
  return cudaSuccess;
}

template <typename T, int K, int DIM>
static void MakeInterp(const PatchworkTransferDesc *d, Interp<T, K, DIM> &ip)
{
  constexpr int N = K + 1;

  for (int p = 0; p <= 2 * K; p++)
    for (int j = 0; j < N; j++) {
      const double v = p <= K ? d->interp[0][p * N + j] : d->interp[1][(p - K) * N + j];
      for (int c = 0; c < DIM; c++) ip.P[c][p * N + j] = (T)v;
    }
}

template <typename T, int DIM, int K>
static cudaError_t Launch(const PatchworkTransferDesc *d, const TGeom &g, int transpose, const T *x, T *y, cudaStream_t s)
{
  using L = TLay<DIM, K>;
  Interp<T, K, DIM> ip;
  const unsigned    blocks = (unsigned)((g.ncells + L::C - 1) / L::C);

  MakeInterp(d, ip);
  if (transpose) Transfer<T, DIM, K, true><<<blocks, L::TB, 0, s>>>(ip, g, x, y);
  else Transfer<T, DIM, K, false><<<blocks, L::TB, 0, s>>>(ip, g, x, y);
  return cudaGetLastError();
}

template <typename T>
static cudaError_t TransferApply(const PatchworkTransferDesc *d, int transpose, const T *x, T *y, void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  TGeom        g;
  int          empty;
  cudaError_t  err;

  if (!x || !y) return cudaErrorInvalidValue;
  err = MakeTGeom(d, &g, &empty);
  if (err != cudaSuccess || empty) return err;
  if (d->dim == 3) {
    switch (d->degree) {
    case 1: return Launch<T, 3, 1>(d, g, transpose, x, y, s);
    case 2: return Launch<T, 3, 2>(d, g, transpose, x, y, s);
    case 3: return Launch<T, 3, 3>(d, g, transpose, x, y, s);
    case 4: return Launch<T, 3, 4>(d, g, transpose, x, y, s);
    case 5: return Launch<T, 3, 5>(d, g, transpose, x, y, s);
    case 6: return Launch<T, 3, 6>(d, g, transpose, x, y, s);
    case 7: return Launch<T, 3, 7>(d, g, transpose, x, y, s);
    case 8: return Launch<T, 3, 8>(d, g, transpose, x, y, s);
    default: return cudaErrorInvalidValue;
    }
  }
  switch (d->degree) {
  case 1: return Launch<T, 2, 1>(d, g, transpose, x, y, s);
  case 2: return Launch<T, 2, 2>(d, g, transpose, x, y, s);
  case 3: return Launch<T, 2, 3>(d, g, transpose, x, y, s);
  case 4: return Launch<T, 2, 4>(d, g, transpose, x, y, s);
  case 5: return Launch<T, 2, 5>(d, g, transpose, x, y, s);
  case 6: return Launch<T, 2, 6>(d, g, transpose, x, y, s);
  case 7: return Launch<T, 2, 7>(d, g, transpose, x, y, s);
  case 8: return Launch<T, 2, 8>(d, g, transpose, x, y, s);
  case 9: return Launch<T, 2, 9>(d, g, transpose, x, y, s);
  case 10: return Launch<T, 2, 10>(d, g, transpose, x, y, s);
  default: return cudaErrorInvalidValue;
  }
}

} // namespace

extern "C" int PatchworkProlongCUDA(const PatchworkTransferDesc *d, const double *coarse, double *fine, void *stream)
{
  return (int)TransferApply<double>(d, 0, coarse, fine, stream);
}

extern "C" int PatchworkRestrictCUDA(const PatchworkTransferDesc *d, const double *fine, double *coarse, void *stream)
{
  return (int)TransferApply<double>(d, 1, fine, coarse, stream);
}

extern "C" int PatchworkProlongCUDAFloat(const PatchworkTransferDesc *d, const float *coarse, float *fine, void *stream)
{
  return (int)TransferApply<float>(d, 0, coarse, fine, stream);
}

extern "C" int PatchworkRestrictCUDAFloat(const PatchworkTransferDesc *d, const float *fine, float *coarse, void *stream)
{
  return (int)TransferApply<float>(d, 1, fine, coarse, stream);
}
