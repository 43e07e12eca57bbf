/* The replay: the recorded run of one process played again with chosen blocking calls removed,
 * to predict what removing them would save (savings.c chooses them; this file plays).
 *
 * The model, built once from the records of a process recorded with its launches:
 *  - each host thread runs as recorded, shifted earlier by the time its removed calls took and
 *    by what its remaining syncs no longer wait (delta per thread; threads are independent:
 *    locks and queues between them are not recorded);
 *  - every kernel, copy and memset starts at the latest of: its launch (shifted with its thread)
 *    plus the launch latency, the end of the previous operation on its stream plus the gap
 *    between back-to-back operations, and the end of what its stream must wait for plus that
 *    gap: the events it waits for (cudaStreamWaitEvent) and, for the legacy default stream and
 *    the streams created blocking (CUPTI's stream records), each other's work. Its duration is
 *    the recorded one. The latency and the gap are the run's medians (launches made while the
 *    stream was idle, operations queued behind another); each operation keeps its own
 *    deviation from them on the term that bound it in the run, so that the identity play (the
 *    recorded run: nothing removed, the audit's time kept) gives back the recorded timeline
 *    exactly. A copy or memset queued behind a kernel
 *    whose work reached the GPU before the kernel ended (submitted plus the run's fetch time)
 *    takes the run's gap of such copies instead of the gap (its engine waits for the kernel:
 *    on an H100 about 8 us against 1.4); in every play but the identity play its work is
 *    taken as submitted at its launch call's start, since the recording lengthens the calls;
 *  - a remaining sync ends at the latest of its (shifted) start and the new end of what it waited
 *    for (its stream, its event, its context, its own copy), plus its wake-up in the run; one
 *    that found the GPU done in the run but now waits takes at least the median wake-up of the
 *    syncs that waited. A call that did not block (a cudaMemcpyAsync, a cudaMalloc) takes its
 *    recorded time;
 *  - a removed call takes no time and the host goes on at once. What the fix would drop with it
 *    goes too: a removed sync takes the readbacks it makes visible (copies into host memory its
 *    thread launched since its previous blocking call: .item() is a cudaMemcpyAsync and a sync;
 *    their calls and their copies), a removed cudaFree the cudaMalloc it undoes (paired by the
 *    pointer). With SB_REPLAY_KEEP_READBACKS the readbacks stay, made asynchronous: what a fix
 *    that still reads the values without waiting for each gives (non_blocking, coalescing,
 *    double buffering);
 *  - the time the audit itself spent after each recorded call (its stacks, taken on the way
 *    out) and what recording added to each watched call beside it and to each launch (measured
 *    before the run: the same calls timed in one process with the recording off and on in
 *    turns, cmd/audit_calibrate.c) are taken out of its thread after the call, in the baseline
 *    as in every other play (an allocation's and a free's own figure, which is larger); what it
 *    added on the GPU's side of a round trip (a launch, then a sync that waits for it: CUPTI's
 *    timestamps around the work, its end noticed later) is taken off the launch latency of
 *    every operation whose launch bounds its start, and what it added to a readback's round
 *    trip beyond that off each readback's start (not before its stream's previous work ends).
 *  - a stretch the recording was off (recording turns: an unrecorded repetition between two
 *    recorded ones) takes its time on every thread of the process, begun once the GPU has run
 *    the work recorded before it as far as it had when the recording went off (on every
 *    stream and device): what the process did then is unknown, and removed syncs must not let
 *    the host run ahead into it (recording turns end a repetition with its work done).
 *  - a process that recorded the GPU's activity in a window only (--gpu-activity-range: model.h's
 *    windowed) is played inside that window: its calls, hand-offs and pauses outside it are left
 *    out (what the GPU did then is unknown), and a play's figures are the window's.
 * Items are played in CUPTI's correlation order (one counter over every API call of the process:
 * the order calls were made in), in O(n) per replay after an O(n log n) build. */
#ifndef SB_AUDIT_REPLAY_H
#define SB_AUDIT_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "record/classes.h"

struct sb_audit_proc;
typedef struct sb_replay_model sb_replay_model;

