/* The hand-offs between the program's threads ("wake" records, src/record/records.h), recorded
 * by libsyncbench_waits.so (waits/) when the launcher preloaded it: this library only starts it
 * and writes what it drains. */
#ifndef SBA_HANDOFFS_H
#define SBA_HANDOFFS_H

/* Starts the waits library when it is preloaded (looked up with dlsym) and has the flusher thread
 * write its hand-offs each quarter second: 0, or -1 when it is not there or would not start.
 * probe, when not NULL, runs on each woken waiter's thread; its answer (the thread's Python
 * stack id, -1 none) is the wake record's "py". */
int sba_handoffs_start(long (*probe)(void));
/* The last hand-offs, written before the end record; none after it. Not from a signal handler
 * (it takes locks). */
void sba_handoffs_finish(void);
/* Hand-offs lost to the waits library's full buffer (the end record's wakes_lost); an atomic
 * load, safe in a signal handler. */
unsigned long long sba_handoffs_lost(void);

#endif
