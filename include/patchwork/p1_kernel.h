/* Kernel ABI of the P1 assembly (Fu, Lewis, Kirby, Whitaker 2014, sections 3 and 4): the matrix of
   -div(sigma grad u) + lambda u, natural boundary conditions, piecewise linear elements on triangles
   (dim 2) or tetrahedra (dim 3), accumulated into the values of a given CSR pattern.
   Plain C structs, no PETSc types: the CPU reference (src/core/p1_ref.c) and the CUDA kernel
   (cuda/p1_assemble.cu) take the same descriptor.

   Element matrix of cell c with vertices x_0..x_dim, area/volume |T| and barycentric gradients g_k:
     A_kl = sigma_c |T| g_k . g_l + lambda |T| (1 + delta_kl) / ((dim+1)(dim+2))
   (exact: the gradients are constant, the mass integrand quadratic). Vertex order within a cell is
   free (|T| is taken absolute), so cells of either orientation give the same matrix.

   Layout (the paper's, for coalesced loads): coordinates and cell vertices are structures of arrays,
   coords[d*nvert + v] is component d of vertex v, cells[k*ncell + c] vertex k of cell c.
   The pattern is CSR over the nvert vertices, the columns of a row sorted ascending; it must hold
   every pair of vertices that share a cell (a missing one is counted, and its value dropped).
   Assembly assigns vals[rowptr[0] .. rowptr[nvert]): the sum over cells of their entries, zero
   where no cell contributes. Two optional maps let the caller keep its own orders: vals_pos puts
   pattern entry z at vals[vals_pos[z]] (a permutation of 0..nnz-1, e.g. the order of a COO list sorted
   by global row), sigma_map reads the coefficient of cell c from sigma[sigma_map[c]] (sigma in the
   caller's cell numbering, e.g. a PETSc Vec's array as it is).

   Patches (the CUDA kernel's work units; the reference ignores them): the vertices are numbered patch
   by patch, patch p owning rows [patch_ptr[p], patch_ptr[p+1]); the cells are sorted by patch, patch p
   owning cells [patch_cell[p], patch_cell[p+1]). Any assignment of cells to patches is correct; the
   paper's (and PatchworkP1LayoutCreate()'s) is the patch of the cell's vertex 0, so that most of a
   cell's rows are the patch's own. One CUDA block per patch:
     1. loads the patch's coordinates, row offsets and column indices into shared memory, zeroes the
        patch's values there;
     2. one thread per cell computes the element matrix (coordinates from shared memory when the vertex
        is the patch's, else from global memory);
     3. adds entry (k,l) to row x_k: found by binary search in shared memory with a shared atomicAdd when
        the row is the patch's, else by binary search in global memory with a global atomicAdd into a
        separate array (values_B of the paper);
     4. writes the patch's rows back, coalesced; a second kernel adds values_B.
   A patch whose data (PatchworkP1PatchBytes()) exceeds smem_bytes takes step 3's global path for all of
   its entries (and its step-1 coordinates from global memory): any patching is correct, patches that
   fit are fast. */
#ifndef PATCHWORK_P1_KERNEL_H
#define PATCHWORK_P1_KERNEL_H

#include <math.h>
#include <stddef.h>

#include <patchwork/host_device.h>

typedef struct {
  int              dim;        /* 2: triangles, 3: tetrahedra */
  int              nvert;      /* vertices = rows of the pattern */
  long long        ncell;      /* cells */
  const double    *coords;     /* [dim*nvert], coords[d*nvert + v] */
  const int       *cells;      /* [(dim+1)*ncell], cells[k*ncell + c] */
  const double    *sigma;      /* [ncell] diffusion coefficient per cell, or NULL for 1 */
  double           lambda;     /* reaction coefficient */
  long long        nnz;        /* pattern entries, rowptr[nvert] */
  const long long *rowptr;     /* [nvert+1] */
  const int       *col;        /* [nnz] */
  int              npatch;     /* patches (CUDA only) */
  const int       *patch_ptr;  /* [npatch+1]: rows of each patch, patch_ptr[0] = 0, patch_ptr[npatch] = nvert */
  const long long *patch_cell; /* [npatch+1]: cells of each patch, 0 .. ncell */
  int              smem_bytes; /* shared memory per block: patches needing more take the global path
                                  (0: every patch does; at most the device's opt-in limit) */
  const long long *vals_pos;   /* [nnz] or NULL: pattern entry z goes to vals[vals_pos[z]], else vals[z] */
  const int       *sigma_map;  /* [ncell] or NULL: cell c's coefficient is sigma[sigma_map[c]], else sigma[c] */
} PatchworkP1Desc;

