/* The audit across ranks on synthetic record streams: the straggler of each instance and the
 * others' wait, unequal instance counts, ties, a single rank (no section), nested and start/end
 * ranges, processes sharing a rank, the ranks of two machines through their JSON reports, and
 * the reader's checks. */
#include "audit_stream.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>

#include "analyze/ranks.h"
#include "base/error.h"
#include "tmpdir.h"

#define STEP_NS 10000000LL /* instance k of a range runs from k * STEP_NS for 9 ms */

/* A process of rank `rank`: n instances of range `name` on thread 1, instance k with one stream
 * sync of us[k] microseconds inside (none when 0). */
static void rank_stream(stream *s, int pid, int rank, const char *name, const long long *us, int n)
{
    stream_open(s);
    proc_line(s, pid, rank);
    for (int k = 0; k < n; k++) {
        long long t0 = STEP_NS * k;
        line(s,
             "{\"t\":\"range\",\"tid\":1,\"id\":%d,\"name\":\"%s\",\"start\":%lld,\"end\":%lld,"
             "\"depth\":0}",
             k + 1, name, t0, t0 + 9000000);
        if (us[k] > 0)
            line(s,
                 "{\"t\":\"call\",\"api\":\"cudaStreamSynchronize_v3020\",\"dom\":\"rt\","
                 "\"tid\":1,\"ctx\":1,\"corr\":%d,\"start\":%lld,\"end\":%lld,"
                 "\"ranges\":[[%d,\"%s\"]],\"stack\":-1}",
                 k + 1, t0 + 1000, t0 + 1000 + us[k] * 1000, k + 1, name);
    }
    end_line(s);
}

/* Adds a rank's process to run (a new run when NULL). */
static sb_audit_run *add_rank(sb_audit_run *run, int pid, int rank, const char *name,
                              const long long *us, int n)
{
    stream s;
    char file[64];
    rank_stream(&s, pid, rank, name, us, n);
    snprintf(file, sizeof file, "proc-%d.jsonl", pid);
    return load_into(run, &s, file);
}

static void computed(sb_ranks *rk, const sb_audit_run *run, const char *host)
{
    sb_ranks_init(rk);
    assert_int_equal(sb_ranks_from_run(rk, analysis_of(run), host), 0);
    assert_int_equal(sb_ranks_compute(rk), 0);
}

/* Analyzes run and computes its ranks' view. */
static void analyzed_ranks(sb_ranks *rk, sb_audit_run *run)
{
    analyze_default(run);
    computed(rk, run, "");
}

#define assert_near(x, want) assert_true(fabs((x) - (want)) < 1e-9)

/* The i-th straggler of g: its rank, the instances it arrived last in (-1: not checked), the
 * others' median and total wait for it (NAN: not checked). */
static void expect_straggler(const sb_rank_range *g, int i, int rank, int instances,
                             double median_us, double total_us)
{
    const sb_rank_straggler *s = &g->stragglers[i];
    assert_int_equal(s->rank, rank);
    if (instances >= 0)
        assert_int_equal(s->instances, instances);
    if (!isnan(median_us))
        assert_near(s->wait_median_us, median_us);
    if (!isnan(total_us))
        assert_near(s->wait_total_us, total_us);
}

static const sb_rank_range *range_named(const sb_ranks *rk, const char *name)
{
    for (size_t i = 0; i < rk->nranges; i++)
        if (!strcmp(rk->ranges[i].name, name))
            return &rk->ranges[i];
    return NULL;
}

/* The table of run holds each of the texts (present) or none of them (a NULL-terminated list). */
static void table_check(const sb_audit_run *run, int present, ...)
{
    char *t = table_text(run);
    va_list ap;
    va_start(ap, present);
    for (const char *text; (text = va_arg(ap, const char *));)
        if ((strstr(t, text) != NULL) != present)
            fail_msg("the table %s '%s':\n%s", present ? "lacks" : "has", text, t);
    va_end(ap);
    free(t);
}
#define table_has(run, ...) table_check(run, 1, __VA_ARGS__)
#define table_lacks(run, ...) table_check(run, 0, __VA_ARGS__)

static json_t *json_of(const sb_audit_run *run, const char *host)
{
    sb_env env;
    memset(&env, 0, sizeof env);
    snprintf(env.host, sizeof env.host, "%s", host);
    return report_json(run, AS_JSON, NULL, &env);
}

