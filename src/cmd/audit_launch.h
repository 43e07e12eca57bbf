/* CMD launched under the audit (cmd/audit_launch.c): resolved, given the injection's
 * environment, run and waited for with every descendant, signals passed on. */
#ifndef SB_CMD_AUDIT_LAUNCH_H
#define SB_CMD_AUDIT_LAUNCH_H

#include <stddef.h>

#include "cli/audit_args.h"
#include "cmd/audit_listen.h"

typedef struct sb_audit_ran {
    int status;    /* CMD's wait status */
    long long t0;  /* when it started (sb_now_ns) */
    double wall_s; /* until it and the CUDA processes it left ended */
} sb_audit_ran;

/* CMD as execvp would find it, in path: 0, or 127 (nowhere) or 126 (cannot run). */
int sb_audit_resolve_command(const char *name, char *path, size_t n);
/* The injection's variables set in this process's environment: 0, or exit 1. */
int sb_audit_set_env(const sb_audit_request *req, const char *lib, const char *cupti,
                     const char *dir, const char *sock);
/* SIGPIPE ignored for the audit; CMD gets the disposition it was started with back. */
void sb_audit_ignore_sigpipe(void);
/* CMD run with waits preloaded ("" none) and waited for: 0 with ran filled, or the exit code
 * of a CMD that could not start (127, 126, 1). */
int sb_audit_launch(char **cmd, const char *waits, sb_audit_listener *heard, sb_audit_ran *ran);
/* CMD's wait status as the audit's exit code: its code, or 128 + the signal. */
int sb_audit_exit_code(int status);
/* When CMD died of SIGINT, the audit dies of it too; else returns. */
void sb_audit_die_of_sigint(int status);

#endif
