/* libsyncbench_waits.so's recorder: the signaller table, the hand-off buffer, the waiter's
 * probe, sbw_start, sbw_drain and sbw_lost (waits.h). The interposed calls are in hooks.c and
 * futex.c.
 *
 * Every signal, broadcast, post or futex wake stores (object, thread, time) in the signaller table,
 * a fixed open table keyed by the object's address; a wait that slept and returned 0 looks its
 * object up there, and a signal of another thread within the wait makes one hand-off, appended to
 * the buffer. Nothing in the hot path allocates, locks or blocks: the table's slots are seqlocks (a
 * writer that finds a slot being written gives its entry up; a reader never takes a torn one)
 * and the buffer is a ring whose slots say whether they are free or written, so that the drainer
 * takes an entry only once it is whole. */
#include "waits.h"
#include "recording.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))
/* The library is preloaded, never dlopened: its thread-locals are in the static TLS block,
 * reached without a call (and so safe in a signal handler that posts a semaphore). */
#define TLS_IE __attribute__((tls_model("initial-exec")))
/* The GIL rule's off switch, for the test that proves the rule is what removes the GIL's waits */
#define KEEP_GIL_ENV "SYNCBENCH_WAITS_KEEP_GIL"

_Atomic int sbw_state = SBW_IDLE;

/* ---- the signaller table ---- */
#define TABLE_BITS 12
#define TABLE_SLOTS (1u << TABLE_BITS)

typedef struct {
    _Atomic unsigned seq; /* odd while a writer fills the slot */
    _Atomic int tid;
    _Atomic uintptr_t obj;
    _Atomic long long at_ns;
} signal_slot;

static signal_slot table[TABLE_SLOTS];

static signal_slot *slot_of(const void *obj)
{
    /* Fibonacci hashing: the high bits of the product mix every bit of the address */
    uint64_t h = (uint64_t)(uintptr_t)obj * 0x9E3779B97F4A7C15ull;
    return &table[h >> (64 - TABLE_BITS)];
}

static _Thread_local int my_tid TLS_IE;

static int tid(void)
{
    if (!my_tid)
        my_tid = (int)gettid(); /* glibc's own: not through this library's syscall() */
    return my_tid;
}

/* CUPTI's own clock on Linux (cupti_activity.h, cuptiActivityRegisterTimestampCallback: "Linux
 * ... uses clock_gettime(CLOCK_REALTIME)"; WSL, CLOCK_MONOTONIC_RAW): the injection library
 * converts with an offset it samples at each drain, 0 where they are the same clock. */
long long sbw_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

void sbw_note_signal(const void *obj)
{
    long long now = sbw_now_ns();
    signal_slot *s = slot_of(obj);
    unsigned seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
    if ((seq & 1) || !atomic_compare_exchange_strong_explicit(
                         &s->seq, &seq, seq + 1, memory_order_relaxed, memory_order_relaxed))
        return; /* another writer holds the slot: this entry is given up */
    atomic_thread_fence(memory_order_release); /* the odd seq is seen before any field */
    atomic_store_explicit(&s->obj, (uintptr_t)obj, memory_order_relaxed);
    atomic_store_explicit(&s->tid, tid(), memory_order_relaxed);
    atomic_store_explicit(&s->at_ns, now, memory_order_relaxed);
    atomic_store_explicit(&s->seq, seq + 2, memory_order_release);
}

/* The last signal on obj: 1 with its thread and time, 0 when the slot holds another object or
 * stays busy (a writer preempted in it). */
static int last_signal(const void *obj, int *by, long long *at_ns)
{
    signal_slot *s = slot_of(obj);
    for (int tries = 0; tries < 4; tries++) {
        unsigned before = atomic_load_explicit(&s->seq, memory_order_acquire);
        if (before & 1)
            continue;
        uintptr_t o = atomic_load_explicit(&s->obj, memory_order_relaxed);
        int t = atomic_load_explicit(&s->tid, memory_order_relaxed);
        long long a = atomic_load_explicit(&s->at_ns, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->seq, memory_order_relaxed) != before)
            continue;
        if (o != (uintptr_t)obj)
            return 0;
        *by = t;
        *at_ns = a;
        return 1;
    }
    return 0;
}

/* ---- the hand-off buffer: a ring of RING_SIZE slots, many writers, one drainer ----
 * Position p lies in slot p % RING_SIZE on lap p / RING_SIZE; the slot's turn says what it holds:
 * 2 * lap, free for lap's writer; 2 * lap + 1, written on lap. Zeroed memory is lap 0, all free,
 * so the mmap'd ring costs no page until it is written. A quarter second's drain at 65536 slots
 * takes 260,000 hand-offs a second. */
#define RING_BITS 16
#define RING_SIZE (1ull << RING_BITS)

typedef struct {
    _Atomic unsigned long long turn;
    sbw_handoff handoff;
} ring_slot;

static ring_slot *ring;                 /* set before sbw_state says recording */
static _Atomic unsigned long long head; /* the next position a writer claims */
static unsigned long long tail;         /* the next position the drainer takes (drain_lock) */
static _Atomic unsigned long long lost;
static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;

static void append(const sbw_handoff *h)
{
    unsigned long long pos = atomic_load_explicit(&head, memory_order_relaxed);
    for (;;) {
        ring_slot *s = &ring[pos & (RING_SIZE - 1)];
        unsigned long long turn = atomic_load_explicit(&s->turn, memory_order_acquire);
        unsigned long long free_turn = (pos >> RING_BITS) * 2;
        if (turn == free_turn) {
            if (atomic_compare_exchange_weak_explicit(&head, &pos, pos + 1, memory_order_relaxed,
                                                      memory_order_relaxed)) {
                s->handoff = *h;
                atomic_store_explicit(&s->turn, free_turn + 1, memory_order_release);
                return;
            }
        } else if (turn < free_turn) { /* the last lap's entry, not drained yet: full */
            atomic_fetch_add_explicit(&lost, 1, memory_order_relaxed);
            return;
        } else { /* another writer took this position */
            pos = atomic_load_explicit(&head, memory_order_relaxed);
        }
    }
}

