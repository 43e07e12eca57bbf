/* The human report: the run, each process in a few lines, the classes summed over the run and
 * the top call sites; what torch.compile made while compiling (analyze/compile_group.c) in a
 * section of its own, after the run time's. */
#include "report/report.h"
#include "report/save_text.h"
#include "analyze/frameworks.h"
#include "analyze/ranks.h"
#include "base/arrays.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/stats.h"

/* Why the replay could not tie another thread's work to the syncing thread's. */
static const char *threads_unmodelled_why(const sb_replay_facts *f)
{
    if (!f->waits)
        return "and the hand-offs between threads were not recorded (libsyncbench_waits.so was "
               "not preloaded)";
    if (f->wakes_lost)
        return "and some hand-offs between threads were lost (the waits library's buffer was "
               "full)";
    return "with no recorded hand-off to the syncing thread (a lock, a spin or a queue the "
           "waits library does not see)";
}

/* Threads that hand the syncing ones work and whose own pace the audit does not see (a
 * DataLoader's pin-memory thread): which reading the figure takes, and the other's. */
static void producers_note(FILE *f, const sb_audit_proc_result *res, const sb_audit_saving *all)
{
    const sb_audit_proc *p = res->proc;
    int n = all->r.producers;
    const sb_replay_result *held = all->held_primary ? &all->r : &all->other;
    if (all->held_primary)
        fprintf(f,
                "pid %" PRId64 ": %d thread%s that hand%s it work (a loader's, fed from outside "
                "the process) kept it waiting at %ld of its %ld syncs: the figure holds them where "
                "recorded; if they could keep up: %.3f ms\n",
                p->pid, n, n == 1 ? "" : "s", n == 1 ? "s" : "", held->producer_holds, all->calls,
                sb_audit_result_us(&all->other, all->calls) * sb_audit_saving_scale(all) / 1e3);
    else
        fprintf(f,
                "pid %" PRId64 ": %d thread%s that hand%s it work (a loader's, fed from outside "
                "the process) taken to keep up; held where recorded, they would hold it at %ld of "
                "its %ld syncs and the saving be %.3f ms\n",
                p->pid, n, n == 1 ? "" : "s", n == 1 ? "s" : "", held->producer_holds, all->calls,
                sb_audit_result_us(held, all->calls) * sb_audit_saving_scale(all) / 1e3);
}

/* A rank played with the others of its job (analyze/ranks_play.c): how, and whose figure is the
 * job's (the run's sums take it once). */
static void job_note(FILE *f, const sb_audit_analysis *an, const sb_audit_proc_result *res,
                     const sb_audit_saving *all)
{
    const sb_audit_proc *fig = NULL;
    for (size_t i = 0; i < an->nprocs; i++)
        if (an->procs[i].nsavings && an->procs[i].savings[0].job_figure)
            fig = an->procs[i].proc;
    char model[128];
    fprintf(f, "pid %" PRId64 ": %s", res->proc->pid,
            sb_audit_ranks_model(all, model, sizeof model));
    if (fig == res->proc)
        fprintf(f, "; this rank's play ends last: its figure is the job's\n");
    else if (fig)
        fprintf(f, "; the job's figure is rank %d's (pid %" PRId64 "), whose play ends last\n",
                fig->rank, fig->pid);
    else
        fputc('\n', f);
}

