/* The replay (src/replay/replay.c) on synthetic record streams whose answers are known by hand:
 * a GPU-bound loop (removing its syncs saves only the gap after each kernel), a loop whose GPU
 * work is short (saves what the host waited), a sync followed by host work longer than the
 * GPU's queue (saves the wait, not the bubble), an event that orders two streams, the audit's
 * own time taken out, and the replay's figures in the reports. Times are in microseconds here,
 * nanoseconds in the records. */
#include "audit_stream.h"
#include "analyze/frameworks.h"
#include "report/save_text.h"
#include "tmpdir.h"

#include <jansson.h>
#include <math.h>
#include <unistd.h>

#define US 1000LL

/* The first line of a process recorded with --gpu-activity: kernels and launches. */
static void replay_proc(stream *s)
{
    line(s, "{\"t\":\"proc\",\"v\":1,\"pid\":100,\"ppid\":1,\"rank\":-1,\"local_rank\":-1,"
            "\"cmd\":\"app\",\"clock_ns\":0,\"mono_ns\":1000000,\"mode\":\"count\","
            "\"kernels\":1,\"launches\":1}");
}

/* A new stream of one process's records, its first line written. */
static void begin(stream *s)
{
    stream_open(s);
    replay_proc(s);
}

/* A kernel launch (cudaLaunchKernel) by thread tid at [t0, t1) and its kernel [k0, k1) on stream
 * st. */
static void launch_by(stream *s, int tid, long long corr, long long t0, long long t1, int st,
                      long long k0, long long k1)
{
    line(s,
         "{\"t\":\"api\",\"api\":\"cudaLaunchKernel_v7000\",\"dom\":\"rt\",\"tid\":%d,"
         "\"corr\":%lld,\"start\":%lld,\"end\":%lld}",
         tid, corr, t0 * US, t1 * US);
    line(s,
         "{\"t\":\"kernel\",\"dev\":0,\"ctx\":1,\"stream\":%d,\"corr\":%lld,\"start\":%lld,"
         "\"end\":%lld}",
         st, corr, k0 * US, k1 * US);
}

/* The same by thread 1. */
static void launch_call(stream *s, long long corr, long long t0, long long t1, int st, long long k0,
                        long long k1)
{
    launch_by(s, 1, corr, t0, t1, st, k0, k1);
}

/* The same, the launch call [t, t + 2 us). */
static void launch(stream *s, long long corr, long long t, int st, long long k0, long long k1)
{
    launch_call(s, corr, t, t + 2, st, k0, k1);
}

/* cudaStreamSynchronize of stream st by thread tid at [t0, t1), with CUPTI's synchronization
 * record; the call's stack id names its site (sites differ by stack). oh: the audit's time
 * around it. */
static void sync_by(stream *s, int tid, long long corr, long long t0, long long t1, int st,
                    int stack, long long oh)
{
    line(s, "{\"t\":\"stack\",\"id\":%d,\"frames\":[[\"/app\",\"site%d\",%d,0]]}", stack, stack,
         16 * stack);
    line(s,
         "{\"t\":\"call\",\"api\":\"cudaStreamSynchronize_v3020\",\"dom\":\"rt\",\"tid\":%d,"
         "\"ctx\":1,\"corr\":%lld,\"start\":%lld,\"end\":%lld,\"oh\":%lld,\"ranges\":[],"
         "\"stack\":%d}",
         tid, corr, t0 * US, t1 * US, oh * US, stack);
    line(s,
         "{\"t\":\"sync\",\"type\":\"stream\",\"ctx\":1,\"stream\":%d,\"corr\":%lld,"
         "\"sync_id\":-1,\"start\":%lld,\"end\":%lld}",
         st, corr, t0 * US, t1 * US);
}

/* The same by thread 1. */
static void stream_sync(stream *s, long long corr, long long t0, long long t1, int st, int stack,
                        long long oh)
{
    sync_by(s, 1, corr, t0, t1, st, stack, oh);
}

static void replay_end(stream *s, long long t)
{
    line(s, "{\"t\":\"end\",\"clock_ns\":%lld,\"mono_ns\":%lld,\"why\":\"exit\",\"dropped\":0}",
         t * US, 1000000 + t * US);
}

/* n steps, one every `period` us: a launch at the step's start (kernel [k0, k1) after it) and a
 * stream sync [s0, s1) after it, with oh us of audit time; then the end record. */
static void loop(stream *s, int n, long long period, long long k0, long long k1, long long s0,
                 long long s1, long long oh)
{
    for (long long i = 0; i < n; i++) {
        long long h = period * i;
        launch(s, 2 * i + 1, h, 7, h + k0, h + k1);
        stream_sync(s, 2 * i + 2, h + s0, h + s1, 7, 1, oh);
    }
    replay_end(s, period * n);
}

/* n steps from t0 (corr from corr0), as loop() without its end record. */
static void steps(stream *s, long long corr0, int n, long long t0, long long period, long long k0,
                  long long k1, long long s0, long long s1)
{
    for (long long i = 0; i < n; i++) {
        long long h = t0 + period * i;
        launch(s, corr0 + 2 * i, h, 7, h + k0, h + k1);
        stream_sync(s, corr0 + 2 * i + 1, h + s0, h + s1, 7, 1, 0);
    }
}

/* The replay's model of p (analyzed), given its calls' classes as savings.c gives them. */
static sb_replay_model *model_of(const sb_audit_proc *p)
{
    const sb_audit_call_info *calls = res_of(p)->calls;
    return sb_replay_build(p, (sb_replay_classes){&calls[0].cls, sizeof *calls});
}

/* The saving (wall us) of removing every blocking call for which pick() holds. */
static sb_replay_result play_removing(const sb_audit_proc *p,
                                      int (*pick)(const sb_audit_call *,
                                                  const sb_audit_call_info *))
{
    sb_replay_model *m = model_of(p);
    assert_non_null(m);
    unsigned char *mask = calloc(p->ncalls + 1, 1);
    assert_non_null(mask);
    for (size_t i = 0; i < p->ncalls; i++)
        mask[i] = pick(&p->calls[i], info_of(p, i)) != 0;
    sb_replay_result r;
    assert_int_equal(sb_replay_run(m, mask, 0, &r), 0);
    free(mask);
    sb_replay_free(m);
    return r;
}

static int every_sync(const sb_audit_call *c, const sb_audit_call_info *ci)
{
    (void)c;
    return sb_audit_blocking(ci->cls);
}

/* The run of stream s analyzed and played with every sync removed (the run freed). */
static sb_replay_result every_sync_removed(stream *s)
{
    sb_audit_run *run = analyzed(s);
    sb_replay_result r = play_removing(run->procs[0], every_sync);
    audit_free(run);
    return r;
}

static int no_call(const sb_audit_call *c, const sb_audit_call_info *ci)
{
    (void)c;
    (void)ci;
    return 0;
}

static void near(double got, double want)
{
    if (fabs(got - want) > 1e-6) {
        print_error("got %.6f, want %.6f\n", got, want);
        fail();
    }
}

/* Nothing removed, no audit time: the replay gives back the recorded run (its span). */
static void identity(void **state)
{
    (void)state;
    stream s;
    begin(&s);
    long long corr = 1;
    for (int i = 0; i < 6; i++) { /* two streams, kernels of uneven lengths, a sync each step */
        long long h = 40 * i;
        launch(&s, corr++, h, 7, h + 5, h + 5 + 3 * i);
        launch(&s, corr++, h + 3, 8, h + 9, h + 20);
        stream_sync(&s, corr++, h + 6, h + 22, 8, 1, 0);
    }
    replay_end(&s, 300);
    sb_audit_run *run = analyzed(&s);
    sb_replay_result r = play_removing(run->procs[0], no_call);
    near(r.wall_us, 0);
    near(r.idle_us, 0);
    near(r.span_us, 222); /* first launch at 0 to the last sync's end at 5 * 40 + 22 */
    audit_free(run);
}

/* A GPU-bound loop: each 100 us kernel starts 5 us after its launch, the host waits for it and
 * wakes 5 us after it ends, works 2 us and launches the next: a step every 112 us. Without the
 * syncs the kernels run back to back (the run has no queued kernel, so the gap is the default
 * 1 us): each step but the last saves 112 - 101 = 11 us, the last the sync's wake-up, 5. */
static void gpu_bound_loop_saves_the_gaps(void **state)
{
    (void)state;
    enum { N = 20 };
    stream s;
    begin(&s);
    loop(&s, N, 112, 5, 105, 3, 110, 0);
    sb_audit_run *run = analyzed(&s);
    const sb_audit_proc *p = run->procs[0];
    sb_replay_result r = play_removing(p, every_sync);
    near(r.wall_us, 11.0 * (N - 1) + 5);
    near(r.idle_us, 11.0 * (N - 1)); /* the GPU's gaps: 12 us each, then 1 */
    near(r.typical_us, 11.0);        /* each window but the last (5, the wake-up): 11 a call */
    near(r.typical_lo_us, 11.0);     /* 19 windows of 11: the median's interval is 11 too */
    near(r.typical_hi_us, 11.0);
    assert_true(r.host_pct < 50);    /* then GPU-bound: only the first kernel waits for a launch */
    assert_string_equal(sb_audit_bound_name(&r), "gpu");
    /* the report's figure is the same play */
    assert_true(res_of(p)->nsavings >= 2 && res_of(p)->savings[0].kind == SB_SAVE_ALL);
    near(res_of(p)->savings[0].r.wall_us, r.wall_us);
    assert_int_equal(res_of(p)->savings[0].calls, N);
    near(res_of(p)->savings[0].blocked_us, 107.0 * N);
    audit_free(run);
}

/* Short GPU work: a 2 us kernel, the host waits 9 us for it (launch latency, kernel, wake-up),
 * then works 20 us. Without the sync the host never waits: each step saves the 9 us it waited;
 * the last step ends with the sync's wake-up after its kernel (5 us), the host's work after it
 * is not recorded. */
static void short_gpu_work_saves_the_wait(void **state)
{
    (void)state;
    enum { N = 10 };
    stream s;
    begin(&s);
    loop(&s, N, 32, 5, 7, 3, 12, 0);
    sb_replay_result r = every_sync_removed(&s);
    near(r.wall_us, 9.0 * (N - 1) + 5);
    near(r.typical_us, 9.0);
    assert_true(r.host_pct > 99); /* every kernel then waits for its launch */
    assert_string_equal(sb_audit_bound_name(&r), "host");
}

/* A saving over the run in the reports' words (report/save_text.c): nothing played is "", no
 * prediction is "unknown" and why (threads before ranks before the GPU window), else the
 * milliseconds. */
