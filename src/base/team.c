#include "base/team.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

typedef struct member {
    struct sb_team *team;
    int rank;
    pthread_t thread;
} member;

struct sb_team {
    pthread_mutex_t mu;
    pthread_cond_t go;    /* a job, or the end: the members wake */
    pthread_cond_t done;  /* the last member finished the job: the caller wakes */
    unsigned long job_no; /* jobs handed out so far: a member runs each number once */
    int finished;         /* members done with the job under way */
    int quit;
    sb_team_job job;
    void *arg;
    int n;
    member *members;
};

static void *member_main(void *p)
{
    member *m = p;
    struct sb_team *t = m->team;
    unsigned long seen = 0;
    pthread_mutex_lock(&t->mu);
    for (;;) {
        while (!t->quit && t->job_no == seen)
            pthread_cond_wait(&t->go, &t->mu);
        if (t->quit)
            break;
        seen = t->job_no;
        sb_team_job job = t->job;
        void *arg = t->arg;
        pthread_mutex_unlock(&t->mu);
        job(arg, m->rank);
        pthread_mutex_lock(&t->mu);
        if (++t->finished == t->n)
            pthread_cond_signal(&t->done);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

/* Ends the first `started` members and frees the team. */
static void stop(sb_team *t, int started)
{
    pthread_mutex_lock(&t->mu);
    t->quit = 1;
    pthread_cond_broadcast(&t->go);
    pthread_mutex_unlock(&t->mu);
    for (int i = 0; i < started; i++)
        pthread_join(t->members[i].thread, NULL);
    pthread_cond_destroy(&t->done);
    pthread_cond_destroy(&t->go);
    pthread_mutex_destroy(&t->mu);
    free(t->members);
    free(t);
}

sb_team *sb_team_new(int n)
{
    if (n < 1)
        return NULL;
    sb_team *t = calloc(1, sizeof *t);
    member *m = calloc((size_t)n, sizeof *m);
    pthread_condattr_t ca;
    if (!t || !m || pthread_condattr_init(&ca) != 0) {
        free(t);
        free(m);
        return NULL;
    }
    /* the caller's waits are timed on the monotonic clock: a wall-clock step cannot stretch them */
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->go, NULL);
    pthread_cond_init(&t->done, &ca);
    pthread_condattr_destroy(&ca);
    t->n = n;
    t->members = m;
    for (int i = 0; i < n; i++) {
        m[i].team = t;
        m[i].rank = i;
        if (pthread_create(&m[i].thread, NULL, member_main, &m[i]) != 0) {
            stop(t, i);
            return NULL;
        }
    }
    return t;
}

int sb_team_size(const sb_team *t)
{
    return t->n;
}

static void deadline_after(struct timespec *ts, double s)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    long long ns = ts->tv_nsec + (long long)(s * 1e9);
    ts->tv_sec += (time_t)(ns / 1000000000ll);
    ts->tv_nsec = (long)(ns % 1000000000ll);
}

void sb_team_run(sb_team *t, sb_team_job job, void (*watch)(void *), void *arg, double poll_s)
{
    pthread_mutex_lock(&t->mu);
    t->job = job;
    t->arg = arg;
    t->finished = 0;
    t->job_no++;
    pthread_cond_broadcast(&t->go);
    while (t->finished < t->n) {
        if (!watch) {
            pthread_cond_wait(&t->done, &t->mu);
            continue;
        }
        struct timespec until;
        deadline_after(&until, poll_s);
        int timed_out = 0;
        while (t->finished < t->n && !timed_out)
            timed_out = pthread_cond_timedwait(&t->done, &t->mu, &until) != 0;
        if (timed_out) {
            pthread_mutex_unlock(&t->mu);
            watch(arg);
            pthread_mutex_lock(&t->mu);
        }
    }
    pthread_mutex_unlock(&t->mu);
}

void sb_team_free(sb_team *t)
{
    if (t)
        stop(t, t->n);
}
