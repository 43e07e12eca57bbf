#include "compare/compare.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/csv_read.h"
#include "base/error.h"
#include "sinks/grid.h"
#include "sinks/outfile.h"
#include "base/textutil.h"

const char *sb_verdict_name(sb_verdict v)
{
    static const char *const names[] = {"same", "faster", "slower", "REGRESSION", "new", "missing"};
    return names[v];
}

sb_verdict sb_compare_rows(const sb_row *base, const sb_row *cur, const sb_compare_opts *o,
                           double *change_pct, double *noise_pct)
{
    double b = base->st.median, c = cur->st.median;
    double change;
    if (b != 0)
        change = 100.0 * (c - b) / fabs(b);
    else
        change = c == 0 ? 0.0 : (c > 0 ? INFINITY : -INFINITY);
    double noise = o->noise_k * sqrt(base->st.cv * base->st.cv + cur->st.cv * cur->st.cv +
                                     o->run_noise_pct * o->run_noise_pct);
    *change_pct = change;
    *noise_pct = noise;
    if (fabs(change) <= o->threshold_pct)
        return SB_SAME;
    int worse = base->better == SB_HIGHER ? change < 0 : change > 0;
    if (!worse)
        return SB_FASTER;
    return fabs(change) > noise ? SB_REGRESSION : SB_SLOWER;
}

static int metric_selected(const char *list, const char *metric)
{
    return !list || sb_list_contains(list, metric);
}

static const sb_row *find(const sb_results *res, const sb_row *key)
{
    return sb_results_find(res, key->scenario, key->variant, key->params, key->metric);
}

typedef struct {
    const sb_row *base, *cur;
    sb_verdict v;
    double change, noise;
} line;

static void print_lines(FILE *f, const line *l, int n, int markdown)
{
    static const char *const heads[] = {"scenario", "variant",  "params",  "metric", "base",
                                        "current",  "change %", "noise %", "verdict"};
    enum { NC = 9 };
    char(*cells)[NC][256] = calloc((size_t)n + 1, sizeof *cells);
    if (!cells)
        return;
    for (int i = 0; i < n; i++) {
        const sb_row *k = l[i].base ? l[i].base : l[i].cur;
        snprintf(cells[i][0], 256, "%s", k->scenario);
        snprintf(cells[i][1], 256, "%s", k->variant);
        snprintf(cells[i][2], 256, "%s", k->params);
        snprintf(cells[i][3], 256, "%s", k->metric);
        if (l[i].base)
            sb_format_figure(l[i].base->st.median, cells[i][4], 256);
        else
            strcpy(cells[i][4], "-");
        if (l[i].cur)
            sb_format_figure(l[i].cur->st.median, cells[i][5], 256);
        else
            strcpy(cells[i][5], "-");
        if (l[i].base && l[i].cur) {
            snprintf(cells[i][6], 256, "%+.2f", l[i].change);
            snprintf(cells[i][7], 256, "%.2f", l[i].noise);
        } else {
            strcpy(cells[i][6], "-");
            strcpy(cells[i][7], "-");
        }
        /* Markdown shows regressions in bold */
        snprintf(cells[i][8], 256, markdown && l[i].v == SB_REGRESSION ? "**%s**" : "%s",
                 sb_verdict_name(l[i].v));
    }
    static const int right[NC] = {0, 0, 0, 0, 1, 1, 1, 1, 0};
    const char **ptrs = malloc(sizeof *ptrs * (size_t)(n > 0 ? n : 1) * NC);
    if (ptrs) {
        for (int i = 0; i < n; i++)
            for (int c = 0; c < NC; c++)
                ptrs[(size_t)i * NC + c] = cells[i][c];
        sb_grid g = {NC, n, heads, right, ptrs};
        sb_grid_print(f, &g, markdown);
    }
    free(ptrs);
    free(cells);
}

static void usage(FILE *f)
{
    fputs("usage: syncbench compare BASELINE.csv CURRENT.csv [options]\n"
          "\n"
          "Matches rows on scenario, variant, params and metric, and gives each a verdict:\n"
          "same, faster, slower, REGRESSION, new, missing. A REGRESSION is a change in the\n"
          "worse direction beyond --threshold AND beyond the noise of both runs:\n"
          "--noise-k x sqrt(cv_base^2 + cv_current^2 + run_noise^2), in percent.\n"
          "\n"
          "  --threshold PCT   smallest change that counts (default 5)\n"
          "  --noise-k K       noise band in combined relative stddevs (default 3)\n"
          "  --run-noise PCT   spread between runs a run's cv cannot see (default 2)\n"
          "  --metric LIST     compare only these metrics (comma-separated)\n"
          "  --markdown PATH   also write the table as Markdown (CI job summary)\n"
          "  -q, --quiet       print only the summary line\n"
          "\n"
          "Exit codes: 0 no regression, 1 regression, 2 bad input.\n",
          f);
}

