/* `syncbench compare`: verdicts on synthetic rows with known deltas and noise, the CSV reader's
 * errors (each naming its line), and the exit codes of the whole subcommand. */
#include "cmocka_all.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare/compare.h"
#include "compare/csv_read.h"
#include "base/error.h"

static sb_row mk(double median, double cv, sb_better better)
{
    sb_row r;
    memset(&r, 0, sizeof r);
    r.st.median = median;
    r.st.cv = cv;
    r.better = better;
    return r;
}

static const sb_compare_opts opts = {5.0, 3.0, 2.0};

static sb_verdict verdict(double b, double bcv, double c, double ccv, sb_better better,
                          double *change)
{
    sb_row base = mk(b, bcv, better), cur = mk(c, ccv, better);
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
        sb_row b = mk(10, 0.1, SB_LOWER), c = mk(10.6, 0.1, SB_LOWER);
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
    /* a zero baseline */
    assert_int_equal(verdict(0, 0, 0, 0, SB_LOWER, &ch), SB_SAME);
    assert_int_equal(verdict(0, 0, 1, 0, SB_LOWER, &ch), SB_REGRESSION);
    assert_string_equal(sb_verdict_name(SB_REGRESSION), "REGRESSION");
}

static const char header[] =
    "run_id,timestamp,host,gpu,driver,cuda_runtime,scenario,variant,params,iters,reps,metric,"
    "unit,better,median,mean,stddev,min,max,p05,p95,cv,flags\n";

static char *write_tmp(const char *text)
{
    static char paths[8][64];
    static int k;
    char *p = paths[k++ % 8];
    strcpy(p, "/tmp/syncbench-cmp-XXXXXX");
    int fd = mkstemp(p);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return p;
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

static int compare(const char *base, const char *cur, const char *extra)
{
    char *argv[8] = {"compare", (char *)base, (char *)cur, NULL};
    int argc = 3;
    if (extra) {
        argv[argc++] = "--metric";
        argv[argc++] = (char *)extra;
    }
    sb_error_clear();
    fflush(stdout);
    FILE *saved = stdout;
    stdout = fopen("/dev/null", "w"); /* the table is not what is tested here */
    int rc = sb_compare_main(argc, argv);
    fclose(stdout);
    stdout = saved;
    return rc;
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
}

static void read_error(const char *text, const char *want)
{
    char *p = write_tmp(text);
    sb_csv_data d;
    sb_error_clear();
    assert_int_equal(sb_csv_read(p, &d), SB_EXIT_USAGE);
    const char *m = sb_error_message();
    if (strncmp(m, p, strlen(p)) || strcmp(m + strlen(p), want))
        fail_msg("got '%s'\nwant '%s%s'", m, p, want);
    unlink(p);
}

static void malformed_csv_names_the_line(void **state)
{
    (void)state;
    char text[4096];
    read_error("", ": empty file (not a syncbench CSV?)");
    read_error("a,b,c\n1,2,3\n", ": missing column 'scenario' (not a syncbench CSV?)");
    read_error(header, ": no rows after the header");
    snprintf(text, sizeof text, "%s%s", header,
             "r,t,h,g,d,c,small-gemm,async,m=1,1,1,wall,us,lower,1,1,0,1,1,1,1,0,\n"
             "r,t,h,g,d,c,small-gemm,async,m=1,1,1,gpu\n");
    read_error(text, ":3: expected 23 fields, found 12");
    snprintf(text, sizeof text, "%s%s", header,
             "r,t,h,g,d,c,small-gemm,async,m=1,1,1,wall,us,lower,fast,1,0,1,1,1,1,0,\n");
    read_error(text, ":2: median 'fast' is not a number");
    snprintf(text, sizeof text, "%s%s", header,
             "r,t,h,g,d,c,small-gemm,async,m=1,1,1,wall,us,smaller,1,1,0,1,1,1,1,0,\n");
    read_error(text, ":2: better must be 'lower' or 'higher', not 'smaller'");
    snprintf(text, sizeof text, "%s%s", header,
             "r,t,h,g,d,c,small-gemm,async,m=1,1,1,wall,us,lower,1,1,0,1,1,1,1,0,\n"
             "r,t,h,g,d,c,small-gemm,async,m=1,1,1,wall,us,lower,2,1,0,1,1,1,1,0,\n");
    read_error(text, ":3: duplicate row for wall (first at line 2)");
    snprintf(text, sizeof text, "%s%s", header,
             "r,t,h,g,d,c,small-gemm,async,\"m=1,1,1,wall,us,lower,1,1,0,1,1,1,1,0,\n");
    read_error(text, ":2: malformed CSV: error parsing data while strict checking enabled");
}

static void reads_what_syncbench_writes(void **state)
{
    (void)state;
    char text[4096];
    snprintf(text, sizeof text, "%s%s", header,
             "r9,t,h,NVIDIA H100 80GB HBM3,d,c,copy,h2d-pinned,bytes=64MiB,4,12,GBps,GB/s,higher,"
             "54.9,54.8,0.1,54.5,55,54.6,55,0.18,\"throttled;noisy\"\n");
    char *p = write_tmp(text);
    sb_csv_data d;
    assert_int_equal(sb_csv_read(p, &d), 0);
    assert_int_equal(d.rows.n, 1);
    assert_string_equal(d.gpu, "NVIDIA H100 80GB HBM3");
    assert_string_equal(d.run_id, "r9");
    const sb_row *r = &d.rows.rows[0];
    assert_string_equal(r->params, "bytes=64MiB");
    assert_int_equal(r->better, SB_HIGHER);
    assert_float_equal(r->st.median, 54.9, 1e-12);
    assert_float_equal(r->st.cv, 0.18, 1e-12);
    assert_int_equal(r->reps, 12);
    assert_string_equal(r->flags, "throttled;noisy");
    sb_csv_data_free(&d);
    unlink(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(verdicts),
        cmocka_unit_test(exit_codes),
        cmocka_unit_test(malformed_csv_names_the_line),
        cmocka_unit_test(reads_what_syncbench_writes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
