#include "compare/compare.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/textutil.h"
#include "compare/csv_read.h"
#include "compare/json_read.h"
#include "compare/gate.h"
#include "compare/match.h"
#include "compare/outputs.h"
#include "compare/rerun.h"
#include "sinks/github.h"
#include "sinks/junit.h"
#include "sinks/grid.h"
#include "sinks/outfile.h"
#include "sinks/outset.h"
#include "sinks/sink.h"

void sb_compare_request_defaults(sb_compare_request *req)
{
    memset(req, 0, sizeof *req);
    req->opts = (sb_compare_opts){5.0, 3.0, 2.0};
    req->confidence_pct = 99;
    req->rerun_reps = 30;
}

static const char *one_line(const char *s, char *buf, size_t n)
{
    sb_escape(s, buf, n);
    return buf;
}

typedef sb_cmp_line line;

/* ---- samples ---- */

typedef struct {
    const char *path; /* NULL: none */
    char buf[PATH_MAX];
} samples_file;

/* The samples file of one side: the one given (which must exist), else X.samples.csv beside
 * X.csv when it exists. */
static int find_samples(const char *given, const char *opt, const char *csv, samples_file *s)
{
    struct stat st;
    s->path = NULL;
    if (given) {
        if (stat(given, &st) != 0)
            return sb_fail(SB_EXIT_USAGE, "compare: %s %s: cannot open: %s", opt, given,
                           strerror(errno));
        s->path = given;
        return 0;
    }
    if (sb_samples_path(csv, s->buf, sizeof s->buf) == 0 && stat(s->buf, &st) == 0)
        s->path = s->buf;
    return 0;
}

/* The samples of both runs, used when both have them. A file named by --base-samples or
 * --current-samples is always read and checked, also when the other run has none (a bad file
 * given is an error either way); one found beside its CSV is read only when the other run has
 * samples too. *use_samples: both runs have them. */
