/* Unit test of the CPU reference of PCPATCHAMG's strong graph, PatchworkGraphStrength
   (src/core/amg_strength_ref.c; contract include/patchwork/amg_kernel.h), against brute force
   written here by linear search (it calls neither PatchworkCSRStrong nor PatchworkCSRFind): entry
   (i, j), j != i, is kept iff max(|a_ij|, |a_ji|) >= theta sqrt(|a_ii| |a_jj|), a_ji = 0 where it is
   not stored, |a_kk| = 0 where the diagonal is not stored; theta <= 0 keeps every off-diagonal
   entry; a coupling with a NaN in a_ij, a_ji, a_ii or a_jj is weak. Rows list the kept columns in
   A's order; n, ptr and adj must be equal exactly, as the decision is one comparison of doubles.
   The brute force forms the threshold as theta (sqrt(d_i) sqrt(d_j)), which cannot overflow or
   underflow for finite d; otherwise it differs from theta sqrt(d_i d_j) by a rounding, which flips
   a random entry only within an ulp or two of its threshold (probability ~1e-16 an entry); the
   hand-written ties use dyadic values, exact either way.
   Cases: random square matrices (sorted distinct columns; 0, 1 and many rows; rows without entries
   or without a diagonal; zero and negative diagonals; explicit zeros (+0 and -0); symmetric patterns
   with nonsymmetric and with symmetric values, where the strong graph must be symmetric too;
   nonsymmetric patterns; values over 120 and over 1000 binary orders of magnitude; NaNs) for theta in
   {-1, 0, 0.01, 0.05, 0.25, 1, 10}; hand-written cases with their expected graphs (ties that > for
   >= would drop, couplings that only the mirror makes strong, NaN, diagonals whose product
   overflows or underflows); bad arguments return 1 and leave s empty.
   PETSc-free; --quick runs smaller cases (for valgrind). */
#include <string.h>
#include <patchwork/amg_kernel.h>
#include "unittest.h"

static int nchecks = 0; /* for the summary */
#define CHECK(...) (nchecks++, Check(__VA_ARGS__))

static const double thetas[] = {-1, 0, 0.01, 0.05, 0.25, 1, 10};
#define NTHETA ((int)(sizeof(thetas) / sizeof(thetas[0])))

typedef struct {
  int     n, *ptr, *col;
  double *val;
} Mat;

static PatchworkCSR View(const Mat *M)
{
  PatchworkCSR A = {M->n, M->ptr, M->col, M->val};

  return A;
}

static void FreeMat(Mat *M)
{
  free(M->ptr);
  free(M->col);
  free(M->val);
}

/* A family of random matrices */
typedef struct {
  const char *name;
  int         sym;       /* 0: any pattern; 1: symmetric pattern, values drawn per entry; 2: symmetric values too */
  double      pdiag;     /* a row stores its diagonal */
  double      pzero_diag, pzero_off, pnan_diag, pnan_off;
  int         emax;      /* |values| in [2^-(emax+1), 2^emax) */
} Family;

static const Family families[] = {
  {"nonsymmetric pattern", 0, 0.85, 0.05, 0.05, 0, 0, 60},
  {"symmetric pattern, nonsymmetric values", 1, 0.85, 0.05, 0.05, 0, 0, 60},
  {"symmetric pattern and values", 2, 0.85, 0.05, 0.05, 0, 0, 60},
  {"symmetric pattern, values in [0.25, 2)", 1, 0.95, 0, 0, 0, 0, 1},
  {"few or zero diagonals", 1, 0.30, 0.50, 0.05, 0, 0, 20},
  {"explicit zeros", 0, 0.80, 0.20, 0.50, 0, 0, 20},
  {"values over 2^+-500", 1, 0.85, 0.05, 0.05, 0, 0, 500},
  {"NaNs", 1, 0.85, 0.05, 0.05, 0.04, 0.04, 20},
};
#define NFAMILY ((int)(sizeof(families) / sizeof(families[0])))

static int RandInt(int lo, int hi, uint64_t *rs) /* in [lo, hi] */
{
  return lo + (int)(Rand(rs) * (hi - lo + 1));
}

