/* What the sync-free fixes (coalesce, log-every, graph, dynamic-shape, device-branch,
 * busy-stream, alloc, small-h2d) declare alike: each times a step, once the syncing way and once
 * (or more) without the sync, and reports the step's wall time, what the fix saves against the
 * syncing variant (paired, as delta rows), and the host syncs a step issues. */
#ifndef SB_FIXES_H
#define SB_FIXES_H

#include "base/clock.h"
#include "scenarios/scenario.h"

/* step_us, saving_us, saving_pct, syncs_per_step */
extern const sb_metric_def sb_fix_metrics[];
/* saving_us and saving_pct: the syncing variant's step_us minus the fix's */
extern const sb_delta_def sb_fix_delta;

/* clang-format off */
/* The GPU work a step does before its readback or sync, spun on the GPU's clock (work_us). */
#define SB_FIX_WORK_US(def, help) {"work_us", SB_PARAM_INT, def, help, 0, 1000000, NULL}
/* The GPU time of each of a step's kernels (work_us). */
#define SB_FIX_KERNEL_US(def)                                                                      \
    {"work_us", SB_PARAM_INT, def, "GPU time of each kernel", 0, 100000, NULL}

/* The rows of sb_fix_metrics, for a table with metrics of its own besides (sched's: no saving) */
#define SB_FIX_STEP_US {"step_us", "us", SB_LOWER, "step µs"}
#define SB_FIX_SAVING                                                                              \
    {"saving_us", "us", SB_HIGHER, "saving µs"}, {"saving_pct", "%", SB_HIGHER, "saving %"}
#define SB_FIX_SYNCS {"syncs_per_step", "count", SB_LOWER, "syncs/step"}
/* The table of a fix with one metric of its own, between the saving and the syncs */
#define SB_FIX_METRICS_WITH(...)                                                                   \
    {SB_FIX_STEP_US, SB_FIX_SAVING, __VA_ARGS__, SB_FIX_SYNCS, {NULL, NULL, 0, NULL}}
/* clang-format on */

/* Steps in a repetition of about 3 ms of the syncing variant, one of whose steps takes about
 * `step_us`: at least 1, at most `most`. */
long long sb_fix_steps(double step_us, long long most);
/* The step estimate of `kernels` kernels of `work_us` each, launched one by one: per kernel its
 * work, or ~3 us of launch where that is longer, and ~10 us for the rest of the step. */
long long sb_kernels_step_us(long long kernels, long long work_us);

/* The timing of a repetition's steps: when the first began, and the host syncs issued since. */
typedef struct sb_fix_timer {
    double t0;
    long long syncs;
} sb_fix_timer;

static inline sb_fix_timer sb_fix_start(void)
{
    sb_fix_timer t = {sb_now_us(), 0};
    return t;
}

/* Records step_us and syncs_per_step of `steps` steps, timed from t->t0 to t1 (sb_now_us). */
void sb_fix_record(sb_recorder *rec, const sb_fix_timer *t, double t1, long long steps);

#endif
