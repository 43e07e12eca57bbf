/* The multi-GPU scenarios' CPU side: the collective's per-GPU wait bookkeeping and what it
 * records, the `gpus` parameter, and the plan against the machine's GPUs (entries taken out
 * with a note, more GPUs asked than present, each distinct entry's own check once) and the
 * --list note. */
#include "cmocka_all.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "cli_args.h"
#include "cmd/list.h"
#include "cmd/run.h"
#include "scenarios/recorder.h"
#include "scenarios/multi_gpu.h"
#include "scenarios/rank_waits.h"
#include "scenarios/registry.h"
#include "suite/gpus.h"
#include "suite/plan.h"

static void summary_of_ranks(void **state)
{
    (void)state;
    /* 3 ranks, 10 steps: rank 2 the straggler; the job ran from 100 (rank 1's start) to 1150
     * (rank 2's end) */
    sb_rank_time t[3] = {
        {.start = 110, .end = 1100, .wait_us = 500, .syncs = 10},
        {.start = 100, .end = 1120, .wait_us = 700, .syncs = 10},
        {.start = 105, .end = 1150, .wait_us = 300, .syncs = 10},
    };
    sb_rank_summary s;
    sb_rank_summarize(t, 3, 2, 10, &s);
    assert_float_equal(s.step_us, 105.0, 1e-9);
    assert_float_equal(s.wait_us[0], 50.0, 1e-9);
    assert_float_equal(s.wait_us[1], 70.0, 1e-9);
    assert_float_equal(s.wait_us[2], 30.0, 1e-9);
    assert_float_equal(s.fast_wait_us, 60.0, 1e-9); /* ranks 0 and 1, not the straggler */
    assert_float_equal(s.straggler_wait_us, 30.0, 1e-9);
    assert_float_equal(s.syncs_per_step, 1.0, 1e-9);

    /* every-n: 2 readbacks in 20 steps on each of 2 ranks; rank 0 the straggler */
    sb_rank_time u[2] = {{0, 400, 40, 2}, {1, 380, 100, 2}};
    sb_rank_summarize(u, 2, 0, 20, &s);
    assert_float_equal(s.step_us, 20.0, 1e-9);
    assert_float_equal(s.fast_wait_us, 5.0, 1e-9);
    assert_float_equal(s.straggler_wait_us, 2.0, 1e-9);
    assert_float_equal(s.syncs_per_step, 0.1, 1e-12);
}

/* What sb_rank_record writes is what the collective scenario declares: a wait per GPU that is
 * there, none for the GPUs that are not. */
static void recorded_metrics_are_the_declared_ones(void **state)
{
    (void)state;
    const sb_scenario *sc = sb_scenario_find("collective");
    assert_non_null(sc);
    for (int n = 2; n <= SB_MAX_GPUS; n++) {
        sb_recorder rec;
        sb_recorder_init(&rec, sc->metrics);
        sb_rank_time t[SB_MAX_GPUS];
        for (int g = 0; g < n; g++)
            t[g] = (sb_rank_time){0, 100, 10.0 * g, 1};
        sb_rank_summary s;
        sb_rank_summarize(t, n, n - 1, 1, &s);
        sb_rank_record(&rec, &s, n);
        assert_null(rec.bad_metric);
        int k;
        for (int g = 0; g < SB_MAX_GPUS; g++) {
            const double *x = sb_recorder_samples(&rec, sb_gpu_wait_metric[g], &k);
            if (g < n) {
                assert_int_equal(k, 1);
                assert_float_equal(x[0], 10.0 * g, 1e-9);
            } else {
                assert_int_equal(k, 0);
            }
        }
        const double *x = sb_recorder_samples(&rec, "straggler_wait_us", &k);
        assert_float_equal(x[0], 10.0 * (n - 1), 1e-9);
        sb_recorder_free(&rec);
    }
}

static int plan_for(sb_plan *p, const char *const *args)
{
    sb_options o;
    int rc = parse_args(&o, NULL, args);
    return rc ? rc : sb_cli_plan(&o, p);
}

#define PLAN(p, ...) plan_for(p, (const char *const[]){__VA_ARGS__, NULL})

