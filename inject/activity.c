#include "activity.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "launches.h"
#include "out.h"
#include "base/envvars.h"

#define ALIGN 8
/* the knobs' defaults and ranges: src/base/envvars.c. By default, records reach the file at
 * least every half second: a killed process keeps most. */

static int trace_mode;
static size_t buffer_bytes; /* the plan's, set before CUPTI asks for a buffer */
static int buffers_zeroed;
static uint64_t dropped;
/* The GPU window's bounds on CUPTI's clock (sba_activity_window_bounds): a launch's API record
 * outside them is dropped. Without a window: 0 to UINT64_MAX. */
static uint64_t window_from, window_to = UINT64_MAX;

/* ---- the plan: the level's kinds, and the developer knobs ---- */

static const struct {
    const char *name;
    unsigned bit;
} kind_names[SBA_NKINDS] = {{"kernels", SBA_KIND_KERNELS},
                            {"memcpy", SBA_KIND_MEMCPY},
                            {"memset", SBA_KIND_MEMSET},
                            {"rt-launches", SBA_KIND_RT_LAUNCHES},
                            {"drv-launches", SBA_KIND_DRV_LAUNCHES},
                            {"events", SBA_KIND_EVENTS},
                            {"syncs", SBA_KIND_SYNCS},
                            {"streams", SBA_KIND_STREAMS},
                            {"waits", SBA_KIND_WAITS}};
#define ALL_KINDS ((1u << SBA_NKINDS) - 1)

static void plan_warn(sba_activity_plan *p, const char *var, const char *value, const char *why)
{
    if (p->nwarn < SBA_WARN_MAX)
        snprintf(p->warn[p->nwarn++], sizeof p->warn[0], "%s=\"%.64s\": %s", var, value, why);
}

/* SYNCBENCH_ACTIVITY_OFF: kind names (kind_names) or "all", separated by commas or spaces; an
 * unknown name is a warning and ignored. The bits named. */
static unsigned parse_off(sba_activity_plan *p, const char *s)
{
    unsigned off = 0;
    while (s && *s) {
        size_t len = strcspn(s, ", ");
        int known = !len || (len == 3 && !strncmp(s, "all", 3));
        if (len == 3 && !strncmp(s, "all", 3))
            off = ALL_KINDS;
        for (int i = 0; i < SBA_NKINDS && !known; i++)
            if (strlen(kind_names[i].name) == len && !strncmp(s, kind_names[i].name, len))
                off |= kind_names[i].bit, known = 1;
        if (!known) {
            char name[65];
            snprintf(name, sizeof name, "%.*s", (int)(len < 64 ? len : 64), s);
            plan_warn(p, "SYNCBENCH_ACTIVITY_OFF", name,
                      "no such kind (kernels, memcpy, memset, rt-launches, drv-launches, events, "
                      "syncs, streams, waits, all): ignored");
        }
        s += len;
        s += strspn(s, ", ");
    }
    return off;
}

/* A knob's whole number within its range (envvars.c), its default when unset; a bad one is a
 * warning and the default. */
static long parse_num(sba_activity_plan *p, sb_env_id id)
{
    int bad;
    long v = sb_env_long(id, &bad);
    if (bad) {
        const sb_env_var *var = sb_env_var_of(id);
        char why[96];
        snprintf(why, sizeof why, "not a whole number from %ld to %ld; %ld used", var->lo, var->hi,
                 var->dflt);
        plan_warn(p, var->name, sb_env_str(id), why);
    }
    return v;
}

void sba_activity_plan_make(sba_activity_plan *p, int gpu, int trace)
{
    memset(p, 0, sizeof *p);
    p->trace = trace;
    if (trace && gpu < 3)
        gpu = 3;
    /* the hand-offs in every mode (where the launcher preloaded the waits library) */
    unsigned level = gpu >= 3   ? ALL_KINDS
                     : gpu == 2 ? SBA_KIND_KERNELS | SBA_KIND_MEMCPY | SBA_KIND_MEMSET
                     : gpu == 1 ? SBA_KIND_MEMCPY | SBA_KIND_MEMSET
                                : 0;
    level |= SBA_KIND_WAITS;
    p->buffer_bytes = (size_t)sb_env_var_of(SB_ENV_ACTIVITY_BUFFER_MB)->dflt << 20;
    p->flush_ms = (unsigned)sb_env_var_of(SB_ENV_ACTIVITY_FLUSH_MS)->dflt;
    p->off = parse_off(p, sb_env_str(SB_ENV_ACTIVITY_OFF)) & level;
    p->kinds = level & ~p->off;
    if (level == SBA_KIND_WAITS)
        return; /* no GPU activity: no buffers to tune */
    p->buffer_bytes = (size_t)parse_num(p, SB_ENV_ACTIVITY_BUFFER_MB) << 20;
    p->flush_ms = (unsigned)parse_num(p, SB_ENV_ACTIVITY_FLUSH_MS);
    p->zeroed = (int)parse_num(p, SB_ENV_ACTIVITY_ZEROED);
}

/* ,"KEY":["name",...] of the kinds in bits */
static size_t kinds_field(char *buf, size_t n, const char *key, unsigned bits)
{
    size_t len = (size_t)snprintf(buf, n, ",\"%s\":[", key);
    for (int i = 0, first = 1; i < SBA_NKINDS && len < n; i++)
        if (bits & kind_names[i].bit)
            len += (size_t)snprintf(buf + len, n - len, "%s\"%s\"", first ? "" : ",",
                                    kind_names[i].name),
                first = 0;
    if (len < n)
        len += (size_t)snprintf(buf + len, n - len, "]");
    return len;
}

void sba_activity_proc_fields(const sba_activity_plan *p, char *buf, size_t n)
{
    size_t len = kinds_field(buf, n, "kinds", p->kinds);
    if (p->off && len < n)
        len += kinds_field(buf + len, n - len, "off", p->off);
    if (((p->kinds | p->off) & ~SBA_KIND_WAITS) && len < n) /* GPU activity: its buffers */
        snprintf(buf + len, n - len, ",\"buffer_mb\":%zu,\"flush_ms\":%u%s", p->buffer_bytes >> 20,
                 p->flush_ms, p->zeroed ? ",\"zeroed\":1" : "");
}

/* ---- the records ---- */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    void *p = NULL;
    if (buffers_zeroed)              /* fresh pages come zeroed: calloc need not write them */
        p = calloc(1, buffer_bytes); /* aligned to 16 (glibc), more than ALIGN */
    else if (posix_memalign(&p, ALIGN, buffer_bytes) != 0)
        p = NULL;
    *buffer = p;
    *size = p ? buffer_bytes : 0;
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

/* A launch's API record, unless it was made outside the GPU window. */
static void write_api(const CUpti_ActivityAPI *a)
{
    uint64_t from = __atomic_load_n(&window_from, __ATOMIC_ACQUIRE),
             to = __atomic_load_n(&window_to, __ATOMIC_ACQUIRE);
    if (a->start < from || a->start > to)
        return;
    int rt = a->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
    const char *name = NULL;
    cuptiGetCallbackName(rt ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, a->cbid,
                         &name);
    sba_out_printf("{\"t\":\"api\",\"api\":\"%s\",\"dom\":\"%s\",\"tid\":%u,\"corr\":%u,"
                   "\"start\":%llu,\"end\":%llu}",
                   name ? name : "?", rt ? "rt" : "drv", a->threadId, a->correlationId,
                   (unsigned long long)a->start, (unsigned long long)a->end);
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
    case CUPTI_ACTIVITY_KIND_DRIVER:
        write_api((const CUpti_ActivityAPI *)(const void *)rec);
        break;
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

/* The kinds enabled, each switched by sba_activity_pause and, when gated (every kind but the
 * streams: a stream's record comes once, when it is created, and the replay needs to know how
 * the streams made before the window order), by sba_activity_window; on: enabled now. */
static struct {
    CUpti_ActivityKind kind;
    int gated, on;
} enabled[16];
static int nenabled, launches_on, launch_rt, launch_drv, launches_now;
static pthread_mutex_t switch_lock = PTHREAD_MUTEX_INITIALIZER;
static int paused_now, window_shut; /* the recording switched off; outside the GPU window */
static int context_seen; /* CUDA has made a context (sba_activity_context_made; atomic) */

static int enable(CUpti_ActivityKind kind, const char *what)
{
    CUptiResult r = cuptiActivityEnable(kind);
    if (r == CUPTI_SUCCESS) {
        if (nenabled < (int)(sizeof enabled / sizeof enabled[0])) {
            enabled[nenabled].kind = kind;
            enabled[nenabled].gated = kind != CUPTI_ACTIVITY_KIND_STREAM;
            enabled[nenabled++].on = 1;
        }
        return 0;
    }
    const char *msg = "?";
    cuptiGetResultString(r, &msg);
    char esc[512];
    sba_out_printf("{\"t\":\"warn\",\"msg\":\"cannot record %s: %s\"}", what,
                   sba_json_escape(esc, sizeof esc, msg));
    return -1;
}

/* Each kind enabled or not as the switch and the window now want (switch_lock held). */
static void apply(void)
{
    int all = !paused_now, gated = all && !window_shut;
    for (int i = 0; i < nenabled; i++) {
        int want = enabled[i].gated ? gated : all;
        if (want != enabled[i].on)
            (want ? cuptiActivityEnable : cuptiActivityDisable)(enabled[i].kind);
        enabled[i].on = want;
    }
    /* the launches, by function: outside the window too, until CUDA has made a context. Off
     * before the first context and on again when the window opened, CUPTI 13 (H200) recorded
     * no launch at all (and the kind itself, switched at the window's bounds, lost calls'
     * callbacks); switched after it, as the calibration's turns do, it records every launch of
     * the turns on and none of the turns off. What comes outside the window's bounds is
     * dropped as it comes (write_api). */
    int launches =
        launches_on && all && (!window_shut || !__atomic_load_n(&context_seen, __ATOMIC_ACQUIRE));
    if (launches != launches_now)
        sba_launches_enable(launches, launch_rt, launch_drv);
    launches_now = launches;
}

/* The launch calls the replay needs, in the domains the plan keeps: API activity records of
 * those functions only (launches.c); every call of the domain in trace mode. */
static int enable_launches(const sba_activity_plan *p)
{
    launch_rt = (p->kinds & SBA_KIND_RT_LAUNCHES) != 0;
    launch_drv = (p->kinds & SBA_KIND_DRV_LAUNCHES) != 0;
    int rc = 0;
    if (p->trace) {
        if (launch_rt)
            rc |= enable(CUPTI_ACTIVITY_KIND_RUNTIME, "runtime API calls");
        if (launch_drv)
            rc |= enable(CUPTI_ACTIVITY_KIND_DRIVER, "driver API calls");
    } else if ((launch_rt || launch_drv) && sba_launches_enable(1, launch_rt, launch_drv) == 0) {
        sba_out_printf("{\"t\":\"warn\",\"msg\":\"cannot record the launches: no launch API "
                       "could be enabled\"}");
        rc = -1;
    } else if (launch_rt || launch_drv) {
        launches_on = launches_now = 1;
    }
    return rc;
}

void sba_activity_warn(const sba_activity_plan *p)
{
    char esc[512];
    for (int i = 0; i < p->nwarn; i++)
        sba_out_printf("{\"t\":\"warn\",\"msg\":\"%s\"}",
                       sba_json_escape(esc, sizeof esc, p->warn[i]));
}

static int started; /* the buffers' callbacks registered: there are records to flush */

int sba_activity_start(const sba_activity_plan *p)
{
    trace_mode = p->trace;
    buffer_bytes = p->buffer_bytes;
    if (p->zeroed) {
        uint8_t one = 1;
        size_t size = sizeof one;
        buffers_zeroed = cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER,
                                                   &size, &one) == CUPTI_SUCCESS;
        if (!buffers_zeroed)
            sba_out_printf("{\"t\":\"warn\",\"msg\":\"SYNCBENCH_ACTIVITY_ZEROED: CUPTI refused the "
                           "attribute; it zeroes the buffers itself\"}");
    }
    cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    __atomic_store_n(&started, r == CUPTI_SUCCESS, __ATOMIC_RELEASE);
    if (r != CUPTI_SUCCESS) {
        const char *msg = "?";
        cuptiGetResultString(r, &msg);
        sba_out_printf("{\"t\":\"warn\",\"msg\":\"cannot record GPU activity: %s\"}", msg);
        return -1;
    }
    int rc = 0;
    if (p->kinds & SBA_KIND_KERNELS)
        rc |= enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernels");
    if (p->kinds & SBA_KIND_MEMCPY)
        rc |= enable(CUPTI_ACTIVITY_KIND_MEMCPY, "copies");
    if (p->kinds & SBA_KIND_MEMSET)
        rc |= enable(CUPTI_ACTIVITY_KIND_MEMSET, "memsets");
    rc |= enable_launches(p);
    if (p->kinds & SBA_KIND_EVENTS)
        rc |= enable(CUPTI_ACTIVITY_KIND_CUDA_EVENT, "event records");
    if (p->kinds & SBA_KIND_SYNCS)
        rc |= enable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "synchronizations");
    if (p->kinds & SBA_KIND_STREAMS)
        rc |= enable(CUPTI_ACTIVITY_KIND_STREAM, "streams");
    cuptiActivityFlushPeriod(p->flush_ms);
    /* each kind was enabled to learn whether it can be (a "warn" record now, not when the window
     * opens): what the window or the switch does not want yet goes off again */
    pthread_mutex_lock(&switch_lock);
    apply();
    pthread_mutex_unlock(&switch_lock);
    return rc;
}

void sba_activity_pause(int paused)
{
    pthread_mutex_lock(&switch_lock);
    paused_now = paused;
    apply();
    pthread_mutex_unlock(&switch_lock);
}

void sba_activity_context_made(void)
{
    /* inside CUDA's context creation: no lock that a thread calling CUPTI holds (apply), and
     * nothing switched here; the next apply() switches */
    __atomic_store_n(&context_seen, 1, __ATOMIC_RELEASE);
}

void sba_activity_window_bounds(uint64_t from, uint64_t to)
{
    __atomic_store_n(&window_to, to, __ATOMIC_RELEASE);
    __atomic_store_n(&window_from, from, __ATOMIC_RELEASE);
}

void sba_activity_window(int open)
{
    pthread_mutex_lock(&switch_lock);
    window_shut = !open;
    apply();
    pthread_mutex_unlock(&switch_lock);
}

void sba_activity_flush(int forced)
{
    if (!__atomic_load_n(&started, __ATOMIC_ACQUIRE))
        return; /* an in-process attach, or a mode without GPU activity: nothing to flush */
    cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

uint64_t sba_activity_dropped(void)
{
    return __atomic_load_n(&dropped, __ATOMIC_RELAXED);
}
