#include "gpu/sync.h"

#include <string.h>

#include "gpu/cuda_check.h"

int sb_sync_init(sb_sync *s, sb_resources *res, sb_sync_kind kind, cudaStream_t stream,
                 const void *src, void *dst, size_t bytes)
{
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->stream = stream;
    s->src = src;
    s->dst = dst;
    s->bytes = bytes;
    if (kind == SB_SYNC_EVENT)
        return sb_get_event(res, &s->event, cudaEventDisableTiming);
    if (kind == SB_SYNC_ITEM)
        return sb_get_pinned(res, &s->dst, bytes, cudaHostAllocDefault);
    return 0;
}

int sb_memset_sync(void *dev, int value, size_t bytes, cudaStream_t stream)
{
    SB_CUDA(cudaMemsetAsync(dev, value, bytes, stream));
    SB_CUDA(cudaStreamSynchronize(stream));
    return 0;
}
