/* What a recorded call was: the classes of host API calls that can block, their groups, and
 * what an API name alone says about a call. Part of the record format, shared by the injection
 * library (inject/, which counts blocking calls by class) and the analyzer. */
#ifndef SB_RECORD_CLASSES_H
#define SB_RECORD_CLASSES_H

#include <stddef.h>

/* What a call was. The gate counts the blocking groups (explicit and implicit). */
typedef enum {
    SB_AUDIT_NONE,          /* did not block (an async copy into pinned memory, a malloc) */
    SB_AUDIT_SYNC_DEVICE,   /* explicit: cudaDeviceSynchronize, cuCtxSynchronize */
    SB_AUDIT_SYNC_STREAM,   /* explicit: cudaStreamSynchronize, cuStreamSynchronize */
    SB_AUDIT_SYNC_EVENT,    /* explicit: cudaEventSynchronize, cuEventSynchronize */
    SB_AUDIT_COPY_SYNC,     /* implicit: synchronous cudaMemcpy*, cuMemcpy* (not DtoD) */
    SB_AUDIT_COPY_PAGEABLE, /* implicit: async copy to or from pageable host memory */
    SB_AUDIT_MEMSET_SYNC,   /* implicit: cudaMemset* (not Async), cuMemsetD* (not Async) */
    SB_AUDIT_FREE,          /* implicit: cudaFree, cudaFreeHost, cuMemFree, cuMemFreeHost */
    SB_AUDIT_WAITED,        /* implicit: another call whose host time shows it waited */
    SB_AUDIT_POLL,          /* counted apart: cudaStreamQuery, cudaEventQuery, cu*Query */
    SB_AUDIT_NCLASS
} sb_audit_class;

typedef enum {
    SB_AUDIT_GROUP_NONE,
    SB_AUDIT_EXPLICIT,
    SB_AUDIT_IMPLICIT,
    SB_AUDIT_POLLING
} sb_audit_group;

const char *sb_audit_class_name(sb_audit_class c); /* "sync-stream", "copy-pageable", ... */
sb_audit_group sb_audit_class_group(sb_audit_class c);
const char *sb_audit_group_name(sb_audit_group g); /* "explicit", "implicit", "poll", "none" */

/* `api` without its CUPTI suffixes (_v3020, _ptsz, _ptds, _v2) into buf. */
void sb_audit_base_name(const char *api, char *buf, size_t n);
/* What the name alone says. */
typedef enum {
    SB_FAM_OTHER,
    SB_FAM_FIXED,     /* the class is the name's: syncs, polls, sync memsets, frees */
    SB_FAM_COPY,      /* synchronous memcpy */
    SB_FAM_COPY_ASYNC /* async memcpy */
} sb_audit_family;
sb_audit_family sb_audit_classify_name(const char *api, sb_audit_class *fixed, int *dtod_by_name);
/* A call's class from what the call alone says: its API name, the direction its parameters give
 * (copy, records.h's "copy") and the driver's answer about its host memory ("host"); what the
 * analyzer gives when neither the copy nor the GPU's timeline was recorded, and what the
 * injection library's blocks count (inject/blocks.c). */
sb_audit_class sb_audit_class_alone(const char *api, const char *copy, const char *host);
int sb_audit_blocking(sb_audit_class c); /* explicit or implicit */

#endif
