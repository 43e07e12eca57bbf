/* Opening a file named by input the audit did not write (a kept record, calibration.json, a
 * library a stack record names, a --merge report) without being held by it: a FIFO would wait
 * for a writer, a device (/dev/urandom) would never end. */
#ifndef SB_REGFILE_H
#define SB_REGFILE_H

#include <stdio.h>

enum { SB_REG_OK = 0, SB_REG_ERRNO = -1, SB_REG_DIR = 1, SB_REG_OTHER = 2 };

/* path opened for reading (*f) only when it is a regular file, or a link to one: opened with
 * O_NONBLOCK, checked with fstat on what was opened (no race with a rename), then made
 * blocking. SB_REG_OK; SB_REG_ERRNO (errno says why: the file missing, unreadable); SB_REG_DIR
 * or SB_REG_OTHER (a FIFO, a device, a socket), nothing opened. */
int sb_open_regular(const char *path, FILE **f);
/* sb_open_regular's answer as a phrase: strerror(errno) for SB_REG_ERRNO. */
const char *sb_regular_why(int rc);

#endif
