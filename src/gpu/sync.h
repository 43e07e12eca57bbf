/* The sync policies a loop can apply after each iteration: none (async), device, stream,
 * event, a blocking 4-byte readback into pageable memory (what plain C code does), or
 * PyTorch's `.item()`: an async 4-byte copy into pinned memory, then a stream sync. Also the
 * two blocking steps the scenarios share: device memory read back as `.item()` reads a value,
 * and device memory set before the host goes on (initial values, validation's poison). */
#ifndef SB_SYNC_H
#define SB_SYNC_H

#include <cuda_runtime.h>

#include "gpu/resources.h"

typedef enum {
    SB_SYNC_NONE,
    SB_SYNC_DEVICE,
    SB_SYNC_STREAM,
    SB_SYNC_EVENT,
    SB_SYNC_READBACK,
    SB_SYNC_ITEM,
} sb_sync_kind;

typedef struct sb_sync {
    sb_sync_kind kind;
    cudaStream_t stream;
    cudaEvent_t event; /* SB_SYNC_EVENT: recorded and waited on after each iteration */
    const void *src;   /* SB_SYNC_READBACK, SB_SYNC_ITEM: device value read back */
    void *dst;         /* READBACK: the caller's pageable memory; ITEM: pinned, acquired here */
    size_t bytes;
} sb_sync;

/* Creates what the policy needs: an event for SB_SYNC_EVENT, a pinned buffer of `bytes` for
 * SB_SYNC_ITEM (which then ignores `dst`), both kept in `res`. */
int sb_sync_init(sb_sync *s, sb_resources *res, sb_sync_kind kind, cudaStream_t stream,
                 const void *src, void *dst, size_t bytes);

/* Device memory read back the way PyTorch's .item() reads a value (as CUPTI shows it, torch
 * 2.11): the copy queued on the current stream (into pinned memory, for .item()), then that
 * stream synchronized. Inline: it sits inside timed loops. */
static inline cudaError_t sb_read_back(void *dst, const void *src, size_t bytes,
                                       cudaStream_t stream)
{
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream);
    return e != cudaSuccess ? e : cudaStreamSynchronize(stream);
}

/* cudaMemsetAsync on `stream`, then that stream synchronized: the bytes are set when it
 * returns. 0, or the failure recorded as SB_CUDA records it. */
int sb_memset_sync(void *dev, int value, size_t bytes, cudaStream_t stream);

/* Applies the policy once; inline because it sits inside timed loops. */
static inline cudaError_t sb_sync_point(const sb_sync *s)
{
    switch (s->kind) {
    case SB_SYNC_DEVICE:
        return cudaDeviceSynchronize();
    case SB_SYNC_STREAM:
        return cudaStreamSynchronize(s->stream);
    case SB_SYNC_EVENT: {
        cudaError_t e = cudaEventRecord(s->event, s->stream);
        return e != cudaSuccess ? e : cudaEventSynchronize(s->event);
    }
    case SB_SYNC_READBACK:
        /* a plain cudaMemcpy runs on the legacy default stream, which waits for the work
         * queued on the (blocking) scenario stream: a blocking copy into pageable memory */
        return cudaMemcpy(s->dst, s->src, s->bytes, cudaMemcpyDeviceToHost);
    case SB_SYNC_ITEM:
        return sb_read_back(s->dst, s->src, s->bytes, s->stream);
    default:
        return cudaSuccess;
    }
}

#endif
