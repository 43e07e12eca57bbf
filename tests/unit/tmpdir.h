/* A fresh temporary folder per test (cmocka setup/teardown): tmpdir holds its path. */
#ifndef SB_TEST_TMPDIR_H
#define SB_TEST_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char tmpdir[64];

static int make_tmpdir(void **state)
{
    (void)state;
    strcpy(tmpdir, "/tmp/syncbench-test-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_tmpdir(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

#endif
