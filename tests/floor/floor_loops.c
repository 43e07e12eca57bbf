/* The loops of syncbench-floor: each primitive the scenarios time, once the simplest way (back
 * to back, each iteration timed alone) and once exactly as the scenario's measure() does it
 * (src/scenarios/graph.c, busy_stream.c, readback.c, copy.c: the same calls, streams, kernels,
 * buffers and clock reads, in the same order; the parameters the floor's suite sets). Nothing of
 * the harness: the CUDA runtime, the kernels' launchers and clock_gettime. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "floor.h"
#include "host_mark.h"
#include "kernels.h"
#include "scalars.h"

#define PENDING_NS 1000000ull    /* readback: pending_us=1000 (its default) */
#define BUSY_NS 1000ull          /* busy-stream: other_us=1, work_us=1 */
#define COPY_BYTES (64ull << 20) /* copy: bytes=64MiB */
#define SMALL_FLOATS 16          /* readback's buffers: print_elems (16) floats */
#define LAUNCHES_PER_SYNC 100    /* plain launches between two untimed stream syncs */

enum { SYNC_DEVICE, SYNC_STREAM, SYNC_EVENT };
enum { PAGEABLE = 0, PINNED = 1, IDLE = 2 };
enum { H2D = 0, D2H = 4 };
enum { MARK_OWN, MARK_OTHER };

struct floor_gpu {
    cudaStream_t blocking;         /* cudaStreamDefault: readback's */
    cudaStream_t own, other;       /* cudaStreamNonBlocking: graph's, busy-stream's, copy's */
    cudaEvent_t sync_event;        /* busy-stream's sync-event (cudaEventDisableTiming) */
    cudaEvent_t ev_start, ev_stop; /* copy's timing events */
    float *marker;                 /* device: what the pending kernel writes */
    float *pinned_small, *pageable_small;
    unsigned long long *counter;  /* device: graph's kernels count themselves */
    unsigned long long counted;   /* graph's launches since it was zeroed */
    volatile unsigned *mark_host; /* busy-stream's marks: pinned, host-mapped */
    unsigned *mark_dev;
    void *dev_big, *pinned_big, *pageable_big; /* copy's */
    unsigned seq;      /* readback's marker value (20 bits: exact in a float) */
    unsigned busy_seq; /* busy-stream's step number */
    long launches;     /* plain launches so far */
    long stale;        /* readbacks that returned another value than the kernel wrote */
    long early;        /* syncs that returned before the work they wait for */
};

double floor_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

int floor_cuda_failed(const char *call, cudaError_t e, const char *file, int line)
{
    fprintf(stderr, "%s: %s (%s:%d) failed: %s\n", FLOOR_PROG, call, file, line,
            cudaGetErrorString(e));
    return FLOOR_EXIT_FAIL;
}

static inline cudaError_t sync_of(floor_gpu *g, int kind)
{
    switch (kind) {
    case SYNC_DEVICE:
        return cudaDeviceSynchronize();
    case SYNC_STREAM:
        return cudaStreamSynchronize(g->own);
    default: {
        cudaError_t e = cudaEventRecord(g->sync_event, g->own);
        return e != cudaSuccess ? e : cudaEventSynchronize(g->sync_event);
    }
    }
}

/* A 4-byte readback of the marker: a blocking cudaMemcpy into pageable memory (legacy default
 * stream, which waits for the blocking stream), or .item()'s cudaMemcpyAsync into pinned memory
 * and a sync of the stream. */
static inline cudaError_t read_back(floor_gpu *g, int how, const float **got)
{
    if ((how & PINNED) == 0) {
        *got = g->pageable_small;
        return cudaMemcpy(g->pageable_small, g->marker, sizeof(float), cudaMemcpyDeviceToHost);
    }
    *got = g->pinned_small;
    cudaError_t e = cudaMemcpyAsync(g->pinned_small, g->marker, sizeof(float),
                                    cudaMemcpyDeviceToHost, g->blocking);
    return e != cudaSuccess ? e : cudaStreamSynchronize(g->blocking);
}

