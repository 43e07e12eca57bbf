/* The launcher's end of the status socket (records.h, SB_AUDIT_ENV_SOCK): every CUDA process
 * of the run says when it started (and whether its record file could be created) and when it
 * ended (and how many lines it lost), with no disk in between. The launcher uses it to wait
 * only for processes that use CUDA, and the analyzer to report records that were lost. */
#ifndef SB_AUDIT_STATUS_H
#define SB_AUDIT_STATUS_H

#include <stddef.h>

#include "model/model.h"

typedef struct sb_audit_listener {
    int fd;
    char name[64]; /* the abstract name, without its leading NUL */
    sb_audit_status *procs;
    size_t n, cap;
} sb_audit_listener;

/* Binds a fresh abstract name. 0, or exit 1 with one line. */
int sb_audit_listen(sb_audit_listener *l);
/* Reads every datagram queued; never blocks. */
void sb_audit_listen_poll(sb_audit_listener *l);
/* Parses one datagram into l (tests): 0, or -1 when it is not one. */
int sb_audit_listen_take(sb_audit_listener *l, const char *msg, size_t len);
/* Processes heard start and not end that still exist (not zombies). */
int sb_audit_listen_alive(const sb_audit_listener *l);
void sb_audit_listen_close(sb_audit_listener *l);

#endif
