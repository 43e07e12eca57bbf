#include "suite/plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "scenarios/registry.h"
#include "base/textutil.h"

typedef struct {
    const sb_scenario *list[64];
    int n;
} selection;

/* "configs/ci.ini:12: [small-gemm] " for a config section (line: the key's, else the
 * section's), "" for the command line. */
static void where(const sb_run_spec *spec, int line, char *buf, size_t n)
{
    if (!spec->file)
        buf[0] = '\0';
    else
        snprintf(buf, n, "%s:%d: [%s] ", spec->file, line ? line : spec->line, spec->section);
}

static int spec_fail(const sb_run_spec *spec, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int spec_fail(const sb_run_spec *spec, int line, const char *fmt, ...)
{
    char at[512];
    where(spec, line, at, sizeof at);
    /* the message whole, however long (a list of names is never cut) */
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *msg = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (!msg)
        return sb_fail(SB_EXIT_USAGE, "%s%s", at, fmt);
    va_start(ap, fmt);
    vsnprintf(msg, (size_t)len + 1, fmt, ap);
    va_end(ap);
    int rc = sb_fail(SB_EXIT_USAGE, "%s%s", at, msg);
    free(msg);
    return rc;
}

typedef struct {
    char buf[4096];
    char *names[64];
    int n;
} name_list;

/* A comma list of names into l; what: "scenario" or "variant", for the messages. */
static int split_names(const sb_run_spec *spec, int line, const char *list, const char *what,
                       name_list *l)
{
    if (strlen(list) >= sizeof l->buf)
        return spec_fail(spec, line, "%s list longer than %zu bytes", what, sizeof l->buf - 1);
    strcpy(l->buf, list);
    l->n = sb_split_commas(l->buf, l->names, 64);
    if (l->n < 0)
        return spec_fail(spec, line, "more than 64 %s names", what);
    return 0;
}

static int select_scenarios(const sb_run_spec *spec, selection *sel)
{
    sel->n = 0;
    if (!spec->scenarios) {
        for (int i = 0; sb_scenarios[i] && sel->n < 64; i++)
            sel->list[sel->n++] = sb_scenarios[i];
        return 0;
    }
    name_list l;
    int rc = split_names(spec, spec->scenario_line, spec->scenarios, "scenario", &l);
    for (int i = 0; !rc && i < l.n; i++) {
        const sb_scenario *sc = sb_scenario_find(l.names[i]);
        if (!sc) {
            char msg[256];
            sb_unknown_scenario(l.names[i], msg, sizeof msg);
            return spec_fail(spec, spec->scenario_line, "%s", msg);
        }
        int dup = 0;
        for (int j = 0; j < sel->n; j++)
            dup |= sel->list[j] == sc;
        if (!dup)
            sel->list[sel->n++] = sc;
    }
    return rc;
}

static int check_set_keys(const sb_run_spec *spec, const selection *sel)
{
    for (int s = 0; s < spec->n_sets; s++) {
        const char *key = spec->sets[s].key;
        int known = 0;
        const char *cands[SB_MAX_PARAMS * 64 + 1];
        int c = 0;
        for (int i = 0; i < sel->n; i++) {
            const sb_param_def *p = sel->list[i]->params;
            known |= sb_param_index(p, key) >= 0;
            for (int j = 0; p && p[j].name; j++)
                cands[c++] = p[j].name;
        }
        cands[c] = NULL;
        if (known)
            continue;
        const char *hint = sb_suggest(key, cands, sizeof cands[0]);
        /* the scenarios' names, whole however many */
        sb_memtext m;
        FILE *f = sb_memtext_open(&m);
        for (int i = 0; f && i < sel->n; i++)
            fprintf(f, "%s%s", i ? ", " : "", sel->list[i]->name);
        char *names = f ? sb_memtext_close(&m) : NULL;
        if (!names)
            return sb_fail(SB_EXIT_FAIL, "out of memory listing the scenarios");
        int rc = hint ? spec_fail(spec, spec->sets[s].line,
                                  "--set %s: unknown parameter for %s; did you mean '%s'?", key,
                                  names, hint)
                      : spec_fail(spec, spec->sets[s].line,
                                  "--set %s: unknown parameter for %s (see --list)", key, names);
        free(names);
        return rc;
    }
    return 0;
}

/* "unknown variant 'x' (one of: a, b, ...)": every variant once, the list whole however long
 * (it is built on the heap, never in a fixed buffer). */
static int unknown_variant(const sb_run_spec *spec, const char *name, const char *const *cands,
                           int c)
{
    sb_memtext m;
    FILE *f = sb_memtext_open(&m);
    for (int j = 0; f && j < c; j++) {
        int seen = 0;
        for (int q = 0; q < j; q++)
            seen |= !strcmp(cands[q], cands[j]);
        if (!seen)
            fprintf(f, "%s%s", ftell(f) ? ", " : "", cands[j]);
    }
    char *all = f ? sb_memtext_close(&m) : NULL;
    if (!all)
        return sb_fail(SB_EXIT_FAIL, "out of memory listing the variants");
    int rc = spec_fail(spec, spec->variants_line, "unknown variant '%s' (one of: %s)", name, all);
    free(all);
    return rc;
}

/* Every variant name must be a variant of at least one selected scenario. Fills want[i][v]. */
static int select_variants(const sb_run_spec *spec, const selection *sel,
                           int want[][SB_MAX_VARIANTS])
{
    for (int i = 0; i < sel->n; i++)
        for (int v = 0; v < SB_MAX_VARIANTS; v++)
            want[i][v] = !spec->variants && v < sb_variant_count(sel->list[i]);
    if (!spec->variants)
        return 0;
    name_list l;
    int rc = split_names(spec, spec->variants_line, spec->variants, "variant", &l);
    if (rc)
        return rc;
    char **names = l.names;
    for (int n = 0; n < l.n; n++) {
        int found = 0;
        const char *cands[SB_MAX_VARIANTS * 64 + 1];
        int c = 0;
        for (int i = 0; i < sel->n; i++) {
            int v = sb_variant_index(sel->list[i], names[n]);
            if (v >= 0) {
                want[i][v] = 1;
                found = 1;
            }
            for (int j = 0; sel->list[i]->variants[j].name; j++)
                cands[c++] = sel->list[i]->variants[j].name;
        }
        cands[c] = NULL;
        if (found)
            continue;
        const char *hint = sb_suggest(names[n], cands, sizeof cands[0]);
        if (hint)
            return spec_fail(spec, spec->variants_line, "unknown variant '%s'; did you mean '%s'?",
                             names[n], hint);
        return unknown_variant(spec, names[n], cands, c);
    }
    return 0;
}

static int add_entry(sb_plan *plan, const sb_plan_entry *e)
{
    if (plan->n == plan->cap) {
        int cap = plan->cap ? plan->cap * 2 : 64;
        if (cap > SB_MAX_PLAN)
            return sb_fail(SB_EXIT_USAGE, "the plan has more than %d entries; sweep less",
                           SB_MAX_PLAN);
        sb_plan_entry *p = realloc(plan->entries, sizeof *p * (size_t)cap);
        if (!p)
            return sb_fail(SB_EXIT_FAIL, "out of memory building the plan");
        plan->entries = p;
        plan->cap = cap;
    }
    plan->entries[plan->n++] = *e;
    return 0;
}

static int expand_scenario(const sb_run_spec *spec, int spec_index, const sb_scenario *sc,
                           const int *want, sb_plan *plan)
{
    const sb_param_def *defs = sc->params;
    int np = sb_params_count(defs);
    long long vals[SB_MAX_PARAMS][SB_MAX_SWEEP];
    int nvals[SB_MAX_PARAMS];
    char err[512];
    if (spec->m.min_reps > spec->m.max_reps)
        return spec->file ? spec_fail(spec, 0, "min_reps %lld is above max_reps %lld",
                                      spec->m.min_reps, spec->m.max_reps)
                          : sb_fail(SB_EXIT_USAGE, "--min-reps %lld is above --max-reps %lld",
                                    spec->m.min_reps, spec->m.max_reps);
    for (int p = 0; p < np; p++) {
        const char *text = defs[p].def;
        int line = 0, given = 0;
        for (int s = 0; s < spec->n_sets; s++)
            if (!strcmp(spec->sets[s].key, defs[p].name)) {
                text = spec->sets[s].value;
                line = spec->sets[s].line;
                given = 1;
            }
        if (sb_param_parse_list(&defs[p], text, vals[p], &nvals[p], err, sizeof err) != 0) {
            if (spec->file && given && !line) /* the command line's --set over a suite's run */
                return sb_fail(SB_EXIT_USAGE, "%s: --set %s (over [%s] of %s)", sc->name, err,
                               spec->section, spec->file);
            return spec->file ? spec_fail(spec, line, "%s", err)
                              : sb_fail(SB_EXIT_USAGE, "%s: --set %s", sc->name, err);
        }
    }

    sb_plan_entry e;
    memset(&e, 0, sizeof e);
    e.sc = sc;
    e.m = spec->m;
    e.spec = spec_index;
    /* requested variants plus the references they are compared with, in declaration order */
    int take[SB_MAX_VARIANTS] = {0};
    for (int v = 0; sc->variants[v].name; v++) {
        if (!want[v])
            continue;
        take[v] = 1;
        if (sc->variants[v].reference)
            take[sb_variant_index(sc, sc->variants[v].reference)] = 1;
    }
    for (int v = 0; sc->variants[v].name; v++)
        if (take[v])
            e.variants[e.n_variants++] = v;
    if (e.n_variants == 0)
        return 0;

    /* cartesian product of the swept parameters, the last parameter varying fastest */
    int idx[SB_MAX_PARAMS] = {0};
    for (;;) {
        for (int p = 0; p < np; p++)
            e.values[p] = vals[p][idx[p]];
        sb_param_values pv = sb_plan_params(&e);
        e.m.iters = spec->m.iters   ? spec->m.iters
                    : sc->iters_for ? sc->iters_for(&pv)
                                    : sc->default_iters;
        if (sc->check && sc->check(&pv, err, sizeof err) != 0) {
            char params[256];
            sb_params_format_all(defs, e.values, params, sizeof params);
            return spec_fail(spec, 0, "%s %s: %s", sc->name, params, err);
        }
        int rc = add_entry(plan, &e);
        if (rc)
            return rc;
        int p = np - 1;
        while (p >= 0 && ++idx[p] == nvals[p])
            idx[p--] = 0;
        if (p < 0)
            break;
    }
    return 0;
}

static int add_spec(sb_plan *plan, const sb_run_spec *spec, int spec_index)
{
    selection sel;
    int want[64][SB_MAX_VARIANTS];
    int before = plan->n;
    int rc = select_scenarios(spec, &sel);
    if (!rc)
        rc = check_set_keys(spec, &sel);
    if (!rc)
        rc = select_variants(spec, &sel, want);
    for (int i = 0; i < sel.n && !rc; i++)
        rc = expand_scenario(spec, spec_index, sel.list[i], want[i], plan);
    if (!rc && plan->n == before)
        rc = spec_fail(spec, 0, "nothing to run: no selected scenario has those variants");
    return rc;
}

/* (entry, variant) pairs sorted by what they measure, to find one planned twice */
typedef struct {
    const sb_plan_entry *e;
    int variant;
} measurement;

static int by_what(const void *a, const void *b)
{
    const measurement *x = a, *y = b;
    int c = strcmp(x->e->sc->name, y->e->sc->name);
    if (!c)
        c = memcmp(x->e->values, y->e->values, sizeof x->e->values);
    if (!c)
        c = (x->variant > y->variant) - (x->variant < y->variant);
    if (!c) /* plan order among equals, so the first planned is named first */
        c = (x->e > y->e) - (x->e < y->e);
    return c;
}

static int find_twice(const sb_plan *plan, const sb_run_spec *specs)
{
    int n = sb_plan_measurements(plan);
    measurement *all = malloc(sizeof *all * (size_t)(n ? n : 1));
    if (!all)
        return sb_fail(SB_EXIT_FAIL, "out of memory building the plan");
    int k = 0;
    for (int i = 0; i < plan->n; i++)
        for (int v = 0; v < plan->entries[i].n_variants; v++)
            all[k++] = (measurement){&plan->entries[i], plan->entries[i].variants[v]};
    qsort(all, (size_t)n, sizeof *all, by_what);
    int rc = 0;
    for (int i = 1; i < n && !rc; i++) {
        measurement a = all[i - 1], b = all[i];
        if (a.e->sc != b.e->sc || a.variant != b.variant ||
            memcmp(a.e->values, b.e->values, sizeof a.e->values))
            continue;
        char name[512];
        sb_plan_entry_name(b.e, b.variant, name, sizeof name);
        const sb_run_spec *first = &specs[a.e->spec], *again = &specs[b.e->spec];
        if (!again->file)
            rc = sb_fail(SB_EXIT_USAGE, "%s is planned twice", name);
        else if (first == again)
            rc = spec_fail(again, 0, "%s is planned twice", name);
        else
            rc = spec_fail(again, 0, "%s is planned already by [%s] (line %d)", name,
                           first->section, first->line);
    }
    free(all);
    return rc;
}

int sb_plan_build(const sb_run_spec *specs, int n_specs, sb_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    int rc = 0;
    for (int i = 0; i < n_specs && !rc; i++)
        rc = add_spec(plan, &specs[i], i);
    if (!rc)
        rc = find_twice(plan, specs);
    if (rc)
        sb_plan_free(plan);
    return rc;
}

sb_param_values sb_plan_params(const sb_plan_entry *e)
{
    return (sb_param_values){e->sc->params, e->values};
}

void sb_plan_free(sb_plan *plan)
{
    free(plan->entries);
    memset(plan, 0, sizeof *plan);
}

void sb_plan_entry_name(const sb_plan_entry *e, int variant, char *buf, size_t n)
{
    char params[256];
    sb_params_format_all(e->sc->params, e->values, params, sizeof params);
    snprintf(buf, n, "%s/%s %s", e->sc->name, e->sc->variants[variant].name, params);
}

int sb_plan_measurements(const sb_plan *plan)
{
    int n = 0;
    for (int i = 0; i < plan->n; i++)
        n += plan->entries[i].n_variants;
    return n;
}

void sb_plan_print(FILE *f, const sb_plan *plan)
{
    int total = sb_plan_measurements(plan);
    fprintf(f, "plan: %d measurement%s in %d entr%s\n", total, total == 1 ? "" : "s", plan->n,
            plan->n == 1 ? "y" : "ies");
    int k = 0;
    for (int i = 0; i < plan->n; i++) {
        const sb_plan_entry *e = &plan->entries[i];
        char params[256];
        sb_params_format_all(e->sc->params, e->values, params, sizeof params);
        for (int v = 0; v < e->n_variants; v++)
            fprintf(f, "%4d  %-14s %-17s %s  iters=%lld\n", ++k, e->sc->name,
                    e->sc->variants[e->variants[v]].name, params, e->m.iters);
    }
}
