/* GPU-vs-CPU test of the kernels of the operator on general quadrilateral and hexahedral cells
   (include/patchwork/plex_kernel.h), PETSc-free.

   Compares PatchworkPlex{Geometry,Apply,Diagonal}CUDA (cuda/plex_apply.cu) with the CPU reference
   (src/core/plex_ref.c) on random data: 2D degrees 1..10 and 3D degrees 1..8, each with Gauss-Lobatto
   collocation (nq = n, collocated = 1) and Gauss rules with nq = n, n+1, n+2; at low degree also nq = n+3
   (the generic kernel) and Gauss-Lobatto points without the collocated flag (a general interpolation that
   happens to be the identity). Meshes: a grid of cells on [0,1]^dim mapped by a random smooth map
   (curved cells with positive Jacobians), node numbers randomly permuted, cells in random order, the nodes
   of one face and about 10% of the others eliminated (-1); some meshes mirrored in x (a left-handed
   ordering: det J < 0 everywhere, which is valid); random alpha, beta and coefficients at the quadrature
   points, or NULL coefficients. Also meshes with deliberately tangled cells (a vertex node pushed through
   the cell), where only the count of bad cells is compared, and bad descriptors. Every other case also
   runs with hanging-node masks on about a third of the cells (a random position in the parent, random
   hanging faces on its boundary and, in 3D, edges on none of them, hanging_kernel.h), one in ten of them
   also hanging on the opposite face (a mask no mesh gives): the templated kernels apply the regular
   masks with their constraints, the generic one the others (and the diagonal of every hanging cell,
   column by column), against the reference's sum-factorized constraints. For the templated rules (nq = n
   collocated, n, n+1, n+2) a multilinear mesh of the same kind (nodes interpolated from the corners)
   also runs the apply with the geometry on the fly (PatchworkPlexDesc.corners, geom NULL), with and
   without regular hanging masks, against the reference with the stored factors of the same cells.

   Tolerances come from the precision, not from tuning:
     apply, diagonal  per entry, |gpu - ref| <= (20 nq + 30) eps m_i, with m_i the entry computed by the
                      reference with |interp|, |deriv|, |geom|, |x| (and |y0| added): the sum of the
                      magnitudes of all the terms. With hanging cells the constraints (|P| in m_i too)
                      add n^2 + 2n products to the chain each way: (20 nq + 30 + 2 n^2 + 4 n) eps. Each side accumulates along a chain of at most
                      10 nq + 15 products in sequence (forward and back passes of up to nq terms, the
                      host's Bd = Dq B, the point-wise sums and up to 2^dim atomic additions per node), and
                      the rounding of such a chain is below its length times eps/2 times that magnitude.
     on the fly       the apply's tolerance plus the change in y that the factors' rounding bound below
                      (which covers both ways of computing them) can cause, computed by the reference
                      with those bounds as the factors (TestFly).
     geometry         per point, the rounding of J (3n + nq + 10 products in sequence, on coordinates of
                      size |x|) relative to its smallest singular value, eps_J = (3n + nq + 10) eps dim
                      |Bd|_inf Lambda^(dim-1) max|x| / sigma_min(J) (Lambda: the Lebesgue constant of the
                      interpolation), amplified by the inverse, the determinant and the products:
                      |dG_ab| <= 2 (dim + 2) kappa(J) eps_J tr G and |dg0| <= 2 dim kappa(J) eps_J g0, with
                      sigma_min(J) and kappa(J) taken from the reference's G.
   Prints one line per check, `ok ...` or `FAIL ...` (err is the largest ratio error/tolerance), and
   exits 0 when all pass, 1 otherwise, 77 without a CUDA device.

   Usage: test_plex_kernels [--quick]   (--quick: small meshes and fewer rules, for compute-sanitizer) */
#include <cuda_runtime.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>
#include <patchwork/basis1d.h>
#include <patchwork/plex_kernel.h>
#include <patchwork/hanging_kernel.h>

#include "gputest.h"

static double g_worst = 0;
static char   g_worst_name[256];

/* err: the largest ratio of error to tolerance, so the check passes when err <= 1 */
static void Check(bool ok, const char *name, double err)
{
  if (ErrMaxTakes(g_worst, err)) {
    g_worst = err;
    snprintf(g_worst_name, sizeof(g_worst_name), "%s", name);
  }
  Report(ok, name, err, 1.0);
}



template <typename T>
static void Download(std::vector<T> &h, const T *d)
{
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  CHECK_CUDA(cudaMemcpy(h.data(), d, h.size() * sizeof(T), cudaMemcpyDeviceToHost));
}

static int Pow(int b, int e)
{
  int p = 1;
  for (int i = 0; i < e; i++) p *= b;
  return p;
}

/* A mesh: cells of a grid on [0,1]^dim mapped by a smooth map, per-cell node coordinates and the map of
   cell nodes to (permuted, partly eliminated) node numbers */
struct Mesh {
  int                 dim, k, n, ncells, nnodes;
  std::vector<int>    elem;
  std::vector<double> coords;
};

/* phi_d(p) = L_d p_d + A prod_e sin(2 pi p_e + ph_de): dphi = diag(L) + at most 2 pi A = 0.19 per entry,
   L_d in [0.8,1.2], so by Gershgorin every eigenvalue of dphi has positive real part and det > 0 */
struct Map {
  double L[3], ph[3][3], A;
};

static const double PI = 3.14159265358979323846;

