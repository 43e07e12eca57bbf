/* The JSON report: the environment, the per-process summary, the total, the rows, the range
 * instances and the gate. */
#include "report/report.h"
#include "report/json_build.h"
#include "report/save_text.h"
#include "analyze/frameworks.h"
#include "analyze/ranks.h"

#include <jansson.h>
#include <math.h>

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/utf8.h"

/* Every value goes through set(): a NULL (out of memory) is remembered, never dropped
 * silently; the writer then fails. */
static int g_oom;

static void set(json_t *o, const char *key, json_t *v)
{
    sb_json_set(&g_oom, o, key, v);
}

static void append(json_t *a, json_t *v)
{
    sb_json_append(&g_oom, a, v);
}

static void set_if(json_t *o, const char *key, const char *v)
{
    if (v && v[0])
        set(o, key, sb_json_str(v));
}

static json_t *environment(const sb_env *e)
{
    json_t *o = json_object();
    if (!e)
        return o;
    set_if(o, "host", e->host);
    set_if(o, "cpu", e->cpu);
    set_if(o, "kernel", e->kernel);
    set_if(o, "version", e->version);
    set_if(o, "git_rev", e->git_rev);
    set_if(o, "gpu", e->gpu);
    set_if(o, "driver", e->driver);
    return o;
}

static json_t *counts(const long *c)
{
    json_t *o = json_object();
    for (int k = 0; k < SB_AUDIT_NCLASS; k++)
        set(o, sb_audit_class_name((sb_audit_class)k), json_integer(c[k]));
    return o;
}

/* Blocking calls, their host time blocked, polls: of a process or the run, whole or of a phase. */
typedef struct {
    long blocking;
    double blocked_us;
    long polls;
} sums;

static json_t *phase_sums(long blocking, double blocked_us, long polls)
{
    json_t *o = json_object();
    set(o, "blocking_calls", json_integer(blocking));
    set(o, "blocked_us", sb_json_num(blocked_us));
    set(o, "polls", json_integer(polls));
    return o;
}

/* The sums split by phase: "run", and "compile" (made while torch.compile compiled:
 * analyze/compile_group.c), from the whole and the compile time's. */
static json_t *phases(const sums *all, const sums *compile)
{
    json_t *o = json_object();
    set(o, "run",
        phase_sums(all->blocking - compile->blocking, all->blocked_us - compile->blocked_us,
                   all->polls - compile->polls));
    set(o, "compile", phase_sums(compile->blocking, compile->blocked_us, compile->polls));
    return o;
}

/* The producers (replay.h) of a saving: how many, how often they held the syncing threads back,
 * which reading the figure takes, and the figure of the other ("producer_bound": held where
 * recorded; "producer_free": keeping up). */
static void set_producers(json_t *o, const sb_audit_saving *s)
{
    const sb_replay_result *held = s->held_primary ? &s->r : &s->other;
    const sb_replay_result *free_ = s->held_primary ? &s->other : &s->r;
    set(o, "producer_threads", json_integer(s->r.producers));
    set(o, "producer_holds", json_integer(held->producer_holds));
    set(o, "producers_assumed", sb_json_str(s->held_primary ? "held" : "keep up"));
    double scale = sb_audit_saving_scale(s);
    set(o, "save_us_producer_bound", sb_json_known(sb_audit_result_us(held, s->calls) * scale));
    set(o, "save_per_call_us_typical_producer_bound", sb_json_num(held->typical_us));
    set(o, "save_us_producer_free", sb_json_known(sb_audit_result_us(free_, s->calls) * scale));
    set(o, "save_per_call_us_typical_producer_free", sb_json_num(free_->typical_us));
}

