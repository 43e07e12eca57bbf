/* The waits library's hand-offs on the CPU: run with LD_PRELOAD=libsyncbench_waits.so by
 * tests/cli/test_waits.py, it finds the library's API with dlsym (as the injection library
 * does), sets a waiter probe (each thread answers its own number), makes hand-offs of every
 * kind (condition variables, semaphores, futex waits and wakes through syscall(), as Abseil
 * makes them) and waits that are none, drains what was recorded after each case and prints one
 * JSON line a case:
 *   {"case":"cond-wait","waiters":[W,...],"signaller":S,"rc":R,"answers":[A,...],"probed":P,
 *    "errno_kept":1,"wakes":[{"tid":W,"by":S,"start":..,"end":..,"at":..,"obj":"cond",
 *    "py":A},...]}
 * (answers: what each waiter's probe answers; probed: the probe's calls during the case;
 * errno_kept: each waiter's errno the same after its wait as before) and a last line
 * {"lost":N}. The signaller does about WORK_MS of work after the waiters are asleep (seen in
 * /proc), then signals, broadcasts, posts or wakes. Exit 2 when the library is not preloaded. */
#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tests/waits/asleep.h"
#include "waits/waits.h"

#define WORK_MS 20

static int (*start_fn)(void);
static size_t (*drain_fn)(sbw_handoff *, size_t);
static unsigned long long (*lost_fn)(void);

/* The probe: each thread's own answer (a waiter's: 1000 + its index; -1 until set), and how many
 * times it was asked. It sets errno, which the library must give back. */
static _Thread_local long answer = -1;
static _Atomic int probed;

static long probe(void)
{
    atomic_fetch_add(&probed, 1);
    errno = EDOM;
    return answer;
}

/* What a case's threads share. */
typedef struct {
    const char *how; /* the wait the waiters make: "cond-wait", "sem-clockwait", ... */
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    sem_t sem;
    int ready;
    long long timeout_ms;   /* for the timed waits */
    _Atomic int futex_word; /* the futex cases' word: 0 until the signaller's wake */
    _Atomic int tids[2];
    int rc[2];
    int errno_kept[2];
} handoff_case;

typedef struct {
    handoff_case *c;
    int index;
} waiter_arg;

static int gettid_now(void)
{
    return (int)syscall(SYS_gettid);
}

static long long now_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static struct timespec deadline(clockid_t clock, long long ms)
{
    long long t = now_ns(clock) + ms * 1000000ll;
    return (struct timespec){t / 1000000000ll, t % 1000000000ll};
}

/* The signaller's work: the CPU kept busy for ms. */
static void work_ms(long long ms)
{
    long long end = now_ns(CLOCK_MONOTONIC) + ms * 1000000ll;
    volatile unsigned long spin = 0;
    while (now_ns(CLOCK_MONOTONIC) < end)
        spin++;
}

static int cond_wait_as(handoff_case *c)
{
    struct timespec until;
    if (!strcmp(c->how, "cond-timedwait")) {
        until = deadline(CLOCK_REALTIME, c->timeout_ms);
        return pthread_cond_timedwait(&c->cond, &c->mutex, &until);
    }
    if (!strcmp(c->how, "cond-clockwait") || !strcmp(c->how, "cond-timeout")) {
        until = deadline(CLOCK_MONOTONIC, c->timeout_ms);
        return pthread_cond_clockwait(&c->cond, &c->mutex, CLOCK_MONOTONIC, &until);
    }
    return pthread_cond_wait(&c->cond, &c->mutex);
}

static int sem_wait_as(handoff_case *c)
{
    struct timespec until;
    if (!strcmp(c->how, "sem-timedwait")) {
        until = deadline(CLOCK_REALTIME, c->timeout_ms);
        return sem_timedwait(&c->sem, &until);
    }
    if (!strcmp(c->how, "sem-clockwait")) {
        until = deadline(CLOCK_MONOTONIC, c->timeout_ms);
        return sem_clockwait(&c->sem, CLOCK_MONOTONIC, &until);
    }
    return sem_wait(&c->sem);
}

/* A futex wait as Abseil's is: syscall(), the word 0 until the wake. "futex-wait-bitset": with
 * an absolute deadline on CLOCK_MONOTONIC; "futex-timeout": 20 ms that pass with no wake. An
 * EAGAIN (the word changed before the wait) goes round again. 0, or the errno. */
