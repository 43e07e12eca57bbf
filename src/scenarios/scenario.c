#include "scenarios/scenario.h"

#include <stdio.h>
#include <stdlib.h>

long long sb_run_param(const sb_run *r, const char *name)
{
    return sb_param(&r->params, name);
}

int sb_run_mode(const sb_run *r)
{
    return r->sc->variants[r->variant].mode;
}

const char *sb_run_variant(const sb_run *r)
{
    return r->sc->variants[r->variant].name;
}
