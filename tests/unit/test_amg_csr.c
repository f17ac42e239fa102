/* Unit test of the CPU references of the device CSR operations of PCPATCHAMG's coarse levels
   (src/core/amg_csr_ref.c; contract include/patchwork/amg_kernel.h) against dense brute force
   written here. Inputs: random sparse matrices, square and rectangular (tall like P, wide like R),
   rows of 0, 1, a few and several hundred distinct ascending columns, values and x spread over 40
   binary orders of magnitude (so sums cancel), and the empty shapes (no rows, no columns, no
   entries, with NULL or real pointers).
   - Mult, with z NULL, distinct and aliasing y, against a long double sum: row i is n_i products
     summed and z_i added, so |y_i - exact| <= gamma(n_i + 1) (sum_j |m_ij x_j| + |z_i|) with
     gamma(n) = n u / (1 - n u), u = DBL_EPSILON / 2; the long double sum adds its own gamma (with
     the roundoff measured at run time: under valgrind long double is double).
   - Transpose against the transpose read off the dense matrix, exactly (ptr, col, val, sizes),
     and transposed twice against M, exactly.
   - Diagonal against the dense diagonal, exactly (there are no duplicates, so no sum rounds).
   - Symmetrize: (m_ij + m_ji) * 0.5 for every entry, bit for bit, on the symmetric closure of each
     square matrix; 3 and M untouched where a mirror is missing; 1 for a rectangular one.
   - Bad arguments return 1 (and leave T empty); empty arrays may come as NULL.
   - JoinColumns (A, B, shift, nrow, ncol): rows i < A->n are A's row then B's row with shift added to
     its columns (columns and values bit for bit), rows A->n .. nrow-1 empty, ptr from 0, monotone,
     to nnz, columns ascending (A's and B's are, and A's lie below shift); A or B without entries,
     no rows (NULL arrays), extra empty rows and columns.
   - SplitColumns (M, cut) for cut 0, inside, = nrow, = ncol: Lo the entries below cut, Hi the
     others less cut, each in M's order, bit for bit; Lo and Hi merged back row by row give M
     exactly; JoinColumns(Lo, Hi, cut) == M exactly where cut >= nrow (JoinColumns needs
     shift >= A->n; below that it must refuse); Split(Join(A, B, shift), shift) gives A and B back.
   - IntMap: idx[k] = map[idx[k]], on 0, 1, a few and 10^5 indices, maps of 1 .. 3000 entries.
   - Their bad arguments return 1 and leave M (Lo, Hi) empty.
   - Add (A, B, ncol): against a dense accumulation of each row, exactly (an entry in both is one
     rounding a + b, the same expression here): sizes, ptr, columns ascending, values bit for bit,
     entries that cancel to 0 still stored (as +0), B + A == A + B; rows of both with identical,
     disjoint and overlapping patterns, rows only in A or only in B, empty rows, mixed row by row;
     no rows, no columns, ncol above the largest column, rows of several hundred entries, NULL for
     empty arrays; PatchworkCSRAddRow's count mode (values NULL) equals its fill; a hand-made case;
     bad arguments (NULL A, B, M or ptr, B->n != A->n, ncol < 0) return 1 and leave M empty.
   PETSc-free; --quick runs smaller cases (for valgrind). */
#include <float.h>
#include <string.h>
#include <patchwork/amg_kernel.h>
#include "unittest.h"
#include "../roundoff.h"


/* value in [-0.5, 0.5) times 2^[-20, 20] */
static double Spread(uint64_t *rs)
{
  const double v = Rand(rs) - 0.5;

  return ldexp(v, (int)(Rand(rs) * 41) - 20);
}

/* a row length: a fraction 0, 1, a few, a few dozen, and (where long > 0) several hundred;
   at most ncol */
static int RowLength(int ncol, int longrows, uint64_t *rs)
{
  const double r = Rand(rs);
  int          k;

  if (r < 0.12) k = 0;
  else if (r < 0.30) k = 1;
  else if (r < 0.75) k = 2 + (int)(Rand(rs) * 7);
  else if (r < 0.95 || !longrows) k = 9 + (int)(Rand(rs) * 32);
  else k = 200 + (int)(Rand(rs) * 500);
  return k < ncol ? k : ncol;
}

/* A random nrow x ncol matrix (malloc'd like the library's: free with PatchworkCSRMatrixFree),
   distinct ascending columns a row, and its dense copy: at[i*ncol + j] = entry index + 1, 0 if none */
static PatchworkCSRMatrix RandomMatrix(int nrow, int ncol, int longrows, uint64_t *rs, int **at)
{
  PatchworkCSRMatrix M;
  int               *perm = (int *)Malloc(sizeof(int) * (size_t)(ncol ? ncol : 1));
  int               *len  = (int *)Malloc(sizeof(int) * (size_t)(nrow ? nrow : 1));
  char              *pick = (char *)Malloc((size_t)ncol);
  size_t             nnz  = 0;

  for (int j = 0; j < ncol; j++) perm[j] = j;
  for (int i = 0; i < nrow; i++) nnz += (size_t)(len[i] = RowLength(ncol, longrows, rs));
  M.nrow = nrow;
  M.ncol = ncol;
  M.nnz  = (int)nnz;
  M.ptr  = (int *)Malloc(sizeof(int) * ((size_t)nrow + 1));
  M.col  = (int *)Malloc(sizeof(int) * nnz);
  M.val  = (double *)Malloc(sizeof(double) * nnz);
  *at    = (int *)Malloc(sizeof(int) * (size_t)nrow * ncol);
  M.ptr[0] = 0;
  for (int i = 0; i < nrow; i++) {
    int p = M.ptr[i];

    /* a partial shuffle picks len[i] distinct columns; marking them then scanning sorts them */
    for (int t = 0; t < len[i]; t++) {
      const int u = t + (int)(Rand(rs) * (ncol - t)), c = perm[u];

      perm[u] = perm[t];
      perm[t] = c;
      pick[c] = 1;
    }
    if (nrow == ncol && len[i] > 0 && !pick[i] && Rand(rs) < 0.8) { /* most square rows hold their diagonal */
      pick[perm[0]] = 0;
      pick[i]       = 1;
    }
    for (int j = 0; j < ncol; j++)
      if (pick[j]) {
        pick[j]                     = 0;
        M.col[p]                    = j;
        M.val[p]                    = Spread(rs);
        (*at)[(size_t)i * ncol + j] = p + 1;
        p++;
      }
    M.ptr[i + 1] = p;
  }
  free(perm);
  free(len);
  free(pick);
  return M;
}

/* y = z + M x against long double, for z NULL (0), distinct (1), aliasing y (2) */
static void CheckMult(int *fails, const char *label, const PatchworkCSRMatrix *M, uint64_t *rs)
{
  const int    nr = M->nrow, nc = M->ncol;
  const double uld = LongDoubleRoundoff();
  double      *x = (double *)Malloc(sizeof(double) * (size_t)nc), *z = (double *)Malloc(sizeof(double) * (size_t)nr);
  double      *y = (double *)Malloc(sizeof(double) * (size_t)nr);

  for (int j = 0; j < nc; j++) x[j] = Spread(rs);
  for (int i = 0; i < nr; i++) z[i] = Spread(rs);
  for (int mode = 0; mode < 3; mode++) {
    const char *name[] = {"z NULL", "z distinct", "z aliasing y"};
    double      worst = 0, werr = 0, wtol = 0;
    int         ret;

    for (int i = 0; i < nr; i++) y[i] = mode == 2 ? z[i] : 1e300; /* stale values must not leak in */
    ret = PatchworkCSRMultRef(M, x, mode == 0 ? NULL : mode == 1 ? z : y, y);
    if (ret) {
      Check(fails, ret, 0, "mult %s, %s: returned nonzero", label, name[mode]);
      continue;
    }
    for (int i = 0; i < nr; i++) {
      const int   n = M->ptr[i + 1] - M->ptr[i];
      long double s = mode ? z[i] : 0, a = mode ? fabs(z[i]) : 0;
      double      err, tol, r;

      for (int e = M->ptr[i]; e < M->ptr[i + 1]; e++) {
        s += (long double)M->val[e] * x[M->col[e]];
        a += fabsl((long double)M->val[e] * x[M->col[e]]);
      }
      err = (double)fabsl(y[i] - s);
      tol = (Gamma(n + 1, DBL_EPSILON / 2) + Gamma(n + 2, uld)) * (double)a;
      r   = tol > 0 ? err / tol : (err == 0 ? 0 : INFINITY); /* a NaN error is infinitely far off */
      if (ErrMaxTakes(worst, r)) { /* where the worst (or the first NaN) is */
        werr = err;
        wtol = tol;
      }
      worst = ErrMax(worst, r);
    }
    Check(fails, worst, 1, "mult %s, %s: max over rows of |y - exact| / bound (there: %.2e / %.2e)", label, name[mode], werr, wtol);
  }
  free(x);
  free(z);
  free(y);
}