/* What the replay predicts for removing every sync of the process (savings.c). */
static void prediction(FILE *f, const sb_audit_analysis *an, const sb_audit_proc_result *res)
{
    const sb_audit_proc *p = res->proc;
    const sb_audit_saving *all = res->nsavings ? &res->savings[0] : NULL;
    if (!all) {
        if (p->kernels && !(p->windowed && p->window_start < 0)) /* that one: window_line */
            fprintf(f, "pid %" PRId64 ": predicted savings: the launches were not recorded\n",
                    p->pid);
        return;
    }
    char scaled[96] = ""; /* a window's figures, scaled to the run */
    if (all->calls != all->run_calls)
        snprintf(scaled, sizeof scaled, " [scaled from the %ld in the GPU window]", all->calls);
    if (!all->calls && all->run_calls)
        fprintf(f,
                "pid %" PRId64 ": removing all %ld syncs would save: unknown: none was made inside "
                "the GPU window\n",
                p->pid, all->run_calls);
    else if (!all->r.threads_unmodelled && all->ranks_unmodelled)
        fprintf(f,
                "pid %" PRId64 ": removing all %ld syncs would save: unknown: ranks not modelled "
                "(one of %d ranks, not played together: %s; played alone, a rank waits at each "
                "collective for peers that do not move)\n",
                p->pid, all->run_calls, all->ranks_unmodelled + 1,
                SB_AUDIT_ESC(all->ranks_why ? all->ranks_why : "unknown"));
    else if (all->r.threads_unmodelled) /* a near-zero figure would be taken for a fact */
        fprintf(f,
                "pid %" PRId64 ": removing all %ld syncs would save: unknown: threads not "
                "modelled (%d other thread%s launched GPU work between them, %s)\n",
                p->pid, all->run_calls, all->r.threads_unmodelled,
                all->r.threads_unmodelled == 1 ? "" : "s", threads_unmodelled_why(res->replay));
    else
        fprintf(f,
                "pid %" PRId64 ": removing all %ld syncs would save %.3f ms of wall time (%.1f %%) "
                "and %.3f ms of GPU idle time; then %s-bound (GPU busy %.1f %%)%s\n",
                p->pid, all->run_calls, sb_audit_saving_us(all) / 1e3,
                sb_audit_pct(sb_audit_saving_us(all), res->lifetime_us),
                all->r.idle_us * sb_audit_saving_scale(all) / 1e3, sb_audit_bound_name(&all->r),
                all->r.gpu_busy_pct, scaled);
    if (all->ranks_played)
        job_note(f, an, res, all);
    if (!sb_audit_unmodelled(all) && all->r.producers)
        producers_note(f, res, all);
    if (res->replay->ops_unplaced || res->replay->syncs_untargeted)
        fprintf(f,
                "pid %" PRId64 ": replay: %ld GPU operation%s of unknown launch kept in place, "
                "%ld sync%s of unknown target taken as waiting for the whole GPU\n",
                p->pid, res->replay->ops_unplaced, res->replay->ops_unplaced == 1 ? "" : "s",
                res->replay->syncs_untargeted, res->replay->syncs_untargeted == 1 ? "" : "s");
}

/* The window of GPU activity (--gpu-activity-range): which instances, how long, and that the GPU's
 * figures are the window's, scaled to the run. */
static void window_line(FILE *f, const sb_audit_proc_result *res)
{
    const sb_audit_proc *p = res->proc;
    char text[3 * SB_AUDIT_RANGE_NAME_MAX];
    if (!p->windowed || !p->kernels)
        return;
    sb_audit_window_text(p, text, sizeof text);
    if (p->window_start < 0) {
        fprintf(f,
                "pid %" PRId64 ": GPU window %s never opened (%ld instance%s of %s begun): no GPU "
                "busy time, bubbles or predicted savings\n",
                p->pid, SB_AUDIT_ESC(text), res->range_instances,
                res->range_instances == 1 ? "" : "s", SB_AUDIT_ESC(p->window.name));
        return;
    }
    fprintf(
        f,
        "pid %" PRId64 ": GPU activity recorded in a window only: %s, %.3f ms of the run's "
        "%.3f ms (%ld instance%s of %s begun%s); GPU busy, bubbles and savings are the window's, "
        "scaled to the run by its calls\n",
        p->pid, SB_AUDIT_ESC(text), res->window_us / 1e3, res->lifetime_us / 1e3,
        res->range_instances, res->range_instances == 1 ? "" : "s", SB_AUDIT_ESC(p->window.name),
        p->window_end < 0 ? "; still open at the exit" : "");
}

