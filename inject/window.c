#include "window.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cupti.h>

#include "activity.h"
#include "out.h"
#include "record/gpu_window.h"
#include "base/envvars.h"

static sb_gpu_window win;
static int windowed;
static long entered;                  /* instances of the range begun so far (atomic) */
static int opened, closed, written;   /* under lock */
static uint64_t opened_at, closed_at; /* CUPTI's clock */
static long opened_by;                /* the thread that opened it */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char fatal_line[SB_AUDIT_RANGE_NAME_MAX * 12 + 256]; /* the record of a window still
                                                                 open, ready for on_fatal */
static volatile int fatal_ready;
static char refused[800]; /* why the environment's window was refused, for a "warn" record */

int sba_window_init(int gpu)
{
    const char *spec = sb_env_str(SB_ENV_AUDIT_WINDOW);
    if (!spec || !gpu)
        return 0;
    char why[160];
    if (sb_gpu_window_parse(spec, &win, why, sizeof why) < 0) {
        snprintf(refused, sizeof refused, "%s=%.512s: %s; GPU activity recorded over the whole run",
                 sb_env_name(SB_ENV_AUDIT_WINDOW), spec, why);
        return 0;
    }
    windowed = 1;
    sba_activity_window_bounds(UINT64_MAX, UINT64_MAX);
    sba_activity_window(0);
    return 1;
}

void sba_window_warn(void)
{
    char esc[sizeof refused * 6];
    if (refused[0])
        sba_out_printf("{\"t\":\"warn\",\"msg\":\"%s\"}",
                       sba_json_escape(esc, sizeof esc, refused));
}

void sba_window_proc_field(char *buf, size_t n)
{
    char text[3 * SB_AUDIT_RANGE_NAME_MAX], esc[sizeof text * 6];
    buf[0] = 0;
    if (windowed) {
        sb_gpu_window_format(&win, text, sizeof text);
        snprintf(buf, n, ",\"window\":\"%s\"", sba_json_escape(esc, sizeof esc, text));
    }
}

int sba_window_named(const char *name)
{
    return windowed && !__atomic_load_n(&closed, __ATOMIC_RELAXED) && !strcmp(name, win.name);
}

int sba_window_wants(const char *name, const char *domain)
{
    return windowed && !__atomic_load_n(&closed, __ATOMIC_RELAXED) &&
           sb_gpu_window_matches(&win, name, domain);
}

/* The "gwindow" record as it stands (start, end: -1 none) into buf. */
static int record(char *buf, size_t n, long long start, long long end)
{
    char name[SB_AUDIT_RANGE_NAME_MAX * 6 + 1], dom[SB_AUDIT_RANGE_NAME_MAX * 6 + 1] = "";
    if (!win.any_domain)
        snprintf(dom, sizeof dom, ",\"dom\":\"%s\"",
                 sba_json_escape(name, sizeof name, win.domain));
    return snprintf(buf, n,
                    "{\"t\":\"gwindow\",\"range\":\"%s\"%s,\"first\":%ld,\"last\":%ld,"
                    "\"start\":%lld,\"end\":%lld,\"tid\":%ld}\n",
                    sba_json_escape(name, sizeof name, win.name), dom, win.first, win.last, start,
                    end, opened_by);
}

static void open_window(void)
{
    pthread_mutex_lock(&lock);
    if (!opened) {
        cuptiGetTimestamp(&opened_at); /* before: every launch it records comes after */
        opened_by = (long)syscall(SYS_gettid);
        sba_activity_window_bounds(opened_at, UINT64_MAX);
        sba_activity_window(1);
        opened = 1;
        int len = record(fatal_line, sizeof fatal_line, (long long)opened_at, -1);
        fatal_ready = len > 0 && (size_t)len < sizeof fatal_line;
    }
    pthread_mutex_unlock(&lock);
}

int sba_window_enter(void)
{
    long n = __atomic_add_fetch(&entered, 1, __ATOMIC_RELAXED);
    if (n < win.first)
        sba_activity_window(0); /* still shut: the launches go off once CUDA has a context */
    if (n == win.first)
        open_window();
    return n == win.last;
}

/* The record, once (lock held). */
static void write_record(long long start, long long end)
{
    char line[sizeof fatal_line];
    int len = record(line, sizeof line, start, end);
    if (!written && len > 1 && (size_t)len < sizeof line)
        sba_out_line(line, (size_t)len - 1); /* sba_out_line adds the newline */
    written = 1;
    fatal_ready = 0;
}

void sba_window_leave(void)
{
    pthread_mutex_lock(&lock);
    if (opened && !closed) {
        sba_activity_window(0);
        cuptiGetTimestamp(&closed_at); /* after: every launch it recorded came before */
        sba_activity_window_bounds(opened_at, closed_at);
        __atomic_store_n(&closed, 1, __ATOMIC_RELAXED);
        write_record((long long)opened_at, (long long)closed_at);
    }
    pthread_mutex_unlock(&lock);
}

void sba_window_finish(void)
{
    if (!windowed)
        return;
    pthread_mutex_lock(&lock);
    if (!written)
        write_record(opened ? (long long)opened_at : -1, -1);
    pthread_mutex_unlock(&lock);
}

void sba_window_fatal(void)
{
    if (fatal_ready)
        sba_out_write_raw(fatal_line, strlen(fatal_line));
}
