/* A compared row in words, for a person reading CI (compare/outputs.h), and the threshold that
 * judged it: what compare's table and its CI verdicts (row_verdicts.c: the annotations and
 * the JUnit report) all say of a row. */
#include "compare/outputs.h"

#include <math.h>
#include <string.h>

#include "base/textutil.h"

double sb_compare_threshold(const sb_compare_request *req, const char *metric)
{
    for (int i = 0; i < req->n_threshold_for; i++)
        if (!strcmp(req->threshold_for[i], metric))
            return req->threshold_for_pct[i];
    return req->opts.threshold_pct;
}

const char *sb_compare_no_verdict(sb_verdict v)
{
    switch (v) {
    case SB_INCONCLUSIVE:
        return "the samples neither show nor exclude a change of the threshold's size: measure "
               "again with more repetitions (syncbench --min-reps N)";
    case SB_NO_BASELINE:
        return "the baseline is at or near zero: there is no relative change to judge";
    case SB_NEW:
        return "only in the current run: nothing to compare with";
    case SB_MISSING:
        return "only in the baseline: not measured in the current run";
    default:
        return NULL;
    }
}

/* "kernel_us 99.87 -> 110 us, +10.18 % (99 % CI [+9.85, +10.81] %, threshold 5 %)" */
static void change_text(FILE *f, const sb_compare_request *req, const sb_cmp_line *l)
{
    const sb_cmp_row *k = l->base ? l->base : l->cur;
    const char *space = k->unit[0] ? " " : "";
    char b[64], c[64];
    if (!l->base || !l->cur) {
        sb_format_figure(k->median, b, sizeof b);
        fprintf(f, "%s %s%s%s", k->metric, b, space, k->unit);
        return;
    }
    sb_format_figure(l->base->median, b, sizeof b);
    sb_format_figure(l->cur->median, c, sizeof c);
    fprintf(f, "%s %s -> %s%s%s", k->metric, b, c, space, k->unit);
    if (l->rule == SB_RULE_ZERO)
        return;
    if (isfinite(l->change))
        fprintf(f, ", %+.2f %%", l->change);
    double t = sb_compare_threshold(req, k->metric);
    if (l->rule == SB_RULE_SAMPLES)
        fprintf(f, " (%g %% CI [%+.2f, %+.2f] %%, threshold %g %%)", req->confidence_pct, l->lo,
                l->hi, t);
    else
        fprintf(f, " (noise band %.2f %%, threshold %g %%)", l->noise, t);
}

void sb_compare_row_text(FILE *f, const sb_compare_request *req, const sb_cmp_line *l)
{
    const sb_cmp_row *k = l->base ? l->base : l->cur;
    fprintf(f, "%s: ", sb_verdict_name(l->v));
    change_text(f, req, l);
    fprintf(f, "; params %s", k->params[0] ? k->params : "(none)");
}
