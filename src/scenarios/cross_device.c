/* cross-device: what waiting for several GPUs costs, three ways, and what a copy between GPUs
 * costs, two ways, on the first n visible GPUs from one host thread.
 *
 * The waits: each step gives every GPU work_us of work (a kernel that then stores the step's
 * number into host-mapped memory), then waits for all of it: cudaSetDevice + cudaDeviceSynchronize
 * on every GPU in turn; or an event per GPU, each synchronized in turn; or GPU 0's stream made to
 * wait on the others' events (cudaStreamWaitEvent: no host call blocks) and one
 * cudaStreamSynchronize. After the wait the host checks, with no CUDA call, that every GPU's
 * kernel of this step has finished.
 *
 * The copies: every GPU sends `bytes` to the next one in a ring (g to (g + 1) % n, all at once),
 * peer to peer (cudaMemcpyPeerAsync with peer access on: NVLink or PCIe between the GPUs), or
 * staged through pinned host memory (device to host on the sender's stream, an event, host to
 * device on the receiver's stream: two trips over PCIe and no host sync between them, the best a
 * path through the host can do). The step ends with a stream sync on every GPU. After each
 * measurement every receiver's buffer is checked on its GPU against the sender's pattern, then
 * poisoned. */
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "base/fault.h"
#include "gpu/cuda_check.h"
#include "gpu/peers.h"
#include "scenarios/fixes.h"
#include "scenarios/multi_gpu.h"
#include "scenarios/validation.h"
#include "host_mark.h"
#include "kernels.h"
#include "pattern_check.h"

#define SEED 0xC0D1CE00u /* GPU g's data: sb_pattern_word(SEED + g, i) */

static const sb_param_def params[] = {
    SB_GPUS_PARAM,
    SB_FIX_WORK_US("100", "the waits: every GPU's work per step"),
    {"bytes", SB_PARAM_SIZE, "64MiB", "the copies: bytes every GPU sends (a multiple of 4)", 4,
     4LL << 30, NULL},
    {NULL, 0, NULL, NULL, 0, 0, NULL},
};
enum { SYNC_EACH, EVENT_EACH, WAIT_ONE, COPY_STAGED, COPY_P2P };
#define IS_COPY(mode) ((mode) >= COPY_STAGED)

static const sb_variant variants[] = {
    {"sync-each", "cudaSetDevice + cudaDeviceSynchronize on every GPU in turn", 1, NULL, SYNC_EACH},
    {"event-each", "an event recorded on every GPU, cudaEventSynchronize on each in turn", 1,
     "sync-each", EVENT_EACH},
    {"wait-one", "GPU 0's stream waits on the others' events, one cudaStreamSynchronize", 1,
     "sync-each", WAIT_ONE},
    {"copy-staged", "every GPU sends `bytes` to the next through pinned host memory", 0, NULL,
     COPY_STAGED},
    {"copy-p2p", "every GPU sends `bytes` to the next peer to peer (cudaMemcpyPeerAsync)", 0,
     "copy-staged", COPY_P2P},
    {NULL, NULL, 0, NULL, 0},
};

static const sb_metric_def metrics[] = {
    SB_FIX_STEP_US,
    SB_FIX_SAVING,
    {"wait_us", "us", SB_LOWER, "wait µs"},
    {"GBps", "GB/s", SB_HIGHER, "GB/s"},
    SB_FIX_SYNCS,
    {NULL, NULL, 0, NULL},
};

typedef struct gpu {
    cudaStream_t stream;
    cudaEvent_t event;
    uint32_t *src, *dst;         /* device: what it sends, what it receives */
    void *stage;                 /* pinned: its data on the way through the host */
    unsigned long long *counts;  /* device: the pattern check's counts */
    volatile unsigned *mark_dev; /* the host-mapped mark as this GPU addresses it */
} gpu;

typedef struct xdev_state {
    int n;
    size_t bytes;
    unsigned long long work_ns;
    gpu g[SB_MAX_GPUS];
    volatile unsigned *mark;     /* host-mapped, portable: [g] the step GPU g last finished */
    unsigned long long *count_h; /* pinned */
    unsigned seq;
    int peer_on; /* peer access is on between the ring's neighbours */
    sb_mismatch bad;
} xdev_state;

static int cur_device(void)
{
    int d = 0;
    cudaGetDevice(&d);
    return d;
}

/* The wait variants' step: every GPU's work launched, then waited for as the variant waits. */
static int wait_step(xdev_state *s, int mode, double *wait)
{
    s->seq++;
    for (int g = 0; g < s->n; g++) {
        SB_CUDA(cudaSetDevice(g));
        SB_LAUNCH(
            sb_launch_spin_mark_host(s->work_ns, s->g[g].mark_dev + g, s->seq, s->g[g].stream));
        if (mode != SYNC_EACH)
            SB_CUDA(cudaEventRecord(s->g[g].event, s->g[g].stream));
    }
    double t0 = sb_now_us();
    if (mode == SYNC_EACH) {
        for (int g = 0; g < s->n; g++) {
            SB_CUDA(cudaSetDevice(g));
            SB_CUDA(cudaDeviceSynchronize());
        }
    } else if (mode == EVENT_EACH) {
        for (int g = 0; g < s->n; g++)
            SB_CUDA(cudaEventSynchronize(s->g[g].event));
    } else {
        SB_CUDA(cudaSetDevice(0));
        for (int g = 1; g < s->n; g++)
            SB_CUDA(cudaStreamWaitEvent(s->g[0].stream, s->g[g].event, 0));
        SB_CUDA(cudaStreamSynchronize(s->g[0].stream));
    }
    *wait += sb_now_us() - t0;
    for (int g = 0; g < s->n; g++)
        if (s->mark[g] != s->seq)
            sb_mismatch_note(&s->bad,
                             "waits returned before every GPU's work had finished (GPU %d: mark "
                             "%u, expected %u)",
                             g, s->mark[g], s->seq);
    return 0;
}

/* The copy variants' step: GPU g sends to GPU (g + 1) % n, all at once; a stream sync each. */
static int copy_step(xdev_state *s, int mode, double *wait)
{
    const int n = s->n;
    for (int g = 0; g < n; g++) {
        gpu *from = &s->g[g];
        int to = (g + 1) % n;
        SB_CUDA(cudaSetDevice(g));
        if (mode == COPY_P2P) {
            SB_CUDA(cudaMemcpyPeerAsync(s->g[to].dst, to, from->src, g, s->bytes, from->stream));
        } else {
            SB_CUDA(cudaMemcpyAsync(from->stage, from->src, s->bytes, cudaMemcpyDeviceToHost,
                                    from->stream));
            SB_CUDA(cudaEventRecord(from->event, from->stream));
        }
    }
    for (int g = 0; g < n && mode == COPY_STAGED; g++) {
        int to = (g + 1) % n;
        SB_CUDA(cudaSetDevice(to));
        SB_CUDA(cudaStreamWaitEvent(s->g[to].stream, s->g[g].event, 0));
        SB_CUDA(cudaMemcpyAsync(s->g[to].dst, s->g[g].stage, s->bytes, cudaMemcpyHostToDevice,
                                s->g[to].stream));
    }
    double t0 = sb_now_us();
    for (int g = 0; g < n; g++)
        SB_CUDA(cudaStreamSynchronize(s->g[g].stream));
    *wait += sb_now_us() - t0;
    return 0;
}

static int steps(xdev_state *s, sb_run *r, int mode, double *wait)
{
    int rc = 0;
    for (long long i = 0; i < r->iters && !rc; i++)
        rc = IS_COPY(mode) ? copy_step(s, mode, wait) : wait_step(s, mode, wait);
    return rc;
}

