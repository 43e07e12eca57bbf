/* Building the audit's JSON reports with jansson (out_json.c, out_ranks.c): a number (finite),
 * any text as a string, and set and append that remember a NULL (out of memory) in the
 * writer's flag rather than drop it silently; the writer then fails. */
#ifndef SB_AUDIT_JSON_BUILD_H
#define SB_AUDIT_JSON_BUILD_H

#include <jansson.h>
#include <stdio.h>

/* v, or 0 when it is not finite. */
json_t *sb_json_num(double v);
/* v, or null when it is NaN (a figure not known: none of its calls in the GPU window). */
json_t *sb_json_known(double v);
/* A JSON string of any text: invalid UTF-8 (json_string's NULL) becomes '?' rather than a
 * missing key or row; NULL gives "". NULL only when out of memory. */
json_t *sb_json_str(const char *s);
/* o[key] = v, taking v; *oom = 1 when either is NULL or jansson fails. */
void sb_json_set(int *oom, json_t *o, const char *key, json_t *v);
/* a += v, taking v; *oom = 1 when either is NULL or jansson fails. */
void sb_json_append(int *oom, json_t *a, json_t *v);
/* Writes root (indented, keys in order) and a newline to f, and frees it. 0, or exit 1 with
 * one line naming `what` (out of memory when oom is set or root is NULL, or a write error). */
int sb_json_write(FILE *f, json_t *root, int oom, const char *what);

#endif
