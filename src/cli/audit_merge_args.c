/* `syncbench audit --merge A.json B.json ...`: the reports are the operands and options may
 * follow them (`--merge a.json b.json --json all.json`), where audit's own options stop at CMD. */
#include "cli/audit_merge_args.h"

#include <string.h>

#include "base/error.h"
#include "cli/args.h"

/* --merge: the operands are reports, and options may follow them (getopt permutes argv: the
 * options first); options that record or gate do not apply. */
int sb_audit_merge_args(int argc, char **argv, sb_audit_request *req)
{
    const sb_optdef *defs = sb_audit_optdefs();
    memset(req, 0, sizeof *req);
    sb_optdefs_defaults(defs, req);
    req->max_syncs = -1;
    unsigned long long given = 0;
    sb_argtable t = {defs, req, &given};
    int first;
    int rc = sb_args_parse("audit: ", &t, 1, argc, argv, &first);
    if (rc)
        return rc;
    for (int i = 0; defs[i].name; i++)
        if (given >> i & 1 && strcmp(defs[i].name, "merge") && strcmp(defs[i].name, "json") &&
            strcmp(defs[i].name, "csv") && strcmp(defs[i].name, "top") &&
            strcmp(defs[i].name, "quiet"))
            return sb_fail(SB_EXIT_USAGE,
                           "audit: --merge: --%s does not apply (the merge runs nothing; it reads "
                           "the reports' ranks)",
                           defs[i].name);
    if ((req->json && !strcmp(req->json, "--")) || (req->csv && !strcmp(req->csv, "--")))
        return sb_fail(SB_EXIT_USAGE, "audit: --%s needs a value before \"--\"",
                       req->json && !strcmp(req->json, "--") ? "json" : "csv");
    if (first >= argc)
        return sb_fail(SB_EXIT_USAGE, "audit: --merge: no report (usage: syncbench audit --merge "
                                      "A.json B.json ... [--json OUT] [--csv OUT])");
    req->reports = argv + first;
    req->nreports = argc - first;
    return 0;
}
