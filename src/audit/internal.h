/* The analyzer's private data: what load.c reads, what analyze.c derives and what the writers
 * print. Not for callers outside src/audit/. */
#ifndef SB_AUDIT_INTERNAL_H
#define SB_AUDIT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "audit/audit.h"
#include "audit/ranks.h"
#include "audit/records.h"
#include "base/strpool.h"

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

/* ---- arrays.c: growable arrays, sorting, text ---- */

/* Grows *arr (element size `size`) so that it holds at least n + 1 elements. 0, or -1. */
int sb_grow(void *arr, size_t *cap, size_t n, size_t size);
/* qsort that accepts an empty (NULL) array. */
void sb_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
/* An index into an array by an integer key (a correlation id, a context), sorted with
 * sb_keyed_cmp (by key, then index); the first or the last entry of a key, or NULL. */
typedef struct sb_keyed {
    int64_t key;
    size_t idx;
} sb_keyed;
int sb_keyed_cmp(const void *a, const void *b);
const sb_keyed *sb_keyed_first(const sb_keyed *k, size_t n, int64_t key);
const sb_keyed *sb_keyed_last(const sb_keyed *k, size_t n, int64_t key);
/* In times v[0], v[stride], ... v[(n - 1) * stride], sorted: how many come before x (upper 0:
 * those < x; upper 1: those <= x). The calls a start/end range holds (analyze.c, ranks.c). */
size_t sb_count_before(const int64_t *v, size_t n, size_t stride, int64_t x, int upper);
/* snprintf whose result is valid UTF-8 (the JSON reports take only that): cut on a character
 * boundary when it does not fit, every other invalid byte (addr2line's output, a Latin-1 name)
 * replaced with '?'. */
__attribute__((format(printf, 3, 4))) void sb_audit_fmt(char *buf, size_t n, const char *fmt, ...);

/* Text from outside (range, file, site and library names, source lines, warn messages, argv)
 * as the table and the gate's message show it: terminal-safe (base/error.h's sb_escape). */
#define SB_AUDIT_ESC(s) sb_audit_esc((char[1536]){0}, 1536, (s))
const char *sb_audit_esc(char *buf, size_t n, const char *s);

/* ---- the records (load.c) ---- */
typedef struct sb_audit_range_ref {
    int64_t id;
    const char *name;
} sb_audit_range_ref;

struct sb_audit_rule;
struct sb_audit_pyframe;

typedef struct sb_audit_call {
    const char *api; /* as recorded: "cudaMemcpy_v3020" */
    int drv;         /* dom "drv" */
    int64_t tid, ctx, corr, start, end, stack;
    int64_t oh;       /* ns the audit's library spent around the call ("oh") */
    int64_t ptr;      /* the memory cudaMalloc returned, cudaFree freed ("ptr"); 0 */
    int64_t py;       /* a "pystack" id, -1 when the thread ran no Python */
    const char *copy; /* "DtoH", ...; NULL */
    const char *host; /* the copy's host memory the driver named: "pageable", ...; NULL */
    int nranges;
    sb_audit_range_ref *ranges; /* outermost first */
    /* analyze.c */
    sb_audit_class cls;
    int64_t bubble_ns;
    const char *range;  /* innermost range, "" when none */
    const char *site;   /* the Python line ("train.py:42 in step") when there is one, else the
                           native site; "?" when none */
    const char *native; /* the native site */
    const struct sb_audit_pyframe *pyframe; /* the frame `site` names; NULL: none */
    const char *source;                     /* that frame's source line, "" when unknown */
    const struct sb_audit_rule *rule;       /* what made it; NULL: no rule knows */
} sb_audit_call;

typedef struct sb_audit_range {
    int64_t tid, id;
    const char *name;
    int64_t start, end; /* end -1: still open at exit */
    int depth;
    int recorded;       /* 0: only seen in calls' "ranges" (the process was killed) */
    int startend;       /* an nvtxRangeStart/End range: counts every thread's calls inside it */
    const char *domain; /* the NVTX domain's name, "" for the default domain */
    long blocking;      /* analyze.c: blocking calls inside this instance */
    int64_t blocked_ns; /* analyze.c: their host time blocked */
} sb_audit_range;

typedef struct sb_audit_frame {
    const char *obj, *sym; /* sym "" when unknown */
    int64_t off, abs;
} sb_audit_frame;

