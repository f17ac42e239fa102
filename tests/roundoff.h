/* Rounding-error bounds that the CPU unit tests and the GPU kernel tests share */
#ifndef PATCHWORK_TESTS_ROUNDOFF_H
#define PATCHWORK_TESTS_ROUNDOFF_H

/* gamma_n = n u / (1 - n u): the bound on the relative error of a sum of n products (Higham) */
static inline double Gamma(int n, double u)
{
  return n * u / (1 - n * u);
}

/* The unit roundoff long double really has here: valgrind runs x87 code in double precision */
static inline double LongDoubleRoundoff(void)
{
  volatile long double one = 1, e = 1;

  while (one + e / 2 != one) e /= 2;
  return (double)(e / 2);
}
#endif