/* Two ranks: rank 1 blocked least in instances 0, 1, 2 and 4, rank 0 in instance 3. */
static void straggler_and_waits(void **state)
{
    (void)state;
    const long long r0[] = {1200, 1300, 1250, 10, 1100}, r1[] = {10, 12, 11, 900, 15};
    sb_audit_run *run = add_rank(NULL, 100, 0, "train_step", r0, 5);
    add_rank(run, 101, 1, "train_step", r1, 5);
    analyze_default(run);
    sb_ranks rk;
    computed(&rk, run, "box");
    assert_int_equal(rk.n, 2);
    assert_int_equal(rk.r[0].rank, 0);
    assert_int_equal(rk.r[1].pid, 101);
    assert_string_equal(rk.r[1].host, "box");
    assert_near(rk.r[0].blocked_us, 4860);
    assert_near(rk.r[1].blocked_us, 948);
    assert_int_equal(rk.nranges, 1);
    const sb_rank_range *g = &rk.ranges[0];
    assert_string_equal(g->name, "train_step");
    assert_int_equal(g->matched, 5);
    assert_int_equal(g->tied, 0);
    const int who[] = {1, 1, 1, 0, 1};
    const double wait[] = {1190, 1288, 1239, 890, 1085};
    for (int k = 0; k < 5; k++) {
        assert_int_equal(g->straggler[k], who[k]);
        assert_near(g->wait_us[k], wait[k]);
    }
    assert_int_equal(g->nstragglers, 2);
    expect_straggler(g, 0, 1, 4, 1214.5, 4802); /* the median of 1085, 1190, 1239, 1288 */
    expect_straggler(g, 1, 0, 1, 890, NAN);
    sb_ranks_free(&rk);

    table_has(run, "\nacross ranks",
              "train_step: rank 1 arrived last in 4 of 5 instances; the others waited 1.214 ms "
              "per instance for it (median), 4.802 ms in all\n",
              "rank 0 arrived last in 1 of 5 instances; the others waited 0.890 ms per instance "
              "for it (median), 0.890 ms in all\n",
              NULL);
    table_lacks(run, "tied", "left out", NULL);

    json_t *root = json_of(run, "box");
    json_t *ranks = json_object_get(root, "ranks");
    json_t *r0j = json_array_get(json_object_get(ranks, "ranks"), 0);
    assert_string_equal(json_string_value(json_object_get(r0j, "host")), "box");
    json_t *inst =
        json_object_get(json_array_get(json_object_get(r0j, "ranges"), 0), "instance_blocked_ns");
    assert_int_equal(json_array_size(inst), 5);
    assert_int_equal(json_integer_value(json_array_get(inst, 3)), 10000);
    json_t *gj = json_array_get(json_object_get(ranks, "ranges"), 0);
    json_t *sj = json_array_get(json_object_get(gj, "stragglers"), 0);
    assert_int_equal(json_integer_value(json_object_get(sj, "rank")), 1);
    assert_int_equal(json_integer_value(json_object_get(sj, "instances")), 4);
    assert_true(fabs(json_real_value(json_object_get(sj, "wait_median_us")) - 1214.5) < 1e-6);
    assert_int_equal(
        json_integer_value(json_array_get(json_object_get(gj, "instance_straggler"), 3)), 0);
    json_decref(root);
    audit_free(run);
}

/* The view is computed with the analysis and kept in the run, where the table and the JSON
 * read it (its hosts are "": the JSON names the machine). */
static void the_view_is_kept_in_the_run(void **state)
{
    (void)state;
    const long long r0[] = {300, 300}, r1[] = {10, 10};
    sb_audit_run *run = add_rank(NULL, 100, 0, "train_step", r0, 2);
    add_rank(run, 101, 1, "train_step", r1, 2);
    analyze_default(run);
    assert_int_equal(analysis_of(run)->ranks->n, 2);
    assert_int_equal(analysis_of(run)->ranks->nranges, 1);
    assert_string_equal(analysis_of(run)->ranks->r[0].host, "");
    table_has(run, "train_step: rank 1 arrived last in 2 of 2 instances", NULL);
    json_t *root = json_of(run, "box");
    json_t *r1j = json_array_get(json_object_get(json_object_get(root, "ranks"), "ranks"), 1);
    assert_string_equal(json_string_value(json_object_get(r1j, "host")), "box");
    json_decref(root);
    assert_string_equal(analysis_of(run)->ranks->r[1].host, ""); /* the writers leave it as it was */
    audit_free(run);
}

