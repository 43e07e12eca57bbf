/* The ranks of a job played together (ranks.h; the rule is replay.h's job): which process is each
 * rank's, where its parts in collectives lie in its records, and the job's plays of every
 * selection the ranks played alone, their figures given back to each rank's savings.
 *
 * gloo's collectives of CUDA tensors (ProcessGroupGloo's AsyncWork): the calling thread copies
 * the tensors into pinned host memory on a stream of its own and queues the work; a worker
 * thread of the process group takes it (woken by the caller, a recorded hand-off, when it was
 * idle), syncs that stream where it made the copy (cudaStreamSynchronize: the rank's data is
 * ready), exchanges with the peers on the CPU (its waits woken by gloo's transport thread, which
 * makes no CUDA call: it reads the sockets), then copies the result back to the GPU
 * (cudaMemcpyAsync host to device) and completes the work's future. So in a rank's records a
 * collective is, on a thread with no Python of its own that launches no kernel, a copy to the GPU
 * (the first of a row, one per output tensor, that no wait of the thread interrupts: a wait
 * between two copies is the next work's), the part ending there; it began after the thread's
 * latest call since its previous copy back (the stream sync), or at the end of its latest wait
 * since then that a thread of CUDA work ended (the work handed to it: a broadcast's receivers
 * sync nothing), whichever came later; else where the previous part ended (the worker went on to
 * the next work at once). Collectives of host tensors (a barrier) leave no CUDA call on the
 * worker: they are not seen, and keep their recorded waits. The process group is not recorded:
 * every part of a rank is one group, in the order of their beginning. NCCL's collectives are
 * kernels whose names the default recording does not keep: not recognised (docs/replay.md). */
#include "analyze/ranks.h"
#include "base/arrays.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "replay/replay.h"

/* A rank of the job: the process whose records hold its collectives, and its parts in them. */
typedef struct {
    int rank;
    int replayed;              /* a process of the rank was replayed */
    sb_audit_proc_result *res; /* the one with collectives; NULL: none */
    sb_replay_part *parts;
    size_t nparts;
} member;

/* ---- gloo's parts in one process's records ---- */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int has(const int64_t *sorted, size_t n, int64_t x)
{
    return bsearch(&x, sorted, n, sizeof x, cmp_i64) != NULL;
}

/* What gloo_parts looks up: the threads that launched a kernel, those that made a CUDA call or
 * launch (gloo's transport thread makes none), each thread's calls by start and its waits by
 * end. */
typedef struct {
    const sb_audit_proc *p;
    int64_t *kernel_tids, *cuda_tids;
    size_t nkernel, ncuda;
    size_t *calls, *wakes; /* indices: by thread, then start (calls) or end (wakes) */
} lookups;

static const sb_audit_proc *g_p; /* qsort has no context argument in C11 */

static int cmp_call(const void *a, const void *b)
{
    const sb_audit_call *x = &g_p->calls[*(const size_t *)a], *y = &g_p->calls[*(const size_t *)b];
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->corr > y->corr) - (x->corr < y->corr);
}

