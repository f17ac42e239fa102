/* Rules of PCPATCHAMG's graph partitions (include/patchwork/amg_kernel.h) shared by the CPU
   reference (src/core/amg_graph.c) and the CUDA kernels (cuda/amg_graph.cu, cuda/amg_balance.cu)
   so that both produce the same partitions: the tie-breaking hash (murmur3's 32-bit finalizer
   applied to v xor the mixed seed, a bijection of v for every seed) and the weight of a group of
   isolated vertices. */
#ifndef PATCHWORK_AMG_HASH_H
#define PATCHWORK_AMG_HASH_H

#include <stdint.h>
#include <patchwork/host_device.h>

PW_HOST_DEVICE uint32_t PatchworkMix32(uint32_t h)
{
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}

PW_HOST_DEVICE uint32_t PatchworkHash(unsigned seed, int v)
{
  return PatchworkMix32((uint32_t)v ^ PatchworkMix32((uint32_t)seed ^ 0x9E3779B9u));
}

/* Isolated vertices are grouped into parts of about this weight (Partition in amg_kernel.h) */
PW_HOST_DEVICE int PatchworkIsolatedCap(int min_weight)
{
  return 4 * (min_weight > 1 ? min_weight : 1);
}

#endif
