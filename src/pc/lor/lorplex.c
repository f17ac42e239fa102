/* PCLOR on the operator of a DMPlex mesh (MatCreatePatchworkTensor() on quadrilaterals or
   hexahedra, curved cells, variable coefficients): every cell is split at its (k+1)^dim nodes into
   k^dim Q1 sub-cells, whose element matrices (q1_element.h, the coefficients interpolated from their
   values at the nodes) go into the matrix in COO form, cell by cell. PETSc sums the entries of nodes
   shared by cells and sends those of other ranks' rows to them. Constrained nodes (essential
   conditions) are not unknowns of the operator: their entries are left out, the elimination the
   operator itself makes. The values come from PatchworkLORPlexValuesRef() or, for a device matrix,
   from the CUDA kernel on device arrays (lor_kernel.h). With hanging nodes the matrix is P^T A_LOR P:
   the pattern from TraverseHanging() on the host, the values from PatchworkLORPlexHangingValues*(),
   on the device for a device matrix. */
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
   combinations: P^T A_LOR P (Pazner et al. 2023, section 2.4). The pattern (ci, cj) in the order of
   PatchworkLORPlexSubcellHanging(), which computes the values, and the first entry of every sub-cell
   (offset); returns the number of entries. */
static PetscCount TraverseHanging(const PatchworkPlexLORData *d, PetscInt *ci, PetscInt *cj, long long *offset)
{
  const PetscInt k = d->degree, dim = d->dim, nv = 1 << dim, nsub = SubcellCount(d);
  PetscCount     n = 0;

  for (PetscInt c = 0; c < d->ncells; c++)
    for (PetscInt sub = 0; sub < nsub; sub++) {
      PetscInt node[8];

      if (offset) offset[c * nsub + sub] = (long long)n;
      for (int a = 0; a < nv; a++) node[a] = c * d->nodes + PatchworkLORPlexSubcellNode((int)dim, (int)k, (int)sub, a);
      for (int a = 0; a < nv; a++)
        for (int b = 0; b < nv; b++)
          for (PetscInt p = d->xptr[node[a]]; p < d->xptr[node[a] + 1]; p++)
            for (PetscInt q = d->xptr[node[b]]; q < d->xptr[node[b] + 1]; q++) {
              if (ci) {
                ci[n] = d->xrow[p];
                cj[n] = d->xrow[q];
              }
              n++;
            }
    }
  return n;
}

static PetscErrorCode CreatePatternHanging(PC pc, const PatchworkPlexLORData *d)
{
  PC_LOR     *lor  = (PC_LOR *)pc->data;
  const size_t nsub = (size_t)d->ncells * SubcellCount(d);
  PetscCount  n;
  PetscInt   *ci, *cj;
  long long  *offset;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(nsub, &offset));
  n = TraverseHanging(d, NULL, NULL, offset);
  PetscCall(PetscMalloc2(n, &ci, n, &cj));
  (void)TraverseHanging(d, ci, cj, NULL);
  PetscCall(PCLORCreateMatrixCOO(pc, n, ci, cj, PETSC_TRUE));
  PetscCall(PetscFree2(ci, cj));
  PetscCall(PCLORSetKeep(pc, nsub, offset));
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
    PatchworkCallKernel(PatchworkDeviceMalloc(nsub, (void **)&lor->submask));
    PatchworkCallKernel(PatchworkDeviceCopyToDevice(lor->submask, mask, nsub, stream));
    PetscCall(PetscLogCpuToGpu((PetscLogDouble)nsub));
