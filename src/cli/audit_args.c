#include "cli/audit_args.h"

#include <stddef.h>
#include <string.h>

#include "base/error.h"
#include "record/records.h"
#include "cli/args.h"
#include "sinks/github.h"

#define AT(field) offsetof(sb_audit_request, field)

/* clang-format off */
static const sb_optdef audit_optdefs[] = {
    {"max-syncs", 0, NULL, SB_OPT_INT, "N", 0, 1e15, NULL, AT(max_syncs), NULL, "Gate:",
     "fail (exit 1) when the run makes more than N blocking\n"
     "calls (explicit and implicit syncs; polls do not count)"},
    {"range", 0, NULL, SB_OPT_TEXT, "NAME", 0, 0, NULL, AT(range), NULL, NULL,
     "with --max-syncs: count inside every instance of the\n"
     "NVTX push/pop range NAME instead (nested ranges included);\n"
     "a range never entered fails the gate. With --baseline,\n"
     "--update-baseline or --gpu-activity-steps: a step's range"},
    {"baseline", 0, NULL, SB_OPT_TEXT, "FILE", 0, 0, NULL, AT(baseline), NULL, NULL,
     "fail (exit 1) on a blocking site FILE does not hold, or\n"
     "one over its budget per step (per instance of the file's\n"
     "range, or --range's) or per run; report new, over-budget,\n"
     "moved, changed and gone sites (docs/baseline.md)"},
    {"update-baseline", 0, NULL, SB_OPT_TEXT, "FILE", 0, 0, NULL, AT(update_baseline), NULL,
     NULL,
     "write this run's sites to FILE as the baseline (each with\n"
     "its most calls in one step as its budget), keeping the\n"
     "notes of the sites that remain; replaced atomically"},
    {"skip-first", 0, NULL, SB_OPT_INT, "N", 0, 1e9, NULL, AT(skip_first), NULL, NULL,
     "with --baseline or --update-baseline: leave the first N\n"
     "steps of each process out (warm-up); overrides the file's"},
    {"include-compile", 0, NULL, SB_OPT_FLAG, NULL, 0, 0, NULL, AT(include_compile), NULL, NULL,
     "with --max-syncs: count the calls made while torch.compile\n"
     "compiles, autotunes and benchmarks, and those of its\n"
     "workers, too (by default they are apart: reported, not\n"
     "gated)"},
    {"allow-no-cuda", 0, NULL, SB_OPT_FLAG, NULL, 0, 0, NULL, AT(allow_no_cuda), NULL, NULL,
     "with --max-syncs: pass a run in which no process used\n"
     "CUDA (a CPU-only job); by default such a run fails the\n"
     "gate: nothing was watched (a missing GPU or driver, a CPU\n"
     "fallback, an environment that dropped the library)"},
    {"csv", 0, NULL, SB_OPT_TEXT, "PATH", 0, 0, NULL, AT(csv), NULL, "Output:",
     "one row per process x class x range x call site"},
    {"json", 0, NULL, SB_OPT_TEXT, "PATH", 0, 0, NULL, AT(json), NULL, NULL,
     "the report with the environment record"},
    {"markdown", 0, NULL, SB_OPT_TEXT, "PATH", 0, 0, NULL, AT(markdown), NULL, NULL,
     "the report as a Markdown table (pull requests, wikis): per\n"
     "site its calls, blocked time, saving, operation and fix"},
    {"trace", 0, NULL, SB_OPT_TEXT, "PATH", 0, 0, NULL, AT(trace), NULL, NULL,
     "Chrome trace (Perfetto, chrome://tracing): host calls\n"
     "with the syncs marked, kernels and copies per stream,\n"
     "NVTX ranges, launch -> kernel flows. Records every API\n"
     "call (costs more than the default mode)"},
    {"top", 0, NULL, SB_OPT_INT, "N", 0, 1000, "10", AT(top), NULL, NULL,
     "call sites listed in the table and the gate's message\n(default 10)"},
    {"quiet", 'q', NULL, SB_OPT_FLAG, NULL, 0, 0, NULL, AT(quiet), NULL, NULL,
     "no table (the gate's verdict is still printed)"},
    {"junit", 0, NULL, SB_OPT_TEXT, "PATH", 0, 0, NULL, AT(junit), NULL, "CI:",
     "with --max-syncs: the gate as JUnit XML (GitLab, Jenkins,\n"
     "Buildkite): one testcase, the range or the run, failed\n"
     "with the verdict and each offending site's fix"},
    SB_CI_OPTDEF(AT(ci), "a failed gate's offending Python lines"),
    {"depth", 0, NULL, SB_OPT_INT, "N", 0, 32, "16", AT(depth), NULL, "Recording:",
     "native frames kept per call stack (default 16; 0: no\ncall sites)"},
    {"gpu-activity", 0, NULL, SB_OPT_FLAG, NULL, 0, 0, NULL, AT(gpu_activity), NULL, NULL,
     "record the GPU's kernels and copies too: the GPU idle\n"
     "time after each sync (bubble), GPU busy %, what removing\n"
     "the syncs would save (the replay), and calls that waited\n"
     "for the GPU. A cost per launch (the default records only\n"
     "the calls that can block), timed first (about 1 s) and\n"
     "taken out of the replay; --trace implies it"},
    {"gpu-activity-range", 0, NULL, SB_OPT_TEXT, "NAME[@DOM][:N[-M]]", 0, 0, NULL, AT(gpu_range),
     NULL, NULL,
     "--gpu-activity for a window only: from the start of the\n"
     "Nth instance of the NVTX range NAME to the end of the\n"
     "Mth (default: the first only; @DOM: in that domain, @: the\n"
     "default one); elsewhere the default mode's cost and\n"
     "CUPTI's record of each launch. The predicted savings\n"
     "are scaled from the window to the run"},
    {"gpu-activity-steps", 0, NULL, SB_OPT_TEXT, "N[-M]", 0, 0, NULL, AT(gpu_steps), NULL, NULL,
     "the same window over steps N to M: instances of the\n"
     "step's range (--range NAME, else --baseline's range)"},
    {"keep", 0, NULL, SB_OPT_TEXT, "DIR", 0, 0, NULL, AT(keep), NULL, NULL,
     "keep the raw record streams (proc-PID.jsonl) in DIR"},
    {"from", 0, NULL, SB_OPT_TEXT, "DIR", 0, 0, NULL, AT(from), NULL, NULL,
     "run nothing: report the records an earlier --keep DIR\n"
     "left (no CMD; the wall time is the records' span)"},
    {"py-site", 0, NULL, SB_OPT_TEXT, "user|innermost", 0, 0, "user", AT(py_site), NULL,
     "Python:",
     "the Python line a sync is shown at: the innermost frame of\n"
     "your code, skipping the standard library and installed\n"
     "packages (user, the default), or the innermost frame"},
    {"no-python", 0, NULL, SB_OPT_FLAG, NULL, 0, 0, NULL, AT(no_python), NULL, NULL,
     "record no Python stacks (sites are native frames)"},
    {"rules", 0, NULL, SB_OPT_TEXT, "FILE", 0, 0, NULL, AT(rules), NULL, NULL,
     "your own rows of the framework table (docs/frameworks.md):\n"
     "an INI file, a section per row; tried before the built-in\n"
     "rows"},
    {"merge", 0, NULL, SB_OPT_FLAG, NULL, 0, 0, NULL, AT(merge), NULL, "Across ranks:",
     "A.json B.json ...: run nothing; line the ranks of these\n"
     "--json reports (one audit per machine) up in one view:\n"
     "each rank's blocked time, each range's straggler and the\n"
     "others' wait for it. --json and --csv write the merged\n"
     "view; options may follow the reports"},
    {"help", 'h', NULL, SB_OPT_FLAG, NULL, 0, 0, NULL, AT(help), NULL, NULL, "this text"},
    {NULL, 0, NULL, 0, NULL, 0, 0, NULL, 0, NULL, NULL, NULL},
};
/* clang-format on */

