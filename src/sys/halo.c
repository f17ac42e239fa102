/* Halo exchanges of raw float or double arrays laid out like the global and the ghosted local
   vectors of a DMDA: the ghost update of DMGlobalToLocal(INSERT_VALUES) and the sums of
   DMLocalToGlobal(ADD_VALUES), on all of the ghosted entries or on a subset (the nodes a kernel
   reads across the rank's boundary). Patchwork's own messages all go through here.

   Why not PetscSF: it cannot reduce MPI_FLOAT with MPI_SUM when PetscReal is double, and its
   DMDA scatter copies every owned entry into the local vector, which costs as much as the kernel
   when only the boundary layer is needed.

   Device arrays travel GPU to GPU through NCCL where it can serve the ranks (-patchwork_nccl 0 turns
   it off): its messages are queued in a stream, after an event that follows the packs, so the host
   never waits for the device. Otherwise device buffers go to MPI directly when MPI is CUDA-aware
   (PETSc's own -use_gpu_aware_mpi decides, -patchwork_gpu_direct overrides), after the host waited
   for the packs; else they are staged through page-locked host buffers. Every call is split into
   Begin and End so that a kernel can run while the messages travel. */
#include "pwimpl.h"
#include <patchwork/vec_kernel.h>
#include <patchwork/nccl_halo.h>
#include <petsc/private/petscimpl.h> /* use_gpu_aware_mpi */
#include <limits.h>

/* The entries exchanged with other ranks, one message per rank: idx[off[r]..off[r+1]) are the
   local indices of the ghosts owned by rank[r] (side in), or the owned indices that rank[r] reads
   (side out); buf is the message buffer where MPI reads and writes it (device memory when direct),
   dbuf the device buffer it is packed into (NULL on the host) */
typedef struct {
  PetscMPIInt n, *rank;
  PetscInt   *off;
  int        *idx;
  void       *buf, *dbuf;
} HaloSide;

struct _n_PatchworkHalo {
  MPI_Comm     comm;
  PetscMPIInt  tag;
  PetscBool    single;                /* float entries, else double */
  PetscBool    device;                /* index arrays and dbuf in device memory */
  PetscBool    direct;                /* device buffers handed to MPI (CUDA-aware) or NCCL */
  void        *nccl;                  /* NCCL's communicator (NULL: MPI) */
  void        *ready, *done;          /* its events: the packs have run, the messages have arrived */
  const char  *why_not_nccl;
  PetscInt     nlocal, nself;
  int         *self_root, *self_leaf; /* entries of the local array owned by this rank */
  HaloSide     in, out;               /* in: our ghosts by owner; out: our entries by reader */
  MPI_Request *req;                   /* in.n + out.n */
  PetscBool    busy;                  /* between a Begin and its End */
};

static size_t EntrySize(PatchworkHalo h)
{
  return h->single ? sizeof(float) : sizeof(double);
}

