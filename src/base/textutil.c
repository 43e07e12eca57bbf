#include "base/textutil.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int sb_parse_ll(const char *s, long long *out)
{
    if (!s || !*s || isspace((unsigned char)*s))
        return SB_PARSE_INVALID;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end != '\0')
        return SB_PARSE_INVALID;
    if (errno == ERANGE)
        return SB_PARSE_RANGE;
    *out = v;
    return SB_PARSE_OK;
}

int sb_parse_double(const char *s, double *out)
{
    /* decimal only: strtod would also take hex floats ("0x10") */
    if (!s || !*s || isspace((unsigned char)*s) || strpbrk(s, "xX"))
        return SB_PARSE_INVALID;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end != '\0' || isnan(v))
        return SB_PARSE_INVALID;
    if (errno == ERANGE || isinf(v))
        return SB_PARSE_RANGE;
    *out = v;
    return SB_PARSE_OK;
}

static const struct {
    const char *suffix;
    long long mult;
} size_units[] = {
    {"", 1},          {"B", 1},           {"K", 1LL << 10},     {"KiB", 1LL << 10},
    {"M", 1LL << 20}, {"MiB", 1LL << 20}, {"G", 1LL << 30},     {"GiB", 1LL << 30},
    {"KB", 1000LL},   {"MB", 1000000LL},  {"GB", 1000000000LL},
};

int sb_parse_size(const char *s, long long *out)
{
    if (!s || !*s || !isdigit((unsigned char)*s))
        return SB_PARSE_INVALID;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno == ERANGE)
        return SB_PARSE_RANGE;
    for (size_t i = 0; i < sizeof size_units / sizeof size_units[0]; i++) {
        if (strcasecmp(end, size_units[i].suffix) == 0) {
            long long m = size_units[i].mult;
            if (v > 0 && v > __LONG_LONG_MAX__ / m)
                return SB_PARSE_RANGE;
            *out = v * m;
            return SB_PARSE_OK;
        }
    }
    return SB_PARSE_INVALID;
}

void sb_format_size(long long v, char *buf, size_t n)
{
    static const struct {
        long long mult;
        const char *unit;
    } forms[] = {{1LL << 30, "GiB"}, {1000000000LL, "GB"}, {1LL << 20, "MiB"},
                 {1000000LL, "MB"},  {1LL << 10, "KiB"},   {1000LL, "KB"}};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        /* 1000 stays 1000: a decimal unit is only worth it from the mega range up */
        if (v > 0 && v % forms[i].mult == 0 && forms[i].mult != 1000LL) {
            snprintf(buf, n, "%lld%s", v / forms[i].mult, forms[i].unit);
            return;
        }
    }
    snprintf(buf, n, "%lld", v);
}

int sb_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 64;
    int d[64][64];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            int best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < best)
                best = d[i - 1][j - 1] + cost;
            /* a swap of two neighbours is one typo ("itres" for "iters") */
            if (i > 1 && j > 1 &&
                tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == tolower((unsigned char)b[j - 1]) &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[la][lb];
}

const char *sb_suggest(const char *name, const void *candidates, size_t stride)
{
    const char *best = NULL;
    int best_d = 1 << 30;
    for (const char *p = candidates;; p += stride) {
        const char *cand = *(const char *const *)p;
        if (!cand)
            break;
        int d = sb_edit_distance(name, cand);
        if (d < best_d) {
            best_d = d;
            best = cand;
        }
    }
    /* a typo: at most a third of the name wrong, and never more than 3 edits; one letter is
     * too little to guess from */
    size_t len = strlen(name);
    if (len < 2)
        return NULL;
    int limit = (int)(len / 3) < 3 ? (int)(len / 3) : 3;
    if (limit < 1)
        limit = 1;
    return best_d <= limit ? best : NULL;
}

int sb_split_commas(char *s, char **items, int max)
{
    int n = 0;
    for (char *p = s;;) {
        if (n == max)
            return -1;
        items[n++] = p;
        char *c = strchr(p, ',');
        if (!c)
            break;
        *c = '\0';
        p = c + 1;
    }
    return n;
}

int sb_list_contains(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = list; p;) {
        const char *comma = strchr(p, ',');
        size_t item = comma ? (size_t)(comma - p) : strlen(p);
        if (item == len && !strncmp(p, name, len))
            return 1;
        p = comma ? comma + 1 : NULL;
    }
    return 0;
}

void sb_format_figure(double v, char *buf, size_t n)
{
    double a = fabs(v);
    snprintf(buf, n, a >= 1000 ? "%.0f" : a >= 100 ? "%.1f" : a >= 10 ? "%.2f" : "%.3f", v);
}

FILE *sb_memtext_open(sb_memtext *m)
{
    m->text = NULL;
    m->len = 0;
    return m->f = open_memstream(&m->text, &m->len);
}

char *sb_memtext_close(sb_memtext *m)
{
    if (fclose(m->f) != 0) {
        free(m->text);
        return NULL;
    }
    return m->text;
}
