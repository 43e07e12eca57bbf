/* --set parsing: sizes, enums, booleans, sweeps, and the plan they expand into. */
#include "cmocka_all.h"

#include <string.h>

#include "cli/cli.h"
#include "cli_args.h"
#include "base/error.h"
#include "scenarios/params.h"
#include "cmd/run.h"
#include "suite/plan.h"
#include "scenarios/registry.h"
#include "base/textutil.h"

static const char *const colours[] = {"red", "green", "blue", NULL};
static const sb_param_def defs[] = {
    {"bytes", SB_PARAM_SIZE, "4KiB,64MiB", "", 1, 1LL << 34, NULL},
    {"colour", SB_PARAM_ENUM, "red", "", 0, 0, colours},
    {"on", SB_PARAM_BOOL, "0", "", 0, 1, NULL},
    {"n", SB_PARAM_INT, "8", "", 1, 100, NULL},
    {NULL, 0, NULL, NULL, 0, 0, NULL},
};

static void sizes(void **state)
{
    (void)state;
    long long v;
    assert_int_equal(sb_parse_size("4096", &v), 0);
    assert_int_equal(v, 4096);
    assert_int_equal(sb_parse_size("4K", &v), 0);
    assert_int_equal(v, 4096);
    assert_int_equal(sb_parse_size("64MiB", &v), 0);
    assert_int_equal(v, 64LL << 20);
    assert_int_equal(sb_parse_size("1GiB", &v), 0);
    assert_int_equal(v, 1LL << 30);
    assert_int_equal(sb_parse_size("400MB", &v), 0);
    assert_int_equal(v, 400000000LL);
    assert_int_equal(sb_parse_size("1.5G", &v), SB_PARSE_INVALID);
    assert_int_equal(sb_parse_size("-4K", &v), SB_PARSE_INVALID);
    assert_int_equal(sb_parse_size("4Q", &v), SB_PARSE_INVALID);
    assert_int_equal(sb_parse_size("99999999999999999999", &v), SB_PARSE_RANGE);
    assert_int_equal(sb_parse_size("9999999999999G", &v), SB_PARSE_RANGE);
}

static void size_format(void **state)
{
    (void)state;
    char b[32];
    sb_format_size(64LL << 20, b, sizeof b);
    assert_string_equal(b, "64MiB");
    sb_format_size(4096, b, sizeof b);
    assert_string_equal(b, "4KiB");
    sb_format_size(400000000LL, b, sizeof b);
    assert_string_equal(b, "400MB");
    sb_format_size(1000, b, sizeof b);
    assert_string_equal(b, "1000");
    sb_format_size(4097, b, sizeof b);
    assert_string_equal(b, "4097");
}

static void values_and_errors(void **state)
{
    (void)state;
    long long v[SB_MAX_SWEEP];
    int n;
    char err[256];
    assert_int_equal(sb_param_parse_list(&defs[0], "4KiB,1MiB,64MiB", v, &n, err, sizeof err), 0);
    assert_int_equal(n, 3);
    assert_int_equal(v[1], 1 << 20);
    assert_int_equal(sb_param_parse(&defs[1], "blue", v, err, sizeof err), 0);
    assert_int_equal(v[0], 2);
    assert_int_equal(sb_param_parse(&defs[2], "yes", v, err, sizeof err), 0);
    assert_int_equal(v[0], 1);

    assert_int_not_equal(sb_param_parse(&defs[1], "gren", v, err, sizeof err), 0);
    assert_non_null(strstr(err, "did you mean 'green'?"));
    assert_int_not_equal(sb_param_parse(&defs[3], "0", v, err, sizeof err), 0);
    assert_string_equal(err, "n=0: out of range (1 to 100)");
    assert_int_not_equal(sb_param_parse(&defs[3], "ten", v, err, sizeof err), 0);
    assert_string_equal(err, "n=ten: not an integer");
    assert_int_not_equal(sb_param_parse(&defs[2], "maybe", v, err, sizeof err), 0);
    assert_int_not_equal(sb_param_parse_list(&defs[3], "1,,2", v, &n, err, sizeof err), 0);
    assert_non_null(strstr(err, "empty value"));
}

static void canonical_params_text(void **state)
{
    (void)state;
    long long v[] = {64LL << 20, 1, 0, 8};
    char b[256];
    sb_params_format_all(defs, v, b, sizeof b);
    assert_string_equal(b, "bytes=64MiB;colour=green;on=0;n=8");
}

static void suggestions(void **state)
{
    (void)state;
    const char *names[] = {"small-gemm", "big-gemm", NULL};
    assert_string_equal(sb_suggest("smal-gemm", names, sizeof names[0]), "small-gemm");
    assert_string_equal(sb_suggest("BIG-GEMM", names, sizeof names[0]), "big-gemm");
    assert_null(sb_suggest("readback", names, sizeof names[0]));
    assert_int_equal(sb_edit_distance("kitten", "sitting"), 3);
    assert_int_equal(sb_edit_distance("itres", "iters"), 1); /* a swap is one typo */
    assert_int_equal(sb_edit_distance("szie", "size"), 1);
}

