/* The measurement engine with a fake, CPU-only scenario: stopping rule, warm-up, paired
 * references, delta rows, validation failures and Ctrl-C. Also driven by the NVTX test
 * (tests/cli/test_nvtx.py), which records the ranges this binary opens. */
#include "cmocka_all.h"

#include <string.h>

#include "base/error.h"
#include "engine/clock_watch.h"
#include "engine/measure.h"
#include "scenarios/recorder.h"
#include "scenarios/registry.h"
#include "fake_scenario.h"

static const sb_variant variants[] = {
    {"async", "", 0, NULL, 0},
    {"sync", "", 1, "async", 1},
    {NULL, NULL, 0, NULL, 0},
};
static const sb_metric_def metrics[] = {
    FAKE_WALL_METRIC,
    {"over", "us", SB_LOWER, "over"},
    {"over_pct", "%", SB_LOWER, "over %"},
    {NULL, NULL, 0, NULL},
};
static const sb_delta_def delta = {"wall", "over", "over_pct", 0};

/* What the fake did, in order: 'a'/'s' = a repetition of async/sync, 'v' = validate. */
static char trace[4096];
static int ntrace;
static int fail_validation_of = -1;
static int setups, teardowns;
static double noise;       /* relative alternating noise on wall */
static int recording = -1; /* the fake recording switch's state; -1: never switched */

static int setup(sb_run *r)
{
    (void)r;
    setups++;
    return 0;
}

static int measure(sb_run *r, sb_recorder *rec)
{
    /* async: 10 * p; sync: 10 * p + 4; drifting upward by 0.5 each call so that only a
     * paired difference recovers the 4 exactly */
    static int calls;
    double drift = 0.5 * calls++;
    double base = 10.0 * (double)sb_run_param(r, "p") + drift;
    double v = sb_run_mode(r) == 1 ? base + 4 : base;
    v *= 1 + ((calls % 2) ? noise : -noise);
    v += recording == 1 ? 1000 : 0; /* a recorded repetition: never counted */
    sb_record(rec, "wall", v);
    if (ntrace < (int)sizeof trace - 1)
        trace[ntrace++] = r->variant == 1 ? 's' : 'a';
    return 0;
}

static int validate(sb_run *r)
{
    trace[ntrace++] = 'v';
    if (r->variant == fail_validation_of)
        return sb_fail(SB_EXIT_FAIL, "validation failed in %s", sb_error_context());
    return 0;
}

static void teardown(sb_run *r)
{
    (void)r;
    teardowns++;
}

FAKE_SCENARIO(&delta, teardown);

/* The engine hands each measurement's rows over as soon as it is done: collect them. */
static int collect(void *ctx, const sb_row *rows, int n)
{
    for (int i = 0; i < n; i++)
        if (sb_results_add(ctx, &rows[i]) != 0)
            return SB_EXIT_FAIL;
    return 0;
}

static int measure_into(sb_measure_cfg cfg, const sb_plan_entry *e, sb_results *res)
{
    cfg.emit = collect;
    cfg.ctx = res;
    return sb_measure_entry(&cfg, e);
}

static const sb_measure_cfg cfg0 = {.device = 0, .capture = 0};

static sb_plan_entry entry(long long p, sb_measure_opts m)
{
    sb_plan_entry e;
    memset(&e, 0, sizeof e);
    e.sc = &fake;
    e.values[0] = p;
    e.variants[0] = 0;
    e.variants[1] = 1;
    e.n_variants = 2;
    e.m = m;
    e.m.iters = 1;
    return e;
}

/* Every test starts from a fresh fake (a cmocka setup). */
static int reset(void **state)
{
    (void)state;
    memset(trace, 0, sizeof trace);
    ntrace = 0;
    fail_validation_of = -1;
    setups = teardowns = 0;
    noise = 0;
    recording = -1;
    sb_stop_requested = 0;
    sb_error_clear();
    return 0;
}

static const sb_row *row(const sb_results *res, const char *variant, const char *metric)
{
    return sb_results_find(res, "fake", variant, "p=2", metric);
}

/* The async variant alone, p=1, measured with `mo`: its row. */
static sb_row async_alone(sb_measure_cfg cfg, sb_measure_opts mo)
{
    sb_plan_entry e = entry(1, mo);
    e.n_variants = 1;
    sb_results res = {0};
    assert_int_equal(measure_into(cfg, &e, &res), 0);
    assert_int_equal(res.n, 1);
    sb_row w = res.rows[0];
    sb_results_free(&res);
    return w;
}

