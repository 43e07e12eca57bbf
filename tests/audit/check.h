/* What the audit's test programs share: every CUDA call checked (exit 1 with one line naming
 * the call), and a short spin on the GPU so that a sync has something to wait for. */
#ifndef SB_AUDIT_TEST_CHECK_H
#define SB_AUDIT_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#include "kernels.h"

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t ck_err_ = (call);                                                              \
        if (ck_err_ != cudaSuccess) {                                                              \
            fprintf(stderr, "%s: %s:%d: %s: %s\n", prog_name, __FILE__, __LINE__, #call,           \
                    cudaGetErrorString(ck_err_));                                                  \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* The program's name in messages; each program defines it. */
extern const char *prog_name;

/* GPU work of `us` microseconds on `stream` that writes marker[0] = value. */
static inline void spin_us(unsigned us, float *marker, float value, cudaStream_t stream)
{
    CK(sb_launch_spin_then_mark(us * 1000ull, marker, 1, value, stream));
}

#endif
