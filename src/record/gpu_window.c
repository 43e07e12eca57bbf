#include "record/gpu_window.h"

#include <stdio.h>
#include <string.h>

/* An instance number: digits only, from 1 to SB_GPU_WINDOW_MAX. */
static int instance(const char *s, size_t len, long *out, const char *what, char *why, size_t n)
{
    long v = 0;
    if (!len) {
        snprintf(why, n, "no %s instance", what);
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') {
            snprintf(why, n, "the %s instance is not a whole number", what);
            return -1;
        }
        if (v > SB_GPU_WINDOW_MAX) /* stays far from overflow: at most 11 digits read on */
            continue;
        v = 10 * v + (s[i] - '0');
    }
    if (v < 1 || v > SB_GPU_WINDOW_MAX) {
        snprintf(why, n, "the %s instance must be from 1 to %ld (instances count from 1)", what,
                 SB_GPU_WINDOW_MAX);
        return -1;
    }
    *out = v;
    return 0;
}

int sb_gpu_window_bounds(const char *text, long *first, long *last, char *why, size_t n)
{
    const char *dash = strchr(text, '-');
    size_t flen = dash ? (size_t)(dash - text) : strlen(text);
    if (instance(text, flen, first, "first", why, n) < 0)
        return -1;
    *last = *first;
    if (dash && instance(dash + 1, strlen(dash + 1), last, "last", why, n) < 0)
        return -1;
    if (*first > *last) {
        snprintf(why, n, "the first instance (%ld) is after the last (%ld)", *first, *last);
        return -1;
    }
    return 0;
}

/* Is the text after a ':' bounds (not empty; digits and '-' only)? */
static int looks_like_bounds(const char *s)
{
    return *s && strspn(s, "0123456789-") == strlen(s);
}

int sb_gpu_window_parse(const char *spec, sb_gpu_window *w, char *why, size_t n)
{
    memset(w, 0, sizeof *w);
    w->first = w->last = 1;
    w->any_domain = 1;
    const char *colon = strrchr(spec, ':');
    size_t len = strlen(spec);
    if (colon && looks_like_bounds(colon + 1)) {
        if (sb_gpu_window_bounds(colon + 1, &w->first, &w->last, why, n) < 0)
            return -1;
        len = (size_t)(colon - spec);
    }
    const char *at = memrchr(spec, '@', len);
    size_t name_len = at ? (size_t)(at - spec) : len;
    if (at) {
        size_t dlen = len - name_len - 1;
        w->any_domain = dlen == 1 && at[1] == '*';
        if (dlen > SB_AUDIT_RANGE_NAME_MAX) {
            snprintf(why, n, "the domain is longer than %d bytes", SB_AUDIT_RANGE_NAME_MAX);
            return -1;
        }
        if (!w->any_domain)
            memcpy(w->domain, at + 1, dlen);
    }
    if (!name_len) {
        snprintf(why, n, "no range name");
        return -1;
    }
    if (name_len > SB_AUDIT_RANGE_NAME_MAX) {
        snprintf(why, n,
                 "the range name is longer than %d bytes (the recorded names are cut "
                 "there)",
                 SB_AUDIT_RANGE_NAME_MAX);
        return -1;
    }
    memcpy(w->name, spec, name_len);
    return 0;
}

int sb_gpu_window_format(const sb_gpu_window *w, char *buf, size_t n)
{
    const char *dom = !w->any_domain ? w->domain : strchr(w->name, '@') ? "*" : NULL;
    return snprintf(buf, n, "%s%s%s:%ld-%ld", w->name, dom ? "@" : "", dom ? dom : "", w->first,
                    w->last);
}

int sb_gpu_window_matches(const sb_gpu_window *w, const char *name, const char *domain)
{
    if (!name || strcmp(name, w->name))
        return 0;
    return w->any_domain || !strcmp(domain ? domain : "", w->domain);
}
