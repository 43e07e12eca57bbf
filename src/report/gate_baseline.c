/* --baseline FILE: the gate against the run's sync baseline (analyze/baseline.h). It fails on a
 * site the baseline lacks (new, or changed: other text at the same file, function and
 * operation) and on one over its budget in some counted step; it says which sites moved (same
 * key, another line) and which are gone (a hint to tighten), and the number per step, base vs
 * now. The failing sites are offenders as --max-syncs's are, for the annotations and JUnit. */
#include "report/report.h"
#include "report/json_build.h"
#include "analyze/baseline.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/textutil.h"

/* "train.py:57" (the site's file and line now), or the native site. */
static void where(const sb_bl_item *it, char *buf, size_t n)
{
    if (it->line > 0)
        snprintf(buf, n, "%s:%d", it->file, it->line);
    else
        snprintf(buf, n, "%s", it->site && it->site[0] ? it->site : it->file);
}

static long budget_of(const sb_bl_item *it)
{
    return it->base && it->kind == SB_BL_KNOWN ? (long)it->base->budget : 0;
}

/* "3 -> 5 per step: +2 at train.py:57 (new), +1 at train.py:42 (2, budget 1)" */
static void verdict(FILE *f, const sb_bl_diff *d)
{
    const char *per = d->range ? "per step" : "per run";
    if (d->b->syncs_per_step >= 0)
        fprintf(f, "%.6g -> %.6g %s", d->b->syncs_per_step, d->syncs_per_step, per);
    else
        fprintf(f, "%.6g %s (none recorded in the baseline)", d->syncs_per_step, per);
    int k = 0;
    for (size_t i = 0; i < d->n; i++) {
        const sb_bl_item *it = &d->items[i];
        if (it->kind == SB_BL_KNOWN && !it->over)
            continue;
        if (it->kind == SB_BL_GONE)
            continue;
        char at[1024];
        where(it, at, sizeof at);
        fprintf(f, "%s+%ld at %s (", k++ ? ", " : ": ", it->now - budget_of(it), SB_AUDIT_ESC(at));
        if (it->over)
            fprintf(f, "%ld, budget %lld)", it->now, it->base->budget);
        else
            fprintf(f, "%s)", sb_bl_kind_name(it->kind));
    }
}

static void item_line(FILE *f, const sb_bl_diff *d, const sb_bl_item *it)
{
    const char *per = d->range ? "step" : "run";
    char at[1024];
    where(it, at, sizeof at);
    if (it->kind == SB_BL_GONE) {
        fprintf(f,
                "  gone     %s:%d in %s (budget %lld): no call now; tighten the baseline "
                "(--update-baseline)\n",
                SB_AUDIT_ESC(it->file), it->line, SB_AUDIT_ESC(it->function), it->base->budget);
        return;
    }
    const char *kind = it->over                  ? "over"
                       : it->kind == SB_BL_KNOWN ? "moved"
                                                 : sb_bl_kind_name(it->kind);
    fprintf(f, "  %-8s %ld/%s", kind, it->now, per);
    if (it->kind == SB_BL_KNOWN)
        fprintf(f, " (budget %lld)", it->base->budget);
    fprintf(f, "  %s  (%s)", SB_AUDIT_ESC(it->site), SB_AUDIT_ESC(it->operation));
    if (it->thread && it->thread[0])
        fprintf(f, " [thread %s]", SB_AUDIT_ESC(it->thread));
    if (it->moved)
        fprintf(f, " (was line %d)", it->base->line);
    fprintf(f, "\n");
    if (it->text[0])
        fprintf(f, "           | %s\n", SB_AUDIT_ESC(it->text));
    if (it->kind == SB_BL_CHANGED)
        fprintf(f, "           was: %s (line %d)\n", SB_AUDIT_ESC(it->base->text), it->base->line);
}

