/* audit_window [STEPS [KERNELS [FROM]]]: a launch-bound loop of NVTX-ranged steps, for the window
 * of GPU activity (--gpu-activity-range step:N-M; tests/gpu/test_audit_window.py,
 * tests/gpu/window_cost.sh). Each of STEPS steps (default 2000) is an instance of the push/pop
 * range "step": KERNELS kernels of 2 us (default 8), then a 4-byte readback into pinned memory
 * and a stream sync in a function of its own (sync_step: one call site), its value checked, as
 * audit_truth's launch-bound workload. One kernel and its sync come before the first step and one
 * after the last, outside every step: a window of steps records neither.
 *
 * Prints one JSON line: {"steps":STEPS,"kernels_per_step":KERNELS,"from":FROM,"step_us":US,
 * "outside_kernels":2}: US the median host time of a step over steps FROM to STEPS (counted from
 * 1; default the second half), which a window among the first steps leaves unrecorded: what
 * the audit costs outside its window. Exit 1 when a value read back is wrong. */
#include <stdio.h>
#include <stdlib.h>

#include <nvtx3/nvToolsExt.h>

#include "base/clock.h"
#include "base/stats.h"

#include "check.h"

const char *prog_name = "audit_window";

static cudaStream_t stream;
static float *marker; /* device: what each kernel writes */
static float *host;   /* pinned: where the readback lands */
static float value;   /* the value the latest kernel wrote */

static void kernel_us(unsigned us)
{
    value += 1.0f;
    spin_us(us, marker, value, stream);
}

/* The step's sync: its own site. */
__attribute__((noinline)) static void sync_step(void)
{
    CK(cudaMemcpyAsync(host, marker, sizeof *host, cudaMemcpyDeviceToHost, stream));
    CK(cudaStreamSynchronize(stream));
    if (*host != value) {
        fprintf(stderr, "%s: read %g, expected %g\n", prog_name, *host, value);
        exit(1);
    }
}

static long arg(int argc, char **argv, int i, long dflt, long lo)
{
    if (argc <= i)
        return dflt;
    char *end;
    long v = strtol(argv[i], &end, 10);
    if (*end || v < lo || v > 100000000) {
        fprintf(stderr, "%s: usage: audit_window [STEPS [KERNELS [FROM]]]\n", prog_name);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    long steps = arg(argc, argv, 1, 2000, 1), kernels = arg(argc, argv, 2, 8, 0);
    long from = arg(argc, argv, 3, steps / 2 + 1, 1);
    if (from > steps)
        from = steps;
    CK(cudaSetDevice(0));
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CK(cudaMalloc((void **)&marker, sizeof *marker));
    CK(cudaMallocHost((void **)&host, sizeof *host));
    double *step_us = malloc((size_t)steps * sizeof *step_us);
    if (!step_us)
        return 1;
    kernel_us(2); /* outside every step */
    sync_step();
    for (long s = 0; s < steps; s++) {
        double t0 = sb_now_us();
        nvtxRangePushA("step");
        for (long k = 0; k < kernels; k++)
            kernel_us(2);
        sync_step();
        nvtxRangePop();
        step_us[s] = sb_now_us() - t0;
    }
    kernel_us(2); /* outside every step */
    sync_step();
    int n = (int)(steps - from + 1);
    sb_sort_doubles(step_us + from - 1, (size_t)n);
    printf("{\"steps\":%ld,\"kernels_per_step\":%ld,\"from\":%ld,\"step_us\":%.4f,"
           "\"outside_kernels\":2}\n",
           steps, kernels, from, sb_percentile_sorted(step_us + from - 1, n, 0.5));
    free(step_us);
    CK(cudaFreeHost(host));
    CK(cudaFree(marker));
    return 0;
}
