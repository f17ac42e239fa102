/* Kernel ABI of PCVERTEXPATCH: the colored vertex-patch Schwarz smoother with fast-diagonalization
   local solvers, and the Q_k transfer between a mesh and its refinement by two in every direction.
   Plain C structs, no PETSc types: the CPU reference (src/core) and the CUDA kernels (cuda/) take
   the same descriptors. Index and box conventions are those of tensor_kernel.h. */
#ifndef PATCHWORK_PATCH_KERNEL_H
#define PATCHWORK_PATCH_KERNEL_H

#include <patchwork/tensor_kernel.h>

#define PW_PATCH_MAX_N  (2 * PW_MAX_DEGREE + 1) /* nodes of a 2-cell patch per direction, its boundary included */
#define PW_PATCH_MAX_NI (2 * PW_MAX_DEGREE - 1) /* interior nodes of a patch per direction */

/* The vertex patch of interior vertex v (global vertex index, 1 <= v_d <= N_d-1) is the 2^dim cells
   around it: node range [k*(v_d-1), k*(v_d+1)] per direction, (2k+1)^dim nodes, whose (2k-1)^dim
   interior nodes are the patch's unknowns. All patches of a Cartesian mesh are the same up to the
   coefficients, so one set of 1D data serves them all.

   Smooth (fused, the paper's eq. 8): for every patch of the given color in the vertex range,
     r_j = R_j b - Abar_j Rbar_j x   (local residual from the patch's (2k+1)^dim nodes of x)
     y  += omega * R_j^T A_j^{-1} r_j
   with A_j^{-1} = (S(x)S(x)S) diag(1 / (cm + cs0 lam_i + cs1 lam_j + cs2 lam_l)) (S(x)S(x)S)^T, where
   K_I S = M_I S diag(lam), S^T M_I S = I for the interior blocks M_I, K_I of the 1D patch matrices.
   Patches of one color have disjoint interiors and none reads another's interior, so y may be x
   itself (in-place multiplicative update). x and b are read through op.in box, y through op.out box.
   Nodes on the global boundary are read as zero in x when op.dirichlet (never written).

   Solve (the paper's "global" variant and the additive smoother): y += omega * R_j^T A_j^{-1} R_j r
   for every patch of the color, r read through op.in box.

   Residual (first half of the paper's "separate" variant): for every patch of the color,
   R_j y = R_j b - Abar_j Rbar_j x, i.e. the residual at the patch's interior nodes computed from its
   closure (it equals the global residual there: an interior node's cells are all in the patch).
   Only those nodes of y are written (assigned); y must not alias x or b. Followed by Solve on y. */
typedef struct {
  PatchworkTensorDesc op;                     /* level operator: coefficients, nodes, boxes, dirichlet */
  int                 color;                  /* bit d = parity of v_d of the patches handled */
  int                 vertex_start[3], vertex_end[3]; /* global vertex range [start,end) (2D: [0,1) in z) */
  double              omega;                  /* damping of the update (1 for multiplicative) */
  double              patch_mass[PW_PATCH_MAX_NI * PW_PATCH_MAX_N];  /* interior rows of the 1D patch mass, (2k-1) x (2k+1), row major */
  double              patch_stiff[PW_PATCH_MAX_NI * PW_PATCH_MAX_N]; /* same for stiffness */
  double              eigvec[PW_PATCH_MAX_NI * PW_PATCH_MAX_NI];     /* S, (2k-1) x (2k-1), row major, M_I-orthonormal columns */
  double              eigval[PW_PATCH_MAX_NI];                       /* lam */
} PatchworkPatchDesc;

/* Transfer between the coarse mesh (N_d cells) and the fine mesh (2 N_d cells), iterating over fine
   cells: fine cell f lies in coarse cell f/2 as child a = f mod 2, and
     prolong:  y_fine   += W P x_coarse   (P: Q_k interpolation; W: 1/(number of fine cells sharing
                                            the node), so that summing over cells gives P exactly)
     restrict: y_coarse += P^T W x_fine
   interp[a] is the (k+1) x (k+1) row-major matrix phi_j((a + xi_i)/2) of the coarse basis at the
   child's Gauss-Lobatto nodes xi_i. With dirichlet, global-boundary nodes are read as zero and
   never written, on both meshes. */
