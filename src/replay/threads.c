/* The replay across threads: the hand-offs between threads ("wake" records, written by the waits
 * library the launcher preloads) move a thread's work with the thread it waited for, and a play
 * says how many of the threads it involves it could not tie together (threads_unmodelled).
 *
 * A hand-off: the waiter slept from S to E until the waker's signal at A. In a play, the waker
 * reached its signal d_T sooner than recorded (its delta there) and the waiter went to sleep d_W
 * sooner; it wakes when both have happened, the signal's wake-up (E - A) kept:
 *   E' = max(S - d_W, A - d_T + (E - A)),  so its delta after the wait is min(d_W + (E - S), d_T).
 * The fork and join of PyTorch's backward pass is two of them a step: the autograd engine's
 * thread sleeps on its ready queue until the main thread pushes the graph (the engine's work then
 * moves with the main thread), and the main thread sleeps on the pass's future until the engine
 * completes it (the main thread then waits for the engine's moved work). A producer that feeds a
 * consumer through a queue ties them only where the consumer waited for it in the run. */
#include <stdlib.h>

#include "replay/replay_model.h"

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* A hand-off the play leaves to another part of the model: a wait inside a recorded call of the
 * waiter (the call's time), or inside its part in a collective (the collective's rule, job.c). */
static int set_aside(const rhand *h)
{
    return h->inside || h->coll;
}

int sb_replay_mark_inside(sb_replay_model *m)
{
    if (!m->nhands)
        return 0;
    /* per thread, the recorded end of its latest call or launch call so far: items are in the
     * order calls were made, a wait's end placed before the first call made after it */
    int64_t *busy = malloc((m->nthreads + 1) * sizeof *busy);
    if (!busy)
        return -1;
    for (size_t t = 0; t < m->nthreads; t++)
        busy[t] = NONE;
    for (size_t i = 0; i < m->nitems; i++) {
        const item *it = &m->items[i];
        if (it->kind == IT_CALL) {
            const rblock *k = &m->blocks[it->idx];
            if (k->thread >= 0)
                busy[k->thread] = max64(busy[k->thread], k->end);
        } else if (it->kind == IT_LAUNCH) {
            const rop *o = &m->ops[it->idx];
            if (o->thread >= 0 && o->launch != NONE)
                busy[o->thread] = max64(busy[o->thread], o->launch + o->sub);
        } else if (it->kind == IT_HAND && (it->idx & 1)) {
            rhand *h = &m->hands[it->idx / 2];
            h->inside = h->waiter < 0 || h->waker < 0 || busy[h->waiter] >= h->end;
            m->facts.hand_offs += !h->inside;
        }
    }
    free(busy);
    return 0;
}

int sb_replay_mark_sources(sb_replay_model *m)
{
    unsigned char *woken = calloc(m->nthreads + 1, 1);
    if (!woken)
        return -1;
    for (size_t i = 0; i < m->nhands; i++)
        if (!set_aside(&m->hands[i]))
            woken[m->hands[i].waiter] = 1;
    int any = 0;
    for (size_t i = 0; i < m->nhands; i++) {
        rhand *h = &m->hands[i];
        h->from_source = !set_aside(h) && !woken[h->waker];
        any |= h->from_source;
    }
    free(woken);
    return any;
}

int sb_replay_play_hand(sb_replay_model *m, int32_t idx, int held)
{
    rhand *h = &m->hands[idx / 2];
    if (set_aside(h) || (h->from_source && !held))
        return 0;
    if (!(idx & 1)) { /* the signal: how much sooner the waker got there */
        h->snap = m->delta[h->waker];
        return 0;
    }
    /* the wait's end; the run's span stays its CUDA activity's (a thread that only waits, a
     * DataLoader's or CUPTI's, does not stretch it). It held the waiter back when the waiter
     * then lost some of what it had gained before the wait. */
    int64_t before = m->delta[h->waiter];
    m->delta[h->waiter] = min64(before + (h->end - h->start), h->snap);
    return h->from_source && h->snap < before;
}

/* ---- which threads a play ties together ---- */

static int32_t find_root(int32_t *parent, int32_t t)
{
    while (parent[t] != t)
        t = parent[t] = parent[parent[t]];
    return t;
}

/* parent[]: the threads joined by the hand-offs whose wait overlaps [from, to]. */
static void join_by_hands(const sb_replay_model *m, int32_t *parent, int64_t from, int64_t to)
{
    for (size_t t = 0; t < m->nthreads; t++)
        parent[t] = (int32_t)t;
    for (size_t i = 0; i < m->nhands; i++) {
        const rhand *h = &m->hands[i];
        if (set_aside(h) || h->end < from || h->start > to)
            continue;
        int32_t a = find_root(parent, h->waiter), b = find_root(parent, h->waker);
        if (a != b)
            parent[a] = b;
    }
}

/* The sources (sb_replay_mark_sources) that hand work on in [from, to]; seen: nthreads zeros,
 * left set. */
static int count_producers(const sb_replay_model *m, int64_t from, int64_t to, unsigned char *seen)
{
    int n = 0;
    for (size_t i = 0; i < m->nhands; i++) {
        const rhand *h = &m->hands[i];
        if (h->from_source && h->end >= from && h->start <= to && !seen[h->waker]) {
            seen[h->waker] = 1;
            n++;
        }
    }
    return n;
}

/* The threads a play involves beyond one (replay.h: threads_unmodelled): those of the removed
 * calls and those that launched GPU work between the first removed call's start and the last
 * one's end, less those the recorded hand-offs of that stretch tie to the first removed call's
 * thread (directly or through other threads). Without hand-offs recorded, every one beyond the
 * first. -1 out of memory. */
int sb_replay_unmodelled_threads(const sb_replay_model *m, const unsigned char *remove,
                                 int *producers)
{
    unsigned char *seen = calloc(m->nthreads + 1, 1), *sources = calloc(m->nthreads + 1, 1);
    int32_t *parent = malloc((m->nthreads + 1) * sizeof *parent);
    if (!seen || !sources || !parent) {
        free(seen);
        free(sources);
        free(parent);
        return -1;
    }
    int64_t from = INT64_MAX, to = INT64_MIN;
    int32_t first = -1;
    for (size_t b = 0; b < m->nblocks; b++) {
        const rblock *k = &m->blocks[b];
        if (!remove[k->call] || k->thread < 0)
            continue;
        first = first < 0 ? k->thread : first;
        seen[k->thread] = 1;
        from = min64(from, k->start);
        to = max64(to, k->end);
    }
    for (size_t i = 0; i < m->nops; i++) {
        const rop *o = &m->ops[i];
        if (o->launch != NONE && o->thread >= 0 && o->launch >= from && o->launch <= to)
            seen[o->thread] = 1;
    }
    if (m->waits_recorded)
        join_by_hands(m, parent, from, to);
    *producers = count_producers(m, from, to, sources);
    int n = 0;
    for (size_t t = 0; t < m->nthreads; t++)
        n += seen[t] && (int32_t)t != first &&
             (!m->waits_recorded || find_root(parent, (int32_t)t) != find_root(parent, first));
    free(seen);
    free(sources);
    free(parent);
    return n;
}
