#include "report/trace_events.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "report/json_build.h"

/* compact, keys in the order set; 15 digits print a time in us with its ns exactly (under 10^12
 * us: 11 days) as the shortest text that reads back to the same number */
#define EVENT_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))
#define MAX_ARGS 4

/* An event built once, and the values set in place for each event of its shape. */
typedef struct {
    json_t *e;
    json_t *pid, *tid, *name, *cat, *ts, *dur, *id;
    json_t *args[MAX_ARGS];
    int nargs;
} shape;

struct sb_trace_writer {
    FILE *f;
    char *buf; /* an event's text, after 2 bytes for the separator */
    size_t cap;
    int first;
    int oom; /* an event could not be made: the writer fails at close */
    int64_t t0, off, pid;
    long flow_id;
    shape x[SB_TRACE_NSHAPES];
    shape flow_s, flow_f;
};

static const char *const arg_keys[SB_TRACE_NSHAPES][MAX_ARGS + 1] = {
    [SB_TRACE_API] = {"correlation", NULL},
    [SB_TRACE_GPU] = {"device", "stream", "correlation", NULL},
    [SB_TRACE_BYTES] = {"device", "stream", "correlation", "bytes", NULL},
    [SB_TRACE_RANGE] = {"id", "blocking_calls", NULL},
};

json_t *sb_trace_us(int64_t ns)
{
    return json_real((double)ns / 1e3);
}

json_t *sb_trace_us_rounded(double us)
{
    char text[64];
    snprintf(text, sizeof text, "%.3f", us);
    return json_real(strtod(text, NULL));
}

void sb_trace_set(sb_trace_writer *w, json_t *o, const char *key, json_t *v)
{
    sb_json_set(&w->oom, o, key, v);
}

void sb_trace_set_str(sb_trace_writer *w, json_t *o, const char *key, const char *s)
{
    sb_json_set(&w->oom, o, key, sb_json_str(s));
}

void sb_trace_set_int(sb_trace_writer *w, json_t *o, const char *key, int64_t v)
{
    sb_json_set(&w->oom, o, key, json_integer((json_int_t)v));
}

void sb_trace_append(sb_trace_writer *w, json_t *a, json_t *v)
{
    sb_json_append(&w->oom, a, v);
}

/* value (a new reference, kept in *slot too) set in o: a value of a shape */
static void keep(sb_trace_writer *w, json_t *o, const char *key, json_t **slot, json_t *value)
{
    *slot = value;
    if (!o || !value || json_object_set(o, key, value) < 0)
        w->oom = 1;
}

/* {"ph":ph,"pid":..,"tid":..} of a shape, its pid and tid kept */
static void shape_head(sb_trace_writer *w, shape *s, const char *ph)
{
    s->e = json_object();
    sb_trace_set_str(w, s->e, "ph", ph);
    keep(w, s->e, "pid", &s->pid, json_integer(0));
    keep(w, s->e, "tid", &s->tid, json_integer(0));
}

static void make_x(sb_trace_writer *w, shape *s, const char *const *keys)
{
    shape_head(w, s, "X");
    keep(w, s->e, "name", &s->name, json_string(""));
    keep(w, s->e, "cat", &s->cat, json_string(""));
    keep(w, s->e, "ts", &s->ts, json_real(0));
    keep(w, s->e, "dur", &s->dur, json_real(0));
    json_t *args = json_object();
    for (s->nargs = 0; keys[s->nargs]; s->nargs++)
        keep(w, args, keys[s->nargs], &s->args[s->nargs], json_integer(0));
    sb_trace_set(w, s->e, "args", args);
}

/* "s" or "f" (with "bp":"e", the flow bound to the enclosing slice) of a flow */
static void make_flow(sb_trace_writer *w, shape *s, const char *ph)
{
    shape_head(w, s, ph);
    keep(w, s->e, "id", &s->id, json_integer(0));
    keep(w, s->e, "ts", &s->ts, json_real(0));
    sb_trace_set_str(w, s->e, "cat", "ac2g");
    sb_trace_set_str(w, s->e, "name", "ac2g");
    if (!strcmp(ph, "f"))
        sb_trace_set_str(w, s->e, "bp", "e");
}

static void free_shape(shape *s)
{
    json_t *values[] = {s->pid, s->tid, s->name, s->cat, s->ts, s->dur, s->id};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++)
        json_decref(values[i]);
    for (int i = 0; i < s->nargs; i++)
        json_decref(s->args[i]);
    json_decref(s->e);
}

/* Dumps e as the next line of the array: into the buffer, then written at once (json_dumpf
 * writes each token apart, at 4 times the cost). */
