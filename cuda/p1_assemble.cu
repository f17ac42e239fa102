/* CUDA kernel of the P1 assembly (contract: include/patchwork/p1_kernel.h; CPU reference:
   src/core/p1_ref.c): the patch-based hierarchical assembly of Fu, Lewis, Kirby and Whitaker (2014),
   section 4.

   PatchAssemble: one block of 256 threads per patch (a grid-stride loop over patches when there are
   more than 2^31-1). The block
     1. copies the patch's coordinates, row offsets (relative to its first entry) and column indices into
        shared memory and zeroes its values there, coalesced;
     2. gives each thread one of the patch's cells at a time: its vertices' coordinates come from shared
        memory when the vertex is the patch's, else from global memory (read-only cache), and
        PatchworkP1ElementMatrix() (the reference's code) gives the element matrix in registers;
     3. adds entry (k,l) to the row of vertex k: when the row is the patch's, at the position a binary
        search of the row's columns in shared memory finds, with a shared-memory atomicAdd; otherwise
        with a binary search of the global pattern and a global atomicAdd into values_B;
     4. after a barrier writes the patch's rows to vals, coalesced (the rows are contiguous: the vertices
        are numbered patch by patch; through vals_pos, the order of the caller's COO list, a row's
        entries still land side by side when that list keeps rows together, as a list sorted by row does).
   A patch whose data does not fit in the block's dynamic shared memory (smem_bytes) stages nothing:
   all its entries go through step 3's global path, and step 4 writes zeros.
   AddBoundary then adds values_B to vals (through vals_pos when given); step 2 reads sigma through
   sigma_map when given (the caller's cell order). The paper keeps the coordinates and the CSR values
   in one shared buffer (the coordinates overwritten once every element matrix is in registers, which
   needs every cell of a patch in its own thread); here they sit side by side, so a patch may have more
   cells than the block has threads.

   Registers: at most 128 (two blocks per SM; sm_90, 3D: 104, no spills); three blocks per SM would cap
   them at 80 and spill 36 bytes in 3D (untested which is faster).
   Double atomicAdd into shared memory is a compare-and-swap loop on sm_90; contention is low (a row's
   entries are hit by the few cells around one vertex). The additions happen in any order: the result
   differs from the reference in the last bits and from run to run. Error counts (degenerate cells,
   entries missing from the pattern) are summed per thread and added once at the end. */
#include <cuda_runtime.h>
#include <patchwork/p1_kernel.h>

namespace {

constexpr int THREADS = 256;

template <int DIM>
__global__ void __launch_bounds__(THREADS, 2) PatchAssemble(const PatchworkP1Desc d, double *__restrict__ vals, double *__restrict__ valsB, unsigned long long *counts)
{
  extern __shared__ double smem[];
  constexpr int      N          = DIM + 1;
  unsigned long long degenerate = 0, missing = 0;

  for (long long p = blockIdx.x; p < d.npatch; p += gridDim.x) {
    const int       r0 = d.patch_ptr[p], r1 = d.patch_ptr[p + 1], nrow = r1 - r0;
    const long long z0 = d.rowptr[r0], nnz = d.rowptr[r1] - z0;
    const bool      fits = PatchworkP1PatchBytes(DIM, nrow, nnz) <= (size_t)d.smem_bytes;
    double         *sval = smem;                     /* [nnz] */
    double         *sx   = smem + (fits ? nnz : 0);  /* [DIM][nrow] */
    int            *scol = (int *)(sx + DIM * nrow); /* [nnz] */
    int            *srow = scol + nnz;               /* [nrow+1], relative to z0 */

    if (fits) {
      for (long long i = threadIdx.x; i < nnz; i += THREADS) {
        sval[i] = 0;
        scol[i] = d.col[z0 + i];
      }
      for (int e = 0; e < DIM; e++)
        for (int i = threadIdx.x; i < nrow; i += THREADS) sx[e * nrow + i] = d.coords[(long long)e * d.nvert + r0 + i];
      for (int i = threadIdx.x; i <= nrow; i += THREADS) srow[i] = (int)(d.rowptr[r0 + i] - z0);
    }
    __syncthreads();

    for (long long c = d.patch_cell[p] + threadIdx.x; c < d.patch_cell[p + 1]; c += THREADS) {
      int    v[N];
      double xv[N * DIM], Ae[N * N];

#pragma unroll
      for (int k = 0; k < N; k++) v[k] = __ldg(&d.cells[k * d.ncell + c]);
#pragma unroll
      for (int k = 0; k < N; k++) {
        const bool own = fits && v[k] >= r0 && v[k] < r1;
        for (int e = 0; e < DIM; e++) xv[k * DIM + e] = own ? sx[e * nrow + (v[k] - r0)] : __ldg(&d.coords[(long long)e * d.nvert + v[k]]);
      }
      degenerate += PatchworkP1ElementMatrix(DIM, xv, d.sigma ? __ldg(&d.sigma[d.sigma_map ? __ldg(&d.sigma_map[c]) : c]) : 1.0, d.lambda, Ae);
#pragma unroll
      for (int k = 0; k < N; k++) {
        const int row = v[k];

        if (fits && row >= r0 && row < r1) {
          const int lo = srow[row - r0], hi = srow[row - r0 + 1];
#pragma unroll
          for (int l = 0; l < N; l++) {
            const long long pos = PatchworkP1FindColumn(scol, lo, hi, v[l]);
            if (pos < 0) missing++;
            else atomicAdd(&sval[pos], Ae[k * N + l]);
          }
        } else {
          const long long lo = __ldg(&d.rowptr[row]), hi = __ldg(&d.rowptr[row + 1]);
#pragma unroll
          for (int l = 0; l < N; l++) {
            const long long pos = PatchworkP1FindColumn(d.col, lo, hi, v[l]);
            if (pos < 0) missing++;
            else atomicAdd(&valsB[pos], Ae[k * N + l]);
          }
        }
      }
    }
    __syncthreads();

    for (long long i = threadIdx.x; i < nnz; i += THREADS) {
      const long long z = z0 + i;
      vals[d.vals_pos ? __ldg(&d.vals_pos[z]) : z] = fits ? sval[i] : 0;
    }
    __syncthreads(); /* the next patch reuses the shared memory */
  }
  if (degenerate) atomicAdd(&counts[0], degenerate);
  if (missing) atomicAdd(&counts[1], missing);
}

__global__ void AddBoundary(long long n, const double *__restrict__ valsB, const long long *__restrict__ pos, double *__restrict__ vals)
{
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) vals[pos ? __ldg(&pos[i]) : i] += valsB[i];
}

