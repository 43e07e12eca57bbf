/* The Chrome trace event format (Perfetto, chrome://tracing), laid out as PyTorch's profiler
 * writes it: per process, its host threads and its GPU streams (tid 1000000 + stream), complete
 * ("X") events for host calls, kernels, copies, memsets and NVTX ranges, and flows ("ac2g")
 * from each launch to its GPU work by correlation id. Written as it goes: a trace of millions
 * of kernels is never held as a JSON tree. */
#include "report/report.h"
#include "base/arrays.h"
#include "base/utf8.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

#define STREAM_TID 1000000

void sb_audit_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p == '\t')
            fputs("\\t", f);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

typedef struct {
    FILE *f;
    int first;
    int64_t t0;  /* CLOCK_MONOTONIC ns of ts 0 */
    int64_t off; /* this process: CUPTI clock -> CLOCK_MONOTONIC */
    int64_t pid;
    long flow_id;
} writer;

static double ts(const writer *w, int64_t t)
{
    return (double)(t + w->off - w->t0) / 1e3;
}

/* Starts an event object: {"ph":..,"pid":..,"tid":..[,"ts":..] */
static void begin(writer *w, const char *ph, int64_t tid)
{
    fputs(w->first ? "\n" : ",\n", w->f);
    w->first = 0;
    fprintf(w->f, "{\"ph\":\"%s\",\"pid\":%" PRId64 ",\"tid\":%" PRId64, ph, w->pid, tid);
}

static void complete(writer *w, int64_t tid, const char *name, const char *cat, int64_t start,
                     int64_t end)
{
    begin(w, "X", tid);
    fputs(",\"name\":", w->f);
    sb_audit_json_str(w->f, name);
    fprintf(w->f, ",\"cat\":\"%s\",\"ts\":%.3f,\"dur\":%.3f", cat, ts(w, start),
            (double)(end - start) / 1e3);
}

