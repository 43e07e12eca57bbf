/* compare's rows as CI verdicts (sinks/verdicts.h): a testcase per compared row, its classname
 * the scenario and its name the variant, params and metric, so that a CI tool tracks each row
 * from run to run; a REGRESSION row (and an inconclusive one with --strict) fails, a row without
 * a verdict is skipped with the reason, the rest pass. A REGRESSION or inconclusive row is an
 * annotation too, without a file (a row has no line to point at), titled by scenario, variant
 * and metric. The one JUnit writer and the one GitHub writer read the list. */
#include "compare/outputs.h"

#include <stdlib.h>

#include "base/error.h"
#include "base/textutil.h"

/* ROW: the row in words (the verdict's message); BODY: what GitLab shows, the row, the reason,
 * the statistics and the files. */
enum { ROW, BODY };

/* One of the texts, in memory; NULL out of memory. row: the ROW text, for the BODY. */
static char *text_of(const sb_compare_request *req, const sb_cmp_line *l, const char *rule,
                     int which, const char *row)
{
    sb_memtext m;
    FILE *f = sb_memtext_open(&m);
    if (!f)
        return NULL;
    const char *why = sb_compare_no_verdict(l->v);
    if (which == ROW)
        sb_compare_row_text(f, req, l);
    else
        fprintf(f, "%s\n%s%s%s\nbaseline: %s\ncurrent: %s\n", row, why ? why : "", why ? "\n" : "",
                rule, req->baseline, req->current);
    return sb_memtext_close(&m);
}

/* One row's entry: 0, or -1 out of memory. */
static int row_entry(sb_ci_verdicts *out, const sb_compare_request *req, const sb_cmp_line *l,
                     const char *rule)
{
    const sb_cmp_row *k = l->base ? l->base : l->cur;
    const char *why = sb_compare_no_verdict(l->v);
    int fails = l->v == SB_REGRESSION || (l->v == SB_INCONCLUSIVE && req->strict);
    int skips = !fails && why;
    int annotated = l->v == SB_REGRESSION || l->v == SB_INCONCLUSIVE;
    char *row = text_of(req, l, rule, ROW, NULL), *body = NULL, *name = NULL, *title = NULL;
    int rc = !row || ((fails || skips) && !(body = text_of(req, l, rule, BODY, row))) ||
             asprintf(&name, "%s %s %s", k->variant, k->params, k->metric) < 0 ||
             (annotated && asprintf(&title, "syncbench compare: %s %s %s", k->scenario, k->variant,
                                    k->metric) < 0);
    if (!rc) {
        sb_ci_verdict v = {.outcome = fails   ? SB_CI_FAILED
                                      : skips ? SB_CI_SKIPPED
                                              : SB_CI_PASSED,
                           .where = SB_CI_TESTCASE | (annotated ? SB_CI_ANNOTATION : 0),
                           .kind = sb_verdict_name(l->v),
                           .title = title,
                           .group = k->scenario,
                           .name = name,
                           .message = row,
                           .reason = why,
                           .detail = body ? body : row};
        rc = sb_ci_verdicts_add(out, &v);
    }
    free(title);
    free(name);
    free(body);
    free(row);
    return rc ? -1 : 0;
}

int sb_compare_verdicts(const sb_compare_request *req, const sb_cmp_line *l, size_t n,
                        const char *rule, sb_ci_verdicts *out)
{
    sb_ci_verdicts_init(out, "syncbench compare", 0);
    for (size_t i = 0; i < n; i++)
        if (row_entry(out, req, &l[i], rule) < 0) {
            sb_ci_verdicts_free(out);
            return sb_fail(SB_EXIT_FAIL, "compare: out of memory listing the verdicts");
        }
    return 0;
}
