/* The run: its processes, the launcher's facts, and freeing it all. */
#include "model/model.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"

sb_audit_run *sb_audit_run_new(void)
{
    sb_audit_run *r = calloc(1, sizeof *r);
    if (r)
        r->cmd = "";
    return r;
}

void sb_audit_records_span(const sb_audit_run *run, const char **cmd, double *wall_s)
{
    int64_t first = INT64_MAX, last = INT64_MIN;
    *wall_s = 0;
    for (size_t i = 0; i < run->nprocs; i++) {
        const sb_audit_proc *p = run->procs[i];
        if (p->cmd && p->cmd[0] && (!*cmd || !(*cmd)[0]))
            *cmd = p->cmd;
        /* the process's first and last record of any kind (its lifetime: analyze.c) */
        for (size_t k = 0; k < p->ncalls; k++) {
            first = p->calls[k].start < first ? p->calls[k].start : first;
            last = p->calls[k].end > last ? p->calls[k].end : last;
        }
        for (size_t k = 0; k < p->nacts; k++) {
            first = p->acts[k].start < first ? p->acts[k].start : first;
            last = p->acts[k].end > last ? p->acts[k].end : last;
        }
        if (p->clock_ns && p->clock_ns < first)
            first = p->clock_ns;
    }
    if (last > first)
        *wall_s = (double)(last - first) / 1e9;
}

void sb_audit_set_wall(sb_audit_run *run, const char *cmd, double wall_s, int64_t t0_mono_ns)
{
    /* argv may hold any bytes: the reports get valid UTF-8 ("command" in the JSON) */
    char *text = strdup(cmd ? cmd : "");
    const char *c = NULL;
    if (text) {
        sb_utf8_sanitize(text);
        c = sb_audit_intern(&run->strs, text);
        free(text);
    }
    run->cmd = c ? c : "";
    run->wall_s = wall_s;
    run->t0_mono_ns = t0_mono_ns;
}

int sb_audit_nprocs(const sb_audit_run *run)
{
    return run ? (int)run->nprocs : 0;
}

static void free_proc(sb_audit_proc *p)
{
    for (size_t i = 0; i < p->ncalls; i++)
        free(p->calls[i].ranges);
    for (size_t i = 0; i < p->nstacks; i++)
        free(p->stacks[i].frames);
    for (size_t i = 0; i < p->npystacks; i++)
        free(p->pystacks[i].frames);
    free(p->pystacks);
    free(p->calls);
    free(p->ranges);
    free(p->stacks);
    free(p->acts);
    free(p->apis);
    free(p->evrecs);
    free(p->syncrecs);
    free(p->gstreams);
    free(p->pauses);
    free(p->wakes);
    free(p);
}

void sb_audit_free(sb_audit_run *run)
{
    if (!run)
        return;
    for (size_t i = 0; i < run->nprocs; i++)
        free_proc(run->procs[i]);
    free(run->procs);
    sb_strpool_free(&run->strs);
    free(run);
}
