/* CPU reference of the patch block-Jacobi relaxation on the patchSPM layout (contract:
   include/patchwork/amg_kernel.h; CUDA: cuda/amg_relax.cu).

   Serial loops over patches, rows and entries in storage order. Arithmetic is double throughout:
   with single-precision values only the stored matrix is rounded (each value is widened exactly),
   so the float and double paths differ by their data, not by their arithmetic. Entries are added in
   storage order; the CUDA kernels differ from this only by fused multiply-adds and the grouping of
   the sums (diagonal, AI, AB), which the tests cover with rounding bounds.

   The value type is resolved per row: only the innermost dot product exists twice (RowDot_float,
   RowDot_double); the algorithms are written once.

   The row map: the layout is indexed by position, the vectors by level row (row[i] at position i).
   Each patch's vector entries are gathered into position order first, so that the patch products
   read the same numbers in the same order with or without a map: a row-mapped relaxation equals
   the identity one on permuted vectors bit for bit. */
#include <math.h>
#include <stdlib.h>
#include <patchwork/amg_kernel.h>

#define PW_DEFINE_ROWDOT(T) \
  static double RowDot_##T(const T *v, const int *col, int begin, int end, const double *x) \
  { \
    double s = 0.0; \
    for (int j = begin; j < end; j++) s += (double)v[j] * x[col[j]]; \
    return s; \
  }
PW_DEFINE_ROWDOT(float)
PW_DEFINE_ROWDOT(double)

/* sum_{j in [begin,end)} val[j] x[col[j]] for the value type of the descriptor */
static inline double RowDot(int single, const void *val, const int *col, int begin, int end, const double *x)
{
  return single ? RowDot_float((const float *)val, col, begin, end, x) : RowDot_double((const double *)val, col, begin, end, x);
}

static inline double Diag(const PatchworkSPMDesc *d, int i)
{
  return d->single ? (double)((const float *)d->diag)[i] : ((const double *)d->diag)[i];
}

/* the level row (vector index) of position i */
static inline int Row(const PatchworkSPMDesc *d, int i)
{
  return d->row ? d->row[i] : i;
}

/* (A_p v)_i = AD_i v_i + sum AI_ij v_j for position i = s + il of the patch starting at s; v holds
   the patch's values in position order (v[0] is position s) */
static inline double PatchRowApply(const PatchworkSPMDesc *d, int s, int il, const double *v)
{
  const int i = s + il;

  return Diag(d, i) * v[il] + RowDot(d->single, d->ai_val, d->ai_col, d->ai_ptr[i], d->ai_ptr[i + 1], v);
}

/*
  PatchworkSPMPatchRelaxRef - one step of patch block Jacobi with inner weighted Jacobi sweeps on
  every patch block (see amg_kernel.h). Needs 4 max_patch doubles of scratch; if they cannot be
  allocated, x (and r) are filled with NaN so that the failure cannot go unnoticed (the function
  returns nothing).
*/
void PatchworkSPMPatchRelaxRef(const PatchworkSPMDesc *d, const double *b, double *x, double *r, int zero_guess)
{
  const int    mp = d->max_patch > 0 ? d->max_patch : 1;
  const double iw = d->inner_omega, w = d->omega;
  double      *t  = (double *)malloc(4 * sizeof(double) * (size_t)mp);
  double      *g, *gn, *v;

  if (!t) {
    for (int i = 0; i < d->n; i++) {
      x[i] = NAN;
      if (r) r[i] = NAN;
    }
    return;
  }
  g  = t + mp;
  gn = g + mp;
  v  = gn + mp; /* x_p in position order */
  for (int p = 0; p < d->npatch; p++) {
    const int s = d->patch_ptr[p], m = d->patch_ptr[p + 1] - s;

    /* t = b_p - A_p x_p, or b_p from a zero guess (x is not read then) */
    if (zero_guess)
      for (int il = 0; il < m; il++) t[il] = b[Row(d, s + il)];
    else {
      for (int il = 0; il < m; il++) v[il] = x[Row(d, s + il)];
      for (int il = 0; il < m; il++) t[il] = b[Row(d, s + il)] - PatchRowApply(d, s, il, v);
    }
    /* the first sweep from g = 0 needs no product */
    for (int il = 0; il < m; il++) g[il] = iw * t[il] / Diag(d, s + il);
    for (int k = 1; k < d->inner; k++) {
      double *tmp;

      for (int il = 0; il < m; il++) gn[il] = g[il] + iw * (t[il] - PatchRowApply(d, s, il, g)) / Diag(d, s + il);
      tmp = g;
      g   = gn;
      gn  = tmp;
    }
    for (int il = 0; il < m; il++) {
      v[il]              = zero_guess ? w * g[il] : v[il] + w * g[il];
      x[Row(d, s + il)] = v[il];
    }
    /* r_p = b_p - A_p x_p: b's entry of a row is read just before r's is written, and only there,
       so r may alias b */
    if (r)
      for (int il = 0; il < m; il++) {
        const int vi = Row(d, s + il);

        r[vi] = b[vi] - PatchRowApply(d, s, il, v);
      }
  }
  free(t); /* g and gn swap, t stays the start of the allocation */
}

void PatchworkSPMBoundaryResidualRef(const PatchworkSPMDesc *d, const double *x, const double *z, double *y)
{
  for (int i = 0; i < d->n; i++) {
    const int vi = Row(d, i);

    y[vi] = z[vi] - RowDot(d->single, d->ab_val, d->ab_col, d->ab_ptr[i], d->ab_ptr[i + 1], x);
  }
}

/* Needs max_patch doubles of scratch for the row-mapped case (the patch's x in position order);
   without them y is filled with NaN */
void PatchworkSPMMultRef(const PatchworkSPMDesc *d, const double *x, double *y)
{
  double *v = NULL;

  if (d->row && !(v = (double *)malloc(sizeof(double) * (size_t)(d->max_patch > 0 ? d->max_patch : 1)))) {
    for (int i = 0; i < d->n; i++) y[i] = NAN;
    return;
  }
  for (int p = 0; p < d->npatch; p++) {
    const int     s = d->patch_ptr[p], e = d->patch_ptr[p + 1];
    const double *xp = x + s;

    if (v) {
      for (int i = s; i < e; i++) v[i - s] = x[d->row[i]];
      xp = v;
    }
    for (int i = s; i < e; i++) {
      const double ai = PatchRowApply(d, s, i - s, xp);

      y[Row(d, i)] = ai + RowDot(d->single, d->ab_val, d->ab_col, d->ab_ptr[i], d->ab_ptr[i + 1], x);
    }
  }
  free(v);
}
