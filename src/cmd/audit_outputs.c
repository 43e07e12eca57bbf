/* The audit's outputs checked before anything is read or run: each report's file, the step
 * summary and --update-baseline's file, against each other, the records' folder and its files,
 * CMD and the files its command line names, and syncbench's own files. */
#include "cmd/audit_outputs.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/audit_libs.h"
#include "record/records.h"
#include "base/arrays.h"
#include "base/error.h"
#include "base/optdef.h"
#include "sinks/github.h"
#include "sinks/outset.h"

/* $GITHUB_STEP_SUMMARY under --ci github, checked as the outputs are (state SB_OUT_NONE when
 * there is none): the summary is appended to it at the end. */
static sb_out_file step_summary;

/* An output (or $GITHUB_STEP_SUMMARY) must not overwrite what the run reads or runs: CMD itself,
 * a file its command line names (`audit --csv victim.sh -- ./victim.sh`, `--json in.txt -- cat
 * --file=in.txt`, `-- sh -c 'cat in.txt'`: sinks/outset.h), or syncbench's own files. */
int sb_audit_refuse_inputs(const sb_audit_output *outs, int nout, const sb_audit_bl *baseline,
                           const char *cmd_path, char **cmd)
{
    static char files[SB_AUDIT_OWN_FILES][PATH_MAX];
    const char *own[SB_AUDIT_OWN_FILES + 1], *command[] = {cmd_path, NULL};
    char **named = NULL;
    sb_audit_own_files(files, own);
    int rc = sb_outset_command_inputs(cmd, &named);
    for (int i = 0; !rc && i <= nout; i++) {
        const sb_out_file *o = i < nout ? &outs[i].out : &step_summary;
        if (o->state == SB_OUT_NONE)
            continue;
        if (!(rc = sb_out_check_inputs(o, command)) &&
            !(rc = sb_out_check_inputs(o, (const char *const *)named)))
            rc = sb_out_check_files(o, own, "is syncbench's own file");
    }
    if (!rc && baseline->out.state && !(rc = sb_out_check_inputs(&baseline->out, command)) &&
        !(rc = sb_out_check_inputs(&baseline->out, (const char *const *)named)))
        rc = sb_out_check_files(&baseline->out, own, "is syncbench's own file");
    sb_outset_free_paths(named);
    return rc;
}

/* The files of a records folder the analysis reads (proc-*.jsonl, calibration.json), as inputs
 * an output must not be: a record may be a link to a file elsewhere, which the report's rename
 * would replace. NULL-terminated in paths (the caller frees each); 0, or exit 1. */
static int folder_inputs(const char *dir, char ***paths)
{
    *paths = NULL;
    DIR *d = opendir(dir);
    if (!d)
        return 0; /* --keep's folder does not exist yet; --from's is checked by report_kept */
    size_t n = 0, cap = 0;
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d))) {
        if (strncmp(e->d_name, "proc-", 5) && strcmp(e->d_name, SB_AUDIT_CALIBRATION_FILE))
            continue;
        char *path = NULL;
        if (sb_grow(paths, &cap, n + 1, sizeof **paths) < 0 ||
            asprintf(&path, "%s/%s", dir, e->d_name) < 0)
            rc = sb_fail(SB_EXIT_FAIL, "audit: out of memory");
        else
            (*paths)[n++] = path, (*paths)[n] = NULL;
    }
    closedir(d);
    return rc;
}

static void free_inputs(char **paths)
{
    for (size_t i = 0; paths && paths[i]; i++)
        free(paths[i]);
    free(paths);
}

/* --update-baseline's file, checked as an output is: not another output's, not in the records'
 * folder, not one of its files, not --rules' or --baseline's. */
static int prepare_update(const sb_audit_request *req, sb_audit_bl *baseline, const char *folder,
                          char **inputs, sb_out_file *const *earlier, size_t n,
                          const sb_outset_rules *rules)
{
    const char *path = req->update_baseline;
    int rc = sb_outset_add(&baseline->out, "update-baseline", path, rules, earlier, n);
    if (!rc && folder)
        rc = sb_out_check_folder(&baseline->out, req->from ? "--from" : "--keep", folder);
    if (!rc)
        rc = sb_out_check_inputs(&baseline->out, (const char *const *)inputs);
    const char *files[3] = {NULL};
    size_t k = 0;
    if (req->rules)
        files[k++] = req->rules;
    if (req->baseline)
        files[k++] = req->baseline;
    if (!rc)
        rc = sb_out_check_inputs(&baseline->out, files);
    return rc;
}

/* The outputs, checked before anything is read or run: writable, no two the same file, none
 * in the folder whose records are read (--from) or written and read (--keep), where it would
 * replace a record or be read as one; $GITHUB_STEP_SUMMARY (--ci github) as one of them. */
int sb_audit_prepare_outputs(const sb_audit_request *req, sb_audit_output *outs, int *nout,
                             sb_audit_bl *baseline)
{
    const char *folder = req->from ? req->from : req->keep;
    char **inputs = NULL;
    int rc = folder ? folder_inputs(folder, &inputs) : 0, n = 0;
    sb_outset_rules rules = {"audit: ", SB_CLASH_WRITE_SAME, NULL};
    sb_out_file *earlier[SB_OUTPUT_FORMATS_MAX];
    for (const sb_output_format *f = sb_output_formats; !rc && f->name; f++) {
        const char *path = f->audit ? sb_optdefs_text(sb_audit_optdefs(), req, f->option) : NULL;
        if (!path)
            continue;
        outs[n] = (sb_audit_output){.opt = f->option, .path = path, .format = f};
        rc = sb_outset_add(&outs[n].out, f->option, path, &rules, earlier, (size_t)n);
        if (!rc && folder)
            rc = sb_out_check_folder(&outs[n].out, req->from ? "--from" : "--keep", folder);
        if (!rc) /* a record that links to a file elsewhere is that file */
            rc = sb_out_check_inputs(&outs[n].out, (const char *const *)inputs);
        earlier[n] = &outs[n].out;
        n += !rc;
    }
    if (!rc && sb_ci_github(req->ci)) {
        rc = sb_outset_add_summary(&step_summary, &rules, earlier, (size_t)n);
        if (!rc && step_summary.state && folder)
            rc = sb_out_check_folder(&step_summary, req->from ? "--from" : "--keep", folder);
        if (!rc && step_summary.state)
            rc = sb_out_check_inputs(&step_summary, (const char *const *)inputs);
    }
    if (!rc && req->update_baseline) /* not a report: the baseline, checked as one is */
        rc = prepare_update(req, baseline, folder, inputs, earlier, (size_t)n, &rules);
    free_inputs(inputs);
    *nout = n;
    return rc;
}