/* A process's compile time: its calls apart, in the compile section below. */
static void compile_line(FILE *f, const sb_audit_proc_result *res)
{
    const sb_audit_proc *p = res->proc;
    if (!res->compile_blocking && !res->compile_polls)
        return;
    fprintf(f,
            "pid %" PRId64 ": compile time (torch.compile): %ld blocking call%s (%.3f ms blocked) "
            "and %ld poll%s, apart below\n",
            p->pid, res->compile_blocking, res->compile_blocking == 1 ? "" : "s",
            res->compile_blocked_us / 1e3, res->compile_polls, res->compile_polls == 1 ? "" : "s");
}

static void process_block(FILE *f, const sb_audit_analysis *an, const sb_audit_proc_result *res)
{
    const sb_audit_proc *p = res->proc;
    fprintf(f, "pid %" PRId64, p->pid);
    if (p->rank >= 0)
        fprintf(f, " (rank %d)", p->rank);
    if (res->compile_worker)
        fprintf(f, " (%s)", SB_AUDIT_COMPILE_WORKER);
    if (p->kernels && p->windowed && p->window_start < 0) /* window_line says why */
        fprintf(f, ": host blocked %.3f ms (%.1f %%), polls %ld\n", res->blocked_us / 1e3,
                sb_audit_pct(res->blocked_us, res->lifetime_us), res->polls);
    else if (p->kernels)
        fprintf(f, ": GPU busy %.1f %%%s, host blocked %.3f ms (%.1f %%), polls %ld\n",
                sb_audit_pct(res->busy_us, sb_audit_gpu_span_us(res)),
                p->windowed ? " (in its GPU window)" : "", res->blocked_us / 1e3,
                sb_audit_pct(res->blocked_us, res->lifetime_us), res->polls);
    else
        fprintf(f,
                ": host blocked %.3f ms (%.1f %%), polls %ld (GPU busy, bubbles, predicted "
                "savings: --gpu-activity)\n",
                res->blocked_us / 1e3, sb_audit_pct(res->blocked_us, res->lifetime_us), res->polls);
    compile_line(f, res);
    window_line(f, res);
    prediction(f, an, res);
    char why[512];
    if (p->unwatched)
        fprintf(f, "pid %" PRId64 ": not watched: %s; none of its blocking calls is counted\n",
                p->pid, SB_AUDIT_ESC(p->unwatched));
    else if (sb_audit_incomplete(p, why, sizeof why))
        fprintf(f, "pid %" PRId64 ": records incomplete: %s; what was recorded is reported\n",
                p->pid, why);
    if (p->malformed)
        fprintf(f, "pid %" PRId64 ": %ld malformed line%s skipped\n", p->pid, p->malformed,
                p->malformed == 1 ? "" : "s");
    if (p->dropped)
        fprintf(
            f,
            "pid %" PRId64
            ": %lld GPU activity records dropped (full buffers, or still running at the exit)\n",
            p->pid, p->dropped);
    if (p->warns && p->first_warn != p->unwatched)
        fprintf(f, "pid %" PRId64 ": %s\n", p->pid, SB_AUDIT_ESC(p->first_warn));
    if (p->activity_off)
        fprintf(f,
                "pid %" PRId64 ": recording incomplete: %s not recorded "
                "(SYNCBENCH_ACTIVITY_OFF, a developer's knob): its GPU figures, predicted "
                "savings and hand-offs are not the whole run's\n",
                p->pid, SB_AUDIT_ESC(p->activity_off));
}

/* Is the call of this phase (compile: made while torch.compile compiled)? */
static int in_phase(const sb_audit_call_info *ci, int compile)
{
    return sb_audit_compile_time(ci) == compile;
}

/* Per class over the run, of the run time or the compile time (under `title` when not NULL):
 * count, blocked total/median/p95, bubbles, and the replay's saving (run time only). */
