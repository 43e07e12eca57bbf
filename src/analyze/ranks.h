/* The audit across ranks (issue 18): the processes of a distributed job that have a rank (RANK
 * set, as torchrun sets it), side by side, and for every NVTX range two or more of them share,
 * the straggler of each instance.
 *
 * The rule. Instances of a range are lined up across ranks by name and order: the k-th
 * `train_step` of one rank with the k-th of every other (by start time within a rank; never by
 * time across ranks, whose clocks may be other machines'). In each instance every rank's blocked
 * time is that of its blocking calls inside it, as the analyzer attributes them (a push/pop
 * range holds the calls its thread made while it was open, nested ranges included; a start/end
 * range every thread's calls that started inside it). A sync after a collective waits for the
 * slowest rank, so the rank that blocked least arrived last: it is the instance's straggler, and
 * each other rank's blocked time minus the straggler's is its wait for it. An instance where
 * two or more ranks tie for the least names no straggler (it is counted as tied). A rank without
 * the range is left out of it; with unequal instance counts the instances are matched up to the
 * shortest.
 *
 * Limits: a rank may block for reasons of its own (its own GPU work, a copy), which the rule
 * reads as waiting; it sees only waits inside blocking CUDA calls: a collective that waits on
 * the CPU (gloo) or a straggler whose lateness is itself a blocking wait on its own GPU leaves
 * the blocked times equal.
 *
 * Two sources: an analyzed audit (one machine: sb_ranks_from_run) and the "ranks" object of
 * --json reports (ranks_read.c), so that the audits of several machines merge into one view
 * (`syncbench audit --merge`). Pure C. */
#ifndef SB_AUDIT_RANKS_H
#define SB_AUDIT_RANKS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/model.h"
#include "base/strpool.h"

struct sb_audit_analysis; /* analyze.h, which includes this header */

/* One range of one rank: every instance's blocked time, in order of start. */
typedef struct sb_rank_series {
    const char *name, *domain; /* interned in the sb_ranks pool */
    int64_t *blocked_ns;       /* per instance */
    size_t n;
} sb_rank_series;

/* One rank: what a report's "ranks" carries (the raw material of the view). */
typedef struct sb_rank {
    int rank, local_rank;
    const char *host;   /* the machine ("" unknown) */
    const char *report; /* the file it was read from ("" for the audit's own) */
    int64_t pid;        /* its first process */
    int processes;      /* processes with this rank (an exec, a child that used CUDA) */
    int complete;       /* every one's records are whole */
    double blocked_us;  /* every blocking call's host time */
    long blocking;
    int has_bubbles; /* GPU activity was recorded: bubble_us is known */
    double bubble_us;
    sb_rank_series *series; /* sorted by name */
    size_t nseries, cap_series;
    size_t order; /* insertion order (the first of two duplicates) */
} sb_rank;

/* A rank that arrived last in some instances of a range. */
typedef struct sb_rank_straggler {
    int rank;
    long instances;
    double wait_median_us; /* median over those instances of the others' mean wait */
    double wait_total_us;  /* every other rank's wait, summed over those instances */
} sb_rank_straggler;

/* A range that two or more ranks have: the instances lined up. */
typedef struct sb_rank_range {
    const char *name, *domain;
    size_t nmembers;
    size_t *members;               /* indices into sb_ranks.r, in rank order */
    const sb_rank_series **series; /* each member's */
    long matched;                  /* instances lined up: the shortest member's count */
    long longest;                  /* the longest member's count */
    long tied;                     /* matched instances that name no straggler */
    int *straggler;                /* per matched instance: its rank, -1 when tied */
    int64_t *least_ns;             /* per instance: the least blocked time */
    double *wait_us;               /* per instance: the others' mean wait (the sum of every
                                      member's excess over the least, / (members - 1)) */
    sb_rank_straggler *stragglers; /* most instances first */
    size_t nstragglers;
    double wait_total_us; /* the stragglers' wait_total_us summed */
} sb_rank_range;

typedef struct sb_ranks {
    sb_strpool strs;
    sb_rank *r; /* sorted by rank once computed */
    size_t n, cap;
    sb_rank_range *ranges; /* most wait first, then by name */
    size_t nranges;
} sb_ranks;

