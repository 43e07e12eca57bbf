/* The analysis of the recorded calls: classified, timed, attributed (NVTX range, native and
 * Python call site, the rule that names the operation and its fix), summed into rows, the
 * ranks lined up, and what removing syncs would save (savings.c, through the replay). */
#ifndef SB_ANALYZE_H
#define SB_ANALYZE_H

#include "analyze/call_info.h"
#include "analyze/ranks.h"
#include "model/model.h"
#include "record/classes.h"
#include "replay/replay.h"

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
    int include_compile;    /* the gate counts calls made while torch.compile compiled too (0) */
    int allow_no_cuda;      /* the gate passes a run in which no process used CUDA (0) */
    /* --baseline FILE (analyze/baseline.h): the sites the gate holds the run to; NULL */
    const struct sb_baseline *baseline;
    long baseline_skip_first; /* --skip-first N: steps left out; -1: the baseline's (-1) */
} sb_audit_opts;
void sb_audit_opts_default(sb_audit_opts *o);

typedef struct sb_audit_iv {
    int64_t start, end;
} sb_audit_iv;

/* The union of GPU busy intervals of one device (dev -1: every device merged). */
typedef struct sb_audit_timeline {
    int dev;
    size_t n;
    sb_audit_iv *iv; /* sorted, disjoint, not touching */
} sb_audit_timeline;

/* One row: process x class x range x site x the line inside a library x operation and fix. */
typedef struct sb_audit_row {
    sb_audit_class cls;
    const char *range, *site;
    const char *native, *source;      /* the first call's */
    const sb_audit_pyframe *pyframe;  /* NULL: no Python */
    const struct sb_audit_rule *rule; /* NULL: unknown (the first call's: its scenario) */
    sb_audit_made made;               /* the first call's (via_site, op and fix: the row's) */
    int waiter;                       /* the first call's: the site is its waiter's line; 0 */
    long count;
    /* bubble_total_us: with a window of GPU activity, the bubbles of the row's calls inside it
     * (bubble_calls of them; all without one) scaled to its count; NaN when none was inside */
    double blocked_total_us, blocked_median_us, blocked_p95_us, bubble_total_us;
    long bubble_calls;
} sb_audit_row;

/* What the analysis counted of one range instance: an->procs[i].ranges[k] is
 * run->procs[i]->ranges[k]'s (once analyzed, a process's ranges are sorted, and hold the instances
 * only its calls name too: analyze.c). */
typedef struct sb_audit_range_info {
    long blocking;      /* the blocking calls the gate counts inside this instance */
    int64_t blocked_ns; /* their host time blocked */
} sb_audit_range_info;

/* A range name's instances over the whole run (the JSON's "ranges"). */
typedef struct sb_audit_range_sum {
    const char *name, *domain;
    long instances, max_blocking, total_blocking;
} sb_audit_range_sum;

typedef struct sb_audit_proc_result sb_audit_proc_result; /* one process's results (below) */
typedef struct sb_audit_py_files sb_audit_py_files;       /* pysite.c: source files, read once */

/* The analysis of a run: what it found for the whole run, and what it keeps between analyses.
 * The run (model/model.h) is the records as read; the analysis points at it, never the other
 * way. The reports (report/) read both through it. */
typedef struct sb_audit_analysis {
    sb_audit_run *run;  /* the records analyzed (not the analysis's: sb_audit_free) */
    sb_audit_opts opts; /* the options of the latest analysis */
    int done;           /* analyzed; a process loaded since is analyzed by the next call */
    int failed;         /* out of memory partway: a process may be half analyzed */
    /* each process's results, indexed like run->procs: procs[i] is run->procs[i]'s (processes
     * are only ever added at the run's end); nprocs of them analyzed */
    sb_audit_proc_result *procs;
    size_t nprocs, cap_procs;
    sb_audit_range_sum *range_sums;
    size_t nrange_sums;
    sb_ranks *ranks;             /* the view across ranks (ranks.c), for the table and the JSON */
    sb_audit_py_files *py_files; /* pysite.c's cache of source files */
    sb_audit_callsite_set *callsites; /* callsites.c's: each distinct call site attributed once */
} sb_audit_analysis;

