/* NCCL point-to-point messages of the halo exchanges (src/sys/halo.c), in cuda/nccl_halo.cu. NCCL
   runs in CUDA streams, so an exchange needs no host synchronization: the messages go in a stream of
   their own (NCCL kernels wait for their peers there), ordered after the pack in the caller's stream
   by one event and before the unpack by another, and kernels the caller queues in between run while
   the messages travel. Functions return 0 or an error code for PatchworkNCCLErrorString(). */
#ifndef PATCHWORK_NCCL_HALO_H
#define PATCHWORK_NCCL_HALO_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif
/* 1 when built with NCCL; the functions below otherwise return an error that says so */
int         PatchworkNCCLBuilt(void);
const char *PatchworkNCCLErrorString(int err);
/* the PCI bus id of the current device (two ranks on one device cannot share an NCCL communicator) */
int PatchworkNCCLDeviceBusId(char *busid, int len);
/* the bytes of the id rank 0 creates and the others receive before PatchworkNCCLCommCreate() */
size_t PatchworkNCCLUniqueIdSize(void);
int    PatchworkNCCLGetUniqueId(void *id);
/* a communicator of nranks on the current device and its message stream (collective) */
int PatchworkNCCLCommCreate(int nranks, const void *id, int rank, void **ctx);
int PatchworkNCCLCommDestroy(void *ctx);
/* the two events of one exchange (ready: the pack has run; done: the messages have arrived) */
int PatchworkNCCLEventsCreate(void **ready, void **done);
int PatchworkNCCLEventsDestroy(void *ready, void *done);
/* Begin: the message stream waits for what stream has queued (the packs); Send and Recv queue the
   messages of one exchange there (float entries when single, else double); End: done is recorded
   after them. Wait: stream waits for done (before the unpacks). */
int PatchworkNCCLBegin(void *ctx, void *ready, void *stream);
int PatchworkNCCLSend(void *ctx, const void *buf, size_t n, int single, int peer);
int PatchworkNCCLRecv(void *ctx, void *buf, size_t n, int single, int peer);
int PatchworkNCCLEnd(void *ctx, void *done);
int PatchworkNCCLWait(void *done, void *stream);
#ifdef __cplusplus
}
#endif
#endif
