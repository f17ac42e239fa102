/* Unit test of the test helpers that decide pass or fail: ErrMax() (tests/errmax.h), the maximum
   every C and CUDA test reduces its errors with, must keep a NaN wherever it is planted, as must
   MaxAbs(), and Passes(), the decision of Check(), must fail a NaN. (fmax() and PetscMax() return
   the other operand of a NaN: a NaN output of a kernel or an operator then passed as the largest
   finite error.) Prints one line per check and returns 1 if any check failed. */
#include <math.h>
#include <stdio.h>
#include "unittest.h"

/* 0 when x is NaN (for Check: a NaN must come out), else 1 */
static double NotNaN(double x)
{
  return isnan(x) ? 0.0 : 1.0;
}

int main(void)
{
  const double errs[5] = {1e-16, 3e-15, 2e-16, 5e-15, 4e-16};
  const double tol     = 1e-14;
  int          fails   = 0;

  Check(&fails, NotNaN(ErrMax(NAN, 1.0)), 0, "ErrMax(NaN, 1) is NaN");
  Check(&fails, NotNaN(ErrMax(1.0, NAN)), 0, "ErrMax(1, NaN) is NaN");
  Check(&fails, NotNaN(ErrMax(NAN, NAN)), 0, "ErrMax(NaN, NaN) is NaN");
  Check(&fails, NotNaN(ErrMax(INFINITY, NAN)), 0, "ErrMax(Inf, NaN) is NaN");
  Check(&fails, fabs(ErrMax(1.0, 2.0) - 2.0) + fabs(ErrMax(2.0, 1.0) - 2.0), 0, "ErrMax(1, 2) = ErrMax(2, 1) = 2");
  Check(&fails, ErrMax(0.0, INFINITY) == INFINITY ? 0.0 : 1.0, 0, "ErrMax(0, Inf) = Inf");
  Check(&fails, ErrMax(-1.0, 0.0) == 0.0 ? 0.0 : 1.0, 0, "ErrMax(-1, 0) = 0");
  /* a running maximum over the errors of a check, as the tests take it, with a NaN planted at each
     position in turn: the maximum is NaN and the check fails; without a NaN it passes */
  {
    double m = 0.0;

    for (int i = 0; i < 5; i++) m = ErrMax(m, errs[i]);
    Check(&fails, fabs(m - 5e-15), 0, "running ErrMax without a NaN: the largest error");
    Check(&fails, Passes(m, tol) ? 0.0 : 1.0, 0, "Passes(5e-15, 1e-14)");
  }
  for (int planted = 0; planted < 5; planted++) {
    double m = 0.0, v[5];

    for (int i = 0; i < 5; i++) v[i] = i == planted ? NAN : errs[i];
    for (int i = 0; i < 5; i++) m = ErrMax(m, v[i]);
    Check(&fails, NotNaN(m), 0, "running ErrMax, NaN planted at position %d of 5: NaN", planted);
    Check(&fails, Passes(m, tol) ? 1.0 : 0.0, 0, "Passes() fails that maximum (NaN planted at position %d)", planted);
    Check(&fails, NotNaN(MaxAbs(5, v)), 0, "MaxAbs(), NaN planted at position %d of 5: NaN", planted);
  }
  Check(&fails, Passes(NAN, 1.0) || Passes(1.0, NAN) ? 1.0 : 0.0, 0, "Passes(NaN, 1) and Passes(1, NaN) fail");
  Check(&fails, Passes(INFINITY, 1.0) ? 1.0 : 0.0, 0, "Passes(Inf, 1) fails");
  printf("%s\n", fails ? "FAILED" : "all checks passed");
  return fails ? 1 : 0;
}