const sb_optdef *sb_audit_optdefs(void)
{
    return audit_optdefs;
}

/* --gpu-activity-range and --gpu-activity-steps: read, checked against each other and the
 * options they cannot go with; either implies --gpu-activity. 0, or exit 2 with one line. */
static int window_args(sb_audit_request *req)
{
    char why[200];
    if (!req->gpu_range && !req->gpu_steps)
        return 0;
    const char *opt = req->gpu_range ? "--gpu-activity-range" : "--gpu-activity-steps";
    if (req->gpu_range && req->gpu_steps)
        return sb_fail(SB_EXIT_USAGE, "audit: --gpu-activity-range and --gpu-activity-steps "
                                      "both name the window: give one");
    if (req->trace)
        return sb_fail(SB_EXIT_USAGE,
                       "audit: %s: --trace records the GPU's activity over the "
                       "whole run; give one or the other",
                       opt);
    if (req->gpu_range && sb_gpu_window_parse(req->gpu_range, &req->window, why, sizeof why))
        return sb_fail(SB_EXIT_USAGE,
                       "audit: --gpu-activity-range %s: %s (expected "
                       "NAME[@DOMAIN][:FIRST[-LAST]])",
                       req->gpu_range, why);
    if (req->gpu_steps) {
        memset(&req->window, 0, sizeof req->window);
        req->window.any_domain = 1; /* as --range counts a step: its name in any domain */
        if (sb_gpu_window_bounds(req->gpu_steps, &req->window.first, &req->window.last, why,
                                 sizeof why))
            return sb_fail(SB_EXIT_USAGE,
                           "audit: --gpu-activity-steps %s: %s (expected "
                           "FIRST[-LAST], counted from 1)",
                           req->gpu_steps, why);
        if (!req->range && !req->baseline)
            return sb_fail(SB_EXIT_USAGE, "audit: --gpu-activity-steps needs the range a step is: "
                                          "--range NAME or --baseline FILE");
    }
    if (!req->from) /* --from: refused below, with the other recording options */
        req->gpu_activity = 1;
    req->windowed = 1;
    return 0;
}