static json_t *saving(const sb_audit_saving *s, const char *key_name, json_t *key)
{
    json_t *o = json_object();
    if (key_name)
        set(o, key_name, key);
    if (s->kind == SB_SAVE_LINE) /* the library line under its user's line (the site) */
        set(o, "via", sb_json_str(s->via));
    /* with a window of GPU activity, the totals are the window's scaled to the run by its calls
     * (window_calls of calls); per call they are the window's */
    double scale = sb_audit_saving_scale(s);
    set(o, "calls", json_integer(s->run_calls));
    if (s->calls != s->run_calls)
        set(o, "window_calls", json_integer(s->calls));
    set(o, "blocked_us", sb_json_num(s->blocked_us)); /* the run's, recorded whole */
    /* what the reports give: the removed calls at the run's typical saving per call */
    set(o, "save_us", sb_json_known(sb_audit_saving_us(s)));
    set(o, "save_wall_us", sb_json_known(s->r.wall_us * scale)); /* the whole run played */
    set(o, "save_gpu_idle_us", sb_json_known(s->r.idle_us * scale));
    set(o, "save_per_call_us", sb_json_num(s->calls ? s->r.wall_us / (double)s->calls : 0));
    set(o, "save_per_call_us_typical", sb_json_num(s->r.typical_us));
    /* the interval of the windows' median (replay.h): [low, high], and save_us scaled by it */
    json_t *ci = json_array();
    json_array_append_new(ci, sb_json_num(s->r.typical_lo_us));
    json_array_append_new(ci, sb_json_num(s->r.typical_hi_us));
    set(o, "save_per_call_us_typical_interval", ci);
    /* nonzero: the figures are no prediction (replay.h); the table says "unknown" */
    set(o, "threads_unmodelled", json_integer(s->r.threads_unmodelled));
    set(o, "ranks_unmodelled", json_integer(s->ranks_unmodelled)); /* the same for other ranks */
    /* a rank of a job: how it was modelled (played with the others, or why not), and whether
     * its figure is the job's (its slowest rank's) */
    char model[320];
    const char *how = sb_audit_ranks_model(s, model, sizeof model);
    set(o, "ranks_model", how ? sb_json_str(how) : json_null());
    set(o, "ranks_played", json_integer(s->ranks_played));
    set(o, "collectives_matched", json_integer(s->collectives));
    set(o, "job_figure", json_boolean(s->job_figure));
    if (s->r.producers) /* threads that hand work on whose own pace the audit does not see */
        set_producers(o, s);
    if (s->kind == SB_SAVE_SITE || s->kind == SB_SAVE_ALL || s->kind == SB_SAVE_LINE) {
        /* the same syncs removed with their readbacks kept, made asynchronous */
        set(o, "save_wall_us_readbacks_kept", sb_json_known(s->kept.wall_us * scale));
        set(o, "save_per_call_us_readbacks_kept",
            sb_json_num(s->calls ? s->kept.wall_us / (double)s->calls : 0));
        set(o, "save_per_call_us_readbacks_kept_typical", sb_json_num(s->kept.typical_us));
    }
    set(o, "bound", sb_json_str(sb_audit_bound_name(&s->r)));
    set(o, "host_bound_pct", sb_json_num(s->r.host_pct));
    set(o, "gpu_busy_pct", sb_json_num(s->r.gpu_busy_pct));
    return o;
}

