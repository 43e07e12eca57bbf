/* What the reports print of a predicted saving (analyze/savings.c gives the figures): the
 * milliseconds, "unknown" and why, how a rank's was modelled, the bound of a play. */
#ifndef SB_AUDIT_SAVE_TEXT_H
#define SB_AUDIT_SAVE_TEXT_H

#include <stddef.h>

#include "analyze/analyze.h"

/* What the reports print for a saving that is no prediction. */
#define SB_AUDIT_UNMODELLED "unknown"

/* A selection's saving over the run as the reports print it, into buf: "" when no process
 * played it, "unknown" (SB_AUDIT_UNMODELLED) when it is no prediction (sb_audit_unmodelled_why),
 * else the milliseconds ("%.3f"). */
const char *sb_audit_save_text(sb_audit_run_save s, char *buf, size_t n);
/* Why it is no prediction ("threads not modelled", before "ranks not modelled", before "no call
 * inside the GPU window"), or NULL when it is one (or nothing played it). */
const char *sb_audit_unmodelled_why(sb_audit_run_save s);
/* How a rank's saving was modelled (analyze/ranks_play.c), into buf: "ranks played together: 2
 * ranks, 1003 collectives matched", or "ranks not modelled: WHY"; NULL for a process that is no
 * rank of a job. */
const char *sb_audit_ranks_model(const sb_audit_saving *s, char *buf, size_t n);
/* "host" when the host's launches then bound most GPU operations, else "gpu". */
const char *sb_audit_bound_name(const sb_replay_result *r);

#endif
