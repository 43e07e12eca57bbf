#include "gpu/kernel_timer.h"

#include <string.h>

#include "gpu/cuda_check.h"
#include "kernels.h"

/* Long enough for any batch the scenarios queue, short enough not to hang on a bug. */
#define SB_WAIT_TIMEOUT_NS 5000000000ull

int sb_kernel_timer_init(sb_kernel_timer *t, sb_resources *res, cudaStream_t stream)
{
    memset(t, 0, sizeof *t);
    t->stream = stream;
    int *p;
    int rc = sb_get_pinned(res, &p, 2 * sizeof(int), cudaHostAllocMapped);
    if (!rc)
        rc = sb_get_event(res, &t->start, cudaEventDefault);
    if (!rc)
        rc = sb_get_event(res, &t->stop, cudaEventDefault);
    if (rc)
        return rc;
    t->flag = p;
    t->flag[0] = t->flag[1] = 0;
    SB_CUDA(cudaHostGetDevicePointer((void **)&t->flag_dev, p, 0));
    return 0;
}

int sb_kernel_timer_begin(sb_kernel_timer *t)
{
    t->flag[0] = 0;
    t->flag[1] = 0;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    SB_LAUNCH(sb_launch_wait_flag(t->flag_dev, t->flag_dev + 1, SB_WAIT_TIMEOUT_NS, t->stream));
    SB_CUDA(cudaEventRecord(t->start, t->stream));
    return 0;
}

int sb_kernel_timer_end(sb_kernel_timer *t, float *ms)
{
    SB_CUDA(cudaEventRecord(t->stop, t->stream));
    __atomic_store_n((int *)&t->flag[0], 1, __ATOMIC_SEQ_CST);
    SB_CUDA(cudaEventSynchronize(t->stop));
    if (__atomic_load_n((int *)&t->flag[1], __ATOMIC_SEQ_CST))
        return sb_fail(SB_EXIT_FAIL,
                       "kernel timer: the waiting kernel timed out before the work was queued%s%s",
                       *sb_error_context() ? " in " : "", sb_error_context());
    SB_CUDA(cudaEventElapsedTime(ms, t->start, t->stop));
    return 0;
}
