/* Private declarations shared by the host code in src/ (PETSc types allowed, no kernels). */
#ifndef PATCHWORK_PWIMPL_H
#define PATCHWORK_PWIMPL_H

#include <patchwork.h>
#include <patchwork/tensor_kernel.h>
#include <patchwork/patch_kernel.h>
#include "compat.h"

PETSC_INTERN PetscBool PatchworkPackageInitialized;

/* PETSc's own pointer checks live in its private headers; this one needs none */
#define PatchworkAssertPointer(p, arg) \
  do { \
    if (!(p)) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "Null pointer: parameter # %d", (int)(arg)); \
  } while (0)

/* Arrays of up to two vectors read (r0, r1, NULL if unused) and one written (w), on one side;
   GetOverwrite when every entry of w will be set, so its old values need not be valid (or copied) */
typedef struct {
  const PetscScalar *r[2];
  PetscScalar       *w;
  PetscBool          device;    /* all arrays are device pointers */
  PetscBool          overwrite; /* w was got write-only */
  Vec                vr[2], vw;
} PatchworkArrays;
PETSC_INTERN PetscErrorCode PatchworkArraysGet(Vec, Vec, Vec, PatchworkArrays *);
PETSC_INTERN PetscErrorCode PatchworkArraysGetOverwrite(Vec, Vec, Vec, PatchworkArrays *);
PETSC_INTERN PetscErrorCode PatchworkArraysRestore(PatchworkArrays *);
PETSC_INTERN PetscErrorCode PatchworkVecSetHashRandom(Vec, unsigned);
/* Whether vectors of the matrix's vector type live on the device */
PETSC_INTERN PetscErrorCode PatchworkMatVectorsOnDevice(Mat, PetscBool *);

/* What PCLOR reads from the operator on a DMPlex (src/mat/tensor/plex_lor.c): per cell of this rank,
   the (k+1)^dim nodes in lexicographic order with their global rows (-1: constrained, not an
   unknown) and coordinates, and the coefficients at the nodes (NULL: constant) */
typedef struct {
  PetscInt      dim, degree, ncells, nodes;
  PetscReal     alpha, beta;          /* alpha*r*M + beta*c*K */
  PetscInt     *rows;                 /* ncells x nodes */
  const double *coords;               /* ncells x dim x nodes (the operator's own array) */
  double       *reaction, *diffusion; /* ncells x nodes, or NULL */
  /* hanging nodes (NULL on a conforming mesh): node i of cell c is the combination of the unknowns
     xrow[j] with weights xw[j], j in [xptr[c*nodes + i], xptr[c*nodes + i + 1]) (its row of the cell's
     constraint; one unknown with weight 1 for a free node, none for a constrained one) */
  PetscInt     *xptr, *xrow;
  PetscReal    *xw;
} PatchworkPlexLORData;
PETSC_INTERN PetscErrorCode PatchworkPlexGetLORData(Mat, PatchworkPlexLORData *);
PETSC_INTERN PetscErrorCode PatchworkPlexRestoreLORData(PatchworkPlexLORData *);

/* Kernel descriptors of a tensor-product operator from its public description (src/mat/tensor) */
PETSC_INTERN PetscErrorCode PatchworkTensorFillDesc(const PatchworkTensorInfo *, PatchworkScatter, PetscBool, PatchworkTensorDesc *, PatchworkTensorDesc *, PetscLogDouble *);
/* Several ranks on a DMDA: the cells that touch the rank's nodes as the interior of the descriptor's
   (global arrays) and boundary boxes (ghosted local arrays; the lower neighbours' layer included, so
   that the rank keeps the sums at its nodes and sends none); the flags of the nodes a set of cells, or
   a node box, reads (src/mat/tensor) */
PETSC_INTERN PetscErrorCode PatchworkTensorSplitCells(DM, const PatchworkTensorDesc *, PatchworkTensorDesc *, PatchworkTensorDesc[6], PetscInt *);
PETSC_INTERN PetscErrorCode PatchworkTensorMarkCells(DM, const PatchworkTensorDesc[], PetscInt, PetscBool[]);
PETSC_INTERN PetscErrorCode PatchworkDMDAMarkNodes(const PetscInt[3], const PetscInt[3], const PetscInt[3], const PetscInt[3], PetscBool[]);
/* Error unless the operator is on a Cartesian DMDA with constant coefficients (what who needs) */
PETSC_INTERN PetscErrorCode PatchworkTensorRequireCartesian(const PatchworkTensorInfo *, MPI_Comm, const char[]);
/* Levels a grid allows (halving while every direction has an even number of >= 4 cells), and the
   hierarchy: ops[0..n-1] coarse to fine (ops[n-1] is A, referenced), interp[l] from level l-1 to l */
