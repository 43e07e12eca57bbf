/* busy-stream: a device-wide sync waits for every stream, a stream or event sync only for its
 * own. Each step enqueues long work (other_us) on a second, non-blocking stream — a prefetch or
 * communication stream — then short work (work_us) on the step's own stream, then syncs:
 * cudaDeviceSynchronize waits for the other stream's work too (about other_us per step), while
 * cudaStreamSynchronize and an event sync return once the short work is done.
 *
 * Both kernels store their step's number into host-mapped pinned memory when they finish, so
 * after each sync the host checks, with no CUDA call, that the sync waited for the work it
 * must wait for (the step's own, and with sync-device the other stream's too). The stream and
 * event variants leave the other stream's work queued: it keeps running during their later
 * steps and is drained after the timed steps, untimed, before the repetition ends (that
 * backlog is at most iters x other_us, the time a sync-device repetition spends anyway). */
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "base/fault.h"
#include "gpu/cuda_check.h"
#include "gpu/sync.h"
#include "scenarios/scenario.h"
#include "host_mark.h"

static const sb_param_def params[] = {
    {"other_us", SB_PARAM_INT, "1000", "the second stream's GPU work per step", 1, 1000000, NULL},
    {"work_us", SB_PARAM_INT, "10", "the step's own GPU work", 1, 1000000, NULL},
    {NULL, 0, NULL, NULL, 0, 0, NULL},
};

/* a variant's mode is the sync policy that ends each step */
static const sb_variant variants[] = {
    {"sync-device", "cudaDeviceSynchronize: waits for the other stream's work too", 1, NULL,
     SB_SYNC_DEVICE},
    {"sync-stream", "cudaStreamSynchronize of the step's own stream", 1, "sync-device",
     SB_SYNC_STREAM},
    {"sync-event", "cudaEventRecord + cudaEventSynchronize on the step's own stream", 1,
     "sync-device", SB_SYNC_EVENT},
    {NULL, NULL, 0, NULL, 0},
};

static const sb_metric_def metrics[] = {
    {"step_us", "us", SB_LOWER, "step µs"},
    {"saving_us", "us", SB_HIGHER, "saving µs"},
    {"saving_pct", "%", SB_HIGHER, "saving %"},
    {"wait_us", "us", SB_LOWER, "wait µs"},
    {"syncs_per_step", "count", SB_LOWER, "syncs/step"},
    {NULL, NULL, 0, NULL},
};

static const sb_delta_def delta = {"step_us", "saving_us", "saving_pct", 1};

enum { MARK_OWN, MARK_OTHER };

typedef struct busy_state {
    cudaStream_t own, other;
    unsigned long long work_ns, other_ns;
    volatile unsigned *mark_host;  /* [MARK_OWN], [MARK_OTHER]: pinned, host-mapped */
    unsigned *mark_dev;            /* the same words as the GPU addresses them */
    sb_sync sync[SB_MAX_VARIANTS]; /* per variant, created on first use */
    int sync_ready[SB_MAX_VARIANTS];
    unsigned seq;
    unsigned long long bad; /* steps whose sync returned before the work it waits for */
    unsigned bad_got, bad_want;
    const char *bad_what;
} busy_state;

static int setup(sb_run *r)
{
    busy_state *s = r->state;
    sb_resources *res = &r->res;
    int rc;
    s->work_ns = (unsigned long long)sb_run_param(r, "work_us") * 1000ull;
    s->other_ns = (unsigned long long)sb_run_param(r, "other_us") * 1000ull;
    void *marks = NULL;
    /* non-blocking streams: neither waits for the other, nor for the legacy default stream */
    if ((rc = sb_get_stream(res, &s->own, cudaStreamNonBlocking)) ||
        (rc = sb_get_stream(res, &s->other, cudaStreamNonBlocking)) ||
        (rc = sb_get_pinned(res, &marks, 2 * sizeof(unsigned), cudaHostAllocMapped)))
        return rc;
    s->mark_host = marks;
    SB_CUDA(cudaHostGetDevicePointer((void **)&s->mark_dev, marks, 0));
    s->mark_host[MARK_OWN] = s->mark_host[MARK_OTHER] = 0;
    return 0;
}

static int select_sync(sb_run *r, busy_state *s, const sb_sync **out)
{
    int v = r->variant;
    if (!s->sync_ready[v]) {
        int rc =
            sb_sync_init(&s->sync[v], &r->res, (sb_sync_kind)sb_run_mode(r), s->own, NULL, NULL, 0);
        if (rc)
            return rc;
        s->sync_ready[v] = 1;
    }
    *out = &s->sync[v];
    return 0;
}

static void check_mark(busy_state *s, int which, const char *what)
{
    unsigned got = s->mark_host[which];
    if (got != s->seq && !s->bad++) {
        s->bad_got = got;
        s->bad_want = s->seq;
        s->bad_what = what;
    }
}

static int measure(sb_run *r, sb_recorder *rec)
{
    busy_state *s = r->state;
    const sb_sync *sync = NULL;
    int rc = select_sync(r, s, &sync);
    if (rc)
        return rc;
    const int device_wide = sb_run_mode(r) == SB_SYNC_DEVICE;
    double wait = 0;
    double t0 = sb_now_us();
    for (long long i = 0; i < r->iters; i++) {
        s->seq++;
        /* the other stream's long work first, so that it is running during this step's sync */
        SB_LAUNCH(
            sb_launch_spin_mark_host(s->other_ns, s->mark_dev + MARK_OTHER, s->seq, s->other));
        SB_LAUNCH(sb_launch_spin_mark_host(s->work_ns, s->mark_dev + MARK_OWN, s->seq, s->own));
        double w0 = sb_now_us();
        SB_CUDA(sb_sync_point(sync));
        wait += sb_now_us() - w0;
        check_mark(s, MARK_OWN, "the step's own work");
        if (device_wide)
            check_mark(s, MARK_OTHER, "the other stream's work");
    }
    double t1 = sb_now_us();
    /* untimed: the other stream's backlog, so that the next repetition starts from an idle GPU */
    SB_CUDA(cudaStreamSynchronize(s->other));
    check_mark(s, MARK_OTHER, "the other stream's last work, after draining it");
    const double n = (double)r->iters;
    sb_record(rec, "step_us", (t1 - t0) / n);
    sb_record(rec, "wait_us", wait / n);
    sb_record(rec, "syncs_per_step", 1.0); /* one blocking call per step: the sync */
    return 0;
}

static int validate(sb_run *r)
{
    busy_state *s = r->state;
    if (sb_fault("busy-stream-mark") && !s->bad++) { /* test hook */
        s->bad_got = s->seq - 1;
        s->bad_want = s->seq;
        s->bad_what = "the step's own work";
    }
    if (s->bad) {
        unsigned long long bad = s->bad;
        s->bad = 0;
        return sb_fail(SB_EXIT_FAIL,
                       "validation failed in %s: %llu syncs returned before %s had finished "
                       "(mark %u, expected %u)",
                       sb_error_context(), bad, s->bad_what, s->bad_got, s->bad_want);
    }
    return 0;
}

const sb_scenario sb_busy_stream = {
    .name = "busy-stream",
    .state_size = sizeof(busy_state),
    .summary = "device-wide vs stream sync while a second stream runs long work",
    .params = params,
    .variants = variants,
    .metrics = metrics,
    .delta = &delta,
    .default_iters = 10,
    .setup = setup,
    .measure = measure,
    .validate = validate,
};
