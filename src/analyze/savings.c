/* What removing syncs would save, per process: the replay (replay.h) played once with every
 * blocking call removed, then once per site (the Python line or native frame), per class and
 * per innermost NVTX range, each removed alone (all and sites twice: with the readbacks the
 * syncs serve, and with them kept). Sites interact: removing one can make a later
 * sync wait longer (the GPU work it no longer waits for is still there), which its own figure
 * counts; the figure for every sync is its own play, not a sum. The most costly sites and
 * ranges (by host time blocked; as many as --top) are played, every class is. Calls made while
 * torch.compile compiled are never removed. */
#include "analyze/analyze.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "replay/replay.h"

/* The syncs a play removes: blocking calls of the run time. What torch.compile made
 * (compile_group.c) happens once, while it compiles; removing it predicts nothing of a step. */
static int removable(const sb_audit_call *c)
{
    return sb_audit_blocking(c->cls) && !sb_audit_compile_time(c);
}

typedef struct {
    const char *key;
    long calls;
    double blocked_us;
} group;

static int cmp_group(const void *a, const void *b)
{
    const group *x = a, *y = b;
    if (x->blocked_us != y->blocked_us)
        return x->blocked_us > y->blocked_us ? -1 : 1;
    return strcmp(x->key, y->key);
}

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const group *)a)->key, y = (uintptr_t)((const group *)b)->key;
    return x < y ? -1 : x > y;
}

/* The blocking calls grouped by an interned text (site or range; keys are pointers, equal text
 * is one pointer), most blocked first. range: by innermost range, calls outside any left out. */
static group *groups_of(const sb_audit_proc *p, int range, size_t *n)
{
    group *g = malloc((p->ncalls + 1) * sizeof *g);
    if (!g)
        return NULL;
    size_t m = 0;
    for (size_t i = 0; i < p->ncalls; i++) {
        const sb_audit_call *c = &p->calls[i];
        const char *key = range ? c->range : c->site;
        if (!removable(c) || !key || (range && !key[0]))
            continue;
        g[m++] = (group){key, 1, (double)(c->end - c->start) / 1e3};
    }
    sb_sort(g, m, sizeof *g, cmp_ptr);
    size_t k = 0;
    for (size_t i = 0; i < m; i++) {
        if (k && g[k - 1].key == g[i].key) {
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

static int play(sb_replay_model *m, const sb_audit_proc *p, unsigned char *mask, sb_audit_saving *s)
{
    s->calls = 0;
    s->blocked_us = 0;
    for (size_t i = 0; i < p->ncalls; i++) {
        const sb_audit_call *c = &p->calls[i];
        int hit = removable(c);
        switch (s->kind) {
        case SB_SAVE_SITE:
            hit = hit && c->site == s->key;
            break;
        case SB_SAVE_RANGE:
            hit = hit && c->range == s->key;
            break;
        case SB_SAVE_CLASS:
            hit = hit && c->cls == s->cls;
            break;
        default:
            break;
        }
        mask[i] = (unsigned char)hit;
        if (hit) {
            s->calls++;
            s->blocked_us += (double)(c->end - c->start) / 1e3;
        }
    }
    int rc = sb_replay_run(m, mask, 0, &s->r);
    if (!rc && (s->kind == SB_SAVE_SITE || s->kind == SB_SAVE_ALL))
        rc = sb_replay_run(m, mask, SB_REPLAY_KEEP_READBACKS, &s->kept);
    if (!rc && s->r.producers && (s->kind == SB_SAVE_SITE || s->kind == SB_SAVE_ALL))
        rc = producers_held(m, mask, s);
    return rc;
}

int sb_audit_savings(sb_audit_proc *p, int top)
{
    if (!p->kernels || !p->launches)
        return 0;
    size_t nsites = 0, nranges = 0;
    group *sites = groups_of(p, 0, &nsites), *ranges = groups_of(p, 1, &nranges);
    unsigned char *mask = malloc(p->ncalls + 1);
    sb_replay_model *m = sites && ranges && mask ? sb_replay_build(p) : NULL;
    p->replay = malloc(sizeof *p->replay);
    if (nsites > (size_t)top)
        nsites = (size_t)top;
    if (nranges > (size_t)top)
        nranges = (size_t)top;
    p->savings = calloc(1 + nsites + SB_AUDIT_NCLASS + nranges, sizeof *p->savings);
    int rc = m && p->replay && p->savings ? 0 : -1;
    if (!rc) {
        sb_replay_facts_of(m, p->replay);
        sb_audit_saving *s = p->savings;
        s[p->nsavings++].kind = SB_SAVE_ALL;
        for (size_t i = 0; i < nsites; i++)
            s[p->nsavings++] = (sb_audit_saving){.kind = SB_SAVE_SITE, .key = sites[i].key};
        for (int k = 1; k < SB_AUDIT_NCLASS; k++)
            if (sb_audit_blocking((sb_audit_class)k) && p->counts[k])
                s[p->nsavings++] = (sb_audit_saving){.kind = SB_SAVE_CLASS, .cls = k};
        for (size_t i = 0; i < nranges; i++)
            s[p->nsavings++] = (sb_audit_saving){.kind = SB_SAVE_RANGE, .key = ranges[i].key};
        for (size_t i = 0; !rc && i < p->nsavings; i++)
            rc = play(m, p, mask, &s[i]);
    }
    sb_replay_free(m);
    free(sites);
    free(ranges);
    free(mask);
    return rc;
}

const sb_audit_saving *sb_audit_saving_of(const sb_audit_proc *p, int kind, const char *key,
                                          sb_audit_class cls)
{
    for (size_t i = 0; i < p->nsavings; i++) {
        const sb_audit_saving *s = &p->savings[i];
        if (s->kind == kind && (kind == SB_SAVE_CLASS ? s->cls == cls : s->key == key))
            return s;
    }
    return NULL;
}

const char *sb_audit_bound_name(const sb_replay_result *r)
{
    return r->host_pct >= 50 ? "host" : "gpu";
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

double sb_audit_saving_us(const sb_audit_saving *s)
{
    return sb_audit_result_us(&s->r, s->calls);
}

double sb_audit_run_saving(const sb_audit_run *run, int kind, const char *key, sb_audit_class cls)
{
    double sum = 0;
    int any = 0;
    for (size_t i = 0; i < run->nprocs; i++) {
        const sb_audit_saving *s = sb_audit_saving_of(run->procs[i], kind, key, cls);
        if (s) {
            sum += sb_audit_saving_us(s);
            any = 1;
        }
    }
    return any ? sum : NAN;
}

const char *sb_audit_unmodelled_why(const sb_audit_run *run, int kind, const char *key,
                                    sb_audit_class cls)
{
    int ranks = 0;
    for (size_t i = 0; i < run->nprocs; i++) {
        const sb_audit_saving *s = sb_audit_saving_of(run->procs[i], kind, key, cls);
        if (s && s->r.threads_unmodelled)
            return "threads not modelled";
        ranks |= s && s->ranks_unmodelled;
    }
    return ranks ? "ranks not modelled" : NULL;
}

const char *sb_audit_saving_text(const sb_audit_run *run, int kind, const char *key,
                                 sb_audit_class cls, char *buf, size_t n)
{
    double us = sb_audit_run_saving(run, kind, key, cls);
    if (isnan(us))
        snprintf(buf, n, "%s", "");
    else if (sb_audit_unmodelled_why(run, kind, key, cls))
        snprintf(buf, n, "%s", SB_AUDIT_UNMODELLED);
    else
        snprintf(buf, n, "%.3f", us / 1e3);
    return buf;
}