/* Both variants, p=2, two repetitions each: what the engine returned. */
static int both_twice(sb_results *res)
{
    sb_measure_opts mo = {
        .warmup = 0, .min_reps = 2, .max_reps = 2, .max_time_s = 1, .target_cv = 1};
    sb_plan_entry e = entry(2, mo);
    return measure_into(cfg0, &e, res);
}

static void paired_deltas_cancel_drift(void **state)
{
    (void)state;
    sb_measure_opts mo = {
        .warmup = 2, .min_reps = 6, .max_reps = 6, .max_time_s = 10, .target_cv = 1e-9};
    sb_plan_entry e = entry(2, mo);
    sb_results res = {0};
    assert_int_equal(measure_into(cfg0, &e, &res), 0);
    assert_int_equal(setups, 1);
    assert_int_equal(teardowns, 1);
    /* warm-up 2, 6 reps, validate; then warm-up 2 and 6 pairs in alternating order */
    assert_string_equal(trace, "aaaaaaaav"
                               "ss"
                               "assaassaassa"
                               "v");
    const sb_row *w = row(&res, "async", "wall");
    assert_non_null(w);
    assert_int_equal(w->reps, 6);
    assert_null(row(&res, "async", "over")); /* the reference has no delta rows */
    const sb_row *o = row(&res, "sync", "over");
    assert_non_null(o);
    /* neighbours differ by 4 +/- one drift step; alternating the order cancels the drift */
    assert_float_equal(o->st.min, 3.5, 1e-9);
    assert_float_equal(o->st.max, 4.5, 1e-9);
    assert_float_equal(o->st.mean, 4.0, 1e-9);
    assert_float_equal(o->st.median, 4.0, 1e-9);
    assert_non_null(row(&res, "sync", "over_pct"));
    assert_int_equal(res.n, 1 + 3);
    sb_results_free(&res);
}

/* The audit's recording switch in the fake: 'R' on, 'r' off. */
static int fake_recording(int on)
{
    recording = on;
    trace[ntrace++] = on ? 'R' : 'r';
    return 0;
}

/* Both variants, p=2, a warm-up and two repetitions each, with recording turns by `fn`. */
static int with_turns(sb_recording_fn fn, sb_results *res)
{
    sb_measure_opts mo = {
        .warmup = 1, .min_reps = 2, .max_reps = 2, .max_time_s = 10, .target_cv = 1e-9};
    sb_plan_entry e = entry(2, mo);
    sb_measure_cfg cfg = cfg0;
    cfg.recording = fn;
    return measure_into(cfg, &e, res);
}

/* Recording turns: each counted repetition (a pair, with a reference) comes after one as long
 * with the recording on, whose samples are not counted; the recording is left on. */
static void recording_turns_count_the_unrecorded(void **state)
{
    (void)state;
    sb_results res = {0};
    assert_int_equal(with_turns(fake_recording, &res), 0);
    /* warm-up (untouched), two turns, the recording left on, validate; the same paired */
    assert_string_equal(trace, "a"
                               "RaraRaraR"
                               "v"
                               "s"
                               "RasrasRsarsaR"
                               "v");
    assert_int_equal(recording, 1);
    const sb_row *w = row(&res, "async", "wall");
    assert_non_null(w);
    assert_int_equal(w->reps, 2);
    assert_true(w->st.max < 1000); /* the recorded repetitions' samples are not among them */
    const sb_row *o = row(&res, "sync", "over");
    assert_non_null(o);
    assert_true(o->st.max < 1000 && o->st.min > 0);
    sb_results_free(&res);
}

/* A library that will not switch (not recording) fails the measurement, in one line. */
static int refusing_recording(int on)
{
    (void)on;
    return -1;
}

static void recording_turns_refused_fail(void **state)
{
    (void)state;
    sb_results res = {0};
    assert_int_equal(with_turns(refusing_recording, &res), SB_EXIT_FAIL);
    assert_non_null(strstr(sb_error_message(), "would not switch its recording"));
    assert_int_equal(res.n, 0);
    sb_results_free(&res);
}

