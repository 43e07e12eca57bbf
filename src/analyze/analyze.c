/* Classification, cost and attribution of every recorded call; the rows (process x class x
 * range x site), the per-process summary and the range instances. */
#include "analyze/analyze.h"
#include "analyze/frameworks.h"
#include "base/arrays.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/stats.h"

static int cmp_stack(const void *a, const void *b)
{
    const sb_audit_stack *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static int cmp_range(const void *a, const void *b)
{
    const sb_audit_range *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

sb_audit_range *sb_audit_find_range(const sb_audit_proc *p, int64_t tid, int64_t id)
{
    size_t lo = 0, hi = p->nranges;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        sb_audit_range *r = &p->ranges[mid];
        if (r->tid < tid || (r->tid == tid && r->id < id))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->nranges && p->ranges[lo].tid == tid && p->ranges[lo].id == id ? &p->ranges[lo]
                                                                                 : NULL;
}

const sb_audit_range_info *sb_audit_find_range_info(const sb_audit_proc_result *r, int64_t tid,
                                                    int64_t id)
{
    const sb_audit_range *g = sb_audit_find_range(r->proc, tid, id);
    return g && r->ranges ? &r->ranges[g - r->proc->ranges] : NULL;
}

/* What the analysis of one process needs beside the process itself. */
typedef struct {
    sb_keyed *ctx_dev; /* ctx -> dev (idx holds the dev) */
    size_t nctx;
    sb_keyed *by_rcorr, *by_corr; /* copies */
    size_t nrcorr, ncorr;
} lookups;

static void free_lookups(lookups *l)
{
    free(l->ctx_dev);
    free(l->by_rcorr);
    free(l->by_corr);
}

static int build_timelines(sb_audit_proc_result *res)
{
    const sb_audit_proc *p = res->proc;
    sb_audit_iv *iv = malloc((p->nacts ? p->nacts : 1) * sizeof *iv);
    sb_keyed *devs = malloc((p->nacts ? p->nacts : 1) * sizeof *devs);
    if (!iv || !devs) {
        free(iv);
        free(devs);
        return -1;
    }
    for (size_t i = 0; i < p->nacts; i++)
        devs[i] = (sb_keyed){p->acts[i].dev, i};
    sb_sort(devs, p->nacts, sizeof *devs, sb_keyed_cmp);
    size_t ndev = 0;
    for (size_t i = 0; i < p->nacts; i++)
        if (i == 0 || devs[i].key != devs[i - 1].key)
            ndev++;
    int rc = 0;
    res->tl = calloc(ndev ? ndev : 1, sizeof *res->tl);
    if (!res->tl)
        rc = -1;
    for (size_t i = 0; !rc && i < p->nacts;) {
        size_t j = i, n = 0;
        for (; j < p->nacts && devs[j].key == devs[i].key; j++)
            iv[n++] = (sb_audit_iv){p->acts[devs[j].idx].start, p->acts[devs[j].idx].end};
        sb_audit_timeline *t = &res->tl[res->ntl++];
        t->dev = (int)devs[i].key;
        rc = sb_audit_timeline_build(t, iv, n);
        i = j;
    }
    for (size_t i = 0; !rc && i < p->nacts; i++)
        iv[i] = (sb_audit_iv){p->acts[i].start, p->acts[i].end};
    if (!rc) {
        res->all.dev = -1;
        rc = sb_audit_timeline_build(&res->all, iv, p->nacts);
    }
    free(iv);
    free(devs);
    return rc;
}

static int build_lookups(const sb_audit_proc *p, lookups *l)
{
    size_t n = p->nacts ? p->nacts : 1;
    l->ctx_dev = malloc(n * sizeof *l->ctx_dev);
    l->by_rcorr = malloc(n * sizeof *l->by_rcorr);
    l->by_corr = malloc(n * sizeof *l->by_corr);
    if (!l->ctx_dev || !l->by_rcorr || !l->by_corr)
        return -1;
    for (size_t i = 0; i < p->nacts; i++) {
        const sb_audit_act *a = &p->acts[i];
        l->ctx_dev[l->nctx++] = (sb_keyed){a->ctx, (size_t)a->dev};
        if (a->kind != SB_ACT_COPY)
            continue;
        if (a->rcorr)
            l->by_rcorr[l->nrcorr++] = (sb_keyed){a->rcorr, i};
        l->by_corr[l->ncorr++] = (sb_keyed){a->corr, i};
    }
    sb_sort(l->ctx_dev, l->nctx, sizeof *l->ctx_dev, sb_keyed_cmp);
    sb_sort(l->by_rcorr, l->nrcorr, sizeof *l->by_rcorr, sb_keyed_cmp);
    sb_sort(l->by_corr, l->ncorr, sizeof *l->by_corr, sb_keyed_cmp);
    return 0;
}

static const sb_audit_timeline *call_timeline(const sb_audit_proc_result *res, const lookups *l,
                                              const sb_audit_call *c)
{
    const sb_keyed *k = c->ctx ? sb_keyed_first(l->ctx_dev, l->nctx, c->ctx) : NULL;
    if (k)
        for (size_t i = 0; i < res->ntl; i++)
            if (res->tl[i].dev == (int)k->idx)
                return &res->tl[i];
    return &res->all;
}

static const sb_audit_act *matched_copy(const sb_audit_proc *p, const lookups *l,
                                        const sb_audit_call *c)
{
    /* CUPTI fills runtimeCorrelationId only when driver calls are recorded too; otherwise a
     * runtime call's copy carries the runtime's id as its correlationId (seen on the H100) */
    const sb_keyed *k = c->drv ? NULL : sb_keyed_first(l->by_rcorr, l->nrcorr, c->corr);
    if (k)
        return &p->acts[k->idx];
    k = sb_keyed_first(l->by_corr, l->ncorr, c->corr);
    if (!k || (!c->drv && p->acts[k->idx].rcorr)) /* that id is a driver call's */
        return NULL;
    return &p->acts[k->idx];
}

static int is_pageable(const char *s)
{
    return s && strcmp(s, "pageable") == 0;
}

static void classify(const sb_audit_proc_result *res, const lookups *l, const sb_audit_call *c,
                     sb_audit_call_info *ci, const sb_audit_opts *o)
{
    const sb_audit_proc *p = res->proc;
    const sb_audit_timeline *t = call_timeline(res, l, c);
    sb_audit_class fixed;
    int dtod;
    sb_audit_family fam = sb_audit_classify_name(c->api, &fixed, &dtod);
    /* without the kernels the GPU's busy timeline is unknown (outside a window of GPU
     * activity too): no call is judged by it */
    int gpu_known = p->kernels && sb_audit_in_gpu_window(p, c->start);
    int waited = fam != SB_FAM_FIXED && gpu_known &&
                 sb_audit_waited(t, c->start, c->end, o->waited_min_us, o->waited_slack_us);
    const sb_audit_act *copy =
        fam == SB_FAM_COPY || fam == SB_FAM_COPY_ASYNC ? matched_copy(p, l, c) : NULL;
    switch (fam) {
    case SB_FAM_FIXED:
        ci->cls = fixed;
        break;
    case SB_FAM_COPY:
    case SB_FAM_COPY_ASYNC:
        if (!copy) { /* what the call alone says (its direction, the driver's answer about its
                      * host pointer): the class the injection library's blocks count too */
            ci->cls = sb_audit_class_alone(c->api, c->copy, c->host);
            if (fam == SB_FAM_COPY && ci->cls == SB_AUDIT_NONE && waited)
                ci->cls = SB_AUDIT_WAITED; /* a device-to-device copy that waited */
        } else if (fam == SB_FAM_COPY) {
            dtod = dtod || strcmp(copy->ckind, "DtoD") == 0 || strcmp(copy->ckind, "PtoP") == 0;
            ci->cls = !dtod ? SB_AUDIT_COPY_SYNC : waited ? SB_AUDIT_WAITED : SB_AUDIT_NONE;
        } else if (is_pageable(copy->src) || is_pageable(copy->dst)) {
            ci->cls = SB_AUDIT_COPY_PAGEABLE;
        } else { /* into pinned memory: it does not wait (.item()'s copy; a GPU that went idle
                  * while CUPTI slowed the call down is a coincidence, not a wait) */
            ci->cls = SB_AUDIT_NONE;
        }
        break;
    default:
        ci->cls = waited ? SB_AUDIT_WAITED : SB_AUDIT_NONE;
    }
    ci->bubble_ns =
        sb_audit_blocking(ci->cls) && gpu_known ? sb_audit_bubble(t, c->start, c->end) : 0;
}

static const sb_audit_call_info *g_sort_calls; /* qsort has no context argument in C11 */

static int cmp_call_key(const void *a, const void *b)
{
    const sb_audit_call_info *x = &g_sort_calls[*(const size_t *)a];
    const sb_audit_call_info *y = &g_sort_calls[*(const size_t *)b];
    if (x->cls != y->cls)
        return x->cls < y->cls ? -1 : 1;
    if (x->made->compile != y->made->compile) /* compile time apart (compile_group.c) */
        return x->made->compile - y->made->compile;
    if (!x->wake != !y->wake) /* a line's own calls apart from those it waited for */
        return !x->wake ? -1 : 1;
    int r = strcmp(x->range, y->range);
    if (r || (r = strcmp(x->site, y->site)) || (r = strcmp(x->made->via_site, y->made->via_site)))
        return r;
    /* one row per operation and fix at a site and its line inside a library (a print(t) line
     * reads a count and values); both interned: equal text, equal pointer */
    uintptr_t p = (uintptr_t)x->made->op, q = (uintptr_t)y->made->op;
    if (p != q)
        return p < q ? -1 : 1;
    p = (uintptr_t)x->made->fix;
    q = (uintptr_t)y->made->fix;
    return p < q ? -1 : p > q;
}

static int build_rows(sb_audit_proc_result *res)
{
    const sb_audit_proc *p = res->proc;
    size_t n = 0;
    size_t *idx = malloc((p->ncalls ? p->ncalls : 1) * sizeof *idx);
    double *d = malloc((p->ncalls ? p->ncalls : 1) * sizeof *d);
    res->rows = malloc((p->ncalls ? p->ncalls : 1) * sizeof *res->rows);
    if (!idx || !d || !res->rows) {
        free(idx);
        free(d);
        return -1;
    }
    for (size_t i = 0; i < p->ncalls; i++)
        if (res->calls[i].cls != SB_AUDIT_NONE)
            idx[n++] = i;
    g_sort_calls = res->calls;
    sb_sort(idx, n, sizeof *idx, cmp_call_key);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        sb_audit_row *r = &res->rows[res->nrows++];
        const sb_audit_call_info *first = &res->calls[idx[i]];
        memset(r, 0, sizeof *r);
        r->cls = first->cls;
        r->range = first->range;
        r->site = first->site;
        r->native = first->native;
        r->source = first->source;
        r->pyframe = first->pyframe;
        r->rule = first->rule;
        r->made = *first->made;
        r->waiter = sb_audit_call_waiter(p, first);
        for (; j < n && cmp_call_key(&idx[i], &idx[j]) == 0; j++) {
            const sb_audit_call *c = &p->calls[idx[j]];
            d[j - i] = (double)(c->end - c->start) / 1e3;
            r->blocked_total_us += d[j - i];
            r->bubble_total_us += (double)res->calls[idx[j]].bubble_ns / 1e3;
            r->bubble_calls += sb_audit_in_gpu_window(p, c->start);
        }
        r->count = (long)(j - i);
        r->bubble_total_us = sb_audit_scale_bubbles(r->bubble_total_us, r->count, r->bubble_calls);
        sb_sort_doubles(d, j - i);
        r->blocked_median_us = sb_percentile_sorted(d, (int)(j - i), 0.5);
        r->blocked_p95_us = sb_percentile_sorted(d, (int)(j - i), 0.95);
        i = j;
    }
    free(idx);
    free(d);
    return 0;
}

static void span(sb_audit_proc_result *res, int64_t t, int *any)
{
    if (!*any || t < res->t_first)
        res->t_first = t;
    if (!*any || t > res->t_last)
        res->t_last = t;
    *any = 1;
}

static void lifetime(sb_audit_proc_result *res)
{
    const sb_audit_proc *p = res->proc;
    int any = 0;
    if (p->has_proc && p->clock_ns)
        span(res, p->clock_ns, &any);
    for (size_t i = 0; i < p->ncalls; i++) {
        span(res, p->calls[i].start, &any);
        span(res, p->calls[i].end, &any);
    }
    for (size_t i = 0; i < p->nacts; i++) {
        span(res, p->acts[i].start, &any);
        span(res, p->acts[i].end, &any);
    }
    for (size_t i = 0; i < p->napis; i++) {
        span(res, p->apis[i].start, &any);
        span(res, p->apis[i].end, &any);
    }
    for (size_t i = 0; i < p->nranges; i++) {
        span(res, p->ranges[i].start, &any);
        if (p->ranges[i].end >= 0)
            span(res, p->ranges[i].end, &any);
    }
    res->lifetime_us = any ? (double)(res->t_last - res->t_first) / 1e3 : 0;
}

/* The instance (tid, id) among p->ranges[0..n) (sorted), or NULL. */
static sb_audit_range *find_range_n(const sb_audit_proc *p, size_t n, int64_t tid, int64_t id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const sb_audit_range *r = &p->ranges[mid];
        if (r->tid < tid || (r->tid == tid && r->id < id))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && p->ranges[lo].tid == tid && p->ranges[lo].id == id ? &p->ranges[lo] : NULL;
}

/* A range a call names that was never recorded: the call, and the range's place in its list. */
typedef struct {
    int64_t tid, id;
    size_t call;
    int k;
} unrecorded;

static int cmp_unrecorded(const void *a, const void *b)
{
    const unrecorded *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    if (x->call != y->call)
        return x->call < y->call ? -1 : 1;
    return x->k - y->k;
}

static int cmp_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* nvtxRangeStart/End ranges belong to no thread (they may end on another one): each counts
 * the blocking calls of every thread of the process that started inside it, and their blocked
 * time: the calls as (start, duration) sorted by start, prefix sums of the durations. n log n. */
static int count_startend(sb_audit_proc_result *res, const sb_audit_opts *o)
{
    sb_audit_proc *p = res->proc;
    size_t nse = 0, n = 0;
    for (size_t i = 0; i < p->nranges; i++)
        nse += p->ranges[i].startend;
    if (!nse)
        return 0;
    int64_t *sd = malloc((p->ncalls ? p->ncalls : 1) * 2 * sizeof *sd);
    int64_t *sum = malloc((p->ncalls + 1) * sizeof *sum);
    if (!sd || !sum) {
        free(sd);
        free(sum);
        return -1;
    }
    for (size_t i = 0; i < p->ncalls; i++)
        if (sb_audit_gated(o, &res->calls[i])) {
            sd[2 * n] = p->calls[i].start;
            sd[2 * n + 1] = p->calls[i].end - p->calls[i].start;
            n++;
        }
    sb_sort(sd, n, 2 * sizeof *sd, cmp_int64); /* by start (the pair's first member) */
    sum[0] = 0;
    for (size_t i = 0; i < n; i++)
        sum[i + 1] = sum[i] + sd[2 * i + 1];
    for (size_t i = 0; i < p->nranges; i++) {
        const sb_audit_range *r = &p->ranges[i];
        if (!r->startend)
            continue;
        int64_t end = r->end >= r->start ? r->end : INT64_MAX;
        size_t lo = sb_count_before(sd, n, 2, r->start, 0), hi = sb_count_before(sd, n, 2, end, 1);
        res->ranges[i].blocking = (long)(hi - lo);
        res->ranges[i].blocked_ns = sum[hi] - sum[lo];
    }
    free(sd);
    free(sum);
    return 0;
}

/* Range instances: the recorded ones, and those only calls name (a killed process never wrote
 * them: the first call that names one gives its name, start and depth); each instance's count
 * of the blocking calls the gate counts, nested ranges included. n log n in the calls and
 * ranges. */
static int count_ranges(sb_audit_proc_result *res, const sb_audit_opts *o)
{
    sb_audit_proc *p = res->proc;
    sb_sort(p->ranges, p->nranges, sizeof *p->ranges, cmp_range);
    const size_t recorded = p->nranges;
    unrecorded *u = NULL;
    size_t nu = 0, cap = 0;
    for (size_t i = 0; i < p->ncalls; i++) {
        const sb_audit_call *c = &p->calls[i];
        for (int k = 0; k < c->nranges; k++) {
            if (find_range_n(p, recorded, c->tid, c->ranges[k].id))
                continue;
            if (sb_grow(&u, &cap, nu, sizeof *u) < 0) {
                free(u);
                return -1;
            }
            u[nu++] = (unrecorded){c->tid, c->ranges[k].id, i, k};
        }
    }
    sb_sort(u, nu, sizeof *u, cmp_unrecorded);
    for (size_t i = 0; i < nu; i++) {
        if (i && u[i].tid == u[i - 1].tid && u[i].id == u[i - 1].id)
            continue; /* the same instance, named by a later call */
        if (sb_grow(&p->ranges, &p->cap_ranges, p->nranges, sizeof *p->ranges) < 0) {
            free(u);
            return -1;
        }
        const sb_audit_call *c = &p->calls[u[i].call];
        p->ranges[p->nranges++] = (sb_audit_range){.tid = c->tid,
                                                   .id = c->ranges[u[i].k].id,
                                                   .name = c->ranges[u[i].k].name,
                                                   .start = c->start,
                                                   .end = -1,
                                                   .depth = u[i].k};
    }
    free(u);
    if (p->nranges > recorded)
        sb_sort(p->ranges, p->nranges, sizeof *p->ranges, cmp_range);
    if (!(res->ranges = calloc(p->nranges ? p->nranges : 1, sizeof *res->ranges)))
        return -1;
    for (size_t i = 0; i < p->ncalls; i++) {
        const sb_audit_call *c = &p->calls[i];
        if (!sb_audit_gated(o, &res->calls[i]))
            continue;
        for (int k = 0; k < c->nranges; k++) {
            const sb_audit_range *r = sb_audit_find_range(p, c->tid, c->ranges[k].id);
            if (r) {
                res->ranges[r - p->ranges].blocking++;
                res->ranges[r - p->ranges].blocked_ns += c->end - c->start;
            }
        }
    }
    return count_startend(res, o); /* it sets its ranges' counts whole */
}

static int cmp_range_name(const void *a, const void *b)
{
    return strcmp(((const sb_audit_range_sum *)a)->name, ((const sb_audit_range_sum *)b)->name);
}

/* A range instance and what the analysis counted of it. */
typedef struct {
    const sb_audit_range *r;
    const sb_audit_range_info *ri;
} counted_range;

/* Names are interned (one pointer per name): instances sorted by that pointer fall into runs
 * of one name, so any number of names and instances costs n log n. */
static int cmp_range_ptr(const void *a, const void *b)
{
    const counted_range *x = a, *y = b;
    uintptr_t p = (uintptr_t)x->r->name, q = (uintptr_t)y->r->name;
    return p < q ? -1 : p > q;
}

static int sum_ranges(sb_audit_analysis *an)
{
    size_t total = 0;
    for (size_t i = 0; i < an->nprocs; i++)
        total += an->procs[i].proc->nranges;
    counted_range *all = malloc((total ? total : 1) * sizeof *all);
    sb_audit_range_sum *s = malloc((total ? total : 1) * sizeof *s);
    if (!all || !s) {
        free(all);
        free(s);
        return -1;
    }
    size_t m = 0, n = 0;
    for (size_t i = 0; i < an->nprocs; i++)
        for (size_t k = 0; k < an->procs[i].proc->nranges; k++)
            all[m++] = (counted_range){&an->procs[i].proc->ranges[k], &an->procs[i].ranges[k]};
    sb_sort(all, m, sizeof *all, cmp_range_ptr);
    for (size_t k = 0; k < m; k++) {
        const sb_audit_range *r = all[k].r;
        long blocking = all[k].ri->blocking;
        if (!n || s[n - 1].name != r->name)
            s[n++] = (sb_audit_range_sum){.name = r->name, .domain = r->domain ? r->domain : ""};
        s[n - 1].instances++;
        s[n - 1].total_blocking += blocking;
        if (blocking > s[n - 1].max_blocking)
            s[n - 1].max_blocking = blocking;
    }
    free(all);
    if (n)
        sb_sort(s, n, sizeof *s, cmp_range_name);
    an->range_sums = s;
    an->nrange_sums = n;
    return 0;
}

static int analyze_calls(sb_audit_run *run, sb_audit_proc_result *res, const sb_audit_opts *o)
{
    sb_audit_proc *p = res->proc;
    sb_sort(p->stacks, p->nstacks, sizeof *p->stacks, cmp_stack);
    if (build_timelines(res) < 0)
        return -1;
    lookups l = {0};
    if (build_lookups(p, &l) < 0) {
        free_lookups(&l);
        return -1;
    }
    const char *empty = sb_audit_intern(&run->strs, "");
    res->calls = calloc(p->ncalls ? p->ncalls : 1, sizeof *res->calls);
    res->stack_used = calloc(p->nstacks ? p->nstacks : 1, 1);
    if (!empty || !res->calls || !res->stack_used) {
        free_lookups(&l);
        return -1;
    }
    for (size_t i = 0; i < p->ncalls; i++) {
        const sb_audit_call *c = &p->calls[i];
        sb_audit_call_info *ci = &res->calls[i];
        classify(res, &l, c, ci, o);
        ci->range = c->nranges ? c->ranges[c->nranges - 1].name : empty;
        if (sb_audit_blocking(ci->cls) && c->stack >= 0) {
            const sb_audit_stack *s = sb_audit_find_stack(p, c->stack);
            if (s)
                res->stack_used[s - p->stacks] = 1;
        }
    }
    free_lookups(&l);
    return 0;
}

/* Where the call was made, as the user sees it: the Python line when the thread ran Python
 * (its source text beside it), and the line inside a library that made it; the native frame
 * otherwise; then what made it and the fix (rules.c). Once per distinct call site
 * (callsites.c): the calls of one site share what it found. */
static int attribute(sb_audit_analysis *an, const sb_audit_proc_result *res, size_t i)
{
    const sb_audit_proc *p = res->proc;
    const sb_audit_call *c = &p->calls[i];
    sb_audit_call_info *ci = &res->calls[i];
    sb_audit_run *run = an->run;
    int added;
    sb_audit_callsite *cs = sb_audit_callsite_of(&an->callsites, p, c, ci, &added);
    if (!cs)
        return -1;
    if (!added) {
        sb_audit_callsite_give(cs, ci);
        return 0;
    }
    ci->native = c->stack >= 0 ? sb_audit_site(&run->strs, sb_audit_find_stack(p, c->stack))
                               : sb_audit_site(&run->strs, NULL);
    ci->site = ci->native;
    ci->source = sb_audit_intern(&run->strs, "");
    if (!ci->native || !ci->source)
        return -1;
    int64_t py = sb_audit_call_py(p, c, ci);
    const sb_audit_pystack *ps = py >= 0 ? sb_audit_find_pystack(p, py) : NULL;
    if (ps && (ci->pyframe = sb_audit_py_pick(ps, an->opts.py_innermost))) {
        ci->site = sb_audit_py_site(&run->strs, ci->pyframe);
        ci->source = sb_audit_py_source(an, ci->pyframe);
        if (!ci->site || !ci->source)
            return -1;
    }
    ci->made = &cs->made;
    if (sb_audit_py_made(an, ps, ci, &cs->made) < 0)
        return -1;
    ci->rule = sb_audit_rule_for(p, c, ci);
    if (sb_fw_attribute(an, ps, ci, &cs->made, &cs->fw_rule) < 0 ||
        sb_audit_name_call(&run->strs, ci, &cs->made) < 0 ||
        sb_audit_compile_name(an, res->compile_worker, ps, ci, &cs->made) < 0)
        return -1;
    sb_audit_callsite_keep(cs, ci);
    return 0;
}

static int cmp_pystack(const void *a, const void *b)
{
    const sb_audit_pystack *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* The window of GPU activity: how long it was open, and how many instances of its range the run
 * began (what its first and last are among). */
static void window_sums(sb_audit_proc_result *res)
{
    const sb_audit_proc *p = res->proc;
    if (!p->windowed)
        return;
    int64_t end = p->window_end >= 0 ? p->window_end : res->t_last;
    res->window_us =
        p->window_start >= 0 && end > p->window_start ? (double)(end - p->window_start) / 1e3 : 0;
    for (size_t i = 0; i < p->nranges; i++)
        res->range_instances +=
            sb_gpu_window_matches(&p->window, p->ranges[i].name, p->ranges[i].domain);
}

static int summarize(sb_audit_analysis *an, sb_audit_proc_result *res)
{
    sb_audit_proc *p = res->proc;
    sb_sort(p->pystacks, p->npystacks, sizeof *p->pystacks, cmp_pystack);
    res->compile_worker = sb_audit_compile_worker(p);
    if (sb_audit_waiter_sites(p, res->calls) < 0)
        return -1;
    for (size_t i = 0; i < p->ncalls; i++)
        if (res->calls[i].cls != SB_AUDIT_NONE && attribute(an, res, i) < 0)
            return -1;
    if (build_rows(res) < 0 || count_ranges(res, &an->opts) < 0)
        return -1;
    sb_audit_compile_sums(res);
    lifetime(res);
    res->busy_us = (double)sb_audit_timeline_total(&res->all) / 1e3;
    window_sums(res);
    for (size_t i = 0; i < p->ncalls; i++) {
        const sb_audit_call *c = &p->calls[i];
        const sb_audit_call_info *ci = &res->calls[i];
        res->counts[ci->cls]++;
        if (ci->cls == SB_AUDIT_POLL)
            res->polls++;
        if (!sb_audit_blocking(ci->cls))
            continue;
        res->blocking++;
        res->blocked_us += (double)(c->end - c->start) / 1e3;
    }
    return sb_audit_savings(res, an->opts.top > 0 ? an->opts.top : 1);
}

/* Each process is analyzed once (its sums accumulate): after more were loaded, only the new ones
 * are, with these options (those analyzed before keep theirs); the view across processes is
 * made again. 0, or -1 when out of memory. */
/* Room for a result per process of the run, the new ones zeroed, their process set. */
static int grow_results(sb_audit_analysis *an)
{
    const sb_audit_run *run = an->run;
    if (run->nprocs > an->cap_procs) {
        sb_audit_proc_result *r = realloc(an->procs, run->nprocs * sizeof *r);
        if (!r)
            return -1;
        an->procs = r;
        an->cap_procs = run->nprocs;
    }
    for (size_t i = an->nprocs; i < run->nprocs; i++)
        an->procs[i] = (sb_audit_proc_result){.proc = run->procs[i]};
    return 0;
}

static int analyze(sb_audit_analysis *an, const sb_audit_opts *o)
{
    sb_audit_run *run = an->run;
    an->opts = *o;
    if (grow_results(an) < 0)
        return -1;
    for (size_t i = an->nprocs; i < run->nprocs; i++)
        if (analyze_calls(run, &an->procs[i], o) < 0)
            return -1;
    if (o->symbolize)
        sb_audit_symbolize(an); /* the frames not yet named */
    for (; an->nprocs < run->nprocs; an->nprocs++)
        if (summarize(an, &an->procs[an->nprocs]) < 0)
            return -1;
    if (sb_audit_play_ranks(an) < 0) /* the ranks of a job, replayed together */
        return -1;
    free(an->range_sums);
    an->range_sums = NULL;
    an->nrange_sums = 0;
    if (sum_ranges(an) < 0 || sb_audit_compute_ranks(&an->ranks, an) < 0)
        return -1;
    an->done = 1;
    return 0;
}

static void free_result(sb_audit_proc_result *r)
{
    for (size_t i = 0; i < r->ntl; i++)
        free(r->tl[i].iv);
    free(r->all.iv);
    free(r->tl);
    free(r->calls);
    free(r->ranges);
    free(r->stack_used);
    free(r->rows);
    free(r->savings);
    free(r->replay);
}

void sb_audit_opts_default(sb_audit_opts *o)
{
    memset(o, 0, sizeof *o);
    o->max_syncs = -1;
    o->range = NULL;
    o->top = 10;
    o->waited_min_us = 5;
    o->waited_slack_us = 20;
    o->symbolize = 1;
    o->baseline_skip_first = -1;
}

void sb_audit_analysis_free(sb_audit_analysis *an)
{
    if (!an)
        return;
    /* a half-analyzed process's (out of memory partway) too: each of them was zeroed */
    for (size_t i = 0; i < an->cap_procs; i++)
        free_result(&an->procs[i]);
    free(an->procs);
    if (an->ranks)
        sb_ranks_free(an->ranks);
    free(an->ranks);
    free(an->range_sums);
    sb_audit_py_cache_free(an);
    sb_audit_callsites_free(&an->callsites);
    free(an);
}

const sb_audit_proc_result *sb_audit_result_of(const sb_audit_analysis *an, const sb_audit_proc *p)
{
    for (size_t i = 0; an && i < an->nprocs; i++)
        if (an->procs[i].proc == p)
            return &an->procs[i];
    return NULL;
}

/* Whether every process of the run was analyzed (none loaded since). */
static int up_to_date(const sb_audit_analysis *an)
{
    return an->done && an->nprocs == an->run->nprocs;
}

int sb_audit_analyze(sb_audit_run *run, const sb_audit_opts *o, sb_audit_analysis **out)
{
    sb_audit_analysis *an = *out;
    if (!an && !(an = *out = calloc(1, sizeof *an)))
        return sb_fail(SB_EXIT_FAIL, "out of memory analyzing the audit");
    an->run = run;
    if (an->failed)
        return sb_fail(SB_EXIT_FAIL, "out of memory analyzing the audit");
    if (up_to_date(an))
        return 0;
    int rc = analyze(an, o);
    an->failed = rc != 0;
    return rc ? sb_fail(SB_EXIT_FAIL, "out of memory analyzing the audit") : 0;
}