void sb_ranks_init(sb_ranks *rk);
void sb_ranks_free(sb_ranks *rk);

/* A new rank (zeroed but for rank, host, report and local_rank -1), or NULL out of memory. */
sb_rank *sb_ranks_add(sb_ranks *rk, int rank, const char *host, const char *report);
/* Adds a range's instances (copied) to a rank (whose ranges must have distinct names: see
 * sb_rank_duplicate_series). 0, or -1 out of memory. */
int sb_rank_add_series(sb_ranks *rk, sb_rank *r, const char *name, const char *domain,
                       const int64_t *blocked_ns, size_t n);

/* Every process of an analyzed audit with rank >= 0 (processes sharing a rank are one rank,
 * their instances in order of start), on machine `host` ("" unknown). 0, or -1 out of memory. */
int sb_ranks_from_run(sb_ranks *rk, const struct sb_audit_analysis *an, const char *host);

/* Sorts the rank's ranges by name; the second of the first two with one name, or NULL. */
const sb_rank_series *sb_rank_duplicate_series(sb_rank *r);
/* Sorts the ranks by rank; the second of the first two with one rank number (the first is the
 * one before it), or NULL when every rank is there once. */
const sb_rank *sb_ranks_duplicate(sb_ranks *rk);

/* Lines the ranges up (sorting the ranks first). Ranks must be unique. 0, or -1 out of memory. */
int sb_ranks_compute(sb_ranks *rk);

/* The view of the run's own ranks, what the audit's table and JSON add: computed by
 * sb_audit_analyze into *rk (made when NULL; an earlier view replaced), the analysis's ranks,
 * where both writers read it (every rank's host is "": the JSON names the machine). 0, or -1
 * out of memory. */
int sb_audit_compute_ranks(sb_ranks **rk, const struct sb_audit_analysis *an);

/* ---- ranks_play.c: the ranks played together ---- */
/* The run's job (two ranks or more, RANK set) replayed together (replay.h's job): each rank's
 * process that holds its collectives (gloo's of CUDA tensors, found in its records), every
 * selection each of them played alone played again with its syncs removed on every rank (the
 * user's fix applies to the same line on every rank). Each of those processes' savings then
 * holds its own figures in the job's plays, how many ranks and collectives were played together
 * and whether its figure is the job's (its slowest rank's); when the ranks cannot be played
 * together, every rank process's savings keep their figures alone, flagged (ranks_unmodelled),
 * with why. 0, or -1 out of memory. */
int sb_audit_play_ranks(struct sb_audit_analysis *an);

/* ---- out_ranks.c: the view ---- */
/* The "across ranks" section of the table: each rank's blocked time (its host with show_hosts,
 * bubbles where recorded) and, for the `top` ranges whose stragglers made the others wait
 * most, the straggler lines. Nothing when fewer than two ranks. */
void sb_ranks_write_table(FILE *f, const sb_ranks *rk, int top, int show_hosts);
/* The "ranks" object of the JSON reports (struct json_t: jansson's), NULL out of memory. host:
 * every rank's machine (one machine's audit: its environment's host), or NULL for each rank's
 * own (a merge). */
struct json_t *sb_ranks_json(const sb_ranks *rk, const char *host);
/* The tidy CSV of the lined-up instances: one row per range x instance x rank. */
int sb_ranks_write_csv(FILE *f, const sb_ranks *rk);

/* ---- ranks_read.c: a --json report's ranks ---- */
typedef struct sb_ranks_report {
    const char *path;
    const char *host;    /* its environment's host, "" */
    const char *command; /* "" */
    size_t ranks;        /* ranks it brought */
} sb_ranks_report;
/* Adds the ranks of the report at `path` (`syncbench audit --json`, or a merged report) to rk;
 * info (may be NULL) gets what the report says about itself. 0, or exit 2 with one line naming
 * the file and what is wrong. */
int sb_ranks_read_report(sb_ranks *rk, const char *path, sb_ranks_report *info);
/* The merged report: the reports merged and the ranks object. */
int sb_ranks_write_merged_json(FILE *f, const sb_ranks *rk, const sb_ranks_report *reports,
                               size_t nreports);

#endif