int sb_audit_window_steps(sb_audit_request *req, const char *range)
{
    if (!req->gpu_steps)
        return 0;
    if (!range || !range[0])
        return sb_fail(SB_EXIT_USAGE,
                       "audit: --gpu-activity-steps: --baseline %s counts per run, "
                       "not per step: give the range a step is (--range NAME)",
                       req->baseline ? req->baseline : "");
    if (strlen(range) > SB_AUDIT_RANGE_NAME_MAX) /* --range's own check comes first */
        return sb_fail(SB_EXIT_USAGE,
                       "audit: --gpu-activity-steps: the step's range is longer "
                       "than %d bytes",
                       SB_AUDIT_RANGE_NAME_MAX);
    snprintf(req->window.name, sizeof req->window.name, "%s", range);
    return 0;
}

int sb_audit_parse_args(int argc, char **argv, sb_audit_request *req)
{
    memset(req, 0, sizeof *req);
    sb_optdefs_defaults(audit_optdefs, req);
    req->max_syncs = -1;
    req->skip_first = -1;
    sb_argtable t = {audit_optdefs, req, NULL};
    int first;
    int rc = sb_args_parse_in_order("audit: ", &t, 1, argc, argv, &first);
    if (rc || req->help)
        return rc;
    if (req->merge) /* the reports and what follows them: cli/audit_merge_args.c */
        return 0;
    /* `--csv -- true`: the "--" was taken as the option's value */
    const struct {
        const char *name, *value;
    } values[] = {{"csv", req->csv},
                  {"json", req->json},
                  {"trace", req->trace},
                  {"markdown", req->markdown},
                  {"keep", req->keep},
                  {"range", req->range},
                  {"py-site", req->py_site},
                  {"from", req->from},
                  {"junit", req->junit},
                  {"ci", req->ci},
                  {"rules", req->rules},
                  {"baseline", req->baseline},
                  {"update-baseline", req->update_baseline},
                  {"gpu-activity-range", req->gpu_range},
                  {"gpu-activity-steps", req->gpu_steps}};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        if (values[i].value && !strcmp(values[i].value, "--"))
            return sb_fail(SB_EXIT_USAGE, "audit: --%s needs a value before \"--\"",
                           values[i].name);
    if (strcmp(req->py_site, "user") && strcmp(req->py_site, "innermost"))
        return sb_fail(SB_EXIT_USAGE, "audit: --py-site %s: expected user or innermost",
                       req->py_site);
    if (req->range && !req->range[0])
        return sb_fail(SB_EXIT_USAGE, "audit: --range: empty range name");
    if (req->range && strlen(req->range) > SB_AUDIT_RANGE_NAME_MAX)
        return sb_fail(SB_EXIT_USAGE,
                       "audit: --range: longer than %d bytes (the recorded names are cut there)",
                       SB_AUDIT_RANGE_NAME_MAX);
    int gated = req->max_syncs >= 0 || req->baseline;
    if (req->range && !gated && !req->update_baseline && !req->gpu_steps)
        return sb_fail(SB_EXIT_USAGE, "audit: --range needs --max-syncs N (the gate it scopes), "
                                      "--baseline FILE, --update-baseline FILE or "
                                      "--gpu-activity-steps N[-M]");
    if ((rc = window_args(req)) != 0)
        return rc;
    if (req->include_compile && !gated && !req->update_baseline)
        return sb_fail(SB_EXIT_USAGE, "audit: --include-compile needs --max-syncs N (the gate it "
                                      "widens) or --baseline FILE");
    if (req->allow_no_cuda && !gated)
        return sb_fail(SB_EXIT_USAGE, "audit: --allow-no-cuda needs --max-syncs N (the gate it "
                                      "relaxes) or --baseline FILE");
    if (req->junit && !gated)
        return sb_fail(SB_EXIT_USAGE, "audit: --junit needs --max-syncs N (the gate it reports) "
                                      "or --baseline FILE");
    if (req->skip_first >= 0 && !req->baseline && !req->update_baseline)
        return sb_fail(SB_EXIT_USAGE,
                       "audit: --skip-first needs --baseline FILE or --update-baseline FILE");
    if ((rc = sb_ci_check("audit: ", req->ci)) != 0)
        return rc;
    if (req->from) {
        if (first < argc)
            return sb_fail(SB_EXIT_USAGE, "audit: --from DIR reports kept records: no CMD");
        if (req->keep || req->gpu_activity || req->windowed || req->no_python || req->depth != 16)
            return sb_fail(SB_EXIT_USAGE,
                           "audit: --from DIR: recording options (--keep, --gpu-activity, "
                           "--gpu-activity-range, --gpu-activity-steps, --no-python, --depth) do "
                           "not apply");
        return 0;
    }
    if (first >= argc)
        return sb_fail(SB_EXIT_USAGE,
                       "audit: no command (usage: syncbench audit [options] -- CMD [ARGS...])");
    req->cmd = argv + first;
    return 0;
}