/* Unequal instance counts are matched up to the shortest; a rank without the range is left out;
 * a range of one rank is not lined up. */
static void unequal_counts(void **state)
{
    (void)state;
    const long long r0[] = {500, 500, 500, 500}, r1[] = {100, 100, 100, 100, 100, 100};
    const long long r2[] = {7, 7};
    sb_audit_run *run = add_rank(NULL, 100, 0, "train_step", r0, 4);
    add_rank(run, 101, 1, "train_step", r1, 6);
    add_rank(run, 102, 2, "eval", r2, 2);
    sb_ranks rk;
    analyzed_ranks(&rk, run);
    assert_int_equal(rk.n, 3);
    assert_int_equal(rk.nranges, 1); /* eval: rank 2 alone */
    const sb_rank_range *g = range_named(&rk, "train_step");
    assert_non_null(g);
    assert_int_equal(g->nmembers, 2);
    assert_int_equal(g->matched, 4);
    assert_int_equal(g->longest, 6);
    assert_int_equal(g->nstragglers, 1);
    expect_straggler(g, 0, 1, 4, 400, 1600);
    sb_ranks_free(&rk);
    table_has(run, "train_step: rank 1 arrived last in 4 of 4 instances",
              "instances matched by order up to the shortest count, 4 (rank 1 has 6)\n",
              "ranks without it, left out: 2\n", NULL);
    table_lacks(run, "eval:", NULL);
    audit_free(run);
}

/* Three ranks: the straggler is the one that blocked least alone; the others' mean wait is every
 * rank's excess over the least / 2; a tie names no straggler. */
static void three_ranks_and_ties(void **state)
{
    (void)state;
    const long long r0[] = {3000, 1000, 0}, r1[] = {1000, 1000, 5000}, r2[] = {2000, 4000, 5000};
    sb_audit_run *run = add_rank(NULL, 100, 0, "step", r0, 3);
    add_rank(run, 101, 1, "step", r1, 3);
    add_rank(run, 102, 2, "step", r2, 3);
    sb_ranks rk;
    analyzed_ranks(&rk, run);
    const sb_rank_range *g = range_named(&rk, "step");
    assert_non_null(g);
    assert_int_equal(g->tied, 1);
    assert_int_equal(g->straggler[0], 1);
    assert_int_equal(g->straggler[1], -1);
    assert_int_equal(g->straggler[2], 0);
    assert_near(g->wait_us[0], 1500); /* (2000 + 0 + 1000) / 2 */
    assert_near(g->wait_us[1], 1500); /* (0 + 0 + 3000) / 2 */
    assert_near(g->wait_us[2], 5000);
    assert_int_equal(g->nstragglers, 2);
    expect_straggler(g, 0, 0, -1, NAN, 10000); /* one instance each: the lower rank first */
    expect_straggler(g, 1, 1, -1, NAN, 3000);
    assert_near(g->wait_total_us, 13000);
    sb_ranks_free(&rk);
    table_has(run, "1 instance tied (no rank blocked least alone)\n", NULL);
    audit_free(run);
}

/* One rank (beside a launcher without one): no section in the table, one rank in the JSON and
 * nothing lined up; no rank at all: empty lists. */
static void single_rank(void **state)
{
    (void)state;
    const long long r0[] = {100, 200};
    sb_audit_run *run = add_rank(NULL, 100, 0, "train_step", r0, 2);
    add_rank(run, 99, -1, "train_step", r0, 2);
    analyze_default(run);
    table_lacks(run, "across ranks", "arrived last", NULL);
    json_t *root = json_of(run, "box");
    json_t *ranks = json_object_get(root, "ranks");
    assert_int_equal(json_array_size(json_object_get(ranks, "ranks")), 1);
    assert_int_equal(json_array_size(json_object_get(ranks, "ranges")), 0);
    json_decref(root);
    audit_free(run);

    run = add_rank(NULL, 99, -1, "train_step", r0, 2);
    analyze_default(run);
    root = json_of(run, "box");
    ranks = json_object_get(root, "ranks");
    assert_true(json_is_array(json_object_get(ranks, "ranks")));
    assert_int_equal(json_array_size(json_object_get(ranks, "ranks")), 0);
    json_decref(root);
    audit_free(run);
}

