/* collective: a data-parallel training step on every GPU, and what reading its all-reduced loss
 * back costs when one GPU is slower than the others. Each step runs work_us of GPU work on every
 * GPU (straggler_us more on the last one, the straggler), then an all-reduce of the step's loss
 * (one float, NCCL), then, by variant: the loss read back on every GPU (`.item()` after
 * `all_reduce` on each rank), or summed on the GPU and read back every `every` steps, or once at
 * the end.
 *
 * Every GPU has a host thread of its own (base/team.h), as in a job started with one process per
 * GPU: each thread launches its GPU's step, calls the all-reduce and blocks in its own readback,
 * and is timed in both (in NCCL's GROUP launch mode, which syncbench starts NCCL with:
 * gpu/nccl_api.c, the threads meet inside the call). An all-reduce ends on every GPU only once
 * the straggler's work is done, so the fast GPUs' threads wait for the straggler: their wait
 * grows with straggler_us while their own work stays the same. The sync-free variants drop the
 * readbacks; the GPUs then run step after step, and the host waits only for the collective and
 * when it reads.
 *
 * Every readback is checked against the CPU's sum of the ranks' losses (exact: collective.h);
 * after each measurement every GPU's summed loss is read back and checked, then poisoned. */
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "base/fault.h"
#include "base/team.h"
#include "gpu/cuda_check.h"
#include "gpu/nccl_api.h"
#include "gpu/sync.h"
#include "scenarios/fixes.h"
#include "scenarios/multi_gpu.h"
#include "scenarios/rank_waits.h"
#include "scenarios/validation.h"
#include "collective.h"

static const sb_param_def params[] = {
    SB_GPUS_PARAM,
    SB_FIX_WORK_US("100", "every GPU's work per step"),
    {"straggler_us", SB_PARAM_INT, "0,100,1000", "the last GPU's extra work per step", 0, 1000000,
     NULL},
    {"every", SB_PARAM_INT, "10", "every-n: steps between two readbacks of the summed loss", 1,
     1000000, NULL},
    {NULL, 0, NULL, NULL, 0, 0, NULL},
};
enum { EVERY_STEP, EVERY_N, NEVER };

static const sb_variant variants[] = {
    {"every-step", "the all-reduced loss read back on every GPU after every step (.item())", 1,
     NULL, EVERY_STEP},
    {"every-n", "the all-reduced loss summed on every GPU, read back every `every` steps", 0,
     "every-step", EVERY_N},
    {"never", "the all-reduced loss summed on every GPU, read back once at the end", 0,
     "every-step", NEVER},
    {NULL, NULL, 0, NULL, 0},
};

static const sb_metric_def metrics[] = {
    SB_FIX_STEP_US,
    SB_FIX_SAVING,
    {"fast_wait_us", "us", SB_LOWER, "fast wait µs"},
    {"straggler_wait_us", "us", SB_LOWER, "straggler wait µs"},
    SB_GPU_WAIT_METRICS,
    SB_FIX_SYNCS,
    {NULL, NULL, 0, NULL},
};

/* How often the main thread looks for a failed rank while the ranks run (seconds). */
#define WATCH_S 0.1
/* The all-reduce's buffers hold one float, but NCCL reads its input in 16-byte pieces
 * (NVIDIA/nccl#265): a 4-byte allocation would be read past its end. */
#define NCCL_BUF 16

/* A call that failed on a rank's thread, reported by the main thread (the error record is the
 * main thread's). */
typedef struct rank_error {
    const char *call;
    int nccl; /* the code is an ncclResult_t, else a cudaError_t */
    int code;
    int line;
} rank_error;

typedef struct rank {
    int gpu;
    cudaStream_t stream;
    float *loss, *sum;       /* device: the rank's loss, the all-reduced sum */
    double *acc;             /* device: the sums added up (every-n, never) */
    float *sum_h;            /* pinned */
    double *acc_h;           /* pinned */
    unsigned long long step; /* steps run (every rank runs the same) */
    double acc_want;         /* what acc must hold: the CPU's sum of the same sums */
    sb_rank_time time;       /* the repetition under way */
    sb_mismatch bad;         /* readbacks that were not what the CPU expects */
    rank_error err;
} rank;

typedef struct coll_state {
    int n;
    rank ranks[SB_MAX_GPUS];
    sb_nccl_comm comms[SB_MAX_GPUS];
    int aborted; /* the communicators were aborted after a failure: nothing more runs */
    sb_team *team;
    unsigned long long work_ns, straggler_ns;
    long long every;
    /* the repetition under way, as the ranks read it */
    long long steps;
    int mode;
    atomic_int ready;        /* ranks at the start line of the repetition */
    atomic_int first_failed; /* 1 + the rank that failed first, 0: none */
    int async_rank;          /* an asynchronous NCCL error the watch found, on that GPU */
    sb_nccl_result async_err;
} coll_state;

