/* Reads a syncbench CSV back into rows (libcsv), for `syncbench compare`. Columns are found by
 * name, so files with extra columns or a different order read too. */
#ifndef SB_CSV_READ_H
#define SB_CSV_READ_H

#include <stddef.h>

#include "engine/results.h"

typedef struct sb_csv_data {
    sb_results rows;
    int *lines;      /* line of each row in the file */
    char gpu[256];   /* of the first row */
    char run_id[64]; /* of the first row */
} sb_csv_data;

/* 0, or SB_EXIT_USAGE with "base.csv:7: median 'abc' is not a number"-style errors. */
int sb_csv_read(const char *path, sb_csv_data *out);
void sb_csv_data_free(sb_csv_data *d);

#endif
