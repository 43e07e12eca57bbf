/* A run request, before it is expanded into a plan: from the command line, or one section of a
 * suite file. Its options are declared once, in sb_run_optdefs (suite/run_options.c), and read
 * from the command line and from suite files through that table. */
#ifndef SB_RUN_SPEC_H
#define SB_RUN_SPEC_H

#include "base/optdef.h"

#define SB_MAX_SETS 32

typedef struct sb_set_opt {
    char key[64];      /* "m" */
    const char *value; /* "256,512,1024": several values sweep the parameter */
    int line;          /* suite file line, 0 from the command line */
} sb_set_opt;

/* How each measurement is made. */
typedef struct sb_measure_opts {
    long long iters;  /* iterations per repetition; 0: the scenario's default */
    long long warmup; /* at least this many warm-up repetitions ... */
    double warmup_s;  /* ... and at least this long; < 0: automatic (the scenario's) */
    long long min_reps;
    long long max_reps;
    double max_time_s; /* per measurement, once min_reps is met */
    double target_cv;  /* percent */
} sb_measure_opts;

typedef struct sb_run_spec {
    const char *scenarios; /* comma list; NULL: every scenario */
    const char *variants;  /* comma list; NULL: every variant */
    char variants_buf[1024];
    sb_set_opt sets[SB_MAX_SETS];
    int n_sets;
    sb_measure_opts m;
    unsigned long long given; /* bit i: sb_run_optdefs[i] was given */
    /* where it came from, for error messages; file NULL: the command line */
    const char *file;
    char section[64];
    int line;          /* of the section header */
    int scenario_line; /* of its keys, 0 if absent */
    int variants_line;
} sb_run_spec;

/* scenario, variant, set and the measurement options, stored in sb_run_spec. */
extern const sb_optdef sb_run_optdefs[];

/* An empty request with every default. */
void sb_run_spec_init(sb_run_spec *spec);
/* The measurement options `over` gave replace those of `spec`, and so do its --set keys, one
 * by one (scenario and variant select runs instead: suite/overrides.c). */
void sb_run_spec_override(sb_run_spec *spec, const sb_run_spec *over);
/* The index of the option in sb_run_optdefs, for `given`. */
int sb_run_opt_index(const char *name);

#endif
