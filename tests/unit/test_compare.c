/* `syncbench compare`: verdicts on synthetic rows with known deltas and noise (zero baselines
 * included), the CSV reader's errors (each naming its physical line) and input limits, matching
 * order, and the exit codes of the whole subcommand on synthetic CSVs in a temp dir. */
#include "cmocka_all.h"

#include "tmpdir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "cmd/compare_cmd.h"
#include "compare/csv_read.h"
#include "compare/match.h"
#include "compare/verdict.h"

static sb_cmp_row mk(double median, double cv, sb_better better)
{
    sb_cmp_row r;
    memset(&r, 0, sizeof r);
    r.median = median;
    r.cv = cv;
    r.stddev = fabs(median) * cv / 100;
    r.better = better;
    return r;
}

static const sb_compare_opts opts = {5.0, 3.0, 2.0};

static sb_verdict verdict(double b, double bcv, double c, double ccv, sb_better better,
                          double *change)
{
    sb_cmp_row base = mk(b, bcv, better), cur = mk(c, ccv, better);
    double noise;
    return sb_compare_rows(&base, &cur, &opts, change, &noise);
}

static void verdicts(void **state)
{
    (void)state;
    double ch;
    /* 20 % slower, both runs quiet (cv 1 %, run noise 2 %: band 3 x 2.45 = 7.3 %): a regression */
    assert_int_equal(verdict(10, 1, 12, 1, SB_LOWER, &ch), SB_REGRESSION);
    assert_float_equal(ch, 20, 1e-9);
    /* the same change in noisy runs (cv 6 %: band 26 %): slower, not a regression */
    assert_int_equal(verdict(10, 6, 12, 6, SB_LOWER, &ch), SB_SLOWER);
    /* 6 % slower in quiet runs: beyond the threshold, within the run-to-run noise (6.1 %) */
    assert_int_equal(verdict(10, 0.1, 10.6, 0.1, SB_LOWER, &ch), SB_SLOWER);
    {
        sb_compare_opts strict = {5.0, 3.0, 0.0}; /* without it: a regression */
        sb_cmp_row b = mk(10, 0.1, SB_LOWER), c = mk(10.6, 0.1, SB_LOWER);
        double noise;
        assert_int_equal(sb_compare_rows(&b, &c, &strict, &ch, &noise), SB_REGRESSION);
        assert_float_equal(noise, 3 * sqrt(0.02), 1e-9);
    }
    /* within the threshold: same, however quiet */
    assert_int_equal(verdict(10, 0.1, 10.4, 0.1, SB_LOWER, &ch), SB_SAME);
    /* 20 % faster */
    assert_int_equal(verdict(10, 1, 8, 1, SB_LOWER, &ch), SB_FASTER);
    /* higher is better: a drop is the regression */
    assert_int_equal(verdict(50, 0.5, 40, 0.5, SB_HIGHER, &ch), SB_REGRESSION);
    assert_float_equal(ch, -20, 1e-9);
    assert_int_equal(verdict(50, 0.5, 60, 0.5, SB_HIGHER, &ch), SB_FASTER);
    assert_string_equal(sb_verdict_name(SB_REGRESSION), "REGRESSION");
    assert_string_equal(sb_verdict_name(SB_NO_BASELINE), "no-baseline");
}

/* A baseline at or near zero (|median| <= stddev) gives no relative change: `same` when the
 * current is at or near zero too, else `no-baseline`; never a REGRESSION (it was +inf % or
 * +-200 %, a REGRESSION, before). */