/* ---- the waiter's probe: what the injection library wants known of a woken waiter ---- */
static long (*_Atomic waiter_probe)(void);
static _Thread_local int in_probe TLS_IE;

API void sbw_set_waiter_probe(long (*probe)(void))
{
    atomic_store_explicit(&waiter_probe, probe, memory_order_release);
}

/* The probe's answer on this thread, errno kept; -1 without a probe or inside it (a hand-off the
 * probe itself made). */
static long probe_waiter(void)
{
    long (*probe)(void) = atomic_load_explicit(&waiter_probe, memory_order_acquire);
    if (!probe || in_probe)
        return -1;
    int saved = errno;
    in_probe = 1;
    long v = probe();
    in_probe = 0;
    errno = saved;
    return v;
}

void sbw_note_wake(const void *obj, long long start_ns, long long end_ns, int kind)
{
    int by;
    long long at_ns;
    if (!last_signal(obj, &by, &at_ns) || at_ns < start_ns || at_ns > end_ns || by == tid())
        return;
    sbw_handoff h = {start_ns, end_ns, at_ns, tid(), by, kind, probe_waiter()};
    append(&h);
}

API size_t sbw_drain(sbw_handoff *out, size_t max)
{
    size_t n = 0;
    pthread_mutex_lock(&drain_lock);
    while (ring && n < max) {
        ring_slot *s = &ring[tail & (RING_SIZE - 1)];
        unsigned long long written = (tail >> RING_BITS) * 2 + 1;
        if (atomic_load_explicit(&s->turn, memory_order_acquire) != written)
            break; /* empty, or claimed and still being written: taken at the next drain */
        out[n++] = s->handoff;
        atomic_store_explicit(&s->turn, written + 1, memory_order_release);
        tail++;
    }
    pthread_mutex_unlock(&drain_lock);
    return n;
}

API unsigned long long sbw_lost(void)
{
    return atomic_load_explicit(&lost, memory_order_relaxed);
}

/* ---- the GIL rule ----
 * CPython's only pthread condition variables on Linux are its GIL's (its locks, threading.Lock,
 * Condition, Event and queue.Queue, are POSIX semaphores): waiting for the GIL is mutual
 * exclusion between Python threads, not waiting for another thread's work, so a condition-
 * variable call made from the interpreter's own object (the ELF object that defines _PyRuntime:
 * the python executable, or libpython) is neither a signal nor a wait here. Semaphore calls from
 * CPython are hand-offs and are recorded. The object is looked for at sbw_start: an interpreter
 * loaded later is not known. */
static uintptr_t python_lo, python_hi; /* the object's PT_LOAD span; 0, 0 when none */

int sbw_from_python(const void *caller)
{
    uintptr_t a = (uintptr_t)caller;
    return a >= python_lo && a < python_hi;
}

typedef struct {
    uintptr_t inside, lo, hi;
} object_span;

/* dl_iterate_phdr's callback: the span of the object whose PT_LOAD segments hold span->inside */
static int find_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    object_span *span = data;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    int holds = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;
        lo = start < lo ? start : lo;
        hi = end > hi ? end : hi;
        holds |= span->inside >= start && span->inside < end;
    }
    if (holds) {
        span->lo = lo;
        span->hi = hi;
    }
    return holds;
}

static void find_python(void)
{
    const char *keep = getenv(KEEP_GIL_ENV);
    void *runtime = dlsym(RTLD_DEFAULT, "_PyRuntime");
    if (!runtime || (keep && *keep == '1'))
        return;
    object_span span = {(uintptr_t)runtime, 0, 0};
    if (dl_iterate_phdr(find_object, &span)) {
        python_lo = span.lo;
        python_hi = span.hi;
    }
}

/* ---- start and fork ---- */

/* A child forked without exec records nothing (its injection library records nothing either):
 * what it inherited is dropped, and so are the locks a parent's thread may have held. */
static void after_fork_child(void)
{
    atomic_store_explicit(&sbw_state, SBW_FORKED, memory_order_relaxed);
    if (ring)
        munmap(ring, RING_SIZE * sizeof *ring);
    ring = NULL;
    atomic_store_explicit(&head, 0, memory_order_relaxed);
    tail = 0;
    atomic_store_explicit(&lost, 0, memory_order_relaxed);
    for (unsigned i = 0; i < TABLE_SLOTS; i++) {
        atomic_store_explicit(&table[i].seq, 0, memory_order_relaxed);
        atomic_store_explicit(&table[i].obj, 0, memory_order_relaxed);
    }
    pthread_mutex_init(&drain_lock, NULL);
    pthread_mutex_init(&start_lock, NULL);
    my_tid = 0; /* the forking thread's cached id is its parent's */
}

API int sbw_start(void)
{
    pthread_mutex_lock(&start_lock);
    int state = atomic_load_explicit(&sbw_state, memory_order_relaxed);
    int rc = state == SBW_FORKED ? -1 : 0;
    if (state == SBW_IDLE) {
        void *mem = mmap(NULL, RING_SIZE * sizeof *ring, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (mem == MAP_FAILED) {
            rc = -1;
        } else {
            ring = mem;
            find_python();
            pthread_atfork(NULL, NULL, after_fork_child);
            atomic_store_explicit(&sbw_state, SBW_RECORDING, memory_order_release);
        }
    }
    pthread_mutex_unlock(&start_lock);
    return rc;
}