/* y[iy[i]] = x[ix[i]] (or +=; x NULL: 0) on the side the arrays live */
static PetscErrorCode Scatter(PatchworkHalo h, PetscInt n, const int *ix, const void *x, const int *iy, void *y, PetscBool add)
{
  PetscFunctionBegin;
  if (!n) PetscFunctionReturn(PETSC_SUCCESS);
  if (h->device) {
#if defined(PATCHWORK_HAVE_CUDA)
    void *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
    if (h->single) PatchworkCallKernel(PatchworkVecScatterFloatCUDA(n, ix, (const float *)x, iy, (float *)y, add ? 1 : 0, stream));
    else PatchworkCallKernel(PatchworkVecScatterCUDA(n, ix, (const double *)x, iy, (double *)y, add ? 1 : 0, stream));
#endif
  } else if (h->single) PatchworkVecScatterFloatRef(n, ix, (const float *)x, iy, (float *)y, add ? 1 : 0);
  else PatchworkVecScatterRef(n, ix, (const double *)x, iy, (double *)y, add ? 1 : 0);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The side's messages = x[idx]: packed where x lives, then copied where MPI reads them (in the stream) */
static PetscErrorCode Pack(PatchworkHalo h, HaloSide *s, const void *x)
{
  const PetscInt n = s->off[s->n];

  PetscFunctionBegin;
  PetscCall(Scatter(h, n, s->idx, x, NULL, h->device ? s->dbuf : s->buf, PETSC_FALSE));
#if defined(PATCHWORK_HAVE_CUDA)
  if (h->device && n) {
    void *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
    if (!h->direct) {
      PatchworkCallKernel(PatchworkDeviceCopyToHostAsync(s->buf, s->dbuf, (size_t)n * EntrySize(h), stream));
      PetscCall(PetscLogGpuToCpu((PetscLogDouble)n * EntrySize(h)));
    }
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y[idx] = the side's messages (or +=) */
static PetscErrorCode Unpack(PatchworkHalo h, HaloSide *s, void *y, PetscBool add)
{
  const PetscInt n = s->off[s->n];

  PetscFunctionBegin;
#if defined(PATCHWORK_HAVE_CUDA)
  if (h->device && !h->direct && n) {
    void *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
    PatchworkCallKernel(PatchworkDeviceCopyToDevice(s->dbuf, s->buf, (size_t)n * EntrySize(h), stream));
    PetscCall(PetscLogCpuToGpu((PetscLogDouble)n * EntrySize(h)));
  }
#endif
  PetscCall(Scatter(h, n, NULL, h->device ? s->dbuf : s->buf, s->idx, y, add));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Post the receives of recv's messages and the sends of send's (completed by MPI_Waitall on h->req),
   once the stream has run what it had: the packs MPI is about to read, and the unpacks of the last
   exchange from the buffers it is about to write */
static PetscErrorCode MessagesBegin(PatchworkHalo h, HaloSide *send, HaloSide *recv)
{
  const MPI_Datatype type = h->single ? MPI_FLOAT : MPI_DOUBLE;
  const size_t       es   = EntrySize(h);
  PetscMPIInt        count;

  PetscFunctionBegin;
#if defined(PATCHWORK_HAVE_CUDA)
  if (h->device) {
    void *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
    if (h->nccl) {
      PatchworkCallNCCL(PatchworkNCCLBegin(h->nccl, h->ready, stream));
      for (PetscMPIInt r = 0; r < recv->n; r++) PatchworkCallNCCL(PatchworkNCCLRecv(h->nccl, (char *)recv->buf + recv->off[r] * es, (size_t)(recv->off[r + 1] - recv->off[r]), h->single, recv->rank[r]));
      for (PetscMPIInt r = 0; r < send->n; r++) PatchworkCallNCCL(PatchworkNCCLSend(h->nccl, (char *)send->buf + send->off[r] * es, (size_t)(send->off[r + 1] - send->off[r]), h->single, send->rank[r]));
      PatchworkCallNCCL(PatchworkNCCLEnd(h->nccl, h->done));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    PatchworkCallKernel(PatchworkDeviceStreamSynchronize(stream));
  }
#endif
  for (PetscMPIInt r = 0; r < recv->n; r++) {
    PetscCall(PetscMPIIntCast(recv->off[r + 1] - recv->off[r], &count));
    PetscCallMPI(MPI_Irecv((char *)recv->buf + recv->off[r] * es, count, type, recv->rank[r], h->tag, h->comm, &h->req[r]));
  }
  for (PetscMPIInt r = 0; r < send->n; r++) {
    PetscCall(PetscMPIIntCast(send->off[r + 1] - send->off[r], &count));
    PetscCallMPI(MPI_Isend((char *)send->buf + send->off[r] * es, count, type, send->rank[r], h->tag, h->comm, &h->req[recv->n + r]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The messages have arrived (NCCL: the stream will wait for them before what it queues next) */
static PetscErrorCode MessagesEnd(PatchworkHalo h, HaloSide *send, HaloSide *recv)
{
  PetscFunctionBegin;
#if defined(PATCHWORK_HAVE_CUDA)
  if (h->nccl) {
    void *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
    PatchworkCallNCCL(PatchworkNCCLWait(h->done, stream));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  PetscCallMPI(MPI_Waitall(recv->n + send->n, h->req, MPI_STATUSES_IGNORE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Move a host array of n ints to where the halo's index arrays live (the host copy is freed) */
static PetscErrorCode PlaceIndices(PatchworkHalo h, PetscInt n, int **idx)
{
  PetscFunctionBegin;
  if (!h->device) PetscFunctionReturn(PETSC_SUCCESS);
#if defined(PATCHWORK_HAVE_CUDA)
  {
    void *d, *stream;

    PetscCall(PatchworkGetDeviceStream(&stream));
    PetscCall(PatchworkMalloc(PETSC_TRUE, (size_t)n * sizeof(int), &d));
    PatchworkCallKernel(PatchworkDeviceCopyToDevice(d, *idx, (size_t)n * sizeof(int), stream));
    PetscCall(PatchworkDeviceSynchronize()); /* the copy reads the host array, freed next */
    PetscCall(PetscFree(*idx));
    *idx = (int *)d;
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The side's message buffers: host memory for host arrays; a device buffer, and for a staged
   exchange a page-locked host one, for device arrays */
static PetscErrorCode AllocBuffers(PatchworkHalo h, HaloSide *s)
{
  const size_t bytes = (size_t)s->off[s->n] * EntrySize(h);

  PetscFunctionBegin;
  if (!h->device) {
    PetscCall(PetscMalloc(bytes, &s->buf));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#if defined(PATCHWORK_HAVE_CUDA)
  PetscCall(PatchworkMalloc(PETSC_TRUE, bytes, &s->dbuf));
  if (h->direct) s->buf = s->dbuf;
  else PatchworkCallKernel(PatchworkHostPinnedMalloc(bytes, &s->buf));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* How device buffers travel (collective): NCCL where it can serve the ranks, unless -patchwork_nccl 0;
   else to MPI directly as PETSc's own choice says (-use_gpu_aware_mpi, which PETSc checks at start-up),
   unless -patchwork_gpu_direct says otherwise */
static PetscErrorCode ChoosePath(PatchworkHalo h)
{
  PetscBool nccl = PETSC_TRUE, direct = use_gpu_aware_mpi;

  PetscFunctionBegin;
  h->direct = PETSC_FALSE;
  if (!h->device) PetscFunctionReturn(PETSC_SUCCESS);
  PetscOptionsBegin(h->comm, NULL, "Patchwork's exchanges between GPUs", NULL);
  PetscCall(PetscOptionsBool("-patchwork_nccl", "Through NCCL where it can serve the ranks (one GPU each)", NULL, nccl, &nccl, NULL));
  PetscCall(PetscOptionsBool("-patchwork_gpu_direct", "Otherwise device buffers to MPI, as -use_gpu_aware_mpi (else staged through host memory)", NULL, direct, &direct, NULL));
  PetscOptionsEnd();
#if defined(PATCHWORK_HAVE_CUDA)
  if (nccl) PetscCall(PatchworkNCCLGet(h->comm, &h->nccl, &h->why_not_nccl));
  else h->why_not_nccl = "-patchwork_nccl 0";
  if (h->nccl) {
    h->direct = PETSC_TRUE;
    PatchworkCallNCCL(PatchworkNCCLEventsCreate(&h->ready, &h->done));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  h->direct = direct;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The rank owning global node coordinate c of one direction, from the ownership starts (n + 1 of them) */
static PetscMPIInt Owner(PetscInt c, const PetscInt start[], PetscMPIInt n)
{
  PetscMPIInt lo = 0, hi = n - 1;

  while (lo < hi) { /* the last start <= c */
    const PetscMPIInt mid = (lo + hi + 1) / 2;

    if (start[mid] <= c) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/* The box of a DMDA's local arrays ghosted width nodes deep (a box stencil, no periodic boundaries),
   clipped to the grid */
PetscErrorCode PatchworkDMDAGhostBox(DM dm, PetscInt width, PetscInt gs[3], PetscInt gm[3])
{
  PetscInt dim, N[3], xs[3], xm[3];

  PetscFunctionBegin;
  PetscCall(DMDAGetInfo(dm, &dim, &N[0], &N[1], &N[2], NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetCorners(dm, &xs[0], &xs[1], &xs[2], &xm[0], &xm[1], &xm[2]));
  for (PetscInt d = 0; d < 3; d++) {
    gs[d] = d < dim ? PetscMax(0, xs[d] - width) : 0;
    gm[d] = d < dim ? PetscMin(N[d], xs[d] + xm[d] + width) - gs[d] : 1;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  PatchworkHaloCreate - The halo exchange of float or double arrays laid out like the global vectors of
  a DMDA and its ghosted local vectors, or ghosted width nodes deep.

  Collective

  Input Parameters:
+ dm     - the DMDA (not periodic)
. width  - the depth of the ghosted local arrays in nodes (a box stencil); PETSC_DECIDE: the DMDA's own
           stencil width, so that they are its local vectors; each rank's box must be at least as wide
. single - float entries (else double)
. device - whether the arrays (and so the exchange's index arrays) live in device memory
- needed - NULL: every entry of the local array; else a flag per local entry: the entries the
           exchange fills (ToLocal) and reads (AddToGlobal)

  Output Parameter:
. h - the exchange

  Notes:
  The owner of each ghost and its place there follow from the DMDA's ownership ranges, so nothing here
  grows with the rank's box but the flags; each rank tells the owners which of their entries it holds
  as ghosts (PetscCommBuildTwoSided() and one message per owner). Indices are 32-bit ints, as the
  kernels take.
*/
PetscErrorCode PatchworkHaloCreate(DM dm, PetscInt width, PetscBool single, PetscBool device, const PetscBool needed[], PatchworkHalo *halo)
{
  PatchworkHalo    h;
  DMType           type;
  DMBoundaryType   bt[3];
  DMDAStencilType  st;
  PetscBool        isda;
  const PetscInt  *lr[3];
  const PetscInt   one = 1;
  PetscInt         dim, N[3], m[3], dof, sw, xs[3], xm[3], gs[3], gm[3], *start[3], nowned, nrem = 0, nself = 0, big, gbig, narrow, gnarrow;
  PetscInt        *leaf, *root, *first, *next; /* first[r]: where the ghosts of rank r start */
  PetscMPIInt      myrank, size, *cnt, *outcnt, mr[3], *own[3];
  int             *want;

  PetscFunctionBegin;
  PatchworkAssertPointer(halo, 6);
  *halo = NULL;
  PetscCall(PetscObjectTypeCompare((PetscObject)dm, DMDA, &isda));
  PetscCall(DMGetType(dm, &type));
  PetscCheck(isda, PetscObjectComm((PetscObject)dm), PETSC_ERR_ARG_WRONG, "The halo exchange needs a DMDA, not a DM of type %s", type);
#if !defined(PATCHWORK_HAVE_CUDA)
  PetscCheck(!device, PETSC_COMM_SELF, PETSC_ERR_SUP, "Device arrays, but Patchwork was built without CUDA: rebuild it against a PETSc configured with CUDA");
#endif
  PetscCall(DMDAGetInfo(dm, &dim, &N[0], &N[1], &N[2], &m[0], &m[1], &m[2], &dof, &sw, &bt[0], &bt[1], &bt[2], &st));
  for (PetscInt d = 0; d < 3; d++) PetscCheck(bt[d] == DM_BOUNDARY_NONE || bt[d] == DM_BOUNDARY_GHOSTED, PetscObjectComm((PetscObject)dm), PETSC_ERR_SUP, "The halo exchange needs a DMDA without periodic boundaries");
  /* the DMDA's own local vectors: a star stencil leaves the ghosts beyond an edge or corner unset */
  if (width == PETSC_DECIDE) width = sw;
  else st = DMDA_STENCIL_BOX;
  PetscCall(DMDAGetOwnershipRanges(dm, &lr[0], &lr[1], &lr[2]));
  PetscCall(DMDAGetCorners(dm, &xs[0], &xs[1], &xs[2], &xm[0], &xm[1], &xm[2]));
  PetscCall(PatchworkDMDAGhostBox(dm, width, gs, gm));
  narrow = PETSC_MAX_INT;
  for (PetscInt d = 0; d < dim; d++)
    if (m[d] > 1) narrow = PetscMin(narrow, xm[d]);
  PetscCall(PetscNew(&h));
  h->single = single;
  h->device = device;
  PetscCall(PetscCommDuplicate(PetscObjectComm((PetscObject)dm), &h->comm, &h->tag));
  PetscCallMPI(MPI_Comm_rank(h->comm, &myrank));
  PetscCallMPI(MPI_Comm_size(h->comm, &size));
  nowned    = xm[0] * xm[1] * xm[2] * dof;
  h->nlocal = gm[0] * gm[1] * gm[2] * dof;
  /* checked on all ranks at once so that they fail together: the ghosts of a rank's neighbours only (a
     box narrower than the depth would need the next ones' too), and the kernels index with int */
  PetscCallMPI(MPI_Allreduce(&narrow, &gnarrow, 1, MPIU_INT, MPI_MIN, h->comm));
  big = PetscMax(nowned, h->nlocal);
  PetscCallMPI(MPI_Allreduce(&big, &gbig, 1, MPIU_INT, MPI_MAX, h->comm));
  if (gnarrow < width || gbig > INT_MAX) PetscCall(PatchworkHaloDestroy(&h));
  PetscCheck(gnarrow >= width, PetscObjectComm((PetscObject)dm), PETSC_ERR_ARG_OUTOFRANGE, "A rank's box is %" PetscInt_FMT " nodes wide, less than the halo's depth %" PetscInt_FMT ": use fewer ranks or levels", gnarrow, width);
  PetscCheck(gbig <= INT_MAX, PetscObjectComm((PetscObject)dm), PETSC_ERR_SUP, "The halo exchange indexes with 32-bit int, but a rank's local array has %" PetscInt_FMT " entries: use more ranks", gbig);
  PetscCall(ChoosePath(h));
  PetscCall(PetscLogEventBegin(PATCHWORK_HaloSetUp, dm, 0, 0, 0));

  /* each local entry's owner and its index there */
  for (PetscInt d = 0; d < 3; d++) {
    if (d >= dim) lr[d] = &one; /* a 2D DMDA has no third ranges */
    PetscCall(PetscMPIIntCast(m[d], &mr[d]));
    PetscCall(PetscMalloc1(m[d] + 1, &start[d]));
    start[d][0] = 0;
    for (PetscInt r = 0; r < m[d]; r++) start[d][r + 1] = start[d][r] + lr[d][r];
  }
  /* the local entries in order (x fastest, dof entries a node): first counted, then placed, the ghosts
     by owner (a counting sort, stable: by local index within one owner, for locality in the unpack) */
  PetscCall(PetscCalloc1(size + 1, &first));
  for (PetscInt d = 0; d < 3; d++) { /* the owner (in its direction) of each coordinate of the box */
    PetscCall(PetscMalloc1(gm[d], &own[d]));
    for (PetscInt i = 0; i < gm[d]; i++) own[d][i] = Owner(gs[d] + i, start[d], mr[d]);
  }
  for (int pass = 0; pass < 2; pass++) {
    PetscInt l = 0, s = 0;

    for (PetscInt c2 = gs[2]; c2 < gs[2] + gm[2]; c2++) {
      const PetscMPIInt w2 = own[2][c2 - gs[2]];
      const PetscInt    o2 = c2 < xs[2] || c2 >= xs[2] + xm[2];

      for (PetscInt c1 = gs[1]; c1 < gs[1] + gm[1]; c1++) {
        const PetscMPIInt w1 = own[1][c1 - gs[1]];
        const PetscInt    o1 = o2 + (c1 < xs[1] || c1 >= xs[1] + xm[1]);

        for (PetscInt c0 = gs[0]; c0 < gs[0] + gm[0]; c0++) {
          if (o1 == 0 && c0 == xs[0]) { /* this rank's run of the row: its own entries, in order */
            const PetscInt node0 = ((c2 - xs[2]) * xm[1] + c1 - xs[1]) * xm[0];

            for (PetscInt e = 0; e < xm[0] * dof; e++, l++) {
              if (needed && !needed[l]) continue;
              if (pass == 0) nself++;
              else {
                h->self_leaf[s]   = (int)l;
                h->self_root[s++] = (int)(node0 * dof + e);
              }
            }
            c0 += xm[0] - 1;
            continue;
          }
          const PetscMPIInt w0    = own[0][c0 - gs[0]];
          const PetscInt    out   = o1 + (c0 < xs[0] || c0 >= xs[0] + xm[0]);
          const PetscMPIInt orank = w0 + mr[0] * (w1 + mr[1] * w2);
          const PetscInt    node  = ((c2 - start[2][w2]) * lr[1][w1] + c1 - start[1][w1]) * lr[0][w0] + c0 - start[0][w0];

          for (PetscInt f = 0; f < dof; f++, l++) {
            if ((needed && !needed[l]) || (st == DMDA_STENCIL_STAR && out > 1)) continue;
            if (pass == 0) { /* count */
              if (orank == myrank) nself++;
              else first[orank + 1]++;
            } else if (orank == myrank) {
              h->self_leaf[s]   = (int)l;
              h->self_root[s++] = (int)(node * dof + f);
            } else {
              const PetscInt i = next[orank]++;

              leaf[i] = l;
              root[i] = node * dof + f;
            }
          }
        }
      }
    }
    if (pass == 1) break;
    for (PetscMPIInt r = 0; r < size; r++) {
      if (first[r + 1]) h->in.n++;
      first[r + 1] += first[r];
    }
    nrem     = first[size];
    h->nself = nself;
    PetscCall(PetscMalloc1(h->nself, &h->self_root));
    PetscCall(PetscMalloc1(h->nself, &h->self_leaf));
    PetscCall(PetscMalloc3(nrem, &leaf, nrem, &root, size, &next));
    PetscCall(PetscArraycpy(next, first, size));
  }
  for (PetscInt d = 0; d < 3; d++) {
    PetscCall(PetscFree(start[d]));
    PetscCall(PetscFree(own[d]));
  }

  PetscCall(PetscMalloc1(h->in.n, &h->in.rank));
  PetscCall(PetscMalloc1(h->in.n + 1, &h->in.off));
  PetscCall(PetscMalloc1(h->in.n, &cnt));
  PetscCall(PetscMalloc1(nrem, &h->in.idx));
  PetscCall(PetscMalloc1(nrem, &want));
  h->in.off[0] = 0;
  for (PetscMPIInt r = 0, i = 0; r < size; r++) {
    if (first[r + 1] == first[r]) continue;
    h->in.rank[i]     = r;
    h->in.off[i + 1]  = first[r + 1];
    PetscCall(PetscMPIIntCast(first[r + 1] - first[r], &cnt[i]));
    i++;
  }
  for (PetscInt i = 0; i < nrem; i++) {
    h->in.idx[i] = (int)leaf[i];
    want[i]      = (int)root[i];
  }
  PetscCall(PetscFree3(leaf, root, next));
  PetscCall(PetscFree(first));

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
  PetscCall(PetscInfo(dm, "%s halo: %" PetscInt_FMT " local entries, %" PetscInt_FMT " ghosts from %d ranks, %" PetscInt_FMT " entries read by %d ranks, %s\n", single ? "float" : "double", h->nself, h->in.off[h->in.n], h->in.n, h->out.off[h->out.n], h->out.n, !device ? "host arrays" : h->nccl ? "device arrays through NCCL" : h->direct ? "device arrays to MPI directly" : "device arrays staged through host memory"));
  if (device && !h->nccl) PetscCall(PetscInfo(dm, "Not NCCL: %s\n", h->why_not_nccl));
  PetscCall(PetscLogEventEnd(PATCHWORK_HaloSetUp, dm, 0, 0, 0));
  *halo = h;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The number of entries of the ghosted local arrays (the DMDA's local vector size) */
PetscErrorCode PatchworkHaloGetLocalSize(PatchworkHalo h, PetscInt *nlocal)
{
  PetscFunctionBegin;
  *nlocal = h->nlocal;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* How messages travel, for views: "host", "GPU-direct" (NCCL or CUDA-aware MPI) or "staged" (through host memory) */
PetscErrorCode PatchworkHaloGetPath(PatchworkHalo h, const char **path)
{
  PetscFunctionBegin;
  *path = !h->device ? "host" : h->nccl ? "GPU-direct (NCCL)" : h->direct ? "GPU-direct (CUDA-aware MPI)" : "staged through host memory (MPI not CUDA-aware)";
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SetBusy(PatchworkHalo h, PetscBool busy)
{
  PetscFunctionBegin;
  PetscCheck(h->busy != busy, PETSC_COMM_SELF, PETSC_ERR_ORDER, busy ? "A halo exchange began before the last one ended" : "A halo exchange ended without beginning");
  h->busy = busy;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* l = g at the needed owned and ghost entries of l, as DMGlobalToLocal(INSERT_VALUES); other
   entries of l are left alone. Between Begin and End the owned entries are in place, the ghosts travel */
PetscErrorCode PatchworkHaloToLocalBegin(PatchworkHalo h, const void *g, void *l)
{
  PetscFunctionBegin;
  PetscCall(SetBusy(h, PETSC_TRUE));
  PetscCall(PetscLogEventBegin(PATCHWORK_Halo, 0, 0, 0, 0));
  PetscCall(Pack(h, &h->out, g));
  PetscCall(MessagesBegin(h, &h->out, &h->in));
  PetscCall(Scatter(h, h->nself, h->self_root, g, h->self_leaf, l, PETSC_FALSE));
  PetscCall(PetscLogEventEnd(PATCHWORK_Halo, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PatchworkHaloToLocalEnd(PatchworkHalo h, void *l)
{
  PetscFunctionBegin;
  PetscCall(SetBusy(h, PETSC_FALSE));
  PetscCall(PetscLogEventBegin(PATCHWORK_Halo, 0, 0, 0, 0));
  PetscCall(MessagesEnd(h, &h->out, &h->in));
  PetscCall(Unpack(h, &h->in, l, PETSC_FALSE));
  PetscCall(PetscLogEventEnd(PATCHWORK_Halo, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* g += every rank's l at the needed entries, as DMLocalToGlobal(ADD_VALUES). Begin adds this rank's
   own entries; End the others' */
PetscErrorCode PatchworkHaloAddToGlobalBegin(PatchworkHalo h, const void *l, void *g)
{
  PetscFunctionBegin;
  PetscCall(SetBusy(h, PETSC_TRUE));
  PetscCall(PetscLogEventBegin(PATCHWORK_Halo, 0, 0, 0, 0));
  PetscCall(Pack(h, &h->in, l));
  PetscCall(MessagesBegin(h, &h->in, &h->out));
  PetscCall(Scatter(h, h->nself, h->self_leaf, l, h->self_root, g, PETSC_TRUE));
  PetscCall(PetscLogEventEnd(PATCHWORK_Halo, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PatchworkHaloAddToGlobalEnd(PatchworkHalo h, void *g)
{
  PetscFunctionBegin;
  PetscCall(SetBusy(h, PETSC_FALSE));
  PetscCall(PetscLogEventBegin(PATCHWORK_Halo, 0, 0, 0, 0));
  PetscCall(MessagesEnd(h, &h->in, &h->out));
  PetscCall(Unpack(h, &h->out, g, PETSC_TRUE)); /* one entry may be read, so added to, by several ranks */
  PetscCall(PetscLogEventEnd(PATCHWORK_Halo, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PatchworkHaloToLocal(PatchworkHalo h, const void *g, void *l)
{
  PetscFunctionBegin;
  PetscCall(PatchworkHaloToLocalBegin(h, g, l));
  PetscCall(PatchworkHaloToLocalEnd(h, l));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PatchworkHaloAddToGlobal(PatchworkHalo h, const void *l, void *g)
{
  PetscFunctionBegin;
  PetscCall(PatchworkHaloAddToGlobalBegin(h, l, g));
  PetscCall(PatchworkHaloAddToGlobalEnd(h, g));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* g += l at the needed entries this rank owns, no message: where every rank computes the entries it
   owns itself and discards its ghosts */
PetscErrorCode PatchworkHaloAddOwned(PatchworkHalo h, const void *l, void *g)
{
  PetscFunctionBegin;
  PetscCall(Scatter(h, h->nself, h->self_leaf, l, h->self_root, g, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* l = 0 at the needed entries (a local array the kernels add into, before they do) */
PetscErrorCode PatchworkHaloZeroLocal(PatchworkHalo h, void *l)
{
  PetscFunctionBegin;
  PetscCall(Scatter(h, h->nself, NULL, NULL, h->self_leaf, l, PETSC_FALSE));
  PetscCall(Scatter(h, h->in.off[h->in.n], NULL, NULL, h->in.idx, l, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SideDestroy(PatchworkHalo h, HaloSide *s)
{
  PetscFunctionBegin;
  PetscCall(PatchworkFree(h->device, &s->idx));
  PetscCall(PatchworkFree(h->device, &s->dbuf));
  if (h->device && !h->direct) {
#if defined(PATCHWORK_HAVE_CUDA)
    PatchworkCallKernel(PatchworkHostPinnedFree(s->buf));
#endif
  } else if (!h->device) PetscCall(PetscFree(s->buf));
  PetscCall(PetscFree(s->rank));
  PetscCall(PetscFree(s->off));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PatchworkHaloDestroy(PatchworkHalo *halo)
{
  PatchworkHalo h;

  PetscFunctionBegin;
  if (!halo || !*halo) PetscFunctionReturn(PETSC_SUCCESS);
  h = *halo;
  PetscCall(PatchworkFree(h->device, &h->self_root));
  PetscCall(PatchworkFree(h->device, &h->self_leaf));
  PetscCall(SideDestroy(h, &h->in));
  PetscCall(SideDestroy(h, &h->out));
#if defined(PATCHWORK_HAVE_CUDA)
  if (h->nccl) PatchworkCallNCCL(PatchworkNCCLEventsDestroy(h->ready, h->done));
#endif
  PetscCall(PetscFree(h->req));
  PetscCall(PetscCommDestroy(&h->comm));
  PetscCall(PetscFree(*halo));
  PetscFunctionReturn(PETSC_SUCCESS);
}
