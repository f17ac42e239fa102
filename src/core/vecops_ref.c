/* CPU reference of the vector kernels of the single-precision cycles (include/patchwork/vec_kernel.h) */
#include <patchwork/amg_hash.h>
#include <patchwork/vec_kernel.h>

void PatchworkVecToFloatRef(ptrdiff_t n, const double *x, float *y)
{
  for (ptrdiff_t i = 0; i < n; i++) y[i] = (float)x[i];
}

void PatchworkVecToDoubleRef(ptrdiff_t n, const float *x, double *y)
{
  for (ptrdiff_t i = 0; i < n; i++) y[i] = (double)x[i];
}

void PatchworkVecLongToIntRef(ptrdiff_t n, const long long *x, int *y)
{
  for (ptrdiff_t i = 0; i < n; i++) y[i] = (int)x[i];
}

void PatchworkVecAYPXFloatRef(ptrdiff_t n, float a, const float *x, float *y)
{
  for (ptrdiff_t i = 0; i < n; i++) y[i] = a * y[i] + x[i];
}

void PatchworkVecHashFillRef(ptrdiff_t n, ptrdiff_t first, unsigned seed, double *y)
{
  for (ptrdiff_t i = 0; i < n; i++) y[i] = PatchworkHash(seed, (int)(first + i)) * (2.0 / 4294967296.0) - 1.0;
}

void PatchworkVecScatterFloatRef(ptrdiff_t n, const int *ix, const float *x, const int *iy, float *y, int add)
{
  for (ptrdiff_t i = 0; i < n; i++) {
    const ptrdiff_t s = ix ? ix[i] : i, d = iy ? iy[i] : i;
    const float     v = x ? x[s] : 0.0f;

    y[d] = add ? y[d] + v : v;
  }
}

void PatchworkVecScatterRef(ptrdiff_t n, const int *ix, const double *x, const int *iy, double *y, int add)
{
  for (ptrdiff_t i = 0; i < n; i++) {
    const ptrdiff_t s = ix ? ix[i] : i, d = iy ? iy[i] : i;
    const double    v = x ? x[s] : 0.0;

    y[d] = add ? y[d] + v : v;
  }
}
