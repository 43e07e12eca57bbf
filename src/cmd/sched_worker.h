/* The hidden subcommand `syncbench __sched-worker DEVICE MODE CONTEXT`: the helper process the
 * sched scenario starts for each of its modes (scenarios/sched.c says why). Not for users; not
 * in --help. */
#ifndef SB_CMD_SCHED_WORKER_H
#define SB_CMD_SCHED_WORKER_H

#include "scenarios/sched.h"

int sb_cmd_sched_worker(int argc, char **argv);

#endif
