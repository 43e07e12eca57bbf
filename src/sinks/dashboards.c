/* The history dashboards' formats, drawn from the kept rows at end:
 *   --github-benchmark: github-action-benchmark's `customSmallerIsBetter`, a JSON array of
 *     {"name", "unit", "value", "range", "extra"}; the action takes one direction a file, so
 *     the file holds the rows whose `better` is lower and leaves the higher-is-better ones out
 *     (docs/run.md#history-dashboards);
 *   --bmf: Bencher Metric Format, {"BENCHMARK": {"MEASURE": {"value", "lower_value",
 *     "upper_value"}}}, every row (Bencher keeps a measure's direction on its threshold).
 * A benchmark is named "scenario/variant params" and a measure by the metric. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/error.h"
#include "sinks/sink.h"

#define FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER)

static void bench_name(const sb_row *r, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s%s%s", r->scenario, r->variant, r->params[0] ? " " : "", r->params);
}

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static int dump(sb_sink *s, json_t *root)
{
    int rc = root ? json_dumpf(root, s->out.f, FLAGS) : -1;
    json_decref(root);
    if (rc != 0)
        return sb_fail(SB_EXIT_FAIL, "--%s %s: could not encode the results", s->out.opt,
                       s->out.path);
    fputc('\n', s->out.f);
    return 0;
}

/* One entry of the smaller-is-better array. */
static json_t *gh_entry(const sb_row *r)
{
    char name[400], range[64], extra[160];
    char name_m[440];
    bench_name(r, name, sizeof name);
    snprintf(name_m, sizeof name_m, "%s %s", name, r->metric);
    snprintf(range, sizeof range, "± %.4g", r->st.stddev);
    snprintf(extra, sizeof extra, "median of %d reps x %lld iters; cv %.3g %%%s%s", r->reps,
             r->iters, r->st.cv, r->flags[0] ? "; " : "", r->flags);
    json_t *o = json_pack("{s:s, s:s}", "name", name_m, "unit", r->unit);
    json_object_set_new(o, "value", num(r->st.median));
    json_object_set_new(o, "range", json_string(range));
    json_object_set_new(o, "extra", json_string(extra));
    return o;
}

static int gh_end(sb_sink *s, const sb_env *env)
{
    (void)env;
    const sb_results *res = s->state;
    json_t *all = json_array();
    for (int i = 0; all && i < res->n; i++)
        if (res->rows[i].better == SB_LOWER && isfinite(res->rows[i].st.median))
            json_array_append_new(all, gh_entry(&res->rows[i]));
    return dump(s, all);
}

static int bmf_end(sb_sink *s, const sb_env *env)
{
    (void)env;
    const sb_results *res = s->state;
    json_t *all = json_object();
    for (int i = 0; all && i < res->n; i++) {
        const sb_row *r = &res->rows[i];
        if (!isfinite(r->st.median))
            continue; /* BMF's value is a number */
        char name[400];
        bench_name(r, name, sizeof name);
        json_t *bench = json_object_get(all, name);
        if (!bench) {
            bench = json_object();
            json_object_set_new(all, name, bench);
        }
        json_t *m = json_object();
        json_object_set_new(m, "value", json_real(r->st.median));
        if (isfinite(r->st.p05) && isfinite(r->st.p95)) {
            json_object_set_new(m, "lower_value", json_real(r->st.p05));
            json_object_set_new(m, "upper_value", json_real(r->st.p95));
        }
        json_object_set_new(bench, r->metric, m);
    }
    return dump(s, all);
}

const sb_sink_ops sb_github_benchmark_sink = {
    .name = "github-benchmark",
    SB_SINK_KEEPS_ROWS,
    .end = gh_end,
};

const sb_sink_ops sb_bmf_sink = {
    .name = "bmf",
    SB_SINK_KEEPS_ROWS,
    .end = bmf_end,
};
