/* CUDA kernels of the vertex-patch smoother (contract: include/patchwork/patch_kernel.h; CPU
   reference: src/core/patch_ref.c), in double and float: PatchworkPatchSmoothCUDA(Float), the fused
   smoother of the paper's eq. (8) (local residual from the patch closure, fast-diagonalization solve,
   update); PatchworkPatchSolveCUDA(Float), the solve alone; and PatchworkPatchResidualCUDA(Float),
   the local residual alone, written to the patch interiors (with the solve after it, the paper's
   "separate" variant: sec. 3.1, Table 4).

   Algorithm per patch (3D; 2D drops z). With NP = 2k+1 nodes and NI = 2k-1 interior nodes per
   direction, the 1D data are folded on the host into M = Pm, Kx = cs0 Ps, Ky = cs1 Ps,
   Az = cm Pm + cs2 Ps (NI x NP each), so that
     Abar u = (Az (x) M (x) M) u + (M (x) M (x) Kx) u + (M (x) Ky (x) M) u        (z (x) y (x) x)
   is evaluated as x pass: a = M u, b = Kx u;  y pass: c = M a, d = Ky a + M b;  z pass: v = Az c + M d,
   and the local solve A^{-1} r = (S(x)S(x)S) D^{-1} (S(x)S(x)S)^T r, D = cm + cs0 lam_i + cs1 lam_j +
   cs2 lam_l, one 1D transform at a time. Every pass works on whole lines: a thread loads one line of
   the patch tensor from shared memory into registers, applies the 1D matrix with all loops unrolled
   (the matrix entries are compile-time offsets into the kernel-parameter constant bank, uniform across
   the block: no shared-memory traffic for them) and writes the line back in place. The passes are
     gather  (i,j) : x(i,j,:) from global, Dirichlet nodes zeroed       -> X               NP^2 lines
     x pass  (j,l) : X(:,j,l) -> a -> X, b -> B                                            NP^2 lines
     y pass  (i,l) : X(i,:,l), B(i,:,l) -> c -> X, d -> B                                  NI NP lines
     z pass  (i,j) : X(i,j,:), B(i,j,:) -> v; r = b(i,j,:) - v; S^T r (z) in registers -> X NI^2 lines
     solve y (i,l) : S^T along y                                                           NI^2 lines
     solve x (j,l) : S^T along x, times 1/D, S along x, all in registers                   NI^2 lines
     solve y (i,l) : S along y                                                             NI^2 lines
     solve z (i,j) : S along z in registers, y(i,j,:) += omega t                           NI^2 lines
   (the solve kernel starts with the z pass reading r instead of the residual). The residual kernel is
   the smoother kernel instantiated with RES = true: the same gather, x and y passes, and a z pass that
   stores r to y(i,j,:) instead of transforming it; the solve passes are compiled out. It keeps the
   smoother's layouts and launch geometry (the solve's would not hold the closure).

   Launch geometry: a block of TB threads holds C patches (C > 1 at low degree, where a patch has too
   few lines to fill a block) with linear thread indexing: in every pass, thread t takes line t of
   the pass, counted over the block's C patches (patch t / lines, line t % lines), so a warp holds 32
   lines across patch boundaries and the lanes stay busy in every pass; a pass with fewer lines
   (NI^2 < NP^2) leaves whole warps idle at the barrier, which costs no issue slots. TB = C NP^2
   rounded up to warps (2D: C NP), so every pass has at most one line per thread: with a loop over
   lines the compiler hoists the matrix entries out of it into hundreds of registers.

   Even-odd split: the 1D matrices of the Gauss-Lobatto basis are centro-symmetric (A[i][j] =
   A[NI-1-i][NP-1-j]) and the eigenvectors are symmetric or antisymmetric; the host checks both and
   then uses half-size matrices: (A u)[i] = E ue + O uo, (A u)[NI-1-i] = E ue - O uo with
   ue_j = u_j + u_{NP-1-j}, uo_j = u_j - u_{NP-1-j}; the eigenvectors are reordered (symmetric ones
   first, eigenvalues alike) so S^T maps ue to the symmetric and uo to the antisymmetric modes. About
   half the multiply-adds and coefficients. Other data take the plain products (same kernels).

   Shared memory: per patch X (NP^3, strides 1, LD, PS) and B (NI x NP x NP, strides 1, LDB, PSB),
   dynamic shared memory. The paddings in the tables below were chosen by counting shared-memory
   wavefronts (4-byte banks; 8-byte words as two half-warps) of every access pattern of every pass
   over all warps of a block, weighted by the number of accesses, with a penalty on size.

   Degrees: 1..8 in 3D, 1..10 in 2D; others, bad boxes or vertex ranges return cudaErrorInvalidValue.
   y may alias x (in-place, multiplicative): a patch reads all its closure into shared memory before
   any thread writes its interior, and patches of one color never read each other's interiors. */
#include <cuda_runtime.h>
#include <math.h>
#include <type_traits>
#include <patchwork/patch_kernel.h>

#define PW_HD __host__ __device__ __forceinline__
/* the pass functions are host-callable too (for a CPU harness); unroll only in device code */
#ifdef __CUDA_ARCH__
  #define PW_UNROLL _Pragma("unroll")
#else
  #define PW_UNROLL
#endif

