#include "scenarios/fixes.h"

const sb_metric_def sb_fix_metrics[] = {
    SB_FIX_STEP_US,
    SB_FIX_SAVING,
    SB_FIX_SYNCS,
    {NULL, NULL, 0, NULL},
};

const sb_delta_def sb_fix_delta = {"step_us", "saving_us", "saving_pct", 1};

long long sb_fix_steps(double step_us, long long most)
{
    long long n = (long long)(3000.0 / step_us);
    return n < 1 ? 1 : n > most ? most : n;
}

long long sb_kernels_step_us(long long kernels, long long work_us)
{
    return kernels * (work_us > 3 ? work_us : 3) + 10;
}

void sb_fix_record(sb_recorder *rec, const sb_fix_timer *t, double t1, long long steps)
{
    sb_record(rec, "step_us", (t1 - t->t0) / (double)steps);
    sb_record(rec, "syncs_per_step", (double)t->syncs / (double)steps);
}
