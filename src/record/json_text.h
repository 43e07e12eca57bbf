/* Text into JSON strings, shared by the injection library (which writes the record streams
 * with snprintf, no JSON library inside the audited program) and the analyzer: valid UTF-8
 * only, since a reader (jansson, Python) refuses a line or a file with one bad byte. */
#ifndef SB_AUDIT_JSON_TEXT_H
#define SB_AUDIT_JSON_TEXT_H

#include <stddef.h>

/* The contents of a JSON string (no quotes) for s into dst (n bytes, at least 1): quotes,
 * backslashes and control characters escaped, each invalid byte replaced by '?', cut on a
 * character boundary to fit. Returns dst. */
char *sb_audit_json_escape(char *dst, size_t n, const char *s);

#endif