/* Shared memory a patch of nrow rows and nnz pattern entries needs: its values (double), coordinates
   (dim doubles per row), column indices and row offsets (int) */
PW_HOST_DEVICE size_t PatchworkP1PatchBytes(int dim, long long nrow, long long nnz)
{
  return (size_t)nnz * (sizeof(double) + sizeof(int)) + (size_t)nrow * ((size_t)dim * sizeof(double) + sizeof(int)) + sizeof(int);
}

/* The element matrix of one cell, (dim+1)^2 row major, from its vertices xv (dim+1 of them, dim
   coordinates each, interleaved). Returns 1 when the cell is degenerate: its Jacobian determinant not
   finite or at most 64 eps times the product of its edge lengths from vertex 0 (a relative test, so that
   the reference and the CUDA kernel, which contracts to FMA, agree on flat cells); Ae is then not
   meaningful. Shared by the CPU reference and the CUDA kernel, hence the same arithmetic. */
PW_HOST_DEVICE int PatchworkP1ElementMatrix(int dim, const double *xv, double sigma, double lambda, double *Ae)
{
  double c[4][3], det, ad, s, m, scale = 1;
  int    n = dim + 1;

  if (dim == 3) {
    double e[3][3];
    for (int k = 0; k < 3; k++) {
      for (int d = 0; d < 3; d++) e[k][d] = xv[(k + 1) * 3 + d] - xv[d];
      scale *= e[k][0] * e[k][0] + e[k][1] * e[k][1] + e[k][2] * e[k][2];
    }
    /* rows of J^{-1} times det: the barycentric gradients g_k = c_k / det */
    for (int k = 0; k < 3; k++) {
      const double *a = e[(k + 1) % 3], *b = e[(k + 2) % 3];
      c[k + 1][0] = a[1] * b[2] - a[2] * b[1];
      c[k + 1][1] = a[2] * b[0] - a[0] * b[2];
      c[k + 1][2] = a[0] * b[1] - a[1] * b[0];
    }
    det = e[0][0] * c[1][0] + e[0][1] * c[1][1] + e[0][2] * c[1][2];
    ad  = fabs(det);
    s   = sigma / (6.0 * ad);  /* sigma |T| / det^2 with |T| = |det|/6 */
    m   = lambda * ad / 120.0; /* lambda |T| / 20 */
  } else {
    const double e1[2] = {xv[2] - xv[0], xv[3] - xv[1]}, e2[2] = {xv[4] - xv[0], xv[5] - xv[1]};
    scale   = (e1[0] * e1[0] + e1[1] * e1[1]) * (e2[0] * e2[0] + e2[1] * e2[1]);
    c[1][0] = e2[1];
    c[1][1] = -e2[0];
    c[2][0] = -e1[1];
    c[2][1] = e1[0];
    det     = e1[0] * e2[1] - e1[1] * e2[0];
    ad      = fabs(det);
    s       = sigma / (2.0 * ad); /* |T| = |det|/2 */
    m       = lambda * ad / 24.0; /* lambda |T| / 12 */
  }
  for (int d = 0; d < dim; d++) {
    c[0][d] = 0;
    for (int k = 1; k < n; k++) c[0][d] -= c[k][d];
  }
  for (int k = 0; k < n; k++)
    for (int l = k; l < n; l++) {
      double g = 0;
      for (int d = 0; d < dim; d++) g += c[k][d] * c[l][d];
      Ae[k * n + l] = Ae[l * n + k] = s * g + (k == l ? 2 * m : m);
    }
  /* (64 eps)^2 = 2^-80 */
  return !(ad * ad > 8.271806125530277e-25 * scale) || !isfinite(ad) || !isfinite(scale);
}

/* The position of column j in the sorted columns col[lo..hi), or -1 */
PW_HOST_DEVICE long long PatchworkP1FindColumn(const int *col, long long lo, long long hi, int j)
{
  const long long end = hi;

  while (lo < hi) {
    const long long mid = lo + (hi - lo) / 2;
    if (col[mid] < j) lo = mid + 1;
    else hi = mid;
  }
  return lo < end && col[lo] == j ? lo : -1;
}