/* Classify, time, attribute, line the ranks up (ranks.h): *an made (NULL: a new analysis of run)
 * or brought up to date. After more processes are loaded, again with the same *an: those already
 * analyzed are left as they were, with the options of their analysis. Out of memory partway
 * fails this and every later analysis of the run. *an is the caller's to free
 * (sb_audit_analysis_free, before sb_audit_free of its run), also on failure. */
int sb_audit_analyze(sb_audit_run *run, const sb_audit_opts *o, sb_audit_analysis **an);
void sb_audit_analysis_free(sb_audit_analysis *an);

/* ---- analyze.c ---- */
/* p's results, or NULL when p was not analyzed (not a process of the analyzed run). */
const sb_audit_proc_result *sb_audit_result_of(const sb_audit_analysis *an, const sb_audit_proc *p);
/* The instance (tid, id) of a range (ranges are sorted once analyzed), or NULL. */
sb_audit_range *sb_audit_find_range(const sb_audit_proc *p, int64_t tid, int64_t id);
/* What r's analysis counted of the instance (tid, id) of a range, or NULL when there is none. */
const sb_audit_range_info *sb_audit_find_range_info(const sb_audit_proc_result *r, int64_t tid,
                                                    int64_t id);

/* ---- site.c ---- */
/* The call site of a stack ("libfoo.so!bar", "app+0x1234", "?"), interned. */
const char *sb_audit_site(sb_strpool *strs, const sb_audit_stack *s);
/* In records[0..n) of `size` bytes, sorted by an int64_t id that is their first member: the one
 * with this id, or NULL. The stacks and the Python stacks (sorted by analyze.c). */
const void *sb_audit_find_by_id(const void *records, size_t n, size_t size, int64_t id);
const sb_audit_stack *sb_audit_find_stack(const sb_audit_proc *p, int64_t id);

/* ---- pysite.c: the Python line a user sees ---- */
/* The innermost frame of the user's code (frames of the standard library and of installed
 * packages skipped, unless opts.py_site is innermost); with none, the innermost frame. Never a
 * frame of generated code (sb_audit_py_generated): NULL when the stack has only those. */
const sb_audit_pyframe *sb_audit_py_pick(const sb_audit_pystack *s, int innermost);
/* Is this file the standard library's, an installed package's or not a file ("<frozen>")? */
int sb_audit_py_library(const char *file);
const sb_audit_pystack *sb_audit_find_pystack(const sb_audit_proc *p, int64_t id);
/* "tests/train.py:42 in step" (the path relative to the current folder when under it). */
const char *sb_audit_py_site(sb_strpool *strs, const sb_audit_pyframe *f);
/* An installed package's file from its package on ("/x/site-packages/transformers/utils.py" ->
 * "transformers/utils.py"), or NULL when the file is in none. */
const char *sb_audit_py_in_package(const char *file);
/* The name of the installed package a file is in ("/x/site-packages/transformers/utils.py" ->
 * "transformers", ".../six.py" -> "six"), into buf; "" when it is in none. */
const char *sb_audit_py_package(const char *file, char *buf, size_t n);
/* The frame of the library that made the call: the innermost frame, before the user's code, of
 * an installed package other than the frameworks whose operations the rules name
 * (sb_audit_rule_frameworks); its package's name in pkg. NULL (pkg "") when none. */
const sb_audit_pyframe *sb_audit_py_lib_frame(const sb_audit_pystack *s, char *pkg, size_t n);
/* A call's made (ci->pyframe and ci->source set; s its Python stack): the innermost frame when it
 * is not the site's (via; shown from its package on when installed:
 * "transformers/generation/utils.py:2797 in _sample"), the library's frame, and their lines'
 * text; op and fix are rules.c's. 0, or -1 out of memory. */
