/* alloc: allocations that synchronize. Each step allocates a buffer of `bytes`, a kernel writes
 * it and a second one checks it on the GPU, and the buffer is released:
 *   malloc-free   cudaMalloc + cudaFree: cudaFree synchronizes the device, every step
 *   malloc-async  cudaMallocFromPoolAsync + cudaFreeAsync on the step's stream: stream-ordered,
 *                 from a pool of this scenario's own that keeps its memory (release threshold
 *                 at the maximum), so nothing synchronizes and nothing goes back to the driver
 *   reuse         one buffer allocated at setup and used by every step, as a caching
 *                 allocator (PyTorch's) hands the same block back
 * Every step writes sb_pattern_word(step, i) and checks it on the GPU (kernels/
 * pattern_check.h): the mismatches and the checks that ran are counted on the device and
 * compared in validate. A repetition ends with one stream sync, timed (the work must be done),
 * not counted in syncs_per_step. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/clock.h"
#include "gpu/cuda_check.h"
#include "scenarios/fixes.h"
#include "scenarios/pattern_tally.h"
#include "kernels.h"

static const sb_param_def params[] = {
    {"bytes", SB_PARAM_SIZE, "1MiB", "bytes allocated per step (a multiple of 4)", 4, 16LL << 30,
     NULL},
    {NULL, 0, NULL, NULL, 0, 0, NULL},
};

enum { MALLOC_FREE, MALLOC_ASYNC, REUSE };

static const sb_variant variants[] = {
    {"malloc-free", "cudaMalloc + cudaFree every step (cudaFree synchronizes)", 1, NULL,
     MALLOC_FREE},
    {"malloc-async", "cudaMallocFromPoolAsync + cudaFreeAsync: stream-ordered, no sync", 0,
     "malloc-free", MALLOC_ASYNC},
    {"reuse", "one cached buffer for every step, as a caching allocator", 0, "malloc-free", REUSE},
    {NULL, NULL, 0, NULL, 0},
};

typedef struct alloc_state {
    sb_pattern_tally tally; /* first: the scenario's validate is sb_tally_validate */
    size_t bytes;
    cudaStream_t stream;
    cudaMemPool_t pool;
    void *cached; /* reuse */
    uint32_t seq;
} alloc_state;
_Static_assert(offsetof(alloc_state, tally) == 0, "sb_tally_validate reads the state's start");

static size_t device_bytes(const sb_param_values *p)
{
    /* the cached buffer, and the one malloc-free or the pool holds at a time */
    return 2 * (size_t)sb_param(p, "bytes") + 64;
}

static void destroy_pool(void *p)
{
    cudaMemPoolDestroy((cudaMemPool_t)p);
}

static int setup(sb_run *r)
{
    alloc_state *s = r->state;
    s->bytes = (size_t)sb_run_param(r, "bytes");
    sb_resources *res = &r->res;
    int rc;
    if ((rc = sb_get_stream(res, &s->stream, cudaStreamNonBlocking)) ||
        (rc = sb_get_device(res, &s->cached, s->bytes)) ||
        (rc = sb_tally_init(&s->tally, res, s->stream, "alloc-data",
                            "words differed from the pattern written in their step")))
        return rc;
    /* a pool of our own: its memory stays with it between steps (the default pool's release
     * threshold of 0 would hand it back at every sync), and nothing outlives the plan entry */
    struct cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = r->device;
    SB_CUDA(cudaMemPoolCreate(&s->pool, &props));
    if ((rc = sb_keep(res, destroy_pool, s->pool)))
        return rc;
    uint64_t keep = UINT64_MAX;
    SB_CUDA(cudaMemPoolSetAttribute(s->pool, cudaMemPoolAttrReleaseThreshold, &keep));
    return 0;
}

/* The step's work on buf: write this step's pattern, check it. */
static int write_and_check(alloc_state *s, void *buf)
{
    size_t words = s->bytes / 4;
    SB_LAUNCH(sb_fill_pattern(buf, words, s->seq, s->stream));
    return sb_tally_check(&s->tally, buf, words, s->seq);
}

static int step(alloc_state *s, int mode)
{
    void *buf = NULL;
    int rc;
    s->seq++;
    switch (mode) {
    case MALLOC_FREE:
        SB_CUDA(cudaMalloc(&buf, s->bytes));
        if ((rc = write_and_check(s, buf))) {
            cudaFree(buf);
            return rc;
        }
        SB_CUDA(cudaFree(buf)); /* synchronizes: waits for the kernels above */
        return 0;
    case MALLOC_ASYNC:
        SB_CUDA(cudaMallocFromPoolAsync(&buf, s->bytes, s->pool, s->stream));
        if ((rc = write_and_check(s, buf))) {
            cudaFreeAsync(buf, s->stream);
            return rc;
        }
        SB_CUDA(cudaFreeAsync(buf, s->stream)); /* stream-ordered: after the kernels */
        return 0;
    default:
        return write_and_check(s, s->cached);
    }
}

static int measure(sb_run *r, sb_recorder *rec)
{
    alloc_state *s = r->state;
    const int mode = sb_run_mode(r);
    sb_fix_timer t = sb_fix_start();
    for (long long i = 0; i < r->iters; i++) {
        int rc = step(s, mode);
        if (rc)
            return rc;
    }
    SB_CUDA(cudaStreamSynchronize(s->stream));    /* ends the repetition: not a step's sync */
    t.syncs = mode == MALLOC_FREE ? r->iters : 0; /* the cudaFree of every step */
    sb_fix_record(rec, &t, sb_now_us(), r->iters);
    return 0;
}

SB_SCENARIO(sb_alloc, "alloc", alloc_state,
            "cudaMalloc/cudaFree per step vs a stream-ordered pool vs a cached buffer",
            .params = params, .metrics = sb_fix_metrics, .delta = &sb_fix_delta,
            .default_iters = 100, .check = sb_check_whole_words, .device_bytes = device_bytes,
            .validate = sb_tally_validate);
