/* The audit's two libraries: the injection library (CUDA_INJECTION64_PATH) found and proven
 * loadable with its CUPTI, the waits library (LD_PRELOAD) found and checked, and the places
 * either is taken from, which no output may replace. */
#include "cmd/audit_libs.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cupti_find.h"
#include "base/dynlib.h"
#include "base/envvars.h"
#include "base/error.h"
#include "base/textutil.h"

#define LIB_NAME "libsyncbench_audit.so"
#define WAITS_LIB_NAME "libsyncbench_waits.so"

/* The injection library: SYNCBENCH_AUDIT_LIB, else beside the binary (the build folder, or the
 * Python package's syncbench/_bin/), else PREFIX/lib/syncbench/ (make install). Its CUPTI is
 * found and handed on to CMD (cupti_find.h); the library is loaded here once to prove CUPTI
 * loads (exit 3 with dlerror's line if not) and to learn libcupti's path, which
 * NVTX_INJECTION64_PATH needs for the NVTX ranges. */
int sb_audit_find_injection(char *lib, size_t n, char *cupti, size_t m)
{
    const char *env = sb_env_str(SB_ENV_AUDIT_LIB);
    if (env) {
        snprintf(lib, n, "%s", env);
    } else {
        char exe[PATH_MAX];
        ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (len <= 0)
            return sb_fail(SB_EXIT_NODEV, "audit: cannot find the injection library: "
                                          "/proc/self/exe unreadable");
        exe[len] = 0;
        char *slash = strrchr(exe, '/');
        *slash = 0;
        char beside[PATH_MAX];
        if (snprintf(beside, sizeof beside, "%s/%s", exe, LIB_NAME) >= (int)sizeof beside ||
            snprintf(lib, n, "%s/../lib/syncbench/%s", exe, LIB_NAME) >= (int)n)
            return sb_fail(SB_EXIT_NODEV, "audit: the binary's path is too long");
        if (access(beside, R_OK) == 0)
            snprintf(lib, n, "%s", beside);
        else if (access(lib, R_OK) != 0)
            return sb_fail(SB_EXIT_NODEV,
                           "audit: injection library not found: neither %s (make builds it "
                           "beside the binary) nor %s (make install); SYNCBENCH_AUDIT_LIB names "
                           "another",
                           beside, lib);
    }
    if (access(lib, R_OK) != 0)
        return sb_fail(SB_EXIT_NODEV, "audit: injection library %s (SYNCBENCH_AUDIT_LIB): %s", lib,
                       strerror(errno));
    int rc = sb_cupti_prepare(lib); /* CUPTI found where the user has it, loaded first */
    if (rc)
        return rc;
    const char *names[] = {lib};
    char why[PATH_MAX + 256];
    void *h = sb_dynlib_open(names, 1, RTLD_NOW | RTLD_LOCAL, NULL, why, sizeof why);
    if (!h)
        return sb_fail(SB_EXIT_NODEV, "audit: cannot load CUPTI: %s", why);
    void *entry, *sub;
    const sb_dynsym syms[] = {{"InitializeInjection", &entry, 0, NULL},
                              {"cuptiSubscribe", &sub, 0, NULL}};
    Dl_info info;
    if (sb_dynlib_resolve(h, syms, 2, NULL, 0) || !dladdr(sub, &info) || !info.dli_fname)
        return sb_fail(SB_EXIT_NODEV, "audit: %s is not syncbench's injection library", lib);
    snprintf(cupti, m, "%s", info.dli_fname);
    char real[PATH_MAX];
    if (realpath(lib, real))
        snprintf(lib, n, "%s", real);
    return 0; /* the handle stays: unloading CUPTI buys nothing */
}

/* A waits library named by SYNCBENCH_WAITS_LIB checked as the injection library is, before CMD
 * runs: a regular file, an ELF shared object dlopen accepts, exporting the waits API (waits.h).
 * Anything else (a folder, /etc/passwd, another library) would be preloaded into every process
 * CMD starts, each printing ld.so's errors. NULL, or why not (in why). */
