/* libsyncbench_waits.so's futex hand-offs: libc's syscall() interposed. Abseil (absl::Mutex,
 * CondVar, Notification, BlockingCounter: XLA's runtime, so JAX's), nsync and folly do not wait
 * with pthread's condition variables: on Linux they sleep and wake with syscall(SYS_futex, ...)
 * through libc's syscall(), which a preloaded library can interpose (glibc's own locks make the
 * system call inline and never come here). Once sbw_start has run, a FUTEX_WAKE is stored as a
 * signal on its address and a FUTEX_WAIT that slept and returned 0 looks its address up, as a
 * condition variable's wait does (recording.h). Every other system call, and every call before
 * sbw_start, goes straight to libc's syscall() with its six arguments: what that costs is a
 * comparison and, for a futex, one relaxed load. */
#include "waits.h"
#include "recording.h"

#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HOOK __attribute__((visibility("default")))

typedef long (*syscall_fn)(long, ...);

static syscall_fn _Atomic real_syscall;
static _Thread_local int resolving __attribute__((tls_model("initial-exec")));

/* libc's syscall(), looked up once. dlsym of a name that exists allocates nothing; a lookup
 * that comes back here on this thread all the same (an allocator that makes a futex call) finds
 * none rather than recurse. */
static syscall_fn resolve(void)
{
    if (resolving)
        return NULL;
    resolving = 1;
    syscall_fn fn = (syscall_fn)dlsym(RTLD_NEXT, "syscall");
    resolving = 0;
    if (fn)
        atomic_store_explicit(&real_syscall, fn, memory_order_release);
    return fn;
}

/* At load, so that a first call made while the loader's lock is held never has to look up. */
__attribute__((constructor)) static void resolve_at_load(void)
{
    resolve();
}

static long call(syscall_fn fn, long number, const long a[6])
{
    return fn(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* A futex operation while recording: a wake is stored before the real call (its waiter finds
 * it), a wait is timed and, when it slept and something woke it (0), looked up. Requeues and
 * priority-inheritance locks are passed on unrecorded (mutual exclusion, or a waiter moved to
 * another address). */
static long futex_as(syscall_fn fn, const long a[6])
{
    const void *uaddr = (const void *)a[0];
    switch ((int)a[1] & FUTEX_CMD_MASK) {
    case FUTEX_WAKE:
    case FUTEX_WAKE_BITSET:
        sbw_note_signal(uaddr);
        break;
    case FUTEX_WAKE_OP: /* wakes the waiters of both addresses */
        sbw_note_signal(uaddr);
        sbw_note_signal((const void *)a[4]);
        break;
    case FUTEX_WAIT:
    case FUTEX_WAIT_BITSET: {
        long long start = sbw_now_ns();
        long rc = call(fn, SYS_futex, a);
        if (rc == 0)
            sbw_note_wake(uaddr, start, sbw_now_ns(), SBW_FUTEX);
        return rc;
    }
    default:
        break;
    }
    return call(fn, SYS_futex, a);
}

/* glibc's syscall() takes the number and six arguments in registers whatever the caller passed;
 * so does this: reading an argument the caller did not pass reads what is there, as glibc's. */
HOOK long syscall(long number, ...)
{
    va_list ap;
    va_start(ap, number);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    syscall_fn fn = atomic_load_explicit(&real_syscall, memory_order_acquire);
    if (!fn && !(fn = resolve())) {
        errno = ENOSYS;
        return -1;
    }
    /* the interpreter's own futex calls, if any, are its locks (the GIL rule, waits.c) */
    if (number == SYS_futex && sbw_recording() && !sbw_from_python(__builtin_return_address(0)))
        return futex_as(fn, a);
    return call(fn, number, a);
}
