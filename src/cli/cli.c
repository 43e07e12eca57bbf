#include "cli/cli.h"

#include <stddef.h>
#include <string.h>

#include "base/error.h"
#include "cli/args.h"

#define AT(field) offsetof(sb_options, field)

/* clang-format off */
static const sb_optdef cli_optdefs[] = {
    {"config", 0, NULL, SB_OPT_TEXT, "FILE", 0, 0, NULL, AT(config), NULL, "Suites:",
     "run the suite in an INI file (configs/default.ini, ...);\n"
     "options given here override the file's"},
    {"list", 0, NULL, SB_OPT_FLAG, NULL, 0, 0, NULL, AT(list), NULL, NULL,
     "list scenarios, variants, parameters and metrics, then exit"},
    {"dry-run", 0, NULL, SB_OPT_FLAG, NULL, 0, 0, NULL, AT(dry_run), NULL, NULL,
     "print the plan (every measurement) and exit, touching no GPU"},
    {"device", 0, NULL, SB_OPT_INT, "N", 0, 1023, "0", AT(device), NULL, "Device:",
     "CUDA device ordinal (default 0)"},
    {"cpu", 0, NULL, SB_OPT_INT, "N", 0, 4095, "-1", AT(cpu), NULL, NULL,
     "pin the measuring thread to CPU N (less jitter from the\n"
     "scheduler moving it; default: not pinned)"},
    {"csv", 0, NULL, SB_OPT_TEXT, "PATH", 0, 0, NULL, AT(csv), NULL, "Output:",
     "the tidy CSV (one row per metric); '-' = stdout, no table"},
    {"json", 0, NULL, SB_OPT_TEXT, "PATH", 0, 0, NULL, AT(json), NULL, NULL,
     "every row plus the environment record"},
    {"markdown", 0, NULL, SB_OPT_TEXT, "PATH", 0, 0, NULL, AT(markdown), NULL, NULL,
     "the table as GitHub-flavoured Markdown (CI job summaries);\n"
     "{gpu} and {date} in file names are filled in"},
    {"samples", 0, NULL, SB_OPT_TEXT, "PATH", 0, 0, NULL, AT(samples), NULL, NULL,
     "every repetition (paired deltas: every pair), tidy, for compare's\n"
     "statistical test; a suite may set it with samples = PATH"},
    {"github-benchmark", 0, NULL, SB_OPT_TEXT, "PATH", 0, 0, NULL, AT(github_benchmark), NULL,
     NULL,
     "history dashboards: github-action-benchmark's\n"
     "customSmallerIsBetter JSON (the lower-is-better metrics)"},
    {"bmf", 0, NULL, SB_OPT_TEXT, "PATH", 0, 0, NULL, AT(bmf), NULL, NULL,
     "history dashboards: Bencher Metric Format JSON, every\n"
     "metric (for bencher run's json adapter)"},
    {"quiet", 'q', NULL, SB_OPT_FLAG, NULL, 0, 0, NULL, AT(quiet), NULL, NULL,
     "print nothing but errors"},
    {"help", 'h', NULL, SB_OPT_FLAG, NULL, 0, 0, NULL, AT(help), NULL, NULL, "this text"},
    {"version", 'V', NULL, SB_OPT_FLAG, NULL, 0, 0, NULL, AT(version), NULL, NULL,
     "version and git revision"},
    {NULL, 0, NULL, 0, NULL, 0, 0, NULL, 0, NULL, NULL, NULL},
};
/* clang-format on */

const sb_optdef *sb_cli_optdefs(void)
{
    return cli_optdefs;
}

static void tables(sb_options *o, sb_argtable t[2])
{
    t[0] = (sb_argtable){sb_run_optdefs, &o->run, &o->run.given};
    t[1] = (sb_argtable){cli_optdefs, o, NULL};
}

void sb_options_defaults(sb_options *o)
{
    memset(o, 0, sizeof *o);
    sb_run_spec_init(&o->run);
    sb_optdefs_defaults(cli_optdefs, o);
}

int sb_cli_parse(int argc, char **argv, sb_options *o)
{
    sb_argtable t[2];
    tables(o, t);
    int first;
    int rc = sb_args_parse("", t, 2, argc, argv, &first);
    if (rc)
        return rc;
    if (first < argc)
        return sb_fail(SB_EXIT_USAGE, "unexpected argument '%s' (see --help)", argv[first]);
    return 0; /* min-reps against max-reps: in the plan, once a suite's values are merged */
}

/* --help: the text around the options. */
static const char usage_head[] =
    "usage: syncbench [run] [options]\n"
    "       syncbench compare BASELINE.csv CURRENT.csv [options]   (see compare --help)\n"
    "       syncbench audit [options] -- CMD [ARGS...]             (see audit --help)\n"
    "       syncbench list\n"
    "\n"
    "Measures what CPU-GPU synchronization costs, scenario by scenario, and what the\n"
    "sync-free alternative is worth; audit finds the syncs of any CUDA program.\n";
static const char usage_tail[] =
    "\nExit codes: 0 ok, 1 measurement or validation failed, 2 bad usage or input,\n"
    "3 no usable CUDA device or driver, 130 interrupted.\n";

void sb_cli_usage(FILE *f)
{
    sb_options o;
    sb_argtable t[2];
    tables(&o, t);
    sb_args_help(f, usage_head, t, 2, usage_tail);
}
