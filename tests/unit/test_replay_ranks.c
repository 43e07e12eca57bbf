/* The ranks of a job played together (src/replay/job.c, src/analyze/ranks_play.c) on synthetic
 * record sets of two ranks whose answers are known by hand: gloo's collective each step (its
 * worker syncs the stream of the rank's work, waits for the peer's data, copies the result back
 * to the GPU and wakes the main thread), a sync on one rank that delays its arrival, and the
 * reports. Times are in microseconds here, nanoseconds in the records. */
#include "audit_stream.h"
#include "replay/replay.h"

#include <jansson.h>
#include <math.h>

#define US 1000LL
#define STEP 200 /* us a step */
#define N 20     /* steps */

enum { MAIN = 1, WORKER = 2, TRANSPORT = 3 };

static void rank_proc(stream *s, int pid, int rank)
{
    stream_open(s);
    line(s,
         "{\"t\":\"proc\",\"v\":1,\"pid\":%d,\"ppid\":1,\"rank\":%d,\"local_rank\":%d,"
         "\"cmd\":\"python3 train.py\",\"clock_ns\":0,\"mono_ns\":1000000,\"mode\":\"count\","
         "\"kernels\":1,\"launches\":1,\"waits\":1}",
         pid, rank, rank);
    /* the main thread's lines: the slow sync's (1), where it waits for the backward pass (2) */
    line(s, "{\"t\":\"pystack\",\"id\":1,\"frames\":[[\"/job/train.py\",\"step\",41]]}");
    line(s, "{\"t\":\"pystack\",\"id\":2,\"frames\":[[\"/job/train.py\",\"step\",50]]}");
}

/* A kernel launched by the main thread at [t, t + 2) on stream st, run [k0, k1). */
static void kernel_at(stream *s, long long corr, long long t, int st, long long k0, long long k1)
{
    line(s,
         "{\"t\":\"api\",\"api\":\"cudaLaunchKernel_v7000\",\"dom\":\"rt\",\"tid\":%d,"
         "\"corr\":%lld,\"start\":%lld,\"end\":%lld}",
         MAIN, corr, t * US, (t + 2) * US);
    line(s,
         "{\"t\":\"kernel\",\"dev\":0,\"ctx\":1,\"stream\":%d,\"corr\":%lld,\"start\":%lld,"
         "\"end\":%lld}",
         st, corr, k0 * US, k1 * US);
}

/* cudaStreamSynchronize of stream st by thread tid at [t0, t1), Python stack py (-1: none). */
static void sync_of(stream *s, int tid, long long corr, long long t0, long long t1, int st, int py)
{
    line(s,
         "{\"t\":\"call\",\"api\":\"cudaStreamSynchronize_v3020\",\"dom\":\"rt\",\"tid\":%d,"
         "\"ctx\":1,\"corr\":%lld,\"start\":%lld,\"end\":%lld,\"ranges\":[],\"stack\":-1,"
         "\"py\":%d}",
         tid, corr, t0 * US, t1 * US, py);
    line(s,
         "{\"t\":\"sync\",\"type\":\"stream\",\"ctx\":1,\"stream\":%d,\"corr\":%lld,"
         "\"sync_id\":-1,\"start\":%lld,\"end\":%lld}",
         st, corr, t0 * US, t1 * US);
}

/* The worker's copy of the result back to the GPU: its call [t, t + 2), the copy [t + 3, t + 4)
 * on stream 8. */
static void copy_back(stream *s, long long corr, long long t)
{
    line(s,
         "{\"t\":\"call\",\"api\":\"cudaMemcpyAsync_v3020\",\"dom\":\"rt\",\"tid\":%d,\"ctx\":1,"
         "\"corr\":%lld,\"start\":%lld,\"end\":%lld,\"ranges\":[],\"stack\":-1,\"copy\":\"HtoD\","
         "\"host\":\"pinned\"}",
         WORKER, corr, t * US, (t + 2) * US);
    line(s,
         "{\"t\":\"api\",\"api\":\"cudaMemcpyAsync_v3020\",\"dom\":\"rt\",\"tid\":%d,"
         "\"corr\":%lld,\"start\":%lld,\"end\":%lld}",
         WORKER, corr, t * US, (t + 2) * US);
    line(s,
         "{\"t\":\"copy\",\"dev\":0,\"ctx\":1,\"stream\":8,\"corr\":%lld,\"rcorr\":%lld,"
         "\"start\":%lld,\"end\":%lld,\"bytes\":4096,\"kind\":\"HtoD\",\"src\":\"pinned\","
         "\"dst\":\"device\"}",
         corr, corr, (t + 3) * US, (t + 4) * US);
}