int sb_audit_py_made(sb_audit_analysis *an, const sb_audit_pystack *s, const sb_audit_call_info *ci,
                     sb_audit_made *m);
/* "tests/train.py:31" (relative to the current folder when under it), interned. */
const char *sb_audit_py_file_line(sb_strpool *strs, const char *file, int line);
/* The number of the first line of file (interned) that holds an alternative of alts ("a|b");
 * 0 when none does or the file cannot be read (a regular file only, as the source lines). */
int sb_audit_py_find_line(sb_audit_analysis *an, const char *file, const char *alts);
/* The frame's source line, stripped, interned; "" when the file cannot be read. */
const char *sb_audit_py_source(sb_audit_analysis *an, const sb_audit_pyframe *f);
void sb_audit_py_cache_free(sb_audit_analysis *an);

/* ---- compile_group.c: what torch.compile made, apart from the loop's run time ---- */
/* Is this Python file code made at run time, which the user cannot open or change: Inductor's
 * cache (a folder torchinductor_*), Triton's cache, an FX graph module's code (<eval_with_key>)?
 * Such a frame is never a site nor a line inside a library (pysite.c skips it). */
int sb_audit_py_generated(const char *file);
/* Is p a worker process of torch.compile (its command line, or a Python stack, shows
 * torch/_inductor/compile_worker)? Every call of one is compile time. */
int sb_audit_compile_worker(const sb_audit_proc *p);
#define SB_AUDIT_COMPILE_WORKER "torch.compile worker" /* what the reports call one */
/* A call of a worker, or whose Python stack s holds a frame of torch.compile's compile,
 * autotuning or benchmarking machinery (one table of markers), is compile time: m->compile set,
 * its operation "torch.compile: ..." and its fix; ci->rule NULL (no scenario prices it). Calls
 * at run time, through the compiled code's wrappers, are left as they are. 0, or -1 out of
 * memory. */
int sb_audit_compile_name(sb_audit_analysis *an, int worker, const sb_audit_pystack *s,
                          sb_audit_call_info *ci, sb_audit_made *m);
/* Was the call (attributed) made while torch.compile compiled? */
int sb_audit_compile_time(const sb_audit_call_info *ci);
/* Does the gate count the call: a blocking call made at run time, or any with include_compile. */
int sb_audit_gated(const sb_audit_opts *o, const sb_audit_call_info *ci);
/* r's compile-time sums (its process's calls): compile_blocking, compile_blocked_us,
 * compile_polls. */
void sb_audit_compile_sums(sb_audit_proc_result *r);
/* "compile" or "run": the reports' phase of a row. */
const char *sb_audit_phase_name(int compile);

/* ---- rules.c: what made a blocking call, in the user's terms, and its sync-free fix (the
 * rule's type: call_info.h) ---- */
/* The rules' alternatives ("a|b|c"): does one occur in s; is s one of them, whole (both 0 for
 * s NULL). The framework table matches with them too. */
int sb_audit_alt_in(const char *alts, const char *s);
int sb_audit_alt_is(const char *alts, const char *s);
/* The first rule that holds for call c of p, ci what the analysis found of it (its frames, API,
 * copy and the lines' text), or NULL. */
const sb_audit_rule *sb_audit_rule_for(const sb_audit_proc *p, const sb_audit_call *c,
                                       const sb_audit_call_info *ci);
/* Does rule r hold for the call? */
int sb_audit_rule_holds(const sb_audit_rule *r, const sb_audit_proc *p, const sb_audit_call *c,
                        const sb_audit_call_info *ci);
/* A call's made's op and fix from ci->rule: a sync inside a library's own code (made.library) that
 * no rule of that library names keeps the rule's op, and its fix says where it is: "inside
 * transformers (_sample): an upstream change, or a different call (...)". 0, or -1 out of
 * memory. */
int sb_audit_name_call(sb_strpool *strs, const sb_audit_call_info *ci, sb_audit_made *m);

