/* A CPU stand-in for CUPTI (libcupti.so.13), for the launcher's tests on machines without a
 * GPU: the real CUPTI refuses to subscribe there, and a process it refuses is now reported as
 * not watched (the gate fails). This one accepts the subscription and every callback, and has
 * no activity to give (but the launches' API records when asked, below), so
 * tests/inject/fake_cuda is watched as a CUDA program that made no blocking call. Built as
 * build/tests/fake-cupti/libcupti.so.13 with the real library's symbol version; the tests put
 * that folder on LD_LIBRARY_PATH (which comes before the injection library's RUNPATH). Only
 * what the injection library calls is here.
 * With FAKE_CUPTI_LOG=PATH it appends to PATH a line for each activity the library asks for
 * (tests/cli/test_activity_knobs.py): "enable KIND", "rt-api CBID ON", "drv-api CBID ON",
 * "buffer BYTES" (the size of the buffer the library hands over when asked once),
 * "flush-period MS", "attribute ATTR VALUE", "disable KIND" for each kind switched off,
 * "resource context-created|context-destroy|other ON" for the resource domain's callbacks and
 * "flush-all" for each flush asked for; the
 * answers stay the same, unless FAKE_CUPTI_ACCEPT=1, with which every activity asked for is
 * granted (of it only the launches' API records below come: there is no GPU).
 * fake_cupti_nvtx (exported, for tests/inject/fake_cuda's "ranges") plays an NVTX call through
 * the subscriber's callback as CUPTI would, logged as "push NAME[@DOMAIN]" or "pop".
 * fake_cupti_launch (exported, fake_cuda's "ranges": one in each instance) is a kernel launch:
 * with FAKE_CUPTI_API_RECORDS=1, and cudaLaunchKernel's API records asked for and granted, it
 * is a runtime API record (cudaLaunchKernel_v7000, a correlation id, start and end on
 * cuptiGetTimestamp's clock), kept until cuptiActivityFlushAll hands the records to the
 * library's buffer-completed callback in a buffer it asked for (cuptiActivityGetNextRecord
 * walks it); else nothing. fake_cupti_context (exported, fake_cuda's "ranges" first) plays the
 * creation of CUDA's first context. */
#include <cupti.h>
#include <generated_nvtx_meta.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

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
 * -Wno-unused-parameter). */
#define ANSWER(result, name, ...)                                                                  \
    FAKE CUptiResult name(__VA_ARGS__)                                                             \
    {                                                                                              \
        return result;                                                                             \
    }
/* clang-format off */
ANSWER(CUPTI_SUCCESS, cuptiSetThreadIdType, CUpti_ActivityThreadIdType type)
ANSWER(CUPTI_SUCCESS, cuptiEnableDomain, uint32_t enable, CUpti_SubscriberHandle subscriber,
       CUpti_CallbackDomain domain)
/* clang-format on */

/* Every callback is accepted; of the resource domain's, whether the context's creation was
 * asked for (fake_cupti_context delivers it only then). */
static int context_created_on;

FAKE CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                     CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    (void)subscriber;
    if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED)
        context_created_on = enable != 0;
    if (domain == CUPTI_CB_DOMAIN_RESOURCE)
        say("resource %s %u",
            cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED            ? "context-created"
            : cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING ? "context-destroy"
                                                                   : "other",
            enable);
    return CUPTI_SUCCESS;
}

/* ---- the launches' API records (FAKE_CUPTI_API_RECORDS=1) ---- */

static CUpti_BuffersCallbackRequestFunc requested;
static CUpti_BuffersCallbackCompleteFunc completed;
static int launch_api_on, runtime_on; /* cudaLaunchKernel's records; the runtime kind's */
static CUpti_ActivityAPI pending[1024];
static size_t npending, lost;
static uint32_t next_corr = 1;
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;

FAKE void fake_cupti_launch(void)
{
    const char *on = getenv("FAKE_CUPTI_API_RECORDS");
    if (!on || on[0] != '1')
        return;
    pthread_mutex_lock(&pending_lock);
    uint32_t corr = next_corr++; /* every call has one, recorded or not, as in CUPTI */
    if (launch_api_on || runtime_on) {
        CUpti_ActivityAPI a = {.kind = CUPTI_ACTIVITY_KIND_RUNTIME,
                               .cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                               .processId = (uint32_t)getpid(),
                               .threadId = (uint32_t)syscall(SYS_gettid),
                               .correlationId = corr};
        cuptiGetTimestamp(&a.start);
        cuptiGetTimestamp(&a.end);
        if (npending < sizeof pending / sizeof pending[0])
            pending[npending++] = a;
        else
            lost++;
    }
    pthread_mutex_unlock(&pending_lock);
}

/* The records kept, in buffers the library asks for, each handed to its callback. */
FAKE CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    say("flush-all");
    for (;;) {
        uint8_t *buf = NULL;
        size_t size = 0, max = 0, valid = 0;
        pthread_mutex_lock(&pending_lock);
        if (npending && requested && completed)
            requested(&buf, &size, &max);
        size_t n = buf ? size / sizeof pending[0] : 0;
        n = n < npending ? n : npending;
        if (n) {
            valid = n * sizeof pending[0];
            memcpy(buf, pending, valid);
            memmove(pending, pending + n, (npending - n) * sizeof pending[0]);
            npending -= n;
        }
        pthread_mutex_unlock(&pending_lock);
        if (!n) {
            free(buf);
            return CUPTI_SUCCESS;
        }
        completed(NULL, 0, buf, size, valid);
    }
}

/* The buffer holds API records only, one after the other. */
FAKE CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid_size,
                                            CUpti_Activity **record)
{
    uint8_t *next = *record ? (uint8_t *)*record + sizeof(CUpti_ActivityAPI) : buffer;
    if ((size_t)(next - buffer) + sizeof(CUpti_ActivityAPI) > valid_size)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *record = (CUpti_Activity *)(void *)next;
    return CUPTI_SUCCESS;
}

FAKE CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t stream_id,
                                                   size_t *dropped)
{
    (void)context, (void)stream_id;
    pthread_mutex_lock(&pending_lock);
    *dropped = lost;
    lost = 0;
    pthread_mutex_unlock(&pending_lock);
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
    CUptiResult r = answer();
    if (kind == CUPTI_ACTIVITY_KIND_RUNTIME && r == CUPTI_SUCCESS)
        __atomic_store_n(&runtime_on, 1, __ATOMIC_RELAXED);
    return r;
}

FAKE CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
    say("disable %s", kind_name(kind));
    if (kind == CUPTI_ACTIVITY_KIND_RUNTIME)
        __atomic_store_n(&runtime_on, 0, __ATOMIC_RELAXED);
    return CUPTI_SUCCESS;
}

FAKE CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
    say("rt-api %u %u", (unsigned)cbid, (unsigned)enable);
    CUptiResult r = answer();
    if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 && r == CUPTI_SUCCESS)
        __atomic_store_n(&launch_api_on, enable != 0, __ATOMIC_RELAXED);
    return r;
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

/* Kept for the launches' records; with FAKE_CUPTI_LOG, asks for one buffer, to log its size,
 * and gives it back. */
FAKE CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                                CUpti_BuffersCallbackCompleteFunc complete)
{
    pthread_mutex_lock(&pending_lock);
    requested = request;
    completed = complete;
    pthread_mutex_unlock(&pending_lock);
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

/* CUDA's first context, as CUPTI tells its subscriber (the resource domain's CONTEXT_CREATED,
 * when it asked for it), logged as "context": fake_cuda's "ranges" makes one before its first
 * range, as a CUDA program does before its first launch, or where its arguments say. */
FAKE void fake_cupti_context(void)
{
    if (!subscribed || !context_created_on)
        return;
    say("context");
    CUpti_ResourceData d = {NULL, {NULL}, NULL};
    subscribed(subscribed_data, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &d);
}
