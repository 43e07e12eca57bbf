/* GitHub Actions (sinks/github.h): a failed gate's offending Python lines as annotations on the
 * pull request's diff, and the audit in the step summary. */
#include "report/report.h"

#include <limits.h>
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

/* Every annotation of the gate carries the same title: the gate and its range. */
static char *gate_title(const sb_audit_opts *o)
{
    char *title = NULL;
    if ((o->range ? asprintf(&title, "syncbench audit gate: range %s", o->range)
                  : asprintf(&title, "syncbench audit gate")) < 0)
        return NULL;
    return title;
}

/* The annotation's message; a site off the repository (no file to point at) names itself. */
static char *site_message(const sb_audit_offender *s, int name_site)
{
    sb_memtext m;
    if (!sb_memtext_open(&m))
        return NULL;
    if (name_site)
        fprintf(m.f, "%s: ", s->site);
    sb_audit_offender_text(m.f, s);
    return sb_memtext_close(&m);
}

/* One annotation per offending Python line among the top sites; 0, or -1 out of memory. */
static int annotate_sites(FILE *f, const sb_audit_offender *sites, size_t n, int top,
                          const char *title, int *placed)
{
    for (size_t i = 0; i < n && (int)i < top; i++) {
        const sb_audit_pyframe *py = sites[i].py;
        if (!py) /* a native site: no line of the user's to put it on */
            continue;
        char rel[PATH_MAX];
        const char *file = sb_gh_repo_path(py->file, rel, sizeof rel);
        char *msg = site_message(&sites[i], !file);
        if (!msg)
            return -1;
        sb_gh_annotate(f, "error", file, py->line, title, msg);
        free(msg);
        ++*placed;
    }
    return 0;
}

int sb_audit_write_annotations(FILE *f, const sb_audit_analysis *an, const sb_audit_opts *o,
                               const sb_env *env)
{
    const sb_audit_run *run = an->run;
    (void)env;
    int failed = 0, placed = 0, rc = 0;
    char *verdict = sb_audit_gate_text(run, o, &failed), *title = NULL;
    sb_audit_offender *sites = NULL;
    size_t n = 0;
    if (!verdict ||
        (failed && (!(title = gate_title(o)) || sb_audit_gate_offenders(run, o, &sites, &n) < 0 ||
                    annotate_sites(f, sites, n, o->top, title, &placed) < 0)))
        rc = sb_fail(SB_EXIT_FAIL, "out of memory writing the annotations");
    if (!rc && failed && !placed) { /* nothing on a line: the verdict on the run's page */
        verdict[strcspn(verdict, "\n")] = '\0';
        sb_gh_annotate(f, "error", NULL, 0, title, verdict);
    }
    free(sites);
    free(title);
    free(verdict);
    return written(f, rc, "annotations");
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
    int failed = 0, gated = o->max_syncs >= 0, rc = 0;
    char *verdict = sb_audit_gate_text(run, o, &failed), *table = audit_table(an, o);
    sb_audit_offender *sites = NULL;
    size_t n = 0;
    if (!verdict || !table || sb_audit_gate_offenders(run, o, &sites, &n) < 0)
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
