#include "base/strpool.h"

#include <stdlib.h>
#include <string.h>

enum { BLOCK_SIZE = 1 << 20 };

struct sb_pool_block {
    struct sb_pool_block *next;
    char data[];
};

struct sb_pool_slot {
    const char *s; /* NULL: empty */
    uint32_t hash; /* low half of the string's hash */
    uint32_t len;
};

static uint64_t fmix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

uint64_t sb_hash_bytes(const void *s, size_t len)
{
    const unsigned char *c = s;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= c[i];
        h *= 0x100000001b3ULL;
    }
    return fmix64(h ^ len);
}

uint64_t sb_hash_mix(uint64_t h, uint64_t v)
{
    return fmix64(h * 0x9e3779b97f4a7c15ULL + v);
}

void sb_strpool_init(sb_strpool *p)
{
    memset(p, 0, sizeof *p);
}

const char *sb_strpool_copy(sb_strpool *p, const char *s, size_t len)
{
    if (len + 1 > p->left) {
        size_t size = len + 1 > BLOCK_SIZE ? len + 1 : BLOCK_SIZE;
        struct sb_pool_block *b = malloc(sizeof *b + size);
        if (!b)
            return NULL;
        b->next = p->blocks;
        p->blocks = b;
        p->next = b->data;
        p->left = size;
    }
    char *out = p->next;
    memcpy(out, s, len);
    out[len] = '\0';
    p->next += len + 1;
    p->left -= len + 1;
    return out;
}

static int grow(sb_strpool *p)
{
    size_t cap = p->cap ? p->cap * 2 : 1024;
    struct sb_pool_slot *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < p->cap; i++) {
        const struct sb_pool_slot *o = &p->slots[i];
        if (!o->s)
            continue;
        size_t j = o->hash & (cap - 1);
        while (slots[j].s)
            j = (j + 1) & (cap - 1);
        slots[j] = *o;
    }
    free(p->slots);
    p->slots = slots;
    p->cap = cap;
    return 0;
}

const char *sb_strpool_intern(sb_strpool *p, const char *s, size_t len)
{
    if (len > UINT32_MAX)
        return NULL;
    if ((p->n + 1) * 2 > p->cap && grow(p) != 0)
        return NULL;
    uint32_t h = (uint32_t)sb_hash_bytes(s, len);
    size_t j = h & (p->cap - 1);
    for (; p->slots[j].s; j = (j + 1) & (p->cap - 1)) {
        const struct sb_pool_slot *o = &p->slots[j];
        if (o->hash == h && o->len == len && !memcmp(o->s, s, len))
            return o->s;
    }
    const char *copy = sb_strpool_copy(p, s, len);
    if (!copy)
        return NULL;
    p->slots[j] = (struct sb_pool_slot){copy, h, (uint32_t)len};
    p->n++;
    return copy;
}

void sb_strpool_free(sb_strpool *p)
{
    while (p->blocks) {
        struct sb_pool_block *b = p->blocks;
        p->blocks = b->next;
        free(b);
    }
    free(p->slots);
    memset(p, 0, sizeof *p);
}
