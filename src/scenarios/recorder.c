#include "scenarios/recorder.h"

#include <stdlib.h>
#include <string.h>

void sb_recorder_init(sb_recorder *rec, const sb_metric_def *defs)
{
    memset(rec, 0, sizeof *rec);
    rec->defs = defs;
    while (defs[rec->n_metrics].name && rec->n_metrics < SB_MAX_METRICS)
        rec->n_metrics++;
}

void sb_recorder_reset(sb_recorder *rec)
{
    for (int i = 0; i < rec->n_metrics; i++)
        rec->count[i] = 0;
}

void sb_recorder_free(sb_recorder *rec)
{
    for (int i = 0; i < rec->n_metrics; i++)
        free(rec->samples[i]);
    memset(rec, 0, sizeof *rec);
}

static int metric_index(const sb_recorder *rec, const char *metric)
{
    for (int i = 0; i < rec->n_metrics; i++)
        if (strcmp(rec->defs[i].name, metric) == 0)
            return i;
    return -1;
}

void sb_record(sb_recorder *rec, const char *metric, double value)
{
    int i = metric_index(rec, metric);
    if (i < 0) {
        if (!rec->bad_metric)
            rec->bad_metric = metric;
        return;
    }
    if (rec->count[i] == rec->cap[i]) {
        int cap = rec->cap[i] ? rec->cap[i] * 2 : 64;
        double *p = realloc(rec->samples[i], sizeof *p * (size_t)cap);
        if (!p) {
            rec->oom = 1;
            return;
        }
        rec->samples[i] = p;
        rec->cap[i] = cap;
    }
    rec->samples[i][rec->count[i]++] = value;
}

const double *sb_recorder_samples(const sb_recorder *rec, const char *metric, int *n)
{
    int i = metric_index(rec, metric);
    *n = i < 0 ? 0 : rec->count[i];
    return (i < 0 || rec->count[i] == 0) ? NULL : rec->samples[i];
}
