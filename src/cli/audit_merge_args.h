/* The command line of `syncbench audit --merge` (cli/audit_merge_args.c). */
#ifndef SB_AUDIT_MERGE_ARGS_H
#define SB_AUDIT_MERGE_ARGS_H

#include "base/optdef.h"
#include "cli/audit_args.h"

/* After audit's first pass found --merge before argv[first], the first operand: the options
 * after the reports are moved before them (argv permuted in place, as getopt does) and the line
 * parsed again into req, whose reports are then the operands. Options that record or gate do
 * not apply. 0, or exit 2 with one line. */
int sb_audit_merge_args(int argc, char **argv, int first, sb_audit_request *req);

#endif
