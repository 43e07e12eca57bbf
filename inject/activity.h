/* CUPTI activity records (GPU-side timestamps): kernels, copies and memsets in every mode, so
 * the analyzer knows when the GPU was busy and whose copy touched pageable memory; every runtime
 * and driver API call in trace mode. Buffers are handed to CUPTI, filled on the GPU's time, and
 * turned into records here when CUPTI returns them (its own thread, or a flush). */
#ifndef SBA_ACTIVITY_H
#define SBA_ACTIVITY_H

#include <stdint.h>

/* kernels: 1 records every kernel too (a cost per launch); launches: 1 adds what the replay
 * needs (the launch calls, launches.h; event records and synchronizations); trace: 1 adds kernel
 * names and every API call. 0, or -1 with a "warn" record written. */
int sba_activity_start(int kernels, int launches, int trace);
/* Stops (1) or restarts (0) every kind of record sba_activity_start enabled: the calibration
 * times the same calls recorded and not, in one process (api.c). */
void sba_activity_pause(int paused);
/* Delivers every buffer CUPTI holds (completed records only unless forced). */
void sba_activity_flush(int forced);
/* Records CUPTI dropped (full buffers) so far. */
uint64_t sba_activity_dropped(void);

#endif