/* ---- plain: one iteration, timed alone ---- */

static int plain_launch(floor_gpu *g, int mode, int iters, double *out)
{
    (void)mode, (void)iters;
    double t0 = floor_now_us();
    FLOOR_CK(sb_launch_spin_then_mark(0, NULL, 0, 0.0f, g->own)); /* a kernel that does nothing */
    out[0] = floor_now_us() - t0;
    if (++g->launches % LAUNCHES_PER_SYNC == 0) /* the queue never fills */
        FLOOR_CK(cudaStreamSynchronize(g->own));
    return 0;
}

static int plain_launch_sync(floor_gpu *g, int kind, int iters, double *out)
{
    (void)iters;
    double t0 = floor_now_us();
    FLOOR_CK(sb_launch_spin_then_mark(0, NULL, 0, 0.0f, g->own));
    FLOOR_CK(sync_of(g, kind));
    out[0] = floor_now_us() - t0;
    return 0;
}

static int plain_idle_sync(floor_gpu *g, int mode, int iters, double *out)
{
    (void)mode, (void)iters;
    double t0 = floor_now_us();
    FLOOR_CK(cudaStreamSynchronize(g->own));
    out[0] = floor_now_us() - t0;
    return 0;
}

static int plain_readback(floor_gpu *g, int how, int iters, double *out)
{
    (void)iters;
    const float *got;
    double t0 = floor_now_us();
    FLOOR_CK(read_back(g, how, &got));
    out[0] = floor_now_us() - t0;
    return 0;
}

static void check_value(floor_gpu *g, const float *got)
{
    if (got[0] != (float)g->seq)
        g->stale++;
}

static int plain_pending(floor_gpu *g, int how, int iters, double *out)
{
    (void)iters;
    const float *got;
    g->seq = (g->seq + 1) & 0xFFFFF;
    double t0 = floor_now_us();
    FLOOR_CK(sb_launch_spin_then_mark(PENDING_NS, g->marker, 1, (float)g->seq, g->blocking));
    FLOOR_CK(read_back(g, how, &got));
    out[0] = floor_now_us() - t0;
    check_value(g, got);
    return 0;
}

static void copy_ends(floor_gpu *g, int mode, void **dst, const void **src,
                      enum cudaMemcpyKind *kind)
{
    void *host = (mode & PINNED) ? g->pinned_big : g->pageable_big;
    const int d2h = (mode & D2H) != 0;
    *dst = d2h ? host : g->dev_big;
    *src = d2h ? g->dev_big : host;
    *kind = d2h ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice;
}

static int plain_copy(floor_gpu *g, int mode, int iters, double *out)
{
    (void)iters;
    void *dst;
    const void *src;
    enum cudaMemcpyKind kind;
    copy_ends(g, mode, &dst, &src, &kind);
    double t0 = floor_now_us();
    FLOOR_CK(cudaMemcpy(dst, src, COPY_BYTES, kind));
    out[0] = (double)COPY_BYTES / (floor_now_us() - t0) / 1e3; /* GB/s */
    return 0;
}

/* ---- as the scenario: one repetition of its measure() ---- */

/* graph, launches, kernels=1, work_us=0: out[0] launch_us, out[1] step_us */
static int graph_launches(floor_gpu *g, int mode, int iters, double *out)
{
    (void)mode;
    double launch = 0;
    double t0 = floor_now_us();
    for (int i = 0; i < iters; i++) {
        double a = floor_now_us();
        FLOOR_CK(sb_launch_spin_count(0, g->counter, g->own));
        launch += floor_now_us() - a;
        FLOOR_CK(cudaStreamSynchronize(g->own));
    }
    out[1] = (floor_now_us() - t0) / iters;
    out[0] = launch / iters;
    g->counted += (unsigned long long)iters;
    return 0;
}

static void check_mark(floor_gpu *g, int which)
{
    if (g->mark_host[which] != g->busy_seq)
        g->early++;
}

