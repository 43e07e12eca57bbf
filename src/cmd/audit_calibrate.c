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

#include <jansson.h>

#include "report/report.h"
#include "record/records.h"
#include "cmd/launch_cost.h"

/* The ten figures `syncbench __launch-cost` prints, run under the audit's library with its
 * records into caldir (not one of CMD's processes); 0, or -1 on failure. A figure that is no
 * time (0 or less, a second or more) is -1. */
static int launch_cost(const char *caldir, double v[SB_CAL_NPAIRS])
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
        setenv(SB_AUDIT_ENV_DIR, caldir, 1);
        unsetenv(SB_AUDIT_ENV_SOCK);
        unsetenv(SB_AUDIT_ENV_WINDOW); /* the calibration times the recording at its fullest */
        execl("/proc/self/exe", "syncbench", SB_LAUNCH_COST_CMD, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    char buf[256] = "";
    FILE *f = fdopen(fd[0], "r");
    int got = f && fgets(buf, sizeof buf, f) != NULL;
    if (f)
        fclose(f);
    else
        close(fd[0]);
    int status = 0;
    while (waitpid(c, &status, 0) < 0 && errno == EINTR) {
    }
    if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        sscanf(buf, "%lf %lf %lf %lf %lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4],
               &v[5], &v[6], &v[7], &v[8], &v[9]) != SB_CAL_NPAIRS)
        return -1;
    for (int i = 0; i < SB_CAL_NPAIRS; i++)
        if (!(v[i] > 0 && v[i] < 1e9))
            v[i] = -1;
    return 0;
}

/* The median "oh"s of the calibration's records, which are then removed with their folder;
 * -1 unless there was exactly one record file. */
static int take_records(const char *caldir, double oh[SB_OH_N])
{
    int n = 0;
    DIR *d = opendir(caldir);
    struct dirent *e;
    char path[PATH_MAX + 256];
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(path, sizeof path, "%s/%s", caldir, e->d_name);
        sb_audit_median_ohs(path, oh);
        n += unlink(path) == 0;
    }
    if (d)
        closedir(d);
    rmdir(caldir);
    return n == 1 ? 0 : -1;
}

void sb_audit_calibrate(const char *dir)
{
    char caldir[PATH_MAX], file[PATH_MAX];
    snprintf(caldir, sizeof caldir, "%s/.calibration", dir);
    snprintf(file, sizeof file, "%s/%s", dir, SB_AUDIT_CALIBRATION_FILE);
    double v[SB_CAL_NPAIRS], oh[SB_OH_N] = {-1, -1, -1, -1};
    int ok = mkdir(caldir, 0700) == 0 || errno == EEXIST; /* the library records nothing without */
    ok = ok && launch_cost(caldir, v) == 0;
    ok = take_records(caldir, oh) == 0 && ok; /* without them it was not recorded */
    /* each pair and each "oh" that was measured: the replay uses the figures whose inputs are
     * all there (model/calibration.c) */
    json_t *o = ok ? json_object() : NULL;
    for (int i = 0; o && i < SB_CAL_NPAIRS; i += 2)
        if (v[i] > 0 && v[i + 1] > 0) {
            json_object_set_new(o, sb_audit_calibration_keys[i], json_real(v[i]));
            json_object_set_new(o, sb_audit_calibration_keys[i + 1], json_real(v[i + 1]));
        }
    /* in records.h's order: the sync's, the allocation's two calls together, the copy's */
    double alloc_oh =
        oh[SB_OH_MALLOC] >= 0 && oh[SB_OH_FREE] >= 0 ? oh[SB_OH_MALLOC] + oh[SB_OH_FREE] : -1;
    const double ohs[SB_CAL_NKEYS - SB_CAL_NPAIRS] = {oh[SB_OH_SYNC], alloc_oh, oh[SB_OH_COPY]};
    for (int i = SB_CAL_NPAIRS; o && i < SB_CAL_NKEYS; i++)
        if (ohs[i - SB_CAL_NPAIRS] >= 0)
            json_object_set_new(o, sb_audit_calibration_keys[i], json_real(ohs[i - SB_CAL_NPAIRS]));
    if (!o || json_dump_file(o, file, JSON_COMPACT | JSON_REAL_PRECISION(10)) != 0)
        fprintf(stderr, "syncbench: audit: could not measure what recording adds to a launch and "
                        "a call; the replay takes out only the time each call recorded\n");
    json_decref(o);
}
