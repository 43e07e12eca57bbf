#include "compare/rerun.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

/* The suite loader reads lines of at most INI_MAX_LINE - 3 bytes (inih's default 200). */
#define MAX_LINE 190

/* Keys a parameter may not be named: the suite's own (suite/run_options.c). */
static const char *const reserved[] = {"scenario",    "variants", "iters",    "warmup",
                                       "warmup_time", "min_reps", "max_reps", "max_time",
                                       "target_cv",   "samples",  NULL};

/* A name as a suite key or value takes it: letters, digits and _ . + - (and, in values, : /),
 * nothing that INI or the suite loader reads as syntax (blanks, ',', ';', '=', '[', '#'). */
static int plain(const char *s, size_t len, int value)
{
    if (!len || len > 120)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '_' || c == '.' || c == '+' || c == '-' || (value && (c == ':' || c == '/'));
        if (!ok)
            return 0;
    }
    return 1;
}

/* s for a comment: escaped (base/error.h's sb_escape), at most max bytes ("..." past them). */
static void comment_text(const char *s, char *buf, size_t max)
{
    size_t used = sb_escape(s, buf, max + 1);
    size_t k = strlen(buf);
    if (s[used] && k >= 3)
        memcpy(buf + k - 3, "...", 3);
}

/* Checks that params ("k=v;k=v", or "") splits into plain, distinct, unreserved keys with plain
 * values no longer than a suite line takes. */
static int params_ok(const char *p)
{
    const char *keys[64];
    size_t key_len[64];
    int n = 0;
    while (*p) {
        const char *end = strchr(p, ';');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        if (!eq || n == 64)
            return 0;
        size_t klen = (size_t)(eq - p), vlen = len - klen - 1;
        if (!plain(p, klen, 0) || !plain(eq + 1, vlen, 1) || klen + vlen + 3 > MAX_LINE)
            return 0;
        for (int i = 0; reserved[i]; i++)
            if (strlen(reserved[i]) == klen && !strncmp(reserved[i], p, klen))
                return 0;
        for (int i = 0; i < n; i++)
            if (key_len[i] == klen && !strncmp(keys[i], p, klen))
                return 0;
        keys[n] = p;
        key_len[n++] = klen;
        if (!end)
            break;
        p = end + 1;
        if (!*p) /* a trailing ';' */
            return 0;
    }
    return 1;
}

static int refuse(const sb_rerun_opts *o, const sb_cmp_row *r, const char *what, const char *text)
{
    char c[96], t[96];
    comment_text(o->current ? o->current : "CURRENT", c, 80);
    comment_text(text, t, 80);
    return sb_fail(SB_EXIT_USAGE,
                   "compare: --rerun: %s:%ld: %s '%s' cannot be written to a suite (expected "
                   "plain names%s)",
                   c, r->line, what, t, strcmp(what, "params") ? "" : " in k=v;k=v");
}

/* One comment line per row: what is confirmed and why (perf-check prints them). */
static void row_comment(FILE *f, const sb_rerun_item *it)
{
    const sb_cmp_row *r = it->row;
    char line[1024], change[32] = "", shown[MAX_LINE];
    if (isfinite(it->change_pct))
        snprintf(change, sizeof change, " %+.2f %%", it->change_pct);
    snprintf(line, sizeof line, "%s %s %s %s: %s%s", r->scenario, r->variant, r->params, r->metric,
             sb_verdict_name(it->verdict), change);
    comment_text(line, shown, MAX_LINE - 20);
    fprintf(f, "; confirm: %s\n", shown);
}

/* The section of one measurement: items[first] and those chained after it by next[]. */
static void section(FILE *f, int k, const sb_rerun_item *items, const int *next, int first,
                    const char *variants, const sb_rerun_opts *o)
{
    const sb_cmp_row *r = items[first].row;
    fputc('\n', f);
    for (int i = first; i >= 0; i = next[i])
        row_comment(f, &items[i]);
    fprintf(f, "[confirm-%d]\nscenario = %s\nvariants = %s\n", k, r->scenario, variants);
    for (const char *p = r->params; *p;) {
        const char *end = strchr(p, ';');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        fprintf(f, "%.*s = %.*s\n", (int)(eq - p), p, (int)(len - (size_t)(eq - p) - 1), eq + 1);
        if (!end)
            break;
        p = end + 1;
    }
    if (r->iters > 0)
        fprintf(f, "iters = %d\n", r->iters);
    long long max_reps = o->min_reps * 10 < 1000000 ? o->min_reps * 10 : 1000000;
    if (max_reps < o->min_reps)
        max_reps = o->min_reps;
    fprintf(f, "min_reps = %lld\nmax_reps = %lld\nmax_time = %d\n", o->min_reps, max_reps,
            SB_RERUN_MAX_TIME);
}

