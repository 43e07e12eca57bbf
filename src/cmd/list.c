#include "cmd/list.h"

#include "base/error.h"
#include "scenarios/registry.h"

void sb_print_list(FILE *f)
{
    for (int s = 0; sb_scenarios[s]; s++) {
        const sb_scenario *sc = sb_scenarios[s];
        fprintf(f, "%s%s\n  %s\n", s ? "\n" : "", sc->name, sc->summary);
        if (sc->multi)
            fprintf(f, "  needs %d or more GPUs: skipped, with a note, on a machine with fewer\n",
                    sc->multi->min_gpus);
        if (sc->iters_for)
            fputs("  default iters: depends on the parameters\n", f);
        else
            fprintf(f, "  default iters: %lld\n", sc->default_iters);
        fputs("  variants:\n", f);
        for (int v = 0; sc->variants[v].name; v++)
            fprintf(f, "    %-16s %s\n", sc->variants[v].name, sc->variants[v].summary);
        fputs("  parameters (--set KEY=VALUE[,VALUE...]):\n", f);
        for (int p = 0; sc->params[p].name; p++) {
            char type[128];
            sb_param_describe(&sc->params[p], type, sizeof type);
            fprintf(f, "    %-12s %-24s default %-10s %s\n", sc->params[p].name, type,
                    sc->params[p].def, sc->params[p].help);
        }
        fputs("  metrics:\n", f);
        for (int m = 0; sc->metrics[m].name; m++)
            fprintf(f, "    %-18s %-8s %s is better\n", sc->metrics[m].name, sc->metrics[m].unit,
                    sc->metrics[m].better == SB_HIGHER ? "higher" : "lower");
    }
}

int sb_cmd_list(int argc, char **argv)
{
    if (argc > 1)
        return sb_fail(SB_EXIT_USAGE, "list: unexpected argument '%s'", argv[1]);
    sb_print_list(stdout);
    return 0;
}
