#include "scenarios/registry.h"

#include <stdio.h>
#include <string.h>

#include "base/textutil.h"

extern const sb_scenario sb_small_gemm, sb_big_gemm, sb_readback, sb_copy, sb_double_buffer;
extern const sb_scenario sb_coalesce, sb_log_every, sb_graph, sb_dynamic_shape, sb_device_branch;
extern const sb_scenario sb_busy_stream, sb_alloc, sb_small_h2d, sb_sched;
extern const sb_scenario sb_collective, sb_cross_device;

/* clang-format off */
const sb_scenario *const sb_scenarios[] = {
    &sb_small_gemm, &sb_big_gemm, &sb_readback, &sb_copy, &sb_double_buffer,
    /* sync-free fixes, each against the syncing way */
    &sb_coalesce, &sb_log_every, &sb_graph, &sb_dynamic_shape, &sb_device_branch,
    &sb_busy_stream, &sb_alloc, &sb_small_h2d, &sb_sched,
    /* several GPUs at once: skipped, with a note, on a machine with one */
    &sb_collective, &sb_cross_device,
    NULL,
};
/* clang-format on */

const sb_scenario *sb_scenario_find(const char *name)
{
    for (int i = 0; sb_scenarios[i]; i++)
        if (strcmp(sb_scenarios[i]->name, name) == 0)
            return sb_scenarios[i];
    return NULL;
}

int sb_variant_index(const sb_scenario *sc, const char *name)
{
    for (int i = 0; sc->variants[i].name; i++)
        if (strcmp(sc->variants[i].name, name) == 0)
            return i;
    return -1;
}

int sb_variant_count(const sb_scenario *sc)
{
    int n = 0;
    while (sc->variants[n].name)
        n++;
    return n;
}

static const char *scenario_hint(const char *name)
{
    /* the registry holds pointers to scenarios, so gather their names first */
    static const char *cands[65];
    int c = 0;
    for (int j = 0; sb_scenarios[j] && c < 64; j++)
        cands[c++] = sb_scenarios[j]->name;
    cands[c] = NULL;
    return sb_suggest(name, cands, sizeof cands[0]);
}

int sb_unknown_scenario(const char *name, char *msg, size_t n)
{
    const char *hint = scenario_hint(name);
    if (hint)
        return snprintf(msg, n, "unknown scenario '%s'; did you mean '%s'?", name, hint);
    return snprintf(msg, n, "unknown scenario '%s' (see --list)", name);
}
