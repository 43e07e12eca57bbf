/* stats.c and the engine's paired deltas, on values worked out by hand. */
#include "cmocka_all.h"

#include <math.h>

#include "engine/measure.h"
#include "base/stats.h"

static void odd_count(void **state)
{
    (void)state;
    const double x[] = {5, 1, 4, 2, 3};
    sb_stats s;
    assert_int_equal(sb_stats_compute(x, 5, &s), 0);
    assert_int_equal(s.n, 5);
    assert_float_equal(s.median, 3.0, 1e-12);
    assert_float_equal(s.mean, 3.0, 1e-12);
    assert_float_equal(s.stddev, sqrt(2.5), 1e-12); /* sample stddev, n - 1 */
    assert_float_equal(s.min, 1.0, 1e-12);
    assert_float_equal(s.max, 5.0, 1e-12);
    assert_float_equal(s.p05, 1.2, 1e-12); /* 1 + 0.05 * 4 * (2 - 1) */
    assert_float_equal(s.p95, 4.8, 1e-12);
    assert_float_equal(s.cv, 100.0 * sqrt(2.5) / 3.0, 1e-9);
    /* the input is left alone */
    assert_float_equal(x[0], 5.0, 0);
}

static void even_count_median(void **state)
{
    (void)state;
    const double x[] = {4, 1, 3, 2};
    sb_stats s;
    sb_stats_compute(x, 4, &s);
    assert_float_equal(s.median, 2.5, 1e-12);
}

static void one_sample(void **state)
{
    (void)state;
    const double x[] = {7.5};
    sb_stats s;
    assert_int_equal(sb_stats_compute(x, 1, &s), 0);
    assert_float_equal(s.median, 7.5, 0);
    assert_float_equal(s.p05, 7.5, 0);
    assert_float_equal(s.p95, 7.5, 0);
    assert_float_equal(s.stddev, 0, 0);
    assert_float_equal(s.cv, 0, 0);
}

static void no_samples(void **state)
{
    (void)state;
    sb_stats s;
    assert_int_not_equal(sb_stats_compute(NULL, 0, &s), 0);
}

static void percentile_interpolates(void **state)
{
    (void)state;
    const double s[] = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110};
    assert_float_equal(sb_percentile_sorted(s, 11, 0.0), 10, 1e-12);
    assert_float_equal(sb_percentile_sorted(s, 11, 1.0), 110, 1e-12);
    assert_float_equal(sb_percentile_sorted(s, 11, 0.25), 35, 1e-12);
    assert_float_equal(sb_percentile_sorted(s, 11, 0.95), 105, 1e-12);
}

static void cv_matches_stats(void **state)
{
    (void)state;
    const double x[] = {10, 11, 9, 10.5, 9.5};
    sb_stats s;
    sb_stats_compute(x, 5, &s);
    assert_float_equal(sb_cv_percent(x, 5), s.cv, 1e-12);
    assert_float_equal(sb_cv_percent(x, 1), 0, 0);
}

static void paired_deltas(void **state)
{
    (void)state;
    const double x[] = {15, 14, 16};
    const double ref[] = {10, 7, 8};
    double abs[3], pct[3];
    sb_deltas(x, ref, 3, abs, pct);
    assert_float_equal(abs[0], 5, 1e-12);
    assert_float_equal(abs[1], 7, 1e-12);
    assert_float_equal(abs[2], 8, 1e-12);
    assert_float_equal(pct[0], 50, 1e-12);
    assert_float_equal(pct[1], 100, 1e-12);
    assert_float_equal(pct[2], 100, 1e-12);
}

/* The median's distribution-free 95 % interval: with 20 values the 6th and the 15th (1 - 2 P(X <= 5)
 * = 95.9 % for X ~ Binomial(20, 1/2); the 7th and 14th would hold 88.5 %); under 6 values the
 * lowest and the highest. */
static void median_interval_ranks(void **state)
{
    (void)state;
    assert_int_equal(sb_median_ci_rank(20), 5);
    assert_int_equal(sb_median_ci_rank(10), 1);
    assert_int_equal(sb_median_ci_rank(6), 0);
    assert_int_equal(sb_median_ci_rank(5), 0);
    assert_int_equal(sb_median_ci_rank(1), 0);
    assert_int_equal(sb_median_ci_rank(0), 0);
    assert_int_equal(sb_median_ci_rank(100), 39);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(median_interval_ranks),
        cmocka_unit_test(odd_count),
        cmocka_unit_test(even_count_median),
        cmocka_unit_test(one_sample),
        cmocka_unit_test(no_samples),
        cmocka_unit_test(percentile_interpolates),
        cmocka_unit_test(cv_matches_stats),
        cmocka_unit_test(paired_deltas),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
