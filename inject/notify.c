#include "notify.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/envvars.h"

static struct sockaddr_un addr;
static socklen_t addr_len; /* 0: no launcher listening */

void sba_status_init(void)
{
    const char *name = sb_env_str(SB_ENV_AUDIT_SOCK);
    if (!name || strlen(name) + 1 >= sizeof addr.sun_path)
        return;
    addr.sun_family = AF_UNIX;
    addr.sun_path[0] = 0; /* the abstract namespace: no file */
    memcpy(addr.sun_path + 1, name, strlen(name));
    addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));
}

void sba_status_send(const char *msg, int len)
{
    if (!addr_len || len <= 0)
        return;
    int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return;
    if (sendto(s, msg, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL, (const struct sockaddr *)&addr,
               addr_len) < 0) {
        /* the launcher is gone or its queue is full: the records still tell */
    }
    close(s);
}
