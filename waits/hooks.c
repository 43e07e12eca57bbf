/* libsyncbench_waits.so's interposed calls: the condition-variable waits, signals and
 * broadcasts, and the semaphore waits and posts. Each calls the real function (the next
 * definition after this library: glibc's); once sbw_start has run, it also stores its signal or
 * times its wait (recording.h). Before that, a call costs one relaxed load more than glibc's. */
#include "waits.h"
#include "recording.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stddef.h>
#include <time.h>

#define HOOK __attribute__((visibility("default")))

enum {
    COND_WAIT,
    COND_TIMEDWAIT,
    COND_CLOCKWAIT,
    COND_SIGNAL,
    COND_BROADCAST,
    SEM_WAIT,
    SEM_TIMEDWAIT,
    SEM_CLOCKWAIT,
    SEM_POST,
    NREAL
};

/* The condition variables' default version on x86-64 is GLIBC_2.3.2; a plain lookup may give the
 * GLIBC_2.2.5 one, an older ABI. Elsewhere (aarch64: one version) the versioned lookup fails and
 * the plain one finds the only one. */
static const struct {
    const char *name, *version;
} real_names[NREAL] = {
    [COND_WAIT] = {"pthread_cond_wait", "GLIBC_2.3.2"},
    [COND_TIMEDWAIT] = {"pthread_cond_timedwait", "GLIBC_2.3.2"},
    [COND_CLOCKWAIT] = {"pthread_cond_clockwait", NULL},
    [COND_SIGNAL] = {"pthread_cond_signal", "GLIBC_2.3.2"},
    [COND_BROADCAST] = {"pthread_cond_broadcast", "GLIBC_2.3.2"},
    [SEM_WAIT] = {"sem_wait", NULL},
    [SEM_TIMEDWAIT] = {"sem_timedwait", NULL},
    [SEM_CLOCKWAIT] = {"sem_clockwait", NULL},
    [SEM_POST] = {"sem_post", NULL},
};

static void *_Atomic reals[NREAL];
static _Thread_local int resolving __attribute__((tls_model("initial-exec")));

/* Looks one real function up; any thread may, and all find the same. A lookup that fails may
 * allocate (dlerror's message) and an allocator may signal a condition variable (jemalloc's
 * background thread): such a call, back here on this thread, takes the plain lookup, which
 * allocates nothing for a name that exists. */
static void *resolve(int which)
{
    void *fn = NULL;
    if (real_names[which].version && !resolving) {
        resolving = 1;
        fn = dlvsym(RTLD_NEXT, real_names[which].name, real_names[which].version);
        resolving = 0;
    }
    if (!fn)
        fn = dlsym(RTLD_NEXT, real_names[which].name);
    if (fn)
        atomic_store_explicit(&reals[which], fn, memory_order_release);
    return fn;
}

static void *real(int which)
{
    void *fn = atomic_load_explicit(&reals[which], memory_order_acquire);
    return fn ? fn : resolve(which);
}

/* Every real function looked up; hooks.c's constructor runs it at load, before sbw_start can
 * be called. */
static void resolve_all(void)
{
    for (int i = 0; i < NREAL; i++)
        real(i);
}

/* Every real function looked up at load, so that a first call made later while the loader's
 * lock is held (a library's constructor, during dlopen, waiting for a thread it started) never
 * has to look up; a hook called before this runs (another library's constructor) looks up
 * itself. */
__attribute__((constructor)) static void resolve_at_load(void)
{
    resolve_all();
}

typedef int (*cond_wait_fn)(pthread_cond_t *, pthread_mutex_t *);
typedef int (*cond_timedwait_fn)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
typedef int (*cond_clockwait_fn)(pthread_cond_t *, pthread_mutex_t *, clockid_t,
                                 const struct timespec *);
typedef int (*cond_signal_fn)(pthread_cond_t *);
typedef int (*sem_wait_fn)(sem_t *);
typedef int (*sem_timedwait_fn)(sem_t *, const struct timespec *);
typedef int (*sem_clockwait_fn)(sem_t *, clockid_t, const struct timespec *);

/* One wait as its caller asked it: which function, and the timed ones' clock and deadline. */
typedef struct {
    int which;
    clockid_t clock;
    const struct timespec *abstime;
} wait_call;

static int call_cond_wait(void *fn, const wait_call *w, pthread_cond_t *cond,
                          pthread_mutex_t *mutex)
{
    switch (w->which) {
    case COND_WAIT:
        return ((cond_wait_fn)fn)(cond, mutex);
    case COND_TIMEDWAIT:
        return ((cond_timedwait_fn)fn)(cond, mutex, w->abstime);
    default:
        return ((cond_clockwait_fn)fn)(cond, mutex, w->clock, w->abstime);
    }
}

