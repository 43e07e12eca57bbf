/* What removing syncs would save, per process: the replay (replay.h) played once with every
 * blocking call removed, then once per site (the Python line or native frame), per class, per
 * innermost NVTX range and per library line (the calls a user's line made through one line inside
 * a library: the call's made->via_site), each removed alone (all, sites and lines twice: with the
 * readbacks the syncs serve, and with them kept). Sites interact: removing one can make a later
 * sync wait longer (the GPU work it no longer waits for is still there), which its own figure
 * counts; the figure for every sync is its own play, not a sum. The most costly sites, ranges and
 * library lines (by host time blocked; as many as --top) are played, every class is. Calls made
 * while torch.compile compiled are never removed. */
#include "analyze/analyze.h"
#include "base/arrays.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "replay/replay.h"

/* The syncs a play removes: blocking calls of the run time. What torch.compile made
 * (compile_group.c) happens once, while it compiles; removing it predicts nothing of a step. */
static int removable(const sb_audit_call_info *ci)
{
    return sb_audit_blocking(ci->cls) && !sb_audit_compile_time(ci);
}

/* The line inside a library that made the call ("" when the user's line made it itself). */
static const char *via_of(const sb_audit_call_info *ci)
{
    return ci->made && ci->made->via_site ? ci->made->via_site : "";
}

typedef struct {
    const char *key, *via; /* via: the library line of a (site, via) pair; NULL otherwise */
    long calls;
    double blocked_us;
} group;

static int cmp_group(const void *a, const void *b)
{
    const group *x = a, *y = b;
    if (x->blocked_us != y->blocked_us)
        return x->blocked_us > y->blocked_us ? -1 : 1;
    int r = strcmp(x->key, y->key);
    return r || !x->via ? r : strcmp(x->via, y->via);
}

static int cmp_ptr(const void *a, const void *b)
{
    const group *x = a, *y = b;
    if (x->key != y->key)
        return (uintptr_t)x->key < (uintptr_t)y->key ? -1 : 1;
    return (uintptr_t)x->via < (uintptr_t)y->via ? -1 : (uintptr_t)x->via > (uintptr_t)y->via;
}

/* What the groups are keyed by. */
typedef enum { BY_SITE, BY_RANGE, BY_LINE } group_by;

/* The blocking calls grouped by an interned text (site or range; keys are pointers, equal text
 * is one pointer), or by a (site, library line) pair, most blocked first. By range: calls outside
 * any left out; by line: calls the user's line made itself left out. */
static group *groups_of(const sb_audit_proc_result *res, group_by by, size_t *n)
{
    const sb_audit_proc *p = res->proc;
    group *g = malloc((p->ncalls + 1) * sizeof *g);
    if (!g)
        return NULL;
    size_t m = 0;
    for (size_t i = 0; i < p->ncalls; i++) {
        const sb_audit_call *c = &p->calls[i];
        const sb_audit_call_info *ci = &res->calls[i];
        const char *key = by == BY_RANGE ? ci->range : ci->site;
        const char *via = by == BY_LINE ? via_of(ci) : NULL;
        if (!removable(ci) || !key || (by == BY_RANGE && !key[0]) || (via && !via[0]))
            continue;
        g[m++] = (group){key, via, 1, (double)(c->end - c->start) / 1e3};
    }
    sb_sort(g, m, sizeof *g, cmp_ptr);
    size_t k = 0;
    for (size_t i = 0; i < m; i++) {
        if (k && g[k - 1].key == g[i].key && g[k - 1].via == g[i].via) {
            g[k - 1].calls++;
            g[k - 1].blocked_us += g[i].blocked_us;
        } else
            g[k++] = g[i];
    }
    sb_sort(g, k, sizeof *g, cmp_group);
    *n = k;
    return g;
}

/* The same play with the producers' hand-offs holding their waiters where they were recorded
 * (replay.h); it becomes the figure when they held the syncing threads back at half the removed
 * calls or more: a loop that waited for its loader at most steps would wait for it as long
 * without its syncs. */
static int producers_held(sb_replay_model *m, const unsigned char *mask, sb_audit_saving *s)
{
    if (sb_replay_run(m, mask, SB_REPLAY_HOLD_BY_PRODUCERS, &s->other) < 0)
        return -1;
    if (2 * s->other.producer_holds >= s->calls) {
        sb_replay_result keep_up = s->r;
        s->r = s->other;
        s->other = keep_up;
        s->held_primary = 1;
    }
    return 0;
}

int sb_audit_saving_removes(const sb_audit_call_info *ci, const sb_audit_saving *s)
{
    if (!removable(ci))
        return 0;
    switch (s->kind) {
    case SB_SAVE_SITE:
        return ci->site == s->key;
    case SB_SAVE_LINE:
        return ci->site == s->key && via_of(ci) == s->via;
    case SB_SAVE_RANGE:
        return ci->range == s->key;
    case SB_SAVE_CLASS:
        return ci->cls == s->cls;
    default:
        return 1;
    }
}

int sb_audit_saving_played_twice(int kind)
{
    return kind == SB_SAVE_SITE || kind == SB_SAVE_ALL || kind == SB_SAVE_LINE;
}

/* A library line that holds every removable call of its site (the user's line leads into that
 * one line only) is the site's play: its figures are taken, not played again. */
static int same_as_site(const sb_audit_proc_result *p, sb_audit_saving *s)
{
    const sb_audit_saving *site =
        s->kind == SB_SAVE_LINE ? sb_audit_saving_of(p, SB_SAVE_SITE, s->key, SB_AUDIT_NONE) : NULL;
    if (!site || site->calls != s->calls)
        return 0;
    s->r = site->r;
    s->kept = site->kept;
    s->other = site->other;
    s->held_primary = site->held_primary;
    return 1;
}

/* The calls of selection s the play removes (mask), those of its window of GPU activity when the
 * process has one (the replay plays only the window: replay.h), and the selection's calls in the
 * whole run (run_calls), which its figures are scaled to. */
static int play(sb_replay_model *m, const sb_audit_proc_result *res, unsigned char *mask,
                sb_audit_saving *s)
{
    const sb_audit_proc *p = res->proc;
    s->calls = s->run_calls = 0;
    s->blocked_us = 0;
    for (size_t i = 0; i < p->ncalls; i++) {
        const sb_audit_call *c = &p->calls[i];
        int hit = sb_audit_saving_removes(&res->calls[i], s);
        if (hit) { /* the run's blocked time: recorded whole, window or not */
            s->run_calls++;
            s->blocked_us += (double)(c->end - c->start) / 1e3;
        }
        mask[i] = (unsigned char)(hit && sb_audit_in_gpu_window(p, c->start));
        s->calls += mask[i];
    }
    if (!s->calls && s->run_calls) /* none in the window: no figure (sb_audit_saving_scale) */
        return 0;
    if (same_as_site(res, s))
        return 0;
    int rc = sb_replay_run(m, mask, 0, &s->r);
    if (!rc && sb_audit_saving_played_twice(s->kind))
        rc = sb_replay_run(m, mask, SB_REPLAY_KEEP_READBACKS, &s->kept);
    if (!rc && s->r.producers && sb_audit_saving_played_twice(s->kind))
        rc = producers_held(m, mask, s);
    return rc;
}

/* It reads the records and, of the analysis, only the calls' classes, in place. */
sb_replay_model *sb_audit_replay_model(const sb_audit_proc_result *res)
{
    return sb_replay_build(res->proc, (sb_replay_classes){&res->calls[0].cls, sizeof *res->calls});
}

/* The selections of p, in p->savings: all, the sites, the classes, the ranges, the lines. */
static void select_all(sb_audit_proc_result *p, const group *sites, size_t nsites,
                       const group *ranges, size_t nranges, const group *lines, size_t nlines)
{
    sb_audit_saving *s = p->savings;
    s[p->nsavings++].kind = SB_SAVE_ALL;
    for (size_t i = 0; i < nsites; i++)
        s[p->nsavings++] = (sb_audit_saving){.kind = SB_SAVE_SITE, .key = sites[i].key};
    for (int k = 1; k < SB_AUDIT_NCLASS; k++)
        if (sb_audit_blocking((sb_audit_class)k) && p->counts[k])
            s[p->nsavings++] = (sb_audit_saving){.kind = SB_SAVE_CLASS, .cls = k};
    for (size_t i = 0; i < nranges; i++)
        s[p->nsavings++] = (sb_audit_saving){.kind = SB_SAVE_RANGE, .key = ranges[i].key};
    for (size_t i = 0; i < nlines; i++)
        s[p->nsavings++] =
            (sb_audit_saving){.kind = SB_SAVE_LINE, .key = lines[i].key, .via = lines[i].via};
}

