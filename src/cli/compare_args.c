#include "cli/compare_args.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/textutil.h"
#include "cli/args.h"
#include "outputs/formats.h"
#include "sinks/github.h"

#define AT(field) offsetof(sb_compare_request, field)

/* A percentage: "5%" (pytest-benchmark's mean:5%, github-action-benchmark's 200%), or a bare
 * number where it cannot be misread: 0, or 1 and more, in percent. A bare number between 0 and
 * 1 is refused: 0.05 read as a fraction is 5 %, read as a percentage 0.05 %, and taking it as
 * the latter turned two clean runs into REGRESSIONs. 0, or -1 with the reason in err. */
static int percent(const char *text, double *out, char *err, size_t n)
{
    size_t len = strlen(text);
    char num[64];
    int sign = len > 0 && text[len - 1] == '%';
    if (len - sign >= sizeof num) {
        snprintf(err, n, "not a number (expected 5%% or 5, from 0 to 1000000)");
        return -1;
    }
    memcpy(num, text, len - sign);
    num[len - sign] = '\0';
    double v;
    int rc = sb_parse_double(num, &v);
    if (rc == SB_PARSE_OK && (v < 0 || v > 1e6))
        rc = SB_PARSE_RANGE;
    if (rc != SB_PARSE_OK) {
        snprintf(err, n, "%s (expected 5%% or 5, from 0 to 1000000)",
                 rc == SB_PARSE_RANGE ? "out of range" : "not a number");
        return -1;
    }
    if (!sign && v > 0 && v < 1) {
        snprintf(err, n,
                 "ambiguous: a bare number is a percentage, and %s reads as a fraction too; "
                 "did you mean %.15g%%? (write %s%% for %s %%)",
                 num, v * 100, num, num);
        return -1;
    }
    *out = v;
    return 0;
}

static int store_threshold(void *base, const char *text, char *err, size_t n)
{
    sb_compare_request *req = base;
    if (req->threshold_given++) {
        snprintf(err, n, "given twice");
        return -1;
    }
    return percent(text, &req->opts.threshold_pct, err, n);
}

/* --threshold-for METRIC=PCT[,METRIC=PCT...] */
static int store_threshold_for(void *base, const char *text, char *err, size_t n)
{
    sb_compare_request *req = base;
    if (req->n_threshold_for) {
        snprintf(err, n, "given twice; name every metric in one list");
        return -1;
    }
    if (strlen(text) >= sizeof req->threshold_for_buf) {
        snprintf(err, n, "list longer than %zu characters", sizeof req->threshold_for_buf - 1);
        return -1;
    }
    strcpy(req->threshold_for_buf, text);
    char *items[SB_COMPARE_MAX_METRICS];
    int k = sb_split_commas(req->threshold_for_buf, items, SB_COMPARE_MAX_METRICS);
    if (k < 0) {
        snprintf(err, n, "more than %d metrics", SB_COMPARE_MAX_METRICS);
        return -1;
    }
    for (int i = 0; i < k; i++) {
        char *eq = strchr(items[i], '=');
        double v;
        char why[192];
        if (!eq || eq == items[i]) {
            snprintf(err, n, "expected METRIC=PCT (5%% or 5) in '%s'", items[i]);
            return -1;
        }
        if (percent(eq + 1, &v, why, sizeof why)) {
            snprintf(err, n, "%.*s: %s", (int)(eq - items[i]), items[i], why);
            return -1;
        }
        *eq = '\0';
        for (int j = 0; j < i; j++)
            if (!strcmp(req->threshold_for[j], items[i])) {
                snprintf(err, n, "%s given twice", items[i]);
                return -1;
            }
        req->threshold_for[i] = items[i];
        req->threshold_for_pct[i] = v;
    }
    req->n_threshold_for = k;
    return 0;
}

