/* The replay's model (replay.h says what it is), shared by the files of src/replay/: the build
 * and the play (replay.c) and the threads' hand-offs (threads.c). Private to this room. */
#ifndef SB_REPLAY_MODEL_H
#define SB_REPLAY_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "replay/replay.h"

#define NONE (INT64_MIN / 4) /* "no such time": below every real one, safe to add to */

static inline int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* the order of items of one correlation id: a stretch the recording was off that ended before the
 * call (IT_PAUSE), a hand-off between threads before it (IT_HAND: a signal or the end of a wait
 * it ended, in time order), a rank's part in a collective that begins at such a wait's end
 * (IT_ARRIVE_HAND) and one that ends before the call (IT_COLL: the thread goes on once every
 * rank's part is done, job.c), what recording added to a kernel launch before the kernel
 * reached the GPU (IT_PRE), what the call launched, the call, then the audit's own time after it
 * (IT_OH), then a part in a collective that begins after the call (IT_ARRIVE_CALL) */
enum {
    IT_PAUSE,
    IT_HAND,
    IT_ARRIVE_HAND,
    IT_COLL,
    IT_PRE,
    IT_LAUNCH,
    IT_RECORD,
    IT_WAIT,
    IT_CALL,
    IT_OH,
    IT_ARRIVE_CALL
};
enum { TG_NONE, TG_STREAM, TG_CTX, TG_ALL, TG_EVENT, TG_OP };
/* how a stream orders against the legacy default stream of its context */
enum { SK_OWN, SK_NULL, SK_BLOCKING };

typedef struct {
    int64_t corr;
    int32_t kind, idx;
    int64_t tie; /* several operations of one launch (a graph): their recorded start */
} item;

typedef struct {
    int64_t start, dur, launch;  /* launch: host time of the launch call; NONE: unknown */
    int64_t sub;                 /* the launch call's own time (its end: the work submitted) */
    int64_t off_a, off_b, off_c; /* this operation's deviation on each term (replay.h) */
    int32_t thread, stream, ctx;
    int32_t call; /* the recorded call that launched it (its index in p->calls), or -1 */
    int readback; /* a copy into host memory: it goes when the call that made it goes */
    int kernel;
} rop;

/* A recorded call: a blocking one waits for its target; one that did not block (a readback's
 * cudaMemcpyAsync, a cudaMalloc) just takes its time (tkind TG_NONE). */
typedef struct {
    int64_t start, end;
    int64_t post;   /* time from what it waited for to its end (its wake-up) */
    int64_t gshift; /* what it waited for ended after the call (clock skew): taken off */
    size_t call;
    int32_t thread, tkind, target;
    int32_t rb_first, rb_n; /* the readbacks it makes visible: m->rb[rb_first..+rb_n) */
    int waited;             /* it waited for the GPU in the run (its post is a wake-up) */
    int64_t pair;           /* a free: the allocation it undoes (a call index), else -1 */
} rblock;

typedef struct {
    int32_t stream, event;
} rlink;

typedef struct {
    int64_t oh;
    int32_t thread;
} roh;

typedef struct {
    int64_t start, end;
    int64_t lag; /* how long the recorded GPU work went on past its start (the identity play) */
    int32_t thread;
} rpause;

/* A hand-off ("wake" record): the waiter slept from start to end until the waker's signal at
 * `at`. Its items: 2 x index (the signal) and 2 x index + 1 (the wait's end). */
typedef struct {
    int64_t start, end, at;
    int64_t snap; /* one play: the waker's delta at the signal */
    int32_t waiter, waker;
    /* the waker is a source: no recorded hand-off ever woke it (a DataLoader's pin-memory
     * thread, fed through pipes by worker processes): whether its hand-off would come sooner
     * when the waiter asks sooner is not recorded (replay.h: SB_REPLAY_HOLD_BY_PRODUCERS) */
    int from_source;
    /* the wait lies inside a recorded call of the waiter (a driver's wait in a blocking sync,
     * CUPTI's own buffers): that call's time is the model's, not a hand-off's */
    int inside;
    /* the wait lies inside the waiter's part in a collective (job.c: gloo's worker waiting for
     * its peers' data, which its transport thread hands it): the collective's rule plays it */
    int coll;
} rhand;

/* A rank's part in a collective (job.c): its thread reaches it at `arrive` and goes on at
 * `complete` (recorded, the rank's own clock) once every rank's part is done, `lag` after the
 * last rank's arrival (recorded, the job's clock: what the collective itself took after it). */
typedef struct {
    int64_t arrive, complete, lag;
    int32_t thread;
    int32_t match; /* the collective across ranks: its index in the job */
} rpart;

/* A baseline play and what the savings need of it. */
typedef struct {
    int have;
    int64_t first, host_last, gpu_first, gpu_last, busy;
    int64_t *reached; /* per call: when it reached it (typical_us, replay.h) */
} rbase;

struct sb_replay_model {
    rop *ops;
    size_t nops;
    rblock *blocks;
    size_t nblocks;
    rlink *recs, *waits; /* event records (event i = record i) and stream waits */
    size_t nrecs, nwaits;
    roh *ohs;
    size_t nohs;
    rpause *pauses;
    size_t npauses;
    rhand *hands;
    size_t nhands;
    rpart *parts; /* the rank's parts in collectives (job.c), in the job's order; none alone */
    size_t nparts;
    int waits_recorded; /* the process's hand-offs were recorded (proc "waits") */
    int32_t *rb;        /* readback call indices, grouped by the sync that makes them visible */
    size_t nrb, ncalls;
    unsigned char *gone; /* one play: the calls removed, with their readbacks and allocations */
    int8_t *skind;       /* per stream: SK_* */
    item *items;
    size_t nitems;
    size_t nthreads, nstreams, nctx;
    int64_t lat, gap;
    int64_t fetch; /* submitted (the launch call's end) to started, stream idle: the run's median */
    int64_t behind; /* a copy or memset behind a kernel that reached the GPU first: end to start */
    int64_t start_extra; /* what recording added to the GPU's start of launched work (calibrated) */
    int64_t copy_extra;  /* ... and of a readback beyond that */
    int64_t wake;        /* median wake-up of the syncs that waited in the run; NONE: too few */
    sb_replay_facts facts;
    /* the run without the audit's own time (the baseline play), which savings are taken from */
    /* the baseline plays (nothing removed, the audit's own time taken out) every saving is taken
     * from: [0] with the sources' hand-offs set aside, [1] with them holding their waiters */
    rbase base[2];
    /* state of one play */
    int64_t *delta, *last_new, *stream_end, *stream_dep, *ctx_end, *ev_cap, *op_end;
    int8_t *stream_kernel;            /* per stream: its last operation was a kernel */
    int64_t *null_end, *blocking_end; /* per context: legacy stream's, blocking streams' */
    int64_t *scratch;                 /* 2 per operation: the union of busy intervals */
    int64_t *ahead;           /* one play: how much sooner it reached each removed call, in order */
    int32_t *ahead_thread_of; /* ... each one's thread */
    int64_t *ahead_one;       /* ... those of one thread (typical_us of several threads) */
    long *per_thread;         /* ... how many each thread has */
};

/* One play's state beside the model's per-thread, per-stream and per-context arrays. */
typedef struct {
    const unsigned char *remove; /* NULL: the identity play */
    int identity, keep;          /* keep: readbacks stay when their sync goes */
    int64_t all_end;             /* the end of the GPU work played so far */
    int64_t gpu_first, first;    /* the first GPU start; the first host or GPU time */
    long host_bound;             /* operations whose start the host's launch set */
    size_t nahead;               /* m->ahead[0..nahead): the removed calls reached */
    int held;                    /* the sources' hand-offs hold their waiters */
    long holds;                  /* ... how many did (replay.h: producer_holds) */
    rbase *base;                 /* the baseline of this play's hand-off policy */
    int32_t ahead_thread;        /* the thread of the removed calls; -2: several */
    int64_t last;                /* sb_replay_play_end: the play's last host or GPU time */
    struct sb_replay_meet *meet; /* the ranks played together (meet.c); NULL: this process alone */
    size_t rank;                 /* this model's rank in the job */
} player;

/* ---- replay.c: a play, an item at a time (job.c interleaves the ranks' items) ---- */
/* The items in the order they are played: by correlation id, then kind (the enum), then tie. */
void sb_replay_sort_items(sb_replay_model *m);
/* A player of m for a play removing `remove` (NULL: the identity play) with flags SB_REPLAY_*,
 * its baseline the model's own (job.c sets the job's). */
player sb_replay_player(sb_replay_model *m, const unsigned char *remove, int flags);
/* Clears the per-play arrays and marks what goes with the removed calls. */
void sb_replay_play_begin(sb_replay_model *m, const player *pl);
/* Plays one item: 0; or 1 when it is the end of a part in a collective whose other ranks have
 * not all arrived (nothing played: it is played again later). */
int sb_replay_play_item(sb_replay_model *m, player *pl, const item *it);
/* The play's figures against its baseline (the baseline's own when it has none yet; it then
 * becomes the baseline), and the threads it could not tie together. -1 out of memory. */
int sb_replay_play_end(sb_replay_model *m, player *pl, sb_replay_result *r);

/* ---- meet.c: where the ranks of a job meet in one play (job.c owns it, replay.c asks it) ---- */
typedef struct sb_replay_meet {
    size_t n;           /* ranks */
    const int64_t *off; /* each rank's offset from its own clock to the job's */
    int64_t *arrived;   /* [collective * n + rank]: when the rank reached it (the job's clock) */
    size_t *narrived;   /* per collective: the ranks that had */
} sb_replay_meet;
/* The rank's part pt reached at `at` (the rank's own clock, in this play). */
void sb_replay_meet_arrive(sb_replay_meet *mt, size_t rank, const rpart *pt, int64_t at);
/* 1 and the part's new end (the rank's own clock) when every rank's part of its collective has
 * arrived; else 0. */
int sb_replay_meet_complete(const sb_replay_meet *mt, size_t rank, const rpart *pt, int64_t *end);

/* ---- threads.c: hand-offs between threads ---- */
/* Marks the hand-offs whose wait lies inside a recorded call of the waiter (items sorted). -1 out
 * of memory. */
int sb_replay_mark_inside(sb_replay_model *m);
/* Marks the hand-offs whose waker is a source (no recorded hand-off woke it); 1 when there is
 * one, 0 when none. */
int sb_replay_mark_sources(sb_replay_model *m);
/* One item of a hand-off in a play; held: the sources' hand-offs hold their waiters (else they
 * are set aside). Returns 1 when a source's hand-off held its waiter back. */
int sb_replay_play_hand(sb_replay_model *m, int32_t idx, int held);
/* threads_unmodelled (replay.h) of a play, and its producers (the sources that hand work on in
 * the stretch of the removed calls). -1 out of memory. */
int sb_replay_unmodelled_threads(const sb_replay_model *m, const unsigned char *remove,
                                 int *producers);

#endif
