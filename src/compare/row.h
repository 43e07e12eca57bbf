/* What compare reads of one CSV row: about 120 bytes, strings held by a shared sb_strpool, so
 * two files of a million rows each fit in a few hundred MB (an engine sb_row is ~600 bytes of
 * fixed arrays). A row's repetitions, read from the samples file beside the CSV
 * (compare/csv_read.h: sb_samples_read), are held by its table, one array for all rows. */
#ifndef SB_COMPARE_ROW_H
#define SB_COMPARE_ROW_H

#include <stddef.h>
#include <stdint.h>

#include "scenarios/scenario.h"

typedef struct sb_cmp_row {
    /* the key: interned, so equal keys have equal pointers */
    const char *scenario, *variant, *params, *metric;
    const char *unit, *flags, *run_id; /* interned; "" when the column is absent */
    /* the row's repetitions from the samples file (in file order), NULL and 0 when none */
    const double *samples;
    int n_samples;
    double median, mean, stddev, cv;
    long line; /* physical line of the file the row starts on */
    int reps;  /* 0 when the column is absent */
    int iters; /* 0 when the column is absent */
    sb_better better;
} sb_cmp_row;

/* Rows by key (scenario, variant, params, metric): compare/match.h. */
typedef struct sb_row_index {
    uint64_t *slots; /* key hash << 32 | row number + 1; 0: empty. cap is a power of two */
    size_t cap, n;
} sb_row_index;

/* One CSV file read back: rows in file order. */
typedef struct sb_cmp_table {
    sb_cmp_row *rows;
    size_t n, cap;
    sb_row_index index;       /* rows by key */
    const char *gpu, *run_id; /* of the first row, interned; "" when the column is absent */
    double *samples;          /* every row's samples (rows point into it); NULL when none */
    size_t n_samples;
} sb_cmp_table;

#endif