/* What the assembly found wrong: degenerate cells (PatchworkP1ElementMatrix(): zero volume, or
   coordinates not finite; their entries are Inf, NaN or meaningless), and element entries whose column
   is missing from their row of the pattern */
typedef struct {
  long long degenerate, missing;
} PatchworkP1Errors;

/* The layout PatchworkP1LayoutCreate() derives from a cell list: the vertices renumbered patch by
   patch, the cells sorted by patch (vertex 0 of each cell its lowest new number, and in its patch), the
   pattern of the vertex graph. PatchworkP1LayoutCreateOrdered() gives the vertices the caller's numbering
   and keeps the cells in their order (cell_perm NULL), all in one patch: the layout of the CPU reference,
   which ignores patches. Arrays from malloc. */
typedef struct {
  int        dim, nvert;
  long long  ncell;
  int       *perm;       /* [nvert] old vertex of new vertex v */
  long long *cell_perm;  /* [ncell] old cell of new cell c, or NULL: the same */
  int       *cells;      /* [(dim+1)*ncell] new vertex numbers, structure of arrays as in the descriptor */
  long long *rowptr;     /* [nvert+1] */
  int       *col;        /* [rowptr[nvert]] */
  int        npatch;
  int       *patch_ptr;  /* [npatch+1] */
  long long *patch_cell; /* [npatch+1] */
  int        max_patch_rows;
  long long  max_patch_cells;
} PatchworkP1Layout;

#ifdef __cplusplus
extern "C" {
#endif
/* Layout of nvert vertices and ncell cells given as cells_in[c*(dim+1) + k] (old numbering, cell c's
   vertex k, interleaved): patches grown breadth-first over the vertex graph while their data fits in
   patch_bytes (PatchworkP1PatchBytes()); a vertex whose row alone does not fit makes a patch of its own.
   Returns 0, 1 on bad arguments (a vertex out of range, dim not 2 or 3), 2 when memory runs out. */
int  PatchworkP1LayoutCreate(int dim, int nvert, long long ncell, const int *cells_in, size_t patch_bytes, PatchworkP1Layout *L);
/* The same cell list in one patch: new vertex r is old vertex order[r] (order a permutation of 0..nvert-1,
   NULL for the identity), the cells in their order (each one's lowest new vertex moved to position 0), the
   columns of each row ascending in the new numbering. No patches to grow: a caller that numbers the
   vertices in the order of its own matrix rows needs no vals_pos. Returns as PatchworkP1LayoutCreate()
   (1 also when order is not a permutation). */
int  PatchworkP1LayoutCreateOrdered(int dim, int nvert, long long ncell, const int *cells_in, const int *order, PatchworkP1Layout *L);
void PatchworkP1LayoutDestroy(PatchworkP1Layout *L);
/* The descriptor of a layout (the coordinates, sigma, lambda and the optional maps are the caller's to
   set; they are NULL and 0 here) */
void PatchworkP1LayoutDesc(const PatchworkP1Layout *L, PatchworkP1Desc *d);

/* CPU reference (src/core/p1_ref.c): cells in order, entries in row-major order of the element matrix,
   each added to vals at the position of its column in its row (through vals_pos when given), the same
   PatchworkP1FindColumn() finds (short rows are searched without branches). vals is assigned; err may be
   NULL. */
void PatchworkP1AssembleRef(const PatchworkP1Desc *d, double *vals, PatchworkP1Errors *err);

/* CUDA (cuda/p1_assemble.cu), device pointers in stream (a cudaStream_t, NULL: default): the patch-based
   hierarchical assembly above. work is device scratch of PatchworkP1WorkBytes(d) bytes (values_B and
   the error counts). err (host, may be NULL): when given, the call waits for the stream and fills it.
   Returns 0 or a cudaError_t code (cudaErrorInvalidValue for a bad descriptor, among them smem_bytes
   above the device's opt-in limit). The atomics add in any order: results differ from the reference in
   the last bits and between runs. */
size_t PatchworkP1WorkBytes(const PatchworkP1Desc *d);
int    PatchworkP1AssembleCUDA(const PatchworkP1Desc *d, double *vals, void *work, PatchworkP1Errors *err, void *stream);
#ifdef __cplusplus
}
#endif
#endif
