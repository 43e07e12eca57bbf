/* The host API calls that can block, and the callback that times them. Only these calls get a
 * callback (cuptiEnableCallback per id, chosen by name at start): a kernel launch never enters
 * this library, which keeps the audit's cost off launch-bound loops. */
#ifndef SBA_WATCH_H
#define SBA_WATCH_H

#include <cupti.h>

/* 1 when the runtime or driver function `name` (a CUPTI callback name such as
 * "cudaMemcpyAsync_v3020") is one the audit records. */
int sba_watched(const char *name);
/* Enables (on 1) or disables the callbacks of every watched function in both API domains;
 * returns how many. */
int sba_watch_enable(CUpti_SubscriberHandle sub, int on);
/* Finds the driver's cuPointerGetAttribute (the host memory of a copy). */
void sba_watch_init(void);
/* The context's going will be told (sba_watch_context_gone): each thread may keep the id of
 * the context it last asked CUPTI for. */
void sba_watch_track_contexts(void);
/* A context is going: each thread's remembered context id is asked of CUPTI again. */
void sba_watch_context_gone(void);
void sba_watch_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                        const CUpti_CallbackData *d);

#endif
