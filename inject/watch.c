#include "watch.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "blocks.h"
#include "record/classes.h"
#include "out.h"
#include "pyframes.h"
#include "ranges.h"
#include "stackreuse.h"
#include "stacks.h"

/* Exact base names (CUPTI's names less their _vNNNN / _ptds / _ptsz / _v2 suffixes). The
 * memcpy and memset families are matched by prefix below. */
static const char *const watched_names[] = {"cudaDeviceSynchronize",
                                            "cudaThreadSynchronize",
                                            "cudaStreamSynchronize",
                                            "cudaEventSynchronize",
                                            "cudaStreamQuery",
                                            "cudaEventQuery",
                                            "cudaFree",
                                            "cudaFreeHost",
                                            "cudaFreeArray",
                                            "cudaFreeMipmappedArray",
                                            "cudaMalloc",
                                            "cudaMallocHost",
                                            "cudaHostAlloc",
                                            "cudaMallocManaged",
                                            "cudaMallocPitch",
                                            "cudaHostRegister",
                                            "cudaHostUnregister",
                                            "cudaStreamDestroy",
                                            "cudaDeviceReset",
                                            "cudaGraphInstantiate",
                                            "cudaGraphInstantiateWithFlags",
                                            "cuCtxSynchronize",
                                            "cuStreamSynchronize",
                                            "cuEventSynchronize",
                                            "cuStreamQuery",
                                            "cuEventQuery",
                                            "cuMemFree",
                                            "cuMemFreeHost",
                                            "cuMemAlloc",
                                            "cuMemAllocHost",
                                            "cuMemHostAlloc",
                                            "cuMemAllocManaged",
                                            "cuMemAllocPitch",
                                            "cuMemHostRegister",
                                            "cuMemHostUnregister",
                                            "cuStreamDestroy",
                                            "cuGraphInstantiate",
                                            "cuGraphInstantiateWithParams",
                                            NULL};

int sba_watched(const char *name)
{
    char b[128];
    sb_audit_base_name(name, b, sizeof b); /* "cudaMemcpyAsync_ptsz_v7000" -> "cudaMemcpyAsync" */
    if (!strncmp(b, "cudaMemcpy", 10) || !strncmp(b, "cuMemcpy", 8))
        return 1;
    if ((!strncmp(b, "cudaMemset", 10) || !strncmp(b, "cuMemsetD", 9)) && !strstr(b, "Async"))
        return 1;
    for (int i = 0; watched_names[i]; i++)
        if (!strcmp(b, watched_names[i]))
            return 1;
    return 0;
}

static int enable_domain(CUpti_SubscriberHandle sub, CUpti_CallbackDomain dom, int size, int on)
{
    int n = 0;
    for (int id = 1; id < size; id++) {
        const char *name = NULL;
        if (cuptiGetCallbackName(dom, (uint32_t)id, &name) != CUPTI_SUCCESS || !name)
            continue;
        if (sba_watched(name) &&
            cuptiEnableCallback((uint32_t)on, sub, dom, (CUpti_CallbackId)id) == CUPTI_SUCCESS)
            n++;
    }
    return n;
}

int sba_watch_enable(CUpti_SubscriberHandle sub, int on)
{
    return enable_domain(sub, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, on) +
           enable_domain(sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, on);
}

/* The runtime's calls go through the driver: a watched driver call inside a watched runtime
 * call is the same call, recorded once (the outermost). */
static _Thread_local int nesting;
static _Thread_local uint64_t t_start;

/* The first fields of cudaMemcpy's and cudaMemcpyAsync's parameter blocks (as in CUPTI's
 * generated_cuda_runtime_api_meta.h, which cannot be included twice). */
typedef struct {
    void *dst;
    const void *src;
    size_t count;
    enum cudaMemcpyKind kind;
} memcpy_params;

/* The driver's DtoH and HtoD parameter blocks (generated_cuda_meta.h), the host pointer only. */
typedef struct {
    void *dstHost;
} driver_dtoh_params;
typedef struct {
    CUdeviceptr dstDevice;
    const void *srcHost;
} driver_htod_params;

/* cudaMemcpy and cudaMemcpyAsync (and their per-thread-stream twins): parameters that begin as
 * memcpy_params. */
static int runtime_memcpy(CUpti_CallbackId cbid)
{
    return cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000;
}

/* The host memory of a copy, from the driver (cuPointerGetAttribute, looked up in the libcuda
 * that loaded this library): pinned (page-locked, mapped) or pageable (anything the driver does
 * not know). This classifies async copies when no GPU activity is recorded. */
typedef CUresult (*pointer_attr_fn)(void *, CUpointer_attribute, CUdeviceptr);
static pointer_attr_fn pointer_attr;
void sba_watch_init(void)
{
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (cuda)
        pointer_attr = (pointer_attr_fn)dlsym(cuda, "cuPointerGetAttribute");
}

