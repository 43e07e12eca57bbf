/* `syncbench audit [options] -- CMD [ARGS...]`: options -> outputs checked -> CMD resolved ->
 * injection library found and loadable (CUPTI) -> CMD run with CUDA_INJECTION64_PATH set, every
 * descendant waited for (child subreaper) -> record streams read, analyzed, reported -> gate ->
 * under GitHub Actions, the annotations and the step summary.
 * The injection library (inject/) records; src/model/ reads, src/analyze/ analyzes, src/report/
 * writes. */
#include "cmd/audit.h"
#include "cmd/audit_baseline.h"
#include "cmd/audit_calibrate.h"
#include "cmd/audit_merge.h"
#include "cli/audit_merge_args.h"
#include "base/arrays.h"

#include <dlfcn.h>
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "report/report.h"
#include "analyze/frameworks.h"
#include "record/records.h"
#include "cmd/audit_listen.h"
#include "cmd/cupti_find.h"
#include "base/clock.h"
#include "base/dynlib.h"
#include "base/env.h"
#include "base/envvars.h"
#include "base/error.h"
#include "base/nvml.h"
#include "base/textutil.h"
#include "cli/audit_args.h"
#include "sinks/github.h"
#include "sinks/outfile.h"
#include "sinks/outset.h"
#include "outputs/formats.h"

#define LIB_NAME "libsyncbench_audit.so"
#define WAITS_LIB_NAME "libsyncbench_waits.so"
/* After CMD ends, how long the CUDA processes it left (reparented to us) get to finish, and
 * how long the descendants that never initialized CUDA are waited for (a program it started in
 * the background may yet initialize CUDA). */
#define DESCENDANT_WAIT_S 30
#define NON_CUDA_GRACE_S 2

/* CMD as execvp would find it: 127 when it is nowhere, 126 when it is there but cannot run. */
static int resolve_command(const char *name, char *path, size_t n)
{
    struct stat st;
    if (strchr(name, '/')) {
        snprintf(path, n, "%s", name);
        if (stat(path, &st) != 0)
            return sb_fail(127, "audit: %s: %s", name, strerror(errno));
        if (S_ISDIR(st.st_mode) || access(path, X_OK) != 0)
            return sb_fail(126, "audit: %s: %s", name,
                           S_ISDIR(st.st_mode) ? "is a directory" : strerror(EACCES));
        return 0;
    }
    const char *env_path = getenv("PATH");
    char dirs[8192];
    snprintf(dirs, sizeof dirs, "%s", env_path && *env_path ? env_path : "/usr/bin:/bin");
    int found_not_exec = 0;
    /* strsep, not strtok: an empty entry is the current folder, as execvp takes it */
    for (char *rest = dirs, *d; (d = strsep(&rest, ":"));) {
        snprintf(path, n, "%s/%s", *d ? d : ".", name);
        if (stat(path, &st) != 0 || S_ISDIR(st.st_mode))
            continue;
        if (access(path, X_OK) == 0)
            return 0;
        found_not_exec = 1;
    }
    if (found_not_exec)
        return sb_fail(126, "audit: %s: %s", name, strerror(EACCES));
    return sb_fail(127, "audit: %s: command not found", name);
}

/* The injection library: SYNCBENCH_AUDIT_LIB, else beside the binary (the build folder, or the
 * Python package's syncbench/_bin/), else PREFIX/lib/syncbench/ (make install). Its CUPTI is
 * found and handed on to CMD (cupti_find.h); the library is loaded here once to prove CUPTI
 * loads (exit 3 with dlerror's line if not) and to learn libcupti's path, which
 * NVTX_INJECTION64_PATH needs for the NVTX ranges. */
static int find_injection(char *lib, size_t n, char *cupti, size_t m)
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
static int find_waits(const sb_audit_request *req, const char *audit_lib, char *path, size_t n)
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

/* CMD's environment with the waits library preloaded: this process's, LD_PRELOAD replaced by the
 * library and then the user's own list (ld.so takes colons or spaces between). The launcher's
 * own environment keeps the user's (the calibration and addr2line run without the library).
 * NULL on no memory. */