/* busy-stream, other_us=1, work_us=1: out[0] step_us, out[1] wait_us */
static int busy_stream(floor_gpu *g, int kind, int iters, double *out)
{
    double wait = 0;
    double t0 = floor_now_us();
    for (int i = 0; i < iters; i++) {
        g->busy_seq++;
        FLOOR_CK(
            sb_launch_spin_mark_host(BUSY_NS, g->mark_dev + MARK_OTHER, g->busy_seq, g->other));
        FLOOR_CK(sb_launch_spin_mark_host(BUSY_NS, g->mark_dev + MARK_OWN, g->busy_seq, g->own));
        double w0 = floor_now_us();
        FLOOR_CK(sync_of(g, kind));
        wait += floor_now_us() - w0;
        check_mark(g, MARK_OWN);
        if (kind == SYNC_DEVICE)
            check_mark(g, MARK_OTHER);
    }
    double t1 = floor_now_us();
    FLOOR_CK(cudaStreamSynchronize(g->other)); /* untimed: the other stream's backlog */
    check_mark(g, MARK_OTHER);
    out[0] = (t1 - t0) / iters;
    out[1] = wait / iters;
    return 0;
}

/* readback, pending_us=1000: out[0] readback_us */
static int readback(floor_gpu *g, int mode, int iters, double *out)
{
    double total = 0;
    for (int i = 0; i < iters; i++) {
        g->seq = (g->seq + 1) & 0xFFFFF;
        FLOOR_CK(sb_launch_spin_then_mark(PENDING_NS, g->marker, 1, (float)g->seq, g->blocking));
        if (mode & IDLE)
            FLOOR_CK(cudaStreamSynchronize(g->blocking));
        const float *got;
        double t0 = floor_now_us();
        FLOOR_CK(read_back(g, mode, &got));
        double t1 = floor_now_us();
        total += t1 - t0;
        check_value(g, got);
    }
    out[0] = total / iters;
    return 0;
}

/* copy, bytes=64MiB: out[0] GBps, from the CUDA events around the repetition's copies. The
 * scenario also reads the clock around each call and the repetition (host_call_us, wall_us):
 * so does this, for the same calls in the same order, though it records GBps alone. */
static int copy(floor_gpu *g, int mode, int iters, double *out)
{
    void *dst;
    const void *src;
    enum cudaMemcpyKind kind;
    copy_ends(g, mode, &dst, &src, &kind);
    double in_call = 0;
    double t0 = floor_now_us();
    FLOOR_CK(cudaEventRecord(g->ev_start, g->own));
    for (int i = 0; i < iters; i++) {
        double c0 = floor_now_us();
        FLOOR_CK(cudaMemcpyAsync(dst, src, COPY_BYTES, kind, g->own));
        in_call += floor_now_us() - c0;
    }
    FLOOR_CK(cudaEventRecord(g->ev_stop, g->own));
    FLOOR_CK(cudaEventSynchronize(g->ev_stop));
    double t1 = floor_now_us();
    float ms;
    FLOOR_CK(cudaEventElapsedTime(&ms, g->ev_start, g->ev_stop));
    out[0] = (double)COPY_BYTES * iters / (ms * 1e-3) / 1e9;
    (void)in_call, (void)t0, (void)t1;
    return 0;
}

/* clang-format off */
#define PLAIN(name, fn, mode, reps, text) \
    {name, FLOOR_PLAIN, {NULL, NULL}, "us", 1, reps, fn, mode, -1, text}
#define PLAIN_COPY(name, mode, reps, text) \
    {name, FLOOR_PLAIN, {NULL, NULL}, "GB/s", 1, reps, plain_copy, mode, -1, text}
#define SCENARIO(name, m0, m1, unit, iters, reps, fn, mode, ref, text) \
    {name, FLOOR_AS_SCENARIO, {m0, m1}, unit, iters, reps, fn, mode, ref, text}

