/* Each distinct call site attributed once: the calls of a training loop's `.item()` line are
 * millions of one site, and naming each (its Python line, the line inside a library, the rule,
 * the operation and the fix, interned) cost 2 us and 64 bytes a call. A site is what
 * attribution reads of a call: its process, native stack, Python stack, class, API and copy
 * direction; the calls of one site share what it found, and point to one `made`. */
#include "analyze/analyze.h" /* sb_audit_callsite_of & co.; the types: call_info.h */

#include <stdlib.h>
#include <string.h>

#define CHUNK 256 /* sites a block holds: blocks never move, so calls may point into them */

typedef struct chunk {
    struct chunk *next;
    size_t n;
    sb_audit_callsite sites[CHUNK];
} chunk;

typedef struct sb_audit_callsite_set {
    chunk *chunks;
    sb_audit_callsite **index; /* open addressing, a power of two, at most half full */
    size_t cap, n;
} callsites;

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}

static uint64_t hash_of(const sb_audit_callsite *key)
{
    uint64_t h = mix(0, (uintptr_t)key->proc);
    h = mix(h, (uint64_t)key->stack);
    h = mix(h, (uint64_t)key->py);
    h = mix(h, (uint64_t)key->cls);
    h = mix(h, (uintptr_t)key->api); /* interned: equal text, equal pointer */
    return mix(h, (uintptr_t)key->copy);
}

static int same(const sb_audit_callsite *s, const sb_audit_callsite *key)
{
    return s->proc == key->proc && s->stack == key->stack && s->py == key->py &&
           s->cls == key->cls && s->api == key->api && s->copy == key->copy;
}

static int grow(callsites *t)
{
    size_t cap = t->cap ? 2 * t->cap : 1024;
    sb_audit_callsite **index = calloc(cap, sizeof *index);
    if (!index)
        return -1;
    for (size_t i = 0; i < t->cap; i++) {
        sb_audit_callsite *s = t->index[i];
        if (!s)
            continue;
        size_t k = hash_of(s) & (cap - 1);
        while (index[k])
            k = (k + 1) & (cap - 1);
        index[k] = s;
    }
    free(t->index);
    t->index = index;
    t->cap = cap;
    return 0;
}

static sb_audit_callsite *add(callsites *t, const sb_audit_callsite *key)
{
    if (!t->chunks || t->chunks->n == CHUNK) {
        chunk *k = calloc(1, sizeof *k);
        if (!k)
            return NULL;
        k->next = t->chunks;
        t->chunks = k;
    }
    sb_audit_callsite *s = &t->chunks->sites[t->chunks->n++];
    *s = *key;
    return s;
}

sb_audit_callsite *sb_audit_callsite_of(sb_audit_callsite_set **set, const sb_audit_proc *p,
                                        const sb_audit_call *c, const sb_audit_call_info *ci,
                                        int *added)
{
    callsites *t = *set;
    if (!t && !(t = *set = calloc(1, sizeof *t)))
        return NULL;
    if (2 * (t->n + 1) > t->cap && grow(t) < 0)
        return NULL;
    /* the Python stack it is named by: the waiter's (waiter_site.c) when it has one */
    const sb_audit_callsite key = {.proc = p,
                                   .stack = c->stack,
                                   .py = sb_audit_call_py(p, c, ci),
                                   .cls = ci->cls,
                                   .api = c->api,
                                   .copy = c->copy};
    size_t k = hash_of(&key) & (t->cap - 1);
    for (; t->index[k]; k = (k + 1) & (t->cap - 1))
        if (same(t->index[k], &key)) {
            *added = 0;
            return t->index[k];
        }
    sb_audit_callsite *s = add(t, &key);
    if (!s)
        return NULL;
    t->index[k] = s;
    t->n++;
    *added = 1;
    return s;
}

void sb_audit_callsite_keep(sb_audit_callsite *cs, const sb_audit_call_info *ci)
{
    cs->native = ci->native;
    cs->site = ci->site;
    cs->source = ci->source;
    cs->pyframe = ci->pyframe;
    cs->rule = ci->rule;
}

void sb_audit_callsite_give(const sb_audit_callsite *cs, sb_audit_call_info *ci)
{
    ci->native = cs->native;
    ci->site = cs->site;
    ci->source = cs->source;
    ci->pyframe = cs->pyframe;
    ci->rule = cs->rule;
    ci->made = &cs->made;
}

void sb_audit_callsites_free(sb_audit_callsite_set **set)
{
    callsites *t = *set;
    if (!t)
        return;
    while (t->chunks) {
        chunk *next = t->chunks->next;
        free(t->chunks);
        t->chunks = next;
    }
    free(t->index);
    free(t);
    *set = NULL;
}