static void a_run_saving_in_words(void **state)
{
    (void)state;
    char buf[32];
    sb_audit_run_save s = {.played = 2, .us = 1234.5678};
    assert_string_equal(sb_audit_save_text(s, buf, sizeof buf), "1.235");
    assert_null(sb_audit_unmodelled_why(s));
    s.ranks_unmodelled = 1;
    assert_string_equal(sb_audit_save_text(s, buf, sizeof buf), SB_AUDIT_UNMODELLED);
    assert_string_equal(sb_audit_unmodelled_why(s), "ranks not modelled");
    s.threads_unmodelled = 2;
    assert_string_equal(sb_audit_unmodelled_why(s), "threads not modelled");
    s = (sb_audit_run_save){.us = 0};
    assert_string_equal(sb_audit_save_text(s, buf, sizeof buf), "");
    /* played only by processes with none of its calls in their GPU window: no figure */
    s.outside_window = 1;
    assert_string_equal(sb_audit_unmodelled_why(s), "no call inside the GPU window");
    assert_string_equal(sb_audit_save_text(s, buf, sizeof buf), SB_AUDIT_UNMODELLED);
    s = (sb_audit_run_save){.played = 1, .us = 2000, .outside_window = 1}; /* another has one */
    assert_null(sb_audit_unmodelled_why(s));
    assert_string_equal(sb_audit_save_text(s, buf, sizeof buf), "2.000");
    sb_replay_result r = {.host_pct = 50};
    assert_string_equal(sb_audit_bound_name(&r), "host");
    r.host_pct = 49.9;
    assert_string_equal(sb_audit_bound_name(&r), "gpu");
}

/* A stretch where the host was slow: the short GPU work above, 40 steps, but in steps 20 and 21
 * the sync returns 100 us late (a VM's hiccup: every call recorded then is longer). Removing the
 * syncs saves those 200 us too, in the total, but the typical saving per call is still 9 us: 20
 * windows of two calls, the two slow steps in at most two of them. */
static void a_slow_stretch_moves_the_total_not_the_typical(void **state)
{
    (void)state;
    stream s;
    begin(&s);
    steps(&s, 1, 20, 0, 32, 5, 7, 3, 12);
    steps(&s, 41, 2, 640, 132, 5, 7, 3, 112);
    steps(&s, 45, 18, 904, 32, 5, 7, 3, 12);
    replay_end(&s, 904 + 18 * 32);
    sb_replay_result r = every_sync_removed(&s);
    near(r.wall_us, 9.0 * 39 + 5 + 200);
    near(r.typical_us, 9.0);
    assert_true(r.wall_us / 40 > 13); /* the mean per call: moved by the slow stretch */
    /* the slow windows are the highest two of twenty: past the 15th, out of the interval */
    near(r.typical_lo_us, 9.0);
    near(r.typical_hi_us, 9.0);
}

/* Windows that save unlike amounts: the short GPU work above, 20 steps, but the host's wait
 * grows by 1 us a step (9 to 28 us, the kernel ending later each step), one call a window: each
 * window saves its own wait, so their median comes with an interval as wide as the middle of
 * the twenty (the 6th to the 15th: about 9 us apart). */
static void the_typical_figure_comes_with_its_windows_interval(void **state)
{
    (void)state;
    stream s;
    begin(&s);
    int64_t t = 0;
    for (int i = 0; i < 20; i++) {
        steps(&s, 1 + 2 * i, 1, t, 32 + i, 5, 7 + i, 3, 12 + i);
        t += 32 + i;
    }
    replay_end(&s, t);
    sb_replay_result r = every_sync_removed(&s);
    assert_true(r.typical_lo_us < r.typical_us && r.typical_us < r.typical_hi_us);
    assert_true(r.typical_hi_us - r.typical_lo_us > 7 && r.typical_hi_us - r.typical_lo_us < 11);
}

/* Syncs of an idle GPU: one kernel [5, 7), then ten syncs of its stream, one every 20 us from 20,
 * each 5 us of the host's own time (the GPU long done). Removed, each saves its 5 us: the play
 * reaches each call sooner on the host, the GPU's end stays where it was. */
static void syncs_of_an_idle_gpu_save_their_own_time(void **state)
{
    (void)state;
    stream s;
    begin(&s);
    launch(&s, 1, 0, 7, 5, 7);
    for (long long i = 0; i < 10; i++)
        stream_sync(&s, 2 + i, 20 + 20 * i, 25 + 20 * i, 7, 1, 0);
    replay_end(&s, 300);
    sb_replay_result r = every_sync_removed(&s);
    near(r.wall_us, 50);
    near(r.typical_us, 5); /* reached by the GPU's end alone: 0 */
}

/* Two threads, each the short GPU work above on its own stream (thread 2 launching 16 us after
 * thread 1), their syncs removed: each thread reaches its calls on its own time, so the typical
 * saving per call is the mean (wall / calls), not a median of windows that mix the two. */
static void several_threads_take_the_mean(void **state)
{
    (void)state;
    enum { N = 10 };
    stream s;
    begin(&s);
    for (long long i = 0; i < N; i++)
        for (int t = 1; t <= 2; t++) {
            long long h = 32 * i + 16 * (t - 1), corr = 4 * i + 2 * t;
            launch_by(&s, t, corr - 1, h, h + 2, 6 + t, h + 5, h + 7);
            sync_by(&s, t, corr, h + 3, h + 12, 6 + t, 1, 0);
        }
    replay_end(&s, 32 * N + 16);
    sb_replay_result r = every_sync_removed(&s);
    near(r.wall_us, 9.0 * (N - 1) + 5); /* the threads run side by side: one thread's saving */
    near(r.typical_us, r.wall_us / (2 * N));
    assert_int_equal(r.threads_unmodelled, 1); /* what the threads hand each other: unknown */
}

/* PyTorch's training loop: the main thread (1) launches the forward pass and reads the loss back
 * (its sync), the autograd engine's thread (2) launches the backward pass between them. Removing
 * the main thread's syncs, the engine's launches would move with them, which the model does not
 * know (threads are independent): the figure is flagged, not a confident near-zero; so it is
 * when the other thread's syncs go too (the engine may sync: what removing every sync saves).
 * The same loop whose other thread launches only before the first sync and after the last is
 * not flagged. */
static int main_threads_syncs(const sb_audit_call *c, const sb_audit_call_info *ci)
{
    return c->tid == 1 && sb_audit_blocking(ci->cls);
}

static void two_thread_stream(stream *s, int backward_between)
{
    enum { N = 5 };
    begin(s);
    long long corr = 1, end = 100 * N + 200;
    if (!backward_between)
        launch_by(s, 2, corr++, 2, 4, 7, 5, 9);
    for (long long i = 0; i < N; i++) {
        long long h = 100 + 100 * i;
        launch_by(s, 1, corr++, h, h + 2, 7, h + 5, h + 20); /* forward */
        if (backward_between)
            launch_by(s, 2, corr++, h + 22, h + 24, 7, h + 25, h + 60); /* backward */
        sync_by(s, 1, corr++, h + 62, h + 70, 7, 1, 0);                 /* the loss read back */
    }
    if (!backward_between)
        launch_by(s, 2, corr++, end - 50, end - 48, 7, end - 45, end - 40);
    replay_end(s, end);
}

/* The run of stream s (freed) played without the main thread's syncs. */
static sb_replay_result main_syncs_removed(stream *s)
{
    sb_audit_run *run = analyzed(s);
    sb_replay_result r = play_removing(run->procs[0], main_threads_syncs);
    audit_free(run);
    return r;
}

static sb_replay_result two_thread_loop(int backward_between)
{
    stream s;
    two_thread_stream(&s, backward_between);
    return main_syncs_removed(&s);
}

static void another_threads_launches_between_removed_syncs_are_flagged(void **state)
{
    (void)state;
    assert_int_equal(two_thread_loop(1).threads_unmodelled, 1);
    assert_int_equal(two_thread_loop(0).threads_unmodelled, 0);
    stream t; /* every sync removed (the audit's play of the whole run) */
    two_thread_stream(&t, 1);
    sb_audit_run *run = analyzed(&t);
    assert_int_equal(play_removing(run->procs[0], every_sync).threads_unmodelled, 1);
    audit_free(run);
    stream s; /* one thread: nothing to flag */
    begin(&s);
    loop(&s, 10, 112, 5, 105, 3, 110, 0);
    assert_int_equal(every_sync_removed(&s).threads_unmodelled, 0);
}

/* ---- hand-offs between threads ("wake" records) ---- */

/* The first line of a process whose hand-offs were recorded too (the waits library). */
static void begin_waits(stream *s)
{
    stream_open(s);
    line(s, "{\"t\":\"proc\",\"v\":1,\"pid\":100,\"ppid\":1,\"rank\":-1,\"local_rank\":-1,"
            "\"cmd\":\"app\",\"clock_ns\":0,\"mono_ns\":1000000,\"mode\":\"count\","
            "\"kernels\":1,\"launches\":1,\"waits\":1}");
}

/* Thread tid slept [t0, t1) until thread by's signal at `at`. */
static void wake(stream *s, int tid, long long t0, long long t1, int by, long long at)
{
    line(s,
         "{\"t\":\"wake\",\"tid\":%d,\"start\":%lld,\"end\":%lld,\"by\":%d,\"at\":%lld,"
         "\"obj\":\"cond\"}",
         tid, t0 * US, t1 * US, by, at * US);
}

/* PyTorch's training step, GPU-bound, every 150 us from h = 150 i: the main thread (1) launches
 * the forward pass at h (a 50 us kernel [h+5, h+55)) and hands the backward pass to the autograd
 * engine's thread (2) at h+10, sleeping on its future [h+11, h+17); the engine, asleep since its
 * previous step's hand-back, wakes at h+12, launches the backward at h+13 (60 us, queued: [h+56,
 * h+116)) and hands back at h+16; the main thread launches the optimizer at h+18 (20 us, [h+117,
 * h+137)) and reads the loss back: its sync [h+21, h+140). With `hands` 0 the hand-offs are not
 * in the records. */
static void training_steps(stream *s, int n, int hands)
{
    long long corr = 1;
    for (long long i = 0; i < n; i++) {
        long long h = 150 * i;
        launch_by(s, 1, corr++, h, h + 2, 7, h + 5, h + 55);
        if (hands)
            wake(s, 2, i ? h - 133 : 0, h + 12, 1, h + 10);
        launch_by(s, 2, corr++, h + 13, h + 15, 7, h + 56, h + 116);
        if (hands)
            wake(s, 1, h + 11, h + 17, 2, h + 16);
        launch_by(s, 1, corr++, h + 18, h + 20, 7, h + 117, h + 137);
        sync_by(s, 1, corr++, h + 21, h + 140, 7, 1, 0);
    }
    replay_end(s, 150 * n);
}