/* The replay's predictions (savings.c); null when the launches were not recorded. */
static json_t *predicted(const sb_audit_proc_result *res)
{
    if (!res->nsavings)
        return json_null();
    const sb_replay_facts *f = res->replay;
    const sb_audit_saving *all = &res->savings[0];
    json_t *o = saving(all, NULL, NULL);
    set(o, "save_pct", sb_json_known(sb_audit_pct(sb_audit_saving_us(all), res->lifetime_us)));
    set(o, "save_wall_pct",
        sb_json_known(sb_audit_pct(all->r.wall_us * sb_audit_saving_scale(all), res->lifetime_us)));
    /* "window": the figures are the GPU window's, scaled to the run (the process's gpu_window) */
    set(o, "scaled_from", res->proc->windowed ? sb_json_str("window") : json_null());
    json_t *model = json_object();
    set(model, "launch_latency_us", sb_json_num(f->launch_latency_us));
    set(model, "gap_us", sb_json_num(f->gap_us));
    set(model, "fetch_us", sb_json_num(f->fetch_us));
    set(model, "copy_behind_kernel_us", sb_json_num(f->copy_behind_kernel_us));
    set(model, "gpu_operations", json_integer(f->ops));
    set(model, "operations_unplaced", json_integer(f->ops_unplaced));
    set(model, "syncs", json_integer(f->syncs));
    set(model, "syncs_untargeted", json_integer(f->syncs_untargeted));
    set(model, "streams", json_integer(f->gpu_streams));
    set(model, "wake_us", sb_json_num(f->wake_us));
    set(model, "launch_extra_us", sb_json_num(f->launch_extra_us));
    set(model, "call_extra_us", sb_json_num(f->call_extra_us));
    set(model, "start_extra_us", sb_json_num(f->start_extra_us));
    set(model, "alloc_extra_us", sb_json_num(f->alloc_extra_us));
    set(model, "copy_extra_us", sb_json_num(f->copy_extra_us));
    set(model, "unrecorded_stretches", json_integer(f->unrecorded));
    /* the hand-offs between threads the replay played (-1: not recorded) */
    set(model, "hand_offs", json_integer(f->waits ? f->hand_offs : -1));
    set(model, "hand_offs_lost", json_integer(f->wakes_lost));
    set(o, "model", model);
    json_t *sites = json_array(), *classes = json_array(), *ranges = json_array();
    json_t *lines = json_array();
    for (size_t i = 1; i < res->nsavings; i++) {
        const sb_audit_saving *s = &res->savings[i];
        if (s->kind == SB_SAVE_SITE)
            append(sites, saving(s, "site", sb_json_str(s->key)));
        else if (s->kind == SB_SAVE_CLASS)
            append(classes, saving(s, "class", sb_json_str(sb_audit_class_name(s->cls))));
        else if (s->kind == SB_SAVE_LINE) /* a library line under a user's line, alone */
            append(lines, saving(s, "site", sb_json_str(s->key)));
        else
            append(ranges, saving(s, "range", sb_json_str(s->key)));
    }
    set(o, "sites", sites);
    set(o, "classes", classes);
    set(o, "ranges", ranges);
    set(o, "lines", lines);
    return o;
}

/* The window of GPU activity (--gpu-activity-range): its range and instances, whether it opened,
 * how long it was open, the instances of its range in the run, and how its figures stand for the
 * run; null when the whole run was recorded. */
static json_t *gpu_window(const sb_audit_proc_result *res)
{
    const sb_audit_proc *p = res->proc;
    if (!p->windowed)
        return json_null();
    char text[3 * SB_AUDIT_RANGE_NAME_MAX];
    json_t *o = json_object();
    set(o, "spec", sb_json_str(sb_audit_window_text(p, text, sizeof text)));
    set(o, "range", sb_json_str(p->window.name));
    set(o, "domain", p->window.any_domain ? json_null() : sb_json_str(p->window.domain));
    set(o, "first", json_integer(p->window.first));
    set(o, "last", json_integer(p->window.last));
    set(o, "opened", json_boolean(p->window_start >= 0));
    set(o, "open_at_exit", json_boolean(p->window_start >= 0 && p->window_end < 0));
    set(o, "span_s", sb_json_num(res->window_us / 1e6));
    set(o, "range_instances", json_integer(res->range_instances));
    /* GPU busy % is the window's; bubbles and predicted savings the window's calls', times the
     * run's calls over the window's (docs/replay.md) */
    set(o, "scaled_by", sb_json_str("calls"));
    return o;
}

