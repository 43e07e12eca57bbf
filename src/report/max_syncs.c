/* --max-syncs: blocking calls in the whole run, or in each instance of --range NAME. A range
 * that was never entered fails the gate: a gate that checks nothing must not pass. */
#include "report/report.h"
#include "report/save_text.h"
#include "base/arrays.h"
#include "base/error.h"

#include "base/textutil.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* msg NULL: the verdict only (the JSON report's). */
__attribute__((format(printf, 2, 3))) static void say(FILE *msg, const char *fmt, ...)
{
    if (!msg)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(msg, fmt, ap);
    va_end(ap);
}

typedef sb_audit_offender offender;

static int cmp_offender(const void *a, const void *b)
{
    const offender *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    int r = strcmp(x->site, y->site);
    if (r || (r = strcmp(x->via, y->via)))
        return r;
    return (int)x->cls - (int)y->cls;
}

typedef struct {
    offender *o;
    size_t n, cap;
} offenders;

static int add(offenders *s, const char *site, sb_audit_class cls, long count,
               const sb_audit_rule *rule, const sb_audit_pyframe *py, const sb_audit_made *made)
{
    if (sb_grow(&s->o, &s->cap, s->n, sizeof *s->o) < 0)
        return -1;
    s->o[s->n++] = (offender){site, made->via_site, cls, count, rule, py, made, NULL};
    return 0;
}

/* Sites and lines are interned (one pointer per text): sorted by (site, via, class, compile
 * time), the entries of one offender are neighbours. */
static int cmp_key(const void *a, const void *b)
{
    const offender *x = a, *y = b;
    if (x->made->compile != y->made->compile)
        return x->made->compile - y->made->compile;
    uintptr_t p = (uintptr_t)x->site, q = (uintptr_t)y->site;
    if (p != q)
        return p < q ? -1 : 1;
    p = (uintptr_t)x->via, q = (uintptr_t)y->via;
    if (p != q)
        return p < q ? -1 : 1;
    return (int)x->cls - (int)y->cls;
}

/* One entry per (site, via, class), the counts summed, most calls first: n log n in the
 * entries. */
static void merge(offenders *s)
{
    sb_sort(s->o, s->n, sizeof *s->o, cmp_key);
    size_t m = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (m && cmp_key(&s->o[m - 1], &s->o[i]) == 0)
            s->o[m - 1].count += s->o[i].count;
        else
            s->o[m++] = s->o[i];
    }
    s->n = m;
    sb_sort(s->o, s->n, sizeof *s->o, cmp_offender);
}

/* What removing an offender's library line alone saves, when it was played: " (removing the
 * line saves X ms)", or "" */
static const char *line_saving(const sb_audit_analysis *an, const offender *o, char *buf, size_t n)
{
    char ms[32];
    /* the replay removes no compile-time call: none played it */
    sb_audit_run_save rs =
        o->made->compile ? (sb_audit_run_save){0} : sb_audit_run_line_saving(an, o->site, o->via);
    sb_audit_save_text(rs, ms, sizeof ms);
    if (!strcmp(ms, SB_AUDIT_UNMODELLED))
        snprintf(buf, n, " (removing the line saves: unknown (%s))", sb_audit_unmodelled_why(rs));
    else if (*ms)
        snprintf(buf, n, " (removing the line saves %s ms)", ms);
    else
        buf[0] = 0;
    return buf;
}

