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
   One line per thread and pass as in cuda/patch_smooth.cu (each use of P reads its own copy in the
   kernel parameters); C coarse cells per block. Fine nodes on the faces of a coarse cell and coarse
   nodes are shared between blocks, hence the atomics. Double precision, degrees 1..8 in 3D and 1..10
   in 2D; others and bad boxes return cudaErrorInvalidValue. */
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

/* P[p (K+1) + j], three copies (one per direction pass) */
template <int K>
struct Interp {
  double P[3][(2 * K + 1) * (K + 1)];
};

template <int DIM, int K>
struct TLay {
  static constexpr int NF = 2 * K + 1, N = K + 1;
  static constexpr int LINES = DIM == 3 ? NF * NF : NF; /* the largest pass */
  static constexpr int C     = DIM == 3 ? (256 / LINES > 0 ? 256 / LINES : 1) : 128 / LINES;
  static constexpr int TB    = (C * LINES + 31) / 32 * 32;
  /* per cell: A holds u ((k+1)^d) then the y-pass result, B the x-pass result */
  static constexpr int SA = DIM == 3 ? NF * NF * N : NF * N;
  static constexpr int SB = DIM == 3 ? NF * N * N : NF * N;
};

PW_HD long long BoxIdx(const int start[3], const int size[3], int gx, int gy, int gz)
{
  return ((long long)(gz - start[2]) * size[1] + (gy - start[1])) * size[0] + (gx - start[0]);
}