static const char *host_memory(const void *p)
{
    unsigned type = 0;
    if (!pointer_attr || !p)
        return NULL;
    if (pointer_attr(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)p) !=
        CUDA_SUCCESS)
        return "pageable"; /* unknown to the driver: plain host memory */
    return type == CU_MEMORYTYPE_HOST ? "pinned" : "device";
}

/* The host side of a copy whose parameters name it: runtime cudaMemcpy / cudaMemcpyAsync (by
 * their kind) and the driver's DtoH / HtoD copies. "pageable" when either end is. */
static const char *copy_host_memory(CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
                                    const void *params)
{
    if (dom == CUPTI_CB_DOMAIN_DRIVER_API) {
        switch (cbid) {
        case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2:
        case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2:
            return host_memory(((const driver_dtoh_params *)params)->dstHost);
        case CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2:
        case CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2:
            return host_memory(((const driver_htod_params *)params)->srcHost);
        default:
            return NULL;
        }
    }
    if (!runtime_memcpy(cbid))
        return NULL;
    const memcpy_params *m = params;
    switch (m->kind) {
    case cudaMemcpyDeviceToHost:
        return host_memory(m->dst);
    case cudaMemcpyHostToDevice:
        return host_memory(m->src);
    case cudaMemcpyDefault: {
        const char *a = host_memory(m->dst), *b = host_memory(m->src);
        if ((a && !strcmp(a, "pageable")) || (b && !strcmp(b, "pageable")))
            return "pageable";
        return a && !strcmp(a, "pinned") ? a : b && !strcmp(b, "pinned") ? b : NULL;
    }
    default:
        return NULL;
    }
}

/* Both ends of a runtime memcpy in device memory (its kind was cudaMemcpyDefault). */
static int both_device(const void *params)
{
    const memcpy_params *m = params;
    const char *a = host_memory(m->dst), *b = host_memory(m->src);
    return a && b && !strcmp(a, "device") && !strcmp(b, "device");
}

/* The device memory of an allocation (after a successful call) or of a free, 0 for other calls:
 * the replay pairs each cudaFree with the cudaMalloc it undoes. The parameter blocks begin with
 * the pointer (generated_cuda_runtime_api_meta.h, generated_cuda_meta.h). */
static uint64_t alloc_ptr(CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
                          const CUpti_CallbackData *d)
{
    const void *params = d->functionParams;
    int ok = d->functionReturnValue && *(const int *)d->functionReturnValue == 0;
    if (dom == CUPTI_CB_DOMAIN_RUNTIME_API) {
        if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020)
            return ok ? (uint64_t)(uintptr_t) * *(void *const *const *)params : 0;
        if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020)
            return (uint64_t)(uintptr_t) * (void *const *)params;
        return 0;
    }
    if (cbid == CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2)
        return ok ? (uint64_t) * *(CUdeviceptr *const *)params : 0;
    if (cbid == CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2)
        return (uint64_t) * (const CUdeviceptr *)params;
    return 0;
}

/* The direction a runtime memcpy's parameters give, for calls whose copy record may be absent. */
static const char *runtime_copy_kind(CUpti_CallbackId cbid, const void *params)
{
    if (!runtime_memcpy(cbid))
        return NULL;
    int kind = ((const memcpy_params *)params)->kind;
    switch (kind) {
    case cudaMemcpyHostToDevice:
        return "HtoD";
    case cudaMemcpyDeviceToHost:
        return "DtoH";
    case cudaMemcpyDeviceToDevice:
        return "DtoD";
    case cudaMemcpyHostToHost:
        return "HtoH";
    default:
        return "default";
    }
}

/* A context's id, asked of CUPTI once per thread until a context goes (its address may come
 * back as another context): about 2 µs a call otherwise, on a host-bound loop's every copy.
 * Kept only once the context's going is told (sba_watch_track_contexts). */
static unsigned _Atomic contexts_gone;
static int _Atomic contexts_tracked;
void sba_watch_track_contexts(void)
{
    contexts_tracked = 1;
}

void sba_watch_context_gone(void)
{
    contexts_gone++;
}

static uint32_t context_id(CUcontext c)
{
    static _Thread_local CUcontext last;
    static _Thread_local uint32_t last_id;
    static _Thread_local unsigned last_gone;
    unsigned gone = contexts_gone; /* before the query: a going during it is not missed */
    if (!c)
        return 0;
    if (c == last && gone == last_gone && contexts_tracked)
        return last_id;
    uint32_t id = 0;
    if (cuptiGetContextId(c, &id) != CUPTI_SUCCESS)
        return 0;
    if (contexts_tracked)
        last = c, last_id = id, last_gone = gone;
    return id;
}

/* The calling thread's native stack id in a call of (domain, cbid): reused for a Python stack
 * whose walks of that call agreed (stackreuse.c), else walked. */
static long native_stack(long py, CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    unsigned api = (unsigned)domain << 16 | ((unsigned)cbid & 0xffff);
    long id = sba_stackreuse_lookup(py, api);
    if (id != -2)
        return id;
    void *pcs[SBA_MAX_FRAMES];
    id = sba_stack_id(pcs, sba_stack_capture(pcs));
    sba_stackreuse_seen(py, api, id);
    return id;
}

void sba_watch_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                        const CUpti_CallbackData *d)
{
    if (d->callbackSite == CUPTI_API_ENTER) {
        if (nesting++)
            return;
        /* nothing else before the call: it starts as it would unwatched, and a sync waits for
         * the GPU as it would (the stacks are taken on the way out, still inside the call) */
        cuptiGetTimestamp(&t_start);
        return;
    }
    /* an exit without its enter: callbacks were enabled inside this very call (cudaFree(0)
     * initializing CUDA, which loads this library) */
    if (nesting == 0 || --nesting)
        return;
    uint64_t end;
    cuptiGetTimestamp(&end);
    /* attached in-process (api.c) with no record file: only a call inside a block is wanted */
    int to_file = sba_out_recording(), to_blocks = sba_blocks_watching();
    if (!to_file && !to_blocks)
        return;
    /* What the call is, from its parameters: the direction of a copy and its host memory, and
     * from them the class the blocks count it in. */
    const char *kind =
        domain == CUPTI_CB_DOMAIN_RUNTIME_API ? runtime_copy_kind(cbid, d->functionParams) : NULL;
    /* cudaMemcpyDefault between two device pointers is a device-to-device copy */
    if (kind && !strcmp(kind, "default") && both_device(d->functionParams))
        kind = "DtoD";
    const char *host = copy_host_memory(domain, cbid, d->functionParams);
    sb_audit_class cls =
        to_blocks ? sb_audit_class_alone(d->functionName, kind, host) : SB_AUDIT_NONE;
    /* With no record file the line is for the blocks, which keep it (and the stacks it names)
     * for a blocking call only, and only while one of them has room: any other call is
     * counted, and nothing more is worked out. */
    if (!to_file && (!sb_audit_blocking(cls) || !sba_blocks_keeping())) {
        sba_blocks_add(cls, NULL, 0, -1, -1);
        return;
    }
    uint32_t ctx = context_id(d->context);
    static _Thread_local char ranges[48 << 10]; /* 64 ranges of 512 bytes, escaped */
    char copy[64] = "";
    sba_ranges_json(ranges, sizeof ranges);
    /* The Python stack, still the caller's (this thread is inside the call), taken after the
     * end time; not for an async copy to or from pinned memory, which cannot block (.item()'s
     * copy: half its cost) unless GPU activity may show it waited. */
    int async_pinned = host && strcmp(host, "pageable") && strstr(d->functionName, "Async");
    /* A site for every call that may block: not for an async copy into pinned memory
     * (.item()'s copy), which does not */
    int sited = !async_pinned;
    long py = sited ? sba_py_stack_here() : -1;
    long stack = sited ? native_stack(py, domain, cbid) : -1;
    char pyfield[32] = "";
    if (py >= 0)
        snprintf(pyfield, sizeof pyfield, ",\"py\":%ld", py);
    if (kind || host)
        snprintf(copy, sizeof copy, "%s%s%s%s%s", kind ? ",\"copy\":\"" : "", kind ? kind : "",
                 kind ? "\"" : "", host ? ",\"host\":\"" : "", host ? host : "");
    if (host)
        strcat(copy, "\"");
    uint64_t ptr = alloc_ptr(domain, cbid, d);
    if (ptr) /* after the copy fields, which take at most 42 of its 64 bytes */
        snprintf(copy + strlen(copy), sizeof copy - strlen(copy), ",\"ptr\":%llu",
                 (unsigned long long)ptr);
    static _Thread_local long tid;
    if (!tid)
        tid = (long)syscall(SYS_gettid);
    /* the time this library spent around the call (its stacks, its lookups): the replay takes
     * it out of the host's timeline */
    uint64_t t_done;
    cuptiGetTimestamp(&t_done);
    unsigned long long oh = t_done - end;
    static _Thread_local char line[64 << 10];
    int n = snprintf(line, sizeof line,
                     "{\"t\":\"call\",\"api\":\"%s\",\"dom\":\"%s\",\"tid\":%ld,\"ctx\":%u,"
                     "\"corr\":%u,\"start\":%llu,\"end\":%llu,\"oh\":%llu,\"ranges\":%s,"
                     "\"stack\":%ld%s%s}",
                     d->functionName, domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "rt" : "drv", tid,
                     ctx, d->correlationId, (unsigned long long)t_start, (unsigned long long)end,
                     oh, ranges, stack, pyfield, copy);
    if (n <= 0)
        return;
    size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    if (to_file)
        sba_out_line(line, len);
    if (to_blocks)
        sba_blocks_add(cls, line, len, stack, py);
}
