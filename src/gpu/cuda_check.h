/* One macro family for checking every CUDA runtime and cuBLAS call. On failure the message
 * names the call, the error string and the measurement being run, and the enclosing function
 * returns SB_EXIT_FAIL. cuBLAS calls go through gpu/cublas_api.h's table (cublas_v2.h is here
 * for its types only). */
#ifndef SB_CUDA_CHECK_H
#define SB_CUDA_CHECK_H

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "base/error.h"

int sb_cuda_fail(const char *call, cudaError_t e, const char *file, int line);
int sb_cublas_fail(const char *call, cublasStatus_t s, const char *file, int line);

#define SB_CUDA(call)                                                                              \
    do {                                                                                           \
        cudaError_t sb_e_ = (call);                                                                \
        if (sb_e_ != cudaSuccess)                                                                  \
            return sb_cuda_fail(#call, sb_e_, __FILE__, __LINE__);                                 \
    } while (0)

#define SB_CUBLAS(call)                                                                            \
    do {                                                                                           \
        cublasStatus_t sb_s_ = (call);                                                             \
        if (sb_s_ != CUBLAS_STATUS_SUCCESS)                                                        \
            return sb_cublas_fail(#call, sb_s_, __FILE__, __LINE__);                               \
    } while (0)

/* For a kernel launcher (returns cudaError_t from cudaGetLastError after the launch). */
#define SB_LAUNCH(call) SB_CUDA(call)

#endif
