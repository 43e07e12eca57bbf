/* A run held to its sync baseline: each gated call's key (file, function, text, operation, the
 * library's line) matched to the baseline's sites, counted per step (an instance of the range,
 * the first skip_first of each process left out) or per run; the sites the baseline lacks are
 * new (or changed: the same file, function and operation with other text), those it holds that
 * the run never made are gone. */
#include "analyze/baseline.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "base/arrays.h"

enum { K_FILE, K_FUNC, K_TEXT, K_OP, K_LIB, K_N };

/* A site of the comparison: an item and its key, interned (equal keys, equal pointers). */
typedef struct {
    const char *k[K_N];
    const char *thread;
    long skip;
    int replaced; /* a gone site another text of took over (changed) */
} slot;

typedef struct {
    sb_bl_diff *d;
    sb_strpool pool;
    slot *slots;
    size_t cap;
    struct pair {
        size_t item;
        long inst;
    } * pairs;
    size_t npairs, cap_pairs;
    int oom;
} state;

static const char *in(state *s, const char *t, size_t len)
{
    const char *p = sb_strpool_intern(&s->pool, t ? t : "", t ? len : 0);
    if (!p)
        s->oom = 1;
    return p ? p : "";
}

static const char *in0(state *s, const char *t)
{
    return in(s, t, t ? strlen(t) : 0);
}

const char *sb_bl_norm(const char *s, char *buf, size_t n)
{
    size_t len = 0, max = n - 1 < SB_BL_VALUE_MAX ? n - 1 : SB_BL_VALUE_MAX;
    s += strspn(s, " \t");
    for (; s[len] && len < max; len++) {
        unsigned char ch = (unsigned char)s[len];
        if (ch == ';' && len && (buf[len - 1] == ' ' || buf[len - 1] == '\t'))
            break;
        buf[len] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
    }
    if (s[len] && len == max) /* cut: not inside a character */
        while (len && ((unsigned char)s[len] & 0xc0) == 0x80)
            len--;
    while (len && (buf[len - 1] == ' ' || buf[len - 1] == '\t'))
        len--;
    buf[len] = '\0';
    return buf;
}

/* The value normalized, interned. */
static const char *inn(state *s, const char *t)
{
    char buf[SB_BL_VALUE_MAX + 8];
    return in0(s, sb_bl_norm(t ? t : "", buf, sizeof buf));
}

/* "dir/train.py:42 in step" -> file "dir/train.py"; a native site is its own file. */
static void key_of(state *s, const sb_audit_call_info *ci, const char *k[K_N])
{
    const char *site = ci->site ? ci->site : "?";
    const char *sp = ci->pyframe ? strstr(site, " in ") : NULL;
    for (const char *q = sp; q && (q = strstr(q + 1, " in ")) != NULL;)
        sp = q;
    const char *colon = NULL;
    for (const char *q = site; sp && q < sp; q++)
        if (*q == ':')
            colon = q;
    char file[PATH_MAX];
    snprintf(file, sizeof file, "%.*s", colon ? (int)(colon - site) : (int)strlen(site), site);
    k[K_FILE] = inn(s, file);
    k[K_FUNC] = inn(s, ci->pyframe ? ci->pyframe->func : "");
    k[K_TEXT] = inn(s, ci->pyframe && ci->source ? ci->source : "");
    k[K_OP] = inn(s, ci->made && ci->made->op ? ci->made->op : "unknown");
    /* the library's line: "pkg/mod.py:123 in func" -> "pkg/mod.py:func" */
    const char *via = ci->made && ci->made->via_site ? ci->made->via_site : "";
    const char *vin = strstr(via, " in "), *vcolon = NULL;
    for (const char *q = vin; q && (q = strstr(q + 1, " in ")) != NULL;)
        vin = q;
    for (const char *q = via; vin && q < vin; q++)
        if (*q == ':')
            vcolon = q;
    char lib[1024] = "";
    if (vin && vcolon)
        snprintf(lib, sizeof lib, "%.*s:%s", (int)(vcolon - via), via, vin + 4);
    k[K_LIB] = inn(s, lib);
}