/* Without its syncs, each step's kernels queue back to back: 50 + 60 + 20 us and three 1 us gaps,
 * 133 us of GPU time a step instead of 150. The engine's launches move with the main thread
 * (they follow its hand-off), so every step but the first saves 17 us, and the last its 3 us
 * wake-up: 17 (N - 1) + 3. Played as independent threads, the backward passes would stay where
 * they were recorded and the GPU would wait for each (41 us in all): the figure is then flagged,
 * never given as a prediction. */
/* The training loop of N steps played without the main thread's syncs: recorded with the waits
 * library (waits) or not, its hand-offs in the records (hands) or not. */
static sb_replay_result training_play(int n, int waits, int hands)
{
    stream s;
    if (waits)
        begin_waits(&s);
    else
        begin(&s);
    training_steps(&s, n, hands);
    return main_syncs_removed(&s);
}

static void a_backward_pass_handed_to_another_thread_moves_with_it(void **state)
{
    (void)state;
    enum { N = 20 };
    sb_replay_result r = training_play(N, 1, 1);
    assert_int_equal(r.threads_unmodelled, 0);
    near(r.wall_us, 17 * (N - 1) + 3);
    r = training_play(N, 0, 0); /* the same run recorded without its hand-offs: unknown */
    assert_int_equal(r.threads_unmodelled, 1);
    near(r.wall_us, 41);
    /* recorded with the waits library, but no hand-off ties the engine in: unknown */
    assert_int_equal(training_play(N, 1, 0).threads_unmodelled, 1);
}

/* A consumer that waited for its producer: each 100 us step, the main thread sleeps for a batch
 * [h, h+30) that a loader thread (3, no CUDA call of its own, never woken by a recorded
 * hand-off: a source) hands it at h+29, launches a 5 us kernel at h+31 and syncs [h+33, h+50)
 * (the sync waits for nothing: an idle-GPU readback). Whether the loader would hand the batch
 * over sooner when asked sooner is not recorded: the play takes it that it would (it keeps up;
 * a wait keeps its recorded length), so every step's sync is saved, 17 (N - 1) + 9 (the last
 * step then ends with its kernel at h+41); held by the loader (SB_REPLAY_HOLD_BY_PRODUCERS), the
 * main thread is at each batch 17 us sooner but the batch is not, and only the last step's sync
 * is saved: 9 us, the loader holding it back at N - 1 waits. A loader woken by the main thread
 * (it asks for each batch: a recorded hand-off) is no source: its hand-offs move with the main
 * thread's requests, so the saving is the full one, nothing flagged as a producer. */
static void loader_steps(stream *s, int n, int asked)
{
    long long corr = 1;
    for (long long i = 0; i < n; i++) {
        long long h = 100 * i;
        if (asked)
            wake(s, 3, i ? h - 80 : 0, h + 1, 1, h);
        wake(s, 1, h, h + 30, 3, h + 29);
        launch_by(s, 1, corr++, h + 31, h + 33, 7, h + 36, h + 41);
        sync_by(s, 1, corr++, h + 33, h + 50, 7, 1, 0);
    }
    replay_end(s, 100 * n);
}

static sb_replay_result loader_play(int asked, int flags)
{
    enum { N = 10 };
    stream s;
    begin_waits(&s);
    loader_steps(&s, N, asked);
    sb_audit_run *run = analyzed(&s);
    sb_replay_model *m = model_of(run->procs[0]);
    assert_non_null(m);
    unsigned char mask[2 * N];
    for (size_t i = 0; i < run->procs[0]->ncalls; i++)
        mask[i] = sb_audit_blocking(info_of(run->procs[0], i)->cls);
    sb_replay_result r;
    assert_int_equal(sb_replay_run(m, mask, flags, &r), 0);
    sb_replay_free(m);
    audit_free(run);
    return r;
}

static void a_producer_the_audit_cannot_see_gives_two_figures(void **state)
{
    (void)state;
    enum { N = 10 };
    sb_replay_result keeps_up = loader_play(0, 0);
    near(keeps_up.wall_us, 17 * (N - 1) + 9);
    assert_int_equal(keeps_up.producers, 1);
    assert_int_equal(keeps_up.threads_unmodelled, 0);
    sb_replay_result held = loader_play(0, SB_REPLAY_HOLD_BY_PRODUCERS);
    near(held.wall_us, 9);
    assert_int_equal(held.producer_holds, N - 1);
    sb_replay_result asked = loader_play(1, SB_REPLAY_HOLD_BY_PRODUCERS);
    near(asked.wall_us, 17 * (N - 1) + 9);
    assert_int_equal(asked.producers, 0);
    assert_int_equal(asked.producer_holds, 0);
}

/* A wait inside a recorded call of the waiting thread is the call's own (a driver's thread waking
 * a blocking sync): the model plays the call, the "hand-off" from a thread that never moves must
 * not hold the host back. The GPU-bound loop of gpu_bound_loop_saves_the_gaps with such a wake
 * inside every sync saves what it saves without. */
static void a_wait_inside_a_call_is_the_calls_own(void **state)
{
    (void)state;
    enum { N = 10 };
    stream s, t;
    begin_waits(&s);
    begin(&t);
    for (long long i = 0; i < N; i++) {
        long long h = 112 * i;
        launch(&s, 2 * i + 1, h, 7, h + 5, h + 105);
        launch(&t, 2 * i + 1, h, 7, h + 5, h + 105);
        wake(&s, 1, h + 4, h + 109, 9, h + 108);
        stream_sync(&s, 2 * i + 2, h + 3, h + 110, 7, 1, 0);
        stream_sync(&t, 2 * i + 2, h + 3, h + 110, 7, 1, 0);
    }
    replay_end(&s, 112 * N);
    replay_end(&t, 112 * N);
    sb_replay_result with = every_sync_removed(&s), without = every_sync_removed(&t);
    near(with.wall_us, without.wall_us);
    assert_true(without.wall_us > 50);
}

/* Recording turns: two recorded stretches of the GPU-bound loop above with the recording off
 * for 500 us between them (a "pause" record: an unrecorded repetition). Without the syncs the
 * host finishes the first stretch's launches early, but the unrecorded stretch begins only once
 * the GPU has run them (what it did is unknown; a repetition ends with its work done): each
 * stretch saves its gaps, 11 us a step, and the first one the host's 2 us after its last sync
 * (then overlapped) too, not the time the host ran ahead. The pause holds the whole process:
 * the same when the thread that switched the recording made no recorded call (tid 99). */
static void an_unrecorded_stretch_waits_for_the_recorded_work(void **state)
{
    (void)state;
    enum { N = 10 };
    const long long gap_start = 112 * N, second = gap_start + 500;
    for (int tid = 1; tid <= 99; tid += 98) {
        stream s;
        begin(&s);
        steps(&s, 1, N, 0, 112, 5, 105, 3, 110);
        line(&s, "{\"t\":\"pause\",\"tid\":%d,\"start\":%lld,\"end\":%lld}", tid, gap_start * US,
             second * US);
        steps(&s, 1 + 2 * N, N, second, 112, 5, 105, 3, 110);
        replay_end(&s, second + 112 * N);
        sb_audit_run *run = analyzed(&s);
        const sb_audit_proc *p = run->procs[0];
        assert_int_equal(p->npauses, 1);
        assert_int_equal(res_of(p)->replay->unrecorded, 1);
        near(play_removing(p, every_sync).wall_us, (11.0 * (N - 1) + 7) + (11.0 * (N - 1) + 5));
        /* nothing removed: the recorded run, first launch to the last sync's end */
        near(play_removing(p, no_call).span_us, second + 112.0 * (N - 1) + 110);
        audit_free(run);
    }
}

static int first_site(const sb_audit_call *c, const sb_audit_call_info *ci)
{
    (void)ci;
    return c->stack == 1;
}

/* The recording went off while the GPU still ran a 300 us kernel launched without a sync: the
 * unrecorded stretch waits for the GPU's work only as far as it was done then, so nothing
 * removed still gives back the recorded run, and removing the one sync before it saves its
 * wait. */
static void a_pause_that_began_with_the_gpu_busy(void **state)
{
    (void)state;
    stream s;
    begin(&s);
    launch(&s, 1, 0, 7, 5, 105);
    stream_sync(&s, 2, 3, 110, 7, 1, 0);
    launch(&s, 3, 112, 7, 117, 417); /* runs 257 us into the pause */
    line(&s, "{\"t\":\"pause\",\"tid\":1,\"start\":%lld,\"end\":%lld}", 160 * US, 700 * US);
    launch(&s, 4, 700, 7, 705, 715);
    stream_sync(&s, 5, 703, 720, 7, 2, 0);
    replay_end(&s, 800);
    sb_audit_run *run = analyzed(&s);
    const sb_audit_proc *p = run->procs[0];
    near(play_removing(p, no_call).span_us, 720);
    near(play_removing(p, no_call).wall_us, 0);
    /* without the first sync the long kernel queues behind the first: [106, 406), 11 us
     * earlier; the stretch begins when the GPU is as far as it was at the switch, 11 us
     * earlier too, and so does all that follows (not the 107 us the host gained) */
    near(play_removing(p, first_site).wall_us, 11);
    audit_free(run);
}

/* One sync waits for a kernel (it blocks 104 us), then the host works 300 us with the GPU idle
 * (the bubble the old "could save" summed: 310 us) before the next kernel and a final sync.
 * Removed, the host's work overlaps the kernel: it saves the 104 us the sync blocked, not the
 * bubble. */
static void sync_before_long_host_work_saves_the_overlap(void **state)
{
    (void)state;
    stream s;
    begin(&s);
    launch(&s, 1, 0, 7, 5, 105);
    stream_sync(&s, 2, 6, 110, 7, 1, 0);
    launch(&s, 3, 410, 7, 415, 425);
    stream_sync(&s, 4, 413, 430, 7, 2, 0);
    replay_end(&s, 500);
    sb_audit_run *run = analyzed(&s);
    const sb_audit_proc *p = run->procs[0];
    assert_int_equal(info_of(p, 0)->bubble_ns, 310 * US);
    sb_replay_result r = play_removing(p, first_site);
    near(r.wall_us, 104);
    near(r.typical_us, 104); /* one call: one window, to the run's end */
    /* the same from the per-site plays: the first site, alone */
    const sb_audit_saving *site = NULL;
    for (size_t i = 0; i < res_of(p)->nsavings; i++)
        if (res_of(p)->savings[i].kind == SB_SAVE_SITE &&
            strstr(res_of(p)->savings[i].key, "site1"))
            site = &res_of(p)->savings[i];
    assert_non_null(site);
    near(site->r.wall_us, 104);
    assert_int_equal(site->calls, 1);
    audit_free(run);
}

