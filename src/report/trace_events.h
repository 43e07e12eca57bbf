/* A Chrome trace's events written with jansson, the JSON writer of every other report, one a
 * line as each is made: a trace of millions of kernels is never held as a JSON tree. The events
 * of a fixed set of keys (launches, GPU work, flows, ranges: nearly all of a big trace) are
 * built once and dumped again with their values set in place, with no allocation per event;
 * the others (host calls, names) are built each. out_trace.c says which events a run makes. */
#ifndef SB_AUDIT_TRACE_EVENTS_H
#define SB_AUDIT_TRACE_EVENTS_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

/* The complete ("X") events of a fixed set of args, each an integer. */
typedef enum {
    SB_TRACE_API,   /* args: correlation */
    SB_TRACE_GPU,   /* args: device, stream, correlation (a kernel) */
    SB_TRACE_BYTES, /* args: device, stream, correlation, bytes (a copy, a memset) */
    SB_TRACE_RANGE, /* args: id, blocking_calls */
    SB_TRACE_NSHAPES
} sb_trace_shape_id;

typedef struct sb_trace_writer sb_trace_writer;

/* A writer of the events into f, ts 0 at t0 (CLOCK_MONOTONIC ns), the document's head written;
 * NULL when out of memory. */
sb_trace_writer *sb_trace_open(FILE *f, int64_t t0);
/* The events from now on are process pid's, whose CUPTI clock is CLOCK_MONOTONIC less off. */
void sb_trace_process(sb_trace_writer *w, int64_t pid, int64_t off);
/* Writes the document's end and frees w: 0, or exit 1 with one line (out of memory, or a
 * write error). */
int sb_trace_close(sb_trace_writer *w);

/* An event of a fixed shape: name and cat, start and end on the process's CUPTI clock, and its
 * args in the shape's order. */
void sb_trace_complete_of(sb_trace_writer *w, sb_trace_shape_id shape, int64_t tid,
                          const char *name, const char *cat, int64_t start, int64_t end,
                          const int64_t *args);
/* A flow ("ac2g") from (from_tid, from_start) to (to_tid, to_start): its "s" and "f" events. */
void sb_trace_flow(sb_trace_writer *w, int64_t from_tid, int64_t from_start, int64_t to_tid,
                   int64_t to_start);

/* ---- events built each: the caller adds keys, then emits ---- */
/* {"ph":ph,"pid":..,"tid":tid}; NULL when out of memory (the writer then fails at close). */
json_t *sb_trace_event(sb_trace_writer *w, const char *ph, int64_t tid);
/* {"ph":"X",..,"name","cat","ts","dur"}, the times on the process's CUPTI clock. */
json_t *sb_trace_complete(sb_trace_writer *w, int64_t tid, const char *name, const char *cat,
                          int64_t start, int64_t end);
/* Writes e and frees it. */
void sb_trace_emit(sb_trace_writer *w, json_t *e);
/* o[key] = v (taking v), a string of any text, an integer; out of memory remembered. */
void sb_trace_set(sb_trace_writer *w, json_t *o, const char *key, json_t *v);
void sb_trace_set_str(sb_trace_writer *w, json_t *o, const char *key, const char *s);
void sb_trace_set_int(sb_trace_writer *w, json_t *o, const char *key, int64_t v);
/* a += v (taking v) */
void sb_trace_append(sb_trace_writer *w, json_t *a, json_t *v);
/* ns as us, exactly to the ns */
json_t *sb_trace_us(int64_t ns);
/* us (a measured figure) rounded to the ns, as the trace has always written them */
json_t *sb_trace_us_rounded(double us);

#endif
