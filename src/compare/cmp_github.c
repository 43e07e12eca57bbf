/* compare under GitHub Actions: an annotation per REGRESSION row (rows have no file: they show
 * on the run's page), titled by scenario, variant and metric; the rows in words, which the
 * JUnit report (cmp_junit.c) shares. The step summary is compare's Markdown table
 * (compare.c), appended by sinks/github.c. */
#include "compare/outputs.h"

#include <math.h>
#include <stdlib.h>

#include "base/error.h"
#include "base/textutil.h"
#include "sinks/github.h"

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

/* One annotation: the row in words and, for a row without a verdict, why. */
static int annotate_row(FILE *f, const sb_compare_request *req, const sb_cmp_line *l)
{
    const sb_cmp_row *k = l->base ? l->base : l->cur;
    sb_memtext m;
    char *msg = NULL, *title = NULL;
    if (!sb_memtext_open(&m))
        return sb_fail(SB_EXIT_FAIL, "compare: out of memory");
    sb_compare_row_text(m.f, req, l);
    const char *why = sb_compare_no_verdict(l->v);
    if (why)
        fprintf(m.f, "\n%s", why);
    int rc = !(msg = sb_memtext_close(&m)) || asprintf(&title, "syncbench compare: %s %s %s",
                                                       k->scenario, k->variant, k->metric) < 0;
    if (rc) {
        title = NULL;
    } else {
        int fails = l->v == SB_REGRESSION || req->strict;
        sb_gh_annotate(f, fails ? "error" : "warning", NULL, 0, title, msg);
    }
    free(title);
    free(msg);
    return rc ? sb_fail(SB_EXIT_FAIL, "compare: out of memory") : 0;
}

int sb_compare_annotate(FILE *f, const sb_compare_request *req, const sb_cmp_line *l, size_t n)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++)
        if (l[i].v == SB_REGRESSION || l[i].v == SB_INCONCLUSIVE)
            rc = annotate_row(f, req, &l[i]);
    return rc;
}
