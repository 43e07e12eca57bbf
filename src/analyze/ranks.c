/* The audit across ranks: the ranks of an analyzed audit (their blocked time per range instance)
 * and the ranges lined up across ranks, each instance's straggler and the others' wait (the rule
 * is in ranks.h). */
#include "analyze/ranks.h"
#include "base/arrays.h"

#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "base/stats.h"

void sb_ranks_init(sb_ranks *rk)
{
    memset(rk, 0, sizeof *rk);
    sb_strpool_init(&rk->strs);
}

static void free_ranges(sb_ranks *rk)
{
    for (size_t i = 0; i < rk->nranges; i++) {
        sb_rank_range *g = &rk->ranges[i];
        free(g->members);
        free(g->series);
        free(g->straggler);
        free(g->least_ns);
        free(g->wait_us);
        free(g->stragglers);
    }
    free(rk->ranges);
    rk->ranges = NULL;
    rk->nranges = 0;
}

void sb_ranks_free(sb_ranks *rk)
{
    free_ranges(rk);
    for (size_t i = 0; i < rk->n; i++) {
        for (size_t k = 0; k < rk->r[i].nseries; k++)
            free(rk->r[i].series[k].blocked_ns);
        free(rk->r[i].series);
    }
    free(rk->r);
    sb_strpool_free(&rk->strs);
    memset(rk, 0, sizeof *rk);
}

static const char *intern(sb_ranks *rk, const char *s)
{
    return sb_strpool_intern(&rk->strs, s ? s : "", s ? strlen(s) : 0);
}

sb_rank *sb_ranks_add(sb_ranks *rk, int rank, const char *host, const char *report)
{
    if (sb_grow(&rk->r, &rk->cap, rk->n, sizeof *rk->r) < 0)
        return NULL;
    sb_rank *r = &rk->r[rk->n];
    memset(r, 0, sizeof *r);
    r->rank = rank;
    r->local_rank = -1;
    r->complete = 1;
    r->order = rk->n;
    if (!(r->host = intern(rk, host)) || !(r->report = intern(rk, report)))
        return NULL;
    rk->n++;
    return r;
}

int sb_rank_add_series(sb_ranks *rk, sb_rank *r, const char *name, const char *domain,
                       const int64_t *blocked_ns, size_t n)
{
    if (sb_grow(&r->series, &r->cap_series, r->nseries, sizeof *r->series) < 0)
        return -1;
    sb_rank_series *s = &r->series[r->nseries];
    s->name = intern(rk, name);
    s->domain = intern(rk, domain);
    s->blocked_ns = malloc((n ? n : 1) * sizeof *s->blocked_ns);
    if (!s->name || !s->domain || !s->blocked_ns) {
        free(s->blocked_ns);
        return -1;
    }
    if (n)
        memcpy(s->blocked_ns, blocked_ns, n * sizeof *blocked_ns);
    s->n = n;
    r->nseries++;
    return 0;
}

/* ---- from an analyzed audit ---- */

/* One instance of one rank, for lining up its processes' instances by name and start. */
typedef struct {
    const char *name, *domain; /* interned in the run */
    int64_t start, tid, id, blocked_ns;
} instance;