/* MultSingle with float values equals Mult with those values promoted to double, bit for bit (the
   same products in the same order) */
static void CheckMultSingle(int *fails, const char *label, const PatchworkCSRMatrix *M, uint64_t *rs)
{
  const int          nr = M->nrow, nc = M->ncol, nnz = M->nnz;
  float             *fval = (float *)Malloc(sizeof(float) * (size_t)nnz);
  double            *dval = (double *)Malloc(sizeof(double) * (size_t)nnz), *x = (double *)Malloc(sizeof(double) * (size_t)nc);
  double            *z = (double *)Malloc(sizeof(double) * (size_t)nr), *y1 = (double *)Malloc(sizeof(double) * (size_t)nr), *y2 = (double *)Malloc(sizeof(double) * (size_t)nr);
  PatchworkCSRMatrix D = *M;
  int                ret, same = 1;

  for (int e = 0; e < nnz; e++) dval[e] = fval[e] = (float)M->val[e];
  for (int j = 0; j < nc; j++) x[j] = Spread(rs);
  for (int i = 0; i < nr; i++) z[i] = Spread(rs);
  D.val = dval;
  ret   = PatchworkCSRMultRef(&D, x, z, y1) || PatchworkCSRMultSingleRef(M, fval, x, z, y2);
  for (int i = 0; i < nr && !ret; i++) same = same && y1[i] == y2[i];
  Check(fails, ret || !same, 0, "mult single %s: equals mult with the float values, bit for bit", label);
  free(fval);
  free(dval);
  free(x);
  free(z);
  free(y1);
  free(y2);
}

static int SameMatrix(const PatchworkCSRMatrix *A, const PatchworkCSRMatrix *B)
{
  if (A->nrow != B->nrow || A->ncol != B->ncol || A->nnz != B->nnz) return 0;
  if (memcmp(A->ptr, B->ptr, sizeof(int) * ((size_t)A->nrow + 1))) return 0;
  if (A->nnz && (memcmp(A->col, B->col, sizeof(int) * (size_t)A->nnz) || memcmp(A->val, B->val, sizeof(double) * (size_t)A->nnz))) return 0;
  return 1;
}

/* T against the dense transpose (rows of T: the rows i of M holding column j, ascending), exactly;
   then (M^T)^T against M, exactly */
static void CheckTranspose(int *fails, const char *label, const PatchworkCSRMatrix *M, const int *at)
{
  PatchworkCSRMatrix T, TT;
  int                ok, ret = PatchworkCSRTransposeRef(M, &T), p = 0;

  if (ret) {
    Check(fails, ret, 0, "transpose %s: returned nonzero", label);
    return;
  }
  ok = T.nrow == M->ncol && T.ncol == M->nrow && T.nnz == M->nnz && T.ptr && T.ptr[0] == 0;
  for (int j = 0; ok && j < M->ncol; j++) {
    for (int i = 0; ok && i < M->nrow; i++) {
      const int e = at[(size_t)i * M->ncol + j];

      if (!e) continue;
      ok = p < T.ptr[j + 1] && T.col[p] == i && memcmp(&T.val[p], &M->val[e - 1], sizeof(double)) == 0;
      p++;
    }
    ok = ok && p == T.ptr[j + 1];
  }
  Check(fails, !ok, 0, "transpose %s: %d x %d, %d entries, equal to the dense transpose", label, T.nrow, T.ncol, T.nnz);
  ret = PatchworkCSRTransposeRef(&T, &TT);
  Check(fails, ret || !SameMatrix(&TT, M), 0, "transpose %s: twice gives M back, exactly", label);
  PatchworkCSRMatrixFree(&T);
  PatchworkCSRMatrixFree(&TT);
}

static void CheckDiagonal(int *fails, const char *label, const PatchworkCSRMatrix *M, const int *at)
{
  double *d = (double *)Malloc(sizeof(double) * (size_t)M->nrow);
  int     ret, bad = 0;

  for (int i = 0; i < M->nrow; i++) d[i] = 1e300;
  ret = PatchworkCSRDiagonalRef(M, d);
  if (M->nrow != M->ncol) Check(fails, ret != 1, 0, "diagonal %s: a rectangular matrix is refused", label);
  else {
    int present = 0;

    for (int i = 0; i < M->nrow; i++) {
      const int    e    = at[(size_t)i * M->ncol + i];
      const double want = e ? M->val[e - 1] : 0.0;

      present += e != 0;
      bad += memcmp(&d[i], &want, sizeof(double)) != 0;
    }
    Check(fails, ret || bad, 0, "diagonal %s: equal to the dense diagonal (%d of %d rows hold one; %d differ)", label, present, M->nrow, bad);
  }
  free(d);
}

/* Symmetrize on M (expected 3 where a mirror is missing, M left alone; 1 when rectangular) and on
   M's symmetric closure (the missing mirrors added with random values): there every entry must
   become (m_ij + m_ji) * 0.5 of the input, bit for bit (one rounding, the same on both sides) */
static void SymmetrizeOne(int *fails, const char *label, const PatchworkCSRMatrix *M, const int *at)
{
  const int          n   = M->nrow;
  PatchworkCSRMatrix C   = *M;
  double            *val = (double *)Malloc(sizeof(double) * (size_t)(M->nnz ? M->nnz : 1));
  int                sym = 1, ret, bad = 0;

  if (M->nnz) memcpy(val, M->val, sizeof(double) * (size_t)M->nnz);
  C.val = val;
  ret   = PatchworkCSRSymmetrizeRef(&C);
  if (M->nrow != M->ncol) {
    Check(fails, ret != 1, 0, "symmetrize %s: a rectangular matrix is refused", label);
    free(val);
    return;
  }
  for (int i = 0; i < n; i++)
    for (int e = M->ptr[i]; e < M->ptr[i + 1]; e++) {
      const int    f    = at[(size_t)M->col[e] * n + i] - 1;
      const double want = f < 0 ? M->val[e] : (M->val[e] + M->val[f]) * 0.5;

      if (f < 0) sym = 0;
      bad += memcmp(&val[e], f < 0 || !sym ? &M->val[e] : &want, sizeof(double)) != 0;
    }
  if (!sym) { /* nothing may have changed */
    bad = M->nnz ? memcmp(val, M->val, sizeof(double) * (size_t)M->nnz) != 0 : 0;
    Check(fails, ret != 3 || bad, 0, "symmetrize %s: a pattern that is not symmetric gives 3 and leaves M alone", label);
  } else Check(fails, ret != 0 || bad, 0, "symmetrize %s: every entry (m_ij + m_ji) * 0.5, bit for bit (%d differ)", label, bad);
  free(val);
}