/* A 200 us kernel on stream 7 [5, 205) (launch corr 1), an event recorded after it (corr 2) and
 * stream 8 made to wait for it (cudaStreamWaitEvent, corr 3). */
static void stream8_waits_for_stream7(stream *s)
{
    launch(s, 1, 0, 7, 5, 205);
    line(s, "{\"t\":\"event\",\"ctx\":1,\"stream\":7,\"corr\":2,\"sync_id\":9}");
    line(s, "{\"t\":\"sync\",\"type\":\"wait\",\"ctx\":1,\"stream\":8,\"corr\":3,"
            "\"sync_id\":9,\"start\":0,\"end\":0}");
}

/* Stream 8 waits (cudaStreamWaitEvent) for an event recorded on stream 7 after a 200 us kernel;
 * removing the host's sync after the first launch moves the second launch earlier, but its
 * kernel still starts after the event's work: it saves nothing of the GPU's order. */
static void event_orders_streams(void **state)
{
    (void)state;
    stream s;
    begin(&s);
    stream8_waits_for_stream7(&s);
    stream_sync(&s, 4, 4, 50, 8, 1, 0); /* nothing on stream 8 yet: 46 us of host time */
    launch(&s, 5, 60, 8, 206, 216);     /* waits for the event: starts at 206 */
    stream_sync(&s, 6, 63, 221, 8, 2, 0);
    replay_end(&s, 300);
    sb_audit_run *run = analyzed(&s);
    sb_replay_result r = play_removing(run->procs[0], first_site);
    /* the second kernel still starts at 206 (the event), the last sync still ends at 221 */
    near(r.wall_us, 0);
    audit_free(run);
}

/* The audit's own time after each call (oh: its stacks, taken on the way out) is taken out of
 * the host's timeline after the call, in every play: the host reaches its next call that much
 * earlier. A loop whose syncs carry 4 us of audit time each is predicted 4 us a step shorter
 * with nothing removed (the baseline every saving is taken from; the last sync's time comes
 * after the run's last activity); removing the syncs then saves their own 2 us a step. The same
 * holds when the syncs wait for the GPU: the next launch, and so the next kernel, is earlier. */
static void audit_time_is_taken_out(void **state)
{
    (void)state;
    enum { N = 10 };
    stream s;
    begin(&s);
    loop(&s, N, 40, 5, 7, 20, 22, 4);
    sb_audit_run *run = analyzed(&s);
    const sb_audit_proc *p = run->procs[0];
    sb_replay_result none = play_removing(p, no_call);
    near(none.wall_us, 0);                           /* against the baseline: nothing saved */
    near(none.span_us, 40.0 * N - 18 - 4 * (N - 1)); /* recorded 382 us */
    near(res_of(p)->replay->audit_overhead_us, 4.0 * N);
    sb_replay_result all = play_removing(p, every_sync);
    near(all.wall_us, 2.0 * N);
    audit_free(run);

    /* syncs that wait: [3, 12) after the launch, for the kernel [5, 7) */
    begin(&s);
    loop(&s, N, 40, 5, 7, 3, 12, 4);
    run = analyzed(&s);
    none = play_removing(run->procs[0], no_call);
    near(none.span_us, 40.0 * (N - 1) + 12 - 4 * (N - 1));
    audit_free(run);
}

/* A 4-byte cudaMemcpyAsync into pinned memory on stream 7, its call [t0, t1), its copy
 * [c0, c0 + 1). */
static void readback(stream *s, long long corr, long long t0, long long t1, long long c0)
{
    line(s,
         "{\"t\":\"call\",\"api\":\"cudaMemcpyAsync_v3020\",\"dom\":\"rt\",\"tid\":1,\"ctx\":1,"
         "\"corr\":%lld,\"start\":%lld,\"end\":%lld,\"oh\":0,\"ranges\":[],\"stack\":-1,"
         "\"copy\":\"DtoH\",\"host\":\"pinned\"}",
         corr, t0 * US, t1 * US);
    line(s,
         "{\"t\":\"copy\",\"dev\":0,\"ctx\":1,\"stream\":7,\"corr\":%lld,\"rcorr\":%lld,"
         "\"start\":%lld,\"end\":%lld,\"bytes\":4,\"kind\":\"DtoH\",\"src\":\"device\","
         "\"dst\":\"pinned\"}",
         corr, corr, c0 * US, (c0 + 1) * US);
}

/* .item(): a launch, a 4-byte cudaMemcpyAsync into pinned memory [t+3, t+5) whose copy runs
 * [c0, c0 + 1), then the stream sync [s0, s1). */
static void item_step(stream *s, long long corr, long long t, long long k0, long long k1,
                      long long c0, long long s0, long long s1)
{
    launch(s, corr, t, 7, k0, k1);
    readback(s, corr + 1, t + 3, t + 5, c0);
    stream_sync(s, corr + 2, s0, s1, 7, 1, 0);
}

/* The facts the model took from p's run. */
static sb_replay_facts facts_of(const sb_audit_proc *p)
{
    sb_replay_facts f;
    sb_replay_model *m = model_of(p);
    assert_non_null(m);
    sb_replay_facts_of(m, &f);
    sb_replay_free(m);
    return f;
}

/* A copy queued behind a kernel waits on its engine longer when it reached the GPU before the
 * kernel ended (an H100: about 8 us after the end, against 1.4 when it came later). Steps of
 * 40 us: a launch [0, 2) whose kernel runs [5, 15) (fetch: 3 us from the launch call's end),
 * a readback and its sync. The first `early` steps' copy call is [6, 8): its copy reached the
 * GPU first and starts 8 us after the kernel, at 23, the sync returning at 25. In the others
 * the recording kept the copy call until 14: its copy came late and started 1 us after the
 * kernel, the sync returning at 18. Without the recording the replay takes a launch call's work
 * as submitted at its start: every copy arrives first, and each late step is 7 us longer. With
 * fewer than three copies that arrived first the run tells nothing: the gap (1 us) for all. */
static void a_copy_that_arrived_first_waits_for_its_engine(void **state)
{
    (void)state;
    enum { N = 8 };
    for (int early = 3; early >= 2; early--) {
        stream s;
        begin(&s);
        for (long long i = 0; i < N; i++) {
            long long h = 40 * i, c = 3 * i + 1;
            int first = i < early;
            launch(&s, c, h, 7, h + 5, h + 15);
            long long c0 = h + (first ? 23 : 16);
            readback(&s, c + 1, h + 6, h + (first ? 8 : 14), c0);
            stream_sync(&s, c + 2, h + (first ? 8 : 14), c0 + 2, 7, 1, 0);
        }
        replay_end(&s, 40 * N);
        sb_audit_run *run = analyzed(&s);
        const sb_audit_proc *p = run->procs[0];
        sb_replay_facts f = facts_of(p);
        near(f.fetch_us, 3);
        near(f.gap_us, 1);
        near(f.copy_behind_kernel_us, early >= 3 ? 8 : 1);
        sb_replay_result none = play_removing(p, no_call);
        near(none.span_us, 40.0 * (N - 1) + 18 + (early >= 3 ? 7.0 * (N - early) : 0));
        audit_free(run);
    }
}

/* Only a copy behind a kernel waits for its engine. Steps of 40 us: kernel 1 [5, 15) launched at
 * [0, 2); kernel 2 queued behind it, started 1 us after it, [16, 20): in the first three steps
 * its call [3, 13) came late (13 + 3 us of fetch), in the others [3, 5) first. Then the
 * readback: its call [13, 15) in the first three steps (it came first: started 8 us after
 * kernel 2, at 28), [13, 19) in the others (late: at 21); the sync returns 1 us after the copy.
 * The learned wait is the copies' 8 us, not the five early kernels' 1; in the replay every
 * kernel 2 comes first (its call's start) but keeps the gap, and only the five late copies start
 * 7 us later. */
static void only_a_copy_behind_a_kernel_waits_for_its_engine(void **state)
{
    (void)state;
    enum { N = 8, EARLY = 3 };
    stream s;
    begin(&s);
    for (long long i = 0; i < N; i++) {
        long long h = 40 * i, c = 4 * i + 1;
        int first = i < EARLY;
        launch(&s, c, h, 7, h + 5, h + 15);
        launch_call(&s, c + 1, h + 3, h + (first ? 13 : 5), 7, h + 16, h + 20);
        long long c0 = h + (first ? 28 : 21);
        readback(&s, c + 2, h + 13, h + (first ? 15 : 19), c0);
        stream_sync(&s, c + 3, h + (first ? 15 : 19), c0 + 2, 7, 1, 0);
    }
    replay_end(&s, 40 * N);
    sb_audit_run *run = analyzed(&s);
    const sb_audit_proc *p = run->procs[0];
    sb_replay_facts f = facts_of(p);
    near(f.copy_behind_kernel_us, 8);
    near(f.gap_us, 1);
    sb_replay_result none = play_removing(p, no_call);
    near(none.span_us, 40.0 * (N - 1) + 23 + 7.0 * (N - EARLY));
    audit_free(run);
}

/* A sync takes with it the readback it makes visible: removed, each step of a loop whose host
 * work is 30 us (launch 2 us, copy call 2 us, sync 8 us waiting for kernel and copy, 18 us
 * more) saves the sync's 8 us and the copy call's 2 us; with the readbacks kept (made async)
 * only the 8 us. The copy is never waited for: an async copy into pinned memory is not a
 * blocking call (no "waited" class, even when the GPU goes idle inside it). */
static void readbacks_go_with_their_sync(void **state)
{
    (void)state;
    enum { N = 10 };
    stream s;
    begin(&s);
    for (long long i = 0; i < N; i++) {
        long long h = 30 * i;
        item_step(&s, 3 * i + 1, h, h + 2, h + 4, h + 5, h + 5, h + 13);
    }
    replay_end(&s, 30 * N);
    sb_audit_run *run = analyzed(&s);
    const sb_audit_proc *p = run->procs[0];
    assert_int_equal(res_of(p)->counts[SB_AUDIT_NONE], N);
    assert_int_equal(res_of(p)->counts[SB_AUDIT_WAITED], 0);
    const sb_audit_saving *all = &res_of(p)->savings[0];
    /* the last step ends with its kernel (at 4 us, not with the sync at 13): 9 us; kept, with
     * its copy (at 6 us): 7 us */
    near(all->r.wall_us, 10.0 * (N - 1) + 9);
    near(all->kept.wall_us, 8.0 * (N - 1) + 7);
    audit_free(run);
}