int sb_compare_main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"threshold", required_argument, NULL, 't'},
        {"noise-k", required_argument, NULL, 'k'},
        {"metric", required_argument, NULL, 'm'},
        {"markdown", required_argument, NULL, 'M'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    sb_compare_opts o = {5.0, 3.0, 2.0};
    const char *metrics = NULL, *markdown = NULL;
    int quiet = 0;
    opterr = 0;
    optind = 1;
    for (;;) {
        int prev = optind;
        int c = getopt_long(argc, argv, ":qh", opts, NULL);
        if (c == -1)
            break;
        double v;
        switch (c) {
        case 't':
        case 'k':
        case 'r':
            if (sb_parse_double(optarg, &v) != SB_PARSE_OK || v < 0 || v > 1e6)
                return sb_fail(SB_EXIT_USAGE, "compare: %s %s: expected a number from 0 to 1e6",
                               argv[prev], optarg);
            if (c == 't')
                o.threshold_pct = v;
            else if (c == 'k')
                o.noise_k = v;
            else
                o.run_noise_pct = v;
            break;
        case 'm':
            metrics = optarg;
            break;
        case 'M':
            markdown = optarg;
            break;
        case 'q':
            quiet = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case ':':
            return sb_fail(SB_EXIT_USAGE, "compare: option '%s' needs a value", argv[prev]);
        default:
            return sb_fail(SB_EXIT_USAGE, "compare: unknown option '%s' (see compare --help)",
                           argv[prev]);
        }
    }
    if (argc - optind != 2)
        return sb_fail(SB_EXIT_USAGE, "compare: expected BASELINE.csv CURRENT.csv (see compare "
                                      "--help)");
    sb_out_file md;
    memset(&md, 0, sizeof md);
    sb_csv_data base, cur;
    int rc = sb_csv_read(argv[optind], &base);
    if (rc)
        return rc;
    if ((rc = sb_csv_read(argv[optind + 1], &cur)) != 0) {
        sb_csv_data_free(&base);
        return rc;
    }
    if (markdown &&
        (rc = sb_out_create(&md, "markdown", markdown,
                            (const char *const[]){argv[optind], argv[optind + 1], NULL})) != 0)
        goto out;

    line *lines = calloc((size_t)(base.rows.n + cur.rows.n), sizeof *lines);
    if (!lines) {
        rc = sb_fail(SB_EXIT_FAIL, "out of memory");
        goto out;
    }
    int n = 0, count[6] = {0};
    for (int i = 0; i < base.rows.n; i++) {
        const sb_row *b = &base.rows.rows[i];
        if (!metric_selected(metrics, b->metric))
            continue;
        line *l = &lines[n++];
        l->base = b;
        l->cur = find(&cur.rows, b);
        l->v = l->cur ? sb_compare_rows(b, l->cur, &o, &l->change, &l->noise) : SB_MISSING;
        count[l->v]++;
    }
    for (int i = 0; i < cur.rows.n; i++) {
        const sb_row *c = &cur.rows.rows[i];
        if (!metric_selected(metrics, c->metric) || find(&base.rows, c))
            continue;
        lines[n++] = (line){.cur = c, .v = SB_NEW};
        count[SB_NEW]++;
    }
    if (n == 0) {
        free(lines);
        rc = sb_fail(SB_EXIT_USAGE, "compare: no rows with metric%s %s",
                     strchr(metrics, ',') ? "s" : "", metrics);
        goto out;
    }
    char summary[512];
    snprintf(summary, sizeof summary,
             "compare: %d rows: %d REGRESSION, %d slower, %d faster, %d same, %d new, %d missing "
             "(threshold %g %%, noise %g x cv, run noise %g %%)",
             n, count[SB_REGRESSION], count[SB_SLOWER], count[SB_FASTER], count[SB_SAME],
             count[SB_NEW], count[SB_MISSING], o.threshold_pct, o.noise_k, o.run_noise_pct);
    if (!quiet) {
        printf("baseline: %s (%s, %s)\ncurrent:  %s (%s, %s)\n\n", argv[optind], base.gpu,
               base.run_id, argv[optind + 1], cur.gpu, cur.run_id);
        print_lines(stdout, lines, n, 0);
        putchar('\n');
    }
    puts(summary);
    if (md.f) {
        fprintf(md.f, "### syncbench compare\n\nbaseline `%s` (%s), current `%s` (%s)\n\n",
                argv[optind], base.gpu, argv[optind + 1], cur.gpu);
        print_lines(md.f, lines, n, 1);
        fprintf(md.f, "\n%s\n", summary);
        rc = sb_out_commit(&md);
    }
    free(lines);
    if (!rc && count[SB_REGRESSION])
        rc = sb_fail(SB_EXIT_FAIL, "compare: %d regression%s beyond %g %% and the noise",
                     count[SB_REGRESSION], count[SB_REGRESSION] == 1 ? "" : "s", o.threshold_pct);
out:
    sb_out_abort(&md);
    sb_csv_data_free(&base);
    sb_csv_data_free(&cur);
    return rc;
}
