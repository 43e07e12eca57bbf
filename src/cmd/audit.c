/* `syncbench audit [options] -- CMD [ARGS...]`: the flow. Options -> outputs checked
 * (audit_outputs.c) -> CMD resolved, the injection library found and loadable (audit_libs.c) ->
 * CMD run, every descendant waited for, signals passed on (audit_launch.c) -> records read,
 * analyzed, reported -> gate -> under GitHub Actions, the annotations and the step summary.
 * The injection library (inject/) records; src/model/ reads, src/analyze/ analyzes, src/report/
 * writes. */
#include "cmd/audit.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report/report.h"
#include "analyze/frameworks.h"
#include "cmd/audit_baseline.h"
#include "cmd/audit_calibrate.h"
#include "cmd/audit_launch.h"
#include "cmd/audit_libs.h"
#include "cmd/audit_listen.h"
#include "cmd/audit_merge.h"
#include "cmd/audit_outputs.h"
#include "cmd/audit_records_dir.h"
#include "cli/audit_args.h"
#include "cli/audit_merge_args.h"
#include "base/env.h"
#include "base/envvars.h"
#include "base/error.h"
#include "base/nvml.h"
#include "base/textutil.h"
#include "sinks/github.h"
#include "sinks/outfile.h"
#include "outputs/formats.h"

/* --baseline and --update-baseline (cmd/audit_baseline.c) */
static sb_audit_bl baseline;

/* The command line as one string, for the report. */
static void join_command(char **cmd, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; cmd[i] && len + 1 < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? " " : "", cmd[i]);
}

/* GitHub Actions: the gate's verdicts as annotations on stdout (stderr when a report takes
 * stdout: they must not land inside it; the runner reads workflow commands on both), the
 * summary appended to $GITHUB_STEP_SUMMARY, both by the one GitHub writer. */
static int report_github(const sb_audit_analysis *an, const sb_audit_opts *o, const sb_env *env,
                         const sb_audit_output *outs, int nout)
{
    FILE *to = stdout;
    for (int i = 0; i < nout; i++)
        if (outs[i].out.to_stdout)
            to = stderr;
    sb_ci_verdicts l;
    int rc = sb_audit_gate_verdicts(an, o, &l);
    if (rc)
        return rc;
    sb_memtext m;
    if (!sb_memtext_open(&m)) {
        sb_ci_verdicts_free(&l);
        return sb_fail(SB_EXIT_FAIL, "audit: out of memory");
    }
    rc = sb_audit_write_summary(m.f, an, o, env);
    char *md = sb_memtext_close(&m);
    if (!rc && !md)
        rc = sb_fail(SB_EXIT_FAIL, "audit: out of memory");
    if (!rc)
        rc = sb_gh_write(to, &l, md, m.len);
    free(md);
    sb_ci_verdicts_free(&l);
    return rc;
}

/* One report. On stdout under GitHub, through the guard (sinks/github.h): no text of the
 * records (a range, a file, a symbol) begins a line GitHub would run as a command. */
static int write_output(const sb_audit_output *out, const sb_audit_analysis *an,
                        const sb_audit_opts *o, const sb_env *env, int github)
{
    FILE *f = github && out->out.to_stdout ? sb_gh_guard(out->out.f) : out->out.f;
    if (!f)
        return sb_fail(SB_EXIT_FAIL, "audit: out of memory");
    int rc = out->format->audit(f, an, o, env);
    if (f != out->out.f && fclose(f) != 0 && !rc)
        rc = sb_fail(SB_EXIT_FAIL, "audit: writing to stdout failed");
    return rc;
}