static void CheckSymmetrize(int *fails, const char *label, const PatchworkCSRMatrix *M, const int *at, uint64_t *rs)
{
  const int          n = M->nrow;
  PatchworkCSRMatrix S;
  int               *sat;
  char               slabel[128];

  SymmetrizeOne(fails, label, M, at);
  if (M->nrow != M->ncol) return;
  /* the closure: (i, j) where M has (i, j) or (j, i) */
  S.nrow = S.ncol = n;
  S.nnz  = 0;
  S.ptr  = (int *)Malloc(sizeof(int) * ((size_t)n + 1));
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) S.nnz += at[(size_t)i * n + j] || at[(size_t)j * n + i];
  S.col = (int *)Malloc(sizeof(int) * (size_t)(S.nnz ? S.nnz : 1));
  S.val = (double *)Malloc(sizeof(double) * (size_t)(S.nnz ? S.nnz : 1));
  sat   = (int *)Malloc(sizeof(int) * (size_t)n * n);
  S.ptr[0] = 0;
  for (int i = 0, p = 0; i < n; i++) {
    for (int j = 0; j < n; j++) {
      const int e = at[(size_t)i * n + j];

      sat[(size_t)i * n + j] = 0;
      if (!e && !at[(size_t)j * n + i]) continue;
      S.col[p]               = j;
      S.val[p]               = e ? M->val[e - 1] : Spread(rs);
      sat[(size_t)i * n + j] = ++p;
    }
    S.ptr[i + 1] = p;
  }
  snprintf(slabel, sizeof(slabel), "%s, closed", label);
  SymmetrizeOne(fails, slabel, &S, sat);
  PatchworkCSRMatrixFree(&S);
  free(sat);
}

static void Case(int *fails, int nrow, int ncol, int longrows, uint64_t *rs)
{
  char               label[96];
  int               *at;
  PatchworkCSRMatrix M = RandomMatrix(nrow, ncol, longrows, rs, &at);
  int                maxrow = 0;

  for (int i = 0; i < nrow; i++) maxrow = M.ptr[i + 1] - M.ptr[i] > maxrow ? M.ptr[i + 1] - M.ptr[i] : maxrow;
  snprintf(label, sizeof(label), "%dx%d nnz %d (rows <= %d)", nrow, ncol, M.nnz, maxrow);
  CheckMult(fails, label, &M, rs);
  CheckMultSingle(fails, label, &M, rs);
  CheckTranspose(fails, label, &M, at);
  CheckDiagonal(fails, label, &M, at);
  CheckSymmetrize(fails, label, &M, at, rs);
  PatchworkCSRMatrixFree(&M);
  free(at);
}

/* No rows, no columns, no entries: valid, with NULL for every empty array or with real pointers */
static void Empty(int *fails)
{
  const int shapes[][2] = {{0, 0}, {0, 5}, {5, 0}, {6, 6}, {4, 9}};
  int       ptr0[10]    = {0};
  double    x[9], z[6], y[6], d[6];

  for (int s = 0; s < 5; s++)
    for (int nul = 0; nul < 2; nul++) {
      const int          nr = shapes[s][0], nc = shapes[s][1];
      PatchworkCSRMatrix M = {nr, nc, 0, nr == 0 && nul ? NULL : ptr0, NULL, NULL}, T, TT;
      int                ret, ok = 1;

      for (int i = 0; i < 6; i++) {
        z[i] = i + 1;
        y[i] = 1e300;
      }
      for (int j = 0; j < 9; j++) x[j] = 1;
      ret = PatchworkCSRMultRef(&M, nc == 0 && nul ? NULL : x, z, nr == 0 && nul ? NULL : y);
      for (int i = 0; i < nr; i++) ok = ok && y[i] == z[i];
      ret = ret || PatchworkCSRMultRef(&M, nc == 0 && nul ? NULL : x, NULL, nr == 0 && nul ? NULL : y);
      for (int i = 0; i < nr; i++) ok = ok && y[i] == 0;
      Check(fails, ret || !ok, 0, "mult %dx%d without entries%s: y = z, y = 0", nr, nc, nul ? ", NULL arrays" : "");
      ret = PatchworkCSRTransposeRef(&M, &T);
      ok  = !ret && T.nrow == nc && T.ncol == nr && T.nnz == 0 && T.ptr;
      for (int j = 0; ok && j <= nc; j++) ok = T.ptr[j] == 0;
      ret = ok ? PatchworkCSRTransposeRef(&T, &TT) : 1;
      ok  = ok && !ret && TT.nrow == nr && TT.ncol == nc && TT.nnz == 0;
      for (int i = 0; ok && i <= nr; i++) ok = TT.ptr[i] == 0;
      Check(fails, !ok, 0, "transpose %dx%d without entries%s: %d x %d, ptr 0, and back", nr, nc, nul ? ", NULL arrays" : "", nc, nr);
      if (!ret) PatchworkCSRMatrixFree(&TT);
      PatchworkCSRMatrixFree(&T);
      if (nr == nc) {
        for (int i = 0; i < 6; i++) d[i] = 1e300;
        ret = PatchworkCSRDiagonalRef(&M, nr == 0 && nul ? NULL : d);
        ok  = !ret;
        for (int i = 0; i < nr; i++) ok = ok && d[i] == 0;
        Check(fails, !ok, 0, "diagonal %dx%d without entries%s: 0", nr, nc, nul ? ", NULL arrays" : "");
      }
    }
}

/* Bad arguments: 1 from every function, T left empty */
static void BadArguments(int *fails)
{
  uint64_t           rs = 7;
  int               *at;
  PatchworkCSRMatrix G = RandomMatrix(12, 12, 0, &rs, &at), M, T;
  double             x[12] = {0}, y[12], d[12];
  struct {
    const char *name;
    int         field, value; /* field: 0 nrow, 1 ncol, 2 nnz, 3 ptr, 4 col, 5 val */
  } spoil[] = {
    {"negative rows", 0, -1}, {"negative columns", 1, -1}, {"negative entries", 2, -1},
    {"NULL ptr", 3, 0},       {"NULL col", 4, 0},          {"NULL val", 5, 0},
  };

  for (int c = 0; c < 6; c++) {
    M = G;
    switch (spoil[c].field) {
    case 0: M.nrow = spoil[c].value; break;
    case 1: M.ncol = spoil[c].value; break;
    case 2: M.nnz = spoil[c].value; break;
    case 3: M.ptr = NULL; break;
    case 4: M.col = NULL; break;
    default: M.val = NULL;
    }
    Check(fails, PatchworkCSRMultRef(&M, x, NULL, y) != 1, 0, "mult: %s is refused", spoil[c].name);
    T.ptr = (int *)&T; /* junk that must be cleared */
    Check(fails, PatchworkCSRTransposeRef(&M, &T) != 1 || T.ptr || T.nnz, 0, "transpose: %s is refused, T empty", spoil[c].name);
    Check(fails, PatchworkCSRDiagonalRef(&M, d) != 1, 0, "diagonal: %s is refused", spoil[c].name);
  }
  Check(fails, PatchworkCSRMultRef(NULL, x, NULL, y) != 1, 0, "mult: NULL M is refused");
  Check(fails, PatchworkCSRMultRef(&G, NULL, NULL, y) != 1, 0, "mult: NULL x is refused");
  Check(fails, PatchworkCSRMultSingleRef(&G, NULL, x, NULL, y) != 1, 0, "mult single: NULL values are refused");
  Check(fails, PatchworkCSRMultRef(&G, x, NULL, NULL) != 1, 0, "mult: NULL y is refused");
  Check(fails, PatchworkCSRTransposeRef(NULL, &T) != 1 || T.ptr, 0, "transpose: NULL M is refused");
  Check(fails, PatchworkCSRTransposeRef(&G, NULL) != 1, 0, "transpose: NULL T is refused");
  Check(fails, PatchworkCSRDiagonalRef(NULL, d) != 1, 0, "diagonal: NULL M is refused");
  Check(fails, PatchworkCSRSymmetrizeRef(NULL) != 1, 0, "symmetrize: NULL M is refused");
  Check(fails, PatchworkCSRDiagonalRef(&G, NULL) != 1, 0, "diagonal: NULL d is refused");
  M      = G;
  M.ncol = 13;
  Check(fails, PatchworkCSRDiagonalRef(&M, d) != 1, 0, "diagonal: 12 x 13 is refused");
  /* Transpose writes through the columns: it checks the structure */
  {
    const int save = G.col[G.nnz - 1];

    G.col[G.nnz - 1] = G.ncol;
    Check(fails, PatchworkCSRTransposeRef(&G, &T) != 1 || T.ptr, 0, "transpose: a column = ncol is refused");
    G.col[G.nnz - 1] = -1;
    Check(fails, PatchworkCSRTransposeRef(&G, &T) != 1 || T.ptr, 0, "transpose: a column < 0 is refused");
    G.col[G.nnz - 1] = save;
  }
  M     = G;
  M.nnz = G.nnz - 1;
  Check(fails, PatchworkCSRTransposeRef(&M, &T) != 1 || T.ptr, 0, "transpose: nnz != ptr[nrow] is refused");
  {
    int *ptr = (int *)Malloc(sizeof(int) * 13);

    memcpy(ptr, G.ptr, sizeof(int) * 13);
    ptr[6] = ptr[7] + 1; /* row 6 ends before it starts */
    M     = G;
    M.ptr = ptr;
    Check(fails, PatchworkCSRTransposeRef(&M, &T) != 1 || T.ptr, 0, "transpose: decreasing row pointers are refused");
    free(ptr);
  }
  Check(fails, PatchworkCSRTransposeRef(&G, &T) != 0, 0, "transpose: the unspoilt matrix is accepted");
  PatchworkCSRMatrixFree(&T);
  PatchworkCSRMatrixFree(&G);
  PatchworkCSRMatrixFree(NULL);
  free(at);
}

