/* The audit's gate as CI verdicts (sinks/verdicts.h): one testcase, the gate, named by the range
 * it counts in (or the run's command), failed with the verdict and each offending site's
 * operation and fix; an annotation per offending Python line among the top sites, on that line
 * of the pull request's diff; and when no line got one, the gate's own entry is an annotation
 * too, without a file. The one JUnit writer and the one GitHub writer read the list. */
#include "report/report.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/textutil.h"
#include "sinks/github.h"
#include "sinks/junit.h"

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

/* An annotation per offending Python line among the top sites; 0, or -1 out of memory. */
static int site_entries(sb_ci_verdicts *l, const sb_audit_offender *sites, size_t n, int top,
                        const char *title, int *placed)
{
    for (size_t i = 0; i < n && (int)i < top; i++) {
        const sb_audit_pyframe *py = sites[i].py;
        if (!py) /* a native site: no line of the user's to put it on */
            continue;
        char rel[PATH_MAX];
        const char *file = sb_gh_repo_path(py->file, rel, sizeof rel);
        char *msg = site_message(&sites[i], !file);
        sb_ci_verdict v = {.outcome = SB_CI_FAILED,
                           .where = SB_CI_ANNOTATION,
                           .kind = "max-syncs",
                           .file = file,
                           .line = py->line,
                           .title = title,
                           .message = msg};
        int rc = !msg || sb_ci_verdicts_add(l, &v) < 0 ? -1 : 0;
        free(msg);
        if (rc)
            return -1;
        ++*placed;
    }
    return 0;
}

/* The gate's testcase body: the verdict, then each offending site (the gate's top) in words. */
static char *gate_detail(const char *verdict, const sb_audit_offender *s, size_t n, int top)
{
    sb_memtext m;
    if (!sb_memtext_open(&m))
        return NULL;
    fputs(verdict, m.f);
    for (size_t i = 0; i < n && (int)i < top; i++) {
        fprintf(m.f, "\n%s\n", s[i].site);
        sb_audit_offender_text(m.f, &s[i]);
        fputc('\n', m.f);
    }
    return sb_memtext_close(&m);
}

/* The gate's own entry: a testcase, and an annotation when it failed with no line to point
 * at. 0, or -1 out of memory. */
static int gate_entry(sb_ci_verdicts *l, const sb_audit_analysis *an, const sb_audit_opts *o,
                      char *verdict, int failed, const sb_audit_offender *sites, size_t n,
                      const char *title, int placed)
{
    const sb_audit_run *run = an->run;
    char *detail = gate_detail(verdict, sites, n, o->top), *name = NULL;
    if (!detail ||
        (o->range ? asprintf(&name, "range %s", o->range)
                  : asprintf(&name, "run %s", run->cmd[0] ? run->cmd : "(no command)")) < 0) {
        free(detail);
        return -1;
    }
    verdict[strcspn(verdict, "\n")] = '\0'; /* the message: the verdict's line */
    sb_ci_verdict v = {.outcome = failed ? SB_CI_FAILED : SB_CI_PASSED,
                       .where = SB_CI_TESTCASE | (failed && !placed ? SB_CI_ANNOTATION : 0),
                       .kind = "max-syncs",
                       .title = title,
                       .group = "syncbench audit",
                       .name = name,
                       .message = verdict,
                       .detail = detail,
                       .time_s = run->wall_s};
    int rc = sb_ci_verdicts_add(l, &v);
    free(name);
    free(detail);
    return rc;
}

int sb_audit_gate_verdicts(const sb_audit_analysis *an, const sb_audit_opts *o, sb_ci_verdicts *l)
{
    const sb_audit_run *run = an->run;
    sb_ci_verdicts_init(l, "syncbench audit", run->wall_s);
    if (o->max_syncs < 0 && !o->baseline) /* no gate: no verdict */
        return 0;
    int failed = 0, placed = 0, rc = 0;
    char *verdict = sb_audit_gate_text(an, o, &failed), *title = gate_title(o);
    sb_audit_offender *sites = NULL;
    size_t n = 0;
    if (!verdict || !title || sb_audit_gate_offenders(an, o, &sites, &n) < 0 ||
        (failed && site_entries(l, sites, n, o->top, title, &placed) < 0) ||
        gate_entry(l, an, o, verdict, failed, sites, n, title, placed) < 0)
        rc = sb_fail(SB_EXIT_FAIL, "out of memory listing the audit's verdicts");
    free(sites);
    free(title);
    free(verdict);
    if (rc)
        sb_ci_verdicts_free(l);
    return rc;
}

int sb_audit_write_junit(FILE *f, const sb_audit_analysis *an, const sb_audit_opts *o,
                         const sb_env *env)
{
    (void)env;
    sb_ci_verdicts l;
    int rc = sb_audit_gate_verdicts(an, o, &l);
    if (!rc) {
        rc = sb_junit_write(f, &l);
        sb_ci_verdicts_free(&l);
    }
    return rc;
}
