/* Synthetic audit record streams (src/record/records.h) for the analyzer's tests: lines written
 * into a memory buffer, loaded and analyzed. */
#ifndef SB_TEST_AUDIT_STREAM_H
#define SB_TEST_AUDIT_STREAM_H

#include "cmocka_all.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "report/report.h"

typedef struct {
    char *text;
    size_t len;
    FILE *f;
} stream;

static inline void stream_open(stream *s)
{
    s->text = NULL;
    s->len = 0;
    s->f = open_memstream(&s->text, &s->len);
    assert_non_null(s->f);
}

__attribute__((format(printf, 2, 3))) static inline void line(stream *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(s->f, fmt, ap);
    va_end(ap);
    fputc('\n', s->f);
}

/* The first line of a process: pid, rank, and CUPTI clock = CLOCK_MONOTONIC - 1000000. */
static inline void proc_line(stream *s, int pid, int rank)
{
    line(s,
         "{\"t\":\"proc\",\"v\":1,\"pid\":%d,\"ppid\":1,\"rank\":%d,\"local_rank\":%d,"
         "\"cmd\":\"python3 "
         "train.py\",\"clock_ns\":500,\"mono_ns\":1000500,\"mode\":\"count\",\"symsize\":1}",
         pid, rank, rank);
}

static inline void end_line(stream *s)
{
    line(s,
         "{\"t\":\"end\",\"clock_ns\":900000,\"mono_ns\":1900000,\"why\":\"exit\",\"dropped\":0}");
}

/* A runtime call on thread 1, context 1, no ranges, no stack. */
static inline void call(stream *s, const char *api, long long corr, long long start, long long end)
{
    line(s,
         "{\"t\":\"call\",\"api\":\"%s\",\"dom\":\"rt\",\"tid\":1,\"ctx\":1,\"corr\":%lld,"
         "\"start\":%lld,\"end\":%lld,\"ranges\":[],\"stack\":-1}",
         api, corr, start, end);
}

static inline void kernel(stream *s, int dev, long long ctx, long long corr, long long start,
                          long long end)
{
    line(s,
         "{\"t\":\"kernel\",\"dev\":%d,\"ctx\":%lld,\"stream\":7,\"corr\":%lld,\"start\":%lld,"
         "\"end\":%lld}",
         dev, ctx, corr, start, end);
}

/* Loads the stream's text as process `name` into run (a new run when NULL). */
static inline sb_audit_run *load_into(sb_audit_run *run, stream *s, const char *name)
{
    fclose(s->f);
    if (!run)
        run = sb_audit_run_new();
    assert_non_null(run);
    FILE *f = fmemopen(s->text, s->len, "r");
    assert_non_null(f);
    assert_int_equal(sb_audit_load_stream(run, f, name), 0);
    fclose(f);
    free(s->text);
    return run;
}

/* The analyses of the runs a test made (an analysis is an object of its own that points at its
 * run): looked up by run, made by analyze_run, freed with the run by audit_free. */
static sb_audit_analysis *analyses_[256];

static inline sb_audit_analysis **analysis_slot(const sb_audit_run *run)
{
    sb_audit_analysis **free_slot = NULL;
    for (size_t i = 0; i < sizeof analyses_ / sizeof analyses_[0]; i++) {
        if (analyses_[i] && analyses_[i]->run == run)
            return &analyses_[i];
        if (!analyses_[i] && !free_slot)
            free_slot = &analyses_[i];
    }
    assert_non_null(free_slot);
    return free_slot;
}

static inline int analyze_run(sb_audit_run *run, const sb_audit_opts *o)
{
    return sb_audit_analyze(run, o, analysis_slot(run));
}

/* run's analysis (analyze_run made it). */
static inline const sb_audit_analysis *analysis_of(const sb_audit_run *run)
{
    sb_audit_analysis **a = analysis_slot(run);
    assert_non_null(*a);
    return *a;
}