static int read_samples(const sb_compare_request *req, sb_strpool *pool, sb_cmp_table *base,
                        sb_cmp_table *cur, samples_file *bs, samples_file *cs, int *use_samples)
{
    int rc;
    *use_samples = 0;
    if ((rc = find_samples(req->base_samples, "--base-samples", req->baseline, bs)) != 0 ||
        (rc = find_samples(req->current_samples, "--current-samples", req->current, cs)) != 0)
        return rc;
    int both = bs->path && cs->path;
    if (bs->path && (both || req->base_samples) &&
        (rc = sb_samples_read(bs->path, req->baseline, pool, base)) != 0)
        return rc;
    if (cs->path && (both || req->current_samples) &&
        (rc = sb_samples_read(cs->path, req->current, pool, cur)) != 0)
        return rc;
    *use_samples = both;
    return 0;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Whether the median of x[0..n) is 0: no relative change to it. -1 when out of memory. */
static int zero_median(const double *x, int n)
{
    double *t = malloc(sizeof *t * (size_t)n);
    if (!t)
        return -1;
    memcpy(t, x, sizeof *t * (size_t)n);
    qsort(t, (size_t)n, sizeof *t, by_value);
    double m = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
    free(t);
    return m == 0;
}

/* The verdict of a row in both files: a baseline at or near zero has no relative change (the
 * summary rule's `same` / `no-baseline`, whichever rule); otherwise the samples' interval when
 * both rows have samples, else the summary rule. 0, or SB_EXIT_FAIL when out of memory. */
static int decide(line *l, const sb_compare_request *req, int use_samples)
{
    const sb_cmp_row *b = l->base, *c = l->cur;
    l->lo = l->hi = NAN;
    sb_compare_opts opts = req->opts;
    opts.threshold_pct = sb_compare_threshold(req, b->metric);
    l->v = sb_compare_rows(b, c, &opts, &l->change, &l->noise);
    l->rule = SB_RULE_SUMMARY;
    if (sb_near_zero(b)) {
        l->rule = SB_RULE_ZERO;
        return 0;
    }
    if (!use_samples || !b->n_samples || !c->n_samples)
        return 0;
    int z = zero_median(b->samples, b->n_samples);
    if (z < 0)
        return sb_fail(SB_EXIT_FAIL, "out of memory");
    if (z) { /* the samples' median is 0 though the row's is not: no relative change either */
        l->rule = SB_RULE_ZERO;
        l->v = sb_near_zero(c) ? SB_SAME : SB_NO_BASELINE;
        l->change = NAN;
        return 0;
    }
    sb_gate_opts o;
    sb_gate_defaults(&o);
    o.threshold_pct = sb_compare_threshold(req, b->metric);
    o.confidence_pct = req->confidence_pct;
    sb_gate_result g;
    if (sb_gate_decide(b->samples, b->n_samples, c->samples, c->n_samples, b->better == SB_HIGHER,
                       &o, &g) != 0)
        return sb_fail(SB_EXIT_FAIL, "out of memory");
    static const sb_verdict from_gate[] = {
        [SB_GATE_SAME] = SB_SAME,
        [SB_GATE_FASTER] = SB_FASTER,
        [SB_GATE_SLOWER] = SB_SLOWER,
        [SB_GATE_REGRESSION] = SB_REGRESSION,
        [SB_GATE_INCONCLUSIVE] = SB_INCONCLUSIVE,
    };
    l->v = from_gate[g.verdict];
    l->rule = SB_RULE_SAMPLES;
    l->change = g.change_pct;
    l->lo = g.lo_pct;
    l->hi = g.hi_pct;
    return 0;
}

/* ---- the table ---- */

enum { MAX_COLS = 10 };

typedef struct {
    int cols;
    const char *heads[MAX_COLS];
    int right[MAX_COLS];
    int noise_col, ci_col; /* -1 when not shown */
    char ci_head[32];
} layout;

/* The columns: the noise band when the summary rule decided a row, the interval when samples
 * did. */
static void make_layout(layout *t, int show_noise, int show_ci, double confidence)
{
    static const char *const keys[] = {"scenario", "variant", "params",  "metric",
                                       "base",     "current", "change %"};
    memset(t, 0, sizeof *t);
    for (int i = 0; i < 7; i++) {
        t->heads[t->cols] = keys[i];
        t->right[t->cols++] = i >= 4;
    }
    t->noise_col = t->ci_col = -1;
    if (show_noise) {
        t->noise_col = t->cols;
        t->heads[t->cols] = "noise %";
        t->right[t->cols++] = 1;
    }
    if (show_ci) {
        snprintf(t->ci_head, sizeof t->ci_head, "%g %% CI", confidence);
        t->ci_col = t->cols;
        t->heads[t->cols] = t->ci_head;
        t->right[t->cols++] = 1;
    }
    t->heads[t->cols] = "verdict";
    t->right[t->cols++] = 0;
}

/* The table's cells, row by row: the key's text is the pool's, figures are formatted into it. */
static const char **table_cells(sb_strpool *pool, const layout *t, const line *l, size_t n)
{
    const int nc = t->cols;
    const char **cells = malloc(sizeof *cells * (size_t)nc * (n ? n : 1));
    if (!cells)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        const char **c = cells + i * (size_t)nc;
        const sb_cmp_row *k = l[i].base ? l[i].base : l[i].cur;
        c[0] = k->scenario;
        c[1] = k->variant;
        c[2] = k->params;
        c[3] = k->metric;
        char buf[MAX_COLS][64];
        for (int j = 4; j < nc - 1; j++)
            strcpy(buf[j], "-");
        if (l[i].base)
            sb_format_figure(l[i].base->median, buf[4], sizeof buf[4]);
        if (l[i].cur)
            sb_format_figure(l[i].cur->median, buf[5], sizeof buf[5]);
        if (l[i].base && l[i].cur) {
            if (isfinite(l[i].change))
                snprintf(buf[6], sizeof buf[6], "%+.2f", l[i].change);
            if (t->noise_col >= 0 && l[i].rule == SB_RULE_SUMMARY)
                snprintf(buf[t->noise_col], sizeof buf[0], "%.2f", l[i].noise);
            if (t->ci_col >= 0 && l[i].rule == SB_RULE_SAMPLES)
                snprintf(buf[t->ci_col], sizeof buf[0], "[%+.2f,%+.2f]", l[i].lo, l[i].hi);
        }
        for (int j = 4; j < nc - 1; j++) {
            c[j] = strcmp(buf[j], "-") ? sb_strpool_copy(pool, buf[j], strlen(buf[j])) : "-";
            if (!c[j]) {
                free(cells);
                return NULL;
            }
        }
        c[nc - 1] = sb_verdict_name(l[i].v);
    }
    return cells;
}

