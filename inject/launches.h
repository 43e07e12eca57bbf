/* What the replay (src/replay/replay.c) needs beside the GPU's own records: when and on which
 * thread each kernel, copy and memset was launched, and the events that order streams. Asked
 * of CUPTI's activity API for these functions only (cuptiActivityEnableRuntimeApi /
 * DriverApi per callback id): buffered records written on CUPTI's thread, no callback into this
 * library per launch, so it costs less than --trace's record of every API call. */
#ifndef SBA_LAUNCHES_H
#define SBA_LAUNCHES_H

/* 1 when the runtime or driver function `name` (a CUPTI callback name) puts work on a stream
 * or orders streams: kernel and graph launches, async copies and memsets, event records and
 * stream waits. */
int sba_launch_api(const char *name);
/* Enables (on 1) or disables the API activity records of every such function of the runtime
 * (rt 1) and of the driver (drv 1); returns how many. */
int sba_launches_enable(int on, int rt, int drv);

#endif