/* Nested push/pop ranges count their calls in every enclosing instance; a start/end range the
 * calls of every thread that started inside it; each instance as the analyzer counts it. */
static void nested_and_startend(void **state)
{
    (void)state;
    stream s;
    stream_open(&s);
    proc_line(&s, 100, 0);
    line(&s, "{\"t\":\"range\",\"tid\":1,\"id\":1,\"name\":\"step\",\"start\":1000,\"end\":900000,"
             "\"depth\":0}");
    line(&s, "{\"t\":\"range\",\"tid\":1,\"id\":2,\"name\":\"fwd\",\"start\":2000,\"end\":300000,"
             "\"depth\":1}");
    line(&s, "{\"t\":\"range\",\"tid\":1,\"id\":3,\"name\":\"epoch\",\"start\":500,\"end\":950000,"
             "\"depth\":0,\"kind\":\"startend\"}");
    const char *fmt = "{\"t\":\"call\",\"api\":\"cudaStreamSynchronize_v3020\",\"dom\":\"rt\","
                      "\"tid\":%d,\"ctx\":1,\"corr\":%d,\"start\":%d,\"end\":%d,\"ranges\":%s,"
                      "\"stack\":-1}";
    line(&s, fmt, 1, 1, 3000, 103000, "[[1,\"step\"],[2,\"fwd\"]]"); /* 100 us */
    line(&s, fmt, 1, 2, 400000, 450000, "[[1,\"step\"]]");           /* 50 us */
    line(&s, fmt, 2, 3, 500000, 570000, "[]");                       /* 70 us, thread 2 */
    line(&s, fmt, 2, 4, 960000, 990000, "[]");                       /* after epoch */
    /* a call that did not block counts nowhere */
    line(&s, "{\"t\":\"call\",\"api\":\"cudaMalloc_v3020\",\"dom\":\"rt\",\"tid\":1,\"ctx\":1,"
             "\"corr\":5,\"start\":5000,\"end\":9000,\"ranges\":[[1,\"step\"]],\"stack\":-1}");
    end_line(&s);
    sb_audit_run *run = analyzed(&s);
    sb_ranks rk;
    computed(&rk, run, "");
    assert_int_equal(rk.n, 1);
    assert_int_equal(rk.nranges, 0); /* one rank: nothing to line up */
    const sb_rank *r = &rk.r[0];
    assert_int_equal(r->nseries, 3);
    struct {
        const char *name;
        int64_t ns;
        int64_t tid, id;
    } want[] = {{"epoch", 220000, 1, 3}, {"fwd", 100000, 1, 2}, {"step", 150000, 1, 1}};
    for (int i = 0; i < 3; i++) {
        assert_string_equal(r->series[i].name, want[i].name);
        assert_int_equal(r->series[i].n, 1);
        assert_int_equal(r->series[i].blocked_ns[0], want[i].ns);
    }
    /* the analyzer's counts of the same instances: 3 in epoch, 1 in fwd, 2 in step */
    assert_int_equal(sb_audit_find_range_info(res_of(run->procs[0]), 1, 3)->blocking, 3);
    assert_int_equal(sb_audit_find_range_info(res_of(run->procs[0]), 1, 2)->blocking, 1);
    assert_int_equal(sb_audit_find_range_info(res_of(run->procs[0]), 1, 1)->blocking, 2);
    sb_ranks_free(&rk);
    audit_free(run);
}

/* Two processes of one rank (an exec, a child that used CUDA) are one rank: their instances in
 * order of start on the shared monotonic clock, not of their own CUPTI clocks. */
