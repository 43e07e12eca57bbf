#include "cmd/sched_worker.h"

#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>

#include "base/error.h"
#include "base/textutil.h"

int sb_cmd_sched_worker(int argc, char **argv)
{
    long long device;
    if (argc != 4 || sb_parse_ll(argv[1], &device) != SB_PARSE_OK || device < 0 || device > 1023)
        return sb_fail(SB_EXIT_USAGE,
                       "%s: the sched scenario's helper process, not for direct use (arguments: "
                       "DEVICE MODE CONTEXT)",
                       SB_SCHED_WORKER_CMD);
    /* the parent reads our answers: if it dies, so do we, also in the middle of a repetition */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* error messages name the measurement as the parent does */
    sb_error_set_context(argv[3]);
    return sb_sched_serve((int)device, argv[2], stdin, stdout);
}
