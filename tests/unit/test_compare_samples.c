/* `syncbench compare` on samples: the samples reader (attaching, every input error naming its
 * physical line), the verdicts on synthetic runs with known answers (identical, a tight 10 %
 * shift, a huge spread, faster, no samples), --strict, --subset, the sample-file options, and
 * the --rerun suite (exact text, refused names, and that the suite loads and plans). */
#include "cmocka_all.h"

#include "tmpdir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "cmd/compare_cmd.h"
#include "compare/csv_read.h"
#include "compare/rerun.h"
#include "suite/config.h"
#include "suite/plan.h"

/* tmpdir/name */
static const char *at(const char *name)
{
    static char paths[16][128];
    static int k;
    char *p = paths[k++ % 16];
    snprintf(p, sizeof paths[0], "%s/%s", tmpdir, name);
    return p;
}

static void write_file(const char *path, const char *text, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    fclose(f);
}

static void write_text(const char *path, const char *text)
{
    write_file(path, text, strlen(text));
}

/* The file's text, in one of four buffers used in turn. */
static char *read_text(const char *path)
{
    static char bufs[4][65536];
    static int k;
    char *buf = bufs[k++ % 4];
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof bufs[0] - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static const char header[] =
    "run_id,timestamp,host,gpu,driver,cuda_runtime,scenario,variant,params,iters,reps,metric,"
    "unit,better,median,mean,stddev,min,max,p05,p95,cv,flags\n";

/* One synthetic row: n samples uniform in center * (1 +- spread), seeded. */
typedef struct {
    const char *scenario, *variant, *params, *metric, *better;
    double center, spread;
    int n;
    unsigned seed;
} spec;

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* stem.csv and stem.samples.csv (without samples when samples is 0); the CSV's statistics are
 * the samples'. */
static void write_run(const char *stem, const spec *rows, int n_rows, int samples)
{
    char path[160];
    snprintf(path, sizeof path, "%s.csv", stem);
    FILE *c = fopen(path, "w");
    snprintf(path, sizeof path, "%s.samples.csv", stem);
    FILE *s = samples ? fopen(path, "w") : NULL;
    assert_non_null(c);
    fputs(header, c);
    if (s)
        fputs("run_id,scenario,variant,params,metric,rep,value\n", s);
    else
        unlink(path);
    for (int i = 0; i < n_rows; i++) {
        const spec *r = &rows[i];
        double x[512], sorted[512], sum = 0, sq = 0;
        unsigned long long seed = r->seed;
        for (int k = 0; k < r->n; k++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            double u = (double)(seed >> 11) / 9007199254740992.0;
            x[k] = r->center * (1 + r->spread * (2 * u - 1));
            sum += x[k];
        }
        double mean = sum / r->n;
        for (int k = 0; k < r->n; k++)
            sq += (x[k] - mean) * (x[k] - mean);
        double sd = r->n > 1 ? sqrt(sq / (r->n - 1)) : 0;
        memcpy(sorted, x, sizeof x[0] * (size_t)r->n);
        qsort(sorted, (size_t)r->n, sizeof sorted[0], by_value);
        double med = r->n % 2 ? sorted[r->n / 2] : (sorted[r->n / 2 - 1] + sorted[r->n / 2]) / 2;
        fprintf(c,
                "run1,t,h,NVIDIA H100,580,13.0,%s,%s,%s,10,%d,%s,us,%s,%.9g,%.9g,%.9g,%.9g,%.9g,"
                "%.9g,%.9g,%.9g,\n",
                r->scenario, r->variant, r->params, r->n, r->metric, r->better, med, mean, sd,
                sorted[0], sorted[r->n - 1], sorted[0], sorted[r->n - 1], 100 * sd / fabs(mean));
        for (int k = 0; s && k < r->n; k++)
            fprintf(s, "run1,%s,%s,%s,%s,%d,%.9g\n", r->scenario, r->variant, r->params, r->metric,
                    k + 1, x[k]);
    }
    fclose(c);
    if (s)
        fclose(s);
}

/* Runs compare with argv (after "compare"), its stdout into *out. */
static int compare_out(char **out, const char *const *args)
{
    char *argv[32] = {"compare"};
    int argc = 1;
    while (args[argc - 1])
        argv[argc] = (char *)args[argc - 1], argc++;
    argv[argc] = NULL;
    sb_error_clear();
    fflush(stdout);
    FILE *saved = stdout;
    const char *path = at("stdout.txt");
    stdout = fopen(path, "w");
    assert_non_null(stdout);
    int rc = sb_cmd_compare(argc, argv);
    fclose(stdout);
    stdout = saved;
    if (out)
        *out = read_text(path);
    return rc;
}

#define COMPARE(out, ...) compare_out(out, (const char *const[]){__VA_ARGS__, NULL})

/* The verdict of the table row that starts with `key` ("scenario variant params metric"
 * separated by runs of blanks): its last word. */
static const char *verdict_of(const char *out, const char *scenario, const char *metric)
{
    static char v[64];
    const char *p = out;
    while ((p = strstr(p, scenario)) != NULL) {
        const char *eol = strchr(p, '\n');
        char line[512];
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        snprintf(line, sizeof line, "%.*s", (int)len, p);
        if ((p == out || p[-1] == '\n') && strstr(line, metric)) {
            char *end = line + strlen(line);
            while (end > line && end[-1] == ' ')
                *--end = '\0';
            char *w = strrchr(line, ' ');
            snprintf(v, sizeof v, "%s", w ? w + 1 : line);
            return v;
        }
        p += strlen(scenario);
    }
    return "";
}

#define TIGHT(center, seed)                                                                        \
    {                                                                                              \
        "small-gemm", "sync-stream", "m=512", "kernel_us", "lower", center, 0.01, 40, seed         \
    }

/* ---- the reader ---- */

static void attaches_samples(void **state)
{
    (void)state;
    write_text(at("a.csv"), "scenario,variant,params,metric,better,median,mean,stddev,cv,run_id\n"
                            "s,v,p=1,x,lower,2,2,1,50,r\n"
                            "s,v,p=1,y,lower,5.5,5,1,20,r\n"
                            "s,v,p=2,x,lower,9,9,1,10,r\n");
    /* y's samples are split by x's: grouped by row all the same */
    write_text(at("a.samples.csv"), "run_id,scenario,variant,params,metric,rep,value\n"
                                    "r,s,v,p=1,y,1,4\n"
                                    "r,s,v,p=1,x,1,1\n"
                                    "r,s,v,p=1,x,2,3\n"
                                    "r,s,v,p=1,y,2,6\n"
                                    "r,s,v,p=1,y,7,5.5\n");
    sb_strpool pool;
    sb_strpool_init(&pool);
    sb_cmp_table t;
    assert_int_equal(sb_csv_read(at("a.csv"), &pool, &t), 0);
    assert_int_equal(sb_samples_read(at("a.samples.csv"), "a.csv", &pool, &t), 0);
    assert_int_equal(t.n_samples, 5);
    assert_int_equal(t.rows[0].n_samples, 2);
    assert_float_equal(t.rows[0].samples[0], 1, 0);
    assert_float_equal(t.rows[0].samples[1], 3, 0);
    assert_int_equal(t.rows[1].n_samples, 3);
    assert_float_equal(t.rows[1].samples[0], 4, 0);
    assert_float_equal(t.rows[1].samples[1], 6, 0);
    assert_float_equal(t.rows[1].samples[2], 5.5, 0);
    assert_int_equal(t.rows[2].n_samples, 0); /* no samples: the summary rule's */
    assert_null(t.rows[2].samples);
    /* in order (what syncbench writes): the values as read, no copy */
    write_text(at("b.samples.csv"), "scenario,variant,params,metric,rep,value\n"
                                    "s,v,p=2,x,1,8\n"
                                    "s,v,p=2,x,2,10\n");
    assert_int_equal(sb_samples_read(at("b.samples.csv"), "a.csv", &pool, &t), 0);
    assert_int_equal(t.rows[2].n_samples, 2);
    assert_float_equal(t.rows[2].samples[1], 10, 0);
    assert_int_equal(t.rows[0].n_samples, 0);
    sb_cmp_table_free(&t);
    sb_strpool_free(&pool);

    char p[64];
    assert_int_equal(sb_samples_path("dir/x.csv", p, sizeof p), 0);
    assert_string_equal(p, "dir/x.samples.csv");
    assert_int_equal(sb_samples_path("x", p, sizeof p), 0);
    assert_string_equal(p, "x.samples.csv");
    assert_int_equal(sb_samples_path("x.csv", p, 8), -1);
}

static void samples_error(const char *text, size_t n, const char *want)
{
    write_text(at("e.csv"), "scenario,variant,params,metric,better,median,mean,stddev,cv,run_id\n"
                            "s,v,p=1,x,lower,2,2,1,50,r\n");
    write_file(at("e.samples.csv"), text, n);
    sb_strpool pool;
    sb_strpool_init(&pool);
    sb_cmp_table t;
    assert_int_equal(sb_csv_read(at("e.csv"), &pool, &t), 0);
    sb_error_clear();
    assert_int_equal(sb_samples_read(at("e.samples.csv"), "e.csv", &pool, &t), SB_EXIT_USAGE);
    char full[512];
    snprintf(full, sizeof full, want, at("e.samples.csv"));
    assert_string_equal(sb_error_message(), full);
    assert_int_equal(t.n_samples, 0);
    assert_null(t.rows[0].samples);
    sb_cmp_table_free(&t);
    sb_strpool_free(&pool);
}

#define SAMPLES_ERROR(text, want) samples_error(text, sizeof text - 1, want)
#define HEAD "run_id,scenario,variant,params,metric,rep,value\n"

static void samples_errors_name_lines(void **state)
{
    (void)state;
    SAMPLES_ERROR(HEAD "r,s,v,p=1,x,1,1\n"
                       "r,s,v,p=2,x,1,1\n",
                  "%s:3: sample of s v p=2 x, which e.csv has no row for");
    /* a quoted field with a line break spans two physical lines */
    SAMPLES_ERROR(HEAD "r,s,v,\"p=1\nq=2\",x,1,1\n"
                       "r,s,v,p=1,x,1,1\n",
                  "%s:2: sample of s v p=1\\nq=2 x, which e.csv has no row for");
    /* samples whose median is not their row's: another run's, or the CSV changed after */
    SAMPLES_ERROR(HEAD "r,s,v,p=1,x,1,5\n"
                       "r,s,v,p=1,x,2,6\n",
                  "%s: the samples of s v p=1 x have median 5.5, but e.csv:2 says 2 (samples of "
                  "another run, or a CSV changed after them?)");
    SAMPLES_ERROR(HEAD "r,s,v,p=1,x,0,1\n", "%s:2: rep '0' is not an integer from 1 to 2147483647");
    SAMPLES_ERROR(HEAD "r,s,v,p=1,x,1.5,1\n",
                  "%s:2: rep '1.5' is not an integer from 1 to 2147483647");
    SAMPLES_ERROR(HEAD "r,s,v,p=1,x,1,1\n"
                       "r,s,v,p=1,x,1,2\n",
                  "%s:3: rep 1 of s v p=1 x after rep 1: a row's reps must increase");
    SAMPLES_ERROR(HEAD "r,s,v,p=1,x,1,nan\n",
                  "%s:2: value 'nan' is not a finite number below 1e+15 in magnitude");
    SAMPLES_ERROR(HEAD "r,s,v,p=1,x,1,inf\n",
                  "%s:2: value 'inf' is not a finite number below 1e+15 in magnitude");
    SAMPLES_ERROR(HEAD "r,s,v,p=1,x,1,1e999\n",
                  "%s:2: value '1e999' is not a finite number below 1e+15 in magnitude");
    SAMPLES_ERROR(HEAD "r,s,v,p=1,x,1,\n",
                  "%s:2: value '' is not a finite number below 1e+15 in magnitude");
    SAMPLES_ERROR(HEAD "q,s,v,p=1,x,1,1\n",
                  "%s:2: run_id 'q' is not e.csv:2's 'r' (samples of another run?)");
    SAMPLES_ERROR(HEAD "r,s,v,p=1,x,1\n", "%s:2: expected 7 fields, found 6");
    SAMPLES_ERROR("scenario,variant,params,metric,rep\n",
                  "%s: missing column 'value' (not a syncbench samples file?)");
    SAMPLES_ERROR(HEAD, "%s: no samples after the header");
    SAMPLES_ERROR("", "%s: empty file (not a syncbench samples file?)");
    SAMPLES_ERROR(HEAD "r,s,v,p=1,x,1,1\n\0", "%s:3: binary data (a NUL byte): not a CSV file");
    SAMPLES_ERROR(HEAD "r,s,v,p=1,x,1,\"1\n",
                  "%s:2: malformed CSV: a quoted field is never closed");
}

/* ---- verdicts on samples ---- */

static void verdicts_on_samples(void **state)
{
    (void)state;
    const spec base[] = {
        TIGHT(100, 1),
        {"copy", "h2d-pinned", "bytes=64MiB", "GBps", "higher", 50, 0.01, 40, 2},
        {"readback", "pending-pinned", "pending_us=1000", "wait_us", "lower", 100, 0.8, 40, 3},
    };
    const spec changed[] = {
        TIGHT(110, 11),                                                            /* 10 % slower */
        {"copy", "h2d-pinned", "bytes=64MiB", "GBps", "higher", 60, 0.01, 40, 12}, /* faster */
        {"readback", "pending-pinned", "pending_us=1000", "wait_us", "lower", 100, 0.8, 40, 13},
    };
    write_run(at("base"), base, 3, 1);
    write_run(at("same"), base, 3, 1);
    write_run(at("changed"), changed, 3, 1);
    char *out;
    /* identical: same, exit 0, and it says which rule */
    assert_int_equal(COMPARE(&out, at("base.csv"), at("same.csv")), 0);
    assert_non_null(strstr(out, "statistics: bootstrap CI of the change of medians on samples "
                                "(99 %)"));
    assert_string_equal(verdict_of(out, "small-gemm", "kernel_us"), "same");
    assert_string_equal(verdict_of(out, "copy", "GBps"), "same");
    assert_non_null(strstr(out, "99 % CI"));
    /* 10 % slower with tight samples: REGRESSION, exit 1; faster; the huge spread: inconclusive */
    assert_int_equal(COMPARE(&out, at("base.csv"), at("changed.csv")), SB_EXIT_FAIL);
    assert_string_equal(sb_error_message(), "compare: 1 regression beyond 5 % and the noise");
    assert_string_equal(verdict_of(out, "small-gemm", "kernel_us"), "REGRESSION");
    assert_string_equal(verdict_of(out, "copy", "GBps"), "faster");
    assert_string_equal(verdict_of(out, "readback", "wait_us"), "inconclusive");
    assert_non_null(strstr(out, "1 REGRESSION, 0 slower, 1 faster, 0 same, 0 no-baseline, 0 "
                                "new, 0 missing, 1 inconclusive"));
    assert_non_null(strstr(out, "compare: 1 inconclusive: "));
    assert_non_null(strstr(out, "--min-reps"));
    /* inconclusive alone: exit 0; with --strict, 1 */
    assert_int_equal(COMPARE(&out, at("base.csv"), at("changed.csv"), "--metric", "wait_us"), 0);
    assert_string_equal(verdict_of(out, "readback", "wait_us"), "inconclusive");
    assert_int_equal(
        COMPARE(&out, at("base.csv"), at("changed.csv"), "--metric", "wait_us", "--strict"),
        SB_EXIT_FAIL);
    assert_string_equal(sb_error_message(), "compare: 1 inconclusive row (--strict)");
    assert_int_equal(COMPARE(&out, at("base.csv"), at("changed.csv"), "--strict"), SB_EXIT_FAIL);
    assert_string_equal(sb_error_message(),
                        "compare: 1 regression beyond 5 % and the noise, 1 inconclusive "
                        "(--strict)");
    /* a wider threshold: the 10 % is now within it; the interval still excludes 0: slower */
    assert_int_equal(COMPARE(&out, at("base.csv"), at("changed.csv"), "--threshold", "15",
                             "--metric", "kernel_us"),
                     0);
    assert_string_equal(verdict_of(out, "small-gemm", "kernel_us"), "slower");
}

static void summary_rule_without_samples(void **state)
{
    (void)state;
    const spec base[] = {TIGHT(100, 1)}, cur[] = {TIGHT(110, 2)};
    write_run(at("nb"), base, 1, 1);
    write_run(at("nc"), cur, 1, 0); /* no samples */
    char *out;
    assert_int_equal(COMPARE(&out, at("nb.csv"), at("nc.csv")), SB_EXIT_FAIL);
    char want[256];
    snprintf(want, sizeof want, "summary rule: samples not found (%s)", at("nc.samples.csv"));
    assert_non_null(strstr(out, want));
    assert_non_null(strstr(out, "noise %"));
    assert_null(strstr(out, "% CI"));
    assert_non_null(strstr(out, "(threshold 5 %, noise 3 x cv, run noise 2 %; summary rule: "
                                "samples not found ("));
    /* -q: the rule is in the summary line */
    assert_int_equal(COMPARE(&out, at("nb.csv"), at("nc.csv"), "-q"), SB_EXIT_FAIL);
    assert_non_null(strstr(out, "summary rule: samples not found"));
    /* the samples given explicitly: the bootstrap's */
    write_run(at("nc2"), cur, 1, 1);
    assert_int_equal(
        COMPARE(&out, at("nb.csv"), at("nc.csv"), "--current-samples", at("nc2.samples.csv")),
        SB_EXIT_FAIL);
    assert_non_null(strstr(out, "statistics: bootstrap CI"));
    assert_string_equal(verdict_of(out, "small-gemm", "kernel_us"), "REGRESSION");
    /* a file given must exist */
    assert_int_equal(COMPARE(&out, at("nb.csv"), at("nc.csv"), "--base-samples", at("nope.csv")),
                     SB_EXIT_USAGE);
    char msg[256];
    snprintf(msg, sizeof msg, "compare: --base-samples %s: cannot open: No such file or directory",
             at("nope.csv"));
    assert_string_equal(sb_error_message(), msg);
    /* a bad samples file is bad input, named */
    write_text(at("bad.samples.csv"), HEAD "run1,small-gemm,sync-stream,m=512,kernel_us,1,x\n");
    assert_int_equal(
        COMPARE(&out, at("nb.csv"), at("nc2.csv"), "--base-samples", at("bad.samples.csv")),
        SB_EXIT_USAGE);
    snprintf(msg, sizeof msg, "%s:2: value 'x' is not a finite number below 1e+15 in magnitude",
             at("bad.samples.csv"));
    assert_string_equal(sb_error_message(), msg);
}

/* A row of the summary file without samples, in runs that have them: the summary rule for it,
 * said so. */
static void rows_without_samples(void **state)
{
    (void)state;
    const spec rows[] = {TIGHT(100, 1)};
    write_run(at("wb"), rows, 1, 1);
    write_run(at("wc"), rows, 1, 1);
    FILE *f = fopen(at("wc.csv"), "a");
    fputs("run1,t,h,NVIDIA H100,580,13.0,copy,h2d-pinned,bytes=1,10,5,GBps,GB/s,higher,50,50,0.1,"
          "50,50,50,50,0.2,\n",
          f);
    fclose(f);
    f = fopen(at("wb.csv"), "a");
    fputs("run1,t,h,NVIDIA H100,580,13.0,copy,h2d-pinned,bytes=1,10,5,GBps,GB/s,higher,50,50,0.1,"
          "50,50,50,50,0.2,\n",
          f);
    fclose(f);
    char *out;
    assert_int_equal(COMPARE(&out, at("wb.csv"), at("wc.csv")), 0);
    assert_non_null(strstr(out, "; summary rule for 1 row without samples in both files"));
    assert_non_null(strstr(out, "noise %"));
    assert_non_null(strstr(out, "99 % CI"));
}

static void subset_leaves_out_the_rest(void **state)
{
    (void)state;
    const spec base[] = {TIGHT(100, 1),
                         {"copy", "h2d-pinned", "bytes=64MiB", "GBps", "higher", 50, 0.01, 40, 2}};
    const spec cur[] = {TIGHT(100, 3)};
    write_run(at("sb"), base, 2, 1);
    write_run(at("sc"), cur, 1, 1);
    char *out;
    assert_int_equal(COMPARE(&out, at("sb.csv"), at("sc.csv"), "-q"), 0);
    assert_non_null(strstr(out, "compare: 2 rows: 0 REGRESSION, 0 slower, 0 faster, 1 same, 0 "
                                "no-baseline, 0 new, 1 missing"));
    assert_int_equal(COMPARE(&out, at("sb.csv"), at("sc.csv"), "-q", "--subset"), 0);
    assert_non_null(strstr(out, "compare: 1 rows: 0 REGRESSION, 0 slower, 0 faster, 1 same, 0 "
                                "no-baseline, 0 new, 0 missing"));
    assert_non_null(strstr(out, "--subset: 1 baseline row not in CURRENT left out"));
}

/* ---- --rerun ---- */

static int loads_and_plans(const char *path)
{
    sb_suite s;
    sb_error_clear();
    int rc = sb_suite_load(path, &s);
    if (!rc) {
        sb_plan plan;
        rc = sb_plan_build(s.specs, s.n, &plan);
        if (!rc)
            sb_plan_free(&plan);
    }
    sb_suite_free(&s);
    return rc;
}

static void rerun_suite(void **state)
{
    (void)state;
    const char *P = "m=512;n=512;k=512;dtype=fp16;tf32=0";
    spec base[] = {
        {"small-gemm", "async", P, "kernel_us", "lower", 100, 0.01, 40, 1},
        {"small-gemm", "sync-stream", P, "kernel_us", "lower", 100, 0.01, 40, 2},
        {"small-gemm", "sync-stream", P, "TFLOPs", "higher", 60, 0.01, 40, 3},
        {"copy", "h2d-pinned", "bytes=64MiB", "GBps", "higher", 50, 0.01, 40, 4},
        {"readback", "pending-pinned", "pending_us=1000;pending=spin;print_elems=16", "wait_us",
         "lower", 100, 0.8, 40, 5},
    };
    spec cur[5];
    memcpy(cur, base, sizeof cur);
    for (int i = 0; i < 5; i++)
        cur[i].seed += 10;
    cur[1].center = 110; /* sync-stream kernel_us: REGRESSION */
    cur[2].center = 54;  /* sync-stream TFLOPs: REGRESSION */
    write_run(at("rb"), base, 5, 1);
    write_run(at("rc"), cur, 5, 1);
    char *out;
    assert_int_equal(COMPARE(&out, at("rb.csv"), at("rc.csv"), "--rerun", at("r.ini")),
                     SB_EXIT_FAIL);
    assert_non_null(strstr(out, "rerun: 2 measurements to confirm in "));
    const char *ini = read_text(at("r.ini"));
    char want[4096];
    snprintf(want, sizeof want,
             "; syncbench confirmation suite, written by `syncbench compare --rerun`\n"
             "; baseline: %s\n"
             "; current:  %s\n"
             "; 3 rows came out REGRESSION or inconclusive: 2 measurements to take\n"
             "; again with at least 30 repetitions. Run it, then decide on that run:\n"
             ";   syncbench --config THIS.ini --csv C.csv --samples C.samples.csv\n"
             ";   syncbench compare BASELINE.csv C.csv --subset\n"
             "\n"
             "; confirm: small-gemm sync-stream %s kernel_us: REGRESSION ",
             at("rb.csv"), at("rc.csv"), P);
    assert_memory_equal(ini, want, strlen(want));
    /* the sections: exactly the REGRESSION and inconclusive measurements */
    const char *s1 = strstr(ini, "[confirm-1]\n");
    assert_non_null(s1);
    assert_non_null(strstr(ini, "[confirm-1]\nscenario = small-gemm\nvariants = sync-stream\n"
                                "m = 512\nn = 512\nk = 512\ndtype = fp16\ntf32 = 0\n"
                                "iters = 10\nmin_reps = 30\nmax_reps = 300\nmax_time = 3\n\n"
                                "; confirm: readback pending-pinned "
                                "pending_us=1000;pending=spin;print_elems=16 wait_us: "
                                "inconclusive "));
    assert_non_null(strstr(ini, "\n[confirm-2]\nscenario = readback\nvariants = pending-pinned\n"
                                "pending_us = 1000\npending = spin\nprint_elems = 16\n"
                                "iters = 10\nmin_reps = 30\nmax_reps = 300\nmax_time = 3\n"));
    assert_null(strstr(ini, "[confirm-3]"));
    assert_non_null(strstr(ini, "; confirm: small-gemm sync-stream " /* both rows named */
                                "m=512;n=512;k=512;dtype=fp16;tf32=0 TFLOPs: REGRESSION -"));
    assert_int_equal(loads_and_plans(at("r.ini")), 0);
    /* --rerun-reps */
    assert_int_equal(COMPARE(&out, at("rb.csv"), at("rc.csv"), "--rerun", at("r.ini"),
                             "--rerun-reps", "50", "-q"),
                     SB_EXIT_FAIL);
    ini = read_text(at("r.ini"));
    assert_non_null(strstr(ini, "min_reps = 50\nmax_reps = 500\nmax_time = 3\n"));
    /* nothing to confirm: a comment only. A run compared with itself (identical samples) is a
     * change of exactly 0, even for the readback whose spread a bootstrap of two draws called
     * inconclusive */
    assert_int_equal(COMPARE(&out, at("rb.csv"), at("rb.csv"), "--rerun", at("r.ini")), 0);
    assert_string_equal(verdict_of(out, "readback", "wait_us"), "same");
    ini = read_text(at("r.ini"));
    assert_non_null(strstr(ini, "; nothing to confirm: no REGRESSION or inconclusive rows\n"));
    assert_int_equal(COMPARE(&out, at("rb.csv"), at("rb.csv"), "--rerun", at("r.ini"), "--metric",
                             "kernel_us,TFLOPs,GBps"),
                     0);
    ini = read_text(at("r.ini"));
    assert_non_null(strstr(ini, "; nothing to confirm: no REGRESSION or inconclusive rows\n"));
    assert_null(strchr(ini, '['));
    assert_non_null(strstr(out, "rerun: 0 measurements to confirm in "));
    /* not onto an input, not onto the Markdown */
    assert_int_equal(COMPARE(&out, at("rb.csv"), at("rc.csv"), "--rerun", at("rc.samples.csv")),
                     SB_EXIT_USAGE);
    assert_int_equal(
        COMPARE(&out, at("rb.csv"), at("rc.csv"), "--rerun", at("x.md"), "--markdown", at("x.md")),
        SB_EXIT_USAGE);
}

/* A sync variant and its reference in one section (two would plan the reference twice), and a
 * section per parameter set. */
static void rerun_groups_measurements(void **state)
{
    (void)state;
    sb_cmp_row r[4];
    memset(r, 0, sizeof r);
    sb_strpool pool;
    sb_strpool_init(&pool);
#define S(x) sb_strpool_intern(&pool, x, strlen(x))
    r[0].scenario = r[1].scenario = r[2].scenario = r[3].scenario = S("small-gemm");
    r[0].variant = S("async");
    r[1].variant = r[3].variant = S("sync-stream");
    r[2].variant = S("sync-readback");
    r[0].params = r[1].params = r[2].params = S("m=512");
    r[3].params = S("m=1024");
    r[0].metric = r[1].metric = r[3].metric = S("kernel_us");
    r[2].metric = S("TFLOPs");
    r[0].iters = r[1].iters = r[2].iters = 1000;
    sb_rerun_item items[4] = {{&r[0], SB_REGRESSION, 10},
                              {&r[1], SB_REGRESSION, 11},
                              {&r[2], SB_INCONCLUSIVE, NAN},
                              {&r[3], SB_REGRESSION, 12}};
    sb_rerun_opts o = {30, "b.csv", "c.csv"};
    FILE *f = fopen(at("g.ini"), "w");
    int sections;
    assert_int_equal(sb_rerun_write(f, items, 4, &o, &sections), 0);
    fclose(f);
    assert_int_equal(sections, 2);
    const char *ini = read_text(at("g.ini"));
    assert_non_null(strstr(ini, "; confirm: small-gemm sync-readback m=512 TFLOPs: inconclusive\n"
                                "[confirm-1]\nscenario = small-gemm\n"
                                "variants = async,sync-stream,sync-readback\nm = 512\n"
                                "iters = 1000\n"));
    assert_non_null(strstr(ini, "[confirm-2]\nscenario = small-gemm\nvariants = sync-stream\n"
                                "m = 1024\nmin_reps = 30\n"));
    assert_int_equal(loads_and_plans(at("g.ini")), 0);

    /* names and params a suite cannot take: refused, one line, nothing written */
    const char *bad[][2] = {
        {"params", "m=512\n[x]"}, {"params", "m=1,2"},   {"params", "m"},
        {"params", "m=1;m=2"},    {"params", "iters=5"}, {"params", "m=1;"},
        {"params", "m= 1"},       {"variant", "a b"},    {"scenario", "s;x"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sb_cmp_row b = r[0];
        b.line = 7;
        if (!strcmp(bad[i][0], "params"))
            b.params = S(bad[i][1]);
        else if (!strcmp(bad[i][0], "variant"))
            b.variant = S(bad[i][1]);
        else
            b.scenario = S(bad[i][1]);
        sb_rerun_item it = {&b, SB_REGRESSION, 10};
        char *text = NULL;
        size_t len = 0;
        f = open_memstream(&text, &len);
        sb_error_clear();
        assert_int_equal(sb_rerun_write(f, &it, 1, &o, &sections), SB_EXIT_USAGE);
        fclose(f);
        assert_int_equal(len, 0);
        free(text);
        const char *msg = sb_error_message();
        assert_non_null(strstr(msg, "compare: --rerun: c.csv:7: "));
        assert_null(strchr(msg, '\n'));
    }
    /* more measurements than a suite holds */
    enum { N = SB_RERUN_MAX_SECTIONS + 1 };
    sb_cmp_row *many = calloc(N, sizeof *many);
    sb_rerun_item *mi = calloc(N, sizeof *mi);
    for (int i = 0; i < N; i++) {
        char p[32];
        snprintf(p, sizeof p, "m=%d", i + 1);
        many[i] = r[0];
        many[i].params = S(p);
        mi[i] = (sb_rerun_item){&many[i], SB_REGRESSION, 10};
    }
    f = fopen("/dev/null", "w");
    sb_error_clear();
    assert_int_equal(sb_rerun_write(f, mi, N, &o, &sections), SB_EXIT_USAGE);
    assert_string_equal(sb_error_message(), "compare: --rerun: more than 256 measurements to "
                                            "confirm (the most a suite holds)");
    assert_int_equal(sb_rerun_write(f, mi, N - 1, &o, &sections), 0);
    fclose(f);
    free(many);
    free(mi);
#undef S
    sb_strpool_free(&pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(attaches_samples),     cmocka_unit_test(samples_errors_name_lines),
        cmocka_unit_test(verdicts_on_samples),  cmocka_unit_test(summary_rule_without_samples),
        cmocka_unit_test(rows_without_samples), cmocka_unit_test(subset_leaves_out_the_rest),
        cmocka_unit_test(rerun_suite),          cmocka_unit_test(rerun_groups_measurements),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
