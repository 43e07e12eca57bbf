/* What a scenario's setup acquires (device, pinned and host memory, streams, events, anything
 * with a release function), kept in one list and released in reverse order by the engine after
 * the measurement, also after a failed setup: no scenario writes a teardown block by hand. */
#ifndef SB_RESOURCES_H
#define SB_RESOURCES_H

#include <cuda_runtime.h>
#include <stddef.h>

typedef void (*sb_release_fn)(void *p);

typedef struct sb_resources {
    struct sb_resource {
        sb_release_fn release;
        void *p;
    } * item;
    int n, cap;
} sb_resources;

/* Keeps p, to be released with `release` (released at once, and exit 1 recorded, when there is
 * no memory to keep it). */
int sb_keep(sb_resources *r, sb_release_fn release, void *p);
/* Each allocates, records a failure like SB_CUDA does (returning its code) and keeps it. */
int sb_get_host(sb_resources *r, void *out_ptr, size_t bytes); /* zeroed */
int sb_get_device(sb_resources *r, void *out_ptr, size_t bytes);
int sb_get_pinned(sb_resources *r, void *out_ptr, size_t bytes, unsigned flags);
int sb_get_stream(sb_resources *r, cudaStream_t *s, unsigned flags);
int sb_get_event(sb_resources *r, cudaEvent_t *e, unsigned flags);
/* Releases everything, last acquired first, ignoring errors (nothing can be done about them);
 * the list is empty and reusable after. */
void sb_release_all(sb_resources *r);

#endif
