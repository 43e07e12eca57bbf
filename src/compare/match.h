/* Rows by key (scenario, variant, params, metric): a hash table of row numbers over interned key
 * pointers (base/strpool.h), so the reader's duplicate check and the matching of two files
 * take expected constant time per row instead of a scan of every other row. */
#ifndef SB_MATCH_H
#define SB_MATCH_H

#include <stddef.h>
#include <stdint.h>

#include "compare/row.h"

/* Adds rows[i] (whose key pointers come from the pool that interned every row). Returns 0, or
 * 1 without adding when a row with the same key is there (*dup: its number), or -1 when out of
 * memory. */
int sb_row_index_add(sb_row_index *ix, const sb_cmp_row *rows, size_t i, size_t *dup);
/* The number of the row with key's key, or -1. */
long sb_row_index_find(const sb_row_index *ix, const sb_cmp_row *rows, const sb_cmp_row *key);
void sb_row_index_free(sb_row_index *ix);

/* One line of the comparison: base and current, either NULL (new, missing). */
typedef struct sb_pair {
    const sb_cmp_row *base, *cur;
} sb_pair;

/* The pairs in report order: each selected baseline row, in the baseline's order, with its
 * current row or NULL (missing); then each selected current row the baseline lacks (new), in
 * the current file's order. metrics[0..n_metrics) selects rows by metric; n_metrics 0 selects
 * every row. Both tables must have been read with one pool. Returns 0, or -1 when out of
 * memory; *out is freed with free(). */
int sb_match(const sb_cmp_table *base, const sb_cmp_table *cur, const char *const *metrics,
             int n_metrics, sb_pair **out, size_t *n);

/* The first pair whose rows are in different units (a file without the unit column matches
 * any), or -1: a change from us to ms is no change of speed, so such rows are not compared. */
long sb_match_unit_clash(const sb_pair *pairs, size_t n);

#endif
