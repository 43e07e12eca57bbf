/* Does every plan entry fit this machine? Checked once the device is open and before anything
 * is measured, so an oversized request costs no GPU time and says what it needs. */
#ifndef SB_FIT_H
#define SB_FIT_H

#include "suite/plan.h"

/* 0, or SB_EXIT_USAGE with "small-gemm m=...: needs 12.0 GiB of GPU memory, 7.5 GiB free".
 * device_free: free GPU memory in bytes (gpu/device.h measures it). */
int sb_plan_fits(const sb_plan *plan, const char *gpu_name, size_t device_free);
/* Bytes as "12.0 GiB", "512 MiB", "4.0 KiB". */
void sb_human_bytes(double b, char *buf, size_t n);

#endif
