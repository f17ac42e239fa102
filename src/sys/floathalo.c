/* The halo exchange of float arrays on a DMDA: the ghost update of DMGlobalToLocal(INSERT_VALUES)
   and the sums of DMLocalToGlobal(ADD_VALUES), for the single-precision cycles of the
   preconditioners. PetscSF has the pattern but cannot reduce MPI_FLOAT with MPI_SUM when PetscReal
   is double, so the pattern is read from the DMDA's global-to-local scatter and the messages are
   sent here. MPI is not assumed CUDA-aware: device data is packed on the device and travels
   through host buffers. */
#include "pwimpl.h"
#include <patchwork/vec_kernel.h>
#include <petscsf.h>
#include <limits.h>

/* The entries exchanged with other ranks, one message per rank: idx[off[r]..off[r+1]) are the
   local (leaf) indices of the ghosts owned by rank[r], or the owned (root) indices that rank[r]
   reads; buf is the host buffer of the messages (pageable, so a host-to-device copy has read it
   when it returns) and dbuf its device twin. */
typedef struct {
  PetscMPIInt n, *rank;
  PetscInt   *off;
  int        *idx;
  float      *buf, *dbuf;
} HaloSide;

struct _n_PatchworkFloatHalo {
  MPI_Comm     comm;
  PetscMPIInt  tag;
  PetscBool    device;                /* index arrays and dbuf in device memory */
  PetscInt     nlocal, nself;
  int         *self_root, *self_leaf; /* ghosted entries owned by this rank */
  HaloSide     in, out;               /* in: our ghosts by owner; out: our entries by reader */
  MPI_Request *req;                   /* in.n + out.n */
};

