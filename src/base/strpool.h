/* Interned strings (`syncbench compare`'s rows, the audit's records): each distinct string is
 * stored once, in blocks that never move, so rows hold plain pointers. Both files of a comparison
 * share one pool: two rows have equal keys exactly when their key pointers are equal, which makes
 * matching and the duplicate check pointer comparisons, and a million rows that repeat a few
 * scenario, variant, metric and unit names cost a million pointers, not a million copies. */
#ifndef SB_STRPOOL_H
#define SB_STRPOOL_H

#include <stddef.h>
#include <stdint.h>

typedef struct sb_strpool {
    struct sb_pool_block *blocks; /* newest first */
    char *next;                   /* free space in the newest block */
    size_t left;
    struct sb_pool_slot *slots; /* open addressing, linear probing; cap is a power of two */
    size_t cap, n;
} sb_strpool;

void sb_strpool_init(sb_strpool *p);
/* The pool's copy of s[0..len) (NUL-terminated; the same pointer for the same text), or NULL
 * when out of memory. */
const char *sb_strpool_intern(sb_strpool *p, const char *s, size_t len);
/* A copy of s[0..len) that is not interned (for text nobody looks up), or NULL. */
const char *sb_strpool_copy(sb_strpool *p, const char *s, size_t len);
void sb_strpool_free(sb_strpool *p);

/* 64-bit hash of len bytes (FNV-1a with a final avalanche). */
uint64_t sb_hash_bytes(const void *s, size_t len);
/* Mixes v into the running hash h. */
uint64_t sb_hash_mix(uint64_t h, uint64_t v);

#endif