static int measure(sb_run *r, sb_recorder *rec)
{
    xdev_state *s = r->state;
    const int mode = sb_run_mode(r);
    if (mode == COPY_P2P && !s->peer_on) /* the plan's check makes this unreachable */
        return sb_fail(SB_EXIT_NODEV, "%s: the GPUs do not reach each other peer to peer",
                       sb_error_context());
    double wait = 0;
    sb_fix_timer t = sb_fix_start();
    int rc = steps(s, r, mode, &wait);
    double t1 = sb_now_us();
    cudaSetDevice(r->device);
    if (rc)
        return rc;
    /* blocking calls a step makes: a sync per GPU, except wait-one's one */
    t.syncs = r->iters * (mode == WAIT_ONE ? 1 : s->n);
    sb_fix_record(rec, &t, t1, r->iters);
    sb_record(rec, "wait_us", wait / (double)r->iters);
    if (IS_COPY(mode))
        sb_record(rec, "GBps", (double)s->bytes * (double)r->iters / (t1 - t.t0) / 1e3);
    return 0;
}

/* Every receiver holds its sender's pattern (checked on its GPU), then is poisoned. */
static int check_copies(xdev_state *s)
{
    const size_t words = s->bytes / 4;
    if (sb_fault("cross-device-copy")) { /* test hook: a damaged word must be caught */
        SB_CUDA(cudaSetDevice(s->n - 1));
        SB_CUDA(cudaMemsetAsync(s->g[s->n - 1].dst + words / 2, 0, 4, s->g[s->n - 1].stream));
    }
    for (int to = 0; to < s->n; to++) {
        int from = (to + s->n - 1) % s->n;
        gpu *d = &s->g[to];
        unsigned long long *got = s->count_h + 2 * to;
        SB_CUDA(cudaSetDevice(to));
        SB_LAUNCH(
            sb_launch_check_pattern(d->dst, words, SEED + (uint32_t)from, d->counts, d->stream));
        SB_CUDA(
            cudaMemcpyAsync(got, d->counts, 2 * sizeof *got, cudaMemcpyDeviceToHost, d->stream));
        SB_CUDA(cudaMemsetAsync(d->counts, 0, 2 * sizeof *got, d->stream));
        SB_CUDA(cudaMemsetAsync(d->dst, 0xFF, s->bytes, d->stream));
        SB_CUDA(cudaStreamSynchronize(d->stream));
        if (got[1] != 1)
            return sb_invalid("the check of GPU %d's received data did not run", to);
        if (got[0])
            return sb_invalid("%llu of the %zu words GPU %d received from GPU %d are wrong", got[0],
                              words, to, from);
    }
    return 0;
}

static int validate(sb_run *r)
{
    xdev_state *s = r->state;
    if (IS_COPY(sb_run_mode(r))) {
        int rc = check_copies(s);
        cudaSetDevice(r->device);
        return rc;
    }
    if (sb_fault("cross-device-mark")) /* test hook */
        sb_mismatch_note(&s->bad, "waits returned before every GPU's work had finished (test)");
    return sb_mismatch_report(&s->bad);
}

static int setup_gpu(xdev_state *s, int g)
{
    gpu *d = &s->g[g];
    const size_t words = s->bytes / 4;
    SB_CUDA(cudaSetDevice(g));
    SB_CUDA(cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking));
    SB_CUDA(cudaEventCreateWithFlags(&d->event, cudaEventDisableTiming));
    SB_CUDA(cudaMalloc((void **)&d->src, s->bytes));
    SB_CUDA(cudaMalloc((void **)&d->dst, s->bytes));
    SB_CUDA(cudaMalloc((void **)&d->counts, 2 * sizeof *d->counts));
    SB_CUDA(cudaHostAlloc(&d->stage, s->bytes, cudaHostAllocPortable));
    SB_CUDA(cudaHostGetDevicePointer((void **)&d->mark_dev, (void *)s->mark, 0));
    SB_LAUNCH(sb_fill_pattern(d->src, words, SEED + (uint32_t)g, d->stream));
    SB_CUDA(cudaMemsetAsync(d->dst, 0xFF, s->bytes, d->stream));
    SB_CUDA(cudaMemsetAsync(d->counts, 0, 2 * sizeof *d->counts, d->stream));
    SB_CUDA(cudaStreamSynchronize(d->stream));
    return 0;
}

