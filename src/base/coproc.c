#include "base/coproc.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

int sb_coproc_start(sb_coproc *c, char *const argv[])
{
    memset(c, 0, sizeof *c);
    c->fd = -1;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return errno;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    int err = posix_spawn_file_actions_init(&fa);
    if (err) {
        close(sv[0]);
        close(sv[1]);
        return err;
    }
    if ((err = posix_spawnattr_init(&attr)) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        close(sv[0]);
        close(sv[1]);
        return err;
    }
    /* the helper's end becomes its stdin and stdout (dup2 clears close-on-exec); its stderr
     * stays ours. A process group of its own: the terminal's Ctrl-C is for us alone. */
    err = posix_spawn_file_actions_adddup2(&fa, sv[1], STDIN_FILENO);
    if (!err)
        err = posix_spawn_file_actions_adddup2(&fa, sv[1], STDOUT_FILENO);
    if (!err)
        err = posix_spawnattr_setpgroup(&attr, 0);
    if (!err)
        err = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    pid_t pid = 0;
    if (!err)
        err = posix_spawn(&pid, "/proc/self/exe", &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close(sv[1]);
    if (err) {
        close(sv[0]);
        return err;
    }
    c->pid = pid;
    c->fd = sv[0];
    return 0;
}

int sb_coproc_send(sb_coproc *c, const char *line)
{
    size_t len = strlen(line), done = 0;
    if (c->pid <= 0)
        return EPIPE;
    while (done < len) {
        /* MSG_NOSIGNAL: a helper that died is EPIPE here, not a SIGPIPE that kills us */
        ssize_t w = send(c->fd, line + done, len - done, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return errno;
        done += (size_t)w;
    }
    return 0;
}

int sb_coproc_recv(sb_coproc *c, char *line, size_t n)
{
    if (c->pid <= 0)
        return -1;
    for (;;) {
        char *nl = memchr(c->buf, '\n', c->len);
        if (nl || c->len == sizeof c->buf) {
            size_t k = nl ? (size_t)(nl - c->buf) : c->len;
            size_t copy = k < n - 1 ? k : n - 1;
            memcpy(line, c->buf, copy);
            line[copy] = '\0';
            size_t used = nl ? k + 1 : k;
            memmove(c->buf, c->buf + used, c->len - used);
            c->len -= used;
            return 0;
        }
        /* a signal (Ctrl-C sets a flag and returns) interrupts the read: read again */
        ssize_t got = read(c->fd, c->buf + c->len, sizeof c->buf - c->len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return errno;
        if (got == 0)
            return -1;
        c->len += (size_t)got;
    }
}

int sb_coproc_stop(sb_coproc *c, int grace_ms)
{
    if (c->pid <= 0)
        return -1;
    close(c->fd);
    c->fd = -1;
    int status = 0;
    const struct timespec tick = {0, 1000000};
    for (int waited = 0;; waited++) {
        pid_t w = waitpid(c->pid, &status, WNOHANG);
        if (w == c->pid || (w < 0 && errno != EINTR))
            break;
        if (waited >= grace_ms) {
            kill(c->pid, SIGKILL);
            while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR) {
            }
            break;
        }
        nanosleep(&tick, NULL);
    }
    c->pid = 0;
    c->len = 0;
    return status;
}

void sb_coproc_describe(int status, char *buf, size_t n)
{
    if (WIFEXITED(status))
        snprintf(buf, n, "exit status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, n, "signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(buf, n, "wait status %d", status);
}
