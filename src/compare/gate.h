/* The regression gate's decision on raw samples: a percentile bootstrap confidence interval of
 * the relative change of the medians, read against the threshold as an equivalence test.
 *
 * Why a bootstrap CI of the ratio of medians rather than a Mann-Whitney U test: the gate's
 * question is about the size of a change ("slower by more than 5 %?"), and a U test answers
 * only whether the two samples differ at all; the CI gives the change and its uncertainty in
 * the metric's own terms, so one interval says regression, same, or "cannot tell" (it reaches
 * past the threshold without excluding zero). Medians resist the outliers a shared machine
 * produces, and the bootstrap assumes no distribution. Resampling uses a fixed seed, so the
 * same files always give the same verdict. */
#ifndef SB_GATE_H
#define SB_GATE_H

#include <stdint.h>

typedef enum {
    SB_GATE_SAME,         /* the interval lies within +-threshold */
    SB_GATE_FASTER,       /* significantly better, by more than the threshold */
    SB_GATE_SLOWER,       /* significantly worse, by less than the threshold */
    SB_GATE_REGRESSION,   /* significantly worse, by more than the threshold */
    SB_GATE_INCONCLUSIVE, /* not significant, but a change of the threshold's size is not
                             excluded either: too few repetitions or too much spread */
} sb_gate_verdict;

typedef struct sb_gate_opts {
    double threshold_pct;  /* smallest change that matters, e.g. 5 */
    double confidence_pct; /* of the interval, e.g. 99 */
    int resamples;         /* bootstrap resamples, e.g. 2000 */
    int min_samples;       /* fewer in either run: inconclusive */
    uint64_t seed;
} sb_gate_opts;

typedef struct sb_gate_result {
    sb_gate_verdict verdict;
    /* relative change of the median, current against base, in percent, with its interval;
     * positive means a larger value */
    double change_pct, lo_pct, hi_pct;
} sb_gate_result;

void sb_gate_defaults(sb_gate_opts *o);
/* higher_is_better: the metric's direction (the CSV's `better`). base and cur are not
 * modified. 0, or -1 when a median of the base is 0 (no relative change: the caller decides)
 * or memory runs out. */
int sb_gate_decide(const double *base, int nb, const double *cur, int nc, int higher_is_better,
                   const sb_gate_opts *o, sb_gate_result *out);
const char *sb_gate_verdict_name(sb_gate_verdict v);

#endif
