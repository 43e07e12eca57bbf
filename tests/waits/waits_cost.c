/* What the waits library adds to the calls it interposes, timed on the CPU (docs/audit.md quotes
 * the figures; no test compares them with anything). Built with the library's sources, so that
 * its hooks are this program's own and the recorder's inner steps can be timed alone. Each line
 * is one call's median time in ns over ROUNDS rounds: "plain" through glibc's own function
 * (dlvsym RTLD_NEXT), "inert" through the hook before sbw_start, "recording" after:
 *   signal      pthread_cond_signal with no waiter
 *   post-wait   sem_post, then sem_wait on the semaphore it made available (no sleep)
 *   syscall     syscall(SYS_getppid): any system call made through libc's syscall()
 *   futex-wake  syscall(SYS_futex, FUTEX_WAKE) with no waiter (Abseil's wake)
 *   wait-added  what a wait that slept adds when recording: the sem_trywait that failed, two
 *               clock reads, the table looked up, the hand-off appended (the sleep itself, a
 *               context switch of microseconds, is glibc's and the kernel's; no waiter probe)
 * A system call's own time moves by more than the hook adds (a VM's kernel entry: 200 to 600 ns),
 * so each round of syscall and futex-wake also times the plain call beside the hook's, in turns,
 * and "syscall-added" and "futex-wake-added" (inert and recording) are the medians of the
 * rounds' differences. Prints JSON lines {"mode":...,"call":...,"ns":...}. */
#include <dlfcn.h>
#include <linux/futex.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "waits/recording.h"
#include "waits/waits.h"

#define ROUNDS 21
#define CALLS 50000 /* fewer than the ring holds: wait-added never finds it full */

typedef int (*signal_fn)(pthread_cond_t *);
typedef int (*sem_fn)(sem_t *);
typedef long (*syscall_fn)(long, ...);

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

static double syscall_ns(syscall_fn sys)
{
    long long t0 = now_ns();
    for (int i = 0; i < CALLS; i++)
        sys(SYS_getppid);
    return (double)(now_ns() - t0) / CALLS;
}

static double futex_wake_ns(syscall_fn sys)
{
    int word = 0;
    long long t0 = now_ns();
    for (int i = 0; i < CALLS; i++)
        sys(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    return (double)(now_ns() - t0) / CALLS;
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

/* The real functions, or the hooks. */
typedef struct {
    signal_fn signal;
    sem_fn post, wait;
    syscall_fn sys;
} calls;

/* A system call through the hook (*hook) and plainly, in turns: the hook's time less the plain
 * one (*added). */
static void paired(double (*time)(syscall_fn), syscall_fn sys, syscall_fn plain, int r,
                   double *hook, double *added)
{
    double p = r % 2 ? time(plain) : 0;
    *hook = time(sys);
    p = r % 2 ? p : time(plain);
    *added = *hook - p;
}

static void measure(const char *mode, const calls *c, const calls *real)
{
    double sig[ROUNDS], pair[ROUNDS], added[ROUNDS], sys[ROUNDS], wake[ROUNDS];
    double sys_added[ROUNDS], wake_added[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        sig[r] = signal_ns(c->signal);
        pair[r] = post_wait_ns(c->post, c->wait);
        paired(syscall_ns, c->sys, real->sys, r, &sys[r], &sys_added[r]);
        paired(futex_wake_ns, c->sys, real->sys, r, &wake[r], &wake_added[r]);
        added[r] = *mode == 'r' ? wait_added_ns() : 0;
    }
    report(mode, "signal", sig);
    report(mode, "post-wait", pair);
    report(mode, "syscall", sys);
    report(mode, "futex-wake", wake);
    if (c == real)
        return;
    report(mode, "syscall-added", sys_added);
    report(mode, "futex-wake-added", wake_added);
    if (*mode == 'r')
        report(mode, "wait-added", added);
}

int main(void)
{
    calls real = {(signal_fn)dlvsym(RTLD_NEXT, "pthread_cond_signal", "GLIBC_2.3.2"),
                  (sem_fn)dlsym(RTLD_NEXT, "sem_post"), (sem_fn)dlsym(RTLD_NEXT, "sem_wait"),
                  (syscall_fn)dlsym(RTLD_NEXT, "syscall")};
    if (!real.signal)
        real.signal = (signal_fn)dlsym(RTLD_NEXT, "pthread_cond_signal");
    if (!real.signal || !real.post || !real.wait || !real.sys)
        return 1;
    calls hooks = {pthread_cond_signal, sem_post, sem_wait, syscall};
    measure("plain", &real, &real);
    measure("inert", &hooks, &real);
    if (sbw_start() != 0)
        return 1;
    measure("recording", &hooks, &real);
    return 0;
}