namespace {

__host__ __device__ constexpr int AtLeast1(int a) { return a > 0 ? a : 1; }

/* ---------------------------------------------------------------------------------------------- */
/* 1D operators on register lines */

/* NO x NIN matrix, row major */
template <typename T, int NO, int NIN>
struct FullMat {
  T a[NO * NIN];
};

/* Centro-symmetric NO x NIN matrix (A[i][j] = A[NO-1-i][NIN-1-j]) by its even and odd parts:
   e[i][j] = (A[i][j] + A[i][NIN-1-j])/2 (j < NIN/2), e[i][NIN/2] = A[i][NIN/2] (odd NIN),
   o[i][j] = (A[i][j] - A[i][NIN-1-j])/2, for the rows i < (NO+1)/2 (e) and i < NO/2 (o). */
template <typename T, int NO, int NIN>
struct EOMat {
  static constexpr int HO = NO / 2, HI = NIN / 2, RE = (NO + 1) / 2, CE = (NIN + 1) / 2;
  T                    e[RE * CE], o[AtLeast1(HO * HI)];
};

/* out = A u (ADD: out += A u) */
template <bool ADD, typename T, int NO, int NIN>
PW_HD void MatVec(const FullMat<T, NO, NIN> &A, const T (&u)[NIN], T (&out)[NO])
{
PW_UNROLL
  for (int i = 0; i < NO; i++) {
    T s = ADD ? out[i] : T(0);
PW_UNROLL
    for (int j = 0; j < NIN; j++) s += A.a[i * NIN + j] * u[j];
    out[i] = s;
  }
}

template <bool ADD, typename T, int NO, int NIN>
PW_HD void MatVec(const EOMat<T, NO, NIN> &A, const T (&u)[NIN], T (&out)[NO])
{
  constexpr int HO = NO / 2, HI = NIN / 2, RE = (NO + 1) / 2, CE = (NIN + 1) / 2;
  T             ue[CE], uo[AtLeast1(HI)];

PW_UNROLL
  for (int j = 0; j < HI; j++) {
    ue[j] = u[j] + u[NIN - 1 - j];
    uo[j] = u[j] - u[NIN - 1 - j];
  }
  if constexpr (NIN % 2) ue[HI] = u[HI];
PW_UNROLL
  for (int i = 0; i < RE; i++) {
    T p = T(0);
PW_UNROLL
    for (int j = 0; j < CE; j++) p += A.e[i * CE + j] * ue[j];
    if (i < HO) {
      T q = T(0);
PW_UNROLL
      for (int j = 0; j < HI; j++) q += A.o[i * HI + j] * uo[j];
      if (ADD) {
        out[i] += p + q;
        out[NO - 1 - i] += p - q;
      } else {
        out[i]          = p + q;
        out[NO - 1 - i] = p - q;
      }
    } else { /* the middle row of odd NO: its odd part vanishes */
      if (ADD) out[i] += p;
      else out[i] = p;
    }
  }
}

/* Eigenvectors S (NI x NI, column m = mode m), for S^T (physical -> modes) and S (modes -> physical) */
template <typename T, int NI>
struct FullEig {
  T s[NI * NI]; /* s[i NI + m] = S[i][m] */
};

/* Symmetric modes first (KS = (NI+1)/2 of them), then the antisymmetric ones (KA = NI/2), each by its
   upper half rows: es[i KS + m] = S[i][m] (i < KS), ea[i KA + m] = S[i][KS + m] (i < KA) */
template <typename T, int NI>
struct EOEig {
  static constexpr int KS = (NI + 1) / 2, KA = NI / 2;
  T                    es[KS * KS], ea[AtLeast1(KA * KA)];
};

/* out = S^T u */
template <typename T, int NI>
PW_HD void ToModes(const FullEig<T, NI> &S, const T (&u)[NI], T (&out)[NI])
{
PW_UNROLL
  for (int m = 0; m < NI; m++) {
    T s = T(0);
PW_UNROLL
    for (int i = 0; i < NI; i++) s += S.s[i * NI + m] * u[i];
    out[m] = s;
  }
}

/* out = S h */
template <typename T, int NI>
PW_HD void FromModes(const FullEig<T, NI> &S, const T (&h)[NI], T (&out)[NI])
{
PW_UNROLL
  for (int i = 0; i < NI; i++) {
    T s = T(0);
PW_UNROLL
    for (int m = 0; m < NI; m++) s += S.s[i * NI + m] * h[m];
    out[i] = s;
  }
}

template <typename T, int NI>
PW_HD void ToModes(const EOEig<T, NI> &S, const T (&u)[NI], T (&out)[NI])
{
  static_assert(NI % 2 == 1, "NI = 2k-1 is odd");
  constexpr int KS = (NI + 1) / 2, KA = NI / 2;
  T             ue[KS], uo[AtLeast1(KA)];

PW_UNROLL
  for (int i = 0; i < KA; i++) {
    ue[i] = u[i] + u[NI - 1 - i];
    uo[i] = u[i] - u[NI - 1 - i];
  }
  ue[KA] = u[KA];
PW_UNROLL
  for (int m = 0; m < KS; m++) {
    T s = T(0);
PW_UNROLL
    for (int i = 0; i < KS; i++) s += S.es[i * KS + m] * ue[i];
    out[m] = s;
  }
PW_UNROLL
  for (int m = 0; m < KA; m++) {
    T s = T(0);
PW_UNROLL
    for (int i = 0; i < KA; i++) s += S.ea[i * KA + m] * uo[i];
    out[KS + m] = s;
  }
}

template <typename T, int NI>
PW_HD void FromModes(const EOEig<T, NI> &S, const T (&h)[NI], T (&out)[NI])
{
  constexpr int KS = (NI + 1) / 2, KA = NI / 2;

PW_UNROLL
  for (int i = 0; i < KS; i++) {
    T p = T(0);
PW_UNROLL
    for (int m = 0; m < KS; m++) p += S.es[i * KS + m] * h[m];
    if (i < KA) {
      T q = T(0);
PW_UNROLL
      for (int m = 0; m < KA; m++) q += S.ea[i * KA + m] * h[KS + m];
      out[i]          = p + q;
      out[NI - 1 - i] = p - q;
    } else out[i] = p; /* middle node: antisymmetric modes vanish there */
  }
}

/* 1/x, to full precision of T */
PW_HD float Rcp(float x)
{
#ifdef __CUDA_ARCH__
  return __frcp_rn(x);
#else
  return 1.0f / x;
#endif
}

PW_HD double Rcp(double x)
{
#ifdef __CUDA_ARCH__
  double y;
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
  y = fma(y, fma(-x, y, 1.0), y); /* two Newton steps from the hardware approximation */
  y = fma(y, fma(-x, y, 1.0), y);
  return y;
#else
  return 1.0 / x;
#endif
}

/* ---------------------------------------------------------------------------------------------- */
/* Kernel parameters */

template <typename T, int K, bool EO>
struct Types {
  static constexpr int NP = 2 * K + 1, NI = 2 * K - 1;
  using Rect = typename std::conditional<EO, EOMat<T, NI, NP>, FullMat<T, NI, NP>>::type;
  using Eig  = typename std::conditional<EO, EOEig<T, NI>, FullEig<T, NI>>::type;
};

/* Every use of a 1D matrix in a kernel reads its own copy of it: the compiler merges repeated loads
   of one kernel parameter into a register that then lives from the first use to the last (hundreds
   of registers for the matrices of a pass), while a parameter read once becomes an operand of its
   multiply-add, straight from the constant bank. Copies are cheap (up to ~25 KB of the 32 KB of
   kernel parameters at k = 8 with plain products, half that with the even-odd split). */

/* Uses of the modes S: 3D: z pass to modes, y to modes, x to and from modes, y from, z from;
   2D: y pass to modes, x to and from, y from */
enum { S_TOZ = 0, S_TOY = 1, S_TOX = 2, S_FROMX = 3, S_FROMY = 4, S_FROMZ = 5 };
enum { S2_TOY = 0, S2_TOX = 1, S2_FROMX = 2, S2_FROMY = 3 };

/* The solve: modes S and the denominators cm + cs0 lam_i + cs1 lam_j (+ cs2 lam_l) as
   3D: lam0 = cs0 lam, lam1 = cs1 lam, lam2 = cm + cs2 lam;  2D: lam0 = cs0 lam, lam1 = cm + cs1 lam
   (lam in the order of the modes of S) */
template <typename T, int K, bool EO, int DIM>
struct SolveCoef {
  typename Types<T, K, EO>::Eig S[DIM == 3 ? 6 : 4];
  T                             lam0[2 * K - 1], lam1[2 * K - 1], lam2[2 * K - 1];
  T                             omega;
};

/* Uses of the residual matrices. 3D: x pass M, Kx = cs0 Ps; y pass M (c = M a), Ky = cs1 Ps,
   M (d += M b); z pass Az = cm Pm + cs2 Ps, M. 2D: x pass M, Kx; y pass Ay = cm Pm + cs1 Ps, M. */
enum { R_MX = 0, R_KX = 1, R_MY = 2, R_KY = 3, R_MY2 = 4, R_AZ = 5, R_MZ = 6 };
enum { R2_MX = 0, R2_KX = 1, R2_AY = 2, R2_MY = 3 };

template <typename T, int K, bool EO, int DIM>
struct SmoothCoef {
  SolveCoef<T, K, EO, DIM>       sv;
  typename Types<T, K, EO>::Rect R[DIM == 3 ? 7 : 4];
};

/* The residual kernel's: the matrices alone (same uses as in SmoothCoef) */
template <typename T, int K, bool EO, int DIM>
struct ResidualCoef {
  typename Types<T, K, EO>::Rect R[DIM == 3 ? 7 : 4];
};

/* Coefficients of the smoother (RES false) or of the residual kernel (RES true) */
template <typename T, int K, bool EO, int DIM, bool RES>
using LocalCoef = typename std::conditional<RES, ResidualCoef<T, K, EO, DIM>, SmoothCoef<T, K, EO, DIM>>::type;

/* The patches of one launch: patch t = (tx,ty,tz) (lexicographic, t < count) is that of vertex
   first + 2 t; its local node (0,0,0) is global node k (v - 1) */
struct PGeom {
  int       k;
  int       first[3], count[3];
  int       nodes[3];
  int       in_start[3], in_size[3], out_start[3], out_size[3];
  int       dirichlet;
  long long npatch;
};

PW_HD bool OnEdge(int g, int n) { return g == 0 || g == n - 1; }

PW_HD long long BoxIdx(const int start[3], const int size[3], int gx, int gy, int gz)
{
  return ((long long)(gz - start[2]) * size[1] + (gy - start[1])) * size[0] + (gx - start[0]);
}

/* Origin of patch p0 + q, false when past the last patch */
template <int DIM>
PW_HD bool PatchOrigin(const PGeom &g, long long p0, int q, int o[3])
{
  const long long p = p0 + q;

  if (p >= g.npatch) return false;
  const long long cxy = (long long)g.count[0] * g.count[1];
  const long long tz  = p / cxy;
  const long long r   = p - tz * cxy;
  const int       ty  = (int)(r / g.count[0]);
  const int       tx  = (int)(r - (long long)ty * g.count[0]);

  o[0] = g.k * (g.first[0] + 2 * tx - 1);
  o[1] = g.k * (g.first[1] + 2 * ty - 1);
  o[2] = DIM == 3 ? g.k * (g.first[2] + 2 * (int)tz - 1) : 0;
  return true;
}

/* ---------------------------------------------------------------------------------------------- */
/* Launch geometry and shared-memory layouts.
   3D smoother: C patches of TB threads; X(i,j,l) of patch q at q CS + l PS + j LD + i, B(i,j,l) at
   q CSB + l PSB + j LDB + i. 2D: X(i,j) at q CS + j LD + i, B(i,j) at q CSB + j LDB + i.
   Solve: X only, NI^d. Second parameter: bytes per scalar. */
template <int K, int WS>
struct Lay3;
template <int K, int WS>
struct Lay2;
template <int K, int WS>
struct LaySolve3;
template <int K, int WS>
struct LaySolve2;

template <> struct Lay3<1, 8> { static constexpr int C = 14, TB = 128, LD = 3, PS = 9, CS = 27, LDB = 1, PSB = 3, CSB = 9; };
template <> struct Lay3<2, 8> { static constexpr int C = 5, TB = 128, LD = 5, PS = 25, CS = 125, LDB = 4, PSB = 19, CSB = 95; };
template <> struct Lay3<3, 8> { static constexpr int C = 5, TB = 256, LD = 7, PS = 53, CS = 377, LDB = 5, PSB = 35, CSB = 249; };
template <> struct Lay3<4, 8> { static constexpr int C = 3, TB = 256, LD = 9, PS = 87, CS = 785, LDB = 7, PSB = 71, CSB = 639; };
template <> struct Lay3<5, 8> { static constexpr int C = 2, TB = 256, LD = 11, PS = 121, CS = 1331, LDB = 9, PSB = 105, CSB = 1155; };
template <> struct Lay3<6, 8> { static constexpr int C = 1, TB = 192, LD = 13, PS = 171, CS = 2221, LDB = 11, PSB = 155, CSB = 2003; };
template <> struct Lay3<7, 8> { static constexpr int C = 1, TB = 256, LD = 15, PS = 237, CS = 3543, LDB = 13, PSB = 205, CSB = 3065; };
template <> struct Lay3<8, 8> { static constexpr int C = 1, TB = 320, LD = 17, PS = 303, CS = 5137, LDB = 15, PSB = 255, CSB = 4335; };
template <> struct Lay3<1, 4> { static constexpr int C = 14, TB = 128, LD = 3, PS = 9, CS = 27, LDB = 1, PSB = 3, CSB = 9; };
template <> struct Lay3<2, 4> { static constexpr int C = 5, TB = 128, LD = 5, PS = 25, CS = 125, LDB = 3, PSB = 15, CSB = 75; };
template <> struct Lay3<3, 4> { static constexpr int C = 5, TB = 256, LD = 7, PS = 51, CS = 369, LDB = 5, PSB = 35, CSB = 249; };
template <> struct Lay3<4, 4> { static constexpr int C = 3, TB = 256, LD = 9, PS = 103, CS = 913, LDB = 7, PSB = 70, CSB = 625; };
template <> struct Lay3<5, 4> { static constexpr int C = 2, TB = 256, LD = 11, PS = 137, CS = 1507, LDB = 9, PSB = 103, CSB = 1137; };
template <> struct Lay3<6, 4> { static constexpr int C = 1, TB = 192, LD = 13, PS = 171, CS = 2221, LDB = 11, PSB = 143, CSB = 1859; };
template <> struct Lay3<7, 4> { static constexpr int C = 1, TB = 256, LD = 17, PS = 269, CS = 4019, LDB = 13, PSB = 205, CSB = 3065; };
template <> struct Lay3<8, 4> { static constexpr int C = 1, TB = 320, LD = 17, PS = 303, CS = 5137, LDB = 15, PSB = 271, CSB = 4591; };

template <> struct Lay2<1, 8> { static constexpr int C = 42, TB = 128, LD = 3, CS = 9, LDB = 1, CSB = 3; };
template <> struct Lay2<2, 8> { static constexpr int C = 25, TB = 128, LD = 7, CS = 35, LDB = 4, CSB = 19; };
template <> struct Lay2<3, 8> { static constexpr int C = 18, TB = 128, LD = 10, CS = 69, LDB = 5, CSB = 35; };
template <> struct Lay2<4, 8> { static constexpr int C = 14, TB = 128, LD = 9, CS = 87, LDB = 7, CSB = 63; };
template <> struct Lay2<5, 8> { static constexpr int C = 11, TB = 128, LD = 11, CS = 121, LDB = 11, CSB = 121; };
template <> struct Lay2<6, 8> { static constexpr int C = 9, TB = 128, LD = 13, CS = 171, LDB = 11, CSB = 143; };
template <> struct Lay2<7, 8> { static constexpr int C = 8, TB = 128, LD = 17, CS = 253, LDB = 13, CSB = 195; };
template <> struct Lay2<8, 8> { static constexpr int C = 7, TB = 128, LD = 17, CS = 303, LDB = 15, CSB = 255; };
template <> struct Lay2<9, 8> { static constexpr int C = 6, TB = 128, LD = 19, CS = 369, LDB = 17, CSB = 337; };
template <> struct Lay2<10, 8> { static constexpr int C = 6, TB = 128, LD = 23, CS = 483, LDB = 19, CSB = 403; };
template <> struct Lay2<1, 4> { static constexpr int C = 42, TB = 128, LD = 3, CS = 9, LDB = 1, CSB = 3; };
template <> struct Lay2<2, 4> { static constexpr int C = 25, TB = 128, LD = 5, CS = 25, LDB = 3, CSB = 15; };
template <> struct Lay2<3, 4> { static constexpr int C = 18, TB = 128, LD = 7, CS = 51, LDB = 5, CSB = 35; };
template <> struct Lay2<4, 4> { static constexpr int C = 14, TB = 128, LD = 9, CS = 103, LDB = 9, CSB = 103; };
template <> struct Lay2<5, 4> { static constexpr int C = 11, TB = 128, LD = 11, CS = 121, LDB = 11, CSB = 121; };
template <> struct Lay2<6, 4> { static constexpr int C = 9, TB = 128, LD = 13, CS = 171, LDB = 11, CSB = 143; };
template <> struct Lay2<7, 4> { static constexpr int C = 8, TB = 128, LD = 18, CS = 269, LDB = 14, CSB = 237; };
template <> struct Lay2<8, 4> { static constexpr int C = 7, TB = 128, LD = 17, CS = 303, LDB = 15, CSB = 255; };
template <> struct Lay2<9, 4> { static constexpr int C = 6, TB = 128, LD = 19, CS = 369, LDB = 17, CSB = 337; };
template <> struct Lay2<10, 4> { static constexpr int C = 6, TB = 128, LD = 21, CS = 441, LDB = 19, CSB = 399; };

template <> struct LaySolve3<1, 8> { static constexpr int C = 128, TB = 128, LD = 1, PS = 1, CS = 1; };
template <> struct LaySolve3<2, 8> { static constexpr int C = 14, TB = 128, LD = 3, PS = 9, CS = 27; };
template <> struct LaySolve3<3, 8> { static constexpr int C = 5, TB = 128, LD = 5, PS = 25, CS = 125; };
template <> struct LaySolve3<4, 8> { static constexpr int C = 5, TB = 256, LD = 7, PS = 55, CS = 385; };
template <> struct LaySolve3<5, 8> { static constexpr int C = 3, TB = 256, LD = 9, PS = 89, CS = 801; };
template <> struct LaySolve3<6, 8> { static constexpr int C = 2, TB = 256, LD = 11, PS = 123, CS = 1353; };
template <> struct LaySolve3<7, 8> { static constexpr int C = 1, TB = 192, LD = 13, PS = 173, CS = 2245; };
template <> struct LaySolve3<8, 8> { static constexpr int C = 1, TB = 256, LD = 15, PS = 239, CS = 3571; };
template <> struct LaySolve3<1, 4> { static constexpr int C = 128, TB = 128, LD = 1, PS = 1, CS = 1; };
template <> struct LaySolve3<2, 4> { static constexpr int C = 14, TB = 128, LD = 3, PS = 9, CS = 27; };
template <> struct LaySolve3<3, 4> { static constexpr int C = 5, TB = 128, LD = 5, PS = 25, CS = 125; };
template <> struct LaySolve3<4, 4> { static constexpr int C = 5, TB = 256, LD = 7, PS = 52, CS = 369; };
template <> struct LaySolve3<5, 4> { static constexpr int C = 3, TB = 256, LD = 9, PS = 81, CS = 729; };
template <> struct LaySolve3<6, 4> { static constexpr int C = 2, TB = 256, LD = 11, PS = 121, CS = 1331; };
template <> struct LaySolve3<7, 4> { static constexpr int C = 1, TB = 192, LD = 13, PS = 169, CS = 2197; };
template <> struct LaySolve3<8, 4> { static constexpr int C = 1, TB = 256, LD = 15, PS = 239, CS = 3571; };

template <> struct LaySolve2<1, 8> { static constexpr int C = 128, TB = 128, LD = 1, CS = 1; };
template <> struct LaySolve2<2, 8> { static constexpr int C = 42, TB = 128, LD = 3, CS = 9; };
template <> struct LaySolve2<3, 8> { static constexpr int C = 25, TB = 128, LD = 5, CS = 25; };
template <> struct LaySolve2<4, 8> { static constexpr int C = 18, TB = 128, LD = 9, CS = 63; };
template <> struct LaySolve2<5, 8> { static constexpr int C = 14, TB = 128, LD = 10, CS = 89; };
template <> struct LaySolve2<6, 8> { static constexpr int C = 11, TB = 128, LD = 11, CS = 121; };
template <> struct LaySolve2<7, 8> { static constexpr int C = 9, TB = 128, LD = 13, CS = 169; };
template <> struct LaySolve2<8, 8> { static constexpr int C = 8, TB = 128, LD = 17, CS = 255; };
template <> struct LaySolve2<9, 8> { static constexpr int C = 7, TB = 128, LD = 17, CS = 289; };
template <> struct LaySolve2<10, 8> { static constexpr int C = 6, TB = 128, LD = 19, CS = 361; };
template <> struct LaySolve2<1, 4> { static constexpr int C = 128, TB = 128, LD = 1, CS = 1; };
template <> struct LaySolve2<2, 4> { static constexpr int C = 42, TB = 128, LD = 3, CS = 9; };
template <> struct LaySolve2<3, 4> { static constexpr int C = 25, TB = 128, LD = 5, CS = 25; };
template <> struct LaySolve2<4, 4> { static constexpr int C = 18, TB = 128, LD = 8, CS = 71; };
template <> struct LaySolve2<5, 4> { static constexpr int C = 14, TB = 128, LD = 9, CS = 81; };
template <> struct LaySolve2<6, 4> { static constexpr int C = 11, TB = 128, LD = 11, CS = 121; };
template <> struct LaySolve2<7, 4> { static constexpr int C = 9, TB = 128, LD = 13, CS = 169; };
template <> struct LaySolve2<8, 4> { static constexpr int C = 8, TB = 128, LD = 18, CS = 271; };
template <> struct LaySolve2<9, 4> { static constexpr int C = 7, TB = 128, LD = 17, CS = 289; };
template <> struct LaySolve2<10, 4> { static constexpr int C = 6, TB = 128, LD = 19, CS = 371; };

/* ---------------------------------------------------------------------------------------------- */
/* The passes of one block, on line `ln` of the pass (lines of patch q = ln / lines-per-patch).
   Host-callable too, so that a CPU harness can run a block pass by pass. */

template <typename T, int K, bool EO>
struct Passes3 {
  static constexpr int NP = 2 * K + 1, NI = 2 * K - 1;
  using VC = SolveCoef<T, K, EO, 3>;