static void zero_baselines(void **state)
{
    (void)state;
    double ch, noise;
    assert_int_equal(verdict(0, 0, 0, 0, SB_LOWER, &ch), SB_SAME);
    assert_float_equal(ch, 0, 0);
    assert_int_equal(verdict(0, 0, 1, 0, SB_LOWER, &ch), SB_NO_BASELINE);
    assert_true(isnan(ch));
    assert_int_equal(verdict(0, 0, -1, 0, SB_HIGHER, &ch), SB_NO_BASELINE);
    /* an overhead of -0.5 +- 1 that becomes +0.5 +- 1: was +200 %, a REGRESSION */
    sb_cmp_row b = mk(-0.5, 0, SB_LOWER), c = mk(0.5, 0, SB_LOWER);
    b.stddev = c.stddev = 1;
    assert_int_equal(sb_compare_rows(&b, &c, &opts, &ch, &noise), SB_SAME);
    assert_float_equal(ch, 200, 1e-9);
    /* ... or +5 +- 1: the baseline cannot say how much worse that is */
    c.median = 5;
    assert_int_equal(sb_compare_rows(&b, &c, &opts, &ch, &noise), SB_NO_BASELINE);
    /* a baseline just outside its stddev is judged as usual */
    b.median = 1.5;
    assert_int_equal(sb_compare_rows(&b, &c, &opts, &ch, &noise), SB_REGRESSION);
    assert_true(sb_near_zero(&(sb_cmp_row){.median = 0}));
    assert_false(sb_near_zero(&(sb_cmp_row){.median = 1e-9}));
}

static const char header[] =
    "run_id,timestamp,host,gpu,driver,cuda_runtime,scenario,variant,params,iters,reps,metric,"
    "unit,better,median,mean,stddev,min,max,p05,p95,cv,flags\n";

static char *write_tmp_n(const char *text, size_t n)
{
    static char paths[8][96];
    static int k;
    char *p = paths[k % 8];
    snprintf(p, sizeof paths[0], "%s/f%d.csv", tmpdir, k++);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    fclose(f);
    return p;
}

static char *write_tmp(const char *text)
{
    return write_tmp_n(text, strlen(text));
}

/* a CSV with the given rows: "scenario,variant,params,metric,better,median,cv" each */
static char *csv(const char *const *rows)
{
    static char buf[8192];
    strcpy(buf, header);
    for (int i = 0; rows[i]; i++) {
        char s[64], v[64], p[128], m[64], b[16];
        double med, cv;
        sscanf(rows[i], "%63[^,],%63[^,],%127[^,],%63[^,],%15[^,],%lf,%lf", s, v, p, m, b, &med,
               &cv);
        char line[512];
        snprintf(line, sizeof line,
                 "r1,2026-11-22T00:00:00Z,h,NVIDIA H100,580,13.0,%s,%s,%s,10,20,%s,us,%s,%g,%g,%g,"
                 "%g,%g,%g,%g,%g,\n",
                 s, v, p, m, b, med, med, med * cv / 100, med, med, med, med, cv);
        strcat(buf, line);
    }
    return write_tmp(buf);
}

#define ROWS(...) ((const char *const[]){__VA_ARGS__, NULL})

static int compare_args(const char *base, const char *cur, const char *opt, const char *val)
{
    char *argv[8] = {"compare", (char *)base, (char *)cur, NULL};
    int argc = 3;
    if (opt) {
        argv[argc++] = (char *)opt;
        argv[argc++] = (char *)val;
    }
    sb_error_clear();
    fflush(stdout);
    FILE *saved = stdout;
    stdout = fopen("/dev/null", "w"); /* the table is not what is tested here */
    int rc = sb_cmd_compare(argc, argv);
    fclose(stdout);
    stdout = saved;
    return rc;
}

static int compare(const char *base, const char *cur, const char *metrics)
{
    return compare_args(base, cur, metrics ? "--metric" : NULL, metrics);
}