static json_t *process(const sb_audit_proc_result *res)
{
    const sb_audit_proc *p = res->proc;
    json_t *o = json_pack("{s:I, s:I, s:i, s:i, s:o, s:b, s:I, s:I}", "pid", (json_int_t)p->pid,
                          "ppid", (json_int_t)p->ppid, "rank", p->rank, "local_rank", p->local_rank,
                          "cmd", sb_json_str(p->cmd), "complete", 0, "malformed_lines",
                          (json_int_t)p->malformed, "dropped", (json_int_t)p->dropped);
    char why[512];
    const char *incomplete = sb_audit_incomplete(p, why, sizeof why);
    /* whole only when nothing was missed: an end record alone is not enough */
    set(o, "complete", json_boolean(p->complete && !incomplete));
    set(o, "records_incomplete", incomplete ? sb_json_str(incomplete) : json_null());
    set(o, "lost_lines", json_integer(p->lost));
    set(o, "lifetime_s", sb_json_num(res->lifetime_us / 1e6));
    set(o, "gpu_activity", json_boolean(p->kernels));
    /* the kinds a developer's knob turned off (SYNCBENCH_ACTIVITY_OFF): GPU figures incomplete */
    set(o, "activity_off", p->activity_off ? sb_json_str(p->activity_off) : json_null());
    set(o, "gpu_busy_pct",
        p->kernels && !(p->windowed && p->window_start < 0)
            ? sb_json_num(sb_audit_pct(res->busy_us, sb_audit_gpu_span_us(res)))
            : json_null());
    set(o, "gpu_window", gpu_window(res));
    set(o, "blocked_us", sb_json_num(res->blocked_us));
    set(o, "blocked_pct", sb_json_num(sb_audit_pct(res->blocked_us, res->lifetime_us)));
    set(o, "polls", json_integer(res->polls));
    set(o, "blocking_calls", json_integer(res->blocking));
    set(o, "counts", counts(res->counts));
    set(o, "phases",
        phases(&(sums){res->blocking, res->blocked_us, res->polls},
               &(sums){res->compile_blocking, res->compile_blocked_us, res->compile_polls}));
    /* what the process is, where the audit knows: a worker of torch.compile */
    set(o, "role", res->compile_worker ? sb_json_str(SB_AUDIT_COMPILE_WORKER) : json_null());
    set(o, "predicted", predicted(res));
    return o;
}

static json_t *total(const sb_audit_analysis *an)
{
    const sb_audit_run *run = an->run;
    long c[SB_AUDIT_NCLASS] = {0};
    double life = 0, span = 0, busy = 0, blocked = 0, save = 0, save_typical = 0;
    int windowed = 0; /* some process recorded the GPU in a window: its figures are scaled */
    long polls = 0, blocking = 0;
    sums compile = {0};             /* the compile time's */
    int kernels = run->nprocs > 0;  /* every process recorded kernels */
    int replayed = run->nprocs > 0; /* every process was replayed */
    for (size_t i = 0; i < an->nprocs; i++) {
        const sb_audit_proc_result *res = &an->procs[i];
        const sb_audit_proc *p = res->proc;
        kernels &= p->kernels;
        replayed &= res->nsavings > 0;
        for (int k = 0; k < SB_AUDIT_NCLASS; k++)
            c[k] += res->counts[k];
        life += res->lifetime_us;
        span += sb_audit_gpu_span_us(res);
        busy += res->busy_us;
        blocked += res->blocked_us;
        windowed |= p->windowed;
        /* a job's ranks played together: its figure once, its slowest rank's */
        const sb_audit_saving *all = res->nsavings ? &res->savings[0] : NULL;
        if (all && !isnan(sb_audit_saving_us(all)) && (!all->ranks_played || all->job_figure)) {
            save += all->r.wall_us * sb_audit_saving_scale(all);
            save_typical += sb_audit_saving_us(all);
        }
        polls += res->polls;
        blocking += res->blocking;
        compile.blocking += res->compile_blocking;
        compile.blocked_us += res->compile_blocked_us;
        compile.polls += res->compile_polls;
    }
    json_t *o = json_pack("{s:i}", "processes", (int)run->nprocs);
    set(o, "lifetime_s", sb_json_num(life / 1e6));
    set(o, "gpu_busy_pct", kernels ? sb_json_num(sb_audit_pct(busy, span)) : json_null());
    set(o, "blocked_us", sb_json_num(blocked));
    set(o, "blocked_pct", sb_json_num(sb_audit_pct(blocked, life)));
    /* the processes' own predictions summed (each removes its own syncs; a job's once) */
    set(o, "predicted_save_us", replayed ? sb_json_num(save_typical) : json_null());
    set(o, "predicted_save_wall_us", replayed ? sb_json_num(save) : json_null());
    set(o, "predicted_scaled_from", replayed && windowed ? sb_json_str("window") : json_null());
    set(o, "polls", json_integer(polls));
    set(o, "blocking_calls", json_integer(blocking));
    set(o, "counts", counts(c));
    set(o, "phases", phases(&(sums){blocking, blocked, polls}, &compile));
    return o;
}