/* ---------------------------------------------------------------------------------------------
   JoinColumns, SplitColumns, IntMap: no arithmetic, so every check is exact */

static PatchworkCSR CSRView(const PatchworkCSRMatrix *M)
{
  PatchworkCSR v;

  v.n   = M->nrow;
  v.ptr = M->ptr;
  v.col = M->col;
  v.val = M->val;
  return v;
}

static int IsEmptyMatrix(const PatchworkCSRMatrix *M)
{
  return M->nrow == 0 && M->ncol == 0 && M->nnz == 0 && !M->ptr && !M->col && !M->val;
}

/* M = Join(A, B, shift, nrow, ncol) against its definition; returns 1 when it holds */
static int JoinHolds(const PatchworkCSRMatrix *A, const PatchworkCSRMatrix *B, int shift, int nrow, int ncol, const PatchworkCSRMatrix *M)
{
  const int n = A->nrow;

  if (M->nrow != nrow || M->ncol != ncol || M->nnz != A->nnz + B->nnz || !M->ptr || M->ptr[0] != 0 || M->ptr[nrow] != M->nnz) return 0;
  for (int i = 0; i < nrow; i++) {
    const int la = i < n ? A->ptr[i + 1] - A->ptr[i] : 0, lb = i < n ? B->ptr[i + 1] - B->ptr[i] : 0, p = M->ptr[i];

    if (M->ptr[i + 1] - p != la + lb) return 0; /* also: monotone, rows >= n empty */
    for (int e = 0; e < la; e++)
      if (M->col[p + e] != A->col[A->ptr[i] + e] || memcmp(&M->val[p + e], &A->val[A->ptr[i] + e], sizeof(double))) return 0;
    for (int e = 0; e < lb; e++)
      if (M->col[p + la + e] != B->col[B->ptr[i] + e] + shift || memcmp(&M->val[p + la + e], &B->val[B->ptr[i] + e], sizeof(double))) return 0;
    for (int q = p; q < M->ptr[i + 1]; q++)
      if (M->col[q] < 0 || M->col[q] >= ncol || (q > p && M->col[q] <= M->col[q - 1])) return 0; /* ascending, in range */
  }
  return 1;
}

/* Join of an n x ncola A (ncola <= shift) and an n x ncolb B, into nrow >= n rows and ncol >= shift + ncolb
   columns; then Split at shift must give A and B back (ncol: shift and ncol - shift) */
static void JoinCase(int *fails, int n, int ncola, int shift, int ncolb, int nrow, int ncol, int longrows, int nul, uint64_t *rs)
{
  int               *ata, *atb;
  PatchworkCSRMatrix A = RandomMatrix(n, ncola, longrows, rs, &ata), B = RandomMatrix(n, ncolb, longrows, rs, &atb), M, Lo, Hi;
  PatchworkCSR       a = CSRView(&A), b = CSRView(&B);
  int                ret, ok;

  if (nul) { /* the empty arrays as NULL */
    if (n == 0) a.ptr = b.ptr = NULL;
    if (A.nnz == 0) a.col = NULL, a.val = NULL;
    if (B.nnz == 0) b.col = NULL, b.val = NULL;
  }
  memset(&M, 0xA5, sizeof(M)); /* junk that must be replaced */
  ret = PatchworkCSRJoinColumnsRef(&a, &b, shift, nrow, ncol, &M);
  ok  = !ret && JoinHolds(&A, &B, shift, nrow, ncol, &M);
  Check(fails, !ok, 0, "join %d rows (%d + %d entries), shift %d, into %d x %d%s: A's row, then B's shifted; the rest empty", n, A.nnz, B.nnz, shift, nrow, ncol, nul ? ", NULL arrays" : "");
  if (ok && nrow == n) {
    ret = PatchworkCSRSplitColumnsRef(&M, shift, &Lo, &Hi);
    B.ncol = ncol - shift; /* Hi's column count */
    A.ncol = shift;
    Check(fails, ret || !SameMatrix(&Lo, &A) || !SameMatrix(&Hi, &B), 0, "split(join(A, B, %d), %d) gives A and B back (%d x %d, %d x %d)", shift, shift, Lo.nrow, Lo.ncol, Hi.nrow, Hi.ncol);
    A.ncol = ncola;
    B.ncol = ncolb;
    if (!ret) {
      PatchworkCSRMatrixFree(&Lo);
      PatchworkCSRMatrixFree(&Hi);
    }
  }
  if (!ret) PatchworkCSRMatrixFree(&M);
  PatchworkCSRMatrixFree(&A);
  PatchworkCSRMatrixFree(&B);
  free(ata);
  free(atb);
}

