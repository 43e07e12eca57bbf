#include "out.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BUF_SIZE (1 << 20)
#define LINE_MAX_LEN (64 << 10)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int fd = -1;
static char buf[BUF_SIZE];
static size_t used;
/* Lines the file refused (a full disk, a write error) or that had no file: the launcher is
 * told, and the gate fails rather than pass on what is missing. */
static long long lost;
static int open_errno;

/* The flusher thread writes the buffer out every quarter second: a process killed with SIGKILL
 * keeps all but its last quarter second. */
#define DRAIN_EVERY_MS 250

int sba_out_open(const char *dir)
{
    char path[4096];
    /* a program that execs another CUDA program keeps its pid: the second image gets
     * proc-<pid>-2.jsonl, never the first one's file */
    for (int k = 1; k < 100 && fd < 0; k++) {
        if (k == 1)
            snprintf(path, sizeof path, "%s/proc-%d.jsonl", dir, (int)getpid());
        else
            snprintf(path, sizeof path, "%s/proc-%d-%d.jsonl", dir, (int)getpid(), k);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0)
        open_errno = errno;
    return fd < 0 ? -1 : 0;
}

int sba_out_recording(void)
{
    return __atomic_load_n(&fd, __ATOMIC_RELAXED) >= 0;
}

static void drain(void)
{
    size_t off = 0;
    while (fd >= 0 && off < used) {
        ssize_t w = write(fd, buf + off, used - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    /* what was not written is lost: a cut line counts once, as the whole lines after it */
    for (size_t i = off; i < used; i++)
        lost += buf[i] == '\n';
    used = 0;
}

void sba_out_line(const char *line, size_t len)
{
    if (len > LINE_MAX_LEN)
        len = LINE_MAX_LEN;
    pthread_mutex_lock(&lock);
    if (fd >= 0) {
        if (used + len + 1 > BUF_SIZE)
            drain();
        memcpy(buf + used, line, len);
        buf[used + len] = '\n';
        used += len + 1;
    } else {
        lost++;
    }
    pthread_mutex_unlock(&lock);
}

void sba_out_printf(const char *fmt, ...)
{
    static _Thread_local char line[LINE_MAX_LEN];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0)
        sba_out_line(line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

void sba_out_flush(int try_only)
{
    if (try_only) {
        if (pthread_mutex_trylock(&lock) != 0)
            return;
    } else {
        pthread_mutex_lock(&lock);
    }
    drain();
    pthread_mutex_unlock(&lock);
}

static void before_fork(void)
{
    pthread_mutex_lock(&lock);
    drain();
}

static void after_fork_parent(void)
{
    pthread_mutex_unlock(&lock);
}

static void after_fork_child(void)
{
    if (fd >= 0)
        close(fd);
    fd = -1;
    used = 0;
    pthread_mutex_unlock(&lock);
}

void sba_out_atfork(void)
{
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

/* What else the flusher does each quarter second, before it writes: records kept elsewhere
 * turned into lines (sba_out_on_flush). */
static void (*_Atomic before_flush)(void);

void sba_out_on_flush(void (*fn)(void))
{
    before_flush = fn;
}

/* The quiet-spell flusher: a process that records a sync and then runs for minutes without
 * another record still has it in the file when it is killed. */
static void *flusher(void *arg)
{
    (void)arg;
    for (;;) {
        struct timespec ts = {0, DRAIN_EVERY_MS * 1000000L};
        nanosleep(&ts, NULL);
        void (*fn)(void) = before_flush;
        if (fn)
            fn();
        sba_out_flush(0);
    }
    return NULL;
}

void sba_out_start_flusher(void)
{
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_create(&t, &a, flusher, NULL);
    pthread_attr_destroy(&a);
}

void sba_out_write_raw(const char *line, size_t len)
{
    if (fd < 0 || write(fd, line, len) != (ssize_t)len)
        __atomic_add_fetch(&lost, 1, __ATOMIC_RELAXED);
}

long long sba_out_lost(void)
{
    return __atomic_load_n(&lost, __ATOMIC_RELAXED);
}

int sba_out_open_errno(void)
{
    return open_errno;
}
