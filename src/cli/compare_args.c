#include "cli/compare_args.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/textutil.h"

void sb_compare_usage(FILE *f)
{
    fputs("usage: syncbench compare BASELINE.csv CURRENT.csv [options]\n"
          "\n"
          "Matches rows on scenario, variant, params and metric, and gives each a verdict:\n"
          "same, faster, slower, REGRESSION, no-baseline, new, missing. A REGRESSION is a\n"
          "change in the worse direction beyond --threshold AND beyond the noise of both\n"
          "runs: --noise-k x sqrt(cv_base^2 + cv_current^2 + run_noise^2), in percent.\n"
          "A baseline at or near zero (|median| <= its stddev; 0 always is) has no relative\n"
          "change: the row is `same` when the current is at or near zero too, else\n"
          "`no-baseline`, which is counted in the summary and is never a REGRESSION.\n"
          "\n"
          "  --threshold PCT   smallest change that counts (default 5)\n"
          "  --noise-k K       noise band in combined relative stddevs (default 3)\n"
          "  --run-noise PCT   spread between runs a run's cv cannot see (default 2)\n"
          "  --metric LIST     compare only these metrics (comma-separated)\n"
          "  --markdown PATH   also write the table as Markdown (CI job summary)\n"
          "  -q, --quiet       print only the summary line\n"
          "\n"
          "Inputs: at most 4 GiB per file, 64 KiB per record, 64 fields; no NUL bytes.\n"
          "Files from different GPUs are compared with a warning on stderr.\n"
          "Exit codes: 0 no regression, 1 regression, 2 bad input.\n",
          f);
}

static int metric_list(const char *arg, sb_compare_request *req)
{
    if (strlen(arg) >= sizeof req->metric_buf)
        return sb_fail(SB_EXIT_USAGE, "compare: --metric: list longer than %zu characters",
                       sizeof req->metric_buf - 1);
    strcpy(req->metric_buf, arg);
    char *items[SB_COMPARE_MAX_METRICS];
    int n = sb_split_commas(req->metric_buf, items, SB_COMPARE_MAX_METRICS);
    if (n < 0)
        return sb_fail(SB_EXIT_USAGE, "compare: --metric: more than %d metrics",
                       SB_COMPARE_MAX_METRICS);
    for (int i = 0; i < n; i++) {
        if (!items[i][0])
            return sb_fail(SB_EXIT_USAGE, "compare: --metric %s: empty metric name", arg);
        req->metrics[i] = items[i];
    }
    req->n_metrics = n;
    req->metric_arg = arg;
    return 0;
}

int sb_compare_parse_args(int argc, char **argv, sb_compare_request *req)
{
    static const struct option opts[] = {
        {"threshold", required_argument, NULL, 't'},
        {"noise-k", required_argument, NULL, 'k'},
        {"run-noise", required_argument, NULL, 'r'},
        {"metric", required_argument, NULL, 'm'},
        {"markdown", required_argument, NULL, 'M'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    sb_compare_request_defaults(req);
    opterr = 0;
    optind = 1;
    for (;;) {
        /* Options are named by their long names, not by argv[optind]: getopt permutes argv, so
         * options after the file names are not where optind was. */
        int li = -1;
        int c = getopt_long(argc, argv, ":qh", opts, &li);
        if (c == -1)
            break;
        double v;
        int rc;
        switch (c) {
        case 't':
        case 'k':
        case 'r':
            if (sb_parse_double(optarg, &v) != SB_PARSE_OK || v < 0 || v > 1e6)
                return sb_fail(SB_EXIT_USAGE, "compare: --%s %s: expected a number from 0 to 1e6",
                               opts[li].name, optarg);
            if (c == 't')
                req->opts.threshold_pct = v;
            else if (c == 'k')
                req->opts.noise_k = v;
            else
                req->opts.run_noise_pct = v;
            break;
        case 'm':
            if ((rc = metric_list(optarg, req)) != 0)
                return rc;
            break;
        case 'M':
            req->markdown = optarg;
            break;
        case 'q':
            req->quiet = 1;
            break;
        case 'h':
            req->help = 1;
            return 0;
        case ':':
            for (const struct option *o = opts; o->name; o++)
                if (o->val == optopt)
                    return sb_fail(SB_EXIT_USAGE, "compare: option '--%s' needs a value", o->name);
            return sb_fail(SB_EXIT_USAGE, "compare: option '%s' needs a value", argv[optind - 1]);
        default:
            if (optopt)
                return sb_fail(SB_EXIT_USAGE, "compare: unknown option '-%c' (see compare --help)",
                               optopt);
            return sb_fail(SB_EXIT_USAGE, "compare: unknown option '%s' (see compare --help)",
                           argv[optind - 1]);
        }
    }
    if (argc - optind != 2)
        return sb_fail(SB_EXIT_USAGE, "compare: expected BASELINE.csv CURRENT.csv (see compare "
                                      "--help)");
    req->baseline = argv[optind];
    req->current = argv[optind + 1];
    return 0;
}

int sb_compare_main(int argc, char **argv)
{
    sb_compare_request req;
    int rc = sb_compare_parse_args(argc, argv, &req);
    if (rc)
        return rc;
    if (req.help) {
        sb_compare_usage(stdout);
        return 0;
    }
    return sb_compare_run(&req);
}
