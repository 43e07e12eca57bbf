#include "gpu/trace.h"

#include <cuda_profiler_api.h>
#include <nvtx3/nvToolsExt.h>

#include "gpu/cuda_check.h"

static nvtxDomainHandle_t domain(void)
{
    static nvtxDomainHandle_t d;
    if (!d)
        d = nvtxDomainCreateA("syncbench");
    return d;
}

void sb_trace_push(const char *name, uint32_t argb)
{
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = argb;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name;
    nvtxDomainRangePushEx(domain(), &a);
}

void sb_trace_pop(void)
{
    nvtxDomainRangePop(domain());
}

int sb_trace_capture_start(void)
{
    SB_CUDA(cudaProfilerStart());
    return 0;
}

int sb_trace_capture_stop(void)
{
    SB_CUDA(cudaProfilerStop());
    return 0;
}
