/* `syncbench audit --merge A.json B.json ...`: the reports are the operands and options may
 * follow them (`--merge a.json b.json --json all.json`), where audit's own options stop at CMD. */
#include "cli/audit_merge_args.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "cli/args.h"

/* Whether the option `arg` ("--name", "--name=V", "-q") takes the next argument as its value:
 * the table's answer for an exact name or a unique abbreviation, as getopt_long's. */
static int takes_value(const sb_optdef *defs, const char *arg)
{
    if (arg[1] != '-') { /* a cluster of short options: a value follows the last one's */
        const sb_optdef *last = NULL;
        for (const char *c = arg + 1; *c; c++)
            for (const sb_optdef *d = defs; d->name; d++)
                if (d->short_name == *c)
                    last = d;
        return last && last->type != SB_OPT_FLAG && !arg[2];
    }
    if (strchr(arg, '='))
        return 0;
    const sb_optdef *hit = NULL;
    int hits = 0;
    for (const sb_optdef *d = defs; d->name; d++) {
        if (!strcmp(d->name, arg + 2))
            return d->type != SB_OPT_FLAG;
        if (!strncmp(d->name, arg + 2, strlen(arg + 2)))
            hit = d, hits++;
    }
    return hits == 1 && hit->type != SB_OPT_FLAG;
}

/* --merge: the operands are reports, and options may follow them. The options after the first
 * report are moved before the reports (argv is permuted in place, as getopt does) and the line
 * is parsed again; options that record or gate do not apply. */
int sb_audit_merge_args(int argc, char **argv, int first, sb_audit_request *req)
{
    const sb_optdef *defs = sb_audit_optdefs();
    if (first < argc && strcmp(argv[first - 1], "--")) {
        int n = argc - first, nopt = 0, k, dashes = -1;
        char **tail = malloc((size_t)n * sizeof *tail);
        if (!tail)
            return sb_fail(SB_EXIT_FAIL, "out of memory");
        for (int i = first; i < argc; i++) { /* the options and their values, up to "--" */
            if (!strcmp(argv[i], "--")) {
                dashes = i;
                break;
            }
            if (argv[i][0] == '-' && argv[i][1]) {
                tail[nopt++] = argv[i];
                if (takes_value(defs, argv[i]) && i + 1 == argc) { /* getopt would take a report */
                    free(tail);
                    return sb_fail(SB_EXIT_USAGE, "audit: option '%s' needs a value", argv[i]);
                }
                if (takes_value(defs, argv[i]))
                    tail[nopt++] = argv[++i];
            }
        }
        if (dashes >= 0)
            tail[nopt++] = argv[dashes];
        k = nopt;
        for (int i = first; i < argc; i++) { /* then the reports: the rest, all after "--" */
            if (dashes >= 0 && i >= dashes) {
                if (i > dashes)
                    tail[k++] = argv[i];
            } else if (argv[i][0] == '-' && argv[i][1]) {
                if (takes_value(defs, argv[i]))
                    i++;
            } else {
                tail[k++] = argv[i];
            }
        }
        memcpy(argv + first, tail, (size_t)n * sizeof *tail);
        free(tail);
    }
    memset(req, 0, sizeof *req);
    sb_optdefs_defaults(defs, req);
    req->max_syncs = -1;
    unsigned long long given = 0;
    sb_argtable t = {defs, req, &given};
    int rc = sb_args_parse_in_order("audit: ", &t, 1, argc, argv, &first);
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
