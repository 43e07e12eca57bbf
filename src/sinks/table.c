#include "sinks/sink.h"

#include <stdlib.h>
#include <string.h>

#include "sinks/grid.h"
#include "scenarios/registry.h"
#include "base/textutil.h"

#define MAX_COLS (SB_MAX_METRICS + 4)
#define CELL 256

static int same_line(const sb_row *a, const sb_row *b)
{
    return !strcmp(a->scenario, b->scenario) && !strcmp(a->variant, b->variant) &&
           !strcmp(a->params, b->params);
}

static void scenario_block(FILE *f, const sb_results *res, const sb_scenario *sc, int markdown)
{
    const char *heads[MAX_COLS];
    const char *metric[MAX_COLS];
    int nc = 0;
    heads[nc] = "scenario", metric[nc++] = NULL;
    heads[nc] = "variant", metric[nc++] = NULL;
    heads[nc] = "params", metric[nc++] = NULL;
    for (int i = 0; sc->metrics[i].name; i++)
        if (sc->metrics[i].label)
            heads[nc] = sc->metrics[i].label, metric[nc++] = sc->metrics[i].name;
    heads[nc] = "cv %", metric[nc++] = sc->metrics[0].name;
    int any_flags = 0;
    for (int i = 0; i < res->n; i++)
        any_flags |= !strcmp(res->rows[i].scenario, sc->name) && res->rows[i].flags[0];
    if (any_flags)
        heads[nc] = "flags", metric[nc++] = NULL;

    /* distinct lines (scenario, variant, params) in order of appearance */
    const sb_row **lines = malloc(sizeof *lines * (size_t)res->n);
    char(*cell)[MAX_COLS][CELL] = malloc(sizeof *cell * (size_t)res->n);
    int nl = 0;
    for (int i = 0; lines && cell && i < res->n; i++) {
        const sb_row *r = &res->rows[i];
        if (strcmp(r->scenario, sc->name))
            continue;
        int seen = 0;
        for (int j = 0; j < nl && !seen; j++)
            seen = same_line(lines[j], r);
        if (!seen)
            lines[nl++] = r;
    }
    for (int l = 0; l < nl; l++) {
        const sb_row *r = lines[l];
        for (int c = 0; c < nc; c++) {
            char *out = cell[l][c];
            if (c == 0)
                snprintf(out, CELL, "%s", r->scenario);
            else if (c == 1)
                snprintf(out, CELL, "%s", r->variant);
            else if (c == 2)
                snprintf(out, CELL, "%s", r->params);
            else if (!metric[c])
                snprintf(out, CELL, "%s", r->flags);
            else {
                const sb_row *m =
                    sb_results_find(res, r->scenario, r->variant, r->params, metric[c]);
                if (!m)
                    snprintf(out, CELL, "-");
                else if (!strcmp(heads[c], "cv %"))
                    snprintf(out, CELL, "%.2f", m->st.cv);
                else
                    sb_format_figure(m->st.median, out, CELL);
            }
        }
    }
    const char **ptrs = malloc(sizeof *ptrs * (size_t)(nl ? nl : 1) * (size_t)nc);
    if (nl && ptrs) {
        int right[MAX_COLS];
        for (int c = 0; c < nc; c++)
            right[c] = c >= 3 && metric[c];
        for (int l = 0; l < nl; l++)
            for (int c = 0; c < nc; c++)
                ptrs[(size_t)l * nc + c] = cell[l][c];
        sb_grid g = {nc, nl, heads, right, ptrs};
        sb_grid_print(f, &g, markdown);
    }
    free(ptrs);
    free(lines);
    free(cell);
}

static void blocks(FILE *f, const sb_results *res, int markdown)
{
    int n = 0;
    for (int s = 0; sb_scenarios[s]; s++) {
        int has = 0;
        for (int i = 0; i < res->n && !has; i++)
            has = !strcmp(res->rows[i].scenario, sb_scenarios[s]->name);
        if (!has)
            continue;
        if (n++)
            fputc('\n', f);
        scenario_block(f, res, sb_scenarios[s], markdown);
    }
}

void sb_report_table(FILE *f, const sb_results *res)
{
    blocks(f, res, 0);
}

void sb_report_markdown(FILE *f, const sb_env *env, const sb_results *res)
{
    fprintf(f, "### syncbench on %s\n\n", env->gpu);
    fprintf(f, "driver %s, CUDA %s, host %s, run `%s`\n\n", env->driver, env->cuda_runtime,
            env->host, env->run_id);
    blocks(f, res, 1);
}

int sb_markdown_commit(sb_out_file *o, const sb_env *env, const sb_results *res)
{
    if (!o->f)
        return 0;
    sb_report_markdown(o->f, env, res);
    return sb_out_commit(o, env);
}
