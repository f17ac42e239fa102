/* PCLOR on the operator of a DMPlex mesh (MatCreatePatchworkTensor() on quadrilaterals or
   hexahedra, curved cells, variable coefficients): every cell is split at its (k+1)^dim nodes into
   k^dim Q1 sub-cells, whose element matrices (q1_element.h, the coefficients interpolated from their
   values at the nodes) go into the matrix in COO form, cell by cell. PETSc sums the entries of nodes
   shared by cells and sends those of other ranks' rows to them. Constrained nodes (essential
   conditions) are not unknowns of the operator: their entries are left out, the elimination the
   operator itself makes. The values come from PatchworkLORPlexValuesRef() or, for a device matrix,
   from the CUDA kernel on device arrays (lor_kernel.h). With hanging nodes the matrix is P^T A_LOR P
   (TraverseHanging(), on the host). */
#include "lorimpl.h"
#include <patchwork/vec_kernel.h>

static PetscInt SubcellCount(const PatchworkPlexLORData *d)
{
  return d->dim == 3 ? d->degree * d->degree * d->degree : d->degree * d->degree;
}

/* The pattern of every sub-cell, in the kernels' order: its unknown vertices (mask), the position
   of its first entry (offset) and, when ci is given, the rows and columns of its entries */
static PetscCount Traverse(const PatchworkPlexLORData *d, unsigned char *mask, long long *offset, PetscInt *ci, PetscInt *cj)
{
  const PetscInt k = d->degree, dim = d->dim, nv = 1 << dim, nsub = SubcellCount(d);
  PetscCount     n = 0;

  for (PetscInt c = 0; c < d->ncells; c++) {
    const PetscInt *rows = d->rows + c * d->nodes;

    for (PetscInt sub = 0; sub < nsub; sub++) {
      PetscInt       row[8];
      unsigned       m = 0;

      for (int a = 0; a < nv; a++) {
        row[a] = rows[PatchworkLORPlexSubcellNode((int)dim, (int)k, (int)sub, a)];
        if (row[a] >= 0) m |= 1u << a;
      }
      mask[c * nsub + sub]   = (unsigned char)m;
      offset[c * nsub + sub] = (long long)n;
      for (int a = 0; a < nv; a++) {
        if (row[a] < 0) continue;
        for (int b = 0; b < nv; b++) {
          if (row[b] < 0) continue;
          if (ci) {
            ci[n] = row[a];
            cj[n] = row[b];
          }
          n++;
        }
      }
    }
  }
  return n;
}

static void FillDesc(PC pc, const PatchworkPlexLORData *d, PatchworkLORPlexDesc *desc)
{
  PC_LOR *lor = (PC_LOR *)pc->data;

  desc->dim         = (int)d->dim;
  desc->degree      = (int)d->degree;
  desc->nodes       = (int)d->nodes;
  desc->ncells      = (long)d->ncells;
  desc->alpha       = (double)d->alpha;
  desc->beta        = (double)d->beta;
  desc->vertex_rule = lor->quadrature == PATCHWORK_QUADRATURE_GAUSSLOBATTO;
}

/* Hanging nodes: every vertex of a sub-cell is a combination of unknowns (its row of the cell's
   constraint P), so each entry (a, b) of the sub-cell's matrix spreads over the products of their
   combinations: P^T A_LOR P (Pazner et al. 2023, section 2.4). Pattern (ci, cj) or values (v), on the
   host, in one order; returns the number of entries. */