static void print_top(FILE *msg, const sb_audit_analysis *an, const offenders *s, int top)
{
    if (!s->n || !msg)
        return;
    say(msg, "  top sites:\n");
    for (size_t i = 0; i < s->n && (int)i < top; i++) {
        char save[96] = "", ms[32], vsave[96];
        /* the replay removes no compile-time call: none played it */
        sb_audit_run_save rs =
            s->o[i].made->compile
                ? (sb_audit_run_save){0}
                : sb_audit_run_saving(an, SB_SAVE_SITE, s->o[i].site, SB_AUDIT_NONE);
        sb_audit_save_text(rs, ms, sizeof ms);
        if (!strcmp(ms, SB_AUDIT_UNMODELLED))
            snprintf(save, sizeof save, ", removing the site saves: unknown (%s)",
                     sb_audit_unmodelled_why(rs));
        else if (*ms) /* the site was replayed: what removing it would save */
            snprintf(save, sizeof save, ", removing the site saves %s ms", ms);
        say(msg, "  %8ld  %-14s %s  (%s%s)\n", s->o[i].count, sb_audit_class_name(s->o[i].cls),
            SB_AUDIT_ESC(s->o[i].site),
            s->o[i].made->op ? SB_AUDIT_ESC(s->o[i].made->op) : "unknown operation", save);
        if (s->o[i].via[0]) /* the line inside a library that made them */
            say(msg, "  %8s  %-14s   via %s%s\n", "", "", SB_AUDIT_ESC(s->o[i].via),
                line_saving(an, &s->o[i], vsave, sizeof vsave));
    }
}

/* Does call c lie in an instance of `name` that exceeded max? */
static int in_exceeded(const sb_audit_proc_result *res, const sb_audit_call *c, const char *name,
                       long long max)
{
    for (int k = 0; k < c->nranges; k++) {
        if (strcmp(c->ranges[k].name, name) != 0)
            continue;
        const sb_audit_range_info *ri = sb_audit_find_range_info(res, c->tid, c->ranges[k].id);
        if (ri && ri->blocking > max)
            return 1;
    }
    return 0;
}

/* The blocking calls made while torch.compile compiled (analyze/compile_group.c). */
static long run_compile(const sb_audit_analysis *an)
{
    long total = 0;
    for (size_t i = 0; i < an->nprocs; i++)
        total += an->procs[i].compile_blocking;
    return total;
}

/* The blocking calls the gate counts: those of the compile time only with --include-compile. */
static long run_total(const sb_audit_analysis *an, const sb_audit_opts *o)
{
    long total = 0;
    for (size_t i = 0; i < an->nprocs; i++)
        total += an->procs[i].blocking;
    return o->include_compile ? total : total - run_compile(an);
}

/* Under the verdict: the compile-time calls the gate left out, or counted. */
static void compile_note(FILE *msg, const sb_audit_analysis *an, const sb_audit_opts *o)
{
    long n = run_compile(an);
    if (n && !o->include_compile)
        say(msg,
            "audit gate: the run's %ld compile-time blocking call%s (torch.compile) left out; "
            "--include-compile gates them\n",
            n, n == 1 ? "" : "s");
    else if (n)
        say(msg,
            "audit gate: compile-time blocking calls (torch.compile) counted too "
            "(--include-compile): %ld in the run\n",
            n);
}

/* --max-syncs's offenders. */
static int max_offenders(const sb_audit_analysis *an, const sb_audit_opts *o,
                         sb_audit_offender **sites, size_t *n)
{
    offenders s = {0};
    int rc = 0;
    /* --range: the calls of the instances over the limit; else the run's, when over it */
    int over = o->max_syncs >= 0 && (o->range || run_total(an, o) > o->max_syncs);
    for (size_t i = 0; over && !rc && i < an->nprocs; i++) {
        const sb_audit_proc_result *res = &an->procs[i];
        const sb_audit_proc *p = res->proc;
        for (size_t k = 0; o->range && !rc && k < p->ncalls; k++) {
            const sb_audit_call *c = &p->calls[k];
            const sb_audit_call_info *ci = &res->calls[k];
            if (sb_audit_gated(o, ci) && in_exceeded(res, c, o->range, o->max_syncs))
                rc = add(&s, ci->site, ci->cls, 1, ci->rule, ci->pyframe, ci->made);
        }
        for (size_t k = 0; !o->range && !rc && k < res->nrows; k++) {
            const sb_audit_row *r = &res->rows[k];
            if (sb_audit_blocking(r->cls) && (o->include_compile || !r->made.compile))
                rc = add(&s, r->site, r->cls, r->count, r->rule, r->pyframe, &r->made);
        }
    }
    if (rc) {
        free(s.o);
        *sites = NULL;
        *n = 0;
        return -1;
    }
    merge(&s);
    *sites = s.o;
    *n = s.n;
    return 0;
}

