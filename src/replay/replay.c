/* The replay (replay.h says the model): the build, from one analyzed process's records, and one
 * play of it with chosen blocking calls removed. */
#include "replay/replay.h"
#include "base/arrays.h"
#include "base/stats.h"

#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "replay/replay_model.h"

/* A latency and a gap for runs with no sample of them: an H100's launch-to-start latency and
 * back-to-back gap on one stream (typical figures; a run with samples uses its own). */
#define DEFAULT_LATENCY_NS 5000
#define DEFAULT_GAP_NS 1000

/* ---- dense indexes: a key (thread id, stream, context) to 0..n-1 ---- */
typedef struct {
    int64_t *keys; /* sorted, unique */
    size_t n;
} dense;

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Takes keys[0..n) (malloc'd) and keeps them sorted and unique. */
static void dense_make(dense *d, int64_t *keys, size_t n)
{
    sb_sort(keys, n, sizeof *keys, cmp_i64);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!m || keys[m - 1] != keys[i])
            keys[m++] = keys[i];
    d->keys = keys;
    d->n = m;
}

static int32_t dense_find(const dense *d, int64_t key)
{
    size_t lo = 0, hi = d->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->keys[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < d->n && d->keys[lo] == key ? (int32_t)lo : -1;
}

static int64_t stream_key(int64_t ctx, int64_t stream)
{
    return (int64_t)((uint64_t)ctx << 32 | (uint32_t)stream);
}

void sb_replay_free(sb_replay_model *m)
{
    if (!m)
        return;
    free(m->ops);
    free(m->blocks);
    free(m->recs);
    free(m->waits);
    free(m->ohs);
    free(m->pauses);
    free(m->hands);
    free(m->parts);
    free(m->rb);
    free(m->gone);
    free(m->skind);
    free(m->null_end);
    free(m->blocking_end);
    free(m->items);
    free(m->delta);
    free(m->last_new);
    free(m->stream_end);
    free(m->stream_kernel);
    free(m->stream_dep);
    free(m->ctx_end);
    free(m->ev_cap);
    free(m->op_end);
    free(m->scratch);
    free(m->base[0].reached);
    free(m->base[1].reached);
    free(m->ahead);
    free(m->ahead_thread_of);
    free(m->ahead_one);
    free(m->per_thread);
    free(m);
}

void sb_replay_facts_of(const sb_replay_model *m, sb_replay_facts *f)
{
    *f = m->facts;
}

static int cmp_item(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->corr != y->corr)
        return x->corr < y->corr ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind - y->kind;
    if (x->tie != y->tie)
        return x->tie < y->tie ? -1 : 1;
    return x->idx - y->idx;
}

void sb_replay_sort_items(sb_replay_model *m)
{
    sb_sort(m->items, m->nitems, sizeof *m->items, cmp_item);
}

/* Median of v[0..n) (sorted in place); dflt when empty. */
static int64_t median(int64_t *v, size_t n, int64_t dflt)
{
    if (!n)
        return dflt;
    sb_sort(v, n, sizeof *v, cmp_i64);
    return v[n / 2];
}

/* What the model needs while it is built: lookups by correlation id and the dense indexes. */
typedef struct {
    sb_replay_classes cls; /* each call's class (the analysis's) */
    sb_keyed *apis, *calls, *syncs, *evs, *ops;
    size_t napis, ncalls, nsyncs, nevs, nops;
    dense threads, streams, ctxs;
} builder;

static void builder_free(builder *b)
{
    free(b->apis);
    free(b->calls);
    free(b->syncs);
    free(b->evs);
    free(b->ops);
    free(b->threads.keys);
    free(b->streams.keys);
    free(b->ctxs.keys);
}

static int make_indexes(const sb_audit_proc *p, builder *b)
{
    size_t nk = p->ncalls + p->napis + 2 * p->nwakes + 1,
           ns = p->nacts + p->nevrecs + p->nsyncrecs + p->ngstreams + 1;
    int64_t *tids = malloc(nk * sizeof *tids), *streams = malloc(ns * sizeof *streams);
    int64_t *ctxs = malloc((ns + p->ncalls) * sizeof *ctxs);
    b->apis = malloc((p->napis + 1) * sizeof *b->apis);
    b->calls = malloc((p->ncalls + 1) * sizeof *b->calls);
    b->syncs = malloc((p->nsyncrecs + 1) * sizeof *b->syncs);
    b->evs = malloc((p->nevrecs + 1) * sizeof *b->evs);
    if (!tids || !streams || !ctxs || !b->apis || !b->calls || !b->syncs || !b->evs) {
        free(tids);
        free(streams);
        free(ctxs);
        return -1;
    }
    size_t nt = 0, nst = 0, nc = 0;
    for (size_t i = 0; i < p->ncalls; i++) {
        if (!sb_audit_in_gpu_window(p, p->calls[i].start))
            continue; /* outside the window of GPU activity: not played (replay.h) */
        tids[nt++] = p->calls[i].tid;
        ctxs[nc++] = p->calls[i].ctx;
        b->calls[b->ncalls++] = (sb_keyed){p->calls[i].corr, i};
    }
    for (size_t i = 0; i < p->napis; i++) {
        tids[nt++] = p->apis[i].tid;
        b->apis[b->napis++] = (sb_keyed){p->apis[i].corr, i};
    }
    for (size_t i = 0; i < p->nwakes; i++) /* threads that only hand work on count too */
        if (sb_audit_in_gpu_window(p, p->wakes[i].at))
            tids[nt++] = p->wakes[i].tid, tids[nt++] = p->wakes[i].by;
    for (size_t i = 0; i < p->nacts; i++) {
        streams[nst++] = stream_key(p->acts[i].ctx, p->acts[i].stream);
        ctxs[nc++] = p->acts[i].ctx;
    }
    for (size_t i = 0; i < p->nevrecs; i++) {
        streams[nst++] = stream_key(p->evrecs[i].ctx, p->evrecs[i].stream);
        b->evs[b->nevs++] = (sb_keyed){p->evrecs[i].sync_id, i};
    }
    for (size_t i = 0; i < p->nsyncrecs; i++) {
        const sb_audit_syncrec *y = &p->syncrecs[i];
        if (y->stream >= 0)
            streams[nst++] = stream_key(y->ctx, y->stream);
        ctxs[nc++] = y->ctx;
        b->syncs[b->nsyncs++] = (sb_keyed){y->corr, i};
    }
    for (size_t i = 0; i < p->ngstreams; i++)
        streams[nst++] = stream_key(p->gstreams[i].ctx, p->gstreams[i].stream);
    dense_make(&b->threads, tids, nt);
    dense_make(&b->streams, streams, nst);
    dense_make(&b->ctxs, ctxs, nc);
    sb_sort(b->apis, b->napis, sizeof *b->apis, sb_keyed_cmp);
    sb_sort(b->calls, b->ncalls, sizeof *b->calls, sb_keyed_cmp);
    sb_sort(b->syncs, b->nsyncs, sizeof *b->syncs, sb_keyed_cmp);
    sb_sort(b->evs, b->nevs, sizeof *b->evs, sb_keyed_cmp);
    return 0;
}

/* The launch of an operation: its API record (by its own or its runtime correlation id), else
 * the blocking call that made it (a cudaMemcpy). Sets *corr to the launch's id. */
static void find_launch(const sb_audit_proc *p, const builder *b, const sb_audit_act *a, rop *o,
                        int64_t *corr)
{
    const int64_t ids[2] = {a->corr, a->rcorr};
    *corr = a->corr;
    o->launch = NONE;
    o->sub = 0;
    o->thread = -1;
    o->call = -1;
    for (int k = 0; k < 2; k++) {
        if (!ids[k])
            continue;
        const sb_keyed *x = sb_keyed_last(b->apis, b->napis, ids[k]);
        const sb_keyed *c = sb_keyed_last(b->calls, b->ncalls, ids[k]);
        if (c)
            o->call = (int32_t)c->idx;
        if (x) {
            o->launch = p->apis[x->idx].start;
            o->sub = p->apis[x->idx].end - p->apis[x->idx].start;
            o->thread = dense_find(&b->threads, p->apis[x->idx].tid);
            *corr = ids[k];
            return;
        }
        if (c) {
            o->launch = p->calls[c->idx].start;
            o->sub = p->calls[c->idx].end - p->calls[c->idx].start;
            o->thread = dense_find(&b->threads, p->calls[c->idx].tid);
            *corr = ids[k];
            return;
        }
    }
}

/* What a blocking call waited for: the synchronization CUPTI recorded for it, else the copy or
 * memset it made, else its context (every operation launched before it). */
static void find_target(const sb_audit_proc *p, const builder *b, const sb_audit_call *c,
                        sb_audit_class cls, rblock *k, sb_replay_facts *f)
{
    const sb_keyed *y = sb_keyed_last(b->syncs, b->nsyncs, c->corr);
    if (y) {
        const sb_audit_syncrec *s = &p->syncrecs[y->idx];
        const sb_keyed *e;
        if (s->type == SB_SYNC_STREAM && s->stream >= 0) {
            k->tkind = TG_STREAM;
            k->target = dense_find(&b->streams, stream_key(s->ctx, s->stream));
            return;
        }
        if (s->type == SB_SYNC_EVENT && (e = sb_keyed_last(b->evs, b->nevs, s->sync_id))) {
            k->tkind = TG_EVENT;
            k->target = (int32_t)e->idx;
            return;
        }
        if (s->type == SB_SYNC_CONTEXT) {
            k->tkind = TG_CTX;
            k->target = dense_find(&b->ctxs, s->ctx);
            return;
        }
    }
    const sb_keyed *o = sb_keyed_last(b->ops, b->nops, c->corr);
    if (o) {
        k->tkind = TG_OP;
        k->target = (int32_t)o->idx;
        return;
    }
    /* a device sync, a free, a call that waited: the context's work. A stream or event sync, a
     * copy, whose record is missing: the same, counted */
    if (cls == SB_AUDIT_SYNC_STREAM || cls == SB_AUDIT_SYNC_EVENT || cls == SB_AUDIT_COPY_SYNC ||
        cls == SB_AUDIT_COPY_PAGEABLE || cls == SB_AUDIT_MEMSET_SYNC)
        f->syncs_untargeted++;
    int32_t ctx = c->ctx ? dense_find(&b->ctxs, c->ctx) : -1;
    k->tkind = ctx >= 0 ? TG_CTX : TG_ALL;
    k->target = ctx;
}

