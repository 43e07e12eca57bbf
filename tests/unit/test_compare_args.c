/* `syncbench compare` command line -> sb_compare_request: defaults, every option (--run-noise
 * was documented but missing from the option table), the metric list, and the errors, worded by
 * the shared option machinery (cli/args.c) since compare uses its table. */
#include "cmocka_all.h"

#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "cli/compare_args.h"

#define ARGV(...) ((char *[]){"compare", __VA_ARGS__, NULL})
#define ARGC(...) ((int)(sizeof((char *[]){"compare", __VA_ARGS__}) / sizeof(char *)))
#define PARSE(req, ...) sb_compare_parse_args(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), req)

static void defaults(void **state)
{
    (void)state;
    sb_compare_request req;
    assert_int_equal(PARSE(&req, "base.csv", "cur.csv"), 0);
    assert_string_equal(req.baseline, "base.csv");
    assert_string_equal(req.current, "cur.csv");
    assert_float_equal(req.opts.threshold_pct, 5, 0);
    assert_float_equal(req.opts.noise_k, 3, 0);
    assert_float_equal(req.opts.run_noise_pct, 2, 0);
    assert_int_equal(req.n_metrics, 0);
    assert_null(req.markdown);
    assert_false(req.quiet);
    assert_false(req.help);
    assert_float_equal(req.confidence_pct, 99, 0);
    assert_int_equal(req.rerun_reps, 30);
    assert_null(req.rerun);
    assert_null(req.base_samples);
    assert_null(req.current_samples);
    assert_false(req.subset);
    assert_false(req.strict);
}

static void every_option(void **state)
{
    (void)state;
    sb_compare_request req;
    sb_error_clear();
    assert_int_equal(PARSE(&req, "b.csv", "--run-noise", "0.5", "--threshold=7", "--noise-k", "2",
                           "c.csv", "--metric", "GBps,kernel_us", "--markdown", "x.md", "-q"),
                     0);
    assert_float_equal(req.opts.run_noise_pct, 0.5, 0);
    assert_float_equal(req.opts.threshold_pct, 7, 0);
    assert_float_equal(req.opts.noise_k, 2, 0);
    assert_string_equal(req.baseline, "b.csv");
    assert_string_equal(req.current, "c.csv");
    assert_int_equal(req.n_metrics, 2);
    assert_string_equal(req.metrics[0], "GBps");
    assert_string_equal(req.metrics[1], "kernel_us");
    assert_string_equal(req.metric_arg, "GBps,kernel_us");
    assert_string_equal(req.markdown, "x.md");
    assert_true(req.quiet);
    /* issue 48: 5% is 5 %, pytest-benchmark's and github-action-benchmark's spelling */
    assert_int_equal(PARSE(&req, "b", "c", "--threshold", "5%", "--threshold-for", "GBps=12%,x=3"),
                     0);
    assert_float_equal(req.opts.threshold_pct, 5, 0);
    assert_float_equal(req.threshold_for_pct[0], 12, 0);
    assert_float_equal(req.threshold_for_pct[1], 3, 0);
    assert_int_equal(PARSE(&req, "b", "c", "--threshold", "0.05%"), 0);
    assert_float_equal(req.opts.threshold_pct, 0.05, 0);
    assert_int_equal(PARSE(&req, "b", "c", "--threshold", "0"), 0);
    assert_float_equal(req.opts.threshold_pct, 0, 0);
    assert_int_equal(PARSE(&req, "--run-noise", "0", "b", "c"), 0);
    assert_float_equal(req.opts.run_noise_pct, 0, 0);
    assert_int_equal(PARSE(&req, "--help"), 0);
    assert_true(req.help);
    assert_int_equal(PARSE(&req, "b", "c", "--confidence", "95", "--rerun", "r.ini",
                           "--rerun-reps=50", "--base-samples", "bs.csv", "--current-samples",
                           "cs.csv", "--subset", "--strict"),
                     0);
    assert_float_equal(req.confidence_pct, 95, 0);
    assert_string_equal(req.rerun, "r.ini");
    assert_int_equal(req.rerun_reps, 50);
    assert_string_equal(req.base_samples, "bs.csv");
    assert_string_equal(req.current_samples, "cs.csv");
    assert_true(req.subset);
    assert_true(req.strict);
    assert_string_equal(req.baseline, "b");
    assert_string_equal(req.current, "c");
}

static void bad(int argc, char **argv, const char *want)
{
    sb_compare_request req;
    sb_error_clear();
    assert_int_equal(sb_compare_parse_args(argc, argv, &req), SB_EXIT_USAGE);
    assert_string_equal(sb_error_message(), want);
}

#define BAD(want, ...) bad(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), want)

static void errors(void **state)
{
    (void)state;
    BAD("compare: expected BASELINE.csv CURRENT.csv (see compare --help)", "a.csv");
    BAD("compare: expected BASELINE.csv CURRENT.csv (see compare --help)", "a", "b", "c");
    BAD("compare: --run-noise x: not a number (expected a number from 0 to 1000000)", "a", "b",
        "--run-noise", "x");
    BAD("compare: --run-noise -1: out of range (expected a number from 0 to 1000000)",
        "--run-noise", "-1", "a", "b");
    BAD("compare: --threshold 1e7: out of range (expected 5% or 5, from 0 to 1000000)", "a", "b",
        "--threshold", "1e7");
    /* issue 48: 0.05 meant 0.05 % and turned two clean runs into REGRESSIONs */
    BAD("compare: --threshold 0.05: ambiguous: a bare number is a percentage, and 0.05 reads as "
        "a fraction too; did you mean 5%? (write 0.05% for 0.05 %)",
        "a", "b", "--threshold", "0.05");
    BAD("compare: --threshold-for GBps=0.12: GBps: ambiguous: a bare number is a percentage, and "
        "0.12 reads as a fraction too; did you mean 12%? (write 0.12% for 0.12 %)",
        "a", "b", "--threshold-for", "GBps=0.12");
    BAD("compare: --threshold 5%%: not a number (expected 5% or 5, from 0 to 1000000)", "a", "b",
        "--threshold", "5%%");
    BAD("compare: option '--run-noise' needs a value", "a", "b", "--run-noise");
    BAD("compare: unknown option '--bogus' (see --help)", "a", "b", "--bogus");
    BAD("compare: unknown option '-x' (see --help)", "-x", "a", "b");
    BAD("compare: unknown option '--thresold'; did you mean '--threshold'?", "a", "b", "--thresold",
        "3");
    BAD("compare: --threshold 4: given twice", "a", "b", "--threshold", "3", "--threshold", "4");
    BAD("compare: --strict takes no value", "a", "b", "--strict=1");
    BAD("compare: --confidence 100: out of range (expected a number from 50 to 99.9)", "a", "b",
        "--confidence", "100");
    BAD("compare: --rerun-reps 0: out of range (expected an integer from 1 to 1000000)", "a", "b",
        "--rerun-reps", "0");
    BAD("compare: --rerun-reps 2.5: not a number (expected an integer from 1 to 1000000)", "a", "b",
        "--rerun-reps", "2.5");
    BAD("compare: --metric a,,b: empty metric name", "a", "b", "--metric", "a,,b");
    BAD("compare: --metric : empty metric name", "a", "b", "--metric", "");
    char many[512] = "m";
    for (int i = 0; i < 64; i++)
        strcat(many, ",m");
    BAD("compare: --metric: more than 64 metrics", "a", "b", "--metric", many);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults),
        cmocka_unit_test(every_option),
        cmocka_unit_test(errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
