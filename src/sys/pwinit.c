/* Package registration: log events, citations, and every type Patchwork provides. */
#include "pwimpl.h"

PetscBool     PatchworkPackageInitialized = PETSC_FALSE;
PetscLogEvent PATCHWORK_TensorSetUp, PATCHWORK_TensorMult, PATCHWORK_TensorDiagonal, PATCHWORK_VPSetUp, PATCHWORK_VPApply, PATCHWORK_VPCoarse, PATCHWORK_Transfer, PATCHWORK_Halo;
PetscLogEvent PATCHWORK_HaloSetUp, PATCHWORK_Levels, PATCHWORK_VPGather;
PetscLogEvent PATCHWORK_PlexElements, PATCHWORK_PlexGeometry;
PetscLogEvent PATCHWORK_AMGGraph, PATCHWORK_AMGProlong, PATCHWORK_AMGGalerkin, PATCHWORK_AMGRelaxSetUp, PATCHWORK_AMGCoarse, PATCHWORK_AMGCoarseSolve, PATCHWORK_AMGApply, PATCHWORK_SPAI1, PATCHWORK_AMGGhostRows, PATCHWORK_AMGCoarseRows, PATCHWORK_MatSplitRows, PATCHWORK_NCCLInit;
PetscLogEvent PATCHWORK_LORPattern, PATCHWORK_LORMacro, PATCHWORK_LORGather, PATCHWORK_LORDirichlet, PATCHWORK_LORSetValues, PATCHWORK_LORInnerSetUp, PATCHWORK_LORApply;

PETSC_EXTERN PetscErrorCode PCCreate_VertexPatch(PC);
PETSC_EXTERN PetscErrorCode PCCreate_LOR(PC);
PETSC_EXTERN PetscErrorCode PCCreate_PatchAMG(PC);

const char *const PatchworkTensorQuadratures[] = {"gauss", "gausslobatto", "PatchworkTensorQuadrature", "PATCHWORK_QUADRATURE_", NULL};
const char *const PatchworkTensorBCs[]         = {"dirichlet", "natural", "PatchworkTensorBC", "PATCHWORK_BC_", NULL};
const char *const PatchworkTensorMeshes[]      = {"cartesian", "general", "PatchworkTensorMesh", "PATCHWORK_MESH_", NULL};

static PetscClassId PATCHWORK_CLASSID;

/*@C
  PatchworkFinalizePackage - Forget that Patchwork was initialized; called by `PetscFinalize()`

  Level: developer

.seealso: `PatchworkInitializePackage()`
@*/
PetscErrorCode PatchworkFinalizePackage(void)
{
  PetscFunctionBegin;
  PatchworkPackageInitialized = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  PatchworkInitializePackage - Register Patchwork's log events and types with PETSc

  Not Collective

  Notes:
  Idempotent. Called by `PetscDLLibraryRegister_petscpatchwork()` when the library is loaded with
  `-dll_append /path/to/libpetscpatchwork.so`, and by every Patchwork constructor; programs linked
  against Patchwork may call it themselves after `PetscInitialize()`.

  Level: beginner

.seealso: `MatCreatePatchworkTensor()`
@*/
PetscErrorCode PatchworkInitializePackage(void)
{
  PetscFunctionBegin;
  if (PatchworkPackageInitialized) PetscFunctionReturn(PETSC_SUCCESS);
  PatchworkPackageInitialized = PETSC_TRUE;
  PetscCall(PetscClassIdRegister("Patchwork", &PATCHWORK_CLASSID));
  PetscCall(PetscLogEventRegister("PWTensorSetUp", MAT_CLASSID, &PATCHWORK_TensorSetUp));
  PetscCall(PetscLogEventRegister("PWTensorMult", MAT_CLASSID, &PATCHWORK_TensorMult));
  PetscCall(PetscLogEventRegister("PWTensorDiag", MAT_CLASSID, &PATCHWORK_TensorDiagonal));
  PetscCall(PetscLogEventRegister("PWPlexElements", MAT_CLASSID, &PATCHWORK_PlexElements));
  PetscCall(PetscLogEventRegister("PWPlexGeometry", MAT_CLASSID, &PATCHWORK_PlexGeometry));
  PetscCall(PetscLogEventRegister("PWTransfer", MAT_CLASSID, &PATCHWORK_Transfer));
  PetscCall(PetscLogEventRegister("PWHalo", VEC_CLASSID, &PATCHWORK_Halo));
  PetscCall(PetscLogEventRegister("PWHaloSetUp", VEC_CLASSID, &PATCHWORK_HaloSetUp));
  PetscCall(PetscLogEventRegister("PWNCCLInit", VEC_CLASSID, &PATCHWORK_NCCLInit));
  PetscCall(PetscLogEventRegister("PWLevels", MAT_CLASSID, &PATCHWORK_Levels));
  PetscCall(PetscLogEventRegister("PWVPSetUp", PC_CLASSID, &PATCHWORK_VPSetUp));
  PetscCall(PetscLogEventRegister("PWVPApply", PC_CLASSID, &PATCHWORK_VPApply));
  PetscCall(PetscLogEventRegister("PWVPCoarse", PC_CLASSID, &PATCHWORK_VPCoarse));
  PetscCall(PetscLogEventRegister("PWVPGather", PC_CLASSID, &PATCHWORK_VPGather));
  PetscCall(PetscLogEventRegister("PWMatSplitRows", MAT_CLASSID, &PATCHWORK_MatSplitRows));
  PetscCall(PetscLogEventRegister("PWLORPattern", PC_CLASSID, &PATCHWORK_LORPattern));
  PetscCall(PetscLogEventRegister("PWLORMacro", PC_CLASSID, &PATCHWORK_LORMacro));
  PetscCall(PetscLogEventRegister("PWLORGather", PC_CLASSID, &PATCHWORK_LORGather));
  PetscCall(PetscLogEventRegister("PWLORDirichlet", PC_CLASSID, &PATCHWORK_LORDirichlet));
  PetscCall(PetscLogEventRegister("PWLORSetValues", PC_CLASSID, &PATCHWORK_LORSetValues));
  PetscCall(PetscLogEventRegister("PWLORInnerSetUp", PC_CLASSID, &PATCHWORK_LORInnerSetUp));
  PetscCall(PetscLogEventRegister("PWLORApply", PC_CLASSID, &PATCHWORK_LORApply));
  PetscCall(PCRegister(PCVERTEXPATCH, PCCreate_VertexPatch));
  PetscCall(PetscLogEventRegister("PWAMGGraph", PC_CLASSID, &PATCHWORK_AMGGraph));
  PetscCall(PetscLogEventRegister("PWAMGProlong", PC_CLASSID, &PATCHWORK_AMGProlong));
  PetscCall(PetscLogEventRegister("PWAMGGalerkin", PC_CLASSID, &PATCHWORK_AMGGalerkin));
  PetscCall(PetscLogEventRegister("PWAMGGhostRows", PC_CLASSID, &PATCHWORK_AMGGhostRows));
  PetscCall(PetscLogEventRegister("PWAMGCoarseRows", PC_CLASSID, &PATCHWORK_AMGCoarseRows));
  PetscCall(PetscLogEventRegister("PWAMGRelaxSetUp", PC_CLASSID, &PATCHWORK_AMGRelaxSetUp));
  PetscCall(PetscLogEventRegister("PWAMGCoarseSetUp", PC_CLASSID, &PATCHWORK_AMGCoarse));
  PetscCall(PetscLogEventRegister("PWAMGCoarseSolve", PC_CLASSID, &PATCHWORK_AMGCoarseSolve));
  PetscCall(PetscLogEventRegister("PWAMGApply", PC_CLASSID, &PATCHWORK_AMGApply));
  PetscCall(PetscLogEventRegister("PWSPAI1", MAT_CLASSID, &PATCHWORK_SPAI1));
  PetscCall(PCRegister(PCLOR, PCCreate_LOR));
  PetscCall(PCRegister(PCPATCHAMG, PCCreate_PatchAMG));
  PetscCall(PetscRegisterFinalize(PatchworkFinalizePackage));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PatchworkLogEventRegisterOnce(const char name[], PetscClassId classid, PetscLogEvent *event)
{
  PetscErrorCode ierr;

  PetscFunctionBegin;
  *event = -1;
  /* unknown names are an error on some PETSc versions and give -1 on others */
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = PetscLogEventGetId(name, event);
  PetscCall(PetscPopErrorHandler());
  if (ierr || *event < 0) PetscCall(PetscLogEventRegister(name, classid, event));
  PetscFunctionReturn(PETSC_SUCCESS);
}