/* +-[0.5, 1) 2^e, e in [-emax, emax]: under 2^511 in magnitude, so products of two stay finite
   and normal for emax <= 510 */
static double Spread(int emax, uint64_t *rs)
{
  const double m = 0.5 + 0.5 * Rand(rs);

  return ldexp(Rand(rs) < 0.5 ? -m : m, RandInt(-emax, emax, rs));
}

static double Value(const Family *f, int diag, uint64_t *rs)
{
  const double r = Rand(rs);

  if (r < (diag ? f->pnan_diag : f->pnan_off)) return NAN;
  if (r < (diag ? f->pnan_diag + f->pzero_diag : f->pnan_off + f->pzero_off)) return Rand(rs) < 0.5 ? 0.0 : -0.0;
  return Spread(f->emax, rs);
}

static int CmpPair(const void *a, const void *b)
{
  const int *p = (const int *)a, *q = (const int *)b;

  return p[0] != q[0] ? (p[0] > q[0]) - (p[0] < q[0]) : (p[1] > q[1]) - (p[1] < q[1]);
}

/* Linear search of row i for column j: the brute force's lookup (-1 when absent) */
static int Find(const Mat *M, int i, int j)
{
  for (int e = M->ptr[i]; e < M->ptr[i + 1]; e++)
    if (M->col[e] == j) return e;
  return -1;
}

/* An n x n matrix of the family: random row lengths (0, 1, a few, a few dozen), the diagonal in a
   fraction pdiag of the rows, closed under transposition where sym, sorted distinct columns */
static Mat RandomMat(int n, const Family *f, uint64_t *rs)
{
  Mat    M;
  int   *pair, np = 0, cap = 16;
  size_t nnz = 0;

  pair = (int *)Malloc(sizeof(int) * 2 * (size_t)cap);
  for (int i = 0; i < n; i++) {
    const double r = Rand(rs);
    int          k = r < 0.10 ? 0 : r < 0.25 ? 1 : r < 0.75 ? RandInt(2, 8, rs) : RandInt(9, 40, rs);

    if (k > n) k = n;
    for (int t = 0; t < k + 1; t++) {
      int j = t < k ? RandInt(0, n - 1, rs) : i;

      if (j == i && (t < k || Rand(rs) >= f->pdiag)) continue; /* the diagonal per pdiag only */
      for (int m = 0; m < (f->sym ? 2 : 1); m++) {
        if (np == cap) {
          int *p = (int *)Malloc(sizeof(int) * 4 * (size_t)cap);

          memcpy(p, pair, sizeof(int) * 2 * (size_t)cap);
          free(pair);
          pair = p;
          cap *= 2;
        }
        pair[2 * np]     = m ? j : i;
        pair[2 * np + 1] = m ? i : j;
        np++;
      }
    }
  }
  if (np) qsort(pair, (size_t)np, sizeof(int) * 2, CmpPair);
  M.n   = n;
  M.ptr = (int *)Malloc(sizeof(int) * ((size_t)n + 1));
  M.col = (int *)Malloc(sizeof(int) * (size_t)(np ? np : 1));
  M.val = (double *)Malloc(sizeof(double) * (size_t)(np ? np : 1));
  M.ptr[0] = 0;
  for (int p = 0, i = 0; i < n; i++) {
    for (; p < np && pair[2 * p] == i; p++) {
      if (p > 0 && pair[2 * p] == pair[2 * p - 2] && pair[2 * p + 1] == pair[2 * p - 1]) continue; /* repeated */
      M.col[nnz] = pair[2 * p + 1];
      M.val[nnz] = Value(f, pair[2 * p + 1] == i, rs);
      nnz++;
    }
    M.ptr[i + 1] = (int)nnz;
  }
  if (f->sym == 2)
    for (int i = 0; i < n; i++)
      for (int e = M.ptr[i]; e < M.ptr[i + 1]; e++)
        if (M.col[e] < i) M.val[e] = M.val[Find(&M, M.col[e], i)];
  free(pair);
  return M;
}

