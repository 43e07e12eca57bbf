/* The Python line of the thread that waits. A blocking call made on a thread without Python (a
 * runtime's worker: XLA's, a C++ thread pool) while a Python thread slept waiting for it is that
 * Python thread's, at its line. Who waited for whom is what the replay's threads are tied by:
 * the recorded hand-offs ("wake" records of the waits library, each with the woken waiter's
 * Python stack). From the call's end, the calling thread's signals within WAITER_BOUND_NS, in
 * their order: the first that woke a Python thread asleep since before the call ended names it;
 * one that woke a thread without Python is followed on from that thread's wake, WAITER_HOPS
 * hand-offs in all at most. Where no chain of the calling thread's signals reaches one (XLA
 * hands a copy's completion on through CUDA's host-callback thread and three of its own), the
 * Python thread asleep across the whole call whose sleep ends first after it, within
 * WAITER_BOUND_NS, is the one. The call keeps its own native frame; its Python stack becomes
 * the waiter's, and the call's `wake` says which hand-off named it (both the analysis's: the
 * records stay as read).
 *
 * A readback into pinned memory does not block the thread that makes it, but a Python thread
 * asleep for it waits for the GPU all the same: JAX's float(x) is XLA's async copy into a pinned
 * buffer, and the Python thread sleeps until CUDA's host callback reports it done. Such a copy,
 * made on a thread without Python while a Python thread waited for it, is a `waited` call at
 * that thread's line (its blocked time is the copy call's own: the wait is the Python thread's). */
#include "analyze/analyze.h"
#include "base/arrays.h"

#include <stdlib.h>
#include <string.h>

#define WAITER_BOUND_NS 5000000ll /* from a call's end (or a hop's wake) to the signal */
#define WAITER_HOPS 3             /* hand-offs followed from the calling thread at most */
#define WAITER_TRIES 8            /* a thread's signals looked at per hop at most */
/* a readback is asked for, then waited for: the Python thread may fall asleep just after the
 * runtime's thread made the copy (JAX's device_get: 3 us after, on the H100) */
#define READBACK_SLACK_NS 200000ll

typedef struct {
    const sb_audit_proc *p;
    size_t *order; /* the wakes, by signalling thread, then signal time */
    size_t n;
} signals;

static const sb_audit_wake *g_wakes; /* qsort has no context argument in C11 */

static int cmp_signal(const void *a, const void *b)
{
    const sb_audit_wake *x = &g_wakes[*(const size_t *)a], *y = &g_wakes[*(const size_t *)b];
    if (x->by != y->by)
        return x->by < y->by ? -1 : 1;
    return (x->at > y->at) - (x->at < y->at);
}

/* The first signal of thread tid at t or later (its place in s->order; s->n: none). */
static size_t first_signal(const signals *s, int64_t tid, int64_t t)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const sb_audit_wake *w = &s->p->wakes[s->order[mid]];
        if (w->by < tid || (w->by == tid && w->at < t))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The woken thread ran Python: its stack was recorded, with a frame. */
static int python_waiter(const sb_audit_proc *p, const sb_audit_wake *w)
{
    const sb_audit_pystack *ps = w->py >= 0 ? sb_audit_find_pystack(p, w->py) : NULL;
    return ps && ps->nframes > 0;
}

/* The hand-off to the Python thread that thread tid's signals from t on woke, directly or
 * through hops - 1 threads without Python, the waiter asleep at asleep_at; NULL: none. */
static const sb_audit_wake *waiter_of(const signals *s, int64_t tid, int64_t t, int64_t asleep_at,
                                      int hops)
{
    size_t i = first_signal(s, tid, t);
    for (int tries = 0; i < s->n && tries < WAITER_TRIES; i++, tries++) {
        const sb_audit_wake *w = &s->p->wakes[s->order[i]];
        if (w->by != tid || w->at > t + WAITER_BOUND_NS)
            break;
        if (python_waiter(s->p, w)) {
            if (w->start <= asleep_at)
                return w;
        } else if (hops > 1) {
            const sb_audit_wake *v = waiter_of(s, w->tid, w->end, asleep_at, hops - 1);
            if (v)
                return v;
        }
    }
    return NULL;
}

static int cmp_end(const void *a, const void *b)
{
    const sb_audit_wake *x = &g_wakes[*(const size_t *)a], *y = &g_wakes[*(const size_t *)b];
    return (x->end > y->end) - (x->end < y->end);
}

/* The Python threads' sleeps, by their end. */
typedef struct {
    size_t *order;
    size_t n;
} sleeps;

