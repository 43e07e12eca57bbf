#include "gpu/peers.h"

#include <stdlib.h>

#include "base/error.h"
#include "gpu/cuda_check.h"
#include "gpu/device.h"

#define MAX_RING 64 /* more GPUs than a host has */

int sb_gpu_count(int *n)
{
    return sb_cuda_device_count(n); /* the same message as opening the device gives */
}

/* The ordered pairs (a, b) of the ring of n: a's neighbours b, each pair once. */
static int ring_pairs(int n, int pairs[][2])
{
    int k = 0;
    for (int g = 0; g < n; g++) {
        int next = (g + 1) % n, prev = (g + n - 1) % n;
        int cand[2] = {next, prev};
        for (int c = 0; c < 2; c++) {
            int dup = cand[c] == g;
            for (int i = 0; i < k && !dup; i++)
                dup = pairs[i][0] == g && pairs[i][1] == cand[c];
            if (!dup) {
                pairs[k][0] = g;
                pairs[k][1] = cand[c];
                k++;
            }
        }
    }
    return k;
}

int sb_ring_reachable(int n, int *from, int *to)
{
    int pairs[2 * MAX_RING][2];
    if (n > MAX_RING)
        n = MAX_RING;
    int k = ring_pairs(n, pairs);
    for (int i = 0; i < k; i++) {
        int ok = 0;
        cudaError_t e = cudaDeviceCanAccessPeer(&ok, pairs[i][0], pairs[i][1]);
        if (e != cudaSuccess) {
            sb_fail(SB_EXIT_NODEV, "no usable CUDA device: cudaDeviceCanAccessPeer(%d, %d): %s",
                    pairs[i][0], pairs[i][1], cudaGetErrorString(e));
            return -1;
        }
        if (!ok) {
            *from = pairs[i][0];
            *to = pairs[i][1];
            return 0;
        }
    }
    return 1;
}

/* One direction turned on by sb_ring_peer_access: turned off on release. */
typedef struct peer_on {
    int from, to;
} peer_on;

static void peer_off(void *p)
{
    peer_on *on = p;
    int before = 0;
    cudaGetDevice(&before);
    if (cudaSetDevice(on->from) == cudaSuccess)
        cudaDeviceDisablePeerAccess(on->to);
    cudaSetDevice(before);
    free(on);
}

int sb_ring_peer_access(sb_resources *res, int n)
{
    int pairs[2 * MAX_RING][2];
    if (n > MAX_RING)
        n = MAX_RING;
    int k = ring_pairs(n, pairs), before = 0, rc = 0;
    SB_CUDA(cudaGetDevice(&before));
    for (int i = 0; i < k && !rc; i++) {
        SB_CUDA(cudaSetDevice(pairs[i][0]));
        cudaError_t e = cudaDeviceEnablePeerAccess(pairs[i][1], 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled) {
            cudaGetLastError(); /* not sticky, but left as the last error: cleared */
            continue;
        }
        SB_CUDA(e);
        peer_on *on = malloc(sizeof *on);
        if (!on) {
            cudaDeviceDisablePeerAccess(pairs[i][1]);
            rc = sb_fail(SB_EXIT_FAIL, "out of host memory in %s", sb_error_context());
            break;
        }
        on->from = pairs[i][0];
        on->to = pairs[i][1];
        rc = sb_keep(res, peer_off, on);
    }
    SB_CUDA(cudaSetDevice(before));
    return rc;
}
