/* What the hand-off test programs share (tests/waits/waits_handoffs.c, tests/inject/fake_cuda.c):
 * a signaller that waits until its waiter is asleep in its wait before it signals, so that the
 * wait really sleeps however the threads are scheduled. Header-only. */
#ifndef SB_TESTS_ASLEEP_H
#define SB_TESTS_ASLEEP_H

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static inline void sleep_ms(long long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000l};
    nanosleep(&ts, NULL);
}

/* Waits until the thread whose id *tid will hold (0 until it runs) sleeps: state S in /proc,
 * blocked in its wait. 5 s at most. */
static inline void until_asleep(const _Atomic int *tid)
{
    while (!atomic_load(tid))
        sleep_ms(1);
    char path[64], stat[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", atomic_load(tid));
    for (int i = 0; i < 5000; i++) {
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(stat, 1, sizeof stat - 1, f) : 0;
        if (f)
            fclose(f);
        stat[n] = 0;
        char *paren = strrchr(stat, ')'); /* the thread's name may hold spaces and parens */
        if (paren && paren[1] == ' ' && paren[2] == 'S')
            return;
        sleep_ms(1);
    }
}

#endif
