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

/* One thread spins for `ns` nanoseconds of the GPU's own clock (%globaltimer), then writes
 * marker[i] = value + i for i < n: the pending work of the readback scenario, whose result a
 * readback must wait for. ns = 0 only writes the marker. */
cudaError_t sb_launch_spin_then_mark(unsigned long long ns, float *marker, int n, float value,
                                     cudaStream_t s);

/* words[i] = sb_pattern_word(seed, i) for i < n: data a copy must deliver intact. */
cudaError_t sb_fill_pattern(uint32_t *words, size_t n, uint32_t seed, cudaStream_t s);

/* The "compute" step of the double-buffer pipeline: sums x[0..n-1] into *sum (double, atomic)
 * and keeps every block busy until `ns` nanoseconds have passed since it started, so the step
 * takes a set time whatever the chunk size. `blocks` should be one wave (e.g. 2 x SMs) so that
 * all blocks start together. */
cudaError_t sb_launch_sum_for(const float *x, size_t n, unsigned long long ns, double *sum,
                              int blocks, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
#define SB_HOST_DEVICE __host__ __device__
#else
#define SB_HOST_DEVICE
#endif

/* The pattern sb_fill_pattern writes, for the CPU side of the check. */
static inline SB_HOST_DEVICE uint32_t sb_pattern_word(uint32_t seed, size_t i)
{
    uint32_t x = (uint32_t)i * 2654435761u + seed;
    return x ^ (x >> 15);
}

#endif