/* The line inside a library that made a row's calls, its path as recorded, and what removing
 * its calls alone saves (null when not played or unknown, as site_save_us); null when the site
 * made them itself. */
static json_t *via(const sb_audit_proc_result *res, const sb_audit_row *r)
{
    const sb_audit_made *m = &r->made;
    if (!m->via)
        return json_null();
    json_t *o =
        json_pack("{s:o, s:i, s:o, s:o}", "file", sb_json_str(m->via->file), "line", m->via->line,
                  "function", sb_json_str(m->via->func), "source", sb_json_str(m->via_source));
    set(o, "site", sb_json_str(m->via_site));
    const sb_audit_saving *sv =
        m->compile || !m->via_site ? NULL : sb_audit_line_saving_of(res, r->site, m->via_site);
    set(o, "save_us",
        sv && !sb_audit_unmodelled(sv) ? sb_json_known(sb_audit_saving_us(sv)) : json_null());
    return o;
}

/* The framework table's row that names a row's calls (analyze/frameworks.h), with the line of
 * the user's code where its fix goes, the run's blocking calls it names (every row's with it)
 * and the run's blocking calls in all; null when none names them. */
static json_t *framework(const sb_audit_analysis *an, const sb_audit_made *m)
{
    const sb_fw_row *fw = m->fw;
    if (!fw)
        return json_null();
    json_t *o = json_object();
    set(o, "id", sb_json_str(fw->id));
    set(o, "package", sb_json_str(fw->package));
    set(o, "versions", sb_json_str(fw->versions));
    set(o, "removes", json_boolean(fw->removes));
    set(o, "fix", sb_json_str(fw->fix));
    set(o, "caveat", sb_json_str(fw->caveat));
    set(o, "fix_at", m->fix_at && m->fix_at[0] ? sb_json_str(m->fix_at) : json_null());
    set(o, "calls", json_integer(sb_audit_fw_calls(an, fw)));
    set(o, "run_calls", json_integer(sb_audit_run_blocking(an)));
    return o;
}

