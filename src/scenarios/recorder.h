/* Per-metric sample arrays for one measurement (one sample per repetition and metric): the
 * scenarios append with sb_record (scenario.h), the engine (engine/measure.c) makes, reads and
 * resets them. Here, below the engine, so that the scenarios call nothing above them. */
#ifndef SB_SCENARIOS_RECORDER_H
#define SB_SCENARIOS_RECORDER_H

#include "scenarios/scenario.h"

struct sb_recorder {
    const sb_metric_def *defs;
    int n_metrics;
    double *samples[SB_MAX_METRICS];
    int count[SB_MAX_METRICS];
    int cap[SB_MAX_METRICS];
    const char *bad_metric; /* first undeclared name recorded, if any */
    int oom;
};

void sb_recorder_init(sb_recorder *rec, const sb_metric_def *defs);
void sb_recorder_reset(sb_recorder *rec); /* drop samples, keep memory */
void sb_recorder_free(sb_recorder *rec);
/* Samples of a metric (NULL with *n = 0 if none). */
const double *sb_recorder_samples(const sb_recorder *rec, const char *metric, int *n);

#endif
