/* The audit's reports, each a writer behind one interface (sb_report_writers: the way
 * sinks/ serves run), the table on stderr, and the gate's verdict. */
#ifndef SB_REPORT_H
#define SB_REPORT_H

#include <stdio.h>

#include "analyze/analyze.h"
#include "base/env.h"

/* The reports. table: the human report (per process and summed); csv: tidy, one row per
 * process x class x range x site; json: the environment record, the per-process summary, the
 * rows and the gate; trace: Chrome trace event format (Perfetto, chrome://tracing). */
int sb_audit_write_table(FILE *f, const sb_audit_run *run, const sb_audit_opts *o);
int sb_audit_write_csv(FILE *f, const sb_audit_run *run);
int sb_audit_write_json(FILE *f, const sb_audit_run *run, const sb_audit_opts *o,
                        const sb_env *env);
int sb_audit_write_trace(FILE *f, const sb_audit_run *run);

/* The gate: 0 when it passes (or there is none), 1 when more than max_syncs blocking calls
 * were made (in the whole run, or in some instance of --range). Writes the verdict and the
 * offending sites to `msg` (NULL: writes nothing). */
int sb_audit_gate(const sb_audit_run *run, const sb_audit_opts *o, FILE *msg);

/* The file writers by option name ("csv", "json", "trace"), NULL-terminated: the one interface
 * cmd/audit.c writes every --OPTION PATH through. */
typedef struct sb_report_writer {
    const char *name;
    int (*write)(FILE *f, const sb_audit_run *run, const sb_audit_opts *o, const sb_env *env);
} sb_report_writer;
extern const sb_report_writer sb_report_writers[];

/* ---- shared by the writers ----*/
void sb_audit_json_str(FILE *f, const char *s); /* a JSON string literal (out_trace.c) */

#endif