static void MapPoint(const Map &m, int dim, const double p[3], double x[3])
{
  for (int d = 0; d < dim; d++) {
    double s = 1;
    for (int e = 0; e < dim; e++) s *= sin(2 * PI * p[e] + m.ph[d][e]);
    x[d] = m.L[d] * p[d] + m.A * s;
  }
}

static Mesh BuildMesh(int dim, int k, const int cells[3], bool mirror, int ntangle)
{
  Mesh   M;
  Map    map;
  double gll[PW_MAX_N], w[PW_MAX_N];
  int    nn[3] = {1, 1, 1}, nc[3] = {1, 1, 1};

  M.dim = dim;
  M.k   = k;
  M.n   = k + 1;
  if (PatchworkGaussLobatto(M.n, gll, w)) {
    printf("FAIL PatchworkGaussLobatto(%d)\n", M.n);
    exit(1);
  }
  for (int d = 0; d < dim; d++) {
    nc[d]  = cells[d];
    nn[d]  = k * cells[d] + 1;
    map.L[d] = 1.0 + 0.2 * Rand();
    for (int e = 0; e < 3; e++) map.ph[d][e] = PI * Rand();
  }
  map.A    = 0.03;
  M.ncells = nc[0] * nc[1] * nc[2];
  M.nnodes = nn[0] * nn[1] * nn[2];
  /* random node numbers; the x = 0 face and about 10% of the rest eliminated */
  std::vector<int> perm(M.nnodes), corder(M.ncells);
  for (int i = 0; i < M.nnodes; i++) perm[i] = i;
  for (int i = M.nnodes - 1; i > 0; i--) std::swap(perm[i], perm[(int)((Rand() + 1) * 0.5 * (i + 1)) % (i + 1)]);
  for (int i = 0; i < M.nnodes; i++)
    if (i % nn[0] == 0 || Rand() < -0.8) perm[i] = -1;
  for (int i = 0; i < M.ncells; i++) corder[i] = i;
  for (int i = M.ncells - 1; i > 0; i--) std::swap(corder[i], corder[(int)((Rand() + 1) * 0.5 * (i + 1)) % (i + 1)]);

  const int nd = Pow(M.n, dim);
  M.elem.resize((size_t)M.ncells * nd);
  M.coords.resize((size_t)M.ncells * dim * nd);
  for (int c = 0; c < M.ncells; c++) {
    const int e = corder[c], ex = e % nc[0], ey = (e / nc[0]) % nc[1], ez = e / (nc[0] * nc[1]);
    for (int node = 0; node < nd; node++) {
      const int i = node % M.n, j = (node / M.n) % M.n, l = dim == 3 ? node / (M.n * M.n) : 0;
      const int g = ((ez * k + l) * nn[1] + (ey * k + j)) * nn[0] + (ex * k + i);
      double    p[3] = {(ex + gll[i]) / nc[0], (ey + gll[j]) / nc[1], dim == 3 ? (ez + gll[l]) / nc[2] : 0}, x[3];

      M.elem[(size_t)c * nd + node] = perm[g];
      MapPoint(map, dim, p, x);
      if (mirror) x[0] = -x[0];
      for (int d = 0; d < dim; d++) M.coords[((size_t)c * dim + d) * nd + node] = x[d];
    }
  }
  /* tangle: the vertex node 0 of the first ntangle cells goes to center + 1.5 (center - vertex), through
     the cell: det J changes sign between that corner and the opposite one */
  for (int c = 0; c < ntangle && c < M.ncells; c++) {
    for (int d = 0; d < dim; d++) {
      double *X = &M.coords[((size_t)c * dim + d) * nd], center = 0;
      for (int v = 0; v < (1 << dim); v++) center += X[PatchworkPlexCornerNode(M.n, v)];
      center /= 1 << dim;
      X[0] = center + 1.5 * (center - X[0]);
    }
  }
  return M;
}

/* Make every cell multilinear: its nodes interpolate its corner nodes (the Q1 map of a coordinate field of
   degree 1); cells that share a face keep sharing its nodes */
static void MakeMultilinear(Mesh &M)
{
  const int dim = M.dim, n = M.n, nd = Pow(n, dim);
  double    gll[PW_MAX_N], w[PW_MAX_N];

  PatchworkGaussLobatto(n, gll, w);
  for (int c = 0; c < M.ncells; c++)
    for (int d = 0; d < dim; d++) {
      double *X = &M.coords[((size_t)c * dim + d) * nd], V[8];
      for (int v = 0; v < (1 << dim); v++) V[v] = X[PatchworkPlexCornerNode(n, v)];
      for (int node = 0; node < nd; node++) {
        const double t[3] = {gll[node % n], gll[(node / n) % n], dim == 3 ? gll[node / (n * n)] : 0};
        double       x    = 0;
        for (int v = 0; v < (1 << dim); v++) {
          double phi = 1;
          for (int a = 0; a < dim; a++) phi *= (v >> a) & 1 ? t[a] : 1 - t[a];
          x += phi * V[v];
        }
        X[node] = x;
      }
    }
}

/* The corners of every cell in the layout of PatchworkPlexDesc.corners */
static std::vector<double> Corners(const Mesh &M)
{
  const int           dim = M.dim, n = M.n, nd = Pow(n, dim), nv = PW_PLEX_NCORNER(dim);
  std::vector<double> X((size_t)M.ncells * dim * nv);

  for (int c = 0; c < M.ncells; c++)
    for (int d = 0; d < dim; d++)
      for (int v = 0; v < nv; v++) X[((size_t)c * dim + d) * nv + v] = M.coords[((size_t)c * dim + d) * nd + PatchworkPlexCornerNode(n, v)];
  return X;
}

