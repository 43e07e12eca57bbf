/* Whether a process's records are whole, and if not, why (the table, the JSON, the gate and the
 * view across ranks say it). */
#include <stdio.h>
#include <string.h>

#include "model/model.h"

const char *sb_audit_incomplete(const sb_audit_proc *p, char *buf, size_t n)
{
    if (p->unwatched)
        snprintf(buf, n, "its blocking calls were not recorded: %s", p->unwatched);
    else if (p->unrecorded && p->open_errno)
        snprintf(buf, n, "its record file could not be created (%s)", strerror(p->open_errno));
    else if (p->unrecorded)
        snprintf(buf, n, "its record file is missing");
    else if (p->lost)
        snprintf(buf, n, "%lld record line%s could not be written (disk full?)", p->lost,
                 p->lost == 1 ? "" : "s");
    else if (!p->complete)
        snprintf(buf, n, "its records end without an end record (killed, or the disk full)");
    else if (p->malformed)
        snprintf(buf, n, "%ld record line%s malformed", p->malformed, p->malformed == 1 ? "" : "s");
    else
        return NULL;
    return buf;
}
