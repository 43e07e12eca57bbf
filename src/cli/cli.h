/* Command line -> struct sb_options, with every check that needs no GPU. */
#ifndef SB_CLI_H
#define SB_CLI_H

#include <stdio.h>

#include "suite/run_spec.h"

/* Which measurement options the command line gave (they override a config file's). */
enum {
    SB_GIVEN_ITERS = 1 << 0,
    SB_GIVEN_WARMUP = 1 << 1,
    SB_GIVEN_WARMUP_TIME = 1 << 2,
    SB_GIVEN_MIN_REPS = 1 << 3,
    SB_GIVEN_MAX_REPS = 1 << 4,
    SB_GIVEN_MAX_TIME = 1 << 5,
    SB_GIVEN_TARGET_CV = 1 << 6,
};

typedef struct sb_options {
    sb_run_spec run; /* --scenario, --variant, --set and the measurement options */
    unsigned given;  /* SB_GIVEN_* */
    const char *config;
    int list, help, version, quiet, dry_run;
    int device;
    const char *csv;      /* NULL: none; "-": stdout (then no table) */
    const char *json;     /* NULL: none */
    const char *markdown; /* NULL: none */
    char set_buf[SB_MAX_SETS][512];
} sb_options;

void sb_options_defaults(sb_options *o);
/* 0 on success; otherwise the error is recorded (sb_fail, exit 2) and its code returned. */
int sb_cli_parse(int argc, char **argv, sb_options *o);
void sb_cli_usage(FILE *f);

#endif
