/* Growable arrays, a qsort that takes empty arrays, keyed indexes into an array, and the
 * count of sorted times before a time: what the audit's rooms (model/, replay/, analyze/,
 * report/) share. Pure C. */
#ifndef SB_ARRAYS_H
#define SB_ARRAYS_H

#include <stddef.h>
#include <stdint.h>

/* Grows *arr (element size `size`) so that it holds at least n + 1 elements. 0, or -1. */
int sb_grow(void *arr, size_t *cap, size_t n, size_t size);
/* qsort that accepts an empty (NULL) array. */
void sb_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
/* An index into an array by an integer key (a correlation id, a context), sorted with
 * sb_keyed_cmp (by key, then index); the first or the last entry of a key, or NULL. */
typedef struct sb_keyed {
    int64_t key;
    size_t idx;
} sb_keyed;
int sb_keyed_cmp(const void *a, const void *b);
const sb_keyed *sb_keyed_first(const sb_keyed *k, size_t n, int64_t key);
const sb_keyed *sb_keyed_last(const sb_keyed *k, size_t n, int64_t key);
/* In times v[0], v[stride], ... v[(n - 1) * stride], sorted: how many come before x (upper 0:
 * those < x; upper 1: those <= x). The calls a start/end range holds (analyze.c, ranks.c). */
size_t sb_count_before(const int64_t *v, size_t n, size_t stride, int64_t x, int upper);

#endif
