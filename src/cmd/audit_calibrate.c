#include "cmd/audit_calibrate.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit/records.h"
#include "cmd/launch_cost.h"

#define PAIRS 5

/* ns per launch that `syncbench __launch-cost` prints, run plain or under the audit's library
 * (its records into caldir, not one of CMD's processes); -1 on failure. */
static double launch_cost(int recorded, const char *caldir)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    pid_t c = fork();
    if (c < 0) {
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (c == 0) {
        dup2(fd[1], STDOUT_FILENO);
        close(fd[0]);
        close(fd[1]);
        if (recorded) {
            setenv(SB_AUDIT_ENV_DIR, caldir, 1);
            unsetenv(SB_AUDIT_ENV_SOCK);
        } else {
            unsetenv("CUDA_INJECTION64_PATH");
            unsetenv("NVTX_INJECTION64_PATH");
        }
        execl("/proc/self/exe", "syncbench", SB_LAUNCH_COST_CMD, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    char buf[64] = "";
    FILE *f = fdopen(fd[0], "r");
    int got = f && fgets(buf, sizeof buf, f) != NULL;
    if (f)
        fclose(f);
    else
        close(fd[0]);
    int status = 0;
    while (waitpid(c, &status, 0) < 0 && errno == EINTR) {
    }
    double ns = -1;
    if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || sscanf(buf, "%lf", &ns) != 1 ||
        !(ns > 0))
        return -1;
    return ns;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Removes the calibration's records (files, one level) and its folder; how many there were. */
static int remove_records(const char *caldir)
{
    int n = 0;
    DIR *d = opendir(caldir);
    struct dirent *e;
    char path[PATH_MAX + 256];
    while (d && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(path, sizeof path, "%s/%s", caldir, e->d_name);
            n += unlink(path) == 0;
        }
    }
    if (d)
        closedir(d);
    rmdir(caldir);
    return n;
}

void sb_audit_calibrate(const char *dir)
{
    char caldir[PATH_MAX], file[PATH_MAX];
    snprintf(caldir, sizeof caldir, "%s/.calibration", dir);
    snprintf(file, sizeof file, "%s/%s", dir, SB_AUDIT_CALIBRATION_FILE);
    /* plain and recorded in turns (the machine's load moves between processes): the medians */
    double plain[PAIRS], rec[PAIRS];
    int ok = mkdir(caldir, 0700) == 0 || errno == EEXIST; /* the library records nothing without */
    for (int i = 0; ok && i < PAIRS; i++)
        ok = (plain[i] = launch_cost(0, caldir)) > 0 && (rec[i] = launch_cost(1, caldir)) > 0;
    /* each recorded run left its records: without them it was not recorded */
    ok = remove_records(caldir) == PAIRS && ok;
    FILE *f = ok ? fopen(file, "w") : NULL;
    if (!f) {
        fprintf(stderr, "syncbench: audit: could not measure what recording adds to a launch; "
                        "the replay takes nothing out for it\n");
        return;
    }
    qsort(plain, PAIRS, sizeof plain[0], cmp_double);
    qsort(rec, PAIRS, sizeof rec[0], cmp_double);
    fprintf(f, "{\"launch_plain_ns\":%.1f,\"launch_recorded_ns\":%.1f}\n", plain[PAIRS / 2],
            rec[PAIRS / 2]);
    fclose(f);
}
