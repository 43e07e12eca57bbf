#include "cmd/audit_listen.h"
#include "base/arrays.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "model/model.h"
#include "record/records.h"
#include "base/error.h"

int sb_audit_listen(sb_audit_listener *l)
{
    memset(l, 0, sizeof *l);
    l->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (l->fd < 0)
        return sb_fail(SB_EXIT_FAIL, "audit: status socket: %s", strerror(errno));
    int big = 1 << 20; /* a burst of processes starting at once (torchrun) fits */
    setsockopt(l->fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    for (int attempt = 0; attempt < 16; attempt++) {
        snprintf(l->name, sizeof l->name, "syncbench-audit-%d-%ld-%d", (int)getpid(),
                 (long)(ts.tv_nsec & 0xffffff), attempt);
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        memcpy(a.sun_path + 1, l->name, strlen(l->name));
        socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(l->name));
        if (bind(l->fd, (struct sockaddr *)&a, len) == 0)
            return 0;
        if (errno != EADDRINUSE)
            break;
    }
    int e = errno;
    close(l->fd);
    l->fd = -1;
    return sb_fail(SB_EXIT_FAIL, "audit: status socket: %s", strerror(e));
}

static sb_audit_status *find(sb_audit_listener *l, long long pid)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->procs[i].pid == pid)
            return &l->procs[i];
    if (sb_grow(&l->procs, &l->cap, l->n, sizeof *l->procs) < 0)
        return NULL;
    sb_audit_status *s = &l->procs[l->n++];
    memset(s, 0, sizeof *s);
    s->pid = pid;
    s->opened = 1;
    return s;
}

int sb_audit_listen_take(sb_audit_listener *l, const char *msg, size_t len)
{
    char buf[SB_AUDIT_STATUS_MAX + 1];
    if (len >= sizeof buf)
        return -1;
    memcpy(buf, msg, len);
    buf[len] = 0;
    long long pid, lost;
    int ok, err;
    sb_audit_status *s;
    if (sscanf(buf, "start %lld %d %d", &pid, &ok, &err) == 3 && pid > 0) {
        if (!(s = find(l, pid)))
            return -1;
        /* an exec'd image under the same pid starts again: its file's fate counts too */
        s->opened = s->opened && ok;
        if (!ok)
            s->open_errno = err;
        s->ended = 0;
        return 0;
    }
    if (sscanf(buf, "end %lld %lld", &pid, &lost) == 2 && pid > 0 && lost >= 0) {
        if (!(s = find(l, pid)))
            return -1;
        s->ended = 1;
        s->lost += lost;
        return 0;
    }
    return -1;
}

void sb_audit_listen_poll(sb_audit_listener *l)
{
    char buf[SB_AUDIT_STATUS_MAX + 1];
    ssize_t n;
    while (l->fd >= 0 && ((n = recv(l->fd, buf, sizeof buf, 0)) >= 0 || errno == EINTR))
        if (n > 0)
            sb_audit_listen_take(l, buf, (size_t)n);
}

/* Alive and not a zombie (a zombie whose parent does not reap it has ended all the same). */
static int running(long long pid)
{
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
        return 0;
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%lld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = 0;
    char *paren = strrchr(buf, ')');
    return paren && paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X';
}

int sb_audit_listen_alive(const sb_audit_listener *l)
{
    int n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += !l->procs[i].ended && running(l->procs[i].pid);
    return n;
}

void sb_audit_listen_close(sb_audit_listener *l)
{
    if (l->fd >= 0)
        close(l->fd);
    free(l->procs);
    memset(l, 0, sizeof *l);
    l->fd = -1;
}
