/* The audit's reports, each a writer of one signature (outputs/formats.h's sb_audit_write_fn:
 * the registry names the audit's writer of each format), the table on stderr, and the gate's
 * verdict. */
#ifndef SB_REPORT_H
#define SB_REPORT_H

#include <stdio.h>

#include "analyze/analyze.h"
#include "base/env.h"
#include "sinks/verdicts.h"

/* The reports. table: the human report (per process and summed); csv: tidy, one row per
 * process x class x range x site; json: the environment record, the per-process summary, the
 * rows and the gate; trace: Chrome trace event format (Perfetto, chrome://tracing). */
int sb_audit_write_table(FILE *f, const sb_audit_analysis *an, const sb_audit_opts *o);
int sb_audit_write_csv(FILE *f, const sb_audit_analysis *an);
int sb_audit_write_json(FILE *f, const sb_audit_analysis *an, const sb_audit_opts *o,
                        const sb_env *env);
int sb_audit_write_trace(FILE *f, const sb_audit_analysis *an);
/* --markdown: the rows of every process as one GitHub-flavoured Markdown table (pid, class,
 * site, calls, blocked ms, saving ms, operation, fix) under the command (out_markdown.c). */
int sb_audit_write_markdown(FILE *f, const sb_audit_analysis *an, const sb_audit_opts *o,
                            const sb_env *env);

/* The gate: 0 when it passes (or there is none), 1 when more than max_syncs blocking calls
 * were made (in the whole run, or in some instance of --range). Writes the verdict and the
 * offending sites to `msg` (NULL: writes nothing). */
int sb_audit_gate(const sb_audit_analysis *an, const sb_audit_opts *o, FILE *msg);
/* The same verdict and message as text (malloc'ed; NULL out of memory); *failed: the gate's
 * return. */
char *sb_audit_gate_text(const sb_audit_analysis *an, const sb_audit_opts *o, int *failed);

/* A site the gate counted against the limit: its class, how many calls, what made them. */
typedef struct sb_audit_offender {
    const char *site; /* interned */
    const char *via;  /* the line inside a library that made the calls, "" when none (interned) */
    sb_audit_class cls;
    long count;
    const sb_audit_rule *rule;  /* NULL: no rule knows it */
    const sb_audit_pyframe *py; /* the Python line; NULL: a native site */
    const sb_audit_made *made;  /* the operation and the fix, the library's where it made them */
    const char *baseline; /* --baseline: why the site fails it ("baseline: new site, ..."); NULL:
                             --max-syncs's */
} sb_audit_offender;
/* The sites of the blocking calls over the limit (with --range: of the instances over it), one
 * per site and class, most calls first; none when the count is within it (records cut short
 * fail the gate without a site). 0, or -1 out of memory; *sites is the caller's to free. */
int sb_audit_gate_offenders(const sb_audit_analysis *an, const sb_audit_opts *o,
                            sb_audit_offender **sites, size_t *n);
/* ---- gate_baseline.c: --baseline FILE ---- */
/* The verdict against o->baseline and the difference (new, over budget, changed, moved, gone
 * sites; the number per step, base vs now) to msg (NULL: nothing written). 1 failed, else 0. */
int sb_audit_gate_baseline(const sb_audit_analysis *an, const sb_audit_opts *o, FILE *msg);
/* The sites that fail the baseline (new, changed, over budget), each with its why. 0, or -1 out
 * of memory; *sites is the caller's to free. */
int sb_audit_baseline_offenders(const sb_audit_analysis *an, const sb_audit_opts *o,
                                sb_audit_offender **sites, size_t *n);
/* The JSON report's "baseline" object (null without --baseline); NULL and *oom = 1 out of
 * memory. */
struct json_t *sb_audit_baseline_json(const sb_audit_analysis *an, const sb_audit_opts *o,
                                      int *oom);

/* An offender in words, raw (the writer escapes): "N blocking calls (class): operation" and,
 * when a rule knows it, "\nfix: ... (priced by: syncbench --scenario S)". */
void sb_audit_offender_text(FILE *f, const sb_audit_offender *s);

/* The gate as CI verdicts (sinks/verdicts.h; report/gate_verdicts.c), the list *l initialized
 * here (the caller frees it): one testcase, the gate, named by its range (or the run's command),
 * failed with the verdict and the offending sites; when it fails, an annotation per offending
 * Python line (--top at most) with the count, the operation and the fix, and the gate's own
 * entry an annotation too when no line got one (a native site gets none). Without a gate, an
 * empty list. 0, or exit 1 out of memory. */
int sb_audit_gate_verdicts(const sb_audit_analysis *an, const sb_audit_opts *o, sb_ci_verdicts *l);
/* JUnit XML: the gate's verdicts through the one JUnit writer (sinks/junit.h). */
int sb_audit_write_junit(FILE *f, const sb_audit_analysis *an, const sb_audit_opts *o,
                         const sb_env *env);
/* The step summary's Markdown: the verdict, the offending sites as a table, the audit's table
 * (report/out_summary.c). */
int sb_audit_write_summary(FILE *f, const sb_audit_analysis *an, const sb_audit_opts *o,
                           const sb_env *env);

/* ---- shared by the writers ----*/
/* The run's blocking calls that framework table row fw (analyze/frameworks.h) names: the counts
 * of every row whose made.fw is fw, summed (out_table.c). */
long sb_audit_fw_calls(const sb_audit_analysis *an, const struct sb_fw_row *fw);
/* The run's blocking calls in all, every process's (out_table.c). */
long sb_audit_run_blocking(const sb_audit_analysis *an);

#endif
