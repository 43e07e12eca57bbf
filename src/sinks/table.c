/* The results table, drawn from the rows alone: one block per scenario in order of
 * appearance; columns scenario, variant, params, then each labelled metric in order of first
 * appearance (its median), the cv of the primary metric, and the flags when any row has some. */
#include "sinks/sink.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/textutil.h"
#include "sinks/grid.h"

#define CELL 256

typedef struct {
    const char *head;
    const char *metric; /* NULL: scenario, variant, params or flags */
    int cv;             /* the primary metric's cv rather than its median */
} column;

static int same_line(const sb_row *a, const sb_row *b)
{
    return !strcmp(a->scenario, b->scenario) && !strcmp(a->variant, b->variant) &&
           !strcmp(a->params, b->params);
}

static void cell_text(char *out, const sb_results *res, const sb_row *r, int c, const column *col)
{
    if (c == 0)
        snprintf(out, CELL, "%s", r->scenario);
    else if (c == 1)
        snprintf(out, CELL, "%s", r->variant);
    else if (c == 2)
        snprintf(out, CELL, "%s", r->params);
    else if (!col->metric)
        snprintf(out, CELL, "%s", r->flags);
    else {
        const sb_row *m = sb_results_find(res, r->scenario, r->variant, r->params, col->metric);
        if (!m)
            snprintf(out, CELL, "-");
        else if (col->cv)
            snprintf(out, CELL, "%.2f", m->st.cv);
        else
            sb_format_figure(m->st.median, out, CELL);
    }
}

/* The block of the scenario of row `first` (its first row). */
static void scenario_block(FILE *f, const sb_results *res, int first, int markdown)
{
    const char *sc = res->rows[first].scenario;
    /* at most 3 + one per row + cv + flags columns */
    column *cols = calloc((size_t)(res->n - first) + 5, sizeof *cols);
    const sb_row **lines = calloc((size_t)(res->n - first), sizeof *lines);
    if (!cols || !lines)
        goto out;
    int nc = 0, nl = 0, any_flags = 0;
    const char *primary = NULL;
    cols[nc++].head = "scenario";
    cols[nc++].head = "variant";
    cols[nc++].head = "params";
    for (int i = first; i < res->n; i++) {
        const sb_row *r = &res->rows[i];
        if (strcmp(r->scenario, sc))
            continue;
        any_flags |= r->flags[0] != '\0';
        if (r->primary && !primary)
            primary = r->metric;
        int seen = 0;
        for (int j = 0; j < nl && !seen; j++)
            seen = same_line(lines[j], r);
        if (!seen)
            lines[nl++] = r;
        if (!r->label[0])
            continue;
        seen = 0;
        for (int c = 3; c < nc && !seen; c++)
            seen = !strcmp(cols[c].metric, r->metric);
        if (!seen)
            cols[nc++] = (column){r->label, r->metric, 0};
    }
    if (primary)
        cols[nc++] = (column){"cv %", primary, 1};
    if (any_flags)
        cols[nc++] = (column){"flags", NULL, 0};

    char(*cells)[CELL] = malloc(sizeof *cells * (size_t)nl * (size_t)nc);
    const char **ptrs = malloc(sizeof *ptrs * (size_t)nl * (size_t)nc);
    const char **heads = malloc(sizeof *heads * (size_t)nc);
    int *right = malloc(sizeof *right * (size_t)nc);
    if (cells && ptrs && heads && right) {
        for (int c = 0; c < nc; c++) {
            heads[c] = cols[c].head;
            right[c] = cols[c].metric != NULL;
        }
        for (int l = 0; l < nl; l++)
            for (int c = 0; c < nc; c++) {
                size_t k = (size_t)l * (size_t)nc + (size_t)c;
                cell_text(cells[k], res, lines[l], c, &cols[c]);
                ptrs[k] = cells[k];
            }
        sb_grid g = {nc, nl, heads, right, ptrs};
        sb_grid_print(f, &g, markdown);
    }
    free(right);
    free(heads);
    free(ptrs);
    free(cells);
out:
    free(lines);
    free(cols);
}

void sb_table_print(FILE *f, const sb_results *res, int markdown)
{
    int blocks = 0;
    for (int i = 0; i < res->n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = !strcmp(res->rows[j].scenario, res->rows[i].scenario);
        if (seen)
            continue;
        if (blocks++)
            fputc('\n', f);
        scenario_block(f, res, i, markdown);
    }
}

/* ---- the table sink: keeps the rows, prints them at end ---- */

int sb_sink_keep_begin(sb_sink *s, const sb_env *env)
{
    (void)env;
    s->state = calloc(1, sizeof(sb_results));
    return s->state ? 0 : sb_fail(SB_EXIT_FAIL, "out of memory");
}

int sb_sink_keep_row(sb_sink *s, const sb_env *env, const sb_row *row)
{
    (void)env;
    sb_row kept = *row;
    kept.samples = NULL; /* valid during this call only */
    kept.n_samples = 0;
    if (sb_results_add(s->state, &kept) != 0)
        return sb_fail(SB_EXIT_FAIL, "out of memory storing results");
    return 0;
}

void sb_sink_keep_destroy(sb_sink *s)
{
    if (s->state)
        sb_results_free(s->state);
    free(s->state);
    s->state = NULL;
}

/* The table sink prints each scenario's block once its rows are in (when a row of another
 * scenario comes, and at the end), flushed: a suite of a minute shows its first table after
 * seconds, on a terminal or through a pipe (make run | tee, a CI log), as hyperfine prints each
 * command's result as it ends. */
typedef struct table_state {
    sb_results res; /* first member: the keep functions' sb_results */
    int printed;    /* rows already printed */
} table_state;

static int table_begin(sb_sink *s, const sb_env *env)
{
    (void)env;
    s->state = calloc(1, sizeof(table_state));
    return s->state ? 0 : sb_fail(SB_EXIT_FAIL, "out of memory");
}

/* Prints the rows kept but not yet printed, up to `upto`, and flushes. */
static void table_flush(sb_sink *s, int upto)
{
    table_state *t = s->state;
    if (upto <= t->printed)
        return;
    sb_results view = {.rows = t->res.rows + t->printed, .n = upto - t->printed};
    if (t->printed)
        fputc('\n', s->out.f);
    sb_table_print(s->out.f, &view, 0);
    fflush(s->out.f);
    t->printed = upto;
}

static int table_row(sb_sink *s, const sb_env *env, const sb_row *row)
{
    table_state *t = s->state;
    int n = t->res.n;
    if (n > t->printed && strcmp(t->res.rows[n - 1].scenario, row->scenario))
        table_flush(s, n);
    return sb_sink_keep_row(s, env, row);
}

static int table_end(sb_sink *s, const sb_env *env)
{
    (void)env;
    table_flush(s, ((table_state *)s->state)->res.n);
    return 0;
}

const sb_sink_ops sb_table_sink = {
    .name = "table",
    .begin = table_begin,
    .row = table_row,
    .destroy = sb_sink_keep_destroy,
    .end = table_end,
};
