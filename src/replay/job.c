/* The ranks of a job played together (replay.h says the rule): each rank's model gets its parts in
 * collectives as items, the waits inside them set aside, and the plays go item by item, the
 * ranks in turn, a rank held at the end of a part until every rank has reached that collective.
 * The baselines (nothing removed, the audit's own time taken out) are the job's own, played when
 * the job is made: a play that cannot line the ranks' collectives up fails there, never later
 * (the order a rank plays its items in does not depend on what a play removes). */
#include "replay/replay.h"
#include "base/arrays.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "replay/replay_model.h"

struct sb_replay_job {
    size_t n;            /* ranks */
    sb_replay_model **m; /* each rank's model (the job's) */
    int64_t *off;        /* each rank's offset from its own clock to the job's */
    size_t ncoll;        /* collectives matched across the ranks */
    rbase *base;         /* [rank * 2 + policy]: the baselines (policy 1: sources held) */
    int sources;         /* a rank has sources: the held policy has baselines of its own */
    /* one play */
    sb_replay_meet meet; /* the collectives' arrivals */
    player *pl;          /* per rank */
    size_t *cursor;      /* per rank: its next item */
};

static int64_t clock_offset(const sb_audit_proc *p)
{
    return p->has_proc ? p->mono_ns - p->clock_ns : 0;
}

void sb_replay_job_free(sb_replay_job *j)
{
    if (!j)
        return;
    for (size_t r = 0; r < j->n; r++) {
        sb_replay_free(j->m[r]);
        free(j->base[2 * r].reached);
        free(j->base[2 * r + 1].reached);
    }
    free(j->m);
    free(j->off);
    free(j->base);
    free(j->meet.arrived);
    free(j->meet.narrived);
    free(j->pl);
    free(j->cursor);
    free(j);
}

size_t sb_replay_job_collectives(const sb_replay_job *j)
{
    return j->ncoll;
}

/* ---- the job made ---- */

/* How many parts of each group each rank has: counts[group * n + rank] (groups 0 ..
 * *ngroups - 1). NULL out of memory, or with *bad set when a group is negative. */
static size_t *group_counts(const sb_replay_rank *ranks, size_t n, size_t *ngroups, int *bad)
{
    int most = -1;
    *bad = 0;
    for (size_t r = 0; r < n; r++)
        for (size_t i = 0; i < ranks[r].nparts; i++) {
            *bad |= ranks[r].parts[i].group < 0;
            most = ranks[r].parts[i].group > most ? ranks[r].parts[i].group : most;
        }
    *ngroups = (size_t)(most + 1);
    size_t *counts = calloc(*ngroups * n + 1, sizeof *counts);
    for (size_t r = 0; counts && !*bad && r < n; r++)
        for (size_t i = 0; i < ranks[r].nparts; i++)
            counts[(size_t)ranks[r].parts[i].group * n + r]++;
    return counts;
}

/* Every group has as many parts on every rank (0), else 1 and why. */
static int counts_match(const sb_replay_rank *ranks, size_t n, const size_t *counts, size_t ngroups,
                        char *why, size_t whylen)
{
    for (size_t g = 0; g < ngroups; g++)
        for (size_t r = 1; r < n; r++)
            if (counts[g * n + r] != counts[g * n]) {
                snprintf(why, whylen,
                         "the ranks' collectives differ in number: rank %d has %zu, rank %d %zu",
                         ranks[r].rank, counts[g * n + r], ranks[0].rank, counts[g * n]);
                return 1;
            }
    return 0;
}

/* Where the item of each hand-off's wait end lies (its correlation id), per hand-off. */
static int64_t *wait_end_corrs(const sb_replay_model *m)
{
    int64_t *corr = malloc((m->nhands + 1) * sizeof *corr);
    if (!corr)
        return NULL;
    for (size_t i = 0; i < m->nitems; i++)
        if (m->items[i].kind == IT_HAND && (m->items[i].idx & 1))
            corr[m->items[i].idx / 2] = m->items[i].corr;
    return corr;
}

