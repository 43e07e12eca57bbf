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
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "base/fault.h"
#include "gpu/cuda_check.h"
#include "scenarios/scenario.h"
#include "kernels.h"
#include "pattern_check.h"

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

static const sb_metric_def metrics[] = {
    {"step_us", "us", SB_LOWER, "step µs"},
    {"saving_us", "us", SB_HIGHER, "saving µs"},
    {"saving_pct", "%", SB_HIGHER, "saving %"},
    {"syncs_per_step", "count", SB_LOWER, "syncs/step"},
    {NULL, NULL, 0, NULL},
};

static const sb_delta_def delta = {"step_us", "saving_us", "saving_pct", 1};

typedef struct alloc_state {
    size_t bytes;
    cudaStream_t stream;
    cudaMemPool_t pool;
    void *cached;                /* reuse */
    unsigned long long *counts;  /* device: mismatches, checks that ran */
    unsigned long long launched; /* checks enqueued since the last validate */
    uint32_t seq;
} alloc_state;

static int check(const sb_param_values *p, char *err, size_t n)
{
    if (sb_param(p, "bytes") % 4) {
        snprintf(err, n, "bytes=%lld is not a multiple of 4", sb_param(p, "bytes"));
        return -1;
    }
    return 0;
}

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
    sb_resources *res = &r->res;
    int rc;
    s->bytes = (size_t)sb_run_param(r, "bytes");
    if ((rc = sb_get_stream(res, &s->stream, cudaStreamNonBlocking)) ||
        (rc = sb_get_device(res, &s->cached, s->bytes)) ||
        (rc = sb_get_device(res, &s->counts, 2 * sizeof *s->counts)))
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
    SB_CUDA(cudaMemsetAsync(s->counts, 0, 2 * sizeof *s->counts, s->stream));
    SB_CUDA(cudaStreamSynchronize(s->stream));
    return 0;
}

/* The step's work on buf: write this step's pattern, check it. */
static int write_and_check(alloc_state *s, void *buf)
{
    size_t words = s->bytes / 4;
    SB_LAUNCH(sb_fill_pattern(buf, words, s->seq, s->stream));
    SB_LAUNCH(sb_launch_check_pattern(buf, words, s->seq, s->counts, s->stream));
    s->launched++;
    return 0;
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
    double t0 = sb_now_us();
    for (long long i = 0; i < r->iters; i++) {
        int rc = step(s, mode);
        if (rc)
            return rc;
    }
    SB_CUDA(cudaStreamSynchronize(s->stream)); /* ends the repetition: not a step's sync */
    double t1 = sb_now_us();
    sb_record(rec, "step_us", (t1 - t0) / (double)r->iters);
    sb_record(rec, "syncs_per_step", mode == MALLOC_FREE ? 1.0 : 0.0); /* the cudaFree */
    return 0;
}

static int validate(sb_run *r)
{
    alloc_state *s = r->state;
    unsigned long long counts[2];
    SB_CUDA(cudaMemcpyAsync(counts, s->counts, sizeof counts, cudaMemcpyDeviceToHost, s->stream));
    SB_CUDA(cudaStreamSynchronize(s->stream));
    if (sb_fault("alloc-data")) /* test hook: a damaged buffer must be caught */
        counts[0]++;
    unsigned long long launched = s->launched;
    s->launched = 0;
    if (counts[0] || counts[1] != launched)
        return sb_fail(SB_EXIT_FAIL,
                       "validation failed in %s: %llu words differed from the pattern written "
                       "in their step; %llu of %llu checks ran",
                       sb_error_context(), counts[0], counts[1], launched);
    SB_CUDA(cudaMemsetAsync(s->counts, 0, 2 * sizeof *s->counts, s->stream));
    SB_CUDA(cudaStreamSynchronize(s->stream));
    return 0;
}

const sb_scenario sb_alloc = {
    .name = "alloc",
    .state_size = sizeof(alloc_state),
    .summary = "cudaMalloc/cudaFree per step vs a stream-ordered pool vs a cached buffer",
    .params = params,
    .variants = variants,
    .metrics = metrics,
    .delta = &delta,
    .default_iters = 100,
    .check = check,
    .device_bytes = device_bytes,
    .setup = setup,
    .measure = measure,
    .validate = validate,
};
