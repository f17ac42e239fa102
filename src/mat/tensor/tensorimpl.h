/* Private context of the tensor-product MATSHELL; only src/mat/tensor/ sees it. */
#ifndef PATCHWORK_TENSORIMPL_H
#define PATCHWORK_TENSORIMPL_H

#include "../../sys/pwimpl.h"
#include "cartesian.h"
#include <patchwork/basis1d.h>
#include <patchwork/plex_kernel.h>
#include <patchwork/vec_kernel.h>
#include <petsc/private/petscimpl.h> /* PetscObjectStateIncrease(): a changed operator has a new state */

/* The general-mesh (DMPlex) part of the operator */
typedef struct {
  PetscInt               ncells, nodes; /* cells on this rank, nodes per cell (k+1)^dim */
  PetscInt              *elem_local;    /* ncells x nodes: local-vector index of every node (constrained ones too) */
  int                   *elem;          /* the kernels' map: global index on one rank, local index otherwise; -1: constrained;
                                           on hanging faces and edges the coarse face's nodes (plex_hanging.c) */
  double                *coords;        /* ncells x dim x nodes: node coordinates */
  double                *geom;          /* host geometric factors (CPU route) */
  void                  *elem_dev, *geom_dev; /* device copies (CUDA route) */
  PetscBool              fly_allowed;   /* -mat_patchwork_geometry_on_the_fly (default true) */
  PetscBool              fly_forced;    /* ... set true by the user: also where it is not the default */
  PetscBool              fly;           /* the CUDA apply computes the factors from corners_dev (geom_dev is NULL) */
  const char            *fly_refusal;   /* otherwise why not (a static string) */
  PetscBool              fly_hang;      /* ... also in the cells with hanging faces or edges */
  const char            *fly_hang_refusal; /* otherwise why not there */
  void                  *corners_dev, *diffusion_dev, *reaction_dev; /* its inputs (the coefficients: NULL when constant) */
  PetscBool              on_device;     /* the geometric factors live on the device */
  PetscBool              geomvalid;     /* geom matches coefficients and quadrature */
  PetscBool              constrained;   /* the DM has essential boundary conditions */
  PetscInt               coord_degree;  /* of the DM's coordinate field */
  unsigned long long    *hang;          /* NULL, or per cell its hanging faces and edges (plex_hanging.c) */
  PetscInt               nhanging;      /* cells of this rank with hanging faces or edges */
  double                 hangP[2 * PW_MAX_N * PW_MAX_N]; /* PatchworkHangingTables() */
  void                  *hang_dev, *hangP_dev, *hang_cells_dev, *hang_diag_dev; /* device copies and lists (CUDA route) */
  long long              nhang_diag;    /* entries of hang_diag_dev */
  long long              nhang_irregular; /* entries of hang_cells_dev: masks no mesh gives (PatchworkHangingRegular) */
  PetscInt              *order;         /* CUDA route with hanging nodes: the cell at each device position, the
                                           nplain cells without hanging faces or edges first; NULL: the host order */
  PetscInt               nplain;
  void                  *geom_hang_dev; /* stored factors of the hanging cells alone, when the others fly */
  PatchworkPlexDesc      desc_plain, desc_hang; /* the apply in two launches, on the two parts of that order */
  PatchworkCoefficientFn diffusion_fn, reaction_fn;
  void                  *fnctx;
  Vec                    diffusion, reaction; /* quadrature-point values (referenced) */
  PatchworkPlexDesc      desc;
} PatchworkPlexData;

typedef struct {
  PatchworkTensorInfo       info;       /* what the operator is; info.dm is referenced here */
  PatchworkScatter          scatter;
  PetscBool                 serial;     /* one rank: kernels act on the global arrays, no ghost exchange */
  PetscBool                 descvalid;  /* the descriptors below match the settings above */
  PatchworkTensorDesc       cells_desc; /* this rank's cells; boxes of the local (or global) arrays */
  PatchworkTensorDesc       owned_desc; /* out box = owned nodes: Dirichlet rows of global vectors */
  /* several ranks on a DMDA: the cells that read only owned nodes apply on the global arrays
     (interior, setting y); the others, a layer along the upper faces that border other ranks, in up
     to three boxes on ghosted local arrays whose needed entries the halos fill and sum */
  PatchworkTensorDesc       interior_desc, boundary_desc[6];
  PetscInt                  nboundary;
  PatchworkHalo             halo[2];    /* [device]: made when first used */
  void                     *loc[2][2];  /* [device][0: x, 1: y]: ghosted local arrays */
  Vec                       xloc, yloc, work;
  PetscLogDouble            flops;      /* per apply on this rank */
  PatchworkPlexData        *plex;       /* general mesh; NULL on a Cartesian DMDA */
  PetscBool                 nodm;       /* a level of a hierarchy on one rank without a DM (info.dm NULL,
                                           PatchworkTensorCreateOnBox()): its descriptors are filled
                                           whenever a setting changes, never from a DM */
} Mat_PatchworkTensor;

/* The context of A, or an error that A is not a Patchwork tensor-product operator */
PETSC_INTERN PetscErrorCode PatchworkTensorGetContext(Mat, Mat_PatchworkTensor **);
PETSC_INTERN PetscErrorCode PatchworkDMDAGetQkGrid(DM, PetscInt, PetscInt[], PetscReal[], PetscReal[]);
PETSC_INTERN PetscErrorCode PatchworkTensorSetUpDescriptors(Mat);
PETSC_INTERN PetscErrorCode PatchworkTensorDestroyExchange(Mat_PatchworkTensor *);
PETSC_INTERN PetscErrorCode MatMult_PatchworkTensor(Mat, Vec, Vec);
PETSC_INTERN PetscErrorCode MatMultAdd_PatchworkTensor(Mat, Vec, Vec, Vec);
PETSC_INTERN PetscErrorCode MatGetDiagonal_PatchworkTensor(Mat, Vec);
/* General meshes (plex_*.c) */
PETSC_INTERN PetscErrorCode PatchworkDMGetPlex(DM, DM *);
PETSC_INTERN PetscErrorCode PatchworkPlexCreate(DM, PetscInt, PatchworkTensorInfo *, PatchworkPlexData **);
PETSC_INTERN PetscErrorCode PatchworkPlexDestroy(PatchworkPlexData **);
PETSC_INTERN PetscErrorCode PatchworkPlexSetUpHanging(DM, PetscInt, PatchworkPlexData *, PetscInt *);
PETSC_INTERN PetscErrorCode PatchworkPlexLocalGlobalIndices(DM, PetscInt *, PetscInt **);
PETSC_INTERN PetscErrorCode PatchworkPlexCoefficientValues(const PatchworkPlexData *, PetscInt, PetscInt, const char *, PatchworkCoefficientFn, Vec, const char *, const double *, double **);
PETSC_INTERN PetscErrorCode PatchworkPlexSetUpGeometry(Mat);
PETSC_INTERN PetscErrorCode PatchworkPlexGeometryDevice(Mat_PatchworkTensor *, void **);
PETSC_INTERN PetscErrorCode PatchworkPlexFreeGeometryDevice(PatchworkPlexData *);
PETSC_INTERN PetscErrorCode PatchworkPlexApplyOrDiagonal(Mat, Vec, Vec);
PETSC_INTERN PetscErrorCode PatchworkPlexView(Mat, PetscViewer);

#endif
