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

#include "audit/records.h"
#include "cmd/launch_cost.h"

/* The four figures `syncbench __launch-cost` prints, run under the audit's library with its
 * records into caldir (not one of CMD's processes); 0, or -1 on failure. */
static int launch_cost(const char *caldir, double v[4])
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
        sscanf(buf, "%lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3]) != 4)
        return -1;
    for (int i = 0; i < 4; i++)
        if (!(v[i] > 0 && v[i] < 1e9))
            return -1;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median "oh" of the idle-stream syncs in one record file; -1 when it holds none. */
static double median_oh(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = 0, cap = 0;
    double *v = NULL;
    char line[1 << 16];
    while (fgets(line, sizeof line, f)) {
        json_t *o = json_loads(line, 0, NULL);
        const char *t = json_string_value(json_object_get(o, "t"));
        const char *api = json_string_value(json_object_get(o, "api"));
        json_t *oh = json_object_get(o, "oh");
        if (t && api && !strcmp(t, "call") && !strncmp(api, "cudaStreamSynchronize", 21) &&
            json_is_integer(oh)) {
            if (n == cap) {
                double *w = realloc(v, (cap = cap ? 2 * cap : 1024) * sizeof *v);
                if (!w) {
                    json_decref(o);
                    break;
                }
                v = w;
            }
            v[n++] = (double)json_integer_value(oh);
        }
        json_decref(o);
    }
    fclose(f);
    double m = -1;
    if (n) {
        qsort(v, n, sizeof *v, cmp_double);
        m = v[n / 2];
    }
    free(v);
    return m;
}

/* The median "oh" of the calibration's records, which are then removed with their folder;
 * -1 unless there was exactly one record file. */
static double take_records(const char *caldir)
{
    int n = 0;
    double oh = -1;
    DIR *d = opendir(caldir);
    struct dirent *e;
    char path[PATH_MAX + 256];
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(path, sizeof path, "%s/%s", caldir, e->d_name);
        oh = median_oh(path);
        n += unlink(path) == 0;
    }
    if (d)
        closedir(d);
    rmdir(caldir);
    return n == 1 ? oh : -1;
}

void sb_audit_calibrate(const char *dir)
{
    char caldir[PATH_MAX], file[PATH_MAX];
    snprintf(caldir, sizeof caldir, "%s/.calibration", dir);
    snprintf(file, sizeof file, "%s/%s", dir, SB_AUDIT_CALIBRATION_FILE);
    double v[4];
    int ok = mkdir(caldir, 0700) == 0 || errno == EEXIST; /* the library records nothing without */
    ok = ok && launch_cost(caldir, v) == 0;
    double oh = take_records(caldir); /* without them it was not recorded */
    FILE *f = ok && oh >= 0 ? fopen(file, "w") : NULL;
    if (!f) {
        fprintf(stderr, "syncbench: audit: could not measure what recording adds to a launch and "
                        "a call; the replay takes out only the time each call recorded\n");
        return;
    }
    fprintf(f,
            "{\"launch_plain_ns\":%.1f,\"launch_recorded_ns\":%.1f,\"call_plain_ns\":%.1f,"
            "\"call_recorded_ns\":%.1f,\"call_oh_ns\":%.1f}\n",
            v[0], v[1], v[2], v[3], oh);
    fclose(f);
}