static int class_table(FILE *f, const sb_audit_analysis *an, int compile, const char *title)
{
    const sb_audit_run *run = an->run;
    size_t n = 0;
    for (size_t i = 0; i < an->nprocs; i++)
        n += run->procs[i]->ncalls;
    double *d = malloc((n ? n : 1) * sizeof *d);
    if (!d)
        return -1;
    int kernels = 0, replayed = 0; /* some process recorded kernels, launches: two columns */
    for (size_t i = 0; i < an->nprocs; i++) {
        kernels |= run->procs[i]->kernels;
        replayed |= an->procs[i].nsavings > 0;
    }
    fprintf(f, "\n%s%s%-9s %-14s %9s %12s %11s %11s %11s %11s\n", title ? title : "",
            title ? "\n" : "", "group", "class", "count", "blocked ms", "median us", "p95 us",
            "bubble ms", "saves ms");
    for (int k = 1; k < SB_AUDIT_NCLASS; k++) {
        size_t m = 0;
        double total = 0, bubble = 0;
        for (size_t i = 0; i < an->nprocs; i++) {
            const sb_audit_proc_result *res = &an->procs[i];
            const sb_audit_proc *p = res->proc;
            long count = 0, known = 0; /* known: inside its window of GPU activity */
            double sum = 0;
            for (size_t c = 0; c < p->ncalls; c++) {
                const sb_audit_call_info *ci = &res->calls[c];
                if ((int)ci->cls != k || !in_phase(ci, compile))
                    continue;
                d[m] = (double)(p->calls[c].end - p->calls[c].start) / 1e3;
                total += d[m++];
                sum += (double)ci->bubble_ns / 1e3;
                count++;
                known += sb_audit_in_gpu_window(p, p->calls[c].start);
            }
            bubble += count ? sb_audit_scale_bubbles(sum, count, known) : 0;
        }
        if (!m)
            continue;
        sb_sort_doubles(d, m);
        char bub[32] = "-", save[32] = "-";
        if (kernels && !isnan(bubble))
            snprintf(bub, sizeof bub, "%.3f", bubble / 1e3);
        if (replayed && !compile && sb_audit_blocking((sb_audit_class)k))
            sb_audit_save_text(sb_audit_run_saving(an, SB_SAVE_CLASS, NULL, (sb_audit_class)k),
                               save, sizeof save);
        fprintf(f, "%-9s %-14s %9zu %12.3f %11.1f %11.1f %11s %11s\n",
                sb_audit_group_name(sb_audit_class_group((sb_audit_class)k)),
                sb_audit_class_name((sb_audit_class)k), m, total / 1e3,
                sb_percentile_sorted(d, (int)m, 0.5), sb_percentile_sorted(d, (int)m, 0.95), bub,
                save);
    }
    free(d);
    return 0;
}

typedef struct {
    sb_audit_class cls;
    const char *range, *site;
    const sb_audit_rule *rule; /* the scenario that prices the fix */
    const sb_audit_made *made; /* the line inside a library, the operation, the fix */
    const char *native, *source;
    int python; /* site is a Python line */
    int waiter; /* the thread whose line it is, which waited for the calls made on another; 0 */
    long count;
    long site_total; /* the count of every entry of its site */
    int site_via;    /* some entry of its site was made inside a library: listed under it */
} site_sum;

/* The place of an entry in the list: a site whose syncs were made inside a library is one
 * group, placed by its total and listed together; any other entry by its own count. */
static long rank_of(const site_sum *s)
{
    return s->site_via ? s->site_total : s->count;
}

static int cmp_site(const void *a, const void *b)
{
    const site_sum *x = a, *y = b;
    if (rank_of(x) != rank_of(y))
        return rank_of(x) > rank_of(y) ? -1 : 1;
    int r = strcmp(x->site, y->site);
    if (r)
        return r;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    if ((r = strcmp(x->made->via_site, y->made->via_site)) || (r = strcmp(x->range, y->range)))
        return r;
    return (int)x->cls - (int)y->cls;
}

static int cmp_ptr(uintptr_t p, uintptr_t q)
{
    return p < q ? -1 : p > q;
}

