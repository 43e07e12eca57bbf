/* A run's file for `syncbench compare`, CSV or syncbench's JSON, told by its content. */
#ifndef SB_JSON_READ_H
#define SB_JSON_READ_H

#include "base/strpool.h"
#include "compare/row.h"

/* syncbench --json's document (an object with a "syncbench" object and a "rows" array) into
 * *out: the fields sb_csv_read fills (gpu: environment.gpu.name, run_id: the document's), under
 * its rules (better lower or higher, finite figures below 1e15, stddev and cv not negative, no
 * duplicate row, at most 256 MiB and 2 million rows). A row's `line` is its number in "rows"
 * (1-based), and messages name it as "row N". 0, SB_EXIT_USAGE for bad input, SB_EXIT_FAIL out
 * of memory; *out is empty on failure. */
int sb_json_read(const char *path, sb_strpool *pool, sb_cmp_table *out);
/* A regular file whose first non-blank byte is '{' is read as JSON, anything else (a pipe
 * included) as a CSV (sb_csv_read). */
int sb_run_read(const char *path, sb_strpool *pool, sb_cmp_table *out);

#endif
