/* CPU reference of the per-cell hanging-node constraints (contract: include/patchwork/hanging_kernel.h). */
#include <string.h>
#include <patchwork/basis1d.h>
#include <patchwork/hanging_kernel.h>
#include <patchwork/tensor_kernel.h>

int PatchworkHangingTables(int degree, double *P)
{
  const int n = degree + 1;
  double    xi[PW_MAX_N], w[PW_MAX_N];

  if (degree < 1 || degree > PW_MAX_DEGREE || PatchworkGaussLobatto(n, xi, w)) return 1;
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < n; i++) PatchworkLagrangeEval(n, xi, 0.5 * (s + xi[i]), P + (s * n + i) * n, NULL);
  return 0;
}

/* One constraint of a cell: its nodes are base + i*stride[0] (+ j*stride[1]), i, j < n, with the
   halves s[] of the tangential directions */
typedef struct {
  int  m; /* tangential directions: 1 (2D face, 3D edge) or 2 (3D face) */
  long base, stride[2];
  int  s[2];
} Constraint;

/* The hanging constraints of the mask in their order (faces, then edges): at most 6 + 12 */
static int Constraints(int dim, int n, unsigned long long mask, Constraint *c)
{
  const long st[3] = {1, n, (long)n * n};
  int        nc    = 0;

  for (int f = 0; f < 2 * dim; f++) {
    const int d = f / 2, side = f % 2;
    int       t = 0;

    if (!((mask >> f) & 1)) continue;
    c[nc].m    = dim - 1;
    c[nc].base = side * (n - 1) * st[d];
    for (int e = 0; e < dim; e++) {
      if (e == d) continue;
      c[nc].stride[t] = st[e];
      c[nc].s[t]      = (int)((mask >> (PW_HANG_FACE_POS + (dim - 1) * f + t)) & 1);
      t++;
    }
    nc++;
  }
  if (dim == 3)
    for (int e = 0; e < 12; e++) {
      const int d = e / 4, a = e % 2, b = (e / 2) % 2, o0 = d == 0 ? 1 : 0, o1 = d == 2 ? 1 : 2;

      if (!((mask >> (PW_HANG_EDGE + e)) & 1)) continue;
      c[nc].m         = 1;
      c[nc].base      = a * (n - 1) * st[o0] + b * (n - 1) * st[o1];
      c[nc].stride[0] = st[d];
      c[nc].s[0]      = (int)((mask >> (PW_HANG_EDGE_POS + e)) & 1);
      nc++;
    }
  return nc;
}

/* claim[node] = index + 1 of the first constraint that contains the node, 0 for free nodes */
static void Claims(int dim, int n, int nc, const Constraint *c, unsigned char *claim)
{
  const long nn = dim == 3 ? (long)n * n * n : (long)n * n;

  memset(claim, 0, (size_t)nn);
  for (int k = 0; k < nc; k++)
    for (int j = 0; j < (c[k].m == 2 ? n : 1); j++)
      for (int i = 0; i < n; i++) {
        const long node = c[k].base + i * c[k].stride[0] + (c[k].m == 2 ? j * c[k].stride[1] : 0);
        if (!claim[node]) claim[node] = (unsigned char)(k + 1);
      }
}

/* The constraints of the mask and who claims each node; returns how many constraints */
static int Prepare(int dim, int n, unsigned long long mask, Constraint *c, unsigned char *claim)
{
  const int nc = Constraints(dim, n, mask, c);

  if (nc) Claims(dim, n, nc, c, claim);
  return nc;
}

