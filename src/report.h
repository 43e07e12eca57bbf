/* Sinks: they turn rows into text and never touch CUDA. */
#ifndef SB_REPORT_H
#define SB_REPORT_H

#include <stdio.h>

#include "env.h"
#include "results.h"

/* Aligned table on f: one block per scenario, one line per (variant, params), the medians of
 * the metrics the scenario labels for the table, then the cv of its primary metric. */
void sb_report_table(FILE *f, const sb_results *res);

/* ---- CSV (DESIGN.md schema, RFC 4180 quoting, LF line ends) ---- */
extern const char *const sb_csv_columns[]; /* NULL-terminated, in order */

void sb_csv_write_field(FILE *f, const char *s);
void sb_csv_write_header(FILE *f);
void sb_csv_write_row(FILE *f, const sb_env *env, const sb_row *r);

/* The CSV file is written to a temporary name next to `path` and renamed when complete, so an
 * interrupted run never leaves a truncated file. "-" writes to stdout. */
typedef struct sb_csv_file {
    char path[4096];
    char tmp[4200];
    FILE *f;
    int to_stdout;
} sb_csv_file;

int sb_csv_open(sb_csv_file *c, const char *path); /* exit 2 if it cannot be created */
int sb_csv_commit(sb_csv_file *c, const sb_env *env, const sb_results *res);
void sb_csv_discard(sb_csv_file *c);

#endif