static void exit_codes(void **state)
{
    (void)state;
    const char *base = csv(ROWS("small-gemm,async,m=512,wall_us_per_iter,lower,10,1",
                                "copy,h2d-pinned,bytes=64MiB,GBps,higher,55,0.2"));
    /* identical: 0 */
    assert_int_equal(compare(base, base, NULL), 0);
    /* a quiet 30 % slowdown: 1, naming the count */
    const char *slow = csv(ROWS("small-gemm,async,m=512,wall_us_per_iter,lower,13,1",
                                "copy,h2d-pinned,bytes=64MiB,GBps,higher,55,0.2"));
    assert_int_equal(compare(base, slow, NULL), SB_EXIT_FAIL);
    assert_string_equal(sb_error_message(), "compare: 1 regression beyond 5 % and the noise");
    /* ... that --metric leaves out */
    assert_int_equal(compare(base, slow, "GBps"), 0);
    assert_int_equal(compare(base, slow, "TFLOPs,GBps"), 0);
    assert_int_equal(compare(base, slow, "GBps,wall_us_per_iter"), SB_EXIT_FAIL);
    /* bandwidth down 20 %: a regression in the other direction */
    const char *narrow = csv(ROWS("small-gemm,async,m=512,wall_us_per_iter,lower,10,1",
                                  "copy,h2d-pinned,bytes=64MiB,GBps,higher,44,0.2"));
    assert_int_equal(compare(base, narrow, NULL), SB_EXIT_FAIL);
    /* rows only on one side are new / missing, not failures */
    const char *other = csv(ROWS("small-gemm,async,m=512,wall_us_per_iter,lower,10,1",
                                 "readback,idle-pinned,x=1,readback_us,lower,7,3"));
    assert_int_equal(compare(base, other, NULL), 0);
    /* a noisy run does not fail the gate */
    const char *noisy = csv(ROWS("small-gemm,async,m=512,wall_us_per_iter,lower,13,15",
                                 "copy,h2d-pinned,bytes=64MiB,GBps,higher,55,0.2"));
    assert_int_equal(compare(base, noisy, NULL), 0);
    assert_int_equal(compare(base, base, "nosuch"), SB_EXIT_USAGE);
    assert_string_equal(sb_error_message(), "compare: no rows with metric nosuch");
}

/* --run-noise was documented but missing from the option table ("unknown option"). */
static void run_noise_option(void **state)
{
    (void)state;
    /* 6 % slower in quiet runs: within the default run noise (band 6.1 %), a regression with
     * none */
    const char *base = csv(ROWS("small-gemm,async,m=512,kernel_us,lower,10,0.1"));
    const char *cur = csv(ROWS("small-gemm,async,m=512,kernel_us,lower,10.6,0.1"));
    assert_int_equal(compare(base, cur, NULL), 0);
    assert_int_equal(compare_args(base, cur, "--run-noise", "0"), SB_EXIT_FAIL);
    assert_int_equal(compare_args(base, cur, "--run-noise", "1"), SB_EXIT_FAIL);
    assert_int_equal(compare_args(base, cur, "--run-noise", "2"), 0);
}

/* A zero baseline was +inf % and a REGRESSION: now `no-baseline`, exit 0. */
static void zero_baseline_is_not_a_regression(void **state)
{
    (void)state;
    const char *base = csv(ROWS("big-gemm,sync-device,m=8192,overhead_us,lower,0,0",
                                "copy,h2d-pinned,bytes=64MiB,GBps,higher,55,0.2"));
    const char *cur = csv(ROWS("big-gemm,sync-device,m=8192,overhead_us,lower,3,1",
                               "copy,h2d-pinned,bytes=64MiB,GBps,higher,55,0.2"));
    assert_int_equal(compare(base, cur, NULL), 0);
    assert_int_equal(compare(base, base, NULL), 0);
}

/* The file at path refused as bad input (exit 2, no rows) with the one line want. */
static void csv_refused(const char *path, const char *want)
{
    sb_strpool pool;
    sb_strpool_init(&pool);
    sb_cmp_table t;
    sb_error_clear();
    assert_int_equal(sb_csv_read(path, &pool, &t), SB_EXIT_USAGE);
    assert_int_equal(t.n, 0);
    sb_strpool_free(&pool);
    assert_string_equal(sb_error_message(), want);
    assert_null(strchr(sb_error_message(), '\n'));
}

