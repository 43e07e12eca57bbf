/* calibration.json (records.h): its keys, the figures the replay takes out read from it, and the
 * medians of the library's own time ("oh") the calibration's records give. */
#include "model/model.h"
#include "base/arrays.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/regfile.h"
#include "record/records.h"
#include "base/stats.h"

const char *const sb_audit_calibration_keys[SB_CAL_NKEYS] = {
    [SB_CAL_LAUNCH_PLAIN] = "launch_plain_ns", [SB_CAL_LAUNCH_RECORDED] = "launch_recorded_ns",
    [SB_CAL_CALL_PLAIN] = "call_plain_ns",     [SB_CAL_CALL_RECORDED] = "call_recorded_ns",
    [SB_CAL_TRIP_PLAIN] = "trip_plain_ns",     [SB_CAL_TRIP_RECORDED] = "trip_recorded_ns",
    [SB_CAL_ALLOC_PLAIN] = "alloc_plain_ns",   [SB_CAL_ALLOC_RECORDED] = "alloc_recorded_ns",
    [SB_CAL_COPY_PLAIN] = "copy_plain_ns",     [SB_CAL_COPY_RECORDED] = "copy_recorded_ns",
    [SB_CAL_CALL_OH] = "call_oh_ns",           [SB_CAL_ALLOC_OH] = "alloc_oh_ns",
    [SB_CAL_COPY_OH] = "copy_oh_ns",
};

/* The calls whose "oh" the calibration takes, by base name (not cudaMallocHost's). */
static const char *const oh_api[SB_OH_N] = {
    [SB_OH_SYNC] = "cudaStreamSynchronize",
    [SB_OH_MALLOC] = "cudaMalloc",
    [SB_OH_FREE] = "cudaFree",
    [SB_OH_COPY] = "cudaMemcpyAsync",
};

void sb_audit_median_ohs(const char *path, double oh[SB_OH_N])
{
    double *v[SB_OH_N] = {NULL};
    size_t n[SB_OH_N] = {0}, cap[SB_OH_N] = {0};
    FILE *f;
    sb_open_regular(path, &f);
    char line[1 << 16], base[128];
    while (f && fgets(line, sizeof line, f)) {
        json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, NULL);
        const char *t = json_string_value(json_object_get(o, "t"));
        const char *api = json_string_value(json_object_get(o, "api"));
        json_t *x = json_object_get(o, "oh");
        if (t && api && !strcmp(t, "call") && json_is_integer(x)) {
            sb_audit_base_name(api, base, sizeof base);
            for (int k = 0; k < SB_OH_N; k++)
                if (!strcmp(base, oh_api[k]) && sb_grow(&v[k], &cap[k], n[k], sizeof *v[k]) == 0)
                    v[k][n[k]++] = (double)json_integer_value(x);
        }
        json_decref(o);
    }
    if (f)
        fclose(f);
    for (int k = 0; k < SB_OH_N; k++) {
        oh[k] = -1;
        if (n[k]) {
            sb_sort_doubles(v[k], n[k]);
            oh[k] = v[k][n[k] / 2];
        }
        free(v[k]);
    }
}

/* What recording added (the calibration's figures, calibration.json: records.h), for the replay
 * of every process: to each launch; to each watched call beside the time its own record gives
 * ("oh"); to each allocation call (cudaMalloc and cudaFree, which cost more to watch); to the
 * GPU's start of launched work (a round trip's extra beyond its launch's and its sync's); to a
 * readback's (its round trip's extra beyond the plain trip's and its call's). A figure whose
 * inputs are absent (a folder an earlier syncbench calibrated) or that is no measurement (below
 * zero, a millisecond or more) is 0: nothing taken out. */
/* A figure in ns as the replay takes it out: nothing below zero, and a millisecond or more per
 * call is no measurement. */
static double clamp_figure(double ns)
{
    return ns > 0 && ns < 1e6 ? ns : 0;
}