const floor_loop floor_loops[] = {
    PLAIN("launch", plain_launch, 0, 20000,
          "an empty kernel launched on a non-blocking stream, back to back, each launch timed "
          "(the stream synchronized, untimed, every 100 launches)"),
    PLAIN("launch-stream-sync", plain_launch_sync, SYNC_STREAM, 5000,
          "an empty kernel launched, then cudaStreamSynchronize; back to back, each timed"),
    PLAIN("launch-device-sync", plain_launch_sync, SYNC_DEVICE, 5000,
          "an empty kernel launched, then cudaDeviceSynchronize; back to back, each timed"),
    PLAIN("launch-event-sync", plain_launch_sync, SYNC_EVENT, 5000,
          "an empty kernel launched, then cudaEventRecord + cudaEventSynchronize; back to back, "
          "each timed"),
    PLAIN("idle-stream-sync", plain_idle_sync, 0, 20000,
          "cudaStreamSynchronize of an idle non-blocking stream, back to back, each timed"),
    PLAIN("readback-pageable", plain_readback, PAGEABLE, 5000,
          "a blocking 4-byte cudaMemcpy into pageable memory, back to back, each timed"),
    PLAIN("readback-pinned", plain_readback, PINNED, 5000,
          "a 4-byte cudaMemcpyAsync into pinned memory + cudaStreamSynchronize, back to back, "
          "each timed"),
    PLAIN("pending-readback-pageable", plain_pending, PAGEABLE, 100,
          "a 1 ms spin kernel launched, then the blocking pageable readback: launch and "
          "readback timed together"),
    PLAIN("pending-readback-pinned", plain_pending, PINNED, 100,
          "a 1 ms spin kernel launched, then the pinned readback and stream sync: launch and "
          "readback timed together"),
    PLAIN_COPY("copy-h2d-pinned", H2D | PINNED, 50,
               "a blocking 64 MiB cudaMemcpy from pinned memory, back to back, each timed on the "
               "host"),
    PLAIN_COPY("copy-d2h-pinned", D2H | PINNED, 50,
               "a blocking 64 MiB cudaMemcpy into pinned memory, back to back, each timed on the "
               "host"),
    PLAIN_COPY("copy-h2d-pageable", H2D | PAGEABLE, 20,
               "a blocking 64 MiB cudaMemcpy from pageable memory, back to back, each timed on "
               "the host"),
    PLAIN_COPY("copy-d2h-pageable", D2H | PAGEABLE, 20,
               "a blocking 64 MiB cudaMemcpy into pageable memory, back to back, each timed on "
               "the host"),
    SCENARIO("graph/launches", "launch_us", "step_us", "us", 200, 100, graph_launches, 0, -1,
             "graph's launches step, kernels=1, work_us=0: the clock read around the launch of "
             "a 0 ns spin kernel, then cudaStreamSynchronize; launch_us the repetition's mean "
             "launch, step_us its loop time over its steps"),
    SCENARIO("busy-stream/sync-device", "step_us", "wait_us", "us", 100, 100, busy_stream,
             SYNC_DEVICE, -1,
             "busy-stream's step, other_us=1, work_us=1: a 1 us kernel on a second stream and "
             "one on the step's, each storing to host-mapped memory, then cudaDeviceSynchronize "
             "(wait_us) and the stores checked; step_us the loop time over its steps"),
    SCENARIO("busy-stream/sync-stream", "step_us", "wait_us", "us", 100, 100, busy_stream,
             SYNC_STREAM, SYNC_DEVICE,
             "the same step with cudaStreamSynchronize, its repetitions alternating with "
             "sync-device's"),
    SCENARIO("busy-stream/sync-event", "step_us", "wait_us", "us", 100, 100, busy_stream,
             SYNC_EVENT, SYNC_DEVICE,
             "the same step with cudaEventRecord + cudaEventSynchronize, its repetitions "
             "alternating with sync-device's"),
    SCENARIO("readback/idle-pageable", "readback_us", NULL, "us", 20, 15, readback,
             PAGEABLE | IDLE, -1,
             "readback's idle-pageable: a 1 ms spin kernel writes the marker, "
             "cudaStreamSynchronize, then the blocking pageable readback alone timed and "
             "checked; the repetition's mean"),
    SCENARIO("readback/pending-pageable", "readback_us", NULL, "us", 20, 15, readback, PAGEABLE,
             PAGEABLE | IDLE,
             "the same with no sync: the readback waits for the kernel; its repetitions "
             "alternating with idle-pageable's"),
    SCENARIO("readback/idle-pinned", "readback_us", NULL, "us", 20, 15, readback, PINNED | IDLE,
             -1,
             "readback's idle-pinned: as idle-pageable, the readback a cudaMemcpyAsync into "
             "pinned memory + cudaStreamSynchronize"),
    SCENARIO("readback/pending-pinned", "readback_us", NULL, "us", 20, 15, readback, PINNED,
             PINNED | IDLE,
             "the same with no sync: the readback waits for the kernel; its repetitions "
             "alternating with idle-pinned's"),
    SCENARIO("copy/h2d-pageable", "GBps", NULL, "GB/s", 4, 10, copy, H2D | PAGEABLE, -1,
             "copy's h2d-pageable, bytes=64MiB: 4 cudaMemcpyAsync back to back on a "
             "non-blocking stream between two CUDA events; GB/s from the events' time"),
    SCENARIO("copy/h2d-pinned", "GBps", NULL, "GB/s", 4, 30, copy, H2D | PINNED, -1,
             "copy's h2d-pinned, bytes=64MiB: as h2d-pageable, from pinned memory"),
    SCENARIO("copy/d2h-pageable", "GBps", NULL, "GB/s", 4, 10, copy, D2H | PAGEABLE, -1,
             "copy's d2h-pageable, bytes=64MiB: as h2d-pageable, device to host"),
    SCENARIO("copy/d2h-pinned", "GBps", NULL, "GB/s", 4, 30, copy, D2H | PINNED, -1,
             "copy's d2h-pinned, bytes=64MiB: as h2d-pageable, device to pinned memory"),
    {NULL, 0, {NULL, NULL}, NULL, 0, 0, NULL, 0, -1, NULL},
};
/* clang-format on */

