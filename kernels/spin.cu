#include "kernels.h"

namespace
{

__device__ __forceinline__ unsigned long long global_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void spin_then_mark(unsigned long long ns, float *marker, int n, float value)
{
    unsigned long long start = global_ns();
    while (global_ns() - start < ns) {
    }
    for (int i = 0; i < n; i++)
        marker[i] = value + (float)i;
}

__global__ void sum_for(const float *x, size_t n, unsigned long long ns, double *sum)
{
    unsigned long long start = global_ns();
    __shared__ double part[256];
    double acc = 0;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        acc += x[i];
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w)
            part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomicAdd(sum, part[0]);
        while (global_ns() - start < ns) {
        }
    }
}

__global__ void fill_pattern(uint32_t *words, size_t n, uint32_t seed)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        words[i] = sb_pattern_word(seed, i);
}

} // namespace

extern "C" cudaError_t sb_launch_spin_then_mark(unsigned long long ns, float *marker, int n,
                                                float value, cudaStream_t s)
{
    spin_then_mark<<<1, 1, 0, s>>>(ns, marker, n, value);
    return cudaGetLastError();
}

extern "C" cudaError_t sb_launch_sum_for(const float *x, size_t n, unsigned long long ns,
                                         double *sum, int blocks, cudaStream_t s)
{
    sum_for<<<blocks, 256, 0, s>>>(x, n, ns, sum);
    return cudaGetLastError();
}

extern "C" cudaError_t sb_fill_pattern(uint32_t *words, size_t n, uint32_t seed, cudaStream_t s)
{
    fill_pattern<<<1024, 256, 0, s>>>(words, n, seed);
    return cudaGetLastError();
}