static void print_table(FILE *f, const layout *t, const char **cells, size_t n, int markdown)
{
    sb_grid g = {t->cols, (int)n, t->heads, t->right, cells};
    sb_grid_print(f, &g, markdown);
}

/* ---- the run ---- */

/* --threshold-for METRIC=PCT naming a metric that neither file has is a typo, not a no-op (a
 * metric left out by --metric or --subset is fine: perf-check names its thresholds once). */
static int check_thresholds_used(const sb_compare_request *req, const sb_cmp_table *a,
                                 const sb_cmp_table *b)
{
    for (int k = 0; k < req->n_threshold_for; k++) {
        int found = 0;
        for (size_t i = 0; i < a->n && !found; i++)
            found = !strcmp(a->rows[i].metric, req->threshold_for[k]);
        for (size_t i = 0; i < b->n && !found; i++)
            found = !strcmp(b->rows[i].metric, req->threshold_for[k]);
        if (!found)
            return sb_fail(SB_EXIT_USAGE, "compare: --threshold-for %s: neither file has metric %s",
                           req->threshold_for[k], req->threshold_for[k]);
    }
    return 0;
}

/* --verdicts PATH: one CSV row per compared row, for CI tools (RFC 4180, as the run CSVs). */
static int write_verdicts(FILE *f, const sb_compare_request *req, const line *l, size_t n)
{
    fputs("scenario,variant,params,metric,unit,better,baseline,current,change_pct,ci_lo_pct,"
          "ci_hi_pct,threshold_pct,rule,verdict\n",
          f);
    static const char *const rules[] = {[SB_RULE_NONE] = "none",
                                        [SB_RULE_SUMMARY] = "summary",
                                        [SB_RULE_SAMPLES] = "samples",
                                        [SB_RULE_ZERO] = "zero-baseline"};
    for (size_t i = 0; i < n; i++) {
        const sb_cmp_row *r = l[i].base ? l[i].base : l[i].cur;
        const char *text[] = {r->scenario, r->variant, r->params, r->metric, r->unit};
        for (size_t k = 0; k < sizeof text / sizeof text[0]; k++) {
            sb_csv_write_field(f, text[k]);
            fputc(',', f);
        }
        fprintf(f, "%s,", r->better == SB_HIGHER ? "higher" : "lower");
        const double v[] = {l[i].base ? l[i].base->median : NAN, l[i].cur ? l[i].cur->median : NAN,
                            l[i].change, l[i].lo, l[i].hi};
        for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
            if (isfinite(v[k]))
                fprintf(f, "%.9g,", v[k]);
            else
                fputc(',', f); /* empty: none (a new or missing row, no interval) */
        fprintf(f, "%g,%s,%s\n", sb_compare_threshold(req, r->metric), rules[l[i].rule],
                sb_verdict_name(l[i].v));
    }
    return ferror(f) ? sb_fail(SB_EXIT_FAIL, "compare: --verdicts: write error") : 0;
}

/* The confirmation suite for the REGRESSION and inconclusive rows, into memory: built before
 * any output is opened, so that a row a suite cannot hold leaves no file behind. */
