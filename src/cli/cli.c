#include "cli/cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/textutil.h"

enum {
    OPT_LIST = 1000,
    OPT_ITERS,
    OPT_WARMUP,
    OPT_WARMUP_TIME,
    OPT_MIN_REPS,
    OPT_MAX_REPS,
    OPT_MAX_TIME,
    OPT_TARGET_CV,
    OPT_SET,
    OPT_DEVICE,
    OPT_CSV,
    OPT_JSON,
    OPT_MARKDOWN,
    OPT_CONFIG,
    OPT_DRY_RUN,
    OPT_VERSION,
};

static const struct option long_opts[] = {
    {"scenario", required_argument, NULL, 's'},
    {"variant", required_argument, NULL, 'v'},
    {"list", no_argument, NULL, OPT_LIST},
    {"iters", required_argument, NULL, OPT_ITERS},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"warmup-time", required_argument, NULL, OPT_WARMUP_TIME},
    {"min-reps", required_argument, NULL, OPT_MIN_REPS},
    {"max-reps", required_argument, NULL, OPT_MAX_REPS},
    {"max-time", required_argument, NULL, OPT_MAX_TIME},
    {"target-cv", required_argument, NULL, OPT_TARGET_CV},
    {"set", required_argument, NULL, OPT_SET},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"csv", required_argument, NULL, OPT_CSV},
    {"json", required_argument, NULL, OPT_JSON},
    {"markdown", required_argument, NULL, OPT_MARKDOWN},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"dry-run", no_argument, NULL, OPT_DRY_RUN},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

void sb_measure_opts_defaults(sb_measure_opts *m)
{
    m->iters = 0; /* the scenario's */
    m->warmup = 3;
    m->warmup_s = -1; /* automatic */
    m->min_reps = 10;
    m->max_reps = 100000;
    m->max_time_s = 2.0;
    m->target_cv = 1.0;
}

void sb_options_defaults(sb_options *o)
{
    memset(o, 0, sizeof *o);
    sb_measure_opts_defaults(&o->run.m);
}

void sb_cli_usage(FILE *f)
{
    fputs("usage: syncbench [options]\n"
          "       syncbench compare BASELINE.csv CURRENT.csv [options]\n"
          "\n"
          "Measures what CPU-GPU synchronization costs, scenario by scenario, and what the\n"
          "sync-free alternative is worth.\n"
          "\n"
          "Selection:\n"
          "  -s, --scenario LIST     scenarios to run, comma-separated (default: all; see --list)\n"
          "  -v, --variant LIST      variants to run (default: all); a sync variant always runs\n"
          "                          with its reference (async) so its overhead can be reported\n"
          "      --set KEY=V[,V...]  override a scenario parameter; several values sweep it\n"
          "                          (repeatable: --set m=256,512 --set dtype=bf16)\n"
          "      --config FILE       run the suite in an INI file (configs/default.ini, ...);\n"
          "                          options given here override the file's\n"
          "      --list              list scenarios, variants, parameters and metrics, then exit\n"
          "      --dry-run           print the plan (every measurement) and exit, touching no GPU\n"
          "\n"
          "Measurement:\n"
          "      --iters N           iterations per repetition (default: per scenario)\n"
          "      --warmup N          at least N warm-up repetitions per measurement (default 3)\n"
          "      --warmup-time SECONDS  and at least this long (default: 0.3, and longer before\n"
          "                          GPU-bound scenarios so their clocks settle; 0 = off)\n"
          "      --min-reps N        at least N measured repetitions (default 10)\n"
          "      --max-reps N        at most N measured repetitions (default 100000)\n"
          "      --max-time SECONDS  time budget per measurement once min-reps is met (default 2)\n"
          "      --target-cv PERCENT stop when the primary metric's cv is below this (default 1)\n"
          "      --device N          CUDA device ordinal (default 0)\n"
          "\n"
          "Output:\n"
          "      --csv PATH          write the tidy CSV (one row per metric); '-' = stdout, no "
          "table\n"
          "  -q, --quiet             print nothing but errors\n"
          "  -h, --help              this text\n"
          "      --version           version and git revision\n"
          "\n"
          "Exit codes: 0 ok, 1 measurement or validation failed, 2 bad usage or input,\n"
          "3 no usable CUDA device or driver, 130 interrupted.\n",
          f);
}

