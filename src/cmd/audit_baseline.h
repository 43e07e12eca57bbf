/* --baseline FILE and --update-baseline FILE of `syncbench audit` (cmd/audit_baseline.c): the
 * files read before the command starts, the update written atomically after the report. */
#ifndef SB_CMD_AUDIT_BASELINE_H
#define SB_CMD_AUDIT_BASELINE_H

#include "analyze/baseline.h"
#include "cli/audit_args.h"
#include "sinks/outfile.h"

typedef struct sb_audit_bl {
    sb_baseline *gate; /* --baseline's; NULL */
    sb_baseline *old;  /* --update-baseline's file as it was, for its notes; NULL: none yet */
    sb_out_file out;   /* --update-baseline's output (checked by cmd/audit_outputs.c) */
} sb_audit_bl;

/* Reads --baseline FILE and an --update-baseline FILE that exists: 0, or exit 2 with one line
 * ("FILE:LINE: [SECTION]: problem"); refuses --update-baseline naming --baseline's or --rules'
 * file (an input of the run). */
int sb_audit_bl_load(const sb_audit_request *req, sb_audit_bl *bl);
/* After the reports: --update-baseline's file written (a partial file beside it, renamed into
 * place), a line on stderr saying so; a FILE not there yet takes --baseline's file as its old
 * one (its per, range, skip_first, notes, threads). 0; exit 1 on a write error or a range never
 * entered (nothing written). */
int sb_audit_bl_write(const sb_audit_request *req, sb_audit_bl *bl, const sb_audit_analysis *an,
                      const sb_audit_opts *o);

#endif
