/* The view across ranks: the table's section, the JSON's "ranks" object (the raw material a
 * merge needs and the lined-up ranges), the merge's CSV and its merged report. */
#include "analyze/ranks.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "report/json_build.h"
#include "base/error.h"
#include "base/utf8.h"
#include "sinks/sink.h"

/* ---- the table ---- */

static void straggler_line(FILE *f, const sb_rank_straggler *s, long matched)
{
    fprintf(f,
            "rank %d arrived last in %ld of %ld instance%s; the others waited %.3f ms per "
            "instance for it (median), %.3f ms in all\n",
            s->rank, s->instances, matched, matched == 1 ? "" : "s", s->wait_median_us / 1e3,
            s->wait_total_us / 1e3);
}

/* What the straggler lines do not say: ties, unequal counts, ranks left out. */
static void range_notes(FILE *f, const sb_ranks *rk, const sb_rank_range *g, int indent)
{
    if (g->tied)
        fprintf(f, "%*s%ld instance%s tied (no rank blocked least alone)\n", indent, "", g->tied,
                g->tied == 1 ? "" : "s");
    if (g->longest > g->matched) {
        fprintf(f, "%*sinstances matched by order up to the shortest count, %ld (", indent, "",
                g->matched);
        const char *sep = "";
        for (size_t j = 0; j < g->nmembers; j++)
            if ((long)g->series[j]->n != g->matched) {
                fprintf(f, "%srank %d has %zu", sep, rk->r[g->members[j]].rank, g->series[j]->n);
                sep = ", ";
            }
        fputs(")\n", f);
    }
    if (g->nmembers < rk->n) {
        fprintf(f, "%*sranks without it, left out:", indent, "");
        for (size_t i = 0, j = 0; i < rk->n; i++) {
            while (j < g->nmembers && g->members[j] < i)
                j++;
            if (j == g->nmembers || g->members[j] != i)
                fprintf(f, " %d", rk->r[i].rank);
        }
        fputc('\n', f);
    }
}

void sb_ranks_write_table(FILE *f, const sb_ranks *rk, int top, int show_hosts)
{
    if (rk->n < 2)
        return;
    int bubbles = 0;
    for (size_t i = 0; i < rk->n; i++)
        bubbles |= rk->r[i].has_bubbles;
    fprintf(f,
            "\nacross ranks (in each instance of a range, lined up by order, the rank that "
            "blocked least arrived last; the others' extra blocked time is their wait for it)\n");
    fprintf(f, "%9s %6s %12s %12s", "rank", "local", "pid", "blocked ms");
    if (bubbles)
        fprintf(f, " %11s", "bubble ms");
    fprintf(f, "%s\n", show_hosts ? "  host" : "");
    for (size_t i = 0; i < rk->n; i++) {
        const sb_rank *r = &rk->r[i];
        fprintf(f, "%9d %6d %12" PRId64 " %12.3f", r->rank, r->local_rank, r->pid,
                r->blocked_us / 1e3);
        if (bubbles && r->has_bubbles)
            fprintf(f, " %11.3f", r->bubble_us / 1e3);
        else if (bubbles)
            fprintf(f, " %11s", "-");
        if (show_hosts)
            fprintf(f, "  %s", r->host[0] ? SB_AUDIT_ESC(r->host) : "?");
        if (r->processes > 1)
            fprintf(f, "  (%d processes)", r->processes);
        if (!r->complete)
            fprintf(f, "  (records incomplete)");
        fputc('\n', f);
    }
    size_t listed = 0, with = 0;
    for (size_t i = 0; i < rk->nranges; i++) {
        const sb_rank_range *g = &rk->ranges[i];
        if (!g->nstragglers)
            continue; /* every instance tied: nothing to name (the JSON has it) */
        if ((int)listed++ >= top)
            continue;
        const char *name = SB_AUDIT_ESC(g->name);
        int indent = (int)strlen(name) + 2;
        fprintf(f, "%s: ", name);
        straggler_line(f, &g->stragglers[0], g->matched);
        for (size_t s = 1; s < g->nstragglers; s++) {
            fprintf(f, "%*s", indent, "");
            straggler_line(f, &g->stragglers[s], g->matched);
        }
        range_notes(f, rk, g, indent);
    }
    for (size_t i = 0; i < rk->nranges; i++)
        with += rk->ranges[i].nstragglers > 0;
    if (!rk->nranges)
        fprintf(f, "no NVTX range is shared by two ranks: no instance to line up\n");
    else if (!with)
        fprintf(f,
                "no straggler: in every instance of the %zu shared range%s the ranks blocked "
                "equally\n",
                rk->nranges, rk->nranges == 1 ? "" : "s");
    else if (listed > (size_t)top)
        fprintf(f,
                "... %zu more range%s with a straggler (--top; the JSON's ranks.ranges has "
                "every one)\n",
                listed - (size_t)top, listed - (size_t)top == 1 ? "" : "s");
}

/* ---- the JSON ---- */

/* Every value goes through set()/append(): a NULL (out of memory) is remembered, never dropped
 * silently; the caller then fails. */
static int g_oom;

static void set(json_t *o, const char *key, json_t *v)
{
    sb_json_set(&g_oom, o, key, v);
}

static void append(json_t *a, json_t *v)
{
    sb_json_append(&g_oom, a, v);
}

