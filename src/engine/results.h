/* The rows a run produces: one per (measurement, metric), the CSV schema's unit of output. */
#ifndef SB_RESULTS_H
#define SB_RESULTS_H

#include "scenarios/scenario.h"
#include "base/stats.h"

#include <time.h>

typedef struct sb_row {
    char scenario[32];
    char variant[32];
    char params[256];
    long long iters;
    int reps;
    char metric[32];
    char unit[16];
    sb_better better;
    sb_stats st;
    time_t finished; /* when the measurement finished (sinks write it as ISO 8601 UTC) */
    char flags[32];  /* ";"-joined: "throttled", "noisy"; "" when clean */
    /* for the table only (not in the CSV): the metric's column header ("" = not shown), and
     * whether it is the measurement's primary metric (the table shows its cv) */
    char label[32];
    int primary;
    /* the repetitions behind the statistics (paired deltas: one per pair), in order; valid
     * only while the row is being handed to the sinks (sb_sink_ops.row), NULL elsewhere */
    const double *samples;
    int n_samples;
} sb_row;

typedef struct sb_results {
    sb_row *rows;
    int n, cap;
} sb_results;

int sb_results_add(sb_results *res, const sb_row *row);
void sb_results_free(sb_results *res);
/* The row for (scenario, variant, params, metric), or NULL. */
const sb_row *sb_results_find(const sb_results *res, const char *scenario, const char *variant,
                              const char *params, const char *metric);
const char *sb_better_name(sb_better b);

#endif
