/* Output files written atomically: to a temporary name in the target's folder, renamed when
 * complete, so an interrupted run never leaves a truncated file. `{gpu}` and `{date}` in the
 * file name are replaced when the file is committed, once the GPU is known. */
#ifndef SB_OUTFILE_H
#define SB_OUTFILE_H

#include <stdio.h>

#include "base/env.h"

typedef struct sb_out_file {
    char opt[16];       /* "csv": for error messages */
    char pattern[4096]; /* as given */
    char tmp[4200];
    char path[4200]; /* the final name, after commit */
    FILE *f;
    int to_stdout;
} sb_out_file;

/* "-" writes to stdout. Fails with exit 2 if the file cannot be created. */
int sb_out_open(sb_out_file *o, const char *opt, const char *path);
/* Closes and renames into place (exit 1 on a write error). No-op if never opened. */
int sb_out_commit(sb_out_file *o, const sb_env *env);
void sb_out_discard(sb_out_file *o);
/* results/{gpu}-{date}.csv -> results/h100-80gb-hbm3-20261122-154630.csv */
void sb_expand_path(const char *pattern, const sb_env *env, char *out, size_t n);

#endif