static int futex_wait_as(handoff_case *c)
{
    int *word = (int *)&c->futex_word;
    while (atomic_load(&c->futex_word) == 0) {
        long rc;
        if (!strcmp(c->how, "futex-wait")) {
            rc = syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
        } else {
            struct timespec until = deadline(CLOCK_MONOTONIC, c->timeout_ms);
            rc = syscall(SYS_futex, word, FUTEX_WAIT_BITSET_PRIVATE, 0, &until, NULL,
                         FUTEX_BITSET_MATCH_ANY);
        }
        if (rc != 0 && errno != EAGAIN && errno != EINTR)
            return errno;
    }
    return 0;
}

static void *waiter(void *arg)
{
    waiter_arg *w = arg;
    handoff_case *c = w->c;
    answer = 1000 + w->index;
    if (!strncmp(c->how, "sem", 3) || !strncmp(c->how, "futex", 5)) {
        atomic_store(&c->tids[w->index], gettid_now());
        errno = ERANGE;
        int rc = c->how[0] == 's' ? (sem_wait_as(c) == 0 ? 0 : errno) : futex_wait_as(c);
        c->errno_kept[w->index] = rc == 0 && errno == ERANGE;
        c->rc[w->index] = rc;
        return NULL;
    }
    pthread_mutex_lock(&c->mutex);
    atomic_store(&c->tids[w->index], gettid_now());
    int rc = 0;
    errno = ERANGE;
    while (!c->ready && rc == 0)
        rc = cond_wait_as(c);
    c->errno_kept[w->index] = rc == 0 && errno == ERANGE;
    c->rc[w->index] = rc;
    pthread_mutex_unlock(&c->mutex);
    return NULL;
}

static void print_wakes(void)
{
    sbw_handoff got[64];
    size_t n = drain_fn ? drain_fn(got, 64) : 0;
    printf("\"wakes\":[");
    for (size_t i = 0; i < n; i++)
        printf("%s{\"tid\":%d,\"by\":%d,\"start\":%lld,\"end\":%lld,\"at\":%lld,\"obj\":\"%s\","
               "\"py\":%ld}",
               i ? "," : "", got[i].waiter_tid, got[i].signaller_tid, got[i].start_ns,
               got[i].end_ns, got[i].signal_ns,
               got[i].kind == SBW_COND  ? "cond"
               : got[i].kind == SBW_SEM ? "sem"
                                        : "futex",
               got[i].waiter_py);
    printf("]}\n");
    fflush(stdout);
}

/* The signaller's side, once every waiter sleeps: the work, then the signal. "cond-timeout": it
 * holds the mutex past the waiter's deadline and signals then, so that the wait times out with
 * a signal inside it (glibc: the waiter gave up waiting at its deadline, then waits for the
 * mutex, and returns ETIMEDOUT). */
static void signal_waiters(handoff_case *c, int nwaiters)
{
    if (!strcmp(c->how, "cond-timeout")) {
        pthread_mutex_lock(&c->mutex);
        sleep_ms(2 * c->timeout_ms);
        pthread_cond_signal(&c->cond);
        pthread_mutex_unlock(&c->mutex);
        return;
    }
    if (!strcmp(c->how, "futex-timeout")) { /* no wake: the wait runs out */
        sleep_ms(2 * c->timeout_ms);
        return;
    }
    work_ms(WORK_MS);
    if (!strncmp(c->how, "sem", 3)) {
        for (int i = 0; i < nwaiters; i++)
            sem_post(&c->sem);
        return;
    }
    if (!strncmp(c->how, "futex", 5)) {
        atomic_store(&c->futex_word, 1);
        syscall(SYS_futex, (int *)&c->futex_word,
                strcmp(c->how, "futex-wait") ? FUTEX_WAKE_BITSET_PRIVATE : FUTEX_WAKE_PRIVATE,
                nwaiters, NULL, NULL, FUTEX_BITSET_MATCH_ANY);
        return;
    }
    pthread_mutex_lock(&c->mutex);
    c->ready = 1;
    if (nwaiters > 1)
        pthread_cond_broadcast(&c->cond);
    else
        pthread_cond_signal(&c->cond);
    pthread_mutex_unlock(&c->mutex);
}

