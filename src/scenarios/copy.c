/* copy: host<->device copies from pageable and from pinned memory. A copy from pinned memory
 * is a DMA the GPU runs on its own: cudaMemcpyAsync returns at once and the CPU is free. A copy
 * from pageable memory is staged through a driver buffer by the CPU: the "async" call blocks
 * for about the whole transfer (the implicit sync) and the bandwidth is lower. */
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/fault.h"
#include "gpu/cuda_check.h"
#include "scenarios/scenario.h"
#include "scenarios/validation.h"
#include "kernels.h"

#define PATTERN_SEED 0x5EED5EEDu

static const sb_param_def params[] = {
    {"bytes", SB_PARAM_SIZE, "4KiB,16KiB,64KiB,256KiB,1MiB,4MiB,16MiB,64MiB,256MiB",
     "bytes per copy (a multiple of 4)", 4, 64LL << 30, NULL},
    {NULL, 0, NULL, NULL, 0, 0, NULL},
};

/* a variant's mode: direction | host memory */
enum { H2D = 0, D2H = 1, PAGEABLE = 0, PINNED = 2 };
#define DIR(mode) ((mode)&1)
#define MEM(mode) ((mode) >> 1)

static const sb_variant variants[] = {
    {"h2d-pageable", "host to device from malloc'd memory", 1, NULL, H2D | PAGEABLE},
    {"h2d-pinned", "host to device from cudaHostAlloc'd memory", 0, NULL, H2D | PINNED},
    {"d2h-pageable", "device to host into malloc'd memory", 1, NULL, D2H | PAGEABLE},
    {"d2h-pinned", "device to host into cudaHostAlloc'd memory", 0, NULL, D2H | PINNED},
    {NULL, NULL, 0, NULL, 0},
};

static const sb_metric_def metrics[] = {
    {"GBps", "GB/s", SB_HIGHER, "GB/s"},
    {"host_call_us", "us", SB_LOWER, "call µs"},
    {"wall_us", "us", SB_LOWER, "wall µs"},
    {NULL, NULL, 0, NULL},
};

typedef struct copy_state {
    size_t bytes;
    cudaStream_t stream;
    cudaEvent_t ev_start, ev_stop;
    void *dev;
    void *host[2]; /* by MEM(mode): pageable, pinned */
    uint32_t *check;
    int prepared; /* variant whose buffers are set up for it, -1: none */
} copy_state;

/* Enough copies per repetition to time small ones well: 256 MiB moved, 2 to 1000 copies. */
static long long iters_for(const sb_param_values *p)
{
    long long n = (256LL << 20) / sb_param(p, "bytes");
    return n < 2 ? 2 : n > 1000 ? 1000 : n;
}

static size_t device_bytes(const sb_param_values *p)
{
    return (size_t)sb_param(p, "bytes");
}

static size_t host_bytes(const sb_param_values *p)
{
    return 3 * (size_t)sb_param(p, "bytes"); /* pageable, pinned, check buffer */
}

static void fill_host_pattern(uint32_t *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        w[i] = sb_pattern_word(PATTERN_SEED, i);
}

static int setup(sb_run *r)
{
    copy_state *s = r->state;
    s->bytes = (size_t)sb_run_param(r, "bytes");
    s->prepared = -1;
    sb_resources *res = &r->res;
    int rc;
    if ((rc = sb_get_stream(res, &s->stream, cudaStreamNonBlocking)) ||
        (rc = sb_get_event(res, &s->ev_start, cudaEventDefault)) ||
        (rc = sb_get_event(res, &s->ev_stop, cudaEventDefault)) ||
        (rc = sb_get_device(res, &s->dev, s->bytes)) ||
        (rc = sb_get_pinned(res, &s->host[MEM(PINNED)], s->bytes, cudaHostAllocDefault)) ||
        (rc = sb_get_host(res, &s->host[MEM(PAGEABLE)], s->bytes)) ||
        (rc = sb_get_host(res, &s->check, s->bytes)))
        return rc;
    /* touch every page now, so that page faults are not measured */
    memset(s->host[MEM(PAGEABLE)], 0, s->bytes);
    memset(s->check, 0, s->bytes);
    return 0;
}

