/* One-dimensional Lagrange bases on Gauss-Lobatto nodes, quadrature rules and the 1D matrices the
   tensor-product kernels are built from. PETSc-free; all on the reference interval [0,1]. */
#ifndef PATCHWORK_BASIS1D_H
#define PATCHWORK_BASIS1D_H

typedef enum {
  PW_QUAD_GAUSS        = 0, /* k+1 Gauss points: exact mass and stiffness */
  PW_QUAD_GAUSSLOBATTO = 1  /* k+1 Gauss-Lobatto points collocated with the nodes: diagonal mass */
} PatchworkQuadrature;

#ifdef __cplusplus
extern "C" {
#endif
/* n points and weights on [0,1], ascending; return nonzero when n is out of range or Newton fails */
int  PatchworkGaussLobatto(int n, double *x, double *w);
int  PatchworkGauss(int n, double *x, double *w);
/* values and derivatives at t of the n Lagrange polynomials through nodes[] */
void PatchworkLagrangeEval(int n, const double *nodes, double t, double *phi, double *dphi);
/* n x n (n = degree+1) reference mass and stiffness matrices on [0,1], row major, for the Lagrange
   basis on Gauss-Lobatto nodes, integrated with quadrature q; nonzero on bad degree */
int  PatchworkTensor1DMatrices(int degree, PatchworkQuadrature q, double *mass, double *stiff);
#ifdef __cplusplus
}
#endif
#endif