static int cmp_pair(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* The id of the first call (or launch) made at or after t, in at[0..n) ((start, id) pairs sorted
 * by start, then id), INT64_MAX when none: an item of time t played before that call. */
static int64_t corr_after(const int64_t *at, size_t n, int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (at[2 * mid] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n ? at[2 * lo + 1] : INT64_MAX;
}

/* Items that have a time but no call: each stretch the recording was off goes before the first
 * call made after it, each hand-off's signal and wait's end before the first call made after
 * them (calls' ids follow the order they were made in, on every thread; of calls made at one
 * time, the first id). */
static int place_timed(sb_replay_model *m, const sb_audit_proc *p, const builder *b)
{
    if (!p->npauses && !p->nwakes)
        return 0;
    size_t n = 0;
    int64_t *at = malloc((p->ncalls + p->napis + 1) * 2 * sizeof *at); /* (start, corr) */
    if (!at)
        return -1;
    for (size_t i = 0; i < p->ncalls; i++)
        if (sb_audit_in_gpu_window(p, p->calls[i].start))
            at[2 * n] = p->calls[i].start, at[2 * n++ + 1] = p->calls[i].corr;
    for (size_t i = 0; i < p->napis; i++)
        at[2 * n] = p->apis[i].start, at[2 * n++ + 1] = p->apis[i].corr;
    sb_sort(at, n, 2 * sizeof *at, cmp_pair); /* by start, then id */
    for (size_t i = 0; i < p->npauses; i++) {
        const sb_audit_pause *z = &p->pauses[i];
        if (!sb_audit_in_gpu_window(p, z->start))
            continue;
        m->pauses[m->npauses] = (rpause){z->start, z->end, 0, dense_find(&b->threads, z->tid)};
        m->items[m->nitems++] =
            (item){corr_after(at, n, z->end), IT_PAUSE, (int32_t)m->npauses++, 0};
    }
    for (size_t i = 0; i < p->nwakes; i++) {
        const sb_audit_wake *w = &p->wakes[i];
        if (!sb_audit_in_gpu_window(p, w->at))
            continue;
        int32_t h = (int32_t)m->nhands++;
        m->hands[h] = (rhand){.start = w->start,
                              .end = w->end,
                              .at = w->at,
                              .waiter = dense_find(&b->threads, w->tid),
                              .waker = dense_find(&b->threads, w->by)};
        m->items[m->nitems++] = (item){corr_after(at, n, w->at), IT_HAND, 2 * h, w->at};
        m->items[m->nitems++] = (item){corr_after(at, n, w->end), IT_HAND, 2 * h + 1, w->end};
    }
    free(at);
    m->facts.unrecorded = (long)m->npauses;
    return 0;
}

/* The kernels, copies and memsets, each with its launch (find_launch), as items. */
static void build_ops(sb_replay_model *m, const sb_audit_proc *p, builder *b)
{
    for (size_t i = 0; i < p->nacts; i++) {
        const sb_audit_act *a = &p->acts[i];
        rop *o = &m->ops[m->nops];
        int64_t corr;
        memset(o, 0, sizeof *o);
        find_launch(p, b, a, o, &corr);
        o->start = a->start;
        o->dur = a->end - a->start;
        o->stream = dense_find(&b->streams, stream_key(a->ctx, a->stream));
        o->ctx = dense_find(&b->ctxs, a->ctx);
        o->readback = a->kind == SB_ACT_COPY && a->ckind && !strcmp(a->ckind, "DtoH");
        o->kernel = a->kind == SB_ACT_KERNEL;
        m->facts.ops_unplaced += o->launch == NONE;
        b->ops[b->nops++] = (sb_keyed){corr, m->nops};
        m->items[m->nitems++] = (item){corr, IT_LAUNCH, (int32_t)m->nops, a->start};
        m->nops++;
    }
}

static int build_items(sb_replay_model *m, const sb_audit_proc *p, builder *b)
{
    m->ops = malloc((p->nacts + 1) * sizeof *m->ops);
    m->recs = malloc((p->nevrecs + 1) * sizeof *m->recs);
    m->waits = malloc((p->nsyncrecs + 1) * sizeof *m->waits);
    m->blocks = malloc((p->ncalls + 1) * sizeof *m->blocks);
    m->ohs = malloc((p->ncalls + p->napis + 1) * sizeof *m->ohs);
    m->pauses = malloc((p->npauses + 1) * sizeof *m->pauses);
    m->hands = malloc((p->nwakes + 1) * sizeof *m->hands);
    m->items = malloc((p->nacts + p->nevrecs + p->nsyncrecs + 2 * p->ncalls + p->napis +
                       p->npauses + 2 * p->nwakes + 1) *
                      sizeof *m->items);
    b->ops = malloc((p->nacts + 1) * sizeof *b->ops);
    if (!m->ops || !m->recs || !m->waits || !m->blocks || !m->ohs || !m->pauses || !m->hands ||
        !m->items || !b->ops)
        return -1;
    build_ops(m, p, b);
    sb_sort(b->ops, b->nops, sizeof *b->ops, sb_keyed_cmp);
    for (size_t i = 0; i < p->nevrecs; i++) {
        const sb_audit_evrec *e = &p->evrecs[i];
        m->recs[m->nrecs] = (rlink){dense_find(&b->streams, stream_key(e->ctx, e->stream)), 0};
        m->items[m->nitems++] = (item){e->corr, IT_RECORD, (int32_t)m->nrecs++, 0};
    }
    for (size_t i = 0; i < p->nsyncrecs; i++) {
        const sb_audit_syncrec *y = &p->syncrecs[i];
        if (y->type != SB_SYNC_WAIT || y->stream < 0)
            continue;
        const sb_keyed *e = sb_keyed_last(b->evs, b->nevs, y->sync_id);
        m->waits[m->nwaits] = (rlink){dense_find(&b->streams, stream_key(y->ctx, y->stream)),
                                      e ? (int32_t)e->idx : -1};
        m->items[m->nitems++] = (item){y->corr, IT_WAIT, (int32_t)m->nwaits++, 0};
    }
    /* what recording added to each kernel launch (the calibration: it launches kernels), before
     * the kernel reaches the GPU: the driver prepares the kernel's timestamps as it submits it.
     * API records that launched a kernel (trace mode records every API call) */
    for (size_t i = 0; p->launch_extra_ns > 0 && i < p->napis; i++) {
        const sb_keyed *o = sb_keyed_last(b->ops, b->nops, p->apis[i].corr);
        if (!o || !m->ops[o->idx].kernel)
            continue;
        m->ohs[m->nohs] = (roh){p->launch_extra_ns, dense_find(&b->threads, p->apis[i].tid)};
        m->items[m->nitems++] = (item){p->apis[i].corr, IT_PRE, (int32_t)m->nohs++, 0};
    }
    m->facts.launch_extra_us = (double)p->launch_extra_ns / 1e3;
    m->facts.call_extra_us = (double)p->call_extra_ns / 1e3;
    m->start_extra = p->start_extra_ns;
    m->copy_extra = p->copy_extra_ns;
    m->facts.start_extra_us = (double)p->start_extra_ns / 1e3;
    m->facts.alloc_extra_us = (double)p->alloc_extra_ns / 1e3;
    m->facts.copy_extra_us = (double)p->copy_extra_ns / 1e3;
    for (size_t i = 0; i < p->ncalls; i++) {
        const sb_audit_call *c = &p->calls[i];
        if (!sb_audit_in_gpu_window(p, c->start))
            continue;
        /* after the call (inject/watch.c takes its stacks on the way out), with what the
         * calibration found recording adds to a call beyond the time it timed itself (CUPTI's
         * callbacks, the record's line; more for an allocation or a free, timed apart) */
        int64_t oh = c->oh + (c->ptr ? p->alloc_extra_ns : p->call_extra_ns);
        m->facts.audit_overhead_us += (double)oh / 1e3;
        if (oh > 0) {
            m->ohs[m->nohs] = (roh){oh, dense_find(&b->threads, c->tid)};
            m->items[m->nitems++] = (item){c->corr, IT_OH, (int32_t)m->nohs++, c->start};
        }
        rblock *k = &m->blocks[m->nblocks];
        memset(k, 0, sizeof *k);
        k->start = c->start;
        k->end = c->end;
        k->call = i;
        k->pair = -1;
        k->thread = dense_find(&b->threads, c->tid);
        sb_audit_class cls = sb_replay_class_of(b->cls, i);
        if (sb_audit_blocking(cls)) {
            find_target(p, b, c, cls, k, &m->facts);
            m->facts.syncs++;
        } else {
            k->tkind = TG_NONE;
            k->post = c->end - c->start;
        }
        m->items[m->nitems++] = (item){c->corr, IT_CALL, (int32_t)m->nblocks++, c->start};
    }
    if (place_timed(m, p, b) < 0)
        return -1;
    /* a lost hand-off may be the one that ties two threads: as if none were recorded */
    m->waits_recorded = p->waits && !p->wakes_lost;
    m->facts.waits = p->waits;
    m->facts.wakes_lost = p->wakes_lost;
    sb_replay_sort_items(m);
    m->facts.ops = (long)m->nops;
    m->facts.gpu_streams = (int)b->streams.n;
    return 0;
}

/* What else goes with a removed call, so that a removed site is the fix its user would make:
 *  - a sync (of a stream, an event, the device) takes with it the readbacks it makes visible:
 *    the copies into host memory its thread launched since its previous blocking call (what
 *    .item() is: a cudaMemcpyAsync, then the sync). Without the sync the value cannot be read,
 *    so the fix drops the copy too (a fix that keeps the copy, double buffering, keeps its cost);
 *  - a free takes with it the allocation it undoes (its cudaMalloc: the fix allocates once).
 * m->rb lists the readbacks of each sync; blocks[].pair the allocation of each free. */
static int link_calls(sb_replay_model *m, const sb_audit_proc *p, sb_replay_classes cls)
{
    int32_t *next = malloc((m->nblocks + 1) * sizeof *next);
    int32_t *head = malloc((m->nthreads + 1) * sizeof *head);
    int64_t *allocs = malloc((m->nblocks + 1) * 3 * sizeof *allocs);
    m->rb = malloc((m->nblocks + 1) * sizeof *m->rb);
    if (!next || !head || !allocs || !m->rb) {
        free(next);
        free(head);
        free(allocs);
        return -1;
    }
    for (size_t t = 0; t < m->nthreads; t++)
        head[t] = -1;
    size_t na = 0;
    for (size_t i = 0; i < m->nitems; i++) {
        if (m->items[i].kind != IT_CALL)
            continue;
        int32_t bi = m->items[i].idx;
        rblock *k = &m->blocks[bi];
        const sb_audit_call *c = &p->calls[k->call];
        k->rb_first = (int32_t)m->nrb;
        if (c->ptr) /* (pointer, order, block): allocations and frees */
            allocs[3 * na] = c->ptr, allocs[3 * na + 1] = (int64_t)i, allocs[3 * na++ + 2] = bi;
        if (k->thread < 0)
            continue;
        if (k->tkind == TG_NONE) {
            if (c->copy && !strcmp(c->copy, "DtoH")) {
                next[bi] = head[k->thread];
                head[k->thread] = bi;
            }
            continue;
        }
        sb_audit_class kc = sb_replay_class_of(cls, k->call);
        if (kc == SB_AUDIT_SYNC_STREAM || kc == SB_AUDIT_SYNC_EVENT || kc == SB_AUDIT_SYNC_DEVICE)
            for (int32_t r = head[k->thread]; r >= 0; r = next[r])
                m->rb[m->nrb++] = (int32_t)m->blocks[r].call;
        k->rb_n = (int32_t)m->nrb - k->rb_first;
        head[k->thread] = -1;
    }
    sb_sort(allocs, na, 3 * sizeof *allocs, cmp_pair); /* by pointer, then order */
    for (size_t i = 1; i < na; i++) {
        int64_t *a = &allocs[3 * (i - 1)], *f = &allocs[3 * i];
        if (a[0] != f[0])
            continue;
        if (sb_replay_class_of(cls, m->blocks[f[2]].call) == SB_AUDIT_FREE &&
            sb_replay_class_of(cls, m->blocks[a[2]].call) != SB_AUDIT_FREE)
            m->blocks[f[2]].pair = (int64_t)m->blocks[a[2]].call;
    }
    free(next);
    free(head);
    free(allocs);
    return 0;
}

/* Each stream's ordering against the legacy default stream, from the streams CUPTI saw created
 * (none seen: the stream orders with nothing but its own work and the events it waits for). */
static int stream_kinds(sb_replay_model *m, const sb_audit_proc *p, const builder *b)
{
    m->skind = calloc(m->nstreams + 1, 1);
    m->null_end = malloc((m->nctx + 1) * sizeof *m->null_end);
    m->blocking_end = malloc((m->nctx + 1) * sizeof *m->blocking_end);
    if (!m->skind || !m->null_end || !m->blocking_end)
        return -1;
    for (size_t i = 0; i < p->ngstreams; i++) {
        int32_t s = dense_find(&b->streams, stream_key(p->gstreams[i].ctx, p->gstreams[i].stream));
        if (s >= 0)
            m->skind[s] = p->gstreams[i].flag == SB_STREAM_NULL       ? SK_NULL
                          : p->gstreams[i].flag == SB_STREAM_BLOCKING ? SK_BLOCKING
                                                                      : SK_OWN;
    }
    return 0;
}

/* The work reached the GPU before the operation ahead of it on its stream ended: submitted plus
 * the fetch time, before that end. Submitted: in the recorded run, at the launch call's end; in
 * every other play, at its start (shifted), since the recording lengthens the calls (CUPTI's
 * records inside them) and how much of a call is its own is not known. */
static int arrived_first(const sb_replay_model *m, const rop *o, int64_t launched,
                         int64_t ahead_end, int recorded)
{
    return o->launch != NONE && launched + (recorded ? o->sub : 0) + m->fetch < ahead_end;
}

/* A copy or memset queued behind a kernel (ahead_kernel) that arrived first: its engine waits
 * for the kernel, and takes the run's learned time (m->behind) to start it. */
static int waits_for_engine(const sb_replay_model *m, const rop *o, int ahead_kernel,
                            int64_t launched, int64_t ahead_end, int recorded)
{
    return ahead_kernel && !o->kernel && arrived_first(m, o, launched, ahead_end, recorded);
}

/* The launch latency (launches made while the stream was idle: launch to start), the fetch
 * time (the same launches: the launch call's end to start) and the gap (operations queued
 * behind another: its end to their start), the run's medians; then the gap of a copy or memset
 * queued behind a kernel that reached the GPU before the kernel ended. Its engine waits for the
 * kernel and may take much longer to start it than the gap: on the H100 about 8 us after the
 * kernel against 1.4 for a 4-byte readback that came later, in processes whose recorded steps
 * were all one or the other (the recording slows the host, so a run may hold only late ones
 * where the unrecorded host is early). Fewer than three samples: the gap. (A kernel behind a
 * copy that came first started about 4 us after it, against 1.8, in one run; taking that too
 * made the replay of readbacks kept without their syncs much slower than measured: not used.) */
static int estimate(sb_replay_model *m)
{
    int64_t *lat = malloc((m->nops + 1) * sizeof *lat), *gap = malloc((m->nops + 1) * sizeof *gap);
    int64_t *fetch = malloc((m->nops + 1) * sizeof *fetch);
    int64_t *prev = malloc((m->nstreams + 1) * sizeof *prev);
    int8_t *prev_kernel = malloc(m->nstreams + 1);
    if (!lat || !gap || !fetch || !prev || !prev_kernel) {
        free(lat);
        free(gap);
        free(fetch);
        free(prev);
        free(prev_kernel);
        return -1;
    }
    size_t nl = 0, ng = 0, nf = 0, nb = 0;
    int64_t *behind = lat; /* pass 1 reuses lat, its median taken */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t s = 0; s < m->nstreams; s++)
            prev[s] = NONE;
        for (size_t i = 0; i < m->nitems; i++) {
            if (m->items[i].kind != IT_LAUNCH)
                continue;
            const rop *o = &m->ops[m->items[i].idx];
            int64_t pe = o->stream >= 0 ? prev[o->stream] : NONE;
            int idle = o->launch != NONE && (pe == NONE || o->launch >= pe);
            if (pass == 0 && idle && o->start >= o->launch) {
                lat[nl++] = o->start - o->launch;
                if (o->sub > 0 && o->start >= o->launch + o->sub)
                    fetch[nf++] = o->start - o->launch - o->sub;
            } else if (pass == 0 && pe != NONE && !idle && o->start >= pe) {
                gap[ng++] = o->start - pe;
            } else if (pass == 1 && pe != NONE && o->start >= pe &&
                       waits_for_engine(m, o, prev_kernel[o->stream], o->launch, pe, 1)) {
                behind[nb++] = o->start - pe;
            }
            if (o->stream >= 0) {
                prev[o->stream] = o->start + o->dur;
                prev_kernel[o->stream] = (int8_t)o->kernel;
            }
        }
        if (pass == 0) {
            m->lat = median(lat, nl, DEFAULT_LATENCY_NS);
            m->gap = median(gap, ng, DEFAULT_GAP_NS);
            m->fetch = median(fetch, nf, 0);
        }
    }
    m->behind = nb >= 3 ? median(behind, nb, m->gap) : m->gap;
    m->facts.launch_latency_us = (double)m->lat / 1e3;
    m->facts.gap_us = (double)m->gap / 1e3;
    m->facts.fetch_us = (double)m->fetch / 1e3;
    m->facts.copy_behind_kernel_us = (double)m->behind / 1e3;
    free(lat);
    free(gap);
    free(fetch);
    free(prev);
    free(prev_kernel);
    return 0;
}