/* The criterion as the contract states it, NaN first: max is then the plain one */
static int Strong(double aij, double aji, double di, double dj, double theta)
{
  if (isnan(aij) || isnan(aji) || isnan(di) || isnan(dj)) return 0;
  if (theta <= 0) return 1;
  return (aij > aji ? aij : aji) >= theta * (sqrt(di) * sqrt(dj));
}

/* The expected graph of M (ptr [n+1], adj [nnz]); *mirror counts the couplings kept only because
   of |a_ji|, *tie those kept with equality */
static void Brute(const Mat *M, double theta, int *ptr, int *adj, int *mirror, int *tie)
{
  const int n = M->n;
  double   *d = (double *)Malloc(sizeof(double) * (size_t)(n ? n : 1));

  for (int i = 0; i < n; i++) {
    const int e = Find(M, i, i);

    d[i] = e >= 0 ? fabs(M->val[e]) : 0.0;
  }
  ptr[0] = 0;
  for (int i = 0; i < n; i++) {
    ptr[i + 1] = ptr[i];
    for (int e = M->ptr[i]; e < M->ptr[i + 1]; e++) {
      const int    j = M->col[e], m = j == i ? -1 : Find(M, j, i);
      const double aij = fabs(M->val[e]), aji = m >= 0 ? fabs(M->val[m]) : 0.0;

      if (j == i || !Strong(aij, aji, d[i], d[j], theta)) continue;
      adj[ptr[i + 1]++] = j;
      if (theta > 0 && !Strong(aij, 0.0, d[i], d[j], theta)) (*mirror)++;
      if (theta > 0 && (aij > aji ? aij : aji) == theta * (sqrt(d[i]) * sqrt(d[j]))) (*tie)++;
    }
  }
  free(d);
}

/* Is the graph symmetric (j in adj(i) iff i in adj(j))? By linear search */
static int Symmetric(const PatchworkGraph *s)
{
  for (int i = 0; i < s->n; i++)
    for (int e = s->ptr[i]; e < s->ptr[i + 1]; e++) {
      const int j     = s->adj[e];
      int       found = 0;

      for (int f = s->ptr[j]; f < s->ptr[j + 1] && !found; f++) found = s->adj[f] == i;
      if (!found) return 0;
    }
  return 1;
}

/* PatchworkGraphStrength(M, theta) against the brute force */
static void Compare(int *fails, const char *label, const Mat *M, const Family *f, double theta, int *mirror, int *tie)
{
  const int          n   = M->n, nnz = M->ptr[n];
  const PatchworkCSR A   = View(M);
  int               *ptr = (int *)Malloc(sizeof(int) * ((size_t)n + 1)), *adj = (int *)Malloc(sizeof(int) * (size_t)(nnz ? nnz : 1));
  int                m = 0, t = 0, off = 0, bad = 0, first = -1, ret;
  PatchworkGraph     s;

  Brute(M, theta, ptr, adj, &m, &t);
  memset(&s, 0xA5, sizeof(s)); /* junk the function must overwrite */
  ret = PatchworkGraphStrength(&A, theta, &s);
  if (ret || s.n != n || !s.ptr || !s.adj || s.weight || s.coord) {
    CHECK(fails, 1, 0, "%s, theta %g: returned %d, n %d (want 0, %d), weight and coord NULL", label, theta, ret, ret ? 0 : s.n, n);
    if (!ret) PatchworkGraphFree(&s);
    free(ptr);
    free(adj);
    return;
  }
  /* rows compared by content (a wrong row shifts ptr for every row after it), ptr apart */
  for (int i = 0; i < n; i++) {
    const int len = ptr[i + 1] - ptr[i];

    if (s.ptr[i + 1] - s.ptr[i] != len || memcmp(s.adj + s.ptr[i], adj + ptr[i], sizeof(int) * (size_t)len)) {
      if (!bad++) first = i;
    }
  }
  CHECK(fails, bad + (memcmp(s.ptr, ptr, sizeof(int) * ((size_t)n + 1)) != 0), 0, "%s, theta %g: %d of %d couplings kept (%d only by the mirror, %d at equality); ptr and adj equal to brute force (%d rows differ, the first %d)", label, theta, ptr[n], nnz, m, t, bad, first);
  if (f->sym) CHECK(fails, !Symmetric(&s), 0, "%s, theta %g: symmetric pattern, symmetric strong graph", label, theta);
  if (theta <= 0 && !f->pnan_diag && !f->pnan_off) {
    for (int i = 0; i < n; i++)
      for (int e = M->ptr[i]; e < M->ptr[i + 1]; e++) off += M->col[e] != i;
    CHECK(fails, s.ptr[n] != off, 0, "%s, theta %g: every one of the %d off-diagonal entries kept", label, theta, off);
  }
  *mirror += m;
  *tie += t;
  PatchworkGraphFree(&s);
  free(ptr);
  free(adj);
}