/* The 1D tables of a case */
struct Rule {
  const char         *name;
  PatchworkQuadrature q;
  int                 dnq;        /* nq - n */
  int                 collocated;
};

struct Tables1D {
  int    n, nq;
  double pts[PW_MAX_Q], w[PW_MAX_Q], interp[PW_MAX_Q * PW_MAX_N], deriv[PW_MAX_Q * PW_MAX_Q];
  double lebesgue, dinf; /* max_q sum_i |interp[q][i]|, max_q sum_i |(deriv interp)[q][i]| */
};

static bool MakeTables(int k, const Rule &R, Tables1D *T)
{
  T->n  = k + 1;
  T->nq = T->n + R.dnq;
  if (PatchworkPlex1DTables(k, T->nq, R.q, T->pts, T->w, T->interp, T->deriv)) return false;
  T->lebesgue = T->dinf = 0;
  for (int q = 0; q < T->nq; q++) {
    double sb = 0, sd = 0;
    for (int i = 0; i < T->n; i++) {
      double bd = 0;
      for (int p = 0; p < T->nq; p++) bd += T->deriv[q * T->nq + p] * T->interp[p * T->n + i];
      sb += fabs(T->interp[q * T->n + i]);
      sd += fabs(bd);
    }
    T->lebesgue = ErrMax(T->lebesgue, sb);
    T->dinf     = ErrMax(T->dinf, sd);
  }
  return true;
}

static void MakeGeomDesc(const Mesh &M, const Tables1D &T, const double *coords, const double *diff, const double *reac, double alpha, double beta, PatchworkPlexGeomDesc *g)
{
  memset(g, 0, sizeof(*g));
  g->dim       = M.dim;
  g->degree    = M.k;
  g->nq        = T.nq;
  g->ncells    = M.ncells;
  g->coords    = coords;
  g->diffusion = diff;
  g->reaction  = reac;
  g->alpha     = alpha;
  g->beta      = beta;
  memcpy(g->weights, T.w, sizeof(T.w));
  memcpy(g->interp, T.interp, sizeof(T.interp));
  memcpy(g->deriv, T.deriv, sizeof(T.deriv));
}

static void MakeDesc(const Mesh &M, const Tables1D &T, int collocated, const int *elem, const double *geom, PatchworkPlexDesc *d)
{
  memset(d, 0, sizeof(*d));
  d->dim        = M.dim;
  d->degree     = M.k;
  d->nq         = T.nq;
  d->collocated = collocated;
  d->ncells     = M.ncells;
  d->elem       = elem;
  d->geom       = geom;
  memcpy(d->interp, T.interp, sizeof(T.interp));
  memcpy(d->deriv, T.deriv, sizeof(T.deriv));
}

/* The descriptor with |interp|, |deriv| and |geom|: the reference then sums magnitudes of terms */
static void AbsDesc(PatchworkPlexDesc *d, const double *ageom)
{
  for (double &v : d->interp) v = fabs(v);
  for (double &v : d->deriv) v = fabs(v);
  d->geom = ageom;
}

/* The bound on the rounding of the factors gref (model at the top), in their layout: tol0 at the mass factor,
   tolG at every entry of G */
static std::vector<double> GeometryTolerance(const Mesh &M, const Tables1D &T, const std::vector<double> &gref, const double *diff, const double *reac, double alpha, double beta)
{
  const int           dim = M.dim, nd = Pow(M.n, dim), nqd = Pow(T.nq, dim), ncomp = PW_PLEX_NCOMP(dim);
  std::vector<double> tol(gref.size());

  /* per point: sigma_min(J)^2 >= s / tr G with s = w |det| beta c = g0 beta c / (alpha r); kappa(J)^2 =
     kappa(G) <= tr^dim / det G */
  for (int c = 0; c < M.ncells; c++) {
    double xmax = 0;
    for (int i = 0; i < dim * nd; i++) xmax = ErrMax(xmax, fabs(M.coords[(size_t)c * dim * nd + i]));
    const double jabs = T.dinf * pow(T.lebesgue, dim - 1) * xmax;
    for (int q = 0; q < nqd; q++) {
      const double *gr = &gref[(size_t)c * ncomp * nqd + q];
      double        G[3][3], tr = 0, det;
      for (int a = 0; a < dim; a++)
        for (int b = 0; b < dim; b++) {
          const int lo = std::min(a, b), hi = std::max(a, b);
          const int m  = dim == 3 ? (lo == 0 ? 1 + hi : lo == 1 ? 3 + hi : 6) : 1 + lo + hi;
          G[a][b]      = gr[(size_t)m * nqd];
        }
      for (int a = 0; a < dim; a++) tr += G[a][a];
      det = dim == 2 ? G[0][0] * G[1][1] - G[0][1] * G[1][0]
                     : G[0][0] * (G[1][1] * G[2][2] - G[1][2] * G[2][1]) - G[0][1] * (G[1][0] * G[2][2] - G[1][2] * G[2][0]) + G[0][2] * (G[1][0] * G[2][1] - G[1][1] * G[2][0]);
      const double cq = diff ? diff[(size_t)c * nqd + q] : 1.0, rq = reac ? reac[(size_t)c * nqd + q] : 1.0;
      const double s = gr[0] * beta * cq / (alpha * rq), smin = sqrt(s / tr), kappa = sqrt(pow(tr, dim) / det);
      const double epsJ = (3 * M.n + T.nq + 10) * DBL_EPSILON * dim * jabs / smin;
      for (int m = 0; m < ncomp; m++) tol[((size_t)c * ncomp + m) * nqd + q] = m ? 2 * (dim + 2) * kappa * epsJ * tr : 2 * dim * kappa * epsJ * gr[0];
    }
  }
  return tol;
}

