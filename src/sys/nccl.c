/* The NCCL communicator Patchwork's halo exchanges use on device arrays: one per MPI communicator
   (PETSc's inner one), created on first use and kept as an attribute of it, so that it goes when the
   communicator goes. NCCL queues its messages in CUDA streams, which saves the host synchronization
   that handing device buffers to MPI needs before every exchange (see include/patchwork/nccl_halo.h). */
#include "pwimpl.h"
#if defined(PATCHWORK_HAVE_CUDA)
  #include <patchwork/nccl_halo.h>

typedef struct {
  void       *ctx; /* the communicator, NULL when NCCL cannot serve this MPI communicator */
  const char *why; /* then why not */
} NCCLAttr;

static PetscMPIInt nccl_keyval = MPI_KEYVAL_INVALID;

static PetscMPIInt MPIAPI NCCLAttrDelete(MPI_Comm comm, PetscMPIInt keyval, void *val, void *extra)
{
  NCCLAttr *a = (NCCLAttr *)val;

  /* collective like MPI_Comm_free(): ncclCommFinalize() waits for the peers' messages in flight */
  if (a->ctx && PatchworkNCCLCommDestroy(a->ctx)) return MPI_ERR_OTHER;
  free(a);
  return MPI_SUCCESS;
}

/* Whether two ranks of comm use one device: NCCL refuses that */
static PetscErrorCode SharedDevice(MPI_Comm comm, PetscBool *shared)
{
  enum { LEN = MPI_MAX_PROCESSOR_NAME + 64 };
  char        mine[LEN], *all;
  PetscMPIInt size, len;
  PetscBool   any = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscMemzero(mine, sizeof(mine)));
  PetscCallMPI(MPI_Get_processor_name(mine, &len));
  PatchworkCallKernel(PatchworkNCCLDeviceBusId(mine + MPI_MAX_PROCESSOR_NAME, 64));
  PetscCall(PetscMalloc1((size_t)size * LEN, &all));
  PetscCallMPI(MPI_Allgather(mine, LEN, MPI_CHAR, all, LEN, MPI_CHAR, comm));
  for (PetscMPIInt i = 0; i < size && !any; i++)
    for (PetscMPIInt j = i + 1; j < size && !any; j++) {
      const char *a = all + (size_t)i * LEN, *b = all + (size_t)j * LEN;

      any = (PetscBool)(!strcmp(a, b) && !strcmp(a + MPI_MAX_PROCESSOR_NAME, b + MPI_MAX_PROCESSOR_NAME));
    }
  PetscCall(PetscFree(all));
  *shared = any;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* NCCL connects every peer on all its point-to-point channels (32 between two H200s) at the first
   exchange, about 1 s on 2 x H200; with 8 the PCLOR example's operator set-up takes 1.26 s instead of
   2.13, while MatMult at 1.2e8 DoF and the Q7 solves keep their speed to about 1% (the halo overlaps the
   interior; docs/multigpu.md). -patchwork_nccl_p2p_channels n (default 8, 0: NCCL's choice)
   sets NCCL_MAX_P2P_NCHANNELS unless the environment already does; NCCL reads it at its first
   communicator, and every rank must see the same value. */
static PetscErrorCode LimitChannels(MPI_Comm comm)
{
  PetscInt n = 8;
  char     value[32];

  PetscFunctionBegin;
  PetscOptionsBegin(comm, NULL, "Patchwork's NCCL communicators", NULL);
  PetscCall(PetscOptionsBoundedInt("-patchwork_nccl_p2p_channels", "Most NCCL channels per peer (NCCL_MAX_P2P_NCHANNELS, unless set; 0: NCCL's choice)", NULL, n, &n, NULL, 0));
  PetscOptionsEnd();
  if (n > 0 && !getenv("NCCL_MAX_P2P_NCHANNELS")) {
    PetscCall(PetscSNPrintf(value, sizeof(value), "%" PetscInt_FMT, n));
    PetscCheck(!setenv("NCCL_MAX_P2P_NCHANNELS", value, 0), PETSC_COMM_SELF, PETSC_ERR_SYS, "Could not set NCCL_MAX_P2P_NCHANNELS");
    PetscCall(PetscInfo(NULL, "NCCL_MAX_P2P_NCHANNELS=%s (-patchwork_nccl_p2p_channels)\n", value));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PatchworkCheckNCCL(int err, const char call[])
{
  PetscFunctionBegin;
  PetscCheck(!err, PETSC_COMM_SELF, PETSC_ERR_LIB, "NCCL: %s in %s", PatchworkNCCLErrorString(err), call);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  PatchworkNCCLGet - The NCCL communicator of an MPI communicator, created on first use (collective on
  first use, then local)

  Output Parameters:
+ ctx - the communicator for include/patchwork/nccl_halo.h, or NULL when NCCL cannot serve comm
- why - then why not
*/
PetscErrorCode PatchworkNCCLGet(MPI_Comm comm, void **ctx, const char **why)
{
  NCCLAttr   *a;
  PetscMPIInt flag, size, rank;
  PetscBool   shared = PETSC_FALSE;

  PetscFunctionBegin;
  if (nccl_keyval == MPI_KEYVAL_INVALID) PetscCallMPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, NCCLAttrDelete, &nccl_keyval, NULL));
  PetscCallMPI(MPI_Comm_get_attr(comm, nccl_keyval, &a, &flag));
  if (!flag) {
    PetscCallMPI(MPI_Comm_size(comm, &size));
    PetscCallMPI(MPI_Comm_rank(comm, &rank));
    a = (NCCLAttr *)calloc(1, sizeof(*a));
    PetscCheck(a, PETSC_COMM_SELF, PETSC_ERR_MEM, "Out of memory for an NCCL communicator");
    if (!PatchworkNCCLBuilt()) a->why = "Patchwork was built without NCCL";
    else if (size == 1) a->why = "one rank";
    else {
      PetscCall(SharedDevice(comm, &shared));
      if (shared) a->why = "two ranks share a GPU, which NCCL does not allow";
    }
    if (!a->why) {
      size_t bytes = PatchworkNCCLUniqueIdSize();
      char  *id;

      PetscCall(LimitChannels(comm));
      PetscCall(PetscCalloc1(bytes, &id));
      if (rank == 0) PetscCall(PatchworkCheckNCCL(PatchworkNCCLGetUniqueId(id), "ncclGetUniqueId"));
      PetscCallMPI(MPI_Bcast(id, (PetscMPIInt)bytes, MPI_BYTE, 0, comm));
      PetscCall(PetscLogEventBegin(PATCHWORK_NCCLInit, 0, 0, 0, 0));
      PetscCall(PatchworkCheckNCCL(PatchworkNCCLCommCreate(size, id, rank, &a->ctx), "ncclCommInitRank"));
      PetscCall(PetscLogEventEnd(PATCHWORK_NCCLInit, 0, 0, 0, 0));
      PetscCall(PetscFree(id));
    }
    PetscCallMPI(MPI_Comm_set_attr(comm, nccl_keyval, a));
  }
  *ctx = a->ctx;
  *why = a->why;
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif
