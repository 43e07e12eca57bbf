#include "sinks/verdicts.h"

#include <stdlib.h>
#include <string.h>

void sb_ci_verdicts_init(sb_ci_verdicts *l, const char *suite, double time_s)
{
    memset(l, 0, sizeof *l);
    l->suite = suite;
    l->time_s = time_s;
    sb_strpool_init(&l->text);
}

/* The list's copy of *s: 0, or -1 out of memory (NULL stays NULL). */
static int keep(sb_ci_verdicts *l, const char **s)
{
    if (*s && !(*s = sb_strpool_copy(&l->text, *s, strlen(*s))))
        return -1;
    return 0;
}

int sb_ci_verdicts_add(sb_ci_verdicts *l, const sb_ci_verdict *v)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        sb_ci_verdict *grown = realloc(l->v, cap * sizeof *grown);
        if (!grown)
            return -1;
        l->v = grown;
        l->cap = cap;
    }
    sb_ci_verdict c = *v;
    const char **texts[] = {&c.kind, &c.file,    &c.title,  &c.group,
                            &c.name, &c.message, &c.reason, &c.detail};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        if (keep(l, texts[i]) < 0)
            return -1;
    l->v[l->n++] = c;
    return 0;
}

void sb_ci_verdicts_free(sb_ci_verdicts *l)
{
    free(l->v);
    sb_strpool_free(&l->text);
    memset(l, 0, sizeof *l);
}
