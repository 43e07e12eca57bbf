/* The scenario interface, in the style of fio's ioengine_ops: a scenario is one struct of
 * function pointers plus declared parameters, variants and metrics. Adding a scenario is adding
 * one file under scenarios/ and one line in registry.c. Scenarios never print or format: they
 * record named metrics into the recorder; the engine owns repetitions, warm-up, statistics,
 * NVTX and output. */
#ifndef SB_SCENARIO_H
#define SB_SCENARIO_H

#include <stddef.h>

#include "gpu/resources.h"
#include "scenarios/params.h"

#define SB_MAX_VARIANTS 16
#define SB_MAX_METRICS 16
#define SB_MAX_GPUS 8 /* the most GPUs a multi-GPU scenario drives at once */

typedef enum { SB_LOWER = 0, SB_HIGHER = 1 } sb_better;

typedef struct sb_metric_def {
    const char *name;  /* CSV `metric`: "wall_us_per_iter" */
    const char *unit;  /* CSV `unit`: "us" */
    sb_better better;  /* CSV `better` */
    const char *label; /* table header, NULL: not in the table */
} sb_metric_def;

typedef struct sb_variant {
    const char *name;      /* what --variant takes: "sync-device" */
    const char *summary;   /* one line for --list */
    int is_sync;           /* NVTX colour; the figure the variant adds a sync to */
    const char *reference; /* variant it is compared with (measured first), or NULL */
    int mode;              /* what the variant does, in the scenario's own terms (sb_run_mode) */
} sb_variant;

/* How a variant differs from its reference, per repetition and paired (engine/measure.c):
 * `metric` minus the reference's as `abs_name`, and that as a percentage of the reference's
 * as `pct_name` (optional). With `saving` set the difference is taken the other way round,
 * reference minus variant: what a sync-free variant saves against the syncing one. */
typedef struct sb_delta_def {
    const char *metric;
    const char *abs_name;
    const char *pct_name;
    int saving;
} sb_delta_def;

/* What a scenario that drives several GPUs at once declares (sb_scenario.multi; NULL: it runs
 * on the one GPU --device names). Every plan entry is checked against the machine before
 * anything is measured (suite/gpus.c): one that asks for more GPUs by number than the machine
 * has is bad input (exit 2); one that asks for every visible GPU on a machine with fewer than
 * min_gpus is taken out of the plan with a note, so that a suite naming it runs the rest. */
typedef struct sb_multi_gpu {
    int min_gpus;
    /* GPUs the entry asks for: a number, or 0 for every visible one (at most SB_MAX_GPUS) */
    int (*asked)(const sb_param_values *p);
    /* What the machine must offer the entry beyond its GPUs (a library, GPUs that reach each
     * other), checked once the GPUs are counted: `gpus` it drives, `variants` its indices into
     * the scenario's variants. 0, or the recorded error's code (exit 3). May be NULL. */
    int (*check)(const sb_param_values *p, const int *variants, int n_variants, int gpus);
} sb_multi_gpu;

struct sb_scenario;

/* One plan entry being measured: parameter values, the variant under measurement. */
typedef struct sb_run {
    const struct sb_scenario *sc;
    sb_param_values params; /* read with sb_param(&r->params, "m") */
    int variant;            /* index into sc->variants */
    long long iters;
    int device;
    void *state;      /* the scenario's own: state_size zeroed bytes, made by the engine */
    sb_resources res; /* what setup acquires; the engine releases it after teardown */
} sb_run;

typedef struct sb_recorder sb_recorder;

/* Appends one sample of a declared metric (a programming error otherwise: the engine fails the
 * measurement naming the metric). The recorder is recorder.h's. */
void sb_record(sb_recorder *rec, const char *metric, double value);

/* Value of a declared parameter (aborts on an undeclared name: a programming error). */
long long sb_run_param(const sb_run *r, const char *name);
const char *sb_run_variant(const sb_run *r);
/* The mode of the variant under measurement (sb_variant.mode). */
int sb_run_mode(const sb_run *r);
/* A parameter given in microseconds, in nanoseconds: what the spin kernels take. */
unsigned long long sb_run_param_ns(const sb_run *r, const char *us_name);

/* The check of a scenario whose `bytes` parameter must hold whole 32-bit words (its data is
 * written and checked word by word). */
int sb_check_whole_words(const sb_param_values *p, char *err, size_t errlen);

typedef struct sb_scenario {
    const char *name;    /* "small-gemm": what --scenario takes */
    const char *summary; /* one line for --list */
    const sb_param_def *params;
    const sb_variant *variants;   /* terminated by a NULL name */
    const sb_metric_def *metrics; /* terminated by a NULL name; [0] drives the stopping rule */
    const sb_delta_def *delta;    /* NULL: variants are not compared */
    long long default_iters;
    /* Iterations per repetition for one parameter combination when --iters is not given
     * (NULL: default_iters), e.g. more iterations for small copies. */
    long long (*iters_for)(const sb_param_values *p);
    /* Warm-up before the first variant of a plan entry, in seconds, unless --warmup-time is
     * given: GPU-bound work needs a few seconds for its clocks to settle under the power
     * limit, and measuring before that mixes boost and throttled clocks. 0: the default. */
    double warmup_s;

    /* CPU-only check of one parameter combination: 0, or an error in err (exit 2). */
    int (*check)(const sb_param_values *p, char *err, size_t errlen);
    /* Device memory one plan entry needs, for the fit check before any GPU work. */
    size_t (*device_bytes)(const sb_param_values *p);
    /* Host memory one plan entry needs (0 if negligible). */
    size_t (*host_bytes)(const sb_param_values *p);
    const sb_multi_gpu *multi; /* several GPUs at once; NULL: the one --device names */

    size_t state_size; /* bytes of the scenario's own state (r->state) */
    /* allocate (through r->res, so that nothing needs freeing by hand), create handles, poison
     * outputs */
    int (*setup)(sb_run *r);
    int (*measure)(sb_run *r, sb_recorder *rec); /* one repetition: record samples */
    int (*validate)(sb_run *r);  /* after a measurement: check the output, then re-poison it */
    void (*teardown)(sb_run *r); /* may be NULL: r->res is released after it */
} sb_scenario;

/* Defines the scenario `var` from its file's variants and functions, named as every scenario
 * file names them (variants, setup, measure), and its state type for state_size. What differs
 * from one scenario to the next (params, metrics, delta, iterations, checks, sizes, validate)
 * follows as designated initializers. */
#define SB_SCENARIO(var, scenario_name, state_type, text, ...)                                     \
    const sb_scenario var = {.name = scenario_name,                                                \
                             .summary = text,                                                      \
                             .state_size = sizeof(state_type),                                     \
                             .variants = variants,                                                 \
                             .setup = setup,                                                       \
                             .measure = measure,                                                   \
                             __VA_ARGS__}

#endif