static int analyze_and_report(const sb_audit_request *req, const char *dir, sb_audit_output *outs,
                              int nout, const char *cmdline, double wall_s, long long t0,
                              const sb_audit_listener *heard, int *gate_rc)
{
    sb_audit_run *run = NULL;
    int rc = sb_audit_load_dir(dir, &run);
    if (!rc && (rc = sb_audit_set_status(run, heard->procs, heard->n)) != 0)
        sb_audit_free(run);
    if (!rc && req->from && !sb_audit_nprocs(run)) { /* nothing to report, nothing to gate */
        char shown[PATH_MAX];
        rc = sb_fail(SB_EXIT_USAGE, "audit: --from %s: no records (proc-*.jsonl) in the folder",
                     (sb_escape(req->from, shown, sizeof shown), shown));
        sb_audit_free(run);
    }
    if (rc)
        return rc;
    if (wall_s < 0) /* --from: the records' own span, their first command */
        sb_audit_records_span(run, &cmdline, &wall_s);
    sb_audit_set_wall(run, cmdline, wall_s, t0);
    sb_audit_opts o;
    sb_audit_opts_default(&o);
    o.max_syncs = req->max_syncs;
    o.range = req->range;
    o.top = (int)req->top;
    o.py_innermost = req->py_site && !strcmp(req->py_site, "innermost");
    o.include_compile = req->include_compile;
    o.allow_no_cuda = req->allow_no_cuda;
    o.baseline = baseline.gate;
    o.baseline_skip_first = (long)req->skip_first;
    sb_audit_analysis *an = NULL;
    rc = sb_audit_analyze(run, &o, &an);
    sb_env env;
    memset(&env, 0, sizeof env);
    sb_env_host(&env, 0, NULL);
    /* cut on a character boundary when the command line is longer than the record's field */
    size_t room = sizeof env.command_line - sizeof "syncbench audit -- ";
    snprintf(env.command_line, sizeof env.command_line, "syncbench audit -- %.*s",
             (int)(strlen(cmdline) < room ? strlen(cmdline) : room), cmdline);
    /* the driver from NVML, where there is one; the audit itself opens no CUDA context */
    if (sb_nvml_open() == 0) {
        sb_nvml_driver_version(env.driver, sizeof env.driver);
        sb_nvml_close();
    }
    if (!rc && !req->quiet)
        sb_audit_write_table(stderr, an, &o);
    int github = sb_ci_github(req->ci);
    for (int i = 0; !rc && i < nout; i++) {
        if ((rc = sb_out_open(&outs[i].out, &env)) != 0)
            break;
        int wrc = write_output(&outs[i], an, &o, &env, github);
        rc = wrc ? wrc : sb_out_commit(&outs[i].out);
        if (rc)
            sb_out_abort(&outs[i].out);
    }
    /* with no process that used CUDA the gate fails, nothing was watched (a whole-run gate
     * passes with --allow-no-cuda; a range gate fails then too: its range was never entered) */
    if (!rc)
        *gate_rc = sb_audit_gate(an, &o, stderr);
    if (!rc && github)
        rc = report_github(an, &o, &env, outs, nout);
    if (!rc)
        rc = sb_audit_bl_write(req, &baseline, an, &o);
    sb_audit_analysis_free(an);
    sb_audit_free(run);
    return rc;
}

/* --from: report kept records; nothing runs, nothing is heard. */
static int report_kept(const sb_audit_request *req, sb_audit_output *outs, int nout)
{
    static sb_audit_listener none;
    struct stat st;
    if (stat(req->from, &st) != 0 || !S_ISDIR(st.st_mode))
        return sb_fail(SB_EXIT_USAGE, "audit: --from %s: %s", req->from,
                       errno && stat(req->from, &st) != 0 ? strerror(errno) : "not a folder");
    int gate_rc = 0;
    int rc = analyze_and_report(req, req->from, outs, nout, "", -1, 0, &none, &gate_rc);
    return rc ? rc : gate_rc;
}

/* --rules FILE: the user's rows of the framework table, read before anything runs (a bad file
 * is one line and exit 2, CMD never started) and kept for the analysis until the audit ends. */
static int load_rules(const sb_audit_request *req)
{
    if (!req->rules)
        return 0;
    static sb_fw_row *rows;
    size_t n = 0;
    char err[1024];
    if (sb_fw_file_load(req->rules, &rows, &n, err, sizeof err) != 0)
        return sb_fail(SB_EXIT_USAGE, "audit: %s", err);
    sb_fw_use_user_rows(rows, n);
    return 0;
}

