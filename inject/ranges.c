#include "ranges.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <wchar.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <generated_nvtx_meta.h>

#include "out.h"
#include "window.h"
#include "record/records.h"
#include "base/utf8.h"

#define MAX_DEPTH 64
#define NAME_LEN (SB_AUDIT_RANGE_NAME_MAX + 1) /* longer names are cut; --range refuses them */

typedef struct {
    long id;
    const void *domain; /* NULL: the default domain */
    uint64_t start;
    int window_end; /* the last instance of the GPU window's range: its end closes the window */
    char name[NAME_LEN];
} open_range;

static _Thread_local open_range stack[MAX_DEPTH];
static _Thread_local int depth, overflow; /* overflow: pushes beyond MAX_DEPTH, not kept */
static long next_id;

/* ---- names: wide strings, domains and registered strings ---- */

/* nvtxDomainCreateW's parameters (absent from CUPTI's generated_nvtx_meta.h) */
typedef struct {
    const wchar_t *name;
} domain_create_w_params;

/* A wide (UTF-32 on Linux) string as UTF-8 into out (n bytes), cut on a character boundary;
 * what is not a character becomes '?'. */
static const char *from_wide(const wchar_t *w, char *out, size_t n)
{
    size_t k = 0;
    for (; w && *w && k + 5 < n; w++) {
        uint32_t c = (uint32_t)*w;
        if (c >= 0xD800 && c <= 0xDFFF)
            c = '?';
        if (c < 0x80) {
            out[k++] = (char)c;
        } else if (c < 0x800) {
            out[k++] = (char)(0xC0 | c >> 6), out[k++] = (char)(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            out[k++] = (char)(0xE0 | c >> 12), out[k++] = (char)(0x80 | ((c >> 6) & 0x3F));
            out[k++] = (char)(0x80 | (c & 0x3F));
        } else if (c <= 0x10FFFF) {
            out[k++] = (char)(0xF0 | c >> 18), out[k++] = (char)(0x80 | ((c >> 12) & 0x3F));
            out[k++] = (char)(0x80 | ((c >> 6) & 0x3F)), out[k++] = (char)(0x80 | (c & 0x3F));
        } else {
            out[k++] = '?';
        }
    }
    out[k] = 0;
    return out;
}

/* Handles NVTX gave out (domains, registered strings) -> their text. Few per program (NCCL
 * registers a few dozen); a full table names the rest "(registered)". */
#define MAX_HANDLES 4096
static struct {
    const void *handle;
    char *text;
} handles[MAX_HANDLES];
static int nhandles;
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;

static void remember(const void *handle, const char *text)
{
    if (!handle)
        return;
    pthread_mutex_lock(&handles_lock);
    if (nhandles == MAX_HANDLES) { /* said once: later names read "(registered)" */
        nhandles++;
        sba_out_printf("{\"t\":\"warn\",\"msg\":\"more than %d NVTX domains and registered "
                       "strings: later ones are named (registered)\"}",
                       MAX_HANDLES);
    }
    if (nhandles < MAX_HANDLES) {
        char *copy = strdup(text);
        if (copy) {
            sb_utf8_sanitize(copy);
            handles[nhandles].handle = handle;
            handles[nhandles++].text = copy;
        }
    }
    pthread_mutex_unlock(&handles_lock);
}

/* The text of a handle into out; "" when unknown. Newest first: a handle freed and given out
 * again names its new text. */
static const char *recall(const void *handle, char *out, size_t n)
{
    out[0] = 0;
    pthread_mutex_lock(&handles_lock);
    for (int i = (nhandles < MAX_HANDLES ? nhandles : MAX_HANDLES) - 1; i >= 0; i--)
        if (handles[i].handle == handle) {
            snprintf(out, n, "%s", handles[i].text);
            break;
        }
    pthread_mutex_unlock(&handles_lock);
    sb_utf8_cut(out);
    return out;
}

static const char *attr_name(const nvtxEventAttributes_t *a, char *buf, size_t n)
{
    if (!a)
        return "(none)";
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: /* any bytes: UTF-8 names stay, the rest is made valid */
        snprintf(buf, n, "%s", a->message.ascii ? a->message.ascii : "");
        sb_utf8_cut(buf);
        sb_utf8_sanitize(buf);
        return buf;
    case NVTX_MESSAGE_TYPE_UNICODE:
        return from_wide(a->message.unicode, buf, n);
    case NVTX_MESSAGE_TYPE_REGISTERED:
        return recall(a->message.registered, buf, n)[0] ? buf : "(registered)";
    default:
        return "";
    }
}

static const char *domain_name(const void *domain, char *buf, size_t n)
{
    return domain ? recall(domain, buf, n) : "";
}

/* A range begun: when it is an instance of the GPU window's range, counted (window.c: the
 * window opens at its first); 1 when its end closes the window. */
static int window_instance(const void *domain, const char *name)
{
    char dom[NAME_LEN];
    if (!sba_window_named(name) ||
        !sba_window_wants(name, domain ? domain_name(domain, dom, sizeof dom) : NULL))
        return 0;
    return sba_window_enter();
}

static void push(const void *domain, const char *name)
{
    if (depth >= MAX_DEPTH) {
        overflow++;
        return;
    }
    open_range *r = &stack[depth++];
    r->id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
    r->domain = domain;
    cuptiGetTimestamp(&r->start);
    snprintf(r->name, sizeof r->name, "%s", name);
    sb_utf8_cut(r->name);
    r->window_end = window_instance(domain, r->name);
}

/* kind "startend": an nvtxRangeStart/End range (process-wide, tid is the starting thread's) */
static void write_range_of(long tid, const open_range *r, int at_depth, long long end,
                           const char *kind)
{
    char name[NAME_LEN * 6 + 1], dom[NAME_LEN], dom_esc[NAME_LEN * 6 + 1];
    domain_name(r->domain, dom, sizeof dom);
    char extra[NAME_LEN * 6 + 64] = "";
    if (dom[0] || kind)
        snprintf(extra, sizeof extra, "%s%s%s%s%s", dom[0] ? ",\"dom\":\"" : "",
                 dom[0] ? sba_json_escape(dom_esc, sizeof dom_esc, dom) : "", dom[0] ? "\"" : "",
                 kind ? ",\"kind\":\"" : "", kind ? kind : "");
    sba_out_printf("{\"t\":\"range\",\"tid\":%ld,\"id\":%ld,\"name\":\"%s\",\"start\":%llu,"
                   "\"end\":%lld,\"depth\":%d%s%s}",
                   tid, r->id, sba_json_escape(name, sizeof name, r->name),
                   (unsigned long long)r->start, end, at_depth, extra, kind ? "\"" : "");
}

static void write_range(const open_range *r, int at_depth, long long end)
{
    write_range_of((long)syscall(SYS_gettid), r, at_depth, end, NULL);
}

/* ---- nvtxRangeStart/End: process-wide, may end on another thread ---- */
#define MAX_STARTED 1024
static struct {
    uint64_t nvtx_id; /* what nvtxRangeStart returned */
    long tid;
    open_range r;
} started[MAX_STARTED];
static int nstarted;
static pthread_mutex_t started_lock = PTHREAD_MUTEX_INITIALIZER;

static void range_start(const void *domain, const char *name, const void *ret)
{
    if (!ret)
        return;
    pthread_mutex_lock(&started_lock);
    static int warned;
    if (nstarted == MAX_STARTED && !warned++)
        sba_out_printf("{\"t\":\"warn\",\"msg\":\"more than %d NVTX start/end ranges open at "
                       "once: later ones are not recorded\"}",
                       MAX_STARTED);
    if (nstarted < MAX_STARTED) {
        open_range *r = &started[nstarted].r;
        started[nstarted].nvtx_id = *(const nvtxRangeId_t *)ret;
        started[nstarted].tid = (long)syscall(SYS_gettid);
        r->id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
        r->domain = domain;
        cuptiGetTimestamp(&r->start);
        snprintf(r->name, sizeof r->name, "%s", name);
        sb_utf8_cut(r->name);
        r->window_end = window_instance(domain, r->name);
        nstarted++;
    }
    pthread_mutex_unlock(&started_lock);
}

static void range_end(nvtxRangeId_t id)
{
    uint64_t end;
    cuptiGetTimestamp(&end);
    pthread_mutex_lock(&started_lock);
    int closes = 0;
    for (int i = 0; i < nstarted; i++)
        if (started[i].nvtx_id == id) {
            write_range_of(started[i].tid, &started[i].r, 0, (long long)end, "startend");
            closes = started[i].r.window_end;
            started[i] = started[--nstarted];
            break;
        }
    pthread_mutex_unlock(&started_lock);
    if (closes)
        sba_window_leave();
}

static void pop(const void *domain)
{
    if (overflow) {
        overflow--;
        return;
    }
    for (int i = depth - 1; i >= 0; i--) {
        if (stack[i].domain != domain)
            continue;
        uint64_t end;
        cuptiGetTimestamp(&end);
        write_range(&stack[i], i, (long long)end);
        int closes = stack[i].window_end;
        for (int j = i; j + 1 < depth; j++)
            stack[j] = stack[j + 1];
        depth--;
        if (closes)
            sba_window_leave();
        return;
    }
}

void sba_ranges_callback(CUpti_CallbackId cbid, const CUpti_NvtxData *d)
{
    const void *p = d->functionParams;
    char buf[NAME_LEN];
    switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxDomainCreateA:
        if (d->functionReturnValue)
            remember(*(const nvtxDomainHandle_t *)d->functionReturnValue,
                     ((const nvtxDomainCreateA_params *)p)->name);
        break;
    case CUPTI_CBID_NVTX_nvtxDomainCreateW:
        if (d->functionReturnValue)
            remember(*(const nvtxDomainHandle_t *)d->functionReturnValue,
                     from_wide(((const domain_create_w_params *)p)->name, buf, sizeof buf));
        break;
    case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA:
        if (d->functionReturnValue)
            remember(*(const nvtxStringHandle_t *)d->functionReturnValue,
                     ((const nvtxDomainRegisterStringA_params *)p)->string);
        break;
    case CUPTI_CBID_NVTX_nvtxDomainRegisterStringW:
        if (d->functionReturnValue)
            remember(
                *(const nvtxStringHandle_t *)d->functionReturnValue,
                /* the meta header says const char *: NVTX passes a wchar_t string */
                from_wide((const wchar_t *)((const nvtxDomainRegisterStringW_params *)p)->string,
                          buf, sizeof buf));
        break;
    case CUPTI_CBID_NVTX_nvtxRangePushA: {
        nvtxEventAttributes_t a = {.messageType = NVTX_MESSAGE_TYPE_ASCII};
        a.message.ascii = ((const nvtxRangePushA_params *)p)->message;
        push(NULL, attr_name(&a, buf, sizeof buf));
        break;
    }
    case CUPTI_CBID_NVTX_nvtxRangePushW:
        push(NULL, from_wide(((const nvtxRangePushW_params *)p)->message, buf, sizeof buf));
        break;
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
        push(NULL, attr_name(((const nvtxRangePushEx_params *)p)->eventAttrib, buf, sizeof buf));
        break;
    case CUPTI_CBID_NVTX_nvtxRangeStartA: {
        nvtxEventAttributes_t a = {.messageType = NVTX_MESSAGE_TYPE_ASCII};
        a.message.ascii = ((const nvtxRangeStartA_params *)p)->message;
        range_start(NULL, attr_name(&a, buf, sizeof buf), d->functionReturnValue);
        break;
    }
    case CUPTI_CBID_NVTX_nvtxRangeStartW:
        range_start(NULL, from_wide(((const nvtxRangeStartW_params *)p)->message, buf, sizeof buf),
                    d->functionReturnValue);
        break;
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
        range_start(NULL,
                    attr_name(((const nvtxRangeStartEx_params *)p)->eventAttrib, buf, sizeof buf),
                    d->functionReturnValue);
        break;
    case CUPTI_CBID_NVTX_nvtxRangeEnd:
        range_end(((const nvtxRangeEnd_params *)p)->id);
        break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
        const nvtxDomainRangeStartEx_params *q = p;
        range_start(q->domain, attr_name(q->core.eventAttrib, buf, sizeof buf),
                    d->functionReturnValue);
        break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
        range_end(((const nvtxDomainRangeEnd_params *)p)->core.id);
        break;
    case CUPTI_CBID_NVTX_nvtxRangePop:
        pop(NULL);
        break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
        const nvtxDomainRangePushEx_params *q = p;
        push(q->domain, attr_name(q->core.eventAttrib, buf, sizeof buf));
        break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
        pop(((const nvtxDomainRangePop_params *)p)->domain);
        break;
    default:
        break;
    }
}

size_t sba_ranges_json(char *buf, size_t n)
{
    static _Thread_local char name[NAME_LEN * 6 + 1];
    size_t len = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < depth; i++) {
        sba_json_escape(name, sizeof name, stack[i].name);
        if (len + strlen(name) + 40 >= n)
            break; /* the innermost ranges are lost before the line is cut */
        len +=
            (size_t)snprintf(buf + len, n - len, "%s[%ld,\"%s\"]", i ? "," : "", stack[i].id, name);
    }
    len += (size_t)snprintf(buf + len, n - len, "]");
    return len;
}

void sba_ranges_close_open(void)
{
    for (int i = 0; i < depth; i++)
        write_range(&stack[i], i, -1);
    depth = 0;
    pthread_mutex_lock(&started_lock); /* start/end ranges never ended */
    for (int i = 0; i < nstarted; i++)
        write_range_of(started[i].tid, &started[i].r, 0, -1, "startend");
    nstarted = 0;
    pthread_mutex_unlock(&started_lock);
}
