/* The sinks: exact CSV header and quoting, rows streamed to TARGET.partial, the atomic commit,
 * JSON written incrementally, the table drawn from rows alone, and the output path checks
 * (write-through targets, symlinks, duplicates, inputs, long names, write errors). */
#include "cmocka_all.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "sinks/sink.h"

/* ---- helpers ---- */

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

static sb_env test_env(void)
{
    sb_env e;
    memset(&e, 0, sizeof e);
    strcpy(e.run_id, "r1");
    strcpy(e.host, "host,with,commas");
    strcpy(e.gpu, "NVIDIA H100 80GB HBM3");
    strcpy(e.gpu_slug, "h100-80gb-hbm3");
    strcpy(e.date, "20261122-154630");
    strcpy(e.driver, "580.159.04");
    strcpy(e.cuda_runtime, "13.0");
    strcpy(e.version, "0.1.0");
    strcpy(e.git_rev, "abc1234");
    strcpy(e.command_line, "syncbench --csv \"x y.csv\"");
    return e;
}

static sb_row test_row(void)
{
    sb_row r = {.scenario = "small-gemm",
                .variant = "sync-device",
                .params = "m=512;n=512;k=512;dtype=fp16;tf32=0",
                .metric = "wall_us_per_iter",
                .unit = "us",
                .finished = 1795359600, /* 2026-11-22T15:00:00Z */
                .label = "wall us",
                .primary = 1,
                .iters = 1000,
                .reps = 12,
                .better = SB_LOWER,
                .flags = "throttled;noisy",
                .st = {.n = 12,
                       .median = 14.5,
                       .mean = 14.75,
                       .stddev = 0.25,
                       .min = 14.25,
                       .max = 15.5,
                       .p05 = 14.3,
                       .p95 = 15.25,
                       .cv = 1.6949152}};
    return r;
}

static sb_row make_row(const char *scenario, const char *variant, const char *metric,
                       const char *label, int primary, double median, const char *flags)
{
    sb_row r = test_row();
    snprintf(r.scenario, sizeof r.scenario, "%s", scenario);
    snprintf(r.variant, sizeof r.variant, "%s", variant);
    snprintf(r.params, sizeof r.params, "p=1");
    snprintf(r.metric, sizeof r.metric, "%s", metric);
    snprintf(r.label, sizeof r.label, "%s", label);
    snprintf(r.flags, sizeof r.flags, "%s", flags);
    r.primary = primary;
    r.st.median = median;
    r.st.cv = 0.5;
    return r;
}

/* The folder of a test that writes files: made fresh before it (make_dir, a cmocka setup),
 * removed after it with its files, one level down (rm_dir, a cmocka teardown). */
static char dir[64];
static char paths[8][600];
static int npaths;

static int make_dir(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/syncbench-sinks-XXXXXX");
    npaths = 0;
    return mkdtemp(dir) ? 0 : -1;
}

static int rm_dir(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "chmod -R u+w '%s' && rm -rf '%s'", dir, dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* DIR/name, in a buffer of its own until the test ends. */
static const char *path_in(const char *name)
{
    assert_true(npaths < (int)(sizeof paths / sizeof paths[0]));
    char *p = paths[npaths++];
    snprintf(p, sizeof paths[0], "%s/%s", dir, name);
    return p;
}

static int count_files(const char *folder)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", folder);
    FILE *p = popen(cmd, "r");
    int n = -1;
    assert_int_equal(fscanf(p, "%d", &n), 1);
    pclose(p);
    return n;
}