static void processes_sharing_a_rank(void **state)
{
    (void)state;
    stream s;
    stream_open(&s);
    line(&s, "{\"t\":\"proc\",\"v\":1,\"pid\":100,\"ppid\":1,\"rank\":0,\"local_rank\":0,"
             "\"cmd\":\"a\",\"clock_ns\":0,\"mono_ns\":0,\"mode\":\"count\"}");
    const char *rfmt = "{\"t\":\"range\",\"tid\":1,\"id\":%d,\"name\":\"step\",\"start\":%d,"
                       "\"end\":%d,\"depth\":0}";
    const char *cfmt = "{\"t\":\"call\",\"api\":\"cudaStreamSynchronize_v3020\",\"dom\":\"rt\","
                       "\"tid\":1,\"ctx\":1,\"corr\":%d,\"start\":%d,\"end\":%d,"
                       "\"ranges\":[[%d,\"step\"]],\"stack\":-1}";
    line(&s, rfmt, 1, 1000, 1900);
    line(&s, cfmt, 1, 1100, 1101, 1);
    line(&s, rfmt, 2, 2000, 2900);
    line(&s, cfmt, 2, 2100, 2102, 2);
    end_line(&s);
    sb_audit_run *run = load_into(NULL, &s, "proc-100.jsonl");
    /* the second image: CUPTI's clock 10000 ns behind the monotonic one */
    stream_open(&s);
    line(&s, "{\"t\":\"proc\",\"v\":1,\"pid\":101,\"ppid\":1,\"rank\":0,\"local_rank\":0,"
             "\"cmd\":\"b\",\"clock_ns\":0,\"mono_ns\":10000,\"mode\":\"count\"}");
    line(&s, rfmt, 1, 0, 400);
    line(&s, cfmt, 1, 100, 103, 1);
    line(&s, rfmt, 2, 500, 900);
    line(&s, cfmt, 2, 600, 604, 2);
    end_line(&s);
    load_into(run, &s, "proc-101.jsonl");
    const long long r1[] = {1, 1, 1, 1};
    add_rank(run, 102, 1, "step", r1, 4);
    sb_ranks rk;
    analyzed_ranks(&rk, run);
    assert_int_equal(rk.n, 2);
    const sb_rank *r = &rk.r[0];
    assert_int_equal(r->processes, 2);
    assert_int_equal(r->pid, 100);
    assert_int_equal(r->series[0].n, 4);
    const int64_t want[] = {1, 2, 3, 4};
    for (int k = 0; k < 4; k++)
        assert_int_equal(r->series[0].blocked_ns[k], want[k]);
    assert_int_equal(range_named(&rk, "step")->matched, 4);
    sb_ranks_free(&rk);
    table_has(run, "(2 processes)", NULL);
    audit_free(run);
}

/* Bubbles are the rank's blocking calls' bubbles, known where GPU activity was recorded. */
static void bubbles(void **state)
{
    (void)state;
    stream s;
    stream_open(&s);
    proc_line(&s, 100, 0);
    kernel(&s, 0, 1, 1, 500, 1500);
    kernel(&s, 0, 1, 2, 3000, 3500);
    call(&s, "cudaStreamSynchronize_v3020", 3, 1000, 2000); /* GPU idle from 1500 to 3000 */
    end_line(&s);
    sb_audit_run *run = load_into(NULL, &s, "proc-100.jsonl");
    stream_open(&s); /* no GPU activity recorded */
    line(&s, "{\"t\":\"proc\",\"v\":1,\"pid\":101,\"ppid\":1,\"rank\":1,\"local_rank\":1,"
             "\"cmd\":\"a\",\"clock_ns\":0,\"mono_ns\":0,\"mode\":\"count\",\"kernels\":0}");
    call(&s, "cudaStreamSynchronize_v3020", 3, 1000, 2000);
    end_line(&s);
    load_into(run, &s, "proc-101.jsonl");
    sb_ranks rk;
    analyzed_ranks(&rk, run);
    assert_true(rk.r[0].has_bubbles);
    assert_near(rk.r[0].bubble_us, 1.5);
    assert_false(rk.r[1].has_bubbles);
    sb_ranks_free(&rk);
    table_has(run, "bubble ms", "no NVTX range is shared by two ranks", NULL);
    json_t *root = json_of(run, "box");
    json_t *list = json_object_get(json_object_get(root, "ranks"), "ranks");
    assert_true(fabs(json_real_value(json_object_get(json_array_get(list, 0), "bubble_us")) - 1.5) <
                1e-9);
    assert_true(json_is_null(json_object_get(json_array_get(list, 1), "bubble_us")));
    json_decref(root);
    audit_free(run);
}

static void write_report(const char *path, const sb_audit_run *run, const char *host)
{
    json_t *root = json_of(run, host);
    assert_int_equal(json_dump_file(root, path, 0), 0);
    json_decref(root);
}

/* Machine A: ranks 0 and 1; machine B: ranks 2 and 3, each audited apart and reported in its
 * --json; read back and merged, rank 3 arrived last in 5 of 6 instances. */