static char **preloading_environment(const char *waits)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 2, sizeof *env);
    const char *old = getenv("LD_PRELOAD");
    char *preload = NULL;
    if (!env || asprintf(&preload, "LD_PRELOAD=%s%s%s", waits, old && *old ? ":" : "",
                         old ? old : "") < 0) {
        free(env);
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "LD_PRELOAD=", 11))
            env[k++] = environ[i];
    env[k] = preload;
    return env;
}

/* CMD's environment with the waits library (find_waits) preloaded; NULL without one: CMD runs in
 * this environment. */
static char **command_environment(const char *waits)
{
    if (!*waits)
        return NULL;
    char **env = preloading_environment(waits);
    if (!env)
        fprintf(stderr, "syncbench: audit: out of memory: hand-offs between threads will not be "
                        "recorded\n");
    return env;
}

static void free_environment(char **env)
{
    size_t k = 0;
    while (env && env[k])
        k++;
    if (k)
        free(env[k - 1]); /* the LD_PRELOAD entry, the only one allocated here */
    free(env);
}

/* SIGTERM or SIGHUP sent to the audit: noted here, passed on by wait_all to CMD and to every
 * process of the run that is the audit's child (orphans come to it); the audit reports once
 * they are gone. A signal that comes before CMD starts is passed on once it has. */
static volatile sig_atomic_t pending_sig;
/* The dispositions the audit was started with; CMD gets them back (an ignored SIGHUP under
 * nohup stays ignored, a background job's ignored SIGINT too). */
static struct sigaction start_int, start_quit, start_term, start_hup, start_pipe;

static void note_signal(int sig)
{
    pending_sig = sig;
}

/* Every descendant of this process (parent links from /proc/PID/stat, followed down from
 * here), once each: CMD, what it started, and what they started, whether their parents still
 * run or they were orphaned to the audit. */
#define MAX_SIGNALED 4096
#define MAX_PROCS 65536
static pid_t signaled[MAX_SIGNALED];
static int nsignaled;

static int signal_once(pid_t pid, int sig)
{
    for (int i = 0; i < nsignaled; i++)
        if (signaled[i] == pid)
            return 0;
    if (nsignaled < MAX_SIGNALED)
        signaled[nsignaled++] = pid;
    return kill(pid, sig);
}

typedef struct {
    pid_t pid, ppid;
} proc_link;

static void signal_descendants(int sig)
{
    static proc_link procs[MAX_PROCS];
    int n = 0;
    DIR *d = opendir("/proc");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) && n < MAX_PROCS) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = 0;
        char *paren = strrchr(buf, ')'); /* the command name may hold spaces and parens */
        int ppid;
        char state;
        if (paren && sscanf(paren + 1, " %c %d", &state, &ppid) == 2 && state != 'Z')
            procs[n++] = (proc_link){(pid_t)pid, (pid_t)ppid};
    }
    closedir(d);
    /* breadth first from this process: a marked process marks its children */
    static pid_t queue[MAX_PROCS];
    int head = 0, tail = 0;
    queue[tail++] = getpid();
    while (head < tail) {
        pid_t parent = queue[head++];
        for (int k = 0; k < n && tail < MAX_PROCS; k++)
            if (procs[k].ppid == parent) {
                queue[tail++] = procs[k].pid;
                signal_once(procs[k].pid, sig);
            }
    }
}

static int set_env(const sb_audit_request *req, const char *lib, const char *cupti, const char *dir,
                   const char *sock)
{
    char shown[PATH_MAX];
    const char *old = getenv("CUDA_INJECTION64_PATH");
    if (old && *old && strcmp(old, lib))
        fprintf(stderr, "syncbench: audit: replacing CUDA_INJECTION64_PATH=%s\n",
                (sb_escape(old, shown, sizeof shown), shown));
    old = getenv("NVTX_INJECTION64_PATH");
    if (old && *old && strcmp(old, cupti))
        fprintf(stderr, "syncbench: audit: replacing NVTX_INJECTION64_PATH=%s\n",
                (sb_escape(old, shown, sizeof shown), shown));
    char depth[32];
    snprintf(depth, sizeof depth, "%lld", req->depth);
    if (setenv("CUDA_INJECTION64_PATH", lib, 1) || setenv("NVTX_INJECTION64_PATH", cupti, 1) ||
        setenv(SB_AUDIT_ENV_DIR, dir, 1) ||
        setenv(SB_AUDIT_ENV_MODE, req->trace ? "trace" : "count", 1) ||
        setenv(SB_AUDIT_ENV_DEPTH, depth, 1) ||
        setenv(SB_AUDIT_ENV_GPU, req->gpu_activity ? "3" : "0", 1) ||
        setenv(SB_AUDIT_ENV_PYTHON, req->no_python ? "0" : "1", 1) ||
        setenv(SB_AUDIT_ENV_SOCK, sock, 1))
        return sb_fail(SB_EXIT_FAIL, "audit: setenv: %s", strerror(errno));
    return 0;
}