#endif
  } else lor->submask = mask;
  PetscCall(PCLORSetKeep(pc, nsub, offset)); /* on the device it synchronizes: the host mask may go */
  if (lor->device) PetscCall(PetscFree(mask));
  lor->ncoo = lor->nkeep = n;
  lor->npattern++;
  PetscCall(PetscLogEventEnd(PATCHWORK_LORPattern, pc, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The hanging-node combinations in the kernels' types: xptr as int (xw is double already) */
static PetscErrorCode HangingPtr(const PatchworkPlexLORData *d, int **xptr)
{
  const PetscInt nn = d->ncells * d->nodes;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(nn + 1, xptr));
  for (PetscInt i = 0; i <= nn; i++) PetscCall(PetscIntCast(d->xptr[i], &(*xptr)[i]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCLORAssemblePlex(PC pc, const PatchworkPlexLORData *d)
{
  PC_LOR              *lor = (PC_LOR *)pc->data;
  PatchworkLORPlexDesc desc;
  double              *v;
  int                 *xp = NULL;

  PetscFunctionBegin;
  FillDesc(pc, d, &desc);
  if (d->xptr) PetscCall(HangingPtr(d, &xp));
  if (lor->device) {
#if defined(PATCHWORK_HAVE_CUDA)
    const size_t nn = (size_t)d->ncells * d->nodes;
    void        *stream;
    double      *xd, *rd = NULL, *cd = NULL, *wd = NULL;
    int         *pd = NULL;

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
    if (xp) { /* the hanging-node combinations */
      const size_t nt = (size_t)xp[nn];

      PatchworkCallKernel(PatchworkDeviceMalloc((nn + 1) * sizeof(int), (void **)&pd));
      PatchworkCallKernel(PatchworkDeviceMalloc(PetscMax(nt, 1) * sizeof(double), (void **)&wd));
      PatchworkCallKernel(PatchworkDeviceCopyToDevice(pd, xp, (nn + 1) * sizeof(int), stream));
      if (nt) PatchworkCallKernel(PatchworkDeviceCopyToDevice(wd, d->xw, nt * sizeof(double), stream));
      PetscCall(PetscLogCpuToGpu((PetscLogDouble)(nn + 1) * sizeof(int) + nt * sizeof(double)));
    }
    PatchworkCallKernel(PatchworkDeviceMalloc((size_t)lor->nkeep * sizeof(double), (void **)&v));
    PetscCall(PetscLogEventBegin(PATCHWORK_LORMacro, pc, 0, 0, 0));
    PetscCall(PetscLogGpuTimeBegin());
    if (xp) PatchworkCallKernel(PatchworkLORPlexHangingValuesCUDA(&desc, xd, rd, cd, pd, wd, lor->keep, v, stream));
    else PatchworkCallKernel(PatchworkLORPlexValuesCUDA(&desc, xd, rd, cd, lor->submask, lor->keep, v, stream));
    PetscCall(PetscLogGpuTimeEnd());
    PetscCall(PetscLogEventEnd(PATCHWORK_LORMacro, pc, 0, 0, 0));
    /* cudaFree waits for the kernel, so the host arrays may go after it */
    PatchworkCallKernel(PatchworkDeviceFree(xd));
    PatchworkCallKernel(PatchworkDeviceFree(rd));
    PatchworkCallKernel(PatchworkDeviceFree(cd));
    PatchworkCallKernel(PatchworkDeviceFree(pd));
    PatchworkCallKernel(PatchworkDeviceFree(wd));
#else
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "A device matrix, but Patchwork was built without CUDA");
#endif
  } else {
    PetscCall(PetscMalloc1(lor->nkeep, &v));
    PetscCall(PetscLogEventBegin(PATCHWORK_LORMacro, pc, 0, 0, 0));
    if (xp) PatchworkLORPlexHangingValuesRef(&desc, d->coords, d->reaction, d->diffusion, xp, (const double *)d->xw, lor->keep, v);
    else PatchworkLORPlexValuesRef(&desc, d->coords, d->reaction, d->diffusion, lor->submask, lor->keep, v);
    PetscCall(PetscLogEventEnd(PATCHWORK_LORMacro, pc, 0, 0, 0));
  }
  PetscCall(PetscFree(xp));
  PetscCall(PetscLogEventBegin(PATCHWORK_LORSetValues, pc, 0, 0, 0));
  PetscCall(MatSetValuesCOO(lor->A, v, INSERT_VALUES));
  PetscCall(PetscLogEventEnd(PATCHWORK_LORSetValues, pc, 0, 0, 0));
#if defined(PATCHWORK_HAVE_CUDA)
  if (lor->device) PatchworkCallKernel(PatchworkDeviceFree(v));
  else
#endif
    PetscCall(PetscFree(v));
  PetscFunctionReturn(PETSC_SUCCESS);
}
