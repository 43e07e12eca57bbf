/* Kernels of the collective scenario: a rank's share of a training-like step (a spin of a set
 * time on the GPU's own clock, then the rank's loss for the step) and the all-reduced loss
 * summed on the GPU, so that the sync-free variants read it back only now and then. The values
 * are functions of (step, rank), given here for the CPU's side of the check. */
#ifndef SB_COLLECTIVE_H
#define SB_COLLECTIVE_H

#include "scalars.h" /* sb_mix32, SB_HOST_DEVICE, cudaError_t, cudaStream_t */

#ifdef __cplusplus
extern "C" {
#endif

/* Spins `ns` nanoseconds (%globaltimer), then *loss = sb_rank_loss(step, rank). */
cudaError_t sb_launch_rank_loss(unsigned long long ns, unsigned long long step, int rank,
                                float *loss, cudaStream_t s);
/* *acc += *sum (the all-reduced loss, accumulated as PyTorch code sums a logged metric). */
cudaError_t sb_launch_add_sum(const float *sum, double *acc, cudaStream_t s);

#ifdef __cplusplus
}
#endif

/* A rank's loss at a step: a multiple of 0.25 below 256, so that the all-reduced sum of up to
 * 8 ranks (below 2048) is exact in a float whatever order NCCL adds in, and sums of those are
 * exact in a double: the host compares them for equality. */
static inline SB_HOST_DEVICE float sb_rank_loss(unsigned long long step, int rank)
{
    uint32_t x = sb_mix32((uint32_t)step ^ (uint32_t)(step >> 32) ^ ((uint32_t)rank << 24));
    return (float)(x % 1021u) * 0.25f;
}

#endif
