/* The gate's decision on raw samples, on synthetic samples with known answers. */
#include "cmocka_all.h"

#include <math.h>
#include <stdint.h>

#include "compare/gate.h"

#define N 40

/* n samples around `center` with a relative spread of `spread` (uniform, seeded). */
static void samples(double *x, int n, double center, double spread, uint64_t seed)
{
    for (int i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double)(seed >> 11) / 9007199254740992.0; /* [0, 1) */
        x[i] = center * (1 + spread * (2 * u - 1));
    }
}

static sb_gate_result decide(const double *b, const double *c, int n, int higher)
{
    sb_gate_opts o;
    sb_gate_defaults(&o);
    sb_gate_result r;
    assert_int_equal(sb_gate_decide(b, n, c, n, higher, &o, &r), 0);
    return r;
}

/* Base and current samples around their centers with the same relative spread, decided. */
static sb_gate_result decide_around(double base, double cur, double spread, int higher)
{
    double b[N], c[N];
    samples(b, N, base, spread, 1);
    samples(c, N, cur, spread, 2);
    return decide(b, c, N, higher);
}

static void identical_is_same(void **state)
{
    (void)state;
    sb_gate_result r = decide_around(100, 100, 0.01, 0);
    assert_int_equal(r.verdict, SB_GATE_SAME);
    assert_true(fabs(r.change_pct) < 1);
    assert_true(r.lo_pct <= r.change_pct && r.change_pct <= r.hi_pct);
}

static void tight_ten_percent_is_regression(void **state)
{
    (void)state;
    sb_gate_result r = decide_around(100, 110, 0.01, 0); /* lower is better: 10 % slower */
    assert_int_equal(r.verdict, SB_GATE_REGRESSION);
    assert_true(r.change_pct > 9 && r.change_pct < 11);
    /* the same data for a higher-is-better metric is an improvement */
    assert_int_equal(decide_around(100, 110, 0.01, 1).verdict, SB_GATE_FASTER);
}

static void small_significant_change_is_slower(void **state)
{
    (void)state;
    assert_int_equal(decide_around(100, 102, 0.005, 0).verdict,
                     SB_GATE_SLOWER); /* 2 %: real, under the 5 % threshold */
}

static void huge_spread_is_inconclusive(void **state)
{
    (void)state;
    sb_gate_result r = decide_around(100, 100, 0.8, 0);
    assert_int_equal(r.verdict, SB_GATE_INCONCLUSIVE); /* never "same" */
    assert_true(r.hi_pct - r.lo_pct > 10);
}

static void faster_is_faster(void **state)
{
    (void)state;
    assert_int_equal(decide_around(100, 80, 0.01, 0).verdict, SB_GATE_FASTER);
}

static void too_few_repetitions_is_inconclusive(void **state)
{
    (void)state;
    double b[3] = {100, 100, 100}, c[3] = {150, 150, 150};
    assert_int_equal(decide(b, c, 3, 0).verdict, SB_GATE_INCONCLUSIVE);
}

static void zero_median_is_the_callers(void **state)
{
    (void)state;
    double b[5] = {0, 0, 0, 1, -1}, c[5] = {1, 1, 1, 1, 1};
    sb_gate_opts o;
    sb_gate_defaults(&o);
    sb_gate_result r;
    assert_int_equal(sb_gate_decide(b, 5, c, 5, 0, &o, &r), -1);
}

static void medians_as_numpy(void **state)
{
    (void)state;
    double b[6] = {9, 1, 4, 2, 3, 100}, c[5] = {5, 3, 4, 2, 50};
    sb_gate_opts o;
    sb_gate_defaults(&o);
    sb_gate_result r;
    assert_int_equal(sb_gate_decide(b, 6, c, 5, 0, &o, &r), 0);
    /* median(b) = (3 + 4) / 2 = 3.5, median(c) = 4: +14.29 % */
    assert_float_equal(r.change_pct, 100.0 * (4 - 3.5) / 3.5, 1e-9);
    assert_float_equal(b[5], 100, 0); /* inputs untouched */
}

static void same_files_same_verdict(void **state)
{
    (void)state;
    double b[N], c[N];
    samples(b, N, 100, 0.3, 1);
    samples(c, N, 104, 0.3, 2);
    sb_gate_result r1 = decide(b, c, N, 0), r2 = decide(b, c, N, 0);
    assert_int_equal(r1.verdict, r2.verdict);
    assert_true(r1.lo_pct == r2.lo_pct && r1.hi_pct == r2.hi_pct);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(identical_is_same),
        cmocka_unit_test(tight_ten_percent_is_regression),
        cmocka_unit_test(small_significant_change_is_slower),
        cmocka_unit_test(huge_spread_is_inconclusive),
        cmocka_unit_test(faster_is_faster),
        cmocka_unit_test(too_few_repetitions_is_inconclusive),
        cmocka_unit_test(zero_median_is_the_callers),
        cmocka_unit_test(same_files_same_verdict),
        cmocka_unit_test(medians_as_numpy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
