#include "base/regfile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sb_open_regular(const char *path, FILE **f)
{
    *f = NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return SB_REG_ERRNO;
    struct stat st;
    int rc = fstat(fd, &st) != 0    ? SB_REG_ERRNO
             : S_ISDIR(st.st_mode)  ? SB_REG_DIR
             : !S_ISREG(st.st_mode) ? SB_REG_OTHER
                                    : SB_REG_OK;
    int flags = rc ? -1 : fcntl(fd, F_GETFL);
    if (!rc &&
        (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0 || !(*f = fdopen(fd, "r"))))
        rc = SB_REG_ERRNO;
    if (rc) {
        int err = errno;
        close(fd);
        errno = err;
    }
    return rc;
}

const char *sb_regular_why(int rc)
{
    return rc == SB_REG_DIR     ? "is a directory"
           : rc == SB_REG_OTHER ? "not a regular file (a FIFO, a device or a socket)"
                                : strerror(errno);
}