/* Defaults are sb_compare_request_defaults' (compare/compare.c), which the help text repeats. */
/* clang-format off */
static const sb_optdef compare_optdefs[] = {
    {"threshold", 0, NULL, SB_OPT_CUSTOM, "PCT", 0, 0, NULL, 0, store_threshold,
     "Verdicts:",
     "smallest change that counts (default 5%): 5% or 5; a bare\n"
     "number is in percent, and one between 0 and 1 is refused\n"
     "(0.05: write 5% or 0.05%)"},
    {"threshold-for", 0, NULL, SB_OPT_CUSTOM, "METRIC=PCT[,...]", 0, 0, NULL, 0,
     store_threshold_for, NULL,
     "a metric's own threshold, PCT as --threshold's, for metrics\n"
     "that move more between machines (make perf-check: GBps=12)"},
    {"confidence", 0, NULL, SB_OPT_NUMBER, "PCT", 50, 99.9, NULL, AT(confidence_pct), NULL, NULL,
     "confidence of the interval on samples (default 99)"},
    {"noise-k", 0, NULL, SB_OPT_NUMBER, "K", 0, 1e6, NULL, AT(opts.noise_k), NULL, NULL,
     "summary rule: noise band in combined relative stddevs\n(default 3)"},
    {"run-noise", 0, NULL, SB_OPT_NUMBER, "PCT", 0, 1e6, NULL, AT(opts.run_noise_pct), NULL, NULL,
     "summary rule: spread between runs a run's cv cannot see\n(default 2)"},
    {"strict", 0, NULL, SB_OPT_FLAG, NULL, 0, 0, NULL, AT(strict), NULL, NULL,
     "an inconclusive row fails the gate too (exit 1)"},
    {"metric", 0, NULL, SB_OPT_TEXT, "LIST", 0, 0, NULL, AT(metric_arg), NULL, "Rows:",
     "compare only these metrics (comma-separated)"},
    {"subset", 0, NULL, SB_OPT_FLAG, NULL, 0, 0, NULL, AT(subset), NULL, NULL,
     "compare only the rows CURRENT has (a confirmation run):\n"
     "the baseline's other rows are left out, not `missing`"},
    {"base-samples", 0, NULL, SB_OPT_TEXT, "PATH", 0, 0, NULL, AT(base_samples), NULL,
     "Samples:", "the baseline's samples (default: BASELINE.samples.csv\nbeside it, if there)"},
    {"current-samples", 0, NULL, SB_OPT_TEXT, "PATH", 0, 0, NULL, AT(current_samples), NULL,
     NULL, "the current run's samples (default: CURRENT.samples.csv)"},
    {"markdown", 0, NULL, SB_OPT_TEXT, "PATH", 0, 0, NULL, AT(markdown), NULL, "Output:",
     "also write the table as Markdown (CI job summary)"},
    {"verdicts", 0, NULL, SB_OPT_TEXT, "PATH", 0, 0, NULL, AT(verdicts), NULL, NULL,
     "also write every row's verdict as CSV for CI tools: medians,\n"
     "change, interval, threshold, rule, verdict"},
    {"rerun", 0, NULL, SB_OPT_TEXT, "PATH", 0, 0, NULL, AT(rerun), NULL, NULL,
     "write a suite that measures the REGRESSION and inconclusive\n"
     "rows again (syncbench --config PATH); with none, a file\n"
     "holding only a comment"},
    {"rerun-reps", 0, NULL, SB_OPT_INT, "N", 1, 1e6, NULL, AT(rerun_reps), NULL, NULL,
     "min_reps of the --rerun suite (default 30; max_reps 10 N,\nmax_time 3 s)"},
    {"quiet", 'q', NULL, SB_OPT_FLAG, NULL, 0, 0, NULL, AT(quiet), NULL, NULL,
     "print only the summary"},
    {"help", 'h', NULL, SB_OPT_FLAG, NULL, 0, 0, NULL, AT(help), NULL, NULL, "this text"},
    {"junit", 0, NULL, SB_OPT_TEXT, "PATH", 0, 0, NULL, AT(junit), NULL, "CI:",
     "also write the rows as JUnit XML (GitLab, Jenkins,\n"
     "Buildkite): a testcase per row, failed for REGRESSION,\n"
     "skipped with the reason where there is no verdict"},
    SB_CI_OPTDEF(AT(ci), "each REGRESSION (and inconclusive row)"),
    {NULL, 0, NULL, 0, NULL, 0, 0, NULL, 0, NULL, NULL, NULL},
};
/* clang-format on */

