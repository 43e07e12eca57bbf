/* Declarative option tables, in the style of fio's option table: each option is one line
 * (name, suite key, type, range, default, help, where its value is stored). The same table is
 * read by the command line (cli/args.c builds getopt_long's table from it), by the suite loader
 * (suite/config.c looks keys up in it) and by --help, so an option has one range and one
 * message wherever it is given. */
#ifndef SB_OPTDEF_H
#define SB_OPTDEF_H

#include <stddef.h>

typedef enum {
    SB_OPT_FLAG,   /* no value: stores int 1 */
    SB_OPT_INT,    /* long long, decimal, within [lo, hi] */
    SB_OPT_NUMBER, /* double, finite, within [lo, hi] */
    SB_OPT_TEXT,   /* const char * (the argument itself, not copied) */
    SB_OPT_LIST,   /* const char *: a comma list of names, none empty */
    SB_OPT_CUSTOM, /* the table's `store` function decides */
} sb_opt_type;

typedef struct sb_optdef {
    const char *name; /* --name on the command line */
    char short_name;  /* -s, or 0 */
    const char *key;  /* key in a suite (INI) file; NULL: command line only */
    sb_opt_type type;
    const char *arg; /* what --help shows for the value: "N", "SECONDS" */
    double lo, hi;   /* SB_OPT_INT, SB_OPT_NUMBER: inclusive range */
    const char *def; /* default as text (parsed by sb_optdefs_defaults), NULL: none */
    size_t offset;   /* where the value goes, from the start of the struct the table fills */
    /* SB_OPT_CUSTOM: stores `text`; 0, or -1 with a message (no option name) in err */
    int (*store)(void *base, const char *text, char *err, size_t n);
    const char *group; /* --help heading, given on the first option of a group */
    const char *help;  /* --help text; '\n' starts a new line */
} sb_optdef;

/* Parses `text` for `d` and stores it at base + d->offset. 0, or -1 with the reason in err,
 * e.g. "out of range (an integer from 1 to 100000000)", without the option's name. */
int sb_optdef_set(const sb_optdef *d, const char *text, void *base, char *err, size_t n);
/* Stores every option's default (those with a def). */
void sb_optdefs_defaults(const sb_optdef *defs, void *base);
/* Copies an option's value from one struct to another (for overrides). */
void sb_optdef_copy(const sb_optdef *d, void *dst, const void *src);
/* The option whose suite key is `key`, or NULL. Tables end with a NULL name. */
const sb_optdef *sb_optdef_by_key(const sb_optdef *defs, const char *key);
int sb_optdefs_count(const sb_optdef *defs);
/* The option named `name` (without its dashes), or NULL. */
const sb_optdef *sb_optdef_by_name(const sb_optdef *defs, const char *name);
/* The value of the SB_OPT_TEXT option `name` in the struct at base: NULL when the table has no
 * such text option or it was not given. How a command finds the PATH of each output format's
 * option (outputs/formats.h). */
const char *sb_optdefs_text(const sb_optdef *defs, const void *base, const char *name);

#endif
