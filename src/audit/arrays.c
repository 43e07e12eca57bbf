/* The analyzer's growable arrays, a qsort that takes empty arrays, and report text. */
#include "audit/internal.h"

#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"

int sb_grow(void *arr, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 16;
    void *p = realloc(*(void **)arr, c * size);
    if (!p)
        return -1;
    *(void **)arr = p;
    *cap = c;
    return 0;
}

void sb_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(base, n, size, cmp);
}

void sb_audit_fmt(char *buf, size_t n, const char *fmt, ...)
{
    if (!n)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    if (w < 0)
        buf[0] = '\0';
    else if ((size_t)w >= n)
        sb_utf8_cut(buf);
    sb_utf8_sanitize(buf);
}

const char *sb_audit_esc(char *buf, size_t n, const char *s)
{
    sb_escape(s ? s : "", buf, n);
    return buf;
}
