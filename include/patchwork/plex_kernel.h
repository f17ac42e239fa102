/* Kernel ABI of the tensor-product operator on general (unstructured, possibly curved) quadrilateral
   and hexahedral cells: alpha*r(x)*M + beta*c(x)*K with geometric factors stored per quadrature point
   (or, for multilinear cells in the CUDA apply, computed at every point from the cell's corners).
   Plain C structs of sizes and raw pointers, no PETSc types: the CPU reference (src/core/plex_ref.c)
   and the CUDA kernels (cuda/plex_apply.cu) take the same input so that a test can compare them. */
#ifndef PATCHWORK_PLEX_KERNEL_H
#define PATCHWORK_PLEX_KERNEL_H

#include <patchwork/tensor_kernel.h>
#include <patchwork/basis1d.h>
#include <patchwork/host_device.h>

#define PW_MAX_Q (PW_MAX_N + 2) /* quadrature points per direction: up to k+3 */

/* Geometric factors per quadrature point, in this order:
   [0]         the mass factor  w |det J| alpha r(x)
   [1..]       the upper triangle, row by row, of the symmetric G = w |det J| beta c(x) J^-1 J^-T
               (2D: G00 G01 G11; 3D: G00 G01 G02 G11 G12 G22)
   with J = dx/dxi on the reference cell [0,1]^dim and w the product of the 1D weights on [0,1]. */
#define PW_PLEX_NCOMP(dim) ((dim) == 3 ? 7 : 4)

/* Application (and diagonal) of the operator. Cell c, component m, quadrature point q (lexicographic,
   x fastest: q = (qz*nq + qy)*nq + qx) lives at geom[((size_t)c*ncomp + m)*nq^dim + q]: per cell a
   structure of arrays, so that the threads of one cell read consecutive addresses. */
typedef struct {
  int           dim;       /* 2 or 3 */
  int           degree;    /* k >= 1: n = k+1 Gauss-Lobatto nodes per direction */
  int           nq;        /* quadrature points per direction, n <= nq <= PW_MAX_Q */
  int           collocated;/* the quadrature points are the nodes (nq == n, Gauss-Lobatto): interp is
                              the identity, and kernels may skip it */
  int           ncells;
  const int    *elem;      /* ncells x n^dim: index into x and y of node (i,j,l) of cell c at
                              elem[(size_t)c*n^dim + (l*n + j)*n + i]; -1: an eliminated (Dirichlet)
                              node, read as zero and never written */
  const double *geom;      /* ncells x ncomp x nq^dim, see above */
  const unsigned long long *hang; /* NULL on a conforming mesh, else ncells masks of hanging faces and
                              edges (hanging_kernel.h); the slots of a cell's hanging faces index the
                              coarse face's nodes, which the cell interpolates (C) before its
                              quadrature and C^T after */
  const double *hangP;     /* 2 x n x n: PatchworkHangingTables() (when hang is set) */
  const long long *hang_cells; /* the CUDA kernels only: the nhang cells whose mask is not regular */
  long long        nhang;      /* (PatchworkHangingRegular: none on a mesh), which a generic kernel
                                  applies after the templated one has skipped them */
  const long long *hang_diag;  /* the CUDA kernels only: c*n^dim + i for every unknown of a hanging cell */
  long long        nhang_diag; /* (the first slot i that holds it): one column of C^T A_c C each */
  double        interp[PW_MAX_Q * PW_MAX_N]; /* nq x n, row major: basis function i at point q, [q*n + i] */
  double        deriv[PW_MAX_Q * PW_MAX_Q];  /* nq x nq, row major: derivative at point q of the Lagrange
                                                polynomial through the quadrature points that is one at p,
                                                [q*nq + p] (the collocation derivative) */
  /* Geometry on the fly, for multilinear cells (a coordinate field of degree 1), the CUDA apply only:
     when corners is set, the apply computes the factors at every point from the cell's corners, with
     the coefficients, alpha, beta and the 1D rule below, exactly as the stored factors are defined
     above, and does not read geom. It then needs nq <= n + 2 and nhang == 0 (the templated kernels);
     the diagonal and the CPU reference always read geom. */
  const double *corners;   /* ncells x dim x 2^dim: coordinate d of corner v = (z*2 + y)*2 + x of cell c
                              (the node at (x, y, z) (n-1)) at corners[((size_t)c*dim + d)*2^dim + v] */
  const double *diffusion; /* with corners: ncells x nq^dim values of c(x) at the points, NULL: c = 1 */
  const double *reaction;  /* with corners: ncells x nq^dim values of r(x), NULL: r = 1 */
  double        alpha, beta;
  double        points[PW_MAX_Q], weights[PW_MAX_Q]; /* with corners: the 1D rule on [0,1] */
} PatchworkPlexDesc;

