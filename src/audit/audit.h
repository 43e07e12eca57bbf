/* The audit's analyzer: reads the record streams of every audited process (records.h),
 * classifies each host API call that can block, measures what it cost (host time blocked, the
 * GPU bubble that followed), attributes it (innermost NVTX range, native call site), gates it
 * (--max-syncs, --range) and writes the reports. Pure C: no CUDA, no CUPTI; the CPU tests feed
 * it synthetic record streams. */
#ifndef SB_AUDIT_H
#define SB_AUDIT_H

#include <stdint.h>
#include <stdio.h>

#include "base/env.h"

/* What a call was. The gate counts the blocking groups (explicit and implicit). */
typedef enum {
    SB_AUDIT_NONE,          /* did not block (an async copy into pinned memory, a malloc) */
    SB_AUDIT_SYNC_DEVICE,   /* explicit: cudaDeviceSynchronize, cuCtxSynchronize */
    SB_AUDIT_SYNC_STREAM,   /* explicit: cudaStreamSynchronize, cuStreamSynchronize */
    SB_AUDIT_SYNC_EVENT,    /* explicit: cudaEventSynchronize, cuEventSynchronize */
    SB_AUDIT_COPY_SYNC,     /* implicit: synchronous cudaMemcpy*, cuMemcpy* (not DtoD) */
    SB_AUDIT_COPY_PAGEABLE, /* implicit: async copy to or from pageable host memory */
    SB_AUDIT_MEMSET_SYNC,   /* implicit: cudaMemset* (not Async), cuMemsetD* (not Async) */
    SB_AUDIT_FREE,          /* implicit: cudaFree, cudaFreeHost, cuMemFree, cuMemFreeHost */
    SB_AUDIT_WAITED,        /* implicit: another call whose host time shows it waited */
    SB_AUDIT_POLL,          /* counted apart: cudaStreamQuery, cudaEventQuery, cu*Query */
    SB_AUDIT_NCLASS
} sb_audit_class;

typedef enum {
    SB_AUDIT_GROUP_NONE,
    SB_AUDIT_EXPLICIT,
    SB_AUDIT_IMPLICIT,
    SB_AUDIT_POLLING
} sb_audit_group;

const char *sb_audit_class_name(sb_audit_class c); /* "sync-stream", "copy-pageable", ... */
sb_audit_group sb_audit_class_group(sb_audit_class c);
const char *sb_audit_group_name(sb_audit_group g); /* "explicit", "implicit", "poll", "none" */

/* Analyzer settings (the launcher's options). */
typedef struct sb_audit_opts {
    long long max_syncs; /* the gate: -1 = no gate */
    const char
        *range; /* --range NAME: the gate counts per instance of this range; NULL: whole run */
    int top;    /* call sites listed in the table and the gate's message (10) */
    double waited_min_us;   /* SB_AUDIT_WAITED: the call lasted at least this long ... (5) */
    double waited_slack_us; /* ... and ended within this of the GPU going idle (20) */
    int symbolize;          /* resolve frames without a symbol with addr2line, when on PATH (1) */
    int py_innermost;       /* the site is the innermost Python frame, not the user's code's (0) */
} sb_audit_opts;
void sb_audit_opts_default(sb_audit_opts *o);

typedef struct sb_audit_run sb_audit_run; /* every process of one audit */

/* Reads every DIR/proc-*.jsonl. A malformed line is skipped and counted (the process may have
 * been killed mid-line); an unreadable folder is exit 1. */
int sb_audit_load_dir(const char *dir, sb_audit_run **out);
/* One process's stream from a FILE (tests). */
int sb_audit_load_stream(sb_audit_run *run, FILE *f, const char *name);
sb_audit_run *sb_audit_run_new(void);
/* The launcher's facts: the command line, its wall time, CMD's exit status text. */
void sb_audit_set_wall(sb_audit_run *run, const char *cmd, double wall_s, int64_t t0_mono_ns);

/* For records reported later (--from): the command of the first process that has one and the
 * span of every record, in seconds. */
void sb_audit_records_span(const sb_audit_run *run, const char **cmd, double *wall_s);

/* What the launcher heard over its status socket (records.h) from each process that
 * initialized CUDA: a process whose record file could not be created, was cut short or lost
 * lines is reported as incomplete, and the gate fails. */
typedef struct sb_audit_status {
    int64_t pid;
    int opened;     /* its record file was created */
    int open_errno; /* else why not */
    int ended;      /* it said "end" */
    long long lost; /* lines the disk refused */
} sb_audit_status;
int sb_audit_set_status(sb_audit_run *run, const sb_audit_status *st, size_t n);
/* Why a process's records are incomplete (a short phrase), or NULL when they are whole. */
struct sb_audit_proc;
const char *sb_audit_incomplete(const struct sb_audit_proc *p, char *buf, size_t n);

/* Classify, time, attribute, line the ranks up (ranks.h). After more processes are loaded,
 * again: those already analyzed are left as they were, with the options of their analysis.
 * Out of memory partway fails this and every later analysis of the run. */
int sb_audit_analyze(sb_audit_run *run, const sb_audit_opts *o);

/* The reports. table: the human report (per process and summed); csv: tidy, one row per
 * process x class x range x site; json: the environment record, the per-process summary, the
 * rows and the gate; trace: Chrome trace event format (Perfetto, chrome://tracing). */
int sb_audit_write_table(FILE *f, const sb_audit_run *run, const sb_audit_opts *o);
int sb_audit_write_csv(FILE *f, const sb_audit_run *run);
int sb_audit_write_json(FILE *f, const sb_audit_run *run, const sb_audit_opts *o,
                        const sb_env *env);
int sb_audit_write_trace(FILE *f, const sb_audit_run *run);

/* The gate: 0 when it passes (or there is none), 1 when more than max_syncs blocking calls
 * were made (in the whole run, or in some instance of --range). Writes the verdict and the
 * offending sites to `msg` (NULL: writes nothing). */
int sb_audit_gate(const sb_audit_run *run, const sb_audit_opts *o, FILE *msg);

/* calibration.json's keys, in records.h's SB_CAL_* order (calibration.c). */
extern const char *const sb_audit_calibration_keys[];
/* The calibration's records (cmd/audit_calibrate.c): the median "oh" of each of these calls in
 * one record file, -1 where it holds none (calibration.c). */
enum { SB_OH_SYNC, SB_OH_MALLOC, SB_OH_FREE, SB_OH_COPY, SB_OH_N };
void sb_audit_median_ohs(const char *path, double oh[SB_OH_N]);

/* How many processes initialized CUDA (wrote a stream). 0: CMD never used CUDA. */
int sb_audit_nprocs(const sb_audit_run *run);
void sb_audit_free(sb_audit_run *run);

#endif