/* Adds variant v to the comma list (no repeats); 0, or -1 when the line would not fit. */
static int add_variant(char *list, size_t n, const char *v)
{
    size_t vlen = strlen(v);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == vlen && !strncmp(p, v, len))
            return 0;
        if (!end)
            break;
        p = end + 1;
    }
    size_t used = strlen(list);
    if (used + vlen + 2 > n)
        return -1;
    snprintf(list + used, n - used, "%s%s", used ? "," : "", v);
    return 0;
}

int sb_rerun_write(FILE *f, const sb_rerun_item *items, size_t n, const sb_rerun_opts *o,
                   int *sections)
{
    *sections = 0;
    /* Group the items by measurement, (scenario, params): a sync variant is measured with its
     * reference, so two sections of one measurement would plan the reference twice, which a
     * suite refuses. head[g] is group g's first item, next[] chains the rest, variants[g]
     * lists the group's variants. */
    enum { VARIANTS = MAX_LINE - 12 }; /* "variants = " */
    int *head = malloc(sizeof *head * SB_RERUN_MAX_SECTIONS);
    int *tail = malloc(sizeof *tail * SB_RERUN_MAX_SECTIONS);
    char(*variants)[VARIANTS] = calloc(SB_RERUN_MAX_SECTIONS, sizeof *variants);
    int *next = malloc(sizeof *next * (n ? n : 1));
    if (!head || !tail || !variants || !next) {
        free(head);
        free(tail);
        free(variants);
        free(next);
        return sb_fail(SB_EXIT_FAIL, "out of memory");
    }
    int groups = 0, rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const sb_cmp_row *r = items[i].row;
        next[i] = -1;
        if (!plain(r->variant, strlen(r->variant), 0)) {
            rc = refuse(o, r, "variant", r->variant);
            break;
        }
        int g = 0;
        for (; g < groups; g++) {
            const sb_cmp_row *h = items[head[g]].row;
            if (h->scenario == r->scenario && h->params == r->params)
                break;
        }
        if (g == groups) {
            if (!plain(r->scenario, strlen(r->scenario), 0))
                rc = refuse(o, r, "scenario", r->scenario);
            else if (!params_ok(r->params))
                rc = refuse(o, r, "params", r->params);
            else if (groups == SB_RERUN_MAX_SECTIONS)
                rc = sb_fail(SB_EXIT_USAGE,
                             "compare: --rerun: more than %d measurements to confirm (the most "
                             "a suite holds)",
                             SB_RERUN_MAX_SECTIONS);
            if (rc)
                break;
            head[g] = (int)i;
            groups++;
        } else {
            next[tail[g]] = (int)i;
        }
        tail[g] = (int)i;
        if (add_variant(variants[g], VARIANTS, r->variant) != 0)
            rc = refuse(o, r, "variants", variants[g]);
    }
    if (!rc) {
        char b[MAX_LINE], c[MAX_LINE];
        comment_text(o->baseline ? o->baseline : "BASELINE", b, 100);
        comment_text(o->current ? o->current : "CURRENT", c, 100);
        fprintf(f,
                "; syncbench confirmation suite, written by `syncbench compare --rerun`\n"
                "; baseline: %s\n; current:  %s\n",
                b, c);
        if (groups == 0) {
            fputs("; nothing to confirm: no REGRESSION or inconclusive rows\n", f);
        } else {
            fprintf(f,
                    "; %zu row%s came out REGRESSION or inconclusive: %d measurement%s to take\n"
                    "; again with at least %lld repetitions. Run it, then decide on that run:\n"
                    ";   syncbench --config THIS.ini --csv C.csv --samples C.samples.csv\n"
                    ";   syncbench compare BASELINE.csv C.csv --subset\n",
                    n, n == 1 ? "" : "s", groups, groups == 1 ? "" : "s", o->min_reps);
            for (int g = 0; g < groups; g++)
                section(f, g + 1, items, next, head[g], variants[g], o);
        }
        *sections = groups;
    }
    free(head);
    free(tail);
    free(variants);
    free(next);
    return rc;
}