/* A hand-written case: A in CSR, theta, the expected graph; checked against both the expectation
   and the brute force (which thereby is checked too) */
static void Exact(int *fails, const char *label, int n, const int *ptr, const int *col, const double *val, double theta, const int *eptr, const int *eadj)
{
  const PatchworkCSR A = {n, ptr, col, val};
  Mat                M = {n, (int *)ptr, (int *)col, (double *)val};
  int                bptr[16], badj[64], m = 0, t = 0, ok, ret;
  PatchworkGraph     s;

  Brute(&M, theta, bptr, badj, &m, &t);
  ok = !memcmp(bptr, eptr, sizeof(int) * ((size_t)n + 1)) && !memcmp(badj, eadj, sizeof(int) * (size_t)eptr[n]);
  CHECK(fails, !ok, 0, "%s, theta %g: the brute force gives the expected graph", label, theta);
  ret = PatchworkGraphStrength(&A, theta, &s);
  ok  = !ret && s.n == n && !memcmp(s.ptr, eptr, sizeof(int) * ((size_t)n + 1)) && !memcmp(s.adj, eadj, sizeof(int) * (size_t)eptr[n]);
  CHECK(fails, !ok, 0, "%s, theta %g: %d couplings expected, %d kept", label, theta, eptr[n], ret ? -1 : s.ptr[n]);
  if (!ret) PatchworkGraphFree(&s);
}