/* cudaMalloc at t, a kernel, cudaFree at t+20 (30 us, it waits for the kernel); pointer pairs
 * them. Removing the frees removes the allocations too (allocate once): 10 + 30 us a step. */
/* n steps of 100 us: a cudaMalloc [0, 10), a launch at 12 (its kernel [15, 17)), the cudaFree
 * of the allocation [20, 50) (at free_site), which syncs. */
static void alloc_loop(stream *s, int n)
{
    for (long long i = 0; i < n; i++) {
        long long h = 100 * i, c = 3 * i + 1;
        line(s,
             "{\"t\":\"call\",\"api\":\"cudaMalloc_v3020\",\"dom\":\"rt\",\"tid\":1,\"ctx\":1,"
             "\"corr\":%lld,\"start\":%lld,\"end\":%lld,\"oh\":0,\"ranges\":[],\"stack\":-1,"
             "\"ptr\":%lld}",
             c, h * US, (h + 10) * US, 4096 + 512 * i);
        launch(s, c + 1, h + 12, 7, h + 15, h + 17);
        line(s, "{\"t\":\"stack\",\"id\":5,\"frames\":[[\"/app\",\"free_site\",8,0]]}");
        line(s,
             "{\"t\":\"call\",\"api\":\"cudaFree_v3020\",\"dom\":\"rt\",\"tid\":1,\"ctx\":1,"
             "\"corr\":%lld,\"start\":%lld,\"end\":%lld,\"oh\":0,\"ranges\":[],\"stack\":5,"
             "\"ptr\":%lld}",
             c + 2, (h + 20) * US, (h + 50) * US, 4096 + 512 * i);
    }
    replay_end(s, 100 * n);
}

static void a_free_takes_its_allocation(void **state)
{
    (void)state;
    enum { N = 5 };
    stream s;
    begin(&s);
    alloc_loop(&s, N);
    sb_replay_result r = every_sync_removed(&s);
    near(r.wall_us, 40.0 * N);
}

/* The legacy default stream (CUPTI's stream record "null", id 7) waits for the work of a
 * stream created blocking (8): a blocking cudaMemcpy's copy on stream 7 starts after stream 8's
 * 100 us kernel. Removing a 50 us sync before the copy (of stream 9, empty) moves the copy's
 * call 50 us earlier, but not the copy: nothing is saved. Without the stream records the copy
 * would move too, and the run would end with the kernel (5 us earlier). */
static void legacy_stream_waits_for_blocking_streams(void **state)
{
    (void)state;
    for (int records = 1; records >= 0; records--) {
        stream s;
        begin(&s);
        if (records) {
            line(&s, "{\"t\":\"gstream\",\"ctx\":1,\"stream\":7,\"flag\":\"null\"}");
            line(&s, "{\"t\":\"gstream\",\"ctx\":1,\"stream\":8,\"flag\":\"blocking\"}");
        }
        launch(&s, 1, 0, 8, 5, 105);
        stream_sync(&s, 2, 4, 54, 9, 1, 0);
        line(&s,
             "{\"t\":\"call\",\"api\":\"cudaMemcpy_v3020\",\"dom\":\"rt\",\"tid\":1,\"ctx\":1,"
             "\"corr\":3,\"start\":%lld,\"end\":%lld,\"oh\":0,\"ranges\":[],\"stack\":-1,"
             "\"copy\":\"HtoD\",\"host\":\"pinned\"}",
             60 * US, 110 * US);
        line(&s,
             "{\"t\":\"copy\",\"dev\":0,\"ctx\":1,\"stream\":7,\"corr\":3,\"rcorr\":3,"
             "\"start\":%lld,\"end\":%lld,\"bytes\":4,\"kind\":\"HtoD\",\"src\":\"pinned\","
             "\"dst\":\"device\"}",
             106 * US, 108 * US);
        replay_end(&s, 120);
        sb_audit_run *run = analyzed(&s);
        const sb_audit_proc *p = run->procs[0];
        assert_int_equal(p->ngstreams, records ? 2 : 0);
        sb_replay_result r = play_removing(p, first_site);
        near(r.wall_us, records ? 0 : 5); /* without: the run ends with the kernel, at 105 */
        audit_free(run);
    }
}

/* The run of stream s, written to tmpdir beside a calibration.json holding `calibration`,
 * loaded and analyzed as `syncbench audit` would. */
static sb_audit_run *calibrated(stream *s, const char *calibration)
{
    char path[256];
    snprintf(path, sizeof path, "%s/calibration.json", tmpdir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(calibration, f);
    fclose(f);
    fclose(s->f);
    snprintf(path, sizeof path, "%s/proc-100.jsonl", tmpdir);
    f = fopen(path, "w");
    assert_non_null(f);
    fwrite(s->text, 1, s->len, f);
    fclose(f);
    free(s->text);
    sb_audit_run *run;
    assert_int_equal(sb_audit_load_dir(tmpdir, &run), 0);
    analyze_default(run);
    return run;
}

/* The calibration (calibration.json beside the records) says what recording added to each
 * launch: 3 us here, taken out before each of the loop's launches; a file that is no
 * measurement (recorded below plain) takes nothing out. */
static void calibration_takes_out_the_launch_cost(void **state)
{
    (void)state;
    enum { N = 10 };
    /* recording added 3 us to a launch and 2 us to a call beside its own 0.5 us "oh"; then the
     * same inverted (nothing to take out); then a file of the earlier form (its launch pair) */
    static const char *const files[] = {
        "{\"launch_plain_ns\":4000,\"launch_recorded_ns\":7000,\"call_plain_ns\":1000,"
        "\"call_recorded_ns\":3500,\"call_oh_ns\":500}",
        "{\"launch_plain_ns\":7000,\"launch_recorded_ns\":4000,\"call_plain_ns\":3500,"
        "\"call_recorded_ns\":1000,\"call_oh_ns\":500}",
        "{\"launch_plain_ns\":4000,\"launch_recorded_ns\":7000}",
    };
    for (int k = 0; k < 3; k++) {
        stream s;
        begin(&s);
        loop(&s, N, 40, 5, 7, 20, 22, 0);
        sb_audit_run *run = calibrated(&s, files[k]);
        const sb_audit_proc *p = run->procs[0];
        double launch = k == 1 ? 0 : 3, call = k == 0 ? 2 : 0;
        assert_int_equal(p->launch_extra_ns, launch * 1000);
        assert_int_equal(p->call_extra_ns, call * 1000);
        assert_int_equal(p->start_extra_ns, 0); /* no round trip in these files */
        near(res_of(p)->replay->launch_extra_us, launch);
        near(res_of(p)->replay->call_extra_us, call);
        sb_replay_result none = play_removing(p, no_call);
        /* every launch 3 us sooner, and everything after each of the first N - 1 syncs 2 us */
        near(none.span_us, 40.0 * N - 18 - launch * N - call * (N - 1));
        audit_free(run);
    }
}

/* The round trip: recording added 2.5 us to a launch-then-sync beyond the launch's (nothing) and
 * the call's (its 0.5 us "oh"), so 2 us to the GPU's start of launched work. In the GPU-bound
 * loop (gpu_bound_loop_saves_the_gaps) each kernel the host launched after a sync then starts
 * 2 us sooner without the recording: each of the N - 1 gaps a removed sync closes is 2 us
 * shorter, and so is the saving; the last step's is the sync's wake-up, as before. */
static void calibration_takes_out_the_start_cost(void **state)
{
    (void)state;
    enum { N = 20 };
    stream s;
    begin(&s);
    loop(&s, N, 112, 5, 105, 3, 110, 0);
    sb_audit_run *run = calibrated(&s, "{\"launch_plain_ns\":4000,\"launch_recorded_ns\":4000,"
                                       "\"call_plain_ns\":1000,\"call_recorded_ns\":1500,"
                                       "\"call_oh_ns\":500,\"trip_plain_ns\":10000,"
                                       "\"trip_recorded_ns\":12500}");
    const sb_audit_proc *p = run->procs[0];
    assert_int_equal(p->start_extra_ns, 2000);
    near(res_of(p)->replay->start_extra_us, 2);
    sb_replay_result r = play_removing(p, every_sync);
    near(r.wall_us, (11.0 - 2) * (N - 1) + 5);
    audit_free(run);
}

/* An allocation's own figure: recording added 10 us to a cudaMalloc and cudaFree pair beside
 * their 2 us of "oh", so 4 us to each, in place of a sync's 0.5 us. The run without the
 * recording (nothing removed) is 4 us shorter after each of the 2N calls but the last. */
static void calibration_takes_out_an_allocations_cost(void **state)
{
    (void)state;
    enum { N = 5 };
    stream s;
    begin(&s);
    alloc_loop(&s, N);
    sb_audit_run *run = calibrated(&s, "{\"alloc_plain_ns\":40000,\"alloc_recorded_ns\":50000,"
                                       "\"alloc_oh_ns\":2000,\"call_plain_ns\":1000,"
                                       "\"call_recorded_ns\":2000,\"call_oh_ns\":500}");
    const sb_audit_proc *p = run->procs[0];
    assert_int_equal(p->alloc_extra_ns, 4000);
    assert_int_equal(p->call_extra_ns, 500); /* a sync's, not taken out after an allocation */
    near(res_of(p)->replay->alloc_extra_us, 4);
    sb_replay_result none = play_removing(p, no_call);
    near(none.span_us, 100.0 * (N - 1) + 50 - 4 * (2 * N - 1));
    audit_free(run);
}

/* A readback's own figure: its round trip took 3 us more recorded than plain, beyond the plain
 * trip's 0.5 us (the sync's "oh") and its copy call's 0.5 us "oh": 2 us. Each step's copy
 * started 3 us after its kernel ended and its sync waited for it: without the recording it
 * starts 2 us sooner, and so every later step (the run 2 us shorter a step); 5 us sooner
 * would start it before its kernel ends: it starts at that end, 3 us sooner. */
static void calibration_takes_out_a_readbacks_cost(void **state)
{
    (void)state;
    enum { N = 8 };
    static const char *const files[] = {
        "{\"launch_plain_ns\":4000,\"launch_recorded_ns\":4000,\"call_plain_ns\":1000,"
        "\"call_recorded_ns\":1500,\"call_oh_ns\":500,\"trip_plain_ns\":10000,"
        "\"trip_recorded_ns\":10500,\"copy_plain_ns\":12000,\"copy_recorded_ns\":15000,"
        "\"copy_oh_ns\":500}",
        "{\"launch_plain_ns\":4000,\"launch_recorded_ns\":4000,\"call_plain_ns\":1000,"
        "\"call_recorded_ns\":1500,\"call_oh_ns\":500,\"trip_plain_ns\":10000,"
        "\"trip_recorded_ns\":10500,\"copy_plain_ns\":12000,\"copy_recorded_ns\":18000,"
        "\"copy_oh_ns\":500}",
    };
    for (int k = 0; k < 2; k++) {
        stream s;
        begin(&s);
        for (long long i = 0; i < N; i++) {
            long long h = 40 * i;
            item_step(&s, 3 * i + 1, h, h + 5, h + 15, h + 18, h + 6, h + 22);
        }
        replay_end(&s, 40 * N);
        sb_audit_run *run = calibrated(&s, files[k]);
        const sb_audit_proc *p = run->procs[0];
        assert_int_equal(p->start_extra_ns, 0);
        assert_int_equal(p->copy_extra_ns, k ? 5000 : 2000);
        sb_replay_result none = play_removing(p, no_call);
        near(none.span_us, 40.0 * (N - 1) + 22 - (k ? 3 : 2) * N);
        audit_free(run);
    }
}

/* A readback's sooner start never passes what its stream waits for: stream 8 waits (an event)
 * for a 200 us kernel on stream 7, then reads back [206, 207) and syncs. With a readback figure
 * of 5 us the copy starts at the kernel's end, 205, not at 201: the run 1 us shorter, not 5. */
static void a_readback_waits_for_its_streams_event(void **state)
{
    (void)state;
    stream s;
    begin(&s);
    stream8_waits_for_stream7(&s);
    line(&s,
         "{\"t\":\"call\",\"api\":\"cudaMemcpyAsync_v3020\",\"dom\":\"rt\",\"tid\":1,\"ctx\":1,"
         "\"corr\":4,\"start\":%lld,\"end\":%lld,\"oh\":0,\"ranges\":[],\"stack\":-1,"
         "\"copy\":\"DtoH\",\"host\":\"pinned\"}",
         60 * US, 62 * US);
    line(&s,
         "{\"t\":\"copy\",\"dev\":0,\"ctx\":1,\"stream\":8,\"corr\":4,\"rcorr\":4,"
         "\"start\":%lld,\"end\":%lld,\"bytes\":4,\"kind\":\"DtoH\",\"src\":\"device\","
         "\"dst\":\"pinned\"}",
         206 * US, 207 * US);
    stream_sync(&s, 5, 63, 210, 8, 1, 0);
    replay_end(&s, 300);
    sb_audit_run *run = calibrated(&s, "{\"launch_plain_ns\":4000,\"launch_recorded_ns\":4000,"
                                       "\"call_plain_ns\":1000,\"call_recorded_ns\":1500,"
                                       "\"call_oh_ns\":500,\"trip_plain_ns\":10000,"
                                       "\"trip_recorded_ns\":10000,\"copy_plain_ns\":12000,"
                                       "\"copy_recorded_ns\":17500,\"copy_oh_ns\":500}");
    const sb_audit_proc *p = run->procs[0];
    assert_int_equal(p->copy_extra_ns, 5000);
    sb_replay_result none = play_removing(p, no_call);
    near(none.span_us, 210 - 1);
    audit_free(run);
}

/* Every figure from one file whose every field counts: launch 1 us; call 2000 - 1000 - 400 =
 * 0.6 us; start (12000 - 9000) - 1000 - (2000 - 1000) = 1 us; allocation ((30000 - 20000) -
 * 4000) / 2 = 3 us; readback (17000 - 12000) - (12000 - 9000) - 300 - 600 = 1.1 us. A launch
 * or call figure below zero counts as zero in the others (what the replay takes out); a file
 * without an allocation's figures takes the call's for an allocation. */
static void calibration_figures_from_every_field(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        long long launch, call, start, alloc, copy;
    } cases[] = {
        {"{\"launch_plain_ns\":4000,\"launch_recorded_ns\":5000,\"call_plain_ns\":1000,"
         "\"call_recorded_ns\":2000,\"call_oh_ns\":400,\"trip_plain_ns\":9000,"
         "\"trip_recorded_ns\":12000,\"alloc_plain_ns\":20000,\"alloc_recorded_ns\":30000,"
         "\"alloc_oh_ns\":4000,\"copy_plain_ns\":12000,\"copy_recorded_ns\":17000,"
         "\"copy_oh_ns\":300}",
         1000, 600, 1000, 3000, 1100},
        /* launch -1 us and call -0.5 us: both 0 in start and readback */
        {"{\"launch_plain_ns\":5000,\"launch_recorded_ns\":4000,\"call_plain_ns\":1000,"
         "\"call_recorded_ns\":1100,\"call_oh_ns\":600,\"trip_plain_ns\":9000,"
         "\"trip_recorded_ns\":12000,\"copy_plain_ns\":12000,\"copy_recorded_ns\":17000,"
         "\"copy_oh_ns\":300}",
         0, 0, 3000 - 600, 0, 5000 - 3000 - 300},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        stream s;
        begin(&s);
        loop(&s, 2, 40, 5, 7, 20, 22, 0);
        sb_audit_run *run = calibrated(&s, cases[k].file);
        const sb_audit_proc *p = run->procs[0];
        assert_int_equal(p->launch_extra_ns, cases[k].launch);
        assert_int_equal(p->call_extra_ns, cases[k].call);
        assert_int_equal(p->start_extra_ns, cases[k].start);
        assert_int_equal(p->alloc_extra_ns, cases[k].alloc ? cases[k].alloc : cases[k].call);
        assert_int_equal(p->copy_extra_ns, cases[k].copy);
        audit_free(run);
    }
}

