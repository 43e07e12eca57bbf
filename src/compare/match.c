#include "compare/match.h"

#include <stdlib.h>
#include <string.h>

#include "base/strpool.h"

static uint64_t key_hash(const sb_cmp_row *r)
{
    uint64_t h = sb_hash_mix(0, (uintptr_t)r->scenario);
    h = sb_hash_mix(h, (uintptr_t)r->variant);
    h = sb_hash_mix(h, (uintptr_t)r->params);
    return sb_hash_mix(h, (uintptr_t)r->metric);
}

static int same_key(const sb_cmp_row *a, const sb_cmp_row *b)
{
    return a->scenario == b->scenario && a->variant == b->variant && a->params == b->params &&
           a->metric == b->metric;
}

/* A slot: the key hash's high half, which also places it (so growing never reads a row), and
 * row number + 1. */
#define TAG(h) ((h)&0xffffffff00000000ULL)
#define HOME(tag, cap) ((size_t)((tag) >> 32) & ((cap)-1))

static size_t slot_row(uint64_t s)
{
    return (size_t)(s & 0xffffffffULL) - 1;
}

static int grow(sb_row_index *ix)
{
    size_t cap = ix->cap ? ix->cap * 2 : 1024;
    uint64_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < ix->cap; i++) {
        if (!ix->slots[i])
            continue;
        size_t j = HOME(TAG(ix->slots[i]), cap);
        while (slots[j])
            j = (j + 1) & (cap - 1);
        slots[j] = ix->slots[i];
    }
    free(ix->slots);
    ix->slots = slots;
    ix->cap = cap;
    return 0;
}

int sb_row_index_add(sb_row_index *ix, const sb_cmp_row *rows, size_t i, size_t *dup)
{
    if (i >= UINT32_MAX - 1 || ix->cap >= ((size_t)1 << 32))
        return -1;
    if ((ix->n + 1) * 2 > ix->cap && grow(ix) != 0)
        return -1;
    uint64_t tag = TAG(key_hash(&rows[i]));
    size_t j = HOME(tag, ix->cap);
    for (; ix->slots[j]; j = (j + 1) & (ix->cap - 1))
        if (TAG(ix->slots[j]) == tag && same_key(&rows[slot_row(ix->slots[j])], &rows[i])) {
            *dup = slot_row(ix->slots[j]);
            return 1;
        }
    ix->slots[j] = tag | (uint64_t)(i + 1);
    ix->n++;
    return 0;
}

long sb_row_index_find(const sb_row_index *ix, const sb_cmp_row *rows, const sb_cmp_row *key)
{
    if (!ix->cap)
        return -1;
    uint64_t tag = TAG(key_hash(key));
    size_t j = HOME(tag, ix->cap);
    for (; ix->slots[j]; j = (j + 1) & (ix->cap - 1))
        if (TAG(ix->slots[j]) == tag && same_key(&rows[slot_row(ix->slots[j])], key))
            return (long)slot_row(ix->slots[j]);
    return -1;
}

void sb_row_index_free(sb_row_index *ix)
{
    free(ix->slots);
    memset(ix, 0, sizeof *ix);
}

static int selected(const char *metric, const char *const *metrics, int n)
{
    if (n == 0)
        return 1;
    for (int i = 0; i < n; i++)
        if (!strcmp(metrics[i], metric))
            return 1;
    return 0;
}

int sb_match(const sb_cmp_table *base, const sb_cmp_table *cur, const char *const *metrics,
             int n_metrics, sb_pair **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    sb_pair *pairs = malloc(sizeof *pairs * (base->n + cur->n + 1));
    unsigned char *matched = calloc(cur->n + 1, 1);
    if (!pairs || !matched) {
        free(pairs);
        free(matched);
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < base->n; i++) {
        const sb_cmp_row *b = &base->rows[i];
        if (!selected(b->metric, metrics, n_metrics))
            continue;
        long j = sb_row_index_find(&cur->index, cur->rows, b);
        if (j >= 0)
            matched[j] = 1;
        pairs[k++] = (sb_pair){b, j >= 0 ? &cur->rows[j] : NULL};
    }
    for (size_t j = 0; j < cur->n; j++) {
        const sb_cmp_row *c = &cur->rows[j];
        if (!matched[j] && selected(c->metric, metrics, n_metrics))
            pairs[k++] = (sb_pair){NULL, c};
    }
    free(matched);
    *out = pairs;
    *n = k;
    return 0;
}

long sb_match_unit_clash(const sb_pair *pairs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const sb_cmp_row *b = pairs[i].base, *c = pairs[i].cur;
        /* interned: equal text is one pointer; "" is a file without the unit column */
        if (b && c && b->unit != c->unit && b->unit[0] && c->unit[0])
            return (long)i;
    }
    return -1;
}