static int cmp_instance(const void *a, const void *b)
{
    const instance *x = a, *y = b;
    uintptr_t p = (uintptr_t)x->name, q = (uintptr_t)y->name;
    if (p != q)
        return p < q ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* The offset from a process's CUPTI clock to CLOCK_MONOTONIC: processes of one machine share it. */
static int64_t mono_offset(const sb_audit_proc *p)
{
    return p->has_proc ? p->mono_ns - p->clock_ns : 0;
}

/* Rank `rank`'s processes of the run folded into r. */
static int fold_rank(sb_ranks *rk, sb_rank *r, const sb_audit_analysis *an, int rank)
{
    const sb_audit_run *run = an->run;
    size_t total = 0, n = 0;
    int64_t first_start = 0;
    for (size_t i = 0; i < run->nprocs; i++)
        if (run->procs[i]->rank == rank)
            total += run->procs[i]->nranges;
    instance *in = malloc((total ? total : 1) * sizeof *in);
    int rc = in ? 0 : -1;
    for (size_t i = 0; !rc && i < an->nprocs; i++) {
        const sb_audit_proc_result *res = &an->procs[i];
        const sb_audit_proc *p = res->proc;
        if (p->rank != rank)
            continue;
        int64_t off = mono_offset(p);
        char why[512];
        if (!r->processes || res->t_first + off < first_start) {
            r->pid = p->pid;
            r->local_rank = p->local_rank;
            first_start = res->t_first + off;
        }
        r->processes++;
        r->complete &= sb_audit_incomplete(p, why, sizeof why) == NULL;
        r->blocked_us += res->blocked_us;
        r->blocking += res->blocking;
        r->has_bubbles |= p->kernels && !p->windowed; /* a window's: not the run's */
        for (size_t c = 0; c < p->ncalls; c++)
            if (sb_audit_blocking(res->calls[c].cls))
                r->bubble_us += (double)res->calls[c].bubble_ns / 1e3;
        for (size_t k = 0; k < p->nranges; k++) {
            const sb_audit_range *g = &p->ranges[k];
            in[n++] = (instance){g->name, g->domain ? g->domain : "", g->start + off, g->tid,
                                 g->id,   res->ranges[k].blocked_ns};
        }
    }
    if (!rc)
        sb_sort(in, n, sizeof *in, cmp_instance);
    int64_t *ns = malloc((n ? n : 1) * sizeof *ns);
    if (!ns)
        rc = -1;
    for (size_t i = 0; !rc && i < n;) {
        size_t j = i;
        for (; j < n && in[j].name == in[i].name; j++)
            ns[j - i] = in[j].blocked_ns;
        rc = sb_rank_add_series(rk, r, in[i].name, in[i].domain, ns, j - i);
        i = j;
    }
    free(ns);
    free(in);
    return rc;
}

int sb_ranks_from_run(sb_ranks *rk, const sb_audit_analysis *an, const char *host)
{
    for (size_t i = 0; i < an->nprocs; i++) {
        int rank = an->procs[i].proc->rank, seen = 0;
        for (size_t k = 0; k < i && !seen; k++)
            seen = an->procs[k].proc->rank == rank;
        if (rank < 0 || seen)
            continue;
        sb_rank *r = sb_ranks_add(rk, rank, host, "");
        if (!r || fold_rank(rk, r, an, rank) < 0)
            return -1;
    }
    return 0;
}

int sb_audit_compute_ranks(sb_ranks **rk, const sb_audit_analysis *an)
{
    if (!*rk && !(*rk = calloc(1, sizeof **rk)))
        return -1;
    sb_ranks_free(*rk); /* an earlier analysis's */
    sb_ranks_init(*rk);
    if (sb_ranks_from_run(*rk, an, "") < 0 || sb_ranks_compute(*rk) < 0)
        return -1;
    return 0;
}

/* ---- lining up ---- */

static int cmp_rank(const void *a, const void *b)
{
    const sb_rank *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

static int cmp_series(const void *a, const void *b)
{
    return strcmp(((const sb_rank_series *)a)->name, ((const sb_rank_series *)b)->name);
}

const sb_rank_series *sb_rank_duplicate_series(sb_rank *r)
{
    sb_sort(r->series, r->nseries, sizeof *r->series, cmp_series);
    for (size_t i = 1; i < r->nseries; i++)
        if (r->series[i].name == r->series[i - 1].name) /* interned */
            return &r->series[i];
    return NULL;
}

const sb_rank *sb_ranks_duplicate(sb_ranks *rk)
{
    sb_sort(rk->r, rk->n, sizeof *rk->r, cmp_rank);
    for (size_t i = 1; i < rk->n; i++)
        if (rk->r[i].rank == rk->r[i - 1].rank)
            return &rk->r[i];
    return NULL;
}

/* A rank's series of one range, for grouping by name. */
typedef struct {
    const sb_rank_series *s;
    size_t rank; /* index into rk->r */
} member;

static int cmp_member(const void *a, const void *b)
{
    const member *x = a, *y = b;
    uintptr_t p = (uintptr_t)x->s->name, q = (uintptr_t)y->s->name; /* interned: one per name */
    if (p != q)
        return p < q ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int cmp_straggler(const void *a, const void *b)
{
    const sb_rank_straggler *x = a, *y = b;
    if (x->instances != y->instances)
        return x->instances > y->instances ? -1 : 1;
    return x->rank - y->rank;
}

static int cmp_range(const void *a, const void *b)
{
    const sb_rank_range *x = a, *y = b;
    if (x->wait_total_us != y->wait_total_us)
        return x->wait_total_us > y->wait_total_us ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* One range's members m[0..n) (n >= 2, each with instances): every matched instance's
 * straggler and waits, then each straggler's count, median and total. */
static int line_up(const sb_ranks *rk, sb_rank_range *g, const member *m, size_t n)
{
    g->name = m[0].s->name;
    g->domain = m[0].s->domain;
    g->nmembers = n;
    g->members = malloc(n * sizeof *g->members);
    g->series = malloc(n * sizeof *g->series);
    if (!g->members || !g->series)
        return -1;
    g->matched = (long)m[0].s->n;
    for (size_t j = 0; j < n; j++) {
        g->members[j] = m[j].rank;
        g->series[j] = m[j].s;
        if ((long)m[j].s->n < g->matched)
            g->matched = (long)m[j].s->n;
        if ((long)m[j].s->n > g->longest)
            g->longest = (long)m[j].s->n;
    }
    size_t k_n = (size_t)g->matched;
    g->straggler = malloc((k_n ? k_n : 1) * sizeof *g->straggler);
    g->least_ns = malloc((k_n ? k_n : 1) * sizeof *g->least_ns);
    g->wait_us = malloc((k_n ? k_n : 1) * sizeof *g->wait_us);
    double *total_us = malloc((k_n ? k_n : 1) * sizeof *total_us);
    size_t *who = malloc((k_n ? k_n : 1) * sizeof *who); /* the straggler's member index */
    double *d = malloc((k_n ? k_n : 1) * sizeof *d);
    g->stragglers = malloc(n * sizeof *g->stragglers);
    int rc =
        g->straggler && g->least_ns && g->wait_us && total_us && who && d && g->stragglers ? 0 : -1;
    for (size_t k = 0; !rc && k < k_n; k++) {
        int64_t least = g->series[0]->blocked_ns[k], excess = 0;
        size_t at = 0, ties = 0;
        for (size_t j = 1; j < n; j++)
            if (g->series[j]->blocked_ns[k] < least) {
                least = g->series[j]->blocked_ns[k];
                at = j;
            }
        for (size_t j = 0; j < n; j++) {
            ties += g->series[j]->blocked_ns[k] == least;
            excess += g->series[j]->blocked_ns[k] - least;
        }
        g->least_ns[k] = least;
        total_us[k] = (double)excess / 1e3;
        g->wait_us[k] = total_us[k] / (double)(n - 1);
        who[k] = ties == 1 ? at : n;
        g->straggler[k] = ties == 1 ? rk->r[g->members[at]].rank : -1;
        g->tied += ties > 1;
    }
    for (size_t j = 0; !rc && j < n; j++) {
        size_t c = 0;
        double total = 0;
        for (size_t k = 0; k < k_n; k++)
            if (who[k] == j) {
                d[c++] = g->wait_us[k];
                total += total_us[k];
            }
        if (!c)
            continue;
        sb_sort_doubles(d, c);
        g->stragglers[g->nstragglers++] = (sb_rank_straggler){
            rk->r[g->members[j]].rank, (long)c, sb_percentile_sorted(d, (int)c, 0.5), total};
        g->wait_total_us += total;
    }
    if (!rc)
        sb_sort(g->stragglers, g->nstragglers, sizeof *g->stragglers, cmp_straggler);
    free(total_us);
    free(who);
    free(d);
    return rc;
}

int sb_ranks_compute(sb_ranks *rk)
{
    free_ranges(rk);
    sb_sort(rk->r, rk->n, sizeof *rk->r, cmp_rank);
    size_t total = 0;
    for (size_t i = 0; i < rk->n; i++) {
        sb_sort(rk->r[i].series, rk->r[i].nseries, sizeof *rk->r[i].series, cmp_series);
        total += rk->r[i].nseries;
    }
    member *m = malloc((total ? total : 1) * sizeof *m);
    rk->ranges = malloc((total ? total : 1) * sizeof *rk->ranges);
    if (!m || !rk->ranges) {
        free(m);
        return -1;
    }
    size_t n = 0;
    for (size_t i = 0; i < rk->n; i++)
        for (size_t k = 0; k < rk->r[i].nseries; k++)
            if (rk->r[i].series[k].n) /* a rank without instances does not have the range */
                m[n++] = (member){&rk->r[i].series[k], i};
    sb_sort(m, n, sizeof *m, cmp_member);
    int rc = 0;
    for (size_t i = 0; !rc && i < n;) {
        size_t j = i;
        while (j < n && m[j].s->name == m[i].s->name)
            j++;
        if (j - i >= 2) {
            sb_rank_range *g = &rk->ranges[rk->nranges++];
            memset(g, 0, sizeof *g);
            rc = line_up(rk, g, &m[i], j - i);
        }
        i = j;
    }
    free(m);
    if (!rc)
        sb_sort(rk->ranges, rk->nranges, sizeof *rk->ranges, cmp_range);
    return rc;
}