static int cmp_wake(const void *a, const void *b)
{
    const sb_audit_wake *x = &g_p->wakes[*(const size_t *)a], *y = &g_p->wakes[*(const size_t *)b];
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

static void lookups_free(lookups *l)
{
    free(l->kernel_tids);
    free(l->cuda_tids);
    free(l->calls);
    free(l->wakes);
}

/* The threads that launched a kernel: each kernel's launch (an API record of its correlation
 * id, the runtime's or the driver's). */
static int kernel_threads(lookups *l)
{
    const sb_audit_proc *p = l->p;
    sb_keyed *apis = malloc((p->napis + 1) * sizeof *apis);
    l->kernel_tids = malloc((p->nacts + 1) * sizeof *l->kernel_tids);
    if (!apis || !l->kernel_tids) {
        free(apis);
        return -1;
    }
    for (size_t i = 0; i < p->napis; i++)
        apis[i] = (sb_keyed){p->apis[i].corr, i};
    sb_sort(apis, p->napis, sizeof *apis, sb_keyed_cmp);
    for (size_t i = 0; i < p->nacts; i++) {
        const sb_audit_act *a = &p->acts[i];
        const sb_keyed *k =
            a->kind == SB_ACT_KERNEL ? sb_keyed_last(apis, p->napis, a->corr) : NULL;
        if (!k && a->kind == SB_ACT_KERNEL && a->rcorr)
            k = sb_keyed_last(apis, p->napis, a->rcorr);
        if (k)
            l->kernel_tids[l->nkernel++] = p->apis[k->idx].tid;
    }
    free(apis);
    sb_sort(l->kernel_tids, l->nkernel, sizeof *l->kernel_tids, cmp_i64);
    return 0;
}

static int lookups_make(lookups *l, const sb_audit_proc *p)
{
    memset(l, 0, sizeof *l);
    l->p = p;
    l->cuda_tids = malloc((p->ncalls + p->napis + 1) * sizeof *l->cuda_tids);
    l->calls = malloc((p->ncalls + 1) * sizeof *l->calls);
    l->wakes = malloc((p->nwakes + 1) * sizeof *l->wakes);
    if (!l->cuda_tids || !l->calls || !l->wakes || kernel_threads(l) < 0)
        return -1;
    for (size_t i = 0; i < p->nwakes; i++)
        l->wakes[i] = i;
    for (size_t i = 0; i < p->ncalls; i++) {
        l->calls[i] = i;
        l->cuda_tids[l->ncuda++] = p->calls[i].tid;
    }
    for (size_t i = 0; i < p->napis; i++)
        l->cuda_tids[l->ncuda++] = p->apis[i].tid;
    sb_sort(l->cuda_tids, l->ncuda, sizeof *l->cuda_tids, cmp_i64);
    g_p = p;
    sb_sort(l->calls, p->ncalls, sizeof *l->calls, cmp_call);
    sb_sort(l->wakes, p->nwakes, sizeof *l->wakes, cmp_wake);
    return 0;
}

static int copy_to_gpu(const sb_audit_call *c)
{
    return c->copy && !strcmp(c->copy, "HtoD");
}

/* Could thread tid (its calls l->calls[a..b)) be a process group's worker: no Python of its own
 * (a call named at a waiting thread's line keeps its own py: none), no kernel launched? */
static int worker_like(const lookups *l, size_t a, size_t b)
{
    const sb_audit_call *first = &l->p->calls[l->calls[a]];
    if (has(l->kernel_tids, l->nkernel, first->tid))
        return 0;
    for (size_t i = a; i < b; i++) {
        const sb_audit_call *c = &l->p->calls[l->calls[i]];
        if (c->py >= 0)
            return 0;
    }
    return 1;
}

/* The latest wait of thread tid that ended in (after, before]: any, or (handed 1) one that a
 * thread of CUDA work ended (the work handed to it; not the transport's: the peers' data); -1
 * when none. */
static long wait_in(const lookups *l, int64_t tid, int64_t after, int64_t before, int handed)
{
    const sb_audit_proc *p = l->p;
    size_t lo = 0, hi = p->nwakes; /* the first wait of tid that ended after `before` */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const sb_audit_wake *w = &p->wakes[l->wakes[mid]];
        if (w->tid < tid || (w->tid == tid && w->end <= before))
            lo = mid + 1;
        else
            hi = mid;
    }
    while (lo-- > 0) {
        const sb_audit_wake *w = &p->wakes[l->wakes[lo]];
        if (w->tid != tid || w->end <= after)
            return -1;
        if (!handed || has(l->cuda_tids, l->ncuda, w->by))
            return (long)l->wakes[lo];
    }
    return -1;
}

/* One thread's parts (its calls l->calls[a..b)), appended to *parts. */
static int thread_parts(const lookups *l, size_t a, size_t b, sb_replay_part **parts, size_t *n,
                        size_t *cap)
{
    const sb_audit_proc *p = l->p;
    long last_call = -1, prev_done = -1; /* the latest call since the previous part; its end */
    int64_t since = INT64_MIN;
    for (size_t i = a; i < b; i++) {
        size_t ci = l->calls[i];
        const sb_audit_call *c = &p->calls[ci];
        if (!copy_to_gpu(c)) {
            last_call = (long)ci;
            continue;
        }
        /* the first of a row of copies back (one a tensor), unless the thread waited since
         * the previous one: the next work (a broadcast's receiver syncs nothing) */
        int first = i == a || !copy_to_gpu(&p->calls[l->calls[i - 1]]) ||
                    wait_in(l, c->tid, p->calls[l->calls[i - 1]].end, c->start, 0) >= 0;
        long wake = first ? wait_in(l, c->tid, since, c->start, 1) : -1;
        since = c->end;
        long after = last_call >= 0 ? last_call : prev_done;
        prev_done = (long)ci;
        last_call = -1;
        if (!first || (after < 0 && wake < 0))
            continue;
        if (sb_grow(parts, cap, *n, sizeof **parts) < 0)
            return -1;
        int by_wake = wake >= 0 && (after < 0 || p->wakes[wake].end > p->calls[after].end);
        (*parts)[(*n)++] =
            (sb_replay_part){.after = by_wake ? SB_PART_AFTER_WAKE : SB_PART_AFTER_CALL,
                             .at = (size_t)(by_wake ? wake : after),
                             .complete = ci};
    }
    return 0;
}

static const sb_audit_proc *g_parts_p;

/* when a part begins (recorded) */
static int64_t begins(const sb_replay_part *x)
{
    return x->after == SB_PART_AFTER_WAKE ? g_parts_p->wakes[x->at].end
                                          : g_parts_p->calls[x->at].end;
}

static int cmp_part(const void *a, const void *b)
{
    int64_t x = begins(a), y = begins(b);
    return (x > y) - (x < y);
}

/* p's parts in gloo's collectives, in the order they began: their number (*parts the
 * caller's to free), -1 out of memory. */
static long gloo_parts(const sb_audit_proc *p, sb_replay_part **parts)
{
    lookups l;
    size_t n = 0, cap = 0;
    *parts = NULL;
    int rc = lookups_make(&l, p);
    for (size_t a = 0; !rc && a < p->ncalls;) {
        size_t b = a;
        while (b < p->ncalls && p->calls[l.calls[b]].tid == p->calls[l.calls[a]].tid)
            b++;
        if (worker_like(&l, a, b))
            rc = thread_parts(&l, a, b, parts, &n, &cap);
        a = b;
    }
    lookups_free(&l);
    if (rc) {
        free(*parts);
        *parts = NULL;
        return -1;
    }
    g_parts_p = p;
    sb_sort(*parts, n, sizeof **parts, cmp_part);
    return (long)n;
}

/* ---- the job's members ---- */

/* The ranks of the run other than p's (RANK set), as many as there are: they meet p in its
 * collectives. */
static int other_ranks(const sb_audit_analysis *an, const sb_audit_proc *p)
{
    int n = 0;
    for (size_t i = 0; p->rank >= 0 && i < an->nprocs; i++) {
        int rank = an->procs[i].proc->rank, seen = rank < 0 || rank == p->rank;
        for (size_t k = 0; k < i && !seen; k++)
            seen = an->procs[k].proc->rank == rank;
        n += !seen;
    }
    return n;
}

/* Every rank process's savings as if played alone: flagged, with no reason yet. */
static void reset(sb_audit_analysis *an)
{
    for (size_t i = 0; i < an->nprocs; i++) {
        sb_audit_proc_result *res = &an->procs[i];
        int others = other_ranks(an, res->proc);
        for (size_t k = 0; k < res->nsavings; k++) {
            sb_audit_saving *s = &res->savings[k];
            s->ranks_unmodelled = others;
            s->ranks_why = NULL;
            s->ranks_played = 0;
            s->collectives = 0;
            s->job_figure = 0;
        }
    }
}

static int cmp_member(const void *a, const void *b)
{
    return ((const member *)a)->rank - ((const member *)b)->rank;
}

/* The member of rank `rank` in mem[0..*n), added when new. */
static member *member_of(member *mem, size_t *n, int rank)
{
    for (size_t k = 0; k < *n; k++)
        if (mem[k].rank == rank)
            return &mem[k];
    mem[*n] = (member){.rank = rank};
    return &mem[(*n)++];
}

/* Why a rank without collectives cannot be played with the others. */
static void no_parts(const member *m, char *why, size_t whylen)
{
    if (!m->replayed)
        snprintf(why, whylen, "rank %d was not replayed (its launches were not recorded)", m->rank);
    else
        snprintf(why, whylen,
                 "no collective recognised in rank %d's records (gloo's of CUDA tensors are; "
                 "NCCL's are not yet)",
                 m->rank);
}

/* The job's members, one per rank (the process whose records hold its collectives), in rank
 * order. 0 (two ranks or more); 1 with why; 2 when the run has fewer than two ranks; -1 out of
 * memory. */
static int find_members(sb_audit_analysis *an, member *mem, size_t *n, char *why, size_t whylen)
{
    for (size_t i = 0; i < an->nprocs; i++) {
        sb_audit_proc_result *res = &an->procs[i];
        if (res->proc->rank < 0)
            continue;
        member *m = member_of(mem, n, res->proc->rank);
        if (!res->nsavings)
            continue;
        m->replayed = 1;
        sb_replay_part *parts;
        long np = gloo_parts(res->proc, &parts);
        if (np <= 0) {
            free(parts);
            if (np < 0)
                return -1;
            continue;
        }
        if (m->res) {
            free(parts);
            snprintf(why, whylen,
                     "rank %d's collectives are in two processes (pids %" PRId64 " and %" PRId64
                     ")",
                     m->rank, m->res->proc->pid, res->proc->pid);
            return 1;
        }
        m->res = res;
        m->parts = parts;
        m->nparts = (size_t)np;
    }
    if (*n < 2)
        return 2;
    sb_sort(mem, *n, sizeof *mem, cmp_member);
    size_t with = 0;
    for (size_t k = 0; k < *n; k++)
        with += mem[k].res != NULL;
    if (!with && mem[0].replayed) {
        snprintf(why, whylen,
                 "no collective recognised in the ranks' records (gloo's of CUDA tensors are; "
                 "NCCL's are not yet)");
        return 1;
    }
    for (size_t k = 0; k < *n; k++)
        if (!mem[k].res) {
            no_parts(&mem[k], why, whylen);
            return 1;
        }
    return 0;
}

/* ---- the job's plays ---- */

/* One selection played by the job: each member's removed calls and figures. */
typedef struct {
    unsigned char **mask; /* per member: its calls removed */
    long *calls;          /* ... how many */
    sb_replay_result *r, *kept, *other;
    int64_t *end, *scratch; /* per member: when its play ends (the plain play's); scratch */
    int held_played;        /* `other` is the play with the producers held */
} job_play;

static void job_play_free(job_play *jp, size_t n)
{
    for (size_t k = 0; jp->mask && k < n; k++)
        free(jp->mask[k]);
    free(jp->mask);
    free(jp->calls);
    free(jp->r);
    free(jp->kept);
    free(jp->other);
    free(jp->end);
    free(jp->scratch);
}

static int job_play_make(job_play *jp, const member *mem, size_t n)
{
    jp->mask = calloc(n, sizeof *jp->mask);
    jp->calls = malloc(n * sizeof *jp->calls);
    jp->r = malloc(n * sizeof *jp->r);
    jp->kept = malloc(n * sizeof *jp->kept);
    jp->other = malloc(n * sizeof *jp->other);
    jp->end = malloc(n * sizeof *jp->end);
    jp->scratch = malloc(n * sizeof *jp->scratch);
    if (!jp->mask || !jp->calls || !jp->r || !jp->kept || !jp->other || !jp->end || !jp->scratch)
        return -1;
    for (size_t k = 0; k < n; k++)
        if (!(jp->mask[k] = malloc(mem[k].res->proc->ncalls + 1)))
            return -1;
    return 0;
}

/* res's saving of the same selection as sel (its kind and key, library line or class), or NULL
 * when res did not play it. */
static sb_audit_saving *same_selection(sb_audit_proc_result *res, const sb_audit_saving *sel)
{
    for (size_t i = 0; i < res->nsavings; i++) {
        sb_audit_saving *s = &res->savings[i];
        if (s->kind == sel->kind &&
            (sel->kind == SB_SAVE_CLASS ? s->cls == sel->cls
                                        : s->key == sel->key && s->via == sel->via))
            return s;
    }
    return NULL;
}

/* Selection sel played by the job: with its syncs removed on every rank, and for sites, lines
 * and all again with the readbacks kept and, where producers hand work on, held (savings.c's
 * plays, the job's). 0, -1 out of memory. */
static int play_selection(sb_replay_job *job, const member *mem, size_t n,
                          const sb_audit_saving *sel, job_play *jp)
{
    int producers = 0, rc;
    for (size_t k = 0; k < n; k++) {
        const sb_audit_proc *p = mem[k].res->proc;
        jp->calls[k] = 0;
        for (size_t i = 0; i < p->ncalls; i++) /* as savings.c: inside the GPU window */
            jp->calls[k] += jp->mask[k][i] =
                (unsigned char)(sb_audit_saving_removes(&mem[k].res->calls[i], sel) &&
                                sb_audit_in_gpu_window(p, p->calls[i].start));
    }
    const unsigned char *const *masks = (const unsigned char *const *)jp->mask;
    memset(jp->kept, 0, n * sizeof *jp->kept);
    memset(jp->other, 0, n * sizeof *jp->other);
    rc = sb_replay_job_run(job, masks, 0, jp->r, jp->end);
    int twice = sb_audit_saving_played_twice(sel->kind);
    if (!rc && twice)
        rc = sb_replay_job_run(job, masks, SB_REPLAY_KEEP_READBACKS, jp->kept, jp->scratch);
    for (size_t k = 0; k < n; k++)
        producers |= jp->r[k].producers;
    jp->held_played = !rc && twice && producers;
    if (jp->held_played)
        rc = sb_replay_job_run(job, masks, SB_REPLAY_HOLD_BY_PRODUCERS, jp->other, jp->scratch);
    return rc;
}