/* Starts CMD with env (NULL: this process's environment); an exec failure comes back through a
 * close-on-exec pipe as its errno. */
static int start_command(char **cmd, char **env, pid_t *pid)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return sb_fail(SB_EXIT_FAIL, "audit: pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t c = fork();
    if (c < 0)
        return sb_fail(SB_EXIT_FAIL, "audit: fork: %s", strerror(errno));
    if (c == 0) {
        close(p[0]);
        sigaction(SIGINT, &start_int, NULL);
        sigaction(SIGQUIT, &start_quit, NULL);
        sigaction(SIGTERM, &start_term, NULL);
        sigaction(SIGHUP, &start_hup, NULL);
        sigaction(SIGPIPE, &start_pipe, NULL);
        execvpe(cmd[0], cmd, env ? env : environ);
        int e = errno;
        if (write(p[1], &e, sizeof e) < 0)
            _exit(127);
        _exit(127);
    }
    close(p[1]);
    int e = 0;
    ssize_t r;
    while ((r = read(p[0], &e, sizeof e)) < 0 && errno == EINTR)
        ;
    close(p[0]);
    if (r == (ssize_t)sizeof e) {
        waitpid(c, NULL, 0);
        return sb_fail(e == ENOENT ? 127 : 126, "audit: %s: %s", cmd[0], strerror(e));
    }
    *pid = c;
    return 0;
}

/* Waits for CMD, then for the CUDA processes it left (they were reparented to us) at most
 * DESCENDANT_WAIT_S, and for the others NON_CUDA_GRACE_S. Returns CMD's wait status; *left =
 * CUDA processes still running. */
static int wait_all(pid_t cmd, sb_audit_listener *heard, int *left)
{
    int status = 0, cmd_done = 0;
    long long deadline = 0, grace = 0;
    *left = 0;
    int passed_on = 0; /* a signal passed on: the orphans that come later get it too */
    for (;;) {
        if (pending_sig) {
            passed_on = pending_sig;
            pending_sig = 0;
            nsignaled = 0;
            signal_descendants(passed_on); /* CMD among them while it runs */
        } else if (passed_on) {
            signal_descendants(passed_on); /* those started or orphaned since */
        }
        sb_audit_listen_poll(heard);
        int st;
        /* never blocked in waitpid: a signal that lands between the check above and the wait
         * is passed on at the next turn, 20 ms later */
        pid_t w = waitpid(-1, &st, WNOHANG);
        if (w == cmd) {
            status = st;
            cmd_done = 1;
            deadline = sb_now_ns() + DESCENDANT_WAIT_S * 1000000000ll;
            grace = sb_now_ns() + NON_CUDA_GRACE_S * 1000000000ll;
            continue;
        }
        if (w > 0)
            continue;
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) /* ECHILD: nobody left */
            break;
        if (cmd_done) {
            int cuda = sb_audit_listen_alive(heard);
            if (!cuda && sb_now_ns() > grace)
                break; /* only processes that never used CUDA are left */
            if (sb_now_ns() > deadline) {
                *left = cuda;
                break;
            }
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return status;
}

/* The temporary record folder: only proc-*.jsonl files are written there. */
static void remove_records(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[PATH_MAX + 300];
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, "proc-", 5)) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    closedir(d);
    rmdir(dir);
}

/* The folder as an absolute path: CMD may change folder before it initializes CUDA. */
static int absolute(char *dir, size_t n, const char *what)
{
    char real[PATH_MAX];
    if (!realpath(dir, real))
        return sb_fail(SB_EXIT_USAGE, "audit: %s %s: %s", what, dir, strerror(errno));
    if (strlen(real) >= n)
        return sb_fail(SB_EXIT_USAGE, "audit: %s %s: path too long", what, dir);
    memcpy(dir, real, strlen(real) + 1);
    return 0;
}

static int make_records_dir(const sb_audit_request *req, char *dir, size_t n)
{
    if (req->keep) {
        snprintf(dir, n, "%s", req->keep);
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            return sb_fail(SB_EXIT_USAGE, "audit: --keep %s: %s", req->keep, strerror(errno));
        struct stat st;
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK) != 0)
            return sb_fail(SB_EXIT_USAGE, "audit: --keep %s: not a writable folder", req->keep);
        /* every proc-*.jsonl there is read: an earlier audit's would be counted again */
        DIR *d = opendir(dir);
        struct dirent *e;
        while (d && (e = readdir(d)))
            if (!strncmp(e->d_name, "proc-", 5)) {
                char name[256]; /* the entry is gone with the folder's handle */
                snprintf(name, sizeof name, "%s", e->d_name);
                closedir(d);
                return sb_fail(SB_EXIT_USAGE,
                               "audit: --keep %s: holds an earlier audit's records (%s); "
                               "name an empty or new folder",
                               req->keep, name);
            }
        if (d)
            closedir(d);
        return absolute(dir, n, "--keep");
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, n, "%s/syncbench-audit-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return sb_fail(SB_EXIT_FAIL, "audit: cannot create a folder in %s: %s",
                       tmp && *tmp ? tmp : "/tmp", strerror(errno));
    return absolute(dir, n, "TMPDIR");
}

typedef struct {
    const char *opt, *path;
    const sb_output_format *format; /* its row of the output registry */
    sb_out_file out;
} output;

/* --baseline and --update-baseline (cmd/audit_baseline.c) */
static sb_audit_bl baseline;

/* $GITHUB_STEP_SUMMARY under --ci github, checked as the outputs are (state SB_OUT_NONE when
 * there is none): the summary is appended to it at the end. */
static sb_out_file step_summary;

enum { OWN_FILES = 8 };

/* syncbench's own files, which no output may replace: the running binary, and the injection and
 * waits libraries wherever find_injection and find_waits would take them from (whether or not
 * they are there, and whether or not this audit loads the waits library). NULL-terminated. */
static void own_files(char files[OWN_FILES][PATH_MAX], const char *list[OWN_FILES + 1])
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

/* An output (or $GITHUB_STEP_SUMMARY) must not overwrite what the run reads or runs: CMD itself,
 * a file its command line names (`audit --csv victim.sh -- ./victim.sh`, `--json in.txt -- cat
 * --file=in.txt`, `-- sh -c 'cat in.txt'`: sinks/outset.h), or syncbench's own files. */
static int refuse_inputs(output *outs, int nout, const char *cmd_path, char **cmd)
{
    static char files[OWN_FILES][PATH_MAX];
    const char *own[OWN_FILES + 1], *command[] = {cmd_path, NULL};
    char **named = NULL;
    own_files(files, own);
    int rc = sb_outset_command_inputs(cmd, &named);
    for (int i = 0; !rc && i <= nout; i++) {
        const sb_out_file *o = i < nout ? &outs[i].out : &step_summary;
        if (o->state == SB_OUT_NONE)
            continue;
        if (!(rc = sb_out_check_inputs(o, command)) &&
            !(rc = sb_out_check_inputs(o, (const char *const *)named)))
            rc = sb_out_check_files(o, own, "is syncbench's own file");
    }
    if (!rc && baseline.out.state && !(rc = sb_out_check_inputs(&baseline.out, command)) &&
        !(rc = sb_out_check_inputs(&baseline.out, (const char *const *)named)))
        rc = sb_out_check_files(&baseline.out, own, "is syncbench's own file");
    sb_outset_free_paths(named);
    return rc;
}

/* The command line as one string, for the report. */
static void join_command(char **cmd, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; cmd[i] && len + 1 < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? " " : "", cmd[i]);
}

/* CMD's exit status as audit's: its code, or 128 + the signal that ended it. */
static int exit_code_of(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return SB_EXIT_FAIL;
}

/* A CMD that died of SIGINT: the audit, having reported, dies of SIGINT too, so that a shell
 * loop stops on Ctrl-C as it would without the audit (shells stop a loop only for a child
 * that died of SIGINT). */
static void die_of_sigint(void)
{
    fflush(stdout);
    fflush(stderr);
    signal(SIGINT, SIG_DFL);
    raise(SIGINT);
}

/* GitHub Actions: the gate's verdicts as annotations on stdout (stderr when a report takes
 * stdout: they must not land inside it; the runner reads workflow commands on both), the
 * summary appended to $GITHUB_STEP_SUMMARY, both by the one GitHub writer. */
static int report_github(const sb_audit_analysis *an, const sb_audit_opts *o, const sb_env *env,
                         const output *outs, int nout)
{
    FILE *to = stdout;
    for (int i = 0; i < nout; i++)
        if (outs[i].out.to_stdout)
            to = stderr;
    sb_ci_verdicts l;
    int rc = sb_audit_gate_verdicts(an, o, &l);
    if (rc)
        return rc;
    sb_memtext m;
    if (!sb_memtext_open(&m)) {
        sb_ci_verdicts_free(&l);
        return sb_fail(SB_EXIT_FAIL, "audit: out of memory");
    }
    rc = sb_audit_write_summary(m.f, an, o, env);
    char *md = sb_memtext_close(&m);
    if (!rc && !md)
        rc = sb_fail(SB_EXIT_FAIL, "audit: out of memory");
    if (!rc)
        rc = sb_gh_write(to, &l, md, m.len);
    free(md);
    sb_ci_verdicts_free(&l);
    return rc;
}

/* One report. On stdout under GitHub, through the guard (sinks/github.h): no text of the
 * records (a range, a file, a symbol) begins a line GitHub would run as a command. */
static int write_output(const output *out, const sb_audit_analysis *an,
                        const sb_audit_opts *o, const sb_env *env, int github)
{
    FILE *f = github && out->out.to_stdout ? sb_gh_guard(out->out.f) : out->out.f;
    if (!f)
        return sb_fail(SB_EXIT_FAIL, "audit: out of memory");
    int rc = out->format->audit(f, an, o, env);
    if (f != out->out.f && fclose(f) != 0 && !rc)
        rc = sb_fail(SB_EXIT_FAIL, "audit: writing to stdout failed");
    return rc;
}

