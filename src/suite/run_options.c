/* The options of a run request: one line each, for the command line, suite files and --help. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "suite/run_spec.h"

/* --set KEY=V[,V...]: repeatable, one key once. */
static int store_set(void *base, const char *text, char *err, size_t n)
{
    sb_run_spec *r = base;
    const char *eq = strchr(text, '=');
    if (!eq || eq == text) {
        snprintf(err, n, "expected KEY=VALUE[,VALUE...]");
        return -1;
    }
    if (!eq[1]) {
        snprintf(err, n, "no value after '='");
        return -1;
    }
    size_t klen = (size_t)(eq - text);
    if (klen >= sizeof r->sets[0].key) {
        snprintf(err, n, "parameter name too long");
        return -1;
    }
    if (r->n_sets == SB_MAX_SETS) {
        snprintf(err, n, "more than %d --set options", SB_MAX_SETS);
        return -1;
    }
    sb_set_opt *s = &r->sets[r->n_sets];
    memcpy(s->key, text, klen);
    s->key[klen] = '\0';
    for (int i = 0; i < r->n_sets; i++)
        if (!strcmp(r->sets[i].key, s->key)) {
            snprintf(err, n, "%s given twice; use one --set %s=A,B to sweep", s->key, s->key);
            return -1;
        }
    s->value = eq + 1;
    s->line = 0;
    r->n_sets++;
    return 0;
}

#define AT(field) offsetof(sb_run_spec, field)

/* clang-format off */
const sb_optdef sb_run_optdefs[] = {
    {"scenario", 's', "scenario", SB_OPT_LIST, "LIST", 0, 0, NULL, AT(scenarios), NULL,
     "Selection:", "scenarios to run, comma-separated (default: all; see --list)"},
    /* no -v: users guess -v for --verbose or --version (-V); an unknown -v says so */
    {"variant", 0, "variants", SB_OPT_LIST, "LIST", 0, 0, NULL, AT(variants), NULL, NULL,
     "variants to run (default: all); a sync variant always runs\n"
     "with its reference (async) so its overhead can be reported"},
    {"set", 0, NULL, SB_OPT_CUSTOM, "KEY=V[,V...]", 0, 0, NULL, 0, store_set, NULL,
     "override a scenario parameter; several values sweep it\n"
     "(repeatable: --set m=256,512 --set dtype=bf16)"},
    {"iters", 0, "iters", SB_OPT_INT, "N", 1, 1e8, NULL, AT(m.iters), NULL, "Measurement:",
     "iterations per repetition (default: per scenario)"},
    {"warmup", 0, "warmup", SB_OPT_INT, "N", 0, 1e5, "3", AT(m.warmup), NULL, NULL,
     "at least N warm-up repetitions per measurement (default 3)"},
    {"warmup-time", 0, "warmup_time", SB_OPT_NUMBER, "SECONDS", 0, 600, NULL, AT(m.warmup_s),
     NULL, NULL,
     "and at least this long (default: 0.3, and longer before\n"
     "GPU-bound scenarios so their clocks settle; 0 = off)"},
    {"min-reps", 0, "min_reps", SB_OPT_INT, "N", 1, 1e6, "10", AT(m.min_reps), NULL, NULL,
     "at least N measured repetitions (default 10)"},
    {"max-reps", 0, "max_reps", SB_OPT_INT, "N", 1, 1e6, "100000", AT(m.max_reps), NULL, NULL,
     "at most N measured repetitions (default 100000)"},
    {"max-time", 0, "max_time", SB_OPT_NUMBER, "SECONDS", 0.001, 3600, "2", AT(m.max_time_s),
     NULL, NULL, "time budget per measurement once min-reps is met (default 2)"},
    {"target-cv", 0, "target_cv", SB_OPT_NUMBER, "PERCENT", 0.001, 100, "1", AT(m.target_cv),
     NULL, NULL, "stop when the primary metric's cv is below this (default 1)"},
    {NULL, 0, NULL, 0, NULL, 0, 0, NULL, 0, NULL, NULL, NULL},
};
/* clang-format on */

void sb_run_spec_init(sb_run_spec *spec)
{
    memset(spec, 0, sizeof *spec);
    sb_optdefs_defaults(sb_run_optdefs, spec);
    spec->m.warmup_s = -1; /* automatic until given */
}

int sb_run_opt_index(const char *name)
{
    for (int i = 0; sb_run_optdefs[i].name; i++)
        if (!strcmp(sb_run_optdefs[i].name, name))
            return i;
    return -1;
}

void sb_run_spec_override(sb_run_spec *spec, const sb_run_spec *over)
{
    for (int i = 0; sb_run_optdefs[i].name; i++)
        if (over->given >> i & 1 &&
            (sb_run_optdefs[i].type == SB_OPT_INT || sb_run_optdefs[i].type == SB_OPT_NUMBER)) {
            sb_optdef_copy(&sb_run_optdefs[i], spec, over);
            spec->given |= 1ull << i;
        }
    for (int i = 0; i < over->n_sets; i++) {
        int j = 0;
        while (j < spec->n_sets && strcmp(spec->sets[j].key, over->sets[i].key))
            j++;
        if (j == SB_MAX_SETS)
            continue; /* cannot happen: a section's sets are its scenario's parameters */
        spec->sets[j] = over->sets[i];
        if (j == spec->n_sets)
            spec->n_sets++;
    }
}
