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
#include "gpu/sync.h"
#include "scenarios/fixes.h"
#include "scenarios/validation.h"
#include "scalars.h"

#define STRIDE 32 /* uint32 words between two values: a 128-byte line each */

static const sb_param_def params[] = {
    {"values", SB_PARAM_INT, "3", "scalars read back per step (K)", 1, 4096, NULL},
    SB_FIX_WORK_US("20", "GPU work per step before the readbacks"),
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

typedef struct coalesce_state {
    cudaStream_t stream;
    int k;
    unsigned long long ns;
    uint32_t *vals;    /* device: K values, STRIDE words apart */
    uint32_t *stacked; /* device: K values side by side */
    uint32_t *host;    /* pinned: where the readbacks land */
    uint32_t *check;   /* host: validate's per-value copy */
    uint32_t seed;     /* the current step's */
    sb_mismatch bad;   /* values read back in the measurement that were not their step's */
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
    return sb_fix_steps((double)(sb_param(p, "work_us") + 8 * sb_param(p, "values") + 5), 1000);
}

static int setup(sb_run *r)
{
    coalesce_state *s = r->state;
    s->k = (int)sb_run_param(r, "values");
    s->ns = sb_run_param_ns(r, "work_us");
    size_t k = (size_t)s->k;
    sb_resources *res = &r->res;
    int rc;
    if ((rc = sb_get_stream(res, &s->stream, cudaStreamNonBlocking)) ||
        (rc = sb_get_device(res, &s->vals, k * STRIDE * sizeof(uint32_t))) ||
        (rc = sb_get_device(res, &s->stacked, k * sizeof(uint32_t))) ||
        (rc = sb_get_pinned(res, &s->host, k * sizeof(uint32_t), cudaHostAllocDefault)) ||
        (rc = sb_get_host(res, &s->check, k * sizeof(uint32_t))))
        return rc;
    return sb_memset_sync(s->vals, 0xFF, k * STRIDE * sizeof(uint32_t), s->stream);
}

/* torch.stack and one .item(): the K values gathered into one buffer, read back at once. */
static int read_stacked(coalesce_state *s)
{
    SB_LAUNCH(sb_launch_gather_values(s->vals, s->k, STRIDE, s->stacked, s->stream));
    SB_CUDA(sb_read_back(s->host, s->stacked, (size_t)s->k * sizeof(uint32_t), s->stream));
    return 0;
}

/* One step: the work writes the K values, then they come back to s->host. *syncs counts the
 * host-blocking calls. */
static int step(coalesce_state *s, int mode, long long *syncs)
{
    s->seed++;
    SB_LAUNCH(sb_launch_write_values(s->ns, s->vals, s->k, STRIDE, s->seed, s->stream));
    if (mode == STACKED) {
        ++*syncs;
        return read_stacked(s);
    }
    for (int i = 0; i < s->k; i++) {
        SB_CUDA(
            sb_read_back(&s->host[i], &s->vals[(size_t)i * STRIDE], sizeof(uint32_t), s->stream));
        ++*syncs;
    }
    return 0;
}

/* The host uses the values: each must be this step's. */
static void check_values(coalesce_state *s, const uint32_t *got)
{
    for (int i = 0; i < s->k; i++) {
        uint32_t want = sb_coalesce_value(s->seed, i);
        if (got[i] != want)
            sb_mismatch_note(&s->bad,
                             "values read back were not their step's (value %d: got 0x%08x, "
                             "expected 0x%08x)",
                             i, got[i], want);
    }
}

static int measure(sb_run *r, sb_recorder *rec)
{
    coalesce_state *s = r->state;
    const int mode = sb_run_mode(r);
    sb_fix_timer t = sb_fix_start();
    for (long long i = 0; i < r->iters; i++) {
        int rc = step(s, mode, &t.syncs);
        if (rc)
            return rc;
        check_values(s, s->host);
    }
    sb_fix_record(rec, &t, sb_now_us(), r->iters);
    return 0;
}

/* Every value read back in the measurement was its step's; then one step of each way on the
 * same values: the stacked readback equals the K separate ones. */
static int validate(sb_run *r)
{
    coalesce_state *s = r->state;
    long long syncs = 0;
    if (s->bad.count)
        return sb_mismatch_report(&s->bad);
    int rc = step(s, PER_VALUE, &syncs);
    if (rc)
        return rc;
    memcpy(s->check, s->host, (size_t)s->k * sizeof(uint32_t));
    /* the same values again, stacked: no new step, so gather what the step above wrote */
    SB_CUDA(cudaMemsetAsync(s->stacked, 0xFF, (size_t)s->k * sizeof(uint32_t), s->stream));
    if ((rc = read_stacked(s)))
        return rc;
    if (sb_fault("coalesce-values")) /* test hook: a wrong stacked value must be caught */
        s->host[s->k - 1] ^= 1u;
    for (int i = 0; i < s->k; i++) {
        uint32_t want = sb_coalesce_value(s->seed, i);
        if (s->host[i] != s->check[i] || s->check[i] != want)
            return sb_invalid("value %d read back stacked is 0x%08x, one by one 0x%08x, "
                              "expected 0x%08x",
                              i, s->host[i], s->check[i], want);
    }
    /* poison: the next measurement's values must be written again */
    return sb_memset_sync(s->vals, 0xFF, (size_t)s->k * STRIDE * sizeof(uint32_t), s->stream);
}

SB_SCENARIO(sb_coalesce, "coalesce", coalesce_state,
            "K scalars read back per step: K .item() calls vs one stacked readback",
            .params = params, .metrics = sb_fix_metrics, .delta = &sb_fix_delta,
            .default_iters = 61, .iters_for = iters_for, .device_bytes = device_bytes,
            .host_bytes = host_bytes, .validate = validate);