/* One case: nwaiters threads wait as `how` says, this thread signals them; the records drained
 * after it are printed under `name`. then_start: the library is started after the hand-off,
 * before the drain (the hand-off before sbw_start). */
static void run_case(const char *name, const char *how, int nwaiters, int then_start)
{
    handoff_case c = {.how = how, .timeout_ms = strstr(how, "timeout") ? 20 : 5000};
    pthread_mutex_init(&c.mutex, NULL);
    pthread_cond_init(&c.cond, NULL);
    sem_init(&c.sem, 0, 0);
    pthread_t threads[2];
    waiter_arg args[2];
    int probed_before = atomic_load(&probed);
    for (int i = 0; i < nwaiters; i++) {
        args[i] = (waiter_arg){&c, i};
        pthread_create(&threads[i], NULL, waiter, &args[i]);
    }
    for (int i = 0; i < nwaiters; i++)
        until_asleep(&c.tids[i]);
    signal_waiters(&c, nwaiters);
    for (int i = 0; i < nwaiters; i++)
        pthread_join(threads[i], NULL);
    if (then_start && (start_fn() != 0 || start_fn() != 0)) { /* idempotent */
        fprintf(stderr, "waits_handoffs: sbw_start failed\n");
        exit(1);
    }
    printf("{\"case\":\"%s\",\"waiters\":[%d", name, c.tids[0]);
    if (nwaiters > 1)
        printf(",%d", c.tids[1]);
    printf("],\"signaller\":%d,\"rc\":%d,\"answers\":[1000%s],\"probed\":%d,\"errno_kept\":%d,",
           gettid_now(), c.rc[0] ? c.rc[0] : c.rc[1], nwaiters > 1 ? ",1001" : "",
           atomic_load(&probed) - probed_before,
           c.errno_kept[0] && (nwaiters < 2 || c.errno_kept[1]));
    print_wakes();
    sem_destroy(&c.sem);
    pthread_cond_destroy(&c.cond);
    pthread_mutex_destroy(&c.mutex);
}

static void *post_once(void *arg)
{
    sem_post(arg);
    return NULL;
}

/* A semaphore another thread posted before the wait: taken at once, no sleep, no record. */
static void available_semaphore(void)
{
    sem_t sem;
    sem_init(&sem, 0, 0);
    pthread_t t;
    pthread_create(&t, NULL, post_once, &sem);
    pthread_join(t, NULL);
    int probed_before = atomic_load(&probed);
    int rc = sem_wait(&sem) == 0 ? 0 : errno;
    printf("{\"case\":\"sem-available\",\"waiters\":[%d],\"signaller\":0,\"rc\":%d,\"probed\":%d,",
           gettid_now(), rc, atomic_load(&probed) - probed_before);
    print_wakes();
    sem_destroy(&sem);
}

int main(void)
{
    start_fn = (int (*)(void))dlsym(RTLD_DEFAULT, "sbw_start");
    drain_fn = (size_t(*)(sbw_handoff *, size_t))dlsym(RTLD_DEFAULT, "sbw_drain");
    lost_fn = (unsigned long long (*)(void))dlsym(RTLD_DEFAULT, "sbw_lost");
    void (*set_probe)(long (*)(void)) =
        (void (*)(long (*)(void)))dlsym(RTLD_DEFAULT, "sbw_set_waiter_probe");
    if (!start_fn || !drain_fn || !lost_fn || !set_probe) {
        fprintf(stderr, "waits_handoffs: libsyncbench_waits.so is not preloaded\n");
        return 2;
    }
    set_probe(probe);
    run_case("before-start", "cond-wait", 1, 1);
    const char *hows[] = {"cond-wait",  "cond-timedwait",    "cond-clockwait",
                          "sem-wait",   "sem-timedwait",     "sem-clockwait",
                          "futex-wait", "futex-wait-bitset", "futex-timeout"};
    for (size_t i = 0; i < sizeof hows / sizeof hows[0]; i++)
        run_case(hows[i], hows[i], 1, 0);
    run_case("cond-broadcast", "cond-wait", 2, 0);
    run_case("futex-wake-two", "futex-wait", 2, 0);
    run_case("cond-timeout", "cond-timeout", 1, 0);
    available_semaphore();
    printf("{\"lost\":%llu}\n", lost_fn());
    return 0;
}
