#include "scenarios/params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/textutil.h"

long long sb_param(const sb_param_values *p, const char *name)
{
    int i = sb_param_index(p->defs, name);
    if (i < 0) {
        fprintf(stderr, "syncbench: internal: no parameter '%s'\n", name);
        abort();
    }
    return p->v[i];
}

static int parse_bool(const char *s, long long *out)
{
    static const char *const yes[] = {"1", "true", "yes", "on", NULL};
    static const char *const no[] = {"0", "false", "no", "off", NULL};
    for (int i = 0; yes[i]; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = 1;
            return 0;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = 0;
            return 0;
        }
    }
    return -1;
}

int sb_param_parse(const sb_param_def *d, const char *text, long long *out, char *err,
                   size_t errlen)
{
    long long v = 0;
    int rc;
    switch (d->type) {
    case SB_PARAM_BOOL:
        if (parse_bool(text, out) != 0) {
            snprintf(err, errlen, "%s=%s: not a boolean (use 0 or 1)", d->name, text);
            return -1;
        }
        return 0;
    case SB_PARAM_ENUM:
        for (int i = 0; d->choices[i]; i++) {
            if (strcmp(text, d->choices[i]) == 0) {
                *out = i;
                return 0;
            }
        }
        {
            char list[256] = "";
            for (int i = 0; d->choices[i]; i++) {
                strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
                strncat(list, d->choices[i], sizeof list - strlen(list) - 1);
            }
            const char *hint = sb_suggest(text, d->choices, sizeof(char *));
            if (hint)
                snprintf(err, errlen, "%s=%s: unknown value; did you mean '%s'? (one of: %s)",
                         d->name, text, hint, list);
            else
                snprintf(err, errlen, "%s=%s: unknown value (one of: %s)", d->name, text, list);
        }
        return -1;
    case SB_PARAM_INT:
        rc = sb_parse_ll(text, &v);
        break;
    case SB_PARAM_SIZE:
        rc = sb_parse_size(text, &v);
        break;
    default:
        rc = SB_PARSE_INVALID;
    }
    if (rc == SB_PARSE_INVALID) {
        snprintf(err, errlen, "%s=%s: not %s", d->name, text,
                 d->type == SB_PARAM_SIZE ? "a size (e.g. 4096, 64KiB, 16MiB, 1GiB)"
                                          : "an integer");
        return -1;
    }
    char lo[32], hi[32];
    sb_param_format(d, d->min, lo, sizeof lo);
    sb_param_format(d, d->max, hi, sizeof hi);
    if (rc == SB_PARSE_RANGE || v < d->min || v > d->max) {
        snprintf(err, errlen, "%s=%s: out of range (%s to %s)", d->name, text, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

int sb_param_parse_list(const sb_param_def *d, const char *list, long long *out, int *n, char *err,
                        size_t errlen)
{
    char buf[1024];
    char *items[SB_MAX_SWEEP];
    if (strlen(list) >= sizeof buf) {
        snprintf(err, errlen, "%s: value list too long", d->name);
        return -1;
    }
    strcpy(buf, list);
    int k = sb_split_commas(buf, items, SB_MAX_SWEEP);
    if (k < 0) {
        snprintf(err, errlen, "%s: more than %d values", d->name, SB_MAX_SWEEP);
        return -1;
    }
    for (int i = 0; i < k; i++) {
        if (!*items[i]) {
            snprintf(err, errlen, "%s: empty value in '%s'", d->name, list);
            return -1;
        }
        if (sb_param_parse(d, items[i], &out[i], err, errlen) != 0)
            return -1;
        for (int j = 0; j < i; j++)
            if (out[j] == out[i]) {
                snprintf(err, errlen, "%s=%s: %s given twice in the list", d->name, list, items[i]);
                return -1;
            }
    }
    *n = k;
    return 0;
}

void sb_param_format(const sb_param_def *d, long long v, char *buf, size_t n)
{
    switch (d->type) {
    case SB_PARAM_ENUM:
        snprintf(buf, n, "%s", d->choices[v]);
        break;
    case SB_PARAM_SIZE:
        sb_format_size(v, buf, n);
        break;
    default:
        snprintf(buf, n, "%lld", v);
    }
}

void sb_params_format_all(const sb_param_def *defs, const long long *values, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; defs && defs[i].name; i++) {
        char v[64];
        sb_param_format(&defs[i], values[i], v, sizeof v);
        int w = snprintf(buf + used, n - used, "%s%s=%s", i ? ";" : "", defs[i].name, v);
        if (w < 0 || (size_t)w >= n - used)
            return;
        used += (size_t)w;
    }
}

int sb_param_index(const sb_param_def *defs, const char *name)
{
    for (int i = 0; defs && defs[i].name; i++)
        if (strcmp(defs[i].name, name) == 0)
            return i;
    return -1;
}

int sb_params_count(const sb_param_def *defs)
{
    int n = 0;
    while (defs && defs[n].name)
        n++;
    return n;
}

void sb_param_describe(const sb_param_def *d, char *buf, size_t n)
{
    char lo[32], hi[32];
    switch (d->type) {
    case SB_PARAM_BOOL:
        snprintf(buf, n, "0|1");
        break;
    case SB_PARAM_ENUM:
        buf[0] = '\0';
        for (int i = 0; d->choices[i]; i++) {
            strncat(buf, i ? "|" : "", n - strlen(buf) - 1);
            strncat(buf, d->choices[i], n - strlen(buf) - 1);
        }
        break;
    default:
        sb_param_format(d, d->min, lo, sizeof lo);
        sb_param_format(d, d->max, hi, sizeof hi);
        snprintf(buf, n, "%s %s..%s", d->type == SB_PARAM_SIZE ? "size" : "int", lo, hi);
    }
}
