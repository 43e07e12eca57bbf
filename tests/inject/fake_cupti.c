/* A CPU stand-in for CUPTI (libcupti.so.13), for the launcher's tests on machines without a
 * GPU: the real CUPTI refuses to subscribe there, and a process it refuses is now reported as
 * not watched (the gate fails). This one accepts the subscription and every callback, and has
 * no activity to give, so tests/inject/fake_cuda is watched as a CUDA program that made no
 * blocking call. Built as build/tests/fake-cupti/libcupti.so.13 with the real library's
 * symbol version; the tests put that folder on LD_LIBRARY_PATH (which comes before the
 * injection library's RUNPATH). Only what the injection library calls is here.
 * With FAKE_CUPTI_LOG=PATH it appends to PATH a line for each activity the library asks for
 * (tests/cli/test_activity_knobs.py): "enable KIND", "rt-api CBID ON", "drv-api CBID ON",
 * "buffer BYTES" (the size of the buffer the library hands over when asked once),
 * "flush-period MS", "attribute ATTR VALUE", and "disable KIND" for each kind switched off; the
 * answers stay the same, unless FAKE_CUPTI_ACCEPT=1, with which every activity asked for is
 * granted (none comes: there is no GPU).
 * fake_cupti_nvtx (exported, for tests/inject/fake_cuda's "ranges") plays an NVTX call through
 * the subscriber's callback as CUPTI would, logged as "push NAME[@DOMAIN]" or "pop". */
#include <cupti.h>
#include <generated_nvtx_meta.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define FAKE __attribute__((visibility("default")))

static void say(const char *fmt, ...)
{
    const char *path = getenv("FAKE_CUPTI_LOG");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (!f)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
    fclose(f);
}

static CUpti_CallbackFunc subscribed;
static void *subscribed_data;

FAKE CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                                void *userdata)
{
    subscribed = callback;
    subscribed_data = userdata;
    static int handle;
    *subscriber = (CUpti_SubscriberHandle)&handle;
    return CUPTI_SUCCESS;
}

FAKE CUptiResult cuptiGetTimestamp(uint64_t *timestamp)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    *timestamp = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    return CUPTI_SUCCESS;
}

FAKE CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
    *str = result == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : "fake CUPTI: not supported";
    return CUPTI_SUCCESS;
}

FAKE CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char **name)
{
    /* one watched call, so that the injection library enables a callback, and one launch
     * function in each domain, so that --gpu-activity asks for their records */
    int rt = domain == CUPTI_CB_DOMAIN_RUNTIME_API, drv = domain == CUPTI_CB_DOMAIN_DRIVER_API;
    *name = rt && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020
                ? "cudaStreamSynchronize_v3020"
            : rt && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000
                ? "cudaLaunchKernel_v7000"
            : drv && cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel ? "cuLaunchKernel"
                                                                    : "fake";
    return CUPTI_SUCCESS;
}

FAKE CUptiResult cuptiGetContextId(CUcontext context, uint32_t *id)
{
    (void)context;
    *id = 0;
    return CUPTI_SUCCESS;
}

/* The calls that only answer, whatever their arguments (this file is built with
 * -Wno-unused-parameter). No GPU: no activity; the injection library asks for it only under
 * --gpu-activity. */
#define ANSWER(result, name, ...)                                                                  \
    FAKE CUptiResult name(__VA_ARGS__)                                                             \
    {                                                                                              \
        return result;                                                                             \
    }
/* clang-format off */
ANSWER(CUPTI_SUCCESS, cuptiSetThreadIdType, CUpti_ActivityThreadIdType type)
ANSWER(CUPTI_SUCCESS, cuptiActivityFlushAll, uint32_t flag)
ANSWER(CUPTI_ERROR_MAX_LIMIT_REACHED, cuptiActivityGetNextRecord, uint8_t *buffer,
       size_t valid_size, CUpti_Activity **record)
ANSWER(CUPTI_SUCCESS, cuptiEnableCallback, uint32_t enable, CUpti_SubscriberHandle subscriber,
       CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
ANSWER(CUPTI_SUCCESS, cuptiEnableDomain, uint32_t enable, CUpti_SubscriberHandle subscriber,
       CUpti_CallbackDomain domain)
/* clang-format on */

FAKE CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t stream_id,
                                                   size_t *dropped)
{
    (void)context, (void)stream_id;
    *dropped = 0;
    return CUPTI_SUCCESS;
}

/* FAKE_CUPTI_ACCEPT=1: what is asked for is granted; else refused (no GPU, no activity). */
static CUptiResult answer(void)
{
    const char *accept = getenv("FAKE_CUPTI_ACCEPT");
    return accept && accept[0] == '1' ? CUPTI_SUCCESS : CUPTI_ERROR_NOT_SUPPORTED;
}

static const char *kind_name(CUpti_ActivityKind kind)
{
    return kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ? "kernels"
           : kind == CUPTI_ACTIVITY_KIND_MEMCPY          ? "memcpy"
           : kind == CUPTI_ACTIVITY_KIND_MEMSET          ? "memset"
           : kind == CUPTI_ACTIVITY_KIND_CUDA_EVENT      ? "events"
           : kind == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION ? "syncs"
           : kind == CUPTI_ACTIVITY_KIND_STREAM          ? "streams"
           : kind == CUPTI_ACTIVITY_KIND_RUNTIME         ? "runtime"
           : kind == CUPTI_ACTIVITY_KIND_DRIVER          ? "driver"
                                                         : "other";
}

/* What the library asks for: logged (FAKE_CUPTI_LOG). */
FAKE CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
    say("enable %s", kind_name(kind));
    return answer();
}

FAKE CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
    say("disable %s", kind_name(kind));
    return CUPTI_SUCCESS;
}

FAKE CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
    say("rt-api %u %u", (unsigned)cbid, (unsigned)enable);
    return answer();
}

FAKE CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
    say("drv-api %u %u", (unsigned)cbid, (unsigned)enable);
    return answer();
}

FAKE CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t *size, void *value)
{
    say("attribute %d %u", (int)attr, *size == 1 ? *(uint8_t *)value : (unsigned)*size);
    return CUPTI_SUCCESS;
}

FAKE CUptiResult cuptiActivityFlushPeriod(uint32_t time)
{
    say("flush-period %u", (unsigned)time);
    return CUPTI_SUCCESS;
}

/* Asks for one buffer, to log its size, and gives it back. */
FAKE CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                                CUpti_BuffersCallbackCompleteFunc complete)
{
    uint8_t *buf = NULL;
    size_t size = 0, max = 0;
    if (getenv("FAKE_CUPTI_LOG") && request) {
        request(&buf, &size, &max);
        say("buffer %zu", size);
        free(buf);
    }
    return CUPTI_SUCCESS;
}

/* An NVTX call, as CUPTI hands it to its subscriber: op "push" (name, in domain when not NULL:
 * created the first time, as nvtxDomainCreateA does) or "pop" (of domain's ranges). */
FAKE void fake_cupti_nvtx(const char *op, const char *name, const char *domain)
{
    static nvtxDomainHandle_t handle;
    static int created;
    if (!subscribed)
        return;
    if (domain && !created) {
        nvtxDomainCreateA_params p = {domain};
        handle = (nvtxDomainHandle_t)&created;
        CUpti_NvtxData d = {"nvtxDomainCreateA", &p, &handle};
        subscribed(subscribed_data, CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxDomainCreateA, &d);
        created = 1;
    }
    if (op[1] == 'u') { /* push */
        say("push %s%s%s", name, domain ? "@" : "", domain ? domain : "");
        nvtxEventAttributes_t a = {.version = NVTX_VERSION,
                                   .size = NVTX_EVENT_ATTRIB_STRUCT_SIZE,
                                   .messageType = NVTX_MESSAGE_TYPE_ASCII};
        a.message.ascii = name;
        nvtxRangePushA_params pa = {name};
        nvtxDomainRangePushEx_params pd = {handle, {&a}};
        CUpti_NvtxData d = {"push", domain ? (const void *)&pd : (const void *)&pa, NULL};
        subscribed(subscribed_data, CUPTI_CB_DOMAIN_NVTX,
                   domain ? CUPTI_CBID_NVTX_nvtxDomainRangePushEx : CUPTI_CBID_NVTX_nvtxRangePushA,
                   &d);
    } else {
        say("pop");
        nvtxRangePop_params pp = {NULL};
        nvtxDomainRangePop_params pdp = {handle};
        CUpti_NvtxData d = {"pop", domain ? (const void *)&pdp : (const void *)&pp, NULL};
        subscribed(subscribed_data, CUPTI_CB_DOMAIN_NVTX,
                   domain ? CUPTI_CBID_NVTX_nvtxDomainRangePop : CUPTI_CBID_NVTX_nvtxRangePop, &d);
    }
}
