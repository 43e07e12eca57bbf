#include "suite/config.h"

#include <errno.h>
#include <stdarg.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "scenarios/registry.h"
#include "base/textutil.h"

#define MAX_SECTIONS 256
#define MAX_KEYS 64

typedef struct {
    char *key, *value;
    int line;
} cfg_key;

typedef struct {
    char name[64];
    int line;
    cfg_key keys[MAX_KEYS];
    int n_keys;
} cfg_section;

typedef struct {
    const char *path;
    FILE *f;
    int line; /* of the line inih is handling */
    cfg_section *sections;
    int n_sections;
    int failed; /* the exit code of the first error, 0 if none */
} cfg_file;

static int cfg_error(cfg_file *c, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int cfg_error(cfg_file *c, int line, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return c->failed = sb_fail(SB_EXIT_USAGE, "%s:%d: %s", c->path, line, msg);
}

/* inih reads through this, so the handler knows the line it is called for. */
static char *read_line(char *str, int num, void *stream)
{
    cfg_file *c = stream;
    char *r = fgets(str, num, c->f);
    if (r)
        c->line++;
    return r;
}

static int on_key(void *user, const char *section, const char *name, const char *value)
{
    cfg_file *c = user;
    if (c->failed)
        return 0;
    if (!*section) {
        cfg_error(c, c->line, "key '%s' outside a section; runs start with [name]", name);
        return 0;
    }
    /* inih keeps blanks inside the brackets; the header scan trims them */
    while (*section == ' ' || *section == '\t')
        section++;
    size_t len = strlen(section);
    while (len && (section[len - 1] == ' ' || section[len - 1] == '\t'))
        len--;
    cfg_section *s = NULL;
    for (int i = 0; i < c->n_sections && !s; i++)
        if (strlen(c->sections[i].name) == len && !strncmp(c->sections[i].name, section, len))
            s = &c->sections[i];
    if (!s) { /* a header the scan did not read the way inih did */
        cfg_error(c, c->line, "cannot read the header of section [%s]", section);
        return 0;
    }
    for (int i = 0; i < s->n_keys; i++)
        if (!strcmp(s->keys[i].key, name)) {
            cfg_error(c, c->line, "key '%s' given twice in [%s] (first at line %d)", name, s->name,
                      s->keys[i].line);
            return 0;
        }
    if (s->n_keys == MAX_KEYS) {
        cfg_error(c, c->line, "more than %d keys in [%s]", MAX_KEYS, s->name);
        return 0;
    }
    cfg_key *k = &s->keys[s->n_keys++];
    k->key = strdup(name);
    k->value = strdup(value);
    k->line = c->line;
    if (!k->key || !k->value) {
        c->failed = sb_fail(SB_EXIT_FAIL, "out of memory reading %s", c->path);
        return 0;
    }
    return 1;
}

/* Sections in file order with their header lines, before inih reads the keys: inih reports a
 * section only through its keys, so it would neither see an empty section nor tell two
 * sections of the same name apart. */
static int scan_headers(cfg_file *c)
{
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof line, c->f)) {
        n++;
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != '[')
            continue;
        char *end = strchr(p, ']');
        if (!end)
            continue; /* inih reports the syntax error */
        *end = '\0';
        char *name = p + 1;
        while (*name == ' ' || *name == '\t')
            name++;
        for (char *t = name + strlen(name); t > name && (t[-1] == ' ' || t[-1] == '\t');)
            *--t = '\0';
        for (int i = 0; i < c->n_sections; i++)
            if (!strcmp(c->sections[i].name, name))
                return cfg_error(c, n, "duplicate section [%s] (first at line %d)", name,
                                 c->sections[i].line);
        if (c->n_sections == MAX_SECTIONS)
            return cfg_error(c, n, "more than %d sections", MAX_SECTIONS);
        if (strlen(name) >= sizeof c->sections[0].name)
            return cfg_error(c, n, "section name [%.20s...] is too long", name);
        cfg_section *s = &c->sections[c->n_sections++];
        memset(s, 0, sizeof *s);
        snprintf(s->name, sizeof s->name, "%s", name);
        s->line = n;
    }
    rewind(c->f);
    return 0;
}

