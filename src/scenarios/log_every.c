/* log-every: a training-like step (`kernels` small kernels, the last of which computes the
 * step's loss) and the loss logged. Logging it every step is a `loss.item()` per step: the host
 * waits for the step to finish, the GPU idles while the host reads, logs and launches the next
 * step. Accumulating the loss on the GPU and reading the sum every `every` steps, or once at the
 * end, lets the host run ahead: the launches of step i+1 overlap the kernels of step i. */
#include <limits.h>
#include <stdio.h>

#include "base/clock.h"
#include "base/fault.h"
#include "gpu/cuda_check.h"
#include "gpu/sync.h"
#include "scenarios/fixes.h"
#include "scenarios/validation.h"
#include "scalars.h"

static const sb_param_def params[] = {
    {"every", SB_PARAM_INT, "100", "every-n: steps between two readbacks of the summed loss", 1,
     1000000, NULL},
    {"kernels", SB_PARAM_INT, "8", "kernels per step", 1, 1000, NULL},
    SB_FIX_KERNEL_US("5"),
    {NULL, 0, NULL, NULL, 0, 0, NULL},
};
enum { EVERY_STEP, EVERY_N, NEVER };

static const sb_variant variants[] = {
    {"every-step", "read the step's loss back after every step (loss.item())", 1, NULL, EVERY_STEP},
    {"every-n", "sum the loss on the GPU, read the sum back every `every` steps", 0, "every-step",
     EVERY_N},
    {"never", "sum the loss on the GPU, one readback at the end of the repetition", 0, "every-step",
     NEVER},
    {NULL, NULL, 0, NULL, 0},
};

typedef struct log_state {
    cudaStream_t stream;
    int kernels;
    long long every;
    unsigned long long ns;
    float *loss;   /* device: the last step's loss */
    double *acc;   /* device: the sum of every step's loss since the last reset */
    float *loss_h; /* pinned */
    double *acc_h; /* pinned */
    unsigned long long step;
    double logged;   /* what the host logged: the sum of the losses it read */
    double expected; /* the CPU's sum of the same steps' losses */
    sb_mismatch bad; /* readbacks in the measurement that returned what the CPU does not expect */
} log_state;

static size_t device_bytes(const sb_param_values *p)
{
    (void)p;
    return sizeof(float) + sizeof(double);
}

/* About 3 ms of steps, and with every-n at least two readbacks in a repetition when `every` is
 * not far more than that: a whole number of intervals, so syncs_per_step is 1/every. */
static long long iters_for(const sb_param_values *p)
{
    long long est = sb_kernels_step_us(sb_param(p, "kernels"), sb_param(p, "work_us"));
    long long base = sb_fix_steps((double)est, LLONG_MAX), every = sb_param(p, "every");
    if (2 * every > 5 * base)
        return base;
    long long n = base > 2 * every ? base : 2 * every;
    return (n + every - 1) / every * every;
}

static int setup(sb_run *r)
{
    log_state *s = r->state;
    s->kernels = (int)sb_run_param(r, "kernels");
    s->every = sb_run_param(r, "every");
    s->ns = sb_run_param_ns(r, "work_us");
    sb_resources *res = &r->res;
    int rc;
    if ((rc = sb_get_stream(res, &s->stream, cudaStreamNonBlocking)) ||
        (rc = sb_get_device(res, &s->loss, sizeof(float))) ||
        (rc = sb_get_device(res, &s->acc, sizeof(double))) ||
        (rc = sb_get_pinned(res, &s->loss_h, sizeof(float), cudaHostAllocDefault)) ||
        (rc = sb_get_pinned(res, &s->acc_h, sizeof(double), cudaHostAllocDefault)))
        return rc;
    return sb_memset_sync(s->acc, 0, sizeof(double), s->stream);
}

static void mismatch(log_state *s, double got, double want)
{
    if (got != want)
        sb_mismatch_note(&s->bad,
                         "loss readbacks were wrong (step %llu: got %.17g, expected %.17g)",
                         s->step, got, want);
}

/* loss.item(): the step's loss comes back and is logged. */
static int read_loss(log_state *s)
{
    SB_CUDA(sb_read_back(s->loss_h, s->loss, sizeof(float), s->stream));
    mismatch(s, *s->loss_h, sb_step_loss(s->step));
    s->logged += *s->loss_h;
    return 0;
}

/* The GPU's running sum comes back: the host logs what was added since its last readback. */
static int read_sum(log_state *s)
{
    SB_CUDA(sb_read_back(s->acc_h, s->acc, sizeof(double), s->stream));
    mismatch(s, *s->acc_h, s->expected);
    s->logged = *s->acc_h;
    return 0;
}

static int measure(sb_run *r, sb_recorder *rec)
{
    log_state *s = r->state;
    const int mode = sb_run_mode(r);
    int rc = 0;
    sb_fix_timer t = sb_fix_start();
    for (long long i = 0; i < r->iters && !rc; i++) {
        s->step++;
        for (int k = 0; k < s->kernels; k++) {
            int last = k == s->kernels - 1;
            SB_LAUNCH(sb_launch_train_kernel(s->ns, s->step, last ? s->loss : NULL,
                                             last ? s->acc : NULL, s->stream));
        }
        s->expected += sb_step_loss(s->step);
        if (mode == EVERY_STEP) {
            rc = read_loss(s);
            t.syncs++;
        } else if ((mode == EVERY_N && (i + 1) % s->every == 0) || i + 1 == r->iters) {
            /* every-n: every `every` steps, and the rest at the end of the repetition;
             * never: once at the end */
            rc = read_sum(s);
            t.syncs++;
        }
    }
    if (rc)
        return rc;
    /* ends the repetition, not a step's sync: every variant's repetition ends with its work
     * done (a readback already waited for it), so a fix that drops the per-step syncs keeps a
     * sync here, as the audit's replay sees when it removes the per-step site */
    SB_CUDA(cudaStreamSynchronize(s->stream));
    double t1 = sb_now_us();
    sb_fix_record(rec, &t, t1, r->iters);
    return 0;
}

/* Every readback returned what the CPU expects, and what the host logged over the whole
 * measurement is the CPU's sum of the same steps' losses; then a fresh start. */
static int validate(sb_run *r)
{
    log_state *s = r->state;
    if (sb_fault("log-loss")) /* test hook: a lost step must be caught */
        s->logged -= 0.25;
    if (s->bad.count)
        return sb_mismatch_report(&s->bad);
    if (s->logged != s->expected)
        return sb_invalid("the logged loss totals %.17g, the CPU's sum of the same steps is %.17g",
                          s->logged, s->expected);
    s->logged = s->expected = 0;
    SB_CUDA(cudaMemsetAsync(s->acc, 0, sizeof(double), s->stream));
    return sb_memset_sync(s->loss, 0xFF, sizeof(float), s->stream); /* NaN */
}

SB_SCENARIO(sb_log_every, "log-every", log_state,
            "log the loss every step (.item()) vs every n steps vs never (summed on the GPU)",
            .params = params, .metrics = sb_fix_metrics, .delta = &sb_fix_delta,
            .default_iters = 200, .iters_for = iters_for, .device_bytes = device_bytes,
            .validate = validate);