  /* gather, line (i,j) of NP^2: X(i,j,:) = x, Dirichlet nodes zero */
  template <class L>
  PW_HD static void Gather(const PGeom &g, const T *x, T *sx, long long p0, int ln)
  {
    const int q = ln / (NP * NP), r = ln - q * NP * NP, i = r % NP, j = r / NP;
    int       o[3];

    if (!PatchOrigin<3>(g, p0, q, o)) return;
    const int       gx = o[0] + i, gy = o[1] + j;
    const bool      bxy   = g.dirichlet && (OnEdge(gx, g.nodes[0]) || OnEdge(gy, g.nodes[1]));
    const long long plane = (long long)g.in_size[0] * g.in_size[1];
    const T        *xp    = x + BoxIdx(g.in_start, g.in_size, gx, gy, o[2]);
    T               v[NP];

PW_UNROLL
    for (int l = 0; l < NP; l++) v[l] = xp[l * plane];
    if (g.dirichlet) {
PW_UNROLL
      for (int l = 0; l < NP; l++)
        if (bxy || OnEdge(o[2] + l, g.nodes[2])) v[l] = T(0);
    }
    T *s = sx + q * L::CS + j * L::LD + i;
PW_UNROLL
    for (int l = 0; l < NP; l++) s[l * L::PS] = v[l];
  }

