static const char help[] = "The P1 Helmholtz problem -div(sigma grad u) + lambda u = f with natural boundary conditions on the\n"
                           "test meshes of Fu et al. 2014 (examples/tets.h): the matrix assembled by PatchworkDMPlexAssembleP1()\n"
                           "(on the GPU with -dm_mat_type aijcusparse -dm_vec_type cuda), b = 1 (all ones, as the paper), solved by\n"
                           "CG to a relative residual of 1e-8 with the preconditioner the options give (default Jacobi).\n"
                           "  -mesh <regular>       regular | irregular | blobs | annulus (2D)\n"
                           "  -cells <8>            cubes per direction (3D; the paper: 8 cubes of a 4^3 box, refined 3 times);\n"
                           "                        annulus: cells from the hole to the boundary (4x as many around)\n"
                           "  -refine <0>           regular refinements (DMRefine)\n"
                           "  -refine_hierarchy     keep the coarse meshes and give the DM to the PC (PCSetDM), for\n"
                           "                        -pc_type patchamg -pc_patchamg_hierarchy geometric\n"
                           "  -interpolate <1>      create edges and faces; 0 (with -refine 0) builds large meshes faster,\n"
                           "                        e.g. -cells 256 -interpolate 0: 16.8M vertices, 101M tetrahedra\n"
                           "  -sigma_ratio <10>     blobs, annulus: sigma in the inclusion (1 outside): 1, 10, 100 are the paper's\n"
                           "  -blobs_base <irregular>  the mesh under the blobs: regular | irregular\n"
                           "  -perturb <0.3>, -seed <1>, -length <4>   the irregular mesh's displacement, its seed, the box\n"
                           "  -lambda <1>           reaction coefficient\n"
                           "  -coordinates          give the preconditioner the vertices (PCSetCoordinates): PCPATCHAMG's\n"
                           "                        geometry-informed aggregation\n"
                           "Every PETSc option works: -pc_type gamg | hypre, -ksp_rtol, -ksp_view, -log_view, -dm_view, ...\n"
                           "The last line is 'summary: key=value ...' for scripts.\n"
                           "A solve that does not converge is an error (nonzero exit) after the summary line; to accept -ksp_max_it\n"
                           "iterations as converged (a fixed iteration count) add -ksp_converged_maxits.\n";

#include <patchwork.h>
#include "tets.h"
#include "walltime.h"