static void cfg_free(cfg_file *c)
{
    for (int i = 0; i < c->n_sections; i++)
        for (int k = 0; k < c->sections[i].n_keys; k++) {
            free(c->sections[i].keys[k].key);
            free(c->sections[i].keys[k].value);
        }
    free(c->sections);
    if (c->f)
        fclose(c->f);
}

static const char *const run_keys[] = {"scenario",    "variants", "iters",    "warmup",
                                       "warmup_time", "min_reps", "max_reps", "max_time",
                                       "target_cv",   NULL};

static int number_key(cfg_file *c, const cfg_section *s, const cfg_key *k, double lo, double hi,
                      int integer, double *out)
{
    double v;
    long long iv;
    int rc = integer ? sb_parse_ll(k->value, &iv) : sb_parse_double(k->value, &v);
    if (integer && rc == SB_PARSE_OK)
        v = (double)iv;
    if (rc == SB_PARSE_OK && (v < lo || v > hi))
        rc = SB_PARSE_RANGE;
    if (rc != SB_PARSE_OK)
        return cfg_error(c, k->line, "[%s] %s = %s: %s (%s from %.15g to %.15g)", s->name, k->key,
                         k->value, rc == SB_PARSE_RANGE ? "out of range" : "not a number",
                         integer ? "an integer" : "a number", lo, hi);
    *out = v;
    return 0;
}

/* One section -> one run request (before the command line's overrides). */
static int section_spec(cfg_file *c, const cfg_section *s, sb_run_spec *spec)
{
    memset(spec, 0, sizeof *spec);
    sb_measure_opts_defaults(&spec->m);
    spec->file = c->path;
    snprintf(spec->section, sizeof spec->section, "%s", s->name);
    spec->line = s->line;
    spec->scenarios = s->name;
    for (int i = 0; i < s->n_keys; i++)
        if (!strcmp(s->keys[i].key, "scenario")) {
            spec->scenarios = s->keys[i].value;
            spec->scenario_line = s->keys[i].line;
        }
    const sb_scenario *sc = sb_scenario_find(spec->scenarios);
    if (!sc) {
        char msg[256];
        sb_unknown_scenario(spec->scenarios, msg, sizeof msg);
        if (!spec->scenario_line)
            return cfg_error(c, s->line, "[%s] %s (name the scenario: scenario = NAME)", s->name,
                             msg);
        return cfg_error(c, spec->scenario_line, "[%s] %s", s->name, msg);
    }
    int rc = 0;
    double v;
    sb_measure_opts *m = &spec->m;
    for (int i = 0; i < s->n_keys && !rc; i++) {
        const cfg_key *k = &s->keys[i];
        if (!strcmp(k->key, "scenario"))
            continue;
        if (!strcmp(k->key, "variants")) {
            spec->variants = k->value;
            spec->variants_line = k->line;
        } else if (!strcmp(k->key, "iters")) {
            if (!(rc = number_key(c, s, k, 1, 1e8, 1, &v)))
                m->iters = (long long)v;
        } else if (!strcmp(k->key, "warmup")) {
            if (!(rc = number_key(c, s, k, 0, 100000, 1, &v)))
                m->warmup = (int)v;
        } else if (!strcmp(k->key, "warmup_time")) {
            rc = number_key(c, s, k, 0, 600, 0, &m->warmup_s);
        } else if (!strcmp(k->key, "min_reps")) {
            if (!(rc = number_key(c, s, k, 1, 1000000, 1, &v)))
                m->min_reps = (int)v;
        } else if (!strcmp(k->key, "max_reps")) {
            if (!(rc = number_key(c, s, k, 1, 1000000, 1, &v)))
                m->max_reps = (int)v;
        } else if (!strcmp(k->key, "max_time")) {
            rc = number_key(c, s, k, 1e-6, 3600, 0, &m->max_time_s);
        } else if (!strcmp(k->key, "target_cv")) {
            rc = number_key(c, s, k, 1e-6, 100, 0, &m->target_cv);
        } else if (sb_param_index(sc->params, k->key) >= 0) {
            spec->sets[spec->n_sets++] = (sb_set_opt){k->key, k->value, k->line};
        } else {
            const char *cands[MAX_KEYS + SB_MAX_PARAMS + 1];
            int n = 0;
            for (int j = 0; run_keys[j]; j++)
                cands[n++] = run_keys[j];
            for (int j = 0; sc->params[j].name; j++)
                cands[n++] = sc->params[j].name;
            cands[n] = NULL;
            const char *hint = sb_suggest(k->key, cands, sizeof cands[0]);
            if (hint)
                rc = cfg_error(c, k->line, "unknown key '%s' in [%s]; did you mean '%s'?", k->key,
                               s->name, hint);
            else
                rc = cfg_error(c, k->line,
                               "unknown key '%s' in [%s] (keys: scenario, variants, "
                               "iters, ... and %s's parameters, see --list)",
                               k->key, s->name, sc->name);
        }
    }
    if (!rc && m->min_reps > m->max_reps)
        rc = cfg_error(c, s->line, "[%s] min_reps %d is above max_reps %d", s->name, m->min_reps,
                       m->max_reps);
    return rc;
}