  /* x pass, line (j,l) of NP^2: X(:,j,l) -> a = M u -> X, b = Kx u -> B */
  template <class L, class CF>
  PW_HD static void PassX(const CF &cf, const PGeom &g, T *sx, T *sb, long long p0, int ln)
  {
    const int q = ln / (NP * NP), r = ln - q * NP * NP, j = r % NP, l = r / NP;

    if (p0 + q >= g.npatch) return;
    T *row = sx + q * L::CS + l * L::PS + j * L::LD, *rowb = sb + q * L::CSB + l * L::PSB + j * L::LDB;
    T  u[NP], a[NI], b[NI];

PW_UNROLL
    for (int m = 0; m < NP; m++) u[m] = row[m];
    MatVec<false>(cf.R[R_MX], u, a);
    MatVec<false>(cf.R[R_KX], u, b);
PW_UNROLL
    for (int i = 0; i < NI; i++) {
      row[i]  = a[i];
      rowb[i] = b[i];
    }
  }

  /* y pass, line (i,l) of NI x NP: c = M a -> X, d = Ky a + M b -> B */
  template <class L, class CF>
  PW_HD static void PassY(const CF &cf, const PGeom &g, T *sx, T *sb, long long p0, int ln)
  {
    const int q = ln / (NI * NP), r = ln - q * NI * NP, i = r % NI, l = r / NI;

    if (p0 + q >= g.npatch) return;
    T *ca = sx + q * L::CS + l * L::PS + i, *cb = sb + q * L::CSB + l * L::PSB + i;
    T  av[NP], bv[NP], c[NI], d[NI];

PW_UNROLL
    for (int m = 0; m < NP; m++) {
      av[m] = ca[m * L::LD];
      bv[m] = cb[m * L::LDB];
    }
    MatVec<false>(cf.R[R_MY], av, c);
    MatVec<false>(cf.R[R_KY], av, d);
    MatVec<true>(cf.R[R_MY2], bv, d);
PW_UNROLL
    for (int j = 0; j < NI; j++) {
      ca[j * L::LD]  = c[j];
      cb[j * L::LDB] = d[j];
    }
  }

  /* z pass, line (i,j) of NI^2: v = Az c + M d, r = b - v; smoother: S^T r along z -> X; RES (the
     residual kernel): y(i,j,:) = r */
  template <class L, bool RES, class CF>
  PW_HD static void PassZ(const CF &cf, const PGeom &g, const T *b, T *sx, const T *sb, T *y, long long p0, int ln)
  {
    const int q = ln / (NI * NI), r = ln - q * NI * NI, i = r % NI, j = r / NI;
    int       o[3];

    if (!PatchOrigin<3>(g, p0, q, o)) return;
    T              *ca = sx + q * L::CS + j * L::LD + i;
    const T        *cb = sb + q * L::CSB + j * L::LDB + i;
    const long long plane = (long long)g.in_size[0] * g.in_size[1];
    const T        *bp    = b + BoxIdx(g.in_start, g.in_size, o[0] + 1 + i, o[1] + 1 + j, o[2] + 1);
    T               cv[NP], dv[NP], v[NI];

PW_UNROLL
    for (int m = 0; m < NP; m++) {
      cv[m] = ca[m * L::PS];
      dv[m] = cb[m * L::PSB];
    }
    MatVec<false>(cf.R[R_AZ], cv, v);
    MatVec<true>(cf.R[R_MZ], dv, v);
PW_UNROLL
    for (int l = 0; l < NI; l++) v[l] = bp[l * plane] - v[l];
    if constexpr (RES) {
      const long long oplane = (long long)g.out_size[0] * g.out_size[1];
      T              *yp     = y + BoxIdx(g.out_start, g.out_size, o[0] + 1 + i, o[1] + 1 + j, o[2] + 1);
PW_UNROLL
      for (int l = 0; l < NI; l++) yp[l * oplane] = v[l];
    } else {
      T h[NI];
      ToModes(cf.sv.S[S_TOZ], v, h);
PW_UNROLL
      for (int l = 0; l < NI; l++) ca[l * L::PS] = h[l];
    }
  }

  /* the solve's first pass, line (i,j) of NI^2: S^T r along z -> X */
  template <class L>
  PW_HD static void GatherModesZ(const VC &cf, const PGeom &g, const T *rv, T *sx, long long p0, int ln)
  {
    const int q = ln / (NI * NI), r = ln - q * NI * NI, i = r % NI, j = r / NI;
    int       o[3];

    if (!PatchOrigin<3>(g, p0, q, o)) return;
    const long long plane = (long long)g.in_size[0] * g.in_size[1];
    const T        *rp    = rv + BoxIdx(g.in_start, g.in_size, o[0] + 1 + i, o[1] + 1 + j, o[2] + 1);
    T              *ca    = sx + q * L::CS + j * L::LD + i;
    T               u[NI], h[NI];

PW_UNROLL
    for (int l = 0; l < NI; l++) u[l] = rp[l * plane];
    ToModes(cf.S[S_TOZ], u, h);
PW_UNROLL
    for (int l = 0; l < NI; l++) ca[l * L::PS] = h[l];
  }

  /* solve, y direction, line (i,l) of NI^2: S^T (TO) or S along y */
  template <class L, bool TO>
  PW_HD static void SolveY(const VC &cf, const PGeom &g, T *sx, long long p0, int ln)
  {
    const int q = ln / (NI * NI), r = ln - q * NI * NI, i = r % NI, l = r / NI;

    if (p0 + q >= g.npatch) return;
    T *ca = sx + q * L::CS + l * L::PS + i;
    T  u[NI], h[NI];

PW_UNROLL
    for (int m = 0; m < NI; m++) u[m] = ca[m * L::LD];
    if (TO) ToModes(cf.S[S_TOY], u, h);
    else FromModes(cf.S[S_FROMY], u, h);
PW_UNROLL
    for (int m = 0; m < NI; m++) ca[m * L::LD] = h[m];
  }

