/* JUnit XML (sinks/junit.h): the audit's gate as one testcase, named by the range it counts in
 * (or the run's command), failed with the verdict and each offending site's operation and fix. */
#include "report/report.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/textutil.h"
#include "sinks/junit.h"

/* The failure's body: the verdict, then each offending site (the gate's top) in words. */
static char *failure_detail(const char *verdict, const sb_audit_offender *s, size_t n, int top)
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

int sb_audit_write_junit(FILE *f, const sb_audit_analysis *an, const sb_audit_opts *o,
                         const sb_env *env)
{
    const sb_audit_run *run = an->run;
    (void)env;
    int failed = 0, rc = 0;
    char *verdict = sb_audit_gate_text(run, o, &failed), *detail = NULL, *name = NULL;
    sb_audit_offender *sites = NULL;
    size_t n = 0;
    if (!verdict || sb_audit_gate_offenders(run, o, &sites, &n) < 0 ||
        !(detail = failure_detail(verdict, sites, n, o->top)) ||
        (o->range ? asprintf(&name, "range %s", o->range)
                  : asprintf(&name, "run %s", run->cmd[0] ? run->cmd : "(no command)")) < 0) {
        name = NULL;
        rc = sb_fail(SB_EXIT_FAIL, "out of memory writing the JUnit report");
    }
    if (!rc) {
        verdict[strcspn(verdict, "\n")] = '\0'; /* the message: the verdict's line */
        sb_junit_case c = {"syncbench audit", name,    failed ? SB_JUNIT_FAILED : SB_JUNIT_PASSED,
                           "max-syncs",       verdict, detail,
                           run->wall_s};
        rc = sb_junit_write(f, "syncbench audit", &c, 1, run->wall_s);
    }
    free(name);
    free(detail);
    free(sites);
    free(verdict);
    return rc;
}
