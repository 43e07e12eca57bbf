/* The audit's model: every audited process as its record stream (record/records.h) was read
 * (load.c) and the run they make together. What the analysis (analyze/) finds is its own
 * (analyze/analyze.h), kept apart from these records, none of its types named here; it only puts
 * them in order (the stacks, Python stacks and ranges sorted), adds the range instances that only
 * calls name (a killed process's) and names the frames recorded without a symbol. The public part
 * first (what the launcher calls), then the data, then the helpers of this room. Pure C: no CUDA,
 * no CUPTI; the CPU tests feed it synthetic record streams. */
#ifndef SB_MODEL_H
#define SB_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/env.h"
#include "base/strpool.h"
#include "record/classes.h"
#include "record/gpu_window.h"
#include "record/records.h"

typedef struct sb_audit_run sb_audit_run; /* every process of one audit */

/* Reads every DIR/proc-*.jsonl. A malformed line is skipped and counted (the process may have
 * been killed mid-line); an unreadable folder is exit 1. */
int sb_audit_load_dir(const char *dir, sb_audit_run **out);
/* One process's stream from a FILE (tests). */
int sb_audit_load_stream(sb_audit_run *run, FILE *f, const char *name);
/* Whether one record line keeps to the record table (record/schema.c) as a writer must, which
 * is stricter than the reader: a JSON object whose "t" is a kind of the table, each field one the
 * kind declares, of its declared type (an integer written as one), every required field there.
 * 1 when it does; else 0 with the first fault, a phrase, in why (conform.c). */
int sb_audit_record_conforms(const char *line, size_t len, char *why, size_t whylen);
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

/* calibration.json's keys, in records.h's SB_CAL_* order (calibration.c). */
extern const char *const sb_audit_calibration_keys[];
/* The calibration's records (cmd/audit_calibrate.c): the median "oh" of each of these calls in
 * one record file, -1 where it holds none (calibration.c). */
enum { SB_OH_SYNC, SB_OH_MALLOC, SB_OH_FREE, SB_OH_COPY, SB_OH_N };
void sb_audit_median_ohs(const char *path, double oh[SB_OH_N]);

/* How many processes initialized CUDA (wrote a stream). 0: CMD never used CUDA. */
int sb_audit_nprocs(const sb_audit_run *run);
void sb_audit_free(sb_audit_run *run);

/* ---- interned strings (base/strpool.h: one copy each; equal text <=> equal pointer) ---- */
static inline const char *sb_audit_intern(sb_strpool *p, const char *s) /* NULL: no memory */
{
    return sb_strpool_intern(p, s, strlen(s));
}

/* part of whole in percent; 0 of nothing */
static inline double sb_audit_pct(double part, double whole)
{
    return whole > 0 ? 100 * part / whole : 0;
}

/* ---- the records (load.c) ---- */
typedef struct sb_audit_range_ref {
    int64_t id;
    const char *name;
} sb_audit_range_ref;

typedef struct sb_audit_call {
    const char *api; /* as recorded: "cudaMemcpy_v3020" */
    int64_t tid, ctx, corr, start, end, stack;
    int64_t oh;                 /* ns the audit's library spent around the call ("oh") */
    int64_t ptr;                /* the memory cudaMalloc returned, cudaFree freed ("ptr"); 0 */
    int64_t py;                 /* a "pystack" id, -1 when the thread ran no Python */
    const char *copy;           /* "DtoH", ...; NULL */
    const char *host;           /* the copy's host memory the driver named: "pageable", ...; NULL */
    sb_audit_range_ref *ranges; /* outermost first */
    int nranges;
    int drv; /* dom "drv" */
} sb_audit_call;

typedef struct sb_audit_range {
    int64_t tid, id;
    const char *name;
    int64_t start, end; /* end -1: still open at exit */
    int depth;
    int recorded;       /* 0: only seen in calls' "ranges" (the process was killed) */
    int startend;       /* an nvtxRangeStart/End range: counts every thread's calls inside it */
    const char *domain; /* the NVTX domain's name, "" for the default domain */
} sb_audit_range;

typedef struct sb_audit_frame {
    const char *obj, *sym; /* sym "" when unknown */
    int64_t off, abs;
} sb_audit_frame;

typedef struct sb_audit_stack {
    int64_t id;
    int nframes;
    sb_audit_frame *frames; /* innermost first */
} sb_audit_stack;

/* A Python frame ("pystack" records): innermost first. */
typedef struct sb_audit_pyframe {
    const char *file, *func;
    int line; /* 0 when unknown */
} sb_audit_pyframe;

typedef struct sb_audit_pystack {
    int64_t id;
    int nframes;
    sb_audit_pyframe *frames;
} sb_audit_pystack;

typedef enum { SB_ACT_KERNEL, SB_ACT_COPY, SB_ACT_MEMSET } sb_audit_act_kind;

typedef struct sb_audit_act {
    int kind;
    int dev;
    int64_t ctx, stream, corr, rcorr, start, end, bytes;
    const char *name;              /* kernel name (trace mode); NULL */
    const char *ckind, *src, *dst; /* copies; NULL */
} sb_audit_act;

typedef struct sb_audit_api {
    const char *api;
    int drv;
    int64_t tid, corr, start, end;
} sb_audit_api;

/* An event record (cudaEventRecord) and a synchronization CUPTI saw: what orders streams and
 * what a sync waited for (the replay). */
typedef struct sb_audit_evrec {
    int64_t ctx, stream, corr, sync_id;
} sb_audit_evrec;