PETSC_INTERN PetscErrorCode PatchworkMaxLevels(const PatchworkTensorInfo *, PetscInt *, char[], size_t);
PETSC_INTERN PetscErrorCode PatchworkCreateHierarchy(Mat, PetscInt, Mat[], Mat[]);
/* The kernel descriptor of a MatCreatePatchworkTransfer() (src/mat/transfer) */
PETSC_INTERN PetscErrorCode PatchworkTransferGetDesc(Mat, PatchworkTransferDesc *);
/* Register a log event unless one of that name exists (PCSetUp may run many times) */
PETSC_INTERN PetscErrorCode PatchworkLogEventRegisterOnce(const char[], PetscClassId, PetscLogEvent *);

/* The stream of PETSc's current device context (a cudaStream_t as void*). */
PETSC_INTERN PetscErrorCode PatchworkGetDeviceStream(void **);
PETSC_INTERN PetscErrorCode PatchworkDeviceSynchronize(void);
/* bytes on the device (cudaMalloc) or the host; Free takes the pointer's address and sets it to NULL;
   Memzero zeroes them (on the device in PETSc's stream) */
PETSC_INTERN PetscErrorCode PatchworkMatAIJSetSplitRows(Mat, const PetscInt[], PetscInt[], const PetscScalar[], const PetscInt[], PetscInt[], const PetscScalar[]);
PETSC_INTERN PetscErrorCode PatchworkMatCreateAIJSplit(MPI_Comm, MatType, PetscInt, PetscInt, const PetscInt[], PetscInt[], const PetscScalar[], const PetscInt[], PetscInt[], const PetscScalar[], Mat *);
PETSC_INTERN PetscErrorCode PatchworkMalloc(PetscBool, size_t, void **);
PETSC_INTERN PetscErrorCode PatchworkFree(PetscBool, void *);
PETSC_INTERN PetscErrorCode PatchworkMemzero(PetscBool, void *, size_t);
/* Turn a kernel launcher's return code into a PETSc error naming the kernel. */
PETSC_INTERN PetscErrorCode PatchworkCheckKernel(int, const char[]);
#define PatchworkCallKernel(call) PetscCall(PatchworkCheckKernel((call), #call))

/* The NCCL communicator of an MPI communicator (NULL, and why, when NCCL cannot serve it), created on
   first use (src/sys/nccl.c); NCCL's error codes as PETSc errors */
PETSC_INTERN PetscErrorCode PatchworkNCCLGet(MPI_Comm, void **, const char **);
PETSC_INTERN PetscErrorCode PatchworkCheckNCCL(int, const char[]);
#define PatchworkCallNCCL(call) PetscCall(PatchworkCheckNCCL((call), #call))

/* DMGlobalToLocal(INSERT_VALUES) and DMLocalToGlobal(ADD_VALUES) of a DMDA on raw float or double
   arrays in host or device memory (ghosted the DMDA's stencil width, or a given depth), on all ghosted
   entries or on those flagged needed, GPU-direct
   through NCCL or a CUDA-aware MPI (src/sys/halo.c): Patchwork's own messages */
typedef struct _n_PatchworkHalo *PatchworkHalo;
PETSC_INTERN PetscErrorCode PatchworkHaloCreate(DM, PetscInt, PetscBool, PetscBool, const PetscBool[], PatchworkHalo *);
/* the box of the local arrays of such a halo width nodes deep */
PETSC_INTERN PetscErrorCode PatchworkDMDAGhostBox(DM, PetscInt, PetscInt[3], PetscInt[3]);
PETSC_INTERN PetscErrorCode PatchworkHaloGetLocalSize(PatchworkHalo, PetscInt *);
PETSC_INTERN PetscErrorCode PatchworkHaloGetPath(PatchworkHalo, const char **);
PETSC_INTERN PetscErrorCode PatchworkHaloToLocalBegin(PatchworkHalo, const void *, void *);
PETSC_INTERN PetscErrorCode PatchworkHaloToLocalEnd(PatchworkHalo, void *);
PETSC_INTERN PetscErrorCode PatchworkHaloAddToGlobalBegin(PatchworkHalo, const void *, void *);
PETSC_INTERN PetscErrorCode PatchworkHaloAddToGlobalEnd(PatchworkHalo, void *);
PETSC_INTERN PetscErrorCode PatchworkHaloToLocal(PatchworkHalo, const void *, void *);
PETSC_INTERN PetscErrorCode PatchworkHaloAddToGlobal(PatchworkHalo, const void *, void *);
PETSC_INTERN PetscErrorCode PatchworkHaloAddOwned(PatchworkHalo, const void *, void *);
PETSC_INTERN PetscErrorCode PatchworkHaloZeroLocal(PatchworkHalo, void *);
PETSC_INTERN PetscErrorCode PatchworkHaloDestroy(PatchworkHalo *);

#endif
