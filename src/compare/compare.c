#include "compare/compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/textutil.h"
#include "compare/csv_read.h"
#include "compare/match.h"
#include "sinks/grid.h"
#include "sinks/outfile.h"

void sb_compare_request_defaults(sb_compare_request *req)
{
    memset(req, 0, sizeof *req);
    req->opts = (sb_compare_opts){5.0, 3.0, 2.0};
}

/* s with line breaks and other control characters as '?', so that a warning is one line. */
static const char *one_line(const char *s, char *buf, size_t n)
{
    size_t k = 0;
    for (; s[k] && k + 1 < n; k++)
        buf[k] = (unsigned char)s[k] < 0x20 || s[k] == 0x7f ? '?' : s[k];
    buf[k] = '\0';
    return buf;
}

typedef struct {
    const sb_cmp_row *base, *cur;
    sb_verdict v;
    double change, noise;
} line;

enum { NC = 9 };

/* The table's cells, row by row: the key's text is the pool's, figures are formatted into it. */
static const char **table_cells(sb_strpool *pool, const line *l, size_t n)
{
    const char **cells = malloc(sizeof *cells * NC * (n ? n : 1));
    if (!cells)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        const char **c = cells + i * NC;
        const sb_cmp_row *k = l[i].base ? l[i].base : l[i].cur;
        char buf[4][64];
        for (int j = 0; j < 4; j++)
            strcpy(buf[j], "-");
        if (l[i].base)
            sb_format_figure(l[i].base->median, buf[0], sizeof buf[0]);
        if (l[i].cur)
            sb_format_figure(l[i].cur->median, buf[1], sizeof buf[1]);
        if (l[i].base && l[i].cur) {
            if (isfinite(l[i].change))
                snprintf(buf[2], sizeof buf[2], "%+.2f", l[i].change);
            if (l[i].v != SB_NO_BASELINE && !sb_near_zero(l[i].base))
                snprintf(buf[3], sizeof buf[3], "%.2f", l[i].noise);
        }
        c[0] = k->scenario;
        c[1] = k->variant;
        c[2] = k->params;
        c[3] = k->metric;
        for (int j = 0; j < 4; j++) {
            c[4 + j] = strcmp(buf[j], "-") ? sb_strpool_copy(pool, buf[j], strlen(buf[j])) : "-";
            if (!c[4 + j]) {
                free(cells);
                return NULL;
            }
        }
        c[8] = sb_verdict_name(l[i].v);
    }
    return cells;
}

static void print_table(FILE *f, const char **cells, size_t n, int markdown)
{
    static const char *const heads[NC] = {"scenario", "variant",  "params",  "metric", "base",
                                          "current",  "change %", "noise %", "verdict"};
    static const int right[NC] = {0, 0, 0, 0, 1, 1, 1, 1, 0};
    sb_grid g = {NC, (int)n, heads, right, cells};
    sb_grid_print(f, &g, markdown);
}

int sb_compare_run(const sb_compare_request *req)
{
    sb_strpool pool;
    sb_strpool_init(&pool);
    sb_cmp_table base, cur;
    memset(&cur, 0, sizeof cur);
    sb_out_file md;
    memset(&md, 0, sizeof md);
    sb_pair *pairs = NULL;
    line *lines = NULL;
    const char **cells = NULL;
    int rc = sb_csv_read(req->baseline, &pool, &base);
    if (rc) {
        sb_strpool_free(&pool);
        return rc;
    }
    if ((rc = sb_csv_read(req->current, &pool, &cur)) != 0)
        goto out;
    /* one pool: the same text is the same pointer */
    if (base.gpu[0] && cur.gpu[0] && base.gpu != cur.gpu) {
        char a[256], b[256];
        fprintf(stderr,
                "syncbench: compare: warning: baseline is from GPU %s, current from GPU %s\n",
                one_line(base.gpu, a, sizeof a), one_line(cur.gpu, b, sizeof b));
    }
    if (req->markdown &&
        (rc = sb_out_create(&md, "markdown", req->markdown,
                            (const char *const[]){req->baseline, req->current, NULL})) != 0)
        goto out;

    size_t n;
    if (sb_match(&base, &cur, req->metrics, req->n_metrics, &pairs, &n) != 0 ||
        !(lines = calloc(n ? n : 1, sizeof *lines))) {
        rc = sb_fail(SB_EXIT_FAIL, "out of memory");
        goto out;
    }
    if (n == 0) {
        rc = sb_fail(SB_EXIT_USAGE, "compare: no rows with metric%s %s",
                     req->n_metrics > 1 ? "s" : "", req->metric_arg);
        goto out;
    }
    size_t count[SB_VERDICTS] = {0};
    for (size_t i = 0; i < n; i++) {
        line *l = &lines[i];
        l->base = pairs[i].base;
        l->cur = pairs[i].cur;
        if (l->base && l->cur)
            l->v = sb_compare_rows(l->base, l->cur, &req->opts, &l->change, &l->noise);
        else
            l->v = l->base ? SB_MISSING : SB_NEW;
        count[l->v]++;
    }
    free(pairs);
    pairs = NULL;
    const sb_compare_opts *o = &req->opts;
    char summary[512];
    snprintf(summary, sizeof summary,
             "compare: %zu rows: %zu REGRESSION, %zu slower, %zu faster, %zu same, "
             "%zu no-baseline, %zu new, %zu missing "
             "(threshold %g %%, noise %g x cv, run noise %g %%)",
             n, count[SB_REGRESSION], count[SB_SLOWER], count[SB_FASTER], count[SB_SAME],
             count[SB_NO_BASELINE], count[SB_NEW], count[SB_MISSING], o->threshold_pct, o->noise_k,
             o->run_noise_pct);
    if (!req->quiet || md.f) {
        if (!(cells = table_cells(&pool, lines, n))) {
            rc = sb_fail(SB_EXIT_FAIL, "out of memory");
            goto out;
        }
    }
    if (!req->quiet) {
        printf("baseline: %s (%s, %s)\ncurrent:  %s (%s, %s)\n\n", req->baseline, base.gpu,
               base.run_id, req->current, cur.gpu, cur.run_id);
        print_table(stdout, cells, n, 0);
        putchar('\n');
    }
    puts(summary);
    if (md.f) {
        /* Markdown shows regressions in bold */
        for (size_t i = 0; i < n; i++)
            if (lines[i].v == SB_REGRESSION)
                cells[i * NC + 8] = "**REGRESSION**";
        fprintf(md.f, "### syncbench compare\n\nbaseline `%s` (%s), current `%s` (%s)\n\n",
                req->baseline, base.gpu, req->current, cur.gpu);
        print_table(md.f, cells, n, 1);
        fprintf(md.f, "\n%s\n", summary);
        rc = sb_out_commit(&md);
    }
    if (!rc && count[SB_REGRESSION])
        rc = sb_fail(SB_EXIT_FAIL, "compare: %zu regression%s beyond %g %% and the noise",
                     count[SB_REGRESSION], count[SB_REGRESSION] == 1 ? "" : "s", o->threshold_pct);
out:
    sb_out_abort(&md);
    free(cells);
    free(lines);
    free(pairs);
    sb_cmp_table_free(&base);
    sb_cmp_table_free(&cur);
    sb_strpool_free(&pool);
    return rc;
}