/* text, n bytes of it, written to a file and refused with "PATH" + want. */
static void read_error_n(const char *text, size_t n, const char *want)
{
    char *p = write_tmp_n(text, n), *full = NULL;
    assert_true(asprintf(&full, "%s%s", p, want) > 0);
    csv_refused(p, full);
    free(full);
    unlink(p);
}

static void read_error(const char *text, const char *want)
{
    read_error_n(text, strlen(text), want);
}

/* The header, then `rows`: read_error on that. */
static void rows_error(const char *rows, const char *want)
{
    char text[4096];
    snprintf(text, sizeof text, "%s%s", header, rows);
    read_error(text, want);
}

#define ROW "r,t,h,g,d,c,small-gemm,async,m=1,1,1,wall,us,lower,1,1,0,1,1,1,1,0,\n"

static void malformed_csv_names_the_line(void **state)
{
    (void)state;
    read_error("", ": empty file (not a syncbench CSV?)");
    read_error("\n\n  \n", ": empty file (not a syncbench CSV?)");
    read_error("a,b,c\n1,2,3\n", ": missing column 'scenario' (not a syncbench CSV?)");
    read_error(header, ": no rows after the header");
    rows_error(ROW "r,t,h,g,d,c,small-gemm,async,m=1,1,1,gpu\n",
               ":3: expected 23 fields, found 12");
    rows_error("r,t,h,g,d,c,small-gemm,async,m=1,1,1,wall,us,lower,fast,1,0,1,1,1,1,0,\n",
               ":2: median 'fast' is not a number");
    rows_error("r,t,h,g,d,c,small-gemm,async,m=1,1,1,wall,us,lower,1e999,1,0,1,1,1,1,0,\n",
               ":2: median '1e999' is out of range");
    rows_error("r,t,h,g,d,c,small-gemm,async,m=1,1,1,wall,us,lower,1,1,-2,1,1,1,1,0,\n",
               ":2: stddev '-2' is negative");
    rows_error("r,t,h,g,d,c,small-gemm,async,m=1,1,1,wall,us,smaller,1,1,0,1,1,1,1,0,\n",
               ":2: better must be 'lower' or 'higher', not 'smaller'");
    rows_error("r,t,h,g,d,c,,async,m=1,1,1,wall,us,lower,1,1,0,1,1,1,1,0,\n",
               ":2: empty scenario, variant or metric");
    rows_error(ROW "r,t,h,g,d,c,small-gemm,async,m=1,1,1,wall,us,lower,2,1,0,1,1,1,1,0,\n",
               ":3: duplicate row for small-gemm async m=1 wall (first at line 2)");
    rows_error("r,t,h,g,d,c,small-gemm,async,\"m=1,1,1,wall,us,lower,1,1,0,1,1,1,1,0,\n",
               ":2: malformed CSV: a quoted field is never closed");
    rows_error(ROW "r,t,h,g,d,c,small-gemm,as\"ync,m=1,1,1,wall,us,lower,1,1,0,1,1,1,1,0,\n",
               ":3: malformed CSV: error parsing data while strict checking enabled");
    /* text from the file is shown on one line, at most 40 bytes */
    rows_error("r,t,h,g,d,c,small-gemm,async,m=1,1,1,wall,us,lower,\"1\n2\",1,0,1,1,1,1,0,\n",
               ":2: median '1\\n2' is not a number");
    rows_error("r,t,h,g,d,c,small-gemm,async,m=1,1,1,wall,us,lower,"
               "0123456789012345678901234567890123456789xyz,1,0,1,1,1,1,0,\n",
               ":2: median '0123456789012345678901234567890123456789...' is not a number");
}

/* Errors name physical lines of the file, not CSV record numbers: a quoted field with a line
 * break spans two lines, blank lines are lines too. */
