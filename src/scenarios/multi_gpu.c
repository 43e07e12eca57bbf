#include "scenarios/multi_gpu.h"

#include "base/error.h"
#include "gpu/peers.h"

const char *const sb_gpus_choices[] = {"all", "2", "3", "4", "5", "6", "7", "8", NULL};

int sb_gpus_asked(const sb_param_values *p)
{
    long long v = sb_param(p, "gpus");
    return v == 0 ? 0 : (int)v + 1; /* choice 1 is "2" */
}

int sb_gpus_for(int asked, int visible)
{
    if (asked)
        return asked;
    return visible < SB_MAX_GPUS ? visible : SB_MAX_GPUS;
}

int sb_run_gpus(const sb_run *r, int *gpus)
{
    int visible = 0, rc = sb_gpu_count(&visible);
    if (rc)
        return rc;
    *gpus = sb_gpus_for(sb_gpus_asked(&r->params), visible);
    if (*gpus < 2 || *gpus > visible)
        return sb_fail(SB_EXIT_NODEV, "%s needs %d GPUs, %d visible", sb_error_context(),
                       *gpus < 2 ? 2 : *gpus, visible);
    return 0;
}