/* ---- waiter_site.c: the Python line of the thread that waits ---- */
/* Each blocking call made on a thread without Python that a Python thread slept waiting for (the
 * recorded hand-offs, followed through at most three threads without Python) takes that
 * hand-off (calls[j].wake, calls indexed like p->calls, classified): its site is the waiter's
 * line. Before the calls are attributed, the Python stacks sorted. 0, or -1 out of memory. */
int sb_audit_waiter_sites(const sb_audit_proc *p, sb_audit_call_info *calls);
/* Where a row's site comes from: "python" (the calling thread's line), "native" (its native
 * frame) or "waiter" (the line of the Python thread that waited for the calls). */
const char *sb_audit_site_from(const sb_audit_row *r);

/* ---- callsites.c: each distinct call site attributed once (the site: call_info.h) ---- */
/* The call site of call c of p (ci: classified, its waiter found): found (*added 0) or added
 * (*added 1: the caller attributes the call and keeps it); NULL out of memory. */
sb_audit_callsite *sb_audit_callsite_of(sb_audit_callsite_set **set, const sb_audit_proc *p,
                                        const sb_audit_call *c, const sb_audit_call_info *ci,
                                        int *added);
/* What an attributed call found, kept in its site; given to another call of the site. */
void sb_audit_callsite_keep(sb_audit_callsite *cs, const sb_audit_call_info *ci);
void sb_audit_callsite_give(const sb_audit_callsite *cs, sb_audit_call_info *ci);
void sb_audit_callsites_free(sb_audit_callsite_set **set);
/* Every rule, NULL-terminated by op (tests, --help). */
extern const sb_audit_rule sb_audit_rules[];
/* The packages whose operations the rules name, whose Python code is not "a library" a sync is
 * inside of (torch, jax: their Python is how their operations are called), NULL-terminated. */
extern const char *const sb_audit_rule_frameworks[];

/* ---- symbolize.c ---- */
/* Names the frames with no symbol of the stacks a blocking call used (each process's
 * stack_used): from the object's symbol table where a symbol covers the address, with its file
 * and line through addr2line (on PATH) where the object's debug information knows them; else
 * they stay library+offset. A process of an older writer (no "symsize") has each name checked the
 * same way: one no symbol of the object covers, or of an object that cannot be read, is dropped.
 * Every process of an's run (an->procs holds a result for each). */
void sb_audit_symbolize(sb_audit_analysis *an);

/* ---- elfsyms.c: an object's ELF symbol tables ---- */
typedef struct sb_elf_syms sb_elf_syms;
/* The defined functions of the object at this absolute path, with their sizes; NULL when it is
 * not a readable 64-bit little-endian ELF file (or out of memory). */
sb_elf_syms *sb_elf_syms_open(const char *path);
/* A frame's address as the object's symbols and addr2line read it. */
uint64_t sb_elf_addr(const sb_elf_syms *e, const sb_audit_frame *f);
/* The name of the function whose [value, value + size) holds the frame's address, into buf (cut
 * at n - 1 bytes); NULL when none does: never a neighbour's. */
const char *sb_elf_sym_at(const sb_elf_syms *e, const sb_audit_frame *f, char *buf, size_t n);
void sb_elf_syms_free(sb_elf_syms *e);

/* ---- savings.c: what removing syncs would save (the replay, replay.h) ---- */
/* SB_SAVE_LINE: the calls of one user's line (the site) made through one line inside a library
 * (the call's made->via_site, not ""), played alone: which library line, which option, is worth
 * changing */
