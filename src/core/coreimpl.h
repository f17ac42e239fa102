/* What the CPU reference kernels share: node-box indexing and descriptor checks. */
#ifndef PATCHWORK_COREIMPL_H
#define PATCHWORK_COREIMPL_H

#include <assert.h>
#include <stddef.h>

/* 64-bit offsets: a single GPU can hold more than 2^31 nodes */
static inline ptrdiff_t BoxIndex(const int start[3], const int size[3], const int g[3])
{
  return ((ptrdiff_t)(g[2] - start[2]) * size[1] + (g[1] - start[1])) * size[0] + (g[0] - start[0]);
}

/* Assert that the box (start,size) holds nodes [lo,hi] in every direction */
static inline void AssertBoxContains(const int start[3], const int size[3], const int lo[3], const int hi[3])
{
  for (int dir = 0; dir < 3; dir++) {
    assert(start[dir] <= lo[dir]);
    assert(hi[dir] < start[dir] + size[dir]);
  }
  (void)start;
  (void)size;
  (void)lo;
  (void)hi;
}

#endif
