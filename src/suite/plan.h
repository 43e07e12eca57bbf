/* The run plan: every measurement to make, as (scenario, parameter values, variants), expanded
 * from run requests and fully validated before any CUDA call. The one validation path for the
 * command line alone and for a suite with the command line's overrides. */
#ifndef SB_PLAN_H
#define SB_PLAN_H

#include <stdio.h>

#include "scenarios/scenario.h"
#include "suite/run_spec.h"

#define SB_MAX_PLAN 65536

typedef struct sb_plan_entry {
    const sb_scenario *sc;
    long long values[SB_MAX_PARAMS];
    int variants[SB_MAX_VARIANTS]; /* indices into sc->variants, references first */
    int n_variants;
    sb_measure_opts m; /* m.iters resolved */
    int spec;          /* index of the run request it came from */
} sb_plan_entry;

typedef struct sb_plan {
    sb_plan_entry *entries;
    int n, cap;
} sb_plan;

/* Expands every request in order; refuses a measurement planned twice. 0, or the code of the
 * recorded error (exit 2). */
int sb_plan_build(const sb_run_spec *specs, int n_specs, sb_plan *plan);
/* --dry-run: every measurement, numbered, and how many. */
void sb_plan_print(FILE *f, const sb_plan *plan);
void sb_plan_free(sb_plan *plan);
/* The entry's parameter values as a scenario reads them. */
sb_param_values sb_plan_params(const sb_plan_entry *e);
/* "small-gemm/async m=512;n=512;k=512;dtype=fp16;tf32=0" */
void sb_plan_entry_name(const sb_plan_entry *e, int variant, char *buf, size_t n);
int sb_plan_measurements(const sb_plan *plan);

#endif
