/* small-h2d: creating a small tensor from host data, e.g. torch.tensor(list, device="cuda").
 * Each step writes `bytes` of fresh values on the host, moves them to the GPU, and a kernel
 * checks them there (kernels/pattern_check.h):
 *   pageable      the values in malloc'd memory, copied with cudaMemcpy: the call returns only
 *                 once the data is staged, after the work queued before it (a host sync)
 *   pinned-async  the values written straight into a pinned staging slot, copied with
 *                 cudaMemcpyAsync on the step's stream: the call returns at once
 * A pinned slot must not be rewritten before its copy has run: each slot records an event after
 * its copy, and a slot is reused only once its event has completed (cudaEventQuery), as
 * PyTorch's pinned-memory allocator does. The ring has as many slots as a repetition has steps
 * (up to RING_BYTES), so the query normally finds the copy done; where it does not, the step
 * waits with cudaEventSynchronize, and that wait is counted in syncs_per_step. A repetition
 * ends with one stream sync, timed, not counted in syncs_per_step. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "base/fault.h"
#include "gpu/cuda_check.h"
#include "scenarios/scenario.h"
#include "kernels.h"
#include "pattern_check.h"

#define RING_BYTES (64u << 20) /* pinned staging memory, at most (but 2 slots at least) */
#define RING_SLOTS 1024        /* events, at most */

static const sb_param_def params[] = {
    {"bytes", SB_PARAM_SIZE, "4KiB", "host data per step (a multiple of 4)", 4, 1LL << 30, NULL},
    {NULL, 0, NULL, NULL, 0, 0, NULL},
};

enum { PAGEABLE, PINNED_ASYNC };

static const sb_variant variants[] = {
    {"pageable", "cudaMemcpy from malloc'd memory: the call blocks (torch.tensor(list))", 1, NULL,
     PAGEABLE},
    {"pinned-async", "staged in pinned memory, cudaMemcpyAsync, no host sync", 0, "pageable",
     PINNED_ASYNC},
    {NULL, NULL, 0, NULL, 0},
};

static const sb_metric_def metrics[] = {
    {"step_us", "us", SB_LOWER, "step µs"},
    {"saving_us", "us", SB_HIGHER, "saving µs"},
    {"saving_pct", "%", SB_HIGHER, "saving %"},
    {"call_us", "us", SB_LOWER, "copy call µs"},
    {"syncs_per_step", "count", SB_LOWER, "syncs/step"},
    {NULL, NULL, 0, NULL},
};

static const sb_delta_def delta = {"step_us", "saving_us", "saving_pct", 1};

typedef struct h2d_state {
    size_t bytes;
    cudaStream_t stream;
    uint32_t *dev;
    uint32_t *pageable;
    uint32_t *ring; /* pinned: slots x bytes */
    cudaEvent_t ev[RING_SLOTS];
    int slots, next;
    unsigned long long *counts;  /* device: mismatches, checks that ran */
    unsigned long long launched; /* checks enqueued since the last validate */
    uint32_t seq;
} h2d_state;

static int check(const sb_param_values *p, char *err, size_t n)
{
    if (sb_param(p, "bytes") % 4) {
        snprintf(err, n, "bytes=%lld is not a multiple of 4", sb_param(p, "bytes"));
        return -1;
    }
    return 0;
}

static size_t ring_slots(size_t bytes, long long iters)
{
    size_t fit = RING_BYTES / bytes, n = (size_t)iters;
    if (n > fit)
        n = fit;
    if (n > RING_SLOTS)
        n = RING_SLOTS;
    return n < 2 ? 2 : n;
}

static size_t device_bytes(const sb_param_values *p)
{
    return (size_t)sb_param(p, "bytes") + 64;
}

static size_t host_bytes(const sb_param_values *p)
{
    size_t b = (size_t)sb_param(p, "bytes");
    return b + (2 * b > RING_BYTES ? 2 * b : RING_BYTES); /* pageable + the ring at most */
}

