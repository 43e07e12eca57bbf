/* A predicted saving in words (save_text.h). */
#include "report/save_text.h"

#include <stdio.h>

const char *sb_audit_unmodelled_why(sb_audit_run_save s)
{
    if (s.threads_unmodelled)
        return "threads not modelled";
    if (s.ranks_unmodelled)
        return "ranks not modelled";
    /* played, but none of its calls inside the window of GPU activity: no figure, when no other
     * process has one */
    return s.outside_window && !s.played ? "no call inside the GPU window" : NULL;
}

const char *sb_audit_save_text(sb_audit_run_save s, char *buf, size_t n)
{
    if (!s.played && !sb_audit_unmodelled_why(s))
        snprintf(buf, n, "%s", "");
    else if (sb_audit_unmodelled_why(s))
        snprintf(buf, n, "%s", SB_AUDIT_UNMODELLED);
    else
        snprintf(buf, n, "%.3f", s.us / 1e3);
    return buf;
}

const char *sb_audit_ranks_model(const sb_audit_saving *s, char *buf, size_t n)
{
    if (s->ranks_played)
        snprintf(buf, n, "ranks played together: %d ranks, %ld collective%s matched",
                 s->ranks_played, s->collectives, s->collectives == 1 ? "" : "s");
    else if (s->ranks_unmodelled)
        snprintf(buf, n, "ranks not modelled: %s",
                 s->ranks_why ? s->ranks_why : "the ranks were not played together");
    else
        return NULL;
    return buf;
}

const char *sb_audit_bound_name(const sb_replay_result *r)
{
    return sb_audit_host_bound(r) ? "host" : "gpu";
}
