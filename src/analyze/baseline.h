/* A sync baseline (`syncbench audit --baseline FILE`, `--update-baseline FILE`,
 * docs/baseline.md): the blocking sites a run is known to make, each with its budget per step
 * (per instance of an NVTX range) or per run, read from and written to an INI file
 * (baseline_file.c), and a run held to it (baseline_diff.c): new sites, sites over budget, gone,
 * moved and changed ones. */
#ifndef SB_BASELINE_H
#define SB_BASELINE_H

#include <stddef.h>

#include "analyze/analyze.h"

#define SB_BASELINE_VERSION 1

/* A [site.N] section. Its key: file, function, text, operation, library_line and thread. */
typedef struct sb_bl_site {
    char *file, *function, *text, *operation, *library_line;
    char *thread;  /* "" : every thread; else a tid (decimal) */
    char *note;    /* "" when none */
    char *section; /* "site.1" */
    int line;      /* informational: where it was; 0 unknown */
    long long budget;
    long skip_first; /* -1: the file's */
    int at;          /* the line of its section header in the file */
} sb_bl_site;

typedef struct sb_baseline {
    char *path;
    int per_step; /* per = step (per instance of range) or run */
    char *range;  /* NULL with per = run */
    long skip_first;
    double syncs_per_step, blocked_us_per_step; /* recorded; -1 when not given */
    sb_bl_site *sites;
    size_t n;
} sb_baseline;

/* Reads and checks FILE. 0, or -1 with one line "FILE:LINE: [SECTION]: problem" in err. */
int sb_baseline_load(const char *path, sb_baseline **out, char *err, size_t errn);
void sb_baseline_free(sb_baseline *b);

/* A site's standing against the baseline. */
typedef enum { SB_BL_KNOWN, SB_BL_NEW, SB_BL_CHANGED, SB_BL_GONE } sb_bl_kind;

typedef struct sb_bl_item {
    sb_bl_kind kind;
    const sb_bl_site *base; /* the baseline's entry; NULL for a new site; for a changed site
                               the entry of the same file, function and operation */
    /* the key as this run made it (a gone site: the baseline's) */
    const char *file, *function, *text, *operation, *library_line, *thread;
    const char *site; /* the report's site ("train.py:57 in step"), interned; "" when gone */
    int line;         /* this run's line (the first call's); the baseline's when gone */
    /* what the analysis found of the first call (class, rule, Python line, operation) */
    const sb_audit_call_info *first;
    long now;          /* the most calls in one step counted (per run: the run's) */
    long calls;        /* every counted call */
    double blocked_us; /* their host time blocked */
    int over;          /* known: now > budget */
    int moved;         /* known: another line than the baseline's */
} sb_bl_item;

typedef struct sb_bl_diff {
    const sb_baseline *b;
    const char *range; /* the range a step is (--range, else the file's); NULL: per run */
    long skip_first;   /* --skip-first, else the file's */
    long steps;        /* instances counted (skip_first left out); per run: 1 */
    long entered;      /* instances of the range in all */
    long calls;        /* counted blocking calls */
    double blocked_us;
    double syncs_per_step, blocked_us_per_step; /* this run's */
    sb_bl_item *items;
    size_t n;
    int failed;               /* a new or changed site, one over budget, or a range never entered */
    struct sb_strpool *pool_; /* the keys' text */
} sb_bl_diff;

/* The analyzed run held to o->baseline: every site the run made (gated: sb_audit_gated) or the
 * baseline holds, one item each. 0, or -1 out of memory. */
int sb_baseline_diff(const sb_audit_analysis *an, const sb_audit_opts *o, sb_bl_diff *d);
/* The same against another baseline b (NULL: none, every site new): --update-baseline's. */
int sb_baseline_diff_of(const sb_audit_analysis *an, const sb_audit_opts *o, const sb_baseline *b,
                        sb_bl_diff *d);
void sb_baseline_diff_free(sb_bl_diff *d);
const char *sb_bl_kind_name(sb_bl_kind k);

/* A value as the file holds it, the same written and matched: control characters as '?', cut
 * where an inline comment (" ;") would start and at SB_BL_VALUE_MAX bytes on a character
 * boundary (inih reads lines of up to 199 bytes), blanks trimmed. Into buf; buf. */
#define SB_BL_VALUE_MAX 180
const char *sb_bl_norm(const char *s, char *buf, size_t n);

/* --update-baseline: the run's sites as a baseline (per step of range, or per run), each with
 * the most calls of one counted step (or the run's) as its budget; the notes and threads of old
 * (may be NULL) kept for sites of the same key. Written to tmp, which the caller renames. 0, or
 * -1 with errno. */
int sb_baseline_write(FILE *f, const sb_audit_analysis *an, const sb_audit_opts *o,
                      const sb_baseline *old);

#endif
