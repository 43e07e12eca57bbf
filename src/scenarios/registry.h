/* Every scenario syncbench knows, in --list order. */
#ifndef SB_REGISTRY_H
#define SB_REGISTRY_H

#include "scenarios/scenario.h"

extern const sb_scenario *const sb_scenarios[]; /* NULL-terminated */

const sb_scenario *sb_scenario_find(const char *name);
int sb_variant_index(const sb_scenario *sc, const char *name);
int sb_variant_count(const sb_scenario *sc);
/* "unknown scenario 'x'; did you mean 'y'?" into msg. */
int sb_unknown_scenario(const char *name, char *msg, size_t n);

#endif
