/* CMD launched under the audit: resolved as execvp would, its environment (the injection
 * library's variables, the waits library preloaded), started, and waited for with every process
 * it started (child subreaper), the signals sent to the audit passed on to them all; the status
 * socket (cmd/audit_listen.c) says which of them use CUDA and are worth waiting for. */
#include "cmd/audit_launch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record/records.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/textutil.h"

/* After CMD ends, how long the CUDA processes it left (reparented to us) get to finish, and
 * how long the descendants that never initialized CUDA are waited for (a program it started in
 * the background may yet initialize CUDA). */
#define DESCENDANT_WAIT_S 30
#define NON_CUDA_GRACE_S 2

/* CMD as execvp would find it: 127 when it is nowhere, 126 when it is there but cannot run. */
int sb_audit_resolve_command(const char *name, char *path, size_t n)
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

/* CMD's environment with the waits library (sb_audit_find_waits) preloaded; NULL without one: CMD
 * runs in this environment. */
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

int sb_audit_set_env(const sb_audit_request *req, const char *lib, const char *cupti,
                     const char *dir, const char *sock)
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
    /* the window of GPU activity (--gpu-activity-range, --gpu-activity-steps), canonical */
    char window[3 * SB_AUDIT_RANGE_NAME_MAX];
    if (req->windowed)
        sb_gpu_window_format(&req->window, window, sizeof window);
    if (req->windowed ? setenv(SB_AUDIT_ENV_WINDOW, window, 1) : unsetenv(SB_AUDIT_ENV_WINDOW))
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

/* CMD's exit status as audit's: its code, or 128 + the signal that ended it. */
int sb_audit_exit_code(int status)
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
void sb_audit_die_of_sigint(int status)
{
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGINT)
        return;
    fflush(stdout);
    fflush(stderr);
    signal(SIGINT, SIG_DFL);
    raise(SIGINT);
}

/* A closed pipe on an output (`--trace - | head -c1`) is a write error: one line, exit 1, as in
 * run and compare. CMD gets the disposition the audit was started with back. */
void sb_audit_ignore_sigpipe(void)
{
    struct sigaction ignore;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &start_pipe);
}

/* Descendants that outlive their parents come to us, so that torchrun's workers and a shell
 * script's programs are waited for too; the dispositions the audit was started with noted for
 * CMD. */
static void take_signals(void)
{
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
}

int sb_audit_launch(char **cmd, const char *waits, sb_audit_listener *heard, sb_audit_ran *ran)
{
    char **cmd_env = command_environment(waits);
    take_signals();
    long long t0 = sb_now_ns();
    pid_t pid = 0;
    int rc = start_command(cmd, cmd_env, &pid);
    free_environment(cmd_env);
    if (rc != 0)
        return rc;
    int left = 0;
    ran->status = wait_all(pid, heard, &left);
    sb_audit_listen_poll(heard);
    ran->t0 = t0;
    ran->wall_s = (double)(sb_now_ns() - t0) / 1e9;
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
    return 0;
}