/* The calibration's own records: the median "oh" of its syncs, its allocation's two calls (by
 * base name: cudaMallocHost is not cudaMalloc) and its readback's copy; -1 for a call it lacks. */
static void calibration_records_give_the_median_oh(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/proc-7.jsonl", tmpdir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    static const struct {
        const char *api;
        int oh;
    } calls[] = {{"cudaStreamSynchronize_v3020", 300},
                 {"cudaStreamSynchronize_v3020", 100},
                 {"cudaStreamSynchronize_ptsz", 200},
                 {"cudaMalloc_v3020", 900},
                 {"cudaMallocHost_v3020", 5},
                 {"cudaFree_v3020", 700},
                 {"cudaFreeHost_v3020", 5}};
    for (size_t i = 0; i < sizeof calls / sizeof *calls; i++)
        fprintf(f,
                "{\"t\":\"call\",\"api\":\"%s\",\"dom\":\"rt\",\"tid\":1,\"ctx\":1,"
                "\"corr\":%zu,\"start\":0,\"end\":1,\"oh\":%d,\"ranges\":[],\"stack\":-1}\n",
                calls[i].api, i + 1, calls[i].oh);
    fclose(f);
    double oh[SB_OH_N];
    sb_audit_median_ohs(path, oh);
    near(oh[SB_OH_SYNC], 200);
    near(oh[SB_OH_MALLOC], 900);
    near(oh[SB_OH_FREE], 700);
    near(oh[SB_OH_COPY], -1);
    unlink(path);
}

/* The reports carry the prediction: the table's line, the JSON's "predicted" with sites,
 * classes and the model, the CSV's site_save_us; "could save" is gone. */
static void reports_show_the_prediction(void **state)
{
    (void)state;
    stream s;
    begin(&s);
    loop(&s, 4, 112, 5, 105, 3, 110, 0);
    sb_audit_run *run = analyzed(&s);
    char *text = table_text(run);
    assert_non_null(strstr(text, "removing all 4 syncs would save 0.038 ms of wall time"));
    assert_non_null(strstr(text, "then gpu-bound"));
    assert_null(strstr(text, "could save"));
    free(text);
    text = csv_text(run);
    assert_non_null(strstr(text, ",native_site,site_save_us,via_file,"));
    assert_non_null(
        strstr(text, ",38,,,,,,run,native,,,,,\n")); /* the site: 3 x 11 + 5 us; no via */
    free(text);
    json_t *doc = json_report(run);
    json_t *pred =
        json_object_get(json_array_get(json_object_get(doc, "processes"), 0), "predicted");
    assert_true(json_is_object(pred));
    near(json_real_value(json_object_get(pred, "save_wall_us")), 38);
    assert_string_equal(json_string_value(json_object_get(pred, "bound")), "gpu");
    json_t *model = json_object_get(pred, "model");
    near(json_real_value(json_object_get(model, "launch_latency_us")), 5);
    near(json_real_value(json_object_get(model, "gap_us")), 1);
    near(json_number_value(json_object_get(model, "fetch_us")), 3); /* launch's end to kernel */
    near(json_number_value(json_object_get(model, "copy_behind_kernel_us")), 1); /* no copy */
    assert_int_equal(json_integer_value(json_object_get(model, "gpu_operations")), 4);
    json_t *site = json_array_get(json_object_get(pred, "sites"), 0);
    near(json_real_value(json_object_get(site, "save_per_call_us")), 9.5);
    /* four windows of one call: 11, 11, 11, then 5 (the last sync's wake-up, to the end) */
    near(json_real_value(json_object_get(site, "save_per_call_us_typical")), 11);
    near(json_real_value(json_object_get(site, "save_per_call_us_readbacks_kept_typical")), 11);
    json_t *cls = json_array_get(json_object_get(pred, "classes"), 0);
    assert_string_equal(json_string_value(json_object_get(cls, "class")), "sync-stream");
    near(json_real_value(json_object_get(json_object_get(doc, "total"), "predicted_save_wall_us")),
         38);
    json_decref(doc);
    audit_free(run);
}

/* The reports of a saving the model cannot predict (the training loop's shape above): the table,
 * the gate and the CSV say "unknown", the JSON flags it; no figure stands alone. */
