/* What the multi-GPU scenarios (collective, cross-device) share: the `gpus` parameter, how many
 * GPUs an entry drives on this machine, and their sb_multi_gpu's `asked`. They drive the first
 * n visible GPUs (CUDA_VISIBLE_DEVICES picks which), whatever --device says. */
#ifndef SB_MULTI_GPU_H
#define SB_MULTI_GPU_H

#include "scenarios/scenario.h"

/* all|2|...|8: an enum, so that 0, 1 and 9 are bad input before any CUDA call */
extern const char *const sb_gpus_choices[];
/* clang-format off */
#define SB_GPUS_PARAM                                                                              \
    {"gpus", SB_PARAM_ENUM, "all", "GPUs driven: the first N visible (all: every one, up to 8)",   \
     0, 0, sb_gpus_choices}
/* clang-format on */

/* The entry's `gpus`: a number, or 0 for all (sb_multi_gpu.asked). */
int sb_gpus_asked(const sb_param_values *p);
/* GPUs an entry that asked for `asked` (0: all) drives where `visible` are visible. */
int sb_gpus_for(int asked, int visible);
/* In setup: the GPUs this entry drives, counted now. The plan was checked against the machine
 * before anything was measured; fewer than 2 here is SB_EXIT_NODEV all the same. */
int sb_run_gpus(const sb_run *r, int *gpus);

#endif
