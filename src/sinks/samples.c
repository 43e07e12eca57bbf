/* --samples PATH: every measured repetition, tidy, one line per sample, for the regression
 * gate's statistical test (compare reads X.samples.csv beside X.csv):
 *   run_id,scenario,variant,params,metric,rep,value
 * Paired deltas (overhead_us, wait_us, saving_us, ...) have one value per pair. */
#include "sinks/sink.h"

const char *const sb_samples_columns[] = {"run_id", "scenario", "variant", "params",
                                          "metric", "rep",      "value",   NULL};

static int samples_begin(sb_sink *s, const sb_env *env)
{
    (void)env;
    for (int i = 0; sb_samples_columns[i]; i++)
        fprintf(s->out.f, "%s%s", i ? "," : "", sb_samples_columns[i]);
    fputc('\n', s->out.f);
    return 0;
}

static int samples_row(sb_sink *s, const sb_env *env, const sb_row *row)
{
    FILE *f = s->out.f;
    for (int i = 0; i < row->n_samples; i++) {
        const char *text[] = {env->run_id, row->scenario, row->variant, row->params, row->metric};
        for (size_t k = 0; k < sizeof text / sizeof text[0]; k++) {
            if (k)
                fputc(',', f);
            sb_csv_write_field(f, text[k]);
        }
        fprintf(f, ",%d,%.9g\n", i + 1, row->samples[i]);
    }
    return 0;
}

const sb_sink_ops sb_samples_sink = {
    .name = "samples",
    .begin = samples_begin,
    .row = samples_row,
};