static json_t *rows(const sb_audit_analysis *an)
{
    json_t *a = json_array();
    for (size_t i = 0; i < an->nprocs; i++) {
        const sb_audit_proc_result *res = &an->procs[i];
        const sb_audit_proc *p = res->proc;
        for (size_t k = 0; k < res->nrows; k++) {
            const sb_audit_row *r = &res->rows[k];
            json_t *o =
                json_pack("{s:I, s:i, s:i, s:s, s:s, s:o, s:o, s:I}", "pid", (json_int_t)p->pid,
                          "rank", p->rank, "local_rank", p->local_rank, "group",
                          sb_audit_group_name(sb_audit_class_group(r->cls)), "class",
                          sb_audit_class_name(r->cls), "range", sb_json_str(r->range), "site",
                          sb_json_str(r->site), "count", (json_int_t)r->count);
            set(o, "blocked_total_us", sb_json_num(r->blocked_total_us));
            set(o, "blocked_median_us", sb_json_num(r->blocked_median_us));
            set(o, "blocked_p95_us", sb_json_num(r->blocked_p95_us));
            set(o, "bubble_total_us", p->kernels ? sb_json_known(r->bubble_total_us) : json_null());
            set(o, "python",
                r->pyframe
                    ? json_pack("{s:o, s:i, s:o, s:o}", "file", sb_json_str(r->pyframe->file),
                                "line", r->pyframe->line, "function", sb_json_str(r->pyframe->func),
                                "source", sb_json_str(r->source))
                    : json_null());
            set(o, "via", via(res, r));
            set(o, "library", r->made.library[0] ? sb_json_str(r->made.library) : json_null());
            set(o, "operation", r->made.op ? sb_json_str(r->made.op) : json_null());
            set(o, "fix", r->made.op ? sb_json_str(r->made.fix) : json_null());
            set(o, "scenario",
                r->rule && r->rule->scenario ? sb_json_str(r->rule->scenario) : json_null());
            set(o, "native_site", sb_json_str(r->native));
            set(o, "phase", sb_json_str(sb_audit_phase_name(r->made.compile)));
            set(o, "site_from", sb_json_str(sb_audit_site_from(r)));
            set(o, "waiter_tid", r->waiter ? json_integer(r->waiter) : json_null());
            const sb_audit_saving *sv = /* the replay removes no compile-time call */
                r->made.compile ? NULL
                                : sb_audit_saving_of(res, SB_SAVE_SITE, r->site, SB_AUDIT_NONE);
            set(o, "site_save_us",
                sv && !sb_audit_unmodelled(sv) ? sb_json_known(sb_audit_saving_us(sv))
                                               : json_null());
            set(o, "framework", framework(an, &r->made));
            set(o, "framework_changed",
                r->made.fw_changed ? sb_json_str(r->made.fw_changed->id) : json_null());
            append(a, o);
        }
    }
    return a;
}

static json_t *ranges(const sb_audit_analysis *an)
{
    json_t *a = json_array();
    for (size_t i = 0; i < an->nrange_sums; i++) {
        const sb_audit_range_sum *s = &an->range_sums[i];
        append(a, json_pack("{s:o, s:o, s:I, s:I, s:I}", "name", sb_json_str(s->name), "domain",
                            sb_json_str(s->domain), "instances", (json_int_t)s->instances,
                            "max_blocking", (json_int_t)s->max_blocking, "total_blocking",
                            (json_int_t)s->total_blocking));
    }
    return a;
}

int sb_audit_write_json(FILE *f, const sb_audit_analysis *an, const sb_audit_opts *o,
                        const sb_env *env)
{
    const sb_audit_run *run = an->run;
    g_oom = 0;
    json_t *root = json_pack("{s:s, s:i}", "tool", "syncbench audit", "format", 1);
    if (!root)
        return sb_fail(SB_EXIT_FAIL, "out of memory writing the audit JSON");
    set(root, "environment", environment(env));
    set(root, "command", sb_json_str(run->cmd));
    set(root, "wall_s", sb_json_num(run->wall_s));
    json_t *procs = json_array();
    for (size_t i = 0; i < an->nprocs; i++)
        append(procs, process(&an->procs[i]));
    set(root, "processes", procs);
    set(root, "total", total(an));
    set(root, "rows", rows(an));
    set(root, "ranges", ranges(an));
    sb_ranks none;
    sb_ranks_init(&none); /* a run never analyzed: an empty view */
    set(root, "ranks", sb_ranks_json(an->ranks ? an->ranks : &none, env ? env->host : ""));
    if (o && o->max_syncs >= 0) {
        json_t *g = json_pack("{s:I, s:o, s:b}", "max_syncs", (json_int_t)o->max_syncs, "range",
                              o->range ? sb_json_str(o->range) : json_null(), "passed",
                              sb_audit_gate(an, o, NULL) == 0);
        long compile = 0;
        for (size_t i = 0; i < an->nprocs; i++)
            compile += an->procs[i].compile_blocking;
        set(g, "include_compile", json_boolean(o->include_compile));
        /* the compile-time blocking calls the gate did not count */
        set(g, "compile_left_out", json_integer(o->include_compile ? 0 : compile));
        set(root, "gate", g);
    } else
        set(root, "gate", json_null());
    set(root, "baseline", sb_audit_baseline_json(an, o, &g_oom)); /* gate_baseline.c */
    return sb_json_write(f, root, g_oom, "audit JSON");
}
