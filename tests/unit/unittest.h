/* What the PETSc-free unit tests share: checks that print the measured error beside the tolerance,
   a reproducible random generator, allocation that fails loudly. */
#ifndef PATCHWORK_UNITTEST_H
#define PATCHWORK_UNITTEST_H

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../errmax.h"

/* The decision of every check: err <= tol, false for a NaN error (or tolerance) */
static inline int Passes(double err, double tol)
{
  return err <= tol;
}

/* Passes when err <= tol (so a NaN fails); prints the measured error and the tolerance */
static inline void Check(int *fails, double err, double tol, const char *fmt, ...)
{
  va_list ap;
  int     ok = Passes(err, tol);

  printf("%s ", ok ? "ok  " : "FAIL");
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf(": err %.3e tol %.3e\n", err, tol);
  if (!ok) (*fails)++;
}

/* xorshift64, fixed seed: failures reproduce */
static inline double Rand(uint64_t *s)
{
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return (double)(*s >> 11) / 9007199254740992.0; /* [0,1) */
}

/* zeroed: no test reads memory it did not set (and valgrind would not see it if one did), but the
   compiler's flow analysis cannot tell that loops up to a runtime count fill whole arrays */
static inline void *Malloc(size_t n)
{
  void *p = calloc(n ? n : 1, 1);

  if (!p) {
    fprintf(stderr, "FAIL out of memory (%zu bytes)\n", n);
    exit(1);
  }
  return p;
}

/* max |v_i|, NaN when some v_i is */
static inline double MaxAbs(long n, const double *v)
{
  double m = 0.0;

  for (long i = 0; i < n; i++) m = ErrMax(m, fabs(v[i]));
  return m;
}

#endif
