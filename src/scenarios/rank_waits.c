#include "scenarios/rank_waits.h"

const char *const sb_gpu_wait_metric[SB_MAX_GPUS] = {
    "wait_gpu0_us", "wait_gpu1_us", "wait_gpu2_us", "wait_gpu3_us",
    "wait_gpu4_us", "wait_gpu5_us", "wait_gpu6_us", "wait_gpu7_us",
};

void sb_rank_summarize(const sb_rank_time *t, int n, int straggler, long long steps,
                       sb_rank_summary *out)
{
    double first = t[0].start, last = t[0].end, fast = 0, syncs = 0;
    for (int g = 0; g < n; g++) {
        first = t[g].start < first ? t[g].start : first;
        last = t[g].end > last ? t[g].end : last;
        out->wait_us[g] = t[g].wait_us / (double)steps;
        if (g != straggler)
            fast += out->wait_us[g];
        syncs += (double)t[g].syncs;
    }
    out->step_us = (last - first) / (double)steps;
    out->fast_wait_us = fast / (double)(n - 1);
    out->straggler_wait_us = out->wait_us[straggler];
    out->syncs_per_step = syncs / (double)n / (double)steps;
}

void sb_rank_record(sb_recorder *rec, const sb_rank_summary *s, int n)
{
    sb_record(rec, "step_us", s->step_us);
    sb_record(rec, "fast_wait_us", s->fast_wait_us);
    sb_record(rec, "straggler_wait_us", s->straggler_wait_us);
    for (int g = 0; g < n; g++)
        sb_record(rec, sb_gpu_wait_metric[g], s->wait_us[g]);
    sb_record(rec, "syncs_per_step", s->syncs_per_step);
}
