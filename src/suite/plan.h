/* The run plan: every measurement to make, as (scenario, parameter values, variants), built
 * from the options and fully validated before any CUDA call. */
#ifndef SB_PLAN_H
#define SB_PLAN_H

#include <stdio.h>

#include "cli/cli.h"
#include "scenarios/scenario.h"

#define SB_MAX_PLAN 65536

typedef struct sb_plan_entry {
    const sb_scenario *sc;
    long long values[SB_MAX_PARAMS];
    int variants[SB_MAX_VARIANTS]; /* indices into sc->variants, references first */
    int n_variants;
    sb_measure_opts m; /* m.iters resolved */
} sb_plan_entry;

typedef struct sb_plan {
    sb_plan_entry *entries;
    int n, cap;
} sb_plan;

/* The plan of the command line, or of --config FILE with the command line's overrides.
 * 0, or the code of the recorded error (exit 2). */
int sb_plan_build(const sb_options *o, sb_plan *plan);
/* Expands one run request and appends its entries. */
int sb_plan_add_spec(sb_plan *plan, const sb_run_spec *spec);
/* "unknown scenario 'x'; did you mean 'y'?" into msg. */
int sb_unknown_scenario(const char *name, char *msg, size_t n);
/* --dry-run: every measurement, numbered, and how many. */
void sb_plan_print(FILE *f, const sb_plan *plan);
void sb_plan_free(sb_plan *plan);
/* "small-gemm/async m=512;n=512;k=512;dtype=fp16;tf32=0" */
void sb_plan_entry_name(const sb_plan_entry *e, int variant, char *buf, size_t n);
int sb_plan_measurements(const sb_plan *plan);

#endif