template <int DIM>
cudaError_t Launch(const PatchworkP1Desc *d, double *vals, double *valsB, unsigned long long *counts, cudaStream_t s)
{
  if (d->npatch > 0) {
    const unsigned grid = (unsigned)(d->npatch < 0x7fffffff ? d->npatch : 0x7fffffff);

    if (d->smem_bytes > 48 * 1024) {
      cudaError_t e = cudaFuncSetAttribute(PatchAssemble<DIM>, cudaFuncAttributeMaxDynamicSharedMemorySize, d->smem_bytes);
      if (e != cudaSuccess) return e;
    }
    PatchAssemble<DIM><<<grid, THREADS, (size_t)d->smem_bytes, s>>>(*d, vals, valsB, counts);
  }
  if (d->nnz > 0) {
    const long long blocks = (d->nnz + 255) / 256;
    AddBoundary<<<(unsigned)(blocks < 65535 * 16 ? blocks : 65535 * 16), 256, 0, s>>>(d->nnz, valsB, d->vals_pos, vals);
  }
  return cudaGetLastError();
}

} // namespace

extern "C" size_t PatchworkP1WorkBytes(const PatchworkP1Desc *d)
{
  return (size_t)(d->nnz > 0 ? d->nnz : 0) * sizeof(double) + 2 * sizeof(unsigned long long);
}

extern "C" int PatchworkP1AssembleCUDA(const PatchworkP1Desc *d, double *vals, void *work, PatchworkP1Errors *err, void *stream)
{
  cudaStream_t        s     = (cudaStream_t)stream;
  double             *valsB = (double *)work;
  unsigned long long *counts, h[2];
  int                 dev, optin;
  cudaError_t         e;

  if (!d || (d->dim != 2 && d->dim != 3) || d->nvert < 0 || d->ncell < 0 || d->nnz < 0 || d->npatch < 0 || d->smem_bytes < 0) return (int)cudaErrorInvalidValue;
  if ((d->nvert > 0 && d->npatch < 1) || (d->npatch > 0 && (!d->patch_ptr || !d->patch_cell || !d->rowptr)) || (d->ncell > 0 && (!d->cells || !d->coords)) || (d->nnz > 0 && (!d->col || !vals)) || !work) return (int)cudaErrorInvalidValue;
  if ((e = cudaGetDevice(&dev)) != cudaSuccess) return (int)e;
  if ((e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)) != cudaSuccess) return (int)e;
  if (d->smem_bytes > optin) return (int)cudaErrorInvalidValue;

  counts = (unsigned long long *)(valsB + (d->nnz > 0 ? d->nnz : 0));
  if ((e = cudaMemsetAsync(work, 0, PatchworkP1WorkBytes(d), s)) != cudaSuccess) return (int)e;
  e = d->dim == 3 ? Launch<3>(d, vals, valsB, counts, s) : Launch<2>(d, vals, valsB, counts, s);
  if (e != cudaSuccess) return (int)e;
  if (err) {
    if ((e = cudaMemcpyAsync(h, counts, sizeof(h), cudaMemcpyDeviceToHost, s)) != cudaSuccess) return (int)e;
    if ((e = cudaStreamSynchronize(s)) != cudaSuccess) return (int)e;
    err->degenerate = (long long)h[0];
    err->missing    = (long long)h[1];
  }
  return 0;
}
