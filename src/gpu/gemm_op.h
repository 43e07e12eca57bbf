/* One cuBLAS GEMM, C = A x B (column-major), with its handle, random inputs and workspace:
 * what the GEMM scenarios time and what the readback scenario uses as pending work. cuBLAS is
 * called through gpu/cublas_api.h's table, loaded by sb_gemm_op_init. */
#ifndef SB_GEMM_OP_H
#define SB_GEMM_OP_H

#include <cuda_runtime.h>

#include "gpu/cublas_api.h"
#include "gpu/resources.h"
#include "kernels.h"

typedef struct sb_gemm_op {
    int m, n, k;
    sb_dtype dt;
    cudaDataType_t ctype;
    cublasComputeType_t compute;
    cublasHandle_t blas;
    cudaStream_t stream;
    void *A, *B, *C, *workspace;
} sb_gemm_op;

/* Device memory sb_gemm_op_init allocates. */
size_t sb_gemm_op_bytes(long long m, long long n, long long k, sb_dtype dt);
/* Loads cuBLAS (exit 3 without it), allocates, fills A and B with random values in [-1, 1) and
 * C with NaN, on `stream`. The op is kept in `res`: releasing it destroys the op. */
int sb_gemm_op_init(sb_gemm_op *op, sb_resources *res, int m, int n, int k, sb_dtype dt, int tf32,
                    cudaStream_t stream);
void sb_gemm_op_destroy(sb_gemm_op *op);
double sb_gemm_op_flops(const sb_gemm_op *op);

/* Enqueues one GEMM on the op's stream (inline: it sits in timed loops). */
static inline cublasStatus_t sb_gemm_op_run(const sb_gemm_op *op)
{
    const float alpha = 1.0f, beta = 0.0f;
    return sb_cublas.gemm_ex(op->blas, CUBLAS_OP_N, CUBLAS_OP_N, op->m, op->n, op->k, &alpha, op->A,
                             op->ctype, op->m, op->B, op->ctype, op->k, &beta, op->C, op->ctype,
                             op->m, op->compute, CUBLAS_GEMM_DEFAULT);
}

/* Fills C with NaN (0xFF bytes are NaN in fp16, bf16 and fp32). */
int sb_gemm_op_poison(sb_gemm_op *op);

#endif
