#include "gpu/nccl_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

sb_nccl_api sb_nccl;

/* Where nccl.h is there at build time, the values declared in nccl_api.h are checked against
 * it (the header is not needed to build: the toolkit does not ship it). */
#if defined(__has_include)
#if __has_include(<nccl.h>)
#include <nccl.h>
_Static_assert((int)SB_NCCL_SUCCESS == (int)ncclSuccess, "ncclSuccess");
_Static_assert((int)SB_NCCL_IN_PROGRESS == (int)ncclInProgress, "ncclInProgress");
_Static_assert((int)SB_NCCL_FLOAT == (int)ncclFloat, "ncclFloat");
_Static_assert((int)SB_NCCL_SUM == (int)ncclSum, "ncclSum");
_Static_assert(sizeof(ncclResult_t) == sizeof(sb_nccl_result), "ncclResult_t");
_Static_assert(__builtin_types_compatible_p(ncclComm_t, sb_nccl_comm), "ncclComm_t");
#endif
#endif

static const char *const default_names[] = {"libnccl.so.2", "libnccl.so"};

static struct {
    int tried, ok;
    char why[512];
} st;

/* dlerror's text on one line (it may hold newlines), or `fallback`. */
static void keep_reason(char *why, size_t n, const char *fallback)
{
    const char *e = dlerror();
    snprintf(why, n, "%s", e ? e : fallback);
    for (char *p = why; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
    size_t len = strlen(why);
    while (len && why[len - 1] == ' ')
        why[--len] = '\0';
}

int sb_nccl_open(const char *const *names, int n, char *why, size_t why_len)
{
    void *lib = NULL;
    const char *name = NULL;
    for (int i = 0; i < n && !lib; i++) {
        lib = dlopen(name = names[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib && i == 0)
            keep_reason(why, why_len, names[0]); /* the first name's reason is the one to report */
    }
    if (!lib)
        return -1;
    sb_nccl_api api;
    memset(&api, 0, sizeof api);
    struct {
        void **slot;
        const char *symbol;
        int optional;
    } syms[] = {
        {(void **)&api.get_version, "ncclGetVersion", 0},
        {(void **)&api.comm_init_all, "ncclCommInitAll", 0},
        {(void **)&api.comm_destroy, "ncclCommDestroy", 0},
        {(void **)&api.comm_abort, "ncclCommAbort", 0},
        {(void **)&api.comm_get_async_error, "ncclCommGetAsyncError", 0},
        {(void **)&api.all_reduce, "ncclAllReduce", 0},
        {(void **)&api.get_error_string, "ncclGetErrorString", 0},
        {(void **)&api.get_last_error, "ncclGetLastError", 1},
    };
    for (size_t i = 0; i < sizeof syms / sizeof *syms; i++) {
        dlerror();
        *syms[i].slot = dlsym(lib, syms[i].symbol);
        if (!*syms[i].slot && !syms[i].optional) {
            keep_reason(why, why_len, syms[i].symbol);
            dlclose(lib);
            return -1;
        }
    }
    int version = 0;
    if (api.get_version(&version) != SB_NCCL_SUCCESS || version < 2000) {
        snprintf(why, why_len, "%s is not NCCL 2 (ncclGetVersion: %d)", name, version);
        dlclose(lib);
        return -1;
    }
    sb_nccl = api;
    return 0; /* never closed: communicators may live until exit */
}

int sb_nccl_load(void)
{
    if (!st.tried) {
        st.tried = 1;
        const char *path = getenv("SYNCBENCH_NCCL_LIB");
        if (path && *path)
            st.ok = sb_nccl_open(&path, 1, st.why, sizeof st.why) == 0;
        else
            st.ok = sb_nccl_open(default_names, 2, st.why, sizeof st.why) == 0;
    }
    if (st.ok)
        return 0;
    return sb_fail(SB_EXIT_NODEV,
                   "cannot load NCCL (%s); the collective scenario needs NCCL 2: install it "
                   "(libnccl2) or set SYNCBENCH_NCCL_LIB to its libnccl.so.2",
                   st.why);
}

void sb_nccl_version(char *buf, size_t n)
{
    int v = 0;
    if (!sb_nccl.get_version || sb_nccl.get_version(&v) != SB_NCCL_SUCCESS) {
        snprintf(buf, n, "not loaded");
        return;
    }
    /* 2.8.x and before: 2 * 1000 + minor * 100 + patch; since 2.9: 2 * 10000 + ... */
    if (v >= 10000)
        snprintf(buf, n, "%d.%d.%d", v / 10000, (v % 10000) / 100, v % 100);
    else
        snprintf(buf, n, "%d.%d.%d", v / 1000, (v % 1000) / 100, v % 100);
}

/* NCCL's text for r, with its last error's detail where it has one. */
static void describe(sb_nccl_result r, char *buf, size_t n)
{
    const char *text = sb_nccl.get_error_string ? sb_nccl.get_error_string(r) : "NCCL error";
    const char *last = sb_nccl.get_last_error ? sb_nccl.get_last_error(NULL) : NULL;
    if (last && *last)
        snprintf(buf, n, "%s: %s", text, last);
    else
        snprintf(buf, n, "%s", text);
    for (char *p = buf; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
}

int sb_nccl_init_all(sb_nccl_comm *comms, int n)
{
    int before = 0;
    cudaGetDevice(&before);
    sb_nccl_result r = sb_nccl.comm_init_all(comms, n, NULL);
    cudaSetDevice(before);
    if (r == SB_NCCL_SUCCESS)
        return 0;
    char text[512];
    describe(r, text, sizeof text);
    return sb_fail(SB_EXIT_NODEV, "NCCL cannot drive GPUs 0..%d (ncclCommInitAll: %s)", n - 1,
                   text);
}

int sb_nccl_fail(const char *call, sb_nccl_result r, const char *file, int line)
{
    char text[512];
    describe(r, text, sizeof text);
    const char *ctx = sb_error_context();
    const char *base = strrchr(file, '/');
    return sb_fail(SB_EXIT_FAIL, "%s failed: %s%s%s [%s:%d]", call, text, *ctx ? " in " : "", ctx,
                   base ? base + 1 : file, line);
}
