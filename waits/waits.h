/* libsyncbench_waits.so: the hand-offs between the threads of an audited process. The launcher
 * preloads it (LD_PRELOAD); it interposes the condition-variable and semaphore calls (hooks.c)
 * and libc's syscall() for its futex operations (futex.c: Abseil's and XLA's waits) and stays
 * inert until the injection library (inject/handoffs.c), which looks this API up with dlsym,
 * calls sbw_start. From then on, each wait that slept and was ended by another thread's signal,
 * broadcast, post or futex wake is one hand-off: who slept, from when to when, and whose signal
 * woke it, at what time ("wake" in src/record/records.h), and what the waiter's probe said on
 * its own thread (its Python stack).
 *
 * This header is the whole of its API; it includes nothing of the project. */
#ifndef SBW_WAITS_H
#define SBW_WAITS_H

#include <stddef.h>

/* What ended a wait. */
enum { SBW_COND = 1, SBW_SEM = 2, SBW_FUTEX = 3 };

/* One hand-off. Times are CLOCK_REALTIME in nanoseconds (CUPTI's own clock on Linux), thread ids
 * gettid's. start_ns <= signal_ns <= end_ns. */
typedef struct {
    long long start_ns;  /* the waiter entered the wait */
    long long end_ns;    /* the wait returned */
    long long signal_ns; /* the signal, broadcast or post that ended it */
    int waiter_tid;      /* the thread that slept */
    int signaller_tid;   /* the thread whose signal, broadcast or post ended the sleep */
    int kind;            /* SBW_COND (pthread_cond_*), SBW_SEM (sem_*), SBW_FUTEX (syscall()) */
    long waiter_py;      /* the waiter's probe (sbw_set_waiter_probe) on its own thread after
                            the wait; -1 without one */
} sbw_handoff;

/* Starts recording (idempotent): 0, or -1 when it cannot (no memory for the buffer, or a child
 * forked from a process that recorded: it records nothing). */
int sbw_start(void);
/* Takes up to max recorded hand-offs, oldest first, into out, removing them; how many. Safe
 * against the threads that append meanwhile (an entry is taken only once fully written); one
 * drainer at a time (a lock). Not async-signal-safe. */
size_t sbw_drain(sbw_handoff *out, size_t max);
/* Hand-offs lost to a full buffer so far. */
unsigned long long sbw_lost(void);
/* The probe each hand-off calls on the waiter's thread, once it is woken and the hand-off found,
 * for its waiter_py (the injection library's: the thread's Python stack id, -1 without Python);
 * NULL: none (-1). Called from inside the interposed wait, never twice nested on one thread
 * (a hand-off inside the probe gets -1), with errno kept. */
void sbw_set_waiter_probe(long (*probe)(void));

#endif
