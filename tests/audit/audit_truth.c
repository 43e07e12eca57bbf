/* audit_truth [N [REPS]]: ground truth for the replay's predicted savings, measured in the very
 * process the audit records, so that the speed of the host (which moves between processes on a
 * VM by more than the savings differ) is the same for the prediction and for the truth.
 *
 * Run under `syncbench audit --gpu-activity`. Each workload has a syncing and a sync-free variant
 * of the same GPU work; each repetition times N iterations of one variant (µs per iteration)
 * with the audit's recording switched on or off (syncbench_calibration_recording, the library's
 * calibration switch), in turns: REPS + 1 repetitions of each (variant, on/off), the first a
 * warm-up. Only the "on" repetitions are recorded, so the audit's replay of each workload's sync
 * site predicts what removing it saves, and the "off" repetitions measure that saving without
 * the recording. Each workload's sync is made in its own function: its own call site.
 *
 *   launch-bound   8 x 2 us kernels, then a 4-byte readback and a stream sync
 *   gpu-bound      a 50 us kernel and 7 x 1 us kernels, then the readback and the sync
 *   short-kernel   one 5 us kernel, then the readback and the sync (.item() after a small op)
 *   alloc          2 x 1 us kernels, then cudaMalloc 1 MiB and its cudaFree (which syncs)
 *   non-blocking   8 x (1 us kernel, readback, sync); sync-free: the 8 readbacks, no sync (the
 *                  values are read after the repetition's closing sync): the readbacks kept
 *
 * Prints one JSON line: {"n":N,"reps":REPS,"workloads":{NAME:{"site":FUNCTION,"syncs_per_iter":K,
 * "kept":0|1,"saving_off":US,"saving_on":US,"sync_off":US,"free_off":US,"sync_on":US,
 * "free_on":US},...}}: the savings, medians of the repetitions' paired differences, and each
 * variant's median, per iteration. N defaults to 200, REPS to 15. Exit 1 when the recording
 * switch is missing (not run under the audit) or a value read back is wrong. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvtx3/nvToolsExt.h>

#include "base/clock.h"
#include "base/stats.h"

#include "check.h"

const char *prog_name = "audit_truth";

enum { LAUNCH_BOUND, GPU_BOUND, SHORT_KERNEL, ALLOC, NON_BLOCKING, NWORK };

static const struct {
    const char *name, *site;
    int syncs_per_iter, kept;
} work[NWORK] = {
    {"launch-bound", "sync_launch_bound", 1, 0}, {"gpu-bound", "sync_gpu_bound", 1, 0},
    {"short-kernel", "sync_short_kernel", 1, 0}, {"alloc", "free_allocation", 1, 0},
    {"non-blocking", "sync_each_value", 8, 1},
};

static cudaStream_t stream;
static float *marker; /* device: what each kernel writes */
static float *host;   /* pinned: where the readbacks land */
static float value;   /* the value the latest kernel wrote */

static void kernel_us(unsigned us)
{
    value += 1.0f;
    spin_us(us, marker, value, stream);
}

static void read_back(void)
{
    CK(cudaMemcpyAsync(host, marker, sizeof *host, cudaMemcpyDeviceToHost, stream));
}

static void check_host(void)
{
    if (*host != value) {
        fprintf(stderr, "%s: read %g, expected %g\n", prog_name, *host, value);
        exit(1);
    }
}

/* One function per workload's sync: each its own site in the audit. */
__attribute__((noinline)) static void sync_launch_bound(void)
{
    CK(cudaStreamSynchronize(stream));
}

__attribute__((noinline)) static void sync_gpu_bound(void)
{
    CK(cudaStreamSynchronize(stream));
}

__attribute__((noinline)) static void sync_short_kernel(void)
{
    CK(cudaStreamSynchronize(stream));
}

__attribute__((noinline)) static void sync_each_value(void)
{
    CK(cudaStreamSynchronize(stream));
}

/* the allocation and its free apart: the free's site is the workload's (removing a free takes
 * the allocation it undoes with it) */
__attribute__((noinline)) static void *allocate(void)
{
    void *p;
    CK(cudaMalloc(&p, 1 << 20));
    return p;
}

__attribute__((noinline)) static void free_allocation(void *p)
{
    CK(cudaFree(p));
}

