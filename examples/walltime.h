#pragma once
/* Wall-clock time for the end-to-end reports of the examples and benchmarks. The same clock serves
   before PetscInitialize() (main()'s first line: the total then includes MPI's, PETSc's and the
   device's start-up) and after it. */
#include <petscsys.h>
#include <petscdevice.h>
#include <time.h>

static inline PetscLogDouble WallTime(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (PetscLogDouble)ts.tv_sec + 1e-9 * (PetscLogDouble)ts.tv_nsec;
}

/* Wait for the device, so that a clock read after it counts the queued kernels. A run on host vectors
   never initialized the device and has nothing to wait for: leave it so (it may have none). */
static inline PetscErrorCode Sync(void)
{
  PetscFunctionBeginUser;
#if defined(PETSC_HAVE_DEVICE)
  if (PetscDeviceInitialized(PETSC_DEVICE_DEFAULT())) {
    PetscDeviceContext dctx;

    PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
    PetscCall(PetscDeviceContextSynchronize(dctx));
  }
#endif
  PetscFunctionReturn(0);
}

/* The seconds since *last with the device idle and every rank there, and *last moved to now: one phase
   of the run */
static inline PetscErrorCode WallPhase(MPI_Comm comm, PetscLogDouble *last, PetscLogDouble *phase)
{
  PetscLogDouble now;

  PetscFunctionBeginUser;
  PetscCall(Sync());
  PetscCallMPI(MPI_Barrier(comm));
  now    = WallTime();
  *phase = now - *last;
  *last  = now;
  PetscFunctionReturn(0);
}

/* One line a user reads: where the wall time from main()'s start to the solution went */
static inline PetscErrorCode WallPrint(MPI_Comm comm, PetscLogDouble startup, PetscLogDouble dm, const char *dmname, PetscLogDouble op, const char *opname, PetscLogDouble pcsetup, PetscLogDouble solve, PetscLogDouble total)
{
  PetscFunctionBeginUser;
  PetscCall(PetscPrintf(comm, "wall time: start-up %.3f s, %s %.3f s, %s %.3f s, PC set-up %.3f s, solve %.3f s; total %.3f s from the start of main()\n", (double)startup, dmname, (double)dm, opname, (double)op, (double)pcsetup, (double)solve, (double)total));
  PetscFunctionReturn(0);
}
