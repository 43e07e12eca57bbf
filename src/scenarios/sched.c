/* sched: how the host thread waits in a sync, and what that costs in latency and in CPU.
 * cudaSetDeviceFlags(cudaDeviceScheduleAuto/Spin/Yield/BlockingSync) chooses whether a thread
 * blocked in cudaStreamSynchronize spins on the CPU, yields it between polls, or sleeps until
 * the GPU's interrupt wakes it. Each step launches a kernel that spins for work_us on the GPU
 * and synchronizes its stream; the metrics are the wall time per step, the part of it that is
 * not the work (sync_us = step_us - work_us: launch + wake-up + return), and the CPU time the
 * process burns per step (getrusage(RUSAGE_SELF): user + system, all its threads).
 *
 * Design: the flag belongs to a process's CUDA context and is fixed when the context is
 * created, but syncbench opens its context (and measures other scenarios in it) before any
 * scenario runs. So each variant runs in a helper process of its own: the binary re-executes
 * itself (/proc/self/exe, base/coproc.h) with the hidden subcommand `__sched-worker DEVICE
 * MODE CONTEXT` (src/cmd/sched_worker.c), which creates its context with the flag
 * (cudaInitDevice, checked with cudaGetDeviceFlags) and then serves requests over a socket:
 * one repetition per "measure" request, with its numbers sent back as text; "validate" checks
 * its results. This side of the scenario is a proxy: measure() asks the worker for one
 * repetition and records the numbers into the engine's recorder, so the engine's warm-up,
 * stopping rule, validation, statistics and output apply unchanged. A worker lives from the
 * variant's first repetition to the next variant (or the plan entry's end, through the
 * resources), so nothing of one variant's context reaches the next, nor the next plan entry.
 * The parent's own context stays idle meanwhile (the GPU time-slices only contexts with work),
 * and the worker's getrusage counts the worker alone, not syncbench's other threads.
 *
 * CUDA 12 documents that cudaSetDeviceFlags may overwrite an initialized device's flags, but
 * not whether a context already waiting one way then waits another; a fresh process per mode
 * leaves no doubt. A GPU in exclusive-process compute mode admits no second process: the
 * worker then fails with a message that says so. */
#include "scenarios/sched.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "base/clock.h"
#include "base/coproc.h"
#include "base/fault.h"
#include "gpu/cuda_check.h"
#include "scenarios/fixes.h"
#include "scenarios/validation.h"
#include "host_mark.h"

static const sb_param_def params[] = {
    {"work_us", SB_PARAM_INT, "200", "GPU work per step before the stream sync", 1, 1000000, NULL},
    {NULL, 0, NULL, NULL, 0, 0, NULL},
};

/* a variant's mode is its cudaDeviceSchedule* flag */
static const sb_variant variants[] = {
    {"auto", "cudaDeviceScheduleAuto: the driver's choice (spin while CPUs outnumber contexts)", 1,
     NULL, cudaDeviceScheduleAuto},
    {"spin", "cudaDeviceScheduleSpin: the waiting thread polls without a break", 1, NULL,
     cudaDeviceScheduleSpin},
    {"yield", "cudaDeviceScheduleYield: the waiting thread polls and yields its CPU", 1, NULL,
     cudaDeviceScheduleYield},
    {"blocking-sync", "cudaDeviceScheduleBlockingSync: the waiting thread sleeps until woken", 1,
     NULL, cudaDeviceScheduleBlockingSync},
    {NULL, NULL, 0, NULL, 0},
};

static const sb_metric_def metrics[] = {
    SB_FIX_STEP_US,
    {"sync_us", "us", SB_LOWER, "sync µs"},
    {"host_cpu_us", "us", SB_LOWER, "host CPU µs"},
    SB_FIX_SYNCS,
    {NULL, NULL, 0, NULL},
};

#define REPLY_MAX 1100 /* an error message (1024) and its prefix */
/* Every answer of the worker starts with this; any other line on its stdout (a library or a
 * tool such as compute-sanitizer printing there) is skipped by the parent. */
