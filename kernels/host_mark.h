/* A kernel that marks its completion where the host sees it without a CUDA call: it spins for
 * `ns` nanoseconds of the GPU's own clock (%globaltimer), then stores `value` into a word of
 * host-mapped pinned memory. After a sync returns, the host reads the word directly: it holds
 * this step's value if and only if the sync waited for the kernel (busy-stream, sched). */
#ifndef SB_HOST_MARK_H
#define SB_HOST_MARK_H

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* `mark` is the device pointer of a cudaHostAllocMapped word (cudaHostGetDevicePointer). */
cudaError_t sb_launch_spin_mark_host(unsigned long long ns, volatile unsigned *mark, unsigned value,
                                     cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif
