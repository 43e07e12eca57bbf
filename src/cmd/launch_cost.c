#include "cmd/launch_cost.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/textutil.h"
#include "gpu/cuda_check.h"
#include "kernels.h"

#define REPS 11
#define COUNT 1000 /* fewer launches than the launch queue holds: the host never waits for a slot  \
                    */
#define MAX_COUNT 100000

typedef int (*recording_fn)(int on);

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ns per launch (what 0) or per idle-stream sync (what 1) of count calls. */
static int time_calls(int what, long long count, cudaStream_t s, double *ns)
{
    double t0 = sb_now_us();
    for (long long i = 0; i < count; i++) {
        if (what == 0)
            SB_LAUNCH(sb_launch_spin_then_mark(0, NULL, 0, 0.0f, s));
        else
            SB_CUDA(cudaStreamSynchronize(s));
    }
    double t1 = sb_now_us();
    SB_CUDA(cudaStreamSynchronize(s));
    *ns = (t1 - t0) * 1e3 / (double)count;
    return 0;
}

int sb_cmd_launch_cost(int argc, char **argv)
{
    long long count = COUNT;
    if (argc > 2 || (argc == 2 && (sb_parse_ll(argv[1], &count) != SB_PARSE_OK || count < 1 ||
                                   count > MAX_COUNT)))
        return sb_fail(SB_EXIT_USAGE,
                       "%s: the audit's calibration, not for direct use (argument: calls per "
                       "repetition, 1 to %d)",
                       SB_LAUNCH_COST_CMD, MAX_COUNT);
    cudaStream_t s;
    SB_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); /* loads the library */
    const char *lib = getenv("CUDA_INJECTION64_PATH");
    void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
    recording_fn recording = h ? (recording_fn)dlsym(h, "syncbench_calibration_recording") : NULL;
    if (!recording || recording(1) != 0)
        return sb_fail(SB_EXIT_USAGE, "%s: not running under the audit's library",
                       SB_LAUNCH_COST_CMD);
    /* [what][on][rep]; repetition 0 warms up */
    double v[2][2][REPS + 1];
    for (int r = 0; r <= REPS; r++)
        for (int on = 0; on < 2; on++) {
            recording(on);
            for (int what = 0; what < 2; what++)
                if (time_calls(what, count, s, &v[what][on][r]) != 0)
                    return SB_EXIT_FAIL;
        }
    recording(1);
    SB_CUDA(cudaStreamDestroy(s));
    for (int what = 0; what < 2; what++)
        for (int on = 0; on < 2; on++)
            qsort(v[what][on] + 1, REPS, sizeof(double), cmp_double);
    printf("%.1f %.1f %.1f %.1f\n", v[0][0][1 + REPS / 2], v[0][1][1 + REPS / 2],
           v[1][0][1 + REPS / 2], v[1][1][1 + REPS / 2]);
    return 0;
}
