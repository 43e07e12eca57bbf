/* audit_counts [N]: a known number of host-blocking CUDA calls of every class, in known NVTX
 * ranges, for `syncbench audit`'s GPU tests. N defaults to 5 (1 to 100000). At the end it prints
 * one JSON line on stdout, the truth the test compares the audit with:
 *
 *   {"pid":P,"n":N,
 *    "counts":{CLASS:{RANGE:COUNT,...},...},    every blocking call and poll it made, by class
 *                                               and innermost NVTX range ("" = none)
 *    "ranges":{NAME:{"instances":I,"max_blocking":M,"total_blocking":T},...},
 *    "blocking_total":B,"polls":Q}             B: explicit + implicit calls, whole run
 *
 * What it does, in order (stream s: cudaStreamCreate, so blocking w.r.t. the legacy stream):
 *   setup, no range: cudaSetDevice, stream, event, N + 1 cudaMalloc, cudaMallocHost, malloc;
 *       one spin + cudaStreamSynchronize (loads the module)            sync-stream ""    1
 *   "phase_a" (nvtxRangePushA, one instance), each after a 200 us spin on s:
 *       N cudaDeviceSynchronize                                         sync-device       N
 *       N cudaStreamSynchronize(s)                                      sync-stream       N
 *       N cudaEventRecord + cudaEventSynchronize                        sync-event        N
 *   "phase_b" (nvtxRangePushA, pushed N times), each instance:
 *       cudaMemcpy 4 bytes DtoH into pageable memory                    copy-sync         1
 *       cudaMemcpyAsync 4 bytes DtoH into pageable memory on s          copy-pageable     1
 *       a 100 us spin on s, then cudaMemcpyAsync DtoH into pinned
 *       memory queued behind it: does not block, must not count         (none)
 *       cudaStreamQuery(s)                                              poll              1
 *   no range: cudaStreamSynchronize(s), then the pinned values are checked  sync-stream ""  1
 *   "phase_c" (domain "mydomain", nvtxDomainRangePushEx, one instance):
 *       N cudaStreamSynchronize(s), each after a 200 us spin             sync-stream       N
 *   no range: N cudaFree (the setup's buffers)                          free              N
 *             one cudaMemset (synchronous)                              memset-sync       1
 * Nothing else calls cudaFree, cudaFreeHost or a sync (no teardown: the process exits).
 * Every value copied back is checked: each copy waited for exactly the work it should have. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

#include "check.h"

const char *prog_name = "audit_counts";

#define PHASE_US 200   /* GPU time each phase_a and phase_c sync waits for */
#define PHASE_B_US 100 /* GPU work the pinned copy is queued behind */
#define WARM_VALUE 7.0f

