/* A CPU stand-in for CUPTI (libcupti.so.13), for the launcher's tests on machines without a
 * GPU: the real CUPTI refuses to subscribe there, and a process it refuses is now reported as
 * not watched (the gate fails). This one accepts the subscription and every callback, and has
 * no activity to give, so tests/inject/fake_cuda is watched as a CUDA program that made no
 * blocking call. Built as build/tests/fake-cupti/libcupti.so.13 with the real library's
 * symbol version; the tests put that folder on LD_LIBRARY_PATH (which comes before the
 * injection library's RUNPATH). Only what the injection library calls is here. */
#include <cupti.h>
#include <time.h>

#define FAKE __attribute__((visibility("default")))

FAKE CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                                void *userdata)
{
    (void)callback, (void)userdata;
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
    /* one watched call, so that the injection library enables a callback */
    *name = domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
                    cbid == CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020
                ? "cudaStreamSynchronize_v3020"
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
ANSWER(CUPTI_ERROR_NOT_SUPPORTED, cuptiActivityEnable, CUpti_ActivityKind kind)
ANSWER(CUPTI_SUCCESS, cuptiActivityDisable, CUpti_ActivityKind kind)
ANSWER(CUPTI_ERROR_NOT_SUPPORTED, cuptiActivityEnableDriverApi, CUpti_CallbackId cbid,
       uint8_t enable)
ANSWER(CUPTI_ERROR_NOT_SUPPORTED, cuptiActivityEnableRuntimeApi, CUpti_CallbackId cbid,
       uint8_t enable)
ANSWER(CUPTI_SUCCESS, cuptiActivityFlushAll, uint32_t flag)
ANSWER(CUPTI_SUCCESS, cuptiActivityFlushPeriod, uint32_t time)
ANSWER(CUPTI_ERROR_MAX_LIMIT_REACHED, cuptiActivityGetNextRecord, uint8_t *buffer,
       size_t valid_size, CUpti_Activity **record)
ANSWER(CUPTI_SUCCESS, cuptiActivityRegisterCallbacks, CUpti_BuffersCallbackRequestFunc request,
       CUpti_BuffersCallbackCompleteFunc complete)
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