#define PW_PLEX_NCORNER(dim) ((dim) == 3 ? 8 : 4)

/* The node (lexicographic, n per direction) that is corner v = (z*2 + y)*2 + x of a cell: (x, y, z) (n-1) */
PW_HOST_DEVICE int PatchworkPlexCornerNode(int n, int v)
{
  return ((((v >> 2) & 1) * n + ((v >> 1) & 1)) * n + (v & 1)) * (n - 1);
}

/* Geometric factors from node coordinates and optional coefficient values at quadrature points. */
typedef struct {
  int           dim, degree, nq, ncells;
  const double *coords;    /* ncells x dim x n^dim: coordinate d of node (i,j,l) of cell c at
                              coords[((size_t)c*dim + d)*n^dim + (l*n + j)*n + i] */
  const double *diffusion; /* ncells x nq^dim values of c(x) at the quadrature points, NULL: c = 1 */
  const double *reaction;  /* ncells x nq^dim values of r(x), NULL: r = 1 */
  double        alpha, beta;
  double        weights[PW_MAX_Q];            /* 1D quadrature weights on [0,1] */
  double        interp[PW_MAX_Q * PW_MAX_N];  /* as in PatchworkPlexDesc */
  double        deriv[PW_MAX_Q * PW_MAX_Q];
} PatchworkPlexGeomDesc;

#ifdef __cplusplus
extern "C" {
#endif

/* The 1D tables of degree k (n = k+1 Gauss-Lobatto nodes) for nq points of rule q on [0,1]: points,
   weights, interp (nq x n) and the collocation derivative deriv (nq x nq). PW_QUAD_GAUSSLOBATTO
   requires nq == n (collocation). Returns nonzero on bad sizes. */
int PatchworkPlex1DTables(int degree, int nq, PatchworkQuadrature q, double *points, double *weights, double *interp, double *deriv);

/* CPU reference (src/core/plex_ref.c). Apply and diagonal ADD into y (the diagonal of C^T A_c C on
   cells with hanging faces or edges: one cell apply per unknown there). */
void PatchworkPlexApplyRef(const PatchworkPlexDesc *d, const double *x, double *y);
void PatchworkPlexDiagonalRef(const PatchworkPlexDesc *d, double *y);
/* Geometric factors into geom (ncells x ncomp x nq^dim). Returns the number of cells whose Jacobian
   determinant vanishes or changes sign at a quadrature point (0 for a valid mesh). */
int  PatchworkPlexGeometryRef(const PatchworkPlexGeomDesc *g, double *geom);
/* Physical coordinates of the quadrature points: xq[((size_t)c*dim + d)*nq^dim + q] */
void PatchworkPlexQuadCoordsRef(const PatchworkPlexGeomDesc *g, double *xq);

/* CUDA kernels (cuda/plex_apply.cu) on device pointers (every pointer member of the descriptors too),
   in stream (a cudaStream_t, NULL: default). They return 0 or a cudaError_t code. The geometry kernel
   writes the number of bad cells (as above) to *nbad, a host pointer, after synchronizing the stream. */
int PatchworkPlexApplyCUDA(const PatchworkPlexDesc *d, const double *x, double *y, void *stream);
int PatchworkPlexDiagonalCUDA(const PatchworkPlexDesc *d, double *y, void *stream);
int PatchworkPlexGeometryCUDA(const PatchworkPlexGeomDesc *g, double *geom, int *nbad, void *stream);

#ifdef __cplusplus
}
#endif
#endif
