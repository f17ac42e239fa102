/* PCPATCHAMG's level matrices that stay on the device: the prolongators and Galerkin operators the
   product kernels make there (pagalerkin.c) become MATSHELLs over their device CSR arrays, applied
   by the kernels of cuda/amg_csr.cu. A PETSc AIJCUSPARSE matrix would need the arrays on the host
   first (MatCreateSeqAIJWithArrays, its assembly, then the copy back at the first product): at 16.8M
   unknowns that round trip cost about a quarter of the setup. What needs a real matrix (the coarse
   LU, SPAI(1), the l1 row sums) asks PCPatchAMGMatGetAIJ for a copy. */
#include "paimpl.h"
#include <petscsf.h>
#include <patchwork/vec_kernel.h>

#if defined(PATCHWORK_HAVE_CUDA)
typedef struct {
  PatchworkCSRMatrix M, T;      /* T = M^T for MatMultTranspose (empty unless asked for) */
  float             *fval, *ftval; /* M's and T's values in single precision, once set (their doubles are freed) */
} DeviceCSR;

static PetscErrorCode MatMult_DeviceCSR(Mat, Vec, Vec);

/* B's arrays when B is a matrix of this file (a shell whose product is ours), else NULL */
static PetscErrorCode DeviceCSRGet(Mat B, DeviceCSR **d)
{
  PetscBool          shell;
  PatchworkShellOpFn mult = NULL;

  PetscFunctionBegin;
  *d = NULL;
  PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSHELL, &shell));
  if (shell) PetscCall(MatShellGetOperation(B, MATOP_MULT, &mult));
  if (shell && mult == PatchworkShellOp(MatMult_DeviceCSR)) PetscCall(MatShellGetContext(B, d));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = z + M x on device arrays (z may be NULL or y), with M's values or their float copy fval */