typedef struct {
  int    dim, degree;
  int    fine_nodes[3];                       /* global fine node counts, 2 k N_d + 1 */
  int    cell_start[3], cell_end[3];          /* fine cells applied, [start,end) */
  int    fine_start[3], fine_size[3];         /* box of the fine array */
  int    coarse_start[3], coarse_size[3];     /* box of the coarse array */
  int    dirichlet;
  double interp[2][PW_MAX_N * PW_MAX_N];
} PatchworkTransferDesc;

#ifdef __cplusplus
extern "C" {
#endif
/* 1D data: fills patch_mass, patch_stiff, eigvec, eigval of d from d->op.degree and the op's 1D
   matrices (d->op.mass1d, d->op.stiff1d must be set); nonzero on failure */
int  PatchworkPatchSetUp1D(PatchworkPatchDesc *d);
/* fills interp[][] for degree; nonzero on bad degree */
int  PatchworkTransferSetUp1D(int degree, PatchworkTransferDesc *d);
/* symmetric-definite generalized eigenproblem K S = M S diag(lam), S^T M S = I, n <= PW_PATCH_MAX_NI,
   eigenvalues ascending; nonzero if M is not positive definite */
int  PatchworkGeneralizedEigen(int n, const double *K, const double *M, double *S, double *lam);

/* CPU reference (src/core) */
void PatchworkPatchSmoothRef(const PatchworkPatchDesc *d, const double *x, const double *b, double *y);
void PatchworkPatchSmoothRefFloat(const PatchworkPatchDesc *d, const float *x, const float *b, float *y);
void PatchworkPatchSolveRef(const PatchworkPatchDesc *d, const double *r, double *y);
void PatchworkPatchSolveRefFloat(const PatchworkPatchDesc *d, const float *r, float *y);
void PatchworkPatchResidualRef(const PatchworkPatchDesc *d, const double *x, const double *b, double *y);
void PatchworkPatchResidualRefFloat(const PatchworkPatchDesc *d, const float *x, const float *b, float *y);
void PatchworkProlongRef(const PatchworkTransferDesc *d, const double *coarse, double *fine);
void PatchworkProlongRefFloat(const PatchworkTransferDesc *d, const float *coarse, float *fine);
void PatchworkRestrictRef(const PatchworkTransferDesc *d, const double *fine, double *coarse);
void PatchworkRestrictRefFloat(const PatchworkTransferDesc *d, const float *fine, float *coarse);

/* CUDA (cuda/), device pointers, stream a cudaStream_t; return 0 or a cudaError_t code */
int PatchworkPatchSmoothCUDA(const PatchworkPatchDesc *d, const double *x, const double *b, double *y, void *stream);
int PatchworkPatchSmoothCUDAFloat(const PatchworkPatchDesc *d, const float *x, const float *b, float *y, void *stream);
int PatchworkPatchSolveCUDA(const PatchworkPatchDesc *d, const double *r, double *y, void *stream);
int PatchworkPatchSolveCUDAFloat(const PatchworkPatchDesc *d, const float *r, float *y, void *stream);
int PatchworkPatchResidualCUDA(const PatchworkPatchDesc *d, const double *x, const double *b, double *y, void *stream);
int PatchworkPatchResidualCUDAFloat(const PatchworkPatchDesc *d, const float *x, const float *b, float *y, void *stream);
int PatchworkProlongCUDA(const PatchworkTransferDesc *d, const double *coarse, double *fine, void *stream);
int PatchworkProlongCUDAFloat(const PatchworkTransferDesc *d, const float *coarse, float *fine, void *stream);
int PatchworkRestrictCUDA(const PatchworkTransferDesc *d, const double *fine, double *coarse, void *stream);
int PatchworkRestrictCUDAFloat(const PatchworkTransferDesc *d, const float *fine, float *coarse, void *stream);
#ifdef __cplusplus
}
#endif
#endif