/* Geometry: GPU factors and bad-cell count against the reference (which must find nbad_expect bad cells:
   a check of the test's meshes); returns the reference's factors */
static std::vector<double> TestGeometry(const Mesh &M, const Tables1D &T, bool with_diff, bool with_reac, int nbad_expect, const char *label)
{
  const int           dim = M.dim, nd = Pow(M.n, dim), nqd = Pow(T.nq, dim), ncomp = PW_PLEX_NCOMP(dim);
  const size_t        ng = (size_t)M.ncells * ncomp * nqd;
  std::vector<double> diff(with_diff ? (size_t)M.ncells * nqd : 0), reac(with_reac ? (size_t)M.ncells * nqd : 0);
  std::vector<double> gref(ng), ggpu(ng);
  const double        alpha = 1.0 + 0.5 * Rand(), beta = 1.0 + 0.5 * Rand();
  PatchworkPlexGeomDesc g;
  char                name[256];

  for (auto &v : diff) v = 1.0 + 0.5 * Rand();
  for (auto &v : reac) v = 1.0 + 0.5 * Rand();
  MakeGeomDesc(M, T, M.coords.data(), with_diff ? diff.data() : NULL, with_reac ? reac.data() : NULL, alpha, beta, &g);
  const int nbad_ref = PatchworkPlexGeometryRef(&g, gref.data());

  double *dcoords = Upload(M.coords), *ddiff = with_diff ? Upload(diff) : NULL, *dreac = with_reac ? Upload(reac) : NULL, *dgeom;
  int     nbad_gpu = -1;
  CHECK_CUDA(cudaMalloc((void **)&dgeom, ng * sizeof(double)));
  CHECK_CUDA(cudaMemset(dgeom, 0xff, ng * sizeof(double))); /* NaN: entries never written show up */
  MakeGeomDesc(M, T, dcoords, ddiff, dreac, alpha, beta, &g);
  CheckRet(PatchworkPlexGeometryCUDA(&g, dgeom, &nbad_gpu, g_stream), "geometry");
  Download(ggpu, dgeom);
  CHECK_CUDA(cudaFree(dcoords));
  if (ddiff) CHECK_CUDA(cudaFree(ddiff));
  if (dreac) CHECK_CUDA(cudaFree(dreac));
  CHECK_CUDA(cudaFree(dgeom));

  if (nbad_ref != nbad_expect) {
    printf("FAIL %s: the reference finds %d bad cells, the mesh was built with %d\n", label, nbad_ref, nbad_expect);
    g_fail++;
  }
  if (nbad_gpu == nbad_ref) g_pass++;
  else g_fail++;
  printf("%s %s nbad gpu=%d ref=%d\n", nbad_gpu == nbad_ref ? "ok  " : "FAIL", label, nbad_gpu, nbad_ref);
  if (nbad_ref) return gref;

  const std::vector<double> tol = GeometryTolerance(M, T, gref, with_diff ? diff.data() : NULL, with_reac ? reac.data() : NULL, alpha, beta);
  double                    worst = 0;
  for (int c = 0; c < M.ncells; c++) {
    for (int q = 0; q < nqd; q++) {
      const double *gr = &gref[(size_t)c * ncomp * nqd + q], *gg = &ggpu[(size_t)c * ncomp * nqd + q];
      const double  tol0 = tol[(size_t)c * ncomp * nqd + q], tolG = tol[((size_t)c * ncomp + 1) * nqd + q];
      for (int m = 0; m < ncomp; m++) {
        const double err = fabs(gg[(size_t)m * nqd] - gr[(size_t)m * nqd]), ratio = err / (m ? tolG : tol0);
        worst            = ErrMax(worst, ratio);
      }
    }
  }
  snprintf(name, sizeof(name), "%s geometry", label);
  Check(worst <= 1, name, worst);
  return gref;
}

/* Hanging-node masks of 1-irregular cells (about a third of them) and what the CUDA kernels take with
   them: the cells with a mask, and for the diagonal each unknown of those cells once (c*nd + slot) */
struct Hanging {
  std::vector<unsigned long long> mask;
  std::vector<long long>          cells, diag; /* cells: the irregular masks (PatchworkHangingRegular) */
  size_t                          nhanging = 0;
  double                          P[2 * PW_MAX_N * PW_MAX_N], absP[2 * PW_MAX_N * PW_MAX_N];
};

