/* Output files: checked before any GPU work, written as the run goes, renamed into place at
 * the end.
 *
 *   sb_out_prepare  before any GPU work: "-" is stdout; otherwise the folder must exist and be
 *                   writable, the target must not be a folder, and the final name must fit the
 *                   file system ({gpu} counted at its longest, {date} at its fixed length, plus
 *                   ".partial"), and TARGET.partial must not be there. Exit 2 with one line.
 *   sb_out_open     once the GPU is known: expands {gpu} and {date} and creates TARGET.partial
 *                   (O_EXCL: one that is there is not the run's own, never replaced; exit 2).
 *   sb_out_flush    fflush: after SIGKILL, TARGET.partial holds everything flushed so far.
 *   sb_out_commit   fsync, close, rename TARGET.partial onto TARGET (exit 1 on a write error).
 *   sb_out_abort    close and remove TARGET.partial.
 *
 * A target that exists and is not a regular file (a character device such as /dev/null or
 * /dev/full, a FIFO, a terminal, /dev/stdout) is written through directly and never replaced.
 * A symlink is followed: the partial file and the rename go to the link's target and the link
 * stays a link. */
#ifndef SB_OUTFILE_H
#define SB_OUTFILE_H

#include <limits.h>
#include <stdio.h>
#include <sys/types.h>

#include "base/env.h"

/* The longest text {gpu} expands to (longer slugs are cut), and {date}'s fixed length
 * ("20261122-154630"). */
#define SB_GPU_SLUG_MAX 64
#define SB_DATE_LEN 15
#define SB_PARTIAL_SUFFIX ".partial"

enum { SB_OUT_NONE, SB_OUT_PREPARED, SB_OUT_OPEN, SB_OUT_COMMITTED, SB_OUT_ABORTED };

typedef struct sb_out_file {
    char opt[32];                /* "csv": for error messages (or "GITHUB_STEP_SUMMARY") */
    char pattern[PATH_MAX];      /* as given, {gpu} and {date} not yet expanded */
    char path[PATH_MAX];         /* after sb_out_open: the name expanded, as the user spelled it */
    char target[PATH_MAX];       /* where the content goes: symlinks followed, folder canonical */
    char partial[PATH_MAX + 16]; /* target + ".partial" ("" when written through) */
    FILE *f;
    int to_stdout; /* "-" */
    int direct;    /* an existing non-regular target (device, FIFO): written through */
    int state;     /* SB_OUT_* */
    int exists;    /* the target existed when last resolved: dev/ino below are valid */
    int env_var;   /* opt is the environment variable that named it, not an option */
    dev_t dev;
    ino_t ino;
} sb_out_file;

/* Exit 2 with one line ("--csv PATH: ...") if the path cannot be written. */
int sb_out_prepare(sb_out_file *o, const char *opt, const char *pattern);
/* Expands {gpu}/{date} (env may be NULL: {date} is then now, {gpu} "gpu") and opens the
 * output. Exit 2 if it cannot be created. */
int sb_out_open(sb_out_file *o, const sb_env *env);
/* Exit 1 on a write error. */
int sb_out_flush(sb_out_file *o);
/* Exit 1 with one line on a write error (ENOSPC included); the partial file is then removed.
 * No-op unless open. */
int sb_out_commit(sb_out_file *o);
/* Closes and removes the partial file. No-op unless open. */
void sb_out_abort(sb_out_file *o);

/* Whether two prepared (or opened) outputs go to the same file: `a.csv`, `./a.csv` and a
 * symlink to it are the same. */
int sb_out_same(const sb_out_file *a, const sb_out_file *b);
/* A file that an environment variable names and the command appends to ($GITHUB_STEP_SUMMARY),
 * described as an output is (target, dev/ino) for the checks below, which name it VAR=PATH:
 * nothing checked about writing it, nothing created. -1 when it cannot be resolved (its writer
 * says so when it writes). */
int sb_out_describe(sb_out_file *o, const char *var, const char *path);
/* Exit 2 with one line if the output is one of `inputs` (NULL-terminated, may be NULL). */
int sb_out_check_inputs(const sb_out_file *o, const char *const *inputs);
/* The same, with what such a file is in the message ("is syncbench's own file"). */
int sb_out_check_files(const sb_out_file *o, const char *const *files, const char *what);
/* Exit 2 with one line if the output lands in the folder `dir` or is that folder (which need
 * not exist yet): the folder a command reads as a whole (audit --from, --keep). what names it
 * in the message ("--from"). */
int sb_out_check_folder(const sb_out_file *o, const char *what, const char *dir);
/* For a single-file writer (compare --markdown): prepare + check inputs + open, with {gpu}
 * as "gpu" and {date} now. */
int sb_out_create(sb_out_file *o, const char *opt, const char *pattern, const char *const *inputs);

/* results/{gpu}-{date}.csv -> results/h100-80gb-hbm3-20261122-154630.csv. env may be NULL;
 * an empty env->date expands to the current UTC time, as sb_env_host sets it, an empty
 * slug to "gpu". */
void sb_expand_path(const char *pattern, const sb_env *env, char *out, size_t n);

#endif