/* What the model took from the run (the JSON's "replay"). */
typedef struct sb_replay_facts {
    double launch_latency_us; /* median: launch call to start, stream idle */
    double gap_us;            /* median: end of one operation to start of the next, queued */
    double fetch_us;          /* median: launch call's end to start, stream idle */
    /* median: a kernel's end to the start of a copy or memset queued behind it that reached
     * the GPU before the kernel ended */
    double copy_behind_kernel_us;
    long ops;              /* kernels, copies and memsets */
    long ops_unplaced;     /* their launch was not recorded: kept at their recorded start */
    long syncs;            /* blocking calls */
    long syncs_untargeted; /* what they waited for is unknown: taken as their whole context */
    int gpu_streams;
    double audit_overhead_us; /* the audit's own time around the calls, taken out */
    double wake_us;           /* median wake-up of a sync that waited; 0: too few waited */
    double launch_extra_us;   /* what recording added to each launch, taken out; 0: unknown */
    double call_extra_us;     /* ... to each watched call beside its "oh", taken out; 0 */
    double start_extra_us;    /* ... to the GPU's start of launched work, taken out; 0 */
    double alloc_extra_us;    /* ... to each cudaMalloc and cudaFree beside its "oh"; 0 */
    double copy_extra_us;     /* ... to the GPU's start of a readback beyond that; 0 */
    long unrecorded;          /* stretches the recording was off ("pause" records) */
    int waits;                /* the hand-offs between threads were recorded ("wake" records) */
    long hand_offs;           /* those the model plays (not a wait inside a call of its own) */
    long long wakes_lost;     /* "wake" records the waits library lost: hand-offs unknown */
} sb_replay_facts;

typedef struct sb_replay_result {
    double wall_us;      /* predicted saving of the run's wall time (first to last activity) */
    double idle_us;      /* predicted saving of GPU idle time (first to last GPU operation) */
    double host_pct;     /* % of GPU operations whose start the host's launch then bounds */
    double gpu_busy_pct; /* GPU busy share of the replayed run */
    double span_us;      /* the replayed run: first to last activity */
    /* the saving per removed call typical of the run, not moved by a stretch where the host was
     * slow (a VM's hiccup lengthens the calls recorded then, and so wall_us): the removed calls
     * cut into SB_REPLAY_WINDOWS windows of equal count (each call its own when fewer), the
     * median (the upper one of an even count) of each window's saving per call. A window saves
     * what the play gains, against the baseline, from reaching its first call (the run's start,
     * for the first window) to reaching the next window's first (the run's end, for the last);
     * the play reaches a call at the later of the host's time and the end of the GPU work
     * launched before it. Removed calls of several threads: wall_us per call (each thread
     * reaches its calls on its own time). 0: none removed */
    double typical_us;
    /* the interval of typical_us its windows support: the order statistics of the windows'
     * savings per call that bound their median with at least 95 % confidence (with 20 windows,
     * the 6th and the 15th; fewer than 6 windows: the lowest and the highest). The same run's
     * windows only: a process whose host ran slower all through moves the figure and the
     * interval together */
    double typical_lo_us, typical_hi_us;
    /* the host threads the play involves beyond one, which the model cannot move together: those
     * of the removed calls and those that launched GPU work between the first removed call and
     * the last (PyTorch's autograd engine runs every backward pass on a thread of its own; a
     * DataLoader's pin-memory thread copies). Threads are played as independent, so work
     * another thread launched after a removed sync stays where it was recorded and the saving
     * comes out near zero whatever it is: nonzero, the figures above are not a prediction, and
     * the reports say "unknown: threads not modelled" */
    int threads_unmodelled;
    /* the producers: threads that hand work on to the ones the play moves (between the first
     * removed call and the last) but that no recorded hand-off ever woke (a DataLoader's
     * pin-memory thread, fed through pipes by worker processes the audit does not see). Whether
     * their hand-offs come sooner when asked sooner is not recorded: by default the play takes
     * it that they do (they keep up: a wait for one keeps its recorded length); with
     * SB_REPLAY_HOLD_BY_PRODUCERS their hand-offs hold their waiters where they were recorded,
     * and producer_holds counts the waits one of them then held back */
    int producers;
    long producer_holds;
} sb_replay_result;

#define SB_REPLAY_WINDOWS 20

/* What the model reads of the analysis: the class of each call of the process, where the
 * analysis keeps it, inside its record of each call (no copy of millions): p->calls[0]'s at
 * `first`, each next call's `stride` bytes on. */
