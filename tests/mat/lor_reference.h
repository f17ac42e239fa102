/* Test helpers for the LOR assembly: an independent, deliberately plain assembly of the Q1 operator
   on the node grid of a DMDA, and a smooth perturbation of its coordinates (curved meshes). */
#ifndef PATCHWORK_TEST_LOR_REFERENCE_H
#define PATCHWORK_TEST_LOR_REFERENCE_H

#include <petscdmda.h>

/* Q1 on the mesh whose vertices are the nodes of the DMDA dm (dof 1, box stencil of width >= 1): every
   grid cell between neighbouring nodes is one Q1 element, mapped multilinearly from the coordinates
   of its vertices. Returns a new host MATAIJ in the DMDA's global ordering: alpha*M + beta*K, each
   element integrated with 2 Gauss points per direction, or at its vertices when vertex is true
   (trapezoid rule). With dirichlet, rows and columns of the nodes
   on the boundary of the global grid are eliminated and their diagonal is 1. */
PetscErrorCode PatchworkTestAssembleQ1Refined(DM dm, PetscReal alpha, PetscReal beta, PetscBool dirichlet, PetscBool vertex, Mat *A);

/* Moves every node of dm by x_d += amp * h_d * prod_e sin(pi (x_e - lower_e)/(upper_e - lower_e)),
   with [lower,upper] the coordinates' bounding box and h_d = (upper_d - lower_d)/(nodes_d - 1).
   The displacement vanishes on the box boundary; amp ~ 0.3 keeps cells valid. Global and local
   coordinates are both updated. */
PetscErrorCode PatchworkTestPerturbCoordinates(DM dm, PetscReal amp);

#endif