static void write_event(sb_trace_writer *w, json_t *e)
{
    size_t n = e ? json_dumpb(e, w->buf + 2, w->cap - 2, EVENT_FLAGS) : 0;
    if (n > w->cap - 2) { /* a longer event (a deep Python stack): a larger buffer */
        char *grown = realloc(w->buf, n + 2);
        if (grown)
            w->buf = grown, w->cap = n + 2;
        n = grown ? json_dumpb(e, w->buf + 2, w->cap - 2, EVENT_FLAGS) : 0;
    }
    if (!n) {
        w->oom = 1;
        return;
    }
    size_t skip = w->first; /* ",\n" before each event, "\n" before the first */
    memcpy(w->buf, ",\n", 2);
    fwrite(w->buf + skip, 1, n + 2 - skip, w->f);
    w->first = 0;
}

sb_trace_writer *sb_trace_open(FILE *f, int64_t t0)
{
    sb_trace_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->buf = malloc(64 << 10))) {
        free(w);
        return NULL;
    }
    w->f = f, w->cap = 64 << 10, w->first = 1, w->t0 = t0;
    for (int i = 0; i < SB_TRACE_NSHAPES; i++)
        make_x(w, &w->x[i], arg_keys[i]);
    make_flow(w, &w->flow_s, "s");
    make_flow(w, &w->flow_f, "f");
    /* the document around the events: constant text, each event one line of it */
    fputs("{\"traceEvents\":[", f);
    return w;
}

void sb_trace_process(sb_trace_writer *w, int64_t pid, int64_t off)
{
    w->pid = pid, w->off = off;
    for (int i = 0; i < SB_TRACE_NSHAPES; i++)
        json_integer_set(w->x[i].pid, pid);
    json_integer_set(w->flow_s.pid, pid);
    json_integer_set(w->flow_f.pid, pid);
}

int sb_trace_close(sb_trace_writer *w)
{
    fputs("\n],\"displayTimeUnit\":\"ns\"}\n", w->f);
    int bad = ferror(w->f), oom = w->oom;
    for (int i = 0; i < SB_TRACE_NSHAPES; i++)
        free_shape(&w->x[i]);
    free_shape(&w->flow_s);
    free_shape(&w->flow_f);
    free(w->buf);
    free(w);
    if (bad)
        return sb_fail(SB_EXIT_FAIL, "audit trace: write error");
    return oom ? sb_fail(SB_EXIT_FAIL, "out of memory writing the audit trace") : 0;
}

/* A string value set in place: text not valid UTF-8 as sb_json_str makes it. */
static void set_text(sb_trace_writer *w, json_t *v, const char *s)
{
    if (json_string_set(v, s ? s : "") == 0)
        return;
    json_t *clean = sb_json_str(s);
    if (!clean || json_string_set(v, json_string_value(clean)) < 0)
        w->oom = 1;
    json_decref(clean);
}

static double ts_of(const sb_trace_writer *w, int64_t t)
{
    return (double)(t + w->off - w->t0) / 1e3;
}

void sb_trace_complete_of(sb_trace_writer *w, sb_trace_shape_id shape_id, int64_t tid,
                          const char *name, const char *cat, int64_t start, int64_t end,
                          const int64_t *args)
{
    shape *s = &w->x[shape_id];
    json_integer_set(s->tid, tid);
    set_text(w, s->name, name);
    set_text(w, s->cat, cat);
    json_real_set(s->ts, ts_of(w, start));
    json_real_set(s->dur, (double)(end - start) / 1e3);
    for (int i = 0; i < s->nargs; i++)
        json_integer_set(s->args[i], args[i]);
    write_event(w, s->e);
}

void sb_trace_flow(sb_trace_writer *w, int64_t from_tid, int64_t from_start, int64_t to_tid,
                   int64_t to_start)
{
    long id = ++w->flow_id;
    shape *ends[] = {&w->flow_s, &w->flow_f};
    const int64_t tid[] = {from_tid, to_tid}, at[] = {from_start, to_start};
    for (int i = 0; i < 2; i++) {
        json_integer_set(ends[i]->tid, tid[i]);
        json_integer_set(ends[i]->id, id);
        json_real_set(ends[i]->ts, ts_of(w, at[i]));
        write_event(w, ends[i]->e);
    }
}

json_t *sb_trace_event(sb_trace_writer *w, const char *ph, int64_t tid)
{
    json_t *e = json_object();
    sb_trace_set_str(w, e, "ph", ph);
    sb_trace_set_int(w, e, "pid", w->pid);
    sb_trace_set_int(w, e, "tid", tid);
    return e;
}

json_t *sb_trace_complete(sb_trace_writer *w, int64_t tid, const char *name, const char *cat,
                          int64_t start, int64_t end)
{
    json_t *e = sb_trace_event(w, "X", tid);
    sb_trace_set_str(w, e, "name", name);
    sb_trace_set_str(w, e, "cat", cat);
    sb_trace_set(w, e, "ts", json_real(ts_of(w, start)));
    sb_trace_set(w, e, "dur", sb_trace_us(end - start));
    return e;
}

void sb_trace_emit(sb_trace_writer *w, json_t *e)
{
    write_event(w, e);
    json_decref(e);
}