static sb_bl_item *add_item(state *s)
{
    sb_bl_diff *d = s->d;
    if (sb_grow(&d->items, &s->cap, d->n, sizeof *d->items) < 0 ||
        (s->cap > 0 && !(s->slots = realloc(s->slots, s->cap * sizeof *s->slots)))) {
        s->oom = 1;
        return NULL;
    }
    memset(&d->items[d->n], 0, sizeof d->items[d->n]);
    memset(&s->slots[d->n], 0, sizeof s->slots[d->n]);
    return &d->items[d->n++];
}

static int load_sites(state *s)
{
    const sb_baseline *b = s->d->b;
    for (size_t i = 0; b && i < b->n; i++) {
        const sb_bl_site *e = &b->sites[i];
        sb_bl_item *it = add_item(s);
        if (!it)
            return -1;
        slot *sl = &s->slots[s->d->n - 1];
        const char *raw[K_N] = {e->file, e->function, e->text, e->operation, e->library_line};
        for (int k = 0; k < K_N; k++)
            sl->k[k] = inn(s, raw[k]);
        sl->thread = in0(s, e->thread);
        sl->skip = e->skip_first >= 0 ? e->skip_first : s->d->skip_first;
        it->kind = SB_BL_GONE;
        it->base = e;
        it->file = e->file, it->function = e->function, it->text = e->text;
        it->operation = e->operation, it->library_line = e->library_line;
        it->thread = e->thread, it->site = "", it->line = e->line;
    }
    return s->oom ? -1 : 0;
}

/* The item a call of key k on thread tid counts for: a site of its thread, else one of every
 * thread; else a new one, when create (-2 when not). */
static long item_for(state *s, const char *k[K_N], const char *tid, int create)
{
    long any = -1;
    for (size_t i = 0; i < s->d->n; i++) {
        const slot *sl = &s->slots[i];
        if (memcmp(sl->k, k, sizeof sl->k))
            continue;
        if (sl->thread == tid)
            return (long)i;
        if (!sl->thread[0] && any < 0)
            any = (long)i;
    }
    if (any >= 0)
        return any;
    if (!create)
        return -2;
    sb_bl_item *it = add_item(s);
    if (!it)
        return -1;
    slot *sl = &s->slots[s->d->n - 1];
    memcpy(sl->k, k, sizeof sl->k);
    sl->thread = in0(s, "");
    sl->skip = s->d->skip_first;
    it->kind = SB_BL_NEW;
    it->thread = sl->thread;
    return (long)(s->d->n - 1);
}

static void count_call(state *s, const sb_audit_call *c, const sb_audit_call_info *ci, long item,
                       long inst)
{
    sb_bl_item *it = &s->d->items[item];
    if (!it->first) {
        if (it->kind == SB_BL_GONE)
            it->kind = SB_BL_KNOWN;
        it->first = ci;
        it->site = ci->site ? ci->site : "?";
        it->line = ci->pyframe ? ci->pyframe->line : 0;
        const slot *sl = &s->slots[item];
        it->file = sl->k[K_FILE], it->function = sl->k[K_FUNC], it->text = sl->k[K_TEXT];
        it->operation = sl->k[K_OP], it->library_line = sl->k[K_LIB];
    }
    it->calls++;
    it->blocked_us += (double)(c->end - c->start) / 1e3;
    if (sb_grow(&s->pairs, &s->cap_pairs, s->npairs, sizeof *s->pairs) < 0) {
        s->oom = 1;
        return;
    }
    s->pairs[s->npairs++] = (struct pair){(size_t)item, inst};
}

