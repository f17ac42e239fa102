/* Independent reference for the LOR tests: plain textbook Q1 assembly, element by element, written
   without the library's element code (include/patchwork/q1_element.h) on purpose, so both can be
   compared. Nothing here is tuned; clarity over speed. */
#include "lor_reference.h"

/* 2-point Gauss rule on [0,1], or the trapezoid rule (2-point Gauss-Lobatto: the vertices) */
static void GaussRule01(PetscBool vertex, PetscReal pts[2], PetscReal wts[2])
{
  const PetscReal d = vertex ? 0.5 : 0.5 / PetscSqrtReal(3.0);

  pts[0] = 0.5 - d;
  pts[1] = 0.5 + d;
  wts[0] = 0.5;
  wts[1] = 0.5;
}

/* Shape function a (a = ax + 2 ay + 4 az) of the reference cell [0,1]^dim and its reference gradient */
static void ShapeQ1(PetscInt dim, PetscInt a, const PetscReal xi[3], PetscReal *N, PetscReal dN[3])
{
  PetscReal f[3], df[3];

  for (PetscInt d = 0; d < dim; d++) {
    PetscInt bit = (a >> d) & 1;
    if (bit) {
      f[d]  = xi[d];
      df[d] = 1.0;
    } else {
      f[d]  = 1.0 - xi[d];
      df[d] = -1.0;
    }
  }
  *N = 1.0;
  for (PetscInt d = 0; d < dim; d++) *N *= f[d];
  for (PetscInt d = 0; d < dim; d++) {
    dN[d] = df[d];
    for (PetscInt e = 0; e < dim; e++)
      if (e != d) dN[d] *= f[e];
  }
}

/* Inverse and determinant of a dim x dim matrix (dim 2 or 3) by Cramer's rule: inv = adj(J)/det */
static PetscErrorCode InvertSmall(PetscInt dim, PetscReal J[3][3], PetscReal inv[3][3], PetscReal *det)
{
  PetscFunctionBeginUser;
  if (dim == 2) {
    *det      = J[0][0] * J[1][1] - J[0][1] * J[1][0];
    inv[0][0] = J[1][1];
    inv[0][1] = -J[0][1];
    inv[1][0] = -J[1][0];
    inv[1][1] = J[0][0];
  } else {
    /* cofactor C[i][j] of J; adj(J)[j][i] = C[i][j] */
    PetscReal C[3][3];
    for (PetscInt i = 0; i < 3; i++) {
      for (PetscInt j = 0; j < 3; j++) {
        PetscInt  r0 = (i + 1) % 3, r1 = (i + 2) % 3, c0 = (j + 1) % 3, c1 = (j + 2) % 3;
        /* the cyclic choice of rows/columns already carries the sign (-1)^(i+j) */
        C[i][j] = J[r0][c0] * J[r1][c1] - J[r0][c1] * J[r1][c0];
      }
    }
    *det = J[0][0] * C[0][0] + J[0][1] * C[0][1] + J[0][2] * C[0][2];
    for (PetscInt i = 0; i < 3; i++)
      for (PetscInt j = 0; j < 3; j++) inv[j][i] = C[i][j];
  }
  PetscCheck(*det != 0.0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "Degenerate Q1 element (det J = 0)");
  for (PetscInt i = 0; i < dim; i++)
    for (PetscInt j = 0; j < dim; j++) inv[i][j] /= *det;
  PetscFunctionReturn(0);
}

