/* What the interposed calls (hooks.c) share with the recorder (waits.c): whether recording is
 * on, the GIL rule, the signaller table and the hand-off buffer. Internal to the library. */
#ifndef SBW_RECORDING_H
#define SBW_RECORDING_H

#include <stdatomic.h>

enum { SBW_IDLE, SBW_RECORDING, SBW_FORKED };
extern _Atomic int sbw_state;

/* Whether sbw_start has run (and no fork since): one relaxed load, all that a process that never
 * starts pays per call. */
static inline int sbw_recording(void)
{
    if (atomic_load_explicit(&sbw_state, memory_order_relaxed) != SBW_RECORDING)
        return 0;
    atomic_thread_fence(memory_order_acquire); /* the buffer and the Python range, set before */
    return 1;
}

/* CLOCK_REALTIME in nanoseconds (CUPTI's clock on Linux). */
long long sbw_now_ns(void);
/* Whether a condition-variable call came from the Python interpreter (the GIL rule, waits.c). */
int sbw_from_python(const void *caller);
/* A signal, broadcast or post on obj by this thread, now: kept in the signaller table. */
void sbw_note_signal(const void *obj);
/* A wait on obj that returned 0 after sleeping from start_ns to end_ns: a hand-off when the
 * table holds another thread's signal on obj within the wait. */
void sbw_note_wake(const void *obj, long long start_ns, long long end_ns, int kind);

#endif