static Hanging MakeHanging(const Mesh &M, bool irregular = true)
{
  const int nd = Pow(M.n, M.dim);
  Hanging   H;

  H.mask.assign(M.ncells, 0);
  PatchworkHangingTables(M.k, H.P);
  for (int i = 0; i < 2 * M.n * M.n; i++) H.absP[i] = fabs(H.P[i]);
  for (int c = 0; c < M.ncells; c++) {
    const int          ch[3] = {Rand() < 0, Rand() < 0, Rand() < 0};
    unsigned long long m     = 0;

    if (Rand() < 0.33) continue; /* Rand() is in [-1, 1) */
    for (int d = 0; d < M.dim; d++) {
      const int f = 2 * d + ch[d];
      int       t = 0;
      if (Rand() < 0) continue;
      m |= 1ull << f;
      for (int e = 0; e < M.dim; e++)
        if (e != d) m |= (unsigned long long)ch[e] << (PW_HANG_FACE_POS + (M.dim - 1) * f + t++);
    }
    if (M.dim == 3)
      for (int d = 0; d < 3; d++) {
        const int o0 = d == 0 ? 1 : 0, o1 = d == 2 ? 1 : 2, a = ch[o0], b = ch[o1], e = 4 * d + 2 * b + a;
        if ((m >> (2 * o0 + a)) & 1 || (m >> (2 * o1 + b)) & 1 || Rand() < 0) continue;
        m |= 1ull << (PW_HANG_EDGE + e);
        m |= (unsigned long long)ch[d] << (PW_HANG_EDGE_POS + e);
      }
    if (!m) continue;
    if (irregular && Rand() < -0.8) { /* one cell in ten: also the opposite face, a mask no mesh gives (the generic kernel) */
      const int d = (int)((Rand() + 1) * 0.5 * M.dim) % M.dim, f = 2 * d + 1 - ch[d];
      m |= 1ull << f;
    }
    H.mask[c] = m;
    H.nhanging++;
    if (!PatchworkHangingRegular(M.dim, m)) H.cells.push_back(c);
    for (int i = 0; i < nd; i++) {
      const int *e    = M.elem.data() + (size_t)c * nd;
      bool       seen = e[i] < 0;
      for (int j = 0; j < i && !seen; j++) seen = e[j] == e[i];
      if (!seen) H.diag.push_back((long long)c * nd + i);
    }
  }
  return H;
}

/* The largest |gpu - ref| / (K mag + extra) over the entries (extra: NULL for none); NaN if one is */
static double WorstRatio(const std::vector<double> &gpu, const std::vector<double> &ref, const std::vector<double> &mag, double K, const std::vector<double> *extra)
{
  double worst = 0;

  for (size_t i = 0; i < gpu.size(); i++) {
    const double r = fabs(gpu[i] - ref[i]) / (K * mag[i] + (extra ? (*extra)[i] : 0.0) + DBL_MIN);
    worst          = ErrMax(worst, r);
  }
  return worst;
}

/* Apply and diagonal with the reference's factors (and hanging-node masks when H is given) */
static void TestOperator(const Mesh &M, const Tables1D &T, int collocated, const std::vector<double> &geom, const char *label, const Hanging *H = NULL)
{
  const size_t        nn = M.nnodes;
  std::vector<double> x(nn), y0(nn), yref, ygpu(nn), ax(nn), yabs(nn), ageom(geom.size());
  PatchworkPlexDesc   d;
  char                name[256];
  const double        K = (20.0 * T.nq + 30 + (H ? 2.0 * M.n * M.n + 4.0 * M.n : 0)) * DBL_EPSILON;
  unsigned long long *dmask = NULL;
  long long          *dcells = NULL, *ddiag = NULL;
  double             *dP = NULL;
  /* the descriptor on the host (ref), with magnitudes (abs), or on the device */
  auto Desc = [&](int which) {
    if (which == 2) MakeDesc(M, T, collocated, NULL, NULL, &d);
    else MakeDesc(M, T, collocated, M.elem.data(), geom.data(), &d);
    if (!H) return;
    if (which == 2) {
      d.hang       = dmask;
      d.hangP      = dP;
      d.hang_cells = dcells;
      d.nhang      = (long long)H->cells.size();
      d.hang_diag  = ddiag;
      d.nhang_diag = (long long)H->diag.size();
    } else {
      d.hang  = H->mask.data();
      d.hangP = which == 1 ? H->absP : H->P;
    }
  };

  for (auto &v : x) v = Rand();
  for (auto &v : y0) v = Rand();
  for (size_t i = 0; i < nn; i++) ax[i] = fabs(x[i]);
  for (size_t i = 0; i < geom.size(); i++) ageom[i] = fabs(geom[i]);

  int    *delem = Upload(M.elem);
  double *dgeom = Upload(geom), *dx = Upload(x), *dy = Upload(y0);
  if (H) {
    std::vector<double> P(H->P, H->P + 2 * PW_MAX_N * PW_MAX_N);
    dmask  = Upload(H->mask);
    dP     = Upload(P);
    dcells = H->cells.empty() ? NULL : Upload(H->cells);
    ddiag  = H->diag.empty() ? NULL : Upload(H->diag);
  }

  /* apply */
  yref = y0;
  Desc(0);
  PatchworkPlexApplyRef(&d, x.data(), yref.data());
  for (size_t i = 0; i < nn; i++) yabs[i] = fabs(y0[i]);
  Desc(1);
  AbsDesc(&d, ageom.data());
  PatchworkPlexApplyRef(&d, ax.data(), yabs.data());
  Desc(2);
  d.elem = delem;
  d.geom = dgeom;
  CheckRet(PatchworkPlexApplyCUDA(&d, dx, dy, g_stream), "apply");
  Download(ygpu, dy);
  double worst = WorstRatio(ygpu, yref, yabs, K, NULL);
  snprintf(name, sizeof(name), "%s apply", label);
  Check(worst <= 1, name, worst);

  /* diagonal */
  yref = y0;
  CHECK_CUDA(cudaMemcpy(dy, y0.data(), nn * sizeof(double), cudaMemcpyHostToDevice));
  Desc(0);
  PatchworkPlexDiagonalRef(&d, yref.data());
  for (size_t i = 0; i < nn; i++) yabs[i] = fabs(y0[i]);
  Desc(1);
  AbsDesc(&d, ageom.data());
  PatchworkPlexDiagonalRef(&d, yabs.data());
  Desc(2);
  d.elem = delem;
  d.geom = dgeom;
  CheckRet(PatchworkPlexDiagonalCUDA(&d, dy, g_stream), "diagonal");
  Download(ygpu, dy);
  worst = WorstRatio(ygpu, yref, yabs, K, NULL);
  snprintf(name, sizeof(name), "%s diagonal", label);
  Check(worst <= 1, name, worst);

  CHECK_CUDA(cudaFree(delem));
  CHECK_CUDA(cudaFree(dgeom));
  CHECK_CUDA(cudaFree(dx));
  CHECK_CUDA(cudaFree(dy));
  CHECK_CUDA(cudaFree(dmask));
  CHECK_CUDA(cudaFree(dP));
  CHECK_CUDA(cudaFree(dcells));
  CHECK_CUDA(cudaFree(ddiag));
}