static char *slurp(const char *path)
{
    static char buf[65536];
    memset(buf, 0, sizeof buf);
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static int count_lines(const char *text)
{
    int n = 0;
    for (; text && *text; text++)
        n += *text == '\n';
    return n;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* The recorded error is one line that contains `part`. */
static void assert_error(const char *part)
{
    const char *msg = sb_error_message();
    assert_non_null(strstr(msg, part));
    assert_null(strchr(msg, '\n'));
}

/* ---- CSV format ---- */

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

/* ---- streaming and the commit ---- */

static void partial_holds_rows_then_commit_renames(void **state)
{
    (void)state;
    const char *pattern = path_in("{gpu}-{date}.csv");
    const char *target = path_in("h100-80gb-hbm3-20261122-154630.csv");
    const char *partial = path_in("h100-80gb-hbm3-20261122-154630.csv.partial");
    write_text(target, "old content\n"); /* replaced only at the commit */

    sb_sinks sinks = {0};
    sb_env e = test_env();
    sb_row r = test_row();
    assert_int_equal(sb_sinks_add(&sinks, &sb_csv_sink, "csv", pattern, NULL), 0);
    assert_int_equal(sb_sinks_open(&sinks, &e), 0);
    assert_string_equal(sinks.s[0].out.path, target);
    assert_string_equal(sinks.s[0].out.partial, partial);
    /* the header is there once flushed */
    assert_int_equal(sb_sinks_flush(&sinks, &e), 0);
    assert_string_equal(slurp(partial), capture(write_header, NULL));
    for (int i = 0; i < 2; i++) {
        assert_int_equal(sb_sinks_row(&sinks, &e, &r), 0);
        assert_int_equal(sb_sinks_flush(&sinks, &e), 0);
        /* as after a SIGKILL here: header + every flushed row, the target untouched */
        assert_int_equal(count_lines(slurp(partial)), 2 + i);
        assert_string_equal(slurp(target), "old content\n");
    }
    assert_int_equal(sb_sinks_commit(&sinks, &e), 0);
    assert_int_equal(sinks.s[0].out.state, SB_OUT_COMMITTED);
    assert_int_equal(count_lines(slurp(target)), 3);
    assert_int_not_equal(access(partial, F_OK), 0);
    assert_int_equal(count_files(dir), 1);
    sb_sinks_free(&sinks);
}

static void abort_leaves_nothing(void **state)
{
    (void)state;
    const char *csv = path_in("a.csv"), *json = path_in("a.json"), *md = path_in("a.md");
    sb_sinks sinks = {0};
    sb_env e = test_env();
    sb_row r = test_row();
    assert_int_equal(sb_sinks_add(&sinks, &sb_csv_sink, "csv", csv, NULL), 0);
    assert_int_equal(sb_sinks_add(&sinks, &sb_json_sink, "json", json, NULL), 0);
    assert_int_equal(sb_sinks_add(&sinks, &sb_markdown_sink, "markdown", md, NULL), 0);
    assert_int_equal(count_files(dir), 0); /* prepare creates nothing */
    assert_int_equal(sb_sinks_open(&sinks, &e), 0);
    assert_int_equal(count_files(dir), 3);
    assert_int_equal(sb_sinks_row(&sinks, &e, &r), 0);
    assert_int_equal(sb_sinks_flush(&sinks, &e), 0);
    sb_sinks_abort(&sinks);
    assert_int_equal(count_files(dir), 0);
    sb_sinks_free(&sinks);

    /* freeing a set that is still open aborts it too */
    memset(&sinks, 0, sizeof sinks);
    assert_int_equal(sb_sinks_add(&sinks, &sb_csv_sink, "csv", csv, NULL), 0);
    assert_int_equal(sb_sinks_open(&sinks, &e), 0);
    sb_sinks_free(&sinks);
    assert_int_equal(count_files(dir), 0);
}

static void json_is_valid_and_complete(void **state)
{
    (void)state;
    char path[600];
    for (int nrows = 0; nrows <= 3; nrows += 3) {
        snprintf(path, sizeof path, "%s/run-%d.json", dir, nrows);
        sb_sinks sinks = {0};
        sb_env e = test_env();
        sb_row r = test_row();
        assert_int_equal(sb_sinks_add(&sinks, &sb_json_sink, "json", path, NULL), 0);
        assert_int_equal(sb_sinks_open(&sinks, &e), 0);
        for (int i = 0; i < nrows; i++) {
            r.iters = 1000 + i;
            assert_int_equal(sb_sinks_row(&sinks, &e, &r), 0);
            assert_int_equal(sb_sinks_flush(&sinks, &e), 0);
        }
        assert_int_equal(sb_sinks_commit(&sinks, &e), 0);
        sb_sinks_free(&sinks);

        json_error_t err;
        json_t *root = json_load_file(path, 0, &err);
        assert_non_null(root);
        assert_string_equal(json_string_value(json_object_get(root, "run_id")), "r1");
        assert_string_equal(json_string_value(json_object_get(root, "command_line")),
                            e.command_line);
        json_t *sb = json_object_get(root, "syncbench");
        assert_string_equal(json_string_value(json_object_get(sb, "version")), "0.1.0");
        json_t *gpu = json_object_get(json_object_get(root, "environment"), "gpu");
        assert_string_equal(json_string_value(json_object_get(gpu, "name")), e.gpu);
        json_t *rows = json_object_get(root, "rows");
        assert_true(json_is_array(rows));
        assert_int_equal(json_array_size(rows), nrows);
        for (int i = 0; i < nrows; i++) {
            json_t *row = json_array_get(rows, (size_t)i);
            assert_int_equal(json_integer_value(json_object_get(row, "iters")), 1000 + i);
            assert_true(json_real_value(json_object_get(row, "median")) == 14.5);
            json_t *flags = json_object_get(row, "flags");
            assert_int_equal(json_array_size(flags), 2);
            assert_string_equal(json_string_value(json_array_get(flags, 1)), "noisy");
        }
        /* the same bytes as one dump of the whole document */
        char *whole = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        char expect[65536];
        snprintf(expect, sizeof expect, "%s\n", whole);
        assert_string_equal(slurp(path), expect);
        free(whole);
        json_decref(root);
    }
}

/* Issue 48: the history dashboards' files. github-action-benchmark's customSmallerIsBetter
 * holds the lower-is-better rows only; Bencher's BMF every row, by benchmark and measure. */
static void dashboards_shape(void **state)
{
    (void)state;
    char gh[600], bmf[600];
    snprintf(gh, sizeof gh, "%s/gh.json", dir);
    snprintf(bmf, sizeof bmf, "%s/bmf.json", dir);
    sb_sinks sinks = {0};
    sb_env e = test_env();
    sb_row lower = test_row(), higher = test_row();
    snprintf(higher.metric, sizeof higher.metric, "TFLOPs");
    snprintf(higher.unit, sizeof higher.unit, "TFLOP/s");
    higher.better = SB_HIGHER;
    higher.st.median = 600;
    assert_int_equal(sb_sinks_add(&sinks, &sb_github_benchmark_sink, "github-benchmark", gh, NULL),
                     0);
    assert_int_equal(sb_sinks_add(&sinks, &sb_bmf_sink, "bmf", bmf, NULL), 0);
    assert_int_equal(sb_sinks_open(&sinks, &e), 0);
    assert_int_equal(sb_sinks_row(&sinks, &e, &lower), 0);
    assert_int_equal(sb_sinks_row(&sinks, &e, &higher), 0);
    assert_int_equal(sb_sinks_flush(&sinks, &e), 0);
    assert_int_equal(sb_sinks_commit(&sinks, &e), 0);
    sb_sinks_free(&sinks);

    json_error_t err;
    json_t *a = json_load_file(gh, 0, &err);
    assert_true(json_is_array(a));
    assert_int_equal(json_array_size(a), 1); /* TFLOPs (higher is better) is left out */
    json_t *o = json_array_get(a, 0);
    assert_string_equal(json_string_value(json_object_get(o, "name")),
                        "small-gemm/sync-device m=512;n=512;k=512;dtype=fp16;tf32=0 "
                        "wall_us_per_iter");
    assert_string_equal(json_string_value(json_object_get(o, "unit")), "us");
    assert_true(json_number_value(json_object_get(o, "value")) == 14.5);
    assert_string_equal(json_string_value(json_object_get(o, "range")), "± 0.25");
    assert_non_null(strstr(json_string_value(json_object_get(o, "extra")), "12 reps"));
    json_decref(a);

    json_t *b = json_load_file(bmf, 0, &err);
    assert_true(json_is_object(b));
    assert_int_equal(json_object_size(b), 1);
    json_t *bench =
        json_object_get(b, "small-gemm/sync-device m=512;n=512;k=512;dtype=fp16;tf32=0");
    assert_int_equal(json_object_size(bench), 2);
    json_t *m = json_object_get(bench, "wall_us_per_iter");
    assert_true(json_number_value(json_object_get(m, "value")) == 14.5);
    assert_true(json_number_value(json_object_get(m, "lower_value")) == 14.3);
    assert_true(json_number_value(json_object_get(m, "upper_value")) == 15.25);
    m = json_object_get(bench, "TFLOPs");
    assert_true(json_number_value(json_object_get(m, "value")) == 600);
    json_decref(b);
}

static void markdown_partial_is_redrawn(void **state)
{
    (void)state;
    const char *path = path_in("report.md"), *partial = path_in("report.md.partial");
    sb_sinks sinks = {0};
    sb_env e = test_env();
    sb_row a = make_row("copy", "h2d-pinned", "GBps", "GB/s", 1, 55, "");
    sb_row b = make_row("copy", "d2h-pinned", "GBps", "GB/s", 1, 54, "");
    assert_int_equal(sb_sinks_add(&sinks, &sb_markdown_sink, "markdown", path, NULL), 0);
    assert_int_equal(sb_sinks_open(&sinks, &e), 0);
    assert_int_equal(sb_sinks_row(&sinks, &e, &a), 0);
    assert_int_equal(sb_sinks_flush(&sinks, &e), 0);
    const char *text = slurp(partial);
    assert_non_null(strstr(text, "### syncbench on NVIDIA H100 80GB HBM3\n"));
    assert_non_null(strstr(text, "| copy | h2d-pinned |"));
    assert_null(strstr(text, "d2h-pinned"));
    assert_int_equal(sb_sinks_row(&sinks, &e, &b), 0);
    assert_int_equal(sb_sinks_flush(&sinks, &e), 0);
    assert_int_equal(sb_sinks_commit(&sinks, &e), 0);
    text = slurp(path);
    /* drawn once, not appended to */
    assert_non_null(strstr(text, "| copy | d2h-pinned |"));
    assert_null(strstr(strstr(text, "###") + 3, "###"));
    assert_int_not_equal(access(partial, F_OK), 0);
    sb_sinks_free(&sinks);
}

/* ---- the table, from rows alone ---- */

static void table_drawn_from_rows(void **state)
{
    (void)state;
    sb_results res = {0};
    sb_row rows[] = {
        make_row("readback", "idle", "wall_us", "wall us", 1, 12.5, ""),
        make_row("readback", "idle", "hidden", "", 0, 3, ""),
        make_row("copy", "h2d-pinned", "GBps", "GB/s", 1, 55.25, "throttled"),
        make_row("readback", "pending", "wall_us", "wall us", 1, 1634, ""),
        make_row("readback", "pending", "wait_us", "wait us", 0, 1500, ""),
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_int_equal(sb_results_add(&res, &rows[i]), 0);
    char buf[4096] = {0};
    FILE *f = fmemopen(buf, sizeof buf, "w");
    sb_table_print(f, &res, 1);
    fclose(f);
    assert_string_equal(buf, "| scenario | variant | params | wall us | wait us | cv % |\n"
                             "| --- | --- | --- | ---: | ---: | ---: |\n"
                             "| readback | idle | p=1 | 12.50 | - | 0.50 |\n"
                             "| readback | pending | p=1 | 1634 | 1500 | 0.50 |\n"
                             "\n"
                             "| scenario | variant | params | GB/s | cv % | flags |\n"
                             "| --- | --- | --- | ---: | ---: | --- |\n"
                             "| copy | h2d-pinned | p=1 | 55.25 | 0.50 | throttled |\n");
    memset(buf, 0, sizeof buf);
    f = fmemopen(buf, sizeof buf, "w");
    sb_table_print(f, &res, 0);
    fclose(f);
    assert_non_null(strstr(buf, "scenario  variant  params  wall us  wait us  cv %\n"));
    assert_non_null(strstr(buf, "readback  pending  p=1        1634     1500  0.50\n"));
    sb_results_free(&res);
}

/* The table sink prints a scenario's block as soon as a row of another scenario comes, not at
 * the end: a minute-long suite shows its first table after seconds, through a pipe too. */
static void table_sink_prints_each_scenario_when_done(void **state)
{
    (void)state;
    char buf[4096] = {0};
    sb_sink s = {.ops = &sb_table_sink};
    s.out.f = fmemopen(buf, sizeof buf, "w");
    sb_env env = {0};
    sb_row a = make_row("readback", "idle", "wall_us", "wall us", 1, 12.5, "");
    sb_row b = make_row("copy", "h2d-pinned", "GBps", "GB/s", 1, 55.25, "");
    assert_int_equal(s.ops->begin(&s, &env), 0);
    assert_int_equal(s.ops->row(&s, &env, &a), 0);
    assert_string_equal(buf, ""); /* its scenario may have more rows */
    assert_int_equal(s.ops->row(&s, &env, &b), 0);
    assert_non_null(strstr(buf, "readback  idle     p=1       12.50"));
    assert_null(strstr(buf, "copy"));
    assert_int_equal(s.ops->end(&s, &env), 0);
    fclose(s.out.f);
    const char *copy = strstr(buf, "\n\nscenario  variant     params   GB/s  cv %\n");
    assert_non_null(copy);
    assert_non_null(strstr(copy, "copy      h2d-pinned  p=1     55.25  0.50"));
    s.ops->destroy(&s);
}

/* ---- targets that are not regular files ---- */

typedef struct {
    char path[512];
    char buf[8192];
} fifo_reader;

static void *read_fifo(void *arg)
{
    fifo_reader *r = arg;
    int fd = open(r->path, O_RDONLY);
    size_t n = 0;
    ssize_t k;
    while (fd >= 0 && n + 1 < sizeof r->buf &&
           (k = read(fd, r->buf + n, sizeof r->buf - 1 - n)) > 0)
        n += (size_t)k;
    r->buf[n] = '\0';
    if (fd >= 0)
        close(fd);
    return NULL;
}

static void fifo_is_written_through(void **state)
{
    (void)state;
    static fifo_reader reader;
    snprintf(reader.path, sizeof reader.path, "%s/pipe", dir);
    assert_int_equal(mkfifo(reader.path, 0600), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, read_fifo, &reader), 0);

    sb_sinks sinks = {0};
    sb_env e = test_env();
    sb_row r = test_row();
    assert_int_equal(sb_sinks_add(&sinks, &sb_csv_sink, "csv", reader.path, NULL), 0);
    assert_true(sinks.s[0].out.direct);
    assert_int_equal(sb_sinks_open(&sinks, &e), 0); /* blocks until the reader is there */
    assert_int_equal(sb_sinks_row(&sinks, &e, &r), 0);
    assert_int_equal(sb_sinks_flush(&sinks, &e), 0);
    assert_int_equal(sb_sinks_commit(&sinks, &e), 0);
    sb_sinks_free(&sinks);
    assert_int_equal(pthread_join(t, NULL), 0);

    assert_int_equal(count_lines(reader.buf), 2);
    assert_int_equal(strncmp(reader.buf, "run_id,", 7), 0);
    struct stat st;
    assert_int_equal(lstat(reader.path, &st), 0);
    assert_true(S_ISFIFO(st.st_mode)); /* still the FIFO, not a regular file */
    assert_int_equal(count_files(dir), 1);
}

static void dev_null_stays_a_device(void **state)
{
    (void)state;
    sb_sinks sinks = {0};
    sb_env e = test_env();
    sb_row r = test_row();
    assert_int_equal(sb_sinks_add(&sinks, &sb_json_sink, "json", "/dev/null", NULL), 0);
    assert_int_equal(sb_sinks_open(&sinks, &e), 0);
    assert_string_equal(sinks.s[0].out.partial, "");
    assert_int_equal(sb_sinks_row(&sinks, &e, &r), 0);
    assert_int_equal(sb_sinks_commit(&sinks, &e), 0);
    sb_sinks_free(&sinks);
    struct stat st;
    assert_int_equal(lstat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    assert_int_not_equal(access("/dev/null.partial", F_OK), 0);

    /* /dev/stdout reaches whatever stdout is (a pipe, a terminal, a file) through /proc: it is
     * written through even when that is a regular file */
    sb_out_file o;
    assert_int_equal(sb_out_prepare(&o, "csv", "/dev/stdout"), 0);
    assert_true(o.direct);
}

static void write_error_is_exit_1(void **state)
{
    (void)state;
    sb_sinks sinks = {0};
    sb_env e = test_env();
    sb_row r = test_row();
    sb_error_clear();
    assert_int_equal(sb_sinks_add(&sinks, &sb_csv_sink, "csv", "/dev/full", NULL), 0);
    assert_int_equal(sb_sinks_open(&sinks, &e), 0);
    assert_int_equal(sb_sinks_row(&sinks, &e, &r), 0);
    assert_int_equal(sb_sinks_commit(&sinks, &e), SB_EXIT_FAIL);
    assert_error("--csv /dev/full: write failed: No space left on device");
    sb_sinks_free(&sinks);

    /* found at a flush: the sink is dropped, the commit reports it */
    memset(&sinks, 0, sizeof sinks);
    sb_error_clear();
    assert_int_equal(sb_sinks_add(&sinks, &sb_csv_sink, "csv", "/dev/full", NULL), 0);
    assert_int_equal(sb_sinks_open(&sinks, &e), 0);
    assert_int_equal(sb_sinks_row(&sinks, &e, &r), 0);
    assert_int_equal(sb_sinks_flush(&sinks, &e), SB_EXIT_FAIL);
    assert_int_equal(sb_sinks_row(&sinks, &e, &r), 0); /* ignored */
    assert_int_equal(sb_sinks_commit(&sinks, &e), SB_EXIT_FAIL);
    assert_error("No space left on device");
    sb_sinks_free(&sinks);
}

static void symlink_is_followed(void **state)
{
    (void)state;
    char sub[128], real[512], link[512], dangling[512], fresh[512];
    snprintf(sub, sizeof sub, "%s/data", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    snprintf(real, sizeof real, "%s/real.csv", sub);
    snprintf(link, sizeof link, "%s/link.csv", dir);
    snprintf(dangling, sizeof dangling, "%s/dangling.csv", dir);
    snprintf(fresh, sizeof fresh, "%s/fresh.csv", sub);
    write_text(real, "old\n");
    assert_int_equal(symlink("data/real.csv", link), 0);
    assert_int_equal(symlink("data/fresh.csv", dangling), 0); /* its target does not exist */

    sb_sinks sinks = {0};
    sb_env e = test_env();
    sb_row r = test_row();
    assert_int_equal(sb_sinks_add(&sinks, &sb_csv_sink, "csv", link, NULL), 0);
    assert_int_equal(sb_sinks_add(&sinks, &sb_json_sink, "json", dangling, NULL), 0);
    assert_int_equal(sb_sinks_open(&sinks, &e), 0);
    char partial[600];
    snprintf(partial, sizeof partial, "%s.partial", real);
    assert_int_equal(access(partial, F_OK), 0); /* beside the link's target */
    assert_int_equal(sb_sinks_row(&sinks, &e, &r), 0);
    assert_int_equal(sb_sinks_commit(&sinks, &e), 0);
    sb_sinks_free(&sinks);

    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(lstat(dangling, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(count_lines(slurp(real)), 2);
    assert_int_equal(strncmp(slurp(real), "run_id,", 7), 0);
    json_error_t err;
    json_t *root = json_load_file(fresh, 0, &err);
    assert_non_null(root);
    json_decref(root);
    assert_int_equal(count_files(dir), 3); /* data, link.csv, dangling.csv */
    assert_int_equal(count_files(sub), 2); /* real.csv, fresh.csv */
}

/* ---- path checks at add (exit 2, one line, nothing created) ---- */

static void same_target_twice_is_refused(void **state)
{
    (void)state;
    char a[512], spelled[3][512];
    snprintf(a, sizeof a, "%s/a.csv", dir);
    snprintf(spelled[0], sizeof spelled[0], "%s/./a.csv", dir);
    snprintf(spelled[1], sizeof spelled[1], "%s/sub/../a.csv", dir);
    snprintf(spelled[2], sizeof spelled[2], "%s/link.csv", dir);
    char sub[128];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    assert_int_equal(symlink("a.csv", spelled[2]), 0); /* dangling until a.csv exists */
    for (int exists = 0; exists < 2; exists++) {
        if (exists)
            write_text(a, "x\n");
        for (int i = 0; i < 3; i++) {
            sb_sinks sinks = {0};
            assert_int_equal(sb_sinks_add(&sinks, &sb_csv_sink, "csv", a, NULL), 0);
            sb_error_clear();
            assert_int_equal(sb_sinks_add(&sinks, &sb_json_sink, "json", spelled[i], NULL),
                             SB_EXIT_USAGE);
            assert_error("same file as --csv ");
            assert_int_equal(sinks.n, 1);
            sb_sinks_free(&sinks);
        }
    }
    /* "-" twice */
    sb_sinks sinks = {0};
    assert_int_equal(sb_sinks_add(&sinks, &sb_csv_sink, "csv", "-", NULL), 0);
    sb_error_clear();
    assert_int_equal(sb_sinks_add(&sinks, &sb_table_sink, "table", "-", NULL), SB_EXIT_USAGE);
    sb_sinks_free(&sinks);
}

static void output_that_is_an_input_is_refused(void **state)
{
    (void)state;
    const char *ini = path_in("suite.ini");
    write_text(ini, "[copy]\n");
    const char *const inputs[] = {ini, NULL};
    const char *spelled = path_in("./suite.ini");
    sb_sinks sinks = {0};
    sb_error_clear();
    assert_int_equal(sb_sinks_add(&sinks, &sb_csv_sink, "csv", spelled, inputs), SB_EXIT_USAGE);
    assert_error("is also an input");
    assert_int_equal(sb_sinks_add(&sinks, &sb_csv_sink, "csv", path_in("out.csv"), inputs), 0);
    sb_sinks_free(&sinks);

    /* compare's single file */
    sb_out_file md;
    sb_error_clear();
    assert_int_equal(sb_out_create(&md, "markdown", spelled, inputs), SB_EXIT_USAGE);
    assert_error("--markdown ");
    assert_string_equal(slurp(ini), "[copy]\n");
    assert_int_equal(count_files(dir), 1);
}

static void bad_paths_are_refused_at_prepare(void **state)
{
    (void)state;
    char path[1024], name[300];
    sb_out_file o;

    memset(name, 'a', 300);
    snprintf(path, sizeof path, "%s/%.251s.csv", dir, name); /* 255 bytes, 263 as .partial */
    sb_error_clear();
    assert_int_equal(sb_out_prepare(&o, "csv", path), SB_EXIT_USAGE);
    assert_error("file name too long");
    /* {gpu} counts 64 bytes: 180 + 64 + 4 + 8 = 256 */
    snprintf(path, sizeof path, "%s/%.180s{gpu}.csv", dir, name);
    sb_error_clear();
    assert_int_equal(sb_out_prepare(&o, "csv", path), SB_EXIT_USAGE);
    assert_error("{gpu} at its longest");
    snprintf(path, sizeof path, "%s/%.179s{gpu}.csv", dir, name);
    assert_int_equal(sb_out_prepare(&o, "csv", path), 0);
    /* {date} counts 15 */
    snprintf(path, sizeof path, "%s/%.228s{date}.csv", dir, name);
    assert_int_equal(sb_out_prepare(&o, "csv", path), 0);
    snprintf(path, sizeof path, "%s/%.229s{date}.csv", dir, name);
    assert_int_equal(sb_out_prepare(&o, "csv", path), SB_EXIT_USAGE);

    sb_error_clear();
    assert_int_equal(sb_out_prepare(&o, "csv", "/proc/syncbench/out.csv"), SB_EXIT_USAGE);
    assert_error("--csv /proc/syncbench/out.csv: folder '/proc/syncbench' does not exist");
    sb_error_clear();
    assert_int_equal(sb_out_prepare(&o, "json", dir), SB_EXIT_USAGE);
    assert_error("is a folder");
    snprintf(path, sizeof path, "%s/", dir);
    sb_error_clear();
    assert_int_equal(sb_out_prepare(&o, "json", path), SB_EXIT_USAGE);
    assert_error("is a folder");
    snprintf(path, sizeof path, "%s/{gpu}/x.csv", dir);
    sb_error_clear();
    assert_int_equal(sb_out_prepare(&o, "csv", path), SB_EXIT_USAGE);
    assert_error("{gpu} and {date} go in the file name only");
    sb_error_clear();
    assert_int_equal(sb_out_prepare(&o, "csv", ""), SB_EXIT_USAGE);
    assert_error("--csv: empty path");

    /* a folder that cannot be written (root writes anyway: then only the mode is checked) */
    assert_int_equal(chmod(dir, 0500), 0);
    snprintf(path, sizeof path, "%s/x.csv", dir);
    sb_error_clear();
    if (access(dir, W_OK) != 0) {
        assert_int_equal(sb_out_prepare(&o, "csv", path), SB_EXIT_USAGE);
        assert_error("is not writable");
    }
    assert_int_equal(count_files(dir), 0);
}

/* ---- {gpu} and {date} ---- */

static void path_placeholders(void **state)
{
    (void)state;
    sb_env e = test_env();
    strcpy(e.gpu_slug, "a100-sxm4-80gb");
    strcpy(e.date, "20260101-000000");
    char out[512];
    sb_expand_path("results/{gpu}-{date}.json", &e, out, sizeof out);
    assert_string_equal(out, "results/a100-sxm4-80gb-20260101-000000.json");
    sb_expand_path("plain.csv", &e, out, sizeof out);
    assert_string_equal(out, "plain.csv");
    /* a slug is cut at SB_GPU_SLUG_MAX, as prepare counted it */
    memset(e.gpu_slug, 'x', 100);
    e.gpu_slug[100] = '\0';
    sb_expand_path("{gpu}", &e, out, sizeof out);
    assert_int_equal(strlen(out), SB_GPU_SLUG_MAX);
    char slug[64];
    sb_gpu_slug("NVIDIA H100 80GB HBM3", slug, sizeof slug);
    assert_string_equal(slug, "h100-80gb-hbm3");
    sb_gpu_slug("NVIDIA GeForce RTX 4090", slug, sizeof slug);
    assert_string_equal(slug, "geforce-rtx-4090");
}

static int is_date(const char *s)
{
    if (strlen(s) < SB_DATE_LEN || s[8] != '-')
        return 0;
    for (int i = 0; i < SB_DATE_LEN; i++)
        if (i != 8 && (s[i] < '0' || s[i] > '9'))
            return 0;
    return 1;
}

static void date_with_zeroed_env(void **state)
{
    (void)state;
    sb_env zero;
    memset(&zero, 0, sizeof zero);
    char out[256];
    sb_expand_path("{date}.md", &zero, out, sizeof out);
    assert_int_equal(strlen(out), SB_DATE_LEN + 3);
    assert_true(is_date(out));
    sb_expand_path("{gpu}-{date}.md", NULL, out, sizeof out);
    assert_int_equal(strncmp(out, "gpu-", 4), 0);
    assert_true(is_date(out + 4));

    /* compare's path: sb_out_create with no environment */
    char pattern[512];
    snprintf(pattern, sizeof pattern, "%s/cmp-{date}.md", dir);
    sb_out_file md;
    assert_int_equal(sb_out_create(&md, "markdown", pattern, NULL), 0);
    fputs("hello\n", md.f);
    assert_int_equal(sb_out_commit(&md), 0);
    const char *name = strrchr(md.path, '/') + 1;
    assert_int_equal(strncmp(name, "cmp-", 4), 0);
    assert_true(is_date(name + 4));
    assert_string_equal(slurp(md.path), "hello\n");
    assert_int_equal(count_files(dir), 1);
}

/* A test in a folder of its own */
#define IN_DIR(test) cmocka_unit_test_setup_teardown(test, make_dir, rm_dir)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quoting),
        cmocka_unit_test(exact_header),
        cmocka_unit_test(one_row),
        IN_DIR(partial_holds_rows_then_commit_renames),
        IN_DIR(abort_leaves_nothing),
        IN_DIR(json_is_valid_and_complete),
        IN_DIR(dashboards_shape),
        IN_DIR(markdown_partial_is_redrawn),
        cmocka_unit_test(table_drawn_from_rows),
        cmocka_unit_test(table_sink_prints_each_scenario_when_done),
        IN_DIR(fifo_is_written_through),
        cmocka_unit_test(dev_null_stays_a_device),
        cmocka_unit_test(write_error_is_exit_1),
        IN_DIR(symlink_is_followed),
        IN_DIR(same_target_twice_is_refused),
        IN_DIR(output_that_is_an_input_is_refused),
        IN_DIR(bad_paths_are_refused_at_prepare),
        cmocka_unit_test(path_placeholders),
        IN_DIR(date_with_zeroed_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
