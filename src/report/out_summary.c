/* The audit in GitHub's step summary (sinks/github.h appends it): the verdict, the offending
 * sites as a table, the audit's own report folded. The annotations are verdicts
 * (report/gate_verdicts.c). */
#include "report/report.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/textutil.h"
#include "sinks/github.h"
#include "sinks/grid.h"

/* rc, or exit 1 when a write to f failed. */
static int written(FILE *f, int rc, const char *what)
{
    if (!rc && ferror(f))
        return sb_fail(SB_EXIT_FAIL, "audit %s: write error", what);
    return rc;
}

/* The offending sites as a Markdown table: count, class, site, what, fix. */
static int sites_table(FILE *f, const sb_audit_offender *s, size_t n, int top)
{
    static const char *const heads[] = {"count", "class", "site", "what", "fix"};
    static const int right[] = {1, 0, 0, 0, 0};
    size_t rows = n < (size_t)top ? n : (size_t)top;
    const char **cells = calloc(rows * 5 + 1, sizeof *cells);
    char(*counts)[24] = calloc(rows + 1, sizeof *counts);
    if (!cells || !counts) {
        free(cells);
        free(counts);
        return -1;
    }
    for (size_t i = 0; i < rows; i++) {
        snprintf(counts[i], sizeof counts[i], "%ld", s[i].count);
        const char *row[] = {counts[i], sb_audit_class_name(s[i].cls), s[i].site,
                             s[i].made->op ? s[i].made->op : "unknown operation",
                             s[i].made->fix && s[i].made->fix[0] ? s[i].made->fix : "-"};
        memcpy(cells + i * 5, row, sizeof row);
    }
    sb_grid g = {5, (int)rows, heads, right, cells};
    sb_grid_print(f, &g, 1);
    free(cells);
    free(counts);
    return 0;
}

/* The audit's own table (stderr's), as text. */
static char *audit_table(const sb_audit_analysis *an, const sb_audit_opts *o)
{
    sb_memtext m;
    if (!sb_memtext_open(&m))
        return NULL;
    int rc = sb_audit_write_table(m.f, an, o);
    char *text = sb_memtext_close(&m);
    if (rc) {
        free(text);
        return NULL;
    }
    return text;
}

int sb_audit_write_summary(FILE *f, const sb_audit_analysis *an, const sb_audit_opts *o,
                           const sb_env *env)
{
    const sb_audit_run *run = an->run;
    (void)env;
    int failed = 0, gated = o->max_syncs >= 0 || o->baseline, rc = 0;
    char *verdict = sb_audit_gate_text(an, o, &failed), *table = audit_table(an, o);
    sb_audit_offender *sites = NULL;
    size_t n = 0;
    if (!verdict || !table || sb_audit_gate_offenders(an, o, &sites, &n) < 0)
        rc = sb_fail(SB_EXIT_FAIL, "out of memory writing the step summary");
    if (!rc) {
        fprintf(f, "### syncbench audit%s\n\n`", !gated ? "" : failed ? ": FAILED" : ": passed");
        sb_md_text(f, run->cmd[0] ? run->cmd : "(no command recorded)");
        fputs("`\n\n", f);
        if (gated)
            sb_md_code_block(f, "text", verdict);
        if (n && (fputc('\n', f), sites_table(f, sites, n, o->top) < 0))
            rc = sb_fail(SB_EXIT_FAIL, "out of memory writing the step summary");
    }
    if (!rc) {
        fputs(gated ? "\n<details><summary>The audit's report</summary>\n\n" : "", f);
        sb_md_code_block(f, "text", table);
        fputs(gated ? "\n</details>\n" : "", f);
    }
    free(sites);
    free(table);
    free(verdict);
    return written(f, rc, "step summary");
}
