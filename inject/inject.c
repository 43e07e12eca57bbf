/* libsyncbench_audit.so: the CUPTI injection library of `syncbench audit`. The CUDA driver
 * loads it into the audited program (CUDA_INJECTION64_PATH) when the program initializes CUDA
 * and calls InitializeInjection, which subscribes to the calls that can block (watch.c), the
 * NVTX ranges (ranges.c) and the GPU's activity (activity.c), starts the waits library when the
 * launcher preloaded it (handoffs.c: the hand-offs between threads), and writes the record stream
 * (src/record/records.h) to SYNCBENCH_AUDIT_DIR/proc-<pid>.jsonl until the process ends: at exit,
 * when a context is destroyed, and on a fatal signal, what was recorded is flushed. */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cupti.h>

#include "activity.h"
#include "api.h"
#include "handoffs.h"
#include "inject.h"
#include "out.h"
#include "ranges.h"
#include "pyframes.h"
#include "stacks.h"
#include "notify.h"
#include "watch.h"
#include "window.h"
#include "record/records.h"
#include "base/clock.h"
#include "base/envvars.h"

static CUpti_SubscriberHandle subscriber;
static int finished;
/* A child forked without exec: CUDA cannot be used there and CUPTI's threads are gone; it
 * records and flushes nothing (its exec'd image, if any, loads this library afresh). */
static volatile int forked;
static long long clock_minus_mono; /* CUPTI's clock minus CLOCK_MONOTONIC, at start */

static void CUPTIAPI on_callback(void *user, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
                                 const void *data)
{
    (void)user;
    if (forked)
        return;
    switch (dom) {
    case CUPTI_CB_DOMAIN_RUNTIME_API:
    case CUPTI_CB_DOMAIN_DRIVER_API:
        sba_watch_callback(dom, cbid, data);
        break;
    case CUPTI_CB_DOMAIN_NVTX:
        sba_ranges_callback(cbid, data);
        break;
    case CUPTI_CB_DOMAIN_RESOURCE:
        /* the context's records must be out before it goes */
        if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
            sba_watch_context_gone();
            sba_activity_flush(1);
        } else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED)
            sba_activity_context_made();
        break;
    default:
        break;
    }
}

static void write_clock_pair(char *buf, size_t n)
{
    uint64_t c = 0;
    cuptiGetTimestamp(&c);
    long long m = sb_now_ns();
    clock_minus_mono = (long long)c - m;
    snprintf(buf, n, "\"clock_ns\":%llu,\"mono_ns\":%lld", (unsigned long long)c, m);
}

/* The launcher's "end" datagram (records.h): after the end record, with the lines lost. */
static void send_end(void)
{
    char msg[SB_AUDIT_STATUS_MAX];
    int n = snprintf(msg, sizeof msg, "end %d %lld", (int)getpid(), sba_out_lost());
    if (n > 0 && (size_t)n < sizeof msg)
        sba_status_send(msg, n);
}

/* The recording switched off and on (the calibration, recording turns): the stretch it was off
 * becomes a "pause" record, so the replay knows the time the process spent unrecorded; one
 * still open at the exit ends there. The stretch runs from before the switching off to after
 * the switching on (what CUPTI takes to switch is not recorded either). */
static pthread_mutex_t pause_lock = PTHREAD_MUTEX_INITIALIZER;
static int paused;
static uint64_t paused_at;
static long paused_tid;

static void write_pause(void) /* pause_lock held, paused */
{
    uint64_t now;
    cuptiGetTimestamp(&now);
    paused = 0;
    sba_out_printf("{\"t\":\"pause\",\"tid\":%ld,\"start\":%llu,\"end\":%llu}", paused_tid,
                   (unsigned long long)paused_at, (unsigned long long)now);
}

void sba_recording(int on)
{
    pthread_mutex_lock(&pause_lock);
    if (!on && !paused) {
        paused = 1;
        cuptiGetTimestamp(&paused_at);
        paused_tid = (long)syscall(SYS_gettid);
    }
    if (subscriber)
        sba_watch_enable(subscriber, on);
    sba_activity_pause(!on);
    if (on && paused)
        write_pause();
    pthread_mutex_unlock(&pause_lock);
}

/* A normal end: CUPTI's pending records, the thread's open ranges, the last hand-offs between
 * threads, the end record. */
static void at_exit(void)
{
    if (forked || __atomic_exchange_n(&finished, 1, __ATOMIC_SEQ_CST))
        return;
    sba_activity_flush(1);
    sba_ranges_close_open();
    sba_window_finish();
    pthread_mutex_lock(&pause_lock);
    if (paused)
        write_pause();
    pthread_mutex_unlock(&pause_lock);
    sba_handoffs_finish();
    char clock[96];
    write_clock_pair(clock, sizeof clock);
    sba_out_printf("{\"t\":\"end\",%s,\"why\":\"exit\",\"dropped\":%llu,\"wakes_lost\":%llu}",
                   clock, (unsigned long long)sba_activity_dropped(), sba_handoffs_lost());
    sba_out_flush(0);
    send_end();
}