/* What setup made, on every GPU (kept before it runs: a partial setup is released too). */
static void release_gpus(void *p)
{
    xdev_state *s = p;
    int before = cur_device();
    for (int g = 0; g < s->n; g++) {
        gpu *d = &s->g[g];
        if (cudaSetDevice(g) != cudaSuccess)
            continue;
        if (d->stream)
            cudaStreamDestroy(d->stream);
        if (d->event)
            cudaEventDestroy(d->event);
        cudaFree(d->src);
        cudaFree(d->dst);
        cudaFree(d->counts);
        cudaFreeHost(d->stage);
    }
    cudaFreeHost((void *)s->mark);
    cudaFreeHost(s->count_h);
    cudaSetDevice(before);
}

static int setup_all(sb_run *r, xdev_state *s)
{
    int rc = sb_run_gpus(r, &s->n);
    if (rc)
        return rc;
    s->bytes = (size_t)sb_run_param(r, "bytes");
    s->work_ns = sb_run_param_ns(r, "work_us");
    if ((rc = sb_keep(&r->res, release_gpus, s)))
        return rc;
    /* portable: every GPU maps it; mapped: the kernels store their marks into it */
    SB_CUDA(cudaHostAlloc((void **)&s->mark, SB_MAX_GPUS * sizeof *s->mark,
                          cudaHostAllocPortable | cudaHostAllocMapped));
    SB_CUDA(cudaHostAlloc((void **)&s->count_h, 2 * SB_MAX_GPUS * sizeof *s->count_h,
                          cudaHostAllocPortable));
    memset((void *)s->mark, 0, SB_MAX_GPUS * sizeof *s->mark);
    for (int g = 0; g < s->n && !rc; g++)
        rc = setup_gpu(s, g);
    if (rc)
        return rc;
    int from = 0, to = 0, reach = sb_ring_reachable(s->n, &from, &to);
    if (reach < 0)
        return sb_error_code();
    s->peer_on = reach == 1;
    return s->peer_on ? sb_ring_peer_access(&r->res, s->n) : 0;
}

static int setup(sb_run *r)
{
    int rc = setup_all(r, r->state);
    cudaSetDevice(r->device);
    return rc;
}

/* About 3 ms of steps of the slower kind the entry measures: the waits' work and ~20 us of
 * launches and syncs, or a staged copy at ~10 GB/s. */
static long long iters_for(const sb_param_values *p)
{
    double est = (double)sb_param(p, "work_us") + 20 + (double)sb_param(p, "bytes") / 1e4;
    return sb_fix_steps(est, 10000);
}

static size_t device_bytes(const sb_param_values *p)
{
    return 2 * (size_t)sb_param(p, "bytes") + 64; /* per GPU: what it sends and receives */
}

static size_t host_bytes(const sb_param_values *p)
{
    int asked = sb_gpus_asked(p);
    return (size_t)(asked ? asked : SB_MAX_GPUS) * (size_t)sb_param(p, "bytes"); /* staging */
}

/* Before anything is measured: with copy-p2p planned, every GPU reaches its ring neighbours. */
static int check_machine(const sb_param_values *p, const int *v, int n_variants, int gpus)
{
    (void)p;
    int p2p = 0;
    for (int i = 0; i < n_variants; i++)
        p2p |= variants[v[i]].mode == COPY_P2P;
    int from = 0, to = 0, reach = p2p ? sb_ring_reachable(gpus, &from, &to) : 1;
    if (reach < 0)
        return sb_error_code();
    if (reach == 0)
        return sb_fail(SB_EXIT_NODEV,
                       "cross-device copy-p2p: GPU %d cannot reach GPU %d's memory peer to peer "
                       "(cudaDeviceCanAccessPeer); leave out copy-p2p, or pick GPUs that can with "
                       "CUDA_VISIBLE_DEVICES (nvidia-smi topo -p2p r)",
                       from, to);
    return 0;
}

static const sb_multi_gpu multi = {2, sb_gpus_asked, check_machine};

SB_SCENARIO(sb_cross_device, "cross-device", xdev_state,
            "waiting for several GPUs three ways; copies between GPUs peer to peer vs through "
            "the host",
            .params = params, .metrics = metrics, .delta = &sb_fix_delta, .default_iters = 10,
            .iters_for = iters_for, .check = sb_check_whole_words, .device_bytes = device_bytes,
            .host_bytes = host_bytes, .validate = validate, .multi = &multi);