static int rank_failed(coll_state *s, int k, const char *call, int nccl, int code, int line)
{
    rank_error *e = &s->ranks[k].err;
    e->call = call;
    e->nccl = nccl;
    e->code = code;
    e->line = line;
    int none = 0;
    atomic_compare_exchange_strong(&s->first_failed, &none, k + 1);
    return -1;
}

#define RANK_CUDA(call)                                                                            \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess)                                                                     \
            return rank_failed(s, k, #call, 0, (int)e_, __LINE__);                                 \
    } while (0)
#define RANK_NCCL(call)                                                                            \
    do {                                                                                           \
        sb_nccl_result e_ = (call);                                                                \
        if (e_ != SB_NCCL_SUCCESS)                                                                 \
            return rank_failed(s, k, #call, 1, e_, __LINE__);                                      \
    } while (0)

/* The all-reduced loss of a step, as the CPU computes it. */
static float step_sum(unsigned long long step, int n)
{
    float sum = 0;
    for (int g = 0; g < n; g++)
        sum += sb_rank_loss(step, g);
    return sum;
}

static void wrong(rank *rk, const char *what, double got, double want)
{
    sb_mismatch_note(&rk->bad, "%s on GPU %d were wrong (step %llu: got %.17g, expected %.17g)",
                     what, rk->gpu, rk->step, got, want);
}

/* The blocking readback of `bytes` from `dev`, timed on the rank's clock: .item(). */
static int read_timed(coll_state *s, int k, void *host, const void *dev, size_t bytes)
{
    rank *rk = &s->ranks[k];
    double t0 = sb_now_us();
    RANK_CUDA(sb_read_back(host, dev, bytes, rk->stream));
    rk->time.wait_us += sb_now_us() - t0;
    rk->time.syncs++;
    return 0;
}

/* One rank's steps of a repetition, on its own thread. */
static int rank_steps(coll_state *s, int k)
{
    rank *rk = &s->ranks[k];
    const int mode = s->mode;
    const unsigned long long ns = s->work_ns + (k == s->n - 1 ? s->straggler_ns : 0);
    RANK_CUDA(cudaSetDevice(rk->gpu));
    /* the ranks start together: the time the team's threads take to wake is not a step's */
    atomic_fetch_add(&s->ready, 1);
    while (atomic_load(&s->ready) < s->n && !atomic_load(&s->first_failed))
        sched_yield();
    rk->time.start = sb_now_us();
    for (long long i = 0; i < s->steps; i++) {
        if (atomic_load(&s->first_failed))
            return 0; /* another rank failed: its error is the one reported */
        rk->step++;
        RANK_CUDA(sb_launch_rank_loss(ns, rk->step, k, rk->loss, rk->stream));
        /* In NCCL's GROUP launch mode (gpu/nccl_api.c) the ranks' threads meet inside the
         * call, which on two H100s returned about when the step's work before it was done (the
         * readbacks then waited 27 and 34 us of a 143 us step): part of a rank's wait for the
         * others is spent here, so the call counts as waiting (not as a sync). */
        double t0 = sb_now_us();
        RANK_NCCL(sb_nccl.all_reduce(rk->loss, rk->sum, 1, SB_NCCL_FLOAT, SB_NCCL_SUM, s->comms[k],
                                     rk->stream));
        rk->time.wait_us += sb_now_us() - t0;
        const float want = step_sum(rk->step, s->n);
        if (mode == EVERY_STEP) {
            if (read_timed(s, k, rk->sum_h, rk->sum, sizeof(float)))
                return -1;
            if (*rk->sum_h != want)
                wrong(rk, "loss readbacks", *rk->sum_h, want);
            continue;
        }
        RANK_CUDA(sb_launch_add_sum(rk->sum, rk->acc, rk->stream));
        rk->acc_want += want;
        /* every-n: every `every` steps, and the rest at the end; never: once at the end */
        if ((mode == EVERY_N && (i + 1) % s->every == 0) || i + 1 == s->steps) {
            if (read_timed(s, k, rk->acc_h, rk->acc, sizeof(double)))
                return -1;
            if (*rk->acc_h != rk->acc_want)
                wrong(rk, "summed-loss readbacks", *rk->acc_h, rk->acc_want);
        }
    }
    rk->time.end = sb_now_us();
    return 0;
}

static void rank_job(void *arg, int k)
{
    rank_steps(arg, k);
}

static void abort_comms(coll_state *s)
{
    for (int k = 0; k < s->n; k++)
        sb_nccl.comm_abort(s->comms[k]);
    s->aborted = 1;
}

/* While the ranks run: a rank that failed, or an error NCCL reports on its own, leaves the other
 * ranks blocked in an all-reduce that cannot end; aborting the communicators lets them return. */
static void watch(void *arg)
{
    coll_state *s = arg;
    if (s->aborted)
        return;
    int bad = atomic_load(&s->first_failed) != 0;
    for (int k = 0; k < s->n && !bad; k++) {
        sb_nccl_result e = SB_NCCL_SUCCESS;
        if (sb_nccl.comm_get_async_error(s->comms[k], &e) == SB_NCCL_SUCCESS &&
            e != SB_NCCL_SUCCESS && e != SB_NCCL_IN_PROGRESS) {
            s->async_rank = k;
            s->async_err = e;
            bad = 1;
        }
    }
    if (bad)
        abort_comms(s);
}

/* The failure of the repetition, if any, recorded: NCCL's own first, else the first rank's. */
static int failure(coll_state *s)
{
    static char call[64];
    if (s->async_err) {
        snprintf(call, sizeof call, "the all-reduce on GPU %d", s->async_rank);
        return sb_nccl_fail(call, s->async_err, __FILE__, __LINE__);
    }
    int k = atomic_load(&s->first_failed) - 1;
    if (k < 0)
        return 0;
    const rank_error *e = &s->ranks[k].err;
    return e->nccl ? sb_nccl_fail(e->call, e->code, __FILE__, e->line)
                   : sb_cuda_fail(e->call, (cudaError_t)e->code, __FILE__, e->line);
}

static int measure(sb_run *r, sb_recorder *rec)
{
    coll_state *s = r->state;
    if (s->aborted)
        return sb_fail(SB_EXIT_FAIL, "NCCL was aborted after an earlier failure in %s",
                       sb_error_context());
    s->mode = sb_run_mode(r);
    s->steps = r->iters;
    sb_rank_time times[SB_MAX_GPUS];
    for (int k = 0; k < s->n; k++)
        memset(&s->ranks[k].time, 0, sizeof s->ranks[k].time);
    atomic_store(&s->ready, 0);
    sb_team_run(s->team, rank_job, watch, s, WATCH_S);
    int rc = failure(s);
    if (rc)
        return rc;
    for (int k = 0; k < s->n; k++)
        times[k] = s->ranks[k].time;
    sb_rank_summary sum;
    sb_rank_summarize(times, s->n, s->n - 1, r->iters, &sum);
    sb_rank_record(rec, &sum, s->n);
    return 0;
}

/* The sums and losses poisoned (NaN), the summed loss zeroed: a fresh start. */
static int reset_rank(rank *rk)
{
    rk->acc_want = 0;
    SB_CUDA(cudaMemsetAsync(rk->acc, 0, sizeof(double), rk->stream));
    SB_CUDA(cudaMemsetAsync(rk->sum, 0xFF, NCCL_BUF, rk->stream));
    return sb_memset_sync(rk->loss, 0xFF, NCCL_BUF, rk->stream);
}

/* Every readback was right, and every GPU's summed loss is the CPU's sum of the same steps;
 * then a fresh start. */
static int validate_ranks(coll_state *s)
{
    int rc = 0;
    for (int k = 0; k < s->n && !rc; k++)
        rc = sb_mismatch_report(&s->ranks[k].bad);
    if (!rc && sb_fault("collective-sum")) { /* test hook: a sum the host never asked for */
        rank *last = &s->ranks[s->n - 1];
        SB_CUDA(cudaSetDevice(last->gpu));
        SB_LAUNCH(sb_launch_add_sum(last->sum, last->acc, last->stream));
    }
    for (int k = 0; k < s->n && !rc; k++) {
        rank *rk = &s->ranks[k];
        SB_CUDA(cudaSetDevice(rk->gpu));
        SB_CUDA(sb_read_back(rk->acc_h, rk->acc, sizeof(double), rk->stream));
        if (*rk->acc_h != rk->acc_want)
            rc = sb_invalid("GPU %d's summed loss is %.17g, the CPU's sum of the same steps is "
                            "%.17g",
                            rk->gpu, *rk->acc_h, rk->acc_want);
    }
    for (int k = 0; k < s->n && !rc; k++) {
        SB_CUDA(cudaSetDevice(s->ranks[k].gpu));
        rc = reset_rank(&s->ranks[k]);
    }
    return rc;
}

static int validate(sb_run *r)
{
    int rc = validate_ranks(r->state);
    cudaSetDevice(r->device);
    return rc;
}

static int setup_rank(rank *rk, int gpu)
{
    rk->gpu = gpu;
    SB_CUDA(cudaSetDevice(gpu));
    SB_CUDA(cudaStreamCreateWithFlags(&rk->stream, cudaStreamNonBlocking));
    SB_CUDA(cudaMalloc((void **)&rk->loss, NCCL_BUF));
    SB_CUDA(cudaMalloc((void **)&rk->sum, NCCL_BUF));
    SB_CUDA(cudaMalloc((void **)&rk->acc, sizeof(double)));
    SB_CUDA(cudaHostAlloc((void **)&rk->sum_h, sizeof(float), cudaHostAllocPortable));
    SB_CUDA(cudaHostAlloc((void **)&rk->acc_h, sizeof(double), cudaHostAllocPortable));
    return reset_rank(rk);
}

/* What setup_rank made, on every GPU (kept before it runs: a partial setup is released too). */
static void release_ranks(void *p)
{
    coll_state *s = p;
    int before = 0;
    cudaGetDevice(&before);
    for (int k = 0; k < s->n; k++) {
        rank *rk = &s->ranks[k];
        if (cudaSetDevice(rk->gpu) != cudaSuccess)
            continue;
        if (rk->stream)
            cudaStreamDestroy(rk->stream);
        cudaFree(rk->loss);
        cudaFree(rk->sum);
        cudaFree(rk->acc);
        cudaFreeHost(rk->sum_h);
        cudaFreeHost(rk->acc_h);
    }
    cudaSetDevice(before);
}

static void release_comms(void *p)
{
    coll_state *s = p;
    for (int k = 0; k < s->n && !s->aborted; k++)
        sb_nccl.comm_destroy(s->comms[k]);
}

static void release_team(void *p)
{
    sb_team_free(p);
}

static int setup_all(sb_run *r, coll_state *s)
{
    int rc;
    if ((rc = sb_nccl_load()) || (rc = sb_run_gpus(r, &s->n)))
        return rc;
    s->work_ns = sb_run_param_ns(r, "work_us");
    s->straggler_ns = sb_run_param_ns(r, "straggler_us");
    s->every = sb_run_param(r, "every");
    atomic_store(&s->first_failed, 0);
    if ((rc = sb_keep(&r->res, release_ranks, s)))
        return rc;
    for (int k = 0; k < s->n && !rc; k++)
        rc = setup_rank(&s->ranks[k], k);
    if (rc || (rc = sb_nccl_init_all(s->comms, s->n)) || (rc = sb_keep(&r->res, release_comms, s)))
        return rc;
    s->team = sb_team_new(s->n);
    if (!s->team)
        return sb_fail(SB_EXIT_FAIL, "cannot start %d host threads in %s", s->n,
                       sb_error_context());
    return sb_keep(&r->res, release_team, s->team);
}

static int setup(sb_run *r)
{
    int rc = setup_all(r, r->state);
    cudaSetDevice(r->device); /* the engine's device is the current one again */
    return rc;
}

/* About 3 ms of steps (a step: every GPU's work, the straggler's, ~30 us of launches, the
 * all-reduce and the readback), and a whole number of at least two of every-n's intervals where
 * they take at most 50 ms, so that syncs_per_step is 1/every and every-n differs from never. */
static long long iters_for(const sb_param_values *p)
{
    long long est = sb_param(p, "work_us") + sb_param(p, "straggler_us") + 30;
    long long base = sb_fix_steps((double)est, 10000), every = sb_param(p, "every");
    if ((double)every * (double)est > 25000)
        return base;
    long long n = base > 2 * every ? base : 2 * every;
    return (n + every - 1) / every * every;
}

static size_t device_bytes(const sb_param_values *p)
{
    (void)p;
    return 2 * NCCL_BUF + sizeof(double); /* per GPU; NCCL's own buffers are NCCL's */
}

/* Before anything is measured: NCCL loads, and sets up communicators on these GPUs. */
static int check_machine(const sb_param_values *p, const int *v, int n_variants, int gpus)
{
    (void)p;
    (void)v;
    (void)n_variants;
    sb_nccl_comm comms[SB_MAX_GPUS];
    int rc = sb_nccl_load();
    if (!rc)
        rc = sb_nccl_init_all(comms, gpus);
    for (int k = 0; k < gpus && !rc; k++)
        sb_nccl.comm_destroy(comms[k]);
    return rc;
}

static const sb_multi_gpu multi = {2, sb_gpus_asked, check_machine};

SB_SCENARIO(sb_collective, "collective", coll_state,
            "an all-reduce per step on every GPU, one of them a straggler: .item() on every rank "
            "vs every n steps vs never",
            .params = params, .metrics = metrics, .delta = &sb_fix_delta, .default_iters = 30,
            .iters_for = iters_for, .device_bytes = device_bytes, .validate = validate,
            .multi = &multi);
