/* NVTX ranges from CUPTI's NVTX callbacks (the launcher points NVTX_INJECTION64_PATH at
 * libcupti): push/pop ranges per thread and per domain (each gets an instance id; popping it
 * writes a "range" record; the open ones are listed in every "call" record) and process-wide
 * nvtxRangeStart/End ranges (written when ended, on whichever thread). Names: ASCII or UTF-8
 * messages, wide ones converted, registered strings and domain names remembered by handle. */
#ifndef SBA_RANGES_H
#define SBA_RANGES_H

#include <stddef.h>

#include <cupti.h>

void sba_ranges_callback(CUpti_CallbackId cbid, const CUpti_NvtxData *d);
/* The calling thread's open ranges as JSON ("[[id,\"name\"],...]") into buf. */
size_t sba_ranges_json(char *buf, size_t n);
/* At exit: the calling thread's ranges still open (other threads' are lost with them). */
void sba_ranges_close_open(void);

#endif