/* A rank's parts as its model's (recorded times, thread, the collective matched: the next of
 * its group) and its items: where each begins, and where it ends (before its completing call).
 * 0, 1 with why, -1. */
static int add_parts(sb_replay_model *m, const sb_replay_rank *rk, size_t *next_of_group,
                     const int64_t *corr_of_wait, char *why, size_t whylen)
{
    const sb_audit_proc *p = rk->proc;
    item *items = realloc(m->items, (m->nitems + 2 * rk->nparts + 1) * sizeof *items);
    m->parts = malloc((rk->nparts + 1) * sizeof *m->parts);
    if (!items || !m->parts) {
        if (items)
            m->items = items;
        return -1;
    }
    m->items = items;
    for (size_t i = 0; i < rk->nparts; i++) {
        const sb_replay_part *x = &rk->parts[i];
        const sb_audit_call *done = &p->calls[x->complete];
        int64_t tid, at, corr;
        if (x->after == SB_PART_AFTER_CALL) {
            const sb_audit_call *c = &p->calls[x->at];
            tid = c->tid;
            at = c->end + c->oh + (c->ptr ? p->alloc_extra_ns : p->call_extra_ns);
            corr = c->corr;
        } else {
            tid = p->wakes[x->at].tid;
            at = p->wakes[x->at].end;
            corr = corr_of_wait[x->at];
        }
        if (tid != done->tid || at > done->start || m->blocks[x->complete].thread < 0) {
            snprintf(why, whylen,
                     "rank %d: a collective's part ends before it begins, or on another thread",
                     rk->rank);
            return 1;
        }
        m->parts[i] = (rpart){.arrive = at,
                              .complete = done->start,
                              .thread = m->blocks[x->complete].thread,
                              .match = (int32_t)next_of_group[x->group]++};
        int kind = x->after == SB_PART_AFTER_CALL ? IT_ARRIVE_CALL : IT_ARRIVE_HAND;
        m->items[m->nitems++] = (item){corr, kind, (int32_t)i, at};
        m->items[m->nitems++] = (item){done->corr, IT_COLL, (int32_t)i, 0};
    }
    m->nparts = rk->nparts;
    return 0;
}

static const rhand *g_hands; /* qsort has no context argument in C11 */

/* hand-offs by waiter, then by the start of the wait */
static int cmp_hand(const void *a, const void *b)
{
    const rhand *x = &g_hands[*(const size_t *)a], *y = &g_hands[*(const size_t *)b];
    if (x->waiter != y->waiter)
        return x->waiter < y->waiter ? -1 : 1;
    return (x->start > y->start) - (x->start < y->start);
}

/* The waits of each part's thread that lie inside the part (its peers' data awaited): the
 * collective's rule plays them, not the hand-off's. -1 out of memory. */
static int mark_waits_inside(sb_replay_model *m)
{
    size_t *order = malloc((m->nhands + 1) * sizeof *order);
    if (!order)
        return -1;
    for (size_t i = 0; i < m->nhands; i++)
        order[i] = i;
    g_hands = m->hands;
    sb_sort(order, m->nhands, sizeof *order, cmp_hand);
    for (size_t i = 0; i < m->nparts; i++) {
        const rpart *pt = &m->parts[i];
        size_t lo = 0, hi = m->nhands; /* the thread's first wait that began inside the part */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            const rhand *h = &m->hands[order[mid]];
            if (h->waiter < pt->thread || (h->waiter == pt->thread && h->start < pt->arrive))
                lo = mid + 1;
            else
                hi = mid;
        }
        for (; lo < m->nhands; lo++) {
            rhand *h = &m->hands[order[lo]];
            if (h->waiter != pt->thread || h->start > pt->complete)
                break;
            h->coll |= h->end <= pt->complete;
        }
    }
    free(order);
    return 0;
}

/* Each part's lag: from the last rank's arrival at its collective to the rank's going on, as
 * recorded (the job's clock). -1 out of memory. */
