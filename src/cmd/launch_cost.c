#include "cmd/launch_cost.h"

#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/textutil.h"
#include "gpu/cuda_check.h"
#include "kernels.h"

#define REPS 11
#define LAUNCHES 1000 /* fewer than the launch queue holds: the host never waits for a slot */
#define MAX_LAUNCHES 100000

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int sb_cmd_launch_cost(int argc, char **argv)
{
    long long launches = LAUNCHES;
    if (argc > 2 || (argc == 2 && (sb_parse_ll(argv[1], &launches) != SB_PARSE_OK || launches < 1 ||
                                   launches > MAX_LAUNCHES)))
        return sb_fail(SB_EXIT_USAGE,
                       "%s: the audit's calibration, not for direct use (argument: launches per "
                       "repetition, 1 to %d)",
                       SB_LAUNCH_COST_CMD, MAX_LAUNCHES);
    cudaStream_t s;
    SB_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    double per[REPS + 1];
    for (int r = 0; r <= REPS; r++) { /* repetition 0 warms up */
        double t0 = sb_now_us();
        for (long long i = 0; i < launches; i++)
            SB_LAUNCH(sb_launch_spin_then_mark(0, NULL, 0, 0.0f, s));
        double t1 = sb_now_us();
        SB_CUDA(cudaStreamSynchronize(s));
        per[r] = (t1 - t0) * 1e3 / (double)launches;
    }
    SB_CUDA(cudaStreamDestroy(s));
    qsort(per + 1, REPS, sizeof per[0], cmp_double);
    printf("%.1f\n", per[1 + REPS / 2]);
    return 0;
}
