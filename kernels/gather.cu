#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels.h"

namespace
{

__device__ __forceinline__ float to_float(float v)
{
    return v;
}
__device__ __forceinline__ float to_float(__half v)
{
    return __half2float(v);
}
__device__ __forceinline__ float to_float(__nv_bfloat16 v)
{
    return __bfloat162float(v);
}

/* One block per sample: threads stride over k. */
template <typename T>
__global__ void gather_samples(const T *A, const T *B, const T *C, int m, int k,
                               sb_gemm_samples smp, float *out)
{
    int s = blockIdx.x;
    size_t row = (size_t)smp.row[s], col = (size_t)smp.col[s];
    float *o = out + (size_t)s * (2 * (size_t)k + 1);
    for (int p = threadIdx.x; p < k; p += blockDim.x) {
        o[p] = to_float(A[row + (size_t)p * m]);
        o[k + p] = to_float(B[(size_t)p + col * k]);
    }
    if (threadIdx.x == 0)
        o[2 * (size_t)k] = to_float(C[row + col * m]);
}

} // namespace

extern "C" cudaError_t sb_gather_gemm_samples(const void *A, const void *B, const void *C,
                                              sb_dtype dt, int m, int n, int k, sb_gemm_samples smp,
                                              float *out, cudaStream_t s)
{
    if (smp.count < 1 || smp.count > SB_GEMM_MAX_SAMPLES)
        return cudaErrorInvalidValue;
    for (int i = 0; i < smp.count; i++)
        if (smp.row[i] < 0 || smp.row[i] >= m || smp.col[i] < 0 || smp.col[i] >= n)
            return cudaErrorInvalidValue;
    switch (dt) {
    case SB_DTYPE_F16:
        gather_samples<<<smp.count, 256, 0, s>>>((const __half *)A, (const __half *)B,
                                                 (const __half *)C, m, k, smp, out);
        break;
    case SB_DTYPE_BF16:
        gather_samples<<<smp.count, 256, 0, s>>>((const __nv_bfloat16 *)A, (const __nv_bfloat16 *)B,
                                                 (const __nv_bfloat16 *)C, m, k, smp, out);
        break;
    case SB_DTYPE_F32:
        gather_samples<<<smp.count, 256, 0, s>>>((const float *)A, (const float *)B,
                                                 (const float *)C, m, k, smp, out);
        break;
    default:
        return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}
