#include "audit/inject/ranges.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <generated_nvtx_meta.h>

#include "audit/inject/out.h"
#include "audit/records.h"

#define MAX_DEPTH 64
#define NAME_LEN (SB_AUDIT_RANGE_NAME_MAX + 1) /* longer names are cut; --range refuses them */

typedef struct {
    long id;
    const void *domain; /* NULL: the default domain */
    uint64_t start;
    char name[NAME_LEN];
} open_range;

static _Thread_local open_range stack[MAX_DEPTH];
static _Thread_local int depth, overflow; /* overflow: pushes beyond MAX_DEPTH, not kept */
static long next_id;

static const char *attr_name(const nvtxEventAttributes_t *a)
{
    if (!a)
        return "(none)";
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
        return a->message.ascii ? a->message.ascii : "";
    case NVTX_MESSAGE_TYPE_UNICODE:
        return "(unicode)";
    case NVTX_MESSAGE_TYPE_REGISTERED:
        return "(registered)";
    default:
        return "";
    }
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
}

static void write_range(const open_range *r, int at_depth, long long end)
{
    char name[NAME_LEN * 6 + 1];
    sba_out_printf("{\"t\":\"range\",\"tid\":%ld,\"id\":%ld,\"name\":\"%s\",\"start\":%llu,"
                   "\"end\":%lld,\"depth\":%d}",
                   (long)syscall(SYS_gettid), r->id, sba_json_escape(name, sizeof name, r->name),
                   (unsigned long long)r->start, end, at_depth);
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
        for (int j = i; j + 1 < depth; j++)
            stack[j] = stack[j + 1];
        depth--;
        return;
    }
}

void sba_ranges_callback(CUpti_CallbackId cbid, const CUpti_NvtxData *d)
{
    const void *p = d->functionParams;
    switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePushA:
        push(NULL, ((const nvtxRangePushA_params *)p)->message);
        break;
    case CUPTI_CBID_NVTX_nvtxRangePushW:
        push(NULL, "(unicode)");
        break;
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
        push(NULL, attr_name(((const nvtxRangePushEx_params *)p)->eventAttrib));
        break;
    case CUPTI_CBID_NVTX_nvtxRangePop:
        pop(NULL);
        break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
        const nvtxDomainRangePushEx_params *q = p;
        push(q->domain, attr_name(q->core.eventAttrib));
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
}