static void stops_at_target_cv(void **state)
{
    (void)state;
    sb_row w = async_alone(
        cfg0,
        (sb_measure_opts){
            .warmup = 0, .min_reps = 3, .max_reps = 1000, .max_time_s = 100, .target_cv = 50});
    /* the drift keeps the cv far under 50 %: stop as soon as min-reps is met */
    assert_int_equal(w.reps, 3);
    assert_string_equal(w.flags, "");
}

static void stops_at_max_reps_when_noisy(void **state)
{
    (void)state;
    noise = 0.5;
    sb_row w = async_alone(
        cfg0,
        (sb_measure_opts){
            .warmup = 0, .min_reps = 2, .max_reps = 25, .max_time_s = 100, .target_cv = 0.001});
    assert_int_equal(w.reps, 25);
    assert_true(w.st.cv > 10);
    assert_string_equal(w.flags, "noisy"); /* cv stayed above the target */
}

static void stops_at_time_budget(void **state)
{
    (void)state;
    noise = 0.5;
    sb_row w = async_alone(cfg0, (sb_measure_opts){.warmup = 0,
                                                   .min_reps = 4,
                                                   .max_reps = 1000000,
                                                   .max_time_s = 1e-9,
                                                   .target_cv = 0.001});
    assert_int_equal(w.reps, 4); /* budget spent at once: min-reps still holds */
}

static void failed_validation_keeps_earlier_rows(void **state)
{
    (void)state;
    fail_validation_of = 1;
    sb_results res = {0};
    assert_int_equal(both_twice(&res), SB_EXIT_FAIL);
    assert_string_equal(sb_error_message(), "validation failed in fake/sync p=2");
    assert_non_null(row(&res, "async", "wall"));
    assert_null(row(&res, "sync", "wall"));
    assert_int_equal(teardowns, 1);
    sb_results_free(&res);
}

static void interrupt_stops_between_measurements(void **state)
{
    (void)state;
    sb_stop_requested = 1;
    sb_results res = {0};
    assert_int_equal(both_twice(&res), SB_EXIT_INTERRUPT);
    assert_int_equal(res.n, 0);
    assert_int_equal(teardowns, 1);
    sb_results_free(&res);
}

static void throttle_detection(void **state)
{
    (void)state;
    sb_clock_sample a = {1, 1980, SB_NVML_REASON_GPU_IDLE}, b = {1, 1980, 0};
    assert_false(sb_clock_throttled(&a, &b)); /* idle is no throttle */
    b.sm_mhz = 1890;                          /* -4.5 % */
    assert_false(sb_clock_throttled(&a, &b));
    b.sm_mhz = 1870; /* -5.6 % */
    assert_true(sb_clock_throttled(&a, &b));
    b.sm_mhz = 1980;
    b.reasons = SB_NVML_REASON_SW_POWER_CAP;
    assert_true(sb_clock_throttled(&a, &b));
    b.reasons = SB_NVML_REASON_APP_CLOCKS;
    assert_false(sb_clock_throttled(&a, &b));
    b.valid = 0; /* no NVML: no verdict */
    b.reasons = SB_NVML_REASON_HW_THERMAL;
    assert_false(sb_clock_throttled(&a, &b));
}

static int fake_clocks(int device, sb_clock_sample *out)
{
    static int calls;
    (void)device;
    /* before: 1980 MHz; after: 1700 MHz */
    *out = (sb_clock_sample){1, calls++ % 2 ? 1700u : 1980u, 0};
    return 0;
}

static void throttled_rows_are_flagged(void **state)
{
    (void)state;
    sb_measure_cfg cfg = {.sample_clocks = fake_clocks};
    sb_row w = async_alone(
        cfg, (sb_measure_opts){
                 .warmup = 0, .min_reps = 2, .max_reps = 2, .max_time_s = 1, .target_cv = 100});
    assert_string_equal(w.flags, "throttled");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(paired_deltas_cancel_drift, reset),
        cmocka_unit_test_setup(recording_turns_count_the_unrecorded, reset),
        cmocka_unit_test_setup(recording_turns_refused_fail, reset),
        cmocka_unit_test_setup(stops_at_target_cv, reset),
        cmocka_unit_test_setup(stops_at_max_reps_when_noisy, reset),
        cmocka_unit_test_setup(stops_at_time_budget, reset),
        cmocka_unit_test_setup(failed_validation_keeps_earlier_rows, reset),
        cmocka_unit_test_setup(interrupt_stops_between_measurements, reset),
        cmocka_unit_test(throttle_detection),
        cmocka_unit_test_setup(throttled_rows_are_flagged, reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