static void reports_say_unknown_when_threads_are_not_modelled(void **state)
{
    (void)state;
    stream s;
    two_thread_stream(&s, 1);
    sb_audit_run *run = analyzed(&s);
    char *text = table_text(run);
    assert_non_null(strstr(text, "removing all 5 syncs would save: unknown: threads not modelled "
                                 "(1 other thread launched GPU work between them"));
    assert_non_null(strstr(text, "   unknown  "));
    free(text);
    sb_audit_opts o;
    sb_audit_opts_default(&o);
    o.max_syncs = 0;
    char *msg = NULL;
    assert_int_equal(gate_message(run, &o, &msg), 1);
    assert_non_null(strstr(msg, "what removing them would save is unknown (threads not modelled)"));
    assert_non_null(strstr(msg, "removing the site saves: unknown (threads not modelled)"));
    assert_null(strstr(msg, " ms of wall time"));
    free(msg);
    text = csv_text(run);
    assert_non_null(strstr(text, ",native_site,site_save_us,via_file,"));
    assert_null(strstr(text, ",0,,,,,,run,native,,,,,\n"));
    free(text);
    json_t *doc = json_report(run);
    json_t *proc = json_array_get(json_object_get(doc, "processes"), 0);
    json_t *pred = json_object_get(proc, "predicted");
    assert_int_equal(json_integer_value(json_object_get(pred, "threads_unmodelled")), 1);
    json_t *row = json_array_get(json_object_get(doc, "rows"), 0);
    assert_true(json_is_null(json_object_get(row, "site_save_us")));
    json_decref(doc);
    audit_free(run);
}

/* A job of two ranks, each the GPU-bound loop of gpu_bound_loop_saves_the_gaps: each rank's
 * replay keeps the collectives where they were recorded, so a rank that would move holds still
 * at each one, and its figure says nothing of the job's (on an H100 a 2-rank gloo job's
 * .item() line was played at 0 us a step where removing it saved 68): every saving of either
 * rank is no prediction, the reports say "unknown: ranks not modelled". One rank alone (the
 * other's records not given) is no job of several. */
static void rank_stream(stream *s, int pid, int rank)
{
    stream_open(s);
    line(s,
         "{\"t\":\"proc\",\"v\":1,\"pid\":%d,\"ppid\":1,\"rank\":%d,\"local_rank\":%d,"
         "\"cmd\":\"app\",\"clock_ns\":0,\"mono_ns\":1000000,\"mode\":\"count\","
         "\"kernels\":1,\"launches\":1}",
         pid, rank, rank);
    loop(s, 10, 112, 5, 105, 3, 110, 0);
}

static void every_rank_of_a_job_is_unknown(void **state)
{
    (void)state;
    stream a, b;
    rank_stream(&a, 200, 0);
    rank_stream(&b, 201, 1);
    sb_audit_run *run = load_into(NULL, &a, "proc-200.jsonl");
    load_into(run, &b, "proc-201.jsonl");
    analyze_default(run);
    for (size_t i = 0; i < run->nprocs; i++)
        for (size_t k = 0; k < res_of(run->procs[i])->nsavings; k++)
            assert_int_equal(res_of(run->procs[i])->savings[k].ranks_unmodelled, 1);
    char *text = table_text(run);
    assert_non_null(strstr(text, "would save: unknown: ranks not modelled (one of 2 ranks"));
    free(text);
    sb_audit_opts o;
    sb_audit_opts_default(&o);
    o.max_syncs = 0;
    char *msg = NULL;
    assert_int_equal(gate_message(run, &o, &msg), 1);
    assert_non_null(strstr(msg, "what removing them would save is unknown (ranks not modelled)"));
    free(msg);
    json_t *doc = json_report(run);
    json_t *pred =
        json_object_get(json_array_get(json_object_get(doc, "processes"), 0), "predicted");
    assert_int_equal(json_integer_value(json_object_get(pred, "ranks_unmodelled")), 1);
    json_decref(doc);
    audit_free(run);
    stream c; /* one rank's records alone */
    rank_stream(&c, 202, 1);
    run = load_into(NULL, &c, "proc-202.jsonl");
    analyze_default(run);
    assert_int_equal(res_of(run->procs[0])->savings[0].ranks_unmodelled, 0);
    audit_free(run);
}

/* ---- a price per library line (issue 44): a user's line that leads into two lines inside a
 * library, each priced alone ---- */
#define LIB "/venv/lib/python3.12/site-packages/mylib/"
#define LINE_A "mylib/a.py:3 in fa"
#define LINE_B "mylib/b.py:7 in fb"

/* cudaStreamSynchronize of stream st at [t0, t1) by thread 1, made at Python stack py. */
static void py_sync(stream *s, long long corr, long long t0, long long t1, int st, int py)
{
    line(s,
         "{\"t\":\"call\",\"api\":\"cudaStreamSynchronize_v3020\",\"dom\":\"rt\",\"tid\":1,"
         "\"ctx\":1,\"corr\":%lld,\"start\":%lld,\"end\":%lld,\"ranges\":[],\"stack\":-1,"
         "\"py\":%d}",
         corr, t0 * US, t1 * US, py);
    line(s,
         "{\"t\":\"sync\",\"type\":\"stream\",\"ctx\":1,\"stream\":%d,\"corr\":%lld,"
         "\"sync_id\":-1,\"start\":%lld,\"end\":%lld}",
         st, corr, t0 * US, t1 * US);
}

/* The user's line train.py:10 and, under it, the library lines a.py:3 (stack 1) and b.py:7
 * (stack 2). */
static void lib_stacks(stream *s)
{
    line(s, "{\"t\":\"pystack\",\"id\":1,\"frames\":[[\"" LIB
            "a.py\",\"fa\",3],[\"/work/train.py\",\"main\",10]]}");
    line(s, "{\"t\":\"pystack\",\"id\":2,\"frames\":[[\"" LIB
            "b.py\",\"fb\",7],[\"/work/train.py\",\"main\",10]]}");
}

/* n steps of 140 us, each: a 100 us kernel on stream 7 that line A waits for (107 us blocked),
 * then a 5 us kernel on stream 8 that line B waits for (12 us). Without A's syncs the host
 * launches the short kernel without waiting for the long one; without B's it only skips B's
 * short wait. */
static sb_audit_run *two_lines_run(int n)
{
    stream s;
    begin(&s);
    lib_stacks(&s);
    for (long long i = 0; i < n; i++) {
        long long h = 140 * i, corr = 4 * i + 1;
        launch(&s, corr, h, 7, h + 5, h + 105);
        py_sync(&s, corr + 1, h + 3, h + 110, 7, 1);
        launch(&s, corr + 2, h + 112, 8, h + 117, h + 122);
        py_sync(&s, corr + 3, h + 115, h + 127, 8, 2);
    }
    replay_end(&s, 140 * n);
    return analyzed(&s);
}

/* The interned site and library line of the first call made at Python stack py. */
static const sb_audit_call_info *call_at(const sb_audit_proc *p, int py)
{
    for (size_t i = 0; i < p->ncalls; i++)
        if (p->calls[i].py == py)
            return info_of(p, i);
    fail_msg("no call at pystack %d", py);
    return NULL;
}

static void two_library_lines_are_priced_apart(void **state)
{
    (void)state;
    enum { N = 30 };
    sb_audit_run *run = two_lines_run(N);
    const sb_audit_proc *p = run->procs[0];
    const sb_audit_call_info *a = call_at(p, 1), *b = call_at(p, 2);
    assert_ptr_equal(a->site, b->site); /* one user's line, two library lines */
    assert_string_equal(a->made->via_site, LINE_A);
    assert_string_equal(b->made->via_site, LINE_B);
    const sb_audit_saving *la = sb_audit_line_saving_of(res_of(p), a->site, a->made->via_site);
    const sb_audit_saving *lb = sb_audit_line_saving_of(res_of(p), b->site, b->made->via_site);
    const sb_audit_saving *site =
        sb_audit_saving_of(res_of(p), SB_SAVE_SITE, a->site, SB_AUDIT_NONE);
    assert_non_null(la);
    assert_non_null(lb);
    assert_non_null(site);
    assert_int_equal(la->kind, SB_SAVE_LINE);
    assert_ptr_equal(la->via, a->made->via_site);
    assert_int_equal(la->calls, N);
    assert_int_equal(lb->calls, N);
    assert_int_equal(site->calls, 2 * N);
    near(la->blocked_us, 107.0 * N);
    near(lb->blocked_us, 12.0 * N);
    /* each its own play: the line that blocked longer saves more, and neither is the site's */
    double sa = sb_audit_saving_us(la), sb = sb_audit_saving_us(lb);
    assert_true(sb > 0);
    assert_true(sa > 2 * sb);
    /* not the site's figure, either of them (the site's typical saving is of its 60 calls) */
    assert_true(fabs(sa - sb_audit_saving_us(site)) > 1 && fabs(sb - sb_audit_saving_us(site)) > 1);
    /* played twice, as a site is: the readbacks kept too */
    assert_true(la->kept.wall_us > 0);
    /* over the run, and as text */
    sb_audit_run_save ra = sb_audit_run_line_saving(analysis_of(run), a->site, a->made->via_site);
    assert_int_equal(ra.played, 1);
    near(ra.us, sa);
    assert_null(sb_audit_unmodelled_why(ra));
    char buf[32];
    char want[32];
    snprintf(want, sizeof want, "%.3f", sa / 1e3);
    assert_string_equal(sb_audit_save_text(ra, buf, sizeof buf), want);
    sb_audit_run_save none = sb_audit_run_line_saving(analysis_of(run), a->site, "");
    assert_int_equal(none.played, 0);
    assert_string_equal(sb_audit_save_text(none, buf, sizeof buf), "");
    assert_null(sb_audit_line_saving_of(res_of(p), a->site, b->site)); /* no such pair */
    assert_null(sb_audit_saving_of(res_of(p), SB_SAVE_LINE, NULL, SB_AUDIT_NONE));
    audit_free(run);
}

/* A user's line whose calls all go through one library line: the line's play is the site's. */
static void a_lone_library_line_is_its_sites_play(void **state)
{
    (void)state;
    stream s;
    begin(&s);
    lib_stacks(&s);
    for (long long i = 0; i < 25; i++) {
        long long h = 112 * i;
        launch(&s, 2 * i + 1, h, 7, h + 5, h + 105);
        py_sync(&s, 2 * i + 2, h + 3, h + 110, 7, 1);
    }
    replay_end(&s, 112 * 25);
    sb_audit_run *run = analyzed(&s);
    const sb_audit_proc *p = run->procs[0];
    const sb_audit_call_info *a = call_at(p, 1);
    const sb_audit_saving *line = sb_audit_line_saving_of(res_of(p), a->site, a->made->via_site);
    const sb_audit_saving *site =
        sb_audit_saving_of(res_of(p), SB_SAVE_SITE, a->site, SB_AUDIT_NONE);
    assert_non_null(line);
    assert_non_null(site);
    assert_int_equal(line->calls, site->calls);
    near(sb_audit_saving_us(line), sb_audit_saving_us(site));
    near(line->kept.wall_us, site->kept.wall_us);
    near(sb_audit_saving_us(line), 11.0 * 25); /* gpu_bound_loop_saves_the_gaps' 11 us a step */
    audit_free(run);
}

