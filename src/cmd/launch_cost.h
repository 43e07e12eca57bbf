/* The hidden subcommand `syncbench __launch-cost [N]`, run under the audit's library by its
 * calibration (cmd/audit_calibrate.c): in one process, with the library's recording switched off
 * and on in turns (syncbench_calibration_recording, inject/api.h), the host time of
 *   - a kernel launch (a kernel that does nothing),
 *   - a watched call that returns at once (a cudaStreamSynchronize of an idle stream),
 *   - a round trip (that launch, then a sync that waits for it),
 *   - an allocation (cudaMalloc of 1 MiB, then its cudaFree),
 *   - a readback's round trip (the launch, a 4-byte cudaMemcpyAsync into pinned memory, the sync),
 * 21 repetitions of N each (1000 by default; N / 10 allocations), off and on back to back.
 * Prints "LAUNCH_OFF LAUNCH_ON CALL_OFF CALL_ON TRIP_OFF TRIP_ON ALLOC_OFF ALLOC_ON COPY_OFF
 * COPY_ON" in ns: the median off, and that plus the median of the repetitions' differences
 * (on less off). One process, and pairs, because the speed of a VM's host moves between
 * processes, and within one, by more than recording adds. Not for users; not in --help. */
#ifndef SB_CMD_LAUNCH_COST_H
#define SB_CMD_LAUNCH_COST_H

#define SB_LAUNCH_COST_CMD "__launch-cost"

int sb_cmd_launch_cost(int argc, char **argv);

#endif
