/* When to stop repeating a measurement, as a pluggable criterion (nvbench's stopping
 * criteria): the engine feeds it the primary metric of each repetition and asks whether it is
 * done. One criterion today, "cv": at least min_reps, then stop once the running cv is under
 * target_cv or max_time is spent; never more than max_reps. */
#ifndef SB_STOPPING_H
#define SB_STOPPING_H

#include "suite/run_spec.h"

typedef struct sb_stopping {
    const sb_measure_opts *m;
    double t0_us; /* when the measured repetitions started */
    int n;        /* repetitions so far */
    double mean, m2;
} sb_stopping;

typedef struct sb_stopping_ops {
    const char *name;
    void (*start)(sb_stopping *s, const sb_measure_opts *m);
    void (*add)(sb_stopping *s, double primary);
    int (*done)(const sb_stopping *s);
} sb_stopping_ops;

extern const sb_stopping_ops sb_stop_by_cv;

/* The running cv of what was added, in percent (infinite below 2 samples or at mean 0). */
double sb_stopping_cv(const sb_stopping *s);

#endif
