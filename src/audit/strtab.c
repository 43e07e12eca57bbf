#include "audit/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"

static uint64_t hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    h ^= h >> 33;
    return h;
}

static int rehash(sb_strtab *t)
{
    size_t cap = t->cap ? t->cap * 2 : 1024;
    char **slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->slots[i])
            continue;
        size_t j = hash(t->slots[i]) & (cap - 1);
        while (slots[j])
            j = (j + 1) & (cap - 1);
        slots[j] = t->slots[i];
    }
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return 0;
}

const char *sb_strtab_intern(sb_strtab *t, const char *s)
{
    if ((t->n + 1) * 2 > t->cap && rehash(t) < 0)
        return NULL;
    size_t j = hash(s) & (t->cap - 1);
    while (t->slots[j]) {
        if (strcmp(t->slots[j], s) == 0)
            return t->slots[j];
        j = (j + 1) & (t->cap - 1);
    }
    char *c = strdup(s);
    if (!c)
        return NULL;
    t->slots[j] = c;
    t->n++;
    return c;
}

void sb_strtab_free(sb_strtab *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->slots[i]);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

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