/* Thread tid slept [t0, t1) until thread by's signal at `at` (py: its Python stack, -1 none). */
static void wake(stream *s, int tid, long long t0, long long t1, int by, long long at, int py)
{
    char pyfield[32] = "";
    if (py >= 0)
        snprintf(pyfield, sizeof pyfield, ",\"py\":%d", py);
    line(s,
         "{\"t\":\"wake\",\"tid\":%d,\"start\":%lld,\"end\":%lld,\"by\":%d,\"at\":%lld,"
         "\"obj\":\"cond\"%s}",
         tid, t0 * US, t1 * US, by, at * US, pyfield);
}

static void job_end(stream *s, long long t)
{
    line(s, "{\"t\":\"end\",\"clock_ns\":%lld,\"mono_ns\":%lld,\"why\":\"exit\",\"dropped\":0}",
         t * US, 1000000 + t * US);
}

/* First, two broadcasts from rank 0 (DDP's of the parameters, then of its buckets' order), in
 * [0, 30) and [30, 60): the main thread hands each to the worker, which on the root syncs its
 * copy's stream [12, 14) (ready at 14) and copies back at 16 (42, 44, 46 the second); the
 * receiver syncs nothing: its part begins when it is handed the work (13; 43), it waits for
 * the root's data [14, 20) ([44, 50)) and copies back at 21 (51): two copies back in a row,
 * two works. */
static void broadcast(stream *s, int root)
{
    if (root) {
        wake(s, WORKER, 0, 11, MAIN, 10, -1);
        sync_of(s, WORKER, 2, 12, 14, 7, -1);
        copy_back(s, 3, 16);
        wake(s, MAIN, 11, 22, WORKER, 21, 2);
        wake(s, WORKER, 22, 41, MAIN, 40, -1);
        sync_of(s, WORKER, 4, 42, 44, 7, -1);
        copy_back(s, 5, 46);
        wake(s, MAIN, 41, 52, WORKER, 51, 2);
    } else {
        wake(s, WORKER, 0, 13, MAIN, 12, -1);
        wake(s, WORKER, 14, 20, TRANSPORT, 19, -1);
        copy_back(s, 3, 21);
        wake(s, MAIN, 13, 27, WORKER, 26, 2);
        wake(s, WORKER, 27, 43, MAIN, 42, -1);
        wake(s, WORKER, 44, 50, TRANSPORT, 49, -1);
        copy_back(s, 5, 51);
        wake(s, MAIN, 43, 57, WORKER, 56, 2);
    }
}

/* Rank 0 (and any rank like it), after the broadcast, `steps` steps from h = STEP (i + 1): the
 * main thread launches its step's kernel at h ([h+5, h+15) on stream 7), hands the collective's
 * work to the worker at h+3 and sleeps on its future [h+6, h+74); the worker syncs stream 7
 * [h+5, h+17) (its data ready at h+17), waits for the peer's data [h+18, h+68) (gloo's transport
 * thread hands it at h+67: rank 1 arrived at h+65), copies the result back at h+69 and wakes
 * the main thread at h+73. */
static void rank0(stream *s, int pid, int rank, int steps)
{
    rank_proc(s, pid, rank);
    broadcast(s, rank == 0);
    for (long long i = 0; i < steps; i++) {
        long long h = STEP * (i + 1), c = 10 * (i + 1);
        kernel_at(s, c + 1, h, 7, h + 5, h + 15);
        wake(s, WORKER, i ? h - STEP + 72 : 60, h + 4, MAIN, h + 3, -1);
        sync_of(s, WORKER, c + 2, h + 5, h + 17, 7, -1);
        wake(s, WORKER, h + 18, h + 68, TRANSPORT, h + 67, -1);
        copy_back(s, c + 3, h + 69);
        wake(s, MAIN, h + 6, h + 74, WORKER, h + 73, 2);
    }
    job_end(s, STEP * (steps + 1));
}

