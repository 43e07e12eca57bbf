/* Link stubs for the fuzz targets that load the scenario registry (fuzz_ini, fuzz_numbers).
 *
 * The registry holds the real scenario structs (src/scenarios/), whose parameters, variants,
 * check() and iters_for() the suite loader and the plan use; the same files hold the scenarios'
 * GPU code, which refers to the CUDA runtime and to the kernel launchers in kernels/ (.cu files
 * built by nvcc). The targets link the real scenario and src/gpu/ objects and, instead of CUDA,
 * these stubs: one per CUDA symbol those objects refer to, none of which the loader, the plan or
 * the parsers ever call (they run before any CUDA call: README, "Every input is checked before the
 * first CUDA call"). A stub that is called anyway aborts, naming itself, and the fuzzer reports
 * the input as a crash: so the claim is checked on every input, and no code under test is
 * replaced.
 *
 * No CUDA header is included: the stubs only satisfy the linker and are never called through
 * their real types. A CUDA call added to src/scenarios/ or src/gpu/ shows up as an undefined
 * symbol when the targets link; add it here. */
#include <stdio.h>
#include <stdlib.h>

static void stub_called(const char *name)
{
    fprintf(stderr, "tests/fuzz/cuda_stubs.c: %s called: the loader must not touch CUDA\n", name);
    abort();
}

#define STUB(name)                                                                                 \
    void name(void);                                                                               \
    void name(void)                                                                                \
    {                                                                                              \
        stub_called(#name);                                                                        \
    }

/* CUDA runtime */
STUB(cudaDeviceCanAccessPeer)
STUB(cudaDeviceDisablePeerAccess)
STUB(cudaDeviceEnablePeerAccess)
STUB(cudaDeviceGetAttribute)
STUB(cudaDeviceGetPCIBusId)
STUB(cudaDeviceSynchronize)
STUB(cudaDriverGetVersion)
STUB(cudaEventCreateWithFlags)
STUB(cudaEventDestroy)
STUB(cudaEventElapsedTime)
STUB(cudaEventQuery)
STUB(cudaEventRecord)
STUB(cudaEventSynchronize)
STUB(cudaFree)
STUB(cudaFreeAsync)
STUB(cudaFreeHost)
STUB(cudaGetDevice)
STUB(cudaGetDeviceCount)
STUB(cudaGetDeviceFlags)
STUB(cudaGetDeviceProperties)
STUB(cudaGetErrorName)
STUB(cudaGetErrorString)
STUB(cudaGetLastError)
STUB(cudaGraphDestroy)
STUB(cudaGraphExecDestroy)
STUB(cudaGraphInstantiate)
STUB(cudaGraphLaunch)
STUB(cudaGraphUpload)
STUB(cudaHostAlloc)
STUB(cudaHostGetDevicePointer)
STUB(cudaInitDevice)
STUB(cudaMalloc)
STUB(cudaMallocFromPoolAsync)
STUB(cudaMemGetInfo)
STUB(cudaMemPoolCreate)
STUB(cudaMemPoolDestroy)
STUB(cudaMemPoolSetAttribute)
STUB(cudaMemcpy)
STUB(cudaMemcpyAsync)
STUB(cudaMemcpyPeerAsync)
STUB(cudaMemsetAsync)
STUB(cudaProfilerStart)
STUB(cudaProfilerStop)
STUB(cudaRuntimeGetVersion)
STUB(cudaSetDevice)
STUB(cudaStreamBeginCapture)
STUB(cudaStreamCreateWithFlags)
STUB(cudaStreamDestroy)
STUB(cudaStreamEndCapture)
STUB(cudaStreamSynchronize)
STUB(cudaStreamWaitEvent)

/* kernels/, built by nvcc */
STUB(sb_compact_count)
STUB(sb_compact_fill)
STUB(sb_compact_scan)
STUB(sb_compact_scatter)
STUB(sb_compact_tiles)
STUB(sb_dtype_size)
STUB(sb_fill_pattern)
STUB(sb_fill_uniform)
STUB(sb_gather_gemm_samples)
STUB(sb_launch_add_sum)
STUB(sb_launch_branch)
STUB(sb_launch_check_pattern)
STUB(sb_launch_gather_values)
STUB(sb_launch_make_flag)
STUB(sb_launch_rank_loss)
STUB(sb_launch_select)
STUB(sb_launch_spin_count)
STUB(sb_launch_spin_mark_host)
STUB(sb_launch_spin_then_mark)
STUB(sb_launch_sum_for)
STUB(sb_launch_train_kernel)
STUB(sb_launch_wait_flag)
STUB(sb_launch_write_values)
