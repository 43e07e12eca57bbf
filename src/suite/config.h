/* Suites as INI files (inih): one section per run request. Keys: `scenario` (default: the
 * section name), `variants`, the measurement options of sb_run_optdefs (iters, warmup,
 * warmup_time, min_reps, max_reps, max_time, target_cv) and the scenario's parameters (a comma
 * list sweeps one). Before the first section, `samples = PATH` names the raw-samples output
 * (--samples); no other key stands outside a section. Errors name file:line. The loader turns a
 * file into run requests and nothing else: suite/overrides.c applies the command line, suite/plan.c
 * expands them. */
#ifndef SB_CONFIG_H
#define SB_CONFIG_H

#include "suite/run_spec.h"

typedef struct sb_suite {
    const char *path;
    char samples[4096]; /* `samples = PATH` before the first section, "" if none */
    sb_run_spec *specs; /* one per section, in file order */
    int n;
    void *text; /* the keys and values the specs point into */
} sb_suite;

/* 0, or the recorded error's code (exit 2 for a bad file). */
int sb_suite_load(const char *path, sb_suite *s);
void sb_suite_free(sb_suite *s);

#endif
