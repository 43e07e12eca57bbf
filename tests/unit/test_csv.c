/* The CSV writer: exact header, RFC 4180 quoting, one row per metric, atomic file commit. */
#include "cmocka_all.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "sinks/sink.h"

static char *capture(void (*write)(FILE *, const void *), const void *arg)
{
    static char buf[8192];
    memset(buf, 0, sizeof buf);
    FILE *f = fmemopen(buf, sizeof buf, "w");
    write(f, arg);
    fclose(f);
    return buf;
}

static void write_field(FILE *f, const void *s)
{
    sb_csv_write_field(f, s);
}

static void write_header(FILE *f, const void *unused)
{
    (void)unused;
    sb_csv_write_header(f);
}

static void quoting(void **state)
{
    (void)state;
    assert_string_equal(capture(write_field, "plain"), "plain");
    assert_string_equal(capture(write_field, "m=512;n=512"), "m=512;n=512");
    assert_string_equal(capture(write_field, "a,b"), "\"a,b\"");
    assert_string_equal(capture(write_field, "say \"hi\""), "\"say \"\"hi\"\"\"");
    assert_string_equal(capture(write_field, "two\nlines"), "\"two\nlines\"");
    assert_string_equal(capture(write_field, ""), "");
}

static void exact_header(void **state)
{
    (void)state;
    assert_string_equal(capture(write_header, NULL),
                        "run_id,timestamp,host,gpu,driver,cuda_runtime,scenario,variant,params,"
                        "iters,reps,metric,unit,better,median,mean,stddev,min,max,p05,p95,cv,"
                        "flags\n");
}

static sb_env test_env(void)
{
    sb_env e;
    memset(&e, 0, sizeof e);
    strcpy(e.run_id, "r1");
    strcpy(e.host, "host,with,commas");
    strcpy(e.gpu, "NVIDIA H100 80GB HBM3");
    strcpy(e.driver, "580.159.04");
    strcpy(e.cuda_runtime, "13.0");
    return e;
}

static sb_row test_row(void)
{
    sb_row r;
    memset(&r, 0, sizeof r);
    strcpy(r.scenario, "small-gemm");
    strcpy(r.variant, "sync-device");
    strcpy(r.params, "m=512;n=512;k=512;dtype=fp16;tf32=0");
    strcpy(r.metric, "wall_us_per_iter");
    strcpy(r.unit, "us");
    strcpy(r.timestamp, "2026-11-22T15:00:00Z");
    r.iters = 1000;
    r.reps = 12;
    r.better = SB_LOWER;
    strcpy(r.flags, "throttled;noisy");
    r.st = (sb_stats){.n = 12,
                      .median = 14.5,
                      .mean = 14.75,
                      .stddev = 0.25,
                      .min = 14.25,
                      .max = 15.5,
                      .p05 = 14.3,
                      .p95 = 15.25,
                      .cv = 1.6949152};
    return r;
}

static void one_row(void **state)
{
    (void)state;
    char buf[2048];
    FILE *f = fmemopen(buf, sizeof buf, "w");
    sb_env e = test_env();
    sb_row r = test_row();
    sb_csv_write_row(f, &e, &r);
    fclose(f);
    assert_string_equal(buf, "r1,2026-11-22T15:00:00Z,\"host,with,commas\",NVIDIA H100 80GB HBM3,"
                             "580.159.04,13.0,small-gemm,sync-device,"
                             "m=512;n=512;k=512;dtype=fp16;tf32=0,1000,12,wall_us_per_iter,us,"
                             "lower,14.5,14.75,0.25,14.25,15.5,14.3,15.25,1.6949152,"
                             "throttled;noisy\n");
}

static void file_is_committed_atomically(void **state)
{
    (void)state;
    char dir[] = "/tmp/syncbench-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char pattern[512], expect[512];
    snprintf(pattern, sizeof pattern, "%s/{gpu}-{date}.csv", dir);
    sb_out_file c;
    assert_int_equal(sb_out_open(&c, "csv", pattern), 0);
    sb_env e = test_env();
    strcpy(e.gpu_slug, "h100-80gb-hbm3");
    strcpy(e.date, "20261122-154630");
    snprintf(expect, sizeof expect, "%s/h100-80gb-hbm3-20261122-154630.csv", dir);
    /* nothing at the final name until the commit */
    assert_int_not_equal(access(expect, F_OK), 0);
    assert_int_equal(access(c.tmp, F_OK), 0);
    sb_row row = test_row();
    sb_results res = {0};
    sb_results_add(&res, &row);
    sb_results_add(&res, &row);
    assert_int_equal(sb_csv_commit(&c, &e, &res), 0);
    assert_string_equal(c.path, expect);
    assert_int_equal(access(expect, F_OK), 0);
    assert_int_not_equal(access(c.tmp, F_OK), 0);
    FILE *f = fopen(expect, "r");
    int lines = 0;
    char line[2048];
    while (fgets(line, sizeof line, f))
        lines++;
    fclose(f);
    assert_int_equal(lines, 3);
    sb_results_free(&res);
    unlink(expect);

    /* a discarded file leaves nothing behind */
    assert_int_equal(sb_out_open(&c, "csv", pattern), 0);
    char tmp[4200];
    strcpy(tmp, c.tmp);
    sb_out_discard(&c);
    assert_int_not_equal(access(tmp, F_OK), 0);
    assert_int_equal(rmdir(dir), 0); /* empty */
}

static void unwritable_path_is_usage_error(void **state)
{
    (void)state;
    sb_out_file c;
    sb_error_clear();
    assert_int_equal(sb_out_open(&c, "csv", "/proc/syncbench/out.csv"), SB_EXIT_USAGE);
    assert_non_null(strstr(sb_error_message(), "--csv /proc/syncbench/out.csv: cannot create"));
}

static void path_placeholders(void **state)
{
    (void)state;
    sb_env e = test_env();
    strcpy(e.gpu_slug, "a100-sxm4-80gb");
    strcpy(e.date, "20260101-000000");
    char out[256];
    sb_expand_path("results/{gpu}-{date}.json", &e, out, sizeof out);
    assert_string_equal(out, "results/a100-sxm4-80gb-20260101-000000.json");
    sb_expand_path("plain.csv", &e, out, sizeof out);
    assert_string_equal(out, "plain.csv");
    char slug[64];
    sb_gpu_slug("NVIDIA H100 80GB HBM3", slug, sizeof slug);
    assert_string_equal(slug, "h100-80gb-hbm3");
    sb_gpu_slug("NVIDIA GeForce RTX 4090", slug, sizeof slug);
    assert_string_equal(slug, "geforce-rtx-4090");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quoting),
        cmocka_unit_test(exact_header),
        cmocka_unit_test(one_row),
        cmocka_unit_test(file_is_committed_atomically),
        cmocka_unit_test(unwritable_path_is_usage_error),
        cmocka_unit_test(path_placeholders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
