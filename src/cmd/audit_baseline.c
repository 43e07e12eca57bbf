/* --baseline FILE and --update-baseline FILE: read before the command starts (a bad file is one
 * line and exit 2, CMD never started), the update written after the report. */
#include "cmd/audit_baseline.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"

/* Are a and b one file (both there)? */
static int same_file(const char *a, const char *b)
{
    struct stat x, y;
    return a && b && stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev &&
           x.st_ino == y.st_ino;
}

int sb_audit_bl_load(const sb_audit_request *req, sb_audit_bl *bl)
{
    char err[1536];
    const char *up = req->update_baseline;
    if (up && (same_file(up, req->baseline) || (req->baseline && !strcmp(up, req->baseline))))
        return sb_fail(SB_EXIT_USAGE,
                       "audit: --update-baseline %s: the same file as --baseline %s, an input of "
                       "the run (to update it in place, give --update-baseline alone)",
                       up, req->baseline);
    if (up && (same_file(up, req->rules) || (req->rules && !strcmp(up, req->rules))))
        return sb_fail(SB_EXIT_USAGE, "audit: --update-baseline %s: the same file as --rules %s",
                       up, req->rules);
    if (req->baseline && sb_baseline_load(req->baseline, &bl->gate, err, sizeof err) != 0)
        return sb_fail(SB_EXIT_USAGE, "audit: --baseline: %s", err);
    struct stat st;
    if (up && strcmp(up, "-") && stat(up, &st) == 0 && S_ISREG(st.st_mode) &&
        sb_baseline_load(up, &bl->old, err, sizeof err) != 0)
        return sb_fail(SB_EXIT_USAGE,
                       "audit: --update-baseline: %s (fix or remove the file: its notes are kept)",
                       err);
    return 0;
}

int sb_audit_bl_write(const sb_audit_request *req, sb_audit_bl *bl, const sb_audit_analysis *an,
                      const sb_audit_opts *o)
{
    if (!req->update_baseline)
        return 0;
    /* a new FILE beside --baseline's (a proposed update, for review) takes that file's way of
     * counting, notes and threads, as an update in place would */
    const sb_baseline *old = bl->old ? bl->old : bl->gate;
    sb_bl_diff d;
    if (sb_baseline_diff_of(an, o, old, &d) < 0)
        return sb_fail(SB_EXIT_FAIL, "audit: out of memory writing the baseline");
    int never = d.range && !d.entered;
    long n = 0;
    for (size_t i = 0; i < d.n; i++)
        n += d.items[i].kind != SB_BL_GONE;
    double per = d.syncs_per_step;
    char range[600];
    snprintf(range, sizeof range, "%s", d.range ? d.range : "");
    sb_baseline_diff_free(&d);
    if (never)
        return sb_fail(SB_EXIT_FAIL,
                       "audit: --update-baseline %s: range '%s' was never entered: nothing written",
                       req->update_baseline, range);
    int rc = sb_out_open(&bl->out, NULL);
    if (rc)
        return rc;
    if (sb_baseline_write(bl->out.f, an, o, old) != 0) {
        sb_out_abort(&bl->out);
        return sb_fail(SB_EXIT_FAIL, "audit: --update-baseline %s: %s", req->update_baseline,
                       errno ? strerror(errno) : "out of memory");
    }
    if ((rc = sb_out_commit(&bl->out)) != 0)
        return rc;
    fprintf(stderr,
            "syncbench: audit: baseline written to %s: %ld site%s, %.6g blocking call%s per %s\n",
            req->update_baseline, n, n == 1 ? "" : "s", per, per == 1 ? "" : "s",
            range[0] ? "step" : "run");
    return 0;
}
