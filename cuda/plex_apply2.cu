/* The templated apply on 2D cells, k = 1..10 (cuda/plex_templated.h; the design: cuda/plex_apply.cu) */
#include "plex_templated.h"

cudaError_t patchwork_plex::ApplyTemplated2(const PatchworkPlexDesc *d, const double *x, double *y, cudaStream_t s)
{
  switch (d->degree) {
  case 1: return ApplyN<2, 2>(d, x, y, s);
  case 2: return ApplyN<2, 3>(d, x, y, s);
  case 3: return ApplyN<2, 4>(d, x, y, s);
  case 4: return ApplyN<2, 5>(d, x, y, s);
  case 5: return ApplyN<2, 6>(d, x, y, s);
  case 6: return ApplyN<2, 7>(d, x, y, s);
  case 7: return ApplyN<2, 8>(d, x, y, s);
  case 8: return ApplyN<2, 9>(d, x, y, s);
  case 9: return ApplyN<2, 10>(d, x, y, s);
  case 10: return ApplyN<2, 11>(d, x, y, s);
  default: return cudaErrorInvalidValue;
  }
}
