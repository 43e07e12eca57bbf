/* cuBLAS, loaded with dlopen at the first GEMM, so that the binary starts (--help, --list,
 * --dry-run, compare, the copy and readback scenarios) on machines without it. cublas_v2.h is
 * included for the types only: every call goes through the table below. */
#ifndef SB_CUBLAS_API_H
#define SB_CUBLAS_API_H

#include <cublas_v2.h>
#include <stddef.h>

/* Exactly the calls syncbench makes; the names in comments are the exported symbols. */
typedef struct sb_cublas_api {
    cublasStatus_t (*create)(cublasHandle_t *);                      /* cublasCreate_v2 */
    cublasStatus_t (*destroy)(cublasHandle_t);                       /* cublasDestroy_v2 */
    cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t);      /* cublasSetStream_v2 */
    cublasStatus_t (*set_math_mode)(cublasHandle_t, cublasMath_t);   /* cublasSetMathMode */
    cublasStatus_t (*set_workspace)(cublasHandle_t, void *, size_t); /* cublasSetWorkspace_v2 */
    cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                              const void *, const void *, cudaDataType, int, const void *,
                              cudaDataType, int, const void *, void *, cudaDataType, int,
                              cublasComputeType_t, cublasGemmAlgo_t); /* cublasGemmEx */
    cublasStatus_t (*get_property)(libraryPropertyType, int *);       /* cublasGetProperty */
    const char *(*status_string)(cublasStatus_t);                     /* cublasGetStatusString */
    const char *(*status_name)(cublasStatus_t);                       /* cublasGetStatusName */
} sb_cublas_api;

/* The table; valid once sb_cublas_load() or sb_cublas_try_load() returned 0. */
extern sb_cublas_api sb_cublas;

/* Loads libcublas.so.13 (else libcublas.so) and every symbol, once; 0 on success. On failure
 * records one line naming the library and the loader's reason and returns SB_EXIT_NODEV. */
int sb_cublas_load(void);
/* The same without recording an error: 0 if cuBLAS is usable, -1 if not. */
int sb_cublas_try_load(void);

#endif
