/* The audit's output paths checked (cmd/audit_outputs.c): before anything is read, against each
 * other and the records' folder; once CMD is resolved, against what the run reads or runs. */
#ifndef SB_CMD_AUDIT_OUTPUTS_H
#define SB_CMD_AUDIT_OUTPUTS_H

#include "cli/audit_args.h"
#include "cmd/audit_baseline.h"
#include "outputs/formats.h"
#include "sinks/outfile.h"

typedef struct sb_audit_output {
    const char *opt, *path;
    const sb_output_format *format; /* its row of the output registry */
    sb_out_file out;
} sb_audit_output;

/* Each report's file (in outs, *nout of them, registry order), $GITHUB_STEP_SUMMARY under --ci
 * github and --update-baseline's file (baseline->out) added and checked: 0, or the exit code. */
int sb_audit_prepare_outputs(const sb_audit_request *req, sb_audit_output *outs, int *nout,
                             sb_audit_bl *baseline);
/* None of them is CMD (cmd_path), a file cmd names, or syncbench's own: 0, or the exit code. */
int sb_audit_refuse_inputs(const sb_audit_output *outs, int nout, const sb_audit_bl *baseline,
                           const char *cmd_path, char **cmd);

#endif
