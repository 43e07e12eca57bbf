/* The CUDA kernels syncbench launches, behind C launchers. Every launcher enqueues on the given
 * stream and returns cudaGetLastError() of the launch. */
#ifndef SB_KERNELS_H
#define SB_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { SB_DTYPE_F16 = 0, SB_DTYPE_BF16 = 1, SB_DTYPE_F32 = 2 } sb_dtype;

size_t sb_dtype_size(sb_dtype dt);

/* n elements of uniform values in [lo, hi), from a counter-based hash of (seed, index): the same
 * seed gives the same data on any GPU. */
cudaError_t sb_fill_uniform(void *dst, sb_dtype dt, size_t n, uint64_t seed, float lo, float hi,
                            cudaStream_t s);

#define SB_GEMM_MAX_SAMPLES 32

/* Sampled output elements of C = A x B (column-major, A m x k, B k x n, C m x n). */
typedef struct sb_gemm_samples {
    int count;
    int row[SB_GEMM_MAX_SAMPLES];
    int col[SB_GEMM_MAX_SAMPLES];
} sb_gemm_samples;

/* For sample s, writes as floats to out + s * (2k + 1): row `row[s]` of A (k values), column
 * `col[s]` of B (k values), then C[row[s], col[s]]. The CPU computes the reference from these. */
cudaError_t sb_gather_gemm_samples(const void *A, const void *B, const void *C, sb_dtype dt, int m,
                                   int n, int k, sb_gemm_samples samples, float *out,
                                   cudaStream_t s);

/* One thread spins until *flag (host-mapped pinned memory) becomes non-zero, or until timeout_ns
 * of the GPU's clock pass, in which case it sets *timed_out = 1. Work queued behind it on the
 * stream therefore starts back to back once the host releases the flag (nvbench's blocking
 * kernel). */
cudaError_t sb_launch_wait_flag(const volatile int *flag, int *timed_out,
                                unsigned long long timeout_ns, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif
