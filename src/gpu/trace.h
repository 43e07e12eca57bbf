/* What a profiler sees: NVTX ranges in the "syncbench" domain (one per measurement, named
 * "scenario/variant params", with nested "warmup" and "measure" ranges; sync and async
 * variants in different colours) and cudaProfilerStart/Stop around each measured part, so that
 * `nsys profile --capture-range=cudaProfilerApi` records only that. */
#ifndef SB_TRACE_H
#define SB_TRACE_H

#include <stdint.h>

#define SB_COLOR_ASYNC 0xFF76B900u /* green */
#define SB_COLOR_SYNC 0xFFD62728u  /* red */
#define SB_COLOR_WARMUP 0xFF9E9E9Eu
#define SB_COLOR_MEASURE 0xFF1F77B4u

void sb_trace_push(const char *name, uint32_t argb);
void sb_trace_pop(void);
/* cudaProfilerStart / cudaProfilerStop; 0 or the recorded error. */
int sb_trace_capture_start(void);
int sb_trace_capture_stop(void);

#endif
