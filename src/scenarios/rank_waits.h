/* The collective scenario's bookkeeping of a repetition, one host thread per GPU: when each
 * rank's steps began and ended, how long its host blocked in the all-reduce calls and the
 * readbacks, how many readbacks it made; and
 * what is recorded of them: the step time of the whole job (first start to last end), every
 * GPU's host wait per step, the fast GPUs' mean and the straggler's. Pure: no CUDA, no threads. */
#ifndef SB_RANK_WAITS_H
#define SB_RANK_WAITS_H

#include "scenarios/scenario.h"

/* One rank's repetition (sb_now_us times). */
typedef struct sb_rank_time {
    double start, end; /* before its first step's launch, after its last step's readback */
    double wait_us;    /* the all-reduce calls' and the readbacks' time, summed */
    long long syncs;   /* the readbacks (each one a host sync) */
} sb_rank_time;

typedef struct sb_rank_summary {
    double step_us;              /* (last end - first start) / steps */
    double wait_us[SB_MAX_GPUS]; /* per GPU, per step */
    double fast_wait_us;         /* the mean of wait_us over the GPUs but the straggler */
    double straggler_wait_us;    /* wait_us of the straggler */
    double syncs_per_step;       /* per GPU (every rank makes the same readbacks) */
} sb_rank_summary;

/* The metrics' names, per GPU: "wait_gpu0_us" ... "wait_gpu7_us". */
extern const char *const sb_gpu_wait_metric[SB_MAX_GPUS];
/* clang-format off */
/* Their declarations, for a scenario's metrics (not in the table: fast and straggler are) */
#define SB_GPU_WAIT_DEF(g) {"wait_gpu" #g "_us", "us", SB_LOWER, NULL}
#define SB_GPU_WAIT_METRICS                                                                        \
    SB_GPU_WAIT_DEF(0), SB_GPU_WAIT_DEF(1), SB_GPU_WAIT_DEF(2), SB_GPU_WAIT_DEF(3),                \
    SB_GPU_WAIT_DEF(4), SB_GPU_WAIT_DEF(5), SB_GPU_WAIT_DEF(6), SB_GPU_WAIT_DEF(7)
/* clang-format on */

/* The summary of n ranks (2..SB_MAX_GPUS) over `steps` steps; `straggler` is a rank. */
void sb_rank_summarize(const sb_rank_time *t, int n, int straggler, long long steps,
                       sb_rank_summary *out);
/* Records step_us, fast_wait_us, straggler_wait_us, wait_gpu<g>_us for g < n and
 * syncs_per_step. */
void sb_rank_record(sb_recorder *rec, const sb_rank_summary *s, int n);

#endif