static int set_lags(sb_replay_job *j)
{
    int64_t *last = malloc((j->ncoll + 1) * sizeof *last);
    if (!last)
        return -1;
    for (size_t c = 0; c < j->ncoll; c++)
        last[c] = NONE;
    for (size_t r = 0; r < j->n; r++)
        for (size_t i = 0; i < j->m[r]->nparts; i++) {
            const rpart *pt = &j->m[r]->parts[i];
            last[pt->match] = max64(last[pt->match], pt->arrive + j->off[r]);
        }
    for (size_t r = 0; r < j->n; r++)
        for (size_t i = 0; i < j->m[r]->nparts; i++) {
            rpart *pt = &j->m[r]->parts[i];
            pt->lag = pt->complete + j->off[r] - last[pt->match];
        }
    free(last);
    return 0;
}

/* Each rank's parts in its model (a group's collectives numbered from first_of_group, as rank
 * 0's), the waits inside them set aside, its sources found again without them. 0, 1, -1. */
static int rank_parts(sb_replay_job *j, const sb_replay_rank *ranks, const size_t *first_of_group,
                      size_t ngroups, char *why, size_t whylen)
{
    size_t *next = malloc((ngroups + 1) * sizeof *next);
    if (!next)
        return -1;
    for (size_t r = 0; r < j->n; r++) {
        sb_replay_model *m = j->m[r];
        int64_t *corrs = wait_end_corrs(m);
        memcpy(next, first_of_group, ngroups * sizeof *next);
        int rc = corrs ? add_parts(m, &ranks[r], next, corrs, why, whylen) : -1;
        free(corrs);
        if (rc) {
            free(next);
            return rc;
        }
        sb_replay_sort_items(m);
        int sources;
        if (mark_waits_inside(m) < 0 || (sources = sb_replay_mark_sources(m)) < 0) {
            free(next);
            return -1;
        }
        j->sources |= sources;
    }
    free(next);
    return set_lags(j);
}

/* The ranks' parts matched into collectives, by group and order. 0, 1 with why, -1. */
static int make_parts(sb_replay_job *j, const sb_replay_rank *ranks, char *why, size_t whylen)
{
    size_t ngroups;
    int bad;
    size_t *counts = group_counts(ranks, j->n, &ngroups, &bad);
    size_t *first = malloc((ngroups + 1) * sizeof *first);
    if (!counts || !first) {
        free(counts);
        free(first);
        return -1;
    }
    int rc = 0;
    if (bad) {
        snprintf(why, whylen, "a collective of no communicator");
        rc = 1;
    }
    if (!rc)
        rc = counts_match(ranks, j->n, counts, ngroups, why, whylen);
    for (size_t g = 0; !rc && g < ngroups; g++) {
        first[g] = j->ncoll;
        j->ncoll += counts[g * j->n];
    }
    free(counts);
    if (!rc && (!(j->meet.arrived = malloc((j->ncoll * j->n + 1) * sizeof *j->meet.arrived)) ||
                !(j->meet.narrived = calloc(j->ncoll + 1, sizeof *j->meet.narrived))))
        rc = -1;
    if (!rc)
        rc = rank_parts(j, ranks, first, ngroups, why, whylen);
    free(first);
    return rc;
}

/* ---- the plays ---- */

/* Every rank's items played, the ranks in turn, each until it must wait for the others at a
 * collective. 0; 1 when none can go on (their collectives do not line up in order). */
