#include "gpu/sync.h"

#include <string.h>

#include "gpu/cuda_check.h"

int sb_sync_kind_from_variant(const char *variant)
{
    static const struct {
        const char *name;
        sb_sync_kind kind;
    } map[] = {
        {"async", SB_SYNC_NONE},
        {"sync-device", SB_SYNC_DEVICE},
        {"sync-stream", SB_SYNC_STREAM},
        {"sync-event", SB_SYNC_EVENT},
        {"sync-readback", SB_SYNC_READBACK},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(map[i].name, variant) == 0)
            return (int)map[i].kind;
    return -1;
}

int sb_sync_init(sb_sync *s, sb_sync_kind kind, cudaStream_t stream, const void *src, void *dst,
                 size_t bytes)
{
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->stream = stream;
    s->src = src;
    s->dst = dst;
    s->bytes = bytes;
    if (kind == SB_SYNC_EVENT)
        SB_CUDA(cudaEventCreateWithFlags(&s->event, cudaEventDisableTiming));
    return 0;
}

void sb_sync_destroy(sb_sync *s)
{
    sb_release_event(s->event);
    memset(s, 0, sizeof *s);
}