#define TAG "@sb "
#define STOP_GRACE_MS 5000

/* ---- the worker: runs in the helper process ---- */

typedef struct worker {
    cudaStream_t stream;
    volatile unsigned *mark_host; /* pinned, host-mapped: the kernel's last store */
    unsigned *mark_dev;
    unsigned seq;
    sb_mismatch bad; /* syncs that returned before their kernel's store */
} worker;

static int worker_open(worker *w, sb_resources *res, int device, unsigned flag)
{
    cudaError_t e = cudaInitDevice(device, flag | cudaDeviceMapHost, cudaInitDeviceFlagsAreValid);
    if (e == cudaErrorDevicesUnavailable)
        return sb_fail(SB_EXIT_FAIL,
                       "cudaInitDevice failed: %s in %s: each sched mode runs in a process of "
                       "its own, and this GPU admits one process at a time (compute mode "
                       "exclusive-process; nvidia-smi -c DEFAULT allows more)",
                       cudaGetErrorString(e), sb_error_context());
    if (e != cudaSuccess)
        return sb_cuda_fail("cudaInitDevice(device, flag | cudaDeviceMapHost, "
                            "cudaInitDeviceFlagsAreValid)",
                            e, __FILE__, __LINE__);
    SB_CUDA(cudaSetDevice(device));
    unsigned got = 0;
    SB_CUDA(cudaGetDeviceFlags(&got));
    /* Auto is resolved by the driver and may read back as the flag it chose */
    if (flag != cudaDeviceScheduleAuto && (got & cudaDeviceScheduleMask) != flag)
        return sb_fail(SB_EXIT_FAIL,
                       "%s: the context's schedule flag is 0x%x after asking for 0x%x: the mode "
                       "was not applied",
                       sb_error_context(), got & cudaDeviceScheduleMask, flag);
    void *mark = NULL;
    int rc;
    if ((rc = sb_get_stream(res, &w->stream, cudaStreamNonBlocking)) ||
        (rc = sb_get_pinned(res, &mark, sizeof(unsigned), cudaHostAllocMapped)))
        return rc;
    w->mark_host = mark;
    *w->mark_host = 0;
    SB_CUDA(cudaHostGetDevicePointer((void **)&w->mark_dev, mark, 0));
    return 0;
}

static double cpu_us(const struct rusage *u)
{
    return (double)(u->ru_utime.tv_sec + u->ru_stime.tv_sec) * 1e6 +
           (double)(u->ru_utime.tv_usec + u->ru_stime.tv_usec);
}

static void mark_wrong(worker *w, unsigned got)
{
    sb_mismatch_note(&w->bad,
                     "stream syncs returned before their kernel had finished (mark %u, "
                     "expected %u)",
                     got, w->seq);
}

/* One repetition: iters x (launch a work_us kernel, synchronize its stream). */
static int worker_measure(worker *w, long long iters, long long work_us, double out[4])
{
    const unsigned long long ns = (unsigned long long)work_us * 1000ull;
    struct rusage u0, u1;
    if (getrusage(RUSAGE_SELF, &u0) != 0)
        return sb_fail(SB_EXIT_FAIL, "getrusage failed: %s in %s", strerror(errno),
                       sb_error_context());
    double t0 = sb_now_us();
    for (long long i = 0; i < iters; i++) {
        w->seq++;
        SB_LAUNCH(sb_launch_spin_mark_host(ns, w->mark_dev, w->seq, w->stream));
        SB_CUDA(cudaStreamSynchronize(w->stream));
        unsigned got = *w->mark_host; /* the kernel's store: the sync waited for it */
        if (got != w->seq)
            mark_wrong(w, got);
    }
    double t1 = sb_now_us();
    if (getrusage(RUSAGE_SELF, &u1) != 0)
        return sb_fail(SB_EXIT_FAIL, "getrusage failed: %s in %s", strerror(errno),
                       sb_error_context());
    const double n = (double)iters;
    out[0] = (t1 - t0) / n;
    out[1] = out[0] - (double)work_us;
    out[2] = (cpu_us(&u1) - cpu_us(&u0)) / n;
    out[3] = 1.0; /* one cudaStreamSynchronize per step */
    return 0;
}

