/* The output files of one command, checked once: every output of run, the audit and compare is
 * prepared here (sinks/outfile.h: a path that can be written), refused when it is one of the
 * command's inputs, and refused when two outputs land on one file (`a.csv`, `./a.csv`, a
 * symlink to it, `-` and /dev/stdout) or one lands on the other's temporary PATH.partial. */
#ifndef SB_OUTSET_H
#define SB_OUTSET_H

#include <stddef.h>

#include "sinks/outfile.h"

/* How a clash is worded: "PREFIX--NEW PATH: same file as --OLD PATH" (run, compare) or
 * "PREFIX--OLD PATH and --NEW PATH write the same file" (the audit). */
typedef enum { SB_CLASH_SAME_AS, SB_CLASH_WRITE_SAME } sb_clash_wording;

typedef struct sb_outset_rules {
    const char *prefix; /* starts every message: "", "compare: ", "audit: " */
    sb_clash_wording wording;
    const char *const *inputs; /* NULL-terminated, may be NULL: files an output must not be */
} sb_outset_rules;

/* Prepares `o` as --OPT PATH and checks it against the inputs and against the outputs already
 * checked (earlier[0..n), each prepared). 0, or exit 2 with one line; `o` is then not kept. */
int sb_outset_add(sb_out_file *o, const char *opt, const char *path, const sb_outset_rules *r,
                  sb_out_file *const *earlier, size_t n);

/* Exit 2 with one line when one of two outputs is the other's temporary file (PATH.partial:
 * `--csv r.csv.partial --samples r.csv`), whose commit would replace it; else 0. */
int sb_outset_partial_clash(const char *prefix, const sb_out_file *old, const sb_out_file *o);

/* $GITHUB_STEP_SUMMARY, which --ci github appends the Markdown to (sinks/github.c), as an output
 * like any other: 0 with `s` described (sinks/outfile.h, sb_out_describe; state
 * SB_OUT_PREPARED) or cleared when unset, empty or unresolvable; exit 2 with one line when it is
 * one of r->inputs or one of earlier[0..n). Nothing is created. */
int sb_outset_add_summary(sb_out_file *s, const sb_outset_rules *r, sb_out_file *const *earlier,
                          size_t n);

/* The files a command line names, as inputs an output must not replace: every argument, every
 * word of an argument (a shell string: `sh -c 'cat in.txt'`, `wc -l <in.txt`) and every value
 * after `=` (`--file=in.txt`), kept when it is a regular file that exists. Into
 * *paths, NULL-terminated (NULL when none), freed with sb_outset_free_paths; 0, or exit 1. */
int sb_outset_command_inputs(char *const *argv, char ***paths);
void sb_outset_free_paths(char **paths);

#endif
