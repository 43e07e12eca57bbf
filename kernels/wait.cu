#include "kernels.h"

namespace
{

__device__ __forceinline__ unsigned long long global_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void wait_flag(const volatile int *flag, int *timed_out, unsigned long long timeout_ns)
{
    unsigned long long start = global_ns();
    while (*flag == 0) {
        if (global_ns() - start > timeout_ns) {
            *timed_out = 1;
            return;
        }
        __nanosleep(1000);
    }
}

} // namespace

extern "C" cudaError_t sb_launch_wait_flag(const volatile int *flag, int *timed_out,
                                           unsigned long long timeout_ns, cudaStream_t s)
{
    wait_flag<<<1, 1, 0, s>>>(flag, timed_out, timeout_ns);
    return cudaGetLastError();
}
