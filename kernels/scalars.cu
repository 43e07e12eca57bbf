#include "scalars.h"

namespace
{

__device__ __forceinline__ unsigned long long now_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ void spin(unsigned long long ns)
{
    if (ns == 0)
        return;
    unsigned long long start = now_ns();
    while (now_ns() - start < ns) {
    }
}

const int VALUE_THREADS = 256;

__global__ void write_values(unsigned long long ns, uint32_t *vals, int k, int stride,
                             uint32_t seed)
{
    if (threadIdx.x == 0)
        spin(ns);
    __syncthreads();
    for (int i = threadIdx.x; i < k; i += blockDim.x)
        vals[(size_t)i * stride] = sb_coalesce_value(seed, i);
}

__global__ void gather_values(const uint32_t *vals, int k, int stride, uint32_t *dst)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < k)
        dst[i] = vals[(size_t)i * stride];
}

__global__ void train_kernel(unsigned long long ns, unsigned long long step, float *loss,
                             double *acc)
{
    spin(ns);
    if (loss) {
        float l = sb_step_loss(step);
        *loss = l;
        *acc += (double)l;
    }
}

__global__ void spin_count(unsigned long long ns, unsigned long long *counter)
{
    spin(ns);
    *counter += 1;
}

__global__ void make_flag(unsigned long long ns, unsigned long long step, int *flag, uint32_t *x)
{
    spin(ns);
    *flag = sb_branch_flag(step);
    *x = sb_branch_x(step);
}

__global__ void branch(int which, const uint32_t *x, unsigned long long *sum)
{
    *sum += sb_branch_result(which, *x);
}

__global__ void select_branch(const int *flag, const uint32_t *x, unsigned long long *sum)
{
    uint32_t v = *x;
    uint64_t r0 = sb_branch_result(0, v), r1 = sb_branch_result(1, v);
    *sum += *flag ? r1 : r0;
}

} // namespace

extern "C" cudaError_t sb_launch_write_values(unsigned long long ns, uint32_t *vals, int k,
                                              int stride, uint32_t seed, cudaStream_t s)
{
    if (k < 1 || stride < 1)
        return cudaErrorInvalidValue;
    write_values<<<1, VALUE_THREADS, 0, s>>>(ns, vals, k, stride, seed);
    return cudaGetLastError();
}

extern "C" cudaError_t sb_launch_gather_values(const uint32_t *vals, int k, int stride,
                                               uint32_t *dst, cudaStream_t s)
{
    if (k < 1 || stride < 1)
        return cudaErrorInvalidValue;
    gather_values<<<(k + VALUE_THREADS - 1) / VALUE_THREADS, VALUE_THREADS, 0, s>>>(vals, k, stride,
                                                                                    dst);
    return cudaGetLastError();
}

extern "C" cudaError_t sb_launch_train_kernel(unsigned long long ns, unsigned long long step,
                                              float *loss, double *acc, cudaStream_t s)
{
    train_kernel<<<1, 1, 0, s>>>(ns, step, loss, acc);
    return cudaGetLastError();
}

extern "C" cudaError_t sb_launch_spin_count(unsigned long long ns, unsigned long long *counter,
                                            cudaStream_t s)
{
    spin_count<<<1, 1, 0, s>>>(ns, counter);
    return cudaGetLastError();
}

extern "C" cudaError_t sb_launch_make_flag(unsigned long long ns, unsigned long long step,
                                           int *flag, uint32_t *x, cudaStream_t s)
{
    make_flag<<<1, 1, 0, s>>>(ns, step, flag, x);
    return cudaGetLastError();
}

extern "C" cudaError_t sb_launch_branch(int which, const uint32_t *x, unsigned long long *sum,
                                        cudaStream_t s)
{
    branch<<<1, 1, 0, s>>>(which, x, sum);
    return cudaGetLastError();
}

extern "C" cudaError_t sb_launch_select(const int *flag, const uint32_t *x, unsigned long long *sum,
                                        cudaStream_t s)
{
    select_branch<<<1, 1, 0, s>>>(flag, x, sum);
    return cudaGetLastError();
}
