/* Every difference between the PETSc versions Patchwork supports (3.18 .. newest) lives here. */
#ifndef PATCHWORK_COMPAT_H
#define PATCHWORK_COMPAT_H

#include <petscsys.h>
#include <petscmat.h>

/* PETSC_SUCCESS names the zero error code since 3.19 */
#if !PETSC_VERSION_GE(3, 19, 0)
  #define PETSC_SUCCESS 0
#endif

/* PetscOptionItems is passed by value (it became a pointer type) since 3.23 */
#if PETSC_VERSION_GE(3, 23, 0)
typedef PetscOptionItems PatchworkOptionItems;
#else
typedef PetscOptionItems *PatchworkOptionItems;
#endif

/* MatShellSetOperation() takes a PetscErrorCodeFn* since 3.24 */
#if PETSC_VERSION_GE(3, 24, 0)
typedef PetscErrorCodeFn *PatchworkShellOpFn;
#else
typedef void (*PatchworkShellOpFn)(void);
#endif
#define PatchworkShellOp(f) ((PatchworkShellOpFn)(f))

/* A PetscContainer's destroy callback gets the pointer (PetscContainerSetUserDestroy()) or, since 3.23,
   its address (PetscContainerSetCtxDestroy()) */
#if PETSC_VERSION_GE(3, 23, 0)
  #define PatchworkContainerCtx(arg)         (*(void **)(arg))
  #define PatchworkContainerSetDestroy(c, f) PetscContainerSetCtxDestroy((c), (PetscCtxDestroyFn *)(f))
#else
  #define PatchworkContainerCtx(arg)         ((void *)(arg))
  #define PatchworkContainerSetDestroy(c, f) PetscContainerSetUserDestroy((c), (f))
#endif


#endif
