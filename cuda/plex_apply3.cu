/* The templated apply on 3D cells, k = 1..8 (cuda/plex_templated.h; the design: cuda/plex_apply.cu) */
#include "plex_templated.h"

cudaError_t patchwork_plex::ApplyTemplated3(const PatchworkPlexDesc *d, const double *x, double *y, cudaStream_t s)
{
  switch (d->degree) {
  case 1: return ApplyN<3, 2>(d, x, y, s);
  case 2: return ApplyN<3, 3>(d, x, y, s);
  case 3: return ApplyN<3, 4>(d, x, y, s);
  case 4: return ApplyN<3, 5>(d, x, y, s);
  case 5: return ApplyN<3, 6>(d, x, y, s);
  case 6: return ApplyN<3, 7>(d, x, y, s);
  case 7: return ApplyN<3, 8>(d, x, y, s);
  case 8: return ApplyN<3, 9>(d, x, y, s);
  default: return cudaErrorInvalidValue;
  }
}