static int play_together(sb_replay_job *j, const unsigned char *const *remove, int flags)
{
    memset(j->meet.narrived, 0, (j->ncoll + 1) * sizeof *j->meet.narrived);
    for (size_t r = 0; r < j->n; r++) {
        player *pl = &j->pl[r];
        *pl = sb_replay_player(j->m[r], remove[r], flags);
        pl->base = &j->base[2 * r + (pl->held && j->sources)];
        pl->meet = &j->meet;
        pl->rank = r;
        sb_replay_play_begin(j->m[r], pl);
        j->cursor[r] = 0;
    }
    for (;;) {
        int moved = 0, done = 1;
        for (size_t r = 0; r < j->n; r++) {
            sb_replay_model *m = j->m[r];
            while (j->cursor[r] < m->nitems &&
                   !sb_replay_play_item(m, &j->pl[r], &m->items[j->cursor[r]])) {
                j->cursor[r]++;
                moved = 1;
            }
            done &= j->cursor[r] == m->nitems;
        }
        if (done)
            return 0;
        if (!moved)
            return 1;
    }
}

int sb_replay_job_run(sb_replay_job *j, const unsigned char *const *remove, int flags,
                      sb_replay_result *r, int64_t *end_ns)
{
    int rc = play_together(j, remove, flags);
    for (size_t k = 0; !rc && k < j->n; k++) {
        if (sb_replay_play_end(j->m[k], &j->pl[k], &r[k]) < 0)
            return -1;
        end_ns[k] = j->pl[k].last != NONE ? j->pl[k].last + j->off[k] : INT64_MIN;
    }
    return rc;
}

/* The job's baselines: nothing removed, the audit's own time taken out, with the sources'
 * hand-offs set aside and, when a rank has sources, held. 0, 1 with why, -1. */
static int baselines(sb_replay_job *j, char *why, size_t whylen)
{
    unsigned char **none = calloc(j->n, sizeof *none);
    sb_replay_result *res = malloc(j->n * sizeof *res);
    int64_t *ends = malloc(j->n * sizeof *ends);
    int rc = none && res && ends ? 0 : -1;
    for (size_t r = 0; !rc && r < j->n; r++) {
        size_t calls = j->m[r]->ncalls + 1;
        if (!(none[r] = calloc(calls, 1)) ||
            !(j->base[2 * r].reached = malloc(calls * sizeof(int64_t))) ||
            (j->sources && !(j->base[2 * r + 1].reached = malloc(calls * sizeof(int64_t)))))
            rc = -1;
    }
    const unsigned char *const *masks = (const unsigned char *const *)none;
    if (!rc)
        rc = sb_replay_job_run(j, masks, 0, res, ends);
    if (!rc && j->sources)
        rc = sb_replay_job_run(j, masks, SB_REPLAY_HOLD_BY_PRODUCERS, res, ends);
    if (rc == 1)
        snprintf(why, whylen,
                 "the ranks' collectives do not line up in order (a rank reaches one only after "
                 "waiting in a later one)");
    for (size_t r = 0; none && r < j->n; r++)
        free(none[r]);
    free(none);
    free(res);
    free(ends);
    return rc;
}

int sb_replay_job_new(const sb_replay_rank *ranks, size_t n, sb_replay_job **job, char *why,
                      size_t whylen)
{
    *job = NULL;
    sb_replay_job *j = calloc(1, sizeof *j);
    if (j) {
        j->m = calloc(n + 1, sizeof *j->m);
        j->off = malloc((n + 1) * sizeof *j->off);
        j->base = calloc(2 * n + 1, sizeof *j->base);
        j->pl = malloc((n + 1) * sizeof *j->pl);
        j->cursor = malloc((n + 1) * sizeof *j->cursor);
    }
    if (!j || !j->m || !j->off || !j->base || !j->pl || !j->cursor) {
        for (size_t r = 0; r < n; r++)
            sb_replay_free(ranks[r].model);
        if (j)
            j->n = 0;
        sb_replay_job_free(j);
        return -1;
    }
    j->n = j->meet.n = n;
    j->meet.off = j->off;
    for (size_t r = 0; r < n; r++) {
        j->m[r] = ranks[r].model;
        j->off[r] = clock_offset(ranks[r].proc);
    }
    int rc = make_parts(j, ranks, why, whylen);
    if (!rc)
        rc = baselines(j, why, whylen);
    if (rc) {
        sb_replay_job_free(j);
        return rc;
    }
    *job = j;
    return 0;
}
