/* NCCL point-to-point messages of the halo exchanges: include/patchwork/nccl_halo.h. Without NCCL
   (PATCHWORK_HAVE_NCCL undefined) every call returns NOT_BUILT. Codes: CUDA's, or NCCL's + NCCL_BASE. */
#include <patchwork/nccl_halo.h>
#include <cuda_runtime.h>
#if defined(PATCHWORK_HAVE_NCCL)
  #include <nccl.h>
#endif

namespace {
const int NOT_BUILT = 200000;

#if defined(PATCHWORK_HAVE_NCCL)
const int NCCL_BASE = 100000;

struct Context {
  ncclComm_t   comm;
  cudaStream_t stream; /* the messages' own stream */
};

int NCCLCode(ncclResult_t r)
{
  return r == ncclSuccess ? 0 : NCCL_BASE + (int)r;
}
#endif
} // namespace

extern "C" int PatchworkNCCLBuilt(void)
{
#if defined(PATCHWORK_HAVE_NCCL)
  return 1;
#else
  return 0;
#endif
}

extern "C" const char *PatchworkNCCLErrorString(int err)
{
  if (err == NOT_BUILT) return "Patchwork was built without NCCL";
#if defined(PATCHWORK_HAVE_NCCL)
  if (err >= NCCL_BASE) return ncclGetErrorString((ncclResult_t)(err - NCCL_BASE));
#endif
  return cudaGetErrorString((cudaError_t)err);
}

extern "C" int PatchworkNCCLDeviceBusId(char *busid, int len)
{
  int dev, err = (int)cudaGetDevice(&dev);

  return err ? err : (int)cudaDeviceGetPCIBusId(busid, len, dev);
}

#if defined(PATCHWORK_HAVE_NCCL)
extern "C" size_t PatchworkNCCLUniqueIdSize(void)
{
  return sizeof(ncclUniqueId);
}

extern "C" int PatchworkNCCLGetUniqueId(void *id)
{
  return NCCLCode(ncclGetUniqueId((ncclUniqueId *)id));
}

extern "C" int PatchworkNCCLCommCreate(int nranks, const void *id, int rank, void **ctx)
{
  Context *c = new Context();
  int      err;

  *ctx = NULL;
  err  = (int)cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
  if (err) {
    delete c;
    return err;
  }
  err = NCCLCode(ncclCommInitRank(&c->comm, nranks, *(const ncclUniqueId *)id, rank));
  if (err) {
    cudaStreamDestroy(c->stream);
    delete c;
    return err;
  }
  *ctx = c;
  return 0;
}

extern "C" int PatchworkNCCLCommDestroy(void *ctx)
{
  Context *c = (Context *)ctx;
  int      err;

  if (!c) return 0;
  err = NCCLCode(ncclCommFinalize(c->comm)); /* waits for the messages in flight */
  if (!err) err = NCCLCode(ncclCommDestroy(c->comm));
  if (!err) err = (int)cudaStreamDestroy(c->stream);
  delete c;
  return err;
}

extern "C" int PatchworkNCCLEventsCreate(void **ready, void **done)
{
  int err = (int)cudaEventCreateWithFlags((cudaEvent_t *)ready, cudaEventDisableTiming);

  return err ? err : (int)cudaEventCreateWithFlags((cudaEvent_t *)done, cudaEventDisableTiming);
}

extern "C" int PatchworkNCCLEventsDestroy(void *ready, void *done)
{
  int err = ready ? (int)cudaEventDestroy((cudaEvent_t)ready) : 0;

  if (done && !err) err = (int)cudaEventDestroy((cudaEvent_t)done);
  return err;
}

extern "C" int PatchworkNCCLBegin(void *ctx, void *ready, void *stream)
{
  Context *c   = (Context *)ctx;
  int      err = (int)cudaEventRecord((cudaEvent_t)ready, (cudaStream_t)stream);

  if (!err) err = (int)cudaStreamWaitEvent(c->stream, (cudaEvent_t)ready, 0);
  return err ? err : NCCLCode(ncclGroupStart());
}

extern "C" int PatchworkNCCLSend(void *ctx, const void *buf, size_t n, int single, int peer)
{
  Context *c = (Context *)ctx;

  return NCCLCode(ncclSend(buf, n, single ? ncclFloat32 : ncclFloat64, peer, c->comm, c->stream));
}

extern "C" int PatchworkNCCLRecv(void *ctx, void *buf, size_t n, int single, int peer)
{
  Context *c = (Context *)ctx;

  return NCCLCode(ncclRecv(buf, n, single ? ncclFloat32 : ncclFloat64, peer, c->comm, c->stream));
}

extern "C" int PatchworkNCCLEnd(void *ctx, void *done)
{
  Context *c   = (Context *)ctx;
  int      err = NCCLCode(ncclGroupEnd());

  return err ? err : (int)cudaEventRecord((cudaEvent_t)done, c->stream);
}

extern "C" int PatchworkNCCLWait(void *done, void *stream)
{
  return (int)cudaStreamWaitEvent((cudaStream_t)stream, (cudaEvent_t)done, 0);
}
#else
extern "C" size_t PatchworkNCCLUniqueIdSize(void)
{
  return 0;
}
extern "C" int PatchworkNCCLGetUniqueId(void *id)
{
  return NOT_BUILT;
}
extern "C" int PatchworkNCCLCommCreate(int nranks, const void *id, int rank, void **ctx)
{
  *ctx = NULL;
  return NOT_BUILT;
}
extern "C" int PatchworkNCCLCommDestroy(void *ctx)
{
  return ctx ? NOT_BUILT : 0;
}
extern "C" int PatchworkNCCLEventsCreate(void **ready, void **done)
{
  *ready = *done = NULL;
  return NOT_BUILT;
}
extern "C" int PatchworkNCCLEventsDestroy(void *ready, void *done)
{
  return ready || done ? NOT_BUILT : 0;
}
extern "C" int PatchworkNCCLBegin(void *ctx, void *ready, void *stream)
{
  return NOT_BUILT;
}
extern "C" int PatchworkNCCLSend(void *ctx, const void *buf, size_t n, int single, int peer)
{
  return NOT_BUILT;
}
extern "C" int PatchworkNCCLRecv(void *ctx, void *buf, size_t n, int single, int peer)
{
  return NOT_BUILT;
}
extern "C" int PatchworkNCCLEnd(void *ctx, void *done)
{
  return NOT_BUILT;
}
extern "C" int PatchworkNCCLWait(void *done, void *stream)
{
  return NOT_BUILT;
}
#endif
