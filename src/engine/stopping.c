#include "engine/stopping.h"

#include <math.h>

#include "base/clock.h"

static void cv_start(sb_stopping *s, const sb_measure_opts *m)
{
    *s = (sb_stopping){.m = m, .t0_us = sb_now_us()};
}

/* Welford's running mean and variance */
static void cv_add(sb_stopping *s, double x)
{
    s->n++;
    double d = x - s->mean;
    s->mean += d / s->n;
    s->m2 += d * (x - s->mean);
}

double sb_stopping_cv(const sb_stopping *s)
{
    if (s->n < 2 || s->mean == 0)
        return INFINITY;
    return 100.0 * sqrt(s->m2 / (s->n - 1)) / fabs(s->mean);
}

static int cv_done(const sb_stopping *s)
{
    if (s->n >= s->m->max_reps)
        return 1;
    return s->n >= s->m->min_reps && (sb_stopping_cv(s) < s->m->target_cv ||
                                      sb_now_us() - s->t0_us >= s->m->max_time_s * 1e6);
}

const sb_stopping_ops sb_stop_by_cv = {"cv", cv_start, cv_add, cv_done};