static void HandWritten(int *fails)
{
  /* 2 x 2, diagonals 4 and 9 (negative too), off-diagonal 1.5: theta 0.25 gives 0.25 * 6 = 1.5
     exactly, a tie, kept; the next theta up, or the off-diagonal one ulp down, drops it */
  const int    p2[]  = {0, 2, 4}, c2[] = {0, 1, 0, 1};
  const int    keep2[] = {0, 1, 2}, adj2[] = {1, 0}, none2[] = {0, 0, 0};
  const double tie[] = {4, 1.5, 1.5, 9}, tieneg[] = {-4, -1.5, 1.5, -9};
  const double below[] = {4, nextafter(1.5, 0), nextafter(1.5, 0), 9};
  Exact(fails, "tie 1.5 = 0.25 sqrt(4 9)", 2, p2, c2, tie, 0.25, keep2, adj2);
  Exact(fails, "tie, negative values", 2, p2, c2, tieneg, 0.25, keep2, adj2);
  Exact(fails, "tie, theta one ulp up", 2, p2, c2, tie, nextafter(0.25, 1), none2, adj2);
  Exact(fails, "one ulp below the tie", 2, p2, c2, below, 0.25, none2, adj2);
  { /* a zero coupling with a zero diagonal: 0 >= theta * 0 is a tie, kept for every theta */
    const double z[] = {0, 0, -0.0, 5};
    Exact(fails, "zero coupling, zero diagonal", 2, p2, c2, z, 10, keep2, adj2);
  }
  { /* the brief's example: 0.05 sqrt(36) rounds to 0.30000000000000004 > 0.3 (and the doubles 0.05 and
       0.3 compare the same way exactly), so 0.3 is weak; 0.25 sqrt(36) = 1.5 above is the exact tie */
    const double v[] = {4, 0.3, 0.3, 9};
    Exact(fails, "0.3 vs 0.05 sqrt(4 9) in double", 2, p2, c2, v, 0.05, none2, adj2);
  }
  /* the max: a_01 = 0.01 is weak by itself, a_10 = 0.5 makes both strong; without the mirror
     (a_10 not stored) only |a_01| counts */
  {
    const double v[] = {1, 0.01, -0.5, 1};
    const int    pu[] = {0, 2, 3}, cu[] = {0, 1, 1}, keep0[] = {0, 1, 1}, adj0[] = {1};
    const double u[] = {1, 0.5, 1}, w[] = {1, 0.01, 1};
    Exact(fails, "max: weak a_01, strong mirror", 2, p2, c2, v, 0.25, keep2, adj2);
    Exact(fails, "no mirror, strong a_01", 2, pu, cu, u, 0.25, keep0, adj0);
    Exact(fails, "no mirror, weak a_01", 2, pu, cu, w, 0.25, none2, adj0);
  }
  /* 3 x 3, row 1 without a diagonal (and row 2 with a zero one): their couplings are strong
     whatever theta, explicit zeros included; row 0's coupling to 1 too (d_1 = 0) */
  {
    const int    p[] = {0, 2, 4, 6}, c[] = {0, 1, 0, 2, 1, 2};
    const double v[] = {7, 1e-9, 0.0, -1e-300, 0.0, 0.0};
    const int    ep[] = {0, 1, 3, 4}, ea[] = {1, 0, 2, 1};
    Exact(fails, "no diagonal in row 1, zero in row 2", 3, p, c, v, 10, ep, ea);
  }
  /* explicit zeros beside nonzero diagonals: weak for theta > 0, kept for theta <= 0 */
  {
    const double v[] = {2, 0.0, -0.0, 3};
    Exact(fails, "explicit zeros", 2, p2, c2, v, 0.01, none2, adj2);
    Exact(fails, "explicit zeros", 2, p2, c2, v, 0, keep2, adj2);
    Exact(fails, "explicit zeros", 2, p2, c2, v, -1, keep2, adj2);
  }
  /* NaN: a_01 NaN with a finite mirror, a_02 NaN without one, a_23 finite with a NaN mirror, a_44
     NaN (so (3,4), (4,3) are weak): nothing is strong, whatever theta; with 1 for every NaN,
     everything is (1 >= 0.25) */
  {
    const int    p[] = {0, 3, 5, 7, 10, 12};
    const int    c[] = {0, 1, 2, 0, 1, 2, 3, 2, 3, 4, 3, 4};
    const double v[] = {1, NAN, NAN, 1, 1, 1, 1, NAN, 1, 1, 1, NAN};
    const int    ep[] = {0, 0, 0, 0, 0, 0}, ea[] = {0};
    const double v2[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    const int    fp[] = {0, 2, 3, 4, 6, 7}, fa[] = {1, 2, 0, 3, 2, 4, 3};
    for (int k = 0; k < 3; k++) {
      const double th = k == 0 ? -1 : k == 1 ? 0 : 0.25;
      Exact(fails, "NaN couplings and a NaN diagonal: nothing strong", 5, p, c, v, th, ep, ea);
    }
    Exact(fails, "the same pattern without NaN: all strong", 5, p, c, v2, 0.25, fp, fa);
  }
  /* diagonals whose product overflows (1e200 1e200) or underflows (1e-200 1e-200) in double: the
     threshold is 1e198 resp. 1e-202 at theta 0.01, every coupling is kept at theta 0 */
  {
    const double big[] = {1e200, 1e199, 1e199, 1e200}, bigweak[] = {1e200, 1e197, 1e197, 1e200};
    const double tiny[] = {1e-200, 1e-210, 1e-210, 1e-200}, tinystrong[] = {1e-200, 1e-201, 1e-201, 1e-200};
    Exact(fails, "diagonals 1e200: 1e199 strong", 2, p2, c2, big, 0.01, keep2, adj2);
    Exact(fails, "diagonals 1e200: 1e197 weak", 2, p2, c2, bigweak, 0.01, none2, adj2);
    Exact(fails, "diagonals 1e200: kept at theta 0", 2, p2, c2, bigweak, 0, keep2, adj2);
    Exact(fails, "diagonals 1e-200: 1e-210 weak", 2, p2, c2, tiny, 0.01, none2, adj2);
    Exact(fails, "diagonals 1e-200: 1e-201 strong", 2, p2, c2, tinystrong, 0.01, keep2, adj2);
  }
}

/* Empty matrices and bad arguments */
static void Corners(int *fails)
{
  const int    p0[] = {0}, p3[] = {0, 0, 0, 0}, c[] = {0, 1, 1, 2};
  const double v[] = {1, 1, 1, 1};
  const int    p[] = {0, 2, 3, 4};
  PatchworkCSR A;
  PatchworkGraph s;
  int          ret;

  for (int nul = 0; nul < 2; nul++) { /* no rows: the arrays may be NULL */
    A   = (PatchworkCSR){0, nul ? NULL : p0, nul ? NULL : c, nul ? NULL : v};
    ret = PatchworkGraphStrength(&A, 0.1, &s);
    CHECK(fails, ret || s.n != 0 || !s.ptr || s.ptr[0] != 0 || !s.adj || s.weight || s.coord, 0, "no rows%s: n 0, ptr {0}", nul ? ", NULL arrays" : "");
    if (!ret) PatchworkGraphFree(&s);
  }
  A   = (PatchworkCSR){3, p3, c, v}; /* rows without entries */
  ret = PatchworkGraphStrength(&A, 0.1, &s);
  CHECK(fails, ret || s.n != 3 || memcmp(s.ptr, p3, sizeof(p3)), 0, "3 rows without entries: ptr 0");
  if (!ret) PatchworkGraphFree(&s);

  A = (PatchworkCSR){3, p, c, v};
  CHECK(fails, PatchworkGraphStrength(&A, 0.1, NULL) != 1, 0, "NULL s is refused");
  {
    struct {
      const char  *name;
      PatchworkCSR A;
      int          null;
    } bad[] = {
      {"NULL A", A, 1},
      {"negative n", {-1, p, c, v}, 0},
      {"NULL ptr", {3, NULL, c, v}, 0},
      {"NULL col", {3, p, NULL, v}, 0},
      {"NULL val", {3, p, c, NULL}, 0},
    };
    for (int k = 0; k < 5; k++) {
      memset(&s, 0xA5, sizeof(s));
      ret = PatchworkGraphStrength(bad[k].null ? NULL : &bad[k].A, 0.1, &s);
      CHECK(fails, ret != 1 || s.ptr || s.adj || s.n, 0, "%s is refused (1), s left empty", bad[k].name);
    }
  }
}

int main(int argc, char **argv)
{
  int       fails = 0, quick = argc > 1 && !strcmp(argv[1], "--quick"), mirror = 0, tie = 0;
  uint64_t  rs    = 2025;
  const int sizes[] = {0, 1, 2, 3, 7, 40, 300, 2000, 20000};

  for (int z = 0; z < (int)(sizeof(sizes) / sizeof(sizes[0])); z++) {
    if (quick && sizes[z] > 300) continue;
    for (int f = 0; f < NFAMILY; f++) {
      Mat  M = RandomMat(sizes[z], &families[f], &rs);
      char label[160];

      snprintf(label, sizeof(label), "%s, n %d, %d entries", families[f].name, M.n, M.ptr[M.n]);
      for (int t = 0; t < NTHETA; t++) Compare(&fails, label, &M, &families[f], thetas[t], &mirror, &tie);
      FreeMat(&M);
    }
  }
  /* the random cases must exercise what a changed criterion would get wrong */
  CHECK(&fails, !(mirror > 0 && tie > 0), 0, "random cases: %d couplings strong only by the mirror, %d at equality", mirror, tie);
  HandWritten(&fails);
  Corners(&fails);
  printf("# %d checks, %d failed\n", nchecks, fails);
  printf("%s\n", fails ? "FAIL" : "all ok");
  return fails != 0;
}
