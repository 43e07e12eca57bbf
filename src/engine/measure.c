#include "engine/measure.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/env.h"
#include "base/error.h"
#include "engine/clock_watch.h"
#include "engine/stopping.h"
#include "scenarios/recorder.h"
#include "scenarios/registry.h"
#include "gpu/trace.h"

volatile sig_atomic_t sb_stop_requested;

static int check_recorder(const sb_recorder *rec)
{
    if (rec->bad_metric)
        return sb_fail(SB_EXIT_FAIL, "internal: %s recorded undeclared metric '%s'",
                       sb_error_context(), rec->bad_metric);
    if (rec->oom)
        return sb_fail(SB_EXIT_FAIL, "out of memory recording samples in %s", sb_error_context());
    return 0;
}

static double warmup_seconds(const sb_measure_opts *m, const sb_scenario *sc, int first)
{
    if (m->warmup_s >= 0)
        return m->warmup_s;
    return first && sc->warmup_s > SB_DEFAULT_WARMUP_S ? sc->warmup_s : SB_DEFAULT_WARMUP_S;
}

static int warm_up(const sb_measure_opts *m, sb_run *r, sb_recorder *scratch, double seconds)
{
    int rc = 0;
    sb_trace_push("warmup", SB_COLOR_WARMUP);
    double t0 = sb_now_us();
    for (int w = 0; !rc && (w < m->warmup || sb_now_us() - t0 < seconds * 1e6); w++) {
        sb_recorder_reset(scratch);
        rc = r->sc->measure(r, scratch);
        if (!rc)
            rc = check_recorder(scratch);
    }
    sb_trace_pop();
    return rc;
}

/* Repetitions until the stopping rule holds. With a reference variant, every repetition is
 * paired with one of the reference, in alternating order, so that the deltas are differences of
 * neighbours: slow drifts (clocks, temperature) cancel instead of landing in the overhead. With
 * recording turns (sb_measure_cfg), each counted repetition (pair) follows one as long with the
 * audit's recording on, whose samples go to scratch. */
static int repeat(const sb_measure_cfg *cfg, const sb_measure_opts *m, sb_run *r, sb_recorder *rec,
                  int ref_variant, sb_recorder *paired, sb_recorder *scratch)
{
    sb_recording_fn recording = cfg->recording;
    const char *primary = r->sc->metrics[0].name;
    const int variant = r->variant;
    const sb_stopping_ops *rule = cfg->stopping ? cfg->stopping : &sb_stop_by_cv;
    sb_stopping acc;
    int rc = 0;
    sb_trace_push("measure", SB_COLOR_MEASURE);
    rc = cfg->capture ? sb_trace_capture_start() : 0;
    rule->start(&acc, m);
    while (!rc) {
        for (int on = recording ? 1 : 0; on >= 0 && !rc; on--) {
            if (recording && recording(on) != 0) {
                rc = sb_fail(SB_EXIT_FAIL,
                             "%s: the audit's library would not switch its "
                             "recording (recording turns)",
                             sb_error_context());
                break;
            }
            for (int half = 0; half < 2 && !rc; half++) {
                int ref_turn = (half == 0) == (acc.n % 2 == 0);
                if (ref_turn && ref_variant < 0)
                    continue;
                sb_recorder *to = on ? scratch : ref_turn ? paired : rec;
                if (on)
                    sb_recorder_reset(scratch);
                r->variant = ref_turn ? ref_variant : variant;
                rc = r->sc->measure(r, to);
                if (!rc)
                    rc = check_recorder(to);
            }
        }
        r->variant = variant;
        if (rc)
            break;
        int n;
        const double *x = sb_recorder_samples(rec, primary, &n);
        if (n != acc.n + 1) {
            rc = sb_fail(SB_EXIT_FAIL,
                         "internal: %s recorded %d samples of '%s' in one "
                         "repetition",
                         sb_error_context(), n - acc.n, primary);
            break;
        }
        rule->add(&acc, x[n - 1]);
        if (rule->done(&acc))
            break;
    }
    if (recording)
        recording(1); /* as the audit started it */
    int stop_rc = cfg->capture ? sb_trace_capture_stop() : 0;
    sb_trace_pop();
    return rc ? rc : stop_rc;
}

void sb_deltas(const double *x, const double *ref, int n, double *abs, double *pct)
{
    for (int i = 0; i < n; i++) {
        abs[i] = x[i] - ref[i];
        pct[i] = ref[i] != 0 ? 100.0 * abs[i] / ref[i] : 0.0;
    }
}

static int add_row(sb_results *res, const sb_run *r, const char *params, const char *flags,
                   int reps, const sb_metric_def *m, const double *x, int n)
{
    sb_row row;
    memset(&row, 0, sizeof row);
    snprintf(row.scenario, sizeof row.scenario, "%s", r->sc->name);
    snprintf(row.variant, sizeof row.variant, "%s", r->sc->variants[r->variant].name);
    snprintf(row.params, sizeof row.params, "%s", params);
    snprintf(row.metric, sizeof row.metric, "%s", m->name);
    snprintf(row.unit, sizeof row.unit, "%s", m->unit);
    row.iters = r->iters;
    row.reps = reps;
    row.better = m->better;
    snprintf(row.flags, sizeof row.flags, "%s", flags);
    snprintf(row.label, sizeof row.label, "%s", m->label ? m->label : "");
    row.primary = m == &r->sc->metrics[0];
    row.finished = time(NULL);
    row.samples = x;
    row.n_samples = n;
    if (sb_stats_compute(x, n, &row.st) != 0 || sb_results_add(res, &row) != 0)
        return sb_fail(SB_EXIT_FAIL, "out of memory storing results");
    return 0;
}

