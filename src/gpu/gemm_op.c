#include "gpu/gemm_op.h"

#include <string.h>

#include "gpu/cuda_check.h"

#define WORKSPACE_BYTES (32u << 20)

size_t sb_gemm_op_bytes(long long m, long long n, long long k, sb_dtype dt)
{
    size_t es = sb_dtype_size(dt);
    return ((size_t)m * (size_t)k + (size_t)k * (size_t)n + (size_t)m * (size_t)n) * es +
           WORKSPACE_BYTES;
}

static void release(void *op)
{
    sb_gemm_op_destroy(op);
}

int sb_gemm_op_init(sb_gemm_op *op, sb_resources *res, int m, int n, int k, sb_dtype dt, int tf32,
                    cudaStream_t stream)
{
    memset(op, 0, sizeof *op);
    int rc = sb_keep(res, release, op); /* destroy copes with a half-made op */
    if (rc)
        return rc;
    op->m = m;
    op->n = n;
    op->k = k;
    op->dt = dt;
    op->stream = stream;
    op->ctype = dt == SB_DTYPE_F16 ? CUDA_R_16F : dt == SB_DTYPE_BF16 ? CUDA_R_16BF : CUDA_R_32F;
    op->compute = (dt == SB_DTYPE_F32 && tf32) ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    size_t es = sb_dtype_size(dt);
    if ((rc = sb_cublas_load()) != 0)
        return rc;
    SB_CUBLAS(sb_cublas.create(&op->blas));
    SB_CUBLAS(sb_cublas.set_stream(op->blas, stream));
    SB_CUBLAS(sb_cublas.set_math_mode(op->blas, CUBLAS_DEFAULT_MATH));
    /* our own workspace, so that cuBLAS allocates nothing while we time it */
    SB_CUDA(cudaMalloc(&op->workspace, WORKSPACE_BYTES));
    SB_CUBLAS(sb_cublas.set_workspace(op->blas, op->workspace, WORKSPACE_BYTES));
    SB_CUDA(cudaMalloc(&op->A, (size_t)m * k * es));
    SB_CUDA(cudaMalloc(&op->B, (size_t)k * n * es));
    SB_CUDA(cudaMalloc(&op->C, (size_t)m * n * es));
    /* random inputs in [-1, 1): never time on zeros */
    SB_LAUNCH(sb_fill_uniform(op->A, dt, (size_t)m * k, 0xA11CEull, -1.0f, 1.0f, stream));
    SB_LAUNCH(sb_fill_uniform(op->B, dt, (size_t)k * n, 0xB0Bull, -1.0f, 1.0f, stream));
    return sb_gemm_op_poison(op);
}

int sb_gemm_op_poison(sb_gemm_op *op)
{
    SB_CUDA(
        cudaMemsetAsync(op->C, 0xFF, (size_t)op->m * op->n * sb_dtype_size(op->dt), op->stream));
    return 0;
}

double sb_gemm_op_flops(const sb_gemm_op *op)
{
    return 2.0 * op->m * op->n * op->k;
}

void sb_gemm_op_destroy(sb_gemm_op *op)
{
    cudaFree(op->A);
    cudaFree(op->B);
    cudaFree(op->C);
    cudaFree(op->workspace);
    if (op->blas)
        sb_cublas.destroy(op->blas);
    memset(op, 0, sizeof *op);
}
