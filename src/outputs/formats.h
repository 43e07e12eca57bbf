/* The output registry: one row per output format, in the manner of hyperfine's Exporter and
 * nvbench's printer_multiplex. A row names the format, the option that asks for it (--OPTION
 * PATH, the same option in every command that has the format), whether it is a CI format, and
 * the writer for each kind of result: run's rows (a sink, sinks/sink.h), the audit's run
 * (report/report.h) and compare's verdicts (compare/outputs.h). NULL: that command has no such
 * output. Each command writes the formats it was asked for in the table's order, every file
 * checked once (sinks/outset.h), created as PATH.partial and renamed into place
 * (sinks/outfile.h). A command's option table keeps each option's --help text; the tests hold
 * the options and the rows to each other (tests/cli/test_outputs.py).
 *
 * A new format: its writer in one file (src/report/out_FORMAT.c for the audit, a sink in
 * src/sinks/ for run, ...), one row here, and its option in the command's table. */
#ifndef SB_OUTPUTS_FORMATS_H
#define SB_OUTPUTS_FORMATS_H

#include <stdio.h>

#include "analyze/analyze.h"
#include "base/env.h"
#include "compare/outputs.h"
#include "sinks/sink.h"

typedef int (*sb_audit_write_fn)(FILE *f, const sb_audit_analysis *an, const sb_audit_opts *o,
                                 const sb_env *env);

typedef struct sb_output_format {
    const char *name;            /* the format, for docs and messages: "CSV" */
    const char *option;          /* --OPTION PATH, without its dashes: "csv" */
    int ci;                      /* a CI format: it reads the verdicts (JUnit) */
    const sb_sink_ops *run;      /* run's sink; NULL: run has no such output */
    sb_audit_write_fn audit;     /* the audit's writer; NULL: none */
    sb_compare_write_fn compare; /* compare's writer (compare/compare.h); NULL: none */
} sb_output_format;

/* Every format, NULL-name terminated, in the order each command writes them. */
extern const sb_output_format sb_output_formats[];

/* The formats in all (SB_OUTPUT_FORMATS_MAX at most). */
#define SB_OUTPUT_FORMATS_MAX 16
int sb_output_formats_count(void);

#endif