/* --help: the text around the options. */
static const char usage_head[] =
    "usage: syncbench audit [options] -- CMD [ARGS...]\n"
    "       syncbench audit --merge A.json B.json ... [--json OUT] [--csv OUT]\n"
    "\n"
    "Runs CMD (any program that uses CUDA, and the CUDA programs it starts) with\n"
    "syncbench's CUPTI injection library and reports, when it ends, every host API call\n"
    "that blocked: explicit syncs (device, stream, event), implicit ones (blocking copies,\n"
    "async copies to or from pageable memory, cudaMemset, cudaFree, other calls that\n"
    "waited for the GPU) and, apart, polls (cudaStreamQuery, cudaEventQuery). For each:\n"
    "count, host time blocked, the innermost NVTX range and the call site: the Python\n"
    "line (file:line in function, with its source text) for a thread that runs Python,\n"
    "the native frame otherwise; what made it (.item(), a boolean mask, an explicit\n"
    "sync, ...) and the sync-free fix, with the scenario that prices it; with\n"
    "--gpu-activity also the GPU idle time that followed (the bubble). The report goes to\n"
    "stderr; CMD's output is its own.\n";
static const char usage_tail[] =
    "\n"
    "PATH - is stdout. Exit codes: CMD's own (128+N when a signal N ended it); 1 when CMD\n"
    "succeeded but the gate failed (or a process's records are incomplete: lost to a full\n"
    "disk, a file that could not be created, a kill; or no process used CUDA, unless\n"
    "--allow-no-cuda); 2 bad options; 3 CUPTI cannot be\n"
    "loaded; 126 CMD is not executable, 127 not found. --merge: 0, or 2 with one line for a\n"
    "report it cannot merge (nothing written).\n";

void sb_audit_usage(FILE *f)
{
    sb_args_help(f, usage_head, &(sb_argtable){audit_optdefs, NULL, NULL}, 1, usage_tail);
}
