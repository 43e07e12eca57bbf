/* Sinks: they turn rows into text and never touch CUDA. */
#ifndef SB_REPORT_H
#define SB_REPORT_H

#include <stdio.h>

#include "base/env.h"
#include "sinks/outfile.h"
#include "engine/results.h"

/* Aligned table on f: one block per scenario, one line per (variant, params), the medians of
 * the metrics the scenario labels for the table, then the cv of its primary metric. */
void sb_report_table(FILE *f, const sb_results *res);

/* ---- CSV (DESIGN.md schema, RFC 4180 quoting, LF line ends) ---- */
extern const char *const sb_csv_columns[]; /* NULL-terminated, in order */

void sb_csv_write_field(FILE *f, const char *s);
void sb_csv_write_header(FILE *f);
void sb_csv_write_row(FILE *f, const sb_env *env, const sb_row *r);

/* Header and every row into an opened output file, then commit it. */
int sb_csv_commit(sb_out_file *o, const sb_env *env, const sb_results *res);

/* ---- JSON (jansson): every row plus the environment record ---- */
int sb_json_commit(sb_out_file *o, const sb_env *env, const sb_results *res);

/* ---- GitHub-flavoured Markdown: the table, for CI job summaries ---- */
void sb_report_markdown(FILE *f, const sb_env *env, const sb_results *res);
int sb_markdown_commit(sb_out_file *o, const sb_env *env, const sb_results *res);

#endif