/* Geometry on the fly: the apply from the corners of multilinear cells (geom NULL on the device) against the
   reference with the stored factors of the same cells. The tolerance per entry is the apply's (as in
   TestOperator) plus what the bound on the factors' rounding (GeometryTolerance, which covers both ways of
   computing them) can change in y: the reference computes it with those bounds as the factors, |interp|,
   |deriv| and |x|. Hanging masks (H) must all be regular. */
static void TestFly(const Mesh &M, const Tables1D &T, int collocated, bool with_diff, bool with_reac, const char *label, const Hanging *H = NULL)
{
  const int           dim = M.dim, nqd = Pow(T.nq, dim), ncomp = PW_PLEX_NCOMP(dim);
  const size_t        nn = M.nnodes;
  std::vector<double> diff(with_diff ? (size_t)M.ncells * nqd : 0), reac(with_reac ? (size_t)M.ncells * nqd : 0), gref((size_t)M.ncells * ncomp * nqd);
  std::vector<double> x(nn), y0(nn), ax(nn), yref, yabs(nn), yerr(nn, 0.0), ygpu(nn), ageom(gref.size());
  const double        alpha = 1.0 + 0.5 * Rand(), beta = 1.0 + 0.5 * Rand();
  const double        K = (20.0 * T.nq + 30 + (H ? 2.0 * M.n * M.n + 4.0 * M.n : 0)) * DBL_EPSILON;
  PatchworkPlexGeomDesc g;
  PatchworkPlexDesc     d;
  char                  name[256];

  for (auto &v : diff) v = 1.0 + 0.5 * Rand();
  for (auto &v : reac) v = 1.0 + 0.5 * Rand();
  for (auto &v : x) v = Rand();
  for (auto &v : y0) v = Rand();
  for (size_t i = 0; i < nn; i++) ax[i] = fabs(x[i]);
  MakeGeomDesc(M, T, M.coords.data(), with_diff ? diff.data() : NULL, with_reac ? reac.data() : NULL, alpha, beta, &g);
  if (PatchworkPlexGeometryRef(&g, gref.data())) {
    printf("FAIL %s: the multilinear mesh has tangled cells\n", label);
    g_fail++;
    return;
  }
  for (size_t i = 0; i < gref.size(); i++) ageom[i] = fabs(gref[i]);
  const std::vector<double> tol = GeometryTolerance(M, T, gref, with_diff ? diff.data() : NULL, with_reac ? reac.data() : NULL, alpha, beta);
  auto                      Host = [&](const double *geom, bool magnitudes) {
    MakeDesc(M, T, collocated, M.elem.data(), geom, &d);
    if (magnitudes) AbsDesc(&d, geom);
    if (H) {
      d.hang  = H->mask.data();
      d.hangP = magnitudes ? H->absP : H->P;
    }
  };
  yref = y0;
  Host(gref.data(), false);
  PatchworkPlexApplyRef(&d, x.data(), yref.data());
  for (size_t i = 0; i < nn; i++) yabs[i] = fabs(y0[i]);
  Host(ageom.data(), true);
  PatchworkPlexApplyRef(&d, ax.data(), yabs.data());
  Host(tol.data(), true);
  PatchworkPlexApplyRef(&d, ax.data(), yerr.data());

  std::vector<double> corners = Corners(M), P(H ? H->P : T.w, H ? H->P + 2 * PW_MAX_N * PW_MAX_N : T.w);
  int                *delem = Upload(M.elem);
  double             *dcorners = Upload(corners), *dx = Upload(x), *dy = Upload(y0);
  double             *ddiff = with_diff ? Upload(diff) : NULL, *dreac = with_reac ? Upload(reac) : NULL, *dP = H ? Upload(P) : NULL;
  unsigned long long *dmask = H ? Upload(H->mask) : NULL;
  MakeDesc(M, T, collocated, delem, NULL, &d);
  d.corners   = dcorners;
  d.diffusion = ddiff;
  d.reaction  = dreac;
  d.alpha     = alpha;
  d.beta      = beta;
  memcpy(d.points, T.pts, sizeof(T.pts));
  memcpy(d.weights, T.w, sizeof(T.w));
  d.hang  = dmask;
  d.hangP = dP;
  CheckRet(PatchworkPlexApplyCUDA(&d, dx, dy, g_stream), "apply on the fly");
  Download(ygpu, dy);
  const double worst = WorstRatio(ygpu, yref, yabs, K, &yerr);
  snprintf(name, sizeof(name), "%s apply on the fly", label);
  Check(worst <= 1, name, worst);
  CHECK_CUDA(cudaFree(delem));
  CHECK_CUDA(cudaFree(dcorners));
  CHECK_CUDA(cudaFree(dx));
  CHECK_CUDA(cudaFree(dy));
  CHECK_CUDA(cudaFree(ddiff));
  CHECK_CUDA(cudaFree(dreac));
  CHECK_CUDA(cudaFree(dP));
  CHECK_CUDA(cudaFree(dmask));
}