static int setup(sb_run *r)
{
    h2d_state *s = r->state;
    sb_resources *res = &r->res;
    int rc;
    s->bytes = (size_t)sb_run_param(r, "bytes");
    s->slots = (int)ring_slots(s->bytes, r->iters);
    /* a blocking stream: the pageable cudaMemcpy (legacy default stream) and the checking
     * kernel on this stream are ordered with each other */
    if ((rc = sb_get_stream(res, &s->stream, cudaStreamDefault)) ||
        (rc = sb_get_device(res, &s->dev, s->bytes)) ||
        (rc = sb_get_device(res, &s->counts, 2 * sizeof *s->counts)) ||
        (rc = sb_get_host(res, &s->pageable, s->bytes)) ||
        (rc = sb_get_pinned(res, &s->ring, (size_t)s->slots * s->bytes, cudaHostAllocDefault)))
        return rc;
    for (int i = 0; i < s->slots; i++)
        if ((rc = sb_get_event(res, &s->ev[i], cudaEventDisableTiming)))
            return rc;
    /* touch every page now, so that page faults are not measured */
    memset(s->pageable, 0, s->bytes);
    memset(s->ring, 0, (size_t)s->slots * s->bytes);
    SB_CUDA(cudaMemsetAsync(s->counts, 0, 2 * sizeof *s->counts, s->stream));
    SB_CUDA(cudaStreamSynchronize(s->stream));
    return 0;
}

/* The host data of one step: what a Python list would hold. */
static void fill_host(uint32_t *w, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++)
        w[i] = sb_pattern_word(seed, i);
}

/* One step; adds the time spent in the copy call to *call and the blocking waits to *syncs. */
static int step(h2d_state *s, int mode, double *call, int *syncs)
{
    const size_t words = s->bytes / 4;
    s->seq++;
    if (mode == PAGEABLE) {
        fill_host(s->pageable, words, s->seq);
        double c0 = sb_now_us();
        SB_CUDA(cudaMemcpy(s->dev, s->pageable, s->bytes, cudaMemcpyHostToDevice));
        *call += sb_now_us() - c0;
        ++*syncs;
    } else {
        int slot = s->next;
        s->next = (s->next + 1) % s->slots;
        cudaError_t q = cudaEventQuery(s->ev[slot]);
        if (q == cudaErrorNotReady) { /* the slot's last copy has not run yet: wait for it */
            SB_CUDA(cudaEventSynchronize(s->ev[slot]));
            ++*syncs;
        } else {
            SB_CUDA(q);
        }
        uint32_t *host = s->ring + (size_t)slot * words;
        fill_host(host, words, s->seq);
        double c0 = sb_now_us();
        SB_CUDA(cudaMemcpyAsync(s->dev, host, s->bytes, cudaMemcpyHostToDevice, s->stream));
        *call += sb_now_us() - c0;
        SB_CUDA(cudaEventRecord(s->ev[slot], s->stream));
    }
    SB_LAUNCH(sb_launch_check_pattern(s->dev, words, s->seq, s->counts, s->stream));
    s->launched++;
    return 0;
}

static int measure(sb_run *r, sb_recorder *rec)
{
    h2d_state *s = r->state;
    const int mode = sb_run_mode(r);
    double call = 0;
    int syncs = 0;
    double t0 = sb_now_us();
    for (long long i = 0; i < r->iters; i++) {
        int rc = step(s, mode, &call, &syncs);
        if (rc)
            return rc;
    }
    SB_CUDA(cudaStreamSynchronize(s->stream)); /* ends the repetition: not a step's sync */
    double t1 = sb_now_us();
    const double n = (double)r->iters;
    sb_record(rec, "step_us", (t1 - t0) / n);
    sb_record(rec, "call_us", call / n);
    sb_record(rec, "syncs_per_step", syncs / n);
    return 0;
}

static int validate(sb_run *r)
{
    h2d_state *s = r->state;
    unsigned long long counts[2];
    SB_CUDA(cudaMemcpyAsync(counts, s->counts, sizeof counts, cudaMemcpyDeviceToHost, s->stream));
    SB_CUDA(cudaStreamSynchronize(s->stream));
    if (sb_fault("h2d-data")) /* test hook: damaged data on the GPU must be caught */
        counts[0]++;
    unsigned long long launched = s->launched;
    s->launched = 0;
    if (counts[0] || counts[1] != launched)
        return sb_fail(SB_EXIT_FAIL,
                       "validation failed in %s: %llu words on the GPU differed from the host "
                       "data of their step; %llu of %llu checks ran",
                       sb_error_context(), counts[0], counts[1], launched);
    SB_CUDA(cudaMemsetAsync(s->counts, 0, 2 * sizeof *s->counts, s->stream));
    SB_CUDA(cudaStreamSynchronize(s->stream));
    return 0;
}

const sb_scenario sb_small_h2d = {
    .name = "small-h2d",
    .state_size = sizeof(h2d_state),
    .summary = "small tensors from host data: blocking pageable copy vs pinned async staging",
    .params = params,
    .variants = variants,
    .metrics = metrics,
    .delta = &delta,
    .default_iters = 200,
    .check = check,
    .device_bytes = device_bytes,
    .host_bytes = host_bytes,
    .setup = setup,
    .measure = measure,
    .validate = validate,
};