  /* solve, x direction, line (j,l) of NI^2: S^T, divide by the eigenvalue sums, S */
  template <class L>
  PW_HD static void SolveX(const VC &cf, const PGeom &g, T *sx, long long p0, int ln)
  {
    const int q = ln / (NI * NI), r = ln - q * NI * NI, j = r % NI, l = r / NI;

    if (p0 + q >= g.npatch) return;
    T      *row  = sx + q * L::CS + l * L::PS + j * L::LD;
    const T base = cf.lam1[j] + cf.lam2[l];
    T       u[NI], h[NI];

PW_UNROLL
    for (int m = 0; m < NI; m++) u[m] = row[m];
    ToModes(cf.S[S_TOX], u, h);
PW_UNROLL
    for (int m = 0; m < NI; m++) h[m] *= Rcp(base + cf.lam0[m]);
    FromModes(cf.S[S_FROMX], h, u);
PW_UNROLL
    for (int m = 0; m < NI; m++) row[m] = u[m];
  }

  /* solve, z direction, line (i,j) of NI^2: S along z, y += omega t */
  template <class L>
  PW_HD static void SolveZ(const VC &cf, const PGeom &g, const T *sx, T *y, long long p0, int ln)
  {
    const int q = ln / (NI * NI), r = ln - q * NI * NI, i = r % NI, j = r / NI;
    int       o[3];

    if (!PatchOrigin<3>(g, p0, q, o)) return;
    const T        *ca    = sx + q * L::CS + j * L::LD + i;
    const long long plane = (long long)g.out_size[0] * g.out_size[1];
    T              *yp    = y + BoxIdx(g.out_start, g.out_size, o[0] + 1 + i, o[1] + 1 + j, o[2] + 1);
    T               u[NI], t[NI];

PW_UNROLL
    for (int m = 0; m < NI; m++) u[m] = ca[m * L::PS];
    FromModes(cf.S[S_FROMZ], u, t);
PW_UNROLL
    for (int l = 0; l < NI; l++) yp[l * plane] += cf.omega * t[l];
  }
};

template <typename T, int K, bool EO>
struct Passes2 {
  static constexpr int NP = 2 * K + 1, NI = 2 * K - 1;
  using VC = SolveCoef<T, K, EO, 2>;

  /* gather, line i of NP: X(i,:) = x, Dirichlet nodes zero */
  template <class L>
  PW_HD static void Gather(const PGeom &g, const T *x, T *sx, long long p0, int ln)
  {
    const int q = ln / NP, i = ln - q * NP;
    int       o[3];

    if (!PatchOrigin<2>(g, p0, q, o)) return;
    const int  gx = o[0] + i;
    const bool bx = g.dirichlet && OnEdge(gx, g.nodes[0]);
    const T   *xp = x + BoxIdx(g.in_start, g.in_size, gx, o[1], 0);
    T          v[NP];

PW_UNROLL
    for (int j = 0; j < NP; j++) v[j] = xp[(long long)j * g.in_size[0]];
    if (g.dirichlet) {
PW_UNROLL
      for (int j = 0; j < NP; j++)
        if (bx || OnEdge(o[1] + j, g.nodes[1])) v[j] = T(0);
    }
    T *s = sx + q * L::CS + i;
PW_UNROLL
    for (int j = 0; j < NP; j++) s[j * L::LD] = v[j];
  }

  /* x pass, line j of NP: a = M u -> X, b = Kx u -> B */
  template <class L, class CF>
  PW_HD static void PassX(const CF &cf, const PGeom &g, T *sx, T *sb, long long p0, int ln)
  {
    const int q = ln / NP, j = ln - q * NP;

    if (p0 + q >= g.npatch) return;
    T *row = sx + q * L::CS + j * L::LD, *rowb = sb + q * L::CSB + j * L::LDB;
    T  u[NP], a[NI], b[NI];

PW_UNROLL
    for (int m = 0; m < NP; m++) u[m] = row[m];
    MatVec<false>(cf.R[R2_MX], u, a);
    MatVec<false>(cf.R[R2_KX], u, b);
PW_UNROLL
    for (int i = 0; i < NI; i++) {
      row[i]  = a[i];
      rowb[i] = b[i];
    }
  }

  /* y pass, line i of NI: v = (cm M + cs1 K) a + M b, r = b - v; smoother: S^T r along y -> X; RES
     (the residual kernel): y(i,:) = r */
  template <class L, bool RES, class CF>
  PW_HD static void PassY(const CF &cf, const PGeom &g, const T *b, T *sx, const T *sb, T *y, long long p0, int ln)
  {
    const int q = ln / NI, i = ln - q * NI;
    int       o[3];

    if (!PatchOrigin<2>(g, p0, q, o)) return;
    T       *ca = sx + q * L::CS + i;
    const T *cb = sb + q * L::CSB + i;
    const T *bp = b + BoxIdx(g.in_start, g.in_size, o[0] + 1 + i, o[1] + 1, 0);
    T        av[NP], bv[NP], v[NI];

PW_UNROLL
    for (int m = 0; m < NP; m++) {
      av[m] = ca[m * L::LD];
      bv[m] = cb[m * L::LDB];
    }
    MatVec<false>(cf.R[R2_AY], av, v);
    MatVec<true>(cf.R[R2_MY], bv, v);
PW_UNROLL
    for (int l = 0; l < NI; l++) v[l] = bp[(long long)l * g.in_size[0]] - v[l];
    if constexpr (RES) {
      T *yp = y + BoxIdx(g.out_start, g.out_size, o[0] + 1 + i, o[1] + 1, 0);
PW_UNROLL
      for (int l = 0; l < NI; l++) yp[(long long)l * g.out_size[0]] = v[l];
    } else {
      T h[NI];
      ToModes(cf.sv.S[S2_TOY], v, h);
PW_UNROLL
      for (int l = 0; l < NI; l++) ca[l * L::LD] = h[l];
    }
  }

  /* the solve's first pass, line i of NI: S^T r along y -> X */
  template <class L>
  PW_HD static void GatherModesY(const VC &cf, const PGeom &g, const T *rv, T *sx, long long p0, int ln)
  {
    const int q = ln / NI, i = ln - q * NI;
    int       o[3];

    if (!PatchOrigin<2>(g, p0, q, o)) return;
    const T *rp = rv + BoxIdx(g.in_start, g.in_size, o[0] + 1 + i, o[1] + 1, 0);
    T       *ca = sx + q * L::CS + i;
    T        u[NI], h[NI];

PW_UNROLL
    for (int l = 0; l < NI; l++) u[l] = rp[(long long)l * g.in_size[0]];
    ToModes(cf.S[S2_TOY], u, h);
PW_UNROLL
    for (int l = 0; l < NI; l++) ca[l * L::LD] = h[l];
  }

  /* solve, x direction, line j of NI: S^T, divide, S */
  template <class L>
  PW_HD static void SolveX(const VC &cf, const PGeom &g, T *sx, long long p0, int ln)
  {
    const int q = ln / NI, j = ln - q * NI;

    if (p0 + q >= g.npatch) return;
    T      *row  = sx + q * L::CS + j * L::LD;
    const T base = cf.lam1[j];
    T       u[NI], h[NI];

PW_UNROLL
    for (int m = 0; m < NI; m++) u[m] = row[m];
    ToModes(cf.S[S2_TOX], u, h);
PW_UNROLL
    for (int m = 0; m < NI; m++) h[m] *= Rcp(base + cf.lam0[m]);
    FromModes(cf.S[S2_FROMX], h, u);
PW_UNROLL
    for (int m = 0; m < NI; m++) row[m] = u[m];
  }

