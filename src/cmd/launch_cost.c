#include "cmd/launch_cost.h"

#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "base/clock.h"
#include "base/error.h"
#include "engine/measure.h"
#include "base/stats.h"
#include "base/recording_switch.h"
#include "base/textutil.h"
#include "gpu/cuda_check.h"
#include "kernels.h"

#define REPS 21
/* fewer launches than the launch queue holds: the host never waits for a slot */
#define COUNT 1000
#define MAX_COUNT 100000

/* What is timed, each with the recording off and on. */
enum {
    LAUNCH, /* a launch of a kernel that does nothing */
    CALL,   /* a sync of an idle stream: a watched call that returns at once */
    TRIP,   /* a launch, then a sync that waits for it */
    ALLOC,  /* cudaMalloc of 1 MiB and its cudaFree (which syncs) */
    COPY,   /* a launch, a 4-byte readback into pinned memory, a sync: .item()'s round trip */
    NWHAT
};

/* ns per item of count items of kind what. */
static int time_calls(int what, long long count, cudaStream_t s, void *dev, void *pinned,
                      double *ns)
{
    double t0 = sb_now_us();
    for (long long i = 0; i < count; i++) {
        if (what == LAUNCH || what == TRIP || what == COPY)
            SB_LAUNCH(sb_launch_spin_then_mark(0, NULL, 0, 0.0f, s));
        if (what == COPY)
            SB_CUDA(cudaMemcpyAsync(pinned, dev, 4, cudaMemcpyDeviceToHost, s));
        if (what == CALL || what == TRIP || what == COPY)
            SB_CUDA(cudaStreamSynchronize(s));
        if (what == ALLOC) {
            void *p;
            SB_CUDA(cudaMalloc(&p, 1 << 20));
            SB_CUDA(cudaFree(p));
        }
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
    void *dev, *pinned;
    SB_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); /* loads the library */
    SB_CUDA(cudaMalloc(&dev, 4));
    SB_CUDA(cudaMallocHost(&pinned, 4));
    sb_recording_fn recording = sb_recording_switch();
    if (!recording || recording(1) != 0)
        return sb_fail(SB_EXIT_USAGE, "%s: not running under the audit's library",
                       SB_LAUNCH_COST_CMD);
    /* [what][on][rep]; repetition 0 warms up. An allocation takes tens of microseconds: a
     * tenth as many of them. Off and on alternate which goes first, so that a drift of the
     * host's speed within the process cancels out of the pairs */
    double v[NWHAT][2][REPS + 1];
    for (int r = 0; r <= REPS; r++)
        for (int k = 0; k < 2; k++) {
            int on = k ^ (r & 1);
            recording(on);
            for (int what = 0; what < NWHAT; what++) {
                long long n = what == ALLOC ? (count + 9) / 10 : count;
                if (time_calls(what, n, s, dev, pinned, &v[what][on][r]) != 0)
                    return SB_EXIT_FAIL;
            }
        }
    recording(1);
    SB_CUDA(cudaFreeHost(pinned));
    SB_CUDA(cudaFree(dev));
    SB_CUDA(cudaStreamDestroy(s));
    /* the plain time, and the plain time plus what recording added: the median of each
     * repetition's difference, a pair timed back to back */
    for (int what = 0; what < NWHAT; what++) {
        double added[REPS], pct[REPS];
        sb_stats plain, diff;
        sb_deltas(v[what][1] + 1, v[what][0] + 1, REPS, added, pct);
        sb_stats_compute(v[what][0] + 1, REPS, &plain);
        sb_stats_compute(added, REPS, &diff);
        printf("%s%.1f %.1f", what ? " " : "", plain.median, plain.median + diff.median);
    }
    printf("\n");
    return 0;
}
