#include "scenarios/scenario.h"

#include <stdio.h>
#include <stdlib.h>

long long sb_run_param(const sb_run *r, const char *name)
{
    int i = sb_param_index(r->sc->params, name);
    if (i < 0) {
        fprintf(stderr, "syncbench: internal: %s has no parameter '%s'\n", r->sc->name, name);
        abort();
    }
    return r->values[i];
}

const char *sb_run_variant(const sb_run *r)
{
    return r->sc->variants[r->variant].name;
}