static int play(sb_replay_model *m, const unsigned char *remove, int flags, sb_replay_result *r);

/* The wake-up of a sync that waits: the median, over the syncs that waited in the run, of the
 * time from the end of what they waited for to their return (three at least). */
static int estimate_wake(sb_replay_model *m)
{
    int64_t *v = malloc((m->nblocks + 1) * sizeof *v);
    if (!v)
        return -1;
    size_t n = 0;
    for (size_t b = 0; b < m->nblocks; b++)
        if (m->blocks[b].waited && m->blocks[b].tkind != TG_NONE)
            v[n++] = m->blocks[b].post;
    m->wake = n >= 3 ? median(v, n, NONE) : NONE;
    m->facts.wake_us = m->wake != NONE ? (double)m->wake / 1e3 : 0;
    free(v);
    return 0;
}

sb_replay_model *sb_replay_build(const sb_audit_proc *p, sb_replay_classes cls)
{
    sb_replay_model *m = calloc(1, sizeof *m);
    builder b = {.cls = cls};
    if (!m || make_indexes(p, &b) < 0 || build_items(m, p, &b) < 0)
        goto fail;
    m->nthreads = b.threads.n;
    m->nstreams = b.streams.n;
    m->nctx = b.ctxs.n;
    m->ncalls = p->ncalls;
    if (link_calls(m, p, cls) < 0 || stream_kinds(m, p, &b) < 0 || sb_replay_mark_inside(m) < 0)
        goto fail;
    size_t one = 1;
#define ALLOC(f, n) ((m->f = malloc(((n) > 0 ? (n) : one) * sizeof *m->f)) != NULL)
    if (!ALLOC(delta, m->nthreads) || !ALLOC(last_new, m->nthreads) ||
        !ALLOC(stream_end, m->nstreams) || !ALLOC(stream_dep, m->nstreams) ||
        !ALLOC(stream_kernel, m->nstreams) || !ALLOC(ctx_end, m->nctx) ||
        !ALLOC(ev_cap, m->nrecs) || !ALLOC(op_end, m->nops) || !ALLOC(scratch, 2 * m->nops) ||
        !ALLOC(gone, m->ncalls) || !ALLOC(base[0].reached, m->ncalls) || !ALLOC(ahead, m->ncalls) ||
        !ALLOC(ahead_thread_of, m->ncalls) || !ALLOC(ahead_one, m->ncalls) ||
        !ALLOC(per_thread, m->nthreads))
        goto fail;
#undef ALLOC
    if (estimate(m) < 0)
        goto fail;
    builder_free(&b);
    /* the identity play (the recorded run, exactly) fixes each operation's deviations and each
     * sync's wake-up; the baseline play (nothing removed, the audit's own time taken out) is
     * what every saving is taken from */
    sb_replay_result r;
    unsigned char *none = calloc(p->ncalls + 1, 1);
    m->wake = NONE;
    int sources = sb_replay_mark_sources(m);
    if (!none || sources < 0 || play(m, NULL, 0, &r) < 0 || estimate_wake(m) < 0 ||
        play(m, none, 0, &r) < 0 ||
        (sources && (!(m->base[1].reached = malloc((p->ncalls + 1) * sizeof(int64_t))) ||
                     play(m, none, SB_REPLAY_HOLD_BY_PRODUCERS, &r) < 0))) {
        free(none);
        sb_replay_free(m);
        return NULL;
    }
    free(none);
    return m;
fail:
    builder_free(&b);
    sb_replay_free(m);
    return NULL;
}

