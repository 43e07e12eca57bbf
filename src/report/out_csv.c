/* The tidy CSV: one row per process x class x range x site (calls that did not block left out). */
#include "report/report.h"

#include <inttypes.h>
#include <string.h>

#include "base/error.h"
#include "sinks/sink.h"

/* RFC 4180 fields, as the measurement CSV writes them */
#define field sb_csv_write_field

int sb_audit_write_csv(FILE *f, const sb_audit_run *run)
{
    fputs("pid,rank,local_rank,group,class,range,site,count,blocked_total_us,blocked_median_us,"
          "blocked_p95_us,bubble_total_us,py_file,py_line,py_function,source,operation,fix,"
          "scenario,native_site,site_save_us\n",
          f);
    for (size_t i = 0; i < run->nprocs; i++) {
        const sb_audit_proc *p = run->procs[i];
        for (size_t k = 0; k < p->nrows; k++) {
            const sb_audit_row *r = &p->rows[k];
            fprintf(f, "%" PRId64 ",%d,%d,%s,%s,", p->pid, p->rank, p->local_rank,
                    sb_audit_group_name(sb_audit_class_group(r->cls)), sb_audit_class_name(r->cls));
            field(f, r->range);
            fputc(',', f);
            field(f, r->site);
            fprintf(f, ",%ld,%.9g,%.9g,%.9g,", r->count, r->blocked_total_us, r->blocked_median_us,
                    r->blocked_p95_us);
            if (p->kernels) /* empty: not recorded (no --gpu-activity) */
                fprintf(f, "%.9g", r->bubble_total_us);
            /* the Python frame (empty without one), what made it and its fix (empty: unknown) */
            fputc(',', f);
            field(f, r->pyframe ? r->pyframe->file : "");
            if (r->pyframe && r->pyframe->line > 0)
                fprintf(f, ",%d,", r->pyframe->line);
            else
                fputs(",,", f);
            field(f, r->pyframe ? r->pyframe->func : "");
            fputc(',', f);
            field(f, r->source);
            fputc(',', f);
            field(f, r->rule ? r->rule->op : "unknown");
            fputc(',', f);
            field(f, r->rule ? r->rule->fix : "");
            fputc(',', f);
            field(f, r->rule && r->rule->scenario ? r->rule->scenario : "");
            fputc(',', f);
            field(f, r->native);
            /* the site's predicted saving (all its rows: its classes and ranges); empty when it
             * was not replayed or is unknown (threads not modelled) */
            const sb_audit_saving *sv = sb_audit_saving_of(p, SB_SAVE_SITE, r->site, SB_AUDIT_NONE);
            if (sv && !sv->r.threads_unmodelled)
                fprintf(f, ",%.9g", sv->r.wall_us);
            else
                fputc(',', f);
            fputc('\n', f);
        }
    }
    return ferror(f) ? sb_fail(SB_EXIT_FAIL, "audit CSV: write error") : 0;
}
