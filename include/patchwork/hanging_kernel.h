/* Hanging-node constraints of a Q_k cell of a 1-irregular non-conforming quadrilateral or hexahedral
   mesh, applied per cell inside the operator (Ljungkvist 2017, section 3.3): a fine cell whose face
   (in 3D also an edge) lies inside a face (edge) of a coarser neighbour has no unknowns of its own
   there; its values on that face are the coarse face's polynomial.

   The element restriction gathers the coarse face's (k+1)^(dim-1) nodes into the fine cell's own
   slots of that face, in the fine cell's orientation, so that orientation never reaches the kernels
   ("raw" values). The cell's mask then says which faces and edges hang and which half of the coarse
   face (edge) the fine one covers, per tangential direction, and the constraint C interpolates in
   place, sum-factorized:
       u(i, j) = sum_{p,q} P[s1][i][p] P[s2][j][q] raw(p, q),   P[s][i][p] = l_p((s + xi_i) / 2)
   with xi the n = k+1 Gauss-Lobatto nodes on [0,1] and l_p the Lagrange basis on them (2D: one
   tangential direction). A node on several hanging faces or edges of the cell (their common edge or
   vertex) takes its value from the first of them, faces before edges, each in index order: all give
   the same value there on a consistent mesh, and C^T must count every node once. Every other node
   keeps its raw value.

   Cell-local arrays hold n^dim values, lexicographic, x fastest. Mask bits (unsigned long long):
     face f = 2*d + side (normal direction d; side 0: x_d = 0, side 1: x_d = 1), 2*dim faces:
       bit f                                 the face hangs
       bit PW_HANG_FACE_POS + (dim-1)*f + t  its half along the t-th tangential direction (the
                                             directions other than d, ascending): 0 lower, 1 upper
     3D edge e = 4*d + 2*b + a, along direction d at coordinate a (0 or 1) in the first other
     direction and b in the second:
       bit PW_HANG_EDGE + e                  the edge hangs (only edges on no hanging face)
       bit PW_HANG_EDGE_POS + e              its half along d
   On a mesh the halves follow from the fine cell's position in its parent; the mask keeps them per
   face and edge so that it needs nothing else. PETSc-free: the CPU reference (src/core/hanging_ref.c)
   is what the kernels will be tested against. */
#ifndef PATCHWORK_HANGING_KERNEL_H
#define PATCHWORK_HANGING_KERNEL_H

#define PW_HANG_FACE_POS 6
#define PW_HANG_EDGE     18
#define PW_HANG_EDGE_POS 30

#include <patchwork/host_device.h>

/* Whether a mask is what a 1-irregular mesh gives (a child cell hangs only on the boundary of its
   parent): per direction at most one hanging face and at most one hanging edge, and no hanging edge on
   a hanging face. The templated CUDA kernels apply such cells themselves; others take the generic one. */
PW_HOST_DEVICE int PatchworkHangingRegular(int dim, unsigned long long mask)
{
  for (int d = 0; d < dim; d++) {
    const unsigned edges = dim == 3 ? (unsigned)(mask >> (PW_HANG_EDGE + 4 * d)) & 15u : 0u;

    if (((mask >> (2 * d)) & 3) == 3) return 0;
    if (edges & (edges - 1)) return 0;
    if (edges) {
      const int k = edges & 1 ? 0 : edges & 2 ? 1 : edges & 4 ? 2 : 3, a = k & 1, b = k >> 1;
      const int o0 = d == 0 ? 1 : 0, o1 = d == 2 ? 1 : 2;

      if ((mask >> (2 * o0 + a)) & 1 || (mask >> (2 * o1 + b)) & 1) return 0;
    }
  }
  return 1;
}

#ifdef __cplusplus
extern "C" {
#endif

/* The two n x n interpolation matrices from a coarse face (edge) to its halves: P[(s*n + i)*n + p],
   2 n^2 values, n = degree + 1. Nonzero on a bad degree. */
int  PatchworkHangingTables(int degree, double *P);
/* u: n^dim raw values in, the constrained values C u out (in place) */
void PatchworkHangingApplyRef(int dim, int degree, unsigned long long mask, const double *P, double *u);
/* y: n^dim values at the cell's nodes in, C^T y out (in place) */
void PatchworkHangingApplyTransposeRef(int dim, int degree, unsigned long long mask, const double *P, double *y);
/* Row `node` of C: the raw slots its value combines (slot[]) with their weights (w[]), at most n^2 of
   them; returns how many (1 and the node itself with weight 1 for a free node) */
int  PatchworkHangingRow(int dim, int degree, unsigned long long mask, const double *P, int node, int *slot, double *w);

#ifdef __cplusplus
}
#endif
#endif
