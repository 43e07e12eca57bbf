/* A run request, before it is expanded into a plan: from the command line, or one section of a
 * config file. */
#ifndef SB_RUN_SPEC_H
#define SB_RUN_SPEC_H

#define SB_MAX_SETS 32

typedef struct sb_set_opt {
    const char *key;   /* "m" */
    const char *value; /* "256,512,1024": several values sweep the parameter */
    int line;          /* config file line, 0 from the command line */
} sb_set_opt;

/* How each measurement is made. */
typedef struct sb_measure_opts {
    long long iters; /* iterations per repetition; 0: the scenario's default */
    int warmup;      /* at least this many warm-up repetitions ... */
    double warmup_s; /* ... and at least this long; < 0: automatic */
    int min_reps;
    int max_reps;
    double max_time_s; /* per measurement, once min_reps is met */
    double target_cv;  /* percent */
} sb_measure_opts;

void sb_measure_opts_defaults(sb_measure_opts *m);

typedef struct sb_run_spec {
    const char *scenarios;  /* comma list; NULL: every scenario */
    const char *variants;   /* comma list; NULL: every variant */
    char variants_buf[512]; /* storage for a filtered variants list */
    sb_set_opt sets[SB_MAX_SETS];
    int n_sets;
    sb_measure_opts m;
    /* where it came from, for error messages; file NULL: the command line */
    const char *file;
    char section[64];
    int line;          /* of the section header */
    int scenario_line; /* of its keys, 0 if absent */
    int variants_line;
} sb_run_spec;

#endif
