/* getopt_long driven by option tables (base/optdef.h): one parser and one --help layout for
 * every subcommand. Messages say what is wrong: "unknown option '--scenaro'; did you mean
 * '--scenario'?", "--list takes no value", "--max: ambiguous (--max-time, --max-reps)",
 * "--iters given twice". */
#ifndef SB_ARGS_H
#define SB_ARGS_H

#include <stdio.h>

#include "base/optdef.h"

/* --ci github|none: one row, the same in the table of every command with CI outputs
 * (sinks/github.h); `what` says what it annotates. */
#define SB_CI_OPTDEF(offset, what)                                                                 \
    {                                                                                              \
        "ci", 0, NULL, SB_OPT_TEXT, "github|none", 0, 0, NULL, (offset), NULL, NULL,               \
            "github: " what "\n"                                                                   \
            "as annotations on stdout (::error ...::...), the report\n"                            \
            "appended to $GITHUB_STEP_SUMMARY; none: neither.\n"                                   \
            "Default: github when GITHUB_ACTIONS=true, else none"                                  \
    }

/* One table and the struct its offsets point into; `given` (may be NULL) gets bit i set when
 * the table's option i is on the command line. */
typedef struct sb_argtable {
    const sb_optdef *defs;
    void *base;
    unsigned long long *given;
} sb_argtable;

/* Parses argv[1..] (argv[0] is the program or subcommand). `prefix` starts every message
 * ("" or "compare: "). On success *first_operand is the index of the first non-option
 * argument. 0, or the recorded error's code (exit 2). */
int sb_args_parse(const char *prefix, const sb_argtable *tables, int ntables, int argc, char **argv,
                  int *first_operand);
/* The same, stopping at the first operand (or "--"): `audit [options] -- CMD --its-options`. */
int sb_args_parse_in_order(const char *prefix, const sb_argtable *tables, int ntables, int argc,
                           char **argv, int *first_operand);
/* The options part of --help, grouped under the tables' headings. */
void sb_args_usage(FILE *f, const sb_argtable *tables, int ntables);
/* The same options as a man page's section (roff): `title` as its heading, each table's groups
 * as subheadings, each option with its value and help (cmd/man.c). */
void sb_args_man(FILE *f, const char *title, const sb_argtable *tables, int ntables);
/* A command's whole --help: its head text, the options part, its tail text. */
void sb_args_help(FILE *f, const char *head, const sb_argtable *tables, int ntables,
                  const char *tail);

#endif