/* Rows of one finished measurement: every recorded metric, and the paired deltas against the
 * reference variant when the scenario declares them; handed to cfg->emit with their samples. */
static int emit_rows(const sb_measure_cfg *cfg, const sb_run *r, const sb_recorder *rec,
                     const sb_recorder *paired, const char *flags, sb_results *res)
{
    const sb_scenario *sc = r->sc;
    char params[256];
    sb_params_format_all(sc->params, r->params.v, params, sizeof params);
    int reps;
    sb_recorder_samples(rec, sc->metrics[0].name, &reps);

    double *abs = NULL, *pct = NULL;
    int nd = 0;
    if (sc->delta && paired) {
        int nr;
        const double *rx = sb_recorder_samples(paired, sc->delta->metric, &nr);
        const double *x = sb_recorder_samples(rec, sc->delta->metric, &nd);
        if (!rx || !x || nr != nd)
            return sb_fail(SB_EXIT_FAIL,
                           "internal: %s has %d samples of %s against %d of its "
                           "reference",
                           sb_error_context(), nd, sc->delta->metric, nr);
        abs = malloc(sizeof *abs * (size_t)nd);
        pct = malloc(sizeof *pct * (size_t)nd);
        if (!abs || !pct) {
            free(abs);
            free(pct);
            return sb_fail(SB_EXIT_FAIL, "out of memory computing deltas");
        }
        sb_deltas(x, rx, nd, abs, pct);
        for (int i = 0; sc->delta->saving && i < nd; i++) {
            abs[i] = -abs[i];
            pct[i] = -pct[i];
        }
    }
    int rc = 0;
    for (int i = 0; sc->metrics[i].name && !rc; i++) {
        const sb_metric_def *m = &sc->metrics[i];
        int n;
        const double *x = sb_recorder_samples(rec, m->name, &n);
        if (abs && !strcmp(m->name, sc->delta->abs_name))
            rc = add_row(res, r, params, flags, reps, m, abs, nd);
        else if (pct && sc->delta->pct_name && !strcmp(m->name, sc->delta->pct_name))
            rc = add_row(res, r, params, flags, reps, m, pct, nd);
        else if (x)
            rc = add_row(res, r, params, flags, reps, m, x, n);
    }
    if (!rc && cfg->emit)
        rc = cfg->emit(cfg->ctx, res->rows, res->n);
    for (int i = 0; i < res->n; i++)
        res->rows[i].samples = NULL; /* abs and pct are freed below */
    free(abs);
    free(pct);
    return rc;
}

int sb_measure_entry(const sb_measure_cfg *cfg, const sb_plan_entry *e)
{
    const sb_scenario *sc = e->sc;
    sb_run r = {.sc = sc, .params = sb_plan_params(e), .iters = e->m.iters, .device = cfg->device};
    sb_results res = {0};
    char name[512], params[256];
    sb_params_format_all(sc->params, e->values, params, sizeof params);
    snprintf(name, sizeof name, "%s %s", sc->name, params);
    sb_error_set_context(name);

    sb_recorder rec, paired, scratch;
    sb_recorder_init(&rec, sc->metrics);
    sb_recorder_init(&paired, sc->metrics);
    sb_recorder_init(&scratch, sc->metrics);

    int rc = sb_get_host(&r.res, &r.state, sc->state_size);
    if (!rc)
        rc = sc->setup(&r);
    for (int i = 0; i < e->n_variants && !rc; i++) {
        if (sb_stop_requested) {
            rc = SB_EXIT_INTERRUPT;
            break;
        }
        r.variant = e->variants[i];
        const sb_variant *v = &sc->variants[r.variant];
        int ref = v->reference && sc->delta ? sb_variant_index(sc, v->reference) : -1;
        sb_plan_entry_name(e, r.variant, name, sizeof name);
        sb_error_set_context(name);
        sb_recorder_reset(&rec);
        sb_recorder_reset(&paired);

        if (cfg->on_start)
            cfg->on_start(cfg->ctx, e, r.variant);
        sb_trace_push(name, v->is_sync ? SB_COLOR_SYNC : SB_COLOR_ASYNC);
        rc = warm_up(&e->m, &r, &scratch, warmup_seconds(&e->m, sc, i == 0));
        sb_clock_sample before = {0}, after = {0};
        if (!rc && cfg->sample_clocks)
            cfg->sample_clocks(cfg->device, &before);
        if (!rc)
            rc = repeat(cfg, &e->m, &r, &rec, ref, &paired, &scratch);
        if (!rc && cfg->sample_clocks)
            cfg->sample_clocks(cfg->device, &after);
        if (!rc)
            rc = sc->validate(&r);
        sb_trace_pop();
        if (!rc) {
            int n;
            const double *x = sb_recorder_samples(&rec, sc->metrics[0].name, &n);
            int noisy = x && sb_cv_percent(x, n) > e->m.target_cv;
            int throttled = sb_clock_throttled(&before, &after);
            char flags[32];
            snprintf(flags, sizeof flags, "%s%s%s", throttled ? "throttled" : "",
                     throttled && noisy ? ";" : "", noisy ? "noisy" : "");
            res.n = 0;
            rc = emit_rows(cfg, &r, &rec, ref >= 0 ? &paired : NULL, flags, &res);
        }
    }
    if (sc->teardown)
        sc->teardown(&r);
    sb_release_all(&r.res);
    sb_results_free(&res);
    sb_recorder_free(&rec);
    sb_recorder_free(&paired);
    sb_recorder_free(&scratch);
    sb_error_set_context(NULL);
    return rc;
}
