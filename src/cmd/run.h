/* The run subcommand (the default): options -> plan -> sinks checked -> device -> fit check ->
 * sinks opened -> each plan entry measured, its rows handed to the sinks as they finish ->
 * commit. Exit codes as in the README. */
#ifndef SB_CMD_RUN_H
#define SB_CMD_RUN_H

#include "base/env.h"
#include "engine/measure.h"
#include "sinks/sink.h"
#include "suite/plan.h"

int sb_cmd_run(int argc, char **argv);

struct sb_options;
/* The plan of the command line, or of --config FILE with the command line's overrides: the
 * one validation path for both. 0, or exit 2 recorded. */
int sb_cli_plan(const struct sb_options *o, sb_plan *plan);
/* The same, also giving the suite's `samples = PATH` (NULL-able out, n bytes; "" if none). */
int sb_cli_plan_outputs(const struct sb_options *o, sb_plan *plan, char *samples, size_t n);

/* Measures every entry of `plan` into open `sinks`, then commits them (also after a failure
 * or Ctrl-C: what was measured is kept; a run that measured nothing leaves them as they were).
 * progress: a progress line on stderr. cfg's on_start, emit and ctx are set here. */
int sb_run_plan(const sb_plan *plan, sb_measure_cfg cfg, sb_sinks *sinks, const sb_env *env,
                int progress);

#endif
