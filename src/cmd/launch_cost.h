/* The hidden subcommand `syncbench __launch-cost [N]`, run under the audit's library by its
 * calibration (cmd/audit_calibrate.c): in one process, with the library's recording switched off
 * and on in turns (syncbench_calibration_recording, audit/inject/api.h), the host time of a
 * kernel launch (a kernel that does nothing) and of a watched call that returns at once (a
 * cudaStreamSynchronize of an idle stream), medians of 11 repetitions of N each (1000 by
 * default). Prints "LAUNCH_OFF LAUNCH_ON CALL_OFF CALL_ON" in ns. One process, because the
 * speed of a VM's host moves between processes by more than recording adds. Not for users; not
 * in --help. */
#ifndef SB_CMD_LAUNCH_COST_H
#define SB_CMD_LAUNCH_COST_H

#define SB_LAUNCH_COST_CMD "__launch-cost"

int sb_cmd_launch_cost(int argc, char **argv);

#endif