static int worker_validate(worker *w)
{
    if (sb_fault("sched-mark")) /* test hook */
        mark_wrong(w, w->seq - 1);
    return sb_mismatch_report(&w->bad);
}

/* "error MESSAGE" for the parent, which reports it; main does not print it a second time. */
static int send_error(FILE *out, int rc)
{
    fprintf(out, TAG "error %s\n", sb_error_message());
    fflush(out);
    sb_error_clear();
    return rc;
}

int sb_sched_serve(int device, const char *mode, FILE *in, FILE *out)
{
    int v = 0;
    while (variants[v].name && strcmp(variants[v].name, mode) != 0)
        v++;
    if (!variants[v].name)
        return send_error(
            out, sb_fail(SB_EXIT_USAGE, "%s: unknown mode '%s'", SB_SCHED_WORKER_CMD, mode));
    sb_resources res = {0};
    worker w;
    memset(&w, 0, sizeof w);
    int rc = worker_open(&w, &res, device, (unsigned)variants[v].mode);
    if (rc) {
        sb_release_all(&res);
        return send_error(out, rc);
    }
    fprintf(out, TAG "ready\n");
    fflush(out);
    char line[256];
    while (!rc && fgets(line, sizeof line, in)) {
        long long iters, work_us;
        double m[4] = {0, 0, 0, 0};
        if (sscanf(line, "measure %lld %lld", &iters, &work_us) == 2 && iters > 0 && work_us > 0) {
            rc = worker_measure(&w, iters, work_us, m);
            if (!rc)
                fprintf(out, TAG "ok %.17g %.17g %.17g %.17g\n", m[0], m[1], m[2], m[3]);
        } else if (!strcmp(line, "validate\n")) {
            rc = worker_validate(&w);
            if (!rc)
                fprintf(out, TAG "ok\n");
        } else {
            line[strcspn(line, "\n")] = '\0';
            rc = sb_fail(SB_EXIT_USAGE, "%s: unknown request '%s'", SB_SCHED_WORKER_CMD, line);
        }
        if (rc)
            send_error(out, rc);
        fflush(out);
    }
    sb_release_all(&res);
    return rc;
}

/* ---- the scenario: runs in syncbench, a proxy for the worker of the current variant ---- */

typedef struct sched_state {
    sb_coproc worker;
    int variant; /* the worker's variant, -1: none running */
} sched_state;

static void stop_worker(void *p)
{
    sched_state *s = p;
    sb_coproc_stop(&s->worker, STOP_GRACE_MS);
    s->variant = -1;
}

static int setup(sb_run *r)
{
    sched_state *s = r->state;
    s->variant = -1;
    /* released before the state: the worker of the last variant ends with the plan entry */
    return sb_keep(&r->res, stop_worker, s);
}

/* A worker that ended before answering: its exit status, for the message. */
static int worker_gone(sched_state *s, const char *when)
{
    char how[128];
    int status = sb_coproc_stop(&s->worker, STOP_GRACE_MS);
    s->variant = -1;
    if (status < 0)
        snprintf(how, sizeof how, "not running");
    else
        sb_coproc_describe(status, how, sizeof how);
    return sb_fail(SB_EXIT_FAIL, "the sched worker process ended %s (%s) in %s", when, how,
                   sb_error_context());
}

/* Receives one answer, without its tag: 0 with "ok ..." or "ready" in reply, or the worker's
 * error recorded. Untagged lines are not answers: skipped. */
