#include "activity.h"

#include <stdio.h>
#include <stdlib.h>

#include <cupti.h>

#include "launches.h"
#include "out.h"

#define BUFFER_SIZE (8u << 20)
#define ALIGN 8

static int trace_mode;
static uint64_t dropped;

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    void *p = NULL;
    if (posix_memalign(&p, ALIGN, BUFFER_SIZE) != 0)
        p = NULL;
    *buffer = p;
    *size = p ? BUFFER_SIZE : 0;
    *max_records = 0;
}

static const char *copy_kind(uint8_t k)
{
    switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
        return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
        return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
        return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
        return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
        return "PtoP";
    default:
        return "other";
    }
}

static const char *memory_kind(uint8_t k)
{
    switch (k) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
        return "pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
        return "pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
        return "device";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
        return "managed";
    default:
        return "other";
    }
}

static void write_record(const CUpti_Activity *rec)
{
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const void *)rec;
        char name[1024] = "";
        if (trace_mode && k->name) {
            char esc[1000];
            snprintf(name, sizeof name, ",\"name\":\"%s\"",
                     sba_json_escape(esc, sizeof esc, k->name));
        }
        sba_out_printf("{\"t\":\"kernel\",\"dev\":%u,\"ctx\":%u,\"stream\":%u,\"corr\":%u,"
                       "\"start\":%llu,\"end\":%llu%s}",
                       k->deviceId, k->contextId, k->streamId, k->correlationId,
                       (unsigned long long)k->start, (unsigned long long)k->end, name);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const void *)rec;
        sba_out_printf("{\"t\":\"copy\",\"dev\":%u,\"ctx\":%u,\"stream\":%u,\"corr\":%u,"
                       "\"rcorr\":%u,\"start\":%llu,\"end\":%llu,\"bytes\":%llu,\"kind\":\"%s\","
                       "\"src\":\"%s\",\"dst\":\"%s\"}",
                       m->deviceId, m->contextId, m->streamId, m->correlationId,
                       m->runtimeCorrelationId, (unsigned long long)m->start,
                       (unsigned long long)m->end, (unsigned long long)m->bytes,
                       copy_kind(m->copyKind), memory_kind(m->srcKind), memory_kind(m->dstKind));
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const void *)rec;
        sba_out_printf("{\"t\":\"memset\",\"dev\":%u,\"ctx\":%u,\"stream\":%u,\"corr\":%u,"
                       "\"start\":%llu,\"end\":%llu,\"bytes\":%llu}",
                       m->deviceId, m->contextId, m->streamId, m->correlationId,
                       (unsigned long long)m->start, (unsigned long long)m->end,
                       (unsigned long long)m->bytes);
        break;
    }
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: {
        const CUpti_ActivityCudaEvent2 *e = (const void *)rec;
        sba_out_printf("{\"t\":\"event\",\"ctx\":%u,\"stream\":%u,\"corr\":%u,\"sync_id\":%llu}",
                       e->contextId, e->streamId, e->correlationId,
                       (unsigned long long)e->cudaEventSyncId);
        break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        const CUpti_ActivitySynchronization2 *y = (const void *)rec;
        const char *type =
            y->type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE     ? "event"
            : y->type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT   ? "wait"
            : y->type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE  ? "stream"
            : y->type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE ? "context"
                                                                                 : NULL;
        if (!type)
            break;
        /* fields that do not apply are CUPTI_SYNCHRONIZATION_INVALID_VALUE: written as -1 */
        long long stream =
            y->streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? -1 : (long long)y->streamId;
        long long sync = y->cudaEventSyncId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ||
                                 y->cudaEventSyncId == (uint64_t)-1
                             ? -1
                             : (long long)y->cudaEventSyncId;
        sba_out_printf("{\"t\":\"sync\",\"type\":\"%s\",\"ctx\":%u,\"stream\":%lld,\"corr\":%u,"
                       "\"sync_id\":%lld,\"start\":%llu,\"end\":%llu}",
                       type, y->contextId, stream, y->correlationId, sync,
                       (unsigned long long)y->start, (unsigned long long)y->end);
        break;
    }
    case CUPTI_ACTIVITY_KIND_STREAM: {
        /* how a stream orders against the legacy default stream (the replay) */
        const CUpti_ActivityStream *st = (const void *)rec;
        int f = (int)(st->flag & CUPTI_ACTIVITY_STREAM_CREATE_MASK);
        const char *flag = f == CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL           ? "null"
                           : f == CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT      ? "blocking"
                           : f == CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING ? "non-blocking"
                                                                                 : NULL;
        if (flag)
            sba_out_printf("{\"t\":\"gstream\",\"ctx\":%u,\"stream\":%u,\"flag\":\"%s\"}",
                           st->contextId, st->streamId, flag);
        break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
        const CUpti_ActivityAPI *a = (const void *)rec;
        int rt = rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
        const char *name = NULL;
        cuptiGetCallbackName(rt ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, a->cbid,
                             &name);
        sba_out_printf("{\"t\":\"api\",\"api\":\"%s\",\"dom\":\"%s\",\"tid\":%u,\"corr\":%u,"
                       "\"start\":%llu,\"end\":%llu}",
                       name ? name : "?", rt ? "rt" : "drv", a->threadId, a->correlationId,
                       (unsigned long long)a->start, (unsigned long long)a->end);
        break;
    }
    default:
        break;
    }
}

/* A kernel, copy or memset that had not finished when its buffer was flushed (the forced flush
 * at the exit) comes with start and end 0: a time of 0 is none, and written it would stand
 * decades before the run. Counted as dropped instead. */
static int unfinished(const CUpti_Activity *rec)
{
    uint64_t start = 1, end = 1;
    if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
        rec->kind == CUPTI_ACTIVITY_KIND_KERNEL)
        start = ((const CUpti_ActivityKernel10 *)(const void *)rec)->start,
        end = ((const CUpti_ActivityKernel10 *)(const void *)rec)->end;
    else if (rec->kind == CUPTI_ACTIVITY_KIND_MEMCPY)
        start = ((const CUpti_ActivityMemcpy6 *)(const void *)rec)->start,
        end = ((const CUpti_ActivityMemcpy6 *)(const void *)rec)->end;
    else if (rec->kind == CUPTI_ACTIVITY_KIND_MEMSET)
        start = ((const CUpti_ActivityMemset4 *)(const void *)rec)->start,
        end = ((const CUpti_ActivityMemset4 *)(const void *)rec)->end;
    return !start || !end;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid)
{
    (void)size;
    CUpti_Activity *rec = NULL;
    while (valid && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
        if (unfinished(rec))
            __atomic_fetch_add(&dropped, 1, __ATOMIC_RELAXED);
        else
            write_record(rec);
    size_t n = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &n) == CUPTI_SUCCESS)
        __atomic_fetch_add(&dropped, (uint64_t)n, __ATOMIC_RELAXED);
    free(buffer);
}

/* The kinds enabled, for sba_activity_pause */
static CUpti_ActivityKind enabled[16];
static int nenabled, launches_on;

static int enable(CUpti_ActivityKind kind, const char *what)
{
    CUptiResult r = cuptiActivityEnable(kind);
    if (r == CUPTI_SUCCESS) {
        if (nenabled < (int)(sizeof enabled / sizeof enabled[0]))
            enabled[nenabled++] = kind;
        return 0;
    }
    const char *msg = "?";
    cuptiGetResultString(r, &msg);
    char esc[512];
    sba_out_printf("{\"t\":\"warn\",\"msg\":\"cannot record %s: %s\"}", what,
                   sba_json_escape(esc, sizeof esc, msg));
    return -1;
}

int sba_activity_start(int kernels, int launches, int trace)
{
    trace_mode = trace;
    cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (r != CUPTI_SUCCESS) {
        const char *msg = "?";
        cuptiGetResultString(r, &msg);
        sba_out_printf("{\"t\":\"warn\",\"msg\":\"cannot record GPU activity: %s\"}", msg);
        return -1;
    }
    int rc = 0;
    if (kernels)
        rc |= enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernels");
    rc |= enable(CUPTI_ACTIVITY_KIND_MEMCPY, "copies");
    rc |= enable(CUPTI_ACTIVITY_KIND_MEMSET, "memsets");
    if (trace) {
        rc |= enable(CUPTI_ACTIVITY_KIND_RUNTIME, "runtime API calls");
        rc |= enable(CUPTI_ACTIVITY_KIND_DRIVER, "driver API calls");
    } else if (launches && sba_launches_enable(1) == 0) {
        sba_out_printf("{\"t\":\"warn\",\"msg\":\"cannot record the launches: no launch API "
                       "could be enabled\"}");
        rc = -1;
    } else if (launches) {
        launches_on = 1;
    }
    if (launches || trace) {
        rc |= enable(CUPTI_ACTIVITY_KIND_CUDA_EVENT, "event records");
        rc |= enable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "synchronizations");
        rc |= enable(CUPTI_ACTIVITY_KIND_STREAM, "streams");
    }
    /* records reach the file at least every half second: a killed process keeps most */
    cuptiActivityFlushPeriod(500);
    return rc;
}

void sba_activity_pause(int paused)
{
    for (int i = 0; i < nenabled; i++)
        (paused ? cuptiActivityDisable : cuptiActivityEnable)(enabled[i]);
    if (launches_on)
        sba_launches_enable(!paused);
}

void sba_activity_flush(int forced)
{
    cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

uint64_t sba_activity_dropped(void)
{
    return __atomic_load_n(&dropped, __ATOMIC_RELAXED);
}
