/* Strict number parsing and "did you mean" suggestions, shared by the CLI, the scenario
 * parameters and (later) the config loader and compare. */
#ifndef SB_TEXTUTIL_H
#define SB_TEXTUTIL_H

#include <stddef.h>
#include <stdio.h>

enum { SB_PARSE_OK = 0, SB_PARSE_INVALID = -1, SB_PARSE_RANGE = -2 };

/* Whole-string decimal integer; leading/trailing blanks are not allowed. */
int sb_parse_ll(const char *s, long long *out);
/* Whole-string finite number in decimal notation (no hexadecimal, inf or nan). */
int sb_parse_double(const char *s, double *out);
/* Byte count with an optional unit: K/KiB, M/MiB, G/GiB (x1024) or KB, MB, GB (x1000). */
int sb_parse_size(const char *s, long long *out);
/* Shortest exact form: 64MiB, 400MB, 4096 -> 4KiB, 1000 -> 1000. */
void sb_format_size(long long v, char *buf, size_t n);

/* Edit distance (insertions, deletions, substitutions and swaps of neighbours), case-insensitive.
 */
int sb_edit_distance(const char *a, const char *b);
/* The candidate closest to `name` when it is close enough to be a likely typo, else NULL.
 * `candidates` is NULL-terminated; `stride` is the byte distance between consecutive name
 * pointers, so arrays of structs whose first member is the name can be searched directly. */
const char *sb_suggest(const char *name, const void *candidates, size_t stride);

/* Whether `name` is one of the items of the comma list `list`. */
int sb_list_contains(const char *list, const char *name);

/* A measured figure as a table shows it: 1634, 163.4, 16.34, 1.634. */
void sb_format_figure(double v, char *buf, size_t n);

/* Text written through a FILE into memory (open_memstream): sb_memtext_open gives the FILE
 * (NULL out of memory), sb_memtext_close the text (malloc'ed, NUL-terminated; NULL when memory
 * ran out, nothing left to free). */
typedef struct sb_memtext {
    char *text;
    size_t len;
    FILE *f;
} sb_memtext;
FILE *sb_memtext_open(sb_memtext *m);
char *sb_memtext_close(sb_memtext *m);

/* Splits a comma list in place: returns the number of items (empty items are kept as ""),
 * or -1 if there are more than max. */
int sb_split_commas(char *s, char **items, int max);

#endif
