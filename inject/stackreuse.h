/* The native stack of a blocking call whose Python stack was seen before with the same API:
 * taken again only until it has come out alike a few times, then reused and checked now and
 * then. A native stack walk (backtrace(3), DWARF unwinding) costs about 1 µs a frame inside the
 * call, more than the rest of the record together; below the Python line that made the call
 * the native path is nearly always the same. */
#ifndef SBA_STACKREUSE_H
#define SBA_STACKREUSE_H

/* Reads SYNCBENCH_STACK_REUSE (0: take every stack) and forgets every stack seen. Call before
 * any lookup, and again whenever the stacks' records start to be kept elsewhere (a reused id
 * skips what a walk does to them). */
void sba_stackreuse_init(void);
/* The native stack id to record for a call of API (any nonzero key: the callback's domain and
 * id) under Python stack py, without walking; or -2: walk it and tell sba_stackreuse_seen what
 * came out. py < 0 (no Python stack) always walks. */
long sba_stackreuse_lookup(long py, unsigned api);
/* The native stack id a walk of API under py gave (-1: none). */
void sba_stackreuse_seen(long py, unsigned api, long id);

#endif
