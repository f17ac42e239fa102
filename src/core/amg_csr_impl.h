/* What the CPU references of PCPATCHAMG's setup products share (src/core/amg_prolong_ref.c,
   src/core/amg_galerkin_ref.c): allocation where NULL always means failure, and the sort of a row's
   columns. */
#ifndef PATCHWORK_AMG_CSR_IMPL_H
#define PATCHWORK_AMG_CSR_IMPL_H

#include <stdlib.h>

/* malloc that never returns NULL for 0 bytes */
static inline void *CSRAlloc(size_t bytes)
{
  return malloc(bytes ? bytes : 1);
}

static inline int CSRCompareInts(const void *a, const void *b)
{
  return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* ascending: insertion sort for the short rows of fine levels, qsort for the long ones of coarse levels */
static inline void CSRSortInts(int *a, int m)
{
  if (m > 16) {
    qsort(a, (size_t)m, sizeof(int), CSRCompareInts);
    return;
  }
  for (int i = 1; i < m; i++) {
    const int v = a[i];
    int       j = i - 1;

    for (; j >= 0 && a[j] > v; j--) a[j + 1] = a[j];
    a[j + 1] = v;
  }
}

#endif