/* --baseline's first (a new site is what a pull request brought), then --max-syncs's. */
int sb_audit_gate_offenders(const sb_audit_analysis *an, const sb_audit_opts *o,
                            sb_audit_offender **sites, size_t *n)
{
    offenders b = {0}, m = {0};
    if (sb_audit_baseline_offenders(an, o, &b.o, &b.n) < 0 ||
        max_offenders(an, o, &m.o, &m.n) < 0 ||
        (b.n + m.n && !(*sites = realloc(b.o, (b.n + m.n) * sizeof *b.o)))) {
        free(b.o);
        free(m.o);
        *sites = NULL;
        *n = 0;
        return -1;
    }
    if (!(b.n + m.n)) {
        free(b.o);
        *sites = NULL;
    }
    if (m.n)
        memcpy(*sites + b.n, m.o, m.n * sizeof *m.o);
    free(m.o);
    *n = b.n + m.n;
    return 0;
}

/* The gate's top offending sites, under its verdict. */
static void top_sites(FILE *msg, const sb_audit_analysis *an, const sb_audit_opts *o)
{
    offenders s = {0};
    if (msg && max_offenders(an, o, &s.o, &s.n) == 0)
        print_top(msg, an, &s, o->top);
    free(s.o);
}

static int gate_range(const sb_audit_analysis *an, const sb_audit_opts *o, FILE *msg)
{
    long instances = 0, exceeded = 0, worst = -1;
    int64_t worst_pid = 0;
    for (size_t i = 0; i < an->nprocs; i++) {
        const sb_audit_proc_result *res = &an->procs[i];
        const sb_audit_proc *p = res->proc;
        for (size_t k = 0; k < p->nranges; k++) {
            if (strcmp(p->ranges[k].name, o->range) != 0)
                continue;
            long blocking = res->ranges[k].blocking;
            instances++;
            if (blocking > o->max_syncs)
                exceeded++;
            if (blocking > worst) {
                worst = blocking;
                worst_pid = p->pid;
            }
        }
    }
    if (!instances) {
        say(msg,
            "audit gate: FAILED: range '%s' was never entered (no NVTX range of that name "
            "in any process): nothing was checked\n",
            SB_AUDIT_ESC(o->range));
        return 1;
    }
    if (!exceeded) {
        say(msg,
            "audit gate: passed: %ld instance%s of range '%s', at most %ld blocking "
            "call%s each (max %lld)\n",
            instances, instances == 1 ? "" : "s", SB_AUDIT_ESC(o->range), worst,
            worst == 1 ? "" : "s", o->max_syncs);
        compile_note(msg, an, o);
        return 0;
    }
    say(msg,
        "audit gate: FAILED: %ld of %ld instance%s of range '%s' made more than %lld "
        "blocking call%s; the worst: pid %lld, %ld\n",
        exceeded, instances, instances == 1 ? "" : "s", SB_AUDIT_ESC(o->range), o->max_syncs,
        o->max_syncs == 1 ? "" : "s", (long long)worst_pid, worst);
    compile_note(msg, an, o);
    top_sites(msg, an, o);
    return 1;
}

/* A process whose records are incomplete: its counts are a lower bound, the gate cannot pass.
 */
static int gate_incomplete(const sb_audit_analysis *an, const sb_audit_opts *o, FILE *msg)
{
    int bad = 0;
    for (size_t i = 0; i < an->nprocs; i++) {
        char why[512];
        const sb_audit_proc_result *res = &an->procs[i];
        const sb_audit_proc *p = res->proc;
        /* a worker of torch.compile makes compile-time calls only: none the gate counts */
        if (!sb_audit_incomplete(p, why, sizeof why) ||
            (res->compile_worker && !o->include_compile))
            continue;
        if (p->unwatched) /* no lower bound either: nothing of it was checked */
            say(msg, "audit gate: FAILED: pid %lld: nothing was checked: %s\n", (long long)p->pid,
                SB_AUDIT_ESC(p->unwatched));
        else
            say(msg,
                "audit gate: FAILED: pid %lld: records incomplete: %s; its counts are a lower "
                "bound\n",
                (long long)p->pid, why);
        bad = 1;
    }
    return bad;
}