typedef struct sb_audit_stack {
    int64_t id;
    int nframes;
    sb_audit_frame *frames; /* innermost first */
    int used;               /* by a blocking call (symbolize.c resolves only these) */
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

typedef struct sb_audit_gstream {
    int64_t ctx, stream;
    int flag; /* sb_audit_stream_flag */
} sb_audit_gstream;

typedef struct sb_audit_iv {
    int64_t start, end;
} sb_audit_iv;

/* The union of GPU busy intervals of one device (dev -1: every device merged). */
typedef struct sb_audit_timeline {
    int dev;
    size_t n;
    sb_audit_iv *iv; /* sorted, disjoint, not touching */
} sb_audit_timeline;

/* One row: process x class x range x site x operation. */
typedef struct sb_audit_row {
    sb_audit_class cls;
    const char *range, *site;
    const char *native, *source;      /* the first call's */
    const sb_audit_pyframe *pyframe;  /* NULL: no Python */
    const struct sb_audit_rule *rule; /* NULL: unknown */
    long count;
    double blocked_total_us, blocked_median_us, blocked_p95_us, bubble_total_us;
} sb_audit_row;

typedef struct sb_audit_proc {
    const char *name; /* file name */
    int has_proc;
    int64_t pid, ppid;
    int rank, local_rank;
    const char *cmd, *mode;
    int64_t clock_ns, mono_ns;
    int complete; /* an "end" record */
    int kernels;  /* kernels were recorded (--gpu-activity, --trace): the GPU's busy timeline,
                     bubbles and waited calls are known */
    int launches; /* the launches, event records and synchronizations too: the replay runs */
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
    int64_t launch_extra_ns; /* what recording added to each launch (calibration.json); 0 */
    int64_t call_extra_ns;   /* ... to each watched call beside its own "oh"; 0 */
    int64_t start_extra_ns;  /* ... to the GPU's start of launched work (a round trip's); 0 */
    int64_t alloc_extra_ns;  /* ... to each cudaMalloc and cudaFree beside its "oh"; 0 */
    int64_t copy_extra_ns;   /* ... to the GPU's start of a readback beyond that; 0 */

    /* analyze.c */
    int analyzed;            /* once: an analysis after more processes loaded leaves it be */
    int64_t t_first, t_last; /* lifetime: first to last timestamp */
    sb_audit_timeline *tl;   /* per device */
    size_t ntl;
    sb_audit_timeline all; /* every device merged */
    sb_audit_row *rows;
    size_t nrows;
    long counts[SB_AUDIT_NCLASS];
    double lifetime_us, busy_us, blocked_us;
    long polls, blocking;
    /* savings.c: what removing syncs would save, from the replay (launches recorded) */
    struct sb_audit_saving *savings; /* [0]: every sync; then sites, classes, ranges */
    size_t nsavings;
    struct sb_replay_facts *replay; /* what the model took from the run; NULL: no replay */
} sb_audit_proc;

/* A range name's instances over the whole run (the JSON's "ranges"). */
typedef struct sb_audit_range_sum {
    const char *name, *domain;
    long instances, max_blocking, total_blocking;
} sb_audit_range_sum;

struct sb_audit_run {
    sb_strpool strs;
    sb_audit_proc **procs;
    size_t nprocs, cap_procs;
    const char *cmd;
    double wall_s;
    int64_t t0_mono_ns;
    int analyzed;
    int analysis_failed; /* out of memory partway: a process may be half analyzed */
    sb_audit_opts opts;
    sb_audit_range_sum *range_sums;
    size_t nrange_sums;
    sb_ranks ranks; /* the view across ranks (ranks.c), for the table and the JSON */
    void *py_files; /* pysite.c's cache of source files */
};

/* ---- calibration.c ---- */
/* The calibrated figures of dir's calibration.json into every process of run (none: 0). */
void sb_audit_read_calibration(sb_audit_run *run, const char *dir);

/* ---- classes.c ---- */
/* `api` without its CUPTI suffixes (_v3020, _ptsz, _ptds, _v2) into buf. */
void sb_audit_base_name(const char *api, char *buf, size_t n);
/* What the name alone says. */
typedef enum {
    SB_FAM_OTHER,
    SB_FAM_FIXED,     /* the class is the name's: syncs, polls, sync memsets, frees */
    SB_FAM_COPY,      /* synchronous memcpy */
    SB_FAM_COPY_ASYNC /* async memcpy */
} sb_audit_family;
sb_audit_family sb_audit_classify_name(const char *api, sb_audit_class *fixed, int *dtod_by_name);
/* A call's class from what the call alone says: its API name, the direction its parameters give
 * (copy, records.h's "copy") and the driver's answer about its host memory ("host"); what the
 * analyzer gives when neither the copy nor the GPU's timeline was recorded, and what the
 * injection library's blocks count (inject/blocks.c). */
sb_audit_class sb_audit_class_alone(const char *api, const char *copy, const char *host);
int sb_audit_blocking(sb_audit_class c); /* explicit or implicit */

/* ---- timeline.c ---- */
/* Builds the union of [start, end) of the given intervals (sorted in place). */
int sb_audit_timeline_build(sb_audit_timeline *t, sb_audit_iv *iv, size_t n);
/* The busy stretch in flight at time t (start <= t < end), or NULL. */
const sb_audit_iv *sb_audit_timeline_at(const sb_audit_timeline *t, int64_t t_ns);
/* The first stretch that starts at or after t, or NULL. */
const sb_audit_iv *sb_audit_timeline_next(const sb_audit_timeline *t, int64_t t_ns);
/* Total busy time. */
int64_t sb_audit_timeline_total(const sb_audit_timeline *t);
/* The GPU idle time a call [start, end] made (see audit.h's rules). */
int64_t sb_audit_bubble(const sb_audit_timeline *t, int64_t start, int64_t end);
/* Did the call wait for the GPU: in flight at start, idle at G in (start, end], end-G <= slack. */
int sb_audit_waited(const sb_audit_timeline *t, int64_t start, int64_t end, double min_us,
                    double slack_us);

/* ---- analyze.c ---- */
/* The instance (tid, id) of a range (ranges are sorted once analyzed), or NULL. */
sb_audit_range *sb_audit_find_range(const sb_audit_proc *p, int64_t tid, int64_t id);

/* ---- site.c ---- */
/* The call site of a stack ("libfoo.so!bar", "app+0x1234", "?"), interned. */
const char *sb_audit_site(sb_strpool *strs, const sb_audit_stack *s);
/* In records[0..n) of `size` bytes, sorted by an int64_t id that is their first member: the one
 * with this id, or NULL. The stacks and the Python stacks (sorted by analyze.c). */
const void *sb_audit_find_by_id(const void *records, size_t n, size_t size, int64_t id);
const sb_audit_stack *sb_audit_find_stack(const sb_audit_proc *p, int64_t id);

/* ---- pysite.c: the Python line a user sees ---- */
/* The innermost frame of the user's code (frames of the standard library and of installed
 * packages skipped, unless opts.py_site is innermost); NULL when the stack has none. */
const sb_audit_pyframe *sb_audit_py_pick(const sb_audit_pystack *s, int innermost);
/* Is this file the standard library's, an installed package's or not a file ("<frozen>")? */
int sb_audit_py_library(const char *file);
const sb_audit_pystack *sb_audit_find_pystack(const sb_audit_proc *p, int64_t id);
/* "tests/train.py:42 in step" (the path relative to the current folder when under it). */
const char *sb_audit_py_site(sb_strpool *strs, const sb_audit_pyframe *f);
/* The frame's source line, stripped, interned; "" when the file cannot be read. */
const char *sb_audit_py_source(sb_audit_run *run, const sb_audit_pyframe *f);
void sb_audit_py_cache_free(sb_audit_run *run);

/* ---- rules.c: what made a blocking call, in the user's terms, and its sync-free fix ---- */
typedef struct sb_audit_rule {
    const char *op;       /* "scalar read: .item()" */
    const char *fix;      /* the guides' sync-free alternative */
    const char *scenario; /* the syncbench scenario that prices the fix; NULL: none */
    /* what must hold, each a list of alternatives "a|b" matched as substrings; NULL: any */
    const char *api;    /* the API's base name (cudaStreamSynchronize) */
    const char *native; /* a native frame's symbol or library file name */
    const char *pyfile; /* a Python frame's file (torch/_tensor_str.py) */
    const char *source; /* the user's source line (".item(") */
    const char *copy;   /* the copy's direction (HtoD, DtoH) */
} sb_audit_rule;
/* The first rule that holds for the call (its frames, API, copy and source line), or NULL. */
const sb_audit_rule *sb_audit_rule_for(const sb_audit_proc *p, const sb_audit_call *c);
/* Every rule, NULL-terminated by op (tests, --help). */
extern const sb_audit_rule sb_audit_rules[];

/* ---- symbolize.c ---- */
/* Resolves the used frames with no symbol through addr2line, when it is on PATH. */
void sb_audit_symbolize(sb_audit_run *run);

/* ---- savings.c: what removing syncs would save (the replay, replay.h) ---- */
#include "audit/replay.h"
typedef enum { SB_SAVE_ALL, SB_SAVE_SITE, SB_SAVE_CLASS, SB_SAVE_RANGE } sb_audit_save_kind;
typedef struct sb_audit_saving {
    int kind;              /* sb_audit_save_kind */
    const char *key;       /* the site or the range name (interned); NULL: all, a class */
    sb_audit_class cls;    /* SB_SAVE_CLASS */
    long calls;            /* blocking calls removed */
    double blocked_us;     /* their host time blocked */
    sb_replay_result r;    /* the predicted savings: the syncs and what goes with them */
    sb_replay_result kept; /* the same with their readbacks kept (SB_REPLAY_KEEP_READBACKS):
                              sites and all only, else zero */
} sb_audit_saving;
/* Plays p's run (when its launches were recorded) with every sync removed, then with each of
 * the `top` most blocking sites and ranges and each class removed alone. 0, or -1 out of memory. */
int sb_audit_savings(sb_audit_proc *p, int top);
/* The saving of one selection (key: the interned site or range), or NULL when not played. */
const sb_audit_saving *sb_audit_saving_of(const sb_audit_proc *p, int kind, const char *key,
                                          sb_audit_class cls);
/* The wall-time saving of one selection summed over the processes that played it; NaN when
 * none did. */
double sb_audit_run_saving(const sb_audit_run *run, int kind, const char *key, sb_audit_class cls);
/* "host" when the host's launches then bound most GPU operations, else "gpu". */
const char *sb_audit_bound_name(const sb_replay_result *r);

/* ---- out_*.c ---- */
void sb_audit_json_str(FILE *f, const char *s); /* a JSON string literal (out_trace.c) */

#endif
