#include "kernels.h"
#include "pattern_check.h"

namespace
{

__global__ void check_pattern(const uint32_t *words, size_t n, uint32_t seed,
                              unsigned long long *counts)
{
    unsigned long long bad = 0;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        bad += words[i] != sb_pattern_word(seed, i);
    if (bad)
        atomicAdd(&counts[0], bad);
    if (blockIdx.x == 0 && threadIdx.x == 0)
        atomicAdd(&counts[1], 1ull);
}

} // namespace

extern "C" cudaError_t sb_launch_check_pattern(const uint32_t *words, size_t n, uint32_t seed,
                                               unsigned long long *counts, cudaStream_t s)
{
    const int threads = 256;
    size_t want = (n + threads - 1) / threads;
    int blocks = (int)(want < 1024 ? (want ? want : 1) : 1024);
    check_pattern<<<blocks, threads, 0, s>>>(words, n, seed, counts);
    return cudaGetLastError();
}