static int build_rerun(const sb_compare_request *req, const line *l, size_t n, char **text,
                       size_t *len, int *sections)
{
    sb_rerun_item *items = malloc(sizeof *items * (n ? n : 1));
    sb_memtext m;
    FILE *f = items ? sb_memtext_open(&m) : NULL;
    if (!f) {
        free(items);
        return sb_fail(SB_EXIT_FAIL, "out of memory");
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (l[i].v == SB_REGRESSION || l[i].v == SB_INCONCLUSIVE)
            items[k++] = (sb_rerun_item){l[i].cur, l[i].v, l[i].change};
    sb_rerun_opts o = {req->rerun_reps, req->baseline, req->current};
    int rc = sb_rerun_write(f, items, k, &o, sections);
    free(items);
    *text = sb_memtext_close(&m);
    *len = m.len;
    if (!rc && !*text)
        rc = sb_fail(SB_EXIT_FAIL, "out of memory");
    return rc;
}

/* One comparison: its inputs, outputs and verdicts (zeroed: nothing held yet). */
typedef struct sb_compare_result {
    const sb_compare_request *req;
    sb_strpool pool; /* one pool for both files: the same text is the same pointer */
    sb_cmp_table base, cur;
    samples_file bs, cs;
    int use_samples;                         /* both runs have samples */
    sb_out_file out[SB_COMPARE_MAX_OUTPUTS]; /* req->outputs' files, in their order */
    char *rerun_text; /* --rerun's suite, built before the outputs are opened */
    size_t rerun_len;
    int rerun_sections;
    int github; /* --ci github, or GitHub Actions: annotations and the step summary */
    line *lines;
    size_t n, left_out; /* rows compared; baseline rows --subset left out */
    size_t count[SB_VERDICTS];
    size_t by_samples, by_summary; /* rows the samples decided, rows the summary rule did */
    layout t;
    const char **cells;
    char rule[PATH_MAX * 2 + 256], rule_short[512]; /* which rule: before the table, summary */
    char summary[1024], advice[512];
} comparison;

static void comparison_free(comparison *c)
{
    for (int i = 0; i < c->req->n_outputs; i++)
        sb_out_abort(&c->out[i]);
    free(c->cells);
    free(c->rerun_text);
    free(c->lines);
    sb_cmp_table_free(&c->base);
    sb_cmp_table_free(&c->cur);
    sb_strpool_free(&c->pool);
}

/* The two CSVs, a warning when they come from different GPUs, and their samples. */
static int read_inputs(comparison *c)
{
    const sb_compare_request *req = c->req;
    int rc;
    if ((rc = sb_run_read(req->baseline, &c->pool, &c->base)) != 0 ||
        (rc = sb_run_read(req->current, &c->pool, &c->cur)) != 0)
        return rc;
    const char *bg = c->base.gpu, *cg = c->cur.gpu;
    if (bg[0] && cg[0] && bg != cg) { /* one pool: the same text is the same pointer */
        char a[256], b[256];
        fprintf(stderr,
                "syncbench: compare: warning: baseline is from GPU %s, current from GPU %s\n",
                one_line(bg, a, sizeof a), one_line(cg, b, sizeof b));
    }
    if ((rc = check_thresholds_used(req, &c->base, &c->cur)) != 0)
        return rc;
    return read_samples(req, &c->pool, &c->base, &c->cur, &c->bs, &c->cs, &c->use_samples);
}

/* The outputs (req->outputs, in the registry's order) are checked now and created once the
 * verdicts are in: a signal during the bootstrap leaves no empty PATH.partial behind. None may
 * be an input or another output (sinks/outset.h), nor may $GITHUB_STEP_SUMMARY under --ci
 * github. */
static int prepare_outputs(comparison *c)
{
    const sb_compare_request *req = c->req;
    const char *inputs[] = {req->baseline, req->current, c->bs.path ? c->bs.path : c->cs.path,
                            c->bs.path ? c->cs.path : NULL, NULL};
    sb_outset_rules r = {"compare: ", SB_CLASH_SAME_AS, inputs};
    sb_out_file *earlier[SB_COMPARE_MAX_OUTPUTS];
    int rc;
    for (int i = 0; i < req->n_outputs; i++) {
        const sb_compare_output *o = &req->outputs[i];
        if ((rc = sb_outset_add(&c->out[i], o->opt, o->path, &r, earlier, (size_t)i)) != 0)
            return rc;
        earlier[i] = &c->out[i];
    }
    sb_out_file summary;
    if (sb_ci_github(req->ci))
        return sb_outset_add_summary(&summary, &r, earlier, (size_t)req->n_outputs);
    return 0;
}

static int open_outputs(comparison *c)
{
    int rc;
    for (int i = 0; i < c->req->n_outputs; i++)
        if ((rc = sb_out_open(&c->out[i], NULL)) != 0)
            return rc;
    return 0;
}

/* The rows to compare, paired by key: c->lines[0..c->n) with their base and cur set. */
static int match_rows(comparison *c)
{
    const sb_compare_request *req = c->req;
    sb_pair *pairs = NULL;
    size_t n;
    if (sb_match(&c->base, &c->cur, req->metrics, req->n_metrics, &pairs, &n) != 0 ||
        !(c->lines = calloc(n ? n : 1, sizeof *c->lines))) {
        free(pairs);
        return sb_fail(SB_EXIT_FAIL, "out of memory");
    }
    long clash = sb_match_unit_clash(pairs, n);
    if (clash >= 0) {
        const sb_cmp_row *b = pairs[clash].base, *k = pairs[clash].cur;
        int rc = sb_fail(SB_EXIT_USAGE,
                         "compare: %s %s %s %s: unit '%s' in %s:%ld, '%s' in %s:%ld: rows in "
                         "different units are not compared",
                         b->scenario, b->variant, b->params, b->metric, b->unit, req->baseline,
                         b->line, k->unit, req->current, k->line);
        free(pairs);
        return rc;
    }
    if (req->subset) { /* only the rows CURRENT has: a confirmation run re-measures a few */
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (pairs[i].cur)
                pairs[k++] = pairs[i];
        c->left_out = n - k;
        n = k;
    }
    for (size_t i = 0; i < n; i++) {
        c->lines[i].base = pairs[i].base;
        c->lines[i].cur = pairs[i].cur;
    }
    free(pairs);
    c->n = n;
    if (n > 0)
        return 0;
    if (req->n_metrics)
        return sb_fail(SB_EXIT_USAGE, "compare: no rows with metric%s %s",
                       req->n_metrics > 1 ? "s" : "", req->metric_arg);
    return sb_fail(SB_EXIT_USAGE, "compare: no rows to compare");
}

/* Each row's verdict, counted by verdict and by the rule that gave it. */
static int decide_rows(comparison *c)
{
    int rc;
    for (size_t i = 0; i < c->n; i++) {
        line *l = &c->lines[i];
        if (l->base && l->cur) {
            if ((rc = decide(l, c->req, c->use_samples)) != 0)
                return rc;
            c->by_samples += l->rule == SB_RULE_SAMPLES;
            c->by_summary += l->rule == SB_RULE_SUMMARY;
        } else {
            l->v = l->base ? SB_MISSING : SB_NEW;
            l->rule = SB_RULE_NONE;
        }
        c->count[l->v]++;
    }
    return 0;
}

/* Which rule, with samples in both runs: the interval, and the summary rule for the rows
 * without samples in both files. */
static void describe_samples_rule(comparison *c)
{
    const sb_compare_opts *o = &c->req->opts;
    char a[PATH_MAX], b[PATH_MAX];
    snprintf(c->rule_short, sizeof c->rule_short,
             "statistics: bootstrap CI of the change of medians on samples (%g %%)",
             c->req->confidence_pct);
    if (c->by_summary) {
        size_t used = strlen(c->rule_short);
        snprintf(c->rule_short + used, sizeof c->rule_short - used,
                 "; summary rule for %zu row%s without samples in both files (noise %g x "
                 "cv, run noise %g %%)",
                 c->by_summary, c->by_summary == 1 ? "" : "s", o->noise_k, o->run_noise_pct);
    }
    snprintf(c->rule, sizeof c->rule, "%s: %s, %s", c->rule_short,
             one_line(c->bs.path, a, sizeof a), one_line(c->cs.path, b, sizeof b));
}

/* Which rule, without samples in both runs: the summary rule, naming the samples files looked
 * for and not found (a file given must exist). */
static void describe_summary_rule(comparison *c)
{
    const sb_compare_opts *o = &c->req->opts;
    char missing[PATH_MAX * 2 + 8] = "";
    const char *csvs[2] = {c->bs.path ? NULL : c->req->baseline,
                           c->cs.path ? NULL : c->req->current};
    for (int k = 0; k < 2; k++) {
        char want[PATH_MAX], shown[PATH_MAX];
        if (!csvs[k] || sb_samples_path(csvs[k], want, sizeof want) != 0)
            continue;
        size_t used = strlen(missing);
        snprintf(missing + used, sizeof missing - used, "%s%s", used ? ", " : "",
                 one_line(want, shown, sizeof shown));
    }
    snprintf(c->rule, sizeof c->rule, "summary rule: samples not found (%s)", missing);
    snprintf(c->rule_short, sizeof c->rule_short,
             "noise %g x cv, run noise %g %%; summary rule: samples not found (%.300s)", o->noise_k,
             o->run_noise_pct, missing);
}

/* The summary line (the counts by verdict, the rule) and the advice on inconclusive rows. */
static void describe_counts(comparison *c)
{
    const sb_compare_request *req = c->req;
    const size_t *count = c->count;
    char subset_note[96] = "";
    if (req->subset)
        snprintf(subset_note, sizeof subset_note,
                 "; --subset: %zu baseline row%s not in CURRENT left out", c->left_out,
                 c->left_out == 1 ? "" : "s");
    snprintf(c->summary, sizeof c->summary,
             "compare: %zu rows: %zu REGRESSION, %zu slower, %zu faster, %zu same, "
             "%zu no-baseline, %zu new, %zu missing, %zu inconclusive (threshold %g %%%s%s%s)",
             c->n, count[SB_REGRESSION], count[SB_SLOWER], count[SB_FASTER], count[SB_SAME],
             count[SB_NO_BASELINE], count[SB_NEW], count[SB_MISSING], count[SB_INCONCLUSIVE],
             req->opts.threshold_pct, c->use_samples ? "; " : ", ", c->rule_short, subset_note);
    if (count[SB_INCONCLUSIVE])
        snprintf(c->advice, sizeof c->advice,
                 "compare: %zu inconclusive: the samples neither show nor exclude a change of "
                 "%g %%; for a verdict measure again with more repetitions (syncbench "
                 "--min-reps %lld; make perf-check re-measures them; compare --rerun PATH "
                 "writes the suite)%s",
                 count[SB_INCONCLUSIVE], req->opts.threshold_pct, req->rerun_reps,
                 req->strict ? "; --strict: they fail the gate"
                             : "; they fail the gate only with --strict");
}

/* The table on stdout (unless --quiet), then the summary and the advice. */
static void print_report(comparison *c, FILE *f)
{
    const sb_compare_request *req = c->req;
    if (!req->quiet) {
        /* file names and the CSVs' own text, escaped: they came from outside */
        const char *parts[] = {
            "baseline: ",   req->baseline,   " (",         c->base.gpu, ", ",
            c->base.run_id, ")\ncurrent:  ", req->current, " (",        c->cur.gpu,
            ", ",           c->cur.run_id,   ")\n"};
        for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
            if (i % 2)
                sb_fputs_escaped(f, parts[i]);
            else
                fputs(parts[i], f);
        fprintf(f, "%s\n\n", c->rule);
        print_table(f, &c->t, c->cells, c->n, 0);
        fputc('\n', f);
    }
    fprintf(f, "%s\n", c->summary);
    if (c->advice[0])
        fprintf(f, "%s\n", c->advice);
}

/* The Markdown report of --markdown and of the step summary: the table (regressions in bold),
 * the summary and the advice. */
static void markdown_report(comparison *c, FILE *f)
{
    const sb_compare_request *req = c->req;
    const size_t cols = (size_t)c->t.cols;
    for (size_t i = 0; i < c->n; i++)
        if (c->lines[i].v == SB_REGRESSION)
            c->cells[i * cols + cols - 1] = "**REGRESSION**";
    fputs("### syncbench compare\n\nbaseline `", f);
    sb_md_text(f, req->baseline);
    fputs("` (", f);
    sb_md_text(f, c->base.gpu);
    fputs("), current `", f);
    sb_md_text(f, req->current);
    fputs("` (", f);
    sb_md_text(f, c->cur.gpu);
    fprintf(f, ")\n\n%s\n\n", c->rule);
    print_table(f, &c->t, c->cells, c->n, 1);
    fprintf(f, "\n%s\n", c->summary);
    if (c->advice[0])
        fprintf(f, "\n%s\n", c->advice);
}

/* GitHub Actions: the verdicts' annotations after the table on stdout, the Markdown report
 * appended to the step summary, both by the one GitHub writer. */
static int report_github(comparison *c)
{
    sb_ci_verdicts l;
    int rc = sb_compare_verdicts(c->req, c->lines, c->n, c->rule, &l);
    if (rc)
        return rc;
    sb_memtext m;
    char *md = NULL;
    if (sb_memtext_open(&m)) {
        markdown_report(c, m.f);
        md = sb_memtext_close(&m);
    }
    rc = md ? sb_gh_write(stdout, &l, md, m.len) : sb_fail(SB_EXIT_FAIL, "compare: out of memory");
    free(md);
    sb_ci_verdicts_free(&l);
    return rc;
}

/* Where a writer prints to stdout: under GitHub, through the guard (sinks/github.h), so that no
 * name from the CSVs begins a line GitHub would run as a command. *f: stdout itself, or a
 * guard the caller closes with unguard(). 0, or exit 1 out of memory. */
static int guarded(const comparison *c, FILE *to, FILE **f)
{
    *f = c->github ? sb_gh_guard(to) : to;
    return *f ? 0 : sb_fail(SB_EXIT_FAIL, "compare: out of memory");
}

static int unguard(FILE *f, FILE *to, int rc)
{
    if (f != to && fclose(f) != 0 && !rc)
        rc = sb_fail(SB_EXIT_FAIL, "compare: writing to stdout failed");
    return rc;
}

/* --junit: the report, committed. A write that failed inside the writer is named by the
 * commit, with the path and the reason (a full disk), not as a bare write error. */
/* The table, the summary and the files asked for. */
static int write_outputs(comparison *c)
{
    const sb_compare_request *req = c->req;
    make_layout(&c->t, !c->use_samples || c->by_summary, c->by_samples, req->confidence_pct);
    if (!(c->cells = table_cells(&c->pool, &c->t, c->lines, c->n)))
        return sb_fail(SB_EXIT_FAIL, "out of memory");
    FILE *f;
    int rc = guarded(c, stdout, &f);
    if (rc)
        return rc;
    print_report(c, f);
    if ((rc = unguard(f, stdout, 0)) != 0)
        return rc;
    for (int i = 0; i < req->n_outputs; i++) {
        FILE *to = c->out[i].f;
        f = to;
        if (c->out[i].to_stdout && (rc = guarded(c, to, &f)) != 0)
            return rc;
        rc = unguard(f, to, req->outputs[i].write(f, c));
        if (rc || (rc = sb_out_commit(&c->out[i])) != 0)
            return rc;
    }
    return c->github ? report_github(c) : 0;
}

/* ---- the writers of the output registry (outputs/formats.h) ---- */

int sb_compare_out_markdown(FILE *f, sb_compare_result *c)
{
    markdown_report(c, f);
    return 0;
}

int sb_compare_out_verdicts(FILE *f, sb_compare_result *c)
{
    return write_verdicts(f, c->req, c->lines, c->n);
}

int sb_compare_out_rerun(FILE *f, sb_compare_result *c)
{
    int sections = c->rerun_sections; /* built before any output was opened */
    fwrite(c->rerun_text, 1, c->rerun_len, f);
    if (!c->req->quiet)
        printf("rerun: %d measurement%s to confirm in %s\n", sections, sections == 1 ? "" : "s",
               c->req->rerun);
    return 0;
}

int sb_compare_out_junit(FILE *f, sb_compare_result *c)
{
    sb_ci_verdicts l;
    int rc = sb_compare_verdicts(c->req, c->lines, c->n, c->rule, &l);
    if (!rc) {
        rc = sb_junit_write(f, &l);
        sb_ci_verdicts_free(&l);
        if (rc == SB_EXIT_FAIL && ferror(f)) { /* the commit names the path and the reason */
            sb_error_clear();
            rc = 0;
        }
    }
    return rc;
}

/* The gate: exit 1 on a regression, and with --strict on an inconclusive row; also when no
 * row is in both files: a gate that judged nothing has not passed. */
static int gate(const comparison *c)
{
    const sb_compare_request *req = c->req;
    double pct = req->opts.threshold_pct;
    size_t judged = c->n - c->count[SB_NEW] - c->count[SB_MISSING];
    if (judged == 0)
        return sb_fail(SB_EXIT_FAIL,
                       "compare: no row in both files to judge (%zu missing, %zu new): the "
                       "gate cannot pass on nothing",
                       c->count[SB_MISSING], c->count[SB_NEW]);
    size_t fails = c->count[SB_REGRESSION], unsure = req->strict ? c->count[SB_INCONCLUSIVE] : 0;
    if (fails && unsure)
        return sb_fail(SB_EXIT_FAIL,
                       "compare: %zu regression%s beyond %g %% and the noise, %zu inconclusive "
                       "(--strict)",
                       fails, fails == 1 ? "" : "s", pct, unsure);
    if (fails)
        return sb_fail(SB_EXIT_FAIL, "compare: %zu regression%s beyond %g %% and the noise", fails,
                       fails == 1 ? "" : "s", pct);
    if (unsure)
        return sb_fail(SB_EXIT_FAIL, "compare: %zu inconclusive row%s (--strict)", unsure,
                       unsure == 1 ? "" : "s");
    return 0;
}

int sb_compare_run(const sb_compare_request *req)
{
    comparison c;
    memset(&c, 0, sizeof c);
    c.req = req;
    c.github = sb_ci_github(req->ci);
    sb_strpool_init(&c.pool);
    int rc;
    if ((rc = read_inputs(&c)) == 0 && (rc = prepare_outputs(&c)) == 0 &&
        (rc = match_rows(&c)) == 0 && (rc = decide_rows(&c)) == 0 &&
        (!req->rerun || (rc = build_rerun(req, c.lines, c.n, &c.rerun_text, &c.rerun_len,
                                          &c.rerun_sections)) == 0) &&
        (rc = open_outputs(&c)) == 0) {
        if (c.use_samples)
            describe_samples_rule(&c);
        else
            describe_summary_rule(&c);
        describe_counts(&c);
        if ((rc = write_outputs(&c)) == 0)
            rc = gate(&c);
    }
    comparison_free(&c);
    return rc;
}
