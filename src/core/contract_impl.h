/* Precision template (no include guard: included once per real type, by the *_impl.h templates of
   src/core): the 1D contraction that every sum-factorized CPU reference is built from.
   The includer defines PW_REAL, the type of the data and of all arithmetic, and PW_FN(name), the
   name of this instance (e.g. name for double, name##Float for float). */
#if !defined(PW_REAL) || !defined(PW_FN)
  #error "define PW_REAL and PW_FN(name) before including contract_impl.h"
#endif

/* Contraction along one direction of a tensor of shape [nout][p][s] into one of shape [nout][m][s]:
   v[(o m + i) s + r] (+)= alpha sum_q A[i p + q] u[(o p + q) s + r], A row major m x p; add
   selects += (accumulate into v) over =. alpha = 1 is exact, so a plain product uses it too.
   (Reordering the loops to run innermost over the contiguous r measured no faster at these sizes
   with -O2.) */
static void PW_FN(Contract)(int m, int p, int nout, int s, const PW_REAL *A, PW_REAL alpha, int add, const PW_REAL *u, PW_REAL *v)
{
  for (int o = 0; o < nout; o++) {
    const PW_REAL *uo = u + (ptrdiff_t)o * p * s;
    PW_REAL       *vo = v + (ptrdiff_t)o * m * s;

    for (int i = 0; i < m; i++) {
      const PW_REAL *Ai = A + i * p;

      for (int r = 0; r < s; r++) {
        PW_REAL sum = 0;

        for (int q = 0; q < p; q++) sum += Ai[q] * uo[q * s + r];
        if (add) vo[i * s + r] += alpha * sum;
        else vo[i * s + r] = alpha * sum;
      }
    }
  }
}

/* v = A u along the direction of stride s of an n x n x .. tensor of ntot entries, A square n x n */
static inline void PW_FN(ContractSquare)(int n, int ntot, int s, const PW_REAL *A, const PW_REAL *u, PW_REAL *v)
{
  PW_FN(Contract)(n, n, ntot / (n * s), s, A, (PW_REAL)1, 0, u, v);
}