/* Rank 1, the same step but late: the main thread first launches a 50 us kernel on stream 9
 * ([h+5, h+55)) and syncs it [h+3, h+57) (the sync that delays it, train.py:41), then launches
 * the step's kernel at h+58 ([h+61, h+63)) and hands the work over at h+60; the worker syncs
 * [h+62, h+65) (its data ready at h+65: the last rank), finds the peer's data there (no wait)
 * and copies back at h+68, waking the main thread at h+72. */
static void rank1(stream *s, int steps)
{
    rank_proc(s, 201, 1);
    broadcast(s, 0);
    for (long long i = 0; i < steps; i++) {
        long long h = STEP * (i + 1), c = 10 * (i + 1);
        kernel_at(s, c + 1, h, 9, h + 5, h + 55);
        sync_of(s, MAIN, c + 2, h + 3, h + 57, 9, 1);
        kernel_at(s, c + 3, h + 58, 7, h + 61, h + 63);
        wake(s, WORKER, i ? h - STEP + 71 : 60, h + 61, MAIN, h + 60, -1);
        sync_of(s, WORKER, c + 4, h + 62, h + 65, 7, -1);
        copy_back(s, c + 5, h + 68);
        wake(s, MAIN, h + 62, h + 73, WORKER, h + 72, 2);
    }
    job_end(s, STEP * (steps + 1));
}

/* A job of rank 0 (steps0 steps), rank 1 (steps1) and, with a third, rank 2 like rank 0. */
static sb_audit_run *job_of(int steps0, int steps1, int third)
{
    stream a, b, c;
    rank0(&a, 200, 0, steps0);
    rank1(&b, steps1);
    sb_audit_run *run = load_into(NULL, &a, "proc-200.jsonl");
    load_into(run, &b, "proc-201.jsonl");
    if (third) {
        rank0(&c, 202, 2, steps0);
        load_into(run, &c, "proc-202.jsonl");
    }
    analyze_default(run);
    return run;
}

static sb_audit_run *job(int steps0, int steps1)
{
    return job_of(steps0, steps1, 0);
}

static void near(double got, double want)
{
    if (fabs(got - want) > 1e-6) {
        print_error("got %.6f, want %.6f\n", got, want);
        fail();
    }
}

/* The saving of rank 1's slow sync (the site train.py:41), or fail. */
static const sb_audit_saving *slow_sync_saving(const sb_audit_proc *p)
{
    const sb_audit_proc_result *res = res_of(p);
    for (size_t i = 0; i < res->nsavings; i++)
        if (res->savings[i].kind == SB_SAVE_SITE && strstr(res->savings[i].key, "train.py:41"))
            return &res->savings[i];
    fail_msg("no saving of train.py:41 in pid %lld", (long long)p->pid);
    return NULL;
}

/* Alone, rank 1 would save the whole sync a step (54 us: its worker then finds the peer's data
 * there as in the run). Played together, rank 0 is then the last to arrive (h+17): each
 * collective completes as long after it as it did after rank 1's arrival in the run (rank 1
 * went on 3 us after, rank 0 4), so both ranks go on 48 us sooner a step, and the main thread
 * of each moves with them: rank 1 saves 48 a step, not 54, and rank 0, which removed nothing,
 * saves 48 a step too: its worker's wait for the peer is gone. Rank 1's run ends 31 us short of
 * that: its last 50 us kernel on stream 9, no longer waited for, ends after its copy back. */