static json_t *rank_json(const sb_rank *r, const char *host)
{
    json_t *o = json_object();
    set(o, "rank", json_integer(r->rank));
    set(o, "local_rank", json_integer(r->local_rank));
    set(o, "host", sb_json_str(host ? host : r->host));
    if (r->report[0])
        set(o, "report", sb_json_str(r->report));
    set(o, "pid", json_integer(r->pid));
    set(o, "processes", json_integer(r->processes));
    set(o, "complete", json_boolean(r->complete));
    set(o, "blocked_us", sb_json_num(r->blocked_us));
    set(o, "blocking_calls", json_integer(r->blocking));
    set(o, "bubble_us", r->has_bubbles ? sb_json_num(r->bubble_us) : json_null());
    json_t *ranges = json_array();
    for (size_t k = 0; k < r->nseries; k++) {
        const sb_rank_series *s = &r->series[k];
        json_t *g = json_object(), *a = json_array();
        set(g, "name", sb_json_str(s->name));
        set(g, "domain", sb_json_str(s->domain));
        for (size_t i = 0; i < s->n; i++)
            append(a, json_integer(s->blocked_ns[i]));
        set(g, "instance_blocked_ns", a);
        append(ranges, g);
    }
    set(o, "ranges", ranges);
    return o;
}

static json_t *range_json(const sb_ranks *rk, const sb_rank_range *g)
{
    json_t *o = json_object(), *ranks = json_array(), *counts = json_array();
    set(o, "name", sb_json_str(g->name));
    set(o, "domain", sb_json_str(g->domain));
    for (size_t j = 0; j < g->nmembers; j++) {
        append(ranks, json_integer(rk->r[g->members[j]].rank));
        append(counts, json_integer((json_int_t)g->series[j]->n));
    }
    set(o, "ranks", ranks);
    set(o, "instances_per_rank", counts);
    set(o, "instances", json_integer(g->matched));
    set(o, "tied", json_integer(g->tied));
    set(o, "wait_total_us", sb_json_num(g->wait_total_us));
    json_t *st = json_array();
    for (size_t s = 0; s < g->nstragglers; s++) {
        const sb_rank_straggler *x = &g->stragglers[s];
        json_t *e = json_object();
        set(e, "rank", json_integer(x->rank));
        set(e, "instances", json_integer(x->instances));
        set(e, "wait_median_us", sb_json_num(x->wait_median_us));
        set(e, "wait_total_us", sb_json_num(x->wait_total_us));
        append(st, e);
    }
    set(o, "stragglers", st);
    json_t *who = json_array(), *wait = json_array();
    for (long k = 0; k < g->matched; k++) {
        append(who, g->straggler[k] >= 0 ? json_integer(g->straggler[k]) : json_null());
        append(wait, sb_json_num(g->wait_us[k]));
    }
    set(o, "instance_straggler", who);
    set(o, "instance_wait_us", wait);
    return o;
}

json_t *sb_ranks_json(const sb_ranks *rk, const char *host)
{
    g_oom = 0;
    json_t *o = json_object(), *ranks = json_array(), *ranges = json_array();
    for (size_t i = 0; i < rk->n; i++)
        append(ranks, rank_json(&rk->r[i], host));
    for (size_t i = 0; i < rk->nranges; i++)
        append(ranges, range_json(rk, &rk->ranges[i]));
    set(o, "ranks", ranks);
    set(o, "ranges", ranges);
    if (g_oom) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* ---- the CSV (the merge's): one row per range x matched instance x rank ---- */

int sb_ranks_write_csv(FILE *f, const sb_ranks *rk)
{
    fputs("range,instance,rank,host,pid,blocked_us,least_us,wait_us,straggler\n", f);
    for (size_t i = 0; i < rk->nranges; i++) {
        const sb_rank_range *g = &rk->ranges[i];
        for (long k = 0; k < g->matched; k++)
            for (size_t j = 0; j < g->nmembers; j++) {
                const sb_rank *r = &rk->r[g->members[j]];
                int64_t b = g->series[j]->blocked_ns[k];
                sb_csv_write_field(f, g->name);
                fprintf(f, ",%ld,%d,", k, r->rank);
                sb_csv_write_field(f, r->host);
                fprintf(f, ",%" PRId64 ",%.9g,%.9g,%.9g,", r->pid, (double)b / 1e3,
                        (double)g->least_ns[k] / 1e3, (double)(b - g->least_ns[k]) / 1e3);
                if (g->straggler[k] >= 0)
                    fprintf(f, "%d", g->straggler[k]);
                fputc('\n', f);
            }
    }
    return ferror(f) ? sb_fail(SB_EXIT_FAIL, "across-ranks CSV: write error") : 0;
}

/* ---- the merged report ---- */

int sb_ranks_write_merged_json(FILE *f, const sb_ranks *rk, const sb_ranks_report *reports,
                               size_t nreports)
{
    json_t *ranks = sb_ranks_json(rk, NULL); /* resets g_oom */
    json_t *root = json_pack("{s:s, s:i}", "tool", "syncbench audit", "format", 1);
    json_t *merged = json_array();
    for (size_t i = 0; i < nreports; i++) {
        json_t *o = json_object();
        set(o, "file", sb_json_str(reports[i].path));
        set(o, "host", sb_json_str(reports[i].host));
        set(o, "command", sb_json_str(reports[i].command));
        set(o, "ranks", json_integer((json_int_t)reports[i].ranks));
        append(merged, o);
    }
    set(root, "merged", merged);
    set(root, "ranks", ranks);
    return sb_json_write(f, root, g_oom, "merged report");
}
