/* What the waits library adds to the calls it interposes, timed on the CPU (docs/audit.md quotes
 * the figures; no test compares them with anything). Built with the library's sources, so that
 * its hooks are this program's own and the recorder's inner steps can be timed alone. Each line
 * is one call's median time in ns over ROUNDS rounds: "plain" through glibc's own function
 * (dlvsym RTLD_NEXT), "inert" through the hook before sbw_start, "recording" after:
 *   signal      pthread_cond_signal with no waiter
 *   post-wait   sem_post, then sem_wait on the semaphore it made available (no sleep)
 *   wait-added  what a wait that slept adds when recording: the sem_trywait that failed, two
 *               clock reads, the table looked up, the hand-off appended (the sleep itself, a
 *               context switch of microseconds, is glibc's and the kernel's)
 * Prints JSON lines {"mode":...,"call":...,"ns":...}. */
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "waits/recording.h"
#include "waits/waits.h"

#define ROUNDS 9
#define CALLS 50000 /* fewer than the ring holds: wait-added never finds it full */

typedef int (*signal_fn)(pthread_cond_t *);
typedef int (*sem_fn)(sem_t *);

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double signal_ns(signal_fn signal)
{
    pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
    long long t0 = now_ns();
    for (int i = 0; i < CALLS; i++)
        signal(&cond);
    return (double)(now_ns() - t0) / CALLS;
}

static double post_wait_ns(sem_fn post, sem_fn wait)
{
    sem_t sem;
    sem_init(&sem, 0, 0);
    long long t0 = now_ns();
    for (int i = 0; i < CALLS; i++) {
        post(&sem);
        wait(&sem);
    }
    double ns = (double)(now_ns() - t0) / CALLS;
    sem_destroy(&sem);
    return ns;
}

static sem_t empty;

static void *signal_empty(void *arg)
{
    (void)arg;
    sbw_note_signal(&empty);
    return NULL;
}

/* The recording's part of a wait that slept, on a semaphore another thread posted: everything
 * the hook adds around the real wait. */
static double wait_added_ns(void)
{
    sem_init(&empty, 0, 0);
    pthread_t t;
    pthread_create(&t, NULL, signal_empty, NULL);
    pthread_join(t, NULL);
    long long t0 = now_ns();
    for (int i = 0; i < CALLS; i++) {
        if (sem_trywait(&empty) == 0)
            abort();
        long long start = sbw_now_ns() - 1000000000ll; /* the post lies within the wait */
        sbw_note_wake(&empty, start, sbw_now_ns(), SBW_SEM);
    }
    double ns = (double)(now_ns() - t0) / CALLS;
    static sbw_handoff sink[4096];
    while (sbw_drain(sink, 4096) == 4096) {
    }
    return ns;
}

static void report(const char *mode, const char *call, double *v)
{
    qsort(v, ROUNDS, sizeof *v, by_value);
    printf("{\"mode\":\"%s\",\"call\":\"%s\",\"ns\":%.1f}\n", mode, call, v[ROUNDS / 2]);
}

static void measure(const char *mode, signal_fn signal, sem_fn post, sem_fn wait)
{
    double sig[ROUNDS], pair[ROUNDS], added[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        sig[r] = signal_ns(signal);
        pair[r] = post_wait_ns(post, wait);
        added[r] = *mode == 'r' ? wait_added_ns() : 0;
    }
    report(mode, "signal", sig);
    report(mode, "post-wait", pair);
    if (*mode == 'r')
        report(mode, "wait-added", added);
}

int main(void)
{
    signal_fn real_signal = (signal_fn)dlvsym(RTLD_NEXT, "pthread_cond_signal", "GLIBC_2.3.2");
    sem_fn real_post = (sem_fn)dlsym(RTLD_NEXT, "sem_post");
    sem_fn real_wait = (sem_fn)dlsym(RTLD_NEXT, "sem_wait");
    if (!real_signal)
        real_signal = (signal_fn)dlsym(RTLD_NEXT, "pthread_cond_signal");
    if (!real_signal || !real_post || !real_wait)
        return 1;
    measure("plain", real_signal, real_post, real_wait);
    measure("inert", pthread_cond_signal, sem_post, sem_wait);
    if (sbw_start() != 0)
        return 1;
    measure("recording", pthread_cond_signal, sem_post, sem_wait);
    return 0;
}