static int call_sem_wait(void *fn, const wait_call *w, sem_t *sem)
{
    switch (w->which) {
    case SEM_WAIT:
        return ((sem_wait_fn)fn)(sem);
    case SEM_TIMEDWAIT:
        return ((sem_timedwait_fn)fn)(sem, w->abstime);
    default:
        return ((sem_clockwait_fn)fn)(sem, w->clock, w->abstime);
    }
}

/* A condition-variable call that is recorded: started, and not the interpreter's GIL. caller:
 * the hook's return address, in the object that called it. */
static int watched_cond(const void *caller)
{
    return sbw_recording() && !sbw_from_python(caller);
}

/* A wait that returns 0 may have been ended by another thread's signal; ETIMEDOUT and the errors
 * were not. */
static int cond_wait_as(wait_call w, pthread_cond_t *cond, pthread_mutex_t *mutex,
                        const void *caller)
{
    void *fn = real(w.which);
    if (!fn)
        return ENOSYS;
    if (!watched_cond(caller))
        return call_cond_wait(fn, &w, cond, mutex);
    long long start = sbw_now_ns();
    int rc = call_cond_wait(fn, &w, cond, mutex);
    if (rc == 0)
        sbw_note_wake(cond, start, sbw_now_ns(), SBW_COND);
    return rc;
}

HOOK int pthread_cond_wait(pthread_cond_t *cond, pthread_mutex_t *mutex)
{
    wait_call w = {COND_WAIT, 0, NULL};
    return cond_wait_as(w, cond, mutex, __builtin_return_address(0));
}

HOOK int pthread_cond_timedwait(pthread_cond_t *cond, pthread_mutex_t *mutex,
                                const struct timespec *abstime)
{
    wait_call w = {COND_TIMEDWAIT, 0, abstime};
    return cond_wait_as(w, cond, mutex, __builtin_return_address(0));
}

HOOK int pthread_cond_clockwait(pthread_cond_t *cond, pthread_mutex_t *mutex, clockid_t clock,
                                const struct timespec *abstime)
{
    wait_call w = {COND_CLOCKWAIT, clock, abstime};
    return cond_wait_as(w, cond, mutex, __builtin_return_address(0));
}

/* A signal or broadcast is stored before the real call, so that the waiter it wakes finds it. */
static int cond_signal_as(int which, pthread_cond_t *cond, const void *caller)
{
    cond_signal_fn signal = (cond_signal_fn)real(which);
    if (!signal)
        return ENOSYS;
    if (watched_cond(caller))
        sbw_note_signal(cond);
    return signal(cond);
}

HOOK int pthread_cond_signal(pthread_cond_t *cond)
{
    return cond_signal_as(COND_SIGNAL, cond, __builtin_return_address(0));
}

HOOK int pthread_cond_broadcast(pthread_cond_t *cond)
{
    return cond_signal_as(COND_BROADCAST, cond, __builtin_return_address(0));
}

/* A semaphore wait sleeps only when the semaphore is taken: a successful sem_trywait (not
 * interposed) is the whole wait, and no hand-off. */
static int sem_wait_as(wait_call w, sem_t *sem)
{
    void *fn = real(w.which);
    if (!fn) {
        errno = ENOSYS;
        return -1;
    }
    if (!sbw_recording())
        return call_sem_wait(fn, &w, sem);
    int saved = errno;
    if (sem_trywait(sem) == 0)
        return 0;
    errno = saved;
    long long start = sbw_now_ns();
    int rc = call_sem_wait(fn, &w, sem);
    if (rc == 0)
        sbw_note_wake(sem, start, sbw_now_ns(), SBW_SEM);
    return rc;
}

HOOK int sem_wait(sem_t *sem)
{
    wait_call w = {SEM_WAIT, 0, NULL};
    return sem_wait_as(w, sem);
}

HOOK int sem_timedwait(sem_t *sem, const struct timespec *abstime)
{
    wait_call w = {SEM_TIMEDWAIT, 0, abstime};
    return sem_wait_as(w, sem);
}

HOOK int sem_clockwait(sem_t *sem, clockid_t clock, const struct timespec *abstime)
{
    wait_call w = {SEM_CLOCKWAIT, clock, abstime};
    return sem_wait_as(w, sem);
}

/* sem_post is async-signal-safe, and so is what is added: a clock read, a cached thread id and
 * a table slot taken without a lock. Stored before the real post, as a signal is. */
HOOK int sem_post(sem_t *sem)
{
    sem_wait_fn post = (sem_wait_fn)real(SEM_POST);
    if (!post) {
        errno = ENOSYS;
        return -1;
    }
    if (sbw_recording())
        sbw_note_signal(sem);
    return post(sem);
}
