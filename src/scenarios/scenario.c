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

unsigned long long sb_run_param_ns(const sb_run *r, const char *us_name)
{
    return (unsigned long long)sb_param(&r->params, us_name) * 1000ull;
}

int sb_check_whole_words(const sb_param_values *p, char *err, size_t errlen)
{
    if (sb_param(p, "bytes") % 4) {
        snprintf(err, errlen, "bytes=%lld is not a multiple of 4", sb_param(p, "bytes"));
        return -1;
    }
    return 0;
}
