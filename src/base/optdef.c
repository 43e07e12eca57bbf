#include "base/optdef.h"

#include <stdio.h>
#include <string.h>

#include "base/textutil.h"

static void range_text(const sb_optdef *d, char *buf, size_t n)
{
    if (d->type == SB_OPT_INT)
        snprintf(buf, n, "an integer from %.0f to %.0f", d->lo, d->hi);
    else
        snprintf(buf, n, "a number from %.15g to %.15g", d->lo, d->hi);
}

static int number(const sb_optdef *d, const char *text, void *dst, char *err, size_t n)
{
    char range[96];
    range_text(d, range, sizeof range);
    long long iv = 0;
    double v = 0;
    int rc;
    if (d->type == SB_OPT_INT) {
        rc = sb_parse_ll(text, &iv);
        v = (double)iv;
    } else {
        rc = sb_parse_double(text, &v);
    }
    if (rc == SB_PARSE_OK && (v < d->lo || v > d->hi))
        rc = SB_PARSE_RANGE;
    if (rc != SB_PARSE_OK) {
        snprintf(err, n, "%s (expected %s)", rc == SB_PARSE_RANGE ? "out of range" : "not a number",
                 range);
        return -1;
    }
    if (d->type == SB_OPT_INT)
        memcpy(dst, &iv, sizeof iv);
    else
        memcpy(dst, &v, sizeof v);
    return 0;
}

static int name_list(const char *text, char *err, size_t n)
{
    size_t len = strlen(text);
    if (!len || text[0] == ',' || text[len - 1] == ',' || strstr(text, ",,")) {
        snprintf(err, n, "empty name in the list");
        return -1;
    }
    return 0;
}

int sb_optdef_set(const sb_optdef *d, const char *text, void *base, char *err, size_t n)
{
    void *dst = (char *)base + d->offset;
    switch (d->type) {
    case SB_OPT_FLAG: {
        int one = 1;
        memcpy(dst, &one, sizeof one);
        return 0;
    }
    case SB_OPT_INT:
    case SB_OPT_NUMBER:
        return number(d, text, dst, err, n);
    case SB_OPT_LIST:
        if (name_list(text, err, n))
            return -1;
        /* fall through */
    case SB_OPT_TEXT:
        memcpy(dst, &text, sizeof text);
        return 0;
    case SB_OPT_CUSTOM:
        return d->store(base, text, err, n);
    }
    return -1;
}

void sb_optdefs_defaults(const sb_optdef *defs, void *base)
{
    char err[128];
    for (int i = 0; defs[i].name; i++)
        if (defs[i].def)
            sb_optdef_set(&defs[i], defs[i].def, base, err, sizeof err);
}

void sb_optdef_copy(const sb_optdef *d, void *dst, const void *src)
{
    size_t size = d->type == SB_OPT_FLAG     ? sizeof(int)
                  : d->type == SB_OPT_INT    ? sizeof(long long)
                  : d->type == SB_OPT_NUMBER ? sizeof(double)
                                             : sizeof(const char *);
    if (d->type != SB_OPT_CUSTOM)
        memcpy((char *)dst + d->offset, (const char *)src + d->offset, size);
}

const sb_optdef *sb_optdef_by_key(const sb_optdef *defs, const char *key)
{
    for (int i = 0; defs[i].name; i++)
        if (defs[i].key && !strcmp(defs[i].key, key))
            return &defs[i];
    return NULL;
}

const sb_optdef *sb_optdef_by_name(const sb_optdef *defs, const char *name)
{
    for (int i = 0; defs[i].name; i++)
        if (!strcmp(defs[i].name, name))
            return &defs[i];
    return NULL;
}

const char *sb_optdefs_text(const sb_optdef *defs, const void *base, const char *name)
{
    const sb_optdef *d = sb_optdef_by_name(defs, name);
    if (!d || d->type != SB_OPT_TEXT)
        return NULL;
    return *(const char *const *)((const char *)base + d->offset);
}

int sb_optdefs_count(const sb_optdef *defs)
{
    int n = 0;
    while (defs[n].name)
        n++;
    return n;
}