/* Sites, ranges, lines and texts are interned (one pointer per text): sorted by (class, range,
 * site, via, operation, fix) pointers, the rows of one entry are neighbours. */
static int cmp_site_key(const void *a, const void *b)
{
    const site_sum *x = a, *y = b;
    if (x->cls != y->cls)
        return (int)x->cls - (int)y->cls;
    int r = cmp_ptr((uintptr_t)x->range, (uintptr_t)y->range);
    if (r || (r = cmp_ptr((uintptr_t)x->site, (uintptr_t)y->site)) ||
        (r = cmp_ptr((uintptr_t)x->made->via_site, (uintptr_t)y->made->via_site)) ||
        (r = cmp_ptr((uintptr_t)x->made->op, (uintptr_t)y->made->op)))
        return r;
    return cmp_ptr((uintptr_t)x->made->fix, (uintptr_t)y->made->fix);
}

static int cmp_site_ptr(const void *a, const void *b)
{
    return cmp_ptr((uintptr_t)((const site_sum *)a)->site, (uintptr_t)((const site_sum *)b)->site);
}

#define PAD "                                                           "

long sb_audit_fw_calls(const sb_audit_analysis *an, const struct sb_fw_row *fw)
{
    long n = 0;
    for (size_t i = 0; fw && i < an->nprocs; i++) {
        const sb_audit_proc_result *res = &an->procs[i];
        for (size_t k = 0; k < res->nrows; k++)
            if (res->rows[k].made.fw == fw && sb_audit_blocking(res->rows[k].cls))
                n += res->rows[k].count;
    }
    return n;
}

long sb_audit_run_blocking(const sb_audit_analysis *an)
{
    long n = 0;
    for (size_t i = 0; i < an->nprocs; i++)
        n += an->procs[i].blocking;
    return n;
}

/* Under an entry the framework table names (analyze/frameworks.h): where the fix goes in the
 * user's code, and how many of the run's blocking calls the row's option removes. */
static void fw_details(FILE *f, const sb_audit_analysis *an, const sb_audit_made *m,
                       const char *pad)
{
    if (!m->fw)
        return;
    if (m->fix_at && m->fix_at[0])
        fprintf(f, "%schange: %s\n", pad, SB_AUDIT_ESC(m->fix_at));
    long n = sb_audit_fw_calls(an, m->fw), all = sb_audit_run_blocking(an);
    if (m->fw->removes)
        fprintf(f, "%sremoves %ld of the run's %ld blocking call%s\n", pad, n, all,
                all == 1 ? "" : "s");
    else
        fprintf(f, "%sno option removes them (%ld of the run's %ld blocking call%s)\n", pad, n, all,
                all == 1 ? "" : "s");
}

/* Under an entry: the text of its line (the library's for an entry made inside one), what made
 * it, the fix and the scenario that prices it, where the fix goes and what it removes (the
 * framework table's), the native frame. */
static void site_details(FILE *f, const sb_audit_analysis *an, const site_sum *s, const char *pad)
{
    const char *text = s->made->via ? s->made->via_source : s->source;
    if (s->python && text[0] && (!s->site_via || s->made->via))
        fprintf(f, "%s| %s\n", pad, SB_AUDIT_ESC(text));
    if (s->made->op) {
        fprintf(f, "%swhat: %s\n", pad, SB_AUDIT_ESC(s->made->op));
        fprintf(f, "%sfix:  %s", pad, SB_AUDIT_ESC(s->made->fix));
        if (s->rule && s->rule->scenario)
            fprintf(f, " (priced by: syncbench --scenario %s)", s->rule->scenario);
        fputc('\n', f);
    } else {
        fprintf(f, "%swhat: unknown (no rule knows this call; see the native frame)\n", pad);
    }
    fw_details(f, an, s->made, pad);
    int no_stack = !strcmp(s->native, "?"); /* an async copy into pinned memory: none taken */
    if (s->python)
        fprintf(f, "%snative: %s\n", pad,
                no_stack && s->waiter ? "none (an async copy into pinned memory: no stack taken)"
                                      : SB_AUDIT_ESC(s->native));
    if (s->waiter) { /* made on a thread without Python (a runtime's worker), named by the
                      * object of its native frame */
        char obj[256] = "";
        int n = (int)strcspn(s->native, "!+");
        if (s->native[n])
            snprintf(obj, sizeof obj, "of %.*s ", n, s->native);
        fprintf(f,
                "%son:     a thread %swithout Python, while this line (thread %d) waited for it\n",
                pad, SB_AUDIT_ESC(obj), s->waiter);
    }
}