static int bad_number(const char *opt, const char *val, int rc, const char *range)
{
    if (rc == SB_PARSE_RANGE)
        return sb_fail(SB_EXIT_USAGE, "--%s %s: out of range (%s)", opt, val, range);
    return sb_fail(SB_EXIT_USAGE, "--%s %s: not a number (expected %s)", opt, val, range);
}

static int int_opt(const char *opt, const char *val, long long lo, long long hi, long long *out)
{
    char range[64];
    snprintf(range, sizeof range, "an integer from %lld to %lld", lo, hi);
    long long v;
    int rc = sb_parse_ll(val, &v);
    if (rc == SB_PARSE_OK && (v < lo || v > hi))
        rc = SB_PARSE_RANGE;
    if (rc != SB_PARSE_OK)
        return bad_number(opt, val, rc, range);
    *out = v;
    return 0;
}

static int double_opt(const char *opt, const char *val, double lo, int lo_inclusive, double hi,
                      double *out)
{
    char range[64];
    snprintf(range, sizeof range,
             lo_inclusive ? "a number from %g to %g" : "a number above %g, at most %g", lo, hi);
    double v;
    int rc = sb_parse_double(val, &v);
    if (rc == SB_PARSE_OK && (v < lo || (!lo_inclusive && v == lo) || v > hi))
        rc = SB_PARSE_RANGE;
    if (rc != SB_PARSE_OK)
        return bad_number(opt, val, rc, range);
    *out = v;
    return 0;
}

static int set_opt(sb_options *o, const char *arg)
{
    sb_run_spec *r = &o->run;
    if (r->n_sets == SB_MAX_SETS)
        return sb_fail(SB_EXIT_USAGE, "--set: more than %d given", SB_MAX_SETS);
    char *buf = o->set_buf[r->n_sets];
    if (strlen(arg) >= sizeof o->set_buf[0])
        return sb_fail(SB_EXIT_USAGE, "--set %.40s...: too long", arg);
    strcpy(buf, arg);
    char *eq = strchr(buf, '=');
    if (!eq || eq == buf)
        return sb_fail(SB_EXIT_USAGE, "--set %s: expected KEY=VALUE[,VALUE...]", arg);
    *eq = '\0';
    if (!eq[1])
        return sb_fail(SB_EXIT_USAGE, "--set %s: no value after '='", arg);
    for (int i = 0; i < r->n_sets; i++)
        if (strcmp(r->sets[i].key, buf) == 0)
            return sb_fail(SB_EXIT_USAGE, "--set %s: given twice; use one --set %s=A,B to sweep",
                           buf, buf);
    r->sets[r->n_sets].key = buf;
    r->sets[r->n_sets].value = eq + 1;
    r->sets[r->n_sets].line = 0;
    r->n_sets++;
    return 0;
}

static int list_opt(const char *opt, const char *val)
{
    if (!*val || val[0] == ',' || val[strlen(val) - 1] == ',' || strstr(val, ",,"))
        return sb_fail(SB_EXIT_USAGE, "--%s '%s': empty name in the list", opt, val);
    return 0;
}

