/* The injection library's in-process API (api.c), exported from libsyncbench_audit.so for
 * python/syncbench/_native.py (ctypes) and the audit's calibration (cmd/launch_cost.c, dlsym).
 * Counts are per class, indexed by sb_audit_class (audit.h), syncbench_classes() of them. */
#ifndef SBA_API_H
#define SBA_API_H

#include <stddef.h>

#define API __attribute__((visibility("default")))

/* syncbench_block_begin's errors */
#define SYNCBENCH_TOO_MANY (-1)     /* SBA_MAX_BLOCKS open, or no memory */
#define SYNCBENCH_NOT_ATTACHED (-2) /* syncbench_attach did not succeed */
#define SYNCBENCH_FORKED (-3)       /* a child forked from a CUDA process */

/* Starts recording the watched calls in this process (CUPTI subscribed at run time, or the
 * injection's subscription when syncbench audit started the process). 0, or -1 with the reason
 * (no driver, no device, another CUPTI subscriber, a forked child) in why. Idempotent. */
API int syncbench_attach(char *why, size_t n);
/* Opens a block of the calling thread, or of every thread (all_threads 1): its id (>= 0), or
 * one of the errors above. */
API int syncbench_block_begin(int all_threads);
/* The block's counts so far; 0, or -1 for an id that is not open here. */
API int syncbench_block_counts(int id, long long *counts);
/* Closes the block: its counts and, when text is not NULL, its blocking calls as a record
 * stream of one process (records.h; *text NULL when there were none; free with
 * syncbench_free). The number of blocking calls (explicit and implicit), or -1 for an id that
 * is not open here. */
API int syncbench_block_end(int id, long long *counts, char **text, size_t *len);
API void syncbench_free(void *p);
/* The classes: how many, each one's name (audit.h), whether it blocks (explicit or implicit). */
API int syncbench_classes(void);
API const char *syncbench_class_name(int cls);
API int syncbench_class_blocking(int cls);
/* The calibration: stops (0) or restarts (1) everything the injection records, so that the same
 * calls are timed recorded and not in one process. -1 when the library was not injected. */
API int syncbench_calibration_recording(int on);

#endif