/* The entries of every process, one per (class, range, site, via, operation, fix), of the run
 * time or the compile time, with their site's total: *n of them, NULL out of memory. */
static site_sum *site_sums(const sb_audit_analysis *an, int compile, size_t *n)
{
    site_sum *s = NULL;
    size_t m = 0, cap = 0;
    for (size_t i = 0; i < an->nprocs; i++) {
        const sb_audit_proc_result *res = &an->procs[i];
        for (size_t k = 0; k < res->nrows; k++) {
            const sb_audit_row *r = &res->rows[k];
            if (!sb_audit_blocking(r->cls) || r->made.compile != compile)
                continue;
            if (sb_grow(&s, &cap, m, sizeof *s) < 0) {
                free(s);
                return NULL;
            }
            s[m++] = (site_sum){.cls = r->cls,
                                .range = r->range,
                                .site = r->site,
                                .rule = r->rule,
                                .made = &r->made,
                                .native = r->native,
                                .source = r->source,
                                .python = r->pyframe != NULL,
                                .waiter = r->waiter,
                                .count = r->count};
        }
    }
    sb_sort(s, m, sizeof *s, cmp_site_key);
    size_t k = 0;
    for (size_t i = 0; i < m; i++) {
        if (k && cmp_site_key(&s[k - 1], &s[i]) == 0)
            s[k - 1].count += s[i].count;
        else
            s[k++] = s[i];
    }
    sb_sort(s, k, sizeof *s, cmp_site_ptr);
    for (size_t i = 0, j; i < k; i = j) {
        long total = 0;
        int via = 0;
        for (j = i; j < k && s[j].site == s[i].site; j++) {
            total += s[j].count;
            via |= s[j].made->via != NULL;
        }
        for (size_t e = i; e < j; e++) {
            s[e].site_total = total;
            s[e].site_via = via;
        }
    }
    sb_sort(s, k, sizeof *s, cmp_site);
    *n = k;
    return s ? s : calloc(1, sizeof *s);
}

/* One entry: its row (under its site's line when its site was made inside a library), then
 * its details, once per site, line and operation (a line synced in several ranges or classes is
 * explained at its first row). */
static void site_entry(FILE *f, const sb_audit_analysis *an, const site_sum *s, size_t i,
                       int replayed)
{
    char save[32] = "-";
    if (replayed && /* "": the site was not played */
        !*sb_audit_save_text(sb_audit_run_saving(an, SB_SAVE_SITE, s[i].site, SB_AUDIT_NONE), save,
                             sizeof save))
        snprintf(save, sizeof save, "-");
    const char *range = s[i].range[0] ? SB_AUDIT_ESC(s[i].range) : "-";
    if (!s[i].site_via) {
        fprintf(f, "%9ld  %-14s %-20s %10s  %s\n", s[i].count, sb_audit_class_name(s[i].cls), range,
                save, SB_AUDIT_ESC(s[i].site));
    } else {
        if (i == 0 || s[i - 1].site != s[i].site) { /* the user's line, then what it led to */
            fprintf(f, "%9ld  %-14s %-20s %10s  %s\n", s[i].site_total, "", "", save,
                    SB_AUDIT_ESC(s[i].site));
            if (s[i].source[0])
                fprintf(f, "%s| %s\n", PAD, SB_AUDIT_ESC(s[i].source));
        }
        char line[32] = ""; /* the library line alone: "-" when not played */
        if (replayed && s[i].made->via &&
            !*sb_audit_save_text(sb_audit_run_line_saving(an, s[i].site, s[i].made->via_site), line,
                                 sizeof line))
            snprintf(line, sizeof line, "-");
        fprintf(f, "%9ld  %-14s %-20s %10s    %s%s\n", s[i].count, sb_audit_class_name(s[i].cls),
                range, line, s[i].made->via ? "via " : "(the line itself)",
                SB_AUDIT_ESC(s[i].made->via_site));
    }
    size_t k = 0;
    while (k < i && !(s[k].site == s[i].site && s[k].made->via_site == s[i].made->via_site &&
                      s[k].made->op == s[i].made->op && s[k].made->fix == s[i].made->fix))
        k++;
    if (k == i)
        site_details(f, an, &s[i], s[i].site_via ? PAD "  " : PAD);
}