static void errors_name_physical_lines(void **state)
{
    (void)state;
    char text[4096];
#define SPLIT "r,t,h,g,d,c,small-gemm,async,\"m=1\nn=2\",1,1,wall,us,lower,1,1,0,1,1,1,1,0,\n"
#define BAD "r,t,h,g,d,c,copy,h2d,m=1,1,1,GBps,GB/s,higher,fast,1,0,1,1,1,1,0,\n"
    /* rows on lines 2-3 and 4: the second is record 3 but line 4 */
    snprintf(text, sizeof text, "%s%s%s", header, SPLIT, BAD);
    read_error(text, ":4: median 'fast' is not a number");
    /* an error in a record that spans lines names the line it starts on */
    snprintf(text, sizeof text, "%s%s%s", header, ROW,
             "r,t,h,g,d,c,copy,h2d,\"a\nb\nc\",1,1,GBps,GB/s,higher,fast,1,0,1,1,1,1,0,\n");
    read_error(text, ":3: median 'fast' is not a number");
    /* blank lines */
    snprintf(text, sizeof text, "%s\n%s\n  \n%s", header, ROW, BAD);
    read_error(text, ":6: median 'fast' is not a number");
    /* CRLF line ends */
    read_error("run_id,scenario,variant,params,metric,better,median,mean,stddev,cv\r\n"
               "r,s,v,p,m,lower,1,1,0,0\r\n"
               "r,s,v,\"p\r\nq\",m,lower,1,1,0,0\r\n"
               "r,s,v,p,m,lower,2,1,0,0\r\n",
               ":5: duplicate row for s v p m (first at line 2)");
    /* duplicates name both lines */
    snprintf(text, sizeof text, "%s%s%s%s", header, SPLIT, BAD, SPLIT);
    text[strlen(text) - strlen(SPLIT) - strlen(BAD)] = '\0';
    strcat(text, ROW SPLIT);
    read_error(text, ":5: duplicate row for small-gemm async m=1\\nn=2 wall (first at line 2)");
    /* a malformed quote after a multi-line record */
    snprintf(text, sizeof text, "%s%s%s", header, SPLIT,
             "r,t,h,g,d,c,small-gemm,as\"ync,m=1,1,1,wall,us,lower,1,1,0,1,1,1,1,0,\n");
    read_error(text, ":4: malformed CSV: error parsing data while strict checking enabled");
    /* a quote never closed names the line it opened on */
    snprintf(text, sizeof text, "%s%s%s", header, SPLIT, "r,t,h,g,d,c,small-gemm,\"async\n\n\n");
    read_error(text, ":4: malformed CSV: a quoted field is never closed");
#undef SPLIT
#undef BAD
}

/* reps is an integer (it was read as a double and converted: 1e10 was undefined behaviour). */
static void reps_is_an_integer(void **state)
{
    (void)state;
    const char *bad[] = {"1e10", "-5",   "1.5", "0", "2147483648", "99999999999999999999",
                         " 3",   "0x10", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[1024], want[256];
        snprintf(text, sizeof text,
                 "%s%sr,t,h,g,d,c,copy,h2d,m=1,1,%s,GBps,GB/s,higher,1,1,0,1,1,1,1,0,\n", header,
                 ROW, bad[i]);
        if (bad[i][0] == ' ') /* not trimmed to "3": refused, as --iters ' 5' is */
            snprintf(want, sizeof want, ":3: reps '%s' has a blank before or after it (column 11)",
                     bad[i]);
        else
            snprintf(want, sizeof want, ":3: reps '%s' is not an integer from 1 to 2147483647",
                     bad[i]);
        read_error(text, want);
    }
}