static int cmp_start(const void *a, const void *b)
{
    const sb_audit_range *x = *(const sb_audit_range *const *)a,
                         *y = *(const sb_audit_range *const *)b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* ord[k]: the order of p->ranges[k] among the instances of the range in p (by start), -1 for
 * the others. The number of instances. */
static long order_instances(const sb_audit_proc *p, const char *range, long *ord, state *s)
{
    const sb_audit_range **r = malloc((p->nranges + 1) * sizeof *r);
    if (!r) {
        s->oom = 1;
        return 0;
    }
    long n = 0;
    for (size_t k = 0; k < p->nranges; k++) {
        ord[k] = -1;
        if (!strcmp(p->ranges[k].name, range))
            r[n++] = &p->ranges[k];
    }
    qsort(r, (size_t)n, sizeof *r, cmp_start);
    for (long i = 0; i < n; i++)
        ord[r[i] - p->ranges] = i;
    free(r);
    return n;
}

/* The instance of the range call c lies in (its order in p), or -1. */
static long instance_of(const sb_audit_proc *p, const sb_audit_call *c, const char *range,
                        const long *ord)
{
    for (int k = 0; k < c->nranges; k++) {
        if (strcmp(c->ranges[k].name, range) != 0)
            continue;
        const sb_audit_range *r = sb_audit_find_range(p, c->tid, c->ranges[k].id);
        if (r)
            return ord[r - p->ranges];
    }
    return -1;
}

/* The calls of one process; base: the number of instances of the processes before it. */
static void count_proc(state *s, const sb_audit_proc_result *res, const sb_audit_opts *o, long base)
{
    const sb_audit_proc *p = res->proc;
    sb_bl_diff *d = s->d;
    long *ord = d->range ? calloc(p->nranges + 1, sizeof *ord) : NULL;
    long n = ord ? order_instances(p, d->range, ord, s) : 0;
    if (d->range && !ord)
        s->oom = 1;
    d->entered += n;
    d->steps += n > d->skip_first ? n - d->skip_first : 0;
    for (size_t i = 0; !s->oom && i < p->ncalls; i++) {
        const sb_audit_call *c = &p->calls[i];
        const sb_audit_call_info *ci = &res->calls[i];
        if (!sb_audit_gated(o, ci))
            continue;
        long inst = d->range ? instance_of(p, c, d->range, ord) : 0;
        if (inst < 0)
            continue; /* outside every step: not counted */
        const char *k[K_N];
        char tid[32];
        key_of(s, ci, k);
        snprintf(tid, sizeof tid, "%lld", (long long)c->tid);
        /* a site the baseline lacks, made only in warm-up steps, is no site of the run: no
         * item (a new one would fail the gate, and be written empty, with no call counted) */
        int counted = !d->range || inst >= d->skip_first;
        long item = item_for(s, k, in0(s, tid), counted);
        if (item == -2)
            continue;
        if (item < 0)
            break;
        if (counted) {
            d->calls++;
            d->blocked_us += (double)(c->end - c->start) / 1e3;
        }
        if (!d->range || inst >= s->slots[item].skip)
            count_call(s, c, ci, item, base + inst);
    }
    free(ord);
}

static int cmp_pair(const void *a, const void *b)
{
    const struct pair *x = a, *y = b;
    if (x->item != y->item)
        return x->item < y->item ? -1 : 1;
    return x->inst < y->inst ? -1 : x->inst > y->inst;
}

/* Each item's most calls in one step (per run: all of them). */
static void maxima(state *s)
{
    sb_sort(s->pairs, s->npairs, sizeof *s->pairs, cmp_pair);
    for (size_t i = 0, j; i < s->npairs; i = j) {
        for (j = i; j < s->npairs && !cmp_pair(&s->pairs[i], &s->pairs[j]); j++)
            ;
        sb_bl_item *it = &s->d->items[s->pairs[i].item];
        if ((long)(j - i) > it->now)
            it->now = (long)(j - i);
    }
}

/* A new site of the same file, function and operation as a gone one: the gone one's text
 * changed. */
static void find_changed(state *s)
{
    sb_bl_diff *d = s->d;
    for (size_t i = 0; i < d->n; i++) {
        if (d->items[i].kind != SB_BL_NEW)
            continue;
        for (size_t g = 0; g < d->n; g++) {
            const slot *a = &s->slots[i], *b = &s->slots[g];
            if (d->items[g].kind != SB_BL_GONE || b->replaced || a->k[K_FILE] != b->k[K_FILE] ||
                a->k[K_FUNC] != b->k[K_FUNC] || a->k[K_OP] != b->k[K_OP])
                continue;
            d->items[i].kind = SB_BL_CHANGED;
            d->items[i].base = d->items[g].base;
            s->slots[g].replaced = 1;
            break;
        }
    }
    size_t m = 0;
    for (size_t i = 0; i < d->n; i++)
        if (!(d->items[i].kind == SB_BL_GONE && s->slots[i].replaced))
            d->items[m++] = d->items[i];
    d->n = m;
}

static void judge(sb_bl_diff *d)
{
    for (size_t i = 0; i < d->n; i++) {
        sb_bl_item *it = &d->items[i];
        if (it->kind == SB_BL_KNOWN) {
            it->over = it->now > it->base->budget;
            it->moved = it->base->line && it->line && it->line != it->base->line;
        }
        if (it->kind == SB_BL_NEW || it->kind == SB_BL_CHANGED || it->over)
            d->failed = 1;
    }
    if (d->range && !d->entered)
        d->failed = 1;
    double steps = d->steps > 0 ? (double)d->steps : 1;
    d->syncs_per_step = (double)d->calls / steps;
    d->blocked_us_per_step = d->blocked_us / steps;
}

static int diff_with(const sb_audit_analysis *an, const sb_audit_opts *o, const sb_baseline *b,
                     sb_bl_diff *d)
{
    memset(d, 0, sizeof *d);
    state s = {.d = d};
    sb_strpool_init(&s.pool);
    d->b = b;
    d->range = o->range ? o->range : b && b->per_step ? b->range : NULL;
    d->skip_first = o->baseline_skip_first >= 0 ? o->baseline_skip_first : b ? b->skip_first : 0;
    if (!d->range)
        d->skip_first = 0;
    load_sites(&s);
    long base = 0;
    for (size_t i = 0; !s.oom && i < an->nprocs; i++) {
        long before = d->entered;
        count_proc(&s, &an->procs[i], o, base);
        base += d->entered - before + 1;
    }
    if (!d->range)
        d->steps = 1;
    if (!s.oom) {
        maxima(&s);
        find_changed(&s);
        judge(d);
    }
    free(s.pairs);
    free(s.slots);
    d->pool_ = malloc(sizeof s.pool);
    if (!d->pool_ || s.oom) {
        sb_strpool_free(&s.pool);
        free(d->pool_);
        free(d->items);
        memset(d, 0, sizeof *d);
        return -1;
    }
    memcpy(d->pool_, &s.pool, sizeof s.pool);
    return 0;
}

int sb_baseline_diff(const sb_audit_analysis *an, const sb_audit_opts *o, sb_bl_diff *d)
{
    return diff_with(an, o, o->baseline, d);
}

int sb_baseline_diff_of(const sb_audit_analysis *an, const sb_audit_opts *o, const sb_baseline *b,
                        sb_bl_diff *d)
{
    return diff_with(an, o, b, d);
}

void sb_baseline_diff_free(sb_bl_diff *d)
{
    if (d->pool_)
        sb_strpool_free(d->pool_);
    free(d->pool_);
    free(d->items);
    memset(d, 0, sizeof *d);
}

const char *sb_bl_kind_name(sb_bl_kind k)
{
    static const char *const names[] = {"known", "new", "changed", "gone"};
    return names[k];
}
