/* `syncbench compare BASELINE.csv CURRENT.csv`: the CI regression gate. The command line is
 * parsed by cli/compare_args.c into an sb_compare_request; this runs it: read both files and,
 * when both runs have one, their samples files (compare/csv_read.c), match their rows
 * (compare/match.c), give each a verdict (on samples: compare/gate.c; without: the summary rule
 * of compare/verdict.c), print the table and the summary, write the Markdown and the rerun
 * suite (compare/rerun.c), the JUnit XML and, under GitHub Actions, the annotations and the step
 * summary (compare/outputs.h). */
#ifndef SB_COMPARE_H
#define SB_COMPARE_H

#include <stdio.h>

#include "compare/verdict.h"

#define SB_COMPARE_MAX_METRICS 64

/* A comparison done, as its writers read it (compare.c; the writers: compare/outputs.h). */
typedef struct sb_compare_result sb_compare_result;
/* One output format's writer for compare (outputs/formats.h): 0, or the exit code. */
typedef int (*sb_compare_write_fn)(FILE *f, sb_compare_result *r);
/* An output asked for: --OPT PATH and the writer of its format. */
typedef struct sb_compare_output {
    const char *opt, *path;
    sb_compare_write_fn write;
} sb_compare_output;
#define SB_COMPARE_MAX_OUTPUTS 16

typedef struct sb_compare_request {
    sb_compare_opts opts;
    const char *baseline, *current; /* paths */
    /* --metric: the list as given, and its names (pointing into metric_buf); n_metrics 0:
     * every metric */
    const char *metric_arg;
    const char *metrics[SB_COMPARE_MAX_METRICS];
    int n_metrics;
    char metric_buf[1024];
    const char *markdown; /* --markdown PATH, or NULL */
    const char *verdicts; /* --verdicts PATH: the verdicts as CSV, or NULL */
    const char *junit;    /* --junit PATH: a testcase per row as JUnit XML, or NULL */
    const char *ci;       /* --ci github|none; NULL: github under GITHUB_ACTIONS=true */
    /* --threshold-for METRIC=PCT[,...]: a metric's own threshold (e.g. PCIe bandwidth, which
     * moves more between machines than a kernel's time) */
    const char *threshold_for[SB_COMPARE_MAX_METRICS];
    double threshold_for_pct[SB_COMPARE_MAX_METRICS];
    int n_threshold_for;
    char threshold_for_buf[1024];
    int threshold_given; /* --threshold was given (once only; its store is custom: 5% or 5) */
    /* the samples' interval: its confidence in percent (--confidence, default 99) */
    double confidence_pct;
    /* --base-samples, --current-samples: the samples files, NULL: X.samples.csv beside X.csv
     * when there is one */
    const char *base_samples, *current_samples;
    const char *rerun;    /* --rerun PATH: the confirmation suite, or NULL */
    long long rerun_reps; /* --rerun-reps: its min_reps (default 30) */
    int subset;           /* --subset: only the rows CURRENT has (no `missing`) */
    int strict;           /* --strict: an inconclusive row fails the gate */
    int quiet;
    int help;
    /* the files asked for, in the registry's order (cli/compare_args.c fills it from the
     * options and outputs/formats.h's rows); compare.c checks, writes and commits each */
    sb_compare_output outputs[SB_COMPARE_MAX_OUTPUTS];
    int n_outputs;
} sb_compare_request;

/* Defaults: threshold 5 %, noise-k 3, run noise 2 %, confidence 99 %, rerun reps 30, every
 * metric, no Markdown, samples beside the CSVs. */
void sb_compare_request_defaults(sb_compare_request *req);

/* Exit 0 no regression, 1 regression (or, with strict, an inconclusive row), 2 bad input. */
int sb_compare_run(const sb_compare_request *req);
/* The threshold for a metric: its --threshold-for, else --threshold. */
double sb_compare_threshold(const sb_compare_request *req, const char *metric);

#endif
