/* Reading the record streams (records.h) with jansson: one JSON object per line, dispatched on
 * its "t" by the record table (record/schema.c), which also says the fields each kind requires. A
 * line that is not a JSON object, or a known record without a required field (or with one the
 * reader cannot use), is skipped and counted; unknown "t" values and unknown fields are
 * ignored. */
#include "model/model.h"
#include "base/arrays.h"

#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/records.h"
#include "record/schema.h"
#include "base/error.h"
#include "base/regfile.h"

/* An integer field (a real is truncated); 0 and *ok = 0 when absent. */
/* Numbers beyond +-(2^62 - 1) are refused (taken as absent): no record field holds one (CUPTI's
 * times are nanoseconds since 1970: 1.8e18 in 2026, 4.6e18 in 2116), and any two accepted
 * times differ by less than int64's range (the fuzzer's 3e50 was a cast out of it). */
#define NUM_LIMIT (((int64_t)1 << 62) - 1)

static int64_t num(json_t *o, const char *key, int *ok)
{
    json_t *v = json_object_get(o, key);
    if (json_is_integer(v) && json_integer_value(v) >= -NUM_LIMIT &&
        json_integer_value(v) <= NUM_LIMIT)
        return (int64_t)json_integer_value(v);
    if (json_is_real(v) && json_real_value(v) >= (double)-NUM_LIMIT &&
        json_real_value(v) <= (double)NUM_LIMIT)
        return (int64_t)json_real_value(v);
    if (ok)
        *ok = 0;
    return 0;
}

static int64_t num_or(json_t *o, const char *key, int64_t dflt)
{
    int ok = 1;
    int64_t v = num(o, key, &ok);
    return ok ? v : dflt;
}

/* An interned string field; `dflt` when absent. NULL only when out of memory. */
static const char *str(sb_audit_run *run, json_t *o, const char *key, const char *dflt)
{
    json_t *v = json_object_get(o, key);
    const char *s = json_is_string(v) ? json_string_value(v) : dflt;
    return s ? sb_audit_intern(&run->strs, s) : NULL;
}

static int is_drv(json_t *o)
{
    json_t *v = json_object_get(o, "dom");
    return json_is_string(v) && strcmp(json_string_value(v), "drv") == 0;
}

enum { OK = 0, BAD = 1, NOMEM = -1 };

/* Appends rec to one of the process's arrays (p->NAME, p->nNAME, p->cap_NAME); the sizeof
 * checks, unevaluated, that rec is of the array's type. */
