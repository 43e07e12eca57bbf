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
#include "gpu/sync.h"
#include "scenarios/fixes.h"
#include "scenarios/validation.h"
#include "scalars.h"

static const sb_param_def params[] = {
    SB_FIX_WORK_US("10", "GPU work per step before the branch"),
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
    sb_mismatch bad;             /* flags read back in the measurement that were wrong */
} branch_state;

static size_t device_bytes(const sb_param_values *p)
{
    (void)p;
    return sizeof(int) + sizeof(uint32_t) + sizeof(unsigned long long);
}

/* Step estimate of the syncing variant: the work, a readback and a launch. */
static long long iters_for(const sb_param_values *p)
{
    return sb_fix_steps((double)(sb_param(p, "work_us") + 15), 1000);
}

static int setup(sb_run *r)
{
    branch_state *s = r->state;
    s->ns = sb_run_param_ns(r, "work_us");
    sb_resources *res = &r->res;
    int rc;
    if ((rc = sb_get_stream(res, &s->stream, cudaStreamNonBlocking)) ||
        (rc = sb_get_device(res, &s->flag, sizeof *s->flag)) ||
        (rc = sb_get_device(res, &s->x, sizeof *s->x)) ||
        (rc = sb_get_device(res, &s->sum, sizeof *s->sum)) ||
        (rc = sb_get_pinned(res, &s->flag_h, sizeof *s->flag_h, cudaHostAllocDefault)) ||
        (rc = sb_get_pinned(res, &s->sum_h, sizeof *s->sum_h, cudaHostAllocDefault)))
        return rc;
    return sb_memset_sync(s->sum, 0, sizeof *s->sum, s->stream);
}

static int measure(sb_run *r, sb_recorder *rec)
{
    branch_state *s = r->state;
    const int mode = sb_run_mode(r);
    sb_fix_timer t = sb_fix_start();
    for (long long i = 0; i < r->iters; i++) {
        s->step++;
        SB_LAUNCH(sb_launch_make_flag(s->ns, s->step, s->flag, s->x, s->stream));
        if (mode == HOST_BRANCH) {
            SB_CUDA(sb_read_back(s->flag_h, s->flag, sizeof *s->flag_h, s->stream));
            t.syncs++;
            int flag = *s->flag_h, want = sb_branch_flag(s->step);
            if (flag != want)
                sb_mismatch_note(&s->bad,
                                 "flags read back were wrong (step %llu: got %d, expected %d)",
                                 s->step, flag, want);
            SB_LAUNCH(sb_launch_branch(flag != 0, s->x, s->sum, s->stream));
        } else {
            SB_LAUNCH(sb_launch_select(s->flag, s->x, s->sum, s->stream));
        }
        s->expected += sb_branch_result(sb_branch_flag(s->step), sb_branch_x(s->step));
    }
    /* the last step's branch is still queued either way */
    SB_CUDA(cudaStreamSynchronize(s->stream));
    t.syncs++;
    sb_fix_record(rec, &t, sb_now_us(), r->iters);
    return 0;
}

/* Every step took the branch the CPU would have taken: the GPU's checksum of the results is the
 * CPU's. */
static int validate(sb_run *r)
{
    branch_state *s = r->state;
    if (s->bad.count)
        return sb_mismatch_report(&s->bad);
    SB_CUDA(sb_read_back(s->sum_h, s->sum, sizeof *s->sum_h, s->stream));
    unsigned long long got = *s->sum_h;
    if (sb_fault("branch-output")) /* test hook: a step that took the other branch */
        got += 2 * (unsigned long long)sb_branch_x(s->step) + 6;
    if (got != s->expected)
        return sb_invalid("the branches' results sum to %llu, the CPU's branch gives %llu", got,
                          s->expected);
    s->expected = 0;
    return sb_memset_sync(s->sum, 0, sizeof *s->sum, s->stream);
}

SB_SCENARIO(sb_device_branch, "device-branch", branch_state,
            "control flow on a GPU value: read it back and branch on the host vs select on the GPU",
            .params = params, .metrics = sb_fix_metrics, .delta = &sb_fix_delta,
            .default_iters = 120, .iters_for = iters_for, .device_bytes = device_bytes,
            .validate = validate);
