/* The hidden subcommand `syncbench __launch-cost [N]`: the host time of one kernel launch in
 * ns (the median of 11 repetitions of N launches, 1000 by default, of a kernel that does
 * nothing). The audit runs it plain and under its own library, in turns (cmd/audit_calibrate.c):
 * the difference is what recording adds to each launch, which the replay takes out. Not for
 * users; not in --help. */
#ifndef SB_CMD_LAUNCH_COST_H
#define SB_CMD_LAUNCH_COST_H

#define SB_LAUNCH_COST_CMD "__launch-cost"

int sb_cmd_launch_cost(int argc, char **argv);

#endif
