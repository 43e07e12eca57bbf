/* `syncbench audit --merge A.json B.json ... [--json OUT] [--csv OUT]` (cmd/audit_merge.c). */
#ifndef SB_CMD_AUDIT_MERGE_H
#define SB_CMD_AUDIT_MERGE_H

#include "cli/audit_args.h"

int sb_cmd_audit_merge(const sb_audit_request *req);

#endif