static void check_value(const char *what, int i, float got, float want)
{
    if (got != want) {
        fprintf(stderr, "%s: %s %d read %g, expected %g\n", prog_name, what, i, got, want);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    long n = 5;
    if (argc > 2 || (argc == 2 && (sscanf(argv[1], "%ld", &n) != 1 || n < 1 || n > 100000))) {
        fprintf(stderr, "usage: audit_counts [N]  (1 to 100000, default 5)\n");
        return 2;
    }

    /* setup: nothing here blocks but the one warm-up sync */
    cudaStream_t s;
    cudaEvent_t ev;
    float *marker, *pinned;
    void **bufs = calloc((size_t)n, sizeof *bufs);
    float *pageable = calloc((size_t)n, sizeof *pageable);
    float *synced = calloc((size_t)n, sizeof *synced);
    if (!bufs || !pageable || !synced) {
        fprintf(stderr, "%s: out of memory\n", prog_name);
        return 1;
    }
    CK(cudaSetDevice(0));
    CK(cudaStreamCreate(&s));
    CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    CK(cudaMalloc((void **)&marker, sizeof(float)));
    for (long i = 0; i < n; i++)
        CK(cudaMalloc(&bufs[i], 256));
    CK(cudaMallocHost((void **)&pinned, (size_t)n * sizeof(float)));
    spin_us(0, marker, WARM_VALUE, s);
    CK(cudaStreamSynchronize(s));

    nvtxRangePushA("phase_a");
    for (long i = 0; i < n; i++) {
        spin_us(PHASE_US, marker, WARM_VALUE, s);
        CK(cudaDeviceSynchronize());
    }
    for (long i = 0; i < n; i++) {
        spin_us(PHASE_US, marker, WARM_VALUE, s);
        CK(cudaStreamSynchronize(s));
    }
    for (long i = 0; i < n; i++) {
        spin_us(PHASE_US, marker, WARM_VALUE, s);
        CK(cudaEventRecord(ev, s));
        CK(cudaEventSynchronize(ev));
    }
    nvtxRangePop();

    for (long i = 0; i < n; i++) {
        nvtxRangePushA("phase_b");
        /* the legacy stream waits for s: both copies read what the previous instance wrote */
        CK(cudaMemcpy(&synced[i], marker, sizeof(float), cudaMemcpyDeviceToHost));
        CK(cudaMemcpyAsync(&pageable[i], marker, sizeof(float), cudaMemcpyDeviceToHost, s));
        spin_us(PHASE_B_US, marker, 1000.0f + (float)i, s);
        CK(cudaMemcpyAsync(&pinned[i], marker, sizeof(float), cudaMemcpyDeviceToHost, s));
        cudaError_t q = cudaStreamQuery(s);
        if (q == cudaErrorNotReady)
            (void)cudaGetLastError(); /* not an error: the work is still running */
        else
            CK(q);
        nvtxRangePop();
    }
    CK(cudaStreamSynchronize(s));
    for (long i = 0; i < n; i++) {
        float before = i ? 1000.0f + (float)(i - 1) : WARM_VALUE;
        check_value("phase_b cudaMemcpy", (int)i, synced[i], before);
        check_value("phase_b pageable cudaMemcpyAsync", (int)i, pageable[i], before);
        check_value("phase_b pinned cudaMemcpyAsync", (int)i, pinned[i], 1000.0f + (float)i);
    }

    nvtxDomainHandle_t dom = nvtxDomainCreateA("mydomain");
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "phase_c";
    nvtxDomainRangePushEx(dom, &a);
    for (long i = 0; i < n; i++) {
        spin_us(PHASE_US, marker, WARM_VALUE, s);
        CK(cudaStreamSynchronize(s));
    }
    nvtxDomainRangePop(dom);

    for (long i = 0; i < n; i++)
        CK(cudaFree(bufs[i]));
    CK(cudaMemset(marker, 0, sizeof(float)));

    printf("{\"pid\":%ld,\"n\":%ld,\"counts\":{"
           "\"sync-device\":{\"phase_a\":%ld},"
           "\"sync-stream\":{\"phase_a\":%ld,\"phase_c\":%ld,\"\":2},"
           "\"sync-event\":{\"phase_a\":%ld},"
           "\"copy-sync\":{\"phase_b\":%ld},"
           "\"copy-pageable\":{\"phase_b\":%ld},"
           "\"poll\":{\"phase_b\":%ld},"
           "\"free\":{\"\":%ld},"
           "\"memset-sync\":{\"\":1}},"
           "\"ranges\":{"
           "\"phase_a\":{\"instances\":1,\"max_blocking\":%ld,\"total_blocking\":%ld},"
           "\"phase_b\":{\"instances\":%ld,\"max_blocking\":2,\"total_blocking\":%ld},"
           "\"phase_c\":{\"instances\":1,\"max_blocking\":%ld,\"total_blocking\":%ld}},"
           "\"blocking_total\":%ld,\"polls\":%ld}\n",
           (long)getpid(), n, n, n, n, n, n, n, n, n, 3 * n, 3 * n, n, 2 * n, n, n, 7 * n + 3, n);
    fflush(stdout);
    free(bufs);
    free(pageable);
    free(synced);
    return 0;
}