int sb_audit_gate_baseline(const sb_audit_analysis *an, const sb_audit_opts *o, FILE *msg)
{
    sb_bl_diff d;
    if (sb_baseline_diff(an, o, &d) < 0) {
        if (msg)
            fprintf(msg, "audit gate: FAILED: out of memory comparing with the baseline\n");
        return 1;
    }
    int failed = d.failed;
    if (!msg) {
        sb_baseline_diff_free(&d);
        return failed;
    }
    fprintf(msg, "audit gate: %s: baseline %s", failed ? "FAILED" : "passed",
            SB_AUDIT_ESC(d.b->path));
    if (d.range && !d.entered) {
        fprintf(msg,
                ": range '%s' was never entered (no NVTX range of that name in any process): "
                "nothing was checked\n",
                SB_AUDIT_ESC(d.range));
        sb_baseline_diff_free(&d);
        return failed;
    }
    fprintf(msg, ": ");
    verdict(msg, &d);
    fprintf(msg, "\n");
    if (d.range)
        fprintf(msg, "  %ld step%s of range '%s' counted (the first %ld of each process left out)",
                d.steps, d.steps == 1 ? "" : "s", SB_AUDIT_ESC(d.range), d.skip_first);
    else
        fprintf(msg, "  the whole run counted");
    if (d.b->blocked_us_per_step >= 0)
        fprintf(msg, "; blocked %.1f -> %.1f us per %s\n", d.b->blocked_us_per_step,
                d.blocked_us_per_step, d.range ? "step" : "run");
    else
        fprintf(msg, "; blocked %.1f us per %s\n", d.blocked_us_per_step, d.range ? "step" : "run");
    static const sb_bl_kind order[] = {SB_BL_NEW, SB_BL_CHANGED, SB_BL_KNOWN, SB_BL_GONE};
    for (size_t k = 0; k < 4; k++)
        for (size_t i = 0; i < d.n; i++) {
            const sb_bl_item *it = &d.items[i];
            if (it->kind == order[k] && (it->kind != SB_BL_KNOWN || it->over || it->moved))
                item_line(msg, &d, it);
        }
    sb_baseline_diff_free(&d);
    return failed;
}

int sb_audit_baseline_offenders(const sb_audit_analysis *an, const sb_audit_opts *o,
                                sb_audit_offender **sites, size_t *n)
{
    const sb_audit_run *run = an->run;
    *sites = NULL;
    *n = 0;
    if (!o->baseline)
        return 0;
    sb_bl_diff d;
    if (sb_baseline_diff(an, o, &d) < 0)
        return -1;
    /* the run's pool: the notes must live as long as the run's sites do */
    sb_strpool *strs = &((sb_audit_run *)run)->strs;
    sb_audit_offender *s = calloc(d.n + 1, sizeof *s);
    int rc = s ? 0 : -1;
    for (size_t i = 0; !rc && i < d.n; i++) {
        const sb_bl_item *it = &d.items[i];
        if (!it->first || !(it->kind != SB_BL_KNOWN || it->over))
            continue;
        char why[1536];
        if (it->over)
            snprintf(why, sizeof why, "baseline: over its budget: %ld per %s, budget %lld (%s)",
                     it->now, d.range ? "step" : "run", it->base->budget, d.b->path);
        else if (it->kind == SB_BL_CHANGED)
            snprintf(why, sizeof why, "baseline: changed: the baseline's line here was: %s (%s)",
                     it->base->text, d.b->path);
        else
            snprintf(why, sizeof why, "baseline: new site, not in %s (%ld per %s)", d.b->path,
                     it->now, d.range ? "step" : "run");
        const char *note = sb_audit_intern(strs, why);
        if (!note) {
            rc = -1;
            break;
        }
        const sb_audit_call_info *ci = it->first;
        s[(*n)++] = (sb_audit_offender){ci->site, ci->made->via_site, ci->cls,  it->now,
                                        ci->rule, ci->pyframe,        ci->made, note};
    }
    sb_baseline_diff_free(&d);
    if (rc) {
        free(s);
        *n = 0;
        return -1;
    }
    *sites = s;
    return 0;
}

