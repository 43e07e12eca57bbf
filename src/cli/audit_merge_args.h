/* The command line of `syncbench audit --merge` (cli/audit_merge_args.c). */
#ifndef SB_AUDIT_MERGE_ARGS_H
#define SB_AUDIT_MERGE_ARGS_H

#include "base/optdef.h"
#include "cli/audit_args.h"

/* After audit's first pass found --merge: the line parsed again into req, options anywhere
 * (argv permuted in place, as getopt does), the operands its reports. Options that record or
 * gate do not apply. 0, or exit 2 with one line. */
int sb_audit_merge_args(int argc, char **argv, sb_audit_request *req);

#endif
