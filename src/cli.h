/* Command line -> struct sb_options, with every check that needs no GPU. */
#ifndef SB_CLI_H
#define SB_CLI_H

#include <stdio.h>

#define SB_MAX_SETS 32

typedef struct sb_set_opt {
    const char *key;   /* "m" */
    const char *value; /* "256,512,1024": several values sweep the parameter */
} sb_set_opt;

typedef struct sb_options {
    const char *scenarios; /* comma list as given, NULL: every scenario */
    const char *variants;  /* comma list as given, NULL: every variant */
    int list, help, version, quiet;
    long long iters; /* 0: the scenario's default */
    int warmup;      /* warm-up repetitions per measurement (at least) */
    double warmup_s; /* warm-up seconds per measurement (at least) */
    int min_reps;
    int max_reps;
    double max_time_s; /* per measurement, after warm-up */
    double target_cv;  /* percent */
    sb_set_opt sets[SB_MAX_SETS];
    int n_sets;
    int device;
    const char *csv; /* NULL: none; "-": stdout (then no table) */
    char set_buf[SB_MAX_SETS][512];
} sb_options;

void sb_options_defaults(sb_options *o);
/* 0 on success; otherwise the error is recorded (sb_fail, exit 2) and its code returned. */
int sb_cli_parse(int argc, char **argv, sb_options *o);
void sb_cli_usage(FILE *f);

#endif