/* Split M at cut: Lo and Hi against their definition, merged back, joined back */
static void CheckSplit(int *fails, const char *label, const PatchworkCSRMatrix *M, int cut)
{
  PatchworkCSRMatrix Lo, Hi, J;
  int                ret, ok;

  memset(&Lo, 0xA5, sizeof(Lo));
  memset(&Hi, 0xA5, sizeof(Hi));
  ret = PatchworkCSRSplitColumnsRef(M, cut, &Lo, &Hi);
  if (ret) {
    Check(fails, ret, 0, "split %s at %d: returned nonzero", label, cut);
    return;
  }
  ok = Lo.nrow == M->nrow && Hi.nrow == M->nrow && Lo.ncol == cut && Hi.ncol == M->ncol - cut && Lo.nnz + Hi.nnz == M->nnz && Lo.ptr && Hi.ptr &&
       Lo.ptr[0] == 0 && Hi.ptr[0] == 0 && Lo.ptr[M->nrow] == Lo.nnz && Hi.ptr[M->nrow] == Hi.nnz;
  /* merge: M's entries in order, each the next of Lo (column < cut) or of Hi (column + cut) */
  for (int i = 0; ok && i < M->nrow; i++) {
    int l = Lo.ptr[i], h = Hi.ptr[i];

    for (int e = M->ptr[i]; ok && e < M->ptr[i + 1]; e++) {
      if (M->col[e] < cut) ok = l < Lo.ptr[i + 1] && Lo.col[l] == M->col[e] && !memcmp(&Lo.val[l], &M->val[e], sizeof(double)) && ++l;
      else ok = h < Hi.ptr[i + 1] && Hi.col[h] + cut == M->col[e] && !memcmp(&Hi.val[h], &M->val[e], sizeof(double)) && ++h;
    }
    ok = ok && l == Lo.ptr[i + 1] && h == Hi.ptr[i + 1];
  }
  Check(fails, !ok, 0, "split %s at %d: Lo %d x %d (%d entries) and Hi %d x %d (%d) merge back into M exactly", label, cut, Lo.nrow, Lo.ncol, Lo.nnz, Hi.nrow, Hi.ncol, Hi.nnz);
  if (ok) {
    const PatchworkCSR lo = CSRView(&Lo), hi = CSRView(&Hi);

    ret = PatchworkCSRJoinColumnsRef(&lo, &hi, cut, M->nrow, M->ncol, &J);
    if (cut >= M->nrow) {
      /* M without rows may come with a NULL ptr: then J's must be {0} */
      const int same = M->ptr ? SameMatrix(&J, M) : !ret && J.nrow == 0 && J.ncol == M->ncol && J.nnz == 0 && J.ptr && J.ptr[0] == 0;

      Check(fails, ret || !same, 0, "split %s at %d, joined again: M exactly", label, cut);
      if (!ret) PatchworkCSRMatrixFree(&J);
    } else Check(fails, ret != 1 || !IsEmptyMatrix(&J), 0, "split %s at %d, joined again: refused (shift %d < %d rows), M empty", label, cut, cut, M->nrow);
  }
  PatchworkCSRMatrixFree(&Lo);
  PatchworkCSRMatrixFree(&Hi);
}

static void IntMapCase(int *fails, int n, int nmap, int nul, uint64_t *rs)
{
  int *map = (int *)Malloc(sizeof(int) * nmap), *idx = (int *)Malloc(sizeof(int) * n), *old = (int *)Malloc(sizeof(int) * n);
  int  ret, bad = 0;

  for (int j = 0; j < nmap; j++) map[j] = (int)(Rand(rs) * 4e9 - 2e9); /* any int, negative too */
  for (int k = 0; k < n; k++) old[k] = idx[k] = (int)(Rand(rs) * nmap);
  ret = PatchworkIntMapRef(n, nul && nmap == 0 ? NULL : map, nmap, nul && n == 0 ? NULL : idx);
  for (int k = 0; k < n; k++) bad += idx[k] != map[old[k]];
  Check(fails, ret || bad, 0, "int map %d indices into %d%s: idx[k] = map[idx[k]] (%d differ)", n, nmap, nul ? ", NULL arrays" : "", bad);
  free(map);
  free(idx);
  free(old);
}

static void JoinSplitMapCases(int *fails, int quick, uint64_t *rs)
{
  /* n, A's columns, shift, B's columns, extra rows, extra columns, long rows */
  const int joins[][7] = {
    {0, 0, 0, 0, 0, 0, 0},        {0, 0, 3, 4, 0, 0, 0},      {0, 0, 0, 0, 5, 2, 0},     {1, 1, 1, 1, 0, 0, 0},
    {1, 1, 5, 0, 2, 0, 0},        {5, 5, 5, 0, 0, 0, 0},      {5, 0, 5, 7, 0, 0, 0},     {7, 7, 7, 7, 3, 4, 0},
    {60, 60, 60, 40, 0, 0, 0},    {60, 40, 75, 200, 10, 5, 0}, {300, 300, 300, 900, 0, 0, 1}, {300, 300, 400, 50, 0, 0, 1},
    {2000, 2000, 2000, 3000, 0, 0, 1}, {2000, 1000, 2500, 100, 100, 7, 1},
  };

  for (int c = 0; c < 14; c++) {
    const int *j = joins[c];

    if (quick && j[0] > 1000) continue;
    for (int nul = 0; nul < 2; nul++) JoinCase(fails, j[0], j[1], j[2], j[3], j[0] + j[4], j[2] + j[3] + j[5], j[6], nul, rs);
  }
  { /* A or B without entries */
    int               *at;
    PatchworkCSRMatrix E = RandomMatrix(40, 0, 0, rs, &at), F;

    free(at);
    F = RandomMatrix(40, 30, 0, rs, &at);
    free(at);
    for (int side = 0; side < 2; side++) {
      const PatchworkCSR a = CSRView(side ? &F : &E), b = CSRView(side ? &E : &F);
      PatchworkCSRMatrix M, Ea = E, Fa = F;
      int                ret;

      ret = PatchworkCSRJoinColumnsRef(&a, &b, 40, 45, 80, &M);
      Check(fails, ret || !JoinHolds(side ? &Fa : &Ea, side ? &Ea : &Fa, 40, 45, 80, &M), 0, "join 40 rows, %s without entries", side ? "B" : "A");
      if (!ret) PatchworkCSRMatrixFree(&M);
    }
    PatchworkCSRMatrixFree(&E);
    PatchworkCSRMatrixFree(&F);
  }
  { /* Split: the shapes of Case, cut at 0, a third, nrow (where <= ncol), ncol; no rows; no entries */
    const int shapes[][3] = {{0, 0, 0}, {0, 9, 0}, {6, 0, 0}, {1, 1, 0}, {3, 2, 0}, {7, 7, 0}, {60, 60, 0}, {1, 800, 1}, {40, 700, 1}, {700, 40, 0}, {500, 500, 1}, {120, 1500, 1}, {2000, 3000, 1}};

    for (int c = 0; c < 13; c++) {
      const int          nr = shapes[c][0], nc = shapes[c][1];
      int               *at;
      PatchworkCSRMatrix M;
      char               label[64];
      const int          cuts[] = {0, nc / 3, nr <= nc ? nr : nc, nc};

      if (quick && (size_t)nr * nc > 400000) continue;
      M = RandomMatrix(nr, nc, shapes[c][2], rs, &at);
      snprintf(label, sizeof(label), "%dx%d nnz %d", nr, nc, M.nnz);
      for (int k = 0; k < 4; k++) CheckSplit(fails, label, &M, cuts[k]);
      if (nr == 0) { /* no rows: ptr may be NULL */
        PatchworkCSRMatrix N = M;

        N.ptr = NULL;
        N.col = NULL;
        N.val = NULL;
        snprintf(label, sizeof(label), "%dx%d, NULL arrays", nr, nc);
        CheckSplit(fails, label, &N, nc / 2);
      }
      PatchworkCSRMatrixFree(&M);
      free(at);
    }
  }
  {
    const int maps[][2] = {{0, 0}, {0, 5}, {1, 1}, {7, 3}, {1000, 3000}, {100000, 1}, {100000, 2000}};

    for (int c = 0; c < 7; c++)
      for (int nul = 0; nul < 2; nul++) IntMapCase(fails, maps[c][0], maps[c][1], nul, rs);
  }
}

/* Split must refuse M at cut with 1 and leave the given ones of Lo and Hi (set to junk first) empty */
static void SplitRefuses(int *fails, const PatchworkCSRMatrix *M, int cut, int withlo, int withhi, const char *what)
{
  PatchworkCSRMatrix Lo, Hi;
  int                r;

  memset(&Lo, 0xA5, sizeof(Lo));
  memset(&Hi, 0xA5, sizeof(Hi));
  r = PatchworkCSRSplitColumnsRef(M, cut, withlo ? &Lo : NULL, withhi ? &Hi : NULL);
  Check(fails, r != 1 || (withlo && !IsEmptyMatrix(&Lo)) || (withhi && !IsEmptyMatrix(&Hi)), 0, "split: %s is refused, Lo and Hi empty", what);
  if (r == 0) {
    PatchworkCSRMatrixFree(&Lo);
    PatchworkCSRMatrixFree(&Hi);
  }
}

