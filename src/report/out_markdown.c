/* --markdown PATH: the audit's report as GitHub-flavoured Markdown, for a pull request or a
 * wiki: the command, then one table of the rows of every process (pid, class, call site,
 * calls, blocked time, what removing the site's syncs would save, the operation, the fix). */
#include "report/report.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/error.h"
#include "sinks/grid.h"

enum { COLS = 8, NUM = 32 };

/* The rows in all, every process's. */
static size_t count_rows(const sb_audit_analysis *an)
{
    size_t n = 0;
    for (size_t i = 0; i < an->nprocs; i++)
        n += an->procs[i].nrows;
    return n;
}

/* The site's predicted saving in ms as text, "-" when it was not replayed or is unknown. */
static void saving_text(const sb_audit_proc_result *res, const sb_audit_row *r, char *buf)
{
    const sb_audit_saving *sv =
        r->made.compile ? NULL : sb_audit_saving_of(res, SB_SAVE_SITE, r->site, SB_AUDIT_NONE);
    if (sv && !sb_audit_unmodelled(sv) && !isnan(sb_audit_saving_us(sv)))
        snprintf(buf, NUM, "%.3f", sb_audit_saving_us(sv) / 1e3);
    else
        snprintf(buf, NUM, "-");
}

/* One row's cells; nums holds its three numbers' text (NUM bytes each) and the pid's. */
static void row_cells(const sb_audit_proc_result *res, const sb_audit_row *r, const char **cells,
                      char (*nums)[NUM])
{
    const sb_audit_proc *p = res->proc;
    snprintf(nums[0], NUM, "%" PRId64, p->pid);
    snprintf(nums[1], NUM, "%ld", r->count);
    snprintf(nums[2], NUM, "%.3f", r->blocked_total_us / 1e3);
    saving_text(res, r, nums[3]);
    const char *row[COLS] = {nums[0],
                             sb_audit_class_name(r->cls),
                             r->site,
                             nums[1],
                             nums[2],
                             nums[3],
                             r->made.op ? r->made.op : "unknown operation",
                             r->made.fix && r->made.fix[0] ? r->made.fix : "-"};
    for (int k = 0; k < COLS; k++)
        cells[k] = row[k];
}

/* Under the table: the processes whose savings come from a window of GPU activity. */
static void window_note(FILE *f, const sb_audit_analysis *an)
{
    char text[3 * SB_AUDIT_RANGE_NAME_MAX];
    for (size_t i = 0; i < an->nprocs; i++) {
        const sb_audit_proc *p = an->procs[i].proc;
        if (!p->windowed || !an->procs[i].nsavings)
            continue;
        fprintf(f, "\npid %" PRId64 ": `saving ms` from the GPU window `", p->pid);
        sb_md_text(f, sb_audit_window_text(p, text, sizeof text));
        fputs("`, scaled to the run by its calls.\n", f);
    }
}

int sb_audit_write_markdown(FILE *f, const sb_audit_analysis *an, const sb_audit_opts *o,
                            const sb_env *env)
{
    const sb_audit_run *run = an->run;
    (void)o, (void)env;
    static const char *const heads[COLS] = {"pid",        "class",     "site",      "calls",
                                            "blocked ms", "saving ms", "operation", "fix"};
    static const int right[COLS] = {1, 0, 0, 1, 1, 1, 0, 0};
    size_t n = count_rows(an), k = 0;
    const char **cells = calloc(n * COLS + 1, sizeof *cells);
    char(*nums)[NUM] = calloc(n * 4 + 1, sizeof *nums);
    if (!cells || !nums) {
        free(cells);
        free(nums);
        return sb_fail(SB_EXIT_FAIL, "out of memory writing the Markdown report");
    }
    for (size_t i = 0; i < an->nprocs; i++)
        for (size_t j = 0; j < an->procs[i].nrows; j++, k++)
            row_cells(&an->procs[i], &an->procs[i].rows[j], cells + k * COLS, nums + k * 4);
    fputs("### syncbench audit\n\n`", f);
    sb_md_text(f, run->cmd[0] ? run->cmd : "(no command recorded)");
    fputs("`\n\n", f);
    if (n) {
        sb_grid g = {COLS, (int)n, heads, right, cells};
        sb_grid_print(f, &g, 1);
        window_note(f, an);
    } else {
        fputs("No blocking calls.\n", f);
    }
    free(cells);
    free(nums);
    return ferror(f) ? sb_fail(SB_EXIT_FAIL, "audit Markdown: write error") : 0;
}