/* Did a process record the GPU's activity in a window (its savings scaled from it)? */
static int any_window(const sb_audit_analysis *an)
{
    for (size_t i = 0; i < an->nprocs; i++)
        if (an->procs[i].proc->windowed && an->procs[i].nsavings)
            return 1;
    return 0;
}

/* --max-syncs N: the run's count, or each instance of --range's. */
static int gate_max(const sb_audit_analysis *an, const sb_audit_opts *o, FILE *msg)
{
    const sb_audit_run *run = an->run;
    if (o->range)
        return gate_range(an, o, msg);
    long total = run_total(an, o);
    if (total <= o->max_syncs) {
        /* no process at all: the command used no CUDA, or its environment lost the audit's
         * library (sudo, env -i): said, so that nobody takes it for a watched run */
        say(msg, "audit gate: passed: %ld blocking call%s (max %lld)%s\n", total,
            total == 1 ? "" : "s", o->max_syncs,
            run->nprocs ? ""
                        : "; no process initialized CUDA with the audit's library loaded: "
                          "nothing was watched");
        compile_note(msg, an, o);
        return 0;
    }
    say(msg, "audit gate: FAILED: %ld blocking call%s, more than --max-syncs %lld", total,
        total == 1 ? "" : "s", o->max_syncs);
    sb_audit_run_save save = sb_audit_run_saving(an, SB_SAVE_ALL, NULL, SB_AUDIT_NONE);
    const char *unmodelled = sb_audit_unmodelled_why(save);
    if (save.played && unmodelled)
        say(msg, "; what removing them would save is unknown (%s)", unmodelled);
    else if (save.played)
        say(msg, "; removing %s would save %.3f ms of wall time%s",
            o->include_compile && run_compile(an) ? "the run-time ones" : "them", save.us / 1e3,
            any_window(an) ? " (scaled from the GPU window)" : "");
    say(msg, "\n");
    compile_note(msg, an, o);
    top_sites(msg, an, o);
    return 1;
}

int sb_audit_gate(const sb_audit_analysis *an, const sb_audit_opts *o, FILE *msg)
{
    const sb_audit_run *run = an->run;
    if (o->max_syncs < 0 && !o->baseline)
        return 0;
    if (gate_incomplete(an, o, msg))
        return 1;
    if (!run->nprocs && !o->allow_no_cuda) {
        say(msg, "audit gate: FAILED: no process initialized CUDA with the audit's library "
                 "loaded: nothing was watched (no GPU or driver, a CPU fallback, or an environment "
                 "that dropped the library: sudo, env -i); --allow-no-cuda passes such a run\n");
        return 1;
    }
    int failed = o->max_syncs >= 0 ? gate_max(an, o, msg) : 0;
    if (o->baseline)
        failed |= sb_audit_gate_baseline(an, o, msg);
    return failed;
}

char *sb_audit_gate_text(const sb_audit_analysis *an, const sb_audit_opts *o, int *failed)
{
    sb_memtext m;
    if (!sb_memtext_open(&m))
        return NULL;
    *failed = sb_audit_gate(an, o, m.f);
    return sb_memtext_close(&m);
}

void sb_audit_offender_text(FILE *f, const sb_audit_offender *s)
{
    if (s->baseline)
        fprintf(f, "%s\n", s->baseline);
    fprintf(f, "%ld blocking call%s (%s): %s", s->count, s->count == 1 ? "" : "s",
            sb_audit_class_name(s->cls),
            s->made->op ? s->made->op : "unknown operation (no rule knows this call)");
    if (s->via[0]) /* the line inside a library that made them */
        fprintf(f, "\nvia: %s", s->via);
    if (s->made->fix && s->made->fix[0])
        fprintf(f, "\nfix: %s", s->made->fix);
    if (s->rule && s->rule->scenario)
        fprintf(f, " (priced by: syncbench --scenario %s)", s->rule->scenario);
}