static void two_machines(void **state)
{
    (void)state;
    const long long us[4][6] = {{2000, 2000, 10, 1500, 1600, 1000},
                                {1800, 1900, 500, 1500, 1700, 1000},
                                {2100, 2000, 600, 1500, 1800, 1000},
                                {100, 50, 700, 0, 200, 10}};
    sb_audit_run *a = add_rank(NULL, 100, 0, "train_step", us[0], 6);
    add_rank(a, 101, 1, "train_step", us[1], 6);
    sb_audit_run *b = add_rank(NULL, 100, 2, "train_step", us[2], 6);
    add_rank(b, 101, 3, "train_step", us[3], 6);
    analyze_default(a);
    analyze_default(b);
    char pa[128], pb[128];
    snprintf(pa, sizeof pa, "%s/a.json", tmpdir);
    snprintf(pb, sizeof pb, "%s/b.json", tmpdir);
    write_report(pa, a, "node-a");
    write_report(pb, b, "node-b");

    sb_ranks rk;
    sb_ranks_init(&rk);
    sb_ranks_report info[2];
    assert_int_equal(sb_ranks_read_report(&rk, pa, &info[0]), 0);
    assert_int_equal(sb_ranks_read_report(&rk, pb, &info[1]), 0);
    assert_string_equal(info[1].host, "node-b");
    assert_int_equal(info[1].ranks, 2);
    assert_null(sb_ranks_duplicate(&rk));
    assert_int_equal(sb_ranks_compute(&rk), 0);
    assert_int_equal(rk.n, 4);
    assert_string_equal(rk.r[1].host, "node-a");
    assert_string_equal(rk.r[2].host, "node-b");
    assert_string_equal(rk.r[3].report, pb);
    assert_int_equal(rk.r[3].pid, 101);
    const sb_rank_range *g = range_named(&rk, "train_step");
    assert_non_null(g);
    assert_int_equal(g->nmembers, 4);
    assert_int_equal(g->matched, 6);
    /* per instance the others' mean wait: 5600/3, 5750/3, 4500/3, 4500/3, 2970/3; median 1500 */
    expect_straggler(g, 0, 3, 5, 1500, 23320);
    expect_straggler(g, 1, 0, 1, 590, NAN);

    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    sb_ranks_write_table(f, &rk, 10, 1);
    fclose(f);
    assert_non_null(strstr(buf, "  host\n"));
    assert_non_null(strstr(buf, "  node-b\n"));
    assert_non_null(strstr(buf, "train_step: rank 3 arrived last in 5 of 6 instances; the others "
                                "waited 1.500 ms per instance for it (median), 23.320 ms in all"));
    free(buf);
    f = open_memstream(&buf, &len);
    assert_int_equal(sb_ranks_write_csv(f, &rk), 0);
    fclose(f);
    assert_true(
        !strncmp(buf, "range,instance,rank,host,pid,blocked_us,least_us,wait_us,straggler\n", 67));
    assert_non_null(strstr(buf, "\ntrain_step,0,2,node-b,100,2100,100,2000,3\n"));
    assert_non_null(strstr(buf, "\ntrain_step,2,0,node-a,100,10,10,0,0\n"));
    free(buf);

    /* the same view from the runs directly */
    sb_ranks direct;
    sb_ranks_init(&direct);
    assert_int_equal(sb_ranks_from_run(&direct, analysis_of(a), "node-a"), 0);
    assert_int_equal(sb_ranks_from_run(&direct, analysis_of(b), "node-b"), 0);
    assert_int_equal(sb_ranks_compute(&direct), 0);
    assert_int_equal(direct.ranges[0].stragglers[0].rank, 3);
    assert_true(direct.ranges[0].stragglers[0].wait_total_us == g->stragglers[0].wait_total_us);
    sb_ranks_free(&direct);

    /* both reports again: every rank twice */
    assert_int_equal(sb_ranks_read_report(&rk, pa, NULL), 0);
    const sb_rank *two = sb_ranks_duplicate(&rk);
    assert_non_null(two);
    assert_int_equal(two->rank, 0);
    sb_ranks_free(&rk);
    audit_free(a);
    audit_free(b);
}

