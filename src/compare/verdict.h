/* The verdict on one row. Two rules give it: on samples (both runs' repetitions), the bootstrap
 * CI of compare/gate.h; without them, the summary rule here: a change is a REGRESSION only when
 * it is in the worse direction (the CSV's `better`), beyond --threshold, and beyond the noise of
 * both runs. */
#ifndef SB_VERDICT_H
#define SB_VERDICT_H

#include "compare/row.h"

typedef enum {
    SB_SAME,
    SB_FASTER, /* better beyond the threshold */
    SB_SLOWER, /* worse beyond the threshold, but within the noise */
    SB_REGRESSION,
    SB_INCONCLUSIVE, /* samples only: a change of the threshold's size is neither shown nor
                        excluded (too few repetitions, too much spread); never `same` */
    SB_NO_BASELINE,  /* the baseline is at or near zero, the current is not: no relative change */
    SB_NEW,          /* only in the current run */
    SB_MISSING,      /* only in the baseline */
    SB_VERDICTS
} sb_verdict;

typedef struct sb_compare_opts {
    double threshold_pct; /* default 5 */
    double noise_k;       /* default 3 */
    /* Spread between runs that a run's own cv cannot see (clocks, temperature, another
     * machine of the same kind), in percent; default 2. The noise band is
     * noise_k * sqrt(cv_base^2 + cv_current^2 + run_noise^2). */
    double run_noise_pct;
} sb_compare_opts;

/* Whether a row's median is at or near zero: |median| <= its stddev (0 always is). Its sign is
 * within its own noise, so a change relative to it means nothing. */
int sb_near_zero(const sb_cmp_row *r);

/* The verdict of a row present in both files. A baseline at or near zero (sb_near_zero) gives
 * `same` when the current is at or near zero too, else `no-baseline`; never a REGRESSION.
 * Otherwise: `same` within the threshold, `faster`, or `slower`/REGRESSION by the noise band.
 * change_pct: (current - base) / |base| in percent; 0 when both are 0, NaN when only the base
 * is 0. noise_pct: the noise band in percent. */
sb_verdict sb_compare_rows(const sb_cmp_row *base, const sb_cmp_row *cur, const sb_compare_opts *o,
                           double *change_pct, double *noise_pct);
/* "same", ..., "REGRESSION", "inconclusive", "no-baseline", "new", "missing". */
const char *sb_verdict_name(sb_verdict v);

#endif
