/* compare under GitHub Actions: an annotation per REGRESSION row (rows have no file: they show
 * on the run's page), titled by scenario, variant and metric, its message the row in words
 * (row_text.c). The step summary is compare's Markdown table
 * (compare.c), appended by sinks/github.c. */
#include "compare/outputs.h"

#include <stdlib.h>

#include "base/error.h"
#include "base/textutil.h"
#include "sinks/github.h"

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
