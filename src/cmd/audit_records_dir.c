/* The folder CMD's processes write their records to: --keep's, checked writable and empty, or a
 * fresh one in TMPDIR, removed after the report. */
#include "cmd/audit_records_dir.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"

/* The temporary record folder: only proc-*.jsonl files are written there. */
void sb_audit_remove_records(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[PATH_MAX + 300];
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, "proc-", 5)) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    closedir(d);
    rmdir(dir);
}

/* The folder as an absolute path: CMD may change folder before it initializes CUDA. */
static int absolute(char *dir, size_t n, const char *what)
{
    char real[PATH_MAX];
    if (!realpath(dir, real))
        return sb_fail(SB_EXIT_USAGE, "audit: %s %s: %s", what, dir, strerror(errno));
    if (strlen(real) >= n)
        return sb_fail(SB_EXIT_USAGE, "audit: %s %s: path too long", what, dir);
    memcpy(dir, real, strlen(real) + 1);
    return 0;
}

int sb_audit_make_records_dir(const sb_audit_request *req, char *dir, size_t n)
{
    if (req->keep) {
        snprintf(dir, n, "%s", req->keep);
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            return sb_fail(SB_EXIT_USAGE, "audit: --keep %s: %s", req->keep, strerror(errno));
        struct stat st;
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK) != 0)
            return sb_fail(SB_EXIT_USAGE, "audit: --keep %s: not a writable folder", req->keep);
        /* every proc-*.jsonl there is read: an earlier audit's would be counted again */
        DIR *d = opendir(dir);
        struct dirent *e;
        while (d && (e = readdir(d)))
            if (!strncmp(e->d_name, "proc-", 5)) {
                char name[256]; /* the entry is gone with the folder's handle */
                snprintf(name, sizeof name, "%s", e->d_name);
                closedir(d);
                return sb_fail(SB_EXIT_USAGE,
                               "audit: --keep %s: holds an earlier audit's records (%s); "
                               "name an empty or new folder",
                               req->keep, name);
            }
        if (d)
            closedir(d);
        return absolute(dir, n, "--keep");
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, n, "%s/syncbench-audit-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return sb_fail(SB_EXIT_FAIL, "audit: cannot create a folder in %s: %s",
                       tmp && *tmp ? tmp : "/tmp", strerror(errno));
    return absolute(dir, n, "TMPDIR");
}
