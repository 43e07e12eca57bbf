/* Whether a measurement ran throttled: the SM clock and NVML's clocks-event reasons sampled
 * before and after it (base/nvml.c reads them), turned into the row's `throttled` flag. */
#ifndef SB_CLOCK_WATCH_H
#define SB_CLOCK_WATCH_H

#include "base/nvml.h"

/* Throttled if the SM clock fell by more than 5 % across the measurement, or a reason that
 * slows a busy GPU (power cap, thermal, HW slowdown) was active before or after it. */
int sb_clock_throttled(const sb_clock_sample *before, const sb_clock_sample *after);

#endif