/* An output file must be writable before anything is measured: its folder has to exist. */
static int output_opt(const char *opt, const char *path, int allow_stdout)
{
    if (allow_stdout && strcmp(path, "-") == 0)
        return 0;
    if (!*path)
        return sb_fail(SB_EXIT_USAGE, "--%s: empty path", opt);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        dir[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        strcpy(dir, ".");
    struct stat st;
    if (strchr(dir, '{'))
        return sb_fail(SB_EXIT_USAGE, "--%s %s: {gpu} and {date} go in the file name only", opt,
                       path);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return sb_fail(SB_EXIT_USAGE, "--%s %s: folder '%s' does not exist", opt, path, dir);
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return sb_fail(SB_EXIT_USAGE, "--%s %s: is a folder, expected a file path", opt, path);
    return 0;
}

static int unknown_option(const char *arg)
{
    char name[128];
    snprintf(name, sizeof name, "%s", arg);
    char *eq = strchr(name, '=');
    if (eq)
        *eq = '\0';
    const char *bare = name;
    while (*bare == '-')
        bare++;
    const char *hint = sb_suggest(bare, long_opts, sizeof long_opts[0]);
    if (hint)
        return sb_fail(SB_EXIT_USAGE, "unknown option '%s'; did you mean '--%s'?", name, hint);
    return sb_fail(SB_EXIT_USAGE, "unknown option '%s' (see --help)", name);
}

int sb_cli_parse(int argc, char **argv, sb_options *o)
{
    sb_measure_opts *m = &o->run.m;
    long long v;
    int rc = 0;
    opterr = 0;
    optind = 1;
    for (;;) {
        int prev = optind;
        int c = getopt_long(argc, argv, ":s:v:qh", long_opts, NULL);
        if (c == -1)
            break;
        const char *arg = argv[prev];
        switch (c) {
        case 's':
            rc = list_opt("scenario", optarg);
            o->run.scenarios = optarg;
            break;
        case 'v':
            rc = list_opt("variant", optarg);
            o->run.variants = optarg;
            break;
        case OPT_LIST:
            o->list = 1;
            break;
        case OPT_ITERS:
            rc = int_opt("iters", optarg, 1, 100000000, &m->iters);
            o->given |= SB_GIVEN_ITERS;
            break;
        case OPT_WARMUP:
            if (!(rc = int_opt("warmup", optarg, 0, 100000, &v)))
                m->warmup = (int)v;
            o->given |= SB_GIVEN_WARMUP;
            break;
        case OPT_WARMUP_TIME:
            rc = double_opt("warmup-time", optarg, 0, 1, 600, &m->warmup_s);
            o->given |= SB_GIVEN_WARMUP_TIME;
            break;
        case OPT_MIN_REPS:
            if (!(rc = int_opt("min-reps", optarg, 1, 1000000, &v)))
                m->min_reps = (int)v;
            o->given |= SB_GIVEN_MIN_REPS;
            break;
        case OPT_MAX_REPS:
            if (!(rc = int_opt("max-reps", optarg, 1, 1000000, &v)))
                m->max_reps = (int)v;
            o->given |= SB_GIVEN_MAX_REPS;
            break;
        case OPT_MAX_TIME:
            rc = double_opt("max-time", optarg, 0, 0, 3600, &m->max_time_s);
            o->given |= SB_GIVEN_MAX_TIME;
            break;
        case OPT_TARGET_CV:
            rc = double_opt("target-cv", optarg, 0, 0, 100, &m->target_cv);
            o->given |= SB_GIVEN_TARGET_CV;
            break;
        case OPT_SET:
            rc = set_opt(o, optarg);
            break;
        case OPT_DEVICE:
            if (!(rc = int_opt("device", optarg, 0, 1023, &v)))
                o->device = (int)v;
            break;
        case OPT_CSV:
            rc = output_opt("csv", optarg, 1);
            o->csv = optarg;
            break;
        case OPT_JSON:
            rc = output_opt("json", optarg, 0);
            o->json = optarg;
            break;
        case OPT_MARKDOWN:
            rc = output_opt("markdown", optarg, 0);
            o->markdown = optarg;
            break;
        case OPT_CONFIG:
            o->config = optarg;
            break;
        case OPT_DRY_RUN:
            o->dry_run = 1;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'h':
            o->help = 1;
            break;
        case OPT_VERSION:
            o->version = 1;
            break;
        case ':':
            return sb_fail(SB_EXIT_USAGE, "option '%s' needs a value", arg);
        default:
            return unknown_option(arg);
        }
        if (rc)
            return rc;
    }
    if (optind < argc)
        return sb_fail(SB_EXIT_USAGE, "unexpected argument '%s' (see --help)", argv[optind]);
    if (m->min_reps > m->max_reps)
        return sb_fail(SB_EXIT_USAGE, "--min-reps %d is above --max-reps %d", m->min_reps,
                       m->max_reps);
    return 0;
}
