/* The command line over a suite: --scenario keeps the runs of those scenarios, --variant
 * replaces the variants (runs with none of them are left out), --set and the measurement
 * options replace the file's values. Every name given must match a run that is kept. */
#ifndef SB_OVERRIDES_H
#define SB_OVERRIDES_H

#include "suite/config.h"

/* Drops the runs left out and applies `cli` to the others. 0, or exit 2 recorded. */
int sb_suite_override(sb_suite *s, const sb_run_spec *cli);

#endif