static void gpus_parameter(void **state)
{
    (void)state;
    sb_plan p;
    assert_int_equal(
        PLAN(&p, "--scenario", "collective", "--set", "gpus=all,2,8", "--set", "straggler_us=0"),
        0);
    assert_int_equal(p.n, 3);
    int want[3] = {0, 2, 8};
    for (int i = 0; i < 3; i++) {
        sb_param_values pv = sb_plan_params(&p.entries[i]);
        assert_int_equal(sb_gpus_asked(&pv), want[i]);
    }
    sb_plan_free(&p);
    assert_int_equal(sb_gpus_for(0, 1), 1);
    assert_int_equal(sb_gpus_for(0, 4), 4);
    assert_int_equal(sb_gpus_for(0, 16), SB_MAX_GPUS); /* all: at most 8 */
    assert_int_equal(sb_gpus_for(3, 2), 3);            /* a number is what it asks for */
    const char *bad[] = {"0", "1", "9", "-2", "two"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char set[32];
        snprintf(set, sizeof set, "gpus=%s", bad[i]);
        assert_int_equal(PLAN(&p, "--scenario", "cross-device", "--set", set), SB_EXIT_USAGE);
        assert_non_null(strstr(sb_error_message(), "unknown value"));
        assert_non_null(strstr(sb_error_message(), "(one of: all, 2, 3, 4, 5, 6, 7, 8)"));
    }
}

static int entries_of(const sb_plan *p, const char *scenario)
{
    int n = 0;
    for (int i = 0; i < p->n; i++)
        n += !strcmp(p->entries[i].sc->name, scenario);
    return n;
}

static void one_gpu_skips_with_a_note(void **state)
{
    (void)state;
    sb_plan p;
    char note[512];
    assert_int_equal(PLAN(&p, "--scenario", "small-h2d,collective,cross-device"), 0);
    assert_true(sb_plan_multi_gpu(&p));
    assert_int_equal(entries_of(&p, "collective"), 3); /* straggler_us=0,100,1000 */
    assert_int_equal(sb_plan_fit_gpus(&p, 1, note, sizeof note), 0);
    assert_int_equal(p.n, 1);
    assert_string_equal(p.entries[0].sc->name, "small-h2d");
    assert_false(sb_plan_multi_gpu(&p));
    assert_string_equal(note, "this machine has 1 GPU: skipped collective (needs 2 or more GPUs), "
                              "cross-device (needs 2 or more GPUs)");
    sb_plan_free(&p);

    /* only multi-GPU entries: nothing left, and no error */
    assert_int_equal(PLAN(&p, "--scenario", "cross-device"), 0);
    assert_int_equal(sb_plan_fit_gpus(&p, 0, note, sizeof note), 0);
    assert_int_equal(p.n, 0);
    assert_string_equal(note,
                        "this machine has 0 GPUs: skipped cross-device (needs 2 or more GPUs)");
    sb_plan_free(&p);

    /* two GPUs: everything stays */
    assert_int_equal(PLAN(&p, "--scenario", "small-h2d,collective,cross-device"), 0);
    int before = p.n;
    assert_int_equal(sb_plan_fit_gpus(&p, 2, note, sizeof note), 0);
    assert_int_equal(p.n, before);
    assert_string_equal(note, "");
    sb_plan_free(&p);

    assert_int_equal(PLAN(&p, "--scenario", "small-h2d,copy"), 0);
    assert_false(sb_plan_multi_gpu(&p));
    sb_plan_free(&p);
}

static void more_gpus_asked_than_present_is_bad_input(void **state)
{
    (void)state;
    sb_plan p;
    char note[512] = "x";
    assert_int_equal(
        PLAN(&p, "--scenario", "collective", "--set", "gpus=3", "--set", "straggler_us=100"), 0);
    assert_int_equal(sb_plan_fit_gpus(&p, 2, note, sizeof note), SB_EXIT_USAGE);
    assert_string_equal(sb_error_message(),
                        "collective gpus=3;work_us=100;straggler_us=100;every=10: asks for 3 GPUs, "
                        "this machine has 2 (gpus=all takes every visible one)");
    sb_plan_free(&p);
    /* asked by number on a one-GPU machine: an error too, not a skip */
    assert_int_equal(PLAN(&p, "--scenario", "cross-device", "--set", "gpus=2"), 0);
    sb_error_clear();
    assert_int_equal(sb_plan_fit_gpus(&p, 1, note, sizeof note), SB_EXIT_USAGE);
    assert_non_null(strstr(sb_error_message(), "asks for 2 GPUs, this machine has 1"));
    sb_plan_free(&p);
}