/* The row of the JSON report whose via site is `via`. */
static json_t *row_via(json_t *doc, const char *via)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(doc, "rows"), i, r)
    {
        json_t *v = json_object_get(r, "via");
        if (json_is_object(v) && !strcmp(json_string_value(json_object_get(v, "site")), via))
            return r;
    }
    fail_msg("no row via %s", via);
    return NULL;
}

/* The entry of predicted.lines whose via is `via`. */
static json_t *line_entry(json_t *pred, const char *via)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(pred, "lines"), i, e)
    {
        if (!strcmp(json_string_value(json_object_get(e, "via")), via))
            return e;
    }
    fail_msg("no line %s in predicted.lines", via);
    return NULL;
}

/* The reports give each library line's saving beside it: the JSON (rows' via.save_us, the
 * process's predicted.lines), the CSV (via_save_us), the trace (via_save_us), the table (the
 * library line's saves ms) and the gate's message. */
static void reports_give_each_library_lines_saving(void **state)
{
    (void)state;
    sb_audit_run *run = two_lines_run(30);
    const sb_audit_proc *p = run->procs[0];
    const sb_audit_call_info *a = call_at(p, 1), *b = call_at(p, 2);
    double sa = sb_audit_saving_us(sb_audit_line_saving_of(res_of(p), a->site, a->made->via_site));
    double sb = sb_audit_saving_us(sb_audit_line_saving_of(res_of(p), b->site, b->made->via_site));
    json_t *doc = json_report(run);
    near(
        json_number_value(json_object_get(json_object_get(row_via(doc, LINE_A), "via"), "save_us")),
        sa);
    near(
        json_number_value(json_object_get(json_object_get(row_via(doc, LINE_B), "via"), "save_us")),
        sb);
    json_t *pred =
        json_object_get(json_array_get(json_object_get(doc, "processes"), 0), "predicted");
    assert_int_equal(json_array_size(json_object_get(pred, "lines")), 2);
    json_t *ea = line_entry(pred, LINE_A);
    assert_string_equal(json_string_value(json_object_get(ea, "site")), a->site);
    assert_int_equal(json_integer_value(json_object_get(ea, "calls")), 30);
    near(json_number_value(json_object_get(ea, "save_us")), sa);
    near(json_number_value(json_object_get(ea, "blocked_us")), 107.0 * 30);
    /* the same fields as a site's entry */
    json_t *site = json_array_get(json_object_get(pred, "sites"), 0);
    const char *k;
    json_t *v;
    json_object_foreach(site, k, v)
    {
        if (!json_object_get(ea, k))
            fail_msg("predicted.lines lacks the sites' field %s", k);
    }
    json_decref(doc);

    char *csv = csv_text(run);
    assert_non_null(strstr(csv, ",waiter_tid,via_save_us,framework,fix_at,gpu_window\n"));
    char want[256];
    snprintf(want, sizeof want, ",run,python,,%.9g,,,\n", sa);
    assert_non_null(strstr(csv, want));
    snprintf(want, sizeof want, ",run,python,,%.9g,,,\n", sb);
    assert_non_null(strstr(csv, want));
    free(csv);

    /* the trace: line A's calls carry its saving, to the ns */
    json_t *trace = report_json(run, AS_TRACE, NULL, NULL);
    snprintf(want, sizeof want, "%.3f", sa);
    long with_a = 0;
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(trace, "traceEvents"), i, e)
    {
        json_t *via = json_object_get(json_object_get(e, "args"), "via_save_us");
        with_a += via && json_number_value(via) == strtod(want, NULL);
    }
    assert_int_equal(with_a, 30);
    json_decref(trace);

    char *table = table_text(run);
    snprintf(want, sizeof want, "%10.3f    via " LINE_A "\n", sa / 1e3);
    assert_non_null(strstr(table, want));
    snprintf(want, sizeof want, "%10.3f    via " LINE_B "\n", sb / 1e3);
    assert_non_null(strstr(table, want));
    free(table);

    char *msg = gate_failed(run);
    snprintf(want, sizeof want, "via " LINE_A " (removing the line saves %.3f ms)\n", sa / 1e3);
    assert_non_null(strstr(msg, want));
    free(msg);
    audit_free(run);
}

/* The framework table's rows (analyze/frameworks.h) in the reports: made.fw set by hand on the
 * rows of line A (an option removes them; the fix goes at train.py:31) and of line B (no option
 * does; B's frame also looks like A's row changed). */
static void reports_carry_the_framework_row(void **state)
{
    (void)state;
    static const sb_fw_row fa = {.id = "mylib.a.check",
                                 .package = "mylib",
                                 .versions = "1.2.3",
                                 .module = "mylib/a.py",
                                 .func = "fa",
                                 .text = "x",
                                 .what = "a check",
                                 .fix = "Trainer(check=False)",
                                 .caveat = "no check",
                                 .where = "Trainer(",
                                 .removes = 1};
    static const sb_fw_row fb = {.id = "mylib.b.read",
                                 .package = "mylib",
                                 .versions = "1.2.3",
                                 .fix = "none",
                                 .caveat = "",
                                 .removes = 0};
    sb_audit_run *run = two_lines_run(30);
    sb_audit_proc *p = run->procs[0];
    for (size_t k = 0; k < res_of(p)->nrows; k++) {
        sb_audit_made *m = &res_of(p)->rows[k].made;
        if (!strcmp(m->via_site, LINE_A)) {
            m->fw = &fa;
            m->fix_at = "train.py:31";
        } else if (!strcmp(m->via_site, LINE_B)) {
            m->fw = &fb;
            m->fw_changed = &fa;
        }
    }
    json_t *doc = json_report(run);
    json_t *fw = json_object_get(row_via(doc, LINE_A), "framework");
    assert_true(json_is_object(fw));
    assert_string_equal(json_string_value(json_object_get(fw, "id")), "mylib.a.check");
    assert_string_equal(json_string_value(json_object_get(fw, "package")), "mylib");
    assert_string_equal(json_string_value(json_object_get(fw, "versions")), "1.2.3");
    assert_true(json_is_true(json_object_get(fw, "removes")));
    assert_string_equal(json_string_value(json_object_get(fw, "fix")), "Trainer(check=False)");
    assert_string_equal(json_string_value(json_object_get(fw, "caveat")), "no check");
    assert_string_equal(json_string_value(json_object_get(fw, "fix_at")), "train.py:31");
    assert_int_equal(json_integer_value(json_object_get(fw, "calls")), 30);
    assert_int_equal(json_integer_value(json_object_get(fw, "run_calls")), 60);
    assert_true(json_is_null(json_object_get(row_via(doc, LINE_A), "framework_changed")));
    json_t *rb = row_via(doc, LINE_B);
    fw = json_object_get(rb, "framework");
    assert_true(json_is_false(json_object_get(fw, "removes")));
    assert_true(json_is_null(json_object_get(fw, "fix_at")));
    assert_string_equal(json_string_value(json_object_get(rb, "framework_changed")),
                        "mylib.a.check");
    json_decref(doc);

    char *csv = csv_text(run);
    assert_non_null(strstr(csv, ",mylib.a.check,train.py:31,\n"));
    assert_non_null(strstr(csv, ",mylib.b.read,,\n"));
    free(csv);

    char *table = table_text(run);
    assert_non_null(strstr(table, "change: train.py:31\n"));
    assert_non_null(strstr(table, "removes 30 of the run's 60 blocking calls\n"));
    assert_non_null(strstr(table, "no option removes them (30 of the run's 60 blocking calls)\n"));
    free(table);
    audit_free(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(identity),
        cmocka_unit_test(gpu_bound_loop_saves_the_gaps),
        cmocka_unit_test(short_gpu_work_saves_the_wait),
        cmocka_unit_test(a_run_saving_in_words),
        cmocka_unit_test(sync_before_long_host_work_saves_the_overlap),
        cmocka_unit_test(a_slow_stretch_moves_the_total_not_the_typical),
        cmocka_unit_test(the_typical_figure_comes_with_its_windows_interval),
        cmocka_unit_test(several_threads_take_the_mean),
        cmocka_unit_test(another_threads_launches_between_removed_syncs_are_flagged),
        cmocka_unit_test(a_backward_pass_handed_to_another_thread_moves_with_it),
        cmocka_unit_test(a_producer_the_audit_cannot_see_gives_two_figures),
        cmocka_unit_test(every_rank_of_a_job_is_unknown),
        cmocka_unit_test(a_wait_inside_a_call_is_the_calls_own),
        cmocka_unit_test(reports_say_unknown_when_threads_are_not_modelled),
        cmocka_unit_test(syncs_of_an_idle_gpu_save_their_own_time),
        cmocka_unit_test(event_orders_streams),
        cmocka_unit_test(audit_time_is_taken_out),
        cmocka_unit_test(readbacks_go_with_their_sync),
        cmocka_unit_test(a_copy_that_arrived_first_waits_for_its_engine),
        cmocka_unit_test(only_a_copy_behind_a_kernel_waits_for_its_engine),
        cmocka_unit_test(a_free_takes_its_allocation),
        cmocka_unit_test(legacy_stream_waits_for_blocking_streams),
        cmocka_unit_test(an_unrecorded_stretch_waits_for_the_recorded_work),
        cmocka_unit_test(a_pause_that_began_with_the_gpu_busy),
        cmocka_unit_test_setup_teardown(calibration_takes_out_the_launch_cost, make_tmpdir,
                                        remove_tmpdir),
        cmocka_unit_test_setup_teardown(calibration_takes_out_the_start_cost, make_tmpdir,
                                        remove_tmpdir),
        cmocka_unit_test_setup_teardown(calibration_takes_out_an_allocations_cost, make_tmpdir,
                                        remove_tmpdir),
        cmocka_unit_test_setup_teardown(calibration_takes_out_a_readbacks_cost, make_tmpdir,
                                        remove_tmpdir),
        cmocka_unit_test_setup_teardown(a_readback_waits_for_its_streams_event, make_tmpdir,
                                        remove_tmpdir),
        cmocka_unit_test_setup_teardown(calibration_figures_from_every_field, make_tmpdir,
                                        remove_tmpdir),
        cmocka_unit_test_setup_teardown(calibration_records_give_the_median_oh, make_tmpdir,
                                        remove_tmpdir),
        cmocka_unit_test(reports_show_the_prediction),
        cmocka_unit_test(two_library_lines_are_priced_apart),
        cmocka_unit_test(a_lone_library_line_is_its_sites_play),
        cmocka_unit_test(reports_give_each_library_lines_saving),
        cmocka_unit_test(reports_carry_the_framework_row),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