/* --gpu-activity's calibration (audit_calibrate.c), unless SYNCBENCH_ACTIVITY_CALIBRATE=0, a
 * developer's knob (docs/dev/testing.md) for timing many audited runs of a program whose replay
 * is not wanted: said on stderr, so that such a run is not taken for a whole one. */
static void calibrate(const char *dir)
{
    if (sb_env_is(SB_ENV_ACTIVITY_CALIBRATE, "0"))
        fprintf(stderr, "syncbench: audit: SYNCBENCH_ACTIVITY_CALIBRATE=0: no calibration; the "
                        "replay takes out only the time each call recorded\n");
    else
        sb_audit_calibrate(dir);
}

int sb_cmd_audit(int argc, char **argv)
{
    sb_audit_ignore_sigpipe();
    sb_audit_request req;
    int rc = sb_audit_parse_args(argc, argv, &req);
    if (rc)
        return rc;
    if (req.help) {
        sb_audit_usage(stdout);
        return 0;
    }
    if (req.merge) { /* the reports of several audits: nothing runs */
        rc = sb_audit_merge_args(argc, argv, &req);
        return rc ? rc : sb_cmd_audit_merge(&req);
    }
    if ((rc = load_rules(&req)) != 0)
        return rc;
    static sb_audit_output outs[SB_OUTPUT_FORMATS_MAX];
    int nout = 0;
    if ((rc = sb_audit_prepare_outputs(&req, outs, &nout, &baseline)) != 0 ||
        (rc = sb_audit_bl_load(&req, &baseline)) != 0)
        return rc;
    /* --gpu-activity-steps: the step is --range's, else the baseline file's */
    const char *step = req.range                                  ? req.range
                       : baseline.gate && baseline.gate->per_step ? baseline.gate->range
                                                                  : NULL;
    if ((rc = sb_audit_window_steps(&req, step)) != 0)
        return rc;
    if (req.from)
        return report_kept(&req, outs, nout);
    char path[PATH_MAX], lib[PATH_MAX], cupti[PATH_MAX], dir[PATH_MAX];
    if ((rc = sb_audit_resolve_command(req.cmd[0], path, sizeof path)) != 0)
        return rc;
    if ((rc = sb_audit_refuse_inputs(outs, nout, &baseline, path, req.cmd)) != 0)
        return rc;
    if ((rc = sb_audit_find_injection(lib, sizeof lib, cupti, sizeof cupti)) != 0)
        return rc;
    char waits[PATH_MAX];
    if ((rc = sb_audit_find_waits(&req, lib, waits, sizeof waits)) != 0)
        return rc;
    if ((rc = sb_audit_make_records_dir(&req, dir, sizeof dir)) != 0)
        return rc;
    static sb_audit_listener heard;
    if ((rc = sb_audit_listen(&heard)) != 0)
        return rc;
    if ((rc = sb_audit_set_env(&req, lib, cupti, dir, heard.name)) != 0)
        return rc;
    if (req.gpu_activity)
        calibrate(dir);
    sb_audit_ran ran;
    if ((rc = sb_audit_launch(req.cmd, waits, &heard, &ran)) != 0) {
        if (!req.keep)
            sb_audit_remove_records(dir);
        return rc;
    }

    char cmdline[4096];
    join_command(req.cmd, cmdline, sizeof cmdline);
    int gate_rc = 0;
    rc = analyze_and_report(&req, dir, outs, nout, cmdline, ran.wall_s, ran.t0, &heard, &gate_rc);
    sb_audit_listen_close(&heard);
    if (!req.keep)
        sb_audit_remove_records(dir);
    int code = sb_audit_exit_code(ran.status);
    if (rc)
        return code ? code : rc;
    sb_audit_die_of_sigint(ran.status);
    return code ? code : gate_rc;
}
