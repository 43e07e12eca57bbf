#include "engine/results.h"

#include <stdlib.h>
#include <string.h>

int sb_results_add(sb_results *res, const sb_row *row)
{
    if (res->n == res->cap) {
        int cap = res->cap ? res->cap * 2 : 64;
        sb_row *p = realloc(res->rows, sizeof *p * (size_t)cap);
        if (!p)
            return -1;
        res->rows = p;
        res->cap = cap;
    }
    res->rows[res->n++] = *row;
    return 0;
}

void sb_results_free(sb_results *res)
{
    free(res->rows);
    memset(res, 0, sizeof *res);
}

const sb_row *sb_results_find(const sb_results *res, const char *scenario, const char *variant,
                              const char *params, const char *metric)
{
    for (int i = 0; i < res->n; i++) {
        const sb_row *r = &res->rows[i];
        if (!strcmp(r->scenario, scenario) && !strcmp(r->variant, variant) &&
            !strcmp(r->params, params) && !strcmp(r->metric, metric))
            return r;
    }
    return NULL;
}

const char *sb_better_name(sb_better b)
{
    return b == SB_HIGHER ? "higher" : "lower";
}