#define APPEND(p, name, rec)                                                                       \
    ((void)sizeof((p)->name[0] = (rec)),                                                           \
     append(&(p)->name, &(p)->cap_##name, &(p)->n##name, &(rec), sizeof(rec)))

static int append(void *arr, size_t *cap, size_t *n, const void *rec, size_t size)
{
    if (sb_grow(arr, cap, *n, size) < 0)
        return NOMEM;
    memcpy((char *)*(void **)arr + *n * size, rec, size);
    ++*n;
    return OK;
}

/* The "start" and "end" of a record that lasts: both there, the end not before the start. */
static int read_span(json_t *o, int64_t *start, int64_t *end)
{
    int ok = 1;
    *start = num(o, "start", &ok);
    *end = num(o, "end", &ok);
    return ok && *end >= *start;
}

/* An optional string field: left NULL when absent; 0 only when out of memory. */
static int opt_str(sb_audit_run *run, json_t *o, const char *key, const char **out)
{
    return !json_is_string(json_object_get(o, key)) || (*out = str(run, o, key, NULL)) != NULL;
}

/* The "proc" record's "off": the kind names, comma-separated, into p->activity_off; left NULL
 * when there are none. 0 only when out of memory. */
static int read_off(sb_audit_run *run, sb_audit_proc *p, json_t *o)
{
    json_t *off = json_object_get(o, "off"), *k;
    char names[512] = "";
    size_t i, len = 0;
    json_array_foreach(off, i, k)
    {
        if (json_is_string(k) && len + 2 + strlen(json_string_value(k)) < sizeof names)
            len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", len ? "," : "",
                                    json_string_value(k));
    }
    p->activity_off = NULL;
    return !len || (p->activity_off = sb_audit_intern(&run->strs, names)) != NULL;
}

static int read_proc(sb_audit_run *run, sb_audit_proc *p, json_t *o)
{
    int ok = 1;
    p->pid = num(o, "pid", &ok);
    if (!ok)
        return BAD;
    p->has_proc = 1;
    p->ppid = num_or(o, "ppid", 0);
    p->rank = (int)num_or(o, "rank", -1);
    p->local_rank = (int)num_or(o, "local_rank", -1);
    p->clock_ns = num_or(o, "clock_ns", 0);
    p->mono_ns = num_or(o, "mono_ns", p->clock_ns);
    p->cmd = str(run, o, "cmd", "");
    p->mode = str(run, o, "mode", "count");
    p->kernels = num_or(o, "kernels", 1) != 0;
    p->launches = num_or(o, "launches", 0) != 0;
    p->waits = num_or(o, "waits", 0) != 0;
    p->symsize = num_or(o, "symsize", 0) != 0;
    const char *window = json_string_value(json_object_get(o, "window"));
    if (window) { /* one the parser refuses: a window whose range is unknown, never opened */
        char why[160];
        p->windowed = 1;
        sb_gpu_window_parse(window, &p->window, why, sizeof why);
    }
    return p->cmd && p->mode && read_off(run, p, o) ? OK : NOMEM;
}

/* A call's "ranges": [[id, "name"], ...], outermost first; malformed entries are skipped. */
static int read_call_ranges(sb_audit_run *run, sb_audit_call *c, json_t *ranges)
{
    if (!json_is_array(ranges) || !json_array_size(ranges))
        return OK;
    c->ranges = calloc(json_array_size(ranges), sizeof *c->ranges);
    if (!c->ranges)
        return NOMEM;
    size_t i;
    json_t *r;
    json_array_foreach(ranges, i, r)
    {
        json_t *id = json_array_get(r, 0), *name = json_array_get(r, 1);
        if (!json_is_integer(id) || !json_is_string(name))
            continue;
        sb_audit_range_ref *ref = &c->ranges[c->nranges];
        ref->id = json_integer_value(id);
        if (!(ref->name = sb_audit_intern(&run->strs, json_string_value(name))))
            return NOMEM;
        c->nranges++;
    }
    return OK;
}

/* What "call" and "api" records share: the API, its time, thread and correlation id. 0: the
 * record lacks one of them (or memory ran out interning the API's name). */
static int read_api_fields(sb_audit_run *run, json_t *o, sb_audit_api *a)
{
    a->api = str(run, o, "api", NULL);
    if (!a->api || !read_span(o, &a->start, &a->end))
        return 0;
    a->drv = is_drv(o);
    a->tid = num_or(o, "tid", 0);
    a->corr = num_or(o, "corr", 0);
    return 1;
}

static int read_call(sb_audit_run *run, sb_audit_proc *p, json_t *o)
{
    sb_audit_api a;
    if (!read_api_fields(run, o, &a))
        return BAD;
    sb_audit_call c = {.api = a.api, .drv = a.drv, .tid = a.tid, .corr = a.corr};
    c.start = a.start;
    c.end = a.end;
    c.ctx = num_or(o, "ctx", 0);
    c.stack = num_or(o, "stack", -1);
    c.py = num_or(o, "py", -1);
    c.oh = num_or(o, "oh", 0);
    c.ptr = num_or(o, "ptr", 0);
    if (c.oh < 0)
        c.oh = 0;
    int rc = opt_str(run, o, "host", &c.host) && opt_str(run, o, "copy", &c.copy)
                 ? read_call_ranges(run, &c, json_object_get(o, "ranges"))
                 : NOMEM;
    if (rc == OK)
        rc = APPEND(p, calls, c);
    if (rc != OK)
        free(c.ranges);
    return rc;
}

static int read_range(sb_audit_run *run, sb_audit_proc *p, json_t *o)
{
    int ok = 1;
    sb_audit_range r = {0};
    r.tid = num_or(o, "tid", 0);
    r.id = num(o, "id", &ok);
    r.start = num(o, "start", &ok);
    r.end = num_or(o, "end", -1);
    r.depth = (int)num_or(o, "depth", 0);
    r.name = str(run, o, "name", NULL);
    r.domain = str(run, o, "dom", "");
    r.recorded = 1;
    json_t *kind = json_object_get(o, "kind");
    r.startend = json_is_string(kind) && !strcmp(json_string_value(kind), "startend");
    if (!ok || !r.name || !r.domain)
        return BAD;
    return APPEND(p, ranges, r);
}

/* A native frame: [obj, sym, off, abs]. 1, or NOMEM. */
static int native_frame(sb_audit_run *run, json_t *f, void *out)
{
    sb_audit_frame *fr = out;
    json_t *obj = json_array_get(f, 0), *sym = json_array_get(f, 1);
    json_t *off = json_array_get(f, 2), *abs = json_array_get(f, 3);
    fr->obj = sb_audit_intern(&run->strs, json_is_string(obj) ? json_string_value(obj) : "");
    fr->sym = sb_audit_intern(&run->strs, json_is_string(sym) ? json_string_value(sym) : "");
    fr->off = json_is_integer(off) ? json_integer_value(off) : 0;
    fr->abs = json_is_integer(abs) ? json_integer_value(abs) : 0;
    return fr->obj && fr->sym ? 1 : NOMEM;
}

/* A Python frame: ["file", "func", line]. 1, 0 when it lacks its file or function (skipped),
 * or NOMEM. */
static int python_frame(sb_audit_run *run, json_t *f, void *out)
{
    sb_audit_pyframe *fr = out;
    json_t *file = json_array_get(f, 0), *func = json_array_get(f, 1);
    json_t *line = json_array_get(f, 2);
    if (!json_is_string(file) || !json_is_string(func))
        return 0;
    fr->file = sb_audit_intern(&run->strs, json_string_value(file));
    fr->func = sb_audit_intern(&run->strs, json_string_value(func));
    json_int_t l = json_is_integer(line) ? json_integer_value(line) : 0;
    fr->line = l > 0 && l < 1000000000 ? (int)l : 0;
    return fr->file && fr->func ? 1 : NOMEM;
}

typedef int (*frame_reader)(sb_audit_run *run, json_t *f, void *out);

/* A stack record's id and "frames", each frame (size bytes) read by one(): 1 kept, 0 skipped,
 * NOMEM. *frames is the caller's to free once OK. */
static int read_frames(sb_audit_run *run, json_t *o, int64_t *id, void **frames, int *n,
                       size_t size, frame_reader one)
{
    int ok = 1;
    *id = num(o, "id", &ok);
    json_t *list = json_object_get(o, "frames");
    if (!ok || !json_is_array(list))
        return BAD;
    char *fr = calloc(json_array_size(list) + 1, size);
    if (!fr)
        return NOMEM;
    size_t i;
    json_t *f;
    json_array_foreach(list, i, f)
    {
        int r = one(run, f, fr + (size_t)*n * size);
        if (r < 0) {
            free(fr);
            return NOMEM;
        }
        *n += r;
    }
    *frames = fr;
    return OK;
}

/* {"t":"stack","id":N,"frames":[[obj,sym,off,abs],...]} and
 * {"t":"pystack","id":N,"frames":[["file","func",line],...]} (python) */
static int read_stack(sb_audit_run *run, sb_audit_proc *p, json_t *o, int python)
{
    int64_t id;
    void *frames = NULL;
    int n = 0;
    int rc = python ? read_frames(run, o, &id, &frames, &n, sizeof(sb_audit_pyframe), python_frame)
                    : read_frames(run, o, &id, &frames, &n, sizeof(sb_audit_frame), native_frame);
    if (rc != OK)
        return rc;
    if (python) {
        sb_audit_pystack s = {.id = id, .nframes = n, .frames = frames};
        rc = APPEND(p, pystacks, s);
    } else {
        sb_audit_stack s = {.id = id, .nframes = n, .frames = frames};
        rc = APPEND(p, stacks, s);
    }
    if (rc != OK)
        free(frames);
    return rc;
}

static int read_act(sb_audit_run *run, sb_audit_proc *p, json_t *o, int kind)
{
    sb_audit_act a = {0};
    a.kind = kind;
    if (!read_span(o, &a.start, &a.end))
        return BAD;
    a.dev = (int)num_or(o, "dev", 0);
    a.ctx = num_or(o, "ctx", 0);
    a.stream = num_or(o, "stream", 0);
    a.corr = num_or(o, "corr", 0);
    a.rcorr = num_or(o, "rcorr", 0);
    a.bytes = num_or(o, "bytes", 0);
    if (!opt_str(run, o, "name", &a.name))
        return NOMEM;
    if (kind == SB_ACT_COPY) {
        a.ckind = str(run, o, "kind", "other");
        a.src = str(run, o, "src", "other");
        a.dst = str(run, o, "dst", "other");
        if (!a.ckind || !a.src || !a.dst)
            return NOMEM;
    }
    return APPEND(p, acts, a);
}

static int read_api(sb_audit_run *run, sb_audit_proc *p, json_t *o)
{
    sb_audit_api a;
    return read_api_fields(run, o, &a) ? APPEND(p, apis, a) : BAD;
}

/* The integer fields of a record that has only those (and a name from a list): each one's key
 * is its member's name, with its default when absent. Which are required is the record table's
 * (record/schema.c), checked before: their default is never used. */
typedef struct {
    const char *key;
    size_t off; /* of an int64_t member */
    int64_t dflt;
} int_field;
#define I64(type, member, dflt)                                                                    \
    {                                                                                              \
#member, offsetof(type, member), dflt                                                      \
    }

static const int_field event_fields[] = {I64(sb_audit_evrec, stream, 0),
                                         I64(sb_audit_evrec, sync_id, 0),
                                         I64(sb_audit_evrec, ctx, 0), I64(sb_audit_evrec, corr, 0)};
static const int_field sync_fields[] = {
    I64(sb_audit_syncrec, corr, 0),    I64(sb_audit_syncrec, ctx, 0),
    I64(sb_audit_syncrec, stream, -1), I64(sb_audit_syncrec, sync_id, -1),
    I64(sb_audit_syncrec, start, 0),   I64(sb_audit_syncrec, end, 0)};
static const int_field gstream_fields[] = {I64(sb_audit_gstream, stream, 0),
                                           I64(sb_audit_gstream, ctx, 0)};
static const int_field pause_fields[] = {I64(sb_audit_pause, tid, 0), I64(sb_audit_pause, start, 0),
                                         I64(sb_audit_pause, end, 0)};
static const int_field wake_fields[] = {I64(sb_audit_wake, tid, 0), I64(sb_audit_wake, start, 0),
                                        I64(sb_audit_wake, end, 0), I64(sb_audit_wake, by, 0),
                                        I64(sb_audit_wake, at, 0),  I64(sb_audit_wake, py, -1)};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Reads fields[0..n) into rec. */
static void read_ints(json_t *o, void *rec, const int_field *fields, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int64_t v = num_or(o, fields[i].key, fields[i].dflt);
        memcpy((char *)rec + fields[i].off, &v, sizeof v);
    }
}