static int analyze_and_report(const sb_audit_request *req, const char *dir, output *outs, int nout,
                              const char *cmdline, double wall_s, long long t0,
                              const sb_audit_listener *heard, int *gate_rc)
{
    sb_audit_run *run = NULL;
    int rc = sb_audit_load_dir(dir, &run);
    if (!rc && (rc = sb_audit_set_status(run, heard->procs, heard->n)) != 0)
        sb_audit_free(run);
    if (!rc && req->from && !sb_audit_nprocs(run)) { /* nothing to report, nothing to gate */
        char shown[PATH_MAX];
        rc = sb_fail(SB_EXIT_USAGE, "audit: --from %s: no records (proc-*.jsonl) in the folder",
                     (sb_escape(req->from, shown, sizeof shown), shown));
        sb_audit_free(run);
    }
    if (rc)
        return rc;
    if (wall_s < 0) /* --from: the records' own span, their first command */
        sb_audit_records_span(run, &cmdline, &wall_s);
    sb_audit_set_wall(run, cmdline, wall_s, t0);
    sb_audit_opts o;
    sb_audit_opts_default(&o);
    o.max_syncs = req->max_syncs;
    o.range = req->range;
    o.top = (int)req->top;
    o.py_innermost = req->py_site && !strcmp(req->py_site, "innermost");
    o.include_compile = req->include_compile;
    o.allow_no_cuda = req->allow_no_cuda;
    o.baseline = baseline.gate;
    o.baseline_skip_first = (long)req->skip_first;
    sb_audit_analysis *an = NULL;
    rc = sb_audit_analyze(run, &o, &an);
    sb_env env;
    memset(&env, 0, sizeof env);
    sb_env_host(&env, 0, NULL);
    /* cut on a character boundary when the command line is longer than the record's field */
    size_t room = sizeof env.command_line - sizeof "syncbench audit -- ";
    snprintf(env.command_line, sizeof env.command_line, "syncbench audit -- %.*s",
             (int)(strlen(cmdline) < room ? strlen(cmdline) : room), cmdline);
    /* the driver from NVML, where there is one; the audit itself opens no CUDA context */
    if (sb_nvml_open() == 0) {
        sb_nvml_driver_version(env.driver, sizeof env.driver);
        sb_nvml_close();
    }
    if (!rc && !req->quiet)
        sb_audit_write_table(stderr, an, &o);
    int github = sb_ci_github(req->ci);
    for (int i = 0; !rc && i < nout; i++) {
        if ((rc = sb_out_open(&outs[i].out, &env)) != 0)
            break;
        int wrc = write_output(&outs[i], an, &o, &env, github);
        rc = wrc ? wrc : sb_out_commit(&outs[i].out);
        if (rc)
            sb_out_abort(&outs[i].out);
    }
    /* with no process that used CUDA the gate fails, nothing was watched (a whole-run gate
     * passes with --allow-no-cuda; a range gate fails then too: its range was never entered) */
    if (!rc)
        *gate_rc = sb_audit_gate(an, &o, stderr);
    if (!rc && github)
        rc = report_github(an, &o, &env, outs, nout);
    if (!rc)
        rc = sb_audit_bl_write(req, &baseline, run, &o);
    sb_audit_analysis_free(an);
    sb_audit_free(run);
    return rc;
}

/* The files of a records folder the analysis reads (proc-*.jsonl, calibration.json), as inputs
 * an output must not be: a record may be a link to a file elsewhere, which the report's rename
 * would replace. NULL-terminated in paths (the caller frees each); 0, or exit 1. */
static int folder_inputs(const char *dir, char ***paths)
{
    *paths = NULL;
    DIR *d = opendir(dir);
    if (!d)
        return 0; /* --keep's folder does not exist yet; --from's is checked by report_kept */
    size_t n = 0, cap = 0;
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d))) {
        if (strncmp(e->d_name, "proc-", 5) && strcmp(e->d_name, SB_AUDIT_CALIBRATION_FILE))
            continue;
        char *path = NULL;
        if (sb_grow(paths, &cap, n + 1, sizeof **paths) < 0 ||
            asprintf(&path, "%s/%s", dir, e->d_name) < 0)
            rc = sb_fail(SB_EXIT_FAIL, "audit: out of memory");
        else
            (*paths)[n++] = path, (*paths)[n] = NULL;
    }
    closedir(d);
    return rc;
}

static void free_inputs(char **paths)
{
    for (size_t i = 0; paths && paths[i]; i++)
        free(paths[i]);
    free(paths);
}

/* --update-baseline's file, checked as an output is: not another output's, not in the records'
 * folder, not one of its files, not --rules' or --baseline's. */
static int prepare_update(const sb_audit_request *req, const char *folder, char **inputs,
                          sb_out_file *const *earlier, size_t n, const sb_outset_rules *rules)
{
    const char *path = req->update_baseline;
    int rc = sb_outset_add(&baseline.out, "update-baseline", path, rules, earlier, n);
    if (!rc && folder)
        rc = sb_out_check_folder(&baseline.out, req->from ? "--from" : "--keep", folder);
    if (!rc)
        rc = sb_out_check_inputs(&baseline.out, (const char *const *)inputs);
    const char *files[3] = {NULL};
    size_t k = 0;
    if (req->rules)
        files[k++] = req->rules;
    if (req->baseline)
        files[k++] = req->baseline;
    if (!rc)
        rc = sb_out_check_inputs(&baseline.out, files);
    return rc;
}

/* The outputs, checked before anything is read or run: writable, no two the same file, none
 * in the folder whose records are read (--from) or written and read (--keep), where it would
 * replace a record or be read as one; $GITHUB_STEP_SUMMARY (--ci github) as one of them. */
static int prepare_outputs(const sb_audit_request *req, output *outs, int *nout)
{
    const char *folder = req->from ? req->from : req->keep;
    char **inputs = NULL;
    int rc = folder ? folder_inputs(folder, &inputs) : 0, n = 0;
    sb_outset_rules rules = {"audit: ", SB_CLASH_WRITE_SAME, NULL};
    sb_out_file *earlier[SB_OUTPUT_FORMATS_MAX];
    for (const sb_output_format *f = sb_output_formats; !rc && f->name; f++) {
        const char *path = f->audit ? sb_optdefs_text(sb_audit_optdefs(), req, f->option) : NULL;
        if (!path)
            continue;
        outs[n] = (output){.opt = f->option, .path = path, .format = f};
        rc = sb_outset_add(&outs[n].out, f->option, path, &rules, earlier, (size_t)n);
        if (!rc && folder)
            rc = sb_out_check_folder(&outs[n].out, req->from ? "--from" : "--keep", folder);
        if (!rc) /* a record that links to a file elsewhere is that file */
            rc = sb_out_check_inputs(&outs[n].out, (const char *const *)inputs);
        earlier[n] = &outs[n].out;
        n += !rc;
    }
    if (!rc && sb_ci_github(req->ci)) {
        rc = sb_outset_add_summary(&step_summary, &rules, earlier, (size_t)n);
        if (!rc && step_summary.state && folder)
            rc = sb_out_check_folder(&step_summary, req->from ? "--from" : "--keep", folder);
        if (!rc && step_summary.state)
            rc = sb_out_check_inputs(&step_summary, (const char *const *)inputs);
    }
    if (!rc && req->update_baseline) /* not a report: the baseline, checked as one is */
        rc = prepare_update(req, folder, inputs, earlier, (size_t)n, &rules);
    free_inputs(inputs);
    *nout = n;
    return rc;
}

/* --from: report kept records; nothing runs, nothing is heard. */
static int report_kept(const sb_audit_request *req, output *outs, int nout)
{
    static sb_audit_listener none;
    struct stat st;
    if (stat(req->from, &st) != 0 || !S_ISDIR(st.st_mode))
        return sb_fail(SB_EXIT_USAGE, "audit: --from %s: %s", req->from,
                       errno && stat(req->from, &st) != 0 ? strerror(errno) : "not a folder");
    int gate_rc = 0;
    int rc = analyze_and_report(req, req->from, outs, nout, "", -1, 0, &none, &gate_rc);
    return rc ? rc : gate_rc;
}

/* --rules FILE: the user's rows of the framework table, read before anything runs (a bad file
 * is one line and exit 2, CMD never started) and kept for the analysis until the audit ends. */
static int load_rules(const sb_audit_request *req)
{
    if (!req->rules)
        return 0;
    static sb_fw_row *rows;
    size_t n = 0;
    char err[1024];
    if (sb_fw_file_load(req->rules, &rows, &n, err, sizeof err) != 0)
        return sb_fail(SB_EXIT_USAGE, "audit: %s", err);
    sb_fw_use_user_rows(rows, n);
    return 0;
}

/* --gpu-activity's calibration (audit_calibrate.c), unless SYNCBENCH_ACTIVITY_CALIBRATE=0, a
 * developer's knob (docs/dev/testing.md) for timing many audited runs of a program whose replay
 * is not wanted: said on stderr, so that such a run is not taken for a whole one. */
static void calibrate(const char *dir)
{
    if (sb_env_is(SB_ENV_ACTIVITY_CALIBRATE, "0"))
        fprintf(stderr, "syncbench: audit: SYNCBENCH_ACTIVITY_CALIBRATE=0: no calibration; the "
                        "replay takes out only the time each call recorded\n");
    else
        sb_audit_calibrate(dir);
}

/* A closed pipe on an output (`--trace - | head -c1`) is a write error: one line, exit 1, as in
 * run and compare. CMD gets the disposition the audit was started with back. */
static void ignore_sigpipe(void)
{
    struct sigaction ignore;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &start_pipe);
}

