/* The record format as one table (schema.c): a row per record kind, the "t" value of its lines,
 * with every field it may hold (name, JSON type, required or not, a line of meaning). The
 * analyzer dispatches on it and takes its required fields from it (model/load.c), the writers of
 * inject/ are held to it by tests/cli/test_record_schema.py and tests/unit/test_watch.c, and
 * docs/record-format.md holds its tables as `syncbench __record-schema` prints them
 * (tests/cli/test_docs.py). No allocation, no JSON library: plain data. */
#ifndef SB_RECORD_SCHEMA_H
#define SB_RECORD_SCHEMA_H

#include <stddef.h>

/* Each record kind, in the table's order. */
typedef enum {
    SB_REC_PROC,
    SB_REC_CALL,
    SB_REC_RANGE,
    SB_REC_PYSTACK,
    SB_REC_STACK,
    SB_REC_KERNEL,
    SB_REC_COPY,
    SB_REC_MEMSET,
    SB_REC_API,
    SB_REC_EVENT,
    SB_REC_SYNC,
    SB_REC_GSTREAM,
    SB_REC_PAUSE,
    SB_REC_WAKE,
    SB_REC_GWINDOW,
    SB_REC_UNWATCHED,
    SB_REC_WARN,
    SB_REC_END,
    SB_REC_NKINDS
} sb_rec_kind;

/* A field's JSON type. A reader takes an integer written as a real too (model/load.c); a writer
 * writes integers. */
typedef enum { SB_FT_INT, SB_FT_STR, SB_FT_ARR } sb_rec_ftype;

typedef struct {
    const char *name;
    sb_rec_ftype type;
    int required; /* a record without it is malformed: skipped and counted */
    const char *meaning;
} sb_rec_field;

typedef struct {
    sb_rec_kind kind;
    const char *t; /* the "t" value */
    const char *meaning;
    const sb_rec_field *fields; /* "t" itself not among them */
    size_t nfields;
} sb_rec_def;

extern const sb_rec_def sb_rec_defs[SB_REC_NKINDS]; /* indexed by sb_rec_kind */

/* The kind whose "t" is t; NULL when none (a newer writer's record, or not a string). */
const sb_rec_def *sb_rec_find(const char *t);
/* The field of def named name; NULL when the kind declares none. */
const sb_rec_field *sb_rec_field_find(const sb_rec_def *def, const char *name);
/* "integer", "string", "array" */
const char *sb_rec_ftype_name(sb_rec_ftype type);

#endif
