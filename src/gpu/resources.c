#include "gpu/resources.h"

#include <stdlib.h>
#include <string.h>

#include "gpu/cuda_check.h"

int sb_keep(sb_resources *r, sb_release_fn release, void *p)
{
    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 16;
        struct sb_resource *item = realloc(r->item, sizeof *item * (size_t)cap);
        if (!item) {
            release(p);
            return sb_fail(SB_EXIT_FAIL, "out of host memory in %s", sb_error_context());
        }
        r->item = item;
        r->cap = cap;
    }
    r->item[r->n].release = release;
    r->item[r->n].p = p;
    r->n++;
    return 0;
}

static void free_device(void *p)
{
    cudaFree(p);
}

static void free_pinned(void *p)
{
    cudaFreeHost(p);
}

static void destroy_stream(void *p)
{
    cudaStreamDestroy((cudaStream_t)p);
}

static void destroy_event(void *p)
{
    cudaEventDestroy((cudaEvent_t)p);
}

/* Kept first, then handed out: a pointer sb_keep had to release is never seen. */
static int publish(sb_resources *r, sb_release_fn release, void *p, void *out_ptr)
{
    int rc = sb_keep(r, release, p);
    if (!rc)
        memcpy(out_ptr, &p, sizeof p);
    return rc;
}

int sb_get_host(sb_resources *r, void *out_ptr, size_t bytes)
{
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p)
        return sb_fail(SB_EXIT_FAIL, "out of host memory (%zu bytes) in %s", bytes,
                       sb_error_context());
    return publish(r, free, p, out_ptr);
}

int sb_get_device(sb_resources *r, void *out_ptr, size_t bytes)
{
    void *p = NULL;
    SB_CUDA(cudaMalloc(&p, bytes));
    return publish(r, free_device, p, out_ptr);
}

int sb_get_pinned(sb_resources *r, void *out_ptr, size_t bytes, unsigned flags)
{
    void *p = NULL;
    SB_CUDA(cudaHostAlloc(&p, bytes, flags));
    return publish(r, free_pinned, p, out_ptr);
}

int sb_get_stream(sb_resources *r, cudaStream_t *s, unsigned flags)
{
    SB_CUDA(cudaStreamCreateWithFlags(s, flags));
    return sb_keep(r, destroy_stream, *s);
}

int sb_get_event(sb_resources *r, cudaEvent_t *e, unsigned flags)
{
    SB_CUDA(cudaEventCreateWithFlags(e, flags));
    return sb_keep(r, destroy_event, *e);
}

void sb_release_all(sb_resources *r)
{
    while (r->n > 0) {
        r->n--;
        r->item[r->n].release(r->item[r->n].p);
    }
    free(r->item);
    r->item = NULL;
    r->cap = 0;
}
