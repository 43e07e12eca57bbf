#include "compare/rerun.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/optdef.h"
#include "scenarios/registry.h"
#include "suite/run_spec.h"

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

/* A row the suite reader would refuse: one line naming the CSV's line and why. */
static int refuse_known(const sb_rerun_opts *o, const sb_cmp_row *r, const char *why)
{
    char c[96];
    comment_text(o->current ? o->current : "CURRENT", c, 80);
    return sb_fail(SB_EXIT_USAGE, "compare: --rerun: %s:%ld: %s (a suite of it would be refused)",
                   c, r->line, why);
}

/* The measurement of r as the suite reader takes it: a scenario of the registry, params it
 * declares with values it parses, iters in the suite's range, a combination its check takes.
 * 0, or the error's code. */
static int measurement_known(const sb_rerun_opts *o, const sb_cmp_row *r)
{
    char why[512], err[256];
    const sb_scenario *sc = sb_scenario_find(r->scenario);
    if (!sc) {
        sb_unknown_scenario(r->scenario, why, sizeof why);
        return refuse_known(o, r, why);
    }
    const sb_param_def *defs = sc->params;
    long long v[SB_MAX_PARAMS], sweep[SB_MAX_SWEEP];
    for (int i = 0; defs && defs[i].name; i++) { /* the default, its first value when a sweep */
        int n = 0;
        if (sb_param_parse_list(&defs[i], defs[i].def, sweep, &n, err, sizeof err) != 0 || !n)
            return refuse_known(o, r, err);
        v[i] = sweep[0];
    }
    for (const char *p = r->params; *p;) { /* params_ok: "k=v;k=v" of plain names */
        const char *end = strchr(p, ';'), *eq = strchr(p, '=');
        char key[128], val[128];
        snprintf(key, sizeof key, "%.*s", (int)(eq - p), p);
        snprintf(val, sizeof val, "%.*s", (int)((end ? end : eq + strlen(eq)) - eq - 1), eq + 1);
        int k = defs ? sb_param_index(defs, key) : -1;
        if (k < 0)
            snprintf(why, sizeof why, "unknown parameter '%s' of %s", key, sc->name);
        if (k < 0 || sb_param_parse(&defs[k], val, &v[k], err, sizeof err) != 0)
            return refuse_known(o, r, k < 0 ? why : err);
        p = end ? end + 1 : eq + strlen(eq);
    }
    const sb_optdef *iters = sb_optdef_by_key(sb_run_optdefs, "iters");
    if (r->iters && iters && (r->iters < iters->lo || r->iters > iters->hi)) {
        snprintf(why, sizeof why, "iters %d out of range (%g to %g)", r->iters, iters->lo,
                 iters->hi);
        return refuse_known(o, r, why);
    }
    sb_param_values pv = {defs, v};
    if (sc->check && sc->check(&pv, err, sizeof err) != 0) {
        snprintf(why, sizeof why, "%s %s: %s", sc->name, r->params, err);
        return refuse_known(o, r, why);
    }
    return 0;
}

/* r's variant is one of its scenario's (known: measurement_known passed). */
static int variant_known(const sb_rerun_opts *o, const sb_cmp_row *r)
{
    const sb_scenario *sc = sb_scenario_find(r->scenario);
    if (sc && sb_variant_index(sc, r->variant) >= 0)
        return 0;
    char why[256];
    snprintf(why, sizeof why, "unknown variant '%s' of %s", r->variant, r->scenario);
    return refuse_known(o, r, why);
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
            else
                rc = measurement_known(o, r);
            if (rc)
                break;
            if (groups == SB_RERUN_MAX_SECTIONS)
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
        if ((rc = variant_known(o, r)) != 0)
            break;
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