/* The top sites of the run time, or of the compile time (which the replay never removes). */
static int top_sites(FILE *f, const sb_audit_analysis *an, int top, int compile)
{
    size_t n = 0;
    site_sum *s = site_sums(an, compile, &n);
    if (!s)
        return -1;
    int replayed = 0;
    for (size_t i = 0; !compile && i < an->nprocs; i++)
        replayed |= an->procs[i].nsavings > 0;
    if (n)
        fprintf(f, "\ntop sites%s\n%9s  %-14s %-20s %10s  %s\n",
                compile ? ", compile time (torch.compile)"
                : replayed
                    ? " (saves: removing every sync at the site, all its classes and ranges; "
                      "at a library line under it, that line's alone)"
                    : "",
                "count", "class", "range", "saves ms", "site");
    for (size_t i = 0; i < n && (int)i < top; i++)
        site_entry(f, an, s, i, replayed);
    free(s);
    return 0;
}

int sb_audit_write_table(FILE *f, const sb_audit_analysis *an, const sb_audit_opts *o)
{
    const sb_audit_run *run = an->run;
    fprintf(f, "syncbench audit: %s (wall %.3f s, %zu process%s)\n", SB_AUDIT_ESC(run->cmd),
            run->wall_s, run->nprocs, run->nprocs == 1 ? "" : "es");
    if (!run->nprocs) {
        fprintf(f, "%s never initialized CUDA: nothing to audit\n",
                run->cmd[0] ? SB_AUDIT_ESC(run->cmd) : "the command");
        return ferror(f) ? sb_fail(SB_EXIT_FAIL, "audit table: write error") : 0;
    }
    int compile = 0; /* calls made while torch.compile compiled: a section of their own */
    for (size_t i = 0; i < an->nprocs; i++) {
        process_block(f, an, &an->procs[i]);
        compile |= an->procs[i].compile_blocking || an->procs[i].compile_polls;
    }
    char title[256];
    snprintf(title, sizeof title,
             "compile time (torch.compile compiling, autotuning, benchmarking: once, not each "
             "step; %s)",
             o && o->include_compile ? "gated: --include-compile"
                                     : "outside the gate: --include-compile gates it");
    int top = o ? o->top : 10;
    if (class_table(f, an, 0, compile ? "run time" : NULL) < 0 ||
        (compile && class_table(f, an, 1, title) < 0) || top_sites(f, an, top, 0) < 0 ||
        (compile && top_sites(f, an, top, 1) < 0))
        return sb_fail(SB_EXIT_FAIL, "out of memory writing the audit table");
    int windowed = 0;
    for (size_t i = 0; i < an->nprocs; i++)
        windowed |= run->procs[i]->windowed && run->procs[i]->window_start >= 0;
    if (windowed)
        fprintf(f, "\nbubble ms, saves ms: from the GPU window, scaled to the run by its calls "
                   "(docs/replay.md)\n");
    if (an->ranks) /* one machine: no host column */
        sb_ranks_write_table(f, an->ranks, o ? o->top : 10, 0);
    return ferror(f) ? sb_fail(SB_EXIT_FAIL, "audit table: write error") : 0;
}