int floor_row_count(const floor_loop *l)
{
    if (l->way == FLOOR_PLAIN)
        return 1;
    return l->metrics[1] ? 2 : 1;
}

const char *floor_row_name(const floor_loop *l, int k, char *buf, size_t n)
{
    if (l->way == FLOOR_PLAIN)
        snprintf(buf, n, "%s", l->name);
    else
        snprintf(buf, n, "%s/%s", l->name, l->metrics[k]);
    return buf;
}

/* ---- the device and what the loops use ---- */

static int open_device(int device, char *gpu_name, size_t n)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        fprintf(stderr, "%s: no usable CUDA device (%s)\n", FLOOR_PROG,
                e != cudaSuccess ? cudaGetErrorString(e) : "none found");
        return FLOOR_EXIT_NO_DEVICE;
    }
    if (device >= count) {
        fprintf(stderr, "%s: --device %d: this machine has %d GPU%s\n", FLOOR_PROG, device, count,
                count == 1 ? "" : "s");
        return FLOOR_EXIT_USAGE;
    }
    FLOOR_CK(cudaSetDevice(device));
    FLOOR_CK(cudaFree(NULL)); /* the context, now, so that its cost is not measured */
    struct cudaDeviceProp prop;
    FLOOR_CK(cudaGetDeviceProperties(&prop, device));
    snprintf(gpu_name, n, "%s", prop.name);
    return 0;
}

static int alloc_host(void **p, size_t bytes)
{
    *p = calloc(1, bytes);
    if (*p)
        return 0;
    fprintf(stderr, "%s: out of host memory (%zu bytes)\n", FLOOR_PROG, bytes);
    return FLOOR_EXIT_FAIL;
}

