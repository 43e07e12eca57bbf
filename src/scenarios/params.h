/* Declared scenario parameters: types, defaults, parsing and the canonical text form used in
 * the CSV's `params` column. Every value is held as a long long (enums as their index). */
#ifndef SB_PARAMS_H
#define SB_PARAMS_H

#include <stddef.h>

#define SB_MAX_PARAMS 12
#define SB_MAX_SWEEP 64

typedef enum { SB_PARAM_INT, SB_PARAM_SIZE, SB_PARAM_ENUM, SB_PARAM_BOOL } sb_param_type;

typedef struct sb_param_def {
    const char *name;
    sb_param_type type;
    const char *def; /* default, a comma list sweeps it */
    const char *help;
    long long min, max;         /* INT and SIZE: inclusive bounds */
    const char *const *choices; /* ENUM: NULL-terminated */
} sb_param_def;

/* One parameter combination as a scenario reads it: by name, never by position. */
typedef struct sb_param_values {
    const sb_param_def *defs;
    const long long *v; /* indexed like defs */
} sb_param_values;

/* The value of a declared parameter (aborts on an undeclared name: a programming error). */
long long sb_param(const sb_param_values *p, const char *name);

/* Parses one value; on error writes "m=abc: not an integer"-style text to err. */
int sb_param_parse(const sb_param_def *d, const char *text, long long *out, char *err,
                   size_t errlen);
/* Parses a comma list into out[0..*n-1]. */
int sb_param_parse_list(const sb_param_def *d, const char *list, long long *out, int *n, char *err,
                        size_t errlen);
void sb_param_format(const sb_param_def *d, long long v, char *buf, size_t n);
/* "m=512;n=512;k=512;dtype=fp16" in declaration order. */
void sb_params_format_all(const sb_param_def *defs, const long long *values, char *buf, size_t n);
int sb_param_index(const sb_param_def *defs, const char *name);
int sb_params_count(const sb_param_def *defs);
/* Human-readable type for --list ("int 1..65536", "fp16|bf16|fp32", "size", "0|1"). */
void sb_param_describe(const sb_param_def *d, char *buf, size_t n);

#endif