typedef struct sb_replay_classes {
    const sb_audit_class *first;
    size_t stride;
} sb_replay_classes;

static inline sb_audit_class sb_replay_class_of(sb_replay_classes c, size_t i)
{
    return *(const sb_audit_class *)(const void *)((const char *)c.first + i * c.stride);
}

/* The model of p's run, given its calls' classes. NULL when out of memory. */
sb_replay_model *sb_replay_build(const struct sb_audit_proc *p, sb_replay_classes cls);
void sb_replay_facts_of(const sb_replay_model *m, sb_replay_facts *f);
/* Readbacks stay when their sync is removed (made asynchronous). */
#define SB_REPLAY_KEEP_READBACKS 1
/* The producers' hand-offs hold their waiters where they were recorded (sb_replay_result). */
#define SB_REPLAY_HOLD_BY_PRODUCERS 2
/* Plays the run with every call i of p->calls whose remove[i] is nonzero removed (and what goes
 * with it: see above), and the savings against the run with none removed (both without the
 * audit's own time after the calls, the "oh" of records.h). flags: SB_REPLAY_*. 0, or -1 when
 * remove is NULL. */
int sb_replay_run(sb_replay_model *m, const unsigned char *remove, int flags, sb_replay_result *r);
void sb_replay_free(sb_replay_model *m);

/* ---- job.c: the ranks of a job played together ----
 * A collective completes when the last rank's part of it does. Each rank's thread reaches its
 * part of a collective (its data ready: after the call or the hand-off that readied it) and goes
 * on (the call it makes next) once every rank's part has arrived, as long after the last arrival
 * as it went on in the run (what the collective itself took: the job's clock is CLOCK_MONOTONIC,
 * which the ranks of one machine share). The waits inside a part (for the peers' data) are the
 * collective's, not hand-offs to play. Parts are matched across ranks by group and order. Each
 * rank is played by its own model, an item at a time, the ranks in turn: a rank stops at the end
 * of a part until every rank has reached it, so removing a sync on one rank moves the others at
 * the next collective they share. */
typedef struct sb_replay_job sb_replay_job;

/* Where a rank's part begins: after a call (its end and the audit's own time after it), or at
 * the end of a wait (a hand-off: a worker given the collective's work). */
enum { SB_PART_AFTER_CALL, SB_PART_AFTER_WAKE };
typedef struct sb_replay_part {
    int after;       /* SB_PART_AFTER_* */
    size_t at;       /* that call's index in the process's calls, or that wake's in its wakes */
    size_t complete; /* the call its thread makes once the collective is done (same thread) */
    int group;       /* the communicator: parts are matched by group, in their order here */
} sb_replay_part;

/* One rank of a job: its process, its model (sb_replay_build of it: the job takes it, also on
 * failure) and its parts in collectives. */
typedef struct sb_replay_rank {
    const struct sb_audit_proc *proc;
    sb_replay_model *model;
    const sb_replay_part *parts;
    size_t nparts;
    int rank; /* its number (RANK), for the messages */
} sb_replay_rank;

/* The job of ranks[0..n) (n >= 2), its baselines played: 0 and *job; 1 when the ranks cannot be
 * played together, why in why (their parts do not match: counts differ, a part's calls are not
 * of one thread, they cannot be lined up in order); -1 out of memory. */
int sb_replay_job_new(const sb_replay_rank *ranks, size_t n, sb_replay_job **job, char *why,
                      size_t whylen);
/* The collectives matched across the ranks. */
size_t sb_replay_job_collectives(const sb_replay_job *j);
/* Plays the ranks together, rank i without the calls remove[i] marks (sb_replay_run's flags):
 * r[i] each rank's savings against the job's baseline play, end_ns[i] when its play ends (its
 * last host or GPU time on the job's clock; INT64_MIN: none): the job's figure is its slowest
 * rank's, the one that ends last. 0; 1 when the ranks' collectives cannot be lined up (never
 * once sb_replay_job_new made the job: it played them so); -1 out of memory. */
int sb_replay_job_run(sb_replay_job *j, const unsigned char *const *remove, int flags,
                      sb_replay_result *r, int64_t *end_ns);
void sb_replay_job_free(sb_replay_job *j);

#endif
