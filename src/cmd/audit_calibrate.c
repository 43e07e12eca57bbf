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

#define NFIGS 10 /* the figures `syncbench __launch-cost` prints, off and on for each of five */

/* The ten figures `syncbench __launch-cost` prints, run under the audit's library with its
 * records into caldir (not one of CMD's processes); 0, or -1 on failure. A figure that is no
 * time (0 or less, a second or more) is -1. */
static int launch_cost(const char *caldir, double v[NFIGS])
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
        sscanf(buf, "%lf %lf %lf %lf %lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4],
               &v[5], &v[6], &v[7], &v[8], &v[9]) != NFIGS)
        return -1;
    for (int i = 0; i < NFIGS; i++)
        if (!(v[i] > 0 && v[i] < 1e9))
            v[i] = -1;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The calls whose median "oh" the calibration's records give: the syncs (the idle stream's and
 * the round trips': the same call from the same stack), the allocation's two calls, the
 * readback's copy. */
enum { OH_SYNC, OH_MALLOC, OH_FREE, OH_COPY, NOH };
static const char *const oh_api[NOH] = {"cudaStreamSynchronize", "cudaMalloc", "cudaFree",
                                        "cudaMemcpyAsync"};

typedef struct {
    double *v;
    size_t n, cap;
} samples;

static int add_sample(samples *s, double x)
{
    if (s->n == s->cap) {
        double *w = realloc(s->v, (s->cap = s->cap ? 2 * s->cap : 1024) * sizeof *w);
        if (!w)
            return -1;
        s->v = w;
    }
    s->v[s->n++] = x;
    return 0;
}

/* Whether a record's API name is `base` itself or a version of it (cudaMalloc_v3020, not
 * cudaMallocHost). */
static int api_is(const char *api, const char *base)
{
    size_t n = strlen(base);
    return !strncmp(api, base, n) && (api[n] == '\0' || api[n] == '_');
}

/* The median "oh" of each of oh_api's calls in one record file (-1 where it holds none). */
static void median_ohs(const char *path, double oh[NOH])
{
    samples s[NOH] = {{0}};
    FILE *f = fopen(path, "r");
    char line[1 << 16];
    while (f && fgets(line, sizeof line, f)) {
        json_t *o = json_loads(line, 0, NULL);
        const char *t = json_string_value(json_object_get(o, "t"));
        const char *api = json_string_value(json_object_get(o, "api"));
        json_t *x = json_object_get(o, "oh");
        for (int k = 0; t && api && !strcmp(t, "call") && json_is_integer(x) && k < NOH; k++)
            if (api_is(api, oh_api[k]) && add_sample(&s[k], (double)json_integer_value(x)) != 0)
                break;
        json_decref(o);
    }
    if (f)
        fclose(f);
    for (int k = 0; k < NOH; k++) {
        oh[k] = -1;
        if (s[k].n) {
            qsort(s[k].v, s[k].n, sizeof *s[k].v, cmp_double);
            oh[k] = s[k].v[s[k].n / 2];
        }
        free(s[k].v);
    }
}

/* The median "oh"s of the calibration's records, which are then removed with their folder;
 * -1 unless there was exactly one record file. */
static int take_records(const char *caldir, double oh[NOH])
{
    int n = 0;
    DIR *d = opendir(caldir);
    struct dirent *e;
    char path[PATH_MAX + 256];
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(path, sizeof path, "%s/%s", caldir, e->d_name);
        median_ohs(path, oh);
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
    double v[NFIGS], oh[NOH];
    int ok = mkdir(caldir, 0700) == 0 || errno == EEXIST; /* the library records nothing without */
    ok = ok && launch_cost(caldir, v) == 0;
    ok = take_records(caldir, oh) == 0 && ok; /* without them it was not recorded */
    /* each pair and each "oh" that was measured: the replay uses the figures whose inputs are
     * all there (audit/load.c) */
    json_t *o = ok ? json_object() : NULL;
    static const char *const keys[NFIGS] = {
        "launch_plain_ns", "launch_recorded_ns", "call_plain_ns",  "call_recorded_ns",
        "trip_plain_ns",   "trip_recorded_ns",   "alloc_plain_ns", "alloc_recorded_ns",
        "copy_plain_ns",   "copy_recorded_ns"};
    for (int i = 0; o && i < NFIGS; i += 2)
        if (v[i] > 0 && v[i + 1] > 0) {
            json_object_set_new(o, keys[i], json_real(v[i]));
            json_object_set_new(o, keys[i + 1], json_real(v[i + 1]));
        }
    if (o && oh[OH_SYNC] >= 0)
        json_object_set_new(o, "call_oh_ns", json_real(oh[OH_SYNC]));
    if (o && oh[OH_MALLOC] >= 0 && oh[OH_FREE] >= 0)
        json_object_set_new(o, "alloc_oh_ns", json_real(oh[OH_MALLOC] + oh[OH_FREE]));
    if (o && oh[OH_COPY] >= 0)
        json_object_set_new(o, "copy_oh_ns", json_real(oh[OH_COPY]));
    if (!o || json_dump_file(o, file, JSON_COMPACT | JSON_REAL_PRECISION(10)) != 0)
        fprintf(stderr, "syncbench: audit: could not measure what recording adds to a launch and "
                        "a call; the replay takes out only the time each call recorded\n");
    json_decref(o);
}