static int alloc_buffers(floor_gpu *g)
{
    void *marks;
    const size_t small = SMALL_FLOATS * sizeof(float);
    int rc;
    FLOOR_CK(cudaMalloc((void **)&g->marker, small));
    FLOOR_CK(cudaHostAlloc((void **)&g->pinned_small, small, cudaHostAllocDefault));
    FLOOR_CK(cudaMalloc((void **)&g->counter, sizeof *g->counter));
    FLOOR_CK(cudaMemset(g->counter, 0, sizeof *g->counter));
    FLOOR_CK(cudaHostAlloc(&marks, 2 * sizeof(unsigned), cudaHostAllocMapped));
    g->mark_host = marks;
    g->mark_host[MARK_OWN] = g->mark_host[MARK_OTHER] = 0;
    FLOOR_CK(cudaHostGetDevicePointer((void **)&g->mark_dev, marks, 0));
    FLOOR_CK(cudaMalloc(&g->dev_big, COPY_BYTES));
    FLOOR_CK(cudaHostAlloc(&g->pinned_big, COPY_BYTES, cudaHostAllocDefault));
    if ((rc = alloc_host((void **)&g->pageable_small, small)) ||
        (rc = alloc_host(&g->pageable_big, COPY_BYTES)))
        return rc;
    /* every page touched now, so that page faults are not measured (as copy's setup) */
    memset(g->pageable_big, 0, COPY_BYTES);
    memset(g->pinned_big, 0, COPY_BYTES);
    FLOOR_CK(cudaMemset(g->dev_big, 0, COPY_BYTES));
    FLOOR_CK(cudaDeviceSynchronize());
    return 0;
}

int floor_gpu_open(floor_gpu **out, int device, char *gpu_name, size_t n)
{
    int rc = open_device(device, gpu_name, n);
    if (rc)
        return rc;
    floor_gpu *g = NULL;
    if ((rc = alloc_host((void **)&g, sizeof *g)))
        return rc;
    *out = g;
    FLOOR_CK(cudaStreamCreateWithFlags(&g->blocking, cudaStreamDefault));
    FLOOR_CK(cudaStreamCreateWithFlags(&g->own, cudaStreamNonBlocking));
    FLOOR_CK(cudaStreamCreateWithFlags(&g->other, cudaStreamNonBlocking));
    FLOOR_CK(cudaEventCreateWithFlags(&g->sync_event, cudaEventDisableTiming));
    FLOOR_CK(cudaEventCreateWithFlags(&g->ev_start, cudaEventDefault));
    FLOOR_CK(cudaEventCreateWithFlags(&g->ev_stop, cudaEventDefault));
    return alloc_buffers(g);
}

int floor_gpu_check(floor_gpu *g)
{
    unsigned long long ran = 0;
    FLOOR_CK(cudaDeviceSynchronize());
    FLOOR_CK(cudaMemcpy(&ran, g->counter, sizeof ran, cudaMemcpyDeviceToHost));
    if (g->stale)
        fprintf(stderr,
                "%s: %ld readbacks returned a stale value: the copy did not wait for "
                "the pending work\n",
                FLOOR_PROG, g->stale);
    else if (g->early)
        fprintf(stderr, "%s: %ld syncs returned before the work they wait for\n", FLOOR_PROG,
                g->early);
    else if (ran != g->counted)
        fprintf(stderr, "%s: graph's kernels ran %llu times, %llu were launched\n", FLOOR_PROG, ran,
                g->counted);
    return g->stale || g->early || ran != g->counted ? FLOOR_EXIT_FAIL : 0;
}

void floor_gpu_close(floor_gpu *g)
{
    if (!g)
        return;
    cudaDeviceSynchronize();
    cudaFree(g->marker);
    cudaFree(g->counter);
    cudaFree(g->dev_big);
    cudaFreeHost(g->pinned_small);
    cudaFreeHost((void *)g->mark_host);
    cudaFreeHost(g->pinned_big);
    free(g->pageable_small);
    free(g->pageable_big);
    cudaEventDestroy(g->sync_event);
    cudaEventDestroy(g->ev_start);
    cudaEventDestroy(g->ev_stop);
    cudaStreamDestroy(g->blocking);
    cudaStreamDestroy(g->own);
    cudaStreamDestroy(g->other);
    free(g);
}
