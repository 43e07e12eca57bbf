#include "launches.h"

#include <stdio.h>
#include <string.h>

#include <cupti.h>

/* Base names (CUPTI's names less _vNNNN / _ptsz / _ptds) that start one of these. */
static const char *const launch_prefixes[] = {
    "cudaLaunch",          "cuLaunch",          "cudaGraphLaunch",
    "cuGraphLaunch",       "cudaEventRecord",   "cuEventRecord",
    "cudaStreamWaitEvent", "cuStreamWaitEvent", NULL};

int sba_launch_api(const char *name)
{
    for (int i = 0; launch_prefixes[i]; i++)
        if (!strncmp(name, launch_prefixes[i], strlen(launch_prefixes[i])))
            return 1;
    /* async copies and memsets; not the stream-ordered allocator (cudaMallocAsync) */
    int copy = !strncmp(name, "cudaMemcpy", 10) || !strncmp(name, "cuMemcpy", 8) ||
               !strncmp(name, "cudaMemset", 10) || !strncmp(name, "cuMemsetD", 9);
    return copy && strstr(name, "Async") != NULL;
}

static int enable_domain(CUpti_CallbackDomain dom, int size,
                         CUptiResult (*enable)(CUpti_CallbackId, uint8_t), int on)
{
    int n = 0;
    for (int id = 1; id < size; id++) {
        const char *name = NULL;
        if (cuptiGetCallbackName(dom, (uint32_t)id, &name) != CUPTI_SUCCESS || !name)
            continue;
        if (sba_launch_api(name) && enable((CUpti_CallbackId)id, (uint8_t)on) == CUPTI_SUCCESS)
            n++;
    }
    return n;
}

int sba_launches_enable(int on, int rt, int drv)
{
    return (rt ? enable_domain(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE,
                               cuptiActivityEnableRuntimeApi, on)
               : 0) +
           (drv ? enable_domain(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE,
                                cuptiActivityEnableDriverApi, on)
                : 0);
}
