/* The Chrome trace event format (Perfetto, chrome://tracing), laid out as PyTorch's profiler
 * writes it: per process, its host threads and its GPU streams (tid 1000000 + stream), complete
 * ("X") events for host calls, kernels, copies, memsets and NVTX ranges, and flows ("ac2g")
 * from each launch to its GPU work by correlation id. Written with jansson, event by event
 * (trace_events.c): a trace of millions of kernels is never held as a JSON tree. */
#include "report/report.h"
#include "base/arrays.h"
#include "base/utf8.h"
#include "report/json_build.h"
#include "report/trace_events.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

#define STREAM_TID 1000000

typedef sb_trace_writer writer;

static void meta(writer *w, int64_t tid, const char *what, const char *name)
{
    json_t *e = sb_trace_event(w, "M", tid), *args = json_object();
    sb_trace_set_str(w, e, "name", what);
    sb_trace_set_str(w, args, "name", name);
    sb_trace_set(w, e, "args", args);
    sb_trace_emit(w, e);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Unique values of v[0..n) (sorted in place); returns the count. */
static size_t unique(int64_t *v, size_t n)
{
    if (!n)
        return 0;
    sb_sort(v, n, sizeof *v, cmp_i64);
    size_t m = 1;
    for (size_t i = 1; i < n; i++)
        if (v[i] != v[m - 1])
            v[m++] = v[i];
    return m;
}

static int thread_names(writer *w, const sb_audit_proc_result *res)
{
    const sb_audit_proc *p = res->proc;
    size_t n = p->ncalls + p->napis + p->nranges + p->nacts;
    int64_t *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return -1;
    size_t m = 0;
    for (size_t i = 0; i < p->ncalls; i++)
        v[m++] = p->calls[i].tid;
    for (size_t i = 0; i < p->napis; i++)
        v[m++] = p->apis[i].tid;
    for (size_t i = 0; i < p->nranges; i++)
        v[m++] = p->ranges[i].tid;
    m = unique(v, m);
    char buf[64];
    for (size_t i = 0; i < m; i++) {
        snprintf(buf, sizeof buf, "host thread %" PRId64, v[i]);
        meta(w, v[i], "thread_name", buf);
    }
    m = 0;
    for (size_t i = 0; i < p->nacts; i++)
        v[m++] = p->acts[i].stream;
    m = unique(v, m);
    for (size_t i = 0; i < m; i++) {
        snprintf(buf, sizeof buf, "stream %" PRId64, v[i]);
        meta(w, STREAM_TID + v[i], "thread_name", buf);
    }
    free(v);
    return 0;
}

/* A launch: a host call or a trace-mode API record, found by (domain, correlation id). */
typedef struct {
    int64_t corr;
    int drv;
    int64_t tid, start;
} source;

static int cmp_source(const void *a, const void *b)
{
    const source *x = a, *y = b;
    if (x->drv != y->drv)
        return x->drv - y->drv;
    return (x->corr > y->corr) - (x->corr < y->corr);
}

static const source *find_source(const source *s, size_t n, int drv, int64_t corr)
{
    size_t lo = 0, hi = n;
    source key = {corr, drv, 0, 0};
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_source(&s[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && cmp_source(&s[lo], &key) == 0 ? &s[lo] : NULL;
}

/* ["train.py:42 in step", ...], innermost first */
static json_t *python_frames(writer *w, const sb_audit_pystack *s)
{
    json_t *frames = json_array();
    for (int i = 0; s && i < s->nframes; i++) {
        char buf[2048];
        sb_audit_fmt(buf, sizeof buf, "%s:%d in %s", s->frames[i].file, s->frames[i].line,
                     s->frames[i].func);
        sb_trace_append(w, frames, sb_json_str(buf));
    }
    return frames;
}

/* A sync's predicted savings, per call too: its site's, and its library line's alone. */
static void saving_args(writer *w, json_t *args, const sb_audit_proc_result *res,
                        const sb_audit_call_info *ci)
{
    const sb_audit_saving *sv = sb_audit_saving_of(res, SB_SAVE_SITE, ci->site, SB_AUDIT_NONE);
    int scaled = 0; /* from the GPU window */
    if (sv && !sb_audit_unmodelled(sv) && !isnan(sb_audit_saving_us(sv))) {
        sb_trace_set(w, args, "site_save_us", sb_trace_us_rounded(sb_audit_saving_us(sv)));
        sb_trace_set(w, args, "site_save_per_call_us", sb_trace_us_rounded(sv->r.typical_us));
        scaled |= sv->calls != sv->run_calls;
    }
    sv = ci->made->via_site && ci->made->via_site[0]
             ? sb_audit_line_saving_of(res, ci->site, ci->made->via_site)
             : NULL;
    if (sv && !sb_audit_unmodelled(sv) && !isnan(sb_audit_saving_us(sv))) {
        sb_trace_set(w, args, "via_save_us", sb_trace_us_rounded(sb_audit_saving_us(sv)));
        sb_trace_set(w, args, "via_save_per_call_us", sb_trace_us_rounded(sv->r.typical_us));
        scaled |= sv->calls != sv->run_calls;
    }
    if (scaled)
        sb_trace_set_str(w, args, "save_scaled_from", "window");
}

/* What the analysis found of a classified call: its site, range, operation and Python. */
static void found_args(writer *w, json_t *args, const sb_audit_proc *p, const sb_audit_call *c,
                       const sb_audit_call_info *ci)
{
    sb_trace_set_str(w, args, "site", ci->site);
    sb_trace_set_str(w, args, "range", ci->range);
    sb_trace_set_str(w, args, "operation", ci->made->op ? ci->made->op : "unknown");
    if (ci->made->via)
        sb_trace_set_str(w, args, "via", ci->made->via_site);
    if (ci->made->library[0])
        sb_trace_set_str(w, args, "library", ci->made->library);
    if (ci->pyframe) /* the waiter's stack when a waiter names the site (waiter_site.c) */
        sb_trace_set(w, args, "python",
                     python_frames(w, sb_audit_find_pystack(p, sb_audit_call_py(p, c, ci))));
    if (ci->made->compile) /* made while torch.compile compiled: apart from the gate */
        sb_trace_set_str(w, args, "phase", "compile");
}

/* The host calls, each with what the analysis found of it (built each: their args vary). */
static void calls(writer *w, const sb_audit_proc_result *res)
{
    const sb_audit_proc *p = res->proc;
    for (size_t i = 0; i < p->ncalls; i++) {
        const sb_audit_call *c = &p->calls[i];
        const sb_audit_call_info *ci = &res->calls[i];
        int blocking = sb_audit_blocking(ci->cls);
        const char *cat = blocking ? "sync" : c->drv ? "cuda_driver" : "cuda_runtime";
        json_t *e = sb_trace_complete(w, c->tid, c->api, cat, c->start, c->end);
        json_t *args = json_object();
        sb_trace_set_str(w, args, "class", sb_audit_class_name(ci->cls));
        sb_trace_set_str(w, args, "group", sb_audit_group_name(sb_audit_class_group(ci->cls)));
        sb_trace_set_int(w, args, "correlation", c->corr);
        if (ci->cls != SB_AUDIT_NONE)
            found_args(w, args, p, c, ci);
        if (blocking && p->kernels && sb_audit_in_gpu_window(p, c->start))
            sb_trace_set(w, args, "bubble_us", sb_trace_us(ci->bubble_ns));
        if (blocking && !sb_audit_compile_time(ci))
            saving_args(w, args, res, ci);
        sb_trace_set(w, e, "args", args);
        sb_trace_emit(w, e);
    }
}

static void apis(writer *w, const sb_audit_proc_result *res, const source *calls_by_corr,
                 size_t ncalls)
{
    const sb_audit_proc *p = res->proc;
    for (size_t i = 0; i < p->napis; i++) {
        const sb_audit_api *a = &p->apis[i];
        if (find_source(calls_by_corr, ncalls, a->drv, a->corr))
            continue; /* the same call, written with its class */
        sb_trace_complete_of(w, SB_TRACE_API, a->tid, a->api,
                             a->drv ? "cuda_driver" : "cuda_runtime", a->start, a->end, &a->corr);
    }
}

static void act_name(const sb_audit_act *a, char *buf, size_t n)
{
    if (a->kind == SB_ACT_KERNEL)
        sb_audit_fmt(buf, n, "%s", a->name ? a->name : "kernel");
    else if (a->kind == SB_ACT_COPY)
        sb_audit_fmt(buf, n, "Memcpy %s (%s -> %s)", a->ckind, a->src, a->dst);
    else
        snprintf(buf, n, "Memset (device)");
}

static void acts(writer *w, const sb_audit_proc_result *res, const source *src, size_t nsrc)
{
    const sb_audit_proc *p = res->proc;
    static const char *const cat[] = {"kernel", "gpu_memcpy", "gpu_memset"};
    char name[1024];
    for (size_t i = 0; i < p->nacts; i++) {
        const sb_audit_act *a = &p->acts[i];
        act_name(a, name, sizeof name);
        const int64_t args[] = {a->dev, a->stream, a->corr, a->bytes};
        sb_trace_complete_of(w, a->kind == SB_ACT_KERNEL ? SB_TRACE_GPU : SB_TRACE_BYTES,
                             STREAM_TID + a->stream, name, cat[a->kind], a->start, a->end, args);
        const source *s = NULL;
        if (a->kind == SB_ACT_COPY && a->rcorr)
            s = find_source(src, nsrc, 0, a->rcorr);
        else
            s = find_source(src, nsrc, 0, a->corr);
        if (!s)
            s = find_source(src, nsrc, 1, a->corr);
        if (s) /* from the launch's start on its thread to the work's start on its stream */
            sb_trace_flow(w, s->tid, s->start, STREAM_TID + a->stream, a->start);
    }
}

static void ranges(writer *w, const sb_audit_proc_result *res)
{
    const sb_audit_proc *p = res->proc;
    for (size_t i = 0; i < p->nranges; i++) {
        const sb_audit_range *r = &p->ranges[i];
        const int64_t args[] = {r->id, res->ranges[i].blocking};
        sb_trace_complete_of(w, SB_TRACE_RANGE, r->tid, r->name, "nvtx", r->start,
                             r->end >= r->start ? r->end : res->t_last, args);
    }
}

static int process(writer *w, const sb_audit_proc_result *res)
{
    const sb_audit_proc *p = res->proc;
    sb_trace_process(w, p->pid, p->mono_ns - p->clock_ns);
    char buf[512];
    if (p->rank >= 0)
        sb_audit_fmt(buf, sizeof buf, "pid %" PRId64 " rank %d: %s", p->pid, p->rank, p->cmd);
    else
        sb_audit_fmt(buf, sizeof buf, "pid %" PRId64 ": %s", p->pid, p->cmd);
    meta(w, 0, "process_name", buf);
    if (p->windowed && p->window_start >= 0) { /* where its GPU activity was recorded */
        char text[3 * SB_AUDIT_RANGE_NAME_MAX], name[sizeof text + 16];
        snprintf(name, sizeof name, "GPU window %s", sb_audit_window_text(p, text, sizeof text));
        sb_trace_emit(w, sb_trace_complete(w, 0, name, "gpu_window", p->window_start,
                                           p->window_end >= 0 ? p->window_end : res->t_last));
    }
    if (thread_names(w, res) < 0)
        return -1;
    /* launches by (domain, correlation): the host calls first, then the API records */
    size_t n = 0;
    source *src = malloc((p->ncalls + p->napis + 1) * sizeof *src);
    if (!src)
        return -1;
    for (size_t i = 0; i < p->ncalls; i++)
        src[n++] = (source){p->calls[i].corr, p->calls[i].drv, p->calls[i].tid, p->calls[i].start};
    size_t ncalls = n;
    sb_sort(src, ncalls, sizeof *src, cmp_source);
    calls(w, res);
    apis(w, res, src, ncalls);
    for (size_t i = 0; i < p->napis; i++)
        src[n++] = (source){p->apis[i].corr, p->apis[i].drv, p->apis[i].tid, p->apis[i].start};
    sb_sort(src, n, sizeof *src, cmp_source);
    acts(w, res, src, n);
    ranges(w, res);
    free(src);
    return 0;
}

int sb_audit_write_trace(FILE *f, const sb_audit_analysis *an)
{
    const sb_audit_run *run = an->run;
    int64_t t0 = run->t0_mono_ns;
    if (!t0) { /* no launcher's time: the first record */
        for (size_t i = 0; i < an->nprocs; i++) {
            const sb_audit_proc_result *res = &an->procs[i];
            const sb_audit_proc *p = res->proc;
            int64_t t = res->t_first + p->mono_ns - p->clock_ns;
            if (i == 0 || t < t0)
                t0 = t;
        }
    }
    writer *w = sb_trace_open(f, t0);
    if (!w)
        return sb_fail(SB_EXIT_FAIL, "out of memory writing the audit trace");
    int oom = 0;
    for (size_t i = 0; i < an->nprocs && !oom; i++)
        oom = process(w, &an->procs[i]) < 0;
    int rc = sb_trace_close(w);
    return oom && !rc ? sb_fail(SB_EXIT_FAIL, "out of memory writing the audit trace") : rc;
}
