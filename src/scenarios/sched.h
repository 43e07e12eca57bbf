/* The sched scenario's worker side: what runs in the helper process that holds a CUDA context
 * created with one cudaDeviceSchedule* flag (see sched.c for the design). */
#ifndef SB_SCHED_H
#define SB_SCHED_H

#include <stdio.h>

/* The hidden subcommand that runs a worker: `syncbench __sched-worker DEVICE MODE CONTEXT`. */
#define SB_SCHED_WORKER_CMD "__sched-worker"

/* Opens `device` with the flag of the sched variant named `mode`, answers "ready" (or "error
 * MESSAGE") on `out`, then serves the requests read from `in` until end of file:
 *   "measure ITERS WORK_US" -> "ok STEP_US SYNC_US HOST_CPU_US SYNCS_PER_STEP"
 *   "validate"              -> "ok"
 * or "error MESSAGE" (one line, the message the parent reports as its own), after which it
 * stops. Every answer line starts with "@sb " (the parent skips other lines). Returns the
 * exit code; errors already sent are not left for main to print again. */
int sb_sched_serve(int device, const char *mode, FILE *in, FILE *out);

#endif
