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
#include "scenarios/fixes.h"
#include "scenarios/validation.h"
#include "scenarios/variant_sync.h"
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

static const sb_metric_def metrics[] = SB_FIX_METRICS_WITH({"wait_us", "us", SB_LOWER, "wait µs"});

enum { MARK_OWN, MARK_OTHER };

typedef struct busy_state {
    cudaStream_t own, other;
    unsigned long long work_ns, other_ns;
    volatile unsigned *mark_host; /* [MARK_OWN], [MARK_OTHER]: pinned, host-mapped */
    unsigned *mark_dev;           /* the same words as the GPU addresses them */
    sb_variant_syncs syncs;
    unsigned seq;
    sb_mismatch bad; /* steps whose sync returned before the work it waits for */
} busy_state;

static int setup(sb_run *r)
{
    busy_state *s = r->state;
    s->work_ns = sb_run_param_ns(r, "work_us");
    s->other_ns = sb_run_param_ns(r, "other_us");
    void *marks = NULL;
    sb_resources *res = &r->res;
    int rc;
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

static void mark_wrong(busy_state *s, const char *what, unsigned got)
{
    sb_mismatch_note(&s->bad, "syncs returned before %s had finished (mark %u, expected %u)", what,
                     got, s->seq);
}

static void check_mark(busy_state *s, int which, const char *what)
{
    unsigned got = s->mark_host[which];
    if (got != s->seq)
        mark_wrong(s, what, got);
}

static int measure(sb_run *r, sb_recorder *rec)
{
    busy_state *s = r->state;
    const sb_sync *sync = NULL;
    int rc = sb_variant_sync(&s->syncs, r, s->own, NULL, NULL, 0, &sync);
    if (rc)
        return rc;
    const int device_wide = sb_run_mode(r) == SB_SYNC_DEVICE;
    double wait = 0;
    sb_fix_timer t = sb_fix_start();
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
    t.syncs = r->iters; /* one blocking call per step: the sync */
    sb_fix_record(rec, &t, t1, r->iters);
    sb_record(rec, "wait_us", wait / (double)r->iters);
    return 0;
}

static int validate(sb_run *r)
{
    busy_state *s = r->state;
    if (sb_fault("busy-stream-mark")) /* test hook */
        mark_wrong(s, "the step's own work", s->seq - 1);
    return sb_mismatch_report(&s->bad);
}

SB_SCENARIO(sb_busy_stream, "busy-stream", busy_state,
            "device-wide vs stream sync while a second stream runs long work", .params = params,
            .metrics = metrics, .delta = &sb_fix_delta, .default_iters = 10, .validate = validate);
