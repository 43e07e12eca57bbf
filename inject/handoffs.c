#include "handoffs.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <cupti.h>

#include "out.h"
#include "waits/waits.h"

#define BATCH 256

static size_t (*drain_fn)(sbw_handoff *, size_t);
static unsigned long long (*lost_fn)(void);
/* One writer at a time, so that the flusher's batch never lands after the end record. */
static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;
static int finished;

static long long realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* CUPTI's clock minus CLOCK_REALTIME, which the waits library reads: CUPTI's timestamp between
 * two reads of the other. 0 when it lies within that bracket, as it does where CUPTI reads
 * CLOCK_REALTIME itself (cupti_activity.h says so of Linux; WSL's CUPTI reads
 * CLOCK_MONOTONIC_RAW): then no conversion adds the sampling's own error. Sampled at each drain,
 * so that a step of the wall clock (NTP) moves only the hand-offs of that quarter second. */
static long long cupti_minus_realtime(void)
{
    uint64_t cupti = 0;
    long long before = realtime_ns();
    cuptiGetTimestamp(&cupti);
    long long after = realtime_ns();
    long long offset = (long long)cupti - before / 2 - after / 2;
    long long bracket = after - before;
    return offset > -bracket && offset < bracket ? 0 : offset;
}

static const char *kind_name(int kind)
{
    return kind == SBW_SEM ? "sem" : kind == SBW_FUTEX ? "futex" : "cond";
}

static void write_drained(void)
{
    sbw_handoff batch[BATCH];
    long long offset = cupti_minus_realtime();
    size_t n;
    do {
        n = drain_fn(batch, BATCH);
        for (size_t i = 0; i < n; i++) {
            const sbw_handoff *h = &batch[i];
            char py[32] = "";
            if (h->waiter_py >= 0)
                snprintf(py, sizeof py, ",\"py\":%ld", h->waiter_py);
            sba_out_printf("{\"t\":\"wake\",\"tid\":%d,\"start\":%lld,\"end\":%lld,\"by\":%d,"
                           "\"at\":%lld,\"obj\":\"%s\"%s}",
                           h->waiter_tid, h->start_ns + offset, h->end_ns + offset,
                           h->signaller_tid, h->signal_ns + offset, kind_name(h->kind), py);
        }
    } while (n == BATCH);
}

/* The flusher's quarter-second turn. */
static void write_pending(void)
{
    pthread_mutex_lock(&write_lock);
    if (!finished)
        write_drained();
    pthread_mutex_unlock(&write_lock);
}

/* The waiter's probe: what it answers on a woken waiter's thread; -1 once the end record is
 * written (no record may follow it) and on a thread that runs no Python, asked of the interpreter
 * first: the probe runs inside whatever wait woke (an allocator's futex lock among them), and the
 * first use of this library's thread-locals on a thread allocates. */
static long (*waiter_probe)(void);
static int (*py_initialized)(void);
static void *(*py_this_thread)(void);

static long probe_after_wake(void)
{
    if (__atomic_load_n(&finished, __ATOMIC_RELAXED) || !py_initialized() || !py_this_thread())
        return -1;
    return waiter_probe();
}

/* The probe, where an interpreter is there to ask in the global scope (a libpython an embedding
 * application loaded privately is not: its waiters get no stack) */
static void set_waiter_probe(void (*set_probe)(long (*)(void)), long (*probe)(void))
{
    py_initialized = (int (*)(void))dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    py_this_thread = (void *(*)(void))dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
    waiter_probe = probe;
    if (probe && py_initialized && py_this_thread)
        set_probe(probe_after_wake);
}

int sba_handoffs_start(long (*probe)(void))
{
    int (*start)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "sbw_start");
    size_t (*drain)(sbw_handoff *, size_t) =
        (size_t(*)(sbw_handoff *, size_t))dlsym(RTLD_DEFAULT, "sbw_drain");
    unsigned long long (*lost)(void) =
        (unsigned long long (*)(void))dlsym(RTLD_DEFAULT, "sbw_lost");
    void (*set_probe)(long (*)(void)) =
        (void (*)(long (*)(void)))dlsym(RTLD_DEFAULT, "sbw_set_waiter_probe");
    if (!start || !drain || !lost || !set_probe)
        return -1;
    set_waiter_probe(set_probe, probe);
    if (start() != 0)
        return -1;
    drain_fn = drain;
    lost_fn = lost;
    sba_out_on_flush(write_pending);
    return 0;
}

void sba_handoffs_finish(void)
{
    if (!drain_fn)
        return;
    pthread_mutex_lock(&write_lock);
    if (!finished)
        write_drained();
    __atomic_store_n(&finished, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&write_lock);
}

unsigned long long sba_handoffs_lost(void)
{
    return lost_fn ? lost_fn() : 0;
}
