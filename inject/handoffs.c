#include "handoffs.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
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

static void write_drained(void)
{
    sbw_handoff batch[BATCH];
    long long offset = cupti_minus_realtime();
    size_t n;
    do {
        n = drain_fn(batch, BATCH);
        for (size_t i = 0; i < n; i++) {
            const sbw_handoff *h = &batch[i];
            sba_out_printf("{\"t\":\"wake\",\"tid\":%d,\"start\":%lld,\"end\":%lld,\"by\":%d,"
                           "\"at\":%lld,\"obj\":\"%s\"}",
                           h->waiter_tid, h->start_ns + offset, h->end_ns + offset,
                           h->signaller_tid, h->signal_ns + offset,
                           h->kind == SBW_SEM ? "sem" : "cond");
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

int sba_handoffs_start(void)
{
    int (*start)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "sbw_start");
    size_t (*drain)(sbw_handoff *, size_t) =
        (size_t(*)(sbw_handoff *, size_t))dlsym(RTLD_DEFAULT, "sbw_drain");
    unsigned long long (*lost)(void) =
        (unsigned long long (*)(void))dlsym(RTLD_DEFAULT, "sbw_lost");
    if (!start || !drain || !lost || start() != 0)
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
    finished = 1;
    pthread_mutex_unlock(&write_lock);
}

unsigned long long sba_handoffs_lost(void)
{
    return lost_fn ? lost_fn() : 0;
}