/* Bad arguments of JoinColumns, SplitColumns and IntMap: 1, M (Lo, Hi) empty. (A NULL ptr of A or B
   with rows is not tried: PatchworkCSRJoinColumnsRef reads A->ptr[n] unchecked and would crash.) */
static void JoinSplitMapBadArguments(int *fails)
{
  uint64_t           rs = 31;
  int               *at, *bt;
  PatchworkCSRMatrix A = RandomMatrix(10, 10, 0, &rs, &at), B = RandomMatrix(10, 6, 0, &rs, &bt), M, Lo, Hi, S;
  PatchworkCSR       a = CSRView(&A), b = CSRView(&B), c;
  int                map[4] = {3, 2, 1, 0}, idx[5] = {0, 1, 2, 3, 0};

#define JOIN_REFUSES(A_, B_, shift_, nrow_, ncol_, what) \
  do { \
    int r_; \
    memset(&M, 0xA5, sizeof(M)); \
    r_ = PatchworkCSRJoinColumnsRef(A_, B_, shift_, nrow_, ncol_, &M); \
    Check(fails, r_ != 1 || !IsEmptyMatrix(&M), 0, "join: %s is refused, M empty", what); \
    if (r_ == 0) PatchworkCSRMatrixFree(&M); \
  } while (0)
  JOIN_REFUSES(NULL, &b, 10, 10, 16, "NULL A");
  JOIN_REFUSES(&a, NULL, 10, 10, 16, "NULL B");
  Check(fails, PatchworkCSRJoinColumnsRef(&a, &b, 10, 10, 16, NULL) != 1, 0, "join: NULL M is refused");
  c   = a;
  c.n = -1;
  JOIN_REFUSES(&c, &b, 10, 10, 16, "A->n < 0");
  c   = b;
  c.n = 9;
  JOIN_REFUSES(&a, &c, 10, 10, 16, "B->n != A->n");
  JOIN_REFUSES(&a, &b, 9, 10, 16, "shift < A->n");
  JOIN_REFUSES(&a, &b, 10, 9, 16, "nrow < A->n");
  JOIN_REFUSES(&a, &b, 10, 10, 9, "ncol < shift");
#undef JOIN_REFUSES
  Check(fails, PatchworkCSRJoinColumnsRef(&a, &b, 10, 10, 16, &M) != 0, 0, "join: the unspoilt arguments are accepted");
  PatchworkCSRMatrixFree(&M);

  SplitRefuses(fails, NULL, 3, 1, 1, "NULL M");
  SplitRefuses(fails, &A, 3, 0, 1, "NULL Lo");
  SplitRefuses(fails, &A, 3, 1, 0, "NULL Hi");
  SplitRefuses(fails, &A, -1, 1, 1, "cut < 0");
  SplitRefuses(fails, &A, 11, 1, 1, "cut > ncol");
  S      = A;
  S.nrow = -1;
  SplitRefuses(fails, &S, 3, 1, 1, "nrow < 0");
  S      = A;
  S.ncol = -1;
  SplitRefuses(fails, &S, 0, 1, 1, "ncol < 0");
  S     = A;
  S.nnz = -1;
  SplitRefuses(fails, &S, 3, 1, 1, "nnz < 0");
  S     = A;
  S.ptr = NULL;
  SplitRefuses(fails, &S, 3, 1, 1, "NULL ptr");
  S     = A;
  S.col = NULL;
  SplitRefuses(fails, &S, 3, 1, 1, "NULL col");
  S     = A;
  S.val = NULL;
  SplitRefuses(fails, &S, 3, 1, 1, "NULL val");
  Check(fails, PatchworkCSRSplitColumnsRef(&A, 10, &Lo, &Hi) != 0, 0, "split: the unspoilt arguments are accepted (cut = ncol)");
  PatchworkCSRMatrixFree(&Lo);
  PatchworkCSRMatrixFree(&Hi);

  Check(fails, PatchworkIntMapRef(-1, map, 4, idx) != 1, 0, "int map: n < 0 is refused");
  Check(fails, PatchworkIntMapRef(5, map, -1, idx) != 1, 0, "int map: nmap < 0 is refused");
  Check(fails, PatchworkIntMapRef(5, NULL, 4, idx) != 1, 0, "int map: NULL map is refused");
  Check(fails, PatchworkIntMapRef(5, map, 4, NULL) != 1, 0, "int map: NULL idx is refused");
  Check(fails, PatchworkIntMapRef(5, map, 0, idx) != 1, 0, "int map: an empty map is refused");
  idx[4] = 4;
  Check(fails, PatchworkIntMapRef(5, map, 4, idx) != 1, 0, "int map: an index = nmap is refused");
  idx[4] = -1;
  Check(fails, PatchworkIntMapRef(5, map, 4, idx) != 1, 0, "int map: an index < 0 is refused");
  idx[4] = 0;
  Check(fails, PatchworkIntMapRef(5, map, 4, idx) != 0 || idx[0] != 3 || idx[3] != 0 || idx[4] != 3, 0, "int map: the unspoilt arguments are accepted");
  PatchworkCSRMatrixFree(&A);
  PatchworkCSRMatrixFree(&B);
  free(at);
  free(bt);
}

/* ---------------------------------------------------------------------------------------------
   Add: M = A + B against a dense row accumulation written here. Exact: an entry in both is the one
   rounding a + b, the same expression here, so every value is compared bit for bit. */

enum { ADD_MIXED, ADD_IDENTICAL, ADD_DISJOINT, ADD_OVERLAP, ADD_ONLY_A, ADD_ONLY_B, ADD_EMPTY, ADD_MODES };
static const char *add_mode[ADD_MODES] = {"mixed rows", "identical patterns", "disjoint patterns", "overlapping patterns", "rows only in A", "rows only in B", "no entries"};

/* k distinct columns of [0, ncol) get bit v in mark: a partial shuffle of perm (a permutation of
   0..ncol-1, and it stays one) */
static void MarkColumns(char *mark, char v, int k, int ncol, int *perm, uint64_t *rs)
{
  for (int t = 0; t < k && t < ncol; t++) {
    const int u = t + (int)(Rand(rs) * (ncol - t)), c = perm[u];

    perm[u]  = perm[t];
    perm[t]  = c;
    mark[c] |= v;
  }
}

static void Append(PatchworkCSRMatrix *M, int *cap, int j, double v)
{
  if (M->nnz == *cap) {
    *cap   = 2 * *cap + 16;
    M->col = (int *)realloc(M->col, sizeof(int) * (size_t)*cap);
    M->val = (double *)realloc(M->val, sizeof(double) * (size_t)*cap);
    if (!M->col || !M->val) {
      fprintf(stderr, "FAIL out of memory\n");
      exit(1);
    }
  }
  M->col[M->nnz]   = j;
  M->val[M->nnz++] = v;
}

/* A and B, n x ncol, each row's patterns as mode says (ADD_MIXED: each row one of the others at
   random): identical, disjoint, overlapping (B takes about half of A's columns and some of its own),
   only in A, only in B, empty; row lengths from RowLength. Where both hold a column, B's value is -a
   a quarter of the time (the sum cancels to exactly 0: *cancel counts them), else a Spread() of its own. */
