/* The plan against this machine's GPUs, checked once they are counted and before anything is
 * measured; only entries of scenarios that drive several GPUs (sb_scenario.multi) are
 * concerned. An entry that asks for more GPUs by number than the machine has is bad input
 * (exit 2); one that asks for every visible GPU on a machine with fewer than its scenario needs
 * is taken out of the plan and named in a note, so that a suite naming it runs the rest (and a
 * run left with nothing to measure succeeds, having said why); what the remaining entries need
 * beyond GPUs (NCCL, GPUs that reach each other) is checked last (exit 3). */
#ifndef SB_GPUS_H
#define SB_GPUS_H

#include <stddef.h>

#include "suite/plan.h"

/* Whether any entry drives several GPUs (then the GPUs need counting). */
int sb_plan_multi_gpu(const sb_plan *plan);
/* Takes out of the plan the entries that cannot run on `visible` GPUs, and writes what was
 * taken out to `note` ("" if nothing). 0, or SB_EXIT_USAGE recorded. */
int sb_plan_fit_gpus(sb_plan *plan, int visible, char *note, size_t note_len);
/* The scenarios' own checks of what remains (sb_multi_gpu.check), each distinct entry once:
 * 0, or the recorded error's code. */
int sb_plan_check_gpus(const sb_plan *plan, int visible);

#endif