/* Weight of fine node p (0..2K) of coarse cell c in direction dir */
template <int K>
PW_HD double Weight(const TGeom &g, int dir, int c, int p)
{
  const int  f0 = 2 * c, gn = 2 * K * c + p, fn = g.fine_nodes[dir];
  const bool in0 = f0 >= g.cell_start[dir] && f0 < g.cell_end[dir], in1 = f0 + 1 >= g.cell_start[dir] && f0 + 1 < g.cell_end[dir];
  const bool bnd = gn == 0 || gn == fn - 1;

  if (g.dirichlet && bnd) return 0.0;
  const double W = (!bnd && gn % K == 0) ? 0.5 : 1.0;
  return (in0 && p <= K ? W : 0.0) + (in1 && p >= K ? W : 0.0);
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

PW_HD void AtomicAdd(double *p, double v)
{
#ifdef __CUDA_ARCH__
  atomicAdd(p, v);
#else
  *p += v;
#endif
}

PW_HD bool CoarseBoundary(const TGeom &g, int dir, int gc) { return g.dirichlet && (gc == 0 || gc == g.coarse_nodes[dir] - 1); }

/* The passes of the kernels below, for thread t of the block whose first coarse cell is c0 (slot q
   of the block: coarse cell c0 + q); host-callable, so that a CPU harness can run them. */
template <int K>
PW_HD void Prolong3DPass0(const Interp<K> &ip, const TGeom &g, const double *xc, double *yf, double *sa, double *sb, long long c0, int t)
{
  using L = TLay<3, K>;
  constexpr int N = L::N, C = L::C;
  int           c[3];

  /* gather, line (jx,jy): u(jx,jy,:) -> A (jx + N jy + N^2 jz) */
  if (t < C * N * N) {
    const int q = t / (N * N), r = t - q * N * N, jx = r % N, jy = r / N;
    if (CoarseCell<3>(g, c0, q, c)) {
      const int       gx = K * c[0] + jx, gy = K * c[1] + jy, gz = K * c[2];
      const bool      bxy   = CoarseBoundary(g, 0, gx) || CoarseBoundary(g, 1, gy);
      const long long plane = (long long)g.coarse_size[0] * g.coarse_size[1];
      const double   *xp    = xc + BoxIdx(g.coarse_start, g.coarse_size, gx, gy, gz);
PW_UNROLL
      for (int jz = 0; jz < N; jz++) sa[q * L::SA + jz * N * N + jy * N + jx] = (bxy || CoarseBoundary(g, 2, gz + jz)) ? 0.0 : xp[jz * plane];
    }
  }
}

template <int K>
PW_HD void Prolong3DPass1(const Interp<K> &ip, const TGeom &g, const double *xc, double *yf, double *sa, double *sb, long long c0, int t)
{
  using L = TLay<3, K>;
  constexpr int NF = L::NF, N = L::N, C = L::C;
  int           c[3];

  /* x pass, line (jy,jz): B(p,jy,jz) = sum_j P[p][j] u(j,jy,jz)  (B: p + NF jy + NF N jz) */
  if (t < C * N * N) {
    const int q = t / (N * N), r = t - q * N * N, jy = r % N, jz = r / N;
    if (CoarseCell<3>(g, c0, q, c)) {
      double u[N];
PW_UNROLL
      for (int j = 0; j < N; j++) u[j] = sa[q * L::SA + jz * N * N + jy * N + j];
PW_UNROLL
      for (int p = 0; p < NF; p++) {
        double s = 0.0;
PW_UNROLL
        for (int j = 0; j < N; j++) s += ip.P[0][p * N + j] * u[j];
        sb[q * L::SB + jz * NF * N + jy * NF + p] = s;
      }
    }
  }
}

template <int K>
PW_HD void Prolong3DPass2(const Interp<K> &ip, const TGeom &g, const double *xc, double *yf, double *sa, double *sb, long long c0, int t)
{
  using L = TLay<3, K>;
  constexpr int NF = L::NF, N = L::N, C = L::C;
  int           c[3];

  /* y pass, line (px,jz): A(px,py,jz) = sum_j P[py][j] B(px,j,jz)  (A: px + NF py + NF^2 jz) */
  if (t < C * NF * N) {
    const int q = t / (NF * N), r = t - q * NF * N, px = r % NF, jz = r / NF;
    if (CoarseCell<3>(g, c0, q, c)) {
      double u[N];
PW_UNROLL
      for (int j = 0; j < N; j++) u[j] = sb[q * L::SB + jz * NF * N + j * NF + px];
PW_UNROLL
      for (int p = 0; p < NF; p++) {
        double s = 0.0;
PW_UNROLL
        for (int j = 0; j < N; j++) s += ip.P[1][p * N + j] * u[j];
        sa[q * L::SA + jz * NF * NF + p * NF + px] = s;
      }
    }
  }
}

template <int K>
PW_HD void Prolong3DPass3(const Interp<K> &ip, const TGeom &g, const double *xc, double *yf, double *sa, double *sb, long long c0, int t)
{
  using L = TLay<3, K>;
  constexpr int NF = L::NF, N = L::N, C = L::C;
  int           c[3];

  /* z pass, line (px,py): v = P A(px,py,:), fine += w v */
  if (t < C * NF * NF) {
    const int q = t / (NF * NF), r = t - q * NF * NF, px = r % NF, py = r / NF;
    if (CoarseCell<3>(g, c0, q, c)) {
      const double wxy = Weight<K>(g, 0, c[0], px) * Weight<K>(g, 1, c[1], py);
      if (wxy != 0.0) {
        double u[N];
PW_UNROLL
        for (int j = 0; j < N; j++) u[j] = sa[q * L::SA + j * NF * NF + py * NF + px];
        const int       gx = 2 * K * c[0] + px, gy = 2 * K * c[1] + py, gz = 2 * K * c[2];
        const long long plane = (long long)g.fine_size[0] * g.fine_size[1];
PW_UNROLL
        for (int p = 0; p < NF; p++) {
          const double w = wxy * Weight<K>(g, 2, c[2], p);
          double       s = 0.0;
PW_UNROLL
          for (int j = 0; j < N; j++) s += ip.P[2][p * N + j] * u[j];
          if (w != 0.0) AtomicAdd(yf + BoxIdx(g.fine_start, g.fine_size, gx, gy, gz) + p * plane, w * s);
        }
      }
    }
  }
}

template <int K>
__global__ void __launch_bounds__(TLay<3, K>::TB) Prolong3D(const Interp<K> ip, const TGeom g, const double *__restrict__ xc, double *__restrict__ yf)
{
  using L = TLay<3, K>;
  constexpr int C = L::C;
  __shared__ double sa[C * L::SA], sb[C * L::SB];
  const int         t  = threadIdx.x;
  const long long   c0 = (long long)blockIdx.x * C;

  Prolong3DPass0<K>(ip, g, xc, yf, sa, sb, c0, t);
  __syncthreads();
  Prolong3DPass1<K>(ip, g, xc, yf, sa, sb, c0, t);
  __syncthreads();
  Prolong3DPass2<K>(ip, g, xc, yf, sa, sb, c0, t);
  __syncthreads();
  Prolong3DPass3<K>(ip, g, xc, yf, sa, sb, c0, t);
}

template <int K>
PW_HD void Restrict3DPass0(const Interp<K> &ip, const TGeom &g, const double *xf, double *yc, double *sa, double *sb, long long c0, int t)
{
  using L = TLay<3, K>;
  constexpr int NF = L::NF, N = L::N, C = L::C;
  int           c[3];

  /* z pass, line (px,py): A(px,py,jz) = sum_p P[p][jz] w f(px,py,p)  (A: px + NF py + NF^2 jz) */
  if (t < C * NF * NF) {
    const int q = t / (NF * NF), r = t - q * NF * NF, px = r % NF, py = r / NF;
    if (CoarseCell<3>(g, c0, q, c)) {
      const double wxy = Weight<K>(g, 0, c[0], px) * Weight<K>(g, 1, c[1], py);
      double       f[NF];
      if (wxy != 0.0) {
        const int       gx = 2 * K * c[0] + px, gy = 2 * K * c[1] + py, gz = 2 * K * c[2];
        const long long plane = (long long)g.fine_size[0] * g.fine_size[1];
        const double   *xp    = xf + BoxIdx(g.fine_start, g.fine_size, gx, gy, gz);
PW_UNROLL
        for (int p = 0; p < NF; p++) {
          const double w = wxy * Weight<K>(g, 2, c[2], p);
          f[p]           = w != 0.0 ? w * xp[p * plane] : 0.0;
        }
      } else {
PW_UNROLL
        for (int p = 0; p < NF; p++) f[p] = 0.0;
      }
PW_UNROLL
      for (int j = 0; j < N; j++) {
        double s = 0.0;
PW_UNROLL
        for (int p = 0; p < NF; p++) s += ip.P[0][p * N + j] * f[p];
        sa[q * L::SA + j * NF * NF + py * NF + px] = s;
      }
    }
  }
}

template <int K>
PW_HD void Restrict3DPass1(const Interp<K> &ip, const TGeom &g, const double *xf, double *yc, double *sa, double *sb, long long c0, int t)
{
  using L = TLay<3, K>;
  constexpr int NF = L::NF, N = L::N, C = L::C;
  int           c[3];

  /* y pass, line (px,jz): B(px,jy,jz) = sum_p P[p][jy] A(px,p,jz)  (B: px + NF jy + NF N jz) */
  if (t < C * NF * N) {
    const int q = t / (NF * N), r = t - q * NF * N, px = r % NF, jz = r / NF;
    if (CoarseCell<3>(g, c0, q, c)) {
      double u[NF];
PW_UNROLL
      for (int p = 0; p < NF; p++) u[p] = sa[q * L::SA + jz * NF * NF + p * NF + px];
PW_UNROLL
      for (int j = 0; j < N; j++) {
        double s = 0.0;
PW_UNROLL
        for (int p = 0; p < NF; p++) s += ip.P[1][p * N + j] * u[p];
        sb[q * L::SB + jz * NF * N + j * NF + px] = s;
      }
    }
  }
}

template <int K>
PW_HD void Restrict3DPass2(const Interp<K> &ip, const TGeom &g, const double *xf, double *yc, double *sa, double *sb, long long c0, int t)
{
  using L = TLay<3, K>;
  constexpr int NF = L::NF, N = L::N, C = L::C;
  int           c[3];

  /* x pass, line (jy,jz): coarse(jx,jy,jz) += sum_p P[p][jx] B(p,jy,jz) */
  if (t < C * N * N) {
    const int q = t / (N * N), r = t - q * N * N, jy = r % N, jz = r / N;
    if (CoarseCell<3>(g, c0, q, c)) {
      const int gy = K * c[1] + jy, gz = K * c[2] + jz;
      if (!CoarseBoundary(g, 1, gy) && !CoarseBoundary(g, 2, gz)) {
        double u[NF];
PW_UNROLL
        for (int p = 0; p < NF; p++) u[p] = sb[q * L::SB + jz * NF * N + jy * NF + p];
        double *yp = yc + BoxIdx(g.coarse_start, g.coarse_size, K * c[0], gy, gz);
PW_UNROLL
        for (int j = 0; j < N; j++) {
          double s = 0.0;
PW_UNROLL
          for (int p = 0; p < NF; p++) s += ip.P[2][p * N + j] * u[p];
          if (!CoarseBoundary(g, 0, K * c[0] + j)) AtomicAdd(yp + j, s);
        }
      }
    }
  }
}

template <int K>
__global__ void __launch_bounds__(TLay<3, K>::TB) Restrict3D(const Interp<K> ip, const TGeom g, const double *__restrict__ xf, double *__restrict__ yc)
{
  using L = TLay<3, K>;
  constexpr int C = L::C;
  __shared__ double sa[C * L::SA], sb[C * L::SB];
  const int         t  = threadIdx.x;
  const long long   c0 = (long long)blockIdx.x * C;

  Restrict3DPass0<K>(ip, g, xf, yc, sa, sb, c0, t);
  __syncthreads();
  Restrict3DPass1<K>(ip, g, xf, yc, sa, sb, c0, t);
  __syncthreads();
  Restrict3DPass2<K>(ip, g, xf, yc, sa, sb, c0, t);
}

template <int K>
PW_HD void Prolong2DPass0(const Interp<K> &ip, const TGeom &g, const double *xc, double *yf, double *sa, double *sb, long long c0, int t)
{
  using L = TLay<2, K>;
  constexpr int N = L::N, C = L::C;
  int           c[3];

  /* gather, line jx: u(jx,:) -> A (jx + N jy) */
  if (t < C * N) {
    const int q = t / N, jx = t - q * N;
    if (CoarseCell<2>(g, c0, q, c)) {
      const int     gx = K * c[0] + jx, gy = K * c[1];
      const bool    bx = CoarseBoundary(g, 0, gx);
      const double *xp = xc + BoxIdx(g.coarse_start, g.coarse_size, gx, gy, 0);
PW_UNROLL
      for (int jy = 0; jy < N; jy++) sa[q * L::SA + jy * N + jx] = (bx || CoarseBoundary(g, 1, gy + jy)) ? 0.0 : xp[(long long)jy * g.coarse_size[0]];
    }
  }
}

template <int K>
PW_HD void Prolong2DPass1(const Interp<K> &ip, const TGeom &g, const double *xc, double *yf, double *sa, double *sb, long long c0, int t)
{
  using L = TLay<2, K>;
  constexpr int NF = L::NF, N = L::N, C = L::C;
  int           c[3];

  /* x pass, line jy: B(p,jy) = sum_j P[p][j] u(j,jy)  (B: p + NF jy) */
  if (t < C * N) {
    const int q = t / N, jy = t - q * N;
    if (CoarseCell<2>(g, c0, q, c)) {
      double u[N];
PW_UNROLL
      for (int j = 0; j < N; j++) u[j] = sa[q * L::SA + jy * N + j];
PW_UNROLL
      for (int p = 0; p < NF; p++) {
        double s = 0.0;
PW_UNROLL
        for (int j = 0; j < N; j++) s += ip.P[0][p * N + j] * u[j];
        sb[q * L::SB + jy * NF + p] = s;
      }
    }
  }
}

template <int K>
PW_HD void Prolong2DPass2(const Interp<K> &ip, const TGeom &g, const double *xc, double *yf, double *sa, double *sb, long long c0, int t)
{
  using L = TLay<2, K>;
  constexpr int NF = L::NF, N = L::N, C = L::C;
  int           c[3];

  /* y pass, line px: v = P B(px,:), fine += w v */
  if (t < C * NF) {
    const int q = t / NF, px = t - q * NF;
    if (CoarseCell<2>(g, c0, q, c)) {
      const double wx = Weight<K>(g, 0, c[0], px);
      if (wx != 0.0) {
        double u[N];
PW_UNROLL
        for (int j = 0; j < N; j++) u[j] = sb[q * L::SB + j * NF + px];
        double *yp = yf + BoxIdx(g.fine_start, g.fine_size, 2 * K * c[0] + px, 2 * K * c[1], 0);
PW_UNROLL
        for (int p = 0; p < NF; p++) {
          const double w = wx * Weight<K>(g, 1, c[1], p);
          double       s = 0.0;
PW_UNROLL
          for (int j = 0; j < N; j++) s += ip.P[1][p * N + j] * u[j];
          if (w != 0.0) AtomicAdd(yp + (long long)p * g.fine_size[0], w * s);
        }
      }
    }
  }
}

template <int K>
__global__ void __launch_bounds__(TLay<2, K>::TB) Prolong2D(const Interp<K> ip, const TGeom g, const double *__restrict__ xc, double *__restrict__ yf)
{
  using L = TLay<2, K>;
  constexpr int C = L::C;
  __shared__ double sa[C * L::SA], sb[C * L::SB];
  const int         t  = threadIdx.x;
  const long long   c0 = (long long)blockIdx.x * C;

  Prolong2DPass0<K>(ip, g, xc, yf, sa, sb, c0, t);
  __syncthreads();
  Prolong2DPass1<K>(ip, g, xc, yf, sa, sb, c0, t);
  __syncthreads();
  Prolong2DPass2<K>(ip, g, xc, yf, sa, sb, c0, t);
}

template <int K>
PW_HD void Restrict2DPass0(const Interp<K> &ip, const TGeom &g, const double *xf, double *yc, double *sa, double *sb, long long c0, int t)
{
  using L = TLay<2, K>;
  constexpr int NF = L::NF, N = L::N, C = L::C;
  int           c[3];

  /* y pass, line px: B(px,jy) = sum_p P[p][jy] w f(px,p)  (B: px + NF jy) */
  if (t < C * NF) {
    const int q = t / NF, px = t - q * NF;
    if (CoarseCell<2>(g, c0, q, c)) {
      const double wx = Weight<K>(g, 0, c[0], px);
      double       f[NF];
      if (wx != 0.0) {
        const double *xp = xf + BoxIdx(g.fine_start, g.fine_size, 2 * K * c[0] + px, 2 * K * c[1], 0);
PW_UNROLL
        for (int p = 0; p < NF; p++) {
          const double w = wx * Weight<K>(g, 1, c[1], p);
          f[p]           = w != 0.0 ? w * xp[(long long)p * g.fine_size[0]] : 0.0;
        }
      } else {
PW_UNROLL
        for (int p = 0; p < NF; p++) f[p] = 0.0;
      }
PW_UNROLL
      for (int j = 0; j < N; j++) {
        double s = 0.0;
PW_UNROLL
        for (int p = 0; p < NF; p++) s += ip.P[0][p * N + j] * f[p];
        sb[q * L::SB + j * NF + px] = s;
      }
    }
  }
}

template <int K>
PW_HD void Restrict2DPass1(const Interp<K> &ip, const TGeom &g, const double *xf, double *yc, double *sa, double *sb, long long c0, int t)
{
  using L = TLay<2, K>;
  constexpr int NF = L::NF, N = L::N, C = L::C;
  int           c[3];

  /* x pass, line jy: coarse(jx,jy) += sum_p P[p][jx] B(p,jy) */
  if (t < C * N) {
    const int q = t / N, jy = t - q * N;
    if (CoarseCell<2>(g, c0, q, c)) {
      const int gy = K * c[1] + jy;
      if (!CoarseBoundary(g, 1, gy)) {
        double u[NF];
PW_UNROLL
        for (int p = 0; p < NF; p++) u[p] = sb[q * L::SB + jy * NF + p];
        double *yp = yc + BoxIdx(g.coarse_start, g.coarse_size, K * c[0], gy, 0);
PW_UNROLL
        for (int j = 0; j < N; j++) {
          double s = 0.0;
PW_UNROLL
          for (int p = 0; p < NF; p++) s += ip.P[1][p * N + j] * u[p];
          if (!CoarseBoundary(g, 0, K * c[0] + j)) AtomicAdd(yp + j, s);
        }
      }
    }
  }
}

template <int K>
__global__ void __launch_bounds__(TLay<2, K>::TB) Restrict2D(const Interp<K> ip, const TGeom g, const double *__restrict__ xf, double *__restrict__ yc)
{
  using L = TLay<2, K>;
  constexpr int C = L::C;
  __shared__ double sb[C * L::SB];
  double *const     sa = NULL;
  const int         t  = threadIdx.x;
  const long long   c0 = (long long)blockIdx.x * C;

  Restrict2DPass0<K>(ip, g, xf, yc, sa, sb, c0, t);
  __syncthreads();
  Restrict2DPass1<K>(ip, g, xf, yc, sa, sb, c0, t);
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

template <int K>
static void MakeInterp(const PatchworkTransferDesc *d, Interp<K> &ip)
{
  constexpr int N = K + 1;

  for (int p = 0; p <= 2 * K; p++)
    for (int j = 0; j < N; j++) {
      const double v = p <= K ? d->interp[0][p * N + j] : d->interp[1][(p - K) * N + j];
      for (int c = 0; c < 3; c++) ip.P[c][p * N + j] = v;
    }
}

template <int DIM, int K>
static cudaError_t Launch(const PatchworkTransferDesc *d, const TGeom &g, int transpose, const double *x, double *y, cudaStream_t s)
{
  using L = TLay<DIM, K>;
  Interp<K>      ip;
  const unsigned blocks = (unsigned)((g.ncells + L::C - 1) / L::C);

  MakeInterp(d, ip);
  if constexpr (DIM == 3) {
    if (transpose) Restrict3D<K><<<blocks, L::TB, 0, s>>>(ip, g, x, y);
    else Prolong3D<K><<<blocks, L::TB, 0, s>>>(ip, g, x, y);
  } else {
    if (transpose) Restrict2D<K><<<blocks, L::TB, 0, s>>>(ip, g, x, y);
    else Prolong2D<K><<<blocks, L::TB, 0, s>>>(ip, g, x, y);
  }
  return cudaGetLastError();
}

static cudaError_t Transfer(const PatchworkTransferDesc *d, int transpose, const double *x, double *y, void *stream)
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
    case 1: return Launch<3, 1>(d, g, transpose, x, y, s);
    case 2: return Launch<3, 2>(d, g, transpose, x, y, s);
    case 3: return Launch<3, 3>(d, g, transpose, x, y, s);
    case 4: return Launch<3, 4>(d, g, transpose, x, y, s);
    case 5: return Launch<3, 5>(d, g, transpose, x, y, s);
    case 6: return Launch<3, 6>(d, g, transpose, x, y, s);
    case 7: return Launch<3, 7>(d, g, transpose, x, y, s);
    case 8: return Launch<3, 8>(d, g, transpose, x, y, s);
    default: return cudaErrorInvalidValue;
    }
  }
  switch (d->degree) {
  case 1: return Launch<2, 1>(d, g, transpose, x, y, s);
  case 2: return Launch<2, 2>(d, g, transpose, x, y, s);
  case 3: return Launch<2, 3>(d, g, transpose, x, y, s);
  case 4: return Launch<2, 4>(d, g, transpose, x, y, s);
  case 5: return Launch<2, 5>(d, g, transpose, x, y, s);
  case 6: return Launch<2, 6>(d, g, transpose, x, y, s);
  case 7: return Launch<2, 7>(d, g, transpose, x, y, s);
  case 8: return Launch<2, 8>(d, g, transpose, x, y, s);
  case 9: return Launch<2, 9>(d, g, transpose, x, y, s);
  case 10: return Launch<2, 10>(d, g, transpose, x, y, s);
  default: return cudaErrorInvalidValue;
  }
}

} // namespace

extern "C" int PatchworkProlongCUDA(const PatchworkTransferDesc *d, const double *coarse, double *fine, void *stream)
{
  return (int)Transfer(d, 0, coarse, fine, stream);
}

extern "C" int PatchworkRestrictCUDA(const PatchworkTransferDesc *d, const double *fine, double *coarse, void *stream)
{
  return (int)Transfer(d, 1, fine, coarse, stream);
}
