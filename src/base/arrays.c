/* Growable arrays, keyed indexes, a qsort that takes empty arrays. */
#include "base/arrays.h"

#include <stddef.h>
#include <stdlib.h>

int sb_keyed_cmp(const void *a, const void *b)
{
    const sb_keyed *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* The first position whose key is >= key (upper: > key): the keys seen as a strided array. */
_Static_assert(offsetof(sb_keyed, key) == 0 && sizeof(sb_keyed) % sizeof(int64_t) == 0,
               "sb_keyed: its key first, its size a whole number of keys");
static size_t keyed_bound(const sb_keyed *k, size_t n, int64_t key, int upper)
{
    return sb_count_before((const int64_t *)(const void *)k, n, sizeof *k / sizeof(int64_t), key,
                           upper);
}

const sb_keyed *sb_keyed_first(const sb_keyed *k, size_t n, int64_t key)
{
    size_t i = keyed_bound(k, n, key, 0);
    return i < n && k[i].key == key ? &k[i] : NULL;
}

const sb_keyed *sb_keyed_last(const sb_keyed *k, size_t n, int64_t key)
{
    size_t i = keyed_bound(k, n, key, 1);
    return i > 0 && k[i - 1].key == key ? &k[i - 1] : NULL;
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

size_t sb_count_before(const int64_t *v, size_t n, size_t stride, int64_t x, int upper)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int64_t t = v[mid * stride];
        if (t < x || (upper && t == x))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