static int receive(sched_state *s, char *reply, size_t n, const char *when)
{
    char line[REPLY_MAX + sizeof TAG - 1]; /* the tag, then up to REPLY_MAX - 1 */
    int err;
    while ((err = sb_coproc_recv(&s->worker, line, sizeof line)) == 0 &&
           strncmp(line, TAG, strlen(TAG)) != 0) {
    }
    if (err == -1)
        return worker_gone(s, when);
    if (err)
        return sb_fail(SB_EXIT_FAIL, "reading from the sched worker process failed: %s in %s",
                       strerror(err), sb_error_context());
    snprintf(reply, n, "%s", line + strlen(TAG));
    if (!strncmp(reply, "error ", 6)) {
        stop_worker(s);
        return sb_fail(SB_EXIT_FAIL, "%s", reply + 6);
    }
    return 0;
}

static int ask(sched_state *s, const char *request, char *reply, size_t n)
{
    int err = sb_coproc_send(&s->worker, request);
    if (err == EPIPE || err == ECONNRESET)
        return worker_gone(s, "before a request");
    if (err)
        return sb_fail(SB_EXIT_FAIL, "writing to the sched worker process failed: %s in %s",
                       strerror(err), sb_error_context());
    return receive(s, reply, n, "before answering");
}

/* The worker of the variant under measurement, started on its first repetition. */
static int ensure_worker(sb_run *r, sched_state *s)
{
    if (s->variant == r->variant)
        return 0;
    if (s->variant >= 0)
        stop_worker(s);
    char device[16], mode[64], context[256];
    snprintf(device, sizeof device, "%d", r->device);
    snprintf(mode, sizeof mode, "%s", sb_run_variant(r));
    snprintf(context, sizeof context, "%s", sb_error_context());
    char name[] = "syncbench", cmd[] = SB_SCHED_WORKER_CMD;
    char *argv[] = {name, cmd, device, mode, context, NULL};
    int err = sb_coproc_start(&s->worker, argv);
    if (err)
        return sb_fail(SB_EXIT_FAIL, "cannot start the sched worker process: %s in %s",
                       strerror(err), sb_error_context());
    char reply[REPLY_MAX];
    int rc = receive(s, reply, sizeof reply, "while opening the device");
    if (rc)
        return rc;
    if (strcmp(reply, "ready") != 0) {
        stop_worker(s);
        return sb_fail(SB_EXIT_FAIL, "internal: the sched worker said '%s' in %s", reply,
                       sb_error_context());
    }
    s->variant = r->variant;
    return 0;
}

static int measure(sb_run *r, sb_recorder *rec)
{
    sched_state *s = r->state;
    int rc = ensure_worker(r, s);
    if (rc)
        return rc;
    char request[96], reply[REPLY_MAX];
    snprintf(request, sizeof request, "measure %lld %lld\n", r->iters, sb_run_param(r, "work_us"));
    if ((rc = ask(s, request, reply, sizeof reply)))
        return rc;
    double m[4];
    if (sscanf(reply, "ok %lf %lf %lf %lf", &m[0], &m[1], &m[2], &m[3]) != 4)
        return sb_fail(SB_EXIT_FAIL, "internal: the sched worker answered '%s' in %s", reply,
                       sb_error_context());
    sb_record(rec, "step_us", m[0]);
    sb_record(rec, "sync_us", m[1]);
    sb_record(rec, "host_cpu_us", m[2]);
    sb_record(rec, "syncs_per_step", m[3]);
    return 0;
}

static int validate(sb_run *r)
{
    sched_state *s = r->state;
    char reply[REPLY_MAX];
    if (s->variant != r->variant) /* nothing measured: nothing to check */
        return 0;
    int rc = ask(s, "validate\n", reply, sizeof reply);
    if (!rc && strcmp(reply, "ok") != 0)
        return sb_fail(SB_EXIT_FAIL, "internal: the sched worker answered '%s' in %s", reply,
                       sb_error_context());
    return rc;
}

SB_SCENARIO(sb_sched, "sched", sched_state,
            "cudaDeviceSchedule* flags: sync latency vs the CPU a waiting thread burns",
            .params = params, .metrics = metrics, .default_iters = 50, .validate = validate);
