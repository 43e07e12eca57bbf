/* The measurement engine: for one plan entry, set the scenario up once, then for each variant
 * warm up, repeat until the primary metric's cv is under target or the time budget is spent
 * (with a minimum), validate, and turn the samples into rows. A variant with a reference is
 * measured in pairs with it, and its delta rows are the paired differences. */
#ifndef SB_MEASURE_H
#define SB_MEASURE_H

#include <signal.h>

#include "base/nvml.h"
#include "engine/stopping.h"
#include "base/recording_switch.h"
#include "suite/plan.h"
#include "engine/results.h"

/* Warm-up time per measurement when --warmup-time is not given (a scenario may ask for more
 * before the first variant of a plan entry). */
#define SB_DEFAULT_WARMUP_S 0.3

/* What holds for the whole run; each plan entry carries its own sb_measure_opts. */
typedef struct sb_measure_cfg {
    int device;
    int capture; /* bracket measured parts with cudaProfilerStart/Stop (off in unit tests) */
    /* SM clock and throttle reasons before and after each measurement; may be NULL */
    int (*sample_clocks)(int device, sb_clock_sample *out);
    /* called before each measurement (progress display); may be NULL */
    void (*on_start)(void *ctx, const sb_plan_entry *e, int variant);
    /* called with the rows of each finished measurement, before the next one starts (the
     * sinks write them out); a non-zero return stops the run with that code */
    int (*emit)(void *ctx, const sb_row *rows, int n);
    void *ctx;
    const sb_stopping_ops *stopping; /* NULL: sb_stop_by_cv */
    /* Recording turns (SYNCBENCH_RECORDING_TURNS=1 under `syncbench audit --gpu-activity`, for
     * the replay's validation; NULL: none): each counted repetition follows one with the
     * audit's recording switched on by this function, whose samples are not counted; the
     * counted ones run with it off. One process so gives the audit's records and the
     * unrecorded truth beside them. --max-time counts both; a scenario's helper processes are
     * not switched */
    sb_recording_fn recording;
} sb_measure_cfg;

/* Set by the SIGINT handler: the engine stops after the current measurement. */
extern volatile sig_atomic_t sb_stop_requested;

/* Measures every variant of one plan entry, emitting each one's rows as soon as it is done
 * (also when a later one fails). Returns 0, SB_EXIT_FAIL (error recorded), SB_EXIT_INTERRUPT,
 * or what emit returned. */
int sb_measure_entry(const sb_measure_cfg *cfg, const sb_plan_entry *e);

/* Paired per-repetition differences x - ref (abs) and in percent of ref (pct). */
void sb_deltas(const double *x, const double *ref, int n, double *abs, double *pct);

#endif