/* A field whose value is one of names[0..n): its index, -1 when absent or none of them. */
static int read_name(json_t *o, const char *key, const char *const *names, int n)
{
    const char *s = json_string_value(json_object_get(o, key));
    for (int i = 0; s && i < n; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

static int read_event(sb_audit_run *run, sb_audit_proc *p, json_t *o)
{
    (void)run;
    sb_audit_evrec e = {0};
    read_ints(o, &e, event_fields, COUNT(event_fields));
    return APPEND(p, evrecs, e);
}

static int read_sync(sb_audit_run *run, sb_audit_proc *p, json_t *o)
{
    (void)run;
    static const char *const types[] = {"event", "wait", "stream", "context"};
    sb_audit_syncrec y = {.type = read_name(o, "type", types, 4)};
    read_ints(o, &y, sync_fields, COUNT(sync_fields));
    if (y.type < 0)
        return BAD;
    return APPEND(p, syncrecs, y);
}

static int read_gstream(sb_audit_run *run, sb_audit_proc *p, json_t *o)
{
    (void)run;
    static const char *const flags[] = {"null", "blocking", "non-blocking"};
    sb_audit_gstream g = {.flag = read_name(o, "flag", flags, 3)};
    read_ints(o, &g, gstream_fields, COUNT(gstream_fields));
    if (g.flag < 0)
        return BAD;
    return APPEND(p, gstreams, g);
}

/* A hand-off: the signal that ended the wait falls inside it, and comes from another thread */
static int read_wake(sb_audit_run *run, sb_audit_proc *p, json_t *o)
{
    (void)run;
    sb_audit_wake w;
    read_ints(o, &w, wake_fields, COUNT(wake_fields));
    if (w.end < w.start || w.at < w.start || w.at > w.end || w.tid == w.by)
        return BAD;
    return APPEND(p, wakes, w);
}

static int read_pause(sb_audit_run *run, sb_audit_proc *p, json_t *o)
{
    (void)run;
    sb_audit_pause z;
    read_ints(o, &z, pause_fields, COUNT(pause_fields));
    if (z.end < z.start)
        return BAD;
    return APPEND(p, pauses, z);
}

/* The window of GPU activity: its range and instances as the record names them (the "proc"
 * record's "window" says the same), and when it opened and closed; an end before its start, or
 * a close without an opening, is malformed. */
static int read_gwindow(sb_audit_run *run, sb_audit_proc *p, json_t *o)
{
    (void)run;
    const char *name = json_string_value(json_object_get(o, "range"));
    json_t *dom = json_object_get(o, "dom");
    int64_t start = num_or(o, "start", -1), end = num_or(o, "end", -1);
    long first = (long)num_or(o, "first", 0), last = (long)num_or(o, "last", 0);
    if (start < -1 || end < -1 || (end >= 0 && (start < 0 || end < start)) || first < 1 ||
        last < first || strlen(name) > SB_AUDIT_RANGE_NAME_MAX ||
        (json_is_string(dom) && strlen(json_string_value(dom)) > SB_AUDIT_RANGE_NAME_MAX))
        return BAD;
    sb_gpu_window *w = &p->window;
    memset(w, 0, sizeof *w);
    snprintf(w->name, sizeof w->name, "%s", name);
    w->any_domain = !json_is_string(dom);
    snprintf(w->domain, sizeof w->domain, "%s", w->any_domain ? "" : json_string_value(dom));
    w->first = first;
    w->last = last;
    p->windowed = 1;
    p->window_start = start;
    p->window_end = end;
    return OK;
}

/* Records kept by a syncbench before the "unwatched" record said a refused subscription in a
 * warning: that warning still means nothing was recorded. */
#define OLD_UNWATCHED_WARNING "blocking calls cannot be recorded"

static int read_warn(sb_audit_run *run, sb_audit_proc *p, json_t *o)
{
    if (!p->first_warn && !(p->first_warn = str(run, o, "msg", "")))
        return NOMEM;
    p->warns++;
    const char *msg = json_string_value(json_object_get(o, "msg"));
    if (msg && strstr(msg, OLD_UNWATCHED_WARNING) && !p->unwatched &&
        !(p->unwatched = str(run, o, "msg", "")))
        return NOMEM;
    return OK;
}

static int read_unwatched(sb_audit_run *run, sb_audit_proc *p, json_t *o)
{
    return (p->unwatched = str(run, o, "why", "")) ? OK : NOMEM;
}

static int read_end(sb_audit_run *run, sb_audit_proc *p, json_t *o)
{
    p->complete = 1;
    p->dropped = num_or(o, "dropped", 0);
    p->wakes_lost = num_or(o, "wakes_lost", 0);
    if (!(p->why = str(run, o, "why", "exit")))
        return NOMEM;
    if (!p->has_proc) {
        p->clock_ns = num_or(o, "clock_ns", 0);
        p->mono_ns = num_or(o, "mono_ns", p->clock_ns);
    }
    return OK;
}

static int read_pystack(sb_audit_run *run, sb_audit_proc *p, json_t *o)
{
    return read_stack(run, p, o, 1);
}

static int read_native_stack(sb_audit_run *run, sb_audit_proc *p, json_t *o)
{
    return read_stack(run, p, o, 0);
}

static int read_kernel(sb_audit_run *run, sb_audit_proc *p, json_t *o)
{
    return read_act(run, p, o, SB_ACT_KERNEL);
}

static int read_copy(sb_audit_run *run, sb_audit_proc *p, json_t *o)
{
    return read_act(run, p, o, SB_ACT_COPY);
}

static int read_memset(sb_audit_run *run, sb_audit_proc *p, json_t *o)
{
    return read_act(run, p, o, SB_ACT_MEMSET);
}

/* The reader of each kind of the record table, by its row. */
typedef int (*record_reader)(sb_audit_run *run, sb_audit_proc *p, json_t *o);
static const record_reader readers[SB_REC_NKINDS] = {
    [SB_REC_PROC] = read_proc,
    [SB_REC_CALL] = read_call,
    [SB_REC_RANGE] = read_range,
    [SB_REC_PYSTACK] = read_pystack,
    [SB_REC_STACK] = read_native_stack,
    [SB_REC_KERNEL] = read_kernel,
    [SB_REC_COPY] = read_copy,
    [SB_REC_MEMSET] = read_memset,
    [SB_REC_API] = read_api,
    [SB_REC_EVENT] = read_event,
    [SB_REC_SYNC] = read_sync,
    [SB_REC_GSTREAM] = read_gstream,
    [SB_REC_PAUSE] = read_pause,
    [SB_REC_WAKE] = read_wake,
    [SB_REC_GWINDOW] = read_gwindow,
    [SB_REC_UNWATCHED] = read_unwatched,
    [SB_REC_WARN] = read_warn,
    [SB_REC_END] = read_end,
};

/* Whether o holds every field its kind requires, each of a type the reader takes: an integer
 * field a number within NUM_LIMIT (a real is truncated). */
static int has_required(const sb_rec_def *def, json_t *o)
{
    for (size_t i = 0; i < def->nfields; i++) {
        const sb_rec_field *f = &def->fields[i];
        json_t *v = json_object_get(o, f->name);
        int ok = 1;
        if (!f->required)
            continue;
        if (f->type == SB_FT_INT)
            num(o, f->name, &ok);
        else
            ok = f->type == SB_FT_STR ? json_is_string(v) : json_is_array(v);
        if (!ok)
            return 0;
    }
    return 1;
}

static int read_line(sb_audit_run *run, sb_audit_proc *p, json_t *o)
{
    const char *t = json_string_value(json_object_get(o, "t"));
    if (!t)
        return BAD;
    const sb_rec_def *def = sb_rec_find(t);
    if (!def || !readers[def->kind])
        return OK; /* a newer writer's record */
    return has_required(def, o) ? readers[def->kind](run, p, o) : BAD;
}

static sb_audit_proc *new_proc(sb_audit_run *run, const char *name)
{
    sb_audit_proc *p = calloc(1, sizeof *p);
    if (!p || sb_grow(&run->procs, &run->cap_procs, run->nprocs, sizeof *run->procs) < 0) {
        free(p);
        return NULL;
    }
    p->name = sb_audit_intern(&run->strs, name ? name : "");
    p->cmd = sb_audit_intern(&run->strs, "");
    p->mode = p->cmd;
    p->rank = p->local_rank = -1;
    p->window_start = p->window_end = -1;
    if (!p->name || !p->cmd) {
        free(p);
        return NULL;
    }
    /* the pid from proc-<pid>.jsonl until a "proc" record says it */
    const char *base = strrchr(p->name, '/');
    base = base ? base + 1 : p->name;
    if (strncmp(base, "proc-", 5) == 0)
        p->pid = strtoll(base + 5, NULL, 10);
    run->procs[run->nprocs++] = p;
    return p;
}

/* The longest record line read: the library writes lines of a few KiB (a stack of 64 Python
 * frames with their paths fits in 64 KiB); an endless stream without a newline (a record that
 * is a link to /dev/zero) must not take the memory. */
#define LINE_MAX_BYTES (16u << 20)

/* getline with a bound: the line's length (NUL bytes kept: the JSON reader refuses them), -1
 * at the end, -2 when it is longer than the bound, -3 out of memory */
static ssize_t read_line_bounded(char **line, size_t *cap, FILE *f)
{
    size_t len = 0;
    int ch = EOF;
    while ((ch = getc_unlocked(f)) != EOF) {
        if (len >= LINE_MAX_BYTES)
            return -2;
        if (len + 2 > *cap) {
            size_t want = *cap ? *cap * 2 : 4096;
            char *grown = realloc(*line, want);
            if (!grown)
                return -3;
            *line = grown, *cap = want;
        }
        (*line)[len++] = (char)ch;
        if (ch == '\n')
            break;
    }
    if (!len)
        return -1;
    (*line)[len] = '\0';
    return (ssize_t)len;
}

int sb_audit_load_stream(sb_audit_run *run, FILE *f, const char *name)
{
    sb_audit_proc *p = new_proc(run, name);
    if (!p)
        return sb_fail(SB_EXIT_FAIL, "out of memory reading %s", name);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = 0;
    long lineno = 0;
    while ((len = read_line_bounded(&line, &cap, f)) >= 0 || len < -1) {
        lineno++;
        if (len == -2) {
            rc = sb_fail(SB_EXIT_USAGE, "%s:%ld: a record line longer than %u MiB: not records",
                         name, lineno, LINE_MAX_BYTES >> 20);
            break;
        }
        if (len == -3) {
            rc = sb_fail(SB_EXIT_FAIL, "out of memory reading %s", name);
            break;
        }
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (len == 0)
            continue;
        json_error_t err;
        json_t *o = json_loadb(line, (size_t)len, JSON_REJECT_DUPLICATES, &err);
        int r = json_is_object(o) ? read_line(run, p, o) : BAD;
        json_decref(o);
        if (r == BAD)
            p->malformed++;
        else if (r == NOMEM) {
            rc = sb_fail(SB_EXIT_FAIL, "out of memory reading %s", name);
            break;
        }
    }
    free(line);
    if (!rc && ferror(f))
        rc = sb_fail(SB_EXIT_FAIL, "%s: read error", name);
    return rc;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int sb_audit_load_dir(const char *dir, sb_audit_run **out)
{
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d && errno == ENOENT) { /* the program removed it: no stream, the status tells */
        *out = sb_audit_run_new();
        return *out ? 0 : sb_fail(SB_EXIT_FAIL, "out of memory");
    }
    if (!d)
        return sb_fail(SB_EXIT_FAIL, "cannot read %s: %s", dir, strerror(errno));
    sb_audit_run *run = sb_audit_run_new();
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = run ? 0 : sb_fail(SB_EXIT_FAIL, "out of memory");
    struct dirent *e;
    while (!rc && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, "proc-", 5) != 0 || len < 6 ||
            strcmp(e->d_name + len - 6, ".jsonl") != 0)
            continue;
        if (sb_grow(&names, &cap, n, sizeof *names) < 0 || !(names[n] = strdup(e->d_name)))
            rc = sb_fail(SB_EXIT_FAIL, "out of memory");
        else
            n++;
    }
    closedir(d);
    if (n)
        sb_sort(names, n, sizeof *names, cmp_names);
    for (size_t i = 0; i < n && !rc; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f;
        int why = sb_open_regular(path, &f); /* a FIFO or a device is no record */
        if (why) {
            rc = why == SB_REG_ERRNO
                     ? sb_fail(SB_EXIT_FAIL, "cannot read %s: %s", path, strerror(errno))
                     : sb_fail(SB_EXIT_USAGE, "%s: %s", path, sb_regular_why(why));
            break;
        }
        rc = sb_audit_load_stream(run, f, path);
        fclose(f);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (rc) {
        sb_audit_free(run);
        return rc;
    }
    if ((rc = sb_audit_read_calibration(run, dir)) != 0) {
        sb_audit_free(run);
        return rc;
    }
    *out = run;
    return 0;
}

/* The launcher's word on each CUDA process: its file's fate and the lines it lost. A process
 * with no stream at all (its file could not be created) is added, empty, so that the report
 * names it and the gate fails. */
int sb_audit_set_status(sb_audit_run *run, const sb_audit_status *st, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        sb_audit_proc *p = NULL;
        for (size_t k = 0; k < run->nprocs && !p; k++)
            if (run->procs[k]->pid == st[i].pid)
                p = run->procs[k];
        if (!p) {
            char name[64];
            snprintf(name, sizeof name, "proc-%lld.jsonl", (long long)st[i].pid);
            if (!(p = new_proc(run, name)))
                return sb_fail(SB_EXIT_FAIL, "out of memory");
            p->unrecorded = 1;
            p->open_errno = st[i].opened ? 0 : st[i].open_errno;
        }
        p->lost += st[i].lost;
    }
    return 0;
}
