/* The records folder of an audited run (cmd/audit_records_dir.c). */
#ifndef SB_CMD_AUDIT_RECORDS_DIR_H
#define SB_CMD_AUDIT_RECORDS_DIR_H

#include <stddef.h>

#include "cli/audit_args.h"

/* --keep's folder (made, writable, with no earlier records) or a fresh one in TMPDIR, as an
 * absolute path in dir: 0, or exit 2 (--keep, TMPDIR) or 1. */
int sb_audit_make_records_dir(const sb_audit_request *req, char *dir, size_t n);
/* The temporary folder and its proc-*.jsonl files removed. */
void sb_audit_remove_records(const char *dir);

#endif