static PetscCount TraverseHanging(const PatchworkPlexLORData *d, const PatchworkLORPlexDesc *desc, PetscInt *ci, PetscInt *cj, PetscScalar *v)
{
  const PetscInt k = d->degree, dim = d->dim, nv = 1 << dim, nsub = SubcellCount(d);
  PetscCount     n = 0;

  for (PetscInt c = 0; c < d->ncells; c++)
    for (PetscInt sub = 0; sub < nsub; sub++) {
      PetscInt       node[8];
      double         Ke[64];

      for (int a = 0; a < nv; a++) node[a] = c * d->nodes + PatchworkLORPlexSubcellNode((int)dim, (int)k, (int)sub, a);
      if (v) {
        if (dim == 3) PatchworkLORPlexSubcellMatrix(3, desc, (long)c, (int)sub, d->coords, d->reaction, d->diffusion, Ke);
        else PatchworkLORPlexSubcellMatrix(2, desc, (long)c, (int)sub, d->coords, d->reaction, d->diffusion, Ke);
      }
      for (int a = 0; a < nv; a++)
        for (int b = 0; b < nv; b++)
          for (PetscInt p = d->xptr[node[a]]; p < d->xptr[node[a] + 1]; p++)
            for (PetscInt q = d->xptr[node[b]]; q < d->xptr[node[b] + 1]; q++) {
              if (ci) {
                ci[n] = d->xrow[p];
                cj[n] = d->xrow[q];
              }
              if (v) v[n] = d->xw[p] * d->xw[q] * Ke[a * nv + b];
              n++;
            }
    }
  return n;
}