static const char *not_waits_lib(const char *path, char *why, size_t n)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return "not a regular file";
    const char *names[] = {path};
    void *h = sb_dynlib_open(names, 1, RTLD_NOW | RTLD_LOCAL, NULL, why, n);
    if (!h)
        return why;
    void *start;
    const sb_dynsym sym = {"sbw_start", &start, 0, NULL};
    if (sb_dynlib_resolve(h, &sym, 1, NULL, 0))
        return "not syncbench's waits library (no sbw_start)";
    return NULL; /* the handle stays, as the injection library's: it is inert until started */
}

/* The waits library (waits/), which records the hand-offs between the program's threads: for the
 * replay (--gpu-activity, --trace), and to name the Python line that waited for a call made on a
 * thread without Python (not with --no-python alone: it would have nothing to name). Found at
 * SYNCBENCH_WAITS_LIB, else beside the injection library (the build folder, or
 * PREFIX/lib/syncbench/ once installed), as an absolute path (CMD may change folder). One named
 * that is not there is exit 3, before anything runs, as the injection library is; one missing
 * beside it is one line, and the audit goes on without it (the replay then reports the plays of
 * several threads as unknown). path is "" then. */
int sb_audit_find_waits(const sb_audit_request *req, const char *audit_lib, char *path, size_t n)
{
    char real[PATH_MAX], shown[PATH_MAX];
    const char *env = sb_env_str(SB_ENV_WAITS_LIB);
    path[0] = 0;
    if (!req->gpu_activity && !req->trace && req->no_python)
        return 0;
    if (env) {
        char why[PATH_MAX + 256];
        const char *bad = !realpath(env, real) || access(real, R_OK) != 0
                              ? strerror(errno)
                              : not_waits_lib(real, why, sizeof why);
        if (bad)
            return sb_fail(SB_EXIT_NODEV, "audit: waits library %s (SYNCBENCH_WAITS_LIB): %s",
                           (sb_escape(env, shown, sizeof shown), shown), bad);
        snprintf(path, n, "%s", real);
        return 0;
    }
    const char *slash = strrchr(audit_lib, '/');
    int dir_len = slash ? (int)(slash - audit_lib) : 0;
    if (snprintf(path, n, "%.*s/%s", dir_len, audit_lib, WAITS_LIB_NAME) >= (int)n ||
        access(path, R_OK) != 0) {
        fprintf(stderr,
                "syncbench: audit: %s not found beside %s: hand-offs between threads will not "
                "be recorded\n",
                WAITS_LIB_NAME, (sb_escape(audit_lib, shown, sizeof shown), shown));
        path[0] = 0;
    }
    return 0;
}

/* syncbench's own files, which no output may replace: the running binary, and the injection and
 * waits libraries wherever sb_audit_find_injection and sb_audit_find_waits would take them from
 * (whether or not they are there, and whether or not this audit loads the waits library).
 * NULL-terminated. */
void sb_audit_own_files(char files[SB_AUDIT_OWN_FILES][PATH_MAX],
                        const char *list[SB_AUDIT_OWN_FILES + 1])
{
    int k = 0;
    char exe[PATH_MAX] = "", lib_dir[PATH_MAX] = "";
    const char *lib = sb_env_str(SB_ENV_AUDIT_LIB), *waits = sb_env_str(SB_ENV_WAITS_LIB);
    if (realpath("/proc/self/exe", exe)) {
        snprintf(files[k++], PATH_MAX, "%s", exe);
        *strrchr(exe, '/') = '\0';
        snprintf(files[k++], PATH_MAX, "%s/%s", exe, LIB_NAME);
        snprintf(files[k++], PATH_MAX, "%s/%s", exe, WAITS_LIB_NAME);
        snprintf(files[k++], PATH_MAX, "%s/../lib/syncbench/%s", exe, LIB_NAME);
        snprintf(files[k++], PATH_MAX, "%s/../lib/syncbench/%s", exe, WAITS_LIB_NAME);
    }
    if (lib) {
        snprintf(files[k++], PATH_MAX, "%s", lib);
        if (realpath(lib, lib_dir) && strrchr(lib_dir, '/')) {
            *strrchr(lib_dir, '/') = '\0';
            snprintf(files[k++], PATH_MAX, "%s/%s", lib_dir, WAITS_LIB_NAME);
        }
    }
    if (waits)
        snprintf(files[k++], PATH_MAX, "%s", waits);
    for (int i = 0; i < k; i++)
        list[i] = files[i];
    list[k] = NULL;
}