/* y[iy[i]] = x[ix[i]] (or +=) on the side the arrays live */
static PetscErrorCode Scatter(PatchworkFloatHalo h, PetscInt n, const int *ix, const float *x, const int *iy, float *y, PetscBool add)
{
  PetscFunctionBegin;
  if (!n) PetscFunctionReturn(PETSC_SUCCESS);
  if (h->device) {
#if defined(PATCHWORK_HAVE_CUDA)
    void *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
    PatchworkCallKernel(PatchworkVecScatterFloatCUDA(n, ix, x, iy, y, add ? 1 : 0, stream));
#endif
  } else PatchworkVecScatterFloatRef(n, ix, x, iy, y, add ? 1 : 0);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The side's buffer = x[idx], in host memory when this returns */
static PetscErrorCode Pack(PatchworkFloatHalo h, HaloSide *s, const float *x)
{
  const PetscInt n = s->off[s->n];

  PetscFunctionBegin;
  PetscCall(Scatter(h, n, s->idx, x, NULL, h->device ? s->dbuf : s->buf, PETSC_FALSE));
#if defined(PATCHWORK_HAVE_CUDA)
  if (h->device && n) {
    void *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
    PatchworkCallKernel(PatchworkDeviceCopyToHost(s->buf, s->dbuf, (size_t)n * sizeof(float), stream));
    PetscCall(PetscLogGpuToCpu((PetscLogDouble)n * sizeof(float)));
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y[idx] = the side's buffer (or +=) */
static PetscErrorCode Unpack(PatchworkFloatHalo h, HaloSide *s, float *y, PetscBool add)
{
  const PetscInt n = s->off[s->n];

  PetscFunctionBegin;
#if defined(PATCHWORK_HAVE_CUDA)
  if (h->device && n) {
    void *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
    PatchworkCallKernel(PatchworkDeviceCopyToDevice(s->dbuf, s->buf, (size_t)n * sizeof(float), stream));
    PetscCall(PetscLogCpuToGpu((PetscLogDouble)n * sizeof(float)));
  }
#endif
  PetscCall(Scatter(h, n, NULL, h->device ? s->dbuf : s->buf, s->idx, y, add));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Post the receives of recv's buffer and the sends of send's (completed by MPI_Waitall on h->req) */
static PetscErrorCode MessagesBegin(PatchworkFloatHalo h, HaloSide *send, HaloSide *recv)
{
  PetscMPIInt count;

  PetscFunctionBegin;
  for (PetscMPIInt r = 0; r < recv->n; r++) {
    PetscCall(PetscMPIIntCast(recv->off[r + 1] - recv->off[r], &count));
    PetscCallMPI(MPI_Irecv(recv->buf + recv->off[r], count, MPI_FLOAT, recv->rank[r], h->tag, h->comm, &h->req[r]));
  }
  for (PetscMPIInt r = 0; r < send->n; r++) {
    PetscCall(PetscMPIIntCast(send->off[r + 1] - send->off[r], &count));
    PetscCallMPI(MPI_Isend(send->buf + send->off[r], count, MPI_FLOAT, send->rank[r], h->tag, h->comm, &h->req[recv->n + r]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Move a host array of n ints to where the halo's index arrays live (the host copy is freed) */
static PetscErrorCode PlaceIndices(PatchworkFloatHalo h, PetscInt n, int **idx)
{
  PetscFunctionBegin;
  if (!h->device) PetscFunctionReturn(PETSC_SUCCESS);
#if defined(PATCHWORK_HAVE_CUDA)
  {
    void *d, *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
    PatchworkCallKernel(PatchworkDeviceMalloc((size_t)n * sizeof(int), &d));
    PatchworkCallKernel(PatchworkDeviceCopyToDevice(d, *idx, (size_t)n * sizeof(int), stream));
    PetscCall(PatchworkDeviceSynchronize()); /* the copy reads the host array, freed next */
    PetscCall(PetscFree(*idx));
    *idx = (int *)d;
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The side's host buffer and, on the device, its twin */
static PetscErrorCode AllocBuffers(PatchworkFloatHalo h, HaloSide *s)
{
  PetscFunctionBegin;
  PetscCall(PetscMalloc1(s->off[s->n], &s->buf));
#if defined(PATCHWORK_HAVE_CUDA)
  if (h->device) {
    void *d;

    PatchworkCallKernel(PatchworkDeviceMalloc((size_t)s->off[s->n] * sizeof(float), &d));
    s->dbuf = (float *)d;
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  PatchworkFloatHaloCreate - The halo exchange of float arrays laid out like the global and the
  ghosted local vectors of a DMDA.

  Collective

  Input Parameters:
+ dm     - the DMDA
- device - whether the float arrays (and so the exchange's index arrays) live in device memory

  Output Parameter:
. h - the exchange

  Notes:
  The pattern is that of DMDAGetScatter()'s global-to-local scatter: each rank tells the owners
  which of their entries it holds as ghosts (PetscCommBuildTwoSided() and one message per owner),
  so that no ordering internal to PetscSF is relied on. Indices are 32-bit ints, as the kernels take.
*/
PetscErrorCode PatchworkFloatHaloCreate(DM dm, PetscBool device, PatchworkFloatHalo *halo)
{
  PatchworkFloatHalo h;
  VecScatter         gtol;
  Vec                v;
  DMType             type;
  PetscBool          isda;
  const PetscInt    *ilocal;
  const PetscSFNode *iremote;
  PetscInt           nroots, nleaves, nowned, dof, bs, nrem = 0, big, gbig;
  PetscInt          *rank, *leaf, *root;
  PetscMPIInt        myrank, *cnt, *outcnt;
  int               *want;

  PetscFunctionBegin;
  PatchworkAssertPointer(halo, 3);
  *halo = NULL;
  PetscCall(PetscObjectTypeCompare((PetscObject)dm, DMDA, &isda));
  PetscCall(DMGetType(dm, &type));
  PetscCheck(isda, PetscObjectComm((PetscObject)dm), PETSC_ERR_ARG_WRONG, "The float halo exchange needs a DMDA, not a DM of type %s", type);
#if !defined(PATCHWORK_HAVE_CUDA)
  PetscCheck(!device, PETSC_COMM_SELF, PETSC_ERR_SUP, "Device arrays, but Patchwork was built without CUDA: rebuild it against a PETSc configured with CUDA");
#endif
  PetscCall(PetscNew(&h));
  h->device = device;
  PetscCall(PetscCommDuplicate(PetscObjectComm((PetscObject)dm), &h->comm, &h->tag));
  PetscCallMPI(MPI_Comm_rank(h->comm, &myrank));
  PetscCall(DMGetGlobalVector(dm, &v));
  PetscCall(VecGetLocalSize(v, &nowned));
  PetscCall(DMRestoreGlobalVector(dm, &v));
  PetscCall(DMGetLocalVector(dm, &v));
  PetscCall(VecGetLocalSize(v, &h->nlocal));
  PetscCall(DMRestoreLocalVector(dm, &v));
  /* the kernels index with int; checked on all ranks at once so that they fail together */
  big = PetscMax(nowned, h->nlocal);
  PetscCallMPI(MPI_Allreduce(&big, &gbig, 1, MPIU_INT, MPI_MAX, h->comm));
  PetscCheck(gbig <= INT_MAX, h->comm, PETSC_ERR_SUP, "The float halo exchange indexes with 32-bit int, but a rank's local vector has %" PetscInt_FMT " entries: use more ranks", gbig);

  PetscCall(DMDAGetScatter(dm, &gtol, NULL));
  PetscCall(PetscSFGetGraph(gtol, &nroots, &nleaves, &ilocal, &iremote));
  PetscCall(DMDAGetInfo(dm, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &dof, NULL, NULL, NULL, NULL, NULL));
  /* VecScatterCreate() may build the graph on blocks of the dof entries of a node */
  bs = nroots == nowned ? 1 : dof;
  PetscCheck(nroots * bs == nowned && nleaves * bs <= h->nlocal, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The DMDA's global-to-local scatter has %" PetscInt_FMT " roots and %" PetscInt_FMT " leaves for %" PetscInt_FMT " owned and %" PetscInt_FMT " local entries", nroots, nleaves, nowned, h->nlocal);
  for (PetscInt i = 0; i < nleaves; i++)
    if (iremote[i].rank != myrank) nrem += bs;
  h->nself = nleaves * bs - nrem;
  PetscCall(PetscMalloc1(h->nself, &h->self_root));
  PetscCall(PetscMalloc1(h->nself, &h->self_leaf));
  PetscCall(PetscMalloc3(nrem, &rank, nrem, &leaf, nrem, &root));
  for (PetscInt i = 0, s = 0, r = 0; i < nleaves; i++) {
    for (PetscInt c = 0; c < bs; c++) {
      const PetscInt l = (ilocal ? ilocal[i] : i) * bs + c, g = iremote[i].index * bs + c;

      if (iremote[i].rank == myrank) {
        h->self_leaf[s]   = (int)l;
        h->self_root[s++] = (int)g;
      } else {
        rank[r]   = iremote[i].rank;
        leaf[r]   = l;
        root[r++] = g;
      }
    }
  }

  /* the ghosts by owner, and by local index within one owner (for locality in the unpack) */
  PetscCall(PetscSortIntWithArrayPair(nrem, rank, leaf, root));
  for (PetscInt i = 0; i < nrem; i++)
    if (!i || rank[i] != rank[i - 1]) h->in.n++;
  PetscCall(PetscMalloc1(h->in.n, &h->in.rank));
  PetscCall(PetscMalloc1(h->in.n + 1, &h->in.off));
  PetscCall(PetscMalloc1(h->in.n, &cnt));
  PetscCall(PetscMalloc1(nrem, &h->in.idx));
  PetscCall(PetscMalloc1(nrem, &want));
  h->in.off[0] = 0;
  for (PetscInt i = 0, r = 0; i < nrem; i++) {
    if (i == nrem - 1 || rank[i + 1] != rank[i]) {
      PetscCall(PetscMPIIntCast(rank[i], &h->in.rank[r]));
      h->in.off[r + 1] = i + 1;
      PetscCall(PetscMPIIntCast(i + 1 - h->in.off[r], &cnt[r]));
      PetscCall(PetscSortIntWithArray(h->in.off[r + 1] - h->in.off[r], leaf + h->in.off[r], root + h->in.off[r]));
      r++;
    }
  }
  for (PetscInt i = 0; i < nrem; i++) {
    h->in.idx[i] = (int)leaf[i];
    want[i]      = (int)root[i];
  }
  PetscCall(PetscFree3(rank, leaf, root));

  /* tell each owner how many of its entries we read, then which */
  PetscCall(PetscCommBuildTwoSided(h->comm, 1, MPI_INT, h->in.n, h->in.rank, cnt, &h->out.n, &h->out.rank, &outcnt));
  PetscCall(PetscSortMPIIntWithArray(h->out.n, h->out.rank, outcnt));
  PetscCall(PetscMalloc1(h->out.n + 1, &h->out.off));
  h->out.off[0] = 0;
  for (PetscMPIInt r = 0; r < h->out.n; r++) h->out.off[r + 1] = h->out.off[r] + outcnt[r];
  PetscCall(PetscMalloc1(h->out.off[h->out.n], &h->out.idx));
  PetscCall(PetscMalloc1(h->in.n + h->out.n, &h->req));
  for (PetscMPIInt r = 0; r < h->out.n; r++) PetscCallMPI(MPI_Irecv(h->out.idx + h->out.off[r], outcnt[r], MPI_INT, h->out.rank[r], h->tag, h->comm, &h->req[r]));
  for (PetscMPIInt r = 0; r < h->in.n; r++) PetscCallMPI(MPI_Isend(want + h->in.off[r], cnt[r], MPI_INT, h->in.rank[r], h->tag, h->comm, &h->req[h->out.n + r]));
  PetscCallMPI(MPI_Waitall(h->in.n + h->out.n, h->req, MPI_STATUSES_IGNORE));
  for (PetscInt i = 0; i < h->out.off[h->out.n]; i++) PetscCheck(h->out.idx[i] >= 0 && h->out.idx[i] < nowned, PETSC_COMM_SELF, PETSC_ERR_PLIB, "A rank asked for entry %d of %" PetscInt_FMT " owned here", h->out.idx[i], nowned);
  PetscCall(PetscFree(outcnt));
  PetscCall(PetscFree(cnt));
  PetscCall(PetscFree(want));

  PetscCall(AllocBuffers(h, &h->in));
  PetscCall(AllocBuffers(h, &h->out));
  PetscCall(PlaceIndices(h, h->nself, &h->self_root));
  PetscCall(PlaceIndices(h, h->nself, &h->self_leaf));
  PetscCall(PlaceIndices(h, h->in.off[h->in.n], &h->in.idx));
  PetscCall(PlaceIndices(h, h->out.off[h->out.n], &h->out.idx));
  PetscCall(PetscInfo(dm, "%" PetscInt_FMT " local entries, %" PetscInt_FMT " ghosts from %d ranks, %" PetscInt_FMT " entries read by %d ranks, %s arrays\n", h->nself, h->in.off[h->in.n], h->in.n, h->out.off[h->out.n], h->out.n, device ? "device" : "host"));
  *halo = h;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The number of entries of the ghosted local arrays (the DMDA's local vector size) */
PetscErrorCode PatchworkFloatHaloGetLocalSize(PatchworkFloatHalo h, PetscInt *nlocal)
{
  PetscFunctionBegin;
  *nlocal = h->nlocal;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* l = g at the owned and ghost entries of l, as DMGlobalToLocal(INSERT_VALUES); other entries of
   l (none with a box stencil) are left alone */
PetscErrorCode PatchworkFloatHaloToLocal(PatchworkFloatHalo h, const float *g, float *l)
{
  PetscFunctionBegin;
  PetscCall(Pack(h, &h->out, g));
  PetscCall(MessagesBegin(h, &h->out, &h->in));
  PetscCall(Scatter(h, h->nself, h->self_root, g, h->self_leaf, l, PETSC_FALSE)); /* while the messages travel */
  PetscCallMPI(MPI_Waitall(h->in.n + h->out.n, h->req, MPI_STATUSES_IGNORE));
  PetscCall(Unpack(h, &h->in, l, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* g += every rank's l at the entries of g, as DMLocalToGlobal(ADD_VALUES) */
PetscErrorCode PatchworkFloatHaloAddToGlobal(PatchworkFloatHalo h, const float *l, float *g)
{
  PetscFunctionBegin;
  PetscCall(Pack(h, &h->in, l));
  PetscCall(MessagesBegin(h, &h->in, &h->out));
  PetscCall(Scatter(h, h->nself, h->self_leaf, l, h->self_root, g, PETSC_TRUE));
  PetscCallMPI(MPI_Waitall(h->in.n + h->out.n, h->req, MPI_STATUSES_IGNORE));
  PetscCall(Unpack(h, &h->out, g, PETSC_TRUE)); /* one entry may be read, so added to, by several ranks */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FreeIndices(PatchworkFloatHalo h, int **idx)
{
  PetscFunctionBegin;
  if (h->device) {
#if defined(PATCHWORK_HAVE_CUDA)
    PatchworkCallKernel(PatchworkDeviceFree(*idx));
#endif
    *idx = NULL;
  } else PetscCall(PetscFree(*idx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SideDestroy(PatchworkFloatHalo h, HaloSide *s)
{
  PetscFunctionBegin;
  PetscCall(FreeIndices(h, &s->idx));
#if defined(PATCHWORK_HAVE_CUDA)
  if (h->device) PatchworkCallKernel(PatchworkDeviceFree(s->dbuf));
#endif
  PetscCall(PetscFree(s->buf));
  PetscCall(PetscFree(s->rank));
  PetscCall(PetscFree(s->off));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PatchworkFloatHaloDestroy(PatchworkFloatHalo *halo)
{
  PatchworkFloatHalo h;

  PetscFunctionBegin;
  if (!halo || !*halo) PetscFunctionReturn(PETSC_SUCCESS);
  h = *halo;
  PetscCall(FreeIndices(h, &h->self_root));
  PetscCall(FreeIndices(h, &h->self_leaf));
  PetscCall(SideDestroy(h, &h->in));
  PetscCall(SideDestroy(h, &h->out));
  PetscCall(PetscFree(h->req));
  PetscCall(PetscCommDestroy(&h->comm));
  PetscCall(PetscFree(*halo));
  PetscFunctionReturn(PETSC_SUCCESS);
}
