/* Reads a syncbench CSV, and the samples file beside it, back (libcsv), for `syncbench compare`.
 * Columns are found by name, so files with extra columns or a different order read too. Errors name
 * the file's physical line (a quoted field with a line break spans two), e.g. "base.csv:7: median
 * 'abc' is not a number", and are one line each. */
#ifndef SB_CSV_READ_H
#define SB_CSV_READ_H

#include "compare/row.h"
#include "base/strpool.h"

/* Input limits; past them the reader stops with one line and exit 2. */
#define SB_CSV_MAX_RECORD (64 * 1024) /* bytes of one record, its line ending(s) included */
#define SB_CSV_MAX_FIELDS 64          /* fields of one record */
/* Compare holds every row in memory, about 250 bytes a row besides its text, so the ceilings
 * bound what it takes: two unrelated files of 2 million of the shortest rows took 1.0 GB, and
 * longer text adds at most the 512 MiB read, so two files at the ceilings stay under 2 GB;
 * real rows (~190 bytes of CSV) take about 1.3 bytes a byte read. */
#define SB_CSV_MAX_FILE (256LL << 20) /* bytes of one file: 256 MiB, checked before reading */
#define SB_CSV_MAX_ROWS 2000000       /* rows of one CSV */

/* Reads path into *out (rows in file order, strings interned in pool, the index by key built);
 * refuses duplicate columns, duplicate rows (naming both lines), NUL bytes, the limits above.
 * 0, SB_EXIT_USAGE for bad input, SB_EXIT_FAIL when out of memory; *out is empty on failure. */
int sb_csv_read(const char *path, sb_strpool *pool, sb_cmp_table *out);
void sb_cmp_table_free(sb_cmp_table *t);

/* Reads a samples file (`syncbench --samples`: run_id,scenario,variant,params,metric,rep,value;
 * run_id optional) into the rows of t, which csv_path was read into with the same pool: each
 * row's samples in file order (row->samples, row->n_samples; rows without any keep NULL, 0).
 * The same input hygiene and limits as sb_csv_read, and: a sample whose key has no row in t,
 * a run_id that is not its row's (when both have one), rep not an integer from 1 to INT_MAX or
 * not above the row's rep before it, value not a finite number, no samples at all. 0,
 * SB_EXIT_USAGE for bad input, SB_EXIT_FAIL when out of memory; t has no samples on failure. */
int sb_samples_read(const char *path, const char *csv_path, sb_strpool *pool, sb_cmp_table *t);
/* Drops t's samples. */
void sb_samples_detach(sb_cmp_table *t);
/* The samples file beside a run's file: X.csv or X.json -> X.samples.csv (a name without
 * .csv or .json gets .samples.csv appended). 0, or -1 when it does not fit in n bytes. */
int sb_samples_path(const char *csv_path, char *out, size_t n);

#endif