static void a_late_ranks_sync_moves_the_other_rank(void **state)
{
    (void)state;
    sb_audit_run *run = job(N, N);
    const sb_audit_proc *p0 = run->procs[0], *p1 = run->procs[1];
    assert_int_equal(p0->rank, 0);
    const sb_audit_saving *s = slow_sync_saving(p1);
    assert_int_equal(s->calls, N);
    assert_int_equal(s->ranks_unmodelled, 0);
    assert_null(s->ranks_why);
    assert_int_equal(s->ranks_played, 2);
    assert_int_equal(s->collectives, N + 2); /* the broadcasts and a collective a step */
    assert_int_equal(s->r.threads_unmodelled, 0);
    near(s->r.typical_us, 48);
    near(s->r.wall_us, 48.0 * N - 31);
    assert_true(s->job_figure); /* the only rank that has the line */
    near(sb_audit_run_saving(analysis_of(run), SB_SAVE_SITE, s->key, SB_AUDIT_NONE).us, 48.0 * N);

    /* the same selection through the job's own interface: rank 0 saves as much. Rank 0's calls:
     * the broadcasts' syncs and copies back, then 2 a step; rank 1's: the broadcasts' copies
     * back (their parts begin at its wakes 0 and 3), then 3 a step */
    sb_replay_part parts[2][N + 2] = {
        {{SB_PART_AFTER_CALL, 0, 1, 0}, {SB_PART_AFTER_CALL, 2, 3, 0}},
        {{SB_PART_AFTER_WAKE, 0, 0, 0}, {SB_PART_AFTER_WAKE, 3, 1, 0}}};
    for (size_t i = 0; i < N; i++) {
        parts[0][i + 2] = (sb_replay_part){SB_PART_AFTER_CALL, 4 + 2 * i, 5 + 2 * i, 0};
        parts[1][i + 2] = (sb_replay_part){SB_PART_AFTER_CALL, 3 + 3 * i, 4 + 3 * i, 0};
    }
    sb_replay_rank ranks[2] = {{p0, sb_audit_replay_model(res_of(p0)), parts[0], N + 2, 0},
                               {p1, sb_audit_replay_model(res_of(p1)), parts[1], N + 2, 1}};
    sb_replay_job *j;
    char why[256] = "";
    assert_int_equal(sb_replay_job_new(ranks, 2, &j, why, sizeof why), 0);
    assert_int_equal(sb_replay_job_collectives(j), N + 2);
    unsigned char none[4 + 2 * N] = {0}, none1[2 + 3 * N] = {0}, slow[2 + 3 * N] = {0};
    for (size_t i = 0; i < N; i++)
        slow[2 + 3 * i] = 1;
    const unsigned char *remove[2] = {none, slow};

    sb_replay_result r[2];
    int64_t end[2];
    assert_int_equal(sb_replay_job_run(j, remove, 0, r, end), 0);
    near(r[1].wall_us, 48.0 * N - 31);
    near(r[0].wall_us, 48.0 * N);
    assert_true(end[1] > end[0]); /* rank 1's last kernel */
    const unsigned char *nothing[2] = {none, none1};
    assert_int_equal(sb_replay_job_run(j, nothing, 0, r, end), 0);
    near(r[0].wall_us, 0); /* the baseline is the run itself */
    near(r[1].wall_us, 0);
    sb_replay_job_free(j);

    /* played alone (the job's interface not used), rank 1's worker keeps the run's pace */
    sb_replay_model *m = sb_audit_replay_model(res_of(p1));
    assert_non_null(m);
    assert_int_equal(sb_replay_run(m, slow, 0, &r[1]), 0);
    near(r[1].typical_us, 54);
    sb_replay_free(m);
    audit_free(run);
}

/* Rank 1 recorded one step fewer than rank 0: the collectives cannot be matched in order, and
 * every figure of either rank is unknown, saying why. */