/* Every signal whose default action ends the process (Ctrl-C's SIGINT included) */
static const int fatal_signals[] = {SIGSEGV, SIGBUS,  SIGFPE,  SIGILL,  SIGABRT,
                                    SIGTERM, SIGHUP,  SIGINT,  SIGQUIT, SIGPIPE,
                                    SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ};

/* A fatal signal may land anywhere, inside CUPTI, the driver or this library's own lock: only
 * what cannot block runs here. The buffered records go out if their lock is free, then the end
 * record in one write(2); CUPTI's pending GPU records (at most its half-second flush period)
 * and the hand-offs not drained yet (at most a quarter second's) are lost. Then the signal's
 * default action. */
static void on_fatal(int sig)
{
    if (!forked && !__atomic_exchange_n(&finished, 1, __ATOMIC_SEQ_CST)) {
        sba_out_flush(1);
        sba_window_fatal();
        char line[224];
        long long m = sb_now_ns();
        int n = snprintf(line, sizeof line,
                         "{\"t\":\"end\",\"clock_ns\":%lld,\"mono_ns\":%lld,\"why\":\"signal "
                         "%d\",\"dropped\":%llu,\"wakes_lost\":%llu}\n",
                         m + clock_minus_mono, m, sig, (unsigned long long)sba_activity_dropped(),
                         sba_handoffs_lost());
        if (n > 0 && (size_t)n < sizeof line)
            sba_out_write_raw(line, (size_t)n);
        send_end();
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void after_fork_child(void)
{
    forked = 1;
}

/* Only where the program kept the default action: its own handlers stay its own. */
static void catch_fatal_signals(void)
{
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++) {
        struct sigaction old;
        if (sigaction(fatal_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
            !(old.sa_flags & SA_SIGINFO)) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_fatal;
            sigemptyset(&sa.sa_mask);
            sa.sa_flags = SA_RESETHAND | SA_NODEFER;
            sigaction(fatal_signals[i], &sa, NULL);
        }
    }
}

/* argv joined by spaces, from /proc/self/cmdline. */
static void command_line(char *buf, size_t n)
{
    buf[0] = 0;
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (!f)
        return;
    size_t len = fread(buf, 1, n - 1, f);
    fclose(f);
    buf[len] = 0;
    for (size_t i = 0; i + 1 < len; i++)
        if (!buf[i])
            buf[i] = ' ';
}

static void warn_cupti(const char *what, CUptiResult r)
{
    const char *msg = "?";
    cuptiGetResultString(r, &msg);
    char esc[512];
    sba_out_printf("{\"t\":\"warn\",\"msg\":\"%s: %s\"}", what,
                   sba_json_escape(esc, sizeof esc, msg));
}

/* The callbacks of the watched calls, subscribed once, by the injection (InitializeInjection) or
 * by the in-process API (api.c), whichever comes first: the other finds them in place. */
int sba_subscribe(char *why, size_t n)
{
    static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;
    static int done, rc;
    static char reason[256]; /* why it failed, for every later caller too */
    pthread_mutex_lock(&once);
    if (!done) {
        pthread_atfork(NULL, NULL, after_fork_child);
        CUptiResult r = cuptiSubscribe(&subscriber, on_callback, NULL);
        if (r == CUPTI_SUCCESS) {
            sba_watch_init();
            /* a context's going: its records flushed, its id forgotten (watch.c keeps the ids
             * only when it is told) */
            if (cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                    CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) == CUPTI_SUCCESS)
                sba_watch_track_contexts();
            if (sba_watch_enable(subscriber, 1) == 0) {
                snprintf(reason, sizeof reason, "no API callback could be enabled");
                rc = -1;
            }
        } else {
            const char *msg = "?";
            cuptiGetResultString(r, &msg);
            snprintf(reason, sizeof reason, "%s: %s",
                     r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                         ? "another CUPTI subscriber holds the callbacks (the PyTorch profiler, "
                           "Nsight Systems or another tool: CUPTI allows one): blocking calls "
                           "cannot be recorded"
                         : "CUPTI refused to subscribe: blocking calls cannot be recorded",
                     msg);
            rc = -1;
        }
        done = 1;
    }
    if (rc)
        snprintf(why, n, "%s", reason);
    pthread_mutex_unlock(&once);
    return rc;
}

int sba_forked(void)
{
    return forked;
}