static int plan_for(sb_plan *p, const char *const *args)
{
    sb_options o;
    int rc = parse_args(&o, NULL, args);
    return rc ? rc : sb_cli_plan(&o, p);
}

#define PLAN(p, ...) plan_for(p, (const char *const[]){__VA_ARGS__, NULL})

static void plan_sweeps_and_references(void **state)
{
    (void)state;
    sb_plan p;
    assert_int_equal(PLAN(&p, "--scenario", "small-gemm", "--set", "m=256,512", "--set",
                          "dtype=fp16,bf16", "--variant", "sync-device"),
                     0);
    assert_int_equal(p.n, 4); /* 2 sizes x 2 dtypes */
    char name[512];
    sb_plan_entry_name(&p.entries[1], p.entries[1].variants[1], name, sizeof name);
    assert_string_equal(name, "small-gemm/sync-device m=256;n=512;k=512;dtype=bf16;tf32=0");
    /* the sync variant brings its reference, measured first */
    assert_int_equal(p.entries[0].n_variants, 2);
    assert_string_equal(p.entries[0].sc->variants[p.entries[0].variants[0]].name, "async");
    assert_int_equal(p.entries[0].m.iters, 1000); /* the scenario's default */
    assert_int_equal(sb_plan_measurements(&p), 8);
    sb_plan_free(&p);

    assert_int_equal(PLAN(&p, "--iters", "7", "--scenario", "small-gemm,big-gemm"), 0);
    assert_int_equal(p.n, 2); /* defaults: no sweep */
    assert_int_equal(p.entries[1].m.iters, 7);
    assert_int_equal(p.entries[0].n_variants, 6); /* async, 4 syncs and sync-item */
    sb_plan_free(&p);

    /* no --scenario: every scenario; copy sweeps 9 sizes with iterations per size */
    assert_int_equal(PLAN(&p, "--variant", "h2d-pinned"), 0);
    assert_int_equal(p.n, 9);
    assert_string_equal(p.entries[0].sc->name, "copy");
    assert_int_equal(p.entries[0].m.iters, 1000); /* 4 KiB: many copies per repetition */
    assert_int_equal(p.entries[8].m.iters, 2);    /* 256 MiB */
    sb_plan_free(&p);
}

static void plan_errors(void **state)
{
    (void)state;
    sb_plan p;
    assert_int_equal(PLAN(&p, "--scenario", "smal-gemm"), SB_EXIT_USAGE);
    assert_string_equal(sb_error_message(),
                        "unknown scenario 'smal-gemm'; did you mean 'small-gemm'?");
    assert_int_equal(PLAN(&p, "--variant", "sync-evnt"), SB_EXIT_USAGE);
    assert_string_equal(sb_error_message(),
                        "unknown variant 'sync-evnt'; did you mean 'sync-event'?");
    assert_int_equal(PLAN(&p, "--set", "szie=1"), SB_EXIT_USAGE);
    assert_non_null(strstr(sb_error_message(), "--set szie: unknown parameter"));
    assert_int_equal(PLAN(&p, "--set", "m=0"), SB_EXIT_USAGE);
    assert_string_equal(sb_error_message(), "small-gemm: --set m=0: out of range (1 to 262144)");
    assert_int_equal(PLAN(&p, "--set", "dtype=fp8"), SB_EXIT_USAGE);
    assert_non_null(strstr(sb_error_message(), "dtype=fp8: unknown value"));
    assert_int_equal(PLAN(&p, "--set", "tf32=1"), SB_EXIT_USAGE);
    assert_non_null(strstr(sb_error_message(), "tf32=1 applies to dtype=fp32 only"));
    /* the merged options are checked once, in the plan */
    assert_int_equal(PLAN(&p, "--min-reps", "50", "--max-reps", "10"), SB_EXIT_USAGE);
    assert_string_equal(sb_error_message(), "--min-reps 50 is above --max-reps 10");
    /* a sweep that names a value twice would plan the same measurement twice */
    assert_int_equal(PLAN(&p, "--scenario", "small-gemm", "--set", "m=512,256,512"), SB_EXIT_USAGE);
    assert_string_equal(sb_error_message(),
                        "small-gemm: --set m=512,256,512: 512 given twice in the list");
    assert_int_equal(PLAN(&p, "--scenario", "copy", "--set", "bytes=4KiB,4096"), SB_EXIT_USAGE);
    assert_string_equal(sb_error_message(),
                        "copy: --set bytes=4KiB,4096: 4096 given twice in the list");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sizes),
        cmocka_unit_test(size_format),
        cmocka_unit_test(values_and_errors),
        cmocka_unit_test(canonical_params_text),
        cmocka_unit_test(suggestions),
        cmocka_unit_test(plan_sweeps_and_references),
        cmocka_unit_test(plan_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