  /* solve, y direction, line i of NI: S along y, y += omega t */
  template <class L>
  PW_HD static void SolveY(const VC &cf, const PGeom &g, const T *sx, T *y, long long p0, int ln)
  {
    const int q = ln / NI, i = ln - q * NI;
    int       o[3];

    if (!PatchOrigin<2>(g, p0, q, o)) return;
    const T *ca = sx + q * L::CS + i;
    T       *yp = y + BoxIdx(g.out_start, g.out_size, o[0] + 1 + i, o[1] + 1, 0);
    T        u[NI], t[NI];

PW_UNROLL
    for (int m = 0; m < NI; m++) u[m] = ca[m * L::LD];
    FromModes(cf.S[S2_FROMY], u, t);
PW_UNROLL
    for (int l = 0; l < NI; l++) yp[(long long)l * g.out_size[0]] += cf.omega * t[l];
  }
};

/* ---------------------------------------------------------------------------------------------- */
/* Kernels: the passes in order, separated by barriers. x and y may alias: no __restrict__.
   Smooth3D/2D with RES = true are the residual kernel: the smoother's passes up to the local
   residual, which goes to y instead of into the solve (same layout, launch geometry and bounds). */

/* Minimum resident blocks per SM for __launch_bounds__, which caps the registers (65536 per SM).
   Smooth3D<double, k=8> takes 112 registers (one block of 10 warps per SM); capping it at 96 for two
   blocks (-DPW_PATCH_MINB_3D8=2, a few spilled bytes) measured 1.9x slower on the H100: the kernel
   is bound by constant-cache misses there (its 13 KB of 1D data exceed the 8 KB working set), not by
   occupancy. 2D double k = 9, 10: 4 blocks, <= 128 registers. */
#ifndef PW_PATCH_MINB_3D8
  #define PW_PATCH_MINB_3D8 1
#endif
template <int DIM, int K, int WS, bool SOLVE>
struct MinBlocks {
  static constexpr int value = 1;
};
template <>
struct MinBlocks<3, 8, 8, false> {
  static constexpr int value = PW_PATCH_MINB_3D8;
};
template <int K, bool SOLVE>
struct MinBlocks<2, K, 8, SOLVE> {
  static constexpr int value = K >= 9 ? 4 : 1;
};

/* One line per thread and pass (TB >= the largest line count of a pass): no loop around the passes,
   so the compiler cannot hoist the coefficient loads out of one and keep them in registers */
#define PW_FOR_LINES(count) \
  static_assert((count) <= L::TB, "one line per thread"); \
  if (ln < (count))

template <typename T, int K, bool EO, bool RES>
__global__ void __launch_bounds__(Lay3<K, sizeof(T)>::TB, (MinBlocks<3, K, sizeof(T), false>::value)) Smooth3D(const LocalCoef<T, K, EO, 3, RES> cf, const PGeom g, const T *x, const T *b, T *y)
{
  using L = Lay3<K, sizeof(T)>;
  using P = Passes3<T, K, EO>;
  constexpr int C = L::C, NP = P::NP, NI = P::NI;
  extern __shared__ __align__(16) unsigned char pw_patch_smem[];
  T *const        sx = reinterpret_cast<T *>(pw_patch_smem), *const sb = sx + C * L::CS;
  const long long p0 = (long long)blockIdx.x * C;
  const int       ln = (int)threadIdx.x;

  PW_FOR_LINES(C * NP * NP) P::template Gather<L>(g, x, sx, p0, ln);
  __syncthreads();
  PW_FOR_LINES(C * NP * NP) P::template PassX<L>(cf, g, sx, sb, p0, ln);
  __syncthreads();
  PW_FOR_LINES(C * NI * NP) P::template PassY<L>(cf, g, sx, sb, p0, ln);
  __syncthreads();
  PW_FOR_LINES(C * NI * NI) P::template PassZ<L, RES>(cf, g, b, sx, sb, y, p0, ln);
  if constexpr (!RES) {
    __syncthreads();
    PW_FOR_LINES(C * NI * NI) P::template SolveY<L, true>(cf.sv, g, sx, p0, ln);
    __syncthreads();
    PW_FOR_LINES(C * NI * NI) P::template SolveX<L>(cf.sv, g, sx, p0, ln);
    __syncthreads();
    PW_FOR_LINES(C * NI * NI) P::template SolveY<L, false>(cf.sv, g, sx, p0, ln);
    __syncthreads();
    PW_FOR_LINES(C * NI * NI) P::template SolveZ<L>(cf.sv, g, sx, y, p0, ln);
  }
}

template <typename T, int K, bool EO>
__global__ void __launch_bounds__(LaySolve3<K, sizeof(T)>::TB, (MinBlocks<3, K, sizeof(T), true>::value)) Solve3D(const SolveCoef<T, K, EO, 3> cf, const PGeom g, const T *r, T *y)
{
  using L = LaySolve3<K, sizeof(T)>;
  using P = Passes3<T, K, EO>;
  constexpr int C = L::C, NI = P::NI;
  extern __shared__ __align__(16) unsigned char pw_patch_smem[];
  T *const        sx = reinterpret_cast<T *>(pw_patch_smem);
  const long long p0 = (long long)blockIdx.x * C;
  const int       ln = (int)threadIdx.x;

  PW_FOR_LINES(C * NI * NI) P::template GatherModesZ<L>(cf, g, r, sx, p0, ln);
  __syncthreads();
  PW_FOR_LINES(C * NI * NI) P::template SolveY<L, true>(cf, g, sx, p0, ln);
  __syncthreads();
  PW_FOR_LINES(C * NI * NI) P::template SolveX<L>(cf, g, sx, p0, ln);
  __syncthreads();
  PW_FOR_LINES(C * NI * NI) P::template SolveY<L, false>(cf, g, sx, p0, ln);
  __syncthreads();
  PW_FOR_LINES(C * NI * NI) P::template SolveZ<L>(cf, g, sx, y, p0, ln);
}

template <typename T, int K, bool EO, bool RES>
__global__ void __launch_bounds__(Lay2<K, sizeof(T)>::TB, (MinBlocks<2, K, sizeof(T), false>::value)) Smooth2D(const LocalCoef<T, K, EO, 2, RES> cf, const PGeom g, const T *x, const T *b, T *y)
{
  using L = Lay2<K, sizeof(T)>;
  using P = Passes2<T, K, EO>;
  constexpr int C = L::C, NP = P::NP, NI = P::NI;
  extern __shared__ __align__(16) unsigned char pw_patch_smem[];
  T *const        sx = reinterpret_cast<T *>(pw_patch_smem), *const sb = sx + C * L::CS;
  const long long p0 = (long long)blockIdx.x * C;
  const int       ln = (int)threadIdx.x;

  PW_FOR_LINES(C * NP) P::template Gather<L>(g, x, sx, p0, ln);
  __syncthreads();
  PW_FOR_LINES(C * NP) P::template PassX<L>(cf, g, sx, sb, p0, ln);
  __syncthreads();
  PW_FOR_LINES(C * NI) P::template PassY<L, RES>(cf, g, b, sx, sb, y, p0, ln);
  if constexpr (!RES) {
    __syncthreads();
    PW_FOR_LINES(C * NI) P::template SolveX<L>(cf.sv, g, sx, p0, ln);
    __syncthreads();
    PW_FOR_LINES(C * NI) P::template SolveY<L>(cf.sv, g, sx, y, p0, ln);
  }
}

template <typename T, int K, bool EO>
__global__ void __launch_bounds__(LaySolve2<K, sizeof(T)>::TB, (MinBlocks<2, K, sizeof(T), true>::value)) Solve2D(const SolveCoef<T, K, EO, 2> cf, const PGeom g, const T *r, T *y)
{
  using L = LaySolve2<K, sizeof(T)>;
  using P = Passes2<T, K, EO>;
  constexpr int C = L::C, NI = P::NI;
  extern __shared__ __align__(16) unsigned char pw_patch_smem[];
  T *const        sx = reinterpret_cast<T *>(pw_patch_smem);
  const long long p0 = (long long)blockIdx.x * C;
  const int       ln = (int)threadIdx.x;

  PW_FOR_LINES(C * NI) P::template GatherModesY<L>(cf, g, r, sx, p0, ln);
  __syncthreads();
  PW_FOR_LINES(C * NI) P::template SolveX<L>(cf, g, sx, p0, ln);
  __syncthreads();
  PW_FOR_LINES(C * NI) P::template SolveY<L>(cf, g, sx, y, p0, ln);
}

#undef PW_FOR_LINES

/* ---------------------------------------------------------------------------------------------- */
/* Host side */

/* Validate the descriptor and find the patches of the color. closure: the in box must hold the
   patches' closures (smooth), else their interiors (solve). Returns cudaErrorInvalidValue for a bad
   descriptor; *empty when no patch of the color lies in the range. */
static cudaError_t MakeGeom(const PatchworkPatchDesc *d, int closure, PGeom *g, int *empty)
{
  *empty = 0;
  if (!d) return cudaErrorInvalidValue;
  const PatchworkTensorDesc *op = &d->op;
  const int                  dim = op->dim, k = op->degree;

  if (dim != 2 && dim != 3) return cudaErrorInvalidValue;
  if (k < 1 || k > (dim == 3 ? 8 : 10)) return cudaErrorInvalidValue;
  if (d->color < 0 || d->color >= (1 << dim)) return cudaErrorInvalidValue;
  g->k         = k;
  g->dirichlet = op->dirichlet ? 1 : 0;
  int lo[3], hi[3];
  for (int dir = 0; dir < 3; dir++) {
    g->nodes[dir]     = op->nodes[dir];
    g->in_start[dir]  = op->in_start[dir];
    g->in_size[dir]   = op->in_size[dir];
    g->out_start[dir] = op->out_start[dir];
    g->out_size[dir]  = op->out_size[dir];
    if (dir >= dim) {
      if (d->vertex_start[dir] != 0 || d->vertex_end[dir] != 1) return cudaErrorInvalidValue;
      g->first[dir] = 0;
      g->count[dir] = 1;
      lo[dir] = hi[dir] = 0;
      continue;
    }
    if (op->nodes[dir] < k + 1 || (op->nodes[dir] - 1) % k) return cudaErrorInvalidValue;
    const int bit = (d->color >> dir) & 1, vs = d->vertex_start[dir], ve = d->vertex_end[dir];
    if (vs < 1 || ve > (op->nodes[dir] - 1) / k) return cudaErrorInvalidValue; /* interior vertices only */
    const int first = vs + ((vs & 1) != bit), last = ve - 1 - (((ve - 1) & 1) != bit);
    if (last < first) {
      *empty = 1;
      continue;
    }
    g->first[dir] = first;
    g->count[dir] = (last - first) / 2 + 1;
    lo[dir]       = k * (first - 1);
    hi[dir]       = k * (last + 1);
  }
  if (*empty) return cudaSuccess;
  for (int dir = 0; dir < 3; dir++) {
    const int ilo = dir < dim ? lo[dir] + 1 : 0, ihi = dir < dim ? hi[dir] - 1 : 0;
    const int rlo = closure ? lo[dir] : ilo, rhi = closure ? hi[dir] : ihi;

    if (op->in_start[dir] > rlo || rhi >= op->in_start[dir] + op->in_size[dir]) return cudaErrorInvalidValue;
    if (op->out_start[dir] > ilo || ihi >= op->out_start[dir] + op->out_size[dir]) return cudaErrorInvalidValue;
  }
  g->npatch = (long long)g->count[0] * g->count[1] * g->count[2];
  return cudaSuccess;
}

/* Whether the rows x cols matrix is centro-symmetric to rounding */
static bool CentroSymmetric(int rows, int cols, const double *A)
{
  double amax = 0, dmax = 0;

  for (int r = 0; r < rows * cols; r++) amax = fmax(amax, fabs(A[r]));
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++) dmax = fmax(dmax, fabs(A[i * cols + j] - A[(rows - 1 - i) * cols + (cols - 1 - j)]));
  return dmax <= 1e-13 * amax;
}

