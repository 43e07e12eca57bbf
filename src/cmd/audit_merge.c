/* `syncbench audit --merge A.json B.json ...`: the --json reports of one audit per machine (or
 * of several audits) -> their ranks read and checked (exit 2 with one line, nothing written) ->
 * lined up across every rank of every report -> the view (stdout, or stderr when an output is
 * stdout), the merged report (--json) and the lined-up instances (--csv). Runs nothing. */
#include "cmd/audit_merge.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze/ranks.h"
#include "base/error.h"
#include "sinks/outfile.h"

typedef struct {
    const char *opt, *path;
    sb_out_file out;
} output;

/* The outputs: writable, not the same file twice, not one of the reports. */
static int prepare(const sb_audit_request *req, output *outs, int *nout)
{
    const char *opts[] = {"json", "csv"}, *paths[] = {req->json, req->csv};
    *nout = 0;
    for (int i = 0; i < 2; i++) {
        if (!paths[i])
            continue;
        output *o = &outs[(*nout)++];
        o->opt = opts[i];
        o->path = paths[i];
        int rc = sb_out_prepare(&o->out, o->opt, o->path);
        if (!rc)
            rc = sb_out_check_inputs(&o->out, (const char *const *)req->reports);
        if (rc)
            return rc;
    }
    if (*nout == 2 && sb_out_same(&outs[0].out, &outs[1].out))
        return sb_fail(SB_EXIT_USAGE, "audit: --json %s and --csv %s write the same file",
                       outs[0].path, outs[1].path);
    return 0;
}

/* Every report once: the same file by two names is one report given twice. */
static int distinct(const sb_audit_request *req)
{
    struct stat *st = calloc((size_t)req->nreports, sizeof *st);
    if (!st)
        return sb_fail(SB_EXIT_FAIL, "out of memory");
    int rc = 0;
    for (int i = 0; !rc && i < req->nreports; i++) {
        if (stat(req->reports[i], &st[i]) != 0)
            continue; /* the reader names the problem */
        for (int k = 0; k < i && !rc; k++)
            if (st[k].st_ino && st[k].st_dev == st[i].st_dev && st[k].st_ino == st[i].st_ino)
                rc = sb_fail(SB_EXIT_USAGE, "audit: --merge: %s and %s are the same report",
                             req->reports[k], req->reports[i]);
    }
    free(st);
    return rc;
}

/* The reports' ranks: each file read and checked, then no rank twice and at least two. */
static int read_all(const sb_audit_request *req, sb_ranks *rk, sb_ranks_report *info)
{
    int rc = distinct(req);
    for (int i = 0; !rc && i < req->nreports; i++)
        rc = sb_ranks_read_report(rk, req->reports[i], &info[i]);
    if (rc)
        return rc;
    const sb_rank *two = sb_ranks_duplicate(rk);
    if (two) {
        const sb_rank *one = two - 1;
        if (one->report == two->report) /* interned: the same file */
            return sb_fail(SB_EXIT_USAGE, "audit: --merge: %s: rank %d twice", two->report,
                           two->rank);
        return sb_fail(SB_EXIT_USAGE,
                       "audit: --merge: rank %d is in %s (host %s, pid %lld) and in %s (host %s, "
                       "pid %lld): the reports of one job name each rank once",
                       two->rank, one->report, one->host[0] ? one->host : "?", (long long)one->pid,
                       two->report, two->host[0] ? two->host : "?", (long long)two->pid);
    }
    if (rk->n == 0)
        return sb_fail(SB_EXIT_USAGE,
                       "audit: --merge: no ranks in %s%s: no audited process had RANK set",
                       req->reports[0], req->nreports > 1 ? " nor the other reports" : "");
    if (rk->n == 1)
        return sb_fail(SB_EXIT_USAGE,
                       "audit: --merge: only rank %d (%s): the view across ranks needs two",
                       rk->r[0].rank, rk->r[0].report);
    return 0;
}

static void header(FILE *f, const sb_ranks *rk, const sb_ranks_report *info, int n)
{
    fprintf(f, "syncbench audit --merge: %d report%s, %zu ranks\n", n, n == 1 ? "" : "s", rk->n);
    for (int i = 0; i < n; i++) {
        fputs("  ", f);
        sb_fputs_escaped(f, info[i].path);
        fprintf(f, ": %zu rank%s", info[i].ranks, info[i].ranks == 1 ? "" : "s");
        if (info[i].host[0]) {
            fputs(", host ", f);
            sb_fputs_escaped(f, info[i].host);
        }
        if (info[i].command[0]) {
            fputs(", ", f);
            sb_fputs_escaped(f, info[i].command);
        }
        fputc('\n', f);
    }
}

int sb_cmd_audit_merge(const sb_audit_request *req)
{
    output outs[2];
    int nout = 0;
    int rc = prepare(req, outs, &nout);
    if (rc)
        return rc;
    sb_ranks rk;
    sb_ranks_init(&rk);
    sb_ranks_report *info = calloc((size_t)req->nreports, sizeof *info);
    if (!info)
        return sb_fail(SB_EXIT_FAIL, "out of memory");
    rc = read_all(req, &rk, info);
    if (!rc && sb_ranks_compute(&rk) < 0)
        rc = sb_fail(SB_EXIT_FAIL, "out of memory lining the ranks up");
    if (!rc && !req->quiet) {
        int to_stdout = 0; /* an output on stdout keeps it to itself: the view goes to stderr */
        for (int i = 0; i < nout; i++)
            to_stdout |= outs[i].out.to_stdout;
        FILE *f = to_stdout ? stderr : stdout;
        header(f, &rk, info, req->nreports);
        sb_ranks_write_table(f, &rk, (int)req->top, 1);
    }
    for (int i = 0; !rc && i < nout; i++) {
        if ((rc = sb_out_open(&outs[i].out, NULL)) != 0)
            break;
        FILE *f = outs[i].out.f;
        rc = !strcmp(outs[i].opt, "json")
                 ? sb_ranks_write_merged_json(f, &rk, info, (size_t)req->nreports)
                 : sb_ranks_write_csv(f, &rk);
        rc = rc ? rc : sb_out_commit(&outs[i].out);
        if (rc)
            sb_out_abort(&outs[i].out);
    }
    sb_ranks_free(&rk);
    free(info);
    return rc;
}
