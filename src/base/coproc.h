/* A helper process of this binary that answers requests line by line: started with
 * /proc/self/exe and the arguments given (a hidden subcommand), talked to over one Unix socket
 * that is its stdin and stdout. For work that must run in a process of its own, such as a CUDA
 * context created with different flags (scenarios/sched.c). The helper runs in a process group
 * of its own, so that Ctrl-C reaches only this process (which stops after the current
 * measurement, as always); it sees its socket close when this process ends, however it ends.
 * No CUDA here, and no messages: callers word the errors. */
#ifndef SB_COPROC_H
#define SB_COPROC_H

#include <stddef.h>
#include <sys/types.h>

/* A zeroed sb_coproc is one that is not running. */
typedef struct sb_coproc {
    pid_t pid; /* 0: not running (fd is then not used) */
    int fd;
    char buf[4096]; /* received, not yet returned */
    size_t len;
} sb_coproc;

/* Starts /proc/self/exe with argv (argv[0] is its name, NULL-terminated). 0, or an errno. */
int sb_coproc_start(sb_coproc *c, char *const argv[]);
/* Sends `line` (which ends in '\n'). 0, or an errno (EPIPE: the helper is gone). */
int sb_coproc_send(sb_coproc *c, const char *line);
/* Receives one line, without its '\n', into line[n]. 0; -1 at end of file (the helper exited
 * or closed its side); or an errno. A line longer than n is cut to n - 1 characters. */
int sb_coproc_recv(sb_coproc *c, char *line, size_t n);
/* Closes the socket (the helper sees end of file and exits), waits for it for up to
 * `grace_ms`, then kills it with SIGKILL. Returns its wait status, or -1 if none was running.
 * Safe to call twice. */
int sb_coproc_stop(sb_coproc *c, int grace_ms);
/* "exit status 3", "signal 11 (Segmentation fault)" for a wait status. */
void sb_coproc_describe(int status, char *buf, size_t n);

#endif