/* PCSetCoordinates() with the point of every local row: the vertex whose dof the row is */
static PetscErrorCode SetVertexCoordinates(DM dm, Mat A, PC pc)
{
  PetscSection       gsec, csec;
  Vec                xl;
  const PetscScalar *xa;
  PetscReal         *xyz;
  PetscInt           cdim, vStart, vEnd, rstart, rend;

  PetscFunctionBeginUser;
  PetscCall(DMGetGlobalSection(dm, &gsec));
  PetscCall(DMGetCoordinateSection(dm, &csec));
  PetscCall(DMGetCoordinatesLocal(dm, &xl));
  PetscCall(DMGetCoordinateDim(dm, &cdim));
  PetscCall(DMPlexGetDepthStratum(dm, 0, &vStart, &vEnd));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  PetscCall(PetscMalloc1(cdim * (rend - rstart), &xyz));
  PetscCall(VecGetArrayRead(xl, &xa));
  for (PetscInt v = vStart; v < vEnd; v++) {
    PetscInt dof, off, coff;

    PetscCall(PetscSectionGetDof(gsec, v, &dof));
    PetscCall(PetscSectionGetOffset(gsec, v, &off));
    if (dof <= 0 || off < 0) continue; /* another rank's vertex */
    PetscCall(PetscSectionGetOffset(csec, v, &coff));
    for (PetscInt d = 0; d < cdim; d++) xyz[(off - rstart) * cdim + d] = PetscRealPart(xa[coff + d]);
  }
  PetscCall(VecRestoreArrayRead(xl, &xa));
  PetscCall(PCSetCoordinates(pc, cdim, rend - rstart, xyz));
  PetscCall(PetscFree(xyz));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  TetsOptions        o;
  PetscReal          lambda = 1, fraction, rnorm, bnorm;
  PetscBool          coordinates = PETSC_FALSE;
  DM                 dm;
  Vec                sigma, u, b, r;
  Mat                A;
  KSP                ksp;
  PC                 pc;
  MatInfo            info;
  PetscInt           nvert, ncell, cStart, cEnd, its;
  KSPConvergedReason reason;
  PetscLogDouble     start = WallTime(), last = start, tstartup, tmesh, tasm, tsetup, tsolve;
  PCType             pctype;
  char               mesh[64];

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PatchworkInitializePackage());
  TetsOptionsDefault(&o);
  PetscCall(TetsOptionsSetFromOptions(PETSC_COMM_WORLD, &o));
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "P1 Helmholtz example", NULL);
  PetscCall(PetscOptionsReal("-lambda", "Reaction coefficient", NULL, lambda, &lambda, NULL));
  PetscCall(PetscOptionsBool("-coordinates", "Give the preconditioner the vertex coordinates (PCSetCoordinates)", NULL, coordinates, &coordinates, NULL));
  PetscOptionsEnd();

  PetscCall(WallPhase(PETSC_COMM_WORLD, &last, &tstartup));
  PetscCall(TetsCreateMesh(PETSC_COMM_WORLD, &o, &dm));
  PetscCall(DMSetFromOptions(dm)); /* -dm_mat_type, -dm_vec_type, -dm_view */
  PetscCall(DMViewFromOptions(dm, NULL, "-dm_view"));
  PetscCall(TetsCreateSigma(dm, &o, &sigma, &fraction));

  PetscCall(WallPhase(PETSC_COMM_WORLD, &last, &tmesh));
  PetscCall(PatchworkDMPlexAssembleP1(dm, lambda, sigma, &A));
  PetscCall(WallPhase(PETSC_COMM_WORLD, &last, &tasm));

  PetscCall(MatCreateVecs(A, &u, &b));
  PetscCall(VecDuplicate(b, &r));
  PetscCall(VecSet(b, 1.0));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 100000));
  PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED)); /* the paper's ||r|| / ||b|| */
  if (o.hierarchy) PetscCall(PCSetDM(pc, dm)); /* the PC sees the mesh hierarchy; the KSP has no DM, so it keeps the assembled matrix */
  PetscCall(KSPSetFromOptions(ksp));
  if (coordinates) PetscCall(SetVertexCoordinates(dm, A, pc));
  PetscCall(KSPSetUp(ksp));
  PetscCall(WallPhase(PETSC_COMM_WORLD, &last, &tsetup));
  PetscCall(KSPSolve(ksp, b, u));
  PetscCall(WallPhase(PETSC_COMM_WORLD, &last, &tsolve));
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(MatMult(A, u, r));
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &rnorm));
  PetscCall(VecNorm(b, NORM_2, &bnorm));

  PetscCall(MatGetSize(A, &nvert, NULL));
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
  PetscCall(DMPlexGetHeightStratum(dm, 0, &cStart, &cEnd));
  ncell = cEnd - cStart;
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &ncell, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
  PetscCall(PCGetType(pc, &pctype));
  if (sigma) snprintf(mesh, sizeof(mesh), "%s(1,%g;%.1f%%)", TetsMeshTypes[o.type], (double)o.sigma_ratio, (double)(100 * fraction)); /* C's %g: 10, not PETSc's 10. */
  else PetscCall(PetscSNPrintf(mesh, sizeof(mesh), "%s", TetsMeshTypes[o.type]));
  PetscCall(WallPrint(PETSC_COMM_WORLD, tstartup, tmesh, "mesh and coefficient", tasm, "assembly", tsetup, tsolve, last - start));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "summary: mesh=%s vertices=%" PetscInt_FMT " cells=%" PetscInt_FMT " nnz=%.0f pc=%s mesh_s=%.4f assembly_s=%.4f setup_s=%.4f solve_s=%.4f startup_s=%.4f total_s=%.4f its=%" PetscInt_FMT " reason=%s relres=%.3e\n", mesh, nvert, ncell, (double)info.nz_used, pctype, tmesh, tasm, tsetup, tsolve, tstartup, last - start, its, KSPConvergedReasons[reason], (double)(rnorm / bnorm)));
  PetscCheck(reason > 0, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "KSPSolve did not converge: %s%s", KSPConvergedReasons[reason], reason == KSP_DIVERGED_ITS ? " (for a fixed number of iterations add -ksp_converged_maxits)" : "");

  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&u));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&r));
  PetscCall(VecDestroy(&sigma));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&dm));
  PetscCall(PetscFinalize());
  return 0;
}