typedef enum {
    SB_SAVE_ALL,
    SB_SAVE_SITE,
    SB_SAVE_CLASS,
    SB_SAVE_RANGE,
    SB_SAVE_LINE
} sb_audit_save_kind;
typedef struct sb_audit_saving {
    int kind;           /* sb_audit_save_kind */
    const char *key;    /* the site (sites, lines) or the range name (interned); NULL: all, a
                           class */
    const char *via;    /* lines: the library line (via_site, interned); else NULL */
    sb_audit_class cls; /* SB_SAVE_CLASS */
    long calls;         /* blocking calls removed */
    /* the selection's blocking calls in the whole run: calls, unless the process recorded the
     * GPU's activity in a window (model.h: windowed), whose calls alone are played; its
     * figures are then the window's, scaled to the run by run_calls / calls (docs/replay.md) */
    long run_calls;
    double blocked_us;     /* the host time the selection's calls blocked (all run_calls) */
    sb_replay_result r;    /* the predicted savings: the syncs and what goes with them */
    sb_replay_result kept; /* the same with their readbacks kept (SB_REPLAY_KEEP_READBACKS):
                              sites, lines and all only, else zero */
    /* where producers hand work on (replay.h: r.producers > 0; sites, lines and all only): the
     * other reading of them. r keeps the figure the run's own waits support: that they keep up
     * (the play's default), unless they held the syncing threads back at half the removed calls
     * or more when held where recorded, in which case r and other swap and held_primary is 1 */
    sb_replay_result other;
    int held_primary;
    /* the other ranks of the job (analyze.c) when the ranks could not be played together
     * (ranks_play.c; ranks_why says why): each rank's replay alone keeps the collectives' times as
     * recorded, so a rank that would move holds still at each one and its figure says nothing of
     * the job's; nonzero, the figure is no prediction. 0 once they were played together */
    int ranks_unmodelled;
    const char *ranks_why; /* why not played together (interned); NULL: they were, or alone */
    /* the ranks played together (ranks_play.c): how many, the collectives matched across them;
     * r, kept and other are then this rank's own in the job's plays, and job_figure says it is
     * the job's figure (its slowest rank's: the one whose play ends last), which the run's sums
     * take once */
    int ranks_played;
    long collectives;
    int job_figure;
} sb_audit_saving;
/* Plays p's run (when its launches were recorded) with every sync removed, then with each of
 * the `top` most blocking sites, ranges and library lines (site, via) and each class removed
 * alone; r->savings: all, the sites, the classes, the ranges, the lines. A line that holds every
 * call of its site takes the site's figures. 0, or -1 out of memory. */
int sb_audit_savings(sb_audit_proc_result *r, int top);
/* Does the play of selection s remove the call (what the analysis found of it: a blocking call
 * of the run time the selection selects)? */
int sb_audit_saving_removes(const sb_audit_call_info *ci, const sb_audit_saving *s);
/* The replay's model of r's process, given its calls' classes. NULL out of memory. */
sb_replay_model *sb_audit_replay_model(const sb_audit_proc_result *r);
/* The selection's plays that take the readbacks kept and the producers held too: sites, lines,
 * all. */
int sb_audit_saving_played_twice(int kind);
/* The saving of one selection (key: the interned site or range), or NULL when not played; a
 * library line's: sb_audit_line_saving_of. */
const sb_audit_saving *sb_audit_saving_of(const sb_audit_proc_result *r, int kind, const char *key,
                                          sb_audit_class cls);
/* The saving of library line `via` (via_site, not "") under user's line `site` (both interned), or
 * NULL when not played. */
const sb_audit_saving *sb_audit_line_saving_of(const sb_audit_proc_result *r, const char *site,
                                               const char *via);
/* What the reports give as a selection's saving: its removed calls at the saving per call typical
 * of the run (replay.h: typical_us; fewer calls than SB_REPLAY_WINDOWS: the whole run's play,
 * r.wall_us), not the whole run's play, which one stretch can move: a VM's slow spell lengthens the
 * calls recorded then, and a wait for a thread whose pace the replay holds where it was recorded (a
 * DataLoader's, at each epoch's first batch) takes back what the run gained before it, though its
 * loader answers the earlier request as soon. */
double sb_audit_saving_us(const sb_audit_saving *s);
/* The same of one play's result r of `calls` removed calls (the window's, unscaled). */
double sb_audit_result_us(const sb_replay_result *r, long calls);
/* What a selection's figures are multiplied by to stand for the whole run: 1 without a window of
 * GPU activity, else its calls in the run over those in the window (NaN: none in the window, no
 * figure). */
