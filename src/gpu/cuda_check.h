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

/* Evaluates `call` once; if it does not return `ok`, returns fail(...) from the caller. */
#define SB_CHECK(type, call, ok, fail)                                                             \
    do {                                                                                           \
        type sb_r_ = (call);                                                                       \
        if (sb_r_ != (ok))                                                                         \
            return fail(#call, sb_r_, __FILE__, __LINE__);                                         \
    } while (0)

#define SB_CUDA(call) SB_CHECK(cudaError_t, call, cudaSuccess, sb_cuda_fail)
#define SB_CUBLAS(call) SB_CHECK(cublasStatus_t, call, CUBLAS_STATUS_SUCCESS, sb_cublas_fail)

/* For a kernel launcher (returns cudaError_t from cudaGetLastError after the launch). */
#define SB_LAUNCH(call) SB_CUDA(call)

#endif