/* The job's figures of one selection given to each member that played it alone: its own, the
 * reading of its producers as savings.c takes it, and which is the job's figure (the member
 * whose play ends last). */
static void give(const member *mem, size_t n, const sb_audit_saving *sel, const job_play *jp,
                 long collectives)
{
    size_t fig = n;
    for (size_t k = 0; k < n; k++)
        if (same_selection(mem[k].res, sel) && (fig == n || jp->end[k] > jp->end[fig]))
            fig = k;
    for (size_t k = 0; k < n; k++) {
        sb_audit_saving *s = same_selection(mem[k].res, sel);
        if (!s)
            continue;
        int held = jp->held_played && jp->r[k].producers &&
                   2 * jp->other[k].producer_holds >= jp->calls[k];
        s->r = held ? jp->other[k] : jp->r[k];
        s->other = held ? jp->r[k] : jp->other[k];
        s->kept = jp->kept[k];
        s->held_primary = held;
        s->ranks_unmodelled = 0;
        s->ranks_played = (int)n;
        s->collectives = collectives;
        s->job_figure = k == fig;
    }
}

/* The members played together: every selection one of them played alone. 0, 1 with why, -1. */
static int play_job(member *mem, size_t n, char *why, size_t whylen)
{
    sb_replay_rank *rk = calloc(n, sizeof *rk);
    if (!rk)
        return -1;
    int oom = 0;
    for (size_t k = 0; k < n; k++) {
        const sb_audit_proc *p = mem[k].res->proc;
        rk[k] = (sb_replay_rank){p, sb_audit_replay_model(mem[k].res), mem[k].parts, mem[k].nparts,
                                 mem[k].rank};
        oom |= !rk[k].model;
    }
    sb_replay_job *job = NULL;
    int rc = oom ? -1 : sb_replay_job_new(rk, n, &job, why, whylen);
    for (size_t k = 0; oom && k < n; k++)
        sb_replay_free(rk[k].model);
    free(rk);
    if (rc)
        return rc;
    job_play jp = {0};
    rc = job_play_make(&jp, mem, n);
    long collectives = (long)sb_replay_job_collectives(job);
    for (size_t k = 0; !rc && k < n; k++)
        for (size_t i = 0; !rc && i < mem[k].res->nsavings; i++) {
            const sb_audit_saving *sel = &mem[k].res->savings[i];
            if (sel->ranks_played) /* given by an earlier member's selection */
                continue;
            if (!(rc = play_selection(job, mem, n, sel, &jp)))
                give(mem, n, sel, &jp, collectives);
        }
    if (rc == 1) /* not after the job's baselines lined them up; said rather than assumed */
        snprintf(why, whylen, "the ranks' collectives do not line up in order");
    job_play_free(&jp, n);
    sb_replay_job_free(job);
    return rc;
}

/* Why the rank processes not played together were not: each of their savings says it. */
static int flag_the_rest(sb_audit_analysis *an, const char *why)
{
    const char *text = sb_audit_intern(&an->run->strs, why);
    if (!text)
        return -1;
    for (size_t i = 0; i < an->nprocs; i++)
        for (size_t k = 0; k < an->procs[i].nsavings; k++) {
            sb_audit_saving *s = &an->procs[i].savings[k];
            if (s->ranks_unmodelled)
                s->ranks_why = text;
        }
    return 0;
}

int sb_audit_play_ranks(sb_audit_analysis *an)
{
    reset(an);
    member *mem = calloc(an->nprocs + 1, sizeof *mem);
    size_t n = 0;
    char why[256] = "";
    int rc = mem ? find_members(an, mem, &n, why, sizeof why) : -1;
    if (!rc)
        rc = play_job(mem, n, why, sizeof why);
    if (!rc) /* another process of a rank (a helper that set RANK too) */
        snprintf(why, sizeof why, "its rank's collectives are another process's");
    if (rc == 1)
        reset(an); /* a play that failed partway: none of the job's figures stands */
    if (rc == 0 || rc == 1)
        rc = flag_the_rest(an, why);
    for (size_t k = 0; mem && k < n; k++)
        free(mem[k].parts);
    free(mem);
    return rc < 0 ? -1 : 0;
}