/* Element matrix Ke[a][b] (row major, 2^dim x 2^dim) of alpha*M + beta*K; X[a][d]: vertex coordinates */
static PetscErrorCode ElementMatrixQ1(PetscInt dim, PetscReal X[8][3], PetscReal alpha, PetscReal beta, PetscBool vertex, PetscReal Ke[64])
{
  const PetscInt nv = 1 << dim, nq = 1 << dim;
  PetscReal      pts[2], wts[2];

  PetscFunctionBeginUser;
  GaussRule01(vertex, pts, wts);
  for (PetscInt i = 0; i < nv * nv; i++) Ke[i] = 0.0;
  for (PetscInt q = 0; q < nq; q++) {
    PetscReal xi[3] = {0, 0, 0}, w = 1.0, N[8], dNref[8][3], dN[8][3], J[3][3], Jinv[3][3], det;

    /* quadrature point q = qx + 2 qy + 4 qz */
    for (PetscInt d = 0; d < dim; d++) {
      PetscInt qd = (q >> d) & 1;
      xi[d] = pts[qd];
      w *= wts[qd];
    }
    for (PetscInt a = 0; a < nv; a++) ShapeQ1(dim, a, xi, &N[a], dNref[a]);
    /* J[d][e] = dx_d / dxi_e */
    for (PetscInt d = 0; d < dim; d++) {
      for (PetscInt e = 0; e < dim; e++) {
        J[d][e] = 0.0;
        for (PetscInt a = 0; a < nv; a++) J[d][e] += X[a][d] * dNref[a][e];
      }
    }
    PetscCall(InvertSmall(dim, J, Jinv, &det));
    /* dN/dx_d = sum_e dN/dxi_e dxi_e/dx_d, i.e. J^{-T} times the reference gradient */
    for (PetscInt a = 0; a < nv; a++) {
      for (PetscInt d = 0; d < dim; d++) {
        dN[a][d] = 0.0;
        for (PetscInt e = 0; e < dim; e++) dN[a][d] += Jinv[e][d] * dNref[a][e];
      }
    }
    w *= PetscAbsReal(det);
    for (PetscInt a = 0; a < nv; a++) {
      for (PetscInt b = 0; b < nv; b++) {
        PetscReal grad = 0.0;
        for (PetscInt d = 0; d < dim; d++) grad += dN[a][d] * dN[b][d];
        Ke[a * nv + b] += w * (alpha * N[a] * N[b] + beta * grad);
      }
    }
  }
  PetscFunctionReturn(0);
}