/* The command line's options over a section's. Returns 0 to keep the run, 1 to leave it out
 * (--scenario or --variant select other runs). */
static int apply_overrides(const sb_options *o, sb_run_spec *spec, int *used_variants)
{
    const sb_scenario *sc = sb_scenario_find(spec->scenarios);
    if (o->run.scenarios && !sb_list_contains(o->run.scenarios, sc->name))
        return 1;
    if (o->run.variants) {
        /* keep the names this run's scenario has; other names may belong to other runs */
        char buf[1024];
        char *items[64];
        snprintf(buf, sizeof buf, "%s", o->run.variants);
        int n = sb_split_commas(buf, items, 64);
        spec->variants_buf[0] = '\0';
        for (int i = 0; i < n; i++) {
            if (sb_variant_index(sc, items[i]) < 0)
                continue;
            used_variants[i] = 1;
            size_t len = strlen(spec->variants_buf);
            snprintf(spec->variants_buf + len, sizeof spec->variants_buf - len, "%s%s",
                     len ? "," : "", items[i]);
        }
        if (!spec->variants_buf[0])
            return 1;
        spec->variants = spec->variants_buf;
        spec->variants_line = 0;
    }
    for (int i = 0; i < o->run.n_sets; i++) {
        if (sb_param_index(sc->params, o->run.sets[i].key) < 0)
            continue;
        int j = 0;
        while (j < spec->n_sets && strcmp(spec->sets[j].key, o->run.sets[i].key))
            j++;
        spec->sets[j] = o->run.sets[i];
        if (j == spec->n_sets)
            spec->n_sets++;
    }
    const sb_measure_opts *cm = &o->run.m;
    sb_measure_opts *m = &spec->m;
    if (o->given & SB_GIVEN_ITERS)
        m->iters = cm->iters;
    if (o->given & SB_GIVEN_WARMUP)
        m->warmup = cm->warmup;
    if (o->given & SB_GIVEN_WARMUP_TIME)
        m->warmup_s = cm->warmup_s;
    if (o->given & SB_GIVEN_MIN_REPS)
        m->min_reps = cm->min_reps;
    if (o->given & SB_GIVEN_MAX_REPS)
        m->max_reps = cm->max_reps;
    if (o->given & SB_GIVEN_MAX_TIME)
        m->max_time_s = cm->max_time_s;
    if (o->given & SB_GIVEN_TARGET_CV)
        m->target_cv = cm->target_cv;
    return 0;
}