int sb_audit_read_calibration(sb_audit_run *run, const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, SB_AUDIT_CALIBRATION_FILE);
    FILE *f; /* absent or unreadable: no figures; a FIFO or a device: bad input, never read */
    int why = sb_open_regular(path, &f);
    if (why == SB_REG_DIR || why == SB_REG_OTHER)
        return sb_fail(SB_EXIT_USAGE, "%s: %s", path, sb_regular_why(why));
    json_t *o = f ? json_loadf(f, JSON_REJECT_DUPLICATES, NULL) : NULL;
    if (f)
        fclose(f);
    double v[SB_CAL_NKEYS];
    unsigned have = 0;
    for (int i = 0; i < SB_CAL_NKEYS; i++) {
        json_t *x = json_object_get(o, sb_audit_calibration_keys[i]);
        v[i] = json_is_number(x) ? json_number_value(x) : 0;
        have |= json_is_number(x) ? 1u << i : 0;
    }
    json_decref(o);
#define B(i) (1u << (i))
#define HAVE(m) ((have & (m)) == (m))
    /* the launch's and the call's figures as the replay takes them out (none below zero) go
     * into the others */
    double launch = HAVE(B(SB_CAL_LAUNCH_PLAIN) | B(SB_CAL_LAUNCH_RECORDED))
                        ? clamp_figure(v[SB_CAL_LAUNCH_RECORDED] - v[SB_CAL_LAUNCH_PLAIN])
                        : 0;
    double call =
        HAVE(B(SB_CAL_CALL_PLAIN) | B(SB_CAL_CALL_RECORDED) | B(SB_CAL_CALL_OH))
            ? clamp_figure(v[SB_CAL_CALL_RECORDED] - v[SB_CAL_CALL_PLAIN] - v[SB_CAL_CALL_OH])
            : 0;
    /* the trip is the launch, the GPU's start of its kernel, the kernel's end seen, the sync's
     * return: what recording added beyond the launch's and the call's is the GPU side's */
    double start =
        HAVE(B(SB_CAL_LAUNCH_PLAIN) | B(SB_CAL_LAUNCH_RECORDED) | B(SB_CAL_CALL_PLAIN) |
             B(SB_CAL_CALL_RECORDED) | B(SB_CAL_CALL_OH) | B(SB_CAL_TRIP_PLAIN) |
             B(SB_CAL_TRIP_RECORDED))
            ? (v[SB_CAL_TRIP_RECORDED] - v[SB_CAL_TRIP_PLAIN]) - launch - (v[SB_CAL_CALL_OH] + call)
            : 0;
    /* an allocation's own figure; a file without it (an earlier syncbench's): the call's */
    double alloc =
        HAVE(B(SB_CAL_ALLOC_PLAIN) | B(SB_CAL_ALLOC_RECORDED) | B(SB_CAL_ALLOC_OH))
            ? ((v[SB_CAL_ALLOC_RECORDED] - v[SB_CAL_ALLOC_PLAIN]) - v[SB_CAL_ALLOC_OH]) / 2
            : call;
    /* the readback's trip is the plain trip with a copy call and its copy in the middle */
    double copy = HAVE(B(SB_CAL_TRIP_PLAIN) | B(SB_CAL_TRIP_RECORDED) | B(SB_CAL_COPY_PLAIN) |
                       B(SB_CAL_COPY_RECORDED) | B(SB_CAL_COPY_OH) | B(SB_CAL_CALL_PLAIN) |
                       B(SB_CAL_CALL_RECORDED) | B(SB_CAL_CALL_OH))
                      ? (v[SB_CAL_COPY_RECORDED] - v[SB_CAL_COPY_PLAIN]) -
                            (v[SB_CAL_TRIP_RECORDED] - v[SB_CAL_TRIP_PLAIN]) - v[SB_CAL_COPY_OH] -
                            call
                      : 0;
#undef HAVE
#undef B
    const int64_t ns[5] = {(int64_t)launch, (int64_t)call, (int64_t)clamp_figure(start),
                           (int64_t)clamp_figure(alloc), (int64_t)clamp_figure(copy)};
    for (size_t i = 0; i < run->nprocs; i++) {
        sb_audit_proc *p = run->procs[i];
        p->launch_extra_ns = ns[0];
        p->call_extra_ns = ns[1];
        p->start_extra_ns = ns[2];
        p->alloc_extra_ns = ns[3];
        p->copy_extra_ns = ns[4];
    }
    return 0;
}