/* The sleep of a Python thread that began by asleep_by and was ended after end, the first to
 * end, within the bound after end; NULL: none. */
static const sb_audit_wake *asleep_across(const sb_audit_proc *p, const sleeps *z,
                                          int64_t asleep_by, int64_t end)
{
    size_t lo = 0, hi = z->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->wakes[z->order[mid]].end < end)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < z->n; i++) {
        const sb_audit_wake *w = &p->wakes[z->order[i]];
        if (w->end > end + WAITER_BOUND_NS)
            break;
        if (w->start <= asleep_by && w->at >= end)
            return w;
    }
    return NULL;
}

static int cmp_tid(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The threads that ran Python: a call of theirs or a wake of theirs has a Python stack. An async
 * copy into pinned memory gets no stack even there (inject/watch.c), so a call without one is
 * not enough to tell. Sorted; *n of them; NULL out of memory. */
static int64_t *python_threads(const sb_audit_proc *p, size_t *n)
{
    int64_t *tids = malloc((p->ncalls + p->nwakes + 1) * sizeof *tids);
    if (!tids)
        return NULL;
    *n = 0;
    for (size_t i = 0; i < p->ncalls; i++)
        if (p->calls[i].py >= 0)
            tids[(*n)++] = p->calls[i].tid;
    for (size_t i = 0; i < p->nwakes; i++)
        if (python_waiter(p, &p->wakes[i]))
            tids[(*n)++] = p->wakes[i].tid;
    sb_sort(tids, *n, sizeof *tids, cmp_tid);
    return tids;
}

static int runs_python(const int64_t *tids, size_t n, int64_t tid)
{
    return bsearch(&tid, tids, n, sizeof *tids, cmp_tid) != NULL;
}

static int any_python_waiter(const sb_audit_proc *p)
{
    for (size_t i = 0; i < p->nwakes; i++)
        if (p->wakes[i].py >= 0)
            return 1;
    return 0;
}

/* An async copy from the device into pinned memory (it did not block its own thread). */
static int pinned_readback(const sb_audit_call *c, const sb_audit_call_info *ci)
{
    return ci->cls == SB_AUDIT_NONE &&
           ((c->copy && !strcmp(c->copy, "DtoH")) || (!c->copy && strstr(c->api, "DtoH")));
}

int sb_audit_waiter_sites(const sb_audit_proc *p, sb_audit_call_info *calls)
{
    if (!any_python_waiter(p)) /* no Python thread woken: nothing to name (and nothing spent) */
        return 0;
    signals s = {p, malloc(p->nwakes * sizeof *s.order), p->nwakes};
    sleeps z = {malloc(p->nwakes * sizeof *z.order), 0};
    size_t npy = 0;
    int64_t *py_tids = python_threads(p, &npy);
    if (!s.order || !z.order || !py_tids) {
        free(s.order);
        free(z.order);
        free(py_tids);
        return -1;
    }
    for (size_t i = 0; i < s.n; i++) {
        s.order[i] = i;
        if (python_waiter(p, &p->wakes[i]))
            z.order[z.n++] = i;
    }
    g_wakes = p->wakes;
    sb_sort(s.order, s.n, sizeof *s.order, cmp_signal);
    sb_sort(z.order, z.n, sizeof *z.order, cmp_end);
    for (size_t i = 0; i < p->ncalls; i++) {
        const sb_audit_call *c = &p->calls[i];
        sb_audit_call_info *ci = &calls[i];
        int readback = pinned_readback(c, ci);
        if ((!sb_audit_blocking(ci->cls) && !readback) || c->py >= 0 ||
            runs_python(py_tids, npy, c->tid))
            continue;
        int64_t asleep_by = readback ? c->end + READBACK_SLACK_NS : c->end;
        const sb_audit_wake *w = waiter_of(&s, c->tid, c->end, asleep_by, WAITER_HOPS);
        if (!w)
            w = asleep_across(p, &z, readback ? asleep_by : c->start, c->end);
        if (w && w - p->wakes < INT32_MAX) { /* (always: 2^31 wakes are 96 GiB of records) */
            if (readback)
                ci->cls = SB_AUDIT_WAITED;
            ci->wake = (int32_t)(w - p->wakes) + 1;
        }
    }
    free(s.order);
    free(z.order);
    free(py_tids);
    return 0;
}

const char *sb_audit_site_from(const sb_audit_row *r)
{
    return r->waiter ? "waiter" : r->pyframe ? "python" : "native";
}