typedef enum { SB_SYNC_EVENT, SB_SYNC_WAIT, SB_SYNC_STREAM, SB_SYNC_CONTEXT } sb_audit_sync_type;

typedef struct sb_audit_syncrec {
    int type;                                       /* sb_audit_sync_type */
    int64_t ctx, stream, corr, sync_id, start, end; /* stream, sync_id -1: not applicable */
} sb_audit_syncrec;

/* A stream's creation flags: how it orders against the legacy default stream. */
typedef enum { SB_STREAM_NULL, SB_STREAM_BLOCKING, SB_STREAM_NON_BLOCKING } sb_audit_stream_flag;

/* a stretch the recording was off ("pause" record) */
typedef struct sb_audit_pause {
    int64_t tid, start, end;
} sb_audit_pause;

/* A hand-off between threads ("wake" record): thread tid slept in a wait from start to end,
 * which thread by's signal, post or futex wake at `at` ended (a condition variable, a semaphore,
 * a futex); py: tid's Python stack when it woke ("pystack" id), -1 none. */
typedef struct sb_audit_wake {
    int64_t tid, start, end, by, at, py;
} sb_audit_wake;

typedef struct sb_audit_gstream {
    int64_t ctx, stream;
    int flag; /* sb_audit_stream_flag */
} sb_audit_gstream;

typedef struct sb_audit_proc {
    const char *name; /* file name */
    int has_proc;
    int64_t pid, ppid;
    int rank, local_rank;
    const char *cmd, *mode;
    int64_t clock_ns, mono_ns;
    int complete; /* an "end" record */
    int symsize;  /* "symsize":1: a frame's symbol is one whose size covers the address; else
                     (an older writer) names are checked against the object (symbolize.c) */
    int kernels;  /* kernels were recorded (--gpu-activity, --trace): the GPU's busy timeline,
                     bubbles and waited calls are known */
    int launches; /* the launches, event records and synchronizations too: the replay runs */
    int waits;    /* the hand-offs between threads too ("wake" records; the waits library) */
    /* the kinds of GPU activity a developer's knob turned off (SYNCBENCH_ACTIVITY_OFF: the
     * "proc" record's "off"), comma-separated; NULL when none: its GPU figures are incomplete */
    const char *activity_off;
    long long wakes_lost; /* "wake" records the library lost to a full buffer */
    /* the window of GPU activity (--gpu-activity-range: the "proc" record's "window", the
     * "gwindow" record): kernels, copies and launches were recorded inside it only. windowed 0:
     * over the whole run. window_start -1: it never opened (or no "gwindow" record was read);
     * window_end -1: still open at the exit */
    int windowed;
    sb_gpu_window window;
    int64_t window_start, window_end;
    const char *why;
    long long dropped;
    long long lost; /* lines the process could not write (the launcher heard it) */
    int unrecorded; /* started CUDA, but its record file could not be created */
    int open_errno; /* why not */
    /* its blocking calls were not recorded at all (CUPTI refused the subscription): why */
    const char *unwatched;
    long malformed;
    long warns;
    const char *first_warn;

    sb_audit_call *calls;
    size_t ncalls, cap_calls;
    sb_audit_range *ranges;
    size_t nranges, cap_ranges;
    sb_audit_stack *stacks;
    size_t nstacks, cap_stacks;
    sb_audit_pystack *pystacks;
    size_t npystacks, cap_pystacks;
    sb_audit_act *acts;
    size_t nacts, cap_acts;
    sb_audit_api *apis;
    size_t napis, cap_apis;
    sb_audit_evrec *evrecs;
    size_t nevrecs, cap_evrecs;
    sb_audit_syncrec *syncrecs;
    size_t nsyncrecs, cap_syncrecs;
    sb_audit_gstream *gstreams;
    size_t ngstreams, cap_gstreams;
    sb_audit_pause *pauses;
    size_t npauses, cap_pauses;
    sb_audit_wake *wakes;
    size_t nwakes, cap_wakes;
    int64_t launch_extra_ns; /* what recording added to each launch (calibration.json); 0 */
    int64_t call_extra_ns;   /* ... to each watched call beside its own "oh"; 0 */
    int64_t start_extra_ns;  /* ... to the GPU's start of launched work (a round trip's); 0 */
    int64_t alloc_extra_ns;  /* ... to each cudaMalloc and cudaFree beside its "oh"; 0 */
    int64_t copy_extra_ns;   /* ... to the GPU's start of a readback beyond that; 0 */
} sb_audit_proc;

struct sb_audit_run {
    sb_strpool strs;
    sb_audit_proc **procs;
    size_t nprocs, cap_procs;
    const char *cmd;
    double wall_s;
    int64_t t0_mono_ns;
};

/* Was time t inside p's window of GPU activity (always, without one)? Its GPU figures (the busy
 * timeline, bubbles, what waited, the replay) hold only there. */
static inline int sb_audit_in_gpu_window(const sb_audit_proc *p, int64_t t)
{
    return !p->windowed || (p->window_start >= 0 && t >= p->window_start &&
                            (p->window_end < 0 || t < p->window_end));
}

/* ---- calibration.c ---- */
/* The calibrated figures of dir's calibration.json into every process of run (none: 0). 0, or
 * exit 2 with one line when it is not a regular file (a FIFO, a device, a folder). */
int sb_audit_read_calibration(sb_audit_run *run, const char *dir);

#endif