static void meta(writer *w, int64_t tid, const char *what, const char *name)
{
    begin(w, "M", tid);
    fprintf(w->f, ",\"name\":\"%s\",\"args\":{\"name\":", what);
    sb_audit_json_str(w->f, name);
    fputs("}}", w->f);
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

/* "python":["train.py:42 in step", ...], innermost first */
static void python_frames(FILE *f, const sb_audit_pystack *s)
{
    fputs(",\"python\":[", f);
    for (int i = 0; s && i < s->nframes; i++) {
        char buf[2048];
        sb_audit_fmt(buf, sizeof buf, "%s:%d in %s", s->frames[i].file, s->frames[i].line,
                     s->frames[i].func);
        if (i)
            fputc(',', f);
        sb_audit_json_str(f, buf);
    }
    fputc(']', f);
}

/* A sync's predicted savings, per call too: its site's, and its library line's alone. */
static void saving_args(FILE *f, const sb_audit_proc_result *res, const sb_audit_call_info *ci)
{
    const sb_audit_saving *sv = sb_audit_saving_of(res, SB_SAVE_SITE, ci->site, SB_AUDIT_NONE);
    int scaled = 0; /* from the GPU window */
    if (sv && !sb_audit_unmodelled(sv) && !isnan(sb_audit_saving_us(sv))) {
        fprintf(f, ",\"site_save_us\":%.3f,\"site_save_per_call_us\":%.3f", sb_audit_saving_us(sv),
                sv->r.typical_us);
        scaled |= sv->calls != sv->run_calls;
    }
    sv = ci->made->via_site && ci->made->via_site[0]
             ? sb_audit_line_saving_of(res, ci->site, ci->made->via_site)
             : NULL;
    if (sv && !sb_audit_unmodelled(sv) && !isnan(sb_audit_saving_us(sv))) {
        fprintf(f, ",\"via_save_us\":%.3f,\"via_save_per_call_us\":%.3f", sb_audit_saving_us(sv),
                sv->r.typical_us);
        scaled |= sv->calls != sv->run_calls;
    }
    if (scaled)
        fputs(",\"save_scaled_from\":\"window\"", f);
}

static void calls(writer *w, const sb_audit_proc_result *res)
{
    const sb_audit_proc *p = res->proc;
    for (size_t i = 0; i < p->ncalls; i++) {
        const sb_audit_call *c = &p->calls[i];
        const sb_audit_call_info *ci = &res->calls[i];
        int blocking = sb_audit_blocking(ci->cls);
        complete(w, c->tid, c->api,
                 blocking ? "sync"
                 : c->drv ? "cuda_driver"
                          : "cuda_runtime",
                 c->start, c->end);
        fprintf(w->f, ",\"args\":{\"class\":\"%s\",\"group\":\"%s\",\"correlation\":%" PRId64,
                sb_audit_class_name(ci->cls), sb_audit_group_name(sb_audit_class_group(ci->cls)),
                c->corr);
        if (ci->cls != SB_AUDIT_NONE) {
            fputs(",\"site\":", w->f);
            sb_audit_json_str(w->f, ci->site);
            fputs(",\"range\":", w->f);
            sb_audit_json_str(w->f, ci->range);
            fputs(",\"operation\":", w->f);
            sb_audit_json_str(w->f, ci->made->op ? ci->made->op : "unknown");
            if (ci->made->via) {
                fputs(",\"via\":", w->f);
                sb_audit_json_str(w->f, ci->made->via_site);
            }
            if (ci->made->library[0]) {
                fputs(",\"library\":", w->f);
                sb_audit_json_str(w->f, ci->made->library);
            }
            if (ci->pyframe)
                python_frames(w->f, sb_audit_find_pystack(p, sb_audit_call_py(p, c, ci)));
            if (ci->made->compile) /* made while torch.compile compiled: apart from the gate */
                fputs(",\"phase\":\"compile\"", w->f);
        }
        if (blocking && p->kernels && sb_audit_in_gpu_window(p, c->start))
            fprintf(w->f, ",\"bubble_us\":%.3f", (double)ci->bubble_ns / 1e3);
        if (blocking && !sb_audit_compile_time(ci))
            saving_args(w->f, res, ci);
        fputs("}}", w->f);
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
        complete(w, a->tid, a->api, a->drv ? "cuda_driver" : "cuda_runtime", a->start, a->end);
        fprintf(w->f, ",\"args\":{\"correlation\":%" PRId64 "}}", a->corr);
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
        complete(w, STREAM_TID + a->stream, name, cat[a->kind], a->start, a->end);
        fprintf(w->f, ",\"args\":{\"device\":%d,\"stream\":%" PRId64 ",\"correlation\":%" PRId64,
                a->dev, a->stream, a->corr);
        if (a->kind != SB_ACT_KERNEL)
            fprintf(w->f, ",\"bytes\":%" PRId64, a->bytes);
        fputs("}}", w->f);
        const source *s = NULL;
        if (a->kind == SB_ACT_COPY && a->rcorr)
            s = find_source(src, nsrc, 0, a->rcorr);
        else
            s = find_source(src, nsrc, 0, a->corr);
        if (!s)
            s = find_source(src, nsrc, 1, a->corr);
        if (!s)
            continue;
        long id = ++w->flow_id;
        begin(w, "s", s->tid);
        fprintf(w->f, ",\"id\":%ld,\"ts\":%.3f,\"cat\":\"ac2g\",\"name\":\"ac2g\"}", id,
                ts(w, s->start));
        begin(w, "f", STREAM_TID + a->stream);
        fprintf(w->f, ",\"id\":%ld,\"ts\":%.3f,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}",
                id, ts(w, a->start));
    }
}

static void ranges(writer *w, const sb_audit_proc_result *res)
{
    const sb_audit_proc *p = res->proc;
    for (size_t i = 0; i < p->nranges; i++) {
        const sb_audit_range *r = &p->ranges[i];
        complete(w, r->tid, r->name, "nvtx", r->start, r->end >= r->start ? r->end : res->t_last);
        fprintf(w->f, ",\"args\":{\"id\":%" PRId64 ",\"blocking_calls\":%ld}}", r->id,
                res->ranges[i].blocking);
    }
}

static int process(writer *w, const sb_audit_proc_result *res)
{
    const sb_audit_proc *p = res->proc;
    w->pid = p->pid;
    w->off = p->mono_ns - p->clock_ns;
    char buf[512];
    if (p->rank >= 0)
        sb_audit_fmt(buf, sizeof buf, "pid %" PRId64 " rank %d: %s", p->pid, p->rank, p->cmd);
    else
        sb_audit_fmt(buf, sizeof buf, "pid %" PRId64 ": %s", p->pid, p->cmd);
    meta(w, 0, "process_name", buf);
    if (p->windowed && p->window_start >= 0) { /* where its GPU activity was recorded */
        char text[3 * SB_AUDIT_RANGE_NAME_MAX], name[sizeof text + 16];
        snprintf(name, sizeof name, "GPU window %s", sb_audit_window_text(p, text, sizeof text));
        complete(w, 0, name, "gpu_window", p->window_start,
                 p->window_end >= 0 ? p->window_end : res->t_last);
        fputs("}", w->f);
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
    writer w = {.f = f, .first = 1, .t0 = run->t0_mono_ns};
    if (!w.t0) { /* no launcher's time: the first record */
        for (size_t i = 0; i < an->nprocs; i++) {
            const sb_audit_proc_result *res = &an->procs[i];
            const sb_audit_proc *p = res->proc;
            int64_t t = res->t_first + p->mono_ns - p->clock_ns;
            if (i == 0 || t < w.t0)
                w.t0 = t;
        }
    }
    fputs("{\"traceEvents\":[", f);
    for (size_t i = 0; i < an->nprocs; i++)
        if (process(&w, &an->procs[i]) < 0)
            return sb_fail(SB_EXIT_FAIL, "out of memory writing the audit trace");
    fputs("\n],\"displayTimeUnit\":\"ns\"}\n", f);
    return ferror(f) ? sb_fail(SB_EXIT_FAIL, "audit trace: write error") : 0;
}