API int InitializeInjection(void)
{
    static int done;
    if (done++)
        return 1;
    const char *dir = sb_env_raw(SB_ENV_AUDIT_DIR);
    if (!dir)
        return 1; /* not started by syncbench audit: stay out of the way */
    sba_status_init();
    int opened = sba_out_open(dir) == 0;
    char start[SB_AUDIT_STATUS_MAX];
    int len = snprintf(start, sizeof start, "start %d %d %d", (int)getpid(), opened,
                       sba_out_open_errno());
    sba_status_send(start, len);
    if (!opened)
        return 1; /* nowhere to write: the launcher knows, and the gate fails */
    sba_out_atfork();
    int trace = sb_env_is(SB_ENV_AUDIT_MODE, "trace");
    sba_stacks_init((int)sb_env_long(SB_ENV_AUDIT_DEPTH, NULL));
    int python = sb_env_long(SB_ENV_AUDIT_PYTHON, NULL) != 0;
    if (python)
        sba_py_init();

    /* GPU activity: 0 none (the default: async copies are classed by the driver's answer
     * about their host pointer), 1 copies and memsets, 2 kernels too (a cost per launch),
     * 3 the launches and stream order too (the replay: --gpu-activity, --trace) */
    long gpu = sb_env_long(SB_ENV_AUDIT_GPU, NULL);
    if (trace && gpu < 3)
        gpu = 3;
    /* the mode's kinds of record, less those a developer's knob turned off (activity.h) */
    sba_activity_plan plan;
    sba_activity_plan_make(&plan, (int)gpu, trace);
    /* the hand-offs between threads, when the launcher preloaded the library: for the replay,
     * and for a call made on a thread without Python while a Python thread waited for it (each
     * woken waiter's Python stack) */
    int waits = (plan.kinds & SBA_KIND_WAITS) &&
                sba_handoffs_start(python ? sba_py_stack_waiting : NULL) == 0;
    char cmd[2048], esc[4096], clock[96], kinds[320], window[4096];
    command_line(cmd, sizeof cmd);
    write_clock_pair(clock, sizeof clock);
    sba_activity_proc_fields(&plan, kinds, sizeof kinds);
    /* the window of GPU activity, before the NVTX ranges that open it are seen */
    sba_window_init((int)gpu);
    sba_window_proc_field(window, sizeof window);
    char pyread[48] = ""; /* how Python stacks are read, in a process that runs Python */
    if (python)
        sba_py_proc_field(pyread, sizeof pyread);
    sba_out_printf(
        "{\"t\":\"proc\",\"v\":%d,\"pid\":%d,\"ppid\":%d,\"rank\":%ld,\"local_rank\":%ld,"
        "\"cmd\":\"%s\",%s,\"mode\":\"%s\",\"kernels\":%d,\"launches\":%d,\"waits\":%d%s,"
        "\"symsize\":1%s%s}",
        SB_AUDIT_FORMAT_VERSION, (int)getpid(), (int)getppid(), sb_env_long_named("RANK", -1),
        sb_env_long_named("LOCAL_RANK", -1), sba_json_escape(esc, sizeof esc, cmd), clock,
        trace ? "trace" : "count", gpu >= 2, gpu >= 3, waits, kinds, window, pyread);
    sba_activity_warn(&plan);
    sba_window_warn();
    if (python)
        sba_py_warn();

    /* NVTX must reach the CUPTI this library is bound to: a program that loaded its own copy
     * first (PyTorch's wheels ship libcupti.so.13) shares it through the soname, while the
     * launcher's NVTX_INJECTION64_PATH names the toolkit's, a second copy with no subscriber.
     * NVTX reads the variable at its first call, which usually comes after CUDA's. */
    Dl_info cupti;
    const char *nvtx = getenv("NVTX_INJECTION64_PATH");
    if (dladdr((void *)cuptiSubscribe, &cupti) && cupti.dli_fname && cupti.dli_fname[0] == '/' &&
        (!nvtx || strcmp(nvtx, cupti.dli_fname)))
        setenv("NVTX_INJECTION64_PATH", cupti.dli_fname, 1); /* only when it must change */

    char why[256];
    if (sba_subscribe(why, sizeof why) != 0) {
        /* not a warning: nothing of this process's blocking calls is recorded, so its counts
         * are no lower bound and a gate over them checks nothing */
        sba_out_printf("{\"t\":\"unwatched\",\"why\":\"%s\"}",
                       sba_json_escape(esc, sizeof esc, why));
    } else {
        CUptiResult r = cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_NVTX);
        if (r != CUPTI_SUCCESS)
            warn_cupti("cannot record NVTX ranges", r);
        cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                            CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
    }
    if (gpu > 0)
        sba_activity_start(&plan);
    atexit(at_exit);
    catch_fatal_signals();
    sba_out_start_flusher();
    sba_out_flush(0);
    return 1;
}