static json_t *item_json(int *oom, const sb_bl_diff *d, const sb_bl_item *it)
{
    json_t *j = json_object();
    sb_json_set(oom, j, "kind", sb_json_str(it->over ? "over_budget" : sb_bl_kind_name(it->kind)));
    const char *keys[] = {"file", "function", "text", "operation", "library_line", "thread"};
    const char *vals[] = {it->file,      it->function,     it->text,
                          it->operation, it->library_line, it->thread};
    for (size_t k = 0; k < 6; k++)
        sb_json_set(oom, j, keys[k], sb_json_str(vals[k]));
    sb_json_set(oom, j, "site", sb_json_str(it->site));
    sb_json_set(oom, j, "line", json_integer(it->line));
    sb_json_set(oom, j, d->range ? "now_per_step" : "now_per_run", json_integer(it->now));
    sb_json_set(oom, j, "calls", json_integer(it->calls));
    sb_json_set(oom, j, "blocked_us", sb_json_num(it->blocked_us));
    sb_json_set(oom, j, "budget",
                it->base && it->kind != SB_BL_CHANGED ? json_integer(it->base->budget)
                                                      : json_null());
    sb_json_set(oom, j, "base_line", it->base ? json_integer(it->base->line) : json_null());
    if (it->kind == SB_BL_CHANGED)
        sb_json_set(oom, j, "base_text", sb_json_str(it->base->text));
    sb_json_set(oom, j, "note", sb_json_str(it->base ? it->base->note : ""));
    return j;
}

static json_t *per_step(int *oom, double base, double now)
{
    json_t *j = json_object();
    sb_json_set(oom, j, "base", base >= 0 ? sb_json_num(base) : json_null());
    sb_json_set(oom, j, "now", sb_json_num(now));
    return j;
}

json_t *sb_audit_baseline_json(const sb_audit_analysis *an, const sb_audit_opts *o, int *oom)
{
    sb_bl_diff d;
    if (!o || !o->baseline)
        return json_null();
    if (sb_baseline_diff(an, o, &d) < 0) {
        *oom = 1;
        return NULL;
    }
    json_t *j = json_object();
    sb_json_set(oom, j, "file", sb_json_str(d.b->path));
    sb_json_set(oom, j, "per", sb_json_str(d.range ? "step" : "run"));
    sb_json_set(oom, j, "range", d.range ? sb_json_str(d.range) : json_null());
    sb_json_set(oom, j, "skip_first", json_integer(d.skip_first));
    sb_json_set(oom, j, "steps", json_integer(d.steps));
    sb_json_set(oom, j, "passed", json_boolean(!d.failed));
    sb_json_set(oom, j, "syncs_per_step", per_step(oom, d.b->syncs_per_step, d.syncs_per_step));
    sb_json_set(oom, j, "blocked_us_per_step",
                per_step(oom, d.b->blocked_us_per_step, d.blocked_us_per_step));
    sb_memtext m;
    if (sb_memtext_open(&m)) {
        verdict(m.f, &d);
        char *v = sb_memtext_close(&m);
        sb_json_set(oom, j, "verdict", v ? sb_json_str(v) : NULL);
        free(v);
    }
    static const char *const lists[] = {"new", "over_budget", "changed", "moved", "gone"};
    for (size_t l = 0; l < 5; l++) {
        json_t *a = json_array();
        for (size_t i = 0; i < d.n; i++) {
            const sb_bl_item *it = &d.items[i];
            int in = l == 0   ? it->kind == SB_BL_NEW
                     : l == 1 ? it->over
                     : l == 2 ? it->kind == SB_BL_CHANGED
                     : l == 3 ? it->moved
                              : it->kind == SB_BL_GONE;
            if (in)
                sb_json_append(oom, a, item_json(oom, &d, it));
        }
        sb_json_set(oom, j, lists[l], a);
    }
    sb_baseline_diff_free(&d);
    return j;
}
