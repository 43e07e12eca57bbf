#include "compare/verdict.h"

#include <math.h>

const char *sb_verdict_name(sb_verdict v)
{
    static const char *const names[SB_VERDICTS] = {
        "same", "faster", "slower", "REGRESSION", "inconclusive", "no-baseline", "new", "missing"};
    return (unsigned)v < SB_VERDICTS ? names[v] : "?";
}

int sb_near_zero(const sb_cmp_row *r)
{
    return fabs(r->median) <= r->stddev || r->median == 0;
}

sb_verdict sb_compare_rows(const sb_cmp_row *base, const sb_cmp_row *cur, const sb_compare_opts *o,
                           double *change_pct, double *noise_pct)
{
    double b = base->median, c = cur->median;
    double change;
    if (b != 0)
        change = 100.0 * (c - b) / fabs(b);
    else
        change = c == 0 ? 0.0 : NAN;
    double noise = o->noise_k * sqrt(base->cv * base->cv + cur->cv * cur->cv +
                                     o->run_noise_pct * o->run_noise_pct);
    *change_pct = change;
    *noise_pct = noise;
    if (sb_near_zero(base))
        return sb_near_zero(cur) ? SB_SAME : SB_NO_BASELINE;
    if (fabs(change) <= o->threshold_pct)
        return SB_SAME;
    int worse = base->better == SB_HIGHER ? change < 0 : change > 0;
    if (!worse)
        return SB_FASTER;
    return fabs(change) > noise ? SB_REGRESSION : SB_SLOWER;
}
