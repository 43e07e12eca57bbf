/* The suite loader, fuzzed: an input is an INI file, loaded, overridden by an empty command line
 * and expanded into the plan, the path `syncbench --config FILE` takes before any CUDA call
 * (cmd/run.c's sb_cli_plan). The real scenario registry is linked, so parameters, variants and
 * each scenario's own checks are the shipped ones; tests/fuzz/cuda_stubs.c stands in for the
 * CUDA runtime the scenarios' GPU code refers to and the loader never calls. Checked besides
 * memory and undefined behaviour: a failure records one printable line and its exit code, and
 * a plan holds only declared variants and parameter values within their ranges. */
#include <stdint.h>
#include <stdio.h>

#include "base/error.h"
#include "fuzz_file.h"
#include "scenarios/registry.h"
#include "suite/config.h"
#include "suite/overrides.h"
#include "suite/plan.h"

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    devnull = fopen("/dev/null", "w");
    return devnull ? 0 : -1;
}

static void check_entry(const sb_plan_entry *e)
{
    const sb_scenario *sc = e->sc;
    FUZZ_CHECK(e->n_variants >= 1 && e->n_variants <= sb_variant_count(sc));
    for (int v = 0; v < e->n_variants; v++) {
        FUZZ_CHECK(e->variants[v] >= 0 && e->variants[v] < sb_variant_count(sc));
        FUZZ_CHECK(v == 0 || e->variants[v] > e->variants[v - 1]);
    }
    for (int p = 0; sc->params[p].name; p++) {
        const sb_param_def *d = &sc->params[p];
        long long x = e->values[p];
        if (d->type == SB_PARAM_INT || d->type == SB_PARAM_SIZE)
            FUZZ_CHECK(x >= d->min && x <= d->max);
        else if (d->type == SB_PARAM_BOOL)
            FUZZ_CHECK(x == 0 || x == 1);
        else {
            long long n = 0;
            while (d->choices[n])
                n++;
            FUZZ_CHECK(x >= 0 && x < n);
        }
    }
    FUZZ_CHECK(e->m.iters >= 1);
    FUZZ_CHECK(e->m.min_reps >= 1 && e->m.min_reps <= e->m.max_reps);
    char name[512];
    sb_plan_entry_name(e, e->variants[0], name, sizeof name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static fuzz_file file = FUZZ_FILE_INIT;
    const char *path = fuzz_file_set(&file, data, size);
    sb_error_clear();

    sb_run_spec cli;
    sb_run_spec_init(&cli); /* the command line: no option given */
    sb_suite suite;
    int rc = sb_suite_load(path, &suite);
    FUZZ_CHECK(suite.n >= 0);
    if (!rc)
        rc = sb_suite_override(&suite, &cli);
    if (!rc) {
        sb_plan plan;
        rc = sb_plan_build(suite.specs, suite.n, &plan);
        if (!rc) {
            FUZZ_CHECK(plan.n >= suite.n && plan.n <= SB_MAX_PLAN);
            for (int i = 0; i < plan.n; i++) {
                check_entry(&plan.entries[i]);
                FUZZ_CHECK(plan.entries[i].spec >= 0 && plan.entries[i].spec < suite.n);
            }
            sb_plan_print(devnull, &plan);
            sb_plan_free(&plan);
        }
    }
    if (rc) {
        FUZZ_CHECK(rc == SB_EXIT_USAGE && sb_error_code() == rc);
        fuzz_check_message(sb_error_message());
    } else {
        FUZZ_CHECK(sb_error_code() == 0);
    }
    sb_suite_free(&suite);
    return 0;
}