/* --scenario, --variant and --set names must each match something in the suite. */
static int check_cli_names(const sb_options *o, const cfg_file *c, int kept,
                           const int *used_variants)
{
    char buf[1024], msg[256];
    char *items[64];
    if (o->run.scenarios) {
        snprintf(buf, sizeof buf, "%s", o->run.scenarios);
        int n = sb_split_commas(buf, items, 64);
        for (int i = 0; i < n; i++)
            if (!sb_scenario_find(items[i])) {
                sb_unknown_scenario(items[i], msg, sizeof msg);
                return sb_fail(SB_EXIT_USAGE, "%s", msg);
            }
    }
    if (o->run.variants) {
        snprintf(buf, sizeof buf, "%s", o->run.variants);
        int n = sb_split_commas(buf, items, 64);
        for (int i = 0; i < n; i++)
            if (!used_variants[i])
                return sb_fail(SB_EXIT_USAGE, "--variant %s: no run in %s has that variant",
                               items[i], c->path);
    }
    for (int i = 0; i < o->run.n_sets; i++) {
        int known = 0;
        for (int s = 0; s < c->n_sections; s++) {
            const cfg_section *sec = &c->sections[s];
            const char *name = sec->name;
            for (int k = 0; k < sec->n_keys; k++)
                if (!strcmp(sec->keys[k].key, "scenario"))
                    name = sec->keys[k].value;
            const sb_scenario *sc = sb_scenario_find(name);
            known |= sc && sb_param_index(sc->params, o->run.sets[i].key) >= 0;
        }
        if (!known)
            return sb_fail(SB_EXIT_USAGE, "--set %s: no run in %s has that parameter",
                           o->run.sets[i].key, c->path);
    }
    if (!kept)
        return sb_fail(SB_EXIT_USAGE, "%s: no run left after --scenario/--variant", c->path);
    return 0;
}

int sb_config_plan(const char *path, const sb_options *o, sb_plan *plan)
{
    cfg_file c = {.path = path};
    c.f = fopen(path, "r");
    if (!c.f)
        return sb_fail(SB_EXIT_USAGE, "--config %s: cannot open: %s", path, strerror(errno));
    c.sections = calloc(MAX_SECTIONS, sizeof *c.sections);
    if (!c.sections) {
        cfg_free(&c);
        return sb_fail(SB_EXIT_FAIL, "out of memory reading %s", path);
    }
    int rc = scan_headers(&c);
    if (!rc) {
        int line = ini_parse_stream(read_line, &c, on_key, &c);
        rc = c.failed;
        if (!rc && line > 0)
            rc = cfg_error(&c, line, "syntax error: expected [name], key = value or a ; comment");
    }
    if (!rc && c.n_sections == 0)
        rc = sb_fail(SB_EXIT_USAGE, "%s: no runs (sections) in the file", path);

    int used_variants[64] = {0};
    int kept = 0;
    sb_run_spec *specs = calloc((size_t)c.n_sections + 1, sizeof *specs);
    if (!rc && !specs)
        rc = sb_fail(SB_EXIT_FAIL, "out of memory reading %s", path);
    /* every section is checked, also those --scenario leaves out: a broken suite is broken */
    for (int i = 0; i < c.n_sections && !rc; i++)
        rc = section_spec(&c, &c.sections[i], &specs[i]);
    int keep[MAX_SECTIONS] = {0};
    for (int i = 0; i < c.n_sections && !rc; i++) {
        keep[i] = !apply_overrides(o, &specs[i], used_variants);
        kept += keep[i];
    }
    if (!rc)
        rc = check_cli_names(o, &c, kept, used_variants);
    for (int i = 0; i < c.n_sections && !rc; i++)
        if (keep[i])
            rc = sb_plan_add_spec(plan, &specs[i]);
    free(specs);
    cfg_free(&c);
    return rc;
}
