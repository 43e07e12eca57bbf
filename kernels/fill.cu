#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels.h"

namespace
{

__device__ __forceinline__ float uniform01(uint64_t seed, uint64_t i)
{
    /* splitmix64 of (seed, index): cheap, stateless, good enough to avoid structured data */
    uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)(z >> 40) * (1.0f / 16777216.0f);
}

template <typename T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ float from_float<float>(float v)
{
    return v;
}
template <> __device__ __forceinline__ __half from_float<__half>(float v)
{
    return __float2half_rn(v);
}
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v)
{
    return __float2bfloat16_rn(v);
}

template <typename T>
__global__ void fill_uniform(T *dst, size_t n, uint64_t seed, float lo, float span)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        dst[i] = from_float<T>(lo + span * uniform01(seed, i));
}

} // namespace

extern "C" size_t sb_dtype_size(sb_dtype dt)
{
    return dt == SB_DTYPE_F32 ? 4 : 2;
}

extern "C" cudaError_t sb_fill_uniform(void *dst, sb_dtype dt, size_t n, uint64_t seed, float lo,
                                       float hi, cudaStream_t s)
{
    const int threads = 256;
    size_t want = (n + threads - 1) / threads;
    int blocks = (int)(want < 4096 ? (want ? want : 1) : 4096);
    float span = hi - lo;
    switch (dt) {
    case SB_DTYPE_F16:
        fill_uniform<<<blocks, threads, 0, s>>>((__half *)dst, n, seed, lo, span);
        break;
    case SB_DTYPE_BF16:
        fill_uniform<<<blocks, threads, 0, s>>>((__nv_bfloat16 *)dst, n, seed, lo, span);
        break;
    case SB_DTYPE_F32:
        fill_uniform<<<blocks, threads, 0, s>>>((float *)dst, n, seed, lo, span);
        break;
    default:
        return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}