/* The order of the modes for the even-odd split: symmetric eigenvectors first, then antisymmetric
   ones; false when a column is neither or the counts are not (n+1)/2 and n/2 */
static bool ModeOrder(int n, const double *S, int *perm)
{
  int ns = 0, na = 0, sym[PW_PATCH_MAX_NI], anti[PW_PATCH_MAX_NI];

  for (int m = 0; m < n; m++) {
    double cmax = 0, es = 0, ea = 0;

    for (int i = 0; i < n; i++) {
      cmax = fmax(cmax, fabs(S[i * n + m]));
      es   = fmax(es, fabs(S[i * n + m] - S[(n - 1 - i) * n + m]));
      ea   = fmax(ea, fabs(S[i * n + m] + S[(n - 1 - i) * n + m]));
    }
    if (es <= 1e-13 * cmax) sym[ns++] = m;
    else if (ea <= 1e-13 * cmax) anti[na++] = m;
    else return false;
  }
  if (ns != (n + 1) / 2 || na != n / 2) return false;
  for (int m = 0; m < ns; m++) perm[m] = sym[m];
  for (int m = 0; m < na; m++) perm[ns + m] = anti[m];
  return true;
}

template <typename T, int NO, int NIN>
static void SetMat(FullMat<T, NO, NIN> &A, const double *a)
{
  for (int r = 0; r < NO * NIN; r++) A.a[r] = (T)a[r];
}

template <typename T, int NO, int NIN>
static void SetMat(EOMat<T, NO, NIN> &A, const double *a)
{
  constexpr int HO = NO / 2, HI = NIN / 2, RE = (NO + 1) / 2, CE = (NIN + 1) / 2;

  for (int i = 0; i < RE; i++) {
    for (int j = 0; j < HI; j++) A.e[i * CE + j] = (T)(0.5 * (a[i * NIN + j] + a[i * NIN + NIN - 1 - j]));
    if constexpr (NIN % 2 == 1) A.e[i * CE + HI] = (T)a[i * NIN + HI];
  }
  for (int i = 0; i < HO; i++)
    for (int j = 0; j < HI; j++) A.o[i * HI + j] = (T)(0.5 * (a[i * NIN + j] - a[i * NIN + NIN - 1 - j]));
  if constexpr (HO * HI == 0) A.o[0] = T(0);
}

/* S with its modes permuted (Sp[i][m] = S[i][perm[m]]) */
template <typename T, int NI>
static void SetEig(FullEig<T, NI> &E, const double *Sp)
{
  for (int r = 0; r < NI * NI; r++) E.s[r] = (T)Sp[r];
}

template <typename T, int NI>
static void SetEig(EOEig<T, NI> &E, const double *Sp)
{
  constexpr int KS = (NI + 1) / 2, KA = NI / 2;

  for (int i = 0; i < KS; i++)
    for (int m = 0; m < KS; m++) E.es[i * KS + m] = (T)Sp[i * NI + m];
  for (int i = 0; i < KA; i++)
    for (int m = 0; m < KA; m++) E.ea[i * KA + m] = (T)Sp[i * NI + KS + m];
  if constexpr (KA == 0) E.ea[0] = T(0);
}

template <typename T, int K, bool EO, int DIM>
static void SetSolveCoef(const PatchworkPatchDesc *d, const int *perm, SolveCoef<T, K, EO, DIM> &cf)
{
  constexpr int NI = 2 * K - 1;
  const double  cm = d->op.coef_mass, *cs = d->op.coef_stiff;
  double        Sp[NI * NI];

  for (int i = 0; i < NI; i++)
    for (int m = 0; m < NI; m++) Sp[i * NI + m] = d->eigvec[i * NI + perm[m]];
  for (auto &S : cf.S) SetEig(S, Sp);
  for (int m = 0; m < NI; m++) {
    const double lam = d->eigval[perm[m]];

    cf.lam0[m] = (T)(cs[0] * lam);
    if (DIM == 3) {
      cf.lam1[m] = (T)(cs[1] * lam);
      cf.lam2[m] = (T)(cm + cs[2] * lam);
    } else {
      cf.lam1[m] = (T)(cm + cs[1] * lam);
      cf.lam2[m] = T(0);
    }
  }
  cf.omega = (T)d->omega;
}

/* The residual passes' matrices cf.R of a SmoothCoef or ResidualCoef */
template <int K, int DIM, class CF>
static void SetResidualMats(const PatchworkPatchDesc *d, CF &cf)
{
  constexpr int NI = 2 * K - 1, NP = 2 * K + 1;
  const double  cm = d->op.coef_mass, *cs = d->op.coef_stiff;
  double        Kx[NI * NP], Ky[NI * NP], Az[NI * NP];

  for (int r = 0; r < NI * NP; r++) {
    Kx[r] = cs[0] * d->patch_stiff[r];
    Ky[r] = DIM == 3 ? cs[1] * d->patch_stiff[r] : cm * d->patch_mass[r] + cs[1] * d->patch_stiff[r];
    Az[r] = DIM == 3 ? cm * d->patch_mass[r] + cs[2] * d->patch_stiff[r] : 0.0;
  }
  if (DIM == 3) {
    SetMat(cf.R[R_MX], d->patch_mass);
    SetMat(cf.R[R_KX], Kx);
    SetMat(cf.R[R_MY], d->patch_mass);
    SetMat(cf.R[R_KY], Ky);
    SetMat(cf.R[R_MY2], d->patch_mass);
    SetMat(cf.R[R_AZ], Az);
    SetMat(cf.R[R_MZ], d->patch_mass);
  } else {
    SetMat(cf.R[R2_MX], d->patch_mass);
    SetMat(cf.R[R2_KX], Kx);
    SetMat(cf.R[R2_AY], Ky);
    SetMat(cf.R[R2_MY], d->patch_mass);
  }
}

template <typename T, int K, bool EO, int DIM>
static void SetLocalCoef(const PatchworkPatchDesc *d, const int *perm, SmoothCoef<T, K, EO, DIM> &cf)
{
  SetSolveCoef(d, perm, cf.sv);
  SetResidualMats<K, DIM>(d, cf);
}

template <typename T, int K, bool EO, int DIM>
static void SetLocalCoef(const PatchworkPatchDesc *d, const int *, ResidualCoef<T, K, EO, DIM> &cf)
{
  SetResidualMats<K, DIM>(d, cf);
}

template <typename KernelT>
static cudaError_t PrepareLaunch(KernelT kernel, size_t smem)
{
  if (smem > 48 * 1024) return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
  return cudaSuccess;
}

