/* Host time: CLOCK_MONOTONIC in microseconds. */
#ifndef SB_CLOCK_H
#define SB_CLOCK_H

#include <time.h>

static inline double sb_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

#endif
