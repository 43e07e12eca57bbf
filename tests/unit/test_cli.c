/* Command-line parsing: values land in sb_options, bad input is exit 2 with a message that
 * names the problem. */
#include "cmocka_all.h"

#include <string.h>

#include "cli/cli.h"
#include "cli_args.h"
#include "base/error.h"

static int parse(sb_options *o, const char *const *args)
{
    return parse_args(o, NULL, args);
}

#define PARSE(o, ...) parse(o, (const char *const[]){__VA_ARGS__, NULL})

static void defaults(void **state)
{
    (void)state;
    sb_options o;
    assert_int_equal(parse(&o, (const char *const[]){NULL}), 0);
    assert_null(o.run.scenarios);
    assert_int_equal(o.run.m.iters, 0);
    assert_int_equal(o.run.m.warmup, 3);
    assert_true(o.run.m.warmup_s < 0); /* automatic */
    assert_int_equal(o.run.m.min_reps, 10);
    assert_float_equal(o.run.m.max_time_s, 2.0, 0);
    assert_float_equal(o.run.m.target_cv, 1.0, 0);
    assert_int_equal(o.run.given, 0);
    assert_int_equal(o.device, 0);
    assert_null(o.csv);
}

static void full_command_line(void **state)
{
    (void)state;
    sb_options o;
    assert_int_equal(PARSE(&o, "--scenario", "small-gemm,big-gemm", "--iters", "1000",
                           "--variant=async", "--warmup", "0", "--min-reps", "3", "--max-time",
                           "0.5", "--target-cv", "2.5", "--set", "m=256,512", "--set", "dtype=bf16",
                           "--device", "1", "--csv", "-", "-q", "--json", "/tmp/x.json",
                           "--markdown", "/tmp/{gpu}-{date}.md", "--config", "c.ini", "--dry-run"),
                     0);
    assert_string_equal(o.run.scenarios, "small-gemm,big-gemm");
    assert_string_equal(o.run.variants, "async");
    assert_int_equal(o.run.m.iters, 1000);
    assert_int_equal(o.run.m.warmup, 0);
    assert_int_equal(o.run.m.min_reps, 3);
    assert_float_equal(o.run.m.max_time_s, 0.5, 0);
    assert_float_equal(o.run.m.target_cv, 2.5, 0);
    unsigned long long want = 0;
    const char *given[] = {"scenario", "variant",  "set",      "iters",
                           "warmup",   "min-reps", "max-time", "target-cv"};
    for (size_t i = 0; i < sizeof given / sizeof given[0]; i++)
        want |= 1ull << sb_run_opt_index(given[i]);
    assert_int_equal(o.run.given, want);
    assert_int_equal(o.run.n_sets, 2);
    assert_string_equal(o.run.sets[0].key, "m");
    assert_string_equal(o.run.sets[0].value, "256,512");
    assert_string_equal(o.run.sets[1].key, "dtype");
    assert_string_equal(o.run.sets[1].value, "bf16");
    assert_int_equal(o.device, 1);
    assert_string_equal(o.csv, "-");
    assert_string_equal(o.json, "/tmp/x.json");
    assert_string_equal(o.markdown, "/tmp/{gpu}-{date}.md");
    assert_string_equal(o.config, "c.ini");
    assert_int_equal(o.dry_run, 1);
    assert_int_equal(o.quiet, 1);
}

static void expect_usage_error(const char *const *args, const char *fragment)
{
    sb_options o;
    assert_int_equal(parse(&o, args), SB_EXIT_USAGE);
    assert_int_equal(sb_error_code(), SB_EXIT_USAGE);
    if (!strstr(sb_error_message(), fragment))
        fail_msg("message '%s' lacks '%s'", sb_error_message(), fragment);
}

#define BAD(fragment, ...) expect_usage_error((const char *const[]){__VA_ARGS__, NULL}, fragment)

static void bad_iters(void **state)
{
    (void)state;
    BAD("--iters 0: out of range", "--iters", "0");
    BAD("--iters -5: out of range", "--iters", "-5");
    BAD("--iters abc: not a number", "--iters", "abc");
    BAD("--iters 99999999999999999999: out of range", "--iters", "99999999999999999999");
    BAD("--iters 12x: not a number", "--iters", "12x");
    BAD("option '--iters' needs a value", "--iters");
}

static void bad_options(void **state)
{
    (void)state;
    BAD("unknown option '--frobnicate'", "--frobnicate");
    BAD("did you mean '--scenario'?", "--scenaro", "x");
    BAD("--max-time 0: out of range", "--max-time", "0");
    BAD("--target-cv nan: not a number", "--target-cv", "nan");
    BAD("--device -1: out of range", "--device", "-1");
    BAD("unexpected argument 'stray'", "stray");
    BAD("empty name", "--scenario", "small-gemm,");
    /* one range per option, the same in suite files (test_config.c) */
    BAD("--max-time 1e-300: out of range (expected a number from 0.001 to 3600)", "--max-time",
        "1e-300");
    BAD("--max-time 0x10: not a number", "--max-time", "0x10");
}

static void getopt_messages(void **state)
{
    (void)state;
    BAD("--list takes no value", "--list=1");
    BAD("--dry takes no value", "--dry=yes");
    BAD("--max: ambiguous (--max-reps, --max-time)", "--max", "5");
    BAD("--iters given twice", "--iters", "5", "--iters", "6");
    BAD("--config given twice", "--config", "a.ini", "--config", "b.ini");
    BAD("unknown option '-x'", "-x");
    BAD("did you mean '--list'?", "--lsit");
}

static void bad_set(void **state)
{
    (void)state;
    BAD("expected KEY=VALUE", "--set", "m");
    BAD("no value after '='", "--set", "m=");
    BAD("given twice", "--set", "m=1", "--set", "m=2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults),  cmocka_unit_test(full_command_line),
        cmocka_unit_test(bad_iters), cmocka_unit_test(bad_options),
        cmocka_unit_test(bad_set),   cmocka_unit_test(getopt_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