/* The smoother (RES false) or the residual kernel (RES true) */
template <int DIM, typename T, int K, bool EO, bool RES>
static cudaError_t LaunchSmooth(const PatchworkPatchDesc *d, const PGeom &g, const int *perm, const T *x, const T *b, T *y, cudaStream_t s)
{
  LocalCoef<T, K, EO, DIM, RES> cf;
  cudaError_t                   err;

  static_assert(sizeof(cf) + sizeof(PGeom) + 3 * sizeof(T *) <= 32764, "kernel parameters over 32764 bytes");

  SetLocalCoef(d, perm, cf);
  if constexpr (DIM == 3) {
    using L           = Lay3<K, sizeof(T)>;
    const size_t smem = (size_t)L::C * (L::CS + L::CSB) * sizeof(T);
    if ((err = PrepareLaunch(Smooth3D<T, K, EO, RES>, smem)) != cudaSuccess) return err;
    Smooth3D<T, K, EO, RES><<<(unsigned)((g.npatch + L::C - 1) / L::C), L::TB, smem, s>>>(cf, g, x, b, y);
  } else {
    using L           = Lay2<K, sizeof(T)>;
    const size_t smem = (size_t)L::C * (L::CS + L::CSB) * sizeof(T);
    if ((err = PrepareLaunch(Smooth2D<T, K, EO, RES>, smem)) != cudaSuccess) return err;
    Smooth2D<T, K, EO, RES><<<(unsigned)((g.npatch + L::C - 1) / L::C), L::TB, smem, s>>>(cf, g, x, b, y);
  }
  return cudaGetLastError();
}

template <int DIM, typename T, int K, bool EO>
static cudaError_t LaunchSolve(const PatchworkPatchDesc *d, const PGeom &g, const int *perm, const T *r, T *y, cudaStream_t s)
{
  SolveCoef<T, K, EO, DIM> cf;
  cudaError_t              err;

  static_assert(sizeof(cf) + sizeof(PGeom) + 2 * sizeof(T *) <= 32764, "kernel parameters over 32764 bytes");

  SetSolveCoef(d, perm, cf);
  if constexpr (DIM == 3) {
    using L           = LaySolve3<K, sizeof(T)>;
    const size_t smem = (size_t)L::C * L::CS * sizeof(T);
    if ((err = PrepareLaunch(Solve3D<T, K, EO>, smem)) != cudaSuccess) return err;
    Solve3D<T, K, EO><<<(unsigned)((g.npatch + L::C - 1) / L::C), L::TB, smem, s>>>(cf, g, r, y);
  } else {
    using L           = LaySolve2<K, sizeof(T)>;
    const size_t smem = (size_t)L::C * L::CS * sizeof(T);
    if ((err = PrepareLaunch(Solve2D<T, K, EO>, smem)) != cudaSuccess) return err;
    Solve2D<T, K, EO><<<(unsigned)((g.npatch + L::C - 1) / L::C), L::TB, smem, s>>>(cf, g, r, y);
  }
  return cudaGetLastError();
}

enum PatchOp { OP_SMOOTH, OP_SOLVE, OP_RESIDUAL };

/* Per dimension and degree: plain or even-odd (the residual needs only the centro-symmetric
   matrices, the solve also the symmetric / antisymmetric modes) */
template <int DIM, typename T, int K>
static cudaError_t Dispatch(const PatchworkPatchDesc *d, const PGeom &g, PatchOp op, const T *x, const T *b, T *y, cudaStream_t s)
{
  constexpr int NI = 2 * K - 1, NP = 2 * K + 1;
  int           perm[PW_PATCH_MAX_NI];
  const bool    eomat = CentroSymmetric(NI, NP, d->patch_mass) && CentroSymmetric(NI, NP, d->patch_stiff);
  const bool    eo    = eomat && op != OP_RESIDUAL && ModeOrder(NI, d->eigvec, perm);

  if (!eo)
    for (int m = 0; m < NI; m++) perm[m] = m;
  switch (op) {
  case OP_SMOOTH: return eo ? LaunchSmooth<DIM, T, K, true, false>(d, g, perm, x, b, y, s) : LaunchSmooth<DIM, T, K, false, false>(d, g, perm, x, b, y, s);
  case OP_RESIDUAL: return eomat ? LaunchSmooth<DIM, T, K, true, true>(d, g, perm, x, b, y, s) : LaunchSmooth<DIM, T, K, false, true>(d, g, perm, x, b, y, s);
  default: return eo ? LaunchSolve<DIM, T, K, true>(d, g, perm, b, y, s) : LaunchSolve<DIM, T, K, false>(d, g, perm, b, y, s);
  }
}

/* smooth (x, b) -> y, solve r = b -> y, or residual (x, b) -> y */
template <typename T>
static cudaError_t PatchApply(const PatchworkPatchDesc *d, PatchOp op, const T *x, const T *b, T *y, void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  PGeom        g;
  int          empty;
  cudaError_t  err = MakeGeom(d, op != OP_SOLVE, &g, &empty);

  if (err != cudaSuccess || empty) return err;
  if (d->op.dim == 3) {
    switch (d->op.degree) {
    case 1: return Dispatch<3, T, 1>(d, g, op, x, b, y, s);
    case 2: return Dispatch<3, T, 2>(d, g, op, x, b, y, s);
    case 3: return Dispatch<3, T, 3>(d, g, op, x, b, y, s);
    case 4: return Dispatch<3, T, 4>(d, g, op, x, b, y, s);
    case 5: return Dispatch<3, T, 5>(d, g, op, x, b, y, s);
    case 6: return Dispatch<3, T, 6>(d, g, op, x, b, y, s);
    case 7: return Dispatch<3, T, 7>(d, g, op, x, b, y, s);
    case 8: return Dispatch<3, T, 8>(d, g, op, x, b, y, s);
    default: return cudaErrorInvalidValue;
    }
  }
  switch (d->op.degree) {
  case 1: return Dispatch<2, T, 1>(d, g, op, x, b, y, s);
  case 2: return Dispatch<2, T, 2>(d, g, op, x, b, y, s);
  case 3: return Dispatch<2, T, 3>(d, g, op, x, b, y, s);
  case 4: return Dispatch<2, T, 4>(d, g, op, x, b, y, s);
  case 5: return Dispatch<2, T, 5>(d, g, op, x, b, y, s);
  case 6: return Dispatch<2, T, 6>(d, g, op, x, b, y, s);
  case 7: return Dispatch<2, T, 7>(d, g, op, x, b, y, s);
  case 8: return Dispatch<2, T, 8>(d, g, op, x, b, y, s);
  case 9: return Dispatch<2, T, 9>(d, g, op, x, b, y, s);
  case 10: return Dispatch<2, T, 10>(d, g, op, x, b, y, s);
  default: return cudaErrorInvalidValue;
  }
}

} // namespace

extern "C" int PatchworkPatchSmoothCUDA(const PatchworkPatchDesc *d, const double *x, const double *b, double *y, void *stream)
{
  if (!x || !b || !y) return (int)cudaErrorInvalidValue;
  return (int)PatchApply<double>(d, OP_SMOOTH, x, b, y, stream);
}

extern "C" int PatchworkPatchSmoothCUDAFloat(const PatchworkPatchDesc *d, const float *x, const float *b, float *y, void *stream)
{
  if (!x || !b || !y) return (int)cudaErrorInvalidValue;
  return (int)PatchApply<float>(d, OP_SMOOTH, x, b, y, stream);
}

extern "C" int PatchworkPatchSolveCUDA(const PatchworkPatchDesc *d, const double *r, double *y, void *stream)
{
  if (!r || !y) return (int)cudaErrorInvalidValue;
  return (int)PatchApply<double>(d, OP_SOLVE, (const double *)NULL, r, y, stream);
}

extern "C" int PatchworkPatchSolveCUDAFloat(const PatchworkPatchDesc *d, const float *r, float *y, void *stream)
{
  if (!r || !y) return (int)cudaErrorInvalidValue;
  return (int)PatchApply<float>(d, OP_SOLVE, (const float *)NULL, r, y, stream);
}

/* y is written while other blocks still read x and b: it must be another array */
extern "C" int PatchworkPatchResidualCUDA(const PatchworkPatchDesc *d, const double *x, const double *b, double *y, void *stream)
{
  if (!x || !b || !y || y == x || y == b) return (int)cudaErrorInvalidValue;
  return (int)PatchApply<double>(d, OP_RESIDUAL, x, b, y, stream);
}

extern "C" int PatchworkPatchResidualCUDAFloat(const PatchworkPatchDesc *d, const float *x, const float *b, float *y, void *stream)
{
  if (!x || !b || !y || y == x || y == b) return (int)cudaErrorInvalidValue;
  return (int)PatchApply<float>(d, OP_RESIDUAL, x, b, y, stream);
}
