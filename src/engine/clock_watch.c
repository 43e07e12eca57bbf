#include "engine/clock_watch.h"

int sb_clock_throttled(const sb_clock_sample *before, const sb_clock_sample *after)
{
    if (!before->valid || !after->valid)
        return 0;
    if ((double)after->sm_mhz < 0.95 * (double)before->sm_mhz)
        return 1;
    return ((before->reasons | after->reasons) & SB_NVML_THROTTLE_MASK) != 0;
}
