/* The run subcommand's command line -> struct sb_options, with every check that needs no GPU.
 * The run request's options (scenario, variant, set, measurement) come from sb_run_optdefs,
 * the table suite files share; the rest are the command line's own (cli/cli.c). */
#ifndef SB_CLI_H
#define SB_CLI_H

#include <stdio.h>

#include "base/optdef.h"
#include "suite/run_spec.h"

typedef struct sb_options {
    sb_run_spec run; /* --scenario, --variant, --set and the measurement options */
    const char *config;
    int list, help, version, quiet, dry_run;
    long long device;
    long long cpu;                /* -1: the measuring thread is not pinned */
    const char *csv;              /* NULL: none; "-": stdout (then no table) */
    const char *json;             /* NULL: none */
    const char *markdown;         /* NULL: none */
    const char *samples;          /* NULL: none (a suite may name one) */
    const char *github_benchmark; /* NULL: none */
    const char *bmf;              /* NULL: none */
} sb_options;

void sb_options_defaults(sb_options *o);
/* 0 on success; otherwise the error is recorded (sb_fail, exit 2) and its code returned. */
int sb_cli_parse(int argc, char **argv, sb_options *o);
void sb_cli_usage(FILE *f);
/* The run subcommand's own options (its table; the run request's are sb_run_optdefs). */
const sb_optdef *sb_cli_optdefs(void);

#endif
