/* GPU time of queued work without launch gaps, as nvbench measures it: a kernel that waits on a
 * host-released flag holds the stream while the work is enqueued behind it, so the events around
 * the work time it back to back. A loop that is launch-bound (the GPU idles between launches)
 * and one that is GPU-bound are then told apart. */
#ifndef SB_KERNEL_TIMER_H
#define SB_KERNEL_TIMER_H

#include <cuda_runtime.h>

#include "gpu/resources.h"

typedef struct sb_kernel_timer {
    cudaStream_t stream;
    volatile int *flag; /* host-mapped pinned: [0] release flag, [1] timed-out flag */
    int *flag_dev;
    cudaEvent_t start, stop;
} sb_kernel_timer;

/* What it creates is kept in `res`. */
int sb_kernel_timer_init(sb_kernel_timer *t, sb_resources *res, cudaStream_t stream);
/* Enqueue the waiting kernel and the start event: enqueue the work to time after this. */
int sb_kernel_timer_begin(sb_kernel_timer *t);
/* Release the stream, wait, and return the work's GPU time in ms. Fails if the waiting kernel
 * timed out (the work did not fit the launch queue while held). */
int sb_kernel_timer_end(sb_kernel_timer *t, float *ms);

#endif