double sb_audit_saving_scale(const sb_audit_saving *s);
/* Nonzero when a saving is no prediction: threads it could not tie together (replay.h:
 * threads_unmodelled) or other ranks it does not play (ranks_unmodelled). */
int sb_audit_unmodelled(const sb_audit_saving *s);
/* One selection's saving over the run (report/save_text.c puts it in words). */
typedef struct sb_audit_run_save {
    int played; /* the processes that have a figure of it; 0: none (and us is 0) */
    double us;  /* their figures (sb_audit_saving_us) summed */
    /* why it is no prediction, nonzero when one of the plays could not tie its threads together
     * (replay.h: threads_unmodelled), or is of a rank whose job's other ranks it does not play
     * (ranks_unmodelled) */
    int threads_unmodelled, ranks_unmodelled;
    /* the processes that played it with none of its calls inside their window of GPU activity
     * (no figure of theirs) */
    int outside_window;
} sb_audit_run_save;
sb_audit_run_save sb_audit_run_saving(const sb_audit_analysis *an, int kind, const char *key,
                                      sb_audit_class cls);
/* The same of a library line (site, via). */
sb_audit_run_save sb_audit_run_line_saving(const sb_audit_analysis *an, const char *site,
                                           const char *via);
/* One process's results (an->procs[i], run->procs[i]'s): what the analysis found of it, apart
 * from its records. */
struct sb_audit_proc_result {
    sb_audit_proc *proc;     /* the records analyzed */
    int compile_worker;      /* compile_group.c: a worker process of torch.compile */
    int64_t t_first, t_last; /* lifetime: first to last timestamp */
    sb_audit_timeline *tl;   /* the GPU's busy time, per device */
    size_t ntl;
    sb_audit_timeline all; /* every device merged */
    /* what it found of each call, indexed like proc->calls (proc->ncalls of them) */
    sb_audit_call_info *calls;
    /* each range instance's counts, indexed like proc->ranges (proc->nranges of them) */
    sb_audit_range_info *ranges;
    /* nonzero for each stack a blocking call used, indexed like proc->stacks (sorted): the
     * stacks symbolize.c names */
    unsigned char *stack_used;
    sb_audit_row *rows;
    size_t nrows;
    long counts[SB_AUDIT_NCLASS];
    double lifetime_us, busy_us, blocked_us;
    long polls, blocking;
    /* of those, made while torch.compile compiled (compile_group.c) */
    double compile_blocked_us;
    long compile_polls, compile_blocking;
    /* savings.c: what removing syncs would save, from the replay (launches recorded) */
    sb_audit_saving *savings; /* [0]: every sync; then sites, classes, ranges, lines */
    size_t nsavings;
    sb_replay_facts *replay; /* what the model took from the run; NULL: no replay */
    /* the window of GPU activity (proc->windowed): the time it was open, 0 when it never opened
     * (to the last record when still open at the exit), and the instances of its range begun in
     * the whole run (its "range" records) */
    double window_us;
    long range_instances;
};

/* The time over which res's GPU activity was recorded: its window's when it had one, else its
 * lifetime. GPU busy % is of this time. */
double sb_audit_gpu_span_us(const sb_audit_proc_result *res);
/* The window of GPU activity as the reports say it, "step:3-7" (record/gpu_window.h's text) into
 * buf; "" without one. */
const char *sb_audit_window_text(const sb_audit_proc *p, char *buf, size_t n);

/* ---- timeline.c ---- */
/* A sum of bubbles of `known` calls of `count` (those inside the window of GPU activity) scaled
 * to them all: the sum itself when all are known, NaN when none is. */
double sb_audit_scale_bubbles(double sum_us, long count, long known);
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

/* Did the host's launches bound most GPU operations in that play (else the GPU did)? */
int sb_audit_host_bound(const sb_replay_result *r);

#endif