/* Each problem of a report: exit 2, one line naming the file and the field. */
static void reader_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text, *message;
    } cases[] = {
        {"[1, 2]", "not a syncbench audit report"},
        {"{\"tool\":\"syncbench compare\",\"format\":1}", "not a syncbench audit report"},
        {"{\"tool\":\"syncbench audit\"}", "no \"format\""},
        {"{\"tool\":\"syncbench audit\",\"format\":2,\"ranks\":{\"ranks\":[]}}",
         "report format 2: this syncbench reads format 1"},
        {"{\"tool\":\"syncbench audit\",\"format\":1,\"processes\":[]}", "no \"ranks\""},
        {"{\"tool\":\"syncbench audit\",\"format\":1,\"ranks\":[]}", "\"ranks\" is not an object"},
        {"{\"tool\":\"syncbench audit\",\"format\":1,\"ranks\":{\"ranks\":[{\"pid\":1,"
         "\"blocked_us\":1,\"ranges\":[]}]}}",
         "ranks.ranks[0].rank: not an integer"},
        {"{\"tool\":\"syncbench audit\",\"format\":1,\"ranks\":{\"ranks\":[{\"rank\":-1,"
         "\"pid\":1,\"blocked_us\":1,\"ranges\":[]}]}}",
         "ranks.ranks[0].rank: not an integer"},
        {"{\"tool\":\"syncbench audit\",\"format\":1,\"ranks\":{\"ranks\":[{\"rank\":0,"
         "\"pid\":1,\"blocked_us\":\"x\",\"ranges\":[]}]}}",
         "ranks.ranks[0].blocked_us: not a number"},
        {"{\"tool\":\"syncbench audit\",\"format\":1,\"ranks\":{\"ranks\":[{\"rank\":0,"
         "\"pid\":1,\"blocked_us\":1,\"ranges\":[{\"name\":\"s\",\"instance_blocked_ns\":"
         "[1,-2]}]}]}}",
         "ranks.ranks[0].ranges[0].instance_blocked_ns[1]: not a whole number"},
        {"{\"tool\":\"syncbench audit\",\"format\":1,\"ranks\":{\"ranks\":[{\"rank\":0,"
         "\"pid\":1,\"blocked_us\":1,\"ranges\":[{\"name\":\"s\",\"instance_blocked_ns\":[1]},"
         "{\"name\":\"s\",\"instance_blocked_ns\":[2]}]}]}}",
         "ranks.ranks[0]: range \"s\" given twice"},
        {"{\"tool\":\"syncbench audit\",\"format\":1,\"ranks\":{\"ranks\":[{\"rank\":0,"
         "\"pid\":1,\"blocked_us\":1,\"bubble_us\":true,\"ranges\":[]}]}}",
         "ranks.ranks[0].bubble_us: neither null nor a number"},
        {"{\"tool\":", "not JSON"},
    };
    char path[128];
    snprintf(path, sizeof path, "%s/bad.json", tmpdir);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(cases[i].text, f);
        fclose(f);
        sb_ranks rk;
        sb_ranks_init(&rk);
        sb_error_clear();
        assert_int_equal(sb_ranks_read_report(&rk, path, NULL), SB_EXIT_USAGE);
        const char *msg = sb_error_message();
        if (!strstr(msg, cases[i].message) || !strstr(msg, path) || strchr(msg, '\n'))
            fail_msg("case %zu: %s", i, msg);
        sb_ranks_free(&rk);
    }
    sb_error_clear();
    sb_ranks rk;
    sb_ranks_init(&rk);
    assert_int_equal(sb_ranks_read_report(&rk, tmpdir, NULL), SB_EXIT_USAGE); /* a folder */
    assert_non_null(strstr(sb_error_message(), "a folder, not a report"));
    sb_ranks_free(&rk);
    sb_error_clear();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(straggler_and_waits),
        cmocka_unit_test(the_view_is_kept_in_the_run),
        cmocka_unit_test(unequal_counts),
        cmocka_unit_test(three_ranks_and_ties),
        cmocka_unit_test(single_rank),
        cmocka_unit_test(nested_and_startend),
        cmocka_unit_test(processes_sharing_a_rank),
        cmocka_unit_test(bubbles),
        cmocka_unit_test_setup_teardown(two_machines, make_tmpdir, remove_tmpdir),
        cmocka_unit_test_setup_teardown(reader_errors, make_tmpdir, remove_tmpdir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
