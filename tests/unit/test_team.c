/* base/team.c: every rank runs each job once, on threads of their own at the same time; the
 * caller returns when all are done, and is called back while it waits. */
#include "cmocka_all.h"

#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/team.h"

#define MAX_RANKS 8

typedef struct job_state {
    int n;
    atomic_int runs[MAX_RANKS]; /* per rank: how often it ran */
    atomic_int arrived;         /* ranks inside the job at once */
    atomic_int met;             /* ranks that saw every rank inside */
    int slow_rank;              /* sleeps slow_ms in the job; -1: none */
    int slow_ms;
    atomic_int watched; /* the caller's callbacks */
} job_state;

static void count_job(void *arg, int rank)
{
    job_state *j = arg;
    atomic_fetch_add(&j->runs[rank], 1);
}

/* Every rank waits (up to 5 s) until every rank is inside the job: ranks run one after the
 * other on one thread would never all be inside at once. */
static void meet_job(void *arg, int rank)
{
    job_state *j = arg;
    atomic_fetch_add(&j->arrived, 1);
    double t0 = sb_now_us();
    while (atomic_load(&j->arrived) < j->n && sb_now_us() - t0 < 5e6)
        sched_yield(); /* one CPU, or valgrind's one thread at a time: the others get it */
    if (atomic_load(&j->arrived) == j->n)
        atomic_fetch_add(&j->met, 1);
    atomic_fetch_add(&j->runs[rank], 1);
}

static void slow_job(void *arg, int rank)
{
    job_state *j = arg;
    if (rank == j->slow_rank) {
        struct timespec ts = {0, (long)j->slow_ms * 1000000L};
        nanosleep(&ts, NULL);
    }
    atomic_fetch_add(&j->runs[rank], 1);
}

static void watch(void *arg)
{
    job_state *j = arg;
    atomic_fetch_add(&j->watched, 1);
}

static void every_rank_runs_each_job_once(void **state)
{
    (void)state;
    for (int n = 1; n <= MAX_RANKS; n++) {
        sb_team *t = sb_team_new(n);
        assert_non_null(t);
        assert_int_equal(sb_team_size(t), n);
        job_state j;
        memset(&j, 0, sizeof j);
        j.n = n;
        for (int job = 1; job <= 50; job++) {
            sb_team_run(t, count_job, NULL, &j, 0);
            for (int r = 0; r < n; r++)
                assert_int_equal(atomic_load(&j.runs[r]), job);
            for (int r = n; r < MAX_RANKS; r++)
                assert_int_equal(atomic_load(&j.runs[r]), 0);
        }
        sb_team_free(t);
    }
}

static void ranks_run_at_the_same_time(void **state)
{
    (void)state;
    const int n = 4;
    sb_team *t = sb_team_new(n);
    assert_non_null(t);
    job_state j;
    memset(&j, 0, sizeof j);
    j.n = n;
    sb_team_run(t, meet_job, NULL, &j, 0);
    assert_int_equal(atomic_load(&j.met), n);
    sb_team_free(t);
}

/* The caller returns only once the slowest rank is done, and calls watch while it waits. */
static void the_caller_waits_for_the_slowest_and_watches(void **state)
{
    (void)state;
    sb_team *t = sb_team_new(3);
    assert_non_null(t);
    job_state j;
    memset(&j, 0, sizeof j);
    j.n = 3;
    j.slow_rank = 2;
    j.slow_ms = 200;
    double t0 = sb_now_us();
    sb_team_run(t, slow_job, watch, &j, 0.01);
    double took_ms = (sb_now_us() - t0) / 1e3;
    assert_true(took_ms >= 190);
    for (int r = 0; r < 3; r++)
        assert_int_equal(atomic_load(&j.runs[r]), 1);
    int w = atomic_load(&j.watched);
    assert_true(w >= 5);   /* ~20 callbacks in 200 ms at 10 ms */
    assert_true(w <= 100); /* but not a busy loop */
    /* a quick job: no callback at all */
    j.slow_rank = -1;
    atomic_store(&j.watched, 0);
    sb_team_run(t, slow_job, watch, &j, 5.0);
    assert_int_equal(atomic_load(&j.watched), 0);
    assert_int_equal(atomic_load(&j.runs[0]), 2);
    sb_team_free(t);
}

static void no_team_of_nobody(void **state)
{
    (void)state;
    assert_null(sb_team_new(0));
    assert_null(sb_team_new(-3));
    sb_team_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_rank_runs_each_job_once),
        cmocka_unit_test(ranks_run_at_the_same_time),
        cmocka_unit_test(the_caller_waits_for_the_slowest_and_watches),
        cmocka_unit_test(no_team_of_nobody),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