static void AddPair(int n, int ncol, int mode, int longrows, uint64_t *rs, PatchworkCSRMatrix *A, PatchworkCSRMatrix *B, int *cancel)
{
  char *mark = (char *)Malloc((size_t)ncol);
  int  *perm = (int *)Malloc(sizeof(int) * (size_t)(ncol ? ncol : 1));
  int   capa = 0, capb = 0;

  for (int j = 0; j < ncol; j++) perm[j] = j;
  memset(A, 0, sizeof(*A));
  memset(B, 0, sizeof(*B));
  A->nrow = B->nrow = n;
  A->ncol = B->ncol = ncol;
  A->ptr            = (int *)Malloc(sizeof(int) * ((size_t)n + 1));
  B->ptr            = (int *)Malloc(sizeof(int) * ((size_t)n + 1));
  *cancel           = 0;
  for (int i = 0; i < n; i++) {
    const int m = mode == ADD_MIXED ? 1 + (int)(Rand(rs) * (ADD_MODES - 1)) : mode;
    const int la = RowLength(ncol, longrows, rs), lb = RowLength(ncol, longrows, rs);

    switch (m) {
    case ADD_IDENTICAL: MarkColumns(mark, 3, la, ncol, perm, rs); break;
    case ADD_DISJOINT: /* la + lb columns, each A's or B's */
      MarkColumns(mark, 4, la + lb, ncol, perm, rs);
      for (int j = 0; j < ncol; j++)
        if (mark[j]) mark[j] = Rand(rs) < 0.5 ? 1 : 2;
      break;
    case ADD_OVERLAP:
      MarkColumns(mark, 1, la, ncol, perm, rs);
      for (int j = 0; j < ncol; j++)
        if (mark[j] && Rand(rs) < 0.5) mark[j] = 3;
      MarkColumns(mark, 2, lb / 2, ncol, perm, rs);
      break;
    case ADD_ONLY_A: MarkColumns(mark, 1, la, ncol, perm, rs); break;
    case ADD_ONLY_B: MarkColumns(mark, 2, lb, ncol, perm, rs); break;
    default: break;
    }
    for (int j = 0; j < ncol; j++) {
      if (mark[j] & 1) Append(A, &capa, j, Spread(rs));
      if (mark[j] & 2) {
        const int both = (mark[j] & 1) && Rand(rs) < 0.25;

        Append(B, &capb, j, both ? -A->val[A->nnz - 1] : Spread(rs));
        *cancel += both;
      }
      mark[j] = 0;
    }
    A->ptr[i + 1] = A->nnz;
    B->ptr[i + 1] = B->nnz;
  }
  if (!A->col) A->col = (int *)Malloc(sizeof(int)), A->val = (double *)Malloc(sizeof(double));
  if (!B->col) B->col = (int *)Malloc(sizeof(int)), B->val = (double *)Malloc(sizeof(double));
  free(mark);
  free(perm);
}

/* M = A + B (the reference; columns ncol) against the dense accumulation of each row: sizes, ptr,
   every entry bit for bit, columns ascending and in range, the cancelled entries stored (as +0),
   PatchworkCSRAddRow counting (no value read) what it fills (and writing no further), and B + A
   equal to A + B. nul: NULL for the empty arrays (ptr without rows, col and val without entries). */
static void AddCheck(int *fails, const char *label, const PatchworkCSRMatrix *A, const PatchworkCSRMatrix *B, int ncol, int nul, int cancel)
{
  PatchworkCSR       a = CSRView(A), b = CSRView(B), an, bn;
  PatchworkCSRMatrix M, N;
  const int          n = A->nrow, width = ncol > A->ncol ? ncol : A->ncol;
  double            *dense = (double *)Malloc(sizeof(double) * (size_t)(width + 1)), *vbuf = (double *)Malloc(sizeof(double) * (size_t)(width + 1));
  char              *has = (char *)Malloc((size_t)width + 1);
  int               *cbuf = (int *)Malloc(sizeof(int) * (size_t)(width + 1));
  int                ret, ok, bad = 0, disorder = 0, countbad = 0, zeros = 0, posz = 0;
  long               want = 0;

  if (nul) {
    if (n == 0) a.ptr = b.ptr = NULL;
    if (A->nnz == 0) a.col = NULL, a.val = NULL;
    if (B->nnz == 0) b.col = NULL, b.val = NULL;
  }
  memset(&M, 0xA5, sizeof(M)); /* junk that must be replaced */
  ret = PatchworkCSRAddRef(&a, &b, ncol, &M);
  if (ret) {
    Check(fails, ret, 0, "add %s: returned nonzero", label);
    goto done;
  }
  ok = M.nrow == n && M.ncol == ncol && M.nnz >= 0 && M.ptr && M.ptr[0] == 0 && M.ptr[n] == M.nnz && M.col && M.val;
  for (int i = 0; ok && i < n; i++) ok = M.ptr[i + 1] >= M.ptr[i];
  Check(fails, !ok, 0, "add %s: %d x %d (ncol %d), %d entries, ptr monotone from 0 to nnz", label, M.nrow, M.ncol, ncol, M.nnz);
  if (!ok) {
    PatchworkCSRMatrixFree(&M);
    goto done;
  }
  an     = a; /* count mode reads no value */
  bn     = b;
  an.val = bn.val = NULL;
  for (int i = 0; i < n; i++) {
    int p = M.ptr[i], rowbad = 0, cnt, fill;

    for (int e = A->ptr[i]; e < A->ptr[i + 1]; e++) {
      dense[A->col[e]] = A->val[e];
      has[A->col[e]]   = 1;
    }
    for (int e = B->ptr[i]; e < B->ptr[i + 1]; e++) {
      const int j = B->col[e];

      dense[j] = has[j] ? dense[j] + B->val[e] : B->val[e];
      has[j] |= 2;
    }
    for (int j = 0; j < width; j++) {
      if (!has[j]) continue;
      if (p < M.ptr[i + 1] && M.col[p] == j && !memcmp(&M.val[p], &dense[j], sizeof(double))) {
        zeros += M.val[p] == 0;
        posz += M.val[p] == 0 && !signbit(M.val[p]);
      } else rowbad = 1;
      p++;
      want++;
      has[j] = 0;
    }
    bad += rowbad || p != M.ptr[i + 1];
    for (int q = M.ptr[i]; q < M.ptr[i + 1]; q++) disorder += M.col[q] < 0 || M.col[q] >= ncol || (q > M.ptr[i] && M.col[q] <= M.col[q - 1]);
    cnt = PatchworkCSRAddRow(&an, &bn, i, NULL, NULL);
    if (cnt < 0 || cnt > width) {
      countbad++;
      continue;
    }
    cbuf[cnt] = -7; /* must stay */
    vbuf[cnt] = 1e300;
    fill      = PatchworkCSRAddRow(&a, &b, i, cbuf, vbuf);
    countbad += cnt != fill || fill != M.ptr[i + 1] - M.ptr[i] || cbuf[cnt] != -7 || vbuf[cnt] != 1e300 ||
                (fill > 0 && (memcmp(cbuf, M.col + M.ptr[i], sizeof(int) * (size_t)fill) || memcmp(vbuf, M.val + M.ptr[i], sizeof(double) * (size_t)fill)));
  }
  Check(fails, bad || want != M.nnz, 0, "add %s: every row the dense sum, bit for bit (%ld entries wanted, %d rows differ)", label, want, bad);
  Check(fails, disorder, 0, "add %s: columns ascending, in [0, %d)", label, ncol);
  Check(fails, zeros != cancel || posz != cancel, 0, "add %s: the %d entries that cancel are stored, as +0 (%d zeros, %d of them +0)", label, cancel, zeros, posz);
  Check(fails, countbad, 0, "add %s: PatchworkCSRAddRow's count (no values) equals what it fills and M's row (%d rows differ)", label, countbad);
  ret = PatchworkCSRAddRef(&b, &a, ncol, &N);
  Check(fails, ret || !SameMatrix(&N, &M), 0, "add %s: B + A equals A + B bit for bit", label);
  if (!ret) PatchworkCSRMatrixFree(&N);
  PatchworkCSRMatrixFree(&M);
done:
  free(dense);
  free(vbuf);
  free(has);
  free(cbuf);
}