int sb_audit_savings(sb_audit_proc_result *res, int top)
{
    const sb_audit_proc *p = res->proc;
    if (!p->kernels || !p->launches || (p->windowed && p->window_start < 0))
        return 0; /* nothing of the GPU's recorded (a window that never opened) */
    size_t nsites = 0, nranges = 0, nlines = 0;
    group *sites = groups_of(res, BY_SITE, &nsites), *ranges = groups_of(res, BY_RANGE, &nranges);
    group *lines = groups_of(res, BY_LINE, &nlines);
    unsigned char *mask = malloc(p->ncalls + 1);
    sb_replay_model *m = sites && ranges && lines && mask ? sb_audit_replay_model(res) : NULL;
    res->replay = malloc(sizeof *res->replay);
    if (nsites > (size_t)top)
        nsites = (size_t)top;
    if (nranges > (size_t)top)
        nranges = (size_t)top;
    if (nlines > (size_t)top)
        nlines = (size_t)top;
    res->savings = calloc(1 + nsites + SB_AUDIT_NCLASS + nranges + nlines, sizeof *res->savings);
    int rc = m && res->replay && res->savings ? 0 : -1;
    if (!rc) {
        sb_replay_facts_of(m, res->replay);
        select_all(res, sites, nsites, ranges, nranges, lines, nlines);
        for (size_t i = 0; !rc && i < res->nsavings; i++)
            rc = play(m, res, mask, &res->savings[i]);
    }
    sb_replay_free(m);
    free(sites);
    free(ranges);
    free(lines);
    free(mask);
    return rc;
}

/* One selection: its kind, its key (site or range), its library line (lines), its class. */
typedef struct {
    int kind;
    const char *key, *via;
    sb_audit_class cls;
} selection;

static const sb_audit_saving *find(const sb_audit_proc_result *p, const selection *w)
{
    for (size_t i = 0; i < p->nsavings; i++) {
        const sb_audit_saving *s = &p->savings[i];
        if (s->kind != w->kind)
            continue;
        if (w->kind == SB_SAVE_CLASS
                ? s->cls == w->cls
                : s->key == w->key && (w->kind != SB_SAVE_LINE || s->via == w->via))
            return s;
    }
    return NULL;
}

const sb_audit_saving *sb_audit_saving_of(const sb_audit_proc_result *p, int kind, const char *key,
                                          sb_audit_class cls)
{
    return find(p, &(selection){kind, key, NULL, cls});
}

const sb_audit_saving *sb_audit_line_saving_of(const sb_audit_proc_result *p, const char *site,
                                               const char *via)
{
    return find(p, &(selection){SB_SAVE_LINE, site, via, SB_AUDIT_NONE});
}

int sb_audit_host_bound(const sb_replay_result *r)
{
    return r->host_pct >= 50;
}

int sb_audit_unmodelled(const sb_audit_saving *s)
{
    return s->r.threads_unmodelled + s->ranks_unmodelled;
}

double sb_audit_result_us(const sb_replay_result *r, long calls)
{
    /* fewer calls than windows: each is its own, the run's own ends weigh in; the play's */
    if (calls < SB_REPLAY_WINDOWS)
        return r->wall_us;
    return r->typical_us * (double)calls;
}

double sb_audit_saving_scale(const sb_audit_saving *s)
{
    if (s->calls == s->run_calls)
        return 1;
    return s->calls ? (double)s->run_calls / (double)s->calls : NAN;
}

double sb_audit_saving_us(const sb_audit_saving *s)
{
    return sb_audit_result_us(&s->r, s->calls) * sb_audit_saving_scale(s);
}

static sb_audit_run_save run_saving(const sb_audit_analysis *an, const selection *w)
{
    sb_audit_run_save sum = {0};
    for (size_t i = 0; i < an->nprocs; i++) {
        const sb_audit_saving *s = find(&an->procs[i], w);
        if (!s)
            continue;
        sum.threads_unmodelled += s->r.threads_unmodelled;
        sum.ranks_unmodelled += s->ranks_unmodelled;
        sum.outside_window += !s->calls && s->run_calls;
        /* NaN: none of its calls in the window; a job's figure once: its slowest rank's */
        if (!isnan(sb_audit_saving_us(s)) && (!s->ranks_played || s->job_figure)) {
            sum.played++;
            sum.us += sb_audit_saving_us(s);
        }
    }
    return sum;
}

sb_audit_run_save sb_audit_run_saving(const sb_audit_analysis *an, int kind, const char *key,
                                      sb_audit_class cls)
{
    return run_saving(an, &(selection){kind, key, NULL, cls});
}

sb_audit_run_save sb_audit_run_line_saving(const sb_audit_analysis *an, const char *site,
                                           const char *via)
{
    return run_saving(an, &(selection){SB_SAVE_LINE, site, via, SB_AUDIT_NONE});
}
