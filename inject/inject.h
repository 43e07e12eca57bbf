/* What inject.c shares with the in-process API (api.c): one CUPTI subscription for both. */
#ifndef SBA_INJECT_H
#define SBA_INJECT_H

#include <stddef.h>

/* Subscribes to CUPTI and enables the callbacks of the watched calls, once per process (the
 * injection or the in-process API, whichever comes first). 0, or -1 with the reason in why. */
int sba_subscribe(char *why, size_t n);
/* Nonzero in a child forked without exec from a CUDA process: nothing is recorded there. */
int sba_forked(void);
/* Stops (0) or restarts (1) every callback and activity record the library enabled. */
void sba_recording(int on);

#endif