static void AddCase(int *fails, int n, int ncol, int extra, int mode, int longrows, int nul, uint64_t *rs)
{
  PatchworkCSRMatrix A, B;
  int                cancel;
  char               label[160];

  AddPair(n, ncol, mode, longrows, rs, &A, &B, &cancel);
  snprintf(label, sizeof(label), "%d rows, %s (%d + %d entries), ncol %d%s", n, add_mode[mode], A.nnz, B.nnz, ncol + extra, nul ? ", NULL arrays" : "");
  AddCheck(fails, label, &A, &B, ncol + extra, nul, cancel);
  PatchworkCSRMatrixFree(&A);
  PatchworkCSRMatrixFree(&B);
}

static void AddCases(int *fails, int quick, uint64_t *rs)
{
  /* rows, columns, extra columns of M, long rows (several hundred entries) */
  const int shapes[][4] = {
    {0, 0, 0, 0},   {0, 5, 2, 0},    {5, 0, 0, 0},     {5, 0, 4, 0},      {1, 1, 0, 0},      {3, 2, 0, 0},     {7, 7, 3, 0},
    {60, 60, 0, 0}, {1, 800, 0, 1},  {40, 700, 5, 1},  {700, 40, 0, 0},   {500, 500, 0, 1},  {120, 1500, 0, 1}, {2000, 3000, 7, 1},
    {8000, 500, 0, 0},
  };

  for (int s = 0; s < 15; s++) {
    const int *sh = shapes[s];

    if (quick && (size_t)sh[0] * sh[1] > 400000) continue;
    AddCase(fails, sh[0], sh[1], sh[2], ADD_MIXED, sh[3], 0, rs);
    if (sh[0] == 0 || sh[1] == 0) AddCase(fails, sh[0], sh[1], sh[2], ADD_MIXED, sh[3], 1, rs);
  }
  { /* every kind of row alone, short and long */
    const int shapes2[][3] = {{60, 60, 0}, {500, 500, 1}, {120, 1500, 1}};

    for (int s = 0; s < 3; s++)
      for (int mode = ADD_IDENTICAL; mode < ADD_MODES; mode++) AddCase(fails, shapes2[s][0], shapes2[s][1], 0, mode, shapes2[s][2], mode == ADD_EMPTY || mode == ADD_ONLY_A || mode == ADD_ONLY_B, rs);
  }
  { /* by hand: A = [1 at 0, 2 at 3, 1 at 7], B = [-2 at 3, 4 at 5, 0.5 at 9; and a row of B alone] */
    const int          ap[] = {0, 3, 3}, ac[] = {0, 3, 7}, bp[] = {0, 3, 5}, bc[] = {3, 5, 9, 1, 2};
    const double       av[] = {1, 2, 1}, bv[] = {-2, 4, 0.5, 3, 0.25};
    const PatchworkCSR a = {2, ap, ac, av}, b = {2, bp, bc, bv};
    const int          mp[] = {0, 5, 7}, mc[] = {0, 3, 5, 7, 9, 1, 2};
    const double       mv[] = {1, 0, 4, 1, 0.5, 3, 0.25};
    PatchworkCSRMatrix M;
    int                ret = PatchworkCSRAddRef(&a, &b, 12, &M), ok;

    ok = !ret && M.nrow == 2 && M.ncol == 12 && M.nnz == 7 && !memcmp(M.ptr, mp, sizeof(mp)) && !memcmp(M.col, mc, sizeof(mc)) && !memcmp(M.val, mv, sizeof(mv));
    Check(fails, !ok, 0, "add by hand: [1 2@3 1@7] + [-2@3 4@5 0.5@9] = [1 0@3 4@5 1@7 0.5@9], then B's row alone");
    Check(fails, PatchworkCSRAddRow(&a, &b, 0, NULL, NULL) != 5 || PatchworkCSRAddRow(&a, &b, 1, NULL, NULL) != 2, 0, "add by hand: PatchworkCSRAddRow counts 5 and 2");
    if (!ret) PatchworkCSRMatrixFree(&M);
  }
}

/* Bad arguments of Add: 1, M empty */
static void AddBadArguments(int *fails)
{
  uint64_t           rs = 43;
  int               *at, *bt;
  PatchworkCSRMatrix A = RandomMatrix(10, 10, 0, &rs, &at), B = RandomMatrix(10, 10, 0, &rs, &bt), M;
  PatchworkCSR       a = CSRView(&A), b = CSRView(&B), c, d;
  int                r;

#define ADD_REFUSES(A_, B_, ncol_, what) \
  do { \
    int r_; \
    memset(&M, 0xA5, sizeof(M)); \
    r_ = PatchworkCSRAddRef(A_, B_, ncol_, &M); \
    Check(fails, r_ != 1 || !IsEmptyMatrix(&M), 0, "add: %s is refused, M empty", what); \
    if (r_ == 0) PatchworkCSRMatrixFree(&M); \
  } while (0)
  ADD_REFUSES(NULL, &b, 10, "NULL A");
  ADD_REFUSES(&a, NULL, 10, "NULL B");
  ADD_REFUSES(NULL, NULL, 10, "NULL A and B");
  Check(fails, PatchworkCSRAddRef(&a, &b, 10, NULL) != 1, 0, "add: NULL M is refused");
  c   = b;
  c.n = 9;
  ADD_REFUSES(&a, &c, 10, "B->n < A->n");
  c.n = 11;
  ADD_REFUSES(&a, &c, 10, "B->n > A->n");
  c   = a;
  c.n = -1;
  ADD_REFUSES(&c, &b, 10, "A->n < 0");
  d   = b;
  d.n = -1;
  ADD_REFUSES(&c, &d, 10, "A->n = B->n < 0");
  ADD_REFUSES(&a, &b, -1, "ncol < 0");
  c     = a;
  c.ptr = NULL;
  ADD_REFUSES(&c, &b, 10, "NULL A->ptr with rows");
  c     = b;
  c.ptr = NULL;
  ADD_REFUSES(&a, &c, 10, "NULL B->ptr with rows");
#undef ADD_REFUSES
  r = PatchworkCSRAddRef(&a, &b, 10, &M);
  Check(fails, r != 0 || M.nrow != 10 || M.ncol != 10, 0, "add: the unspoilt arguments are accepted");
  if (!r) PatchworkCSRMatrixFree(&M);
  c     = a;
  d     = b;
  c.n   = d.n = 0;
  c.ptr = d.ptr = NULL;
  c.col = d.col = NULL;
  c.val = d.val = NULL;
  r     = PatchworkCSRAddRef(&c, &d, 0, &M);
  Check(fails, r != 0 || M.nrow != 0 || M.ncol != 0 || M.nnz != 0 || !M.ptr || M.ptr[0] != 0, 0, "add: no rows, NULL arrays, ncol 0: 0 x 0, ptr {0}");
  if (!r) PatchworkCSRMatrixFree(&M);
  PatchworkCSRMatrixFree(&A);
  PatchworkCSRMatrixFree(&B);
  free(at);
  free(bt);
}

int main(int argc, char **argv)
{
  int      fails = 0, quick = argc > 1 && !strcmp(argv[1], "--quick");
  uint64_t rs    = 2024;
  /* nrow, ncol, rows of several hundred entries */
  const int shapes[][3] = {
    {1, 1, 0},     {3, 2, 0},       {7, 7, 0},      {60, 60, 0},    {1, 800, 1},   {40, 700, 1},
    {700, 40, 0},  {500, 500, 1},   {1600, 100, 0}, {120, 1500, 1}, {2000, 2000, 1}, {8000, 500, 0},
  };

  for (int s = 0; s < 12; s++) {
    if (quick && (size_t)shapes[s][0] * shapes[s][1] > 400000) continue;
    Case(&fails, shapes[s][0], shapes[s][1], shapes[s][2], &rs);
  }
  Empty(&fails);
  BadArguments(&fails);
  JoinSplitMapCases(&fails, quick, &rs);
  JoinSplitMapBadArguments(&fails);
  AddCases(&fails, quick, &rs);
  AddBadArguments(&fails);
  printf("%s\n", fails ? "FAIL" : "all ok");
  return fails != 0;
}