static int cmp_iv(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Busy time of the played operations: their durations when one stream ran them all, else the
 * union of their intervals. */
static int64_t busy_of(sb_replay_model *m)
{
    int64_t busy = 0;
    if (m->nstreams <= 1) {
        for (size_t i = 0; i < m->nops; i++)
            busy += m->op_end[i] != NONE ? m->ops[i].dur : 0;
        return busy;
    }
    size_t n = 0;
    for (size_t i = 0; i < m->nops; i++) {
        if (m->op_end[i] == NONE) /* not played */
            continue;
        m->scratch[2 * n] = m->op_end[i] - m->ops[i].dur;
        m->scratch[2 * n++ + 1] = m->op_end[i];
    }
    sb_sort(m->scratch, n, 2 * sizeof *m->scratch, cmp_iv);
    int64_t s = NONE, e = NONE;
    for (size_t i = 0; i < n; i++) {
        int64_t a = m->scratch[2 * i], z = m->scratch[2 * i + 1];
        if (e == NONE || a > e) {
            if (e != NONE)
                busy += e - s;
            s = a;
            e = z;
        } else if (z > e)
            e = z;
    }
    return e != NONE ? busy + e - s : busy;
}

/* One operation: its new start from its terms (the identity play fixes its deviations). */
static int64_t play_launch(sb_replay_model *m, rop *o, int identity, long *host_bound)
{
    int64_t a = NONE, b = NONE, c = NONE, d = NONE, launched = NONE, dep = NONE;
    if (o->launch != NONE) {
        launched = o->launch - (o->thread >= 0 ? m->delta[o->thread] : 0);
        a = launched + m->lat;
    } else {
        d = o->start; /* its launch is unknown: it stays where it was */
    }
    if (o->stream >= 0) {
        int64_t pe = m->stream_end[o->stream];
        if (pe != NONE)
            b = pe + (waits_for_engine(m, o, m->stream_kernel[o->stream], launched, pe, identity)
                          ? m->behind
                          : m->gap);
        c = m->stream_dep[o->stream];
        /* the legacy default stream waits for every blocking stream of its context, and they
         * for it */
        if (o->ctx >= 0 && m->skind[o->stream] == SK_NULL)
            c = max64(c, m->blocking_end[o->ctx]);
        else if (o->ctx >= 0 && m->skind[o->stream] == SK_BLOCKING)
            c = max64(c, m->null_end[o->ctx]);
        dep = c;
        if (c != NONE) /* an event's work ended: the start follows as a queued one would */
            c += m->gap;
    }
    if (identity) {
        int64_t t = max64(max64(a, b), max64(c, d));
        o->off_a = a == NONE ? 0 : a == t ? o->start - a : (o->start - a < 0 ? o->start - a : 0);
        int bound = a != NONE && a == t;
        o->off_b = b == NONE          ? 0
                   : b == t && !bound ? o->start - b
                                      : (o->start - b < 0 ? o->start - b : 0);
        bound |= b != NONE && b == t;
        o->off_c = c == NONE          ? 0
                   : c == t && !bound ? o->start - c
                                      : (o->start - c < 0 ? o->start - c : 0);
    }
    /* without the recording, launched work reaches the GPU sooner (the baseline's as every
     * play's), not before its launch */
    if (a != NONE)
        a = identity ? a + o->off_a : max64(a + o->off_a - m->start_extra, launched);
    if (b != NONE)
        b += o->off_b;
    if (c != NONE)
        c += o->off_c;
    int64_t start = max64(max64(a, b), max64(c, d));
    if (a != NONE && start == a)
        ++*host_bound;
    /* a readback reaches the GPU sooner still, but not before its launch, its stream's previous
     * work or what its stream waits for */
    if (!identity && o->readback && m->copy_extra > 0 && d == NONE) {
        int64_t floor = max64(launched, dep);
        /* (a copy that came first too: its learned wait was recorded, recording's share in it) */
        if (o->stream >= 0)
            floor = max64(floor, m->stream_end[o->stream]);
        start = max64(start - m->copy_extra, floor);
    }
    return start;
}

static int64_t target_end(const sb_replay_model *m, const rblock *k, int64_t all_end)
{
    switch (k->tkind) {
    case TG_STREAM:
        return k->target >= 0 ? m->stream_end[k->target] : NONE;
    case TG_CTX:
        return k->target >= 0 ? m->ctx_end[k->target] : all_end;
    case TG_EVENT:
        return m->ev_cap[k->target];
    case TG_OP:
        return m->op_end[k->target];
    default:
        return all_end;
    }
}

/* The median over SB_REPLAY_WINDOWS windows of equal count of ahead[0..n) (how much sooner the
 * play reached each removed call, cumulative) of each window's saving per call: a window's calls
 * a..b-1 saved what the play gained from reaching call a (the run's start, for the first
 * window) to reaching call b (the run's end, for the last: total). */
static double windows_median(const int64_t *ahead, size_t n, int64_t total, double ci[2])
{
    size_t k = n < SB_REPLAY_WINDOWS ? n : SB_REPLAY_WINDOWS;
    int64_t rate[SB_REPLAY_WINDOWS];
    for (size_t w = 0; w < k; w++) {
        size_t a = w * n / k, b = (w + 1) * n / k;
        rate[w] = ((b < n ? ahead[b] : total) - (a ? ahead[a] : 0)) / (int64_t)(b - a);
    }
    double mid = (double)median(rate, k, 0) / 1e3; /* sorts rate */
    size_t r = sb_median_ci_rank(k);
    ci[0] = (double)rate[r] / 1e3;
    ci[1] = (double)rate[k - 1 - r] / 1e3;
    return mid;
}

/* typical_us (replay.h) of n removed calls. Removed calls of several threads: each thread
 * reaches its calls on its own time, so the windows are taken over the thread that made at least
 * 90 % of them (a training loop's main thread; a few start-up syncs elsewhere), else the mean. */
static double typical_saving(sb_replay_model *m, size_t n, int several_threads, int64_t total,
                             double ci[2])
{
    ci[0] = ci[1] = 0;
    if (!n)
        return 0;
    if (!several_threads)
        return windows_median(m->ahead, n, total, ci);
    for (size_t t = 0; t < m->nthreads; t++)
        m->per_thread[t] = 0;
    int32_t most = -1;
    for (size_t i = 0; i < n; i++) {
        int32_t t = m->ahead_thread_of[i];
        if (t < 0)
            continue;
        m->per_thread[t]++;
        if (most < 0 || m->per_thread[t] > m->per_thread[most])
            most = t;
    }
    if (most < 0 || (double)m->per_thread[most] < 0.9 * (double)n) {
        ci[0] = ci[1] = (double)total / (double)n / 1e3; /* the mean: no windows */
        return ci[0];
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (m->ahead_thread_of[i] == most)
            m->ahead_one[k++] = m->ahead[i];
    return windows_median(m->ahead_one, k, total, ci);
}

void sb_replay_play_begin(sb_replay_model *m, const player *pl)
{
    for (size_t t = 0; t < m->nthreads; t++)
        m->delta[t] = 0, m->last_new[t] = NONE;
    for (size_t s = 0; s < m->nstreams; s++)
        m->stream_end[s] = m->stream_dep[s] = NONE, m->stream_kernel[s] = 0;
    for (size_t c = 0; c < m->nctx; c++)
        m->ctx_end[c] = m->null_end[c] = m->blocking_end[c] = NONE;
    for (size_t e = 0; e < m->nrecs; e++)
        m->ev_cap[e] = NONE;
    if (pl->identity)
        return;
    memcpy(m->gone, pl->remove, m->ncalls);
    for (size_t b = 0; b < m->nblocks; b++) {
        const rblock *k = &m->blocks[b];
        if (!pl->remove[k->call])
            continue;
        for (int32_t r = 0; !pl->keep && r < k->rb_n; r++)
            m->gone[m->rb[k->rb_first + r]] = 1;
        if (k->pair >= 0)
            m->gone[k->pair] = 1;
    }
}

/* An operation: played at its new start (a readback removed with its call is not played), its
 * end ordering its stream, its context and the legacy stream's ordering. */
static void play_op(sb_replay_model *m, player *pl, int32_t idx)
{
    rop *o = &m->ops[idx];
    if (!pl->identity && !pl->keep && o->readback && o->call >= 0 && m->gone[o->call]) {
        m->op_end[idx] = NONE;
        return;
    }
    int64_t start = play_launch(m, o, pl->identity, &pl->host_bound);
    int64_t end = start + o->dur;
    m->op_end[idx] = end;
    if (o->stream >= 0) {
        m->stream_end[o->stream] = end;
        m->stream_kernel[o->stream] = (int8_t)o->kernel;
    }
    if (o->ctx >= 0) {
        m->ctx_end[o->ctx] = max64(m->ctx_end[o->ctx], end);
        if (o->stream >= 0 && m->skind[o->stream] == SK_NULL)
            m->null_end[o->ctx] = end;
        else if (o->stream >= 0 && m->skind[o->stream] == SK_BLOCKING)
            m->blocking_end[o->ctx] = max64(m->blocking_end[o->ctx], end);
    }
    pl->all_end = max64(pl->all_end, end);
    pl->gpu_first = start < pl->gpu_first ? start : pl->gpu_first;
    if (o->launch != NONE && o->thread >= 0) {
        m->last_new[o->thread] = max64(m->last_new[o->thread], o->launch - m->delta[o->thread]);
        pl->first = o->launch < pl->first ? o->launch : pl->first;
    }
}

/* When this play reached a call (typical_us): the baseline play notes it, a later play how much
 * sooner it reached each removed call. */
static void note_reached(sb_replay_model *m, player *pl, const rblock *k, int64_t start)
{
    int64_t at = max64(start, pl->all_end);
    if (!pl->base->have) {
        pl->base->reached[k->call] = at;
    } else if (pl->remove[k->call]) {
        m->ahead_thread_of[pl->nahead] = k->thread;
        m->ahead[pl->nahead++] = pl->base->reached[k->call] - at;
        pl->ahead_thread = pl->nahead == 1 || pl->ahead_thread == k->thread ? k->thread : -2;
    }
}

/* A blocking call's new end: when what it waits for ends, plus its wake-up (the identity play
 * fixes both from the run). */
static int64_t blocked_until(sb_replay_model *m, const player *pl, rblock *k, int64_t start)
{
    int64_t g = target_end(m, k, pl->all_end);
    if (pl->identity) {
        k->gshift = g != NONE && g > k->end ? g - k->end : 0;
        int64_t gc = g != NONE ? g - k->gshift : NONE;
        k->post = k->end - max64(k->start, gc);
        k->waited = gc != NONE && gc > k->start;
    }
    int64_t ge = g != NONE ? g - k->gshift : NONE, post = k->post;
    /* a sync that found the GPU done in the run but waits now: a waiting sync's wake-up (the
     * audit's own time made it late in the run) */
    if (!pl->identity && !k->waited && ge > start && m->wake != NONE)
        post = max64(post, m->wake);
    return max64(start, ge) + post;
}

/* A recorded call: gone (it takes no time), one that did not block (its own time), or one that
 * waits; its thread runs on shifted by what it gained. */
static void play_call(sb_replay_model *m, player *pl, int32_t idx)
{
    rblock *k = &m->blocks[idx];
    int64_t d = k->thread >= 0 ? m->delta[k->thread] : 0;
    int64_t start = k->start - d, end;
    if (!pl->identity)
        note_reached(m, pl, k, start);
    if (!pl->identity && m->gone[k->call])
        end = start;
    else if (k->tkind == TG_NONE)
        end = start + k->post; /* it did not block: it takes its own time */
    else
        end = blocked_until(m, pl, k, start);
    if (k->thread >= 0) {
        m->delta[k->thread] = k->end - end;
        m->last_new[k->thread] = max64(m->last_new[k->thread], end);
    }
    pl->first = k->start < pl->first ? k->start : pl->first;
}

/* A stretch the recording was off: unrecorded, and for the whole process: its time on the host,
 * begun on every thread once the recorded GPU work is done as far as it was in the run when the
 * recording went off (what the GPU did then is unknown; recording turns end each recorded
 * repetition with its work done, so this holds back a host that removed syncs let run ahead). */
static void play_pause(sb_replay_model *m, const player *pl, int32_t idx)
{
    rpause *z = &m->pauses[idx];
    if (pl->identity) {
        z->lag = max64(pl->all_end - z->start, 0);
        return;
    }
    int64_t ready = pl->all_end != NONE ? pl->all_end - z->lag : NONE;
    for (size_t t = 0; t < m->nthreads; t++) {
        int64_t end = max64(z->start - m->delta[t], ready) + (z->end - z->start);
        m->delta[t] = z->end - end;
        if ((int32_t)t == z->thread)
            m->last_new[t] = max64(m->last_new[t], end);
    }
}

/* A rank's part in a collective, alone or in the identity play: nothing (its recorded waits
 * play it). In a job: its arrival noted, or its end once every rank's part has arrived (1 until
 * then). */
static int play_part(sb_replay_model *m, player *pl, const item *it)
{
    if (!pl->meet || pl->identity)
        return 0;
    const rpart *pt = &m->parts[it->idx];
    if (it->kind != IT_COLL) {
        sb_replay_meet_arrive(pl->meet, pl->rank, pt, pt->arrive - m->delta[pt->thread]);
        return 0;
    }
    int64_t end;
    if (!sb_replay_meet_complete(pl->meet, pl->rank, pt, &end))
        return 1;
    m->delta[pt->thread] = pt->complete - end;
    m->last_new[pt->thread] = max64(m->last_new[pt->thread], end);
    return 0;
}

int sb_replay_play_item(sb_replay_model *m, player *pl, const item *it)
{
    switch (it->kind) {
    case IT_LAUNCH:
        play_op(m, pl, it->idx);
        break;
    case IT_RECORD: {
        const rlink *e = &m->recs[it->idx];
        m->ev_cap[it->idx] = e->stream >= 0 ? m->stream_end[e->stream] : NONE;
        break;
    }
    case IT_WAIT: {
        const rlink *w = &m->waits[it->idx];
        if (w->stream >= 0 && w->event >= 0)
            m->stream_dep[w->stream] = max64(m->stream_dep[w->stream], m->ev_cap[w->event]);
        break;
    }
    case IT_CALL:
        play_call(m, pl, it->idx);
        break;
    case IT_PAUSE:
        play_pause(m, pl, it->idx);
        break;
    case IT_HAND:
        pl->holds += sb_replay_play_hand(m, it->idx, pl->held);
        break;
    case IT_PRE:
    case IT_OH: /* the audit's own time: taken out of every play but the identity */
        if (!pl->identity && m->ohs[it->idx].thread >= 0)
            m->delta[m->ohs[it->idx].thread] += m->ohs[it->idx].oh;
        break;
    case IT_ARRIVE_HAND:
    case IT_ARRIVE_CALL:
    case IT_COLL:
        return play_part(m, pl, it);
    }
    return 0;
}

/* The play's figures against the baseline play's (which this play is, when there is none yet:
 * it keeps its own as the baseline). */
static void play_result(sb_replay_model *m, player *pl, sb_replay_result *r)
{
    int64_t host_last = NONE, all_end = pl->all_end;
    for (size_t t = 0; t < m->nthreads; t++)
        host_last = max64(host_last, m->last_new[t]);
    int64_t busy = busy_of(m);
    int64_t gpu_first = pl->gpu_first == INT64_MAX ? NONE : pl->gpu_first, first = pl->first;
    if (first == INT64_MAX || (gpu_first != NONE && gpu_first < first))
        first = gpu_first;
    int64_t last = max64(host_last, all_end);
    rbase *b = pl->base;
    if (!pl->identity && !b->have) {
        b->first = first;
        b->host_last = host_last;
        b->gpu_first = gpu_first;
        b->gpu_last = all_end;
        b->busy = busy;
    }
    int64_t orig_last = max64(b->host_last, b->gpu_last);
    int64_t orig_idle = b->gpu_last != NONE ? (b->gpu_last - b->gpu_first) - b->busy : 0;
    int64_t idle = all_end != NONE ? (all_end - gpu_first) - busy : 0;
    int64_t total = last != NONE && orig_last != NONE ? orig_last - last : 0;
    memset(r, 0, sizeof *r);
    r->wall_us = (double)total / 1e3;
    r->idle_us = (double)(orig_idle - idle) / 1e3;
    r->span_us = last != NONE && first != NONE ? (double)(last - first) / 1e3 : 0;
    double ci[2];
    r->typical_us = typical_saving(m, pl->nahead, pl->ahead_thread == -2, total, ci);
    r->typical_lo_us = ci[0];
    r->typical_hi_us = ci[1];
    r->host_pct = m->nops ? 100.0 * (double)pl->host_bound / (double)m->nops : 0;
    r->gpu_busy_pct = last != NONE && first != NONE && last > first
                          ? 100.0 * (double)busy / (double)(last - first)
                          : 0;
    pl->last = last;
}

player sb_replay_player(sb_replay_model *m, const unsigned char *remove, int flags)
{
    player pl = {.remove = remove,
                 .identity = remove == NULL,
                 .keep = (flags & SB_REPLAY_KEEP_READBACKS) != 0,
                 .held = (flags & SB_REPLAY_HOLD_BY_PRODUCERS) != 0,
                 .all_end = NONE,
                 .gpu_first = INT64_MAX,
                 .first = INT64_MAX,
                 .ahead_thread = -1};
    /* a model with no source keeps one baseline: both policies play alike */
    pl.base = &m->base[pl.held && m->base[1].reached];
    return pl;
}

int sb_replay_play_end(sb_replay_model *m, player *pl, sb_replay_result *r)
{
    play_result(m, pl, r);
    if (!pl->identity)
        pl->base->have = 1; /* the first play of a policy is its baseline */
    r->producer_holds = pl->holds;
    if (pl->remove &&
        (r->threads_unmodelled = sb_replay_unmodelled_threads(m, pl->remove, &r->producers)) < 0)
        return -1;
    return 0;
}

/* remove NULL: the identity play (the recorded run: deviations fixed, the audit's own time
 * kept); else the run without the audit's own time and without the removed calls. */
static int play(sb_replay_model *m, const unsigned char *remove, int flags, sb_replay_result *r)
{
    player pl = sb_replay_player(m, remove, flags);
    sb_replay_play_begin(m, &pl);
    for (size_t i = 0; i < m->nitems; i++)
        sb_replay_play_item(m, &pl, &m->items[i]);
    return sb_replay_play_end(m, &pl, r);
}

int sb_replay_run(sb_replay_model *m, const unsigned char *remove, int flags, sb_replay_result *r)
{
    return remove ? play(m, remove, flags, r) : -1;
}