static PetscErrorCode Apply(const PatchworkCSRMatrix *M, const float *fval, Vec x, Vec z, Vec y)
{
  const PetscScalar *xa, *za = NULL;
  PetscScalar       *ya;
  PetscMemType       mx, my, mz = PETSC_MEMTYPE_DEVICE;
  void              *stream;

  PetscFunctionBegin;
  PetscCall(PatchworkGetDeviceStream(&stream));
  PetscCall(VecGetArrayReadAndMemType(x, &xa, &mx));
  if (z == y) PetscCall(VecGetArrayAndMemType(y, &ya, &my));
  else {
    if (z) PetscCall(VecGetArrayReadAndMemType(z, &za, &mz));
    PetscCall(VecGetArrayWriteAndMemType(y, &ya, &my));
  }
  PetscCheck(PetscMemTypeDevice(mx) && PetscMemTypeDevice(my) && PetscMemTypeDevice(mz), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "PCPATCHAMG: a level matrix on the device needs device vectors (e.g. -dm_vec_type cuda)");
  if (fval) PatchworkCallKernel(PatchworkCSRMultSingleCUDA(M, fval, (const double *)xa, z == y ? (const double *)ya : (const double *)za, (double *)ya, stream));
  else PatchworkCallKernel(PatchworkCSRMultCUDA(M, (const double *)xa, z == y ? (const double *)ya : (const double *)za, (double *)ya, stream));
  if (z == y) PetscCall(VecRestoreArrayAndMemType(y, &ya));
  else {
    if (z) PetscCall(VecRestoreArrayReadAndMemType(z, &za));
    PetscCall(VecRestoreArrayWriteAndMemType(y, &ya));
  }
  PetscCall(VecRestoreArrayReadAndMemType(x, &xa));
  PetscCall(PetscLogGpuFlops(2.0 * M->nnz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = z + op(B) x, op(B) = M or M^T: the four products of the shell */
static PetscErrorCode ApplyShell(Mat B, PetscBool transpose, Vec x, Vec z, Vec y)
{
  DeviceCSR *d;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(B, &d));
  PetscCall(Apply(transpose ? &d->T : &d->M, transpose ? d->ftval : d->fval, x, z, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMult_DeviceCSR(Mat B, Vec x, Vec y)
{
  return ApplyShell(B, PETSC_FALSE, x, NULL, y);
}

static PetscErrorCode MatMultAdd_DeviceCSR(Mat B, Vec x, Vec z, Vec y)
{
  return ApplyShell(B, PETSC_FALSE, x, z, y);
}

static PetscErrorCode MatMultTranspose_DeviceCSR(Mat B, Vec x, Vec y)
{
  return ApplyShell(B, PETSC_TRUE, x, NULL, y);
}

static PetscErrorCode MatMultTransposeAdd_DeviceCSR(Mat B, Vec x, Vec z, Vec y)
{
  return ApplyShell(B, PETSC_TRUE, x, z, y);
}

static PetscErrorCode MatGetDiagonal_DeviceCSR(Mat B, Vec v)
{
  DeviceCSR   *d;
  PetscScalar *va;
  PetscMemType mt;
  void        *stream;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(B, &d));
  PetscCall(PatchworkGetDeviceStream(&stream));
  PetscCall(VecGetArrayWriteAndMemType(v, &va, &mt));
  PetscCheck(PetscMemTypeDevice(mt), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "PCPATCHAMG: a level matrix on the device needs device vectors");
  PatchworkCallKernel(PatchworkCSRDiagonalCUDA(&d->M, (double *)va, stream));
  PetscCall(VecRestoreArrayWriteAndMemType(v, &va));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDestroy_DeviceCSR(Mat B)
{
  DeviceCSR *d;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(B, &d));
  PatchworkCSRMatrixFreeCUDA(&d->M);
  PatchworkCSRMatrixFreeCUDA(&d->T);
  PatchworkCallKernel(PatchworkDeviceFree(d->fval));
  PatchworkCallKernel(PatchworkDeviceFree(d->ftval));
  PetscCall(PetscFree(d));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A sequential matrix over M's device arrays, which it takes (M is emptied); with transpose, M^T is
   stored for MatMultTranspose */
PetscErrorCode PCPatchAMGMatCreateDevice(PatchworkCSRMatrix *M, PetscBool transpose, Mat *B)
{
  PetscFunctionBegin;
  PetscCall(PCPatchAMGMatCreateDeviceOn(PETSC_COMM_SELF, M, transpose, B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The same on comm, M being this rank's rows and columns of a block-diagonal matrix (several ranks: a
   prolongator whose aggregates stay on their rank), applied to the local parts of the vectors */
PetscErrorCode PCPatchAMGMatCreateDeviceOn(MPI_Comm comm, PatchworkCSRMatrix *M, PetscBool transpose, Mat *B)
{
  DeviceCSR *d;
  void      *stream;

  PetscFunctionBegin;
  PetscCall(PetscNew(&d));
  d->M = *M;
  PetscCall(PetscMemzero(M, sizeof(*M)));
  if (transpose) {
    PetscCall(PatchworkGetDeviceStream(&stream));
    PatchworkCallKernel(PatchworkCSRTransposeCUDA(&d->M, &d->T, stream));
  }
  PetscCall(MatCreateShell(comm, d->M.nrow, d->M.ncol, PETSC_DETERMINE, PETSC_DETERMINE, d, B));
  PetscCall(MatShellSetOperation(*B, MATOP_DESTROY, PatchworkShellOp(MatDestroy_DeviceCSR)));
  PetscCall(MatShellSetVecType(*B, VECCUDA));
  PetscCall(MatShellSetOperation(*B, MATOP_MULT, PatchworkShellOp(MatMult_DeviceCSR)));
  PetscCall(MatShellSetOperation(*B, MATOP_MULT_ADD, PatchworkShellOp(MatMultAdd_DeviceCSR)));
  if (transpose) {
    PetscCall(MatShellSetOperation(*B, MATOP_MULT_TRANSPOSE, PatchworkShellOp(MatMultTranspose_DeviceCSR)));
    PetscCall(MatShellSetOperation(*B, MATOP_MULT_TRANSPOSE_ADD, PatchworkShellOp(MatMultTransposeAdd_DeviceCSR)));
  }
  if (d->M.nrow == d->M.ncol) PetscCall(MatShellSetOperation(*B, MATOP_GET_DIAGONAL, PatchworkShellOp(MatGetDiagonal_DeviceCSR)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A prolongator on several ranks (padist.c): this rank's rows as two device CSR blocks, D (columns:
   the rank's coarse rows) and O (columns: the coarse rows of other ranks that garray lists), with
   their transposes. Prolongation fetches the ghosts' coarse values, restriction sends O^T's sums to
   their owners, both through a PetscSF on device memory (GPU to GPU where MPI takes device buffers). */
typedef struct {
  PatchworkCSRMatrix D, O, DT, OT;
  PetscSF            sf;    /* leaves: the O columns' coarse rows, roots: them on their owners */
  double            *ghost; /* device: O's column values */
} DeviceSplit;

static PetscErrorCode SplitApply(Mat B, PetscBool transpose, Vec x, Vec z, Vec y)
{
  DeviceSplit       *d;
  const PetscScalar *xa, *za = NULL;
  PetscScalar       *ya;
  PetscMemType       mx, my, mz = PETSC_MEMTYPE_DEVICE;
  void              *stream;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(B, &d));
  PetscCall(PatchworkGetDeviceStream(&stream));
  PetscCall(VecGetArrayReadAndMemType(x, &xa, &mx));
  if (z && z != y) PetscCall(VecGetArrayReadAndMemType(z, &za, &mz));
  if (z == y) PetscCall(VecGetArrayAndMemType(y, &ya, &my));
  else PetscCall(VecGetArrayWriteAndMemType(y, &ya, &my));
  PetscCheck(PetscMemTypeDevice(mx) && PetscMemTypeDevice(my) && PetscMemTypeDevice(mz), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "PCPATCHAMG: a level matrix on the device needs device vectors (e.g. -dm_vec_type cuda)");
  if (!transpose) { /* y = z + D x + O x_ghost */
    PetscCall(PetscSFBcastWithMemTypeBegin(d->sf, MPI_DOUBLE, PETSC_MEMTYPE_DEVICE, xa, PETSC_MEMTYPE_DEVICE, d->ghost, MPI_REPLACE));
    PatchworkCallKernel(PatchworkCSRMultCUDA(&d->D, (const double *)xa, z == y ? (const double *)ya : (const double *)za, (double *)ya, stream));
    PetscCall(PetscSFBcastEnd(d->sf, MPI_DOUBLE, xa, d->ghost, MPI_REPLACE));
    PatchworkCallKernel(PatchworkCSRMultCUDA(&d->O, d->ghost, (const double *)ya, (double *)ya, stream));
  } else { /* y = z + D^T x, then the owners add O^T x */
    PatchworkCallKernel(PatchworkCSRMultCUDA(&d->OT, (const double *)xa, NULL, d->ghost, stream));
    PatchworkCallKernel(PatchworkCSRMultCUDA(&d->DT, (const double *)xa, z == y ? (const double *)ya : (const double *)za, (double *)ya, stream));
    PetscCall(PetscSFReduceWithMemTypeBegin(d->sf, MPI_DOUBLE, PETSC_MEMTYPE_DEVICE, d->ghost, PETSC_MEMTYPE_DEVICE, ya, MPI_SUM));
    PetscCall(PetscSFReduceEnd(d->sf, MPI_DOUBLE, d->ghost, ya, MPI_SUM));
  }
  if (z == y) PetscCall(VecRestoreArrayAndMemType(y, &ya));
  else PetscCall(VecRestoreArrayWriteAndMemType(y, &ya));
  if (z && z != y) PetscCall(VecRestoreArrayReadAndMemType(z, &za));
  PetscCall(VecRestoreArrayReadAndMemType(x, &xa));
  PetscCall(PetscLogGpuFlops(2.0 * (d->D.nnz + d->O.nnz)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMult_DeviceSplit(Mat B, Vec x, Vec y)
{
  return SplitApply(B, PETSC_FALSE, x, NULL, y);
}

static PetscErrorCode MatMultAdd_DeviceSplit(Mat B, Vec x, Vec z, Vec y)
{
  return SplitApply(B, PETSC_FALSE, x, z, y);
}

static PetscErrorCode MatMultTranspose_DeviceSplit(Mat B, Vec x, Vec y)
{
  return SplitApply(B, PETSC_TRUE, x, NULL, y);
}

static PetscErrorCode MatMultTransposeAdd_DeviceSplit(Mat B, Vec x, Vec z, Vec y)
{
  return SplitApply(B, PETSC_TRUE, x, z, y);
}

static PetscErrorCode MatDestroy_DeviceSplit(Mat B)
{
  DeviceSplit *d;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(B, &d));
  PatchworkCSRMatrixFreeCUDA(&d->D);
  PatchworkCSRMatrixFreeCUDA(&d->O);
  PatchworkCSRMatrixFreeCUDA(&d->DT);
  PatchworkCSRMatrixFreeCUDA(&d->OT);
  PetscCall(PetscSFDestroy(&d->sf));
  PatchworkCallKernel(PatchworkDeviceFree(d->ghost));
  PetscCall(PetscFree(d));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The shell over D and O (which it takes: they are emptied); garray: the global coarse rows of O's
   nghost columns, ascending */
PetscErrorCode PCPatchAMGMatCreateDeviceSplit(MPI_Comm comm, PatchworkCSRMatrix *D, PatchworkCSRMatrix *O, PetscInt nghost, const PetscInt garray[], Mat *B)
{
  DeviceSplit *d;
  PetscLayout  cmap;
  void        *stream;

  PetscFunctionBegin;
  PetscCheck(O->ncol == nghost && O->nrow == D->nrow, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCPATCHAMG: the prolongator's blocks do not match");
  PetscCall(PetscNew(&d));
  d->D = *D;
  d->O = *O;
  PetscCall(PetscMemzero(D, sizeof(*D)));
  PetscCall(PetscMemzero(O, sizeof(*O)));
  PetscCall(PatchworkGetDeviceStream(&stream));
  PatchworkCallKernel(PatchworkCSRTransposeCUDA(&d->D, &d->DT, stream));
  PatchworkCallKernel(PatchworkCSRTransposeCUDA(&d->O, &d->OT, stream));
  PatchworkCallKernel(PatchworkDeviceMalloc(sizeof(double) * PetscMax(nghost, 1), (void **)&d->ghost));
  PetscCall(MatCreateShell(comm, d->D.nrow, d->D.ncol, PETSC_DETERMINE, PETSC_DETERMINE, d, B));
  PetscCall(MatGetLayouts(*B, NULL, &cmap));
  PetscCall(PetscLayoutSetUp(cmap));
  PetscCall(PetscSFCreate(comm, &d->sf));
  PetscCall(PetscSFSetGraphLayout(d->sf, cmap, nghost, NULL, PETSC_COPY_VALUES, garray));
  PetscCall(PetscSFSetUp(d->sf));
  PetscCall(MatShellSetOperation(*B, MATOP_DESTROY, PatchworkShellOp(MatDestroy_DeviceSplit)));
  PetscCall(MatShellSetVecType(*B, VECCUDA));
  PetscCall(MatShellSetOperation(*B, MATOP_MULT, PatchworkShellOp(MatMult_DeviceSplit)));
  PetscCall(MatShellSetOperation(*B, MATOP_MULT_ADD, PatchworkShellOp(MatMultAdd_DeviceSplit)));
  PetscCall(MatShellSetOperation(*B, MATOP_MULT_TRANSPOSE, PatchworkShellOp(MatMultTranspose_DeviceSplit)));
  PetscCall(MatShellSetOperation(*B, MATOP_MULT_TRANSPOSE_ADD, PatchworkShellOp(MatMultTransposeAdd_DeviceSplit)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* val's float copy in *f, then val freed: half the memory traffic of the products */
static PetscErrorCode ToSingle(PatchworkCSRMatrix *M, float **f)
{
  void *stream;

  PetscFunctionBegin;
  if (!M->val) PetscFunctionReturn(PETSC_SUCCESS); /* already single, or never built */
  PetscCall(PatchworkGetDeviceStream(&stream));
  PatchworkCallKernel(PatchworkDeviceMalloc(sizeof(float) * (size_t)PetscMax(M->nnz, 1), (void **)f));
  PatchworkCallKernel(PatchworkVecToFloatCUDA(M->nnz, M->val, *f, stream));
  PatchworkCallKernel(PatchworkDeviceFree(M->val));
  M->val = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* B's products in single precision from now on (its double values are gone: no more GetAIJ) */
PetscErrorCode PCPatchAMGMatDeviceSetSingle(Mat B)
{
  DeviceCSR *d;

  PetscFunctionBegin;
  PetscCall(DeviceCSRGet(B, &d));
  PetscCheck(d, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCPATCHAMG: not a level matrix on the device");
  PetscCall(ToSingle(&d->M, &d->fval));
  if (d->T.ptr) PetscCall(ToSingle(&d->T, &d->ftval));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* B's device CSR when B is a matrix of this file, else NULL */
PetscErrorCode PCPatchAMGMatGetDeviceCSR(Mat B, const PatchworkCSRMatrix **M)
{
  DeviceCSR *d;

  PetscFunctionBegin;
  PetscCall(DeviceCSRGet(B, &d));
  *M = d ? &d->M : NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* B's device values, to be written in place (the pattern stays): the finest level that PCLOR hands
   PCPATCHAMG gets new values this way when only the operator's coefficients change */
PetscErrorCode PCPatchAMGMatDeviceGetValues(Mat B, double **val)
{
  DeviceCSR *d;

  PetscFunctionBegin;
  PetscCall(DeviceCSRGet(B, &d));
  PetscCheck(d, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "Not a matrix over device CSR arrays");
  PetscCheck(d->M.val && !d->T.ptr, PETSC_COMM_SELF, PETSC_ERR_SUP, "This device matrix keeps single-precision values or a transpose: its values cannot be rewritten");
  *val = d->M.val;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After the values changed: a new object state, so that a PC on B sets up again */
PetscErrorCode PCPatchAMGMatDeviceRestoreValues(Mat B, double **val)
{
  PetscFunctionBegin;
  *val = NULL;
  PetscCall(PetscObjectStateIncrease((PetscObject)B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The device CSR of A, a sequential level matrix (int indices): the arrays of a matrix of this file,
   or an aijcusparse matrix's own; give them back with PCPatchAMGMatRestoreDeviceArrays */
PetscErrorCode PCPatchAMGMatGetDeviceArrays(Mat A, PatchworkCSR *csr)
{
  DeviceCSR         *d;
  PetscInt           n;
  const PetscInt    *ia, *ja;
  const PetscScalar *va;

  PetscFunctionBegin;
  PetscCall(DeviceCSRGet(A, &d));
  if (d) *csr = (PatchworkCSR){d->M.nrow, d->M.ptr, d->M.col, d->M.val};
  else {
    PetscCall(MatGetLocalSize(A, &n, NULL));
    PetscCall(MatSeqAIJCUSPARSEGetIJ(A, PETSC_FALSE, &ia, &ja));
    PetscCall(MatSeqAIJCUSPARSEGetArrayRead(A, &va));
    *csr = (PatchworkCSR){(int)n, (const int *)ia, (const int *)ja, (const double *)va};
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCPatchAMGMatRestoreDeviceArrays(Mat A, PatchworkCSR *csr)
{
  DeviceCSR         *d;
  const PetscInt    *ia = (const PetscInt *)csr->ptr, *ja = (const PetscInt *)csr->col;
  const PetscScalar *va = (const PetscScalar *)csr->val;

  PetscFunctionBegin;
  PetscCall(DeviceCSRGet(A, &d));
  if (!d) {
    PetscCall(MatSeqAIJCUSPARSERestoreArrayRead(A, &va));
    PetscCall(MatSeqAIJCUSPARSERestoreIJ(A, PETSC_FALSE, &ia, &ja));
  }
  PetscCall(PetscMemzero(csr, sizeof(*csr)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A real matrix with A's entries (aijcusparse, built on the host), or A itself when it is one;
   destroy it after use */
PetscErrorCode PCPatchAMGMatGetAIJ(Mat A, Mat *aij)
{
  DeviceCSR         *d;
  PatchworkCSRMatrix h;

  PetscFunctionBegin;
  PetscCall(DeviceCSRGet(A, &d));
  if (!d) {
    PetscCall(PetscObjectReference((PetscObject)A));
    *aij = A;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCheck(d->M.val, PETSC_COMM_SELF, PETSC_ERR_SUP, "PCPATCHAMG: this level matrix keeps its values in single precision only");
  PetscCall(PCPatchAMGCSRToHost(&d->M, &h));
  PetscCall(PCPatchAMGMatCreateFromCSR(PETSC_COMM_SELF, MATSEQAIJCUSPARSE, h.nrow, h.ncol, (const PetscInt *)h.ptr, (const PetscInt *)h.col, (const PetscScalar *)h.val, aij));
  PatchworkCSRMatrixFree(&h);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A host copy of the device CSR matrix d (free it with PatchworkCSRMatrixFree) */
PetscErrorCode PCPatchAMGCSRToHost(const PatchworkCSRMatrix *d, PatchworkCSRMatrix *h)
{
  void *stream;
  int   err;

  PetscFunctionBegin;
  *h     = *d;
  h->ptr = (int *)malloc(sizeof(int) * ((size_t)d->nrow + 1));
  h->col = (int *)malloc(sizeof(int) * ((size_t)d->nnz + 1));
  h->val = (double *)malloc(sizeof(double) * ((size_t)d->nnz + 1));
  PetscCheck(h->ptr && h->col && h->val, PETSC_COMM_SELF, PETSC_ERR_MEM, "PCPATCHAMG: no host memory for a copy of a %d x %d matrix with %d entries", d->nrow, d->ncol, d->nnz);
  PetscCall(PatchworkGetDeviceStream(&stream));
  err = PatchworkDeviceCopyToHost(h->ptr, d->ptr, sizeof(int) * ((size_t)d->nrow + 1), stream);
  if (!err && d->nnz) err = PatchworkDeviceCopyToHost(h->col, d->col, sizeof(int) * (size_t)d->nnz, stream);
  if (!err && d->nnz) err = PatchworkDeviceCopyToHost(h->val, d->val, sizeof(double) * (size_t)d->nnz, stream);
  PatchworkCallKernel(err);
  PetscFunctionReturn(PETSC_SUCCESS);
}
#else
PetscErrorCode PCPatchAMGMatCreateDeviceSplit(MPI_Comm comm, PatchworkCSRMatrix *D, PatchworkCSRMatrix *O, PetscInt nghost, const PetscInt garray[], Mat *B)
{
  PetscFunctionBegin;
  SETERRQ(comm, PETSC_ERR_SUP, "PCPATCHAMG: device matrices need Patchwork built with CUDA");
}

PetscErrorCode PCPatchAMGMatCreateDeviceOn(MPI_Comm comm, PatchworkCSRMatrix *M, PetscBool transpose, Mat *B)
{
  (void)M;
  (void)transpose;
  (void)B;
  SETERRQ(comm, PETSC_ERR_SUP, "PCPATCHAMG: level matrices on the device need a CUDA build");
}

PetscErrorCode PCPatchAMGCSRToHost(const PatchworkCSRMatrix *d, PatchworkCSRMatrix *h)
{
  (void)d;
  (void)h;
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "PCPATCHAMG: level matrices on the device need a CUDA build");
}

PetscErrorCode PCPatchAMGMatCreateDevice(PatchworkCSRMatrix *M, PetscBool transpose, Mat *B)
{
  (void)M;
  (void)transpose;
  (void)B;
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "PCPATCHAMG: level matrices on the device need a CUDA build");
}

PetscErrorCode PCPatchAMGMatDeviceGetValues(Mat B, double **val)
{
  (void)B;
  (void)val;
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "PCPATCHAMG: level matrices on the device need a CUDA build");
}

PetscErrorCode PCPatchAMGMatDeviceRestoreValues(Mat B, double **val)
{
  (void)B;
  (void)val;
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "PCPATCHAMG: level matrices on the device need a CUDA build");
}

PetscErrorCode PCPatchAMGMatDeviceSetSingle(Mat B)
{
  (void)B;
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "PCPATCHAMG: level matrices on the device need a CUDA build");
}

PetscErrorCode PCPatchAMGMatGetDeviceArrays(Mat A, PatchworkCSR *csr)
{
  (void)A;
  (void)csr;
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "PCPATCHAMG: level matrices on the device need a CUDA build");
}

PetscErrorCode PCPatchAMGMatRestoreDeviceArrays(Mat A, PatchworkCSR *csr)
{
  (void)A;
  (void)csr;
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "PCPATCHAMG: level matrices on the device need a CUDA build");
}

PetscErrorCode PCPatchAMGMatGetDeviceCSR(Mat B, const PatchworkCSRMatrix **M)
{
  (void)B;
  *M = NULL;
  return PETSC_SUCCESS;
}

PetscErrorCode PCPatchAMGMatGetAIJ(Mat A, Mat *aij)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectReference((PetscObject)A));
  *aij = A;
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif
