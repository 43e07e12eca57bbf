/* Class names and groups, and what an API name alone says about a call. */
#include "record/classes.h"

#include <ctype.h>
#include <string.h>

static const char *const class_names[SB_AUDIT_NCLASS] = {
    [SB_AUDIT_NONE] = "none",
    [SB_AUDIT_SYNC_DEVICE] = "sync-device",
    [SB_AUDIT_SYNC_STREAM] = "sync-stream",
    [SB_AUDIT_SYNC_EVENT] = "sync-event",
    [SB_AUDIT_COPY_SYNC] = "copy-sync",
    [SB_AUDIT_COPY_PAGEABLE] = "copy-pageable",
    [SB_AUDIT_MEMSET_SYNC] = "memset-sync",
    [SB_AUDIT_FREE] = "free",
    [SB_AUDIT_WAITED] = "waited",
    [SB_AUDIT_POLL] = "poll",
};

const char *sb_audit_class_name(sb_audit_class c)
{
    return c >= 0 && c < SB_AUDIT_NCLASS ? class_names[c] : "?";
}

sb_audit_group sb_audit_class_group(sb_audit_class c)
{
    switch (c) {
    case SB_AUDIT_SYNC_DEVICE:
    case SB_AUDIT_SYNC_STREAM:
    case SB_AUDIT_SYNC_EVENT:
        return SB_AUDIT_EXPLICIT;
    case SB_AUDIT_COPY_SYNC:
    case SB_AUDIT_COPY_PAGEABLE:
    case SB_AUDIT_MEMSET_SYNC:
    case SB_AUDIT_FREE:
    case SB_AUDIT_WAITED:
        return SB_AUDIT_IMPLICIT;
    case SB_AUDIT_POLL:
        return SB_AUDIT_POLLING;
    default:
        return SB_AUDIT_GROUP_NONE;
    }
}

const char *sb_audit_group_name(sb_audit_group g)
{
    switch (g) {
    case SB_AUDIT_EXPLICIT:
        return "explicit";
    case SB_AUDIT_IMPLICIT:
        return "implicit";
    case SB_AUDIT_POLLING:
        return "poll";
    default:
        return "none";
    }
}

int sb_audit_blocking(sb_audit_class c)
{
    sb_audit_group g = sb_audit_class_group(c);
    return g == SB_AUDIT_EXPLICIT || g == SB_AUDIT_IMPLICIT;
}

static int ends_with(const char *s, size_t len, const char *suffix)
{
    size_t k = strlen(suffix);
    return len >= k && memcmp(s + len - k, suffix, k) == 0;
}

void sb_audit_base_name(const char *api, char *buf, size_t n)
{
    size_t len = strlen(api);
    for (;;) {
        if (ends_with(api, len, "_ptds") || ends_with(api, len, "_ptsz")) {
            len -= 5;
            continue;
        }
        size_t d = len;
        while (d > 0 && isdigit((unsigned char)api[d - 1]))
            d--;
        if (d < len && d >= 2 && api[d - 1] == 'v' && api[d - 2] == '_') {
            len = d - 2;
            continue;
        }
        break;
    }
    if (len >= n)
        len = n - 1;
    memcpy(buf, api, len);
    buf[len] = '\0';
}

static int in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(s, *list) == 0)
            return 1;
    return 0;
}

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

sb_audit_family sb_audit_classify_name(const char *api, sb_audit_class *fixed, int *dtod_by_name)
{
    static const char *const sync_device[] = {"cudaDeviceSynchronize", "cudaThreadSynchronize",
                                              "cuCtxSynchronize", NULL};
    static const char *const sync_stream[] = {"cudaStreamSynchronize", "cuStreamSynchronize", NULL};
    static const char *const sync_event[] = {"cudaEventSynchronize", "cuEventSynchronize", NULL};
    static const char *const poll[] = {"cudaStreamQuery", "cudaEventQuery", "cuStreamQuery",
                                       "cuEventQuery", NULL};
    static const char *const memset_sync[] = {"cudaMemset", "cudaMemset2D", "cudaMemset3D", NULL};
    static const char *const frees[] = {"cudaFree",
                                        "cudaFreeHost",
                                        "cudaFreeArray",
                                        "cudaFreeMipmappedArray",
                                        "cuMemFree",
                                        "cuMemFreeHost",
                                        NULL};
    char b[128];
    sb_audit_base_name(api, b, sizeof b);
    *dtod_by_name = 0;
    *fixed = SB_AUDIT_NONE;
    if (in_list(b, sync_device))
        *fixed = SB_AUDIT_SYNC_DEVICE;
    else if (in_list(b, sync_stream))
        *fixed = SB_AUDIT_SYNC_STREAM;
    else if (in_list(b, sync_event))
        *fixed = SB_AUDIT_SYNC_EVENT;
    else if (in_list(b, poll))
        *fixed = SB_AUDIT_POLL;
    else if (in_list(b, frees))
        *fixed = SB_AUDIT_FREE;
    else if (in_list(b, memset_sync) || (starts(b, "cuMemsetD") && !strstr(b, "Async")))
        *fixed = SB_AUDIT_MEMSET_SYNC;
    if (*fixed != SB_AUDIT_NONE)
        return SB_FAM_FIXED;
    if (starts(b, "cudaMemcpy") || starts(b, "cuMemcpy")) {
        /* device to device by name: the driver's DtoD copies and every peer copy */
        *dtod_by_name = starts(b, "cuMemcpyDtoD") || strstr(b, "Peer") != NULL;
        return strstr(b, "Async") ? SB_FAM_COPY_ASYNC : SB_FAM_COPY;
    }
    return SB_FAM_OTHER;
}

sb_audit_class sb_audit_class_alone(const char *api, const char *copy, const char *host)
{
    sb_audit_class fixed;
    int dtod;
    switch (sb_audit_classify_name(api, &fixed, &dtod)) {
    case SB_FAM_FIXED:
        return fixed;
    case SB_FAM_COPY:
        return dtod || (copy && strcmp(copy, "DtoD") == 0) ? SB_AUDIT_NONE : SB_AUDIT_COPY_SYNC;
    case SB_FAM_COPY_ASYNC:
        return host && strcmp(host, "pageable") == 0 ? SB_AUDIT_COPY_PAGEABLE : SB_AUDIT_NONE;
    default:
        return SB_AUDIT_NONE;
    }
}
