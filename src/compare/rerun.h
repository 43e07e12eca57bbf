/* `syncbench compare --rerun PATH`: a suite (INI, the format of the files in configs/) that
 * measures again the rows a comparison could not pass: one section per measurement (scenario,
 * params) with a REGRESSION or inconclusive row, listing those rows' variants (one section per
 * variant would plan a sync variant's reference twice, which a suite refuses), with its
 * parameters from the params column ("k=v;k=v"), its iterations from the iters column, and
 * more repetitions. `make perf-check`
 * runs it and decides on that run (compare --subset), so one noisy moment on a shared runner is
 * not a failed build while a slowdown that is still there is. */
#ifndef SB_RERUN_H
#define SB_RERUN_H

#include <stddef.h>
#include <stdio.h>

#include "compare/row.h"
#include "compare/verdict.h"

#define SB_RERUN_MAX_SECTIONS 256 /* the suite loader's limit (suite/config.c) */
#define SB_RERUN_MAX_TIME 3       /* max_time of each section, seconds */

/* One row to confirm: the current run's row and its verdict. */
typedef struct sb_rerun_item {
    const sb_cmp_row *row;
    sb_verdict verdict;
    double change_pct; /* NaN: none */
} sb_rerun_item;

typedef struct sb_rerun_opts {
    long long min_reps;             /* --rerun-reps: min_reps of each section (max_reps: 10 x) */
    const char *baseline, *current; /* the compared files: in the comments and messages */
} sb_rerun_opts;

/* Writes the suite to f, sections in the order of their first item, each after one comment
 * line per item ("; confirm: SCENARIO VARIANT PARAMS METRIC: VERDICT CHANGE"); with no items,
 * a comment saying there is nothing to confirm. Every line fits the suite loader (under 200 bytes).
 * 0, or SB_EXIT_USAGE with one line ("compare: --rerun: ...") when a row's scenario, variant or
 * params cannot be written as suite keys (blanks, ',', ';', '=', '[', control characters: a
 * damaged CSV) or there are more than SB_RERUN_MAX_SECTIONS measurements; nothing is written
 * then. SB_EXIT_FAIL when out of memory. *sections: how many were written. */
int sb_rerun_write(FILE *f, const sb_rerun_item *items, size_t n, const sb_rerun_opts *o,
                   int *sections);

#endif