/* What the analysis of p's run found of p (analyze_run analyzed it). */
static inline const sb_audit_proc_result *res_of(const sb_audit_proc *p)
{
    for (size_t i = 0; i < sizeof analyses_ / sizeof analyses_[0]; i++) {
        const sb_audit_proc_result *r = analyses_[i] ? sb_audit_result_of(analyses_[i], p) : NULL;
        if (r)
            return r;
    }
    assert_non_null(NULL);
    return NULL;
}

/* What the analysis found of call i of p (analyze_run analyzed it). */
static inline const sb_audit_call_info *info_of(const sb_audit_proc *p, size_t i)
{
    assert_true(i < p->ncalls);
    return &res_of(p)->calls[i];
}

/* The options of run's analysis; the defaults before one. */
static inline sb_audit_opts opts_of(const sb_audit_run *run)
{
    sb_audit_analysis **a = analysis_slot(run);
    sb_audit_opts o;
    sb_audit_opts_default(&o);
    return *a ? (*a)->opts : o;
}

static inline void audit_free(sb_audit_run *run)
{
    if (!run)
        return;
    sb_audit_analysis **a = analysis_slot(run);
    sb_audit_analysis_free(*a);
    *a = NULL;
    sb_audit_free(run);
}

static inline void analyze_default(sb_audit_run *run)
{
    sb_audit_opts o;
    sb_audit_opts_default(&o);
    o.symbolize = 0;
    assert_int_equal(analyze_run(run, &o), 0);
}

static inline sb_audit_run *analyzed(stream *s)
{
    sb_audit_run *run = load_into(NULL, s, "proc-100.jsonl");
    analyze_default(run);
    return run;
}

/* ---- what the writers give for a run ---- */
typedef enum { AS_TABLE, AS_CSV, AS_JSON, AS_TRACE } report_kind;

/* The report of one kind as text (the caller frees it): with options o (NULL: the run's) and,
 * for the JSON, environment env (NULL: none). */
static inline char *report_text(const sb_audit_run *run, report_kind kind, const sb_audit_opts *o,
                                const sb_env *env)
{
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    const sb_audit_analysis *an = analysis_of(run);
    o = o ? o : &an->opts;
    int rc = kind == AS_CSV     ? sb_audit_write_csv(f, an)
             : kind == AS_JSON  ? sb_audit_write_json(f, an, o, env)
             : kind == AS_TRACE ? sb_audit_write_trace(f, an)
                                : sb_audit_write_table(f, an, o);
    assert_int_equal(rc, 0);
    fclose(f);
    return buf;
}

static inline char *table_text(const sb_audit_run *run)
{
    return report_text(run, AS_TABLE, NULL, NULL);
}

static inline char *csv_text(const sb_audit_run *run)
{
    return report_text(run, AS_CSV, NULL, NULL);
}

/* The gate under options o: its verdict, and its message in *msg (the caller frees it). */
static inline int gate_message(const sb_audit_run *run, const sb_audit_opts *o, char **msg)
{
    size_t len;
    FILE *f = open_memstream(msg, &len);
    assert_non_null(f);
    int rc = sb_audit_gate(analysis_of(run), o, f);
    fclose(f);
    return rc;
}

/* The gate's message under --max-syncs 0, which must fail (the caller frees it). */
static inline char *gate_failed(const sb_audit_run *run)
{
    sb_audit_opts o = opts_of(run);
    o.max_syncs = 0;
    char *msg;
    assert_int_equal(gate_message(run, &o, &msg), 1);
    return msg;
}

/* The JSON report or the trace (kind), parsed (the caller json_decref's it). */
static inline json_t *report_json(const sb_audit_run *run, report_kind kind, const sb_audit_opts *o,
                                  const sb_env *env)
{
    char *buf = report_text(run, kind, o, env);
    json_error_t err;
    json_t *root = json_loads(buf, 0, &err);
    if (!root)
        fail_msg("%s (line %d): %s", err.text, err.line, buf);
    free(buf);
    return root;
}

/* The JSON report with an empty environment record (the caller json_decref's it). */
static inline json_t *json_report(const sb_audit_run *run)
{
    sb_env env;
    memset(&env, 0, sizeof env);
    return report_json(run, AS_JSON, NULL, &env);
}

#endif