/* A header that names a column twice is refused (the last one used to win). */
static void duplicate_columns(void **state)
{
    (void)state;
    char text[1024];
    snprintf(text, sizeof text, "%.*s,median\n%.*s,7\n", (int)strlen(header) - 1, header,
             (int)strlen(ROW) - 1, ROW);
    read_error(text, ":1: duplicate column 'median' (columns 15 and 24)");
    read_error("\nscenario,variant,params,metric,better,median,mean,stddev,cv,x,x\n",
               ":2: duplicate column 'x' (columns 10 and 11)");
}

static void input_limits(void **state)
{
    (void)state;
    size_t big = 2 << 20;
    char *text = malloc(big + 1024);
    assert_non_null(text);
    /* a record over 64 KiB */
    int k = snprintf(text, big, "%sr,t,h,g,d,c,small-gemm,async,", header);
    memset(text + k, 'x', 70000);
    strcpy(text + k + 70000, ",1,1,wall,us,lower,1,1,0,1,1,1,1,0,\n");
    read_error(text, ":2: record longer than 64 KiB (the limit)");
    /* one endless line: refused after 64 KiB, not read to the end */
    memset(text, 'a', big);
    read_error_n(text, big, ":1: record longer than 64 KiB (the limit)");
    /* ... also when it is all blanks, which libcsv skips */
    memset(text, ' ', big);
    read_error_n(text, big, ":1: record longer than 64 KiB (the limit)");
    /* ... also when it is a quoted field that never ends */
    k = snprintf(text, big, "%s\"", header);
    memset(text + k, '\n', big - (size_t)k);
    read_error_n(text, big, ":2: record longer than 64 KiB (the limit)");
    /* more than 64 fields */
    strcpy(text, "a");
    for (int i = 0; i < 64; i++)
        strcat(text, ",a");
    strcat(text, "\n");
    read_error(text, ":1: more than 64 fields");
    /* NUL bytes: binary data */
    memset(text, 0, 4096);
    read_error_n(text, 4096, ":1: binary data (a NUL byte): not a CSV file");
    k = snprintf(text, big, "%s%s", header, ROW);
    text[k - 5] = '\0';
    read_error_n(text, (size_t)k, ":2: binary data (a NUL byte): not a CSV file");
    free(text);

    /* a file over 256 MiB (sparse: no disk used), refused before reading */
    char path[128];
    snprintf(path, sizeof path, "%s/huge.csv", tmpdir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(header, f);
    int rc = ftruncate(fileno(f), SB_CSV_MAX_FILE + 1);
    fclose(f);
    if (rc == 0) {
        char want[256];
        snprintf(want, sizeof want,
                 "%s: larger than 256 MiB, the most compare reads (it holds every row in memory)",
                 path);
        csv_refused(path, want);
    }
    unlink(path);
}

/* /dev/zero is binary: refused at once (it used to be read into memory until 1.8 GB). */
/* More rows than SB_CSV_MAX_ROWS: refused at the first row past it, naming its line. Here, not
 * in tests/cli: reading them takes ~500 MB, which a pytest worker's children's max RSS (which
 * other tests measure) would keep. */
static void too_many_rows(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/many.csv", tmpdir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("scenario,variant,params,metric,better,median,mean,stddev,cv\n", f);
    for (long i = 0; i <= SB_CSV_MAX_ROWS; i++)
        fprintf(f, "s,v,%ld,m,lower,1,1,0,0\n", i);
    fclose(f);
    char want[256];
    snprintf(want, sizeof want,
             "%s:%d: more than %d rows, the most compare reads (it holds every row in memory)",
             path, SB_CSV_MAX_ROWS + 2, SB_CSV_MAX_ROWS);
    csv_refused(path, want);
    unlink(path);
}

static void dev_zero_fails_fast(void **state)
{
    (void)state;
    csv_refused("/dev/zero", "/dev/zero:1: binary data (a NUL byte): not a CSV file");
}

/* Reads the CSV at path, which must hold one row, into *d (its text in *pool). */
static void read_one_row(const char *path, sb_strpool *pool, sb_cmp_table *d)
{
    sb_strpool_init(pool);
    assert_int_equal(sb_csv_read(path, pool, d), 0);
    assert_int_equal(d->n, 1);
}

static void reads_what_syncbench_writes(void **state)
{
    (void)state;
    char text[4096];
    snprintf(text, sizeof text, "%s%s", header,
             "r9,t,h,NVIDIA H100 80GB HBM3,d,c,copy,h2d-pinned,bytes=64MiB,4,12,GBps,GB/s,higher,"
             "54.9,54.8,0.1,54.5,55,54.6,55,0.18,\"throttled;noisy\"\n");
    char *p = write_tmp(text);
    sb_strpool pool;
    sb_cmp_table d;
    read_one_row(p, &pool, &d);
    assert_string_equal(d.gpu, "NVIDIA H100 80GB HBM3");
    assert_string_equal(d.run_id, "r9");
    const sb_cmp_row *r = &d.rows[0];
    assert_string_equal(r->scenario, "copy");
    assert_string_equal(r->variant, "h2d-pinned");
    assert_string_equal(r->params, "bytes=64MiB");
    assert_string_equal(r->metric, "GBps");
    assert_string_equal(r->unit, "GB/s");
    assert_int_equal(r->better, SB_HIGHER);
    assert_float_equal(r->median, 54.9, 1e-12);
    assert_float_equal(r->mean, 54.8, 1e-12);
    assert_float_equal(r->stddev, 0.1, 1e-12);
    assert_float_equal(r->cv, 0.18, 1e-12);
    assert_int_equal(r->reps, 12);
    assert_int_equal(r->line, 2);
    assert_string_equal(r->flags, "throttled;noisy");
    sb_cmp_table_free(&d);
    sb_strpool_free(&pool);
    unlink(p);
}

/* Only the nine required columns, in another order: reads, with empty unit, flags and gpu. */
static void reads_minimal_columns(void **state)
{
    (void)state;
    char *p = write_tmp("cv,stddev,mean,median,better,metric,params,variant,scenario\n"
                        "1,0.1,10,10,lower,m,p,v,s\n");
    sb_strpool pool;
    sb_cmp_table d;
    read_one_row(p, &pool, &d);
    assert_string_equal(d.gpu, "");
    assert_string_equal(d.rows[0].unit, "");
    assert_string_equal(d.rows[0].scenario, "s");
    assert_int_equal(d.rows[0].reps, 0);
    sb_cmp_table_free(&d);
    sb_strpool_free(&pool);
}

static void read_pair(const char *a, const char *b, sb_strpool *pool, sb_cmp_table *ta,
                      sb_cmp_table *tb)
{
    sb_strpool_init(pool);
    assert_int_equal(sb_csv_read(a, pool, ta), 0);
    assert_int_equal(sb_csv_read(b, pool, tb), 0);
}

/* Baseline order, then the rows only in the current run in its order; --metric filters. */
static void match_order(void **state)
{
    (void)state;
    const char *base = csv(ROWS("a,v,p=1,x,lower,1,1", "b,v,p=1,x,lower,1,1", "c,v,p=1,x,lower,1,1",
                                "c,v,p=1,y,lower,1,1", "c,v,p=2,x,lower,1,1"));
    const char *cur = csv(ROWS("e,v,p=1,x,lower,1,1", "c,v,p=1,x,lower,2,1", "d,v,p=1,y,lower,1,1",
                               "a,v,p=1,x,lower,3,1", "c,v,p=2,x,lower,4,1"));
    sb_strpool pool;
    sb_cmp_table b, c;
    read_pair(base, cur, &pool, &b, &c);
    sb_pair *pairs;
    size_t n;
    assert_int_equal(sb_match(&b, &c, NULL, 0, &pairs, &n), 0);
    assert_int_equal(n, 7);
    /* base rows in order, with their current rows */
    for (int i = 0; i < 5; i++)
        assert_ptr_equal(pairs[i].base, &b.rows[i]);
    assert_ptr_equal(pairs[0].cur, &c.rows[3]);
    assert_null(pairs[1].cur); /* b: missing */
    assert_ptr_equal(pairs[2].cur, &c.rows[1]);
    assert_null(pairs[3].cur); /* c/y: missing */
    assert_ptr_equal(pairs[4].cur, &c.rows[4]);
    /* then the new ones, in the current file's order */
    assert_null(pairs[5].base);
    assert_ptr_equal(pairs[5].cur, &c.rows[0]);
    assert_null(pairs[6].base);
    assert_ptr_equal(pairs[6].cur, &c.rows[2]);
    free(pairs);
    const char *only_y[] = {"y"};
    assert_int_equal(sb_match(&b, &c, only_y, 1, &pairs, &n), 0);
    assert_int_equal(n, 2);
    assert_ptr_equal(pairs[0].base, &b.rows[3]);
    assert_null(pairs[0].cur);
    assert_ptr_equal(pairs[1].cur, &c.rows[2]);
    free(pairs);
    sb_cmp_table_free(&b);
    sb_cmp_table_free(&c);
    sb_strpool_free(&pool);
}

/* Reading and matching are not quadratic: 200k rows against 200k (reading used to compare
 * every row with every other: 40k rows took 31 s). Generous bound for sanitizer builds. */
static void scales(void **state)
{
    (void)state;
    enum { N = 200000 };
    char path[2][128];
    for (int k = 0; k < 2; k++) {
        snprintf(path[k], sizeof path[k], "%s/scale%d.csv", tmpdir, k);
        FILE *f = fopen(path[k], "w");
        assert_non_null(f);
        fputs(header, f);
        for (int i = 0; i < N; i++) {
            int j = k ? N - 1 - i : i; /* the current file in the other order */
            fprintf(f,
                    "r,t,h,g,d,c,small-gemm,async,m=%d;n=%d,1,3,kernel_us,us,lower,%d,1,0.01,1,1,"
                    "1,1,1,\n",
                    j / 4, j % 4, 10 + (k && j == 12345));
        }
        fclose(f);
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    sb_strpool pool;
    sb_cmp_table b, c;
    read_pair(path[0], path[1], &pool, &b, &c);
    sb_pair *pairs;
    size_t n;
    assert_int_equal(sb_match(&b, &c, NULL, 0, &pairs, &n), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_int_equal(n, N);
    for (size_t i = 0; i < n; i++) {
        assert_ptr_equal(pairs[i].base, &b.rows[i]);
        assert_ptr_equal(pairs[i].cur, &c.rows[N - 1 - i]);
    }
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (s > 20)
        fail_msg("200k x 200k rows took %.1f s", s);
    free(pairs);
    sb_cmp_table_free(&b);
    sb_cmp_table_free(&c);
    sb_strpool_free(&pool);
    assert_int_equal(compare(path[0], path[1], NULL), SB_EXIT_FAIL);
    assert_string_equal(sb_error_message(), "compare: 1 regression beyond 5 % and the noise");
    unlink(path[0]);
    unlink(path[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(verdicts),
        cmocka_unit_test(zero_baselines),
        cmocka_unit_test(exit_codes),
        cmocka_unit_test(run_noise_option),
        cmocka_unit_test(zero_baseline_is_not_a_regression),
        cmocka_unit_test(malformed_csv_names_the_line),
        cmocka_unit_test(errors_name_physical_lines),
        cmocka_unit_test(reps_is_an_integer),
        cmocka_unit_test(duplicate_columns),
        cmocka_unit_test(input_limits),
        cmocka_unit_test(too_many_rows),
        cmocka_unit_test(dev_zero_fails_fast),
        cmocka_unit_test(reads_what_syncbench_writes),
        cmocka_unit_test(reads_minimal_columns),
        cmocka_unit_test(match_order),
        cmocka_unit_test(scales),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
