/* For the scenarios whose variants' modes are sync policies (small-gemm, big-gemm,
 * busy-stream): each variant's sb_sync, made on its first measurement. */
#ifndef SB_VARIANT_SYNC_H
#define SB_VARIANT_SYNC_H

#include "gpu/sync.h"
#include "scenarios/scenario.h"

typedef struct sb_variant_syncs {
    sb_sync sync[SB_MAX_VARIANTS];
    int ready[SB_MAX_VARIANTS];
} sb_variant_syncs;

/* The sync policy of the variant under measurement, on `stream` (src, dst and bytes as
 * sb_sync_init takes them); made on first use, what it needs kept in r->res. */
int sb_variant_sync(sb_variant_syncs *vs, sb_run *r, cudaStream_t stream, const void *src,
                    void *dst, size_t bytes, const sb_sync **out);

#endif
