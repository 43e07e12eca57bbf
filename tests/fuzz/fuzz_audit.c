/* The audit's analyzer, fuzzed: an input is one process's record stream (what the injection
 * library writes, or half of it when the process was killed), loaded, analyzed, gated and
 * written as the table, the CSV, the JSON, the trace, the JUnit XML, GitHub's annotations and
 * the step summary. Checked besides memory and undefined behaviour: the JSON and the trace it
 * writes parse as JSON (jansson), and the JUnit XML and the annotations hold no control
 * character but a line break (and a tab in XML's text): nothing XML forbids, nothing that would
 * reach the log raw, whatever the input. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "report/report.h"
#include "sinks/github.h"
#include "fuzz_file.h"

/* Where the table, the CSV and the gate's message go: nowhere (their crashes still count). */
static FILE *devnull(void)
{
    static FILE *f;
    if (!f)
        f = fopen("/dev/null", "w");
    FUZZ_CHECK(f != NULL);
    return f;
}

/* A report written to memory must parse. */
static void parses(int (*write)(FILE *, const sb_audit_analysis *, const sb_audit_opts *),
                   const sb_audit_analysis *an, const sb_audit_opts *o)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    FUZZ_CHECK(f != NULL);
    int rc = write(f, an, o);
    fclose(f);
    if (rc == 0) {
        json_error_t err;
        json_t *doc = json_loadb(buf, n, 0, &err);
        if (!doc)
            fprintf(stderr, "report does not parse: %s (line %d)\n", err.text, err.line);
        FUZZ_CHECK(doc != NULL);
        json_decref(doc);
    }
    free(buf);
}

/* A CI report written to memory holds no control byte but \n (and \t where tab_ok), no DEL,
 * no C1 control. */
static void no_controls(int (*write)(FILE *, const sb_audit_analysis *, const sb_audit_opts *,
                                     const sb_env *),
                        const sb_audit_analysis *an, const sb_audit_opts *o, int tab_ok)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    FUZZ_CHECK(f != NULL);
    sb_env env = {0};
    int rc = write(f, an, o, &env);
    fclose(f);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        unsigned char c = (unsigned char)buf[i];
        FUZZ_CHECK(c == '\n' || (c == '\t' && tab_ok) || (c >= 0x20 && c != 0x7f));
        FUZZ_CHECK(!(c == 0xc2 && i + 1 < n && (unsigned char)buf[i + 1] >= 0x80 &&
                     (unsigned char)buf[i + 1] <= 0x9f));
    }
    free(buf);
}

static int json_report(FILE *f, const sb_audit_analysis *an, const sb_audit_opts *o)
{
    sb_env env = {0};
    return sb_audit_write_json(f, an, o, &env);
}

static int trace_report(FILE *f, const sb_audit_analysis *an, const sb_audit_opts *o)
{
    (void)o;
    return sb_audit_write_trace(f, an);
}

/* The gate's verdicts as GitHub's annotations (the one GitHub writer), without the summary. */
static int annotations(FILE *f, const sb_audit_analysis *an, const sb_audit_opts *o,
                       const sb_env *env)
{
    (void)env;
    sb_ci_verdicts l;
    int rc = sb_audit_gate_verdicts(an, o, &l);
    if (!rc) {
        rc = sb_gh_write(f, &l, NULL, 0);
        sb_ci_verdicts_free(&l);
    }
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *in = fmemopen((void *)data, size ? size : 1, "r");
    if (!in)
        return 0;
    if (!size)
        fgetc(in); /* fmemopen wants a size of at least 1: read it away */
    sb_audit_run *run = sb_audit_run_new();
    FUZZ_CHECK(run != NULL);
    sb_audit_opts o;
    sb_audit_opts_default(&o);
    o.symbolize = 0; /* no addr2line processes per input */
    o.max_syncs = 1;
    o.range = (size & 1) ? "train_step" : NULL;
    if (sb_audit_load_stream(run, in, "proc-100.jsonl") == 0) {
        sb_audit_set_wall(run, "fuzzed", 1.0, 0);
        sb_audit_analysis *an = NULL;
        if (sb_audit_analyze(run, &o, &an) == 0) {
            sb_audit_write_table(devnull(), an, &o);
            sb_audit_write_csv(devnull(), an);
            parses(json_report, an, &o);
            parses(trace_report, an, &o);
            sb_audit_gate(an, &o, devnull());
            no_controls(sb_audit_write_junit, an, &o, 1);
            no_controls(annotations, an, &o, 0);
            sb_audit_write_summary(devnull(), an, &o, NULL);
        }
        sb_audit_analysis_free(an);
    }
    fclose(in);
    sb_audit_free(run);
    return 0;
}