static PetscErrorCode CreatePatternHanging(PC pc, const PatchworkPlexLORData *d)
{
  PC_LOR              *lor = (PC_LOR *)pc->data;
  PatchworkLORPlexDesc desc;
  PetscCount           n;
  PetscInt            *ci, *cj;

  PetscFunctionBegin;
  FillDesc(pc, d, &desc);
  n = TraverseHanging(d, &desc, NULL, NULL, NULL);
  PetscCall(PetscMalloc2(n, &ci, n, &cj));
  (void)TraverseHanging(d, &desc, ci, cj, NULL);
  PetscCall(PCLORCreateMatrixCOO(pc, n, ci, cj, PETSC_TRUE));
  PetscCall(PetscFree2(ci, cj));
  lor->ncoo = lor->nkeep = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCLORCreatePatternPlex(PC pc, const PatchworkPlexLORData *d)
{
  PC_LOR        *lor  = (PC_LOR *)pc->data;
  const size_t   nsub = (size_t)d->ncells * SubcellCount(d);
  PetscCount     n;
  PetscInt      *ci, *cj;
  unsigned char *mask;
  long long     *offset;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PATCHWORK_LORPattern, pc, 0, 0, 0));
  PetscCall(PCLORDestroyPattern(pc));
  if (d->xptr) {
    PetscCall(CreatePatternHanging(pc, d));
    lor->npattern++;
    PetscCall(PetscLogEventEnd(PATCHWORK_LORPattern, pc, 0, 0, 0));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscMalloc1(nsub, &mask));
  PetscCall(PetscMalloc1(nsub, &offset));
  n = Traverse(d, mask, offset, NULL, NULL);
  PetscCall(PetscMalloc2(n, &ci, n, &cj));
  (void)Traverse(d, mask, offset, ci, cj);
  PetscCall(PCLORCreateMatrixCOO(pc, n, ci, cj, PETSC_TRUE));
  PetscCall(PetscFree2(ci, cj));
  if (lor->device) {
#if defined(PATCHWORK_HAVE_CUDA)
    void *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
    PatchworkCallKernel(PatchworkDeviceMalloc(nsub * sizeof(long long), (void **)&lor->keep));
    PatchworkCallKernel(PatchworkDeviceMalloc(nsub, (void **)&lor->submask));
    PatchworkCallKernel(PatchworkDeviceCopyToDevice(lor->keep, offset, nsub * sizeof(long long), stream));
    PatchworkCallKernel(PatchworkDeviceCopyToDevice(lor->submask, mask, nsub, stream));
    PetscCall(PetscLogCpuToGpu((PetscLogDouble)nsub * (sizeof(long long) + 1)));
    PetscCall(PatchworkDeviceSynchronize()); /* before the host copies go */
#endif
    PetscCall(PetscFree(mask));
    PetscCall(PetscFree(offset));
  } else {
    lor->keep    = offset;
    lor->submask = mask;
  }
  lor->ncoo = lor->nkeep = n;
  lor->npattern++;
  PetscCall(PetscLogEventEnd(PATCHWORK_LORPattern, pc, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCLORAssemblePlex(PC pc, const PatchworkPlexLORData *d)
{
  PC_LOR              *lor    = (PC_LOR *)pc->data;
  const PetscBool      kernel = (PetscBool)(lor->device && !d->xptr); /* hanging nodes: on the host (PETSc copies the values to a device matrix) */
  PatchworkLORPlexDesc desc;
  double              *v;

  PetscFunctionBegin;
  FillDesc(pc, d, &desc);
  if (kernel) {
#if defined(PATCHWORK_HAVE_CUDA)
    const size_t nn = (size_t)d->ncells * d->nodes;
    void        *stream;
    double      *xd, *rd = NULL, *cd = NULL;

    PetscCall(PatchworkGetDeviceStream(&stream));
    PatchworkCallKernel(PatchworkDeviceMalloc(nn * d->dim * sizeof(double), (void **)&xd));
    PatchworkCallKernel(PatchworkDeviceCopyToDevice(xd, d->coords, nn * d->dim * sizeof(double), stream));
    if (d->reaction) {
      PatchworkCallKernel(PatchworkDeviceMalloc(nn * sizeof(double), (void **)&rd));
      PatchworkCallKernel(PatchworkDeviceCopyToDevice(rd, d->reaction, nn * sizeof(double), stream));
    }
    if (d->diffusion) {
      PatchworkCallKernel(PatchworkDeviceMalloc(nn * sizeof(double), (void **)&cd));
      PatchworkCallKernel(PatchworkDeviceCopyToDevice(cd, d->diffusion, nn * sizeof(double), stream));
    }
    PetscCall(PetscLogCpuToGpu((PetscLogDouble)nn * (d->dim + !!d->reaction + !!d->diffusion) * sizeof(double)));
    PatchworkCallKernel(PatchworkDeviceMalloc((size_t)lor->nkeep * sizeof(double), (void **)&v));
    PetscCall(PetscLogEventBegin(PATCHWORK_LORMacro, pc, 0, 0, 0));
    PetscCall(PetscLogGpuTimeBegin());
    PatchworkCallKernel(PatchworkLORPlexValuesCUDA(&desc, xd, rd, cd, lor->submask, lor->keep, v, stream));
    PetscCall(PetscLogGpuTimeEnd());
    PetscCall(PetscLogEventEnd(PATCHWORK_LORMacro, pc, 0, 0, 0));
    /* cudaFree waits for the kernel, so the host arrays may go after it */
    PatchworkCallKernel(PatchworkDeviceFree(xd));
    PatchworkCallKernel(PatchworkDeviceFree(rd));
    PatchworkCallKernel(PatchworkDeviceFree(cd));
#else
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "A device matrix, but Patchwork was built without CUDA");
#endif
  } else {
    PetscCall(PetscMalloc1(lor->nkeep, &v));
    PetscCall(PetscLogEventBegin(PATCHWORK_LORMacro, pc, 0, 0, 0));
    if (d->xptr) {
      const PetscCount n = TraverseHanging(d, &desc, NULL, NULL, v);

      PetscCheck(n == lor->nkeep, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The LOR pattern has %" PetscCount_FMT " entries but the values %" PetscCount_FMT, lor->nkeep, n);
    } else PatchworkLORPlexValuesRef(&desc, d->coords, d->reaction, d->diffusion, lor->submask, lor->keep, v);
    PetscCall(PetscLogEventEnd(PATCHWORK_LORMacro, pc, 0, 0, 0));
  }
  PetscCall(PetscLogEventBegin(PATCHWORK_LORSetValues, pc, 0, 0, 0));
  PetscCall(MatSetValuesCOO(lor->A, v, INSERT_VALUES));
  PetscCall(PetscLogEventEnd(PATCHWORK_LORSetValues, pc, 0, 0, 0));
#if defined(PATCHWORK_HAVE_CUDA)
  if (kernel) PatchworkCallKernel(PatchworkDeviceFree(v));
  else
#endif
    PetscCall(PetscFree(v));
  PetscFunctionReturn(PETSC_SUCCESS);
}
