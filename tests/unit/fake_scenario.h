/* The fake, CPU-only scenario of the engine tests (test_measure.c, test_kill.c): one parameter,
 * p, and no state, measured by the real engine. The test file declares its `variants` and
 * `metrics` and its functions `setup`, `measure` and `validate`; FAKE_SCENARIO makes the
 * scenario `fake` of them, with a delta and a teardown (NULL: none). */
#ifndef SB_TEST_FAKE_SCENARIO_H
#define SB_TEST_FAKE_SCENARIO_H

#include "scenarios/scenario.h"

static const sb_param_def params[] = {
    {"p", SB_PARAM_INT, "1", "", 1, 100, NULL},
    {NULL, 0, NULL, NULL, 0, 0, NULL},
};

/* The metric every fake's measure records: the first row of its metrics. */
/* clang-format off */
#define FAKE_WALL_METRIC {"wall", "us", SB_LOWER, "wall"}
/* clang-format on */

#define FAKE_SCENARIO(delta_def, teardown_fn)                                                      \
    static SB_SCENARIO(fake, "fake", char, "", .params = params, .metrics = metrics,               \
                       .delta = delta_def, .default_iters = 1, .validate = validate,               \
                       .teardown = teardown_fn)

#endif