/* Bad descriptors are refused with cudaErrorInvalidValue; no cells is a no-op */
static void TestErrors(void)
{
  const Rule        R = {"gauss", PW_QUAD_GAUSS, 1, 0};
  const int         cells[3] = {2, 2, 1};
  Tables1D          T;
  PatchworkPlexDesc d;
  double           *dy, one = 1.0, back = 0.0;
  int               ret, nbad = -1;

  MakeTables(2, R, &T);
  Mesh M = BuildMesh(2, 2, cells, false, 0);
  CHECK_CUDA(cudaMalloc((void **)&dy, 4096 * sizeof(double)));
  CHECK_CUDA(cudaMemcpy(dy, &one, sizeof(double), cudaMemcpyHostToDevice));
  MakeDesc(M, T, 0, (const int *)dy, dy, &d);
  d.dim    = 3;
  d.degree = 9;
  ret      = PatchworkPlexApplyCUDA(&d, dy, dy, g_stream);
  ReportRet(ret, cudaErrorInvalidValue, "3D degree 9 refused");
  MakeDesc(M, T, 0, (const int *)dy, dy, &d);
  d.degree = 11;
  ret      = PatchworkPlexDiagonalCUDA(&d, dy, g_stream);
  ReportRet(ret, cudaErrorInvalidValue, "2D degree 11 refused");
  MakeDesc(M, T, 0, (const int *)dy, dy, &d);
  d.nq = 2; /* < n */
  ret  = PatchworkPlexApplyCUDA(&d, dy, dy, g_stream);
  ReportRet(ret, cudaErrorInvalidValue, "nq < n refused");
  MakeDesc(M, T, 1, (const int *)dy, dy, &d); /* collocated needs nq == n */
  ret = PatchworkPlexApplyCUDA(&d, dy, dy, g_stream);
  ReportRet(ret, cudaErrorInvalidValue, "collocated with nq != n refused");
  MakeDesc(M, T, 0, (const int *)dy, dy, &d);
  d.dim = 4;
  ret   = PatchworkPlexApplyCUDA(&d, dy, dy, g_stream);
  ReportRet(ret, cudaErrorInvalidValue, "dim 4 refused");
  MakeDesc(M, T, 0, NULL, NULL, &d);
  d.ncells = 0;
  ret      = PatchworkPlexApplyCUDA(&d, dy, dy, g_stream);
  ret |= PatchworkPlexDiagonalCUDA(&d, dy, g_stream);
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  CHECK_CUDA(cudaMemcpy(&back, dy, sizeof(double), cudaMemcpyDeviceToHost));
  ReportRet(back == 1.0 ? ret : -1, 0, "no cells: no-op");
  PatchworkPlexGeomDesc g;
  MakeGeomDesc(M, T, NULL, NULL, NULL, 1, 1, &g);
  g.ncells = 0;
  ret      = PatchworkPlexGeometryCUDA(&g, NULL, &nbad, g_stream);
  ReportRet(nbad == 0 ? ret : -1, 0, "geometry of no cells: nbad 0");
  g.ncells = 1;
  g.nq     = PW_MAX_Q + 1;
  ret      = PatchworkPlexGeometryCUDA(&g, dy, &nbad, g_stream);
  ReportRet(ret, cudaErrorInvalidValue, "geometry nq > PW_MAX_Q refused");
  /* the geometry on the fly: only in the templated kernels, and never for the diagonal */
  MakeDesc(M, T, 0, (const int *)dy, NULL, &d);
  d.corners = dy;
  d.nq      = 6; /* n + 3: the generic kernel */
  ret       = PatchworkPlexApplyCUDA(&d, dy, dy, g_stream);
  ReportRet(ret, cudaErrorInvalidValue, "corners with nq = n + 3 refused");
  MakeDesc(M, T, 0, (const int *)dy, NULL, &d);
  d.corners    = dy;
  d.hang       = (const unsigned long long *)dy;
  d.hangP      = dy;
  d.hang_cells = (const long long *)dy;
  d.nhang      = 1;
  ret          = PatchworkPlexApplyCUDA(&d, dy, dy, g_stream);
  ReportRet(ret, cudaErrorInvalidValue, "corners with irregular hanging cells refused");
  MakeDesc(M, T, 0, (const int *)dy, NULL, &d);
  d.corners = dy;
  ret       = PatchworkPlexDiagonalCUDA(&d, dy, g_stream);
  ReportRet(ret, cudaErrorInvalidValue, "diagonal without geom refused");
  MakeDesc(M, T, 0, (const int *)dy, NULL, &d);
  ret = PatchworkPlexApplyCUDA(&d, dy, dy, g_stream);
  ReportRet(ret, cudaErrorInvalidValue, "apply without geom or corners refused");
  CHECK_CUDA(cudaFree(dy));
}