static void iteration(int w, int syncing)
{
    switch (w) {
    case LAUNCH_BOUND:
    case GPU_BOUND:
        for (int k = 0; k < 8; k++)
            kernel_us(w == LAUNCH_BOUND ? 2 : k == 0 ? 50 : 1);
        if (syncing) {
            read_back();
            w == LAUNCH_BOUND ? sync_launch_bound() : sync_gpu_bound();
            check_host();
        }
        break;
    case SHORT_KERNEL:
        kernel_us(5);
        if (syncing) {
            read_back();
            sync_short_kernel();
            check_host();
        }
        break;
    case ALLOC:
        kernel_us(1);
        kernel_us(1);
        if (syncing)
            free_allocation(allocate());
        break;
    case NON_BLOCKING:
        for (int k = 0; k < 8; k++) {
            kernel_us(1);
            read_back();
            if (syncing) {
                sync_each_value();
                check_host();
            }
        }
        break;
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 200, reps = argc > 2 ? atoi(argv[2]) : 15;
    if (n < 1 || n > 100000 || reps < 1 || reps > 1000) {
        fprintf(stderr, "usage: %s [N 1..100000 [REPS 1..1000]]\n", prog_name);
        return 2;
    }
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)); /* loads the audit's library */
    CK(cudaMalloc((void **)&marker, sizeof *marker));
    CK(cudaMallocHost((void **)&host, sizeof *host));
    const char *lib = getenv("CUDA_INJECTION64_PATH");
    void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
    int (*recording)(int) = h ? (int (*)(int))dlsym(h, "syncbench_calibration_recording") : NULL;
    if (!recording || recording(1) != 0) {
        fprintf(stderr, "%s: not running under syncbench audit (no recording switch)\n", prog_name);
        return 1;
    }
    /* [workload][syncing][on][rep] */
    double *t = malloc(sizeof(double) * NWORK * 2 * 2 * (size_t)reps);
    if (!t)
        return 1;
#define T(w, s, on, r) t[(((size_t)(w)*2 + (s)) * 2 + (on)) * (size_t)reps + (size_t)(r)]
    for (int r = 0; r <= reps; r++)
        for (int on = 1; on >= 0; on--) {
            recording(on);
            for (int w = 0; w < NWORK; w++)
                for (int syncing = 1; syncing >= 0; syncing--) {
                    char range[64];
                    snprintf(range, sizeof range, "%s-%s", work[w].name, syncing ? "sync" : "free");
                    nvtxRangePushA(range);
                    CK(cudaStreamSynchronize(stream));
                    double t0 = sb_now_us();
                    for (int i = 0; i < n; i++)
                        iteration(w, syncing);
                    CK(cudaStreamSynchronize(stream));
                    double t1 = sb_now_us();
                    nvtxRangePop();
                    read_back(); /* what the repetition's last kernel wrote */
                    CK(cudaStreamSynchronize(stream));
                    check_host();
                    if (r > 0)
                        T(w, syncing, on, r - 1) = (t1 - t0) / n;
                }
        }
    recording(1);
    printf("{\"n\":%d,\"reps\":%d,\"workloads\":{", n, reps);
    double *d = malloc(sizeof(double) * (size_t)reps);
    if (!d)
        return 1;
    for (int w = 0; w < NWORK; w++) {
        printf("%s\"%s\":{\"site\":\"%s\",\"syncs_per_iter\":%d,\"kept\":%d", w ? "," : "",
               work[w].name, work[w].site, work[w].syncs_per_iter, work[w].kept);
        /* the saving: the median of each repetition's paired difference (its two variants ran
         * back to back, a slow patch of the host slows both) */
        for (int on = 0; on < 2; on++) {
            for (int r = 0; r < reps; r++)
                d[r] = T(w, 1, on, r) - T(w, 0, on, r);
            sb_sort_doubles(d, (size_t)reps);
            printf(",\"saving_%s\":%.3f", on ? "on" : "off", d[reps / 2]);
        }
        for (int syncing = 1; syncing >= 0; syncing--)
            for (int on = 0; on < 2; on++) {
                sb_sort_doubles(&T(w, syncing, on, 0), (size_t)reps);
                printf(",\"%s_%s\":%.3f", syncing ? "sync" : "free", on ? "on" : "off",
                       T(w, syncing, on, reps / 2));
            }
        printf("}");
    }
    free(d);
    printf("}}\n");
    free(t);
    return 0;
}
