/* compare's rows as JUnit XML (sinks/junit.h): one testcase a compared row, its classname the
 * scenario and its name the variant, params and metric, so that a CI tool tracks each row from
 * run to run. */
#include "compare/outputs.h"

#include <stdlib.h>

#include "base/error.h"
#include "base/textutil.h"
#include "sinks/junit.h"

/* The texts one case points to. */
typedef struct {
    char *name, *message, *detail;
} case_text;

/* ROW: the row in words (a failure's message); SKIP: why it has no verdict (a skip's
 * message); BODY: what GitLab shows, the row, the reason, the statistics and the files. */
enum { ROW, SKIP, BODY };

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
    else if (which == SKIP)
        fprintf(f, "%s: %s", sb_verdict_name(l->v), why);
    else
        fprintf(f, "%s\n%s%s%s\nbaseline: %s\ncurrent: %s\n", row, why ? why : "", why ? "\n" : "",
                rule, req->baseline, req->current);
    return sb_memtext_close(&m);
}

static int row_case(const sb_compare_request *req, const sb_cmp_line *l, const char *rule,
                    sb_junit_case *c, case_text *t)
{
    const sb_cmp_row *k = l->base ? l->base : l->cur;
    int fails = l->v == SB_REGRESSION || (l->v == SB_INCONCLUSIVE && req->strict);
    int skips = !fails && sb_compare_no_verdict(l->v);
    char *row = text_of(req, l, rule, ROW, NULL);
    t->message = skips && row ? text_of(req, l, rule, SKIP, NULL) : row;
    t->detail = row ? text_of(req, l, rule, BODY, row) : NULL;
    if (skips)
        free(row);
    if (!t->message || !t->detail ||
        asprintf(&t->name, "%s %s %s", k->variant, k->params, k->metric) < 0) {
        t->name = NULL;
        return -1;
    }
    *c = (sb_junit_case){k->scenario,
                         t->name,
                         fails   ? SB_JUNIT_FAILED
                         : skips ? SB_JUNIT_SKIPPED
                                 : SB_JUNIT_PASSED,
                         sb_verdict_name(l->v),
                         t->message,
                         fails || skips ? t->detail : t->message,
                         0};
    return 0;
}

int sb_compare_write_junit(FILE *f, const sb_compare_request *req, const sb_cmp_line *l, size_t n,
                           const char *rule)
{
    sb_junit_case *cases = calloc(n ? n : 1, sizeof *cases);
    case_text *texts = calloc(n ? n : 1, sizeof *texts);
    int rc = !cases || !texts;
    for (size_t i = 0; !rc && i < n; i++)
        rc = row_case(req, &l[i], rule, &cases[i], &texts[i]);
    if (rc)
        rc = sb_fail(SB_EXIT_FAIL, "compare: out of memory writing the JUnit report");
    else
        rc = sb_junit_write(f, "syncbench compare", cases, n, 0);
    for (size_t i = 0; texts && i < n; i++) {
        free(texts[i].name);
        free(texts[i].message);
        free(texts[i].detail);
    }
    free(texts);
    free(cases);
    return rc;
}
