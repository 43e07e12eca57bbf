/* Suites as INI files (inih): one section per run. Keys: `scenario` (default: the section
 * name), `variants`, `iters`, `warmup`, `warmup_time`, `min_reps`, `max_reps`, `max_time`,
 * `target_cv`, and the scenario's parameters (a comma list sweeps one). Errors name file:line. */
#ifndef SB_CONFIG_H
#define SB_CONFIG_H

#include "cli/cli.h"
#include "suite/plan.h"

/* Appends the suite in `path` to the plan, with the command line's options overriding the
 * file's: --scenario keeps only the runs of those scenarios, --variant replaces the variants
 * (runs without any of them are left out), --set and the measurement options replace the
 * file's values. 0, or the recorded error's code (exit 2). */
int sb_config_plan(const char *path, const sb_options *o, sb_plan *plan);

#endif
