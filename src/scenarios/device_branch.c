/* device-branch: control flow that depends on a GPU value (`if loss > threshold:`, `if
 * found.any():`). On the host, the branch needs the value: a readback, the GPU drained and
 * idle until the host has read the flag and launched the branch's kernel. Made on the GPU, the
 * choice is data: one kernel reads the flag and computes the selected result (torch.where), the
 * host never waits and keeps queueing steps. Each step: GPU work (`work_us`) that produces the
 * flag and a value, then the branch: x + 1 or 3x + 7, added to a checksum on the GPU. */
#include <stdio.h>

#include "base/clock.h"
#include "base/fault.h"
#include "gpu/cuda_check.h"
#include "scenarios/scenario.h"
#include "scalars.h"

static const sb_param_def params[] = {
    {"work_us", SB_PARAM_INT, "10", "GPU work per step before the branch", 0, 1000000, NULL},
    {NULL, 0, NULL, NULL, 0, 0, NULL},
};
enum { HOST_BRANCH, DEVICE_SELECT };

static const sb_variant variants[] = {
    {"host-branch", "read the flag back, the host launches one of two kernels", 1, NULL,
     HOST_BRANCH},
    {"device-select", "one kernel reads the flag on the GPU and computes the selected result", 0,
     "host-branch", DEVICE_SELECT},
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

typedef struct branch_state {
    cudaStream_t stream;
    unsigned long long ns;
    int *flag;                 /* device */
    uint32_t *x;               /* device */
    unsigned long long *sum;   /* device: the branches' results, summed */
    int *flag_h;               /* pinned */
    unsigned long long *sum_h; /* pinned */
    unsigned long long step;
    unsigned long long expected; /* the CPU's sum of the same steps' results */
    unsigned long long bad, bad_step;
    int bad_flag;
} branch_state;

static size_t device_bytes(const sb_param_values *p)
{
    (void)p;
    return sizeof(int) + sizeof(uint32_t) + sizeof(unsigned long long);
}

/* Step estimate of the syncing variant: the work, a readback and a launch. */
static long long iters_for(const sb_param_values *p)
{
    long long n = 3000 / (sb_param(p, "work_us") + 15);
    return n < 1 ? 1 : n > 1000 ? 1000 : n;
}

static int setup(sb_run *r)
{
    branch_state *s = r->state;
    sb_resources *res = &r->res;
    int rc;
    s->ns = (unsigned long long)sb_run_param(r, "work_us") * 1000ull;
    if ((rc = sb_get_stream(res, &s->stream, cudaStreamNonBlocking)) ||
        (rc = sb_get_device(res, &s->flag, sizeof *s->flag)) ||
        (rc = sb_get_device(res, &s->x, sizeof *s->x)) ||
        (rc = sb_get_device(res, &s->sum, sizeof *s->sum)) ||
        (rc = sb_get_pinned(res, &s->flag_h, sizeof *s->flag_h, cudaHostAllocDefault)) ||
        (rc = sb_get_pinned(res, &s->sum_h, sizeof *s->sum_h, cudaHostAllocDefault)))
        return rc;
    SB_CUDA(cudaMemsetAsync(s->sum, 0, sizeof *s->sum, s->stream));
    SB_CUDA(cudaStreamSynchronize(s->stream));
    return 0;
}

static int measure(sb_run *r, sb_recorder *rec)
{
    branch_state *s = r->state;
    const int mode = sb_run_mode(r);
    long long syncs = 0;
    double t0 = sb_now_us();
    for (long long i = 0; i < r->iters; i++) {
        s->step++;
        SB_LAUNCH(sb_launch_make_flag(s->ns, s->step, s->flag, s->x, s->stream));
        if (mode == HOST_BRANCH) {
            SB_CUDA(cudaMemcpyAsync(s->flag_h, s->flag, sizeof *s->flag_h, cudaMemcpyDeviceToHost,
                                    s->stream));
            SB_CUDA(cudaStreamSynchronize(s->stream));
            syncs++;
            int flag = *s->flag_h;
            if (flag != sb_branch_flag(s->step) && !s->bad++) {
                s->bad_step = s->step;
                s->bad_flag = flag;
            }
            SB_LAUNCH(sb_launch_branch(flag != 0, s->x, s->sum, s->stream));
        } else {
            SB_LAUNCH(sb_launch_select(s->flag, s->x, s->sum, s->stream));
        }
        s->expected += sb_branch_result(sb_branch_flag(s->step), sb_branch_x(s->step));
    }
    /* the last step's branch is still queued either way */
    SB_CUDA(cudaStreamSynchronize(s->stream));
    syncs++;
    double t1 = sb_now_us();
    sb_record(rec, "step_us", (t1 - t0) / (double)r->iters);
    sb_record(rec, "syncs_per_step", (double)syncs / (double)r->iters);
    return 0;
}

/* Every step took the branch the CPU would have taken: the GPU's checksum of the results is the
 * CPU's. */
static int validate(sb_run *r)
{
    branch_state *s = r->state;
    if (s->bad) {
        unsigned long long bad = s->bad;
        s->bad = 0;
        return sb_fail(SB_EXIT_FAIL,
                       "validation failed in %s: %llu flags read back were wrong (step %llu: got "
                       "%d, expected %d)",
                       sb_error_context(), bad, s->bad_step, s->bad_flag,
                       sb_branch_flag(s->bad_step));
    }
    SB_CUDA(cudaMemcpyAsync(s->sum_h, s->sum, sizeof *s->sum_h, cudaMemcpyDeviceToHost, s->stream));
    SB_CUDA(cudaStreamSynchronize(s->stream));
    unsigned long long got = *s->sum_h;
    if (sb_fault("branch-output")) /* test hook: a step that took the other branch */
        got += 2 * (unsigned long long)sb_branch_x(s->step) + 6;
    if (got != s->expected)
        return sb_fail(SB_EXIT_FAIL,
                       "validation failed in %s: the branches' results sum to %llu, the CPU's "
                       "branch gives %llu",
                       sb_error_context(), got, s->expected);
    SB_CUDA(cudaMemsetAsync(s->sum, 0, sizeof *s->sum, s->stream));
    SB_CUDA(cudaStreamSynchronize(s->stream));
    s->expected = 0;
    return 0;
}

const sb_scenario sb_device_branch = {
    .name = "device-branch",
    .state_size = sizeof(branch_state),
    .summary = "control flow on a GPU value: read it back and branch on the host vs select on "
               "the GPU",
    .params = params,
    .variants = variants,
    .metrics = metrics,
    .delta = &delta,
    .default_iters = 120,
    .iters_for = iters_for,
    .device_bytes = device_bytes,
    .setup = setup,
    .measure = measure,
    .validate = validate,
};