int main(int argc, char **argv)
{
  bool      quick;
  const int start = GpuTestStart(argc, argv, &quick);

  if (start >= 0) return start;
  TestErrors();
  const Rule rules[] = {
    {"gl-colloc", PW_QUAD_GAUSSLOBATTO, 0, 1},
    {"gauss+0", PW_QUAD_GAUSS, 0, 0},
    {"gauss+1", PW_QUAD_GAUSS, 1, 0},
    {"gauss+2", PW_QUAD_GAUSS, 2, 0},
    {"gauss+3", PW_QUAD_GAUSS, 3, 0},   /* generic kernel; low degrees only */
    {"gl-plain", PW_QUAD_GAUSSLOBATTO, 0, 0},
  };
  const int nrules = (int)(sizeof(rules) / sizeof(rules[0]));
  int       ncase  = 0;

  for (int dim = 2; dim <= 3; dim++) {
    const int kmax = dim == 3 ? 8 : 10;
    for (int k = 1; k <= kmax; k++) {
      int cells[3] = {1, 1, 1};
      if (quick) {
        cells[0] = 2;
        cells[1] = dim == 3 ? 2 : 3;
        cells[2] = dim == 3 ? 2 : 1;
      } else if (dim == 3) {
        const int c3[3][3] = {{5, 4, 3}, {4, 3, 3}, {3, 3, 2}};
        memcpy(cells, c3[k <= 2 ? 0 : k <= 4 ? 1 : 2], sizeof(cells));
      } else {
        cells[0] = k <= 5 ? 9 : 6;
        cells[1] = k <= 5 ? 7 : 5;
      }
      for (int ri = 0; ri < nrules; ri++) {
        const Rule &R = rules[ri];
        Tables1D    T;
        char        label[160];

        if (quick && (ri == 1 || ri == 2 || ri == 5)) continue;
        if (ri == 4 && k > 2) continue;
        if (ri == 5 && k != 3) continue;
        if (!MakeTables(k, R, &T)) {
          printf("FAIL PatchworkPlex1DTables(k=%d, nq=%d, %s)\n", k, k + 1 + R.dnq, R.name);
          g_fail++;
          continue;
        }
        /* vary the orientation and the coefficients over the cases */
        const bool mirror = ncase % 3 == 1, with_diff = ncase % 4 != 2, with_reac = ncase % 4 == 0 || ncase % 4 == 3;
        ncase++;
        Mesh M = BuildMesh(dim, k, cells, mirror, 0);
        snprintf(label, sizeof(label), "%dD k=%-2d nq=%-2d %-9s cells=%-3d %s diff=%s reac=%s", dim, k, T.nq, R.name, M.ncells, mirror ? "left " : "right", with_diff ? "yes " : "NULL", with_reac ? "yes " : "NULL");
        std::vector<double> geom = TestGeometry(M, T, with_diff, with_reac, 0, label);
        TestOperator(M, T, R.collocated, geom, label);
        if (ncase % 2 == 0) { /* hanging nodes on a third of the cells */
          Hanging H = MakeHanging(M);
          char    hl[200];

          snprintf(hl, sizeof(hl), "%s hanging=%zu irregular=%zu", label, H.nhanging, H.cells.size());
          TestOperator(M, T, R.collocated, geom, hl, &H);
        }
        if (ri < 4) { /* the geometry on the fly (templated kernels), with and without regular hanging masks */
          Mesh ML = BuildMesh(dim, k, cells, mirror, 0);
          char fl[200];

          const bool fdiff = with_reac, freac = with_diff; /* the other combinations of coefficients */
          MakeMultilinear(ML);
          snprintf(fl, sizeof(fl), "%dD k=%-2d nq=%-2d %-9s cells=%-3d %s diff=%s reac=%s multilinear", dim, k, T.nq, R.name, ML.ncells, mirror ? "left " : "right", fdiff ? "yes " : "NULL", freac ? "yes " : "NULL");
          TestFly(ML, T, R.collocated, fdiff, freac, fl);
          Hanging H = MakeHanging(ML, false);
          snprintf(fl + strlen(fl), sizeof(fl) - strlen(fl), " hanging=%zu", H.nhanging);
          TestFly(ML, T, R.collocated, fdiff, freac, fl, &H);
        }
      }
      /* tangled cells: only the count is compared */
      if (k == 1 || k == 2 || k == (dim == 3 ? 5 : 7)) {
        Tables1D   T;
        const Rule R = {"gauss+1", PW_QUAD_GAUSS, 1, 0};
        char       label[160];

        MakeTables(k, R, &T);
        for (int mirror = 0; mirror <= 1; mirror++) {
          Mesh M = BuildMesh(dim, k, cells, mirror, 2);
          snprintf(label, sizeof(label), "%dD k=%-2d nq=%-2d tangled   cells=%-3d %s", dim, k, T.nq, M.ncells, mirror ? "left " : "right");
          TestGeometry(M, T, true, false, 2, label);
        }
      }
    }
  }
  CHECK_CUDA(cudaStreamDestroy(g_stream));
  CHECK_CUDA(cudaDeviceSynchronize());
  /* one line, last: the scripts take it as the summary */
  printf("# %d passed, %d failed; worst err/tol %.3f (%s)\n", g_pass, g_fail, g_worst, g_worst_name);
  return g_fail ? 1 : 0;
}
