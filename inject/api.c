/* The library's in-process API: what python/syncbench (ctypes) and the audit's calibration call
 * in a running process. Attaching subscribes to CUPTI at run time (no injection needed: a plain
 * python or pytest process); in a process that `syncbench audit` started, the injection's
 * subscription is the one used. Blocks (blocks.c) count the watched calls made inside them. */
#include "api.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cupti.h>

#include "blocks.h"
#include "inject.h"
#include "out.h"
#include "pyframes.h"
#include "stacks.h"
#include "record/classes.h"
#include "record/records.h"
#include "base/clock.h"
#include "base/dynlib.h"
#include "base/envvars.h"

typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_count_fn)(int *);
typedef int (*cu_str_fn)(int, const char **);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int attached; /* 1: attached, -1: could not (why_not says why) */
static char why_not[512];

/* The driver, loaded and initialized here (the program would do the same at its first CUDA
 * call): without a GPU this names the reason instead of CUPTI's. 0, or -1 with why. */
static int driver_ready(char *why, size_t n)
{
    static const char *const libcuda[] = {"libcuda.so.1"};
    char reason[400]; /* room for it in why_not */
    void *cuda = sb_dynlib_open(libcuda, 1, RTLD_NOW | RTLD_GLOBAL, NULL, reason, sizeof reason);
    if (!cuda) {
        snprintf(why, n, "no CUDA driver: libcuda.so.1 cannot be loaded (%s)", reason);
        return -1;
    }
    cu_init_fn init;
    cu_count_fn count;
    cu_str_fn name;
    const sb_dynsym syms[] = {{"cuInit", (void **)&init, 1, NULL},
                              {"cuDeviceGetCount", (void **)&count, 1, NULL},
                              {"cuGetErrorName", (void **)&name, 1, NULL}};
    sb_dynlib_resolve(cuda, syms, sizeof syms / sizeof *syms, NULL, 0); /* checked below */
    int devices = 0, rc = init ? init(0) : -1;
    if (rc == 0 && count)
        rc = count(&devices);
    if (rc != 0 || devices < 1) {
        const char *what = "?";
        if (name && rc > 0)
            name(rc, &what);
        snprintf(why, n, "no usable CUDA device: cuInit: %s", rc ? what : "no device");
        return -1;
    }
    return 0;
}

API int syncbench_attach(char *why, size_t n)
{
    if (sba_forked()) {
        snprintf(why, n,
                 "this process is a child forked from a CUDA process: CUDA cannot be "
                 "used in it, and no call is recorded");
        return -1;
    }
    pthread_mutex_lock(&lock);
    if (!attached) {
        attached = driver_ready(why_not, sizeof why_not) == 0 ? 1 : -1;
        if (attached > 0 && !sba_out_recording()) { /* injected: InitializeInjection did this */
            sba_stacks_init((int)sb_env_long(SB_ENV_AUDIT_DEPTH, NULL));
            if (sb_env_long(SB_ENV_AUDIT_PYTHON, NULL)) {
                sba_py_init();
                sba_py_warn();
            }
        }
        if (attached > 0 && sba_subscribe(why_not, sizeof why_not) != 0)
            attached = -1;
        if (attached > 0) {
            sba_blocks_init();
            sba_stacks_keep_lines();
            sba_py_keep_lines();
        }
    }
    int rc = attached > 0 ? 0 : -1;
    if (rc)
        snprintf(why, n, "%s", why_not);
    pthread_mutex_unlock(&lock);
    return rc;
}

API int syncbench_block_begin(int all_threads)
{
    if (sba_forked())
        return SYNCBENCH_FORKED;
    if (__atomic_load_n(&attached, __ATOMIC_ACQUIRE) <= 0)
        return SYNCBENCH_NOT_ATTACHED;
    int id = sba_block_open(all_threads);
    return id >= 0 ? id : SYNCBENCH_TOO_MANY;
}

API int syncbench_block_counts(int id, long long *counts)
{
    return sba_block_counts(id, counts);
}

/* The block's calls as a record stream of one process (records.h), which `syncbench audit
 * --from` reads: the process line, the stacks, the calls, the end line. */
static char *as_stream(const char *calls, size_t len, size_t *out_len)
{
    char head[512], tail[256];
    uint64_t c = 0;
    cuptiGetTimestamp(&c);
    long long m = sb_now_ns();
    int h = snprintf(
        head, sizeof head,
        "{\"t\":\"proc\",\"v\":%d,\"pid\":%d,\"ppid\":%d,\"rank\":-1,"
        "\"local_rank\":-1,\"cmd\":\"(a syncbench block)\",\"clock_ns\":%llu,"
        "\"mono_ns\":%lld,\"mode\":\"count\",\"kernels\":0,\"launches\":0,\"symsize\":1}\n",
        SB_AUDIT_FORMAT_VERSION, (int)getpid(), (int)getppid(), (unsigned long long)c, m);
    int t = snprintf(tail, sizeof tail,
                     "{\"t\":\"end\",\"clock_ns\":%llu,\"mono_ns\":%lld,\"why\":\"exit\","
                     "\"dropped\":0}\n",
                     (unsigned long long)c, m);
    char *s = malloc((size_t)h + len + (size_t)t + 1);
    if (!s)
        return NULL;
    memcpy(s, head, (size_t)h);
    memcpy(s + h, calls, len);
    memcpy(s + h + len, tail, (size_t)t + 1);
    *out_len = (size_t)h + len + (size_t)t;
    return s;
}

API int syncbench_block_end(int id, long long *counts, char **text, size_t *len)
{
    char *calls = NULL;
    size_t n = 0;
    if (sba_block_close(id, counts, text ? &calls : NULL, &n) != 0)
        return -1;
    if (text) {
        *text = calls ? as_stream(calls, n, len) : NULL;
        if (!*text)
            *len = 0;
    }
    free(calls);
    long long blocking = 0;
    for (int c = 0; c < SB_AUDIT_NCLASS; c++)
        blocking += sb_audit_blocking((sb_audit_class)c) ? counts[c] : 0;
    return blocking > INT_MAX ? INT_MAX : (int)blocking;
}

API void syncbench_free(void *p)
{
    free(p);
}

API int syncbench_classes(void)
{
    return SB_AUDIT_NCLASS;
}

API const char *syncbench_class_name(int cls)
{
    return sb_audit_class_name((sb_audit_class)cls);
}

API int syncbench_class_blocking(int cls)
{
    return cls >= 0 && cls < SB_AUDIT_NCLASS && sb_audit_blocking((sb_audit_class)cls);
}

API int syncbench_calibration_recording(int on)
{
    if (!sba_out_recording())
        return -1;
    sba_recording(on);
    return 0;
}
