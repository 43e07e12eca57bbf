/* --update-baseline: the run's sites as a baseline file (docs/baseline.md), each with the most
 * calls of one counted step (or the run's calls) as its budget; the old file's notes, threads
 * and per-site skip_first kept for the sites of the same key. */
#include "analyze/baseline.h"

#include <stdio.h>
#include <string.h>

static void value(FILE *f, const char *key, const char *v)
{
    char buf[SB_BL_VALUE_MAX + 8];
    sb_bl_norm(v ? v : "", buf, sizeof buf);
    fprintf(f, "%s =%s%s\n", key, buf[0] ? " " : "", buf); /* no blank at the end of a line */
}

static void site(FILE *f, size_t n, const sb_bl_item *it)
{
    fprintf(f, "\n[site.%zu]\n", n);
    value(f, "file", it->file);
    value(f, "function", it->function);
    value(f, "text", it->text);
    value(f, "operation", it->operation);
    value(f, "library_line", it->library_line);
    fprintf(f, "line = %d\n", it->line);
    fprintf(f, "budget = %ld\n", it->now);
    if (it->base && it->base->skip_first >= 0)
        fprintf(f, "skip_first = %ld\n", it->base->skip_first);
    if (it->thread && it->thread[0])
        value(f, "thread", it->thread);
    if (it->base && it->base->note[0])
        value(f, "note", it->base->note);
}

int sb_baseline_write(FILE *f, const sb_audit_analysis *an, const sb_audit_opts *o,
                      const sb_baseline *old)
{
    sb_bl_diff d;
    if (sb_baseline_diff_of(an, o, old, &d) < 0)
        return -1;
    char range[SB_BL_VALUE_MAX + 8] = "";
    if (d.range)
        sb_bl_norm(d.range, range, sizeof range);
    fprintf(f, "# syncbench sync baseline: written by syncbench audit --update-baseline FILE; "
               "edit by hand\n");
    fprintf(f, "[syncbench]\nversion = %d\n", SB_BASELINE_VERSION);
    if (d.range)
        fprintf(f, "per = step\nrange = %s\nskip_first = %ld\n", range, d.skip_first);
    else
        fprintf(f, "per = run\n");
    fprintf(f, "syncs_per_step = %.6g\nblocked_us_per_step = %.1f\n", d.syncs_per_step,
            d.blocked_us_per_step);
    size_t n = 0;
    for (size_t i = 0; i < d.n; i++)
        if (d.items[i].kind != SB_BL_GONE)
            site(f, ++n, &d.items[i]);
    sb_baseline_diff_free(&d);
    return ferror(f) ? -1 : 0;
}
