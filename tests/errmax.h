/* The largest of two errors, NaN when either is. fmax() returns the other operand when one is NaN, and
   so do std::max(a, b) and PETSc's PetscMax(a, b) (both a < b ? b : a) when b is: a maximum of errors
   taken with them forgets every NaN it meets, and the check err <= tol then passes on the largest
   finite error. Every test that reduces errors, or the scales they are measured against, to a
   maximum takes it with ErrMax(), in C (the unit and PETSc tests) and in the CUDA tests (host and
   device code) alike; tests/unit/test_errmax.c plants NaNs into it. */
#ifndef PATCHWORK_TESTS_ERRMAX_H
#define PATCHWORK_TESTS_ERRMAX_H

#include <math.h>

/* host and device code of the CUDA tests alike */
#if defined(__CUDACC__)
  #define PW_TEST_HOST_DEVICE __host__ __device__
#else
  #define PW_TEST_HOST_DEVICE
#endif

PW_TEST_HOST_DEVICE static inline double ErrMax(double a, double b)
{
  if (isnan(a) || isnan(b)) return NAN;
  return a > b ? a : b;
}

/* Whether ErrMax(m, e) takes e in place of m: e is the new worst error (a NaN is, once), for tests that
   note where their worst error is */
PW_TEST_HOST_DEVICE static inline int ErrMaxTakes(double m, double e)
{
  return !isnan(m) && (isnan(e) || e > m);
}

#endif