/* sb_plan_check_gpus on a scenario of this test's own: each distinct (GPUs, variants) entry is
 * checked once, with the GPUs it drives, and a failing check stops the run. */
static int checks, check_gpus[16], check_variants[16], fail_on;

static int fake_check(const sb_param_values *p, const int *v, int n_variants, int gpus)
{
    (void)p;
    check_gpus[checks] = gpus;
    check_variants[checks] = n_variants ? v[n_variants - 1] : -1;
    checks++;
    return gpus == fail_on ? sb_fail(SB_EXIT_NODEV, "fake: %d GPUs do not work", gpus) : 0;
}

static const char *const fake_gpus[] = {"all", "2", "3", "4", "5", "6", "7", "8", NULL};
static const sb_param_def fake_params[] = {
    {"gpus", SB_PARAM_ENUM, "all", "", 0, 0, fake_gpus},
    {"x", SB_PARAM_INT, "1", "", 1, 9, NULL},
    {NULL, 0, NULL, NULL, 0, 0, NULL},
};
static const sb_variant fake_variants[] = {
    {"a", "", 0, NULL, 0}, {"b", "", 0, NULL, 1}, {NULL, NULL, 0, NULL, 0}};
static const sb_multi_gpu fake_multi = {2, sb_gpus_asked, fake_check};
static const sb_scenario fake = {
    .name = "fake", .params = fake_params, .variants = fake_variants, .multi = &fake_multi};

static sb_plan_entry fake_entry(int gpus_choice, int x, int variant)
{
    sb_plan_entry e;
    memset(&e, 0, sizeof e);
    e.sc = &fake;
    e.values[0] = gpus_choice;
    e.values[1] = x;
    e.variants[0] = variant;
    e.n_variants = 1;
    return e;
}

static void each_distinct_entry_checked_once(void **state)
{
    (void)state;
    sb_plan_entry entries[] = {
        fake_entry(0, 1, 0), fake_entry(0, 2, 0), /* x differs: the check does not read it */
        fake_entry(0, 3, 1),                      /* another variant */
        fake_entry(1, 1, 0),                      /* gpus=2: 2 GPUs, as `all` on 2 is */
        fake_entry(2, 1, 0),                      /* gpus=3 */
    };
    sb_plan p = {entries, 5, 5};
    checks = 0;
    fail_on = -1;
    assert_int_equal(sb_plan_check_gpus(&p, 2), 0);
    assert_int_equal(checks, 3);
    assert_int_equal(check_gpus[0], 2);
    assert_int_equal(check_variants[1], 1);
    assert_int_equal(check_gpus[2], 3);
    /* on 4 GPUs `all` is 4, no longer gpus=2's 2 */
    checks = 0;
    assert_int_equal(sb_plan_check_gpus(&p, 4), 0);
    assert_int_equal(checks, 4);
    /* a failing check: its code and line */
    checks = 0;
    fail_on = 3;
    sb_error_clear();
    assert_int_equal(sb_plan_check_gpus(&p, 2), SB_EXIT_NODEV);
    assert_string_equal(sb_error_message(), "fake: 3 GPUs do not work");
}

static void list_notes_the_gpus_needed(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    sb_print_list(f);
    fclose(f);
    const char *note = "  needs 2 or more GPUs: skipped, with a note, on a machine with fewer\n";
    for (int s = 0; sb_scenarios[s]; s++) {
        char head[256];
        snprintf(head, sizeof head, "%s%s\n  %s\n", s ? "\n" : "", sb_scenarios[s]->name,
                 sb_scenarios[s]->summary);
        const char *at = strstr(text, head);
        assert_non_null(at);
        int noted = !strncmp(at + strlen(head), note, strlen(note));
        assert_int_equal(noted, sb_scenarios[s]->multi != NULL);
    }
    assert_non_null(sb_scenario_find("collective")->multi);
    assert_non_null(sb_scenario_find("cross-device")->multi);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(summary_of_ranks),
        cmocka_unit_test(recorded_metrics_are_the_declared_ones),
        cmocka_unit_test(gpus_parameter),
        cmocka_unit_test(one_gpu_skips_with_a_note),
        cmocka_unit_test(more_gpus_asked_than_present_is_bad_input),
        cmocka_unit_test(each_distinct_entry_checked_once),
        cmocka_unit_test(list_notes_the_gpus_needed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