static void counts_that_differ_are_unknown_with_why(void **state)
{
    (void)state;
    sb_audit_run *run = job(N, N - 1);
    for (size_t i = 0; i < run->nprocs; i++) {
        const sb_audit_proc_result *res = res_of(run->procs[i]);
        assert_true(res->nsavings > 0);
        for (size_t k = 0; k < res->nsavings; k++) {
            assert_int_equal(res->savings[k].ranks_unmodelled, 1);
            assert_int_equal(res->savings[k].ranks_played, 0);
            assert_string_equal(res->savings[k].ranks_why,
                                "the ranks' collectives differ in number: rank 1 has 21, "
                                "rank 0 22");
        }
    }
    char *text = table_text(run);
    assert_non_null(strstr(text, "would save: unknown: ranks not modelled (one of 2 ranks, not "
                                 "played together: the ranks' collectives differ in number: "
                                 "rank 1 has 21, rank 0 22;"));
    free(text);
    json_t *doc = json_report(run);
    json_t *pred =
        json_object_get(json_array_get(json_object_get(doc, "processes"), 1), "predicted");
    assert_int_equal(json_integer_value(json_object_get(pred, "ranks_unmodelled")), 1);
    assert_string_equal(json_string_value(json_object_get(pred, "ranks_model")),
                        "ranks not modelled: the ranks' collectives differ in number: rank 1 "
                        "has 21, rank 0 22");
    assert_int_equal(json_integer_value(json_object_get(pred, "ranks_played")), 0);
    json_decref(doc);
    audit_free(run);
}

/* Three ranks, rank 2 like rank 0: each collective completes after the last of the three, and
 * removing rank 1's sync moves ranks 0 and 2 alike (48 us a step). */
static void three_ranks_wait_for_the_last(void **state)
{
    (void)state;
    sb_audit_run *run = job_of(N, N, 1);
    assert_int_equal(run->nprocs, 3);
    const sb_audit_saving *s = slow_sync_saving(run->procs[1]);
    assert_int_equal(s->ranks_played, 3);
    assert_int_equal(s->collectives, N + 2);
    near(s->r.typical_us, 48);
    near(s->r.wall_us, 48.0 * N - 31);
    for (size_t i = 0; i < 3; i += 2) { /* every sync removed: the worker's too, alike */
        const sb_audit_saving *all = &res_of(run->procs[i])->savings[0];
        assert_int_equal(all->ranks_played, 3);
        near(all->r.wall_us, res_of(run->procs[0])->savings[0].r.wall_us);
    }
    audit_free(run);
}

/* The reports of a job played together: each rank's figure with how it was modelled, and the
 * run's sums take the job's figure once (its slowest rank's), not every rank's. */
static void reports_give_the_jobs_figure(void **state)
{
    (void)state;
    sb_audit_run *run = job(N, N);
    const sb_audit_analysis *an = analysis_of(run);
    char *text = table_text(run);
    assert_non_null(strstr(text, "pid 201: ranks played together: 2 ranks, 22 collectives "
                                 "matched; this rank's play ends last: its figure is the job's"));
    assert_non_null(strstr(text, "pid 200: ranks played together: 2 ranks, 22 collectives "
                                 "matched; the job's figure is rank 1's (pid 201)"));
    assert_null(strstr(text, "ranks not modelled"));
    free(text);
    const sb_audit_saving *all0 = &an->procs[0].savings[0], *all1 = &an->procs[1].savings[0];
    assert_int_equal(all0->kind, SB_SAVE_ALL);
    assert_false(all0->job_figure);
    assert_true(all1->job_figure);
    near(sb_audit_run_saving(an, SB_SAVE_ALL, NULL, SB_AUDIT_NONE).us, sb_audit_saving_us(all1));
    json_t *doc = json_report(run);
    json_t *pred =
        json_object_get(json_array_get(json_object_get(doc, "processes"), 1), "predicted");
    assert_string_equal(json_string_value(json_object_get(pred, "ranks_model")),
                        "ranks played together: 2 ranks, 22 collectives matched");
    assert_int_equal(json_integer_value(json_object_get(pred, "ranks_played")), 2);
    assert_int_equal(json_integer_value(json_object_get(pred, "collectives_matched")), N + 2);
    assert_true(json_is_true(json_object_get(pred, "job_figure")));
    assert_int_equal(json_integer_value(json_object_get(pred, "ranks_unmodelled")), 0);
    json_t *total = json_object_get(doc, "total");
    near(json_number_value(json_object_get(total, "predicted_save_us")), sb_audit_saving_us(all1));
    json_decref(doc);
    audit_free(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_late_ranks_sync_moves_the_other_rank),
        cmocka_unit_test(counts_that_differ_are_unknown_with_why),
        cmocka_unit_test(three_ranks_wait_for_the_last),
        cmocka_unit_test(reports_give_the_jobs_figure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
