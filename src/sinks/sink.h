/* Sinks: where rows go. One interface for the table, the CSV, the JSON and the Markdown, in the
 * style of fio's engines: a struct of function pointers per sink. A run prepares every sink
 * before any GPU work (bad paths are exit 2 with nothing measured), opens them once the GPU is
 * known (for {gpu} in file names), hands each row over as soon as it is measured (a file sink
 * writes and flushes it to PATH.partial before the next measurement starts), and commits at
 * the end (PATH.partial renamed onto PATH) or aborts (nothing left behind). Sinks never touch
 * CUDA, and draw everything from the rows and the environment record alone. */
#ifndef SB_SINK_H
#define SB_SINK_H

#include <stdio.h>

#include "base/env.h"
#include "engine/results.h"
#include "sinks/outfile.h"

typedef struct sb_sink sb_sink;

typedef struct sb_sink_ops {
    const char *name; /* "csv": the option without its dashes, for messages */
    /* The output is open and the environment known: write a header. May be NULL. */
    int (*begin)(sb_sink *s, const sb_env *env);
    /* One finished row. The sink copies what it keeps. */
    int (*row)(sb_sink *s, const sb_env *env, const sb_row *row);
    /* The rows of one measurement are all in: make them durable (fflush). May be NULL. */
    int (*flush)(sb_sink *s, const sb_env *env);
    /* The run is over: write a trailer (the table, the JSON's closing brackets). May be NULL. */
    int (*end)(sb_sink *s, const sb_env *env);
    void (*destroy)(sb_sink *s); /* frees what the sink kept; may be NULL */
} sb_sink_ops;

struct sb_sink {
    const sb_sink_ops *ops;
    sb_out_file out; /* the file (or stdout) it writes */
    void *state;     /* the sink's own */
    int rc;          /* the sink's first error: it takes no more rows and is not committed */
};

/* The sinks of one run. */
#define SB_MAX_SINKS 8
typedef struct sb_sinks {
    sb_sink s[SB_MAX_SINKS];
    int n;
} sb_sinks;

/* csv: the header at begin, each row as it comes. json: the document's head at begin, each row
 * as it comes, the closing brackets at end (the result is the same bytes as one json_dumpf of
 * the whole document). markdown: keeps the rows and redraws its partial file at every flush
 * (a write-through target is drawn once, at end). table: keeps the rows, prints at end. */
extern const sb_sink_ops sb_csv_sink, sb_json_sink, sb_markdown_sink, sb_table_sink,
    sb_samples_sink;
/* The history dashboards' (sinks/dashboards.c), written at end from the kept rows:
 * github-benchmark: github-action-benchmark's customSmallerIsBetter array, the rows whose better
 * is lower; bmf: Bencher Metric Format, every row (value: median, lower/upper: p05/p95). */
extern const sb_sink_ops sb_github_benchmark_sink, sb_bmf_sink;

/* Before any GPU work: checks the path (sb_out_prepare) and adds the sink. PATH "-" is stdout.
 * Exit 2 with one line for a path that cannot be written, the same path twice, or a path that
 * is also one of `inputs` (NULL-terminated, may be NULL). */
int sb_sinks_add(sb_sinks *all, const sb_sink_ops *ops, const char *opt, const char *path,
                 const char *const *inputs);
/* Once the environment (GPU name) is known: opens every output (PATH.partial, or the target
 * itself when it is not a regular file) and calls begin. Exit 2 if a file cannot be created. */
int sb_sinks_open(sb_sinks *all, const sb_env *env);
/* One finished row to every sink; then, once the rows of a measurement are all in, flush
 * (fflush: after SIGKILL, PATH.partial holds every flushed row). A sink that fails (exit 1,
 * e.g. ENOSPC) is dropped from the run: it takes no more rows and its partial file is removed
 * at commit. Both return the first error. */
int sb_sinks_row(sb_sinks *all, const sb_env *env, const sb_row *row);
int sb_sinks_flush(sb_sinks *all, const sb_env *env);
/* end + commit for every sink (also after a failed or interrupted run: what was measured is
 * kept). Returns the first error (exit 1 on a write error). */
int sb_sinks_commit(sb_sinks *all, const sb_env *env);
/* A run that measured nothing: removes every partial file. */
void sb_sinks_abort(sb_sinks *all);
/* Frees what the sinks kept; an output still open (neither committed nor aborted) is aborted. */
void sb_sinks_free(sb_sinks *all);

/* ---- pieces the sinks share, also used by tests ---- */
extern const char *const sb_csv_columns[];     /* NULL-terminated, in order */
extern const char *const sb_samples_columns[]; /* --samples */
void sb_csv_write_field(FILE *f, const char *s);
void sb_csv_write_header(FILE *f);
void sb_csv_write_row(FILE *f, const sb_env *env, const sb_row *r);
/* The aligned table (markdown = 0) or GitHub-flavoured Markdown table of `res`, one block per
 * scenario in order of appearance, drawn from the rows alone. */
void sb_table_print(FILE *f, const sb_results *res, int markdown);
/* begin, row and destroy of a sink that keeps a copy of the rows (an sb_results in state), and
 * the three as the members of its sb_sink_ops */
int sb_sink_keep_begin(sb_sink *s, const sb_env *env);
int sb_sink_keep_row(sb_sink *s, const sb_env *env, const sb_row *row);
void sb_sink_keep_destroy(sb_sink *s);
#define SB_SINK_KEEPS_ROWS                                                                         \
    .begin = sb_sink_keep_begin, .row = sb_sink_keep_row, .destroy = sb_sink_keep_destroy

#endif
