#include "gpu/nccl_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dynlib.h"
#include "base/envvars.h"
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

int sb_nccl_open(const char *const *names, int n, char *why, size_t why_len)
{
    sb_nccl_api api;
    memset(&api, 0, sizeof api);
    const sb_dynsym syms[] = {
        {"ncclGetVersion", (void **)&api.get_version, 0, NULL},
        {"ncclCommInitAll", (void **)&api.comm_init_all, 0, NULL},
        {"ncclCommDestroy", (void **)&api.comm_destroy, 0, NULL},
        {"ncclCommAbort", (void **)&api.comm_abort, 0, NULL},
        {"ncclCommGetAsyncError", (void **)&api.comm_get_async_error, 0, NULL},
        {"ncclAllReduce", (void **)&api.all_reduce, 0, NULL},
        {"ncclGetErrorString", (void **)&api.get_error_string, 0, NULL},
        {"ncclGetLastError", (void **)&api.get_last_error, 1, NULL},
    };
    const char *name = NULL;
    void *lib = sb_dynlib_load(names, n > 0 ? (size_t)n : 0, syms, sizeof syms / sizeof *syms,
                               &name, why, why_len);
    if (!lib)
        return -1;
    int version = 0;
    if (api.get_version(&version) != SB_NCCL_SUCCESS || version < 2000) {
        snprintf(why, why_len, "%s is not NCCL 2 (ncclGetVersion: %d)", name, version);
        dlclose(lib);
        return -1;
    }
    sb_nccl = api;
    return 0; /* never closed: communicators may live until exit */
}

void sb_nccl_defaults(void)
{
    /* One process drives every GPU, a host thread each (ncclCommInitAll). In NCCL's PARALLEL
     * launch mode a collective step whose result each thread reads back took about 4 ms on two
     * H100s (NCCL 2.28.3: every-step 4000 us a step, never 239), where GROUP took 149 us and a
     * process per GPU in PyTorch 135 us. */
    setenv("NCCL_LAUNCH_MODE", "GROUP", 0);
}

int sb_nccl_load(void)
{
    if (!st.tried) {
        st.tried = 1;
        sb_nccl_defaults();
        const char *path = sb_env_str(SB_ENV_NCCL_LIB);
        if (path)
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
