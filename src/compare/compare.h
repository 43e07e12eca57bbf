/* `syncbench compare BASELINE.csv CURRENT.csv`: the CI regression gate. Rows are matched on
 * (scenario, variant, params, metric); a change is a REGRESSION only when it is in the worse
 * direction (the CSV's `better`), beyond --threshold, and beyond the noise of both runs. */
#ifndef SB_COMPARE_H
#define SB_COMPARE_H

#include "engine/results.h"

typedef enum {
    SB_SAME,
    SB_FASTER, /* better beyond the threshold */
    SB_SLOWER, /* worse beyond the threshold, but within the noise */
    SB_REGRESSION,
    SB_NEW,     /* only in the current run */
    SB_MISSING, /* only in the baseline */
} sb_verdict;

typedef struct sb_compare_opts {
    double threshold_pct; /* default 5 */
    double noise_k;       /* default 3 */
    /* Spread between runs that a run's own cv cannot see (clocks, temperature, another
     * machine of the same kind), in percent; default 2. The noise band is
     * noise_k * sqrt(cv_base^2 + cv_current^2 + run_noise^2). */
    double run_noise_pct;
} sb_compare_opts;

/* change_pct: (current - base) / |base| in percent; noise_pct: the noise band in percent. */
sb_verdict sb_compare_rows(const sb_row *base, const sb_row *cur, const sb_compare_opts *o,
                           double *change_pct, double *noise_pct);
const char *sb_verdict_name(sb_verdict v);

/* The subcommand: argv[0] is "compare". Exit 0 no regression, 1 regression, 2 bad input. */
int sb_compare_main(int argc, char **argv);

#endif