/* Source holds the pattern, destination is poisoned: a copy that moved nothing (or the wrong
 * bytes) fails validation. */
static int prepare(copy_state *s, int variant, int mode)
{
    size_t words = s->bytes / 4;
    void *host = s->host[MEM(mode)];
    if (DIR(mode) == H2D) {
        fill_host_pattern(host, words);
        SB_CUDA(cudaMemsetAsync(s->dev, 0xFF, s->bytes, s->stream));
    } else {
        SB_LAUNCH(sb_fill_pattern(s->dev, words, PATTERN_SEED, s->stream));
        memset(host, 0xFF, s->bytes);
    }
    SB_CUDA(cudaStreamSynchronize(s->stream));
    s->prepared = variant;
    return 0;
}

static int measure(sb_run *r, sb_recorder *rec)
{
    copy_state *s = r->state;
    const int mode = sb_run_mode(r);
    if (s->prepared != r->variant) {
        int rc = prepare(s, r->variant, mode);
        if (rc)
            return rc;
    }
    const int h2d = DIR(mode) == H2D;
    void *host = s->host[MEM(mode)];
    void *dst = h2d ? s->dev : host;
    const void *src = h2d ? host : s->dev;
    const enum cudaMemcpyKind kind = h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;

    double in_call = 0;
    double t0 = sb_now_us();
    SB_CUDA(cudaEventRecord(s->ev_start, s->stream));
    for (long long i = 0; i < r->iters; i++) {
        double c0 = sb_now_us();
        SB_CUDA(cudaMemcpyAsync(dst, src, s->bytes, kind, s->stream));
        in_call += sb_now_us() - c0;
    }
    SB_CUDA(cudaEventRecord(s->ev_stop, s->stream));
    SB_CUDA(cudaEventSynchronize(s->ev_stop));
    double t1 = sb_now_us();
    float ms;
    SB_CUDA(cudaEventElapsedTime(&ms, s->ev_start, s->ev_stop));
    sb_record(rec, "GBps", (double)s->bytes * (double)r->iters / (ms * 1e-3) / 1e9);
    sb_record(rec, "host_call_us", in_call / (double)r->iters);
    sb_record(rec, "wall_us", (t1 - t0) / (double)r->iters);
    return 0;
}

static int validate(sb_run *r)
{
    copy_state *s = r->state;
    const int h2d = DIR(sb_run_mode(r)) == H2D;
    const uint32_t *got = h2d ? s->check : s->host[MEM(sb_run_mode(r))];
    if (h2d)
        SB_CUDA(cudaMemcpy(s->check, s->dev, s->bytes, cudaMemcpyDeviceToHost));
    if (sb_fault("copy-data")) /* test hook: damaged data must be caught */
        ((uint32_t *)got)[s->bytes / 8] ^= 1u;
    for (size_t i = 0; i < s->bytes / 4; i++) {
        if (got[i] != sb_pattern_word(PATTERN_SEED, i))
            return sb_invalid("word %zu is 0x%08x, expected 0x%08x", i, got[i],
                              sb_pattern_word(PATTERN_SEED, i));
    }
    s->prepared = -1; /* the next measurement starts from a poisoned destination */
    return 0;
}

SB_SCENARIO(sb_copy, "copy", copy_state,
            "host<->device copies, pageable vs pinned: bandwidth and time the CPU is blocked",
            .params = params, .metrics = metrics, .default_iters = 0, .iters_for = iters_for,
            .check = sb_check_whole_words, .device_bytes = device_bytes, .host_bytes = host_bytes,
            .validate = validate);