int sb_cmd_audit(int argc, char **argv)
{
    ignore_sigpipe();
    sb_audit_request req;
    int rc = sb_audit_parse_args(argc, argv, &req);
    if (rc)
        return rc;
    if (req.help) {
        sb_audit_usage(stdout);
        return 0;
    }
    if (req.merge) { /* the reports of several audits: nothing runs */
        rc = sb_audit_merge_args(argc, argv, &req);
        return rc ? rc : sb_cmd_audit_merge(&req);
    }
    if ((rc = load_rules(&req)) != 0)
        return rc;
    static output outs[SB_OUTPUT_FORMATS_MAX];
    int nout = 0;
    if ((rc = prepare_outputs(&req, outs, &nout)) != 0 ||
        (rc = sb_audit_bl_load(&req, &baseline)) != 0)
        return rc;
    if (req.from)
        return report_kept(&req, outs, nout);
    char path[PATH_MAX], lib[PATH_MAX], cupti[PATH_MAX], dir[PATH_MAX];
    if ((rc = resolve_command(req.cmd[0], path, sizeof path)) != 0)
        return rc;
    if ((rc = refuse_inputs(outs, nout, path, req.cmd)) != 0)
        return rc;
    if ((rc = find_injection(lib, sizeof lib, cupti, sizeof cupti)) != 0)
        return rc;
    char waits[PATH_MAX];
    if ((rc = find_waits(&req, lib, waits, sizeof waits)) != 0)
        return rc;
    if ((rc = make_records_dir(&req, dir, sizeof dir)) != 0)
        return rc;
    static sb_audit_listener heard;
    if ((rc = sb_audit_listen(&heard)) != 0)
        return rc;
    if ((rc = set_env(&req, lib, cupti, dir, heard.name)) != 0)
        return rc;
    if (req.gpu_activity)
        calibrate(dir);
    char **cmd_env = command_environment(waits);

    /* descendants that outlive their parents come to us, so that torchrun's workers and a
     * shell script's programs are waited for too */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = SIG_IGN; /* Ctrl-C reaches CMD from the terminal; the audit reports after */
    sigaction(SIGINT, &sa, &start_int);
    sigaction(SIGQUIT, &sa, &start_quit);
    sigaction(SIGTERM, NULL, &start_term);
    sigaction(SIGHUP, NULL, &start_hup);
    sa.sa_handler = note_signal; /* passed on by wait_all, unless the audit's parent ignored it */
    if (start_term.sa_handler != SIG_IGN)
        sigaction(SIGTERM, &sa, NULL);
    if (start_hup.sa_handler != SIG_IGN)
        sigaction(SIGHUP, &sa, NULL);

    long long t0 = sb_now_ns();
    pid_t pid = 0;
    rc = start_command(req.cmd, cmd_env, &pid);
    free_environment(cmd_env);
    if (rc != 0) {
        if (!req.keep)
            remove_records(dir);
        return rc;
    }
    int left = 0;
    int status = wait_all(pid, &heard, &left);
    sb_audit_listen_poll(&heard);
    double wall_s = (double)(sb_now_ns() - t0) / 1e9;
    /* from here a signal stops the audit itself, report or not */
    sigaction(SIGINT, &start_int, NULL);
    sigaction(SIGQUIT, &start_quit, NULL);
    sigaction(SIGTERM, &start_term, NULL);
    sigaction(SIGHUP, &start_hup, NULL);
    if (left)
        fprintf(stderr,
                "syncbench: audit: %d CUDA process%s CMD started were still running %d s after it "
                "ended; reporting without them (their records are incomplete)\n",
                left, left == 1 ? "" : "es", DESCENDANT_WAIT_S);

    char cmdline[4096];
    join_command(req.cmd, cmdline, sizeof cmdline);
    int gate_rc = 0;
    rc = analyze_and_report(&req, dir, outs, nout, cmdline, wall_s, t0, &heard, &gate_rc);
    sb_audit_listen_close(&heard);
    if (!req.keep)
        remove_records(dir);
    int code = exit_code_of(status);
    if (rc)
        return code ? code : rc;
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGINT)
        die_of_sigint();
    return code ? code : gate_rc;
}
