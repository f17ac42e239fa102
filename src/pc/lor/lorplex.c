/* PCLOR on the operator of a DMPlex mesh (MatCreatePatchworkTensor() on quadrilaterals or
   hexahedra, curved cells, variable coefficients): every cell is split at its (k+1)^dim nodes into
   k^dim Q1 sub-cells, whose element matrices (q1_element.h, the coefficients interpolated from their
   values at the nodes) go into the matrix in COO form, cell by cell. PETSc sums the entries of nodes
   shared by cells and sends those of other ranks' rows to them. Constrained nodes (essential
   conditions) are not unknowns of the operator: their entries are left out, the elimination the
   operator itself makes. The values are computed on the host, also for a device matrix. */
#include "lorimpl.h"
#include <patchwork/q1_element.h>

/* Every entry of every sub-cell, in one fixed order: counted (ci, cj, v NULL), the pattern (ci, cj)
   or the values (v) */
static void Traverse(const PatchworkPlexLORData *d, PetscBool vertex, PetscCount *n, PetscInt *ci, PetscInt *cj, PetscScalar *v)
{
  const PetscInt k = d->degree, dim = d->dim, nv = 1 << dim, nsub = dim == 3 ? k * k * k : k * k;

  *n = 0;
  for (PetscInt c = 0; c < d->ncells; c++) {
    const PetscInt *rows = d->rows + c * d->nodes;

    for (PetscInt sub = 0; sub < nsub; sub++) {
      const PetscInt s[3] = {sub % k, (sub / k) % k, sub / (k * k)};
      PetscInt       node[8];
      double         xv[24], r[8], dc[8], Ke[64];

      for (int a = 0; a < nv; a++) node[a] = (s[0] + (a & 1)) + (k + 1) * ((s[1] + ((a >> 1) & 1)) + (k + 1) * (s[2] + ((a >> 2) & 1)));
      if (v) {
        for (int a = 0; a < nv; a++) {
          for (PetscInt e = 0; e < dim; e++) xv[a * dim + e] = d->coords[(c * dim + e) * d->nodes + node[a]];
          if (d->reaction) r[a] = d->reaction[c * d->nodes + node[a]];
          if (d->diffusion) dc[a] = d->diffusion[c * d->nodes + node[a]];
        }
        PatchworkQ1ElementMatrixCoef((int)dim, xv, (double)d->alpha, (double)d->beta, d->reaction ? r : NULL, d->diffusion ? dc : NULL, vertex ? 1 : 0, Ke);
      }
      for (int a = 0; a < nv; a++) {
        if (rows[node[a]] < 0) continue;
        for (int b = 0; b < nv; b++) {
          if (rows[node[b]] < 0) continue;
          if (ci) {
            ci[*n] = rows[node[a]];
            cj[*n] = rows[node[b]];
          }
          if (v) v[*n] = Ke[a * nv + b];
          (*n)++;
        }
      }
    }
  }
}

PetscErrorCode PCLORCreatePatternPlex(PC pc, const PatchworkPlexLORData *d)
{
  PC_LOR    *lor = (PC_LOR *)pc->data;
  PetscCount n;
  PetscInt  *ci, *cj;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PATCHWORK_LORPattern, pc, 0, 0, 0));
  PetscCall(PCLORDestroyPattern(pc));
  Traverse(d, PETSC_FALSE, &n, NULL, NULL, NULL);
  PetscCall(PetscMalloc2(n, &ci, n, &cj));
  Traverse(d, PETSC_FALSE, &n, ci, cj, NULL);
  PetscCall(PCLORCreateMatrixCOO(pc, n, ci, cj, PETSC_TRUE));
  PetscCall(PetscFree2(ci, cj));
  lor->ncoo = lor->nkeep = n;
  lor->npattern++;
  PetscCall(PetscLogEventEnd(PATCHWORK_LORPattern, pc, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCLORAssemblePlex(PC pc, const PatchworkPlexLORData *d)
{
  PC_LOR      *lor = (PC_LOR *)pc->data;
  PetscCount   n;
  PetscScalar *v;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(lor->nkeep, &v));
  PetscCall(PetscLogEventBegin(PATCHWORK_LORMacro, pc, 0, 0, 0));
  Traverse(d, (PetscBool)(lor->quadrature == PATCHWORK_QUADRATURE_GAUSSLOBATTO), &n, NULL, NULL, v);
  PetscCall(PetscLogEventEnd(PATCHWORK_LORMacro, pc, 0, 0, 0));
  PetscCheck(n == lor->nkeep, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The LOR pattern has %" PetscCount_FMT " entries but the values %" PetscCount_FMT, lor->nkeep, n);
  PetscCall(PetscLogEventBegin(PATCHWORK_LORSetValues, pc, 0, 0, 0));
  PetscCall(MatSetValuesCOO(lor->A, v, INSERT_VALUES));
  PetscCall(PetscLogEventEnd(PATCHWORK_LORSetValues, pc, 0, 0, 0));
  PetscCall(PetscFree(v));
  PetscFunctionReturn(PETSC_SUCCESS);
}