void PatchworkHangingApplyRef(int dim, int degree, unsigned long long mask, const double *P, double *u)
{
  const int     n = degree + 1;
  const long    nn = dim == 3 ? (long)n * n * n : (long)n * n;
  Constraint    c[18];
  unsigned char claim[PW_MAX_N * PW_MAX_N * PW_MAX_N];
  double        raw[PW_MAX_N * PW_MAX_N * PW_MAX_N], tmp[PW_MAX_N * PW_MAX_N];
  const int     nc = Prepare(dim, n, mask, c, claim);

  if (!nc) return;
  memcpy(raw, u, (size_t)nn * sizeof(double)); /* every constraint reads the raw values */
  for (int k = 0; k < nc; k++) {
    const Constraint *q  = &c[k];
    const double     *P0 = P + q->s[0] * n * n;
    const int         nj = q->m == 2 ? n : 1;

    /* along the first direction: tmp[j*n + i] = sum_p P0[i][p] raw(p, j) */
    for (int j = 0; j < nj; j++)
      for (int i = 0; i < n; i++) {
        double v = 0;
        for (int p = 0; p < n; p++) v += P0[i * n + p] * raw[q->base + p * q->stride[0] + (q->m == 2 ? j * q->stride[1] : 0)];
        tmp[j * n + i] = v;
      }
    /* along the second: u(i, j) = sum_r P1[j][r] tmp[r*n + i], on the nodes this constraint claims */
    for (int j = 0; j < nj; j++)
      for (int i = 0; i < n; i++) {
        const long node = q->base + i * q->stride[0] + (q->m == 2 ? j * q->stride[1] : 0);
        double     v    = 0;

        if (claim[node] != k + 1) continue;
        if (q->m == 2) {
          const double *P1 = P + q->s[1] * n * n;
          for (int r = 0; r < n; r++) v += P1[j * n + r] * tmp[r * n + i];
        } else v = tmp[i];
        u[node] = v;
      }
  }
}

void PatchworkHangingApplyTransposeRef(int dim, int degree, unsigned long long mask, const double *P, double *y)
{
  const int     n = degree + 1;
  const long    nn = dim == 3 ? (long)n * n * n : (long)n * n;
  Constraint    c[18];
  unsigned char claim[PW_MAX_N * PW_MAX_N * PW_MAX_N];
  double        in[PW_MAX_N * PW_MAX_N * PW_MAX_N], tmp[PW_MAX_N * PW_MAX_N];
  const int     nc = Prepare(dim, n, mask, c, claim);

  if (!nc) return;
  memcpy(in, y, (size_t)nn * sizeof(double));
  /* the constrained slots hold coarse values, reached only through the constraints */
  for (long node = 0; node < nn; node++)
    if (claim[node]) y[node] = 0;
  for (int k = 0; k < nc; k++) {
    const Constraint *q  = &c[k];
    const double     *P0 = P + q->s[0] * n * n;
    const int         nj = q->m == 2 ? n : 1;

    /* tmp[r*n + i] = sum_j P1[j][r] y(i, j), over the nodes this constraint claims */
    for (int r = 0; r < nj; r++)
      for (int i = 0; i < n; i++) {
        double v = 0;
        for (int j = 0; j < nj; j++) {
          const long node = q->base + i * q->stride[0] + (q->m == 2 ? j * q->stride[1] : 0);
          if (claim[node] == k + 1) v += (q->m == 2 ? P[(q->s[1] * n + j) * n + r] : 1.0) * in[node];
        }
        tmp[r * n + i] = v;
      }
    /* raw(p, r) += sum_i P0[i][p] tmp[r*n + i] */
    for (int r = 0; r < nj; r++)
      for (int p = 0; p < n; p++) {
        double v = 0;
        for (int i = 0; i < n; i++) v += P0[i * n + p] * tmp[r * n + i];
        y[q->base + p * q->stride[0] + (q->m == 2 ? r * q->stride[1] : 0)] += v;
      }
  }
}

int PatchworkHangingRow(int dim, int degree, unsigned long long mask, const double *P, int node, int *slot, double *w)
{
  const int     n = degree + 1;
  Constraint    c[18];
  unsigned char claim[PW_MAX_N * PW_MAX_N * PW_MAX_N];
  const int     nc  = Prepare(dim, n, mask, c, claim);
  int           cnt = 0;

  if (!nc || !claim[node]) {
    slot[0] = node;
    w[0]    = 1.0;
    return 1;
  }
  {
    const Constraint *q = &c[claim[node] - 1];
    const int         nj = q->m == 2 ? n : 1;
    int               i = -1, j = 0;

    /* the node's place on its constraint */
    for (int jj = 0; jj < nj && i < 0; jj++)
      for (int ii = 0; ii < n; ii++)
        if (q->base + ii * q->stride[0] + (q->m == 2 ? jj * q->stride[1] : 0) == node) {
          i = ii;
          j = jj;
          break;
        }
    for (int r = 0; r < nj; r++)
      for (int p = 0; p < n; p++) {
        slot[cnt] = (int)(q->base + p * q->stride[0] + (q->m == 2 ? r * q->stride[1] : 0));
        w[cnt++]  = P[(q->s[0] * n + i) * n + p] * (q->m == 2 ? P[(q->s[1] * n + j) * n + r] : 1.0);
      }
  }
  return cnt;
}
