/* The tidy CSV: one row per process x class x range x site x the line inside a library x
 * operation (calls that did not block left out), each with its phase: "run", or "compile" for
 * what torch.compile made while compiling (outside the gate by default). */
#include "report/report.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "analyze/frameworks.h"
#include "base/error.h"
#include "sinks/sink.h"

/* RFC 4180 fields, as the measurement CSV writes them */
#define field sb_csv_write_field

/* A Python frame's columns (file, line, function) and its line's text; empty without one. */
static void frame_fields(FILE *f, const sb_audit_pyframe *py, const char *source)
{
    field(f, py ? py->file : "");
    if (py && py->line > 0)
        fprintf(f, ",%d,", py->line);
    else
        fputs(",,", f);
    field(f, py ? py->func : "");
    fputc(',', f);
    field(f, source);
}

/* ,FIGURE; empty when it is not known (NaN) */
static void known(FILE *f, double v)
{
    if (isnan(v))
        fputc(',', f);
    else
        fprintf(f, ",%.9g", v);
}

/* The row's library line's predicted saving (empty as site_save_us is, and when the site made
 * the calls itself or the line was not played), the framework table's row that names it (its id,
 * empty when none) and the line of the user's code where its fix goes (empty when unknown). */
static void line_fields(FILE *f, const sb_audit_proc_result *res, const sb_audit_row *r)
{
    const char *via = r->made.via_site ? r->made.via_site : "";
    const sb_audit_saving *sv =
        r->made.compile || !via[0] ? NULL : sb_audit_line_saving_of(res, r->site, via);
    known(f, sv && !sb_audit_unmodelled(sv) ? sb_audit_saving_us(sv) : NAN);
    fputc(',', f);
    field(f, r->made.fw ? r->made.fw->id : "");
    fputc(',', f);
    field(f, r->made.fix_at ? r->made.fix_at : "");
    /* the window of GPU activity its bubbles and savings are scaled from; empty: the whole run */
    char window[3 * SB_AUDIT_RANGE_NAME_MAX];
    fputc(',', f);
    field(f, res->proc->kernels ? sb_audit_window_text(res->proc, window, sizeof window) : "");
}

int sb_audit_write_csv(FILE *f, const sb_audit_analysis *an)
{
    fputs("pid,rank,local_rank,group,class,range,site,count,blocked_total_us,blocked_median_us,"
          "blocked_p95_us,bubble_total_us,py_file,py_line,py_function,source,operation,fix,"
          "scenario,native_site,site_save_us,via_file,via_line,via_function,via_source,library,"
          "phase,site_from,waiter_tid,via_save_us,framework,fix_at,gpu_window\n",
          f);
    for (size_t i = 0; i < an->nprocs; i++) {
        const sb_audit_proc_result *res = &an->procs[i];
        const sb_audit_proc *p = res->proc;
        for (size_t k = 0; k < res->nrows; k++) {
            const sb_audit_row *r = &res->rows[k];
            fprintf(f, "%" PRId64 ",%d,%d,%s,%s,", p->pid, p->rank, p->local_rank,
                    sb_audit_group_name(sb_audit_class_group(r->cls)), sb_audit_class_name(r->cls));
            field(f, r->range);
            fputc(',', f);
            field(f, r->site);
            fprintf(f, ",%ld,%.9g,%.9g,%.9g,", r->count, r->blocked_total_us, r->blocked_median_us,
                    r->blocked_p95_us);
            if (p->kernels && !isnan(r->bubble_total_us)) /* empty: not recorded (no
                                                           * --gpu-activity, the GPU window) */
                fprintf(f, "%.9g", r->bubble_total_us);
            /* the Python frame (empty without one), what made it and its fix (empty: unknown) */
            fputc(',', f);
            frame_fields(f, r->pyframe, r->source);
            fputc(',', f);
            field(f, r->made.op ? r->made.op : "unknown");
            fputc(',', f);
            field(f, r->made.fix);
            fputc(',', f);
            field(f, r->rule && r->rule->scenario ? r->rule->scenario : "");
            fputc(',', f);
            field(f, r->native);
            /* the site's predicted saving (all its rows: its classes and ranges); empty when it
             * was not replayed or is unknown (threads not modelled), or for compile time */
            const sb_audit_saving *sv =
                r->made.compile ? NULL
                                : sb_audit_saving_of(res, SB_SAVE_SITE, r->site, SB_AUDIT_NONE);
            known(f, sv && !sb_audit_unmodelled(sv) ? sb_audit_saving_us(sv) : NAN);
            /* the line inside a library that made the calls (empty when the site made them
             * itself) and the library whose code it is (empty when none) */
            fputc(',', f);
            frame_fields(f, r->made.via, r->made.via_source);
            fputc(',', f);
            field(f, r->made.library);
            fprintf(f, ",%s", sb_audit_phase_name(r->made.compile));
            /* whose line the site is: the calling thread's, or the thread's that waited */
            fprintf(f, ",%s,", sb_audit_site_from(r));
            if (r->waiter)
                fprintf(f, "%d", r->waiter);
            line_fields(f, res, r);
            fputc('\n', f);
        }
    }
    return ferror(f) ? sb_fail(SB_EXIT_FAIL, "audit CSV: write error") : 0;
}
