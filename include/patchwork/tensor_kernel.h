/* Kernel ABI of the Cartesian tensor-product operator.
   Plain C structs of sizes, strides and coefficients: no PETSc types, so that the CPU reference
   (src/core) and the CUDA kernels (cuda/) take the same input and a test can compare them. */
#ifndef PATCHWORK_TENSOR_KERNEL_H
#define PATCHWORK_TENSOR_KERNEL_H

#define PW_MAX_DEGREE 10
#define PW_MAX_N      (PW_MAX_DEGREE + 1)

/* Scatter of cell results into the output array (CUDA only; the CPU reference is serial). */
typedef enum {
  PW_SCATTER_ATOMIC  = 0, /* one launch, atomicAdd on shared nodes */
  PW_SCATTER_COLORED = 1  /* 2^dim launches over cells of equal index parity, plain adds */
} PatchworkScatter;

/* The operator alpha*M + beta*K of continuous Q_k elements on an axis-aligned box mesh.
   Nodes are numbered lexicographically, x fastest. Node (i,j,l) of cell (ex,ey,ez) has global node
   index (k*ex+i, k*ey+j, k*ez+l). Arrays are boxes of the global node grid: entry (gx,gy,gz) of an
   array with box (start,size) lives at ((gz-start[2])*size[1] + gy-start[1])*size[0] + gx-start[0].
   In 2D the third entries are nodes=1, cells [0,1), start=0, size=1. */
typedef struct {
  int    dim;                         /* 2 or 3 */
  int    degree;                      /* k >= 1; n = k+1 nodes per cell and direction */
  int    nodes[3];                    /* global node counts per direction, k*N_d+1 */
  int    cell_start[3], cell_end[3];  /* global cell index range this call applies, [start,end) */
  int    in_start[3], in_size[3];     /* box of the input array */
  int    out_start[3], out_size[3];   /* box of the output array */
  int    dirichlet;                   /* nonzero: nodes on the boundary of the global grid are
                                         eliminated: read as zero, never written by apply/diagonal */
  int    scatter;                     /* PatchworkScatter */
  int    overwrite;                   /* nonzero: apply and diagonal SET y on the whole out box (as
                                         if it were zeroed first) instead of adding into it */
  double coef_mass;                   /* alpha * |cell| */
  double coef_stiff[3];               /* beta * |cell| / h_d^2 */
  double mass1d[PW_MAX_N * PW_MAX_N];  /* 1D mass matrix on the reference [0,1], row major n x n */
  double stiff1d[PW_MAX_N * PW_MAX_N]; /* 1D stiffness matrix on [0,1], row major n x n */
} PatchworkTensorDesc;

#ifdef __cplusplus
extern "C" {
#endif

/* CPU reference (src/core/tensor_ref.c). Apply and diagonal ADD the contribution of the cells in
   [cell_start,cell_end) into y (out box), or set y when d->overwrite; x is read through the in box. */
void PatchworkTensorApplyRef(const PatchworkTensorDesc *d, const double *x, double *y);
void PatchworkTensorApplyRefFloat(const PatchworkTensorDesc *d, const float *x, float *y);
void PatchworkTensorDiagonalRef(const PatchworkTensorDesc *d, double *y);
/* Dirichlet rows: for every global-boundary node inside the out box, y = x (x has the out box too),
   or y = 1 when x is NULL (the diagonal). Does nothing when d->dirichlet is zero. */
void PatchworkTensorBoundaryRef(const PatchworkTensorDesc *d, const double *x, double *y);

/* CUDA kernels (cuda/tensor_*.cu), on device pointers, in stream (a cudaStream_t, NULL: default).
   They return 0 or a cudaError_t code; PatchworkCUDAErrorString() names it. */
int         PatchworkTensorApplyCUDA(const PatchworkTensorDesc *d, const double *x, double *y, void *stream);
int         PatchworkTensorApplyCUDAFloat(const PatchworkTensorDesc *d, const float *x, float *y, void *stream);
int         PatchworkTensorDiagonalCUDA(const PatchworkTensorDesc *d, double *y, void *stream);
int         PatchworkTensorBoundaryCUDA(const PatchworkTensorDesc *d, const double *x, double *y, void *stream);
const char *PatchworkCUDAErrorString(int err);

#ifdef __cplusplus
}
#endif
#endif