const sb_optdef *sb_compare_optdefs(void)
{
    return compare_optdefs;
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
    return 0;
}

/* The files asked for, in the registry's order: each format with a compare writer whose option
 * was given. */
static void list_outputs(sb_compare_request *req)
{
    req->n_outputs = 0;
    for (const sb_output_format *f = sb_output_formats; f->name; f++) {
        const char *path = f->compare ? sb_optdefs_text(compare_optdefs, req, f->option) : NULL;
        if (path && req->n_outputs < SB_COMPARE_MAX_OUTPUTS)
            req->outputs[req->n_outputs++] = (sb_compare_output){f->option, path, f->compare};
    }
}

int sb_compare_parse_args(int argc, char **argv, sb_compare_request *req)
{
    sb_compare_request_defaults(req);
    sb_argtable t = {compare_optdefs, req, NULL};
    int first;
    int rc = sb_args_parse("compare: ", &t, 1, argc, argv, &first);
    if (rc)
        return rc;
    if (req->help)
        return 0;
    if (req->metric_arg && (rc = metric_list(req->metric_arg, req)) != 0)
        return rc;
    if ((rc = sb_ci_check("compare: ", req->ci)) != 0)
        return rc;
    if (argc - first != 2)
        return sb_fail(SB_EXIT_USAGE, "compare: expected BASELINE.csv CURRENT.csv (see compare "
                                      "--help)");
    req->baseline = argv[first];
    req->current = argv[first + 1];
    list_outputs(req);
    return 0;
}

/* --help: the text around the options. */
static const char usage_head[] =
    "usage: syncbench compare BASELINE.csv CURRENT.csv [options]\n"
    "\n"
    "Each file is a run's --csv or --json (told by content; X.json's samples are\n"
    "X.samples.csv, as X.csv's).\n"
    "Matches rows on scenario, variant, params and metric, and gives each a verdict:\n"
    "same, faster, slower, REGRESSION, inconclusive, no-baseline, new, missing.\n"
    "\n"
    "With samples (X.samples.csv beside each X.csv, from syncbench --samples), a row is\n"
    "judged by a bootstrap confidence interval (--confidence) of the relative change of\n"
    "its median: REGRESSION when the interval lies wholly on the worse side and the\n"
    "change is beyond --threshold; same when the interval lies within +-threshold;\n"
    "inconclusive when it reaches past the threshold without excluding zero: too few\n"
    "repetitions or too much spread to tell. inconclusive is never same, and fails the\n"
    "gate only with --strict; measure again with more repetitions for a verdict.\n"
    "Without samples in both runs, the summary rule: a REGRESSION is a change in the\n"
    "worse direction beyond --threshold AND beyond --noise-k x sqrt(cv_base^2 +\n"
    "cv_current^2 + run_noise^2), in percent. The output says which rule it used.\n"
    "A baseline at or near zero (|median| <= its stddev; 0 always is) has no relative\n"
    "change: the row is `same` when the current is at or near zero too, else\n"
    "`no-baseline`, which is counted in the summary and is never a REGRESSION.\n";
static const char usage_tail[] =
    "\n"
    "Inputs: at most 256 MiB and 2 million rows per file, 64 KiB per record, 64 fields;\n"
    "no NUL bytes.\n"
    "Files from different GPUs are compared with a warning on stderr.\n"
    "Exit codes: 0 no regression, 1 regression (or inconclusive with --strict),\n"
    "2 bad input.\n";

void sb_compare_usage(FILE *f)
{
    sb_args_help(f, usage_head, &(sb_argtable){compare_optdefs, NULL, NULL}, 1, usage_tail);
}
