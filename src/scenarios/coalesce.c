/* coalesce: reading K scalars back at the end of a step, one `.item()` each or all at once. Each
 * `.item()` is a cudaMemcpyAsync into pinned memory plus a cudaStreamSynchronize: K round trips
 * of the host to the GPU, the GPU idle during each. Stacking the K values on the GPU first (one
 * small kernel, as torch.stack) leaves one readback and one sync per step. The K values live in
 * K places of their own, as K separate tensors would, and are written each step by the step's
 * work from the step's seed, so that a stale value is caught. */
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "base/fault.h"
#include "gpu/cuda_check.h"
#include "scenarios/scenario.h"
#include "scalars.h"

#define STRIDE 32 /* uint32 words between two values: a 128-byte line each */

static const sb_param_def params[] = {
    {"values", SB_PARAM_INT, "3", "scalars read back per step (K)", 1, 4096, NULL},
    {"work_us", SB_PARAM_INT, "20", "GPU work per step before the readbacks", 0, 1000000, NULL},
    {NULL, 0, NULL, NULL, 0, 0, NULL},
};
enum { PER_VALUE, STACKED };

static const sb_variant variants[] = {
    {"per-value", "K .item() calls: K x (cudaMemcpyAsync to pinned + cudaStreamSynchronize)", 1,
     NULL, PER_VALUE},
    {"stacked", "one kernel gathers the K values into one buffer, one readback and one sync", 0,
     "per-value", STACKED},
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

typedef struct coalesce_state {
    cudaStream_t stream;
    int k;
    unsigned long long ns;
    uint32_t *vals;    /* device: K values, STRIDE words apart */
    uint32_t *stacked; /* device: K values side by side */
    uint32_t *host;    /* pinned: where the readbacks land */
    uint32_t *check;   /* host: validate's per-value copy */
    uint32_t seed;     /* the current step's */
    unsigned long long bad;
    int bad_index;
    uint32_t bad_got, bad_want;
} coalesce_state;

static size_t device_bytes(const sb_param_values *p)
{
    return (size_t)sb_param(p, "values") * (STRIDE + 1) * sizeof(uint32_t);
}

static size_t host_bytes(const sb_param_values *p)
{
    return (size_t)sb_param(p, "values") * 2 * sizeof(uint32_t);
}

/* Step estimate of the syncing variant: the work, then K readbacks of ~8 us each. */
static long long iters_for(const sb_param_values *p)
{
    long long est = sb_param(p, "work_us") + 8 * sb_param(p, "values") + 5;
    long long n = 3000 / est;
    return n < 1 ? 1 : n > 1000 ? 1000 : n;
}

static int setup(sb_run *r)
{
    coalesce_state *s = r->state;
    sb_resources *res = &r->res;
    int rc;
    s->k = (int)sb_run_param(r, "values");
    s->ns = (unsigned long long)sb_run_param(r, "work_us") * 1000ull;
    size_t k = (size_t)s->k;
    if ((rc = sb_get_stream(res, &s->stream, cudaStreamNonBlocking)) ||
        (rc = sb_get_device(res, &s->vals, k * STRIDE * sizeof(uint32_t))) ||
        (rc = sb_get_device(res, &s->stacked, k * sizeof(uint32_t))) ||
        (rc = sb_get_pinned(res, &s->host, k * sizeof(uint32_t), cudaHostAllocDefault)) ||
        (rc = sb_get_host(res, &s->check, k * sizeof(uint32_t))))
        return rc;
    SB_CUDA(cudaMemsetAsync(s->vals, 0xFF, k * STRIDE * sizeof(uint32_t), s->stream));
    SB_CUDA(cudaStreamSynchronize(s->stream));
    return 0;
}

/* One step: the work writes the K values, then they come back to s->host. *syncs counts the
 * host-blocking calls. */
static int step(coalesce_state *s, int mode, long long *syncs)
{
    s->seed++;
    SB_LAUNCH(sb_launch_write_values(s->ns, s->vals, s->k, STRIDE, s->seed, s->stream));
    if (mode == PER_VALUE) {
        for (int i = 0; i < s->k; i++) {
            SB_CUDA(cudaMemcpyAsync(&s->host[i], &s->vals[(size_t)i * STRIDE], sizeof(uint32_t),
                                    cudaMemcpyDeviceToHost, s->stream));
            SB_CUDA(cudaStreamSynchronize(s->stream));
            ++*syncs;
        }
    } else {
        SB_LAUNCH(sb_launch_gather_values(s->vals, s->k, STRIDE, s->stacked, s->stream));
        SB_CUDA(cudaMemcpyAsync(s->host, s->stacked, (size_t)s->k * sizeof(uint32_t),
                                cudaMemcpyDeviceToHost, s->stream));
        SB_CUDA(cudaStreamSynchronize(s->stream));
        ++*syncs;
    }
    return 0;
}

/* The host uses the values: each must be this step's. */
static void check_values(coalesce_state *s, const uint32_t *got)
{
    for (int i = 0; i < s->k; i++) {
        uint32_t want = sb_coalesce_value(s->seed, i);
        if (got[i] != want && !s->bad++) {
            s->bad_index = i;
            s->bad_got = got[i];
            s->bad_want = want;
        }
    }
}

static int measure(sb_run *r, sb_recorder *rec)
{
    coalesce_state *s = r->state;
    const int mode = sb_run_mode(r);
    long long syncs = 0;
    double t0 = sb_now_us();
    for (long long i = 0; i < r->iters; i++) {
        int rc = step(s, mode, &syncs);
        if (rc)
            return rc;
        check_values(s, s->host);
    }
    double t1 = sb_now_us();
    sb_record(rec, "step_us", (t1 - t0) / (double)r->iters);
    sb_record(rec, "syncs_per_step", (double)syncs / (double)r->iters);
    return 0;
}

/* Every value read back in the measurement was its step's; then one step of each way on the
 * same values: the stacked readback equals the K separate ones. */
static int validate(sb_run *r)
{
    coalesce_state *s = r->state;
    if (s->bad) {
        unsigned long long bad = s->bad;
        s->bad = 0;
        return sb_fail(SB_EXIT_FAIL,
                       "validation failed in %s: %llu values read back were not their step's "
                       "(value %d: got 0x%08x, expected 0x%08x)",
                       sb_error_context(), bad, s->bad_index, s->bad_got, s->bad_want);
    }
    long long syncs = 0;
    int rc = step(s, PER_VALUE, &syncs);
    if (rc)
        return rc;
    memcpy(s->check, s->host, (size_t)s->k * sizeof(uint32_t));
    /* the same values again, stacked: no new step, so gather what the step above wrote */
    SB_CUDA(cudaMemsetAsync(s->stacked, 0xFF, (size_t)s->k * sizeof(uint32_t), s->stream));
    SB_LAUNCH(sb_launch_gather_values(s->vals, s->k, STRIDE, s->stacked, s->stream));
    SB_CUDA(cudaMemcpyAsync(s->host, s->stacked, (size_t)s->k * sizeof(uint32_t),
                            cudaMemcpyDeviceToHost, s->stream));
    SB_CUDA(cudaStreamSynchronize(s->stream));
    if (sb_fault("coalesce-values")) /* test hook: a wrong stacked value must be caught */
        s->host[s->k - 1] ^= 1u;
    for (int i = 0; i < s->k; i++) {
        uint32_t want = sb_coalesce_value(s->seed, i);
        if (s->host[i] != s->check[i] || s->check[i] != want)
            return sb_fail(SB_EXIT_FAIL,
                           "validation failed in %s: value %d read back stacked is 0x%08x, one "
                           "by one 0x%08x, expected 0x%08x",
                           sb_error_context(), i, s->host[i], s->check[i], want);
    }
    /* poison: the next measurement's values must be written again */
    SB_CUDA(cudaMemsetAsync(s->vals, 0xFF, (size_t)s->k * STRIDE * sizeof(uint32_t), s->stream));
    SB_CUDA(cudaStreamSynchronize(s->stream));
    return 0;
}

const sb_scenario sb_coalesce = {
    .name = "coalesce",
    .state_size = sizeof(coalesce_state),
    .summary = "K scalars read back per step: K .item() calls vs one stacked readback",
    .params = params,
    .variants = variants,
    .metrics = metrics,
    .delta = &delta,
    .default_iters = 61,
    .iters_for = iters_for,
    .device_bytes = device_bytes,
    .host_bytes = host_bytes,
    .setup = setup,
    .measure = measure,
    .validate = validate,
};