PetscErrorCode PatchworkTestAssembleQ1Refined(DM dm, PetscReal alpha, PetscReal beta, PetscBool dirichlet, PetscBool vertex, Mat *A)
{
  PetscInt               dim, M[3], dof, sw, s[3], m[3], gs[3], gm[3], cs[3], cm[3], end[3], nown, nb = 0, *bnd;
  DMDAStencilType        stype;
  DM                     cdm;
  Vec                    cloc;
  const PetscScalar     *c;
  ISLocalToGlobalMapping ltog;
  MPI_Comm               comm;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectGetComm((PetscObject)dm, &comm));
  PetscCall(DMDAGetInfo(dm, &dim, &M[0], &M[1], &M[2], NULL, NULL, NULL, &dof, &sw, NULL, NULL, NULL, &stype));
  PetscCheck(dim == 2 || dim == 3, comm, PETSC_ERR_SUP, "Only 2D and 3D");
  PetscCheck(dof == 1, comm, PETSC_ERR_SUP, "Needs a DMDA with dof 1");
  PetscCheck(sw >= 1 && stype == DMDA_STENCIL_BOX, comm, PETSC_ERR_SUP, "Needs a box stencil of width >= 1");
  if (dim == 2) M[2] = 1;
  PetscCall(DMDAGetCorners(dm, &s[0], &s[1], &s[2], &m[0], &m[1], &m[2]));
  PetscCall(DMDAGetGhostCorners(dm, &gs[0], &gs[1], &gs[2], &gm[0], &gm[1], &gm[2]));
  PetscCall(DMGetLocalToGlobalMapping(dm, &ltog));

  PetscCall(DMGetCoordinateDM(dm, &cdm));
  PetscCall(DMDAGetGhostCorners(cdm, &cs[0], &cs[1], &cs[2], &cm[0], &cm[1], &cm[2]));
  PetscCall(DMGetCoordinatesLocal(dm, &cloc));
  PetscCheck(cloc, comm, PETSC_ERR_ARG_WRONGSTATE, "The DMDA has no coordinates");
  PetscCall(VecGetArrayRead(cloc, &c));

  nown = m[0] * m[1] * m[2];
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, nown, nown, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatSetType(*A, MATAIJ));
  PetscCall(MatSeqAIJSetPreallocation(*A, 27, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 27, NULL, 27, NULL));
  PetscCall(MatSetOption(*A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));

  /* cells owned by this rank: those whose lowest vertex it owns (2D: one layer in z) */
  for (PetscInt d = 0; d < 3; d++) end[d] = d < dim ? PetscMin(s[d] + m[d], M[d] - 1) : s[d] + 1;
  for (PetscInt k = s[2]; k < end[2]; k++) {
    for (PetscInt j = s[1]; j < end[1]; j++) {
      for (PetscInt i = s[0]; i < end[0]; i++) {
        const PetscInt nv = 1 << dim;
        PetscInt       loc[8], glob[8];
        PetscReal      X[8][3], Ke[64];

        for (PetscInt a = 0; a < nv; a++) {
          PetscInt v[3] = {i + (a & 1), j + ((a >> 1) & 1), k + ((a >> 2) & 1)}, lc;
          for (PetscInt d = 0; d < dim; d++) PetscCheck(v[d] < cs[d] + cm[d] && v[d] < gs[d] + gm[d], PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Cell vertex outside the ghosted box");
          loc[a] = ((v[2] - gs[2]) * gm[1] + (v[1] - gs[1])) * gm[0] + (v[0] - gs[0]);
          lc     = ((v[2] - cs[2]) * cm[1] + (v[1] - cs[1])) * cm[0] + (v[0] - cs[0]);
          for (PetscInt d = 0; d < 3; d++) X[a][d] = d < dim ? PetscRealPart(c[lc * dim + d]) : 0.0;
        }
        PetscCall(ElementMatrixQ1(dim, X, alpha, beta, vertex, Ke));
        PetscCall(ISLocalToGlobalMappingApply(ltog, nv, loc, glob));
        {
          PetscScalar vals[64];
          for (PetscInt t = 0; t < nv * nv; t++) vals[t] = Ke[t];
          PetscCall(MatSetValues(*A, nv, glob, nv, glob, vals, ADD_VALUES));
        }
      }
    }
  }
  PetscCall(VecRestoreArrayRead(cloc, &c));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));

  if (dirichlet) {
    PetscInt *lb;
    PetscCall(PetscMalloc2(nown, &lb, nown, &bnd));
    for (PetscInt k = s[2]; k < s[2] + m[2]; k++) {
      for (PetscInt j = s[1]; j < s[1] + m[1]; j++) {
        for (PetscInt i = s[0]; i < s[0] + m[0]; i++) {
          PetscBool onb = (PetscBool)(i == 0 || i == M[0] - 1 || j == 0 || j == M[1] - 1);
          if (dim == 3 && (k == 0 || k == M[2] - 1)) onb = PETSC_TRUE;
          if (onb) lb[nb++] = ((k - gs[2]) * gm[1] + (j - gs[1])) * gm[0] + (i - gs[0]);
        }
      }
    }
    PetscCall(ISLocalToGlobalMappingApply(ltog, nb, lb, bnd));
    PetscCall(MatZeroRowsColumns(*A, nb, bnd, 1.0, NULL, NULL));
    PetscCall(PetscFree2(lb, bnd));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode PatchworkTestPerturbCoordinates(DM dm, PetscReal amp)
{
  PetscInt     dim, M[3], n;
  PetscReal    lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0}, h[3] = {0, 0, 0};
  Vec          cg, cnew;
  PetscScalar *x;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetInfo(dm, &dim, &M[0], &M[1], &M[2], NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMGetCoordinates(dm, &cg));
  PetscCheck(cg, PetscObjectComm((PetscObject)dm), PETSC_ERR_ARG_WRONGSTATE, "The DMDA has no coordinates");
  /* the box from the coordinates themselves, so no cached bounding box can be stale */
  for (PetscInt d = 0; d < dim; d++) {
    PetscCall(VecStrideMin(cg, d, NULL, &lo[d]));
    PetscCall(VecStrideMax(cg, d, NULL, &hi[d]));
    h[d] = (hi[d] - lo[d]) / (PetscReal)(M[d] - 1);
  }
  /* modify a copy and set it: DMSetCoordinates drops the cached local coordinates */
  PetscCall(VecDuplicate(cg, &cnew));
  PetscCall(VecCopy(cg, cnew));
  PetscCall(VecGetLocalSize(cnew, &n));
  PetscCall(VecGetArray(cnew, &x));
  for (PetscInt p = 0; p < n / dim; p++) {
    PetscReal f = 1.0;
    for (PetscInt e = 0; e < dim; e++) {
      PetscReal t = (PetscRealPart(x[p * dim + e]) - lo[e]) / (hi[e] - lo[e]);
      f *= (t <= 0.0 || t >= 1.0) ? 0.0 : PetscSinReal(PETSC_PI * t); /* exactly 0 on the box: sin(pi) is not */
    }
    for (PetscInt d = 0; d < dim; d++) x[p * dim + d] += amp * h[d] * f;
  }
  PetscCall(VecRestoreArray(cnew, &x));
  PetscCall(DMSetCoordinates(dm, cnew));
  PetscCall(VecDestroy(&cnew));
  PetscFunctionReturn(0);
}
