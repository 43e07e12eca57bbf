/* Kernels of the sync-free scenarios that make, gather, accumulate and select scalar values on
 * the GPU: coalesce, log-every, graph and device-branch. Each one's "work" is a spin of a set
 * number of nanoseconds on the GPU's own clock (%globaltimer), done by thread 0, so that a step
 * takes a known GPU time whatever the GPU. The values they write are functions of a step
 * number, given here for the CPU's side of each check. Every launcher enqueues on the given
 * stream and returns cudaGetLastError() of the launch. */
#ifndef SB_SCALARS_H
#define SB_SCALARS_H

#include <stdint.h>

#include "kernels.h" /* SB_HOST_DEVICE, cudaError_t, cudaStream_t */

#ifdef __cplusplus
extern "C" {
#endif

/* coalesce: spins `ns`, then writes vals[i * stride] = sb_coalesce_value(seed, i) for i < k:
 * k scalars in k places of their own, as k separate tensors would be. */
cudaError_t sb_launch_write_values(unsigned long long ns, uint32_t *vals, int k, int stride,
                                   uint32_t seed, cudaStream_t s);
/* coalesce: dst[i] = vals[i * stride] for i < k, one buffer to read back at once (torch.stack). */
cudaError_t sb_launch_gather_values(const uint32_t *vals, int k, int stride, uint32_t *dst,
                                    cudaStream_t s);

/* log-every: one kernel of a training-like step. Spins `ns`; with `loss` set (the step's last
 * kernel) it then writes *loss = sb_step_loss(step) and adds it to *acc. */
cudaError_t sb_launch_train_kernel(unsigned long long ns, unsigned long long step, float *loss,
                                   double *acc, cudaStream_t s);

/* graph: spins `ns`, then *counter += 1. */
cudaError_t sb_launch_spin_count(unsigned long long ns, unsigned long long *counter,
                                 cudaStream_t s);

/* device-branch: spins `ns`, then writes *flag = sb_branch_flag(step) and *x = sb_branch_x(step):
 * the GPU value the next step's control flow depends on. */
cudaError_t sb_launch_make_flag(unsigned long long ns, unsigned long long step, int *flag,
                                uint32_t *x, cudaStream_t s);
/* device-branch, host-branch: the kernel of branch `which` (picked by the host):
 * *sum += sb_branch_result(which, *x). */
cudaError_t sb_launch_branch(int which, const uint32_t *x, unsigned long long *sum, cudaStream_t s);
/* device-branch, device-select: both branches' results, the one *flag picks added to *sum
 * (torch.where): no value leaves the GPU. */
cudaError_t sb_launch_select(const int *flag, const uint32_t *x, unsigned long long *sum,
                             cudaStream_t s);

#ifdef __cplusplus
}
#endif

/* A bijective 32-bit mixer (lowbias32): distinct inputs give distinct values. */
static inline SB_HOST_DEVICE uint32_t sb_mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

/* coalesce: value i of the step with this seed (differs from every other step's value i). */
static inline SB_HOST_DEVICE uint32_t sb_coalesce_value(uint32_t seed, int i)
{
    return sb_mix32(seed * 4096u + (uint32_t)i);
}

/* log-every: the step's loss, a multiple of 0.25 below 256: exact in a float, and sums of them
 * are exact in a double, so the host's logged total can be compared for equality. */
static inline SB_HOST_DEVICE float sb_step_loss(unsigned long long step)
{
    return (float)(sb_mix32((uint32_t)step ^ (uint32_t)(step >> 32)) % 1021u) * 0.25f;
}

/* device-branch: which branch the step takes, the value it works on, the branch's result. */
static inline SB_HOST_DEVICE int sb_branch_flag(unsigned long long step)
{
    return (int)(sb_mix32((uint32_t)step ^ 0xB5u) & 1u);
}
static inline SB_HOST_DEVICE uint32_t sb_branch_x(unsigned long long step)
{
    return sb_mix32((uint32_t)step) >> 8;
}
static inline SB_HOST_DEVICE uint64_t sb_branch_result(int which, uint32_t x)
{
    return which ? 3ull * x + 7ull : (uint64_t)x + 1ull;
}

#endif
