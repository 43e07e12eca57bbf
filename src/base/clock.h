/* Host time: CLOCK_MONOTONIC in microseconds, and in integer nanoseconds (the audit's time
 * axis, shared between processes). Header-only: the audit's injection library uses it too. */
#ifndef SB_CLOCK_H
#define SB_CLOCK_H

#include <time.h>

static inline double sb_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static inline long long sb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

#endif
