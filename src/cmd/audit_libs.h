/* The audit's libraries (cmd/audit_libs.c): the injection library and the waits library found
 * and checked before CMD runs, and syncbench's own files no output may replace. */
#ifndef SB_CMD_AUDIT_LIBS_H
#define SB_CMD_AUDIT_LIBS_H

#include <limits.h>
#include <stddef.h>

#include "cli/audit_args.h"

enum { SB_AUDIT_OWN_FILES = 8 };

/* The injection library's absolute path in lib, its CUPTI's in cupti: 0, or exit 3. */
int sb_audit_find_injection(char *lib, size_t n, char *cupti, size_t m);
/* The waits library's absolute path in path ("" when the audit goes on without it): 0, or exit 3
 * for one SYNCBENCH_WAITS_LIB names that is not one. */
int sb_audit_find_waits(const sb_audit_request *req, const char *audit_lib, char *path, size_t n);
/* The binary and every place the two libraries are taken from, NULL-terminated in list. */
void sb_audit_own_files(char files[SB_AUDIT_OWN_FILES][PATH_MAX],
                        const char *list[SB_AUDIT_OWN_FILES + 1]);

#endif
