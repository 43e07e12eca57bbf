#include "suite/overrides.h"

#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/textutil.h"
#include "scenarios/registry.h"

#define MAX_NAMES 64

/* Keeps the --variant names this run's scenario has (others may belong to other runs), each
 * once; returns 0 when none is left. */
static int filter_variants(sb_run_spec *spec, const sb_scenario *sc, char **names, int n, int *used)
{
    spec->variants_buf[0] = '\0';
    for (int v = 0; sc->variants[v].name; v++)
        for (int i = 0; i < n; i++)
            if (!strcmp(names[i], sc->variants[v].name)) {
                used[i] = 1;
                size_t len = strlen(spec->variants_buf);
                snprintf(spec->variants_buf + len, sizeof spec->variants_buf - len, "%s%s",
                         len ? "," : "", names[i]);
                break;
            }
    spec->variants = spec->variants_buf;
    spec->variants_line = 0;
    return spec->variants_buf[0] != '\0';
}

static int split(const char *list, char *buf, size_t size, char **items, const char *opt)
{
    if (strlen(list) >= size) {
        sb_fail(SB_EXIT_USAGE, "--%s: list too long (%zu bytes at most)", opt, size - 1);
        return -1;
    }
    strcpy(buf, list);
    int n = sb_split_commas(buf, items, MAX_NAMES);
    if (n < 0)
        sb_fail(SB_EXIT_USAGE, "--%s: more than %d names", opt, MAX_NAMES);
    return n;
}

int sb_suite_override(sb_suite *s, const sb_run_spec *cli)
{
    char sbuf[4096], vbuf[4096], msg[256];
    char *snames[MAX_NAMES], *vnames[MAX_NAMES];
    int ns = 0, nv = 0;
    if (cli->scenarios && (ns = split(cli->scenarios, sbuf, sizeof sbuf, snames, "scenario")) < 0)
        return SB_EXIT_USAGE;
    if (cli->variants && (nv = split(cli->variants, vbuf, sizeof vbuf, vnames, "variant")) < 0)
        return SB_EXIT_USAGE;
    for (int i = 0; i < ns; i++)
        if (!sb_scenario_find(snames[i])) {
            sb_unknown_scenario(snames[i], msg, sizeof msg);
            return sb_fail(SB_EXIT_USAGE, "%s", msg);
        }

    int used_variant[MAX_NAMES] = {0}, used_set[SB_MAX_SETS] = {0};
    int kept = 0;
    for (int i = 0; i < s->n; i++) {
        /* in place (the kept ones move down): spec.variants may point into the spec itself */
        s->specs[kept] = s->specs[i];
        sb_run_spec *spec = &s->specs[kept];
        const sb_scenario *sc = sb_scenario_find(spec->scenarios);
        int keep = 1;
        if (cli->scenarios) {
            keep = 0;
            for (int j = 0; j < ns; j++)
                keep |= !strcmp(snames[j], sc->name);
        }
        if (keep && cli->variants)
            keep = filter_variants(spec, sc, vnames, nv, used_variant);
        if (!keep)
            continue;
        /* the command line's --set keys that are this scenario's parameters */
        sb_run_spec over = *cli;
        over.n_sets = 0;
        for (int j = 0; j < cli->n_sets; j++)
            if (sb_param_index(sc->params, cli->sets[j].key) >= 0) {
                over.sets[over.n_sets++] = cli->sets[j];
                used_set[j] = 1;
            }
        sb_run_spec_override(spec, &over);
        kept++;
    }
    s->n = kept;
    for (int i = 0; i < nv; i++)
        if (!used_variant[i])
            return sb_fail(SB_EXIT_USAGE, "--variant %s: no run in %s has that variant%s",
                           vnames[i], s->path, cli->scenarios ? " (after --scenario)" : "");
    for (int i = 0; i < cli->n_sets; i++)
        if (!used_set[i])
            return sb_fail(SB_EXIT_USAGE, "--set %s: no run in %s has that parameter%s",
                           cli->sets[i].key, s->path,
                           cli->scenarios || cli->variants ? " (after --scenario/--variant)" : "");
    if (!kept)
        return sb_fail(SB_EXIT_USAGE, "%s: no run left after --scenario/--variant", s->path);
    return 0;
}
