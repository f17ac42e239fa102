/* Private context of PCLOR; only src/pc/lor/ sees it. */
#ifndef PATCHWORK_LORIMPL_H
#define PATCHWORK_LORIMPL_H

#include "../../sys/pwimpl.h"
#include <patchwork/lor_kernel.h>
#include <petsc/private/pcimpl.h>
#include "../patchamg/padevmat.h"

typedef struct {
  /* the discretization when the operator is not a Patchwork tensor (PCSetDM() and these) */
  PetscInt          degree_req;
  PetscReal         alpha_req, beta_req;
  PatchworkTensorBC bc_req;
  PatchworkTensorQuadrature quadrature; /* of the Q1 sub-elements: 2 Gauss-Lobatto (vertices, default) or 2 Gauss points */
  /* what was set up */
  DM                dm;          /* the Q_k node grid (referenced) */
  PetscBool         from_tensor; /* discretization read from a Patchwork tensor operator */
  PatchworkTensorInfo info;      /* degree, coefficients, bc (and the box when from_tensor) */
  PatchworkLORDesc  desc;        /* this rank's cells, coordinate box and rows */
  PetscBool         device;      /* values computed by the CUDA kernels into a device matrix */
  PetscCount        ncoo;        /* rows x slots: the entries A2 computes */
  PetscCount        nkeep;       /* of those, the ones the matrix stores (its COO pattern) */
  long long        *keep;        /* their positions among the rows x slots (device memory when device);
                                    DMPlex: the first entry of every sub-cell */
  unsigned char    *submask;     /* DMPlex: which vertices of every sub-cell are unknowns (lor_kernel.h) */
  PetscInt          npattern;    /* how often the pattern was built (once, unless the grid changes) */
  PetscBool         axis_only;   /* box cells and vertex rule: only neighbours along an axis couple */
  PetscBool         plex;        /* the operator lives on a DMPlex (lorplex.c) */
  PetscBool         csr;         /* the pattern is the matrix's own CSR order (one rank, DMDA): values go
                                    straight into its value array, no COO bookkeeping */
  PetscBool         split;       /* several ranks, MPIAIJ: the pattern is the two blocks' CSR, the first
                                    nsplit kept entries the diagonal block's, the rest the other's */
  PetscCount        nsplit;
  PetscBool         devcsr_req;  /* -pc_lor_device_csr */
  PetscBool         devcsr;      /* A is a matrix over the device CSR the pattern kernels made
                                    (../patchamg/padevmat.h): one GPU rank, DMDA, PCPATCHAMG inside */
  Mat               A;           /* the LOR matrix */
  PC                inner;       /* preconditioner of A, options prefix lor_ */
} PC_LOR;

PETSC_INTERN PetscErrorCode PCLORSetUpDiscretization(PC);
PETSC_INTERN PetscErrorCode PCLORCreatePattern(PC);
PETSC_INTERN PetscErrorCode PCLORDestroyPattern(PC);
PETSC_INTERN PetscErrorCode PCLORSetKeep(PC, size_t, long long *);
PETSC_INTERN PetscErrorCode PCLORAssemble(PC);
PETSC_INTERN PetscErrorCode PCLORCreateMatrixCOO(PC, PetscCount, PetscInt[], PetscInt[], PetscBool);
PETSC_INTERN PetscErrorCode PCLORCreatePatternPlex(PC, const PatchworkPlexLORData *);
PETSC_INTERN PetscErrorCode PCLORAssemblePlex(PC, const PatchworkPlexLORData *);

#endif
