/* syncbench: one table of subcommands; `syncbench [options]` is `syncbench run [options]`.
 * Maps failures to exit codes and prints the one error line. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "cmd/audit.h"
#include "cmd/compare_cmd.h"
#include "cmd/launch_cost.h"
#include "cmd/list.h"
#include "cmd/man.h"
#include "cmd/record_schema.h"
#include "cmd/run.h"
#include "cmd/sched_worker.h"

static const struct {
    const char *name;
    int (*main)(int argc, char **argv); /* argv[0] is the subcommand's name */
} commands[] = {
    {"run", sb_cmd_run},
    {"compare", sb_cmd_compare},
    {"list", sb_cmd_list},
    {"audit", sb_cmd_audit},
    {SB_SCHED_WORKER_CMD, sb_cmd_sched_worker},   /* hidden: the sched scenario's helper */
    {SB_LAUNCH_COST_CMD, sb_cmd_launch_cost},     /* hidden: the audit's calibration */
    {SB_MAN_CMD, sb_cmd_man},                     /* hidden: the man page, syncbench.1 */
    {SB_RECORD_SCHEMA_CMD, sb_cmd_record_schema}, /* hidden: the record table, checks */
};

static int finish(int rc)
{
    /* what was printed must have reached stdout: a full disk or closed pipe is a failure */
    if (fflush(stdout) != 0 || ferror(stdout))
        rc = rc ? rc : sb_fail(SB_EXIT_FAIL, "cannot write to standard output");
    if (rc && sb_error_code())
        fprintf(stderr, "syncbench: %s\n", sb_error_message());
    return rc;
}

int main(int argc, char **argv)
{
    /* a closed pipe (`syncbench compare ... | head -c1`) is a write error, reported in one line
     * with exit 1 (finish), not a silent death by SIGPIPE; the audit ignores it itself, once it
     * has noted the disposition the command it runs must get back (cmd/audit_launch.c) */
    if (argc < 2 || strcmp(argv[1], "audit"))
        signal(SIGPIPE, SIG_IGN);
    if (argc > 1)
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
            if (!strcmp(argv[1], commands[i].name))
                return finish(commands[i].main(argc - 1, argv + 1));
    return finish(sb_cmd_run(argc, argv));
}
