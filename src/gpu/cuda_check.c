#include "gpu/cuda_check.h"

#include <string.h>

#include "gpu/cublas_api.h"

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

int sb_cuda_fail(const char *call, cudaError_t e, const char *file, int line)
{
    const char *ctx = sb_error_context();
    return sb_fail(SB_EXIT_FAIL, "%s failed: %s (%s)%s%s [%s:%d]", call, cudaGetErrorString(e),
                   cudaGetErrorName(e), *ctx ? " in " : "", ctx, base_name(file), line);
}

int sb_cublas_fail(const char *call, cublasStatus_t s, const char *file, int line)
{
    /* only reached through a call into the loaded table, so the status functions are there */
    const char *ctx = sb_error_context();
    return sb_fail(SB_EXIT_FAIL, "%s failed: %s (%s)%s%s [%s:%d]", call,
                   sb_cublas.status_string ? sb_cublas.status_string(s) : "cuBLAS error",
                   sb_cublas.status_name ? sb_cublas.status_name(s) : "?", *ctx ? " in " : "", ctx,
                   base_name(file), line);
}
