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
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/clock.h"
#include "gpu/cuda_check.h"
#include "scenarios/fixes.h"
#include "scenarios/pattern_tally.h"
#include "kernels.h"

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

static const sb_metric_def metrics[] =
    SB_FIX_METRICS_WITH({"call_us", "us", SB_LOWER, "copy call µs"});

typedef struct h2d_state {
    sb_pattern_tally tally; /* first: the scenario's validate is sb_tally_validate */
    size_t bytes;
    cudaStream_t stream;
    uint32_t *dev;
    uint32_t *pageable;
    uint32_t *ring; /* pinned: slots x bytes */
    cudaEvent_t ev[RING_SLOTS];
    int slots, next;
    uint32_t seq;
} h2d_state;
_Static_assert(offsetof(h2d_state, tally) == 0, "sb_tally_validate reads the state's start");

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
    s->bytes = (size_t)sb_run_param(r, "bytes");
    s->slots = (int)ring_slots(s->bytes, r->iters);
    sb_resources *res = &r->res;
    int rc;
    /* a blocking stream: the pageable cudaMemcpy (legacy default stream) and the checking
     * kernel on this stream are ordered with each other */
    if ((rc = sb_get_stream(res, &s->stream, cudaStreamDefault)) ||
        (rc = sb_get_device(res, &s->dev, s->bytes)) ||
        (rc = sb_get_host(res, &s->pageable, s->bytes)) ||
        (rc = sb_get_pinned(res, &s->ring, (size_t)s->slots * s->bytes, cudaHostAllocDefault)))
        return rc;
    for (int i = 0; i < s->slots; i++)
        if ((rc = sb_get_event(res, &s->ev[i], cudaEventDisableTiming)))
            return rc;
    /* touch every page now, so that page faults are not measured */
    memset(s->pageable, 0, s->bytes);
    memset(s->ring, 0, (size_t)s->slots * s->bytes);
    return sb_tally_init(&s->tally, res, s->stream, "h2d-data",
                         "words on the GPU differed from the host data of their step");
}

/* The host data of one step: what a Python list would hold. */
static void fill_host(uint32_t *w, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++)
        w[i] = sb_pattern_word(seed, i);
}

/* One step; adds the time spent in the copy call to *call and the blocking waits to *syncs. */
static int step(h2d_state *s, int mode, double *call, long long *syncs)
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
    return sb_tally_check(&s->tally, s->dev, words, s->seq);
}

static int measure(sb_run *r, sb_recorder *rec)
{
    h2d_state *s = r->state;
    const int mode = sb_run_mode(r);
    double call = 0;
    sb_fix_timer t = sb_fix_start();
    for (long long i = 0; i < r->iters; i++) {
        int rc = step(s, mode, &call, &t.syncs);
        if (rc)
            return rc;
    }
    SB_CUDA(cudaStreamSynchronize(s->stream)); /* ends the repetition: not a step's sync */
    sb_fix_record(rec, &t, sb_now_us(), r->iters);
    sb_record(rec, "call_us", call / (double)r->iters);
    return 0;
}

SB_SCENARIO(sb_small_h2d, "small-h2d", h2d_state,
            "small tensors from host data: blocking pageable copy vs pinned async staging",
            .params = params, .metrics = metrics, .delta = &sb_fix_delta, .default_iters = 200,
            .check = sb_check_whole_words, .device_bytes = device_bytes, .host_bytes = host_bytes,
            .validate = sb_tally_validate);
