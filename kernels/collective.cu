#include "collective.h"

namespace
{

__device__ __forceinline__ unsigned long long now_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void rank_loss(unsigned long long ns, unsigned long long step, int rank, float *loss)
{
    unsigned long long start = now_ns();
    while (now_ns() - start < ns) {
    }
    *loss = sb_rank_loss(step, rank);
}

__global__ void add_sum(const float *sum, double *acc)
{
    *acc += (double)*sum;
}

} // namespace

extern "C" cudaError_t sb_launch_rank_loss(unsigned long long ns, unsigned long long step, int rank,
                                           float *loss, cudaStream_t s)
{
    rank_loss<<<1, 1, 0, s>>>(ns, step, rank, loss);
    return cudaGetLastError();
}

extern "C" cudaError_t sb_launch_add_sum(const float *sum, double *acc, cudaStream_t s)
{
    add_sum<<<1, 1, 0, s>>>(sum, acc);
    return cudaGetLastError();
}
