/* `syncbench audit` command line -> sb_audit_request, and its --help. */
#ifndef SB_AUDIT_ARGS_H
#define SB_AUDIT_ARGS_H

#include <stdio.h>

#include "record/gpu_window.h"
#include "base/optdef.h"

typedef struct sb_audit_request {
    long long max_syncs; /* -1: no gate */
    const char *range;   /* --range NAME */
    long long top;
    long long depth; /* native frames per stack */
    const char *csv, *json, *trace, *keep;
    const char *markdown; /* --markdown PATH: the report as a Markdown table */
    const char *junit;    /* --junit PATH: the gate as JUnit XML */
    const char *ci;       /* --ci github|none; NULL: github under GITHUB_ACTIONS=true */
    const char *from;     /* --from DIR: report kept records, run nothing */
    int quiet, help, gpu_activity, no_python;
    /* the window of GPU activity (record/gpu_window.h): --gpu-activity-range SPEC, or
     * --gpu-activity-steps FIRST[-LAST] (instances of the step's range: --range, else the
     * --baseline file's, named by sb_audit_window_steps once that file is read); either implies
     * --gpu-activity */
    const char *gpu_range, *gpu_steps;
    int windowed;         /* one of them was given: window holds it */
    sb_gpu_window window; /* its name empty with --gpu-activity-steps until the range is known */
    int include_compile;  /* the gate counts torch.compile's compile-time calls too */
    int allow_no_cuda;    /* the gate passes a run in which no process used CUDA */
    const char *py_site;  /* "user" (default) or "innermost" */
    const char *rules;    /* --rules FILE: the user's rows of the framework table */
    char **cmd;           /* CMD [ARGS...], NULL-terminated (argv's tail); NULL with --from */
    int merge;            /* --merge: reports[0..nreports) (NULL-terminated) are --json reports */
    char **reports;
    int nreports;

    /* docs/baseline.md */
    const char *baseline;        /* --baseline FILE: the gate holds the run to its sites */
    const char *update_baseline; /* --update-baseline FILE: the run's sites written there */
    long long skip_first;        /* --skip-first N: steps left out; -1: the baseline's */
} sb_audit_request;

/* argv[0] is "audit". Options stop at the first operand or "--". 0, or exit 2 with one line.
 * With --merge only the options before the first report are read: sb_audit_merge_args
 * (cli/audit_merge_args.h) reads the rest. */
int sb_audit_parse_args(int argc, char **argv, sb_audit_request *req);
/* --gpu-activity-steps: the window's range, the step's (range: --range, else the --baseline file's;
 * NULL: none). 0, or exit 2 with one line when there is none. */
int sb_audit_window_steps(sb_audit_request *req, const char *range);
/* audit's option table, NULL-name terminated (the merge parses with it too). */
const sb_optdef *sb_audit_optdefs(void);
void sb_audit_usage(FILE *f);

#endif
